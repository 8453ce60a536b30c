/* latency.c - the `latency` benchmark (sweep, then the Table 2 rows) and the PMU hooks it offers. */
#include "bench/latency.h"
#include "bench/lat_common.h"
#include "bench/lat_sweep.h"
#include "bench/lat_table2.h"

static const struct latency_cycle_counter *cycle_counter;
static latency_pebs_fn pebs_hook;

void latency_set_cycle_counter(const struct latency_cycle_counter *c) { cycle_counter = c; }
const struct latency_cycle_counter *latency_cycle_counter(void) { return cycle_counter; }
void latency_set_pebs_hook(latency_pebs_fn fn) { pebs_hook = fn; }
latency_pebs_fn latency_pebs_hook(void) { return pebs_hook; }

void bench_latency(void)
{
    const struct plat_config *cfg = plat_config();
    const char *method;
    double ratio = lat_default_ratio(&method);
    struct json *j = plat_rec_begin("latency_config");
    json_kv_str(j, "platform", cfg->platform);
    json_kv_str(j, "profile", cfg->quick ? "quick" : "full");
    json_kv_uint(j, "tsc_hz", plat_tsc_hz());
    json_kv_double(j, "core_tsc_ratio", ratio);
    json_kv_str(j, "cycles_method", cycle_counter ? "fixed_counter" : method);
    json_kv_str(j, "serialize", cfg->serialize == TIMING_CPUID ? "cpuid" : "lfence");
    json_kv_uint(j, "time_budget_ms", cfg->time_budget_ms);
    json_kv_uint(j, "max_bytes", cfg->max_bytes);
    json_kv_hex(j, "seed", cfg->seed);
    json_kv_uint(j, "cpus", plat_cpu_count());
    json_kv_bool(j, "pebs_hook", pebs_hook != NULL);
    plat_rec_end();
    lat_sweep_run();
    lat_table2_run();
}
