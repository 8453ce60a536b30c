/* watchdog.c - the snippet watchdog: a spinning AP, an NMI IPI to the BSP, and the `error` end it leads to. */
#include "kernel/watchdog.h"
#include "kernel/cpu.h"
#include "kernel/fmt.h"
#include "kernel/guard.h"
#include "kernel/io.h"
#include "kernel/kernel.h"
#include "kernel/out.h"
#include "kernel/power.h"
#include "kernel/smp.h"
#include "kernel/time.h"

static struct {
    volatile bool armed;
    volatile bool fired;
    uint64_t deadline; /* TSC */
    uint32_t cpu;      /* the AP spinning */
    uint32_t timeout_ms;
} wd;

static void wd_job(void *arg)
{
    (void)arg;
    while (__atomic_load_n(&wd.armed, __ATOMIC_ACQUIRE)) {
        if (rdtsc_ordered() >= wd.deadline) {
            __atomic_store_n(&wd.fired, true, __ATOMIC_RELEASE);
            smp_send_nmi(0);
            return;
        }
        cpu_pause();
    }
}

int watchdog_arm(uint32_t timeout_ms, char *why, size_t whylen)
{
    const struct smp_cpu *bsp = smp_online(0), *pick = NULL;
    for (uint32_t i = 1; i < smp_cpu_count(); i++) {
        const struct smp_cpu *c = smp_online(i);
        if (!c)
            continue;
        bool sibling = bsp && c->package == bsp->package && c->core == bsp->core;
        if (!pick || !sibling) {
            pick = c;
            if (!sibling)
                break;
        }
    }
    if (!pick || !K.apic.present) {
        fmt_snprintf(why, whylen, "no watchdog: %s", !K.apic.present ? "no local APIC to send the NMI"
                                                                     : "needs a second CPU online (max_cpus / SMP)");
        return -1;
    }
    wd.fired = false;
    wd.cpu = pick->index;
    wd.timeout_ms = timeout_ms;
    wd.deadline = rdtsc_ordered() + (uint64_t)timeout_ms * time_tsc_hz() / 1000;
    __atomic_store_n(&wd.armed, true, __ATOMIC_RELEASE);
    if (smp_call(wd.cpu, wd_job, NULL) != 0) {
        wd.armed = false;
        fmt_snprintf(why, whylen, "no watchdog: CPU %u is busy", wd.cpu);
        return -1;
    }
    return 0;
}

void watchdog_disarm(void)
{
    if (!__atomic_load_n(&wd.armed, __ATOMIC_ACQUIRE))
        return;
    __atomic_store_n(&wd.armed, false, __ATOMIC_RELEASE);
    smp_wait(wd.cpu, 1000000);
}

bool watchdog_nmi(struct irq_frame *f)
{
    if (!__atomic_load_n(&wd.fired, __ATOMIC_ACQUIRE))
        return false;
    const struct guard *g = guard_current();
    const char *what = g && g->what ? g->what : "guarded code";
    const char *name = g && g->name ? g->name : "";
    kprintf("\n!!! watchdog: %s '%s' did not return within %u ms (RIP %016lx); ending the run\n", what, name,
            wd.timeout_ms, f->rip);
    rec_abort();
    char action[64];
    fmt_snprintf(action, sizeof(action), "the watchdog on CPU %u stopped the run", wd.cpu);
    guard_timeout_json(rec_begin("error"), wd.timeout_ms, true, f->rip, action);
    rec_end();
    out_finish("error");
    machine_finish(RUN_ERROR);
}
