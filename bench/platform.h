/* platform.h - what the latency benchmarks need from whatever runs them: the UEFI kernel (bench/platform_kernel.c) or a Linux process (bench/hosted/platform_linux.c). */
#ifndef PMB_BENCH_PLATFORM_H
#define PMB_BENCH_PLATFORM_H

#include "kernel/klib.h"
#include "kernel/cpuid.h"
#include "kernel/json.h"
#include "kernel/core_clock.h"
#include "kernel/guard.h"
#include "measure/serialize.h"

/*
 * The benchmark code (bench/latency.c, bench/lat_*.c) includes this header and nothing platform
 * specific: no kernel/kernel.h, no libc. Two implementations exist and exactly one is linked:
 *   bench/platform_kernel.c        pmm + paging_map buffers, smp_run_on, K.time, the serial record stream
 *   bench/hosted/platform_linux.c  mmap (hugetlbfs / THP) + mbind, pinned pthreads, TSC calibrated against
 *                                  CLOCK_MONOTONIC_RAW, the same record stream on stdout
 */

/* ---- memory ------------------------------------------------------------------------------------- */

#define PLAT_PAGE_DEFAULT 0ull /* whatever the platform maps memory with anyway */
#define PLAT_PAGE_LARGEST 1ull /* the largest page size that works for this buffer (1G, then 2M, then default) */

struct plat_buf {
    void *ptr;            /* NULL when not allocated */
    uint64_t bytes;       /* usable length: the request rounded up to the page size */
    uint64_t page_bytes;  /* page size that backs it, as far as the platform can tell (0: unknown) */
    const char *page_how; /* how that page size was obtained ("paging_map", "identity map", "hugetlbfs", ...) */
    int node;             /* NUMA node of its memory; -1 when unknown or not bound */
    /* platform private */
    uint64_t priv_len;
    uint64_t priv_restore; /* page size to restore on free (kernel), mmap length (Linux) */
    bool priv_remapped;
};

/* Allocates at least `bytes` backed by `page_bytes` pages (4 KiB, 2 MiB, 1 GiB, PLAT_PAGE_DEFAULT or
 * PLAT_PAGE_LARGEST) on NUMA node `node` (-1: any). The memory is zeroed and page aligned. `why` labels it
 * in the platform's memory record. Returns 0, or -1 when the memory, the node or the page size cannot be
 * had (b->ptr is then NULL). */
int plat_alloc(struct plat_buf *b, uint64_t bytes, uint64_t page_bytes, int node, const char *why);
/* Gives the buffer back (restoring the default mapping); a zeroed or freed b is ignored. */
void plat_free(struct plat_buf *b);
/* Largest buffer a plat_alloc on `node` (-1: any) with default pages would get now, 0 if none. */
uint64_t plat_alloc_limit(int node);
/* Whether the platform can back buffers with this page size at all (1 GiB needs CPUID pdpe1gb and, on
 * Linux, reserved 1 GiB huge pages). */
bool plat_page_ok(uint64_t page_bytes);

/* ---- CPUs and NUMA ------------------------------------------------------------------------------ */

struct plat_cpu {
    uint32_t id;      /* what plat_run_on takes: SMP index (kernel) or OS CPU number (Linux) */
    uint32_t apic_id; /* initial (x2)APIC id; on Linux the OS CPU number when unknown */
    int node;         /* NUMA node (0 without NUMA information) */
    uint32_t package, core, smt;
};

/* CPUs the benchmarks may use. The i-th one (0 <= i < plat_cpu_count()) is described by plat_cpu; i = 0
 * is the CPU the benchmark itself runs on (the BSP, or the main thread's CPU). */
uint32_t plat_cpu_count(void);
bool plat_cpu(uint32_t i, struct plat_cpu *out);
/* NUMA nodes (>= 1), memory bytes on a node (0: memory-less), SLIT distance (-1: unknown). */
uint32_t plat_node_count(void);
uint64_t plat_node_bytes(int node);
int plat_node_distance(int from, int to);

typedef void (*plat_fn)(void *arg);

/* Runs fn(arg) on CPU `cpu_id` (a plat_cpu.id) and waits for it; the benchmark's own CPU runs it inline.
 * Returns 0, or -1 when the CPU is offline, busy, or did not finish in time (it is then not used again). */
int plat_run_on(uint32_t cpu_id, plat_fn fn, void *arg);
/* Starts fn(arg) on another CPU without waiting (not the benchmark's own CPU); 0 or -1. */
int plat_start(uint32_t cpu_id, plat_fn fn, void *arg);
/* Waits for the job plat_start gave cpu_id: 0, or -1 on timeout. */
int plat_wait(uint32_t cpu_id);

