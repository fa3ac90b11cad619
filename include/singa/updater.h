/* Updaters (kSGD, kNesterov, kAdaGrad, kRMSProp, kAdaDelta, kAdam, kAdamMax) with learning-rate
 * schedules (kFixed, kStep, kExponential, kLinear, kInverse, kInverseT, kFixedStep), as in SINGA
 * v0.x: lr = schedule(step) * lr_scale, wd = weight_decay * wd_scale; the gradient is scaled by
 * 1 / (number of contributions), weight decay is added, it is clipped, then the method applies.
 * README's Updater section gives every formula and default. */
#ifndef SINGA_UPDATER_H
#define SINGA_UPDATER_H

#include "singa/conf.h"
#include "singa/param.h"

typedef struct singa_updater singa_updater;

int singa_updater_create(singa_updater **out, const singa_conf *conf, singa_params *params,
                         singa_err *err);
void singa_updater_free(singa_updater *u);
float singa_updater_lr(const singa_updater *u, int step);
/* Before a backward pass: point each param's gradient at where this step wants it. */
void singa_updater_prepare(singa_updater *u, int step);
/* After the backward pass: change the params. */
void singa_updater_apply(singa_updater *u, int step);
/* Per-param state for checkpoints: nslots slots per updated param (kSGD with momentum: "history";
 * kAdam: "m", "v"; ...).  slot() is NULL for a param the updater does not keep state for (one
 * that shares another's value, or that the training net does not declare). */
int singa_updater_nslots(const singa_updater *u);
const char *singa_updater_slot_name(const singa_updater *u, int slot);
singa_tensor *singa_updater_slot(singa_updater *u, int param_id, int slot);

extern const singa_field singa_updater_fields[];
extern const singa_field singa_lr_fields[];

#endif
