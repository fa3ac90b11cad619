/* The job: nets for each phase sharing one param store, an updater, and SINGA's training loop.
 * An action with frequency f and offset a fires at step s when f > 0, s >= a and
 * (s - a) % f == 0; at a step, checkpointing comes first, then validation, test, training and
 * display, so a run resumed from step s repeats exactly what the uninterrupted run did. */
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "runtime/runtime.h"
#include "net/parts.h"
#include "singa/checkpoint.h"
#include "singa/job.h"
#include "singa/net.h"
#include "singa/partition.h"
#include "singa/stats.h"
#include "singa/tensor.h"
#include "singa/updater.h"
#include "train/train.h"
#include "train/tob.h"

const singa_field singa_job_fields[] = {
    {"name", SINGA_FIELD_STR},              {"seed", SINGA_FIELD_INT},
    {"neuralnet", SINGA_FIELD_TABLE},       {"updater", SINGA_FIELD_TABLE},
    {"cluster", SINGA_FIELD_TABLE},         {"train_one_batch", SINGA_FIELD_TABLE},
    {"train_steps", SINGA_FIELD_INT},       {"disp_freq", SINGA_FIELD_INT},
    {"disp_after", SINGA_FIELD_INT},        {"test_freq", SINGA_FIELD_INT},
    {"test_steps", SINGA_FIELD_INT},        {"test_after", SINGA_FIELD_INT},
    {"validate_freq", SINGA_FIELD_INT},     {"validate_steps", SINGA_FIELD_INT},
    {"validate_after", SINGA_FIELD_INT},    {"checkpoint_freq", SINGA_FIELD_INT},
    {"checkpoint_after", SINGA_FIELD_INT},  {"checkpoint_path", SINGA_FIELD_STRS},
    {"checkpoint_keep", SINGA_FIELD_INT},   {"resume", SINGA_FIELD_BOOL},
    {"num_openblas_threads", SINGA_FIELD_INT}, {"profile", SINGA_FIELD_BOOL},
    {"stop_on_nonfinite", SINGA_FIELD_BOOL},
    {"on_validation", SINGA_FIELD_FUNC},    {"checkpoint_keep_best", SINGA_FIELD_STR},
    {"plugins", SINGA_FIELD_STRS}, /* loaded by the host before the job (singa/plugin.h) */
    {NULL, 0},
};

static const singa_field tob_fields[] = {
    {"alg", SINGA_FIELD_STR}, {"cd_k", SINGA_FIELD_INT}, {NULL, 0},
};

/* The display window in a checkpoint: i64 metric count, i64 steps, then per metric slot a
 * 24-byte name, the sum (f64) and the count (i64), in host byte order. */
#define WINDOW_BYTES (16 + SINGA_METRICS_MAX * (SINGA_METRIC_NAME + 16))

typedef struct action {
    int freq, after, steps;
} action;

struct singa_job {
    singa_conf *conf;
    const singa_registry *reg;
    singa_cluster cluster;
    bool dist;           /* trains through the distributed runtime (src/dist) */
    bool cut;            /* the train net is cut among the workers of the group */
    singa_graph graph;   /* then its partitioned graph */
    singa_net_split split; /* which worker of which group this job's nets are */
    singa_stats *stats;    /* the runtime's traffic, when distributed */
    const char *name;
    uint64_t seed;
    int train_steps, threads, keep;
    action disp, test, validate, checkpoint;
    const char *ckpt_dir;
    size_t ninit; /* checkpoint_path entries after the first: where a fresh run's params come from */
    bool resume;
    bool stop_nonfinite; /* a loss that is not finite stops training (stop_on_nonfinite) */
    /* The two newest checkpoints written or resumed from ([0] newest) and their steps, for
     * naming the last good one when the loss stops being finite. */
    char ckpt_seen[2][4096];
    int ckpt_seen_step[2];
    /* Watching the results of one phase (validation, else test): on_validation and
     * checkpoint_keep_best, the best so far (best_step -1: none) and its checkpoint form. */
    singa_func *on_eval;
    singa_phase watch;
    const char *best_metric; /* "accuracy" (higher is better) or "loss", or NULL */
    int best_step;
    double best_value;
    uint8_t best_blob[16]; /* i64 step, f64 value */
    bool early;              /* on_validation said "stop" */
    singa_params params;
    singa_params no_params; /* what a distributed worker's updater (for its rates) sees */
    singa_rng rng;
    singa_net *train, *test_net, *val_net;
    singa_updater *upd;
    const singa_tob *tob; /* the TrainOneBatch algorithm */
    const singa_conf *tob_conf;
    singa_pool *pool;
    int step;
    /* Training metrics since the last display; checkpointed so a resumed run displays the same. */
    struct {
        singa_metrics metrics;
        int64_t steps;
    } window;
    uint8_t window_blob[WINDOW_BYTES]; /* its checkpoint form */
    /* The input layers of every net and their data cursors, as checkpoints hold them. */
    singa_layer **inputs;
    int64_t (*cursors)[SINGA_CURSOR_LEN];
    int ninputs;
    /* Checkpoints of an earlier run found at the start of a fresh one: removed once this run has
     * written its own, so a crash before that still leaves something to resume from. */
    uint64_t *stale;
    size_t nstale;
    /* Timing of the steps this process ran in the window: not checkpointed, runs differ in it. */
    double window_seconds;
    int window_timed;
};

static bool fires(const action *a, int step)
{
    return a->freq > 0 && step >= a->after && (step - a->after) % a->freq == 0;
}

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

/* Whether the net asks the workers of its group for more than the batch dimension (a net-wide
 * or a layer's partition_dim other than 0, or a layer's location).  Then the group's workers
 * compute one net cut among them (singa_net_create_parts); otherwise each trains a whole copy
 * on its rows of the batch, which is the same partitioning without bridges. */
static bool cut_among_workers(const singa_job *job)
{
    const singa_conf *nc = singa_conf_get(job->conf, "neuralnet"), *list = singa_conf_get(nc, "layer");
    if (job->cluster.nworkers_per_group < 2)
        return false;
    if (singa_conf_int(nc, "partition_dim", 0) != 0)
        return true;
    for (size_t i = 0; list && list->kind == SINGA_CONF_LIST && i < list->n; i++)
        if (singa_conf_get(list->items[i], "location") || singa_conf_int(list->items[i], "partition_dim", 0) != 0)
            return true;
    return false;
}

/* on_validation and checkpoint_keep_best watch the validation results, or the test results of a
 * job that does not validate, as they come during training. */
