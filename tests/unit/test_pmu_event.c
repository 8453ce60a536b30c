/* test_pmu_event.c - the event specifier parser: lookups, modifiers, errors and hostile input. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <string.h>

#include "pmu/event.h"
#include "pmu/msr_pmu.h"
#include "pmu_events.h"

static int parse(const char *table, const char *spec, struct pmu_event_enc *e, char *err, size_t errlen)
{
    const struct pmu_event_table *t = pmu_event_table_find(table);
    assert_non_null(t);
    return pmu_event_parse(&t, 1, spec, e, err, errlen);
}

static struct pmu_event_enc parse_ok(const char *table, const char *spec)
{
    struct pmu_event_enc e;
    char err[256] = "";
    if (parse(table, spec, &e, err, sizeof(err)))
        fail_msg("%s::%s: %s", table, spec, err);
    return e;
}

static void expect_err(const char *table, const char *spec, int code, const char *needle)
{
    struct pmu_event_enc e;
    char err[256] = "";
    int rc = parse(table, spec, &e, err, sizeof(err));
    if (rc != code)
        fail_msg("%s::%s: rc %d (expected %d), err '%s'", table, spec, rc, code, err);
    if (needle && !strstr(err, needle))
        fail_msg("%s::%s: '%s' lacks '%s'", table, spec, err, needle);
    assert_null(strchr(err, '\n')); /* one line */
}

static unsigned count_char(const char *s, char c)
{
    unsigned n = 0;
    for (; *s; s++)
        n += *s == c;
    return n;
}

static void test_unknown_event_suggests(void **state)
{
    (void)state;
    char err[256];
    struct pmu_event_enc e;
    assert_int_equal(parse("nhm", "MEM_LOAD_RETRIED:LLC_MISS", &e, err, sizeof(err)), PMU_EV_ERR_UNKNOWN_EVENT);
    assert_non_null(strstr(err, "MEM_LOAD_RETIRED"));
    /* at most three suggestions: "a, b or c" */
    assert_true(count_char(err, ',') <= 1 + 1); /* "nhm/..." has none; list has <= 1 comma */
    expect_err("nhm", "UNC_QMC_NORMAL_READ:ANY", PMU_EV_ERR_UNKNOWN_EVENT, NULL);
    expect_err("nhm_unc", "UNC_QMC_NORMAL_READ:ANY", PMU_EV_ERR_UNKNOWN_EVENT, "UNC_QMC_NORMAL_READS");
    expect_err("nhm", "ZZZZZZZZZZZZZZZZZZZZZZZZZZ", PMU_EV_ERR_UNKNOWN_EVENT, "no close match");
    expect_err("nhm", "MEM_LOAD_RETIRED:LLC_MIS", PMU_EV_ERR_UNKNOWN_UMASK, "LLC_MISS");
    expect_err("amd_fam10h", "RETIRED_INSTRUCTION", PMU_EV_ERR_UNKNOWN_EVENT, "RETIRED_INSTRUCTIONS");
}

static void test_edit_distance(void **state)
{
    (void)state;
    assert_int_equal(pmu_edit_distance("", ""), 0);
    assert_int_equal(pmu_edit_distance("abc", ""), 3);
    assert_int_equal(pmu_edit_distance("kitten", "sitting"), 3);
    assert_int_equal(pmu_edit_distance("INST_RETIRED", "inst_retired"), 0);
    assert_int_equal(pmu_edit_distance("RETRIED", "RETIRED"), 2);
    /* longer than the 63-character cap: compared on the first 63 */
    char a[200], b[200];
    memset(a, 'A', sizeof(a) - 1);
    a[sizeof(a) - 1] = 0;
    memcpy(b, a, sizeof(b));
    b[150] = 'B';
    assert_int_equal(pmu_edit_distance(a, b), 0);
}

static void test_umask_rules(void **state)
{
    (void)state;
    expect_err("nhm", "UOPS_EXECUTED", PMU_EV_ERR_NEEDS_UMASK, "UOPS_EXECUTED:PORT0");
    expect_err("nhm", "UOPS_EXECUTED:PORT0:PORT1", PMU_EV_ERR_COMBINE, "cannot be combined");
    /* combinable events OR their masks */
    assert_int_equal(parse_ok("nhm_unc", "UNC_QMC_NORMAL_READS:CH0:CH1").evtsel, 0x40032C);
    /* a unit mask that implies cmask/inv conflicts with an explicit different value */
    expect_err("nhm", "UOPS_EXECUTED:PORT015_STALL_CYCLES:c=2", PMU_EV_ERR_MODIFIER, "conflicts");
    assert_int_equal(parse_ok("nhm", "UOPS_EXECUTED:PORT015_STALL_CYCLES:c=1").evtsel, 0x01C340B1);
    /* case-insensitive */
    assert_int_equal(parse_ok("nhm", "uops_executed:port0").evtsel, 0x4301B1);
    /* bare event takes libpfm4's default unit mask */
    assert_int_equal(parse_ok("nhm_unc", "UNC_QMC_NORMAL_READS").evtsel, 0x40072C);
}

