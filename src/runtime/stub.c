/* The stub: one per process, the only thread that routes.  Workers and servers of the process
 * talk to its ROUTER over inproc; other processes' stubs over tcp (peers.c).  It sums the
 * gradients of a group's local workers before sending one update per slice (SINGA's
 * aggregation, unless the workers added them up themselves: history.c), tells those workers once
 * every slice of a param is fresh, puts and gets the params before training starts, and stops
 * every thread when the workers are done or one thread fails.  What it accepts, from whom and
 * how, is its table of legs (protocol.h); a message no leg takes is dropped and counted.
 *
 * The end of a job (stub_end.c), the params' traffic (stub_params.c), and losses and rejoins
 * (stub_loss.c) are files of their own; stub.h is what they share.
 *
 * Checkpoints: worker 0.0's request to every server passes through here like any message; rank
 * 0's stub notes which answers worker 0.0 waits for and answers itself (lost) for a server whose
 * process is lost, so an asynchronous job that goes on without it does not wait forever. */
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "runtime/bridge.h"
#include "runtime/compress.h"
#include "runtime/protocol.h"
#include "runtime/rejoin_sync.h"
#include "runtime/runtime.h"
#include "runtime/stub.h"

int rt_stub_create(rt_ctx *rt, singa_err *err)
{
    rt_stub *s = calloc(1, sizeof *s);
    if (!s || !(s->groups = calloc((size_t)rt->c->nworker_groups, sizeof *s->groups)) ||
        !(s->proc_done = calloc((size_t)rt->nprocs, sizeof *s->proc_done)))
        goto oom;
    rt->stub = s;
    s->rt = rt;
    s->threads = rt->nworkers + rt->nservers;
    for (int i = 0; i < rt->nworkers; i++)
        s->groups[rt->workers[i].group].nlocal++;
    for (int g = 0; g < rt->c->nworker_groups; g++) {
        stub_group *sg = &s->groups[g];
        sg->server_group = singa_cluster_server_group(rt->c, g);
        if (!sg->nlocal)
            continue;
        size_t n = (size_t)rt->nparams;
        if (!(sg->arrived = calloc(n, sizeof *sg->arrived)) || !(sg->step = calloc(n, sizeof *sg->step)) ||
            !(sg->agg = calloc(n, sizeof *sg->agg)) || !(sg->lent = calloc(n, sizeof *sg->lent)) ||
            !(sg->slices_left = calloc(n, sizeof *sg->slices_left)) || !(sg->span = calloc(n, sizeof *sg->span)) ||
            !(sg->open = calloc((size_t)rt->nslices, sizeof *sg->open)) || !(sg->shares = calloc(n, sizeof *sg->shares)))
            goto oom;
    }
    if (rt->c->compress.kind != SINGA_COMPRESS_NONE && rt_compress_buffers(rt, &s->unpacked, &s->packed) < 0)
        goto oom;
    for (int i = 0; i < rt->nworkers; i++) { /* a cut group has one here, the one that sends */
        const rt_worker *w = &rt->workers[i];
        const singa_parts *parts = singa_job_train_net(w->job)->parts;
        for (int k = 0; k < rt->nparams; k++) {
            size_t *span = s->groups[w->group].span[k];
            span[0] = 0;
            span[1] = rt->params[k].size;
            if (parts)
                singa_parts_span(parts, w->params[k], &span[0], &span[1]);
        }
    }
    const singa_cluster *c = rt->c;
    if (rt->rank == 0 && c->nserver_groups > 1 &&
        (!(s->flush_live = calloc((size_t)c->nservers_per_group, sizeof *s->flush_live)) ||
         !(s->flush_wait = calloc((size_t)(c->nserver_groups * c->nservers_per_group), sizeof *s->flush_wait)) ||
         !(s->fetch_from = calloc((size_t)rt->nslices, sizeof *s->fetch_from))))
        goto oom;
    size_t nservers = (size_t)(c->nserver_groups * c->nservers_per_group);
    if ((rt->rank == 0 || c->replicas > 1) && !(s->ckpt = calloc(nservers, sizeof *s->ckpt)))
        goto oom;
    if (c->staleness >= 0 && !(s->bound = rt_bound_new(c->nworker_groups, rt->resume_step)))
        goto oom;
    s->ckpt_freq = rt->nworkers ? singa_conf_int(rt->conf, "checkpoint_freq", 0) : 0;
    s->ckpt_after = singa_conf_int(rt->conf, "checkpoint_after", 0);
    return 0;
oom:
    if (s && !rt->stub) {
        free(s->groups);
        free(s);
    }
    return singa_err_set(err, "out of memory");
}

