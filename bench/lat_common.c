/* lat_common.c - units, options, chains, placement jobs and the one-pass protocol shared by the latency benchmarks. */
#include "bench/lat_common.h"
#include "bench/clock.h"
#include "kernel/fmt.h"
#include "measure/engine.h"
#include "measure/rand.h"
#include "measure/stats_json.h"
#include "measure/timing.h"
#include "pmu/pmu_bench_api.h"

static double samples[LAT_MAX_SAMPLES];

double lat_tsc_to_ns(double tsc)
{
    uint64_t hz = plat_tsc_hz();
    return hz ? tsc * 1e9 / (double)hz : 0;
}

void lat_result_from(struct lat_result *r, const struct stats *tsc, double ratio, const char *cycles_method)
{
    *r = (struct lat_result){0};
    r->tsc = *tsc;
    r->samples = r->tsc.n;
    r->ratio = ratio;
    r->ratio_u = __builtin_nan("");
    r->cycles_method = cycles_method;
    r->ns = lat_tsc_to_ns(r->tsc.median);
    r->cycles = r->tsc.median * ratio;
}

const char *lat_cycles_method_combined(const char *method, const double *u, size_t n)
{
    size_t stated = 0;
    for (size_t i = 0; i < n; i++)
        stated += u[i] > 0;
    if (!method || !strncmp(method, "fixed_counter:", 14))
        return method;
    if (!strcmp(method, LAT_CYCLES_STEADY) && stated <= 1)
        return method;
    return stated > 1 ? LAT_CYCLES_AFTER_EACH : stated == 1 ? LAT_CYCLES_AFTER : method;
}

void lat_result_combine_own(const struct meas_result *reps, const double *ratio, const double *ratio_u, size_t n,
                            double fallback_ratio, double fallback_u, const char *method, struct lat_result *r)
{
    double u, k = clock_ratio_combine(ratio, ratio_u, n, &u);
    if (!(k > 0)) {
        k = fallback_ratio;
        u = fallback_u;
    }
    lat_result_combine(reps, n, k, u, lat_cycles_method_combined(method, ratio_u, n), r);
}

struct meas_result lat_result_rep(const struct lat_result *r)
{
    return (struct meas_result){.st = r->tsc, .converged = r->converged, .budget_hit = r->budget_hit,
                                .iters_total = r->loads};
}

void lat_result_combine(const struct meas_result *reps, size_t n, double ratio, double ratio_u,
                        const char *cycles_method, struct lat_result *r)
{
    struct meas_result all;
    meas_combine(reps, n, meas_ci_target(plat_config()->quick), &all);
    lat_result_from(r, &all.st, ratio, cycles_method);
    r->ratio_u = ratio_u;
    r->converged = all.converged;
    r->budget_hit = all.budget_hit;
    r->loads = all.iters_total;
    lat_result_judge(r);
}

size_t lat_replicates(void)
{
    const struct plat_config *cfg = plat_config();
    return cfg->minimal ? 1 : meas_replicates(cfg->quick);
}

uint64_t lat_rep_seed(uint64_t seed, size_t k)
{
    if (k == 0)
        return seed;
    uint64_t s = seed + 0x9E3779B97F4A7C15ull * k;
    return splitmix64_next(&s);
}

/* The figure as published: ns, its interval carrying the TSC rate's uncertainty (interval arithmetic). */
static struct stats ns_stats(const struct stats *tsc)
{
    struct stats ns = *tsc;
    uint64_t hz = plat_tsc_hz();
    stats_scale_unc(&ns, hz ? 1e9 / (double)hz : 0, clock_tsc_rel_unc());
    return ns;
}

void lat_result_judge(struct lat_result *r)
{
    /* judged on the interval it publishes (in ns, the rate's uncertainty in it) */
    struct stats ns = ns_stats(&r->tsc);
    verdict_from_stats(&r->v, r->tsc.n && plat_tsc_hz() ? &ns : &r->tsc, r->converged,
                       meas_ci_target(plat_config()->quick), meas_min_samples(plat_config()->quick));
    /* Every latency here is a chain of dependent loads: under a core cycle per load the core did not wait for
     * each load (a renamed or overlapped link), so the figure is not a load-to-use latency. */
    if (r->tsc.n && r->cycles > 0 && r->cycles < LAT_MIN_CYCLES_PER_LOAD)
        verdict_worsen(&r->v, QUALITY_SUSPECT,
                       "%.2f core cycles per dependent load, under 1: the loads were not each waited for", r->cycles);
}

