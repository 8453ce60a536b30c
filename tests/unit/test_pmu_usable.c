/* test_pmu_usable.c - per-counter disabling: the usable mask the self-test keeps, and the scheduler never placing an
 * event on a disabled counter (Nehalem constraints: L1D events on PMC0/1 only, PEBS on general counters). */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <string.h>

#include "pmu/event.h"
#include "pmu/sched.h"
#include "pmu/usable.h"
#include "pmu_events.h"

#define NHM_PRESENT (0xfULL | PMU_CNT_FIXED(0) | PMU_CNT_FIXED(1) | PMU_CNT_FIXED(2))
#define REASON "expected 20000 +-2, counted 60000"

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

/* What counting.c does before sched_assign: the model's counters, restricted to the usable ones. */
static int restrict_nhm(const struct pmu_usable *u, const struct sched_event *ev, const char *const *names, unsigned n,
                        uint64_t avail[SCHED_NUM_CLASSES], char *err, size_t len)
{
    avail[PMU_CLS_CORE] = NHM_PRESENT;
    avail[PMU_CLS_UNCORE] = 0xffULL | PMU_CNT_FIXED(0);
    avail[PMU_CLS_AMD_NB] = 0;
    avail[PMU_CLS_NETBURST] = 0;
    err[0] = 0;
    return pmu_usable_restrict(u, ev, names, n, avail, err, len);
}

static void fail_check(struct pmu_usable *u, const char *counter, const char *check)
{
    int bit = pmu_usable_bit_of(counter);
    assert_true(bit >= 0);
    assert_int_equal(pmu_usable_fail(u, (unsigned)bit, check, REASON), 1);
}

/* The check names the self-test gives its counters map to the scheduler's bits; anything else is no single counter. */
static void test_bit_of(void **state)
{
    (void)state;
    assert_int_equal(pmu_usable_bit_of("pmc0"), 0);
    assert_int_equal(pmu_usable_bit_of("pmc3"), 3);
    assert_int_equal(pmu_usable_bit_of("ctr5"), 5);
    assert_int_equal(pmu_usable_bit_of("p4_ctr12"), 12);
    assert_int_equal(pmu_usable_bit_of("fixed0"), 32);
    assert_int_equal(pmu_usable_bit_of("fixed1"), 33);
    /* the CMASK/INV pair, uncore counters, the LBR stack, nothing: no single core counter */
    assert_int_equal(pmu_usable_bit_of("pmc0+pmc1"), -1);
    assert_int_equal(pmu_usable_bit_of("unc_pmc3"), -1);
    assert_int_equal(pmu_usable_bit_of("nb_ctr0"), -1);
    assert_int_equal(pmu_usable_bit_of("unc_fixed"), -1);
    assert_int_equal(pmu_usable_bit_of("lbr"), -1);
    assert_int_equal(pmu_usable_bit_of("pmc"), -1);
    assert_int_equal(pmu_usable_bit_of(""), -1);
    assert_int_equal(pmu_usable_bit_of(NULL), -1);
}

/* Bit by bit: a failed check clears its counter once; the first failure stays the reason. */
static void test_mask_bookkeeping(void **state)
{
    (void)state;
    struct pmu_usable u;
    char buf[256];
    pmu_usable_init(&u, NHM_PRESENT, PMU_USABLE_NAMES_INTEL);
    assert_int_equal(pmu_usable_gp(&u), 0xf);
    assert_int_equal(pmu_usable_fixed(&u), 0x7);
    assert_int_equal(pmu_usable_gone(&u, ~0ULL), 0);

    assert_int_equal(pmu_usable_fail(&u, 2, "branches_pmc2", REASON), 1);
    assert_int_equal(pmu_usable_gp(&u), 0xb);
    assert_int_equal(pmu_usable_fail(&u, 2, "instructions_pmc2", "expected 140000 +-2, counted 0"), 0);
    assert_string_equal(u.loss[2].check, "branches_pmc2"); /* the first failure is the reason */
    assert_string_equal(u.loss[2].reason, REASON);
    assert_int_equal(pmu_usable_fail(&u, 4, "branches_pmc4", REASON), -1); /* Nehalem has no PMC4 */
    assert_int_equal(pmu_usable_gp(&u), 0xb);

    fail_check(&u, "fixed0", "instructions_fixed0");
    assert_int_equal(pmu_usable_fixed(&u), 0x6);
    assert_int_equal(pmu_usable_gp(&u), 0xb);
    assert_int_equal(pmu_usable_gone(&u, ~0ULL), (1ULL << 2) | PMU_CNT_FIXED(0));

    pmu_usable_counter_name(&u, 2, buf, sizeof(buf));
    assert_string_equal(buf, "PMC2");
    pmu_usable_counter_name(&u, 33, buf, sizeof(buf));
    assert_string_equal(buf, "FIXED_CTR1");
    pmu_usable_describe(&u, ~0ULL, buf, sizeof(buf));
    assert_string_equal(buf, "PMC2 (branches_pmc2: " REASON "), FIXED_CTR0 (instructions_fixed0: " REASON ")");
    assert_false(pmu_usable_all_gone(&u, PMU_USABLE_GP_MASK));

    struct pmu_usable amd;
    pmu_usable_init(&amd, 0xf, PMU_USABLE_NAMES_AMD);
    fail_check(&amd, "ctr1", "branches_ctr1");
    pmu_usable_counter_name(&amd, 1, buf, sizeof(buf));
    assert_string_equal(buf, "CTR1");
    assert_int_equal(pmu_usable_gp(&amd), 0xd);
    assert_int_equal(pmu_usable_fixed(&amd), 0);
    struct pmu_usable p4;
    pmu_usable_init(&p4, 0x3ffff, PMU_USABLE_NAMES_P4);
    pmu_usable_counter_name(&p4, 12, buf, sizeof(buf));
    assert_string_equal(buf, "P4_CTR12");
}

