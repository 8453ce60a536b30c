/* main.c - pmubench-host: the benchmarks as a Linux program, with the same records (run ... end + CRC) on stdout. */
#include "bench/hosted/platform_linux.h"
#include "bench/bench.h"
#include "bench/platform.h"
#include "kernel/config.h"
#include "kernel/fmt.h"
#include "kernel/run_desc.h"

#include <stdio.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#ifndef PMB_VERSION
#define PMB_VERSION "0.0.0"
#endif
#ifndef PMB_GITREV
#define PMB_GITREV "unknown"
#endif

/* The pmubench.cfg keys this runner honours (crash_test: ud, gp and pf, raised through the guarded child; the
 * other kinds are refused); the others (serial, baud, on_finish, trace_msr, pmu_assume, events, acpi_dump, turbo)
 * drive the UEFI image's hardware and are accepted here only so that one config file serves both. */
static const char *const hosted_keys[] = {"profile",   "bench",          "max_bytes",  "max_cpus",  "seed",
                                          "serialize", "time_budget_ms", "crash_test", "sweep_top", "samples"};

static bool hosted_key(const char *name)
{
    for (size_t i = 0; i < sizeof(hosted_keys) / sizeof(hosted_keys[0]); i++)
        if (!strcmp(name, hosted_keys[i]))
            return true;
    return false;
}

static void usage(void)
{
    printf("usage: pmubench-host [--cfg FILE] [key=value ...]\n"
           "Runs pmubench's benchmarks as a Linux process and prints the same JSON records\n"
           "(run ... end with CRC-32) and tables the UEFI image prints on serial. --cfg FILE reads a\n"
           "pmubench.cfg (its keys, then its [snippet NAME] sections; one file, at most 262144 bytes);\n"
           "key=value arguments override it. Snippets run in a child process that may make no system call.\n"
           "Exit status: 0 the run ended ok; 1 it ended crashed or error (a snippet faulted, made a system\n"
           "call or timed out: the other results are in the records); 2 bad input (config, --cfg), one line on\n"
           "stderr. docs/config.md, \"The hosted runner\".\n"
           "\n"
           "First run (a few seconds to a minute), then the report:\n"
           "  build/host-bench/pmubench-host profile=quick > host.log\n"
           "  scripts/pmubench report host.log --html host.html\n"
           "One benchmark, full profile, on CPU 2 only:\n"
           "  taskset -c 2 build/host-bench/pmubench-host bench=latency profile=full\n"
           "\n"
           "Keys this runner honours:\n");
    const char *name, *values;
    for (size_t i = 0; config_key_help(i, &name, &values); i++)
        if (hosted_key(name))
            printf("  %-16s %s\n", name, values);
    printf("(pmubench.cfg's other keys drive the UEFI image's hardware: accepted, ignored here)\n");
    size_t n;
    const struct bench_desc *t = bench_registry(&n);
    printf("Benchmarks:");
    for (size_t i = 0; i < n; i++)
        if (t[i].run)
            printf(" %s", t[i].name);
    printf(" (bench=all runs every one but");
    for (size_t i = 0; i < n; i++)
        if (t[i].explicit_only)
            printf(" %s", t[i].name);
    printf(", which run only when named; ");
    for (size_t i = 0, k = 0; i < n; i++)
        if (!t[i].run)
            printf("%s%s", k++ ? " and " : "the ", t[i].name);
    printf(" benchmarks exist only in the UEFI image)\n");
}