void rt_stub_free(rt_stub *s)
{
    if (!s)
        return;
    for (int g = 0; g < s->rt->c->nworker_groups; g++) {
        free(s->groups[g].arrived);
        free(s->groups[g].shares);
        free(s->groups[g].step);
        free(s->groups[g].agg);
        free(s->groups[g].lent);
        free(s->groups[g].slices_left);
        free(s->groups[g].open);
        free(s->groups[g].span);
    }
    free(s->unpacked);
    free(s->packed);
    free(s->groups);
    free(s->proc_done);
    free(s->flush_live);
    free(s->flush_wait);
    free(s->fetch_from);
    free(s->ckpt);
    rt_bound_free(s->bound);
    free(s);
}

/* A message's other end: a thread, named with its process when it lives in another one. */
static void peer_name(char *buf, size_t len, const msg_addr *a, int rank)
{
    if (a->kind == ENT_STUB)
        snprintf(buf, len, "rank %d", a->proc);
    else if (a->proc == rank)
        snprintf(buf, len, "%s %d.%d", a->kind == ENT_WORKER ? "worker" : "server", a->group, a->id);
    else
        snprintf(buf, len, "%s %d.%d (rank %d)", a->kind == ENT_WORKER ? "worker" : "server", a->group, a->id, a->proc);
}

/* The bytes a message delivers, counted the same however its values travel: its header and
 * payload frame, or the values it hands over by address in this process (a worker's gradient,
 * an update to a server here), or already in place in the group's replica (a server's reply to a
 * group sharing its values, the stub telling a worker that its param is fresh).  Without this a
 * reply's two legs disagreed by the values' size: the server's counted them, the worker's not. */
static size_t carried(const rt_ctx *rt, const msg *m, size_t nbytes)
{
    size_t values = 0;
    if (m->flags & (MSG_F_PACKED | MSG_F_APPLY)) /* factors or a sum: the payload is what it carries */
        return MSG_HEADER_BYTES + nbytes;
    if (m->src.kind == ENT_WORKER && m->type == MSG_UPDATE && (m->flags & MSG_F_PTR))
        values = m->param >= 0 && m->param < rt->nparams ? rt->params[m->param].size : 0; /* the whole gradient */
    else if (m->flags & MSG_F_PTR)
        values = m->len;
    else if (m->src.kind == ENT_SERVER && (m->type == MSG_UPDATE_REPLY || m->type == MSG_GET_REPLY))
        values = m->len; /* in the frame, or written into the shared replica */
    else if (m->src.kind == ENT_STUB && m->dst.kind == ENT_WORKER && m->type == MSG_UPDATE_REPLY)
        values = m->param >= 0 && m->param < rt->nparams ? rt->params[m->param].size : 0;
    return MSG_HEADER_BYTES + (values ? values * sizeof(float) : nbytes);
}

