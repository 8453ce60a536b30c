/* test_snippet.c - the snippet benchmark on the fake platform: the n vs 2n arithmetic with a scripted clock, aggregates,
 * events per copy, real generated code run end to end, the guard, and the refusals. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "bench/bench.h"
#include "bench/clock.h"
#include "bench/crosscheck.h"
#include "bench/snippet.h"
#include "measure/engine.h"
#include "measure/verdict.h"
#include "tests/unit/bw_fake_platform.h"
#include "tests/unit/fake_pmu.h"

/* ---- a scripted machine: every call costs a fixed harness H plus C ticks per copy, plus a jitter ------------ */

struct script {
    uint64_t t;            /* the clock */
    double harness, per_copy;
    uint32_t big_copies, small_copies;
    const double *jitter;  /* added to the clock at each read, cycling (may be NULL) */
    size_t njitter, reads;
    uint64_t calls_big, calls_small;
};
static struct script S;

static void sc_big(void *r14)
{
    (void)r14;
    S.calls_big++;
    S.t += (uint64_t)(S.harness + S.per_copy * S.big_copies);
}

static void sc_small(void *r14)
{
    (void)r14;
    S.calls_small++;
    S.t += (uint64_t)(S.harness + S.per_copy * S.small_copies);
}

static uint64_t sc_clock(void *ctx)
{
    (void)ctx;
    /* The jitter moves the clock forward for good (a clock never goes back): it lengthens one side of a pair. */
    S.t += (uint64_t)(S.njitter ? S.jitter[S.reads % S.njitter] : 0);
    S.reads++;
    return S.t;
}

static struct snippet snippet_of(uint32_t unroll, uint32_t loop, bool differencing)
{
    struct snippet s;
    memset(&s, 0, sizeof(s));
    strcpy(s.name, "scripted");
    s.code[0] = 0x90;
    s.code_len = 1;
    s.unroll = unroll;
    s.loop = loop;
    s.warmup = 2;
    s.differencing = differencing;
    s.timeout_ms = 1000;
    return s;
}

static void setup_fake(void)
{
    fake_reset();
    ledger_reset();
    crosscheck_reset();
    clock_reset();
    fake_pmu_absent("unit test: no PMU");
    FAKE.no_watchdog = false;
    FAKE.guards = 0;
    FAKE.cfg.quick = true;
    memset(&S, 0, sizeof(S));
    S.t = 1000;
}

static void test_n_vs_2n_arithmetic(void **state)
{
    (void)state;
    setup_fake();
    /* 100 copies vs 200, a 5000-tick harness per call, 3 ticks per copy: the harness cancels exactly. */
    S.harness = 5000;
    S.per_copy = 3;
    S.small_copies = 100;
    S.big_copies = 200;
    struct snippet s = snippet_of(100, 0, true);
    struct meas_result mr;
    struct snippet_result r;
    assert_int_equal(snippet_measure(&s, sc_big, sc_small, NULL, sc_clock, NULL, &mr, &r), 0);
    assert_true(r.measured);
    assert_true(mr.st.n >= 7);
    assert_float_equal(mr.st.median, 3.0, 1e-9);
    /* the interval is the reading allowance alone: two differences per paired region, a tick each, no overhead
     * subtracted (the baseline is the overhead), over iters x 100 copies */
    assert_float_equal(mr.st.ci_lo, 3.0 - 2.0 / ((double)mr.iters * 100), 1e-12);
    assert_float_equal(mr.st.ci_hi, 3.0 + 2.0 / ((double)mr.iters * 100), 1e-12);
    assert_float_equal(r.cycles, 3.0, 1e-9);
    assert_string_equal(r.cycles_method, "scripted clock");
    /* both variants ran, equally often: warm-up, calibration and every sample pair them */
    assert_true(S.calls_big > 0);
    assert_int_equal(S.calls_big, S.calls_small);
    /* a loop multiplies the copies per call: 10 x 100 extra copies per call at 3 ticks */
    setup_fake();
    S.harness = 5000;
    S.per_copy = 3;
    S.small_copies = 1000;
    S.big_copies = 2000;
    s = snippet_of(100, 10, true);
    assert_int_equal(snippet_measure(&s, sc_big, sc_small, NULL, sc_clock, NULL, &mr, &r), 0);
    assert_float_equal(r.cycles, 3.0, 1e-9);
}

