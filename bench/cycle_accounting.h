/* cycle_accounting.h - the guide's stall decomposition (sum of P_i x N_i with this run's penalties), the event counting it and the other benchmarks use, and its record. */
#ifndef PMB_BENCH_CYCLE_ACCOUNTING_H
#define PMB_BENCH_CYCLE_ACCOUNTING_H

#include "kernel/klib.h"
#include "kernel/json.h"
#include "measure/verdict.h"

/*
 * Core i7 / Xeon 5500 Performance Analysis Guide [PAG], "Stall Decomposition Overview":
 *   Counted_Stall_Cycles = sum_i P_i * N_i
 *   Unaccounted          = Stalls - Counted_Stall_Cycles     (may be negative: the sequential-penalty
 *                          model over-counts overlapping penalties; the record says so)
 * N_i are event counts taken around a workload, P_i the penalties the `penalty` and `branch` benchmarks
 * calibrated earlier in the same run (ca_penalty_set). Stalls are UOPS_RETIRED.STALL_CYCLES, the
 * guide's per-thread retirement-based stall count (UOPS_EXECUTED.CORE_STALL_CYCLES counts per core and
 * over-counts with HT), retiring cycles = total - stalls.
 */

#define CYCLE_ACCOUNTING_WHAT "cycle accounting after the guide: stalls = sum P_i x N_i + unaccounted, for a few " \
                              "workloads, with this run's penalties (needs PMU counters)"

/* Runs the workloads (random branches, a DRAM chase, a 4 KiB-page chase, STREAM triad at memory level) with
 * the counters around them and emits one `cycle_accounting` record each ("unavailable" with the reason when
 * there are no counters), and the table. Run after `penalty` and `branch`, whose penalties it uses. */
void bench_cycle_accounting(void);

/* ---- penalties calibrated in this run ------------------------------------------------------------- */

#define CA_MAX_PENALTIES 32

/* Penalty names used by the benchmarks (the `penalty` records' "name"). */
#define CA_P_BRANCH "branch_mispredict"
#define CA_P_DTLB "dtlb_miss_4k"
#define CA_P_L2 "l2_hit"
#define CA_P_LLC "llc_hit"
#define CA_P_DRAM "dram_local"
#define CA_P_LFB "l1d_miss_hit_lfb"
#define CA_P_ALIAS "4k_alias"
#define CA_P_SF_FAIL "store_forward_fail_size"
#define CA_P_LINE_SPLIT "line_split_load"
#define CA_P_UNIT "cycles" /* the event counts cycles itself (ARITH.CYCLES_DIV_BUSY): P = 1 */

/* Remembers a penalty in core cycles under `name` (a string that outlives the run) with its verdict; a later
 * call with the same name replaces it. A suspect (or unavailable) penalty is remembered but never used:
 * ca_penalty_get says false and the cycle_accounting record names it as dropped with the reason.
 * Non-finite values of usable penalties are ignored. Returns 0, or -1 when the table is full. */
int ca_penalty_set(const char *name, double cycles, enum quality q, const char *reason);
/* The penalty, or false when it was not calibrated in this run (CA_P_UNIT is always 1). */
bool ca_penalty_get(const char *name, double *cycles);
void ca_penalty_reset(void);
/* "suspect: <reason>" when the penalty was measured but is suspect (ca_penalty_get then says false), else NULL. */
const char *ca_penalty_dropped(const char *name);

/* ---- the decomposition (pure arithmetic) ---------------------------------------------------------- */

struct ca_term {
    const char *event;   /* event specifier that was counted (NULL: none of the candidates could be) */
    const char *penalty; /* penalty name (CA_P_*) */
    double count;        /* N_i */
    double cycles;       /* P_i; NaN when not calibrated in this run, or dropped */
    const char *dropped; /* why a measured P_i was not used (it was suspect), else NULL */
    const char *note;    /* ca_event.note: fallback or refusal reasons; NULL or "" when none */
};

struct ca_result {
    double total_cycles, stall_cycles, retiring_cycles; /* retiring = total - stall */
    double counted_stall_cycles;  /* sum of P_i N_i over the terms that have both */
    double unaccounted_cycles;    /* stall - counted; negative when the model over-counts */
    unsigned terms_used;          /* terms in the sum */
    unsigned terms_missing;       /* terms left out: event not counted or penalty not calibrated */
};

/* Fills r. Returns 0, or -1 for invalid input (NULL, negative or non-finite totals, stall > total). */
int ca_compute(double total_cycles, double stall_cycles, const struct ca_term *t, size_t n, struct ca_result *r);

/* Writes the keys of a `cycle_accounting` record: bench, status "ok", total_cycles, retiring_cycles,
 * stall_cycles, counted_stall_cycles, unaccounted_cycles, unaccounted_negative, terms [{event, event_note (only
 * when there is one), penalty_name, count, penalty, dropped, stall_cycles}], plus the method keys. */
void ca_json(struct json *j, const char *bench, const struct ca_result *r, const struct ca_term *t, size_t n,
             const char *stall_event, const char *cycles_event);
/* bench, status "unavailable", reason. */
void ca_json_unavailable(struct json *j, const char *bench, const char *reason);

