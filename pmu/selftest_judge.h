/* selftest_judge.h - the PMU self-test's verdicts: pure functions from counts to ok/failed, and its console line. */
#ifndef PMB_PMU_SELFTEST_JUDGE_H
#define PMB_PMU_SELFTEST_JUDGE_H

#include "kernel/klib.h"

/*
 * pmu/pmu_selftest.c programs the counters and runs the known workloads; everything that decides
 * whether a count is right lives here, with no hardware access, so that host unit tests
 * (tests/unit/test_selftest_judge.c) can feed it the counts a correct encoding gives and the counts
 * a wrong one would give (core cycles instead of branches, a unit mask dropped, INV ignored, the
 * off-core request and response bytes swapped, an uncore counter that counts nothing).
 */

enum st_status { ST_SKIPPED = 0, ST_OK, ST_FAILED };

#define ST_UNBOUNDED UINT64_MAX /* expected_hi with no upper bound */

struct st_check {
    char name[32];          /* "branches_pmc0", "offcore_request_response", ... (unique in a run) */
    char counter[16];       /* the counter judged: "pmc0", "fixed1", "unc_pmc3", "ctr2"; "" none */
    char event[64];         /* the event as programmed (its table name), "" none */
    int feature;            /* what a failure disables (the caller's enum pmu_feature) */
    enum st_status status;
    bool judged;            /* counted / expected_* are meaningful (false: skipped or not run) */
    uint64_t counted;       /* the value judged: a difference, a sum, a count */
    uint64_t expected_lo;   /* the range it had to fall in, inclusive */
    uint64_t expected_hi;   /* ST_UNBOUNDED: no upper bound */
    bool centered;          /* the range is a value +- a tolerance (shown so on the console) */
    char detail[256];       /* every number that went into the verdict, in words */
    char disabled[24];      /* the counter this failure disabled ("PMC2"; pmu/usable.h), "" none */
};

/* Fresh check: skipped, nothing judged. counter / event may be NULL. */
void st_check_init(struct st_check *c, const char *name, const char *counter, const char *event, int feature);
void st_skip(struct st_check *c, const char *why);
/* Failed before anything was counted (the event could not be encoded or placed). */
void st_fail(struct st_check *c, const char *why);

/* n-versus-2n differencing (nanoBench): count_n and count_2n over n and 2n iterations of a loop that
 * makes per_iter events per iteration. The difference must be per_iter * n within +-tol (the
 * enable/disable path cancels), and the constant part count_n - per_iter * n must lie in
 * 0..const_max. Catches an event counting something else per iteration (core cycles, all branches
 * instead of conditional ones because the unit mask was dropped) and a counter that does not count. */
void st_judge_loop(struct st_check *c, uint64_t count_n, uint64_t count_2n, uint64_t n, uint64_t per_iter,
                   uint64_t tol, uint64_t const_max);

/* [PAG] "any event, with a given cmask threshold value, counts the cycles where the event's value is
 * >= the cmask value (inv=0), or < the cmask value (inv=1). Thus the sum of the counts for inv=0 and
 * inv=1 ... will always be the total core cycles": ge (CMASK=1) + lt (CMASK=1, INV) must equal the
 * core cycles counted at the same time within tol_frac * cycles + tol_abs; both must be non-zero and
 * they must differ (an ignored INV makes the two counts identical). */
void st_judge_cmask_inv(struct st_check *c, uint64_t ge, uint64_t lt, uint64_t cycles, double tol_frac,
                        uint64_t tol_abs);

/* The off-core response MSR holds the request type in bits 7:0 and the response type in bits 15:8
 * ([NHM] Table 12). value (e.g. 0x4001: demand data reads answered by local DRAM) counted over `loads`
 * loads of a chase far larger than the LLC must count at least loads/4; its byte swap (0x0140:
 * prefetch requests answered by the uncore, nearly nothing on a demand chase) at most loads/16, and
 * under a quarter of value's count. An encoder that swapped the halves counts the two the other way
 * round and fails. swapped must be st_swap_bytes16(value). */
void st_judge_offcore(struct st_check *c, uint16_t value, uint64_t value_count, uint16_t swapped,
                      uint64_t swapped_count, uint64_t loads);
uint16_t st_swap_bytes16(uint16_t v);

/* counted within [expected * lo_frac, expected * hi_frac] (a known stream's cache lines at the
 * memory controller, core cycles against TSC ticks x ratio). what names the expectation. */
void st_judge_ratio(struct st_check *c, uint64_t counted, uint64_t expected, double lo_frac, double hi_frac,
                    const char *what);

/* counted within [lo, hi] (hi may be ST_UNBOUNDED); what names the expectation. */
void st_judge_range(struct st_check *c, uint64_t counted, uint64_t lo, uint64_t hi, const char *what);

/* The events the counter checks program, per core event table (pmu/known_loop.h gives the counts per
 * iteration of pmu_known_branch_loop). */
struct st_model_events {
    const char *tables;            /* core event tables this row serves, blank separated */
    const char *branches;          /* retired branches: a unit-masked event where the table has one */
    uint64_t branches_per_iter;    /* its count per iteration of the branch loop */
    const char *instructions;      /* retired instructions (PMU_BRANCH_LOOP_INSNS_PER_ITER per iteration) */
    const char *cmask_ge;          /* an event with CMASK=1 (NULL: no CMASK/INV check on this PMU) */
    const char *cmask_lt;          /* the same with CMASK=1 and INV */
    const char *cycles;            /* unhalted core cycles, counted with the two */
    bool per_counter;              /* the branch and instruction checks run on every general counter */
    const char *note;              /* what the row cannot check, for the record; NULL none */
};
/* The row for a core event table name ("nhm", "wsm_dp", "amd_fam10h", "arch", "netburst", ...), or NULL. */
const struct st_model_events *st_model_events(const char *core_table);

/* The one console line of a check: status, name, counter, expected, counted, event (or, skipped, the
 * reason), and what the failure disabled, no newline:
 *   "  FAIL  branches_pmc0            pmc0      expected 20000 +-2       counted 60000     BR_INST_RETIRED:CONDITIONAL  PMC0 disabled"
 * Returns the length (truncated to len - 1). */
size_t st_format_line(char *buf, size_t len, const struct st_check *c);
/* What failed, short, for the counter it disables: "expected 20000 +-2, counted 60000" when judged, else the
 * detail (truncated to len - 1). */
void st_short_reason(char *buf, size_t len, const struct st_check *c);
/* "20000 +-2", "100..120", ">= 4096", "0" into buf. */
void st_format_expected(char *buf, size_t len, const struct st_check *c);

#endif
