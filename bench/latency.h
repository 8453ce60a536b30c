/* latency.h - the `latency` benchmark (size sweep, cache inference, Table 2 data sources) and the hooks the PMU code fills. */
#ifndef PMB_BENCH_LATENCY_H
#define PMB_BENCH_LATENCY_H

#include "kernel/klib.h"

#define LATENCY_WHAT "load-to-use latency: size sweep with 4K/2M/1G pages, cache knees vs CPUID, Table 2 data sources"

/* Sweep (latency_sweep, latency_series, cache_inferred records) then the Table 2 rows (data_source
 * records), each with a human-readable table. */
void bench_latency(void);

/*
 * Core-clock counter hook. The PMU code installs a reader of a core-cycle counter (IA32_FIXED_CTR1,
 * CPU_CLK_UNHALTED.CORE, through RDPMC): it is read on the measuring CPU right before and after each
 * measurement taken on the benchmark's own CPU, together with the TSC, and the ratio of the two deltas
 * replaces the platform's core/TSC ratio for that measurement; the record's cycles_method then says
 * "fixed_counter:<method>". read returns false when the counter is not running on the calling CPU.
 */
struct latency_cycle_counter {
    bool (*read)(uint64_t *value);
    const char *method; /* e.g. "IA32_FIXED_CTR1" */
};
/* NULL uninstalls. The struct must outlive the run. */
void latency_set_cycle_counter(const struct latency_cycle_counter *c);
const struct latency_cycle_counter *latency_cycle_counter(void);

/*
 * PEBS cross-check hook (the PMU issue's load-latency check of each Table 2 row). Called on the benchmark's
 * CPU after each measured data_source record has been emitted; the hook may emit its own records (e.g.
 * `pebs_latency` with "row": c->row) and may call c->replay as often as it likes: each call places the
 * lines again exactly as the row did and runs one pass of dependent loads on c->cpu (the CPU to arm PEBS
 * on). replay returns 0, or -1 when a CPU failed.
 */
struct latency_pebs_ctx {
    const char *row;        /* data_source "source" */
    uint32_t cpu;           /* plat_cpu.id of the CPU doing the measured loads */
    const void *lines;      /* first byte of the measured buffer ... */
    uint64_t bytes;         /* ... and its length */
    size_t loads_per_replay;
    double cycles;          /* the row's measured latency, core cycles */
    int (*replay)(void *arg);
    void *arg;
};
typedef void (*latency_pebs_fn)(const struct latency_pebs_ctx *c);
void latency_set_pebs_hook(latency_pebs_fn fn);
latency_pebs_fn latency_pebs_hook(void);

#endif
