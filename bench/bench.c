/* bench.c - the one benchmark registry and the generic runner: a new benchmark is one row in bench_table (docs/design.md "Adding a benchmark"). */
#include "bench/bench.h"
#include "bench/bench_select.h"
#include "bench/atomic.h"
#include "bench/bandwidth.h"
#include "bench/clock.h"
#include "bench/crosscheck.h"
#include "bench/branch.h"
#include "bench/cycle_accounting.h"
#include "bench/penalty.h"
#include "bench/snippet.h"
#include "bench/lat_c2c.h"
#include "bench/lat_numa.h"
#include "bench/latency.h"
#include "bench/platform.h"
#include "bench/timer.h"
#include "measure/timing.h"
#include "kernel/fmt.h"
#include "pmu/pmu_flow.h"

/* The hosted runner links neither bench/timer.c nor pmu/: there the image-only rows keep their place in the
 * table (bench= names them, the usage text lists them) without a run function. */
#ifdef PMB_HOST
#define IMAGE_ONLY(fn) NULL
#else
#define IMAGE_ONLY(fn) fn
#endif

static const struct bench_desc bench_table[] = {
    {"timer", "TSC read cost under each serialization (the overhead every timed region subtracts)",
     IMAGE_ONLY(bench_timer), true, false},
    {"pmu", "PMU flow: capabilities, self-test, counting groups, offcore, uncore bandwidth, PEBS load latency, LBR",
     IMAGE_ONLY(pmu_bench), true, false},
    {"latency", LATENCY_WHAT, bench_latency, false, false},
    {"c2c", C2C_WHAT, bench_c2c, false, false},
    {"numa_latency", NUMA_LATENCY_WHAT, bench_numa_latency, false, false},
    {"loaded_latency", LOADED_LATENCY_WHAT, bench_loaded_latency, false, false},
    {"bandwidth", BANDWIDTH_WHAT, bench_bandwidth, false, false},
    {"branch", BRANCH_WHAT, bench_branch, false, false},
    {"penalty", PENALTY_WHAT, bench_penalty, false, false},
    {"cycle_accounting", CYCLE_ACCOUNTING_WHAT, bench_cycle_accounting, false, false},
    {"atomic", ATOMIC_WHAT, bench_atomic, false, false},
    {"snippet", SNIPPET_WHAT, bench_snippet, false, true},
};

static bool selected[ARRAY_SIZE(bench_table)];

const struct bench_desc *bench_registry(size_t *n)
{
    *n = ARRAY_SIZE(bench_table);
    return bench_table;
}

int bench_select(const char *list, char *err, size_t errlen)
{
    return bench_select_in(bench_table, ARRAY_SIZE(bench_table), list, selected, err, errlen);
}

int bench_configure(const char *sections, size_t len, unsigned line, const char *origin, char *err, size_t errlen)
{
    if (snippet_configure(sections, len, line, origin, err, errlen) != 0)
        return -1;
    for (size_t i = 0; i < ARRAY_SIZE(bench_table); i++)
        if (selected[i] && bench_table[i].run == bench_snippet && !snippet_set()->n) {
            fmt_snprintf(err, errlen, "bench=snippet needs at least one [snippet NAME] section with code = "
                                      "hex bytes in the config file (docs/config.md, \"Snippets\")");
            return -1;
        }
    return 0;
}

void bench_run_selected(void)
{
    /* The core clock on every CPU and the clock cross-checks, then again before each benchmark (clock.h). */
    clock_run_start();
    for (size_t i = 0; i < ARRAY_SIZE(bench_table); i++) {
        if (!selected[i] || !bench_table[i].run)
            continue;
        plat_printf("== bench %s: %s\n", bench_table[i].name, bench_table[i].what);
        clock_bench_start(bench_table[i].name);
        uint64_t t0 = timing_rdtsc();
        bench_table[i].run();
        uint64_t hz = plat_tsc_hz();
        plat_printf("== bench %s done in %.3f s\n", bench_table[i].name,
                    hz ? (double)(timing_rdtsc() - t0) / (double)hz : 0.0);
    }
    /* Checks whose third measurement a later benchmark took (docs/measurement.md, "Cross-checks"), then the run's
     * verdicts in one record: the last one before `end`. */
    crosscheck_run_deferred();
    crosscheck_summary();
}
