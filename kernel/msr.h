/* msr.h - the one MSR choke point: raw inline access for hot paths, #GP-safe access, tracing. */
#ifndef PMB_MSR_H
#define PMB_MSR_H

#include "kernel/klib.h"

/* Architectural MSRs the platform uses (SDM Vol. 4, Table 2-2). PMU MSRs live in pmu/msr_pmu.h. */
#define MSR_IA32_APIC_BASE 0x0000001B
#define MSR_IA32_APIC_BASE_BSP (1ULL << 8)
#define MSR_IA32_APIC_BASE_EXTD (1ULL << 10) /* x2APIC mode */
#define MSR_IA32_APIC_BASE_EN (1ULL << 11)
#define MSR_IA32_MPERF 0x000000E7
#define MSR_IA32_APERF 0x000000E8
#define MSR_IA32_PAT 0x00000277
#define MSR_PLATFORM_INFO 0x000000CE /* Nehalem+: bits 15:8 maximum non-turbo ratio */
#define MSR_IA32_PKRS 0x000006E1 /* bits 63:32 reserved: writing them #GPs (the fixup self-test) */
#define MSR_IA32_EFER 0xC0000080

/* Result of a safe access. */
#define MSR_OK 0
#define MSR_EFAULT (-1)

static ALWAYS_INLINE uint64_t rdmsr(uint32_t msr)
{
    uint32_t lo, hi;
    __asm__ volatile("rdmsr" : "=a"(lo), "=d"(hi) : "c"(msr));
    return ((uint64_t)hi << 32) | lo;
}

static ALWAYS_INLINE void wrmsr(uint32_t msr, uint64_t v)
{
    __asm__ volatile("wrmsr" : : "c"(msr), "a"((uint32_t)v), "d"((uint32_t)(v >> 32)) : "memory");
}

/* #GP-safe accesses: return MSR_OK, or MSR_EFAULT when the instruction faulted (value then 0). */
int rdmsr_safe(uint32_t msr, uint64_t *val);
int wrmsr_safe(uint32_t msr, uint64_t val);

/* Traced accesses for everything that programs hardware (PMU, PAT): they go through the trace hook.
 * msr_write returns the safe result so callers can report a refused write. */
int msr_read(uint32_t msr, uint64_t *val);
int msr_write(uint32_t msr, uint64_t val);

/* Trace hook: called after every msr_read/msr_write/rdmsr_safe/wrmsr_safe. */
enum msr_op { MSR_OP_READ, MSR_OP_WRITE };
typedef void (*msr_trace_fn)(enum msr_op op, uint32_t msr, uint64_t val, bool safe, bool ok);
void msr_set_trace(msr_trace_fn fn);

/* Other faulting instructions routed through the same fixup table (used for probes and self-tests). */
int xsetbv_safe(uint32_t idx, uint64_t val);
int read_u64_safe(uint64_t addr, uint64_t *val);

#endif
