/* test_cycle_accounting.c - sum of P_i x N_i and the unaccounted remainder on synthetic counts, the penalty
 * registry, event counting through the fake PMU (candidate fallback, grouping), the record, and the penalty
 * arithmetic helpers; bench_cycle_accounting without a PMU. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <math.h>
#include <stdio.h>

#include "bench/cycle_accounting.h"
#include "bench/penalty.h"
#include "bench/crosscheck.h"
#include "measure/verdict.h"
#include "kernel/json.h"
#include "tests/unit/bw_fake_platform.h"
#include "tests/unit/fake_pmu.h"

static void test_compute(void **state)
{
    (void)state;
    struct ca_term t[] = {
        {"MEM_LOAD_RETIRED:LLC_MISS", CA_P_DRAM, 1000, 200, NULL, NULL},
        {"BR_MISP_EXEC:ANY", CA_P_BRANCH, 5000, 15, NULL, NULL},
        {"ARITH:CYCLES_DIV_BUSY", CA_P_UNIT, 7000, 1, NULL, NULL},
        {NULL, CA_P_ALIAS, 0, 5, NULL, NULL},                 /* event not counted */
        {"PARTIAL_ADDRESS_ALIAS", CA_P_ALIAS, 10, NAN, NULL, NULL}, /* penalty not calibrated */
    };
    struct ca_result r;
    assert_int_equal(ca_compute(1e6, 400000, t, 5, &r), 0);
    assert_true(r.counted_stall_cycles == 200000 + 75000 + 7000);
    assert_true(r.unaccounted_cycles == 400000 - 282000);
    assert_true(r.retiring_cycles == 600000);
    assert_int_equal(r.terms_used, 3);
    assert_int_equal(r.terms_missing, 2);

    /* the sequential model over-counts: the remainder goes negative and stays so */
    assert_int_equal(ca_compute(1e6, 100000, t, 3, &r), 0);
    assert_true(r.unaccounted_cycles == 100000 - 282000);

    assert_int_equal(ca_compute(100, 200, t, 1, &r), -1); /* stalls beyond the total */
    assert_int_equal(ca_compute(-1, 0, t, 1, &r), -1);
    assert_int_equal(ca_compute(NAN, 0, t, 1, &r), -1);
    assert_int_equal(ca_compute(10, 5, NULL, 1, &r), -1);
    assert_int_equal(ca_compute(10, 5, NULL, 0, &r), 0);
    assert_true(r.counted_stall_cycles == 0 && r.unaccounted_cycles == 5);
    /* negative counts are not terms */
    struct ca_term neg = {"X", CA_P_UNIT, -5, 1, NULL, NULL};
    assert_int_equal(ca_compute(10, 5, &neg, 1, &r), 0);
    assert_int_equal(r.terms_missing, 1);
}

