/* smp.c - bring up the APs the MADT lists (INIT-SIPI-SIPI, SDM Vol. 3A 8.4.4.1) through the real-mode
 * trampoline, give each its own stack, GDT/TSS and the shared IDT, and park it in a job loop on a
 * per-CPU mailbox. Every wait is bounded: an AP that does not answer or a job that does not finish is
 * reported and left alone; the run goes on. */
#include "kernel/smp.h"
#include "kernel/apic.h"
#include "kernel/cpu.h"
#include "kernel/io.h"
#include "kernel/kernel.h"
#include "kernel/msr.h"
#include "kernel/out.h"
#include "kernel/paging.h"
#include "kernel/pmm.h"
#include "kernel/time.h"
#include "kernel/turbo.h"

#define AP_STACK_BYTES (64 * 1024)
#define AP_ALIVE_TIMEOUT_US 1000000ULL /* TCG with many vCPUs can take a while */
#define ICR_INIT 0x00000500u
#define ICR_STARTUP 0x00000600u
#define ICR_NMI 0x00000400u /* delivery mode 100b (SDM Vol. 3A 11.6.1): the vector field is ignored */
#define ICR_LEVEL_ASSERT 0x00004000u
#define ICR_DELIVERY_PENDING (1u << 12)

extern const char trampoline_start[], trampoline_end[];
extern const char tr_gdtr_base[], tr_farptr_off[], tr_cr3_low[], tr_cr3[], tr_stack[], tr_entry[], tr_arg[];
extern const uint64_t tr_gdt_off, tr_long_off;

struct mailbox {
    volatile smp_fn fn;
    void *volatile arg;
    volatile uint32_t req;  /* bumped by the BSP for each job */
    volatile uint32_t done; /* set to req by the AP when the job returns */
    uint32_t sleeping;      /* 1 while the AP is (about to be) in HLT: the BSP sends the wake-up IPI */
} __attribute__((aligned(64)));

/* An AP spins on its mailbox this long after a job, then halts until the BSP's wake-up IPI: a benchmark that
 * uses the CPU (a helper placing lines round after round, a line holder whose caches a HITM read snoops)
 * finds it awake, while a CPU the running benchmark does not use stops spinning, so it does not change the
 * benchmark core's turbo bin (the hosted runner's workers do the same with a futex). */
#define AP_IDLE_SPIN_US 10000ULL


struct ap_boot {
    uint32_t index;
    volatile uint32_t alive;
    struct cpu_tables *tables;
};

static struct smp_cpu cpus[SMP_MAX_CPUS];
static struct mailbox mbox[SMP_MAX_CPUS];
static struct ap_boot boots[SMP_MAX_CPUS];
static uint32_t n_total, n_online;
static uint32_t online_list[SMP_MAX_CPUS];

uint32_t smp_cpu_count(void) { return n_online ? n_online : 1; }
uint32_t smp_cpu_total(void) { return n_total ? n_total : 1; }
const struct smp_cpu *smp_cpu(uint32_t index) { return index < n_total ? &cpus[index] : NULL; }
const struct smp_cpu *smp_online(uint32_t i) { return i < n_online ? &cpus[online_list[i]] : NULL; }

/* Fallback only: a CPU running on descriptor tables that are not ours (none does once smp_init has
 * counted more than one CPU: each loads its struct cpu_tables before anything else). CPUID.1:EBX[31:24]
 * is the initial xAPIC ID; with x2APIC, leaf 0BH EDX holds the full 32-bit ID (SDM Vol. 3A 11.12.8). */
static NOINLINE uint32_t index_by_cpuid(void)
{
    uint32_t r[4], id;
    cpuid_raw(1, 0, r);
    id = r[1] >> 24;
    if (K.apic.x2apic && K.cpu.max_basic >= 0xb) {
        cpuid_raw(0xb, 0, r);
        id = r[3];
    }
    for (uint32_t i = 0; i < n_total; i++)
        if (cpus[i].apic_id == id)
            return i;
    return 0;
}

