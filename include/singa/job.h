/* A training job: the nets of every phase, the updater and the loop with SINGA's fields
 * (train_steps, disp_freq, test_freq/test_steps, validate_*, checkpoint_*, resume). */
#ifndef SINGA_JOB_H
#define SINGA_JOB_H

#include "singa/conf.h"
#include "singa/layer.h"
#include "singa/metrics.h"
#include "singa/stats.h"

typedef struct singa_job singa_job;

typedef struct singa_record {
    int step;
    singa_phase phase;
    int group;
    const singa_metrics *metrics;
    double images_per_sec; /* training records only */
    double lr;
    double elapsed;        /* seconds since the run started */
    int total_steps;       /* train_steps */
    double eta;            /* step records: seconds of training left at the current speed */
} singa_record;

typedef struct singa_job_hooks {
    void *ud;
    /* A display (train), test or validation result. */
    void (*record)(void *ud, const singa_record *r);
    /* After every training step, with the display window so far; keep it cheap. */
    void (*step)(void *ud, const singa_record *r);
    void (*log)(void *ud, const char *line);
} singa_job_hooks;

typedef struct singa_result {
    int steps;
    double seconds;
    singa_metrics train, test, validation; /* the last display window and the last runs */
    bool has_test, has_validation;
} singa_result;

int singa_job_create(singa_job **out, const singa_conf *conf, const singa_registry *reg,
                     singa_err *err);
void singa_job_free(singa_job *job);
int singa_job_run(singa_job *job, const singa_job_hooks *hooks, singa_result *res, singa_err *err);
const char *singa_job_name(const singa_job *job);
/* The distributed runtime's traffic counters (NULL for a job of one worker and one server);
 * readable while the job runs. */
singa_stats *singa_job_stats(const singa_job *job);
/* The training net, e.g. to read its layers' times after a run with `profile = true`. */
const singa_net *singa_job_train_net(const singa_job *job);

extern const singa_field singa_job_fields[];
extern const singa_field singa_cluster_fields[];

#endif
