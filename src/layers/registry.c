/* The layer-type registry and what every layer shares: shaping, gradient accumulation and
 * metrics (declaring params: layer_param.c). */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "layers/ctx.h"
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
    &singa_shard_data_layer, &singa_record_input_layer, &singa_store_input_layer,
    &singa_image_preprocess_layer,
};

/* The built-in types that write their params' gradients in turns (SINGA_TYPE_GRAD_TURNS). */
static const singa_layer_type *const grad_turns[] = {&singa_inner_product_layer, &singa_conv_layer};

singa_registry *singa_registry_new(void)
{
    singa_registry *reg = calloc(1, sizeof *reg);
    size_t n = sizeof builtins / sizeof builtins[0];
    if (!reg || !(reg->types = malloc(n * sizeof *reg->types)) || !(reg->traits = calloc(n, sizeof *reg->traits))) {
        if (reg)
            free(reg->types);
        free(reg);
        return NULL;
    }
    memcpy(reg->types, builtins, sizeof builtins);
    reg->n = n;
    for (size_t i = 0; i < n; i++)
        for (size_t k = 0; k < sizeof grad_turns / sizeof grad_turns[0]; k++)
            if (builtins[i] == grad_turns[k])
                reg->traits[i] |= SINGA_TYPE_GRAD_TURNS;
    return reg;
}

void singa_registry_free(singa_registry *reg)
{
    if (reg) {
        free(reg->types);
        free(reg->traits);
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

int singa_registry_add_traits(singa_registry *reg, const singa_layer_type *type, unsigned traits, singa_err *err)
{
    if (!type->name || !type->setup || !type->forward)
        return singa_err_set(err, "layer type needs a name, setup and forward");
    if (singa_registry_find(reg, type->name))
        return singa_err_set(err, "layer type '%s' is already registered", type->name);
    const singa_layer_type **t = realloc(reg->types, (reg->n + 1) * sizeof *t);
    if (t)
        reg->types = t;
    unsigned *tr = t ? realloc(reg->traits, (reg->n + 1) * sizeof *tr) : NULL;
    if (!tr)
        return singa_err_set(err, "out of memory");
    reg->traits = tr;
    tr[reg->n] = traits;
    t[reg->n++] = type;
    return 0;
}

int singa_registry_add(singa_registry *reg, const singa_layer_type *type, singa_err *err)
{
    return singa_registry_add_traits(reg, type, 0, err);
}

unsigned singa_registry_traits(const singa_registry *reg, const singa_layer_type *type)
{
    for (size_t i = 0; i < reg->n; i++)
        if (reg->types[i] == type)
            return reg->traits[i];
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
    singa_metrics_add(l->ctx->metrics, name, value);
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
