/* test_core_clock.c - kernel/core_clock.c: chain ratios from scripted timings, the agreement rule and which chain is blamed, APERF/MPERF first, the IMUL latency table, the JSON, and one live measurement. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <math.h>
#include <stdio.h>
#include <string.h>
#include <cmocka.h>

#include "bench/crosscheck.h"
#include "kernel/core_clock.h"

/* The kernel's tolerance is the one the cross-check record states. */
_Static_assert(CORE_CLOCK_TOL == XC_TOL_RATIO, "CORE_CLOCK_TOL must equal XC_TOL_RATIO");

#define assert_near(a, b, eps)                                                                     \
    do {                                                                                           \
        double a_ = (a), b_ = (b);                                                                 \
        if (!(fabs(a_ - b_) <= (eps)))                                                             \
            fail_msg("%s = %.17g, expected %.17g +- %g", #a, a_, b_, (double)(eps));               \
    } while (0)

/* Runs of one chain whose ratio is `ratio` in every run but one, which reads `ratio x odd`. */
static void script(struct core_chain_runs *r, uint32_t latency, double ratio, double odd)
{
    memset(r, 0, sizeof(*r));
    r->n = CORE_CLOCK_RUNS;
    r->insns = 1000000;
    r->latency = latency;
    for (uint32_t i = 0; i < r->n; i++) {
        double want = i == 3 ? ratio * odd : ratio;
        r->ticks[i] = (uint64_t)llround((double)r->insns * latency / want);
    }
}

static void decide(struct core_clock *c, double add, double imul, uint32_t imul_latency)
{
    struct core_chain_runs runs[CORE_CHAIN_COUNT];
    script(&runs[CORE_CHAIN_ADD], 1, add, 1.0);
    script(&runs[CORE_CHAIN_IMUL], imul_latency, imul, 1.0);
    core_clock_decide(c, runs, NULL, 0, false);
}

/* ---- short windows (core_windows_ratio) ----
 * The test box's clock: a core/TSC ratio of 1.42294, a TSC read in steps of 26 ticks, windows of 65536 adds
 * (46057.0 ticks) and 131072 (92114.1), each read as a whole number of steps plus the harness (41 ticks);
 * a reading is the true length rounded down or up to the step, as the phase of the step falls. */
#define W_RATIO 1.42294
#define W_STEP 26.0
#define W_INSNS 65536u

static uint64_t w_read(double ticks, unsigned phase)
{
    double t = ticks + 41;
    double k = floor(t / W_STEP) + (phase % 2); /* floor or ceil: where the step fell */
    return (uint64_t)(k * W_STEP);
}

/* n clean pairs at `ratio`, phases alternating. */
static void w_clean(struct core_chain_windows *w, uint32_t n, double ratio)
{
    memset(w, 0, sizeof(*w));
    w->n = n;
    w->insns = W_INSNS;
    w->step = W_STEP;
    for (uint32_t i = 0; i < n; i++) {
        w->shrt[i] = w_read(W_INSNS / ratio, i);
        w->lng[i] = w_read(2.0 * W_INSNS / ratio, i + 1);
    }
}

/* Clean windows: the ratio within its stated reading uncertainty (2 steps over the difference) of the truth,
 * every window confirmed, none disturbed. */
/* Two draws next to a measurement (core_near_pick): outside contention only slows a chain, so within
 * CORE_CLOCK_TOL the higher is the clock; beyond it the higher is the suspect and the add chain stays. The
 * numbers are a real run's (a host-disturbed one: add 1.4125 where imul and every other run read 1.4229). */
static void test_near_pick(void **state)
{
    (void)state;
    struct core_windows_ratio add = {.valid = true, .ratio = 1.41251, .u = 1.1e-3},
                              imul = {.valid = true, .ratio = 1.42290, .u = 1.2e-3}, none = {0};
    enum core_chain which;
    double u;
    assert_near(core_near_pick(&add, &imul, &u, &which), 1.42290, 1e-12); /* the add chain was slowed */
    assert_int_equal(which, CORE_CHAIN_IMUL);
    assert_near(u, 1.2e-3, 1e-15);
    struct core_windows_ratio slow_imul = imul;
    slow_imul.ratio = 1.40;
    assert_near(core_near_pick(&add, &slow_imul, &u, &which), 1.41251, 1e-12); /* now imul was: add stays */
    assert_int_equal(which, CORE_CHAIN_ADD);
    struct core_windows_ratio shortcut = imul;
    shortcut.ratio = add.ratio * (1 + CORE_CLOCK_TOL) * 1.01; /* beyond the tolerance: a shortcut, not kept */
    assert_near(core_near_pick(&add, &shortcut, &u, &which), 1.41251, 1e-12);
    assert_int_equal(which, CORE_CHAIN_ADD);
    assert_near(core_near_pick(&none, &imul, &u, &which), 1.42290, 1e-12); /* add found no clean window */
    assert_int_equal(which, CORE_CHAIN_IMUL);
    assert_near(core_near_pick(&add, &none, &u, &which), 1.41251, 1e-12); /* imul latency unknown */
    assert_int_equal(which, CORE_CHAIN_ADD);
    assert_near(core_near_pick(&add, NULL, &u, &which), 1.41251, 1e-12);
    assert_true(core_near_pick(&none, &none, &u, &which) == 0);
    assert_int_equal(which, CORE_CHAIN_COUNT);
}

static void test_windows_clean(void **state)
{
    (void)state;
    struct core_chain_windows w;
    struct core_windows_ratio r;
    w_clean(&w, 3, W_RATIO);
    core_windows_ratio(&r, &w);
    assert_true(r.valid);
    assert_near(r.u, 2 * W_STEP / (W_INSNS / W_RATIO), 2e-5); /* 1.13e-3 */
    assert_true(fabs(r.ratio / W_RATIO - 1) <= r.u);
    assert_int_equal(r.confirmed, 3);
    assert_int_equal(r.disturbed, 0);
}

/* An interruption (a 10 us timer tick, 26 000 ticks) in one short window read the old median-of-differences
 * rule high only when it fell twice, but one in each of two long windows read it low (the 1.3176 of a real
 * run); the minimum per length takes neither, and counts them. */
static void test_windows_interruptions(void **state)
{
    (void)state;
    struct core_chain_windows w;
    struct core_windows_ratio clean, r;
    w_clean(&w, 4, W_RATIO);
    core_windows_ratio(&clean, &w);
    w.lng[0] += 26000;
    w.lng[2] += 3900; /* 4 % of a long window: a short host preemption */
    w.n = 3;          /* one clean long window of three: its minimum is not confirmed yet */
    core_windows_ratio(&r, &w);
    assert_false(r.valid);
    w.n = 4;          /* the fourth pair the caller then draws confirms it */
    core_windows_ratio(&r, &w);
    assert_true(r.valid);
    assert_near(r.ratio, clean.ratio, 1e-12);
    assert_int_equal(r.disturbed, 2);
    /* the old rule on the same windows: the median of the three differences, 1.4229 read as 1.312 */
    uint64_t d[3];
    for (int i = 0; i < 3; i++)
        d[i] = w.lng[i] - w.shrt[i];
    for (int i = 1; i < 3; i++) /* insertion sort */
        for (int j = i; j > 0 && d[j - 1] > d[j]; j--) {
            uint64_t t = d[j];
            d[j] = d[j - 1];
            d[j - 1] = t;
        }
    assert_true((double)W_INSNS / (double)d[1] < W_RATIO * 0.96);
    /* one short window interrupted: the old rule's high side; the minimum does not see it either */
    w_clean(&w, 3, W_RATIO);
    core_windows_ratio(&clean, &w);
    w.shrt[1] += 5000;
    core_windows_ratio(&r, &w);
    assert_true(r.valid);
    assert_near(r.ratio, clean.ratio, 1e-12);
    assert_int_equal(r.disturbed, 1);
}

/* A length whose windows were all interrupted (by different amounts) has no confirmed minimum: not valid, so
 * the caller draws another pair; with it the minimum repeats and the ratio is the clean one. */
static void test_windows_unconfirmed(void **state)
{
    (void)state;
    struct core_chain_windows w;
    struct core_windows_ratio clean, r;
    w_clean(&w, 3, W_RATIO);
    core_windows_ratio(&clean, &w);
    w.lng[1] += 900;
    w.lng[2] += 4000;
    core_windows_ratio(&r, &w);
    assert_false(r.valid);
    assert_int_equal(r.confirmed, 1);
    w.shrt[3] = w_read(W_INSNS / W_RATIO, 3);
    w.lng[3] = w_read(2.0 * W_INSNS / W_RATIO, 4);
    w.n = 4;
    core_windows_ratio(&r, &w);
    assert_true(r.valid);
    assert_near(r.ratio, clean.ratio, 1e-12);
    /* fewer pairs than a confirmation needs, no time, or a long window not longer: not valid */
    w_clean(&w, 1, W_RATIO);
    core_windows_ratio(&r, &w);
    assert_false(r.valid);
    w_clean(&w, 3, W_RATIO);
    for (int i = 0; i < 3; i++)
        w.lng[i] = w.shrt[i];
    core_windows_ratio(&r, &w);
    assert_false(r.valid);
    assert_true(r.ratio == 0);
    memset(&w, 0, sizeof(w));
    core_windows_ratio(&r, &w);
    assert_false(r.valid);
}

/* A clock that moved (a lower turbo bin, or every window slowed alike): the ratio follows it, since nothing
 * in the windows says which clock is the right one; a drift between the draws is for the caller to see
 * (clock_ratio_combine, the sweep's drift rule). */
static void test_windows_follow_a_moved_clock(void **state)
{
    (void)state;
    struct core_chain_windows w;
    struct core_windows_ratio r;
    w_clean(&w, 3, W_RATIO * 0.95);
    core_windows_ratio(&r, &w);
    assert_true(r.valid);
    assert_true(fabs(r.ratio / (W_RATIO * 0.95) - 1) <= r.u);
    /* a TSC that reads every tick (step 1): the reading uncertainty shrinks with it */
    w.step = 1;
    for (uint32_t i = 0; i < 3; i++) {
        w.shrt[i] = (uint64_t)llround(W_INSNS / W_RATIO) + 41;
        w.lng[i] = (uint64_t)llround(2.0 * W_INSNS / W_RATIO) + 41;
    }
    core_windows_ratio(&r, &w);
    assert_true(r.valid);
    assert_true(r.u < 5e-5 && fabs(r.ratio / W_RATIO - 1) <= r.u);
}

static void test_chain_median_and_spread(void **state)
{
    (void)state;
    struct core_chain_runs in = {.n = 5, .insns = 1000, .latency = 1, .ticks = {500, 400, 600, 500, 510}};
    struct core_chain_ratio r;
    core_chain_ratio_compute(&r, &in);
    assert_true(r.valid);
    assert_int_equal(r.n, 5);
    assert_near(r.ratio, 2.0, 1e-12); /* ratios 2, 2.5, 1.667, 2, 1.961: median 2 */
    assert_near(r.spread, (2.5 - 1000.0 / 600) / 2.0, 1e-12);

    in.latency = 3; /* every ratio x3 */
    core_chain_ratio_compute(&r, &in);
    assert_near(r.ratio, 6.0, 1e-12);

    in.n = 4; /* even count: mean of the middle two of 1.667, 2, 2, 2.5 */
    in.latency = 1;
    core_chain_ratio_compute(&r, &in);
    assert_near(r.ratio, 2.0, 1e-12);

    in.ticks[2] = 0; /* a run that took no time: no ratio at all */
    core_chain_ratio_compute(&r, &in);
    assert_false(r.valid);
    in.ticks[2] = 600;
    in.latency = 0; /* latency unknown */
    core_chain_ratio_compute(&r, &in);
    assert_false(r.valid);
    assert_int_equal(r.latency, 0);
}

static void test_agree_uses_add(void **state)
{
    (void)state;
    struct core_clock c;
    decide(&c, 1.30, 1.31, 3);
    assert_int_equal(c.agree, 1);
    assert_null(c.suspect);
    assert_string_equal(c.method, "add_rr_chain");
    assert_near(c.ratio, 1.30, 1e-5);
    assert_near(c.chain[CORE_CHAIN_IMUL].ratio, 1.31, 1e-5);
    assert_false(c.aperf_valid);
    assert_non_null(strstr(c.note, "agree"));
}

static void test_shortcut_add_blamed(void **state)
{
    (void)state;
    /* A core that resolves the adds at rename runs the add chain 4x faster: its ratio reads 4x too high. */
    struct core_clock c;
    decide(&c, 4.0, 1.0, 3);
    assert_int_equal(c.agree, 0);
    assert_string_equal(c.suspect, "add_rr_chain");
    assert_string_equal(c.method, "imul_chain");
    assert_near(c.ratio, 1.0, 1e-5);
    assert_non_null(strstr(c.note, "add_rr_chain reads higher"));
}

static void test_imul_higher_blamed(void **state)
{
    (void)state;
    /* The imul chain reads higher (a latency table that overstates it, or an emulator): the add chain is used. */
    struct core_clock c;
    decide(&c, 1.0, 1.5, 3);
    assert_int_equal(c.agree, 0);
    assert_string_equal(c.suspect, "imul_chain");
    assert_string_equal(c.method, "add_rr_chain");
    assert_near(c.ratio, 1.0, 1e-5);
}

static void test_tolerance_edge(void **state)
{
    (void)state;
    struct core_clock c;
    decide(&c, 1.049, 1.0, 3);
    assert_int_equal(c.agree, 1);
    decide(&c, 1.0, 1.049, 3);
    assert_int_equal(c.agree, 1);
    decide(&c, 1.052, 1.0, 3);
    assert_int_equal(c.agree, 0);
    decide(&c, 1.0, 1.06, 3);
    assert_int_equal(c.agree, 0);
}

static void test_imul_latency_unknown_not_judged(void **state)
{
    (void)state;
    struct core_clock c;
    decide(&c, 2.0, 1.0, 0);
    assert_int_equal(c.agree, -1);
    assert_null(c.suspect);
    assert_string_equal(c.method, "add_rr_chain");
    assert_near(c.ratio, 2.0, 1e-5);
    assert_false(c.chain[CORE_CHAIN_IMUL].valid);
    assert_non_null(strstr(c.note, "imul latency not known"));
}

static void test_aperf_first_chains_still_judged(void **state)
{
    (void)state;
    struct core_chain_runs runs[CORE_CHAIN_COUNT];
    double aperf[CORE_CLOCK_RUNS] = {1.10, 1.12, 1.11, 1.50, 1.11, 1.10, 1.11};
    script(&runs[CORE_CHAIN_ADD], 1, 4.0, 1.0);
    script(&runs[CORE_CHAIN_IMUL], 3, 1.1, 1.0);
    struct core_clock c;
    core_clock_decide(&c, runs, aperf, CORE_CLOCK_RUNS, false);
    assert_true(c.aperf_valid);
    assert_string_equal(c.method, "aperf_mperf");
    assert_near(c.ratio, 1.11, 1e-12);
    assert_near(c.spread, (1.50 - 1.10) / 1.11, 1e-12);
    assert_int_equal(c.aperf_n, CORE_CLOCK_RUNS);
    assert_int_equal(c.agree, 0); /* the cross-check still runs and still names the faster chain */
    assert_string_equal(c.suspect, "add_rr_chain");

    /* APERF/MPERF over fewer runs than the chains, or a run where they did not count: not used. */
    core_clock_decide(&c, runs, aperf, CORE_CLOCK_RUNS - 1, false);
    assert_false(c.aperf_valid);
    assert_string_equal(c.method, "imul_chain");
    aperf[2] = 0;
    core_clock_decide(&c, runs, aperf, CORE_CLOCK_RUNS, false);
    assert_false(c.aperf_valid);
    assert_string_equal(c.method, "imul_chain");
}

static void test_nothing_measured(void **state)
{
    (void)state;
    struct core_chain_runs runs[CORE_CHAIN_COUNT];
    memset(runs, 0, sizeof(runs));
    struct core_clock c;
    core_clock_decide(&c, runs, NULL, 0, true);
    assert_string_equal(c.method, "none");
    assert_true(c.ratio == 0);
    assert_int_equal(c.agree, -1);
    assert_true(c.tcg);
    assert_non_null(strstr(c.note, "QEMU TCG"));
}

static void test_imul_latency_table(void **state)
{
    (void)state;
    static const struct {
        enum cpu_vendor v;
        uint32_t family, model;
        bool atom;
        uint32_t want;
    } cases[] = {
        {CPU_VENDOR_INTEL, 6, 0x1A, false, 3}, /* Nehalem */
        {CPU_VENDOR_INTEL, 6, 0x2A, false, 3}, /* Sandy Bridge */
        {CPU_VENDOR_INTEL, 6, 0x55, false, 3}, /* Skylake-SP */
        {CPU_VENDOR_INTEL, 6, 0x8F, false, 3}, /* Sapphire Rapids */
        {CPU_VENDOR_INTEL, 6, 0x97, false, 3}, /* Alder Lake, P-core */
        {CPU_VENDOR_INTEL, 6, 0x97, true, 0},  /* Alder Lake, E-core */
        {CPU_VENDOR_INTEL, 6, 0x17, false, 0}, /* Core 2 (Penryn) */
        {CPU_VENDOR_INTEL, 6, 0x1D, false, 0}, /* Dunnington (Core 2) */
        {CPU_VENDOR_INTEL, 6, 0x37, false, 0}, /* Silvermont */
        {CPU_VENDOR_INTEL, 6, 0x5C, false, 0}, /* Goldmont */
        {CPU_VENDOR_INTEL, 6, 0x57, false, 0}, /* Knights Landing */
        {CPU_VENDOR_INTEL, 6, 0xAF, false, 0}, /* Sierra Forest */
        {CPU_VENDOR_INTEL, 0xF, 0x4, false, 0}, /* NetBurst */
        {CPU_VENDOR_AMD, 0x0F, 0x6B, false, 4}, /* K8 (QEMU's default CPU claims this) */
        {CPU_VENDOR_AMD, 0x10, 0x04, false, 4}, /* K10 */
        {CPU_VENDOR_AMD, 0x14, 0x01, false, 0}, /* Bobcat: not listed */
        {CPU_VENDOR_AMD, 0x15, 0x02, false, 6}, /* Piledriver */
        {CPU_VENDOR_AMD, 0x16, 0x00, false, 6}, /* Jaguar */
        {CPU_VENDOR_AMD, 0x17, 0x31, false, 3}, /* Zen 2 */
        {CPU_VENDOR_AMD, 0x19, 0x11, false, 3}, /* Zen 4 */
        {CPU_VENDOR_AMD, 0x1A, 0x44, false, 3}, /* Zen 5 */
        {CPU_VENDOR_HYGON, 0x18, 0x00, false, 3},
        {CPU_VENDOR_OTHER, 6, 0x0F, false, 0},
        {CPU_VENDOR_UNKNOWN, 0, 0, false, 0},
    };
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        uint32_t got = core_clock_imul_latency(cases[i].v, cases[i].family, cases[i].model, cases[i].atom);
        if (got != cases[i].want)
            fail_msg("vendor %d family 0x%x model 0x%x atom %d: %u, expected %u", cases[i].v, cases[i].family,
                     cases[i].model, cases[i].atom, got, cases[i].want);
    }
}

