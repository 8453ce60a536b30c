/* known_loop.h - a loop with a known instruction count and a known branch, for the PMU self-test and LBR capture. */
#ifndef PMB_PMU_KNOWN_LOOP_H
#define PMB_PMU_KNOWN_LOOP_H

#include "kernel/klib.h"

/* pmu_known_loop(n), n >= 1, executes exactly
 *     mov %rdi, %rcx
 *   head:
 *     dec %rcx
 *   branch:
 *     jnz head          (taken n - 1 times)
 *     ret
 * i.e. 2n + 2 instructions from its first instruction to its ret, and n - 1 taken branches from
 * `branch` to `head`. Written in asm so the compiler cannot change the count. */
void pmu_known_loop(uint64_t n);
#define PMU_KNOWN_LOOP_INSNS(n) (2ULL * (n) + 2ULL)

/* Addresses of the two labels (for LBR records). */
uint64_t pmu_known_loop_head(void);
uint64_t pmu_known_loop_branch(void);

#endif
