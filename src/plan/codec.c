/* The codecs' CPU cost for the planner: each of cluster.compress's codecs run on a buffer of
 * gradient-like values, encoded and decoded, timed per float in this thread's CPU time, the
 * fastest of 3 rounds (other processes' load is not the codec's). */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <time.h>

#include "runtime/compress.h"
#include "runtime/powersgd.h"
#include "singa/plan.h"

enum { N = 1 << 18, ROWS = 2048, COLS = 1024, RANK = 4 }; /* a matrix larger than the caches, as a layer's */

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

/* Seconds per float to encode and decode x under c. */
static double time_codec(singa_compress c, const float *x, float *residual, float *scratch, uint8_t *wire, float *back)
{
    double t0 = now();
    rt_compress_encode(&c, x, N, residual, scratch, wire);
    rt_compress_decode(&c, wire, rt_compress_bytes(&c, N), back, N);
    return (now() - t0) / N;
}

static double time_int8(const float *x, float *base, float *scratch, uint8_t *wire)
{
    double t0 = now();
    rt_compress_delta(x, base, N, scratch, wire);
    rt_compress_add(base, scratch, N);
    return (now() - t0) / N;
}

/* PowerSGD's passes over one step's matrix: the last step's feedback with P = M Q (one pass),
 * P-hat, Q' = M^T P-hat and the update, per element; 1 (no estimate) out of memory. */
static double time_powersgd(void)
{
    size_t n = (size_t)ROWS * COLS;
    int shape[2] = {ROWS, COLS};
    rt_psgd_geom g = rt_psgd_geom_of(shape, 2, 0, n, RANK);
    float *grad = calloc(n, sizeof *grad), *m = calloc(n, sizeof *m), *out = malloc(n * sizeof *out),
          *scratch = calloc((size_t)COLS * (2 * RANK + 1), sizeof *scratch),
          *q = calloc(rt_psgd_q_len(&g), sizeof *q), *owed = calloc(rt_psgd_q_len(&g), sizeof *owed),
          *p = calloc(rt_psgd_p_len(&g), sizeof *p);
    double t = 1;
    if (grad && m && out && scratch && q && owed && p) {
        for (size_t i = 0; i < n; i++)
            grad[i] = (float)((i * 2654435761u) % 1000) * 1e-5f;
        rt_psgd_init_q(q, &g, 1);
        double t0 = now();
        rt_psgd_take_left(m, grad, q, p, owed, scratch, &g, true);
        rt_psgd_orthogonalise(p, &g);
        rt_psgd_right(m, p, owed, scratch, &g);
        rt_psgd_expand(p, owed, out, scratch, &g);
        t = (now() - t0) / (double)n;
    }
    free(grad), free(m), free(out), free(scratch), free(q), free(owed), free(p);
    return t;
}

void singa_plan_codec_measure(singa_plan_codec *c)
{
    *c = (singa_plan_codec){0};
    float *x = malloc(N * sizeof *x), *a = calloc(N, sizeof *a), *b = calloc(N, sizeof *b),
          *d = calloc(N, sizeof *d);
    uint8_t *wire = malloc(8 * (size_t)N);
    if (!x || !a || !b || !d || !wire)
        goto out;
    uint32_t s = 12345;
    for (int i = 0; i < N; i++) {
        s = s * 1664525u + 1013904223u;
        x[i] = ((float)(s >> 8) / 16777216.0f - 0.5f) * 1e-2f;
    }
    *c = (singa_plan_codec){1, 1, 1, 1, 1};
    for (int round = 0; round < 3; round++) {
        c->fp16 = fmin(c->fp16, time_codec((singa_compress){SINGA_COMPRESS_FP16, 0, false, SINGA_COMPRESS_FP16}, x,
                                           NULL, NULL, wire, a));
        c->bf16 = fmin(c->bf16, time_codec((singa_compress){SINGA_COMPRESS_BF16, 0, false, SINGA_COMPRESS_BF16}, x,
                                           NULL, NULL, wire, a));
        c->topk = fmin(c->topk, time_codec((singa_compress){SINGA_COMPRESS_TOPK, 0.01, true, SINGA_COMPRESS_FP16}, x,
                                           b, d, wire, a));
        c->int8 = fmin(c->int8, time_int8(x, a, d, wire));
        c->powersgd = fmin(c->powersgd, time_powersgd());
    }
out:
    free(x);
    free(a);
    free(b);
    free(d);
    free(wire);
}