static void test_modifiers(void **state)
{
    (void)state;
    assert_int_equal(parse_ok("nhm", "INST_RETIRED:ANY_P:u").evtsel, 0x4100C0);
    assert_int_equal(parse_ok("nhm", "INST_RETIRED:ANY_P:k").evtsel, 0x4200C0);
    assert_int_equal(parse_ok("nhm", "INST_RETIRED:ANY_P:u:k").evtsel, 0x4300C0);
    assert_int_equal(parse_ok("nhm", "INST_RETIRED:ANY_P:k=1:u=0").evtsel, 0x4200C0);
    assert_int_equal(parse_ok("nhm", "INST_RETIRED:ANY_P:t").evtsel, 0x6300C0);
    assert_int_equal(parse_ok("nhm", "UOPS_ISSUED:ANY:cmask=0x3").evtsel, 0x0343010E);
    expect_err("nhm", "INST_RETIRED:ANY_P:u=0:k=0", PMU_EV_ERR_MODIFIER, "nothing");
    expect_err("netburst", "branch_retired", PMU_EV_ERR_NEEDS_UMASK, "MMNP");
    /* [NHM] Table 10: CMASK bits 31:29 reserved -> c <= 31 on Nehalem, not on AMD */
    expect_err("nhm", "UOPS_ISSUED:ANY:c=32", PMU_EV_ERR_RANGE, "max 31");
    assert_int_equal(parse_ok("amd_fam10h", "RETIRED_INSTRUCTIONS:c=200").evtsel, 0xC84300C0);
    expect_err("nhm", "UOPS_ISSUED:ANY:e", PMU_EV_ERR_MODIFIER, "c=N");
    expect_err("nhm", "UOPS_ISSUED:ANY:c", PMU_EV_ERR_MODIFIER, "needs a value");
    expect_err("nhm", "UOPS_ISSUED:ANY:c=zz", PMU_EV_ERR_MODIFIER, "bad value");
    expect_err("nhm", "UOPS_ISSUED:ANY:u=2", PMU_EV_ERR_RANGE, NULL);
    expect_err("nhm", "UOPS_ISSUED:ANY:c=99999999999999999999999", PMU_EV_ERR_MODIFIER, NULL);
    expect_err("nhm", "UOPS_ISSUED:ANY:h", PMU_EV_ERR_MODIFIER, "AMD only");
    expect_err("nhm_unc", "UNC_QMC_NORMAL_READS:ANY:u", PMU_EV_ERR_MODIFIER, "privilege");
    expect_err("nhm", "INST_RETIRED:ANY_P:ldlat=10", PMU_EV_ERR_MODIFIER, "ldlat");
    expect_err("nhm", "MEM_INST_RETIRED:LATENCY_ABOVE_THRESHOLD:ldlat=2", PMU_EV_ERR_RANGE, "[3, 65535]");
    expect_err("nhm", "MEM_INST_RETIRED:LATENCY_ABOVE_THRESHOLD:ldlat=70000", PMU_EV_ERR_RANGE, NULL);
    expect_err("nhm", "MEM_INST_RETIRED:LATENCY_ABOVE_THRESHOLD:c=1", PMU_EV_ERR_MODIFIER, "3.7");
    /* ldlat default is libpfm4's (the documented minimum, 3) */
    assert_int_equal(parse_ok("nhm", "MEM_INST_RETIRED:LATENCY_ABOVE_THRESHOLD").extra, 3);
    assert_int_equal(parse_ok("amd_fam10h", "RETIRED_INSTRUCTIONS:h").evtsel, 0x200004300C0ULL);
    expect_err("amd_fam10h", "RETIRED_INSTRUCTIONS:t", PMU_EV_ERR_MODIFIER, "Intel only");
    expect_err("netburst", "instr_retired:NBOGUSNTAG:c=1", PMU_EV_ERR_MODIFIER, "NetBurst");
    expect_err("netburst", "instr_retired:NBOGUSNTAG:e", PMU_EV_ERR_MODIFIER, "thr");
    expect_err("netburst", "instr_retired:NBOGUSNTAG:thr=16", PMU_EV_ERR_RANGE, NULL);
}

