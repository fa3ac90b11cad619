/* PowerSGD's arithmetic (powersgd.h), by plain loops that read each row of M once and in order
 * (M is 48 MB for the big MLP: its passes, not the flops, are the cost), whose order of operations
 * is fixed: P in the pass that takes the gradient in (and the last step's residual out), Q' in
 * one more, the update and the residual by one function of a row. */
/* Each element's value is its products and sums rounded one by one, never contracted into an
 * FMA: the v3 and v4 kernels (core/simd.h), wider only, give the baseline's bits, so replicas on
 * different CPUs apply the same update. */
#pragma GCC optimize("fp-contract=off")

#include <math.h>
#include <stdint.h>
#include <string.h>

#include "core/simd.h"
#include "runtime/powersgd.h"

/* A kernel's helper: a v3 or v4 clone inlines another function only when it must. */
#define ROW_HELPER static inline __attribute__((always_inline))

rt_psgd_geom rt_psgd_geom_of(const int *shape, int ndim, size_t offset, size_t n, int rank)
{
    rt_psgd_geom g = {.mode = ndim < 2 ? RT_PSGD_F16 : RT_PSGD_F32, .n = n, .rank = rank};
    if (ndim < 2 || shape[0] <= 0)
        return g;
    size_t size = 1;
    for (int i = 0; i < ndim; i++)
        size *= (size_t)shape[i];
    size_t first = (size_t)shape[0], cols = size / first, r = (size_t)rank;
    if (r >= first || r >= cols || n == 0)
        return g;
    size_t pad = offset % cols, rows = (pad + n + cols - 1) / cols;
    if (r >= rows)
        return g;
    g.mode = RT_PSGD_LOWRANK;
    g.rows = rows;
    g.cols = cols;
    g.pad = pad;
    return g;
}

