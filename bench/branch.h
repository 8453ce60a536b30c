/* branch.h - the `branch` benchmark: predictable vs random conditional branches (the misprediction penalty), the pattern-period sweep, indirect branches with N targets and the return-stack depth. */
#ifndef PMB_BENCH_BRANCH_H
#define PMB_BENCH_BRANCH_H

#include "kernel/klib.h"

#define BRANCH_WHAT "branch prediction: misprediction penalty (LFSR-random vs predictable), pattern-period sweep, " \
                    "indirect branch with N targets, return-stack depth"

/* Emits `branch` records (one per point, then a summary) and the `penalty` record "branch_mispredict". */
void bench_branch(void);

/* ---- the measured loops (exposed so the host tests can check what they compute) ----------------------- */

/* iters iterations of: one step of the 32-bit Galois LFSR (measure/rand.h, branch-free), then a conditional
 * branch on (output bit & mask) that skips an increment. mask 1: the branch follows the LFSR (half the
 * outcomes unpredictable); mask 0: always the same way. Returns the number of increments (the taken-path
 * count) and leaves the LFSR state in *state. iters == 0 does nothing. */
uint64_t branch_lfsr_loop(uint32_t *state, uint32_t mask, uint64_t iters);

/* iters iterations of: b = pat[i & pmask]; i++; a conditional branch on b != 0 skipping an increment.
 * Returns the increments; *i advances by iters. pmask + 1 is the pattern period (a power of two). */
uint64_t branch_pattern_loop(const uint8_t *pat, uint64_t pmask, uint64_t *i, uint64_t iters);

/* iters indirect calls acc = target[idx[i & imask]](acc), i++, where target k returns acc + k
 * (BRANCH_MAX_TARGETS distinct functions). Returns acc. */
#define BRANCH_MAX_TARGETS 64
uint64_t branch_indirect_loop(const uint8_t *idx, uint64_t imask, uint64_t *i, uint64_t acc, uint64_t iters);

/* One recursion of `depth` calls: each level calls the next from one of two call sites chosen by bit
 * (level mod 64) of `sites` (so a return's target differs from level to level and only the return stack
 * can predict it), then returns. Returns the sum over levels of 1 (site 1) or 2 (site 0). */
uint64_t branch_recurse(uint64_t depth, uint64_t sites);

/* ---- the events each test counts (bench/cycle_accounting.h list syntax; docs/pmu.md "Events per benchmark
 * and model") ---------------------------------------------------------------------------------------------- */
extern const char *const branch_ev_cond[];     /* mispredicted conditional branches: penalty and pattern sweep */
extern const char *const branch_ev_indirect[]; /* mispredicted indirect near calls: the indirect-target test */
extern const char *const branch_ev_return[];   /* mispredicted near returns: the return-stack test */

/* ---- pure helpers -------------------------------------------------------------------------------------- */

/* pat[0..n) = successive output bits (0/1) of the LFSR seeded by lfsr32_seed(seed). */
void branch_pattern(uint8_t *pat, size_t n, uint64_t seed);
/* idx[0..n) in [0, targets) from successive LFSR bits (log2(targets) bits each, first bit lowest);
 * targets a power of two in 1..BRANCH_MAX_TARGETS (else every index is 0). */
void branch_targets(uint8_t *idx, size_t n, unsigned targets, uint64_t seed);

/* Misprediction rate implied by a loop's time when no PMU counts it: (cycles - base) / penalty, clamped to
 * [0, 1]. NaN when the penalty is not positive or an input is not finite. */
double branch_misp_estimate(double cycles, double base, double penalty);

/* The longest pattern period the predictor learned: the largest period[i] (ascending) such that it and
 * every shorter period have rate <= threshold. -1 when even the first exceeds it, or n == 0. */
long branch_learned_period(const unsigned *period, const double *rate, size_t n, double threshold);

/* Return-stack depth from time per recursion t[i] at depth[i] (ascending, depth[0] >= 1): a line is fitted
 * through the points with depth <= fit_max (at least 3), and the estimate is the last depth before the first
 * two consecutive points above line x (1 + tol) + 2 cycles. -1 when no such rise (or too few points). */
long branch_rsb_estimate(const unsigned *depth, const double *t, size_t n, unsigned fit_max, double tol);

#endif
