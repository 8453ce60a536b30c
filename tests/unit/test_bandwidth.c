/* test_bandwidth.c - the bandwidth benchmark's pure helpers (size sweep, CPU order for scaling, thread
 * counts, per-thread working sets, LLC sharing, levels with the 4x-LLC memory boundary, the best memory-level
 * figure, aggregation) and its records against a fake platform: structure, keys, units, series, NUMA pairs,
 * the SMBIOS peak, and no "memory" point below 4x the LLC. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include "bench/bandwidth.h"
#include "bench/bw_kernels.h"
#include "bench/cycle_accounting.h"
#include "tests/unit/bw_fake_platform.h"
#include "tests/unit/fake_pmu.h"

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

    /* A working set covering `bytes` for every kernel: triad's three arrays are each cut to 256 bytes, so
     * exactly 32 MiB would give it 32 MiB - 512; the next 4 KiB step is enough. */
    assert_true(bw_ws_covering(MiB(32)) == MiB(32) + KiB(4));
    assert_true(bw_ws_covering(MiB(24)) == MiB(24)); /* 8 MiB per array: exact */
    assert_true(bw_ws_covering(1) == KiB(4));
    for (uint64_t b = MiB(1); b < MiB(200); b = b * 3 / 2 + 4096 * 7) {
        uint64_t w = bw_ws_covering(b);
        assert_true(w % KiB(4) == 0 && w >= b && w <= b + KiB(8));
        for (enum bw_kernel k = 0; k < BW_KERNEL_COUNT; k++) {
            unsigned m = bw_kernel_arrays(k), cnt = (m & 1) + ((m >> 1) & 1) + ((m >> 2) & 1);
            assert_true(bw_kernel_bytes(k, bw_elems_for(w / cnt)) >= b);
        }
    }

    /* per thread: the threads that share an LLC cover the total together, for every kernel */
    assert_true(bw_dram_ws_per_thread(MiB(32), 1, MiB(8)) == MiB(32) + KiB(4));
    assert_true(bw_dram_ws_per_thread(MiB(32), 2, MiB(8)) == MiB(16) + KiB(4));
    assert_true(bw_dram_ws_per_thread(MiB(32), 8, MiB(8)) == MiB(8)); /* the floor */
    assert_true(bw_dram_ws_per_thread(MiB(32), 3, MiB(1)) % KiB(4) == 0);
    assert_true(3 * bw_kernel_bytes(BW_TRIAD, bw_elems_for(bw_dram_ws_per_thread(MiB(32), 3, MiB(1)) / 3)) >= MiB(32));
    assert_true(bw_dram_ws_per_thread(MiB(32), 0, MiB(1)) == MiB(32) + KiB(4));

    /* LLC sharing from APIC ids: shared by 2 -> pairs {0,1}, {2,3}, ... */
    uint32_t apic[4] = {0, 1, 2, 3};
    assert_int_equal(bw_llc_min_threads(apic, 4, 2), 2);
    assert_int_equal(bw_llc_min_threads(apic, 3, 2), 1); /* CPU 2 alone in its LLC */
    assert_int_equal(bw_llc_min_threads(apic, 4, 16), 4);
    assert_int_equal(bw_llc_min_threads(apic, 4, 0), 1); /* unknown: each its own */
    assert_int_equal(bw_llc_min_threads(apic, 4, 1), 1);
    assert_int_equal(bw_llc_min_threads(apic, 0, 2), 0);
    uint32_t spread[3] = {0, 8, 9}; /* shared by 8: {0}, {8, 9} */
    assert_int_equal(bw_llc_min_threads(spread, 3, 8), 1);

    /* levels: "memory" from 4x the LLC on, "llc_to_memory" between the LLC and that */
    assert_string_equal(bw_level(KiB(32), KiB(32), KiB(256), MiB(8)), "L1");
    assert_string_equal(bw_level(KiB(33), KiB(32), KiB(256), MiB(8)), "L2");
    assert_string_equal(bw_level(MiB(8), KiB(32), KiB(256), MiB(8)), "L3");
    assert_string_equal(bw_level(MiB(8) + 1, KiB(32), KiB(256), MiB(8)), "llc_to_memory");
    assert_string_equal(bw_level(MiB(12), KiB(32), KiB(256), MiB(8)), "llc_to_memory"); /* the 48 MiB on 32 MiB case */
    assert_string_equal(bw_level(MiB(32) - 1, KiB(32), KiB(256), MiB(8)), "llc_to_memory");
    assert_string_equal(bw_level(MiB(32), KiB(32), KiB(256), MiB(8)), "memory");
    assert_string_equal(bw_level(GiB(1), KiB(32), KiB(256), MiB(8)), "memory");

    /* the sweep measures copy_nt and triad_nt at the memory level only, every other kernel at every level */
    for (enum bw_kernel k = 0; k < BW_KERNEL_COUNT; k++) {
        bool nt_only_memory = k == BW_COPY_NT || k == BW_TRIAD_NT;
        assert_true(bw_sweep_measures(k, "L1") == !nt_only_memory);
        assert_true(bw_sweep_measures(k, "L3") == !nt_only_memory);
        assert_true(bw_sweep_measures(k, "llc_to_memory") == !nt_only_memory);
        assert_true(bw_sweep_measures(k, "memory"));
    }
    assert_true(bw_sweep_measures(BW_WRITE_NT, "L1")); /* write_nt keeps its every-size row */
    assert_false(bw_sweep_measures(BW_KERNEL_COUNT, "memory"));
    assert_false(bw_sweep_measures(BW_COPY_NT, NULL));

    /* the best memory-level figure ignores everything below 4x the LLC, however fast */
    struct bw_best b = {0};
    bw_best_offer(&b, "L1", 400e9, "sweep", "read", 1, 1);
    bw_best_offer(&b, "llc_to_memory", 90e9, "sweep", "read", 1, 1);
    assert_true(b.bytes_per_s == 0);
    bw_best_offer(&b, "memory", 20e9, "sweep", "triad", 1, 1);
    bw_best_offer(&b, "llc_to_memory", 70e9, "scaling_package", "read", 2, 1);
    bw_best_offer(&b, "memory", 30e9, "scaling_package", "read", 2, 1);
    bw_best_offer(&b, "memory", 25e9, "scaling_all", "read", 4, 2);
    assert_true(b.bytes_per_s == 30e9);
    assert_string_equal(b.series, "scaling_package");
    assert_true(b.threads == 2 && b.packages == 1);
    /* a non-temporal kernel's point is a memory-level figure like any other */
    bw_best_offer(&b, "memory", 34e9, "scaling_package", "triad_nt", 2, 1);
    assert_true(b.bytes_per_s == 34e9);
    assert_string_equal(b.kernel, "triad_nt");

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
    fake_pmu_absent("test: no PMU");
    bandwidth_set_smbios(NULL, 0, NULL);
    FAKE.echo = getenv("BW_ECHO") != NULL; /* BW_ECHO=1 prints the tables */
}

