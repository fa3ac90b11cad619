/* The layer-type registry and what every layer shares: shaping, gradient accumulation, param
 * declaration and metrics. */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "layers/layers.h"
#include "layers/registry.h"
#include "singa/net.h"

const singa_field singa_layer_common_fields[] = {
    {"name", SINGA_FIELD_STR},         {"type", SINGA_FIELD_STR},
    {"srclayer", SINGA_FIELD_STRS},    {"param", SINGA_FIELD_TABLES},
    {"exclude", SINGA_FIELD_STRS},     {"partition_dim", SINGA_FIELD_INT},
    {"location", SINGA_FIELD_INT},     {"unroll_len", SINGA_FIELD_INT},
    {NULL, 0},
};

static const singa_layer_type *const builtins[] = {
    &singa_idx_data_layer,    &singa_mnist_layer,     &singa_label_layer,
    &singa_inner_product_layer, &singa_relu_layer,    &singa_sigmoid_layer,
    &singa_tanh_layer,        &singa_stanh_layer,     &singa_dropout_layer,
    &singa_softmax_loss_layer, &singa_euclidean_loss_layer,
    &singa_activation_layer,
    &singa_softmax_layer,
    &singa_lrn_layer,
    &singa_concate_layer,
    &singa_slice_layer,
    &singa_split_layer,
    &singa_bridge_src_layer, &singa_bridge_dst_layer,
    &singa_accuracy_layer,
    &singa_argsort_layer,
    &singa_onehot_layer,
    &singa_embedding_layer,
    &singa_conv_layer,
    &singa_pooling_layer,
    &singa_bm_layer, &singa_csv_input_layer, &singa_csv_output_layer, &singa_rgb_image_layer,
    &singa_rbm_vis_layer, &singa_rbm_hid_layer,
    &singa_gru_layer,
    &singa_char_rnn_layer,
    &singa_rnn_label_layer,
    &singa_char_rnn_output_layer,
};

singa_registry *singa_registry_new(void)
{
    singa_registry *reg = calloc(1, sizeof *reg);
    size_t n = sizeof builtins / sizeof builtins[0];
    if (!reg || !(reg->types = malloc(n * sizeof *reg->types))) {
        free(reg);
        return NULL;
    }
    memcpy(reg->types, builtins, sizeof builtins);
    reg->n = n;
    return reg;
}

void singa_registry_free(singa_registry *reg)
{
    if (reg) {
        free(reg->types);
        singa_registry_unload_plugins(reg); /* after the types, which live in the plugins */
    }
    free(reg);
}

const singa_layer_type *singa_registry_find(const singa_registry *reg, const char *name)
{
    for (size_t i = 0; i < reg->n; i++)
        if (strcmp(reg->types[i]->name, name) == 0)
            return reg->types[i];
    return NULL;
}

int singa_registry_add(singa_registry *reg, const singa_layer_type *type, singa_err *err)
{
    if (!type->name || !type->setup || !type->forward)
        return singa_err_set(err, "layer type needs a name, setup and forward");
    if (singa_registry_find(reg, type->name))
        return singa_err_set(err, "layer type '%s' is already registered", type->name);
    const singa_layer_type **t = realloc(reg->types, (reg->n + 1) * sizeof *t);
    if (!t)
        return singa_err_set(err, "out of memory");
    reg->types = t;
    t[reg->n++] = type;
    return 0;
}

size_t singa_registry_names(const singa_registry *reg, const char **names, size_t cap)
{
    size_t n = reg->n < cap ? reg->n : cap;
    for (size_t i = 0; i < n; i++)
        names[i] = reg->types[i]->name;
    return n;
}

const char *singa_phase_name(singa_phase phase)
{
    switch (phase) {
    case SINGA_PHASE_TRAIN:
        return "kTrain";
    case SINGA_PHASE_VALIDATION:
        return "kValidation";
    case SINGA_PHASE_TEST:
        return "kTest";
    }
    return "?";
}

int singa_layer_err(const singa_layer *l, singa_err *err, const char *fmt, ...)
{
    if (err) {
        char msg[SINGA_ERR_LEN];
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(msg, sizeof msg, fmt, ap);
        va_end(ap);
        snprintf(err->msg, sizeof err->msg, "layer '%s' (%s): %s", l->name, l->type->name, msg);
    }
    return -1;
}

int singa_layer_shape(singa_layer *l, int ndim, const int *shape, singa_err *err)
{
    singa_tensor_free(&l->data);
    singa_tensor_free(&l->grad);
    if (singa_tensor_init(&l->data, ndim, shape, err) < 0)
        return singa_err_prefix(err, "layer '%s' (%s): ", l->name, l->type->name);
    if (l->needs_grad && singa_tensor_init(&l->grad, ndim, shape, err) < 0)
        return singa_err_prefix(err, "layer '%s' (%s): ", l->name, l->type->name);
    return 0;
}

int singa_layer_setup_like_src(singa_layer *l, singa_err *err)
{
    return singa_layer_shape(l, l->src[0]->data.ndim, l->src[0]->data.shape, err);
}

