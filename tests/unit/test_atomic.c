/* test_atomic.c - the atomic benchmark on the fake platform: the chain is what it claims (each locked RMW adds
 * the previous one's result), the record carries the figure with every statistics key, and a wrong
 * ticks-to-cycles conversion makes the figure suspect. No timing value is asserted. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <string.h>

#include "bench/atomic.h"
#include "bench/clock.h"
#include "measure/verdict.h"
#include "tests/unit/bw_fake_platform.h"

static void test_chain_is_dependent(void **state)
{
    (void)state;
    struct atomic_chain c = {.word = 1, .v = 1};
    atomic_chain_run(&c, 0);
    assert_true(c.word == 1 && c.v == 1);
    /* each step: v = old word, word += previous v: the Fibonacci numbers, which only a chain in which every
     * RMW used the previous one's result gives */
    uint64_t w = 1, v = 1;
    for (int iters = 1; iters <= 40; iters++) {
        atomic_chain_run(&c, 1);
        for (int k = 0; k < ATOMIC_PER_ITER; k++) {
            uint64_t old = w;
            w += v;
            v = old;
        }
        assert_true(c.word == w && c.v == v);
    }
    assert_true(w != 0 && w != v);   /* 320 steps: wrapped mod 2^64, never stuck */
}

static void run_bench(double ratio)
{
    fake_reset();
    clock_reset();
    ledger_reset();
    FAKE.cfg.quick = true;
    FAKE.cfg.time_budget_ms = 1;
    FAKE.ratio = ratio;
    bench_atomic();
}

static void test_record_carries_the_figure(void **state)
{
    (void)state;
    run_bench(1.0);
    assert_int_equal(fake_count("atomic"), 1);
    const char *r = fake_find("atomic", NULL, 0);
    const char *keys[] = {"\"figure\":\"atomic_rmw\"", "\"unit\":\"cycles\"", "\"median\":", "\"p10\":", "\"p90\":",
                          "\"min\":", "\"max\":", "\"n\":", "\"spread\":", "\"ci_lo\":", "\"ci_hi\":",
                          "\"converged\":", "\"quality\":", "\"ns\":", "\"tsc\":",
                          "\"cycles_method\":\"core_tsc_ratio:", "\"add_cycles\":", "\"instruction\":\"lock xadd",
                          "\"iters_per_sample\":", "\"method\":"};
    for (size_t i = 0; i < sizeof(keys) / sizeof(keys[0]); i++)
        assert_non_null(strstr(r, keys[i]));
    assert_null(strstr(r, "\"median\":null"));
    assert_null(strstr(r, "\"add_cycles\":null"));
    unsigned n = 0;
    assert_int_equal(sscanf(strstr(r, "\"n\":"), "\"n\":%u", &n), 1);
    assert_true(n >= 7);   /* the quick profile's minimum */
    const struct ledger_entry *e = ledger_find("atomic_rmw");
    assert_non_null(e);
    assert_string_equal(e->unit, "cycles");
    assert_true(e->median > 0);
    assert_non_null(fake_text_find("atomic_rmw"));
}

static void test_wrong_conversion_is_suspect(void **state)
{
    (void)state;
    /* 50 core cycles per TSC tick: the add chain then reads tens of cycles per add, not 1 */
    run_bench(50.0);
    const char *r = fake_find("atomic", "\"quality\":\"suspect\"", 0);
    assert_non_null(r);
    assert_non_null(strstr(r, "register add chain ran at"));
    assert_int_equal(ledger_find("atomic_rmw")->q, QUALITY_SUSPECT);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_chain_is_dependent),
        cmocka_unit_test(test_record_carries_the_figure),
        cmocka_unit_test(test_wrong_conversion_is_suspect),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
