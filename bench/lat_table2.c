/* lat_table2.c - one data_source record per row of the guide's Table 2: L1, L2, the three L3 cases, remote L3,
 * local and remote DRAM. Cache rows place the lines with other CPUs first and time one pass of dependent
 * loads over them (docs/latency.md "Table 2 rows"); L1 and DRAM rows are steady-state chases. */
#include "bench/lat_table2.h"
#include "bench/lat_common.h"
#include "measure/rand.h"
#include "measure/timing.h"
#include "kernel/fmt.h"
#include "bench/lat_sweep.h"
#include "bench/crosscheck.h"
#include "bench/clock.h"
#include "measure/stats_json.h"
#include "pmu/pmu_bench_api.h"

struct row_out {
    bool done, ok;
    char reason[160];
    char placement[320];
    const char *method;
    struct lat_result r;
    uint64_t footprint; /* bytes the row's loads and its eviction touch: what the sweep is compared at */
};

static struct row_out rows[LAT_ROW_COUNT];

/* What the rows share: the CPUs that hold lines, the placed chain and the eviction buffer. */
struct env {
    struct cache_sizes c;
    uint32_t ncpu;
    struct plat_cpu self, helper, remote;
    bool have_helper, have_remote;
    char no_helper[160], no_remote[160];
    struct lat_scratch scratch;
    struct plat_buf lines_buf, evict_buf;
    struct lat_lines lines;
    uint64_t lines_span; /* bytes of lines_buf the chain spans (the buffer may be a whole large page) */
    uint64_t lines_seed; /* the chain's seed (replicate k >= 1 rebuilds it with lat_rep_seed(lines_seed, k)) */
    uint64_t lines_buf_bytes, evict_buf_bytes; /* asked for: one region per replicate (lat_rep_buffer_bytes) */
    struct lat_evict ev1, ev2; /* push the lines out of L1 / out of L1 and L2 */
    bool lines_ok;
    char no_lines[160];
    uint64_t seed;
    size_t reps;     /* R: the profile's replicates, one pass each */
    uint64_t t0;     /* TSC at lat_table2_begin: replicate times are ticks from here */
};

/* One row's replicates, measured one per pass (docs/measurement.md "Replicates"): what the combination and
 * the record need of each. */
struct rep_set {
    size_t got;
    struct meas_result rep[MEAS_REPLICATES_FULL];
    double ratio[MEAS_REPLICATES_FULL]; /* core/TSC ratio of each replicate's own time */
    double ratio_u[MEAS_REPLICATES_FULL]; /* its relative uncertainty (NaN: not stated) */
    uint64_t at[MEAS_REPLICATES_FULL];  /* ticks from lat_table2_begin to the replicate's start */
    uint64_t start[MEAS_REPLICATES_FULL]; /* where its chain started: bytes from its buffer's start */
    struct lat_result last;             /* the latest replicate (R = 1: the figure itself) */
    const char *method;
    bool failed;
    uint32_t bad_cpu;
};

static void rep_add(struct rep_set *rs, const struct lat_result *r, uint64_t at, uint64_t start)
{
    if (rs->got >= MEAS_REPLICATES_FULL)
        return;
    rs->rep[rs->got] = lat_result_rep(r);
    rs->ratio[rs->got] = r->ratio;
    rs->ratio_u[rs->got] = r->ratio_u;
    rs->at[rs->got] = at;
    rs->start[rs->got] = start;
    rs->got++;
    rs->last = *r;
    rs->method = r->cycles_method;
}

/* The row's figure across its replicates (lat_result_combine), in cycles with the median of the replicates'
 * own ratios: each ratio is the one of that replicate's moment (the PMU's counter around it, or the ratio the
 * platform gives then), not one taken elsewhere; their disagreement is in the ratio's uncertainty
 * (clock_ratio_combine). */
static void rep_combine(const struct rep_set *rs, struct lat_result *r)
{
    if (rs->got <= 1) {
        *r = rs->last;
        return;
    }
    lat_result_combine_own(rs->rep, rs->ratio, rs->ratio_u, rs->got, rs->last.ratio, rs->last.ratio_u, rs->method, r);
}

/* "replicate_ms" (each replicate's start, ms after the Table 2 rows began), "replicate_ns" (its median) and
 * "replicate_starts" (where its chain started, bytes from its buffer's start). */
static void reps_json(struct json *j, const struct rep_set *rs)
{
    json_key(j, "replicate_ms");
    json_arr_begin(j);
    for (size_t k = 0; k < rs->got; k++)
        json_double(j, lat_tsc_to_ns((double)rs->at[k]) * 1e-6);
    json_arr_end(j);
    json_key(j, "replicate_ns");
    json_arr_begin(j);
    for (size_t k = 0; k < rs->got; k++)
        json_double(j, lat_tsc_to_ns(rs->rep[k].st.median));
    json_arr_end(j);
    json_key(j, "replicate_starts");
    json_arr_begin(j);
    for (size_t k = 0; k < rs->got; k++)
        json_uint(j, rs->start[k]);
    json_arr_end(j);
}

static void ref_json(struct json *j, enum lat_row row)
{
    const struct lat_row_ref *ref = &lat_rows[row];
    char t[40];
    lat_ref_text(ref, t, sizeof(t));
    json_kv_str(j, "reference", t);
    json_kv_double(j, "reference_lo", ref->lo);
    json_kv_double(j, "reference_hi", ref->hi);
    json_kv_str(j, "reference_unit", ref->unit);
    json_kv_str(j, "guide", ref->guide);
}

static void unavailable(enum lat_row row, const char *method, const char *reason)
{
    struct row_out *o = &rows[row];
    o->done = true;
    o->ok = false;
    o->method = method;
    fmt_snprintf(o->reason, sizeof(o->reason), "%s", reason);
    struct json *j = plat_rec_begin("data_source");
    json_kv_str(j, "source", lat_rows[row].source);
    json_kv_str(j, "status", "unavailable");
    json_kv_str(j, "reason", reason);
    struct verdict v;
    verdict_unavailable(&v, reason);
    char name[LEDGER_NAME_MAX];
    fmt_snprintf(name, sizeof(name), "data_source/%s", lat_rows[row].source);
    figure_json(j, name, NULL, UNIT_NS, &v);
    json_kv_str(j, "method", method);
    ref_json(j, row);
    plat_rec_end();
}

