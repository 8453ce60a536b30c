/* panic.c - crash report over serial, then the end record with "status":"crashed", then stop as configured.
 * A fault while reporting gets a one-line note and goes straight to the stop; a third level just halts. */
#include "kernel/panic.h"
#include "kernel/cpu.h"
#include "kernel/fmt.h"
#include "kernel/guard.h"
#include "kernel/io.h"
#include "kernel/msr.h"
#include "kernel/out.h"
#include "kernel/power.h"

static volatile int depth;
static bool inject_nested;

void panic_inject_nested_fault(void) { inject_nested = true; }
static uint32_t (*cpu_id_fn)(void);

void panic_set_cpu_id_fn(uint32_t (*fn)(void)) { cpu_id_fn = fn; }

static void crash_record(const char *kind, const struct irq_frame *f, const char *msg)
{
    rec_abort(); /* a record being built when we faulted is dropped, not emitted half-way */
    struct json *j = rec_begin("crash");
    json_kv_str(j, "kind", kind);
    json_kv_uint(j, "cpu", cpu_id_fn ? cpu_id_fn() : 0);
    if (f) {
        json_kv_uint(j, "vector", f->vector);
        json_kv_str(j, "name", exception_name((unsigned)f->vector));
        json_kv_hex(j, "error_code", f->error);
        json_kv_hex(j, "rip", f->rip);
        json_kv_hex(j, "rsp", f->rsp);
        json_kv_hex(j, "cr2", read_cr2());
        json_kv_hex(j, "cr3", read_cr3());
        guard_json(j, f->rip); /* a fault in user code (a snippet): whose, and where in it */
    }
    if (msg)
        json_kv_str(j, "message", msg);
    rec_end();
}

static NORETURN void stop(void)
{
    out_finish("crashed");
    machine_finish(RUN_CRASHED);
}

static void nested(void)
{
    int d = __atomic_add_fetch(&depth, 1, __ATOMIC_SEQ_CST);
    if (d == 2) {
        kprintf("\n!!! fault inside the crash report; stopping\n");
        stop();
    }
    if (d > 2) {
        /* Even stopping faulted: nothing is trustworthy any more. */
        for (;;)
            hlt();
    }
}

void panic_exception(struct irq_frame *f)
{
    nested();
    if (inject_nested) {
        /* crash_test=nested: fault inside the report to prove it cannot recurse. */
        volatile uint64_t *bad = (volatile uint64_t *)(uintptr_t)0x8000000000000000ULL;
        (void)*bad;
    }
    uint32_t cpu = cpu_id_fn ? cpu_id_fn() : 0;
    kprintf("\n!!! CPU exception %lu (%s) on APIC ID %u, error code 0x%lx\n", f->vector,
            exception_name((unsigned)f->vector), cpu, f->error);
    const char *part;
    size_t off;
    if (guard_locate(f->rip, &part, &off))
        kprintf("!!! in %s '%s', %s at offset %zu\n", guard_current()->what, guard_current()->name, part, off);
    kprintf("RIP %016lx  CS %04lx  RFLAGS %016lx\n", f->rip, f->cs, f->rflags);
    kprintf("RSP %016lx  SS %04lx  CR2 %016lx  CR3 %016lx\n", f->rsp, f->ss, read_cr2(), read_cr3());
    kprintf("RAX %016lx  RBX %016lx  RCX %016lx  RDX %016lx\n", f->rax, f->rbx, f->rcx, f->rdx);
    kprintf("RSI %016lx  RDI %016lx  RBP %016lx  R8  %016lx\n", f->rsi, f->rdi, f->rbp, f->r8);
    kprintf("R9  %016lx  R10 %016lx  R11 %016lx  R12 %016lx\n", f->r9, f->r10, f->r11, f->r12);
    kprintf("R13 %016lx  R14 %016lx  R15 %016lx\n", f->r13, f->r14, f->r15);
    kprintf("stack:");
    for (int i = 0; i < 16; i++) {
        uint64_t v;
        if (read_u64_safe(f->rsp + 8 * (uint64_t)i, &v) != MSR_OK) {
            kprintf(" <unreadable>");
            break;
        }
        kprintf("%s%016lx", i % 4 == 0 ? "\n  " : " ", v);
    }
    kprintf("\n");
    crash_record("exception", f, NULL);
    stop();
}

void panic(const char *fmt, ...)
{
    char msg[256];
    va_list ap;
    nested();
    va_start(ap, fmt);
    fmt_vsnprintf(msg, sizeof(msg), fmt, ap);
    va_end(ap);
    kprintf("\n!!! panic: %s\n", msg);
    crash_record("panic", NULL, msg);
    stop();
}
