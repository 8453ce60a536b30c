/* turbo.h - turbo (Intel Turbo Boost / AMD core performance boost) and the package C-state limit: read on every CPU, switched off on request (config turbo=off), reported. */
#ifndef PMB_TURBO_H
#define PMB_TURBO_H

#include "kernel/klib.h"
#include "kernel/config.h"
#include "kernel/json.h"

/*
 * Features come from CPUID, never from "rdmsr did not fault": QEMU TCG answers most MSRs with 0 and drops
 * writes, so a control MSR is only read where CPUID says the feature exists (and, for the model-specific
 * C-state MSR, only on the models listed in turbo.c and never under a hypervisor). Every access goes
 * through rdmsr_safe / wrmsr_safe, and every write is read back: what the record says is what the register
 * holds, not what was asked for.
 *
 *   Intel  available: CPUID.06H:EAX[1], or IA32_MISC_ENABLE[38] already set (setting it clears that CPUID
 *          bit). off: IA32_MISC_ENABLE[38] (meant for the BIOS: the write may #GP or be ignored) and
 *          IA32_PERF_CTL[32] (per logical CPU; no effect while HWP is enabled, IA32_PM_ENABLE[0]).
 *   AMD    available: CPUID 8000_0007H:EDX[9] CPB. off: HWCR[25] CpbDis (per core).
 *
 * The image never lets a CPU idle in a C-state while it measures: idle CPUs spin on PAUSE, none executes
 * HLT or MWAIT before the run is over. The package C-state limit is read for the record (it matters for a
 * hosted run or another OS on the same machine), not changed.
 */

enum turbo_state {
    TURBO_STATE_NOT_AVAILABLE, /* CPUID says there is no turbo to control */
    TURBO_STATE_ON,
    TURBO_STATE_OFF,
    TURBO_STATE_UNKNOWN,       /* available, but the control register could not be read */
};

#define TURBO_TEXT_MAX 160

/* One CPU's view (turbo_apply fills it on that CPU). */
struct turbo_cpu {
    bool applied;
    enum turbo_state before, after;
    bool write_faulted;        /* a requested write #GP'd */
    bool write_ignored;        /* written without a fault, read back unchanged */
};

struct turbo_info {
    /* Turbo, as the boot CPU saw it; the per-CPU states are counted in cpus_*. */
    bool available;
    enum cfg_turbo requested;
    enum turbo_state before, after;
    char how[TURBO_TEXT_MAX];    /* the bits read (and written), e.g. "IA32_MISC_ENABLE[38], IA32_PERF_CTL[32]" */
    char reason[TURBO_TEXT_MAX]; /* why not available, what could not be read or written; "" when nothing */
    int hwp;                     /* Intel HWP enabled (IA32_PM_ENABLE[0]): 1, 0, -1 not applicable / unread */
    uint32_t cpus_applied, cpus_on, cpus_off, cpus_unknown, cpus_failed; /* cpus_failed: a write that did not stick */

    /* Package C-state limit (boot CPU; package scope). */
    bool cst_available;          /* the limit was read */
    int cst_limit_raw;           /* the limit field, -1 when not read */
    const char *cst_limit;       /* decoded ("C6", "no limit", ...), NULL when the encoding is not known here */
    int cst_locked;              /* CFG Lock: 1, 0, -1 not read */
    char cst_how[TURBO_TEXT_MAX];
    char cst_reason[TURBO_TEXT_MAX];
    uint32_t mwait_substates;    /* CPUID.05H:EDX: MWAIT sub-states per C-state, 4 bits each (0: no MWAIT leaf) */
};

/* On the calling CPU: reads its turbo state and, with c->turbo == CFG_TURBO_OFF, switches turbo off and
 * reads it back. The boot CPU (cpu_index 0) calls it once CPUID is decoded, before the TSC calibration and
 * SMP bring-up (which starts a new record: every CPU's slot is cleared), and also reads the package C-state
 * limit; each AP calls it at its entry (kernel/smp.c). */
void turbo_apply(const struct config *c, uint32_t cpu_index);
const struct turbo_info *turbo_info(void);
const struct turbo_cpu *turbo_cpu(uint32_t cpu_index);
const char *turbo_state_name(enum turbo_state s); /* not_available | on | off | unknown */

/* Two keys into an open JSON object (the run record):
 *   "turbo":   {available, state, state_before, requested, how, reason, hwp, cpus: {applied, on, off,
 *               unknown, failed}}
 *   "cstates": {available, pkg_limit, pkg_limit_raw, locked, how, reason, mwait_substates, idle}
 * with null for what was not read and `reason` saying why. */
void turbo_json(struct json *j);
/* One human line, e.g. "turbo on (left), package C-state limit C6 (locked)". */
void turbo_line(char *buf, size_t cap);

#endif