static void test_single_includes_harness(void **state)
{
    (void)state;
    setup_fake();
    /* Without differencing the harness stays in: (5000 + 100 x 3) / 100 = 53 per copy. */
    S.harness = 5000;
    S.per_copy = 3;
    S.big_copies = 100;
    struct snippet s = snippet_of(100, 0, false);
    struct meas_result mr;
    struct snippet_result r;
    assert_int_equal(snippet_measure(&s, sc_big, NULL, NULL, sc_clock, NULL, &mr, &r), 0);
    assert_float_equal(r.cycles, 53.0, 1e-6);
    assert_int_equal(S.calls_small, 0);
}

static void test_aggregate_min_vs_median(void **state)
{
    (void)state;
    /* Jitter spreads the samples: min and median differ, and the aggregate picks the one asked for. */
    static const double jit[] = {0, 0, 0, 0, 0, 0, 0, 4000, 0, 0, 0, 0, 0, 4000, 0, 2000, 0, 0, 0, 7000};
    setup_fake();
    S.harness = 5000;
    S.per_copy = 3;
    S.small_copies = 100;
    S.big_copies = 200;
    S.jitter = jit;
    S.njitter = sizeof(jit) / sizeof(jit[0]);
    struct snippet s = snippet_of(100, 0, true);
    s.aggregate = SNIPPET_AGG_MIN;
    struct meas_result mr;
    struct snippet_result r;
    assert_int_equal(snippet_measure(&s, sc_big, sc_small, NULL, sc_clock, NULL, &mr, &r), 0);
    assert_float_equal(r.cycles, mr.st.min, 1e-9);
    assert_true(mr.st.max > mr.st.min);
    assert_true(mr.st.min <= mr.st.median);
    s.aggregate = SNIPPET_AGG_MEDIAN;
    S.reads = 0;
    assert_int_equal(snippet_measure(&s, sc_big, sc_small, NULL, sc_clock, NULL, &mr, &r), 0);
    assert_float_equal(r.cycles, mr.st.median, 1e-9);
}

static void test_events_per_copy(void **state)
{
    (void)state;
    setup_fake();
    static const struct fake_pmu_event ev[] = {
        {"INSTRUCTIONS_RETIRED", 0}, {"MY_EVENT", 0}, {NULL, 0}};
    fake_pmu_counts(ev, 4);
    FAKE_PMU.table = "nhm";
    S.harness = 100;
    S.per_copy = 3;
    S.big_copies = 100;
    struct snippet s = snippet_of(100, 0, false);
    strcpy(s.events[0], "MY_EVENT");
    strcpy(s.events[1], "NOT_AN_EVENT");
    s.n_events = 2;
    struct meas_result mr;
    struct snippet_result r;
    /* The fake PMU counts per_run each time the counted function runs: scale it to the calibrated calls. */
    FAKE_PMU.events[0].per_run = 0;
    assert_int_equal(snippet_measure(&s, sc_big, NULL, NULL, sc_clock, NULL, &mr, &r), 0);
    assert_string_equal(r.instructions_method, "INSTRUCTIONS_RETIRED");
    assert_int_equal(r.n_counters, 2);
    assert_string_equal(r.counter_used[0], "MY_EVENT");
    assert_null(r.counter_used[1]);
    assert_true(isnan(r.counters[1]));
    assert_non_null(strstr(r.counters_why, "NOT_AN_EVENT: ")); /* the refused one, with the PMU's reason */
    assert_null(strstr(r.counters_why, "MY_EVENT"));
    /* counts per copy = count / (calls x copies) */
    fake_pmu_counts((const struct fake_pmu_event[]){{"INSTRUCTIONS_RETIRED", 0}, {"MY_EVENT", 0}, {NULL, 0}}, 4);
    FAKE_PMU.table = "nhm";
    uint64_t calls = mr.iters;
    FAKE_PMU.events[0].per_run = calls * 100 * 2; /* 2 instructions per copy */
    FAKE_PMU.events[1].per_run = calls * 100 / 2; /* one event every other copy */
    S.reads = 0;
    assert_int_equal(snippet_measure(&s, sc_big, NULL, NULL, sc_clock, NULL, &mr, &r), 0);
    if (mr.iters == calls) {
        assert_float_equal(r.instructions, 2.0, 1e-9);
        assert_float_equal(r.counters[0], 0.5, 1e-9);
    }
    /* absent PMU: the reason, no counts */
    setup_fake();
    S.big_copies = 100;
    S.per_copy = 3;
    assert_int_equal(snippet_measure(&s, sc_big, NULL, NULL, sc_clock, NULL, &mr, &r), 0);
    assert_true(isnan(r.instructions));
    assert_non_null(strstr(r.counters_why, "no PMU"));
}

