/* test_branch.c - the branch loops compute what they claim (asm LFSR = measure/rand.h's LFSR), patterns are
 * reproducible from the seed, and the pure estimators (misprediction rate, learned period, return-stack
 * depth) on synthetic curves; bench_branch's records against a fake platform. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <math.h>
#include <stdio.h>

#include "bench/branch.h"
#include "bench/cycle_accounting.h"
#include "measure/rand.h"
#include "tests/unit/bw_fake_platform.h"
#include "tests/unit/fake_pmu.h"

static void test_lfsr_loop_matches_reference(void **state)
{
    (void)state;
    struct lfsr32 ref;
    lfsr32_seed(&ref, 42);
    uint32_t s = ref.state;
    uint64_t ones = 0;
    for (int i = 0; i < 10000; i++)
        ones += lfsr32_step(&ref);
    uint64_t got = branch_lfsr_loop(&s, 1, 10000);
    assert_true(got == ones);
    assert_true(s == ref.state); /* the asm steps the same LFSR */
    assert_true(ones > 4700 && ones < 5300); /* about half the bits are ones */
    /* mask 0: the branch never takes the increment path, the LFSR still advances */
    uint32_t s2 = s;
    assert_true(branch_lfsr_loop(&s2, 0, 1000) == 0);
    for (int i = 0; i < 1000; i++)
        lfsr32_step(&ref);
    assert_true(s2 == ref.state);
    assert_true(branch_lfsr_loop(&s2, 1, 0) == 0);
    assert_true(s2 == ref.state);
}

static void test_patterns_reproducible(void **state)
{
    (void)state;
    static uint8_t a[4096], b[4096], c[4096];
    branch_pattern(a, sizeof(a), 7);
    branch_pattern(b, sizeof(b), 7);
    branch_pattern(c, sizeof(c), 8);
    assert_memory_equal(a, b, sizeof(a));
    assert_memory_not_equal(a, c, sizeof(a));
    struct lfsr32 l;
    lfsr32_seed(&l, 7);
    size_t ones = 0;
    for (size_t i = 0; i < sizeof(a); i++) {
        assert_true(a[i] == lfsr32_step(&l));
        ones += a[i];
    }
    assert_true(ones > 1800 && ones < 2300);

    /* targets: in range, all used, reproducible; a bad count gives zeros */
    static uint8_t t1[8192], t2[8192];
    branch_targets(t1, sizeof(t1), 16, 3);
    branch_targets(t2, sizeof(t2), 16, 3);
    assert_memory_equal(t1, t2, sizeof(t1));
    unsigned seen = 0;
    for (size_t i = 0; i < sizeof(t1); i++) {
        assert_true(t1[i] < 16);
        seen |= 1u << t1[i];
    }
    assert_true(seen == 0xFFFF);
    branch_targets(t1, 100, 12, 3); /* not a power of two */
    for (size_t i = 0; i < 100; i++)
        assert_true(t1[i] == 0);
    branch_targets(t1, 100, 1, 3);
    for (size_t i = 0; i < 100; i++)
        assert_true(t1[i] == 0);
}

static void test_pattern_and_indirect_loops(void **state)
{
    (void)state;
    static uint8_t pat[64];
    branch_pattern(pat, sizeof(pat), 11);
    uint64_t ones = 0;
    for (size_t i = 0; i < 64; i++)
        ones += pat[i];
    uint64_t i = 0;
    /* 10 periods of 64 */
    assert_true(branch_pattern_loop(pat, 63, &i, 640) == 10 * ones);
    assert_true(i == 640);
    /* period 4 from offset 640 (a multiple of 4) */
    uint64_t ones4 = pat[0] + pat[1] + pat[2] + pat[3];
    assert_true(branch_pattern_loop(pat, 3, &i, 8) == 2 * ones4);

    static uint8_t idx[256];
    branch_targets(idx, sizeof(idx), 64, 5);
    uint64_t want = 100;
    for (size_t k = 0; k < 300; k++)
        want += idx[k & 255];
    uint64_t j = 0;
    assert_true(branch_indirect_loop(idx, 255, &j, 100, 300) == want);
    assert_true(j == 300);
    assert_true(branch_indirect_loop(idx, 255, &j, 5, 0) == 5);
}

