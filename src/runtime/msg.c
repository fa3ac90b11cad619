/* Encoding and the framing of messages, little-endian on the wire whatever the host. */
#include <errno.h>
#include <sched.h>
#include <string.h>
#include <time.h>

#include "runtime/msg.h"
#include "singa/job.h"

/* A message may hand its receiver a buffer by address (MSG_F_PTR) or let it read values the
 * sender wrote; the hand-off happens inside libzmq, which ThreadSanitizer cannot see, so the
 * runtime states it: every send happens before every later receipt.  A lent buffer comes back
 * through an atomic counter (msg_loan), which TSan sees. */
#if defined __SANITIZE_THREAD__
void __tsan_acquire(void *addr);
void __tsan_release(void *addr);
static char handoff;
#define HANDOFF_SENT() __tsan_release(&handoff)
#define HANDOFF_RECEIVED() __tsan_acquire(&handoff)
#else
#define HANDOFF_SENT() ((void)0)
#define HANDOFF_RECEIVED() ((void)0)
#endif

const msg_kind msg_types[MSG_NTYPES] = {
    [MSG_HELLO] = {"hello"},
    [MSG_PUT] = {"put", MSG_IX_SLICE},
    [MSG_GET] = {"get", MSG_IX_SLICE},
    [MSG_UPDATE] = {"update", MSG_IX_LEG, MSG_ARG_COUNT},
    [MSG_SYNC] = {"sync", MSG_IX_SLICE},
    [MSG_GET_REPLY] = {"get-reply", MSG_IX_SLICE},
    [MSG_UPDATE_REPLY] = {"update-reply", MSG_IX_LEG},
    [MSG_SYNC_REPLY] = {"sync-reply", MSG_IX_SLICE},
    [MSG_READY] = {"ready"},
    [MSG_DONE] = {"done"},
    [MSG_FINISHED] = {"finished"},
    [MSG_STOP] = {"stop", MSG_IX_NONE, MSG_ARG_LOST},
    [MSG_ABORT] = {"abort"},
    [MSG_METRIC] = {"metric", MSG_IX_NONE, MSG_ARG_OF_STEP},
    [MSG_JOIN] = {"join"},
    [MSG_PEERS] = {"peers"},
    [MSG_HEARTBEAT] = {"heartbeat"},
    [MSG_FLUSH] = {"flush", MSG_IX_SLICE},
    [MSG_CKPT] = {"checkpoint"},
    [MSG_CKPT_REPLY] = {"checkpoint-reply", MSG_IX_SERVER, MSG_ARG_LOST},
    [MSG_BRIDGE] = {"bridge", MSG_IX_LAYER},
    [MSG_BRIDGE_GRAD] = {"bridge-grad", MSG_IX_LAYER, MSG_ARG_EDGE},
    [MSG_BRIDGE_METRICS] = {"bridge-metrics"},
    [MSG_BRIDGE_PROFILE] = {"bridge-profile"},
    [MSG_WORKER_METRICS] = {"worker-metrics"},
    [MSG_FINAL_VALUES] = {"final-values", MSG_IX_SLICE},
    [MSG_GROUP_STEP] = {"group-step"},
    [MSG_LOST] = {"lost"},
    [MSG_BACKUP] = {"backup", MSG_IX_SLICE, MSG_ARG_COUNT},
    [MSG_BACKUP_ACK] = {"backup-ack", MSG_IX_SLICE, MSG_ARG_COUNT},
    [MSG_SHRINK] = {"shrink", MSG_IX_NONE, MSG_ARG_COUNT},
    [MSG_GROW] = {"grow", MSG_IX_NONE, MSG_ARG_COUNT},
    [MSG_WORKER_STATE] = {"worker-state"},
    [MSG_RECORDED] = {"recorded"},
    [MSG_BYE] = {"bye"},
};

const char *msg_type_name(int type)
{
    return type > 0 && type < MSG_NTYPES ? msg_types[type].name : "unknown";
}

static uint8_t *put16(uint8_t *p, uint16_t v)
{
    p[0] = (uint8_t)v;
    p[1] = (uint8_t)(v >> 8);
    return p + 2;
}

