/* platform_linux.h - start-up of the Linux implementation of bench/platform.h (the hosted runner's machine description). */
#ifndef PMB_BENCH_HOSTED_PLATFORM_LINUX_H
#define PMB_BENCH_HOSTED_PLATFORM_LINUX_H

#include "kernel/config.h"
#include "kernel/core_clock.h"
#include "kernel/cpuid.h"
#include "kernel/record.h"

/* What the start-up found, for the run record. */
struct host_info {
    struct cpu_info cpu;
    uint64_t tsc_hz;
    const char *tsc_method;     /* "clock_monotonic_raw" */
    double tsc_spread;          /* (max - min) / median of the calibration runs */
    double core_tsc_ratio;
    const char *core_tsc_method; /* "perf_event:cpu-cycles" | "add_rr_chain" | "imul_chain" */
    double core_ratio_spread;
    struct core_clock core;     /* both chains (kernel/core_clock.h), always measured: the cross-check */
    uint64_t memory_bytes;      /* MemTotal */
    uint32_t cpus;              /* CPUs used (affinity mask, max_cpus) */
    uint32_t cpus_allowed;      /* CPUs in the affinity mask */
    char cpus_short[160];       /* "" or why fewer CPUs than max_cpus asked for are used (stderr, run record) */
    uint32_t nodes;
    bool thp_madvise;           /* /sys/kernel/mm/transparent_hugepage/enabled allows madvise */
    uint64_t hugepages_2m_free, hugepages_1g_free;
    bool cpu_dma_latency_held;  /* /dev/cpu_dma_latency open with 0 written, until host_shutdown */
    char cpu_dma_latency[96];   /* "held at 0 us" | "not held: <strerror>" */
    char kernel[128];           /* uname -sr */
};

/* Holds /dev/cpu_dma_latency at 0 (when it can), reads the machine (CPUID, sysfs), pins this thread to the first
 * allowed CPU, starts one pinned worker thread per other allowed CPU (each spins on its mailbox between jobs),
 * calibrates the TSC. quick shortens the calibration. 0, or -1 with a message. */
int host_init(const struct config *cfg, bool quick, char *err, size_t errlen);
const struct host_info *host_info(void);
/* The record stream (stdout). */
struct record_stream *host_records(void);
/* How the run must end after the guarded calls so far (bench/platform.h plat_guard_run): "ok", "error" (a
 * timeout) or "crashed" (a fault, a system call, a child that died). */
const char *host_guard_status(void);
/* The guarded child's way out (exit_group through the one instruction its seccomp filter allows), for a test of
 * code that jumps into it. */
__attribute__((noreturn)) void host_guard_exit(int code);
/* crash_test=KIND where the hosted runner can raise it (ud, gp, pf: host_crash_test_known; "" is none): the fault
 * in a guarded child process, its crash record written. 0, or -1 with why. */
bool host_crash_test_known(const char *kind);
int host_crash_test(const char *kind, char *why, size_t whylen);
/* Stops the workers and drops the /dev/cpu_dma_latency request. */
void host_shutdown(void);

#endif