/* Sends m where it is addressed: a thread here, or the stub of its process. */
void stub_route(rt_stub *s, const msg *m, const void *payload, size_t nbytes)
{
    char id[32], peer[32];
    peer_name(peer, sizeof peer, &m->dst, s->rt->rank);
    int pending = m->type == MSG_UPDATE || m->type == MSG_GET ? 1 : 0;
    singa_stats_count(s->rt->stats, msg_type_name(m->type), peer, true, carried(s->rt, m, nbytes), pending, 0);
    if (m->dst.proc != s->rt->rank) {
        singa_stats_link(s->rt->stats, m->dst.proc, true, MSG_HEADER_BYTES + nbytes);
        if (s->peers)
            rt_peers_send(s->peers, m->dst.proc, m, payload, nbytes);
        return;
    }
    rt_identity(id, sizeof id, m->dst.kind, m->dst.group, m->dst.id);
    msg_send(s->router, id, m, payload, nbytes);
}

msg_addr stub_server_addr(const rt_ctx *rt, int group, int id)
{
    if (id < rt->c->nservers_per_group) /* its holder now: its primary, or after a loss a backup */
        id = rt_holder_id(rt, id);
    return (msg_addr){ENT_SERVER, (uint16_t)group, (uint16_t)id, (uint16_t)rt_server_proc(rt, group, id)};
}

/* Sends a message to every local worker of group g. */
void stub_to_workers(rt_stub *s, int g, msg m)
{
    for (int i = 0; i < s->rt->nworkers; i++) {
        rt_worker *w = &s->rt->workers[i];
        if (w->group != g)
            continue;
        m.dst = (msg_addr){ENT_WORKER, (uint16_t)g, (uint16_t)w->id, (uint16_t)s->rt->rank};
        stub_route(s, &m, NULL, 0);
    }
}

/* Group g finished `step` (INT_MAX: it left the bound); the workers here hear when the floor rises. */
void stub_bound_note(rt_stub *s, int g, int step)
{
    if (!rt_bound_note(s->bound, g, step))
        return;
    msg m = {.type = MSG_GROUP_STEP, .src = stub_addr(s, 0), .step = rt_bound_floor(s->bound)};
    for (int h = 0; h < s->rt->c->nworker_groups; h++)
        if (s->groups[h].nlocal)
            stub_to_workers(s, h, m);
}

/* Sends m to every server here. */
void stub_to_servers(rt_stub *s, msg m, const void *payload, size_t nbytes)
{
    for (int g = 0; g < s->rt->c->nserver_groups; g++)
        for (int j = 0; j < s->rt->c->nservers_per_group * s->rt->c->replicas; j++) /* backups too */
            if (rt_server_proc(s->rt, g, j) == s->rt->rank) {
                m.dst = (msg_addr){ENT_SERVER, (uint16_t)g, (uint16_t)j, (uint16_t)s->rt->rank};
                stub_route(s, &m, payload, nbytes);
            }
}

void stub_stop_threads(rt_stub *s, const char *why)
{
    msg m = {.type = MSG_STOP, .src = stub_addr(s, 0)};
    size_t n = why ? strlen(why) : 0;
    for (int i = 0; i < s->rt->nworkers; i++) {
        rt_worker *w = &s->rt->workers[i];
        m.dst = (msg_addr){ENT_WORKER, (uint16_t)w->group, (uint16_t)w->id, (uint16_t)s->rt->rank};
        stub_route(s, &m, why, n);
        struct singa_parts *parts = singa_job_train_net(w->job)->parts;
        if (why && parts) /* a worker may wait at a bridge, not at its socket */
            singa_parts_abort(parts, why);
    }
    stub_to_servers(s, m, why, n);
}

void stub_stop_all(rt_stub *s, const char *why)
{
    stub_stop_threads(s, why);
    s->stop = true;
}

/* Sends m to the stub of every other process. */
void stub_to_peers(rt_stub *s, msg m, const void *payload, size_t nbytes)
{
    for (int r = 0; r < s->rt->nprocs; r++)
        if (r != s->rt->rank) {
            m.dst = (msg_addr){ENT_STUB, 0, 0, (uint16_t)r};
            stub_route(s, &m, payload, nbytes);
        }
}

