/* lat_sweep.h - latency vs working-set size over several page sizes, and the cache levels inferred from its knees. */
#ifndef PMB_BENCH_LAT_SWEEP_H
#define PMB_BENCH_LAT_SWEEP_H

#include "kernel/klib.h"

/* Runs every series (random chain with 4 KiB, 2 MiB and, when possible, 1 GiB pages; page-by-page with
 * 4 KiB pages in the full profile) on the benchmark's CPU, emitting one latency_series record per series,
 * one latency_sweep record per point and one cache_inferred record per CPUID data/unified cache level,
 * and prints the sweep table and the inferred levels. */
void lat_sweep_run(void);
/* The ledger figure of the plateau of the reference series (random chase, largest pages) whose sizes
 * include `bytes` (above the previous knee, up to its own), for cross-checks with the Table 2 rows; NULL
 * with *why when there is none. */
const char *lat_sweep_plateau_at(uint64_t bytes, const char **why);
/* The page size of the reference series (0: the sweep found no plateau). */
uint64_t lat_sweep_reference_page(void);
/* lat_sweep_plateau_at for a DRAM chain of `bytes`, only where the reference series ran on pages of 2 MiB or
 * more (its random chain then pays no page walks, as the DRAM rows' chains); NULL otherwise. */
const char *lat_sweep_dram_plateau(uint64_t bytes);

#endif
