/* knee.c - cache-level inference from a latency curve by log-size run segmentation (docs/measurement.md). */
#include "measure/knee.h"
#include "measure/stats.h"

#define INV_LN2 1.4426950408889634074

double knee_log2(double x)
{
    union {
        double d;
        uint64_t u;
    } v = {.d = x};
    int e_adj = 0;
    if (((v.u >> 52) & 0x7ff) == 0) { /* subnormal: scale into the normal range first */
        v.d = x * 0x1p64;
        e_adj = -64;
    }
    int e = (int)((v.u >> 52) & 0x7ff) - 1023 + e_adj;
    v.u = (v.u & 0x000fffffffffffffull) | 0x3ff0000000000000ull;
    double m = v.d; /* x = m 2^e, m in [1, 2) */
    if (m > 1.4142135623730951) {
        m *= 0.5;
        e++;
    }
    /* ln m = 2 atanh(z), z = (m - 1) / (m + 1), |z| <= 0.172: the odd series converges fast. */
    double z = (m - 1) / (m + 1), z2 = z * z, term = z, sum = 0;
    for (int k = 1; k < 80; k += 2) {
        double t = term / k;
        sum += t;
        if (t == 0 || (t < 0 ? -t : t) < 1e-18)
            break;
        term *= z2;
    }
    return (double)e + 2 * sum * INV_LN2;
}

static double dabs(double v) { return v < 0 ? -v : v; }

/* Median of v[s..e] (inclusive); tmp holds at least e - s + 1 doubles. */
static double median_range(const double *v, size_t s, size_t e, double *tmp)
{
    size_t m = e - s + 1;
    for (size_t i = 0; i < m; i++)
        tmp[i] = v[s + i];
    stats_sort(tmp, m);
    return stats_quantile_sorted(tmp, m, 0.5);
}

/* A line through a range of the curve: y = y0 + slope (x - x0). */
struct fit {
    double x0, y0, slope;
};

static double fit_at(const struct fit *f, double x) { return f->y0 + f->slope * (x - f->x0); }

/* Least-squares line over [s..e] (inclusive). */
static struct fit fit_range(const double *x, const double *y, size_t s, size_t e)
{
    double n = (double)(e - s + 1), sx = 0, sy = 0, sxx = 0, sxy = 0;
    for (size_t i = s; i <= e; i++) {
        sx += x[i];
        sy += y[i];
        sxx += x[i] * x[i];
        sxy += x[i] * y[i];
    }
    double den = n * sxx - sx * sx;
    struct fit f = {sx / n, sy / n, den > 0 ? (n * sxy - sx * sy) / den : 0};
    return f;
}

/* A plateau's line for the merge test: least squares (the points are already median-smoothed), with the
 * slope clamped to what a plateau may have, since a merged plateau can contain a ramp. */
static struct fit plateau_fit(const double *x, const double *y, size_t s, size_t e)
{
    struct fit f = fit_range(x, y, s, e);
    f.slope = MAX(-KNEE_MAX_SLOPE, MIN(KNEE_MAX_SLOPE, f.slope));
    return f;
}

static double med3(double a, double b, double c)
{
    if (a > b) {
        double t = a;
        a = b;
        b = t;
    }
    /* now a <= b */
    if (c <= a)
        return a;
    if (c >= b)
        return b;
    return c;
}

struct plateau {
    size_t s, e; /* the flat run */
    size_t knee; /* last point before the rise (>= e after step 5) */
};

