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
uint64_t rand_next(struct rand *r);
/* Uniform in [0, n) without modulo bias (Lemire 2019, multiply + rejection); n == 0 returns 0. */
uint64_t rand_below(struct rand *r, uint64_t n);
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
