/* This process's part of a distributed job: it slices the params over the servers, makes a job
 * per local worker (each reading its part of the data), lets the workers of a group share one
 * copy of the values, and runs the stub, the servers and the workers as threads until every
 * worker is done or one thread fails.
 *
 * Memory is shared where SINGA shares it: workers of a group in one process train on one copy of
 * the values (they are synchronous, so nobody reads while a server writes), and a server whose
 * group serves exactly one worker group here updates that copy in place, so its messages carry
 * no values.  Everything else travels as copies. */
#include <errno.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>
#include <zmq.h>

#include "runtime/runtime.h"
#include "layers/param_state.h"
#include "runtime/bridge.h"
#include "runtime/place.h"
#include "runtime/replica_update.h"
#include "singa/net.h"
#include "singa/plugin.h"
#include "singa/tensor.h"

/* The most floats in one slice (2 MB).  A bigger piece of a param is cut into several, so that
 * between processes the transfer of one slice overlaps the update and the copies of the others:
 * a 16 MB param's round trip between 2 processes takes 25% less time so (BENCHMARKS.md). */
enum { SLICE_MAX = 512 * 1024 };

/* The params servers update, in the order every process finds them, and their slices: each
 * server's range of a param (place.h) cut into pieces of at most SLICE_MAX; not with PowerSGD
 * between processes, whose every slice sends a Q of the param's width (slices of 2 MB quadrupled
 * the big MLP's bytes a step). */
static int make_slices(rt_ctx *rt, singa_job *job, singa_err *err)
{
    singa_params *ps = singa_job_params(job);
    int nservers = rt->c->nservers_per_group;
    size_t total = 0;
    for (int i = 0; i < ps->n; i++) {
        singa_param *p = ps->items[i];
        if (p->trained && !p->owner && !p->state)
            total += p->data.size;
    }
    size_t (*ranges)[2] = malloc((size_t)nservers * sizeof *ranges);
    if (!ranges || !(rt->params = calloc((size_t)ps->n + 1, sizeof *rt->params)) ||
        !(rt->final_params = calloc((size_t)ps->n + 1, sizeof *rt->final_params)) ||
        !(rt->slices = calloc((size_t)(ps->n + 1) * (size_t)nservers + total / SLICE_MAX, sizeof *rt->slices))) {
        free(ranges);
        return singa_err_set(err, "out of memory");
    }
    for (int i = 0; i < ps->n; i++) {
        singa_param *p = ps->items[i];
        if (!p->trained || p->owner || p->state)
            continue;
        rt->final_params[rt->nparams] = p;
        rt->params[rt->nparams++] =
            (rt_param){p->name, p->layer, p->data.size, p->lr_scale, p->wd_scale, 0, 0, NULL};
    }
    rt_place *pl = NULL;
    if (rt->nparams == 0 || rt_place_new(&pl, rt, job, err) < 0) {
        free(ranges);
        return rt->nparams ? -1
                           : singa_err_set(err, "neuralnet: no layer has a trained param, so there is nothing to distribute");
    }
    bool whole = rt->c->compress.kind == SINGA_COMPRESS_POWERSGD && rt->nprocs > 1;
    size_t base = 0, most = whole ? total : SLICE_MAX;
    for (int k = 0; k < rt->nparams; k++) {
        rt_param *d = &rt->params[k];
        d->first_slice = rt->nslices;
        if (!rt_place_ranges(pl, rt, k, ranges))
            for (int j = 0; j < nservers; j++) { /* server j's range of all the params end to end */
                size_t lo = total * (size_t)j / (size_t)nservers, hi = total * (size_t)(j + 1) / (size_t)nservers;
                size_t a = lo > base ? lo : base, b = hi < base + d->size ? hi : base + d->size;
                ranges[j][0] = a < b ? a - base : 0;
                ranges[j][1] = a < b ? b - base : 0;
            }
        for (int j = 0; j < nservers; j++)
            for (size_t a = ranges[j][0]; a < ranges[j][1]; a += most) {
                size_t len = ranges[j][1] - a < most ? ranges[j][1] - a : most;
                rt->slices[rt->nslices++] = (rt_slice){k, a, len, j};
                d->nslices++;
            }
        base += d->size;
    }
    rt_place_log(pl, rt);
    rt_place_free(pl);
    free(ranges);
    rt_ckpt_topology(rt, total);
    return 0;
}

