/* bandwidth.h - the `bandwidth` benchmark: STREAM kernels from L1 to DRAM on one core, scaling over cores and sockets, per NUMA node pair, cross-checked with the uncore and the SMBIOS peak. */
#ifndef PMB_BENCH_BANDWIDTH_H
#define PMB_BENCH_BANDWIDTH_H

#include "kernel/klib.h"
#include "bench/platform.h"

#define BANDWIDTH_WHAT "streaming bandwidth: read/write/write_nt/copy/triad (SSE2 + widest ISA), L1 -> DRAM sweep, " \
                       "core and socket scaling, NUMA node pairs, uncore check, SMBIOS peak"

/* Emits `bandwidth` records (series sweep, scaling_package, scaling_all, numa), one `bandwidth_peak`
 * record, and the tables. */
void bench_bandwidth(void);

/* The SMBIOS structure table (len bytes, readable) for the theoretical peak, handed over by whoever can read
 * the firmware's tables (kernel: the UEFI SMBIOS3/SMBIOS configuration table through smbios_entry_parse;
 * Linux: /sys/firmware/dmi/tables/DMI). source names where it came from. Without a call the peak is
 * "unknown". The memory must outlive the run. */
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

/* Per-thread working set for t threads at DRAM: max(total / t, floor), 4 KiB aligned, so the threads
 * together always cover `total` (a multiple of the last-level cache) while each keeps a stream well beyond
 * its own L2. */
uint64_t bw_dram_ws_per_thread(uint64_t total, size_t t, uint64_t floor);

/* "L1", "L2", "L3" (the smallest level at least ws) or "memory" (beyond the last level). */
const char *bw_level(uint64_t ws, uint64_t l1, uint64_t l2, uint64_t llc);

/* Aggregate of threads that ran together: sum of bytes / the slowest thread's ticks, in bytes/s. 0 when a
 * thread has no ticks. */
double bw_aggregate(const uint64_t *bytes, const uint64_t *ticks, size_t n, uint64_t tsc_hz);

#endif