void lat_rep_offsets_json(struct json *j, const char *key, uint64_t buf_bytes, uint64_t bytes)
{
    size_t reps = lat_replicates();
    json_key(j, key);
    json_arr_begin(j);
    for (size_t k = 0; k < reps; k++)
        json_uint(j, lat_rep_offset(buf_bytes, bytes, LAT_REP_ALIGN, k, reps));
    json_arr_end(j);
}

void lat_unavailable_json(struct json *j, const char *name, const char *why)
{
    struct verdict v;
    verdict_unavailable(&v, why);
    figure_json(j, name, NULL, UNIT_NS, &v);
}

void lat_result_json(struct json *j, const char *name, const struct lat_result *r)
{
    /* ticks -> ns with the rate in use, its uncertainty carried into the interval (interval arithmetic) */
    struct stats ns = ns_stats(&r->tsc);
    figure_json(j, name, &ns, UNIT_NS, &r->v);
    stats_json_also(j, UNIT_TSC, r->tsc.median);
    stats_json_also(j, UNIT_CYCLES, r->cycles);
    json_kv_str(j, "cycles_method", r->cycles_method);
    json_kv_double(j, "core_tsc_ratio", r->ratio);
    json_kv_double(j, "core_tsc_ratio_u", r->ratio_u); /* NaN: null */
    if (clock_method_is_chains(r->cycles_method) && r->cycles > 0)
        clock_chain_converted(name); /* what an L1 check that blames the draws marks (clock_l1_check) */
}

uint64_t lat_budget_ticks(void)
{
    const struct plat_config *cfg = plat_config();
    uint32_t ms = cfg->time_budget_ms ? cfg->time_budget_ms : cfg->quick ? 2 : 50;
    return (uint64_t)ms * plat_tsc_hz() / 1000;
}

void lat_chase_opts(struct chase_opts *o)
{
    const struct plat_config *cfg = plat_config();
    chase_opts_default(o);
    o->serialize = cfg->serialize;
    o->budget_tsc = lat_budget_ticks();
    o->min_samples = meas_min_samples(cfg->quick);
    o->target_ci = meas_ci_target(cfg->quick);
    if (cfg->minimal) { /* emulated: the minimum, no stop rule to reach, short samples */
        o->max_samples = o->min_samples;
        o->min_sample_tsc /= LAT_MINIMAL_SAMPLE_DIV;
    }
}

/* Reads the PMU's core-cycle counter (when `use`) and the TSC side by side. */
static bool counter_read(bool use, uint64_t *cyc, uint64_t *tsc)
{
    if (!use || !pmu_core_cycles_read(cyc))
        return false;
    *tsc = timing_rdtsc();
    return true;
}

/* Ratio from the counter deltas, or the platform's; *u its relative uncertainty (NaN: not stated). */
static double window_ratio(bool use, bool ok0, uint64_t c0, uint64_t t0, const char **method, double *u)
{
    static char name[48];
    uint64_t c1, t1;
    if (ok0 && counter_read(use, &c1, &t1) && c1 > c0 && t1 > t0) {
        fmt_snprintf(name, sizeof(name), "fixed_counter:%s", pmu_core_cycles_method());
        *method = name;
        /* both deltas of the whole measurement (milliseconds): one count and one clock step of reading */
        *u = (1.0 + meas_clock_step()) / (double)(t1 - t0);
        return (double)(c1 - c0) / (double)(t1 - t0);
    }
    /* No counter: the add chain timed right after the measurement where the benchmark's ratio is that chain's
     * (its start-up runs lose cycles to interruptions on a shared machine; these short windows, minimum per
     * length, do not: clock_chain_ratio_now). */
    double r;
    if (clock_chain_ratio_usable()) {
        if ((r = clock_chain_ratio_now(plat_config()->serialize, u)) > 0) {
            *method = LAT_CYCLES_AFTER;
            return r;
        }
        if ((r = clock_chain_ratio_ref(u)) > 0) { /* no clean window now: the benchmark's steady reference */
            *method = LAT_CYCLES_STEADY;
            return r;
        }
    }
    *u = __builtin_nan("");
    return clock_core_ratio(method);
}

/* chase_measure's setup: a fresh permutation of the same lines for replicate k. */
static void *fresh_chain(void *ctx, size_t k)
{
    const struct lat_reps *rp = ctx;
    if (rp->relink) { /* a DRAM-sized chain: a fresh order of its segments, another window of its units */
        size_t n = 0;
        return rp->relink->on ? lat_relink_rep(rp->relink, k, &n) : CHASE_SAME_CHAIN;
    }
    struct cache_sizes c;
    cache_sizes_from_cpuid(plat_cpuinfo(), &c);
    if (rp->p.bytes > lat_fresh_max_bytes_par(&c, lat_build_cpus(rp->p.mode)))
        return CHASE_SAME_CHAIN; /* a rebuild would cost more than the replicate: the same chain goes on */
    struct chain_params p = rp->p;
    p.seed = lat_rep_seed(p.seed, k);
    size_t reps = rp->of ? rp->of : rp->n ? rp->n : lat_replicates();
    uint64_t off = rp->buf_bytes ? lat_rep_offset(rp->buf_bytes, p.bytes, rp->align ? rp->align : LAT_REP_ALIGN,
                                                   k, reps)
                                 : 0;
    size_t n = 0;
    return lat_chain((uint8_t *)rp->buf + off, &p, rp->s, &n);
}

