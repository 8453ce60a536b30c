/* cycle_accounting.c - penalties of this run, sum of P_i x N_i, event counting over the PMU's API and the cycle_accounting record. */
#include "bench/cycle_accounting.h"
#include "bench/branch.h"
#include "bench/bw_kernels.h"
#include "measure/chain.h"
#include "measure/chase.h"
#include "bench/platform.h"
#include "measure/rand.h"
#include "kernel/fmt.h"
#include "pmu/pmu_bench_api.h"

/* ---- penalties -------------------------------------------------------------------------------------- */

static struct {
    const char *name;
    double cycles;
    enum quality q;
    char reason[VERDICT_REASON_MAX + 16]; /* "<quality>: <why>" when not usable */
} penalties[CA_MAX_PENALTIES];
static size_t n_penalties;

static bool is_finite(double v) { return v == v && v - v == 0; }

int ca_penalty_set(const char *name, double cycles, enum quality q, const char *reason)
{
    if (!name || (!is_finite(cycles) && q < QUALITY_SUSPECT))
        return -1;
    size_t i = 0;
    while (i < n_penalties && strcmp(penalties[i].name, name))
        i++;
    if (i == n_penalties) {
        if (n_penalties == CA_MAX_PENALTIES)
            return -1;
        n_penalties++;
    }
    penalties[i].name = name;
    penalties[i].cycles = cycles;
    penalties[i].q = q;
    if (q >= QUALITY_SUSPECT)
        fmt_snprintf(penalties[i].reason, sizeof(penalties[i].reason), "%s: %s", quality_name(q),
                     reason && reason[0] ? reason : "no reason given");
    else
        penalties[i].reason[0] = 0;
    return 0;
}

/* The penalty's final verdict: the ledger's figure "penalty/<name>" may have been made suspect by a
 * cross-check after penalty.c set it here (the DRAM penalty against the Table 2 row, ...). */
static void final_verdict(size_t i)
{
    char fig[LEDGER_NAME_MAX];
    const char *why;
    fmt_snprintf(fig, sizeof(fig), "penalty/%s", penalties[i].name);
    enum quality q = ledger_final_quality(fig, penalties[i].q, &why);
    if (q == penalties[i].q)
        return;
    penalties[i].q = q;
    fmt_snprintf(penalties[i].reason, sizeof(penalties[i].reason), "%s: cross-check disagrees: %s", quality_name(q),
                 why);
}

bool ca_penalty_get(const char *name, double *cycles)
{
    if (!name)
        return false;
    if (!strcmp(name, CA_P_UNIT)) {
        *cycles = 1.0;
        return true;
    }
    for (size_t i = 0; i < n_penalties; i++)
        if (!strcmp(penalties[i].name, name)) {
            final_verdict(i);
            if (penalties[i].q >= QUALITY_SUSPECT)
                return false; /* measured, but not trusted: dropped (ca_penalty_dropped says why) */
            *cycles = penalties[i].cycles;
            return true;
        }
    return false;
}

const char *ca_penalty_dropped(const char *name)
{
    for (size_t i = 0; name && i < n_penalties; i++) {
        if (strcmp(penalties[i].name, name))
            continue;
        final_verdict(i);
        if (penalties[i].q >= QUALITY_SUSPECT)
            return penalties[i].reason;
    }
    return NULL;
}

void ca_penalty_reset(void) { n_penalties = 0; }

/* ---- arithmetic ------------------------------------------------------------------------------------- */

static bool term_usable(const struct ca_term *t)
{
    return t->event && is_finite(t->count) && t->count >= 0 && is_finite(t->cycles);
}

int ca_compute(double total, double stall, const struct ca_term *t, size_t n, struct ca_result *r)
{
    if (!r || (n && !t) || !is_finite(total) || !is_finite(stall) || total < 0 || stall < 0 || stall > total)
        return -1;
    *r = (struct ca_result){.total_cycles = total, .stall_cycles = stall, .retiring_cycles = total - stall};
    for (size_t i = 0; i < n; i++) {
        if (!term_usable(&t[i])) {
            r->terms_missing++;
            continue;
        }
        r->counted_stall_cycles += t[i].count * t[i].cycles;
        r->terms_used++;
    }
    r->unaccounted_cycles = stall - r->counted_stall_cycles;
    return 0;
}