/* The common part of a measured row's record; the caller adds its own keys and ends it. */
static struct json *measured(enum lat_row row, const char *method, const struct lat_result *r)
{
    struct row_out *o = &rows[row];
    o->done = o->ok = true;
    o->method = method;
    o->r = *r;
    struct json *j = plat_rec_begin("data_source");
    json_kv_str(j, "source", lat_rows[row].source);
    json_kv_str(j, "status", "ok");
    char name[LEDGER_NAME_MAX];
    fmt_snprintf(name, sizeof(name), "data_source/%s", lat_rows[row].source);
    lat_result_json(j, name, r);
    json_kv_str(j, "method", method);
    json_kv_str(j, "placement", o->placement);
    ref_json(j, row);
    return j;
}

static void pebs_check(enum lat_row row, uint32_t cpu, const void *lines, uint64_t bytes, size_t loads,
                       int (*replay)(void *), void *arg)
{
    if (!pmu_latency_pebs_available())
        return;
    struct pmu_latency_pebs_ctx c = {
        .row = lat_rows[row].source,
        .cpu = cpu,
        .lines = lines,
        .bytes = bytes,
        .loads_per_replay = loads,
        .cycles = rows[row].r.cycles,
    };
    struct pmu_latency_pebs_result pr;
    pmu_latency_pebs(&c, replay, arg, &pr);

    /* The row's timing against the hardware's own latency of the same loads (docs/measurement.md). */
    char what[96], a[LEDGER_NAME_MAX], b[LEDGER_NAME_MAX], fig[LEDGER_NAME_MAX];
    fmt_snprintf(what, sizeof(what), "%s latency (chase timing vs PEBS load latency)", c.row);
    fmt_snprintf(fig, sizeof(fig), "data_source/%s", c.row);
    fmt_snprintf(a, sizeof(a), "data_source/%s.cycles", c.row);
    fmt_snprintf(b, sizeof(b), "pebs_latency/%s", c.row);
    struct crosscheck xc = {.quantity = what, .a = a, .b = b, .a_value = c.cycles,
                            .b_value = pr.valid ? pr.mean_cycles : __builtin_nan(""), .unit = "cycles",
                            .tolerance = XC_TOL_LATENCY, .blame = fig,
                            .why = "PEBS times each sampled load in the core (the row's figure is marked): the "
                                   "chase divides a pass by its loads",
                            .not_judged = pr.valid ? NULL : pr.why ? pr.why : "no PEBS samples"};
    crosscheck_emit(&xc);
    /* the same latency in ns (the row's own cycles-to-ns conversion), a third measurement for the c2c check of the
     * rows measured with the helper core (lat_c2c.c) */
    if (pr.valid && rows[row].r.cycles > 0 && rows[row].r.ns > 0) {
        char note[LEDGER_NAME_MAX];
        fmt_snprintf(note, sizeof(note), "pebs_latency/%s.ns", c.row);
        crosscheck_note(note, pr.mean_cycles * rows[row].r.ns / rows[row].r.cycles, UNIT_NS);
    }
}

/* ---- steady-state rows: L1 and DRAM ----------------------------------------------------------------- */

struct chase_replay {
    void *start;
    size_t n;
    volatile uintptr_t sink;
};

static int replay_chase(void *arg)
{
    struct chase_replay *c = arg;
    c->sink = (uintptr_t)chase_run(c->start, (c->n + CHASE_UNROLL - 1) / CHASE_UNROLL);
    return 0;
}

/* The L1 row: one replicate per pass, each a fresh permutation in a region of its own of one buffer. */
static struct {
    bool on;
    char why[160];
    struct plat_buf b;
    struct chain_params p;
    uint64_t w, wb;
    size_t n;
    void *start0; /* replicate 0's chain (region 0 holds it to the end: the PEBS replay) */
    struct rep_set rs;
} l1;

static void l1_begin(struct env *e)
{
    memset(&l1, 0, sizeof(l1));
    l1.w = lat_l1_bytes(&e->c);
    l1.wb = lat_rep_buffer_bytes(l1.w, e->reps); /* each replicate's chain in a large page of its own */
    if (plat_alloc(&l1.b, l1.wb, PLAT_PAGE_LARGEST, e->self.node, "latency L1 row") != 0) {
        fmt_snprintf(l1.why, sizeof(l1.why), "no memory for the chain");
        return;
    }
    l1.p = (struct chain_params){.bytes = (size_t)l1.w, .line = 64, .mode = CHAIN_RANDOM, .seed = e->seed ^ 1};
    l1.on = true;
}

/* Replicate k: its permutation (seed mixed with k) at lat_rep_offset(wb, w, LAT_REP_ALIGN, k, R), chased with 1/R
 * of the budget (lat_reps n = 1 of R), as a sweep point's replicate in one of the sweep's passes. */
static void l1_pass(struct env *e, size_t k)
{
    if (!l1.on || l1.rs.failed)
        return;
    struct chain_params p = l1.p;
    p.seed = lat_rep_seed(l1.p.seed, k);
    uint64_t off = lat_rep_offset(l1.wb, l1.w, LAT_REP_ALIGN, k, e->reps);
    uint64_t at = timing_rdtsc() - e->t0;
    size_t n = 0;
    void *start = lat_chain((uint8_t *)l1.b.ptr + off, &p, &e->scratch, &n);
    struct lat_reps one = {.n = 1, .of = e->reps};
    struct lat_result r;
    if (!start || lat_chase(start, n, true, &one, &r) != CHASE_OK) {
        l1.rs.failed = true;
        return;
    }
    if (k == 0)
        l1.start0 = start;
    l1.n = n;
    rep_add(&l1.rs, &r, at, (uint64_t)((uint8_t *)start - (uint8_t *)l1.b.ptr));
}

