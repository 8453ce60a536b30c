/* test_verdict.c - quality verdicts, the ledger, the one figure emitter, and cross-check records (on the fake platform). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "bench/crosscheck.h"
#include "bench/penalty.h"
#include "measure/engine.h"
#include "measure/stats.h"
#include "measure/verdict.h"
#include "tests/unit/bw_fake_platform.h"

static struct stats stats_of(const double *v, size_t n)
{
    double buf[256];
    memcpy(buf, v, n * sizeof(double));
    struct stats s;
    stats_compute(buf, n, &s);
    return s;
}

/* ---- verdicts from a figure's own statistics ------------------------------------------------------------ */

static void test_ok_and_noisy(void **state)
{
    (void)state;
    struct verdict v;
    /* 11 samples within +-0.2 %: CI well inside 1 % */
    double tight[11] = {100, 100.1, 99.9, 100.2, 99.8, 100, 100.1, 99.9, 100, 100.05, 99.95};
    struct stats s = stats_of(tight, 11);
    verdict_from_stats(&v, &s, true, MEAS_CI_TARGET_FULL, 7);
    assert_int_equal(v.q, QUALITY_OK);
    assert_string_equal(v.reason, "");
    /* noisy: the same count of samples spread over +-20 % */
    double wide[11] = {80, 120, 90, 110, 100, 85, 115, 95, 105, 82, 118};
    s = stats_of(wide, 11);
    verdict_from_stats(&v, &s, false, MEAS_CI_TARGET_FULL, 7);
    assert_int_equal(v.q, QUALITY_NOISY);
    assert_non_null(strstr(v.reason, "target is +-1 %"));
    /* the quick target accepts what full does not */
    double mid[11] = {100, 102, 98, 101, 99, 100, 102, 98, 101, 99, 100};
    s = stats_of(mid, 11);
    verdict_from_stats(&v, &s, true, MEAS_CI_TARGET_FULL, 7);
    assert_int_equal(v.q, QUALITY_NOISY);
    verdict_from_stats(&v, &s, true, MEAS_CI_TARGET_QUICK, 7);
    assert_int_equal(v.q, QUALITY_OK);
    /* ok needs the stop rule to have converged, and the profile's minimum n */
    s = stats_of(tight, 11);
    verdict_from_stats(&v, &s, false, MEAS_CI_TARGET_FULL, 11);
    assert_int_equal(v.q, QUALITY_NOISY);
    assert_true(v.reason[0] != 0 && strstr(v.reason, "before its CI target") != NULL);
    verdict_from_stats(&v, &s, true, MEAS_CI_TARGET_FULL, 12);
    assert_int_equal(v.q, QUALITY_NOISY);
    assert_non_null(strstr(v.reason, "11 samples: the profile's minimum is 12"));
    /* too few samples for an interval, however tight */
    s = stats_of(tight, 5);
    verdict_from_stats(&v, &s, false, MEAS_CI_TARGET_QUICK, 7);
    assert_int_equal(v.q, QUALITY_NOISY);
    assert_non_null(strstr(v.reason, "too few"));
    /* nothing measured */
    verdict_from_stats(&v, NULL, false, MEAS_CI_TARGET_QUICK, 7);
    assert_int_equal(v.q, QUALITY_UNAVAILABLE);
}

static void test_worsen_only_down(void **state)
{
    (void)state;
    struct verdict v = {.q = QUALITY_OK};
    verdict_worsen(&v, QUALITY_SUSPECT, "first %d", 1);
    verdict_worsen(&v, QUALITY_NOISY, "second");
    assert_int_equal(v.q, QUALITY_SUSPECT);
    assert_string_equal(v.reason, "first 1; second");
    assert_string_equal(quality_name(QUALITY_SUSPECT), "suspect");
    assert_string_equal(quality_name(QUALITY_COUNT), "unavailable");
}

