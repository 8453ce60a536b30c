/* knee.h - infers cache levels (plateaus and the sizes where latency rises) from a latency-vs-size curve. */
#ifndef PMB_MEASURE_KNEE_H
#define PMB_MEASURE_KNEE_H

#include "kernel/klib.h"

/* One plateau of the curve: its latency (median of the plateau, same unit as the input) and the largest
 * working set still on it, i.e. the size after which latency rises: the inferred capacity of that level.
 * The last plateau has no rise after it (memory, or the largest level the curve reached): bytes = 0.
 * A plateau also has a start: `from` is the smallest size of its flat run, `to` the largest size on it (the
 * knee, or the curve's last size for the last plateau). Sizes between one plateau's `to` and the next one's
 * `from` are the transition between two levels and belong to neither. */
struct knee_level {
    double bytes;
    double latency;
    double from, to;
};

#define KNEE_MIN_POINTS 3
#define KNEE_MAX_POINTS 256 /* working arrays live on the stack */

/* Method tunables (see docs/measurement.md, "Knee detection"). Latencies are compared as log2 ratios. */
#define KNEE_RUN_TOL 1.20       /* a point joins a run while within x1.2 of the run's median */
#define KNEE_MIN_RUN 3          /* a plateau has at least 3 points (sample >= 2 sizes per octave) ... */
#define KNEE_MIN_SPAN 1.0       /* ... spans at least an octave of working-set size ... */
#define KNEE_MAX_SLOPE 0.30     /* ... and rises less than 0.3 log2 per octave (x1.23 per doubling) */
#define KNEE_MIN_STEP 1.25      /* neighbouring plateaus closer than x1.25 are one level */

/* bytes[] strictly ascending and positive, lat[] positive, all finite, KNEE_MIN_POINTS <= n <=
 * KNEE_MAX_POINTS. Writes at most max_out levels, smallest first, and returns how many it found (which
 * may exceed max_out, like snprintf), or -1 for invalid input. A curve without any flat stretch (a
 * steady ramp) has 0 levels. */
int knee_detect(const double *bytes, const double *lat, size_t n, struct knee_level *out, size_t max_out);

/* Agreement window between an inferred knee and the CPUID size of a cache: inferred / cpuid within
 * [0.5, 2]. Wide on purpose: the knee sits on the measurement grid, set conflicts and page-table lines
 * raise latency a little before the cache is full, and exclusive or victim caches (AMD L3) add the
 * capacity of the level below. */
#define KNEE_AGREE_LO 0.5
#define KNEE_AGREE_HI 2.0

bool knee_agrees(double inferred_bytes, double cpuid_bytes);

struct knee_match {
    double cpuid_bytes;    /* what CPUID reports for this level */
    double inferred_bytes; /* knee matched to it, 0 when none */
    double latency;        /* latency of the plateau that knee ends, 0 when none */
    double ratio;          /* inferred / cpuid, 0 when none */
    bool agree;
};

#define KNEE_MAX_MATCH 16

/* Matches the knees (levels with bytes > 0) to the CPUID data/unified cache sizes, given smallest level
 * first (L1d, L2, L3...). The matching keeps both orders and maximises first the number of agreeing
 * pairs, then the number of pairs, then closeness (sum of |log2 ratio|). Fills out[0..n_caches-1] and
 * returns how many agree, or -1 for invalid input (NULL arrays, more than KNEE_MAX_MATCH entries). */
int knee_match_cpuid(const struct knee_level *levels, size_t n_levels, const uint64_t *cache_bytes,
                     size_t n_caches, struct knee_match *out);

/* Which plateau holds a working set of `bytes`: the index k with levels[k].from <= bytes <= levels[k].to, or
 * -1 when none does (*where then says why: KNEE_AT_BELOW, below the first plateau's start; KNEE_AT_BETWEEN,
 * in the transition after plateau *after; KNEE_AT_ABOVE, above the last size of the last plateau; KNEE_AT_NONE,
 * no plateau or invalid input). Levels as knee_detect writes them (from/to set, ascending). */
enum knee_at { KNEE_AT_IN, KNEE_AT_BELOW, KNEE_AT_BETWEEN, KNEE_AT_ABOVE, KNEE_AT_NONE };
int knee_plateau_at(const struct knee_level *levels, size_t n_levels, double bytes, enum knee_at *where,
                    size_t *after);

/* log2 for freestanding code (no libm); x must be positive and finite. */
double knee_log2(double x);

#endif
