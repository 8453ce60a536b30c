/* pmu_bench_api.h - the PMU as the benchmarks call it, linked directly: core cycles, event counts around a function, the Table 2 PEBS cross-check. */
#ifndef PMB_PMU_BENCH_API_H
#define PMB_PMU_BENCH_API_H

#include "kernel/klib.h"

/*
 * bench/ calls these functions and nothing else of pmu/ for its measurements (no hooks, no function
 * pointers installed at run time). One implementation is linked into each program:
 *   pmu/pmu_bench_api.c          the UEFI image: pmu/counting.h, RDPMC, pmu/pebs_capture.h
 *   bench/hosted/pmu_absent.c    the hosted runner: the PMU belongs to the OS, every call says so
 *   tests/unit/fake_pmu.c        the unit tests: events and counts scripted by the test
 * Only the benchmark's own CPU calls them, with no record open: the image's implementation emits
 * pmu_measure and pebs_latency records of its own.
 */

/* ---- core cycles -------------------------------------------------------------------------------- */

/* How the core-cycle counter is read when this run has one (a real PMU with counters, not pmu_assume),
 * else NULL: the benchmarks then use the platform's core/TSC ratio. The string outlives the run. */
const char *pmu_core_cycles_method(void);

/* Unhalted core cycles through RDPMC (IA32_FIXED_CTR1 on Intel v2+, else a general counter; AMD 76H;
 * NetBurst global_power_events). The counter is started on the first read and runs until another PMU
 * measurement needs the counters. False when there is no counter (pmu_core_cycles_method is NULL), when
 * it is not running, on any CPU but the BSP, when the PMU self-test failed, and under pmu_assume. */
bool pmu_core_cycles_read(uint64_t *value);

/* ---- event counts around a function ------------------------------------------------------------- */

/* Events one pmu_count_around may be given at once, or 0 when no event can be counted in this run (in a
 * pmu_assume dry run it is the model's count: the groups are programmed, their counts never returned);
 * *why (optional) then says why (e.g. "PMU: QEMU TCG emulates no performance counters ..."). */
unsigned pmu_count_max_events(const char **why);

/* Whether one event specifier (pmu_event_parse syntax) can be counted here; nothing is programmed. When it
 * cannot, why (optional: NULL, or whylen bytes) says why: the parser's or the scheduler's one-line message. */
bool pmu_count_accepts(const char *spec, char *why, size_t whylen);

/* The generated event table this run parses specifiers against ("nhm", "wsm", "wsm_dp", "arch", "amd_fam10h",
 * "netburst", ...: pmu_caps.event_table), or NULL when no event can be counted (pmu_count_max_events is 0) or
 * the model has no table. The benchmarks pick their per-model event lists by it. */
const char *pmu_count_event_table(void);

enum pmu_count_status {
    PMU_COUNT_OK = 0,
    PMU_COUNT_REFUSED = -1, /* the events could not be programmed together (why): fn did not run */
    PMU_COUNT_LOST = -2,    /* fn ran, but the counts are unusable (why: overflow, not measured, a dry run) */
};

/* Programs the n events as one counter group on the calling CPU (counts zeroed), runs fn(arg) once,
 * stops them and stores the n counts in order. */
enum pmu_count_status pmu_count_around(const char *const *specs, unsigned n, void (*fn)(void *), void *arg,
                                       uint64_t *counts, char *why, size_t whylen);

/* ---- the PEBS cross-check of a Table 2 row ------------------------------------------------------ */

/* Whether this run arms load-latency PEBS around the Table 2 rows (the PMU has it; a dry run too). */
bool pmu_latency_pebs_available(void);

/* One measured Table 2 row (the data_source record just emitted). */
struct pmu_latency_pebs_ctx {
    const char *row;         /* data_source "source" */
    uint32_t cpu;            /* plat_cpu.id of the CPU doing the measured loads */
    const void *lines;       /* first byte of the measured buffer ... */
    uint64_t bytes;          /* ... and its length */
    size_t loads_per_replay; /* dependent loads one replay issues */
    double cycles;           /* the row's measured latency, core cycles */
};

/* What the PEBS pass gave, for the caller's cross-check of the row's timing against it. */
struct pmu_latency_pebs_result {
    bool valid;          /* samples that are measurements (not a dry run, not an unusable capture) */
    double mean_cycles;  /* mean load latency over every sample inside the buffer, core cycles */
    uint64_t samples;
    const char *why;     /* !valid: why (static string) */
};

/* Load-latency PEBS armed on the BSP around replay(arg) (replayed until enough samples, at most 16 times;
 * once in a dry run), then `pebs_latency` records for c->row with the row's own latency beside the PEBS
 * means, and the mean in *out. Each replay places the lines again exactly as the row did and runs one pass
 * of dependent loads on c->cpu; it returns 0, or -1 when a CPU failed (no more replays). A row measured on
 * another CPU gets one `pebs_latency` record saying unavailable. */
void pmu_latency_pebs(const struct pmu_latency_pebs_ctx *c, int (*replay)(void *arg), void *arg,
                      struct pmu_latency_pebs_result *out);

#endif
