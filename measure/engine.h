/* engine.h - the one adaptive measurement engine: warm-up, overhead through the same timed path, calibrated sample length, sample loop, stop rule, statistics. */
#ifndef PMB_MEASURE_ENGINE_H
#define PMB_MEASURE_ENGINE_H

#include "kernel/klib.h"
#include "measure/serialize.h"
#include "measure/stats.h"

/*
 * Every benchmark measures through meas_run (docs/measurement.md, "The engine"). What is measured is one
 * of two things, both taken as parameters so that host tests can script them:
 *
 *   body + clock   the engine times `body(ctx, iters)` on the calling CPU between two clock reads
 *                  (clock NULL: the fenced TSC read chosen by `serialize`, measure/timing.h);
 *   sample         the caller times a region itself (on another CPU, over several threads, after
 *                  placing cache lines) and returns its ticks; the engine still owns everything else.
 *
 * Protocol, in order (the clock is read once at the start, then twice around every timed region):
 *   (with a baseline `base`, "ticks" of a region are ticks(body) - ticks(base), timed back to back.)
 *   1. warm-up: body(ctx, warmup_iters) untimed (body mode), then warmup_samples timed regions whose
 *      values are thrown away;
 *   2. overhead: overhead_reps timed regions of zero iterations through exactly the same path, their
 *      median subtracted from every sample (0 reps: nothing subtracted);
 *   3. calibration: iterations doubled from `iters` until a region lasts min_sample_ticks beyond the
 *      overhead (min_sample_ticks 0: `iters` is used as it is);
 *   4. samples: value = (ticks - overhead) / (iters x work_per_iter), until the stop rule: the 95 %
 *      confidence interval of the median is within target_ci of it (stats_should_stop: `converged`),
 *      max_samples, or the sampling phase has used budget_ticks (`budget_hit`); never fewer than
 *      min_samples (and no interval exists below 6 samples);
 *   5. statistics: stats_compute over the samples (median, p10, p90, min, max, spread, 95 % CI of the
 *      median), in ticks per unit of work; the interval then widened by the reading allowance
 *      (meas_allowance), which the stop rule in 4 counts as well.
 */

/* Runs `iters` units of the measured work (0: none, the call alone). State lives in ctx and carries over. */
typedef void (*meas_body_fn)(void *ctx, uint64_t iters);
/* Replicate mode: prepares replicate `rep` (0..replicates-1) before its warm-up: a fresh buffer offset, chain
 * permutation (new seed), page placement or line set. MEAS_SETUP_FRESH (0): new state, warmed up as usual;
 * MEAS_SETUP_WARM: the state is the previous replicate's and already warm (body mode skips warmup_iters, a
 * full pass over a chain far larger than the caches); anything else: it cannot (MEAS_ESETUP). */
#define MEAS_SETUP_FRESH 0
#define MEAS_SETUP_WARM 1
typedef int (*meas_setup_fn)(void *ctx, size_t rep);
/* A clock in ticks. */
typedef uint64_t (*meas_clock_fn)(void *ctx);
/* One timed region of `iters` units of work (0: the empty region) timed by the caller: 0 with *ticks set,
 * or -1 when it failed (a CPU that did not answer, a pass that did not close). */
typedef int (*meas_sample_fn)(void *ctx, uint64_t iters, uint64_t *ticks);

