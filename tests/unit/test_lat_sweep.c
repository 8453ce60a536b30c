/* test_lat_sweep.c - the sweep's reference series, plateau lookup and Table 2 vs sweep cross-check on curves
 * from real runs (tests/fixtures/sweeps, extracted from logs by extract.py there). */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "tests/unit/bw_fake_platform.h"
#include "bench/lat_sweep.h"
#include "bench/lat_plan.h"
#include "bench/lat_common.h"
#include "bench/crosscheck.h"
#include "measure/knee.h"
#include "measure/verdict.h"
#include "measure/stats_json.h"

#define MAX_CURVES 4
#define MAX_ROWS 8

struct fixture {
    uint64_t cache[3]; /* CPUID L1, L2, L3 */
    struct lat_sweep_curve c[MAX_CURVES];
    uint64_t bytes[MAX_CURVES][LAT_MAX_POINTS];
    double ns[MAX_CURVES][LAT_MAX_POINTS];
    size_t nc;
    struct {
        char source[32];
        uint64_t footprint;
        double ns;
    } row[MAX_ROWS];
    size_t nrow;
};

static const char *fixtures_root(void)
{
    const char *env = getenv("PMB_SWEEP_FIXTURES");
    return env && *env ? env : "tests/fixtures/sweeps";
}

static void load(struct fixture *f, const char *name)
{
    char path[512], line[256];
    snprintf(path, sizeof(path), "%s/%s", fixtures_root(), name);
    FILE *in = fopen(path, "r");
    if (!in)
        fail_msg("fixture %s missing (run from the repo root or set PMB_SWEEP_FIXTURES)", path);
    memset(f, 0, sizeof(*f));
    while (fgets(line, sizeof(line), in)) {
        unsigned long long page, b;
        double ns, spread;
        char src[32];
        if (!strncmp(line, "cpuid ", 6)) {
            unsigned long long v[3] = {0};
            sscanf(line, "cpuid L1 %llu L2 %llu L3 %llu", &v[0], &v[1], &v[2]);
            for (int i = 0; i < 3; i++)
                f->cache[i] = v[i];
        } else if (sscanf(line, "point random %llu %llu %lf %lf", &page, &b, &ns, &spread) == 4) {
            size_t k = 0;
            while (k < f->nc && f->c[k].page_bytes != page)
                k++;
            if (k == f->nc) {
                assert_true(f->nc < MAX_CURVES);
                f->c[k] = (struct lat_sweep_curve){.mode = "random", .random = true, .page_bytes = page,
                                                   .bytes = f->bytes[k], .ns = f->ns[k], .clock_steady = true};
                f->nc++;
            }
            assert_true(f->c[k].n < LAT_MAX_POINTS);
            f->bytes[k][f->c[k].n] = b;
            f->ns[k][f->c[k].n] = ns;
            f->c[k].n++;
        } else if (sscanf(line, "row %31s %llu %lf", src, &b, &ns) == 3) {
            assert_true(f->nrow < MAX_ROWS);
            snprintf(f->row[f->nrow].source, sizeof(f->row[0].source), "%s", src);
            f->row[f->nrow].footprint = b;
            f->row[f->nrow].ns = ns;
            f->nrow++;
        }
    }
    fclose(in);
    assert_true(f->nc > 0);
}

/* The fake platform's CPUID caches from the fixture, a fresh ledger and record list, full profile (4 points per
 * octave, so sizes are judged). */
static void setup(const struct fixture *f)
{
    fake_reset();
    ledger_reset();
    crosscheck_reset();
    FAKE.cfg.quick = false;
    FAKE.echo = getenv("PMB_TEST_ECHO") != NULL;
    memset(&FAKE.cpu, 0, sizeof(FAKE.cpu));
    for (int i = 0; i < 3; i++)
        FAKE.cpu.caches[i] = (struct cpu_cache){.level = (uint8_t)(i + 1),
                                                .type = i ? CPU_CACHE_UNIFIED : CPU_CACHE_DATA,
                                                .bytes = (uint32_t)f->cache[i]};
    FAKE.cpu.n_caches = 3;
}

static size_t curve_of(const struct fixture *f, uint64_t page)
{
    for (size_t k = 0; k < f->nc; k++)
        if (f->c[k].page_bytes == page)
            return k;
    fail_msg("no %llu-byte series in the fixture", (unsigned long long)page);
    return 0;
}

