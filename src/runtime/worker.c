/* A worker: its job's training loop against the runtime's exchange (train/train.h), messages in
 * place of the local updater.  Each param's gradient leaves for the stub as soon as the backward
 * pass reports it final (layers compute a source's gradient before their params', so nothing
 * reads the value after that), the rest after the pass.  Then SINGA's Collect: the next forward
 * pass waits, layer by layer, for the values that layer reads, so it begins while later layers'
 * values are still on their way.  A cut net's parts (which read views of the params) and params
 * added in turns wait for every value before the next step instead. */
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "runtime/runtime.h"
#include "layers/param_state.h"
#include "runtime/bridge.h"
#include "runtime/rejoin_sync.h"
#include "runtime/replica_update.h"
#include "runtime/reshare.h"
#include "singa/tensor.h"

static msg_addr self(const rt_worker *w)
{
    return (msg_addr){ENT_WORKER, (uint16_t)w->group, (uint16_t)w->id, (uint16_t)w->rt->rank};
}

static void send_update(rt_worker *w, int k)
{
    singa_param *p = w->params[k];
    msg m = {.type = MSG_UPDATE, .flags = MSG_F_PTR, .src = self(w),
             .dst = {ENT_STUB, (uint16_t)w->group, 0, (uint16_t)w->rt->rank}, .param = k, .step = w->step_sent,
             .count = 1 + (uint32_t)__builtin_popcountll(w->takes), .ptr = (uint64_t)(uintptr_t)p->grad.data};
    double t = rt_now(), sent;
    w->stale[k] = true;
    w->nstale++;
    rt_send(w->sock, &m, NULL, 0);
    sent = rt_now();
    w->sending += sent - t;
    singa_trace_span(w->trace, "send", p->name, t, sent);
    w->sent[k] = true;
}

static int param_index(const rt_worker *w, const singa_param *p)
{
    for (int k = 0; k < w->rt->nparams; k++)
        if (w->params[k] == p)
            return k;
    return -1;
}

static void grad_ready(void *ud, singa_param *p, size_t begin, size_t end)
{
    rt_worker *w = ud;
    int k = param_index(w, p);
    if (begin != 0 || end != p->data.size || k < 0 || w->sent[k] || w->takes) /* lost rows' passes add to it */
        return;
    send_update(w, k);
}

/* The workers add their gradients into the servers' history in turns (history.c). */
static void grad_turn(void *ud, singa_param *p, int part, bool begin)
{
    rt_worker *w = ud;
    int k = param_index(w, p);
    if (k >= 0 && begin)
        rt_history_begin(w->rt, k, part, w->id, w->step_sent, p);
    else if (k >= 0)
        rt_history_pass(w->rt, k, part, w->id);
}

/* Where a worker's gradients go: to the stub once final (the values then awaited per layer, or
 * all at once); into the history in turns too. */
static int want_values(void *ud, singa_param *p, singa_err *err);
static const singa_grad_sink to_stub_lazy = {.ready = grad_ready, .want = want_values};
static const singa_grad_sink wanted = {.want = want_values}; /* shared values: sent after the pass */
static const singa_grad_sink to_stub = {.ready = grad_ready};
static const singa_grad_sink to_history = {.ready = grad_ready, .turn = grad_turn};

/* Data parallelism: a group's leader reports the metrics of the group's batch, of which each
 * worker computed its rows, so the others send theirs of every step to it. */
static bool reports_to_leader(const rt_worker *w)
{
    return !w->rt->cut && w->rt->c->nworkers_per_group > 1;
}

/* The leader: another worker's metrics, of the step it collects now or of the next. */
static void take_metrics(rt_worker *w, const msg *m, zmq_msg_t *payload)
{
    singa_metrics got;
    bool now = w->collecting && m->step == w->step_sent && w->metrics_due > 0;
    /* A worker that may lead yet (takeover.c) keeps what it is sent: it exchanged its own of
     * step_sent already when the others, who knew of the loss first, sent theirs of the next. */
    bool next = w->exchanged ? m->step == w->step_sent + 1 : m->step == w->step_sent;
    if (!reports_to_leader(w) || (!now && !next) ||
        msg_metrics_decode(&got, zmq_msg_data(payload), zmq_msg_size(payload)) < 0) {
        singa_stats_drop(w->rt->stats);
        return;
    }
    uint64_t bit = m->src.id < 64 ? 1ULL << m->src.id : 0;
    if (now && (w->metrics_from & bit)) { /* sent again to a leader that took over (on_shrink) */
        singa_stats_drop(w->rt->stats);
        return;
    }
    if (now) {
        singa_job_merge_metrics(w->job, &got);
        w->metrics_due--;
        w->metrics_from |= bit;
    } else {
        singa_metrics_merge(&w->early, &got);
        w->nearly++;
        w->early_from |= bit;
    }
}

