/* clock.c - core clock per CPU and per benchmark, and the clock cross-checks (clock.h, docs/measurement.md). */
#include "bench/clock.h"
#include "bench/crosscheck.h"
#include "bench/platform.h"
#include "kernel/core_clock.h"
#include "kernel/fmt.h"
#include "measure/timing.h"
#include "measure/engine.h"
#include "measure/stats.h"
#include "measure/stats_json.h"
#include "measure/verdict.h"
#include "pmu/pmu_bench_api.h"

static volatile uint64_t near_sink; /* keeps the timed chains live */

#define CLOCK_NAME_MAX 64

static struct {
    bool valid;               /* a measurement on the benchmark's CPU exists */
    struct core_clock start;  /* the benchmark CPU's, at clock_run_start */
    double ratio;             /* what clock_core_ratio returns now */
    char method[CLOCK_NAME_MAX];
    double steady, steady_u;  /* the latest clock_chain_ratio_steady that read (0: none yet) */
} C;

static size_t n_chain_fig; /* figures converted with the chain draws in this benchmark (clock_chain_converted) */

void clock_reset(void)
{
    memset(&C, 0, sizeof(C));
    n_chain_fig = 0;
}

double clock_core_ratio(const char **method)
{
    static char name[CLOCK_NAME_MAX + 16];
    double r = C.valid ? C.ratio : plat_core_tsc_ratio();
    fmt_snprintf(name, sizeof(name), "core_tsc_ratio:%s", C.valid ? C.method : plat_core_tsc_method());
    if (method)
        *method = name;
    return r > 0 ? r : 1.0;
}


/* One pair of windows, n links of `chain` then 2n, into w's next slot. */
static void near_pair(struct core_chain_windows *w, uint64_t (*chain)(uint64_t), uint64_t iters,
                      enum timing_serialize ser)
{
    uint64_t t0 = timing_read(ser);
    near_sink += chain(iters);
    uint64_t t1 = timing_read(ser);
    near_sink += chain(2 * iters);
    uint64_t t2 = timing_read(ser);
    w->shrt[w->n] = t1 - t0;
    w->lng[w->n] = t2 - t1;
    w->n++;
}

/* One chain's draw: CLOCK_NEAR_PAIRS pairs, more until both minima are confirmed (core_windows_ratio). */
static void near_draw(struct core_windows_ratio *r, uint64_t (*chain)(uint64_t), uint64_t iters, uint32_t latency,
                      enum timing_serialize ser)
{
    struct core_chain_windows w = {.insns = iters * CORE_CLOCK_ADD_PER_ITER * latency, .step = meas_clock_step()};
    near_sink += chain(iters); /* untimed: code and clock settled */
    while (w.n < CLOCK_NEAR_PAIRS)
        near_pair(&w, chain, iters, ser);
    core_windows_ratio(r, &w);
    while (!r->valid && w.n < CLOCK_NEAR_PAIRS_MAX) { /* interrupted: one more pair until both minima repeat */
        near_pair(&w, chain, iters, ser);
        core_windows_ratio(r, &w);
    }
}

double clock_chain_ratio_now(enum timing_serialize ser, double *u)
{
    struct core_windows_ratio add, imul = {0};
    near_draw(&add, core_clock_add_chain, CLOCK_NEAR_ITERS, 1, ser);
    /* the imul chain too, where its latency is known (the benchmark CPU's core_clock_measure): about as long */
    uint32_t lat = C.valid ? C.start.chain[CORE_CHAIN_IMUL].latency : 0;
    if (lat)
        near_draw(&imul, core_clock_imul_chain, MAX(CLOCK_NEAR_ITERS / lat, 1u), lat, ser);
    double ru;
    enum core_chain which;
    double r = core_near_pick(&add, &imul, &ru, &which);
    if (r <= 0)
        return 0;
    if (u)
        *u = ru;
    return r;
}

