/* isr.S - exception entry stubs for vectors 0-31 (one 16-byte stub per vector), the wake-up IPI and spurious
 * vectors, one common path.
 * Vectors that push an error code (SDM Vol. 3A Table 6-1): 8, 10-14, 17, 21, 29, 30. */
    .text
    .globl isr_stubs
    .hidden isr_stubs
    .balign 16
isr_stubs:
    .set vec, 0
    .rept 32
    .balign 16
    .if (vec == 8) || (vec >= 10 && vec <= 14) || (vec == 17) || (vec == 21) || (vec == 29) || (vec == 30)
    pushq $vec
    .else
    pushq $0
    pushq $vec
    .endif
    jmp isr_common
    .set vec, vec + 1
    .endr

/* Two interrupt vectors, the only ones the kernel ever enables (kernel/smp.c): the wake-up IPI that ends an
 * idle AP's HLT, and the local APIC's spurious vector. */
    .globl isr_wake
    .hidden isr_wake
    .balign 16
isr_wake:
    pushq $0
    pushq $0xf0
    jmp isr_common

    .globl isr_spurious
    .hidden isr_spurious
    .balign 16
isr_spurious:
    pushq $0
    pushq $0xff
    jmp isr_common

isr_common:
    cld
    pushq %rax
    pushq %rbx
    pushq %rcx
    pushq %rdx
    pushq %rsi
    pushq %rdi
    pushq %rbp
    pushq %r8
    pushq %r9
    pushq %r10
    pushq %r11
    pushq %r12
    pushq %r13
    pushq %r14
    pushq %r15
    movq %rsp, %rdi
    call exception_dispatch
    popq %r15
    popq %r14
    popq %r13
    popq %r12
    popq %r11
    popq %r10
    popq %r9
    popq %r8
    popq %rbp
    popq %rdi
    popq %rsi
    popq %rdx
    popq %rcx
    popq %rbx
    popq %rax
    addq $16, %rsp
    iretq

/* void switch_stack_call(uint64_t stack_top, void (*fn)(void *), void *arg) - never returns. */
    .globl switch_stack_call
    .hidden switch_stack_call
switch_stack_call:
    movq %rdi, %rsp
    xorl %ebp, %ebp
    movq %rdx, %rdi
    pushq $0
    jmp *%rsi

/* void call_on_stack(uint64_t stack_top, void (*fn)(void *), void *arg) - fn(arg) on the stack that ends at
 * stack_top (16-byte aligned), then back on the caller's stack. */
    .globl call_on_stack
    .hidden call_on_stack
call_on_stack:
    pushq %rbp
    movq %rsp, %rbp
    movq %rdi, %rsp
    movq %rdx, %rdi
    callq *%rsi
    movq %rbp, %rsp
    popq %rbp
    ret

    .section .note.GNU-stack, "", @progbits
