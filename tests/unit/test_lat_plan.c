/* test_lat_plan.c - the latency benchmarks' arithmetic: size grids, sweep top, working sets per row, CPU sampling. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <math.h>
#include <string.h>
#include <cmocka.h>

#include "bench/lat_plan.h"

static void assert_grid_shape(const uint64_t *g, size_t n, uint64_t lo, uint64_t hi, uint64_t align)
{
    assert_true(n > 0);
    assert_true(g[0] >= lo);
    assert_int_equal(g[n - 1], hi);
    for (size_t i = 0; i < n; i++) {
        assert_int_equal(g[i] % align, 0);
        if (i > 0)
            assert_true(g[i] > g[i - 1]);
    }
}

static void grid_one_per_octave_is_powers_of_two(void **state)
{
    (void)state;
    uint64_t g[64];
    size_t n = lat_size_grid(KiB(1), MiB(64), 1, 64, g, 64);
    assert_int_equal(n, 17);
    for (size_t i = 0; i < n; i++)
        assert_int_equal(g[i], KiB(1) << i);
}

static void grid_four_per_octave_is_geometric(void **state)
{
    (void)state;
    uint64_t g[256];
    size_t n = lat_size_grid(KiB(1), MiB(32), 4, 64, g, 256);
    assert_grid_shape(g, n, KiB(1), MiB(32), 64);
    assert_int_equal(n, 15 * 4 + 1); /* 15 octaves, 4 points each, plus the top */
    for (size_t i = 0; i < n; i++) {
        double want = 1024.0 * exp2((double)i / 4);
        uint64_t w = (uint64_t)want / 64 * 64;
        /* The root is computed without libm; allow the rounding to land one line either side. */
        assert_true(g[i] + 64 >= w && g[i] <= w + 64);
    }
    /* Every octave holds exactly 4 points. */
    for (uint64_t lo = KiB(1); lo < MiB(32); lo *= 2) {
        int in = 0;
        for (size_t i = 0; i < n; i++)
            in += g[i] >= lo && g[i] < 2 * lo;
        assert_int_equal(in, 4);
    }
}

static void grid_top_off_the_grid_and_rounding(void **state)
{
    (void)state;
    uint64_t g[64];
    size_t n = lat_size_grid(KiB(1), 3000, 2, 64, g, 64);
    assert_grid_shape(g, n, KiB(1), 2944, 64); /* 3000 rounded down to a whole line */
    assert_int_equal(g[0], 1024);
    assert_int_equal(g[1], 1408); /* 1024 x 1.414 = 1448 -> 1408 */
    assert_int_equal(g[2], 2048);
    assert_int_equal(g[3], 2880); /* 2896 -> 2880 */
    assert_int_equal(n, 5);
    /* lo == hi: one point. */
    n = lat_size_grid(MiB(1), MiB(1), 4, 64, g, 64);
    assert_int_equal(n, 1);
    assert_int_equal(g[0], MiB(1));
}

static void grid_coarse_alignment_drops_duplicates(void **state)
{
    (void)state;
    uint64_t g[256];
    /* 8 per octave of 4 KiB pages between 4 and 16 KiB: many grid points round to the same page count. */
    size_t n = lat_size_grid(KiB(4), KiB(64), 8, KiB(4), g, 256);
    assert_grid_shape(g, n, KiB(4), KiB(64), KiB(4));
    assert_true(n < 4 * 8 + 1);
    assert_int_equal(g[0], KiB(4));
    assert_int_equal(g[1], KiB(8)); /* 4.4, 4.8 ... 7.3 KiB all round down to 4 KiB */
}

static void grid_rejects_bad_input(void **state)
{
    (void)state;
    uint64_t g[8];
    assert_int_equal(lat_size_grid(0, MiB(1), 4, 64, g, 8), 0);
    assert_int_equal(lat_size_grid(MiB(2), MiB(1), 4, 64, g, 8), 0);
    assert_int_equal(lat_size_grid(KiB(1), MiB(1), 0, 64, g, 8), 0);
    assert_int_equal(lat_size_grid(KiB(1), MiB(1), 4, 48, g, 8), 0);
    assert_int_equal(lat_size_grid(KiB(1), MiB(1), 4, 0, g, 8), 0);
    assert_int_equal(lat_size_grid(KiB(1), MiB(1), 4, 64, NULL, 8), 0);
    assert_int_equal(lat_size_grid(KiB(1), MiB(1), 4, 64, g, 0), 0);
    assert_int_equal(lat_size_grid(10, 50, 1, 64, g, 8), 0); /* nothing aligned inside */
}

