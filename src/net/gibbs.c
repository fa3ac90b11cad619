/* The passes of contrastive divergence (train/cd.c) that run the RBM layers only. */
#include "net/gibbs.h"
#include "net/layer_ctx.h"

int singa_net_gibbs_forward(singa_net *net, int step, singa_err *err)
{
    net->cd_step = step; /* plugins of ABI 1.0-1.4 read it there */
    singa_net_ctx_sync(net);
    int rc = 0;
    for (int i = 0; i < net->nlayers && rc == 0; i++) {
        singa_layer *l = net->layers[i];
        if (l->type->flags & SINGA_LAYER_GIBBS)
            rc = l->type->forward(l, net->phase, err);
    }
    net->cd_step = 0;
    singa_net_ctx_sync(net);
    return rc < 0 ? -1 : 0;
}

void singa_net_gibbs_backward(singa_net *net)
{
    singa_net_ctx_sync(net);
    for (int i = net->nlayers - 1; i >= 0; i--) {
        singa_layer *l = net->layers[i];
        if ((l->type->flags & SINGA_LAYER_GIBBS) && l->type->backward)
            l->type->backward(l);
    }
}
