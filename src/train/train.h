/* What the training code shares inside libsinga: with the runtime above it, the exchange a
 * replica's steps run against and what a distributed worker needs of its job. */
#ifndef SINGA_TRAIN_TRAIN_H
#define SINGA_TRAIN_TRAIN_H

#include "core/trace.h"
#include "singa/checkpoint.h"
#include "singa/cluster.h"
#include "singa/job.h"
#include "singa/param.h"

/* A line for the job's log hook (nothing when there is none). */
void singa_job_log(const singa_job_hooks *h, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* A job for worker `id` of worker group `group` of the job's cluster: its train net reads that
 * worker's part of the data; only worker 0 of group 0 tests and validates, only a group's worker
 * 0 displays, and every worker checkpoints its own state (the servers hold the params). */
int singa_job_create_worker(singa_job **out, const singa_conf *conf, const singa_registry *reg, int group,
                            int id, singa_err *err);
/* A distributed worker before its first step: the checkpoint directory, and a fresh start's
 * params from checkpoint_path's other entries.  It does not look for a checkpoint: the runtime
 * chooses one for every thread and hands each worker its own file (singa_job_load_state) before
 * this.  A plain job resumes itself (singa_job_train_local). */
int singa_job_begin(singa_job *job, const singa_job_hooks *hooks, singa_err *err);
/* A distributed worker's own state (generator, data cursors, display window, the params no
 * server holds) from its file `path` of a checkpoint, read and verified; the job starts at the
 * checkpoint's step. */
int singa_job_load_state(void *job, const singa_ckpt *ck, const char *path, singa_err *err);
/* A checkpoint of the job's state at `step` (entries point at the job's memory; free with
 * singa_ckpt_free(c, 0)).  A distributed job's holds no param the servers hold. */
int singa_job_ckpt_fill(singa_job *job, singa_ckpt *c, int step, singa_err *err);
/* A checkpoint of `step` was written as `path`: the last good one, should the loss diverge. */
void singa_job_ckpt_written(singa_job *job, int step, const char *path);
/* The refusal of a fresh run (neither resume nor overwrite) whose checkpoint directory holds n
 * checkpoints of an earlier run, the newest at step `newest`.  Returns -1. */
int singa_job_stale_error(const char *dir, size_t n, uint64_t newest, singa_err *err);
/* Whether checkpoint_freq writes a checkpoint before `step`. */
bool singa_job_ckpt_fires(const singa_job *job, int step);

/* What one replica's steps run against: where its gradients go and its next values come from.
 * The local updater (local.c) is one exchange, the runtime's worker (src/runtime/worker.c)
 * another.  Every member is set but before_eval. */
typedef struct singa_exchange {
    void *ud;
    /* Before the backward pass of `step`: where its gradients go. */
    int (*before_backward)(void *ud, int step, singa_err *err);
    /* After it: the gradients are final; on return the values of step + 1 are in place. */
    int (*after_backward)(void *ud, int step, singa_err *err);
    /* The learning rate of `step` (for records), and the host's multiplier on the schedule. */
    float (*lr)(void *ud, int step);
    void (*set_lr_scale)(void *ud, float scale);
    /* Whether training stops before `step`, given whether the host asks for it: the workers of a
     * group must stop at the same step, or the others would wait for their gradients forever. */
    bool (*stop)(void *ud, int step, bool requested);
    /* The host asks for a checkpoint before `step` (only the lead is asked): written at once, or
     * at a step every worker of the group picks (checkpoint_due). */
    int (*checkpoint_asked)(void *ud, int step, singa_err *err);
    /* Whether a checkpoint asked for is written before `step`. */
    bool (*checkpoint_due)(void *ud, int step);
    /* Before a test or validation during training (NULL: nothing to do): the lead fetches the
     * values it does not keep fresh, as a process holding part of a cut group's net. */
    int (*before_eval)(void *ud, singa_err *err);
    /* Writes checkpoint `step` (the job has checkpoint_path). */
    int (*save)(void *ud, int step, singa_err *err);
    /* After the last step, before the final test: the final checkpoint (of `step`; -1: none)
     * and, distributed, the newest values for the test. */
    int (*finish)(void *ud, int step, singa_err *err);
    /* Whether this replica runs the tests and validations its job has nets for (NULL: it does):
     * in a group that may lose its leader, every worker that may lead it has them. */
    bool (*evaluates)(void *ud);
} singa_exchange;

/* The training loop from the job's current step. */
int singa_job_loop(singa_job *job, const singa_job_hooks *hooks, const singa_exchange *x, singa_result *res,
                   singa_err *err);
/* A job of one worker and one server in this thread: begin, resume, the loop with the local
 * updater. */
int singa_job_train_local(singa_job *job, const singa_job_hooks *hooks, singa_result *res, singa_err *err);
/* num_openblas_threads. */
int singa_job_blas_threads(const singa_job *job);
/* The calling thread's buffer of trace t, which trains the job, named track: its train net's
 * layers and the loop's checkpoints record into it; a net cut among the group's workers gives
 * the threads of its other locations here buffers of their own ("worker <g>.<k>").  NULL when
 * t is; t NULL stops the recording. */
singa_trace_buf *singa_job_set_trace(singa_job *job, singa_trace *t, const char *track);
/* Step s begins: the spans of every buffer set_trace gave belong to it (the other locations'
 * threads read it after the pass is handed to them, under the parts' lock). */
void singa_job_trace_step(singa_job *job, int s);
const singa_registry *singa_job_registry(const singa_job *job);
singa_params *singa_job_params(singa_job *job);
/* A job of cluster.shard_params declares its params without values: the runtime draws them once
 * it knows what this process holds, calling draw for each param in the order declared, with the
 * generator they would have been drawn from (draw passes it to singa_param_init_held). */
int singa_job_draw_params(singa_job *job, int (*draw)(void *ud, singa_param *p, singa_rng *rng, singa_err *err),
                          void *ud, singa_err *err);
/* Whether the job's train net is cut among the workers of a group (one job drives them all). */
bool singa_job_cut(const singa_job *job);
/* Adds another worker's metrics of this step (its rows of the group's batch) to the train net's,
 * which the step's record reports: a group's leader reports the whole group's. */
void singa_job_merge_metrics(singa_job *job, const singa_metrics *m);
int singa_job_step(const singa_job *job);
/* After the step's pass: trains worker `share`'s rows (of the group's batch split, this job's
 * net) of the same batch too, its params' gradients added to the step's and its metrics to the
 * train net's (train/share.c). */
int singa_job_train_share(singa_job *job, int share, singa_err *err);
/* Every net of the job (every location of a cut one) counts its layers' passes in *progress. */
void singa_job_count_progress(singa_job *job, atomic_uint *progress);

#endif
