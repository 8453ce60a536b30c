/* guard_linux.c - host-only: bench/platform.h's code guard in the hosted runner: fault signals name the snippet and the offset, a watchdog thread ends a snippet that does not return. */
#define _GNU_SOURCE
#include "bench/hosted/platform_linux.h"
#include "bench/platform.h"
#include "kernel/fmt.h"
#include "kernel/guard.h"

#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <ucontext.h>
#include <unistd.h>

/*
 * The same contract as the image (kernel/panic.c, kernel/watchdog.c): a fault inside guarded code gives a
 * `crash` record with the guard's object (kernel/guard.h) and the end record "crashed"; a timeout gives an
 * `error` record naming it and the end record "error", and the process exits 1. The record stream is only
 * touched here while the guarded code runs on the main thread, which writes no record meanwhile
 * (bench/snippet.c emits its records after plat_guard_end), so the writer is not re-entered.
 */

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

static const char *signame(int sig)
{
    switch (sig) {
    case SIGSEGV: return "SIGSEGV";
    case SIGBUS: return "SIGBUS";
    case SIGILL: return "SIGILL";
    case SIGFPE: return "SIGFPE";
    case SIGTRAP: return "SIGTRAP";
    default: return "signal";
    }
}

static void on_fault(int sig, siginfo_t *si, void *uc_)
{
    ucontext_t *uc = uc_;
    uint64_t rip = (uint64_t)uc->uc_mcontext.gregs[REG_RIP];
    const struct guard *g = guard_current();
    const char *part;
    size_t off;
    if (!g || !guard_locate(rip, &part, &off)) {
        /* Not in guarded code: the default action (a core dump of the runner's own bug). */
        signal(sig, SIG_DFL);
        return;
    }
    printf("\n!!! %s at RIP %016llx in %s '%s', %s at offset %zu\n", signame(sig), (unsigned long long)rip, g->what,
           g->name, part, off);
    struct record_stream *rs = host_records();
    struct json *j = record_begin(rs, "crash");
    json_kv_str(j, "kind", "signal");
    json_kv_str(j, "name", signame(sig));
    json_kv_int(j, "signal", sig);
    json_kv_int(j, "si_code", si->si_code);
    json_kv_hex(j, "rip", rip);
    json_kv_hex(j, "addr", (uint64_t)(uintptr_t)si->si_addr);
    guard_json(j, rip);
    record_end(rs);
    record_finish(rs, "crashed");
    fflush(stdout);
    _exit(1);
}

static struct {
    pthread_mutex_t mu;
    pthread_cond_t cv;
    pthread_t th;
    bool started, armed;
    uint64_t seq;
    struct timespec deadline;
    uint32_t timeout_ms;
} wd = {.mu = PTHREAD_MUTEX_INITIALIZER};

static void fire(void)
{
    const struct guard *g = guard_current();
    const char *what = g && g->what ? g->what : "guarded code", *name = g && g->name ? g->name : "";
    printf("\n!!! watchdog: %s '%s' did not return within %u ms; ending the run\n", what, name, wd.timeout_ms);
    struct record_stream *rs = host_records();
    guard_timeout_json(record_begin(rs, "error"), wd.timeout_ms, false, 0, "the watchdog thread");
    record_end(rs);
    record_finish(rs, "error");
    fflush(stdout);
    _exit(1);
}

static void *watchdog_main(void *arg)
{
    (void)arg;
    pthread_mutex_lock(&wd.mu);
    for (;;) {
        while (!wd.armed)
            pthread_cond_wait(&wd.cv, &wd.mu);
        uint64_t seq = wd.seq;
        int rc = 0;
        while (wd.armed && wd.seq == seq && rc != ETIMEDOUT)
            rc = pthread_cond_timedwait(&wd.cv, &wd.mu, &wd.deadline);
        if (wd.armed && wd.seq == seq && rc == ETIMEDOUT)
            fire(); /* does not return */
    }
    return NULL;
}

int plat_guard_begin(const struct guard *g, char *why, size_t whylen)
{
    static bool handlers;
    if (!handlers) {
        struct sigaction sa;
        memset(&sa, 0, sizeof(sa));
        sa.sa_sigaction = on_fault;
        sa.sa_flags = SA_SIGINFO | SA_NODEFER;
        sigemptyset(&sa.sa_mask);
        const int sigs[] = {SIGSEGV, SIGBUS, SIGILL, SIGFPE, SIGTRAP};
        for (size_t i = 0; i < sizeof(sigs) / sizeof(sigs[0]); i++)
            sigaction(sigs[i], &sa, NULL);
        handlers = true;
    }
    pthread_mutex_lock(&wd.mu);
    if (!wd.started) {
        pthread_condattr_t ca;
        pthread_condattr_init(&ca);
        pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
        pthread_cond_init(&wd.cv, &ca);
        if (pthread_create(&wd.th, NULL, watchdog_main, NULL) != 0) {
            pthread_mutex_unlock(&wd.mu);
            fmt_snprintf(why, whylen, "no watchdog: pthread_create failed");
            return -1;
        }
        wd.started = true;
    }
    guard_set(g);
    clock_gettime(CLOCK_MONOTONIC, &wd.deadline);
    uint64_t ns = (uint64_t)wd.deadline.tv_nsec + (uint64_t)g->timeout_ms * 1000000ull;
    wd.deadline.tv_sec += (time_t)(ns / 1000000000ull);
    wd.deadline.tv_nsec = (long)(ns % 1000000000ull);
    wd.timeout_ms = g->timeout_ms;
    wd.seq++;
    wd.armed = true;
    pthread_cond_broadcast(&wd.cv);
    pthread_mutex_unlock(&wd.mu);
    return 0;
}

void plat_guard_end(void)
{
    pthread_mutex_lock(&wd.mu);
    wd.armed = false;
    wd.seq++;
    pthread_cond_broadcast(&wd.cv);
    pthread_mutex_unlock(&wd.mu);
    guard_set(NULL);
}
