/* smp.h - application processors: INIT-SIPI-SIPI bring-up from the MADT and a per-CPU job mailbox. */
#ifndef PMB_SMP_H
#define PMB_SMP_H

#include "kernel/klib.h"

#define SMP_MAX_CPUS 256
#define SMP_DEFAULT_TIMEOUT_US 10000000ULL /* 10 s for one job */

struct smp_cpu {
    uint32_t index;      /* 0 = BSP, then MADT order */
    uint32_t apic_id;
    int node;            /* NUMA node from SRAT (0 without SRAT) */
    uint32_t package, core, smt;
    bool online;
    const char *fail_reason; /* why it is not online (NULL when online) */
};

typedef void (*smp_fn)(void *arg);

/* Brings up every enabled MADT CPU (up to config max_cpus), emits an `smp` record. Returns CPUs online. */
uint32_t smp_init(void);
uint32_t smp_cpu_count(void);               /* online CPUs, BSP included */
uint32_t smp_cpu_total(void);               /* CPUs listed (online or not) */
const struct smp_cpu *smp_cpu(uint32_t index); /* index < smp_cpu_total() */
/* The i-th online CPU (0 = BSP), or NULL. */
const struct smp_cpu *smp_online(uint32_t i);
/* Index of the calling CPU (0 = BSP), read from its descriptor tables (SGDT): no MSR access, no CPUID. */
uint32_t smp_current_index(void);
/* Start fn(arg) on CPU `index` (an AP) without waiting. 0, or -1 when offline/busy. */
int smp_call(uint32_t index, smp_fn fn, void *arg);
/* Wait for CPU `index`'s job. 0 when done; -1 on timeout: the CPU is then marked offline for the rest
 * of the run and an `smp_timeout` record says so. */
int smp_wait(uint32_t index, uint64_t timeout_us);
/* Sends an NMI to CPU `index` (0: the BSP): delivered even with interrupts off (the snippet watchdog,
 * kernel/watchdog.h). 0, or -1 without a local APIC or when the IPI was not accepted. */
int smp_send_nmi(uint32_t index);
/* smp_call + smp_wait; index 0 (the BSP) runs fn directly. */
int smp_run_on(uint32_t index, smp_fn fn, void *arg, uint64_t timeout_us);

#endif
