/* penalty.h - the `penalty` benchmark (the P_i of cycle accounting: TLB miss, store forwarding, 4K aliasing, split loads, divider, fill-buffer hit, cache hits); the loops are timed by bench/timed_loop.h. */
#ifndef PMB_BENCH_PENALTY_H
#define PMB_BENCH_PENALTY_H

#include "kernel/klib.h"
#include "kernel/json.h"
#include "measure/stats.h"
#include "measure/verdict.h"
#include "measure/serialize.h"
#include "bench/timed_loop.h"

#define PENALTY_WHAT "penalties for cycle accounting: DTLB miss (4K vs 2M pages), store forwarding, 4K aliasing, " \
                     "line/page split loads, divider latency, fill-buffer hit, L2/LLC/DRAM hits"

/* Runs every penalty measurement on the benchmark's own CPU, emits one `penalty` record each (and a table),
 * and hands the results to cycle accounting (ca_penalty_set). */
void bench_penalty(void);

/* The self-pointing 8-byte words of l1_hit and the split loads, at offsets of a PM_SELF_BUF_BYTES buffer of 4 KiB
 * pages: an aligned word inside one line, a word across a 64-byte line, a word across a 4 KiB page. No two
 * overlap, so each loop keeps its own word and their replicates interleave in time (pm_measure_interleaved). */
#define PM_SELF_BUF_BYTES (3 * 4096)
#define PM_SELF_WORD_BYTES 8
enum { PM_SELF_L1, PM_SELF_LINE_SPLIT, PM_SELF_PAGE_SPLIT, PM_SELF_N };
struct pm_self_word {
    const char *name;
    uint32_t off; /* byte offset of the word in the buffer */
    const char *method;
};
extern const struct pm_self_word pm_self_words[PM_SELF_N];

/* A latency per link of a dependent chain under PM_MIN_CYCLES_PER_LINK core cycles is not what the chain's name
 * says (memory renaming of a store -> load pair, an add-immediate executed at rename, overlapped links): such a
 * penalty is never `ok`. Returns the suspect reason in buf, or NULL when cycles_per_link is at least 1 (or NaN). */
#define PM_MIN_CYCLES_PER_LINK 1.0
const char *pm_sub_cycle_reason(const char *name, double cycles_per_link, char *buf, size_t len);

/* Per-event cost from two measurements of the same loop: (cycles_a - cycles_b) / (events_a - events_b).
 * NaN when the event difference is not positive or an input is not finite. */
double pm_penalty(double cycles_a, double cycles_b, double events_a, double events_b);
/* Spread of a difference a - b of two medians with coefficients of variation cv_a, cv_b:
 * sqrt((a cv_a)^2 + (b cv_b)^2) / |a - b| (inf when a == b). */
double pm_diff_cv(double a, double cv_a, double b, double cv_b);

/* The one writer of measured `penalty` records (the branch benchmark's `branch_mispredict` included): begins
 * the record and writes its common keys: name, the figure in core cycles through the statistics emitter
 * (measure/stats_json.h), its median in ns, method, reference, cycles_method. The caller adds its own keys
 * and ends the record (plat_rec_end). */
struct json *pm_penalty_begin(const char *name, const struct stats *cycles, double ns, const struct verdict *v,
                              const char *method, const char *reference, const char *cycles_method);
/* A penalty's verdict: ok / noisy from its CI (verdict_from_stats), suspect when it is not positive or when
 * its 95 % CI reaches down to zero (smaller than its own uncertainty). Cycle accounting never uses a
 * suspect penalty. */
void pm_penalty_verdict(struct verdict *v, const struct stats *c, bool converged, double target_ci, size_t min_n);
/* The figure of a difference of two medians a - b: median a - b, spread propagated (pm_diff_cv), the CI
 * half-widths of a and b added in quadrature on each side, n = min; min/p10/p90/max undefined (NaN). */
void pm_stats_diff(const struct stats *a, const struct stats *b, struct stats *d);

#endif
