/* lat_sweep.c - the size sweep: one chain per working set, per page size, then knee detection against CPUID. */
#include "bench/lat_sweep.h"
#include "measure/verdict.h"
#include "bench/crosscheck.h"
#include "kernel/fmt.h"
#include "measure/stats_json.h"
#include "measure/knee.h"
#include "measure/engine.h"
#include "bench/lat_common.h"
#include "bench/clock.h"
#include "measure/rand.h"
#include "measure/timing.h"

#define MAX_SERIES 4

struct series {
    enum chain_mode mode;
    const char *mode_name; /* the record's "mode" */
    uint64_t page_req;
    uint64_t page_bytes;   /* what backed it */
    const char *page_how;
    bool ok;
    const char *reason;
    size_t n;
    uint64_t bytes[LAT_MAX_POINTS];
    double ns[LAT_MAX_POINTS], cycles[LAT_MAX_POINTS], cv[LAT_MAX_POINTS];
    double ci[LAT_MAX_POINTS]; /* half-width of the median's 95 % CI / the median */
    double cu[LAT_MAX_POINTS]; /* the relative uncertainty of each point's cycles conversion (core_tsc_ratio_u) */
    bool chains;               /* every point's cycles converted with the clock chain draws (clock_method_is_chains) */
    enum quality q[LAT_MAX_POINTS]; /* each point's verdict: a plateau's is the worst of its points' */
    double seconds;
    double ratio0, ratio1; /* core/TSC ratio on the benchmark's CPU before and after the series (0: not measured) */
    const char *how0, *how1; /* how each was measured (ratio_now) */
    int tries;             /* 2 when a clock drift made it measure the series again */
    double build_seconds;  /* of that, building the chains */
    double alloc_seconds;  /* ... and taking its buffer from the platform (faulted in) and giving it back */
    uint64_t fresh_max;    /* points up to this size: a fresh permutation per replicate (above: back to back) */
    uint64_t buf_bytes;    /* the buffer the series took (page-by-page: no larger than where it stops) */
    uint32_t build_cpus;   /* most CPUs that built one chain */
    uint64_t loads;        /* dependent loads issued: warm-up, calibration, samples */
    bool page_plateau;     /* the page-by-page series ended at its page-walk plateau, before the top */
};

static struct series S[MAX_SERIES];
static uint64_t grid[LAT_MAX_POINTS];

static uint64_t point_seed(uint64_t seed, size_t series, size_t point)
{
    uint64_t s = seed ^ (0x9E3779B97F4A7C15ull * (series + 1)) ^ ((uint64_t)point << 32);
    return splitmix64_next(&s);
}

static void emit_series(const struct series *s, uint64_t top)
{
    struct json *j = plat_rec_begin("latency_series");
    json_kv_str(j, "mode", s->mode_name);
    json_kv_uint(j, "page_bytes", s->page_bytes ? s->page_bytes : s->page_req);
    json_kv_uint(j, "page_bytes_requested", s->page_req);
    json_kv_str(j, "page_how", s->page_how);
    json_kv_str(j, "status", s->ok ? "ok" : "unavailable");
    if (!s->ok)
        json_kv_str(j, "reason", s->reason);
    json_kv_uint(j, "points", s->n);
    json_kv_uint(j, "top_bytes", top);
    json_kv_uint(j, "buffer_bytes", s->buf_bytes);
    json_kv_double(j, "seconds", s->seconds);
    json_kv_double(j, "build_seconds", s->build_seconds);
    json_kv_double(j, "alloc_seconds", s->alloc_seconds);
    json_kv_uint(j, "build_cpus", s->build_cpus);
    json_kv_uint(j, "fresh_max_bytes", s->fresh_max);
    json_kv_uint(j, "loads", s->loads);
    json_kv_str(j, "ended", s->page_plateau ? "page_walk_plateau" : "top");
    if (s->ratio0 > 0 && s->ratio1 > 0) {
        double d = s->ratio1 / s->ratio0 - 1;
        json_kv_double(j, "core_tsc_ratio_start", s->ratio0);
        json_kv_double(j, "core_tsc_ratio_end", s->ratio1);
        json_kv_double(j, "clock_drift", d);
        json_kv_bool(j, "clock_steady", d <= XC_TOL_RATIO && -d <= XC_TOL_RATIO);
    } else {
        json_kv_null(j, "clock_drift");
    }
    json_kv_uint(j, "tries", (uint64_t)(s->tries ? s->tries : 1));
    plat_rec_end();
}

static const char *ratio_how; /* how the latest ratio_now was measured, for the console */

/* The benchmark CPU's core/TSC ratio now (0 when it cannot be measured): where the points are converted with the
 * clock chains timed after each replicate, the same chains' steady reference (clock_chain_ratio_steady, on this
 * CPU: the chase runs on the calling one), so that the drift rule and the conversion see one clock; else the
 * platform's measurement (a cycle counter, APERF/MPERF, or the chains' long runs). */
static double ratio_now(uint32_t cpu)
{
    double u;
    if (clock_chain_ratio_usable()) {
        /* no falling back to the chains' long runs here: when no short window pair was clean, they lost cycles
         * too (a 0.5 ms run took an interruption in most of 7 on the shared test box), and a ratio read low
         * would re-measure a series for nothing */
        ratio_how = "clock chain windows";
        return clock_chain_ratio_steady(plat_config()->serialize, &u);
    }
    ratio_how = "core_clock";
    struct core_clock c;
    return plat_core_clock(cpu, &c) == 0 ? c.ratio : 0;
}

static bool drifted(double r0, double r1)
{
    if (!(r0 > 0) || !(r1 > 0))
        return false;
    double d = r1 / r0 - 1;
    return d > XC_TOL_RATIO || -d > XC_TOL_RATIO;
}

/* The points of the series being measured (one series at a time), kept until its records are written. */
static struct {
    struct lat_result r;  /* the point's figure (after the passes: across its replicates) */
    size_t lines;
    size_t grid_i;        /* its size in grid[] */
    bool whole;           /* measured in all its replicates in pass 0 (above lat_fresh_max_bytes) */
    size_t got;           /* replicates in rep[] */
    uint64_t digest;      /* chain_digest of replicate 0's chain (pass 0) */
    struct meas_result rep[MEAS_REPLICATES_FULL];
    uint64_t off[MEAS_REPLICATES_FULL]; /* where each replicate's chain sat: bytes from the buffer's start */
    double ratio[MEAS_REPLICATES_FULL], ratio_u[MEAS_REPLICATES_FULL]; /* each replicate's own core/TSC ratio */
} pt[LAT_MAX_POINTS];

