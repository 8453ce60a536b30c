/* bandwidth.c - streaming bandwidth: the working-set sweep on one core, scaling over cores and sockets, the
 * NUMA node-pair matrix, the uncore DRAM cross-check and the SMBIOS theoretical peak. */
#include "bench/bandwidth.h"
#include "bench/bw_kernels.h"
#include "bench/bw_smbios.h"
#include "bench/cache_sizes.h"
#include "bench/clock.h"
#include "bench/lat_plan.h"
#include "measure/engine.h"
#include "measure/stats_json.h"
#include "measure/verdict.h"
#include "bench/cycle_accounting.h"
#include "bench/timed_loop.h"
#include "measure/stats.h"
#include "measure/timing.h"
#include "kernel/fmt.h"
#include "pmu/pmu_bench_api.h"

#define BW_MAX_CPUS 256
#define BW_MAX_SIZES 64
#define BW_MAX_UNCORE 64 /* memory-level sweep points that keep an uncore count */
#define BW_STAGGER 1088u /* 17 lines: array i starts i x 1088 bytes into its page, so a[i], b[i], c[i] never
                            share address bits 11:0 (no 4K aliasing, no same-set pile-up) */

/* ---- pure helpers ---------------------------------------------------------------------------------------- */

size_t bw_sweep_sizes(uint64_t lo, uint64_t hi, unsigned per_octave, uint64_t *out, size_t cap)
{
    static const double f1[] = {1.0}, f2[] = {1.0, 1.5}, f4[] = {1.0, 1.25, 1.5, 1.75};
    const double *f = per_octave == 4 ? f4 : per_octave == 2 ? f2 : f1;
    size_t nf = per_octave == 4 ? 4 : per_octave == 2 ? 2 : 1;
    size_t n = 0;
    uint64_t last = 0;
    lo = MAX(lo, KiB(4));
    hi = ALIGN_DOWN(hi, KiB(4));
    if (hi < lo || !cap)
        return 0;
    uint64_t p = KiB(4);
    while (p * 2 <= lo)
        p *= 2;
    for (; p <= hi && n < cap; p *= 2) {
        for (size_t i = 0; i < nf && n < cap; i++) {
            uint64_t v = ALIGN_DOWN((uint64_t)((double)p * f[i]), KiB(4));
            if (v >= lo && v <= hi && v > last)
                out[n++] = last = v;
        }
        if (p > UINT64_MAX / 4)
            break;
    }
    if (last < hi && n < cap)
        out[n++] = hi;
    return n;
}

size_t bw_order_cpus(const struct plat_cpu *cpus, size_t n, size_t first, bool package_only, uint32_t *out)
{
    if (!n || first >= n || n > BW_MAX_CPUS)
        return 0;
    bool used[BW_MAX_CPUS] = {false};
    size_t m = 0;
    out[m++] = (uint32_t)first;
    used[first] = true;
    uint32_t pkg0 = cpus[first].package;
    /* A core is taken once one of its threads is. */
#define CORE_TAKEN(i)                                                                                           \
    ({                                                                                                          \
        bool t_ = false;                                                                                        \
        for (size_t q_ = 0; q_ < m; q_++)                                                                       \
            if (cpus[out[q_]].package == cpus[i].package && cpus[out[q_]].core == cpus[i].core)                 \
                t_ = true;                                                                                      \
        t_;                                                                                                     \
    })
    if (package_only) {
        for (size_t i = 0; i < n; i++)
            if (!used[i] && cpus[i].package == pkg0 && !CORE_TAKEN(i))
                used[i] = true, out[m++] = (uint32_t)i;
    } else {
        /* Packages in order of first appearance, starting with the benchmark CPU's. */
        uint32_t pk[BW_MAX_CPUS];
        size_t npk = 0;
        pk[npk++] = pkg0;
        for (size_t i = 0; i < n; i++) {
            bool seen = false;
            for (size_t q = 0; q < npk; q++)
                seen |= pk[q] == cpus[i].package;
            if (!seen)
                pk[npk++] = cpus[i].package;
        }
        /* Round robin: the next untaken core of each package in turn, starting after the first CPU's package. */
        for (bool progress = true; progress;) {
            progress = false;
            for (size_t q = 0; q < npk; q++) {
                size_t p = (q + 1) % npk;
                for (size_t i = 0; i < n; i++)
                    if (!used[i] && cpus[i].package == pk[p] && !CORE_TAKEN(i)) {
                        used[i] = true, out[m++] = (uint32_t)i;
                        progress = true;
                        break;
                    }
            }
        }
    }
    /* Then the SMT siblings of the cores already taken. */
    for (size_t i = 0; i < n; i++)
        if (!used[i] && (!package_only || cpus[i].package == pkg0))
            used[i] = true, out[m++] = (uint32_t)i;
#undef CORE_TAKEN
    return m;
}

size_t bw_thread_counts(size_t n, bool all, uint32_t *out, size_t cap)
{
    size_t m = 0;
    for (size_t t = 1; t <= n && m < cap; t = all ? t + 1 : t * 2)
        out[m++] = (uint32_t)t;
    if (m && out[m - 1] != n && m < cap && n)
        out[m++] = (uint32_t)n;
    return m;
}

uint64_t bw_ws_covering(uint64_t bytes)
{
    /* A kernel of m arrays gives each ALIGN_DOWN(ws / m, BW_GRANULE) bytes (arrays_for): look for the first
     * 4 KiB multiple where that still adds up to `bytes` for m = 1, 2 and 3. At most 3 x BW_GRANULE above. */
    uint64_t ws = ALIGN_UP(MAX(bytes, KiB(4)), KiB(4));
    for (;;) {
        bool ok = true;
        for (uint64_t m = 1; m <= 3; m++)
            ok &= m * ALIGN_DOWN(ws / m, BW_GRANULE) >= bytes;
        if (ok)
            return ws;
        ws += KiB(4);
    }
}

uint64_t bw_dram_ws_per_thread(uint64_t total, size_t t, uint64_t floor)
{
    uint64_t share = t ? (total + t - 1) / t : total;
    return MAX(bw_ws_covering(share), ALIGN_UP(floor, KiB(4)));
}

size_t bw_llc_min_threads(const uint32_t *apic_ids, size_t n, uint32_t shared_by)
{
    size_t best = n;
    for (size_t i = 0; i < n; i++) {
        size_t c = 0;
        for (size_t j = 0; j < n; j++)
            c += lat_shares_cache(apic_ids[i], apic_ids[j], shared_by);
        best = MIN(best, c);
    }
    return best;
}

const char *bw_level(uint64_t ws, uint64_t l1, uint64_t l2, uint64_t llc)
{
    if (ws <= l1)
        return "L1";
    if (ws <= l2)
        return "L2";
    if (ws <= llc)
        return "L3";
    if (ws < BW_MEMORY_LLC_FACTOR * llc)
        return BW_LEVEL_LLC_TO_MEMORY;
    return BW_LEVEL_MEMORY;
}

bool bw_sweep_measures(enum bw_kernel k, const char *level)
{
    if (k != BW_COPY_NT && k != BW_TRIAD_NT)
        return (unsigned)k < BW_KERNEL_COUNT;
    return level && !strcmp(level, BW_LEVEL_MEMORY);
}

void bw_best_offer(struct bw_best *b, const char *level, double bytes_per_s, const char *series, const char *kernel,
                   size_t threads, size_t packages)
{
    if (strcmp(level, BW_LEVEL_MEMORY) || !(bytes_per_s > b->bytes_per_s))
        return;
    *b = (struct bw_best){.bytes_per_s = bytes_per_s, .series = series, .kernel = kernel, .threads = threads,
                          .packages = packages};
}

double bw_aggregate(const uint64_t *bytes, const uint64_t *ticks, size_t n, uint64_t tsc_hz)
{
    double sum = 0;
    uint64_t slowest = 0;
    for (size_t i = 0; i < n; i++) {
        if (!ticks[i])
            return 0;
        sum += (double)bytes[i];
        slowest = MAX(slowest, ticks[i]);
    }
    return slowest ? sum * (double)tsc_hz / (double)slowest : 0;
}

/* ---- state ------------------------------------------------------------------------------------------------------ */

static const void *smbios_table;
static size_t smbios_len;
static const char *smbios_source;

void bandwidth_set_smbios(const void *table, size_t len, const char *source)
{
    smbios_table = table;
    smbios_len = len;
    smbios_source = source;
}

struct bw_ctx {
    bool quick;
    uint64_t l1, l2, llc, hz;
    enum bw_isa isa[2];
    size_t n_isa;
    struct pm_opts po;
    size_t mt_min, mt_max; /* samples of a multi-threaded point */
    uint64_t mt_total;     /* working set that the threads sharing one LLC cover together at memory level */
    uint32_t llc_shared_by; /* logical CPUs sharing one LLC (CPUID); 0: unknown */
    /* Why the run has no memory-level point (largest working set below 4x the LLC); "" when it has. */
    char no_memory[200];
    /* Best memory-level figure of the run, for the peak comparison. */
    struct bw_best best;
    bool multi_package; /* the CPUs span more than one package */
};
static struct bw_ctx C;