double clock_ratio_combine(const double *ratios, const double *u, size_t n, double *u_out)
{
    double x[MEAS_REPLICATES_FULL * 4];
    size_t m = 0;
    double ru = 0;
    bool any_u = false; /* parts with a stated uncertainty, when there are some, are the only ones used */
    for (size_t i = 0; u && i < n; i++)
        any_u |= ratios[i] > 0 && u[i] > 0;
    for (size_t i = 0; i < n && m < ARRAY_SIZE(x); i++)
        if (ratios[i] > 0 && (!any_u || u[i] > 0)) {
            x[m++] = ratios[i];
            if (u && u[i] > ru) /* NaN compares false: not stated */
                ru = u[i];
        }
    *u_out = __builtin_nan("");
    if (!m)
        return 0;
    stats_sort(x, m);
    double med = m % 2 ? x[m / 2] : 0.5 * (x[m / 2 - 1] + x[m / 2]);
    size_t lo, hi;
    bool exact;
    stats_median_ci_ranks(m, &lo, &hi, &exact);
    *u_out = MAX(med - x[lo], x[hi] - med) / med + ru;
    return med;
}

double clock_chain_ratio_steady(enum timing_serialize ser, double *u)
{
    double r[CLOCK_STEADY_DRAWS], ru[CLOCK_STEADY_DRAWS];
    size_t got = 0;
    for (size_t i = 0; i < CLOCK_STEADY_DRAWS; i++) {
        r[i] = clock_chain_ratio_now(ser, &ru[i]);
        got += r[i] > 0;
    }
    double uu, med = got ? clock_ratio_combine(r, ru, CLOCK_STEADY_DRAWS, &uu) : 0;
    if (u)
        *u = med > 0 ? uu : __builtin_nan("");
    if (med > 0) {
        C.steady = med;
        C.steady_u = uu;
    }
    return med;
}

double clock_chain_ratio_ref(double *u)
{
    if (u)
        *u = C.steady > 0 ? C.steady_u : __builtin_nan("");
    return C.steady;
}

bool clock_chain_ratio_usable(void)
{
    const char *m;
    clock_core_ratio(&m);
    return !plat_config()->minimal && m && !strcmp(m, "core_tsc_ratio:add_rr_chain");
}

double clock_tsc_rel_unc(void)
{
    struct plat_tsc_source s[4];
    size_t n = plat_tsc_sources(s, ARRAY_SIZE(s));
    if (n == 0 || s[0].hz == 0)
        return 0;
    if (s[0].spread > 0)
        return s[0].spread;
    double u = 0;
    for (size_t i = 1; i < n; i++) {
        if (!s[i].hz || !(s[i].spread > 0))
            continue; /* another stated rate says nothing about the crystal */
        double d = (double)s[i].hz / (double)s[0].hz - 1;
        u = MAX(u, (d < 0 ? -d : d) + s[i].spread);
    }
    return u;
}

/* ---- records ---------------------------------------------------------------------------------------- */

static void emit_clock(const struct plat_cpu *cpu, const char *when, const struct core_clock *c, bool ok)
{
    struct json *j = plat_rec_begin("core_clock");
    json_kv_uint(j, "cpu", cpu->id);
    json_kv_uint(j, "apic_id", cpu->apic_id);
    json_kv_uint(j, "package", cpu->package);
    json_kv_uint(j, "core", cpu->core);
    json_kv_str(j, "when", when);
    json_kv_str(j, "unit", "core_cycles_per_tsc_tick");
    if (ok) {
        json_key(j, "clock");
        core_clock_json(j, c);
        json_kv_str(j, "status", "ok");
    } else {
        json_kv_null(j, "clock");
        json_kv_str(j, "status", "unavailable");
        json_kv_str(j, "reason", "the CPU did not run the measurement in time");
    }
    plat_rec_end();
    if (ok)
        plat_printf("  core clock on CPU %u (%s): %.4f cycles/tick by %s (add %.4f, imul %.4f)\n", cpu->id, when,
                    c->ratio, c->method, c->chain[CORE_CHAIN_ADD].ratio, c->chain[CORE_CHAIN_IMUL].ratio);
    else
        plat_printf("  core clock on CPU %u (%s): unavailable (the CPU did not run it)\n", cpu->id, when);
}

/* ---- cross-checks ----------------------------------------------------------------------------------- */