/* ---- clocks and the machine --------------------------------------------------------------------- */

uint64_t plat_tsc_hz(void);
/* Core cycles per TSC tick on the benchmark's CPU, and how that was found (docs/measurement.md). */
double plat_core_tsc_ratio(void);
const char *plat_core_tsc_method(void);

/* Every rate the TSC was given or measured at start-up, the one plat_tsc_hz uses first: CPUID leaf 15h/16h
 * (spread 0), the ACPI PM timer and the HPET (image), CLOCK_MONOTONIC_RAW (hosted). At most max; returns how
 * many. For the clock cross-checks (bench/clock.c). */
struct plat_tsc_source {
    const char *name; /* "cpuid.15h", "acpi_pm_timer", "hpet", "clock_monotonic_raw", ... */
    uint64_t hz;
    double spread;    /* (max - min) / median of its calibration windows; 0 for a stated rate */
};
size_t plat_tsc_sources(struct plat_tsc_source *out, size_t max);

/* Measures core cycles per TSC tick on CPU cpu_id (a plat_cpu.id) now, the way the platform measured its
 * start-up ratio: kernel/core_clock.h's chains always, and in c->ratio / c->method the platform's first
 * method (the image: APERF/MPERF where they count, else the chains; the hosted runner: perf_event's cycle
 * counter where the kernel allows it, else the chains). Returns 0, or -1 when that CPU did not run it. */
int plat_core_clock(uint32_t cpu_id, struct core_clock *c);
/* CPUID as decoded at start-up: caches, features, topology. */
const struct cpu_info *plat_cpuinfo(void);

/* ---- code the user brought (bench/snippet.c) --------------------------------------------------------- */

/* Memory that may be written and then executed (default pages, zeroed, page aligned): the identity map, which
 * is executable (kernel), or an anonymous RWX mapping (Linux). 0 or -1 like plat_alloc; free with plat_free. */
int plat_alloc_code(struct plat_buf *b, uint64_t bytes, const char *why);
/* Runs fn(ctx) under the guard g (kernel/guard.h): code the user brought, which may fault, hang, or (hosted) try to
 * talk to the OS. Returns
 *   PLAT_GUARD_RAN      fn returned; ctx (ctx_len bytes) holds what it wrote there. fn must keep its results in
 *                       ctx (and in static data only what it reads): the hosted runner runs it in a child process
 *                       and copies ctx back, nothing else.
 *   PLAT_GUARD_NOT_RUN  nothing ran (no watchdog CPU, no child process ...): why says why; no record written.
 *   PLAT_GUARD_FAILED   (hosted runner only) the code faulted, made a system call or did not return within
 *                       g->timeout_ms: the `crash` or `error` record naming g's part and offset is written, the
 *                       run goes on (its end record says `crashed` / `error`: host_guard_status).
 * The image runs fn on a stack of its own with an absent guard page below, and never returns after a failure: a
 * fault gives the `crash` record and the end record "crashed", a timeout the watchdog NMI's `error` record and
 * "error" (docs/snippets.md, "Safety"). In the hosted runner fn can make no system call (the seccomp filter traps
 * it like the code's): no record, no output, no allocation that needs the kernel. */
enum { PLAT_GUARD_RAN = 0, PLAT_GUARD_NOT_RUN = -1, PLAT_GUARD_FAILED = 1 };
int plat_guard_run(const struct guard *g, void (*fn)(void *ctx), void *ctx, size_t ctx_len, char *why,
                   size_t whylen);

/* ---- run configuration ----------------------------------------------------------------------- */

struct plat_config {
    bool quick;                      /* PROFILE_QUICK: fewer points, small time budgets */
    bool minimal;                    /* emulated (QEMU TCG): minimum samples, no convergence loops */
    uint64_t seed;                   /* chain seeds derive from it */
    uint64_t max_bytes;              /* cap on any one working set; 0 = none */
    uint64_t sweep_top;              /* the latency sweep's largest working set; 0 = 4x the LLC */
    uint32_t time_budget_ms;         /* sampling budget per point; 0 = the profile's default */
    enum timing_serialize serialize; /* fencing of the timestamps */
    const char *platform;            /* "uefi" or "linux", for the records */
    /* The config file's sections (kernel/config.h: `sections`), parsed by their benchmarks: the snippets. */
    const char *sections;
    size_t sections_len;
    unsigned sections_line;
};
const struct plat_config *plat_config(void);

/* ---- output --------------------------------------------------------------------------------------- */

/* A JSON record (type set) to fill, then emitted with plat_rec_end (kernel/record.h's contract). */
struct json *plat_rec_begin(const char *type);
void plat_rec_end(void);
/* Human-readable text (a line never starts with '{'). */
void plat_printf(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

#endif
