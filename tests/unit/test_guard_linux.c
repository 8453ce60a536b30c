/* test_guard_linux.c - the hosted runner's guarded call (bench/hosted/guard_linux.c): each outcome of the child
 * process (returned, faulted, system call, timeout, exit without a result) and the record the parent writes. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <dirent.h>
#include <pthread.h>
#include <signal.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#include "bench/hosted/platform_linux.h"
#include "bench/platform.h"
#include "kernel/guard.h"

/* ---- what guard_linux.c needs from platform_linux.c: the record stream (into a buffer) and plat_free ---------- */

static struct record_stream RS;
static char out[1 << 16];
static size_t out_len;

static void sink(const char *line, size_t len, void *ctx)
{
    (void)ctx;
    if (out_len + len + 1 < sizeof(out)) {
        memcpy(out + out_len, line, len);
        out_len += len;
        out[out_len++] = '\n';
        out[out_len] = 0;
    }
}

struct record_stream *host_records(void) { return &RS; }

void plat_free(struct plat_buf *b)
{
    if (b && b->ptr)
        munmap(b->ptr, b->priv_restore);
    memset(b, 0, sizeof(*b));
}

static int setup(void **state)
{
    (void)state;
    record_stream_init(&RS, sink, NULL);
    out_len = 0;
    out[0] = 0;
    return 0;
}

/* ---- guarded code ---------------------------------------------------------------------------------------- */

struct job {
    void (*code)(void);
    uint64_t result;
};

static void run_code(void *arg)
{
    struct job *j = arg;
    j->code();
    j->result = 0x1234;
}

/* The bytes into executable memory, a guard with one `code` region over them. */
static struct plat_buf code_buf;
static struct guard guard_for(const uint8_t *bytes, size_t n, uint32_t timeout_ms)
{
    assert_int_equal(plat_alloc_code(&code_buf, 4096, "test"), 0);
    memcpy(code_buf.ptr, bytes, n);
    struct guard g = {.what = "snippet", .name = "t", .timeout_ms = timeout_ms};
    g.r[g.n++] = (struct guard_region){"code", (uintptr_t)code_buf.ptr, n, 0};
    return g;
}

static int run(const uint8_t *bytes, size_t n, uint32_t timeout_ms, struct job *j)
{
    struct guard g = guard_for(bytes, n, timeout_ms);
    j->code = (void (*)(void))(uintptr_t)code_buf.ptr;
    j->result = 0;
    char why[200] = "";
    int rc = plat_guard_run(&g, run_code, j, sizeof(*j), why, sizeof(why));
    plat_free(&code_buf);
    return rc;
}

static void test_returns_and_hands_back_ctx(void **state)
{
    (void)state;
    static const uint8_t ret[] = {0x48, 0x01, 0xc0, 0xc3}; /* add rax, rax; ret */
    struct job j;
    assert_int_equal(run(ret, sizeof(ret), 5000, &j), PLAT_GUARD_RAN);
    assert_int_equal(j.result, 0x1234); /* written in the child, copied back */
    assert_int_equal(out_len, 0);       /* no record */
    assert_string_equal(host_guard_status(), "ok");
}

static void test_fault_is_located(void **state)
{
    (void)state;
    static const uint8_t ud[] = {0x90, 0x90, 0x0f, 0x0b, 0xc3}; /* nop; nop; ud2 */
    struct job j;
    assert_int_equal(run(ud, sizeof(ud), 5000, &j), PLAT_GUARD_FAILED);
    assert_int_equal(j.result, 0);
    assert_non_null(strstr(out, "{\"type\":\"crash\",\"kind\":\"signal\",\"name\":\"SIGILL\",\"signal\":4,"));
    assert_non_null(strstr(out, "\"snippet\":{\"name\":\"t\",\"part\":\"code\",\"offset\":2}"));
    assert_string_equal(host_guard_status(), "crashed");
}

static void test_system_call_is_trapped(void **state)
{
    (void)state;
    /* mov eax, 39 (getpid); syscall; ret: refused, located at the syscall instruction */
    static const uint8_t sc[] = {0xb8, 0x27, 0x00, 0x00, 0x00, 0x0f, 0x05, 0xc3};
    struct job j;
    assert_int_equal(run(sc, sizeof(sc), 5000, &j), PLAT_GUARD_FAILED);
    assert_non_null(strstr(out, "\"name\":\"SIGSYS\""));
    assert_non_null(strstr(out, "\"syscall\":39,"));
    assert_non_null(strstr(out, "\"snippet\":{\"name\":\"t\",\"part\":\"code\",\"offset\":5}"));
    assert_non_null(strstr(out, "made system call 39: no system call is allowed"));
}

static void test_timeout_reports_where(void **state)
{
    (void)state;
    static const uint8_t spin[] = {0x90, 0xeb, 0xfd}; /* 1: nop; jmp 1b */
    struct job j;
    assert_int_equal(run(spin, sizeof(spin), 100, &j), PLAT_GUARD_FAILED);
    assert_non_null(strstr(out, "{\"type\":\"error\",\"what\":\"snippet_timeout\",\"timeout_ms\":100,\"rip\":"));
    assert_non_null(strstr(out, "\"snippet\":{\"name\":\"t\",\"part\":\"code\""));
    assert_non_null(strstr(out, "did not return within 100 ms; the hosted runner's watchdog stopped its process; "
                                "the run goes on"));
}

/* The code jumps into the runner's own exit path (the one exit_group the filter lets through): no result. */
__attribute__((no_sanitize("address", "undefined"))) /* ASan's hook before a noreturn call makes system calls */
static void exit_early(void *arg)
{
    (void)arg;
    host_guard_exit(0);
}