/* A figure measured in replicates: the interval is across them, and 6 replicates are needed for one. */
static void test_replicate_verdicts(void **state)
{
    (void)state;
    struct verdict v;
    struct stats reps[9];
    for (int k = 0; k < 9; k++) {
        double x[11];
        for (int i = 0; i < 11; i++)
            x[i] = 100 + 0.1 * k + 0.01 * (i % 3); /* replicates 0.1 % apart, each tight */
        reps[k] = stats_of(x, 11);
    }
    struct stats s;
    stats_replicates(reps, 9, &s);
    assert_int_equal(s.replicates, 9);
    assert_int_equal(s.n, 99);
    verdict_from_stats(&v, &s, true, MEAS_CI_TARGET_FULL, 11);
    assert_int_equal(v.q, QUALITY_OK);
    /* five replicates: no 95 % interval across them, however many samples each has */
    stats_replicates(reps, 5, &s);
    verdict_from_stats(&v, &s, true, MEAS_CI_TARGET_FULL, 11);
    assert_int_equal(v.q, QUALITY_NOISY);
    assert_non_null(strstr(v.reason, "5 replicates: too few"));
    /* replicates that disagree by more than the target: noisy, although each alone is tight */
    for (int k = 0; k < 9; k++)
        stats_scale(&reps[k], 1 + 0.05 * (k % 3));
    stats_replicates(reps, 9, &s);
    assert_true(s.within_ci < 0.001 && s.between_spread > 0.01);
    verdict_from_stats(&v, &s, true, MEAS_CI_TARGET_FULL, 11);
    assert_int_equal(v.q, QUALITY_NOISY);
    assert_non_null(strstr(v.reason, "target is +-1 %"));
}

/* Derived figures take the worst verdict of the figures they come from, and are never ok from nothing. */
static void test_derived_verdicts(void **state)
{
    (void)state;
    struct verdict v;
    enum quality all_ok[3] = {QUALITY_OK, QUALITY_OK, QUALITY_OK};
    verdict_derived(&v, all_ok, 3, "latency_plateau/x");
    assert_int_equal(v.q, QUALITY_OK);
    assert_true(v.converged);
    enum quality mixed[4] = {QUALITY_OK, QUALITY_NOISY, QUALITY_OK, QUALITY_NOISY};
    verdict_derived(&v, mixed, 4, "latency_plateau/x");
    assert_int_equal(v.q, QUALITY_NOISY);
    assert_non_null(strstr(v.reason, "2 of the 4 figures it comes from not ok (worst: noisy)"));
    enum quality with_suspect[2] = {QUALITY_SUSPECT, QUALITY_NOISY};
    verdict_derived(&v, with_suspect, 2, "p");
    assert_int_equal(v.q, QUALITY_SUSPECT);
    /* a point without a value makes the figure suspect, not unavailable: the figure has a value */
    enum quality gone[2] = {QUALITY_OK, QUALITY_UNAVAILABLE};
    verdict_derived(&v, gone, 2, "p");
    assert_int_equal(v.q, QUALITY_SUSPECT);
    /* from nothing: never ok */
    verdict_derived(&v, NULL, 0, "latency_plateau/x");
    assert_int_equal(v.q, QUALITY_NOISY);
    assert_false(v.converged);
}