static void grid_truncated_keeps_the_top(void **state)
{
    (void)state;
    uint64_t g[5];
    size_t n = lat_size_grid(KiB(1), GiB(1), 4, 64, g, 5);
    assert_int_equal(n, 5);
    assert_int_equal(g[4], GiB(1));
    for (size_t i = 1; i < n; i++)
        assert_true(g[i] > g[i - 1]);
}

static void grid_near_uint64_max_terminates(void **state)
{
    (void)state;
    static uint64_t g[LAT_MAX_POINTS];
    uint64_t hi = UINT64_MAX & ~63ull;
    size_t n = lat_size_grid(1ull << 62, hi, 4, 64, g, LAT_MAX_POINTS);
    assert_grid_shape(g, n, 1ull << 62, hi, 64);
    assert_true(n <= 9);
}

static void sweep_top_is_four_llc_power_of_two_capped(void **state)
{
    (void)state;
    assert_int_equal(lat_sweep_top(MiB(8), 0), MiB(32));
    assert_int_equal(lat_sweep_top(MiB(12), 0), MiB(64)); /* 48 MiB -> next power of two */
    assert_int_equal(lat_sweep_top(0, 0), LAT_SWEEP_NO_LLC);
    assert_int_equal(lat_sweep_top(MiB(8), MiB(20)), MiB(16));
    assert_int_equal(lat_sweep_top(MiB(8), MiB(32)), MiB(32));
    assert_int_equal(lat_sweep_top(MiB(8), 100), LAT_SWEEP_LO);
    assert_int_equal(lat_sweep_top(1ull << 62, 0), 1ull << 62); /* saturates, no overflow */
}

/* sweep_top=SIZE: that size (4 KiB aligned), the cap still applies; 0 keeps the rule from the LLC. */
static void sweep_top_key_overrides_the_rule(void **state)
{
    (void)state;
    assert_int_equal(lat_sweep_top_want(MiB(32), 0, 0), MiB(128));
    assert_int_equal(lat_sweep_top_want(MiB(32), 0, GiB(2)), GiB(2));
    assert_int_equal(lat_sweep_top_want(MiB(32), 0, MiB(256)), MiB(256));
    assert_int_equal(lat_sweep_top_want(MiB(32), 0, MiB(3) + 100), MiB(3)); /* 4 KiB aligned, not a power of 2 */
    assert_int_equal(lat_sweep_top_want(MiB(32), GiB(1) + 5, GiB(2)), GiB(1));
    assert_int_equal(lat_sweep_top_want(MiB(32), 0, 100), LAT_SWEEP_LO);
}

/* Up to 2x the LLC the grid has all its points per octave, above only the octaves and the top. */
static void sweep_grid_sparse_past_twice_the_llc(void **state)
{
    (void)state;
    uint64_t full[LAT_MAX_POINTS], g[LAT_MAX_POINTS];
    size_t nf = lat_size_grid(KiB(1), GiB(2), 4, 64, full, LAT_MAX_POINTS);
    size_t n = lat_sweep_grid(KiB(1), GiB(2), 4, MiB(32), 64, g, LAT_MAX_POINTS);
    assert_int_equal(nf, 85);
    /* 1 KiB .. 64 MiB: 16 octaves x 4 + 64 MiB; then 128 MiB .. 2 GiB: 5 octaves */
    assert_int_equal(n, 65 + 5);
    for (size_t i = 0; i < 65; i++)
        assert_int_equal(g[i], full[i]);
    assert_int_equal(g[64], MiB(64));
    for (size_t i = 65; i < n; i++)
        assert_int_equal(g[i], MiB(128) << (i - 65));
    /* a top off the octaves stays last; an LLC not a power of two keeps every grid point up to 2x it */
    n = lat_sweep_grid(KiB(1), MiB(300), 4, MiB(100), 64, g, LAT_MAX_POINTS);
    assert_int_equal(g[n - 1], MiB(300));
    assert_int_equal(g[n - 2], MiB(256));
    assert_true(g[n - 3] <= MiB(200) && g[n - 3] > MiB(160));
    /* no LLC, or a top below 2x the LLC: the whole grid */
    assert_int_equal(lat_sweep_grid(KiB(1), GiB(2), 4, 0, 64, g, LAT_MAX_POINTS), nf);
    assert_int_equal(lat_sweep_grid(KiB(1), MiB(128), 4, MiB(64), 64, g, LAT_MAX_POINTS),
                     lat_size_grid(KiB(1), MiB(128), 4, 64, full, LAT_MAX_POINTS));
    assert_int_equal(lat_sweep_grid(KiB(1), GiB(2), 0, MiB(32), 64, g, LAT_MAX_POINTS), 0);
}

