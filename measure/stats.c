/* stats.c - sorting, percentiles, mean/stddev and the robust stop rule for benchmark samples. */
#include "measure/stats.h"

/* NaN compares after every number so that a stray NaN ends up at the tail instead of breaking the heap. */
static ALWAYS_INLINE bool less(double a, double b)
{
    if (__builtin_isnan(a))
        return false;
    if (__builtin_isnan(b))
        return true;
    return a < b;
}

static void sift_down(double *v, size_t root, size_t n)
{
    double x = v[root];
    for (;;) {
        size_t child = 2 * root + 1;
        if (child >= n)
            break;
        if (child + 1 < n && less(v[child], v[child + 1]))
            child++;
        if (!less(x, v[child]))
            break;
        v[root] = v[child];
        root = child;
    }
    v[root] = x;
}

void stats_sort(double *v, size_t n)
{
    if (!v || n < 2)
        return;
    for (size_t i = n / 2; i-- > 0;)
        sift_down(v, i, n);
    for (size_t end = n - 1; end > 0; end--) {
        double t = v[0];
        v[0] = v[end];
        v[end] = t;
        sift_down(v, 0, end);
    }
}

double stats_quantile_sorted(const double *sorted, size_t n, double p)
{
    if (!sorted || n == 0)
        return 0;
    if (!(p > 0)) /* also catches NaN */
        return sorted[0];
    if (p >= 1)
        return sorted[n - 1];
    double h = (double)(n - 1) * p;
    size_t lo = (size_t)h;
    if (lo >= n - 1)
        return sorted[n - 1];
    double frac = h - (double)lo;
    return sorted[lo] + frac * (sorted[lo + 1] - sorted[lo]);
}

double stats_sqrt(double x)
{
    if (__builtin_isnan(x) || x < 0)
        return __builtin_nan("");
    if (x == 0 || __builtin_isinf(x))
        return x;
    /* Halving the biased exponent gives a start within a factor of ~1.4, so a handful of Newton steps
     * reach full precision; the cap covers subnormals and the final one-ulp oscillation. */
    union {
        double d;
        uint64_t u;
    } v = {.d = x};
    v.u = (v.u >> 1) + (0x3ff0000000000000ull >> 1);
    double y = v.d;
    for (int i = 0; i < 64; i++) {
        double next = 0.5 * (y + x / y);
        if (next == y)
            break;
        y = next;
    }
    return y;
}

/* Median absolute deviation from med of sorted x[0..n) without a second buffer: the deviations below
 * and above med are two sorted runs (walking outwards from med), merged until the middle rank(s). */
static double mad_sorted(const double *x, size_t n, double med)
{
    size_t hi = 0;
    while (hi < n && x[hi] < med)
        hi++;
    size_t lo = hi; /* x[0..lo) < med <= x[hi..n) */
    double h = (double)(n - 1) * 0.5;
    size_t want = (size_t)h, rank = 0;
    double frac = h - (double)want, a = 0;
    for (;;) {
        double d;
        if (lo > 0 && (hi >= n || med - x[lo - 1] <= x[hi] - med))
            d = med - x[--lo];
        else
            d = x[hi++] - med;
        if (rank == want) {
            if (frac == 0 || rank + 1 >= n)
                return d;
            a = d;
        } else if (rank == want + 1) {
            return a + frac * (d - a);
        }
        rank++;
    }
}

void stats_compute(double *samples, size_t n, struct stats *out)
{
    if (!out)
        return;
    *out = (struct stats){0};
    if (!samples || n == 0)
        return;
    stats_sort(samples, n);
    while (n > 0 && __builtin_isnan(samples[n - 1]))
        n--;
    if (n == 0)
        return;

    double sum = 0;
    for (size_t i = 0; i < n; i++)
        sum += samples[i];
    double mean = sum / (double)n;
    /* Two passes: summing squared deviations from the mean avoids the cancellation of sum(x^2) - n mean^2. */
    double ss = 0;
    for (size_t i = 0; i < n; i++) {
        double d = samples[i] - mean;
        ss += d * d;
    }

    out->n = n;
    out->min = samples[0];
    out->max = samples[n - 1];
    out->p10 = stats_quantile_sorted(samples, n, 0.10);
    out->median = stats_quantile_sorted(samples, n, 0.50);
    out->p90 = stats_quantile_sorted(samples, n, 0.90);
    out->mean = mean;
    out->stddev = n > 1 ? stats_sqrt(ss / (double)(n - 1)) : 0;
    double am = mean < 0 ? -mean : mean;
    out->cv = am > 0 ? out->stddev / am : 0;
    double amed = out->median < 0 ? -out->median : out->median;
    double mad = mad_sorted(samples, n, out->median);
    out->spread = mad == 0 ? 0 : amed > 0 ? 1.4826 * mad / amed : __builtin_inf();
    size_t lo, hi;
    bool exact;
    stats_median_ci_ranks(n, &lo, &hi, &exact);
    out->ci_lo = samples[lo];
    out->ci_hi = samples[hi];
}

