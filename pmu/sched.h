/* sched.h - assign events to counters, splitting into the fewest groups when they do not all fit. */
#ifndef PMB_PMU_SCHED_H
#define PMB_PMU_SCHED_H

#include "kernel/klib.h"
#include "pmu/event.h"

#define SCHED_MAX_EVENTS 32
#define SCHED_MAX_ALTS 2
#define SCHED_NUM_CLASSES 4 /* enum pmu_ctr_class */

/* One way to place an event: any counter of cntmask, plus a shared register (MSR_OFFCORE_RSP_x,
 * MSR_PEBS_LD_LAT_THRESHOLD, a NetBurst ESCR) that must hold reg_val. Two events in one group may
 * use the same register only with the same value. */
struct sched_alt {
    uint64_t cntmask;
    uint32_t reg; /* 0 = none */
    uint64_t reg_val;
};

struct sched_event {
    uint8_t cls;  /* enum pmu_ctr_class: events of different classes never compete */
    uint8_t nalt; /* 1..SCHED_MAX_ALTS */
    struct sched_alt alt[SCHED_MAX_ALTS];
};

struct sched_assign {
    uint8_t group;
    uint8_t alt;     /* which sched_alt was used (Westmere: 0 = OFFCORE_RSP_0, 1 = the other MSR) */
    uint8_t counter; /* bit index in cntmask: GP i, fixed 32+j (core); uncore fixed 32; ... */
};

struct sched_result {
    unsigned ngroups;
    struct sched_assign a[SCHED_MAX_EVENTS]; /* by input index */
    bool optimal;  /* the search proved no fewer groups exist */
    int bad_event; /* index of an event no counter can take even alone, else -1 */
};

enum sched_err {
    SCHED_OK = 0,
    SCHED_ERR_ARGS = -1,
    SCHED_ERR_IMPOSSIBLE = -2, /* res->bad_event fits nowhere */
};

/* avail[cls] = counters usable per class (e.g. 0xf | 0x7ULL << 32 for Nehalem core). Events are
 * placed most-constrained first with backtracking, for k = lower bound, k+1, ... groups; the
 * first k that works is returned. Deterministic: same input, same output. */
int sched_assign(const struct sched_event *ev, unsigned n, const uint64_t avail[SCHED_NUM_CLASSES],
                 struct sched_result *res);

/* Scheduler view of a parsed event: its counters and its extra register (with the Westmere
 * OFFCORE_RSP_1 alternative, or the two NetBurst ESCRs). gp_only drops fixed counters (PEBS
 * sampling needs a general counter). Returns -1 if the event names an unknown ESCR. */
int sched_event_from_enc(const struct pmu_event_enc *e, bool gp_only, struct sched_event *out);

#endif
