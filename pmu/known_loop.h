/* known_loop.h - loops with known instruction and branch counts, for the PMU self-test and LBR capture. */
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

/* pmu_known_branch_loop(n), n >= 1, executes exactly
 *     mov %rdi, %rcx
 *     mov $3, %eax
 *   head:
 *     call leaf         near call            \
 *     imul %rax, %rax   three dependent       |
 *     imul %rax, %rax   multiplies (>= 3      |  7 instructions, 3 branches (1 conditional,
 *     imul %rax, %rax   cycles each)          |  1 near call, 1 near return) per iteration
 *     dec %rcx                                |
 *     jnz head          conditional          /
 *     ret
 *   leaf:
 *     ret               near return
 * Per iteration the three branch kinds differ (1 conditional, 3 branches of any kind) and the imul
 * chain makes it at least 9 core cycles long on every x86 core: an event that counts the wrong thing
 * (all branches instead of conditional ones, core cycles instead of instructions) gives a different
 * count per iteration. Its totals: 7n + 3 instructions, 3n + 1 branches (n conditional, n calls,
 * n + 1 returns). */
void pmu_known_branch_loop(uint64_t n);
#define PMU_BRANCH_LOOP_INSNS_PER_ITER 7ULL
#define PMU_BRANCH_LOOP_BRANCHES_PER_ITER 3ULL /* call + ret + jnz */
#define PMU_BRANCH_LOOP_COND_PER_ITER 1ULL     /* jnz */
#define PMU_BRANCH_LOOP_MIN_CYCLES_PER_ITER 9ULL /* three dependent imuls of >= 3 cycles */

#endif
