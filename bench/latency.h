/* latency.h - the `latency` benchmark: size sweep, cache inference, Table 2 data sources. */
#ifndef PMB_BENCH_LATENCY_H
#define PMB_BENCH_LATENCY_H

#include "kernel/klib.h"

#define LATENCY_WHAT "load-to-use latency: size sweep with 4K/2M/1G pages, cache knees vs CPUID, Table 2 data sources"

/* Sweep (latency_sweep, latency_series, cache_inferred records) then the Table 2 rows (data_source
 * records), each with a human-readable table. Core cycles come from the PMU's counter where the run has
 * one (pmu/pmu_bench_api.h; cycles_method "fixed_counter:<method>"), else from the platform's core/TSC
 * ratio; each Table 2 row is cross-checked with load-latency PEBS where the PMU has it. */
void bench_latency(void);

#endif