static uint8_t *put32(uint8_t *p, uint32_t v)
{
    return put16(put16(p, (uint16_t)v), (uint16_t)(v >> 16));
}

static uint8_t *put64(uint8_t *p, uint64_t v)
{
    return put32(put32(p, (uint32_t)v), (uint32_t)(v >> 32));
}

static uint16_t get16(const uint8_t *p) { return (uint16_t)(p[0] | p[1] << 8); }
static uint32_t get32(const uint8_t *p) { return get16(p) | (uint32_t)get16(p + 2) << 16; }
static uint64_t get64(const uint8_t *p) { return get32(p) | (uint64_t)get32(p + 4) << 32; }

static uint8_t *put_addr(uint8_t *p, const msg_addr *a)
{
    *p++ = a->kind;
    return put16(put16(put16(p, a->group), a->id), a->proc);
}

static const uint8_t *get_addr(const uint8_t *p, msg_addr *a)
{
    a->kind = *p++;
    a->group = get16(p);
    a->id = get16(p + 2);
    a->proc = get16(p + 4);
    return p + 6;
}

/* The field of m that the index slot holds for m's type (NULL: none). */
static int32_t *index_field(msg *m)
{
    switch (m->type < MSG_NTYPES ? msg_types[m->type].index : MSG_IX_NONE) {
    case MSG_IX_SLICE:
        return &m->slice;
    case MSG_IX_LEG:
        return m->src.kind == ENT_WORKER || m->dst.kind == ENT_WORKER ? &m->param : &m->slice;
    case MSG_IX_SERVER:
        return &m->server;
    case MSG_IX_LAYER:
        return &m->layer;
    default:
        return NULL;
    }
}

static uint32_t count_slot(const msg *m)
{
    switch (m->type < MSG_NTYPES ? msg_types[m->type].arg : MSG_ARG_NONE) {
    case MSG_ARG_COUNT:
        return m->count;
    case MSG_ARG_EDGE:
        return (uint32_t)m->edge;
    case MSG_ARG_LOST:
        return m->lost;
    case MSG_ARG_OF_STEP:
        return m->of_step;
    default:
        return 0;
    }
}

static void set_count_slot(msg *m, uint32_t v)
{
    switch (msg_types[m->type].arg) {
    case MSG_ARG_COUNT:
        m->count = v;
        break;
    case MSG_ARG_EDGE:
        m->edge = (int32_t)v;
        break;
    case MSG_ARG_LOST:
        m->lost = v != 0;
        break;
    case MSG_ARG_OF_STEP:
        m->of_step = v == 1;
        break;
    }
}

void msg_encode(const msg *m, uint8_t out[MSG_HEADER_BYTES])
{
    const int32_t *at = index_field((msg *)m);
    uint8_t *p = put32(out, MSG_MAGIC);
    *p++ = m->type;
    *p++ = m->flags;
    p = put_addr(put_addr(p, &m->src), &m->dst);
    p = put32(put32(put32(p, at ? (uint32_t)*at : 0), (uint32_t)m->step), count_slot(m));
    put64(put64(put64(p, m->ptr), m->offset), m->len);
}

int msg_decode(msg *m, const void *buf, size_t len)
{
    const uint8_t *p = buf;
    if (len != MSG_HEADER_BYTES || get32(p) != MSG_MAGIC)
        return -1;
    p += 4;
    *m = (msg){.type = p[0], .flags = p[1]};
    p = get_addr(get_addr(p + 2, &m->src), &m->dst);
    if (m->type == 0 || m->type >= MSG_NTYPES || m->src.kind > ENT_SERVER || m->dst.kind > ENT_SERVER ||
        (m->flags & ~(MSG_F_VALUES | MSG_F_PTR | MSG_F_STEP | MSG_F_PACKED | MSG_F_EXACT | MSG_F_APPLY)))
        return -1;
    int32_t *at = index_field(m);
    if (at)
        *at = (int32_t)get32(p);
    m->step = (int32_t)get32(p + 4);
    set_count_slot(m, get32(p + 8));
    m->ptr = get64(p + 12);
    m->offset = get64(p + 20);
    m->len = get64(p + 28);
    return 0;
}

