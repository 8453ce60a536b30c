/* main.c - kernel_main: take over the machine step by step, run app_main (app/), stop. */
#include "kernel/kernel.h"
#include "kernel/cpu.h"
#include "kernel/fmt.h"
#include "kernel/io.h"
#include "kernel/kalloc.h"
#include "kernel/msr.h"
#include "kernel/out.h"
#include "kernel/paging.h"
#include "kernel/panic.h"
#include "kernel/power.h"
#include "kernel/smp.h"
#include "kernel/turbo.h"

struct kernel K;

void kernel_cpuid(uint32_t leaf, uint32_t subleaf, uint32_t r[4], void *ctx)
{
    (void)ctx;
    cpuid_raw(leaf, subleaf, r);
}

/* Firmware left an identity map and so do we: a physical address is its own pointer. */
static const void *acpi_map(uint64_t phys, uint64_t len, void *ctx)
{
    (void)ctx;
    if (phys == 0 || phys + len < phys || phys + len > (1ULL << 46))
        return NULL;
    return (const void *)(uintptr_t)phys;
}

static uint32_t current_apic_id(void) { return K.apic.present ? apic_current_id(&K.apic) : 0; }

static void serial_setup(int port, uint32_t baud, const char *source)
{
    if (port == 0) {
        memset(&K.serial, 0, sizeof(K.serial));
        K.serial_source = "none";
        return;
    }
    struct serial_port s;
    if (serial_init(&s, false, (uint64_t)port, 1, baud)) {
        K.serial = s;
        K.serial_source = source;
    }
}

/* SPCR names the console the firmware used; honour it unless the config chose a port. */
static void serial_from_spcr(void)
{
    const struct acpi_spcr *sp = &K.acpi->spcr;
    if (!sp->present || !sp->enabled || K.cfg.serial_port != -1)
        return;
    uint32_t baud = (K.cfg.set_mask & CFG_SET(CFG_KEY_BAUD)) || !sp->baud ? K.cfg.baud : sp->baud;
    if (sp->base.space_id == ACPI_GAS_IO) {
        if (sp->base.address == K.serial.base && baud == K.serial.baud && K.serial.present) {
            K.serial_source = "spcr"; /* already the port the firmware named */
            return;
        }
        serial_setup((int)sp->base.address, baud, "spcr");
    } else if (sp->base.space_id == ACPI_GAS_MEMORY) {
        struct serial_port s;
        uint32_t stride = sp->base.bit_width == 32 ? 4 : 1;
        if (serial_init(&s, true, sp->base.address, stride, baud)) {
            K.serial = s;
            K.serial_source = "spcr";
        }
    }
}

static void load_config(struct boot_info *bi)
{
    config_defaults(&K.cfg);
    if (bi->cfg_status == -2) {
        K.cfg_error = true;
        fmt_snprintf(K.cfg_err, sizeof(K.cfg_err), "pmubench.cfg: file larger than %u bytes",
                     (unsigned)sizeof(bi->cfg) - 1);
        return;
    }
    if (bi->cfg_status == -1) {
        K.cfg_error = true;
        fmt_snprintf(K.cfg_err, sizeof(K.cfg_err), "pmubench.cfg: firmware read error");
        return;
    }
    if (bi->cfg_status == 0 &&
        config_parse_file(&K.cfg, bi->cfg, bi->cfg_len, "pmubench.cfg", K.cfg_err, sizeof(K.cfg_err)) != 0) {
        K.cfg_error = true;
        return;
    }
    if (bi->args[0] &&
        config_parse_args(&K.cfg, bi->args, "load options", K.cfg_err, sizeof(K.cfg_err)) != 0)
        K.cfg_error = true;
}

static void choose_profile(void)
{
    if (K.cfg.profile != PROFILE_AUTO) {
        K.profile = K.cfg.profile;
        K.profile_why = "config";
    } else if (K.cpu.is_qemu_tcg) {
        K.profile = PROFILE_QUICK;
        K.profile_why = "auto: QEMU TCG (hypervisor CPUID leaf)";
    } else {
        K.profile = PROFILE_FULL;
        K.profile_why = K.cpu.hv_vendor[0] ? "auto: hardware-assisted VM" : "auto: bare metal";
    }
    /* Under TCG an instruction has no latency of its own, so no figure means anything: samples beyond the
     * minimum and convergence loops would buy nothing but time (docs/measurement.md "Minimal mode"), unless
     * samples=normal asks for them (to run the code that only full sampling reaches, such as the parallel chain
     * builder on the APs). */
    K.minimal = config_minimal_samples(K.cfg.samples, K.cpu.is_qemu_tcg, &K.minimal_why);
}

