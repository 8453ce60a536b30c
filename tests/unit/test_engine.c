/* test_engine.c - the measurement engine's protocol with scripted clocks and samples, and its statistics (CI ranks, spread). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <math.h>
#include <string.h>

#include "measure/engine.h"
#include "measure/stats.h"

/* ---- body mode with a scripted clock ------------------------------------------------------------------ */

/* A clock that advances by `ov` around every region plus `tpi` ticks per iteration the body ran since the
 * last read, plus a jitter pattern on samples. */
struct fake {
    uint64_t t;
    uint64_t pending; /* iterations run since the last clock read */
    uint64_t ov, tpi;
    uint64_t reads, body_calls, iters_run;
    const uint64_t *extra; /* per region end (cycling), may be NULL */
    size_t n_extra, region;
    int backwards_at;      /* region index at which the clock goes backwards (-1 never) */
    bool in_region;
};

static uint64_t fake_clock(void *ctx)
{
    struct fake *f = ctx;
    f->reads++;
    if (!f->in_region) { /* a start read (or the very first read) */
        f->in_region = f->reads > 1;
        return f->t;
    }
    f->in_region = false;
    if (f->backwards_at >= 0 && f->region == (size_t)f->backwards_at)
        return f->t - 1000;
    uint64_t e = f->n_extra ? f->extra[f->region % f->n_extra] : 0;
    f->region++;
    f->t += f->ov + f->pending * f->tpi + e;
    f->pending = 0;
    return f->t;
}

static void fake_body(void *ctx, uint64_t iters)
{
    struct fake *f = ctx;
    f->body_calls++;
    f->iters_run += iters;
    f->pending += iters;
}

static struct meas_spec body_spec(struct fake *f)
{
    return (struct meas_spec){
        .body = fake_body,
        .ctx = f,
        .clock = fake_clock,
        .clock_ctx = f,
        .overhead_reps = 9,
        .iters = 1,
        .min_sample_ticks = 1000,
        .min_samples = 5,
        .max_samples = 50,
        .target_ci = 0.01,
    };
}

static void test_body_protocol(void **state)
{
    (void)state;
    struct fake f = {.t = 1000, .ov = 40, .tpi = 3, .backwards_at = -1};
    struct meas_spec s = body_spec(&f);
    s.warmup_iters = 77;
    s.work_per_iter = 2;
    double buf[64];
    struct meas_result r;
    assert_int_equal(meas_run(&s, buf, 64, &r), MEAS_OK);
    /* overhead = ov exactly, subtracted: every sample is tpi / work ticks per unit */
    assert_true(fabs(r.overhead - 40) < 1e-9);
    /* 1000 ticks beyond the overhead at 3 per iteration: 512 is the first power of two reaching it */
    assert_int_equal(r.iters, 512);
    assert_true(fabs(r.st.median - 1.5) < 1e-12);
    /* constant samples: converged as soon as a 95 % interval exists (6 samples; min_samples is 5) */
    assert_true(r.converged);
    assert_false(r.budget_hit);
    assert_int_equal(r.st.n, 6);
    /* constant samples: the interval is the reading allowance alone (meas_allowance): a tick for the sample's
     * reading, none for the overhead's interval (all 40), a tick for the overhead's reading, over 512 x 2 */
    assert_true(r.st.spread == 0);
    assert_true(fabs(r.st.allow_lo - 2.0 / 1024) < 1e-15 && fabs(r.st.allow_hi - 2.0 / 1024) < 1e-15);
    assert_true(fabs(r.st.ci_lo - (1.5 - 2.0 / 1024)) < 1e-12 && fabs(r.st.ci_hi - (1.5 + 2.0 / 1024)) < 1e-12);
    /* warm-up 77 + calibration 1+2+...+512 + 6 samples of 512 */
    assert_int_equal(r.iters_total, 77 + 1023 + 6 * 512);
    assert_int_equal(f.iters_run, r.iters_total);
    /* one read at the start, two per region: 9 overhead + 10 calibration + 6 samples */
    assert_int_equal(f.reads, 1 + 2 * (9 + 10 + 6));
}

