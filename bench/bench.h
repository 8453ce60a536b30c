/* bench.h - the benchmark registry: each benchmark is a table entry plus a run function. */
#ifndef PMB_BENCH_H
#define PMB_BENCH_H

#include "kernel/klib.h"

struct bench_desc {
    const char *name;  /* as used in config bench= */
    const char *what;  /* one line for the banner and docs */
    void (*run)(void);
};

/* Parses a comma-separated list ("all", "none" or names). Returns 0, or -1 with a one-line error. */
int bench_select(const char *list, char *err, size_t errlen);
/* Runs the selected benchmarks in table order, each between `bench` start/finish progress lines. */
void bench_run_selected(void);
size_t bench_count(void);
const struct bench_desc *bench_get(size_t i);

#endif