/* The Table 2 row `source` of the fixture entered in the ledger and cross-checked against the sweep, as
 * lat_table2.c does. Returns 1 agrees, 0 disagrees, -1 not judged; *rec gets the crosscheck record. */
static int check_row(const struct fixture *f, const char *source, const char **rec)
{
    for (size_t i = 0; i < f->nrow; i++) {
        if (strcmp(f->row[i].source, source))
            continue;
        char fig[64];
        snprintf(fig, sizeof(fig), "data_source/%s", source);
        struct stats st = stats_derived(f->row[i].ns);
        ledger_add(fig, UNIT_NS, &st, QUALITY_OK);
        int r = lat_sweep_crosscheck(source, fig, f->row[i].footprint);
        *rec = fake_find("crosscheck", fig, 0);
        assert_non_null(*rec);
        return r;
    }
    fail_msg("no row %s in the fixture", source);
    return -2;
}

static void assert_has(const char *rec, const char *needle)
{
    if (!rec || !strstr(rec, needle))
        fail_msg("expected %s in %s", needle, rec ? rec : "(null)");
}

/* Xeon, 16 CPUs: the 2 MiB series ran disturbed (L1 plateau 1.89 ns against 1.67 ns in the series before; its
 * knees at 16 KiB and 512 KiB). The reference must be the steady 4 KiB series, where the L1 row (24 KiB, 1.67
 * ns) lies on the 1.67 ns plateau, not the 6.2 ns one. */
static void test_xeon_all16_disturbed_series(void **state)
{
    (void)state;
    static struct fixture f;
    load(&f, "xeon-emr-all16.txt");
    setup(&f);
    bool disturbed = true;
    const char *why = "x";
    size_t best = lat_sweep_pick_reference(f.c, f.nc, &disturbed, &why);
    assert_int_equal(best, curve_of(&f, 4096));
    assert_false(disturbed);
    assert_null(why);

    lat_sweep_infer(f.c, f.nc);
    assert_has(fake_find("sweep_reference", "\"page_bytes\":2097152", 0), "\"disturbed\":true");
    assert_has(fake_find("sweep_reference", "\"page_bytes\":2097152", 0), "\"reference\":false");
    assert_has(fake_find("sweep_reference", "\"page_bytes\":4096", 0), "\"reference\":true");
    /* L1 48 KiB by CPUID: the 4 KiB curve's L1 plateau ends at 44 KiB (the 2 MiB curve's at 16 KiB) */
    const char *l1 = fake_find("cache_inferred", "\"level\":1", 0);
    assert_has(l1, "\"agrees\":true");
    assert_has(l1, "\"page_bytes\":4096");

    const char *rec;
    assert_int_equal(check_row(&f, "L1", &rec), 1);
    assert_has(rec, "\"b\":\"latency_plateau/random/4096/0\"");
    assert_int_equal(check_row(&f, "L2", &rec), 1);
    assert_has(rec, "\"b\":\"latency_plateau/random/4096/1\"");
    assert_int_equal(check_row(&f, "L3_unshared", &rec), 1); /* 4.4 MiB: on the 2.8-9.5 MiB plateau */
    assert_has(rec, "\"b\":\"latency_plateau/random/4096/2\"");
}

/* The same disturbed 2 MiB curve alone (nothing to compare it with): the L1 row's 24 KiB footprint lies in the
 * rise between its L1 plateau (to 16 KiB) and the next, so the row is not judged, rather than judged against the
 * 6.2 ns plateau as the knee-only lookup did. */
static void test_xeon_all16_row_in_a_rise_is_not_judged(void **state)
{
    (void)state;
    static struct fixture f;
    load(&f, "xeon-emr-all16.txt");
    setup(&f);
    size_t k = curve_of(&f, MiB(2));
    lat_sweep_infer(&f.c[k], 1);
    const char *rec;
    assert_int_equal(check_row(&f, "L1", &rec), -1);
    assert_has(rec, "\"agrees\":null");
    assert_has(rec, "lies in the rise between plateau 0");
    const char *why = NULL;
    assert_null(lat_sweep_plateau_at(24576, &why));
    assert_non_null(why);
    assert_non_null(lat_sweep_plateau_at(8192, &why)); /* inside its L1 plateau */
}