static void test_json(void **state)
{
    (void)state;
    struct core_clock c;
    char buf[1024];
    struct json j;

    decide(&c, 4.0, 1.0, 3);
    json_init(&j, buf, sizeof(buf));
    core_clock_json(&j, &c);
    assert_false(j.overflow);
    assert_non_null(strstr(buf, "\"method\":\"imul_chain\""));
    assert_non_null(strstr(buf, "\"add\":4,"));
    assert_non_null(strstr(buf, "\"imul\":1,"));
    assert_non_null(strstr(buf, "\"agree\":false"));
    assert_non_null(strstr(buf, "\"suspect\":\"add_rr_chain\""));
    assert_non_null(strstr(buf, "\"aperf\":null"));
    assert_non_null(strstr(buf, "\"imul_latency\":3"));

    decide(&c, 2.0, 1.0, 0);
    json_init(&j, buf, sizeof(buf));
    core_clock_json(&j, &c);
    assert_non_null(strstr(buf, "\"imul\":null"));
    assert_non_null(strstr(buf, "\"agree\":null"));
    assert_non_null(strstr(buf, "\"suspect\":null"));
}

/* The real chains on this host: a ratio from one of them, every run timed. Values are not asserted beyond
 * sanity: the host is shared and may be a VM. */
static void test_live(void **state)
{
    (void)state;
    struct core_clock c;
    assert_int_equal(core_clock_measure(&c, true), 0); /* a hosted build has no APERF path */
    assert_false(c.aperf_valid);
    assert_true(!strcmp(c.method, "add_rr_chain") || !strcmp(c.method, "imul_chain"));
    assert_true(c.ratio > 0.01 && c.ratio < 100 && isfinite(c.ratio));
    assert_true(c.chain[CORE_CHAIN_ADD].valid);
    assert_int_equal(c.chain[CORE_CHAIN_ADD].n, CORE_CLOCK_RUNS);
    if (c.chain[CORE_CHAIN_IMUL].valid)
        assert_true(c.agree == 0 || c.agree == 1);
    printf("# live: %s ratio %.4f (add %.4f imul %.4f, imul latency %u, agree %d) %s\n", c.method, c.ratio,
           c.chain[CORE_CHAIN_ADD].ratio, c.chain[CORE_CHAIN_IMUL].ratio, c.chain[CORE_CHAIN_IMUL].latency, c.agree,
           c.note);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_chain_median_and_spread),
        cmocka_unit_test(test_agree_uses_add),
        cmocka_unit_test(test_shortcut_add_blamed),
        cmocka_unit_test(test_imul_higher_blamed),
        cmocka_unit_test(test_tolerance_edge),
        cmocka_unit_test(test_imul_latency_unknown_not_judged),
        cmocka_unit_test(test_aperf_first_chains_still_judged),
        cmocka_unit_test(test_nothing_measured),
        cmocka_unit_test(test_imul_latency_table),
        cmocka_unit_test(test_json),
        cmocka_unit_test(test_near_pick),
        cmocka_unit_test(test_windows_clean),
        cmocka_unit_test(test_windows_interruptions),
        cmocka_unit_test(test_windows_unconfirmed),
        cmocka_unit_test(test_windows_follow_a_moved_clock),
        cmocka_unit_test(test_live),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