/* PMC2 failed: a group of 4 general events on Nehalem no longer fits PMC0-3 in one group; the scheduler places them
 * on PMC0, PMC1, PMC3 over two groups, never on PMC2. Three fit in one group. */
static void test_pmc2_failed_group_of_four(void **state)
{
    (void)state;
    struct pmu_usable u;
    struct sched_event ev[4];
    struct sched_result r;
    uint64_t avail[SCHED_NUM_CLASSES];
    char err[256];
    const char *names[4] = {"UOPS_ISSUED:ANY", "UOPS_ISSUED:ANY", "UOPS_ISSUED:ANY", "UOPS_ISSUED:ANY"};
    for (unsigned i = 0; i < 4; i++)
        ev[i] = ev_of("nhm", "UOPS_ISSUED:ANY", false);

    pmu_usable_init(&u, NHM_PRESENT, PMU_USABLE_NAMES_INTEL);
    assert_int_equal(restrict_nhm(&u, ev, names, 4, avail, err, sizeof(err)), 0);
    assert_int_equal(sched_assign(ev, 4, avail, &r), SCHED_OK);
    assert_int_equal(r.ngroups, 1); /* all counters usable: PMC0-3, one group */

    fail_check(&u, "pmc2", "branches_pmc2");
    assert_int_equal(restrict_nhm(&u, ev, names, 4, avail, err, sizeof(err)), 0);
    assert_int_equal(avail[PMU_CLS_CORE], NHM_PRESENT & ~(1ULL << 2));
    assert_int_equal(sched_assign(ev, 4, avail, &r), SCHED_OK);
    assert_int_equal(r.ngroups, 2);
    assert_true(r.optimal);
    for (unsigned i = 0; i < 4; i++) {
        assert_int_not_equal(r.a[i].counter, 2);
        assert_true(r.a[i].counter < 4);
    }
    assert_int_equal(sched_assign(ev, 3, avail, &r), SCHED_OK);
    assert_int_equal(r.ngroups, 1);
    for (unsigned i = 0; i < 3; i++)
        assert_int_not_equal(r.a[i].counter, 2);
    /* instructions move off a disabled FIXED_CTR0 to a general counter, not onto PMC2 */
    fail_check(&u, "fixed0", "instructions_fixed0");
    struct sched_event inst = ev_of("nhm", "INSTRUCTION_RETIRED", false);
    assert_int_equal(restrict_nhm(&u, &inst, NULL, 1, avail, err, sizeof(err)), 0);
    assert_int_equal(sched_assign(&inst, 1, avail, &r), SCHED_OK);
    assert_true(r.a[0].counter < 4 && r.a[0].counter != 2);
}

/* An event restricted to PMC0/1 ([PAG]: L1D_CACHE_LD) with PMC0 and PMC1 disabled is refused in one line naming the
 * event, both counters and the checks that failed; with only PMC0 disabled it goes on PMC1. */
