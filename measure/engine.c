/* engine.c - the adaptive measurement protocol every benchmark goes through (engine.h, docs/measurement.md). */
#include "measure/engine.h"
#include "measure/timing.h"

#define MEAS_MAX_OVERHEAD_REPS 63

struct run {
    const struct meas_spec *s;
    uint64_t iters_total;
    uint64_t t_end; /* end read of the last region */
};

static ALWAYS_INLINE uint64_t clock_now(const struct meas_spec *s)
{
    return s->clock ? s->clock(s->clock_ctx) : timing_read(s->serialize);
}

/* One timed region of iters iterations. Both the overhead (iters = 0) and the samples go through this same
 * code, so what is subtracted is exactly what was added. *ticks is the region's value (with a baseline body:
 * the difference, which may be negative), *raw the ticks of the measured body alone (the stalled-clock check). */
static NOINLINE int region(struct run *rn, uint64_t iters, double *ticks, uint64_t *raw)
{
    const struct meas_spec *s = rn->s;
    rn->iters_total += iters;
    if (s->sample) {
        uint64_t t;
        if (s->sample(s->ctx, iters, &t) != 0)
            return MEAS_ESAMPLE;
        rn->t_end = clock_now(s);
        *ticks = (double)t;
        *raw = t;
        return MEAS_OK;
    }
    uint64_t t0 = clock_now(s);
    s->body(s->ctx, iters);
    uint64_t t1 = clock_now(s);
    rn->t_end = t1;
    if (t1 < t0)
        return MEAS_ECLOCK;
    *raw = t1 - t0;
    *ticks = (double)(t1 - t0);
    if (s->base) {
        /* nanoBench's n vs 2n: the same harness with less work, timed right after; what the two share cancels. */
        rn->iters_total += iters;
        s->base(s->ctx, iters);
        uint64_t t2 = clock_now(s);
        rn->t_end = t2;
        if (t2 < t1)
            return MEAS_ECLOCK;
        *ticks -= (double)(t2 - t1);
    }
    return MEAS_OK;
}

static double clock_step = 1;

void meas_set_clock_step(double ticks) { clock_step = ticks >= 1 ? ticks : 1; }
double meas_clock_step(void) { return clock_step; }

double meas_step_estimate(uint64_t *t, size_t n)
{
    if (!t || n < 8)
        return 1;
    /* insertion sort: n is a few hundred, once per run */
    for (size_t i = 1; i < n; i++)
        for (size_t j = i; j > 0 && t[j - 1] > t[j]; j--) {
            uint64_t x = t[j];
            t[j] = t[j - 1];
            t[j - 1] = x;
        }
    size_t lo = n / 20, hi = n - 1 - n / 20;
    uint64_t gap = 1;
    for (size_t i = lo + 1; i <= hi; i++)
        if (t[i] != t[i - 1] && t[i] - t[i - 1] > gap)
            gap = t[i] - t[i - 1];
    return (double)gap;
}

/* The overhead's sign-test interval over its sorted regions (below 6: the whole range). */
static void overhead_interval(const double *ov, size_t n_ov, double *o_lo, double *o_hi)
{
    size_t l, u;
    bool exact;
    stats_median_ci_ranks(n_ov, &l, &u, &exact);
    *o_lo = ov[l];
    *o_hi = ov[u];
}

static void allowance_of(double res, bool paired, bool have_ov, double overhead, double o_lo, double o_hi,
                         uint64_t iters, double work, double *lo, double *hi)
{
    double d = (res > 0 ? res : 1) * (paired ? 2 : 1);
    double a_lo = d, a_hi = d;
    if (have_ov) {
        a_lo += (o_hi > overhead ? o_hi - overhead : 0) + d;
        a_hi += (overhead > o_lo ? overhead - o_lo : 0) + d;
    }
    double per = (double)(iters ? iters : 1) * (work > 0 ? work : 1);
    *lo = a_lo / per;
    *hi = a_hi / per;
}

void meas_allowance(double res, bool paired, const double *ov, size_t n_ov, double overhead, uint64_t iters,
                    double work, double *lo, double *hi)
{
    double o_lo = overhead, o_hi = overhead;
    if (ov && n_ov)
        overhead_interval(ov, n_ov, &o_lo, &o_hi);
    allowance_of(res, paired, ov && n_ov, overhead, o_lo, o_hi, iters, work, lo, hi);
}

/* first: the replicate whose overhead (and its interval) is subtracted instead of measuring it (NULL: measured
 * here). */