/* The page series stops once two steps past the LLC are flat and the last is past 2x the LLC. */
/* The sweep's series run largest pages first (the 4 KiB series then take the 2 MiB blocks the large-page series
 * just freed); equal pages keep their order (random before page-by-page), and no index is lost or repeated. */
static void sweep_order_largest_pages_first(void **state)
{
    (void)state;
    size_t order[8];
    const uint64_t full[] = {KiB(4), MiB(2), GiB(1), KiB(4)}; /* random 4K, 2M, 1G, page-by-page 4K */
    lat_sweep_order(full, 4, order);
    assert_int_equal(order[0], 2);
    assert_int_equal(order[1], 1);
    assert_int_equal(order[2], 0);
    assert_int_equal(order[3], 3);
    const uint64_t no_1g[] = {KiB(4), MiB(2), KiB(4)};
    lat_sweep_order(no_1g, 3, order);
    assert_int_equal(order[0], 1);
    assert_int_equal(order[1], 0);
    assert_int_equal(order[2], 2);
    const uint64_t same[] = {KiB(4), KiB(4), KiB(4)};
    lat_sweep_order(same, 3, order);
    for (size_t k = 0; k < 3; k++)
        assert_int_equal(order[k], k);
    const uint64_t rising[] = {KiB(4), KiB(8), KiB(16), MiB(2), MiB(4), GiB(1), GiB(2), GiB(4)};
    lat_sweep_order(rising, 8, order);
    for (size_t k = 0; k < 8; k++)
        assert_int_equal(order[k], 7 - k);
    order[0] = 99;
    lat_sweep_order(rising, 0, order); /* no series: nothing written */
    assert_int_equal(order[0], 99);
}

static void page_plateau_needs_two_flat_steps_past_the_llc(void **state)
{
    (void)state;
    const uint64_t llc = MiB(32);
    uint64_t b[] = {MiB(16), MiB(32), MiB(48), MiB(64), MiB(128), MiB(256)};
    double flat[] = {20, 60, 100, 101, 102, 101.5};
    assert_false(lat_page_plateau(b, flat, NULL, 3, llc)); /* 48 MiB: not past 2x the LLC */
    assert_false(lat_page_plateau(b, flat, NULL, 4, llc)); /* 64 MiB = 2x the LLC, not above it */
    assert_true(lat_page_plateau(b, flat, NULL, 5, llc));  /* 128 MiB; 64 and 48 MiB past the LLC, flat */
    double rising[] = {20, 60, 100, 101, 110, 112};
    assert_false(lat_page_plateau(b, rising, NULL, 5, llc));
    assert_false(lat_page_plateau(b, rising, NULL, 6, llc)); /* 110 -> 112 flat, 101 -> 110 not */
    uint64_t b2[] = {MiB(16), MiB(32), MiB(48), MiB(64), MiB(128), MiB(256), MiB(512)};
    double l7[] = {20, 60, 100, 101, 110, 112.5, 113};
    assert_true(lat_page_plateau(b2, l7, NULL, 7, llc));
    assert_false(lat_page_plateau(b, flat, NULL, 5, 0)); /* no LLC: never */
    assert_false(lat_page_plateau(NULL, flat, NULL, 5, llc));
    /* a step within the points' uncertainty is flat: 101 -> 110 (8.9 %) with CIs of +-5 % each */
    double ci[] = {0.01, 0.01, 0.01, 0.05, 0.05, 0.05};
    assert_true(lat_page_plateau(b, rising, ci, 6, llc));
    double tight[] = {0.01, 0.01, 0.01, 0.02, 0.02, 0.02};
    assert_false(lat_page_plateau(b, rising, tight, 6, llc));
}