/* The workers of w's group whose process the group goes on without at `step` (membership.c,
 * rejoin_sync.c). */
static int workers_gone(const rt_worker *w, int step, uint64_t *ids)
{
    const rt_ctx *rt = w->rt;
    int n = 0;
    *ids = 0;
    for (int j = 0; j < rt->c->nworkers_per_group && j < 64; j++)
        if (j != w->id && rt_absent(rt, rt_worker_proc(rt, w->group, j), step)) {
            *ids |= 1ULL << j;
            n++;
        }
    return n;
}

/* This worker's metrics of `step` to its group's leader, wherever it is now. */
static void metrics_to_lead(rt_worker *w, int step)
{
    rt_ctx *rt = w->rt;
    uint8_t buf[MSG_METRICS_MAX];
    int lead = rt_lead_id(rt, w->group);
    w->metrics_to = rt_worker_proc(rt, w->group, lead);
    msg m = {.type = MSG_WORKER_METRICS, .flags = MSG_F_VALUES, .src = self(w),
             .dst = {ENT_WORKER, (uint16_t)w->group, (uint16_t)lead, (uint16_t)w->metrics_to}, .step = step};
    rt_send(w->sock, &m, buf, msg_metrics_encode(&singa_job_train_net(w->job)->metrics, buf));
}

/* The leader of a group that shrank waits no more for the metrics of the workers lost; a worker
 * whose metrics of this step went to a leader lost sends them to the one that took over. */
static int on_shrink(rt_worker *w, const msg *m, zmq_msg_t *payload, singa_err *err)
{
    uint64_t gone;
    workers_gone(w, w->step_sent, &gone);
    if (m->src.proc != w->rt->rank || !reports_to_leader(w))
        return 0;
    if (!rt_leads(w->rt, w->group, w->id) && w->exchanged && rt_shrunk(w->rt, w->metrics_to))
        metrics_to_lead(w, w->step_sent);
    if (!rt_leads(w->rt, w->group, w->id) || !w->collecting)
        return 0;
    w->metrics_due -= __builtin_popcountll(gone & ~w->metrics_from & ~w->counted_gone);
    w->counted_gone |= gone;
    if (w->metrics_due < 0)
        w->metrics_due = 0;
    return 0;
}

/* How a worker reacts to a message: 0 when it is taken here, 1 when it is for the code waiting
 * for it (wait_for, save_servers), -1 at a stop (the reason in err). */
typedef int worker_handler(rt_worker *w, const msg *m, zmq_msg_t *payload, singa_err *err);

static int on_stop(rt_worker *w, const msg *m, zmq_msg_t *payload, singa_err *err)
{
    w->stopped = true;
    return singa_err_set(err, "worker %d.%d stopped: %.*s", w->group, w->id, (int)zmq_msg_size(payload),
                         zmq_msg_size(payload) ? (const char *)zmq_msg_data(payload) : "another thread failed");
}

static int on_metrics(rt_worker *w, const msg *m, zmq_msg_t *payload, singa_err *err)
{
    take_metrics(w, m, payload);
    return 0;
}

static int on_floor(rt_worker *w, const msg *m, zmq_msg_t *payload, singa_err *err)
{
    w->floor = m->step > w->floor ? m->step : w->floor;
    return 0;
}

static int awaited(rt_worker *w, const msg *m, zmq_msg_t *payload, singa_err *err)
{
    return 1;
}

/* A param's answer, whatever the worker waits for then. */
static int on_fresh(rt_worker *w, const msg *m, zmq_msg_t *payload, singa_err *err)
{
    if (m->param < w->rt->nparams && w->stale[m->param]) {
        w->stale[m->param] = false;
        w->nstale--;
    }
    return 1;
}