/* Xeon, one CPU: every series steady; the 2 MiB series is the reference and the L1 row agrees with it. */
static void test_xeon_cpu2(void **state)
{
    (void)state;
    static struct fixture f;
    load(&f, "xeon-emr-cpu2.txt");
    setup(&f);
    bool disturbed = true;
    const char *why;
    assert_int_equal(lat_sweep_pick_reference(f.c, f.nc, &disturbed, &why), curve_of(&f, MiB(2)));
    assert_false(disturbed);
    lat_sweep_infer(f.c, f.nc);
    assert_has(fake_find("cache_inferred", "\"level\":1", 0), "\"agrees\":true");
    assert_has(fake_find("cache_inferred", "\"level\":2", 0), "\"agrees\":true");
    const char *rec;
    assert_int_equal(check_row(&f, "L1", &rec), 1);
    assert_int_equal(check_row(&f, "L2", &rec), 1);
    assert_int_equal(check_row(&f, "L3_unshared", &rec), 1);
    assert_has(rec, "\"b\":\"latency_plateau/random/2097152/2\"");
}

/* This project's AMD EPYC (Zen 4) KVM guest, full profile: L3_unshared (2.19 MiB footprint) on the L3 plateau. */
static void test_epyc_full(void **state)
{
    (void)state;
    static struct fixture f;
    load(&f, "epyc-zen4-full.txt");
    setup(&f);
    lat_sweep_infer(f.c, f.nc);
    const char *rec;
    assert_int_equal(check_row(&f, "L1", &rec), 1);
    assert_int_equal(check_row(&f, "L2", &rec), 1);
    assert_int_equal(check_row(&f, "L3_unshared", &rec), 1);
    assert_has(rec, "\"b\":\"latency_plateau/random/2097152/2\"");
}

/* Quick profile (1 point per octave) on the same machine: the curve has no L3 plateau; the memory plateau starts
 * above the row's footprint, so L3_unshared is not judged (the knee-only lookup judged it against memory). */
static void test_epyc_quick_missing_l3_plateau(void **state)
{
    (void)state;
    static struct fixture f;
    load(&f, "epyc-zen4-quick.txt");
    setup(&f);
    FAKE.cfg.quick = true;
    lat_sweep_infer(f.c, f.nc);
    const char *rec;
    assert_int_equal(check_row(&f, "L3_unshared", &rec), -1);
    assert_has(rec, "lies in the rise between plateau");
    assert_has(rec, "\"suspect\":[]");
    assert_int_equal(check_row(&f, "L1", &rec), 1);
}

/* A series whose core/TSC ratio drifted is no reference while a steady one exists; alone, it is the reference
 * but disturbed, and its plateaus are suspect. */
static void test_clock_drift_flags_series(void **state)
{
    (void)state;
    static struct fixture f;
    load(&f, "xeon-emr-cpu2.txt");
    setup(&f);
    size_t big = curve_of(&f, MiB(2)), small = curve_of(&f, 4096);
    f.c[big].clock_steady = false;
    bool disturbed = true;
    const char *why;
    assert_int_equal(lat_sweep_pick_reference(f.c, f.nc, &disturbed, &why), small);
    assert_false(disturbed);
    f.c[small].clock_steady = false;
    assert_int_equal(lat_sweep_pick_reference(f.c, f.nc, &disturbed, &why), big);
    assert_true(disturbed);
    assert_non_null(strstr(why, "core/TSC ratio drifted"));
    lat_sweep_infer(f.c, f.nc);
    assert_has(fake_find("latency_plateau", "\"index\":0", 0), "\"quality\":\"suspect\"");
}

/* A load latency under a core cycle per load is suspect, with the reason (lat_result_judge): a dependent chain
 * that fast did not wait for each load. */
static void test_sub_cycle_load_is_suspect(void **state)
{
    (void)state;
    fake_reset();
    FAKE.cfg.quick = false;
    double t[11];
    struct lat_result r;
    struct stats st;
    for (int i = 0; i < 11; i++)
        t[i] = 0.35;
    stats_compute(t, 11, &st);
    lat_result_from(&r, &st, 1.423, "test");
    r.converged = true;
    lat_result_judge(&r);
    assert_int_equal(r.v.q, QUALITY_SUSPECT);
    assert_non_null(strstr(r.v.reason, "under 1"));
    for (int i = 0; i < 11; i++)
        t[i] = 3.0;
    stats_compute(t, 11, &st);
    lat_result_from(&r, &st, 1.423, "test");
    r.converged = true;
    lat_result_judge(&r);
    assert_int_equal(r.v.q, QUALITY_OK);
}

