/* kLabel: the labels of an input layer's batch, one per row. */
#include "layers/layers.h"

static const singa_field fields[] = {{NULL, 0}};

static int setup(singa_layer *l, singa_err *err)
{
    if (!l->src[0]->aux.data)
        return singa_layer_err(l, err, "source layer '%s' (%s) provides no labels", l->src[0]->name,
                               l->src[0]->type->name);
    return singa_layer_shape(l, 1, l->src[0]->aux.shape, err);
}

static int forward(singa_layer *l, singa_phase phase, singa_err *err)
{
    singa_tensor_copy(&l->data, &l->src[0]->aux);
    return 0;
}

const singa_layer_type singa_label_layer = {
    .name = "kLabel", .fields = fields, .min_src = 1, .max_src = 1,
    .setup = setup, .forward = forward,
};
