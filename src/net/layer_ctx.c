/* What a net's layers see of it (layers/ctx.h), and the walks over its layers they need. */
#include <stdlib.h>

#include "net/layer_ctx.h"

typedef struct net_block {
    singa_net net; /* first: freeing the net frees the block */
    singa_layer_ctx ctx;
    singa_net *first; /* a pipeline's copy 0 at this location, or NULL (the copy 0 itself) */
} net_block;

singa_net *singa_net_alloc(void)
{
    net_block *b = calloc(1, sizeof *b);
    if (!b)
        return NULL;
    b->net.layer_ctx = &b->ctx;
    return &b->net;
}

static int dsts(const singa_layer *l, singa_layer_dst *dst, int cap)
{
    const singa_net *net = l->net;
    int n = 0;
    for (int i = 0; i < net->nlayers; i++)
        for (int k = 0; k < net->layers[i]->nsrc; k++)
            if (net->layers[i]->src[k] == l) {
                if (n < cap)
                    dst[n] = (singa_layer_dst){net->layers[i], k};
                n++;
            }
    return n;
}

static singa_layer *twin(const singa_layer *l)
{
    const net_block *b = (const net_block *)l->net;
    return b->first ? singa_net_find(b->first, l->name) : NULL;
}

void singa_net_ctx_sync(singa_net *net)
{
    bool defer = net->layer_ctx->defer_params, shapes = net->layer_ctx->shapes_only; /* no members of the net */
    *net->layer_ctx = (singa_layer_ctx){.phase = net->phase, .rng = net->rng, .seed = net->seed, .pool = net->pool,
                                        .params = net->params, .split = net->split, .metrics = &net->metrics,
                                        .cd_step = net->cd_step, .nlayers = net->nlayers, .dsts = dsts,
                                        .defer_params = defer, .shapes_only = shapes, .twin = twin};
}

void singa_net_ctx_defer_params(singa_net *net, bool on) { net->layer_ctx->defer_params = on; }

void singa_net_ctx_shapes_only(singa_net *net) { net->layer_ctx->shapes_only = true; }

void singa_net_ctx_first(singa_net *net, singa_net *first) { ((net_block *)net)->first = first != net ? first : NULL; }
