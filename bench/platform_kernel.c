/* platform_kernel.c - bench/platform.h on the UEFI kernel: pmm buffers remapped with paging_map, jobs on APs
 * through kernel/smp.h, clocks from K.time, records on the serial stream. */
#include "bench/platform.h"
#include "kernel/fmt.h"
#include "kernel/kernel.h"
#include "kernel/out.h"
#include "kernel/paging.h"
#include "kernel/pmm.h"
#include "kernel/smp.h"
#include "kernel/watchdog.h"

/* Buffers are 2 MiB aligned and a multiple of 2 MiB whatever their page size, so that giving them back
 * can restore 2 MiB pages without touching a neighbour's mapping. */
#define PLAT_ALIGN MiB(2)

int plat_alloc(struct plat_buf *b, uint64_t bytes, uint64_t page, int node, const char *why)
{
    memset(b, 0, sizeof(*b));
    b->node = -1;
    if (bytes == 0 || !K.pmm)
        return -1;
    const struct paging_stats *ps = paging_stats();
    if (page == PLAT_PAGE_LARGEST)
        page = PLAT_PAGE_DEFAULT; /* the identity map already uses the largest page (1 GiB when the CPU has them) */
    if (page != PLAT_PAGE_DEFAULT && page != PAGE_4K && page != PAGE_2M && page != PAGE_1G)
        return -1;
    if (page == PAGE_1G && !ps->have_1g)
        return -1;
    uint64_t align = MAX(page, PLAT_ALIGN);
    if (bytes > UINT64_MAX - align)
        return -1;
    uint64_t len = ALIGN_UP(bytes, align);
    uint64_t phys;
    if (pmm_alloc_tagged(K.pmm, len, align, node, why, &phys) != 0)
        return -1;
    uint64_t before = paging_page_size(phys);
    if (page != PLAT_PAGE_DEFAULT && before != page) {
        if (paging_map(phys, len, page, CACHE_WB) != 0) {
            paging_map(phys, len, PAGE_2M, CACHE_WB); /* undo a partial remap */
            pmm_free(K.pmm, phys, len);
            return -1;
        }
        b->priv_remapped = true;
        /* Back to what it was; a 1 GiB page only when this buffer owns the whole gigabyte. */
        b->priv_restore = before == PAGE_1G && (phys % PAGE_1G || len % PAGE_1G) ? PAGE_2M : before;
        if (b->priv_restore != PAGE_1G && b->priv_restore != PAGE_2M)
            b->priv_restore = PAGE_2M;
    }
    b->ptr = (void *)(uintptr_t)phys;
    b->bytes = page ? ALIGN_UP(bytes, page) : bytes;
    b->priv_len = len;
    b->page_bytes = paging_page_size(phys);
    b->page_how = b->priv_remapped ? "paging_map" : "identity map";
    b->node = pmm_node_of(K.pmm, phys);
    return 0;
}

void plat_free(struct plat_buf *b)
{
    if (!b || !b->ptr)
        return;
    uint64_t phys = (uint64_t)(uintptr_t)b->ptr;
    if (b->priv_remapped)
        paging_map(phys, b->priv_len, b->priv_restore, CACHE_WB);
    pmm_free(K.pmm, phys, b->priv_len);
    memset(b, 0, sizeof(*b));
    b->node = -1;
}

uint64_t plat_alloc_limit(int node) { return K.pmm ? pmm_largest_free(K.pmm, node, PLAT_ALIGN) : 0; }

bool plat_page_ok(uint64_t page)
{
    if (page == PAGE_4K || page == PAGE_2M)
        return true;
    return page == PAGE_1G && paging_stats()->have_1g;
}

uint32_t plat_cpu_count(void) { return smp_cpu_count(); }

bool plat_cpu(uint32_t i, struct plat_cpu *out)
{
    const struct smp_cpu *c = smp_online(i);
    if (!c) {
        if (i != 0)
            return false;
        /* Before smp_init (or without APs) the BSP alone. */
        *out = (struct plat_cpu){.id = 0, .apic_id = K.apic.bsp_id};
        cpu_topology_split(&K.cpu, out->apic_id, &out->package, &out->core, &out->smt);
        return true;
    }
    *out = (struct plat_cpu){
        .id = c->index, .apic_id = c->apic_id, .node = c->node, .package = c->package, .core = c->core, .smt = c->smt};
    return true;
}

uint32_t plat_node_count(void) { return K.acpi_ok && K.acpi->numa_nodes ? K.acpi->numa_nodes : 1; }
uint64_t plat_node_bytes(int node) { return K.pmm ? pmm_total_bytes(K.pmm, node) : 0; }
int plat_node_distance(int from, int to) { return K.acpi_ok ? acpi_node_distance(K.acpi, from, to) : -1; }

int plat_run_on(uint32_t cpu_id, plat_fn fn, void *arg) { return smp_run_on(cpu_id, fn, arg, SMP_DEFAULT_TIMEOUT_US); }
int plat_start(uint32_t cpu_id, plat_fn fn, void *arg) { return smp_call(cpu_id, fn, arg); }
int plat_wait(uint32_t cpu_id) { return smp_wait(cpu_id, SMP_DEFAULT_TIMEOUT_US); }

