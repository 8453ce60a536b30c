/* test_pmu_sched.c - counter scheduling: constraints, shared registers, fixed counters, group splits. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <string.h>

#include "pmu/event.h"
#include "pmu/msr_pmu.h"
#include "pmu/sched.h"
#include "pmu_events.h"

#define NHM_CORE (0xfULL | PMU_CNT_FIXED(0) | PMU_CNT_FIXED(1) | PMU_CNT_FIXED(2))

static const uint64_t nhm_avail[SCHED_NUM_CLASSES] = {NHM_CORE, 0xffULL | PMU_CNT_FIXED(0), 0, 0};
static const uint64_t p4_avail[SCHED_NUM_CLASSES] = {0, 0, 0, 0x3ffff};

static struct sched_event ev_of(const char *table, const char *spec, bool gp_only)
{
    const struct pmu_event_table *t = pmu_event_table_find(table);
    struct pmu_event_enc e;
    struct sched_event s;
    char err[256];
    assert_non_null(t);
    if (pmu_event_parse(&t, 1, spec, &e, err, sizeof(err)))
        fail_msg("%s: %s", spec, err);
    assert_int_equal(sched_event_from_enc(&e, gp_only, &s), 0);
    return s;
}

/* Independent checker: counters distinct per group and class, inside the chosen alternative's mask
 * and the available set; shared registers agree within a group; groups numbered 0..ngroups-1. */
static void check_valid(const struct sched_event *ev, unsigned n, const uint64_t *avail, const struct sched_result *r)
{
    for (unsigned i = 0; i < n; i++) {
        const struct sched_assign *a = &r->a[i];
        assert_true(a->group < r->ngroups);
        assert_true(a->alt < ev[i].nalt);
        const struct sched_alt *alt = &ev[i].alt[a->alt];
        assert_true(a->counter < 64);
        assert_true(alt->cntmask & avail[ev[i].cls] & (1ULL << a->counter));
        for (unsigned j = 0; j < i; j++) {
            const struct sched_assign *b = &r->a[j];
            if (b->group != a->group)
                continue;
            if (ev[j].cls == ev[i].cls)
                assert_int_not_equal(b->counter, a->counter);
            const struct sched_alt *balt = &ev[j].alt[b->alt];
            if (alt->reg && balt->reg == alt->reg)
                assert_true(balt->reg_val == alt->reg_val);
        }
    }
    for (unsigned g = 0; g < r->ngroups; g++) {
        bool used = false;
        for (unsigned i = 0; i < n; i++)
            used |= r->a[i].group == g;
        assert_true(used);
    }
}

static unsigned sched_ok(const struct sched_event *ev, unsigned n, const uint64_t *avail, struct sched_result *r)
{
    assert_int_equal(sched_assign(ev, n, avail, r), SCHED_OK);
    check_valid(ev, n, avail, r);
    return r->ngroups;
}

/* Too many PMC0/1-only events ([PAG]: L1D events count on the first two counters only). */
static void test_pmc01_only(void **state)
{
    (void)state;
    struct sched_event ev[8];
    struct sched_result r;
    for (unsigned i = 0; i < 6; i++)
        ev[i] = ev_of("nhm", "L1D_CACHE_LD:MESI", false);
    ev[6] = ev_of("nhm", "UOPS_ISSUED:ANY", false);
    ev[7] = ev_of("nhm", "RESOURCE_STALLS:ANY", false);
    assert_int_equal(sched_ok(ev, 8, nhm_avail, &r), 3);
    assert_true(r.optimal);
    for (unsigned i = 0; i < 6; i++)
        assert_true(r.a[i].counter < 2);
    /* two of them plus two others fit in one group */
    assert_int_equal(sched_ok(ev + 4, 4, nhm_avail, &r), 1);
    /* four unconstrained events take PMC0-3 in one group */
    struct sched_event four[4];
    for (unsigned i = 0; i < 4; i++)
        four[i] = ev_of("nhm", "UOPS_ISSUED:ANY", false);
    assert_int_equal(sched_ok(four, 4, nhm_avail, &r), 1);
    /* five need two */
    struct sched_event five[5];
    for (unsigned i = 0; i < 5; i++)
        five[i] = ev_of("nhm", "UOPS_ISSUED:ANY", false);
    assert_int_equal(sched_ok(five, 5, nhm_avail, &r), 2);
}

