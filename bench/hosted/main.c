/* main.c - pmubench-host: the benchmarks as a Linux program, with the same records (run ... end + CRC) on stdout. */
#include "bench/hosted/platform_linux.h"
#include "bench/bandwidth.h"
#include "bench/bench.h"
#include "bench/bench_select.h"
#include "bench/branch.h"
#include "bench/cycle_accounting.h"
#include "bench/lat_c2c.h"
#include "bench/lat_numa.h"
#include "bench/latency.h"
#include "bench/penalty.h"
#include "bench/platform.h"
#include "kernel/config.h"
#include "kernel/fmt.h"

#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#ifndef PMB_VERSION
#define PMB_VERSION "0.0.0"
#endif
#ifndef PMB_GITREV
#define PMB_GITREV "unknown"
#endif

static const struct bench_desc benches[] = {
    {"latency", LATENCY_WHAT, bench_latency},
    {"c2c", C2C_WHAT, bench_c2c},
    {"numa_latency", NUMA_LATENCY_WHAT, bench_numa_latency},
    {"loaded_latency", LOADED_LATENCY_WHAT, bench_loaded_latency},
    {"bandwidth", BANDWIDTH_WHAT, bench_bandwidth},
    {"branch", BRANCH_WHAT, bench_branch},
    {"penalty", PENALTY_WHAT, bench_penalty},
    {"cycle_accounting", CYCLE_ACCOUNTING_WHAT, bench_cycle_accounting},
};
#define NBENCH (sizeof(benches) / sizeof(benches[0]))

static void usage(void)
{
    printf("usage: pmubench-host [key=value ...]\n"
           "Runs pmubench's benchmarks as a Linux process and prints the same JSON records\n"
           "(run ... end with CRC-32) and tables the UEFI image prints on serial. Keys are pmubench.cfg's:\n");
    const char *name, *values;
    for (size_t i = 0; config_key_help(i, &name, &values); i++)
        printf("  %-16s %s\n", name, values);
    printf("Benchmarks:");
    for (size_t i = 0; i < NBENCH; i++)
        printf(" %s", benches[i].name);
    printf(" (bench=all runs every one; the timer and PMU benchmarks exist only in the UEFI image)\n");
}

static void caches_json(struct json *j, const struct cpu_info *ci)
{
    json_arr_begin(j);
    for (uint32_t i = 0; i < ci->n_caches && i < CPU_MAX_CACHES; i++) {
        const struct cpu_cache *c = &ci->caches[i];
        json_obj_begin(j);
        json_kv_uint(j, "level", c->level);
        json_kv_str(j, "type", cpu_cache_type_name(c->type));
        json_kv_uint(j, "bytes", c->bytes);
        json_kv_uint(j, "ways", c->ways);
        json_kv_uint(j, "line", c->line);
        json_kv_uint(j, "sets", c->sets);
        json_kv_uint(j, "shared_by", c->shared_by);
        json_obj_end(j);
    }
    json_arr_end(j);
}

