/* test_lat_table2.c - the Table 2 rows measured in passes (docs/measurement.md "Replicates"): replicate k of every
 * row in pass k, in that row order, each replicate's lines in its own region; the passes spread over the sweep's
 * passes (lat_sweep_between / lat_table2_between). Fake platform: structure, never timing values. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "tests/unit/bw_fake_platform.h"
#include "bench/lat_table2.h"
#include "bench/lat_sweep.h"
#include "bench/lat_plan.h"
#include "bench/lat_common.h"
#include "bench/crosscheck.h"
#include "measure/verdict.h"
#include "measure/stats_json.h"
#include "tests/unit/fake_pmu.h"

/* Full profile, a 32 KiB L1, 1 MiB L2, 32 MiB L3 by CPUID, two CPUs (CPU 1 shares the L3, not the L2: the
 * helper of the other-core rows), 1 ms budgets, a small DRAM row. */
static void setup_fake(void)
{
    fake_reset();
    ledger_reset();
    crosscheck_reset();
    FAKE.cfg.quick = false;
    FAKE.cfg.time_budget_ms = 1;
    FAKE.cfg.max_bytes = MiB(2);
    FAKE.fail_page = GiB(1);
    FAKE.ncpus = 2;
    FAKE.echo = getenv("PMB_TEST_ECHO") != NULL;
    memset(&FAKE.cpu, 0, sizeof(FAKE.cpu));
    static const uint32_t kb[3] = {32, 1024, 32768};
    for (int i = 0; i < 3; i++)
        FAKE.cpu.caches[i] = (struct cpu_cache){.level = (uint8_t)(i + 1),
                                                .type = i ? CPU_CACHE_UNIFIED : CPU_CACHE_DATA,
                                                .bytes = kb[i] * 1024u};
    FAKE.cpu.n_caches = 3;
}

static void restore_fake(void)
{
    FAKE.cfg.quick = true;
    FAKE.cfg.time_budget_ms = 0;
    FAKE.cfg.max_bytes = 0;
    FAKE.fail_page = 0;
    FAKE.ncpus = 1;
}

/* The numbers of the array at "key":[ in rec; returns how many (at most max). */
static size_t rec_array(const char *rec, const char *key, double *out, size_t max)
{
    char want[64];
    snprintf(want, sizeof(want), "\"%s\":[", key);
    const char *p = rec ? strstr(rec, want) : NULL;
    if (!p)
        fail_msg("no %s in %s", key, rec ? rec : "(null)");
    p += strlen(want);
    size_t n = 0;
    while (*p && *p != ']' && n < max) {
        char *end;
        out[n++] = strtod(p, &end);
        p = *end == ',' ? end + 1 : end;
    }
    return n;
}

static uint64_t rec_uint(const char *rec, const char *key)
{
    const char *p = rec ? strstr(rec, key) : NULL;
    if (!p)
        fail_msg("no %s in %s", key, rec ? rec : "(null)");
    return strtoull(p + strlen(key), NULL, 10);
}

static const char *row_rec(const char *source)
{
    char needle[64];
    snprintf(needle, sizeof(needle), "\"source\":\"%s\"", source);
    const char *r = fake_find("data_source", needle, 0);
    if (!r)
        fail_msg("no data_source record of %s", source);
    return r;
}

/* The passes: every row measured in passes has 9 replicates; replicate k of the rows in table order, all of pass
 * k before any of pass k + 1 (replicate_ms); replicate k's lines start inside region k of the row's buffer
 * (replicate_offsets, replicate_starts), and the 9 regions are distinct. */
static void test_passes_order_and_regions(void **state)
{
    (void)state;
    setup_fake();
    lat_table2_run();
    static const char *order[] = {"L1", "L2", "L3_unshared", "L3_shared_other_core", "L3_modified_other_core"};
    enum { NR = 5, R = MEAS_REPLICATES_FULL };
    double ms[NR][R];
    for (size_t i = 0; i < NR; i++) {
        const char *rec = row_rec(order[i]);
        assert_non_null(strstr(rec, "\"status\":\"ok\""));
        assert_int_equal(rec_array(rec, "replicate_ms", ms[i], R + 1), R);
        double off[R + 1], start[R + 1];
        assert_int_equal(rec_array(rec, "replicate_offsets", off, R + 1), R);
        assert_int_equal(rec_array(rec, "replicate_starts", start, R + 1), R);
        uint64_t bytes = rec_uint(rec, "\"bytes\":");
        for (size_t k = 0; k < R; k++) {
            assert_true(start[k] >= off[k] && start[k] < off[k] + (double)bytes);
            for (size_t m = 0; m < k; m++)
                assert_true(off[m] != off[k]);
        }
    }
    for (size_t k = 0; k < R; k++)
        for (size_t i = 0; i < NR; i++) {
            if (i + 1 < NR)
                assert_true(ms[i][k] <= ms[i + 1][k]); /* the rows in table order within a pass */
            if (k + 1 < R)
                assert_true(ms[i][k] <= ms[0][k + 1]); /* pass k ends before pass k + 1 begins */
        }
    /* the DRAM row's replicates stay back to back: no passes */
    assert_null(strstr(row_rec("local_DRAM"), "replicate_ms"));
    restore_fake();
}

