/* branch.c - branch-prediction microbenchmarks: the loops (inline asm where the exact branch matters), their
 * timing through the penalty module's protocol, and the misprediction counts from the PMU or the known
 * random fraction. */
#include "bench/branch.h"
#include "measure/engine.h"
#include "measure/stats_json.h"
#include "bench/cycle_accounting.h"
#include "bench/penalty.h"
#include "bench/platform.h"
#include "measure/rand.h"
#include "measure/verdict.h"
#include "kernel/fmt.h"

/* ---- loops ------------------------------------------------------------------------------------------------- */

TIMED_FN uint64_t branch_lfsr_loop(uint32_t *state, uint32_t mask, uint64_t iters)
{
    uint32_t s = *state;
    uint64_t acc = 0;
    if (!iters)
        return 0;
    /* out = s & 1; s = (s >> 1) ^ (-out & TAPS): lfsr32_step, with the out bit then tested by the one
     * measured branch (jz). */
    __asm__ volatile("1:\n\t"
                     "mov %[s], %%ecx\n\t"
                     "and $1, %%ecx\n\t"
                     "shr $1, %[s]\n\t"
                     "mov %%ecx, %%edx\n\t"
                     "neg %%edx\n\t"
                     "and %[taps], %%edx\n\t"
                     "xor %%edx, %[s]\n\t"
                     "and %[m], %%ecx\n\t"
                     "jz 2f\n\t"
                     "add $1, %[acc]\n"
                     "2:\n\t"
                     "dec %[n]\n\t"
                     "jnz 1b"
                     : [s] "+r"(s), [acc] "+r"(acc), [n] "+r"(iters)
                     : [m] "r"(mask), [taps] "i"(LFSR32_TAPS)
                     : "rcx", "rdx", "cc");
    *state = s;
    return acc;
}

TIMED_FN uint64_t branch_pattern_loop(const uint8_t *pat, uint64_t pmask, uint64_t *i, uint64_t iters)
{
    uint64_t k = *i, acc = 0;
    if (!iters)
        return 0;
    __asm__ volatile("1:\n\t"
                     "mov %[k], %%rcx\n\t"
                     "and %[pm], %%rcx\n\t"
                     "movzbl (%[p],%%rcx), %%ecx\n\t"
                     "inc %[k]\n\t"
                     "test %%ecx, %%ecx\n\t"
                     "jz 2f\n\t"
                     "add $1, %[acc]\n"
                     "2:\n\t"
                     "dec %[n]\n\t"
                     "jnz 1b"
                     : [k] "+r"(k), [acc] "+r"(acc), [n] "+r"(iters)
                     : [p] "r"(pat), [pm] "r"(pmask)
                     : "rcx", "memory", "cc");
    *i = k;
    return acc;
}

typedef uint64_t (*br_target_fn)(uint64_t);

/* 64 distinct targets, target 8a+k returning x + 8a+k (different constants, so identical-code folding
 * cannot merge them). */
#define BR_T(a, k)                                                                                            \
    static __attribute__((noipa)) uint64_t br_t##a##k(uint64_t x) { return x + (a * 8 + k); }
#define BR_T8(a) BR_T(a, 0) BR_T(a, 1) BR_T(a, 2) BR_T(a, 3) BR_T(a, 4) BR_T(a, 5) BR_T(a, 6) BR_T(a, 7)
BR_T8(0) BR_T8(1) BR_T8(2) BR_T8(3) BR_T8(4) BR_T8(5) BR_T8(6) BR_T8(7)
#define BR_R8(a) br_t##a##0, br_t##a##1, br_t##a##2, br_t##a##3, br_t##a##4, br_t##a##5, br_t##a##6, br_t##a##7
static const br_target_fn br_targets[BRANCH_MAX_TARGETS] = {BR_R8(0), BR_R8(1), BR_R8(2), BR_R8(3),
                                                            BR_R8(4), BR_R8(5), BR_R8(6), BR_R8(7)};