static void test_penalty_registry(void **state)
{
    (void)state;
    ca_penalty_reset();
    double v;
    assert_false(ca_penalty_get(CA_P_DRAM, &v));
    assert_true(ca_penalty_get(CA_P_UNIT, &v) && v == 1.0);
    assert_int_equal(ca_penalty_set(CA_P_DRAM, 180.5, QUALITY_OK, NULL), 0);
    assert_true(ca_penalty_get(CA_P_DRAM, &v) && v == 180.5);
    assert_int_equal(ca_penalty_set(CA_P_DRAM, 190, QUALITY_NOISY, "wide"), 0); /* replaced, not added */
    assert_true(ca_penalty_get(CA_P_DRAM, &v) && v == 190);
    assert_int_equal(ca_penalty_set(CA_P_L2, NAN, QUALITY_OK, NULL), -1);
    assert_false(ca_penalty_get(CA_P_L2, &v));
    assert_int_equal(ca_penalty_set(NULL, 1, QUALITY_OK, NULL), -1);
    static char names[CA_MAX_PENALTIES][16];
    int full = 0;
    for (int i = 0; i < CA_MAX_PENALTIES; i++) {
        snprintf(names[i], sizeof(names[i]), "p%d", i);
        full |= ca_penalty_set(names[i], i, QUALITY_OK, NULL);
    }
    assert_int_equal(full, -1); /* one slot was taken by CA_P_DRAM */
    ca_penalty_reset();
    assert_false(ca_penalty_get(CA_P_DRAM, &v));
    /* A suspect penalty (negative, or inside its own uncertainty) is remembered but never used. */
    assert_int_equal(ca_penalty_set(CA_P_DTLB, -6.0, QUALITY_SUSPECT, "-6 cycles: a penalty must be positive"), 0);
    assert_false(ca_penalty_get(CA_P_DTLB, &v));
    assert_string_equal(ca_penalty_dropped(CA_P_DTLB), "suspect: -6 cycles: a penalty must be positive");
    assert_null(ca_penalty_dropped(CA_P_DRAM));
    /* measured again and fine: used again */
    assert_int_equal(ca_penalty_set(CA_P_DTLB, 7.5, QUALITY_OK, NULL), 0);
    assert_true(ca_penalty_get(CA_P_DTLB, &v) && v == 7.5);
    assert_null(ca_penalty_dropped(CA_P_DTLB));
}

/* Cycle accounting reads the final verdict: a cross-check that disagrees after penalty.c set the penalty
 * (dram_local against the Table 2 row) makes it suspect there too. */
static void test_penalty_final_verdict(void **state)
{
    (void)state;
    ca_penalty_reset();
    ledger_reset();
    crosscheck_reset();
    fake_reset();
    double v;
    struct stats s = {.n = 11, .median = 300, .ci_lo = 299, .ci_hi = 301};
    ledger_add("penalty/" CA_P_DRAM, "cycles", &s, QUALITY_OK);
    assert_int_equal(ca_penalty_set(CA_P_DRAM, 300, QUALITY_OK, NULL), 0);
    assert_true(ca_penalty_get(CA_P_DRAM, &v) && v == 300);
    /* the cross-check after it: 90 ns vs 150 ns, the penalty blamed */
    struct stats row = {.n = 11, .median = 150, .ci_lo = 149, .ci_hi = 151};
    ledger_add("data_source/local_DRAM", "ns", &row, QUALITY_OK);
    struct crosscheck xc = {.quantity = "local DRAM latency (penalty dram_local vs Table 2 row)",
                            .a = "penalty/" CA_P_DRAM, .b = "data_source/local_DRAM", .a_value = 90, .b_value = 150,
                            .unit = "ns", .tolerance = XC_TOL_DRAM, .blame = "penalty/" CA_P_DRAM};
    assert_int_equal(crosscheck_emit(&xc), 0);
    assert_false(ca_penalty_get(CA_P_DRAM, &v));
    assert_string_equal(ca_penalty_dropped(CA_P_DRAM),
                        "suspect: cross-check disagrees: local DRAM latency (penalty dram_local vs Table 2 row)");
    ledger_reset(); /* the other tests set their penalties without ledger entries */
    ca_penalty_reset();
}

/* A suspect penalty is dropped from the accounting, and the record and table say which and why. */
static void test_suspect_penalty_dropped(void **state)
{
    (void)state;
    ca_penalty_reset();
    ca_penalty_set(CA_P_DRAM, 200, QUALITY_OK, NULL);
    ca_penalty_set(CA_P_BRANCH, -3, QUALITY_SUSPECT, "-3 cycles: a penalty must be positive");
    struct ca_term t[2] = {{.event = "MEM_LOAD_RETIRED:LLC_MISS", .penalty = CA_P_DRAM, .count = 10},
                           {.event = "BR_MISP_EXEC:ANY", .penalty = CA_P_BRANCH, .count = 100}};
    for (size_t i = 0; i < 2; i++) {
        double p;
        t[i].cycles = ca_penalty_get(t[i].penalty, &p) ? p : NAN;
        t[i].dropped = ca_penalty_dropped(t[i].penalty);
    }
    struct ca_result r;
    assert_int_equal(ca_compute(10000, 5000, t, 2, &r), 0);
    assert_true(r.counted_stall_cycles == 2000); /* the branch term does not count */
    assert_int_equal(r.terms_used, 1);
    assert_int_equal(r.terms_missing, 1);
    char buf[4096];
    struct json j;
    json_init(&j, buf, sizeof(buf));
    json_obj_begin(&j);
    ca_json(&j, "unit", &r, t, 2, "STALLS", "CYCLES");
    json_close_all(&j);
    assert_non_null(strstr(buf, "\"penalty_name\":\"branch_mispredict\",\"count\":100,\"penalty\":null,"
                                "\"dropped\":\"suspect: -3 cycles: a penalty must be positive\""));
}