/* The worker's protocol: what its stub sends it (any other type is ignored). */
static worker_handler *const on_message[MSG_NTYPES] = {
    [MSG_READY] = awaited,          /* the params are in place (start, a test, the end) */
    [MSG_UPDATE_REPLY] = on_fresh,  /* a param is fresh */
    [MSG_CKPT_REPLY] = awaited,     /* worker 0.0: a server's shard is written, or lost */
    [MSG_STOP] = on_stop,
    [MSG_GROUP_STEP] = on_floor,    /* cluster.staleness: every live group finished this step */
    [MSG_WORKER_METRICS] = on_metrics, /* the leader: another worker's rows of the batch */
    [MSG_SHRINK] = on_shrink,       /* the group goes on without a lost process */
    [MSG_WORKER_STATE] = rt_rejoin_sync_take_state, /* rejoined: rank 0's worker 0.0's state */
};

/* Receives one message for this worker: 0, or -1 at a stop (the reason in err) or a failure;
 * m->type is 0 unless the message is for the caller. */
static int receive(rt_worker *w, msg *m, zmq_msg_t *payload, singa_err *err)
{
    int rc = rt_recv(w->rt, w->sock, m, payload);
    if (rc < 0)
        return singa_err_set(err, "worker %d.%d: %s", w->group, w->id, zmq_strerror(zmq_errno()));
    worker_handler *h = rc == 0 ? on_message[m->type] : NULL;
    int taken = h ? h(w, m, payload, err) : 0;
    if (taken < 0)
        return -1;
    if (taken == 0)
        m->type = 0;
    return 0;
}

/* Waits for a message of `type` (counting it in *n when given) until *n reaches 0, and for the
 * metrics due; a stop ends the wait with the reason. */
static int wait_for(rt_worker *w, int type, int *n, singa_err *err)
{
    do {
        msg m;
        zmq_msg_t payload;
        int rc = receive(w, &m, &payload, err);
        if (rc == 0 && m.type == type && type)
            (*n)--;
        zmq_msg_close(&payload);
        if (rc < 0)
            return -1;
    } while (*n > 0 || w->metrics_due > 0);
    return 0;
}

/* Waits until at most `left` params are stale (param k fresh, when k >= 0) and the metrics due
 * are in: the time is the step's wait for values. */
static int collect(rt_worker *w, int k, int left, singa_err *err)
{
    double t0 = rt_now();
    int rc = 0;
    while (rc == 0 && ((k >= 0 && w->stale[k]) || w->nstale > left || w->metrics_due > 0)) {
        msg m;
        zmq_msg_t payload;
        rc = receive(w, &m, &payload, err);
        zmq_msg_close(&payload);
    }
    double t1 = rt_now();
    w->waited += t1 - t0;
    if (t1 - t0 > 1e-5)
        singa_trace_span(w->trace, "wait", "wait for values", t0, t1);
    return rc;
}

static int collect_all(rt_worker *w, singa_err *err)
{
    return collect(w, -1, 0, err);
}

/* The sink's want: param p's values of this step, before its layer's forward pass reads them. */
static int want_values(void *ud, singa_param *p, singa_err *err)
{
    rt_worker *w = ud;
    int k = param_index(w, p);
    return k >= 0 && w->stale[k] ? collect(w, k, w->nstale, err) : 0;
}

/* Before the gradients leave: the others send their metrics to the leader, which will wait for
 * those not in yet. */
static void exchange_metrics(rt_worker *w, int step)
{
    rt_ctx *rt = w->rt;
    if (!reports_to_leader(w))
        return;
    w->exchanged = true;
    if (!rt_leads(rt, w->group, w->id)) {
        metrics_to_lead(w, step);
        return;
    }
    singa_job_merge_metrics(w->job, &w->early);
    uint64_t gone;
    int lost = workers_gone(w, step, &gone);
    int early = lost ? __builtin_popcountll(w->early_from & ~gone) : w->nearly;
    w->metrics_due = rt->c->nworkers_per_group - 1 - lost - early;
    w->metrics_from = w->early_from;
    w->counted_gone = gone;
    w->early_from = 0;
    w->nearly = 0;
    singa_metrics_reset(&w->early);
    w->collecting = true;
}

/* After the backward pass: gradients of params that share their value (an unrolled layer's
 * copies) are averaged into the owner's and sent with the rest; then every param's answer, or,
 * per layer, only the first: the answers carry the step's flags (the group stops, a checkpoint
 * was asked for), which the next step's checks must see. */