/* A fresh fake platform for lat_sweep_run: 1 ms budgets, sweep capped at max_bytes, no 1 GiB pages, a 32 KiB
 * L1 as the only CPUID cache. */
static void setup_small_sweep(bool quick, uint64_t max_bytes)
{
    fake_reset();
    ledger_reset();
    crosscheck_reset();
    FAKE.cfg.quick = quick;
    FAKE.cfg.time_budget_ms = 1;
    FAKE.cfg.max_bytes = max_bytes;
    FAKE.fail_page = GiB(1);
    memset(&FAKE.cpu, 0, sizeof(FAKE.cpu));
    FAKE.cpu.caches[0] = (struct cpu_cache){.level = 1, .type = CPU_CACHE_DATA, .bytes = KiB(32)};
    FAKE.cpu.n_caches = 1;
}

/* A series whose core/TSC ratio moved beyond 5 % between its start and its end is measured again: the fake
 * clock reads 1.0 on the benchmark CPU's first call and 1.2 on every later one, so the first series run (the
 * 2 MiB one: largest pages first) drifts once (1.0 -> 1.2), is measured again at a steady 1.2 and says tries 2;
 * the 4 KiB series, run next, is steady at once. The records follow the run order. */
static void test_drifting_series_is_measured_again(void **state)
{
    (void)state;
    setup_small_sweep(true, KiB(64));
    FAKE.clock[0] = (struct core_clock){.ratio = 1.0, .method = "add_rr_chain"};
    FAKE.clock_calls = 0;
    FAKE.clock_drift = 0.2;
    lat_sweep_run();
    FAKE.clock_drift = 0;
    FAKE.clock[0].ratio = 0;
    FAKE.cfg.max_bytes = 0;
    FAKE.fail_page = 0;
    const char *first = fake_find("latency_series", "\"page_bytes_requested\":2097152", 0);
    assert_ptr_equal(first, fake_find("latency_series", NULL, 0));
    assert_has(first, "\"tries\":2");
    assert_has(first, "\"clock_steady\":true");
    assert_has(first, "\"core_tsc_ratio_start\":1.2");
    const char *second = fake_find("latency_series", "\"page_bytes_requested\":4096", 0);
    assert_ptr_equal(second, fake_find("latency_series", NULL, 1));
    assert_has(second, "\"tries\":1");
    assert_has(second, "\"clock_drift\":0");
    assert_non_null(fake_text_find("measured again"));
    /* the points of the first series are written once, from the kept try */
    size_t n2m = 0;
    for (size_t i = 0; fake_find("latency_sweep", "\"page_bytes\":2097152", i); i++)
        n2m++;
    const char *pts = strstr(first, "\"points\":");
    assert_non_null(pts);
    assert_int_equal(n2m, strtoul(pts + 9, NULL, 10));
}

static uint64_t rec_uint(const char *rec, const char *key)
{
    const char *p = rec ? strstr(rec, key) : NULL;
    if (!p)
        fail_msg("no %s in %s", key, rec ? rec : "(null)");
    return strtoull(p + strlen(key), NULL, 10);
}

static double rec_double(const char *rec, const char *key)
{
    const char *p = rec ? strstr(rec, key) : NULL;
    if (!p)
        fail_msg("no %s in %s", key, rec ? rec : "(null)");
    return strtod(p + strlen(key), NULL);
}

/* A plateau's figure counts the points of its own [from, to] range (knee_level from/to), with an interval that
 * holds its latency and the worst verdict of those points; the DRAM rows' footprint (8 x the LLC, above the
 * sweep's top) is judged against the last plateau when that one is flat up to the top, on 2 MiB pages only. */