int lat_chase(void *start, size_t n, bool own_cpu, const struct lat_reps *reps, struct lat_result *r)
{
    static uint64_t llc;
    static bool have_llc;
    if (!have_llc) {
        struct cache_sizes c;
        cache_sizes_from_cpuid(plat_cpuinfo(), &c);
        llc = c.llc;
        have_llc = true;
    }
    /* A chain larger than the LLC: a fixed warm-up, as in the sweep (docs/latency.md "Sweep"); relinked per
     * replicate, each replicate warmed by its share of it, as the sweep's fresh chains above the LLC. */
    uint64_t warm = llc && (uint64_t)n * 64 > llc ? LAT_SWEEP_WARM_LOADS : 0;
    size_t nrep = reps && reps->n ? reps->n : lat_replicates();
    if (warm && reps && reps->relink && reps->relink->on && nrep > 1)
        warm = MAX(LAT_SWEEP_WARM_LOADS / nrep, (uint64_t)LAT_SWEEP_REP_WARM_MIN);
    return lat_chase_warm(start, n, own_cpu, reps, warm, r);
}

int lat_chase_warm(void *start, size_t n, bool own_cpu, const struct lat_reps *reps, uint64_t warmup_loads,
                   struct lat_result *r)
{
    struct chase_opts o;
    struct chase_result cr;
    lat_chase_opts(&o);
    o.warmup_loads = warmup_loads;
    if (plat_config()->minimal && (!warmup_loads || warmup_loads > LAT_MINIMAL_WARM_LOADS))
        o.warmup_loads = MIN((uint64_t)n, (uint64_t)LAT_MINIMAL_WARM_LOADS); /* emulated: no caches to warm */
    size_t nrep = reps && reps->n ? reps->n : lat_replicates();
    size_t of = reps && reps->of ? reps->of : nrep;
    if (plat_config()->minimal) /* minimal samples means minimal: one replicate, the whole budget */
        nrep = of = 1;
    o.replicates = nrep;
    o.budget_tsc = o.budget_tsc / of * nrep;
    if (of > nrep) /* one of the figure's replicates measured apart: its share of the minimum (as the engine's) */
        o.min_samples = MAX((o.min_samples + of - 1) / of, (size_t)MEAS_MIN_REPLICATE_SAMPLES);
    if (reps && (reps->buf || reps->relink)) {
        o.setup = fresh_chain;
        o.setup_ctx = (void *)reps;
    }
    bool counter = own_cpu && pmu_core_cycles_method(); /* read on the benchmark's own CPU only */
    uint64_t c0 = 0, t0 = 0;
    bool ok0 = counter_read(counter, &c0, &t0);
    int rc = chase_measure(start, n, &o, samples, LAT_MAX_SAMPLES, &cr);
    const char *method;
    double u;
    double ratio = window_ratio(counter, ok0, c0, t0, &method, &u);
    if (rc != CHASE_OK) {
        *r = (struct lat_result){0};
        return rc;
    }
    lat_result_from(r, &cr.tsc_per_load, ratio, method);
    r->ratio_u = u;
    r->converged = cr.converged;
    r->budget_hit = cr.budget_hit;
    r->loads = cr.loads_total;
    lat_result_judge(r);
    return CHASE_OK;
}

struct lat_chain_cost lat_chain_last;

/* One step of a chain built in parts: every CPU takes the next part not yet taken until none is left, so a CPU
 * that other work slows (a shared machine, a host that runs another vCPU there) takes fewer parts instead of
 * holding the step up with a fixed share. The chain depends on the parts, not on which CPU ran them. */
struct par_job {
    void (*part)(void *ctx, unsigned w);
    void *ctx;
    unsigned next; /* the next part to take (atomic) */
};

static void par_job_run(void *arg)
{
    struct par_job *j = arg;
    for (unsigned w; (w = __atomic_fetch_add(&j->next, 1u, __ATOMIC_RELAXED)) < CHAIN_PAR_PARTS;)
        j->part(j->ctx, w);
}

