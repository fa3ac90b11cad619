/* cluster.compress's codec (src/runtime/compress.c): fp16 and bf16 round trips within half a
 * unit of their last place, rounded to even, with subnormals, infinities and NaNs as compress.h
 * says; top-k sends exactly k values per slice, the largest, and with error feedback what was
 * sent over the steps plus the residual adds up to the gradients; what does not decode is refused. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "runtime/compress.h"
#include "tap.h"

static float rnd(unsigned *seed)
{
    *seed = *seed * 1103515245u + 12345u;
    return ((float)(*seed >> 8 & 0xffff) / 32768.0f - 1.0f);
}

/* Whether x rounds to y with at most half a unit of y's last place (mant bits of mantissa; no
 * unit below `tiny`, the subnormals' step). */
static int within_half_ulp(float x, float y, int mant, float tiny)
{
    if (x == 0)
        return y == 0;
    int e;
    frexpf(x, &e);
    return fabsf(x - y) <= fmaxf(ldexpf(0.5f, e - 1 - mant), tiny / 2) * 1.0001f;
}

/* Through fp16 and back. */
static float h16(float x) { return rt_compress_from_fp16(rt_compress_fp16(x)); }
static float b16(float x) { return rt_compress_from_bf16(rt_compress_bf16(x)); }

static void halves(void)
{
    unsigned seed = 7;
    int bad16 = 0, badb = 0;
    for (int i = 0; i < 100000; i++) {
        float x = rnd(&seed) * ldexpf(1, (int)(seed % 20) - 10);
        bad16 += !within_half_ulp(x, h16(x), 10, 0x1p-24f);
        badb += !within_half_ulp(x, b16(x), 7, 0);
    }
    ok(bad16 == 0, "fp16 round trips within half a unit (%d off)", bad16);
    ok(badb == 0, "bf16 round trips within half a unit (%d off)", badb);
    /* Ties go to even. */
    ok(rt_compress_fp16(1.0f + 0x1p-11f) == 0x3c00 && rt_compress_fp16(1.0f + 3 * 0x1p-11f) == 0x3c02,
       "fp16 rounds ties to even");
    ok(rt_compress_bf16(1.0f + 0x1p-8f) == 0x3f80 && rt_compress_bf16(1.0f + 3 * 0x1p-8f) == 0x3f82,
       "bf16 rounds ties to even");
    /* Exact values survive, the edges of fp16's range. */
    const float exact[] = {0.0f, -0.0f, 1.0f, -2.5f, 65504.0f, 0x1p-14f, 0x1p-24f, 3 * 0x1p-24f};
    int kept = 0;
    for (size_t i = 0; i < sizeof exact / sizeof *exact; i++) {
        float y = h16(exact[i]);
        kept += y == exact[i] && signbit(y) == signbit(exact[i]);
    }
    ok(kept == (int)(sizeof exact / sizeof *exact), "fp16 keeps exact values, signed zeros and subnormals");
    ok(h16(0x1p-26f) == 0 && h16(0x1p-25f * 1.5f) == 0x1p-24f,
       "fp16 rounds below its smallest subnormal to 0 or 2^-24");
    ok(isinf(h16(65520.0f)) && h16(65519.0f) == 65504.0f &&
       h16(-1e30f) == -INFINITY && h16(INFINITY) == INFINITY,
       "fp16 overflows to infinity of the same sign from 65520");
    ok(isnan(h16(NAN)) && isnan(b16(NAN)) &&
       isnan(b16(-NAN)),
       "NaN stays NaN in both");
    ok(b16(1e38f) > 9.9e37f && b16(1e-40f) > 0 &&
       b16(-INFINITY) == -INFINITY,
       "bf16 keeps float32's range, subnormals and infinities");
    /* Through the slice encoding, little-endian. */
    float x[5] = {1, -2, 0.5f, 3, 1e-3f}, y[5];
    uint8_t buf[10];
    singa_compress c = {SINGA_COMPRESS_FP16, 0, false};
    rt_compress_encode(&c, x, 5, NULL, NULL, buf);
    ok(rt_compress_bytes(&c, 5) == 10 && buf[0] == 0x00 && buf[1] == 0x3c && rt_compress_decode(&c, buf, 10, y, 5) == 0 &&
       y[1] == -2 && fabsf(y[4] - 1e-3f) < 1e-6f, "a slice in fp16: 2 bytes a value, little-endian");
    ok(rt_compress_decode(&c, buf, 9, y, 5) < 0, "a payload of the wrong size is refused");
}

