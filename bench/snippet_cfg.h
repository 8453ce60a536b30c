/* snippet_cfg.h - the [snippet NAME] sections of pmubench.cfg: user machine code and how to measure it (docs/config.md, "Snippets"). */
#ifndef PMB_BENCH_SNIPPET_CFG_H
#define PMB_BENCH_SNIPPET_CFG_H

#include "kernel/klib.h"

#define SNIPPET_MAX 16            /* snippets per run */
#define SNIPPET_NAME_MAX 31       /* [a-z0-9_], 1..31 characters */
#define SNIPPET_CODE_MAX 2048     /* bytes of code= (several code lines append) */
#define SNIPPET_INIT_MAX 2048     /* bytes of init= */
#define SNIPPET_UNROLL_MAX 100000 /* copies of the code per loop body */
#define SNIPPET_LOOP_MAX 1000000000u
#define SNIPPET_WARMUP_MAX 1000000u
#define SNIPPET_EVENTS_MAX 8      /* events= specifiers per snippet */
#define SNIPPET_EVENT_LEN 96      /* longest specifier, terminator included */
#define SNIPPET_TIMEOUT_MAX_MS 600000u
#define SNIPPET_GEN_MAX (4u << 20) /* generated code of one variant (2 x unroll copies), bytes */

enum snippet_agg { SNIPPET_AGG_MEDIAN, SNIPPET_AGG_MIN };

struct snippet {
    char name[SNIPPET_NAME_MAX + 1];
    uint8_t code[SNIPPET_CODE_MAX];
    size_t code_len;
    uint8_t init[SNIPPET_INIT_MAX];
    size_t init_len;
    uint32_t unroll;      /* default 100 */
    uint32_t loop;        /* 0: no loop (default); else iterations of the unrolled body, R15 counts them */
    uint32_t warmup;      /* untimed calls before measuring, default 5 */
    bool differencing;    /* n vs 2n (default on) */
    enum snippet_agg aggregate;
    uint32_t timeout_ms;  /* watchdog, default 5000 */
    char events[SNIPPET_EVENTS_MAX][SNIPPET_EVENT_LEN];
    size_t n_events;
    unsigned line;        /* line of its [snippet NAME] header */
};

struct snippet_set {
    struct snippet s[SNIPPET_MAX];
    size_t n;
};

/*
 * Parses the sections text (struct config's `sections`, first line number `line`) into *out:
 *   [snippet NAME]   then key = value lines: code, init (hex bytes, blanks between bytes allowed; repeated
 *   lines append), unroll, loop, warmup, events (comma-separated specifiers), differencing (on|off),
 *   aggregate (median|min), timeout_ms; '#' comments as in the rest of the file.
 * Every snippet needs code; any other section kind is an error. Returns 0, or -1 with one line
 * "<origin>:<line>: <what>" in err (out is then empty). text may be NULL (no sections: 0 snippets).
 */
int snippet_cfg_parse(struct snippet_set *out, const char *text, size_t len, unsigned line, const char *origin,
                      char *err, size_t errlen);

/* Copies of the code per timed call of the measured variant: unroll x max(loop, 1). */
static inline uint64_t snippet_iters_per_call(const struct snippet *s)
{
    return (uint64_t)s->unroll * (s->loop ? s->loop : 1);
}

#endif