/* From this CPU's own struct cpu_tables, found through SGDT (its GDT is the struct's first member;
 * kernel_main gives the BSP index 0, start_ap each AP its index before it runs): no APIC read (an MSR
 * in x2APIC mode, and the msr_trace queue asks this for every access it records) and no CPUID. The
 * trace hook runs right after the write that enables the counters, and pmu_core_cycles_read calls
 * this between two RDPMCs: a CPUID there would be counted (it serializes, and under a hypervisor it
 * exits to the VMM). */
uint32_t smp_current_index(void)
{
    if (smp_cpu_total() <= 1)
        return 0;
    struct gdtr_value gdtr = sgdt();
    if (gdtr.limit != sizeof(((const struct cpu_tables *)0)->gdt) - 1)
        return index_by_cpuid();
    const struct cpu_tables *t = (const struct cpu_tables *)(uintptr_t)(gdtr.base - offsetof(struct cpu_tables, gdt));
    return t->index < n_total ? t->index : index_by_cpuid();
}

static void rebuild_online(void)
{
    n_online = 0;
    for (uint32_t i = 0; i < n_total; i++)
        if (cpus[i].online)
            online_list[n_online++] = i;
}

static NORETURN void ap_entry(struct ap_boot *ab)
{
    cpu_tables_load(ab->tables);
    fpu_enable(K.cpu.feat.xsave, K.cpu.xcr0_supported, K.cpu.feat.avx, K.cpu.feat.avx512f);
    wrmsr_safe(MSR_IA32_PAT, paging_stats()->pat);
    apic_mask_all(&K.apic);
    /* Wake-up IPIs need the local APIC software-enabled (INIT leaves SVR at 0xFF: disabled) and a task priority
     * that lets vector CPU_WAKE_VECTOR through; every LVT stays masked, so that IPI is the only interrupt. */
    bool can_halt = K.apic.present;
    if (can_halt) {
        apic_write(&K.apic, LAPIC_TPR, 0);
        apic_write(&K.apic, LAPIC_SVR, LAPIC_SVR_ENABLE | CPU_SPURIOUS_VECTOR);
    }
    turbo_apply(&K.cfg, ab->index); /* per-CPU turbo state (turbo=off), before the BSP sees this AP alive */
    struct mailbox *m = &mbox[ab->index];
    uint64_t idle_ticks = AP_IDLE_SPIN_US * time_tsc_hz() / 1000000ULL;
    __atomic_store_n(&ab->alive, 1, __ATOMIC_RELEASE);
    for (;;) {
        uint32_t req;
        uint64_t idle_from = rdtsc_ordered();
        while ((req = __atomic_load_n(&m->req, __ATOMIC_ACQUIRE)) == m->done) {
            if (can_halt && rdtsc_ordered() - idle_from > idle_ticks) {
                /* Dekker with smp_call (both seq_cst): either the BSP sees sleeping and sends the IPI, or this
                 * CPU sees the new req and does not halt. An IPI that arrives before STI stays pending in the
                 * IRR; STI's one-instruction shadow lets HLT start first, and the interrupt then ends it. */
                __atomic_store_n(&m->sleeping, 1, __ATOMIC_SEQ_CST);
                if (__atomic_load_n(&m->req, __ATOMIC_SEQ_CST) == m->done)
                    sti_hlt_cli();
                __atomic_store_n(&m->sleeping, 0, __ATOMIC_SEQ_CST);
                continue;
            }
            cpu_pause();
        }
        m->fn(m->arg);
        __atomic_store_n(&m->done, req, __ATOMIC_RELEASE);
    }
}

static bool icr_wait(void)
{
    if (K.apic.x2apic)
        return true; /* x2APIC has no delivery-status bit: writes complete synchronously */
    uint64_t end = rdtsc_ordered() + time_tsc_hz() / 10;
    while (apic_read(&K.apic, LAPIC_ICR_LO) & ICR_DELIVERY_PENDING)
        if (rdtsc_ordered() > end)
            return false;
    return true;
}