static struct cpu_info nehalem(void)
{
    struct cpu_info ci;
    memset(&ci, 0, sizeof(ci));
    ci.caches[0] = (struct cpu_cache){.level = 1, .type = CPU_CACHE_DATA, .line = 64, .bytes = KiB(32)};
    ci.caches[1] = (struct cpu_cache){.level = 1, .type = CPU_CACHE_INSTRUCTION, .line = 64, .bytes = KiB(64)};
    ci.caches[2] = (struct cpu_cache){.level = 2, .type = CPU_CACHE_UNIFIED, .line = 64, .bytes = KiB(256)};
    ci.caches[3] = (struct cpu_cache){.level = 3, .type = CPU_CACHE_UNIFIED, .line = 64, .bytes = MiB(8), .inclusive = true};
    ci.n_caches = 4;
    return ci;
}

static void caches_from_cpuid_pick_data_levels(void **state)
{
    (void)state;
    struct cpu_info ci = nehalem();
    struct cache_sizes c;
    cache_sizes_from_cpuid(&ci, &c);
    assert_int_equal(c.l1, KiB(32)); /* the larger instruction cache is not a data level */
    assert_int_equal(c.l2, KiB(256));
    assert_int_equal(c.l3, MiB(8));
    assert_int_equal(c.llc, MiB(8));
    assert_int_equal(c.line, 64);
    assert_true(c.l3_inclusive);

    ci.n_caches = 3; /* no L3: the L2 is the last level */
    cache_sizes_from_cpuid(&ci, &c);
    assert_int_equal(c.l3, 0);
    assert_int_equal(c.llc, KiB(256));

    ci.n_caches = 0;
    cache_sizes_from_cpuid(&ci, &c);
    assert_int_equal(c.llc, 0);
    assert_int_equal(c.line, 64);
    cache_sizes_from_cpuid(NULL, &c);
    assert_int_equal(c.llc, 0);

    ci = nehalem();
    ci.n_caches = 200; /* a corrupt count never reads past the array */
    cache_sizes_from_cpuid(&ci, &c);
    assert_int_equal(c.l3, MiB(8));
}

static void placed_bytes_quarter_l2_whole_iterations(void **state)
{
    (void)state;
    struct cpu_info ci = nehalem();
    struct cache_sizes c;
    cache_sizes_from_cpuid(&ci, &c);
    uint64_t w = lat_placed_bytes(&c);
    assert_int_equal(w, KiB(64)); /* a quarter of 256 KiB, which is also twice the 32 KiB L1 */
    c.l2 = MiB(2); /* Sapphire Rapids: 48 KiB L1D, 2 MiB L2 */
    c.l1 = KiB(48);
    assert_int_equal(lat_placed_bytes(&c), KiB(512));
    c.l2 = KiB(256);
    c.l1 = KiB(32);
    assert_int_equal(lat_placed_lines(w) % 64, 0);
    /* A tiny L2 next to a large L1: still twice the L1, so the pass cannot live in the L1. */
    c.l2 = KiB(48);
    c.l1 = KiB(48);
    w = lat_placed_bytes(&c);
    assert_true(w >= KiB(96));
    assert_int_equal(w % (LAT_PLACED_STRIDE * 64), 0);
    /* No cache data at all. */
    assert_int_equal(lat_placed_bytes(NULL), KiB(64));
    struct cache_sizes none = {0};
    assert_int_equal(lat_placed_bytes(&none), KiB(64));
    /* An odd L2 (12 x 64 KiB = 768 KiB, 3 MiB ...) rounds down to whole chase iterations. */
    c = (struct cache_sizes){.l1 = KiB(48), .l2 = KiB(1280) + 100};
    w = lat_placed_bytes(&c);
    assert_int_equal(w % (LAT_PLACED_STRIDE * 64), 0);
    assert_true(w <= c.l2 / 4 && w > c.l2 / 4 - LAT_PLACED_STRIDE * 64);
}

