/* test_clock.c - the core clock per CPU and per benchmark and the clock cross-checks (bench/clock.c) on the fake platform, with scripted clocks. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "bench/clock.h"
#include "bench/lat_common.h"
#include "bench/crosscheck.h"
#include "measure/verdict.h"
#include "tests/unit/bw_fake_platform.h"

/* A measured core clock: both chains at `add` and `imul` cycles per tick, the add chain's ratio used. */
static struct core_clock clock_of(double add, double imul, const char *suspect)
{
    struct core_clock c;
    memset(&c, 0, sizeof(c));
    c.chain[CORE_CHAIN_ADD] = (struct core_chain_ratio){.valid = add > 0, .ratio = add, .n = 7, .latency = 1};
    c.chain[CORE_CHAIN_IMUL] = (struct core_chain_ratio){.valid = imul > 0, .ratio = imul, .n = 7, .latency = imul > 0 ? 3 : 0};
    c.suspect = suspect;
    c.ratio = suspect && !strcmp(suspect, "add_rr_chain") ? imul : add;
    c.method = suspect && !strcmp(suspect, "add_rr_chain") ? "imul_chain" : "add_rr_chain";
    c.agree = imul > 0 ? !suspect : -1;
    return c;
}

static void setup(unsigned ncpus)
{
    fake_reset();
    ledger_reset();
    crosscheck_reset();
    clock_reset();
    FAKE.ncpus = ncpus;
    FAKE.tsc_hz = 2000000000ull;
    FAKE.ratio = 1.25; /* the platform's start-up ratio */
    FAKE.clock_calls = 0;
    FAKE.clock_drift = 0;
    memset(FAKE.clock, 0, sizeof(FAKE.clock));
    FAKE.ntsc_src = 0;
}

/* The ratio of a figure from its replicates' own ratios (clock_ratio_combine): the median, and an uncertainty
 * that covers how they disagree. */
static void test_ratio_combine(void **state)
{
    (void)state;
    double u;
    /* nine replicates on the test box: one 26-tick step apart (1.42247 .. 1.42327), reading u 1.13e-3 each */
    double steady[9] = {1.42294, 1.42247, 1.42327, 1.42294, 1.42294, 1.42247, 1.42327, 1.42294, 1.42294};
    double ru[9];
    for (int i = 0; i < 9; i++)
        ru[i] = 1.13e-3;
    assert_true(clock_ratio_combine(steady, ru, 9, &u) == 1.42294);
    assert_true(fabs(u - (1.42294 - 1.42247) / 1.42294 - 1.13e-3) < 1e-12);
    /* one replicate's ratio taken in a slow moment (its host core shared): not the median, and beyond the
     * interval's rank (x[1]..x[7] of 9) it does not widen u */
    double slow[9];
    memcpy(slow, steady, sizeof(slow));
    slow[4] = 1.3176;
    assert_true(clock_ratio_combine(slow, ru, 9, &u) == 1.42294);
    assert_true(u < 2e-3);
    /* the clock moved between the replicates (four at 1.38, five at 1.42294): the median is one of them and u
     * covers the other */
    double moved[9] = {1.38, 1.38, 1.38, 1.38, 1.42294, 1.42294, 1.42294, 1.42294, 1.42294};
    double m = clock_ratio_combine(moved, ru, 9, &u);
    assert_true(m == 1.42294);
    assert_true(m * (1 - u) <= 1.38);
    /* a replicate converted with the benchmark's ratio (u not stated: its chain was never clean) is left out
     * while others were read; alone, such ratios are used */
    double mixed[3] = {1.35, 1.42294, 1.42327};
    double mu[3] = {__builtin_nan(""), 1.13e-3, 1.13e-3};
    assert_true(clock_ratio_combine(mixed, mu, 3, &u) == 0.5 * (1.42294 + 1.42327));
    double none[2] = {1.35, 1.35};
    double nu[2] = {__builtin_nan(""), 0};
    assert_true(clock_ratio_combine(none, nu, 2, &u) == 1.35 && u == 0);
    assert_true(clock_ratio_combine(none, NULL, 2, &u) == 1.35);
    /* unmeasured (0) ratios are ignored; an even count's median is the mean of the middle two */
    double gaps[5] = {1.42, 1.30, 1.40, 0, 1.41};
    assert_true(clock_ratio_combine(gaps, NULL, 5, &u) == 0.5 * (1.40 + 1.41));
    /* nothing measured */
    double zero[2] = {0, 0};
    assert_true(clock_ratio_combine(zero, ru, 2, &u) == 0 && isnan(u));
}