static lat_sweep_between_fn between;
static size_t between_done, between_total;

void lat_sweep_between(lat_sweep_between_fn fn) { between = fn; }

/* The series' passes over the grid (one per replicate): s->bytes/ns/cycles/cv/ci/q and pt[] for every point
 * that measured in the first. */
static void measure_series(struct series *s, size_t idx, size_t n_grid, uint64_t top, uint64_t llc,
                           struct lat_scratch *scratch)
{
    const struct plat_config *cfg = plat_config();
    struct plat_cpu self = {0}; /* the chase runs here, on the benchmark's own CPU */
    plat_cpu(0, &self);
    struct plat_buf buf;
    uint64_t t0 = timing_rdtsc();
    s->n = 0;
    s->ratio0 = ratio_now(self.id);
    s->how0 = ratio_how;
    s->build_seconds = 0;
    s->build_cpus = 0;
    s->loads = 0;
    s->page_plateau = false;
    /* the page-by-page series goes no further than the LLC rule: its buffer no larger either */
    uint64_t page_top = lat_sweep_top(llc, 0);
    uint64_t buf_bytes = s->mode == CHAIN_PAGE ? MIN(top, page_top) : top;
    s->buf_bytes = buf_bytes;
    uint64_t a0 = timing_rdtsc();
    int rc = plat_alloc(&buf, buf_bytes, s->page_req, -1, "latency sweep");
    s->alloc_seconds = lat_tsc_to_ns((double)(timing_rdtsc() - a0)) * 1e-9;
    if (rc != 0) {
        s->ok = false;
        s->reason = s->page_req == KiB(4)   ? "no memory for the sweep buffer"
                    : s->page_req == MiB(2) ? "no 2 MiB-aligned memory for the sweep buffer"
                                            : "no free 1 GiB-aligned gigabyte(s) for the sweep buffer";
        return;
    }
    s->ok = true;
    s->page_bytes = buf.page_bytes;
    s->page_how = buf.page_how;
    /* Replicates interleaved in time (docs/measurement.md "Replicates"): R passes over the series' points, each
     * point a fresh permutation (new seed) in every pass, so that a point's replicates are a whole pass apart,
     * not back to back. Pass 0 decides the points (and where the page-by-page series ends); a point larger
     * than lat_fresh_max_bytes_par (2x the LLC, and no more lines than the CPUs that build it rebuild in about
     * a replicate's own time: millions of random lines, whose permutations all give the same latency while
     * each rebuild costs more than the chase) is measured in pass 0 alone, in R replicates on the one chain,
     * back to back (as lat_chase does for the Table 2 DRAM rows). */
    size_t reps = MIN(lat_replicates(), (size_t)MEAS_REPLICATES_FULL);
    struct cache_sizes cs;
    cache_sizes_from_cpuid(plat_cpuinfo(), &cs);
    uint64_t fresh_max = lat_fresh_max_bytes_par(&cs, lat_build_cpus(s->mode));
    s->fresh_max = fresh_max;
    /* Each replicate's chain at its own page-aligned offset of the series' buffer (lat_rep_offset: spread over
     * the room the point leaves, replicate 0 at the start): another replicate, other pages. Where the host
     * backs the guest's large pages with 4 KiB ones that is another cache-set placement, which moved the
     * 512 KiB point 4.75-5.24 ns between placements in one process on the 2-vCPU EPYC box (docs/measurement.md
     * "Replicates"). */
    uint64_t align = buf.page_bytes ? buf.page_bytes : s->page_req;
    for (size_t k = 0; k < reps; k++) {
        uint64_t last = 0;
        size_t end = k ? s->n : n_grid;
        for (size_t j = 0; j < end; j++) {
            size_t i = k ? pt[j].grid_i : j; /* the grid index */
            if (!k && s->n >= LAT_MAX_POINTS)
                break;
            struct chain_params p = {
                .bytes = (size_t)grid[i],
                .line = 64,
                .page = KiB(4),
                .mode = s->mode,
                .seed = lat_rep_seed(point_seed(cfg->seed, idx, i), k),
                .buf_page = buf.page_bytes,
            };
            if (s->mode == CHAIN_PAGE) {
                if (grid[i] > page_top) { /* sweep_top above the rule: the plateau is reached by then */
                    s->page_plateau = true;
                    break;
                }
                p.bytes = (size_t)ALIGN_DOWN(grid[i], KiB(4));
                if (p.bytes == 0 || p.bytes == last)
                    continue;
            }
            bool whole = reps > 1 && p.bytes > fresh_max; /* all its replicates in pass 0, on one chain */
            if (k && pt[j].whole)
                continue;
            size_t n = 0;
            uint64_t off = whole ? 0 : lat_rep_offset(buf_bytes, p.bytes, align, k, reps);
            void *start = lat_chain((uint8_t *)buf.ptr + off, &p, scratch, &n);
            s->build_seconds += lat_tsc_to_ns((double)lat_chain_last.ticks) * 1e-9;
            s->build_cpus = MAX(s->build_cpus, lat_chain_last.cpus);
            /* pass 0's chain: its first links as a digest, checked on the way (lat_chain walks a chain whole
             * only up to 2^16 lines); the same seed gives the same digest whether one CPU or several built it
             * (measure/chain.h), which the records let a reader compare */
            uint64_t digest = start && !k ? chain_digest(start, n, (uint8_t *)buf.ptr + off, p.bytes) : 0;
            if (!k && !digest)
                start = NULL;
            /* Above the LLC the built chain is already in a random cache and TLB state: a fixed number of loads
             * warms the code and the walk (a full pass would cost as much as the bytes, docs/latency.md "Sweep");
             * with replicates (R > 1) the R replicates of such a point share that warm-up, LAT_SWEEP_WARM_LOADS / R
             * loads each (at least LAT_SWEEP_REP_WARM_MIN), as they share the sampling budget. Below the LLC a
             * chain of more than LAT_SWEEP_WARM_LOADS lines is warmed by LAT_SWEEP_WARM_LOADS loads per replicate
             * instead of a full pass (R full passes at L3 latency were most of the sweep's time; fewer loads than
             * that left a chain in the state its build left it, not the chase's: docs/measurement.md
             * "Replicates"); smaller chains, and every chain of the single-replicate profiles, get the full pass.
             * A point measured whole (its R replicates back to back on one chain) is warmed once, as one chase:
             * LAT_SWEEP_WARM_LOADS loads, as lat_chase warms the DRAM rows. */
            bool above = llc && (uint64_t)n * 64 > llc;
            uint64_t warm = above && reps > 1 && !whole ? MAX(LAT_SWEEP_WARM_LOADS / reps, (uint64_t)LAT_SWEEP_REP_WARM_MIN)
                            : above || (reps > 1 && n > LAT_SWEEP_WARM_LOADS) ? LAT_SWEEP_WARM_LOADS
                                                                              : 0;
            /* this pass's replicate with its share of the budget, or all of them */
            struct lat_reps one = {.n = whole ? reps : 1, .of = reps};
            struct lat_result r;
            if (!start || lat_chase_warm(start, n, true, &one, warm, &r) != CHASE_OK)
                continue;
            s->loads += r.loads;
            last = p.bytes;
            if (k) {
                if (pt[j].got < MEAS_REPLICATES_FULL) {
                    pt[j].off[pt[j].got] = off;
                    pt[j].ratio[pt[j].got] = r.ratio;
                    pt[j].ratio_u[pt[j].got] = r.ratio_u;
                    pt[j].rep[pt[j].got++] = lat_result_rep(&r);
                }
                continue;
            }
            pt[s->n].grid_i = i;
            pt[s->n].whole = whole;
            pt[s->n].lines = n;
            pt[s->n].digest = digest;
            pt[s->n].r = r;
            pt[s->n].rep[0] = lat_result_rep(&r);
            pt[s->n].off[0] = off;
            pt[s->n].ratio[0] = r.ratio;
            pt[s->n].ratio_u[0] = r.ratio_u;
            pt[s->n].got = 1;
            s->bytes[s->n] = (uint64_t)n * 64;
            s->ns[s->n] = r.ns;
            s->ci[s->n] = r.tsc.median > 0 ? (r.tsc.ci_hi - r.tsc.ci_lo) / (2 * r.tsc.median) : 1;
            s->n++;
            if (s->mode == CHAIN_PAGE && i + 1 < n_grid && lat_page_plateau(s->bytes, s->ns, s->ci, s->n, llc)) {
                s->page_plateau = true; /* flat past the LLC: larger sets add cost, not information */
                break;
            }
        }
        between_done++;
        if (between)
            between(between_done, between_total);
    }
    /* Each point's figure: across its replicates (median of the replicates' medians and its interval). */
    s->chains = s->n > 0;
    for (size_t j = 0; j < s->n; j++) {
        struct lat_result *r = &pt[j].r;
        /* in cycles with the median of the replicates' own ratios, each timed right after its replicate: a
         * replicate's ratio is a moment's, and the figure is a median over replicates a whole pass apart */
        if (!pt[j].whole && pt[j].got > 1)
            lat_result_combine_own(pt[j].rep, pt[j].ratio, pt[j].ratio_u, pt[j].got, r->ratio, r->ratio_u,
                                   r->cycles_method, r);
        s->ns[j] = r->ns;
        s->cycles[j] = r->cycles;
        s->cu[j] = r->ratio_u;
        s->chains &= clock_method_is_chains(r->cycles_method) && r->cycles > 0;
        s->cv[j] = r->tsc.spread;
        s->ci[j] = r->tsc.median > 0 ? (r->tsc.ci_hi - r->tsc.ci_lo) / (2 * r->tsc.median) : 1;
        s->q[j] = r->v.q;
    }
    uint64_t f0 = timing_rdtsc();
    plat_free(&buf);
    s->alloc_seconds += lat_tsc_to_ns((double)(timing_rdtsc() - f0)) * 1e-9;
    s->ratio1 = ratio_now(self.id);
    s->how1 = ratio_how;
    s->seconds = lat_tsc_to_ns((double)(timing_rdtsc() - t0)) * 1e-9;
}