void ca_json(struct json *j, const char *bench, const struct ca_result *r, const struct ca_term *t, size_t n,
             const char *stall_event, const char *cycles_event)
{
    json_kv_str(j, "bench", bench);
    json_kv_str(j, "status", "ok");
    json_kv_str(j, "unit", "core_cycles");
    json_kv_double(j, "total_cycles", r->total_cycles);
    json_kv_double(j, "retiring_cycles", r->retiring_cycles);
    json_kv_double(j, "stall_cycles", r->stall_cycles);
    json_kv_double(j, "counted_stall_cycles", r->counted_stall_cycles);
    json_kv_double(j, "unaccounted_cycles", r->unaccounted_cycles);
    json_kv_bool(j, "unaccounted_negative", r->unaccounted_cycles < 0);
    json_kv_str(j, "cycles_event", cycles_event);
    json_kv_str(j, "stall_event", stall_event);
    json_kv_str(j, "method", "PAG Stall Decomposition: counted = sum P_i x N_i with this run's penalties; "
                             "unaccounted = stalls - counted (negative when the sequential model over-counts)");
    json_key(j, "terms");
    json_arr_begin(j);
    for (size_t i = 0; i < n; i++) {
        json_obj_begin(j);
        json_kv_str(j, "event", t[i].event);
        if (t[i].note && t[i].note[0])
            json_kv_str(j, "event_note", t[i].note);
        json_kv_str(j, "penalty_name", t[i].penalty);
        if (t[i].event)
            json_kv_double(j, "count", t[i].count);
        else
            json_kv_null(j, "count");
        json_kv_double(j, "penalty", t[i].cycles); /* NaN -> null: not calibrated in this run, or dropped */
        if (t[i].dropped)
            json_kv_str(j, "dropped", t[i].dropped);
        json_kv_double(j, "stall_cycles", term_usable(&t[i]) ? t[i].count * t[i].cycles : __builtin_nan(""));
        json_obj_end(j);
    }
    json_arr_end(j);
    json_kv_uint(j, "terms_used", r->terms_used);
    json_kv_uint(j, "terms_missing", r->terms_missing);
}

void ca_json_unavailable(struct json *j, const char *bench, const char *reason)
{
    json_kv_str(j, "bench", bench);
    json_kv_str(j, "status", "unavailable");
    json_kv_str(j, "reason", reason);
}

static double pct(double part, double whole) { return whole > 0 ? 100.0 * part / whole : 0; }

void ca_print(ca_print_fn print, const char *bench, const struct ca_result *r, const struct ca_term *t, size_t n)
{
    print("  cycle accounting: %s\n", bench);
    print("    %-36s %16s %10s %16s %7s\n", "event", "count N", "penalty P", "P x N cycles", "% stall");
    for (size_t i = 0; i < n; i++) {
        if (!term_usable(&t[i])) {
            print("    %-36s %16s %10s %16s %7s  (%s%s)\n", t[i].event ? t[i].event : t[i].penalty, "-", "-", "-", "-",
                  !t[i].event ? "event not counted here"
                  : t[i].dropped ? "penalty dropped, "
                                 : "penalty not calibrated in this run",
                  t[i].event && t[i].dropped ? t[i].dropped : "");
            continue;
        }
        double c = t[i].count * t[i].cycles;
        print("    %-36s %16.0f %10.2f %16.0f %6.1f%%\n", t[i].event, t[i].count, t[i].cycles, c,
              pct(c, r->stall_cycles));
    }
    print("    total %.0f cycles = retiring %.0f + stalled %.0f (%.1f%%)\n", r->total_cycles, r->retiring_cycles,
          r->stall_cycles, pct(r->stall_cycles, r->total_cycles));
    print("    counted stalls %.0f, unaccounted %.0f%s\n", r->counted_stall_cycles, r->unaccounted_cycles,
          r->unaccounted_cycles < 0 ? " (negative: the sequential penalty model over-counts overlapping events)"
                                    : "");
}

/* ---- counting ------------------------------------------------------------------------------------------ */

bool ca_can_count(const char **why) { return pmu_count_max_events(why) != 0; }

