/* run_desc.h - the `run` record's machine description: one writer for the UEFI image and the hosted runner. */
#ifndef PMB_KERNEL_RUN_DESC_H
#define PMB_KERNEL_RUN_DESC_H

#include "kernel/klib.h"
#include "kernel/config.h"
#include "kernel/cpuid.h"
#include "kernel/json.h"

/*
 * Each program fills one run_desc from what it found at start-up (the image: kernel/report.c from K; the
 * hosted runner: bench/hosted/main.c from host_info) and writes its `run` record with the two calls below,
 * its own "pmu" object (and whatever else only it has) in between. Parts marked optional are left out of
 * the record when NULL / 0, so each program keeps exactly the keys it always wrote.
 */
struct run_desc {
    const char *version, *git;
    const char *platform;         /* optional: "linux" in the hosted runner, written with "hosted": true ... */
    const char *os;               /* ... and the OS it runs under */
    const struct cpu_info *cpu;   /* identity ("cpu") and "caches" */
    uint64_t tsc_hz;
    const char *tsc_method;
    const char *tsc_measured_ref; /* optional: the reference the TSC rate was measured against ... */
    uint64_t tsc_measured_hz;     /* ... and the rate that measurement found */
    double tsc_spread;
    bool invariant_tsc;
    double core_tsc_ratio;
    const char *core_tsc_method;
    uint64_t memory_bytes;
    uint32_t cpus;                /* CPUs the benchmarks may use */
    uint32_t cpus_allowed;        /* optional: CPUs in the process's affinity mask */
    const char *cpus_note;        /* optional: what "cpus" counts, written with ... */
    uint32_t cpus_madt;           /* ... the enabled CPUs the MADT lists */
    const char *max_cpus_note;    /* optional: max_cpus asked for more CPUs than the run has, and what it got */
    uint32_t numa_nodes;
    bool quick;                   /* "profile": "quick" or "full" */
    const char *profile_why;
    bool minimal_samples;         /* every benchmark took its minimum samples, no convergence loops ... */
    const char *minimal_samples_why; /* ... and why (written when minimal_samples or non-empty: samples=) */
    const struct config *cfg;
    const char *cfg_error;        /* non-NULL: "config" is {"error": cfg_error} instead of cfg */
};

/* version, git, [platform, hosted, os], cpu {vendor, family, model, stepping, signature, brand, uarch,
 * hypervisor}, tsc_hz, tsc_method, [tsc_measured_hz, tsc_measured_ref], tsc_spread, invariant_tsc,
 * core_tsc_ratio, core_tsc_method, memory_bytes, cpus, [cpus_allowed], [cpus_madt, cpus_note], [max_cpus_note],
 * numa_nodes,
 * caches: the head of the record, up to where each program writes its "pmu" object. */
void run_desc_json_head(struct json *j, const struct run_desc *d);
/* profile, profile_why, config. */
void run_desc_json_tail(struct json *j, const struct run_desc *d);

/* The CPU identity object (the run record's "cpu", the cpu record's "identity"). */
void run_desc_cpu_json(struct json *j, const struct cpu_info *c);
/* The caches array: level, type, bytes, ways, line, sets, shared_by per cache CPUID lists. */
void run_desc_caches_json(struct json *j, const struct cpu_info *c);

#endif
