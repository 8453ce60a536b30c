/* crosscheck.h - quantities measured two ways compared by the tool itself (`crosscheck` records), and the run's `summary` of verdicts. */
#ifndef PMB_BENCH_CROSSCHECK_H
#define PMB_BENCH_CROSSCHECK_H

#include "kernel/klib.h"

/*
 * A crosscheck record: {quantity, a, b, a_value, b_value, unit, ratio (a / b), tolerance, agrees, reason?,
 * suspect: [figures marked]}. a and b name figures (the "figure" key of their records, or a calibration
 * such as "run/tsc_hz"). The two agree when |a / b - 1| <= tolerance; the tolerances are stated per
 * quantity in docs/measurement.md and never widened to make a check pass. When they disagree, each
 * figure named in `blame` (both, unless the caller can say which method is wrong, and says why in `why`)
 * is marked suspect in the run's ledger; the summary counts it so. agrees is null (and nothing is marked)
 * when one side is missing or not a measured value: the record then says why.
 */
struct crosscheck {
    const char *quantity; /* what both measure, e.g. "L3 hit latency (unshared line)" */
    const char *a, *b;    /* figure names */
    double a_value, b_value;
    const char *unit;
    double tolerance;     /* relative */
    const char *blame;    /* NULL: both; else the one figure judged wrong when they disagree */
    const char *why;      /* why blame, or a note for the record (may be NULL) */
    const char *not_judged; /* non-NULL: not judged, for this reason (one side could not be measured) */
    const char *third;    /* optional: the same quantity measured a third way (same unit): a ledger figure, or
                             a value a benchmark published with crosscheck_note ("<figure>.<key>"), looked up
                             when the check is judged. When a and b disagree and it agrees with exactly one of
                             them (same tolerance), only the other is blamed; otherwise blame applies. The record
                             names it and gives its value (third_value, null when it was not measured). */
    double a_lo, a_hi;    /* optional (both > 0): the interval a_value's measurement and conversion allow; the
                             record's "a_interval" */
    const char *const *cycles_suspect; /* optional: when they disagree, figures whose `cycles` conversion the
                                          check blames: the record's "cycles_suspect" where their own figure
                                          holds (ns), and marked suspect (the record's "suspect") where their
                                          own unit is cycles (a penalty); a list longer than one record holds
                                          goes on in `crosscheck_cycles` records right after it */
    size_t n_cycles_suspect;
};

/* Tolerances (relative, |a / b - 1|), with the reasoning in docs/measurement.md "Cross-checks":
 * one latency by two chase methods (same level, same TLB reach): the methods differ only in how the lines
 * were placed and whether the loop ran warm, 15 %; */
#define XC_TOL_LATENCY 0.15
/* the same DRAM latency from different benchmarks (different buffers, pages and chains), 15 %; */
#define XC_TOL_DRAM 0.15
/* a clock against its reference over the calibration windows, 0.5 %; */
#define XC_TOL_CLOCK 0.005
/* a core/TSC ratio from two independent dependency chains, 5 %. */
#define XC_TOL_RATIO 0.05

/* Third measurements a later benchmark takes of the Table 2 L1 and L2 rows' latency in core cycles: the penalty
 * benchmark's l1_hit figure (a dependent load hitting L1D) and the full latency of its l2_hit chase (the record's
 * latency_cycles, published with crosscheck_note). */
#define XC_THIRD_L1_CYCLES "penalty/l1_hit"
#define XC_THIRD_L2_CYCLES "penalty/l2_hit.latency_cycles"

/* Emits the record and marks figures; returns 1 agrees, 0 disagrees, -1 not judged. */
int crosscheck_emit(const struct crosscheck *c);
/* The same with both values taken from the ledger (figures already emitted). Missing figures, or ones
 * that are unavailable: not judged, with the reason. */
int crosscheck_figures(const char *quantity, const char *a, const char *b, double tolerance, const char *blame,
                       const char *why);
/* crosscheck_figures with a third ledger figure of the same quantity (struct crosscheck's `third`); NULL: none. */
int crosscheck_figures3(const char *quantity, const char *a, const char *b, const char *third, double tolerance,
                        const char *blame, const char *why);

/* crosscheck_figures3 judged at the end of the run (crosscheck_defer), for a third that a later benchmark measures;
 * the two values are read now. Not judgeable now (a side missing): the record is written now, as
 * crosscheck_figures3 would. */
int crosscheck_figures3_later(const char *quantity, const char *a, const char *b, const char *third,
                              double tolerance, const char *blame, const char *why);

/* Publishes a value that is not a ledger figure (a key of a record: "penalty/l2_hit.latency_cycles", in unit) as
 * a third measurement for checks judged later; replaces an earlier value of that name. At most 16 per run. */
void crosscheck_note(const char *name, double value, const char *unit);

/* Keeps the check (its names, blame and why copied; unit and not_judged must be static strings; values as given)
 * to be judged at the end of the run, after every
 * benchmark: for a check whose third measurement a later benchmark takes (the Table 2 L1 row against the sweep,
 * decided by penalty l1_hit). Returns XC_DEFERRED (or, when too many are kept, crosscheck_emit's answer now). */
#define XC_DEFERRED 2
int crosscheck_defer(const struct crosscheck *c);
/* Judges the kept checks in the order they were kept (bench_run_selected, before the summary); returns how many. */
size_t crosscheck_run_deferred(void);

/* a (not a ledger figure in this unit, e.g. a penalty's median converted to ns) against the ledger figure b, with
 * an optional third (struct crosscheck's; NULL: none); not judged when b is missing, unavailable, valueless or in
 * another unit. */
int crosscheck_value(const char *quantity, const char *a, double a_value, const char *unit, const char *b,
                     const char *third, double tolerance);

/* Counts of this run so far. */
void crosscheck_counts(size_t *total, size_t *judged, size_t *agreeing);
void crosscheck_reset(void);

/* The `summary` record and its line: figures per final quality (ledger), cross-checks judged / agreeing.
 * The last record before `end`. */
void crosscheck_summary(void);

#endif
