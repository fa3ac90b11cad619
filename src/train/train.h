/* What the training code shares inside libsinga. */
#ifndef SINGA_TRAIN_TRAIN_H
#define SINGA_TRAIN_TRAIN_H

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
/* Before the first step: the checkpoint directory, resume, params from checkpoint_path.  A
 * distributed job's worker does not look for a checkpoint itself: the runtime chooses one for
 * every thread and hands each worker its own file before this. */
int singa_job_begin(singa_job *job, const singa_job_hooks *hooks, singa_err *err);
/* A distributed worker's own state (generator, data cursors, display window, the params no
 * server holds) from its file `path` of a checkpoint, read and verified; the job starts at the
 * checkpoint's step. */
int singa_job_load_state(singa_job *job, const singa_ckpt *ck, const char *path, singa_err *err);

/* How a distributed worker trains: after each backward pass the runtime sends the gradients and
 * waits for the servers' fresh values. */
typedef struct singa_exchange {
    void *ud;
    int (*after_backward)(void *ud, int step, singa_err *err);
    /* After the last step, before the final test: the lead waits for every worker's last update
     * and fetches the newest values, so the test sees all the training. */
    int (*after_training)(void *ud, singa_err *err);
    /* Before a test or validation during training (NULL: nothing to do): the lead fetches the
     * values it does not keep fresh, as a process holding part of a cut group's net. */
    int (*before_eval)(void *ud, singa_err *err);
    /* Whether training stops before `step`, given whether the host asks for it: the workers of a
     * group must stop at the same step, or the others would wait for their gradients forever. */
    bool (*stop)(void *ud, int step, bool requested);
    /* Whether this worker writes a checkpoint the host asked for before `step` (given whether it
     * asks now; only the lead is asked): as with a stop, a group's workers pick the same step. */
    bool (*checkpoint_now)(void *ud, int step, bool requested);
    /* Checkpoints (when the job has checkpoint_path): every worker writes its own state `c`
     * (what a local checkpoint holds but the params the servers hold) as its file of checkpoint
     * `step`; then the lead alone (save_servers is NULL for the others) has every server write
     * its shard and waits for all of them.  *complete is false when a server's process was lost
     * (an asynchronous job goes on without it), so the checkpoint can never be whole. */
    int (*save_state)(void *ud, int step, singa_ckpt *c, singa_err *err);
    int (*save_servers)(void *ud, int step, bool *complete, singa_err *err);
} singa_exchange;

/* The training loop from the job's current step (x NULL: the local updater). */
int singa_job_loop(singa_job *job, const singa_job_hooks *hooks, const singa_exchange *x, singa_result *res,
                   singa_err *err);
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
/* Every net of the job (every location of a cut one) counts its layers' passes in *progress. */
void singa_job_count_progress(singa_job *job, atomic_uint *progress);

#endif
