/* test_stats.c - sorting, type-7 percentiles, mean/stddev, robust CV and the adaptive stop rule. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "measure/rand.h"
#include "measure/stats.h"

#define assert_near(a, b, eps)                                                                     \
    do {                                                                                           \
        double a_ = (a), b_ = (b);                                                                 \
        if (!(fabs(a_ - b_) <= (eps)))                                                             \
            fail_msg("%s = %.17g, expected %.17g +- %g", #a, a_, b_, (double)(eps));               \
    } while (0)

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static void test_sort_matches_reference(void **state)
{
    (void)state;
    struct rand r;
    rand_seed(&r, 1);
    static const size_t sizes[] = {0, 1, 2, 3, 4, 5, 7, 16, 31, 100, 1000, 4097};
    for (size_t s = 0; s < sizeof(sizes) / sizeof(sizes[0]); s++) {
        for (int kind = 0; kind < 5; kind++) {
            size_t n = sizes[s];
            double *v = malloc((n + 1) * sizeof(double)), *ref = malloc((n + 1) * sizeof(double));
            for (size_t i = 0; i < n; i++) {
                switch (kind) {
                case 0: v[i] = rand_double(&r) * 200 - 100; break;      /* random, negative too */
                case 1: v[i] = (double)rand_below(&r, 4); break;         /* many duplicates */
                case 2: v[i] = (double)i; break;                         /* sorted */
                case 3: v[i] = (double)(n - i); break;                   /* reversed */
                default: v[i] = i % 3 ? INFINITY * (i % 2 ? 1 : -1) : 1.5; /* infinities */
                }
            }
            memcpy(ref, v, n * sizeof(double));
            qsort(ref, n, sizeof(double), cmp_double);
            stats_sort(v, n);
            for (size_t i = 0; i < n; i++)
                assert_true(v[i] == ref[i]);
            free(v);
            free(ref);
        }
    }
    stats_sort(NULL, 5); /* tolerated */
}

static void test_sort_nan_last(void **state)
{
    (void)state;
    double v[] = {3, NAN, 1, NAN, -2, 5, NAN};
    stats_sort(v, 7);
    assert_true(v[0] == -2 && v[1] == 1 && v[2] == 3 && v[3] == 5);
    assert_true(isnan(v[4]) && isnan(v[5]) && isnan(v[6]));
}

/* Values as numpy.percentile(x, q) (linear, type 7) gives them. */
static void test_quantiles_type7(void **state)
{
    (void)state;
    const double four[] = {1, 2, 3, 4};
    assert_near(stats_quantile_sorted(four, 4, 0.5), 2.5, 1e-12);
    assert_near(stats_quantile_sorted(four, 4, 0.1), 1.3, 1e-12);
    assert_near(stats_quantile_sorted(four, 4, 0.9), 3.7, 1e-12);
    const double five[] = {10, 20, 30, 40, 50};
    assert_near(stats_quantile_sorted(five, 5, 0.5), 30, 1e-12);
    assert_near(stats_quantile_sorted(five, 5, 0.1), 14, 1e-12);
    assert_near(stats_quantile_sorted(five, 5, 0.9), 46, 1e-12);
    assert_near(stats_quantile_sorted(five, 5, 0.0), 10, 0);
    assert_near(stats_quantile_sorted(five, 5, 1.0), 50, 0);
    assert_near(stats_quantile_sorted(five, 5, -3), 10, 0); /* clamped */
    assert_near(stats_quantile_sorted(five, 5, 7), 50, 0);
    assert_near(stats_quantile_sorted(five, 5, NAN), 10, 0);
    const double one[] = {42};
    assert_near(stats_quantile_sorted(one, 1, 0.37), 42, 0);
    assert_near(stats_quantile_sorted(one, 0, 0.5), 0, 0);
    assert_near(stats_quantile_sorted(NULL, 3, 0.5), 0, 0);
}

static void test_compute_known(void **state)
{
    (void)state;
    double v[] = {9, 2, 5, 4, 4, 7, 4, 5}; /* mean 5, sum of squared deviations 32 */
    struct stats s;
    stats_compute(v, 8, &s);
    assert_int_equal(s.n, 8);
    assert_near(s.min, 2, 0);
    assert_near(s.max, 9, 0);
    assert_near(s.mean, 5, 1e-12);
    assert_near(s.median, 4.5, 1e-12);
    assert_near(s.p10, 2 + 0.7 * 2, 1e-12); /* h = 0.7 between 2 and 4 */
    assert_near(s.p90, 7 + 0.3 * 2, 1e-12); /* h = 6.3 between 7 and 9 */
    assert_near(s.stddev, sqrt(32.0 / 7.0), 1e-12);
    assert_near(s.cv, sqrt(32.0 / 7.0) / 5, 1e-12);
    for (int i = 1; i < 8; i++) /* sorted in place */
        assert_true(v[i - 1] <= v[i]);
}