static void test_fixed_counters(void **state)
{
    (void)state;
    struct pmu_event_enc e = parse_ok("nhm", "INSTRUCTION_RETIRED");
    assert_int_equal(e.fixed_idx, 0);
    assert_int_equal(e.fixed_ctrl, IA32_FIXED_CTR_CTRL_EN_OS | IA32_FIXED_CTR_CTRL_EN_USR);
    assert_int_equal(e.cntmask, 0xf | PMU_CNT_FIXED(0));
    e = parse_ok("nhm", "UNHALTED_CORE_CYCLES:u:t");
    assert_int_equal(e.fixed_idx, 1);
    assert_int_equal(e.fixed_ctrl, IA32_FIXED_CTR_CTRL_EN_USR | IA32_FIXED_CTR_CTRL_ANY);
    e = parse_ok("nhm", "UNHALTED_REFERENCE_CYCLES");
    assert_int_equal(e.fixed_idx, 2);
    assert_int_equal(e.cntmask, PMU_CNT_FIXED(2)); /* fixed counter only */
    /* cmask cannot be applied on a fixed counter: the event moves to the GP counters */
    e = parse_ok("nhm", "UNHALTED_CORE_CYCLES:c=1:i");
    assert_int_equal(e.fixed_idx, PMU_FIXED_NONE);
    assert_int_equal(e.cntmask, 0xf);
    expect_err("nhm", "UNHALTED_REFERENCE_CYCLES:c=1", PMU_EV_ERR_NO_COUNTER, NULL);
    /* constrained events keep their mask ([PAG]: L1D events only on the first two counters) */
    assert_int_equal(parse_ok("nhm", "L1D_CACHE_LD:MESI").cntmask, 0x3);
    assert_int_equal(parse_ok("wsm_dp", "OFFCORE_REQUESTS_OUTSTANDING:DEMAND_READ_DATA").cntmask, 0x1);
    /* the generic table's fixed counter 3 (TOPDOWN_SLOTS, v5) */
    assert_int_equal(parse_ok("arch", "TOPDOWN_SLOTS").fixed_idx, 3);
}

static void test_raw(void **state)
{
    (void)state;
    struct pmu_event_enc a = parse_ok("nhm", "r0x01c4"), b = parse_ok("nhm", "r01c4"), c = parse_ok("nhm", "R1C4");
    assert_int_equal(a.evtsel, 0x4301C4);
    assert_int_equal(b.evtsel, a.evtsel);
    assert_int_equal(c.evtsel, a.evtsel);
    assert_null(a.desc);
    /* raw inherits the table's constraints for the same encoding */
    assert_int_equal(parse_ok("nhm", "r0f40").cntmask, 0x3);
    /* USR/OS/EN in the raw value are ignored (set from u/k), INT is refused */
    assert_int_equal(parse_ok("nhm", "r4301c4:u").evtsel, 0x4101C4);
    expect_err("nhm", "r1001c4", PMU_EV_ERR_RANGE, "INT");
    expect_err("nhm", "r1ffffffff", PMU_EV_ERR_RANGE, NULL);
    expect_err("nhm", "r01b7", PMU_EV_ERR_MODIFIER, "offcore_rsp");
    struct pmu_event_enc o = parse_ok("nhm", "r01b7:offcore_rsp=0x4001");
    assert_int_equal(o.extra_msr, MSR_OFFCORE_RSP_0);
    assert_int_equal(o.extra, 0x4001);
    expect_err("nhm", "r01b7:offcore_rsp=0x17", PMU_EV_ERR_RANGE, "response");
    expect_err("nhm", "r01c4:frob", PMU_EV_ERR_MODIFIER, "unknown modifier");
    expect_err("nhm_unc", "r072c:u", PMU_EV_ERR_MODIFIER, "privilege");
    assert_int_equal(parse_ok("nhm_unc", "r072c").evtsel, 0x40072C);
    assert_int_equal(parse_ok("amd_fam10h", "r0x4000000e0").evtsel, 0x4004300E0ULL);
    expect_err("netburst", "r0102", PMU_EV_ERR_SYNTAX, "ESCR"); /* an ESCR must be chosen */
    expect_err("nhm", "r0x", PMU_EV_ERR_UNKNOWN_EVENT, NULL);
    expect_err("nhm", "r12345678901234567", PMU_EV_ERR_UNKNOWN_EVENT, NULL); /* 17 digits */
}

