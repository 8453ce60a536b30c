/* trampoline.S - AP start-up code, copied by kernel/smp.c to the page boot/ reserved below 1 MiB.
 *
 * A SIPI starts the AP in real mode at CS:IP = (page >> 4):0. It goes straight to long mode (PAE,
 * CR3 = the PML4 copy below 4 GiB, EFER.LME, then CR0.PE|PG together and a far jump into a 64-bit
 * code segment), then switches to the kernel's own CR3 and jumps to ap_entry(arg) on its own stack.
 * Everything is addressed relative to the blob (real mode: DS = CS; long mode: RIP-relative), so the
 * blob runs wherever it is copied. The BSP patches the data fields (tr_*) before each SIPI. */
#include "kernel/msr.h"

    .section .rodata
    .balign 16
    .globl trampoline_start, trampoline_end
    .hidden trampoline_start, trampoline_end
    .globl tr_gdtr_base, tr_farptr_off, tr_cr3_low, tr_cr3, tr_stack, tr_entry, tr_arg, tr_alive
    .hidden tr_gdtr_base, tr_farptr_off, tr_cr3_low, tr_cr3, tr_stack, tr_entry, tr_arg, tr_alive

    .code16
trampoline_start:
    cli
    cld
    movw %cs, %ax
    movw %ax, %ds
    lgdtl (tr_gdtr - trampoline_start)
    movl $0x620, %eax                     /* CR4.PAE | OSFXSR | OSXMMEXCPT: compiled C may use SSE */
    movl %eax, %cr4
    movl (tr_cr3_low - trampoline_start), %eax
    movl %eax, %cr3
    movl $MSR_IA32_EFER, %ecx
    rdmsr
    orl $IA32_EFER_LME, %eax
    wrmsr
    movl %cr0, %eax
    andl $0x9FFFFFF3, %eax                /* clear CD, NW (INIT leaves caches off), EM, TS */
    orl $0x80000023, %eax                 /* PG | NE | MP | PE */
    movl %eax, %cr0
    ljmpl *(tr_farptr - trampoline_start)

    .code64
    .balign 16
tr_long:
    movw $0x10, %ax
    movw %ax, %ds
    movw %ax, %es
    movw %ax, %ss
    movq tr_cr3(%rip), %rax
    movq %rax, %cr3
    movq tr_stack(%rip), %rsp
    movq tr_arg(%rip), %rdi
    movq tr_entry(%rip), %rax
    pushq $0
    jmpq *%rax

    .balign 16
tr_gdt:
    .quad 0
    .quad 0x00AF9A000000FFFF              /* 0x08: 64-bit code */
    .quad 0x00CF92000000FFFF              /* 0x10: data */
tr_gdtr:
    .word 23
tr_gdtr_base:
    .long 0                               /* patched: page + (tr_gdt - trampoline_start) */
tr_farptr:
tr_farptr_off:
    .long 0                               /* patched: page + (tr_long - trampoline_start) */
    .word 0x08
    .balign 8
tr_cr3_low:
    .quad 0                               /* PML4 copy below 1 MiB */
tr_cr3:
    .quad 0                               /* the kernel's PML4 */
tr_stack:
    .quad 0
tr_entry:
    .quad 0
tr_arg:
    .quad 0
tr_alive:
    .quad 0
trampoline_end:

    .globl tr_gdt_off, tr_long_off
    .hidden tr_gdt_off, tr_long_off
    .balign 8
tr_gdt_off:
    .quad tr_gdt - trampoline_start
tr_long_off:
    .quad tr_long - trampoline_start

    .section .note.GNU-stack, "", @progbits