static void test_compute_edges(void **state)
{
    (void)state;
    struct stats s;
    memset(&s, 0x55, sizeof(s));
    stats_compute(NULL, 0, &s);
    assert_int_equal(s.n, 0);
    assert_near(s.median, 0, 0);
    assert_near(s.cv, 0, 0);

    double one[] = {7.5};
    stats_compute(one, 1, &s);
    assert_int_equal(s.n, 1);
    assert_true(s.min == 7.5 && s.p10 == 7.5 && s.median == 7.5 && s.p90 == 7.5 && s.max == 7.5);
    assert_near(s.stddev, 0, 0);
    assert_near(s.cv, 0, 0);

    /* NaNs are dropped, not averaged in. */
    double withnan[] = {NAN, 1, 3, NAN};
    stats_compute(withnan, 4, &s);
    assert_int_equal(s.n, 2);
    assert_near(s.mean, 2, 1e-12);
    assert_near(s.median, 2, 1e-12);
    double allnan[] = {NAN, NAN};
    stats_compute(allnan, 2, &s);
    assert_int_equal(s.n, 0);
    assert_near(s.mean, 0, 0);

    /* Zero mean: cv stays finite. */
    double sym[] = {-1, 1};
    stats_compute(sym, 2, &s);
    assert_near(s.cv, 0, 0);
    assert_near(s.stddev, sqrt(2.0), 1e-12);
    stats_compute(sym, 2, NULL); /* tolerated */

    /* Large offset: two-pass variance keeps precision where sum-of-squares would not. */
    double big[] = {1e9 + 1, 1e9 + 2, 1e9 + 3};
    stats_compute(big, 3, &s);
    assert_near(s.stddev, 1.0, 1e-9);
}

static void test_sqrt(void **state)
{
    (void)state;
    struct rand r;
    rand_seed(&r, 4);
    for (int i = 0; i < 20000; i++) {
        double x = ldexp(rand_double(&r) + 0.5, (int)rand_below(&r, 400) - 200);
        double want = sqrt(x);
        assert_true(fabs(stats_sqrt(x) - want) <= want * 4e-16);
    }
    assert_true(stats_sqrt(0) == 0);
    assert_true(stats_sqrt(4) == 2);
    assert_true(stats_sqrt(1e-310) > 0 && fabs(stats_sqrt(1e-310) - sqrt(1e-310)) <= sqrt(1e-310) * 1e-15);
    assert_true(isnan(stats_sqrt(-1)));
    assert_true(isnan(stats_sqrt(NAN)));
    assert_true(isinf(stats_sqrt(INFINITY)));
}

static void test_robust_cv(void **state)
{
    (void)state;
    double same[] = {5, 5, 5, 5};
    assert_near(stats_robust_cv(same, 4), 0, 0);
    /* median 3, |deviations| {2, 1, 0, 1, 97} -> MAD 1 */
    double v[] = {1, 2, 3, 4, 100};
    assert_near(stats_robust_cv(v, 5), 1.4826 / 3, 1e-12);
    /* const input is left as it was */
    assert_true(v[4] == 100 && v[0] == 1);

    /* One huge outlier: classic CV explodes, the robust one does not. */
    struct rand r;
    rand_seed(&r, 8);
    double w[101];
    for (int i = 0; i < 100; i++)
        w[i] = 100 + (rand_double(&r) - 0.5); /* uniform +-0.5: sd 0.29 */
    w[100] = 1e6;
    double rcv = stats_robust_cv(w, 101);
    assert_true(rcv > 0.001 && rcv < 0.006);
    double copy[101];
    memcpy(copy, w, sizeof(w));
    struct stats s;
    stats_compute(copy, 101, &s);
    assert_true(s.cv > 1);

    double zero_med[] = {0, 0, 0, 1, 2, -3, 0, 5};
    assert_true(isinf(stats_robust_cv(zero_med, 8)));
    assert_near(stats_robust_cv(NULL, 3), 0, 0);
}