static void test_recursion_value(void **state)
{
    (void)state;
    /* level d adds 1 when bit (d mod 64) of sites is set, else 2 */
    uint64_t sites = 0xA5A5F00F12345678ull;
    for (uint64_t d = 0; d <= 70; d += 7) {
        uint64_t want = 0;
        for (uint64_t k = 1; k <= d; k++)
            want += ((sites >> (k & 63)) & 1) ? 1 : 2;
        assert_true(branch_recurse(d, sites) == want);
    }
}

static void test_estimators(void **state)
{
    (void)state;
    assert_true(branch_misp_estimate(30, 10, 20) == 1.0);  /* clamped */
    assert_true(branch_misp_estimate(15, 10, 20) == 0.25);
    assert_true(branch_misp_estimate(5, 10, 20) == 0.0);
    assert_true(isnan(branch_misp_estimate(15, 10, 0)));
    assert_true(isnan(branch_misp_estimate(NAN, 10, 20)));
    assert_true(isnan(branch_misp_estimate(15, 10, INFINITY)));

    unsigned per[] = {1, 2, 4, 8, 16, 32};
    double r1[] = {0, 0.01, 0.02, 0.04, 0.3, 0.5};
    assert_int_equal(branch_learned_period(per, r1, 6, 0.05), 8);
    double r2[] = {0.2, 0, 0, 0, 0, 0};
    assert_int_equal(branch_learned_period(per, r2, 6, 0.05), -1);
    double r3[] = {0, 0, NAN, 0, 0, 0};
    assert_int_equal(branch_learned_period(per, r3, 6, 0.05), 2);
    assert_int_equal(branch_learned_period(per, r1, 0, 0.05), -1);
    double r4[] = {0, 0, 0, 0, 0, 0};
    assert_int_equal(branch_learned_period(per, r4, 6, 0.05), 32);
}

static void test_rsb_estimate(void **state)
{
    (void)state;
    /* time per recursion: 20 + 6 d, plus 15 cycles per return beyond 16 entries */
    unsigned d[40];
    double t[40];
    for (unsigned i = 0; i < 40; i++) {
        d[i] = i + 1;
        t[i] = 20 + 6.0 * d[i] + (d[i] > 16 ? 15.0 * (d[i] - 16) : 0);
    }
    assert_int_equal(branch_rsb_estimate(d, t, 40, 8, 0.10), 16);
    /* 5% noise on the flat part is not a rise */
    for (unsigned i = 0; i < 40; i++)
        t[i] = (20 + 6.0 * d[i]) * (i % 2 ? 1.05 : 0.95);
    assert_int_equal(branch_rsb_estimate(d, t, 40, 8, 0.10), -1);
    /* a single spike is not a rise either */
    t[20] *= 3;
    assert_int_equal(branch_rsb_estimate(d, t, 40, 8, 0.10), -1);
    /* too few points to fit */
    assert_int_equal(branch_rsb_estimate(d, t, 2, 8, 0.10), -1);
    /* non-finite input */
    t[1] = NAN;
    assert_int_equal(branch_rsb_estimate(d, t, 40, 8, 0.10), -1);
    /* a 32-entry stack on a sparse grid */
    unsigned d2[] = {1, 2, 4, 6, 8, 12, 16, 24, 32, 40, 48, 64};
    double t2[12];
    for (unsigned i = 0; i < 12; i++)
        t2[i] = 10 + 4.0 * d2[i] + (d2[i] > 32 ? 20.0 * (d2[i] - 32) : 0);
    assert_int_equal(branch_rsb_estimate(d2, t2, 12, 8, 0.10), 32);
}

