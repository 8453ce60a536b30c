/* fake_pmu.c - the unit tests' pmu/pmu_bench_api.h: counts as the test scripted them, per run of the workload (host-only). */
#include "tests/unit/fake_pmu.h"

#include <stdio.h>
#include <string.h>

struct fake_pmu FAKE_PMU = {.absent = "unit test: no PMU"};

void fake_pmu_absent(const char *why)
{
    memset(&FAKE_PMU, 0, sizeof(FAKE_PMU));
    FAKE_PMU.absent = why;
}

void fake_pmu_counts(const struct fake_pmu_event *events, unsigned max_events)
{
    memset(&FAKE_PMU, 0, sizeof(FAKE_PMU));
    FAKE_PMU.max_events = max_events;
    for (unsigned i = 0; events[i].name && i < FAKE_PMU_MAX_EVENTS - 1; i++)
        FAKE_PMU.events[i] = events[i];
}

static const struct fake_pmu_event *known(const char *spec)
{
    for (unsigned i = 0; i < FAKE_PMU_MAX_EVENTS && FAKE_PMU.events[i].name; i++)
        if (!strcmp(FAKE_PMU.events[i].name, spec))
            return &FAKE_PMU.events[i];
    return NULL;
}

const char *pmu_core_cycles_method(void) { return NULL; }

bool pmu_core_cycles_read(uint64_t *value)
{
    (void)value;
    return false;
}

unsigned pmu_count_max_events(const char **why)
{
    if (FAKE_PMU.absent) {
        if (why)
            *why = FAKE_PMU.absent;
        return 0;
    }
    return FAKE_PMU.max_events ? FAKE_PMU.max_events : 1;
}

bool pmu_count_accepts(const char *spec, char *why, size_t whylen)
{
    if (!FAKE_PMU.absent && known(spec))
        return true;
    if (why)
        snprintf(why, whylen, "%s", FAKE_PMU.absent ? FAKE_PMU.absent : "unknown event (fake PMU)");
    return false;
}

const char *pmu_count_event_table(void) { return FAKE_PMU.absent ? NULL : FAKE_PMU.table; }

enum pmu_count_status pmu_count_around(const char *const *specs, unsigned n, void (*fn)(void *), void *arg,
                                       uint64_t *counts, char *why, size_t whylen)
{
    if (FAKE_PMU.absent) {
        snprintf(why, whylen, "%s", FAKE_PMU.absent);
        return PMU_COUNT_REFUSED;
    }
    if (FAKE_PMU.fail_groups_over && n > FAKE_PMU.fail_groups_over) {
        snprintf(why, whylen, "no counter fits");
        return PMU_COUNT_REFUSED;
    }
    for (unsigned i = 0; i < n; i++)
        if (!known(specs[i])) {
            snprintf(why, whylen, "unknown event %s", specs[i]);
            return PMU_COUNT_REFUSED;
        }
    FAKE_PMU.groups++;
    fn(arg);
    for (unsigned i = 0; i < n; i++)
        counts[i] = known(specs[i])->per_run;
    return PMU_COUNT_OK;
}

bool pmu_latency_pebs_available(void) { return FAKE_PMU.pebs_cycles > 0; }

void pmu_latency_pebs(const struct pmu_latency_pebs_ctx *c, int (*replay)(void *arg), void *arg,
                      struct pmu_latency_pebs_result *out)
{
    (void)c, (void)replay, (void)arg;
    if (FAKE_PMU.pebs_cycles > 0)
        *out = (struct pmu_latency_pebs_result){.valid = true, .mean_cycles = FAKE_PMU.pebs_cycles, .samples = 100};
    else
        *out = (struct pmu_latency_pebs_result){.why = "no PMU in this program"};
}