static int after_backward(void *ud, int step, singa_err *err)
{
    rt_worker *w = ud;
    singa_params *ps = singa_job_params(w->job);
    if (w->takes && rt_reshare_run(w, err) < 0)
        return -1;
    /* Neither the sends during backward nor the waits during forward are compute. */
    double passes = rt_now() - w->step_began - w->sending - w->waited;
    exchange_metrics(w, step);
    for (int k = 0; k < w->rt->nparams; k++) {
        if (w->sent[k])
            continue;
        singa_param *p = w->params[k];
        if (w->rt->params[k].hist)
            rt_history_skip(w->rt, k, w->id);
        if (p->nsharers) {
            int n = 1;
            for (int i = 0; i < ps->n; i++) {
                singa_param *q = ps->items[i];
                if (q->owner == p && q->trained) {
                    singa_tensor_axpy(1.0f, &q->grad, &p->grad);
                    n++;
                }
            }
            singa_tensor_scale(&p->grad, 1.0f / (float)n);
        }
        send_update(w, k);
    }
    int rc = collect(w, -1, w->lazy && w->nstale ? w->nstale - 1 : 0, err);
    w->collecting = false;
    w->exchanged = false;
    char peer[32];
    snprintf(peer, sizeof peer, "worker %d.%d", w->group, w->id);
    singa_stats_count(w->rt->stats, msg_type_name(MSG_UPDATE_REPLY), peer, true, 0, 0, w->waited);
    singa_stats_step(w->rt->stats, w->group, w->id, passes, w->sending, w->waited);
    if (w->rt->cut) /* a pipeline's other stages here */
        singa_parts_count_stages(singa_job_train_net(w->job)->parts, w->group);
    w->waited = 0;
    memset(w->sent, 0, (size_t)w->rt->nparams * sizeof *w->sent);
    w->step_sent = step + 1;
    return rc;
}

/* The parts' messages to the group's part in another process (net/parts.h), through the stub:
 * the payload is data, then `more` (NULL: nothing), joined in one frame. */
static int bridge_send(rt_worker *w, int type, int to, int layer, int edge, long pass, const void *data,
                       size_t nbytes, const void *more, size_t nmore, singa_err *err)
{
    rt_ctx *rt = w->rt;
    msg m = {.type = (uint8_t)type, .flags = MSG_F_VALUES, .src = self(w),
             .dst = {ENT_WORKER, (uint16_t)w->group, (uint16_t)rt_sender_of(rt, w->group, to),
                     (uint16_t)rt_worker_proc(rt, w->group, to)},
             .layer = layer, .edge = edge, .step = (int32_t)pass};
    zmq_msg_t joined;
    int rc;
    if (!more) {
        rc = rt_send(w->sock, &m, data, nbytes);
    } else if ((rc = zmq_msg_init_size(&joined, nbytes + nmore)) == 0) {
        if (nbytes) /* a blob may be empty */
            memcpy(zmq_msg_data(&joined), data, nbytes);
        memcpy((char *)zmq_msg_data(&joined) + nbytes, more, nmore);
        m.frame = &joined;
        rc = rt_send(w->sock, &m, zmq_msg_data(&joined), nbytes + nmore);
        zmq_msg_close(&joined);
    }
    if (rc < 0)
        return singa_err_set(err, "worker %d.%d: cannot send a %s message: %s", w->group, w->id,
                             msg_type_name(type), zmq_strerror(zmq_errno()));
    return 0;
}

static int send_blob(void *ud, int to, int layer, int edge, long pass, const float *data, size_t n, const float *aux,
                     size_t naux, singa_err *err)
{
    return bridge_send(ud, edge < 0 ? MSG_BRIDGE : MSG_BRIDGE_GRAD, to, layer, edge < 0 ? 0 : edge, pass, data,
                       n * sizeof(float), naux ? aux : NULL, naux * sizeof(float), err);
}

static int send_metrics(void *ud, int to, long pass, const singa_metrics *metrics, singa_err *err)
{
    uint8_t buf[MSG_METRICS_MAX];
    return bridge_send(ud, MSG_BRIDGE_METRICS, to, 0, 0, pass, buf, msg_metrics_encode(metrics, buf), NULL, 0, err);
}