/* A failure here ends the job everywhere, each process naming where it began. */
void stub_fail_everywhere(rt_stub *s, const singa_err *e, bool lost)
{
    char why[sizeof e->msg + 16];
    rt_fail_as(s->rt, e, lost);
    stub_stop_all(s, e->msg);
    snprintf(why, sizeof why, "rank %d: %s", s->rt->rank, e->msg);
    stub_to_peers(s, (msg){.type = MSG_STOP, .src = stub_addr(s, 0), .lost = lost}, why, strlen(why));
}

/* The legs of the stub's protocol (protocol.h): the checks beyond a row's columns, then the
 * handlers, which act on a message that passed them. */

static bool is_lead(const rt_ctx *rt, const msg_addr *a)
{
    return a->kind == ENT_WORKER && a->group == 0 && rt_leads(rt, 0, a->id);
}

/* A server or a backup of one (cluster.replicas: a backup holds it after a loss), where it lives. */
static bool server_exists(const rt_ctx *rt, const msg_addr *a)
{
    return a->group < rt->c->nserver_groups && a->id < rt->c->nservers_per_group * rt->c->replicas &&
           a->proc == rt_server_proc(rt, a->group, a->id);
}

static int server_index(const rt_ctx *rt, const msg_addr *a)
{
    return a->group * rt->c->nservers_per_group + a->id % rt->c->nservers_per_group;
}

static bool server_here(const rt_stub *s, const msg *m)
{
    return server_exists(s->rt, &m->dst) && m->dst.proc == s->rt->rank;
}

/* Rank 0, or the process that took over from it (takeover.c). */
static bool at_rank0(const rt_stub *s, const msg *m)
{
    return s->rt->rank == rt_coordinator(s->rt);
}

/* A process's word that its workers are done, to the coordinator it sees: one that saw rank 0's
 * loss first may tell the next coordinator before that one knows it takes over, so it is counted
 * here anyway (only a coordinator's count ends the job: takeover.c). */
static bool done_ok(const rt_stub *s, const msg *m)
{
    return m->dst.proc == s->rt->rank && m->src.proc != s->rt->rank;
}

static bool from_rank0(const rt_stub *s, const msg *m)
{
    return m->src.proc == rt_coordinator(s->rt);
}

static bool from_lead(const rt_stub *s, const msg *m)
{
    return is_lead(s->rt, &m->src);
}

static bool slice_ok(const rt_stub *s, const msg *m)
{
    return m->slice >= 0 && m->slice < s->rt->nslices;
}

/* A server's answer for a group with workers here. */
static bool reply_ok(const rt_stub *s, const msg *m)
{
    return m->dst.group < s->rt->c->nworker_groups && s->groups[m->dst.group].nlocal && slice_ok(s, m);
}

static bool final_values_ok(const rt_stub *s, const msg *m)
{
    return from_rank0(s, m) && slice_ok(s, m);
}

/* A worker's gradient, by address, of a param of its group. */
static bool gradient_ok(const rt_stub *s, const msg *m)
{
    return (m->flags & MSG_F_PTR) && m->ptr && m->src.group < s->rt->c->nworker_groups &&
           s->groups[m->src.group].nlocal && m->param >= 0 && m->param < s->rt->nparams;
}

/* Worker 0.0's fetch for a test, once the one before is in. */
static bool test_fetch_ok(const rt_stub *s, const msg *m)
{
    return is_lead(s->rt, &m->src) && s->groups[0].gets_left == 0;
}

static bool flush_report_ok(const rt_stub *s, const msg *m)
{
    return s->rt->rank == 0 && s->end == END_FLUSHING && m->src.group < s->rt->c->nserver_groups &&
           m->src.id < s->rt->c->nservers_per_group;
}

/* Rank 0's word to flush. */
static bool flush_word_ok(const rt_stub *s, const msg *m)
{
    return server_here(s, m) && m->src.proc == 0;
}