static void run_record(const struct config *cfg, bool quick, const char *cfg_err)
{
    const struct host_info *h = host_info();
    struct json *j = plat_rec_begin("run");
    json_kv_str(j, "version", PMB_VERSION);
    json_kv_str(j, "git", PMB_GITREV);
    json_kv_str(j, "platform", "linux");
    json_kv_bool(j, "hosted", true);
    json_kv_str(j, "os", h->kernel);
    json_key(j, "cpu");
    json_obj_begin(j);
    json_kv_str(j, "vendor", h->cpu.vendor_str);
    json_kv_uint(j, "family", h->cpu.family);
    json_kv_uint(j, "model", h->cpu.model);
    json_kv_uint(j, "stepping", h->cpu.stepping);
    json_kv_str(j, "brand", h->cpu.brand);
    json_kv_str(j, "uarch", h->cpu.uarch);
    json_kv_str(j, "hypervisor", h->cpu.hv_vendor);
    json_obj_end(j);
    json_kv_uint(j, "tsc_hz", h->tsc_hz);
    json_kv_str(j, "tsc_method", h->tsc_method);
    json_kv_double(j, "tsc_spread", h->tsc_spread);
    json_kv_bool(j, "invariant_tsc", h->cpu.feat.invariant_tsc);
    json_kv_double(j, "core_tsc_ratio", h->core_tsc_ratio);
    json_kv_str(j, "core_tsc_method", h->core_tsc_method);
    json_kv_uint(j, "memory_bytes", h->memory_bytes);
    json_kv_uint(j, "cpus", h->cpus);
    json_kv_uint(j, "cpus_allowed", h->cpus_allowed);
    json_kv_uint(j, "numa_nodes", h->nodes);
    json_key(j, "caches");
    caches_json(j, &h->cpu);
    json_key(j, "pmu");
    json_obj_begin(j);
    json_kv_uint(j, "version", h->cpu.perf.version);
    json_kv_str(j, "status", "unavailable");
    json_kv_str(j, "reason", "hosted runner: the PMU belongs to the OS (cycles via the core/TSC ratio)");
    json_obj_end(j);
    json_key(j, "pages");
    json_obj_begin(j);
    json_kv_bool(j, "thp_madvise", h->thp_madvise);
    json_kv_uint(j, "hugepages_2m_free", h->hugepages_2m_free);
    json_kv_uint(j, "hugepages_1g_free", h->hugepages_1g_free);
    json_obj_end(j);
    json_kv_str(j, "profile", quick ? "quick" : "full");
    json_kv_str(j, "profile_why", cfg->profile == PROFILE_AUTO ? "auto: hosted runner" : "config");
    json_key(j, "config");
    if (cfg_err) {
        json_obj_begin(j);
        json_kv_str(j, "error", cfg_err);
        json_obj_end(j);
    } else {
        config_to_json(cfg, j);
    }
    plat_rec_end();
    printf("pmubench-host %s (%s) on %s: %s %s, TSC %.6f GHz (%s), core/TSC %.3f (%s), %u CPU(s), %u node(s), "
           "profile %s\n",
           PMB_VERSION, PMB_GITREV, h->kernel, h->cpu.vendor_str, h->cpu.brand, (double)h->tsc_hz * 1e-9,
           h->tsc_method, h->core_tsc_ratio, h->core_tsc_method, h->cpus, h->nodes, quick ? "quick" : "full");
}

static double secs(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

int main(int argc, char **argv)
{
    static struct config cfg;
    char args[2048] = "", err[320] = "";
    setvbuf(stdout, NULL, _IOLBF, 0);
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "-h") || !strcmp(argv[i], "--help")) {
            usage();
            return 0;
        }
        size_t at = strlen(args);
        fmt_snprintf(args + at, sizeof(args) - at, "%s%s", at ? " " : "", argv[i]);
    }
    config_defaults(&cfg);
    /* A first token without '=' would be taken as an image path and skipped: put a placeholder first. */
    char line[2100];
    fmt_snprintf(line, sizeof(line), "pmubench-host %s", args);
    bool cfg_bad = config_parse_args(&cfg, line, "command line", err, sizeof(err)) != 0;
    bool quick = cfg.profile == PROFILE_QUICK;
    bool sel[NBENCH];
    if (!cfg_bad && bench_select_in(benches, NBENCH, cfg.bench, sel, err, sizeof(err)) != 0)
        cfg_bad = true;

    char ierr[256] = "";
    if (host_init(&cfg, quick, ierr, sizeof(ierr)) != 0) {
        fprintf(stderr, "pmubench-host: %s\n", ierr);
        return 2;
    }
    run_record(&cfg, quick, cfg_bad ? err : NULL);
    if (cfg_bad) {
        printf("pmubench-host: config error: %s\n", err);
        struct json *j = plat_rec_begin("error");
        json_kv_str(j, "what", "config");
        json_kv_str(j, "message", err);
        plat_rec_end();
        record_finish(host_records(), "error");
        host_shutdown();
        return 1;
    }
    double t_all = secs();
    for (size_t i = 0; i < NBENCH; i++) {
        if (!sel[i])
            continue;
        double t0 = secs();
        printf("== bench %s: %s\n", benches[i].name, benches[i].what);
        benches[i].run();
        printf("== bench %s done in %.3f s\n", benches[i].name, secs() - t0);
    }
    printf("pmubench-host: run ok after %.3f s\n", secs() - t_all);
    record_finish(host_records(), "ok");
    host_shutdown();
    return 0;
}