bool ca_cand_applies(const char *cand, const char *table, const char **spec)
{
    const char *at = strchr(cand, '@');
    if (spec)
        *spec = at ? at + 1 : cand;
    if (!at)
        return true;
    size_t tl = table ? strlen(table) : 0;
    for (const char *p = cand; tl && p < at;) {
        while (p < at && *p == ' ')
            p++;
        const char *w = p;
        while (p < at && *p != ' ')
            p++;
        if ((size_t)(p - w) == tl && !memcmp(w, table, tl))
            return true;
    }
    return false;
}

/* Appends "<spec>: <why>" to a note ("; " between entries); a full note ends in "...". */
static void note_add(char *note, const char *spec, const char *why)
{
    size_t o = strlen(note);
    if (o + 4 >= CA_NOTE_MAX)
        return;
    int k = fmt_snprintf(note + o, CA_NOTE_MAX - o, "%s%s: %s", o ? "; " : "", spec, why);
    if (k < 0 || o + (size_t)k >= CA_NOTE_MAX)
        memcpy(note + CA_NOTE_MAX - 4, "...", 4);
}

/* The first applicable candidate the PMU accepts; refusals before it go into ev->note. */
static void resolve(struct ca_event *ev, const char *table)
{
    bool any = false;
    ev->used = NULL;
    ev->count = 0;
    ev->note[0] = 0;
    for (const char *const *c = ev->candidates; c && *c; c++) {
        const char *spec;
        char why[160];
        if (!ca_cand_applies(*c, table, &spec))
            continue;
        any = true;
        if (pmu_count_accepts(spec, why, sizeof(why))) {
            ev->used = spec;
            return;
        }
        note_add(ev->note, spec, why[0] ? why : "refused");
    }
    if (!any)
        fmt_snprintf(ev->note, CA_NOTE_MAX, "no event of this kind is listed for this PMU (event table %s)",
                     table ? table : "none");
}

int ca_count(struct ca_event *ev, size_t n, void (*fn)(void *), void *arg, char *why, size_t whylen)
{
    const char *no;
    unsigned group = pmu_count_max_events(&no);
    if (!group) {
        for (size_t i = 0; i < n && i < CA_MAX_EVENTS; i++) {
            ev[i].used = NULL;
            ev[i].count = 0;
            fmt_snprintf(ev[i].note, CA_NOTE_MAX, "%s", no);
        }
        fmt_snprintf(why, whylen, "%s", no);
        return -1;
    }
    if (n > CA_MAX_EVENTS || !fn) {
        fmt_snprintf(why, whylen, "ca_count: %s", fn ? "too many events" : "no workload");
        return -1;
    }
    const char *table = pmu_count_event_table();
    const char *specs[CA_MAX_EVENTS];
    size_t idx[CA_MAX_EVENTS], m = 0;
    for (size_t i = 0; i < n; i++) {
        resolve(&ev[i], table);
        if (ev[i].used) {
            specs[m] = ev[i].used;
            idx[m++] = i;
        }
    }
    if (!m) {
        fmt_snprintf(why, whylen, "none of the events is countable on this PMU (%s)", ev[0].note);
        return -1;
    }
    int counted = 0;
    char lost[128] = ""; /* why a group ran but gave no counts (a dry run: "PMU: assumed PMU") */
    for (size_t g = 0; g < m; g += group) {
        unsigned k = (unsigned)MIN((size_t)group, m - g);
        uint64_t counts[CA_MAX_EVENTS];
        char w[128];
        enum pmu_count_status st = pmu_count_around(&specs[g], k, fn, arg, counts, w, sizeof(w));
        if (st == PMU_COUNT_REFUSED) {
            /* The group does not fit together: one event per run instead. */
            for (unsigned e = 0; e < k; e++) {
                struct ca_event *x = &ev[idx[g + e]];
                if (pmu_count_around(&specs[g + e], 1, fn, arg, &counts[0], w, sizeof(w)) != PMU_COUNT_OK) {
                    note_add(x->note, x->used, w);
                    x->used = NULL;
                    continue;
                }
                x->count = counts[0];
                counted++;
            }
            continue;
        }
        if (st != PMU_COUNT_OK) {
            fmt_snprintf(lost, sizeof(lost), "%s", w[0] ? w : "count lost (overflow or not a measurement)");
            for (unsigned e = 0; e < k; e++) {
                struct ca_event *x = &ev[idx[g + e]];
                note_add(x->note, x->used, lost);
                x->used = NULL;
            }
            continue;
        }
        for (unsigned e = 0; e < k; e++)
            ev[idx[g + e]].count = counts[e];
        counted += (int)k;
    }
    if (!counted) {
        fmt_snprintf(why, whylen, "%s", lost[0] ? lost : "the PMU refused every event group");
        return -1;
    }
    return counted;
}

