/* platform_linux.c - bench/platform.h for a Linux process: mmap buffers (hugetlbfs or THP when asked, mbind for a
 * node), one pinned worker thread per CPU on a mailbox like the image's APs (spinning after a job, asleep on a
 * futex once idle), /dev/cpu_dma_latency held at 2 us, the TSC calibrated against CLOCK_MONOTONIC_RAW, records on stdout. */
#define _GNU_SOURCE
#include "bench/hosted/platform_linux.h"
#include "bench/platform.h"
#include "kernel/fmt.h"
#include "measure/timing.h"

#include <cpuid.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <linux/futex.h>
#include <linux/perf_event.h>
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <sys/utsname.h>
#include <time.h>
#include <unistd.h>

#ifndef MAP_HUGE_SHIFT
#define MAP_HUGE_SHIFT 26
#endif
#define MAP_HUGE_2MB_ (21 << MAP_HUGE_SHIFT)
#define MAP_HUGE_1GB_ (30 << MAP_HUGE_SHIFT)
#define MPOL_BIND_ 2 /* linux/mempolicy.h */
#define MADV_POPULATE_WRITE_ 23 /* linux/mman.h, Linux 5.14 */
#define MAX_CPUS 1024
#ifndef JOB_TIMEOUT_S
#define JOB_TIMEOUT_S 60 /* -DJOB_TIMEOUT_S=1 to try the timeout path */
#endif
#define SPINS_PER_CLOCK_READ 1024 /* PAUSEs between two looks at the clock while waiting for a worker */
/* A worker spins this long after its last job, then sleeps on a futex until the next: a benchmark that uses the
 * CPU (a helper core placing lines round after round) finds it awake with its caches warm, while a CPU that the
 * running benchmark does not use stops spinning, so it neither heats the package nor takes turbo headroom from
 * the benchmark's own core (a 16-CPU Xeon guest's core/TSC ratio moved between 1.17 and 1.43 across benchmarks
 * with 15 spinning workers). */
#define IDLE_SPIN_NS 10000000ull

static struct host_info H;
static struct plat_config PC;
static struct record_stream RS;
static int dma_latency_fd = -1; /* /dev/cpu_dma_latency: the PM QoS request lasts while it is open */

/* The image's AP mailbox (kernel/smp.c) in a Linux process: one cache line the main thread writes a job into
 * and the worker polls with PAUSE for IDLE_SPIN_NS after each job, as an AP does (a job that follows soon finds
 * the CPU awake: no kernel wake-up, no C-state exit), then sleeps on a futex on req until the next job. */
struct mailbox {
    plat_fn fn;
    void *arg;
    unsigned req;  /* bumped by the main thread for each job; release: fn and arg are visible first; the futex word */
    unsigned done; /* set to req by the worker when the job returns; release: the job's writes are visible first */
    bool quit;     /* set by host_shutdown; an idle worker returns */
    int sleeping;  /* 1 while the worker is (about to be) in FUTEX_WAIT: the main thread must wake it */
} __attribute__((aligned(64)));

static void futex_wait(unsigned *addr, unsigned val)
{
    syscall(SYS_futex, addr, FUTEX_WAIT_PRIVATE, val, NULL, NULL, 0);
}

static void futex_wake(unsigned *addr) { syscall(SYS_futex, addr, FUTEX_WAKE_PRIVATE, 1, NULL, NULL, 0); }

static uint64_t mono_ns(void);

struct worker {
    struct mailbox mb;
    pthread_t th;
    struct plat_cpu info; /* written by the worker before it first publishes done, read-only after */
    bool pinned;          /* the same */
    bool dead;            /* main thread only: timed out; never used again */
};

static struct worker *W[MAX_CPUS]; /* by position in the CPU list; W[0] unused (the main thread) */
static struct plat_cpu cpus[MAX_CPUS];
static uint32_t ncpu;

/* ---- small file helpers ------------------------------------------------------------------------------ */

static bool read_text(const char *path, char *buf, size_t len)
{
    FILE *f = fopen(path, "r");
    if (!f)
        return false;
    size_t n = fread(buf, 1, len - 1, f);
    fclose(f);
    buf[n] = 0;
    return n > 0;
}

static long read_long(const char *path, long dflt)
{
    char b[64];
    return read_text(path, b, sizeof(b)) ? strtol(b, NULL, 10) : dflt;
}

