/* latency_hooks.c - fill the latency benchmarks' PMU hooks: RDPMC core cycles and the PEBS cross-check per row. */
#include "pmu/latency_hooks.h"
#include "bench/latency.h"
#include "measure/timing.h"
#include "pmu/counting.h"
#include "pmu/pebs_capture.h"
#include "pmu/pmu.h"
#include "pmu/pmu_selftest.h"

#define PEBS_MIN_RECORDS 256 /* replay until this many samples ... */
#define PEBS_MAX_REPLAYS 16  /* ... or this many replays */

static uint32_t cycles_idx;
static uint64_t cycles_mask;

static bool cycles_read(uint64_t *value)
{
    const char *why;
    if (pmu_cpu_index() != 0)
        return false;
    pmu_selftest_ensure();
    if (!pmu_figures_valid(PMU_FEAT_COUNTING, &why))
        return false;
    if (!pmu_cycles_running()) {
        if (!pmu_cycles_start(&cycles_idx, &why))
            return false;
        uint8_t w = pmu_cycles_width();
        cycles_mask = w >= 64 ? ~0ULL : (1ULL << w) - 1;
    }
    *value = timing_rdpmc(cycles_idx) & cycles_mask;
    return true;
}

static const struct latency_cycle_counter cycles_hook = {
    .read = cycles_read,
    .method = "pmu unhalted core cycles via RDPMC (IA32_FIXED_CTR1 / 3CH, AMD 76H, P4 global_power_events)",
};

void pmu_latency_pebs(const struct latency_pebs_ctx *c)
{
    static struct pmu_pebs_capture cap;
    if (c->cpu != 0) {
        memset(&cap, 0, sizeof(cap));
        cap.status = -1;
        cap.why = "PEBS is armed on the benchmark's own CPU only; this row measures on another CPU";
        cap.timing_cycles = c->cycles;
        pmu_pebs_emit(&cap, c->row);
        return;
    }
    /* About 512 samples per replay at most, never fewer qualifying loads than the default period. */
    uint64_t period = c->loads_per_replay / 512;
    period = (period < PMU_PEBS_DEFAULT_PERIOD ? PMU_PEBS_DEFAULT_PERIOD : period) | 1;
    if (pmu_pebs_begin(&cap, c->lines, c->bytes, PMU_PEBS_DEFAULT_LDLAT, period) == 0) {
        unsigned max = cap.valid ? PEBS_MAX_REPLAYS : 1; /* a dry run exercises the path once */
        for (unsigned i = 0; i < max; i++) {
            if (c->replay(c->arg) != 0)
                break;
            pmu_pebs_poll(&cap, false);
            if (cap.records >= PEBS_MIN_RECORDS)
                break;
        }
        pmu_pebs_end(&cap);
    }
    cap.timing_cycles = c->cycles;
    pmu_pebs_emit(&cap, c->row);
}

void pmu_latency_hooks_install(void)
{
    if (PMU.has[PMU_FEAT_COUNTING] && !PMU.assumed)
        latency_set_cycle_counter(&cycles_hook);
    if (PMU.has[PMU_FEAT_PEBS])
        latency_set_pebs_hook(pmu_latency_pebs);
}
