/* PowerSGD's arithmetic (src/runtime/powersgd.c), as the stub and the servers run it: a rank-R
 * gradient comes through exactly, alone and summed over two processes (the factors are linear);
 * with error feedback what each process's share of the updates carried plus its residual is
 * the sum of its gradients, and the shares add up to the update the servers send; Q starts the
 * same from the same seed and a zero column of Q' starts again from it; the feedback left to the
 * next step's pass is the feedback; a slice's geometry (padding, the params too small for the
 * rank, 1-D params as fp16). */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "runtime/powersgd.h"
#include "tap.h"

static float rnd(unsigned *seed)
{
    *seed = *seed * 1103515245u + 12345u;
    return ((float)(*seed >> 8 & 0xffff) / 32768.0f - 1.0f);
}

/* out (rows x cols) = A B^T + out when add, for A rows x r, B cols x r. */
static void outer(float *out, const float *a, const float *b, int rows, int cols, int r, bool add)
{
    for (int i = 0; i < rows; i++)
        for (int j = 0; j < cols; j++) {
            float v = 0;
            for (int c = 0; c < r; c++)
                v += a[i * r + c] * b[j * r + c];
            out[i * cols + j] = add ? out[i * cols + j] + v : v;
        }
}

static float worst_rel(const float *x, const float *y, size_t n)
{
    float scale = 0, worst = 0;
    for (size_t i = 0; i < n; i++)
        scale = fmaxf(scale, fabsf(y[i]));
    for (size_t i = 0; i < n; i++)
        worst = fmaxf(worst, fabsf(x[i] - y[i]) / scale);
    return worst;
}

enum { ROWS = 40, COLS = 23, R = 3 };

/* A step's two rounds: each process takes its gradient in (keep: onto its residual) and sends P;
 * P-hat is the orthonormalised sum; each sends Q', summed in qsum. */
static void exchange(float (*m)[ROWS * COLS], float (*grad)[ROWS * COLS], int nproc, bool keep, float *q, float *phat,
                     float *qsum, float *qloc, const rt_psgd_geom *g)
{
    float p[ROWS * R], scratch[(2 * R + 1) * COLS];
    memset(phat, 0, sizeof p);
    for (int w = 0; w < nproc; w++) {
        rt_psgd_take_left(m[w], grad[w], q, p, NULL, scratch, g, keep);
        for (size_t i = 0; i < rt_psgd_p_len(g); i++)
            phat[i] += p[i];
    }
    rt_psgd_orthogonalise(phat, g);
    memset(qsum, 0, rt_psgd_q_len(g) * sizeof *qsum);
    for (int w = 0; w < nproc; w++) {
        rt_psgd_right(m[w], phat, qloc + w * COLS * R, scratch, g);
        for (size_t i = 0; i < rt_psgd_q_len(g); i++)
            qsum[i] += qloc[w * COLS * R + i];
    }
}

static void exact(int nproc)
{
    static float a[ROWS * R], b[2][COLS * R], grad[2][ROWS * COLS], m[2][ROWS * COLS], want[ROWS * COLS];
    float q[COLS * R], phat[ROWS * R], qsum[COLS * R], qloc[2 * COLS * R], out[ROWS * COLS], scratch[(R + 1) * COLS];
    unsigned seed = 11;
    int shape[2] = {ROWS, COLS};
    rt_psgd_geom g = rt_psgd_geom_of(shape, 2, 0, ROWS * COLS, R);
    for (int i = 0; i < ROWS * R; i++)
        a[i] = rnd(&seed);
    for (int w = 0; w < nproc; w++) { /* the same left factor: the sum is rank R too */
        for (int i = 0; i < COLS * R; i++)
            b[w][i] = rnd(&seed);
        outer(grad[w], a, b[w], ROWS, COLS, R, false);
        outer(want, a, b[w], ROWS, COLS, R, w > 0);
    }
    rt_psgd_init_q(q, &g, 5);
    exchange(m, grad, nproc, false, q, phat, qsum, qloc, &g);
    rt_psgd_expand(phat, qsum, out, scratch, &g);
    float worst = worst_rel(out, want, ROWS * COLS);
    ok(g.mode == RT_PSGD_LOWRANK && worst < 1e-5, "%d process%s: a rank-%d %dx%d gradient%s exactly (worst %.2g)",
       nproc, nproc == 1 ? "" : "es", R, ROWS, COLS, nproc == 1 ? "" : "s' sum", worst);
}