/* A worker's distributed params, by index, and its learning rates. */
static int worker_params(rt_ctx *rt, rt_worker *w, singa_err *err)
{
    singa_params *ps = singa_job_params(w->job);
    if (!(w->params = calloc((size_t)rt->nparams, sizeof *w->params)) ||
        !(w->sent = calloc((size_t)rt->nparams, sizeof *w->sent)) ||
        !(w->stale = calloc((size_t)rt->nparams, sizeof *w->stale)))
        return singa_err_set(err, "out of memory");
    if (singa_updater_create(&w->rates, singa_conf_get(rt->conf, "updater"), NULL, err) < 0)
        return -1;
    int k = 0;
    for (int i = 0; i < ps->n && k <= rt->nparams; i++) {
        singa_param *p = ps->items[i];
        if (!p->trained || p->owner || p->state)
            continue;
        if (k == rt->nparams || strcmp(p->name, rt->params[k].name) != 0 || p->data.size != rt->params[k].size)
            return singa_err_set(err, "worker %d.%d: its net's params differ from worker 0.0's", w->group, w->id);
        w->params[k++] = p;
    }
    return 0;
}

/* Workers of a group in this process train on the first one's values: each param's, and its
 * sharers' (an unrolled layer's copies view their owner's value, which is freed here). */
static int share_replicas(rt_ctx *rt, singa_err *err)
{
    int ngroups = rt->c->nworker_groups;
    if (!(rt->replica = calloc((size_t)ngroups, sizeof *rt->replica)))
        return singa_err_set(err, "out of memory");
    for (int i = 0; i < rt->nworkers; i++) {
        rt_worker *w = &rt->workers[i];
        if (!rt->replica[w->group]) {
            rt->replica[w->group] = w->params;
            continue;
        }
        singa_params *ps = singa_job_params(w->job);
        for (int k = 0; k < rt->nparams; k++) {
            singa_param *p = w->params[k], *r = rt->replica[w->group][k];
            singa_tensor_free(&p->data);
            p->data = r->data;
            p->data.owns = false;
            for (int j = 0; j < ps->n; j++)
                if (ps->items[j]->owner == p)
                    ps->items[j]->data = p->data;
        }
    }
    return 0;
}

/* A record of a group leader in another process, to rank 0's host through the stubs. */
static void send_record(rt_worker *w, const singa_record *r, bool step)
{
    uint8_t buf[MSG_RECORD_MAX];
    msg m = {.type = MSG_METRIC, .src = {ENT_WORKER, (uint16_t)w->group, (uint16_t)w->id, (uint16_t)w->rt->rank},
             .dst = {ENT_STUB, 0, 0, (uint16_t)rt_coordinator(w->rt)}, .of_step = step};
    rt_send(w->sock, &m, buf, msg_record_encode(r, buf));
}

/* Results go to every process's log, and to rank 0's host (from other processes as messages). */
static void record_lead(rt_worker *w, const singa_record *r)
{
    if (w->rt->log) {
        char line[512];
        int n = snprintf(line, sizeof line, "step %d %s, group %d:", r->step, singa_phase_name(r->phase), r->group);
        for (int i = 0; i < r->metrics->n && n < (int)sizeof line; i++)
            n += snprintf(line + n, sizeof line - (size_t)n, " %s %.6g", r->metrics->name[i],
                          r->metrics->sum[i] / (double)(r->metrics->count[i] ? r->metrics->count[i] : 1));
        rt_log_line(w->rt, line, false, false);
    }
    if (w->rt->rank != rt_coordinator(w->rt))
        send_record(w, r, false);
    else
        rt_record(w->rt, r, false);
}