static void test_bench_branch_records(void **state)
{
    (void)state;
    fake_reset();
    FAKE.cfg.quick = true;
    FAKE.cfg.time_budget_ms = 1;
    ca_penalty_reset();
    fake_pmu_absent("test: no PMU");
    bench_branch();
    /* one penalty record, with the documented keys and the known-fraction method */
    assert_int_equal(fake_count("penalty"), 1);
    const char *p = fake_find("penalty", "\"name\":\"branch_mispredict\"", 0);
    assert_non_null(p);
    for (const char *k = "unit\0median\0ns\0spread\0n\0ci_lo\0ci_hi\0method\0reference\0"; *k; k += strlen(k) + 1) {
        char key[32];
        snprintf(key, sizeof(key), "\"%s\":", k);
        assert_non_null(strstr(p, key));
    }
    assert_non_null(strstr(p, "known_random_fraction"));
    double pen;
    assert_true(ca_penalty_get(CA_P_BRANCH, &pen)); /* handed to cycle accounting */
    /* branch records: both conditional tests, a period sweep, 7 indirect target counts x 2, the return stack, a summary */
    assert_non_null(fake_find("branch", "\"test\":\"cond_predictable\"", 0));
    assert_non_null(fake_find("branch", "\"test\":\"cond_random\"", 0));
    assert_non_null(fake_find("branch", "\"test\":\"pattern\",\"period\":2,", 0));
    assert_non_null(fake_find("branch", "\"test\":\"indirect_random\"", 6));
    assert_null(fake_find("branch", "\"test\":\"indirect_random\"", 7));
    assert_non_null(fake_find("branch", "\"test\":\"return_stack\"", 0));
    assert_non_null(fake_find("branch", "\"test\":\"summary\"", 0));
    for (size_t i = 0; i < FAKE.nrec; i++)
        if (strstr(FAKE.rec[i], "\"type\":\"branch\"") && !strstr(FAKE.rec[i], "summary")) {
            assert_non_null(strstr(FAKE.rec[i], "\"unit\":\"cycles\",\"median\":"));
            assert_non_null(strstr(FAKE.rec[i], "\"mispredict_rate\":"));
            assert_non_null(strstr(FAKE.rec[i], "\"method\":"));
            assert_null(strstr(FAKE.rec[i], "\"median\":null"));
        }
    assert_int_equal(FAKE.live_allocs, 0);
}

/* Each test counts its own kind of branch ([PAG] Table 18 on Nehalem/Westmere), names the event in its records,
 * and says so when it had to count something else or nothing. */
static const char *rec_of(const char *test, size_t k)
{
    char key[48];
    snprintf(key, sizeof(key), "\"test\":\"%s\"", test);
    const char *r = fake_find("branch", key, k);
    assert_non_null(r);
    return r;
}