/* One thread's buffer: arrays placed one after another, each starting on a new page plus i x BW_STAGGER. */
struct bw_tbuf {
    struct plat_buf b;
    uint64_t ws_max;
};

static uint64_t tbuf_bytes(uint64_t ws_max) { return ws_max + 3 * KiB(8) + 3 * BW_STAGGER; }

static int tbuf_alloc(struct bw_tbuf *t, uint64_t ws_max, int node, const char *why)
{
    t->ws_max = ws_max;
    if (plat_alloc(&t->b, tbuf_bytes(ws_max), PLAT_PAGE_LARGEST, node, why) != 0)
        return -1;
    /* Write every page: on Linux an untouched anonymous page reads as the shared zero page, and a read
     * kernel over it would never leave L1. Minimal mode (emulated, never hosted) leaves the memory as it is:
     * the image's pages are real memory, and the stores cost 0.1-0.15 s per 64 MiB under TCG. */
    if (plat_config()->minimal)
        return 0;
    double *d = t->b.ptr;
    for (uint64_t i = 0; i < t->b.bytes / 8; i++)
        d[i] = 1.0;
    return 0;
}

/* Arrays of kernel k over a working set of ws bytes (all arrays together). -1 when ws is too small. */
static int arrays_for(const struct bw_tbuf *t, enum bw_kernel k, uint64_t ws, struct bw_arrays *x)
{
    unsigned m = bw_kernel_arrays(k), cnt = (m & 1) + ((m >> 1) & 1) + ((m >> 2) & 1);
    if (!cnt || ws > t->ws_max)
        return -1;
    size_t n = bw_elems_for(ws / cnt);
    if (!n)
        return -1;
    uint64_t stride = ALIGN_UP((uint64_t)n * 8, KiB(4)) + KiB(4);
    uint8_t *base = t->b.ptr;
    double **slot[3] = {&x->a, &x->b, &x->c};
    unsigned used = 0;
    *x = (struct bw_arrays){.n = n, .q = 3.0};
    for (unsigned i = 0; i < 3; i++)
        if (m & (1u << i)) {
            *slot[i] = (double *)(base + used * stride + used * BW_STAGGER);
            used++;
        }
    return bw_kernel_check(k, x);
}

/* Replicate k of a point: the same arrays k cache lines further into their buffer (a fresh buffer offset:
 * other sets, other DRAM columns). tbuf_bytes leaves at least 3 x BW_STAGGER beyond the arrays. */
#define BW_REP_SHIFT 64u
_Static_assert((MEAS_REPLICATES_FULL - 1) * BW_REP_SHIFT <= BW_STAGGER, "replicate offsets stay inside the slack");
static void arrays_shift(const struct bw_arrays *base, size_t k, uint64_t page_off, struct bw_arrays *x)
{
    *x = *base;
    /* inside the slack, plus a whole-page offset (bw_rep_page_offset; 0: the same pages) */
    size_t d = k % (BW_STAGGER / BW_REP_SHIFT + 1) * BW_REP_SHIFT / sizeof(double) + page_off / sizeof(double);
    if (x->a)
        x->a += d;
    if (x->b)
        x->b += d;
    if (x->c)
        x->c += d;
}

static const char *size_text(uint64_t b, char *buf, size_t len)
{
    if (b >= GiB(1) && b % GiB(1) == 0)
        fmt_snprintf(buf, len, "%lu GiB", (unsigned long)(b >> 30));
    else if (b >= MiB(1) && b % MiB(1) == 0)
        fmt_snprintf(buf, len, "%lu MiB", (unsigned long)(b >> 20));
    else if (b >= MiB(1))
        fmt_snprintf(buf, len, "%.1f MiB", (double)b / (double)MiB(1));
    else
        fmt_snprintf(buf, len, "%lu KiB", (unsigned long)(b >> 10));
    return buf;
}

/* A table row built piece by piece and printed in one call: a record emitted in between would otherwise
 * cut the text line (the output layer ends a partial line before each record). */
struct bw_line {
    char buf[2048];
    size_t len;
};

static void line_flush(struct bw_line *l)
{
    if (l->len)
        plat_printf("%s\n", l->buf);
    l->len = 0;
    l->buf[0] = 0;
}

__attribute__((format(printf, 2, 3))) static void line_add(struct bw_line *l, const char *fmt, ...)
{
    if (l->len > sizeof(l->buf) - 128) { /* long rows wrap onto an indented continuation line */
        line_flush(l);
        l->len = (size_t)fmt_snprintf(l->buf, sizeof(l->buf), "%14s", "");
    }
    va_list ap;
    va_start(ap, fmt);
    int n = fmt_vsnprintf(l->buf + l->len, sizeof(l->buf) - l->len, fmt, ap);
    va_end(ap);
    if (n > 0)
        l->len = MIN(l->len + (size_t)n, sizeof(l->buf) - 1);
}

/* ---- one measured point ------------------------------------------------------------------------------------------- */

struct bw_point {
    const char *series, *placement;
    enum bw_kernel k;
    enum bw_isa isa;
    uint64_t ws, per_array, ws_total;
    uint64_t llc_ws; /* bytes one LLC sees: ws x the fewest threads sharing one LLC; the level is judged on it */
    size_t threads;
    size_t packages; /* packages the threads ran on */
    int node_from, node_to;
    uint64_t page_bytes;
    double passes;         /* whole passes over the arrays per sample (per thread: a mean), a fraction when a
                              sample streams part of them */
    uint64_t sample_bytes; /* STREAM bytes per sample (all threads; multi-threaded: a mean) */
    struct stats bw; /* bytes/s over the samples */
    bool converged;
    const char *method;
    size_t noff;                        /* multi-threaded points: replicates whose placement is in off[] */
    uint64_t off[MEAS_REPLICATES_FULL]; /* each replicate's page offset in the first thread's buffer */
    size_t moved;                       /* of them, replicates on other pages than replicate 0's */
};

static struct json *rec_point(const struct bw_point *p)
{
    struct json *j = plat_rec_begin("bandwidth");
    json_kv_str(j, "series", p->series);
    json_kv_str(j, "kernel", bw_kernel_name(p->k));
    json_kv_str(j, "isa", bw_isa_name(p->isa));
    json_kv_str(j, "stores", bw_kernel_nt(p->k) ? "non_temporal" : "cached");
    json_kv_uint(j, "bytes", p->ws);
    json_kv_uint(j, "bytes_per_array", p->per_array);
    json_kv_uint(j, "bytes_total", p->ws_total);
    json_kv_uint(j, "threads", p->threads);
    json_kv_int(j, "node_from", p->node_from);
    json_kv_int(j, "node_to", p->node_to);
    json_kv_str(j, "placement", p->placement);
    const char *level = bw_level(p->llc_ws, C.l1, C.l2, C.llc);
    json_kv_str(j, "level", level);
    json_kv_uint(j, "bytes_per_llc", p->llc_ws);
    json_kv_uint(j, "llc_bytes", C.llc);
    char name[LEDGER_NAME_MAX];
    fmt_snprintf(name, sizeof(name), "bandwidth/%s/%s/%s/%lu/%lu/%d-%d", p->series, bw_kernel_name(p->k),
                 bw_isa_name(p->isa), (unsigned long)p->ws, (unsigned long)p->threads, p->node_from, p->node_to);
    struct verdict v;
    verdict_from_stats(&v, &p->bw, p->converged, meas_ci_target(C.quick), meas_min_samples(C.quick));
    figure_json(j, name, &p->bw, UNIT_BYTES_PER_S, &v);
    json_kv_double(j, "passes", p->passes);
    json_kv_uint(j, "sample_bytes", p->sample_bytes);
    json_kv_uint(j, "page_bytes", p->page_bytes);
    json_kv_str(j, "method", p->method);
    if (p->noff) { /* multi-threaded points: where each replicate's arrays sat (the sweep writes its own) */
        json_key(j, "replicate_offsets");
        json_arr_begin(j);
        for (size_t r = 0; r < p->noff; r++)
            json_uint(j, p->off[r]);
        json_arr_end(j);
        json_kv_uint(j, "replicates_on_other_pages", p->moved);
    }
    bw_best_offer(&C.best, level, p->bw.median, p->series, bw_kernel_name(p->k), p->threads, p->packages);
    return j;
}

/* Elements per array in one chunk: 256 KiB per array, a multiple of BW_GRANULE / 8. A sweep sample over
 * larger arrays streams whole chunks, and a thread of a multi-threaded sample checks its stop flag after
 * each; at memory speed a chunk is tens of microseconds. */
#define BW_CHUNK_ELEMS (KiB(256) / 8)

/* x restricted to elements [off, off + m) of every array it uses. */
static void bw_span(const struct bw_arrays *x, size_t off, size_t m, struct bw_arrays *c)
{
    *c = *x;
    c->a = x->a ? x->a + off : NULL;
    c->b = x->b ? x->b + off : NULL;
    c->c = x->c ? x->c + off : NULL;
    c->n = m;
}

