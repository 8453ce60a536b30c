/* counting.h - program, start, stop, read and release counter groups (Intel, uncore, AMD, NetBurst); the counting API. */
#ifndef PMB_PMU_COUNTING_H
#define PMB_PMU_COUNTING_H

#include "kernel/klib.h"
#include "kernel/json.h"
#include "pmu/event.h"
#include "pmu/sched.h"

#define PMU_GROUP_MAX 24                  /* counters one group can hold (18 on NetBurst) */
#define PMU_COUNTING_MAX SCHED_MAX_EVENTS /* events one counting set can hold */

enum pmu_slot_kind {
    PMU_SLOT_INTEL_GP = 0, /* IA32_PERFEVTSELx / IA32_PMCx */
    PMU_SLOT_INTEL_FIXED,  /* IA32_FIXED_CTR_CTRL field / IA32_FIXED_CTRx */
    PMU_SLOT_UNCORE_GP,    /* MSR_UNCORE_PERFEVTSELx / MSR_UNCORE_PMCx */
    PMU_SLOT_UNCORE_FIXED, /* MSR_UNCORE_FIXED_CTR_CTRL / MSR_UNCORE_FIXED_CTR0 */
    PMU_SLOT_AMD,          /* PERF_CTLn / PERF_CTRn (legacy or extended) */
    PMU_SLOT_AMD_NB,       /* family 15h NB_PERF_CTLn / NB_PERF_CTRn */
    PMU_SLOT_P4,           /* ESCR + CCCRn / PERFCTRn */
};

/* One counter of a group: where it is and what goes into it. */
struct pmu_slot {
    char name[80];       /* event name without the "table::" prefix */
    const char *table;
    uint8_t kind;        /* enum pmu_slot_kind */
    uint8_t index;       /* counter index within its kind */
    uint8_t width;       /* counter bits */
    uint32_t ctl_msr, ctr_msr;
    uint64_t ctl;        /* control value with the local enable set (fixed: the 4-bit field) */
    uint32_t extra_msr;  /* OFFCORE_RSP_x / PEBS_LD_LAT_THRESHOLD, 0 = none */
    uint64_t extra;
    uint32_t escr_msr;   /* NetBurst */
    uint64_t escr;
    uint64_t preload;    /* counter start value (2^width - N arms an overflow after N events) */
    uint64_t raw;        /* counter read after stop */
    uint64_t value;      /* events counted: raw - preload, with one wrap added when OVF says so */
    bool overflowed;
    bool read_ok;
    int ev;              /* index in the caller's event list, -1 none */
};

/* A set of events that are programmed and counted together. */
struct pmu_group {
    unsigned n;
    struct pmu_slot s[PMU_GROUP_MAX];
    const char *what;    /* "counting", "selftest:inst_retired", "pebs", ... (pmu_measure record) */
    const char *label;   /* free text for the record (benchmark name), may be NULL */
    uint32_t id;         /* measurement id (pmu_measure / pmu_measure_end records) */
    bool pebs;           /* IA32_PEBS_ENABLE is part of this group */
    uint8_t pebs_counter;
    uint64_t pebs_enable;
    uint32_t pebs_ldlat;
    uint64_t pebs_period;
    uint64_t status;     /* IA32_PERF_GLOBAL_STATUS read after stop */
    uint64_t unc_status; /* MSR_UNCORE_PERF_GLOBAL_STATUS read after stop */
    unsigned faults;     /* MSR accesses that faulted */
    bool programmed, running;
    bool local_off;      /* stopped with the Intel per-counter enables cleared (pmu_group_stop) */
    bool smm_restart;    /* IA32_PERF_GLOBAL_CTRL read back non-zero after a stop: an SMI's RSM set it */
};

void pmu_group_init(struct pmu_group *g, const char *what, const char *label);
/* Add a parsed event on the counter the scheduler chose (bit as in sched_assign.counter, alt as
 * sched_assign.alt). -1 when the group is full or the placement does not exist on this PMU. */
int pmu_group_add(struct pmu_group *g, const struct pmu_event_enc *e, unsigned alt, unsigned bit, int ev);
/* Schedule n events into this one group; -1 (err written) if they need more than one group. */
int pmu_group_add_all(struct pmu_group *g, const struct pmu_event_enc *e, unsigned n, bool gp_only, char *err,
                      size_t errlen);
/* Emit the pmu_measure record, open the window, then: global disable, every control and extra MSR,
 * counters cleared or preloaded, overflow status cleared, IA32_PEBS_ENABLE (if pebs). Nothing counts
 * yet. Returns 0, or -1 when the group is empty. */
int pmu_group_program(struct pmu_group *g);
/* The group's `pmu_measure` record (what pmu_group_program emits first): events, counters, MSRs, the
 * global enables; with cpu >= 0 also the CPU and socket whose MSRs it programs (a group programmed on
 * another socket's CPU, pmu/uncore_bw.c). */
void pmu_group_record(const struct pmu_group *g, int cpu, int socket);
/* Whether the group has uncore counters (general or fixed). */
bool pmu_group_uses_uncore(const struct pmu_group *g);
/* Enable: uncore global, local enables (AMD, NetBurst, perfmon v1; after a stop also the Intel
 * PERFEVTSELx EN bits and IA32_FIXED_CTR_CTRL), then IA32_PERF_GLOBAL_CTRL last. */