static void memory_setup(struct boot_info *bi)
{
    K.pmm = kalloc(sizeof(*K.pmm), 64);
    if (!K.pmm)
        panic("kernel scratch exhausted (pmm)");
    pmm_init(K.pmm);
    if (pmm_add_from_uefi(K.pmm, bi->mmap, bi->mmap_count) != 0)
        panic("memory map unusable");
    if (K.acpi_ok && K.acpi->srat_present) {
        struct pmm_node_range r[ACPI_MAX_MEM_RANGES];
        size_t n = 0;
        for (uint32_t i = 0; i < K.acpi->mem_count && n < ARRAY_SIZE(r); i++) {
            const struct acpi_mem_range *m = &K.acpi->mem[i];
            if (!m->enabled || m->node < 0)
                continue;
            r[n].base = m->base;
            r[n].len = m->length;
            r[n].node = m->node;
            n++;
        }
        pmm_set_nodes(K.pmm, r, n);
    }
    K.memory_bytes = pmm_total_bytes(K.pmm, -1);

    uint64_t top = pmm_ram_top(K.pmm);
    if (top < GiB(4))
        top = GiB(4); /* the MMIO hole (LAPIC, HPET, IOAPIC, flash) lives below 4 GiB */
    if (paging_init(top, K.cpu.feat.pdpe1gb) != 0)
        panic("cannot build page tables (scratch exhausted?)");
}

/* Devices the kernel touches are mapped uncached explicitly, whatever the MTRRs say. */
static void map_mmio(uint64_t addr)
{
    if (addr)
        paging_map(ALIGN_DOWN(addr, PAGE_4K), PAGE_4K, PAGE_4K, CACHE_UC);
}

static void power_from_acpi(void)
{
    struct power_info p;
    memset(&p, 0, sizeof(p));
    p.hypervisor = K.cpu.feat.hypervisor;
    p.runtime_services = K.bi->runtime_services;
    if (K.acpi_ok && K.acpi->fadt.present) {
        const struct acpi_fadt *f = &K.acpi->fadt;
        if (f->pm1a_cnt.space_id == ACPI_GAS_IO)
            p.pm1a_cnt = (uint32_t)f->pm1a_cnt.address;
        if (f->pm1b_cnt.space_id == ACPI_GAS_IO)
            p.pm1b_cnt = (uint32_t)f->pm1b_cnt.address;
        p.s5_valid = K.acpi->s5_valid;
        p.slp_typa = K.acpi->s5_slp_typ_a;
        p.slp_typb = K.acpi->s5_slp_typ_b;
        if (f->reset_supported) {
            p.reset_reg = f->reset_reg.address;
            p.reset_reg_io = f->reset_reg.space_id == ACPI_GAS_IO;
            p.reset_value = f->reset_value;
        }
    }
    enum finish_how how = K.cfg.on_finish == FINISH_REBOOT ? HOW_REBOOT
                          : K.cfg.on_finish == FINISH_HALT ? HOW_HALT
                                                           : HOW_SHUTDOWN;
    power_setup(&p, how);
}

static void calibrate_time(void)
{
    struct time_ref ref;
    memset(&ref, 0, sizeof(ref));
    if (K.acpi_ok && K.acpi->fadt.present && K.acpi->fadt.pm_timer.address) {
        ref.pm_present = true;
        ref.pm_io = K.acpi->fadt.pm_timer.space_id == ACPI_GAS_IO;
        ref.pm_addr = K.acpi->fadt.pm_timer.address;
        ref.pm_32bit = K.acpi->fadt.pm_timer_32bit;
        if (!ref.pm_io)
            map_mmio(ref.pm_addr);
    }
    if (K.acpi_ok && K.acpi->hpet.present && K.acpi->hpet.base.space_id == ACPI_GAS_MEMORY) {
        ref.hpet_base = K.acpi->hpet.base.address;
        map_mmio(ref.hpet_base);
    }
    bool quick = K.profile == PROFILE_QUICK;
    time_calibrate(&K.time, &ref, K.cpu.tsc_hz, K.cpu.tsc_hz_source, quick ? 5 : 9, quick ? 10 : 50);
    K.time.invariant_tsc = K.cpu.feat.invariant_tsc;
    time_core_ratio(&K.time, K.cpu.feat.aperfmperf);
}

static void crash_hang_job(void *arg)
{
    (void)arg;
    for (;;)
        cpu_pause();
}

static void crash_ud_job(void *arg)
{
    (void)arg;
    __asm__ volatile("ud2");
}