/* A scripted penalty: negative, inside its own uncertainty, and a clean one. */
static void test_penalty_verdicts(void **state)
{
    (void)state;
    struct verdict v;
    double neg[11] = {-6, -6.1, -5.9, -6, -6.05, -5.95, -6, -6.1, -5.9, -6, -6};
    struct stats s = stats_of(neg, 11);
    pm_penalty_verdict(&v, &s, true, MEAS_CI_TARGET_QUICK, 7);
    assert_int_equal(v.q, QUALITY_SUSPECT);
    assert_non_null(strstr(v.reason, "must be positive"));
    /* a 0.3-cycle penalty whose interval reaches below zero */
    double small[11] = {0.3, -0.5, 1.2, 0.1, 0.9, -0.2, 0.4, 0.6, -0.1, 0.3, 0.2};
    s = stats_of(small, 11);
    pm_penalty_verdict(&v, &s, true, MEAS_CI_TARGET_QUICK, 7);
    assert_int_equal(v.q, QUALITY_SUSPECT);
    assert_non_null(strstr(v.reason, "within its own uncertainty"));
    double good[11] = {7, 7.02, 6.98, 7.01, 6.99, 7, 7.02, 6.98, 7, 7.01, 6.99};
    s = stats_of(good, 11);
    pm_penalty_verdict(&v, &s, true, MEAS_CI_TARGET_QUICK, 7);
    assert_int_equal(v.q, QUALITY_OK);
    /* a difference of two medians: CI from both sides */
    struct stats a = stats_of(good, 11), b = stats_of(good, 11), d;
    pm_stats_diff(&a, &b, &d);
    assert_true(d.median == 0 && d.ci_lo < 0 && d.ci_hi > 0 && isnan(d.p10));
    pm_penalty_verdict(&v, &d, true, MEAS_CI_TARGET_QUICK, 7);
    assert_int_equal(v.q, QUALITY_SUSPECT);
}

/* ---- ledger and the figure emitter ------------------------------------------------------------------------ */

static void test_figure_json_and_ledger(void **state)
{
    (void)state;
    ledger_reset();
    char buf[2048];
    struct json j;
    json_init(&j, buf, sizeof(buf));
    json_obj_begin(&j);
    double v[7] = {10, 11, 9, 10, 10, 12, 8};
    struct stats s = stats_of(v, 7);
    struct verdict vd;
    verdict_from_stats(&vd, &s, false, MEAS_CI_TARGET_QUICK, 7);
    figure_json(&j, "data_source/L2", &s, "ns", &vd);
    json_obj_end(&j);
    assert_false(j.overflow);
    assert_non_null(strstr(buf, "\"figure\":\"data_source/L2\",\"unit\":\"ns\",\"median\":10,"));
    assert_non_null(strstr(buf, "\"n\":7,"));
    assert_non_null(strstr(buf, "\"ci_lo\":8,\"ci_hi\":12,"));
    assert_null(strstr(buf, "ci_allow")); /* no allowance: no keys */
    assert_non_null(strstr(buf, "\"converged\":false,\"quality\":\"noisy\",\"quality_reason\":\""));
    /* an allowance (a reading's step, a conversion) is stated beside the interval that holds it */
    struct stats w = s;
    stats_widen(&w, 0.5, 0.25);
    json_init(&j, buf, sizeof(buf));
    json_obj_begin(&j);
    figure_json(&j, "data_source/L2", &w, "ns", &vd);
    json_obj_end(&j);
    assert_non_null(strstr(buf, "\"ci_lo\":7.5,\"ci_hi\":12.25,\"ci_allow_lo\":0.5,\"ci_allow_hi\":0.25,"));
    const struct ledger_entry *e = ledger_find("data_source/L2");
    assert_non_null(e);
    assert_true(e->median == 10 && e->q == QUALITY_NOISY);
    /* an unavailable figure: null statistics, n 0, and the reason */
    json_init(&j, buf, sizeof(buf));
    json_obj_begin(&j);
    verdict_unavailable(&vd, "one socket");
    figure_json(&j, "data_source/remote_L3", NULL, "ns", &vd);
    json_obj_end(&j);
    assert_non_null(strstr(buf, "\"median\":null,"));
    assert_non_null(strstr(buf, "\"n\":0,"));
    assert_non_null(strstr(buf, "\"quality\":\"unavailable\",\"quality_reason\":\"one socket\""));
    size_t c[QUALITY_COUNT], dropped;
    ledger_counts(c, &dropped);
    assert_int_equal(c[QUALITY_NOISY], 1);
    assert_int_equal(c[QUALITY_UNAVAILABLE], 1);
    assert_int_equal(dropped, 0);
    assert_int_equal(ledger_final_quality("data_source/L2", QUALITY_OK, NULL), QUALITY_NOISY);
    assert_true(ledger_mark_suspect("data_source/L2", "L2 hit latency (row vs sweep)"));
    assert_false(ledger_mark_suspect("nowhere", "x"));
    ledger_counts(c, NULL);
    assert_int_equal(c[QUALITY_NOISY], 0);
    assert_int_equal(c[QUALITY_SUSPECT], 1);
    /* what a consumer reads afterwards: the final verdict and what made it so */
    const char *why = NULL;
    assert_int_equal(ledger_final_quality("data_source/L2", QUALITY_NOISY, &why), QUALITY_SUSPECT);
    assert_string_equal(why, "L2 hit latency (row vs sweep)");
    assert_int_equal(ledger_final_quality("not/in/ledger", QUALITY_NOISY, &why), QUALITY_NOISY);
    assert_null(why);
}