/* Error feedback over 6 steps of full-rank gradients in two processes, on a padded slice. */
static void feedback(void)
{
    enum { OFF = 2 * COLS + 5, N = ROWS * COLS - OFF - 2 * COLS - 9 };
    static float m[2][ROWS * COLS], grad[2][ROWS * COLS], sent[2][N], total[2][N], share[N], update[N], sum[N];
    float q[COLS * R], phat[ROWS * R], qsum[COLS * R], qloc[2 * COLS * R], scratch[(R + 1) * COLS];
    int shape[2] = {ROWS, COLS};
    unsigned seed = 3;
    rt_psgd_geom g = rt_psgd_geom_of(shape, 2, OFF, N, R);
    ok(g.pad == 5 && g.rows == 36 && g.cols == COLS && g.mode == RT_PSGD_LOWRANK,
       "a slice from element %d: %zu rows of %zu, %zu elements of padding first", OFF, g.rows, g.cols, g.pad);
    rt_psgd_init_q(q, &g, 9);
    float worst = 0, worst_sum = 0;
    for (int step = 0; step < 6; step++) {
        for (int w = 0; w < 2; w++)
            for (int i = 0; i < N; i++)
                total[w][i] += grad[w][i] = rnd(&seed);
        exchange(m, grad, 2, true, q, phat, qsum, qloc, &g);
        memset(sum, 0, sizeof sum);
        for (int w = 0; w < 2; w++) {
            rt_psgd_feedback(m[w], phat, qloc + w * COLS * R, scratch, &g);
            rt_psgd_expand(phat, qloc + w * COLS * R, share, scratch, &g);
            for (int i = 0; i < N; i++) {
                sent[w][i] += share[i];
                sum[i] += share[i];
            }
        }
        rt_psgd_expand(phat, qsum, update, scratch, &g);
        worst_sum = fmaxf(worst_sum, worst_rel(update, sum, N));
        rt_psgd_warm_q(q, qsum, &g, 9);
    }
    for (int w = 0; w < 2; w++) {
        for (int i = 0; i < N; i++)
            sent[w][i] += m[w][g.pad + (size_t)i];
        worst = fmaxf(worst, worst_rel(sent[w], total[w], N));
    }
    bool pads = m[0][0] == 0 && m[0][g.pad - 1] == 0 && m[1][g.pad + N] == 0 && m[1][g.rows * g.cols - 1] == 0;
    ok(worst < 1e-5 && pads, "error feedback: the shares sent plus the residual are each process's gradients summed "
       "over 6 steps (worst %.2g), the padding stays zero", worst);
    ok(worst_sum < 1e-5, "the shares add up to the update the servers' sums expand to (worst %.2g)", worst_sum);
}

/* The feedback left to the next step's first pass (rt_psgd_take_left's owed) gives the bits of
 * the feedback taken at once then the plain pass (a checkpoint between the two, exact resume);
 * the expanded update is each element's products summed in order, unfused, whichever kernel
 * (core/simd.h) this CPU runs, as every replica's must be. */