int rt_worker_link(rt_worker *w, singa_err *err)
{
    int n = w->rt->c->nworkers_per_group, *owner = malloc((size_t)n * sizeof *owner);
    if (!owner)
        return singa_err_set(err, "out of memory");
    for (int k = 0; k < n; k++)
        owner[k] = rt_worker_proc(w->rt, w->group, k);
    singa_parts_peers peers = {.ud = w, .owner = owner, .self = w->rt->rank, .send = send_blob,
                               .send_metrics = send_metrics};
    int rc = singa_parts_link(singa_job_train_net(w->job)->parts, &peers, err);
    free(owner);
    return rc;
}

/* A process computing part of group 0's cut net: its layers' times, for r.profile in worker
 * 0.0's process; sent before this process's DONE, so they arrive first. */
static void send_profile(rt_worker *w)
{
    const singa_net *net = singa_job_train_net(w->job);
    if (w->group != 0 || w->rt->rank == 0 || !net->parts || !net->profile || !w->rt->cut || rt_senders(w->rt, 0) < 2)
        return;
    size_t n = singa_parts_profile_get(net->parts, NULL);
    double *t = malloc(n * sizeof *t);
    singa_err err;
    if (!t || bridge_send(w, MSG_BRIDGE_PROFILE, 0, 0, 0, 0, t, singa_parts_profile_get(net->parts, t) * sizeof *t,
                          NULL, 0, &err) < 0)
        rt_log(w->rt, "worker %d.%d: r.profile in rank 0 will lack this process's layers: %s", w->group, w->id,
                 t ? err.msg : "out of memory");
    free(t);
}

/* ---- the exchange (train/train.h): what the job's loop asks of its worker ---- */

/* The leader says when its group finished a step (staleness.c), with INT_MAX when it ends. */
static void report_step(rt_worker *w, int step)
{
    msg m = {.type = MSG_GROUP_STEP, .src = self(w), .dst = {ENT_STUB, 0, 0, (uint16_t)w->rt->rank}, .step = step};
    if (w->rt->c->staleness >= 0 && w->id == 0)
        rt_send(w->sock, &m, NULL, 0);
}

/* Before step `step` (its forward pass too): with cluster.staleness = s, the group reports the
 * step before and waits until every live group finished step - s - 1; then the step's passes
 * begin (that wait is not the step's). */
static int before_backward(void *ud, int step, singa_err *err)
{
    rt_worker *w = ud;
    int s = w->rt->c->staleness;
    if (rt_rejoin_sync_step(w, step, err) < 0) /* a process rejoins the group (rejoin_sync.c) */
        return -1;
    if (s >= 0 && step > w->rt->resume_step)
        report_step(w, step - 1);
    while (s >= 0 && w->floor < step - s - 1) {
        msg m;
        zmq_msg_t payload;
        int rc = receive(w, &m, &payload, err);
        zmq_msg_close(&payload);
        if (rc < 0)
            return -1;
    }
    w->step_began = rt_now();
    w->sending = 0;
    rt_reshare_step(w, step);
    return 0;
}

/* The rates of the job's schedule, for its records: the servers apply them. */
static float lr(void *ud, int step) { return singa_updater_lr(((rt_worker *)ud)->rates, step); }

static void set_lr_scale(void *ud, float scale) { singa_updater_set_lr_scale(((rt_worker *)ud)->rates, scale); }

/* After its DONE, a worker of group 0 that may lead it yet waits for the job's end, the stub's
 * stop, or for the final values, which come to it once the coordinator was lost and it leads. */
static int wait_end(rt_worker *w, singa_err *err)
{
    for (;;) {
        msg m;
        zmq_msg_t payload;
        int rc = receive(w, &m, &payload, err);
        bool ended = rc < 0 && w->stopped && zmq_msg_size(&payload) == 0; /* the job ended well */
        zmq_msg_close(&payload);
        if (rc < 0)
            return ended ? 0 : -1;
        if (m.type == MSG_READY)
            return 0;
    }
}

/* Every worker says it is done; worker 0 of group 0 then waits for the newest values, which the
 * stub fetches once every worker is done. */
