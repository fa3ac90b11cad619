/* kSlice: cuts its source into num_slices equal slabs along slice_dim, 0 (instances: rows) or 1
 * (features: columns of the matrix view, channels for N x C x H x W blobs), and gives slab k to
 * its k-th destination, as SINGA's SliceLayer gave slab k to the destination of partition k.
 * Destinations are counted in the order the net runs them (the order of the layer list, unless
 * a destination also waits on a layer listed after it); a layer that lists the slice twice takes
 * two consecutive slabs.  In a partitioned net a destination names its slab (src_slab).  More destinations than slices is an error; slices nobody takes get a
 * zero gradient.
 *
 * Every layer reads its sources' `data` blob, so to give each destination its own slab the
 * slice layer, at setup, points each destination's source entry at a part: a stand-in layer
 * that owns that slab's data and gradient and lists the slice as its own source.  Destinations
 * then read and write the part like any source; the slice fills the parts forward and gathers
 * their gradients backward.  The slice's own data blob holds its whole input, so a slice with no
 * destination (as in a gradient check) is the identity. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "layers/ctx.h"
#include "layers/layers.h"
#include "onnx/graph.h"
#include "singa/net.h"

typedef struct slice_state {
    int dim, num, width; /* slice_dim, num_slices, rows or columns per slab */
    int nparts;          /* destinations, <= num */
    singa_layer *parts;  /* part k feeds destination k */
    int *slab;           /* which slab part k holds: k, or what the destination asks (src_slab) */
    singa_layer *self;   /* the parts' source list: this layer */
} slice_state;

static const singa_field fields[] = {
    {"slice_dim", SINGA_FIELD_INT}, {"num_slices", SINGA_FIELD_INT}, {NULL, 0},
};

/* Part `name` = "<slice>[k]" of kSlice layer s: columns [k w, (k + 1) w) of its
 * source's matrix view, in the part's shape. */
static int export_part(const singa_layer *p, singa_onnx_graph *x, singa_err *err)
{
    const singa_layer *s = p->src[0];
    int k = atoi(strrchr(p->name, '[') + 1), num = singa_conf_int(s->conf, "num_slices", 1);
    int64_t w = singa_tensor_cols(&s->src[0]->data) / num;
    char flat[SINGA_OX_NAME_LEN], b[SINGA_OX_NAME_LEN], e[SINGA_OX_NAME_LEN], axes[SINGA_OX_NAME_LEN], cut[SINGA_OX_NAME_LEN];
    const char *in = s->src[0]->name;
    if (s->src[0]->data.ndim > 2) {
        size_t n = singa_ox_begin(x, "Flatten", singa_ox_name(flat, p, "flat"), 1, in);
        singa_ox_attr_i(x, "axis", 1);
        singa_ox_end(x, n);
        in = flat;
    }
    int64_t begin = k * w, end = (k + 1) * w, one = 1;
    singa_ox_ints(x, singa_ox_name(b, p, "starts"), 1, &begin);
    singa_ox_ints(x, singa_ox_name(e, p, "ends"), 1, &end);
    singa_ox_ints(x, singa_ox_name(axes, p, "axes"), 1, &one);
    size_t n = singa_ox_begin(x, "Slice", p->data.ndim > 2 ? singa_ox_name(cut, p, "cut") : p->name, 4, in, b, e, axes);
    singa_ox_end(x, n);
    if (p->data.ndim > 2)
        singa_ox_reshape_to(x, p, cut);
    return 0;
}

/* Parts are not in the net; only their name, type and blobs are ever looked at (and the ONNX
 * export writes a part its destination reads). */
static const singa_layer_type part_type = {.name = "kSlice part", .export_onnx = export_part};

static void free_parts(slice_state *s)
{
    for (int k = 0; k < s->nparts; k++) {
        singa_tensor_free(&s->parts[k].data);
        singa_tensor_free(&s->parts[k].grad);
        singa_tensor_free(&s->parts[k].aux);
        free(s->parts[k].name);
    }
    free(s->parts);
    free(s->slab);
    s->parts = NULL;
    s->slab = NULL;
    s->nparts = 0;
}

/* Part k of the slice: slab `slab`, the source of entry d of a destination. */
static int add_part(singa_layer *l, slice_state *s, singa_layer_dst d, int ndim, const int *shape, singa_err *err)
{
    singa_layer *dst = d.layer;
    int slab = dst->src_slab ? dst->src_slab[d.src] : s->nparts;
    if (slab < 0 || slab >= s->num)
        return singa_layer_err(l, err, "'%s' reads slab %d of %d", dst->name, slab, s->num);
    s->slab[s->nparts] = slab;
    singa_layer *p = &s->parts[s->nparts++];
    size_t len = strlen(l->name) + 16;
    if (!(p->name = malloc(len)))
        return singa_err_set(err, "out of memory");
    snprintf(p->name, len, "%s[%d]", l->name, slab);
    p->type = &part_type;
    p->conf = l->conf;
    p->net = l->net;
    p->ctx = l->ctx;
    p->src = &s->self;
    p->nsrc = 1;
    p->needs_grad = l->needs_grad;
    const singa_tensor *aux = &l->src[0]->aux; /* labels: a slab of rows takes its own */
    if (singa_layer_shape(p, ndim, shape, err) < 0 ||
        (aux->data && singa_layer_aux_rows(p, s->dim == 0 ? s->width : aux->shape[0], err) < 0))
        return -1;
    dst->src[d.src] = p;
    return 0;
}

