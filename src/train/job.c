/* The job: nets for each phase sharing one param store, the updater, and what the runtime and
 * the host ask of it.  Its fields are read in job_conf.c, its checkpoints in job_ckpt.c, its
 * steps run in loop.c against an exchange (train.h). */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>

#include "core/trace.h"
#include "net/parts.h"
#include "singa/stats.h"
#include "train/job_private.h"

/* The input layers of every net, whose data cursors checkpoints hold. */
static int collect_inputs(singa_job *job, singa_err *err)
{
    int nparts = singa_net_nlocations(job->train), nnets = nparts + 2, total = 0;
    singa_net **nets = calloc((size_t)nnets, sizeof *nets);
    if (!nets)
        return singa_err_set(err, "out of memory");
    for (int k = 0; k < nparts; k++) /* every worker's part of a net cut among them */
        nets[k] = singa_net_location(job->train, k);
    nets[nparts] = job->test_net;
    nets[nparts + 1] = job->val_net;
    for (int n = 0; n < nnets; n++)
        total += nets[n] ? nets[n]->nlayers : 0;
    job->inputs = calloc((size_t)total, sizeof *job->inputs);
    job->cursors = calloc((size_t)total, sizeof *job->cursors);
    if (!job->inputs || !job->cursors) {
        free(nets);
        return singa_err_set(err, "out of memory");
    }
    for (int n = 0; n < nnets; n++)
        for (int i = 0; nets[n] && i < nets[n]->nlayers; i++)
            if (nets[n]->layers[i]->type->get_cursor)
                job->inputs[job->ninputs++] = nets[n]->layers[i];
    free(nets);
    return 0;
}

int singa_job_create(singa_job **out, const singa_conf *conf, const singa_registry *reg,
                     singa_err *err)
{
    return singa_job_create_worker(out, conf, reg, 0, 0, err);
}

/* The job's nets: the training net (cut among the group's workers when partitioned), and the
 * test and validation nets when they run. */
static int create_nets(singa_job *job, const singa_registry *reg, singa_err *err)
{
    singa_rng_seed(&job->rng, job->seed, 0);
    job->params.defer_init = job->dist && job->cluster.shard_params;
    const singa_conf *nc = singa_conf_get(job->conf, "neuralnet");
    if (job->cut ? singa_graph_build(&job->graph, nc, SINGA_PHASE_TRAIN, job->cluster.nworkers_per_group, reg, err) < 0 ||
                       singa_net_create_pipeline(&job->train, &job->graph, job->micro_batches, reg, &job->params,
                                                 &job->rng, job->seed, &job->split, err) < 0
                 : singa_net_create(&job->train, nc, SINGA_PHASE_TRAIN, reg, &job->params, &job->rng, job->seed,
                                    &job->split, err) < 0)
        return -1;
    if (job->tob->check && job->tob->check(job->train, job->tob_conf, err) < 0)
        return -1;
    if (singa_net_batchsize(job->train) == 0)
        return singa_err_set(err, "neuralnet: the kTrain net has no input layer (such as kIDXData)");
    if (job->test.steps > 0 &&
        singa_net_create(&job->test_net, nc, SINGA_PHASE_TEST, reg, &job->params, &job->rng, job->seed, NULL, err) < 0)
        return -1;
    if (job->validate.steps > 0 &&
        singa_net_create(&job->val_net, nc, SINGA_PHASE_VALIDATION, reg, &job->params, &job->rng, job->seed, NULL, err) < 0)
        return -1;
    return 0;
}

/* The job's threads, for the layers' own loops of every net. */
static int share_pool(singa_job *job, singa_err *err)
{
    if (job->threads > 1 && !(job->pool = singa_pool_new(job->threads)))
        return singa_err_set(err, "cannot start %d threads", job->threads);
    job->train->pool = job->pool;
    for (int k = 0; k < singa_net_nlocations(job->train); k++) /* every worker's parts of a cut net */
        singa_net_location(job->train, k)->profile = singa_conf_bool(job->conf, "profile", false);
    if (job->test_net)
        job->test_net->pool = job->pool;
    if (job->val_net)
        job->val_net->pool = job->pool;
    return 0;
}