TIMED_FN uint64_t branch_indirect_loop(const uint8_t *idx, uint64_t imask, uint64_t *i, uint64_t acc, uint64_t iters)
{
    uint64_t k = *i;
    for (uint64_t n = 0; n < iters; n++) {
        br_target_fn f = br_targets[idx[k & imask] & (BRANCH_MAX_TARGETS - 1)];
        acc = f(acc); /* the measured indirect call (its return is predicted by the return stack) */
        k++;
    }
    *i = k;
    return acc;
}

/* Two call sites per level; the asm statements differ so the compiler cannot merge them into one. */
__attribute__((noipa)) uint64_t branch_recurse(uint64_t depth, uint64_t sites)
{
    if (!depth)
        return 0;
    uint64_t r;
    if ((sites >> (depth & 63)) & 1) {
        __asm__ volatile("nop");
        r = branch_recurse(depth - 1, sites);
        __asm__ volatile("" : "+r"(r)); /* work after the call: no tail call, no accumulator rewrite */
        r += 1;
    } else {
        __asm__ volatile("nop\n\tnop");
        r = branch_recurse(depth - 1, sites);
        __asm__ volatile("" : "+r"(r));
        r += 2;
    }
    return r;
}

/* ---- pure helpers -------------------------------------------------------------------------------------------- */

void branch_pattern(uint8_t *pat, size_t n, uint64_t seed)
{
    struct lfsr32 l;
    lfsr32_seed(&l, seed);
    for (size_t i = 0; i < n; i++)
        pat[i] = (uint8_t)lfsr32_step(&l);
}

void branch_targets(uint8_t *idx, size_t n, unsigned targets, uint64_t seed)
{
    unsigned bits = 0;
    bool ok = targets >= 1 && targets <= BRANCH_MAX_TARGETS && IS_POW2(targets);
    while (ok && (1u << bits) < targets)
        bits++;
    struct lfsr32 l;
    lfsr32_seed(&l, seed);
    for (size_t i = 0; i < n; i++)
        idx[i] = ok && bits ? (uint8_t)lfsr32_bits(&l, bits) : 0;
}

static bool is_finite(double v) { return v == v && v - v == 0; }

double branch_misp_estimate(double cycles, double base, double penalty)
{
    if (!is_finite(cycles) || !is_finite(base) || !is_finite(penalty) || !(penalty > 0))
        return __builtin_nan("");
    double r = (cycles - base) / penalty;
    return r < 0 ? 0 : r > 1 ? 1 : r;
}

long branch_learned_period(const unsigned *period, const double *rate, size_t n, double threshold)
{
    long best = -1;
    for (size_t i = 0; i < n; i++) {
        if (!(rate[i] <= threshold)) /* NaN counts as not learned */
            break;
        best = period[i];
    }
    return best;
}

long branch_rsb_estimate(const unsigned *depth, const double *t, size_t n, unsigned fit_max, double tol)
{
    /* Least-squares line t = a + b d over the shallow depths, where every return is predicted. */
    double sx = 0, sy = 0, sxx = 0, sxy = 0;
    size_t m = 0;
    for (size_t i = 0; i < n && depth[i] <= fit_max; i++) {
        if (!is_finite(t[i]))
            return -1;
        sx += depth[i];
        sy += t[i];
        sxx += (double)depth[i] * depth[i];
        sxy += depth[i] * t[i];
        m++;
    }
    double den = (double)m * sxx - sx * sx;
    if (m < 3 || den == 0)
        return -1;
    double b = ((double)m * sxy - sx * sy) / den, a = (sy - b * sx) / (double)m;
    for (size_t i = m; i + 1 < n; i++) {
        double lim0 = (a + b * depth[i]) * (1 + tol) + 2, lim1 = (a + b * depth[i + 1]) * (1 + tol) + 2;
        if (t[i] > lim0 && t[i + 1] > lim1)
            return depth[i - 1];
    }
    return -1;
}

/* ---- measurement ------------------------------------------------------------------------------------------------- */