static void test_body_noisy_budget(void **state)
{
    (void)state;
    /* Jitter spread evenly over 0..700 ticks on a 1536-tick sample: the CI of the median stays ~5 % wide. */
    static const uint64_t jitter[] = {0, 500, 200, 700, 100, 400, 600, 300};
    struct fake f = {.t = 1, .ov = 0, .tpi = 3, .extra = jitter, .n_extra = 8, .backwards_at = -1};
    struct meas_spec s = body_spec(&f);
    s.overhead_reps = 0;
    s.budget_ticks = 20000;
    double buf[64];
    struct meas_result r;
    assert_int_equal(meas_run(&s, buf, 64, &r), MEAS_OK);
    assert_false(r.converged);
    assert_true(r.budget_hit);
    assert_true(r.st.n >= 5 && r.st.n < 50);
    assert_true(r.st.spread > 0.01);
    /* no budget: max_samples ends it, neither flag */
    s.budget_ticks = 0;
    f = (struct fake){.t = 1, .tpi = 3, .extra = jitter, .n_extra = 8, .backwards_at = -1};
    assert_int_equal(meas_run(&s, buf, 64, &r), MEAS_OK);
    assert_int_equal(r.st.n, 50);
    assert_false(r.converged);
    assert_false(r.budget_hit);
    /* max_samples above the buffer: the buffer wins */
    s.max_samples = 0;
    f = (struct fake){.t = 1, .tpi = 3, .extra = jitter, .n_extra = 8, .backwards_at = -1};
    assert_int_equal(meas_run(&s, buf, 8, &r), MEAS_OK);
    assert_int_equal(r.st.n, 8);
}

static void test_body_errors(void **state)
{
    (void)state;
    struct fake f = {.t = 5000, .ov = 10, .tpi = 3, .backwards_at = 3};
    struct meas_spec s = body_spec(&f);
    double buf[16];
    struct meas_result r;
    assert_int_equal(meas_run(&s, buf, 16, &r), MEAS_ECLOCK);
    assert_int_equal(r.st.n, 0);
    /* a clock that stands still while iterations grow */
    f = (struct fake){.t = 5000, .ov = 0, .tpi = 0, .backwards_at = -1};
    assert_int_equal(meas_run(&s, buf, 16, &r), MEAS_ECLOCK);
    /* bad arguments */
    assert_int_equal(meas_run(NULL, buf, 16, &r), MEAS_EINVAL);
    assert_int_equal(meas_run(&s, NULL, 16, &r), MEAS_EINVAL);
    assert_int_equal(meas_run(&s, buf, 0, &r), MEAS_EINVAL);
    assert_int_equal(meas_run(&s, buf, 16, NULL), MEAS_EINVAL);
    struct meas_spec both = s;
    both.sample = (meas_sample_fn)1; /* body and sample both set */
    assert_int_equal(meas_run(&both, buf, 16, &r), MEAS_EINVAL);
    struct meas_spec none = s;
    none.body = NULL;
    assert_int_equal(meas_run(&none, buf, 16, &r), MEAS_EINVAL);
}

/* ---- sample mode --------------------------------------------------------------------------------------- */

struct remote {
    uint64_t empty_ticks, pass_ticks;
    size_t calls, empty_calls, fail_at;
};

static int remote_sample(void *ctx, uint64_t iters, uint64_t *ticks)
{
    struct remote *r = ctx;
    if (++r->calls == r->fail_at)
        return -1;
    if (iters == 0) {
        r->empty_calls++;
        *ticks = r->empty_ticks;
    } else {
        *ticks = r->empty_ticks + iters * r->pass_ticks + (r->calls % 2); /* one tick of jitter */
    }
    return 0;
}

static uint64_t zero_clock(void *ctx)
{
    (void)ctx;
    return 0;
}

static void test_sample_mode(void **state)
{
    (void)state;
    struct remote rm = {.empty_ticks = 50, .pass_ticks = 6400};
    struct meas_spec s = {
        .sample = remote_sample,
        .ctx = &rm,
        .clock = zero_clock,
        .warmup_samples = 2,
        .overhead_reps = 31,
        .iters = 1,
        .work_per_iter = 64, /* loads per pass */
        .min_samples = 31,
        .max_samples = 31,
    };
    double buf[64];
    struct meas_result r;
    assert_int_equal(meas_run(&s, buf, 64, &r), MEAS_OK);
    assert_int_equal(rm.empty_calls, 31);
    assert_int_equal(rm.calls, 2 + 31 + 31);
    assert_int_equal(r.st.n, 31);
    assert_true(fabs(r.overhead - 50) < 1e-9);
    assert_true(r.st.median >= 100 && r.st.median <= 100 + 1.0 / 64);
    /* the sample function failing anywhere is an error, not a short result */
    rm = (struct remote){.empty_ticks = 50, .pass_ticks = 6400, .fail_at = 40};
    assert_int_equal(meas_run(&s, buf, 64, &r), MEAS_ESAMPLE);
}