static uint64_t meminfo_kb(const char *path, const char *key)
{
    FILE *f = fopen(path, "r");
    char line[256];
    uint64_t v = 0;
    if (!f)
        return 0;
    while (fgets(line, sizeof(line), f)) {
        char *k = strstr(line, key);
        if (k && k[strlen(key)] == ':') {
            v = strtoull(k + strlen(key) + 1, NULL, 10);
            break;
        }
    }
    fclose(f);
    return v;
}

/* ---- CPUID ---------------------------------------------------------------------------------------------- */

static void host_cpuid(uint32_t leaf, uint32_t sub, uint32_t r[4], void *ctx)
{
    (void)ctx;
    __cpuid_count(leaf, sub, r[0], r[1], r[2], r[3]);
}

static uint32_t my_apic_id(void)
{
    uint32_t r[4];
    host_cpuid(0, 0, r, NULL);
    if (r[0] >= 0xb) {
        host_cpuid(0xb, 0, r, NULL);
        if (r[1]) /* EBX != 0: the leaf is implemented */
            return r[3];
    }
    host_cpuid(1, 0, r, NULL);
    return r[1] >> 24;
}

/* ---- CPUs, nodes, workers ------------------------------------------------------------------------------ */

static int node_of_cpu(int cpu)
{
    char path[96];
    fmt_snprintf(path, sizeof(path), "/sys/devices/system/cpu/cpu%d", cpu);
    DIR *d = opendir(path);
    int node = 0;
    if (!d)
        return 0;
    struct dirent *e;
    while ((e = readdir(d)))
        if (!strncmp(e->d_name, "node", 4) && e->d_name[4] >= '0' && e->d_name[4] <= '9') {
            node = atoi(e->d_name + 4);
            break;
        }
    closedir(d);
    return node;
}

static void describe_cpu(int cpu, struct plat_cpu *c)
{
    char path[128];
    *c = (struct plat_cpu){.id = (uint32_t)cpu, .apic_id = (uint32_t)cpu};
    fmt_snprintf(path, sizeof(path), "/sys/devices/system/cpu/cpu%d/topology/physical_package_id", cpu);
    c->package = (uint32_t)read_long(path, 0);
    fmt_snprintf(path, sizeof(path), "/sys/devices/system/cpu/cpu%d/topology/core_id", cpu);
    c->core = (uint32_t)read_long(path, cpu);
    c->node = node_of_cpu(cpu);
    /* SMT index: position of this CPU in its thread_siblings_list ("2,66" or "2-3"). */
    char sib[64];
    fmt_snprintf(path, sizeof(path), "/sys/devices/system/cpu/cpu%d/topology/thread_siblings_list", cpu);
    if (read_text(path, sib, sizeof(sib))) {
        long first = strtol(sib, NULL, 10);
        c->smt = cpu > first ? 1 : 0;
    }
}

static bool pin_self(int cpu)
{
    cpu_set_t s;
    CPU_ZERO(&s);
    CPU_SET(cpu, &s);
    return sched_setaffinity(0, sizeof(s), &s) == 0;
}

static void *worker_main(void *p)
{
    struct worker *w = p;
    struct mailbox *m = &w->mb;
    w->pinned = pin_self((int)w->info.id) && sched_getcpu() == (int)w->info.id;
    w->info.apic_id = my_apic_id();
    unsigned seen = __atomic_load_n(&m->req, __ATOMIC_RELAXED); /* 1, set before the thread was created */
    __atomic_store_n(&m->done, seen, __ATOMIC_RELEASE);          /* announces pinned and apic_id */
    if (!w->pinned)
        return NULL;
    for (;;) {
        unsigned req;
        uint64_t idle_from = mono_ns();
        for (unsigned spin = 1; (req = __atomic_load_n(&m->req, __ATOMIC_ACQUIRE)) == seen; spin++) {
            if (__atomic_load_n(&m->quit, __ATOMIC_ACQUIRE))
                return NULL;
            if (spin % SPINS_PER_CLOCK_READ == 0 && mono_ns() - idle_from > IDLE_SPIN_NS) {
                /* Dekker with plat_start: sleeping is visible before req is read again, and plat_start reads
                 * sleeping after it bumped req (both seq_cst), so one of the two sees the other; a bump that
                 * lands in between makes FUTEX_WAIT return at once (the word no longer equals seen). */
                __atomic_store_n(&m->sleeping, 1, __ATOMIC_SEQ_CST);
                if (__atomic_load_n(&m->req, __ATOMIC_SEQ_CST) == seen && !__atomic_load_n(&m->quit, __ATOMIC_SEQ_CST))
                    futex_wait(&m->req, seen);
                __atomic_store_n(&m->sleeping, 0, __ATOMIC_SEQ_CST);
                continue;
            }
            __builtin_ia32_pause();
        }
        m->fn(m->arg);
        seen = req;
        __atomic_store_n(&m->done, req, __ATOMIC_RELEASE);
    }
}

