/* cluster.compress's codec (compress.h): half-width floats, top-k selection and its pairs. */
#include <math.h>
#include <string.h>

#if defined(__x86_64__) && defined(__GNUC__)
#include <immintrin.h>
#define HAVE_F16C_PATH 1
#endif

#include "runtime/compress.h"

static uint32_t bits_of(float f)
{
    uint32_t u;
    memcpy(&u, &f, sizeof u);
    return u;
}

static float float_of(uint32_t u)
{
    float f;
    memcpy(&f, &u, sizeof f);
    return f;
}

size_t rt_compress_topk_count(double ratio, size_t n)
{
    size_t k = (size_t)ceil(ratio * (double)n);
    return k < 1 ? 1 : k > n ? n : k;
}

enum { INT8_BLOCK = 256 };

size_t rt_compress_bytes(const singa_compress *c, size_t n)
{
    switch (c->kind) {
    case SINGA_COMPRESS_FP16:
    case SINGA_COMPRESS_BF16:
        return 2 * n;
    case SINGA_COMPRESS_TOPK:
        return n ? 8 * rt_compress_topk_count(c->topk, n) : 0;
    case SINGA_COMPRESS_INT8:
        return n + 4 * ((n + INT8_BLOCK - 1) / INT8_BLOCK);
    default:
        return 4 * n;
    }
}

/* Round to nearest even by the float unit itself: the exponent is rebased and the dropped 13
 * bits rounded in one add; a subnormal half is what adding 0.5 (whose unit is 2^-24) leaves. */
uint16_t rt_compress_fp16(float f)
{
    uint32_t x = bits_of(f), sign = x >> 16 & 0x8000, ax = x & 0x7fffffff;
    if (ax > 0x7f800000)
        return (uint16_t)(sign | 0x7e00);
    if (ax >= 0x477ff000) /* 65520 and up round to infinity */
        return (uint16_t)(sign | 0x7c00);
    if (ax < 0x38800000) /* below 2^-14 */
        return (uint16_t)(sign | (bits_of(float_of(ax) + 0.5f) - 0x3f000000));
    ax += 0xc8000fffu + (ax >> 13 & 1);
    return (uint16_t)(sign | ax >> 13);
}

float rt_compress_from_fp16(uint16_t h)
{
    uint32_t sign = (uint32_t)(h & 0x8000) << 16, e = h >> 10 & 0x1f, m = h & 0x3ff;
    if (e == 0)
        return float_of(sign | bits_of(ldexpf((float)m, -24)));
    if (e == 31)
        return float_of(sign | 0x7f800000 | m << 13);
    return float_of(sign | (e + 112) << 23 | m << 13);
}

uint16_t rt_compress_bf16(float f)
{
    uint32_t x = bits_of(f);
    if ((x & 0x7fffffff) > 0x7f800000)
        return (uint16_t)(x >> 16 | 0x40);
    return (uint16_t)((x + 0x7fff + (x >> 16 & 1)) >> 16);
}

float rt_compress_from_bf16(uint16_t h)
{
    return float_of((uint32_t)h << 16);
}

/* A NaN is selected first, as the largest magnitude, so that it reaches the server's check. */
static float magnitude(float v)
{
    return isnan(v) ? INFINITY : fabsf(v);
}

/* The k-th largest of a[0, n) (1 <= k <= n), reordering a (Hoare's selection). */
static float kth_largest(float *a, size_t n, size_t k)
{
    long lo = 0, hi = (long)n - 1, want = (long)k - 1;
    while (lo < hi) {
        float pivot = a[lo + (hi - lo) / 2];
        long i = lo, j = hi;
        while (i <= j) {
            while (a[i] > pivot)
                i++;
            while (a[j] < pivot)
                j--;
            if (i <= j) {
                float t = a[i];
                a[i++] = a[j];
                a[j--] = t;
            }
        }
        if (want <= j)
            hi = j;
        else if (want >= i)
            lo = i;
        else
            return a[want];
    }
    return a[lo];
}

/* fp16 slices a vector at a time where the CPU converts (F16C: the same rounding, ranges and
 * NaNs as the scalar code, which does the rest). */
#ifdef HAVE_F16C_PATH
/* A load of what libgcc read at startup, so every thread may ask. */
static bool has_f16c(void)
{
    return __builtin_cpu_supports("f16c") && __builtin_cpu_supports("avx");
}

__attribute__((target("avx,f16c"))) static size_t fp16_encode_f16c(const float *x, size_t n, uint8_t *out)
{
    size_t i = 0;
    for (; i + 8 <= n; i += 8)
        _mm_storeu_si128((__m128i *)(void *)(out + 2 * i),
                         _mm256_cvtps_ph(_mm256_loadu_ps(x + i), _MM_FROUND_TO_NEAREST_INT));
    return i;
}

