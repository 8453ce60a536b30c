/* penalty.c - the penalty measurements: each a small loop whose latency, or
 * difference to a baseline loop, is one P_i of the guide's stall decomposition. */
#include "bench/penalty.h"
#include "measure/timing.h"
#include "bench/cache_sizes.h"
#include "bench/clock.h"
#include "bench/crosscheck.h"
#include "bench/lat_common.h"
#include "bench/lat_plan.h"
#include "bench/lat_table2.h"
#include "measure/chain.h"
#include "measure/chase.h"
#include "measure/engine.h"
#include "measure/rand.h"
#include "measure/stats_json.h"
#include "bench/cycle_accounting.h"
#include "bench/platform.h"
#include "kernel/fmt.h"

static bool is_finite(double v) { return v == v && v - v == 0; }

double pm_penalty(double cycles_a, double cycles_b, double events_a, double events_b)
{
    double de = events_a - events_b;
    if (!is_finite(cycles_a) || !is_finite(cycles_b) || !is_finite(events_a) || !is_finite(events_b) || !(de > 0))
        return __builtin_nan("");
    return (cycles_a - cycles_b) / de;
}

double pm_diff_cv(double a, double cv_a, double b, double cv_b)
{
    double d = a - b, sa = a * cv_a, sb = b * cv_b;
    if (d == 0)
        return __builtin_inf();
    return stats_sqrt(sa * sa + sb * sb) / (d < 0 ? -d : d);
}

void pm_penalty_verdict(struct verdict *v, const struct stats *c, bool converged, double target_ci, size_t min_n)
{
    verdict_from_stats(v, c, converged, target_ci, min_n);
    if (v->q == QUALITY_UNAVAILABLE)
        return;
    if (!(c->median > 0))
        verdict_worsen(v, QUALITY_SUSPECT, "%.3g cycles: a penalty must be positive", c->median);
    else if (!(c->ci_lo > 0))
        verdict_worsen(v, QUALITY_SUSPECT, "%.3g cycles is within its own uncertainty (95 %% CI %.3g..%.3g)",
                       c->median, c->ci_lo, c->ci_hi);
}

struct json *pm_penalty_begin(const char *name, const struct stats *cycles, double ns, const struct verdict *v,
                              const char *method, const char *reference, const char *cycles_method)
{
    struct json *j = plat_rec_begin("penalty");
    char fig[LEDGER_NAME_MAX];
    fmt_snprintf(fig, sizeof(fig), "penalty/%s", name);
    json_kv_str(j, "name", name);
    figure_json(j, fig, cycles, UNIT_CYCLES, v);
    stats_json_also(j, UNIT_NS, ns);
    json_kv_str(j, "method", method);
    json_kv_str(j, "reference", reference);
    json_kv_str(j, "cycles_method", cycles_method);
    if (clock_method_is_chains(cycles_method) && cycles && cycles->n)
        clock_chain_converted(fig); /* what an L1 check that blames the draws marks (clock_l1_check) */
    return j;
}

static double hyp(double a, double b) { return stats_sqrt(a * a + b * b); }

void pm_stats_diff(const struct stats *a, const struct stats *b, struct stats *d)
{
    double m = a->median - b->median;
    double nan = __builtin_nan("");
    *d = (struct stats){
        .n = MIN(a->n, b->n),
        .median = m,
        .min = nan, .p10 = nan, .p90 = nan, .max = nan, /* not defined for a difference of medians */
        .mean = m,
        .cv = pm_diff_cv(a->median, a->spread, b->median, b->spread),
        .ci_lo = m - hyp(a->median - a->ci_lo, b->ci_hi - b->median),
        .ci_hi = m + hyp(a->ci_hi - a->median, b->median - b->ci_lo),
        .replicates = MIN(a->replicates, b->replicates),
        .within_ci = MAX(a->within_ci, b->within_ci),
        .between_spread = MAX(a->between_spread, b->between_spread),
    };
    d->spread = d->cv;
    if (a->next_level > 0 && b->next_level > 0) { /* the next run's difference, combined the same way */
        d->next_lo = m - hyp(a->median - a->next_lo, b->next_hi - b->median);
        d->next_hi = m + hyp(a->next_hi - a->median, b->median - b->next_lo);
        d->next_level = MIN(a->next_level, b->next_level);
    }
}

/* ---- the measured loops ------------------------------------------------------------------------------- */

#define REP8(s) s s s s s s s s

/* A pointer chase through chase_run: 64 dependent loads per iteration. With a buffer (b), every replicate
 * after the first chases a fresh permutation of the same lines (chase_setup). */
struct pen_chase {
    void *p;
    struct plat_buf *b, *scratch;
    struct chain_params cp;
    size_t lines; /* the chain's length */
};
static void loop_chase(void *arg, uint64_t iters)
{
    struct pen_chase *c = arg;
    c->p = chase_run(c->p, iters);
}

/* Dependent loads of one self-pointing word, 8 per iteration: in asm, because the split cases load a
 * misaligned pointer (undefined behaviour as C, perfectly defined as x86). */
#define SELF_LOADS 8
static TIMED_FN void loop_self(void *arg, uint64_t iters)
{
    struct pen_chase *c = arg;
    void *p = c->p;
    if (!iters)
        return;
    __asm__ volatile("1:\n\t" REP8("mov (%0), %0\n\t") "dec %1\n\tjnz 1b" : "+r"(p), "+r"(iters) : : "memory", "cc");
    c->p = p;
}

/* Store-to-load chains through one L1-resident slot; each load's result is the next store's data. */
struct pen_slot {
    uint8_t *p;    /* 64-byte aligned, 8 KiB + 64 bytes usable, zero where loads read */
    uint64_t v;    /* chain value, carried over */
};

