/* snippet_gen.c - emits the harness of snippet_gen.h byte by byte (encodings from the SDM Vol. 2 opcode tables). */
#include "bench/snippet_gen.h"

static const uint8_t prologue[] = {
    0x53,                   /* push rbx */
    0x55,                   /* push rbp */
    0x41, 0x54,             /* push r12 */
    0x41, 0x55,             /* push r13 */
    0x41, 0x56,             /* push r14 */
    0x41, 0x57,             /* push r15 */
    0x48, 0x83, 0xec, 0x08, /* sub rsp, 8 */
    0x0f, 0xae, 0x1c, 0x24, /* stmxcsr [rsp] */
    0xd9, 0x7c, 0x24, 0x04, /* fnstcw [rsp+4] */
    0x49, 0x89, 0xfe,       /* mov r14, rdi */
};

static const uint8_t epilogue[] = {
    0x0f, 0xae, 0x14, 0x24, /* ldmxcsr [rsp] */
    0xd9, 0x6c, 0x24, 0x04, /* fldcw [rsp+4] */
    0xfc,                   /* cld */
    0x48, 0x83, 0xc4, 0x08, /* add rsp, 8 */
    0x41, 0x5f,             /* pop r15 */
    0x41, 0x5e,             /* pop r14 */
    0x41, 0x5d,             /* pop r13 */
    0x41, 0x5c,             /* pop r12 */
    0x5d,                   /* pop rbp */
    0x5b,                   /* pop rbx */
    0xc3,                   /* ret */
};

#define LOOP_INIT_LEN 6  /* mov r15d, imm32: 41 bf imm32 */
#define LOOP_BACK_LEN 9  /* dec r15: 49 ff cf; jnz rel32: 0f 85 rel32 */
#define ALIGN 64

size_t snippet_gen_size(const struct snippet *s, uint32_t copies)
{
    return sizeof(prologue) + s->init_len + LOOP_INIT_LEN + ALIGN + (size_t)copies * s->code_len + LOOP_BACK_LEN +
           sizeof(epilogue);
}

static void put32(uint8_t *p, uint32_t v)
{
    for (int i = 0; i < 4; i++)
        p[i] = (uint8_t)(v >> (8 * i));
}

size_t snippet_gen(const struct snippet *s, uint32_t copies, uint8_t *buf, size_t cap, struct snippet_layout *lay)
{
    if (!s || !buf || !s->code_len || !copies || snippet_gen_size(s, copies) > cap)
        return 0;
    size_t at = 0;
    memcpy(buf + at, prologue, sizeof(prologue));
    at += sizeof(prologue);
    size_t init_off = at;
    memcpy(buf + at, s->init, s->init_len);
    at += s->init_len;
    if (s->loop) {
        buf[at++] = 0x41; /* mov r15d, imm32 (zero-extends into R15) */
        buf[at++] = 0xbf;
        put32(buf + at, s->loop);
        at += 4;
    }
    /* Pad with NOPs (identical in both variants of n vs 2n: they cancel) so the first copy starts aligned. */
    while (((uintptr_t)(buf + at)) % ALIGN)
        buf[at++] = 0x90;
    size_t code_off = at;
    for (uint32_t c = 0; c < copies; c++) {
        memcpy(buf + at, s->code, s->code_len);
        at += s->code_len;
    }
    if (s->loop) {
        buf[at++] = 0x49; /* dec r15 */
        buf[at++] = 0xff;
        buf[at++] = 0xcf;
        buf[at++] = 0x0f; /* jnz rel32, relative to the end of the jump */
        buf[at++] = 0x85;
        put32(buf + at, (uint32_t)(int32_t)((int64_t)code_off - (int64_t)(at + 4)));
        at += 4;
    }
    memcpy(buf + at, epilogue, sizeof(epilogue));
    at += sizeof(epilogue);
    if (lay)
        *lay = (struct snippet_layout){init_off, code_off, (size_t)copies * s->code_len, at};
    return at;
}

const char *snippet_locate(const struct snippet *s, const struct snippet_layout *lay, size_t fn_off, size_t *off)
{
    if (s->init_len && fn_off >= lay->init_off && fn_off < lay->init_off + s->init_len) {
        *off = fn_off - lay->init_off;
        return "init";
    }
    if (s->code_len && fn_off >= lay->code_off && fn_off < lay->code_off + lay->copies_len) {
        *off = (fn_off - lay->code_off) % s->code_len;
        return "code";
    }
    *off = fn_off;
    return "harness";
}