/* ---- replicates ---------------------------------------------------------------------------------------- */

/* A remote whose pass takes a different time in every replicate (what a fresh permutation or buffer offset
 * changes), set by the setup callback; the samples of one replicate differ by one tick. */
struct reps {
    uint64_t pass[16];
    size_t cur, setups, calls;
    size_t order[16]; /* setup calls, in order */
    size_t fail_setup_at; /* 1-based; 0 never */
    uint64_t t; /* the engine's clock: 1000 ticks per sample call */
};

static int reps_setup(void *ctx, size_t k)
{
    struct reps *r = ctx;
    r->order[r->setups++] = k;
    if (r->setups == r->fail_setup_at)
        return -7;
    r->cur = k;
    return MEAS_SETUP_FRESH;
}

static int reps_sample(void *ctx, uint64_t iters, uint64_t *ticks)
{
    struct reps *r = ctx;
    r->calls++;
    r->t += 1000;
    *ticks = iters ? r->pass[r->cur] + (r->calls % 2) : 0;
    return 0;
}

static uint64_t reps_clock(void *ctx) { return ((struct reps *)ctx)->t; }

static struct meas_spec reps_spec(struct reps *r, size_t n)
{
    return (struct meas_spec){
        .sample = reps_sample,
        .ctx = r,
        .clock = reps_clock,
        .clock_ctx = r,
        .overhead_reps = 3,
        .iters = 1,
        .min_samples = 11,
        .max_samples = 40,
        .target_ci = 0.01,
        .replicates = n,
        .setup = reps_setup,
    };
}

static void test_replicates(void **state)
{
    (void)state;
    /* nine replicates whose passes take 1000..1080 ticks in a shuffled order */
    struct reps r = {.pass = {1040, 1000, 1080, 1010, 1070, 1020, 1060, 1030, 1050}};
    struct meas_spec s = reps_spec(&r, 9);
    double buf[64];
    struct meas_result m;
    assert_int_equal(meas_run(&s, buf, 64, &m), MEAS_OK);
    /* setup before every replicate, in order, each replicate the whole protocol */
    assert_int_equal(r.setups, 9);
    for (size_t k = 0; k < 9; k++)
        assert_int_equal(r.order[k], k);
    /* each replicate's own stop rule needs 6 samples for an interval and stops there (one tick of jitter on
     * 1000); the figure did not converge: its interval across the replicates is +-2.9 %, the target 1 % */
    assert_int_equal(m.st.n, 9 * 6);
    assert_int_equal(m.st.replicates, 9);
    assert_false(m.converged);
    /* the figure: median of the replicate medians, the interval x[1]..x[7] of the 9 sorted medians, widened by
     * the replicates' reading allowance: one iteration per region, a tick for the reading and one for the
     * overhead's (its three regions all 0) */
    assert_true(fabs(m.st.median - 1040.5) < 1e-9);
    assert_true(fabs(m.st.ci_lo - 1008.5) < 1e-9 && fabs(m.st.ci_hi - 1072.5) < 1e-9);
    assert_true(m.st.allow_lo == 2 && m.st.allow_hi == 2);
    assert_true(m.st.min == 1000 && m.st.max == 1081);
    /* a replicate's own interval: half a tick of sample scatter plus its 2-tick allowance on each side; between
     * them the medians spread by 1.4826 x 20 / 1040.5 */
    assert_true(fabs(m.st.within_ci - 2.5 / 1040.5) < 1e-12);
    assert_true(fabs(m.st.between_spread - 1.4826 * 20 / 1040.5) < 1e-9);
    /* replicates that agree within the target: the figure converges */
    r = (struct reps){.pass = {1000, 1001, 1000, 1002, 1001, 1000, 1001, 1002, 1000}};
    s = reps_spec(&r, 9);
    assert_int_equal(meas_run(&s, buf, 64, &m), MEAS_OK);
    assert_true(m.converged);
    assert_true(fabs(m.st.median - 1001) < 1.0);
    /* a setup that fails is an error, nothing partial */
    r = (struct reps){.pass = {1000, 1000, 1000}, .fail_setup_at = 3};
    s = reps_spec(&r, 3);
    assert_int_equal(meas_run(&s, buf, 64, &m), MEAS_ESETUP);
    assert_int_equal(m.st.n, 0);
    assert_int_equal(r.setups, 3);
    /* more replicates than the engine combines */
    s.replicates = MEAS_MAX_REPLICATES + 1;
    assert_int_equal(meas_run(&s, buf, 64, &m), MEAS_EINVAL);
}