static int read_watch(singa_job *job, singa_err *err)
{
    static const char *const metrics[] = {"accuracy", "loss"};
    const singa_conf *c = job->conf;
    job->on_eval = singa_conf_func(c, "on_validation");
    job->best_metric = singa_conf_str(c, "checkpoint_keep_best", NULL);
    job->best_step = -1;
    if (!job->on_eval && !job->best_metric)
        return 0;
    const char *what = job->on_eval ? "on_validation" : "checkpoint_keep_best";
    if (job->best_metric && strcmp(job->best_metric, "accuracy") != 0 && strcmp(job->best_metric, "loss") != 0)
        return singa_err_unknown(err, "job: field 'checkpoint_keep_best'", "metric", job->best_metric, metrics, 2);
    if (job->best_metric && !job->ckpt_dir)
        return singa_err_set(err, "job: checkpoint_keep_best is set but checkpoint_path is not");
    if (job->dist)
        return singa_err_set(err, "job: %s: not for a job with a cluster (distributed) yet; it works in a plain job", what);
    if (job->validate.steps > 0 && job->validate.freq > 0)
        job->watch = SINGA_PHASE_VALIDATION;
    else if (job->test.steps > 0 && job->test.freq > 0)
        job->watch = SINGA_PHASE_TEST;
    else
        return singa_err_set(err, "job: %s watches the validation (or test) results during training, but the job has none: "
                                  "set validate_freq and validate_steps (or test_freq and test_steps)", what);
    return 0;
}