/* One OFFCORE_RSP_0 on Nehalem: different values cannot share a group; equal ones can. */
static void test_offcore_conflict(void **state)
{
    (void)state;
    struct sched_event ev[3];
    struct sched_result r;
    ev[0] = ev_of("nhm", "OFFCORE_RESPONSE_0:DMND_DATA_RD:LOCAL_DRAM", false);
    ev[1] = ev_of("nhm", "OFFCORE_RESPONSE_0:DMND_DATA_RD:REMOTE_DRAM", false);
    assert_int_equal(ev[0].alt[0].reg, MSR_OFFCORE_RSP_0);
    assert_int_equal(sched_ok(ev, 2, nhm_avail, &r), 2);
    assert_true(r.optimal);
    ev[1] = ev_of("nhm", "OFFCORE_RESPONSE_0:DMND_DATA_RD:LOCAL_DRAM:u", false);
    assert_int_equal(sched_ok(ev, 2, nhm_avail, &r), 1); /* same MSR value: shared */
    /* Westmere: the second request moves to OFFCORE_RSP_1; a third distinct one needs a 2nd group */
    ev[0] = ev_of("wsm_dp", "OFFCORE_RESPONSE_0:DMND_DATA_RD:OTHER_LLC_MISS", false);
    ev[1] = ev_of("wsm_dp", "OFFCORE_RESPONSE_0:DMND_DATA_RD:REMOTE_DRAM", false);
    ev[2] = ev_of("wsm_dp", "OFFCORE_RESPONSE_0:DMND_RFO:REMOTE_DRAM", false);
    assert_int_equal(ev[0].nalt, 2);
    assert_int_equal(sched_ok(ev, 2, nhm_avail, &r), 1);
    assert_int_not_equal(r.a[0].alt, r.a[1].alt);
    assert_int_equal(sched_ok(ev, 3, nhm_avail, &r), 2);
    assert_true(r.optimal);
}

/* MSR_PEBS_LD_LAT_THRESHOLD is one register: two thresholds, two groups. */
static void test_ldlat_conflict(void **state)
{
    (void)state;
    struct sched_event ev[3];
    struct sched_result r;
    ev[0] = ev_of("nhm", "MEM_INST_RETIRED:LATENCY_ABOVE_THRESHOLD:ldlat=32", true);
    ev[1] = ev_of("nhm", "MEM_INST_RETIRED:LATENCY_ABOVE_THRESHOLD:ldlat=128", true);
    ev[2] = ev_of("nhm", "MEM_INST_RETIRED:LATENCY_ABOVE_THRESHOLD:ldlat=32:u", true);
    assert_int_equal(sched_ok(ev, 3, nhm_avail, &r), 2);
    assert_int_equal(r.a[0].group, r.a[2].group);
    assert_int_not_equal(r.a[0].group, r.a[1].group);
}

static void test_fixed_counters(void **state)
{
    (void)state;
    struct sched_event ev[7];
    struct sched_result r;
    ev[0] = ev_of("nhm", "INSTRUCTION_RETIRED", false);
    ev[1] = ev_of("nhm", "UNHALTED_CORE_CYCLES", false);
    ev[2] = ev_of("nhm", "UNHALTED_REFERENCE_CYCLES", false);
    for (unsigned i = 3; i < 7; i++)
        ev[i] = ev_of("nhm", "UOPS_ISSUED:ANY", false);
    /* 3 fixed + 4 GP = 7 counters: one group, fixed events on their fixed counters */
    assert_int_equal(sched_ok(ev, 7, nhm_avail, &r), 1);
    assert_int_equal(r.a[0].counter, 32);
    assert_int_equal(r.a[1].counter, 33);
    assert_int_equal(r.a[2].counter, 34);
    /* fixed-counter-only events compete for their one counter */
    ev[3] = ev_of("nhm", "UNHALTED_REFERENCE_CYCLES:u", false);
    assert_int_equal(sched_ok(ev, 4, nhm_avail, &r), 2);
    /* PEBS sampling needs a GP counter: gp_only keeps INSTRUCTION_RETIRED off fixed ctr 0 */
    struct sched_event g = ev_of("nhm", "INSTRUCTION_RETIRED", true);
    assert_int_equal(sched_ok(&g, 1, nhm_avail, &r), 1);
    assert_true(r.a[0].counter < 4);
    /* without fixed counters available, a fixed-only event cannot be scheduled at all */
    const uint64_t gp_only[SCHED_NUM_CLASSES] = {0xf, 0, 0, 0};
    ev[0] = ev_of("nhm", "UOPS_ISSUED:ANY", false);
    ev[1] = ev_of("nhm", "UNHALTED_REFERENCE_CYCLES", false);
    assert_int_equal(sched_assign(ev, 2, gp_only, &r), SCHED_ERR_IMPOSSIBLE);
    assert_int_equal(r.bad_event, 1);
}