static void l1_finish(struct env *e)
{
    if (!l1.on) {
        unavailable(LAT_ROW_L1, "chase_steady_state", l1.why);
        return;
    }
    if (l1.rs.failed || !l1.rs.got || !l1.start0) {
        unavailable(LAT_ROW_L1, "chase_steady_state", "the chase failed (chain or clock)");
        plat_free(&l1.b);
        return;
    }
    struct lat_result r;
    rep_combine(&l1.rs, &r);
    char bt[24];
    fmt_snprintf(rows[LAT_ROW_L1].placement, sizeof(rows[0].placement),
                 "CPU %u chases one random cycle over %zu lines (%s, half the L1D) again and again: after the "
                 "warm-up pass every load hits the L1D",
                 e->self.id, l1.n, lat_bytes_text(l1.w, bt, sizeof(bt)));
    rows[LAT_ROW_L1].footprint = l1.w;
    struct json *j = measured(LAT_ROW_L1, "chase_steady_state", &r);
    json_kv_uint(j, "cpu", e->self.id);
    json_kv_uint(j, "bytes", l1.w);
    json_kv_uint(j, "lines", l1.n);
    json_kv_uint(j, "page_bytes", l1.b.page_bytes);
    json_kv_uint(j, "buffer_bytes", l1.b.bytes);
    lat_rep_offsets_json(j, "replicate_offsets", l1.wb, l1.w);
    reps_json(j, &l1.rs);
    plat_rec_end();
    struct chase_replay cr = {l1.start0, l1.n, 0};
    pebs_check(LAT_ROW_L1, e->self.id, l1.b.ptr, l1.w, l1.n, replay_chase, &cr);
    plat_free(&l1.b);
}

static void row_dram(struct env *e, enum lat_row row, int node, const char *node_why)
{
    const struct plat_config *cfg = plat_config();
    uint64_t cap = cfg->max_bytes;
    uint64_t lim = plat_alloc_limit(node) / 2;
    if (lim && (!cap || lim < cap))
        cap = lim;
    uint64_t w = lat_dram_bytes(&e->c, cfg->quick, cap);
    /* room for the replicates' windows of units, should the buffer get large pages (lat_relink_buffer_bytes) */
    uint64_t wb = lat_relink_buffer_bytes(w, MiB(2), cap);
    struct plat_buf b;
    char why[160], bt[24];
    if (plat_alloc(&b, wb, PLAT_PAGE_LARGEST, node, "latency DRAM row") != 0 &&
        (wb == w || plat_alloc(&b, wb = w, PLAT_PAGE_LARGEST, node, "latency DRAM row") != 0)) {
        fmt_snprintf(why, sizeof(why), "no %s of memory on node %d", lat_bytes_text(w, bt, sizeof(bt)), node);
        unavailable(row, "chase_steady_state", why);
        return;
    }
    /* With large pages, page-by-page over 2 MiB units (one TLB miss per 32 Ki loads, random order inside
     * so no DRAM page or prefetcher locality); with 4 KiB pages a plain random cycle, TLB misses included.
     * Each replicate relinks the chain (lat_chain_relinkable): a fresh order of its units, in a window of them
     * at another offset of the buffer; on 4 KiB pages a fresh order of its stretches over the same lines. */
    bool big = b.page_bytes >= MiB(2);
    struct chain_params p = {
        .bytes = (size_t)(big ? ALIGN_DOWN(wb, MiB(2)) : w),
        .line = 64,
        .page = MiB(2),
        .mode = big ? CHAIN_PAGE : CHAIN_RANDOM,
        .seed = e->seed ^ (uint64_t)(row + 7),
    };
    size_t n = 0;
    struct lat_relink rl;
    void *start = lat_chain_relinkable(b.ptr, &p, w, &e->scratch, &rl, &n);
    double build_s = lat_tsc_to_ns((double)lat_chain_last.ticks) * 1e-9;
    struct lat_result r;
    struct chain_params one = p;
    one.bytes = (size_t)w;
    struct lat_reps reps = {.relink = rl.on ? &rl : NULL, .buf = b.ptr, .p = one, .s = &e->scratch};
    if (!start || lat_chase(start, n, true, &reps, &r) != CHASE_OK) {
        unavailable(row, "chase_steady_state", "the chase failed (chain or clock)");
        lat_relink_free(&rl);
        plat_free(&b);
        return;
    }
    if (rl.on) /* replicate 0's chain again, for the PEBS replay below */
        start = lat_relink_rep(&rl, 0, &n);
    double llc_frac = e->c.llc ? MIN(1.0, (double)e->c.llc / (double)w) : 0;
    fmt_snprintf(rows[row].placement, sizeof(rows[0].placement),
                 "CPU %u (node %d) chases %s on node %d (%s), %s; at most %.1f%% of the loads can hit the LLC; %s",
                 e->self.id, e->self.node, lat_bytes_text(w, bt, sizeof(bt)), b.node, node_why,
                 big ? "page-by-page over 2 MiB units, lines in random order" : "one random cycle (4 KiB pages: TLB misses included)",
                 100 * llc_frac,
                 !rl.on ? "its replicates back to back on the one chain"
                 : big ? "each replicate a fresh order of the units of its own window of the buffer"
                       : "each replicate a fresh order of the cycle's stretches of 2 MiB of lines, the same lines");
    rows[row].footprint = w;
    struct json *j = measured(row, "chase_steady_state", &r);
    json_kv_uint(j, "cpu", e->self.id);
    json_kv_int(j, "cpu_node", e->self.node);
    json_kv_int(j, "node", b.node);
    json_kv_uint(j, "bytes", w);
    json_kv_uint(j, "lines", n);
    json_kv_uint(j, "page_bytes", b.page_bytes);
    json_kv_str(j, "page_how", b.page_how);
    json_kv_str(j, "chain", big ? "page" : "random");
    json_kv_uint(j, "buffer_bytes", p.bytes); /* the bytes the chain is built over (4 KiB pages: w alone) */
    json_kv_double(j, "build_seconds", build_s);
    lat_relink_json(j, &rl);
    json_kv_double(j, "llc_fraction", llc_frac);
    if (e->c.llc && w < 2 * e->c.llc)
        json_kv_str(j, "note", "max_bytes or free memory kept the working set below twice the LLC: part of the "
                               "loads hit the LLC, this is not a clean DRAM latency");
    plat_rec_end();
    struct chase_replay cr = {start, n, 0};
    pebs_check(row, e->self.id, b.ptr, wb, n, replay_chase, &cr);
    lat_relink_free(&rl);
    plat_free(&b);
}

/* ---- placed rows: lines put in place by some CPU(s), then one timed pass on CPU 0 -------------------- */

struct placed_replay {
    struct lat_placed p;
    struct lat_pass pass;
};

static int replay_placed(void *arg)
{
    struct placed_replay *r = arg;
    return lat_placed_round(&r->p, &r->pass);
}

/* Square root of a positive finite number (Newton; freestanding code has no libm). */
static double sqrt_pos(double x)
{
    double r = x > 1 ? x : 1;
    for (int i = 0; i < 60; i++)
        r = 0.5 * (r + x / r);
    return r;
}