static void test_plateau_figures_and_dram_lookup(void **state)
{
    (void)state;
    static struct fixture f;
    static enum quality q[LAT_MAX_POINTS];
    load(&f, "epyc-zen4-full.txt");
    setup(&f);
    size_t k = curve_of(&f, MiB(2));
    struct lat_sweep_curve c = f.c[k];
    while (c.n && c.bytes[c.n - 1] > 79806336) /* the curve up to 76 MiB: it ends on the memory plateau */
        c.n--;
    for (size_t i = 0; i < c.n; i++)
        q[i] = QUALITY_OK;
    q[c.n - 1] = QUALITY_NOISY; /* one noisy point on the last plateau */
    c.q = q;
    lat_sweep_infer(&c, 1);
    size_t nplat = 0;
    const char *rec, *last = NULL;
    for (size_t i = 0; (rec = fake_find("latency_plateau", "\"figure\"", i)); i++, nplat++) {
        uint64_t from = rec_uint(rec, "\"bytes_from\":"), to = rec_uint(rec, "\"bytes_to\":");
        size_t in = 0;
        for (size_t j = 0; j < c.n; j++)
            in += c.bytes[j] >= from && c.bytes[j] <= to;
        assert_true(in >= 3);
        assert_int_equal(rec_uint(rec, "\"n\":"), in);
        double m = rec_double(rec, "\"median\":");
        assert_true(rec_double(rec, "\"ci_lo\":") <= m && m <= rec_double(rec, "\"ci_hi\":"));
        last = rec;
    }
    assert_true(nplat >= 3);
    assert_int_equal(rec_uint(last, "\"bytes_to\":"), c.bytes[c.n - 1]);
    assert_has(last, "\"quality\":\"noisy\"");
    assert_has(fake_find("latency_plateau", "\"index\":0", 0), "\"quality\":\"ok\"");
    char name[64];
    snprintf(name, sizeof(name), "latency_plateau/random/2097152/%zu", nplat - 1);
    const char *why = NULL;
    assert_null(lat_sweep_plateau_at(MiB(256), &why)); /* above the last plateau's range */
    assert_non_null(strstr(why, "above the last plateau"));
    const char *b = lat_sweep_dram_plateau(MiB(256), &why);
    assert_non_null(b);
    assert_string_equal(b, name);
    /* the same curve on 4 KiB pages: a random chain that walks on every load is not the DRAM rows' quantity */
    c.page_bytes = 4096;
    fake_reset();
    setup(&f);
    lat_sweep_infer(&c, 1);
    why = NULL;
    assert_null(lat_sweep_dram_plateau(MiB(256), &why));
    assert_non_null(strstr(why, "4 KiB pages"));
}

/* The full profile's replicates (9, measured in 9 passes over the grid): each point's replicate k sits at
 * lat_rep_offset(top, bytes, page, k, 9) of its series' buffer, aligned to the series' page, inside the buffer,
 * replicate 0 at the start; a series whose page leaves no aligned room (2 MiB pages over a 128 KiB top) keeps
 * every replicate at the start, and the 4 KiB series' small points get 9 distinct offsets. */
static void test_replicates_at_their_own_offsets(void **state)
{
    (void)state;
    setup_small_sweep(false, KiB(128));
    lat_sweep_run();
    FAKE.cfg.max_bytes = 0;
    FAKE.fail_page = 0;
    FAKE.cfg.quick = true;
    struct cache_sizes cs; /* of the fake CPU still */
    cache_sizes_from_cpuid(plat_cpuinfo(), &cs);
    uint64_t fresh_max = lat_fresh_max_bytes(&cs);
    size_t points = 0, distinct9 = 0;
    for (size_t i = 0;; i++) {
        const char *r = fake_find("latency_sweep", "\"replicate_offsets\":[", i);
        if (!r)
            break;
        uint64_t bytes = rec_uint(r, "\"bytes\":"), page = rec_uint(r, "\"page_bytes\":");
        char needle[64];
        snprintf(needle, sizeof(needle), "\"page_bytes\":%llu", (unsigned long long)page);
        uint64_t top = rec_uint(fake_find("latency_series", needle, 0), "\"top_bytes\":");
        const char *p = strstr(r, "\"replicate_offsets\":[") + strlen("\"replicate_offsets\":[");
        uint64_t off[9];
        size_t n = 0;
        while (*p != ']') {
            assert_true(n < 9);
            char *end;
            off[n++] = strtoull(p, &end, 10);
            p = *end == ',' ? end + 1 : end;
        }
        if (bytes > fresh_max) { /* measured whole, on its one chain at the start */
            assert_int_equal(n, 1);
            assert_int_equal(off[0], 0);
            continue;
        }
        assert_int_equal(n, 9); /* measured apart in the 9 passes */
        bool distinct = true;
        for (size_t k = 0; k < n; k++) {
            assert_int_equal(off[k], lat_rep_offset(top, bytes, page, k, 9));
            assert_int_equal(off[k] % page, 0);
            assert_true(off[k] + bytes <= top);
            for (size_t m = 0; m < k; m++)
                distinct = distinct && off[k] != off[m];
        }
        assert_int_equal(off[0], 0);
        if (page == MiB(2))
            for (size_t k = 0; k < n; k++)
                assert_int_equal(off[k], 0);
        if (page == 4096 && bytes <= top - 8 * 4096)
            assert_true(distinct);
        distinct9 += distinct;
        points++;
    }
    assert_true(points > 20);
    assert_true(distinct9 > 10);
}

