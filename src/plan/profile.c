/* The planner's profile: the job trained in this process, without its cluster, for a few steps
 * on its own data, every layer timed (the net's `profile`); the first step (allocations, the
 * data's first reads) is left out by subtracting what it had accumulated.  The layers' times are
 * wall-clock; when the job computes in this one thread (one BLAS thread), they are scaled by the
 * share of the timed steps the thread ran, so that other processes' load does not count.  The
 * step is the timed steps' median, not their mean: the steps after the first still warm up (at
 * batch / 2 LeNet's first three timed steps took 1.3-2x the later ones), which made the mean
 * 10-30% slower than a long run's steady step; nor their fastest, which a long run's mean step
 * does not reach (it predicted one process of the big MLP 1.34x what bench-net measured); the
 * layers keep their shares of it.  The feature cut is timed whole, among threads of this
 * process (singa_plan_profile_cut). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "layers/deferred.h"
#include "plan/conf_edit.h"
#include "plan/plan.h"
#include "train/train.h"
#include "singa/job.h"
#include "singa/net.h"
#include "singa/plan.h"

typedef struct watch {
    const singa_job *job;
    int seen;
    double t0, t1;           /* the clock after the first step and after the last */
    double cpu0, cpu1;       /* this thread's CPU time then */
    double *wall, *cpu;      /* each timed step's seconds, wall and this thread's CPU */
    int cap;                 /* room in wall and cpu */
    double *first;           /* each layer's seconds after the first step: fwd, bwd */
    long passes;
} watch;