/* A placed row measured in passes: its steps, its own lines (rebuilt in region k of the shared lines buffer for
 * each replicate: the other rows' replicates use the same regions in between) and its own eviction window. */
struct prow {
    bool on;
    enum lat_row row;
    struct lat_step steps[LAT_MAX_STEPS];
    size_t n_steps;
    struct lat_evict ev; /* a copy of e->ev1 / e->ev2 (placed_setup moves its window per replicate) */
    bool has_ev, ev_l2;
    const struct plat_cpu *holder;
    struct lat_lines lines;
    uint64_t span, seed;
    struct rep_set rs;
};

static struct prow prows[LAT_ROW_COUNT];

static void placed_add(struct env *e, enum lat_row row, const struct lat_step *steps, size_t n_steps,
                       const struct lat_evict *ev, const struct plat_cpu *holder, uint64_t span, uint64_t seed)
{
    struct prow *pr = &prows[row];
    memset(pr, 0, sizeof(*pr));
    pr->on = true;
    pr->row = row;
    for (size_t i = 0; i < n_steps && i < LAT_MAX_STEPS; i++)
        pr->steps[i] = steps[i];
    pr->n_steps = MIN(n_steps, (size_t)LAT_MAX_STEPS);
    if (ev) {
        pr->ev = *ev;
        pr->has_ev = true;
        pr->ev_l2 = ev == &e->ev2;
    }
    pr->holder = holder;
    pr->span = span;
    pr->seed = seed;
}

static struct lat_placed placed_of(struct env *e, struct prow *pr)
{
    struct lat_placed p = {.lines = &pr->lines, .evict = pr->has_ev ? &pr->ev : NULL, .n_steps = pr->n_steps,
                           .measurer = e->self.id, .lines_buf = e->lines_buf.ptr, .lines_bytes = pr->span,
                           .seed = pr->seed, .scratch = &e->scratch, .lines_buf_bytes = e->lines_buf_bytes,
                           .evict_base = e->evict_buf.ptr, .evict_buf_bytes = e->evict_buf_bytes};
    for (size_t i = 0; i < pr->n_steps; i++)
        p.steps[i] = pr->steps[i];
    lat_placed_rounds(&p.rounds, &p.warm);
    return p;
}

/* Replicate k of the row: its lines rebuilt in region k, its eviction from window k, 1/R of the budget. */
static void placed_pass(struct env *e, struct prow *pr, size_t k)
{
    if (!pr->on || pr->rs.failed || !e->lines_ok)
        return;
    struct lat_placed p = placed_of(e, pr);
    p.rep = k;
    p.of = e->reps;
    /* lat_placed_run checks the lines before its setup rebuilds them in region k: the first pass builds them */
    if (!pr->lines.start && lat_lines_build(&pr->lines, e->lines_buf.ptr, pr->span, pr->seed, &e->scratch) != 0) {
        pr->rs.failed = true;
        pr->rs.bad_cpu = UINT32_MAX;
        return;
    }
    uint64_t at = timing_rdtsc() - e->t0;
    struct lat_result r;
    uint32_t bad = UINT32_MAX;
    if (lat_placed_run(&p, &r, &bad) != 0) {
        pr->rs.failed = true;
        pr->rs.bad_cpu = bad;
        return;
    }
    rep_add(&pr->rs, &r, at, (uint64_t)((uint8_t *)pr->lines.start - (uint8_t *)e->lines_buf.ptr));
}

