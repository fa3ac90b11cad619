/* What the connection layers (kConcate, kSlice, kSplit, the bridges) share: a blob seen as a
 * matrix is cut into slabs of rows (dim 0, instances) or of feature columns (dim 1), gradients
 * are written into slabs with the beta of singa_layer_grad_beta, and an input layer's labels
 * (`aux`, one per row) travel with the rows, so kLabel can read them behind a connection.  A dim-1 slab of an
 * N x C x H x W blob that starts and ends on channel boundaries is a range of channels. */
#include <string.h>

#include "layers/ctx.h"
#include "layers/layers.h"
#include "singa/net.h"

singa_tensor singa_layer_slab(const singa_tensor *t, int dim, int start, int count)
{
    return dim == 0 ? singa_tensor_view_rows(t, start, count) : singa_tensor_view_cols(t, start, count);
}

void singa_layer_grad_add(singa_tensor *dst, float beta, const singa_tensor *src)
{
    if (beta == 0.0f)
        singa_tensor_copy(dst, src);
    else
        singa_tensor_axpy(1.0f, src, dst);
}

int singa_layer_count_dsts(const singa_layer *l) { return l->ctx->dsts(l, NULL, 0); }

int singa_layer_conf_dim(singa_layer *l, const char *field, int ndim, singa_err *err)
{
    int dim = singa_conf_int(l->conf, field, 0);
    if (dim != 0 && dim != 1)
        return singa_layer_err(l, err, "field '%s' must be 0 (instances) or 1 (features), got %d", field, dim);
    if (dim >= ndim)
        return singa_layer_err(l, err, "field '%s' is 1 but the input has a single dimension", field);
    return dim;
}

int singa_layer_aux_rows(singa_layer *l, int rows, singa_err *err)
{
    return singa_tensor_init(&l->aux, 1, &rows, err) < 0 ? singa_layer_err(l, err, "%s", err->msg) : 0;
}

void singa_layer_aux_copy(singa_tensor *dst, int at, const singa_tensor *src, int from, int rows)
{
    memcpy(dst->data + at, src->data + from, (size_t)rows * sizeof(float));
}

int singa_layer_setup_copy(singa_layer *l, singa_err *err)
{
    const singa_tensor *aux = &l->src[0]->aux;
    if (singa_layer_setup_like_src(l, err) < 0 || (aux->data && singa_layer_aux_rows(l, aux->shape[0], err) < 0))
        return -1;
    return 0;
}

int singa_layer_copy_forward(singa_layer *l, singa_phase phase, singa_err *err)
{
    singa_tensor_copy(&l->data, &l->src[0]->data);
    if (l->aux.data)
        singa_layer_aux_copy(&l->aux, 0, &l->src[0]->aux, 0, l->aux.shape[0]);
    return 0;
}

void singa_layer_copy_backward(singa_layer *l)
{
    singa_layer *src = l->src[0];
    if (src->needs_grad)
        singa_layer_grad_add(&src->grad, singa_layer_grad_beta(src), &l->grad);
}