/* Worker 0.0's checkpoint request from rank 0, to a server here. */
static bool ckpt_ok(const rt_stub *s, const msg *m)
{
    return server_here(s, m) && is_lead(s->rt, &m->src) && from_rank0(s, m);
}

static bool ckpt_word_ok(const rt_stub *s, const msg *m)
{
    return s->rt->c->nworker_groups > 1 && m->step > 0 && (m->src.kind == ENT_STUB ? m->src.proc == 0 : is_lead(s->rt, &m->src));
}

/* Rank 0: worker 0.0's checkpoint request, to a server anywhere. */
static bool ckpt_request_ok(const rt_stub *s, const msg *m)
{
    return at_rank0(s, m) && is_lead(s->rt, &m->src) && server_exists(s->rt, &m->dst);
}

/* Rank 0: a server's answer to the checkpoint request worker 0.0 waits for. */
static bool ckpt_reply_ok(const rt_stub *s, const msg *m)
{
    const rt_ctx *rt = s->rt;
    if (!at_rank0(s, m) || !is_lead(rt, &m->dst) || !server_exists(rt, &m->src))
        return false;
    int i = server_index(rt, &m->src);
    return m->server == i && m->step == s->ckpt_step && s->ckpt[i] == CKPT_ASKED && !m->lost;
}

/* Rank 0's worker 0.0's state, to a worker of group 0 here, which rejoined (rejoin_sync.c). */
static bool worker_state_ok(const rt_stub *s, const msg *m)
{
    const rt_ctx *rt = s->rt;
    return rt_rejoin_sync(rt) && m->src.proc == 0 && m->src.group == 0 && m->src.id == 0 && m->dst.group == 0 &&
           m->dst.id < rt->c->nworkers_per_group && rt_worker_proc(rt, 0, m->dst.id) == rt->rank;
}

/* The metrics of a worker to the leader here of a group training whole copies. */
static bool worker_metrics_ok(const rt_stub *s, const msg *m)
{
    const rt_ctx *rt = s->rt;
    const singa_cluster *c = rt->c;
    return !rt->cut && m->dst.group < c->nworker_groups && m->dst.id < c->nworkers_per_group &&
           rt_worker_proc(rt, m->dst.group, m->dst.id) == rt->rank && m->src.group == m->dst.group &&
           m->src.id != m->dst.id &&
           m->src.id < c->nworkers_per_group && m->src.proc == rt_worker_proc(rt, m->src.group, m->src.id);
}

/* The parts here that a bridge's message from another process is for, or NULL: the sender is
 * the worker sending for its process in the same group, and the addressee the one here. */
static singa_parts *bridge_parts(const rt_stub *s, const msg *m)
{
    const rt_ctx *rt = s->rt;
    const msg_addr *a = &m->src, *b = &m->dst;
    if (a->kind != ENT_WORKER || a->group != b->group || a->group >= rt->c->nworker_groups ||
        a->id >= rt->c->nworkers_per_group || !rt_sends(rt, a->group, a->id) || a->proc == rt->rank ||
        a->proc != rt_worker_proc(rt, a->group, a->id))
        return NULL;
    for (int i = 0; i < rt->nworkers; i++)
        if (rt->workers[i].group == b->group && rt->workers[i].id == b->id)
            return singa_job_train_net(rt->workers[i].job)->parts;
    return NULL;
}

static bool bridge_ok(const rt_stub *s, const msg *m)
{
    return bridge_parts(s, m) != NULL;
}

/* A group's step, from its leader here or from the stub of its leader's process. */
static bool group_step_ok(const rt_stub *s, const msg *m)
{
    const rt_ctx *rt = s->rt;
    return s->bound && m->src.group < rt->c->nworker_groups &&
           (m->src.kind == ENT_STUB || m->src.id == 0) && m->src.proc == rt_worker_proc(rt, m->src.group, 0);
}