/* A remote whose empty region costs 10 + k ticks in replicate k and whose pass costs 1000 + 10 + k: each
 * replicate's own overhead makes every sample 1000; replicate 0's overhead subtracted everywhere makes
 * replicate k's 1000 + k. */
static int ov_sample(void *ctx, uint64_t iters, uint64_t *ticks)
{
    struct reps *r = ctx;
    r->calls++;
    r->t += 1000;
    *ticks = 10 + r->cur + (iters ? 1000 : 0);
    return 0;
}

static void test_replicates_overhead_once(void **state)
{
    (void)state;
    struct reps r = {0};
    struct meas_spec s = reps_spec(&r, 3);
    s.sample = ov_sample;
    double buf[64];
    struct meas_result m;
    assert_int_equal(meas_run(&s, buf, 64, &m), MEAS_OK);
    size_t calls_each = r.calls;
    assert_true(m.st.min == 1000 && m.st.max == 1000);
    r = (struct reps){0};
    s.overhead_once = true;
    assert_int_equal(meas_run(&s, buf, 64, &m), MEAS_OK);
    assert_int_equal(r.calls, calls_each - 2 * 3); /* replicates 1 and 2 skip their 3 empty regions */
    assert_true(m.st.min == 1000 && m.st.max == 1002); /* replicate 0's overhead (10) subtracted in all */
    assert_true(m.overhead == 10);
    /* the reused overhead's interval (all 10) still enters every replicate's reading allowance: 1 + 0 + 1 */
    assert_true(m.st.allow_lo == 2 && m.st.allow_hi == 2);
}

static void test_replicates_budget(void **state)
{
    (void)state;
    /* The budget is the figure's: three replicates share it, so together they sample about as long as one
     * series would (every sample call advances the clock by 1000 ticks; no early stop). */
    struct reps r = {.pass = {1000, 1000, 1000}};
    struct meas_spec s = reps_spec(&r, 3);
    s.min_samples = 6;
    s.budget_ticks = 27000;
    s.target_ci = 0;
    double buf[64];
    struct meas_result m;
    assert_int_equal(meas_run(&s, buf, 64, &m), MEAS_OK);
    assert_false(m.converged);
    assert_true(m.budget_hit);
    assert_true(m.st.n >= 27 && m.st.n <= 30); /* 9000 each: 9, or 10 with the sample that crossed it */
    r = (struct reps){.pass = {1000}};
    s = reps_spec(&r, 1);
    s.min_samples = 6;
    s.budget_ticks = 27000;
    s.target_ci = 0;
    assert_int_equal(meas_run(&s, buf, 64, &m), MEAS_OK);
    assert_true(m.budget_hit);
    assert_true(m.st.n >= 27 && m.st.n <= 28);
    assert_int_equal(m.st.replicates, 0);
    /* a short budget still gives every replicate its share of min_samples (11 / 3 -> 4) */
    r = (struct reps){.pass = {1000, 1000, 1000}};
    s = reps_spec(&r, 3);
    s.budget_ticks = 3000;
    s.target_ci = 0;
    assert_int_equal(meas_run(&s, buf, 64, &m), MEAS_OK);
    assert_int_equal(m.st.n, 3 * 4);
    /* and never fewer than 3 each */
    r = (struct reps){.pass = {1000, 1000, 1000, 1000, 1000, 1000, 1000, 1000, 1000}};
    s = reps_spec(&r, 9);
    s.budget_ticks = 9;
    s.target_ci = 0;
    assert_int_equal(meas_run(&s, buf, 64, &m), MEAS_OK);
    assert_int_equal(m.st.n, 9 * 3);
}

