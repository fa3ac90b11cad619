/* A test-only plugin built as a plugin of ABI 1.2 was (t/2730-plugin-grad-turns.lua): kDenseOld,
 * y = x W^T, whose type sets flag 256 (SINGA_LAYER_GRAD_TURNS until 1.3) and writes W's gradient
 * through singa_param_grad_gemm, so the runtime may still have a group's workers add it into the
 * servers' momentum history in turns. */
#include <singa/plugin.h>

enum { GRAD_TURNS_1_2 = 256 }; /* the flag's value in ABI 1.2, whose header this stands for */

static const singa_field fields[] = {{"num_output", SINGA_FIELD_INT}, {NULL, 0}};

static int setup(singa_layer *l, singa_err *err)
{
    const singa_tensor *x = &l->src[0]->data;
    int in = singa_tensor_cols(x), out = singa_conf_int(l->conf, "num_output", 0);
    int shape[2] = {out, in}, yshape[2] = {singa_tensor_rows(x), out};
    if (out <= 0)
        return singa_layer_err(l, err, "field 'num_output' must be a positive integer");
    if (!(singa_layer_param)(l, 0, "weight", 2, shape, in, out, "kUniformSqrtFanIn", err))
        return -1;
    return singa_layer_shape(l, 2, yshape, err);
}

static int forward(singa_layer *l, singa_phase phase, singa_err *err)
{
    singa_tensor x = singa_tensor_view_matrix(&l->src[0]->data);
    singa_tensor_gemm(false, true, 1.0f, &x, &l->params[0]->data, 0.0f, &l->data);
    return 0;
}

static void backward(singa_layer *l)
{
    singa_layer *src = l->src[0];
    singa_tensor x = singa_tensor_view_matrix(&src->data);
    if (src->needs_grad) {
        singa_tensor dx = singa_tensor_view_matrix(&src->grad);
        singa_tensor_gemm(false, false, 1.0f, &l->grad, &l->params[0]->data, singa_layer_grad_beta(src), &dx);
    }
    singa_param_grad_gemm(l->params[0], true, &l->grad, false, &x);
}

static int init(singa_plugin_ctx *ctx, singa_err *err)
{
    const singa_layer_type dense = {.name = "kDenseOld", .flags = GRAD_TURNS_1_2, .fields = fields, .min_src = 1,
                                    .max_src = 1, .setup = setup, .forward = forward, .backward = backward};
    return singa_plugin_add_layer(ctx, &dense, NULL, err);
}

__attribute__((visibility("default"))) const singa_plugin_def singa_plugin_entry = {
    .abi_major = 1, .abi_minor = 2, .name = "dense-old", .version = "1", .init = init,
};
