/* A training job: the nets of every phase, the updater and the loop with SINGA's fields
 * (train_steps, disp_freq, test_freq/test_steps, validate_*, checkpoint_*, resume). */
#ifndef SINGA_JOB_H
#define SINGA_JOB_H

#include <stdatomic.h>

#include "singa/cluster.h"
#include "singa/conf.h"
#include "singa/layer.h"
#include "singa/metrics.h"
#include "singa/stats.h"

#pragma GCC visibility push(default) /* exported: libsinga is built hidden */

typedef struct singa_job singa_job;

typedef struct singa_record {
    int step;
    singa_phase phase;
    int group;
    const singa_metrics *metrics;
    double images_per_sec; /* training records only; NAN for the run's first step (a warm-up, timed alone) */
    double lr;
    double elapsed;        /* seconds since the run started */
    double seconds;        /* wall-clock seconds since the host's training started: set by the host (lsinga) */
    int total_steps;       /* train_steps */
    double eta;            /* step records: seconds of training left at the current speed */
} singa_record;

/* Steering a running job from other threads (the workbench's keys and Lua console): requests the
 * training loop reads between steps.  Every field is atomic, so any thread may set one at any
 * time; the loop never waits for the host except while paused. */
typedef struct singa_job_control {
    atomic_bool pause;       /* hold before the next step while set */
    atomic_bool checkpoint;  /* write a checkpoint before the next step; the loop clears it */
    atomic_bool stop;        /* end training before the next step, skipping the final checkpoint and test */
    _Atomic double lr_scale; /* multiplies the schedule's rate (1: as scheduled); not checkpointed */
    atomic_bool paused;      /* set by the loop while it holds */
} singa_job_control;

/* Nothing requested, lr_scale 1. */
void singa_job_control_init(singa_job_control *c);

typedef struct singa_job_hooks {
    void *ud;
    /* A display (train), test or validation result. */
    void (*record)(void *ud, const singa_record *r);
    /* After every training step, with the display window so far; keep it cheap. */
    void (*step)(void *ud, const singa_record *r);
    void (*log)(void *ud, const char *line);
    /* After a checkpoint file was written. */
    void (*checkpoint)(void *ud, int step, const char *path);
    /* The host's requests (pause, checkpoint now, stop, lr scale), or NULL. */
    singa_job_control *control;
    /* The host asked its user, who lets this fresh run replace an earlier run's checkpoints in
     * checkpoint_path as `overwrite = true` does (else such a run is refused). */
    bool overwrite;
} singa_job_hooks;

typedef struct singa_result {
    int steps;
    double seconds;
    singa_metrics train, test, validation; /* the last display window and the last runs */
    double images_per_sec; /* the last display window's (0 when none fired): steps' time only */
    bool has_test, has_validation;
    bool stopped_early;   /* on_validation returned "stop" (steps: the step it stopped before) */
    /* checkpoint_keep_best: the best checkpoint so far (best_step < 0: none yet) */
    int best_step;
    double best_value;
    char best_path[4096];
} singa_result;

int singa_job_create(singa_job **out, const singa_conf *conf, const singa_registry *reg,
                     singa_err *err);
void singa_job_free(singa_job *job);
/* 0, or < 0 with the reason in err: SINGA_JOB_LOST when an elastic job (cluster.elastic) lost a
 * process and may restart from its newest checkpoint on the processes left, else -1. */
int singa_job_run(singa_job *job, const singa_job_hooks *hooks, singa_result *res, singa_err *err);
enum { SINGA_JOB_LOST = -2 };
/* singa_job_run with every process of the job's cluster as threads of this one, whatever
 * launched it: how the planner times a configuration (plan/profile.c). */
int singa_job_run_alone(singa_job *job, const singa_job_hooks *hooks, singa_result *res, singa_err *err);
/* The exit status of a process whose job ended so (`--procs` restarts on it; sysexits' TEMPFAIL). */
enum { SINGA_EXIT_LOST = 75 };
/* The exit status of a process whose Lua function was interrupted because its job had failed
 * meanwhile (found hung by the others): the lost one, which `--procs` does not restart with
 * the rest (sysexits' SOFTWARE). */
enum { SINGA_EXIT_HUNG = 70 };
const char *singa_job_name(const singa_job *job);
/* The distributed runtime's traffic counters (NULL for a job of one worker and one server);
 * readable while the job runs. */
singa_stats *singa_job_stats(const singa_job *job);
/* The job's configuration as it was given (e.g. to show its updater). */
const singa_conf *singa_job_conf(const singa_job *job);
/* Its topology (one worker and one server when the job has no `cluster`). */
const singa_cluster *singa_job_cluster(const singa_job *job);
/* The training net, e.g. to read its layers' times after a run with `profile = true`. */
const singa_net *singa_job_train_net(const singa_job *job);
/* Set by the distributed runtime once the job has failed in this process (a process lost, an
 * error); a host function still running (a kLua updater in an endless loop) should then give
 * up, for the job's end waits for it.  Safe from any thread. */
bool singa_job_abandoned(const singa_job *job);
void singa_job_abandon(singa_job *job);

extern const singa_field singa_job_fields[];
extern const singa_field singa_cluster_fields[];

#pragma GCC visibility pop

#endif