int singa_job_create_worker(singa_job **out, const singa_conf *conf, const singa_registry *reg, int group,
                            int id, singa_err *err)
{
    *out = NULL;
    singa_job *job = calloc(1, sizeof *job);
    if (!job || !(job->conf = singa_conf_clone(conf))) {
        free(job);
        return singa_err_set(err, "out of memory");
    }
    job->reg = reg;
    singa_params_init(&job->params);
    if (job_read_fields(job, err) < 0)
        goto fail;
    /* A net cut among the group's workers reads the group's batch, its parts their rows of it. */
    job->split = (singa_net_split){job->cut ? 0 : id, job->cut ? 1 : job->cluster.nworkers_per_group, group,
                                   job->cluster.nworker_groups};
    if (job->dist && !(job->stats = singa_stats_new(0))) {
        singa_err_set(err, "out of memory");
        goto fail;
    }
    bool may_lead = !group && job->dist && job->cluster.replicas > 1; /* its leader's process may be lost */
    if (group || id) { /* worker 0 of group 0 tests and validates; group leaders display */
        if (!may_lead)
            job->test.steps = job->validate.steps = 0;
        if (!job->dist) /* distributed, every worker checkpoints its own state */
            job->checkpoint.freq = 0;
        if (id && !may_lead)
            job->disp.freq = 0;
    }
    if (create_nets(job, reg, err) < 0 || share_pool(job, err) < 0)
        goto fail;
    /* Last, when every net has declared its params and who shares what is settled.  Distributed,
     * the servers update the params (and the runtime's workers give the learning rates). */
    if ((!job->dist && singa_updater_create(&job->upd, singa_conf_get(job->conf, "updater"), &job->params, err) < 0) ||
        collect_inputs(job, err) < 0)
        goto fail;
    *out = job;
    return 0;
fail:
    singa_job_free(job);
    return -1;
}

void singa_job_free(singa_job *job)
{
    if (!job)
        return;
    singa_net_free(job->train);
    singa_net_free(job->test_net);
    singa_net_free(job->val_net);
    singa_graph_free(&job->graph);
    singa_updater_free(job->upd);
    singa_pool_free(job->pool);
    singa_params_free(&job->params);
    singa_stats_free(job->stats);
    free(job->stale);
    free(job->inputs);
    free(job->cursors);
    singa_conf_free(job->conf);
    free(job);
}

const char *singa_job_name(const singa_job *job) { return job->name; }

const singa_conf *singa_job_conf(const singa_job *job) { return job->conf; }

const singa_net *singa_job_train_net(const singa_job *job) { return job->train; }

bool singa_job_cut(const singa_job *job) { return job->cut; }

int singa_job_draw_params(singa_job *job, int (*draw)(void *ud, singa_param *p, singa_rng *rng, singa_err *err),
                          void *ud, singa_err *err)
{
    for (int i = 0; i < job->params.n; i++) {
        singa_param *p = job->params.items[i];
        if (!p->owner && draw(ud, p, &job->rng, err) < 0)
            return singa_err_prefix(err, "param '%s' (layer '%s'): ", p->name, p->layer);
    }
    return 0;
}

void singa_job_merge_metrics(singa_job *job, const singa_metrics *m) { singa_metrics_merge(&job->train->metrics, m); }

void singa_job_count_progress(singa_job *job, atomic_uint *progress)
{
    singa_net *nets[] = {job->train, job->test_net, job->val_net};
    for (size_t i = 0; i < sizeof nets / sizeof *nets; i++)
        for (int k = 0; nets[i] && k < singa_net_nlocations(nets[i]); k++) /* a cut net: every location's */
            singa_net_location(nets[i], k)->progress = progress;
}

void singa_job_log(const singa_job_hooks *h, const char *fmt, ...)
{
    if (!h || !h->log)
        return;
    char line[SINGA_ERR_LEN + 128];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(line, sizeof line, fmt, ap);
    va_end(ap);
    h->log(h->ud, line);
}

void singa_job_control_init(singa_job_control *c)
{
    atomic_init(&c->pause, false);
    atomic_init(&c->checkpoint, false);
    atomic_init(&c->stop, false);
    atomic_init(&c->lr_scale, 1.0);
    atomic_init(&c->paused, false);
}

const singa_registry *singa_job_registry(const singa_job *job) { return job->reg; }
const singa_cluster *singa_job_cluster(const singa_job *job) { return &job->cluster; }
singa_params *singa_job_params(singa_job *job) { return &job->params; }
int singa_job_step(const singa_job *job) { return job->step; }
singa_stats *singa_job_stats(const singa_job *job) { return job->stats; }
bool singa_job_abandoned(const singa_job *job) { return atomic_load(&job->abandoned); }
void singa_job_abandon(singa_job *job) { atomic_store(&job->abandoned, true); }

singa_trace_buf *singa_job_set_trace(singa_job *job, singa_trace *t, const char *track)
{
    singa_trace_buf *b = singa_trace_thread(t, track);
    singa_parts *pp = job->train->parts;
    job->train->trace = b;
    bool lead = true; /* the first location here runs in the caller's thread */
    for (int k = 0; pp && k < job->cluster.nworkers_per_group; k++) {
        if (!singa_parts_here(pp, k))
            continue;
        char name[32];
        snprintf(name, sizeof name, "worker %d.%d", job->split.group, k);
        singa_parts_net(pp, k)->trace = lead ? b : singa_trace_thread(t, name);
        lead = false;
    }
    return b;
}

void singa_job_trace_step(singa_job *job, int s)
{
    singa_parts *pp = job->train->parts;
    singa_trace_step(job->train->trace, s);
    for (int k = 0; pp && k < job->cluster.nworkers_per_group; k++)
        if (singa_parts_here(pp, k))
            singa_trace_step(singa_parts_net(pp, k)->trace, s);
}
int singa_job_blas_threads(const singa_job *job) { return job->threads; }
