/* guard_linux.c - host-only: bench/platform.h's guarded run in the hosted runner: user code runs in a forked child
 * process under a seccomp filter that allows it no system call, on an alternate signal stack; the parent writes the
 * crash or timeout record the image writes, and the run goes on. */
#define _GNU_SOURCE
#include "bench/hosted/platform_linux.h"
#include "bench/platform.h"
#include "kernel/fmt.h"
#include "kernel/guard.h"

#include <errno.h>
#include <fcntl.h>
#include <linux/audit.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <poll.h>
#include <signal.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <ucontext.h>
#include <unistd.h>

/*
 * The image runs a snippet in ring 0 with nothing between it and the machine: a fault there ends the run
 * (kernel/panic.c), a hang is stopped by an NMI (kernel/watchdog.c). A Linux process can do better, and must,
 * since a snippet there could otherwise take the runner down (a `ret`, a clobbered RSP) or talk to the kernel
 * (exit_group, write, ...). So plat_guard_run forks for every guarded call:
 *
 *   child   inherits the parent's CPU pinning (the main thread's: the CPU the run measures on), takes an
 *           alternate signal stack and handlers for every fault signal, SIGSYS and the timeout signal, sets
 *           no_new_privs and a seccomp filter that traps (SIGSYS) every system call except exit_group from one
 *           instruction of its own (the exit stub below), then runs fn(ctx). Everything after the filter, the
 *           measurement harness included, makes no system call (measure/engine.c reads the TSC; bench/snippet.c
 *           writes no record in fn). On return it copies ctx into memory shared with the parent and exits; a
 *           signal handler writes what happened (signal, RIP, RSP, address, system call number) there instead.
 *   parent  blocks in poll() on a pipe the child holds open (its end closes when the child dies, whatever
 *           the cause), so it takes no CPU time from the child on the shared CPU; after g->timeout_ms it sends
 *           the timeout signal (whose handler reports where the child was), and SIGKILL 1 s later if the
 *           child is past handling signals. Then it writes the record: `crash` (kind "signal", "exit") or `error`
 *           (`<what>_timeout`), with the guard's object (kernel/guard.h: part and offset).
 *
 * A snippet can write anywhere in its own process, the handlers and the shared page included. The parent uses the
 * copied ctx only after a clean exit with the "done" mark, and the callers follow no pointer found in it
 * (bench/snippet.c job_result); a handler that can no longer run ends the child by the kernel's default action,
 * which the parent reports as a crash without a RIP. So the worst a snippet can do is forge its own figures.
 */

#define GUARD_SHARED_BYTES (64 * 1024)
#define TIMEOUT_SIG SIGUSR1
#define KILL_GRACE_MS 1000

enum child_state { ST_RUNNING = 0, ST_DONE = 0x444f4e45, ST_SIGNAL, ST_TIMEOUT, ST_SETUP };

struct shared {
    volatile uint32_t state;
    int sig, si_code;
    uint64_t rip, rsp, addr;
    int64_t syscall_nr; /* SIGSYS: the call attempted, else -1 */
    int setup_errno;    /* ST_SETUP: what failed */
    char setup_what[48];
    size_t ctx_len;
    uint8_t ctx[];
};

/* The child's code runs no sanitizer hook (the unit tests build this file with ASan, whose hooks make system calls:
 * after the filter, those would be trapped like the snippet's). */
#define CHILD_CODE __attribute__((no_sanitize("address", "undefined")))

static struct shared *SH;
static int worst; /* 0 ok, 1 a timeout (end "error"), 2 a crash (end "crashed") */
static uint8_t altstack[64 * 1024] __attribute__((aligned(64)));

