/* msr.c - #GP-safe MSR access through the exception fixup table, and the msr_trace queue and records. */
#include "kernel/msr.h"
#include "kernel/extable.h"
#include "kernel/out.h"
#include "kernel/smp.h"

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

/* ---- msr_trace ------------------------------------------------------------------------------ */

#define TRACE_QUEUE 4096

enum trace_op { TRACE_READ, TRACE_WRITE };

struct trace_ent {
    uint64_t seq;
    uint64_t val;
    uint32_t msr;
    uint16_t cpu;
    uint8_t op, ok;
};

static struct trace_ent tq[TRACE_QUEUE];
static volatile uint32_t tq_head, tq_tail; /* head: next to emit; tail: next free */
static volatile int tq_lock;
static bool tracing, quiet;
static uint64_t trace_seq;
static uint64_t dropped, dropped_unreported;

static bool lock_try(void)
{
    for (int i = 0; i < 100000; i++) {
        if (!__atomic_test_and_set(&tq_lock, __ATOMIC_ACQUIRE))
            return true;
        __asm__ volatile("pause");
    }
    return false;
}

static void lock_release(void) { __atomic_clear(&tq_lock, __ATOMIC_RELEASE); }

void msr_trace_start(void) { tracing = true; }
void msr_trace_quiet(bool q) { quiet = q; }
uint64_t msr_trace_dropped(void) { return dropped; }

static bool stream_open_for_records(void)
{
    const struct record_stream *rs = out_records();
    return rs->count > 0 && !rs->open && !rs->ended;
}

static void emit_queued(void)
{
    while (tq_head != tq_tail) {
        const struct trace_ent *e = &tq[tq_head % TRACE_QUEUE];
        struct json *j = rec_begin("msr_trace");
        json_kv_uint(j, "seq", e->seq);
        json_kv_uint(j, "cpu", e->cpu);
        json_kv_str(j, "op", e->op == TRACE_WRITE ? "write" : "read");
        json_kv_hex(j, "msr", e->msr);
        json_kv_hex(j, "value", e->val);
        json_kv_bool(j, "safe", true);
        json_kv_bool(j, "ok", e->ok);
        if (dropped_unreported) {
            json_kv_uint(j, "dropped_before", dropped_unreported);
            dropped_unreported = 0;
        }
        rec_end();
        tq_head = tq_head + 1;
    }
}

/* After every traced access, on any CPU - also right after the write that enables the counters, so
 * nothing here may be counted differently from run to run: smp_current_index reads the CPU's own
 * descriptor tables (no CPUID, no APIC: an x2APIC read would itself be a traced MSR access). */
static void trace(enum trace_op op, uint32_t msr, uint64_t val, bool ok)
{
    uint32_t cpu = smp_current_index();
    if (!lock_try()) {
        dropped++;
        return;
    }
    if (tq_tail - tq_head >= TRACE_QUEUE) {
        dropped++;
        dropped_unreported++;
        trace_seq++;
    } else {
        struct trace_ent *e = &tq[tq_tail % TRACE_QUEUE];
        e->seq = trace_seq++;
        e->cpu = (uint16_t)cpu;
        e->op = (uint8_t)op;
        e->msr = msr;
        e->val = val;
        e->ok = ok;
        tq_tail = tq_tail + 1;
    }
    if (cpu == 0 && !quiet && stream_open_for_records())
        emit_queued();
    lock_release();
}

void msr_trace_flush(void)
{
    if (!tracing)
        return;
    if (smp_current_index() != 0 || !lock_try())
        return;
    if (stream_open_for_records())
        emit_queued();
    lock_release();
}

/* ---- the safe, traced accessors --------------------------------------------------------------- */

int rdmsr_safe(uint32_t msr, uint64_t *val)
{
    int r = rdmsr_fixup(msr, val);
    if (tracing)
        trace(TRACE_READ, msr, *val, r == MSR_OK);
    return r;
}

int wrmsr_safe(uint32_t msr, uint64_t val)
{
    int r = wrmsr_fixup(msr, val);
    if (tracing)
        trace(TRACE_WRITE, msr, val, r == MSR_OK);
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
