/* What the training code shares inside libsinga. */
#ifndef SINGA_TRAIN_TRAIN_H
#define SINGA_TRAIN_TRAIN_H

#include "singa/cluster.h"
#include "singa/job.h"
#include "singa/param.h"

/* A line for the job's log hook (nothing when there is none). */
void singa_job_log(const singa_job_hooks *h, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* A job for worker `id` of worker group `group` of the job's cluster: its train net reads that
 * worker's part of the data; only worker 0 of group 0 tests, validates and checkpoints, and only
 * a group's worker 0 displays. */
int singa_job_create_worker(singa_job **out, const singa_conf *conf, const singa_registry *reg, int group,
                            int id, singa_err *err);
/* Before the first step: the checkpoint directory, resume, params from checkpoint_path. */
int singa_job_begin(singa_job *job, const singa_job_hooks *hooks, singa_err *err);

/* How a distributed worker trains: after each backward pass the runtime sends the gradients and
 * waits for the servers' fresh values. */
typedef struct singa_exchange {
    void *ud;
    int (*after_backward)(void *ud, int step, singa_err *err);
    /* After the last step, before the final test: the lead waits for every worker's last update
     * and fetches the newest values, so the test sees all the training. */
    int (*after_training)(void *ud, singa_err *err);
} singa_exchange;

/* The training loop from the job's current step (x NULL: the local updater). */
int singa_job_loop(singa_job *job, const singa_job_hooks *hooks, const singa_exchange *x, singa_result *res,
                   singa_err *err);
const singa_conf *singa_job_conf(const singa_job *job);
const singa_registry *singa_job_registry(const singa_job *job);
const singa_cluster *singa_job_cluster(const singa_job *job);
singa_params *singa_job_params(singa_job *job);
int singa_job_step(const singa_job *job);

#endif