/*
 * Memory renaming (Zen 2 and later, Ice Lake and later; Agner Fog's microarchitecture manual, Zen 2 "mirroring
 * memory operands"; AMD's patent "Tracking stores and loads by bypassing load store units"): the renamer pairs a
 * load with an earlier store, by the same address expression (Zen 2) or by the pair's history in a predictor
 * (Zen 3 and later), and hands the load the store's data register, so the load never waits for forwarding. A
 * dependent store -> load chain then runs at about a cycle per pair (0.46 on Emerald Rapids, 0.5-1.0 on Zen 4):
 * it measures the renamer, not store forwarding. On this project's Zen 4 guest a different base register and
 * displacement (store 0(p), load 8(q), q = p - 8) and even a load address computed from the chain were all
 * paired: 1.00 cycle per pair. What no renamer can do is hand over *part* of a register: loop_sf_ok loads the
 * upper 4 bytes (+4) of the 8-byte store, a load contained in the store, which every core since Core 2 / K10
 * forwards from the store queue (6.3-6.5 cycles per pair on that Zen 4 guest). loop_sf_renamed is the renamable
 * form (same register, same displacement, same size), reported as its own figure.
 */
static TIMED_FN void loop_sf_ok(void *arg, uint64_t iters)
{
    struct pen_slot *s = arg;
    uint64_t v = s->v;
    if (!iters)
        return;
    /* movl zero-extends into the whole register: the chain value stays 0, each load waits for the store before */
    __asm__ volatile("1:\n\t" REP8("mov %0, (%2)\n\tmovl 4(%2), %k0\n\t") "dec %1\n\tjnz 1b"
                     : "+r"(v), "+r"(iters)
                     : "r"(s->p)
                     : "memory", "cc");
    s->v = v;
}

/* 8-byte store, 8-byte load of the same address through the same register and displacement: renamable. */
static TIMED_FN void loop_sf_renamed(void *arg, uint64_t iters)
{
    struct pen_slot *s = arg;
    uint64_t v = s->v;
    if (!iters)
        return;
    __asm__ volatile("1:\n\t" REP8("mov %0, (%2)\n\tmov (%2), %0\n\t") "dec %1\n\tjnz 1b"
                     : "+r"(v), "+r"(iters)
                     : "r"(s->p)
                     : "memory", "cc");
    s->v = v;
}

/* 4-byte store, 8-byte load of the same address: a larger load over a smaller store cannot forward. */
static TIMED_FN void loop_sf_size(void *arg, uint64_t iters)
{
    struct pen_slot *s = arg;
    uint64_t v = s->v;
    if (!iters)
        return;
    __asm__ volatile("1:\n\t" REP8("movl %k0, (%2)\n\tmov (%2), %0\n\t") "dec %1\n\tjnz 1b"
                     : "+r"(v), "+r"(iters)
                     : "r"(s->p)
                     : "memory", "cc");
    s->v = v;
}

/* 8-byte store, 8-byte load 4 bytes further: partial overlap, no forwarding. */
static TIMED_FN void loop_sf_offset(void *arg, uint64_t iters)
{
    struct pen_slot *s = arg;
    uint64_t v = s->v;
    if (!iters)
        return;
    __asm__ volatile("1:\n\t" REP8("mov %0, (%2)\n\tmov 4(%2), %0\n\t") "dec %1\n\tjnz 1b"
                     : "+r"(v), "+r"(iters)
                     : "r"(s->p)
                     : "memory", "cc");
    s->v = v;
}

/* Dependent loads from p+4096 (+ the previous load's value, always 0) after a store to p: same address bits
 * 11:0, so the load is held for the unrelated store (4K aliasing). The control stores to p+64 instead. */
static TIMED_FN void loop_alias(void *arg, uint64_t iters)
{
    struct pen_slot *s = arg;
    uint64_t v = 0, data = 0x55;
    if (!iters)
        return;
    __asm__ volatile("1:\n\t" REP8("mov %2, (%3)\n\tmov 4096(%3,%0), %0\n\t") "dec %1\n\tjnz 1b"
                     : "+r"(v), "+r"(iters)
                     : "r"(data), "r"(s->p)
                     : "memory", "cc");
    s->v = v;
}

static TIMED_FN void loop_alias_control(void *arg, uint64_t iters)
{
    struct pen_slot *s = arg;
    uint64_t v = 0, data = 0x55;
    if (!iters)
        return;
    __asm__ volatile("1:\n\t" REP8("mov %2, 64(%3)\n\tmov 4096(%3,%0), %0\n\t") "dec %1\n\tjnz 1b"
                     : "+r"(v), "+r"(iters)
                     : "r"(data), "r"(s->p)
                     : "memory", "cc");
    s->v = v;
}

/* Divider chains: the quotient is the next dividend (divisor 1), so every DIV waits for the previous one.
 * Dividend 2^63 - 1 (2^31 - 1): a full-width quotient, the slow case of dividers with an early exit. */
struct pen_div {
    uint64_t x;
    double d;
};

static TIMED_FN void loop_div64(void *arg, uint64_t iters)
{
    struct pen_div *s = arg;
    uint64_t x = s->x;
    if (!iters)
        return;
    __asm__ volatile("1:\n\t" REP8("xor %%edx, %%edx\n\tdiv %2\n\t") "dec %1\n\tjnz 1b"
                     : "+a"(x), "+r"(iters)
                     : "r"((uint64_t)1)
                     : "rdx", "cc");
    s->x = x;
}

static TIMED_FN void loop_div32(void *arg, uint64_t iters)
{
    struct pen_div *s = arg;
    uint32_t x = (uint32_t)s->x;
    if (!iters)
        return;
    __asm__ volatile("1:\n\t" REP8("xor %%edx, %%edx\n\tdivl %2\n\t") "dec %1\n\tjnz 1b"
                     : "+a"(x), "+r"(iters)
                     : "r"((uint32_t)1)
                     : "rdx", "cc");
    s->x = x;
}

/* x / (1 + 2^-52): the value stays normal for ~10^15 divisions and no divider shortcut for 1.0 applies. */
static TIMED_FN void loop_divsd(void *arg, uint64_t iters)
{
    struct pen_div *s = arg;
    double x = s->d;
    if (!iters)
        return;
    __asm__ volatile("1:\n\t" REP8("divsd %2, %0\n\t") "dec %1\n\tjnz 1b"
                     : "+x"(x), "+r"(iters)
                     : "x"(1.0000000000000002)
                     : "cc");
    s->d = x;
}

/* ---- the benchmark ---------------------------------------------------------------------------------------- */

