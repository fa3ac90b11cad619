/* The thread owns the socket (ZeroMQ sockets belong to one thread): the UI thread's requests
 * reach it as atomic flags.  Samples go into the same ring the script's hooks fill; this thread
 * may wait for room there (it is not the job), so the replayed history is never dropped. */
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <zmq.h>

#include "singa/curve.h"

#include "tui/app.h"
#include "tui/attach.h"

#define PING_S 1.0
#define SILENT_S 5.0 /* the job sends its state every second */

struct tui_attach {
    void *ctx, *sock;
    char addr[256];
    bool control;
    tui_script *s;
    tui_ring *ring;
    tui_log *log;
    pthread_t thread;
    bool running;
    atomic_bool stop;
    atomic_uint requests; /* bit i: tui_remote_what i asked for */
    _Atomic double lr_scale; /* the scale TUI_CONTROL_LR_SCALE asks for */
    bool ended;           /* the job said it ends (the thread's own) */
};

static void close_socket(tui_attach *c)
{
    if (c->sock)
        zmq_close(c->sock);
    if (c->ctx)
        zmq_ctx_term(c->ctx);
    c->sock = c->ctx = NULL;
}

/* The socket, connected, with CURVE when curve_key is given. */
static int connect_job(tui_attach *c, const char *addr, const char *curve_key, singa_err *err)
{
    int linger = 0, hwm = 0; /* the job bounds what it queues; receiving unbounded loses no replay */
    if (!(c->ctx = zmq_ctx_new()) || !(c->sock = zmq_socket(c->ctx, ZMQ_DEALER)))
        return singa_err_set(err, "cannot attach to %s: %s", addr, zmq_strerror(zmq_errno()));
    zmq_setsockopt(c->sock, ZMQ_LINGER, &linger, sizeof linger);
    zmq_setsockopt(c->sock, ZMQ_RCVHWM, &hwm, sizeof hwm);
    if (curve_key && singa_curve_client_file(c->sock, curve_key, err) < 0)
        return -1;
    if (zmq_connect(c->sock, addr) < 0)
        return singa_err_set(err, "cannot attach to %s: %s", addr, zmq_strerror(zmq_errno()));
    return 0;
}

/* Says hello and waits for the job's answer: whether it lets this workbench steer it. */
static int hello(tui_attach *c, const char *addr, bool control, const char *curve_key, singa_err *err)
{
    tui_remote_hello h = {.version = TUI_REMOTE_VERSION, .sizes = tui_remote_sizes(), .control = control};
    tui_remote_send(c->sock, NULL, 0, TUI_REMOTE_HELLO, &h, sizeof h);
    zmq_pollitem_t it = {.socket = c->sock, .events = ZMQ_POLLIN};
    if (zmq_poll(&it, 1, (long)(TUI_ATTACH_WAIT_S * 1000)) <= 0)
        return singa_err_set(err, "no job answers at %s (waited %.1f s): is a job listening there (singa-tui --listen "
                                  "ADDR -e FILE, or cluster.monitor)?%s", addr, TUI_ATTACH_WAIT_S,
                             curve_key ? " A job with cluster.curve answers only the keys it lists"
                                       : " A job with cluster.curve answers only a workbench with its key (--curve-key FILE)");
    tui_remote_msg m = {0};
    zmq_msg_t frame;
    zmq_msg_init(&frame);
    int rc = 0;
    if (zmq_msg_recv(&frame, c->sock, 0) < 0 || tui_remote_decode(zmq_msg_data(&frame), zmq_msg_size(&frame), &m) < 0 ||
        m.type != TUI_REMOTE_HELLO)
        rc = singa_err_set(err, "%s does not answer as a singa-tui job", addr);
    else if (((tui_remote_hello *)m.data)->refused[0])
        rc = singa_err_set(err, "the job at %s refuses: %s", addr, ((tui_remote_hello *)m.data)->refused);
    else
        c->control = ((tui_remote_hello *)m.data)->control;
    tui_remote_msg_free(&m);
    zmq_msg_close(&frame);
    return rc;
}