void pmu_group_start(struct pmu_group *g);
/* Disable: IA32_PERF_GLOBAL_CTRL first, then every local enable - the Intel PERFEVTSELx EN bits and
 * IA32_FIXED_CTR_CTRL too, because with FREEZE_WHILE_SMM an SMI's RSM sets every IA32_PERF_GLOBAL_CTRL
 * enable bit (SDM Vol. 3B "Freezing counters on SMI") and would restart any counter still locally
 * enabled, between the stop and the read or during a PEBS drain - and the uncore global control. With
 * FREEZE_WHILE_SMM on, IA32_PERF_GLOBAL_CTRL is read back last: non-zero sets smm_restart (an SMI in
 * the few cycles between the global disable and the local ones). */
void pmu_group_stop(struct pmu_group *g);
/* Read status and every counter (after stop); fills raw/value/overflowed. */
void pmu_group_read(struct pmu_group *g);
/* Zero every control MSR the group used, clear overflow status, close the window. */
void pmu_group_release(struct pmu_group *g);
/* The slot holding caller event ev, or NULL. */
const struct pmu_slot *pmu_group_slot(const struct pmu_group *g, int ev);
/* "pmc0", "fixed1", "unc_pmc3", "unc_fixed", "ctr2", "nb_ctr0", "p4_ctr12" */
void pmu_slot_counter_name(const struct pmu_slot *s, char *buf, size_t len);
/* RDPMC index for the slot's counter (ring 0). */
uint32_t pmu_slot_rdpmc_index(const struct pmu_slot *s);

/* ---- counting API (benchmarks) ------------------------------------------------------------
 *   static struct pmu_counting pc;
 *   pmu_counting_prepare(&pc, NULL, "chase_l2");      // NULL: config events= (empty: nothing)
 *   for (unsigned g = 0; g < pc.ngroups; g++) {
 *       pmu_counting_begin(&pc, g);  <the same deterministic timed region>  pmu_counting_end(&pc, g);
 *   }
 *   ... in the benchmark's record: pmu_counting_json(&pc, j, iterations);
 * Call on the BSP with no record open. Counters are per logical CPU. */

struct pmu_counting {
    unsigned nev;
    struct pmu_event_enc ev[PMU_COUNTING_MAX];
    struct sched_result sched;
    unsigned ngroups;            /* groups to run (0: nothing to count) */
    uint64_t value[PMU_COUNTING_MAX];
    bool measured[PMU_COUNTING_MAX];
    bool overflowed[PMU_COUNTING_MAX];
    int status;                  /* PMU_COUNTING_* */
    bool valid;                  /* values are measurements (else see why) */
    const char *why;
    char err[256];               /* parse/schedule error */
    const char *label;
    struct pmu_group g;
};

enum {
    PMU_COUNTING_OK = 0,
    PMU_COUNTING_NONE = 1,         /* no events requested */
    PMU_COUNTING_UNAVAILABLE = -1, /* no PMU / feature disabled: nothing is programmed */
    PMU_COUNTING_ERROR = -2,       /* bad event list: err says why */
};

/* Parse events (comma/blank separated specifiers; NULL = config events=) against the model's
 * tables and schedule them into the fewest groups, on the counters the start-up self-test left
 * usable (PMU.ctrs; it never runs the self-test). Returns status (also in c->status). */
int pmu_counting_prepare(struct pmu_counting *c, const char *events, const char *label);
/* Program and start group g (its last MSR write is the global enable). 0, or -1 if nothing to do. */
int pmu_counting_begin(struct pmu_counting *c, unsigned group);
/* Stop (the first MSR write is the global disable), read, release group g. */
void pmu_counting_end(struct pmu_counting *c, unsigned group);
/* Benchmark-record keys: "counters" {event: value / per, or null}, "counters_per", "counters_status"
 * ("ok" | "none" | "unavailable" | "error"), "counters_reason", "counter_groups" [[names], ...]. */
void pmu_counting_json(const struct pmu_counting *c, struct json *j, double per);

/* ---- core cycles for a timed region via RDPMC ---------------------------------------------
 *   uint32_t idx; const char *why;
 *   bool live = pmu_cycles_start(&idx, &why);
 *   uint64_t c0 = live ? timing_rdpmc(idx) : 0;  <timed region>  uint64_t c1 = ...;
 *   pmu_cycles_stop();                            // always safe to call
 * Counts unhalted core cycles (Intel FIXED_CTR1 or event 3CH, AMD 76H, NetBurst
 * global_power_events). Returns false (why set) when the cycles cannot be trusted: no PMU, the
 * self-test failed, or pmu_assume (the dry run still programs the counter, RDPMC must not run:
 * QEMU raises #UD for it). Counter width for the difference: *width if non-NULL. */
bool pmu_cycles_start(uint32_t *rdpmc_idx, const char **why);
uint8_t pmu_cycles_width(void);
/* Whether the cycles counter is programmed and enabled now (any other group stops it). */
bool pmu_cycles_running(void);
void pmu_cycles_stop(void);

/* Built-in instructions-retired / core-cycles encodings for this PMU (parsed from the model's
 * table, or built from the architectural encodings when it has none). 0 or -1. */
int pmu_enc_instructions(struct pmu_event_enc *e);
int pmu_enc_cycles(struct pmu_event_enc *e);

#endif
