/* clock.h - the core clock measured per CPU and per benchmark, the ratio the benchmarks convert ticks with, and the clock cross-checks. */
#ifndef PMB_BENCH_CLOCK_H
#define PMB_BENCH_CLOCK_H

#include "kernel/klib.h"
#include "measure/serialize.h"
#include "kernel/core_clock.h"

/*
 * One start-up core/TSC ratio, taken on one CPU while the others idle, does not describe another CPU or a
 * later moment when the clock may differ (turbo bins that depend on how many cores are busy, a P-state
 * change, a vCPU that is descheduled). So (docs/measurement.md, "Core clock and TSC"):
 *
 *   clock_run_start()      before the first benchmark: every CPU measures its own ratio (plat_core_clock),
 *                          one `core_clock` record each (when "start"); cross-checks: each TSC rate source
 *                          against the one in use (XC_TOL_CLOCK), the add and imul chains on the
 *                          benchmark's CPU (XC_TOL_RATIO), APERF/MPERF against the add chain where both
 *                          exist, the PMU's unhalted core cycles against the ratio in use
 *                          where this run reads a cycle counter, and every other CPU's ratio against the
 *                          benchmark CPU's.
 *   clock_bench_start(b)   before each benchmark: the benchmark's CPU measures again (`core_clock`, when
 *                          b), cross-checked against its start-up ratio; that ratio then converts the
 *                          benchmark's ticks to cycles (clock_core_ratio) wherever no cycle counter is read.
 *
 * The ratios are calibrations, not figures of the ledger: a disagreement is counted in the summary's
 * cross-checks and said in the record and on the console, and marks no figure.
 */
void clock_run_start(void);
void clock_bench_start(const char *bench);

/* Core cycles per TSC tick on the benchmark's CPU for the benchmark now running, and "core_tsc_ratio:<how
 * it was measured>" in *method (optional): the latest clock_bench_start / clock_run_start measurement, else
 * the platform's start-up ratio. Never 0 (1.0 when nothing was measured). */
double clock_core_ratio(const char **method);

/* The relative uncertainty u of the TSC rate in use (plat_tsc_hz), for converting an interval in ticks to ns or
 * bytes/s by interval arithmetic (stats_scale_unc, docs/measurement.md "Statistics"): a measured rate's
 * spread, (max - min) / median of its calibration windows (the windows' range holds their median and its
 * sign-test interval, and lies within +-spread of the median); a stated rate (CPUID, spread 0) is known only as
 * well as the measured sources agree with it: the largest |hz_i / hz - 1| + spread_i over them; 0 when nothing
 * was measured. */
double clock_tsc_rel_unc(void);

/* The core cycles per tick now, on the calling CPU, for converting what was just measured
 * (docs/measurement.md "Core clock and TSC", "Next to the measurement"): CLOCK_NEAR_PAIRS pairs of windows of
 * n = CLOCK_NEAR_ITERS x 256 dependent adds and 2n, more pairs one at a time (at most CLOCK_NEAR_PAIRS_MAX)
 * until each length's minimum is confirmed by a second window, then n / (min 2n - min n)
 * (core_windows_ratio: a window only loses time to an interruption, never gains it; the harness cancels).
 * About 50 us a pair at 3.7 GHz: a draw ~180 us, one that reads no clean window ~450 us (the bound on what a
 * contended spell costs; the caller then has the steady reference, clock_chain_ratio_ref). *u: its relative reading uncertainty, 2 clock steps (meas_clock_step) over
 * the difference. 0 when no pair of minima was confirmed (the CPU kept being interrupted) or the chain took
 * no time: the caller then uses the benchmark's ratio. The imul chain is drawn the same way where its latency
 * is known (the benchmark CPU's core_clock), and the higher of the two taken within CORE_CLOCK_TOL
 * (core_near_pick: outside contention slows the chains unequally, never speeds one up); about twice the time. */
#define CLOCK_NEAR_ITERS 256
#define CLOCK_NEAR_PAIRS 3
#define CLOCK_NEAR_PAIRS_MAX 8
double clock_chain_ratio_now(enum timing_serialize ser, double *u);
/* The ratio of what was measured in n parts apart (a figure's replicates, draws of the chain), each with its own
 * ratio and relative reading uncertainty u[i] (NaN or 0: none stated, a part converted with the benchmark's ratio
 * because the chain could not be read then; u may be NULL): the median of those with a stated uncertainty (of
 * all when none has one), and in
 * *u_out how well it is known, covering a disagreement between the parts: the larger side of the
 * distribution-free 95 % interval of the median of the ratios (stats_median_ci_ranks; under 6 parts their
 * whole range) over the median, plus the largest reading uncertainty. A clock that moved between the parts
 * widens it; one part taken in a slow moment (an interrupted or shared core) does not, beyond its rank.
 * Returns 0 (and *u_out NaN) when no ratio is positive; at most 4 x MEAS_REPLICATES_FULL parts are read. */
double clock_ratio_combine(const double *ratios, const double *u, size_t n, double *u_out);

/* The add chain's ratio on the calling CPU now, as a steady reference (a sweep series' start and end, the
 * drift rule): the median of CLOCK_STEADY_DRAWS clock_chain_ratio_now draws by clock_ratio_combine, about
 * 1.6 ms; *u as there (NaN when it returns 0). 0 when no draw gave a ratio (the CPU was interrupted in every
 * window pair of each: the chains' long runs would have lost cycles too). */
