/* kAccuracy: the top-k accuracy of predictions (scores, one row per instance) against integer
 * labels, reported as the metric "accuracy"; no gradient passes through it.  Its output holds,
 * per instance, 1 for a hit and 0 for a miss.  The top-k rule is the one kSoftmaxLoss uses too:
 * classes rank as argmax and kArgSort order them (higher score first, of equal scores the lower
 * index first), and a label is among the top k when fewer than k classes rank ahead of it.  So
 * all-equal scores (a dead net) hit only label 0, not every label; a NaN score at the label is a
 * miss, and a NaN elsewhere ranks ahead of the label, so NaN never scores. */
#include <math.h>

#include "layers/ctx.h"
#include "layers/layers.h"
#include "layers/records.h"
#include "singa/net.h"

bool singa_layer_topk_hit(const float *scores, int k, int label, int topk)
{
    float v = scores[label];
    if (isnan(v))
        return false;
    int ahead = 0;
    for (int c = 0; c < k; c++)
        ahead += scores[c] > v || isnan(scores[c]) || (c < label && scores[c] == v);
    return ahead < topk;
}

const singa_tensor *singa_layer_labels(const singa_layer *l)
{
    const singa_layer *src = l->src[1];
    return src->aux.data ? &src->aux : &src->data;
}

/* The input layer whose data set the labels in `from` come from: from a layer that carries
 * labels, or else back through one-column layers (connection layers a partitioned net puts in) to
 * a kLabel and on to its source, through the layers that hand their source's labels on.  NULL when
 * they come from elsewhere.  At most a walk through every layer, should a back edge close a loop. */
static const singa_records *label_records(const singa_layer *from, const singa_layer **input)
{
    const singa_layer *in = from;
    int left = from->ctx->nlayers;
    if (!in->aux.data) {
        while (in->type != &singa_label_layer && in->nsrc == 1 && singa_tensor_cols(&in->data) == 1 && left-- > 0)
            in = in->src[0];
        if (in->type != &singa_label_layer)
            return NULL;
        in = in->src[0];
    }
    while (in->nsrc == 1 && in->aux.data && left-- > 0)
        in = in->src[0];
    *input = in;
    return singa_records_of(in);
}

int singa_layer_check_labels(singa_layer *l, singa_err *err)
{
    const singa_tensor *x = &l->src[0]->data, *y = singa_layer_labels(l);
    char a[64], b[64];
    if (singa_tensor_rows(y) != singa_tensor_rows(x) || singa_tensor_cols(y) != 1)
        return singa_layer_err(l, err, "labels from '%s' have shape %s but predictions from '%s' have shape %s (want one label per row)",
                               l->src[1]->name, singa_tensor_shape_str(y, a, sizeof a), l->src[0]->name,
                               singa_tensor_shape_str(x, b, sizeof b));
    /* The whole data set now, rather than a batch that happens to hold a bad label steps later. */
    const singa_layer *input;
    const singa_records *r = label_records(l->src[1], &input);
    int classes = singa_tensor_cols(x);
    char where[4200];
    if (r && r->labelled && r->label_max >= (float)classes)
        return singa_layer_err(l, err, "label %g at %s (layer '%s') is out of range: '%s' gives %d classes, 0..%d",
                               r->label_max, singa_records_label_where(r, where, sizeof where), input->name,
                               l->src[0]->name, classes, classes - 1);
    return 0;
}

typedef struct accuracy_state {
    int topk;
} accuracy_state;

static const singa_field fields[] = {{"topk", SINGA_FIELD_INT}, {NULL, 0}};

static int setup(singa_layer *l, singa_err *err)
{
    accuracy_state *s = l->state;
    int classes = singa_tensor_cols(&l->src[0]->data);
    s->topk = singa_conf_int(l->conf, "topk", 1);
    if (s->topk < 1 || s->topk > classes)
        return singa_layer_err(l, err, "field 'topk' must be in 1..%d, got %d", classes, s->topk);
    if (singa_layer_check_labels(l, err) < 0)
        return -1;
    int shape[2] = {singa_tensor_rows(&l->src[0]->data), 1};
    return singa_layer_shape(l, 2, shape, err);
}

static int forward(singa_layer *l, singa_phase phase, singa_err *err)
{
    const accuracy_state *s = l->state;
    const singa_tensor *x = &l->src[0]->data;
    const float *labels = singa_layer_labels(l)->data;
    int rows = singa_tensor_rows(x), k = singa_tensor_cols(x), correct = 0;
    for (int r = 0; r < rows; r++) {
        int label = singa_layer_index(l, "label", labels[r], k, false, r, err);
        if (label < -1)
            return -1;
        bool hit = singa_layer_topk_hit(x->data + (size_t)r * (size_t)x->ld, k, label, s->topk);
        l->data.data[r] = hit ? 1.0f : 0.0f;
        correct += hit;
    }
    singa_layer_metric(l, "accuracy", (double)correct / rows);
    return 0;
}

const singa_layer_type singa_accuracy_layer = {
    .name = "kAccuracy", .fields = fields, .min_src = 2, .max_src = 2,
    .state_size = sizeof(accuracy_state), .setup = setup, .forward = forward,
};
