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
    int linger = 0, hwm = 0; /* the job bounds what it queues; receiving unbounded loses no replay */
    tui_remote_hello h = {.version = TUI_REMOTE_VERSION, .sizes = tui_remote_sizes(), .control = control};
    int rc = -1;
    if (!(c->ctx = zmq_ctx_new()) || !(c->sock = zmq_socket(c->ctx, ZMQ_DEALER))) {
        singa_err_set(err, "cannot attach to %s: %s", addr, zmq_strerror(zmq_errno()));
        goto out;
    }
    zmq_setsockopt(c->sock, ZMQ_LINGER, &linger, sizeof linger);
    zmq_setsockopt(c->sock, ZMQ_RCVHWM, &hwm, sizeof hwm);
    if (curve_key && singa_curve_client_file(c->sock, curve_key, err) < 0)
        goto out;
    if (zmq_connect(c->sock, addr) < 0) {
        singa_err_set(err, "cannot attach to %s: %s", addr, zmq_strerror(zmq_errno()));
        goto out;
    }
    tui_remote_send(c->sock, NULL, 0, TUI_REMOTE_HELLO, &h, sizeof h);
    zmq_pollitem_t it = {.socket = c->sock, .events = ZMQ_POLLIN};
    if (zmq_poll(&it, 1, (long)(TUI_ATTACH_WAIT_S * 1000)) <= 0) {
        singa_err_set(err, "no job answers at %s (waited %.1f s): is a job listening there (singa-tui --listen ADDR "
                           "-e FILE, or cluster.monitor)?%s", addr, TUI_ATTACH_WAIT_S,
                      curve_key ? " A job with cluster.curve answers only the keys it lists"
                                : " A job with cluster.curve answers only a workbench with its key (--curve-key FILE)");
        goto out;
    }
    unsigned char buf[1 + sizeof h];
    int n = zmq_recv(c->sock, buf, sizeof buf, 0);
    if (n != (int)sizeof buf || buf[0] != TUI_REMOTE_HELLO) {
        singa_err_set(err, "%s does not answer as a singa-tui job", addr);
        goto out;
    }
    memcpy(&h, buf + 1, sizeof h);
    h.refused[sizeof h.refused - 1] = 0;
    if (h.refused[0]) {
        singa_err_set(err, "the job at %s refuses: %s", addr, h.refused);
        goto out;
    }
    c->control = h.control;
    *out = c;
    rc = 0;
out:
    if (rc < 0) {
        close_socket(c);
        free(c);
    }
    return rc;
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

static void handle(tui_attach *c, const unsigned char *b, size_t len)
{
    tui_script *s = c->s;
    int type = b[0];
    b++;
    len--;
    if (type == TUI_REMOTE_STATUS && len == sizeof(tui_remote_status)) {
        tui_remote_status *rs = malloc(sizeof *rs);
        if (!rs)
            return;
        memcpy(rs, b, sizeof *rs);
        rs->st.error[sizeof rs->st.error - 1] = 0;
        atomic_store(&s->control.paused, rs->paused);
        atomic_store(&s->control.lr_scale, rs->lr_scale); /* the progress panel shows the job's */
        pthread_mutex_lock(&s->mu);
        s->st = rs->st;
        pthread_mutex_unlock(&s->mu);
        free(rs);
    } else if (type == TUI_REMOTE_SAMPLE && len % sizeof(tui_sample) == 0) {
        for (size_t i = 0; i < len / sizeof(tui_sample); i++) {
            tui_sample x;
            memcpy(&x, b + i * sizeof x, sizeof x);
            push(c, &x);
        }
    } else if (type == TUI_REMOTE_LATEST && len == sizeof(tui_sample)) {
        tui_sample x;
        memcpy(&x, b, sizeof x);
        if (x.group >= 0 && x.group < TUI_MAX_GROUPS)
            tui_snapshot_write(&s->latest[x.group], &x);
    } else if (type == TUI_REMOTE_LOG && len >= 1) {
        char line[TUI_LINE_MAX + 1];
        size_t n = len - 1 < TUI_LINE_MAX ? len - 1 : TUI_LINE_MAX;
        memcpy(line, b + 1, n);
        line[n] = 0;
        tui_log_add(c->log, b[0] <= TUI_LINE_NOTE ? (tui_line_kind)b[0] : TUI_LINE_PLAIN, line);
    } else if (type == TUI_REMOTE_STATS && len >= offsetof(tui_remote_stats, nodes) && len <= sizeof(tui_remote_stats)) {
        tui_remote_stats *st = calloc(1, sizeof *st);
        if (!st)
            return;
        memcpy(st, b, len);
        int nodes = (int)((len - offsetof(tui_remote_stats, nodes)) / sizeof(tui_node));
        for (int i = 0; i < TUI_STATS_ROWS; i++) {
            st->traffic[i].type[sizeof st->traffic[i].type - 1] = 0;
            st->traffic[i].peer[sizeof st->traffic[i].peer - 1] = 0;
        }
        for (int i = 0; i < nodes; i++) {
            st->nodes[i].host[sizeof st->nodes[i].host - 1] = 0;
            st->nodes[i].role[sizeof st->nodes[i].role - 1] = 0;
        }
        int nworkers = st->nworkers < 0 ? 0 : st->nworkers < TUI_MAX_WORKERS ? st->nworkers : TUI_MAX_WORKERS;
        for (int i = 0; i < nworkers; i++) {
            singa_worker_time *w = &st->workers[i];
            uint8_t flag; /* a bool off the wire may hold any byte */
            memcpy(&flag, &w->straggler, 1);
            w->straggler = flag != 0;
            w->host[sizeof w->host - 1] = 0;
        }
        int nlinks = st->nlinks < 0 ? 0 : st->nlinks < TUI_MAX_LINKS ? st->nlinks : TUI_MAX_LINKS;
        tui_stats_set(&s->stats, st->traffic, st->ntraffic, st->dropped, st->workers, nworkers, st->links, nlinks,
                      st->nodes, st->nnodes < nodes ? st->nnodes : nodes);
        st->rejoins.lost[sizeof st->rejoins.lost - 1] = 0;
        tui_stats_set_rejoins(&s->stats, &st->rejoins);
        free(st);
    } else if (type == TUI_REMOTE_HELLO && len == sizeof(tui_remote_hello)) { /* an answer to hello again */
        tui_remote_hello h;
        memcpy(&h, b, sizeof h);
        h.refused[sizeof h.refused - 1] = 0;
        if (h.refused[0]) {
            tui_log_addf(c->log, TUI_LINE_ERROR, "-- the job at %s refuses: %s", c->addr, h.refused);
        } else {
            tui_sample x = {.kind = TUI_SAMPLE_RESET};
            pthread_mutex_lock(&s->mu);
            x.job = (uint16_t)s->st.info.seq;
            pthread_mutex_unlock(&s->mu);
            push(c, &x);
        }
    } else if (type == TUI_REMOTE_END) {
        c->ended = true;
        tui_log_addf(c->log, TUI_LINE_NOTE, "-- the job at %s has ended (q leaves)", c->addr);
    }
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
