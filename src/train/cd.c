/* kCD: contrastive divergence (SINGA's CDWorker), for nets of RBM layers (kRBMVis, kRBMHid and
 * any type flagged SINGA_LAYER_GIBBS).  One iteration: the positive phase (a forward pass over
 * the whole net, net->cd_step = 0), then cd_k negative (Gibbs) phases in which only the RBM
 * layers run forward again (net->cd_step = 1..cd_k), then each RBM layer's backward writes the
 * CD gradient of its params.  The RBM layers keep the statistics both phases need
 * (src/layers/rbm.c).
 *
 * Only the RBM layers' params are trained: the other layers of a CD net (say, the sigmoid
 * layers of earlier RBMs that turn the data into this RBM's input) are fixed features, as
 * SINGA's CDWorker updated the RBM layers' params only.  check() therefore marks the others'
 * params as not trained, so the updater leaves them alone (no weight decay either). */
#include "net/gibbs.h"
#include "train/tob.h"

static int cd_k(const singa_conf *conf) { return singa_conf_int(conf, "cd_k", 1); }

static int run(singa_net *net, const singa_conf *conf, singa_err *err)
{
    int k = cd_k(conf);
    net->cd_step = 0;
    if (singa_net_forward(net, err) < 0)
        return -1;
    for (int step = 1; step <= k; step++)
        if (singa_net_gibbs_forward(net, step, err) < 0)
            return -1;
    singa_net_gibbs_backward(net);
    return 0;
}

static int check(const singa_net *net, const singa_conf *conf, singa_err *err)
{
    int k = cd_k(conf), rbm = 0;
    if (k < 1)
        return singa_err_set(err, "train_one_batch: field 'cd_k' must be at least 1, got %d", k);
    for (int i = 0; i < net->nlayers; i++)
        rbm += (net->layers[i]->type->flags & SINGA_LAYER_GIBBS) != 0;
    if (!rbm)
        return singa_err_set(err, "neuralnet: the kTrain net has no RBM layers (kRBMVis, kRBMHid), so contrastive "
                                  "divergence (kCD) has nothing to train");
    for (int i = 0; i < net->nlayers; i++) {
        const singa_layer *l = net->layers[i];
        bool gibbs = l->type->flags & SINGA_LAYER_GIBBS;
        for (int j = 0; j < l->nparams; j++) {
            singa_param *p = l->params[j];
            if (gibbs && p->owner) {
                const singa_layer *o = singa_net_find(net, p->owner->layer);
                if (!o || !(o->type->flags & SINGA_LAYER_GIBBS))
                    return singa_layer_err(l, err, "param '%s' shares the value of '%s' (layer '%s'), which kCD does not "
                                                   "train: it trains the params of RBM layers only", p->name,
                                           p->owner->name, p->owner->layer);
            } else if (!gibbs && p->trained) {
                p->trained = false;
                if (p->owner)
                    p->owner->nsharers--;
            }
        }
    }
    return 0;
}

const singa_tob singa_tob_cd = {.name = "kCD", .run = run, .check = check};