__attribute__((target("avx,f16c"))) static size_t fp16_decode_f16c(const uint8_t *in, size_t n, float *x)
{
    size_t i = 0;
    for (; i + 8 <= n; i += 8)
        _mm256_storeu_ps(x + i, _mm256_cvtph_ps(_mm_loadu_si128((const __m128i *)(const void *)(in + 2 * i))));
    return i;
}
#endif

static void fp16_encode(const float *x, size_t n, uint8_t *out)
{
    size_t i = 0;
#ifdef HAVE_F16C_PATH
    if (has_f16c())
        i = fp16_encode_f16c(x, n, out);
#endif
    for (; i < n; i++) {
        uint16_t h = rt_compress_fp16(x[i]);
        out[2 * i] = (uint8_t)h, out[2 * i + 1] = (uint8_t)(h >> 8);
    }
}

static void fp16_decode(const uint8_t *in, size_t n, float *x)
{
    size_t i = 0;
#ifdef HAVE_F16C_PATH
    if (has_f16c())
        i = fp16_decode_f16c(in, n, x);
#endif
    for (; i < n; i++)
        x[i] = rt_compress_from_fp16((uint16_t)(in[2 * i] | in[2 * i + 1] << 8));
}

static uint8_t *put32(uint8_t *p, uint32_t v)
{
    p[0] = (uint8_t)v, p[1] = (uint8_t)(v >> 8), p[2] = (uint8_t)(v >> 16), p[3] = (uint8_t)(v >> 24);
    return p + 4;
}

