/* pmu_absent.c - the hosted runner's pmu/pmu_bench_api.h: no PMU (Linux owns it), each call says so (host-only). */
#include "pmu/pmu_bench_api.h"
#include "kernel/fmt.h"

/* It lives here, beside platform_linux.c, because it is what the hosted runner has instead of pmu/: the
 * image links pmu/pmu_bench_api.c and every file under bench/hosted/ is host-only (the Makefile's
 * HOST_ONLY_SRCS). Cycles then come from the core/TSC ratio and event counts are "unavailable". */
#define ABSENT_WHY "hosted runner: the PMU belongs to the OS (no event counting)"

const char *pmu_core_cycles_method(void) { return NULL; }

bool pmu_core_cycles_read(uint64_t *value)
{
    (void)value;
    return false;
}

unsigned pmu_count_max_events(const char **why)
{
    if (why)
        *why = ABSENT_WHY;
    return 0;
}

bool pmu_count_accepts(const char *spec, char *why, size_t whylen)
{
    (void)spec;
    if (why)
        fmt_snprintf(why, whylen, "%s", ABSENT_WHY);
    return false;
}

const char *pmu_count_event_table(void) { return NULL; }

enum pmu_count_status pmu_count_around(const char *const *specs, unsigned n, void (*fn)(void *), void *arg,
                                       uint64_t *counts, char *why, size_t whylen)
{
    (void)specs, (void)n, (void)fn, (void)arg, (void)counts;
    fmt_snprintf(why, whylen, "%s", ABSENT_WHY);
    return PMU_COUNT_REFUSED;
}

bool pmu_latency_pebs_available(void) { return false; }

void pmu_latency_pebs(const struct pmu_latency_pebs_ctx *c, int (*replay)(void *arg), void *arg,
                      struct pmu_latency_pebs_result *out)
{
    /* never called: pmu_latency_pebs_available is false */
    (void)c, (void)replay, (void)arg;
    *out = (struct pmu_latency_pebs_result){.why = "no PMU in this program"};
}