/* The combined figure names its conversion: after each replicate where more than one chain was read, after the
 * measurement where one was, the benchmark's ratio where none was; a PMU counter stays. */
static void test_cycles_method_combined(void **state)
{
    (void)state;
    double u3[3] = {1e-3, 1e-3, 1e-3}, u1[3] = {__builtin_nan(""), 1e-3, 0}, u0[2] = {__builtin_nan(""), 0};
    assert_string_equal(lat_cycles_method_combined(LAT_CYCLES_AFTER, u3, 3), LAT_CYCLES_AFTER_EACH);
    assert_string_equal(lat_cycles_method_combined("core_tsc_ratio:add_rr_chain", u3, 3), LAT_CYCLES_AFTER_EACH);
    assert_string_equal(lat_cycles_method_combined("core_tsc_ratio:add_rr_chain", u1, 3), LAT_CYCLES_AFTER);
    assert_string_equal(lat_cycles_method_combined("core_tsc_ratio:add_rr_chain", u0, 2),
                        "core_tsc_ratio:add_rr_chain");
    assert_string_equal(lat_cycles_method_combined("fixed_counter:x", u3, 3), "fixed_counter:x");
    /* a chase converted with the steady reference alone says so */
    assert_string_equal(lat_cycles_method_combined(LAT_CYCLES_STEADY, u1, 3), LAT_CYCLES_STEADY);
    assert_string_equal(lat_cycles_method_combined(LAT_CYCLES_STEADY, u3, 3), LAT_CYCLES_AFTER_EACH);
}

/* The chain on this CPU now (the unit tests read the real TSC): a ratio with its reading uncertainty stated, or
 * 0 when no window pair was clean; the steady reference agrees with a single draw within their uncertainties
 * when both read one. */
static void test_chain_ratio_live(void **state)
{
    (void)state;
    setup(1);
    double u = -1, us = -1;
    double r = clock_chain_ratio_now(TIMING_LFENCE, &u);
    double rs = clock_chain_ratio_steady(TIMING_LFENCE, &us);
    assert_true(r >= 0 && rs >= 0);
    if (r > 0)
        assert_true(u > 0 && u < 1 && r > 0.01 && r < 100);
    if (rs > 0)
        assert_true(us > 0 && us < 1);
    else
        assert_true(isnan(us));
    printf("# live: add_rr_chain windows %.5f (u %.2g), steady %.5f (u %.2g)\n", r, u, rs, us);
    /* the steady reference is what a draw without a clean window falls back to; forgotten with the rest */
    double ur = -1;
    assert_true(clock_chain_ratio_ref(&ur) == rs);
    if (rs > 0)
        assert_true(ur == us);
    clock_reset();
    assert_true(clock_chain_ratio_ref(&ur) == 0 && isnan(ur));
}

static void test_ratio_before_and_after_measuring(void **state)
{
    (void)state;
    setup(1);
    const char *m;
    /* nothing measured yet: the platform's start-up ratio */
    assert_true(clock_core_ratio(&m) == 1.25);
    assert_string_equal(m, "core_tsc_ratio:fake");
    FAKE.clock[0] = clock_of(1.5, 1.51, NULL);
    clock_run_start();
    assert_true(clock_core_ratio(&m) == 1.5);
    assert_string_equal(m, "core_tsc_ratio:add_rr_chain");
    const char *r = fake_find("core_clock", "\"when\":\"start\"", 0);
    assert_non_null(r);
    assert_non_null(strstr(r, "\"cpu\":0"));
    assert_non_null(strstr(r, "\"status\":\"ok\""));
    /* the two chains agree within 5 % */
    r = fake_find("crosscheck", "add_rr chain vs imul chain", 0);
    assert_non_null(r);
    assert_non_null(strstr(r, "\"agrees\":true"));
}

