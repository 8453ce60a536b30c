/* stats.h - robust summary statistics of benchmark samples and the adaptive-sampling stop rule. */
#ifndef PMB_MEASURE_STATS_H
#define PMB_MEASURE_STATS_H

#include "kernel/klib.h"

/* Summary of n samples. Percentiles use linear interpolation between closest ranks (Hyndman & Fan
 * type 7, the default of R and numpy): with the samples sorted x[0..n-1], the p-quantile is
 *   h = (n - 1) p,  q = x[floor(h)] + (h - floor(h)) (x[floor(h) + 1] - x[floor(h)]),
 * so the median of an even count is the mean of the two middle samples. stddev is the sample standard
 * deviation (n - 1 in the denominator, 0 for n = 1); cv = stddev / |mean| (0 when mean is 0).
 * spread is the robust coefficient of variation over all n samples (1.4826 MAD / |median|, see
 * stats_robust_cv), the figure records publish. ci_lo/ci_hi bound a distribution-free 95 % confidence
 * interval of the median from order statistics (stats_median_ci_ranks). */
struct stats {
    size_t n;
    double min, p10, median, p90, max, mean, stddev, cv;
    double spread;
    double ci_lo, ci_hi;
    /* A figure measured in independent replicates (stats_replicates, docs/measurement.md "Replicates"):
     * replicates > 1, median and CI across the replicates' medians; the rest describes the samples.
     * 0 or 1: one series of samples, within_ci and between_spread unused. */
    size_t replicates;
    double within_ci;      /* median over the replicates of their own CI half-width / |median| (a fraction) */
    double between_spread; /* robust CV of the replicates' medians (1.4826 MAD / |median|, a fraction) */
    /* What ci_lo / ci_hi hold beyond the sign-test interval of the samples (or of the replicates' medians), in
     * the figure's unit: the allowance for what no sample scatters (docs/measurement.md "Statistics": the
     * reading's +-1 clock step and the overhead estimate's own interval, per region over iters x work; a unit
     * conversion's uncertainty). ci_lo = x[l] - allow_lo, ci_hi = x[u] + allow_hi. 0: none. */
    double allow_lo, allow_hi;
    /* A figure of replicates > 1 only (0 otherwise): where another run's figure (the median of its own R
     * replicates, set up the same way) falls, at probability next_level or more, whatever the distribution, as
     * long as that run's replicates are exchangeable with this run's (stats_next_median_ranks;
     * docs/measurement.md "Replicates"). ci_lo / ci_hi say how precisely this run knows its median; this is what
     * the next run will report. It holds every allowance twice (this run's and the next run's reading and
     * calibration). */
    double next_lo, next_hi, next_level;
};

/* Ascending heapsort: in place, O(n log n) worst case, no recursion (kernel stacks are small). NaNs
 * sort after every number. */
void stats_sort(double *v, size_t n);

/* Type-7 quantile of an already sorted array (p in [0, 1], clamped); 0 for n == 0. */
double stats_quantile_sorted(const double *sorted, size_t n, double p);

/* Sorts samples in place and summarises them. NaN samples are ignored (out->n counts the others);
 * with no samples left every field is 0. */
void stats_compute(double *samples, size_t n, struct stats *out);

/* Ranks (0-based, into the sorted samples) of a distribution-free confidence interval of the median at
 * level >= 95 %: the largest l with P(B <= l) <= 2.5 % for B ~ Binomial(n, 1/2), and u = n - 1 - l, so
 * that P(x[l] <= true median <= x[u]) = 1 - 2 P(B <= l) >= 95 % whatever the distribution (exact binomial sums up to n = 1000,
 * the normal approximation l = floor((n - 1.96 sqrt(n)) / 2) - 1 above, clamped to the sample). With
 * n < 6 no such interval exists: the whole sample (0, n-1) is returned and *exact is false. */
void stats_median_ci_ranks(size_t n, size_t *lo, size_t *hi, bool *exact);

/* Ranks (0-based, into this run's R sorted replicate medians) of a distribution-free prediction interval for
 * another run's median of R replicates: with the 2R replicates of the two runs exchangeable, the number K of
 * this run's medians below the other run's median Y (its ceil(R/2)-th order statistic; for even R the lower
 * of the two it averages, which bounds the average's probability from below) has
 *   P(K = k) = C(k + h - 1, h - 1) C(2R - k - h, R - h) / C(2R, R),  h = ceil(R / 2),
 * and x[l] <= Y <= x[R - 1 - l] exactly when l + 1 <= K <= R - 1 - l, so level = 1 - 2 P(K <= l). Returns the
 * largest l whose level is >= 95 % and its level; where even the whole range (l = 0) is below 95 % (R <= 7:
 * R = 9 gives 97.06 %, R = 7 93.0 %, R = 5 83.3 %), l = 0 and that lower level. For comparison, the 95 %
 * confidence interval of the median (stats_median_ci_ranks, x[1]..x[7] of 9) holds the other run's median
 * with probability 86.9 % only: it says how well this run knows its median, not where the next run lands.
 * R in 2..STATS_MAX_REPLICATES; other R: (0, R - 1 or 0) and level 0. */