static void deferred(void)
{
    enum { OFF = COLS + 7, N = ROWS * COLS - OFF - 4 };
    static float m1[ROWS * COLS], m2[ROWS * COLS], grad[N], out[N];
    float q[COLS * R], own[COLS * R], p1[ROWS * R], p2[ROWS * R], scratch[(2 * R + 1) * COLS];
    int shape[2] = {ROWS, COLS};
    unsigned seed = 17;
    rt_psgd_geom g = rt_psgd_geom_of(shape, 2, OFF, N, R);
    for (int i = 0; i < N; i++) {
        m1[g.pad + (size_t)i] = m2[g.pad + (size_t)i] = rnd(&seed);
        grad[i] = rnd(&seed);
    }
    for (int i = 0; i < COLS * R; i++) {
        q[i] = rnd(&seed);
        own[i] = rnd(&seed);
    }
    for (int i = 0; i < ROWS * R; i++)
        p1[i] = p2[i] = rnd(&seed);
    rt_psgd_expand(p1, own, out, scratch, &g);
    bool plain = true;
    for (size_t k = 0; k < N; k++) {
        size_t e = k + g.pad, i = e / COLS, j = e % COLS;
        float v = p1[i * R] * own[j * R]; /* built for baseline x86-64, which has no FMA to contract into */
        for (int c = 1; c < R; c++)
            v += p1[i * R + (size_t)c] * own[j * R + (size_t)c];
        plain &= memcmp(&v, &out[k], sizeof v) == 0;
    }
    ok(plain, "the expanded update: each element's products rounded, then summed in order");
    rt_psgd_feedback(m1, p1, own, scratch, &g);
    rt_psgd_take_left(m1, grad, q, p1, NULL, scratch, &g, true);
    rt_psgd_take_left(m2, grad, q, p2, own, scratch, &g, true);
    ok(memcmp(m1, m2, sizeof m1) == 0 && memcmp(p1, p2, sizeof p1) == 0 && m2[0] == 0 && m2[ROWS * COLS - 1] == 0,
       "the feedback left to the next step's pass: the residual and P of the feedback taken at once, bit for bit");
}

static void warm_start(void)
{
    int shape[2] = {ROWS, COLS};
    rt_psgd_geom g = rt_psgd_geom_of(shape, 2, 0, ROWS * COLS, R);
    float q1[COLS * R], q2[COLS * R], q3[COLS * R], qsum[COLS * R];
    rt_psgd_init_q(q1, &g, 4);
    rt_psgd_init_q(q2, &g, 4);
    rt_psgd_init_q(q3, &g, 5);
    ok(memcmp(q1, q2, sizeof q1) == 0 && memcmp(q1, q3, sizeof q1) != 0, "Q starts the same from the same seed only");
    for (int i = 0; i < COLS * R; i++)
        qsum[i] = i % R == 1 ? 0 : (float)i;
    rt_psgd_warm_q(q2, qsum, &g, 4);
    bool kept = true, fresh = true;
    for (int j = 0; j < COLS; j++) {
        kept &= q2[j * R] == qsum[j * R] && q2[j * R + 2] == qsum[j * R + 2];
        fresh &= q2[j * R + 1] == q1[j * R + 1];
    }
    ok(kept && fresh, "Q warm-starts from the summed Q'; its zero column starts again from the seed");
}

static void geometry(void)
{
    int wide[2] = {40, 3}, one[1] = {40}, conv[4] = {8, 3, 2, 2};
    ok(rt_psgd_geom_of(one, 1, 0, 40, 2).mode == RT_PSGD_F16, "a 1-D param goes as fp16");
    ok(rt_psgd_geom_of(wide, 2, 0, 120, 3).mode == RT_PSGD_F32, "rank 3 of a 40x3 param: uncompressed");
    ok(rt_psgd_geom_of(wide, 2, 0, 120, 2).mode == RT_PSGD_LOWRANK, "rank 2 of a 40x3 param: factors");
    ok(rt_psgd_geom_of(wide, 2, 114, 6, 2).mode == RT_PSGD_F32, "a slice of 2 rows at rank 2: uncompressed");
    rt_psgd_geom c = rt_psgd_geom_of(conv, 4, 0, 96, 2);
    ok(c.mode == RT_PSGD_LOWRANK && c.rows == 8 && c.cols == 12, "a kernel of 8 x 3x2x2: an 8x12 matrix");
}

int main(void)
{
    exact(1);
    exact(2);
    feedback();
    deferred();
    warm_start();
    geometry();
    return done_testing();
}