/* One frame, filled here rather than inside libzmq, so that the hand-off covers its bytes. */
static int send_frame(void *sock, const void *data, size_t n, int flags)
{
    zmq_msg_t f;
    if (zmq_msg_init_size(&f, n) < 0)
        return -1;
    if (n)
        memcpy(zmq_msg_data(&f), data, n);
    HANDOFF_SENT();
    if (zmq_msg_send(&f, sock, flags | ZMQ_DONTWAIT) < 0) {
        zmq_msg_close(&f);
        return -1;
    }
    return 0;
}

/* ZeroMQ closed a frame lent from the loan `hint` (in whichever thread closed it). */
static void loan_returned(void *data, void *hint)
{
    (void)data;
    atomic_fetch_sub_explicit(&((msg_loan *)hint)->out, 1, memory_order_release);
}

/* The last frame: the caller's own frame moved, its buffer lent, or a copy (see msg.h). */
static int send_payload(void *sock, const msg *m, const void *payload, size_t nbytes)
{
    if (m->frame) {
        HANDOFF_SENT();
        return zmq_msg_send(m->frame, sock, ZMQ_DONTWAIT) < 0 ? -1 : 0;
    }
    if (!m->loan)
        return send_frame(sock, payload, nbytes, 0);
    zmq_msg_t f;
    atomic_fetch_add_explicit(&m->loan->out, 1, memory_order_relaxed);
    if (zmq_msg_init_data(&f, (void *)payload, nbytes, loan_returned, m->loan) < 0) {
        loan_returned(NULL, m->loan);
        return -1;
    }
    HANDOFF_SENT();
    if (zmq_msg_send(&f, sock, ZMQ_DONTWAIT) < 0) {
        zmq_msg_close(&f); /* returns the loan */
        return -1;
    }
    return 0;
}

int msg_send(void *sock, const char *identity, const msg *m, const void *payload, size_t nbytes)
{
    uint8_t head[MSG_HEADER_BYTES];
    msg_encode(m, head);
    if (identity && send_frame(sock, identity, strlen(identity), ZMQ_SNDMORE) < 0)
        return -1;
    if (send_frame(sock, head, sizeof head, payload ? ZMQ_SNDMORE : 0) < 0)
        return -1;
    return payload ? send_payload(sock, m, payload, nbytes) : 0;
}

/* The wait is short where the runtime lends (the answer the lender waits for comes after the
 * last byte left): yield first, then sleep in small steps so as not to take a core from the
 * thread that closes the frame. */
void msg_loan_wait(msg_loan *loan)
{
    for (int i = 0; atomic_load_explicit(&loan->out, memory_order_acquire) > 0; i++)
        if (i < 64)
            sched_yield();
        else
            nanosleep(&(struct timespec){0, 20000}, NULL);
}

/* Reads and discards the rest of a multi-part message. */
static void drain(void *sock)
{
    int more;
    size_t len = sizeof more;
    while (zmq_getsockopt(sock, ZMQ_RCVMORE, &more, &len) == 0 && more) {
        zmq_msg_t part;
        zmq_msg_init(&part);
        if (zmq_msg_recv(&part, sock, 0) < 0) {
            zmq_msg_close(&part);
            return;
        }
        zmq_msg_close(&part);
    }
}

static bool has_more(void *sock)
{
    int more = 0;
    size_t len = sizeof more;
    return zmq_getsockopt(sock, ZMQ_RCVMORE, &more, &len) == 0 && more;
}