static void test_tsc_sources(void **state)
{
    (void)state;
    setup(1);
    FAKE.clock[0] = clock_of(1.5, 1.5, NULL);
    /* one source: stated, not judged */
    FAKE.tsc_src[0] = (struct plat_tsc_source){"acpi_pm_timer", 2000000000ull, 0.001};
    FAKE.ntsc_src = 1;
    clock_run_start();
    const char *r = fake_find("crosscheck", "TSC rate (two sources)", 0);
    assert_non_null(r);
    assert_non_null(strstr(r, "\"agrees\":null,\"reason\":\"the TSC rate has one source only on this platform\""));

    /* three sources: the HPET within 0.5 % of the PM timer agrees, CPUID 1 % off disagrees */
    setup(1);
    FAKE.clock[0] = clock_of(1.5, 1.5, NULL);
    FAKE.tsc_src[0] = (struct plat_tsc_source){"acpi_pm_timer", 2000000000ull, 0.001};
    FAKE.tsc_src[1] = (struct plat_tsc_source){"hpet", 2004000000ull, 0.001};
    FAKE.tsc_src[2] = (struct plat_tsc_source){"cpuid.15h", 2020000000ull, 0};
    FAKE.ntsc_src = 3;
    clock_run_start();
    r = fake_find("crosscheck", "TSC rate (acpi_pm_timer vs hpet)", 0);
    assert_non_null(r);
    assert_non_null(strstr(r, "\"agrees\":true"));
    r = fake_find("crosscheck", "TSC rate (acpi_pm_timer vs cpuid.15h)", 0);
    assert_non_null(r);
    assert_non_null(strstr(r, "\"agrees\":false"));
    assert_non_null(strstr(r, "\"tolerance\":0.005"));
    size_t total, judged, agreeing;
    crosscheck_counts(&total, &judged, &agreeing);
    assert_int_equal(judged, 3); /* two TSC pairs and the chains */
    assert_int_equal(agreeing, 2);
}

static void test_disagreeing_chains_blame_the_faster(void **state)
{
    (void)state;
    setup(1);
    /* an add chain shortcut at rename: it reads 3x the imul chain; the imul chain's ratio is used */
    FAKE.clock[0] = clock_of(4.5, 1.5, "add_rr_chain");
    clock_run_start();
    const char *m;
    assert_true(clock_core_ratio(&m) == 1.5);
    assert_string_equal(m, "core_tsc_ratio:imul_chain");
    const char *r = fake_find("crosscheck", "add_rr chain vs imul chain", 0);
    assert_non_null(r);
    assert_non_null(strstr(r, "\"agrees\":false"));
    assert_non_null(strstr(r, "the higher ratio is the suspect"));
    /* an unknown IMUL latency: timed, not judged, with the reason */
    setup(1);
    FAKE.clock[0] = clock_of(1.5, 0, NULL);
    clock_run_start();
    r = fake_find("crosscheck", "add_rr chain vs imul chain", 0);
    assert_non_null(strstr(r, "\"agrees\":null,\"reason\":\"the IMUL latency of this CPU is not in the table"));
}