static void hook_record(void *ud, const singa_record *r)
{
    rt_worker *w = ud;
    const singa_record *first;
    if (!rt_lead_record(w, r, &first)) /* a group that may shrink: any of its workers may lead it yet */
        return;
    if (first)
        record_lead(w, first);
    record_lead(w, r);
    rt_lead_recorded(w, r);
}

/* Every step of a group leader; from another process at most 20 a second, enough for a plot. */
static void hook_step(void *ud, const singa_record *r)
{
    rt_worker *w = ud;
    if (!rt_leads(w->rt, w->group, w->id))
        return;
    if (w->rt->rank == rt_coordinator(w->rt)) {
        rt_record(w->rt, r, true);
        return;
    }
    double t = rt_now();
    if (t - w->step_sent_at >= 0.05 || r->step + 1 == r->total_steps) {
        w->step_sent_at = t;
        send_record(w, r, true);
    }
}

static void hook_log(void *ud, const char *line) { rt_log_line(((rt_worker *)ud)->rt, line, true, false); }

static int add_workers(rt_ctx *rt, singa_job *lead, singa_err *err)
{
    const singa_cluster *c = rt->c;
    int total = c->nworker_groups * c->nworkers_per_group;
    if (!(rt->workers = calloc((size_t)total, sizeof *rt->workers)))
        return singa_err_set(err, "out of memory");
    for (int g = 0; g < c->nworker_groups; g++)
        for (int j = 0; j < c->nworkers_per_group; j++) {
            if (rt_worker_proc(rt, g, j) != rt->rank || !rt_sends(rt, g, j))
                continue;
            rt_worker *w = &rt->workers[rt->nworkers++];
            *w = (rt_worker){.rt = rt, .group = g, .id = j};
            w->hooks = (singa_job_hooks){.ud = w, .record = hook_record, .step = hook_step, .log = hook_log,
                                        .checkpoint = rt_hook_checkpoint, .control = rt->control};
            if (g == 0 && j == 0)
                w->job = lead;
            else if (singa_job_create_worker(&w->job, rt->conf, singa_job_registry(lead), g, j, err) < 0)
                return singa_err_prefix(err, "worker %d.%d: ", g, j);
            const singa_net *train = singa_job_train_net(w->job);
            if (train->parts && singa_parts_count_traffic(train->parts, rt->stats, err) < 0) /* what a cut net's bridges carry */
                return singa_err_prefix(err, "worker %d.%d: ", g, j);
            bool linked = rt->cut && rt_senders(rt, g) > 1;
            if (linked && rt_worker_link(w, err) < 0)
                return singa_err_prefix(err, "worker %d.%d: ", g, j);
            singa_job_count_progress(w->job, &rt->progress);
            rt_held_by h = {rt, linked ? train->parts : NULL};
            if (rt->c->shard_params && singa_job_draw_params(w->job, rt_draw_held, &h, err) < 0)
                return singa_err_prefix(err, "worker %d.%d: ", g, j);
            if ((rt->resumed && rt_load_worker_state(rt, w, err) < 0) || singa_job_begin(w->job, &w->hooks, err) < 0 ||
                worker_params(rt, w, err) < 0)
                return -1;
        }
    return 0;
}

static int add_servers(rt_ctx *rt, singa_err *err)
{
    const singa_cluster *c = rt->c;
    int total = c->nserver_groups * c->nservers_per_group * c->replicas; /* primaries, then backups */
    if (!(rt->servers = calloc((size_t)total, rt_server_size())))
        return singa_err_set(err, "out of memory");
    for (int g = 0; g < c->nserver_groups; g++)
        for (int j = 0; j < c->nservers_per_group * c->replicas; j++) {
            if (rt_server_proc(rt, g, j) != rt->rank)
                continue;
            rt_server *s = rt_server_at(rt, rt->nservers++);
            if (rt_server_create(rt, s, g, j, err) < 0 || (rt->resumed && rt_server_load(s, rt->resumed, err) < 0))
                return -1;
        }
    rt_resume_drop(rt); /* loaded */
    return 0;
}

