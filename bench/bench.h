/* bench.h - the benchmark registry and runner, one table for the UEFI image and the hosted runner: a new benchmark is its bench/X.{c,h}, one row in bench_table, its tests/unit/test_X.c and a docs/records.md section (docs/design.md "Adding a benchmark"). */
#ifndef PMB_BENCH_H
#define PMB_BENCH_H

#include "kernel/klib.h"

struct bench_desc {
    const char *name;  /* as used in config bench= */
    const char *what;  /* one line for the banner and docs */
    void (*run)(void); /* NULL where this program lacks it: an image-only row in the hosted runner */
    bool image_only;   /* needs the UEFI kernel: timer (the kernel's own TSC path) and pmu (the PMU's MSRs) */
    bool explicit_only; /* not part of bench=all: runs only when named (snippet: the user's own code) */
};

/* Every benchmark in run order, the image-only ones included; *n gets the count. */
const struct bench_desc *bench_registry(size_t *n);
/* Parses a comma-separated list ("all", "none" or names) against the rows this program can run ("all":
 * every one of them). Returns 0, or -1 with a one-line error. */
int bench_select(const char *list, char *err, size_t errlen);
/* After bench_select: hands the config file's sections to the benchmarks that own them (the snippets,
 * bench/snippet_cfg.h) and checks that a selected benchmark has what it needs (bench=snippet needs a
 * [snippet NAME] section). 0, or -1 with one line in err. */
int bench_configure(const char *sections, size_t len, unsigned line, const char *origin, char *err, size_t errlen);
/* Runs the selected benchmarks in table order, each between "== bench" start/finish text lines. */
void bench_run_selected(void);

#endif