/* A number / string value of key in a JSON record line (NaN / "" when absent or null). */
static double num(const char *r, const char *key)
{
    char k[64];
    snprintf(k, sizeof(k), "\"%s\":", key);
    const char *p = strstr(r, k);
    if (!p || !strncmp(p + strlen(k), "null", 4))
        return NAN;
    return strtod(p + strlen(k), NULL);
}

static const char *str(const char *r, const char *key, char *buf, size_t len)
{
    char k[64];
    snprintf(k, sizeof(k), "\"%s\":\"", key);
    const char *p = strstr(r, k);
    buf[0] = 0;
    if (p) {
        p += strlen(k);
        size_t i = 0;
        while (p[i] && p[i] != '"' && i + 1 < len)
            buf[i] = p[i], i++;
        buf[i] = 0;
    }
    return buf;
}

/* Levels against the 4x-LLC rule, and the peak record's best figure = the fastest memory-level point. */
static void check_levels_and_best(uint64_t llc, size_t *n_memory, size_t *n_between)
{
    double best_mem = 0;
    *n_memory = *n_between = 0;
    for (size_t i = 0; i < FAKE.nrec; i++) {
        const char *r = FAKE.rec[i];
        if (strncmp(r, "{\"type\":\"bandwidth\",", 20))
            continue;
        char lv[32];
        str(r, "level", lv, sizeof(lv));
        double per_llc = num(r, "bytes_per_llc"), bytes = num(r, "bytes"), threads = num(r, "threads");
        assert_true(per_llc >= bytes && per_llc <= bytes * threads);
        assert_true(num(r, "llc_bytes") == (double)llc);
        if (!strcmp(lv, "memory")) {
            assert_true(per_llc >= 4.0 * (double)llc);
            (*n_memory)++;
            best_mem = fmax(best_mem, num(r, "median"));
        } else if (!strcmp(lv, "llc_to_memory")) {
            assert_true(per_llc > (double)llc && per_llc < 4.0 * (double)llc);
            (*n_between)++;
        } else {
            assert_true(per_llc <= (double)llc);
        }
    }
    const char *p = fake_find("bandwidth_peak", NULL, 0);
    assert_non_null(p);
    assert_true(num(p, "memory_level_from_bytes") == 4.0 * (double)llc);
    if (*n_memory) {
        /* not the fastest point of the run (cache points usually are): the fastest memory-level one */
        assert_true(num(p, "achieved_bytes_per_s") == best_mem);
    } else {
        assert_true(isnan(num(p, "achieved_bytes_per_s")));
        assert_non_null(strstr(p, "\"achieved_reason\":\"no memory-level point"));
    }
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
                                     "method", "bytes_per_llc", "llc_bytes"};
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
    /* quick sweep: 4 sizes (L1, L2, L3, memory) x 5 kernels per ISA, and copy_nt, triad_nt at the memory size
     * alone; no scaling with one CPU */
    assert_int_equal(n, (4 * 5 + 2) * isas);
    assert_non_null(fake_find("bandwidth", "\"kernel\":\"write_nt\",\"isa\":\"sse2\"", 0));
    for (int i = 0; i < 2; i++) {
        const char *nt = fake_find("bandwidth", i ? "\"kernel\":\"triad_nt\"" : "\"kernel\":\"copy_nt\"", 0);
        assert_non_null(nt);
        assert_non_null(strstr(nt, "\"level\":\"memory\""));
        assert_non_null(strstr(nt, "\"stores\":\"non_temporal\""));
        assert_null(fake_find("bandwidth", i ? "\"kernel\":\"triad_nt\"" : "\"kernel\":\"copy_nt\"", isas));
        /* STREAM bytes like the cached siblings: 2 and 3 arrays */
        assert_true(num(nt, "bytes") == (i ? 3 : 2) * num(nt, "bytes_per_array"));
    }
    assert_non_null(strstr(fake_find("bandwidth", "\"kernel\":\"triad\"", 0), "\"stores\":\"cached\""));
    assert_non_null(strstr(fake_find("bandwidth", "\"kernel\":\"write_nt\"", 0), "\"stores\":\"non_temporal\""));
    if (isas == 2)
        assert_non_null(fake_find("bandwidth", "\"kernel\":\"triad\",\"isa\":\"avx2\"", 0));
    assert_null(fake_find("bandwidth", "\"series\":\"scaling_package\"", 0));
    /* memory-level points carry the uncore check, unavailable here with the reason */
    const char *m = fake_find("bandwidth", "\"level\":\"memory\"", 0);
    assert_non_null(m);
    assert_non_null(strstr(m, "\"uncore\":{\"status\":\"unavailable\",\"reason\":\"test: no PMU\",\"socket\":"));
    /* it names the socket and node it would read and lists every other socket as not read */
    assert_non_null(strstr(m, "\"sockets_not_read\":["));
    assert_null(fake_find("bandwidth", "\"level\":\"L1\",\"bytes_per_s\":0,", 0));
    /* no SMBIOS: the peak is unknown, with the best memory-level figure anyway */
    const char *p = fake_find("bandwidth_peak", NULL, 0);
    assert_non_null(p);
    assert_non_null(strstr(p, "\"status\":\"unknown\""));
    assert_non_null(strstr(p, "\"peak_bytes_per_s\":null"));
    assert_null(strstr(p, "\"achieved_bytes_per_s\":null"));
    size_t nm, nb;
    check_levels_and_best(MiB(2), &nm, &nb);
    assert_int_equal(nm, 7 * isas); /* the quick sweep's top: 16 MiB >= 4 x 2 MiB, every kernel */
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
    assert_non_null(strstr(p, "\"channels\":1,"));
    assert_non_null(strstr(p, "\"formula\":\"1 channels x 2400 MT/s x 64 bits / 8\""));
    assert_non_null(strstr(p, "\"fraction_of\":\"the whole system's peak\""));
    size_t nm, nb;
    check_levels_and_best(MiB(2), &nm, &nb);
    assert_true(nm > 0);
    /* CPUID names no LLC sharing here: each thread is taken to have an LLC of its own, so two threads each
     * stream 4x the LLC */
    const char *two = fake_find("bandwidth", "\"series\":\"scaling_package\",\"kernel\":\"read\"", 1);
    assert_non_null(two);
    assert_true(num(two, "threads") == 2 && num(two, "bytes_per_llc") == num(two, "bytes"));
    assert_non_null(strstr(two, "\"level\":\"memory\""));
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
    /* 2 MiB fits, which is the LLC: no memory-level point, and the peak record says why */
    size_t nm, nb;
    check_levels_and_best(MiB(2), &nm, &nb);
    assert_int_equal(nm, 0);
    assert_non_null(strstr(fake_find("bandwidth_peak", NULL, 0), "limited by free memory"));
    FAKE.alloc_limit = 1ull << 30;
    assert_int_equal(FAKE.live_allocs, 0);
}

