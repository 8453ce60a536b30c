/* pmu_init.h - PMU start-up: detection, then the self-test once, before anything counts. */
#ifndef PMB_PMU_INIT_H
#define PMB_PMU_INIT_H

/* pmu_probe (pmu/pmu.h) if it has not run, then the self-test (pmu/pmu_selftest.h) once: its
 * `pmu_selftest` record and the verdicts the rest of pmu/ reads - the usable core counters
 * (PMU.ctrs) and the disabled features (PMU.failed). Call after the run record, with the APs up and
 * before the first benchmark (app/main.c); later calls do nothing. This is the self-test's only
 * caller: counting, PEBS, LBR and the core-cycles reader never start it, they read its verdicts, so
 * the self-test can use them without a circle. */
void pmu_init(void);

#endif
