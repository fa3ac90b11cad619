/* PowerSGD's arithmetic (powersgd.h): Q' and the residual by OpenBLAS; P in the pass that takes
 * the gradient in; the orthogonalisation and the expanded update by plain loops, whose order of
 * operations is fixed. */
#include <cblas.h>
#include <math.h>
#include <stdint.h>
#include <string.h>

#include "runtime/powersgd.h"

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
static void transpose_q(const float *q, float *t, const rt_psgd_geom *g)
{
    size_t r = (size_t)g->rank;
    for (size_t j = 0; j < g->cols; j++)
        for (size_t c = 0; c < r; c++)
            t[c * g->cols + j] = q[j * r + c];
}

/* In eight independent sums, which the compiler vectorises (it keeps a single float sum in order). */
static float dot(const float *a, const float *b, size_t n)
{
    float acc[8] = {0}, s = 0;
    size_t j = 0;
    for (; j + 8 <= n; j += 8)
        for (int l = 0; l < 8; l++)
            acc[l] += a[j + (size_t)l] * b[j + (size_t)l];
    for (; j < n; j++)
        s += a[j] * b[j];
    for (int l = 0; l < 8; l++)
        s += acc[l];
    return s;
}

/* Row by row, while it is in cache: the gradient into M, then the row's P. */
void rt_psgd_take_left(float *m, const float *grad, const float *q, float *p, float *scratch, const rt_psgd_geom *g,
                       bool keep)
{
    size_t r = (size_t)g->rank, cols = g->cols;
    transpose_q(q, scratch, g);
    for (size_t i = 0; i < g->rows; i++) {
        float *row = m + i * cols;
        size_t a = i == 0 ? g->pad : 0, end = g->pad + g->n - i * cols, b = end < cols ? end : cols;
        const float *in = grad + i * cols + a - g->pad;
        if (keep) {
            for (size_t j = a; j < b; j++)
                row[j] += in[j - a];
        } else {
            memset(row, 0, a * sizeof *row);
            memcpy(row + a, in, (b - a) * sizeof *row);
            memset(row + b, 0, (cols - b) * sizeof *row);
        }
        for (size_t c = 0; c < r; c++)
            p[i * r + c] = dot(row, scratch + c * cols, cols);
    }
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

void rt_psgd_right(const float *m, const float *phat, float *q, const rt_psgd_geom *g)
{
    cblas_sgemm(CblasRowMajor, CblasTrans, CblasNoTrans, (int)g->cols, g->rank, (int)g->rows, 1.0f, m,
                (int)g->cols, phat, g->rank, 0.0f, q, g->rank);
}

void rt_psgd_feedback(float *m, const float *phat, const float *q, const rt_psgd_geom *g)
{
    size_t len = rt_psgd_m_len(g);
    cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasTrans, (int)g->rows, (int)g->cols, g->rank, -1.0f, phat, g->rank,
                q, g->rank, 1.0f, m, (int)g->cols);
    memset(m, 0, g->pad * sizeof *m);
    memset(m + g->pad + g->n, 0, (len - g->pad - g->n) * sizeof *m);
}

void rt_psgd_expand(const float *phat, const float *q, float *out, float *scratch, const rt_psgd_geom *g)
{
    size_t r = (size_t)g->rank, cols = g->cols;
    transpose_q(q, scratch, g);
    for (size_t i = 0; i < g->rows; i++) {
        size_t a = i == 0 ? g->pad : 0, end = g->pad + g->n - i * cols, b = end < cols ? end : cols;
        float *o = out + i * cols + a - g->pad;
        const float *pi = phat + i * r;
        for (size_t j = a; j < b; j++)
            o[j - a] = pi[0] * scratch[j];
        for (size_t c = 1; c < r; c++)
            for (size_t j = a; j < b; j++)
                o[j - a] += pi[c] * scratch[c * cols + j];
    }
}
