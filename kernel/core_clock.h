/* core_clock.h - core cycles per TSC tick from two dependency chains no core can shortcut, cross-checked, on any CPU at any time (APERF/MPERF first where it counts). */
#ifndef PMB_CORE_CLOCK_H
#define PMB_CORE_CLOCK_H

#include "kernel/klib.h"
#include "kernel/cpuid.h"
#include "kernel/json.h"

/*
 * Without a cycle counter the core clock is inferred from a chain of dependent instructions of known
 * latency: cycles = instructions x latency, ratio = cycles / TSC ticks over the same region. Two chains:
 *
 *   add_rr_chain  `add %rdx,%rax; add %rax,%rdx` alternating: register-register adds, 1 cycle on every
 *                 x86-64 core. No immediate (recent Intel cores resolve small-immediate adds at rename,
 *                 which is why the old `add $1` chain could read several times too fast), no zeroing
 *                 idiom, no move to eliminate.
 *   imul_chain    `imul %rdx,%rax` repeated, the multiplier odd so the product never becomes 0. Its latency
 *                 is per vendor and model (core_clock_imul_latency); where it is not known the chain is
 *                 timed but not judged.
 *
 * A core can only make a chain faster than its documented latency (a shortcut), never slower, so when the
 * two ratios disagree by more than CORE_CLOCK_TOL the one that reads HIGHER is the suspect and the lower one
 * is used. Runs of the two chains are interleaved so that both see the same clock.
 */

#define CORE_CLOCK_RUNS 7
/* Relative tolerance between the two chains. Must equal XC_TOL_RATIO in bench/crosscheck.h, the tolerance the
 * cross-check record states (the kernel cannot include bench/). */
#define CORE_CLOCK_TOL 0.05

#define CORE_CLOCK_NOTE_MAX 256

enum core_chain { CORE_CHAIN_ADD, CORE_CHAIN_IMUL, CORE_CHAIN_COUNT };

/* What one chain's runs measured: the input of the pure logic (host tests script it). */
struct core_chain_runs {
    uint32_t n;                      /* runs, at most CORE_CLOCK_RUNS */
    uint64_t insns;                  /* dependent instructions per run */
    uint32_t latency;                /* core cycles per instruction; 0: not known on this CPU */
    uint64_t ticks[CORE_CLOCK_RUNS]; /* TSC ticks of each run */
};

/* One chain's ratio. */
struct core_chain_ratio {
    bool valid;      /* runs > 0, latency known, every run took time */
    double ratio;    /* median over the runs of insns x latency / ticks */
    double spread;   /* (max - min) / median of the runs */
    uint32_t n;      /* runs */
    uint32_t latency;
};

struct core_clock {
    double ratio;        /* core cycles per TSC tick: what converts ticks to cycles (0: nothing measured) */
    const char *method;  /* aperf_mperf | add_rr_chain | imul_chain | none */
    double spread;       /* (max - min) / median of the runs behind ratio */
    struct core_chain_ratio chain[CORE_CHAIN_COUNT];
    int agree;           /* the two chains within CORE_CLOCK_TOL: 1 yes, 0 no, -1 not judged */
    const char *suspect; /* chains disagree: the method that reads higher (NULL otherwise) */
    char note[CORE_CLOCK_NOTE_MAX]; /* why this method, and what was not judged */
    bool aperf_valid;    /* APERF/MPERF counted over every run */
    double aperf_ratio, aperf_spread;
    uint32_t aperf_n;
    bool tcg;            /* QEMU TCG (hypervisor leaf): instructions have no latency there */
};

/* "add_rr_chain" / "imul_chain". */
const char *core_chain_name(enum core_chain c);

/* IMUL r64,r64 latency in core cycles for this CPU, 0 when not known. atom_core: a hybrid part's efficient
 * core (CPUID.1AH:EAX[31:24] = 20H) or an Atom-line model. Sources in core_clock.c. */
uint32_t core_clock_imul_latency(enum cpu_vendor v, uint32_t family, uint32_t model, bool atom_core);

/* ---- pure logic ----------------------------------------------------------------------------------------- */

/* One chain's median and spread from its runs. */
void core_chain_ratio_compute(struct core_chain_ratio *r, const struct core_chain_runs *in);

/* Fills *c (all of it) from the runs of both chains and, when n_aperf > 0, the APERF/MPERF ratio of each
 * run (aperf[i] = dAPERF / dMPERF; n_aperf must be the number of runs or it is not used). Chooses the method:
 * APERF/MPERF when given; else the add chain when the chains agree or imul is not judged; else the lower of
 * the two. tcg only adds to the note. */
void core_clock_decide(struct core_clock *c, const struct core_chain_runs runs[CORE_CHAIN_COUNT],
                       const double *aperf, uint32_t n_aperf, bool tcg);

