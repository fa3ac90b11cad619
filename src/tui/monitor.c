/* The monitor reuses the workbench's own host (script.c): the same hooks fill the same ring,
 * snapshots and stats, so an attached workbench sees exactly what one running the job would.
 * Its thread does what the workbench's UI thread does with them (app.c's pump), but instead of
 * drawing it keeps the history (series.c, bounded) and the log (a ring) for late workbenches
 * and sends everything on to the attached ones.
 *
 * A workbench never slows the job: the hooks only push into the lock-free ring (dropping when
 * it is full), and the thread sends without waiting on a ROUTER whose per-peer queue is bounded
 * (SNDHWM): a workbench that stops reading loses messages, and one silent for PEER_SILENT_S is
 * forgotten.  Only rank 0 listens: it already has every rank's records and heartbeats. */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <zmq.h>

#include "singa/curve.h"

#include "tui/app.h"
#include "tui/monitor.h"
#include "tui/remote.h"

#define MAX_PEERS 16
#define PEER_SILENT_S 10.0
#define SEND_HWM 500     /* messages queued per workbench: at most SEND_HWM * BATCH samples */
#define BATCH 512        /* samples per SAMPLE message */

typedef struct peer {
    uint8_t id[256];
    size_t id_len;
    double seen;
    bool control;
} peer;

struct tui_monitor {
    tui_script script; /* first: the hooks' ud is its address */
    singa_lua_host host;
    tui_ring *ring;
    tui_log *log;
    char listen[256];  /* --listen, or "" (then each job's cluster.monitor decides) */
    bool listen_control;
    bool rank0;
    /* once listening */
    void *ctx, *sock;
    singa_curve *curve; /* the job's cluster.curve: only its keys attach */
    char addr[256];
    atomic_bool control; /* the job lets workbenches steer it */
    pthread_t thread;
    bool running;
    atomic_bool stop;
    /* the thread's own */
    tui_history history;
    int job_seen;
    peer peers[MAX_PEERS];
    int npeers;
    uint64_t log_seen;
    int latest_sent[TUI_MAX_GROUPS]; /* the step of each group's LATEST sent to everyone */
    tui_sample batch[BATCH];
    int nbatch;
};

static void send_to(tui_monitor *m, const peer *p, int type, const void *payload, size_t len)
{
    tui_remote_send(m->sock, p->id, p->id_len, type, payload, len);
}

/* To `only`, or to every workbench when NULL. */
static void send_msg(tui_monitor *m, const peer *only, int type, const void *payload, size_t len)
{
    for (int i = 0; i < (only ? 1 : m->npeers); i++)
        send_to(m, only ? only : &m->peers[i], type, payload, len);
}

static void flush_batch(tui_monitor *m, const peer *only)
{
    if (m->nbatch)
        send_msg(m, only, TUI_REMOTE_SAMPLE, m->batch, (size_t)m->nbatch * sizeof(tui_sample));
    m->nbatch = 0;
}

static void add_to_batch(tui_monitor *m, const peer *only, const tui_sample *x)
{
    m->batch[m->nbatch++] = *x;
    if (m->nbatch == BATCH)
        flush_batch(m, only);
}

static void send_log_line(tui_monitor *m, const peer *only, uint64_t i)
{
    char buf[1 + TUI_LINE_MAX];
    int kind = tui_log_get(m->log, i, buf + 1, sizeof buf - 1);
    if (kind < 0)
        return;
    buf[0] = (char)kind;
    send_msg(m, only, TUI_REMOTE_LOG, buf, 1 + strlen(buf + 1));
}

/* Each group's newest step (all of them when `all`, else those that moved since): the progress
 * panel's numbers, which never wait for a sample the ring dropped. */
static void send_latest(tui_monitor *m, const peer *only, bool all)
{
    tui_sample x;
    for (int g = 0; g < TUI_MAX_GROUPS; g++)
        if (tui_snapshot_read(&m->script.latest[g], &x) && x.job == m->job_seen && (all || x.step != m->latest_sent[g])) {
            if (!only)
                m->latest_sent[g] = x.step;
            send_msg(m, only, TUI_REMOTE_LATEST, &x, sizeof x);
        }
}

