/* latency_hooks.h - the PMU side of the latency benchmarks' hooks: a core-cycle counter and the PEBS cross-check. */
#ifndef PMB_PMU_LATENCY_HOOKS_H
#define PMB_PMU_LATENCY_HOOKS_H

#include "kernel/klib.h"

struct latency_pebs_ctx;

/* Installs both hooks of bench/latency.h when the PMU is present (pmu_init calls it):
 *   latency_set_cycle_counter: reads unhalted core cycles through RDPMC (IA32_FIXED_CTR1 on Intel
 *     v2+, else a general counter; AMD 76H; NetBurst global_power_events). The counter is started on
 *     the first read and runs until another PMU measurement needs the counters; read() returns false
 *     when it is not running, on any CPU but the BSP, when the self-test failed, and under
 *     pmu_assume (QEMU raises #UD for RDPMC).
 *   latency_set_pebs_hook: pmu_latency_pebs below. */
void pmu_latency_hooks_install(void);

/* The PEBS cross-check of one Table 2 row: load-latency PEBS armed on the BSP around c->replay
 * (replayed until enough samples, at most 16 times; once in a dry run), then `pebs_latency` records
 * for c->row with the row's own latency (timing_cycles) beside the PEBS means. Rows measured on another
 * CPU get one `pebs_latency` record saying unavailable. */
void pmu_latency_pebs(const struct latency_pebs_ctx *c);

#endif
