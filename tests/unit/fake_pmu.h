/* fake_pmu.h - the unit tests' pmu/pmu_bench_api.h: events and their counts scripted by the test, no cycle counter, no PEBS. */
#ifndef PMB_TESTS_FAKE_PMU_H
#define PMB_TESTS_FAKE_PMU_H

#include "pmu/pmu_bench_api.h"

#define FAKE_PMU_MAX_EVENTS 16

/* One event the fake PMU knows: its name and what it counts each time the workload runs once. */
struct fake_pmu_event {
    const char *name;
    uint64_t per_run;
};

struct fake_pmu {
    const char *absent;          /* non-NULL: nothing can be counted in this run, and why */
    unsigned max_events;         /* events one group takes (pmu_count_max_events) */
    struct fake_pmu_event events[FAKE_PMU_MAX_EVENTS]; /* known events, up to the first NULL name */
    unsigned fail_groups_over;   /* a group of more events than this is refused (0: none is) */
    const char *table;           /* what pmu_count_event_table says ("nhm", ...; NULL: no table) */
    double pebs_cycles;          /* > 0: load-latency PEBS is armed and every row's mean is this (cycles) */
    /* out */
    unsigned groups;             /* groups programmed (each ran the workload once) */
};
extern struct fake_pmu FAKE_PMU;

/* No counting in this run, with this reason (the state every test program starts in: "unit test: no PMU"). */
void fake_pmu_absent(const char *why);
/* A PMU that counts `events` (NULL-name terminated, copied), max_events at once; groups reset to 0, table
 * NULL (set FAKE_PMU.table for the per-model event lists of the benchmarks). */
void fake_pmu_counts(const struct fake_pmu_event *events, unsigned max_events);

#endif
