/* chase_buf.h - a pointer-chase chain in its own physical allocation, for the PMU self-test and flow. */
#ifndef PMB_PMU_CHASE_BUF_H
#define PMB_PMU_CHASE_BUF_H

#include "kernel/klib.h"

struct pmu_chase {
    void *buf;          /* the chain's lines: [buf, buf + bytes) */
    size_t bytes;
    void *start;        /* first element */
    size_t n_elems;     /* lines in the cycle */
    uint64_t phys;      /* allocation (identity mapped: phys == buf) */
    uint64_t alloc_bytes;
    int node;           /* node asked for (-1 any) */
};

#define PMU_CHASE_LOCAL_NODE (-2) /* node argument: the NUMA node of the CPU that calls */

/* A single random cycle (Sattolo, measure/chain.h) over every 64-byte line of `bytes` (a multiple of
 * 4 KiB), allocated with pmm_alloc_tagged(why) on `node` (-1 any, PMU_CHASE_LOCAL_NODE this CPU's: a
 * check that names "local DRAM" needs its lines there) and checked with chain_verify. c->node says where
 * it went (-1 unknown). 0, or -1 (also when the node has no room: no silent fallback). */
int pmu_chase_alloc(struct pmu_chase *c, size_t bytes, uint64_t seed, int node, const char *why);
void pmu_chase_free(struct pmu_chase *c);

#endif