/* A sweep of L1 5 cycles, L2 16, L3 70, memory 300 on 2 MiB pages, timed at 2.1 GHz TSC x core/TSC 1.76. */
static void setup_cycles_sweep(void)
{
    static struct fixture f;
    static double cyc[LAT_MAX_POINTS];
    memset(&f, 0, sizeof(f));
    f.cache[0] = KiB(48), f.cache[1] = MiB(2), f.cache[2] = MiB(32);
    struct lat_sweep_curve *c = &f.c[0];
    *c = (struct lat_sweep_curve){.mode = "random", .random = true, .page_bytes = MiB(2), .bytes = f.bytes[0],
                                  .ns = f.ns[0], .cycles = cyc, .clock_steady = true};
    f.nc = 1;
    uint64_t grid[LAT_MAX_POINTS];
    size_t n = lat_size_grid(KiB(1), MiB(128), 4, 64, grid, LAT_MAX_POINTS);
    for (size_t i = 0; i < n; i++) {
        double cycles = grid[i] <= KiB(32) ? 5 : grid[i] <= MiB(1) ? 16 : grid[i] <= MiB(16) ? 70 : 300;
        f.bytes[0][i] = grid[i];
        f.ns[0][i] = cycles / (2.1 * 1.76);
        cyc[i] = cycles;
    }
    c->n = n;
    setup(&f);
    lat_sweep_infer(f.c, f.nc);
}

/* A server whose core clock moved between the sweep and the rows (turbo bins on the 16-core Xeon in bench=all:
 * core/TSC 1.62-1.63 over the reference series, 1.48 at the L1 row, whose 1.562 ns against the plateau's 1.351 ns
 * disagreed by 16 %). Here the sweep runs at 1.76: in ns the two differ by 16 %, in core cycles, each side
 * converted with its own time's ratio, both are about 5. The core clock's levels are judged in cycles. */
static void test_core_clock_levels_judged_in_cycles(void **state)
{
    (void)state;
    setup_cycles_sweep();
    /* the L1 row at 24 KiB, timed at core/TSC 1.476: 4.84 cycles, 1.562 ns */
    struct stats st = stats_derived(1.562);
    ledger_add("data_source/L1", UNIT_NS, &st, QUALITY_OK);
    assert_int_equal(lat_sweep_crosscheck_cycles("L1", "data_source/L1", KiB(24), 4.84, NULL), 1);
    const char *rec = fake_find("crosscheck", "data_source/L1", 0);
    assert_has(rec, "\"unit\":\"cycles\"");
    assert_has(rec, "\"agrees\":true");
    assert_has(rec, "a level on the core clock");
    /* the same pair in ns disagrees: what the cycles comparison is for */
    crosscheck_reset();
    assert_int_equal(lat_sweep_crosscheck("L1", "data_source/L1", KiB(24)), 0);
    /* without the row's cycles: the ns comparison */
    fake_reset();
    assert_int_equal(lat_sweep_crosscheck_cycles("L1", "data_source/L1", KiB(24), 0, NULL), 0);
    assert_has(fake_find("crosscheck", "data_source/L1", 0), "\"unit\":\"ns\"");
}

/* A figure in the ledger in `unit` with median v, quality ok (replaces an earlier entry and its marks). */
static void ledger_ok(const char *name, const char *unit, double v)
{
    struct stats st = stats_derived(v);
    ledger_add(name, unit, &st, QUALITY_OK);
}

/* The Table 2 L1 row (row_cycles) against the sweep's 5-cycle plateau at 24 KiB, with penalty l1_hit as the third
 * measurement (l1_hit <= 0: the penalty benchmark did not run). The check waits for the end of the run; *rec gets
 * its record. */