#define PEN_MAX 24
struct pen_row {
    const char *name;
    double cycles, ns, half; /* half: the upper CI half-width */
    enum quality q;
    const char *method;
};
static struct pen_row rows[PEN_MAX];
static size_t n_rows;

static struct pm_opts opts;

static double ticks_to_ns(double t)
{
    uint64_t hz = plat_tsc_hz();
    return hz ? t * 1e9 / (double)hz : 0;
}

/* Emits the record of a measured penalty (its figure in core cycles per event) and keeps its row; extra keys
 * through j before plat_rec_end, so the record is left open: the caller closes it. */
static struct json *emit(const char *name, const struct stats *cyc, double ns, const char *method,
                         const char *reference, const struct pm_result *r, const char *suspect)
{
    struct verdict v;
    pm_penalty_verdict(&v, cyc, r ? r->cyc_converged : false, meas_ci_target(plat_config()->quick),
                       meas_min_samples(plat_config()->quick));
    if (suspect)
        verdict_worsen(&v, QUALITY_SUSPECT, "%s", suspect);
    struct json *j = pm_penalty_begin(name, cyc, ns, &v, method, reference, r ? r->cycles_method : NULL);
    if (r)
        json_kv_double(j, "core_tsc_ratio", r->ratio);
    if (n_rows < PEN_MAX)
        rows[n_rows++] = (struct pen_row){name, cyc->median, ns, cyc->ci_hi - cyc->median, v.q, method};
    ca_penalty_set(name, cyc->median, v.q, v.reason);
    return j;
}

static void emit_unavailable(const char *name, const char *reason, const char *reference)
{
    ca_penalty_set(name, __builtin_nan(""), QUALITY_UNAVAILABLE, reason); /* cycle accounting names why */
    struct json *j = plat_rec_begin("penalty");
    json_kv_str(j, "name", name);
    json_kv_str(j, "status", "unavailable");
    json_kv_str(j, "reason", reason);
    struct verdict v;
    verdict_unavailable(&v, reason);
    char fig[LEDGER_NAME_MAX];
    fmt_snprintf(fig, sizeof(fig), "penalty/%s", name);
    figure_json(j, fig, NULL, UNIT_CYCLES, &v);
    json_kv_null(j, UNIT_NS);
    json_kv_str(j, "method", "not measured");
    json_kv_str(j, "reference", reference);
    plat_rec_end();
    plat_printf("  %-26s unavailable: %s\n", name, reason);
}

static struct stats per_event(const struct pm_result *r, double per_iter)
{
    struct stats c;
    pm_cycles_stats(r, per_iter, &c);
    return c;
}

/* A latency per link of a dependent chain under one core cycle is not what the chain's name says: the core
 * executed the links at rename (memory renaming of a store -> load pair, an add-immediate folded at rename on
 * Golden Cove) or overlapped them. Such a figure is never `ok`. */
const char *pm_sub_cycle_reason(const char *name, double cycles_per_link, char *buf, size_t len)
{
    if (!(cycles_per_link < PM_MIN_CYCLES_PER_LINK))
        return NULL;
    fmt_snprintf(buf, len,
                 "%s ran at %.2f cycles per link of a dependent chain, under 1: the core resolved the links at "
                 "rename (memory renaming) or overlapped them, this is not the latency the name says",
                 name, cycles_per_link);
    return buf;
}

static char sub_cycle_why[200];
static const char *sub_cycle(const char *name, double cycles_per_link)
{
    return pm_sub_cycle_reason(name, cycles_per_link, sub_cycle_why, sizeof(sub_cycle_why));
}

/* A measurement as a penalty record (its latency per event, one event = one link of a dependent chain); left
 * open. */
static struct json *emit_lat(const char *name, const struct pm_result *r, double per_iter, const char *method,
                             const char *reference)
{
    struct stats c = per_event(r, per_iter);
    return emit(name, &c, r->ns / per_iter, method, reference, r, sub_cycle(name, c.median));
}

/* The difference a / per_a - b / per_b (per event) as a penalty record; left open. */
static struct json *emit_diff(const char *name, const struct pm_result *a, double per_a, const struct pm_result *b,
                              double per_b, const char *method, const char *reference, const char *suspect)
{
    struct stats ca = per_event(a, per_a), cb = per_event(b, per_b), d;
    pm_stats_diff(&ca, &cb, &d);
    struct pm_result both = *a;
    both.cyc_converged = a->cyc_converged && b->cyc_converged;
    return emit(name, &d, ticks_to_ns(a->tsc.median / per_a - b->tsc.median / per_b), method, reference, &both,
                suspect);
}

/* A latency (per-event loop time) as a penalty record. */
static void emit_latency(const char *name, const struct pm_result *r, double per_iter, const char *method,
                         const char *reference)
{
    struct json *j = emit_lat(name, r, per_iter, method, reference);
    json_kv_double(j, "latency_cycles", r->cycles / per_iter);
    plat_rec_end();
}

/* Difference a - base (both per event) as a penalty record. */
static void emit_delta(const char *name, const struct pm_result *a, const struct pm_result *base, double per_iter,
                       const char *base_name, const char *method, const char *reference, const char *suspect)
{
    struct json *j = emit_diff(name, a, per_iter, base, per_iter, method, reference, suspect);
    json_kv_double(j, "latency_cycles", a->cycles / per_iter);
    json_kv_str(j, "baseline", base_name);
    json_kv_double(j, "baseline_cycles", base->cycles / per_iter);
    plat_rec_end();
}


/* Chase chain over `bytes` of b (random lines, or one line per 4 KiB page). NULL when it cannot. */
static void *build_chain_p(struct plat_buf *b, const struct chain_params *pp, struct plat_buf *scratch,
                           size_t *lines);

static void *build_chain(struct plat_buf *b, uint64_t bytes, enum chain_mode mode, struct plat_buf *scratch,
                         struct chain_params *p, size_t *lines)
{
    *p = (struct chain_params){.bytes = (size_t)bytes, .line = 64, .page = 4096, .mode = mode,
                               .lines_per_page = mode == CHAIN_PAGE ? 1 : 0, .seed = plat_config()->seed ^ 0x9e17};
    return build_chain_p(b, p, scratch, lines);
}

