/* chase.c - pointer-chase latency measurement (protocol in chase.h and docs/measurement.md). */
#include "measure/chase.h"

#define CHASE_1 p = *(void *const *)p;
#define CHASE_8 CHASE_1 CHASE_1 CHASE_1 CHASE_1 CHASE_1 CHASE_1 CHASE_1 CHASE_1
#define CHASE_64 CHASE_8 CHASE_8 CHASE_8 CHASE_8 CHASE_8 CHASE_8 CHASE_8 CHASE_8

TIMED_FN void *chase_run(void *p, uint64_t iters)
{
    while (iters--) {
        CHASE_64
    }
    return p;
}

void chase_opts_default(struct chase_opts *o)
{
    *o = (struct chase_opts){
        .min_sample_tsc = 100000,
        .budget_tsc = 0,
        .min_samples = 11,
        .max_samples = 0,
        .target_cv = 0.01,
        .warmup_passes = 1,
        .serialize = TIMING_DEFAULT_SERIALIZE,
        .clock = NULL,
        .clock_ctx = NULL,
    };
}

static ALWAYS_INLINE uint64_t clock_now(const struct chase_opts *o)
{
    return o->clock ? o->clock(o->clock_ctx) : timing_read(o->serialize);
}

/* One timed region around chase_run. Both the overhead (iters = 0) and the samples go through this same
 * code, so what is subtracted is exactly what was added. Returns false if the clock went backwards. */
static NOINLINE bool timed_chase(const struct chase_opts *o, void **pp, uint64_t iters, uint64_t *dt,
                                 uint64_t *t_end)
{
    uint64_t t0 = clock_now(o);
    void *p = chase_run(*pp, iters);
    uint64_t t1 = clock_now(o);
    *pp = p;
    *t_end = t1;
    *dt = t1 - t0;
    return t1 >= t0;
}

int chase_measure(void *start, size_t n_elems, const struct chase_opts *o, double *sample_buf,
                  size_t sample_cap, struct chase_result *r)
{
    double ov[CHASE_OVERHEAD_REPS];
    uint64_t dt, t_now, loads = 0;
    void *p = start;

    if (!start || n_elems == 0 || !o || !sample_buf || sample_cap == 0 || !r)
        return CHASE_EINVAL;
    size_t max_n = (o->max_samples && o->max_samples < sample_cap) ? o->max_samples : sample_cap;
    size_t min_n = o->min_samples ? o->min_samples : 1;
    if (min_n > max_n)
        return CHASE_EINVAL;
    *r = (struct chase_result){0};

    uint64_t t_begin = clock_now(o);

    /* Warm-up: every element touched at least once per pass (caches, TLB, page-walk caches filled). */
    uint64_t passes = o->warmup_passes ? o->warmup_passes : 1;
    if (n_elems > (UINT64_MAX - CHASE_UNROLL) / passes)
        return CHASE_EINVAL;
    uint64_t warm = (n_elems * passes + CHASE_UNROLL - 1) / CHASE_UNROLL;
    p = chase_run(p, warm);
    loads += warm * CHASE_UNROLL;

    /* Overhead: the same timed region with no loads; the median ignores an interrupted repetition. */
    for (size_t i = 0; i < CHASE_OVERHEAD_REPS; i++) {
        if (!timed_chase(o, &p, 0, &dt, &t_now))
            return CHASE_ECLOCK;
        ov[i] = (double)dt;
    }
    stats_sort(ov, CHASE_OVERHEAD_REPS);
    double overhead = stats_quantile_sorted(ov, CHASE_OVERHEAD_REPS, 0.5);

    /* Calibration: double the sample length until one lasts min_sample_tsc beyond the overhead, so the
     * overhead and its jitter are a small fraction of every sample. Bounded by about 2 x min_sample_tsc. */
    uint64_t iters = 1;
    for (;;) {
        if (!timed_chase(o, &p, iters, &dt, &t_now))
            return CHASE_ECLOCK;
        loads += iters * CHASE_UNROLL;
        if ((double)dt - overhead >= (double)o->min_sample_tsc || iters >= CHASE_MAX_ITERS)
            break;
        if (dt == 0 && iters >= 1024)
            return CHASE_ECLOCK;
        iters *= 2;
    }
    uint64_t per_sample = iters * CHASE_UNROLL;

    /* Sampling. The budget starts here: warm-up and calibration take a predictable time (one pass of
     * the chain, under two sample lengths), sampling the adaptive part. */
    uint64_t t_sampling = t_now;
    size_t n = 0;
    while (n < max_n) {
        if (!timed_chase(o, &p, iters, &dt, &t_now))
            return CHASE_ECLOCK;
        loads += per_sample;
        sample_buf[n++] = ((double)dt - overhead) / (double)per_sample;
        if (n < min_n || n == max_n) /* the loop condition ends it at max_n */
            continue;
        if (stats_should_stop(sample_buf, n, min_n, 0, o->target_cv)) {
            r->converged = true;
            break;
        }
        if (o->budget_tsc && t_now - t_sampling >= o->budget_tsc) {
            r->budget_hit = true;
            break;
        }
    }

    r->samples = n;
    r->overhead_tsc = overhead;
    r->loads_per_sample = per_sample;
    r->loads_total = loads;
    r->elapsed_tsc = t_now - t_begin;
    r->end = p;
    stats_compute(sample_buf, n, &r->tsc_per_load);
    return CHASE_OK;
}