static void test_offcore_alternative(void **state)
{
    (void)state;
    struct pmu_event_enc e = parse_ok("wsm_dp", "OFFCORE_RESPONSE_0:DMND_DATA_RD:LOCAL_DRAM_AND_REMOTE_CACHE_HIT");
    assert_int_equal(e.extra_msr, MSR_OFFCORE_RSP_0);
    assert_int_equal(e.alt_extra_msr, MSR_OFFCORE_RSP_1);
    assert_int_equal(e.alt_evtsel, 0x4301BB);
    /* Nehalem has only OFFCORE_RSP_0: no alternative */
    e = parse_ok("nhm", "OFFCORE_RESPONSE_0:DMND_DATA_RD:LOCAL_DRAM");
    assert_int_equal(e.alt_extra_msr, 0);
    expect_err("nhm", "OFFCORE_RESPONSE_1:DMND_DATA_RD:LOCAL_DRAM", PMU_EV_ERR_UNKNOWN_EVENT, "OFFCORE_RESPONSE_0");
    expect_err("nhm", "OFFCORE_RESPONSE_0:DMND_DATA_RD:offcore_rsp=0x80", PMU_EV_ERR_RANGE, NULL);
}

static void test_multiple_tables_and_prefix(void **state)
{
    (void)state;
    const struct pmu_event_table *t[2] = {pmu_event_table_find("nhm"), pmu_event_table_find("nhm_unc")};
    struct pmu_event_enc e;
    char err[256];
    assert_int_equal(pmu_event_parse(t, 2, "UNC_QMC_NORMAL_READS:ANY", &e, err, sizeof(err)), 0);
    assert_int_equal(e.cls, PMU_CLS_UNCORE);
    assert_string_equal(e.name, "nhm_unc::UNC_QMC_NORMAL_READS:ANY");
    assert_int_equal(pmu_event_parse(t, 2, "INST_RETIRED:ANY_P", &e, err, sizeof(err)), 0);
    assert_int_equal(e.cls, PMU_CLS_CORE);
    /* prefix picks another generated table even when not passed in */
    assert_int_equal(pmu_event_parse(t, 1, "wsm_unc::UNC_QMC_NORMAL_READS:ANY", &e, err, sizeof(err)), 0);
    assert_int_equal(pmu_event_parse(t, 1, "bogus::INST_RETIRED", &e, err, sizeof(err)), PMU_EV_ERR_UNKNOWN_EVENT);
    assert_non_null(strstr(err, "bogus"));
    assert_int_equal(pmu_event_parse(t, 1, "::INST_RETIRED", &e, err, sizeof(err)), PMU_EV_ERR_UNKNOWN_EVENT);
    assert_non_null(pmu_event_table_find("NHM"));
    assert_null(pmu_event_table_find("nhm2"));
    assert_null(pmu_event_table_find(""));
}

static void test_hostile_input(void **state)
{
    (void)state;
    const struct pmu_event_table *t = pmu_event_table_find("nhm");
    struct pmu_event_enc e;
    char err[256], tiny[8];
    static const char *bad[] = {"", "   ", ":", "::", ":INST_RETIRED", "INST_RETIRED:", "INST_RETIRED::ANY_P",
                                "INST_RETIRED:ANY_P:", "a:b:c:d:e:f:g:h:i:j:k:l:m:n:o:p:q:r:s:t:u:v:w:x:y:z"};
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        int rc = pmu_event_parse(&t, 1, bad[i], &e, err, sizeof(err));
        if (rc == 0)
            fail_msg("'%s' accepted", bad[i]);
    }
    char longspec[600];
    memset(longspec, 'A', sizeof(longspec) - 1);
    longspec[sizeof(longspec) - 1] = 0;
    assert_int_equal(pmu_event_parse(&t, 1, longspec, &e, err, sizeof(err)), PMU_EV_ERR_SYNTAX);
    assert_int_equal(pmu_event_parse(&t, 1, NULL, &e, err, sizeof(err)), PMU_EV_ERR_SYNTAX);
    assert_int_equal(pmu_event_parse(NULL, 1, "INST_RETIRED", &e, err, sizeof(err)), PMU_EV_ERR_SYNTAX);
    assert_int_equal(pmu_event_parse(&t, 0, "INST_RETIRED", &e, err, sizeof(err)), PMU_EV_ERR_SYNTAX);
    assert_int_equal(pmu_event_parse(&t, 1, "INST_RETIRED", NULL, err, sizeof(err)), PMU_EV_ERR_SYNTAX);
    /* error text is truncated to the buffer, never overflows; NULL buffer is fine */
    assert_int_equal(pmu_event_parse(&t, 1, "NOPE_NOPE", &e, tiny, sizeof(tiny)), PMU_EV_ERR_UNKNOWN_EVENT);
    assert_true(strlen(tiny) < sizeof(tiny));
    assert_int_equal(pmu_event_parse(&t, 1, "NOPE_NOPE", &e, NULL, 0), PMU_EV_ERR_UNKNOWN_EVENT);
    /* surrounding blanks are fine */
    assert_int_equal(pmu_event_parse(&t, 1, "  INST_RETIRED:ANY_P \n", &e, err, sizeof(err)), 0);
}