/* splitmix64: the same numbers in every process, from the slice alone. */
static float seeded(uint64_t *state)
{
    uint64_t z = (*state += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    z ^= z >> 31;
    return (float)(z >> 40) / (float)(1u << 24) - 0.5f;
}

static void init_column(float *q, const rt_psgd_geom *g, unsigned seed, int c)
{
    uint64_t state = ((uint64_t)seed << 20) ^ (uint64_t)c;
    for (size_t j = 0; j < g->cols; j++)
        q[j * (size_t)g->rank + (size_t)c] = seeded(&state);
}

void rt_psgd_init_q(float *q, const rt_psgd_geom *g, unsigned seed)
{
    for (int c = 0; c < g->rank; c++)
        init_column(q, g, seed, c);
}

void rt_psgd_warm_q(float *q, const float *qsum, const rt_psgd_geom *g, unsigned seed)
{
    size_t r = (size_t)g->rank;
    if (q != qsum)
        memcpy(q, qsum, rt_psgd_q_len(g) * sizeof *q);
    for (int c = 0; c < g->rank; c++) {
        bool zero = true;
        for (size_t j = 0; j < g->cols && zero; j++)
            zero = q[j * r + (size_t)c] == 0;
        if (zero)
            init_column(q, g, seed, c);
    }
}

/* Q^T (R x cols) into t, so that each row's products run along memory. */
ROW_HELPER void transpose_q(const float *q, float *t, const rt_psgd_geom *g)
{
    size_t r = (size_t)g->rank;
    for (size_t j = 0; j < g->cols; j++)
        for (size_t c = 0; c < r; c++)
            t[c * g->cols + j] = q[j * r + c];
}

/* In 16 independent sums, as two vectors of GCC's (which the vectoriser would otherwise sum in
 * order, lane by lane: it may not reassociate). */
typedef float psgd_v8 __attribute__((vector_size(32)));
ROW_HELPER float dot(const float *a, const float *b, size_t n)
{
    psgd_v8 acc0 = {0}, acc1 = {0}, x0, y0, x1, y1;
    float s = 0;
    size_t j = 0;
    for (; j + 16 <= n; j += 16) {
        memcpy(&x0, a + j, sizeof x0);
        memcpy(&y0, b + j, sizeof y0);
        memcpy(&x1, a + j + 8, sizeof x1);
        memcpy(&y1, b + j + 8, sizeof y1);
        acc0 += x0 * y0;
        acc1 += x1 * y1;
    }
    for (; j < n; j++)
        s += a[j] * b[j];
    acc0 += acc1;
    for (int l = 0; l < 8; l++)
        s += acc0[l];
    return s;
}

/* u[0, b - a) = row i's share of P-hat Q'^T at columns [a, b), Q' given transposed (qt, R x cols):
 * the one order of operations of every expanded update and residual. */
ROW_HELPER void row_share(const float *pi, const float *qt, size_t cols, size_t r, size_t a, size_t b,
                          float *restrict u)
{
    float p0 = pi[0];
    for (size_t j = a; j < b; j++)
        u[j - a] = p0 * qt[j];
    for (size_t c = 1; c < r; c++) {
        float pc = pi[c];
        const float *qc = qt + c * cols;
        for (size_t j = a; j < b; j++)
            u[j - a] += pc * qc[j];
    }
}

/* The columns [a, b) of row i that the slice covers. */
ROW_HELPER void span_of(const rt_psgd_geom *g, size_t i, size_t *a, size_t *b)
{
    size_t end = g->pad + g->n - i * g->cols;
    *a = i == 0 ? g->pad : 0;
    *b = end < g->cols ? end : g->cols;
}

/* Row by row, while it is in cache: what M still owes of the last update taken off, the gradient
 * added, then the row's P. */
SINGA_KERNEL static void take_rows(float *m, const float *grad, const float *q, float *p, const float *owed,
                                   float *scratch, const rt_psgd_geom *g, bool keep)
{
    size_t r = (size_t)g->rank, cols = g->cols;
    float *qt = scratch, *ot = scratch + cols * r, *u = scratch + 2 * cols * r;
    transpose_q(q, qt, g);
    if (owed)
        transpose_q(owed, ot, g);
    for (size_t i = 0; i < g->rows; i++) {
        float *row = m + i * cols, *pi = p + i * r;
        size_t a, b;
        span_of(g, i, &a, &b);
        const float *in = grad + i * cols + a - g->pad;
        if (keep && owed) {
            row_share(pi, ot, cols, r, a, b, u);
            for (size_t j = a; j < b; j++)
                row[j] = (row[j] - u[j - a]) + in[j - a];
        } else if (keep) {
            for (size_t j = a; j < b; j++)
                row[j] += in[j - a];
        } else {
            memset(row, 0, a * sizeof *row);
            memcpy(row + a, in, (b - a) * sizeof *row);
            memset(row + b, 0, (cols - b) * sizeof *row);
        }
        for (size_t c = 0; c < r; c++)
            pi[c] = dot(row, qt + c * cols, cols);
    }
}

void rt_psgd_take_left(float *m, const float *grad, const float *q, float *p, const float *owed, float *scratch,
                       const rt_psgd_geom *g, bool keep)
{
    take_rows(m, grad, q, p, owed, scratch, g, keep);
}

void rt_psgd_orthogonalise(float *p, const rt_psgd_geom *g)
{
    size_t r = (size_t)g->rank;
    for (size_t c = 0; c < r; c++) {
        for (size_t d = 0; d < c; d++) {
            double dot = 0;
            for (size_t i = 0; i < g->rows; i++)
                dot += (double)p[i * r + c] * p[i * r + d];
            for (size_t i = 0; i < g->rows; i++)
                p[i * r + c] -= (float)dot * p[i * r + d];
        }
        double norm = 0;
        for (size_t i = 0; i < g->rows; i++)
            norm += (double)p[i * r + c] * p[i * r + c];
        norm = sqrt(norm);
        float inv = norm > 1e-30 && isfinite(norm) ? (float)(1.0 / norm) : 0.0f;
        for (size_t i = 0; i < g->rows; i++)
            p[i * r + c] = inv ? p[i * r + c] * inv : isnan(norm) ? NAN : 0.0f;
    }
}

/* Q'^T accumulated row by row, R axpys over each row of M (one pass over M), then transposed. */
SINGA_KERNEL static void right_rows(const float *m, const float *phat, float *q, float *scratch,
                                    const rt_psgd_geom *g)
{
    size_t r = (size_t)g->rank, cols = g->cols;
    memset(scratch, 0, cols * r * sizeof *scratch);
    for (size_t i = 0; i < g->rows; i++) {
        const float *row = m + i * cols;
        for (size_t c = 0; c < r; c++) {
            float pc = phat[i * r + c], *acc = scratch + c * cols;
            for (size_t j = 0; j < cols; j++)
                acc[j] += pc * row[j];
        }
    }
    for (size_t j = 0; j < cols; j++)
        for (size_t c = 0; c < r; c++)
            q[j * r + c] = scratch[c * cols + j];
}

void rt_psgd_right(const float *m, const float *phat, float *q, float *scratch, const rt_psgd_geom *g)
{
    right_rows(m, phat, q, scratch, g);
}

SINGA_KERNEL static void feedback_rows(float *m, const float *phat, const float *q, float *scratch,
                                       const rt_psgd_geom *g)
{
    size_t r = (size_t)g->rank, cols = g->cols;
    float *qt = scratch, *u = scratch + cols * r;
    transpose_q(q, qt, g);
    for (size_t i = 0; i < g->rows; i++) {
        float *row = m + i * cols;
        size_t a, b;
        span_of(g, i, &a, &b);
        row_share(phat + i * r, qt, cols, r, a, b, u);
        for (size_t j = a; j < b; j++)
            row[j] = row[j] - u[j - a];
    }
}

void rt_psgd_feedback(float *m, const float *phat, const float *q, float *scratch, const rt_psgd_geom *g)
{
    feedback_rows(m, phat, q, scratch, g);
}

SINGA_KERNEL static int expand_rows(const float *phat, const float *q, float *scratch, const rt_psgd_geom *g,
                                    rt_psgd_sink sink, void *ctx)
{
    size_t r = (size_t)g->rank, cols = g->cols;
    float *qt = scratch, *vals = scratch + cols * r;
    transpose_q(q, qt, g);
    for (size_t i = 0; i < g->rows; i++) {
        size_t a, b;
        span_of(g, i, &a, &b);
        row_share(phat + i * r, qt, cols, r, a, b, vals);
        int rc = sink(ctx, i * cols + a - g->pad, vals, b - a);
        if (rc)
            return rc;
    }
    return 0;
}

int rt_psgd_expand_each(const float *phat, const float *q, float *scratch, const rt_psgd_geom *g, rt_psgd_sink sink,
                        void *ctx)
{
    return expand_rows(phat, q, scratch, g, sink, ctx);
}

static int into(void *ctx, size_t offset, const float *vals, size_t n)
{
    memcpy((float *)ctx + offset, vals, n * sizeof *vals);
    return 0;
}

void rt_psgd_expand(const float *phat, const float *q, float *out, float *scratch, const rt_psgd_geom *g)
{
    rt_psgd_expand_each(phat, q, scratch, g, into, out);
}