static void emit_points(const struct series *s)
{
    struct plat_cpu self = {0};
    plat_cpu(0, &self);
    for (size_t i = 0; i < s->n; i++) {
        struct json *j = plat_rec_begin("latency_sweep");
        json_kv_uint(j, "bytes", s->bytes[i]);
        json_kv_uint(j, "page_bytes", s->page_bytes);
        json_kv_str(j, "page_how", s->page_how);
        json_kv_str(j, "mode", s->mode_name);
        json_kv_uint(j, "lines", pt[i].lines);
        json_kv_uint(j, "line_bytes", 64);
        json_key(j, "replicate_offsets"); /* one per replicate measured apart (a point measured whole: its one chain's) */
        json_arr_begin(j);
        for (size_t k = 0; k < pt[i].got; k++)
            json_uint(j, pt[i].off[k]);
        json_arr_end(j);
        json_kv_bool(j, "fresh_chains", !pt[i].whole); /* each replicate its own permutation, a pass apart */
        json_kv_hex(j, "chain_digest", pt[i].digest);  /* replicate 0's chain (chain_digest) */
        char name[LEDGER_NAME_MAX];
        fmt_snprintf(name, sizeof(name), "latency_sweep/%s/%lu/%lu", s->mode_name, (unsigned long)s->page_bytes,
                     (unsigned long)s->bytes[i]);
        lat_result_json(j, name, &pt[i].r);
        json_kv_uint(j, "cpu", self.id);
        plat_rec_end();
    }
}

/* A series whose core/TSC ratio moved beyond XC_TOL_RATIO between its start and its end ran at two clocks
 * (another core's load changed the turbo bin, the host moved the vCPU): it is measured once more, and its
 * latency_series record says clock_steady false when the second try drifted too (it is then no reference for
 * the cache inference while a steady series exists). */
static void run_series(struct series *s, size_t idx, size_t n_grid, uint64_t top, uint64_t llc,
                       struct lat_scratch *scratch)
{
    s->tries = 1;
    measure_series(s, idx, n_grid, top, llc, scratch);
    /* Minimal samples (QEMU TCG): the emulated clock moves with the host's load and a second try measures nothing
     * the first did not (it cost 0.07-0.19 s a series under `make run`, in half the series with two CPU hogs);
     * the record still says clock_steady false (docs/measurement.md "Minimal mode"). */
    if (s->ok && drifted(s->ratio0, s->ratio1) && plat_config()->minimal)
        plat_printf("  series %s %lu: core/TSC ratio %.4f at its start, %.4f at its end: not measured again "
                    "(minimal samples)\n", s->mode_name, (unsigned long)s->page_bytes, s->ratio0, s->ratio1);
    else if (s->ok && drifted(s->ratio0, s->ratio1)) {
        plat_printf("  series %s %lu: core/TSC ratio %.4f at its start (by %s), %.4f at its end (by %s): measured "
                    "again\n", s->mode_name, (unsigned long)s->page_bytes, s->ratio0, s->how0, s->ratio1, s->how1);
        s->tries = 2;
        measure_series(s, idx, n_grid, top, llc, scratch);
    }
    if (s->ok)
        emit_points(s);
    emit_series(s, top);
}

