/* penalty.h - the `penalty` benchmark (the P_i of cycle accounting: TLB miss, store forwarding, 4K aliasing, split loads, divider, fill-buffer hit, cache hits) and the timed-loop measurement it shares with `branch`. */
#ifndef PMB_BENCH_PENALTY_H
#define PMB_BENCH_PENALTY_H

#include "kernel/klib.h"
#include "kernel/json.h"
#include "measure/stats.h"
#include "measure/verdict.h"
#include "measure/serialize.h"

#define PENALTY_WHAT "penalties for cycle accounting: DTLB miss (4K vs 2M pages), store forwarding, 4K aliasing, " \
                     "line/page split loads, divider latency, fill-buffer hit, L2/LLC/DRAM hits"

/* Runs every penalty measurement on the benchmark's own CPU, emits one `penalty` record each (and a table),
 * and hands the results to cycle accounting (ca_penalty_set). */
void bench_penalty(void);

/* ---- timed loops ------------------------------------------------------------------------------------------ */

/* Runs `iters` iterations of a measured loop (iters == 0: none, the call alone). The loop's own state
 * (a chase pointer, an LFSR) lives in arg and carries over from call to call. */
typedef void (*pm_loop_fn)(void *arg, uint64_t iters);

struct pm_opts {
    uint64_t min_sample_tsc;         /* a sample lasts at least this many ticks beyond the overhead */
    uint64_t budget_tsc;             /* sampling stops after this many ticks (min_samples still taken); 0 none */
    size_t min_samples, max_samples; /* max_samples <= PM_MAX_SAMPLES */
    double target_ci;                /* stop early once the median's CI half-width / median is this */
    uint64_t warmup_iters;           /* iterations run before anything is timed (0: 64) */
    uint64_t first_iters;            /* calibration starts here and doubles (0: 16) */
    enum timing_serialize serialize;
    size_t replicates;               /* independent replicates (the engine's, docs/measurement.md; 0 -> 1) */
    int (*setup)(void *arg, size_t rep); /* optional, before each replicate: a fresh chain, buffer offset */
};

#define PM_MAX_SAMPLES 512
#define PM_MAX_ITERS (1ull << 34) /* calibration guard */
#define PM_OVERHEAD_REPS 15

/* The profile's options (plat_config): quick: 20000-tick samples, 7..31 samples, CI target 5 %, 2 ms budget
 * per point, one replicate; full: 200000 ticks, 11..201, 1 %, 50 ms, meas_replicates(false) replicates (the
 * budget shared among them); time_budget_ms overrides the budget. */
void pm_opts_profile(struct pm_opts *o);

struct pm_result {
    struct stats tsc;          /* TSC ticks per iteration over the samples */
    double ratio;              /* core cycles per TSC tick used for `cycles` */
    const char *cycles_method; /* "pmu:<event>" (counted around one sample) or "core_tsc_ratio:<platform method>" */
    double cycles, ns;         /* median per iteration */
    double cv;                 /* robust spread of the per-iteration samples (tsc.spread) */
    bool converged;            /* the stop rule reached target_ci */
    uint64_t iters_per_sample;
    size_t samples;
};

/* Times fn: warm-up, the median of PM_OVERHEAD_REPS empty calls (subtracted), iterations doubled until a
 * sample lasts min_sample_tsc, then samples until the CI of the median reaches target_ci, max_samples or the budget.
 * Runs on the calling CPU; the caller owns the environment (interrupts off). Returns 0, or -1 when the clock
 * does not advance or an argument is invalid. */
int pm_measure(pm_loop_fn fn, void *arg, const struct pm_opts *o, struct pm_result *r);

/* Per-event cost from two measurements of the same loop: (cycles_a - cycles_b) / (events_a - events_b).
 * NaN when the event difference is not positive or an input is not finite. */
double pm_penalty(double cycles_a, double cycles_b, double events_a, double events_b);
/* Spread of a difference a - b of two medians with coefficients of variation cv_a, cv_b:
 * sqrt((a cv_a)^2 + (b cv_b)^2) / |a - b| (inf when a == b). */
double pm_diff_cv(double a, double cv_a, double b, double cv_b);

/* The one writer of measured `penalty` records (the branch benchmark's `branch_mispredict` included): begins
 * the record and writes its common keys: name, the figure in core cycles through the statistics emitter
 * (measure/stats_json.h), its median in ns, method, reference, cycles_method. The caller adds its own keys
 * and ends the record (plat_rec_end). */
struct json *pm_penalty_begin(const char *name, const struct stats *cycles, double ns, const struct verdict *v,
                              const char *method, const char *reference, const char *cycles_method);
/* A penalty's verdict: ok / noisy from its CI (verdict_from_stats), suspect when it is not positive or when
 * its 95 % CI reaches down to zero (smaller than its own uncertainty). Cycle accounting never uses a
 * suspect penalty. */
void pm_penalty_verdict(struct verdict *v, const struct stats *c, bool converged, double target_ci, size_t min_n);
/* A measurement's figure in core cycles per event: the TSC statistics x the ratio / events per iteration. */
void pm_cycles_stats(const struct pm_result *r, double per_iter, struct stats *out);
/* The figure of a difference of two medians a - b: median a - b, spread propagated (pm_diff_cv), the CI
 * half-widths of a and b added in quadrature on each side, n = min; min/p10/p90/max undefined (NaN). */
void pm_stats_diff(const struct stats *a, const struct stats *b, struct stats *d);

#endif