/* The DRAM chain of the Table 2 local_DRAM row (bench/lat_table2.c row_dram), so that "dram_local" means one
 * thing in the whole tool: on pages of 2 MiB or more, page-by-page over 2 MiB units with the lines of a unit
 * in random order (every load a DRAM access, no TLB miss); on smaller pages one random cycle. */
static void *build_dram_chain(struct plat_buf *b, uint64_t bytes, struct plat_buf *scratch, struct chain_params *p,
                              size_t *lines)
{
    *p = (struct chain_params){.bytes = (size_t)bytes, .line = 64, .page = MiB(2),
                               .mode = b->page_bytes >= MiB(2) ? CHAIN_PAGE : CHAIN_RANDOM,
                               .seed = plat_config()->seed ^ 0x9e17};
    return build_chain_p(b, p, scratch, lines);
}

static void *build_chain_p(struct plat_buf *b, const struct chain_params *pp, struct plat_buf *scratch,
                           size_t *lines)
{
    struct chain_params p = *pp;
    size_t need = chain_scratch_bytes(&p);
    if (need == SIZE_MAX)
        return NULL;
    if (need && (!scratch->ptr || scratch->bytes < need)) {
        plat_free(scratch);
        if (plat_alloc(scratch, need, PLAT_PAGE_DEFAULT, -1, "penalty chain scratch") != 0)
            return NULL;
    }
    size_t n = 0;
    void *start = chain_build(b->ptr, &p, scratch->ptr, scratch->ptr ? scratch->bytes : 0, &n);
    if (!start || n % CHASE_UNROLL)
        return NULL;
    if (lines)
        *lines = n;
    /* One full pass, so TLBs and caches hold what they will hold before timing starts; in minimal mode
     * (emulated: no caches to warm) at most the latency benchmarks' LAT_MINIMAL_WARM_LOADS, not the DRAM
     * chain's 512 Ki loads. */
    size_t warm = plat_config()->minimal ? MIN(n, (size_t)LAT_MINIMAL_WARM_LOADS) : n;
    chase_run(start, warm / CHASE_UNROLL);
    return start;
}

/* The engine's setup of a chase replicate: replicate 0 chases the chain as built, replicate k a new random
 * permutation of the same lines (seed mixed with k), walked once; a DRAM-sized chain (lat_fresh_max_bytes)
 * goes on as it is. */
static int chase_setup(void *arg, size_t rep)
{
    struct pen_chase *c = arg;
    if (rep == 0)
        return MEAS_SETUP_FRESH;
    struct cache_sizes cs;
    cache_sizes_from_cpuid(plat_cpuinfo(), &cs);
    if (!c->b || c->cp.bytes > lat_fresh_max_bytes(&cs))
        return MEAS_SETUP_WARM;
    struct chain_params p = c->cp;
    uint64_t s = p.seed + rep;
    p.seed = splitmix64_next(&s);
    void *start = build_chain_p(c->b, &p, c->scratch, NULL);
    if (!start)
        return -1;
    c->p = start;
    return MEAS_SETUP_FRESH;
}

/* A chase as a job of a batch whose replicates interleave in time (pm_measure_interleaved): replicate k >= 1 on
 * a fresh permutation (chase_setup), and every replicate warmed up by one full pass over its chain, since the
 * other chases of the batch ran in between; a DRAM-sized chain (above lat_fresh_max_bytes: it goes on as it is
 * and misses every cache whatever ran before) keeps the short warm-up. */
static void chase_job(struct pen_chase *c, void *start, struct plat_buf *b, const struct chain_params *cp,
                      size_t lines, struct plat_buf *scratch, struct pm_result *r, struct pm_job *jb)
{
    *c = (struct pen_chase){.p = start, .b = b, .scratch = scratch, .cp = *cp, .lines = lines};
    struct cache_sizes cs;
    cache_sizes_from_cpuid(plat_cpuinfo(), &cs);
    *jb = (struct pm_job){loop_chase, c, opts, r, 0};
    jb->o.setup = chase_setup;
    /* minimal mode (emulated: no caches to warm) keeps the short warm-up, as build_chain_p's */
    if (!plat_config()->minimal && cp->bytes <= lat_fresh_max_bytes(&cs) && lines / CHASE_UNROLL > jb->o.warmup_iters)
        jb->o.warmup_iters = lines / CHASE_UNROLL;
}

/* The words: l1_hit at line 1 of the middle page (bytes 64..71), the line split at offset 60 of line 2 (188..195,
 * across lines 2 and 3), the page split at the last 4 bytes of the middle page (4092..4099 of it, into the third
 * page). The line split used to sit at 60..67, over the aligned word; apart, the three interleave. */
const struct pm_self_word pm_self_words[PM_SELF_N] = {
    [PM_SELF_L1] = {"l1_hit", 4096 + 64,
                    "self-pointing aligned 8-byte word: dependent loads hitting L1D, 8 per iteration"},
    [PM_SELF_LINE_SPLIT] = {CA_P_LINE_SPLIT, 4096 + 188,
                            "self-pointing 8-byte word at line offset 60 (crosses a 64-byte line) minus l1_hit"},
    [PM_SELF_PAGE_SPLIT] = {"page_split_load", 4096 + 4092,
                            "self-pointing 8-byte word at page offset 4092 (crosses a 4 KiB page) minus l1_hit"},
};

/* L1 hit, and the split loads: dependent loads of a self-pointing 8-byte word (each load returns its own
 * address), each loop on its own word (pm_self_words), their replicates interleaved in time. */