static void print_table(size_t ns, const char *cycles_method)
{
    char b[24];
    plat_printf("Latency sweep: one random cycle over the working set (page: page-by-page), ns and core cycles "
                "per load (cycles via %s)\n",
                cycles_method);
    plat_printf("  %12s", "working set");
    for (size_t k = 0; k < ns; k++) {
        if (!S[k].ok)
            continue;
        lat_bytes_text(S[k].page_bytes ? S[k].page_bytes : S[k].page_req, b, sizeof(b));
        plat_printf("  %8s %-7s", S[k].mode_name, b);
    }
    plat_printf("\n  %12s", "");
    for (size_t k = 0; k < ns; k++)
        if (S[k].ok)
            plat_printf("  %8s %7s", "ns", "cycles");
    plat_printf("\n");
    /* Rows: every size any series measured, in order; sizes within 6 % share a row (the page-by-page
     * series rounds the grid to whole pages). */
    size_t at[MAX_SERIES] = {0};
    for (;;) {
        uint64_t next = UINT64_MAX;
        for (size_t k = 0; k < ns; k++)
            if (S[k].ok && at[k] < S[k].n && S[k].bytes[at[k]] < next)
                next = S[k].bytes[at[k]];
        if (next == UINT64_MAX)
            break;
        uint64_t near = next + next / 16;
        plat_printf("  %12s", lat_bytes_text(next, b, sizeof(b)));
        for (size_t k = 0; k < ns; k++) {
            if (!S[k].ok)
                continue;
            if (at[k] < S[k].n && S[k].bytes[at[k]] <= near) {
                plat_printf("  %8.2f %7.1f", S[k].ns[at[k]], S[k].cycles[at[k]]);
                at[k]++;
            } else {
                plat_printf("  %8s %7s", "", "");
            }
        }
        plat_printf("\n");
    }
}

/* The plateaus of the reference series, smallest first, for the Table 2 cross-checks: plateau k holds the
 * sizes of its flat run and what followed it before the rise ([from, to]); sizes between two plateaus are a
 * transition and belong to neither. */
#define MAX_PLATEAUS 16
static struct {
    struct knee_level lv[MAX_PLATEAUS];
    char name[MAX_PLATEAUS][LEDGER_NAME_MAX];
    double cycles[MAX_PLATEAUS]; /* median core cycles of the plateau's points (0: not known) */
    size_t n;
    bool have;       /* a reference series was chosen */
    bool disturbed;  /* ... and it was disturbed (no steady series existed) */
    uint64_t page;   /* the reference series' page size */
    uint64_t top;    /* and its largest size */
} ref;

/* The first plateau's latency of a curve (the L1 plateau when the curve starts inside the L1), 0 when the curve
 * has none. */
static double first_plateau(const struct lat_sweep_curve *c)
{
    double x[LAT_MAX_POINTS];
    struct knee_level lv[1];
    if (c->n < KNEE_MIN_POINTS || c->n > LAT_MAX_POINTS)
        return 0;
    for (size_t i = 0; i < c->n; i++)
        x[i] = (double)c->bytes[i];
    return knee_detect(x, c->ns, c->n, lv, 1) >= 1 ? lv[0].latency : 0;
}

size_t lat_sweep_pick_reference(const struct lat_sweep_curve *c, size_t n, bool *disturbed, const char **why)
{
    /* The L1 plateau is the control: a load that hits the L1D takes the same core cycles whatever the page size
     * (the L1D is indexed inside the 4 KiB page offset and every series' L1 working sets fit the L1 DTLB), so
     * its latency in ns differs between two series only when the core clock or the core's share of the
     * pipeline did (a busy SMT sibling on the host, a turbo bin). A series whose L1 plateau is more than
     * XC_TOL_RATIO slower than the fastest one, or whose core/TSC ratio drifted, was disturbed. */
    double l1[8] = {0}, fastest = 0;
    size_t best = SIZE_MAX;
    for (size_t k = 0; k < n && k < ARRAY_SIZE(l1); k++) {
        if (!c[k].random || c[k].n < KNEE_MIN_POINTS)
            continue;
        l1[k] = first_plateau(&c[k]);
        if (l1[k] > 0 && c[k].clock_steady && (fastest == 0 || l1[k] < fastest))
            fastest = l1[k];
    }
    for (size_t pass = 0; pass < 2 && best == SIZE_MAX; pass++) {
        for (size_t k = 0; k < n && k < ARRAY_SIZE(l1); k++) {
            if (!c[k].random || c[k].n < KNEE_MIN_POINTS)
                continue;
            bool bad = !c[k].clock_steady || !(l1[k] > 0) || (fastest > 0 && l1[k] > fastest * (1 + XC_TOL_RATIO));
            if (pass == 0 && bad)
                continue;
            if (best == SIZE_MAX || c[k].page_bytes > c[best].page_bytes)
                best = k;
        }
        if (best != SIZE_MAX) {
            *disturbed = pass == 1;
            *why = pass == 0 ? NULL
                   : !c[best].clock_steady
                       ? "its core/TSC ratio drifted beyond 5 % during the series (measured twice), and no random "
                         "series ran at a steady clock"
                       : "its L1 plateau is more than 5 % slower than another series' (the core clock or the core's "
                         "share of the pipeline changed), and no random series was undisturbed";
        }
    }
    return best;
}

/* A plateau's figure from the sweep points it spans, sizes in [from, to] (its knee_level from/to; to 0: no
 * plateau, no points): n the points, median the plateau's latency, the interval the distribution-free one of
 * the points' medians (stats_median_ci_ranks; widened to hold the latency), and the worst verdict of the points
 * (verdict_derived; a curve without verdicts, c->q NULL, counts its points ok). */
