/* Cropping and mirroring images (image.c), for kRGBImage and kImagePreprocess. */
#ifndef SINGA_LAYERS_IMAGE_H
#define SINGA_LAYERS_IMAGE_H

#include "singa/layer.h"

typedef struct singa_crop {
    int y0, x0;
    bool flip;
} singa_crop;

/* Where to cut an s x s window from an h x w image: at a random place, and flipped left-right
 * with probability 1/2 when `mirror`, in kTrain; centred and unflipped otherwise.  The draws
 * come from the net's generator (the job's seed), so runs repeat and resume. */
singa_crop singa_image_crop_pick(const singa_layer *l, singa_phase phase, int h, int w, int s, bool mirror);
/* out (c x s x s) = (in's window - mean's) * scale, in being c x h x w; mean may be NULL. */
void singa_image_crop(const float *in, const float *mean, int c, int h, int w, int s, singa_crop k, float scale,
                      float *out);
/* What a layer that parses images does to each (kRGBImage, kImagePreprocess): an s x s window of
 * (image - mean), picked by singa_image_crop_pick, times scale. */
typedef struct singa_image_parse {
    int crop; /* s */
    bool mirror;
    float scale;
    float *mean; /* one per pixel of the source image (c x h x w); NULL for none */
} singa_image_parse;

/* l's output = every image of its source's batch (n x c x h x w) parsed as p says, a window
 * picked per image: the forward pass of the layers that parse their source's images. */
void singa_image_parse_batch(singa_layer *l, singa_phase phase, const singa_image_parse *p);
/* How l parses its source's images when it does (kRGBImage over a data layer, kImagePreprocess),
 * else NULL: the ONNX export writes it as ops. */
const singa_image_parse *singa_image_parse_of(const singa_layer *l);
/* The ONNX form of a layer that parses images (the export_onnx of kImagePreprocess and of
 * kRGBImage over a data layer): in kTest the centred window of (image - mean), times scale. */
int singa_image_export_onnx(const singa_layer *l, singa_onnx_graph *x, singa_err *err);
/* kRGBImage's part of singa_image_parse_of (rgb_image.c). */
const singa_image_parse *singa_rgb_image_parse(const singa_layer *l);

#endif