/* The row's figure across its replicates, the checks that need the other rows' figures, its record and PEBS. */
static void placed_finish(struct env *e, struct prow *pr)
{
    const char *method = "placed_one_pass";
    enum lat_row row = pr->row;
    if (!e->lines_ok) {
        unavailable(row, method, e->no_lines);
        return;
    }
    if (pr->rs.failed || !pr->rs.got) {
        char why[160];
        if (pr->rs.bad_cpu == UINT32_MAX)
            fmt_snprintf(why, sizeof(why), "could not build the row's lines, or the pass did not close");
        else
            fmt_snprintf(why, sizeof(why), "CPU %u did not finish its part (or the pass did not close)",
                         pr->rs.bad_cpu);
        unavailable(row, method, why);
        return;
    }
    struct lat_result r;
    rep_combine(&pr->rs, &r);
    size_t nlines = pr->lines.n;
    /* The lines of replicate 0 again (other rows' replicates overwrote region 0 since): the control and the
     * PEBS replay below run over them. */
    struct placed_replay prp = {.p = placed_of(e, pr)};
    bool lines0 = lat_lines_build(&pr->lines, e->lines_buf.ptr, pr->span, pr->seed, &e->scratch) == 0;
    uint32_t bad = 0;
    /* Control for the rows whose lines another core holds: the same placement, then the holder times the pass
     * itself. When its private L1D/L2 hold every line, as the row's name says, that pass reads L1/L2 hits; when
     * lines were already gone from it (to the L3 or further) the row would time a mix, not a snoop of that
     * core. The boundary between the two is the geometric mean of the L2 and L3_unshared rows (a pass closer to
     * the L3 row than to the L2 row in log terms is served from beyond the private caches). Not in minimal mode:
     * emulated timing cannot tell a cache from another, and the control's rounds are hand-overs between vCPUs,
     * 0.1-0.2 s each control on a busy host. */
    struct lat_result ctl = {0};
    bool have_ctl = false, holds = true;
    double ctl_limit = 0;
    const struct plat_cpu *holder = pr->holder;
    if (holder && lines0 && !plat_config()->minimal && rows[LAT_ROW_L2].ok && rows[LAT_ROW_L3_UNSHARED].ok &&
        rows[LAT_ROW_L3_UNSHARED].r.ns > rows[LAT_ROW_L2].r.ns) {
        struct lat_placed cp = prp.p;
        cp.measurer = holder->id;
        if (lat_placed_run(&cp, &ctl, &bad) == 0) {
            have_ctl = true;
            ctl_limit = sqrt_pos(rows[LAT_ROW_L2].r.ns * rows[LAT_ROW_L3_UNSHARED].r.ns);
            holds = ctl.ns <= ctl_limit;
            if (!holds)
                verdict_worsen(&r.v, QUALITY_SUSPECT,
                               "the holder's own pass over the placed lines read %.2f ns, nearer the L3_unshared row "
                               "(%.2f ns) than the L2 row (%.2f ns): the lines were not all in its private cache",
                               ctl.ns, rows[LAT_ROW_L3_UNSHARED].r.ns, rows[LAT_ROW_L2].r.ns);
        }
    }
    /* An L3 hit is slower than an L2 hit: a row that is not clearly slower than the L2 row (beyond
     * XC_TOL_LATENCY) found its lines still in the L2, so the eviction did not do its part. */
    if (row == LAT_ROW_L3_UNSHARED && rows[LAT_ROW_L2].ok && r.ns <= rows[LAT_ROW_L2].r.ns * (1 + XC_TOL_LATENCY))
        verdict_worsen(&r.v, QUALITY_SUSPECT,
                       "%.2f ns is not slower than the L2 row (%.2f ns +%.0f %%): the lines were still in the L2 "
                       "after the eviction, this is not an L3 hit",
                       r.ns, rows[LAT_ROW_L2].r.ns, 100 * XC_TOL_LATENCY);

    /* Say in words what the steps did. */
    const struct lat_evict *ev = pr->has_ev ? &pr->ev : NULL;
    char *pl = rows[row].placement, bt[24], bt2[24];
    size_t len = sizeof(rows[0].placement), at = 0;
    at += (size_t)fmt_snprintf(pl + at, len - at, "%zu lines (one per %u bytes over %s), each round: ", nlines,
                               LAT_PLACED_STRIDE, lat_bytes_text(pr->span, bt, sizeof(bt)));
    for (size_t i = 0; i < pr->n_steps && at < len; i++) {
        const struct lat_step *st = &pr->steps[i];
        if (st->op == LAT_OP_EVICT)
            at += (size_t)fmt_snprintf(pl + at, len - at, "CPU %u reads %s elsewhere, each %s twice (evicts its L1%s); ",
                                       st->cpu, lat_bytes_text(ev->bytes, bt, sizeof(bt)),
                                       lat_bytes_text(ev->chunk, bt2, sizeof(bt2)), pr->ev_l2 ? "+L2" : "");
        else
            at += (size_t)fmt_snprintf(pl + at, len - at, "CPU %u %s every line; ", st->cpu,
                                       st->op == LAT_OP_WRITE ? "writes" : "reads");
    }
    if (at < len)
        fmt_snprintf(pl + at, len - at, "then CPU %u times one pass of dependent loads", e->self.id);
    rows[row].footprint = (uint64_t)nlines * 64 + (ev ? ev->bytes : 0); /* lines touched, not the span */
    struct json *j = measured(row, method, &r);
    json_kv_uint(j, "cpu", e->self.id);
    json_kv_uint(j, "footprint_bytes", rows[row].footprint);
    if (holder) {
        json_kv_uint(j, "holder_cpu", holder->id);
        json_kv_uint(j, "holder_package", holder->package);
        json_kv_uint(j, "holder_core", holder->core);
        /* the control above: the holder's own pass over the placed lines */
        if (have_ctl) {
            json_kv_double(j, "holder_pass_ns", ctl.ns);
            json_kv_double(j, "holder_pass_limit_ns", ctl_limit);
            json_kv_bool(j, "holder_holds_lines", holds);
        } else {
            json_kv_null(j, "holder_pass_ns");
            json_kv_null(j, "holder_pass_limit_ns");
            json_kv_null(j, "holder_holds_lines");
        }
    }
    json_kv_uint(j, "bytes", pr->span);
    json_kv_uint(j, "buffer_bytes", e->lines_buf.bytes);
    lat_rep_offsets_json(j, "replicate_offsets", e->lines_buf_bytes, pr->span);
    reps_json(j, &pr->rs);
    json_kv_uint(j, "lines", nlines);
    json_kv_uint(j, "page_bytes", e->lines_buf.page_bytes);
    json_kv_int(j, "node", e->lines_buf.node);
    if (ev) {
        json_kv_uint(j, "evict_bytes", ev->bytes);
        json_kv_uint(j, "evict_buffer_bytes", e->evict_buf.bytes);
        lat_rep_offsets_json(j, "evict_replicate_offsets", e->evict_buf_bytes, ev->bytes);
    }
    json_kv_uint(j, "rounds", prp.p.rounds);
    plat_rec_end();
    if (!lines0)
        return;
    prp.p.lines = &pr->lines;
    prp.pass = (struct lat_pass){.start = pr->lines.start, .n = pr->lines.n, .ser = plat_config()->serialize};
    pebs_check(row, e->self.id, e->lines_buf.ptr, e->lines_buf.bytes, pr->lines.n, replay_placed, &prp);
}

/* ---- set-up ------------------------------------------------------------------------------------------ */

static struct {
    bool have;
    uint32_t self, helper;
} last_helper;

bool lat_table2_helper(uint32_t *self, uint32_t *helper)
{
    *self = last_helper.self;
    *helper = last_helper.helper;
    return last_helper.have;
}

/* The sharing masks of the L2 and the last-level cache, from CPUID (leaf 4 / 8000_001DH "logical processors
 * sharing this cache"). */
static void sharing(uint32_t *l2_share, uint32_t *l3_share)
{
    const struct cpu_info *ci = plat_cpuinfo();
    *l2_share = *l3_share = 0;
    for (uint32_t i = 0; ci && i < ci->n_caches && i < CPU_MAX_CACHES; i++) {
        const struct cpu_cache *k = &ci->caches[i];
        if (k->type != CPU_CACHE_DATA && k->type != CPU_CACHE_UNIFIED)
            continue;
        if (k->level == 2)
            *l2_share = k->shared_by;
        if (k->level == 3)
            *l3_share = k->shared_by;
    }
}

/* Helper: another core that shares CPU 0's L3 but not its L2 (by the CPUID sharing masks of their APIC IDs:
 * right on parts with several L3 domains per package, AMD CCXs or sub-NUMA clusters, where "same package"
 * is not "same L3"). Remote: a CPU that does not share CPU 0's L3, in another package when there is one. */