int msg_recv(void *sock, bool router, char *identity, size_t idlen, msg *m, zmq_msg_t *payload)
{
    zmq_msg_t part;
    zmq_msg_init(payload);
    zmq_msg_init(&part);
    int n;
    while ((n = zmq_msg_recv(&part, sock, 0)) < 0 && zmq_errno() == EINTR) /* nothing read yet: retry */
        ;
    HANDOFF_RECEIVED();
    if (router) {
        if (n < 0) {
            zmq_msg_close(&part);
            return -1;
        }
        size_t len = (size_t)n < idlen - 1 ? (size_t)n : idlen - 1;
        memcpy(identity, zmq_msg_data(&part), len);
        identity[len] = 0;
        zmq_msg_close(&part);
        if (!has_more(sock))
            return 1;
        zmq_msg_init(&part); /* the parts of a message arrive together: no EINTR from here */
        n = zmq_msg_recv(&part, sock, 0);
    }
    if (n < 0) {
        zmq_msg_close(&part);
        return -1;
    }
    int bad = msg_decode(m, zmq_msg_data(&part), (size_t)n);
    zmq_msg_close(&part);
    if (bad) {
        drain(sock);
        return 1;
    }
    if (has_more(sock)) {
        if (zmq_msg_recv(payload, sock, 0) < 0)
            return -1;
        if (has_more(sock)) { /* more frames than a message has */
            drain(sock);
            return 1;
        }
    }
    return 0;
}

/* A result: steps, seconds, the flags, then each of train, test and validation as a count and
 * that many (name, sum, count). */
enum { METRIC_BYTES = SINGA_METRIC_NAME + 16 };

static uint8_t *put_metrics(uint8_t *p, const singa_metrics *m)
{
    *p++ = (uint8_t)m->n;
    for (int i = 0; i < m->n; i++) {
        uint64_t sum;
        memcpy(&sum, &m->sum[i], sizeof sum);
        memcpy(p, m->name[i], SINGA_METRIC_NAME);
        p = put64(put64(p + SINGA_METRIC_NAME, sum), (uint64_t)m->count[i]);
    }
    return p;
}

size_t msg_result_encode(const singa_result *r, uint8_t out[MSG_RESULT_MAX])
{
    uint64_t secs;
    memcpy(&secs, &r->seconds, sizeof secs);
    uint8_t *p = put64(put32(out, (uint32_t)r->steps), secs);
    *p++ = (uint8_t)(r->has_test | r->has_validation << 1);
    p = put_metrics(put_metrics(put_metrics(p, &r->train), &r->test), &r->validation);
    return (size_t)(p - out);
}

static const uint8_t *get_metrics(const uint8_t *p, const uint8_t *end, singa_metrics *m)
{
    if (p >= end || *p > SINGA_METRICS_MAX || end - (p + 1) < (ptrdiff_t)(*p * METRIC_BYTES))
        return NULL;
    m->n = *p++;
    for (int i = 0; i < m->n; i++, p += METRIC_BYTES) {
        uint64_t sum = get64(p + SINGA_METRIC_NAME);
        memcpy(m->name[i], p, SINGA_METRIC_NAME);
        m->name[i][SINGA_METRIC_NAME - 1] = 0;
        memcpy(&m->sum[i], &sum, sizeof sum);
        m->count[i] = (long)get64(p + SINGA_METRIC_NAME + 8);
    }
    return p;
}

size_t msg_metrics_encode(const singa_metrics *m, uint8_t out[MSG_METRICS_MAX])
{
    return (size_t)(put_metrics(out, m) - out);
}

int msg_metrics_decode(singa_metrics *m, const void *buf, size_t len)
{
    const uint8_t *p = buf;
    return get_metrics(p, p + len, m) == p + len ? 0 : -1;
}

int msg_result_decode(singa_result *r, const void *buf, size_t len)
{
    const uint8_t *p = buf, *end = p + len;
    if (len < 13)
        return -1;
    uint64_t secs = get64(p + 4);
    *r = (singa_result){.steps = (int)get32(p), .has_test = p[12] & 1, .has_validation = p[12] >> 1 & 1};
    memcpy(&r->seconds, &secs, sizeof secs);
    p += 13;
    if (!(p = get_metrics(p, end, &r->train)) || !(p = get_metrics(p, end, &r->test)) ||
        !(p = get_metrics(p, end, &r->validation)))
        return -1;
    return p == end ? 0 : -1;
}

/* A record: step, phase, group, total steps, then images/s, lr, elapsed and eta as doubles, then
 * the metrics. */
static uint8_t *put_double(uint8_t *p, double v)
{
    uint64_t bits;
    memcpy(&bits, &v, sizeof bits);
    return put64(p, bits);
}