static void evict_bytes_twice_capacity_capped_by_l3(void **state)
{
    (void)state;
    struct cpu_info ci = nehalem();
    struct cache_sizes c;
    cache_sizes_from_cpuid(&ci, &c);
    assert_int_equal(lat_evict_bytes(&c, 2), 2 * (KiB(32) + KiB(256)));
    assert_int_equal(lat_evict_bytes(&c, 1), KiB(64));
    /* QEMU's legacy Nehalem: 4 MiB L2 under a 16 MiB L3 -> a quarter of the L3. */
    c.l2 = MiB(4);
    c.l3 = MiB(16);
    assert_int_equal(lat_evict_bytes(&c, 2), MiB(4));
    /* Multiples of 64 KiB, never 0. */
    c = (struct cache_sizes){.l1 = KiB(48), .l2 = KiB(1280)};
    assert_int_equal(lat_evict_bytes(&c, 2) % KiB(64), 0);
    assert_true(lat_evict_bytes(&c, 2) >= 2 * (KiB(48) + KiB(1280)));
    c = (struct cache_sizes){.l1 = KiB(32), .l2 = KiB(256), .l3 = KiB(64)};
    assert_int_equal(lat_evict_bytes(&c, 2), KiB(64));
    assert_int_equal(lat_evict_bytes(NULL, 2), KiB(64));
}

static void dram_bytes_scales_with_llc_and_caps(void **state)
{
    (void)state;
    struct cache_sizes c = {.llc = MiB(8)};
    assert_int_equal(lat_dram_bytes(&c, false, 0), MiB(64));
    assert_int_equal(lat_dram_bytes(&c, true, 0), MiB(16));
    c.llc = MiB(32);
    assert_int_equal(lat_dram_bytes(&c, false, 0), MiB(256));
    assert_int_equal(lat_dram_bytes(&c, true, 0), MiB(64));
    assert_int_equal(lat_dram_bytes(&c, false, MiB(100)), MiB(100));
    assert_int_equal(lat_dram_bytes(&c, false, MiB(101)), MiB(100)); /* whole 2 MiB units */
    assert_int_equal(lat_dram_bytes(&c, false, KiB(100)), MiB(2));
    assert_int_equal(lat_dram_bytes(NULL, true, 0), MiB(16));
}

/* Fresh permutations per replicate up to twice the LLC, and no further than 2^20 lines per building CPU: the
 * rebuild's cost, not the LLC alone, sets the limit (a 300 MiB-LLC Xeon on one CPU: 64 MiB, not 600). */
static void fresh_max_set_by_the_rebuild_cost(void **state)
{
    (void)state;
    struct cache_sizes c = {.llc = MiB(300)};
    assert_int_equal(lat_fresh_max_bytes(&c), MiB(64));
    assert_int_equal(lat_fresh_max_bytes_par(&c, 1), MiB(64));
    assert_int_equal(lat_fresh_max_bytes_par(&c, 0), MiB(64)); /* 0 CPUs: one */
    assert_int_equal(lat_fresh_max_bytes_par(&c, 4), MiB(256));
    assert_int_equal(lat_fresh_max_bytes_par(&c, 16), MiB(600)); /* the LLC rule again */
    c.llc = MiB(8);
    assert_int_equal(lat_fresh_max_bytes(&c), MiB(16));
    assert_int_equal(lat_fresh_max_bytes_par(&c, 16), MiB(16));
    c.llc = MiB(32);
    assert_int_equal(lat_fresh_max_bytes(&c), MiB(64)); /* both rules agree */
    assert_int_equal(lat_fresh_max_bytes(NULL), MiB(64));
    c.llc = 0;
    assert_int_equal(lat_fresh_max_bytes_par(&c, 8), MiB(64));
}

static void l1_bytes_half_l1(void **state)
{
    (void)state;
    struct cache_sizes c = {.l1 = KiB(48)};
    assert_int_equal(lat_l1_bytes(&c), KiB(24));
    c.l1 = 0;
    assert_int_equal(lat_l1_bytes(&c), KiB(16));
    c.l1 = 1000;
    assert_int_equal(lat_l1_bytes(&c), KiB(1));
}

static void pick_cpus_all_or_evenly_spread(void **state)
{
    (void)state;
    uint32_t o[LAT_C2C_MAX_CPUS];
    assert_int_equal(lat_pick_cpus(4, 64, o), 4);
    for (uint32_t i = 0; i < 4; i++)
        assert_int_equal(o[i], i);
    assert_int_equal(lat_pick_cpus(64, 64, o), 64);
    assert_int_equal(o[63], 63);

    size_t n = lat_pick_cpus(200, 64, o);
    assert_int_equal(n, 64);
    assert_int_equal(o[0], 0);
    assert_int_equal(o[63], 199);
    for (size_t i = 1; i < n; i++)
        assert_true(o[i] > o[i - 1]);
    /* Spread: no gap more than twice the average. */
    for (size_t i = 1; i < n; i++)
        assert_true(o[i] - o[i - 1] <= 2 * 199 / 63 + 1);

    n = lat_pick_cpus(65, 64, o);
    assert_int_equal(n, 64);
    for (size_t i = 1; i < n; i++)
        assert_true(o[i] > o[i - 1]);

    assert_int_equal(lat_pick_cpus(10, 1, o), 1);
    assert_int_equal(o[0], 0);
    assert_int_equal(lat_pick_cpus(0, 64, o), 0);
    assert_int_equal(lat_pick_cpus(5, 0, o), 0);
    assert_int_equal(lat_pick_cpus(5, 4, NULL), 0);
}

