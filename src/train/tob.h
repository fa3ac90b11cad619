/* TrainOneBatch algorithms: what one training iteration computes on the training net before
 * the updater applies the gradients (SINGA's BPWorker / CDWorker).  Each lives in its own file
 * and is listed in tob.c. */
#ifndef SINGA_TRAIN_TOB_H
#define SINGA_TRAIN_TOB_H

#include "singa/conf.h"
#include "singa/net.h"

typedef struct singa_tob {
    const char *name; /* the train_one_batch.alg value, e.g. "kBP" */
    /* Fills every trained param's gradient (through grad_alpha/grad_beta) and the net's metrics.
     * conf is the job's train_one_batch table (may be NULL). */
    int (*run)(singa_net *net, const singa_conf *conf, singa_err *err);
    /* Checks the net fits the algorithm (e.g. CD needs RBM layers); may be NULL. */
    int (*check)(const singa_net *net, const singa_conf *conf, singa_err *err);
} singa_tob;

/* The algorithm named alg, or NULL with a message naming the known ones. */
const singa_tob *singa_tob_find(const char *alg, singa_err *err);

extern const singa_tob singa_tob_bp;
extern const singa_tob singa_tob_cd; /* contrastive divergence (cd.c) */

#endif