/* The benchmark CPU and the other CPUs of its node (at most CHAIN_PAR_PARTS): the chain's memory is there. */
static uint32_t par_cpus(uint32_t *ids)
{
    struct plat_cpu self = {0}, c;
    plat_cpu(0, &self);
    uint32_t n = 0;
    ids[n++] = self.id;
    for (uint32_t i = 1; i < plat_cpu_count() && n < CHAIN_PAR_PARTS; i++)
        if (plat_cpu(i, &c) && c.node == self.node)
            ids[n++] = c.id;
    return n;
}

/* Minimal mode builds on one CPU: under emulation each of the parallel builder's four steps is a hand-over
 * between vCPUs, which a busy host stretches to its time slice, while one emulated CPU builds a 32 MiB chain
 * in tens of milliseconds. */
uint32_t lat_build_cpus(enum chain_mode mode)
{
    uint32_t ids[CHAIN_PAR_PARTS];
    return (mode == CHAIN_RANDOM || mode == CHAIN_PAGE) && !plat_config()->minimal ? par_cpus(ids) : 1;
}

/* Every part of one step, taken by the CPUs as they come (par_job); a CPU that cannot start leaves its parts to
 * the others. -1 when a CPU did not finish (its part may still be running: the chain is not used). */
static int par_step(void (*part)(void *, unsigned), void *ctx, const uint32_t *ids, uint32_t nw)
{
    static struct par_job job; /* not on a stack that a part still running elsewhere would outlive */
    bool started[CHAIN_PAR_PARTS] = {false};
    nw = MAX(MIN(nw, CHAIN_PAR_PARTS), 1u);
    job = (struct par_job){part, ctx, 0};
    for (uint32_t k = 1; k < nw; k++)
        started[k] = plat_start(ids[k], par_job_run, &job) == 0;
    par_job_run(&job);
    int rc = 0;
    for (uint32_t k = 1; k < nw; k++)
        if (started[k] && plat_wait(ids[k]) != 0)
            rc = -1;
    return rc;
}

/* CHAIN_RANDOM: one step of chain_par's. */
struct random_step {
    struct chain_par *c;
    enum chain_par_step step;
};

static void random_part(void *ctx, unsigned w)
{
    struct random_step *s = ctx;
    chain_par_step(s->c, s->step, w);
}

static int random_step(struct chain_par *c, enum chain_par_step step, const uint32_t *ids, uint32_t nw)
{
    static struct random_step s; /* as c: not on a stack that a part still running elsewhere would outlive */
    s = (struct random_step){c, step};
    return par_step(random_part, &s, ids, nw);
}

/* The links: stored directly on pages of 2 MiB or more, else through the successor table in the chain's own
 * lines (measure/chain.h: on 4 KiB pages each direct store is also a page walk; the table's stores touch a
 * sixteenth of the pages, then one sequential pass writes the links). The same chain either way. */
static struct chain_par random_par; /* the last chain random_in_parts built: lat_chain_relinkable reads its order */

static void *random_in_parts(void *buf, const struct chain_params *p, void *scratch, size_t scratch_bytes, size_t *n)
{
    struct chain_par *c = &random_par; /* not on a stack that a part still running elsewhere would outlive */
    uint32_t ids[CHAIN_PAR_PARTS];
    if (chain_par_init(c, buf, p, scratch, scratch_bytes) != 0)
        return NULL;
    uint32_t nw = par_cpus(ids);
    lat_chain_last.cpus = nw;
    if (random_step(c, CHAIN_PAR_COUNT, ids, nw) != 0)
        return NULL;
    chain_par_place(c);
    if (random_step(c, CHAIN_PAR_SCATTER, ids, nw) != 0 || random_step(c, CHAIN_PAR_SHUFFLE, ids, nw) != 0)
        return NULL;
    if (p->buf_page >= MiB(2)) {
        if (random_step(c, CHAIN_PAR_LINK, ids, nw) != 0)
            return NULL;
    } else {
        if (random_step(c, CHAIN_PAR_SUCC, ids, nw) != 0 || random_step(c, CHAIN_PAR_WRITE, ids, nw) != 0)
            return NULL;
        chain_par_step(c, CHAIN_PAR_TAIL, 0); /* the last lines, in order, on this CPU */
    }
    return chain_par_start(c, n);
}

/* CHAIN_PAGE: the page cycle on this CPU, the pages' lines in parts (chain_build's chain, byte for byte). */
static void page_part(void *ctx, unsigned w) { chain_page_par_part(ctx, w); }

static struct chain_page_par page_par; /* as random_par */