static void test_per_cpu_and_per_benchmark(void **state)
{
    (void)state;
    setup(3);
    FAKE.clock[0] = clock_of(1.5, 1.5, NULL);
    FAKE.clock[1] = clock_of(1.52, 1.52, NULL); /* within 5 % */
    FAKE.clock[2] = clock_of(1.2, 1.2, NULL);   /* a CPU 20 % slower */
    clock_run_start();
    assert_int_equal(fake_count("core_clock"), 3);
    const char *r = fake_find("crosscheck", "core/TSC ratio (CPU 1 vs CPU 0)", 0);
    assert_non_null(r);
    assert_non_null(strstr(r, "\"agrees\":true"));
    r = fake_find("crosscheck", "core/TSC ratio (CPU 2 vs CPU 0)", 0);
    assert_non_null(r);
    assert_non_null(strstr(r, "\"agrees\":false"));
    assert_non_null(strstr(r, "\"suspect\":[]")); /* calibrations, not ledger figures: nothing marked */

    /* before a benchmark the benchmark's CPU measures again, and that ratio converts its ticks */
    FAKE.clock_drift = 0.3; /* 20 % faster now */
    clock_bench_start("latency");
    const char *m;
    assert_true(clock_core_ratio(&m) == 1.8);
    r = fake_find("core_clock", "\"when\":\"latency\"", 0);
    assert_non_null(r);
    r = fake_find("crosscheck", "core/TSC ratio (before latency vs start)", 0);
    assert_non_null(r);
    assert_non_null(strstr(r, "\"agrees\":false"));
    assert_non_null(strstr(r, "\"a\":\"clock/cpu0/latency\",\"b\":\"clock/cpu0/start\""));
}

static void test_cpu_that_does_not_answer(void **state)
{
    (void)state;
    setup(2);
    FAKE.clock[0] = clock_of(1.5, 1.5, NULL); /* CPU 1 has no scripted clock: it fails */
    clock_run_start();
    const char *r = fake_find("core_clock", "\"cpu\":1", 0);
    assert_non_null(r);
    assert_non_null(strstr(r, "\"status\":\"unavailable\""));
    r = fake_find("crosscheck", "core/TSC ratio (CPU 1 vs CPU 0)", 0);
    assert_non_null(strstr(r, "\"agrees\":null"));
}


/* The TSC rate's uncertainty that ns and bytes/s intervals carry (clock_tsc_rel_unc). */
static void test_tsc_rel_unc(void **state)
{
    (void)state;
    setup(1);
    assert_true(clock_tsc_rel_unc() == 0); /* no source */
    /* a measured rate in use: its windows' spread */
    FAKE.tsc_src[0] = (struct plat_tsc_source){"acpi_pm_timer", 2000000000ull, 0.001};
    FAKE.tsc_src[1] = (struct plat_tsc_source){"hpet", 2004000000ull, 0.001};
    FAKE.ntsc_src = 2;
    assert_true(fabs(clock_tsc_rel_unc() - 0.001) < 1e-15);
    /* a stated rate in use: as well as the measured ones agree with it (0.2 % off, 0.1 % spread) */
    FAKE.tsc_src[0] = (struct plat_tsc_source){"cpuid.15h", 2000000000ull, 0};
    FAKE.tsc_src[1] = (struct plat_tsc_source){"acpi_pm_timer", 1996000000ull, 0.001};
    FAKE.tsc_src[2] = (struct plat_tsc_source){"hpet", 2001000000ull, 0.0005};
    FAKE.ntsc_src = 3;
    assert_true(fabs(clock_tsc_rel_unc() - 0.003) < 1e-12);
    /* a stated rate alone: nothing measured says otherwise */
    FAKE.ntsc_src = 1;
    assert_true(clock_tsc_rel_unc() == 0);
}

/* ---- core clock vs L1 load latency (clock_l1_judge, clock_l1_check) ---- */

static size_t readings(struct clock_l1_reading *r, const double (*p)[2], size_t n)
{
    for (size_t i = 0; i < n; i++)
        r[i] = clock_l1_reading_of(p[i][0], 0, 0, 0, p[i][1]);
    return n;
}

/* This box (2-vCPU Zen 4 guest, hosted runner): the L1 plateau's 21 points of a `bench=latency profile=full` run,
 * (cycles, core_tsc_ratio_u) each; 3.9982..4.0008 and one point past the knee (4.595). */
