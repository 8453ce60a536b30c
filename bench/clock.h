/* clock.h - the core clock measured per CPU and per benchmark, the ratio the benchmarks convert ticks with, and the clock cross-checks. */
#ifndef PMB_BENCH_CLOCK_H
#define PMB_BENCH_CLOCK_H

#include "kernel/klib.h"
#include "measure/serialize.h"

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

/* The add_rr chain's core cycles per tick now, on the calling CPU, for converting what was just measured
 * (docs/measurement.md "Core clock and TSC", "Next to the measurement"): CLOCK_NEAR_PAIRS timings of
 * n = CLOCK_NEAR_ITERS x 256 dependent adds against 2n, the median of the differences (the harness cancels);
 * about 60 us at 3.7 GHz, short enough that an interruption rarely falls into it (the start-up chains, ~0.3 ms
 * a run, lost cycles in several of seven runs on a shared guest). *u: its relative reading uncertainty, two
 * differences of reads (+-2 clock steps, meas_clock_step) over the median. 0 when the chain took no time. */
#define CLOCK_NEAR_ITERS 256
#define CLOCK_NEAR_PAIRS 3
double clock_chain_ratio_now(enum timing_serialize ser, double *u);
/* Whether clock_chain_ratio_now may stand in for the benchmark's ratio: that ratio came from the add_rr chain
 * (clock_core_ratio's method), and the machine is not emulated (minimal mode: instructions have no latency). */
bool clock_chain_ratio_usable(void);

/* The TSC's step on the calling CPU now (meas_step_estimate over 512 regions of 0..255 dependent adds); what
 * clock_run_start hands to meas_set_clock_step. */
double clock_measure_step(void);

/* Forget every measurement (unit tests). */
void clock_reset(void);

#endif
