/* chase.c - pointer-chase latency measurement (protocol in chase.h and docs/measurement.md). */
#include "measure/chase.h"
#include "measure/engine.h"

#define CHASE_1 p = *(void *const *)p;
#define CHASE_8 CHASE_1 CHASE_1 CHASE_1 CHASE_1 CHASE_1 CHASE_1 CHASE_1 CHASE_1
#define CHASE_64 CHASE_8 CHASE_8 CHASE_8 CHASE_8 CHASE_8 CHASE_8 CHASE_8 CHASE_8

TIMED_FN void *chase_run(void *p, uint64_t iters)
{
    while (iters--) {
        CHASE_64
    }
    return p;
}

void chase_opts_default(struct chase_opts *o)
{
    *o = (struct chase_opts){
        .min_sample_tsc = 100000,
        .budget_tsc = 0,
        .min_samples = 11,
        .max_samples = 0,
        .target_ci = 0.01,
        .warmup_passes = 1,
        .serialize = TIMING_DEFAULT_SERIALIZE,
        .clock = NULL,
        .clock_ctx = NULL,
    };
}

struct chase_ctx {
    void *p;
    const struct chase_opts *o;
};

/* The engine's body: iters x CHASE_UNROLL dependent loads, continuing where the last call stopped. */
static void chase_body(void *ctx, uint64_t iters)
{
    struct chase_ctx *c = ctx;
    c->p = chase_run(c->p, iters);
}

/* Replicate rep: the first chases the chain it was given, the others the fresh one the caller's setup built. */
static int chase_setup(void *ctx, size_t rep)
{
    struct chase_ctx *c = ctx;
    if (rep == 0)
        return MEAS_SETUP_FRESH;
    void *p = c->o->setup ? c->o->setup(c->o->setup_ctx, rep) : CHASE_SAME_CHAIN;
    if (!p)
        return -1;
    if (p == CHASE_SAME_CHAIN)
        return MEAS_SETUP_WARM;
    c->p = p;
    return MEAS_SETUP_FRESH;
}

int chase_measure(void *start, size_t n_elems, const struct chase_opts *o, double *sample_buf,
                  size_t sample_cap, struct chase_result *r)
{
    if (!start || n_elems == 0 || !o || !sample_buf || sample_cap == 0 || !r)
        return CHASE_EINVAL;
    size_t max_n = (o->max_samples && o->max_samples < sample_cap) ? o->max_samples : sample_cap;
    size_t min_n = o->min_samples ? o->min_samples : 1;
    if (min_n > max_n)
        return CHASE_EINVAL;
    *r = (struct chase_result){0};

    /* Warm-up: every element touched at least once per pass (caches, TLB, page-walk caches filled). */
    uint64_t passes = o->warmup_passes ? o->warmup_passes : 1;
    if (n_elems > (UINT64_MAX - CHASE_UNROLL) / passes)
        return CHASE_EINVAL;
    struct chase_ctx c = {.p = start, .o = o};
    struct meas_spec spec = {
        .body = chase_body,
        .ctx = &c,
        .clock = o->clock,
        .clock_ctx = o->clock_ctx,
        .serialize = o->serialize,
        .warmup_iters = o->warmup_loads ? (o->warmup_loads + CHASE_UNROLL - 1) / CHASE_UNROLL
                                        : (n_elems * passes + CHASE_UNROLL - 1) / CHASE_UNROLL,
        .overhead_reps = CHASE_OVERHEAD_REPS,
        .iters = 1,
        .min_sample_ticks = o->min_sample_tsc ? o->min_sample_tsc : 1,
        .max_iters = CHASE_MAX_ITERS,
        .work_per_iter = CHASE_UNROLL,
        .min_samples = min_n,
        .max_samples = max_n,
        .target_ci = o->target_ci,
        .budget_ticks = o->budget_tsc,
        .replicates = o->replicates,
        .setup = chase_setup,
    };
    struct meas_result m;
    int rc = meas_run(&spec, sample_buf, sample_cap, &m);
    if (rc != MEAS_OK)
        return rc == MEAS_EINVAL || rc == MEAS_ESETUP ? CHASE_EINVAL : CHASE_ECLOCK;
    r->tsc_per_load = m.st;
    r->samples = m.st.n;
    r->overhead_tsc = m.overhead;
    r->loads_per_sample = m.iters * CHASE_UNROLL;
    r->loads_total = m.iters_total * CHASE_UNROLL;
    r->elapsed_tsc = m.elapsed;
    r->converged = m.converged;
    r->budget_hit = m.budget_hit;
    r->end = c.p;
    return CHASE_OK;
}
