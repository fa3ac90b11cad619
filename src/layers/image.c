/* SINGA's image augmentation: a window of an image (random in training, the centre in tests),
 * mirrored at random in training, mean-subtracted first and scaled last, as RGBImageLayer and
 * ImagePreprocessLayer did.  (SINGA v0.3 cut its test window at the top-left corner and v0.1 did
 * not cut one at all; the centre is what their successors and Caffe use.) */
#include "layers/ctx.h"
#include "layers/image.h"
#include "layers/layers.h"
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
