/* lat_common.h - what the latency benchmarks share: units, profile options, chains in platform buffers, line-placement jobs and the one-pass timed read. */
#ifndef PMB_BENCH_LAT_COMMON_H
#define PMB_BENCH_LAT_COMMON_H

#include "kernel/klib.h"
#include "measure/chain.h"
#include "measure/chase.h"
#include "bench/lat_plan.h"
#include "bench/clock.h"
#include "bench/platform.h"
#include "measure/stats.h"
#include "measure/verdict.h"
#include "measure/engine.h"

#define LAT_MAX_SAMPLES 2048 /* per measurement (chase samples or placed rounds) */

/* One latency, in every unit. TSC ticks per load are what was measured; ns use the TSC frequency, core
 * cycles the ratio named by cycles_method (the PMU's core-clock counter when its hook is installed, else
 * the platform's core/TSC ratio). */
struct lat_result {
    struct stats tsc;          /* TSC ticks per load over the samples */
    double ns, cycles;         /* medians */
    double ratio;              /* core cycles per TSC tick used for `cycles` */
    double ratio_u;            /* its relative uncertainty: cycles lies within cycles x (1 +- ratio_u); NaN: not
                                * stated (the benchmark's ratio, whose runs' spread is in its core_clock record) */
    const char *cycles_method; /* "fixed_counter:..." | "core_tsc_ratio:<platform method>" */
    size_t samples;
    bool converged, budget_hit;
    struct verdict v;          /* ok / noisy from the CI (lat_result_judge); callers may worsen it */
    uint64_t loads;            /* every load the measurement did */
};

/* cycles_method of a chase converted with the add chain timed right after it (clock_chain_ratio_now), and of a
 * figure combined from replicates each converted so (clock_ratio_combine). */
#define LAT_CYCLES_AFTER "core_tsc_ratio:clock_chains, after the measurement"
#define LAT_CYCLES_AFTER_EACH "core_tsc_ratio:clock_chains, after each replicate (median)"
/* ... and of a chase whose draw read no clean window: the chain's steady reference (clock_chain_ratio_ref) */
#define LAT_CYCLES_STEADY "core_tsc_ratio:clock_chains, steady reference"
/* ... and of a figure derived from a sweep plateau: the median of its points' cycles, each its own conversion */
#define LAT_CYCLES_PLATEAU "sweep_points:median of the plateau's points' cycles"

double lat_tsc_to_ns(double tsc);
/* Fills r from the statistics of TSC ticks per load and a core/TSC ratio. */
void lat_result_from(struct lat_result *r, const struct stats *tsc, double ratio, const char *cycles_method);
/* Combines n replicates of one figure measured apart (the sweep's passes; lat_result_rep keeps what is needed
 * of each) into r by meas_combine (median and CI across them, converged when that CI reached the profile's
 * target) and judges it. */
void lat_result_combine(const struct meas_result *reps, size_t n, double ratio, double ratio_u,
                        const char *cycles_method, struct lat_result *r);
/* lat_result_combine in the cycles of the replicates' own time: the ratio is clock_ratio_combine over ratio[] and
 * ratio_u[] (each replicate's), its method lat_cycles_method_combined(method, ...); where no replicate has a
 * ratio, fallback_ratio and fallback_u (the latest replicate's, or the first). r may hold the fallback values. */
void lat_result_combine_own(const struct meas_result *reps, const double *ratio, const double *ratio_u, size_t n,
                            double fallback_ratio, double fallback_u, const char *method, struct lat_result *r);
/* What lat_result_combine needs of one replicate. */
struct meas_result lat_result_rep(const struct lat_result *r);
/* Sets r->v from the CI against the profile's target, r->converged and the profile's minimum n (ok or
 * noisy); suspect under LAT_MIN_CYCLES_PER_LOAD core cycles per load (a dependent chain that fast is not a
 * load latency). */
#define LAT_MIN_CYCLES_PER_LOAD 1.0
void lat_result_judge(struct lat_result *r);
/* The keys every latency record shares: the figure `name` in ns through figure_json (measure/verdict.h:
 * figure, unit, median, p10, p90, min, max, n, spread, ci_lo, ci_hi, converged, quality, quality_reason),
 * the median also as "tsc" and "cycles", then "cycles_method", "core_tsc_ratio" and "core_tsc_ratio_u" (null when
 * not stated). */
void lat_result_json(struct json *j, const char *name, const struct lat_result *r);
/* The same keys for a figure that could not be measured: null statistics, quality unavailable with why. */
void lat_unavailable_json(struct json *j, const char *name, const char *why);

/* Sampling budget per measurement: time_budget_ms, else quick 2 ms, full 50 ms, in TSC ticks. */
uint64_t lat_budget_ticks(void);
/* Chase options of the profile: budget per point lat_budget_ticks, at least meas_min_samples samples, stop
 * once the CI of the median is within meas_ci_target (quick 5 %, full 1 %). */