int tui_attach_open(tui_attach **out, const char *addr, bool control, const char *curve_key, singa_err *err)
{
    tui_attach *c = calloc(1, sizeof *c);
    *out = NULL;
    if (!c)
        return singa_err_set(err, "out of memory");
    snprintf(c->addr, sizeof c->addr, "%s", addr);
    atomic_init(&c->stop, false);
    atomic_init(&c->requests, 0);
    atomic_init(&c->lr_scale, 1.0);
    if (connect_job(c, addr, curve_key, err) < 0 || hello(c, addr, control, curve_key, err) < 0) {
        close_socket(c);
        free(c);
        return -1;
    }
    *out = c;
    return 0;
}

const char *tui_attach_addr(const tui_attach *c) { return c->addr; }

bool tui_attach_control(const tui_attach *c) { return c->control; }

/* Into the ring, waiting for the UI to make room. */
static void push(tui_attach *c, const tui_sample *x)
{
    while (!tui_ring_push(c->ring, x) && !atomic_load(&c->stop)) {
        struct timespec ts = {0, 1000000};
        nanosleep(&ts, NULL);
    }
}

/* The rows of TUI_REMOTE_MESSAGES a workbench takes: each feeds its state as the script's
 * hooks would. */

static void on_status(tui_attach *c, const tui_remote_msg *m)
{
    const tui_remote_status *rs = m->data;
    tui_script *s = c->s;
    atomic_store(&s->control.paused, rs->paused);
    atomic_store(&s->control.lr_scale, rs->lr_scale); /* the progress panel shows the job's */
    pthread_mutex_lock(&s->mu);
    s->st = rs->st;
    pthread_mutex_unlock(&s->mu);
}

static void on_samples(tui_attach *c, const tui_remote_msg *m)
{
    const tui_sample *x = m->data;
    for (size_t i = 0; i < m->len / sizeof *x; i++)
        push(c, &x[i]);
}

static void on_latest(tui_attach *c, const tui_remote_msg *m)
{
    const tui_sample *x = m->data;
    if (x->group >= 0 && x->group < TUI_MAX_GROUPS)
        tui_snapshot_write(&c->s->latest[x->group], x);
}

static void on_log(tui_attach *c, const tui_remote_msg *m)
{
    const unsigned char *b = m->data;
    char line[TUI_LINE_MAX + 1];
    snprintf(line, sizeof line, "%s", (const char *)b + 1);
    tui_log_add(c->log, b[0] <= TUI_LINE_NOTE ? (tui_line_kind)b[0] : TUI_LINE_PLAIN, line);
}

static void on_stats(tui_attach *c, const tui_remote_msg *m)
{
    const tui_remote_stats *st = m->data;
    tui_stats_set(&c->s->stats, st->traffic, st->ntraffic, st->dropped, st->workers, st->nworkers, st->links, st->nlinks,
                  st->nodes, st->nnodes);
    tui_stats_set_rejoins(&c->s->stats, &st->rejoins);
}

/* An answer to hello again (the job may have forgotten this workbench): the history starts over. */
static void on_hello(tui_attach *c, const tui_remote_msg *m)
{
    const tui_remote_hello *h = m->data;
    if (h->refused[0]) {
        tui_log_addf(c->log, TUI_LINE_ERROR, "-- the job at %s refuses: %s", c->addr, h->refused);
        return;
    }
    tui_sample x = {.kind = TUI_SAMPLE_RESET};
    pthread_mutex_lock(&c->s->mu);
    x.job = (uint16_t)c->s->st.info.seq;
    pthread_mutex_unlock(&c->s->mu);
    push(c, &x);
}

static void on_end(tui_attach *c, const tui_remote_msg *m)
{
    c->ended = true;
    tui_log_addf(c->log, TUI_LINE_NOTE, "-- the job at %s has ended (q leaves)", c->addr);
}