/* Every generated row parses by its own name, and the result is a writable control value: EN set,
 * INT clear, the row's event select in place. */
static void test_every_row_parses(void **state)
{
    (void)state;
    unsigned rows = 0;
    for (unsigned ti = 0; ti < PMU_TBL_COUNT; ti++) {
        const struct pmu_event_table *t = &pmu_event_tables[ti];
        assert_true(t->count > 0);
        for (uint32_t i = 0; i < t->count; i++) {
            const struct pmu_event_desc *d = &t->events[i];
            struct pmu_event_enc e;
            char err[256];
            int rc = pmu_event_parse(&t, 1, d->name, &e, err, sizeof(err));
            if (rc && t->cnt_rule != PMU_CNT_RULE_NONE && d->cntmask == 0) {
                /* A row the table's counter rule leaves no counter (family 17h+ 003H, pairs only) is
                 * refused with the rule's reason, never placed. */
                assert_int_equal(rc, PMU_EV_ERR_NO_COUNTER);
                assert_non_null(strstr(err, "Linux"));
                rows++;
                continue;
            }
            if (rc)
                fail_msg("%s::%s: %s", t->name, d->name, err);
            rows++;
            switch (t->kind) {
            case PMU_TBL_KIND_INTEL_CORE:
                assert_true(e.evtsel & IA32_PERFEVTSEL_EN);
                assert_int_equal(e.evtsel & IA32_PERFEVTSEL_INT, 0);
                assert_int_equal(e.evtsel & 0xff, d->event);
                break;
            case PMU_TBL_KIND_INTEL_UNCORE:
                if (d->fixed) {
                    assert_int_equal(e.evtsel, UNCORE_FIXED_CTR_CTRL_EN);
                } else {
                    assert_true(e.evtsel & UNCORE_PERFEVTSEL_EN);
                    assert_int_equal(e.evtsel & UNCORE_PERFEVTSEL_PMI, 0);
                }
                break;
            case PMU_TBL_KIND_AMD_CORE:
            case PMU_TBL_KIND_AMD_NB:
                assert_true(e.evtsel & AMD_PERF_CTL_EN);
                assert_int_equal(e.evtsel & AMD_PERF_CTL_INT, 0);
                assert_int_equal((e.evtsel & 0xff) | (((e.evtsel >> 32) & 0xf) << 8), d->event);
                break;
            case PMU_TBL_KIND_NETBURST:
                assert_true(e.evtsel & P4_CCCR_ENABLE);
                assert_int_equal(e.evtsel & (P4_CCCR_OVF_PMI_T0 | P4_CCCR_OVF_PMI_T1), 0);
                assert_int_equal((e.escr >> 25) & 0x3f, d->event);
                assert_true(e.escr_msr[0] >= MSR_P4_ESCR_FIRST && e.escr_msr[0] <= MSR_P4_ESCR_LAST);
                break;
            }
            assert_true(e.cntmask != 0);
        }
    }
    assert_true(rows > 3000);
    assert_true(strstr(PMU_EVENTS_SOURCE, "libpfm4") != NULL);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_unknown_event_suggests),
        cmocka_unit_test(test_edit_distance),
        cmocka_unit_test(test_umask_rules),
        cmocka_unit_test(test_modifiers),
        cmocka_unit_test(test_fixed_counters),
        cmocka_unit_test(test_raw),
        cmocka_unit_test(test_offcore_alternative),
        cmocka_unit_test(test_multiple_tables_and_prefix),
        cmocka_unit_test(test_hostile_input),
        cmocka_unit_test(test_every_row_parses),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