/* The status, the counters and topology, and each group's newest step. */
static void send_state(tui_monitor *m, const peer *only)
{
    tui_remote_status *rs = calloc(1, sizeof *rs);
    tui_remote_stats *st = calloc(1, sizeof *st);
    if (rs && st) {
        tui_script_status(&m->script, &rs->st);
        rs->paused = atomic_load(&m->script.control.paused);
        rs->control = atomic_load(&m->control);
        rs->lr_scale = atomic_load(&m->script.control.lr_scale);
        st->ntraffic = tui_stats_traffic(&m->script.stats, st->traffic, TUI_STATS_ROWS, &st->dropped);
        st->nworkers = tui_stats_workers(&m->script.stats, st->workers, TUI_MAX_WORKERS);
        st->nlinks = tui_stats_links(&m->script.stats, st->links, TUI_MAX_LINKS);
        st->rejoins = tui_stats_rejoins(&m->script.stats);
        st->nnodes = tui_stats_topology(&m->script.stats, tui_script_node_state(&rs->st, rs->paused), st->nodes,
                                        TUI_MAX_NODES);
        size_t slen = offsetof(tui_remote_stats, nodes) + sizeof(tui_node) * (size_t)(st->nnodes < TUI_MAX_NODES ? st->nnodes : TUI_MAX_NODES);
        send_msg(m, only, TUI_REMOTE_STATUS, rs, sizeof *rs);
        send_msg(m, only, TUI_REMOTE_STATS, st, slen);
    }
    free(rs);
    free(st);
    send_latest(m, only, true);
}

/* A late workbench's start: the state, the run's history as the job keeps it (points of
 * averaged steps, bounded by series.c), then the log's last lines. */
static void replay(tui_monitor *m, const peer *p)
{
    send_state(m, p); /* the batch is empty here: pump sends what it takes before returning */
    for (int i = 0; i < m->history.n; i++) {
        const tui_series *s = m->history.series[i];
        for (int j = 0; j < tui_series_len(s); j++) {
            tui_point pt = tui_series_at(s, j);
            tui_sample x = {.kind = s->phase == SINGA_PHASE_TRAIN ? TUI_SAMPLE_STEP : TUI_SAMPLE_RECORD,
                            .phase = (uint8_t)s->phase, .job = (uint16_t)m->job_seen, .group = s->group,
                            .step = pt.step, .loss = pt.v[TUI_LOSS], .accuracy = pt.v[TUI_ACC]};
            add_to_batch(m, p, &x);
        }
    }
    flush_batch(m, p);
    uint64_t first = tui_log_first(m->log);
    if (m->log_seen > TUI_REMOTE_LOG_REPLAY && first < m->log_seen - TUI_REMOTE_LOG_REPLAY)
        first = m->log_seen - TUI_REMOTE_LOG_REPLAY;
    for (uint64_t i = first; i < m->log_seen; i++)
        send_log_line(m, p, i);
}

static peer *find_peer(tui_monitor *m, const uint8_t *id, size_t len)
{
    for (int i = 0; i < m->npeers; i++)
        if (m->peers[i].id_len == len && memcmp(m->peers[i].id, id, len) == 0)
            return &m->peers[i];
    return NULL;
}

static void forget(tui_monitor *m, peer *p) { *p = m->peers[--m->npeers]; }

/* The rows of TUI_REMOTE_MESSAGES a job takes, from a workbench `who` (p: when it is one of
 * the attached). */
typedef struct sender {
    peer *p;
    const uint8_t *id;
    size_t id_len;
} sender;