typedef void (*handler)(tui_attach *c, const tui_remote_msg *m);
#define AT_ATTACH(name, min, max, unit, tidy, at_attach, at_job) [TUI_REMOTE_##name] = at_attach,
static const handler handlers[TUI_REMOTE_COUNT] = {TUI_REMOTE_MESSAGES(AT_ATTACH)};
#undef AT_ATTACH

static void handle(tui_attach *c, const unsigned char *b, size_t len)
{
    tui_remote_msg m;
    if (tui_remote_decode(b, len, &m) < 0)
        return;
    if (handlers[m.type])
        handlers[m.type](c, &m);
    tui_remote_msg_free(&m);
}

static void *run(void *arg)
{
    tui_attach *c = arg;
    double last_ping = tui_now(), last_heard = tui_now();
    bool silent = false;
    zmq_msg_t m;
    zmq_msg_init(&m);
    while (!atomic_load(&c->stop)) {
        zmq_pollitem_t it = {.socket = c->sock, .events = ZMQ_POLLIN};
        zmq_poll(&it, 1, 100);
        while (!atomic_load(&c->stop) && zmq_msg_recv(&m, c->sock, ZMQ_DONTWAIT) >= 0) {
            if (zmq_msg_size(&m) >= 1)
                handle(c, zmq_msg_data(&m), zmq_msg_size(&m));
            last_heard = tui_now();
            if (silent)
                tui_log_addf(c->log, TUI_LINE_NOTE, "-- the job at %s answers again", c->addr);
            silent = false;
        }
        unsigned req = atomic_exchange(&c->requests, 0);
        for (int w = 0; req && w <= TUI_CONTROL_LR_SCALE; w++)
            if (req & (1u << w)) {
                tui_remote_control ctl = {.what = (uint8_t)w, .value = atomic_load(&c->lr_scale)};
                tui_remote_send(c->sock, NULL, 0, TUI_REMOTE_CONTROL, &ctl, sizeof ctl);
            }
        double t = tui_now();
        if (t - last_ping >= PING_S) {
            last_ping = t;
            tui_remote_send(c->sock, NULL, 0, TUI_REMOTE_PING, NULL, 0);
        }
        if (!c->ended && t - last_heard > SILENT_S) { /* it may have forgotten this workbench (stopped a while): hello again */
            last_heard = t;
            tui_remote_hello h = {.version = TUI_REMOTE_VERSION, .sizes = tui_remote_sizes(), .control = c->control};
            tui_remote_send(c->sock, NULL, 0, TUI_REMOTE_HELLO, &h, sizeof h);
            if (!silent)
                tui_log_addf(c->log, TUI_LINE_WARN, "-- no word from the job at %s for %.0f s", c->addr, SILENT_S);
            silent = true;
        }
    }
    zmq_msg_close(&m);
    int linger = 200; /* long enough for the goodbye */
    zmq_setsockopt(c->sock, ZMQ_LINGER, &linger, sizeof linger);
    tui_remote_send(c->sock, NULL, 0, TUI_REMOTE_BYE, NULL, 0);
    return NULL;
}

int tui_attach_start(tui_attach *c, tui_script *s, tui_ring *ring, tui_log *log, singa_err *err)
{
    c->s = s;
    c->ring = ring;
    c->log = log;
    int rc = tui_term_thread(&c->thread, run, c);
    if (rc != 0)
        return singa_err_set(err, "cannot start a thread");
    c->running = true;
    return 0;
}

void tui_attach_request(tui_attach *c, tui_remote_what what, double lr_scale)
{
    if (what == TUI_CONTROL_LR_SCALE)
        atomic_store(&c->lr_scale, lr_scale);
    atomic_fetch_or(&c->requests, 1u << what);
}

void tui_attach_close(tui_attach *c)
{
    if (!c)
        return;
    atomic_store(&c->stop, true);
    if (c->running)
        pthread_join(c->thread, NULL);
    close_socket(c);
    free(c);
}