/* tail: NULL, or where the parts write each page's last line (chain_page_par_segs) */
static void *page_in_parts_tail(void *buf, const struct chain_params *p, void *scratch, size_t scratch_bytes, size_t *n,
                                uint32_t *tail)
{
    struct chain_page_par *c = &page_par;
    uint32_t ids[CHAIN_PAR_PARTS];
    if (chain_page_par_init(c, buf, p, scratch, scratch_bytes) != 0)
        return NULL;
    c->tail = tail;
    uint32_t nw = plat_config()->minimal ? 1 : par_cpus(ids);
    lat_chain_last.cpus = nw;
    if (par_step(page_part, c, ids, nw) != 0)
        return NULL;
    return chain_page_par_start(c, n);
}

static void *page_in_parts(void *buf, const struct chain_params *p, void *scratch, size_t scratch_bytes, size_t *n)
{
    return page_in_parts_tail(buf, p, scratch, scratch_bytes, n, NULL);
}

/* How lat_chain builds p: in parts (chain.h) from LAT_PAR_MIN_LINES lines on, a page-by-page chain only where
 * its parts' scratch is no more than a random chain's of the same bytes (at least about one page per part:
 * a chain of 2^18 lines on 1 GiB pages would want 64 line orders of 2^24 entries). */
enum lat_build { LAT_BUILD_ONE, LAT_BUILD_RANDOM_PARTS, LAT_BUILD_PAGE_PARTS };

static enum lat_build lat_build_of(const struct chain_params *p, size_t *need)
{
    size_t line = p->line ? p->line : CHAIN_DEFAULT_LINE;
    size_t lines = line ? p->bytes / line : 0;
    *need = chain_scratch_bytes(p);
    /* minimal mode (emulated): on one CPU, whole (the parts' hand-overs between vCPUs cost more than they share) */
    if (*need == SIZE_MAX || lines < LAT_PAR_MIN_LINES || plat_config()->minimal)
        return LAT_BUILD_ONE;
    if (p->mode == CHAIN_RANDOM)
        return LAT_BUILD_RANDOM_PARTS;
    size_t page_need = p->mode == CHAIN_PAGE ? chain_page_par_scratch_bytes(p) : SIZE_MAX;
    if (page_need != SIZE_MAX && page_need / sizeof(uint32_t) <= lines) {
        *need = page_need;
        return LAT_BUILD_PAGE_PARTS;
    }
    return LAT_BUILD_ONE;
}

/* The scratch at least need bytes: 0, or -1. */
static int scratch_grow(struct lat_scratch *s, size_t need)
{
    if (need > 0 && (!s->b.ptr || s->b.bytes < need)) {
        /* Grown to a power of two: a sweep's chains grow by 2^(1/4) per point, and a new scratch for each
         * would be allocated and faulted in again each time (at most twice the need). */
        uint64_t want = need;
        while (want & (want - 1))
            want += want & -want;
        plat_free(&s->b);
        if (plat_alloc(&s->b, want, PLAT_PAGE_DEFAULT, -1, "latency chain scratch") != 0 &&
            plat_alloc(&s->b, need, PLAT_PAGE_DEFAULT, -1, "latency chain scratch") != 0)
            return -1;
    }
    return 0;
}

void *lat_chain(void *buf, const struct chain_params *p, struct lat_scratch *s, size_t *n)
{
    size_t need;
    enum lat_build how = lat_build_of(p, &need);
    if (need == SIZE_MAX)
        return NULL;
    if (scratch_grow(s, need) != 0)
        return NULL;
    uint64_t t0 = timing_rdtsc();
    lat_chain_last.cpus = 1;
    void *start = how == LAT_BUILD_RANDOM_PARTS ? random_in_parts(buf, p, s->b.ptr, s->b.bytes, n)
                  : how == LAT_BUILD_PAGE_PARTS ? page_in_parts(buf, p, s->b.ptr, s->b.bytes, n)
                                                : chain_build(buf, p, s->b.ptr, s->b.ptr ? s->b.bytes : 0, n);
    lat_chain_last.ticks = timing_rdtsc() - t0;
    if (start && *n <= (1u << 16) && !chain_verify(start, *n, buf, p->bytes))
        return NULL;
    return start;
}

void lat_scratch_free(struct lat_scratch *s) { plat_free(&s->b); }

/* ---- DRAM-sized chains relinked per replicate (lat_common.h) ---------------------------------------------- */

uint64_t lat_relink_buffer_bytes(uint64_t w, uint64_t page_bytes, uint64_t cap)
{
    size_t reps = lat_replicates();
    if (reps <= 1 || page_bytes < MiB(2))
        return w;
    uint64_t units = w / MiB(2);
    uint64_t spare = MAX((units + LAT_RELINK_SPARE_DIV - 1) / LAT_RELINK_SPARE_DIV, (uint64_t)(reps - 1));
    uint64_t b = w + spare * MiB(2);
    if (cap && b > cap) /* what the cap leaves, whole units: fewer, or none (every replicate on the same units) */
        b = MAX(w, w + ALIGN_DOWN(cap - MIN(cap, w), MiB(2)));
    return b;
}