static void on_hello(tui_monitor *m, const sender *who, const tui_remote_msg *msg)
{
    const tui_remote_hello *h = msg->data;
    tui_remote_hello answer = {.version = TUI_REMOTE_VERSION, .sizes = tui_remote_sizes()};
    peer *p = who->p;
    if (h->version != TUI_REMOTE_VERSION || h->sizes != tui_remote_sizes())
        snprintf(answer.refused, sizeof answer.refused, "the job runs another version of singa-tui");
    else if (!p && m->npeers == MAX_PEERS)
        snprintf(answer.refused, sizeof answer.refused, "%d workbenches are attached already", MAX_PEERS);
    peer tmp = {.id_len = who->id_len};
    memcpy(tmp.id, who->id, who->id_len);
    if (answer.refused[0]) {
        send_to(m, &tmp, TUI_REMOTE_HELLO, &answer, sizeof answer);
        return;
    }
    if (!p)
        p = &m->peers[m->npeers++];
    *p = tmp;
    p->seen = tui_now();
    p->control = h->control && atomic_load(&m->control);
    answer.control = p->control;
    send_to(m, p, TUI_REMOTE_HELLO, &answer, sizeof answer);
    replay(m, p);
}

static void on_control(tui_monitor *m, const sender *who, const tui_remote_msg *msg)
{
    const tui_remote_control *c = msg->data;
    singa_job_control *jc = &m->script.control;
    if (!who->p)
        return;
    who->p->seen = tui_now();
    if (!who->p->control || !atomic_load(&m->control))
        return;
    switch (c->what) {
    case TUI_CONTROL_PAUSE:
    case TUI_CONTROL_RESUME:
        atomic_store(&jc->pause, c->what == TUI_CONTROL_PAUSE);
        tui_log_addf(m->log, TUI_LINE_NOTE, "an attached workbench %s the job", c->what == TUI_CONTROL_PAUSE ? "paused" : "resumed");
        break;
    case TUI_CONTROL_CHECKPOINT:
        atomic_store(&jc->checkpoint, true);
        break;
    case TUI_CONTROL_STOP:
        atomic_store(&jc->stop, true);
        tui_log_add(m->log, TUI_LINE_NOTE, "an attached workbench stopped the job");
        break;
    case TUI_CONTROL_LR_SCALE:
        if (c->value >= 0 && c->value < 1e6)
            atomic_store(&jc->lr_scale, c->value);
        break;
    }
}

static void on_ping(tui_monitor *m, const sender *who, const tui_remote_msg *msg)
{
    if (who->p)
        who->p->seen = tui_now();
}

static void on_bye(tui_monitor *m, const sender *who, const tui_remote_msg *msg)
{
    if (who->p)
        forget(m, who->p);
}

typedef void (*handler)(tui_monitor *m, const sender *who, const tui_remote_msg *msg);
#define AT_JOB(name, min, max, unit, tidy, at_attach, at_job) [TUI_REMOTE_##name] = at_job,
static const handler handlers[TUI_REMOTE_COUNT] = {TUI_REMOTE_MESSAGES(AT_JOB)};
#undef AT_JOB

/* One message from a workbench; any from an attached one says it is still there. */
static void handle(tui_monitor *m, const uint8_t *id, size_t id_len, const uint8_t *b, size_t len)
{
    sender who = {find_peer(m, id, id_len), id, id_len};
    tui_remote_msg msg;
    if (tui_remote_decode(b, len, &msg) == 0 && handlers[msg.type])
        handlers[msg.type](m, &who, &msg);
    else if (who.p)
        who.p->seen = tui_now();
    tui_remote_msg_free(&msg);
}

static void receive(tui_monitor *m)
{
    for (;;) {
        zmq_msg_t id, body;
        zmq_msg_init(&id);
        zmq_msg_init(&body);
        if (zmq_msg_recv(&id, m->sock, ZMQ_DONTWAIT) < 0) {
            zmq_msg_close(&id);
            zmq_msg_close(&body);
            return;
        }
        if (zmq_msg_more(&id) && zmq_msg_recv(&body, m->sock, 0) >= 0 && zmq_msg_size(&body) >= 1 &&
            zmq_msg_size(&id) <= sizeof m->peers[0].id)
            handle(m, zmq_msg_data(&id), zmq_msg_size(&id), zmq_msg_data(&body), zmq_msg_size(&body));
        while (zmq_msg_more(&body) && zmq_msg_recv(&body, m->sock, 0) >= 0) /* skip the rest */
            ;
        zmq_msg_close(&id);
        zmq_msg_close(&body);
    }
}