static void test_combine(void **state)
{
    (void)state;
    struct meas_result reps[6];
    for (int k = 0; k < 6; k++) {
        double x[7] = {10 + k, 10 + k, 10 + k, 10 + k, 10 + k, 10 + k, 10 + k};
        reps[k] = (struct meas_result){.converged = true, .iters_total = 100, .elapsed = 5, .iters = 4};
        stats_compute(x, 7, &reps[k].st);
    }
    struct meas_result m;
    meas_combine(reps, 6, 0.5, &m);
    /* six replicates: the interval is their range (1 - 2 / 64 = 96.9 %) */
    assert_true(m.st.median == 12.5 && m.st.ci_lo == 10 && m.st.ci_hi == 15);
    assert_int_equal(m.st.n, 42);
    assert_true(m.converged && !m.budget_hit);
    assert_int_equal(m.iters_total, 600);
    assert_int_equal(m.elapsed, 30);
    /* converged is the figure's: its interval (10..15, +-20 %) against the target, whatever one replicate did */
    reps[3].converged = false;
    reps[3].budget_hit = true;
    meas_combine(reps, 6, 0.5, &m);
    assert_true(m.converged);
    assert_true(m.budget_hit);
    meas_combine(reps, 6, 0.1, &m);
    assert_false(m.converged);
    /* a replicate without samples is left out */
    reps[5].st = (struct stats){0};
    meas_combine(reps, 6, 0.5, &m);
    assert_int_equal(m.st.replicates, 5);
    assert_true(m.st.median == 12 && m.st.ci_lo == 10 && m.st.ci_hi == 14);
    /* one replicate (the quick profile's sweep): its own statistics, interval and stop rule, unchanged */
    double y[9] = {5, 6, 7, 8, 9, 10, 11, 12, 13};
    struct meas_result one = {.converged = true};
    stats_compute(y, 9, &one.st);
    meas_combine(&one, 1, 0.01, &m);
    assert_true(m.converged);
    assert_true(m.st.median == 9 && m.st.ci_lo == one.st.ci_lo && m.st.ci_hi == one.st.ci_hi && m.st.n == 9);
    assert_true(m.st.ci_lo < m.st.ci_hi);
    one.converged = false;
    meas_combine(&one, 1, 0.5, &m);
    assert_false(m.converged);
    /* nothing at all: nothing */
    meas_combine(reps, 0, 0.5, &m);
    assert_int_equal(m.st.n, 0);
    assert_false(m.converged);
}

/* ---- statistics the engine publishes ------------------------------------------------------------------- */

static void test_ci_ranks(void **state)
{
    (void)state;
    size_t lo, hi;
    bool exact;
    /* Below 6 samples no interval reaches 95 %: the whole sample, flagged. */
    stats_median_ci_ranks(5, &lo, &hi, &exact);
    assert_false(exact);
    assert_int_equal(lo, 0);
    assert_int_equal(hi, 4);
    /* Known order-statistic intervals (1-based ranks in the literature, e.g. Conover, Practical
     * Nonparametric Statistics, table A3): n = 6 -> (1, 6), n = 10 -> (2, 9), n = 20 -> (6, 15),
     * n = 100 -> (40, 61). Here 0-based. */
    static const size_t want[][3] = {{6, 0, 5}, {10, 1, 8}, {20, 5, 14}, {31, 9, 21}, {100, 39, 60}};
    for (size_t i = 0; i < sizeof(want) / sizeof(want[0]); i++) {
        stats_median_ci_ranks(want[i][0], &lo, &hi, &exact);
        assert_true(exact);
        assert_int_equal(lo, want[i][1]);
        assert_int_equal(hi, want[i][2]);
    }
    /* Large n: the normal approximation, symmetric, about 1.96 sqrt(n) / 2 ranks either side of the middle. */
    stats_median_ci_ranks(10000, &lo, &hi, &exact);
    assert_true(exact);
    assert_int_equal(lo + hi, 9999);
    assert_true(lo >= 4900 && lo <= 4903);
    /* Exact and approximate agree where they meet. */
    size_t lo1000, hi1000, lo1001, hi1001;
    stats_median_ci_ranks(1000, &lo1000, &hi1000, &exact);
    stats_median_ci_ranks(1001, &lo1001, &hi1001, &exact);
    assert_true(lo1001 + 1 >= lo1000 && lo1001 <= lo1000 + 1);
}