static struct worker *worker_of(uint32_t cpu_id)
{
    for (uint32_t i = 1; i < ncpu; i++)
        if (cpus[i].id == cpu_id)
            return W[i];
    return NULL;
}

static uint64_t mono_ns(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (uint64_t)t.tv_sec * 1000000000ull + (uint64_t)t.tv_nsec;
}

/* Spins until the worker publishes done == target; after JOB_TIMEOUT_S the worker is marked dead. */
static bool wait_done(struct worker *w, unsigned target)
{
    uint64_t deadline = mono_ns() + JOB_TIMEOUT_S * 1000000000ull;
    for (unsigned spin = 1; __atomic_load_n(&w->mb.done, __ATOMIC_ACQUIRE) != target; spin++) {
        __builtin_ia32_pause();
        if (spin % SPINS_PER_CLOCK_READ == 0 && mono_ns() > deadline) {
            w->dead = true;
            return false;
        }
    }
    return true;
}

/* Only the main thread calls plat_start/plat_wait/plat_run_on, so it is the only writer of req. */
int plat_start(uint32_t cpu_id, plat_fn fn, void *arg)
{
    struct worker *w = worker_of(cpu_id);
    if (!w || w->dead)
        return -1;
    struct mailbox *m = &w->mb;
    unsigned req = __atomic_load_n(&m->req, __ATOMIC_RELAXED);
    if (__atomic_load_n(&m->done, __ATOMIC_ACQUIRE) != req)
        return -1; /* busy: the previous job was not waited for */
    m->fn = fn;
    m->arg = arg;
    __atomic_store_n(&m->req, req + 1, __ATOMIC_SEQ_CST);
    if (__atomic_load_n(&m->sleeping, __ATOMIC_SEQ_CST))
        futex_wake(&m->req);
    return 0;
}

int plat_wait(uint32_t cpu_id)
{
    struct worker *w = worker_of(cpu_id);
    if (!w)
        return 0;
    if (w->dead)
        return -1;
    if (!wait_done(w, __atomic_load_n(&w->mb.req, __ATOMIC_RELAXED))) {
        /* the image's record (kernel/smp.c smp_wait) */
        struct json *j = plat_rec_begin("smp_timeout");
        json_kv_uint(j, "cpu", cpu_id);
        json_kv_uint(j, "apic_id", w->info.apic_id);
        json_kv_uint(j, "timeout_us", JOB_TIMEOUT_S * 1000000ull);
        json_kv_str(j, "action", "CPU skipped for the rest of the run");
        plat_rec_end();
        printf("host: CPU %u did not finish its job within %d s; not used again\n", cpu_id, JOB_TIMEOUT_S);
        return -1;
    }
    return 0;
}

int plat_run_on(uint32_t cpu_id, plat_fn fn, void *arg)
{
    if (ncpu == 0 || cpu_id == cpus[0].id) {
        fn(arg);
        return 0;
    }
    if (plat_start(cpu_id, fn, arg) != 0)
        return -1;
    return plat_wait(cpu_id);
}

uint32_t plat_cpu_count(void) { return ncpu ? ncpu : 1; }

bool plat_cpu(uint32_t i, struct plat_cpu *out)
{
    if (i >= ncpu)
        return false;
    if (i > 0 && W[i] && W[i]->dead)
        return false;
    *out = i > 0 && W[i] ? W[i]->info : cpus[i];
    return true;
}

uint32_t plat_node_count(void) { return H.nodes ? H.nodes : 1; }

uint64_t plat_node_bytes(int node)
{
    char path[96];
    if (node < 0 || (uint32_t)node >= plat_node_count())
        return 0;
    fmt_snprintf(path, sizeof(path), "/sys/devices/system/node/node%d/meminfo", node);
    uint64_t kb = meminfo_kb(path, "MemTotal");
    if (!kb && node == 0)
        return H.memory_bytes;
    return kb << 10;
}

