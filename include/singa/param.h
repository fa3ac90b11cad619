/* Params: a value blob and a gradient blob, shared by name between the train, validation and
 * test nets, and between layers with `share_from`.  Layers write gradients through
 * grad_alpha/grad_beta (grad = grad_alpha * dL/dw + grad_beta * grad) so an updater may have
 * the backward pass write straight into its own state instead of a separate gradient buffer. */
#ifndef SINGA_PARAM_H
#define SINGA_PARAM_H

#include "singa/conf.h"
#include "singa/rng.h"
#include "singa/tensor.h"

typedef struct singa_param singa_param;
/* Told when elements [begin, end) of p's gradient are final for this step, so an updater can
 * apply them at once, while they are still warm in cache (and, distributed, send them early). */
typedef void (*singa_grad_ready_fn)(void *ud, singa_param *p, size_t begin, size_t end);
/* Told before (begin) and after a layer writes part `part` of p's gradient (layers of a type with
 * SINGA_LAYER_GRAD_TURNS): it may wait and set grad_alpha/grad_beta, so that several threads add
 * into one buffer in turns, a part at a time. */
typedef void (*singa_grad_turn_fn)(void *ud, singa_param *p, int part, bool begin);

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
    singa_grad_ready_fn grad_ready;
    void *grad_ready_ud; /* for grad_turn too */
    const void *net;     /* the net that declared it last, to catch a name used twice in one net */
    const void *decl;    /* the conf of the layer that declared it: its parts may declare it again */
    /* A part's view (singa_layer_param in a part of a partitioned layer): data and grad are
     * views of whole's, disjoint from the other views' when the layer is cut on the features,
     * all of it (a replica) when on the batch.  NULL for a param of its own. */
    singa_param *whole;
    bool disjoint;
    int nviews, nviews_done; /* a whole param: its views, and those final in this pass */
    bool claimed;            /* a whole param: a replica has taken grad_beta in this pass */
    bool partial;            /* this process holds the values of only some of its elements */
    /* Since plugin ABI 1.2. */
    singa_grad_turn_fn grad_turn;
    int grad_parts; /* with grad_turn: the row blocks singa_param_grad_gemm writes in turn */
    bool turn_held; /* with grad_turn: every part's turn is taken (singa_param_grad_begin) */
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
/* Before a layer writes p's gradient otherwise than by singa_param_grad_gemm: takes every part's
 * turn, which singa_param_grad_done gives up. */
void singa_param_grad_begin(singa_param *p);
/* p->grad = grad_alpha * op(A) op(B) + grad_beta * p->grad, then reports it ready; with turns, a
 * block of rows at a time, so the next thread writes a block as soon as this one is done. */
void singa_param_grad_gemm(singa_param *p, bool trans_a, const singa_tensor *a, bool trans_b,
                           const singa_tensor *b);
/* Reports the whole gradient as final (for gradients computed without singa_param_grad_gemm);
 * for a view, the whole param's is final once all its views' are. */
void singa_param_grad_done(singa_param *p);
/* Before a backward pass over views: each takes its whole's grad_alpha, and grad_beta if it is
 * the first to write its elements in the pass (else 1, so replicas add up). */
void singa_param_view_begin(singa_param *view);
void singa_param_view_free(singa_param *view);

extern const singa_field singa_param_fields[];
extern const singa_field singa_init_fields[];

#endif