void stats_median_ci_ranks(size_t n, size_t *lo, size_t *hi, bool *exact)
{
    *lo = 0;
    *hi = n ? n - 1 : 0;
    *exact = false;
    if (n < 6)
        return;
    size_t k = 0;
    if (n <= 1000) {
        /* P(B = j) iterated from 2^-n (representable down to n = 1074); the cumulative sum stays exact
         * enough for a 2.5 % threshold. */
        double p = 1.0;
        for (size_t i = 0; i < n; i++)
            p *= 0.5;
        double cum = p;
        size_t j = 0;
        while (j + 1 < n) {
            double next = p * (double)(n - j) / (double)(j + 1);
            if (cum + next > 0.025)
                break;
            p = next;
            cum += next;
            j++;
        }
        k = j; /* P(B <= j) <= 2.5 % and P(B <= j + 1) > 2.5 % */
    } else {
        double l = ((double)n - 1.96 * stats_sqrt((double)n)) / 2; /* 1-based rank */
        k = l >= 1 ? (size_t)l - 1 : 0;
    }
    if (k > (n - 1) / 2)
        k = (n - 1) / 2;
    *lo = k;
    *hi = n - 1 - k;
    *exact = true;
}

void stats_scale(struct stats *s, double k)
{
    s->min *= k;
    s->p10 *= k;
    s->median *= k;
    s->p90 *= k;
    s->max *= k;
    s->mean *= k;
    s->stddev *= k < 0 ? -k : k;
    s->ci_lo *= k;
    s->ci_hi *= k;
    s->next_lo *= k;
    s->next_hi *= k;
    if (k < 0) { /* a negative factor swaps the next-run interval's ends (the CI keeps its fields as before) */
        double t = s->next_lo;
        s->next_lo = s->next_hi;
        s->next_hi = t;
    }
    s->allow_lo *= k < 0 ? -k : k;
    s->allow_hi *= k < 0 ? -k : k;
}

static double nonneg(double v) { return v > 0 ? v : 0; } /* also NaN -> 0 */

void stats_widen(struct stats *s, double lo, double hi)
{
    lo = nonneg(lo);
    hi = nonneg(hi);
    s->ci_lo -= lo;
    s->ci_hi += hi;
    s->allow_lo += lo;
    s->allow_hi += hi;
    if (s->next_level > 0) {
        s->next_lo -= 2 * lo;
        s->next_hi += 2 * hi;
    }
}

void stats_scale_unc(struct stats *s, double k, double u)
{
    u = nonneg(u);
    double lo = s->ci_lo, hi = s->ci_hi, xlo = s->next_lo, xhi = s->next_hi;
    stats_scale(s, k);
    if (!(k > 0) || u == 0)
        return;
    /* The bounds in the new unit, each at the end of the factor's range that moves it outwards. */
    double nlo = lo * k * (lo >= 0 ? 1 - u : 1 + u);
    double nhi = hi * k * (hi >= 0 ? 1 + u : 1 - u);
    stats_widen(s, s->ci_lo - nlo, nhi - s->ci_hi);
    if (s->next_level > 0) { /* this run's factor and the next run's own, each at its outward end */
        double dl = xlo >= 0 ? 1 - u : 1 + u, dh = xhi >= 0 ? 1 + u : 1 - u;
        s->next_lo = xlo * k * dl * dl;
        s->next_hi = xhi * k * dh * dh;
    }
}

/* C(n, k) as a double, to a few ulps (C(64, 32), the largest used here, is about 2^61): the probabilities it
 * gives are compared with 95 %, far coarser. */
