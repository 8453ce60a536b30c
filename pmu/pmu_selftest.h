/* pmu_selftest.h - the on-hardware PMU self-test: known counts before any counter is trusted. */
#ifndef PMB_PMU_SELFTEST_H
#define PMB_PMU_SELFTEST_H

#include "kernel/klib.h"

/* Run the self-test (pmu_init, pmu/pmu_init.h, calls it once at start-up) and emit the `pmu_selftest` record (status ok | failed | unavailable, checks
 * [{name, status, detail, feature, counter, event, counted, expected_lo, expected_hi}], disabled
 * [features]) and its console report: one line per check with the counter, expected and counted.
 * A failed check on one core counter (branches_pmcN, instructions_pmcN, instructions_fixed0,
 * cycles_vs_tsc) disables that counter only (PMU.ctrs, pmu/usable.h: the scheduler then never uses it)
 * and says "PMCn disabled" on its line; the record adds gp_usable / gp_disabled (and fixed_usable /
 * fixed_disabled). A feature is disabled as a whole when every counter it needs is gone (counting,
 * overflow, offcore, PEBS) or when one of its other checks fails (pmu_feature_disable), naming the check
 * and its counter. The verdicts are pmu/selftest_judge.h's; the workload is pmu_known_branch_loop
 * (7 instructions, 3 branches of which 1 conditional, >= 9 cycles per iteration). Checks, where the
 * model has the feature:
 *   instructions_fixed0  INST_RETIRED on the counter the scheduler picks (Intel: FIXED_CTR0), n vs 2n
 *   cycles_vs_tsc        unhalted core cycles / TSC ticks over the 2n run within 15% of the start-up ratio
 *   branches_pmcN        every general counter: retired branches with a unit-masked event where the
 *                        model has one (Nehalem/Westmere BR_INST_RETIRED.CONDITIONAL C4H/01H), exact
 *   instructions_pmcN    every general counter: retired instructions, exact (AMD: _ctrN)
 *   cmask_inv            CMASK=1 + CMASK=1:INV of one event = the core cycles ([PAG])
 *   overflow             a general counter preloaded 1000 below the wrap sees the overflow and counts right
 *   offcore_request_response  OFFCORE_RSP_0 = the flow's local-DRAM event (pmu_offcore_local_dram_event:
 *                        4001H nhm, 2001H wsm, 1001H wsm_dp) counts >= loads/4 over a chase of 4 x the
 *                        LLC on this CPU's node, its byte swap (0140H/0120H/0110H) <= loads/16
 *   pebs_l1              load-latency PEBS on an L1-resident chase: records, inside the buffer, half L1
 *   lbr_loop             the LBR stack after the known loop holds its backward branch
 *   uncore_stream_unc_pmcN  every uncore general counter (family 15h: nb_ctrN): one count per line of
 *                        a read pass over 4 x the LLC on this CPU's node, within 0.85..1.25
 *   uncore_clock         the uncore fixed counter over 1 ms of TSC: 0.05..5 uncore clocks per tick
 * Zero counts fail every check: under pmu_assume (QEMU's silent MSRs) the self-test fails honestly. */
void pmu_selftest_run(void);

#endif
