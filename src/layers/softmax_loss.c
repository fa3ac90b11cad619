/* kSoftmaxLoss: softmax and cross-entropy against integer labels (a kLabel's, or those of the
 * data layer named as its second source), averaged over the batch; reports loss and top-k accuracy.  `scale` multiplies the gradient (SINGA's loss weight). */
#include "layers/layers.h"

typedef struct softmax_state {
    int topk;
    float scale;
} softmax_state;

static const singa_field fields[] = {{"topk", SINGA_FIELD_INT}, {"scale", SINGA_FIELD_NUM}, {NULL, 0}};

static int setup(singa_layer *l, singa_err *err)
{
    softmax_state *s = l->state;
    const singa_tensor *x = &l->src[0]->data;
    int classes = singa_tensor_cols(x);
    s->topk = singa_conf_int(l->conf, "topk", 1);
    s->scale = (float)singa_conf_num(l->conf, "scale", 1.0);
    if (s->topk < 1 || s->topk > classes)
        return singa_layer_err(l, err, "field 'topk' must be in 1..%d, got %d", classes, s->topk);
    if (singa_layer_check_labels(l, err) < 0)
        return -1;
    int shape[2] = {singa_tensor_rows(x), classes};
    return singa_layer_shape(l, 2, shape, err);
}

static int forward(singa_layer *l, singa_phase phase, singa_err *err)
{
    softmax_state *s = l->state;
    const singa_tensor *x = &l->src[0]->data;
    const float *labels = singa_layer_labels(l)->data;
    int rows = singa_tensor_rows(x), k = singa_tensor_cols(x);
    double loss = 0;
    int correct = 0;
    for (int r = 0; r < rows; r++) {
        const float *in = x->data + (size_t)r * (size_t)x->ld;
        float *p = l->data.data + (size_t)r * (size_t)k;
        int label = singa_layer_index(l, "label", labels[r], k, false, r, err);
        if (label < -1)
            return -1;
        loss += singa_softmax_row(p, in, k) - in[label];
        correct += singa_layer_topk_hit(in, k, label, s->topk);
    }
    singa_layer_metric(l, "loss", loss * s->scale / rows);
    singa_layer_metric(l, "accuracy", (double)correct / rows);
    return 0;
}

static void backward(singa_layer *l)
{
    softmax_state *s = l->state;
    singa_layer *src = l->src[0];
    if (!src->needs_grad)
        return;
    int rows = singa_tensor_rows(&l->data), k = singa_tensor_cols(&l->data);
    const float *labels = singa_layer_labels(l)->data;
    float beta = singa_layer_grad_beta(src), g = s->scale / (float)singa_layer_batch(l);
    for (int r = 0; r < rows; r++) {
        const float *p = l->data.data + (size_t)r * (size_t)k;
        float *dx = src->grad.data + (size_t)r * (size_t)src->grad.ld;
        int label = (int)labels[r];
        for (int c = 0; c < k; c++)
            dx[c] = beta * dx[c] + g * (p[c] - (c == label));
    }
}

const singa_layer_type singa_softmax_loss_layer = {
    .name = "kSoftmaxLoss", .fields = fields, .min_src = 2, .max_src = 2,
    .flags = SINGA_LAYER_LOSS, .state_size = sizeof(softmax_state),
    .setup = setup, .forward = forward, .backward = backward,
    .export_onnx = singa_softmax_export_onnx, /* the probabilities; the labels are not read */
};
