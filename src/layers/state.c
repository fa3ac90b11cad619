/* Layer state that is not a trained param but must survive a checkpoint, such as kBM's running
 * mean and inverse variance.  It is declared as a param flagged `state`: the param store already
 * shares values by name between the train, validation and test nets (so the test net reads the
 * statistics the training net keeps) and checkpoints write and resume every param, so nothing
 * else needs to know about it.  The updater skips it because it is never `trained`, and its
 * gradient buffer is freed so nothing can write one by mistake. */
#include "layers/ctx.h"
#include "layers/layers.h"
#include "singa/net.h"

singa_param *singa_layer_state(singa_layer *l, int index, const char *suffix, int ndim,
                               const int *shape, float value, singa_err *err)
{
    const singa_conf *list = singa_conf_get(l->conf, "param");
    const singa_conf *pc = list && (size_t)index < list->n ? list->items[index] : NULL;
    if (singa_conf_get(pc, "share_from")) {
        singa_layer_err(l, err, "param %d ('%s' state) cannot use share_from: layer state is not shared between layers",
                        index + 1, suffix);
        return NULL;
    }
    singa_params *ps = l->ctx->params;
    int before = ps->n;
    singa_param *p = singa_layer_param_value(l, index, suffix, ndim, shape, -1, 0, 0, "kConstant", value, err);
    if (!p)
        return NULL;
    bool created = ps->n > before;
    if (!created && !p->state) {
        singa_layer_err(l, err, "param %d ('%s') is trained by layer '%s'; %s state needs a name of its own",
                        index + 1, p->name, p->layer, suffix);
        return NULL;
    }
    if (p->trained) { /* singa_layer_param marks what a training net declares */
        p->trained = false;
        if (p->owner)
            p->owner->nsharers--;
    }
    if (created) {
        p->state = true;
        singa_tensor_free(&p->grad);
    }
    return p;
}