/* ---- event lists --------------------------------------------------------------------------------------
 * Per PMU family (CA_T_*), names as in the generated libpfm4 tables; the encodings they give on each model are
 * in docs/pmu.md, "Events per benchmark and model", and tests/unit/test_bench_events.c checks them against the
 * guides. */

const char *const ca_ev_cycles[] = {
    CA_ON(CA_T_NHM, "UNHALTED_CORE_CYCLES"),      /* [PAG] Table 1 CPU_CLK_UNHALTED.THREAD: fixed ctr 1 / 3CH/00H */
    CA_ON(CA_T_NHM, "CPU_CLK_UNHALTED:THREAD_P"), /* the same 3CH/00H, general counter only */
    CA_ON(CA_T_ARCH, "UNHALTED_CORE_CYCLES"),     /* SDM Table 18-1: 3CH/00H */
    CA_ON(CA_T_AMD, "CPU_CLK_UNHALTED"),          /* [AMD] 4.2.1 CPU_clocks: 76H */
    CA_ON(CA_T_ZEN, "CYCLES_NOT_IN_HALT"),        /* 76H */
    CA_ON(CA_T_P4, "global_power_events:RUNNING"), /* [P4] unhalted-cycles alias */
    NULL};
/* Retired instructions (the snippet benchmark's per-iteration count). */
const char *const ca_ev_instructions[] = {
    CA_ON(CA_T_NHM, "INSTRUCTIONS_RETIRED"),   /* [PAG] Table 1 INST_RETIRED.ANY: fixed ctr 0 / C0H/00H */
    CA_ON(CA_T_NHM, "INST_RETIRED:ANY_P"),     /* general counter: C0H/00H in libpfm4's nhm table, C0H/01H in wsm */
    CA_ON(CA_T_ARCH, "INSTRUCTION_RETIRED"),   /* SDM Table 18-1: C0H/00H */
    CA_ON(CA_T_AMD, "RETIRED_INSTRUCTIONS"),   /* [AMD] retired instructions: C0H */
    CA_ON(CA_T_ZEN, "RETIRED_INSTRUCTIONS"),   /* C0H */
    CA_ON(CA_T_P4, "instr_retired:NBOGUSNTAG"), /* [P4] non-bogus, untagged */
    NULL};
const char *const ca_ev_stalls[] = {
    CA_ON(CA_T_NHM, "UOPS_RETIRED:STALL_CYCLES"), /* [PAG] Table 1: C2H/01H, CMASK 1, INV */
    CA_ON(CA_T_AMD, "DISPATCH_STALLS"),           /* D1H */
    NULL};
/* Every mispredicted branch. Nehalem/Westmere: BR_MISP_EXEC.ANY, [PAG] Table 18 89H/7FH. The retired event has
 * no usable "all branches" form there: libpfm4's nhm table has only C5H/02H (NEAR_CALL, also bare
 * BR_MISP_RETIRED's default), and erratum AAJ80 makes the architectural C5H/00H unreliable on Nehalem, which is
 * why Linux counts branch-misses with 0x7F89 there (intel_nehalem_quirk); Westmere counts the same event. It
 * counts executed, not retired, branches: speculative mispredicts on a wrong path count too. */