static struct pm_opts opts;
static uint8_t pat_buf[1u << 16];
static uint8_t idx_buf[1u << 16];

struct br_lfsr_arg {
    uint32_t state, mask;
    uint64_t acc;
};
static void pm_lfsr(void *a, uint64_t iters)
{
    struct br_lfsr_arg *x = a;
    x->acc += branch_lfsr_loop(&x->state, x->mask, iters);
}

struct br_pat_arg {
    const uint8_t *pat;
    uint64_t mask, i, acc;
};
static void pm_pattern(void *a, uint64_t iters)
{
    struct br_pat_arg *x = a;
    x->acc += branch_pattern_loop(x->pat, x->mask, &x->i, iters);
}

static void pm_indirect(void *a, uint64_t iters)
{
    struct br_pat_arg *x = a;
    x->acc = branch_indirect_loop(x->pat, x->mask, &x->i, x->acc, iters);
}

struct br_rec_arg {
    uint64_t depth, sites, acc;
};
static void pm_recurse(void *a, uint64_t iters)
{
    struct br_rec_arg *x = a;
    for (uint64_t n = 0; n < iters; n++)
        x->acc += branch_recurse(x->depth, x->sites);
}

/* ---- events: per kind of branch, per PMU family (docs/pmu.md, "Events per benchmark and model") ------------
 * Each list counts the kind of branch its test mispredicts. A family without an event of that kind counts
 * every mispredicted branch instead (the record says so in event_note); an event of another kind (e.g. bare
 * BR_MISP_RETIRED, whose libpfm4 default on Nehalem is NEAR_CALL, C5H/02H) is in no list. */

/* The LFSR and pattern loops: one conditional jz per iteration, the loop's own jnz always taken. */
const char *const branch_ev_cond[] = {
    CA_ON(CA_T_NHM, "BR_MISP_EXEC:COND"),                         /* [PAG] Table 18: 89H/01H */
    CA_ON(CA_T_ARCH, "MISPREDICTED_BRANCH_RETIRED"),              /* every branch: SDM Table 18-1 C5H/00H */
    CA_ON(CA_T_AMD, "RETIRED_MISPREDICTED_BRANCH_INSTRUCTIONS"),  /* every branch: [AMD] 4.5.1 C3H */
    CA_ON(CA_T_ZEN, "RETIRED_BRANCH_INSTRUCTIONS_MISPREDICTED"),  /* every branch: C3H */
    CA_ON(CA_T_P4, "retired_mispred_branch_type:CONDITIONAL"),   /* [P4] retired-mispred-branch-type conditional */
    NULL};
/* branch_indirect_loop: `acc = f(acc)` through the target table is an indirect near call (`call *` with a
 * memory operand in the image); the target's ret is predicted by the return stack (one level deep), so indirect
 * jumps (INDIRECT_NON_CALL, 89H/04H) and returns are not what this test mispredicts. */
const char *const branch_ev_indirect[] = {
    CA_ON(CA_T_NHM, "BR_MISP_EXEC:INDIRECT_NEAR_CALL"),              /* [PAG] Table 18: 89H/20H */
    CA_ON(CA_T_ARCH, "MISPREDICTED_BRANCH_RETIRED"),                 /* every branch */
    CA_ON(CA_T_AMD, "RETIRED_INDIRECT_BRANCHES_MISPREDICTED"),       /* CAH, family 10h BKDG: indirect jumps+calls */
    CA_ON(CA_T_ZEN, "RETIRED_INDIRECT_BRANCH_INSTRUCTIONS_MISPREDICTED"), /* CAH */
    CA_ON(CA_T_P4, "retired_mispred_branch_type:CALL"),             /* [P4]: "indirect call branches" */
    NULL};
/* branch_recurse: direct calls (always predicted) and near returns whose targets alternate between two call
 * sites, which only the return stack predicts. */
