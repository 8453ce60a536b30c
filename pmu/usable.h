/* usable.h - which core counters the self-test left usable, why each other one is gone, and the refusal of an event
 * that can only count on gone ones (pure logic, host unit tested). */
#ifndef PMB_PMU_USABLE_H
#define PMB_PMU_USABLE_H

#include "kernel/klib.h"
#include "pmu/sched.h"

/*
 * Bits are the scheduler's cntmask layout (pmu/event.h, pmu/sched.h): general counters 0..31
 * (Intel IA32_PMCx, AMD PERF_CTRx, NetBurst counter x), Intel fixed counters 32+j. The self-test
 * clears the bit of each counter one of its checks judged wrong (pmu/pmu_selftest.c); the scheduler
 * never places an event on a cleared bit (pmu/counting.c). Uncore counters are not here: a failed
 * uncore check disables the uncore feature as a whole.
 */

#define PMU_USABLE_GP_MASK 0xffffffffULL
#define PMU_USABLE_FIXED_SHIFT 32

enum pmu_usable_naming {
    PMU_USABLE_NAMES_INTEL = 0, /* PMC2, FIXED_CTR0 (SDM IA32_PMCx / IA32_FIXED_CTRx) */
    PMU_USABLE_NAMES_AMD,       /* CTR2 (PERF_CTRx) */
    PMU_USABLE_NAMES_P4,        /* P4_CTR12 (NetBurst counter x) */
};

/* Why one counter is gone: the first failed check that judged it. */
struct pmu_usable_loss {
    char check[32];  /* "branches_pmc2" */
    char reason[72]; /* "expected 20000 +-2, counted 60000" */
};

struct pmu_usable {
    uint64_t present; /* counters the capabilities report */
    uint64_t usable;  /* present, less those the self-test disabled */
    uint8_t naming;   /* enum pmu_usable_naming */
    struct pmu_usable_loss loss[64]; /* by bit; meaningful where present & ~usable */
};

/* All of present usable, no losses. */
void pmu_usable_init(struct pmu_usable *u, uint64_t present, enum pmu_usable_naming naming);

/* The bit a self-test check's counter name stands for ("pmc2" 2, "ctr3" 3, "p4_ctr12" 12, "fixed1" 33), or -1 when
 * it names no single core counter ("", "pmc0+pmc1", "unc_pmc3", "lbr"). */
int pmu_usable_bit_of(const char *counter);

/* A check judged counter bit wrong: clear it. The first failure per counter is kept as its reason (check, reason).
 * Returns 1 when this call disabled the counter, 0 when it was already disabled, -1 when bit is not present. */
int pmu_usable_fail(struct pmu_usable *u, unsigned bit, const char *check, const char *reason);

static inline uint32_t pmu_usable_gp(const struct pmu_usable *u) { return (uint32_t)(u->usable & PMU_USABLE_GP_MASK); }
static inline uint32_t pmu_usable_fixed(const struct pmu_usable *u)
{
    return (uint32_t)(u->usable >> PMU_USABLE_FIXED_SHIFT);
}
/* Counters of mask that are present but disabled. */
static inline uint64_t pmu_usable_gone(const struct pmu_usable *u, uint64_t mask)
{
    return mask & u->present & ~u->usable;
}

/* "PMC2", "FIXED_CTR0", "CTR2", "P4_CTR12". */
void pmu_usable_counter_name(const struct pmu_usable *u, unsigned bit, char *buf, size_t len);

/* The disabled counters of mask, one after another: "PMC0 (branches_pmc0: expected 20000 +-2, counted 0), PMC1
 * (...)". Returns the length (truncated to len - 1). */
size_t pmu_usable_describe(const struct pmu_usable *u, uint64_t mask, char *buf, size_t len);

/* Every present counter of mask is disabled (false when mask holds no present counter). */
static inline bool pmu_usable_all_gone(const struct pmu_usable *u, uint64_t mask)
{
    return (mask & u->present) && !(mask & u->usable);
}
/* Why a feature is gone with its counters: "self-test disabled every <what>: PMC0 (branches_pmc0), PMC1
 * (instructions_pmc1), ..." (truncated to len - 1). */
void pmu_usable_gone_reason(const struct pmu_usable *u, uint64_t mask, const char *what, char *buf, size_t len);

/* Whether an event whose counters are cntmask (every alternative's, in the layout above) can still be placed: 0 when
 * it has a usable counter, or when none of its counters is present (the scheduler's own error says so); -1 when
 * every present counter it may use is disabled, with one line in err naming the event, the disabled counters and
 * the checks that failed:
 *   "L1D_CACHE_LD:MESI: can count only on PMC0, PMC1, disabled by the self-test: PMC0 (branches_pmc0: ...), ..." */
int pmu_usable_refuse(const struct pmu_usable *u, const char *event, uint64_t cntmask, char *err, size_t len);

/* Before sched_assign: restrict the classes whose counters the self-test judges (core, NetBurst) to the usable
 * counters, then refuse (pmu_usable_refuse) the first event left with no counter: 0, or -1 with err written.
 * names[i] names ev[i] in the refusal. */
int pmu_usable_restrict(const struct pmu_usable *u, const struct sched_event *ev, const char *const *names, unsigned n,
                        uint64_t avail[SCHED_NUM_CLASSES], char *err, size_t len);

#endif