static void send_ipi(uint32_t apic_id, uint32_t lo)
{
    if (K.apic.x2apic) {
        /* x2APIC: the ICR is one 64-bit MSR, and writing it sends (SDM Vol. 3A 11.12.9). */
        wrmsr_safe(MSR_IA32_X2APIC_ICR, ((uint64_t)apic_id << IA32_X2APIC_ICR_DEST_SHIFT) | lo);
        return;
    }
    apic_write(&K.apic, LAPIC_ICR_HI, apic_id << 24);
    apic_write(&K.apic, LAPIC_ICR_LO, lo);
}

static const char *start_ap(uint32_t index, uint64_t page)
{
    struct smp_cpu *c = &cpus[index];
    struct ap_boot *ab = &boots[index];
    uint64_t mem;
    size_t need = ALIGN_UP(sizeof(struct cpu_tables), 4096) + AP_STACK_BYTES;
    if (pmm_alloc_tagged(K.pmm, need, 4096, c->node, "ap stacks", &mem) != 0 &&
        pmm_alloc_tagged(K.pmm, need, 4096, -1, "ap stacks", &mem) != 0)
        return "no memory for its stack and tables";
    memset((void *)(uintptr_t)mem, 0, need);
    ab->index = index;
    ab->alive = 0;
    ab->tables = (struct cpu_tables *)(uintptr_t)mem;
    ab->tables->apic_id = c->apic_id;
    ab->tables->index = index;

    uint8_t *t = (uint8_t *)(uintptr_t)page;
#define PATCH(sym, val) (*(volatile uint64_t *)(t + ((const char *)(sym) - trampoline_start)) = (val))
    PATCH(tr_stack, mem + need);
    PATCH(tr_arg, (uint64_t)(uintptr_t)ab);
#undef PATCH
    __atomic_thread_fence(__ATOMIC_SEQ_CST);

    /* INIT, 10 ms, SIPI, 200 us, SIPI (the MP spec's sequence; the second SIPI is ignored by a CPU
     * that already started). */
    send_ipi(c->apic_id, ICR_INIT | ICR_LEVEL_ASSERT);
    if (!icr_wait())
        return "INIT IPI not delivered";
    tsc_delay_us(10000);
    uint32_t vector = (uint32_t)(page >> 12);
    for (int i = 0; i < 2 && !__atomic_load_n(&ab->alive, __ATOMIC_ACQUIRE); i++) {
        send_ipi(c->apic_id, ICR_STARTUP | vector);
        if (!icr_wait())
            return "SIPI not delivered";
        tsc_delay_us(200);
    }
    uint64_t end = rdtsc_ordered() + AP_ALIVE_TIMEOUT_US * time_tsc_hz() / 1000000ULL;
    while (!__atomic_load_n(&ab->alive, __ATOMIC_ACQUIRE)) {
        if (rdtsc_ordered() > end)
            return "did not answer INIT-SIPI-SIPI within 1 s";
        cpu_pause();
    }
    return NULL;
}