void stats_next_median_ranks(size_t r, size_t *lo, size_t *hi, double *level);

/* Combines R >= 1 replicates' statistics (each from stats_compute, or from this function with R = 1) into
 * one figure: median = the median of the replicate medians, ci_lo / ci_hi = the distribution-free interval
 * of stats_median_ci_ranks over the R sorted replicate medians (R >= 6 for 95 %; below, the range of the
 * medians), next_lo / next_hi / next_level the prediction interval of stats_next_median_ranks over them (R >= 2;
 * each widened by twice the largest replicate allowance), n = the samples of all replicates, min / max over all of them, p10 / p90 / spread / cv / mean
 * the median of the replicates' values (they describe the samples within a replicate), within_ci and
 * between_spread as in struct stats. Replicates with no samples are skipped; none left: every field 0; one
 * left: its statistics as they are (replicates 1).
 * R at most STATS_MAX_REPLICATES. */
#define STATS_MAX_REPLICATES 32
void stats_replicates(const struct stats *reps, size_t r, struct stats *out);

/* Scales every location field of s by k > 0 (unit conversion); spread, cv and n are unchanged. */
void stats_scale(struct stats *s, double k);
/* Widens the interval by lo below and hi above (each >= 0; negative or NaN counts as 0), adding them to
 * allow_lo / allow_hi: an uncertainty that no sample scatters. A next-run interval (next_level > 0) is widened by
 * twice as much: the next run has an uncertainty of its own of the same size. */
void stats_widen(struct stats *s, double lo, double hi);
/* stats_scale by a factor known only to within a relative u >= 0 (a calibrated rate): the location fields
 * are scaled by k, and the interval by interval arithmetic on its bounds: ci_lo x k (1 - u), ci_hi x k (1 + u)
 * (for ci_lo >= 0; a negative bound moves outwards the same way), the added width entering allow_lo / allow_hi.
 * A next-run interval's bounds by (1 -+ u)^2: this run's factor and the next run's own. */
void stats_scale_unc(struct stats *s, double k, double u);
/* The statistics of k / x from those of x (k > 0, x > 0): quantiles and interval bounds (next_lo / next_hi
 * too) swap ends (the reciprocal is monotone decreasing), spread and cv are kept to first order. Used for rates from times (bytes / s). */
void stats_reciprocal(const struct stats *x, double k, struct stats *out);

/* Window of most recent samples the stop rule looks at (copied to the stack: 8 bytes each). */
#define STATS_STOP_WINDOW 256

/* Robust coefficient of variation: 1.4826 x MAD / |median|, where MAD is the median absolute deviation
 * from the median and 1.4826 makes it estimate the standard deviation of normally distributed data.
 * Unlike stddev / mean, one interrupt-sized outlier cannot move it. Uses the last STATS_STOP_WINDOW
 * samples when there are more; 0 when all are equal, +inf when the median is 0 but the MAD is not. */
double stats_robust_cv(const double *samples, size_t n);

/* Half-width of the 95 % confidence interval of the median (stats_median_ci_ranks) relative to |median|,
 * over the last STATS_STOP_WINDOW samples; +inf with fewer than 6 samples (no such interval) or a zero
 * median with a non-zero width, 0 when the interval has no width. */
double stats_ci_rel_halfwidth(const double *samples, size_t n);
/* The same with an allowance added to the half-width: (half-width + allow) / |median| (allow >= 0, absolute, in
 * the samples' unit: what stats_widen will add to each side). */
double stats_ci_rel_halfwidth_allow(const double *samples, size_t n, double allow);

/* Adaptive sampling: true when n >= max_n (max_n > 0), or when n >= min_n and the median is known to
 * within target_ci: stats_ci_rel_halfwidth(samples, n) <= target_ci. target_ci <= 0 disables the early
 * stop. */
bool stats_should_stop(const double *samples, size_t n, size_t min_n, size_t max_n, double target_ci);
/* The same rule on the interval the figure will publish: stats_ci_rel_halfwidth_allow(samples, n, allow). */
bool stats_should_stop_allow(const double *samples, size_t n, size_t min_n, size_t max_n, double target_ci,
                             double allow);

/* Square root for freestanding code (no libm): Newton's iteration, correctly rounded in practice.
 * Negative or NaN input gives NaN. */
double stats_sqrt(double x);

#endif