/* Classes do not compete: 4 core + 8 uncore events fit in one group. */
static void test_classes(void **state)
{
    (void)state;
    struct sched_event ev[12];
    struct sched_result r;
    for (unsigned i = 0; i < 4; i++)
        ev[i] = ev_of("nhm", "UOPS_ISSUED:ANY", false);
    for (unsigned i = 4; i < 12; i++)
        ev[i] = ev_of("nhm_unc", "UNC_QMC_NORMAL_READS:ANY", false);
    assert_int_equal(sched_ok(ev, 12, nhm_avail, &r), 1);
    ev[11] = ev_of("nhm_unc", "UNC_CLK_UNHALTED", false);
    assert_int_equal(sched_ok(ev, 12, nhm_avail, &r), 1);
    assert_int_equal(r.a[11].counter, 32);
}

/* NetBurst: an ESCR is a shared register, and it decides the counters. */
static void test_netburst_escr(void **state)
{
    (void)state;
    struct sched_event ev[3];
    struct sched_result r;
    ev[0] = ev_of("netburst", "branch_retired:MMTP", false);
    ev[1] = ev_of("netburst", "branch_retired:MMTM", false);
    ev[2] = ev_of("netburst", "branch_retired:MMNP", false);
    assert_int_equal(ev[0].nalt, 2);
    assert_int_equal(ev[0].alt[0].reg, MSR_P4_CRU_ESCR2);
    assert_int_equal(ev[0].alt[0].cntmask, (1u << 12) | (1u << 13) | (1u << 16));
    assert_int_equal(ev[0].alt[1].cntmask, (1u << 14) | (1u << 15) | (1u << 17));
    /* CRU_ESCR2 and CRU_ESCR3 can hold two different masks; the third needs another group */
    assert_int_equal(sched_ok(ev, 3, p4_avail, &r), 2);
    /* the same ESCR value feeds several counters */
    ev[1] = ev_of("netburst", "branch_retired:MMTP:u", false);
    ev[2] = ev_of("netburst", "branch_retired:MMTP", false);
    assert_int_equal(sched_ok(ev, 3, p4_avail, &r), 1);
    /* instr_retired (CRU_ESCR0/1) shares the IQ counters but not the ESCRs */
    ev[1] = ev_of("netburst", "instr_retired:NBOGUSNTAG", false);
    ev[2] = ev_of("netburst", "global_power_events:RUNNING", false);
    assert_int_equal(sched_ok(ev, 3, p4_avail, &r), 1);
    assert_true(r.a[2].counter < 4);
}

/* Brute force: the smallest k for which some assignment of events to k groups is feasible. */
static bool group_feasible(const struct sched_event *ev, const unsigned *idx, unsigned m, const uint64_t *avail,
                           uint64_t *used, uint32_t *regs, uint64_t *vals, unsigned nregs, unsigned pos)
{
    if (pos == m)
        return true;
    const struct sched_event *e = &ev[idx[pos]];
    for (unsigned a = 0; a < e->nalt; a++) {
        const struct sched_alt *alt = &e->alt[a];
        bool clash = false;
        for (unsigned k = 0; k < nregs; k++)
            if (alt->reg && regs[k] == alt->reg && vals[k] != alt->reg_val)
                clash = true;
        if (clash)
            continue;
        uint64_t cand = alt->cntmask & avail[e->cls] & ~used[e->cls];
        for (unsigned b = 0; b < 64; b++) {
            if (!(cand & (1ULL << b)))
                continue;
            used[e->cls] |= 1ULL << b;
            regs[nregs] = alt->reg;
            vals[nregs] = alt->reg_val;
            bool ok = group_feasible(ev, idx, m, avail, used, regs, vals, nregs + (alt->reg ? 1 : 0), pos + 1);
            used[e->cls] &= ~(1ULL << b);
            if (ok)
                return true;
        }
    }
    return false;
}