const char *const branch_ev_return[] = {
    CA_ON(CA_T_NHM, "BR_MISP_EXEC:RETURN_NEAR"),                  /* [PAG] Table 18: 89H/08H */
    CA_ON(CA_T_ARCH, "MISPREDICTED_BRANCH_RETIRED"),              /* every branch */
    CA_ON(CA_T_AMD " " CA_T_ZEN, "RETIRED_NEAR_RETURNS_MISPREDICTED"), /* [AMD] 4.5.2 Mispred_near_ret: C9H */
    CA_ON(CA_T_P4, "retired_mispred_branch_type:RETURN"),        /* [P4] retired-mispred-branch-type return */
    NULL};

/* Events of a list that count every mispredicted branch, not only the list's kind. */
static bool counts_every_branch(const char *spec)
{
    static const char *const every[] = {"MISPREDICTED_BRANCH_RETIRED", "RETIRED_MISPREDICTED_BRANCH_INSTRUCTIONS",
                                        "RETIRED_BRANCH_INSTRUCTIONS_MISPREDICTED"};
    for (size_t i = 0; spec && i < ARRAY_SIZE(every); i++)
        if (!strcmp(spec, every[i]))
            return true;
    return false;
}

/* What pmu_misp counted: the event (NULL: none), and the note for the record (fallbacks, refusals, scope). */
struct br_event {
    const char *event;
    char note[CA_NOTE_MAX + 96];
};

struct br_count_arg {
    pm_loop_fn fn;
    void *arg;
    uint64_t iters;
};
static void br_count_run(void *a)
{
    struct br_count_arg *c = a;
    c->fn(c->arg, c->iters);
}
/* Mispredicted branches per iteration, counted by the PMU around `iters` iterations with the first event of
 * `events` this PMU takes; NaN without one. kind names the list's branches for the note ("conditional", ...). */
static double pmu_misp(const char *const *events, const char *kind, pm_loop_fn fn, void *arg, uint64_t iters,
                       struct br_event *out)
{
    struct ca_event ev = {.candidates = events};
    struct br_count_arg c = {fn, arg, iters};
    char why[128];
    out->event = NULL;
    out->note[0] = 0;
    int n = ca_count(&ev, 1, br_count_run, &c, why, sizeof(why));
    fmt_snprintf(out->note, sizeof(out->note), "%s", ev.note);
    if (n != 1 || !ev.used)
        return __builtin_nan("");
    out->event = ev.used;
    if (counts_every_branch(ev.used)) {
        size_t o = strlen(out->note);
        fmt_snprintf(out->note + o, sizeof(out->note) - o,
                     "%s%s counts every mispredicted branch: this PMU has no %s-only event", o ? "; " : "", ev.used,
                     kind);
    }
    return (double)ev.count / (double)iters;
}

/* The event keys of a record: event (null when none counted) and event_note (only when there is one). */
static void event_json(struct json *j, const struct br_event *e)
{
    json_kv_str(j, "event", e ? e->event : NULL);
    if (e && e->note[0])
        json_kv_str(j, "event_note", e->note);
}

static double ticks_ns(double t)
{
    uint64_t hz = plat_tsc_hz();
    return hz ? t * 1e9 / (double)hz : 0;
}

/* One `branch` record. per: measured branches per iteration; period/targets/depth < 0: not applicable. */
static void rec_point(const char *test, long period, long targets, long depth, const struct pm_result *r, double per,
                      double rate, const char *rate_method, const struct br_event *ev)
{
    struct json *j = plat_rec_begin("branch");
    json_kv_str(j, "test", test);
    if (period >= 0)
        json_kv_int(j, "period", period);
    else
        json_kv_null(j, "period");
    if (targets >= 0)
        json_kv_int(j, "targets", targets);
    if (depth >= 0)
        json_kv_int(j, "depth", depth);
    struct stats c;
    pm_cycles_stats(r, per, &c);
    struct verdict v;
    verdict_from_stats(&v, &c, r->cyc_converged, meas_ci_target(plat_config()->quick),
                       meas_min_samples(plat_config()->quick));
    char name[LEDGER_NAME_MAX];
    fmt_snprintf(name, sizeof(name), "branch/%s/%ld/%ld/%ld", test, period, targets, depth);
    figure_json(j, name, &c, UNIT_CYCLES, &v); /* per branch */
    stats_json_also(j, UNIT_NS, r->ns / per);
    json_kv_double(j, "mispredict_rate", rate);
    json_kv_str(j, "method", rate_method);
    event_json(j, ev);
    json_kv_str(j, "cycles_method", r->cycles_method);
    plat_rec_end();
}

