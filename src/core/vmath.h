/* Vectorised element-wise kernels for activations; compiled for several instruction sets and
 * picked at load time, so one binary is fast on AVX2 and AVX-512 machines and runs elsewhere. */
#ifndef SINGA_CORE_VMATH_H
#define SINGA_CORE_VMATH_H

#include <stddef.h>

/* y = out_scale * tanh(in_scale * x) */
void singa_vtanh(float *y, const float *x, size_t n, float in_scale, float out_scale);
/* dx = beta * dx + dy * in_scale * (out_scale - y^2 / out_scale), the derivative of the above. */
void singa_vtanh_grad(float *dx, const float *dy, const float *y, size_t n, float in_scale,
                      float out_scale, float beta);
void singa_vsigmoid(float *y, const float *x, size_t n);
void singa_vsigmoid_grad(float *dx, const float *dy, const float *y, size_t n, float beta);
void singa_vrelu(float *y, const float *x, size_t n, float slope);
void singa_vrelu_grad(float *dx, const float *dy, const float *y, size_t n, float slope, float beta);
/* The sum of n floats, with 16 running partial sums so that it vectorises (a plain float
 * reduction may not be reordered by the compiler). */
float singa_vsum(const float *x, size_t n);
/* y = exp(x - shift) over n elements (one softmax row); returns the sum of y. */
float singa_vexp_shift(float *y, const float *x, size_t n, float shift);

#endif