static unsigned brute_min_groups(const struct sched_event *ev, unsigned n, const uint64_t *avail)
{
    for (unsigned k = 1; k <= n; k++) {
        unsigned assign[8] = {0};
        for (;;) {
            bool ok = true;
            for (unsigned g = 0; g < k && ok; g++) {
                unsigned idx[8], m = 0;
                uint64_t used[SCHED_NUM_CLASSES] = {0};
                uint32_t regs[8];
                uint64_t vals[8];
                for (unsigned i = 0; i < n; i++)
                    if (assign[i] == g)
                        idx[m++] = i;
                ok = group_feasible(ev, idx, m, avail, used, regs, vals, 0, 0);
            }
            if (ok)
                return k;
            unsigned i = 0;
            while (i < n && ++assign[i] == k)
                assign[i++] = 0;
            if (i == n)
                break;
        }
    }
    return n + 1;
}

static void test_minimal_against_brute_force(void **state)
{
    (void)state;
    uint64_t seed = 0x9e3779b97f4a7c15ULL;
    const uint64_t avail[SCHED_NUM_CLASSES] = {0xfULL | PMU_CNT_FIXED(0), 0, 0, 0};
    static const uint64_t masks[] = {0x1, 0x3, 0xf, 0xc, PMU_CNT_FIXED(0), 0x3 | PMU_CNT_FIXED(0), 0x2};
    for (unsigned iter = 0; iter < 300; iter++) {
        struct sched_event ev[7];
        struct sched_result r;
        unsigned n = 2 + iter % 6;
        memset(ev, 0, sizeof(ev));
        for (unsigned i = 0; i < n; i++) {
            seed = seed * 6364136223846793005ULL + 1442695040888963407ULL;
            ev[i].cls = 0;
            ev[i].nalt = 1 + (unsigned)((seed >> 40) % 2);
            for (unsigned a = 0; a < ev[i].nalt; a++) {
                ev[i].alt[a].cntmask = masks[(seed >> (20 + 5 * a)) % 7];
                unsigned reg = (unsigned)((seed >> (33 + 3 * a)) % 4);
                ev[i].alt[a].reg = reg == 3 ? 0 : 0x1a6 + (reg & 1);
                ev[i].alt[a].reg_val = (seed >> (50 + a)) % 2;
            }
        }
        assert_int_equal(sched_assign(ev, n, avail, &r), SCHED_OK);
        check_valid(ev, n, avail, &r);
        unsigned want = brute_min_groups(ev, n, avail);
        if (r.ngroups != want)
            fail_msg("iteration %u: %u groups, brute force says %u", iter, r.ngroups, want);
        assert_true(r.optimal);
        /* deterministic */
        struct sched_result r2;
        assert_int_equal(sched_assign(ev, n, avail, &r2), SCHED_OK);
        assert_memory_equal(&r, &r2, sizeof(r));
    }
}

/* ---- AMD family 15h (Linux arch/x86/events/amd/core.c amd_get_event_constraints_f15h) ------------ */

static const uint64_t f15h_avail[SCHED_NUM_CLASSES] = {0x3f, 0, 0, 0};

static uint64_t f15h_mask_of(const char *spec)
{
    const struct pmu_event_table *t = pmu_event_table_find("amd_fam15h");
    struct pmu_event_enc e;
    char err[256];
    assert_non_null(t);
    if (pmu_event_parse(&t, 1, spec, &e, err, sizeof(err)))
        fail_msg("%s: %s", spec, err);
    return e.cntmask;
}