uint64_t plat_tsc_hz(void) { return K.time.tsc_hz; }
double plat_core_tsc_ratio(void) { return K.time.core_tsc_ratio; }
const char *plat_core_tsc_method(void) { return K.time.core_tsc_method ? K.time.core_tsc_method : "none"; }
const struct cpu_info *plat_cpuinfo(void) { return &K.cpu; }

size_t plat_tsc_sources(struct plat_tsc_source *out, size_t max)
{
    const struct time_info *t = &K.time;
    struct plat_tsc_source all[3];
    size_t n = 0, k = 0;
    if (t->cpuid_tsc_hz)
        all[n++] = (struct plat_tsc_source){t->cpuid_method ? t->cpuid_method : "cpuid", t->cpuid_tsc_hz, 0};
    if (t->pm_timer.hz)
        all[n++] = (struct plat_tsc_source){"acpi_pm_timer", t->pm_timer.hz, t->pm_timer.spread};
    if (t->hpet.hz)
        all[n++] = (struct plat_tsc_source){"hpet", t->hpet.hz, t->hpet.spread};
    for (size_t i = 0; i < n && k < max; i++)
        out[k++] = all[i];
    return k;
}

static void core_clock_job(void *arg)
{
    core_clock_measure(arg, K.cpu.feat.aperfmperf);
}

int plat_core_clock(uint32_t cpu_id, struct core_clock *c)
{
    memset(c, 0, sizeof(*c));
    return plat_run_on(cpu_id, core_clock_job, c);
}

const struct plat_config *plat_config(void)
{
    static struct plat_config c;
    static bool done;
    if (done)
        return &c;
    done = true; /* K.cfg and K.profile are final before any benchmark runs */
    c = (struct plat_config){
        .quick = K.profile == PROFILE_QUICK,
        .minimal = K.minimal,
        .seed = K.cfg.seed,
        .max_bytes = K.cfg.max_bytes,
        .sweep_top = K.cfg.sweep_top,
        .time_budget_ms = K.cfg.time_budget_ms,
        .serialize = !strcmp(K.cfg.serialize, "cpuid") ? TIMING_CPUID : TIMING_LFENCE,
        .platform = "uefi",
        .sections = K.cfg.sections,
        .sections_len = K.cfg.sections_len,
        .sections_line = K.cfg.sections_line,
    };
    return &c;
}

/* The identity map is executable (EFER.NXE is never set: kernel/paging.c maps without XD bits). */
int plat_alloc_code(struct plat_buf *b, uint64_t bytes, const char *why)
{
    return plat_alloc(b, bytes, PLAT_PAGE_DEFAULT, -1, why);
}

/* kernel/isr.S */
void call_on_stack(uint64_t stack_top, void (*fn)(void *), void *arg);

/* The guarded code's own stack: 2 MiB (one buffer) whose lowest 4 KiB page is absent, so that a snippet pushing
 * or calling without end faults on that guard page (a #PF whose delivery faults too: a #DF, which arrives on its
 * own IST stack and writes the crash record) rather than writing over whatever lies below the kernel's stack.
 * Kept for the whole run (the guard page is never mapped again). 0, or the stack's top. */
static uint64_t guarded_stack_top(char *why, size_t whylen)
{
    static struct plat_buf stk;
    if (!stk.ptr) {
        if (plat_alloc(&stk, MiB(2), PAGE_4K, -1, "guarded code's stack") != 0) {
            fmt_snprintf(why, whylen, "no memory for the guarded code's stack");
            return 0;
        }
        if (paging_unmap_4k((uint64_t)(uintptr_t)stk.ptr) != 0) {
            plat_free(&stk);
            fmt_snprintf(why, whylen, "no guard page below the guarded code's stack");
            return 0;
        }
    }
    return (uint64_t)(uintptr_t)stk.ptr + stk.bytes;
}

int plat_guard_run(const struct guard *g, void (*fn)(void *ctx), void *ctx, size_t ctx_len, char *why, size_t whylen)
{
    (void)ctx_len;
    uint64_t top = guarded_stack_top(why, whylen);
    if (!top)
        return PLAT_GUARD_NOT_RUN;
    guard_set(g); /* before the watchdog can fire: its NMI names the guarded code */
    if (watchdog_arm(g->timeout_ms, why, whylen) != 0) {
        guard_set(NULL);
        return PLAT_GUARD_NOT_RUN;
    }
    /* A fault or the watchdog's NMI ends the run from here (kernel/panic.c, kernel/watchdog.c). */
    call_on_stack(top, fn, ctx);
    watchdog_disarm();
    guard_set(NULL);
    return PLAT_GUARD_RAN;
}

struct json *plat_rec_begin(const char *type) { return rec_begin(type); }
void plat_rec_end(void) { rec_end(); }

void plat_printf(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    kvprintf(fmt, ap);
    va_end(ap);
}
