/* main.c - pmubench-host: the benchmarks as a Linux program, with the same records (run ... end + CRC) on stdout. */
#include "bench/hosted/platform_linux.h"
#include "bench/bench.h"
#include "bench/platform.h"
#include "kernel/config.h"
#include "kernel/fmt.h"
#include "kernel/run_desc.h"

#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#ifndef PMB_VERSION
#define PMB_VERSION "0.0.0"
#endif
#ifndef PMB_GITREV
#define PMB_GITREV "unknown"
#endif

static void usage(void)
{
    printf("usage: pmubench-host [key=value ...]\n"
           "Runs pmubench's benchmarks as a Linux process and prints the same JSON records\n"
           "(run ... end with CRC-32) and tables the UEFI image prints on serial. Keys are pmubench.cfg's:\n");
    const char *name, *values;
    for (size_t i = 0; config_key_help(i, &name, &values); i++)
        printf("  %-16s %s\n", name, values);
    size_t n;
    const struct bench_desc *t = bench_registry(&n);
    printf("Benchmarks:");
    for (size_t i = 0; i < n; i++)
        if (t[i].run)
            printf(" %s", t[i].name);
    printf(" (bench=all runs every one; ");
    for (size_t i = 0, k = 0; i < n; i++)
        if (!t[i].run)
            printf("%s%s", k++ ? " and " : "the ", t[i].name);
    printf(" benchmarks exist only in the UEFI image)\n");
}

static void run_record(const struct config *cfg, bool quick, const char *cfg_err)
{
    const struct host_info *h = host_info();
    const struct run_desc d = {
        .version = PMB_VERSION,
        .git = PMB_GITREV,
        .platform = "linux",
        .os = h->kernel,
        .cpu = &h->cpu,
        .tsc_hz = h->tsc_hz,
        .tsc_method = h->tsc_method,
        .tsc_spread = h->tsc_spread,
        .invariant_tsc = h->cpu.feat.invariant_tsc,
        .core_tsc_ratio = h->core_tsc_ratio,
        .core_tsc_method = h->core_tsc_method,
        .memory_bytes = h->memory_bytes,
        .cpus = h->cpus,
        .cpus_allowed = h->cpus_allowed,
        .numa_nodes = h->nodes,
        .quick = quick,
        .profile_why = cfg->profile == PROFILE_AUTO ? "auto: hosted runner" : "config",
        .cfg = cfg,
        .cfg_error = cfg_err,
    };
    struct json *j = plat_rec_begin("run");
    run_desc_json_head(j, &d);
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
    json_kv_str(j, "cpu_dma_latency", h->cpu_dma_latency);
    run_desc_json_tail(j, &d);
    plat_rec_end();
    printf("pmubench-host %s (%s) on %s: %s %s, TSC %.6f GHz (%s), core/TSC %.3f (%s), %u CPU(s), %u node(s), "
           "profile %s\n",
           PMB_VERSION, PMB_GITREV, h->kernel, h->cpu.vendor_str, h->cpu.brand, (double)h->tsc_hz * 1e-9,
           h->tsc_method, h->core_tsc_ratio, h->core_tsc_method, h->cpus, h->nodes, quick ? "quick" : "full");
    printf("pmubench-host: /dev/cpu_dma_latency %s%s\n", h->cpu_dma_latency,
           h->cpu_dma_latency_held ? " while measuring (idle CPUs kept out of deep C-states)"
                                   : " (idle CPUs may enter deep C-states while measuring)");
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
    if (!cfg_bad && bench_select(cfg.bench, err, sizeof(err)) != 0)
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
    bench_run_selected();
    printf("pmubench-host: run ok after %.3f s\n", secs() - t_all);
    record_finish(host_records(), "ok");
    host_shutdown();
    return 0;
}