static void plateau_figure(const struct lat_sweep_curve *c, uint64_t from, uint64_t to, double latency,
                           struct stats *st, struct verdict *v)
{
    double med[LAT_MAX_POINTS];
    enum quality q[LAT_MAX_POINTS];
    size_t n = 0;
    for (size_t i = 0; i < c->n && i < LAT_MAX_POINTS; i++)
        if (to && c->bytes[i] >= from && c->bytes[i] <= to) {
            med[n] = c->ns[i];
            q[n++] = c->q ? c->q[i] : QUALITY_OK;
        }
    *st = stats_derived(latency);
    if (n) {
        size_t lo, hi;
        bool exact;
        stats_sort(med, n);
        stats_median_ci_ranks(n, &lo, &hi, &exact);
        st->n = n;
        st->ci_lo = MIN(med[lo], latency);
        st->ci_hi = MAX(med[hi], latency);
        st->min = MIN(med[0], st->ci_lo);
        st->max = MAX(med[n - 1], st->ci_hi);
    }
    verdict_derived(v, q, n, "the plateau");
}

/* The median core cycles of a curve's points in [from, to], each converted with the ratio of its own time;
 * 0 when the curve has no cycles or no point there. */
static double plateau_cycles(const struct lat_sweep_curve *c, uint64_t from, uint64_t to)
{
    double x[LAT_MAX_POINTS];
    size_t n = 0;
    for (size_t i = 0; c->cycles && i < c->n && i < LAT_MAX_POINTS; i++)
        if (to && c->bytes[i] >= from && c->bytes[i] <= to && c->cycles[i] > 0)
            x[n++] = c->cycles[i];
    if (!n)
        return 0;
    stats_sort(x, n);
    return stats_quantile_sorted(x, n, 0.5);
}

/* The reference series' first plateau (the L1 one: the curve starts inside the L1D) as readings of the L1
 * latency in cycles for clock_l1_check: each point's cycles within its conversion's u (the plateau's interval is
 * the one of its points' medians, plateau_figure). */
static struct {
    char name[LEDGER_NAME_MAX];
    struct clock_l1_reading r[LAT_MAX_POINTS];
    size_t n;
} l1;

static void l1_keep(const struct lat_sweep_curve *c, uint64_t from, uint64_t to, const char *name)
{
    l1.n = 0;
    for (size_t i = 0; i < c->n && i < LAT_MAX_POINTS; i++)
        if (c->bytes[i] >= from && c->bytes[i] <= to && c->cycles[i] > 0)
            l1.r[l1.n++] = clock_l1_reading_of(c->cycles[i], 0, 0, 0, c->cycles_u[i]);
    fmt_snprintf(l1.name, sizeof(l1.name), "%s", name);
}

size_t lat_sweep_l1_readings(const struct clock_l1_reading **r, const char **figure)
{
    *r = l1.r;
    *figure = l1.name;
    return l1.n;
}