/* Conditional branch on LFSR bits vs the same loop with the bit masked off: the penalty. */
static double measure_penalty(const char **method_out)
{
    static char method[160];
    uint64_t seed = plat_config()->seed;
    struct br_lfsr_arg pred = {.mask = 0}, rnd = {.mask = 1};
    struct lfsr32 l;
    lfsr32_seed(&l, seed);
    pred.state = rnd.state = l.state;
    struct pm_result rp, rr;
    /* the two loops' replicates interleaved in time, so both see the same moments */
    struct pm_job jobs[2] = {{pm_lfsr, &pred, opts, &rp, 0}, {pm_lfsr, &rnd, opts, &rr, 0}};
    if (pm_measure_interleaved(jobs, 2) != 0) {
        *method_out = "clock did not advance";
        return __builtin_nan("");
    }
    static struct br_event ev_p, ev_r;
    double mp = pmu_misp(branch_ev_cond, "conditional", pm_lfsr, &pred, rp.iters_per_sample, &ev_p);
    double mr = pmu_misp(branch_ev_cond, "conditional", pm_lfsr, &rnd, rr.iters_per_sample, &ev_r);
    double penalty, rate_p, rate_r;
    const char *rate_method;
    if (is_finite(mp) && is_finite(mr) && mr > mp) {
        penalty = pm_penalty(rr.cycles, rp.cycles, mr, mp);
        fmt_snprintf(method, sizeof(method), "pmu:%s: (cycles_random - cycles_predictable) / (mispredicts_random - "
                                             "mispredicts_predictable), per iteration", ev_r.event);
        rate_p = mp;
        rate_r = mr;
        rate_method = "pmu";
    } else {
        /* The LFSR's output bit is unpredictable to any history-based predictor: half the outcomes differ
         * from any guess, so half of the random branches mispredict and (almost) none of the masked ones. */
        penalty = (rr.cycles - rp.cycles) / 0.5;
        fmt_snprintf(method, sizeof(method), "known_random_fraction: (cycles_random - cycles_predictable) / 0.5 "
                                             "(LFSR x^32+x^22+x^2+x+1 bits: half mispredict)%s",
                     ca_can_count(NULL) ? "; the PMU mispredict count was unusable" : "");
        rate_p = 0;
        rate_r = 0.5;
        rate_method = "known_random_fraction";
    }
    rec_point("cond_predictable", 1, -1, -1, &rp, 1, rate_p, rate_method, &ev_p);
    rec_point("cond_random", -1, -1, -1, &rr, 1, rate_r, rate_method, &ev_r);

    double dt = rr.tsc.median - rp.tsc.median;
    double frac = rate_r - rate_p;
    /* The figure: (random - predictable) cycles per branch over the mispredict difference. */
    struct stats cr, cp, d;
    pm_cycles_stats(&rr, 1, &cr);
    pm_cycles_stats(&rp, 1, &cp);
    pm_stats_diff(&cr, &cp, &d);
    double den = rate_method[0] == 'p' ? mr - mp : 0.5;
    stats_scale(&d, 1 / den);
    d.median = penalty;
    struct verdict v;
    pm_penalty_verdict(&v, &d, rr.cyc_converged && rp.cyc_converged, meas_ci_target(plat_config()->quick),
                       meas_min_samples(plat_config()->quick));
    struct json *j = pm_penalty_begin(
        CA_P_BRANCH, &d, frac > 0 ? ticks_ns(dt) / frac : __builtin_nan(""), &v, method,
        "PAG 'Branch mispredictions, Wasted Work, Misprediction Penalties'; mispredicts: PAG Table 18 "
        "BR_MISP_EXEC.COND (89H/01H), AMD BPM 4.5.1 (C3H); docs/pmu.md 'Events per benchmark and model'",
        rr.cycles_method);
    event_json(j, &ev_r);
    json_kv_double(j, "cycles_random", rr.cycles);
    json_kv_double(j, "cycles_predictable", rp.cycles);
    json_kv_double(j, "mispredicts_random", rate_r);
    json_kv_double(j, "mispredicts_predictable", rate_p);
    plat_rec_end();
    if (is_finite(penalty))
        ca_penalty_set(CA_P_BRANCH, penalty, v.q, v.reason);
    plat_printf("  conditional branch: predictable %.2f, random %.2f cycles/branch -> misprediction penalty %.1f "
                "cycles (%s)\n",
                rp.cycles, rr.cycles, penalty, rate_method);
    *method_out = rate_method;
    return penalty;
}