static int after_training(rt_worker *w, singa_err *err)
{
    int one = 1;
    send_profile(w);
    report_step(w, INT_MAX);
    msg m = {.type = MSG_DONE, .src = self(w), .dst = {ENT_STUB, 0, 0, (uint16_t)w->rt->rank}};
    rt_send(w->sock, &m, NULL, 0);
    if (w->group != 0)
        return 0;
    if (w->rt->holder && !rt_leads(w->rt, 0, w->id)) /* it may lead yet (takeover.c) */
        return wait_end(w, err);
    return rt_leads(w->rt, 0, w->id) ? wait_for(w, MSG_READY, &one, err) : 0;
}

/* Before a test during training: every value of the last step; and worker 0.0 of a cut group,
 * whose process gets back only the values of its part (stub_params.c), fetches the rest. */
static int before_eval(void *ud, singa_err *err)
{
    rt_worker *w = ud;
    int one = 1;
    if (collect_all(w, err) < 0)
        return -1;
    if (!(w->group == 0 && w->id == 0 && w->rt->cut && rt_senders(w->rt, 0) > 1))
        return 0;
    msg m = {.type = MSG_GET, .src = self(w), .dst = {ENT_STUB, 0, 0, (uint16_t)w->rt->rank}};
    rt_send(w->sock, &m, NULL, 0);
    return wait_for(w, MSG_READY, &one, err);
}

/* Worker 0.0: every server writes its shard of checkpoint `step`, wherever it lives; the values
 * it writes are those of `step` in a synchronous job (no update of `step` is applied before this
 * worker's gradients of it leave), a snapshot in an asynchronous one.  Rank 0's stub answers for
 * a server whose process was lost: one of server group 0, whose shards are the model, leaves
 * *complete false (an asynchronous job goes on without it), so the checkpoint can never be whole;
 * another group's are copies, which the checkpoint records it lacks (rt_ckpt_write's "lost"). */
static int save_servers(rt_worker *w, int step, bool *complete, singa_err *err)
{
    rt_ctx *rt = w->rt;
    int per = rt->c->nservers_per_group, n = rt->c->nserver_groups * per, left = n;
    bool *got = calloc((size_t)n, sizeof *got);
    if (!got)
        return singa_err_set(err, "out of memory");
    for (int i = 0; i < n; i++) {
        int g = i / per, j = i % per;
        int id = g == 0 ? rt_holder_id(rt, j) : j; /* a backup, once it holds the server's slices */
        msg m = {.type = MSG_CKPT, .src = self(w),
                 .dst = {ENT_SERVER, (uint16_t)g, (uint16_t)id, (uint16_t)rt_server_proc(rt, g, id)}, .step = step};
        rt_send(w->sock, &m, NULL, 0);
    }
    *complete = true;
    int rc = 0;
    while (left > 0 && rc == 0) {
        msg m;
        zmq_msg_t payload;
        rc = receive(w, &m, &payload, err);
        if (rc == 0 && m.type == MSG_CKPT_REPLY && m.step == step && m.server >= 0 && m.server < n && !got[m.server]) {
            got[m.server] = true;
            left--;
            if (m.lost && m.server / per == 0) { /* the model's shard: the others are copies */
                *complete = false;
                rt_log(rt, "checkpoint step %d: server %d.%d (rank %d) was lost before it wrote its shard", step,
                         m.server / per, m.server % per, rt_server_proc(rt, m.server / per, m.server % per));
            }
        }
        zmq_msg_close(&payload);
    }
    free(got);
    if (rc == 0)
        rt_ckpt_prune(rt);
    return rc;
}

/* The parts of a distributed checkpoint: this worker's own state (what a local checkpoint holds
 * but the params the servers hold), and the servers' shards, which the lead alone has written. */
enum { CKPT_STATE = 1, CKPT_SERVERS = 2 };