static int judge_l1(double row_cycles, double l1_hit, const char **rec, const char **plateau)
{
    double pc = 0;
    fake_reset();
    crosscheck_reset();
    ledger_reset();
    *plateau = lat_sweep_plateau_cycles(KiB(24), &pc);
    assert_non_null(*plateau);
    assert_true(pc > 4.99 && pc < 5.01);
    ledger_ok(*plateau, UNIT_NS, 5 / (2.1 * 1.76));
    ledger_ok("data_source/L1", UNIT_NS, row_cycles / (2.1 * 1.48));
    assert_int_equal(lat_sweep_crosscheck_cycles("L1", "data_source/L1", KiB(24), row_cycles, XC_THIRD_L1_CYCLES),
                     XC_DEFERRED);
    assert_null(fake_find("crosscheck", "data_source/L1", 0)); /* not judged before the end of the run */
    if (l1_hit > 0)
        ledger_ok(XC_THIRD_L1_CYCLES, UNIT_CYCLES, l1_hit); /* the penalty benchmark, later in the run */
    assert_int_equal(crosscheck_run_deferred(), 1);
    *rec = fake_find("crosscheck", "data_source/L1", 0);
    assert_non_null(*rec);
    assert_has(*rec, "\"third\":\"penalty/l1_hit\"");
    assert_has(*rec, "\"unit\":\"cycles\"");
    size_t judged, agree;
    crosscheck_counts(NULL, &judged, &agree);
    assert_int_equal(judged, 1);
    return (int)agree;
}

/* Third-measurement blame for the core clock's levels (docs/measurement.md "Cross-checks"): where the row and the
 * sweep plateau disagree, penalty l1_hit (a dependent load hitting L1D, in cycles, from a later benchmark) blames
 * only the side it contradicts; with no third, or one that agrees with neither, both are blamed. */
