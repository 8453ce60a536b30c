/* test_snippet_gen.c - the generated harness: its bytes, its layout, and running it on the host (copies, loop, R14, saved registers, DF). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <string.h>
#include <sys/mman.h>

#include "bench/snippet_gen.h"

static uint8_t *exec_buf(size_t len)
{
    void *p = mmap(NULL, len, PROT_READ | PROT_WRITE | PROT_EXEC, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    assert_true(p != MAP_FAILED);
    return p;
}

static struct snippet make(const char *code, size_t n, uint32_t unroll, uint32_t loop)
{
    struct snippet s;
    memset(&s, 0, sizeof(s));
    memcpy(s.code, code, n);
    s.code_len = n;
    s.unroll = unroll;
    s.loop = loop;
    return s;
}

static void test_layout_bytes(void **state)
{
    (void)state;
    struct snippet s = make("\x48\x01\xc0", 3, 5, 0); /* add rax, rax */
    uint8_t *buf = exec_buf(4096);
    struct snippet_layout lay;
    size_t len = snippet_gen(&s, 5, buf, 4096, &lay);
    assert_true(len > 0 && len <= snippet_gen_size(&s, 5));
    assert_int_equal(lay.len, len);
    assert_int_equal(lay.code_off % 64, 0);              /* the first copy is 64-byte aligned */
    assert_int_equal(lay.copies_len, 15);
    for (int c = 0; c < 5; c++)
        assert_memory_equal(buf + lay.code_off + 3 * c, "\x48\x01\xc0", 3);
    assert_memory_equal(buf, "\x53\x55\x41\x54", 4);     /* push rbx; push rbp; push r12 */
    assert_int_equal(buf[len - 1], 0xc3);                /* ret */
    assert_int_equal(buf[lay.code_off + 15], 0x0f);      /* no loop: ldmxcsr follows the copies */
    /* with a loop: mov r15d, imm32 before, dec r15 / jnz back to the first copy after */
    s = make("\x90", 1, 4, 7);
    len = snippet_gen(&s, 4, buf, 4096, &lay);
    assert_true(len > 0);
    size_t after = lay.code_off + 4;
    assert_memory_equal(buf + after, "\x49\xff\xcf\x0f\x85", 5);
    int32_t rel;
    memcpy(&rel, buf + after + 5, 4);
    assert_int_equal((long)(after + 9) + rel, (long)lay.code_off);
    assert_memory_equal(buf + lay.init_off, "\x41\xbf\x07\x00\x00\x00", 6); /* no init: the loop count comes first */
    /* too small a buffer */
    assert_int_equal(snippet_gen(&s, 4, buf, 16, &lay), 0);
    assert_int_equal(snippet_gen(&s, 0, buf, 4096, &lay), 0);
    munmap(buf, 4096);
}

typedef void (*gen_fn)(void *);

static void test_runs_copies_and_loop(void **state)
{
    (void)state;
    struct snippet s = make("\x49\xff\x06", 3, 7, 3); /* inc qword [r14] */
    memcpy(s.init, "\x49\xc7\x06\x64\x00\x00\x00", 7);  /* init: mov qword [r14], 100 */
    s.init_len = 7;
    uint8_t *buf = exec_buf(1 << 16);
    struct snippet_layout lay;
    assert_true(snippet_gen(&s, 7, buf, 1 << 16, &lay) > 0);
    uint64_t scratch[2] = {0, 0};
    ((gen_fn)buf)(&scratch[0]);
    assert_int_equal(scratch[0], 100 + 7 * 3); /* init once per call, then unroll x loop copies */
    ((gen_fn)buf)(&scratch[0]);
    assert_int_equal(scratch[0], 100 + 7 * 3);
    s.loop = 0;
    assert_true(snippet_gen(&s, 7, buf, 1 << 16, &lay) > 0);
    ((gen_fn)buf)(&scratch[0]);
    assert_int_equal(scratch[0], 107);
    munmap(buf, 1 << 16);
}

/* A snippet that clobbers every callee-saved register, sets DF and changes MXCSR: the caller sees none of it. */
static void test_restores_state(void **state)
{
    (void)state;
    static const char code[] = "\x48\x31\xdb"                 /* xor rbx, rbx */
                               "\x48\x31\xed"                 /* xor rbp, rbp */
                               "\x4d\x31\xe4"                 /* xor r12, r12 */
                               "\x4d\x31\xed"                 /* xor r13, r13 */
                               "\x4d\x31\xf6"                 /* xor r14, r14 */
                               "\x4d\x31\xff"                 /* xor r15, r15 */
                               "\xfd"                         /* std */
                               "\x6a\x00\x0f\xae\x14\x24\x58" /* push 0; ldmxcsr [rsp] (unmask all); pop rax */
        ;
    struct snippet s = make(code, sizeof(code) - 1, 3, 0);
    uint8_t *buf = exec_buf(4096);
    assert_true(snippet_gen(&s, 3, buf, 4096, NULL) > 0);
    uint32_t mx0, mx1;
    __asm__ volatile("stmxcsr %0" : "=m"(mx0));
    register uint64_t rbx __asm__("rbx") = 0x1111;
    register uint64_t r12 __asm__("r12") = 0x2222;
    register uint64_t r13 __asm__("r13") = 0x3333;
    register uint64_t r14 __asm__("r14") = 0x4444;
    register uint64_t r15 __asm__("r15") = 0x5555;
    uint64_t flags, arg = 0;
    /* Below the red zone (host code may keep data there), then the call. */
    __asm__ volatile("sub $128, %%rsp\n\t"
                     "call *%[fn]\n\t"
                     "add $128, %%rsp\n\t"
                     "pushfq\n\t"
                     "popq %[fl]"
                     : [fl] "=&r"(flags), "+r"(rbx), "+r"(r12), "+r"(r13), "+r"(r14), "+r"(r15), "+D"(arg)
                     : [fn] "r"(buf)
                     : "rax", "memory", "cc"); /* this code changes no other caller-saved register */
    __asm__ volatile("stmxcsr %0" : "=m"(mx1));
    assert_int_equal(rbx, 0x1111);
    assert_int_equal(r12, 0x2222);
    assert_int_equal(r13, 0x3333);
    assert_int_equal(r14, 0x4444);
    assert_int_equal(r15, 0x5555);
    assert_int_equal(flags & (1u << 10), 0); /* DF clear */
    assert_int_equal(mx1, mx0);
    munmap(buf, 4096);
}

static void test_locate(void **state)
{
    (void)state;
    struct snippet s = make("\x48\x0f\xaf\xc0\x0f\x0b", 6, 10, 0); /* imul rax, rax; ud2 */
    memcpy(s.init, "\x90\x90", 2);
    s.init_len = 2;
    uint8_t *buf = exec_buf(4096);
    struct snippet_layout lay;
    assert_true(snippet_gen(&s, 10, buf, 4096, &lay) > 0);
    size_t off;
    assert_string_equal(snippet_locate(&s, &lay, lay.code_off + 6 * 7 + 4, &off), "code");
    assert_int_equal(off, 4); /* the ud2 of copy 8 */
    assert_string_equal(snippet_locate(&s, &lay, lay.init_off + 1, &off), "init");
    assert_int_equal(off, 1);
    assert_string_equal(snippet_locate(&s, &lay, 0, &off), "harness");
    assert_string_equal(snippet_locate(&s, &lay, lay.code_off + lay.copies_len, &off), "harness");
    munmap(buf, 4096);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_layout_bytes),
        cmocka_unit_test(test_runs_copies_and_loop),
        cmocka_unit_test(test_restores_state),
        cmocka_unit_test(test_locate),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
