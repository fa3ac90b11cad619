/* Branch-free float approximations (Cephes' expf and tanhf polynomials) written so that GCC
 * vectorises the loops; errors are within a few ulp, far below what training notices. */
#include <math.h>
#include <stdint.h>

#include "core/simd.h"
#include "core/vmath.h"

static inline float fast_exp(float x)
{
    x = x < -87.0f ? -87.0f : x; /* not fminf/fmaxf: their NaN rules block vectorisation */
    x = x > 88.0f ? 88.0f : x;
    float n = floorf(x * 1.44269504088896341f + 0.5f);
    float r = x - n * 0.693359375f + n * 2.12194440e-4f; /* NaN for a NaN x, and so is the result */
    n = n == n ? n : 0.0f; /* a NaN n would make the exponent's conversion and shift undefined */
    float p = 1.9875691500e-4f;
    p = p * r + 1.3981999507e-3f;
    p = p * r + 8.3334519073e-3f;
    p = p * r + 4.1665795894e-2f;
    p = p * r + 1.6666665459e-1f;
    p = p * r + 5.0000001201e-1f;
    p = p * r * r + r + 1.0f;
    union {
        int32_t i;
        float f;
    } scale = {.i = ((int32_t)n + 127) << 23}; /* 2^n */
    return p * scale.f;
}

static inline float fast_tanh(float x)
{
    float ax = fabsf(x), s = x * x;
    float small = ((((-5.70498872745e-3f * s + 2.06390887954e-2f) * s - 5.37397155531e-2f) * s +
                    1.33314422036e-1f) * s - 3.33332819422e-1f) * s * x + x;
    float big = 1.0f - 2.0f / (fast_exp(2.0f * ax) + 1.0f);
    big = copysignf(big, x);
    return ax < 0.625f ? small : big;
}

SINGA_KERNEL static void vtanh(float *restrict y, const float *restrict x, size_t n, float in_scale,
                               float out_scale)
{
    for (size_t i = 0; i < n; i++)
        y[i] = out_scale * fast_tanh(in_scale * x[i]);
}

SINGA_KERNEL static void vtanh_grad(float *restrict dx, const float *restrict dy, const float *restrict y,
                                    size_t n, float in_scale, float out_scale, float beta)
{
    float inv = 1.0f / out_scale;
    for (size_t i = 0; i < n; i++)
        dx[i] = beta * dx[i] + dy[i] * in_scale * (out_scale - y[i] * y[i] * inv);
}

SINGA_KERNEL static void vsigmoid(float *restrict y, const float *restrict x, size_t n)
{
    for (size_t i = 0; i < n; i++)
        y[i] = 1.0f / (1.0f + fast_exp(-x[i]));
}

SINGA_KERNEL static void vsigmoid_grad(float *restrict dx, const float *restrict dy,
                                       const float *restrict y, size_t n, float beta)
{
    for (size_t i = 0; i < n; i++)
        dx[i] = beta * dx[i] + dy[i] * y[i] * (1.0f - y[i]);
}

SINGA_KERNEL static void vrelu(float *restrict y, const float *restrict x, size_t n, float slope)
{
    for (size_t i = 0; i < n; i++)
        y[i] = x[i] > 0.0f ? x[i] : slope * x[i];
}

SINGA_KERNEL static void vrelu_grad(float *restrict dx, const float *restrict dy, const float *restrict y,
                                    size_t n, float slope, float beta)
{
    for (size_t i = 0; i < n; i++)
        dx[i] = beta * dx[i] + (y[i] > 0.0f ? dy[i] : slope * dy[i]);
}

SINGA_KERNEL static float vsum(const float *restrict x, size_t n)
{
    float acc[16] = {0};
    size_t i = 0;
    for (; i + 16 <= n; i += 16)
        for (int k = 0; k < 16; k++)
            acc[k] += x[i + k];
    float sum = 0.0f;
    for (; i < n; i++)
        sum += x[i];
    for (int k = 0; k < 16; k++)
        sum += acc[k];
    return sum;
}

SINGA_KERNEL static float vexp_shift(float *restrict y, const float *restrict x, size_t n, float shift)
{
    float sum = 0.0f;
    for (size_t i = 0; i < n; i++) {
        y[i] = fast_exp(x[i] - shift);
        sum += y[i];
    }
    return sum;
}

/* The kernels are static and reached through these: GCC exports a target_clones function's
 * dispatcher whatever its visibility, and the kernels are no part of libsinga's API. */
void singa_vtanh(float *y, const float *x, size_t n, float in_scale, float out_scale)
{
    vtanh(y, x, n, in_scale, out_scale);
}
void singa_vtanh_grad(float *dx, const float *dy, const float *y, size_t n, float in_scale, float out_scale, float beta)
{
    vtanh_grad(dx, dy, y, n, in_scale, out_scale, beta);
}
void singa_vsigmoid(float *y, const float *x, size_t n) { vsigmoid(y, x, n); }
void singa_vsigmoid_grad(float *dx, const float *dy, const float *y, size_t n, float beta)
{
    vsigmoid_grad(dx, dy, y, n, beta);
}
void singa_vrelu(float *y, const float *x, size_t n, float slope) { vrelu(y, x, n, slope); }
void singa_vrelu_grad(float *dx, const float *dy, const float *y, size_t n, float slope, float beta)
{
    vrelu_grad(dx, dy, y, n, slope, beta);
}
float singa_vsum(const float *x, size_t n) { return vsum(x, n); }
float singa_vexp_shift(float *y, const float *x, size_t n, float shift) { return vexp_shift(y, x, n, shift); }
