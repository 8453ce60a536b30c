/* atomic.c - the `atomic` benchmark: core cycles per locked read-modify-write in a dependent `lock xadd` chain on
 * one cache line (the cost every lock, reference count and atomic counter pays), timed by the engine, beside
 * kernel/core_clock.c's register add chain as a check of the ticks-to-cycles conversion. */
#include "bench/atomic.h"
#include "bench/clock.h"
#include "bench/timed_loop.h"
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

static struct atomic_chain chain;

void bench_atomic(void)
{
    const struct plat_config *cfg = plat_config();
    struct plat_cpu self = {0};
    plat_cpu(0, &self);
    const char *method = "none";
    double ratio = clock_core_ratio(&method);

    /* The add-chain baseline (cycles per add where the conversion is right: 1) and the atomic chain, each in the
     * profile's replicates, interleaved in time (docs/measurement.md "Replicates"): a replicate of each per pass,
     * each replicate converted to cycles with its own core/TSC ratio where the platform measures one. */
    struct add_chain add = {0};
    chain = (struct atomic_chain){.word = 1, .v = 1};
    struct pm_result ra, rm;
    struct pm_job jobs[2] = {{add_chain_run, &add, {0}, &ra, 0}, {atomic_chain_run, &chain, {0}, &rm, 0}};
    pm_opts_profile(&jobs[0].o);
    jobs[1].o = jobs[0].o;
    pm_measure_interleaved(jobs, 2);
    double add_cycles = jobs[0].rc == 0 ? ra.cycles / CORE_CLOCK_ADD_PER_ITER : -1;
    int rc = jobs[1].rc;
    struct stats cyc = {0};
    struct verdict v;
    if (rc == 0) {
        pm_cycles_stats(&rm, ATOMIC_PER_ITER, &cyc);
        verdict_from_stats(&v, &cyc, rm.cyc_converged, meas_ci_target(cfg->quick), meas_min_samples(cfg->quick));
        if (add_cycles < 0)
            verdict_worsen(&v, QUALITY_SUSPECT, "the add-chain baseline could not be measured");
        else if (add_cycles < 1 - CORE_CLOCK_TOL || add_cycles > 1 + CORE_CLOCK_TOL)
            verdict_worsen(&v, QUALITY_SUSPECT, "the register add chain ran at %.3f cycles per add, not 1 "
                           "(+-%.0f %%): the ticks-to-cycles conversion (%s) does not hold here",
                           add_cycles, 100 * CORE_CLOCK_TOL, rm.cycles_method ? rm.cycles_method : method);
    } else {
        verdict_unavailable(&v, "the clock did not advance over the chain");
    }

    struct json *j = plat_rec_begin("atomic");
    json_kv_uint(j, "cpu", self.id);
    json_kv_str(j, "instruction", "lock xadd r64, m64");
    figure_json(j, "atomic_rmw", &cyc, UNIT_CYCLES, &v);
    if (rc == 0) {
        stats_json_also(j, UNIT_NS, rm.ns / ATOMIC_PER_ITER);
        stats_json_also(j, UNIT_TSC, rm.tsc.median / ATOMIC_PER_ITER);
    }
    json_kv_str(j, "cycles_method", rc == 0 && rm.cycles_method ? rm.cycles_method : method);
    json_kv_double(j, "core_tsc_ratio", rc == 0 && rm.ratio > 0 ? rm.ratio : ratio);
    json_kv_double_or_null(j, "add_cycles", add_cycles >= 0, add_cycles);
    json_kv_uint(j, "iters_per_sample", rc == 0 ? rm.iters_per_sample : 0);
    json_kv_str(j, "method", "dependent chain: each lock xadd adds the previous one's result to one 64-byte-aligned "
                             "word, 8 per loop iteration; engine median of TSC ticks per RMW x the core/TSC ratio "
                             "(per replicate where measured), replicates interleaved with the baseline's; "
                             "add_cycles: kernel/core_clock.c's register add chain through the same conversion");
    plat_rec_end();

    plat_printf("  %-12s %10s %18s %10s %-8s %s\n", "figure", "cycles", "95% CI", "add=1?", "quality", "reason");
    plat_printf("  %-12s %10.2f %8.2f..%-8.2f %10.3f %-8s %s\n", "atomic_rmw", cyc.median, cyc.ci_lo, cyc.ci_hi,
                add_cycles, quality_name(v.q), v.reason);
}
