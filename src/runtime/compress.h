/* The codec of cluster.compress (compress.c): how a slice's floats travel between processes.
 * Pure functions on caller buffers; the stub and the servers call them on the legs that leave
 * their process, never inside one.
 *
 * fp16 and bf16: 2 bytes a value, little-endian, rounded to nearest even.  fp16 keeps
 * subnormals (down to 2^-24, below that 0), turns what is beyond its range (>= 65520) into an
 * infinity of the same sign and any NaN into a quiet NaN; bf16 keeps float32's range, so only
 * NaNs change (to a quiet NaN of the same sign).
 *
 * top-k: the k = max(1, ceil(ratio * n)) values of largest magnitude (ties: the lowest indices),
 * each as a little-endian uint32 index and float32 value; the rest counts as zero.  With a
 * residual, what is selected is gradient + residual, and the residual keeps what was not sent
 * (error feedback), so over steps the values sent plus the residual add up to the gradients.
 * The servers' values go back in compress.values: fp16 or bf16 (top-k's default is fp16, as
 * the values are dense), NONE (float32) or int8: the change from what the receiving process
 * holds (the server keeps a copy of it, its base), in blocks of 256 values, each a little-endian
 * float32 scale (the largest change over 127) and 256 int8 steps of it.  What rounding leaves
 * stays in the difference to the base, so it goes with the next answer: the receiver's copy
 * trails the server's values by at most half a step, never drifts. */
#ifndef SINGA_RUNTIME_COMPRESS_H
#define SINGA_RUNTIME_COMPRESS_H

#include <stddef.h>
#include <stdint.h>

#include "singa/cluster.h"

/* The codec of the values servers send back to another process's workers. */
static inline singa_compress rt_compress_of_values(const singa_compress *c)
{
    return (singa_compress){c->values, 0, false, c->values};
}

/* Values top-k sends of n. */
size_t rt_compress_topk_count(double ratio, size_t n);
/* Bytes n values take on the wire under c (kind SINGA_COMPRESS_NONE: 4 n). */
size_t rt_compress_bytes(const singa_compress *c, size_t n);

uint16_t rt_compress_fp16(float f);
float rt_compress_from_fp16(uint16_t h);
uint16_t rt_compress_bf16(float f);
float rt_compress_from_bf16(uint16_t h);

/* int8: encodes values - base (n each) into out and moves base by what decodes of it (scratch:
 * n floats), as the receiver's rt_compress_decode and rt_compress_add will move its copy. */
void rt_compress_delta(const float *values, float *base, size_t n, float *scratch, uint8_t *out);
/* x += delta, one add per value (the same on both ends, so base and copy stay equal bits). */
void rt_compress_add(float *x, const float *delta, size_t n);

/* Encodes x[0, n) into out (rt_compress_bytes(c, n) bytes).  For top-k, residual (n floats,
 * or NULL without error feedback) is added first and keeps what is not sent; `scratch` holds n
 * floats (NULL for the other kinds). */
void rt_compress_encode(const singa_compress *c, const float *x, size_t n, float *residual, float *scratch,
                        uint8_t *out);
/* The nonzero values of x[0, n) (and NaNs) as top-k's (index, value) pairs, all of them; returns
 * the bytes written to out (at most 8 n). */
size_t rt_compress_pairs(const float *x, size_t n, uint8_t *out);
/* x[0, n) from such pairs (zero elsewhere); -1 when they do not fit n. */
int rt_compress_from_pairs(const uint8_t *in, size_t nbytes, float *x, size_t n);
/* Decodes nbytes of in into x[0, n); -1 when they are not what c makes of n values (a wrong
 * size, an index out of range or repeated order). */
int rt_compress_decode(const singa_compress *c, const uint8_t *in, size_t nbytes, float *x, size_t n);

#endif
