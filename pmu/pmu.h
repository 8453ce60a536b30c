/* pmu.h - kernel side of the PMU: capabilities detected once at start-up, feature gates, msr_trace records. */
#ifndef PMB_PMU_H
#define PMB_PMU_H

#include "kernel/klib.h"
#include "kernel/json.h"
#include "pmu/event.h"
#include "pmu/pmu_model.h"
#include "pmu/usable.h"

/* What the PMU code can do; each is gated by the capabilities and, once it ran, by the self-test. */
enum pmu_feature {
    PMU_FEAT_COUNTING = 0, /* core counters (fixed + general / AMD / NetBurst) */
    PMU_FEAT_OVERFLOW,     /* overflow detection (IA32_PERF_GLOBAL_STATUS, CCCR.OVF, wrap) */
    PMU_FEAT_PEBS,         /* PEBS with load latency through the DS area */
    PMU_FEAT_LBR,          /* last branch records */
    PMU_FEAT_UNCORE,       /* Nehalem/Westmere 0x391.. uncore, AMD family 15h NB counters */
    PMU_FEAT_OFFCORE,      /* MSR_OFFCORE_RSP_0/1 */
    PMU_FEAT_COUNT
};

#define PMU_REASON_ASSUMED "assumed PMU"

struct pmu_state {
    bool initialized;
    struct pmu_caps caps;   /* detected, or the assumed model row's (pmu_caps_for_model) */
    bool present;           /* this run programs counters: a real PMU, or an assumed one (dry run) */
    bool assumed;           /* pmu_assume=MODEL: caps from the table, QEMU's MSRs are silent */
    char assumed_name[16];
    bool detect_ran;        /* caps hold a detection result (false: none, e.g. under QEMU TCG) */
    const char *status;     /* "detected" | "partial" | "assumed" | "unavailable" */
    const char *reason;     /* why it is not plainly "detected"; NULL then */
    const struct pmu_event_table *tables[2]; /* core table, uncore table (may be NULL) */
    unsigned ntables;
    bool perf_cap_read, misc_enable_read;    /* which MSRs detection read (rdmsr_safe) */
    uint64_t perf_capabilities, misc_enable;
    bool has[PMU_FEAT_COUNT];                /* the capabilities include the feature */
    bool failed[PMU_FEAT_COUNT];             /* disabled for the run (self-test) */
    char failed_why[PMU_FEAT_COUNT][160];
    struct pmu_usable ctrs;                  /* core counters (general, fixed) the self-test left usable, and
                                                why each other one is gone (pmu/usable.h) */
    bool selftest_done;
    int smm_freeze;                          /* IA32_DEBUGCTL.FREEZE_WHILE_SMM: 1 set (read back), 0 tried
                                                and not set, -1 not supported; smm_freeze_why says why */
    const char *smm_freeze_why;
};

extern struct pmu_state PMU;

/* Detection, once, before the run record (app/main.c). Reads IA32_MISC_ENABLE and, only when
 * CPUID.1:ECX.PDCM is set, IA32_PERF_CAPABILITIES, both with rdmsr_safe. With config trace_msr=1
 * it also starts the kernel's msr_trace (kernel/msr.h). pmu_assume=MODEL takes that model row's
 * capabilities. The self-test is not run here: pmu_init (pmu/pmu_init.h) does that, after the run
 * record. */
void pmu_probe(void);

/* The run record's "pmu" object: vendor, model, version, gp_counters, gp_width, fixed_counters,
 * fixed_width, pebs, pebs_format, load_latency, lbr_format, lbr_depth, offcore, uncore,
 * full_width_write, freeze_while_smm (true | false + freeze_while_smm_reason | "not supported (...)"),
 * family_model ("06_1A"; null without detection), errata ({"pmu_reset": "AAK100"} or {}), status,
 * reason, assumed (only with pmu_assume). */
void pmu_summary_json(struct json *j);
/* Every capability field (the flow's `pmu` record). */
void pmu_caps_json(struct json *j);

const char *pmu_feature_name(enum pmu_feature f);
/* true when the PMU code may program feature f on this run (a real PMU that has it and whose
 * self-test did not fail, or an assumed one for the dry run); else *why says why not. */
bool pmu_may_program(enum pmu_feature f, const char **why);
/* true when numbers derived from feature f are measurements; false under pmu_assume
 * (PMU_REASON_ASSUMED), when the PMU is unavailable, or when the self-test disabled f. */
bool pmu_figures_valid(enum pmu_feature f, const char **why);
/* Disable f for the rest of the run (self-test failure); why is copied. */
void pmu_feature_disable(enum pmu_feature f, const char *why);

/* The model's event tables in parse order (core, uncore) and how many there are. */
const struct pmu_event_table *const *pmu_tables(unsigned *n);

/* ---- records ----------------------------------------------------------------------------- */

/* rec_begin/rec_end that first emit queued msr_trace records, so the stream's order is the order
 * in which things happened. Call with no record open. */
struct json *pmu_rec_begin(const char *type);
void pmu_rec_end(void);

/* A measurement window: pmu_window_open returns a fresh id and starts queueing (not emitting)
 * msr_trace records so that serial output stays out of measured code; the caller emits the
 * `pmu_measure` record (with that id) just before. pmu_window_close emits queued traces and the
 * `pmu_measure_end` record. */
uint32_t pmu_window_next_id(void);
void pmu_window_open(uint32_t id);
void pmu_window_close(uint32_t id);

/* SMP index of the calling CPU (smp_current_index: no CPUID, no traced MSR access, so it may run while
 * counters count - pmu_core_cycles_read calls it between RDPMC reads). The PMU code programs counters
 * on the BSP (index 0) only. */
uint32_t pmu_cpu_index(void);

/* JSON helpers: "0x..." strings for MSR numbers and values. */
void pmu_json_msr(struct json *j, const char *key, uint32_t msr);

#endif
