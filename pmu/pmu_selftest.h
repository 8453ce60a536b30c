/* pmu_selftest.h - the on-hardware PMU self-test: known counts before any counter is trusted. */
#ifndef PMB_PMU_SELFTEST_H
#define PMB_PMU_SELFTEST_H

#include "kernel/klib.h"

/* Run the self-test once and emit the `pmu_selftest` record (status ok | failed | unavailable,
 * checks [{name, status, detail}], disabled [features]). Each failed check disables its feature for
 * the run (pmu_feature_disable). Checks, where the model has the feature:
 *   inst_retired_exact  INST_RETIRED over pmu_known_loop(N) and (2N): the difference is exactly 2N
 *                       (+-2), the constant part (enable/disable path) at most 1024 instructions
 *   cycles_vs_tsc       unhalted core cycles / TSC ticks over the 2N run within 15% of the ratio the
 *                       kernel measured at start-up (K.time.core_tsc_ratio)
 *   overflow            a general counter preloaded 1000 below wrap counts the loop: the overflow is
 *                       seen (status bit, CCCR.OVF or the wrap) and the count is right
 *   offcore_response    OFFCORE_RESPONSE_0 demand data reads over a 1 MiB chase are > 1/32 of the loads
 *   pebs_l1             load-latency PEBS on an L1-resident chase: records exist, addresses inside
 *                       the buffer, at least half of them with data source 1 (L1 hit)
 *   lbr_loop            the LBR stack after the known loop holds its backward branch
 *   uncore_clock        the uncore fixed counter over 1 ms of TSC: 0.05..5 uncore clocks per tick
 * Zero counts fail every check: under pmu_assume (QEMU's silent MSRs) the self-test fails honestly. */
void pmu_selftest_run(void);
/* Runs it if it has not run yet (the counting, PEBS and LBR entry points call this). */
void pmu_selftest_ensure(void);

#endif