/* The fake PMU (tests/unit/fake_pmu.c): knows some event names, counts fixed amounts per run of the workload;
 * FAKE_PMU.table plays the model's event table, which picks the entries of each list that apply. */
static const struct fake_pmu_event fake_events[] = {
    {"UNHALTED_CORE_CYCLES", 1000000}, {"UOPS_RETIRED:STALL_CYCLES", 400000}, {"BR_MISP_EXEC:ANY", 5000},
    {"MEM_LOAD_RETIRED:LLC_MISS", 1000}, {"ARITH:CYCLES_DIV_BUSY", 7000},     {NULL, 0},
};
static uint64_t work_runs;

static void workload(void *arg)
{
    (void)arg;
    work_runs++;
}

static void fake_pmu_model(const struct fake_pmu_event *events, unsigned max_events, const char *table)
{
    fake_pmu_counts(events, max_events);
    FAKE_PMU.table = table;
}

static void test_count_through_pmu(void **state)
{
    (void)state;
    char why[320];
    struct ca_event ev[3] = {{.candidates = ca_ev_cycles}, {.candidates = ca_ev_br_misp}, {.candidates = ca_ev_unc_reads}};
    fake_pmu_absent("test: no PMU here");
    work_runs = 0;
    assert_int_equal(ca_count(ev, 3, workload, NULL, why, sizeof(why)), -1);
    assert_string_equal(why, "test: no PMU here");
    assert_string_equal(ev[1].note, "test: no PMU here"); /* every event says why it was not counted */
    assert_int_equal(work_runs, 0); /* nothing to count: the workload is not run */
    const char *w = NULL;
    assert_false(ca_can_count(&w));
    assert_string_equal(w, "test: no PMU here");

    fake_pmu_model(fake_events, 2, "nhm");
    assert_true(ca_can_count(NULL));
    /* the first applicable entry the PMU accepts is used, with no note; the uncore event is not countable and
     * its note says why */
    assert_int_equal(ca_count(ev, 3, workload, NULL, why, sizeof(why)), 2);
    assert_string_equal(ev[0].used, "UNHALTED_CORE_CYCLES");
    assert_string_equal(ev[1].used, "BR_MISP_EXEC:ANY"); /* "nhm wsm wsm_dp@" is not part of the name */
    assert_string_equal(ev[0].note, "");
    assert_string_equal(ev[1].note, "");
    assert_null(ev[2].used);
    assert_string_equal(ev[2].note, "UNC_QMC_NORMAL_READS:ANY: unknown event (fake PMU)");
    assert_true(ev[0].count == 1000000 && ev[1].count == 5000);
    assert_int_equal(FAKE_PMU.groups, 1); /* two events, one group of max_events = 2 ... */
    assert_int_equal(work_runs, 1);       /* ... around one run of the workload */

    /* a group that does not fit falls back to one event per run */
    struct ca_event e3[3] = {{.candidates = ca_ev_cycles}, {.candidates = ca_ev_stalls}, {.candidates = ca_ev_div_busy}};
    FAKE_PMU.fail_groups_over = 1;
    FAKE_PMU.groups = 0;
    work_runs = 0;
    assert_int_equal(ca_count(e3, 3, workload, NULL, why, sizeof(why)), 3);
    assert_int_equal(FAKE_PMU.groups, 3);
    assert_int_equal(work_runs, 3); /* groups {cycles, stalls} refused, then three single-event runs */
    assert_true(e3[0].count == 1000000 && e3[1].count == 400000 && e3[2].count == 7000);

    struct ca_event none = {.candidates = ca_ev_unc_writes};
    assert_int_equal(ca_count(&none, 1, workload, NULL, why, sizeof(why)), -1);
    assert_non_null(strstr(why, "none of the events"));
    FAKE_PMU.fail_groups_over = 0;
}

