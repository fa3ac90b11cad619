/* kSwish: y = x * sigmoid(beta * x) (Ramachandran, Zoph and Le, "Searching for Activation
 * Functions", 2017); beta = 1 (the default) is SiLU, PyTorch's nn.SiLU.  A plugin: `make`
 * builds it as plugins/swish.so and singa-tui loads it at run time.  It uses only the public
 * API (singa/plugin.h and what it includes), as a plugin written outside the project would.
 *
 * The backward pass recomputes the sigmoid from the input rather than keeping it from the
 * forward pass: one expf per element costs less than a second blob's memory traffic. */
#include <math.h>
#include <stdio.h>
#include <singa/plugin.h>

typedef struct swish_state {
    float beta;
} swish_state;

static const singa_field fields[] = {{"beta", SINGA_FIELD_NUM}, {NULL, 0}};

static float sigmoid(float v) { return 1.0f / (1.0f + expf(-v)); }

static int setup(singa_layer *l, singa_err *err)
{
    swish_state *s = l->state;
    s->beta = (float)singa_conf_num(l->conf, "beta", 1.0);
    if (!isfinite(s->beta))
        return singa_layer_err(l, err, "field 'beta' must be a finite number");
    const singa_tensor *x = &l->src[0]->data;
    return singa_layer_shape(l, x->ndim, x->shape, err);
}

static int forward(singa_layer *l, singa_phase phase, singa_err *err)
{
    const swish_state *s = l->state;
    const singa_tensor *x = &l->src[0]->data;
    int rows = singa_tensor_rows(x), cols = singa_tensor_cols(x);
    for (int r = 0; r < rows; r++) { /* rows are ld apart: the source may be a view */
        const float *xr = x->data + (size_t)r * (size_t)x->ld;
        float *yr = l->data.data + (size_t)r * (size_t)l->data.ld;
        for (int c = 0; c < cols; c++)
            yr[c] = xr[c] * sigmoid(s->beta * xr[c]);
    }
    return 0;
}

/* dy/dx = sg + beta x sg (1 - sg), sg = sigmoid(beta x). */
static void backward(singa_layer *l)
{
    const swish_state *s = l->state;
    singa_layer *src = l->src[0];
    if (!src->needs_grad)
        return;
    float acc = singa_layer_grad_beta(src); /* 0: the first writer of this pass */
    const singa_tensor *x = &src->data;
    int rows = singa_tensor_rows(x), cols = singa_tensor_cols(x);
    for (int r = 0; r < rows; r++) {
        const float *xr = x->data + (size_t)r * (size_t)x->ld;
        const float *dy = l->grad.data + (size_t)r * (size_t)l->grad.ld;
        float *dx = src->grad.data + (size_t)r * (size_t)src->grad.ld;
        for (int c = 0; c < cols; c++) {
            float sg = sigmoid(s->beta * xr[c]);
            float g = dy[c] * (sg + s->beta * xr[c] * sg * (1.0f - sg));
            dx[c] = acc != 0.0f ? dx[c] + g : g; /* never 0 * an old value, which may be NaN */
        }
    }
}

/* ONNX export (ABI 1.4): x * Sigmoid(beta x), the ops of the forward pass. */
static int export_onnx(const singa_layer *l, singa_onnx_graph *g, singa_err *err)
{
    const swish_state *s = l->state;
    char beta[SINGA_NAME_MAX + 16], bx[SINGA_NAME_MAX + 16], sg[SINGA_NAME_MAX + 16];
    snprintf(beta, sizeof beta, "%s/beta", l->name);
    snprintf(bx, sizeof bx, "%s/bx", l->name);
    snprintf(sg, sizeof sg, "%s/sigmoid", l->name);
    const char *x = l->src[0]->name;
    const char *mul_in[] = {x, beta}, *sg_in[] = {bx}, *out_in[] = {x, sg};
    if (singa_onnx_initializer(g, beta, 0, NULL, &s->beta, err) < 0 ||
        singa_onnx_node(g, "Mul", bx, 2, mul_in, 0, NULL, err) < 0 ||
        singa_onnx_node(g, "Sigmoid", sg, 1, sg_in, 0, NULL, err) < 0)
        return -1;
    return singa_onnx_node(g, "Mul", l->name, 2, out_in, 0, NULL, err);
}

static const singa_layer_type swish_layer = {
    .name = "kSwish", .fields = fields, .min_src = 1, .max_src = 1,
    /* element-wise without params: a part on the features needs only its own features */
    .flags = SINGA_LAYER_FEATURE_WISE | SINGA_LAYER_FEATURE_PARTS,
    .state_size = sizeof(swish_state), .setup = setup, .forward = forward, .backward = backward,
    .export_onnx = export_onnx,
};

static int init(singa_plugin_ctx *ctx, singa_err *err)
{
    /* --check-plugin: a beta other than 1, on the default 4 x 6 input. */
    static const singa_plugin_example example = {.conf = "{ beta = 1.5 }"};
    return singa_plugin_add_layer(ctx, &swish_layer, &example, err);
}

SINGA_PLUGIN("swish", "1.0.0", "kSwish: x * sigmoid(beta x), SiLU at beta = 1", init);
