/* timed_loop.h - the timed-loop protocol: a loop timed by the measurement engine, in TSC ticks and core cycles per iteration. */
#ifndef PMB_BENCH_TIMED_LOOP_H
#define PMB_BENCH_TIMED_LOOP_H

#include "kernel/klib.h"
#include "measure/stats.h"
#include "measure/serialize.h"

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
    bool fixed;                      /* no warm-up and no calibration: every sample runs first_iters (minimal mode) */
    enum timing_serialize serialize;
    size_t replicates;               /* independent replicates (the engine's, docs/measurement.md; 0 -> 1) */
    bool ticks_only;                 /* no core cycles: ratio, cycles and cycles_method stay 0 / NULL (saves the
                                        counted sample of a figure that is not in cycles, e.g. bytes/s) */
    int (*setup)(void *arg, size_t rep); /* optional, before each replicate: a fresh chain, buffer offset */
};

#define PM_MAX_SAMPLES 512
#define PM_MAX_ITERS (1ull << 34) /* calibration guard */
#define PM_OVERHEAD_REPS 15

/* The profile's options (plat_config): quick: 20000-tick samples, 7..31 samples, CI target 5 %, 2 ms budget
 * per point, one replicate; full: 200000 ticks, 11..201, 1 %, 50 ms, meas_replicates(false) replicates (the
 * budget shared among them); time_budget_ms overrides the budget. Minimal mode (emulated): the minimum
 * samples and one replicate. */
void pm_opts_profile(struct pm_opts *o);

struct pm_result {
    struct stats tsc;          /* TSC ticks per iteration over the samples */
    struct stats cyc;          /* core cycles per iteration: each replicate's ticks converted with its own ratio
                                  (PM_RATIO_PER_REPLICATE), then combined; else tsc x ratio */
    bool cyc_converged;        /* the stop rule's verdict on cyc's interval (meas_combine) */
    double ratio;              /* core cycles per TSC tick: the median of the replicates' (or the one used) */
    const char *cycles_method; /* "pmu:<event>" (counted around one sample), "core_tsc_ratio:<platform method>" or
                                  PM_RATIO_PER_REPLICATE */
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

/* A measurement's figure in core cycles per event: r->cyc (each replicate converted with its own ratio where it
 * has one) / events per iteration. */
void pm_cycles_stats(const struct pm_result *r, double per_iter, struct stats *out);

/* The core/TSC ratio of each replicate, measured next to it (docs/measurement.md "Core clock and TSC", "Next to
 * the measurement"): where the benchmark's ratio comes from the add_rr chain and no PMU counts cycles (and not in
 * minimal mode), every replicate is followed by clock_chain_ratio_now (where that draw reads no clean window, the
 * chain's steady reference, clock_chain_ratio_ref); the replicate's ticks are converted with it (its
 * uncertainty as the factor's, stats_scale_unc) before the replicates are combined, so that the
 * figure's interval holds how the clock, and its measurement, moved during the run. */
#define PM_RATIO_PER_REPLICATE "core_tsc_ratio:clock_chains, per replicate"

/* One figure of a batch measured with pm_measure_interleaved: fn(arg) with options o, its result in *r and
 * rc 0 (or -1 as pm_measure). */
struct pm_job {
    pm_loop_fn fn;
    void *arg;
    struct pm_opts o;
    struct pm_result *r;
    int rc;
};
#define PM_MAX_JOBS 64
/* pm_measure of every job, with their replicates interleaved in time: R passes over the jobs, pass k running
 * replicate k of each in turn (a job with fewer replicates sits the later passes out), so that one figure's
 * replicates are a pass apart and its interval holds what the moment changes, as the sweep's points
 * (docs/measurement.md "Replicates"). Each replicate warms up again (its state went cold in between). The jobs
 * must not share state that one's loop changes for another's. Returns how many jobs failed (their rc -1). More
 * than PM_MAX_JOBS jobs: an error (-1, nothing measured). */
int pm_measure_interleaved(struct pm_job *jobs, size_t n);

#endif
