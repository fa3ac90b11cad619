/* The layer abstraction (SINGA's Layer): source layers, a feature blob, a gradient blob and
 * Params; ComputeFeature is `forward`, ComputeGradient is `backward`.  A layer type is a small
 * vtable registered by name, so built-in layers and plugins are found the same way. */
#ifndef SINGA_LAYER_H
#define SINGA_LAYER_H

#include <stdint.h>
#include "singa/conf.h"
#include "singa/param.h"
#include "singa/tensor.h"

#pragma GCC visibility push(default) /* exported: libsinga is built hidden */

typedef enum singa_phase {
    SINGA_PHASE_TRAIN = 1,
    SINGA_PHASE_VALIDATION = 2,
    SINGA_PHASE_TEST = 4,
} singa_phase;

const char *singa_phase_name(singa_phase phase); /* "kTrain", ... */

typedef struct singa_layer singa_layer;
typedef struct singa_net singa_net;
typedef struct singa_layer_ctx singa_layer_ctx; /* the host's: what a built-in layer may use of its net */
typedef struct singa_onnx_graph singa_onnx_graph; /* an ONNX graph being written (singa/onnx.h) */

enum {
    SINGA_LAYER_INPUT = 1, /* reads records from outside; has a data cursor and a batch size */
    SINGA_LAYER_LOSS = 2,  /* reports metrics and starts the backward pass itself */
    SINGA_LAYER_RECURRENT = 4, /* unrolled copy i > 0 also gets copy i - 1 as its last source */
    SINGA_LAYER_SPLITS = 16, /* an input layer that reads its part of the batch (net->split) */
    SINGA_LAYER_GIBBS = 8, /* an RBM layer: kCD runs its forward again in every negative phase (net->cd_step > 0), then its backward writes its params' CD gradient */
    /* For partitioning (singa/partition.h).  FEATURE_WISE: output feature k (a column of the
     * blob seen as a matrix, a channel of an N x C x H x W blob) depends on input feature k
     * only, so a part on the feature dimension reads only its own features of the source (a
     * one-to-one connection; every other layer is one-to-all).  FEATURE_PARTS: the layer can
     * be partitioned on the feature dimension (dim 1), its params split with it.  WHOLE_BATCH:
     * its rows are not independent (batch statistics, an output file), so it is never
     * partitioned on the batch dimension. */
    SINGA_LAYER_FEATURE_WISE = 32,
    SINGA_LAYER_FEATURE_PARTS = 64,
    SINGA_LAYER_WHOLE_BATCH = 128,
    /* 256 is taken: ABI 1.2 and 1.3 plugins set it for types that write their params'
     * gradients only through singa_param_grad_gemm or singa_param_grad_begin/_done (see
     * singa/plugin.h). */
};

#define SINGA_CURSOR_LEN 4
#define SINGA_NAME_MAX 255 /* longest layer or param name */

typedef struct singa_layer_type {
    const char *name;
    const singa_field *fields; /* type-specific fields, ending with {NULL} */
    int min_src, max_src;      /* max_src < 0: no limit */
    unsigned flags;
    size_t state_size;         /* bytes of zeroed per-layer state at layer->state */
    /* Shapes data (and grad) from the sources, declares params, checks fields' values. */
    int (*setup)(singa_layer *l, singa_err *err);
    int (*forward)(singa_layer *l, singa_phase phase, singa_err *err);
    /* Adds dL/d(source data) into each source's grad (see singa_layer_grad_beta) and writes
     * param gradients.  NULL for layers no gradient passes through. */
    void (*backward)(singa_layer *l);
    void (*destroy)(singa_layer *l);
    /* Input layers: where reading stands, for checkpoints. */
    void (*get_cursor)(const singa_layer *l, int64_t cursor[SINGA_CURSOR_LEN]);
    int (*set_cursor)(singa_layer *l, const int64_t cursor[SINGA_CURSOR_LEN], singa_err *err);
    /* Whether source `src` is a back edge: read only by later passes over the net (such as the
     * negative phases of contrastive divergence), so it does not order the graph and may list
     * this layer as its own source (an undirected connection written as two directed ones).  A
     * back source is not yet set up when this layer's setup runs: it may read its conf only.
     * NULL: every source is an ordinary one. */
    bool (*back_src)(const singa_layer *l, const singa_layer *src);
    /* Plugin ABI 1.4: writes the layer as ONNX nodes for singa_onnx_export (singa/onnx.h says
     * how), or returns -1 with err set.  NULL: an export whose output depends on the layer is
     * refused naming it.  The built-in types write themselves the same way. */
    int (*export_onnx)(const singa_layer *l, singa_onnx_graph *g, singa_err *err);
} singa_layer_type;