int plat_alloc_code(struct plat_buf *b, uint64_t bytes, const char *why)
{
    (void)why;
    memset(b, 0, sizeof(*b));
    b->node = -1;
    if (!bytes || bytes > (1ull << 32))
        return -1;
    size_t len = (size_t)ALIGN_UP(bytes, KiB(4));
    void *p = mmap(NULL, len, PROT_READ | PROT_WRITE | PROT_EXEC, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (p == MAP_FAILED)
        return -1;
    b->ptr = p;
    b->bytes = len;
    b->page_bytes = KiB(4);
    b->page_how = "mmap PROT_EXEC";
    b->priv_len = len;
    b->priv_restore = len; /* plat_free (platform_linux.c) unmaps priv_restore bytes */
    return 0;
}

/* exit_group(code) from the one instruction the seccomp filter lets through. The stub is machine code in a page
 * of its own (written once by the parent, then read-only and executable, inherited by every child), so that its
 * address is known without asm in this file: mov eax, 231 (SYS_exit_group); syscall; ud2. The filter sees the
 * address after the syscall instruction (seccomp_data.instruction_pointer): exit_stub + EXIT_STUB_ALLOWED. */
_Static_assert(SYS_exit_group == 231, "x86-64 exit_group");
static const uint8_t exit_stub_code[] = {0xb8, 0xe7, 0x00, 0x00, 0x00, 0x0f, 0x05, 0x0f, 0x0b};
#define EXIT_STUB_ALLOWED 7
static void (*exit_stub)(int code); /* edi = code */

static int make_exit_stub(void)
{
    if (exit_stub)
        return 0;
    void *p = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (p == MAP_FAILED)
        return -1;
    memcpy(p, exit_stub_code, sizeof(exit_stub_code));
    if (mprotect(p, 4096, PROT_READ | PROT_EXEC) != 0) {
        munmap(p, 4096);
        return -1;
    }
    exit_stub = (void (*)(int))(uintptr_t)p;
    return 0;
}

CHILD_CODE __attribute__((noreturn)) void host_guard_exit(int code)
{
    exit_stub(code);
    __builtin_unreachable();
}

static const char *signame(int sig)
{
    switch (sig) {
    case SIGSEGV: return "SIGSEGV";
    case SIGBUS: return "SIGBUS";
    case SIGILL: return "SIGILL";
    case SIGFPE: return "SIGFPE";
    case SIGTRAP: return "SIGTRAP";
    case SIGSYS: return "SIGSYS";
    case SIGKILL: return "SIGKILL";
    case SIGABRT: return "SIGABRT";
    case TIMEOUT_SIG: return "SIGUSR1";
    default: return "signal";
    }
}

/* ---- the child ------------------------------------------------------------------------------------------- */

CHILD_CODE static void child_on_signal(int sig, siginfo_t *si, void *uc_)
{
    ucontext_t *uc = uc_;
    uint64_t rip = (uint64_t)uc->uc_mcontext.gregs[REG_RIP];
    SH->sig = sig;
    SH->si_code = si->si_code;
    SH->rsp = (uint64_t)uc->uc_mcontext.gregs[REG_RSP];
    SH->addr = (uint64_t)(uintptr_t)si->si_addr;
    SH->syscall_nr = -1;
    if (sig == SIGSYS) {
        /* The kernel reports the address after the system call instruction; name the instruction itself when
         * the two bytes before it are one (syscall 0f 05, sysenter 0f 34, int 0x80 cd 80) in the guarded code. */
        const char *part;
        size_t off;
        rip = (uint64_t)(uintptr_t)si->si_call_addr;
        if (guard_locate(rip - 2, &part, &off)) {
            const uint8_t *p = (const uint8_t *)(uintptr_t)(rip - 2);
            if ((p[0] == 0x0f && (p[1] == 0x05 || p[1] == 0x34)) || (p[0] == 0xcd && p[1] == 0x80))
                rip -= 2;
        }
        SH->syscall_nr = si->si_syscall;
        SH->addr = rip;
    }
    SH->rip = rip;
    __atomic_store_n(&SH->state, sig == TIMEOUT_SIG ? ST_TIMEOUT : ST_SIGNAL, __ATOMIC_RELEASE);
    host_guard_exit(3);
}

/* Lets exit_group through from the exit stub alone; every other system call, from anywhere, traps (SIGSYS). */
static int install_filter(void)
{
    uint64_t ip = (uint64_t)(uintptr_t)exit_stub + EXIT_STUB_ALLOWED;
    struct sock_filter f[] = {
        BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, arch)),
        BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, AUDIT_ARCH_X86_64, 0, 7),
        BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, nr)),
        BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, SYS_exit_group, 0, 5),
        BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, instruction_pointer)),
        BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, (uint32_t)ip, 0, 3),
        BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, instruction_pointer) + 4),
        BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, (uint32_t)(ip >> 32), 0, 1),
        BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
        BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_TRAP),
    };
    struct sock_fprog prog = {.len = (unsigned short)(sizeof(f) / sizeof(f[0])), .filter = f};
    if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0)
        return -1;
    /* SPEC_ALLOW: a seccomp filter would otherwise switch on the speculative store bypass mitigation for the
     * process where the kernel's policy says so (spec_store_bypass_disable=seccomp), slowing the very code
     * measured; the filter is about system calls, not speculation. Kernels before 4.17 lack the flag. */
    if (syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER, SECCOMP_FILTER_FLAG_SPEC_ALLOW, &prog) == 0)
        return 0;
    return (int)syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER, 0, &prog);
}