static void measure_l1_and_splits(struct pm_result *l1)
{
    /* 4 KiB pages, so that the page split really crosses into another page's translation. */
    static uint8_t fallback[PM_SELF_BUF_BYTES] __attribute__((aligned(4096)));
    struct plat_buf pb;
    uint8_t *page = fallback;
    uint64_t page_bytes = 0; /* the fallback's page size is not known */
    const char *page_how = NULL;
    if (plat_alloc(&pb, PM_SELF_BUF_BYTES, KiB(4), -1, "penalty split loads") == 0) {
        page = pb.ptr;
        page_bytes = pb.page_bytes;
        page_how = pb.page_how;
    }
    const char *ref = "PAG: L1D load-to-use 4 cycles; AMD BPM 4.6.1 misaligned accesses (event 47H); "
                      "MISALIGN_MEMORY / MISALIGNED_ACCESSES count them";
    struct pen_chase pc[PM_SELF_N];
    struct pm_result r[PM_SELF_N];
    struct pm_job jobs[PM_SELF_N];
    for (size_t i = 0; i < PM_SELF_N; i++) {
        uint8_t *w = page + pm_self_words[i].off;
        uintptr_t self = (uintptr_t)w;
        memcpy(w, &self, sizeof(self));
        pc[i] = (struct pen_chase){.p = w};
        jobs[i] = (struct pm_job){loop_self, &pc[i], opts, &r[i], 0};
    }
    pm_measure_interleaved(jobs, PM_SELF_N);
    for (size_t i = 0; i < PM_SELF_N; i++) {
        const char *name = pm_self_words[i].name, *method = pm_self_words[i].method;
        if (jobs[i].rc != 0) {
            emit_unavailable(name, "clock did not advance", ref);
            continue;
        }
        struct json *j;
        if (i == PM_SELF_L1) {
            *l1 = r[i];
            j = emit_lat(name, &r[i], SELF_LOADS, method, "PAG: L1D load-to-use latency 4 cycles (Nehalem)");
            json_kv_double(j, "latency_cycles", r[i].cycles / SELF_LOADS);
        } else if (jobs[PM_SELF_L1].rc != 0) {
            emit_unavailable(name, "its baseline l1_hit was not measured (clock did not advance)", ref);
            continue;
        } else {
            double a = r[i].cycles / SELF_LOADS, b = l1->cycles / SELF_LOADS;
            j = emit_diff(name, &r[i], SELF_LOADS, l1, SELF_LOADS, method, ref, NULL);
            json_kv_double(j, "latency_cycles", a);
            json_kv_str(j, "baseline", "l1_hit");
            json_kv_double(j, "baseline_cycles", b);
        }
        json_kv_uint(j, "page_bytes", page_bytes);
        json_kv_str(j, "page_how", page_how);
        json_kv_uint(j, "word_offset", pm_self_words[i].off);
        plat_rec_end();
    }
    if (page != fallback)
        plat_free(&pb);
}

/* L2, LLC and DRAM hits, the fill-buffer hit, as random chases in buffers of large pages. */
static void measure_hierarchy(const struct pm_result *l1, struct plat_buf *scratch)
{
    struct cache_sizes c;
    cache_sizes_or_nehalem(plat_cpuinfo(), &c);
    const struct plat_config *cfg = plat_config();
    uint64_t l2_ws = MAX(2 * c.l1, MIN(4 * c.l1, c.l2 / 2));
    uint64_t llc_ws = MAX(2 * c.l2, MIN(c.llc / 2, 4 * c.l2));
    uint64_t dram_cap = cfg->max_bytes, lim = plat_alloc_limit(-1) / 2;
    if (lim && (!dram_cap || lim < dram_cap))
        dram_cap = lim;
    uint64_t dram_ws = lat_dram_bytes(&c, cfg->quick, dram_cap); /* the local_DRAM row's working-set rule */
    struct plat_cpu me;
    int node = plat_cpu(0, &me) ? me.node : -1;

    static const char *ref_lfb = "PAG: MEM_LOAD_RETIRED.HIT_LFB; PEBS load-latency data source 0x2 'Fill Buffer Hit'";
    const struct {
        const char *name;
        uint64_t ws;
        bool full_latency; /* PAG: uncore penalties are the full latency (queue overlap cannot be corrected per core) */
        const char *method, *reference;
    } lv[] = {
        {CA_P_L2, l2_ws, false, "random chase (one cycle over 64-byte lines, large pages) sized for L2, minus l1_hit",
         "PAG: L2 hit 10 cycles, a penalty of ~6 cycles (the L2 - L1D latency difference)"},
        {CA_P_LLC, llc_ws, true, "random chase sized for the last-level cache, full latency (PAG: uncore penalties "
                                 "are not divided by queue occupancy)",
         "PAG Table 2: L3 hit, line unshared ~40 cycles"},
        {CA_P_DRAM, dram_ws, true, "the Table 2 local_DRAM chase (page-by-page over 2 MiB units on large pages, lines "
                                   "in random order; lat_dram_bytes working set) on the benchmark CPU's node, full latency",
         "PAG Table 2: local DRAM ~60 ns"},
    };
    /* The L2 and LLC chains built first, each in a buffer of its own, then measured together with their
     * replicates interleaved in time (replicate k of each in pass k; both buffers held at once, L2/2 more than
     * one at a time; a rebuild costs a pass over the chain). The DRAM chase comes after, its replicates back to
     * back on its one chain: interleaved with it (its chain built before them), the LLC chase read DRAM-like
     * latencies (143-454 cycles against 53-65) in 10 of 26 runs on the EPYC test guest, against 4 of 36 for the
     * back-to-back chases run alternately with it and 4 of 18 for this order (docs/bandwidth-branch-penalty.md). */
    static const size_t group_end[] = {2, ARRAY_SIZE(lv)};
    struct plat_buf b[ARRAY_SIZE(lv)];
    struct pen_chase pc[ARRAY_SIZE(lv)];
    struct pm_result r[ARRAY_SIZE(lv)];
    struct pm_job jobs[ARRAY_SIZE(lv)];
    size_t job_of[ARRAY_SIZE(lv)], n_jobs = 0;
    const char *why[ARRAY_SIZE(lv)];
    for (size_t g = 0, from = 0; g < ARRAY_SIZE(group_end); from = group_end[g++]) {
        n_jobs = 0;
        for (size_t i = from; i < group_end[g]; i++) {
            why[i] = NULL;
            b[i] = (struct plat_buf){0};
            if (lv[i].ws > c.llc / 2 && i == 1) {
                why[i] = "no working set between 2x L2 and LLC/2 (CPUID sizes)";
                continue;
            }
            if (plat_alloc(&b[i], lv[i].ws, PLAT_PAGE_LARGEST, i == 2 ? node : -1, "penalty chase") != 0) {
                why[i] = "buffer allocation failed";
                continue;
            }
            struct chain_params cp;
            size_t lines = 0;
            void *start = i == 2 ? build_dram_chain(&b[i], lv[i].ws, scratch, &cp, &lines)
                                 : build_chain(&b[i], lv[i].ws, CHAIN_RANDOM, scratch, &cp, &lines);
            if (!start) {
                why[i] = "chain build failed";
                continue;
            }
            job_of[i] = n_jobs;
            chase_job(&pc[i], start, &b[i], &cp, lines, scratch, &r[i], &jobs[n_jobs++]);
        }
        pm_measure_interleaved(jobs, n_jobs);
        for (size_t i = from; i < group_end[g]; i++) {
            if (!why[i] && jobs[job_of[i]].rc != 0)
                why[i] = "clock did not advance";
            if (why[i]) {
                emit_unavailable(lv[i].name, why[i], lv[i].reference);
                continue;
            }
            struct json *j;
            if (lv[i].full_latency) {
                j = emit_lat(lv[i].name, &r[i], CHASE_UNROLL, lv[i].method, lv[i].reference);
                json_kv_double(j, "latency_cycles", r[i].cycles / CHASE_UNROLL);
            } else {
                double la = r[i].cycles / CHASE_UNROLL, lb = l1->cycles / SELF_LOADS;
                j = emit_diff(lv[i].name, &r[i], CHASE_UNROLL, l1, SELF_LOADS, lv[i].method, lv[i].reference, NULL);
                json_kv_double(j, "latency_cycles", la);
                if (i == 0) /* the L2 latency itself: the third measurement of the Table 2 L2 row against the sweep */
                    crosscheck_note(XC_THIRD_L2_CYCLES, la, UNIT_CYCLES);
                json_kv_str(j, "baseline", "l1_hit");
                json_kv_double(j, "baseline_cycles", lb);
            }
            json_kv_uint(j, "bytes", lv[i].ws);
            json_kv_uint(j, "page_bytes", b[i].page_bytes);
            json_kv_str(j, "page_how", b[i].page_how);
            json_kv_int(j, "node", b[i].node);
            plat_rec_end();
            if (i == 2) { /* the same access pattern as the Table 2 row: the same latency; numa_latency of this node
                           * (an earlier benchmark, same chain and working-set rule) is the third */
                char third[LEDGER_NAME_MAX];
                fmt_snprintf(third, sizeof(third), "numa_latency/%d-%d", node, node);
                crosscheck_value("local DRAM latency (penalty dram_local vs Table 2 row)", "penalty/dram_local",
                                 r[i].ns / CHASE_UNROLL, UNIT_NS, "data_source/local_DRAM", node >= 0 ? third : NULL,
                                 XC_TOL_DRAM);
            }
        }
        for (size_t i = from; i < group_end[g]; i++)
            plat_free(&b[i]);
    }
    /* A fill-buffer hit waits only for the rest of a miss to the same line that is already in flight, so
     * what it costs depends on how long before the miss was issued: there is no single penalty to calibrate.
     * The former loop issued both loads from the same register in the same cycle, which measured the L2
     * hit again and made cycle accounting count those stalls twice (HIT_LFB and L2_HIT at one price). */
    emit_unavailable(CA_P_LFB,
                     "no single penalty exists: a fill-buffer hit waits for the remainder of an in-flight miss, "
                     "which depends on when that miss was issued (docs/bandwidth-branch-penalty.md)",
                     ref_lfb);
}