/* max_bytes below 4x the LLC: the largest points are "llc_to_memory", none is "memory", the best figure is
 * absent with the reason, in the record and in the text. */
static void test_bench_no_memory_level_below_4x_llc(void **state)
{
    (void)state;
    setup_machine(1, 1);
    FAKE.cfg.max_bytes = MiB(6); /* LLC 2 MiB: 4x would be 8 MiB */
    bench_bandwidth();
    size_t nm, nb;
    check_levels_and_best(MiB(2), &nm, &nb);
    assert_int_equal(nm, 0);
    assert_true(nb > 0);
    assert_non_null(fake_find("bandwidth", "\"bytes\":6291456,", 0)); /* read at max_bytes */
    const char *p = fake_find("bandwidth_peak", NULL, 0);
    assert_non_null(strstr(p, "limited by max_bytes) is below 4x the LLC (8 MiB)"));
    assert_non_null(strstr(p, "\"fraction_of_peak\":null"));
    assert_non_null(fake_text_find("no memory-level point: the largest working set (6 MiB, limited by max_bytes)"));
    FAKE.cfg.max_bytes = 0;
    assert_int_equal(FAKE.live_allocs, 0);
}

/* CPUID says both CPUs share the LLC: two threads split the memory-level working set, and the level is
 * judged on what the shared LLC sees (both buffers together). */