/* Short windows of the add chain timed back to back, `insns` adds then 2 x insns, as bench/clock.c times them
 * next to a measurement (clock_chain_ratio_now): the input of core_windows_ratio (host tests script it). */
#define CORE_WINDOWS_MAX 16
struct core_chain_windows {
    uint32_t n;                        /* pairs, at most CORE_WINDOWS_MAX */
    uint64_t insns;                    /* adds in a short window; a long window has 2 x insns */
    double step;                       /* the TSC's reading step in ticks (meas_clock_step; 1 when exact) */
    uint64_t shrt[CORE_WINDOWS_MAX];   /* ticks of each short window */
    uint64_t lng[CORE_WINDOWS_MAX];    /* ticks of each long window */
};

/* What the windows say (core_windows_ratio). */
struct core_windows_ratio {
    bool valid;          /* both minima confirmed (CORE_WINDOWS_CONFIRM windows each) and long > short */
    double ratio;        /* insns / (min long - min short): core cycles per tick */
    double u;            /* its relative reading uncertainty: 2 steps / (min long - min short) */
    uint32_t confirmed;  /* the fewer, over the two lengths, of windows within one step of their length's minimum */
    uint32_t disturbed;  /* windows more than one step above their length's minimum: time lost to something */
};
#define CORE_WINDOWS_CONFIRM 2

/*
 * The core/TSC ratio from short add-chain windows, robust to what a shared machine does to them: a window can
 * only lose time (an interrupt, a descheduled vCPU, a host's neighbour on the core), never gain it (no core
 * runs the register add chain faster than a cycle per add), so each length's MINIMUM is its clean time, and
 * the difference of the two minima cancels the harness (the median of the pairs' differences, the old rule,
 * takes an interruption whenever two of three pairs have one in the same length, and a lone interruption in a
 * short window reads the ratio high). A minimum counts when CORE_WINDOWS_CONFIRM windows of its length lie
 * within one reading step of it: two equal interruptions are not a coincidence to expect, so a confirmed
 * minimum is an uninterrupted window. Each minimum is within a step of its true length, so the difference is
 * within 2 steps: u. Not valid with fewer pairs than CORE_WINDOWS_CONFIRM, an unconfirmed minimum, or a
 * long minimum not above the short one (the clock did not run): the caller draws more pairs or gives up.
 */
void core_windows_ratio(struct core_windows_ratio *r, const struct core_chain_windows *w);

/*
 * Of two draws next to a measurement, one on each chain (add: the windows' insns in adds; imul: in imul
 * latencies), the one to convert with; *u its reading uncertainty, *which the chain. Contention from outside
 * the benchmark (another thread on the core's ALUs, the host's neighbour on the core) only lengthens a
 * chain, and not the two alike: a benchmark's add-chain draws read 0.7 % low while the imul chain read the
 * clock (and the add chain's long runs 11 % low for moments; docs/measurement.md "Two chains, the higher").
 * So within CORE_CLOCK_TOL of each other the HIGHER reading is taken; beyond it the higher one is the suspect
 * (a shortcut, as in core_clock_decide) and the add chain's is kept, so an add chain slowed by more than
 * CORE_CLOCK_TOL is not corrected. Either alone when only it is valid; 0 (and *which CORE_CHAIN_COUNT) when
 * neither.
 */
double core_near_pick(const struct core_windows_ratio *add, const struct core_windows_ratio *imul, double *u,
                      enum core_chain *which);

/* ---- measuring ------------------------------------------------------------------------------------------ */

/*
 * Measures on the calling CPU, now: both chains CORE_CLOCK_RUNS times, interleaved, after one untimed run of
 * each, timed with lfence;rdtsc;lfence; with use_aperf also APERF/MPERF over each add run (rdmsr_safe; the
 * only MSR access, and none in a hosted build, which has perf_event instead). Pure loops otherwise, so any
 * CPU may call it at any time, with interrupts off for a clean result. About 2 M core cycles per run
 * (~5 ms in all at 3 GHz). Returns 0, or -1 when no method gave a ratio (*out then says none).
 */
int core_clock_measure(struct core_clock *out, bool use_aperf);

/* The chains themselves, for a caller that times them with another clock (the hosted runner's perf_event
 * cycle counter): the add chain for `iters` x 256 instructions. Returns a value to keep it live. */
uint64_t core_clock_add_chain(uint64_t iters);
#define CORE_CLOCK_ADD_PER_ITER 256
/* The imul chain for `iters` x 256 dependent imuls (each core_clock_imul_latency cycles). */
uint64_t core_clock_imul_chain(uint64_t iters);

/* As an object: {ratio, method, spread, add, imul, agree, suspect, note, aperf, imul_latency} with the
 * chains' ratios null when not measured. For per-CPU / per-benchmark records. */
void core_clock_json(struct json *j, const struct core_clock *c);

#endif