int knee_detect(const double *bytes, const double *lat, size_t n, struct knee_level *out, size_t max_out)
{
    double x[KNEE_MAX_POINTS], ls[KNEE_MAX_POINTS], y[KNEE_MAX_POINTS], tmp[KNEE_MAX_POINTS];
    struct plateau pl[KNEE_MAX_POINTS / KNEE_MIN_RUN + 1]; /* plateaus are disjoint, >= KNEE_MIN_RUN points */
    size_t npl = 0;

    if (!bytes || !lat || n < KNEE_MIN_POINTS || n > KNEE_MAX_POINTS || (max_out > 0 && !out))
        return -1;
    for (size_t i = 0; i < n; i++) {
        /* !(v > 0) also rejects NaN; v - v != 0 rejects infinities. */
        if (!(bytes[i] > 0) || !(lat[i] > 0) || bytes[i] - bytes[i] != 0 || lat[i] - lat[i] != 0)
            return -1;
        if (i > 0 && !(bytes[i] > bytes[i - 1]))
            return -1;
    }

    /* 1. Median-of-3 smoothing removes single-point outliers (an SMI, a refresh storm) without blurring
     *    a step; work in log2 of size and latency so that levels are ratios and sizes octaves. */
    for (size_t i = 0; i < n; i++) {
        ls[i] = (i == 0 || i == n - 1) ? lat[i] : med3(lat[i - 1], lat[i], lat[i + 1]);
        x[i] = knee_log2(bytes[i]);
        y[i] = knee_log2(ls[i]);
    }

    const double run_tol = knee_log2(KNEE_RUN_TOL);
    for (size_t i = 0; i < n;) {
        /* 2. Greedy runs: extend while the next point stays within run_tol of the run's median, so slow
         *    drift inside a plateau is followed but a rise of more than x1.2 starts a new run. */
        size_t s = i, e = i;
        double med = y[i];
        while (e + 1 < n && dabs(y[e + 1] - med) <= run_tol) {
            e++;
            med = median_range(y, s, e, tmp);
        }
        i = e + 1;

        /* 3. A plateau has enough points and is wide and flat enough: this rejects the short runs a steep
         *    ramp breaks into (two noisy points can look flat by chance, three rarely do). */
        if (e - s + 1 >= KNEE_MIN_RUN && x[e] - x[s] >= KNEE_MIN_SPAN &&
            dabs(fit_range(x, y, s, e).slope) <= KNEE_MAX_SLOPE)
            pl[npl++] = (struct plateau){s, e, e};
    }

    /* 4. Merge neighbours without a real step between them: the jump is the rise from the end of one
     *    plateau to the start of the next, less what their common slope explains over the gap. A gentle
     *    uniform ramp breaks into runs that are continuous with each other, so it merges back into one. */
    const double min_step = knee_log2(KNEE_MIN_STEP);
    for (bool merged = true; merged && npl > 1;) {
        merged = false;
        for (size_t k = 1; k < npl; k++) {
            struct fit a = plateau_fit(x, y, pl[k - 1].s, pl[k - 1].e);
            struct fit b = plateau_fit(x, y, pl[k].s, pl[k].e);
            double gap = x[pl[k].s] - x[pl[k - 1].e];
            double common = MAX(0.0, MIN(a.slope, b.slope));
            double jump = fit_at(&b, x[pl[k].s]) - fit_at(&a, x[pl[k - 1].e]) - common * gap;
            if (jump < min_step) {
                pl[k - 1].e = pl[k].e;
                for (size_t j = k + 1; j < npl; j++)
                    pl[j - 1] = pl[j];
                npl--;
                merged = true;
                break;
            }
        }
    }

    /* 5. Follow each plateau's line over the unclaimed points after it while they stay within run_tol of
     *    it: a plateau that drifts upward (e.g. DTLB misses that hit the STLB) keeps its knee where
     *    the real rise begins even when a coarse size grid broke its run early. The latency stays the
     *    median of the flat run. */
    for (size_t k = 0; k < npl; k++) {
        size_t limit = k + 1 < npl ? pl[k + 1].s : n;
        struct fit f = plateau_fit(x, y, pl[k].s, pl[k].e);
        while (pl[k].knee + 1 < limit && dabs(y[pl[k].knee + 1] - fit_at(&f, x[pl[k].knee + 1])) <= run_tol)
            pl[k].knee++;
    }

    for (size_t k = 0; k < npl && k < max_out; k++) {
        out[k].latency = median_range(ls, pl[k].s, pl[k].e, tmp);
        out[k].bytes = k + 1 < npl ? bytes[pl[k].knee] : 0;
        out[k].from = bytes[pl[k].s];
        out[k].to = bytes[pl[k].knee];
    }
    return (int)npl;
}