void lat_chase_opts(struct chase_opts *o);
/* Replicates of a chase (docs/measurement.md "Replicates"): how many this call measures, of how many the
 * figure has (the time budget is shared by `of`), and where a fresh chain comes from: with buf, replicate k
 * >= 1 chases a new permutation (p's seed mixed with k) built with scratch s at buf + lat_rep_offset(buf_bytes,
 * p.bytes, align, k, of): other lines of buf where buf_bytes leaves room (the caller built replicate 0's chain
 * at buf itself), else the same lines. */
struct lat_reps {
    size_t n;  /* 0: the profile's (lat_replicates) */
    size_t of; /* 0: n */
    struct lat_relink *relink; /* set: replicate k >= 1 chases lat_relink_rep(relink, k) (buf, p and s unused) */
    void *buf;
    struct chain_params p;
    struct lat_scratch *s;
    uint64_t buf_bytes; /* the bytes of buf the replicates' regions spread over (0: p.bytes, one region) */
    uint64_t align;     /* their alignment (0: LAT_REP_ALIGN) */
};
/* The seed of replicate k of a chain seeded with seed (k = 0: seed itself). */
uint64_t lat_rep_seed(uint64_t seed, size_t k);
/* Replicates per latency figure: the profile's (meas_replicates), 1 in minimal mode (plat_config.minimal:
 * the minimum samples, no stop rule to reach, no replicates). */
size_t lat_replicates(void);
/* "key": [the offsets of the profile's replicates' regions of `bytes` in a buffer of buf_bytes] (lat_rep_offset,
 * LAT_REP_ALIGN): where each replicate's lines or eviction window sat, for a record. */
void lat_rep_offsets_json(struct json *j, const char *key, uint64_t buf_bytes, uint64_t bytes);

/* Steady-state chase_measure of the chain at start (n elements of 64 bytes or more) on the calling CPU,
 * warmed by a pass over it, or by LAT_SWEEP_WARM_LOADS loads when its lines outgrow the LLC, with the PMU's cycle
 * counter around it when one is installed and own_cpu says the caller is the benchmark's own CPU (the
 * counter is only set up there), in the replicates `reps` says (NULL: the profile's, on the same chain; a
 * fresh chain's replicate is warmed the same way). One lat_chase at a time (it owns the sample buffer).
 * Returns CHASE_OK or a CHASE_E* code. */
int lat_chase(void *start, size_t n, bool own_cpu, const struct lat_reps *reps, struct lat_result *r);
/* The same with warmup_loads loads before anything is timed instead of a full pass (0: the pass). */
int lat_chase_warm(void *start, size_t n, bool own_cpu, const struct lat_reps *reps, uint64_t warmup_loads,
                   struct lat_result *r);

/* Scratch for chain_build, grown on demand from the platform (default pages). */
struct lat_scratch {
    struct plat_buf b;
};
/* chain_build over buf with p, scratch from s; n gets the element count. NULL when it cannot. Chains of
 * at most 64 Ki elements are also walked once by chain_verify. */
void *lat_chain(void *buf, const struct chain_params *p, struct lat_scratch *s, size_t *n);
/* CHAIN_RANDOM and CHAIN_PAGE chains of at least this many lines are built in parts on every CPU of the
 * benchmark CPU's NUMA node at once (measure/chain.h, "built in parts"; a page-by-page chain only where its
 * parts' scratch, 4 x (pages + 64 x lines per page) bytes, is no more than 4 bytes per line). A random chain's
 * links are stored directly where p->buf_page says the buffer has pages of 2 MiB or more, else through the
 * successor table in the chain's last 4 bytes per line (those bytes then hold indices besides the links). */
#define LAT_PAR_MIN_LINES (1u << 18)
/* The CPUs lat_chain builds a large chain of this mode on: CHAIN_RANDOM and CHAIN_PAGE in parts on the
 * benchmark CPU's node (at most CHAIN_PAR_PARTS), CHAIN_STRIDE on the calling CPU alone. */
uint32_t lat_build_cpus(enum chain_mode mode);
/* What the last lat_chain cost: TSC ticks and the CPUs that built it. */
struct lat_chain_cost {
    uint64_t ticks;
    uint32_t cpus;
};
extern struct lat_chain_cost lat_chain_last;
void lat_scratch_free(struct lat_scratch *s);

