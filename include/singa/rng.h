/* A small seeded generator (xoshiro256**) carried in explicit state, so runs are reproducible
 * and the state can be written to a checkpoint. */
#ifndef SINGA_RNG_H
#define SINGA_RNG_H

#include <stdint.h>

#pragma GCC visibility push(default) /* exported: libsinga is built hidden */

typedef struct singa_rng {
    uint64_t s[4];
} singa_rng;

/* `stream` separates independent sequences drawn from one seed. */
void singa_rng_seed(singa_rng *r, uint64_t seed, uint64_t stream);
uint64_t singa_rng_next(singa_rng *r);
/* Uniform in [0, 1). */
float singa_rng_uniform(singa_rng *r);
double singa_rng_gaussian(singa_rng *r);
/* Uniform integer in [0, n). */
uint64_t singa_rng_below(singa_rng *r, uint64_t n);
uint64_t singa_hash_str(const char *s);

#pragma GCC visibility pop

#endif
