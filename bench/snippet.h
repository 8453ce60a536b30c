/* snippet.h - user snippets (nanoBench-style): the code of [snippet NAME] sections timed and counted by the one engine. */
#ifndef PMB_BENCH_SNIPPET_H
#define PMB_BENCH_SNIPPET_H

#include "kernel/klib.h"
#include "bench/snippet_cfg.h"

#define SNIPPET_WHAT "user snippets: machine code from [snippet NAME] sections, n vs 2n copies, cycles and events per copy"

/* Parses the config file's sections (plat_config's `sections`, or the text given) into the run's snippets.
 * 0, or -1 with one line in err. Called once at start-up, before the run record's benchmarks run. */
int snippet_configure(const char *text, size_t len, unsigned line, const char *origin, char *err, size_t errlen);
/* The snippets configured. */
const struct snippet_set *snippet_set(void);

/* The benchmark (bench= snippet): every configured snippet, one `snippet` record each. */
void bench_snippet(void);

/* ---- exposed for the unit tests ------------------------------------------------------------------------ */

struct snippet_result {
    bool measured;
    const char *why;            /* !measured: why (static or in the result's buffer) */
    double cycles;              /* the aggregate (median or min) in core cycles per copy */
    double tsc_per_iter;        /* the same in TSC ticks */
    double ratio;               /* core cycles per TSC tick used */
    const char *cycles_method;  /* "fixed_counter:..." / "core_tsc_ratio:...": points to cycles_method_buf */
    char cycles_method_buf[80];
    double instructions;        /* per copy, NaN when not counted */
    const char *instructions_method;
    size_t n_counters;
    double counters[SNIPPET_EVENTS_MAX]; /* per copy, NaN when not counted */
    const char *counter_used[SNIPPET_EVENTS_MAX];
    char counters_why[320];
};

/* Measures one snippet whose two variants are already generated: big(r14) runs `copies_big` copies, small(r14)
 * `copies_small` (differencing), or big alone. clock NULL: the TSC. Fills st (cycles per copy) and r. */
struct meas_result;
struct stats;
int snippet_measure(const struct snippet *s, void (*big)(void *), void (*small)(void *), void *r14,
                    uint64_t (*clock)(void *), void *clock_ctx, struct meas_result *mr, struct snippet_result *r);

#endif