/* The masks by unit and every exception of the list, through the parser (named rows and raw values). */
static void test_f15h_masks(void **state)
{
    (void)state;
    static const struct {
        const char *spec;
        uint64_t mask;
    } rows[] = {
        {"CPU_CLK_UNHALTED", 0x07},          /* 076H, CU: PERF_CTL[2:0] */
        {"DISPATCH_STALLS", 0x07},           /* 0D1H, DE */
        {"L2_CACHE_MISS", 0x07},             /* 07EH, CU */
        {"REQUESTS_TO_L2", 0x07},            /* 07DH */
        {"INSTRUCTION_CACHE_FETCHES", 0x07}, /* 080H, IC/DE */
        {"PAGE_SPLINTERING", 0x07},          /* 165H: EventSelect[7:4] = 6, CU */
        {"RETIRED_INSTRUCTIONS", 0x3f},      /* 0C0H, EX/LS: all six */
        {"DATA_CACHE_ACCESSES", 0x3f},       /* 040H, DC */
        {"SEGMENT_REGISTER_LOADS", 0x3f},    /* 020H, LS */
        {"DISPATCH_STALL_FOR_STQ_FULL", 0x3f}, /* 1D8H: exception, all six */
        {"FPU_EXCEPTIONS", 0x3f},            /* 0DBH: exception */
        {"DR3_BREAKPOINTS", 0x3f},           /* 0DFH */
        {"IBS_OPS_TAGGED", 0x3f},            /* 1CFH, EX/LS */
        {"LOAD_Q_STORE_Q_FULL", 0x07},       /* 023H: exception */
        {"DATA_CACHE_REFILLS_FROM_NORTHBRIDGE", 0x07}, /* 043H */
        {"UNIFIED_TLB_HIT", 0x07},           /* 045H */
        {"UNIFIED_TLB_MISS", 0x07},          /* 046H */
        {"CYCLES_FPU_EMPTY", 0x38},          /* 001H, FP: PERF_CTL[5:3] */
        {"RETIRED_SSE_OPS", 0x08},           /* 003H: [3] */
        {"RETIRED_SERIALIZING_OPS", 0x38},   /* 005H */
        {"DISPATCHED_FPU_OPS:OPS_PIPE0", 0x38}, /* 000H, unit mask 01H: one nibble */
        {"DISPATCHED_FPU_OPS", 0x08},        /* 000H, unit mask FFH: both nibbles, [3] */
        {"MOVE_SCALAR_OPTIMIZATION", 0x08},  /* 004H, 4 unit-mask bits: [3] */
        {"r0100", 0x38},                     /* 000H/01H */
        {"r1100", 0x08},                     /* 000H/11H */
        {"r0104", 0x38},                     /* 004H, one bit */
        {"r0304", 0x08},                     /* 004H, two bits */
        {"r000b", 0x08},                     /* 00BH */
        {"r000d", 0x08},                     /* 00DH */
        {"r0010", 0x38},                     /* 010H: FP unit */
        {"r002d", 0x08},                     /* 02DH: [3] */
        {"r002e", 0x09},                     /* 02EH: [3,0] */
        {"r0131", 0x07},                     /* 031H, one unit-mask bit */
        {"r0054", 0x07},                     /* 054H */
        {"r0055", 0x07},                     /* 055H */
        {"r008f", 0x01},                     /* 08FH: [0] */
        {"r100000087", 0x01},                /* 187H */
        {"r100000088", 0x01},                /* 188H */
        {"r1000000c0", 0x38},                /* 1C0H: [5:3] */
        {"r1000000d6", 0x3f},                /* 1D6H */
        {"r00d2", 0x07},                     /* 0D2H, DE */
    };
    for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
        uint64_t m = f15h_mask_of(rows[i].spec);
        if (m != rows[i].mask)
            fail_msg("%s: mask 0x%llx, expected 0x%llx", rows[i].spec, (unsigned long long)m,
                     (unsigned long long)rows[i].mask);
    }
}