/* Every TSC rate source against the one in use. */
static void check_tsc_sources(void)
{
    struct plat_tsc_source s[4];
    size_t n = plat_tsc_sources(s, ARRAY_SIZE(s));
    static char names[4][CLOCK_NAME_MAX];
    for (size_t i = 0; i < n; i++)
        fmt_snprintf(names[i], sizeof(names[i]), "run/tsc_hz/%s", s[i].name);
    if (n < 2) {
        struct crosscheck xc = {.quantity = "TSC rate (two sources)", .a = n ? names[0] : "run/tsc_hz",
                                .b = "a second source of the TSC rate", .a_value = n ? (double)s[0].hz : 0,
                                .b_value = __builtin_nan(""), .unit = "Hz", .tolerance = XC_TOL_CLOCK,
                                .not_judged = n ? "the TSC rate has one source only on this platform"
                                                : "the TSC rate has no source"};
        crosscheck_emit(&xc);
        return;
    }
    for (size_t i = 1; i < n; i++) {
        char what[96];
        fmt_snprintf(what, sizeof(what), "TSC rate (%s vs %s)", s[0].name, s[i].name);
        struct crosscheck xc = {.quantity = what, .a = names[0], .b = names[i], .a_value = (double)s[0].hz,
                                .b_value = (double)s[i].hz, .unit = "Hz", .tolerance = XC_TOL_CLOCK,
                                .why = "the rate in use against another clock over the start-up calibration"};
        crosscheck_emit(&xc);
    }
}

/* The two chains (and APERF/MPERF) on the benchmark's CPU. */
static void check_chains(const struct core_clock *c, uint32_t cpu)
{
    const struct core_chain_ratio *add = &c->chain[CORE_CHAIN_ADD], *imul = &c->chain[CORE_CHAIN_IMUL];
    char a[CLOCK_NAME_MAX], b[CLOCK_NAME_MAX], blame[CLOCK_NAME_MAX];
    fmt_snprintf(a, sizeof(a), "clock/cpu%u/add_rr_chain", cpu);
    fmt_snprintf(b, sizeof(b), "clock/cpu%u/imul_chain", cpu);
    struct crosscheck xc = {.quantity = "core/TSC ratio (add_rr chain vs imul chain)", .a = a, .b = b,
                            .a_value = add->valid ? add->ratio : __builtin_nan(""),
                            .b_value = imul->valid ? imul->ratio : __builtin_nan(""), .unit = "cycles_per_tick",
                            .tolerance = XC_TOL_RATIO};
    if (!add->valid)
        xc.not_judged = "the add chain took no time";
    else if (!imul->valid)
        xc.not_judged = imul->latency ? "the imul chain took no time"
                                      : "the IMUL latency of this CPU is not in the table (kernel/core_clock.c)";
    if (c->suspect) {
        /* a shortcut only makes a chain faster than its documented latency: the higher one is wrong */
        fmt_snprintf(blame, sizeof(blame), "clock/cpu%u/%s", cpu, c->suspect);
        xc.blame = blame;
        xc.why = "a chain can only read faster than its documented latency: the higher ratio is the suspect";
    }
    if (c->tcg)
        xc.why = "QEMU TCG: instructions have no latency there, the chains count emulated instructions";
    crosscheck_emit(&xc);

    if (c->aperf_valid) {
        fmt_snprintf(b, sizeof(b), "clock/cpu%u/aperf_mperf", cpu);
        struct crosscheck xa = {.quantity = "core/TSC ratio (APERF/MPERF vs add_rr chain)", .a = b, .b = a,
                                .a_value = c->aperf_ratio, .b_value = add->valid ? add->ratio : __builtin_nan(""),
                                .unit = "cycles_per_tick", .tolerance = XC_TOL_RATIO,
                                .not_judged = add->valid ? NULL : "the add chain took no time"};
        crosscheck_emit(&xa);
    }
}

/* The PMU's unhalted core cycles against the ratio in use, where this run reads a cycle counter: the chase
 * then converts with the counter's own window ratio, and this says whether both clocks agree. */
