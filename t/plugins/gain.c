/* A test-only plugin for a param's default init (t/2720-plugin-param-init.lua): y = g * x with one
 * gain g per feature, a param declared with kConstant and no value of the layer's own.  Built as
 * it is now (gain.so: kGain through singa_layer_param, kGainHalf through singa_layer_param_value
 * with 0.5) and with -DGAIN_ABI_1_2 as a plugin built for ABI 1.2 was (gain_old.so: kGainOld,
 * calling the function singa_layer_param as a 1.2 binary does, not the 1.3 macro). */
#include <singa/plugin.h>

static int setup_with(singa_layer *l, double value, singa_err *err)
{
    const singa_tensor *x = &l->src[0]->data;
    int cols = singa_tensor_cols(x);
#ifdef GAIN_ABI_1_2
    (void)value;
    if (!(singa_layer_param)(l, 0, "gain", 1, &cols, 0, 0, "kConstant", err))
        return -1;
#else
    if (!(value ? singa_layer_param_value(l, 0, "gain", 1, &cols, -1, 0, 0, "kConstant", value, err)
                : singa_layer_param(l, 0, "gain", 1, &cols, 0, 0, "kConstant", err)))
        return -1;
#endif
    return singa_layer_shape(l, x->ndim, x->shape, err);
}

static int setup(singa_layer *l, singa_err *err) { return setup_with(l, 0, err); }
#ifndef GAIN_ABI_1_2
static int setup_half(singa_layer *l, singa_err *err) { return setup_with(l, 0.5, err); }
#endif

static int forward(singa_layer *l, singa_phase phase, singa_err *err)
{
    const singa_tensor *x = &l->src[0]->data;
    const float *g = l->params[0]->data.data;
    int cols = singa_tensor_cols(x);
    for (int r = 0; r < singa_tensor_rows(x); r++)
        for (int c = 0; c < cols; c++)
            l->data.data[(size_t)r * (size_t)cols + (size_t)c] = g[c] * x->data[(size_t)r * (size_t)x->ld + (size_t)c];
    return 0;
}

static int init(singa_plugin_ctx *ctx, singa_err *err)
{
#ifdef GAIN_ABI_1_2
    const singa_layer_type old = {.name = "kGainOld", .min_src = 1, .max_src = 1, .setup = setup, .forward = forward};
    return singa_plugin_add_layer(ctx, &old, NULL, err);
#else
    const singa_layer_type gain = {.name = "kGain", .min_src = 1, .max_src = 1, .setup = setup, .forward = forward};
    const singa_layer_type half = {.name = "kGainHalf", .min_src = 1, .max_src = 1, .setup = setup_half,
                                   .forward = forward};
    if (singa_plugin_add_layer(ctx, &gain, NULL, err) < 0)
        return -1;
    return singa_plugin_add_layer(ctx, &half, NULL, err);
#endif
}

#ifdef GAIN_ABI_1_2
__attribute__((visibility("default"))) const singa_plugin_def singa_plugin_entry = {
    .abi_major = 1, .abi_minor = 2, .name = "gain-old", .version = "1", .init = init,
};
#else
SINGA_PLUGIN("gain", "1", "test: a per-feature gain with a default init", init);
#endif