static const double zen4_run[][2] = {
    {4.00028, 0.0017}, {3.99848, 0.004},  {3.99848, 0.0017}, {3.99848, 0.0039}, {4.00075, 0.0012}, {4.00028, 0.0017},
    {4.00056, 0.0017}, {3.9982, 0.0017},  {4.00056, 0.0022}, {4.00056, 0.0017}, {3.9982, 0.0045},  {3.99848, 0.0017},
    {3.99848, 0.004},  {4.00028, 0.0017}, {4.00028, 0.0017}, {3.99848, 0.0039}, {3.99848, 0.004},  {3.9982, 0.0045},
    {4.00075, 0.004},  {3.99848, 0.0045}, {4.59501, 0.0045}};
/* The 16-core Xeon (Golden Cove cores, 5-cycle L1, KVM guest), run 3 of five: every point 1.927 ns as in the other
 * runs, but each replicate's clock draws read 1.1885 cycles/tick (u ~7e-5) where runs 1 and 5 read 1.2355. */
static const double xeon_run3[][2] = {
    {4.8103, 7.5e-05},  {4.81023, 7.6e-05}, {4.81019, 7.3e-05}, {4.81016, 7.6e-05}, {4.81001, 0.04},
    {4.93188, 7.3e-05}, {4.92096, 7.3e-05}, {4.8107, 0.04},     {4.81023, 7.3e-05}, {4.81023, 7.6e-05},
    {4.8103, 7.3e-05},  {4.81016, 7.3e-05}, {4.90638, 7.5e-05}, {4.89779, 7.3e-05}, {4.81052, 7.3e-05},
    {4.81045, 7.3e-05}, {4.81037, 7.3e-05}, {4.81052, 0.04},    {4.81008, 7.3e-05}, {4.97577, 7.3e-05},
    {4.81052, 0.00023}, {5.00268, 7.5e-05}, {5.01124, 7.3e-05}};
/* ... run 1: the draws read the clock (4.9991, u 1.5e-4 .. 8.7e-4) */
static const double xeon_run1[][2] = {
    {4.99913, 0.00047}, {4.99913, 0.00016}, {4.99913, 0.00015}, {4.99951, 0.00015}, {4.99921, 0.00038},
    {4.99917, 0.00087}, {4.99906, 0.00054}, {4.99925, 0.00015}, {4.99913, 0.00015}, {4.99921, 0.00059},
    {4.99906, 0.00051}, {4.99913, 0.00015}, {4.99913, 0.00015}, {4.99928, 0.00054}, {4.99921, 0.0008},
    {4.99913, 0.00051}, {4.99906, 0.00016}, {4.99921, 0.00076}, {4.99913, 0.039},   {4.99913, 0.039},
    {4.99921, 0.00015}, {4.99981, 0.00081}, {5.01406, 0.00051}};
/* ... run 2: the chains read the clock (1.2351, as runs 1 and 5) and the chase itself was slower (1.94-2.06 ns
 * against 1.927): 5.04-5.34 cycles. */
static const double xeon_run2[][2] = {
    {5.08285, 0.00053}, {5.19872, 0.00053}, {5.09709, 0.00053}, {5.07508, 0.00053}, {5.05627, 0.00053},
    {5.03852, 0.00053}, {5.05887, 0.00064}, {5.04643, 0.00053}, {5.06596, 0.00053}, {5.0554, 0.00053},
    {5.06528, 0.00053}, {5.09853, 0.00053}, {5.10735, 0.00053}, {5.12235, 0.00053}, {5.08058, 0.00053},
    {5.11504, 0.00091}, {5.15771, 0.00053}, {5.18134, 0.00053}, {5.3222, 0.00053},  {5.3406, 0.0012},
    {5.65553, 0.00053}};

