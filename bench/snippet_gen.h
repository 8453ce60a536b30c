/* snippet_gen.h - the harness around a user snippet as x86-64 machine code: saved registers, init, the unrolled copies, the loop (docs/snippets.md). */
#ifndef PMB_BENCH_SNIPPET_GEN_H
#define PMB_BENCH_SNIPPET_GEN_H

#include "kernel/klib.h"
#include "bench/snippet_cfg.h"

/*
 * The generated function, called as void fn(void *r14) (System V: the argument in RDI):
 *
 *   push rbx, rbp, r12, r13, r14, r15; sub rsp, 8     callee-saved registers; RSP 16-byte aligned
 *   stmxcsr [rsp]; fnstcw [rsp+4]                     the snippet may change MXCSR / the x87 control word
 *   mov r14, rdi                                      R14: the scratch buffer (nanoBench's convention)
 *   <init>                                            init= bytes, once per call
 *   mov r15d, loop                                    only when loop > 0: R15 counts the loop (nanoBench)
 *   nop padding                                       the first copy starts 64-byte aligned
 * top:
 *   <code> x copies
 *   dec r15; jnz top                                  only when loop > 0
 *   ldmxcsr [rsp]; fldcw [rsp+4]; cld                 restored; DF clear as the ABI requires
 *   add rsp, 8; pop r15, r14, r13, r12, rbp, rbx; ret
 *
 * So a snippet may change every general register but RSP (and R15 when loop > 0) and must leave RSP as it
 * found it. Bytes are position independent: the buffer may live anywhere executable.
 */

struct snippet_layout {
    size_t init_off;   /* offset of the init bytes in the buffer */
    size_t code_off;   /* offset of the first copy */
    size_t copies_len; /* bytes of all the copies (copies x code_len) */
    size_t len;        /* whole function */
};

/* Bytes snippet_gen needs for `copies` copies (an upper bound including the alignment padding). */
size_t snippet_gen_size(const struct snippet *s, uint32_t copies);
/* Writes the function with `copies` copies of s->code into buf (cap bytes, buf 64-byte aligned). Returns its
 * length, or 0 when it does not fit. lay (optional) gets the offsets. */
size_t snippet_gen(const struct snippet *s, uint32_t copies, uint8_t *buf, size_t cap, struct snippet_layout *lay);

/* Where an instruction address of a generated function lies: "init", "code" or "harness", and its offset in
 * that part (for "code": in the snippet, whichever copy it is; for "harness": in the function). */
const char *snippet_locate(const struct snippet *s, const struct snippet_layout *lay, size_t fn_off, size_t *off);

#endif
