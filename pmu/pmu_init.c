/* pmu_init.c - PMU start-up: detection (pmu_probe), then the self-test, once. */
#include "pmu/pmu_init.h"
#include "pmu/pmu.h"
#include "pmu/pmu_selftest.h"

void pmu_init(void)
{
    pmu_probe();
    if (!PMU.selftest_done)
        pmu_selftest_run();
}