const char *const ca_ev_br_misp[] = {
    CA_ON(CA_T_NHM, "BR_MISP_EXEC:ANY"),
    CA_ON(CA_T_ARCH, "MISPREDICTED_BRANCH_RETIRED"),             /* SDM Table 18-1: C5H/00H */
    CA_ON(CA_T_AMD, "RETIRED_MISPREDICTED_BRANCH_INSTRUCTIONS"), /* [AMD] 4.5.1 Mispred_branches: C3H */
    CA_ON(CA_T_ZEN, "RETIRED_BRANCH_INSTRUCTIONS_MISPREDICTED"), /* C3H */
    CA_ON(CA_T_P4, "mispred_branch_retired:BOGUS"),              /* [P4] mispred-branch-retired, nbogus */
    NULL};
const char *const ca_ev_div_busy[] = {CA_ON(CA_T_NHM, "ARITH:CYCLES_DIV_BUSY"), NULL}; /* [PAG] 14H/01H */
const char *const ca_ev_unc_reads[] = {"UNC_QMC_NORMAL_READS:ANY", NULL};
const char *const ca_ev_unc_writes[] = {"UNC_QMC_WRITES:FULL_ANY", NULL};

static const char *const ev_dtlb_walk[] = {
    CA_ON(CA_T_NHM, "DTLB_LOAD_MISSES:WALK_COMPLETED"),              /* [PAG] 08H/02H */
    CA_ON("amd_fam10h", "L1_DTLB_AND_L2_DTLB_MISS:ALL"),             /* 46H/07H (family 15h: other events) */
    CA_ON("amd_k8", "L1_DTLB_AND_L2_DTLB_MISS"),                     /* 46H (no unit mask on K8) */
    NULL};
static const char *const ev_l2_hit[] = {CA_ON(CA_T_NHM, "MEM_LOAD_RETIRED:L2_HIT"), NULL};          /* CBH/02H */
static const char *const ev_llc_hit[] = {CA_ON(CA_T_NHM, "MEM_LOAD_RETIRED:LLC_UNSHARED_HIT"), NULL}; /* CBH/04H */
static const char *const ev_llc_miss[] = {CA_ON(CA_T_NHM, "MEM_LOAD_RETIRED:LLC_MISS"), NULL};       /* CBH/10H */
static const char *const ev_hit_lfb[] = {CA_ON(CA_T_NHM, "MEM_LOAD_RETIRED:HIT_LFB"), NULL};         /* CBH/40H */
static const char *const ev_alias[] = {CA_ON(CA_T_NHM, "PARTIAL_ADDRESS_ALIAS"), NULL};              /* 07H/01H */
static const char *const ev_sf_block[] = {CA_ON("wsm wsm_dp", "LOAD_BLOCK:OVERLAP_STORE"), NULL};    /* 03H/02H */
static const char *const ev_misalign[] = {CA_ON(CA_T_AMD, "MISALIGNED_ACCESSES"), NULL}; /* [AMD] 4.6.1: 47H */

/* [PAG] "Measuring Penalties": the large-penalty events first (memory, then TLB, branches, divider). */
const struct ca_term_def ca_terms[] = {
    {ev_llc_miss, CA_P_DRAM},       {ev_llc_hit, CA_P_LLC},         {ev_l2_hit, CA_P_L2},
    {ev_hit_lfb, CA_P_LFB},         {ev_dtlb_walk, CA_P_DTLB},      {ca_ev_br_misp, CA_P_BRANCH},
    {ca_ev_div_busy, CA_P_UNIT},    {ev_alias, CA_P_ALIAS},         {ev_sf_block, CA_P_SF_FAIL},
    {ev_misalign, CA_P_LINE_SPLIT},
};
const size_t ca_n_terms = ARRAY_SIZE(ca_terms);