/* A thread's message for another process. */
static bool relay_ok(const rt_stub *s, const msg *m)
{
    return m->dst.proc < s->rt->nprocs && !(m->flags & MSG_F_PTR);
}

/* Passes a message received from elsewhere on with its payload frame itself, not a copy, when
 * its values lie where floats may: servers read them in place, and ZeroMQ may put a small frame
 * from tcp anywhere in its receive buffer (such a frame is copied, which is cheap). */
static void forward(rt_stub *s, const msg *m, zmq_msg_t *payload, bool remote)
{
    msg f = *m;
    void *data = zmq_msg_data(payload);
    size_t len = zmq_msg_size(payload);
    f.frame = len && (uintptr_t)data % _Alignof(float) == 0 ? payload : NULL;
    stub_route(s, &f, len ? data : NULL, len);
}

/* Every thread here said hello: the params are put and fetched. */
static void on_hello(rt_stub *s, const msg *m, zmq_msg_t *payload, bool remote)
{
    if (++s->hellos < s->threads)
        return;
    if (rt_failed(s->rt)) { /* before every thread could hear it */
        stub_stop_all(s, s->rt->err.msg);
        return;
    }
    if (rt_rejoin_sync(s->rt)) /* the holders send its values at its step, unasked (rejoin_sync.c) */
        stub_rejoin_start(s);
    else
        stub_start(s);
    if (s->rt->nworkers == 0)
        stub_local_done(s);
}

static void on_abort(rt_stub *s, const msg *m, zmq_msg_t *payload, bool remote)
{
    singa_err e;
    singa_err_set(&e, "%.*s", (int)zmq_msg_size(payload), (const char *)zmq_msg_data(payload));
    stub_fail_everywhere(s, &e, false);
}

static void on_stop(rt_stub *s, const msg *m, zmq_msg_t *payload, bool remote)
{
    singa_err e;
    size_t len = zmq_msg_size(payload);
    singa_err_set(&e, "%.*s", (int)len, len ? (const char *)zmq_msg_data(payload) : "another process stopped the job");
    rt_fail_as(s->rt, &e, m->lost);
    stub_stop_all(s, e.msg);
}

static void on_group_step(rt_stub *s, const msg *m, zmq_msg_t *payload, bool remote)
{
    if (!remote)
        stub_to_peers(s, (msg){.type = MSG_GROUP_STEP, .src = stub_addr(s, m->src.group), .step = m->step}, NULL, 0);
    stub_bound_note(s, m->src.group, m->step);
}

static void on_test_fetch(rt_stub *s, const msg *m, zmq_msg_t *payload, bool remote)
{
    stub_get_all(s, 0, FETCH_TEST);
}

static void on_ckpt_request(rt_stub *s, const msg *m, zmq_msg_t *payload, bool remote)
{
    int i = server_index(s->rt, &m->dst);
    s->ckpt_step = m->step;
    s->ckpt[i] = CKPT_ASKED;
    if (m->dst.proc != s->rt->rank && stub_proc_lost(s, m->dst.proc)) /* it will never answer */
        stub_ckpt_lost(s, i);
    else
        stub_route(s, m, NULL, 0);
}

/* The host's checkpoint in a job of several groups: from worker 0.0 to rank 0's stub, which
 * tells every other process's. */
static void on_ckpt_word(rt_stub *s, const msg *m, zmq_msg_t *payload, bool remote)
{
    rt_ckpt_at(s->rt, m->step);
    if (!remote)
        stub_to_peers(s, (msg){.type = MSG_CKPT, .src = stub_addr(s, 0), .step = m->step}, NULL, 0);
}

static void on_ckpt_reply(rt_stub *s, const msg *m, zmq_msg_t *payload, bool remote)
{
    s->ckpt[server_index(s->rt, &m->src)] = CKPT_IDLE;
    stub_route(s, m, NULL, 0);
}