/* ---- end to end on the fake platform: real generated code, the record, the guard -------------------------- */

static void test_bench_end_to_end(void **state)
{
    (void)state;
    setup_fake();
    char err[200];
    const char *cfg = "[snippet add_chain]\ncode = 48 01 c0\nunroll = 50\n"
                      "[snippet inc_mem]\ncode = 49 ff 06\ninit = 49 c7 06 00 00 00 00\nloop = 3\nevents = X\n";
    assert_int_equal(bench_select("snippet", err, sizeof(err)), 0);
    assert_int_equal(bench_configure(cfg, strlen(cfg), 5, "t.cfg", err, sizeof(err)), 0);
    assert_int_equal(snippet_set()->n, 2);
    bench_snippet();
    assert_int_equal(fake_count("snippet"), 2);
    const char *a = fake_find("snippet", "\"name\":\"add_chain\"", 0);
    assert_non_null(a);
    assert_non_null(strstr(a, "\"figure\":\"snippet/add_chain\""));
    assert_non_null(strstr(a, "\"code_bytes\":3,\"code\":\"4801c0\",\"init_bytes\":0,\"init\":\"\""));
    assert_non_null(strstr(a, "\"unroll\":50"));
    assert_non_null(strstr(a, "\"unit\":\"cycles\""));
    assert_non_null(strstr(a, "\"differencing\":true"));
    assert_non_null(strstr(a, "\"method\":\"n_vs_2n"));
    assert_non_null(strstr(a, "\"instructions\":null"));
    assert_null(strstr(a, "\"quality\":\"unavailable\""));
    const char *b = fake_find("snippet", "\"name\":\"inc_mem\"", 0);
    assert_non_null(b);
    assert_non_null(strstr(b, "\"loop\":3"));
    assert_non_null(strstr(b, "\"init_bytes\":7,\"init\":\"49c70600000000\""));
    assert_non_null(strstr(b, "\"counters\":{\"X\":null}"));
    assert_int_equal(FAKE.guards, 2);
    assert_null(guard_current()); /* cleared after each snippet */
    assert_int_equal(FAKE.live_allocs, 0);

    /* no watchdog (one CPU): every snippet unavailable, with the reason; the code never runs */
    setup_fake();
    FAKE.no_watchdog = true;
    bench_snippet();
    assert_int_equal(fake_count("snippet"), 2);
    a = fake_find("snippet", "\"quality\":\"unavailable\"", 1);
    assert_non_null(a);
    assert_non_null(strstr(a, "no watchdog"));
    assert_int_equal(FAKE.live_allocs, 0);
}

static void test_configure_refusals(void **state)
{
    (void)state;
    char err[200];
    /* bench=snippet without a section: a config error naming what is missing */
    assert_int_equal(bench_select("snippet", err, sizeof(err)), 0);
    assert_int_equal(bench_configure(NULL, 0, 0, "t.cfg", err, sizeof(err)), -1);
    assert_non_null(strstr(err, "bench=snippet needs at least one [snippet NAME]"));
    /* a bad section is an error even when the snippet benchmark is not selected */
    assert_int_equal(bench_select("branch", err, sizeof(err)), 0);
    assert_int_equal(bench_configure("[snippet a]\ncode = zz\n", 22, 3, "t.cfg", err, sizeof(err)), -1);
    assert_non_null(strstr(err, "t.cfg:4: code:"));
    /* bench=all does not include the snippets: with sections and bench=all nothing of theirs runs */
    setup_fake();
    assert_int_equal(bench_select("all", err, sizeof(err)), 0);
    size_t n;
    const struct bench_desc *t = bench_registry(&n);
    bool found = false;
    for (size_t i = 0; i < n; i++)
        if (!strcmp(t[i].name, "snippet"))
            found = t[i].explicit_only;
    assert_true(found);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_n_vs_2n_arithmetic),
        cmocka_unit_test(test_single_includes_harness),
        cmocka_unit_test(test_aggregate_min_vs_median),
        cmocka_unit_test(test_events_per_copy),
        cmocka_unit_test(test_bench_end_to_end),
        cmocka_unit_test(test_configure_refusals),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