/* kernel.h: crash_test=KIND, between the self-tests and the benchmarks (app_main calls it). */
void kernel_crash_test(const char *kind)
{
    if (!kind[0])
        return;
    kprintf("crash_test=%s: faulting on purpose\n", kind);
    volatile uint64_t *p = (volatile uint64_t *)(uintptr_t)0x8000000000000000ULL; /* non-canonical */
    if (!strcmp(kind, "ud"))
        __asm__ volatile("ud2");
    if (!strcmp(kind, "pf")) {
        uint64_t null_page = 8;
        __asm__ volatile("" : "+r"(null_page)); /* hide the constant: the access must happen */
        p = (volatile uint64_t *)(uintptr_t)null_page;
    }
    if (!strcmp(kind, "nested"))
        panic_inject_nested_fault();
    if (!strcmp(kind, "ap_hang") || !strcmp(kind, "ap_ud")) {
        const struct smp_cpu *c = smp_online(smp_cpu_count() - 1);
        if (!c || c->index == 0) {
            kprintf("crash_test=%s needs an AP; none online\n", kind);
            return;
        }
        if (kind[3] == 'h') {
            /* A job that never returns: the wait must time out, report and carry on. */
            smp_run_on(c->index, crash_hang_job, NULL, 200000);
            kprintf("crash_test=ap_hang: run continues with %u CPU(s)\n", smp_cpu_count());
            return;
        }
        smp_run_on(c->index, crash_ud_job, NULL, SMP_DEFAULT_TIMEOUT_US);
        return;
    }
    (void)*p;
}

static NORETURN void finish(enum run_status s)
{
    kprintf("pmubench: run %s after %.3f s\n", run_status_name(s),
            K.time.tsc_hz ? (double)(rdtsc_raw() - K.start_tsc) / (double)K.time.tsc_hz : 0.0);
    out_finish(run_status_name(s));
    machine_finish(s);
}

void kernel_main(struct boot_info *bi)
{
    cli();
    K.bi = bi;
    K.start_tsc = bi->boot_tsc;
    kalloc_init(bi->scratch_base, bi->scratch_size);

    /* Output first, so that anything going wrong from here on is reported. */
    serial_setup(0x3F8, 115200, "default");
    out_init(&K.serial);
    idt_init();
    struct cpu_tables *bsp = kalloc(sizeof(*bsp), 64);
    if (!bsp) {
        kprintf("pmubench: kernel scratch region too small\n");
        machine_finish(RUN_ERROR);
    }
    cpu_tables_load(bsp);
    panic_set_cpu_id_fn(current_apic_id);
    if (bi->magic != BOOT_INFO_MAGIC)
        panic("boot_info magic mismatch");

    load_config(bi);
    if (!K.cfg_error && K.cfg.serial_port != -1 &&
        ((uint64_t)K.cfg.serial_port != K.serial.base || K.cfg.baud != K.serial.baud))
        serial_setup(K.cfg.serial_port, K.cfg.baud, "config");

    cpuid_decode(&K.cpu, kernel_cpuid, NULL);
    power_setup(&(struct power_info){.hypervisor = K.cpu.feat.hypervisor}, HOW_SHUTDOWN);
    K.xcr0 = fpu_enable(K.cpu.feat.xsave, K.cpu.xcr0_supported, K.cpu.feat.avx, K.cpu.feat.avx512f);
    choose_profile();
    kprintf("\npmubench %s (%s): kernel running, %s boot stage done (%u ExitBootServices retries)\n",
            PMB_VERSION, PMB_GITREV, bi->firmware, bi->exit_retries);

    K.acpi = kalloc(sizeof(*K.acpi), 64);
    if (!K.acpi)
        panic("kernel scratch exhausted (acpi)");
    uint64_t rsdp = bi->rsdp ? bi->rsdp : bi->rsdp_v1;
    K.acpi_ok = rsdp && acpi_parse(K.acpi, rsdp, acpi_map, NULL) == ACPI_OK;
    if (!K.cfg_error)
        serial_from_spcr();
    out_init(&K.serial);
    power_from_acpi();

    memory_setup(bi);
    apic_init(&K.apic, K.cpu.feat.apic, K.cpu.feat.x2apic);
    if (K.apic.present && !K.apic.x2apic)
        map_mmio(K.apic.base);
    if (K.serial.mmio)
        map_mmio(K.serial.base);
    K.cpus_madt = K.acpi_ok ? K.acpi->cpus_enabled : 0;

    turbo_apply(&K.cfg, 0); /* turbo=off before the clocks are measured; the APs do the same at their entry */
    calibrate_time();
    if (K.cfg_error) {
        K.cpus = 1;
        K.cpus_note = "config error: APs not started";
    } else {
        K.cpus = smp_init();
        K.cpus_note = "CPUs that answered INIT-SIPI-SIPI, the BSP included (see the smp record)";
    }
    finish(app_main());
}
