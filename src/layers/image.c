/* SINGA's image augmentation: a window of an image (random in training, the centre in tests),
 * mirrored at random in training, mean-subtracted first and scaled last, as RGBImageLayer and
 * ImagePreprocessLayer did.  (SINGA v0.3 cut its test window at the top-left corner and v0.1 did
 * not cut one at all; the centre is what their successors and Caffe use.) */
#include "layers/ctx.h"
#include "layers/image.h"
#include "layers/layers.h"
#include "onnx/graph.h"
#include "singa/net.h"

singa_crop singa_image_crop_pick(const singa_layer *l, singa_phase phase, int h, int w, int s, bool mirror)
{
    singa_crop k = {(h - s) / 2, (w - s) / 2, false};
    bool train = phase == SINGA_PHASE_TRAIN;
    if (train && (h > s || w > s)) {
        k.y0 = (int)singa_rng_below(l->ctx->rng, (uint64_t)(h - s) + 1);
        k.x0 = (int)singa_rng_below(l->ctx->rng, (uint64_t)(w - s) + 1);
    }
    if (train && mirror)
        k.flip = singa_rng_below(l->ctx->rng, 2) == 1;
    return k;
}

void singa_image_crop(const float *in, const float *mean, int c, int h, int w, int s, singa_crop k, float scale,
                      float *out)
{
    for (int ch = 0; ch < c; ch++)
        for (int y = 0; y < s; y++) {
            size_t at = ((size_t)ch * (size_t)h + (size_t)(k.y0 + y)) * (size_t)w + (size_t)k.x0;
            float *o = out + ((size_t)ch * (size_t)s + (size_t)y) * (size_t)s;
            for (int x = 0; x < s; x++) {
                size_t i = at + (size_t)(k.flip ? s - 1 - x : x);
                o[x] = (in[i] - (mean ? mean[i] : 0.0f)) * scale;
            }
        }
}

void singa_image_parse_batch(singa_layer *l, singa_phase phase, const singa_image_parse *p)
{
    const singa_tensor *in = &l->src[0]->data;
    int c = in->shape[1], h = in->shape[2], w = in->shape[3], s = p->crop;
    size_t isize = (size_t)c * (size_t)h * (size_t)w, osize = (size_t)c * (size_t)s * (size_t)s;
    for (int b = 0; b < in->shape[0]; b++) {
        singa_crop k = singa_image_crop_pick(l, phase, h, w, s, p->mirror);
        singa_image_crop(in->data + (size_t)b * isize, p->mean, c, h, w, s, k, p->scale,
                         l->data.data + (size_t)b * osize);
    }
}

const singa_image_parse *singa_image_parse_of(const singa_layer *l)
{
    return l->type == &singa_image_preprocess_layer ? l->state : singa_rgb_image_parse(l);
}

/* kRGBImage over a data layer, kImagePreprocess: in kTest the centred window of (image - mean),
 * times scale; Sub before Slice and Mul, as the layer rounds. */
int singa_image_export_onnx(const singa_layer *l, singa_onnx_graph *x, singa_err *err)
{
    const singa_image_parse *p = singa_image_parse_of(l);
    const singa_tensor *in = &l->src[0]->data;
    int c = in->shape[1], h = in->shape[2], w = in->shape[3], s = p->crop;
    char mean[SINGA_OX_NAME_LEN], centred[SINGA_OX_NAME_LEN], starts[SINGA_OX_NAME_LEN], ends[SINGA_OX_NAME_LEN], axes[SINGA_OX_NAME_LEN], cut[SINGA_OX_NAME_LEN],
        scale[SINGA_OX_NAME_LEN];
    const char *v = l->src[0]->name;
    if (p->mean) {
        int64_t dims[3] = {c, h, w};
        singa_ox_floats(x, singa_ox_name(mean, l, "mean"), 3, dims, p->mean, (size_t)c * (size_t)h * (size_t)w);
        singa_ox_node(x, "Sub", singa_ox_name(centred, l, "centred"), 2, v, mean, NULL);
        v = centred;
    }
    if (s < h || s < w) {
        int64_t y0 = (h - s) / 2, x0 = (w - s) / 2; /* singa_image_crop_pick's centre */
        int64_t from[2] = {y0, x0}, to[2] = {y0 + s, x0 + s}, ax[2] = {2, 3};
        singa_ox_ints(x, singa_ox_name(starts, l, "starts"), 2, from);
        singa_ox_ints(x, singa_ox_name(ends, l, "ends"), 2, to);
        singa_ox_ints(x, singa_ox_name(axes, l, "axes"), 2, ax);
        const char *slice_in[4] = {v, starts, ends, axes};
        singa_ox_end(x, singa_ox_begin_list(x, "Slice", singa_ox_name(cut, l, "window"), 4, slice_in));
        v = cut;
    }
    singa_ox_scalar(x, singa_ox_name(scale, l, "scale"), p->scale);
    singa_ox_node(x, "Mul", l->name, 2, v, scale, NULL);
    return 0;
}
