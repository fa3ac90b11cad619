#include <cblas.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "singa/tensor.h"

/* Zeroed storage on a 64-byte boundary (the byte before it says how far it was moved).  calloc,
 * not memset: a big tensor's pages stay unmapped until written, so a process holds in memory only
 * the elements it writes (of a param sharded across processes, its own). */
static float *alloc_zeroed(size_t bytes)
{
    unsigned char *raw = calloc(1, bytes + 64);
    if (!raw)
        return NULL;
    size_t shift = 64 - (uintptr_t)raw % 64;
    raw[shift - 1] = (unsigned char)shift;
    return (float *)(void *)(raw + shift);
}

static void free_zeroed(float *data)
{
    if (data)
        free((unsigned char *)data - ((unsigned char *)data)[-1]);
}

int singa_tensor_init(singa_tensor *t, int ndim, const int *shape, singa_err *err)
{
    memset(t, 0, sizeof *t);
    if (ndim < 1 || ndim > SINGA_MAX_DIMS)
        return singa_err_set(err, "tensor with %d dimensions (1 to %d supported)", ndim,
                             SINGA_MAX_DIMS);
    size_t size = 1;
    for (int i = 0; i < ndim; i++) {
        if (shape[i] <= 0)
            return singa_err_set(err, "tensor dimension %d is %d, must be positive", i, shape[i]);
        if (size > ((size_t)1 << 40) / (size_t)shape[i])
            return singa_err_set(err, "tensor of more than 2^40 elements");
        size *= (size_t)shape[i];
        t->shape[i] = shape[i];
    }
    if (size / (size_t)shape[0] > (size_t)INT32_MAX)
        return singa_err_set(err, "tensor rows of more than 2^31 elements");
    t->ndim = ndim;
    t->size = size;
    t->ld = (int)(size / (size_t)shape[0]);
    if (!(t->data = alloc_zeroed((size * sizeof(float) + 63) & ~(size_t)63)))
        return singa_err_set(err, "out of memory for a tensor of %zu floats", size);
    t->owns = true;
    return 0;
}

int singa_tensor_init2(singa_tensor *t, int rows, int cols, singa_err *err)
{
    int shape[2] = {rows, cols};
    return singa_tensor_init(t, 2, shape, err);
}

int singa_tensor_init_like(singa_tensor *t, const singa_tensor *like, singa_err *err)
{
    return singa_tensor_init(t, like->ndim, like->shape, err);
}

void singa_tensor_free(singa_tensor *t)
{
    if (t->owns)
        free_zeroed(t->data);
    memset(t, 0, sizeof *t);
}

void singa_tensor_rebind(singa_tensor *t, float *mem)
{
    singa_tensor view = *t;
    singa_tensor_free(t);
    view.data = mem;
    view.owns = false;
    *t = view;
}

bool singa_tensor_same_shape(const singa_tensor *a, const singa_tensor *b)
{
    if (a->ndim != b->ndim)
        return false;
    for (int i = 0; i < a->ndim; i++)
        if (a->shape[i] != b->shape[i])
            return false;
    return true;
}

const char *singa_tensor_shape_str(const singa_tensor *t, char *buf, size_t len)
{
    size_t used = 0;
    buf[0] = 0;
    for (int i = 0; i < t->ndim && used < len; i++)
        used += (size_t)snprintf(buf + used, len - used, i ? "x%d" : "%d", t->shape[i]);
    return buf;
}

singa_tensor singa_tensor_view_rows(const singa_tensor *t, int start, int count)
{
    singa_tensor v = *t;
    v.owns = false;
    v.data = t->data + (size_t)start * (size_t)t->ld;
    v.shape[0] = count;
    v.size = t->size / (size_t)t->shape[0] * (size_t)count;
    return v;
}

singa_tensor singa_tensor_view_cols(const singa_tensor *t, int start, int count)
{
    singa_tensor v = singa_tensor_view_matrix(t);
    v.data += start;
    v.shape[1] = count;
    v.size = (size_t)v.shape[0] * (size_t)count;
    return v;
}

