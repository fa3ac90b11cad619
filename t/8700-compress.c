/* cluster.compress's codec (src/runtime/compress.c): fp16 and bf16 round trips within half a
 * unit of their last place, rounded to even, with subnormals, infinities and NaNs as compress.h
 * says; top-k sends exactly k values per slice, the largest, and with error feedback what was
 * sent over the steps plus the residual adds up to the gradients; what does not decode is refused.
 * A slice is converted as each value alone is (the vector path where the CPU has one), and a long
 * slice's top-k (found among sampled candidates) is the one a full sort gives, also where the
 * sample misleads.  int8 changes: the receiver's copy stays the sender's base bit for bit, within
 * half a step of the values, and a NaN arrives as a NaN. */
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
    singa_compress c = {SINGA_COMPRESS_FP16, 0, false, SINGA_COMPRESS_FP16};
    rt_compress_encode(&c, x, 5, NULL, NULL, buf);
    ok(rt_compress_bytes(&c, 5) == 10 && buf[0] == 0x00 && buf[1] == 0x3c && rt_compress_decode(&c, buf, 10, y, 5) == 0 &&
       y[1] == -2 && fabsf(y[4] - 1e-3f) < 1e-6f, "a slice in fp16: 2 bytes a value, little-endian");
    ok(rt_compress_decode(&c, buf, 9, y, 5) < 0, "a payload of the wrong size is refused");
}