static void on_bridge(rt_stub *s, const msg *m, zmq_msg_t *payload, bool remote)
{
    singa_parts *parts = bridge_parts(s, m);
    const void *data = zmq_msg_data(payload);
    size_t len = zmq_msg_size(payload);
    singa_metrics metrics;
    int rc = m->type == MSG_BRIDGE_PROFILE ? singa_parts_profile_put(parts, m->src.proc, data, len)
             : m->type != MSG_BRIDGE_METRICS
                 ? singa_parts_deliver(parts, m->src.proc, m->layer, m->type == MSG_BRIDGE ? -1 : m->edge, m->step,
                                       data, len)
             : msg_metrics_decode(&metrics, data, len) == 0
                 ? singa_parts_deliver_metrics(parts, m->src.proc, m->step, &metrics)
                 : -1;
    if (rc < 0)
        singa_stats_drop(s->rt->stats);
}

/* A group leader's record in another process. */
static void on_metric(rt_stub *s, const msg *m, zmq_msg_t *payload, bool remote)
{
    singa_record r;
    singa_metrics metrics;
    if (msg_record_decode(&r, &metrics, zmq_msg_data(payload), zmq_msg_size(payload)) == 0)
        rt_record(s->rt, &r, m->of_step);
    else
        singa_stats_drop(s->rt->stats);
}

typedef struct stub_leg {
    uint8_t type, to, from, via;
    bool (*check)(const rt_stub *s, const msg *m);
    void (*handle)(rt_stub *s, const msg *m, zmq_msg_t *payload, bool remote);
} stub_leg;

#define LEG(type, to, from, via, check, handle) {type, to, from, via, check, handle},
static const stub_leg legs[] = {RT_STUB_LEGS(LEG)};
#undef LEG

/* The first leg whose columns match m, or NULL. */
static const stub_leg *leg_of(const rt_stub *s, const msg *m, bool remote)
{
    int via = remote ? RT_PEER : m->dst.proc == s->rt->rank ? RT_HERE : RT_OUT;
    for (size_t i = 0; i < sizeof legs / sizeof *legs; i++) {
        const stub_leg *l = &legs[i];
        if ((l->type == 0 || l->type == m->type) && (l->to >> m->dst.kind & 1) && (l->from >> m->src.kind & 1) &&
            (l->via & via))
            return l;
    }
    return NULL;
}

/* A message received counts on its row, and an answer takes its request off the pending. */
static void count_received(rt_stub *s, const msg *m, size_t len)
{
    char peer[32];
    peer_name(peer, sizeof peer, &m->src, s->rt->rank);
    singa_stats_count(s->rt->stats, msg_type_name(m->type), peer, false, carried(s->rt, m, len), 0, 0);
    if (m->type == MSG_UPDATE_REPLY || m->type == MSG_GET_REPLY)
        singa_stats_count(s->rt->stats, msg_type_name(m->type == MSG_UPDATE_REPLY ? MSG_UPDATE : MSG_GET), peer,
                       true, 0, -1, 0);
}

/* Acts on a message from a thread here or (remote) from another process's stub through its leg;
 * one no leg takes is dropped. */
static void handle(rt_stub *s, const msg *m, zmq_msg_t *payload, bool remote)
{
    count_received(s, m, zmq_msg_size(payload));
    if (remote)
        singa_stats_link(s->rt->stats, m->src.proc, false, MSG_HEADER_BYTES + zmq_msg_size(payload));
    const stub_leg *leg = leg_of(s, m, remote);
    if (!leg || (leg->check && !leg->check(s, m)) || (remote && rt_shrunk(s->rt, m->src.proc))) { /* gone on without */
        singa_stats_drop(s->rt->stats);
        return;
    }
    leg->handle(s, m, payload, remote);
}