#define BR_MAX_POINTS 70

static long measure_patterns(double penalty)
{
    bool quick = plat_config()->quick;
    unsigned max_log = quick ? 14 : 16, step = quick ? 2 : 1;
    unsigned period[BR_MAX_POINTS];
    double rate[BR_MAX_POINTS];
    size_t n = 0;
    double base = 0;
    branch_pattern(pat_buf, sizeof(pat_buf), plat_config()->seed ^ 0x5157);
    plat_printf("  pattern period sweep (LFSR pattern repeated): period  cycles/branch  mispredict rate\n");
    /* Every period's replicates interleaved in time (pm_measure_interleaved): a pass over the periods per
     * replicate. The loops share pat_buf read-only; each has its own position. */
    static struct br_pat_arg a[BR_MAX_POINTS];
    static struct pm_result res[BR_MAX_POINTS];
    static struct pm_job jobs[BR_MAX_POINTS];
    unsigned lgs[BR_MAX_POINTS];
    size_t nj = 0;
    for (unsigned lg = 0; lg <= max_log && nj < BR_MAX_POINTS && nj < PM_MAX_JOBS; lg += (lg == 0 ? 1 : step)) {
        uint64_t p = 1ull << lg;
        a[nj] = (struct br_pat_arg){pat_buf, p - 1, 0, 0};
        jobs[nj] = (struct pm_job){pm_pattern, &a[nj], opts, &res[nj], 0};
        jobs[nj].o.warmup_iters = 8 * p + 1024; /* let the predictor see the pattern several times */
        lgs[nj++] = lg;
    }
    pm_measure_interleaved(jobs, nj);
    for (size_t i = 0; i < nj; i++) {
        unsigned lg = lgs[i];
        uint64_t p = 1ull << lg;
        if (jobs[i].rc != 0)
            continue;
        const struct pm_result *r = &res[i];
        if (lg == 0)
            base = r->cycles;
        static struct br_event ev;
        double m = pmu_misp(branch_ev_cond, "conditional", pm_pattern, &a[i], r->iters_per_sample, &ev);
        const char *how = "pmu";
        if (!is_finite(m)) {
            m = branch_misp_estimate(r->cycles, base, penalty);
            how = "estimate: (cycles - cycles at period 1) / branch_mispredict penalty";
        }
        rec_point("pattern", (long)p, -1, -1, r, 1, m, how, &ev);
        plat_printf("    %8lu  %12.2f  %8.3f\n", (unsigned long)p, r->cycles, m);
        period[n] = (unsigned)p;
        rate[n++] = m;
    }
    return branch_learned_period(period, rate, n, 0.05);
}

#define BR_INDIRECT_COUNTS 7 /* 1, 2, 4, ..., BRANCH_MAX_TARGETS targets */

/* Random and cyclic order for every target count, the 14 loops' replicates interleaved in time
 * (pm_measure_interleaved). Each random loop needs its own 64 Ki sequence for that: a buffer of
 * BR_INDIRECT_COUNTS sequences; where none can be had, one count at a time (its two loops interleaved) in
 * idx_buf. */