uint32_t smp_init(void)
{
    n_total = 0;
    uint32_t bsp = K.apic.bsp_id;
    cpus[n_total++] = (struct smp_cpu){.index = 0, .apic_id = bsp, .online = true};
    for (uint32_t i = 0; K.acpi_ok && i < K.acpi->cpu_count && n_total < SMP_MAX_CPUS; i++) {
        const struct acpi_cpu *a = &K.acpi->cpus[i];
        if (!a->enabled || a->apic_id == bsp)
            continue;
        cpus[n_total] = (struct smp_cpu){.index = n_total, .apic_id = a->apic_id, .node = a->node < 0 ? 0 : a->node};
        n_total++;
    }
    for (uint32_t i = 0; i < n_total; i++) {
        cpu_topology_split(&K.cpu, cpus[i].apic_id, &cpus[i].package, &cpus[i].core, &cpus[i].smt);
        if (K.acpi_ok) {
            int node = acpi_node_of_apic(K.acpi, cpus[i].apic_id);
            cpus[i].node = node < 0 ? 0 : node;
        }
    }

    uint64_t page = K.bi->trampoline;
    const char *why_not = NULL;
    if (!K.apic.present)
        why_not = "no local APIC";
    else if (!page)
        why_not = "no trampoline page below 1 MiB";
    else if (!time_tsc_hz())
        why_not = "TSC not calibrated: cannot time the INIT-SIPI-SIPI sequence";
    if (!why_not) {
        size_t len = (size_t)(trampoline_end - trampoline_start);
        uint8_t *t = (uint8_t *)(uintptr_t)page;
        memcpy(t, trampoline_start, len);
        memcpy(t + 4096, (const void *)(uintptr_t)(read_cr3() & ~0xFFFULL), 4096); /* PML4 below 1 MiB */
#define OFF(sym) ((const char *)(sym) - trampoline_start)
        *(volatile uint32_t *)(t + OFF(tr_gdtr_base)) = (uint32_t)(page + tr_gdt_off);
        *(volatile uint32_t *)(t + OFF(tr_farptr_off)) = (uint32_t)(page + tr_long_off);
        *(volatile uint64_t *)(t + OFF(tr_cr3_low)) = page + 4096;
        *(volatile uint64_t *)(t + OFF(tr_cr3)) = read_cr3();
        *(volatile uint64_t *)(t + OFF(tr_entry)) = (uint64_t)(uintptr_t)ap_entry;
#undef OFF
    }
    uint32_t limit = K.cfg.max_cpus ? K.cfg.max_cpus : SMP_MAX_CPUS;
    for (uint32_t i = 1; i < n_total; i++) {
        const char *fail = why_not ? why_not : i >= limit ? "beyond max_cpus" : start_ap(i, page);
        cpus[i].online = fail == NULL;
        cpus[i].fail_reason = fail;
    }
    rebuild_online();
    return n_online;
}

int smp_call(uint32_t index, smp_fn fn, void *arg)
{
    if (index == 0 || index >= n_total || !cpus[index].online)
        return -1;
    struct mailbox *m = &mbox[index];
    if (m->req != m->done)
        return -1;
    m->fn = fn;
    m->arg = arg;
    __atomic_store_n(&m->req, m->req + 1, __ATOMIC_SEQ_CST);
    if (__atomic_load_n(&m->sleeping, __ATOMIC_SEQ_CST)) { /* fixed delivery, physical destination */
        send_ipi(cpus[index].apic_id, CPU_WAKE_VECTOR);
        icr_wait();
    }
    return 0;
}

int smp_wait(uint32_t index, uint64_t timeout_us)
{
    if (index == 0 || index >= n_total)
        return 0;
    struct mailbox *m = &mbox[index];
    uint64_t end = rdtsc_ordered() + timeout_us * time_tsc_hz() / 1000000ULL;
    while (__atomic_load_n(&m->done, __ATOMIC_ACQUIRE) != m->req) {
        if (rdtsc_ordered() > end) {
            cpus[index].online = false;
            cpus[index].fail_reason = "job timed out";
            rebuild_online();
            struct json *j = rec_begin("smp_timeout");
            json_kv_uint(j, "cpu", index);
            json_kv_uint(j, "apic_id", cpus[index].apic_id);
            json_kv_uint(j, "timeout_us", timeout_us);
            json_kv_str(j, "action", "CPU skipped for the rest of the run");
            rec_end();
            kprintf("smp: CPU %u (APIC %u) did not finish its job within %lu us; skipped from now on\n", index,
                    cpus[index].apic_id, timeout_us);
            return -1;
        }
        cpu_pause();
    }
    return 0;
}

int smp_send_nmi(uint32_t index)
{
    if (index >= n_total || (index && !cpus[index].online))
        return -1;
    uint32_t id = index ? cpus[index].apic_id : K.apic.bsp_id;
    if (!K.apic.present)
        return -1;
    send_ipi(id, ICR_NMI);
    return icr_wait() ? 0 : -1;
}

int smp_run_on(uint32_t index, smp_fn fn, void *arg, uint64_t timeout_us)
{
    if (index == 0) {
        fn(arg);
        return 0;
    }
    if (smp_call(index, fn, arg) != 0)
        return -1;
    return smp_wait(index, timeout_us);
}