static void test_pmc01_event_refused(void **state)
{
    (void)state;
    struct pmu_usable u;
    struct sched_event ev[2];
    struct sched_result r;
    uint64_t avail[SCHED_NUM_CLASSES];
    char err[320];
    const char *names[2] = {"UOPS_ISSUED:ANY", "nhm::L1D_CACHE_LD:MESI"};
    ev[0] = ev_of("nhm", "UOPS_ISSUED:ANY", false);
    ev[1] = ev_of("nhm", "L1D_CACHE_LD:MESI", false);
    assert_int_equal(ev[1].alt[0].cntmask & 0xffffffffULL, 0x3);

    pmu_usable_init(&u, NHM_PRESENT, PMU_USABLE_NAMES_INTEL);
    fail_check(&u, "pmc0", "branches_pmc0");
    assert_int_equal(restrict_nhm(&u, ev, names, 2, avail, err, sizeof(err)), 0);
    assert_int_equal(sched_assign(ev, 2, avail, &r), SCHED_OK);
    assert_int_equal(r.ngroups, 1);
    assert_int_equal(r.a[1].counter, 1);
    assert_int_not_equal(r.a[0].counter, 0);

    fail_check(&u, "pmc1", "instructions_pmc1");
    assert_int_equal(restrict_nhm(&u, ev, names, 2, avail, err, sizeof(err)), -1);
    assert_null(strchr(err, '\n'));
    assert_string_equal(err, "nhm::L1D_CACHE_LD:MESI: can count only on PMC0, PMC1, disabled by the self-test: PMC0 "
                             "(branches_pmc0: " REASON "), PMC1 (instructions_pmc1: " REASON ")");
    /* without the refusal the scheduler itself would find no counter */
    assert_int_equal(sched_assign(ev, 2, avail, &r), SCHED_ERR_IMPOSSIBLE);
    assert_int_equal(r.bad_event, 1);
    /* the unconstrained event alone still schedules, on PMC2 or PMC3 */
    assert_int_equal(restrict_nhm(&u, ev, names, 1, avail, err, sizeof(err)), 0);
    assert_int_equal(sched_assign(ev, 1, avail, &r), SCHED_OK);
    assert_true(r.a[0].counter == 2 || r.a[0].counter == 3);
    /* a truncated buffer still ends in a NUL */
    char small[24];
    assert_int_equal(pmu_usable_refuse(&u, names[1], 0x3, small, sizeof(small)), -1);
    assert_int_equal(strlen(small), sizeof(small) - 1);
}

/* Every general counter failed: counting has nothing left (the self-test disables it with this reason), the PEBS
 * event (general counters only) is refused, and uncore events are not judged by this mask. */
static void test_all_general_counters_failed(void **state)
{
    (void)state;
    struct pmu_usable u;
    uint64_t avail[SCHED_NUM_CLASSES];
    struct sched_result r;
    char err[320];
    pmu_usable_init(&u, NHM_PRESENT, PMU_USABLE_NAMES_INTEL);
    for (unsigned i = 0; i < 4; i++) {
        char ctr[8], check[24];
        snprintf(ctr, sizeof(ctr), "pmc%u", i);
        snprintf(check, sizeof(check), "branches_pmc%u", i);
        assert_false(pmu_usable_all_gone(&u, PMU_USABLE_GP_MASK));
        fail_check(&u, ctr, check);
    }
    assert_true(pmu_usable_all_gone(&u, PMU_USABLE_GP_MASK));
    assert_int_equal(pmu_usable_gp(&u), 0);
    assert_int_equal(pmu_usable_fixed(&u), 0x7);
    pmu_usable_gone_reason(&u, PMU_USABLE_GP_MASK, "general counter", err, sizeof(err));
    assert_string_equal(err, "self-test disabled every general counter: PMC0 (branches_pmc0), PMC1 (branches_pmc1), "
                             "PMC2 (branches_pmc2), PMC3 (branches_pmc3)");

    struct sched_event pebs = ev_of("nhm", "MEM_INST_RETIRED:LATENCY_ABOVE_THRESHOLD:ldlat=3", true);
    const char *name = "nhm::MEM_INST_RETIRED:LATENCY_ABOVE_THRESHOLD";
    assert_int_equal(restrict_nhm(&u, &pebs, &name, 1, avail, err, sizeof(err)), -1);
    assert_non_null(strstr(err, "can count only on PMC0, PMC1, PMC2, PMC3, disabled by the self-test"));

    struct sched_event unc = ev_of("nhm_unc", "UNC_QMC_NORMAL_READS:ANY", false);
    assert_int_equal(restrict_nhm(&u, &unc, NULL, 1, avail, err, sizeof(err)), 0);
    assert_int_equal(sched_assign(&unc, 1, avail, &r), SCHED_OK);

    /* no fixed counter judged wrong: an all-gone test over an absent class is false */
    struct pmu_usable amd;
    pmu_usable_init(&amd, 0xf, PMU_USABLE_NAMES_AMD);
    assert_false(pmu_usable_all_gone(&amd, ~PMU_USABLE_GP_MASK));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_bit_of),
        cmocka_unit_test(test_mask_bookkeeping),
        cmocka_unit_test(test_pmc2_failed_group_of_four),
        cmocka_unit_test(test_pmc01_event_refused),
        cmocka_unit_test(test_all_general_counters_failed),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
