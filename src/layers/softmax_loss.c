/* kSoftmaxLoss: softmax and cross-entropy against integer labels, averaged over the batch;
 * reports loss and top-k accuracy.  `scale` multiplies the gradient (SINGA's loss weight). */
#include <math.h>

#include "core/vmath.h"
#include "layers/layers.h"

typedef struct softmax_state {
    int topk;
    float scale;
} softmax_state;

static const singa_field fields[] = {{"topk", SINGA_FIELD_INT}, {"scale", SINGA_FIELD_NUM}, {NULL, 0}};

static int setup(singa_layer *l, singa_err *err)
{
    softmax_state *s = l->state;
    const singa_tensor *x = &l->src[0]->data, *y = &l->src[1]->data;
    int classes = singa_tensor_cols(x);
    s->topk = singa_conf_int(l->conf, "topk", 1);
    s->scale = (float)singa_conf_num(l->conf, "scale", 1.0);
    if (s->topk < 1 || s->topk > classes)
        return singa_layer_err(l, err, "field 'topk' must be in 1..%d, got %d", classes, s->topk);
    if (singa_tensor_rows(y) != singa_tensor_rows(x) || singa_tensor_cols(y) != 1) {
        char a[64], b[64];
        return singa_layer_err(l, err, "labels from '%s' have shape %s but predictions from '%s' have shape %s (want one label per row)",
                               l->src[1]->name, singa_tensor_shape_str(y, a, sizeof a),
                               l->src[0]->name, singa_tensor_shape_str(x, b, sizeof b));
    }
    int shape[2] = {singa_tensor_rows(x), classes};
    return singa_layer_shape(l, 2, shape, err);
}

static int forward(singa_layer *l, singa_phase phase, singa_err *err)
{
    softmax_state *s = l->state;
    const singa_tensor *x = &l->src[0]->data;
    int rows = singa_tensor_rows(x), k = singa_tensor_cols(x);
    double loss = 0;
    int correct = 0;
    for (int r = 0; r < rows; r++) {
        const float *in = x->data + (size_t)r * (size_t)x->ld;
        float *p = l->data.data + (size_t)r * (size_t)k;
        float label_f = l->src[1]->data.data[r];
        int label = (int)label_f;
        if (label < 0 || label >= k || (float)label != label_f)
            return singa_layer_err(l, err, "label %g in row %d is not a class index in 0..%d", label_f, r, k - 1);
        float mx = in[0];
        for (int c = 1; c < k; c++)
            mx = in[c] > mx ? in[c] : mx;
        float sum = singa_vexp_shift(p, in, (size_t)k, mx), inv = 1.0f / sum;
        for (int c = 0; c < k; c++)
            p[c] *= inv;
        loss += -(in[label] - mx - log(sum));
        int above = 0; /* classes scoring higher than the label; ties count for the label */
        for (int c = 0; c < k; c++)
            above += in[c] > in[label];
        correct += above < s->topk;
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
    float beta = singa_layer_grad_beta(src), g = s->scale / (float)rows;
    for (int r = 0; r < rows; r++) {
        const float *p = l->data.data + (size_t)r * (size_t)k;
        float *dx = src->grad.data + (size_t)r * (size_t)src->grad.ld;
        int label = (int)l->src[1]->data.data[r];
        for (int c = 0; c < k; c++)
            dx[c] = beta * dx[c] + g * (p[c] - (c == label));
    }
}

const singa_layer_type singa_softmax_loss_layer = {
    .name = "kSoftmaxLoss", .fields = fields, .min_src = 2, .max_src = 2,
    .flags = SINGA_LAYER_LOSS, .state_size = sizeof(softmax_state),
    .setup = setup, .forward = forward, .backward = backward,
};
