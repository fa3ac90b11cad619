/* xoshiro256** seeded through splitmix64 (Blackman and Vigna): fast, small state, and good
 * enough statistically for shuffles, dropout masks and initialisation. */
#include <math.h>

#include "singa/rng.h"

static uint64_t splitmix(uint64_t *x)
{
    uint64_t z = (*x += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

void singa_rng_seed(singa_rng *r, uint64_t seed, uint64_t stream)
{
    uint64_t x = seed ^ (stream * 0xd1342543de82ef95ull);
    for (int i = 0; i < 4; i++)
        r->s[i] = splitmix(&x);
}

static inline uint64_t rotl(uint64_t x, int k) { return (x << k) | (x >> (64 - k)); }

uint64_t singa_rng_next(singa_rng *r)
{
    uint64_t *s = r->s;
    uint64_t result = rotl(s[1] * 5, 7) * 9, t = s[1] << 17;
    s[2] ^= s[0];
    s[3] ^= s[1];
    s[1] ^= s[2];
    s[0] ^= s[3];
    s[2] ^= t;
    s[3] = rotl(s[3], 45);
    return result;
}

float singa_rng_uniform(singa_rng *r) { return (float)(singa_rng_next(r) >> 40) * 0x1.0p-24f; }

double singa_rng_gaussian(singa_rng *r)
{
    /* Box-Muller; u1 in (0, 1] keeps log finite. */
    double u1 = ((double)(singa_rng_next(r) >> 11) + 1.0) * 0x1.0p-53;
    double u2 = (double)(singa_rng_next(r) >> 11) * 0x1.0p-53;
    return sqrt(-2.0 * log(u1)) * cos(6.283185307179586 * u2);
}

uint64_t singa_rng_below(singa_rng *r, uint64_t n)
{
    /* Lemire's multiply-shift; the tiny bias is irrelevant for shuffling data sets. */
    return (uint64_t)(((unsigned __int128)singa_rng_next(r) * n) >> 64);
}

uint64_t singa_hash_str(const char *s)
{
    uint64_t h = 0xcbf29ce484222325ull; /* FNV-1a */
    for (; *s; s++)
        h = (h ^ (unsigned char)*s) * 0x100000001b3ull;
    return h;
}