CHILD_CODE static __attribute__((noreturn)) void setup_failed(const char *what)
{
    SH->setup_errno = errno;
    fmt_snprintf(SH->setup_what, sizeof(SH->setup_what), "%s", what);
    __atomic_store_n(&SH->state, ST_SETUP, __ATOMIC_RELEASE);
    _exit(4);
}

CHILD_CODE static __attribute__((noreturn)) void child_main(const struct guard *g, void (*fn)(void *), void *ctx, size_t ctx_len)
{
    (void)g; /* guard_set(g) before the fork: the child's copy locates a system call instruction */
    stack_t ss = {.ss_sp = altstack, .ss_size = sizeof(altstack), .ss_flags = 0};
    if (sigaltstack(&ss, NULL) != 0)
        setup_failed("sigaltstack");
    struct sigaction sa;
    memset(&sa, 0, sizeof(sa));
    sa.sa_sigaction = child_on_signal;
    sa.sa_flags = SA_SIGINFO | SA_ONSTACK; /* no SA_NODEFER: a fault inside the handler kills the child */
    sigfillset(&sa.sa_mask);
    const int sigs[] = {SIGSEGV, SIGBUS, SIGILL, SIGFPE, SIGTRAP, SIGSYS, TIMEOUT_SIG};
    sigset_t unblock;
    sigemptyset(&unblock);
    for (size_t i = 0; i < sizeof(sigs) / sizeof(sigs[0]); i++) {
        if (sigaction(sigs[i], &sa, NULL) != 0)
            setup_failed("sigaction");
        sigaddset(&unblock, sigs[i]);
    }
    if (sigprocmask(SIG_UNBLOCK, &unblock, NULL) != 0)
        setup_failed("sigprocmask");
    if (install_filter() != 0)
        setup_failed("seccomp filter");
    /* From here on: no system call but the exit stub's. */
    fn(ctx);
    memcpy(SH->ctx, ctx, ctx_len);
    __atomic_store_n(&SH->state, ST_DONE, __ATOMIC_RELEASE);
    host_guard_exit(0);
}

/* ---- the parent ------------------------------------------------------------------------------------------ */

static void child_crash_record(const struct guard *g, const char *kind, const char *name, int sig, bool have_rip,
                               const char *message)
{
    struct record_stream *rs = host_records();
    struct json *j = record_begin(rs, "crash");
    json_kv_str(j, "kind", kind);
    json_kv_str(j, "name", name);
    if (sig)
        json_kv_int(j, "signal", sig);
    if (have_rip) {
        json_kv_int(j, "si_code", SH->si_code);
        json_kv_hex(j, "rip", SH->rip);
        json_kv_hex(j, "rsp", SH->rsp);
        json_kv_hex(j, "addr", SH->addr);
        if (SH->syscall_nr >= 0)
            json_kv_int(j, "syscall", SH->syscall_nr);
        guard_json(j, SH->rip);
    } else {
        json_key(j, g->what);
        json_obj_begin(j);
        json_kv_str(j, "name", g->name ? g->name : "");
        json_obj_end(j);
    }
    json_kv_str(j, "message", message);
    record_end(rs);
}

static int reap(pid_t pid, int *status)
{
    for (;;) {
        if (waitpid(pid, status, 0) == pid)
            return 0;
        if (errno != EINTR)
            return -1;
    }
}

/* Waits up to ms for the child's end of the pipe to close (the child ended). true: it did. */
static bool wait_hup(int fd, int ms)
{
    struct pollfd p = {.fd = fd, .events = POLLIN};
    for (;;) {
        int rc = poll(&p, 1, ms);
        if (rc > 0)
            return true;
        if (rc == 0)
            return false;
        if (errno != EINTR)
            return true; /* cannot wait: treat as ended, waitpid below blocks until it has */
    }
}

