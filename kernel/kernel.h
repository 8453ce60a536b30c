/* kernel.h - the machine as the kernel found it: one struct filled once at start-up, read everywhere. */
#ifndef PMB_KERNEL_H
#define PMB_KERNEL_H

#include "kernel/acpi.h"
#include "kernel/apic.h"
#include "kernel/boot_info.h"
#include "kernel/config.h"
#include "kernel/cpuid.h"
#include "kernel/pmm.h"
#include "kernel/power.h"
#include "kernel/serial.h"
#include "kernel/time.h"

struct kernel {
    struct boot_info *bi;
    struct config cfg;
    bool cfg_error;
    char cfg_err[320];
    enum cfg_profile profile;   /* effective: never PROFILE_AUTO */
    const char *profile_why;
    bool minimal;               /* QEMU TCG: every benchmark takes its minimum samples (minimal_why) */
    const char *minimal_why;
    struct cpu_info cpu;
    struct acpi_info *acpi;     /* kalloc'd: large */
    bool acpi_ok;
    struct pmm *pmm;            /* kalloc'd: large */
    struct serial_port serial;
    const char *serial_source;  /* default | config | spcr | none */
    struct apic_state apic;
    struct time_info time;
    uint64_t xcr0;
    uint32_t cpus;              /* CPUs that came up (BSP only until SMP) */
    uint32_t cpus_madt;         /* enabled CPUs the MADT lists */
    const char *cpus_note;
    uint64_t memory_bytes;      /* usable RAM (pmm) */
    uint64_t start_tsc;
};

extern struct kernel K;

/* CPUID through the real instruction (a cpuid_fn). */
void kernel_cpuid(uint32_t leaf, uint32_t subleaf, uint32_t r[4], void *ctx);

/* crash_test=KIND (K.cfg.crash_test; "" does nothing): fault on purpose (ud, pf, nested, ap_hang, ap_ud) so
 * that tests can check the crash report and the run's `crashed` end. */
void kernel_crash_test(const char *kind);

/*
 * The program the kernel runs, as a C runtime runs main: provided by the layer above (app/, the
 * composition root), never by kernel/. kernel_main calls it once the machine is taken over: on the BSP,
 * interrupts off, output, memory, paging, clocks, ACPI and the APs up, K filled and the config parsed
 * (K.cfg_error says whether it failed; nothing has been written about the run yet: app_main's first record
 * must be the `run` record, kernel/report.h). What it returns is how the run ended: kernel_main prints it,
 * writes the `end` record and powers off, reboots or halts as configured.
 */
enum run_status app_main(void);

#endif