int knee_plateau_at(const struct knee_level *levels, size_t n_levels, double bytes, enum knee_at *where,
                    size_t *after)
{
    enum knee_at w = KNEE_AT_NONE;
    size_t a = 0;
    int at = -1;
    if (levels && n_levels && bytes > 0) {
        if (bytes < levels[0].from) {
            w = KNEE_AT_BELOW;
        } else {
            w = KNEE_AT_ABOVE;
            for (size_t k = 0; k < n_levels; k++) {
                if (bytes < levels[k].from) {
                    w = KNEE_AT_BETWEEN; /* above plateau k - 1's last size, below plateau k's start */
                    a = k - 1;
                    break;
                }
                if (bytes <= levels[k].to) {
                    w = KNEE_AT_IN;
                    at = (int)k;
                    break;
                }
            }
        }
    }
    if (where)
        *where = w;
    if (after)
        *after = a;
    return at;
}

bool knee_agrees(double inferred_bytes, double cpuid_bytes)
{
    if (!(inferred_bytes > 0) || !(cpuid_bytes > 0))
        return false;
    double r = inferred_bytes / cpuid_bytes;
    return r >= KNEE_AGREE_LO && r <= KNEE_AGREE_HI;
}

/* Lexicographic score of a partial matching: more agreements, then more pairs, then smaller distance. */
struct match_score {
    int agree, pairs;
    double dist;
};

static bool score_better(struct match_score a, struct match_score b)
{
    if (a.agree != b.agree)
        return a.agree > b.agree;
    if (a.pairs != b.pairs)
        return a.pairs > b.pairs;
    return a.dist < b.dist;
}

int knee_match_cpuid(const struct knee_level *levels, size_t n_levels, const uint64_t *cache_bytes,
                     size_t n_caches, struct knee_match *out)
{
    double kb[KNEE_MAX_MATCH], klat[KNEE_MAX_MATCH];
    size_t nk = 0;
    /* best[i][j]: best matching of the first i caches with the first j knees; how[i][j] records the move. */
    struct match_score best[KNEE_MAX_MATCH + 1][KNEE_MAX_MATCH + 1];
    uint8_t how[KNEE_MAX_MATCH + 1][KNEE_MAX_MATCH + 1];
    enum { SKIP_CACHE, SKIP_KNEE, PAIR };

    if ((n_levels && !levels) || (n_caches && (!cache_bytes || !out)) || n_caches > KNEE_MAX_MATCH)
        return -1;
    for (size_t i = 0; i < n_levels; i++) {
        if (!(levels[i].bytes > 0))
            continue;
        if (nk == KNEE_MAX_MATCH)
            return -1;
        kb[nk] = levels[i].bytes;
        klat[nk++] = levels[i].latency;
    }

    for (size_t i = 0; i <= n_caches; i++) {
        for (size_t j = 0; j <= nk; j++) {
            struct match_score s = {0, 0, 0};
            uint8_t h = SKIP_CACHE;
            bool have = false;
            if (i > 0) {
                s = best[i - 1][j];
                h = SKIP_CACHE;
                have = true;
            }
            if (j > 0 && (!have || score_better(best[i][j - 1], s))) {
                s = best[i][j - 1];
                h = SKIP_KNEE;
                have = true;
            }
            if (i > 0 && j > 0 && cache_bytes[i - 1] > 0) {
                struct match_score p = best[i - 1][j - 1];
                p.pairs++;
                p.agree += knee_agrees(kb[j - 1], (double)cache_bytes[i - 1]);
                p.dist += dabs(knee_log2(kb[j - 1]) - knee_log2((double)cache_bytes[i - 1]));
                if (score_better(p, s)) {
                    s = p;
                    h = PAIR;
                }
            }
            best[i][j] = s;
            how[i][j] = h;
        }
    }

    for (size_t i = 0; i < n_caches; i++)
        out[i] = (struct knee_match){.cpuid_bytes = (double)cache_bytes[i]};
    for (size_t i = n_caches, j = nk; i > 0 || j > 0;) {
        if (i > 0 && j > 0 && how[i][j] == PAIR) {
            struct knee_match *m = &out[i - 1];
            m->inferred_bytes = kb[j - 1];
            m->latency = klat[j - 1];
            m->ratio = kb[j - 1] / m->cpuid_bytes;
            m->agree = knee_agrees(kb[j - 1], m->cpuid_bytes);
            i--;
            j--;
        } else if (i > 0 && (j == 0 || how[i][j] == SKIP_CACHE)) {
            i--;
        } else {
            j--;
        }
    }
    return best[n_caches][nk].agree;
}