/* The schedule: floor(done x reps / total) passes after `done` of `total`, all of them at or past the total. */
static void test_due(void **state)
{
    (void)state;
    assert_int_equal(lat_table2_due(0, 36, 9), 0);
    assert_int_equal(lat_table2_due(3, 36, 9), 0);
    assert_int_equal(lat_table2_due(4, 36, 9), 1);
    assert_int_equal(lat_table2_due(35, 36, 9), 8);
    assert_int_equal(lat_table2_due(36, 36, 9), 9);
    assert_int_equal(lat_table2_due(40, 36, 9), 9);
    assert_int_equal(lat_table2_due(0, 0, 9), 9);
    assert_int_equal(lat_table2_due(2, 3, 1), 0);
    assert_int_equal(lat_table2_due(3, 3, 1), 1);
}

static size_t calls, last_total, bad_calls;

static void hook(size_t done, size_t total)
{
    lat_table2_between(done, total);
    calls++;
    last_total = total;
    if (lat_table2_passes_done() != lat_table2_due(done, total, MEAS_REPLICATES_FULL))
        bad_calls++;
}

/* With the sweep: the hook runs after each of the sweep's passes (series x 9), the Table 2 passes due by then
 * are done (none before a ninth of the sweep, all nine at its end), and finish measures no more. */
static void test_passes_between_the_sweeps(void **state)
{
    (void)state;
    setup_fake();
    FAKE.cfg.max_bytes = KiB(128);
    calls = bad_calls = last_total = 0;
    lat_table2_begin();
    assert_int_equal(lat_table2_passes(), MEAS_REPLICATES_FULL);
    lat_sweep_between(hook);
    lat_sweep_run();
    assert_int_equal(calls, last_total);
    assert_int_equal(last_total % MEAS_REPLICATES_FULL, 0);
    assert_true(last_total >= 2 * MEAS_REPLICATES_FULL); /* random 4 KiB and 2 MiB at least, page 4 KiB */
    assert_int_equal(bad_calls, 0);
    assert_int_equal(lat_table2_passes_done(), MEAS_REPLICATES_FULL);
    lat_table2_finish();
    assert_int_equal(lat_table2_passes_done(), MEAS_REPLICATES_FULL);
    double ms[MEAS_REPLICATES_FULL + 1];
    assert_int_equal(rec_array(row_rec("L3_unshared"), "replicate_ms", ms, MEAS_REPLICATES_FULL + 1),
                     MEAS_REPLICATES_FULL);
    restore_fake();
}

/* One replicate in the quick profile: one pass, the figure as measured (no replicate_ms beyond one). */
static void test_quick_one_pass(void **state)
{
    (void)state;
    setup_fake();
    FAKE.cfg.quick = true;
    lat_table2_run();
    double ms[4];
    assert_int_equal(rec_array(row_rec("L2"), "replicate_ms", ms, 4), 1);
    assert_non_null(strstr(row_rec("L2"), "\"status\":\"ok\""));
    restore_fake();
}

/* The DRAM row on 4 KiB pages (the fake's largest): one random chain built once, each replicate a relink of its
 * stretches of 32768 lines over the same lines (docs/latency.md "DRAM rows' replicates relink one chain"): no
 * window, no spare memory, every replicate at offset 0. */