/* Only the most recent STATS_STOP_WINDOW samples count. */
static void test_robust_cv_window(void **state)
{
    (void)state;
    size_t n = 3 * STATS_STOP_WINDOW;
    double *v = malloc(n * sizeof(double));
    struct rand r;
    rand_seed(&r, 2);
    for (size_t i = 0; i < n; i++)
        v[i] = i < n - STATS_STOP_WINDOW ? rand_double(&r) * 1000 : 10.0;
    assert_near(stats_robust_cv(v, n), 0, 0);
    assert_true(stats_robust_cv(v, n - STATS_STOP_WINDOW + 1) > 0.1);
    free(v);
}

static void test_ci_rel_halfwidth(void **state)
{
    (void)state;
    /* n = 10: ranks 1 and 8 of 1..10 -> (9 - 2) / 2 / 5.5 */
    double v[10] = {10, 9, 8, 7, 6, 5, 4, 3, 2, 1};
    assert_near(stats_ci_rel_halfwidth(v, 10), 3.5 / 5.5, 1e-12);
    assert_true(v[0] == 10); /* const input */
    assert_true(isinf(stats_ci_rel_halfwidth(v, 5)));
    double same[8] = {4, 4, 4, 4, 4, 4, 4, 4};
    assert_near(stats_ci_rel_halfwidth(same, 8), 0, 0);
    assert_true(isinf(stats_ci_rel_halfwidth(NULL, 3)));
}

static void test_should_stop(void **state)
{
    (void)state;
    double flat[50], noisy[50];
    for (int i = 0; i < 50; i++) {
        flat[i] = 10.0 + (i % 2) * 0.01; /* CI of the median 10..10.01: half-width 0.05 % */
        noisy[i] = 10.0 + (i % 5) * 2.0; /* CI half-width ~ 10 % at n = 20 */
    }
    assert_false(stats_should_stop(flat, 4, 4, 50, 0.01)); /* n < 6: no 95 % interval yet */
    assert_false(stats_should_stop(flat, 5, 5, 50, 0.01));
    assert_true(stats_should_stop(flat, 6, 5, 50, 0.01));
    assert_false(stats_should_stop(flat, 6, 7, 50, 0.01)); /* below min_n */
    assert_false(stats_should_stop(noisy, 20, 5, 50, 0.01));
    assert_true(stats_should_stop(noisy, 20, 5, 50, 0.5));
    assert_true(stats_should_stop(noisy, 50, 5, 50, 0.01));  /* max_n reached */
    assert_false(stats_should_stop(noisy, 49, 5, 0, 0.01));  /* max_n 0: no cap */
    assert_false(stats_should_stop(flat, 40, 5, 50, 0));     /* target 0: never early */
    assert_false(stats_should_stop(flat, 40, 5, 50, -1));
    assert_false(stats_should_stop(flat, 40, 5, 50, NAN));
    assert_true(stats_should_stop(flat, 3, 5, 3, 0.01));     /* max below min: max wins */
    assert_false(stats_should_stop(flat, 0, 0, 0, 0.5));     /* nothing to judge */
}