/* ---- cross-checks and the summary ------------------------------------------------------------------------- */

static void add_figure(const char *name, double median)
{
    double v[11];
    for (int i = 0; i < 11; i++)
        v[i] = median * (1 + 0.001 * (i % 3));
    struct stats s = stats_of(v, 11);
    ledger_add(name, "ns", &s, QUALITY_OK);
}

static void test_crosscheck_records(void **state)
{
    (void)state;
    fake_reset();
    ledger_reset();
    crosscheck_reset();
    add_figure("data_source/L3_unshared", 22);
    add_figure("cache_inferred/random/2097152/L3", 51);
    add_figure("data_source/L2", 4.7);
    add_figure("cache_inferred/random/2097152/L2", 4.4);
    /* 22 vs 51: a 2x disagreement, neither method known to be wrong: both suspect */
    assert_int_equal(crosscheck_figures("L3", "data_source/L3_unshared", "cache_inferred/random/2097152/L3",
                                        XC_TOL_LATENCY, NULL, NULL),
                     0);
    const char *r = fake_find("crosscheck", "\"quantity\":\"L3\"", 0);
    assert_non_null(r);
    assert_non_null(strstr(r, "\"agrees\":false"));
    assert_non_null(strstr(r, "\"suspect\":[\"data_source/L3_unshared\",\"cache_inferred/random/2097152/L3\"]"));
    assert_int_equal(ledger_find("data_source/L3_unshared")->q, QUALITY_SUSPECT);
    /* within 15 %: agrees, nothing marked */
    assert_int_equal(crosscheck_figures("L2", "data_source/L2", "cache_inferred/random/2097152/L2", XC_TOL_LATENCY,
                                        NULL, NULL),
                     1);
    r = fake_find("crosscheck", "\"quantity\":\"L2\"", 0);
    assert_non_null(strstr(r, "\"agrees\":true"));
    assert_non_null(strstr(r, "\"suspect\":[]"));
    assert_int_equal(ledger_find("data_source/L2")->q, QUALITY_OK);
    /* a missing side: not judged, with the reason */
    assert_int_equal(crosscheck_figures("DRAM", "numa_latency/0-0", "data_source/L2", XC_TOL_DRAM, NULL, NULL), -1);
    r = fake_find("crosscheck", "\"quantity\":\"DRAM\"", 0);
    assert_non_null(strstr(r, "\"agrees\":null,\"reason\":\"numa_latency/0-0 was not measured in this run\""));
    /* blame: only the figure known to be wrong is marked */
    add_figure("a", 100);
    add_figure("b", 150);
    struct crosscheck xc = {.quantity = "blamed", .a = "a", .b = "b", .a_value = 100, .b_value = 150, .unit = "ns",
                            .tolerance = 0.15, .blame = "a", .why = "b is the specification"};
    assert_int_equal(crosscheck_emit(&xc), 0);
    assert_int_equal(ledger_find("a")->q, QUALITY_SUSPECT);
    assert_int_equal(ledger_find("b")->q, QUALITY_OK);
    /* a third measurement that agrees with one side blames only the other */
    add_figure("row", 100);
    add_figure("plateau", 150);
    add_figure("numa", 103);
    assert_int_equal(crosscheck_figures3("three", "row", "plateau", "numa", XC_TOL_DRAM, NULL, NULL), 0);
    r = fake_find("crosscheck", "\"quantity\":\"three\"", 0);
    assert_non_null(strstr(r, "\"third\":\"numa\",\"third_value\":103"));
    assert_non_null(strstr(r, "\"suspect\":[\"plateau\"]"));
    assert_non_null(strstr(r, "agrees with row and contradicts plateau"));
    assert_int_equal(ledger_find("row")->q, QUALITY_OK);
    assert_int_equal(ledger_find("plateau")->q, QUALITY_SUSPECT);
    /* a third that agrees with neither (or is missing) leaves both blamed */
    add_figure("row2", 100);
    add_figure("plateau2", 150);
    add_figure("far", 300);
    assert_int_equal(crosscheck_figures3("three2", "row2", "plateau2", "far", XC_TOL_DRAM, NULL, NULL), 0);
    assert_int_equal(ledger_find("row2")->q, QUALITY_SUSPECT);
    assert_int_equal(ledger_find("plateau2")->q, QUALITY_SUSPECT);
    /* a check whose third a later benchmark measures waits for the end of the run: values read now, the third
     * looked up when judged (crosscheck_run_deferred); nothing is counted or marked before */
    add_figure("dram_row", 100);
    add_figure("dram_plateau", 150);
    assert_int_equal(crosscheck_figures3_later("later", "dram_row", "dram_plateau", "numa_later", XC_TOL_DRAM, NULL,
                                               NULL),
                     XC_DEFERRED);
    add_figure("dram_row", 100); /* a later record of the same name does not change what the check read */
    assert_null(fake_find("crosscheck", "\"quantity\":\"later\"", 0));
    add_figure("numa_later", 104); /* the later benchmark */
    assert_int_equal(crosscheck_run_deferred(), 1);
    r = fake_find("crosscheck", "\"quantity\":\"later\"", 0);
    assert_non_null(strstr(r, "\"third\":\"numa_later\",\"third_value\":104"));
    assert_non_null(strstr(r, "\"suspect\":[\"dram_plateau\"]"));
    assert_int_equal(ledger_find("dram_row")->q, QUALITY_OK);
    assert_int_equal(crosscheck_run_deferred(), 0); /* judged once */
    /* one side missing: written now, not judged */
    assert_int_equal(crosscheck_figures3_later("later2", "nothing", "dram_plateau", "numa_later", XC_TOL_DRAM, NULL,
                                               NULL),
                     -1);
    assert_non_null(fake_find("crosscheck", "\"quantity\":\"later2\"", 0));
    /* the summary counts the final verdicts and the checks */
    crosscheck_summary();
    r = fake_find("summary", "", 0);
    assert_non_null(r);
    char want[256];
    snprintf(want, sizeof(want), "\"figures\":15,\"ok\":8,\"noisy\":0,\"suspect\":7,\"unavailable\":0");
    assert_non_null(strstr(r, want));
    assert_non_null(strstr(r, "\"crosschecks\":8,\"crosschecks_judged\":6,\"crosschecks_agreeing\":1"));
    /* one summary line of text too */
    assert_non_null(fake_text_find("summary: 15 figures: 8 ok, 0 noisy, 7 suspect, 0 unavailable"));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_ok_and_noisy),
        cmocka_unit_test(test_worsen_only_down),
        cmocka_unit_test(test_replicate_verdicts),
        cmocka_unit_test(test_derived_verdicts),
        cmocka_unit_test(test_penalty_verdicts),
        cmocka_unit_test(test_figure_json_and_ledger),
        cmocka_unit_test(test_crosscheck_records),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
