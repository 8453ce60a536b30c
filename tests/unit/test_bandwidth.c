/* test_bandwidth.c - the bandwidth benchmark's pure helpers (size sweep, CPU order for scaling, thread
 * counts, per-thread working sets, levels, aggregation) and its records against a fake platform: structure,
 * keys, units, series, NUMA pairs and the SMBIOS peak. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include "bench/bandwidth.h"
#include "bench/cycle_accounting.h"
#include "tests/unit/bw_fake_platform.h"

static void test_sweep_sizes(void **state)
{
    (void)state;
    uint64_t s[64];
    size_t n = bw_sweep_sizes(KiB(8), MiB(1), 2, s, 64);
    assert_true(s[0] == KiB(8) && s[1] == KiB(12) && s[2] == KiB(16));
    assert_true(s[n - 1] == MiB(1));
    assert_int_equal(n, 15); /* 8K..512K x {1, 1.5} = 14, then 1 MiB */
    for (size_t i = 1; i < n; i++)
        assert_true(s[i] > s[i - 1] && s[i] % KiB(4) == 0);
    /* the top is included even off the grid */
    n = bw_sweep_sizes(KiB(16), KiB(100), 1, s, 64);
    assert_true(n == 4 && s[0] == KiB(16) && s[2] == KiB(64) && s[3] == KiB(100));
    /* four per octave */
    n = bw_sweep_sizes(KiB(64), KiB(128), 4, s, 64);
    assert_true(n == 5 && s[1] == KiB(80) && s[2] == KiB(96) && s[3] == KiB(112) && s[4] == KiB(128));
    /* lo not a power of two: starts at lo's octave, nothing below lo */
    n = bw_sweep_sizes(KiB(20), KiB(64), 2, s, 64);
    assert_true(s[0] == KiB(24));
    /* capped, empty, tiny */
    assert_int_equal(bw_sweep_sizes(KiB(8), GiB(1), 2, s, 3), 3);
    assert_int_equal(bw_sweep_sizes(MiB(2), MiB(1), 2, s, 64), 0);
    assert_int_equal(bw_sweep_sizes(0, 100, 2, s, 64), 0);
    n = bw_sweep_sizes(0, KiB(4), 2, s, 64);
    assert_true(n == 1 && s[0] == KiB(4));
}

static void test_cpu_order(void **state)
{
    (void)state;
    /* 2 packages x 2 cores x 2 threads, enumerated package by package, thread siblings adjacent */
    struct plat_cpu c[8];
    for (uint32_t i = 0; i < 8; i++)
        c[i] = (struct plat_cpu){.id = i, .apic_id = i, .package = i / 4, .core = (i / 2) % 2, .smt = i % 2,
                                 .node = (int)(i / 4)};
    uint32_t o[8];
    /* package 0: CPU 0, then the other core (2), then the siblings (1, 3) */
    assert_int_equal(bw_order_cpus(c, 8, 0, true, o), 4);
    assert_true(o[0] == 0 && o[1] == 2 && o[2] == 1 && o[3] == 3);
    /* all: alternate packages core by core, then the siblings */
    assert_int_equal(bw_order_cpus(c, 8, 0, false, o), 8);
    assert_true(o[0] == 0 && o[1] == 4 && o[2] == 2 && o[3] == 6);
    for (int i = 4; i < 8; i++)
        assert_true(c[o[i]].smt == 1);
    /* starting elsewhere */
    assert_int_equal(bw_order_cpus(c, 8, 5, true, o), 4);
    assert_true(o[0] == 5 && c[o[1]].package == 1 && c[o[1]].core == 1 && c[o[1]].smt == 0); /* core 0 taken */
    /* one package without SMT: identity order */
    struct plat_cpu d[3] = {{.id = 0, .core = 0}, {.id = 1, .core = 1}, {.id = 2, .core = 2}};
    assert_int_equal(bw_order_cpus(d, 3, 0, false, o), 3);
    assert_true(o[0] == 0 && o[1] == 1 && o[2] == 2);
    assert_int_equal(bw_order_cpus(d, 3, 3, true, o), 0);
    assert_int_equal(bw_order_cpus(d, 0, 0, true, o), 0);
}