#define CLOCK_STEADY_DRAWS 9
double clock_chain_ratio_steady(enum timing_serialize ser, double *u);
/* The latest clock_chain_ratio_steady that gave a ratio (clock_run_start and clock_bench_start take one where
 * the add chain is usable; the sweep one before and after each series), with its *u; 0 (and *u NaN) when
 * none did. What converts a measurement whose own draw read no clean window (an interrupted spell): the
 * benchmark's core_clock ratio would be the chains' long runs, which lose cycles to the same interruptions. */
double clock_chain_ratio_ref(double *u);
/* Whether clock_chain_ratio_now may stand in for the benchmark's ratio: that ratio came from the add_rr chain
 * (clock_core_ratio's method), and the machine is not emulated (minimal mode: instructions have no latency). */
bool clock_chain_ratio_usable(void);

/* The TSC's step on the calling CPU now (meas_step_estimate over 512 regions of 0..255 dependent adds); what
 * clock_run_start hands to meas_set_clock_step. */
double clock_measure_step(void);

/* ---- core clock vs L1 load latency (docs/measurement.md "Cross-checks", "The L1 latency as a clock check") ----
 * An L1D load-to-use chase takes an integer number of core cycles per load on every x86 core (4 or 5 on modern
 * cores, 3 on some Atoms), and a chase can only lose time (an interruption, a busy sibling on the load ports),
 * never gain it. So an L1 latency in cycles converted with the clock draws of its own time that lies off the
 * nearest integer L by more than the measurement and the conversion allow says:
 *   below L, within CORE_CLOCK_TOL of it   the draws read the clock low (the register chains ran slower than the
 *                                          core clock: a host's SMT sibling on the ALU ports): the conversion is
 *                                          blamed, and the cycles of every figure converted with the chain draws
 *                                          in this benchmark with it;
 *   above L, or farther than CORE_CLOCK_TOL from every integer (halfway between two)   the chase itself lost
 *                                          time or is not an L1 hit: the figure is blamed, the clock is not
 *                                          corrected. */

/* One reading of the L1 latency in core cycles (a sweep point of the L1 plateau, or a whole figure) and the
 * interval the measurement and the conversion allow it: [lo, hi] holds the true value. */
struct clock_l1_reading {
    double cycles, lo, hi;
};
/* A figure's reading: cycles its median in cycles, [ci_lo, ci_hi] / median its interval in its own unit (the
 * ticks' or ns' 95 % CI; NaN or 0: none, the point alone), u the relative uncertainty of its conversion
 * (core_tsc_ratio_u); cycles x (ci_lo / median) x (1 - u) .. cycles x (ci_hi / median) x (1 + u). */
struct clock_l1_reading clock_l1_reading_of(double cycles, double median, double ci_lo, double ci_hi, double u);

enum clock_l1_blame {
    CLOCK_L1_NOT_JUDGED, /* no reading, or under half a cycle */
    CLOCK_L1_AGREES,     /* the interval holds the integer */
    CLOCK_L1_CLOCK,      /* below the integer within CORE_CLOCK_TOL: the conversion read the clock low */
    CLOCK_L1_FIGURE,     /* above it, or beyond CORE_CLOCK_TOL of every integer: the L1 figure */
};
struct clock_l1_judgement {
    enum clock_l1_blame blame;
    double cycles;       /* the median of the readings */
    double lo, hi;       /* the interval of that median: the distribution-free 95 % one of the readings'
                          * intervals (stats_median_ci_ranks over their lower ends and their upper ends; under 6
                          * readings, the lowest lower end and the highest upper end) */
    uint32_t latency;    /* the nearest integer L */
    double tolerance;    /* relative, on the side facing L: the interval holds L exactly when
                          * |cycles / L - 1| <= tolerance (what the crosscheck record states) */
    double correction;   /* CLOCK_L1_CLOCK: L / cycles, the factor the conversion is low by; else 1 */
};
/* Pure logic (host-tested): judges n readings of one L1 figure (at most CLOCK_L1_MAX are read). */
#define CLOCK_L1_MAX 256
void clock_l1_judge(struct clock_l1_judgement *j, const struct clock_l1_reading *r, size_t n);

/* Figures whose cycles this benchmark converted with the clock chain draws (clock_chain_ratio_now next to the
 * measurement, or their steady reference): what an L1 check that blames the conversion marks. Forgotten at
 * clock_bench_start; names copied; at most LEDGER_MAX. */
void clock_chain_converted(const char *figure);
/* Whether a cycles_method is a conversion with the clock chain draws ("core_tsc_ratio:clock_chains..."). */
bool clock_method_is_chains(const char *cycles_method);
/* The check on the benchmark's CPU: emits the `crosscheck` record "core clock vs L1 load latency (an integer
 * number of cycles)" for the L1 figure `figure` from its n readings (a = figure in cycles, b =
 * clock/cpu<N>/clock_chains with the integer L); blamed conversion: the record's cycles_suspect lists every
 * figure of clock_chain_converted, the ledger marks nothing (the ns figures hold); blamed figure: it is marked
 * suspect. Returns the judgement's blame. */
enum clock_l1_blame clock_l1_check(const char *figure, const struct clock_l1_reading *r, size_t n);

/* Forget every measurement (unit tests). */
void clock_reset(void);

#endif