static void measure_indirect(double penalty)
{
    uint64_t seed = plat_config()->seed ^ 0x1d1;
    plat_printf("  indirect call with N targets: N  random cycles/call  cyclic cycles/call\n");
    double base = 0;
    static uint8_t cyc[BRANCH_MAX_TARGETS]; /* cyclic order 0, 1, ..., t-1 (masked by t - 1) */
    for (unsigned k = 0; k < BRANCH_MAX_TARGETS; k++)
        cyc[k] = (uint8_t)k;
    struct plat_buf pb;
    bool all = plat_alloc(&pb, BR_INDIRECT_COUNTS * sizeof(idx_buf), PLAT_PAGE_DEFAULT, -1,
                          "branch indirect-call target sequences") == 0;
    static struct br_pat_arg ar[BR_INDIRECT_COUNTS], ac[BR_INDIRECT_COUNTS];
    static struct pm_result rr[BR_INDIRECT_COUNTS], rc[BR_INDIRECT_COUNTS];
    static struct pm_job jobs[2 * BR_INDIRECT_COUNTS];
    unsigned t = 1;
    for (size_t i = 0; i < BR_INDIRECT_COUNTS; i++, t *= 2) {
        /* Random order: 64 Ki LFSR-chosen targets, too long a sequence to memorize. */
        uint8_t *seq = all ? (uint8_t *)pb.ptr + i * sizeof(idx_buf) : idx_buf;
        branch_targets(seq, sizeof(idx_buf), t, seed);
        ar[i] = (struct br_pat_arg){seq, sizeof(idx_buf) - 1, 0, 0};
        /* Cyclic order: history-based indirect predictors learn it. */
        ac[i] = (struct br_pat_arg){cyc, t - 1, 0, 0};
        jobs[2 * i] = (struct pm_job){pm_indirect, &ar[i], opts, &rr[i], 0};
        jobs[2 * i + 1] = (struct pm_job){pm_indirect, &ac[i], opts, &rc[i], 0};
        if (!all) /* one count at a time: idx_buf holds this count's sequence until its records are out */
            pm_measure_interleaved(&jobs[2 * i], 2);
        if (all && i + 1 < BR_INDIRECT_COUNTS)
            continue;
        if (all)
            pm_measure_interleaved(jobs, 2 * BR_INDIRECT_COUNTS);
        unsigned t2 = all ? 1 : t;
        for (size_t j = all ? 0 : i; j <= i; j++, t2 *= 2) {
            if (jobs[2 * j].rc != 0)
                continue;
            if (t2 == 1)
                base = rr[j].cycles;
            static struct br_event ev;
            double m = pmu_misp(branch_ev_indirect, "indirect-call", pm_indirect, &ar[j], rr[j].iters_per_sample, &ev);
            const char *how = "pmu";
            if (!is_finite(m)) {
                m = branch_misp_estimate(rr[j].cycles, base, penalty);
                how = "estimate: (cycles - cycles with 1 target) / branch_mispredict penalty";
            }
            rec_point("indirect_random", -1, t2, -1, &rr[j], 1, m, how, &ev);
            if (jobs[2 * j + 1].rc != 0)
                continue;
            double mc = pmu_misp(branch_ev_indirect, "indirect-call", pm_indirect, &ac[j], rc[j].iters_per_sample, &ev);
            const char *howc = "pmu";
            if (!is_finite(mc)) {
                mc = branch_misp_estimate(rc[j].cycles, base, penalty);
                howc = "estimate: (cycles - cycles with 1 target) / branch_mispredict penalty";
            }
            rec_point("indirect_cyclic", (long)t2, t2, -1, &rc[j], 1, mc, howc, &ev);
            plat_printf("    %3u  %10.2f  %10.2f\n", t2, rr[j].cycles, rc[j].cycles);
        }
    }
    if (all)
        plat_free(&pb);
}