/* Receives one message from a socket with something to read. */
static int receive(rt_stub *s, bool remote)
{
    char id[32];
    msg m;
    zmq_msg_t payload;
    int rc = remote ? rt_peers_recv(s->peers, &m, &payload) : msg_recv(s->router, true, id, sizeof id, &m, &payload);
    if (rc == 0) {
        double t0 = rt_now();
        handle(s, &m, &payload, remote);
        if (m.step > 0) /* not the life of the processes (heartbeats, hellos) */
            singa_trace_step(s->trace, m.step);
        singa_trace_span(s->trace, "stub", msg_type_name(m.type), t0, rt_now());
    }
    else if (rc == 3)
        stub_on_rejoin(s);
    else if (rc == 1)
        singa_stats_drop(s->rt->stats);
    zmq_msg_close(&payload);
    return rc < 0 ? -1 : 0;
}

/* The router the threads here connect to. */
static int open_router(rt_stub *s, singa_err *e)
{
    const rt_ctx *rt = s->rt;
    int one = 1, zero = 0;
    s->router = zmq_socket(rt->zmq, ZMQ_ROUTER);
    if (!s->router || zmq_setsockopt(s->router, ZMQ_LINGER, &zero, sizeof zero) < 0 ||
        zmq_setsockopt(s->router, ZMQ_ROUTER_MANDATORY, &one, sizeof one) < 0 ||
        zmq_setsockopt(s->router, ZMQ_SNDHWM, &zero, sizeof zero) < 0 ||
        zmq_setsockopt(s->router, ZMQ_RCVHWM, &zero, sizeof zero) < 0 || zmq_bind(s->router, rt->endpoint) < 0) {
        singa_err_set(e, "stub: cannot listen on %s: %s", rt->endpoint, zmq_strerror(zmq_errno()));
        if (s->router)
            zmq_close(s->router);
        return -1;
    }
    return 0;
}

void *rt_stub_main(void *arg)
{
    rt_ctx *rt = arg;
    rt_stub *s = rt->stub;
    singa_err e;
    s->trace = singa_trace_thread(rt->trace, "stub");
    if (open_router(s, &e) < 0) {
        rt_fail(rt, &e);
        return NULL;
    }
    if (rt->nprocs > 1 && rt_peers_open(rt, &s->peers, &e) < 0) {
        rt_fail(rt, &e); /* the threads hear it once all have said hello */
        rt_peers_close(s->peers);
        s->peers = NULL;
    }
    rt_announce(rt, s->peers ? rt_peers_endpoint(s->peers, rt->rank) : NULL);
    if (s->threads == 0)
        s->stop = true;
    zmq_pollitem_t *it = calloc((size_t)rt->nprocs + 1, sizeof *it);
    if (!it) {
        singa_err_set(&e, "out of memory");
        rt_fail(rt, &e);
        s->stop = true;
    }
    while (!s->stop) {
        it[0] = (zmq_pollitem_t){s->router, 0, ZMQ_POLLIN, 0};
        /* other processes are heard once every thread here is, so none of their messages finds
         * its addressee missing */
        bool remote = s->peers && s->hellos == s->threads;
        int n = 1 + (remote ? rt_peers_items(s->peers, it + 1) : 0);
        long timeout = s->peers ? (long)(rt_peers_tick(s->peers) * 1000) + 1 : -1;
        if (zmq_poll(it, n, timeout) < 0 && zmq_errno() != EINTR)
            break;
        if ((it[0].revents & ZMQ_POLLIN) && receive(s, false) < 0)
            break;
        if (remote && !s->stop && (it[1].revents & ZMQ_POLLIN) && receive(s, true) < 0)
            break;
        if (remote)
            rt_peers_watch(s->peers, it + 1);
        rt_loss why;
        for (int r; remote && !s->stop && (r = rt_peers_lost(s->peers, &why)) >= 0;)
            stub_on_lost(s, r, why);
    }
    free(it);
    rt_peers_close(s->peers);
    zmq_close(s->router);
    return NULL;
}
