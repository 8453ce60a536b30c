/* cpu.h - per-CPU descriptor tables (GDT, TSS with IST stacks, IDT), exception frames, FPU/SSE/AVX enable. */
#ifndef PMB_CPU_H
#define PMB_CPU_H

#include "kernel/klib.h"

#define GDT_KCODE64 0x08
#define GDT_KDATA 0x10
#define GDT_KCODE32 0x18
#define GDT_TSS 0x20
#define GDT_ENTRIES 7

#define IST_DF 1
#define IST_NMI 2
#define IST_MC 3
#define IST_STACK_BYTES 16384

/* Register image pushed by kernel/isr.S, lowest address first. */
struct irq_frame {
    uint64_t r15, r14, r13, r12, r11, r10, r9, r8, rbp, rdi, rsi, rdx, rcx, rbx, rax;
    uint64_t vector, error;
    uint64_t rip, cs, rflags, rsp, ss; /* pushed by the CPU */
};

struct tss64 {
    uint32_t reserved0;
    uint64_t rsp[3];
    uint64_t reserved1;
    uint64_t ist[7];
    uint64_t reserved2;
    uint16_t reserved3;
    uint16_t iomap_base;
} PACKED;

struct idt_entry {
    uint16_t off_lo, sel;
    uint8_t ist, type_attr;
    uint16_t off_mid;
    uint32_t off_hi, zero;
} PACKED;

/* Everything one CPU needs to own its descriptor tables. */
struct cpu_tables {
    uint64_t gdt[GDT_ENTRIES];
    struct tss64 tss;
    uint32_t apic_id;
    uint32_t index;
    uint8_t ist_stacks[3][IST_STACK_BYTES] __attribute__((aligned(16)));
};

/* The two interrupt vectors the IDT has besides the exceptions: the IPI that wakes an idle AP from HLT
 * (kernel/smp.c) and the local APIC's spurious-interrupt vector (SVR bits 7:0). */
#define CPU_WAKE_VECTOR 0xF0
#define CPU_SPURIOUS_VECTOR 0xFF

/* Load a GDT/TSS for this CPU and the shared IDT (built once by idt_init). */
void cpu_tables_load(struct cpu_tables *t);
void idt_init(void);

/* SSE/AVX: CR4.OSFXSR/OSXMMEXCPT always; OSXSAVE + XCR0 = x87|SSE|AVX|AVX-512 state as CPUID allows.
 * Returns the XCR0 value set (0 without XSAVE). */
uint64_t fpu_enable(bool xsave, uint64_t xcr0_supported, bool avx, bool avx512);

/* The C side of every exception: fixups first, then the crash report. */
void exception_dispatch(struct irq_frame *f);
const char *exception_name(unsigned vector);

#endif
