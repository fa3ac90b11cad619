/* Updaters (kSGD, kNesterov, kAdaGrad, kRMSProp, kAdaDelta, kAdam, kAdamMax) with learning-rate
 * schedules (kFixed, kStep, kExponential, kLinear, kInverse, kInverseT, kFixedStep), as in SINGA
 * v0.x: lr = schedule(step) * lr_scale, wd = weight_decay * wd_scale; the gradient is scaled by
 * 1 / (number of contributions), weight decay is added, it is clipped, then the method applies.
 * docs/02-jobs-and-layers.md's Updater section gives every formula and default.
 *
 * kLua: the rule is a function of the host program (field `update`, a SINGA_CONF_FUNC; in
 * singa-tui a Lua function), called once per updated param per step as
 *     update(step, param, grad, state, lr, name)
 * step: a number; param, grad: tensors (grad is the effective gradient: averaged over the
 * params sharing the value, weight decay added, clipped); state: a named list of tensors, one
 * per name in the updater's `state` field (zero at first, checkpointed as
 * updater/<param>/<name>); lr: schedule(step) * lr_scale; name: the param's name.  It changes
 * param and state in place.  Schedule type kLua (field `schedule`), or a function given as
 * `learning_rate` itself, is called as schedule(step) and must return a rate >= 0.  The engine
 * calls both on the thread that runs the job; a failing call stops the step with its message. */
#ifndef SINGA_UPDATER_H
#define SINGA_UPDATER_H

#include "singa/conf.h"
#include "singa/param.h"

#pragma GCC visibility push(default) /* exported: libsinga is built hidden */

typedef struct singa_updater singa_updater;

#define SINGA_UPDATER_MAX_SLOTS 8

/* params NULL: the schedule alone, for singa_updater_lr (a distributed worker's: the servers
 * update). */
int singa_updater_create(singa_updater **out, const singa_conf *conf, singa_params *params,
                         singa_err *err);
/* Flags of singa_updater_create_ex. */
enum {
    /* Gradients arrive from elsewhere (a server's updates): the backward pass never writes into
     * the updater's state. */
    SINGA_UPDATER_SEPARATE_GRAD = 1,
};
int singa_updater_create_ex(singa_updater **out, const singa_conf *conf, singa_params *params,
                            unsigned flags, singa_err *err);
void singa_updater_free(singa_updater *u);
/* The rate at `step` (for a kLua schedule: the rate prepare/apply got for that step, else a
 * fresh call; NAN if that call fails). */
float singa_updater_lr(const singa_updater *u, int step);
/* A multiplier on the schedule's rate, set by the host between steps (singa_job_control's
 * lr_scale); 1 at creation.  singa_updater_lr and the updates include it. */
void singa_updater_set_lr_scale(singa_updater *u, float scale);
/* Before a backward pass: point each param's gradient at where this step wants it.  Fails only
 * when a kLua schedule does. */
int singa_updater_prepare(singa_updater *u, int step, singa_err *err);
/* After the backward pass: change the params.  Fails only when a kLua function does. */
int singa_updater_apply(singa_updater *u, int step, singa_err *err);
/* Updates one trained param from the gradient `grad` (as many floats as the param; it may be
 * changed, as the effective gradient is formed in it) times `scale`: what a server does with a
 * slice once every contribution of a step has arrived.  Fails only when a kLua function does. */
int singa_updater_apply_one(singa_updater *u, int param_id, int step, float *grad, float scale,
                            singa_err *err);
/* Whether every element's update depends on that element alone (every type but kLua), so that
 * singa_updater_apply_span may update a param piece by piece. */
bool singa_updater_elementwise(const singa_updater *u);
/* singa_updater_apply_one for elements [offset, offset + n) of the param, from grad[0, n): the
 * same bits as the whole param's update there.  Fails for kLua (not elementwise) or when a kLua
 * schedule does. */
int singa_updater_apply_span(singa_updater *u, int param_id, int step, const float *grad, float scale, size_t offset,
                             size_t n, singa_err *err);
/* Whether a backward pass may write the gradient into the history itself, h = m h - lr g
 * (kSGD with momentum, no clipping), as the local updater does; *momentum gets m. */
bool singa_updater_history_grad(const singa_updater *u, float *momentum);
/* Lowers the momentum a kSGD or kNesterov updater applies from now on to `momentum` (>= 0, at
 * most its `momentum` field, for which its state was made): asynchronous groups' compensation.
 * Its state keeps its slots, so a history at momentum 0 is still checkpointed.  False, changing
 * nothing, for another updater or a higher momentum. */
bool singa_updater_set_momentum(singa_updater *u, float momentum);
/* The state of `slot` of a param moves to mem (as many floats as the param), which the caller
 * owns and keeps until the updater is freed: several threads' backward passes can then write
 * into one history laid over the slices of several servers. */
void singa_updater_adopt_slot(singa_updater *u, int param_id, int slot, float *mem);
/* Updates one param whose history the backward pass has written (singa_updater_history_grad):
 * adds the weight decay of `step` to it, then w += h.  Fails only when a kLua schedule does. */
int singa_updater_apply_history(singa_updater *u, int param_id, int step, singa_err *err);
/* Per-param state for checkpoints: nslots slots per updated param (kSGD with momentum: "history";
 * kAdam: "m", "v"; kLua: its `state` names, at most SINGA_UPDATER_MAX_SLOTS; ...).  slot() is NULL for a param the updater does not keep state for (one
 * that shares another's value, or that the training net does not declare). */
int singa_updater_nslots(const singa_updater *u);
const char *singa_updater_slot_name(const singa_updater *u, int slot);
singa_tensor *singa_updater_slot(singa_updater *u, int param_id, int slot);

extern const singa_field singa_updater_fields[];
extern const singa_field singa_lr_fields[];

#pragma GCC visibility pop

#endif
