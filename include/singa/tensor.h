/* Dense float32 tensors of up to four dimensions.  A tensor is a value type (embed it, pass
 * pointers); it either owns 64-byte aligned storage or is a view into another tensor.  Seen as a
 * matrix, dim 0 are rows and the remaining dims are columns; rows are `ld` floats apart, so
 * views on dim 0 (row ranges) and dim 1 (column ranges) are both plain tensors. */
#ifndef SINGA_TENSOR_H
#define SINGA_TENSOR_H

#include <stdbool.h>
#include <stddef.h>
#include "singa/error.h"

#pragma GCC visibility push(default) /* exported: libsinga is built hidden */

#define SINGA_MAX_DIMS 4

typedef struct singa_tensor {
    float *data;
    int ndim;
    int shape[SINGA_MAX_DIMS];
    int ld;      /* floats between consecutive rows */
    size_t size; /* elements */
    bool owns;
} singa_tensor;

int singa_tensor_init(singa_tensor *t, int ndim, const int *shape, singa_err *err);
int singa_tensor_init2(singa_tensor *t, int rows, int cols, singa_err *err);
/* Same shape as `like`, zero-filled. */
int singa_tensor_init_like(singa_tensor *t, const singa_tensor *like, singa_err *err);
void singa_tensor_free(singa_tensor *t);

static inline int singa_tensor_rows(const singa_tensor *t) { return t->ndim ? t->shape[0] : 1; }
static inline int singa_tensor_cols(const singa_tensor *t)
{
    return t->ndim ? (int)(t->size / (size_t)t->shape[0]) : 1;
}
static inline bool singa_tensor_contiguous(const singa_tensor *t)
{
    return t->ld == singa_tensor_cols(t);
}
bool singa_tensor_same_shape(const singa_tensor *a, const singa_tensor *b);
/* "64x1x28x28" into buf. */
const char *singa_tensor_shape_str(const singa_tensor *t, char *buf, size_t len);

/* Views share storage with t and must not outlive it. */
singa_tensor singa_tensor_view_rows(const singa_tensor *t, int start, int count);
singa_tensor singa_tensor_view_cols(const singa_tensor *t, int start, int count);
singa_tensor singa_tensor_view_matrix(const singa_tensor *t);
/* t keeps its shape but lives in mem from now on (a view: mem outlives it); storage t owned is
 * freed. */
void singa_tensor_rebind(singa_tensor *t, float *mem);

void singa_tensor_fill(singa_tensor *t, float v);
void singa_tensor_copy(singa_tensor *dst, const singa_tensor *src);
void singa_tensor_scale(singa_tensor *t, float alpha);
/* y = alpha * x + y */
void singa_tensor_axpy(float alpha, const singa_tensor *x, singa_tensor *y);
double singa_tensor_sum(const singa_tensor *t);
double singa_tensor_sumsq(const singa_tensor *t);

/* C = alpha * op(A) * op(B) + beta * C on the matrix views of the tensors. */
void singa_tensor_gemm(bool trans_a, bool trans_b, float alpha, const singa_tensor *a,
                       const singa_tensor *b, float beta, singa_tensor *c);
/* y = alpha * op(A) x + beta * y, x and y as flat vectors. */
void singa_tensor_gemv(bool trans_a, float alpha, const singa_tensor *a, const float *x, float beta,
                       float *y);
/* Each row of C += v (v has cols(C) elements); sums of rows: out = beta * out + alpha * sum_r C[r]. */
void singa_tensor_add_row(singa_tensor *c, const float *v);
void singa_tensor_sum_rows(const singa_tensor *c, float alpha, float beta, float *out);

void singa_blas_set_threads(int n);
/* The kernels OpenBLAS chose for this CPU when it loaded ("Haswell", "SkylakeX", "Prescott", ...). */
const char *singa_blas_core(void);

#pragma GCC visibility pop

#endif