/* What no family 15h core counter takes is refused with its reason, never placed. */
static void test_f15h_refused(void **state)
{
    (void)state;
    const struct pmu_event_table *t = pmu_event_table_find("amd_fam15h");
    static const char *const refused[] = {"r0331", "r00a0", "r00b5", "r00e0", "r1000000f0"};
    struct pmu_event_enc e;
    char err[256];
    for (size_t i = 0; i < sizeof(refused) / sizeof(refused[0]); i++) {
        err[0] = 0;
        assert_int_equal(pmu_event_parse(&t, 1, refused[i], &e, err, sizeof(err)), PMU_EV_ERR_NO_COUNTER);
        assert_non_null(strstr(err, "family 15h"));
    }
    assert_int_equal(pmu_event_parse(&t, 1, "r0331", &e, err, sizeof(err)), PMU_EV_ERR_NO_COUNTER);
    assert_non_null(strstr(err, "one unit-mask bit"));
    /* The family 10h and K8 tables have no such rule: the same raw value takes every counter. */
    const struct pmu_event_table *t10 = pmu_event_table_find("amd_fam10h");
    assert_int_equal(pmu_event_parse(&t10, 1, "r0076", &e, err, sizeof(err)), 0);
    assert_int_equal(e.cntmask, 0xf);
    /* Family 17h+: 003H needs a counter pair (Merge event), which is not programmed: refused by name. */
    const struct pmu_event_table *z2 = pmu_event_table_find("amd_fam17h_zen2");
    assert_int_equal(pmu_event_parse(&z2, 1, "RETIRED_SSE_AVX_FLOPS:ADD_SUB_FLOPS", &e, err, sizeof(err)),
                     PMU_EV_ERR_NO_COUNTER);
    assert_non_null(strstr(err, "Merge"));
    assert_int_equal(pmu_event_parse(&z2, 1, "r0076", &e, err, sizeof(err)), 0);
    assert_int_equal(e.cntmask, 0x3f);
}

static void f15h_schedule(const char *const *specs, unsigned n, struct sched_result *r)
{
    struct sched_event ev[SCHED_MAX_EVENTS];
    memset(ev, 0, sizeof(ev));
    for (unsigned i = 0; i < n; i++)
        ev[i] = ev_of("amd_fam15h", specs[i], false);
    assert_int_equal(sched_assign(ev, n, f15h_avail, r), SCHED_OK);
    check_valid(ev, n, f15h_avail, r);
    for (unsigned i = 0; i < n; i++) /* each on a counter its own mask allows */
        assert_true(f15h_mask_of(specs[i]) & (1ULL << r->a[i].counter));
}

/* The combinations of the issue: cycles, dispatch stalls and L2 misses as the 4th-6th events used to land on
 * PERF_CTL3/4/5, where they count nothing. */
static void test_f15h_schedule(void **state)
{
    (void)state;
    struct sched_result r;
    static const char *const six[] = {"RETIRED_INSTRUCTIONS", "RETIRED_BRANCH_INSTRUCTIONS", "DATA_CACHE_ACCESSES",
                                      "CPU_CLK_UNHALTED",     "DISPATCH_STALLS",             "L2_CACHE_MISS"};
    f15h_schedule(six, 6, &r);
    assert_int_equal(r.ngroups, 1);
    for (unsigned i = 3; i < 6; i++)
        assert_true(r.a[i].counter <= 2); /* the [2:0] events on PERF_CTL0-2 */
    for (unsigned i = 0; i < 3; i++)
        assert_true(r.a[i].counter >= 3); /* the unrestricted ones make room on 3-5 */

    /* Four [2:0] events cannot share one group: two groups, never a fourth on PERF_CTL3. */
    static const char *const four[] = {"CPU_CLK_UNHALTED", "DISPATCH_STALLS", "L2_CACHE_MISS", "REQUESTS_TO_L2"};
    f15h_schedule(four, 4, &r);
    assert_int_equal(r.ngroups, 2);
    assert_true(r.optimal);

    /* The exceptions together: 08FH on [0], 02EH on [3,0], 02DH on [3], an FP event and 1C0H on [5:3], one [2:0]
     * event: 08FH owns PERF_CTL0 and 02DH PERF_CTL3, so 02EH has no counter left in that group: two groups. */
    static const char *const ex[] = {"r008f", "r002e", "r002d", "CYCLES_FPU_EMPTY", "r1000000c0", "CPU_CLK_UNHALTED"};
    f15h_schedule(ex, 6, &r);
    assert_int_equal(r.ngroups, 2);
    assert_true(r.optimal);
    /* Without 02DH the rest fit in one group: 02EH on 3, 08FH on 0. */
    static const char *const ex5[] = {"r008f", "r002e", "CYCLES_FPU_EMPTY", "r1000000c0", "CPU_CLK_UNHALTED"};
    f15h_schedule(ex5, 5, &r);
    assert_int_equal(r.ngroups, 1);
    assert_int_equal(r.a[0].counter, 0);
    assert_int_equal(r.a[1].counter, 3);

    /* Six restricted events (the dry-run list of tests/boot/test_pmu.py): [2:0] x3, [3], [5:3] x2: one group,
     * exactly one way. */
    static const char *const dry[] = {"CPU_CLK_UNHALTED", "DISPATCH_STALLS",  "L2_CACHE_MISS",
                                      "RETIRED_SSE_OPS",  "CYCLES_FPU_EMPTY", "RETIRED_SERIALIZING_OPS"};
    f15h_schedule(dry, 6, &r);
    assert_int_equal(r.ngroups, 1);
    assert_int_equal(r.a[3].counter, 3);
    /* A [0] event on top: four events want PERF_CTL0-2, two groups. */
    static const char *const dry7[] = {"CPU_CLK_UNHALTED", "DISPATCH_STALLS",  "L2_CACHE_MISS",          "RETIRED_SSE_OPS",
                                       "CYCLES_FPU_EMPTY", "RETIRED_SERIALIZING_OPS", "r008f"};
    f15h_schedule(dry7, 7, &r);
    assert_int_equal(r.ngroups, 2);
}