static void test_third_measurement_blames_one_side(void **state)
{
    (void)state;
    setup_cycles_sweep();
    const char *rec, *pl;
    char want[160];
    /* agreement: nothing marked, the third's value still recorded */
    assert_int_equal(judge_l1(4.84, 5.0, &rec, &pl), 1);
    assert_has(rec, "\"agrees\":true");
    assert_has(rec, "\"third_value\":5");
    assert_has(rec, "\"suspect\":[]");
    /* the row is off (6.5 cycles), l1_hit agrees with the plateau (5.1): only the row is blamed */
    assert_int_equal(judge_l1(6.5, 5.1, &rec, &pl), 0);
    assert_has(rec, "\"suspect\":[\"data_source/L1\"]");
    assert_has(rec, "penalty/l1_hit (5.1) agrees with latency_plateau/");
    assert_has(rec, "contradicts data_source/L1: only data_source/L1 is blamed");
    assert_int_equal(ledger_find("data_source/L1")->q, QUALITY_SUSPECT);
    assert_int_equal(ledger_find(pl)->q, QUALITY_OK);
    assert_int_equal(ledger_find(XC_THIRD_L1_CYCLES)->q, QUALITY_OK); /* the third is never marked */
    /* the plateau is off: l1_hit agrees with the row (6.5 vs 6.4), only the plateau is blamed */
    assert_int_equal(judge_l1(6.5, 6.4, &rec, &pl), 0);
    snprintf(want, sizeof(want), "\"suspect\":[\"%s\"]", pl);
    assert_has(rec, want);
    assert_int_equal(ledger_find("data_source/L1")->q, QUALITY_OK);
    assert_int_equal(ledger_find(pl)->q, QUALITY_SUSPECT);
    /* the penalty benchmark did not run: no third, both blamed */
    assert_int_equal(judge_l1(6.5, 0, &rec, &pl), 0);
    assert_has(rec, "\"third_value\":null");
    snprintf(want, sizeof(want), "\"suspect\":[\"data_source/L1\",\"%s\"]", pl);
    assert_has(rec, want);
    /* a third between the two, within tolerance of both (5.75: 6.5 is +13 %, 5 is -13 %): it cannot say, both */
    assert_int_equal(judge_l1(6.5, 5.75, &rec, &pl), 0);
    assert_has(rec, want);
    /* a third whose own final verdict is suspect (here l1_hit, blamed elsewhere) decides nothing: both */
    assert_int_equal(judge_l1(6.5, 5.1, &rec, &pl), 0);
    assert_has(rec, "\"suspect\":[\"data_source/L1\"]"); /* (usable: only the row) */
    fake_reset();
    crosscheck_reset();
    ledger_ok("data_source/L1", UNIT_NS, 6.5 / (2.1 * 1.48));
    ledger_ok(pl, UNIT_NS, 5 / (2.1 * 1.76));
    ledger_ok(XC_THIRD_L1_CYCLES, UNIT_CYCLES, 5.1);
    ledger_mark_suspect(XC_THIRD_L1_CYCLES, "another check");
    lat_sweep_crosscheck_cycles("L1", "data_source/L1", KiB(24), 6.5, XC_THIRD_L1_CYCLES);
    crosscheck_run_deferred();
    rec = fake_find("crosscheck", "data_source/L1", 0);
    assert_has(rec, "\"third_value\":null");
    assert_has(rec, want);
    assert_has(rec, "penalty/l1_hit is suspect itself and decides nothing");
    /* a third that agrees with neither (9 cycles): both */
    assert_int_equal(judge_l1(6.5, 9, &rec, &pl), 0);
    assert_has(rec, want);
    assert_int_equal(ledger_find("data_source/L1")->q, QUALITY_SUSPECT);
    assert_int_equal(ledger_find(pl)->q, QUALITY_SUSPECT);

    /* L2: the third is a value the penalty benchmark published (its l2_hit chase's full latency), not a figure */
    double pc = 0;
    fake_reset();
    crosscheck_reset();
    const char *pl2 = lat_sweep_plateau_cycles(KiB(384), &pc);
    assert_non_null(pl2);
    assert_true(pc > 15.99 && pc < 16.01);
    ledger_ok(pl2, UNIT_NS, 16 / (2.1 * 1.76));
    ledger_ok("data_source/L2", UNIT_NS, 22 / (2.1 * 1.48));
    assert_int_equal(lat_sweep_crosscheck_cycles("L2", "data_source/L2", KiB(384), 22, XC_THIRD_L2_CYCLES),
                     XC_DEFERRED);
    crosscheck_note(XC_THIRD_L2_CYCLES, 16.3, UNIT_CYCLES);
    assert_int_equal(crosscheck_run_deferred(), 1);
    rec = fake_find("crosscheck", "data_source/L2", 0);
    assert_has(rec, "\"third\":\"penalty/l2_hit.latency_cycles\",\"third_value\":16.3");
    assert_has(rec, "\"suspect\":[\"data_source/L2\"]");
    assert_int_equal(ledger_find(pl2)->q, QUALITY_OK);
    /* a noted value in another unit is no third */
    fake_reset();
    crosscheck_reset();
    ledger_ok("data_source/L2", UNIT_NS, 22 / (2.1 * 1.48));
    crosscheck_note(XC_THIRD_L2_CYCLES, 16.3, UNIT_NS);
    assert_int_equal(lat_sweep_crosscheck_cycles("L2", "data_source/L2", KiB(384), 22, XC_THIRD_L2_CYCLES),
                     XC_DEFERRED);
    crosscheck_run_deferred();
    rec = fake_find("crosscheck", "data_source/L2", 0);
    assert_has(rec, "\"third_value\":null");
    snprintf(want, sizeof(want), "\"suspect\":[\"data_source/L2\",\"%s\"]", pl2);
    assert_has(rec, want);
    /* crosscheck_reset drops what was kept: nothing is judged twice */
    lat_sweep_crosscheck_cycles("L2", "data_source/L2", KiB(384), 22, XC_THIRD_L2_CYCLES);
    crosscheck_reset();
    assert_int_equal(crosscheck_run_deferred(), 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_xeon_all16_disturbed_series),
        cmocka_unit_test(test_xeon_all16_row_in_a_rise_is_not_judged),
        cmocka_unit_test(test_xeon_cpu2),
        cmocka_unit_test(test_epyc_full),
        cmocka_unit_test(test_epyc_quick_missing_l3_plateau),
        cmocka_unit_test(test_clock_drift_flags_series),
        cmocka_unit_test(test_sub_cycle_load_is_suspect),
        cmocka_unit_test(test_drifting_series_is_measured_again),
        cmocka_unit_test(test_plateau_figures_and_dram_lookup),
        cmocka_unit_test(test_replicates_at_their_own_offsets),
        cmocka_unit_test(test_core_clock_levels_judged_in_cycles),
        cmocka_unit_test(test_third_measurement_blames_one_side),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
