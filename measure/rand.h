/* rand.h - reproducible pseudo-random numbers for the benchmarks: xoshiro256** and a 32-bit Galois LFSR. */
#ifndef PMB_MEASURE_RAND_H
#define PMB_MEASURE_RAND_H

#include "kernel/klib.h"

/* xoshiro256** 1.0 (Blackman & Vigna, 2018): 256-bit state, period 2^256-1, passes BigCrush.
 * Seeded through splitmix64 so that any 64-bit seed (0 included) gives a well-mixed non-zero state. */
struct rand {
    uint64_t s[4];
};

/* One splitmix64 step (Steele, Lea & Flood 2014): advances *state and returns the next output. */
uint64_t splitmix64_next(uint64_t *state);

void rand_seed(struct rand *r, uint64_t seed);

/* Inline, so that a loop drawing millions of numbers (a chain build) keeps the state in registers: a call per
 * draw with the state in memory was most of a build's time under emulation, where every memory access costs a
 * software TLB lookup. */
static ALWAYS_INLINE uint64_t rand_rotl64(uint64_t x, int k) { return (x << k) | (x >> (64 - k)); }

static ALWAYS_INLINE uint64_t rand_next(struct rand *r)
{
    uint64_t *s = r->s;
    uint64_t result = rand_rotl64(s[1] * 5, 7) * 9;
    uint64_t t = s[1] << 17;
    s[2] ^= s[0];
    s[3] ^= s[1];
    s[1] ^= s[2];
    s[0] ^= s[3];
    s[2] ^= t;
    s[3] = rand_rotl64(s[3], 45);
    return result;
}

/* Uniform in [0, n) without modulo bias (Lemire 2019, multiply + rejection); n == 0 returns 0. */
static ALWAYS_INLINE uint64_t rand_below(struct rand *r, uint64_t n)
{
    if (n == 0)
        return 0;
    /* The high word of x * n is uniform over [0, n) except for the (2^64 mod n) low words that map
     * once too often; rejecting those makes it exact. */
    unsigned __int128 m = (unsigned __int128)rand_next(r) * n;
    uint64_t lo = (uint64_t)m;
    if (lo < n) {
        uint64_t threshold = (0 - n) % n; /* 2^64 mod n */
        while (lo < threshold) {
            m = (unsigned __int128)rand_next(r) * n;
            lo = (uint64_t)m;
        }
    }
    return (uint64_t)(m >> 64);
}
/* Uniform double in [0, 1) from the top 53 bits. */
double rand_double(struct rand *r);

/* 32-bit Galois LFSR for branch patterns (cheap enough to run inside a timed loop).
 * Taps 32,22,2,1: x^32 + x^22 + x^2 + x + 1, maximal length (period 2^32 - 1; Xilinx XAPP052 tap table).
 * In the right-shifting Galois form the tap bits are 31, 21, 1 and 0 of the toggle mask. */
#define LFSR32_TAPS 0x80200003u

struct lfsr32 {
    uint32_t state; /* never 0: the all-zero state is a fixed point */
};

/* Derives a non-zero state from seed through splitmix64, so nearby seeds give unrelated sequences. */
void lfsr32_seed(struct lfsr32 *l, uint64_t seed);

/* Advances one step and returns the bit shifted out (0 or 1). Branch-free so that it can itself sit in a
 * branch benchmark without adding a branch of its own. */
static ALWAYS_INLINE uint32_t lfsr32_step(struct lfsr32 *l)
{
    uint32_t out = l->state & 1u;
    l->state = (l->state >> 1) ^ ((0u - out) & LFSR32_TAPS);
    return out;
}

/* Next n (1..32) output bits, first bit in bit 0. */
uint32_t lfsr32_bits(struct lfsr32 *l, unsigned n);

#endif