static void run_record(const struct config *cfg, bool quick, const char *cfg_err)
{
    const struct host_info *h = host_info();
    const char *samples_why;
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
        .max_cpus_note = h->cpus_short[0] ? h->cpus_short : NULL,
        .numa_nodes = h->nodes,
        .quick = quick,
        .profile_why = cfg->profile == PROFILE_AUTO ? "auto: hosted runner" : "config",
        .minimal_samples = config_minimal_samples(cfg->samples, false, &samples_why),
        .minimal_samples_why = samples_why,
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

/* The whole file, kept for the run: the config's sections point into it (kernel/config.h). NULL on error. */
static char *read_file(const char *path, size_t *len, char *err, size_t errlen)
{
    FILE *f = fopen(path, "rb");
    if (!f) {
        fmt_snprintf(err, errlen, "--cfg %s: %s", path, strerror(errno));
        return NULL;
    }
    size_t cap = 1 << 16, n = 0;
    char *buf = malloc(cap);
    for (;;) {
        if (!buf) {
            fclose(f);
            fmt_snprintf(err, errlen, "--cfg %s: out of memory", path);
            return NULL;
        }
        n += fread(buf + n, 1, cap - n, f);
        if (n < cap)
            break;
        if (cap > CFG_FILE_MAX) {
            fclose(f);
            free(buf);
            fmt_snprintf(err, errlen, "--cfg %s: file larger than %u bytes (the limit of pmubench.cfg, docs/config.md)",
                         path, CFG_FILE_MAX);
            return NULL;
        }
        cap *= 2;
        buf = realloc(buf, cap);
    }
    bool bad = ferror(f);
    fclose(f);
    if (bad) {
        free(buf);
        fmt_snprintf(err, errlen, "--cfg %s: read error", path);
        return NULL;
    }
    if (n > CFG_FILE_MAX) {
        free(buf);
        fmt_snprintf(err, errlen, "--cfg %s: file larger than %u bytes (the limit of pmubench.cfg, docs/config.md)",
                     path, CFG_FILE_MAX);
        return NULL;
    }
    *len = n;
    return buf;
}

/* Ends the run before any benchmark: an error record {what, message}, the end record (status error), and
 * `code` as the exit status. */
static int end_with_error(const char *what, const char *message, int code)
{
    struct json *j = plat_rec_begin("error");
    json_kv_str(j, "what", what);
    json_kv_str(j, "message", message);
    plat_rec_end();
    record_finish(host_records(), "error");
    host_shutdown();
    return code;
}

int main(int argc, char **argv)
{
    static struct config cfg;
    char args[2048] = "", err[320] = "";
    const char *cfg_path = NULL;
    setvbuf(stdout, NULL, _IOLBF, 0);
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "-h") || !strcmp(argv[i], "--help")) {
            usage();
            return 0;
        }
        if (!strcmp(argv[i], "--cfg") || !strncmp(argv[i], "--cfg=", 6)) {
            const char *path;
            if (argv[i][5] == '=')
                path = argv[i] + 6;
            else if (i + 1 < argc)
                path = argv[++i];
            else {
                fprintf(stderr, "pmubench-host: --cfg needs a file name\n");
                return 2;
            }
            if (cfg_path) { /* one file: its sections and its line numbers are the run's (docs/config.md) */
                fprintf(stderr, "pmubench-host: --cfg given twice (%s, then %s): give one config file; key=value "
                                "arguments override its keys\n", cfg_path, path);
                return 2;
            }
            cfg_path = path;
            continue;
        }
        size_t at = strlen(args);
        fmt_snprintf(args + at, sizeof(args) - at, "%s%s", at ? " " : "", argv[i]);
    }
    config_defaults(&cfg);
    bool cfg_bad = false;
    if (cfg_path) {
        size_t len = 0;
        char *text = read_file(cfg_path, &len, err, sizeof(err));
        if (!text) {
            fprintf(stderr, "pmubench-host: %s\n", err);
            return 2;
        }
        cfg_bad = config_parse_file(&cfg, text, len, cfg_path, err, sizeof(err)) != 0;
    }
    /* A first token without '=' would be taken as an image path and skipped: put a placeholder first. */
    char line[2100];
    fmt_snprintf(line, sizeof(line), "pmubench-host %s", args);
    if (!cfg_bad)
        cfg_bad = config_parse_args(&cfg, line, "command line", err, sizeof(err)) != 0;
    bool quick = cfg.profile == PROFILE_QUICK;
    if (!cfg_bad && bench_select(cfg.bench, err, sizeof(err)) != 0) {
        config_blame(&cfg, CFG_KEY_BENCH, err, sizeof(err));
        cfg_bad = true;
    }
    if (!cfg_bad && !host_crash_test_known(cfg.crash_test)) {
        char why[200];
        host_crash_test(cfg.crash_test, why, sizeof(why)); /* only says why not */
        fmt_snprintf(err, sizeof(err), "%s", why);
        config_blame(&cfg, CFG_KEY_CRASH_TEST, err, sizeof(err));
        cfg_bad = true;
    }
    if (!cfg_bad && bench_configure(cfg.sections, cfg.sections_len, cfg.sections_line, cfg_path ? cfg_path : "config",
                                    err, sizeof(err)) != 0)
        cfg_bad = true;

    char ierr[256] = "";
    if (host_init(&cfg, quick, ierr, sizeof(ierr)) != 0) {
        fprintf(stderr, "pmubench-host: %s\n", ierr);
        return 2;
    }
    run_record(&cfg, quick, cfg_bad ? err : NULL);
    if (cfg_bad) {
        fprintf(stderr, "pmubench-host: config error: %s\n", err);
        return end_with_error("config", err, 2);
    }
    const struct host_info *h = host_info();
    if (h->cpus_short[0])
        fprintf(stderr, "pmubench-host: %s\n", h->cpus_short);
    double t_all = secs();
    if (cfg.crash_test[0]) {
        char why[200];
        if (host_crash_test(cfg.crash_test, why, sizeof(why)) != 0) {
            fprintf(stderr, "pmubench-host: %s\n", why);
            return end_with_error("crash_test", why, 1);
        }
        /* As in the image, a crash test ends the run (crashed) before any benchmark. */
        record_finish(host_records(), host_guard_status());
        host_shutdown();
        return 1;
    }
    if (h->cpus < 2)
        fprintf(stderr, "pmubench-host: warning: only %u CPU to run on (affinity or max_cpus): c2c, loaded latency, "
                        "the other-core Table 2 rows and thread scaling need two and will be unavailable; "
                        "allow more CPUs (e.g. taskset -c 0,1) to measure them\n", h->cpus);
    bench_run_selected();
    const char *status = host_guard_status();
    printf("pmubench-host: run %s after %.3f s\n", status, secs() - t_all);
    if (strcmp(status, "ok"))
        fprintf(stderr, "pmubench-host: run ended '%s': a guarded call failed (its crash/error record says which); "
                        "the other results are in the records\n", status);
    record_finish(host_records(), status);
    host_shutdown();
    return strcmp(status, "ok") ? 1 : 0;
}