static void free_rt(rt_ctx *rt, singa_job *lead)
{
    rt_history_free(rt);
    rt_residuals_free(rt);
    rt_replica_free(rt);
    for (int i = 0; i < rt->nworkers; i++) { /* borrowed values are views: any order will do */
        rt_worker *w = &rt->workers[i];
        if (w->job != lead)
            singa_job_free(w->job);
        free(w->params);
        free(w->sent);
        free(w->stale);
        singa_updater_free(w->rates);
    }
    for (int i = 0; i < rt->nservers; i++)
        rt_server_free(rt_server_at(rt, i));
    rt_stub_free(rt->stub);
    free(rt->workers);
    free(rt->servers);
    free(rt->replica);
    free(rt->params);
    free(rt->final_params);
    free(rt->slices);
    free(rt->stop_step);
    rt_resume_drop(rt);
    free(rt->stale);
    free(rt->stale_ino);
    free(rt->holder);
    pthread_mutex_destroy(&rt->lock);
}

/* Tells the stub that the runtime cannot go on (a thread could not start or connect), from a
 * socket of the calling thread's own. */
static void abort_from_here(rt_ctx *rt, const char *why)
{
    void *sock = zmq_socket(rt->zmq, ZMQ_DEALER);
    int linger = 1000;
    if (!sock)
        return;
    zmq_setsockopt(sock, ZMQ_LINGER, &linger, sizeof linger);
    if (zmq_connect(sock, rt->endpoint) == 0) {
        msg m = {.type = MSG_ABORT, .src = {ENT_STUB, 0, 0, (uint16_t)rt->rank}};
        msg_send(sock, NULL, &m, why, strlen(why));
    }
    zmq_close(sock);
}

void *rt_connect(rt_ctx *rt, int kind, int group, int id, singa_err *err)
{
    char name[32];
    int zero = 0;
    rt_identity(name, sizeof name, kind, group, id);
    void *sock = zmq_socket(rt->zmq, ZMQ_DEALER);
    if (!sock || zmq_setsockopt(sock, ZMQ_ROUTING_ID, name, strlen(name)) < 0 ||
        zmq_setsockopt(sock, ZMQ_LINGER, &zero, sizeof zero) < 0 || zmq_setsockopt(sock, ZMQ_SNDHWM, &zero, sizeof zero) < 0 ||
        zmq_setsockopt(sock, ZMQ_RCVHWM, &zero, sizeof zero) < 0 || zmq_connect(sock, rt->endpoint) < 0) {
        singa_err_set(err, "%s %d.%d: cannot connect to the stub: %s", kind == ENT_WORKER ? "worker" : "server", group,
                      id, zmq_strerror(zmq_errno()));
        if (sock)
            zmq_close(sock);
        rt_fail(rt, err);
        abort_from_here(rt, err->msg);
        return NULL;
    }
    msg hello = {.type = MSG_HELLO, .src = {(uint8_t)kind, (uint16_t)group, (uint16_t)id, (uint16_t)rt->rank},
                 .dst = {ENT_STUB, 0, 0, (uint16_t)rt->rank}};
    rt_send(sock, &hello, NULL, 0);
    return sock;
}

/* A worker's or server's thread: busy from its start to its end but while it waits. */
typedef struct busy_thread {
    rt_ctx *rt;
    void *(*main_fn)(void *);
    void *arg;
} busy_thread;

static void *run_busy(void *arg)
{
    busy_thread *b = arg;
    atomic_fetch_add(&b->rt->busy, 1);
    b->main_fn(b->arg);
    atomic_fetch_sub(&b->rt->busy, 1);
    return NULL;
}

