/* atomic.c - the `atomic` benchmark: core cycles per locked read-modify-write in a dependent `lock xadd` chain on
 * one cache line (the cost every lock, reference count and atomic counter pays), timed by the engine, beside
 * kernel/core_clock.c's register add chain as a check of the ticks-to-cycles conversion. */
#include "bench/atomic.h"
#include "bench/clock.h"
#include "bench/platform.h"
#include "kernel/core_clock.h"
#include "kernel/json.h"
#include "measure/engine.h"
#include "measure/stats_json.h"
#include "measure/verdict.h"

/* No asm: __atomic_fetch_add whose result is used is exactly `lock xadd` on x86-64 (GCC and Clang), and a
 * compiler may neither drop nor merge atomic operations. Unrolled 8 times so the loop's own dec/jnz, which do
 * not depend on the chain, hide under it. */
TIMED_FN void atomic_chain_run(void *ctx, uint64_t iters)
{
    struct atomic_chain *c = ctx;
    uint64_t v = c->v;
    for (uint64_t i = 0; i < iters; i++) {
        v = __atomic_fetch_add(&c->word, v, __ATOMIC_RELAXED);
        v = __atomic_fetch_add(&c->word, v, __ATOMIC_RELAXED);
        v = __atomic_fetch_add(&c->word, v, __ATOMIC_RELAXED);
        v = __atomic_fetch_add(&c->word, v, __ATOMIC_RELAXED);
        v = __atomic_fetch_add(&c->word, v, __ATOMIC_RELAXED);
        v = __atomic_fetch_add(&c->word, v, __ATOMIC_RELAXED);
        v = __atomic_fetch_add(&c->word, v, __ATOMIC_RELAXED);
        v = __atomic_fetch_add(&c->word, v, __ATOMIC_RELAXED);
    }
    c->v = v;
}

struct add_chain {
    uint64_t sink;
};

static void add_chain_run(void *ctx, uint64_t iters)
{
    struct add_chain *a = ctx;
    if (iters)
        a->sink += core_clock_add_chain(iters);
}

#define ATOMIC_MAX_SAMPLES 256
static double samples[ATOMIC_MAX_SAMPLES];
static struct atomic_chain chain;

/* The profile's protocol (as the penalty loops'): quick 20000-tick samples, 7..31 samples, 2 ms; full 200000
 * ticks, 11..201, 50 ms; time_budget_ms overrides the budget. */
static int measure(meas_body_fn body, void *ctx, double per_iter, struct meas_result *m)
{
    const struct plat_config *cfg = plat_config();
    uint32_t ms = cfg->time_budget_ms ? cfg->time_budget_ms : cfg->quick ? 2 : 50;
    struct meas_spec s = {
        .body = body,
        .ctx = ctx,
        .serialize = cfg->serialize,
        .warmup_iters = 64,
        .warmup_samples = 1,
        .overhead_reps = 15,
        .iters = 16,
        .min_sample_ticks = cfg->quick ? 20000 : 200000,
        .work_per_iter = per_iter,
        .min_samples = meas_min_samples(cfg->quick),
        .max_samples = cfg->quick ? 31 : 201,
        .target_ci = meas_ci_target(cfg->quick),
        .budget_ticks = (uint64_t)ms * plat_tsc_hz() / 1000,
    };
    return meas_run(&s, samples, ATOMIC_MAX_SAMPLES, m);
}

void bench_atomic(void)
{
    const struct plat_config *cfg = plat_config();
    struct plat_cpu self = {0};
    plat_cpu(0, &self);
    const char *method = "none";
    double ratio = clock_core_ratio(&method);
    uint64_t hz = plat_tsc_hz();

    /* the baseline first: cycles per add where the conversion is right is 1 */
    struct add_chain add = {0};
    struct meas_result ma;
    double add_cycles = -1;
    if (measure(add_chain_run, &add, CORE_CLOCK_ADD_PER_ITER, &ma) == MEAS_OK)
        add_cycles = ma.st.median * ratio;

    chain = (struct atomic_chain){.word = 1, .v = 1};
    struct meas_result m;
    struct stats cyc = {0};
    struct verdict v;
    int rc = measure(atomic_chain_run, &chain, ATOMIC_PER_ITER, &m);
    if (rc == MEAS_OK) {
        cyc = m.st;
        stats_scale(&cyc, ratio);
        verdict_from_stats(&v, &cyc, m.converged, meas_ci_target(cfg->quick), meas_min_samples(cfg->quick));
        if (add_cycles < 0)
            verdict_worsen(&v, QUALITY_SUSPECT, "the add-chain baseline could not be measured");
        else if (add_cycles < 1 - CORE_CLOCK_TOL || add_cycles > 1 + CORE_CLOCK_TOL)
            verdict_worsen(&v, QUALITY_SUSPECT, "the register add chain ran at %.3f cycles per add, not 1 "
                           "(+-%.0f %%): the ticks-to-cycles conversion (%s) does not hold here",
                           add_cycles, 100 * CORE_CLOCK_TOL, method);
    } else {
        verdict_unavailable(&v, "the clock did not advance over the chain");
    }

    struct json *j = plat_rec_begin("atomic");
    json_kv_uint(j, "cpu", self.id);
    json_kv_str(j, "instruction", "lock xadd r64, m64");
    figure_json(j, "atomic_rmw", &cyc, UNIT_CYCLES, &v);
    if (rc == MEAS_OK) {
        stats_json_also(j, UNIT_NS, hz ? m.st.median * 1e9 / (double)hz : 0);
        stats_json_also(j, UNIT_TSC, m.st.median);
    }
    json_kv_str(j, "cycles_method", method);
    json_kv_double(j, "core_tsc_ratio", ratio);
    json_kv_double_or_null(j, "add_cycles", add_cycles >= 0, add_cycles);
    json_kv_uint(j, "iters_per_sample", rc == MEAS_OK ? m.iters : 0);
    json_kv_str(j, "method", "dependent chain: each lock xadd adds the previous one's result to one 64-byte-aligned "
                             "word, 8 per loop iteration; engine median of TSC ticks per RMW x the core/TSC ratio; "
                             "add_cycles: kernel/core_clock.c's register add chain through the same conversion");
    plat_rec_end();

    plat_printf("  %-12s %10s %18s %10s %-8s %s\n", "figure", "cycles", "95% CI", "add=1?", "quality", "reason");
    plat_printf("  %-12s %10.2f %8.2f..%-8.2f %10.3f %-8s %s\n", "atomic_rmw", cyc.median, cyc.ci_lo, cyc.ci_hi,
                add_cycles, quality_name(v.q), v.reason);
}