/* stats_widen and the allowance through scaling, replicates and the reciprocal. */
static void test_allowance(void **state)
{
    (void)state;
    struct stats s = {.n = 10, .median = 10, .ci_lo = 9.5, .ci_hi = 10.5};
    stats_widen(&s, 0.25, 0.5);
    assert_near(s.ci_lo, 9.25, 0);
    assert_near(s.ci_hi, 11.0, 0);
    assert_near(s.allow_lo, 0.25, 0);
    assert_near(s.allow_hi, 0.5, 0);
    stats_widen(&s, -1, NAN); /* nothing is taken away */
    assert_near(s.ci_lo, 9.25, 0);
    assert_near(s.ci_hi, 11.0, 0);
    stats_scale(&s, 2);
    assert_near(s.allow_lo, 0.5, 0);
    assert_near(s.allow_hi, 1.0, 0);
    assert_near(s.ci_lo, 18.5, 0);
    /* replicates: the interval of the medians widened by the largest allowance of any replicate, each side */
    struct stats r[9];
    for (size_t k = 0; k < 9; k++) {
        r[k] = (struct stats){.n = 6, .median = 100 + (double)k, .ci_lo = 99 + (double)k, .ci_hi = 101 + (double)k};
        stats_widen(&r[k], 0.1 * (double)k, 0.2);
    }
    struct stats c;
    stats_replicates(r, 9, &c);
    assert_near(c.median, 104, 0);
    assert_near(c.ci_lo, 101 - 0.8, 1e-12);
    assert_near(c.ci_hi, 107 + 0.2, 1e-12);
    assert_near(c.allow_lo, 0.8, 1e-12);
    assert_near(c.allow_hi, 0.2, 1e-12);
    /* the next-run interval: the whole range of 9 medians (97.06 %), each side widened by twice the allowance */
    assert_near(c.next_level, 1 - 2 * 715.0 / 48620.0, 1e-12);
    assert_near(c.next_lo, 100 - 1.6, 1e-12);
    assert_near(c.next_hi, 108 + 0.4, 1e-12);
    stats_widen(&c, 0.5, 0); /* a later allowance: the CI once, the next run's interval twice */
    assert_near(c.ci_lo, 101 - 0.8 - 0.5, 1e-12);
    assert_near(c.next_lo, 100 - 1.6 - 1.0, 1e-12);
    struct stats c2 = c;
    stats_scale(&c2, -1); /* a negative factor swaps its ends */
    assert_near(c2.next_lo, -(108 + 0.4), 1e-12);
    assert_near(c2.next_hi, -(100 - 2.6), 1e-12);
    struct stats cr;
    stats_reciprocal(&c, 1000, &cr);
    assert_near(cr.next_lo, 1000 / 108.4, 1e-12);
    assert_near(cr.next_hi, 1000 / 97.4, 1e-12);
    assert_near(cr.next_level, c.next_level, 0);
    /* one replicate: no next-run interval */
    stats_replicates(r, 1, &c2);
    assert_near(c2.next_level, 0, 0);
    /* the reciprocal: bounds swap, and the allowance is what it moves the new bounds by */
    struct stats x = {.n = 6, .median = 4, .ci_lo = 3, .ci_hi = 5, .allow_lo = 1, .allow_hi = 1};
    struct stats y;
    stats_reciprocal(&x, 20, &y);
    assert_near(y.ci_lo, 4, 1e-12);            /* 20 / 5 */
    assert_near(y.ci_hi, 20.0 / 3, 1e-12);     /* 20 / 3 */
    assert_near(y.allow_lo, 5 - 4, 1e-12);     /* 20 / 4 (the bound without it) - 20 / 5 */
    assert_near(y.allow_hi, 20.0 / 3 - 5, 1e-12);
}

/* A factor known to within +-u: interval arithmetic on the bounds. */
static void test_scale_unc(void **state)
{
    (void)state;
    struct stats s = {.n = 10, .median = 10, .p10 = 9, .p90 = 11, .ci_lo = 9.5, .ci_hi = 10.5};
    stats_scale_unc(&s, 2, 0.01);
    assert_near(s.median, 20, 0);
    assert_near(s.p10, 18, 0);
    assert_near(s.ci_lo, 9.5 * 2 * 0.99, 1e-12);
    assert_near(s.ci_hi, 10.5 * 2 * 1.01, 1e-12);
    assert_near(s.allow_lo, 9.5 * 2 * 0.01, 1e-12);
    assert_near(s.allow_hi, 10.5 * 2 * 0.01, 1e-12);
    /* a bound below 0 (a difference) moves outwards too */
    struct stats d = {.n = 10, .median = 1, .ci_lo = -1, .ci_hi = 3};
    stats_scale_unc(&d, 1, 0.1);
    assert_near(d.ci_lo, -1.1, 1e-12);
    assert_near(d.ci_hi, 3.3, 1e-12);
    /* no uncertainty: a plain scale */
    struct stats e = {.n = 10, .median = 1, .ci_lo = 0.5, .ci_hi = 2};
    stats_scale_unc(&e, 3, 0);
    assert_near(e.ci_lo, 1.5, 0);
    assert_near(e.ci_hi, 6, 0);
    assert_near(e.allow_lo + e.allow_hi, 0, 0);
    /* a next-run interval: this run's factor and the next run's own */
    struct stats f = {.n = 10, .median = 10, .ci_lo = 9.5, .ci_hi = 10.5, .replicates = 9,
                      .next_lo = 9, .next_hi = 11, .next_level = 0.97};
    stats_scale_unc(&f, 2, 0.01);
    assert_near(f.ci_lo, 9.5 * 2 * 0.99, 1e-12);
    assert_near(f.next_lo, 9 * 2 * 0.99 * 0.99, 1e-12);
    assert_near(f.next_hi, 11 * 2 * 1.01 * 1.01, 1e-12);
}