static void test_bench_shared_llc(void **state)
{
    (void)state;
    setup_machine(2, 1);
    FAKE.cpu.caches[3].shared_by = 2;
    bench_bandwidth();
    size_t nm, nb;
    check_levels_and_best(MiB(2), &nm, &nb);
    const char *one = fake_find("bandwidth", "\"series\":\"scaling_package\",\"kernel\":\"read\"", 0);
    const char *two = fake_find("bandwidth", "\"series\":\"scaling_package\",\"kernel\":\"read\"", 1);
    assert_non_null(one);
    assert_non_null(two);
    assert_true(num(one, "threads") == 1 && num(two, "threads") == 2);
    assert_true(num(two, "bytes_per_llc") == 2 * num(two, "bytes"));
    assert_true(num(two, "bytes") < num(one, "bytes")); /* each thread half (the quick floor is 8 MiB) */
    assert_true(num(two, "bytes_per_llc") >= 4.0 * MiB(2));
    assert_non_null(strstr(two, "\"level\":\"memory\""));
    assert_int_equal(FAKE.live_allocs, 0);
}

/* Full profile: 9 replicates per figure. Sweep points whose whole pass is cheap take one replicate per pass
 * of the sweep (interleaved); a point whose 8 extra warm-up passes would cost more than a quarter of its
 * budget (here 1 ms: any pass over 64 MiB) takes its replicates back to back. A sample above 256 KiB per
 * array streams whole 256 KiB chunks, not whole passes; a multi-threaded sample is a window, whatever the
 * working set. */
