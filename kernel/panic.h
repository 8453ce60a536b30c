/* panic.h - crash reports: what faulted, where, with which registers, then the `crashed` end record. */
#ifndef PMB_PANIC_H
#define PMB_PANIC_H

#include "kernel/klib.h"

struct irq_frame;

void panic_exception(struct irq_frame *f) __attribute__((noreturn));
void panic(const char *fmt, ...) __attribute__((noreturn, format(printf, 1, 2)));
/* APIC id printed in crash reports (set once SMP knows who is who). */
void panic_set_cpu_id_fn(uint32_t (*fn)(void));
/* Test hook (crash_test=nested): the next crash report faults while reporting. */
void panic_inject_nested_fault(void);

#endif
