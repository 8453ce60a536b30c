/* lat_sweep.h - latency vs working-set size over several page sizes, and the cache levels inferred from its knees. */
#ifndef PMB_BENCH_LAT_SWEEP_H
#define PMB_BENCH_LAT_SWEEP_H

#include "kernel/klib.h"
#include "measure/verdict.h"

/* Runs every series (random chain with 4 KiB, 2 MiB and, when possible, 1 GiB pages; page-by-page with
 * 4 KiB pages in the full profile) on the benchmark's CPU, each once more when its core/TSC ratio drifted
 * beyond XC_TOL_RATIO, emitting one latency_series record per series and one latency_sweep record per point;
 * then lat_sweep_infer (sweep_reference, cache_inferred, latency_plateau records); prints the sweep table and
 * the inferred levels. */
void lat_sweep_run(void);

/* Called after every pass of every series (done: passes so far, total: series x replicates planned; a series
 * measured again adds passes beyond total): the Table 2 rows' passes go between the sweep's
 * (lat_table2_between). NULL: nothing. lat_sweep_run resets it to NULL when it returns. */
typedef void (*lat_sweep_between_fn)(size_t done, size_t total);
void lat_sweep_between(lat_sweep_between_fn fn);

/* One finished series as the cache inference reads it. */
struct lat_sweep_curve {
    const char *mode;      /* the record's "mode": "random" or "page" */
    bool random;           /* a random chain (only those can be the reference) */
    uint64_t page_bytes;
    size_t n;              /* points, at most LAT_MAX_POINTS */
    const uint64_t *bytes; /* working sets, ascending */
    const double *ns;      /* median ns per load */
    const double *cycles;  /* the same in core cycles, each point converted with a ratio of its own time (NULL: none) */
    const double *cycles_u; /* each point's conversion uncertainty (core_tsc_ratio_u) where every point's cycles
                             * came from the clock chain draws (NULL otherwise: the L1 check does not judge it) */
    const enum quality *q; /* each point's verdict (NULL: not known, taken as ok): a plateau's is the worst of its points' */
    bool clock_steady;     /* its core/TSC ratio stayed within XC_TOL_RATIO from its start to its end */
};

/* The reference series for the cache inference and the Table 2 cross-checks: the random series on the largest
 * pages among those that were not disturbed (steady clock, and a first (L1) plateau within XC_TOL_RATIO of the
 * fastest steady series' one); when every random series was disturbed, the largest-page one with
 * *disturbed = true and *why. SIZE_MAX when no random series has KNEE_MIN_POINTS points. */
size_t lat_sweep_pick_reference(const struct lat_sweep_curve *c, size_t n, bool *disturbed, const char **why);

/* Picks the reference (one sweep_reference record per random series), then emits its cache_inferred and
 * latency_plateau records (suspect when it was disturbed) and keeps its plateaus for lat_sweep_plateau_at.
 * lat_sweep_run calls it; the unit tests call it with curves from real runs (tests/fixtures/sweeps). */
void lat_sweep_infer(const struct lat_sweep_curve *c, size_t n);

/* The last lat_sweep_infer's reference series' first plateau (the L1 one) as readings of the L1 latency in cycles
 * (clock_l1_check), one per point, *figure its latency_plateau figure; 0 when the curve's cycles were not all
 * converted with the clock chain draws or it had no plateau from its first size. */
struct clock_l1_reading;
size_t lat_sweep_l1_readings(const struct clock_l1_reading **r, const char **figure);

/* The ledger figure of the reference series' plateau whose [from, to] range holds `bytes`, for cross-checks
 * with the Table 2 rows; NULL with *why (the footprint lies below the first plateau, in the rise between two,
 * or above the last) when there is none. */
const char *lat_sweep_plateau_at(uint64_t bytes, const char **why);
/* A Table 2 row of a level that runs on the core clock (L1, L2) against the plateau at its footprint, in core
 * cycles: both sides converted with the core/TSC ratio of their own time, so that a clock that moved between the
 * sweep and the row (turbo bins on a busy server) is not read as a latency difference. Falls back to
 * lat_sweep_crosscheck (ns, judged now) when either side has no cycles. `third` (may be NULL): the same latency
 * in cycles measured by a later benchmark (struct crosscheck's third: "penalty/l1_hit"); the check is then kept
 * for the end of the run (crosscheck_defer, returns XC_DEFERRED), so that the third can decide which side a
 * disagreement blames. */
int lat_sweep_crosscheck_cycles(const char *quantity, const char *figure, uint64_t footprint, double row_cycles,
                                const char *third);
/* The reference series' plateau whose range holds `bytes` and its median cycles (*cycles), as the cycles check
 * above uses it; NULL when there is none, it has no cycles, or the series was disturbed. */
const char *lat_sweep_plateau_cycles(uint64_t bytes, double *cycles);
/* The page size of the reference series (0: the sweep found no plateau). */
uint64_t lat_sweep_reference_page(void);
/* lat_sweep_plateau_at for a DRAM chain of `bytes`: also the last plateau when `bytes` lies above the curve's
 * top and that plateau is flat up to the top (memory: its latency does not change with more bytes; the Table 2
 * DRAM rows use 8 x the LLC, the sweep's top is 4 x); only where the reference series ran on pages of 2 MiB or
 * more (its random chain then pays no page walks, as the DRAM rows' chains). NULL with *why otherwise. */
const char *lat_sweep_dram_plateau(uint64_t bytes, const char **why);

/* The crosscheck record of a Table 2 row (ledger figure `figure`, its footprint in bytes) against that plateau,
 * tolerance XC_TOL_LATENCY, both marked when they disagree; not judged, with the reason, when no plateau holds
 * the footprint. Returns crosscheck_emit's 1 / 0 / -1. */
int lat_sweep_crosscheck(const char *quantity, const char *figure, uint64_t footprint);

#endif
