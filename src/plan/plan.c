/* The planner (singa/plan.h): the profile, the codecs and the link measured once, then the
 * candidates of a number of processes predicted and ranked, best images/s first. */
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "plan/conf_edit.h"
#include "plan/plan.h"

enum { PROFILE_STEPS = 10 };

static void free_rows(singa_plan *plan)
{
    for (int i = 0; i < plan->nrows; i++)
        free(plan->rows[i].lua);
    free(plan->rows);
    plan->rows = NULL;
    plan->nrows = 0;
}

static int by_speed(const void *a, const void *b)
{
    double x = ((const singa_plan_row *)a)->pred.images_per_sec, y = ((const singa_plan_row *)b)->pred.images_per_sec;
    return (x < y) - (x > y);
}

/* Predictions this close are a tie (singa_plan_order). */
static const double TIE = 0.03;

/* How far a row's compression moves the training from the exact sums: none, half widths, the
 * rest (top-k, int8 values, PowerSGD). */
static int lossiness(const singa_plan_config *c)
{
    switch (c->compress.kind) {
    case SINGA_COMPRESS_NONE: return 0;
    case SINGA_COMPRESS_FP16:
    case SINGA_COMPRESS_BF16: return 1;
    default: return 2;
    }
}

/* By speed, then a row moves up past each faster one it ties with and compresses less than. */
void singa_plan_order(singa_plan_row *rows, int n)
{
    qsort(rows, (size_t)n, sizeof *rows, by_speed);
    for (int i = 1; i < n; i++)
        for (int k = i; k > 0; k--) {
            singa_plan_row *up = &rows[k - 1], *r = &rows[k];
            if (lossiness(&r->cfg) >= lossiness(&up->cfg) ||
                r->pred.images_per_sec < (1 - TIE) * up->pred.images_per_sec)
                break;
            singa_plan_row t = *up;
            *up = *r;
            *r = t;
        }
}

/* The net profiled again at batch / divide into *at, and linked from the whole batch's profile
 * (*link); left out when it cannot run (the model then divides the whole batch's times). */
static void profile_share(singa_plan *plan, singa_plan_profile *at, const singa_plan_profile **link,
                          const singa_conf *conf, const singa_registry *reg, int divide)
{
    singa_err err;
    singa_plan_profile_free(at);
    *link = NULL;
    if (divide > 1 && plan->profile.batch % divide == 0 &&
        singa_plan_profile_run(at, conf, reg, PROFILE_STEPS, divide, &err) == 0 && at->nlayers == plan->profile.nlayers)
        *link = at;
}

/* The feature cut among n workers timed in this process into the profile, when this machine has
 * a core for each (left out otherwise, or when it cannot run: the model then divides the whole
 * net's times).  Its workers' layers wait on each other at every bridge, which no sum of the
 * layers' shares shows (LeNet's cut ran at 0.4-0.5 of such a prediction). */
static void time_cut(singa_plan *plan, const singa_conf *conf, const singa_registry *reg,
                     const singa_plan_config *cut)
{
    singa_err err;
    singa_plan_profile *p = &plan->profile;
    int n = cut->nprocs;
    if (p->cut_procs == n)
        return;
    p->cut = 0, p->cut_procs = 0;
    if (plan->time_cut && n <= sysconf(_SC_NPROCESSORS_ONLN) &&
        singa_plan_profile_cut(&p->cut, conf, reg, cut, PROFILE_STEPS, &err) == 0)
        p->cut_procs = n;
}

