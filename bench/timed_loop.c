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

static struct meas_spec pm_spec(pm_loop_fn fn, void *arg, const struct pm_opts *o)
{
    return (struct meas_spec){
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
}

/* Whether each replicate gets its own ratio: the benchmark's comes from the add chain (the same chain is then
 * timed next to every replicate), no PMU counts cycles around the loop, and the machine is not emulated. */
static bool ratio_per_replicate(void) { return !ca_can_count(NULL) && clock_chain_ratio_usable(); }

struct pm_rep_ratio {
    double ratio, u;
};

/* The figure from its replicates (m[0..n), each with its ratio when rr): ticks combined as meas_run does,
 * cycles either per replicate or with the one ratio of the loop. */
static void pm_finish(pm_loop_fn fn, void *arg, const struct pm_opts *o, const struct meas_result *m,
                      const struct pm_rep_ratio *rr, size_t n, struct pm_result *r)
{
    struct meas_result all;
    meas_combine(m, n, o->target_ci, &all);
    *r = (struct pm_result){0};
    r->iters_per_sample = all.iters;
    r->samples = all.st.n;
    r->tsc = all.st;
    r->cv = r->tsc.spread;
    r->converged = all.converged;
    if (o->ticks_only) { /* no core cycles: ratio, cycles and cycles_method stay 0 / NULL */
    } else if (rr) {
        struct meas_result c[MEAS_MAX_REPLICATES];
        double ratios[MEAS_MAX_REPLICATES];
        size_t k = 0;
        for (size_t i = 0; i < n && i < MEAS_MAX_REPLICATES; i++) {
            c[i] = m[i];
            stats_scale_unc(&c[i].st, rr[i].ratio, rr[i].u);
            if (m[i].st.n)
                ratios[k++] = rr[i].ratio;
        }
        struct meas_result cy;
        meas_combine(c, n, o->target_ci, &cy);
        r->cyc = cy.st;
        r->cyc_converged = cy.converged;
        stats_sort(ratios, k);
        r->ratio = stats_quantile_sorted(ratios, k, 0.5);
        r->cycles_method = PM_RATIO_PER_REPLICATE;
    } else {
        r->ratio = pm_ratio(fn, arg, all.iters, o->serialize, &r->cycles_method);
        r->cyc = r->tsc;
        stats_scale(&r->cyc, r->ratio);
        r->cyc_converged = r->converged;
    }
    r->cycles = r->cyc.median;
    uint64_t hz = plat_tsc_hz();
    r->ns = hz ? r->tsc.median * 1e9 / (double)hz : 0;
}

/* Replicate k of a figure and, when per_rep, its ratio right after it. m is element k of the figure's array of
 * replicates (m - k its first: the overhead an overhead_once spec reuses). */
static int pm_one_replicate(const struct meas_spec *spec, size_t k, uint64_t start_iters, bool back_to_back,
                            bool per_rep, struct meas_result *m, struct pm_rep_ratio *rr)
{
    if (meas_replicate(spec, k, start_iters, back_to_back, k ? m - k : NULL, pm_samples, PM_MAX_SAMPLES, m) !=
        MEAS_OK)
        return -1;
    if (per_rep) {
        rr->u = 0;
        rr->ratio = clock_chain_ratio_now(spec->serialize, &rr->u);
        if (!(rr->ratio > 0)) /* no clean window now: the benchmark's steady reference (bench/clock.h) */
            rr->ratio = clock_chain_ratio_ref(&rr->u);
        if (!(rr->ratio > 0))
            return -1;
    }
    return 0;
}

int pm_measure(pm_loop_fn fn, void *arg, const struct pm_opts *o, struct pm_result *r)
{
    if (!fn || !o || !r)
        return -1;
    *r = (struct pm_result){0};
    struct meas_spec spec = pm_spec(fn, arg, o);
    size_t n = o->replicates ? o->replicates : 1;
    if (n > MEAS_MAX_REPLICATES)
        return -1;
    bool per_rep = !o->ticks_only && ratio_per_replicate();
    struct meas_result m[MEAS_MAX_REPLICATES];
    struct pm_rep_ratio rr[MEAS_MAX_REPLICATES];
    for (size_t k = 0; k < n; k++)
        if (pm_one_replicate(&spec, k, k ? m[k - 1].iters : 0, true, per_rep, &m[k], &rr[k]) != 0)
            return -1;
    pm_finish(fn, arg, o, m, per_rep ? rr : NULL, n, r);
    return 0;
}

/* Per job and replicate of a batch (static: PM_MAX_JOBS x MEAS_MAX_REPLICATES is too much for a stack). */
static struct meas_result pm_batch_m[PM_MAX_JOBS][MEAS_MAX_REPLICATES];
static struct pm_rep_ratio pm_batch_rr[PM_MAX_JOBS][MEAS_MAX_REPLICATES];

int pm_measure_interleaved(struct pm_job *jobs, size_t n)
{
    if (!jobs || n > PM_MAX_JOBS)
        return -1;
    size_t passes = 0;
    for (size_t j = 0; j < n; j++) {
        size_t rj = jobs[j].o.replicates ? jobs[j].o.replicates : 1;
        jobs[j].rc = jobs[j].fn && jobs[j].r && rj <= MEAS_MAX_REPLICATES ? 0 : -1;
        if (jobs[j].r)
            *jobs[j].r = (struct pm_result){0};
        passes = MAX(passes, rj);
    }
    bool per_rep = ratio_per_replicate();
    for (size_t k = 0; k < passes; k++)
        for (size_t j = 0; j < n; j++) {
            struct pm_job *jb = &jobs[j];
            if (jb->rc || k >= (jb->o.replicates ? jb->o.replicates : 1))
                continue;
            struct meas_spec spec = pm_spec(jb->fn, jb->arg, &jb->o);
            if (pm_one_replicate(&spec, k, k ? pm_batch_m[j][k - 1].iters : 0, n == 1, per_rep && !jb->o.ticks_only,
                                 &pm_batch_m[j][k],
                                 &pm_batch_rr[j][k]) != 0)
                jb->rc = -1;
        }
    int failed = 0;
    for (size_t j = 0; j < n; j++) {
        struct pm_job *jb = &jobs[j];
        if (jb->rc) {
            failed++;
            continue;
        }
        pm_finish(jb->fn, jb->arg, &jb->o, pm_batch_m[j], per_rep ? pm_batch_rr[j] : NULL,
                  jb->o.replicates ? jb->o.replicates : 1, jb->r);
    }
    return failed;
}

void pm_cycles_stats(const struct pm_result *r, double per_iter, struct stats *out)
{
    *out = r->cyc; /* each replicate converted with its own ratio where it has one (pm_result.cyc) */
    stats_scale(out, 1 / per_iter);
}