/* One unit of a sweep sample: a whole pass over the arrays when they are at most one chunk each, else one
 * chunk continuing where the previous unit stopped (wrapping to the start), so a sample costs the time it is
 * calibrated to whatever the working set, and every byte it streams was last touched one whole traversal
 * ago, as with whole passes. */
struct bw_loop {
    bw_fn fn;
    struct bw_arrays x;
    uint64_t sum, ticks;
    struct bw_arrays base; /* replicate 0's arrays (bw_loop_setup shifts x from here) */
    size_t chunk;          /* elements per array of one unit: x.n (a whole pass) or BW_CHUNK_ELEMS */
    size_t off;            /* chunked: where the next unit starts */
    size_t rep0;           /* the replicate index of the engine's replicate 0 (interleaved replicates) */
    const struct bw_tbuf *t; /* the buffer the arrays live in (sweep): room for other pages per replicate */
    size_t of;             /* the point's replicates: interleaved ones move to other pages (bw_rep_page_offset) */
    bool move;             /* this call's replicate starts with a whole traversal: it may sit on other pages */
    uint64_t page_off;     /* the page offset the current replicate's arrays sit at */
};

/* Replicate k of R of an interleaved sweep point sits at a page-aligned offset of its buffer, spread over the
 * room the arrays leave (lat_rep_offset, as the latency sweep's points; the aligned offsets that fit in turn
 * where there are fewer than R): other pages, so another cache-set and DRAM placement where the host backs the
 * guest's large pages with small ones, which the small shift inside the slack (arrays_shift) cannot give. Points
 * measured whole keep their place: their replicates run back to back on warm arrays (docs/measurement.md
 * "Replicates"). */
static uint64_t bw_rep_page_offset(const struct bw_tbuf *t, const struct bw_arrays *base, size_t k, size_t of)
{
    if (!t || !t->b.ptr || of < 2)
        return 0;
    uintptr_t start = (uintptr_t)t->b.ptr, end = start;
    const double *arr[3] = {base->a, base->b, base->c};
    for (unsigned i = 0; i < 3; i++)
        if (arr[i])
            end = MAX(end, (uintptr_t)(arr[i] + base->n));
    uint64_t extent = (uint64_t)(end - start) + BW_STAGGER; /* the arrays and the small per-replicate shift */
    uint64_t page = t->b.page_bytes ? t->b.page_bytes : KiB(4);
    return lat_rep_offset(t->b.bytes, extent, page, k, of);
}

static size_t bw_unit_elems(size_t n) { return n <= BW_CHUNK_ELEMS ? n : BW_CHUNK_ELEMS; }

/* The shifted arrays cover the same pages and all but a few lines of the previous replicate's: warm. */
static int bw_loop_setup(void *arg, size_t k)
{
    struct bw_loop *l = arg;
    l->page_off = l->move ? bw_rep_page_offset(l->t, &l->base, l->rep0 + k, l->of) : 0;
    arrays_shift(&l->base, l->rep0 + k, l->page_off, &l->x);
    return k ? MEAS_SETUP_WARM : MEAS_SETUP_FRESH;
}

static void bw_loop_fn(void *arg, uint64_t iters)
{
    struct bw_loop *l = arg;
    if (l->chunk >= l->x.n) {
        l->sum += l->fn(&l->x, iters);
        return;
    }
    struct bw_arrays c;
    for (uint64_t u = 0; u < iters; u++)
        for (size_t left = l->chunk; left;) {
            size_t m = MIN(left, l->x.n - l->off);
            bw_span(&l->x, l->off, m, &c);
            l->sum += l->fn(&c, 1);
            left -= m;
            l->off = l->off + m < l->x.n ? l->off + m : 0;
        }
}

static void bw_loop_timed(void *arg)
{
    struct bw_loop *l = arg;
    uint64_t t0 = timing_rdtsc();
    l->sum += l->fn(&l->x, 1);
    l->ticks = timing_rdtsc() - t0;
}

/* DRAM cross-check: UNC_QMC_NORMAL_READS.ANY + UNC_QMC_WRITES.FULL.ANY, x 64 bytes (AMD family 10h/15h:
 * the DRAM accesses of both memory controllers), over one more pass.
 * Counted before the record is opened (the PMU code emits its own records). The uncore counts for the
 * socket whose CPU programs it: the benchmark CPU's, where this sweep's buffer lives; the other sockets
 * are named as not read (per-socket uncore bandwidth is the `pmu` benchmark's, pmu/uncore_bw.h). */
struct bw_uncore {
    bool ok;
    bool amd;      /* AMD DRAM accesses of both controllers instead of the Intel reads/writes pair */
    char why[160];
    const char *rd_ev, *wr_ev; /* AMD: the DCT0 and DCT1 events */
    uint64_t reads, writes;    /* AMD: DCT0 and DCT1 accesses */
    double rd, wr;             /* bytes/s (AMD: both DCTs' accesses, reads and writes together) */
    int node;                  /* the buffer's node */
};

/* [AMD] 4.2.2: "A separate performance counter must be configured for each memory controller": DRAM
 * accesses E0H/07H (DCT0) and E0H/38H (DCT1), on a core counter (family 10h) or a northbridge counter
 * (family 15h, amd_fam15h_nb); bytes = 64 x (DCT0 + DCT1). */
static const char *const bw_ev_dct0[] = {
    CA_ON("amd_fam10h", "DRAM_ACCESSES_PAGE:HIT:MISS:CONFLICT"),
    CA_ON("amd_fam15h", "DRAM_ACCESSES:DCT0_PAGE_HIT:DCT0_PAGE_MISS:DCT0_PAGE_CONFLICT"), NULL};
static const char *const bw_ev_dct1[] = {
    CA_ON("amd_fam10h", "DRAM_ACCESSES_PAGE:DCT1_PAGE_HIT:DCT1_PAGE_MISS:DCT1_PAGE_CONFLICT"),
    CA_ON("amd_fam15h", "DRAM_ACCESSES:DCT1_PAGE_HIT:DCT1_PAGE_MISS:DCT1_PAGE_CONFLICT"), NULL};

static bool amd_dram_listed(void)
{
    const char *t = pmu_count_event_table();
    for (const char *const *c = bw_ev_dct0; *c; c++)
        if (ca_cand_applies(*c, t, NULL))
            return true;
    return false;
}

static void uncore_count(struct bw_loop *l, struct bw_uncore *u, int node)
{
    struct ca_event ev[2] = {{.candidates = ca_ev_unc_reads}, {.candidates = ca_ev_unc_writes}};
    *u = (struct bw_uncore){.node = node};
    if (ca_can_count(NULL) && amd_dram_listed()) {
        ev[0].candidates = bw_ev_dct0;
        ev[1].candidates = bw_ev_dct1;
        u->amd = true;
    }
    int rc = ca_count(ev, 2, bw_loop_timed, l, u->why, sizeof(u->why));
    if (rc != 2 || !ev[0].used || !ev[1].used || !l->ticks) {
        if (rc >= 0)
            fmt_snprintf(u->why, sizeof(u->why), "%s are not countable here",
                         u->amd ? "the DRAM accesses of both memory controllers (E0H/07H, E0H/38H)"
                                : "the Nehalem/Westmere uncore memory-controller events (UNC_QMC_NORMAL_READS, "
                                  "UNC_QMC_WRITES)");
        return;
    }
    double s = (double)l->ticks / (double)C.hz;
    u->ok = true;
    u->rd_ev = ev[0].used;
    u->wr_ev = ev[1].used;
    u->reads = ev[0].count;
    u->writes = ev[1].count;
    u->rd = (double)ev[0].count * 64 / s;
    u->wr = (double)ev[1].count * 64 / s;
}

/* Which socket this cross-check reads (the benchmark CPU's) and every other one, named as not read. */
static void uncore_sockets_json(struct json *j, int node)
{
    struct plat_cpu me, c;
    bool have = plat_cpu(0, &me);
    if (have)
        json_kv_uint(j, "socket", me.package);
    else
        json_kv_null(j, "socket");
    json_kv_int(j, "node", node);
    json_kv_int(j, "cpu", have ? (int64_t)me.id : -1);
    json_key(j, "sockets_not_read");
    json_arr_begin(j);
    uint32_t seen[BW_MAX_CPUS], nseen = 0;
    for (uint32_t i = 0; have && i < plat_cpu_count() && i < BW_MAX_CPUS; i++) {
        if (!plat_cpu(i, &c) || c.package == me.package)
            continue;
        bool dup = false;
        for (uint32_t k = 0; k < nseen; k++)
            dup |= seen[k] == c.package;
        if (dup)
            continue;
        seen[nseen++] = c.package;
        json_obj_begin(j);
        json_kv_uint(j, "socket", c.package);
        json_kv_str(j, "reason", "this sweep streams on the benchmark CPU's node only; per-socket uncore bandwidth "
                                 "is the pmu benchmark's (uncore_bandwidth record)");
        json_obj_end(j);
    }
    json_arr_end(j);
}