struct meas_spec {
    meas_body_fn body;      /* body mode ... */
    meas_body_fn base;      /* body mode, optional: a baseline run right after body in every region with the same
                               iters; the region's value is ticks(body) - ticks(base) (nanoBench's n vs 2n:
                               the harness both share cancels; the value may be negative in noise) */
    meas_sample_fn sample;  /* ... or sample mode (exactly one of the two) */
    void *ctx;              /* handed to body / sample */
    meas_clock_fn clock;    /* NULL: timing_read(serialize) */
    void *clock_ctx;
    enum timing_serialize serialize;
    uint64_t warmup_iters;     /* body mode: iterations run untimed first */
    size_t warmup_samples;     /* timed regions thrown away before the overhead */
    size_t overhead_reps;      /* empty regions whose median is the overhead (0: none subtracted) */
    uint64_t iters;            /* iterations per region, or where calibration starts (0 -> 1) */
    uint64_t min_sample_ticks; /* calibration target beyond the overhead; 0: `iters` fixed */
    uint64_t max_iters;        /* calibration guard (0: MEAS_MAX_ITERS) */
    double work_per_iter;      /* units of work per iteration (loads, bytes ...; 0 -> 1) */
    size_t min_samples;        /* at least this many (0 -> 1; above max_samples: max_samples) */
    size_t max_samples;        /* at most this many (0 or above the buffer: the buffer) */
    double target_ci;          /* stop once the CI half-width / median is <= this; <= 0: never early */
    uint64_t budget_ticks;     /* stop once sampling has taken this long (min_samples still taken); 0: none */
    size_t replicates;         /* independent replicates (0 -> 1, at most MEAS_MAX_REPLICATES), each the whole
                                  protocol after setup(ctx, rep), budget_ticks / replicates each */
    meas_setup_fn setup;       /* optional: called before every replicate (also the first) */
    double resolution;         /* the clock's step in ticks: a difference of two reads is within +-resolution of
                                  the time between them (0: a given clock 1 tick; the TSC, and a caller's tick
                                  count in sample mode, meas_clock_step()) */
    bool overhead_once;        /* replicates: the overhead is measured in the first replicate alone and
                                  subtracted in every one (the empty region is the timed path's, not the
                                  replicate's state: a placed row's is a hand-over to another CPU); its interval
                                  (overhead_lo/hi) enters every replicate's reading allowance */
};

#define MEAS_MAX_REPLICATES STATS_MAX_REPLICATES
#define MEAS_MIN_REPLICATE_SAMPLES 3 /* per replicate: a median that one outlier cannot move */

#define MEAS_MAX_ITERS (1ull << 34)

/* The profiles' precision targets (docs/measurement.md): the stop rule aims at a 95 % CI of the median
 * within 1 % of it (full) or 5 % (quick), from at least 11 (full) or 7 (quick) samples; a figure whose
 * interval is wider than its profile's target is `noisy`. */
#define MEAS_CI_TARGET_FULL 0.01
#define MEAS_CI_TARGET_QUICK 0.05
static inline double meas_ci_target(bool quick) { return quick ? MEAS_CI_TARGET_QUICK : MEAS_CI_TARGET_FULL; }
static inline size_t meas_min_samples(bool quick) { return quick ? 7 : 11; }
/* Replicates per figure (docs/measurement.md "Replicates"): full 9, the fewest whose distribution-free 95 %
 * interval of the median (x[1]..x[7] of the sorted replicate medians, 96.1 %) leaves out the most extreme
 * replicate on each side; quick 1 (its interval is the precision within the run). */
#define MEAS_REPLICATES_FULL 9
#define MEAS_REPLICATES_QUICK 1
static inline size_t meas_replicates(bool quick) { return quick ? MEAS_REPLICATES_QUICK : MEAS_REPLICATES_FULL; }

struct meas_result {
    struct stats st;          /* ticks per unit of work over the samples (replicates > 1: stats_replicates) */
    double overhead;          /* ticks of the empty region, subtracted */
    double overhead_lo, overhead_hi; /* its sign-test interval over the empty regions (the range below 6) */
    uint64_t iters;           /* iterations per sample */
    uint64_t iters_total;     /* every iteration run: warm-up, calibration, samples */
    uint64_t elapsed;         /* ticks from the first to the last clock read */
    bool converged;           /* sampling ended because the CI reached target_ci (replicates: the interval
                                 across them, meas_combine) */
    bool budget_hit;          /* sampling ended because budget_ticks ran out (in some replicate) */
};

#define MEAS_OK 0
#define MEAS_EINVAL (-1) /* bad argument */
#define MEAS_ECLOCK (-2) /* the clock went backwards, or stood still as iterations grew */
#define MEAS_ESAMPLE (-3) /* the sample function failed */
#define MEAS_ESETUP (-4)  /* the setup function failed */