int ca_measure(struct ca_account *a, void (*fn)(void *), void *arg)
{
    _Static_assert(ARRAY_SIZE(ca_terms) + 2 <= CA_MAX_EVENTS, "terms + cycles + stalls fit one ca_count");
    struct ca_event ev[CA_MAX_EVENTS];
    size_t n = 0;
    *a = (struct ca_account){0};
    ev[n++] = (struct ca_event){.candidates = ca_ev_cycles};
    ev[n++] = (struct ca_event){.candidates = ca_ev_stalls};
    for (size_t i = 0; i < ca_n_terms; i++)
        ev[n++] = (struct ca_event){.candidates = ca_terms[i].candidates};
    if (ca_count(ev, n, fn, arg, a->reason, sizeof(a->reason)) < 0)
        return -1;
    if (!ev[0].used || !ev[1].used) {
        const struct ca_event *x = !ev[0].used ? &ev[0] : &ev[1];
        fmt_snprintf(a->reason, sizeof(a->reason), "%s (%s)",
                     !ev[0].used ? "no core-cycle event on this PMU" : "no stall-cycle event on this PMU", x->note);
        return -1;
    }
    a->n = ca_n_terms;
    fmt_snprintf(a->cycles_note, sizeof(a->cycles_note), "%s", ev[0].note);
    fmt_snprintf(a->stall_note, sizeof(a->stall_note), "%s", ev[1].note);
    for (size_t i = 0; i < ca_n_terms; i++) {
        fmt_snprintf(a->note[i], sizeof(a->note[i]), "%s", ev[2 + i].note);
        a->t[i] = (struct ca_term){.event = ev[2 + i].used, .note = a->note[i], .penalty = ca_terms[i].penalty,
                                   .count = (double)ev[2 + i].count, .cycles = __builtin_nan("")};
        double p;
        if (ca_penalty_get(ca_terms[i].penalty, &p))
            a->t[i].cycles = p;
        else
            a->t[i].dropped = ca_penalty_dropped(ca_terms[i].penalty);
    }
    /* Groups run separately see slightly different totals: stalls above the cycles are clamped. */
    double total = (double)ev[0].count, stall = MIN((double)ev[1].count, total);
    if (ca_compute(total, stall, a->t, a->n, &a->r) != 0) {
        fmt_snprintf(a->reason, sizeof(a->reason), "counts out of range");
        return -1;
    }
    a->cycles_event = ev[0].used;
    a->stall_event = ev[1].used;
    a->ok = true;
    return 0;
}

void ca_account_json(struct json *j, const char *bench, const struct ca_account *a)
{
    if (a->ok) {
        ca_json(j, bench, &a->r, a->t, a->n, a->stall_event, a->cycles_event);
        if (a->cycles_note[0])
            json_kv_str(j, "cycles_event_note", a->cycles_note);
        if (a->stall_note[0])
            json_kv_str(j, "stall_event_note", a->stall_note);
    } else
        ca_json_unavailable(j, bench, a->reason);
}

void ca_account_print(ca_print_fn print, const char *bench, const struct ca_account *a)
{
    if (a->ok)
        ca_print(print, bench, &a->r, a->t, a->n);
    else
        print("  cycle accounting %s: unavailable (%s)\n", bench, a->reason);
}

/* ---- the benchmark ------------------------------------------------------------------------------------------ */

struct ca_work_branch {
    uint32_t state;
    uint64_t iters, acc;
};
static void work_branch(void *a)
{
    struct ca_work_branch *w = a;
    w->acc += branch_lfsr_loop(&w->state, 1, w->iters);
}

struct ca_work_chase {
    void *p;
    uint64_t iters;
};
static void work_chase(void *a)
{
    struct ca_work_chase *w = a;
    w->p = chase_run(w->p, w->iters);
}

struct ca_work_triad {
    struct bw_arrays x;
    bw_fn fn;
    uint64_t sum;
};
static void work_triad(void *a)
{
    struct ca_work_triad *w = a;
    w->sum += w->fn(&w->x, 1);
}

static const char *const ca_workloads[] = {"branch_random", "chase_memory", "chase_4k_pages", "stream_triad"};

static void account(const char *bench, void (*fn)(void *), void *arg)
{
    static struct ca_account a;
    ca_measure(&a, fn, arg);
    struct json *j = plat_rec_begin("cycle_accounting");
    ca_account_json(j, bench, &a);
    plat_rec_end();
    ca_account_print(plat_printf, bench, &a);
}

static void unavailable(const char *bench, const char *why)
{
    struct json *j = plat_rec_begin("cycle_accounting");
    ca_json_unavailable(j, bench, why);
    plat_rec_end();
    plat_printf("  cycle accounting %s: unavailable (%s)\n", bench, why);
}