static int save_parts(rt_worker *w, int step, int parts, singa_err *err)
{
    singa_ckpt c;
    bool complete = true;
    char path[4096];
    snprintf(path, sizeof path, "%s/step%09d.*.ckpt", w->rt->ckpt_dir, step);
    if (parts & CKPT_STATE) {
        int rc = singa_job_ckpt_fill(w->job, &c, step, err);
        if (rc == 0)
            rc = rt_residuals_add(w->rt, w->group, w->id, &c, err);
        if (rc == 0)
            rc = rt_replica_add(w->rt, w->group, w->id, &c, err);
        if (rc == 0)
            rc = rt_ckpt_write(w->rt, &c, SINGA_CKPT_WORKER, w->group, w->id, err);
        singa_ckpt_free(&c, 0);
        if (rc < 0)
            return -1;
        singa_job_ckpt_written(w->job, step, path); /* every worker: whichever sees a bad loss names it */
    }
    if (!(parts & CKPT_SERVERS) || w->group != 0 || !rt_leads(w->rt, 0, w->id))
        return 0;
    if (save_servers(w, step, &complete, err) < 0)
        return -1;
    if (!complete) {
        singa_job_log(&w->hooks, "checkpoint %s is incomplete: a server's process was lost", path);
        return 0;
    }
    char lost[256];
    if (rt_ckpt_lacks(w->rt, lost, sizeof lost))
        singa_job_log(&w->hooks, "checkpoint written: %s (the servers' shards; every worker writes its own state); it "
                      "lacks %s: the params are whole, and a resume re-derives a lost group's state from another "
                      "group's", path, lost);
    else
        singa_job_log(&w->hooks, "checkpoint written: %s (the servers' shards; every worker writes its own state)", path);
    if (w->hooks.checkpoint)
        w->hooks.checkpoint(w->hooks.ud, step, path);
    return 0;
}

/* The host's checkpoint S that worker w still owes, before `step`: S itself, or, in a job of
 * several groups, any later step of a group that was past S when it heard (-1: none). */
static int host_ckpt_owed(const rt_worker *w, int step)
{
    int at = atomic_load(&w->rt->ckpt_step);
    if (at < 0 || w->ckpt_done == at)
        return -1;
    return step == at || (w->rt->c->nworker_groups > 1 && step > at) ? at : -1;
}

/* A late group writes its state of `step` into the host's checkpoint S (not S's own: a snapshot,
 * like the servers' shards), then checkpoint_freq's of `step` when that is due too. */
static int save(void *ud, int step, singa_err *err)
{
    rt_worker *w = ud;
    int at = host_ckpt_owed(w, step);
    if (collect_all(w, err) < 0) /* the stub's residuals of the step are final */
        return -1;
    if (at >= 0) {
        w->ckpt_done = at;
        if (at < step && w->id == 0)
            rt_log(w->rt, "worker group %d was at step %d when it heard of the checkpoint of step %d asked for: its "
                          "state there (data cursor, RNG) is that of step %d", w->group, step, at, step);
        if (save_parts(w, at, at < step ? CKPT_STATE : CKPT_STATE | CKPT_SERVERS, err) < 0)
            return -1;
        if (at == step || !singa_job_ckpt_fires(w->job, step))
            return 0;
    }
    return save_parts(w, step, CKPT_STATE | CKPT_SERVERS, err);
}

/* A worker's state is final before it says it is done, and the servers' once every worker's last
 * update is in. */
static int finish(void *ud, int step, singa_err *err)
{
    rt_worker *w = ud;
    if (collect_all(w, err) < 0)
        return -1;
    if (step >= 0 && save_parts(w, step, CKPT_STATE, err) < 0)
        return -1;
    if (after_training(w, err) < 0)
        return -1;
    return step >= 0 ? save_parts(w, step, CKPT_SERVERS, err) : 0;
}

/* Whether the group stops before `step`; the host's stop, seen here first, stops it after this
 * step (rt_stop_before). */
static bool stop(void *ud, int step, bool requested)
{
    rt_worker *w = ud;
    if (requested)
        rt_stop_before(w->rt, w->group, step + 1);
    return step >= atomic_load(&w->rt->stop_step[w->group]);
}

/* The host's checkpoint, at the start of the lead's next step: no worker of its group can have
 * begun it.  Groups are not in step with each other: every process hears of it through its stub,
 * and each group writes its state at that step, or at its next when it is past it already
 * (host_ckpt_owed). */
static int checkpoint_asked(void *ud, int step, singa_err *err)
{
    rt_worker *w = ud;
    rt_ckpt_at(w->rt, step + 1);
    if (w->rt->c->nworker_groups > 1 && w->rt->nprocs > 1) {
        msg m = {.type = MSG_CKPT, .src = self(w), .dst = {ENT_STUB, 0, 0, (uint16_t)w->rt->rank}, .step = step + 1};
        rt_send(w->sock, &m, NULL, 0);
    }
    return 0;
}