static void test_compute_spread_and_ci(void **state)
{
    (void)state;
    /* 1..11: median 6, |x - 6| = 0,1,1,2,2,...,5,5 -> MAD 3; spread 1.4826 x 3 / 6 */
    double v[11];
    for (int i = 0; i < 11; i++)
        v[i] = 11 - i; /* unsorted on purpose */
    struct stats s;
    stats_compute(v, 11, &s);
    assert_true(fabs(s.median - 6) < 1e-12);
    assert_true(fabs(s.spread - 1.4826 * 3 / 6) < 1e-12);
    /* n = 11: P(B <= 1) = 12/2048 < 2.5 % < P(B <= 2) = 67/2048 -> ranks 1 and 9: values 2 and 10 */
    assert_true(fabs(s.ci_lo - 2) < 1e-12);
    assert_true(fabs(s.ci_hi - 10) < 1e-12);
    /* even n: the MAD interpolates like the median; one wild outlier barely moves the spread */
    double w[8] = {10, 10, 10, 11, 11, 11, 12, 1000};
    stats_compute(w, 8, &s);
    assert_true(fabs(s.median - 11) < 1e-12);
    assert_true(fabs(s.spread - 1.4826 * 1 / 11) < 1e-12);
    /* equal samples: no spread, CI collapses on the value */
    double e[7] = {3, 3, 3, 3, 3, 3, 3};
    stats_compute(e, 7, &s);
    assert_true(s.spread == 0 && s.ci_lo == 3 && s.ci_hi == 3);
}

static void test_scale_and_reciprocal(void **state)
{
    (void)state;
    double v[6] = {1, 2, 3, 4, 5, 6};
    struct stats s, b;
    stats_compute(v, 6, &s);
    stats_reciprocal(&s, 60, &b);
    assert_true(fabs(b.min - 10) < 1e-12 && fabs(b.max - 60) < 1e-12);
    assert_true(fabs(b.median - 60 / 3.5) < 1e-12);
    assert_true(b.ci_lo <= b.median && b.median <= b.ci_hi);
    assert_true(b.spread == s.spread);
    stats_scale(&s, 2);
    assert_true(fabs(s.median - 7) < 1e-12 && fabs(s.ci_hi - 12) < 1e-12);
}


/* meas_allowance: the reading's tick and the overhead's interval, per region over iters x work. */
static void test_allowance_terms(void **state)
{
    (void)state;
    double lo, hi;
    /* no overhead subtracted: the reading alone, one tick (a baseline body: two differences, two ticks) */
    meas_allowance(0, false, NULL, 0, 0, 100, 2, &lo, &hi);
    assert_true(fabs(lo - 1.0 / 200) < 1e-15 && fabs(hi - 1.0 / 200) < 1e-15);
    meas_allowance(0, true, NULL, 0, 0, 100, 2, &lo, &hi);
    assert_true(fabs(lo - 2.0 / 200) < 1e-15 && fabs(hi - 2.0 / 200) < 1e-15);
    /* a coarser clock step scales the reading terms */
    meas_allowance(4, false, NULL, 0, 0, 1, 1, &lo, &hi);
    assert_true(lo == 4 && hi == 4);
    /* 15 overhead regions: the median 40, its sign-test interval x[3]..x[11] = 39..43; a true overhead up to
     * 43 + 1 makes the figure lower, down to 39 - 1 higher */
    double ov[15] = {37, 38, 39, 39, 40, 40, 40, 40, 40, 41, 41, 43, 43, 50, 60};
    meas_allowance(0, false, ov, 15, 40, 10, 1, &lo, &hi);
    assert_true(fabs(lo - (1 + 3 + 1) / 10.0) < 1e-15);
    assert_true(fabs(hi - (1 + 1 + 1) / 10.0) < 1e-15);
    /* fewer than 6 regions: no 95 % interval, the whole range */
    double few[3] = {38, 40, 45};
    meas_allowance(0, false, few, 3, 40, 1, 1, &lo, &hi);
    assert_true(lo == 1 + 5 + 1 && hi == 1 + 2 + 1);
}