static void test_counts_and_sizes(void **state)
{
    (void)state;
    uint32_t t[64];
    assert_int_equal(bw_thread_counts(6, false, t, 64), 4);
    assert_true(t[0] == 1 && t[1] == 2 && t[2] == 4 && t[3] == 6);
    assert_int_equal(bw_thread_counts(8, false, t, 64), 4);
    assert_true(t[3] == 8);
    assert_int_equal(bw_thread_counts(5, true, t, 64), 5);
    assert_true(t[4] == 5);
    assert_int_equal(bw_thread_counts(1, false, t, 64), 1);
    assert_int_equal(bw_thread_counts(0, false, t, 64), 0);
    assert_int_equal(bw_thread_counts(100, true, t, 10), 10);

    assert_true(bw_dram_ws_per_thread(MiB(32), 1, MiB(8)) == MiB(32));
    assert_true(bw_dram_ws_per_thread(MiB(32), 2, MiB(8)) == MiB(16));
    assert_true(bw_dram_ws_per_thread(MiB(32), 8, MiB(8)) == MiB(8)); /* the floor */
    assert_true(bw_dram_ws_per_thread(MiB(32), 3, MiB(1)) % KiB(4) == 0);
    assert_true(bw_dram_ws_per_thread(MiB(32), 0, MiB(1)) == MiB(32));

    assert_string_equal(bw_level(KiB(32), KiB(32), KiB(256), MiB(8)), "L1");
    assert_string_equal(bw_level(KiB(33), KiB(32), KiB(256), MiB(8)), "L2");
    assert_string_equal(bw_level(MiB(8), KiB(32), KiB(256), MiB(8)), "L3");
    assert_string_equal(bw_level(MiB(9), KiB(32), KiB(256), MiB(8)), "memory");

    uint64_t bytes[3] = {1000, 1000, 2000}, ticks[3] = {100, 200, 50};
    assert_true(bw_aggregate(bytes, ticks, 3, 1000) == 4000.0 * 1000 / 200); /* the slowest thread's time */
    ticks[1] = 0;
    assert_true(bw_aggregate(bytes, ticks, 3, 1000) == 0);
    assert_true(bw_aggregate(bytes, ticks, 0, 1000) == 0);
}

static void setup_machine(uint32_t ncpus, uint32_t nodes)
{
    fake_reset();
    FAKE.cfg.quick = true;
    FAKE.cfg.time_budget_ms = 1;
    FAKE.ncpus = ncpus;
    FAKE.nodes = nodes;
    memset(&FAKE.cpu, 0, sizeof(FAKE.cpu));
    static const struct cpu_cache caches[] = {
        {.level = 1, .type = CPU_CACHE_DATA, .bytes = KiB(32)},
        {.level = 1, .type = CPU_CACHE_INSTRUCTION, .bytes = KiB(32)},
        {.level = 2, .type = CPU_CACHE_UNIFIED, .bytes = KiB(256)},
        {.level = 3, .type = CPU_CACHE_UNIFIED, .bytes = MiB(2)},
    };
    memcpy(FAKE.cpu.caches, caches, sizeof(caches));
    FAKE.cpu.n_caches = 4;
    __builtin_cpu_init();
    FAKE.cpu.feat.avx = FAKE.cpu.feat.avx2 = __builtin_cpu_supports("avx2");
    ca_set_counter_hook(NULL, "test: no PMU");
}

/* Every bandwidth record has the documented keys with sane values. */
static void check_bandwidth_records(size_t *n_out)
{
    size_t n = 0;
    for (size_t i = 0; i < FAKE.nrec; i++) {
        const char *r = FAKE.rec[i];
        if (strncmp(r, "{\"type\":\"bandwidth\",", 20))
            continue;
        n++;
        static const char *keys[] = {"kernel", "isa", "bytes", "threads", "node_from", "node_to", "unit",
                                     "median", "p10", "p90", "spread", "ci_lo", "ci_hi", "series", "level", "n",
                                     "method"};
        for (size_t k = 0; k < sizeof(keys) / sizeof(keys[0]); k++) {
            char key[40];
            snprintf(key, sizeof(key), "\"%s\":", keys[k]);
            assert_non_null(strstr(r, key));
        }
        assert_non_null(strstr(r, "\"unit\":\"bytes_per_s\""));
        const char *v = strstr(r, "\"median\":") + 9;
        double bw = strtod(v, NULL);
        assert_true(isfinite(bw) && bw > 0);
    }
    *n_out = n;
}

