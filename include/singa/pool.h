/* A small pool of threads for the engine's own loops (im2col, pooling, ...), sized like the BLAS
 * thread count.  A parallel loop hands each thread one contiguous range, so kernels split their
 * rows themselves (as ggml's do) and need no locking.  A NULL pool runs everything inline. */
#ifndef SINGA_POOL_H
#define SINGA_POOL_H

#include <stddef.h>

#pragma GCC visibility push(default) /* exported: libsinga is built hidden */

typedef struct singa_pool singa_pool;

typedef void (*singa_range_fn)(void *ctx, size_t begin, size_t end);

/* nthreads counts the caller, so 1 starts no thread.  NULL when threads cannot be started. */
singa_pool *singa_pool_new(int nthreads);
void singa_pool_free(singa_pool *pool);
int singa_pool_threads(const singa_pool *pool);
/* Runs fn over [0, n) cut into one range per thread (the caller takes the first) and returns
 * when all are done.  n below min_per_thread * threads uses fewer threads. */
void singa_pool_for(singa_pool *pool, size_t n, size_t min_per_thread, singa_range_fn fn, void *ctx);

#pragma GCC visibility pop

#endif
