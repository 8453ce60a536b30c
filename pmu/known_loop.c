/* known_loop.c - the self-test's loops of known length: exact instruction and branch counts per iteration. */
#include "pmu/known_loop.h"

/* 64-byte aligned so the loop sits in one fetch line whatever is linked around it; .hidden keeps
 * the references RIP-relative in the PIC image. */
__asm__(".text\n"
        ".balign 64\n"
        ".globl pmu_known_loop\n"
        ".hidden pmu_known_loop\n"
        ".type pmu_known_loop, @function\n"
        "pmu_known_loop:\n"
        "    mov %rdi, %rcx\n"
        "pmu_known_loop_head_label:\n"
        "    dec %rcx\n"
        "pmu_known_loop_branch_label:\n"
        "    jnz pmu_known_loop_head_label\n"
        "    ret\n"
        ".size pmu_known_loop, . - pmu_known_loop\n");

/* rax is caller-saved: the imul chain needs no save. The leaf is inside the symbol so that the call
 * is a near relative call within one 64-byte-aligned block. */
__asm__(".text\n"
        ".balign 64\n"
        ".globl pmu_known_branch_loop\n"
        ".hidden pmu_known_branch_loop\n"
        ".type pmu_known_branch_loop, @function\n"
        "pmu_known_branch_loop:\n"
        "    mov %rdi, %rcx\n"
        "    mov $3, %eax\n"
        "1:\n"
        "    call 2f\n"
        "    imul %rax, %rax\n"
        "    imul %rax, %rax\n"
        "    imul %rax, %rax\n"
        "    dec %rcx\n"
        "    jnz 1b\n"
        "    ret\n"
        "2:\n"
        "    ret\n"
        ".size pmu_known_branch_loop, . - pmu_known_branch_loop\n");

uint64_t pmu_known_loop_head(void)
{
    uint64_t a;
    __asm__("lea pmu_known_loop_head_label(%%rip), %0" : "=r"(a));
    return a;
}

uint64_t pmu_known_loop_branch(void)
{
    uint64_t a;
    __asm__("lea pmu_known_loop_branch_label(%%rip), %0" : "=r"(a));
    return a;
}
