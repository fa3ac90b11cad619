/* Element-wise activations: kReLU (negative_slope), kSigmoid, kTanh and kSTanh
 * (1.7159047 * tanh(0.6666667 x)), and kActivation, SINGA's ActivationLayer, which picks one of
 * them with its `activation` field ("RELU", "SIGMOID", "TANH", "STANH"; SINGA's
 * activation_conf.type, renamed because `type` names the layer type here).  All five share one
 * forward and one backward; setup only decides which function runs.  Gradients are computed
 * from the outputs. */
#include <stdio.h>
#include <string.h>

#include "core/vmath.h"
#include "layers/layers.h"
#include "onnx/graph.h"

#define STANH_A 1.7159047f
#define STANH_B 0.6666667f

typedef enum act_kind { ACT_RELU, ACT_SIGMOID, ACT_TANH, ACT_STANH } act_kind;

/* Indexed by act_kind: the names kActivation accepts. */
static const char *const act_names[] = {"RELU", "SIGMOID", "TANH", "STANH"};

typedef struct act_state {
    act_kind kind;
    float slope; /* RELU's negative_slope */
} act_state;

static const singa_field no_fields[] = {{NULL, 0}};
static const singa_field relu_fields[] = {{"negative_slope", SINGA_FIELD_NUM}, {NULL, 0}};
static const singa_field activation_fields[] = {
    {"activation", SINGA_FIELD_STR}, {"negative_slope", SINGA_FIELD_NUM}, {NULL, 0},
};

static int setup_kind(singa_layer *l, act_kind kind, singa_err *err)
{
    act_state *s = l->state;
    s->kind = kind;
    s->slope = (float)singa_conf_num(l->conf, "negative_slope", 0.0);
    return singa_layer_setup_like_src(l, err);
}

static int setup_relu(singa_layer *l, singa_err *err) { return setup_kind(l, ACT_RELU, err); }
static int setup_sigmoid(singa_layer *l, singa_err *err) { return setup_kind(l, ACT_SIGMOID, err); }
static int setup_tanh(singa_layer *l, singa_err *err) { return setup_kind(l, ACT_TANH, err); }
static int setup_stanh(singa_layer *l, singa_err *err) { return setup_kind(l, ACT_STANH, err); }

static int setup_activation(singa_layer *l, singa_err *err)
{
    const size_t n = sizeof act_names / sizeof act_names[0];
    const char *name = singa_conf_str(l->conf, "activation", NULL);
    if (!name)
        return singa_layer_err(l, err, "field 'activation' is required (\"RELU\", \"SIGMOID\", \"TANH\" or \"STANH\")");
    size_t k = 0;
    while (k < n && strcmp(name, act_names[k]) != 0)
        k++;
    if (k == n) {
        char what[SINGA_NAME_MAX + 64];
        snprintf(what, sizeof what, "layer '%s' (%s): field 'activation'", l->name, l->type->name);
        singa_err_unknown(err, what, "activation", name, act_names, n);
        if (err && !strstr(err->msg, "did you mean"))
            singa_appendf(err->msg, sizeof err->msg, " (one of \"RELU\", \"SIGMOID\", \"TANH\", \"STANH\")");
        return -1;
    }
    if (k != ACT_RELU && singa_conf_get(l->conf, "negative_slope"))
        return singa_layer_err(l, err, "field 'negative_slope' applies to activation \"RELU\" only, not \"%s\"", name);
    return setup_kind(l, (act_kind)k, err);
}

static int forward(singa_layer *l, singa_phase phase, singa_err *err)
{
    const act_state *s = l->state;
    const float *x = l->src[0]->data.data;
    float *y = l->data.data;
    size_t n = l->data.size;
    switch (s->kind) {
    case ACT_RELU:
        singa_vrelu(y, x, n, s->slope);
        break;
    case ACT_SIGMOID:
        singa_vsigmoid(y, x, n);
        break;
    case ACT_TANH:
        singa_vtanh(y, x, n, 1.0f, 1.0f);
        break;
    case ACT_STANH:
        singa_vtanh(y, x, n, STANH_B, STANH_A);
        break;
    }
    return 0;
}