static long measure_return_stack(double penalty)
{
    bool quick = plat_config()->quick;
    static const unsigned quick_depths[] = {1, 2, 4, 6, 8, 10, 12, 14, 16, 20, 24, 28, 32, 40, 48, 64};
    unsigned depth[BR_MAX_POINTS];
    double t[BR_MAX_POINTS];
    size_t n = 0;
    struct rand rg;
    rand_seed(&rg, plat_config()->seed ^ 0x7e7);
    uint64_t sites = rand_next(&rg);
    plat_printf("  return stack: depth  cycles per call+return\n");
    /* Every depth's replicates interleaved in time (pm_measure_interleaved), each depth its own recursion. */
    static struct br_rec_arg a[PM_MAX_JOBS];
    static struct pm_result res[PM_MAX_JOBS];
    static struct pm_job jobs[PM_MAX_JOBS];
    size_t nj = 0;
    for (unsigned k = 0; k < (quick ? ARRAY_SIZE(quick_depths) : 64) && nj < PM_MAX_JOBS; k++) {
        unsigned d = quick ? quick_depths[k] : k + 1;
        a[nj] = (struct br_rec_arg){d, sites, 0};
        jobs[nj] = (struct pm_job){pm_recurse, &a[nj], opts, &res[nj], 0};
        nj++;
    }
    pm_measure_interleaved(jobs, nj);
    for (size_t i = 0; i < nj; i++) {
        if (jobs[i].rc != 0)
            continue;
        unsigned d = (unsigned)a[i].depth;
        const struct pm_result *r = &res[i];
        static struct br_event ev;
        double m = pmu_misp(branch_ev_return, "return", pm_recurse, &a[i], r->iters_per_sample, &ev);
        /* Per branch pair: the mispredicts of a recursion spread over its calls. */
        const char *how = is_finite(m) ? "pmu" : "not estimated (no PMU): see the summary's rsb_depth_estimate";
        rec_point("return_stack", -1, -1, d, r, d, is_finite(m) ? m / (2.0 * d) : __builtin_nan(""), how, &ev);
        plat_printf("    %3u  %8.2f\n", d, r->cycles / d);
        depth[n] = d;
        t[n++] = r->cycles;
    }
    (void)penalty;
    return branch_rsb_estimate(depth, t, n, 8, 0.10);
}

void bench_branch(void)
{
    pm_opts_profile(&opts);
    const char *how;
    double penalty = measure_penalty(&how);
    /* The mispredict estimates divide by the penalty: only a penalty that passed its verdict may be used. */
    const struct ledger_entry *pe = ledger_find("penalty/branch_mispredict");
    enum quality pq = pe ? pe->q : QUALITY_UNAVAILABLE;
    bool usable = pq == QUALITY_OK || pq == QUALITY_NOISY;
    double use = usable ? penalty : __builtin_nan("");
    long learned = measure_patterns(use);
    measure_indirect(use);
    long rsb = measure_return_stack(use);

    struct json *j = plat_rec_begin("branch");
    json_kv_str(j, "test", "summary");
    json_kv_null(j, "period");
    json_kv_double(j, "mispredict_penalty_cycles", penalty);
    json_kv_str(j, "mispredict_penalty_quality", quality_name(pq));
    json_kv_str(j, "method", how);
    if (learned > 0)
        json_kv_int(j, "learned_period", learned);
    else
        json_kv_null(j, "learned_period");
    json_kv_str(j, "learned_period_method", "largest pattern period with every period up to it below 5% mispredicts");
    if (rsb > 0)
        json_kv_int(j, "rsb_depth_estimate", rsb);
    else
        json_kv_null(j, "rsb_depth_estimate");
    json_kv_str(j, "rsb_method", "last depth before time per recursion rises above the line fitted over depths <= 8 "
                                 "(x1.10 + 2 cycles, twice in a row)");
    plat_rec_end();
    plat_printf("  summary: penalty %.1f cycles (%s%s), longest learned pattern %ld, return stack depth estimate %ld\n",
                penalty, quality_name(pq), usable ? "" : ": no mispredict estimate uses it", learned, rsb);
}