static void test_l1_integer_clean_runs(void **state)
{
    (void)state;
    struct clock_l1_reading r[32];
    struct clock_l1_judgement j;
    clock_l1_judge(&j, r, readings(r, zen4_run, ARRAY_SIZE(zen4_run)));
    assert_int_equal(j.blame, CLOCK_L1_AGREES);
    assert_int_equal(j.latency, 4);
    assert_true(j.lo <= 4 && 4 <= j.hi);
    /* the interval is the readings', not a wide number: well under 1 % either side */
    assert_true(j.hi < 4 * 1.01 && j.lo > 4 * 0.99);
    assert_true(j.correction == 1);
    clock_l1_judge(&j, r, readings(r, xeon_run1, ARRAY_SIZE(xeon_run1)));
    assert_int_equal(j.blame, CLOCK_L1_AGREES);
    assert_int_equal(j.latency, 5);
    /* the same readings without their conversion's u: 4.9991 is off 5 by more than the points' spread, so the
     * u is what holds the integer (the tolerance comes from it, and it is small) */
    struct clock_l1_reading bare[32];
    for (size_t i = 0; i < ARRAY_SIZE(xeon_run1); i++)
        bare[i] = clock_l1_reading_of(xeon_run1[i][0], 0, 0, 0, 0);
    clock_l1_judge(&j, bare, ARRAY_SIZE(xeon_run1));
    assert_int_equal(j.blame, CLOCK_L1_CLOCK);
    assert_true(j.tolerance < 2e-4);
}

static void test_l1_integer_blames_the_clock(void **state)
{
    (void)state;
    struct clock_l1_reading r[32];
    struct clock_l1_judgement j;
    clock_l1_judge(&j, r, readings(r, xeon_run3, ARRAY_SIZE(xeon_run3)));
    assert_int_equal(j.blame, CLOCK_L1_CLOCK);
    assert_int_equal(j.latency, 5);
    assert_true(fabs(j.cycles - 4.81045) < 1e-5); /* the plateau record's cycles, 4.81045 */
    assert_true(j.hi < 5 && j.lo > 4.80);
    /* the factor the draws read low by: 1.2355 / 1.1885 */
    assert_true(fabs(j.correction - 5 / 4.81045) < 1e-5);
    assert_true(fabs(j.correction - 1.2355 / 1.1885) < 2e-3);
    /* the agreement the record states is the same judgement */
    assert_true(1 - j.cycles / j.latency > j.tolerance);
}

static void test_l1_integer_blames_the_figure(void **state)
{
    (void)state;
    struct clock_l1_reading r[32];
    struct clock_l1_judgement j;
    /* above the integer: the chase lost time, no clock draw explains that */
    clock_l1_judge(&j, r, readings(r, xeon_run2, ARRAY_SIZE(xeon_run2)));
    assert_int_equal(j.blame, CLOCK_L1_FIGURE);
    assert_int_equal(j.latency, 5);
    assert_true(j.correction == 1);
    /* halfway between two integers, tightly measured: neither 4 nor 5 is within what the chains may read apart,
     * so nothing is corrected and the clock is not blamed */
    const double half[][2] = {{4.5, 1e-4}, {4.5001, 1e-4}, {4.4999, 1e-4}, {4.5, 1e-4}, {4.5002, 1e-4}, {4.4998, 1e-4}};
    clock_l1_judge(&j, r, readings(r, half, ARRAY_SIZE(half)));
    assert_int_not_equal(j.blame, CLOCK_L1_CLOCK);
    assert_int_equal(j.blame, CLOCK_L1_FIGURE);
    assert_true(j.correction == 1);
    /* 4.3: 7 % below 5 is beyond CORE_CLOCK_TOL, and above 4 the chase lost time: the figure either way */
    const double off[][2] = {{4.3, 1e-4}};
    clock_l1_judge(&j, r, readings(r, off, 1));
    assert_int_equal(j.blame, CLOCK_L1_FIGURE);
    /* nothing to judge */
    clock_l1_judge(&j, r, 0);
    assert_int_equal(j.blame, CLOCK_L1_NOT_JUDGED);
    const double tiny[][2] = {{0.3, 0}};
    clock_l1_judge(&j, r, readings(r, tiny, 1));
    assert_int_equal(j.blame, CLOCK_L1_NOT_JUDGED);
}

/* One figure's reading (the Table 2 L1 row): its own CI and its conversion's u. Run 3's row read 4.81 cycles too,
 * but its replicates' draws disagreed (u 0.04: some read 1.2355): its interval holds 5, and it is not blamed. */