static void loaded_delays_start_at_full_load(void **state)
{
    (void)state;
    uint32_t d[32];
    size_t n = lat_loaded_delays(false, d, 32);
    assert_true(n >= 12); /* enough points for a latency-vs-bandwidth curve */
    assert_true(n <= LAT_LOADED_MAX_DELAYS);
    assert_int_equal(d[0], 0);
    for (size_t i = 1; i < n; i++)
        assert_true(d[i] > d[i - 1]);
    uint32_t q[32];
    size_t nq = lat_loaded_delays(true, q, 32);
    assert_true(nq >= 2 && nq < n);
    assert_int_equal(q[0], 0);
    assert_int_equal(d[n - 1], 6400); /* the lightest load stays where it was */
    /* between 10 and 800 no step more than doubles the delay (the knee is in there) */
    for (size_t i = 1; i < n; i++)
        if (d[i - 1] >= 10 && d[i] <= 800)
            assert_true(d[i] <= 2 * d[i - 1]);
    assert_int_equal(lat_loaded_delays(false, d, 3), 3);
    assert_int_equal(lat_loaded_delays(false, NULL, 3), 0);
}

static void table2_rows_and_reference_text(void **state)
{
    (void)state;
    static const char *names[] = {"L1", "L2", "L3_unshared", "L3_shared_other_core", "L3_modified_other_core",
                                  "remote_L3", "local_DRAM", "remote_DRAM"};
    assert_int_equal(LAT_ROW_COUNT, 8);
    for (int i = 0; i < LAT_ROW_COUNT; i++) {
        assert_string_equal(lat_rows[i].source, names[i]);
        assert_true(lat_rows[i].lo > 0 && lat_rows[i].hi >= lat_rows[i].lo);
    }
    char t[40];
    lat_ref_text(&lat_rows[LAT_ROW_L3_UNSHARED], t, sizeof(t));
    assert_string_equal(t, "~40 cycles");
    lat_ref_text(&lat_rows[LAT_ROW_REMOTE_L3], t, sizeof(t));
    assert_string_equal(t, "~100-300 cycles");
    lat_ref_text(&lat_rows[LAT_ROW_LOCAL_DRAM], t, sizeof(t));
    assert_string_equal(t, "~60 ns");
    assert_string_equal(lat_rows[LAT_ROW_REMOTE_DRAM].unit, "ns");
    assert_int_equal((int)lat_rows[LAT_ROW_L3_MODIFIED].lo, 75);
}

/* Cache sharing from APIC IDs and CPUID's "sharing" count. */
static void shares_cache_by_apic_id(void **state)
{
    (void)state;
    /* Nehalem-EP: L2 per core with 2 threads (shared_by 2), L3 per package of 8 threads (16 IDs reserved). */
    assert_true(lat_shares_cache(0, 1, 2));   /* SMT siblings share the L2 */
    assert_false(lat_shares_cache(0, 2, 2));  /* the next core does not */
    assert_true(lat_shares_cache(0, 6, 16));  /* same package: same L3 */
    assert_false(lat_shares_cache(0, 16, 16)); /* the other socket */
    /* Zen 2 style: an L3 per 4-core CCX (8 threads) inside one package: same package, another L3 */
    assert_true(lat_shares_cache(2, 7, 8));
    assert_false(lat_shares_cache(2, 8, 8));
    /* a count that is not a power of two rounds up (CPUID reports "maximum addressable IDs") */
    assert_true(lat_shares_cache(0, 11, 12));
    assert_false(lat_shares_cache(0, 16, 12));
    /* 0 or 1: private */
    assert_false(lat_shares_cache(4, 5, 1));
    assert_true(lat_shares_cache(4, 4, 0));
}