/* cache_inferred records from the curve of one series, matched against the CPUID data/unified caches. */
static void infer_caches(const struct lat_sweep_curve *s, bool disturbed, const char *disturbed_why)
{
    struct cache_sizes cc;
    const struct cache_sizes *c = &cc;
    cache_sizes_from_cpuid(plat_cpuinfo(), &cc);
    uint64_t cb[3];
    int lv[3];
    size_t nc = 0;
    if (c->l1)
        cb[nc] = c->l1, lv[nc++] = 1;
    if (c->l2)
        cb[nc] = c->l2, lv[nc++] = 2;
    if (c->l3)
        cb[nc] = c->l3, lv[nc++] = 3;

    double x[LAT_MAX_POINTS];
    struct knee_level levels[MAX_PLATEAUS];
    struct knee_match m[3];
    for (size_t i = 0; i < s->n; i++)
        x[i] = (double)s->bytes[i];
    int nl = knee_detect(x, s->ns, s->n, levels, ARRAY_SIZE(levels));
    if (nl < 0)
        nl = 0;
    size_t used = MIN((size_t)nl, ARRAY_SIZE(levels));
    if (knee_match_cpuid(levels, used, cb, nc, m) < 0)
        nc = 0;
    const char *method;
    double ratio = clock_core_ratio(&method);
    double tsc_per_ns = (double)plat_tsc_hz() * 1e-9;
    unsigned ppo = plat_config()->quick ? LAT_SWEEP_PPO_QUICK : LAT_SWEEP_PPO_FULL;
    /* Inferred size vs CPUID: agree within one step of the size grid (the resolution of the sweep); below two
     * points per octave a knee cannot be placed well enough to judge at all. */
    double size_tol = lat_pow2_frac(1, ppo) - 1;
    ref.n = 0;
    ref.have = true;
    ref.disturbed = disturbed;
    ref.page = s->page_bytes;
    ref.top = s->n ? s->bytes[s->n - 1] : 0;
    char b1[24], b2[24];
    lat_bytes_text(s->page_bytes, b1, sizeof(b1));
    plat_printf("Cache levels inferred from the %s curve with %s pages (%d plateau(s) found)%s:\n", s->mode, b1, nl,
                disturbed ? " -- a disturbed series: suspect" : "");
    for (size_t i = 0; i < nc; i++) {
        char name[LEDGER_NAME_MAX], what[64], a[LEDGER_NAME_MAX + 8], b[32];
        fmt_snprintf(name, sizeof(name), "cache_inferred/%s/%lu/L%d", s->mode, (unsigned long)s->page_bytes, lv[i]);
        struct verdict v;
        struct stats st;
        const struct knee_level *pl = NULL; /* the plateau the matched knee ends */
        for (size_t k = 0; k < used; k++)
            if (m[i].inferred_bytes > 0 && levels[k].bytes == m[i].inferred_bytes)
                pl = &levels[k];
        plateau_figure(s, pl ? (uint64_t)pl->from : 0, pl ? (uint64_t)pl->to : 0, m[i].latency, &st, &v);
        int agrees = -1;
        if (disturbed)
            verdict_worsen(&v, QUALITY_SUSPECT, "the reference series was disturbed: %s", disturbed_why);
        if (m[i].inferred_bytes <= 0) {
            verdict_worsen(&v, QUALITY_SUSPECT, "no knee of the %s curve matched the CPUID L%d size", s->mode, lv[i]);
        } else if (ppo >= 2) {
            fmt_snprintf(what, sizeof(what), "L%d size (sweep knee vs CPUID)", lv[i]);
            fmt_snprintf(a, sizeof(a), "%s.bytes", name);
            fmt_snprintf(b, sizeof(b), "cpuid/L%d.bytes", lv[i]);
            struct crosscheck xc = {.quantity = what, .a = a, .b = b, .a_value = m[i].inferred_bytes,
                                    .b_value = (double)cb[i], .unit = "bytes", .tolerance = size_tol, .blame = name,
                                    .why = plat_cpuinfo()->feat.hypervisor
                                               ? "CPUID states the size; the knee is where this curve's plateau ends. "
                                                 "Under a hypervisor the host may back large guest pages with 4 KiB "
                                                 "pages: a knee can then be a TLB reach, not a cache size"
                                               : "CPUID states the size; the knee is where this curve's plateau ends"};
            /* entered first so that a disagreement can mark it */
            ledger_add(name, UNIT_NS, &st, v.q);
            agrees = crosscheck_emit(&xc);
            if (agrees == 0)
                verdict_worsen(&v, QUALITY_SUSPECT, "inferred size %.0f bytes vs CPUID %lu outside +-%.0f %%",
                               m[i].inferred_bytes, (unsigned long)cb[i], 100 * size_tol);
        }
        struct json *j = plat_rec_begin("cache_inferred");
        json_kv_uint(j, "level", (uint64_t)lv[i]);
        if (m[i].inferred_bytes > 0)
            json_kv_uint(j, "bytes", (uint64_t)m[i].inferred_bytes);
        else
            json_kv_null(j, "bytes");
        json_kv_uint(j, "cpuid_bytes", cb[i]);
        figure_json(j, name, m[i].inferred_bytes > 0 ? &st : NULL, UNIT_NS, &v); /* the plateau's latency */
        /* in cycles as its latency_plateau: the plateau's points' own conversions (their replicates' ratios),
         * else the benchmark's ratio (one measurement before the benchmark, which a busy moment reads low) */
        double cyc = 0;
        const char *cyc_method = method;
        for (size_t k = 0; m[i].inferred_bytes > 0 && k < used; k++)
            if (levels[k].bytes == m[i].inferred_bytes)
                cyc = plateau_cycles(s, (uint64_t)levels[k].from, (uint64_t)levels[k].to);
        if (cyc > 0) {
            cyc_method = LAT_CYCLES_PLATEAU;
            if (s->cycles_u)
                clock_chain_converted(name);
        }
        else
            cyc = m[i].latency * tsc_per_ns * ratio;
        if (m[i].inferred_bytes > 0) {
            stats_json_also(j, UNIT_CYCLES, cyc);
            json_kv_double(j, "ratio", m[i].ratio);
        } else {
            json_kv_null(j, UNIT_CYCLES);
        }
        if (agrees < 0)
            json_kv_null(j, "agrees");
        else
            json_kv_bool(j, "agrees", agrees == 1);
        json_kv_double(j, "size_tolerance", size_tol);
        json_kv_uint(j, "points_per_octave", ppo);
        json_key(j, "series");
        json_obj_begin(j);
        json_kv_str(j, "mode", s->mode);
        json_kv_uint(j, "page_bytes", s->page_bytes);
        json_obj_end(j);
        json_kv_bool(j, "reference_series", true);
        json_kv_int(j, "plateaus", nl);
        json_kv_str(j, "cycles_method", cyc_method);
        plat_rec_end();
        lat_bytes_text(cb[i], b1, sizeof(b1));
        if (m[i].inferred_bytes > 0)
            plat_printf("  L%d  CPUID %-9s inferred %-9s %8.2f ns %7.1f cycles  %s\n", lv[i], b1,
                        lat_bytes_text((uint64_t)m[i].inferred_bytes, b2, sizeof(b2)), m[i].latency, cyc,
                        agrees < 0 ? "(size not judged below 2 points per octave)"
                        : agrees  ? "size agrees"
                                  : "size DISAGREES: suspect");
        else
            plat_printf("  L%d  CPUID %-9s no knee matched: suspect\n", lv[i], b1);
    }
    /* Every plateau of the curve as a figure of its own (the cache_inferred records above are the ones
     * matched to a CPUID level; a curve may have more, e.g. a slower part of a large L3, or the memory). */
    for (size_t k = 0; k < used; k++) {
        char name[LEDGER_NAME_MAX];
        fmt_snprintf(name, sizeof(name), "latency_plateau/%s/%lu/%lu", s->mode, (unsigned long)s->page_bytes,
                     (unsigned long)k);
        struct verdict v;
        struct stats st;
        plateau_figure(s, (uint64_t)levels[k].from, (uint64_t)levels[k].to, levels[k].latency, &st, &v);
        if (disturbed)
            verdict_worsen(&v, QUALITY_SUSPECT, "the reference series was disturbed: %s", disturbed_why);
        struct json *j = plat_rec_begin("latency_plateau");
        json_kv_uint(j, "index", k);
        json_kv_uint(j, "bytes_from", (uint64_t)levels[k].from);
        json_kv_uint(j, "bytes_to", (uint64_t)levels[k].to);
        json_kv_bool(j, "last", levels[k].bytes == 0);
        figure_json(j, name, &st, UNIT_NS, &v);
        /* in cycles: the plateau's points' own conversions (their time's core/TSC ratio), else the benchmark's */
        double cyc = plateau_cycles(s, (uint64_t)levels[k].from, (uint64_t)levels[k].to);
        stats_json_also(j, UNIT_CYCLES, cyc > 0 ? cyc : levels[k].latency * tsc_per_ns * ratio);
        json_key(j, "series");
        json_obj_begin(j);
        json_kv_str(j, "mode", s->mode);
        json_kv_uint(j, "page_bytes", s->page_bytes);
        json_obj_end(j);
        json_kv_bool(j, "reference_series", true);
        json_kv_str(j, "method", "median latency of the flat run of sweep points; it spans from the run's first "
                                 "size to the knee (docs/measurement.md)");
        plat_rec_end();
        if (cyc > 0 && s->cycles_u) {
            clock_chain_converted(name);
            if (k == 0 && s->n && (uint64_t)levels[k].from == s->bytes[0])
                l1_keep(s, (uint64_t)levels[k].from, (uint64_t)levels[k].to, name);
        }
        ref.lv[ref.n] = levels[k];
        ref.cycles[ref.n] = cyc;
        fmt_snprintf(ref.name[ref.n], sizeof(ref.name[0]), "%s", name);
        ref.n++;
        plat_printf("  plateau %lu: %s .. %s  %8.2f ns\n", (unsigned long)k,
                    lat_bytes_text((uint64_t)levels[k].from, b1, sizeof(b1)),
                    lat_bytes_text((uint64_t)levels[k].to, b2, sizeof(b2)), levels[k].latency);
    }
    /* The console's one line about the top of the curve: the last plateau found, and where the curve goes
     * past it without flattening again (a ramp above the LLC is not a plateau: its top is the point to read). */
    if (used > 0 && s->n > 0) {
        const struct knee_level *top = &levels[used - 1];
        char from[24], last[24];
        lat_bytes_text((uint64_t)top->from, from, sizeof(from));
        lat_bytes_text((uint64_t)s->bytes[s->n - 1], last, sizeof(last));
        if (s->ns[s->n - 1] > top->latency * KNEE_MIN_STEP)
            plat_printf("  last plateau (from %s): %.2f ns; above it the curve rises without another plateau "
                        "to %.2f ns at %s\n", from, top->latency, s->ns[s->n - 1], last);
        else
            plat_printf("  last plateau (from %s to the largest set, %s: memory or the largest level reached): "
                        "%.2f ns\n", from, last, top->latency);
    }
}

