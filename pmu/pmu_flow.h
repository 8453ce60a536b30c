/* pmu_flow.h - the `pmu` benchmark: the whole PMU flow from the capability summary to an LBR capture. */
#ifndef PMB_PMU_FLOW_H
#define PMB_PMU_FLOW_H

/* Emits, in order: `pmu` (every capability and feature gate), `pmu_selftest` (unless start-up's
 * pmu_init already ran it), `pmu_counting`
 * records for counting groups over a chase (config events= or the model's default set), off-core
 * response, uncore (Nehalem/Westmere) or DRAM (AMD family 10h/15h) bandwidth per socket
 * (pmu/uncore_bw.h), `pebs_latency` for a
 * chase, and an `lbr` capture of a known loop. Steps the PMU cannot do say `unavailable` with the
 * reason; with pmu_assume every step programs the MSRs and reports `unavailable` / `assumed PMU`. */
void pmu_bench(void);

/* The default event list of the current model for the counting step ("" when it has none). */
const char *pmu_default_events(void);

#endif