/* Reads `name`_x / `name`_y falling back to `name`, then to def. */
void singa_layer_conf_xy(const singa_layer *l, const char *name, int def, int *x, int *y)
{
    char key[32];
    int both = singa_conf_int(l->conf, name, def);
    snprintf(key, sizeof key, "%s_x", name);
    *x = singa_conf_int(l->conf, key, both);
    snprintf(key, sizeof key, "%s_y", name);
    *y = singa_conf_int(l->conf, key, both);
}

/* The shape checks convolution and pooling share; sets the output size. */
int singa_layer_window(singa_layer *l, int h, int w, int ky, int kx, int py, int px, int sy,
                       int sx, int *oh, int *ow, singa_err *err)
{
    if (ky <= 0 || kx <= 0)
        return singa_layer_err(l, err, "field 'kernel' (or kernel_x/kernel_y) must be positive");
    if (sy <= 0 || sx <= 0)
        return singa_layer_err(l, err, "field 'stride' (or stride_x/stride_y) must be positive");
    if (py < 0 || px < 0 || py >= ky || px >= kx)
        return singa_layer_err(l, err, "field 'pad' must be in 0..kernel-1");
    if (h + 2 * py < ky || w + 2 * px < kx)
        return singa_layer_err(l, err, "a %dx%d kernel does not fit the %dx%d input (padding %d, %d)",
                               ky, kx, h, w, py, px);
    *oh = (h + 2 * py - ky) / sy + 1;
    *ow = (w + 2 * px - kx) / sx + 1;
    return 0;
}

float singa_layer_grad_beta(singa_layer *src)
{
    float beta = src->grad_written ? 1.0f : 0.0f;
    src->grad_written = true;
    return beta;
}

void singa_layer_metric(singa_layer *l, const char *name, double value)
{
    singa_metrics_add(&l->net->metrics, name, value);
}

/* The part's view of whole param w along axis (all of w when axis < 0 or the part is on the
 * batch), appended to l's params. */
static singa_param *add_view(singa_layer *l, singa_param *w, int axis, singa_err *err)
{
    singa_param *v = calloc(1, sizeof *v);
    size_t len = strlen(w->name) + 16;
    if (!v || !(v->name = malloc(len)) || !(v->layer = strdup(l->name))) {
        if (v)
            free(v->name);
        free(v);
        singa_err_set(err, "out of memory");
        return NULL;
    }
    snprintf(v->name, len, "%s@%d", w->name, l->part.index);
    v->whole = w;
    v->data = w->data;
    v->grad = w->grad;
    v->data.owns = v->grad.owns = false;
    if (l->part.dim == 1 && axis >= 0) {
        int n = w->data.shape[axis] / l->part.count, at = n * l->part.index;
        if (w->data.ndim == 1) { /* a range of a vector */
            v->data.data += at;
            v->grad.data += at;
            v->data.shape[0] = v->grad.shape[0] = n;
            v->data.size = v->grad.size = (size_t)n;
        } else {
            v->data = axis == 0 ? singa_tensor_view_rows(&w->data, at, n) : singa_tensor_view_cols(&w->data, at, n);
            v->grad = axis == 0 ? singa_tensor_view_rows(&w->grad, at, n) : singa_tensor_view_cols(&w->grad, at, n);
        }
        v->disjoint = true;
    }
    w->nviews++;
    l->params[l->nparams++] = v;
    return v;
}

int singa_layer_part_size(const singa_layer *l, const char *field, int total, singa_err *err)
{
    if (l->part.dim != 1 || l->part.count < 2)
        return total;
    if (total % l->part.count != 0)
        return singa_layer_err(l, err, "field '%s' (%d) does not divide into %d parts on the features", field,
                               total, l->part.count);
    return total / l->part.count;
}

int singa_layer_batch(const singa_layer *l)
{
    return singa_tensor_rows(&l->data) * (l->part.dim == 0 && l->part.count > 1 ? l->part.count : 1);
}

/* The symbols plugins built before ABI 1.3 call (singa/layer.h): their default value was 0. */
#undef singa_layer_param
#undef singa_layer_param_split
singa_param *singa_layer_param(singa_layer *l, int index, const char *suffix, int ndim,
                               const int *shape, int fan_in, int fan_out, const char *default_init,
                               singa_err *err)
{
    return singa_layer_param_value(l, index, suffix, ndim, shape, -1, fan_in, fan_out, default_init, 0.0, err);
}

singa_param *singa_layer_param_split(singa_layer *l, int index, const char *suffix, int ndim,
                                     const int *shape, int axis, int fan_in, int fan_out,
                                     const char *default_init, singa_err *err)
{
    return singa_layer_param_value(l, index, suffix, ndim, shape, axis, fan_in, fan_out, default_init, 0.0, err);
}