static double binom(size_t n, size_t k)
{
    if (k > n)
        return 0;
    if (k > n - k)
        k = n - k;
    double c = 1;
    for (size_t i = 1; i <= k; i++)
        c = c * (double)(n - k + i) / (double)i;
    return c;
}

void stats_next_median_ranks(size_t r, size_t *lo, size_t *hi, double *level)
{
    *lo = 0;
    *hi = r ? r - 1 : 0;
    *level = 0;
    if (r < 2 || r > STATS_MAX_REPLICATES)
        return;
    size_t h = (r + 1) / 2;
    double total = binom(2 * r, r), cum = 0, best = 0;
    size_t l = 0;
    for (size_t k = 0; k <= (r - 1) / 2; k++) {
        cum += binom(k + h - 1, h - 1) * binom(2 * r - k - h, r - h) / total; /* P(K <= k) */
        double lv = 1 - 2 * cum;
        if (k == 0)
            best = lv;
        if (lv < 0.95)
            break;
        l = k;
        best = lv;
    }
    *lo = l;
    *hi = r - 1 - l;
    *level = best;
}

static double median_of(double *v, size_t n)
{
    stats_sort(v, n);
    return stats_quantile_sorted(v, n, 0.5);
}

void stats_replicates(const struct stats *reps, size_t r, struct stats *out)
{
    double med[STATS_MAX_REPLICATES], w[STATS_MAX_REPLICATES];
    size_t m = 0;
    *out = (struct stats){0};
    if (r > STATS_MAX_REPLICATES)
        r = STATS_MAX_REPLICATES;
    for (size_t k = 0; k < r; k++) {
        if (reps[k].n == 0)
            continue;
        if (m == 0) {
            out->min = reps[k].min;
            out->max = reps[k].max;
        }
        out->min = MIN(out->min, reps[k].min);
        out->max = MAX(out->max, reps[k].max);
        out->n += reps[k].n;
        med[m++] = reps[k].median;
    }
    if (m == 0)
        return;
    if (m == 1) { /* one replicate is a plain series: its own statistics and interval */
        for (size_t k = 0; k < r; k++)
            if (reps[k].n)
                *out = reps[k];
        out->replicates = 1;
        out->within_ci = out->between_spread = 0;
        return;
    }
    out->replicates = m;
    /* the location and its interval: across the replicates */
    stats_sort(med, m);
    out->median = stats_quantile_sorted(med, m, 0.5);
    size_t lo, hi;
    bool exact;
    stats_median_ci_ranks(m, &lo, &hi, &exact);
    out->ci_lo = med[lo];
    out->ci_hi = med[hi];
    stats_next_median_ranks(m, &lo, &hi, &out->next_level);
    out->next_lo = med[lo];
    out->next_hi = med[hi];
    /* Each replicate's median is known only to within its allowance (a reading's tick, its overhead), and an
     * order statistic of values each moved by at most a moves by at most a: the interval across the replicates
     * takes the largest allowance of any replicate on each side. */
    double alo = 0, ahi = 0;
    for (size_t k = 0; k < r; k++) {
        if (!reps[k].n)
            continue;
        alo = MAX(alo, nonneg(reps[k].allow_lo));
        ahi = MAX(ahi, nonneg(reps[k].allow_hi));
    }
    stats_widen(out, alo, ahi);
    out->between_spread = stats_robust_cv(med, m);
    /* what the samples within a replicate look like: the typical replicate's */
#define TYPICAL(field)                                                                                            \
    do {                                                                                                       \
        size_t i = 0;                                                                                          \
        for (size_t k = 0; k < r; k++)                                                                         \
            if (reps[k].n)                                                                                     \
                w[i++] = reps[k].field;                                                                        \
        out->field = median_of(w, i);                                                                          \
    } while (0)
    TYPICAL(p10);
    TYPICAL(p90);
    TYPICAL(mean);
    TYPICAL(stddev);
    TYPICAL(cv);
    TYPICAL(spread);
#undef TYPICAL
    size_t i = 0;
    for (size_t k = 0; k < r; k++) {
        if (!reps[k].n)
            continue;
        double am = reps[k].median < 0 ? -reps[k].median : reps[k].median;
        double half = (reps[k].ci_hi - reps[k].ci_lo) / 2;
        w[i++] = am > 0 ? half / am : (half > 0 ? __builtin_inf() : 0);
    }
    out->within_ci = median_of(w, i);
}

