/* lat_sweep.c - the size sweep: one chain per working set, per page size, then knee detection against CPUID. */
#include "bench/lat_sweep.h"
#include "measure/verdict.h"
#include "bench/crosscheck.h"
#include "kernel/fmt.h"
#include "measure/stats_json.h"
#include "measure/knee.h"
#include "measure/engine.h"
#include "bench/lat_common.h"
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
    enum quality q[LAT_MAX_POINTS]; /* each point's verdict: a plateau's is the worst of its points' */
    double seconds;
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
    json_kv_double(j, "seconds", s->seconds);
    plat_rec_end();
}

static void run_series(struct series *s, size_t idx, size_t n_grid, uint64_t top, struct lat_scratch *scratch)
{
    const struct plat_config *cfg = plat_config();
    struct plat_cpu self = {0}; /* the chase runs here, on the benchmark's own CPU */
    plat_cpu(0, &self);
    struct plat_buf buf;
    uint64_t t0 = timing_rdtsc();
    s->n = 0;
    if (plat_alloc(&buf, top, s->page_req, -1, "latency sweep") != 0) {
        s->ok = false;
        s->reason = s->page_req == KiB(4)   ? "no memory for the sweep buffer"
                    : s->page_req == MiB(2) ? "no 2 MiB-aligned memory for the sweep buffer"
                                            : "no free 1 GiB-aligned gigabyte(s) for the sweep buffer";
        emit_series(s, top);
        return;
    }
    s->ok = true;
    s->page_bytes = buf.page_bytes;
    s->page_how = buf.page_how;
    /* Replicates interleaved in time: R passes over the whole grid, each point a fresh permutation in every
     * pass, so that a point's replicates are a whole pass apart, not back to back. */
    size_t reps = meas_replicates(cfg->quick);
    static struct meas_result rep[LAT_MAX_POINTS][MEAS_REPLICATES_FULL];
    static size_t got[LAT_MAX_POINTS], lines[LAT_MAX_POINTS];
    static double ratio[LAT_MAX_POINTS];
    static const char *method[LAT_MAX_POINTS];
    reps = MIN(reps, (size_t)MEAS_REPLICATES_FULL);
    for (size_t i = 0; i < n_grid && i < LAT_MAX_POINTS; i++)
        got[i] = lines[i] = 0;
    for (size_t k = 0; k < reps; k++) {
        uint64_t last = 0;
        for (size_t i = 0; i < n_grid && i < LAT_MAX_POINTS; i++) {
            struct chain_params p = {
                .bytes = (size_t)grid[i],
                .line = 64,
                .page = KiB(4),
                .mode = s->mode,
                .seed = lat_rep_seed(point_seed(cfg->seed, idx, i), k),
            };
            if (s->mode == CHAIN_PAGE) {
                p.bytes = (size_t)ALIGN_DOWN(grid[i], KiB(4));
                if (p.bytes == 0 || p.bytes == last)
                    continue;
            }
            size_t n = 0;
            void *start = lat_chain(buf.ptr, &p, scratch, &n);
            struct lat_reps one = {.n = 1, .of = reps}; /* this pass's replicate, its share of the budget */
            struct lat_result r;
            if (!start || lat_chase(start, n, true, &one, &r) != CHASE_OK)
                continue;
            rep[i][got[i]] = lat_result_rep(&r);
            ratio[i] = r.ratio;
            method[i] = r.cycles_method;
            last = p.bytes;
            lines[i] = n;
            got[i]++;
        }
    }
    for (size_t i = 0; i < n_grid && i < LAT_MAX_POINTS; i++) {
        if (!got[i])
            continue;
        struct lat_result r;
        lat_result_combine(rep[i], got[i], ratio[i], method[i], &r);
        size_t n = lines[i];
        uint64_t ws = (uint64_t)n * 64;
        struct json *j = plat_rec_begin("latency_sweep");
        json_kv_uint(j, "bytes", ws);
        json_kv_uint(j, "page_bytes", s->page_bytes);
        json_kv_str(j, "page_how", s->page_how);
        json_kv_str(j, "mode", s->mode_name);
        json_kv_uint(j, "lines", n);
        json_kv_uint(j, "line_bytes", 64);
        char name[LEDGER_NAME_MAX];
        fmt_snprintf(name, sizeof(name), "latency_sweep/%s/%lu/%lu", s->mode_name, (unsigned long)s->page_bytes,
                     (unsigned long)ws);
        lat_result_json(j, name, &r);
        json_kv_uint(j, "cpu", self.id);
        plat_rec_end();
        if (s->n < LAT_MAX_POINTS) {
            s->bytes[s->n] = ws;
            s->ns[s->n] = r.ns;
            s->cycles[s->n] = r.cycles;
            s->cv[s->n] = r.tsc.spread;
            s->q[s->n] = r.v.q;
            s->n++;
        }
    }
    plat_free(&buf);
    s->seconds = lat_tsc_to_ns((double)(timing_rdtsc() - t0)) * 1e-9;
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

/* The plateaus of the reference series (random chase on the largest pages: no TLB misses, as the guide's
 * Table 2 assumes), smallest first, for the Table 2 cross-checks: plateau k holds the sizes above the knee of
 * plateau k-1 up to its own knee (the last one: everything above). */
#define MAX_PLATEAUS 16
static struct {
    uint64_t to; /* knee bytes; 0 for the last plateau */
    char name[LEDGER_NAME_MAX];
} ref_plateau[MAX_PLATEAUS];
static size_t ref_n;
static uint64_t ref_page;

/* The random series on the largest pages measured so far becomes the reference (series run smallest pages
 * first; one whose large pages could not be had keeps the previous one). */
static bool is_reference_series(const struct series *s)
{
    if (s->mode != CHAIN_RANDOM || s->page_bytes < ref_page)
        return false;
    ref_page = s->page_bytes;
    ref_n = 0;
    return true;
}

/* A plateau's figure from the sweep points it spans, sizes in (from, to] (to 0: everything above): n the
 * points, median the plateau's latency, the interval the distribution-free one of the points' medians
 * (stats_median_ci_ranks; widened to hold the latency), and the worst verdict of the points. */
static void plateau_figure(const struct series *s, uint64_t from, uint64_t to, double latency, const char *what,
                           struct stats *st, struct verdict *v)
{
    double med[LAT_MAX_POINTS];
    enum quality q[LAT_MAX_POINTS];
    size_t n = 0;
    for (size_t i = 0; i < s->n; i++)
        if (s->bytes[i] > from && (!to || s->bytes[i] <= to)) {
            med[n] = s->ns[i];
            q[n++] = s->q[i];
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
    verdict_derived(v, q, n, what);
}

/* cache_inferred records from the curve of one series, matched against the CPUID data/unified caches. */
static void infer_caches(const struct series *s)
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
    struct knee_level levels[16];
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
    bool ref = is_reference_series(s);
    char b1[24], b2[24];
    lat_bytes_text(s->page_bytes, b1, sizeof(b1));
    plat_printf("Cache levels inferred from the %s curve with %s pages (%d plateau(s) found):\n", s->mode_name, b1, nl);
    for (size_t i = 0; i < nc; i++) {
        char name[LEDGER_NAME_MAX], what[64], a[LEDGER_NAME_MAX + 8], b[32];
        fmt_snprintf(name, sizeof(name), "cache_inferred/%s/%lu/L%d", s->mode_name, (unsigned long)s->page_bytes, lv[i]);
        struct verdict v;
        struct stats st;
        uint64_t from = 0; /* the matched level's sizes: above the knee before it */
        for (size_t k = 0; k < used; k++)
            if (levels[k].bytes == m[i].inferred_bytes && k)
                from = (uint64_t)levels[k - 1].bytes;
        plateau_figure(s, from, m[i].inferred_bytes > 0 ? (uint64_t)m[i].inferred_bytes : 0, m[i].latency,
                       "the plateau", &st, &v);
        int agrees = -1;
        if (m[i].inferred_bytes <= 0) {
            verdict_worsen(&v, QUALITY_SUSPECT, "no knee of the %s curve matched the CPUID L%d size", s->mode_name, lv[i]);
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
        if (m[i].inferred_bytes > 0) {
            stats_json_also(j, UNIT_CYCLES, m[i].latency * tsc_per_ns * ratio);
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
        json_kv_str(j, "mode", s->mode_name);
        json_kv_uint(j, "page_bytes", s->page_bytes);
        json_obj_end(j);
        json_kv_bool(j, "reference_series", ref);
        json_kv_int(j, "plateaus", nl);
        json_kv_str(j, "cycles_method", method);
        plat_rec_end();
        lat_bytes_text(cb[i], b1, sizeof(b1));
        if (m[i].inferred_bytes > 0)
            plat_printf("  L%d  CPUID %-9s inferred %-9s %8.2f ns %7.1f cycles  %s\n", lv[i], b1,
                        lat_bytes_text((uint64_t)m[i].inferred_bytes, b2, sizeof(b2)), m[i].latency,
                        m[i].latency * tsc_per_ns * ratio,
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
        fmt_snprintf(name, sizeof(name), "latency_plateau/%s/%lu/%lu", s->mode_name, (unsigned long)s->page_bytes,
                     (unsigned long)k);
        struct verdict v;
        struct stats st;
        plateau_figure(s, k ? (uint64_t)levels[k - 1].bytes : 0, (uint64_t)levels[k].bytes, levels[k].latency,
                       "the plateau", &st, &v);
        struct json *j = plat_rec_begin("latency_plateau");
        json_kv_uint(j, "index", k);
        json_kv_uint(j, "bytes_from", k ? (uint64_t)levels[k - 1].bytes : 0);
        if (levels[k].bytes > 0)
            json_kv_uint(j, "bytes_to", (uint64_t)levels[k].bytes);
        else
            json_kv_null(j, "bytes_to");
        figure_json(j, name, &st, UNIT_NS, &v);
        stats_json_also(j, UNIT_CYCLES, levels[k].latency * tsc_per_ns * ratio);
        json_key(j, "series");
        json_obj_begin(j);
        json_kv_str(j, "mode", s->mode_name);
        json_kv_uint(j, "page_bytes", s->page_bytes);
        json_obj_end(j);
        json_kv_bool(j, "reference_series", ref);
        json_kv_str(j, "method", "median latency of the flat run of sweep points ending at the knee "
                                 "(docs/measurement.md)");
        plat_rec_end();
        if (ref && ref_n < MAX_PLATEAUS) {
            ref_plateau[ref_n].to = (uint64_t)levels[k].bytes;
            fmt_snprintf(ref_plateau[ref_n].name, sizeof(ref_plateau[0].name), "%s", name);
            ref_n++;
        }
        if (levels[k].bytes == 0)
            plat_printf("  last plateau (memory or the largest level reached): %.2f ns\n", levels[k].latency);
    }
}

uint64_t lat_sweep_reference_page(void) { return ref_n ? ref_page : 0; }

const char *lat_sweep_dram_plateau(uint64_t bytes)
{
    const char *why;
    return lat_sweep_reference_page() >= MiB(2) ? lat_sweep_plateau_at(bytes, &why) : NULL;
}

const char *lat_sweep_plateau_at(uint64_t bytes, const char **why)
{
    if (!ref_n) {
        *why = "the sweep found no plateau on its reference series";
        return NULL;
    }
    for (size_t k = 0; k < ref_n; k++)
        if (!ref_plateau[k].to || bytes <= ref_plateau[k].to)
            return ref_plateau[k].name;
    *why = "the footprint lies above the last knee of a curve without a memory plateau";
    return NULL;
}


void lat_sweep_run(void)
{
    const struct plat_config *cfg = plat_config();
    struct cache_sizes c;
    cache_sizes_from_cpuid(plat_cpuinfo(), &c);

    uint64_t cap = plat_alloc_limit(-1) / 2; /* leave the other half to everything else */
    if (cfg->max_bytes && (cap == 0 || cfg->max_bytes < cap))
        cap = cfg->max_bytes;
    uint64_t top = lat_sweep_top(c.llc, cap);
    size_t n_grid =
        lat_size_grid(LAT_SWEEP_LO, top, cfg->quick ? LAT_SWEEP_PPO_QUICK : LAT_SWEEP_PPO_FULL, 64, grid, LAT_MAX_POINTS);

    size_t ns = 0;
    S[ns++] = (struct series){.mode = CHAIN_RANDOM, .mode_name = "random", .page_req = KiB(4)};
    S[ns++] = (struct series){.mode = CHAIN_RANDOM, .mode_name = "random", .page_req = MiB(2)};
    if (plat_page_ok(GiB(1)))
        S[ns++] = (struct series){.mode = CHAIN_RANDOM, .mode_name = "random", .page_req = GiB(1)};
    if (!cfg->quick)
        S[ns++] = (struct series){.mode = CHAIN_PAGE, .mode_name = "page", .page_req = KiB(4)};

    char b[24], b2[24];
    plat_printf("Sweep: %zu sizes from %s to %s (%u per octave), %zu series; LLC by CPUID %s\n", n_grid,
                lat_bytes_text(LAT_SWEEP_LO, b, sizeof(b)), lat_bytes_text(top, b2, sizeof(b2)),
                cfg->quick ? LAT_SWEEP_PPO_QUICK : LAT_SWEEP_PPO_FULL, ns, c.llc ? "known" : "unknown");
    struct lat_scratch scratch = {0};
    for (size_t k = 0; k < ns; k++)
        run_series(&S[k], k, n_grid, top, &scratch);
    lat_scratch_free(&scratch);

    const char *method;
    clock_core_ratio(&method);
    print_table(ns, method);

    /* Knees from the random curve with the largest page that worked: the fewest TLB steps. */
    const struct series *best = NULL;
    for (size_t k = 0; k < ns; k++)
        if (S[k].ok && S[k].mode == CHAIN_RANDOM && S[k].n >= KNEE_MIN_POINTS &&
            (!best || S[k].page_bytes > best->page_bytes))
            best = &S[k];
    if (best)
        infer_caches(best);
    else
        plat_printf("Cache levels: no curve with %d points or more to infer them from\n", KNEE_MIN_POINTS);
}