static double get_double(const uint8_t *p)
{
    uint64_t bits = get64(p);
    double v;
    memcpy(&v, &bits, sizeof v);
    return v;
}

size_t msg_record_encode(const singa_record *r, uint8_t out[MSG_RECORD_MAX])
{
    uint8_t *p = put32(put32(put32(put32(out, (uint32_t)r->step), (uint32_t)r->phase), (uint32_t)r->group),
                       (uint32_t)r->total_steps);
    p = put_double(put_double(put_double(put_double(p, r->images_per_sec), r->lr), r->elapsed), r->eta);
    return (size_t)(put_metrics(p, r->metrics) - out);
}

int msg_record_decode(singa_record *r, singa_metrics *metrics, const void *buf, size_t len)
{
    const uint8_t *p = buf;
    if (len < 48)
        return -1;
    *r = (singa_record){.step = (int)get32(p), .phase = (singa_phase)get32(p + 4), .group = (int)get32(p + 8),
                        .total_steps = (int)get32(p + 12), .images_per_sec = get_double(p + 16),
                        .lr = get_double(p + 24), .elapsed = get_double(p + 32), .eta = get_double(p + 40),
                        .metrics = metrics};
    if ((r->phase != SINGA_PHASE_TRAIN && r->phase != SINGA_PHASE_TEST && r->phase != SINGA_PHASE_VALIDATION) ||
        r->step < 0 || r->group < 0)
        return -1;
    const uint8_t *end = (const uint8_t *)buf + len;
    p = get_metrics(p + 48, end, metrics);
    return p == end ? 0 : -1;
}

/* Traffic rows: type and peer as fixed text fields, then the six counters. */
enum { TRAFFIC_TYPE = sizeof(((singa_traffic *)0)->type), TRAFFIC_PEER = sizeof(((singa_traffic *)0)->peer) };
_Static_assert(MSG_TRAFFIC_ROW == TRAFFIC_TYPE + TRAFFIC_PEER + 6 * 8, "a traffic row's size on the wire");

size_t msg_traffic_encode(const singa_traffic *rows, int n, uint8_t *out)
{
    uint8_t *p = out;
    for (int i = 0; i < n; i++) {
        const singa_traffic *t = &rows[i];
        uint64_t wait;
        memcpy(&wait, &t->wait_seconds, sizeof wait);
        memcpy(p, t->type, TRAFFIC_TYPE);
        memcpy(p + TRAFFIC_TYPE, t->peer, TRAFFIC_PEER);
        p = put64(put64(put64(put64(p + TRAFFIC_TYPE + TRAFFIC_PEER, t->sent), t->received), t->bytes_sent),
                  t->bytes_received);
        p = put64(put64(p, (uint64_t)t->pending), wait);
    }
    return (size_t)(p - out);
}

int msg_traffic_decode(const void *buf, size_t len, singa_traffic *rows, int max)
{
    const uint8_t *p = buf;
    if (len % MSG_TRAFFIC_ROW || len / MSG_TRAFFIC_ROW > (size_t)max)
        return -1;
    int n = (int)(len / MSG_TRAFFIC_ROW);
    for (int i = 0; i < n; i++, p += MSG_TRAFFIC_ROW) {
        singa_traffic *t = &rows[i];
        const uint8_t *c = p + TRAFFIC_TYPE + TRAFFIC_PEER;
        uint64_t wait = get64(c + 40);
        memcpy(t->type, p, TRAFFIC_TYPE);
        memcpy(t->peer, p + TRAFFIC_TYPE, TRAFFIC_PEER);
        t->type[TRAFFIC_TYPE - 1] = t->peer[TRAFFIC_PEER - 1] = 0;
        t->sent = get64(c), t->received = get64(c + 8), t->bytes_sent = get64(c + 16), t->bytes_received = get64(c + 24);
        t->pending = (int64_t)get64(c + 32);
        memcpy(&t->wait_seconds, &wait, sizeof wait);
        if (!(t->wait_seconds >= 0)) /* NaN or negative: not a counter */
            return -1;
    }
    return n;
}