int singa_plan_rank(singa_plan *plan, const singa_conf *conf, const singa_registry *reg, int nprocs, singa_err *err)
{
    singa_plan_config cfg[PLAN_MAX_CANDIDATES];
    free_rows(plan);
    plan->nprocs = nprocs;
    size_t n = (size_t)plan_candidates(plan, conf, reg, nprocs, cfg);
    profile_share(plan, &plan->share, &plan->profile.share, conf, reg, n > 1 ? nprocs : 1);
    profile_share(plan, &plan->micro, &plan->profile.micro, conf, reg, 1);
    for (size_t i = 0; i < n; i++)
        if (cfg[i].scheme == SINGA_PLAN_PIPELINE)
            profile_share(plan, &plan->micro, &plan->profile.micro, conf, reg, cfg[i].micro_batches);
    for (size_t i = 0; i < n; i++)
        if (cfg[i].scheme == SINGA_PLAN_FEATURE)
            time_cut(plan, conf, reg, &cfg[i]);
    if (!(plan->rows = calloc(n, sizeof *plan->rows)))
        return singa_err_set(err, "out of memory");
    for (size_t i = 0; i < n; i++) {
        singa_plan_row *r = &plan->rows[plan->nrows++];
        r->cfg = cfg[i];
        singa_plan_predict(&plan->profile, &plan->link, &plan->codec, &cfg[i], &r->pred);
        if (!(r->lua = plan_lua(&plan->profile, &cfg[i])))
            return singa_err_set(err, "out of memory");
    }
    singa_plan_order(plan->rows, plan->nrows);
    return 0;
}

int singa_plan_make(singa_plan *plan, const singa_conf *conf, const singa_registry *reg, int nprocs,
                    const singa_plan_link *link, bool time_cut, singa_err *err)
{
    memset(plan, 0, sizeof *plan);
    plan->link = *link;
    plan->time_cut = time_cut;
    if (singa_plan_profile_run(&plan->profile, conf, reg, PROFILE_STEPS, 1, err) < 0)
        return -1;
    singa_plan_codec_measure(&plan->codec);
    singa_plan_machine_measure(&plan->profile.machine);
    if (link->cores > 0) /* the hosts planned for are not this machine */
        plan->profile.machine.cores = link->cores;
    return singa_plan_rank(plan, conf, reg, nprocs, err);
}

void singa_plan_free(singa_plan *plan)
{
    free_rows(plan);
    singa_plan_profile_free(&plan->profile);
    singa_plan_profile_free(&plan->share);
    singa_plan_profile_free(&plan->micro);
}

/* The user's cluster fields that are not the plan's to choose (workspace, coordinator, bind,
 * timeouts, curve ...) go on under the planned topology. */
static int keep_fields(singa_conf *planned, const singa_conf *own)
{
    static const char *const planned_fields[] = {"plan", "framework", "nworker_groups", "nworkers_per_group",
                                                 "nserver_groups", "nservers_per_group", "nworkers_per_procs",
                                                 "nservers_per_procs", "server_worker_separate", "sync_freq",
                                                 "compress", "outer"};
    for (size_t i = 0; own && own->kind == SINGA_CONF_TABLE && i < own->n; i++) {
        bool mine = false;
        for (size_t k = 0; k < sizeof planned_fields / sizeof *planned_fields; k++)
            mine |= strcmp(own->keys[i], planned_fields[k]) == 0;
        if (!mine && plan_conf_set(planned, own->keys[i], singa_conf_clone(own->items[i])) < 0)
            return -1;
    }
    return 0;
}

singa_conf *singa_plan_apply(const singa_plan *plan, const singa_plan_row *row, const singa_conf *conf)
{
    singa_conf *c = singa_conf_clone(conf), *cluster = plan_cluster_conf(&row->cfg);
    singa_conf *net = c ? (singa_conf *)singa_conf_get(c, "neuralnet") : NULL;
    if (!net || (row->cfg.scheme != SINGA_PLAN_ONE && (!cluster || keep_fields(cluster, singa_conf_get(conf, "cluster")) < 0)))
        goto fail;
    plan_conf_del(c, "cluster");
    if (cluster && plan_conf_set(c, "cluster", cluster) < 0) {
        cluster = NULL;
        goto fail;
    }
    cluster = NULL;
    if (row->cfg.scheme == SINGA_PLAN_FEATURE && plan_conf_set(net, "partition_dim", singa_conf_new_num(1)) < 0)
        goto fail;
    if (row->cfg.scheme == SINGA_PLAN_PIPELINE) {
        singa_conf *piped = plan_pipeline_net(&plan->profile, &row->cfg, net);
        if (!piped || plan_conf_set(c, "neuralnet", piped) < 0)
            goto fail;
    }
    return c;
fail:
    singa_conf_free(cluster);
    singa_conf_free(c);
    return NULL;
}