int plat_node_distance(int from, int to)
{
    char path[96], b[512];
    fmt_snprintf(path, sizeof(path), "/sys/devices/system/node/node%d/distance", from);
    if (from < 0 || to < 0 || !read_text(path, b, sizeof(b)))
        return -1;
    char *p = b;
    for (int i = 0; i < to; i++) {
        strtol(p, &p, 10);
        if (!*p)
            return -1;
    }
    return (int)strtol(p, NULL, 10);
}

/* ---- memory ------------------------------------------------------------------------------------------- */

static long mbind_(void *addr, unsigned long len, int mode, const unsigned long *mask, unsigned long maxnode)
{
    return syscall(SYS_mbind, addr, len, mode, mask, maxnode, 0);
}

/* Fraction of [p, p+len) backed by transparent huge pages, from /proc/self/smaps. */
static double thp_fraction(const void *p, uint64_t len)
{
    FILE *f = fopen("/proc/self/smaps", "r");
    char line[512];
    bool in = false;
    uint64_t kb = 0;
    if (!f)
        return 0;
    while (fgets(line, sizeof(line), f)) {
        unsigned long lo, hi;
        if (sscanf(line, "%lx-%lx ", &lo, &hi) == 2 && strchr(line, '-') < strchr(line, ' ')) {
            in = (uintptr_t)p >= lo && (uintptr_t)p < hi;
            continue;
        }
        if (in && !strncmp(line, "AnonHugePages:", 14))
            kb += strtoull(line + 14, NULL, 10);
    }
    fclose(f);
    return len ? (double)(kb << 10) / (double)len : 0;
}

static void *map_huge(uint64_t len, uint64_t page)
{
    int flags = MAP_PRIVATE | MAP_ANONYMOUS | MAP_HUGETLB | (page == GiB(1) ? MAP_HUGE_1GB_ : MAP_HUGE_2MB_);
    void *p = mmap(NULL, len, PROT_READ | PROT_WRITE, flags, -1, 0);
    return p == MAP_FAILED ? NULL : p;
}