/* A worker's times: group, id, host as a fixed text field, steps, window, then the four means. */
enum { WORKER_HOST = sizeof(((singa_worker_time *)0)->host) };
_Static_assert(MSG_WORKER_ROW == 4 + WORKER_HOST + 12 + 4 * 8, "a worker row's size on the wire");

static uint8_t *put_worker(uint8_t *p, const singa_worker_time *w)
{
    p = put16(put16(p, (uint16_t)w->group), (uint16_t)w->id);
    memcpy(p, w->host, WORKER_HOST);
    p = put32(put64(p + WORKER_HOST, w->steps), (uint32_t)w->window);
    return put_double(put_double(put_double(put_double(p, w->compute), w->send), w->wait), w->bridge);
}

/* -1 for times that are not times. */
static int get_worker(const uint8_t *p, singa_worker_time *w)
{
    *w = (singa_worker_time){.group = get16(p), .id = get16(p + 2)};
    memcpy(w->host, p + 4, WORKER_HOST);
    w->host[WORKER_HOST - 1] = 0;
    p += 4 + WORKER_HOST;
    w->steps = get64(p), w->window = (int)get32(p + 8);
    p += 12;
    w->compute = get_double(p), w->send = get_double(p + 8), w->wait = get_double(p + 16);
    w->bridge = get_double(p + 24);
    w->work = w->compute + w->send;
    w->step = w->work + w->wait + w->bridge;
    bool times = w->compute >= 0 && w->send >= 0 && w->wait >= 0 && w->bridge >= 0 && w->step < 1e9;
    return times && w->window >= 0 && w->window <= SINGA_STEP_WINDOW ? 0 : -1;
}

/* A heartbeat: progress and the busy flag, then the controls (pause and stop flags, the lr
 * scale's bits) or the count of traffic rows, the rows and the workers' times. */
enum { LIFE_BYTES = 5, CONTROL_BYTES = 1 + 8 };

size_t msg_heartbeat_encode(const msg_heartbeat *h, uint8_t out[MSG_HEARTBEAT_MAX])
{
    uint8_t *p = put32(out, h->progress);
    *p++ = h->busy;
    if (h->carries == MSG_BEAT_CONTROL) {
        *p++ = (uint8_t)(h->pause | h->stop << 1);
        p = put_double(p, h->lr_scale);
    } else if (h->carries == MSG_BEAT_TRAFFIC) {
        p = put16(p, (uint16_t)h->nrows);
        p += msg_traffic_encode(h->rows, h->nrows, p);
        for (int i = 0; i < h->nworkers; i++)
            p = put_worker(p, &h->workers[i]);
    }
    return (size_t)(p - out);
}

int msg_heartbeat_decode(msg_heartbeat *h, const void *buf, size_t len, bool from_rank0)
{
    const uint8_t *p = buf;
    if (len < LIFE_BYTES || p[4] > 1)
        return -1;
    *h = (msg_heartbeat){.progress = get32(p), .busy = p[4]};
    p += LIFE_BYTES;
    len -= LIFE_BYTES;
    if (from_rank0 && len == CONTROL_BYTES) {
        h->carries = MSG_BEAT_CONTROL;
        h->pause = p[0] & 1;
        h->stop = p[0] >> 1 & 1;
        h->lr_scale = get_double(p + 1);
        return h->lr_scale >= 0 && h->lr_scale < 1e6 ? 0 : -2;
    }
    if (len > 0) {
        h->carries = MSG_BEAT_TRAFFIC;
        size_t traffic = len < 2 ? len : 2 + (size_t)get16(p) * MSG_TRAFFIC_ROW, rest = len - traffic;
        if (len < 2 || traffic > len || rest % MSG_WORKER_ROW || rest / MSG_WORKER_ROW > MSG_HEARTBEAT_WORKERS)
            return -2;
        h->nrows = msg_traffic_decode(p + 2, traffic - 2, h->rows, MSG_HEARTBEAT_ROWS);
        h->nworkers = (int)(rest / MSG_WORKER_ROW);
        for (int i = 0; i < h->nworkers; i++)
            if (get_worker(p + traffic + (size_t)i * MSG_WORKER_ROW, &h->workers[i]) < 0)
                return -2;
        return h->nrows < 0 ? -2 : 0;
    }
    return 0;
}