/* The other-core rows' lines fit the holder's private caches on an inclusive-L3 Nehalem (32 KiB L1D, 256 KiB L2),
 * a non-inclusive Emerald Rapids (48 KiB, 2 MiB) and a Zen 4 CCX (32 KiB, 1 MiB): the lines (64 bytes each, one
 * per LAT_PLACED_STRIDE) take at most a quarter of the L2's sets they map to, and it is the c2c working set. */
static void other_core_lines_fit_private_cache(void **state)
{
    (void)state;
    static const struct cache_sizes parts[] = {
        {.l1 = KiB(32), .l2 = KiB(256), .l3 = MiB(8), .llc = MiB(8), .line = 64},
        {.l1 = KiB(48), .l2 = MiB(2), .l3 = MiB(300), .llc = MiB(300), .line = 64},
        {.l1 = KiB(32), .l2 = MiB(1), .l3 = MiB(32), .llc = MiB(32), .line = 64},
    };
    for (size_t i = 0; i < sizeof(parts) / sizeof(parts[0]); i++) {
        uint64_t w = lat_other_core_bytes(&parts[i]);
        uint64_t lines = w / LAT_PLACED_STRIDE;
        assert_true(w % ((uint64_t)LAT_PLACED_STRIDE * 64) == 0);
        assert_true(w <= LAT_C2C_MAX_BYTES && w <= lat_placed_bytes(&parts[i]));
        /* the stride uses 64 / LAT_PLACED_STRIDE of the sets: capacity available to the lines */
        uint64_t room = parts[i].l2 * 64 / LAT_PLACED_STRIDE;
        assert_true(lines * 64 * 4 <= room);
    }
    assert_int_equal(lat_other_core_bytes(NULL), KiB(64));
}

/* The eviction chunk read twice: a quarter of the level it evicts, 4 KiB-aligned, never 0. */
static void evict_chunk_is_a_quarter_of_the_level(void **state)
{
    (void)state;
    struct cache_sizes zen = {.l1 = KiB(48), .l2 = MiB(1), .l3 = MiB(32), .llc = MiB(32), .line = 64};
    assert_int_equal(lat_evict_chunk(&zen, 2), KiB(256));
    assert_int_equal(lat_evict_chunk(&zen, 1), KiB(12));
    assert_int_equal(lat_evict_chunk(NULL, 2), KiB(8));
    struct cache_sizes tiny = {.l1 = KiB(8), .line = 64};
    assert_int_equal(lat_evict_chunk(&tiny, 2), KiB(4));
    assert_true(lat_evict_bytes(&zen, 2) % lat_evict_chunk(&zen, 2) == 0 || lat_evict_bytes(&zen, 2) > lat_evict_chunk(&zen, 2));
}

/* Replicate regions: replicate 0 at the start, every offset aligned and inside the buffer, R distinct offsets
 * spread over the room when it holds R aligned offsets (the sweep: 9 regions of a 512 KiB point 14 MiB apart in
 * its 128 MiB buffer), the fitting offsets in turn when it does not, and one region for one replicate or bad
 * input. */
static void rep_offsets_spread_inside_the_buffer(void **state)
{
    (void)state;
    const struct {
        uint64_t buf, bytes, align;
    } cases[] = {
        {MiB(128), KiB(512), MiB(2)}, {MiB(128), KiB(512), KiB(4)}, {MiB(128), MiB(64), MiB(2)},
        {MiB(8), KiB(512), MiB(2)},   {MiB(8), MiB(8), MiB(2)},     {KiB(64), KiB(1), KiB(4)},
        {MiB(128), MiB(100), GiB(1)}, {MiB(1) + 4096, KiB(1), KiB(4)},
    };
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        uint64_t slots = (cases[i].buf - cases[i].bytes) / cases[i].align + 1, off[9];
        for (size_t k = 0; k < 9; k++) {
            off[k] = lat_rep_offset(cases[i].buf, cases[i].bytes, cases[i].align, k, 9);
            assert_int_equal(off[k] % cases[i].align, 0);
            assert_true(off[k] + cases[i].bytes <= cases[i].buf);
            for (size_t m = 0; m < k; m++)
                if (slots >= 9 || k - m < slots) /* distinct, or in turn over the fitting ones */
                    assert_true(off[k] != off[m]);
        }
        assert_int_equal(off[0], 0);
        if (slots >= 9) /* spread evenly: the last replicate within R - 1 alignments of the end of the room */
            assert_true(cases[i].buf - cases[i].bytes - off[8] < 8 * (cases[i].align + 1));
        else
            for (size_t k = 0; k < 9; k++)
                assert_int_equal(off[k], (k % slots) * cases[i].align);
    }
    assert_int_equal(lat_rep_offset(MiB(128), KiB(512), MiB(2), 1, 9), MiB(14));
    assert_int_equal(lat_rep_offset(MiB(8), MiB(8), MiB(2), 5, 9), 0);  /* no room */
    assert_int_equal(lat_rep_offset(MiB(8), KiB(4), MiB(2), 3, 1), 0);  /* one replicate */
    assert_int_equal(lat_rep_offset(MiB(8), MiB(9), MiB(2), 3, 9), 0);  /* larger than the buffer */
    assert_int_equal(lat_rep_offset(MiB(8), 0, MiB(2), 3, 9), 0);
    assert_int_equal(lat_rep_offset(MiB(8), KiB(4), 3 * KiB(4), 3, 9), 0); /* not a power of two */
    assert_int_equal(lat_rep_offset(MiB(8), KiB(4), 0, 3, 9), 0);
}