/* A list never falls back silently, and never to an event of another kind or another PMU family. */
static void test_fallback_is_reported(void **state)
{
    (void)state;
    char why[320];
    /* the first applicable entry refused: the next one counts, and the note says what was refused and why */
    static const struct fake_pmu_event thread_p[] = {{"CPU_CLK_UNHALTED:THREAD_P", 42}, {NULL, 0}};
    fake_pmu_model(thread_p, 2, "wsm_dp");
    struct ca_event c = {.candidates = ca_ev_cycles};
    assert_int_equal(ca_count(&c, 1, workload, NULL, why, sizeof(why)), 1);
    assert_string_equal(c.used, "CPU_CLK_UNHALTED:THREAD_P");
    assert_string_equal(c.note, "UNHALTED_CORE_CYCLES: unknown event (fake PMU)");

    /* Nehalem's bare BR_MISP_RETIRED (libpfm4 default NEAR_CALL: mispredicted calls only) is in no list: a PMU
     * that knew only it counts no mispredicted branches at all, and says so */
    static const struct fake_pmu_event bare[] = {{"BR_MISP_RETIRED", 5000}, {"BR_MISP_RETIRED:NEAR_CALL", 5000},
                                                 {"BR_MISP_RETIRED:ALL_BRANCHES", 5000}, {NULL, 0}};
    fake_pmu_model(bare, 2, "nhm");
    struct ca_event b = {.candidates = ca_ev_br_misp};
    assert_int_equal(ca_count(&b, 1, workload, NULL, why, sizeof(why)), -1);
    assert_null(b.used);
    assert_string_equal(b.note, "BR_MISP_EXEC:ANY: unknown event (fake PMU)");
    for (const char *const *l = ca_ev_br_misp; *l; l++)
        assert_null(strstr(*l, "BR_MISP_RETIRED"));

    /* another family's entry never applies: on AMD the Intel name is not even tried (no note) ... */
    static const struct fake_pmu_event both[] = {{"BR_MISP_EXEC:ANY", 1}, {"RETIRED_MISPREDICTED_BRANCH_INSTRUCTIONS", 2},
                                                 {NULL, 0}};
    fake_pmu_model(both, 2, "amd_fam10h");
    assert_int_equal(ca_count(&b, 1, workload, NULL, why, sizeof(why)), 1);
    assert_string_equal(b.used, "RETIRED_MISPREDICTED_BRANCH_INSTRUCTIONS");
    assert_string_equal(b.note, "");
    assert_true(b.count == 2);
    /* ... and an Intel PMU that refused its own event does not take the AMD one */
    fake_pmu_model(both + 1, 2, "wsm");
    assert_int_equal(ca_count(&b, 1, workload, NULL, why, sizeof(why)), -1);
    assert_string_equal(b.note, "BR_MISP_EXEC:ANY: unknown event (fake PMU)");
    /* a table no list entry names: nothing applies, and the note says so */
    fake_pmu_model(both, 2, NULL);
    assert_int_equal(ca_count(&b, 1, workload, NULL, why, sizeof(why)), -1);
    assert_string_equal(b.note, "no event of this kind is listed for this PMU (event table none)");

    /* the syntax */
    const char *spec;
    assert_true(ca_cand_applies(CA_ON("nhm wsm_dp", "X:Y"), "wsm_dp", &spec));
    assert_string_equal(spec, "X:Y");
    assert_false(ca_cand_applies(CA_ON("nhm wsm_dp", "X:Y"), "wsm", NULL)); /* whole words only */
    assert_false(ca_cand_applies(CA_ON("nhm wsm_dp", "X:Y"), "nh", NULL));
    assert_false(ca_cand_applies(CA_ON("nhm", "X"), NULL, NULL));
    assert_true(ca_cand_applies("X", NULL, &spec) && !strcmp(spec, "X"));
}

