/* msr.c - #GP-safe MSR access through the exception fixup table, and the trace hook. */
#include "kernel/msr.h"
#include "kernel/extable.h"
#include "kernel/cpu.h"

static msr_trace_fn trace_hook;

void msr_set_trace(msr_trace_fn fn) { trace_hook = fn; }

/* `fault` lives in %rdi: the #GP handler writes vector+1 there when it takes the fixup. */
static int rdmsr_fixup(uint32_t msr, uint64_t *val)
{
    uint32_t lo = 0, hi = 0;
    uint64_t fault = 0;
    __asm__ volatile("1: rdmsr\n2:\n\t" EXTABLE_ENTRY(1b, 2b) : "=a"(lo), "=d"(hi), "+D"(fault) : "c"(msr) : "memory");
    if (fault) {
        *val = 0;
        return MSR_EFAULT;
    }
    *val = ((uint64_t)hi << 32) | lo;
    return MSR_OK;
}

static int wrmsr_fixup(uint32_t msr, uint64_t v)
{
    uint64_t fault = 0;
    __asm__ volatile("1: wrmsr\n2:\n\t" EXTABLE_ENTRY(1b, 2b)
                     : "+D"(fault)
                     : "c"(msr), "a"((uint32_t)v), "d"((uint32_t)(v >> 32))
                     : "memory");
    return fault ? MSR_EFAULT : MSR_OK;
}

int rdmsr_safe(uint32_t msr, uint64_t *val)
{
    int r = rdmsr_fixup(msr, val);
    if (trace_hook)
        trace_hook(MSR_OP_READ, msr, *val, true, r == MSR_OK);
    return r;
}

int wrmsr_safe(uint32_t msr, uint64_t val)
{
    int r = wrmsr_fixup(msr, val);
    if (trace_hook)
        trace_hook(MSR_OP_WRITE, msr, val, true, r == MSR_OK);
    return r;
}

/* The traced accessors are safe too: a PMU model table that names an MSR the CPU lacks must produce a
 * reported failure, never a crash. `safe` in the trace says whether the caller asked for it. */
int msr_read(uint32_t msr, uint64_t *val)
{
    int r = rdmsr_fixup(msr, val);
    if (trace_hook)
        trace_hook(MSR_OP_READ, msr, *val, false, r == MSR_OK);
    return r;
}

int msr_write(uint32_t msr, uint64_t val)
{
    int r = wrmsr_fixup(msr, val);
    if (trace_hook)
        trace_hook(MSR_OP_WRITE, msr, val, false, r == MSR_OK);
    return r;
}

int xsetbv_safe(uint32_t idx, uint64_t val)
{
    uint64_t fault = 0;
    __asm__ volatile("1: xsetbv\n2:\n\t" EXTABLE_ENTRY(1b, 2b)
                     : "+D"(fault)
                     : "c"(idx), "a"((uint32_t)val), "d"((uint32_t)(val >> 32))
                     : "memory");
    return fault ? MSR_EFAULT : MSR_OK;
}

int read_u64_safe(uint64_t addr, uint64_t *val)
{
    uint64_t fault = 0, v = 0;
    __asm__ volatile("1: movq (%2), %1\n2:\n\t" EXTABLE_ENTRY(1b, 2b) : "+D"(fault), "+r"(v) : "r"(addr) : "memory");
    *val = fault ? 0 : v;
    return fault ? MSR_EFAULT : MSR_OK;
}