/* What the hooks queued since the last tick, into the history and to every workbench. */
static void pump(tui_monitor *m)
{
    tui_sample x;
    while (tui_ring_pop(m->ring, &x)) {
        if (x.job < m->job_seen)
            continue;
        if (x.job > m->job_seen) {
            flush_batch(m, NULL);
            tui_history_clear(&m->history);
            m->job_seen = x.job;
        }
        tui_history_add_sample(&m->history, &x);
        add_to_batch(m, NULL, &x);
    }
    flush_batch(m, NULL);
    send_latest(m, NULL, false);
    for (uint64_t total = tui_log_total(m->log); m->log_seen < total; m->log_seen++)
        send_log_line(m, NULL, m->log_seen);
}

static void *run(void *arg)
{
    tui_monitor *m = arg;
    double last_state = 0;
    while (!atomic_load(&m->stop)) {
        zmq_pollitem_t it = {.socket = m->sock, .events = ZMQ_POLLIN};
        zmq_poll(&it, 1, 100);
        receive(m);
        pump(m);
        double t = tui_now();
        if (t - last_state >= 1) {
            last_state = t;
            send_state(m, NULL);
            for (int i = 0; i < m->npeers; i++)
                if (t - m->peers[i].seen > PEER_SILENT_S)
                    forget(m, &m->peers[i--]);
        }
    }
    pump(m);
    send_state(m, NULL);
    send_msg(m, NULL, TUI_REMOTE_END, NULL, 0);
    return NULL;
}

static int start(tui_monitor *m, const char *addr, const singa_cluster *cl, singa_err *err)
{
    int hwm = SEND_HWM, linger = 200;
    snprintf(m->addr, sizeof m->addr, "%s", addr);
    if (!(m->ctx = zmq_ctx_new()) || !(m->sock = zmq_socket(m->ctx, ZMQ_ROUTER)))
        return singa_err_set(err, "cannot listen at %s: %s", addr, zmq_strerror(zmq_errno()));
    zmq_setsockopt(m->sock, ZMQ_SNDHWM, &hwm, sizeof hwm);
    zmq_setsockopt(m->sock, ZMQ_LINGER, &linger, sizeof linger);
    if (singa_curve_start(m->ctx, cl, &m->curve, err) < 0)
        return -1;
    if (singa_curve_server(m->curve, m->sock) < 0)
        return singa_err_set(err, "cannot listen at %s with CURVE: %s", addr, zmq_strerror(zmq_errno()));
    if (zmq_bind(m->sock, addr) < 0)
        return singa_err_set(err, "cannot listen at %s: %s", addr, zmq_strerror(zmq_errno()));
    int rc = tui_term_thread(&m->thread, run, m);
    if (rc != 0)
        return singa_err_set(err, "cannot start the monitor's thread");
    m->running = true;
    tui_log_addf(m->log, TUI_LINE_NOTE, "listening for workbenches at %s%s", addr,
                 m->curve ? " (CURVE: only the keys of cluster.curve's public_keys_dir attach)" : "");
    return 0;
}

static void on_log(void *ud, const char *line)
{
    tui_monitor *m = ud;
    tui_log_add(m->log, TUI_LINE_AUTO, line);
}

static const singa_field monitor_fields[] = {{"address", SINGA_FIELD_STR}, {"control", SINGA_FIELD_BOOL}, {NULL, 0}};

/* Where this job listens, from --listen or its cluster.monitor: 1 and addr/control, 0 when it
 * does not, -1 with err. */
