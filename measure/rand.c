/* rand.c - splitmix64, xoshiro256** and the Galois LFSR (see rand.h for sources). */
#include "measure/rand.h"

uint64_t splitmix64_next(uint64_t *state)
{
    uint64_t z = (*state += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

void rand_seed(struct rand *r, uint64_t seed)
{
    uint64_t sm = seed;
    for (int i = 0; i < 4; i++)
        r->s[i] = splitmix64_next(&sm);
    /* splitmix64 is a bijection of its counter, so four consecutive outputs cannot all be zero;
     * keep the guard anyway because an all-zero xoshiro state would emit zeros forever. */
    if ((r->s[0] | r->s[1] | r->s[2] | r->s[3]) == 0)
        r->s[0] = 1;
}

double rand_double(struct rand *r)
{
    return (double)(rand_next(r) >> 11) * 0x1.0p-53;
}

void lfsr32_seed(struct lfsr32 *l, uint64_t seed)
{
    uint64_t sm = seed;
    uint32_t s = 0;
    while (s == 0)
        s = (uint32_t)(splitmix64_next(&sm) >> 32);
    l->state = s;
}

uint32_t lfsr32_bits(struct lfsr32 *l, unsigned n)
{
    uint32_t v = 0;
    if (n > 32)
        n = 32;
    for (unsigned i = 0; i < n; i++)
        v |= lfsr32_step(l) << i;
    return v;
}