static void test_l1_integer_one_figure(void **state)
{
    (void)state;
    struct clock_l1_judgement j;
    struct clock_l1_reading r = clock_l1_reading_of(4.810518679724338, 1.927348141341434, 1.9267908308387596,
                                                    2.010477658175584, 0.04001721101892429);
    assert_true(r.lo < 4.810518679724338 * (1 - 0.04) && r.hi > 5.2);
    clock_l1_judge(&j, &r, 1);
    assert_int_equal(j.blame, CLOCK_L1_AGREES);
    /* the same row with the draws of run 3's sweep (u 7.5e-5) and a tight CI: the clock */
    r = clock_l1_reading_of(4.8105, 1.92735, 1.9270, 1.9280, 7.5e-5);
    clock_l1_judge(&j, &r, 1);
    assert_int_equal(j.blame, CLOCK_L1_CLOCK);
    /* no stated u (NaN) and no CI: the point alone */
    r = clock_l1_reading_of(4.0, 0, __builtin_nan(""), 0, __builtin_nan(""));
    assert_true(r.lo == 4.0 && r.hi == 4.0);
}

/* The record: the clock conversion named and blamed, the cycles of the figures converted with the draws listed,
 * no ns figure marked; a blamed L1 figure marked suspect in the ledger. */
static void test_l1_integer_record(void **state)
{
    (void)state;
    setup(1);
    struct stats st = {.median = 1.927, .ci_lo = 1.926, .ci_hi = 1.928, .n = 9};
    ledger_add("latency_plateau/random/2097152/0", "ns", &st, QUALITY_OK);
    ledger_add("latency_sweep/random/2097152/1024", "ns", &st, QUALITY_OK);
    clock_chain_converted("latency_sweep/random/2097152/1024");
    clock_chain_converted("latency_plateau/random/2097152/0");
    clock_chain_converted("latency_sweep/random/2097152/1024"); /* once */
    struct clock_l1_reading r[32];
    size_t n = readings(r, xeon_run3, ARRAY_SIZE(xeon_run3));
    assert_int_equal(clock_l1_check("latency_plateau/random/2097152/0", r, n), CLOCK_L1_CLOCK);
    const char *rec = fake_find("crosscheck", "core clock vs L1 load latency", 0);
    assert_non_null(rec);
    assert_non_null(strstr(rec, "\"agrees\":false"));
    assert_non_null(strstr(rec, "\"b\":\"clock/cpu"));
    assert_non_null(strstr(rec, "\"b_value\":5"));
    assert_non_null(strstr(rec, "\"suspect\":[]"));
    assert_non_null(strstr(rec, "\"cycles_suspect\":[\"latency_sweep/random/2097152/1024\",\"latency_plateau/random/2097152/0\"]"));
    assert_non_null(strstr(rec, "\"a_interval\":["));
    assert_int_equal(ledger_find("latency_plateau/random/2097152/0")->q, QUALITY_OK);
    /* a clean run: agrees, nothing listed */
    n = readings(r, zen4_run, ARRAY_SIZE(zen4_run));
    assert_int_equal(clock_l1_check("latency_plateau/random/2097152/0", r, n), CLOCK_L1_AGREES);
    rec = fake_find("crosscheck", "core clock vs L1 load latency", 1);
    assert_non_null(strstr(rec, "\"agrees\":true"));
    assert_non_null(strstr(rec, "\"cycles_suspect\":[]"));
    /* a slow chase: the figure is blamed, not the conversion */
    n = readings(r, xeon_run2, ARRAY_SIZE(xeon_run2));
    assert_int_equal(clock_l1_check("latency_plateau/random/2097152/0", r, n), CLOCK_L1_FIGURE);
    rec = fake_find("crosscheck", "core clock vs L1 load latency", 2);
    assert_non_null(strstr(rec, "\"suspect\":[\"latency_plateau/random/2097152/0\"]"));
    assert_null(strstr(rec, "cycles_suspect"));
    assert_int_equal(ledger_find("latency_plateau/random/2097152/0")->q, QUALITY_SUSPECT);
    /* a figure whose own unit is cycles (a penalty converted with the same draws) is the conversion's product:
     * marked suspect itself, under "suspect", not under "cycles_suspect" */
    setup(1);
    struct stats pc = {.median = 14.89, .ci_lo = 14.88, .ci_hi = 14.90, .n = 9};
    ledger_add("penalty/div_r64", "cycles", &pc, QUALITY_OK);
    ledger_add("penalty/l1_hit", "cycles", &pc, QUALITY_OK);
    clock_chain_converted("penalty/div_r64");
    struct clock_l1_reading one = clock_l1_reading_of(3.85, 3.85, 3.849, 3.851, 0);
    assert_int_equal(clock_l1_check("penalty/l1_hit", &one, 1), CLOCK_L1_CLOCK);
    rec = fake_find("crosscheck", "core clock vs L1 load latency", 0);
    assert_non_null(strstr(rec, "\"suspect\":[\"penalty/div_r64\"]"));
    assert_non_null(strstr(rec, "\"cycles_suspect\":[]"));
    assert_int_equal(ledger_find("penalty/div_r64")->q, QUALITY_SUSPECT);
    /* a long list (a sweep of hundreds of points): the rest in crosscheck_cycles records, every name once, each
     * record well inside a record line */
    setup(1);
    char nm[64];
    for (int i = 0; i < 600; i++) {
        snprintf(nm, sizeof(nm), "latency_sweep/random/1073741824/%d", 1000000 + i);
        clock_chain_converted(nm);
    }
    n = readings(r, xeon_run3, ARRAY_SIZE(xeon_run3));
    assert_int_equal(clock_l1_check("latency_plateau/random/2097152/0", r, n), CLOCK_L1_CLOCK);
    size_t found = 0, recs = 0;
    for (const char *x; (x = fake_find("crosscheck", "core clock vs L1 load latency", 0)) && recs == 0; recs++)
        assert_true(strlen(x) < 8192);
    for (size_t k = 0; (rec = fake_find("crosscheck_cycles", "core clock vs L1 load latency", k)); k++) {
        assert_true(strlen(rec) < 8192);
        recs++;
    }
    assert_true(recs >= 3);
    for (int i = 0; i < 600; i++) {
        snprintf(nm, sizeof(nm), "\"latency_sweep/random/1073741824/%d\"", 1000000 + i);
        size_t hits = 0;
        const char *x = fake_find("crosscheck", "core clock vs L1 load latency", 0);
        hits += strstr(x, nm) != NULL;
        for (size_t k = 0; (x = fake_find("crosscheck_cycles", "core clock vs L1 load latency", k)); k++)
            hits += strstr(x, nm) != NULL;
        assert_int_equal(hits, 1);
        found += hits;
    }
    assert_int_equal(found, 600);
    /* a new benchmark forgets the list */
    clock_reset();
    n = readings(r, xeon_run3, ARRAY_SIZE(xeon_run3));
    clock_l1_check("latency_plateau/random/2097152/0", r, n);
    rec = fake_find("crosscheck", "core clock vs L1 load latency", 1);
    assert_non_null(strstr(rec, "\"cycles_suspect\":[]"));
    assert_non_null(strstr(rec, "\"suspect\":[]"));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_ratio_before_and_after_measuring),
        cmocka_unit_test(test_tsc_sources),
        cmocka_unit_test(test_tsc_rel_unc),
        cmocka_unit_test(test_l1_integer_clean_runs),
        cmocka_unit_test(test_l1_integer_blames_the_clock),
        cmocka_unit_test(test_l1_integer_blames_the_figure),
        cmocka_unit_test(test_l1_integer_one_figure),
        cmocka_unit_test(test_l1_integer_record),
        cmocka_unit_test(test_ratio_combine),
        cmocka_unit_test(test_cycles_method_combined),
        cmocka_unit_test(test_chain_ratio_live),
        cmocka_unit_test(test_disagreeing_chains_blame_the_faster),
        cmocka_unit_test(test_per_cpu_and_per_benchmark),
        cmocka_unit_test(test_cpu_that_does_not_answer),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