static uint32_t get32(const uint8_t *p)
{
    return p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

/* Gradient plus residual (error feedback keeps it in the residual) or the gradient itself. */
static inline float topk_value(const float *x, float *residual, size_t i, bool store)
{
    if (!residual)
        return x[i];
    float v = residual[i] + x[i];
    if (store)
        residual[i] = v;
    return v;
}

/* A threshold that at least k of the n magnitudes most likely reach: the rank of about 2k in an
 * evenly spaced sample of them (plus some, so that a small sample still errs low). */
enum { SAMPLE = 4096 };

static float estimated_floor(const float *x, float *residual, size_t n, size_t k, float *scratch)
{
    size_t step = n / SAMPLE, rank = 2 * ((k * SAMPLE + n - 1) / n) + 16;
    for (size_t j = 0; j < SAMPLE; j++)
        scratch[j] = magnitude(topk_value(x, residual, j * step, false));
    return rank >= SAMPLE ? 0 : kth_largest(scratch, SAMPLE, rank);
}

static uint8_t *put_topk(uint8_t *out, const float *v, size_t i, float *keep)
{
    out = put32(put32(out, (uint32_t)i), bits_of(v[i]));
    if (keep) /* v may be keep */
        keep[i] = 0;
    return out;
}

/* Sends the k largest magnitudes of v (ties: the lowest indices first) given the k-th, t, and how
 * many are above it; idx (NULL: all of v) lists the candidates in order. */
static void emit_topk(const float *v, const uint32_t *idx, size_t m, size_t k, float t, size_t above, float *keep,
                      uint8_t *out)
{
    size_t ties = k - above;
    for (size_t j = 0; j < m; j++) {
        size_t i = idx ? idx[j] : j;
        float a = magnitude(v[i]);
        if (a > t || (a == t && ties > 0 && ties--))
            out = put_topk(out, v, i, keep);
    }
}

static size_t count_above(const float *a, size_t m, float t)
{
    size_t above = 0;
    for (size_t i = 0; i < m; i++)
        above += a[i] > t;
    return above;
}

/* Top-k of x (+ residual, which then keeps what is not sent).  One pass over the slice finds the
 * candidates at or above a sampled floor, their indices rising from scratch's start and their
 * magnitudes falling from its end; the k-th largest is selected among those.  Should the floor
 * miss (fewer than k above it, or candidates for more than half the slice), every magnitude is a
 * candidate. */
static void encode_topk(const singa_compress *c, const float *x, size_t n, float *residual, float *scratch,
                        uint8_t *out)
{
    size_t k = rt_compress_topk_count(c->topk, n), m = 0;
    const float *v = residual ? residual : x;
    uint32_t *idx = (uint32_t *)(void *)scratch;
    float floor = n >= 4 * SAMPLE ? estimated_floor(x, residual, n, k, scratch) : INFINITY;
    bool fits = floor < INFINITY;
    for (size_t i = 0; i < n; i++) {
        float a = magnitude(topk_value(x, residual, i, true));
        if (a >= floor && fits) {
            fits = 2 * (m + 1) <= n;
            idx[m] = (uint32_t)i;
            scratch[n - 1 - m++] = a;
        }
    }
    if (fits && m >= k) {
        float t = kth_largest(scratch + n - m, m, k);
        emit_topk(v, idx, m, k, t, count_above(scratch + n - m, m, t), residual, out);
        return;
    }
    for (size_t i = 0; i < n; i++)
        scratch[i] = magnitude(v[i]);
    float t = kth_largest(scratch, n, k);
    emit_topk(v, NULL, n, k, t, count_above(scratch, n, t), residual, out);
}

/* Per block: the scale (the largest change over 127; NaN when a change is not finite, so that a
 * diverging job still sees NaNs), then each change over it rounded to an int8. */
void rt_compress_delta(const float *values, float *base, size_t n, float *scratch, uint8_t *out)
{
    uint8_t *p = out;
    for (size_t at = 0; at < n; at += INT8_BLOCK) {
        size_t len = n - at < INT8_BLOCK ? n - at : INT8_BLOCK;
        float amax = 0, *d = scratch + at;
        bool finite = true;
        for (size_t i = 0; i < len; i++) {
            d[i] = values[at + i] - base[at + i];
            finite &= isfinite(d[i]);
            amax = fmaxf(amax, fabsf(d[i]));
        }
        float scale = finite ? amax / 127 : NAN, inv = amax > 0 ? 127 / amax : 0;
        p = put32(p, bits_of(scale));
        for (size_t i = 0; i < len; i++)
            *p++ = (uint8_t)(int8_t)(finite ? lrintf(d[i] * inv) : 0);
    }
    /* The base moves as the receiver's copy will: by what decodes, added the same way. */
    rt_compress_decode(&(singa_compress){SINGA_COMPRESS_INT8, 0, false, SINGA_COMPRESS_INT8}, out,
                       (size_t)(p - out), scratch, n);
    rt_compress_add(base, scratch, n);
}

void rt_compress_add(float *x, const float *delta, size_t n)
{
    for (size_t i = 0; i < n; i++)
        x[i] += delta[i];
}

void rt_compress_encode(const singa_compress *c, const float *x, size_t n, float *residual, float *scratch,
                        uint8_t *out)
{
    switch (c->kind) {
    case SINGA_COMPRESS_FP16:
        fp16_encode(x, n, out);
        break;
    case SINGA_COMPRESS_BF16:
        for (size_t i = 0; i < n; i++) {
            uint16_t h = rt_compress_bf16(x[i]);
            out[2 * i] = (uint8_t)h, out[2 * i + 1] = (uint8_t)(h >> 8);
        }
        break;
    case SINGA_COMPRESS_TOPK:
        if (!n)
            break;
        encode_topk(c, x, n, residual, scratch, out);
        break;
    default: /* uncompressed values travel as they are */
        break;
    }
}

size_t rt_compress_pairs(const float *x, size_t n, uint8_t *out)
{
    uint8_t *p = out;
    for (size_t i = 0; i < n; i++)
        if (x[i] != 0 || isnan(x[i]))
            p = put_topk(p, x, i, NULL);
    return (size_t)(p - out);
}

int rt_compress_from_pairs(const uint8_t *in, size_t nbytes, float *x, size_t n)
{
    if (nbytes % 8 != 0 || nbytes / 8 > n)
        return -1;
    memset(x, 0, n * sizeof *x);
    long last = -1;
    for (size_t j = 0; j < nbytes / 8; j++) {
        uint32_t i = get32(in + 8 * j);
        if ((long)i <= last || i >= n)
            return -1;
        x[i] = float_of(get32(in + 8 * j + 4));
        last = (long)i;
    }
    return 0;
}

int rt_compress_decode(const singa_compress *c, const uint8_t *in, size_t nbytes, float *x, size_t n)
{
    if (nbytes != rt_compress_bytes(c, n))
        return -1;
    switch (c->kind) {
    case SINGA_COMPRESS_FP16:
        fp16_decode(in, n, x);
        return 0;
    case SINGA_COMPRESS_BF16:
        for (size_t i = 0; i < n; i++)
            x[i] = rt_compress_from_bf16((uint16_t)(in[2 * i] | in[2 * i + 1] << 8));
        return 0;
    case SINGA_COMPRESS_INT8:
        for (size_t at = 0; at < n; at += INT8_BLOCK) {
            size_t len = n - at < INT8_BLOCK ? n - at : INT8_BLOCK;
            float scale = float_of(get32(in));
            in += 4;
            for (size_t i = 0; i < len; i++)
                x[at + i] = (float)(int8_t)in[i] * scale;
            in += len;
        }
        return 0;
    case SINGA_COMPRESS_TOPK:
        return rt_compress_from_pairs(in, nbytes, x, n);
    default:
        return -1;
    }
}