/* An anonymous mapping aligned to `align` (the slack around it unmapped again). */
static void *map_aligned(uint64_t len, uint64_t align)
{
    uint64_t span = len + align;
    uint8_t *raw = mmap(NULL, span, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (raw == MAP_FAILED)
        return NULL;
    uint8_t *p = (uint8_t *)ALIGN_UP((uintptr_t)raw, align);
    if (p > raw)
        munmap(raw, (size_t)(p - raw));
    uint8_t *end = p + len, *rend = raw + span;
    if (rend > end)
        munmap(end, (size_t)(rend - end));
    return p;
}

/* A buffer of large pages is faulted in by every CPU of the process at once, in chunks of whole pages: in a
 * guest whose free 2 MiB blocks were handed back to the host (free page reporting), the host backs each again on
 * first touch, 4 KiB at a time, on the CPU that touched it (2 GiB of transparent huge pages, measured alone:
 * 4.1-4.8 s on one CPU of the 2-vCPU test box, 2.3-2.6 s on two; docs/measurement.md "sweep_top"). Nothing is
 * measured while a buffer is taken. Buffers of 4 KiB pages stay on the calling CPU: which CPU's free lists give the pages changes
 * where they lie, and the 4 KiB series' curve depends on that. */
#define POPULATE_PAR_MIN MiB(64)
#define POPULATE_CHUNK MiB(32) /* a CPU takes the next 32 MiB not yet taken: one slowed by other work takes fewer */

struct populate_job {
    uint8_t *p;
    uint64_t len, chunk;
    uint64_t next; /* the next chunk to take (atomic) */
    int failed;    /* a chunk the kernel did not populate (atomic) */
};

static void populate_run(void *arg)
{
    struct populate_job *j = arg;
    for (uint64_t c; (c = __atomic_fetch_add(&j->next, 1, __ATOMIC_RELAXED)) * j->chunk < j->len;) {
        uint64_t lo = c * j->chunk, n = MIN(j->chunk, j->len - lo);
        if (madvise(j->p + lo, n, MADV_POPULATE_WRITE_) != 0)
            __atomic_store_n(&j->failed, 1, __ATOMIC_RELAXED);
    }
}

static pthread_t main_thread;

/* 0, or -1 when the kernel could not populate (before Linux 5.14): the caller writes the buffer instead. */
static int populate(uint8_t *p, uint64_t len, uint64_t page)
{
    static struct populate_job shared; /* not on a stack that a worker past its time would outlive */
    struct populate_job own, *job = &own;
    bool started[MAX_CPUS] = {false};
    uint32_t nw = 1;
    /* only the main thread starts jobs (plat_start), and only it uses `shared`: a worker that allocates
     * populates its buffer alone, on its own stack's job */
    if (page >= MiB(2) && len >= POPULATE_PAR_MIN && pthread_equal(pthread_self(), main_thread)) {
        nw = plat_cpu_count();
        job = &shared;
    }
    *job = (struct populate_job){p, len, MAX(ALIGN_UP(POPULATE_CHUNK, page), page), 0, 0};
    for (uint32_t k = 1; k < nw; k++)
        started[k] = plat_start(cpus[k].id, populate_run, job) == 0;
    populate_run(job);
    for (uint32_t k = 1; k < nw; k++)
        if (started[k] && plat_wait(cpus[k].id) != 0)
            job->failed = 1; /* a chunk may be half done: the caller writes the whole buffer */
    return job->failed ? -1 : 0;
}

int plat_alloc(struct plat_buf *b, uint64_t bytes, uint64_t page, int node, const char *why)
{
    (void)why;
    memset(b, 0, sizeof(*b));
    b->node = -1;
    if (bytes == 0 || bytes > (1ull << 46))
        return -1;
    if (node >= 0 && (uint32_t)node >= plat_node_count())
        return -1;
    void *p = NULL;
    uint64_t len = 0, got = 0;
    const char *how = NULL;
    bool largest = page == PLAT_PAGE_LARGEST;
    if (page == GiB(1) || (largest && bytes >= GiB(1) / 2)) {
        len = ALIGN_UP(bytes, GiB(1));
        if ((p = map_huge(len, GiB(1))))
            got = GiB(1), how = "hugetlbfs";
        else if (!largest)
            return -1;
    }
    if (!p && (page == MiB(2) || largest)) {
        len = ALIGN_UP(bytes, MiB(2));
        if ((p = map_huge(len, MiB(2)))) {
            got = MiB(2), how = "hugetlbfs";
        } else if ((p = map_aligned(len, MiB(2)))) {
            madvise(p, len, MADV_HUGEPAGE);
            how = "thp";
        }
    }
    if (!p && (page == KiB(4) || page == PLAT_PAGE_DEFAULT)) {
        len = ALIGN_UP(bytes, KiB(4));
        if ((p = map_aligned(len, KiB(4)))) {
            if (page == KiB(4))
                madvise(p, len, MADV_NOHUGEPAGE);
            got = KiB(4);
            how = page == KiB(4) ? "base pages (MADV_NOHUGEPAGE)" : "default (THP per system policy)";
        }
    }
    if (!p)
        return -1;
    if (node >= 0) {
        unsigned long mask[16] = {0};
        mask[node / 64] = 1ul << (node % 64);
        if (mbind_(p, len, MPOL_BIND_, mask, sizeof(mask) * 8) != 0) {
            munmap(p, len);
            return -1;
        }
        b->node = node;
    } else if (plat_node_count() == 1) {
        b->node = 0;
    }
    /* Fault every page in now (on the bound node), not inside a timed region: the kernel populates the
     * range writable without a pass of stores over it (anonymous memory is zero already; a 2 GiB buffer of
     * 4 KiB pages: 0.6-0.9 s instead of 1.1-1.4 s on the test box); before Linux 5.14, by writing it. */
    if (populate(p, len, got ? got : MiB(2)) != 0) /* got is 0 for THP until it is verified below */
        memset(p, 0, len);
    if (how && !strcmp(how, "thp")) {
        double f = thp_fraction(p, len);
        got = f >= 0.9 ? MiB(2) : KiB(4);
        how = f >= 0.9 ? "thp" : "thp requested, base pages given";
    } else if (page == PLAT_PAGE_DEFAULT && thp_fraction(p, len) >= 0.9) {
        got = MiB(2);
    }
    b->ptr = p;
    b->bytes = len;
    b->page_bytes = got;
    b->page_how = how;
    b->priv_restore = len;
    return 0;
}

void plat_free(struct plat_buf *b)
{
    if (!b || !b->ptr)
        return;
    munmap(b->ptr, b->priv_restore);
    memset(b, 0, sizeof(*b));
    b->node = -1;
}

uint64_t plat_alloc_limit(int node)
{
    uint64_t avail = meminfo_kb("/proc/meminfo", "MemAvailable") << 10;
    if (node >= 0 && plat_node_count() > 1) {
        char path[96];
        fmt_snprintf(path, sizeof(path), "/sys/devices/system/node/node%d/meminfo", node);
        uint64_t free_kb = meminfo_kb(path, "MemFree");
        if (free_kb)
            avail = MIN(avail, free_kb << 10);
    }
    return avail;
}

bool plat_page_ok(uint64_t page)
{
    if (page == KiB(4) || page == MiB(2))
        return true;
    return page == GiB(1) && H.hugepages_1g_free > 0;
}

/* ---- clocks ---------------------------------------------------------------------------------------------- */

static double now_ns(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC_RAW, &t);
    return (double)t.tv_sec * 1e9 + (double)t.tv_nsec;
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

static void calibrate_tsc(bool quick)
{
    double r[9];
    int n = quick ? 5 : 9;
    double window = quick ? 10e6 : 50e6;
    for (int i = 0; i < n; i++) {
        double n0 = now_ns();
        uint64_t t0 = timing_rdtsc();
        while (now_ns() - n0 < window)
            ;
        uint64_t t1 = timing_rdtsc();
        double n1 = now_ns();
        r[i] = (double)(t1 - t0) * 1e9 / (n1 - n0);
    }
    qsort(r, (size_t)n, sizeof(double), cmp_double);
    H.tsc_hz = (uint64_t)(r[n / 2] + 0.5);
    H.tsc_spread = (r[n - 1] - r[0]) / r[n / 2];
    H.tsc_method = "clock_monotonic_raw";
}

/* perf_event's cycle counter (user mode) over the add_rr chain of kernel/core_clock.c, against the TSC. */
static bool perf_ratio(double *ratio)
{
    struct perf_event_attr a;
    memset(&a, 0, sizeof(a));
    a.type = PERF_TYPE_HARDWARE;
    a.size = sizeof(a);
    a.config = PERF_COUNT_HW_CPU_CYCLES;
    a.exclude_kernel = 1;
    a.exclude_hv = 1;
    int fd = (int)syscall(SYS_perf_event_open, &a, 0, -1, -1, 0);
    if (fd < 0)
        return false;
    uint64_t c0, c1;
    volatile uint64_t sink = 0;
    bool ok = read(fd, &c0, 8) == 8;
    uint64_t t0 = timing_rdtsc();
    sink += core_clock_add_chain(20000); /* ~5 M cycles */
    uint64_t t1 = timing_rdtsc();
    ok = ok && read(fd, &c1, 8) == 8 && c1 > c0 && t1 > t0;
    close(fd);
    if (ok)
        *ratio = (double)(c1 - c0) / (double)(t1 - t0);
    return ok;
}

/* The two chains of kernel/core_clock.c (the image's method) always, as the cross-check; perf_event's cycle
 * counter first when the kernel lets us have it, else the chains' ratio. */
static void core_ratio(void)
{
    double r;
    core_clock_measure(&H.core, false);
    if (perf_ratio(&r)) {
        H.core_tsc_ratio = r;
        H.core_ratio_spread = 0;
        H.core_tsc_method = "perf_event:cpu-cycles";
        return;
    }
    H.core_tsc_ratio = H.core.ratio;
    H.core_ratio_spread = H.core.spread;
    H.core_tsc_method = H.core.method;
}

size_t plat_tsc_sources(struct plat_tsc_source *out, size_t max)
{
    size_t k = 0;
    if (H.tsc_hz && k < max) /* the rate in use: measured against CLOCK_MONOTONIC_RAW */
        out[k++] = (struct plat_tsc_source){H.tsc_method, H.tsc_hz, H.tsc_spread};
    if (H.cpu.tsc_hz && k < max)
        out[k++] = (struct plat_tsc_source){H.cpu.tsc_hz_source ? H.cpu.tsc_hz_source : "cpuid", H.cpu.tsc_hz, 0};
    return k;
}

static void core_clock_job(void *arg)
{
    struct core_clock *c = arg;
    double r;
    core_clock_measure(c, false);
    if (perf_ratio(&r)) { /* the start-up method first, as core_ratio() chose it */
        c->ratio = r;
        c->spread = 0;
        c->method = "perf_event:cpu-cycles";
    }
}

int plat_core_clock(uint32_t cpu_id, struct core_clock *c)
{
    memset(c, 0, sizeof(*c));
    return plat_run_on(cpu_id, core_clock_job, c);
}

uint64_t plat_tsc_hz(void) { return H.tsc_hz; }
double plat_core_tsc_ratio(void) { return H.core_tsc_ratio; }
const char *plat_core_tsc_method(void) { return H.core_tsc_method; }
const struct cpu_info *plat_cpuinfo(void) { return &H.cpu; }
const struct plat_config *plat_config(void) { return &PC; }

/* ---- output ------------------------------------------------------------------------------------------- */

static void sink_stdout(const char *line, size_t len, void *ctx)
{
    (void)ctx;
    fflush(stdout);
    fwrite(line, 1, len, stdout);
    fputc('\n', stdout);
    fflush(stdout);
}

struct record_stream *host_records(void) { return &RS; }
struct json *plat_rec_begin(const char *type) { return record_begin(&RS, type); }
void plat_rec_end(void) { record_end(&RS); }

void plat_printf(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vprintf(fmt, ap);
    va_end(ap);
}

/* ---- start-up ----------------------------------------------------------------------------------------- */

const struct host_info *host_info(void) { return &H; }

/* The kernel's CPU latency PM QoS interface (Documentation/power/pm_qos_interface.rst): a 32-bit target in us
 * written to /dev/cpu_dma_latency holds while the file stays open, so that no CPU enters an idle state whose
 * exit latency exceeds it. 2 us admits C1 (HLT / MWAIT C1: exit latency 1-2 us in intel_idle, acpi_idle and
 * haltpoll) and keeps out the deeper states: an idle worker halts instead of polling (0 would leave only the
 * kernel's polling state, a spin like the one the workers stop), and wakes within microseconds. Needs root; the
 * run goes on without. */
#define CPU_DMA_LATENCY_US 2
static void hold_cpu_dma_latency(void)
{
    const int32_t target_us = CPU_DMA_LATENCY_US;
    int fd = open("/dev/cpu_dma_latency", O_RDWR | O_CLOEXEC);
    if (fd < 0) {
        fmt_snprintf(H.cpu_dma_latency, sizeof(H.cpu_dma_latency), "not held: %s", strerror(errno));
        return;
    }
    ssize_t n = write(fd, &target_us, sizeof(target_us));
    if (n != (ssize_t)sizeof(target_us)) {
        fmt_snprintf(H.cpu_dma_latency, sizeof(H.cpu_dma_latency), "not held: write: %s",
                     n < 0 ? strerror(errno) : "short write");
        close(fd);
        return;
    }
    dma_latency_fd = fd;
    H.cpu_dma_latency_held = true;
    fmt_snprintf(H.cpu_dma_latency, sizeof(H.cpu_dma_latency), "held at %d us", (int)target_us);
}

int host_init(const struct config *cfg, bool quick, char *err, size_t errlen)
{
    record_stream_init(&RS, sink_stdout, NULL);
    hold_cpu_dma_latency();
    cpuid_decode(&H.cpu, host_cpuid, NULL);
    if (!H.cpu.feat.tsc) {
        fmt_snprintf(err, errlen, "CPUID reports no TSC");
        return -1;
    }
    const char *why;
    PC = (struct plat_config){
        .quick = quick,
        .minimal = config_minimal_samples(cfg->samples, false, &why), /* samples=minimal; never emulated here */
        .seed = cfg->seed,
        .max_bytes = cfg->max_bytes,
        .sweep_top = cfg->sweep_top,
        .time_budget_ms = cfg->time_budget_ms,
        .serialize = !strcmp(cfg->serialize, "cpuid") ? TIMING_CPUID : TIMING_LFENCE,
        .platform = "linux",
        .sections = cfg->sections,
        .sections_len = cfg->sections_len,
        .sections_line = cfg->sections_line,
    };
    struct utsname u;
    if (uname(&u) == 0)
        fmt_snprintf(H.kernel, sizeof(H.kernel), "%s %s", u.sysname, u.release);
    H.memory_bytes = meminfo_kb("/proc/meminfo", "MemTotal") << 10;
    char thp[128];
    H.thp_madvise = read_text("/sys/kernel/mm/transparent_hugepage/enabled", thp, sizeof(thp)) &&
                    (strstr(thp, "[madvise]") || strstr(thp, "[always]"));
    H.hugepages_2m_free = (uint64_t)read_long("/sys/kernel/mm/hugepages/hugepages-2048kB/free_hugepages", 0);
    H.hugepages_1g_free = (uint64_t)read_long("/sys/kernel/mm/hugepages/hugepages-1048576kB/free_hugepages", 0);
    H.nodes = 0;
    for (int n = 0; n < 1024; n++) {
        char path[96];
        fmt_snprintf(path, sizeof(path), "/sys/devices/system/node/node%d", n);
        DIR *d = opendir(path);
        if (!d)
            continue;
        closedir(d);
        H.nodes = (uint32_t)n + 1;
    }
    if (!H.nodes)
        H.nodes = 1;

    cpu_set_t set;
    if (sched_getaffinity(0, sizeof(set), &set) != 0) {
        fmt_snprintf(err, errlen, "sched_getaffinity: %s", strerror(errno));
        return -1;
    }
    H.cpus_allowed = (uint32_t)CPU_COUNT(&set);
    uint32_t limit = cfg->max_cpus ? cfg->max_cpus : MAX_CPUS;
    ncpu = 0;
    for (int c = 0; c < CPU_SETSIZE && ncpu < MIN(limit, (uint32_t)MAX_CPUS); c++)
        if (CPU_ISSET(c, &set))
            describe_cpu(c, &cpus[ncpu++]);
    if (ncpu == 0) {
        fmt_snprintf(err, errlen, "no CPU in the affinity mask");
        return -1;
    }
    main_thread = pthread_self();
    if (!pin_self((int)cpus[0].id)) {
        fmt_snprintf(err, errlen, "cannot pin to CPU %u: %s", cpus[0].id, strerror(errno));
        return -1;
    }
    if (sched_getcpu() != (int)cpus[0].id) { /* plat_cpu(0) names this CPU in every record */
        fmt_snprintf(err, errlen, "pinned to CPU %u but running on CPU %d", cpus[0].id, sched_getcpu());
        return -1;
    }
    cpus[0].apic_id = my_apic_id();
    /* One worker per other CPU of the mask, so no two threads of ours ever share a CPU (a worker spins after its jobs). */
    uint32_t n = 1;
    for (uint32_t i = 1; i < ncpu; i++) {
        struct worker *w = aligned_alloc(_Alignof(struct worker), ALIGN_UP(sizeof(*w), _Alignof(struct worker)));
        if (!w)
            break;
        memset(w, 0, sizeof(*w));
        w->info = cpus[i];
        w->mb.req = 1; /* the worker publishes done = 1 once pinned */
        if (pthread_create(&w->th, NULL, worker_main, w) != 0) {
            free(w);
            break;
        }
        if (!wait_done(w, 1)) {
            fmt_snprintf(err, errlen, "worker thread for CPU %u did not start", cpus[i].id);
            return -1;
        }
        if (!w->pinned) { /* the CPU left the mask or went offline since sched_getaffinity */
            printf("host: cannot pin a worker to CPU %u; that CPU is not used\n", cpus[i].id);
            pthread_join(w->th, NULL);
            free(w);
            continue;
        }
        cpus[n] = w->info;
        W[n++] = w;
    }
    ncpu = n;
    H.cpus = ncpu;
    if (cfg->max_cpus > ncpu)
        fmt_snprintf(H.cpus_short, sizeof(H.cpus_short),
                     "max_cpus=%u, but this process can use %u CPU(s) (%u in its affinity mask); running on %u",
                     cfg->max_cpus, ncpu, H.cpus_allowed, ncpu);
    calibrate_tsc(quick);
    core_ratio();
    return 0;
}

void host_shutdown(void)
{
    for (uint32_t i = 1; i < ncpu; i++) {
        struct worker *w = W[i];
        if (!w)
            continue;
        __atomic_store_n(&w->mb.quit, true, __ATOMIC_SEQ_CST);
        futex_wake(&w->mb.req);
        if (!w->dead) /* a dead one may never return from its job */
            pthread_join(w->th, NULL);
    }
    if (dma_latency_fd >= 0) { /* measuring is over: let the CPUs sleep again */
        close(dma_latency_fd);
        dma_latency_fd = -1;
    }
}