static void uncore_json(struct json *j, const struct bw_uncore *u, double timed)
{
    json_key(j, "uncore");
    json_obj_begin(j);
    if (!u->ok) {
        json_kv_str(j, "status", "unavailable");
        json_kv_str(j, "reason", u->why);
        uncore_sockets_json(j, u->node);
        json_obj_end(j);
        return;
    }
    json_kv_str(j, "status", "ok");
    uncore_sockets_json(j, u->node);
    if (u->amd) {
        json_kv_str(j, "dct0_event", u->rd_ev);
        json_kv_str(j, "dct1_event", u->wr_ev);
        json_kv_uint(j, "dct0_accesses", u->reads);
        json_kv_uint(j, "dct1_accesses", u->writes);
        json_kv_double(j, "dram_bytes_per_s", u->rd + u->wr);
        json_kv_double(j, "bytes_per_s", u->rd + u->wr);
        json_kv_double(j, "ratio_to_timed", timed > 0 ? (u->rd + u->wr) / timed : 0);
        json_kv_str(j, "method", "(DCT0 + DCT1 DRAM accesses) x 64 / pass time, reads and writes; this node's "
                                 "memory controllers ([AMD] 4.2.2)");
        json_obj_end(j);
        return;
    }
    json_kv_str(j, "read_event", u->rd_ev);
    json_kv_str(j, "write_event", u->wr_ev);
    json_kv_uint(j, "reads", u->reads);
    json_kv_uint(j, "writes", u->writes);
    json_kv_double(j, "read_bytes_per_s", u->rd);
    json_kv_double(j, "write_bytes_per_s", u->wr);
    json_kv_double(j, "bytes_per_s", u->rd + u->wr);
    json_kv_double(j, "ratio_to_timed", timed > 0 ? (u->rd + u->wr) / timed : 0);
    json_kv_str(j, "method", "(reads + full-line writes) x 64 / pass time; the benchmark CPU's socket, includes "
                             "write-allocate reads (PAG 'Measuring Bandwidth From the Uncore')");
    json_obj_end(j);
}

/* One point of the sweep: a kernel and an ISA over one working set on the benchmark CPU, measured in R
 * replicates. Replicates are interleaved in time where the setup is cheap (docs/measurement.md
 * "Replicates"): the sweep makes R passes over its points, each point one replicate per pass, so that its
 * replicates are a whole pass apart and their interval sees the run; each such replicate starts with a whole
 * traversal of its arrays (the other points evicted them). A point whose traversal costs more than
 * BW_INTERLEAVE_SHARE of its time budget over R - 1 replicates is measured in the first pass alone, its R
 * replicates back to back on warm arrays, as before. */
#define BW_INTERLEAVE_SHARE 4 /* interleaving may add at most budget / 4 of warm-up passes to a point */
struct bw_spt {
    enum bw_kernel k;
    enum bw_isa isa;
    uint64_t ws;      /* requested working set */
    bool ok, whole;   /* measured; all its replicates in the first pass */
    bool skip;        /* not measured at this size (bw_sweep_measures) */
    size_t got;       /* replicates measured */
    uint64_t iters;   /* units per sample (the last replicate's) */
    int unc;          /* index into the uncore results, -1: none */
    uint64_t off[MEAS_REPLICATES_FULL]; /* each interleaved replicate's page offset (bw_rep_page_offset) */
};

/* Replicates [first, first + nrep) of a point of `of`, after a fresh traversal (fresh) or on warm arrays;
 * *r the replicate (nrep 1) or their combination. */
static int sweep_measure(struct bw_loop *l, size_t first, size_t nrep, size_t of, bool fresh, uint64_t iters,
                         struct bw_uncore *u, int node, struct meas_result *r)
{
    uint64_t units_per_pass = (l->x.n + l->chunk - 1) / l->chunk;
    struct pm_opts o = C.po;
    o.warmup_iters = fresh ? units_per_pass : 1; /* one whole traversal: the caches hold what the chunks leave */
    o.first_iters = MAX(iters, (uint64_t)1); /* a later pass: calibration confirms the first pass's length */
    o.fixed = plat_config()->minimal; /* emulated: one pass per sample, nothing to warm or calibrate */
    o.setup = bw_loop_setup;           /* each replicate a fresh buffer offset */
    o.ticks_only = true;               /* bytes/s: no core cycles to count */
    o.replicates = nrep;
    o.budget_tsc = C.po.budget_tsc / MAX(of, (size_t)1) * nrep;
    if (of > nrep) /* one of the figure's replicates measured apart: its share of the minimum (as the engine's) */
        o.min_samples = MAX((C.po.min_samples + of - 1) / of, (size_t)MEAS_MIN_REPLICATE_SAMPLES);
    l->rep0 = first;
    l->off = 0;
    l->of = of;
    l->move = fresh && nrep == 1 && of > 1; /* an interleaved replicate, warmed by its own traversal */
    struct pm_result pr;
    if (pm_measure(bw_loop_fn, l, &o, &pr) != 0)
        return -1;
    *r = (struct meas_result){.st = pr.tsc, .converged = pr.converged, .iters = pr.iters_per_sample};
    if (u)
        uncore_count(l, u, node);
    return 0;
}

static int sweep_loop(struct bw_tbuf *t, const struct bw_spt *pt, struct bw_loop *l)
{
    *l = (struct bw_loop){.fn = bw_kernel_fn(pt->k, pt->isa), .t = t};
    if (!l->fn || arrays_for(t, pt->k, pt->ws, &l->x) != 0)
        return -1;
    l->base = l->x;
    l->chunk = bw_unit_elems(l->x.n);
    return 0;
}

/* The point's record, from its replicates; its median in bytes/s, 0 when it has none. */
static double sweep_emit(const struct bw_tbuf *t, const struct bw_spt *pt, struct meas_result *reps, size_t of,
                         const struct bw_uncore *u, int node_from)
{
    struct bw_loop l;
    if (!pt->ok || sweep_loop((struct bw_tbuf *)t, pt, &l) != 0)
        return 0;
    struct meas_result all = reps[0];
    if (!pt->whole && pt->got > 1)
        meas_combine(reps, pt->got, C.po.target_ci, &all);
    uint64_t bytes = bw_kernel_bytes(pt->k, l.x.n), unit = bw_kernel_bytes(pt->k, l.chunk);
    struct bw_point p = {
        .series = "sweep", .placement = "benchmark CPU", .k = pt->k, .isa = pt->isa, .ws = bytes,
        .per_array = (uint64_t)l.x.n * 8, .ws_total = bytes, .llc_ws = bytes, .threads = 1, .packages = 1,
        .node_from = node_from, .node_to = t->b.node, .page_bytes = t->b.page_bytes,
        .passes = (double)pt->iters * (double)unit / (double)bytes,
        .sample_bytes = pt->iters * unit,
        .method = l.chunk < l.x.n
                      ? "STREAM bytes (each array element read or written counts once, no RFO) per sample / TSC "
                        "time, median of samples; a sample streams 256 KiB chunks of every array, each continuing "
                        "where the previous one stopped, after one whole pass of warm-up"
                      : "STREAM bytes (each array element read or written counts once, no RFO) x passes / TSC time, "
                        "median of samples"};
    stats_reciprocal(&all.st, (double)unit * (double)C.hz, &p.bw); /* ticks per unit -> bytes/s */
    stats_scale_unc(&p.bw, 1, clock_tsc_rel_unc()); /* the TSC rate's own uncertainty (docs/measurement.md) */
    p.converged = all.converged;
    struct json *j = rec_point(&p);
    json_kv_bool(j, "replicates_interleaved", !pt->whole && of > 1);
    json_key(j, "replicate_offsets"); /* bytes past replicate 0's arrays, per interleaved replicate in pass order */
    json_arr_begin(j);
    for (size_t k = 0; k < (pt->whole ? 1 : MIN(pt->got, (size_t)MEAS_REPLICATES_FULL)); k++)
        json_uint(j, pt->off[k]);
    json_arr_end(j);
    if (u)
        uncore_json(j, u, p.bw.median);
    plat_rec_end();
    return p.bw.median;
}

