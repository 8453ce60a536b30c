/* atomic.h - the `atomic` benchmark: latency of a dependent chain of locked read-modify-writes (lock xadd) on one cache line, beside a register add chain. */
#ifndef PMB_BENCH_ATOMIC_H
#define PMB_BENCH_ATOMIC_H

#include "kernel/klib.h"

#define ATOMIC_WHAT "latency of a dependent lock xadd chain on one cache line, beside a register add chain " \
                    "(core cycles per locked read-modify-write)"

/* Measures the chain on the benchmark's own CPU through the engine and writes one `atomic` record with the
 * figure `atomic_rmw` (docs/records.md "atomic") and a table line. */
void bench_atomic(void);

/* ---- the measured chain (exposed for tests/unit/test_atomic.c) -------------------------------------------- */

#define ATOMIC_PER_ITER 8 /* locked RMWs per iteration of the measured loop */

/* One cache line: `word` is what the locked RMWs act on, `v` the value carried from one to the next. */
struct atomic_chain {
    uint64_t word;
    uint64_t v;
} __attribute__((aligned(64)));

/* iters x ATOMIC_PER_ITER times: v = fetch-and-add(&word, v), a `lock xadd`. Each one adds the previous one's
 * result, so each waits for the previous one (and word runs through the Fibonacci numbers mod 2^64, never
 * stuck at a constant). meas_body_fn (measure/engine.h): iters 0 runs nothing. */
void atomic_chain_run(void *ctx, uint64_t iters);

#endif