static int read_fields(singa_job *job, singa_err *err)
{
    const singa_conf *c = job->conf;
    const singa_field *const schemas[] = {singa_job_fields, NULL};
    if (singa_conf_check(c, schemas, "job", err) < 0 ||
        singa_cluster_read(&job->cluster, singa_conf_get(c, "cluster"), err) < 0)
        return -1;
    job->dist = singa_cluster_distributed(&job->cluster);
    job->cut = cut_among_workers(job);
    const singa_conf *tob = singa_conf_get(c, "train_one_batch");
    const singa_field *const ts[] = {tob_fields, NULL};
    if (tob && singa_conf_check(tob, ts, "train_one_batch", err) < 0)
        return -1;
    job->tob_conf = tob;
    if (!(job->tob = singa_tob_find(singa_conf_str(tob, "alg", "kBP"), err)))
        return -1;
    if (job->cut && job->tob != &singa_tob_bp)
        return singa_err_set(err, "train_one_batch: alg = %s: a net cut among the %d workers of a group (a partition_dim "
                                  "other than 0 or a location) trains by kBP or kBPTT, so far",
                             singa_conf_str(tob, "alg", "kBP"), job->cluster.nworkers_per_group);
    job->name = singa_conf_str(c, "name", "job");
    job->seed = (uint64_t)singa_conf_int(c, "seed", 0);
    job->train_steps = singa_conf_int(c, "train_steps", 0);
    job->threads = singa_conf_int(c, "num_openblas_threads", 1);
    job->disp = (action){singa_conf_int(c, "disp_freq", 0), singa_conf_int(c, "disp_after", 0), 0};
    job->test = (action){singa_conf_int(c, "test_freq", 0), singa_conf_int(c, "test_after", 0),
                         singa_conf_int(c, "test_steps", 0)};
    job->validate = (action){singa_conf_int(c, "validate_freq", 0), singa_conf_int(c, "validate_after", 0),
                             singa_conf_int(c, "validate_steps", 0)};
    job->checkpoint = (action){singa_conf_int(c, "checkpoint_freq", 0), singa_conf_int(c, "checkpoint_after", 0), 0};
    /* A string (this job's checkpoint directory) or a list: that directory, then checkpoints to
     * initialise params from (SINGA's checkpoint_path). */
    size_t nckpt = singa_conf_strs_len(c, "checkpoint_path");
    if (singa_conf_get(c, "checkpoint_path") && nckpt == 0)
        return singa_err_set(err, "job: field 'checkpoint_path' is an empty list (its first entry is this job's checkpoint directory)");
    for (size_t i = 0; i < nckpt; i++)
        if (!*singa_conf_strs_at(c, "checkpoint_path", i))
            return singa_err_set(err, "job: field 'checkpoint_path' must not be empty (entry %zu)", i + 1);
    job->ckpt_dir = nckpt ? singa_conf_strs_at(c, "checkpoint_path", 0) : NULL;
    job->ninit = nckpt ? nckpt - 1 : 0;
    job->keep = singa_conf_int(c, "checkpoint_keep", 3);
    job->resume = singa_conf_bool(c, "resume", false);
    job->stop_nonfinite = singa_conf_bool(c, "stop_on_nonfinite", true);
    if (job->train_steps <= 0)
        return singa_err_set(err, "job: field 'train_steps' must be a positive integer");
    if (job->threads < 1 || job->threads > 256)
        return singa_err_set(err, "job: field 'num_openblas_threads' must be in 1..256");
    if (job->disp.freq < 0 || job->test.freq < 0 || job->validate.freq < 0 || job->checkpoint.freq < 0 ||
        job->test.steps < 0 || job->validate.steps < 0)
        return singa_err_set(err, "job: frequencies and step counts must not be negative");
    if (job->checkpoint.freq > 0 && !job->ckpt_dir)
        return singa_err_set(err, "job: checkpoint_freq is set but checkpoint_path is not");
    if (job->resume && !job->ckpt_dir)
        return singa_err_set(err, "job: resume = true needs checkpoint_path");
    if (job->keep < 1)
        return singa_err_set(err, "job: field 'checkpoint_keep' must be at least 1");
    if (job->cluster.shard_params && (job->test.steps > 0 || job->validate.steps > 0))
        return singa_err_set(err, "cluster: shard_params: test_steps and validate_steps must be 0 (a test needs the whole "
                                  "model in worker 0.0, which a sharded job never gathers)");
    if (job->cluster.shard_params && job->ninit > 0)
        return singa_err_set(err, "cluster: shard_params: checkpoint_path lists checkpoints to initialise params from, "
                                  "which a sharded job does not read, so far");
    if (read_watch(job, err) < 0)
        return -1;
    if (!singa_conf_get(c, "neuralnet"))
        return singa_err_set(err, "job: field 'neuralnet' is required");
    if (!singa_conf_get(c, "updater"))
        return singa_err_set(err, "job: field 'updater' is required");
    return 0;
}

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
    singa_params_init(&job->no_params);
    if (read_fields(job, err) < 0)
        goto fail;
    /* A net cut among the group's workers reads the group's batch, its parts their rows of it. */
    job->split = (singa_net_split){job->cut ? 0 : id, job->cut ? 1 : job->cluster.nworkers_per_group, group,
                                   job->cluster.nworker_groups};
    if (job->dist && !(job->stats = singa_stats_new(0))) {
        singa_err_set(err, "out of memory");
        goto fail;
    }
    if (group || id) { /* worker 0 of group 0 tests and validates; group leaders display */
        job->test.steps = job->validate.steps = 0;
        if (!job->dist) /* distributed, every worker checkpoints its own state */
            job->checkpoint.freq = 0;
        if (id)
            job->disp.freq = 0;
    }
    singa_rng_seed(&job->rng, job->seed, 0);
    job->params.defer_init = job->dist && job->cluster.shard_params;
    const singa_conf *nc = singa_conf_get(job->conf, "neuralnet");
    if (job->cut ? singa_graph_build(&job->graph, nc, SINGA_PHASE_TRAIN, job->cluster.nworkers_per_group, reg, err) < 0 ||
                       singa_net_create_parts(&job->train, &job->graph, reg, &job->params, &job->rng, job->seed,
                                              &job->split, err) < 0
                 : singa_net_create(&job->train, nc, SINGA_PHASE_TRAIN, reg, &job->params, &job->rng, job->seed,
                                    &job->split, err) < 0)
        goto fail;
    if (job->tob->check && job->tob->check(job->train, job->tob_conf, err) < 0)
        goto fail;
    if (singa_net_batchsize(job->train) == 0) {
        singa_err_set(err, "neuralnet: the kTrain net has no input layer (such as kIDXData)");
        goto fail;
    }
    if (job->test.steps > 0 &&
        singa_net_create(&job->test_net, nc, SINGA_PHASE_TEST, reg, &job->params, &job->rng, job->seed, NULL, err) < 0)
        goto fail;
    if (job->validate.steps > 0 &&
        singa_net_create(&job->val_net, nc, SINGA_PHASE_VALIDATION, reg, &job->params, &job->rng, job->seed, NULL, err) < 0)
        goto fail;
    if (job->threads > 1 && !(job->pool = singa_pool_new(job->threads))) {
        singa_err_set(err, "cannot start %d threads", job->threads);
        goto fail;
    }
    job->train->pool = job->pool;
    for (int k = 0; k < singa_net_nlocations(job->train); k++) /* every worker's parts of a cut net */
        singa_net_location(job->train, k)->profile = singa_conf_bool(job->conf, "profile", false);
    if (job->test_net)
        job->test_net->pool = job->pool;
    if (job->val_net)
        job->val_net->pool = job->pool;
    /* Last, when every net has declared its params and who shares what is settled.  Distributed,
     * servers update the params: a worker's updater gives the learning rate only. */
    if (singa_updater_create(&job->upd, singa_conf_get(job->conf, "updater"),
                             job->dist ? &job->no_params : &job->params, err) < 0 ||
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
    singa_params_free(&job->no_params);
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

/* ---- checkpoints ---- */


/* Visits every entry a checkpoint of this job holds; `visit` returns -1 to stop.  A distributed
 * worker's holds no param the servers hold (trained, not a layer's state): their shards do. */
typedef int (*entry_fn)(void *ud, const char *name, int dtype, int ndim, const int *dims, void *data,
                        singa_err *err);

static int each_entry(singa_job *job, entry_fn visit, void *ud, singa_err *err)
{
    char name[512];
    for (int i = 0; i < job->params.n; i++) {
        singa_param *p = job->params.items[i];
        if (p->owner || (job->dist && p->trained && !p->state))
            continue;
        snprintf(name, sizeof name, "param/%s", p->name);
        if (visit(ud, name, SINGA_CKPT_F32, p->data.ndim, p->data.shape, p->data.data, err) < 0)
            return -1;
        for (int s = 0; s < singa_updater_nslots(job->upd); s++) {
            singa_tensor *t = singa_updater_slot(job->upd, p->id, s);
            if (!t)
                continue;
            snprintf(name, sizeof name, "updater/%s/%s", p->name, singa_updater_slot_name(job->upd, s));
            if (visit(ud, name, SINGA_CKPT_F32, t->ndim, t->shape, t->data, err) < 0)
                return -1;
        }
    }
    int four = 4, wsize = WINDOW_BYTES;
    if (visit(ud, "rng", SINGA_CKPT_U64, 1, &four, job->rng.s, err) < 0 ||
        visit(ud, "window", SINGA_CKPT_U8, 1, &wsize, job->window_blob, err) < 0)
        return -1;
    for (int k = 0; k < job->ninputs; k++) {
        singa_layer *l = job->inputs[k];
        snprintf(name, sizeof name, "cursor/%s/%s", singa_phase_name(l->net->phase), l->name);
        if (visit(ud, name, SINGA_CKPT_I64, 1, &four, job->cursors[k], err) < 0)
            return -1;
    }
    return 0;
}

static void window_pack(singa_job *job)
{
    uint8_t *b = job->window_blob;
    int64_t n = job->window.metrics.n;
    memset(b, 0, WINDOW_BYTES);
    memcpy(b, &n, 8);
    memcpy(b + 8, &job->window.steps, 8);
    for (int i = 0; i < SINGA_METRICS_MAX; i++) {
        uint8_t *m = b + 16 + (size_t)i * (SINGA_METRIC_NAME + 16);
        int64_t count = job->window.metrics.count[i];
        memcpy(m, job->window.metrics.name[i], SINGA_METRIC_NAME);
        memcpy(m + SINGA_METRIC_NAME, &job->window.metrics.sum[i], 8);
        memcpy(m + SINGA_METRIC_NAME + 8, &count, 8);
    }
}

static int window_unpack(singa_job *job, const uint8_t *b, const char *path, singa_err *err)
{
    int64_t n, steps;
    memcpy(&n, b, 8);
    memcpy(&steps, b + 8, 8);
    if (n < 0 || n > SINGA_METRICS_MAX || steps < 0)
        return singa_err_set(err, "checkpoint '%s': tensor 'window' holds impossible values", path);
    singa_metrics m = {.n = (int)n};
    for (int i = 0; i < SINGA_METRICS_MAX; i++) {
        const uint8_t *e = b + 16 + (size_t)i * (SINGA_METRIC_NAME + 16);
        int64_t count;
        memcpy(m.name[i], e, SINGA_METRIC_NAME);
        memcpy(&m.sum[i], e + SINGA_METRIC_NAME, 8);
        memcpy(&count, e + SINGA_METRIC_NAME + 8, 8);
        if (m.name[i][SINGA_METRIC_NAME - 1] != 0 || count < 0)
            return singa_err_set(err, "checkpoint '%s': tensor 'window' holds impossible values", path);
        m.count[i] = (long)count;
    }
    job->window.metrics = m;
    job->window.steps = steps;
    return 0;
}

static int add_entry(void *ud, const char *name, int dtype, int ndim, const int *dims, void *data,
                     singa_err *err)
{
    return singa_ckpt_add(ud, name, dtype, ndim, dims, data, err);
}

/* A checkpoint's contents at `step`, pointing at the job's memory. */
static int fill_checkpoint(singa_job *job, singa_ckpt *c, int step, singa_err *err)
{
    singa_ckpt_init(c, (uint64_t)step);
    window_pack(job);
    for (int k = 0; k < job->ninputs; k++)
        job->inputs[k]->type->get_cursor(job->inputs[k], job->cursors[k]);
    if (each_entry(job, add_entry, c, err) < 0)
        return -1;
    if (job->best_step < 0)
        return 0;
    int64_t bs = job->best_step;
    int sixteen = 16;
    memcpy(job->best_blob, &bs, 8);
    memcpy(job->best_blob + 8, &job->best_value, 8);
    return singa_ckpt_add(c, "best", SINGA_CKPT_U8, 1, &sixteen, job->best_blob, err);
}

/* ---- divergence: stop_on_nonfinite ---- */

static void note_checkpoint(singa_job *job, int step, const char *path)
{
    memcpy(job->ckpt_seen[1], job->ckpt_seen[0], sizeof job->ckpt_seen[0]);
    job->ckpt_seen_step[1] = job->ckpt_seen_step[0];
    snprintf(job->ckpt_seen[0], sizeof job->ckpt_seen[0], "%s", path);
    job->ckpt_seen_step[0] = step;
}

/* Names the first param whose value or gradient holds a NaN or an infinity, in `where`; returns
 * whether there is one.  A full sweep: run on the way out and before a checkpoint only. */
static bool find_nonfinite(const singa_job *job, char *where, size_t len)
{
    for (int i = 0; i < job->params.n; i++) {
        const singa_param *p = job->params.items[i];
        const singa_tensor *t[2] = {&p->data, &p->grad};
        for (int k = 0; k < 2; k++)
            for (size_t e = 0; t[k]->data && e < t[k]->size; e++)
                if (!isfinite(t[k]->data[e])) {
                    snprintf(where, len, "param '%s' (layer '%s') has a %s of %s at element %zu", p->name, p->layer,
                             k ? "gradient" : "value", isnan(t[k]->data[e]) ? "NaN" : t[k]->data[e] > 0 ? "+inf" : "-inf", e);
                    return true;
                }
    }
    return false;
}

/* The error of a run that diverged at step s, after `what`. */
static int nonfinite_error(const singa_job *job, int s, const char *what, const char *where, singa_err *err)
{
    /* A checkpoint of step s holds the values whose loss at s was not finite. */
    int k = job->ckpt_seen[0][0] && job->ckpt_seen_step[0] < s ? 0 : 1;
    return singa_err_set(err, "training step %d: %s; %s; the last good checkpoint is %s "
                              "(stop_on_nonfinite = false trains on regardless)",
                         s, what, where, job->ckpt_seen[k][0] ? job->ckpt_seen[k] : "none (this run has none yet)");
}

/* After training step s: a metric of the loss layers (the loss, accuracy...) that is not finite
 * stops the job.  Only those few numbers are looked at every step; a param that went bad shows in
 * the next step's loss, and the search for it runs once, on the way out. */
static int check_finite(singa_job *job, int s, singa_err *err)
{
    const singa_metrics *m = &job->train->metrics;
    for (int i = 0; i < m->n; i++)
        if (!isfinite(m->sum[i])) {
            char what[128], where[512] = "no param or gradient holds a non-finite value (the forward pass overflowed)";
            snprintf(what, sizeof what, "the %s is %s", m->name[i], isnan(m->sum[i]) ? "NaN" : m->sum[i] > 0 ? "+inf" : "-inf");
            find_nonfinite(job, where, sizeof where);
            return nonfinite_error(job, s, what, where, err);
        }
    return 0;
}

/* The parts of a distributed checkpoint: this worker's own state, the servers' shards. */
enum { CKPT_STATE = 1, CKPT_SERVERS = 2 };

static int save_dist(singa_job *job, int step, const singa_job_hooks *hooks, const singa_exchange *x, int parts,
                     singa_err *err)
{
    singa_ckpt c;
    bool complete = true;
    char path[4096];
    snprintf(path, sizeof path, "%s/step%09d.*.ckpt", job->ckpt_dir, step);
    if (parts & CKPT_STATE) {
        int rc = fill_checkpoint(job, &c, step, err);
        if (rc == 0)
            rc = x->save_state(x->ud, step, &c, err);
        singa_ckpt_free(&c, 0);
        if (rc < 0)
            return -1;
        note_checkpoint(job, step, path); /* every worker: whichever sees a bad loss names it */
    }
    if (!(parts & CKPT_SERVERS) || !x->save_servers)
        return 0;
    if (x->save_servers(x->ud, step, &complete, err) < 0)
        return -1;
    if (!complete) {
        singa_job_log(hooks, "checkpoint %s is incomplete: a server's process was lost", path);
        return 0;
    }
    singa_job_log(hooks, "checkpoint written: %s (the servers' shards; every worker writes its own state)", path);
    if (hooks && hooks->checkpoint)
        hooks->checkpoint(hooks->ud, step, path);
    return 0;
}

static int save_checkpoint(singa_job *job, int step, const singa_job_hooks *hooks, singa_err *err)
{
    singa_ckpt c;
    char path[4096];
    singa_ckpt_path(path, sizeof path, job->ckpt_dir, (uint64_t)step);
    char where[512];
    if (job->stop_nonfinite && find_nonfinite(job, where, sizeof where)) /* never a bad "last good" one */
        return nonfinite_error(job, step, "checkpoint not written", where, err);
    int rc = fill_checkpoint(job, &c, step, err);
    if (rc == 0)
        rc = singa_ckpt_write(&c, path, err);
    for (size_t i = 0; rc == 0 && i < job->nstale; i++) {
        char old[4096];
        singa_ckpt_path(old, sizeof old, job->ckpt_dir, job->stale[i]);
        if (job->stale[i] != (uint64_t)step && unlink(old) == 0)
            singa_job_log(hooks, "removed %s (an earlier run's)", old);
    }
    if (rc == 0) {
        free(job->stale);
        job->stale = NULL;
        job->nstale = 0;
        rc = singa_ckpt_dir_prune(job->ckpt_dir, job->keep, job->best_step, err);
    }
    singa_ckpt_free(&c, 0);
    if (rc == 0) {
        singa_job_log(hooks, "checkpoint written: %s", path);
        note_checkpoint(job, step, path);
    }
    if (rc == 0 && hooks && hooks->checkpoint)
        hooks->checkpoint(hooks->ud, step, path);
    return rc;
}

/* Resume checks every entry against the job before anything is copied, so a mismatched file
 * leaves the job untouched and an older checkpoint can be tried. */
typedef struct load_ctx {
    const singa_ckpt *ck;
    const char *path;
    bool apply;
    bool *seen; /* per entry of the file: the job has it */
} load_ctx;

/* The kTest or kValidation net whose data cursor `name` is, else NULL.  A job builds those nets
 * only with test_steps or validate_steps above 0, so a run that changed them finds that net's
 * cursors in the file and not in the job, or the other way round: neither is another net. */
static const char *eval_cursor_phase(const char *name)
{
    static const singa_phase eval[] = {SINGA_PHASE_TEST, SINGA_PHASE_VALIDATION};
    for (size_t i = 0; i < sizeof eval / sizeof *eval; i++) {
        const char *phase = singa_phase_name(eval[i]);
        size_t n = strlen(phase);
        if (strncmp(name, "cursor/", 7) == 0 && strncmp(name + 7, phase, n) == 0 && name[7 + n] == '/')
            return phase;
    }
    return NULL;
}

/* Whether the file holds cursors of the net of `phase` (it was written by a job that built it). */
static bool ckpt_has_net(const singa_ckpt *ck, const char *phase)
{
    for (size_t i = 0; i < ck->n; i++) {
        const char *p = eval_cursor_phase(ck->entries[i].name);
        if (p && strcmp(p, phase) == 0)
            return true;
    }
    return false;
}

static int load_entry(void *ud, const char *name, int dtype, int ndim, const int *dims, void *data,
                      singa_err *err)
{
    load_ctx *lc = ud;
    const singa_ckpt_entry *e = singa_ckpt_find(lc->ck, name);
    const char *phase = e ? NULL : eval_cursor_phase(name);
    if (phase && !ckpt_has_net(lc->ck, phase))
        return 0; /* that net starts from its first batch, as in a fresh run */
    if (!e)
        return singa_err_set(err, "checkpoint '%s': tensor '%s' is missing (the file belongs to another net or updater)", lc->path, name);
    bool same = e->dtype == dtype && e->ndim == ndim;
    for (int i = 0; same && i < ndim; i++)
        same = e->dims[i] == (uint32_t)dims[i];
    if (!same) {
        char a[64] = "", b[64] = "";
        for (int i = 0; i < e->ndim; i++)
            snprintf(a + strlen(a), sizeof a - strlen(a), i ? "x%u" : "%u", e->dims[i]);
        for (int i = 0; i < ndim; i++)
            snprintf(b + strlen(b), sizeof b - strlen(b), i ? "x%d" : "%d", dims[i]);
        return singa_err_set(err, "checkpoint '%s': tensor '%s' has shape %s in the file but %s in the job", lc->path, name, a, b);
    }
    lc->seen[e - lc->ck->entries] = true;
    if (lc->apply)
        memcpy(data, e->data, e->bytes);
    return 0;
}

/* Loads a checkpoint read from `path`: every entry of the job must be there with its shape, and
 * nothing else (but, in a distributed worker's file, what the runtime checked: the topology and
 * whose file it is). */
static int load_checkpoint(singa_job *job, const singa_ckpt *ck, const char *path, singa_err *err)
{
    load_ctx lc = {ck, path, false, calloc(ck->n + 1, sizeof(bool))};
    int rc = lc.seen ? each_entry(job, load_entry, &lc, err) : singa_err_set(err, "out of memory");
    for (size_t i = 0; rc == 0 && i < ck->n; i++) {
        const char *name = ck->entries[i].name, *phase = eval_cursor_phase(name);
        bool unbuilt = phase && !(strcmp(phase, singa_phase_name(SINGA_PHASE_TEST)) == 0 ? job->test_net : job->val_net);
        if (!lc.seen[i] && !unbuilt && strcmp(name, "best") != 0 &&
            !(job->dist && (strcmp(name, "topology") == 0 || strcmp(name, "worker") == 0)))
            rc = singa_err_set(err, "checkpoint '%s': tensor '%s' is not in the job (the file belongs to another net)",
                               path, name);
    }
    const singa_ckpt_entry *w = singa_ckpt_find(ck, "window"), *b = singa_ckpt_find(ck, "best");
    if (rc == 0 && w)
        rc = window_unpack(job, w->data, path, err); /* checked before anything is applied */
    int64_t best_step = -1;
    double best_value = 0;
    if (rc == 0 && b) { /* checkpoint_keep_best's best so far */
        if (b->bytes == 16) {
            memcpy(&best_step, b->data, 8);
            memcpy(&best_value, (const uint8_t *)b->data + 8, 8);
        }
        if (b->bytes != 16 || best_step < 0 || (uint64_t)best_step > ck->step)
            rc = singa_err_set(err, "checkpoint '%s': tensor 'best' holds impossible values", path);
    }
    if (rc == 0 && ck->step > (uint64_t)job->train_steps)
        rc = singa_err_set(err, "checkpoint '%s': step %llu is beyond train_steps %d", path,
                           (unsigned long long)ck->step, job->train_steps);
    if (rc == 0) {
        lc.apply = true;
        for (int k = 0; k < job->ninputs; k++) /* a cursor the file lacks stays where it is */
            job->inputs[k]->type->get_cursor(job->inputs[k], job->cursors[k]);
        each_entry(job, load_entry, &lc, err);
        for (int k = 0; k < job->ninputs && rc == 0; k++)
            rc = job->inputs[k]->type->set_cursor(job->inputs[k], job->cursors[k], err);
        job->step = (int)ck->step;
        if (job->best_metric && best_step >= 0) {
            job->best_step = (int)best_step;
            job->best_value = best_value;
        }
    }
    free(lc.seen);
    return rc;
}

static int try_resume(singa_job *job, const char *path, singa_err *err)
{
    singa_ckpt ck;
    if (singa_ckpt_read(&ck, path, err) < 0)
        return -1;
    int rc = load_checkpoint(job, &ck, path, err);
    singa_ckpt_free(&ck, 1);
    return rc;
}

int singa_job_load_state(singa_job *job, const singa_ckpt *ck, const char *path, singa_err *err)
{
    return load_checkpoint(job, ck, path, err);
}

/* A folder of a distributed job's checkpoints is none of a plain job's: resuming from it would
 * start over without a word.  Returns -1 (err set) when `dir` holds such files. */
static int refuse_dist_files(const char *dir, singa_err *err)
{
    struct stat st;
    singa_ckpt_file *files;
    size_t n;
    if (stat(dir, &st) < 0 || !S_ISDIR(st.st_mode) || singa_ckpt_dir_files(dir, &files, &n, err) < 0)
        return 0;
    int rc = 0;
    for (size_t i = 0; i < n && rc == 0; i++)
        if (files[i].kind != SINGA_CKPT_LOCAL) {
            char path[4096];
            singa_ckpt_part_path(path, sizeof path, dir, files[i].step, files[i].kind, files[i].group, files[i].id);
            rc = singa_err_set(err, "resume: '%s' holds checkpoints of a distributed job (%s); this job has one "
                                    "worker and one server and cannot resume from them", dir, path);
        }
    free(files);
    return rc;
}

/* What a search through checkpoints carries to its callbacks. */
typedef struct resume_ctx {
    singa_job *job;
    const singa_job_hooks *hooks;
    char file[4096]; /* the checkpoint accepted */
    singa_ckpt *ck;  /* init_from: where the accepted checkpoint is read to */
} resume_ctx;

static void log_refused(void *ud, const char *reason)
{
    singa_job_log(((resume_ctx *)ud)->hooks, "refused %s", reason);
}

static int resume_try(void *ud, const char *file, singa_err *err)
{
    resume_ctx *rc = ud;
    snprintf(rc->file, sizeof rc->file, "%s", file);
    return try_resume(rc->job, file, err);
}

static int resume(singa_job *job, const singa_job_hooks *hooks, singa_err *err)
{
    resume_ctx rc = {.job = job, .hooks = hooks};
    if (refuse_dist_files(job->ckpt_dir, err) < 0)
        return -1;
    switch (singa_ckpt_try_newest(job->ckpt_dir, resume_try, log_refused, &rc, err)) {
    case 0:
        singa_job_log(hooks, "resumed from %s (step %d)", rc.file, job->step);
        note_checkpoint(job, job->step, rc.file);
        return 0;
    case 1:
        singa_job_log(hooks, "resume: no checkpoint in '%s', starting from step 0", job->ckpt_dir);
        return 0;
    default:
        return singa_err_prefix(err, "resume: no checkpoint in '%s' verifies; newest: ", job->ckpt_dir);
    }
}

/* ---- params from earlier jobs: checkpoint_path's entries after the first ---- */

static int read_try(void *ud, const char *file, singa_err *err)
{
    resume_ctx *rc = ud;
    snprintf(rc->file, sizeof rc->file, "%s", file);
    return singa_ckpt_read(rc->ck, file, err);
}

/* Reads the checkpoint `path` names: that file, or a directory's newest checkpoint that
 * verifies.  `file` receives the file's name. */
static int read_init(singa_ckpt *ck, const char *path, char *file, size_t len, const singa_job_hooks *hooks,
                     singa_err *err)
{
    resume_ctx rc = {.hooks = hooks, .ck = ck};
    switch (singa_ckpt_try_newest(path, read_try, log_refused, &rc, err)) {
    case 0:
        snprintf(file, len, "%s", rc.file);
        return 0;
    case 1:
        return singa_err_prefix(err, "job: checkpoint_path: cannot initialise params from ");
    default:
        return singa_err_prefix(err, "job: checkpoint_path: ");
    }
}

/* A fresh run's params from earlier jobs' checkpoints, matched by name; later entries win.
 * Params that share another's value (share_from) take it from their owner. */
static int init_params(singa_job *job, const singa_job_hooks *hooks, singa_err *err)
{
    bool *loaded = calloc((size_t)job->params.n + 1, sizeof *loaded);
    if (!loaded)
        return singa_err_set(err, "out of memory");
    int rc = 0;
    for (size_t k = 1; k <= job->ninit && rc == 0; k++) {
        const char *path = singa_conf_strs_at(job->conf, "checkpoint_path", k);
        char file[4096], names[512] = "";
        singa_ckpt ck;
        int count = 0;
        if ((rc = read_init(&ck, path, file, sizeof file, hooks, err)) < 0)
            break;
        for (size_t i = 0; i < ck.n && rc == 0; i++) {
            const singa_ckpt_entry *e = &ck.entries[i];
            singa_param *p = strncmp(e->name, "param/", 6) == 0 ? singa_params_find(&job->params, e->name + 6) : NULL;
            if (!p || p->owner)
                continue;
            bool same = e->dtype == SINGA_CKPT_F32 && e->ndim == p->data.ndim;
            for (int d = 0; same && d < e->ndim; d++)
                same = e->dims[d] == (uint32_t)p->data.shape[d];
            if (!same) {
                char a[64] = "", b[64];
                for (int d = 0; d < e->ndim; d++)
                    singa_appendf(a, sizeof a, d ? "x%u" : "%u", e->dims[d]);
                rc = singa_err_set(err, "job: checkpoint_path: param '%s' has shape %s in '%s' but %s in this job (layer '%s')",
                                   p->name, e->dtype == SINGA_CKPT_F32 ? a : "(not float32)", file,
                                   singa_tensor_shape_str(&p->data, b, sizeof b), p->layer);
                break;
            }
            memcpy(p->data.data, e->data, e->bytes);
            loaded[p->id] = true;
            singa_appendf(names, sizeof names, "%s%s", count++ ? ", " : "", p->name);
        }
        if (rc == 0 && count)
            singa_job_log(hooks, "checkpoint_path: %d param%s from %s (step %llu): %s", count,
                          count == 1 ? "" : "s", file, (unsigned long long)ck.step, names);
        else if (rc == 0)
            singa_job_log(hooks, "checkpoint_path: no param of this job is in %s", file);
        singa_ckpt_free(&ck, 1);
    }
    if (rc == 0) {
        char names[512] = "";
        int count = 0;
        for (int i = 0; i < job->params.n; i++)
            if (!loaded[i] && !job->params.items[i]->owner)
                singa_appendf(names, sizeof names, "%s%s", count++ ? ", " : "", job->params.items[i]->name);
        if (count)
            singa_job_log(hooks, "checkpoint_path: params that keep their init (%d): %s", count, names);
    }
    free(loaded);
    return rc;
}

/* ---- steering by the host: singa_job_control (the workbench's keys and console) ----
 * Kept apart from the loop, which calls steer() once before every step. */

void singa_job_control_init(singa_job_control *c)
{
    atomic_init(&c->pause, false);
    atomic_init(&c->checkpoint, false);
    atomic_init(&c->stop, false);
    atomic_init(&c->lr_scale, 1.0);
    atomic_init(&c->paused, false);
}

/* Acts on the host's requests before step s: a checkpoint now (distributed, *ckpt: the exchange
 * picks the step), holding while paused (polling: a pause is rare and 10 ms of latency is
 * nothing), the lr scale.  Returns 1 when the host asked training to stop, 0 to go on, -1 when a
 * checkpoint fails. */
static int steer(singa_job *job, const singa_job_hooks *hooks, int s, bool *ckpt, singa_err *err)
{
    singa_job_control *c = hooks ? hooks->control : NULL;
    if (!c)
        return 0;
    /* Distributed, the lead takes the request: the others leave it alone. */
    bool lead = !job->dist || (job->split.group == 0 && job->split.index == 0);
    for (bool held = false;;) {
        if (lead && atomic_exchange(&c->checkpoint, false)) {
            if (!job->ckpt_dir)
                singa_job_log(hooks, "checkpoint requested, but the job has no checkpoint_path");
            else if (job->dist)
                *ckpt = true;
            else if (save_checkpoint(job, s, hooks, err) < 0)
                return -1;
        }
        if (atomic_load(&c->stop)) {
            atomic_store(&c->paused, false);
            return 1;
        }
        if (!atomic_load(&c->pause)) {
            if (held) {
                atomic_store(&c->paused, false);
                singa_job_log(hooks, "resumed at step %d", s);
            }
            break;
        }
        if (!held) {
            held = true;
            atomic_store(&c->paused, true);
            singa_job_log(hooks, "paused before step %d", s);
        }
        nanosleep(&(struct timespec){.tv_nsec = 10000000}, NULL);
    }
    singa_updater_set_lr_scale(job->upd, (float)atomic_load(&c->lr_scale));
    return 0;
}

/* ---- the loop ---- */

static int evaluate(singa_job *job, singa_net *net, int nsteps, int step, double t0,
                    const singa_job_hooks *hooks, singa_metrics *into, singa_err *err)
{
    singa_metrics_reset(into);
    for (int k = 0; k < nsteps; k++) {
        if (singa_net_forward(net, err) < 0)
            return -1;
        singa_metrics_merge(into, &net->metrics);
    }
    if (hooks && hooks->record) {
        singa_record r = {.step = step, .phase = net->phase, .metrics = into,
                          .lr = singa_updater_lr(job->upd, step), .elapsed = now() - t0};
        hooks->record(hooks->ud, &r);
    }
    return 0;
}

/* After an evaluation of the watched phase at step s, with its results m: a better result than
 * any before is checkpointed (checkpoint_keep_best; written after the evaluation, so the file of
 * step s holds it), then on_validation decides whether training goes on. */
static int watch(singa_job *job, int s, const singa_job_hooks *hooks, const singa_metrics *m, singa_err *err)
{
    const char *phase = job->watch == SINGA_PHASE_VALIDATION ? "validation" : "test";
    if (job->best_metric) {
        double v = singa_metrics_avg(m, job->best_metric, NAN);
        if (isnan(v) && singa_metrics_avg(m, job->best_metric, 0) == 0)
            return singa_err_set(err, "checkpoint_keep_best = \"%s\": the %s net reports no %s (no loss layer such as kSoftmaxLoss)",
                                 job->best_metric, phase, job->best_metric);
        bool higher = strcmp(job->best_metric, "accuracy") == 0;
        if (job->best_step < 0 || (higher ? v > job->best_value : v < job->best_value)) {
            job->best_step = s;
            job->best_value = v;
            char path[4096];
            singa_ckpt_path(path, sizeof path, job->ckpt_dir, (uint64_t)s);
            if (save_checkpoint(job, s, hooks, err) < 0)
                return -1;
            singa_job_log(hooks, "best so far: %s (step %d, %s %s %.4f)", path, s, phase, job->best_metric, v);
        }
    }
    if (!job->on_eval)
        return 0;
    singa_value fields[2 + SINGA_METRICS_MAX];
    const char *names[2 + SINGA_METRICS_MAX] = {"step", "phase"};
    fields[0] = (singa_value){.kind = SINGA_VALUE_INT, .num = s};
    fields[1] = (singa_value){.kind = SINGA_VALUE_STR, .str = phase};
    int n = 2;
    for (int i = 0; i < m->n; i++) {
        names[n] = m->name[i];
        fields[n++] = (singa_value){.kind = SINGA_VALUE_NUM, .num = singa_metrics_avg(m, m->name[i], 0)};
    }
    singa_value r = {.kind = SINGA_VALUE_FIELDS, .n = n, .fields = fields, .names = names};
    char word[64];
    if (!job->on_eval->call_text)
        return singa_err_set(err, "on_validation: this host cannot call it");
    if (job->on_eval->call_text(job->on_eval, &r, 1, word, sizeof word, err) < 0)
        return singa_err_prefix(err, "on_validation at step %d: ", s);
    if (strcmp(word, "stop") == 0) {
        job->early = true;
        singa_job_log(hooks, "on_validation stopped training at step %d", s);
    } else if (word[0]) {
        return singa_err_set(err, "on_validation at step %d returned \"%s\": return \"stop\" to end training, or nothing to go on",
                             s, word);
    }
    return 0;
}

int singa_job_begin(singa_job *job, const singa_job_hooks *hooks, singa_err *err)
{
    /* Find an unusable checkpoint_path now, not after hours of training. */
    if (job->ckpt_dir && singa_mkdirs(job->ckpt_dir, err) < 0)
        return singa_err_prefix(err, "job: checkpoint_path: ");
    if (job->resume && !job->dist && resume(job, hooks, err) < 0)
        return -1;
    if (job->ninit && job->step == 0 && init_params(job, hooks, err) < 0) /* a fresh start */
        return -1;
    if (job->ckpt_dir && !job->resume && !job->dist) {
        if (singa_ckpt_dir_list(job->ckpt_dir, &job->stale, &job->nstale, err) < 0)
            return -1;
        if (job->nstale)
            singa_job_log(hooks, "checkpoint_path '%s' holds %zu checkpoints of an earlier run (newest: step %llu); "
                                 "this run replaces them once it writes its first checkpoint (resume = true continues them instead)",
                          job->ckpt_dir, job->nstale, (unsigned long long)job->stale[0]);
    }
    return 0;
}

/* One training step: locally the updater changes the params; distributed, the exchange sends
 * the gradients to the servers and waits for the fresh values. */
static int train_step(singa_job *job, const singa_exchange *x, int s, singa_err *err)
{
    if (x)
        return job->tob->run(job->train, job->tob_conf, err) < 0 ? -1 : x->after_backward(x->ud, s, err);
    return singa_updater_prepare(job->upd, s, err) < 0 || job->tob->run(job->train, job->tob_conf, err) < 0 ||
                   singa_updater_apply(job->upd, s, err) < 0
               ? -1
               : 0;
}

int singa_job_loop(singa_job *job, const singa_job_hooks *hooks, const singa_exchange *x, singa_result *res,
                   singa_err *err)
{
    double t0 = now(), train_time = 0;
    /* images a step: the group's, of which each of its workers with a whole copy reads its rows */
    int start = job->step, batch = singa_net_batchsize(job->train) * job->split.count, last_test = -1;
    bool stopped = false; /* by the host (steer) */
    for (int s = job->step; s < job->train_steps; s++) {
        bool asked = false;
        int st = steer(job, hooks, s, &asked, err);
        if (st < 0)
            return -1;
        stopped = x ? x->stop(x->ud, s, st > 0) : st > 0;
        /* The host's checkpoint is written even at the step the job stops before ("c" on quitting). */
        bool asked_now = x && x->checkpoint_now(x->ud, s, asked);
        if (job->ckpt_dir && s > start && (asked_now || (!stopped && fires(&job->checkpoint, s))) &&
            (x ? save_dist(job, s, hooks, x, CKPT_STATE | CKPT_SERVERS, err) : save_checkpoint(job, s, hooks, err)) < 0)
            return -1;
        if (stopped) {
            if (job->split.index == 0 && job->split.group == 0)
                singa_job_log(hooks, "stopped before step %d", s);
            break;
        }
        bool eval = (job->val_net && fires(&job->validate, s)) || (job->test_net && fires(&job->test, s));
        if (eval && x && x->before_eval && x->before_eval(x->ud, err) < 0)
            return singa_err_prefix(err, "before the evaluation at step %d: ", s);
        if (job->val_net && fires(&job->validate, s)) {
            if (evaluate(job, job->val_net, job->validate.steps, s, t0, hooks, &res->validation, err) < 0)
                return singa_err_prefix(err, "validation at step %d: ", s);
            res->has_validation = true;
            if (job->watch == SINGA_PHASE_VALIDATION && watch(job, s, hooks, &res->validation, err) < 0)
                return -1;
        }
        if (job->test_net && fires(&job->test, s)) {
            if (evaluate(job, job->test_net, job->test.steps, s, t0, hooks, &res->test, err) < 0)
                return singa_err_prefix(err, "test at step %d: ", s);
            res->has_test = true;
            last_test = s;
            if (job->watch == SINGA_PHASE_TEST && watch(job, s, hooks, &res->test, err) < 0)
                return -1;
        }
        if (job->early)
            break;
        double ts = now();
        if (train_step(job, x, s, err) < 0)
            return singa_err_prefix(err, "training step %d: ", s);
        if (job->stop_nonfinite && check_finite(job, s, err) < 0)
            return -1;
        job->step = s + 1;
        double te = now();
        train_time += te - ts;
        singa_metrics_merge(&job->window.metrics, &job->train->metrics);
        job->window.steps++;
        job->window_seconds += te - ts;
        job->window_timed++;
        if (hooks && hooks->step) {
            double ips = (double)batch * (s + 1 - start) / train_time;
            singa_record r = {.step = s + 1, .phase = SINGA_PHASE_TRAIN, .group = job->split.group, .metrics = &job->window.metrics,
                              .images_per_sec = ips, .lr = singa_updater_lr(job->upd, s), .elapsed = te - t0,
                              .total_steps = job->train_steps,
                              .eta = (double)(job->train_steps - s - 1) * batch / ips};
            hooks->step(hooks->ud, &r);
        }
        if (fires(&job->disp, s)) {
            if (hooks && hooks->record) {
                singa_record r = {.step = s, .phase = SINGA_PHASE_TRAIN, .group = job->split.group, .metrics = &job->window.metrics,
                                  .images_per_sec = (double)batch * job->window_timed / job->window_seconds,
                                  .lr = singa_updater_lr(job->upd, s), .elapsed = te - t0};
                hooks->record(hooks->ud, &r);
            }
            res->train = job->window.metrics;
            memset(&job->window, 0, sizeof job->window);
            job->window_seconds = 0;
            job->window_timed = 0;
        }
    }
    if (job->window.steps > 0)
        res->train = job->window.metrics;
    /* Distributed, a worker's state is final before it says it is done, and the servers' once
     * every worker's last update is in. */
    bool final = !stopped && job->ckpt_dir && job->step > start &&
                 !(job->early && job->ckpt_seen[0][0] && job->ckpt_seen_step[0] == job->step); /* written at it */
    if (x && final && save_dist(job, job->step, hooks, x, CKPT_STATE, err) < 0)
        return -1;
    if (x && x->after_training(x->ud, err) < 0)
        return -1;
    if (final && x && save_dist(job, job->step, hooks, x, CKPT_SERVERS, err) < 0)
        return -1;
    if (final && !x && save_checkpoint(job, job->step, hooks, err) < 0)
        return -1;
    if (!stopped && job->test_net && last_test != job->step) {
        if (evaluate(job, job->test_net, job->test.steps, job->step, t0, hooks, &res->test, err) < 0)
            return singa_err_prefix(err, "final test: ");
        res->has_test = true;
    }
    res->steps = job->step;
    res->seconds = now() - t0;
    res->stopped_early = job->early;
    res->best_step = job->best_step;
    res->best_value = job->best_value;
    if (job->best_step >= 0) {
        singa_ckpt_path(res->best_path, sizeof res->best_path, job->ckpt_dir, (uint64_t)job->best_step);
        singa_job_log(hooks, "best checkpoint: %s (step %d, %s %s %.4f)", res->best_path, job->best_step,
                      job->watch == SINGA_PHASE_VALIDATION ? "validation" : "test", job->best_metric, job->best_value);
    }
    return 0;
}

int singa_job_run(singa_job *job, const singa_job_hooks *hooks, singa_result *res, singa_err *err)
{
    memset(res, 0, sizeof *res);
    singa_blas_set_threads(job->threads);
    if (job->dist)
        return singa_runtime_run(job, hooks, res, err);
    rt_launch launch; /* a plain job in several processes would train several times */
    if (rt_launch_read(&launch, &job->cluster, err) < 0 || singa_job_begin(job, hooks, err) < 0)
        return -1;
    return singa_job_loop(job, hooks, NULL, res, err);
}

const singa_registry *singa_job_registry(const singa_job *job) { return job->reg; }
const singa_cluster *singa_job_cluster(const singa_job *job) { return &job->cluster; }
singa_params *singa_job_params(singa_job *job) { return &job->params; }
int singa_job_step(const singa_job *job) { return job->step; }
singa_stats *singa_job_stats(const singa_job *job) { return job->stats; }