/* The allowance a sample's reading adds to every interval (docs/measurement.md "Statistics", "Reading
 * resolution"), in ticks per unit of work. A sample is (T - O) / (iters x work) where T is a difference of
 * clock reads (two differences with a baseline body), each within +-res of the time it stands for, and O the
 * median of the empty regions, itself known to within its sign-test interval [O_lo, O_hi] (the whole range
 * below 6 regions) widened by the same reading error. The true per-region time's order statistics lie within
 * that of the readings', so the figure's interval [x_l, x_u] widens by
 *   lo = (d + (O_hi - O) + d_ov) / (iters x work),  hi = (d + (O - O_lo) + d_ov) / (iters x work),
 * d = res (2 res with a baseline), d_ov = d when an overhead is subtracted, else 0 (and no O terms).
 * ov: the overhead regions' values, sorted ascending (n_ov of them, 0: none subtracted). */
void meas_allowance(double res, bool paired, const double *ov, size_t n_ov, double overhead, uint64_t iters,
                    double work, double *lo, double *hi);

/* The TSC's step: how far apart two readings of it can be that stand for the same moment, in ticks (1 unless
 * meas_set_clock_step said otherwise). A TSC need not move by 1: on the test box's AMD guest it moves by ~26
 * ticks (10 ns) at a time (docs/measurement.md "Statistics", "Reading resolution"). Set once at start-up
 * (bench/clock.c, from meas_step_estimate); values below 1 (or NaN) count as 1. */
void meas_set_clock_step(double ticks);
double meas_clock_step(void);
/* The step of a clock from n timed regions whose true lengths were spread evenly over a range many steps wide and
 * finer than a tick apart: the largest gap between consecutive distinct values among the sorted regions'
 * central 90 % (what an interruption added stays outside). A 1-tick clock fills the range (gaps of 1); a clock
 * that moves by g leaves gaps of about g. At least 1; 1 with fewer than 8 regions. Sorts t in place. */
double meas_step_estimate(uint64_t *t, size_t n);

/* Runs the protocol above with samples in buf[0..cap) (sorted ascending on return). Returns MEAS_OK or an
 * error; on error r is zeroed. The caller owns the environment (interrupts off, one CPU, fixed clock).
 * With replicates > 1 the protocol runs once per replicate, each after setup(ctx, k) and with its own
 * warm-up (skipped when setup says MEAS_SETUP_WARM), overhead and calibration (starting from the previous
 * replicate's iterations), at least max(MEAS_MIN_REPLICATE_SAMPLES, ceil(min_samples / replicates)) samples
 * and budget_ticks / replicates, the buffer reused (on return it holds the last replicate's samples); r
 * combines them by meas_combine. */
int meas_run(const struct meas_spec *s, double *buf, size_t cap, struct meas_result *r);

/* Replicate k (0..replicates-1) of s alone: setup(ctx, k), then the protocol with the replicate's share of the
 * budget and of min_samples (replicates > 1; one replicate: s as it is), calibration starting from start_iters
 * (an earlier replicate's iterations; 0: s->iters). back_to_back: replicate k-1 of the same figure ran just
 * before, so a MEAS_SETUP_WARM state (and no setup) skips the warm-up; false for replicates interleaved in time
 * with other figures' (their state is cold again). first: replicate 0's result, whose overhead (and its
 * interval) replicate k > 0 subtracts with overhead_once (NULL: measured here). meas_run is this for
 * k = 0..R-1 back to back, then meas_combine. */
int meas_replicate(const struct meas_spec *s, size_t k, uint64_t start_iters, bool back_to_back,
                   const struct meas_result *first, double *buf, size_t cap, struct meas_result *r);

/* Combines replicates measured apart (e.g. the sweep's passes over its grid, each point once per pass):
 * r->st by stats_replicates; converged when a 95 % interval across the replicates exists (6 or more) and is
 * within target_ci of the median (the figure's stop rule; one replicate: its own); budget_hit when any replicate hit its budget;
 * iters_total and elapsed summed, iters and overhead the last replicate's. n at most MEAS_MAX_REPLICATES. */
void meas_combine(const struct meas_result *reps, size_t n, double target_ci, struct meas_result *r);

#endif