struct singa_layer {
    const singa_layer_type *type;
    char *name;
    const singa_conf *conf;
    singa_net *net;
    singa_layer **src;
    int nsrc;
    singa_tensor data; /* feature blob: one row per instance */
    singa_tensor grad; /* allocated only when needs_grad */
    singa_tensor aux;  /* input layers: one label per row */
    singa_param **params;
    int nparams;
    /* Unrolled in time (SINGA's RNN support): this is copy unroll_index of unroll_len, named
     * "<name>#<index>"; unroll_first is copy 0, whose params the other copies share. */
    int unroll_index, unroll_len;
    singa_layer *unroll_first;
    bool needs_grad;   /* some param lies before this layer, so its gradient is wanted */
    bool grad_written; /* a destination has written grad during this backward pass */
    double forward_seconds, backward_seconds; /* accumulated while the net profiles */
    void *state;
    /* Partitioning (singa/partition.h): this layer is part `index` of `count` of a layer cut on
     * dimension `dim` (0 the batch, 1 the features); a count below 2 when whole. */
    struct { int dim, index, count; } part;
    /* Per source, which slab of a kSlice source this layer reads; NULL: slabs in net order. */
    int *src_slab;
    /* The host's, after every member a plugin may read: the built-in layers' view of their net
     * (src/layers/ctx.h).  Plugins read l->net as before. */
    const singa_layer_ctx *ctx;
};

/* Allocates l->data with this shape (and l->grad when needed). */
int singa_layer_shape(singa_layer *l, int ndim, const int *shape, singa_err *err);
/* The beta for writing into src->grad: 0 for the first writer of a pass, then 1, so several
 * destinations add up their gradients without a separate zeroing pass. */
float singa_layer_grad_beta(singa_layer *src);
/* Declares the index-th param of l; `suffix` names it "<layer>_<suffix>" unless the layer's
 * param list names it.  Without an init table in the param list the param gets the layer's
 * default: init type default_init with its `value` default_value (kConstant's constant,
 * kUniform's and kGaussian's scale); an init table replaces both, its fields defaulting as
 * documented (kConstant: value 1).  In a part of a partitioned layer, l gets a view of the whole
 * param all the parts share (a replica's gradient is added to the others').  axis as in
 * singa_layer_param_split, or -1.  (Plugin ABI 1.3.) */
singa_param *singa_layer_param_value(singa_layer *l, int index, const char *suffix, int ndim,
                                     const int *shape, int axis, int fan_in, int fan_out,
                                     const char *default_init, double default_value, singa_err *err);
/* singa_layer_param_value with the init table's own default value, 1. */
singa_param *singa_layer_param(singa_layer *l, int index, const char *suffix, int ndim,
                               const int *shape, int fan_in, int fan_out, const char *default_init,
                               singa_err *err);
/* singa_layer_param for a param that follows the layer's output features along `axis` (a
 * kInnerProduct's weight rows and bias, a convolution's filters): `shape` is the whole layer's,
 * and in a part on the features (l->part.dim == 1) l gets the view of its part along axis. */
singa_param *singa_layer_param_split(singa_layer *l, int index, const char *suffix, int ndim,
                                     const int *shape, int axis, int fan_in, int fan_out,
                                     const char *default_init, singa_err *err);
/* Before ABI 1.3 the two above gave a default value of 0; plugins built then still call the
 * functions of those names and still get 0, while code built now calls them through these
 * macros (as zlib's deflateInit passes its version), which give 1. */
#define singa_layer_param(l, index, suffix, ndim, shape, fan_in, fan_out, default_init, err) \
    singa_layer_param_value(l, index, suffix, ndim, shape, -1, fan_in, fan_out, default_init, 1.0, err)
#define singa_layer_param_split(l, index, suffix, ndim, shape, axis, fan_in, fan_out, default_init, err) \
    singa_layer_param_value(l, index, suffix, ndim, shape, axis, fan_in, fan_out, default_init, 1.0, err)
/* The layer's output features: `total`, or its part's share of them in a part on the features
 * (-1 with err set when total does not divide). */
int singa_layer_part_size(const singa_layer *l, const char *field, int total, singa_err *err);
/* The instances a loss averages over: its rows, times the parts of a part on the batch, so the
 * parts' gradients add up to the whole layer's. */
int singa_layer_batch(const singa_layer *l);
/* Declares the index-th param of l as layer state (see singa_param.state): shared by name across
 * the phases' nets and checkpointed, but the updater leaves it alone and it has no gradient; the
 * layer updates it itself.  Filled with `value` unless the param list gives an init. */
singa_param *singa_layer_state(singa_layer *l, int index, const char *suffix, int ndim,
                               const int *shape, float value, singa_err *err);
/* Records a metric (e.g. "loss") for this forward pass of the net. */
void singa_layer_metric(singa_layer *l, const char *name, double value);
/* Formats "layer 'name' (type): " + message. */
int singa_layer_err(const singa_layer *l, singa_err *err, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

/* For a fault's signal handler (async-signal-safe): writes to fd which layer the calling thread
 * was running, "in forward of layer 'fc1' (kInnerProduct, built in)" or "in backward of layer
 * 'act' (kSwish) of plugin plugins/swish.so", or that it ran none.  The net records every
 * layer's setup, forward and backward; a plugin's types are recorded wherever they are called. */
void singa_layer_running_report(int fd);

/* The set of known layer types: built-ins plus what plugins add. */
typedef struct singa_registry singa_registry;
singa_registry *singa_registry_new(void);
void singa_registry_free(singa_registry *reg);
int singa_registry_add(singa_registry *reg, const singa_layer_type *type, singa_err *err);
const singa_layer_type *singa_registry_find(const singa_registry *reg, const char *name);
/* For "did you mean" and listings. */
size_t singa_registry_names(const singa_registry *reg, const char **names, size_t cap);

/* Fields every layer accepts (name, type, srclayer, param, exclude, ...). */
extern const singa_field singa_layer_common_fields[];

#pragma GCC visibility pop

#endif
