/* latency.c - the `latency` benchmark: its configuration record, the sweep, then the Table 2 rows. */
#include "bench/latency.h"
#include "bench/lat_common.h"
#include "bench/lat_sweep.h"
#include "bench/lat_table2.h"
#include "pmu/pmu_bench_api.h"

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
}
