/* lbr_capture.h - capture the LBR stack around a piece of code (IA32_DEBUGCTL.LBR, LBR_SELECT, TOS, FROM/TO). */
#ifndef PMB_PMU_LBR_CAPTURE_H
#define PMB_PMU_LBR_CAPTURE_H

#include "kernel/klib.h"
#include "kernel/json.h"
#include "pmu/lbr.h"

#define PMU_LBR_MAX 32

struct pmu_lbr_capture {
    unsigned n;                        /* entries decoded: the stack depth */
    struct lbr_entry e[PMU_LBR_MAX];   /* most recent first */
    uint64_t tos;                      /* MSR_LASTBRANCH_TOS as read */
    uint64_t debugctl;                 /* IA32_DEBUGCTL before the capture */
    uint64_t select;                   /* MSR_LBR_SELECT written (0 when the model has none) */
    uint32_t id;                       /* pmu_measure id */
    int status;                        /* 0 programmed; -1 nothing programmed (why) */
    bool active;
    bool valid;                        /* entries are measurements (else why) */
    const char *why;
    unsigned faults;
};

/* Enable LBR recording: a pmu_measure record ("what":"lbr"), MSR_LBR_SELECT from `capture`
 * (LBR_CAPTURE_* flags: what to record, [NHM] Table 19) where the model has it, then IA32_DEBUGCTL
 * read-modify-write with LBR set. Returns 0 when programmed (also in a dry run), else -1 (why).
 * Call with no record open; keep the captured code short (the stack is 16 deep on Nehalem). */
int pmu_lbr_begin(struct pmu_lbr_capture *c, uint32_t capture);
/* Clear IA32_DEBUGCTL.LBR first (freezes the stack), then read TOS and every FROM/TO and decode per
 * the LBR format. */
void pmu_lbr_end(struct pmu_lbr_capture *c);
/* How many entries go from `from` to `to`. */
unsigned pmu_lbr_count(const struct pmu_lbr_capture *c, uint64_t from, uint64_t to);
/* Keys for a record: lbr_status, lbr_reason, lbr_format, lbr_depth, lbr_tos, lbr (entries
 * [{from, to, mispred}] most recent first; null when not valid). */
void pmu_lbr_json(const struct pmu_lbr_capture *c, struct json *j);
/* Capture pmu_known_loop(iterations) and count its backward branch: the self-test and the flow. */
int pmu_lbr_known_loop(struct pmu_lbr_capture *c, uint64_t iterations, unsigned *hits);

#endif