static void test_measure_and_record(void **state)
{
    (void)state;
    fake_pmu_model(fake_events, 2, "nhm");
    ca_penalty_reset();
    ca_penalty_set(CA_P_DRAM, 200, QUALITY_OK, NULL);
    ca_penalty_set(CA_P_BRANCH, 15, QUALITY_OK, NULL);
    static struct ca_account a;
    assert_int_equal(ca_measure(&a, workload, NULL), 0);
    assert_true(a.ok);
    assert_string_equal(a.cycles_event, "UNHALTED_CORE_CYCLES");
    assert_string_equal(a.stall_event, "UOPS_RETIRED:STALL_CYCLES");
    /* counted: LLC miss 1000 x 200 + mispredicts 5000 x 15 + divider busy 7000 x 1 */
    assert_true(a.r.counted_stall_cycles == 200000 + 75000 + 7000);
    assert_true(a.r.unaccounted_cycles == 400000 - 282000);
    assert_int_equal(a.r.terms_used, 3);

    char buf[8192];
    struct json j;
    json_init(&j, buf, sizeof(buf));
    json_obj_begin(&j);
    ca_account_json(&j, "unit", &a);
    json_close_all(&j);
    assert_false(j.overflow);
    assert_non_null(strstr(buf, "\"status\":\"ok\""));
    assert_non_null(strstr(buf, "\"total_cycles\":1000000"));
    assert_non_null(strstr(buf, "\"stall_cycles\":400000"));
    assert_non_null(strstr(buf, "\"retiring_cycles\":600000"));
    assert_non_null(strstr(buf, "\"counted_stall_cycles\":282000"));
    assert_non_null(strstr(buf, "\"unaccounted_cycles\":118000"));
    assert_non_null(strstr(buf, "{\"event\":\"MEM_LOAD_RETIRED:LLC_MISS\",\"penalty_name\":\"dram_local\",\"count\":1000,"
                                "\"penalty\":200,\"stall_cycles\":200000}"));
    assert_non_null(strstr(buf, "{\"event\":\"BR_MISP_EXEC:ANY\",\"penalty_name\":\"branch_mispredict\",\"count\":5000,"
                                "\"penalty\":15,\"stall_cycles\":75000}"));
    /* an event the PMU lacks: listed with null count and why; a term without a calibrated penalty: null penalty */
    assert_non_null(strstr(buf, "{\"event\":null,\"event_note\":\"MEM_LOAD_RETIRED:LLC_UNSHARED_HIT: unknown event "
                                "(fake PMU)\",\"penalty_name\":\"llc_hit\",\"count\":null,\"penalty\":null"));
    /* Westmere's store-forwarding event is not listed for Nehalem: not counted, and not refused either */
    assert_non_null(strstr(buf, "{\"event\":null,\"event_note\":\"no event of this kind is listed for this PMU (event "
                                "table nhm)\",\"penalty_name\":\"store_forward_fail_size\""));
    assert_null(strstr(buf, "cycles_event_note"));

    /* the cycles list fell back: the record names what was used and why the first choice was not */
    FAKE_PMU.events[0].name = "CPU_CLK_UNHALTED:THREAD_P";
    assert_int_equal(ca_measure(&a, workload, NULL), 0);
    json_init(&j, buf, sizeof(buf));
    json_obj_begin(&j);
    ca_account_json(&j, "unit", &a);
    json_close_all(&j);
    assert_non_null(strstr(buf, "\"cycles_event\":\"CPU_CLK_UNHALTED:THREAD_P\""));
    assert_non_null(strstr(buf, "\"cycles_event_note\":\"UNHALTED_CORE_CYCLES: unknown event (fake PMU)\""));
    FAKE_PMU.events[0].name = "UNHALTED_CORE_CYCLES";

    /* no stall event on this PMU: unavailable with the reason */
    FAKE_PMU.events[1].name = "NOT_THERE";
    assert_int_equal(ca_measure(&a, workload, NULL), -1);
    assert_false(a.ok);
    assert_string_equal(a.reason, "no stall-cycle event on this PMU (UOPS_RETIRED:STALL_CYCLES: unknown event (fake PMU))");
    FAKE_PMU.events[1].name = "UOPS_RETIRED:STALL_CYCLES";
    json_init(&j, buf, sizeof(buf));
    json_obj_begin(&j);
    ca_account_json(&j, "unit", &a);
    json_close_all(&j);
    assert_string_equal(buf, "{\"bench\":\"unit\",\"status\":\"unavailable\",\"reason\":\"no stall-cycle event on this PMU "
                             "(UOPS_RETIRED:STALL_CYCLES: unknown event (fake PMU))\"}");
}

