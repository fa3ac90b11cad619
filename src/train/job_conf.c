/* The job's fields: SINGA's job configuration read into the job and checked, so a mistake is
 * reported before any net is built. */
#include <math.h>
#include <string.h>

#include "core/trace.h"
#include "train/job_private.h"

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
    {"overwrite", SINGA_FIELD_BOOL},
    {"num_openblas_threads", SINGA_FIELD_INT}, {"profile", SINGA_FIELD_BOOL},
    {"stop_on_nonfinite", SINGA_FIELD_BOOL}, {"trace", SINGA_FIELD_STR},
    {"trace_steps", SINGA_FIELD_STR},
    {"on_validation", SINGA_FIELD_FUNC},    {"checkpoint_keep_best", SINGA_FIELD_STR},
    {"plugins", SINGA_FIELD_STRS}, /* loaded by the host before the job (singa/plugin.h) */
    {NULL, 0},
};

static const singa_field tob_fields[] = {
    {"alg", SINGA_FIELD_STR}, {"cd_k", SINGA_FIELD_INT}, {NULL, 0},
};

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

/* An elastic job's input layers split their batch evenly over the workers of every topology a
 * restart may fit it to (a cut net does not split its batch). */
static int check_elastic_batches(const singa_job *job, singa_err *err)
{
    const singa_cluster *c = &job->cluster;
    const singa_conf *list = singa_conf_get(singa_conf_get(job->conf, "neuralnet"), "layer");
    if (!c->elastic_min || job->cut || !list || list->kind != SINGA_CONF_LIST)
        return 0;
    for (int k = c->elastic_min > 2 ? c->elastic_min : 2; k < c->nprocs; k++) {
        singa_cluster left = *c;
        if (singa_cluster_fit(&left, k, err) < 0)
            return -1;
        for (size_t i = 0; i < list->n; i++) {
            int b = singa_conf_int(list->items[i], "batchsize", 0);
            if (b > 0 && b % left.nworkers_per_group != 0)
                return singa_err_set(err, "cluster.elastic: min = %d lets the job restart on %d processes, with %d workers, "
                                          "over which layer '%s''s batchsize %d does not split evenly",
                                     c->elastic_min, k, left.nworkers_per_group,
                                     singa_conf_str(list->items[i], "name", "?"), b);
        }
    }
    return 0;
}

/* train_one_batch: the algorithm and its table. */
static int read_tob(singa_job *job, singa_err *err)
{
    const singa_conf *tob = singa_conf_get(job->conf, "train_one_batch");
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
    return 0;
}

/* neuralnet.micro_batches: a pipeline needs a net cut among the workers of a group (then
 * singa_net_create_pipeline checks the net). */
static int read_micro_batches(singa_job *job, singa_err *err)
{
    const singa_conf *v = singa_conf_get(singa_conf_get(job->conf, "neuralnet"), "micro_batches");
    job->micro_batches = 1;
    if (!v)
        return 0;
    if (v->kind != SINGA_CONF_NUM || v->num != floor(v->num) || v->num < 1 || v->num > 1e6) {
        char got[64] = "not a number";
        if (v->kind == SINGA_CONF_NUM)
            snprintf(got, sizeof got, "%g", v->num);
        return singa_err_set(err, "neuralnet: field 'micro_batches' must be a positive integer (1, the default, runs "
                                  "each batch whole; m > 1 pipelines a net cut by 'location' in m micro-batches), got %s", got);
    }
    job->micro_batches = (int)v->num;
    if (job->micro_batches > 1 && !job->cut)
        return singa_err_set(err, "neuralnet: micro_batches = %d pipelines a net whose layers are placed on several "
                                  "workers, but no layer is placed off worker 0 (give layers a 'location' of 1 to N-1 "
                                  "in a cluster of N >= 2 workers per group)", job->micro_batches);
    return 0;
}

/* The job's name, seed, steps and schedules, and its checkpoint directory. */
static int read_schedule(singa_job *job, singa_err *err)
{
    const singa_conf *c = job->conf;
    job->name = singa_conf_str(c, "name", "job");
    job->seed = (uint64_t)singa_conf_int(c, "seed", 0);
    job->train_steps = singa_conf_int(c, "train_steps", 0);
    job->threads = singa_conf_int(c, "num_openblas_threads", 1);
    job->disp = (job_action){singa_conf_int(c, "disp_freq", 0), singa_conf_int(c, "disp_after", 0), 0};
    job->test = (job_action){singa_conf_int(c, "test_freq", 0), singa_conf_int(c, "test_after", 0),
                         singa_conf_int(c, "test_steps", 0)};
    job->validate = (job_action){singa_conf_int(c, "validate_freq", 0), singa_conf_int(c, "validate_after", 0),
                             singa_conf_int(c, "validate_steps", 0)};
    job->checkpoint = (job_action){singa_conf_int(c, "checkpoint_freq", 0), singa_conf_int(c, "checkpoint_after", 0), 0};
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
    job->overwrite = singa_conf_bool(c, "overwrite", false);
    job->stop_nonfinite = singa_conf_bool(c, "stop_on_nonfinite", true);
    return 0;
}

/* The values read, checked against each other. */
static int check_schedule(const singa_job *job, singa_err *err)
{
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
    if (job->cluster.elastic_min && job->checkpoint.freq <= 0)
        return singa_err_set(err, "cluster.elastic: a restart resumes from the newest checkpoint, but the job writes "
                                  "none: set checkpoint_freq (and checkpoint_path)");
    if (job->keep < 1)
        return singa_err_set(err, "job: field 'checkpoint_keep' must be at least 1");
    if (job->cluster.shard_params && (job->test.steps > 0 || job->validate.steps > 0))
        return singa_err_set(err, "cluster: shard_params: test_steps and validate_steps must be 0 (a test needs the whole "
                                  "model in worker 0.0, which a sharded job never gathers)");
    if (job->cluster.shard_params && job->ninit > 0)
        return singa_err_set(err, "cluster: shard_params: checkpoint_path lists checkpoints to initialise params from, "
                                  "which a sharded job does not read, so far");
    return 0;
}

int job_read_fields(singa_job *job, singa_err *err)
{
    const singa_conf *c = job->conf;
    const singa_field *const schemas[] = {singa_job_fields, NULL};
    if (singa_conf_check(c, schemas, "job", err) < 0 ||
        singa_cluster_read(&job->cluster, singa_conf_get(c, "cluster"), err) < 0)
        return -1;
    job->dist = singa_cluster_distributed(&job->cluster);
    job->cut = cut_among_workers(job);
    if (check_elastic_batches(job, err) < 0 || read_tob(job, err) < 0 || read_schedule(job, err) < 0 ||
        check_schedule(job, err) < 0 || read_watch(job, err) < 0 || read_micro_batches(job, err) < 0)
        return -1;
    int from, to; /* a trace that cannot be written is refused before training, not after */
    if (singa_conf_get(c, "trace") && singa_trace_check_path(singa_conf_str(c, "trace", NULL), err) < 0)
        return -1;
    if (singa_conf_get(c, "trace_steps") && !singa_conf_get(c, "trace"))
        return singa_err_set(err, "job: trace_steps is set but trace is not");
    if (singa_conf_get(c, "trace_steps") && singa_trace_parse_steps(singa_conf_str(c, "trace_steps", NULL), &from, &to, err) < 0)
        return -1;
    if (!singa_conf_get(c, "neuralnet"))
        return singa_err_set(err, "job: field 'neuralnet' is required");
    if (!singa_conf_get(c, "updater"))
        return singa_err_set(err, "job: field 'updater' is required");
    return 0;
}