/* ---- DRAM-sized chains relinked per replicate (docs/measurement.md "Replicates") ------------------------------
 * A chain of millions of lines costs seconds to rebuild; its replicates take a fresh order of its segments
 * instead (chain_relink: one pointer store per segment). With large pages (CHAIN_PAGE over 2 MiB units) the chain
 * is built over a buffer a little larger than the working set (lat_relink_buffer_bytes) and replicate k chains
 * the window of units at lat_rep_offset(buffer, working set, unit, k, R): other pages each. A CHAIN_RANDOM chain
 * (4 KiB pages) is cut into stretches of its visiting order of LAT_RELINK_SEG_LINES lines, relinked in a fresh
 * order over the same lines: a window of stretches would be a subset of lines spread over every page of the
 * buffer, not other pages (fresh pages need a rebuild: O(lines)). */
#define LAT_RELINK_SEG_LINES (MiB(2) / 64) /* a 2 MiB unit's lines: the same segment length in both modes */
#define LAT_RELINK_SPARE_DIV 8u              /* units beyond the working set: 1/8 of them, at least R - 1 */
struct lat_relink {
    struct plat_buf mem; /* the segments' heads, tails and work space (CHAIN_SEGS_WORDS) */
    struct chain_segs segs;
    size_t use;     /* segments each replicate chains */
    uint64_t unit;  /* CHAIN_PAGE: bytes per segment (its page; replicates take windows); 0: every segment */
    uint64_t seed;  /* replicate k's order: lat_rep_seed(seed, k) */
    size_t reps;    /* R */
    bool on;        /* false: the chain as built, replicates back to back on it (R = 1, or no memory for it) */
};
/* Bytes to allocate for a relinkable chain of w bytes on pages of page_bytes: w plus LAT_RELINK_SPARE_DIV-th of
 * it (at least R - 1 units of 2 MiB) with large pages and R > 1, within cap (0: none); w otherwise. */
uint64_t lat_relink_buffer_bytes(uint64_t w, uint64_t page_bytes, uint64_t cap);
/* Builds p's chain over p->bytes of buf (the whole buffer) and readies rl so that each replicate chains
 * use_bytes of it (CHAIN_PAGE: a window of units; CHAIN_RANDOM: use_bytes must be p->bytes); returns replicate
 * 0's start (lat_relink_rep(rl, 0)), n its elements. Where the segments cannot be kept (R = 1, minimal mode, no
 * memory) rl->on is false and the chain over use_bytes is built as lat_chain would. NULL when it cannot. */
void *lat_chain_relinkable(void *buf, const struct chain_params *p, uint64_t use_bytes, struct lat_scratch *s,
                           struct lat_relink *rl, size_t *n);
/* Relinks the chain for replicate k (k mod R): returns its start, n its elements (the same for every k). */
void *lat_relink_rep(struct lat_relink *rl, size_t k, size_t *n);
/* "relinked", "relink_segments" (of the built chain), "relink_segments_used" (per replicate) and
 * "replicate_offsets": where each replicate's window started, bytes from the buffer's start (all 0 without
 * windows; one 0 when not relinked). */
void lat_relink_json(struct json *j, const struct lat_relink *rl);
/* Where replicate k's window starts, bytes from the buffer's start (0 without windows). */
uint64_t lat_relink_offset(const struct lat_relink *rl, size_t k);
void lat_relink_free(struct lat_relink *rl);

/* ---- placed lines: one element per LAT_PLACED_STRIDE bytes, a random single cycle ------------------- */

struct lat_lines {
    void *start;
    size_t n;                /* a multiple of CHASE_UNROLL */
    volatile uintptr_t sink; /* keeps the read job's loads alive */
};
/* Builds the placed chain over `bytes` of buf (a multiple of LAT_PLACED_STRIDE x CHASE_UNROLL). */
int lat_lines_build(struct lat_lines *l, void *buf, uint64_t bytes, uint64_t seed, struct lat_scratch *s);

/* Jobs for plat_run_on (arg: struct lat_lines * / struct lat_evict * / struct lat_pass *). */
void lat_job_write(void *lines); /* a store into every element's line: the CPU then holds them Modified */
void lat_job_read(void *lines);  /* a load of every element: a clean copy */

struct lat_evict {
    const uint8_t *buf;
    uint64_t bytes;
    uint64_t chunk; /* read each chunk of this many bytes twice before the next (lat_evict_chunk); 0: one pass */
    volatile uint64_t sink;
};
/* One load per 64 bytes of buf, in address order, each `chunk` read twice in a row. (A scattered order was
 * tried: on a Granite Rapids KVM guest it left part of the placed lines in the L2 from round to round,
 * L3_unshared p10 23 ns vs 33 ns in order; docs/latency.md.) The second read of a chunk hits, so the eviction
 * lines are re-used data to the cache's replacement policy, as the placed lines are: a scan-resistant policy
 * (RRIP-like insertion of streamed lines at distant priority, which lets re-used lines survive any stream)
 * cannot keep the placed lines past them. A single streamed pass left the placed lines in the L2 once the
 * policy had learnt them over many rounds: L3_unshared 4.6-5.2 ns in the full profile (101 rounds) against
 * 12.7-13.3 ns in the quick one (15) on a Zen 5 guest. */
