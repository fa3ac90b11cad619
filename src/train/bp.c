/* kBP: back-propagation, a forward pass then a backward pass over the (possibly unrolled) net.
 * Over a net unrolled in time this is BPTT, so "kBPTT" names the same algorithm. */
#include "net/parts.h"
#include "train/tob.h"

static int run(singa_net *net, const singa_conf *conf, singa_err *err)
{
    return singa_net_forward_backward(net, err);
}

static int check(const singa_net *net, const singa_conf *conf, singa_err *err)
{
    for (int k = 0; k < singa_net_nlocations(net); k++) { /* a cut net's loss may be on any worker */
        const singa_net *at = singa_net_location(net, k);
        for (int i = 0; i < at->nlayers; i++)
            if (at->layers[i]->type->flags & SINGA_LAYER_LOSS)
                return 0;
    }
    return singa_err_set(err, "neuralnet: the kTrain net has no loss layer (such as kSoftmaxLoss), so back-propagation has nothing to train");
}

const singa_tob singa_tob_bp = {.name = "kBP", .run = run, .check = check};