/* DTLB miss: the same page-by-page chase (one line per 4 KiB block, blocks in random order) over 4 KiB pages
 * (a page walk on every load) and over 2 MiB pages (none); the difference is the walk. */
static void measure_dtlb(struct plat_buf *scratch)
{
    const char *ref = "PAG: a miss in the shared TLB invokes the page walker (DTLB_LOAD_MISSES.WALK_COMPLETED); "
                      "Nehalem DTLB 64 + STLB 512 4K entries, 32 2M entries";
    uint64_t pages = plat_config()->quick ? 4096 : 8192; /* beyond any STLB (<= 2048 4K entries so far) */
    uint64_t bytes = pages * 4096;
    struct plat_buf b4, b2;
    if (plat_alloc(&b4, bytes, KiB(4), -1, "penalty dtlb 4k") != 0) {
        emit_unavailable(CA_P_DTLB, "no buffer with 4 KiB pages", ref);
        return;
    }
    if (plat_alloc(&b2, bytes, MiB(2), -1, "penalty dtlb 2m") != 0) {
        plat_free(&b4);
        emit_unavailable(CA_P_DTLB, "no buffer with 2 MiB pages", ref);
        return;
    }
    struct chain_params p4, p2;
    size_t n4 = 0, n2 = 0;
    void *s4 = build_chain(&b4, bytes, CHAIN_PAGE, scratch, &p4, &n4);
    void *s2 = build_chain(&b2, bytes, CHAIN_PAGE, scratch, &p2, &n2);
    struct pm_result r4, r2;
    /* The two chases' replicates interleaved in time: the difference is taken between figures of the same
     * moments, each replicate on a fresh permutation and warmed up by a full pass (chase_job). */
    struct pen_chase c4, c2;
    struct pm_job jobs[2];
    if (s4 && s2) {
        chase_job(&c4, s4, &b4, &p4, n4, scratch, &r4, &jobs[0]);
        chase_job(&c2, s2, &b2, &p2, n2, scratch, &r2, &jobs[1]);
    }
    if (!s4 || !s2 || pm_measure_interleaved(jobs, 2) != 0) {
        emit_unavailable(CA_P_DTLB, "chain or clock failure", ref);
    } else {
        double a = r4.cycles / CHASE_UNROLL, c2 = r2.cycles / CHASE_UNROLL;
        /* The difference is a page walk only if the buffers really have the pages asked for. */
        char why[160];
        const char *suspect = NULL;
        if (b4.page_bytes != KiB(4) || b2.page_bytes != MiB(2)) {
            fmt_snprintf(why, sizeof(why), "measured without the pages it asked for: 4 KiB buffer has %lu-byte pages, "
                         "2 MiB buffer has %lu-byte pages (0: unknown)", (unsigned long)b4.page_bytes,
                         (unsigned long)b2.page_bytes);
            suspect = why;
        }
        struct json *j = emit_diff(CA_P_DTLB, &r4, CHASE_UNROLL, &r2, CHASE_UNROLL,
                              "page-by-page chase (1 line per 4 KiB block, random block order) on 4 KiB pages minus "
                              "the same chase on 2 MiB pages",
                              ref, suspect);
        json_kv_double(j, "latency_4k_cycles", a);
        json_kv_double(j, "latency_2m_cycles", c2);
        json_kv_uint(j, "pages_4k", pages);
        json_kv_uint(j, "page_bytes_small", b4.page_bytes);
        json_kv_uint(j, "page_bytes_large", b2.page_bytes);
        json_kv_str(j, "page_how_small", b4.page_how);
        json_kv_str(j, "page_how_large", b2.page_how);
        plat_rec_end();
    }
    plat_free(&b4);
    plat_free(&b2);
}

