/* What the training code shares inside libsinga. */
#ifndef SINGA_TRAIN_TRAIN_H
#define SINGA_TRAIN_TRAIN_H

#include "singa/job.h"

/* A line for the job's log hook (nothing when there is none). */
void singa_job_log(const singa_job_hooks *h, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

#endif