/* Starts the stub, the servers and the workers, and waits for all of them. */
static int run_threads(rt_ctx *rt, singa_err *err)
{
    int n = 1 + rt->nservers + rt->nworkers, started = 0;
    pthread_t *t = calloc((size_t)n, sizeof *t);
    busy_thread *b = calloc((size_t)n, sizeof *b);
    if (!t || !b) {
        free(t);
        free(b);
        return singa_err_set(err, "out of memory");
    }
    for (int i = 0; i < n; i++) {
        if (i > 0)
            b[i] = (busy_thread){rt, i <= rt->nservers ? rt_server_main : rt_worker_main,
                                 i <= rt->nservers ? (void *)rt_server_at(rt, i - 1)
                                                   : (void *)&rt->workers[i - 1 - rt->nservers]};
        if (pthread_create(&t[i], NULL, i == 0 ? rt_stub_main : run_busy, i == 0 ? (void *)rt : (void *)&b[i]) != 0)
            break;
        started++;
    }
    if (started < n) {
        singa_err e;
        singa_err_set(&e, "cannot start thread %d of %d", started + 1, n);
        rt_fail(rt, &e);
        if (started > 0)
            abort_from_here(rt, e.msg);
    }
    for (int i = 0; i < started; i++)
        pthread_join(t[i], NULL);
    free(t);
    free(b);
    if (rt->failed) {
        *err = rt->err;
        return -1;
    }
    return 0;
}

/* An elastic job that lost a process: it may restart while enough processes are left and
 * restarts remain (`--procs` counts them; under another launcher its relaunches are the user's). */
static int lost_end(const rt_ctx *rt, singa_err *err)
{
    const singa_cluster *c = rt->c;
    int lost = 0;
    for (int r = 0; r < rt->nprocs; r++)
        lost += singa_stats_rank_lost(rt->stats, r);
    int left = rt->nprocs - (lost > 0 ? lost : 1);
    if (left < c->elastic_min) {
        singa_appendf(err->msg, sizeof err->msg, "; the job cannot restart: %d process%s would be left, fewer than "
                      "cluster.elastic.min = %d", left, left == 1 ? "" : "es", c->elastic_min);
        return -1;
    }
    if (rt->launch.restart >= c->max_restarts) {
        singa_appendf(err->msg, sizeof err->msg, "; the job cannot restart: its restarts are used up (%d of "
                      "cluster.elastic.max_restarts = %d)", rt->launch.restart, c->max_restarts);
        return -1;
    }
    singa_appendf(err->msg, sizeof err->msg, "; the job can restart from its newest checkpoint on the processes left "
                  "(elastic, exit status %d)", SINGA_EXIT_LOST);
    return SINGA_JOB_LOST;
}

/* How long rank 0 waits for the other ranks' traces at the end (they write them once stopped). */
enum { TRACE_WAIT = 10 };

/* The context's own state, once the launch is read: rank, steering, checkpoint settings, the
 * stop and checkpoint steps, the counters of the heartbeats. */
static int init_ctx(rt_ctx *rt, singa_job *job, singa_err *err)
{
    rt->rank = rt->launch.rank;
    rt->nprocs = rt->launch.size;
    rt->cut = singa_job_cut(job);
    singa_job_control_init(&rt->from_rank0);
    rt->control = rt->rank == 0 ? rt->hooks->control : &rt->from_rank0;
    rt->fingerprint = singa_conf_hash(rt->conf);
    if (singa_conf_strs_len(rt->conf, "checkpoint_path"))
        rt->ckpt_dir = singa_conf_strs_at(rt->conf, "checkpoint_path", 0);
    rt->ckpt_keep = singa_conf_int(rt->conf, "checkpoint_keep", 3);
    singa_registry_plugin_ids(singa_job_registry(job), rt->plugins, sizeof rt->plugins);
    singa_stats_set_rank(rt->stats, rt->rank);
    if (rt->trace && rt->rank == 0)
        singa_trace_clear_ranks(rt->trace, rt->nprocs); /* an earlier run's would be merged */
    pthread_mutex_init(&rt->lock, NULL);
    snprintf(rt->endpoint, sizeof rt->endpoint, "inproc://singa-stub-%p", (void *)rt);
    if (!(rt->stop_step = malloc((size_t)rt->c->nworker_groups * sizeof *rt->stop_step)))
        return singa_err_set(err, "out of memory");
    for (int g = 0; g < rt->c->nworker_groups; g++)
        atomic_init(&rt->stop_step[g], INT_MAX);
    atomic_init(&rt->ckpt_step, -1);
    rt->rejoined_at = -1;
    atomic_init(&rt->busy, 0);
    atomic_init(&rt->progress, 0);
    atomic_init(&rt->shrunk, 0);
    if (rt->c->replicas > 1 && !(rt->holder = calloc((size_t)rt->c->nservers_per_group, sizeof *rt->holder)))
        return singa_err_set(err, "out of memory"); /* zeros: every server held by its primary */
    return 0;
}

