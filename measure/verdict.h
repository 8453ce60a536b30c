/* verdict.h - the quality verdict every figure carries (ok / noisy / suspect / unavailable) and the run's ledger of figures that cross-checks and the summary read. */
#ifndef PMB_MEASURE_VERDICT_H
#define PMB_MEASURE_VERDICT_H

#include "kernel/klib.h"
#include "kernel/json.h"
#include "measure/stats.h"

/* Worst last: a verdict only ever moves down this list (docs/measurement.md, "Verdicts").
 *   ok           measured, its 95 % CI within the profile's target, no check failed;
 *   noisy        measured, but the CI is wider than the profile's target (or too few samples for one);
 *   suspect      failed a sanity check (a penalty <= 0 or inside its own uncertainty, the wrong page size,
 *                a cache level matched by no knee) or a cross-check with another method;
 *   unavailable  not measured here, with the reason. */
enum quality {
    QUALITY_OK,
    QUALITY_NOISY,
    QUALITY_SUSPECT,
    QUALITY_UNAVAILABLE,
    QUALITY_COUNT,
};

#define VERDICT_REASON_MAX 400

struct verdict {
    enum quality q;
    bool converged; /* the stop rule reached its CI target (not the budget or the sample cap) */
    char reason[VERDICT_REASON_MAX]; /* empty when ok; reasons of several checks joined with "; " */
};

const char *quality_name(enum quality q);

/* ok only when s has at least min_n samples (the profile's minimum, meas_min_samples), sampling converged
 * (the stop rule reached its CI target: not the time budget or the sample cap), a 95 % interval exists (6
 * samples; measured in replicates: 6 replicates) and its half-width is within target_ci x |median|; noisy
 * otherwise, with the reason(s); unavailable when s has no samples. A derived figure (n = 0, an interval
 * from the figures it comes from) is judged by verdict_derived, never here. */
void verdict_from_stats(struct verdict *v, const struct stats *s, bool converged, double target_ci, size_t min_n);
/* A figure derived from others (a plateau of the sweep, an inferred cache level): the worst verdict of the
 * figures it comes from (qs[0..n)), noisy when it comes from none, with the reason why. */
void verdict_derived(struct verdict *v, const enum quality *qs, size_t n, const char *what);
/* Unavailable with the reason. */
void verdict_unavailable(struct verdict *v, const char *reason);
/* Moves v down to q (never up) and appends the reason. */
void verdict_worsen(struct verdict *v, enum quality q, const char *fmt, ...) __attribute__((format(printf, 3, 4)));

/* "converged", "quality" and, when not ok, "quality_reason". */
void verdict_json(struct json *j, const struct verdict *v);

/* ---- the run's ledger ----------------------------------------------------------------------------------
 * Every figure a record publishes is entered under a name unique in the run ("data_source/L3_unshared",
 * "penalty/dtlb_miss_4k", ...; the record's "figure" key). Cross-checks look figures up here and mark the
 * ones that disagree; the summary at the end counts the final verdicts. */

#define LEDGER_MAX 1024
#define LEDGER_NAME_MAX 64
#define LEDGER_WHY_MAX 128

struct ledger_entry {
    char name[LEDGER_NAME_MAX];
    const char *unit;
    double median, ci_lo, ci_hi;
    enum quality q;
    char why[LEDGER_WHY_MAX]; /* what marked it suspect after its record (a cross-check's quantity), or "" */
};

void ledger_reset(void);
/* Enters (or replaces) a figure. Returns false when the ledger is full (the figure is then not counted). */
bool ledger_add(const char *name, const char *unit, const struct stats *s, enum quality q);
const struct ledger_entry *ledger_find(const char *name);
/* Marks a figure suspect (a disagreeing cross-check, named in why); false when it is not in the ledger. Every
 * consumer of a figure's verdict after its record (cycle accounting, the summary) reads the ledger's. */
bool ledger_mark_suspect(const char *name, const char *why);
/* The final quality of a figure: the ledger's (its record's, made worse by later checks), or `q` when the
 * figure is not in the ledger; *why (optional) gets what made it worse than q, or NULL. */
enum quality ledger_final_quality(const char *name, enum quality q, const char **why);
/* Figures per final quality, and how many the ledger could not hold. */
void ledger_counts(size_t counts[QUALITY_COUNT], size_t *dropped);

/* The figure's keys through the one statistics emitter plus its verdict, and its ledger entry:
 * "figure": name, then stats_json's keys in unit, then verdict_json's. */
void figure_json(struct json *j, const char *name, const struct stats *s, const char *unit, const struct verdict *v);

#endif
