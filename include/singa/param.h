/* Params: a value blob and a gradient blob, shared by name between the train, validation and
 * test nets, and between layers with `share_from`.  Layers write gradients through
 * grad_alpha/grad_beta (grad = grad_alpha * dL/dw + grad_beta * grad) so an updater may have
 * the backward pass write straight into its own state instead of a separate gradient buffer. */
#ifndef SINGA_PARAM_H
#define SINGA_PARAM_H

#include "singa/conf.h"
#include "singa/rng.h"
#include "singa/tensor.h"

#pragma GCC visibility push(default) /* exported: libsinga is built hidden */

typedef struct singa_param singa_param;

/* What a layer reads and writes.  The host allocates every param, together with its own state
 * of it (partitions' views, where the gradient goes: src/layers/param_state.h), so that state is
 * no part of the plugin ABI; the members below keep the offsets they had in ABI 1.0 to 1.3
 * (checked in src/layers/param.c). */
struct singa_param {
    char *name;
    int id;              /* position in its store */
    char *layer;         /* the layer that declared it, for messages */
    singa_tensor data;   /* a view of owner->data when shared */
    singa_tensor grad;
    float grad_alpha, grad_beta;
    float lr_scale, wd_scale;
    int fan_in, fan_out;
    singa_conf *init;    /* the user's init table, or NULL for the layer's default */
    const char *default_init;
    singa_param *owner;  /* the param named by share_from, or NULL */
    int nsharers;        /* trained params whose owner is this one */
    bool trained;        /* declared by the training net, so the updater changes it */
    bool state;          /* a layer's own state (kBM's running statistics): never trained, no
                          * gradient (grad is empty), checkpointed like any param */
    /* Until ABI 1.3 the host's own state lay here; its room stays so that default_value keeps
     * the offset plugins built then read it at. */
    struct {
        void *p[5];
        int i[4];
        void *q;
        int j[2];
    } reserved;
    /* Since plugin ABI 1.3. */
    double default_value; /* default_init's `value` when the user gives no init table */
};

typedef struct singa_params {
    singa_param **items;
    int n, cap;
    /* Declaring a param draws no initial value: they are drawn later, in the order declared, by
     * a caller that knows which elements this process holds (singa_job_draw_params). */
    bool defer_init;
} singa_params;

void singa_params_init(singa_params *ps);
void singa_params_free(singa_params *ps);
singa_param *singa_params_find(const singa_params *ps, const char *name);
/* Adds a param named `name` of the given shape, or returns the existing one of that name if the
 * shape matches (that is how the phases' nets share params). */
singa_param *singa_params_declare(singa_params *ps, const char *name, const char *layer, int ndim,
                                  const int *shape, singa_err *err);
/* Fills p->data by its init method (kConstant, kUniform, kGaussian, kGaussianSqrtFanIn,
 * kUniformSqrtFanIn, kUniformSqrtFanInOut). */
int singa_param_init_values(singa_param *p, singa_rng *rng, singa_err *err);
/* The same draws, writing only the elements in held's ranges ([begin, end) of the whole, by
 * begin): the others' memory stays untouched, as a process holding part of a param needs.
 * held NULL: only checks the init table, drawing nothing. */
int singa_param_init_held(singa_param *p, singa_rng *rng, const size_t (*held)[2], int nheld, singa_err *err);
/* Before a layer writes p's gradient otherwise than by singa_param_grad_gemm: where several
 * threads add into one buffer in turns, takes every part's turn, which singa_param_grad_done
 * gives up. */
void singa_param_grad_begin(singa_param *p);
/* p->grad = grad_alpha * op(A) op(B) + grad_beta * p->grad, then reports it final; in turns, a
 * block of rows at a time, so the next thread writes a block as soon as this one is done. */
void singa_param_grad_gemm(singa_param *p, bool trans_a, const singa_tensor *a, bool trans_b,
                           const singa_tensor *b);
/* Reports the whole gradient as final (for gradients computed without singa_param_grad_gemm);
 * for a view, the whole param's is final once all its views' are. */
void singa_param_grad_done(singa_param *p);
extern const singa_field singa_param_fields[];
extern const singa_field singa_init_fields[];

#pragma GCC visibility pop

#endif
