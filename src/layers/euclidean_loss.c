/* kEuclideanLoss: 0.5 * ||p - t||^2 per instance, averaged over the batch. */
#include "layers/layers.h"

static const singa_field fields[] = {{NULL, 0}};

static int setup(singa_layer *l, singa_err *err)
{
    const singa_tensor *p = &l->src[0]->data, *t = &l->src[1]->data;
    if (singa_tensor_rows(p) != singa_tensor_rows(t) || singa_tensor_cols(p) != singa_tensor_cols(t)) {
        char a[64], b[64];
        return singa_layer_err(l, err, "prediction '%s' has shape %s but target '%s' has shape %s",
                               l->src[0]->name, singa_tensor_shape_str(p, a, sizeof a),
                               l->src[1]->name, singa_tensor_shape_str(t, b, sizeof b));
    }
    return singa_layer_setup_like_src(l, err);
}

static int forward(singa_layer *l, singa_phase phase, singa_err *err)
{
    const float *p = l->src[0]->data.data, *t = l->src[1]->data.data;
    double loss = 0;
    for (size_t i = 0; i < l->data.size; i++) {
        l->data.data[i] = p[i] - t[i]; /* kept for the gradient */
        loss += 0.5 * (double)l->data.data[i] * l->data.data[i];
    }
    singa_layer_metric(l, "loss", loss / singa_tensor_rows(&l->data));
    return 0;
}

static void backward(singa_layer *l)
{
    float g = 1.0f / (float)singa_layer_batch(l);
    for (int i = 0; i < 2; i++) {
        singa_layer *src = l->src[i];
        if (!src->needs_grad)
            continue;
        float beta = singa_layer_grad_beta(src), sign = i ? -g : g;
        for (size_t k = 0; k < l->data.size; k++)
            src->grad.data[k] = beta * src->grad.data[k] + sign * l->data.data[k];
    }
}

const singa_layer_type singa_euclidean_loss_layer = {
    .name = "kEuclideanLoss", .fields = fields, .min_src = 2, .max_src = 2,
    .flags = SINGA_LAYER_LOSS, .setup = setup, .forward = forward, .backward = backward,
};
