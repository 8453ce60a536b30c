/* guard.h - code running under a guard (a user snippet): where a fault inside it lies, for the crash and timeout records. */
#ifndef PMB_GUARD_H
#define PMB_GUARD_H

#include "kernel/klib.h"
#include "kernel/json.h"

/*
 * Whoever runs code it did not write (bench/snippet.c) describes it here as data: named regions of
 * instruction bytes, each with the period at which its content repeats (an unrolled copy of the same code).
 * A crash record then says which region and which offset in it faulted; a timeout says whose code did not
 * return. Pure logic: the image (kernel/panic.c, kernel/watchdog.c) and the hosted runner's signal handlers
 * both use it.
 */

#define GUARD_MAX_REGIONS 8

struct guard_region {
    const char *part; /* "code", "init", "harness" ... */
    uintptr_t start;
    size_t len;
    size_t period;    /* offset = (addr - start) % period; 0: no repetition */
};

struct guard {
    const char *what; /* the key of the object in the records ("snippet") */
    const char *name; /* whose code ("imul_chain") */
    struct guard_region r[GUARD_MAX_REGIONS];
    size_t n;
    uint32_t timeout_ms; /* for the watchdog (0: none) */
};

/* Sets the guard now in force (copied), or clears it with NULL. */
void guard_set(const struct guard *g);
/* The guard in force, or NULL. */
const struct guard *guard_current(void);
/* Which region of the guard in force holds addr: its part and the offset in it; false when none does. */
bool guard_locate(uint64_t addr, const char **part, size_t *off);
/* Into an open record: "<what>": {"name", "part", "offset"} for addr ("part": "outside" and no offset when
 * addr lies in none of the regions). Nothing when no guard is in force. */
void guard_json(struct json *j, uint64_t addr);

/* Into an open `error` record, for guarded code that did not return within timeout_ms, with what was done about it
 * (`action`: "the watchdog on CPU 1 stopped the run", "the hosted runner's watchdog stopped its process; the run
 * goes on"): "what": "<what>_timeout", "timeout_ms", "rip" (when known: have_rip), the guard's object (guard_json;
 * without a RIP only its name) and a one-line "message". */
void guard_timeout_json(struct json *j, uint32_t timeout_ms, bool have_rip, uint64_t rip, const char *action);

#endif
