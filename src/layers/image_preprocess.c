/* kImagePreprocess (SINGA v0.3's ImagePreprocessLayer, fields of its rgbimage_conf): images
 * (N x C x H x W, any size) to an N x C x S x S window, S = `cropsize` (0: the whole image, which
 * must then be square), random and mirrored at random (`mirror`) in kTrain, centred otherwise,
 * times `scale`.  Mean subtraction belongs to the input layer (kRecordInput's mean_file), so a
 * `meanfile` here is refused. */
#include <stdlib.h>

#include "layers/image.h"
#include "layers/layers.h"

typedef singa_image_parse pre_state; /* mean NULL: the input layer subtracts it */

static const singa_field fields[] = {
    {"cropsize", SINGA_FIELD_INT}, {"mirror", SINGA_FIELD_BOOL}, {"scale", SINGA_FIELD_NUM},
    {"meanfile", SINGA_FIELD_STR}, {NULL, 0},
};

static int setup(singa_layer *l, singa_err *err)
{
    pre_state *s = l->state;
    const singa_tensor *in = &l->src[0]->data;
    if (singa_conf_get(l->conf, "meanfile"))
        return singa_layer_err(l, err, "field 'meanfile' is not used by kImagePreprocess (SINGA ignored it too): "
                                       "subtract the mean in the input layer (kRecordInput's mean_file) or use kRGBImage");
    if (in->ndim != 4)
        return singa_layer_err(l, err, "source layer '%s' gives %d-dimensional data; images must be N x C x H x W",
                               l->src[0]->name, in->ndim);
    int h = in->shape[2], w = in->shape[3];
    s->crop = singa_conf_int(l->conf, "cropsize", 0);
    s->mirror = singa_conf_bool(l->conf, "mirror", false);
    s->scale = (float)singa_conf_num(l->conf, "scale", 1.0);
    if (s->crop < 0 || s->crop > (h < w ? h : w))
        return singa_layer_err(l, err, "field 'cropsize' must be in 0..%d (the images are %d x %d), got %d",
                               h < w ? h : w, h, w, s->crop);
    if (s->crop == 0 && h != w)
        return singa_layer_err(l, err, "the images are %d x %d: set 'cropsize' to cut a square from them", h, w);
    s->crop = s->crop ? s->crop : h;
    int shape[4] = {in->shape[0], in->shape[1], s->crop, s->crop};
    return singa_layer_shape(l, 4, shape, err);
}

static int forward(singa_layer *l, singa_phase phase, singa_err *err)
{
    pre_state *s = l->state;
    singa_image_parse_batch(l, phase, s);
    return 0;
}

const singa_layer_type singa_image_preprocess_layer = {
    .name = "kImagePreprocess", .fields = fields, .min_src = 1, .max_src = 1,
    .state_size = sizeof(pre_state), .setup = setup, .forward = forward,
    .export_onnx = singa_image_export_onnx,
};
