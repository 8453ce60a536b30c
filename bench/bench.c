/* bench.c - registry and generic runner: a new benchmark is one row in bench_table. */
#include "bench/bench.h"
#include "bench/bandwidth.h"
#include "bench/branch.h"
#include "bench/cycle_accounting.h"
#include "bench/penalty.h"
#include "bench/lat_c2c.h"
#include "bench/lat_numa.h"
#include "bench/latency.h"
#include "bench/timer.h"
#include "kernel/fmt.h"
#include "kernel/io.h"
#include "kernel/out.h"
#include "kernel/time.h"
#include "pmu/pmu_flow.h"

static const struct bench_desc bench_table[] = {
    {"timer", "TSC read cost under each serialization (the overhead every timed region subtracts)", bench_timer},
    {"pmu", "PMU flow: capabilities, self-test, counting groups, offcore, uncore bandwidth, PEBS load latency, LBR",
     pmu_bench},
    {"latency", LATENCY_WHAT, bench_latency},
    {"c2c", C2C_WHAT, bench_c2c},
    {"numa_latency", NUMA_LATENCY_WHAT, bench_numa_latency},
    {"loaded_latency", LOADED_LATENCY_WHAT, bench_loaded_latency},
    {"bandwidth", BANDWIDTH_WHAT, bench_bandwidth},
    {"branch", BRANCH_WHAT, bench_branch},
    {"penalty", PENALTY_WHAT, bench_penalty},
    {"cycle_accounting", CYCLE_ACCOUNTING_WHAT, bench_cycle_accounting},
};

static bool selected[ARRAY_SIZE(bench_table)];

size_t bench_count(void) { return ARRAY_SIZE(bench_table); }
const struct bench_desc *bench_get(size_t i) { return i < ARRAY_SIZE(bench_table) ? &bench_table[i] : NULL; }

static int find(const char *name, size_t len)
{
    for (size_t i = 0; i < ARRAY_SIZE(bench_table); i++)
        if (strlen(bench_table[i].name) == len && !strncmp(bench_table[i].name, name, len))
            return (int)i;
    return -1;
}

int bench_select(const char *list, char *err, size_t errlen)
{
    memset(selected, 0, sizeof(selected));
    if (!strcmp(list, "all") || list[0] == 0) {
        for (size_t i = 0; i < ARRAY_SIZE(bench_table); i++)
            selected[i] = true;
        return 0;
    }
    if (!strcmp(list, "none"))
        return 0;
    const char *p = list;
    while (*p) {
        const char *e = strchr(p, ',');
        size_t len = e ? (size_t)(e - p) : strlen(p);
        int i = find(p, len);
        if (i < 0) {
            char known[256];
            size_t o = 0;
            for (size_t k = 0; k < ARRAY_SIZE(bench_table) && o < sizeof(known); k++)
                o += (size_t)fmt_snprintf(known + o, sizeof(known) - o, "%s%s", k ? "|" : "", bench_table[k].name);
            fmt_snprintf(err, errlen, "bad value for 'bench': unknown benchmark '%.*s' (known: all|none|%s)", (int)len,
                         p, known);
            return -1;
        }
        selected[i] = true;
        p += len;
        if (*p == ',')
            p++;
    }
    return 0;
}

void bench_run_selected(void)
{
    for (size_t i = 0; i < ARRAY_SIZE(bench_table); i++) {
        if (!selected[i])
            continue;
        uint64_t t0 = rdtsc_raw();
        kprintf("== bench %s: %s\n", bench_table[i].name, bench_table[i].what);
        bench_table[i].run();
        kprintf("== bench %s done in %.3f s\n", bench_table[i].name, tsc_to_ns((double)(rdtsc_raw() - t0)) * 1e-9);
    }
}