static void test_penalty_arithmetic(void **state)
{
    (void)state;
    assert_true(pm_penalty(120, 20, 6, 1) == 20);
    assert_true(isnan(pm_penalty(120, 20, 1, 1)));   /* no more events than the baseline */
    assert_true(isnan(pm_penalty(120, 20, 0.5, 1))); /* fewer */
    assert_true(isnan(pm_penalty(NAN, 20, 6, 1)));
    assert_true(pm_penalty(10, 20, 2, 1) == -10);    /* faster with more events: reported, not hidden */
    double cv = pm_diff_cv(110, 0.01, 100, 0.01);
    assert_true(fabs(cv - sqrt(1.1 * 1.1 + 1.0) / 10) < 1e-12);
    assert_true(isinf(pm_diff_cv(5, 0.1, 5, 0.1)));
}

static void test_bench_without_pmu(void **state)
{
    (void)state;
    fake_reset();
    fake_pmu_absent("test: QEMU TCG has no PMU");
    bench_cycle_accounting();
    assert_int_equal(fake_count("cycle_accounting"), 4);
    for (size_t i = 0; i < 4; i++) {
        const char *r = fake_find("cycle_accounting", NULL, i);
        assert_non_null(strstr(r, "\"status\":\"unavailable\",\"reason\":\"test: QEMU TCG has no PMU\""));
    }
    assert_int_equal(FAKE.allocs, 0); /* nothing allocated or run without counters */
}

static void test_bench_with_fake_pmu(void **state)
{
    (void)state;
    fake_reset();
    FAKE.cfg.quick = true;
    fake_pmu_model(fake_events, 2, "nhm");
    ca_penalty_reset();
    ca_penalty_set(CA_P_BRANCH, 15, QUALITY_OK, NULL);
    bench_cycle_accounting();
    assert_int_equal(fake_count("cycle_accounting"), 4);
    assert_non_null(fake_find("cycle_accounting", "\"bench\":\"branch_random\",\"status\":\"ok\"", 0));
    assert_non_null(fake_find("cycle_accounting", "\"bench\":\"stream_triad\",\"status\":\"ok\"", 0));
    assert_int_equal(FAKE.live_allocs, 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_compute),
        cmocka_unit_test(test_penalty_registry),
        cmocka_unit_test(test_penalty_final_verdict),
        cmocka_unit_test(test_suspect_penalty_dropped),
        cmocka_unit_test(test_count_through_pmu),
        cmocka_unit_test(test_fallback_is_reported),
        cmocka_unit_test(test_measure_and_record),
        cmocka_unit_test(test_penalty_arithmetic),
        cmocka_unit_test(test_bench_without_pmu),
        cmocka_unit_test(test_bench_with_fake_pmu),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