static void find_cpus(struct env *e)
{
    e->ncpu = plat_cpu_count();
    plat_cpu(0, &e->self);
    bool sibling = false, other_domain_same_pkg = false;
    uint32_t other_pkg = 0, l2s, l3s;
    sharing(&l2s, &l3s);
    for (uint32_t i = 1; i < e->ncpu; i++) {
        struct plat_cpu c;
        if (!plat_cpu(i, &c))
            continue;
        bool same_l3 = l3s ? lat_shares_cache(c.apic_id, e->self.apic_id, l3s) : c.package == e->self.package;
        bool same_l2 = l2s ? lat_shares_cache(c.apic_id, e->self.apic_id, l2s)
                           : c.package == e->self.package && c.core == e->self.core;
        if (same_l3 && c.package == e->self.package) {
            if (!same_l2) {
                if (!e->have_helper)
                    e->helper = c, e->have_helper = true;
            } else {
                sibling = true;
            }
        } else if (c.package != e->self.package) {
            other_pkg++;
            if (!e->have_remote)
                e->remote = c, e->have_remote = true;
        } else {
            other_domain_same_pkg = true; /* another L3 domain in CPU 0's package: not the guide's remote L3 */
        }
    }
    last_helper.have = e->have_helper;
    last_helper.self = e->self.id;
    last_helper.helper = e->helper.id;
    if (e->ncpu <= 1)
        fmt_snprintf(e->no_helper, sizeof(e->no_helper), "one CPU: no other core to hold the lines");
    else if (sibling)
        fmt_snprintf(e->no_helper, sizeof(e->no_helper),
                     "the other CPUs sharing CPU %u's L3 also share its L2 (SMT siblings, by the CPUID sharing masks)",
                     e->self.id);
    else
        fmt_snprintf(e->no_helper, sizeof(e->no_helper),
                     "no other core shares CPU %u's L3 (CPUID sharing masks; %u CPUs in other packages)", e->self.id,
                     other_pkg);
    if (e->ncpu <= 1)
        fmt_snprintf(e->no_remote, sizeof(e->no_remote), "one CPU: no other socket");
    else
        fmt_snprintf(e->no_remote, sizeof(e->no_remote), "one socket: all %u CPUs are in package %u%s", e->ncpu,
                     e->self.package,
                     other_domain_same_pkg ? " (it has other L3 domains, but the guide's remote L3 is the other socket's)"
                                           : "");
}

static void setup_lines(struct env *e)
{
    uint64_t w = lat_placed_bytes(&e->c);
    uint64_t ev = lat_evict_bytes(&e->c, 2);
    /* One region per replicate, a large page or more apart, for the lines and for the eviction buffer: each
     * replicate places other lines and evicts with other memory (docs/measurement.md "Replicates"). */
    size_t reps = lat_replicates();
    e->lines_buf_bytes = lat_rep_buffer_bytes(w, reps);
    e->evict_buf_bytes = lat_rep_buffer_bytes(ev, reps);
    e->lines_ok = false;
    if (plat_alloc(&e->lines_buf, e->lines_buf_bytes, PLAT_PAGE_LARGEST, e->self.node, "latency placed lines") != 0 &&
        plat_alloc(&e->lines_buf, e->lines_buf_bytes, PLAT_PAGE_LARGEST, -1, "latency placed lines") != 0) {
        fmt_snprintf(e->no_lines, sizeof(e->no_lines), "no memory for the placed lines");
        return;
    }
    if (plat_alloc(&e->evict_buf, e->evict_buf_bytes, PLAT_PAGE_LARGEST, -1, "latency eviction buffer") != 0) {
        fmt_snprintf(e->no_lines, sizeof(e->no_lines), "no memory for the eviction buffer");
        return;
    }
    if (lat_lines_build(&e->lines, e->lines_buf.ptr, w, e->seed ^ 0x5eed, &e->scratch) != 0) {
        fmt_snprintf(e->no_lines, sizeof(e->no_lines), "could not build the placed chain");
        return;
    }
    e->lines_span = w;
    e->lines_seed = e->seed ^ 0x5eed;
    e->ev2 = (struct lat_evict){.buf = e->evict_buf.ptr, .bytes = ev, .chunk = lat_evict_chunk(&e->c, 2)};
    e->ev1 = (struct lat_evict){.buf = e->evict_buf.ptr, .bytes = MIN(ev, lat_evict_bytes(&e->c, 1)),
                                .chunk = lat_evict_chunk(&e->c, 1)};
    e->lines_ok = true;
}

static void print_table(const struct env *e)
{
    const char *method;
    clock_core_ratio(&method);
    plat_printf("Table 2 of the Intel Core i7 / Xeon 5500 performance analysis guide beside this machine "
                "(measuring CPU %u; cycles via %s unless a row says otherwise)\n",
                e->self.id, method);
    plat_printf("  %-24s %-16s %16s %18s %4s %-8s %s\n", "source", "guide", "cycles +-95% CI", "ns +-95% CI", "n",
                "quality", "how");
    size_t marked = 0;
    for (int i = 0; i < LAT_ROW_COUNT; i++) {
        const struct row_out *o = &rows[i];
        char ref[40];
        lat_ref_text(&lat_rows[i], ref, sizeof(ref));
        if (!o->done) {
            plat_printf("  %-24s %-16s %16s\n", lat_rows[i].source, ref, "not run");
        } else if (!o->ok) {
            plat_printf("  %-24s %-16s %16s  %s\n", lat_rows[i].source, ref, "unavailable", o->reason);
        } else {
            /* The CI in ticks, as half-widths around the median in both units (the larger side). */
            const struct stats *t = &o->r.tsc;
            double half = MAX(t->ci_hi - t->median, t->median - t->ci_lo);
            double k_ns = o->r.ns / (t->median > 0 ? t->median : 1), k_cy = o->r.ratio;
            char cy[32], ns[32];
            /* in cycles the ratio's own uncertainty widens it (interval arithmetic, as stats_scale_unc) */
            double half_cy = half * k_cy + (o->r.ratio_u > 0 ? (t->median + half) * k_cy * o->r.ratio_u : 0);
            fmt_snprintf(cy, sizeof(cy), "%.1f +-%.1f", o->r.cycles, half_cy);
            fmt_snprintf(ns, sizeof(ns), "%.2f +-%.2f", o->r.ns, half * k_ns);
            /* the verdict after the cross-checks above (a later benchmark's may still change it: the summary) */
            char fig[LEDGER_NAME_MAX], q[16];
            fmt_snprintf(fig, sizeof(fig), "data_source/%s", lat_rows[i].source);
            enum quality fq = ledger_final_quality(fig, o->r.v.q, NULL);
            fmt_snprintf(q, sizeof(q), "%s%s", quality_name(fq), fq != o->r.v.q ? "*" : "");
            marked += fq != o->r.v.q;
            plat_printf("  %-24s %-16s %16s %18s %4lu %-8s %s\n", lat_rows[i].source, ref, cy, ns,
                        (unsigned long)t->n, q, o->method);
        }
    }
    if (marked)
        plat_printf("  (*: made suspect by a cross-check above; the data_source record keeps its own quality)\n");
    plat_printf("  (+-: half-width of the distribution-free 95 %% CI of the median; quality and cross-checks: "
                "docs/measurement.md; how each row placed its lines: its data_source record's \"placement\")\n");
}

