/* lat_plan.h - the arithmetic of the latency benchmarks: size grids, working sets per Table 2 row, CPU and delay choices (pure logic, host-tested). */
#ifndef PMB_BENCH_LAT_PLAN_H
#define PMB_BENCH_LAT_PLAN_H

#include "kernel/klib.h"
#include "kernel/cpuid.h"
#include "bench/cache_sizes.h"

/* Sweep limits (docs/latency.md "Sweep"). */
#define LAT_SWEEP_LO KiB(1)          /* smallest working set */
#define LAT_SWEEP_LLC_FACTOR 4       /* the sweep reaches at least 4 x the last-level cache ... */
#define LAT_SWEEP_NO_LLC MiB(64)     /* ... or this when CPUID names no cache at all */
#define LAT_SWEEP_PPO_FULL 4         /* points per octave, full profile */
#define LAT_SWEEP_PPO_QUICK 1        /* quick profile */
#define LAT_MAX_POINTS 256           /* = KNEE_MAX_POINTS: one curve goes to knee_detect whole */



/*
 * Working-set sizes from lo to hi inclusive: `per_octave` points per doubling on the geometric grid
 * lo * 2^(k / per_octave), each rounded down to a multiple of `align` (a power of two), duplicates dropped,
 * hi always last. Writes at most `max` sizes and returns how many it wrote; 0 when lo is 0 or above hi,
 * per_octave is 0, or align is not a power of two.
 */
/* Whether two logical CPUs share a cache that CPUID says is shared by up to `shared_by` logical processors:
 * their initial APIC IDs agree above the low ceil(log2(shared_by)) bits (SDM Vol. 2A CPUID leaf 4
 * EAX[25:14]; AMD leaf 8000_001DH). shared_by 0 or 1: only a CPU with itself. */
bool lat_shares_cache(uint32_t apic_a, uint32_t apic_b, uint32_t shared_by);

/* 2^(s / p) for 0 <= s < p, without libm. */
double lat_pow2_frac(unsigned s, unsigned p);

size_t lat_size_grid(uint64_t lo, uint64_t hi, unsigned per_octave, uint64_t align, uint64_t *out, size_t max);

/* Top of the sweep: the power of two at or above LAT_SWEEP_LLC_FACTOR x llc (LAT_SWEEP_NO_LLC when llc is
 * 0), then capped by `cap` (0: no cap) rounded down to a power of two; never below LAT_SWEEP_LO. */
uint64_t lat_sweep_top(uint64_t llc, uint64_t cap);

/*
 * Working set of the placed one-pass rows (L2, the L3 rows, remote L3): a quarter of the L2, so that another
 * core's L2 holds every line it wrote with room to spare (the lines use only half the sets: one line per
 * 128 bytes), but at least twice the L1 (the pass cannot be served by it). Elements are LAT_PLACED_STRIDE
 * apart; the result is a multiple of LAT_PLACED_STRIDE x 64 (a whole number of 64-load chase iterations),
 * at least that much. Without an L2: 64 KiB.
 */
#define LAT_PLACED_STRIDE 128u /* one line per 128-byte pair: the adjacent-line prefetcher finds nothing */
uint64_t lat_placed_bytes(const struct cache_sizes *c);
/* Elements of the placed chain for a working set (bytes / LAT_PLACED_STRIDE). */
static inline size_t lat_placed_lines(uint64_t bytes) { return (size_t)(bytes / LAT_PLACED_STRIDE); }
/* The c2c matrix uses the smaller of that and 64 KiB: the cost is per line, the cells are many. */
#define LAT_C2C_MAX_BYTES KiB(64)

/*
 * Eviction buffer that a CPU reads to push the placed lines out of its own L1 (levels = 1) or L1 and L2
 * (levels = 2): twice their capacity, so a sequential sweep turns over every set even with pseudo-LRU; but
 * at most a quarter of the L3 when there is one, so the lines are not pushed out of the L3 too (an
 * inclusive L3 would then also invalidate them in the other cores). A multiple of 64 KiB.
 */
uint64_t lat_evict_bytes(const struct cache_sizes *c, int levels);

/* Working set for the DRAM rows and the NUMA matrix: 8 x the LLC, at least 64 MiB (quick: 2 x, at least
 * 16 MiB), capped by `cap` (0: none), a multiple of 2 MiB, at least 2 MiB. */
uint64_t lat_dram_bytes(const struct cache_sizes *c, bool quick, uint64_t cap);
/* The largest chain a replicate rebuilds as a fresh permutation (docs/measurement.md "Replicates"): twice the
 * LLC (64 MiB when unknown). A DRAM-sized chain of millions of random lines gives the same latency in every
 * permutation, while its rebuild and warm-up pass cost about a second each: its replicates go on chasing the
 * same chain, at other moments. */
uint64_t lat_fresh_max_bytes(const struct cache_sizes *c);

/* L1 row: a chase over half the L1 (16 KiB without one), a multiple of 1 KiB. */
uint64_t lat_l1_bytes(const struct cache_sizes *c);

/* Which of n CPUs the c2c matrix uses: all of them when n <= max, else `max` indices spread evenly over
 * 0..n-1 (0 always first, strictly ascending). Returns how many it wrote to out (which holds max). */
size_t lat_pick_cpus(size_t n, size_t max, uint32_t *out);
#define LAT_C2C_MAX_CPUS 64

/* Injection delays of the loaded-latency sweep (empty loop iterations between two line reads of each
 * streaming core), largest load first: 16 in the full profile, 3 in the quick one. Returns how many were
 * written (at most max). */
#define LAT_LOADED_MAX_DELAYS 16
size_t lat_loaded_delays(bool quick, uint32_t *out, size_t max);

/* The rows of the guide's Table 2 (plus L1/L2 from its memory-subsystem section), in report order. */
enum lat_row {
    LAT_ROW_L1,
    LAT_ROW_L2,
    LAT_ROW_L3_UNSHARED,
    LAT_ROW_L3_SHARED,
    LAT_ROW_L3_MODIFIED,
    LAT_ROW_REMOTE_L3,
    LAT_ROW_LOCAL_DRAM,
    LAT_ROW_REMOTE_DRAM,
    LAT_ROW_COUNT
};

struct lat_row_ref {
    const char *source;    /* the data_source record's "source" */
    const char *guide;     /* the guide's words for the row */
    double lo, hi;         /* reference value (a range when lo < hi) */
    const char *unit;      /* "cycles" or "ns" */
};
extern const struct lat_row_ref lat_rows[LAT_ROW_COUNT];
/* "~40 cycles", "~100-300 cycles": the reference as the guide writes it. */
int lat_ref_text(const struct lat_row_ref *r, char *buf, size_t len);

#endif