static void sweep(struct bw_tbuf *t, uint64_t dram_ws, int node_from)
{
    uint64_t sizes[BW_MAX_SIZES];
    size_t ns;
    if (C.quick) {
        /* One point per level: inside L1, L2, L3 and well beyond. */
        uint64_t want[] = {C.l1 / 2, MIN(C.l2 / 2, MAX(C.l1 * 4, KiB(64))), MAX(C.l2 * 2, MIN(C.llc / 2, MiB(4))),
                           dram_ws};
        ns = 0;
        for (size_t i = 0; i < ARRAY_SIZE(want); i++) {
            uint64_t v = ALIGN_DOWN(want[i], KiB(4));
            if (v >= KiB(4) && v <= dram_ws && (!ns || v > sizes[ns - 1]))
                sizes[ns++] = v;
        }
    } else {
        ns = bw_sweep_sizes(KiB(8), dram_ws, 2, sizes, BW_MAX_SIZES);
    }
    /* A size of exactly 4x the LLC would be "memory" for `read` but a few hundred bytes short of it for
     * `triad` (arrays cut to BW_GRANULE): such a size is moved up to the first one that is 4x for every
     * kernel (bw_ws_covering), so that the level is one per row. */
    uint64_t mem_min = bw_ws_covering(BW_MEMORY_LLC_FACTOR * C.llc);
    size_t m = 0;
    for (size_t i = 0; i < ns; i++) {
        uint64_t v = sizes[i];
        if (v >= BW_MEMORY_LLC_FACTOR * C.llc && v < mem_min && mem_min <= dram_ws)
            v = mem_min;
        if (!m || v > sizes[m - 1])
            sizes[m++] = v;
    }
    ns = m;
    /* The points, in the order of the tables: ISA, size, kernel. */
    size_t np = C.n_isa * ns * BW_KERNEL_COUNT, of = MAX(C.po.replicates, (size_t)1);
    struct plat_buf store = {0};
    if (plat_alloc(&store, np * (sizeof(struct bw_spt) + of * sizeof(struct meas_result)), PLAT_PAGE_DEFAULT, -1,
                   "bandwidth sweep points") != 0) {
        plat_printf("  bandwidth: no memory for the sweep's %zu points\n", np);
        return;
    }
    struct bw_spt *pts = store.ptr;
    struct meas_result *reps = (struct meas_result *)(pts + np);
    static struct bw_uncore unc[BW_MAX_UNCORE];
    size_t nunc = 0;
    for (size_t i = 0, q = 0; i < C.n_isa; i++)
        for (size_t s = 0; s < ns; s++)
            for (unsigned k = 0; k < BW_KERNEL_COUNT; k++, q++)
                pts[q] = (struct bw_spt){.k = (enum bw_kernel)k, .isa = C.isa[i], .ws = sizes[s], .unc = -1,
                                         .skip = !bw_sweep_measures((enum bw_kernel)k,
                                                                    bw_level(sizes[s], C.l1, C.l2, C.llc))};
    /* Pass 0 measures every point (a whole point: all its replicates); passes 1..R-1 one more replicate of
     * each interleaved point. */
    uint64_t share = C.po.budget_tsc / BW_INTERLEAVE_SHARE;
    for (size_t rep = 0; rep < of; rep++)
        for (size_t q = 0; q < np; q++) {
            struct bw_spt *pt = &pts[q];
            struct bw_loop l;
            if (pt->skip || (rep && (!pt->ok || pt->whole)) || sweep_loop(t, pt, &l) != 0)
                continue;
            struct meas_result *r = &reps[q * of + pt->got];
            if (rep) {
                if (sweep_measure(&l, rep, 1, of, true, pt->iters, NULL, t->b.node, r) == 0) {
                    if (pt->got < MEAS_REPLICATES_FULL)
                        pt->off[pt->got] = l.page_off;
                    pt->got++, pt->iters = r->iters;
                }
                continue;
            }
            /* Pass 0: one whole pass, timed, warms the arrays and says what a fresh replicate would cost. */
            bool fresh = true;
            if (of > 1 && !plat_config()->minimal) {
                bw_loop_timed(&l);
                pt->whole = (of - 1) * l.ticks > share;
                fresh = false;
            }
            bool dram = !strcmp(bw_level(bw_kernel_bytes(pt->k, l.x.n), C.l1, C.l2, C.llc), BW_LEVEL_MEMORY);
            struct bw_uncore *u = dram && nunc < BW_MAX_UNCORE ? &unc[nunc] : NULL;
            if (sweep_measure(&l, 0, pt->whole ? of : 1, of, fresh, 1, u, t->b.node, r) != 0)
                continue;
            pt->ok = true;
            pt->got = 1;
            pt->iters = r->iters;
            if (u)
                pt->unc = (int)nunc++;
        }
    static struct bw_line line;
    struct plat_cpu self = {0}; /* the sweep runs inline, on the benchmark's own CPU */
    plat_cpu(0, &self);
    for (size_t i = 0, q = 0; i < C.n_isa; i++) {
        plat_printf("  sweep on CPU %u, %s, GB/s (STREAM counting; median):\n", self.id, bw_isa_name(C.isa[i]));
        line_add(&line, "    %-11s %-13s", "working set", "level");
        for (unsigned k = 0; k < BW_KERNEL_COUNT; k++)
            line_add(&line, " %9s", bw_kernel_name((enum bw_kernel)k));
        line_flush(&line);
        for (size_t s = 0; s < ns; s++) {
            char txt[24];
            line_add(&line, "    %-11s %-13s", size_text(sizes[s], txt, sizeof(txt)),
                     bw_level(sizes[s], C.l1, C.l2, C.llc));
            for (unsigned k = 0; k < BW_KERNEL_COUNT; k++, q++) {
                if (pts[q].skip) { /* not measured at this level (bw_sweep_measures) */
                    line_add(&line, " %9s", "");
                    continue;
                }
                double v = sweep_emit(t, &pts[q], &reps[q * of], of, pts[q].unc >= 0 ? &unc[pts[q].unc] : NULL,
                                      node_from);
                if (v > 0)
                    line_add(&line, " %9.2f", v / 1e9);
                else
                    line_add(&line, " %9s", "-");
            }
            line_flush(&line);
        }
    }
    plat_free(&store);
}

/* ---- threads ------------------------------------------------------------------------------------------------------------ */

struct bw_job {
    bw_fn fn;
    struct bw_arrays x;
    uint64_t passes, ticks, sum, bytes;
    /* A common window (window != 0): the job streams its arrays in chunks, from where its last sample
     * stopped (off), until mt_stop; `done` counts the STREAM bytes of its whole chunks. The timekeeper raises
     * mt_stop once `window` ticks have passed since its release. */
    uint64_t window, done;
    size_t off;
    bool timekeeper;
};

/* Shortest common window of a multi-threaded sample: release skew and the last chunk stay well under 1 %. */
#define BW_MT_MIN_WINDOW_US 2000

static volatile uint32_t mt_ready, mt_go, mt_stop;
static struct bw_job jobs[BW_MAX_CPUS];
static struct bw_tbuf tbufs[BW_MAX_CPUS];
static struct plat_cpu cpus[BW_MAX_CPUS];
static double mt_samples[PM_MAX_SAMPLES];

static void bw_job_run(void *arg)
{
    struct bw_job *jb = arg;
    __atomic_add_fetch(&mt_ready, 1, __ATOMIC_SEQ_CST);
    while (!__atomic_load_n(&mt_go, __ATOMIC_ACQUIRE))
        timing_pause();
    uint64_t t0 = timing_rdtsc();
    if (!jb->window) {
        jb->sum += jb->fn(&jb->x, jb->passes);
        jb->ticks = timing_rdtsc() - t0;
        return;
    }
    struct bw_arrays c;
    jb->done = 0;
    for (;;) {
        size_t off = jb->off, m = MIN((size_t)BW_CHUNK_ELEMS, jb->x.n - off);
        bw_span(&jb->x, off, m, &c);
        jb->sum += jb->fn(&c, 1);
        jb->done += jb->bytes / jb->x.n * m; /* bytes is 8 x n x arrays */
        jb->off = off + m < jb->x.n ? off + m : 0;
        uint64_t now = timing_rdtsc();
        if (jb->timekeeper && now - t0 >= jb->window)
            __atomic_store_n(&mt_stop, 1, __ATOMIC_RELEASE);
        if (__atomic_load_n(&mt_stop, __ATOMIC_ACQUIRE)) {
            jb->ticks = now - t0;
            return;
        }
    }
}

/* Runs jobs[0..n) together on cpus[ids[i]], released at once; the benchmark CPU (plat_cpu index 0), when
 * listed, runs its job inline. Returns the aggregate bytes/s, or -1 when a CPU could not be used. */
static double mt_run(const uint32_t *ids, size_t n)
{
    static bool started[BW_MAX_CPUS];
    mt_ready = 0;
    mt_go = 0;
    mt_stop = 0;
    size_t n_started = 0, inline_job = n;
    bool fail = false;
    for (size_t i = 0; i < n; i++) {
        jobs[i].ticks = 0;
        started[i] = false;
        if (ids[i] == 0) {
            inline_job = i;
            continue;
        }
        if (!fail && plat_start(cpus[ids[i]].id, bw_job_run, &jobs[i]) != 0)
            fail = true;
        else if (!fail)
            started[i] = true, n_started++;
    }
    uint64_t t0 = timing_rdtsc();
    while (!fail && __atomic_load_n(&mt_ready, __ATOMIC_ACQUIRE) < n_started) {
        if (timing_rdtsc() - t0 > 2 * C.hz) { /* 2 s: an AP that never picked up its job */
            fail = true;
            break;
        }
        timing_pause();
    }
    /* Released even on failure, so that every job that did start can finish. */
    bool windowed = n && jobs[0].window;
    for (size_t i = 0; i < n; i++)
        jobs[i].timekeeper = i == inline_job;
    if (fail)
        __atomic_store_n(&mt_stop, 1, __ATOMIC_RELEASE);
    __atomic_store_n(&mt_go, 1, __ATOMIC_RELEASE);
    if (inline_job < n && !fail) {
        bw_job_run(&jobs[inline_job]);
    } else if (windowed && !fail) { /* the benchmark CPU keeps time without a job of its own */
        uint64_t t1 = timing_rdtsc();
        while (timing_rdtsc() - t1 < jobs[0].window)
            timing_pause();
        __atomic_store_n(&mt_stop, 1, __ATOMIC_RELEASE);
    }
    for (size_t i = 0; i < n; i++)
        if (started[i] && plat_wait(cpus[ids[i]].id) != 0)
            fail = true;
    if (fail)
        return -1;
    uint64_t bytes[BW_MAX_CPUS], ticks[BW_MAX_CPUS];
    for (size_t i = 0; i < n; i++) {
        bytes[i] = jobs[i].window ? jobs[i].done : jobs[i].bytes * jobs[i].passes;
        ticks[i] = jobs[i].ticks;
    }
    return bw_aggregate(bytes, ticks, n, C.hz);
}