/* Each row the sweep also measured, against the plateau of the sweep's reference series (random chase,
 * largest pages) at the row's footprint (its lines plus what its eviction read): the sweep latency at the
 * sizes where the row's lines live. Matching by footprint rather than by CPUID level matters where a level
 * has more than one plateau (a large non-inclusive L3 whose far part is slower: the knee matched to "L3"
 * may be the far one). Neither method is known to be right: a disagreement marks both, unless a third
 * measurement decides. L1 and L2 have one in the penalty benchmark, which runs later: those two checks are
 * judged at the end of the run (crosscheck_defer), where the third is read if that benchmark ran. */
static void crosscheck_sweep(void)
{
    static const struct {
        enum lat_row row;
        const char *quantity;
        const char *third; /* in cycles, taken by a later benchmark */
    } pairs[] = {
        {LAT_ROW_L1, "L1D hit latency (Table 2 row vs sweep plateau at its footprint)", XC_THIRD_L1_CYCLES},
        {LAT_ROW_L2, "L2 hit latency (Table 2 row vs sweep plateau at its footprint)", XC_THIRD_L2_CYCLES},
        {LAT_ROW_L3_UNSHARED, "L3 hit latency, unshared line (Table 2 row vs sweep plateau at its footprint)", NULL},
        /* local_DRAM: crosscheck_sweep_dram, judged only where the sweep's pages are large enough that its
         * random chain pays no page walks (on 4 KiB pages it is a different quantity). */
    };
    plat_printf("Cross-checks of the Table 2 rows:\n");
    for (size_t i = 0; i < ARRAY_SIZE(pairs); i++) {
        char a[LEDGER_NAME_MAX];
        fmt_snprintf(a, sizeof(a), "data_source/%s", lat_rows[pairs[i].row].source);
        const struct row_out *o = &rows[pairs[i].row];
        if (pairs[i].row == LAT_ROW_L1 || pairs[i].row == LAT_ROW_L2) { /* the core clock's levels: in cycles */
            if (lat_sweep_crosscheck_cycles(pairs[i].quantity, a, o->footprint, o->ok ? o->r.cycles : 0,
                                            pairs[i].third) == XC_DEFERRED)
                plat_printf("  crosscheck %s: judged at the end of the run (%s can decide a disagreement)\n",
                            pairs[i].quantity, pairs[i].third);
        } else
            lat_sweep_crosscheck(pairs[i].quantity, a, o->footprint);
    }
}

bool lat_table2_l1_reading(struct clock_l1_reading *out)
{
    const struct row_out *o = &rows[LAT_ROW_L1];
    if (!o->ok || !(o->r.cycles > 0) || !clock_method_is_chains(o->r.cycles_method))
        return false;
    *out = clock_l1_reading_of(o->r.cycles, o->r.tsc.median, o->r.tsc.ci_lo, o->r.tsc.ci_hi, o->r.ratio_u);
    return true;
}

double lat_table2_row_cycles(const char *source)
{
    for (int i = 0; source && i < LAT_ROW_COUNT; i++)
        if (!strcmp(lat_rows[i].source, source))
            return rows[i].ok && rows[i].r.cycles > 0 ? rows[i].r.cycles : 0;
    return 0;
}

const char *lat_table2_sweep_plateau(const char *source, double *cycles)
{
    for (int i = 0; source && i < LAT_ROW_COUNT; i++)
        if (!strcmp(lat_rows[i].source, source))
            return rows[i].ok ? lat_sweep_plateau_cycles(rows[i].footprint, cycles) : NULL;
    return NULL;
}

/* local_DRAM against the sweep's plateau at its footprint (docs/measurement.md "Cross-checks"). The row
 * chases page-by-page over 2 MiB units, the sweep's reference series one random cycle: on pages of 2 MiB or
 * more neither pays page walks at these sizes (a DTLB of 2 MiB entries reaches gigabytes) and both are a DRAM
 * access per load; on 4 KiB pages the random cycle walks on nearly every load and the two are different
 * quantities: not judged, with the reason. */
static void crosscheck_sweep_dram(int node)
{
    const char *q = "local DRAM latency (Table 2 row vs sweep plateau at its footprint)";
    const char *a = "data_source/local_DRAM";
    const struct row_out *o = &rows[LAT_ROW_LOCAL_DRAM];
    const char *why = "the row was not measured";
    const char *b = o->footprint ? lat_sweep_dram_plateau(o->footprint, &why) : NULL;
    if (!b) {
        struct crosscheck xc = {.quantity = q, .a = a, .b = "latency_plateau (reference series)",
                                .a_value = __builtin_nan(""), .b_value = __builtin_nan(""), .unit = UNIT_NS,
                                .tolerance = XC_TOL_DRAM, .not_judged = why};
        crosscheck_emit(&xc);
        return;
    }
    /* Under a hypervisor the host may back the guest's 2 MiB pages with 4 KiB pages: the random chain then pays
     * nested page walks that the row's page-by-page order does not, and only the plateau is blamed. Elsewhere the
     * numa_latency benchmark (later in the run) measures the same DRAM latency a third time on CPU 0's node, and
     * the check waits for it (judged at the end of the run). */
    bool hv = plat_cpuinfo() && plat_cpuinfo()->feat.hypervisor;
    char third[LEDGER_NAME_MAX];
    fmt_snprintf(third, sizeof(third), "numa_latency/%d-%d", node, node);
    if (hv || node < 0)
        crosscheck_figures(q, a, b, XC_TOL_DRAM, hv ? b : NULL,
                           hv ? "under a hypervisor the host may back the guest's 2 MiB pages with 4 KiB pages: the "
                                "sweep's random chain then pays nested page walks the row's page-by-page order does "
                                "not (the plateau is blamed)"
                              : NULL);
    else if (crosscheck_figures3_later(q, a, b, third, XC_TOL_DRAM, NULL, NULL) == XC_DEFERRED)
        plat_printf("  crosscheck %s: judged at the end of the run (%s can decide a disagreement)\n", q, third);
}