static int run_one(const struct meas_spec *s, double *buf, size_t cap, struct meas_result *r, bool warm,
                   const struct meas_result *first)
{
    double ov[MEAS_MAX_OVERHEAD_REPS];
    double dt;
    uint64_t raw;
    int rc;

    *r = (struct meas_result){0};
    size_t max_n = (s->max_samples && s->max_samples < cap) ? s->max_samples : cap;
    size_t min_n = s->min_samples ? MIN(s->min_samples, max_n) : 1;
    double work = s->work_per_iter > 0 ? s->work_per_iter : 1;
    uint64_t max_iters = s->max_iters ? s->max_iters : MEAS_MAX_ITERS;
    struct run rn = {.s = s};

    uint64_t t_begin = clock_now(s);
    rn.t_end = t_begin;

    /* 1. Warm-up: caches, TLBs, page-walk caches and branch predictors filled before anything counts. */
    if (s->body && s->warmup_iters && !warm) {
        s->body(s->ctx, s->warmup_iters);
        rn.iters_total += s->warmup_iters;
        if (s->base) {
            s->base(s->ctx, s->warmup_iters);
            rn.iters_total += s->warmup_iters;
        }
    }
    uint64_t iters = s->iters ? s->iters : 1;
    for (size_t i = 0; i < s->warmup_samples; i++)
        if ((rc = region(&rn, iters, &dt, &raw)) != MEAS_OK)
            goto fail;

    /* 2. Overhead: the same region with no work; the median ignores an interrupted repetition. */
    double overhead = first ? first->overhead : 0;
    double o_lo = first ? first->overhead_lo : 0, o_hi = first ? first->overhead_hi : 0;
    if (s->overhead_reps && !first) {
        for (size_t i = 0; i < s->overhead_reps; i++) {
            if ((rc = region(&rn, 0, &dt, &raw)) != MEAS_OK)
                goto fail;
            ov[i] = dt;
        }
        stats_sort(ov, s->overhead_reps);
        overhead = stats_quantile_sorted(ov, s->overhead_reps, 0.5);
        overhead_interval(ov, s->overhead_reps, &o_lo, &o_hi);
    }

    /* 3. Calibration: double the region until it lasts min_sample_ticks beyond the overhead, so that the
     * overhead and its jitter are a small fraction of every sample. Bounded by about 2 x min_sample_ticks. */
    if (s->min_sample_ticks) {
        for (;;) {
            if ((rc = region(&rn, iters, &dt, &raw)) != MEAS_OK)
                goto fail;
            if (dt - overhead >= (double)s->min_sample_ticks || iters >= max_iters)
                break;
            if (raw == 0 && iters >= 1024) {
                rc = MEAS_ECLOCK; /* the clock stands still */
                goto fail;
            }
            iters *= 2;
        }
    }

    /* 4. Samples. The budget starts here: warm-up and calibration take a predictable time, sampling is
     * the adaptive part. */
    uint64_t t_sampling = rn.t_end;
    size_t n = 0;
    bool converged = false, budget_hit = false;
    double allow_lo, allow_hi;
    double res = s->resolution > 0 ? s->resolution : s->clock ? 1 : clock_step; /* a given clock: its ticks */
    allowance_of(res, s->base != NULL, s->overhead_reps > 0, overhead, o_lo, o_hi, iters, work, &allow_lo,
                 &allow_hi);
    while (n < max_n) {
        if ((rc = region(&rn, iters, &dt, &raw)) != MEAS_OK)
            goto fail;
        buf[n++] = (dt - overhead) / ((double)iters * work);
        if (n < min_n || n == max_n)
            continue;
        if (stats_should_stop_allow(buf, n, min_n, 0, s->target_ci, (allow_lo + allow_hi) / 2)) {
            converged = true;
            break;
        }
        if (s->budget_ticks && rn.t_end - t_sampling >= s->budget_ticks) {
            budget_hit = true;
            break;
        }
    }

    /* 5. Statistics. */
    stats_compute(buf, n, &r->st);
    stats_widen(&r->st, allow_lo, allow_hi);
    r->overhead = overhead;
    r->overhead_lo = o_lo;
    r->overhead_hi = o_hi;
    r->iters = iters;
    r->iters_total = rn.iters_total;
    r->elapsed = rn.t_end - t_begin;
    r->converged = converged;
    r->budget_hit = budget_hit;
    return MEAS_OK;

fail:
    *r = (struct meas_result){0};
    return rc;
}