/* A chain over bytes of b: random lines (CHAIN_RANDOM) or one line per 4 KiB page (CHAIN_PAGE). */
static void *ca_chain(struct plat_buf *b, uint64_t bytes, enum chain_mode mode, struct plat_buf *scratch, size_t *n)
{
    struct chain_params p = {.bytes = (size_t)bytes, .line = 64, .page = 4096, .mode = mode,
                             .lines_per_page = mode == CHAIN_PAGE ? 1 : 0, .seed = plat_config()->seed ^ 0xca};
    size_t need = chain_scratch_bytes(&p);
    if (need == SIZE_MAX || (need && plat_alloc(scratch, need, PLAT_PAGE_DEFAULT, -1, "cycle accounting scratch")))
        return NULL;
    void *start = chain_build(b->ptr, &p, scratch->ptr, need, n);
    plat_free(scratch);
    return start && *n % CHASE_UNROLL == 0 ? start : NULL;
}

void bench_cycle_accounting(void)
{
    const char *why;
    if (!ca_can_count(&why)) {
        for (size_t i = 0; i < ARRAY_SIZE(ca_workloads); i++)
            unavailable(ca_workloads[i], why);
        return;
    }
    bool quick = plat_config()->quick;
    uint64_t llc = MiB(8);
    const struct cpu_info *ci = plat_cpuinfo();
    for (uint32_t i = 0; ci && i < ci->n_caches; i++)
        if (ci->caches[i].type != CPU_CACHE_INSTRUCTION && ci->caches[i].bytes)
            llc = ci->caches[i].bytes; /* CPUID lists levels in ascending order */
    uint64_t mem = MIN(MAX(4 * llc, MiB(64)), quick ? MiB(64) : GiB(1));
    if (plat_config()->max_bytes)
        mem = MIN(mem, plat_config()->max_bytes);

    struct ca_work_branch wb = {.iters = quick ? 1u << 18 : 1u << 22};
    struct lfsr32 l;
    lfsr32_seed(&l, plat_config()->seed);
    wb.state = l.state;
    account(ca_workloads[0], work_branch, &wb);

    struct plat_buf b = {0}, scratch = {0};
    size_t n = 0;
    void *start;
    if (plat_alloc(&b, mem, PLAT_PAGE_LARGEST, -1, "cycle accounting chase") == 0 &&
        (start = ca_chain(&b, mem, CHAIN_RANDOM, &scratch, &n)) != NULL) {
        struct ca_work_chase w = {start, n / CHASE_UNROLL};
        work_chase(&w); /* warm: TLBs and caches as they will be */
        account(ca_workloads[1], work_chase, &w);
    } else {
        unavailable(ca_workloads[1], "buffer or chain for the memory chase could not be had");
    }
    plat_free(&b);

    uint64_t pages_bytes = (quick ? 4096 : 8192) * KiB(4);
    if (plat_alloc(&b, pages_bytes, KiB(4), -1, "cycle accounting pages") == 0 &&
        (start = ca_chain(&b, pages_bytes, CHAIN_PAGE, &scratch, &n)) != NULL) {
        struct ca_work_chase w = {start, MAX(n / CHASE_UNROLL, 1024)};
        work_chase(&w);
        account(ca_workloads[2], work_chase, &w);
    } else {
        unavailable(ca_workloads[2], "no buffer with 4 KiB pages");
    }
    plat_free(&b);

    if (plat_alloc(&b, mem + KiB(64), PLAT_PAGE_LARGEST, -1, "cycle accounting triad") == 0) {
        size_t ne = bw_elems_for(mem / 3);
        uint64_t stride = ALIGN_UP((uint64_t)ne * 8, KiB(4)) + KiB(4) + 1088;
        uint8_t *base = b.ptr;
        struct ca_work_triad w = {.x = {(double *)base, (double *)(base + stride), (double *)(base + 2 * stride), ne, 3.0},
                                  .fn = bw_kernel_fn(BW_TRIAD, bw_isa_widest(ci ? &ci->feat : NULL, bw_xcr0()))};
        if (ne && bw_kernel_check(BW_TRIAD, &w.x) == 0) {
            work_triad(&w);
            account(ca_workloads[3], work_triad, &w);
        } else {
            unavailable(ca_workloads[3], "triad arrays do not fit");
        }
    } else {
        unavailable(ca_workloads[3], "no buffer for the triad");
    }
    plat_free(&b);
}