/* The engine's sample of a multi-threaded point: the jobs run together over a common window; the time is
 * the slowest thread's (the window plus at most a chunk), scaled from the bytes the threads moved to the
 * nominal bytes the engine divides by (`nominal`), so that the sample is bw_aggregate's figure. */
struct mt_ctx {
    const uint32_t *ids;
    size_t n;
    size_t of;     /* the point's replicates */
    uint64_t off[MEAS_REPLICATES_FULL]; /* replicate k's page offset in the first thread's buffer */
    size_t got;    /* replicates set up */
    double nominal;
    double moved;  /* bytes the threads moved over every sample so far */
    size_t samples;
    struct bw_arrays base[BW_MAX_CPUS]; /* replicate 0's arrays of each thread */
};

/* Replicate k: every thread's arrays k lines further into its buffer and, where the buffer has room (it holds
 * the largest working set its CPU serves, so every point but that one has some), at a page-aligned offset
 * spread over the room (bw_rep_page_offset, as the sweep's interleaved points): other pages, another DRAM
 * placement. The replicates run back to back; a replicate on other pages is fresh (its first sample streams
 * pages last touched at another point, from memory, as every sample of a memory-level point does), one on
 * the same pages goes on warm from where the previous one stopped. */
static int mt_setup(void *ctx, size_t k)
{
    struct mt_ctx *mc = ctx;
    bool moved = false;
    for (size_t i = 0; i < mc->n; i++) {
        uint64_t off = bw_rep_page_offset(&tbufs[mc->ids[i]], &mc->base[i], k, mc->of);
        arrays_shift(&mc->base[i], k, off, &jobs[i].x);
        if (i == 0 && k < MEAS_REPLICATES_FULL) {
            moved = k && off != mc->off[0];
            mc->off[k] = off;
            mc->got = MAX(mc->got, k + 1);
        }
    }
    return k && !moved ? MEAS_SETUP_WARM : MEAS_SETUP_FRESH;
}

static int mt_sample(void *ctx, uint64_t iters, uint64_t *ticks)
{
    const struct mt_ctx *mc = ctx;
    (void)iters;
    if (mt_run(mc->ids, mc->n) <= 0)
        return -1;
    uint64_t slowest = 0;
    double moved = 0;
    for (size_t i = 0; i < mc->n; i++) {
        slowest = MAX(slowest, jobs[i].ticks);
        moved += jobs[i].window ? (double)jobs[i].done : (double)(jobs[i].bytes * jobs[i].passes);
    }
    if (!(moved > 0))
        return -1;
    if (iters) {
        ((struct mt_ctx *)ctx)->moved += moved;
        ((struct mt_ctx *)ctx)->samples++;
    }
    *ticks = (uint64_t)((double)slowest * mc->nominal / moved + 0.5);
    return 0;
}

/* The fewest of the CPUs ids[0..n) that share one LLC (1 when CPUID does not say who shares it). */
static size_t llc_min_threads(const uint32_t *ids, size_t n)
{
    uint32_t apic[BW_MAX_CPUS];
    for (size_t i = 0; i < n; i++)
        apic[i] = cpus[ids[i]].apic_id;
    return MAX(bw_llc_min_threads(apic, n, C.llc_shared_by), (size_t)1);
}

/* Per-thread working set when the CPUs ids[0..t) run together: the threads that share one LLC cover the
 * memory-level total together, so every LLC sees at least 4x its size. */
static uint64_t mt_ws(const uint32_t *ids, size_t t, uint64_t floor)
{
    uint64_t ws = bw_dram_ws_per_thread(C.mt_total, llc_min_threads(ids, t), floor);
    uint64_t cap = plat_config()->max_bytes; /* a cap on any one working set, the floor included */
    return cap ? MIN(ws, MAX(ALIGN_DOWN(cap, KiB(4)), KiB(4))) : ws;
}

/* A multi-threaded point's buffer for a working set of ws: an eighth more where the point has replicates, so
 * that each replicate's arrays can sit on other pages (mt_setup; on 2 MiB pages 9 distinct offsets from 128 MiB
 * of working set up, fewer below, none under 16 MiB). */
#define BW_MT_ROOM_DIV 8
static uint64_t mt_buf_ws(uint64_t ws)
{
    return C.po.replicates > 1 ? ws + ALIGN_DOWN(ws / BW_MT_ROOM_DIV, KiB(4)) : ws;
}

/* Kernel k on the CPUs ids[0..n), each over ws bytes of its own buffer. */
static int measure_threads(const uint32_t *ids, size_t n, enum bw_kernel k, enum bw_isa isa, uint64_t ws,
                           struct bw_point *p)
{
    bw_fn fn = bw_kernel_fn(k, isa);
    for (size_t i = 0; i < n; i++) {
        jobs[i] = (struct bw_job){.fn = fn};
        if (!fn || arrays_for(&tbufs[ids[i]], k, ws, &jobs[i].x) != 0)
            return -1;
        jobs[i].bytes = bw_kernel_bytes(k, jobs[i].x.n);
    }
    /* Warm-up: every thread streams its whole buffer once, together (buffers, TLBs, the APs' caches), so
     * that every byte a window streams next was last touched one whole traversal ago. Emulated: one window. */
    uint64_t window = MAX(C.po.min_sample_tsc, (uint64_t)BW_MT_MIN_WINDOW_US * C.hz / 1000000);
    bool minimal = plat_config()->minimal;
    for (size_t i = 0; i < n; i++)
        jobs[i].passes = 1, jobs[i].window = minimal ? window : 0, jobs[i].off = 0;
    if (mt_run(ids, n) <= 0)
        return -1;
    /* The samples: a common window of the sample length, at least BW_MT_MIN_WINDOW_US, whatever the working
     * set (a window of whole passes cost a pass per sample: 9 x 3 passes of 1.2 GiB for one thread). */
    for (size_t i = 0; i < n; i++)
        jobs[i].window = window, jobs[i].off = 0;
    static struct mt_ctx mc;
    mc.ids = ids;
    mc.n = n;
    mc.nominal = (double)jobs[0].bytes * (double)n; /* ticks are scaled to one pass of every thread */
    mc.moved = 0;
    mc.samples = 0;
    mc.of = C.po.replicates;
    mc.got = 0;
    for (size_t i = 0; i < n; i++)
        mc.base[i] = jobs[i].x;
    struct meas_spec spec = {
        .sample = mt_sample,
        .ctx = &mc,
        .serialize = C.po.serialize,
        .iters = 1,
        .work_per_iter = mc.nominal,
        .min_samples = C.mt_min,
        .max_samples = C.mt_max,
        .target_ci = C.po.target_ci,
        .budget_ticks = C.po.budget_tsc,
        .replicates = C.po.replicates,
        .setup = mt_setup,
    };
    struct meas_result m;
    if (meas_run(&spec, mt_samples, PM_MAX_SAMPLES, &m) != MEAS_OK)
        return -1;
    stats_reciprocal(&m.st, (double)C.hz, &p->bw); /* ticks per byte -> bytes/s */
    stats_scale_unc(&p->bw, 1, clock_tsc_rel_unc());
    p->converged = m.converged;
    p->k = k;
    p->isa = isa;
    p->ws = jobs[0].bytes;
    p->per_array = (uint64_t)jobs[0].x.n * 8;
    p->ws_total = jobs[0].bytes * n;
    p->threads = n;
    p->llc_ws = jobs[0].bytes * llc_min_threads(ids, n);
    p->packages = 0;
    for (size_t i = 0; i < n; i++) {
        bool seen = false;
        for (size_t q = 0; q < i; q++)
            seen |= cpus[ids[q]].package == cpus[ids[i]].package;
        p->packages += !seen;
    }
    p->passes = mc.samples ? mc.moved / (double)mc.samples / mc.nominal : 0;
    p->sample_bytes = mc.samples ? (uint64_t)(mc.moved / (double)mc.samples) : 0;
    p->page_bytes = tbufs[ids[0]].b.page_bytes;
    p->noff = MIN(mc.got, (size_t)MEAS_REPLICATES_FULL);
    p->moved = 0;
    for (size_t r = 0; r < p->noff; r++) {
        p->off[r] = mc.off[r];
        p->moved += r && mc.off[r] != mc.off[0];
    }
    p->method = "threads released together and stopped together after a common window (each streaming its "
                "buffer in 256 KiB chunks, continuing where it stopped); sum of STREAM bytes / the slowest "
                "thread's TSC time, median of samples; each replicate on other pages of the "
                "buffers where they have room (replicate_offsets)";
    return 0;
}