static void backward(singa_layer *l)
{
    const act_state *s = l->state;
    singa_layer *src = l->src[0];
    if (!src->needs_grad)
        return;
    float beta = singa_layer_grad_beta(src), *dx = src->grad.data;
    const float *dy = l->grad.data, *y = l->data.data;
    size_t n = l->data.size;
    switch (s->kind) {
    case ACT_RELU:
        singa_vrelu_grad(dx, dy, y, n, s->slope, beta);
        break;
    case ACT_SIGMOID:
        singa_vsigmoid_grad(dx, dy, y, n, beta);
        break;
    case ACT_TANH:
        singa_vtanh_grad(dx, dy, y, n, 1.0f, 1.0f, beta);
        break;
    case ACT_STANH:
        singa_vtanh_grad(dx, dy, y, n, STANH_B, STANH_A, beta);
        break;
    }
}

static void relu(singa_onnx_graph *x, const singa_layer *l)
{
    double slope = singa_conf_num(l->conf, "negative_slope", 0.0);
    if (slope == 0) {
        singa_ox_node(x, "Relu", l->name, 1, l->src[0]->name, NULL, NULL);
        return;
    }
    size_t n = singa_ox_begin(x, "LeakyRelu", l->name, 1, l->src[0]->name);
    singa_ox_attr_f(x, "alpha", (float)slope);
    singa_ox_end(x, n);
}

/* STANH_A * tanh(STANH_B x). */
static void stanh(singa_onnx_graph *x, const singa_layer *l)
{
    char a[SINGA_OX_NAME_LEN], b[SINGA_OX_NAME_LEN], bx[SINGA_OX_NAME_LEN], t[SINGA_OX_NAME_LEN];
    singa_ox_scalar(x, singa_ox_name(b, l, "stanh_b"), STANH_B);
    singa_ox_scalar(x, singa_ox_name(a, l, "stanh_a"), STANH_A);
    singa_ox_node(x, "Mul", singa_ox_name(bx, l, "bx"), 2, l->src[0]->name, b, NULL);
    singa_ox_node(x, "Tanh", singa_ox_name(t, l, "tanh"), 1, bx, NULL, NULL);
    singa_ox_node(x, "Mul", l->name, 2, t, a, NULL);
}

static int export_relu(const singa_layer *l, singa_onnx_graph *x, singa_err *err)
{
    relu(x, l);
    return 0;
}

static int export_sigmoid(const singa_layer *l, singa_onnx_graph *x, singa_err *err)
{
    singa_ox_node(x, "Sigmoid", l->name, 1, l->src[0]->name, NULL, NULL);
    return 0;
}

static int export_tanh(const singa_layer *l, singa_onnx_graph *x, singa_err *err)
{
    singa_ox_node(x, "Tanh", l->name, 1, l->src[0]->name, NULL, NULL);
    return 0;
}

static int export_stanh(const singa_layer *l, singa_onnx_graph *x, singa_err *err)
{
    stanh(x, l);
    return 0;
}

static int export_activation(const singa_layer *l, singa_onnx_graph *x, singa_err *err)
{
    const char *a = singa_conf_str(l->conf, "activation", "");
    if (strcmp(a, "RELU") == 0)
        return export_relu(l, x, err);
    if (strcmp(a, "SIGMOID") == 0)
        return export_sigmoid(l, x, err);
    if (strcmp(a, "TANH") == 0)
        return export_tanh(l, x, err);
    return export_stanh(l, x, err);
}

#define ACTIVATION(var, type_name, field_list, setup_fn, export)                                        \
    const singa_layer_type var = {                                                                 \
        .name = type_name, .fields = field_list, .min_src = 1, .max_src = 1,                       \
        .flags = SINGA_LAYER_FEATURE_WISE | SINGA_LAYER_FEATURE_PARTS,                            \
        .state_size = sizeof(act_state), .setup = setup_fn, .forward = forward,                    \
        .backward = backward, .export_onnx = export,                                               \
    }

ACTIVATION(singa_relu_layer, "kReLU", relu_fields, setup_relu, export_relu);
ACTIVATION(singa_sigmoid_layer, "kSigmoid", no_fields, setup_sigmoid, export_sigmoid);
ACTIVATION(singa_tanh_layer, "kTanh", no_fields, setup_tanh, export_tanh);
ACTIVATION(singa_stanh_layer, "kSTanh", no_fields, setup_stanh, export_stanh);
ACTIVATION(singa_activation_layer, "kActivation", activation_fields, setup_activation, export_activation);