/* The next run's median: exact ranks and levels, and the level checked by simulating exchangeable runs. */
static uint64_t lcg_state = 0x9e3779b97f4a7c15ull;
static double lcg_unit(void)
{
    lcg_state = lcg_state * 6364136223846793005ull + 1442695040888963407ull;
    return (double)(lcg_state >> 11) / 9007199254740992.0;
}

static double median_sorted(double *v, size_t n)
{
    stats_sort(v, n);
    return stats_quantile_sorted(v, n, 0.5);
}

static void test_next_median_ranks(void **state)
{
    (void)state;
    size_t lo, hi;
    double lv;
    stats_next_median_ranks(9, &lo, &hi, &lv); /* the full profile's R */
    assert_int_equal(lo, 0);
    assert_int_equal(hi, 8);
    assert_near(lv, 1 - 2 * 715.0 / 48620.0, 1e-12); /* P(K = 0) = C(4,4) C(13,4) / C(18,9) */
    stats_next_median_ranks(7, &lo, &hi, &lv); /* even the whole range is below 95 % */
    assert_int_equal(lo, 0);
    assert_int_equal(hi, 6);
    assert_true(lv > 0.929 && lv < 0.931);
    stats_next_median_ranks(15, &lo, &hi, &lv); /* x[2]..x[12] would be 94.98 %: x[1]..x[13] */
    assert_int_equal(lo, 1);
    assert_int_equal(hi, 13);
    assert_true(lv > 0.985 && lv < 0.986);
    stats_next_median_ranks(31, &lo, &hi, &lv);
    assert_true(lo >= 4 && lv >= 0.95);
    stats_next_median_ranks(1, &lo, &hi, &lv);
    assert_near(lv, 0, 0);
    stats_next_median_ranks(STATS_MAX_REPLICATES + 1, &lo, &hi, &lv);
    assert_near(lv, 0, 0);
    /* the level is what exchangeable runs give: R replicates per run, two runs, the second's median inside the
     * first's interval; odd R exactly, even R (the average of two middle values) at least */
    const size_t rs[] = {5, 8, 9, 15};
    for (size_t t = 0; t < sizeof rs / sizeof rs[0]; t++) {
        size_t r = rs[t], hit = 0, trials = 100000;
        stats_next_median_ranks(r, &lo, &hi, &lv);
        double a[STATS_MAX_REPLICATES], b[STATS_MAX_REPLICATES];
        for (size_t i = 0; i < trials; i++) {
            for (size_t k = 0; k < r; k++) {
                a[k] = lcg_unit();
                b[k] = lcg_unit();
            }
            stats_sort(a, r);
            double m = median_sorted(b, r);
            hit += a[lo] <= m && m <= a[hi];
        }
        double f = (double)hit / (double)trials; /* binomial sd <= 0.16 % at 1e5 trials */
        if (r % 2)
            assert_true(f > lv - 0.006 && f < lv + 0.006);
        else
            assert_true(f > lv - 0.006);
    }
}

/* The stop rule on the published interval: the allowance counts. */
static void test_should_stop_allow(void **state)
{
    (void)state;
    double flat[8] = {100, 100, 100, 100, 100, 100, 100, 100};
    assert_near(stats_ci_rel_halfwidth_allow(flat, 8, 0.5), 0.005, 1e-15);
    assert_true(stats_should_stop_allow(flat, 8, 6, 0, 0.01, 0.5));
    assert_false(stats_should_stop_allow(flat, 8, 6, 0, 0.01, 2)); /* +-2 %: not within 1 % */
    assert_true(stats_should_stop_allow(flat, 8, 6, 8, 0.01, 2));  /* the cap still ends it */
    assert_near(stats_ci_rel_halfwidth_allow(flat, 8, 0), stats_ci_rel_halfwidth(flat, 8), 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_sort_matches_reference), cmocka_unit_test(test_sort_nan_last),
        cmocka_unit_test(test_quantiles_type7),        cmocka_unit_test(test_compute_known),
        cmocka_unit_test(test_compute_edges),          cmocka_unit_test(test_sqrt), cmocka_unit_test(test_ci_rel_halfwidth),
        cmocka_unit_test(test_robust_cv),              cmocka_unit_test(test_robust_cv_window),
        cmocka_unit_test(test_should_stop),            cmocka_unit_test(test_allowance),
        cmocka_unit_test(test_scale_unc),              cmocka_unit_test(test_should_stop_allow),
        cmocka_unit_test(test_next_median_ranks),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
