/* known_loop.c - the self-test's loop of known length: two instructions per iteration, one backward branch. */
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