static void measure_store_forwarding(void)
{
    static uint8_t slot[3 * 4096] __attribute__((aligned(4096)));
    struct pen_slot s = {slot + 4096, 0};
    memset(slot, 0, sizeof(slot));
    const char *ref = "PAG 'Store Forwarding': larger loads overlapping smaller stores cannot forward (no event; "
                      "Westmere LOAD_BLOCK.OVERLAP_STORE)";
    const char *ref_r = "Agner Fog, microarchitecture manual, Zen 2 'mirroring memory operands' (memory renaming; "
                        "also Zen 3 and later, Ice Lake and later): a load with the same address expression as an "
                        "earlier store gets its data at rename";
    struct pm_result ok, sz, off, ren, al, ctl;
    /* The six loops' replicates interleaved in time (pm_measure_interleaved); they share the slot as they did
     * measured one after the other, and each replicate warms up again. */
    struct pm_job jobs[] = {{loop_sf_ok, &s, opts, &ok, 0},    {loop_sf_renamed, &s, opts, &ren, 0},
                            {loop_sf_size, &s, opts, &sz, 0},  {loop_sf_offset, &s, opts, &off, 0},
                            {loop_alias, &s, opts, &al, 0},    {loop_alias_control, &s, opts, &ctl, 0}};
    pm_measure_interleaved(jobs, ARRAY_SIZE(jobs));
    if (jobs[0].rc != 0) {
        emit_unavailable("store_forward", "clock did not advance", ref);
        return;
    }
    emit_latency("store_forward", &ok, 8,
                 "dependent 8-byte store -> 4-byte load of its upper half (+4): contained, so forwarded from the store "
                 "queue, and no renamer can hand the load part of a register; 8 per iteration",
                 ref);
    if (jobs[1].rc == 0)
        emit_latency("store_forward_renamed", &ren, 8,
                     "dependent 8-byte store -> 8-byte load through the same register and displacement: what memory "
                     "renaming makes of it where the core has it (not used by cycle accounting)",
                     ref_r);
    /* The failures are the extra cost over a forwarded pair: a baseline the renamer took anyway (under a cycle)
     * would inflate them. */
    static char base_why[240];
    const char *base_bad = NULL;
    if (sub_cycle("store_forward", ok.cycles / 8)) {
        fmt_snprintf(base_why, sizeof(base_why), "its baseline store_forward ran under 1 cycle per pair (%.2f): "
                     "renamed, not forwarded", ok.cycles / 8);
        base_bad = base_why;
    }
    if (jobs[2].rc == 0)
        emit_delta(CA_P_SF_FAIL, &sz, &ok, 8, "store_forward",
                   "4-byte store -> 8-byte load of the same address (larger load over a smaller store) minus "
                   "store_forward", ref, base_bad);
    if (jobs[3].rc == 0)
        emit_delta("store_forward_fail_offset", &off, &ok, 8, "store_forward",
                   "8-byte store -> 8-byte load at +4 (partial overlap) minus store_forward", ref, base_bad);

    const char *ref_a = "PAG 'Store Forwarding': 4K aliasing, PARTIAL_ADDRESS_ALIAS (event 07H, umask 01H)";
    if (jobs[4].rc == 0 && jobs[5].rc == 0)
        emit_delta(CA_P_ALIAS, &al, &ctl, 8, "4k_alias_control",
                   "dependent loads from p+4096 each after a store to p (same bits 11:0) minus the same with the "
                   "store to p+64", ref_a, NULL);
    else
        emit_unavailable(CA_P_ALIAS, "clock did not advance", ref_a);
}

struct div_busy {
    struct pen_div d;
    uint64_t iters;
};
static void div_busy_run(void *arg)
{
    struct div_busy *b = arg;
    loop_div64(&b->d, b->iters);
}

static void measure_divider(void)
{
    const char *ref = "PAG: divide and sqrt are the very long latency instructions; ARITH.CYCLES_DIV_BUSY "
                      "(14H/01H) counts the divider's busy cycles";
    /* The three chains' replicates interleaved in time (pm_measure_interleaved), each with its own operand. */
    struct pen_div d64 = {.x = 0x7FFFFFFFFFFFFFFFull, .d = 1.2345678901234567}, d32 = {.x = 0x7FFFFFFFu, .d = 0},
                   dsd = {.x = 0, .d = 1.2345678901234567};
    struct pm_result r64, r32, rsd;
    struct pm_job jobs[] = {{loop_div64, &d64, opts, &r64, 0}, {loop_div32, &d32, opts, &r32, 0},
                            {loop_divsd, &dsd, opts, &rsd, 0}};
    pm_measure_interleaved(jobs, ARRAY_SIZE(jobs));
    if (jobs[0].rc == 0) {
        /* ARITH.CYCLES_DIV_BUSY per DIV, where the PMU counts it (before the record: the PMU code emits its own). */
        struct ca_event ev = {.candidates = ca_ev_div_busy};
        struct div_busy b = {{0x7FFFFFFFFFFFFFFFull, 0}, 1u << 16};
        char why[160];
        bool busy = ca_count(&ev, 1, div_busy_run, &b, why, sizeof(why)) == 1 && ev.used;
        struct json *j = emit_lat("div_r64", &r64, 8,
                                  "dependent DIV r64 chain (quotient = next dividend, RDX zeroed, divisor 1, dividend "
                                  "2^63-1), latency per DIV", ref);
        if (busy) {
            json_kv_double(j, "div_busy_cycles_per_div", (double)ev.count / (double)(b.iters * 8));
            json_kv_str(j, "div_busy_event", ev.used);
        } else {
            json_kv_null(j, "div_busy_cycles_per_div");
            json_kv_str(j, "div_busy_reason", why);
        }
        plat_rec_end();
    }
    if (jobs[1].rc == 0)
        emit_latency("div_r32", &r32, 8, "dependent DIV r32 chain (EDX zeroed, divisor 1, dividend 2^31-1)", ref);
    if (jobs[2].rc == 0)
        emit_latency("divsd", &rsd, 8, "dependent DIVSD chain (x / (1 + 2^-52))", ref);
}