uint64_t lat_relink_offset(const struct lat_relink *rl, size_t k)
{
    if (!rl->on || !rl->unit)
        return 0;
    return lat_rep_offset(rl->segs.n * rl->unit, rl->use * rl->unit, rl->unit, k, rl->reps);
}

void *lat_relink_rep(struct lat_relink *rl, size_t k, size_t *n)
{
    if (!rl->on)
        return NULL;
    size_t lo = (size_t)(lat_relink_offset(rl, k) / (rl->unit ? rl->unit : 1));
    /* replicate k starts in stratum k of R: a replicate walks a few segments of its own (its share of the
     * sampling budget: a few 2 MiB units), never one an earlier replicate left in the LLC */
    void **p = chain_relink(&rl->segs, lo, rl->use, lat_rep_seed(rl->seed, k % rl->reps), k % rl->reps, rl->reps, n);
    /* ... and (k / R) of the way into its first segment: the loads of a page-by-page chain get faster along a unit
     * (the adjacent-line prefetch has fetched more of the lines still to come), so replicates that all started at
     * a unit's head would time the same part of it (9 replicates of a 256 MiB chain, 7282 warm-up loads each:
     * 3-6 % below the same chain chased on from where the last replicate stopped, 4-10 % below replicates that
     * each start after two whole units); spread over the unit, their median is the whole unit's. */
    size_t steps = rl->segs.per ? (k % rl->reps) * rl->segs.per / rl->reps : 0;
    for (size_t i = 0; p && i < steps; i++)
        p = *p;
    return p;
}

void *lat_chain_relinkable(void *buf, const struct chain_params *p, uint64_t use_bytes, struct lat_scratch *s,
                           struct lat_relink *rl, size_t *n)
{
    *rl = (struct lat_relink){.seed = p->seed, .reps = lat_replicates()};
    struct chain_params one = *p;
    one.bytes = (size_t)use_bytes;
    bool page = p->mode == CHAIN_PAGE;
    if (rl->reps <= 1 || plat_config()->minimal || (p->mode != CHAIN_RANDOM && !page) ||
        (!page && use_bytes != p->bytes) || use_bytes > p->bytes)
        return lat_chain(buf, &one, s, n);
    size_t line = p->line ? p->line : CHAIN_DEFAULT_LINE;
    size_t need = page ? chain_page_par_scratch_bytes(p) : chain_scratch_bytes(p);
    size_t lines = p->bytes / line;
    size_t m = page ? (p->page ? p->bytes / p->page : 0) : MAX(lines / LAT_RELINK_SEG_LINES, (size_t)1);
    if (need == SIZE_MAX || m == 0 || scratch_grow(s, need) != 0 ||
        plat_alloc(&rl->mem, CHAIN_SEGS_WORDS(m) * sizeof(uint32_t), PLAT_PAGE_DEFAULT, -1, "latency relink") != 0)
        return lat_chain(buf, &one, s, n);
    uint32_t *mem = rl->mem.ptr;
    uint64_t t0 = timing_rdtsc();
    lat_chain_last.cpus = 1;
    void *start;
    if (page) {
        start = page_in_parts_tail(buf, p, s->b.ptr, s->b.bytes, n, mem + m);
        if (start && chain_page_par_segs(&page_par, &rl->segs, mem) != 0)
            start = NULL;
        rl->unit = p->page;
        rl->use = (size_t)(use_bytes / p->page);
    } else {
        start = random_in_parts(buf, p, s->b.ptr, s->b.bytes, n);
        if (start && chain_par_segs(&random_par, m, &rl->segs, mem) != 0)
            start = NULL;
        rl->use = m;
    }
    lat_chain_last.ticks = timing_rdtsc() - t0;
    if (!start) {
        lat_relink_free(rl);
        return NULL;
    }
    rl->on = true;
    return lat_relink_rep(rl, 0, n);
}

void lat_relink_json(struct json *j, const struct lat_relink *rl)
{
    json_kv_bool(j, "relinked", rl->on);
    json_kv_uint(j, "relink_segments", rl->on ? rl->segs.n : 0);
    json_kv_uint(j, "relink_segments_used", rl->on ? rl->use : 0);
    json_key(j, "replicate_offsets");
    json_arr_begin(j);
    for (size_t k = 0; k < (rl->on ? rl->reps : 1); k++)
        json_uint(j, lat_relink_offset(rl, k));
    json_arr_end(j);
}

void lat_relink_free(struct lat_relink *rl)
{
    plat_free(&rl->mem);
    rl->on = false;
}

