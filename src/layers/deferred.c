/* Deferred param gradients (deferred.h): which built-in types can, and the call to theirs. */
#include "layers/ctx.h"
#include "layers/deferred.h"
#include "layers/layers.h"
#include "layers/param_state.h"

typedef int (*param_grads_fn)(singa_layer *const *copies, int n, singa_err *err);

static param_grads_fn param_grads_of(const singa_layer_type *type)
{
    return type == &singa_inner_product_layer ? singa_inner_product_param_grads : NULL;
}

bool singa_layer_can_defer(const singa_layer *l)
{
    if (!param_grads_of(l->type) || l->nparams == 0)
        return false;
    for (int q = 0; q < l->nparams; q++) /* a view's gradient is the copy's own (net/parts.c) */
        if (l->params[q]->owner || singa_param_view_of(l->params[q]))
            return false;
    return true;
}

bool singa_layer_defers(const singa_layer *l)
{
    return l->ctx && l->ctx->defer_params && singa_layer_can_defer(l);
}

int singa_layer_param_grads(singa_layer *const *copies, int n, singa_err *err)
{
    param_grads_fn fn = param_grads_of(copies[0]->type);
    if (!fn)
        return singa_layer_err(copies[0], err, "cannot defer its params' gradients");
    return fn(copies, n, err);
}