static void check_cycle_counter(uint32_t cpu, const struct core_clock *c)
{
    const char *how = pmu_core_cycles_method();
    if (!how)
        return; /* no cycle counter in this run: the ratio is the only conversion, nothing to compare */
    char a[CLOCK_NAME_MAX], b[CLOCK_NAME_MAX];
    fmt_snprintf(a, sizeof(a), "clock/cpu%u/unhalted_core_cycles", cpu);
    fmt_snprintf(b, sizeof(b), "clock/cpu%u/%s", cpu, c->method ? c->method : "none");
    struct crosscheck xc = {.quantity = "core/TSC ratio (unhalted core cycles vs the ratio in use)", .a = a, .b = b,
                            .b_value = c->ratio, .unit = "cycles_per_tick", .tolerance = XC_TOL_RATIO, .why = how};
    uint64_t c0, c1;
    volatile uint64_t sink = 0;
    if (!pmu_core_cycles_read(&c0)) {
        xc.a_value = __builtin_nan("");
        xc.not_judged = "the cycle counter could not be read (PMU self-test failed, or another CPU)";
        crosscheck_emit(&xc);
        return;
    }
    uint64_t t0 = timing_rdtsc();
    sink += core_clock_add_chain(20000); /* ~5 M core cycles */
    uint64_t t1 = timing_rdtsc();
    bool ok = pmu_core_cycles_read(&c1) && c1 > c0 && t1 > t0;
    (void)sink;
    xc.a_value = ok ? (double)(c1 - c0) / (double)(t1 - t0) : __builtin_nan("");
    xc.not_judged = ok ? NULL : "the cycle counter did not advance";
    crosscheck_emit(&xc);
}

/* Another CPU's ratio against the benchmark CPU's, or the benchmark CPU's now against its start. */
static void check_ratio(const char *quantity, const char *a, double av, const char *b, double bv, const char *why)
{
    struct crosscheck xc = {.quantity = quantity, .a = a, .b = b, .a_value = av, .b_value = bv,
                            .unit = "cycles_per_tick", .tolerance = XC_TOL_RATIO, .why = why};
    if (!(av > 0) || !(bv > 0))
        xc.not_judged = "one of the two ratios was not measured";
    crosscheck_emit(&xc);
}

static void use(const struct core_clock *c)
{
    C.valid = true;
    C.ratio = c->ratio;
    fmt_snprintf(C.method, sizeof(C.method), "%s", c->method ? c->method : "none");
}

/* The add chain's steady reference on the benchmark's CPU (clock_chain_ratio_ref), for a draw next to a
 * measurement that reads no clean window; one that reads none keeps the previous. */
static void steady_ref(void)
{
    if (clock_chain_ratio_usable())
        clock_chain_ratio_steady(plat_config()->serialize, NULL);
}

/* A dependent chain of k adds (about a core cycle each, under a tick apart): regions of evenly spread lengths. */
static NOINLINE uint64_t step_spin(uint64_t k)
{
    uint64_t x = k;
    for (uint64_t i = 0; i < k; i++)
        __asm__ volatile("add %1, %0" : "+r"(x) : "r"(i));
    return x;
}

#define CLOCK_STEP_REGIONS 512

double clock_measure_step(void)
{
    static uint64_t t[CLOCK_STEP_REGIONS];
    enum timing_serialize ser = plat_config()->serialize;
    for (size_t i = 0; i < CLOCK_STEP_REGIONS; i++) {
        uint64_t t0 = timing_read(ser);
        near_sink += step_spin(i % 256);
        t[i] = timing_read(ser) - t0;
    }
    return meas_step_estimate(t, CLOCK_STEP_REGIONS);
}

void clock_run_start(void)
{
    plat_printf("Core clock per CPU and TSC rate cross-checks (docs/measurement.md, \"Core clock and TSC\"):\n");
    check_tsc_sources();
    /* The TSC's step, for every interval's reading allowance (measure/engine.h meas_clock_step). */
    double step = clock_measure_step();
    meas_set_clock_step(step);
    plat_printf("  TSC step: %.0f tick%s per reading change (the reading allowance of every interval)\n", step,
                step == 1 ? "" : "s");

    struct plat_cpu self;
    if (!plat_cpu(0, &self))
        return;
    struct core_clock c;
    bool ok = plat_core_clock(self.id, &c) == 0 && c.ratio > 0;
    emit_clock(&self, "start", &c, ok);
    if (!ok)
        return;
    C.start = c;
    use(&c);
    steady_ref();
    check_chains(&c, self.id);
    check_cycle_counter(self.id, &c);

    char a[CLOCK_NAME_MAX], b[CLOCK_NAME_MAX], what[96];
    fmt_snprintf(b, sizeof(b), "clock/cpu%u/start", self.id);
    for (uint32_t i = 1; i < plat_cpu_count(); i++) {
        struct plat_cpu o;
        struct core_clock oc;
        if (!plat_cpu(i, &o))
            continue;
        bool ook = plat_core_clock(o.id, &oc) == 0 && oc.ratio > 0;
        emit_clock(&o, "start", &oc, ook);
        fmt_snprintf(a, sizeof(a), "clock/cpu%u/start", o.id);
        fmt_snprintf(what, sizeof(what), "core/TSC ratio (CPU %u vs CPU %u)", o.id, self.id);
        check_ratio(what, a, ook ? oc.ratio : 0, b, C.start.ratio,
                    "figures timed on another CPU are converted with the benchmark CPU's ratio");
    }
}

