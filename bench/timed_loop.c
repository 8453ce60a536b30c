/* timed_loop.c - the timed-loop protocol (pm_measure) that penalty, branch, bandwidth and snippet measure with:
 * the engine's adaptive sampling of a loop, plus core cycles per tick counted around one sample. */
#include "bench/timed_loop.h"
#include "measure/timing.h"
#include "measure/engine.h"
#include "bench/clock.h"
#include "bench/cycle_accounting.h"
#include "bench/platform.h"
#include "kernel/fmt.h"

static double pm_samples[PM_MAX_SAMPLES];

void pm_opts_profile(struct pm_opts *o)
{
    const struct plat_config *cfg = plat_config();
    uint64_t hz = plat_tsc_hz();
    bool quick = cfg->quick;
    uint32_t ms = cfg->time_budget_ms ? cfg->time_budget_ms : quick ? 2 : 50;
    *o = (struct pm_opts){
        .min_sample_tsc = quick ? 20000 : 200000,
        .budget_tsc = (uint64_t)ms * hz / 1000,
        .min_samples = meas_min_samples(quick),
        .max_samples = quick ? 31 : 201,
        .target_ci = meas_ci_target(quick),
        .warmup_iters = 64,
        .serialize = cfg->serialize,
        .replicates = meas_replicates(quick),
    };
    if (cfg->minimal) {
        o->max_samples = o->min_samples; /* emulated: the minimum, no stop rule to reach */
        o->replicates = 1;               /* minimal samples means minimal: no replicates */
    }
}

struct pm_counted {
    pm_loop_fn fn;
    void *arg;
    uint64_t iters, ticks;
    enum timing_serialize ser;
};

static void pm_counted_run(void *arg)
{
    struct pm_counted *c = arg;
    uint64_t t0 = timing_read(c->ser);
    c->fn(c->arg, c->iters);
    c->ticks = timing_read(c->ser) - t0;
}

/* Core cycles per TSC tick for this loop: counted around one sample when the PMU hook can, else the
 * platform's ratio. */
static double pm_ratio(pm_loop_fn fn, void *arg, uint64_t iters, enum timing_serialize ser, const char **method)
{
    static char name[64];
    struct pm_counted c = {fn, arg, iters, 0, ser};
    struct ca_event ev = {.candidates = ca_ev_cycles};
    char why[96];
    if (ca_can_count(NULL) && ca_count(&ev, 1, pm_counted_run, &c, why, sizeof(why)) == 1 && ev.used &&
        ev.count && c.ticks) {
        fmt_snprintf(name, sizeof(name), "pmu:%s", ev.used);
        *method = name;
        return (double)ev.count / (double)c.ticks;
    }
    return clock_core_ratio(method);
}

int pm_measure(pm_loop_fn fn, void *arg, const struct pm_opts *o, struct pm_result *r)
{
    if (!fn || !o || !r)
        return -1;
    *r = (struct pm_result){0};
    struct meas_spec spec = {
        .body = fn,
        .ctx = arg,
        .serialize = o->serialize,
        .warmup_iters = o->fixed ? 0 : o->warmup_iters ? o->warmup_iters : 64,
        .overhead_reps = PM_OVERHEAD_REPS,
        .iters = o->first_iters ? o->first_iters : 16,
        .min_sample_ticks = o->fixed ? 0 : o->min_sample_tsc ? o->min_sample_tsc : 1,
        .max_iters = PM_MAX_ITERS,
        .min_samples = o->min_samples,
        .max_samples = o->max_samples,
        .target_ci = o->target_ci,
        .budget_ticks = o->budget_tsc,
        .replicates = o->replicates,
        .setup = o->setup,
    };
    struct meas_result m;
    if (meas_run(&spec, pm_samples, PM_MAX_SAMPLES, &m) != MEAS_OK)
        return -1;
    r->iters_per_sample = m.iters;
    r->samples = m.st.n;
    r->tsc = m.st;
    r->cv = r->tsc.spread;
    r->converged = m.converged;
    if (!o->ticks_only) {
        r->ratio = pm_ratio(fn, arg, m.iters, o->serialize, &r->cycles_method);
        r->cycles = r->tsc.median * r->ratio;
    }
    uint64_t hz = plat_tsc_hz();
    r->ns = hz ? r->tsc.median * 1e9 / (double)hz : 0;
    return 0;
}