static double recip(double k, double x) { return x > 0 ? k / x : 0; }

void stats_reciprocal(const struct stats *x, double k, struct stats *out)
{
    *out = (struct stats){
        .n = x->n,
        .min = recip(k, x->max),
        .p10 = recip(k, x->p90),
        .median = recip(k, x->median),
        .p90 = recip(k, x->p10),
        .max = recip(k, x->min),
        .cv = x->cv,         /* first order: cv(1/x) = cv(x) */
        .spread = x->spread, /* likewise */
        .ci_lo = recip(k, x->ci_hi),
        .ci_hi = recip(k, x->ci_lo),
        .next_lo = recip(k, x->next_hi),
        .next_hi = recip(k, x->next_lo),
        .next_level = x->next_level,
        /* what the allowance of x moves the reciprocal's bounds by (the bounds above already hold it) */
        .allow_lo = nonneg(recip(k, x->ci_hi - nonneg(x->allow_hi)) - recip(k, x->ci_hi)),
        .allow_hi = nonneg(recip(k, x->ci_lo) - recip(k, x->ci_lo + nonneg(x->allow_lo))),
        .replicates = x->replicates,
        .within_ci = x->within_ci,           /* relative: kept to first order */
        .between_spread = x->between_spread, /* likewise */
    };
    out->mean = out->median;
}

double stats_robust_cv(const double *samples, size_t n)
{
    double w[STATS_STOP_WINDOW];
    size_t m = 0;

    if (!samples || n == 0)
        return 0;
    /* The most recent window: early samples may still carry warm-up effects. */
    size_t first = n > STATS_STOP_WINDOW ? n - STATS_STOP_WINDOW : 0;
    for (size_t i = first; i < n; i++)
        if (!__builtin_isnan(samples[i]))
            w[m++] = samples[i];
    if (m == 0)
        return 0;
    stats_sort(w, m);
    double med = stats_quantile_sorted(w, m, 0.5);
    for (size_t i = 0; i < m; i++)
        w[i] = w[i] > med ? w[i] - med : med - w[i];
    stats_sort(w, m);
    double mad = stats_quantile_sorted(w, m, 0.5);
    double am = med < 0 ? -med : med;
    if (mad == 0)
        return 0;
    if (am == 0)
        return __builtin_inf();
    return 1.4826 * mad / am;
}

double stats_ci_rel_halfwidth(const double *samples, size_t n) { return stats_ci_rel_halfwidth_allow(samples, n, 0); }

double stats_ci_rel_halfwidth_allow(const double *samples, size_t n, double allow)
{
    double w[STATS_STOP_WINDOW];
    size_t m = 0;

    if (!samples || n == 0)
        return __builtin_inf();
    size_t first = n > STATS_STOP_WINDOW ? n - STATS_STOP_WINDOW : 0;
    for (size_t i = first; i < n; i++)
        if (!__builtin_isnan(samples[i]))
            w[m++] = samples[i];
    size_t lo, hi;
    bool exact;
    stats_median_ci_ranks(m, &lo, &hi, &exact);
    if (!exact)
        return __builtin_inf();
    stats_sort(w, m);
    double med = stats_quantile_sorted(w, m, 0.5);
    double half = (w[hi] - w[lo]) / 2 + nonneg(allow);
    double am = med < 0 ? -med : med;
    if (half == 0)
        return 0;
    return am > 0 ? half / am : __builtin_inf();
}

bool stats_should_stop(const double *samples, size_t n, size_t min_n, size_t max_n, double target_ci)
{
    if (max_n > 0 && n >= max_n)
        return true;
    if (n < min_n || n == 0 || !(target_ci > 0))
        return false;
    return stats_ci_rel_halfwidth(samples, n) <= target_ci;
}

bool stats_should_stop_allow(const double *samples, size_t n, size_t min_n, size_t max_n, double target_ci,
                             double allow)
{
    if (max_n > 0 && n >= max_n)
        return true;
    if (n < min_n || n == 0 || !(target_ci > 0))
        return false;
    return stats_ci_rel_halfwidth_allow(samples, n, allow) <= target_ci;
}
