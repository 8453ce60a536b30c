/* watchdog.h - a watchdog on another CPU for code that may not return (user snippets): an NMI ends the run with `error`. */
#ifndef PMB_WATCHDOG_H
#define PMB_WATCHDOG_H

#include "kernel/klib.h"

struct irq_frame;

/*
 * watchdog_arm: an AP (not the caller's SMT sibling when another one is free) spins until watchdog_disarm or
 * the deadline; at the deadline it sends the BSP an NMI, which arrives even with interrupts off, and
 * watchdog_nmi ends the run: an `error` record naming the guarded code (kernel/guard.h) and where it was, then
 * the end record with status "error". Only the BSP arms it. Returns 0, or -1 with why (no second CPU online,
 * no local APIC, the AP busy).
 */
int watchdog_arm(uint32_t timeout_ms, char *why, size_t whylen);
void watchdog_disarm(void);
/* From the exception path on vector 2: does not return when the watchdog fired; false for any other NMI. */
bool watchdog_nmi(struct irq_frame *f);

#endif