/* ---- the passes --------------------------------------------------------------------------------------- */

static struct env E;
static bool begun;
static size_t passes_done;
static const char *no_l3_why = "CPUID reports no L3";

void lat_table2_begin(void)
{
    struct env *e = &E;
    const struct plat_config *cfg = plat_config();
    memset(e, 0, sizeof(*e));
    memset(rows, 0, sizeof(rows));
    memset(prows, 0, sizeof(prows));
    uint64_t s = cfg->seed ^ 0x7ab1e2ull;
    e->seed = splitmix64_next(&s);
    e->reps = MIN(lat_replicates(), (size_t)MEAS_REPLICATES_FULL);
    e->t0 = timing_rdtsc();
    cache_sizes_from_cpuid(plat_cpuinfo(), &e->c);
    find_cpus(e);
    setup_lines(e);
    l1_begin(e);
    /* The placed rows, in the order of the table; each measures its replicate k in pass k. */
    if (e->c.l2) {
        struct lat_step st[] = {{LAT_OP_WRITE, e->self.id}, {LAT_OP_EVICT, e->self.id}};
        placed_add(e, LAT_ROW_L2, st, ARRAY_SIZE(st), &e->ev1, NULL, e->lines_span, e->lines_seed);
    }
    if (e->c.l3) {
        struct lat_step un[] = {{LAT_OP_WRITE, e->self.id}, {LAT_OP_EVICT, e->self.id}};
        placed_add(e, LAT_ROW_L3_UNSHARED, un, ARRAY_SIZE(un), &e->ev2, NULL, e->lines_span, e->lines_seed);
        /* The rows with another core use the c2c matrix's lines: few enough that the holder's private caches
         * keep every one (lat_other_core_bytes). */
        if (e->have_helper) {
            uint64_t w = lat_other_core_bytes(&e->c);
            struct lat_step sh[] = {{LAT_OP_WRITE, e->helper.id}, {LAT_OP_EVICT, e->helper.id},
                                    {LAT_OP_READ, e->helper.id}};
            placed_add(e, LAT_ROW_L3_SHARED, sh, ARRAY_SIZE(sh), &e->ev2, &e->helper, w, e->seed ^ 0xc0c0);
            struct lat_step mo[] = {{LAT_OP_WRITE, e->helper.id}};
            placed_add(e, LAT_ROW_L3_MODIFIED, mo, ARRAY_SIZE(mo), NULL, &e->helper, w, e->seed ^ 0xc0c0);
        }
    }
    if (e->have_remote) {
        struct lat_step re[] = {{LAT_OP_WRITE, e->remote.id}};
        placed_add(e, LAT_ROW_REMOTE_L3, re, ARRAY_SIZE(re), NULL, &e->remote, e->lines_span, e->lines_seed);
    }
    passes_done = 0;
    begun = true;
}

size_t lat_table2_passes(void) { return begun ? E.reps : 0; }
size_t lat_table2_passes_done(void) { return passes_done; }

void lat_table2_pass(void)
{
    struct env *e = &E;
    if (!begun || passes_done >= e->reps)
        return;
    size_t k = passes_done++;
    l1_pass(e, k);
    for (int row = 0; row < LAT_ROW_COUNT; row++)
        if (prows[row].on)
            placed_pass(e, &prows[row], k);
}

size_t lat_table2_due(size_t done, size_t total, size_t reps)
{
    if (!total || done >= total)
        return reps;
    return done * reps / total;
}

void lat_table2_between(size_t done, size_t total)
{
    if (!begun)
        return;
    size_t due = lat_table2_due(done, total, E.reps);
    while (passes_done < due)
        lat_table2_pass();
}

void lat_table2_finish(void)
{
    struct env *e = &E;
    if (!begun)
        return;
    while (passes_done < e->reps) /* what the sweep's passes left (no sweep, or a series that did not run) */
        lat_table2_pass();
    begun = false;
    l1_finish(e);
    if (!e->c.l2)
        unavailable(LAT_ROW_L2, "placed_one_pass", "CPUID reports no L2");
    else
        placed_finish(e, &prows[LAT_ROW_L2]);
    if (!e->c.l3) {
        unavailable(LAT_ROW_L3_UNSHARED, "placed_one_pass", no_l3_why);
        unavailable(LAT_ROW_L3_SHARED, "placed_one_pass", no_l3_why);
        unavailable(LAT_ROW_L3_MODIFIED, "placed_one_pass", no_l3_why);
    } else {
        placed_finish(e, &prows[LAT_ROW_L3_UNSHARED]);
        if (e->have_helper) {
            placed_finish(e, &prows[LAT_ROW_L3_SHARED]);
            placed_finish(e, &prows[LAT_ROW_L3_MODIFIED]);
        } else {
            unavailable(LAT_ROW_L3_SHARED, "placed_one_pass", e->no_helper);
            unavailable(LAT_ROW_L3_MODIFIED, "placed_one_pass", e->no_helper);
        }
    }
    if (e->have_remote)
        placed_finish(e, &prows[LAT_ROW_REMOTE_L3]);
    else
        unavailable(LAT_ROW_REMOTE_L3, "placed_one_pass", e->no_remote);
    plat_free(&e->lines_buf);
    plat_free(&e->evict_buf);

    /* The DRAM rows' replicates relink one chain (docs/measurement.md "Replicates"), back to back in time. */
    row_dram(e, LAT_ROW_LOCAL_DRAM, e->self.node, "CPU 0's node");

    int remote_node = -1;
    uint32_t nodes = plat_node_count();
    for (uint32_t n = 0; n < nodes && remote_node < 0; n++)
        if ((int)n != e->self.node && plat_node_bytes((int)n) > 0)
            remote_node = (int)n;
    if (remote_node >= 0)
        row_dram(e, LAT_ROW_REMOTE_DRAM, remote_node, "another node, by SRAT");
    else
        unavailable(LAT_ROW_REMOTE_DRAM, "chase_steady_state",
                    nodes < 2 ? "one NUMA node (no SRAT, or a single proximity domain)"
                              : "no other NUMA node has memory");
    lat_scratch_free(&e->scratch);
    crosscheck_sweep();
    crosscheck_sweep_dram(e->self.node);
    print_table(e); /* after the checks: its quality column is the verdict they leave */
}

void lat_table2_run(void)
{
    lat_table2_begin();
    lat_table2_finish(); /* every pass back to back */
}