/* A buffer of lat_rep_buffer_bytes holds R disjoint regions, each LAT_REP_ALIGN-aligned (a large page of its
 * own for a region up to 2 MiB); one replicate: the bytes themselves. */
static void rep_buffer_holds_disjoint_regions(void **state)
{
    (void)state;
    const uint64_t sizes[] = {KiB(16), KiB(64), KiB(256), MiB(2), MiB(2) + KiB(64), MiB(5)};
    for (size_t i = 0; i < sizeof(sizes) / sizeof(sizes[0]); i++) {
        for (size_t reps = 1; reps <= 9; reps++) {
            uint64_t bb = lat_rep_buffer_bytes(sizes[i], reps);
            if (reps == 1)
                assert_int_equal(bb, sizes[i]);
            for (size_t k = 0; k < reps; k++) {
                uint64_t o = lat_rep_offset(bb, sizes[i], LAT_REP_ALIGN, k, reps);
                assert_int_equal(o % LAT_REP_ALIGN, 0);
                assert_true(o + sizes[i] <= bb);
                if (k)
                    assert_true(o >= lat_rep_offset(bb, sizes[i], LAT_REP_ALIGN, k - 1, reps) + sizes[i]);
            }
        }
    }
    assert_int_equal(lat_rep_buffer_bytes(KiB(256), 9), 8 * MiB(2) + KiB(256));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(rep_offsets_spread_inside_the_buffer),
        cmocka_unit_test(rep_buffer_holds_disjoint_regions),
        cmocka_unit_test(other_core_lines_fit_private_cache),
        cmocka_unit_test(evict_chunk_is_a_quarter_of_the_level),
        cmocka_unit_test(grid_one_per_octave_is_powers_of_two),
        cmocka_unit_test(grid_four_per_octave_is_geometric),
        cmocka_unit_test(grid_top_off_the_grid_and_rounding),
        cmocka_unit_test(grid_coarse_alignment_drops_duplicates),
        cmocka_unit_test(grid_rejects_bad_input),
        cmocka_unit_test(grid_truncated_keeps_the_top),
        cmocka_unit_test(grid_near_uint64_max_terminates),
        cmocka_unit_test(sweep_top_is_four_llc_power_of_two_capped),
        cmocka_unit_test(sweep_top_key_overrides_the_rule),
        cmocka_unit_test(sweep_grid_sparse_past_twice_the_llc),
        cmocka_unit_test(sweep_order_largest_pages_first),
        cmocka_unit_test(page_plateau_needs_two_flat_steps_past_the_llc),
        cmocka_unit_test(caches_from_cpuid_pick_data_levels),
        cmocka_unit_test(placed_bytes_quarter_l2_whole_iterations),
        cmocka_unit_test(evict_bytes_twice_capacity_capped_by_l3),
        cmocka_unit_test(dram_bytes_scales_with_llc_and_caps),
        cmocka_unit_test(fresh_max_set_by_the_rebuild_cost),
        cmocka_unit_test(l1_bytes_half_l1),
        cmocka_unit_test(pick_cpus_all_or_evenly_spread),
        cmocka_unit_test(loaded_delays_start_at_full_load),
        cmocka_unit_test(table2_rows_and_reference_text),
        cmocka_unit_test(shares_cache_by_apic_id),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
