/* cluster.compress's codec (compress.h): half-width floats and top-k selection. */
#include <math.h>
#include <string.h>

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

size_t rt_compress_bytes(const singa_compress *c, size_t n)
{
    switch (c->kind) {
    case SINGA_COMPRESS_FP16:
    case SINGA_COMPRESS_BF16:
        return 2 * n;
    case SINGA_COMPRESS_TOPK:
        return n ? 8 * rt_compress_topk_count(c->topk, n) : 0;
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

static uint8_t *put32(uint8_t *p, uint32_t v)
{
    p[0] = (uint8_t)v, p[1] = (uint8_t)(v >> 8), p[2] = (uint8_t)(v >> 16), p[3] = (uint8_t)(v >> 24);
    return p + 4;
}

static uint32_t get32(const uint8_t *p)
{
    return p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

/* Selects from v (the residual, which then keeps what is not sent, or the gradient itself). */
static void encode_topk(const singa_compress *c, const float *v, size_t n, float *keep, float *scratch, uint8_t *out)
{
    size_t k = rt_compress_topk_count(c->topk, n), above = 0;
    for (size_t i = 0; i < n; i++)
        scratch[i] = magnitude(v[i]);
    float t = kth_largest(scratch, n, k);
    for (size_t i = 0; i < n; i++)
        above += magnitude(v[i]) > t;
    size_t ties = k - above; /* of those equal to t, the first go */
    for (size_t i = 0; i < n; i++) {
        float m = magnitude(v[i]);
        if (m > t || (m == t && ties > 0 && ties--)) {
            out = put32(put32(out, (uint32_t)i), bits_of(v[i]));
            if (keep)
                keep[i] = 0;
        }
    }
}

void rt_compress_encode(const singa_compress *c, const float *x, size_t n, float *residual, float *scratch,
                        uint8_t *out)
{
    switch (c->kind) {
    case SINGA_COMPRESS_FP16:
        for (size_t i = 0; i < n; i++) {
            uint16_t h = rt_compress_fp16(x[i]);
            out[2 * i] = (uint8_t)h, out[2 * i + 1] = (uint8_t)(h >> 8);
        }
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
        if (residual)
            for (size_t i = 0; i < n; i++)
                residual[i] += x[i];
        encode_topk(c, residual ? residual : x, n, residual, scratch, out);
        break;
    default: /* uncompressed values travel as they are */
        break;
    }
}

int rt_compress_decode(const singa_compress *c, const uint8_t *in, size_t nbytes, float *x, size_t n)
{
    if (nbytes != rt_compress_bytes(c, n))
        return -1;
    switch (c->kind) {
    case SINGA_COMPRESS_FP16:
        for (size_t i = 0; i < n; i++)
            x[i] = rt_compress_from_fp16((uint16_t)(in[2 * i] | in[2 * i + 1] << 8));
        return 0;
    case SINGA_COMPRESS_BF16:
        for (size_t i = 0; i < n; i++)
            x[i] = rt_compress_from_bf16((uint16_t)(in[2 * i] | in[2 * i + 1] << 8));
        return 0;
    case SINGA_COMPRESS_TOPK: {
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
    default:
        return -1;
    }
}