static void test_bench_branch_events(void **state)
{
    (void)state;
    static const struct fake_pmu_event nhm[] = {{"BR_MISP_EXEC:COND", 3000}, {"BR_MISP_EXEC:INDIRECT_NEAR_CALL", 200},
                                                {"BR_MISP_EXEC:RETURN_NEAR", 100}, {"BR_MISP_EXEC:ANY", 9999},
                                                {"BR_MISP_RETIRED", 7}, {NULL, 0}};
    fake_reset();
    FAKE.cfg.quick = true;
    FAKE.cfg.time_budget_ms = 1;
    ca_penalty_reset();
    fake_pmu_counts(nhm, 4);
    FAKE_PMU.table = "nhm";
    bench_branch();
    static const char *const want[][2] = {{"cond_predictable", "BR_MISP_EXEC:COND"}, {"cond_random", "BR_MISP_EXEC:COND"},
                                          {"pattern", "BR_MISP_EXEC:COND"},
                                          {"indirect_random", "BR_MISP_EXEC:INDIRECT_NEAR_CALL"},
                                          {"indirect_cyclic", "BR_MISP_EXEC:INDIRECT_NEAR_CALL"},
                                          {"return_stack", "BR_MISP_EXEC:RETURN_NEAR"}};
    for (size_t i = 0; i < sizeof(want) / sizeof(want[0]); i++) {
        const char *r = rec_of(want[i][0], 0);
        char ev[80];
        snprintf(ev, sizeof(ev), "\",\"event\":\"%s\",\"cycles_method\"", want[i][1]);
        assert_non_null(strstr(r, ev)); /* counted, with no note: the first entry for nhm */
        if (i >= 2) /* (the conditional pair falls back to the known fraction when the fake counts tie) */
            assert_non_null(strstr(r, "\"method\":\"pmu\""));
    }
    const char *p = fake_find("penalty", "\"name\":\"branch_mispredict\"", 0);
    assert_non_null(p);
    assert_non_null(strstr(p, "\"event\":\"BR_MISP_EXEC:COND\""));
    assert_null(strstr(p, "event_note"));

    /* later Intel: only the architectural C5H/00H, every mispredicted branch; the records say so */
    static const struct fake_pmu_event arch[] = {{"MISPREDICTED_BRANCH_RETIRED", 3000}, {NULL, 0}};
    fake_reset();
    FAKE.cfg.quick = true;
    FAKE.cfg.time_budget_ms = 1;
    fake_pmu_counts(arch, 4);
    FAKE_PMU.table = "arch";
    bench_branch();
    assert_non_null(strstr(rec_of("cond_random", 0),
                           "\"event\":\"MISPREDICTED_BRANCH_RETIRED\",\"event_note\":\"MISPREDICTED_BRANCH_RETIRED counts "
                           "every mispredicted branch: this PMU has no conditional-only event\""));
    assert_non_null(strstr(rec_of("return_stack", 0), "this PMU has no return-only event"));
    assert_non_null(strstr(rec_of("indirect_random", 0), "this PMU has no indirect-call-only event"));

    /* Nehalem whose BR_MISP_EXEC:COND is refused: no fallback to another event, the estimate, and why */
    static const struct fake_pmu_event bare[] = {{"BR_MISP_RETIRED", 7}, {"BR_MISP_EXEC:ANY", 9999}, {NULL, 0}};
    fake_reset();
    FAKE.cfg.quick = true;
    FAKE.cfg.time_budget_ms = 1;
    fake_pmu_counts(bare, 4);
    FAKE_PMU.table = "nhm";
    bench_branch();
    const char *r = rec_of("pattern", 0);
    assert_non_null(strstr(r, "\"event\":null,\"event_note\":\"BR_MISP_EXEC:COND: unknown event (fake PMU)\""));
    assert_non_null(strstr(r, "\"method\":\"estimate: "));
    assert_non_null(strstr(rec_of("cond_random", 0), "\"method\":\"known_random_fraction\""));

    /* no PMU at all: null event and the reason */
    fake_reset();
    FAKE.cfg.quick = true;
    FAKE.cfg.time_budget_ms = 1;
    fake_pmu_absent("test: no PMU");
    bench_branch();
    assert_non_null(strstr(rec_of("return_stack", 0), "\"event\":null,\"event_note\":\"test: no PMU\""));
    assert_int_equal(FAKE.live_allocs, 0);
}

/* The loops' branches are of the kinds the lists name (the indirect test's branch is a call, so its list has
 * INDIRECT_NEAR_CALL, not INDIRECT_NON_CALL), and no list holds an event of another kind. */
static void test_branch_lists(void **state)
{
    (void)state;
    const char *const *lists[] = {branch_ev_cond, branch_ev_indirect, branch_ev_return};
    for (size_t i = 0; i < 3; i++)
        for (const char *const *c = lists[i]; *c; c++) {
            assert_null(strstr(*c, "BR_MISP_RETIRED")); /* bare: NEAR_CALL on Nehalem; not the tests' kinds */
            assert_null(strstr(*c, "INDIRECT_NON_CALL"));
            assert_null(strstr(*c, ":ANY"));
            assert_non_null(strchr(*c, '@')); /* every entry is for named PMU tables */
        }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_lfsr_loop_matches_reference),
        cmocka_unit_test(test_patterns_reproducible),
        cmocka_unit_test(test_pattern_and_indirect_loops),
        cmocka_unit_test(test_recursion_value),
        cmocka_unit_test(test_estimators),
        cmocka_unit_test(test_rsb_estimate),
        cmocka_unit_test(test_bench_branch_records),
        cmocka_unit_test(test_bench_branch_events),
        cmocka_unit_test(test_branch_lists),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