int lat_lines_build(struct lat_lines *l, void *buf, uint64_t bytes, uint64_t seed, struct lat_scratch *s)
{
    struct chain_params p = {
        .bytes = (size_t)bytes,
        .line = LAT_PLACED_STRIDE,
        .mode = CHAIN_RANDOM,
        .seed = seed,
    };
    size_t n = 0;
    l->start = lat_chain(buf, &p, s, &n);
    l->n = n;
    if (!l->start || n == 0 || n % CHASE_UNROLL != 0)
        return -1;
    return 0;
}

void lat_job_write(void *arg)
{
    struct lat_lines *l = arg;
    void **p = l->start;
    for (size_t i = 0; i < l->n; i++) {
        void **next = (void **)*p;
        ((volatile uint64_t *)p)[1] = i; /* same 64-byte line as the link: a read-for-ownership */
        p = next;
    }
    l->sink = (uintptr_t)p;
}

void lat_job_read(void *arg)
{
    struct lat_lines *l = arg;
    void *p = chase_run(l->start, l->n / CHASE_UNROLL);
    l->sink = (uintptr_t)p;
}

void lat_job_evict(void *arg)
{
    struct lat_evict *e = arg;
    const volatile uint8_t *b = e->buf;
    uint64_t sum = 0, chunk = e->chunk ? e->chunk : e->bytes;
    for (uint64_t at = 0; at < e->bytes; at += chunk) {
        uint64_t end = MIN(e->bytes, at + chunk);
        for (int pass = 0; pass < (e->chunk ? 2 : 1); pass++)
            for (uint64_t off = at; off < end; off += 64)
                sum += b[off];
    }
    e->sink = sum;
}

void lat_job_pass(void *arg)
{
    struct lat_pass *ps = arg;
    uint64_t t0 = timing_read(ps->ser);
    void *p = chase_run(ps->start, ps->n / CHASE_UNROLL);
    uint64_t t1 = timing_read(ps->ser);
    ps->ticks = t1 - t0;
    ps->end = p;
}

static plat_fn op_fn(enum lat_op op)
{
    return op == LAT_OP_WRITE ? lat_job_write : op == LAT_OP_READ ? lat_job_read : lat_job_evict;
}

static int run_steps(const struct lat_placed *p, uint32_t *failed_cpu)
{
    for (size_t s = 0; s < p->n_steps; s++) {
        const struct lat_step *st = &p->steps[s];
        void *arg = st->op == LAT_OP_EVICT ? (void *)p->evict : (void *)p->lines;
        if (plat_run_on(st->cpu, op_fn(st->op), arg) != 0) {
            if (failed_cpu)
                *failed_cpu = st->cpu;
            return -1;
        }
    }
    return 0;
}

int lat_placed_round(const struct lat_placed *p, struct lat_pass *pass)
{
    if (run_steps(p, NULL) != 0)
        return -1;
    if (plat_run_on(p->measurer, lat_job_pass, pass) != 0)
        return -1;
    return pass->end == p->lines->start ? 0 : -1;
}

void lat_placed_rounds(size_t *rounds, size_t *warm)
{
    bool quick = plat_config()->quick;
    *rounds = quick ? 15 : 101;
    *warm = quick ? 1 : 2;
    if (plat_config()->minimal) {
        *rounds = meas_min_samples(quick); /* emulated: the minimum, nothing to warm */
        *warm = 0;
    }
}

/* The engine's sample for a placed row: iters = 0 is the empty timed region on the measurer (the overhead);
 * otherwise the steps place the lines, then the measurer times one pass over them. */
struct placed_sample {
    const struct lat_placed *p;
    struct lat_pass pass;
    uint32_t failed;
};

/* Replicate k of a placed row: its eviction buffer's region, and for k >= 1 a fresh permutation of its lines in
 * their region (replicate 0: the lines as they are when they lie in region 0, else rebuilt there). */
static int placed_setup(void *ctx, size_t k)
{
    struct placed_sample *ps = ctx;
    const struct lat_placed *p = ps->p;
    size_t reps = p->of ? p->of : lat_replicates();
    if (p->of) /* one replicate measured apart: the engine's replicate 0 is the row's replicate `rep` */
        k = p->rep;
    if (p->evict && p->evict_base)
        p->evict->buf = p->evict_base + lat_rep_offset(p->evict_buf_bytes, p->evict->bytes, LAT_REP_ALIGN, k, reps);
    if (!p->lines_buf)
        return 0;
    uint8_t *at = (uint8_t *)p->lines_buf +
                  (p->lines_buf_bytes ? lat_rep_offset(p->lines_buf_bytes, p->lines_bytes, LAT_REP_ALIGN, k, reps) : 0);
    const uint8_t *now = p->lines->start;
    if (k == 0 && !p->of && now >= (const uint8_t *)p->lines_buf && now < (const uint8_t *)p->lines_buf + p->lines_bytes)
        return 0;
    if (lat_lines_build(p->lines, at, p->lines_bytes, lat_rep_seed(p->seed, k), p->scratch) != 0)
        return -1;
    ps->pass.start = p->lines->start;
    return 0;
}

