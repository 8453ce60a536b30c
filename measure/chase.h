/* chase.h - the timed pointer-chase loop and its measurement protocol: warm-up, calibration, sampling. */
#ifndef PMB_MEASURE_CHASE_H
#define PMB_MEASURE_CHASE_H

#include "kernel/klib.h"
#include "measure/stats.h"
#include "measure/serialize.h"

/* Dependent loads per loop iteration: the decrement and branch retire in the shadow of 64 loads, so loop
 * overhead is below one cycle per 64 loads even at L1 latency. */
#define CHASE_UNROLL 64

/* A clock returning ticks; chase_opts.clock == NULL means the inline serialized RDTSC. */
typedef uint64_t (*chase_clock_fn)(void *ctx);
/* Replicate rep >= 1 of a chase (docs/measurement.md "Replicates"): returns the start of a fresh chain of the
 * same n_elems elements (a new permutation, another offset), CHASE_SAME_CHAIN to go on chasing the chain as
 * it is (warm: no warm-up pass), or NULL when it cannot. */
#define CHASE_SAME_CHAIN ((void *)1)
typedef void *(*chase_setup_fn)(void *ctx, size_t rep);

struct chase_opts {
    uint64_t min_sample_tsc;         /* a sample lasts at least this many ticks (sets loads_per_sample) */
    uint64_t budget_tsc;             /* sampling stops once it has taken this many ticks; 0 = none */
    size_t min_samples;              /* at least this many samples, budget or not (0 is taken as 1) */
    size_t max_samples;              /* at most this many (0 = sample_cap) */
    double target_ci;                /* stop when the median's 95 % CI half-width / median <= this; <= 0: never */
    size_t warmup_passes;            /* full passes over the chain before anything is timed (0 -> 1) ... */
    uint64_t warmup_loads;           /* ... or, when not 0, this many loads instead (a chain far larger than
                                        the caches is already in a random cache and TLB state once built) */
    enum timing_serialize serialize; /* fencing of the built-in clock (measure/timing.h) */
    chase_clock_fn clock;            /* NULL: timing_read(serialize); tests inject a fake clock here */
    void *clock_ctx;
    size_t replicates;               /* independent replicates (0 -> 1), budget_tsc shared among them */
    chase_setup_fn setup;            /* replicates >= 1 chase setup(setup_ctx, rep); NULL: the same chain */
    void *setup_ctx;
};

/* min_sample_tsc 100000 (tens of microseconds: the 30-60 tick timer overhead is < 0.1% of it), no budget,
 * 11..cap samples, CI target 1%, one warm-up pass, LFENCE serialization, built-in clock, one replicate. */
void chase_opts_default(struct chase_opts *o);

struct chase_result {
    struct stats tsc_per_load; /* TSC ticks per load: (sample ticks - overhead) / loads_per_sample (replicates:
                                  across them, stats_replicates) */
    size_t samples;
    double overhead_tsc;       /* median ticks of an empty timed region (clock pair + call), subtracted */
    uint64_t loads_per_sample; /* a multiple of CHASE_UNROLL */
    uint64_t loads_total;      /* every load done: warm-up + calibration + samples */
    uint64_t elapsed_tsc;      /* ticks from the first to the last clock read of the call */
    bool converged;            /* sampling ended because the CI reached target_ci */
    bool budget_hit;           /* sampling ended because budget_tsc ran out */
    void *end;                 /* element the chase stopped on (one replicate: start advanced by loads_total links) */
};

#define CHASE_OK 0
#define CHASE_EINVAL (-1) /* bad argument */
#define CHASE_ECLOCK (-2) /* the clock went backwards or stood still over 64Ki loads */

/* Iteration cap for the calibration doubling (2^26 x 64 = 4 Gi loads), a guard against runaway values. */
#define CHASE_MAX_ITERS (1ull << 26)

/* Empty timed regions whose median is the overhead. */
#define CHASE_OVERHEAD_REPS 31

/* iters x CHASE_UNROLL dependent loads p = *(void **)p from p; returns where it ended (returned so that
 * the loads cannot be optimized away). 64-byte aligned and never inlined, so its code layout is the same
 * wherever it is called from. */
void *chase_run(void *p, uint64_t iters);

/* Measures the load-to-use latency of the chain at start (a single cycle of n_elems elements, as
 * chain_build makes): one or more warm-up passes; the overhead of an empty timed region; loads_per_sample
 * doubled from CHASE_UNROLL until a sample lasts min_sample_tsc; then samples into sample_buf until
 * stats_should_stop(target_ci), max_samples, sample_cap or budget_tsc (counted from the first sample: the
 * warm-up takes one pass of the chain whatever the budget), but never fewer than min_samples.
 * The chase continues across samples, never restarting at start. On return sample_buf holds the
 * per-load samples sorted ascending and r the summary. The caller owns the environment (interrupts off,
 * one CPU, fixed frequency). Returns CHASE_OK, CHASE_EINVAL or CHASE_ECLOCK. */
int chase_measure(void *start, size_t n_elems, const struct chase_opts *o, double *sample_buf,
                  size_t sample_cap, struct chase_result *r);

#endif