static void test_bad_arguments(void **state)
{
    (void)state;
    struct sched_event ev[SCHED_MAX_EVENTS + 1];
    struct sched_result r;
    memset(ev, 0, sizeof(ev));
    for (unsigned i = 0; i < SCHED_MAX_EVENTS + 1; i++) {
        ev[i].nalt = 1;
        ev[i].alt[0].cntmask = 0xf;
    }
    assert_int_equal(sched_assign(ev, SCHED_MAX_EVENTS + 1, nhm_avail, &r), SCHED_ERR_ARGS);
    assert_int_equal(sched_assign(NULL, 1, nhm_avail, &r), SCHED_ERR_ARGS);
    assert_int_equal(sched_assign(ev, 1, NULL, &r), SCHED_ERR_ARGS);
    assert_int_equal(sched_assign(ev, 1, nhm_avail, NULL), SCHED_ERR_ARGS);
    assert_int_equal(sched_assign(ev, 0, nhm_avail, &r), SCHED_OK);
    assert_int_equal(r.ngroups, 0);
    ev[0].nalt = 0;
    assert_int_equal(sched_assign(ev, 1, nhm_avail, &r), SCHED_ERR_ARGS);
    ev[0].nalt = 3;
    assert_int_equal(sched_assign(ev, 1, nhm_avail, &r), SCHED_ERR_ARGS);
    ev[0].nalt = 1;
    ev[0].cls = 9;
    assert_int_equal(sched_assign(ev, 1, nhm_avail, &r), SCHED_ERR_ARGS);
    ev[0].cls = 0;
    ev[0].alt[0].cntmask = 0x100; /* a counter that does not exist */
    assert_int_equal(sched_assign(ev, 1, nhm_avail, &r), SCHED_ERR_IMPOSSIBLE);
    assert_int_equal(r.bad_event, 0);
    /* 32 events on 4 counters: 8 groups, quickly */
    for (unsigned i = 0; i < SCHED_MAX_EVENTS; i++) {
        ev[i].cls = 0;
        ev[i].alt[0].cntmask = 0xf;
    }
    assert_int_equal(sched_ok(ev, SCHED_MAX_EVENTS, nhm_avail, &r), 8);
    assert_int_equal(sched_event_from_enc(NULL, false, &ev[0]), -1);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_pmc01_only),
        cmocka_unit_test(test_offcore_conflict),
        cmocka_unit_test(test_ldlat_conflict),
        cmocka_unit_test(test_fixed_counters),
        cmocka_unit_test(test_classes),
        cmocka_unit_test(test_netburst_escr),
        cmocka_unit_test(test_minimal_against_brute_force),
        cmocka_unit_test(test_bad_arguments),
        cmocka_unit_test(test_f15h_masks),
        cmocka_unit_test(test_f15h_refused),
        cmocka_unit_test(test_f15h_schedule),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