static void topk(void)
{
    enum { N = 1000, STEPS = 30 };
    singa_compress c = {SINGA_COMPRESS_TOPK, 0.013, true};
    size_t k = rt_compress_topk_count(c.topk, N);
    ok(k == 13 && rt_compress_topk_count(0.0001, N) == 1 && rt_compress_topk_count(1, N) == N &&
       rt_compress_topk_count(0.5, 3) == 2, "k = max(1, ceil(ratio n))");
    float *g = malloc(N * sizeof *g), *res = calloc(N, sizeof *res), *scratch = malloc(N * sizeof *scratch);
    float *dec = malloc(N * sizeof *dec);
    double *sum_g = calloc(N, sizeof *sum_g), *sum_sent = calloc(N, sizeof *sum_sent);
    uint8_t *out = malloc(rt_compress_bytes(&c, N));
    unsigned seed = 3;
    int exact_k = 0, decoded = 0, largest = 0;
    for (int step = 0; step < STEPS; step++) {
        float before[N];
        for (int i = 0; i < N; i++) {
            g[i] = rnd(&seed);
            sum_g[i] += g[i];
            before[i] = res[i] + g[i];
        }
        rt_compress_encode(&c, g, N, res, scratch, out);
        decoded += rt_compress_decode(&c, out, rt_compress_bytes(&c, N), dec, N) == 0;
        int nz = 0;
        float min_sent = INFINITY, max_left = 0;
        for (int i = 0; i < N; i++) {
            sum_sent[i] += dec[i];
            if (dec[i] != 0) {
                nz++;
                min_sent = fminf(min_sent, fabsf(before[i]));
            } else {
                max_left = fmaxf(max_left, fabsf(before[i]));
            }
        }
        exact_k += nz == (int)k;
        largest += min_sent >= max_left;
    }
    ok(rt_compress_bytes(&c, N) == 8 * k, "top-k: 8 bytes (index, value) per value sent");
    ok(exact_k == STEPS, "top-k sends exactly k values every step (%d of %d)", exact_k, STEPS);
    ok(decoded == STEPS, "what top-k encodes decodes");
    ok(largest == STEPS, "top-k sends the largest of gradient + residual");
    double worst = 0;
    for (int i = 0; i < N; i++)
        worst = fmax(worst, fabs(sum_sent[i] + res[i] - sum_g[i]));
    ok(worst < 1e-4, "sent + residual == the gradients' sum (worst %g)", worst);
    /* Ties: exactly k, the lowest indices first. */
    float same[6] = {1, 1, 1, 1, 1, 1};
    singa_compress half = {SINGA_COMPRESS_TOPK, 0.5, false};
    uint8_t tb[24];
    rt_compress_encode(&half, same, 6, NULL, scratch, tb);
    ok(rt_compress_decode(&half, tb, 24, dec, 6) == 0 && dec[0] == 1 && dec[1] == 1 && dec[2] == 1 && dec[3] == 0 &&
       dec[5] == 0, "ties: exactly k, the lowest indices");
    tb[8] = 0; /* the second index repeats the first */
    ok(rt_compress_decode(&half, tb, 24, dec, 6) < 0, "indices out of order are refused");
    tb[8] = 9;
    ok(rt_compress_decode(&half, tb, 24, dec, 6) < 0, "an index beyond the slice is refused");
    free(g), free(res), free(scratch), free(dec), free(sum_g), free(sum_sent), free(out);
}

int main(void)
{
    halves();
    topk();
    return done_testing();
}