void lat_job_evict(void *evict);

struct lat_pass {
    void *start;
    size_t n; /* loads in the pass: a multiple of CHASE_UNROLL */
    enum timing_serialize ser;
    uint64_t ticks;    /* out: the fenced pass, overhead not subtracted */
    void *end;         /* out: where the pass stopped (== start for a full pass of a cycle) */
};
void lat_job_pass(void *pass);     /* one timed pass of n dependent loads */

/* ---- the one-pass protocol: place the lines, then time one pass over them ------------------------ */

enum lat_op { LAT_OP_WRITE, LAT_OP_READ, LAT_OP_EVICT };
struct lat_step {
    enum lat_op op;
    uint32_t cpu; /* plat_cpu.id */
};
#define LAT_MAX_STEPS 4

struct lat_placed {
    struct lat_lines *lines;
    /* Optional, for replicates with a fresh permutation of the lines (replicate k >= 1: lat_lines_build over
     * lines_buf with lat_rep_seed(seed, k)); NULL lines_buf: every replicate uses the lines as they are. */
    void *lines_buf;
    uint64_t lines_bytes, seed;
    struct lat_scratch *scratch;
    /* Replicate k's lines at lines_buf + lat_rep_offset(lines_buf_bytes, lines_bytes, LAT_REP_ALIGN, k, R)
     * (0: one region; replicate 0 is at lines_buf), and its eviction buffer at evict_base +
     * lat_rep_offset(evict_buf_bytes, evict->bytes, ...) when evict_base is set: each replicate other memory. */
    uint64_t lines_buf_bytes;
    const uint8_t *evict_base;
    uint64_t evict_buf_bytes;
    struct lat_evict *evict; /* for LAT_OP_EVICT steps */
    struct lat_step steps[LAT_MAX_STEPS];
    size_t n_steps;
    uint32_t measurer;      /* plat_cpu.id that times the pass */
    size_t rounds, warm;    /* measured rounds, and rounds before them that are thrown away */
    /* of > 0: lat_placed_run measures replicate `rep` of `of` alone (one pass of rows measured apart, as the
     * Table 2 rows' passes: docs/measurement.md "Replicates"), with 1/of of the budget and its share of the
     * minimum samples; its lines are always rebuilt in region rep (other rows' replicates use the same
     * regions in between). 0: every replicate of the profile, back to back. */
    size_t rep, of;
};

/* Measures through the engine (sample mode), in the profile's replicates (each a fresh permutation of the
 * lines when lines_buf is set, in its own region when lines_buf_bytes leaves room): warm rounds thrown away, the empty timed region on the measurer
 * as the overhead, then up to `rounds` rounds of: every step in order (each on its CPU, waited for), then
 * one timed pass on the measurer, until the profile's CI target or time budget. r gets TSC ticks per load; the ratio is the platform's (or the
 * counter hook's, when the measurer is the benchmark's own CPU). Returns 0, or -1 when a CPU failed (its
 * id in *failed_cpu) or the pass did not return to its start. */
int lat_placed_run(const struct lat_placed *p, struct lat_result *r, uint32_t *failed_cpu);
/* cycles_method of a figure combined from n replicates by clock_ratio_combine, the first replicate's own method
 * `method`, u[] their ratios' uncertainties: a PMU counter's method stays; else LAT_CYCLES_AFTER_EACH when more
 * than one replicate's chain was read (a stated u), LAT_CYCLES_AFTER when one was, `method` (the benchmark's
 * ratio) when none. */
const char *lat_cycles_method_combined(const char *method, const double *u, size_t n);
/* One round (steps + pass) without statistics, for replays (PEBS hook). 0 or -1. */
int lat_placed_round(const struct lat_placed *p, struct lat_pass *pass);
/* Rounds per placed measurement (per replicate) for the profile: at most quick 15 (+1 warm), full 101 (+2
 * warm); the engine stops earlier once the CI of the median reaches the profile's target (at least meas_min_samples rounds)
 * or the time budget is used. */
void lat_placed_rounds(size_t *rounds, size_t *warm);
/* Overhead regions of a placed row in minimal mode (plat_config.minimal), instead of CHASE_OVERHEAD_REPS. */
#define LAT_MINIMAL_OVERHEAD_REPS 1
/* Minimal mode's chase: samples 1/LAT_MINIMAL_SAMPLE_DIV as long, at most LAT_MINIMAL_WARM_LOADS loads of warm-up. */
#define LAT_MINIMAL_SAMPLE_DIV 10
#define LAT_MINIMAL_WARM_LOADS 4096u

/* Human text of a byte count: "32 KiB", "1.5 MiB" (buf of at least 16). */
const char *lat_bytes_text(uint64_t bytes, char *buf, size_t len);

#endif