static int where(tui_monitor *m, const singa_job *job, const char **addr, bool *control, singa_err *err)
{
    const singa_conf *mon = singa_conf_get(singa_conf_get(singa_job_conf(job), "cluster"), "monitor");
    const singa_field *const schemas[] = {monitor_fields, NULL};
    if (m->listen[0]) {
        *addr = m->listen;
        *control = m->listen_control;
        return 1;
    }
    if (!mon)
        return 0;
    if (singa_conf_check(mon, schemas, "cluster.monitor", err) < 0)
        return -1;
    if (!(*addr = singa_conf_str(mon, "address", NULL)))
        return singa_err_set(err, "cluster.monitor: needs 'address', where workbenches attach (e.g. tcp://127.0.0.1:7070)");
    *control = singa_conf_bool(mon, "control", false);
    return 1;
}

/* Every job: listen when asked (the first job that asks binds; later ones keep its address),
 * and only then report to the workbench's hooks. */
static int job_start(void *ud, const singa_job *job)
{
    tui_monitor *m = ud;
    const char *addr = NULL;
    bool control = false;
    singa_err err = {{0}};
    int on = where(m, job, &addr, &control, &err);
    if (on > 0 && m->rank0 && !m->running)
        on = start(m, addr, singa_job_cluster(job), &err) < 0 ? -1 : 1;
    if (on < 0) {
        fprintf(stderr, "singa-tui: %s\n", err.msg);
        return -1;
    }
    on = on && m->rank0;
    singa_job_hooks *h = &m->host.hooks;
    h->record = on ? m->script.host.hooks.record : NULL;
    h->step = on ? m->script.host.hooks.step : NULL;
    h->checkpoint = on ? m->script.host.hooks.checkpoint : NULL;
    h->log = on ? on_log : NULL;
    h->control = on && control ? &m->script.control : NULL;
    atomic_store(&m->control, on && control);
    return m->script.host.job_start(ud, job);
}

int tui_monitor_new(tui_monitor **out, lua_State *L, singa_lua_opts *opts, const char *listen, bool control,
                    singa_err *err)
{
    tui_monitor *m = calloc(1, sizeof *m);
    *out = NULL;
    if (!m || !(m->ring = tui_ring_new(1 << 14)) || !(m->log = tui_log_new(2 * TUI_REMOTE_LOG_REPLAY))) {
        if (m)
            tui_ring_free(m->ring);
        free(m);
        return singa_err_set(err, "out of memory");
    }
    int progress = opts->progress_line;
    tui_script_init(&m->script, L, opts, m->ring, m->log);
    opts->progress_line = progress;
    m->script.go = true;
    m->script.headless = true;
    m->host = m->script.host;
    m->host.hooks = (singa_job_hooks){.ud = &m->script};
    m->host.job_start = job_start;
    opts->host = &m->host;
    snprintf(m->listen, sizeof m->listen, "%s", listen ? listen : "");
    m->listen_control = control;
    atomic_init(&m->control, false);
    atomic_init(&m->stop, false);
    tui_history_init(&m->history);
    int rank = 0, size = 1;
    const char *from;
    m->rank0 = singa_launch_rank(&rank, &size, &from, NULL) < 0 || rank == 0;
    *out = m;
    return 0;
}

void tui_monitor_free(tui_monitor *m, bool failed)
{
    if (!m)
        return;
    pthread_mutex_lock(&m->script.mu);
    m->script.st.script = failed ? TUI_SCRIPT_FAILED : TUI_SCRIPT_OK;
    pthread_mutex_unlock(&m->script.mu);
    if (m->running) {
        atomic_store(&m->stop, true);
        pthread_join(m->thread, NULL);
    }
    if (m->sock)
        zmq_close(m->sock);
    singa_curve_stop(m->curve);
    if (m->ctx)
        zmq_ctx_term(m->ctx);
    tui_script_destroy(&m->script);
    tui_history_clear(&m->history);
    tui_ring_free(m->ring);
    tui_log_free(m->log);
    free(m);
}