void clock_bench_start(const char *bench)
{
    n_chain_fig = 0; /* the L1 check blames the draws of the benchmark it runs in */
    struct plat_cpu self;
    if (!C.valid || !plat_cpu(0, &self))
        return;
    struct core_clock c;
    bool ok = plat_core_clock(self.id, &c) == 0 && c.ratio > 0;
    emit_clock(&self, bench, &c, ok);
    char a[CLOCK_NAME_MAX], b[CLOCK_NAME_MAX], what[96];
    fmt_snprintf(a, sizeof(a), "clock/cpu%u/%s", self.id, bench);
    fmt_snprintf(b, sizeof(b), "clock/cpu%u/start", self.id);
    fmt_snprintf(what, sizeof(what), "core/TSC ratio (before %s vs start)", bench);
    check_ratio(what, a, ok ? c.ratio : 0, b, C.start.ratio,
                "this benchmark converts ticks with the ratio measured just before it");
    if (ok)
        use(&c);
    steady_ref();
}

/* ---- core clock vs L1 load latency ------------------------------------------------------------------ */

static bool finite_pos(double x) { return x == x && x - x == 0 && x > 0; }

struct clock_l1_reading clock_l1_reading_of(double cycles, double median, double ci_lo, double ci_hi, double u)
{
    struct clock_l1_reading r = {.cycles = cycles, .lo = cycles, .hi = cycles};
    if (!finite_pos(u))
        u = 0;
    if (finite_pos(median) && finite_pos(ci_lo) && finite_pos(ci_hi)) {
        r.lo = cycles * MIN(ci_lo / median, 1.0);
        r.hi = cycles * MAX(ci_hi / median, 1.0);
    }
    r.lo *= 1 - u;
    r.hi *= 1 + u;
    return r;
}

void clock_l1_judge(struct clock_l1_judgement *j, const struct clock_l1_reading *r, size_t n)
{
    double c[CLOCK_L1_MAX], lo[CLOCK_L1_MAX], hi[CLOCK_L1_MAX];
    size_t m = 0;
    memset(j, 0, sizeof(*j));
    j->blame = CLOCK_L1_NOT_JUDGED;
    j->correction = 1;
    for (size_t i = 0; i < n && m < CLOCK_L1_MAX; i++)
        if (finite_pos(r[i].cycles)) {
            c[m] = r[i].cycles;
            lo[m] = finite_pos(r[i].lo) ? MIN(r[i].lo, r[i].cycles) : r[i].cycles;
            hi[m] = finite_pos(r[i].hi) ? MAX(r[i].hi, r[i].cycles) : r[i].cycles;
            m++;
        }
    if (!m)
        return;
    stats_sort(c, m);
    stats_sort(lo, m);
    stats_sort(hi, m);
    size_t rl, rh;
    bool exact;
    stats_median_ci_ranks(m, &rl, &rh, &exact);
    j->cycles = stats_quantile_sorted(c, m, 0.5);
    /* the median of the readings lies in [lo[rl], hi[rh]]: each reading's own interval holds its true value,
     * and the ranks of the median's interval hold the median of those */
    j->lo = MIN(lo[rl], j->cycles);
    j->hi = MAX(hi[rh], j->cycles);
    double l = __builtin_floor(j->cycles + 0.5);
    if (l < 1)
        return; /* under half a cycle: not a load latency (lat_result_judge marks it) */
    j->latency = (uint32_t)l;
    /* the side of the interval that faces L: agreement is |cycles / L - 1| <= tolerance */
    j->tolerance = j->cycles <= l ? 1 - j->cycles / j->hi : j->cycles / j->lo - 1;
    if (j->lo <= l && l <= j->hi) {
        j->blame = CLOCK_L1_AGREES;
        return;
    }
    /* below L: the chase cannot beat its latency, so the conversion read the clock low; but only within what
     * the chains may read apart (CORE_CLOCK_TOL) is L the latency meant: halfway between two integers says
     * nothing about which */
    if (j->cycles < l && l / j->cycles - 1 <= CORE_CLOCK_TOL) {
        j->blame = CLOCK_L1_CLOCK;
        j->correction = l / j->cycles;
    } else {
        j->blame = CLOCK_L1_FIGURE;
    }
}