/* Quantized readings (issue 19's L1 points): a region that truly lasts 1000.4 ticks mostly reads 1000 and
 * sometimes 1001. The samples' sign-test interval collapses to one quantum, [1000, 1000], and leaves out the
 * true 1000.4 (and another run's median one quantum away); the published interval holds both. */
static void test_quantized_readings(void **state)
{
    (void)state;
    static const uint64_t pattern[] = {0, 0, 0, 1, 0, 0, 0, 0, 0, 0};
    struct fake f = {.t = 1, .ov = 0, .tpi = 1000, .extra = pattern, .n_extra = 10, .backwards_at = -1};
    struct meas_spec s = body_spec(&f);
    s.overhead_reps = 0;
    s.min_sample_ticks = 0;
    s.min_samples = 20;
    s.max_samples = 20;
    double buf[64];
    struct meas_result r;
    assert_int_equal(meas_run(&s, buf, 64, &r), MEAS_OK);
    assert_true(r.st.median == 1000);
    assert_true(r.st.ci_lo <= 1000 - 1 + 1e-12 && r.st.ci_hi >= 1001 - 1e-12);
    assert_true(r.st.ci_lo <= 1000.4 && 1000.4 <= r.st.ci_hi);
    assert_true(r.st.allow_lo == 1 && r.st.allow_hi == 1);
}


/* The clock's step: estimated from regions of evenly spread lengths, and used for the TSC's readings. */
static void test_clock_step(void **state)
{
    (void)state;
    uint64_t t[200];
    /* a 1-tick clock: lengths 52.0, 52.7, 53.4, ... read to the tick fill the range */
    for (size_t i = 0; i < 200; i++)
        t[i] = 52 + (uint64_t)((double)i * 0.7);
    assert_true(meas_step_estimate(t, 200) == 1);
    /* a clock that moves by 26 (10 ns at 2.6 GHz), with the +-1 of a rate that is not a whole multiple, and two
     * interrupted regions far above */
    for (size_t i = 0; i < 200; i++) {
        uint64_t v = 52 + (uint64_t)((double)i * 0.7);
        t[i] = v / 26 * 26 + (i % 7 == 0);
    }
    t[17] = 5000;
    t[99] = 9000;
    double g = meas_step_estimate(t, 200);
    assert_true(g >= 25 && g <= 26);
    assert_true(meas_step_estimate(t, 5) == 1); /* too few */
    assert_true(meas_step_estimate(NULL, 100) == 1);

    /* the TSC (no clock given) uses the step: sample mode, constant regions of 1000 ticks, overhead 0 */
    meas_set_clock_step(26);
    assert_true(meas_clock_step() == 26);
    struct reps r = {.pass = {1000}};
    struct meas_spec sp = reps_spec(&r, 1);
    sp.clock = NULL;
    sp.setup = NULL;
    sp.min_samples = 7;
    sp.max_samples = 7;
    double buf[64];
    struct meas_result m;
    assert_int_equal(meas_run(&sp, buf, 64, &m), MEAS_OK);
    assert_true(m.st.allow_lo == 52 && m.st.allow_hi == 52); /* 26 for the reading, 26 for the overhead's */
    /* a given clock counts in its own ticks */
    sp.clock = reps_clock;
    assert_int_equal(meas_run(&sp, buf, 64, &m), MEAS_OK);
    assert_true(m.st.allow_lo == 2 && m.st.allow_hi == 2);
    meas_set_clock_step(0.5); /* below 1: 1 */
    assert_true(meas_clock_step() == 1);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_body_protocol),
        cmocka_unit_test(test_body_noisy_budget),
        cmocka_unit_test(test_body_errors),
        cmocka_unit_test(test_sample_mode),
        cmocka_unit_test(test_replicates),
        cmocka_unit_test(test_replicates_overhead_once),
        cmocka_unit_test(test_replicates_budget),
        cmocka_unit_test(test_combine),
        cmocka_unit_test(test_ci_ranks),
        cmocka_unit_test(test_compute_spread_and_ci),
        cmocka_unit_test(test_scale_and_reciprocal),
        cmocka_unit_test(test_allowance_terms),
        cmocka_unit_test(test_quantized_readings),
        cmocka_unit_test(test_clock_step),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
