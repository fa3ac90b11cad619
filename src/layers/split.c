/* kSplit: hands its input to several destinations (num_splits of them at most) and sums their
 * gradients.  SINGA's SplitLayer kept one gradient blob per destination and added them up; here
 * every destination adds into this layer's one gradient blob through singa_layer_grad_beta, so
 * the sum is already made when backward runs, and backward passes it on. */
#include "layers/layers.h"
#include "onnx/graph.h"

static const singa_field fields[] = {{"num_splits", SINGA_FIELD_INT}, {NULL, 0}};

static int setup(singa_layer *l, singa_err *err)
{
    int ndst = singa_layer_count_dsts(l);
    int num = singa_conf_int(l->conf, "num_splits", ndst > 0 ? ndst : 1);
    if (num <= 0)
        return singa_layer_err(l, err, "field 'num_splits' must be a positive integer");
    if (ndst > num)
        return singa_layer_err(l, err, "%d destinations take this layer's output but 'num_splits' is %d", ndst, num);
    return singa_layer_setup_copy(l, err);
}

const singa_layer_type singa_split_layer = {
    .name = "kSplit", .flags = SINGA_LAYER_FEATURE_WISE | SINGA_LAYER_FEATURE_PARTS, .fields = fields, .min_src = 1, .max_src = 1,
    .setup = setup, .forward = singa_layer_copy_forward, .backward = singa_layer_copy_backward,
    .export_onnx = singa_ox_identity,
};