/* Names of the figures this benchmark converted with the chain draws (clock_chain_converted). */
static char chain_fig[LEDGER_MAX][LEDGER_NAME_MAX];
static const char *chain_fig_p[LEDGER_MAX];

void clock_chain_converted(const char *figure)
{
    if (!figure || n_chain_fig == LEDGER_MAX)
        return;
    for (size_t i = 0; i < n_chain_fig; i++)
        if (!strcmp(chain_fig[i], figure))
            return;
    fmt_snprintf(chain_fig[n_chain_fig], LEDGER_NAME_MAX, "%s", figure);
    chain_fig_p[n_chain_fig] = chain_fig[n_chain_fig];
    n_chain_fig++;
}

bool clock_method_is_chains(const char *m)
{
    static const char pre[] = "core_tsc_ratio:clock_chains";
    return m && !strncmp(m, pre, sizeof(pre) - 1);
}

enum clock_l1_blame clock_l1_check(const char *figure, const struct clock_l1_reading *r, size_t n)
{
    struct clock_l1_judgement jd;
    clock_l1_judge(&jd, r, n);
    struct plat_cpu self = {0};
    plat_cpu(0, &self);
    char b[CLOCK_NAME_MAX];
    fmt_snprintf(b, sizeof(b), "clock/cpu%u/clock_chains", self.id);
    static char why[VERDICT_REASON_MAX];
    struct crosscheck xc = {
        .quantity = "core clock vs L1 load latency (an integer number of cycles)", .a = figure, .b = b,
        .a_value = jd.cycles, .b_value = jd.latency ? (double)jd.latency : __builtin_nan(""), .unit = UNIT_CYCLES,
        .tolerance = jd.tolerance, .a_lo = jd.lo, .a_hi = jd.hi, .cycles_suspect = chain_fig_p,
        .n_cycles_suspect = n_chain_fig};
    switch (jd.blame) {
    case CLOCK_L1_NOT_JUDGED:
        xc.not_judged = n ? "the L1 latency is under half a core cycle" : "the L1 latency was not measured";
        xc.cycles_suspect = NULL;
        break;
    case CLOCK_L1_AGREES:
        xc.why = "an L1D hit takes an integer number of core cycles: the clock draws hold (the tolerance is the "
                 "interval the readings and their conversion allow, on the side of the integer)";
        break;
    case CLOCK_L1_CLOCK:
        xc.blame = b;
        fmt_snprintf(why, sizeof(why),
                     "the chase cannot run faster than its integer latency (%u): the clock chain draws read the "
                     "clock %.2f %% low (ALU chains slowed, loads not); the cycles of every figure converted with "
                     "them in this benchmark are suspect (cycles_suspect), their ns hold",
                     jd.latency, 100 * (1 - 1 / jd.correction));
        xc.why = why;
        break;
    case CLOCK_L1_FIGURE:
        xc.blame = figure;
        xc.cycles_suspect = NULL;
        xc.why = jd.cycles > jd.latency
                     ? "above the integer: the chase lost time (interrupted, or the load ports shared), which no "
                       "clock draw explains (the chains only read the clock low): the L1 figure is blamed"
                     : "farther below the integer than the chains may read apart (CORE_CLOCK_TOL): not an L1 hit "
                       "at an integer latency by any clock the chains allow, and no correction: the L1 figure "
                       "is blamed";
        break;
    }
    crosscheck_emit(&xc);
    if (jd.blame == CLOCK_L1_CLOCK)
        plat_printf("  the cycles of %zu figure(s) converted with the clock chains are suspect (cycles_suspect): an "
                    "L1 hit says the draws read the clock %.2f %% low\n",
                    n_chain_fig, 100 * (1 - 1 / jd.correction));
    return jd.blame;
}
