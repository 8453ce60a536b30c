/* bench.c - registry and generic runner: a new benchmark is one row in bench_table. */
#include "bench/bench.h"
#include "bench/bench_select.h"
#include "bench/bandwidth.h"
#include "bench/branch.h"
#include "bench/cycle_accounting.h"
#include "bench/penalty.h"
#include "bench/lat_c2c.h"
#include "bench/lat_numa.h"
#include "bench/latency.h"
#include "bench/timer.h"
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

int bench_select(const char *list, char *err, size_t errlen)
{
    return bench_select_in(bench_table, ARRAY_SIZE(bench_table), list, selected, err, errlen);
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