static void test_exit_without_result(void **state)
{
    (void)state;
    struct guard g = {.what = "snippet", .name = "t", .timeout_ms = 5000};
    uint64_t ctx = 7;
    char why[200];
    assert_int_equal(plat_guard_run(&g, exit_early, &ctx, sizeof(ctx), why, sizeof(why)), PLAT_GUARD_FAILED);
    assert_int_equal(ctx, 7);
    assert_non_null(strstr(out, "{\"type\":\"crash\",\"kind\":\"exit\",\"name\":\"exit\",\"snippet\":{\"name\":\"t\"}"));
    assert_non_null(strstr(out, "exited with status 0 without a result"));
}

static void test_crash_test_kinds(void **state)
{
    (void)state;
    char why[200];
    assert_true(host_crash_test_known(""));
    assert_true(host_crash_test_known("pf"));
    assert_false(host_crash_test_known("nested"));
    assert_int_equal(host_crash_test("nested", why, sizeof(why)), -1);
    assert_string_equal(why, "crash_test=nested cannot be raised in the hosted runner (it raises ud, gp and pf)");
    assert_int_equal(host_crash_test("gp", why, sizeof(why)), 0);
    assert_non_null(strstr(out, "\"name\":\"SIGSEGV\""));
    assert_non_null(strstr(out, "\"crash_test\":{\"name\":\"gp\",\"part\":\"code\",\"offset\":0}"));
}

/* ---- the guard's own last resorts, driven from outside: a second thread of the parent finds the child (the
 * process whose parent is this one) and signals it, as an operator or the OOM killer would ------------------- */

static pid_t find_child(void)
{
    char path[64], buf[512];
    DIR *d = opendir("/proc");
    pid_t found = 0;
    for (struct dirent *e; d && !found && (e = readdir(d));) {
        pid_t pid = (pid_t)atoi(e->d_name);
        if (pid <= 0)
            continue;
        snprintf(path, sizeof(path), "/proc/%d/stat", (int)pid);
        FILE *f = fopen(path, "r");
        if (!f)
            continue;
        size_t n = fread(buf, 1, sizeof(buf) - 1, f);
        fclose(f);
        buf[n] = 0;
        char *p = strrchr(buf, ')'); /* "pid (comm) state ppid ...": comm may hold spaces */
        int ppid = 0;
        char st;
        if (p && sscanf(p + 1, " %c %d", &st, &ppid) == 2 && ppid == (int)getpid())
            found = pid;
    }
    if (d)
        closedir(d);
    return found;
}

static int signal_to_send;
static void *signal_the_child(void *arg)
{
    (void)arg;
    struct timespec ms10 = {0, 10 * 1000 * 1000};
    for (int i = 0; i < 300; i++) { /* up to 3 s for the fork */
        pid_t c = find_child();
        if (c) {
            nanosleep(&ms10, NULL); /* let it reach the code */
            kill(c, signal_to_send);
            return NULL;
        }
        nanosleep(&ms10, NULL);
    }
    return NULL;
}

static int run_signalled(int sig, uint32_t timeout_ms)
{
    static const uint8_t spin[] = {0x90, 0xeb, 0xfd}; /* 1: nop; jmp 1b */
    struct job j;
    pthread_t t;
    signal_to_send = sig;
    assert_int_equal(pthread_create(&t, NULL, signal_the_child, NULL), 0);
    int rc = run(spin, sizeof(spin), timeout_ms, &j);
    pthread_join(t, NULL);
    assert_int_equal(j.result, 0);
    return rc;
}

/* Killed from outside before its handler could say where: a crash record naming the signal, no RIP. */
static void test_child_killed_before_reporting(void **state)
{
    (void)state;
    assert_int_equal(run_signalled(SIGKILL, 10000), PLAT_GUARD_FAILED);
    assert_non_null(strstr(out, "{\"type\":\"crash\",\"kind\":\"signal\",\"name\":\"SIGKILL\",\"signal\":9,"));
    assert_non_null(strstr(out, "its process was killed by SIGKILL before it could report where (from outside the run"));
    assert_null(strstr(out, "snippet_timeout"));
    assert_string_equal(host_guard_status(), "crashed");
}

/* A child that cannot answer the timeout signal (stopped: the signal stays pending) is killed KILL_GRACE_MS later;
 * the error record says so and has no RIP, since no handler ran. */
static void test_child_that_does_not_answer_the_timeout_is_killed(void **state)
{
    (void)state;
    assert_int_equal(run_signalled(SIGSTOP, 100), PLAT_GUARD_FAILED);
    assert_non_null(strstr(out, "{\"type\":\"error\",\"what\":\"snippet_timeout\",\"timeout_ms\":100,"));
    assert_null(strstr(out, "\"rip\":"));
    assert_non_null(strstr(out, "the hosted runner's watchdog killed its process; the run goes on"));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup(test_returns_and_hands_back_ctx, setup),
        cmocka_unit_test_setup(test_fault_is_located, setup),
        cmocka_unit_test_setup(test_system_call_is_trapped, setup),
        cmocka_unit_test_setup(test_timeout_reports_where, setup),
        cmocka_unit_test_setup(test_exit_without_result, setup),
        cmocka_unit_test_setup(test_crash_test_kinds, setup),
        cmocka_unit_test_setup(test_child_killed_before_reporting, setup),
        cmocka_unit_test_setup(test_child_that_does_not_answer_the_timeout_is_killed, setup),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