static void test_dram_row_random_relinked(void **state)
{
    (void)state;
    setup_fake();
    FAKE.cfg.max_bytes = 0;
    FAKE.cpu.caches[2].bytes = 4u << 20; /* 4 MiB L3: the 64 MiB floor of the working set */
    lat_table2_run();
    const char *r = row_rec("local_DRAM");
    assert_non_null(strstr(r, "\"status\":\"ok\""));
    assert_non_null(strstr(r, "\"chain\":\"random\""));
    assert_non_null(strstr(r, "\"relinked\":true"));
    uint64_t bytes = rec_uint(r, "\"bytes\":");
    assert_true(bytes >= 64u << 20 && bytes % (2u << 20) == 0);
    assert_int_equal(rec_uint(r, "\"buffer_bytes\":"), bytes);
    assert_int_equal(rec_uint(r, "\"relink_segments\":"), bytes / (2u << 20));
    assert_int_equal(rec_uint(r, "\"relink_segments_used\":"), bytes / (2u << 20));
    double offs[16];
    assert_int_equal(rec_array(r, "replicate_offsets", offs, 16), 9);
    for (size_t k = 0; k < 9; k++)
        assert_true(offs[k] == 0);
    assert_non_null(strstr(r, "fresh order of the cycle's stretches"));
    restore_fake();
}

static double rec_double(const char *rec, const char *key)
{
    const char *p = rec ? strstr(rec, key) : NULL;
    if (!p)
        fail_msg("no %s in %s", key, rec ? rec : "(null)");
    return strtod(p + strlen(key), NULL);
}

/* Where load-latency PEBS is armed, a row's PEBS mean (in ns by the row's own conversion) is the third measurement
 * of the c2c check of the other-core rows (lat_c2c.c): c2c agreeing with PEBS blames only the row. */
static void test_pebs_is_the_c2c_checks_third(void **state)
{
    (void)state;
    setup_fake();
    FAKE_PMU.pebs_cycles = 1e6; /* far from the fake rows: the PEBS check itself blames each row */
    lat_table2_run();
    FAKE_PMU.pebs_cycles = 0;
    const char *row = row_rec("L3_modified_other_core");
    double ns = rec_double(row, "\"median\":"), cyc = rec_double(row, "\"cycles\":");
    assert_true(ns > 0 && cyc > 0);
    double pebs_ns = 1e6 * ns / cyc;
    assert_non_null(fake_find("crosscheck", "L3_modified_other_core latency (chase timing vs PEBS", 0));
    /* the console table, printed after the rows' checks, shows the verdict they left (the record keeps its own) */
    const char *line = fake_text_find("  L3_modified_other_core ");
    assert_non_null(line);
    assert_non_null(strstr(line, " suspect* "));
    assert_null(strstr(row, "\"quality\":\"suspect\""));
    assert_non_null(fake_text_find("(*: made suspect by a cross-check above"));
    /* c2c reads what PEBS reads: only the row is blamed */
    struct stats st = stats_derived(pebs_ns * 1.02);
    ledger_add("c2c/1-0/hitm", UNIT_NS, &st, QUALITY_OK);
    assert_int_equal(crosscheck_figures3("HITM", "c2c/1-0/hitm", "data_source/L3_modified_other_core",
                                         "pebs_latency/L3_modified_other_core.ns", XC_TOL_LATENCY, NULL, NULL),
                     0);
    const char *x = fake_find("crosscheck", "\"quantity\":\"HITM\"", 0);
    assert_non_null(x);
    assert_float_equal(rec_double(x, "\"third_value\":"), pebs_ns, 1e-6 * pebs_ns);
    assert_non_null(strstr(x, "\"suspect\":[\"data_source/L3_modified_other_core\"]"));
    assert_int_equal(ledger_find("c2c/1-0/hitm")->q, QUALITY_OK);
    /* without PEBS there is no third: both are blamed, as before */
    setup_fake();
    lat_table2_run();
    ledger_add("c2c/1-0/hitm", UNIT_NS, &st, QUALITY_OK);
    crosscheck_figures3("HITM", "c2c/1-0/hitm", "data_source/L3_modified_other_core",
                        "pebs_latency/L3_modified_other_core.ns", XC_TOL_LATENCY, NULL, NULL);
    x = fake_find("crosscheck", "\"quantity\":\"HITM\"", 0);
    assert_non_null(strstr(x, "\"third_value\":null"));
    assert_non_null(strstr(x, "\"suspect\":[\"c2c/1-0/hitm\",\"data_source/L3_modified_other_core\"]"));
    restore_fake();
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_passes_order_and_regions),
        cmocka_unit_test(test_due),
        cmocka_unit_test(test_passes_between_the_sweeps),
        cmocka_unit_test(test_quick_one_pass), cmocka_unit_test(test_dram_row_random_relinked),
        cmocka_unit_test(test_pebs_is_the_c2c_checks_third),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