static void free_tbufs(void)
{
    for (size_t i = 0; i < BW_MAX_CPUS; i++)
        plat_free(&tbufs[i].b);
}

/* Buffers for CPUs order[0..n): the CPU at position i is used for every count t > i, so its buffer holds the
 * largest of those counts' working sets (not always the one for i + 1 threads: a count that opens a new LLC
 * with one thread needs the whole total per thread again). Memory on `node` (-1: each CPU's own). Returns how
 * many could be had. */
static size_t alloc_series(const uint32_t *order, size_t n, int node, uint64_t floor)
{
    static uint64_t ws_for[BW_MAX_CPUS + 1];
    for (size_t t = 1; t <= n; t++)
        ws_for[t] = mt_ws(order, t, floor);
    for (size_t i = 0; i < n; i++) {
        uint32_t c = order[i];
        int nd = node >= 0 ? node : cpus[c].node;
        uint64_t ws = 0;
        for (size_t t = i + 1; t <= n; t++)
            ws = MAX(ws, ws_for[t]);
        uint64_t lim = plat_alloc_limit(nd);
        if (tbuf_bytes(mt_buf_ws(ws)) > lim / 2 || (plat_config()->max_bytes && ws > plat_config()->max_bytes))
            return i;
        if (tbuf_alloc(&tbufs[c], mt_buf_ws(ws), nd, "bandwidth thread") != 0)
            return i;
    }
    return n;
}

static const enum bw_kernel quick_kernels[] = {BW_READ, BW_TRIAD};
static const enum bw_kernel full_kernels[] = {BW_READ,  BW_WRITE,   BW_WRITE_NT, BW_COPY,
                                              BW_TRIAD, BW_COPY_NT, BW_TRIAD_NT};
/* The NUMA matrix (nodes x nodes points of every kernel) keeps the cached-store kernels and write_nt. */
static const enum bw_kernel numa_kernels[] = {BW_READ, BW_WRITE, BW_WRITE_NT, BW_COPY, BW_TRIAD};

static void scaling(size_t ncpu, bool package_only, uint64_t floor)
{
    uint32_t order[BW_MAX_CPUS], counts[BW_MAX_CPUS];
    size_t n = bw_order_cpus(cpus, ncpu, 0, package_only, order);
    free_tbufs();
    size_t have = alloc_series(order, n, -1, floor);
    if (have < n)
        plat_printf("  scaling: memory for %zu of %zu threads only\n", have, n);
    size_t nc = bw_thread_counts(have, !C.quick, counts, BW_MAX_CPUS);
    const enum bw_kernel *ks = C.quick ? quick_kernels : full_kernels;
    size_t nk = C.quick ? ARRAY_SIZE(quick_kernels) : ARRAY_SIZE(full_kernels);
    enum bw_isa isa = C.isa[C.n_isa - 1];
    const char *series = package_only ? "scaling_package" : "scaling_all";
    plat_printf("  %s (%s, each thread its own buffer on its node, %s): threads -> GB/s\n", series,
                bw_isa_name(isa), package_only ? "CPUs of the benchmark CPU's package, cores before SMT siblings"
                                               : "cores spread over the packages in turn");
    static struct bw_line line;
    for (size_t ki = 0; ki < nk; ki++) {
        line_add(&line, "    %-9s", bw_kernel_name(ks[ki]));
        for (size_t ci = 0; ci < nc; ci++) {
            size_t t = counts[ci];
            struct bw_point p = {.series = series, .placement = "local: each thread's buffer on its own node"};
            uint64_t ws = mt_ws(order, t, floor);
            if (measure_threads(order, t, ks[ki], isa, ws, &p) != 0) {
                line_add(&line, " %zu:-", t);
                continue;
            }
            int nf = cpus[order[0]].node;
            for (size_t i = 1; i < t; i++)
                if (cpus[order[i]].node != nf)
                    nf = -1;
            p.node_from = nf;
            p.node_to = nf;
            struct json *j = rec_point(&p);
            json_key(j, "cpus");
            json_arr_begin(j);
            for (size_t i = 0; i < t; i++)
                json_uint(j, cpus[order[i]].apic_id);
            json_arr_end(j);
            json_kv_str(j, "cpus_are", "apic_id");
            plat_rec_end();
            line_add(&line, " %zu:%.2f", t, p.bw.median / 1e9);
        }
        line_flush(&line);
    }
    free_tbufs();
}

/* Threads on node i (one per core), memory on node j, for every pair. */
static void numa_matrix(size_t ncpu, uint64_t floor)
{
    uint32_t nodes = plat_node_count();
    const enum bw_kernel *ks = C.quick ? quick_kernels : numa_kernels;
    size_t nk = C.quick ? ARRAY_SIZE(quick_kernels) : ARRAY_SIZE(numa_kernels);
    enum bw_isa isa = C.isa[C.n_isa - 1];
    plat_printf("  NUMA node pairs (%s; all cores of node i, memory on node j), GB/s:\n", bw_isa_name(isa));
    for (uint32_t i = 0; i < nodes; i++) {
        uint32_t ids[BW_MAX_CPUS];
        size_t n = 0;
        /* One thread per core of node i. */
        for (size_t c = 0; c < ncpu; c++) {
            if (cpus[c].node != (int)i)
                continue;
            bool dup = false;
            for (size_t q = 0; q < n; q++)
                dup |= cpus[ids[q]].package == cpus[c].package && cpus[ids[q]].core == cpus[c].core;
            if (!dup)
                ids[n++] = (uint32_t)c;
        }
        if (!n)
            continue;
        for (uint32_t jn = 0; jn < nodes; jn++) {
            if (!plat_node_bytes((int)jn))
                continue;
            free_tbufs();
            uint64_t ws = mt_ws(ids, n, floor);
            size_t ok = 0;
            for (size_t q = 0; q < n; q++) {
                if (tbuf_bytes(mt_buf_ws(ws)) * (n - q) > plat_alloc_limit((int)jn) / 2 ||
                    tbuf_alloc(&tbufs[ids[q]], mt_buf_ws(ws), (int)jn, "bandwidth numa") != 0)
                    break;
                ok++;
            }
            static struct bw_line line;
            line_add(&line, "    node %u -> node %u:", i, jn);
            if (ok < n) {
                line_add(&line, " no memory on node %u for %zu threads", jn, n);
                line_flush(&line);
                continue;
            }
            for (size_t ki = 0; ki < nk; ki++) {
                struct bw_point p = {.series = "numa", .placement = "threads on node_from, memory on node_to",
                                     .node_from = (int)i, .node_to = (int)jn};
                if (measure_threads(ids, n, ks[ki], isa, ws, &p) != 0) {
                    line_add(&line, " %s -", bw_kernel_name(ks[ki]));
                    continue;
                }
                struct json *j = rec_point(&p);
                json_kv_int(j, "distance", plat_node_distance((int)i, (int)jn));
                plat_rec_end();
                line_add(&line, " %s %.2f", bw_kernel_name(ks[ki]), p.bw.median / 1e9);
            }
            line_flush(&line);
        }
    }
    free_tbufs();
}