void lat_sweep_infer(const struct lat_sweep_curve *c, size_t n)
{
    l1.n = 0;
    ref.n = 0;
    ref.have = false;
    bool disturbed = false;
    const char *why = NULL;
    size_t best = lat_sweep_pick_reference(c, n, &disturbed, &why);
    /* one record per random series: how it was judged as a reference */
    double fastest = 0, l1[8] = {0};
    for (size_t k = 0; k < n && k < ARRAY_SIZE(l1); k++)
        if (c[k].random && (l1[k] = first_plateau(&c[k])) > 0 && c[k].clock_steady && (!fastest || l1[k] < fastest))
            fastest = l1[k];
    for (size_t k = 0; k < n && k < ARRAY_SIZE(l1); k++) {
        if (!c[k].random)
            continue;
        struct json *j = plat_rec_begin("sweep_reference");
        json_kv_str(j, "mode", c[k].mode);
        json_kv_uint(j, "page_bytes", c[k].page_bytes);
        json_kv_uint(j, "points", c[k].n);
        if (l1[k] > 0)
            json_kv_double(j, "first_plateau_ns", l1[k]);
        else
            json_kv_null(j, "first_plateau_ns");
        if (fastest > 0)
            json_kv_double(j, "fastest_first_plateau_ns", fastest);
        else
            json_kv_null(j, "fastest_first_plateau_ns");
        json_kv_bool(j, "clock_steady", c[k].clock_steady);
        bool slow = fastest > 0 && l1[k] > fastest * (1 + XC_TOL_RATIO);
        json_kv_bool(j, "disturbed", !c[k].clock_steady || slow || !(l1[k] > 0));
        json_kv_double(j, "tolerance", XC_TOL_RATIO);
        json_kv_bool(j, "reference", k == best);
        plat_rec_end();
        if (!c[k].clock_steady || slow) {
            char bt[24];
            plat_printf("  series %s %s: %s: not the reference while a steady series exists\n", c[k].mode,
                        lat_bytes_text(c[k].page_bytes, bt, sizeof(bt)),
                        !c[k].clock_steady ? "core/TSC ratio drifted" : "L1 plateau slower than another series'");
        }
    }
    if (best == SIZE_MAX) {
        plat_printf("Cache levels: no random curve with %d points or more to infer them from\n", KNEE_MIN_POINTS);
        return;
    }
    infer_caches(&c[best], disturbed, why);
}

uint64_t lat_sweep_reference_page(void) { return ref.have && ref.n ? ref.page : 0; }

const char *lat_sweep_dram_plateau(uint64_t bytes, const char **why)
{
    const char *b = lat_sweep_plateau_at(bytes, why);
    if (b && lat_sweep_reference_page() < MiB(2)) {
        *why = "the sweep's reference series ran on 4 KiB pages: above the TLB reach its random chain pays a page "
               "walk per load, a DRAM row's chain (2 MiB units, page by page) does not";
        return NULL;
    }
    if (b || !ref.have || !ref.n)
        return b;
    if (ref.page < MiB(2)) {
        if (bytes > (uint64_t)ref.lv[ref.n - 1].to)
            *why = "the sweep's reference series ran on 4 KiB pages: above the TLB reach its random chain pays a "
                   "page walk per load, a DRAM row's chain (2 MiB units, page by page) does not";
        return NULL;
    }
    /* Above the curve's top: the last plateau holds it when it is flat up to the top (no rise after it). A
     * DRAM access per load does not change with more bytes on pages whose TLB reach covers both sizes. */
    const struct knee_level *last = &ref.lv[ref.n - 1];
    if (bytes > last->to && (uint64_t)last->to == ref.top && ref.top) {
        *why = NULL;
        return ref.name[ref.n - 1];
    }
    return NULL;
}

const char *lat_sweep_plateau_at(uint64_t bytes, const char **why)
{
    static char text[200];
    char b1[24], b2[24], b3[24];
    if (!ref.have || !ref.n) {
        *why = "the sweep found no plateau on its reference series";
        return NULL;
    }
    enum knee_at where;
    size_t after = 0;
    int k = knee_plateau_at(ref.lv, ref.n, (double)bytes, &where, &after);
    if (k >= 0)
        return ref.name[k];
    lat_bytes_text(bytes, b1, sizeof(b1));
    if (where == KNEE_AT_BELOW)
        fmt_snprintf(text, sizeof(text), "the footprint %s lies below the first plateau, which starts at %s", b1,
                     lat_bytes_text((uint64_t)ref.lv[0].from, b2, sizeof(b2)));
    else if (where == KNEE_AT_BETWEEN)
        fmt_snprintf(text, sizeof(text),
                     "the footprint %s lies in the rise between plateau %lu (ends at %s) and plateau %lu (starts at %s)",
                     b1, (unsigned long)after, lat_bytes_text((uint64_t)ref.lv[after].to, b2, sizeof(b2)),
                     (unsigned long)after + 1, lat_bytes_text((uint64_t)ref.lv[after + 1].from, b3, sizeof(b3)));
    else
        fmt_snprintf(text, sizeof(text), "the footprint %s lies above the last plateau, which ends at %s", b1,
                     lat_bytes_text((uint64_t)ref.lv[ref.n - 1].to, b2, sizeof(b2)));
    *why = text;
    return NULL;
}

