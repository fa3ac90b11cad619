/* What the files of a job share: the job itself and the steps between them.
 *   job_conf.c   the job's fields, read and checked
 *   job.c        building the nets and the updater, accessors
 *   job_ckpt.c   checkpoint state: entries, the display window, cursors, resume, checkpoint_path
 *   nonfinite.c  stop_on_nonfinite: finding a NaN and naming the last good checkpoint
 *   loop.c       the step loop against an exchange (train.h)
 *   local.c      the local exchange: the updater in this thread */
#ifndef SINGA_TRAIN_JOB_PRIVATE_H
#define SINGA_TRAIN_JOB_PRIVATE_H

#include <stdatomic.h>
#include <stdint.h>

#include "singa/job.h"
#include "singa/net.h"
#include "singa/partition.h"
#include "singa/updater.h"
#include "train/tob.h"
#include "train/train.h"

/* The display window in a checkpoint: i64 metric count, i64 steps, then per metric slot a
 * 24-byte name, the sum (f64) and the count (i64), in host byte order. */
#define JOB_WINDOW_BYTES (16 + SINGA_METRICS_MAX * (SINGA_METRIC_NAME + 16))

/* An action with frequency f and offset a fires at step s when f > 0, s >= a and
 * (s - a) % f == 0. */
typedef struct job_action {
    int freq, after, steps;
} job_action;

static inline bool job_fires(const job_action *a, int step)
{
    return a->freq > 0 && step >= a->after && (step - a->after) % a->freq == 0;
}

struct singa_job {
    singa_conf *conf;
    const singa_registry *reg;
    singa_cluster cluster;
    bool dist;           /* trained by the distributed runtime: the servers hold the trained params */
    bool cut;            /* the train net is cut among the workers of the group */
    singa_graph graph;   /* then its partitioned graph */
    int micro_batches;   /* neuralnet.micro_batches: > 1 pipelines the cut net */
    singa_net_split split; /* which worker of which group this job's nets are */
    singa_stats *stats;    /* the runtime's traffic, when distributed */
    atomic_bool abandoned; /* failed in this process: see singa_job_abandoned */
    const char *name;
    uint64_t seed;
    int train_steps, threads, keep;
    job_action disp, test, validate, checkpoint;
    const char *ckpt_dir;
    size_t ninit; /* checkpoint_path entries after the first: where a fresh run's params come from */
    bool resume;
    bool overwrite; /* a fresh run may replace an earlier run's checkpoints */
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
    singa_rng rng;
    singa_net *train, *test_net, *val_net;
    singa_updater *upd; /* the local updater; NULL when distributed (the servers update) */
    const singa_tob *tob; /* the TrainOneBatch algorithm */
    const singa_conf *tob_conf;
    singa_pool *pool;
    int step;
    /* Training metrics since the last display; checkpointed so a resumed run displays the same. */
    struct {
        singa_metrics metrics;
        int64_t steps;
    } window;
    uint8_t window_blob[JOB_WINDOW_BYTES]; /* its checkpoint form */
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

/* job_conf.c: the fields of job->conf into the job. */
int job_read_fields(singa_job *job, singa_err *err);

/* job_ckpt.c: before the first step (singa_job_begin is open, then init), a plain job runs
 * open, resume, init, note_stale. */
/* Makes checkpoint_path's directory, to find an unusable one now, not after hours of training. */
int job_ckpt_open(singa_job *job, singa_err *err);
/* A plain job with resume: from the newest checkpoint of its directory that fits. */
int job_ckpt_resume(singa_job *job, const singa_job_hooks *hooks, singa_err *err);
/* A fresh start (step 0): params from the checkpoints checkpoint_path lists after its directory. */
int job_ckpt_init(singa_job *job, const singa_job_hooks *hooks, singa_err *err);
/* A plain job without resume: an earlier run's checkpoints, removed once this run writes its first. */
int job_ckpt_note_stale(singa_job *job, const singa_job_hooks *hooks, singa_err *err);
/* Writes checkpoint `step` of a plain job, "stepS.ckpt" in checkpoint_path. */
int job_ckpt_save(singa_job *job, int step, const singa_job_hooks *hooks, singa_err *err);

/* nonfinite.c */
/* Names the first param whose value or gradient holds a NaN or an infinity, in `where`. */
bool job_find_nonfinite(const singa_job *job, char *where, size_t len);
/* The error of a run that diverged at step s, after `what`. */
int job_nonfinite_error(const singa_job *job, int s, const char *what, const char *where, singa_err *err);
/* After training step s: a metric of the loss layers that is not finite stops the job. */
int job_check_finite(singa_job *job, int s, singa_err *err);

#endif
