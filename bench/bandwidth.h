/* bandwidth.h - the `bandwidth` benchmark: STREAM kernels from L1 to DRAM on one core, scaling over cores and sockets, per NUMA node pair, cross-checked with the uncore and the SMBIOS peak. */
#ifndef PMB_BENCH_BANDWIDTH_H
#define PMB_BENCH_BANDWIDTH_H

#include "kernel/klib.h"
#include "bench/platform.h"
#include "bench/bw_kernels.h"

#define BANDWIDTH_WHAT "streaming bandwidth: read/write/copy/triad, cached and non-temporal stores (SSE2 + widest ISA), " \
                       "L1 -> DRAM sweep, " \
                       "core and socket scaling, NUMA node pairs, uncore check, SMBIOS peak"

/* Emits `bandwidth` records (series sweep, scaling_package, scaling_all, numa), one `bandwidth_peak`
 * record, and the tables. */
void bench_bandwidth(void);

/* The SMBIOS structure table (len bytes, readable) for the theoretical peak, handed over by whoever can read
 * the firmware's tables (the UEFI image: app/main.c, from the SMBIOS3/SMBIOS configuration table through
 * smbios_entry_parse; Linux: /sys/firmware/dmi/tables/DMI). source names where it came from. Without a call
 * the peak is "unknown". The memory must outlive the run. */
void bandwidth_set_smbios(const void *table, size_t len, const char *source);

/* ---- pure helpers (host-tested) ---------------------------------------------------------------------------- */

/* Working-set sizes from lo to hi (both included when hi >= lo), per_octave points per doubling (1, 2 or 4:
 * x2; x1.5; x1.25/x1.5/x1.75), each a multiple of 4 KiB, strictly ascending. Returns how many were written
 * (at most cap). */
size_t bw_sweep_sizes(uint64_t lo, uint64_t hi, unsigned per_octave, uint64_t *out, size_t cap);

/* Orders CPUs for a scaling series into out[] (indexes into cpus): `first` (the benchmark CPU) leads; then,
 * when package_only, the other CPUs of its package, one per core (smt 0) before any SMT sibling; otherwise
 * every CPU, taking one core per package in turn (spreading over sockets) before the SMT siblings. Returns
 * the count. */
size_t bw_order_cpus(const struct plat_cpu *cpus, size_t n, size_t first, bool package_only, uint32_t *out);

/* Thread counts to measure for a series of up to n threads: all of 1..n (full), or 1, 2, 4, ... and n
 * (quick). Returns the count written (at most cap). */
size_t bw_thread_counts(size_t n, bool all, uint32_t *out, size_t cap);

/* The smallest 4 KiB multiple ws whose STREAM arrays (1, 2 or 3 of them, each cut to a BW_GRANULE multiple of
 * ws / arrays) still hold at least `bytes` together: a working set asked for as 4x the LLC is then at least
 * that for every kernel. */
uint64_t bw_ws_covering(uint64_t bytes);

/* Per-thread working set for t threads at memory level: max(bw_ws_covering(ceil(total / t)), floor), so
 * that t threads together always cover `total` (4x the LLC or more) for every kernel while each keeps a
 * stream well beyond its own L2. Pass as t the fewest threads that share one LLC (bw_llc_min_threads). */
uint64_t bw_dram_ws_per_thread(uint64_t total, size_t t, uint64_t floor);

/* The fewest of the threads (initial APIC ids) that share one last-level cache, which CPUID says is shared by
 * up to shared_by logical CPUs (lat_shares_cache). 1 when shared_by is 0 or 1 (unknown: every thread is
 * taken to have an LLC of its own); n when all share one; 0 for n = 0. */
size_t bw_llc_min_threads(const uint32_t *apic_ids, size_t n, uint32_t shared_by);

/* Level of a working set ws (for several threads: the bytes one LLC sees, i.e. bw_llc_min_threads x the
 * per-thread working set):
 *   "L1", "L2", "L3"   the smallest cache level holding it ("L3" is the last level, whatever its number);
 *   "llc_to_memory"    beyond the LLC but below 4x it: part of it may still hit the LLC (adaptive, victim and
 *                      non-inclusive LLCs keep a share of a stream a little larger than they are), so it is
 *                      neither an LLC nor a memory figure;
 *   "memory"           ws >= BW_MEMORY_LLC_FACTOR x the LLC: the only level compared with the memory peak. */
#define BW_MEMORY_LLC_FACTOR 4
#define BW_LEVEL_LLC_TO_MEMORY "llc_to_memory"
#define BW_LEVEL_MEMORY "memory"
const char *bw_level(uint64_t ws, uint64_t l1, uint64_t l2, uint64_t llc);

/* Whether the sweep measures kernel k at a working set of this level (bw_level): every kernel at every level,
 * but copy_nt and triad_nt at the memory level only. Their stores go around the caches whatever the working
 * set, so in a cache they time the memory's write path, not the cache (write_nt shows that curve at every
 * size); at the memory level they are what STREAM's memcpy Copy and likwid-bench's copy_mem/stream_mem
 * measure. Not at "llc_to_memory" either: on a 16-core server with a 300 MiB L3 those four sizes would add
 * 16 points of 0.1 s. The scaling series measure them at every thread count (memory-level working sets). */
bool bw_sweep_measures(enum bw_kernel k, const char *level);

/* The run's best memory-level figure, for the comparison with the SMBIOS peak: bw_best_offer keeps a point
 * only when its level is "memory" (>= 4x the LLC) and it is faster than the best so far; "llc_to_memory" and
 * cache points never count. */
struct bw_best {
    double bytes_per_s; /* 0: none yet */
    const char *series, *kernel;
    size_t threads, packages;
};
void bw_best_offer(struct bw_best *b, const char *level, double bytes_per_s, const char *series, const char *kernel,
                   size_t threads, size_t packages);

/* Aggregate of threads that ran together: sum of bytes / the slowest thread's ticks, in bytes/s. 0 when a
 * thread has no ticks. */
double bw_aggregate(const uint64_t *bytes, const uint64_t *ticks, size_t n, uint64_t tsc_hz);

#endif