/* One part per destination, in net order. */
static int add_parts(singa_layer *l, slice_state *s, int ndst, int ndim, const int *shape, singa_err *err)
{
    s->self = l;
    singa_layer_dst *dsts = NULL;
    if (ndst && (!(s->parts = calloc((size_t)ndst, sizeof *s->parts)) || !(s->slab = calloc((size_t)ndst, sizeof *s->slab)) ||
                 !(dsts = calloc((size_t)ndst, sizeof *dsts)))) {
        free(dsts);
        return singa_err_set(err, "out of memory");
    }
    l->ctx->dsts(l, dsts, ndst);
    int rc = 0;
    for (int i = 0; i < ndst && rc == 0; i++)
        rc = add_part(l, s, dsts[i], ndim, shape, err);
    free(dsts);
    return rc;
}

static int setup(singa_layer *l, singa_err *err)
{
    slice_state *s = l->state;
    const singa_tensor *in = &l->src[0]->data;
    if ((s->dim = singa_layer_conf_dim(l, "slice_dim", in->ndim, err)) < 0)
        return -1;
    s->num = singa_conf_int(l->conf, "num_slices", 0);
    if (s->num <= 0)
        return singa_layer_err(l, err, "field 'num_slices' must be a positive integer");
    /* Dimension 1 is the feature dimension of the blob seen as a matrix (rows are instances). */
    int extent = s->dim == 0 ? in->shape[0] : singa_tensor_cols(in);
    if (extent % s->num != 0) {
        char b[64];
        return singa_layer_err(l, err, "dimension %d of the input (%s from '%s') does not divide into %d equal slices",
                               s->dim, singa_tensor_shape_str(in, b, sizeof b), l->src[0]->name, s->num);
    }
    int ndst = singa_layer_count_dsts(l);
    if (ndst > s->num)
        return singa_layer_err(l, err, "%d destinations take slices of this layer but 'num_slices' is %d", ndst, s->num);
    if (singa_layer_shape(l, in->ndim, in->shape, err) < 0)
        return -1;
    int shape[SINGA_MAX_DIMS], ndim = in->ndim;
    memcpy(shape, in->shape, sizeof shape);
    if (s->dim == 0 || shape[1] % s->num == 0) {
        shape[s->dim] /= s->num; /* whole channels (or rows) per slab: keep the shape */
    } else {
        shape[1] = extent / s->num; /* slabs cut across channels are plain matrices */
        ndim = 2;
    }
    s->width = s->dim == 0 ? shape[0] : singa_tensor_cols(in) / s->num;
    return add_parts(l, s, ndst, ndim, shape, err);
}

static int forward(singa_layer *l, singa_phase phase, singa_err *err)
{
    slice_state *s = l->state;
    const singa_tensor *in = &l->src[0]->data;
    singa_tensor_copy(&l->data, in);
    for (int k = 0; k < s->nparts; k++) {
        singa_tensor slab = singa_layer_slab(in, s->dim, s->slab[k] * s->width, s->width);
        singa_tensor_copy(&s->parts[k].data, &slab);
        singa_layer *p = &s->parts[k];
        if (p->aux.data)
            singa_layer_aux_copy(&p->aux, 0, &l->src[0]->aux, s->dim == 0 ? s->slab[k] * s->width : 0, p->aux.shape[0]);
        s->parts[k].grad_written = false; /* the net resets only its own layers */
    }
    return 0;
}

static void backward(singa_layer *l)
{
    slice_state *s = l->state;
    singa_layer *src = l->src[0];
    if (!src->needs_grad)
        return;
    float beta = singa_layer_grad_beta(src);
    if (!s->nparts) {
        singa_layer_grad_add(&src->grad, beta, &l->grad);
        return;
    }
    for (int k = 0; k < s->num; k++) {
        singa_tensor slab = singa_layer_slab(&src->grad, s->dim, k * s->width, s->width);
        float b = beta;
        for (int i = 0; i < s->nparts; i++) {
            singa_layer *p = &s->parts[i];
            if (s->slab[i] == k && p->grad_written) {
                singa_layer_grad_add(&slab, b, &p->grad);
                b = 1.0f;
            }
        }
        if (b == 0.0f) /* no reader wrote this slab's gradient */
            singa_tensor_fill(&slab, 0.0f);
    }
    for (int i = 0; i < s->nparts; i++)
        s->parts[i].grad_written = false;
}

static void destroy(singa_layer *l) { free_parts(l->state); }

static int export_onnx(const singa_layer *l, singa_onnx_graph *x, singa_err *err)
{
    if (singa_conf_int(l->conf, "slice_dim", 0) != 1)
        return singa_err_set(err, "slice_dim 0 cuts the batch into instances; ONNX export needs every "
                                  "instance computed on its own (slice_dim = 1)");
    return 0; /* its parts, which its destinations read, are written as they are needed */
}

const singa_layer_type singa_slice_layer = {
    .name = "kSlice", .fields = fields, .min_src = 1, .max_src = 1,
    .state_size = sizeof(slice_state), .setup = setup, .forward = forward,
    .backward = backward, .destroy = destroy,
    .export_onnx = export_onnx,
};