static void peak_record(void)
{
    struct json *j = plat_rec_begin("bandwidth_peak");
    static struct smbios_peak pk;
    static struct smbios_mem mem;
    const char *why = "no SMBIOS table was handed to the benchmark (bandwidth_set_smbios)";
    bool ok = false;
    if (smbios_table) {
        int rc = smbios_mem_parse(smbios_table, smbios_len, &mem);
        if (rc != SMBIOS_OK && !mem.devices)
            why = "SMBIOS structure table malformed";
        else if (!(ok = smbios_peak(&mem, &pk)))
            why = pk.why;
    }
    json_kv_str(j, "status", ok ? "ok" : "unknown");
    json_kv_str(j, "source", smbios_source);
    if (ok) {
        json_kv_double(j, "peak_bytes_per_s", pk.bytes_per_s);
        json_kv_str(j, "formula", pk.formula);
        json_kv_uint(j, "channels", pk.channels);
        json_kv_str(j, "channel_method", pk.channel_method);
        json_kv_uint(j, "dimms", pk.dimms);
        json_kv_uint(j, "max_dimms_per_channel", pk.max_dimms_per_channel);
        json_kv_uint(j, "mts", pk.mts);
        json_kv_str(j, "mts_source",
                    pk.mts_configured ? "configured speed (type 17 offset 20h/58h), the slowest device's"
                                      : "the slowest device's speed; some give no configured speed, their maximum "
                                        "speed (15h/54h) is used");
        json_kv_uint(j, "data_width_bits", pk.data_width);
        json_kv_str(j, "memory_type", smbios_mem_type_name(pk.type));
        if (pk.sockets)
            json_kv_uint(j, "sockets", pk.sockets);
        else
            json_kv_null(j, "sockets");
        if (pk.per_socket_bytes_per_s > 0)
            json_kv_double(j, "peak_per_socket_bytes_per_s", pk.per_socket_bytes_per_s);
        else
            json_kv_null(j, "peak_per_socket_bytes_per_s");
        json_kv_str(j, "method",
                    "SMBIOS type 17: channels x transfer rate x data width (docs/bandwidth-branch-penalty.md)");
    } else {
        json_kv_null(j, "peak_bytes_per_s");
        json_kv_str(j, "reason", why);
    }
    if (smbios_table && mem.arrays)
        json_kv_uint(j, "slots", mem.slots);
    json_kv_uint(j, "memory_level_from_bytes", BW_MEMORY_LLC_FACTOR * C.llc);
    /* The comparison: the best memory-level point against the peak of what it could use. A point on one
     * package is compared with one socket's peak when the locators say how the channels split over sockets. */
    double ref = 0;
    const char *ref_what = NULL;
    if (ok && C.best.bytes_per_s > 0) {
        if (C.best.packages == 1 && pk.sockets > 1 && pk.per_socket_bytes_per_s > 0)
            ref = pk.per_socket_bytes_per_s, ref_what = "one socket's peak (the threads ran on one package)";
        else if (C.best.packages == 1 && C.multi_package && pk.sockets != 1)
            ref = pk.bytes_per_s, ref_what = "the whole system's peak, though the threads ran on one package and the "
                                             "peak cannot be split per socket: a lower bound of the fraction";
        else
            ref = pk.bytes_per_s, ref_what = "the whole system's peak";
    }
    if (C.best.bytes_per_s > 0) {
        json_kv_double(j, "achieved_bytes_per_s", C.best.bytes_per_s);
        json_kv_str(j, "achieved_series", C.best.series);
        json_kv_str(j, "achieved_kernel", C.best.kernel);
        json_kv_uint(j, "achieved_threads", C.best.threads);
        json_kv_uint(j, "achieved_packages", C.best.packages);
    } else {
        json_kv_null(j, "achieved_bytes_per_s");
        json_kv_str(j, "achieved_reason", C.no_memory[0] ? C.no_memory : "no memory-level point was measured");
    }
    if (ref > 0) {
        json_kv_double(j, "fraction_of_peak", C.best.bytes_per_s / ref);
        json_kv_str(j, "fraction_of", ref_what);
    } else {
        json_kv_null(j, "fraction_of_peak");
    }
    plat_rec_end();
    char best[64];
    if (C.best.bytes_per_s > 0)
        fmt_snprintf(best, sizeof(best), "%.2f GB/s", C.best.bytes_per_s / 1e9);
    else
        fmt_snprintf(best, sizeof(best), "none (%s)", C.no_memory[0] ? "see above" : "no memory-level point");
    char frac[192] = "";
    if (ref > 0)
        fmt_snprintf(frac, sizeof(frac), ", %.0f%% of %s", 100 * C.best.bytes_per_s / ref, ref_what);
    if (ok)
        plat_printf("  peak (SMBIOS %s: %s) = %.2f GB/s; best measured at memory level (>= 4x LLC): %s%s\n",
                    smbios_mem_type_name(pk.type), pk.formula, pk.bytes_per_s / 1e9, best, frac);
    else
        plat_printf("  peak: unknown (%s); best measured at memory level (>= 4x LLC): %s\n", why, best);
}

/* Logical CPUs sharing the last-level cache, from the CPUID cache descriptor of that level (0: unknown, e.g.
 * when the sizes are Nehalem's stand-ins). */
static uint32_t llc_shared_by(const struct cpu_info *ci, const struct cache_sizes *cs)
{
    uint32_t by = 0;
    for (size_t i = 0; ci && i < ci->n_caches && i < CPU_MAX_CACHES; i++) {
        const struct cpu_cache *c = &ci->caches[i];
        if (c->type != CPU_CACHE_INSTRUCTION && c->bytes == cs->llc && c->level >= 2)
            by = MAX(by, c->shared_by);
    }
    return by;
}

void bench_bandwidth(void)
{
    const struct plat_config *cfg = plat_config();
    const struct cpu_info *ci = plat_cpuinfo();
    struct cache_sizes cs;
    cache_sizes_or_nehalem(ci, &cs);
    C = (struct bw_ctx){.quick = cfg->quick, .hz = plat_tsc_hz(), .l1 = cs.l1, .l2 = cs.l2, .llc = cs.llc,
                        .llc_shared_by = llc_shared_by(ci, &cs)};
    pm_opts_profile(&C.po);
    if (C.quick)
        C.po.min_samples = 3; /* memory-level passes are long under emulation */
    C.mt_min = C.quick ? 3 : meas_min_samples(false); /* full: the profile's minimum n for an ok verdict */
    C.mt_max = C.quick ? 7 : 31;
    if (cfg->minimal) { /* emulated: the minimum, no stop rule to reach */
        C.po.max_samples = C.po.min_samples;
        C.mt_max = C.mt_min;
    }

    uint64_t xcr0 = bw_xcr0();
    const struct cpu_features *f = ci ? &ci->feat : NULL;
    C.isa[C.n_isa++] = BW_ISA_SSE2;
    enum bw_isa w = bw_isa_widest(f, xcr0);
    if (w != BW_ISA_SSE2)
        C.isa[C.n_isa++] = w;
    for (int i = BW_ISA_AVX2; i < BW_ISA_COUNT; i++) {
        const char *why;
        if (!bw_isa_usable((enum bw_isa)i, f, xcr0, &why))
            plat_printf("  %s kernels not used: %s\n", bw_isa_name((enum bw_isa)i), why);
    }

    /* The memory-level working set: 4x the LLC for every kernel (bw_ws_covering), at least 64 MiB (quick:
     * 16 MiB), within what the platform can give: halved until the buffer fits half of what can be
     * allocated, and capped by max_bytes. Below 4x the LLC the run has no memory-level point, and says why. */
    uint64_t mem_min = bw_ws_covering(BW_MEMORY_LLC_FACTOR * C.llc);
    uint64_t dram_ws = MAX(mem_min, C.quick ? MiB(16) : MiB(64));
    struct plat_cpu me;
    int node = plat_cpu(0, &me) ? me.node : -1;
    uint64_t lim = plat_alloc_limit(node);
    const char *limit = NULL;
    while (dram_ws > KiB(64) && tbuf_bytes(dram_ws) > lim / 2)
        dram_ws /= 2, limit = "free memory (the buffer must fit half of what can be allocated)";
    if (cfg->max_bytes && dram_ws > cfg->max_bytes)
        dram_ws = MAX(ALIGN_DOWN(cfg->max_bytes, KiB(4)), KiB(4)), limit = "max_bytes";
    C.mt_total = dram_ws;
    char txt[24], llc_txt[24];
    size_text(dram_ws, txt, sizeof(txt));
    size_text(BW_MEMORY_LLC_FACTOR * C.llc, llc_txt, sizeof(llc_txt));
    if (dram_ws < BW_MEMORY_LLC_FACTOR * C.llc)
        fmt_snprintf(C.no_memory, sizeof(C.no_memory),
                     "no memory-level point: the largest working set (%s, limited by %s) is below 4x the LLC (%s)", txt,
                     limit ? limit : "the profile", llc_txt);
    plat_printf("  caches L1 %lu KiB, L2 %lu KiB, LLC %lu KiB; memory level from 4x LLC (%s); largest working set %s; "
                "tsc %lu Hz\n",
                (unsigned long)(C.l1 >> 10), (unsigned long)(C.l2 >> 10), (unsigned long)(C.llc >> 10), llc_txt, txt,
                (unsigned long)C.hz);
    if (C.no_memory[0])
        plat_printf("  %s\n", C.no_memory);

    struct bw_tbuf t0 = {0};
    if (tbuf_alloc(&t0, dram_ws, node, "bandwidth sweep") != 0) {
        plat_printf("  bandwidth: no buffer of %s\n", txt);
    } else {
        sweep(&t0, dram_ws, node);
        plat_free(&t0.b);
    }

    size_t ncpu = MIN((size_t)plat_cpu_count(), (size_t)BW_MAX_CPUS);
    size_t have = 0;
    for (size_t i = 0; i < ncpu; i++)
        if (plat_cpu((uint32_t)i, &cpus[have]))
            have++;
    ncpu = have;
    uint64_t floor = C.quick ? MiB(8) : MAX(MiB(16), 4 * C.l2);
    if (ncpu > 1) {
        scaling(ncpu, true, floor);
        for (size_t i = 1; i < ncpu; i++)
            C.multi_package |= cpus[i].package != cpus[0].package;
        if (C.multi_package)
            scaling(ncpu, false, floor);
    }
    if (plat_node_count() > 1 && ncpu > 1)
        numa_matrix(ncpu, floor);
    peak_record();
}
