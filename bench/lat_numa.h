/* lat_numa.h - the `numa_latency` (node x node idle DRAM latency) and `loaded_latency` (latency under other cores' read traffic) benchmarks. */
#ifndef PMB_BENCH_LAT_NUMA_H
#define PMB_BENCH_LAT_NUMA_H

#include "kernel/klib.h"

#define NUMA_LATENCY_WHAT "idle DRAM latency from a CPU of each node to the memory of each node (SRAT)"
#define LOADED_LATENCY_WHAT "DRAM latency on CPU 0 while the other CPUs stream reads, over a sweep of injection delays"

/* One numa_latency record per (CPU node, memory node) pair: nodes with CPUs by memory nodes. */
void bench_numa_latency(void);
/* One loaded_latency record per injection delay, then the idle point ("delay":"idle"); with one CPU a
 * single record with status "unavailable". */
void bench_loaded_latency(void);

#endif