int plat_guard_run(const struct guard *g, void (*fn)(void *ctx), void *ctx, size_t ctx_len, char *why, size_t whylen)
{
    if (!SH) {
        void *p = mmap(NULL, GUARD_SHARED_BYTES, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
        if (p == MAP_FAILED) {
            fmt_snprintf(why, whylen, "no memory shared with a child process: %s", strerror(errno));
            return PLAT_GUARD_NOT_RUN;
        }
        SH = p;
    }
    if (make_exit_stub() != 0) {
        fmt_snprintf(why, whylen, "no page for the child's exit path: %s", strerror(errno));
        return PLAT_GUARD_NOT_RUN;
    }
    if (ctx_len > GUARD_SHARED_BYTES - sizeof(struct shared)) {
        fmt_snprintf(why, whylen, "guarded call's context of %zu bytes does not fit the shared page", ctx_len);
        return PLAT_GUARD_NOT_RUN;
    }
    memset(SH, 0, sizeof(*SH));
    SH->ctx_len = ctx_len;
    int pfd[2];
    if (pipe2(pfd, O_CLOEXEC) != 0) {
        fmt_snprintf(why, whylen, "pipe: %s", strerror(errno));
        return PLAT_GUARD_NOT_RUN;
    }
    fflush(stdout);
    fflush(stderr);
    guard_set(g);
    pid_t pid = fork();
    if (pid < 0) {
        guard_set(NULL);
        close(pfd[0]);
        close(pfd[1]);
        fmt_snprintf(why, whylen, "fork: %s", strerror(errno));
        return PLAT_GUARD_NOT_RUN;
    }
    if (pid == 0) {
        close(pfd[0]); /* pfd[1] stays open until the child ends: the parent's poll sees it close */
        child_main(g, fn, ctx, ctx_len);
    }
    close(pfd[1]);
    bool ended = wait_hup(pfd[0], g->timeout_ms ? (int)MIN(g->timeout_ms, (uint32_t)INT32_MAX) : -1); /* 0: none */
    bool timed_out = false, killed = false;
    if (!ended) {
        timed_out = true;
        kill(pid, TIMEOUT_SIG); /* the child's handler says where it was, then exits */
        if (!wait_hup(pfd[0], KILL_GRACE_MS)) {
            kill(pid, SIGKILL);
            killed = true;
        }
    }
    close(pfd[0]);
    int status = 0;
    if (reap(pid, &status) != 0) {
        guard_set(NULL);
        fmt_snprintf(why, whylen, "waitpid: %s", strerror(errno));
        return PLAT_GUARD_NOT_RUN;
    }
    uint32_t st = __atomic_load_n(&SH->state, __ATOMIC_ACQUIRE);
    const char *what = g->what ? g->what : "guarded code", *name = g->name ? g->name : "";
    char msg[240];
    int rc = PLAT_GUARD_FAILED;
    if (st == ST_SETUP && WIFEXITED(status) && WEXITSTATUS(status) == 4) {
        fmt_snprintf(why, whylen, "no isolated child process: %s failed: %s", SH->setup_what,
                     strerror(SH->setup_errno));
        rc = PLAT_GUARD_NOT_RUN;
    } else if (!timed_out && st == ST_DONE && WIFEXITED(status) && WEXITSTATUS(status) == 0) {
        memcpy(ctx, SH->ctx, ctx_len);
        rc = PLAT_GUARD_RAN;
    } else if (timed_out) {
        /* The image's record (kernel/guard.c guard_timeout_json), with the RIP when the child's handler ran. */
        bool have_rip = st == ST_TIMEOUT && !killed;
        printf("\n!!! watchdog: %s '%s' did not return within %u ms; %s\n", what, name, g->timeout_ms,
               killed ? "its process did not answer the timeout signal and was killed" : "its process was stopped");
        struct record_stream *rs = host_records();
        guard_timeout_json(record_begin(rs, "error"), g->timeout_ms, have_rip, SH->rip,
                           killed ? "the hosted runner's watchdog killed its process; the run goes on"
                                  : "the hosted runner's watchdog stopped its process; the run goes on");
        record_end(rs);
        worst = MAX(worst, 1);
    } else if (st == ST_SIGNAL && WIFEXITED(status) && WEXITSTATUS(status) == 3) {
        const char *part = "outside";
        size_t off = 0;
        bool in = guard_locate(SH->rip, &part, &off);
        if (SH->sig == SIGSYS)
            fmt_snprintf(msg, sizeof(msg), "%s '%s' made system call %lld: no system call is allowed", what, name,
                         (long long)SH->syscall_nr);
        else
            fmt_snprintf(msg, sizeof(msg), "%s '%s' faulted (%s, si_code %d, address 0x%llx)", what, name,
                         signame(SH->sig), SH->si_code, (unsigned long long)SH->addr);
        if (in)
            printf("\n!!! %s at RIP %016llx in %s '%s', %s at offset %zu\n", signame(SH->sig),
                   (unsigned long long)SH->rip, what, name, part, off);
        else
            printf("\n!!! %s at RIP %016llx in %s '%s', outside its code\n", signame(SH->sig),
                   (unsigned long long)SH->rip, what, name);
        child_crash_record(g, "signal", signame(SH->sig), SH->sig, true, msg);
    } else if (WIFSIGNALED(status)) {
        /* The code can send no signal (no system call); SIGKILL comes from outside (the OOM killer, an operator),
         * any other fatal signal is the kernel's default action when the child's handler could not run. */
        fmt_snprintf(msg, sizeof(msg), "%s '%s': its process was killed by %s before it could report where (%s)",
                     what, name, signame(WTERMSIG(status)),
                     WTERMSIG(status) == SIGKILL ? "from outside the run: the OOM killer or an operator"
                                                 : "the code overwrote the runner's handler or its stack");
        printf("\n!!! %s\n", msg);
        child_crash_record(g, "signal", signame(WTERMSIG(status)), WTERMSIG(status), false, msg);
    } else {
        fmt_snprintf(msg, sizeof(msg), "%s '%s': its process exited with status %d without a result (the code "
                                       "jumped into the runner's exit path)",
                     what, name, WIFEXITED(status) ? WEXITSTATUS(status) : -1);
        printf("\n!!! %s\n", msg);
        child_crash_record(g, "exit", "exit", 0, false, msg);
    }
    if (rc == PLAT_GUARD_FAILED && !timed_out)
        worst = 2;
    guard_set(NULL);
    fflush(stdout);
    return rc;
}

const char *host_guard_status(void) { return worst == 2 ? "crashed" : worst == 1 ? "error" : "ok"; }

/* ---- crash_test= through the same path ------------------------------------------------------------------- */

static void call_code(void *ctx)
{
    void (*f)(void) = (void (*)(void))(uintptr_t)(*(void **)ctx);
    f();
}

int host_crash_test(const char *kind, char *why, size_t whylen)
{
    /* The image's faults where a Linux process can raise them: ud2 (#UD: SIGILL), a privileged instruction (#GP:
     * SIGSEGV), a load from address 0 (#PF: SIGSEGV). */
    static const struct {
        const char *kind;
        uint8_t code[8];
        size_t len;
    } tests[] = {
        {"ud", {0x0f, 0x0b}, 2},                  /* ud2 */
        {"gp", {0xfa}, 1},                        /* cli: privileged in ring 3 */
        {"pf", {0x31, 0xc0, 0x48, 0x8b, 0x00}, 5}, /* xor eax, eax; mov rax, [rax] */
    };
    for (size_t i = 0; i < sizeof(tests) / sizeof(tests[0]); i++) {
        if (strcmp(kind, tests[i].kind))
            continue;
        struct plat_buf b;
        if (plat_alloc_code(&b, 4096, "crash_test") != 0) {
            fmt_snprintf(why, whylen, "crash_test=%s: no executable memory", kind);
            return -1;
        }
        memcpy(b.ptr, tests[i].code, tests[i].len);
        ((uint8_t *)b.ptr)[tests[i].len] = 0xc3; /* ret */
        struct guard g = {.what = "crash_test", .name = tests[i].kind, .timeout_ms = 5000};
        g.r[g.n++] = (struct guard_region){"code", (uintptr_t)b.ptr, tests[i].len + 1, 0};
        void *ctx = b.ptr;
        printf("host: crash_test=%s: raising it in a guarded child process\n", kind);
        int rc = plat_guard_run(&g, call_code, &ctx, sizeof(ctx), why, whylen);
        plat_free(&b);
        if (rc == PLAT_GUARD_NOT_RUN)
            return -1;
        if (rc == PLAT_GUARD_RAN) {
            fmt_snprintf(why, whylen, "crash_test=%s: the code returned without a fault", kind);
            return -1;
        }
        return 0;
    }
    fmt_snprintf(why, whylen, "crash_test=%s cannot be raised in the hosted runner (it raises ud, gp and pf)", kind);
    return -1;
}

bool host_crash_test_known(const char *kind)
{
    return !kind[0] || !strcmp(kind, "ud") || !strcmp(kind, "gp") || !strcmp(kind, "pf");
}