/* l1_hit against the Table 2 L1 row in core cycles: two dependent-load chains that hit the L1D (a self-pointing
 * word here, a random cycle over half the L1D there) take the same cycles per load. Each side in the cycles of
 * its own time: the row's as its record states them (its replicates' own ratios), else its ns with the ratio
 * this benchmark converts with; not judged when the latency benchmark did not run first. The
 * sweep's plateau at the row's footprint, in its own cycles, is the third measurement that decides which side
 * a disagreement blames. */
static void crosscheck_l1(const struct pm_result *l1)
{
    static char third[LEDGER_NAME_MAX];
    double plateau = 0;
    const char *pl = lat_table2_sweep_plateau("L1", &plateau);
    if (pl) {
        fmt_snprintf(third, sizeof(third), "%s.cycles", pl);
        crosscheck_note(third, plateau, UNIT_CYCLES);
    }
    const struct ledger_entry *row = ledger_find("data_source/L1");
    const char *method;
    double ratio = clock_core_ratio(&method), row_cycles = lat_table2_row_cycles("L1");
    struct crosscheck xc = {.quantity = "L1D hit latency in cycles (penalty l1_hit vs Table 2 L1 row)",
                            .a = "penalty/l1_hit", .b = "data_source/L1",
                            .why = row_cycles > 0 ? "each side in core cycles converted with the core/TSC ratio of "
                                                    "its own time (the row's replicates', l1_hit's replicates')"
                                                  : "the row's ns converted to core cycles with this benchmark's "
                                                    "core/TSC ratio",
                            .a_value = l1->cycles / SELF_LOADS, .b_value = __builtin_nan(""), .unit = UNIT_CYCLES,
                            .tolerance = XC_TOL_LATENCY, .third = pl ? third : NULL};
    if (!l1->tsc.n)
        xc.not_judged = "l1_hit was not measured";
    else if (!row)
        xc.not_judged = "data_source/L1 was not measured in this run (the latency benchmark runs before this one)";
    else if (row->q == QUALITY_UNAVAILABLE || !(row->median > 0))
        xc.not_judged = "data_source/L1 has no value";
    else
        xc.b_value = row_cycles > 0 ? row_cycles : row->median * (double)plat_tsc_hz() * 1e-9 * ratio;
    crosscheck_emit(&xc);
}

/* Core clock vs L1 load latency (docs/measurement.md "The L1 latency as a clock check"): l1_hit, a self-pointing
 * word hitting the L1D, in the cycles of its replicates' own chain draws (its CI holds their reading uncertainty,
 * stats_scale_unc), against the integer an L1 hit takes; after every penalty, so that a blamed conversion marks
 * them all. Nothing where its cycles did not come from the chain draws (a cycle counter, emulation). */
static void clock_l1_penalty(const struct pm_result *l1)
{
    const struct ledger_entry *e = ledger_find("penalty/l1_hit");
    if (!e || e->q == QUALITY_UNAVAILABLE || !(e->median > 0) || !l1->tsc.n || !clock_method_is_chains(l1->cycles_method))
        return;
    struct clock_l1_reading r = clock_l1_reading_of(e->median, e->median, e->ci_lo, e->ci_hi, 0);
    clock_l1_check("penalty/l1_hit", &r, 1);
}

void bench_penalty(void)
{
    pm_opts_profile(&opts);
    n_rows = 0;
    struct plat_buf scratch = {0};
    struct pm_result l1 = {0};
    struct plat_cpu self = {0};
    plat_cpu(0, &self);
    plat_printf("  penalties on CPU %u (%s profile); cycles = TSC ticks x core/TSC ratio unless a PMU counted them\n",
                self.id, plat_config()->quick ? "quick" : "full");
    measure_l1_and_splits(&l1);
    crosscheck_l1(&l1);
    measure_hierarchy(&l1, &scratch);
    measure_dtlb(&scratch);
    measure_store_forwarding();
    measure_divider();
    plat_free(&scratch);
    clock_l1_penalty(&l1);

    plat_printf("  %-26s %18s %10s %-8s %s\n", "penalty", "cycles +-95% CI", "ns", "quality", "method");
    size_t marked = 0;
    for (size_t i = 0; i < n_rows; i++) {
        char m[72], v[32];
        fmt_snprintf(m, sizeof(m), "%s", rows[i].method);
        fmt_snprintf(v, sizeof(v), "%.2f +-%.2f", rows[i].cycles, rows[i].half);
        /* the verdict after this benchmark's cross-checks (dram_local vs the Table 2 row, l1_hit vs the L1 row) */
        char fig[LEDGER_NAME_MAX], q[16];
        fmt_snprintf(fig, sizeof(fig), "penalty/%s", rows[i].name);
        enum quality fq = ledger_final_quality(fig, rows[i].q, NULL);
        fmt_snprintf(q, sizeof(q), "%s%s", quality_name(fq), fq != rows[i].q ? "*" : "");
        marked += fq != rows[i].q;
        plat_printf("  %-26s %18s %10.2f %-8s %s%s\n", rows[i].name, v, rows[i].ns, q, m,
                    strlen(rows[i].method) >= sizeof(m) ? "..." : "");
    }
    if (marked)
        plat_printf("  (*: made suspect by a cross-check; the penalty record keeps its own quality)\n");
    plat_printf("  (suspect penalties are not used by cycle accounting; the reason is in each record's "
                "quality_reason)\n");
}
