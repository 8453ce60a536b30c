/* latency.c - the `latency` benchmark: its configuration record, the sweep, then the Table 2 rows. */
#include "bench/latency.h"
#include "bench/lat_common.h"
#include "bench/lat_sweep.h"
#include "bench/lat_table2.h"
#include "bench/clock.h"
#include "pmu/pmu_bench_api.h"

/* Core clock vs L1 load latency (docs/measurement.md "Cross-checks"): the sweep's L1 plateau and the Table 2 L1
 * row, each in the cycles of its own clock draws, against the integer an L1 hit takes. After every figure of the
 * benchmark, so that a blamed conversion lists them all (cycles_suspect). Nothing where the cycles did not come
 * from the chain draws (a cycle counter; emulation, minimal mode). */
static void clock_l1_checks(void)
{
    const struct clock_l1_reading *pr;
    const char *pf;
    size_t n = lat_sweep_l1_readings(&pr, &pf);
    if (n)
        clock_l1_check(pf, pr, n);
    struct clock_l1_reading rr;
    if (lat_table2_l1_reading(&rr))
        clock_l1_check("data_source/L1", &rr, 1);
}

void bench_latency(void)
{
    const struct plat_config *cfg = plat_config();
    const char *method;
    double ratio = clock_core_ratio(&method);
    struct json *j = plat_rec_begin("latency_config");
    json_kv_str(j, "platform", cfg->platform);
    json_kv_str(j, "profile", cfg->quick ? "quick" : "full");
    json_kv_uint(j, "tsc_hz", plat_tsc_hz());
    json_kv_double(j, "core_tsc_ratio", ratio);
    json_kv_str(j, "cycles_method", pmu_core_cycles_method() ? "fixed_counter" : method);
    json_kv_str(j, "serialize", cfg->serialize == TIMING_CPUID ? "cpuid" : "lfence");
    json_kv_uint(j, "time_budget_ms", cfg->time_budget_ms);
    json_kv_uint(j, "max_bytes", cfg->max_bytes);
    json_kv_hex(j, "seed", cfg->seed);
    json_kv_uint(j, "cpus", plat_cpu_count());
    json_kv_bool(j, "pebs_hook", pmu_latency_pebs_available());
    plat_rec_end();
    /* The Table 2 rows' replicates in passes between the sweep's passes: spread over the sweep's seconds, not its
     * own milliseconds (docs/measurement.md "Replicates", the Table 2 rows). */
    lat_table2_begin();
    lat_sweep_between(lat_table2_between);
    lat_sweep_run();
    lat_table2_finish();
    clock_l1_checks();
}
