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
#define LAT_SWEEP_LLC_FACTOR_MINIMAL 2 /* emulated (minimal samples): 2 x the LLC, past it emulation has no memory plateau */
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
/* The same with LAT_SWEEP_LLC_FACTOR_MINIMAL, for minimal-samples runs (QEMU TCG) without sweep_top. */
uint64_t lat_sweep_top_minimal(uint64_t llc, uint64_t cap);
/* The same with the sweep_top key: `want` (0: the rule above) rounded down to 4 KiB, capped by `cap` (0: no
 * cap) rounded down to a power of two; never below LAT_SWEEP_LO. */
uint64_t lat_sweep_top_want(uint64_t llc, uint64_t cap, uint64_t want);

/* The sweep's sizes (docs/latency.md "Sweep"): lat_size_grid's per_octave points per doubling up to
 * LAT_SWEEP_DENSE_LLC x llc, above that only the octaves (lo x 2^k) and hi: past the knee of the last cache
 * the curve is flat and each point costs the most. llc 0: the whole grid. */
#define LAT_SWEEP_DENSE_LLC 2
/* Loads that warm a sweep chain larger than the LLC before it is timed (instead of a pass over all of it). */
#define LAT_SWEEP_WARM_LOADS (1u << 16)
/* With replicates (R > 1): above the LLC LAT_SWEEP_WARM_LOADS / R loads per replicate, at least this many; below
 * it a chain of more than LAT_SWEEP_WARM_LOADS lines gets LAT_SWEEP_WARM_LOADS loads per replicate instead of a
 * full pass (docs/measurement.md "Replicates"). */
#define LAT_SWEEP_REP_WARM_MIN 4096u
size_t lat_sweep_grid(uint64_t lo, uint64_t hi, unsigned per_octave, uint64_t llc, uint64_t align, uint64_t *out,
                      size_t max);

/* The order in which the sweep runs its n series, whose pages are page_bytes[]: largest pages first, series
 * with equal pages in their given order. order[] gets the n indices. */
void lat_sweep_order(const uint64_t *page_bytes, size_t n, size_t *order);

/* (The page-by-page series also ends at lat_sweep_top(llc, 0) when sweep_top asks for more.)
 * Whether the page-by-page series has reached its page-walk plateau with its last point (bytes[n - 1],
 * ns[n - 1]): that point lies above LAT_SWEEP_DENSE_LLC x llc, and it and the point before, itself above
 * the LLC, each differ from the point before them by no more than LAT_PAGE_FLAT of it or, when larger, the
 * sum of the two points' CI half-widths (ci[i]: half-width / median; NULL: none), i.e. by nothing that
 * can be told from noise. The series then ends there. llc 0: never. */
#define LAT_PAGE_FLAT 0.03
bool lat_page_plateau(const uint64_t *bytes, const double *ns, const double *ci, size_t n, uint64_t llc);

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
/* Working set of the rows whose lines another core holds (L3_shared_other_core, L3_modified_other_core) and of
 * the c2c matrix: the smaller of lat_placed_bytes and LAT_C2C_MAX_BYTES, a multiple of LAT_PLACED_STRIDE x 64
 * (at least that). At most 512 lines (32 KiB of lines over 64 KiB): on every part from Nehalem (32 KiB L1D,
 * 256 KiB L2) to Emerald Rapids (48 KiB, 2 MiB) and Zen 4 (32 KiB, 1 MiB) the holder's private L1D + L2 keep
 * all of them with most of their capacity to spare, so the timed read finds each line in that core (docs/latency.md
 * "Other-core rows per cache design"); and the row and the c2c cell measure the same lines in the same state. */
uint64_t lat_other_core_bytes(const struct cache_sizes *c);

/*
 * Eviction buffer that a CPU reads to push the placed lines out of its own L1 (levels = 1) or L1 and L2
 * (levels = 2): twice their capacity, so a sequential sweep turns over every set even with pseudo-LRU; but
 * at most a quarter of the L3 when there is one, so the lines are not pushed out of the L3 too (an
 * inclusive L3 would then also invalidate them in the other cores). A multiple of 64 KiB.
 */
uint64_t lat_evict_bytes(const struct cache_sizes *c, int levels);
/* The chunk lat_job_evict reads twice in a row: a quarter of the largest level it evicts (L1D for levels = 1,
 * L2 for 2), so a chunk and the placed lines fit that level together; a multiple of 4 KiB, at least 4 KiB. */
uint64_t lat_evict_chunk(const struct cache_sizes *c, int levels);

/* Working set for the DRAM rows and the NUMA matrix: 8 x the LLC, at least 64 MiB (quick: 2 x, at least
 * 16 MiB), capped by `cap` (0: none), a multiple of 2 MiB, at least 2 MiB. */
uint64_t lat_dram_bytes(const struct cache_sizes *c, bool quick, uint64_t cap);
/* The largest chain a replicate rebuilds as a fresh permutation (docs/measurement.md "Replicates"), set by what
 * the rebuild costs: LAT_FRESH_MAX_LINES lines of 64 bytes per CPU that builds it (build_cpus, 0 taken as 1), and
 * never more than twice the LLC (64 MiB when unknown). A rebuild of 2^20 random lines takes about 20 ms on one
 * CPU (measured on a 16-core Xeon and a Zen 4 guest), as much as the replicate's own warm-up and share of the
 * sampling budget; a larger chain's rebuilds would be most of its point's time, and a DRAM-sized chain of
 * millions of random lines gives the same latency in every permutation: its replicates go on chasing the same
 * chain, back to back. lat_fresh_max_bytes is the rule for a chain built on one CPU. */
#define LAT_FRESH_MAX_LINES (1u << 20)
uint64_t lat_fresh_max_bytes_par(const struct cache_sizes *c, uint32_t build_cpus);
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

/* ---- replicate regions (docs/measurement.md "Replicates") ------------------------------------------ */
/* Where replicate k of `reps` puts its `bytes` inside a buffer of `buf_bytes`, as an offset from the buffer's
 * start: a multiple of `align` (a power of two: the buffer's page size), the R offsets spread evenly over the
 * room the buffer leaves (buf_bytes - bytes), replicate 0 at 0 and replicate R - 1 at the last aligned offset
 * that is evenly reachable; distinct while the room holds R aligned offsets, else they take the aligned offsets
 * that fit in turn (k modulo their number). Always offset + bytes <= buf_bytes. 0 when reps <= 1, bytes is 0
 * or above buf_bytes, or align is not a power of two. Each replicate then chases other memory: other pages,
 * other cache sets where the host backs large guest pages with small ones, other L3 slices. */
uint64_t lat_rep_offset(uint64_t buf_bytes, uint64_t bytes, uint64_t align, size_t k, size_t reps);
/* The regions of a benchmark's own buffers (Table 2 rows, c2c lines) are LAT_REP_ALIGN apart or more: a large
 * page of their own each. */
#define LAT_REP_ALIGN MiB(2)
/* Bytes to allocate so that `reps` regions of `bytes` each sit at lat_rep_offset(that, bytes, LAT_REP_ALIGN,
 * k, reps) without overlapping: (reps - 1) x ALIGN_UP(bytes, LAT_REP_ALIGN) + bytes; bytes itself when reps
 * <= 1 (one region, as before replicates). */
uint64_t lat_rep_buffer_bytes(uint64_t bytes, size_t reps);

#endif
