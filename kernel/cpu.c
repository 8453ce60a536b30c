/* cpu.c - GDT/TSS/IDT setup, FPU/SSE/AVX enable, exception dispatch. */
#include "kernel/cpu.h"
#include "kernel/apic.h"
#include "kernel/kernel.h"
#include "kernel/extable.h"
#include "kernel/watchdog.h"
#include "kernel/io.h"
#include "kernel/msr.h"
#include "kernel/panic.h"

extern char isr_stubs[], isr_wake[], isr_spurious[];

static struct idt_entry idt[256] __attribute__((aligned(16)));

static const char *const exc_names[32] = {
    "#DE divide error", "#DB debug", "NMI", "#BP breakpoint", "#OF overflow", "#BR bound range",
    "#UD invalid opcode", "#NM device not available", "#DF double fault", "coprocessor segment overrun",
    "#TS invalid TSS", "#NP segment not present", "#SS stack fault", "#GP general protection",
    "#PF page fault", "reserved 15", "#MF x87 floating point", "#AC alignment check", "#MC machine check",
    "#XM SIMD floating point", "#VE virtualization", "#CP control protection", "reserved 22",
    "reserved 23", "reserved 24", "reserved 25", "reserved 26", "reserved 27", "#HV hypervisor injection",
    "#VC VMM communication", "#SX security", "reserved 31",
};

const char *exception_name(unsigned vector) { return vector < 32 ? exc_names[vector] : "external interrupt"; }

/* Descriptor words (SDM Vol. 3A 3.4.5): G, L (64-bit code), D/B, P, DPL 0, S, type. */
#define SEG_CODE64 0x00AF9A000000FFFFULL
#define SEG_DATA 0x00CF92000000FFFFULL
#define SEG_CODE32 0x00CF9A000000FFFFULL

void cpu_tables_load(struct cpu_tables *t)
{
    struct {
        uint16_t limit;
        uint64_t base;
    } PACKED gdtr;
    uint64_t tss = (uint64_t)(uintptr_t)&t->tss;

    memset(&t->tss, 0, sizeof(t->tss));
    t->tss.iomap_base = sizeof(t->tss); /* no I/O bitmap */
    for (int i = 0; i < 3; i++)
        t->tss.ist[i] = (uint64_t)(uintptr_t)&t->ist_stacks[i][IST_STACK_BYTES];

    t->gdt[0] = 0;
    t->gdt[1] = SEG_CODE64;
    t->gdt[2] = SEG_DATA;
    t->gdt[3] = SEG_CODE32;
    /* 64-bit TSS descriptor, type 9 (available), spans two entries. */
    t->gdt[4] = (sizeof(t->tss) - 1) | ((tss & 0xFFFFFFULL) << 16) | (0x89ULL << 40) | (((tss >> 24) & 0xFF) << 56);
    t->gdt[5] = tss >> 32;
    t->gdt[6] = 0;

    gdtr.limit = sizeof(t->gdt) - 1;
    gdtr.base = (uint64_t)(uintptr_t)t->gdt;
    __asm__ volatile("lgdt %0\n\t"
                     "pushq %1\n\t"
                     "leaq 1f(%%rip), %%rax\n\t"
                     "pushq %%rax\n\t"
                     "lretq\n"
                     "1:\n\t"
                     "movl %2, %%eax\n\t"
                     "movl %%eax, %%ds\n\t"
                     "movl %%eax, %%es\n\t"
                     "movl %%eax, %%ss\n\t"
                     "xorl %%eax, %%eax\n\t"
                     "movl %%eax, %%fs\n\t"
                     "movl %%eax, %%gs\n\t"
                     "ltr %w3\n\t"
                     :
                     : "m"(gdtr), "i"(GDT_KCODE64), "i"(GDT_KDATA), "r"((uint16_t)GDT_TSS)
                     : "rax", "memory");

    struct {
        uint16_t limit;
        uint64_t base;
    } PACKED idtr = {sizeof(idt) - 1, (uint64_t)(uintptr_t)idt};
    __asm__ volatile("lidt %0" : : "m"(idtr));
}

static void idt_gate(unsigned v, const char *stub, uint8_t ist)
{
    uint64_t h = (uint64_t)(uintptr_t)stub;
    idt[v].off_lo = h & 0xFFFF;
    idt[v].sel = GDT_KCODE64;
    idt[v].ist = ist;
    idt[v].type_attr = 0x8E; /* present, DPL0, 64-bit interrupt gate: IF stays clear */
    idt[v].off_mid = (h >> 16) & 0xFFFF;
    idt[v].off_hi = h >> 32;
    idt[v].zero = 0;
}

void idt_init(void)
{
    for (unsigned v = 0; v < 32; v++)
        idt_gate(v, isr_stubs + 16 * v, v == 8 ? IST_DF : v == 2 ? IST_NMI : v == 18 ? IST_MC : 0);
    idt_gate(CPU_WAKE_VECTOR, isr_wake, 0);
    idt_gate(CPU_SPURIOUS_VECTOR, isr_spurious, 0);
}

/* XCR0 bits (SDM Vol. 1 13.3): x87, SSE, AVX, then opmask/ZMM_Hi256/Hi16_ZMM for AVX-512. */
#define XCR0_X87 (1ULL << 0)
#define XCR0_SSE (1ULL << 1)
#define XCR0_AVX (1ULL << 2)
#define XCR0_AVX512 (7ULL << 5)

uint64_t fpu_enable(bool xsave, uint64_t xcr0_supported, bool avx, bool avx512)
{
    uint64_t cr0 = read_cr0();
    cr0 &= ~(CR0_EM | CR0_TS);
    cr0 |= CR0_MP | CR0_NE;
    write_cr0(cr0);
    uint64_t cr4 = read_cr4() | CR4_OSFXSR | CR4_OSXMMEXCPT | CR4_PCE;
    if (xsave)
        cr4 |= CR4_OSXSAVE;
    write_cr4(cr4);
    __asm__ volatile("fninit");
    uint32_t mxcsr = 0x1F80; /* all SIMD exceptions masked, round to nearest */
    __asm__ volatile("ldmxcsr %0" : : "m"(mxcsr));
    if (!xsave)
        return 0;
    uint64_t x = XCR0_X87 | XCR0_SSE;
    if (avx && (xcr0_supported & XCR0_AVX))
        x |= XCR0_AVX;
    if (avx512 && (x & XCR0_AVX) && (xcr0_supported & XCR0_AVX512) == XCR0_AVX512)
        x |= XCR0_AVX512;
    if (xsetbv_safe(0, x) != 0)
        return xgetbv(0);
    return x;
}

void exception_dispatch(struct irq_frame *f)
{
    if (f->vector == CPU_WAKE_VECTOR) { /* an idle AP's HLT is over (kernel/smp.c): nothing else to do */
        apic_write(&K.apic, LAPIC_EOI, 0);
        return;
    }
    if (f->vector == CPU_SPURIOUS_VECTOR) /* SDM Vol. 3A 11.9: no EOI for a spurious interrupt */
        return;
    if (extable_fixup(f))
        return;
    if (f->vector == 2)
        watchdog_nmi(f); /* the snippet watchdog's NMI does not return; any other NMI is reported below */
    panic_exception(f);
}