singa_tensor singa_tensor_view_matrix(const singa_tensor *t)
{
    singa_tensor v = *t;
    v.owns = false;
    v.ndim = 2;
    v.shape[0] = singa_tensor_rows(t);
    v.shape[1] = singa_tensor_cols(t);
    v.shape[2] = v.shape[3] = 0;
    return v;
}

/* Element-wise helpers walk row by row so that column views work too. */
#define FOR_ROWS(t, row, cols)                                                                     \
    for (int r_ = 0, cols = singa_tensor_cols(t); r_ < singa_tensor_rows(t); r_++)                 \
        for (float *row = (t)->data + (size_t)r_ * (size_t)(t)->ld; row; row = NULL)

void singa_tensor_fill(singa_tensor *t, float v)
{
    FOR_ROWS(t, row, cols)
    for (int i = 0; i < cols; i++)
        row[i] = v;
}

void singa_tensor_copy(singa_tensor *dst, const singa_tensor *src)
{
    if (singa_tensor_contiguous(dst) && singa_tensor_contiguous(src)) {
        memcpy(dst->data, src->data, src->size * sizeof(float));
        return;
    }
    FOR_ROWS(dst, row, cols)
    memcpy(row, src->data + (size_t)r_ * (size_t)src->ld, (size_t)cols * sizeof(float));
}

void singa_tensor_scale(singa_tensor *t, float alpha)
{
    FOR_ROWS(t, row, cols)
    for (int i = 0; i < cols; i++)
        row[i] *= alpha;
}

void singa_tensor_axpy(float alpha, const singa_tensor *x, singa_tensor *y)
{
    FOR_ROWS(y, row, cols)
    cblas_saxpy(cols, alpha, x->data + (size_t)r_ * (size_t)x->ld, 1, row, 1);
}

double singa_tensor_sum(const singa_tensor *t)
{
    double s = 0;
    FOR_ROWS(t, row, cols)
    for (int i = 0; i < cols; i++)
        s += row[i];
    return s;
}

double singa_tensor_sumsq(const singa_tensor *t)
{
    double s = 0;
    FOR_ROWS(t, row, cols)
    for (int i = 0; i < cols; i++)
        s += (double)row[i] * row[i];
    return s;
}

void singa_tensor_gemm(bool trans_a, bool trans_b, float alpha, const singa_tensor *a,
                       const singa_tensor *b, float beta, singa_tensor *c)
{
    int m = singa_tensor_rows(c), n = singa_tensor_cols(c);
    int k = trans_a ? singa_tensor_rows(a) : singa_tensor_cols(a);
    cblas_sgemm(CblasRowMajor, trans_a ? CblasTrans : CblasNoTrans,
                trans_b ? CblasTrans : CblasNoTrans, m, n, k, alpha, a->data, a->ld, b->data,
                b->ld, beta, c->data, c->ld);
}

void singa_tensor_gemv(bool trans_a, float alpha, const singa_tensor *a, const float *x, float beta,
                       float *y)
{
    cblas_sgemv(CblasRowMajor, trans_a ? CblasTrans : CblasNoTrans, singa_tensor_rows(a),
                singa_tensor_cols(a), alpha, a->data, a->ld, x, 1, beta, y, 1);
}

void singa_tensor_add_row(singa_tensor *c, const float *v)
{
    FOR_ROWS(c, row, cols)
    for (int i = 0; i < cols; i++)
        row[i] += v[i];
}

void singa_tensor_sum_rows(const singa_tensor *c, float alpha, float beta, float *out)
{
    int cols = singa_tensor_cols(c);
    for (int i = 0; i < cols; i++)
        out[i] *= beta;
    for (int r = 0; r < singa_tensor_rows(c); r++) {
        const float *row = c->data + (size_t)r * (size_t)c->ld;
        for (int i = 0; i < cols; i++)
            out[i] += alpha * row[i];
    }
}

void singa_blas_set_threads(int n) { openblas_set_num_threads(n); }
const char *singa_blas_core(void) { return openblas_get_corename(); }