static double now(clockid_t clock)
{
    struct timespec ts;
    clock_gettime(clock, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static void on_step(void *ud, const singa_record *r)
{
    (void)r;
    watch *w = ud;
    double t = now(CLOCK_MONOTONIC), cpu = now(CLOCK_THREAD_CPUTIME_ID);
    if (w->seen > 0 && w->seen <= w->cap)
        w->wall[w->seen - 1] = t - w->t1, w->cpu[w->seen - 1] = cpu - w->cpu1;
    w->t1 = t, w->cpu1 = cpu;
    if (w->seen++ != 0 || !w->first)
        return;
    const singa_net *net = singa_job_train_net(w->job);
    for (int i = 0; i < net->nlayers; i++) {
        w->first[2 * i] = net->layers[i]->forward_seconds;
        w->first[2 * i + 1] = net->layers[i]->backward_seconds;
    }
    w->passes = net->profiled_passes;
    w->t0 = w->t1, w->cpu0 = w->cpu1;
}

/* Each input layer's batchsize divided by `divide`; -1 with err when one does not divide. */
static int divide_batch(singa_conf *c, int divide, singa_err *err)
{
    singa_conf *layers = (singa_conf *)singa_conf_get(singa_conf_get(c, "neuralnet"), "layer");
    for (size_t k = 0; divide > 1 && layers && k < layers->n; k++) {
        const singa_conf *b = singa_conf_get(layers->items[k], "batchsize");
        if (!b)
            continue;
        if (b->kind != SINGA_CONF_NUM || (int)b->num % divide != 0)
            return singa_err_set(err, "cannot profile the net at 1/%d of its batch: layer '%s''s batchsize does not "
                                      "divide by %d", divide, singa_conf_str(layers->items[k], "name", "?"), divide);
        if (plan_conf_set(layers->items[k], "batchsize", singa_conf_new_num((int)b->num / divide)) < 0)
            return singa_err_set(err, "out of memory");
    }
    return 0;
}

/* The job to profile: no cluster, no tests, checkpoints or display, 1 + steps steps; NULL with err. */
static singa_conf *profile_conf(const singa_conf *conf, int steps, int divide, singa_err *err)
{
    static const char *const drop[] = {"cluster", "test_steps", "test_freq", "validate_steps", "validate_freq",
                                       "checkpoint_path", "checkpoint_freq", "checkpoint_after", "resume", "trace",
                                       "trace_steps", "disp_freq", "on_validation", "checkpoint_keep_best"};
    singa_conf *c = singa_conf_clone(conf);
    if (!c) {
        singa_err_set(err, "out of memory");
        return NULL;
    }
    for (size_t i = 0; i < sizeof drop / sizeof *drop; i++)
        plan_conf_del(c, drop[i]);
    int rc = plan_conf_set(c, "train_steps", singa_conf_new_num(1 + steps)) < 0 ||
                     plan_conf_set(c, "profile", singa_conf_new_bool(true)) < 0
                 ? singa_err_set(err, "out of memory")
                 : divide_batch(c, divide, err);
    if (rc < 0) {
        singa_conf_free(c);
        return NULL;
    }
    return c;
}

static double floats(const singa_tensor *t) { return (double)t->size; }

/* A layer's row: its times over the timed steps (times scale), its params (shared ones counted
 * once), its features. */
static void fill_layer(singa_plan_layer *pl, const singa_net *net, int i, const watch *w, int steps, double scale)
{
    const singa_layer *l = net->layers[i];
    snprintf(pl->name, sizeof pl->name, "%s", l->name);
    snprintf(pl->type, sizeof pl->type, "%s", l->type->name);
    pl->fwd = scale * (l->forward_seconds - w->first[2 * i]) / steps;
    pl->bwd = scale * (l->backward_seconds - w->first[2 * i + 1]) / steps;
    pl->out_floats = floats(&l->data);
    pl->defers = singa_layer_can_defer(l);
    pl->src = -1;
    for (int k = 0; l->nsrc > 0 && k < net->nlayers; k++)
        if (net->layers[k] == l->src[0])
            pl->src = k;
    for (int k = 0; k < l->nparams && (!l->unroll_first || l->unroll_first == l); k++) {
        const singa_param *p = l->params[k];
        if (p->owner)
            continue;
        pl->param_floats += floats(&p->data);
        pl->params++;
        if (p->data.ndim >= 2) {
            pl->matrix_floats += floats(&p->data);
            pl->factor_floats += p->data.shape[0] + floats(&p->data) / p->data.shape[0];
        }
    }
}

static int by_value(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* The median of v[0..n) (at most 64), 0 for none. */
static double median(const double *v, int n)
{
    double s[64];
    n = n < 64 ? n : 64;
    if (n <= 0)
        return 0;
    memcpy(s, v, (size_t)n * sizeof *s);
    qsort(s, (size_t)n, sizeof *s, by_value);
    return n % 2 ? s[n / 2] : (s[n / 2 - 1] + s[n / 2]) / 2;
}

static int collect(singa_plan_profile *p, const singa_job *job, const watch *w, bool one_thread, singa_err *err)
{
    const singa_net *net = singa_job_train_net(job);
    if (w->seen < 2 || net->profiled_passes <= w->passes)
        return singa_err_set(err, "the profile ran no timed step (the job stopped after %d)", w->seen);
    int timed = w->seen - 1;
    if (!(p->layers = calloc((size_t)net->nlayers, sizeof *p->layers)))
        return singa_err_set(err, "out of memory");
    p->nlayers = net->nlayers;
    p->batch = singa_net_batchsize(net);
    double layers = 0, wall = w->t1 - w->t0, scale = one_thread && wall > 0 ? (w->cpu1 - w->cpu0) / wall : 1;
    scale = scale > 0 && scale < 1 ? scale : 1;
    /* the median step, as this thread's CPU when it alone computes; the layers scaled to it */
    double typical = median(one_thread ? w->cpu : w->wall, timed < w->cap ? timed : w->cap), mean = scale * wall / timed;
    if (typical > 0 && mean > 0)
        scale *= typical / mean;
    for (int i = 0; i < net->nlayers; i++) {
        fill_layer(&p->layers[i], net, i, w, timed, scale);
        layers += p->layers[i].fwd + p->layers[i].bwd;
        p->whole_batch |= (net->layers[i]->type->flags & SINGA_LAYER_WHOLE_BATCH) != 0;
    }
    p->step = scale * wall / timed;
    p->update = fmax(0, p->step - layers);
    p->steps = timed;
    return 0;
}

int singa_plan_profile_run(singa_plan_profile *p, const singa_conf *conf, const singa_registry *reg, int steps,
                           int divide, singa_err *err)
{
    memset(p, 0, sizeof *p);
    const singa_conf *tob = singa_conf_get(conf, "train_one_batch");
    p->kbp = strcmp(singa_conf_str(tob, "alg", "kBP"), "kBP") == 0;
    singa_conf *c = profile_conf(conf, steps, divide, err);
    if (!c)
        return -1;
    singa_job *job = NULL;
    watch w = {0};
    singa_result res;
    singa_job_hooks hooks = {.ud = &w, .step = on_step};
    int rc = singa_job_create(&job, c, reg, err);
    if (rc == 0) {
        const singa_net *net = singa_job_train_net(job);
        w.job = job;
        w.cap = steps, w.wall = calloc((size_t)steps, sizeof *w.wall), w.cpu = calloc((size_t)steps, sizeof *w.cpu);
        if (!(w.first = calloc(2 * (size_t)net->nlayers, sizeof *w.first)) || !w.wall || !w.cpu)
            rc = singa_err_set(err, "out of memory");
    }
    if (rc == 0) { /* trained here alone, whatever the launcher started (singa_job_run would refuse) */
        singa_blas_set_threads(singa_job_blas_threads(job));
        rc = singa_job_train_local(job, &hooks, &res, err);
    }
    if (rc == 0)
        rc = collect(p, job, &w, singa_job_blas_threads(job) <= 1, err);
    free(w.first), free(w.wall), free(w.cpu);
    singa_job_free(job);
    singa_conf_free(c);
    return rc < 0 ? -1 : 0;
}

int singa_plan_profile_cut(double *step, const singa_conf *conf, const singa_registry *reg,
                           const singa_plan_config *cut, int steps, singa_err *err)
{
    *step = 0;
    singa_conf *c = profile_conf(conf, steps, 1, err);
    if (!c)
        return -1;
    singa_conf *net = (singa_conf *)singa_conf_get(c, "neuralnet");
    if (!net || plan_conf_set(c, "cluster", plan_cluster_conf(cut)) < 0 ||
        plan_conf_set(c, "profile", singa_conf_new_bool(false)) < 0 ||
        plan_conf_set(net, "partition_dim", singa_conf_new_num(1)) < 0) {
        singa_conf_free(c);
        return singa_err_set(err, net ? "out of memory" : "the job has no neuralnet");
    }
    singa_job *job = NULL;
    /* the step's wall clock only: the cut's workers are threads, so no one thread's CPU is it */
    watch w = {.cap = steps, .wall = calloc((size_t)steps, sizeof *w.wall), .cpu = calloc((size_t)steps, sizeof *w.cpu)};
    singa_job_hooks hooks = {.ud = &w, .step = on_step};
    singa_result res;
    int rc = !w.wall || !w.cpu ? singa_err_set(err, "out of memory") : singa_job_create(&job, c, reg, err);
    if (rc == 0) /* the row's own cluster, its processes as threads of this one */
        rc = singa_job_run_alone(job, &hooks, &res, err);
    if (rc == 0 && w.seen < 2)
        rc = singa_err_set(err, "the cut's profile ran no timed step (the job stopped after %d)", w.seen);
    if (rc == 0)
        *step = median(w.wall, w.seen - 1 < w.cap ? w.seen - 1 : w.cap);
    free(w.wall), free(w.cpu);
    singa_job_free(job);
    singa_conf_free(c);
    return rc < 0 ? -1 : 0;
}

void singa_plan_profile_free(singa_plan_profile *p)
{
    free(p->layers);
    memset(p, 0, sizeof *p);
}