static int placed_sample(void *ctx, uint64_t iters, uint64_t *ticks)
{
    struct placed_sample *ps = ctx;
    const struct lat_placed *p = ps->p;
    ps->pass.n = iters ? p->lines->n : 0;
    if (iters && run_steps(p, &ps->failed) != 0)
        return -1;
    if (plat_run_on(p->measurer, lat_job_pass, &ps->pass) != 0) {
        ps->failed = p->measurer;
        return -1;
    }
    if (iters && ps->pass.end != p->lines->start)
        return -1;
    *ticks = ps->pass.ticks;
    return 0;
}

int lat_placed_run(const struct lat_placed *p, struct lat_result *r, uint32_t *failed_cpu)
{
    size_t rounds = MIN(p->rounds, (size_t)LAT_MAX_SAMPLES);
    *r = (struct lat_result){0};
    if (p->lines->n == 0 || p->lines->n % CHASE_UNROLL != 0 || rounds == 0 || (p->of && p->rep >= p->of))
        return -1;
    struct placed_sample ps = {
        .p = p,
        .pass = {.start = p->lines->start, .ser = plat_config()->serialize},
        .failed = UINT32_MAX,
    };
    struct meas_spec spec = {
        .sample = placed_sample,
        .ctx = &ps,
        .serialize = plat_config()->serialize,
        .warmup_samples = p->warm,
        /* emulated: each region is a hand-over between vCPUs that costs a host time slice, and the figure
         * means nothing: a few overhead regions suffice to exercise the path */
        .overhead_reps = plat_config()->minimal ? LAT_MINIMAL_OVERHEAD_REPS : CHASE_OVERHEAD_REPS,
        .iters = 1, /* one pass per sample: the placement is undone by the pass itself */
        .work_per_iter = (double)p->lines->n,
        .min_samples = MIN(meas_min_samples(plat_config()->quick), rounds),
        .max_samples = rounds,
        .target_ci = meas_ci_target(plat_config()->quick),
        .budget_ticks = lat_budget_ticks(),
        .replicates = lat_replicates(),
        .setup = placed_setup,
        /* the empty region is a hand-over to the measurer, the same in every replicate: 31 of them per
         * replicate were most of a c2c cell's hand-overs */
        .overhead_once = true,
    };
    if (p->of) {
        /* One replicate of `of` measured apart: its share of the budget and of the minimum samples, as the
         * engine gives each of its own replicates (measure/engine.h). */
        spec.replicates = 1;
        if (p->of > 1) {
            spec.min_samples = MIN(MAX((spec.min_samples + p->of - 1) / p->of, (size_t)MEAS_MIN_REPLICATE_SAMPLES),
                                   rounds);
            spec.budget_ticks /= p->of;
        }
    }

    bool counter = pmu_core_cycles_method() != NULL;
    struct plat_cpu self;
    if (counter && (!plat_cpu(0, &self) || self.id != p->measurer))
        counter = false; /* the counter is only read on the benchmark's own CPU */
    uint64_t c0 = 0, t0 = 0;
    bool ok0 = counter_read(counter, &c0, &t0);

    struct meas_result m;
    if (meas_run(&spec, samples, LAT_MAX_SAMPLES, &m) != MEAS_OK) {
        if (failed_cpu && ps.failed != UINT32_MAX)
            *failed_cpu = ps.failed;
        return -1;
    }
    const char *method;
    double u;
    double ratio = window_ratio(counter, ok0, c0, t0, &method, &u);
    lat_result_from(r, &m.st, ratio, method);
    r->ratio_u = u;
    r->converged = m.converged;
    r->budget_hit = m.budget_hit;
    r->loads = m.iters_total * p->lines->n;
    lat_result_judge(r);
    return 0;
}

const char *lat_bytes_text(uint64_t b, char *buf, size_t len)
{
    static const char *unit[] = {"B", "KiB", "MiB", "GiB", "TiB"};
    size_t u = 0;
    double v = (double)b;
    while (v >= 1024 && u + 1 < ARRAY_SIZE(unit)) {
        v /= 1024;
        u++;
    }
    if (v == (double)(uint64_t)v)
        fmt_snprintf(buf, len, "%lu %s", (unsigned long)v, unit[u]);
    else
        fmt_snprintf(buf, len, "%.3g %s", v, unit[u]);
    return buf;
}