static void test_bench_full_interleaved_and_chunked(void **state)
{
    (void)state;
    setup_machine(2, 1);
    FAKE.cfg.quick = false;
    bench_bandwidth();
    size_t n, inter = 0, whole = 0, chunked = 0;
    check_bandwidth_records(&n);
    for (size_t i = 0; i < FAKE.nrec; i++) {
        const char *r = FAKE.rec[i];
        if (strncmp(r, "{\"type\":\"bandwidth\",", 20))
            continue;
        assert_true(num(r, "replicates") == 9);
        assert_true(num(r, "n") >= 9 * 3); /* every replicate took its 3 samples at least */
        double bytes = num(r, "bytes"), per_array = num(r, "bytes_per_array"), sb = num(r, "sample_bytes");
        double passes = num(r, "passes");
        assert_true(sb > 0 && passes > 0);
        if (!strstr(r, "\"series\":\"sweep\"")) {
            assert_null(strstr(r, "\"replicates_interleaved\""));
            continue;
        }
        assert_true(fabs(passes - sb / bytes) <= 1e-9 * passes);
        if (per_array > KiB(256)) { /* whole chunks: 256 KiB of every array */
            double unit = bytes / per_array * KiB(256);
            assert_true(fmod(sb, unit) == 0);
            chunked++;
        } else {
            assert_true(fmod(sb, bytes) == 0); /* whole passes */
        }
        if (strstr(r, "\"replicates_interleaved\":true")) {
            inter++;
        } else {
            assert_non_null(strstr(r, "\"replicates_interleaved\":false"));
            whole++;
        }
        if (bytes >= MiB(64)) /* 8 passes of 64 MiB cost more than 0.25 ms on any machine */
            assert_non_null(strstr(r, "\"replicates_interleaved\":false"));
        if (bytes <= KiB(8)) /* 8 passes of 8 KiB cost a few microseconds */
            assert_non_null(strstr(r, "\"replicates_interleaved\":true"));
    }
    assert_true(inter > 0 && whole > 0 && chunked > 0);
    assert_non_null(fake_find("bandwidth", "\"series\":\"scaling_package\",\"kernel\":\"triad\"", 1));
    /* copy_nt and triad_nt: in the sweep at the memory level only, in the scaling series at 1 and 2 threads */
    size_t nt_sweep = 0, nt_scaling = 0, copy_memory = 0;
    for (size_t i = 0; i < FAKE.nrec; i++) {
        const char *r = FAKE.rec[i];
        copy_memory += !strncmp(r, "{\"type\":\"bandwidth\",", 20) && strstr(r, "\"series\":\"sweep\",\"kernel\":\"copy\",") &&
                       strstr(r, "\"level\":\"memory\"");
        if (strncmp(r, "{\"type\":\"bandwidth\",", 20) ||
            (!strstr(r, "\"kernel\":\"copy_nt\"") && !strstr(r, "\"kernel\":\"triad_nt\"")))
            continue;
        assert_non_null(strstr(r, "\"stores\":\"non_temporal\""));
        if (strstr(r, "\"series\":\"sweep\"")) {
            assert_non_null(strstr(r, "\"level\":\"memory\""));
            nt_sweep++;
        } else {
            assert_non_null(strstr(r, "\"series\":\"scaling_package\""));
            nt_scaling++;
        }
    }
    assert_true(copy_memory > 0);
    assert_int_equal(nt_sweep, 2 * copy_memory); /* copy_nt and triad_nt at every memory-level size of copy */
    assert_int_equal(nt_scaling, 4); /* 2 kernels x 1, 2 threads */
    size_t nm, nb;
    check_levels_and_best(MiB(2), &nm, &nb); /* the peak's best may be an _nt point: the fastest memory one */
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
        cmocka_unit_test(test_bench_no_memory_level_below_4x_llc),
        cmocka_unit_test(test_bench_shared_llc),
        cmocka_unit_test(test_bench_full_interleaved_and_chunked),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