static void topk(void)
{
    enum { N = 1000, STEPS = 30 };
    singa_compress c = {SINGA_COMPRESS_TOPK, 0.013, true, SINGA_COMPRESS_FP16};
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
    singa_compress half = {SINGA_COMPRESS_TOPK, 0.5, false, SINGA_COMPRESS_FP16};
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

static uint32_t rnd32(unsigned *seed)
{
    *seed = *seed * 1103515245u + 12345u;
    uint32_t hi = *seed >> 16;
    *seed = *seed * 1103515245u + 12345u;
    return hi << 16 | *seed >> 16;
}

/* Slices of every length up to a vector and beyond, of any bits: each value as alone. */
static void slices(void)
{
    enum { N = 4099 };
    float *x = malloc(N * sizeof *x), *y = malloc(N * sizeof *y);
    uint8_t *buf = malloc(2 * N);
    unsigned seed = 11;
    for (int i = 0; i < N; i++) {
        uint32_t u = rnd32(&seed);
        if (i % 3 == 0) /* a third within fp16's range (2^-26 to 2^15), subnormals included */
            u = (u & 0x807fffffu) | (uint32_t)(101 + (u >> 8) % 42) << 23;
        if (i % 6 == 0) /* ties */
            u = (u & ~0x1fffu) | 0x1000u;
        memcpy(&x[i], &u, sizeof u);
    }
    singa_compress c = {SINGA_COMPRESS_FP16, 0, false, SINGA_COMPRESS_FP16};
    int bad = 0, back = 0;
    for (int n = 0; n <= 24; n++) { /* lengths around the vector's 8 */
        rt_compress_encode(&c, x + n, (size_t)n, NULL, NULL, buf);
        for (int i = 0; i < n; i++) {
            uint16_t want = rt_compress_fp16(x[n + i]), got = (uint16_t)(buf[2 * i] | buf[2 * i + 1] << 8);
            bad += got != want && !(isnan(x[n + i]) && (got & 0x7c00) == 0x7c00 && (got & 0x3ff));
        }
    }
    rt_compress_encode(&c, x, N, NULL, NULL, buf);
    for (int i = 0; i < N; i++) {
        uint16_t want = rt_compress_fp16(x[i]), got = (uint16_t)(buf[2 * i] | buf[2 * i + 1] << 8);
        bad += got != want && !(isnan(x[i]) && (got & 0x7c00) == 0x7c00 && (got & 0x3ff));
    }
    ok(bad == 0, "an fp16 slice is each value rounded alone, NaNs staying NaNs (%d differ)", bad);
    rt_compress_decode(&c, buf, 2 * N, y, N);
    for (int i = 0; i < N; i++) {
        float want = rt_compress_from_fp16((uint16_t)(buf[2 * i] | buf[2 * i + 1] << 8));
        back += !(memcmp(&want, &y[i], sizeof want) == 0 || (isnan(want) && isnan(y[i])));
    }
    ok(back == 0, "an fp16 slice decodes as each value alone (%d differ)", back);
    free(x), free(y), free(buf);
}

static const float *by_magnitude;

static int larger_first(const void *a, const void *b)
{
    uint32_t i = *(const uint32_t *)a, j = *(const uint32_t *)b;
    float x = fabsf(by_magnitude[i]), y = fabsf(by_magnitude[j]);
    return x > y ? -1 : x < y ? 1 : i < j ? -1 : i > j;
}

/* Whether top-k of v sends the k a full sort picks (largest first, then the lowest indices). */
static int same_as_sorted(const float *v, size_t n, double ratio)
{
    singa_compress c = {SINGA_COMPRESS_TOPK, ratio, false, SINGA_COMPRESS_FP16};
    size_t k = rt_compress_topk_count(ratio, n);
    uint32_t *order = malloc(n * sizeof *order);
    float *scratch = malloc(n * sizeof *scratch);
    uint8_t *out = malloc(rt_compress_bytes(&c, n));
    char *want = calloc(n, 1);
    for (size_t i = 0; i < n; i++)
        order[i] = (uint32_t)i;
    by_magnitude = v;
    qsort(order, n, sizeof *order, larger_first);
    for (size_t j = 0; j < k; j++)
        want[order[j]] = 1;
    rt_compress_encode(&c, v, n, NULL, scratch, out);
    size_t right = 0;
    for (size_t j = 0; j < k; j++) {
        uint32_t i = (uint32_t)(out[8 * j] | out[8 * j + 1] << 8 | out[8 * j + 2] << 16 | (uint32_t)out[8 * j + 3] << 24);
        right += i < n && want[i] && memcmp(out + 8 * j + 4, &v[i], 4) == 0;
    }
    free(order), free(scratch), free(out), free(want);
    return right == k;
}

static void long_topk(void)
{
    enum { N = 65536 }; /* sampled: 4096 values, every 16th */
    float *v = malloc(N * sizeof *v);
    unsigned seed = 5;
    for (int i = 0; i < N; i++)
        v[i] = rnd(&seed) * ldexpf(1, (int)(seed % 16) - 8);
    ok(same_as_sorted(v, N, 0.01) && same_as_sorted(v, N, 0.001) && same_as_sorted(v, N, 0.3),
       "a long slice's top-k is a full sort's (1%%, 0.1%%, 30%%)");
    for (int i = 0; i < N; i++)
        v[i] = i % 16 ? 1 : 10;
    ok(same_as_sorted(v, N, 0.01), "ties among the sampled candidates: the lowest indices");
    for (int i = 0; i < N; i++)
        v[i] = i % 16 ? 1 : i < 16 * 100 ? 10 : 0;
    ok(same_as_sorted(v, N, 0.01), "a sample that sets the floor too high: still the k largest");
    for (int i = 0; i < N; i++)
        v[i] = i % 16 ? rnd(&seed) : 0;
    ok(same_as_sorted(v, N, 0.01), "a sample that sets the floor at zero: still the k largest");
    free(v);
}

static void int8_changes(void)
{
    enum { N = 1000, STEPS = 40 }; /* 3 whole blocks and a short one */
    singa_compress c = {SINGA_COMPRESS_INT8, 0, false, SINGA_COMPRESS_INT8};
    float *values = malloc(N * sizeof *values), *base = malloc(N * sizeof *base), *copy = malloc(N * sizeof *copy);
    float *scratch = malloc(N * sizeof *scratch), *delta = malloc(N * sizeof *delta);
    uint8_t *out = malloc(rt_compress_bytes(&c, N));
    unsigned seed = 9;
    for (int i = 0; i < N; i++)
        values[i] = base[i] = copy[i] = rnd(&seed);
    int same = 0, decoded = 0, near = 0;
    for (int step = 0; step < STEPS; step++) {
        for (int i = 0; i < N; i++) /* most change a little, some a lot */
            values[i] += rnd(&seed) * (i % 97 == step % 97 ? 1.0f : 1e-3f);
        rt_compress_delta(values, base, N, scratch, out);
        decoded += rt_compress_decode(&c, out, rt_compress_bytes(&c, N), delta, N) == 0;
        rt_compress_add(copy, delta, N);
        same += memcmp(copy, base, N * sizeof *copy) == 0;
        int off = 0;
        for (int b = 0; b < N; b += 256) { /* within half a step of the block's largest change */
            float scale;
            memcpy(&scale, out + b + 4 * (b / 256), sizeof scale);
            for (int i = b; i < N && i < b + 256; i++)
                off += fabsf(values[i] - copy[i]) > scale / 2 * 1.0001f + 1e-7f;
        }
        near += off == 0;
    }
    ok(rt_compress_bytes(&c, N) == N + 4 * 4, "int8: a byte a value and a scale per 256");
    ok(decoded == STEPS && same == STEPS, "int8: the receiver's copy is the sender's base, bit for bit (%d of %d)",
       same, STEPS);
    ok(near == STEPS, "int8: the copy within half a step of the values (%d of %d steps)", near, STEPS);
    values[3] = NAN;
    rt_compress_delta(values, base, N, scratch, out);
    rt_compress_decode(&c, out, rt_compress_bytes(&c, N), delta, N);
    ok(isnan(delta[3]) && !isnan(delta[300]), "int8: a NaN makes its block's changes NaN, the others stay");
    ok(rt_compress_decode(&c, out, rt_compress_bytes(&c, N) - 1, delta, N) < 0, "int8: a short payload is refused");
    free(values), free(base), free(copy), free(scratch), free(delta), free(out);
}

int main(void)
{
    halves();
    slices();
    topk();
    long_topk();
    int8_changes();
    return done_testing();
}