static bool checkpoint_due(void *ud, int step) { return host_ckpt_owed(ud, step) >= 0; }

/* A rejoined worker of a synchronous group trains from rank 0's worker 0.0's state, which may have
 * come already (rejoin_sync.c; it started from step 0, read no checkpoint). */
static int wait_state(rt_worker *w)
{
    int one = 1;
    if (!rt_rejoin_sync(w->rt) || singa_job_step(w->job) > 0)
        return 0;
    return wait_for(w, MSG_WORKER_STATE, &one, &w->err);
}

/* Stopped before its first step: a rejoined worker whose group stopped before the step it was to
 * rejoin at ends with the job, no failure (rt_rejoin_sync_missed). */
static void stopped_early(rt_worker *w)
{
    w->rc = -1;
    if (!rt_rejoin_sync(w->rt) || !w->stopped || rt_failed(w->rt))
        return;
    char line[160];
    snprintf(line, sizeof line, "the job ended before step %d, the step worker %d.%d was to rejoin at: it trained no "
             "step", atomic_load(&w->rt->grow_step), w->group, w->id);
    rt_log_line(w->rt, line, true, true);
}

/* The leader alone tests (takeover.c: another may lead after a loss). */
static bool evaluates(void *ud) { return rt_leads(((rt_worker *)ud)->rt, ((rt_worker *)ud)->group, ((rt_worker *)ud)->id); }

void *rt_worker_main(void *arg)
{
    rt_worker *w = arg;
    rt_ctx *rt = w->rt;
    int one = 1;
    if (!(w->sock = rt_connect(rt, ENT_WORKER, w->group, w->id, &w->err)))
        return NULL;
    char track[32];
    snprintf(track, sizeof track, "worker %d.%d", w->group, w->id);
    w->trace = singa_job_set_trace(w->job, rt->trace, track);
    singa_exchange x = {.ud = w, .before_backward = before_backward, .after_backward = after_backward, .lr = lr,
                        .set_lr_scale = set_lr_scale, .stop = stop, .checkpoint_asked = checkpoint_asked,
                        .checkpoint_due = checkpoint_due,
                        .before_eval = before_eval, .save = save,
                        .finish = finish, .evaluates = evaluates};
    w->step_sent = singa_job_step(w->job); /* the others' metrics of it may come before the READY */
    w->floor = -1; /* floors may come before the READY; resume_step is final only with it (a rejoin sets it) */
    w->ckpt_done = -1;
    if (wait_for(w, MSG_READY, &one, &w->err) == 0 && wait_state(w) == 0) {
        w->floor = w->floor > rt->resume_step - 1 ? w->floor : rt->resume_step - 1;
        w->lazy = !rt->cut;
        for (int k = 0; k < rt->nparams; k++)
            w->lazy &= !rt->params[k].hist;
        for (int k = 0; k < rt->nparams; k++) {
            const singa_grad_sink *sink = rt->params[k].hist ? &to_history : w->lazy ? &to_stub_lazy : &to_stub;
            if (w->params[k]->nsharers) /* its copies add up the gradient until the pass ends */
                sink = w->lazy ? &wanted : NULL;
            singa_param_set_sink(w->params[k], sink, w);
        }
        w->rc = singa_job_loop(w->job, &w->hooks, &x, &w->res, &w->err);
        for (int k = 0; k < rt->nparams; k++) /* the script's job outlives this worker */
            singa_param_set_sink(w->params[k], NULL, NULL);
        singa_job_set_trace(w->job, NULL, NULL);
        msg m = {.type = MSG_ABORT, .src = self(w), .dst = {ENT_STUB, 0, 0, (uint16_t)rt->rank}};
        if (w->rc < 0 && !w->stopped) { /* the stub stops everyone, then it is done */
            rt_send(w->sock, &m, w->err.msg, strlen(w->err.msg));
            wait_for(w, 0, &one, &(singa_err){{0}}); /* type 0 never comes: until the stub stops all */
        } else if (w->rc == 0 && w->group == 0 && rt_leads(rt, 0, w->id)) { /* with the result, which every process returns */
            uint8_t result[MSG_RESULT_MAX];
            m.type = MSG_FINISHED;
            rt_send(w->sock, &m, result, msg_result_encode(&w->res, result));
        }
    } else {
        stopped_early(w);
    }
    zmq_close(w->sock);
    return NULL;
}