static void test_bench_one_cpu(void **state)
{
    (void)state;
    setup_machine(1, 1);
    bandwidth_set_smbios(NULL, 0, NULL);
    bench_bandwidth();
    size_t n;
    check_bandwidth_records(&n);
    size_t isas = FAKE.cpu.feat.avx2 ? 2 : 1;
    /* quick sweep: 4 sizes x 5 kernels per ISA; no scaling with one CPU */
    assert_int_equal(n, 4 * 5 * isas);
    assert_non_null(fake_find("bandwidth", "\"kernel\":\"write_nt\",\"isa\":\"sse2\"", 0));
    if (isas == 2)
        assert_non_null(fake_find("bandwidth", "\"kernel\":\"triad\",\"isa\":\"avx2\"", 0));
    assert_null(fake_find("bandwidth", "\"series\":\"scaling_package\"", 0));
    /* memory-level points carry the uncore check, unavailable here with the reason */
    const char *m = fake_find("bandwidth", "\"level\":\"memory\"", 0);
    assert_non_null(m);
    assert_non_null(strstr(m, "\"uncore\":{\"status\":\"unavailable\",\"reason\":\"test: no PMU\"}"));
    assert_null(fake_find("bandwidth", "\"level\":\"L1\",\"bytes_per_s\":0,", 0));
    /* no SMBIOS: the peak is unknown, with the best memory-level figure anyway */
    const char *p = fake_find("bandwidth_peak", NULL, 0);
    assert_non_null(p);
    assert_non_null(strstr(p, "\"status\":\"unknown\""));
    assert_non_null(strstr(p, "\"peak_bytes_per_s\":null"));
    assert_null(strstr(p, "\"achieved_bytes_per_s\":null"));
    assert_int_equal(FAKE.live_allocs, 0);
}

static void test_bench_numa_and_peak(void **state)
{
    (void)state;
    setup_machine(2, 2);
    /* one DDR4-2400 DIMM, 64-bit */
    static uint8_t t[0x5C + 2 + 4 + 2];
    memset(t, 0, sizeof(t));
    t[0] = 17, t[1] = 0x5C;
    t[0x0A] = 64;
    t[0x0C] = 0x00, t[0x0D] = 0x20; /* 8192 MB */
    t[0x12] = 0x1A;
    t[0x15] = 2400 & 0xFF, t[0x16] = 2400 >> 8;
    t[0x20] = 2400 & 0xFF, t[0x21] = 2400 >> 8;
    t[0x5C + 2] = 127, t[0x5C + 3] = 4;
    bandwidth_set_smbios(t, sizeof(t), "test table");
    bench_bandwidth();
    size_t n;
    check_bandwidth_records(&n);
    /* scaling over the 2 CPUs (read, triad at 1 and 2 threads), NUMA 2x2 pairs x 2 kernels */
    assert_non_null(fake_find("bandwidth", "\"series\":\"scaling_package\",\"kernel\":\"read\"", 1));
    assert_non_null(fake_find("bandwidth", "\"threads\":2,", 0));
    for (int i = 0; i < 2; i++)
        for (int j = 0; j < 2; j++) {
            char pair[64];
            snprintf(pair, sizeof(pair), "\"node_from\":%d,\"node_to\":%d", i, j);
            assert_non_null(fake_find("bandwidth", pair, 0));
        }
    assert_non_null(fake_find("bandwidth", "\"series\":\"numa\",\"kernel\":\"triad\"", 3));
    assert_true(FAKE.started > 0); /* the second CPU really ran jobs */
    const char *p = fake_find("bandwidth_peak", NULL, 0);
    assert_non_null(strstr(p, "\"status\":\"ok\""));
    assert_non_null(strstr(p, "\"peak_bytes_per_s\":19200000000"));
    assert_non_null(strstr(p, "\"memory_type\":\"ddr4\""));
    assert_null(strstr(p, "\"fraction_of_peak\":null"));
    assert_int_equal(FAKE.live_allocs, 0);
    bandwidth_set_smbios(NULL, 0, NULL);
}

static void test_bench_respects_memory_limit(void **state)
{
    (void)state;
    setup_machine(1, 1);
    FAKE.alloc_limit = MiB(6); /* less than the quick memory-level working set */
    bench_bandwidth();
    size_t n;
    check_bandwidth_records(&n);
    assert_true(n > 0);
    for (size_t i = 0; i < FAKE.nrec; i++)
        if (!strncmp(FAKE.rec[i], "{\"type\":\"bandwidth\",", 20)) {
            const char *b = strstr(FAKE.rec[i], "\"bytes\":") + 8;
            assert_true(strtoull(b, NULL, 10) <= MiB(3));
        }
    FAKE.alloc_limit = 1ull << 30;
    assert_int_equal(FAKE.live_allocs, 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_sweep_sizes),
        cmocka_unit_test(test_cpu_order),
        cmocka_unit_test(test_counts_and_sizes),
        cmocka_unit_test(test_bench_one_cpu),
        cmocka_unit_test(test_bench_numa_and_peak),
        cmocka_unit_test(test_bench_respects_memory_limit),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
