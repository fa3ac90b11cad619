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
/* l's output = every image of its source's batch (n x c x h x w) cut and scaled as
 * singa_image_crop does, a window picked per image; the parser layers' forward pass. */
void singa_image_crop_batch(singa_layer *l, singa_phase phase, const float *mean, int s, bool mirror, float scale);

#endif