/* This process's part of the job: the log, the slices, the checkpoint resumed, the workers, the
 * servers and the stub, before any thread starts. */
static int build(rt_ctx *rt, singa_job *job, singa_err *err)
{
    if (rt_log_open(rt, err) < 0 || make_slices(rt, job, err) < 0 || rt_rejoin_check(rt, err) < 0 ||
        rt_ckpt_setup(rt, job, err) < 0 || add_workers(rt, job, err) < 0 || share_replicas(rt, err) < 0 ||
        rt_residuals_setup(rt, err) < 0 || rt_replica_setup(rt, err) < 0 || add_servers(rt, err) < 0 ||
        rt_history_setup(rt, err) < 0 || rt_stub_create(rt, err) < 0)
        return -1;
    rt_momentum_setup(rt);
    if (rt->history) { /* for the workspace's log only: it changes no result */
        char line[160];
        snprintf(line, sizeof line, "the workers add their gradients into the servers' momentum history: %d of %d params",
                 rt->history->nparams, rt->nparams);
        rt_log_line(rt, line, false, false);
    }
    for (int k = 0; rt->c->shard_params && rt->rank != 0 && k < rt->nparams; k++)
        singa_param_state_of(rt->final_params[k])->partial = true; /* the script's job here is no worker's: it was never drawn */
    return 0;
}

/* Runs the threads; then the result (rank 0's, handed to the others), the failure or an elastic
 * job's loss, and the trace. */
static int run(rt_ctx *rt, singa_result *res, singa_err *err)
{
    if (!(rt->zmq = zmq_ctx_new()))
        return singa_err_set(err, "cannot start ZeroMQ: %s", zmq_strerror(zmq_errno()));
    int rc = run_threads(rt, err);
    zmq_ctx_term(rt->zmq);
    struct rusage ru;
    char peak[64];
    if (getrusage(RUSAGE_SELF, &ru) == 0) { /* what a memory budget must allow this process */
        snprintf(peak, sizeof peak, "rank %d: peak resident memory %.1f MB", rt->rank, (double)ru.ru_maxrss / 1024.0);
        rt_log_line(rt, peak, false, false);
    }
    if (rc == 0) /* group 0's leader, which tests, is in the coordinator (rank 0 but after its loss) */
        *res = rt->rank == rt_coordinator(rt) ? rt_lead_result(rt) : rt->final;
    else if (rt->lost && rt->c->elastic_min)
        rc = lost_end(rt, err);
    if (rc < 0)
        rt_log_line(rt, err->msg, false, false);
    singa_err terr;
    if (rt->trace && singa_trace_write(rt->trace, rt->rank, rt->nprocs, rt->clock_offset, TRACE_WAIT, &terr) < 0)
        rt_log_line(rt, terr.msg, true, true);
    return rc;
}

int singa_runtime_run(singa_job *job, const singa_job_hooks *hooks, singa_trace *trace, bool alone, singa_result *res,
                      singa_err *err)
{
    static const singa_job_hooks none;
    rt_ctx rt = {.job = job, .c = singa_job_cluster(job), .conf = singa_job_conf(job), .hooks = hooks ? hooks : &none,
                  .stats = singa_job_stats(job), .trace = trace};
    if (rt_launch_read(&rt.launch, rt.c, alone, err) < 0)
        return -1;
    int rc = init_ctx(&rt, job, err) < 0 || build(&rt, job, err) < 0 ? -1 : run(&rt, res, err);
    if (rt.log)
        fclose(rt.log);
    free_rt(&rt, job);
    return rc;
}