void meas_combine(const struct meas_result *reps, size_t n, double target_ci, struct meas_result *r)
{
    struct stats st[MEAS_MAX_REPLICATES] = {0};
    *r = (struct meas_result){0};
    n = MIN(n, (size_t)MEAS_MAX_REPLICATES);
    for (size_t k = 0; k < n; k++) {
        st[k] = reps[k].st;
        r->budget_hit = r->budget_hit || reps[k].budget_hit;
        r->iters_total += reps[k].iters_total;
        r->elapsed += reps[k].elapsed;
        r->iters = reps[k].iters;
        r->overhead = reps[k].overhead;
    }
    stats_replicates(st, n, &r->st);
    if (r->st.replicates == 1) { /* one replicate: its own stop rule is the figure's */
        for (size_t k = 0; k < n; k++)
            if (reps[k].st.n)
                r->converged = reps[k].converged;
        return;
    }
    /* The figure's stop rule: its interval across the replicates reached the target (a replicate's own rule
     * only decided how long that replicate sampled). */
    size_t lo, hi;
    bool exact;
    stats_median_ci_ranks(r->st.replicates, &lo, &hi, &exact);
    double am = r->st.median < 0 ? -r->st.median : r->st.median;
    r->converged = r->st.replicates > 0 && exact && target_ci > 0 && (r->st.ci_hi - r->st.ci_lo) / 2 <= target_ci * am;
}

static bool spec_ok(const struct meas_spec *s, const double *buf, size_t cap, const struct meas_result *r)
{
    return s && r && buf && cap && !(!s->body == !s->sample) && !(s->base && !s->body) &&
           s->overhead_reps <= MEAS_MAX_OVERHEAD_REPS && s->replicates <= MEAS_MAX_REPLICATES;
}

int meas_replicate(const struct meas_spec *s, size_t k, uint64_t start_iters, bool back_to_back,
                   const struct meas_result *first, double *buf, size_t cap, struct meas_result *r)
{
    if (r)
        *r = (struct meas_result){0};
    size_t n = s && s->replicates ? s->replicates : 1;
    if (!spec_ok(s, buf, cap, r) || k >= n)
        return MEAS_EINVAL;
    /* A warm state is only the previous replicate's when that one ran just before (back to back). */
    int st = s->setup ? s->setup(s->ctx, k) : (k && back_to_back ? MEAS_SETUP_WARM : MEAS_SETUP_FRESH);
    if (st != MEAS_SETUP_FRESH && st != MEAS_SETUP_WARM)
        return MEAS_ESETUP;
    if (n == 1) /* one replicate: the protocol as it is */
        return run_one(s, buf, cap, r, false, NULL);
    /* Each replicate the whole protocol on freshly prepared state, with its share of the time budget, so that
     * the figure's interval holds what the setup (buffer, permutation, pages) and the moment change. */
    struct meas_spec one = *s;
    one.budget_ticks = s->budget_ticks / n + (s->budget_ticks && s->budget_ticks < n);
    /* min_samples is the figure's: each replicate takes its share, never fewer than 3 (a median one outlier
     * cannot move); its own stop rule still needs 6 for an interval, so a cheap replicate takes 6 or more. */
    one.min_samples = MAX((s->min_samples + n - 1) / n, (size_t)MEAS_MIN_REPLICATE_SAMPLES);
    /* calibration starts where an earlier replicate's ended: one region confirms it, not a doubling */
    one.iters = start_iters > s->iters ? start_iters : s->iters;
    return run_one(&one, buf, cap, r, st == MEAS_SETUP_WARM && k > 0 && back_to_back,
                   k && s->overhead_once ? first : NULL);
}

int meas_run(const struct meas_spec *s, double *buf, size_t cap, struct meas_result *r)
{
    if (r)
        *r = (struct meas_result){0};
    if (!spec_ok(s, buf, cap, r))
        return MEAS_EINVAL;
    size_t n = s->replicates ? s->replicates : 1;
    if (n == 1)
        return meas_replicate(s, 0, 0, true, NULL, buf, cap, r);
    struct meas_result reps[MEAS_MAX_REPLICATES];
    int rc;
    for (size_t k = 0; k < n; k++)
        if ((rc = meas_replicate(s, k, k ? reps[k - 1].iters : 0, true, k ? &reps[0] : NULL, buf, cap,
                                 &reps[k])) != MEAS_OK) {
            *r = (struct meas_result){0};
            return rc;
        }
    meas_combine(reps, n, s->target_ci, r);
    return MEAS_OK;
}