int lat_sweep_crosscheck(const char *quantity, const char *figure, uint64_t footprint)
{
    const char *why = "the row was not measured";
    const char *b = footprint ? lat_sweep_plateau_at(footprint, &why) : NULL;
    if (b && ref.disturbed)
        return crosscheck_figures(quantity, figure, b, XC_TOL_LATENCY, NULL,
                                  "the sweep's reference series was disturbed (sweep_reference records): its plateau "
                                  "is suspect already");
    if (b)
        return crosscheck_figures(quantity, figure, b, XC_TOL_LATENCY, NULL, NULL);
    struct crosscheck xc = {.quantity = quantity, .a = figure, .b = "latency_plateau (reference series)",
                            .a_value = __builtin_nan(""), .b_value = __builtin_nan(""), .unit = UNIT_NS,
                            .tolerance = XC_TOL_LATENCY, .not_judged = why};
    return crosscheck_emit(&xc);
}

const char *lat_sweep_plateau_cycles(uint64_t bytes, double *cycles)
{
    const char *why;
    const char *b = bytes ? lat_sweep_plateau_at(bytes, &why) : NULL;
    size_t k = 0;
    while (b && k < ref.n && ref.name[k] != b)
        k++;
    if (!b || k == ref.n || !(ref.cycles[k] > 0) || ref.disturbed)
        return NULL;
    *cycles = ref.cycles[k];
    return b;
}

int lat_sweep_crosscheck_cycles(const char *quantity, const char *figure, uint64_t footprint, double row_cycles,
                                const char *third)
{
    double plateau = 0;
    const char *b = lat_sweep_plateau_cycles(footprint, &plateau);
    if (!b || !(row_cycles > 0))
        return lat_sweep_crosscheck(quantity, figure, footprint);
    struct crosscheck xc = {
        .quantity = quantity, .a = figure, .b = b, .a_value = row_cycles, .b_value = plateau,
        .unit = UNIT_CYCLES, .tolerance = XC_TOL_LATENCY, .third = third,
        .why = "a level on the core clock, compared in core cycles: each side converted with the core/TSC ratio "
               "of its own time (a clock that moved between the sweep and the row is not a latency difference)"};
    return third ? crosscheck_defer(&xc) : crosscheck_emit(&xc);
}

void lat_sweep_run(void)
{
    const struct plat_config *cfg = plat_config();
    struct cache_sizes c;
    cache_sizes_from_cpuid(plat_cpuinfo(), &c);

    uint64_t cap = plat_alloc_limit(-1) / 2; /* leave the other half to everything else */
    if (cfg->max_bytes && (cap == 0 || cfg->max_bytes < cap))
        cap = cfg->max_bytes;
    /* Emulated (minimal samples, QEMU TCG): to 2 x the LLC. Emulation has no caches, so the points past it show
     * no memory plateau while their chains were most of the benchmark's time (1.4-2.1 s against 0.6-0.8 s with
     * this top); the records and cross-checks keep every structure (docs/latency.md "Sweep"). */
    uint64_t top = cfg->minimal && !cfg->sweep_top ? lat_sweep_top_minimal(c.llc, cap)
                                                   : lat_sweep_top_want(c.llc, cap, cfg->sweep_top);
    size_t n_grid = lat_sweep_grid(LAT_SWEEP_LO, top, cfg->quick ? LAT_SWEEP_PPO_QUICK : LAT_SWEEP_PPO_FULL, c.llc,
                                   64, grid, LAT_MAX_POINTS);

    size_t ns = 0;
    S[ns++] = (struct series){.mode = CHAIN_RANDOM, .mode_name = "random", .page_req = KiB(4)};
    S[ns++] = (struct series){.mode = CHAIN_RANDOM, .mode_name = "random", .page_req = MiB(2)};
    if (plat_page_ok(GiB(1)))
        S[ns++] = (struct series){.mode = CHAIN_RANDOM, .mode_name = "random", .page_req = GiB(1)};
    if (!cfg->quick)
        S[ns++] = (struct series){.mode = CHAIN_PAGE, .mode_name = "page", .page_req = KiB(4)};

    char b[24], b2[24];
    plat_printf("Sweep: %zu sizes from %s to %s (%u per octave, 1 past %dx the LLC), %zu series; LLC by CPUID %s%s\n",
                n_grid, lat_bytes_text(LAT_SWEEP_LO, b, sizeof(b)), lat_bytes_text(top, b2, sizeof(b2)),
                cfg->quick ? LAT_SWEEP_PPO_QUICK : LAT_SWEEP_PPO_FULL, LAT_SWEEP_DENSE_LLC, ns,
                c.llc ? "known" : "unknown", cfg->sweep_top ? " (top from sweep_top)" : "");
    struct lat_scratch scratch = {0};
    between_done = 0;
    between_total = ns * MIN(lat_replicates(), (size_t)MEAS_REPLICATES_FULL);
    /* Run order (S[] keeps the table's order and each series' seed): largest pages first. A 2 MiB page comes
     * only from a free 2 MiB block, a buffer of 4 KiB pages first from the smaller free blocks. Where a kernel
     * hands free 2 MiB blocks back to its hypervisor (a Linux guest's free page reporting, after about 2 s),
     * each 4 KiB of such a block is backed again at first touch: on the 2-vCPU KVM test box a 2 GiB THP buffer
     * took 3-5 s from blocks free for long, 0.3 s from blocks another buffer had just freed. What a 4 KiB series
     * frees is of no use to a large-page series; a 4 KiB series run after one takes the blocks it just gave back
     * (docs/measurement.md, "Where a large page comes from, and the series' order"). */
    size_t order[MAX_SERIES];
    uint64_t reqs[MAX_SERIES];
    for (size_t k = 0; k < ns; k++)
        reqs[k] = S[k].page_req;
    lat_sweep_order(reqs, ns, order);
    for (size_t k = 0; k < ns; k++)
        run_series(&S[order[k]], order[k], n_grid, top, c.llc, &scratch);
    lat_scratch_free(&scratch);
    between = NULL;

    const char *method;
    clock_core_ratio(&method);
    print_table(ns, method);

    /* Knees from the random curve with the largest page whose clock and L1 plateau were steady. */
    static struct lat_sweep_curve curves[MAX_SERIES];
    size_t nc = 0;
    for (size_t k = 0; k < ns; k++) {
        if (!S[k].ok)
            continue;
        curves[nc++] = (struct lat_sweep_curve){.mode = S[k].mode_name, .random = S[k].mode == CHAIN_RANDOM,
                                                .page_bytes = S[k].page_bytes, .n = S[k].n, .bytes = S[k].bytes,
                                                .ns = S[k].ns, .cycles = S[k].cycles, .cycles_u = S[k].chains ? S[k].cu : NULL,
                                                .q = S[k].q, .clock_steady = !drifted(S[k].ratio0, S[k].ratio1)};
    }
    lat_sweep_infer(curves, nc);
}