typedef void (*ca_print_fn)(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* The human-readable table of one decomposition. */
void ca_print(ca_print_fn print, const char *bench, const struct ca_result *r, const struct ca_term *t, size_t n);

/* ---- event counting, through pmu/pmu_bench_api.h ---------------------------------------------------- */

/*
 * The benchmarks count events around a region on the calling CPU through the PMU's link-time API
 * (pmu_count_*). In the UEFI image that programs counter groups when the PMU may be programmed and its
 * figures are measurements; the Linux runner and QEMU TCG have none, and everything that needs counts then
 * reports "unavailable" with the reason. Unit tests link tests/unit/fake_pmu.c instead. Only the
 * benchmark's own CPU counts, with no record open (the PMU code emits pmu_measure records).
 */

/* Whether events can be counted in this run; else *why (optional) says why. */
bool ca_can_count(const char **why);

/*
 * Event lists. A list names, per PMU family, the events that count one kind of event, in order of preference;
 * the PMU's generated event table (pmu_count_event_table) decides which entries apply:
 *   CA_ON(CA_T_NHM, "BR_MISP_EXEC:COND")   = "nhm wsm wsm_dp@BR_MISP_EXEC:COND": only on those tables
 *   "UNC_QMC_NORMAL_READS:ANY"             no "tables@": on any PMU that accepts it
 * The first applicable entry the PMU accepts is used. Entries for other tables are not candidates at all (a
 * name that means something else elsewhere can never be picked there). Only events that count the list's kind
 * (or, on a PMU without such an event, a superset the benchmark names in its record) belong in a list: when
 * the first applicable entry is refused, what is used instead and why the earlier ones were refused go into
 * the note, which the record that uses the count carries (`event_note`).
 */
#define CA_T_NHM "nhm wsm wsm_dp"                 /* Nehalem 06_1A/1E/1F/2E, Westmere 06_25 (wsm), 06_2C/2F (wsm_dp) */
#define CA_T_ARCH "arch"                          /* later Intel: SDM Table 18-1 architectural events only */
#define CA_T_AMD "amd_k8 amd_fam10h amd_fam15h"   /* K8, K10 (family 10h), family 15h */
#define CA_T_ZEN "amd_fam17h_zen1 amd_fam17h_zen2 amd_fam19h_zen3 amd_fam19h_zen4"
#define CA_T_P4 "netburst netburst_p"             /* NetBurst family 0Fh */
#define CA_ON(tables, spec) tables "@" spec

/* Whether list entry `cand` applies to event table `table` (NULL: none known); *spec (optional) = the
 * specifier without its "tables@" prefix. */
bool ca_cand_applies(const char *cand, const char *table, const char **spec);

/* One event to count: the first applicable entry of `candidates` (NULL-terminated list, see above) that the
 * PMU accepts is used. */
#define CA_MAX_EVENTS 16
#define CA_NOTE_MAX 256
struct ca_event {
    const char *const *candidates;
    const char *used;       /* out: the specifier that counted (no "tables@"), NULL when none could */
    uint64_t count;         /* out */
    char note[CA_NOTE_MAX]; /* out: "" when the first applicable entry counted; else what was refused and
                               why ("X: <why>; Y: <why>"), or why nothing could be counted */
};

/* Counts the events around fn(arg): each event resolved to its first accepted applicable candidate, then fn runs
 * once per group of at most pmu_count_max_events events (fn must do the same work every time); a group the
 * PMU refuses is counted one event per run instead. Returns the number of events counted (those with used !=
 * NULL), or -1 with *why set when nothing can be counted in this run or nothing could be counted. */
int ca_count(struct ca_event *ev, size_t n, void (*fn)(void *), void *arg, char *why, size_t whylen);

/* Lists shared by the benchmarks (docs/pmu.md, "Events per benchmark and model"). */
extern const char *const ca_ev_cycles[];      /* unhalted core cycles */
extern const char *const ca_ev_instructions[]; /* retired instructions */
extern const char *const ca_ev_stalls[];      /* cycles with no uop retired (Intel) / dispatch stalls (AMD) */
extern const char *const ca_ev_br_misp[];     /* every mispredicted branch (the cycle-accounting term) */
extern const char *const ca_ev_div_busy[];    /* ARITH.CYCLES_DIV_BUSY */
extern const char *const ca_ev_unc_reads[];   /* UNC_QMC_NORMAL_READS.ANY (Nehalem/Westmere uncore) */
extern const char *const ca_ev_unc_writes[];  /* UNC_QMC_WRITES.FULL.ANY */

/* The decomposition's terms: events and the penalty each is multiplied by. */
struct ca_term_def {
    const char *const *candidates;
    const char *penalty;
};
extern const struct ca_term_def ca_terms[];
extern const size_t ca_n_terms;

/* One workload's decomposition. */
struct ca_account {
    bool ok;
    char reason[160];                  /* why not ok */
    const char *cycles_event, *stall_event;
    char cycles_note[CA_NOTE_MAX], stall_note[CA_NOTE_MAX]; /* as ca_event.note */
    char note[CA_MAX_EVENTS][CA_NOTE_MAX];                   /* t[i].note points here */
    struct ca_term t[CA_MAX_EVENTS];   /* ca_n_terms used */
    size_t n;
    struct ca_result r;
};

/* Counts cycles, stalls and every term's event around fn(arg) (several runs of fn when they do not fit one
 * counter group) and applies the penalties of ca_penalty_get. Call with no record open. 0, or -1 (a->reason). */
int ca_measure(struct ca_account *a, void (*fn)(void *), void *arg);
/* The `cycle_accounting` record's keys (ok or unavailable) and the table. */
void ca_account_json(struct json *j, const char *bench, const struct ca_account *a);
void ca_account_print(ca_print_fn print, const char *bench, const struct ca_account *a);

#endif