singa_param *singa_layer_param_value(singa_layer *l, int index, const char *suffix, int ndim,
                                     const int *shape, int axis, int fan_in, int fan_out,
                                     const char *default_init, double default_value, singa_err *err)
{
    const singa_conf *list = singa_conf_get(l->conf, "param");
    const singa_conf *pc = list && (size_t)index < list->n ? list->items[index] : NULL;
    char what[SINGA_NAME_MAX + 64], defname[2 * SINGA_NAME_MAX + 2];
    snprintf(what, sizeof what, "layer '%s' (%s): param %d", l->name, l->type->name, index + 1);
    if (pc) {
        const singa_field *const schemas[] = {singa_param_fields, NULL};
        if (singa_conf_check(pc, schemas, what, err) < 0)
            return NULL;
    }
    snprintf(defname, sizeof defname, "%s_%s", singa_conf_str(l->conf, "name", l->name), suffix);
    const char *name = singa_conf_str(pc, "name", defname);
    const char *share = singa_conf_str(pc, "share_from", NULL);
    char copyname[sizeof defname + 16];
    if (l->unroll_index > 0) { /* copies of an unrolled layer share copy 0's params */
        if (index >= l->unroll_first->nparams) {
            singa_err_set(err, "%s: copy %d declares more params than copy 0", what, l->unroll_index);
            return NULL;
        }
        share = l->unroll_first->params[index]->name;
        snprintf(copyname, sizeof copyname, "%s#%d", share, l->unroll_index);
        name = copyname;
    }
    if (strlen(name) >= sizeof defname || !*name) {
        singa_err_set(err, "%s: a param name must have 1 to %zu characters", what, sizeof defname - 1);
        return NULL;
    }
    singa_params *ps = l->net->params;
    singa_param *owner = NULL, *p;
    if (share) {
        if (!(owner = singa_params_find(ps, share))) {
            singa_err_set(err, "%s ('%s'): share_from names unknown param '%s' (it must be declared by an earlier layer)",
                          what, name, share);
            return NULL;
        }
        while (owner->owner)
            owner = owner->owner;
    }
    if (index != l->nparams) {
        singa_err_set(err, "%s: params must be declared in order", what);
        return NULL;
    }
    singa_param **arr = realloc(l->params, (size_t)(l->nparams + 1) * sizeof *arr);
    if (!arr) {
        singa_err_set(err, "out of memory");
        return NULL;
    }
    l->params = arr;
    bool part = l->part.count > 1;
    if (part && (l->unroll_len > 1 || share)) {
        singa_err_set(err, "%s: a partitioned layer's params can be neither unrolled nor shared (share_from), so far", what);
        return NULL;
    }
    singa_param *prev = singa_params_find(ps, name);
    if (prev && prev->net == l->net && !(part && prev->decl == l->conf)) {
        singa_err_set(err, "%s: param name '%s' is already used by layer '%s' in this net (use share_from to share a value)",
                      what, name, prev->layer);
        return NULL;
    }
    bool existed = prev != NULL;
    if (!(p = singa_params_declare(ps, name, l->name, ndim, shape, err))) {
        singa_err_prefix(err, "%s: ", what);
        return NULL;
    }
    if (!existed) {
        p->lr_scale = (float)singa_conf_num(pc, "lr_scale", 1.0);
        p->wd_scale = (float)singa_conf_num(pc, "wd_scale", 1.0);
        p->fan_in = fan_in;
        p->fan_out = fan_out;
        p->default_init = default_init;
        p->default_value = default_value;
        const singa_conf *init = singa_conf_get(pc, "init");
        if (init) {
            const singa_field *const schemas[] = {singa_init_fields, NULL};
            char iw[200];
            snprintf(iw, sizeof iw, "%s ('%s'): init", what, name);
            if (singa_conf_check(init, schemas, iw, err) < 0)
                return NULL;
            if (!(p->init = singa_conf_clone(init))) {
                singa_err_set(err, "out of memory");
                return NULL;
            }
        }
        if (owner) {
            if (!singa_tensor_same_shape(&owner->data, &p->data)) {
                char a[64], b[64];
                singa_err_set(err, "%s ('%s'): shape %s differs from shared param '%s' (%s)", what,
                              name, singa_tensor_shape_str(&p->data, a, sizeof a), owner->name,
                              singa_tensor_shape_str(&owner->data, b, sizeof b));
                return NULL;
            }
            singa_tensor_free(&p->data);
            p->data = owner->data;
            p->data.owns = false;
            p->owner = owner;
        } else if (ps->defer_init ? singa_param_init_held(p, l->net->rng, NULL, 0, err) < 0
                                  : singa_param_init_values(p, l->net->rng, err) < 0) {
            singa_err_prefix(err, "%s ('%s'): ", what, name);
            return NULL;
        }
    }
    p->net = l->net;
    p->decl = l->conf;
    if (l->net->phase == SINGA_PHASE_TRAIN && !p->trained) {
        p->trained = true;
        if (p->owner)
            p->owner->nsharers++;
    }
    if (part) {
        if (axis >= 0 && l->part.dim == 1 && p->data.shape[axis] % l->part.count != 0) {
            singa_err_set(err, "%s ('%s'): dimension %d (%d) does not divide into %d parts on the features", what,
                          name, axis, p->data.shape[axis], l->part.count);
            return NULL;
        }
        return add_view(l, p, axis, err);
    }
    l->params[l->nparams++] = p;
    return p;
}
