/* cache_sizes.h - the one place cache sizes come from CPUID for every benchmark (latency plans, bandwidth levels, penalty working sets). */
#ifndef PMB_BENCH_CACHE_SIZES_H
#define PMB_BENCH_CACHE_SIZES_H

#include "kernel/klib.h"
#include "kernel/cpuid.h"

/* The data or unified cache of each level, in bytes (0: absent). */
struct cache_sizes {
    uint64_t l1, l2, l3;
    uint64_t llc;  /* largest level present (0: none) */
    uint32_t line; /* bytes; 64 when CPUID gives none */
    bool l3_inclusive;
};

/* From the caches kernel/cpuid.c decoded: for each level the largest data or unified cache (instruction
 * caches ignored), the L1D line size when it is a sane power of two, llc the highest level present. */
void cache_sizes_from_cpuid(const struct cpu_info *ci, struct cache_sizes *c);

/* The same with Nehalem's sizes (32 KiB L1D, 256 KiB L2, 8 MiB L3) for levels CPUID does not describe
 * (a hypervisor hiding leaf 4), for benchmarks that need a working set whatever happens; llc is then at
 * least the L2. Callers that can say "absent" use cache_sizes_from_cpuid. */
void cache_sizes_or_nehalem(const struct cpu_info *ci, struct cache_sizes *c);

#endif
