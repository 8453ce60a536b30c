/* test_selftest_judge.c - the PMU self-test's verdicts on scripted counts: what a right encoding counts passes, what a
 * wrong one counts (core cycles instead of branches, a dropped unit mask, INV ignored, off-core bytes swapped, an
 * uncore counter that counts nothing) fails and names the counter. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <string.h>

#include "pmu/event.h"
#include "pmu/known_loop.h"
#include "pmu/pmu_model.h"
#include "pmu/selftest_judge.h"
#include "pmu_events.h"

#define N 20000ULL
#define CONST 37ULL /* what the enable/disable path and the loop's entry/exit add (any value in 0..1024) */
#define TOL 2
#define CONST_MAX 1024

/* Counts the branch loop gives over n and 2n iterations for an event that counts `per_iter` per iteration
 * (a rational per_iter_num / per_iter_den for core cycles) plus a constant. */
static void loop_counts(uint64_t num, uint64_t den, uint64_t konst, uint64_t *c1, uint64_t *c2)
{
    *c1 = N * num / den + konst;
    *c2 = 2 * N * num / den + konst;
}

static void judge_loop(struct st_check *c, const char *name, const char *counter, uint64_t per_iter, uint64_t num,
                       uint64_t den)
{
    uint64_t c1, c2;
    loop_counts(num, den, CONST, &c1, &c2);
    st_check_init(c, name, counter, "EVENT", 0);
    st_judge_loop(c, c1, c2, N, per_iter, TOL, CONST_MAX);
}

/* BR_INST_RETIRED.CONDITIONAL on PMC2: 1 per iteration. */
static void test_branches_right_encoding_passes(void **state)
{
    (void)state;
    struct st_check c;
    judge_loop(&c, "branches_pmc2", "pmc2", PMU_BRANCH_LOOP_COND_PER_ITER, 1, 1);
    assert_int_equal(c.status, ST_OK);
    assert_true(c.judged);
    assert_int_equal(c.counted, N);
    assert_int_equal(c.expected_lo, N - TOL);
    assert_int_equal(c.expected_hi, N + TOL);
    /* a count one off in the difference is still exact within the stated +-2 */
    uint64_t c1 = N + CONST, c2 = 2 * N + CONST + 1;
    st_judge_loop(&c, c1, c2, N, 1, TOL, CONST_MAX);
    assert_int_equal(c.status, ST_OK);
}

/* The same counter programmed with the unit mask dropped (C4H/00H: all branches, 3 per iteration), or counting core
 * cycles (at least 9 per iteration on the imul chain), or nothing: each fails. */
static void test_branches_wrong_encodings_fail(void **state)
{
    (void)state;
    struct st_check c;
    judge_loop(&c, "branches_pmc2", "pmc2", PMU_BRANCH_LOOP_COND_PER_ITER, PMU_BRANCH_LOOP_BRANCHES_PER_ITER, 1);
    assert_int_equal(c.status, ST_FAILED);
    assert_int_equal(c.counted, 3 * N);
    assert_non_null(strstr(c.detail, "3.000 per iteration"));
    /* core cycles: 9.7 per iteration */
    judge_loop(&c, "branches_pmc2", "pmc2", PMU_BRANCH_LOOP_COND_PER_ITER, 97, 10);
    assert_int_equal(c.status, ST_FAILED);
    /* even a core that ran the loop at exactly 9 cycles per iteration */
    judge_loop(&c, "branches_pmc2", "pmc2", PMU_BRANCH_LOOP_COND_PER_ITER, PMU_BRANCH_LOOP_MIN_CYCLES_PER_ITER, 1);
    assert_int_equal(c.status, ST_FAILED);
    /* a counter that counts nothing (QEMU's silent MSRs, a counter not enabled) */
    st_judge_loop(&c, 0, 0, N, 1, TOL, CONST_MAX);
    assert_int_equal(c.status, ST_FAILED);
    /* a counter that counts the right difference but from a negative start (the constant part must be 0..max) */
    st_judge_loop(&c, N - 10, 2 * N - 10, N, 1, TOL, CONST_MAX);
    assert_int_equal(c.status, ST_FAILED);
    /* a constant part beyond what the enable path can add */
    st_judge_loop(&c, N + 5000, 2 * N + 5000, N, 1, TOL, CONST_MAX);
    assert_int_equal(c.status, ST_FAILED);
    /* a count that went down */
    st_judge_loop(&c, 2 * N, N, N, 1, TOL, CONST_MAX);
    assert_int_equal(c.status, ST_FAILED);
    assert_non_null(strstr(c.detail, "negative"));
}

/* Instructions: 7 per iteration; core cycles (>= 9) or branches (3) in their place fail. */
static void test_instructions(void **state)
{
    (void)state;
    struct st_check c;
    judge_loop(&c, "instructions_pmc0", "pmc0", PMU_BRANCH_LOOP_INSNS_PER_ITER, 7, 1);
    assert_int_equal(c.status, ST_OK);
    judge_loop(&c, "instructions_pmc0", "pmc0", PMU_BRANCH_LOOP_INSNS_PER_ITER, PMU_BRANCH_LOOP_MIN_CYCLES_PER_ITER,
               1);
    assert_int_equal(c.status, ST_FAILED);
    judge_loop(&c, "instructions_pmc0", "pmc0", PMU_BRANCH_LOOP_INSNS_PER_ITER, 3, 1);
    assert_int_equal(c.status, ST_FAILED);
    /* uops instead of instructions: dec+jnz macro-fused, 6 per iteration */
    judge_loop(&c, "instructions_pmc0", "pmc0", PMU_BRANCH_LOOP_INSNS_PER_ITER, 6, 1);
    assert_int_equal(c.status, ST_FAILED);
}

/* [PAG]: CMASK=1 (inv 0) + CMASK=1:INV = core cycles. */
static void test_cmask_inv(void **state)
{
    (void)state;
    struct st_check c;
    const uint64_t cycles = 200000, active = 61000;
    st_check_init(&c, "cmask_inv", "pmc0+pmc1", "UOPS_RETIRED:STALL_CYCLES", 0);
    st_judge_cmask_inv(&c, active, cycles - active + 5, cycles, 0.01, 64);
    assert_int_equal(c.status, ST_OK);
    assert_int_equal(c.counted, cycles + 5);
    /* INV ignored: the second counter counts what the first does */
    st_judge_cmask_inv(&c, active, active, cycles, 0.01, 64);
    assert_int_equal(c.status, ST_FAILED);
    assert_non_null(strstr(c.detail, "INV"));
    /* INV ignored on a loop whose active cycles are almost exactly half: identical counts still fail */
    st_judge_cmask_inv(&c, cycles / 2, cycles / 2, cycles, 0.01, 64);
    assert_int_equal(c.status, ST_FAILED);
    /* CMASK dropped: the first counts uops (7 per iteration on 10 cycles), the second (cmask 0 with INV) nothing */
    st_judge_cmask_inv(&c, cycles * 7 / 10, 0, cycles, 0.01, 64);
    assert_int_equal(c.status, ST_FAILED);
    /* CMASK in the wrong field: both count every uop, the sum far above the cycles */
    st_judge_cmask_inv(&c, cycles * 7 / 10, cycles * 7 / 10 + 3, cycles, 0.01, 64);
    assert_int_equal(c.status, ST_FAILED);
    /* silent counters */
    st_judge_cmask_inv(&c, 0, 0, 0, 0.01, 64);
    assert_int_equal(c.status, ST_FAILED);
}

/* The off-core response: request byte 01H (DMND_DATA_RD), response byte 60H (local or remote DRAM). */
static void test_offcore_request_response(void **state)
{
    (void)state;
    struct st_check c;
    const uint64_t loads = 32768;
    assert_int_equal(st_swap_bytes16(0x6001), 0x0160);
    st_check_init(&c, "offcore_request_response", "pmc0", "OFFCORE_RESPONSE_0:rsp=0x6001", 0);
    /* right: most demand reads of a chase over 4 x the LLC come from DRAM; prefetch requests answered by the uncore
     * are next to none */
    st_judge_offcore(&c, 0x6001, loads * 7 / 8, 0x0160, 12, loads);
    assert_int_equal(c.status, ST_OK);
    assert_int_equal(c.expected_lo, loads / 4);
    assert_int_equal(c.expected_hi, ST_UNBOUNDED);
    /* an encoder that swaps the two bytes programs 0x0160 when asked for 0x6001 and the other way round */
    st_judge_offcore(&c, 0x6001, 12, 0x0160, loads * 7 / 8, loads);
    assert_int_equal(c.status, ST_FAILED);
    assert_non_null(strstr(c.detail, "swapped"));
    /* a PMU (or an encoder) that ignores one half counts both the same */
    st_judge_offcore(&c, 0x6001, loads * 7 / 8, 0x0160, loads * 7 / 8, loads);
    assert_int_equal(c.status, ST_FAILED);
    /* nothing counted */
    st_judge_offcore(&c, 0x6001, 0, 0x0160, 0, loads);
    assert_int_equal(c.status, ST_FAILED);
    /* a control that is not the byte swap decides nothing */
    st_judge_offcore(&c, 0x6001, loads, 0x6001, 0, loads);
    assert_int_equal(c.status, ST_FAILED);
    st_judge_offcore(&c, 0x0101, loads, 0x0101, 0, loads);
    assert_int_equal(c.status, ST_FAILED);
}

/* The uncore general counter over a known read stream: one count per 64-byte line, 0.85..1.25. */
static void test_uncore_stream(void **state)
{
    (void)state;
    struct st_check c;
    const uint64_t lines = (64ULL << 20) / 64;
    st_check_init(&c, "uncore_stream_unc_pmc5", "unc_pmc5", "UNC_QMC_NORMAL_READS:ANY", 0);
    st_judge_ratio(&c, lines + lines / 50, lines, 0.85, 1.25, "one per line");
    assert_int_equal(c.status, ST_OK);
    /* silent, or a counter programmed with the writes event (a read pass writes back nothing) */
    st_judge_ratio(&c, 0, lines, 0.85, 1.25, "one per line");
    assert_int_equal(c.status, ST_FAILED);
    /* counting uncore clocks instead of reads */
    st_judge_ratio(&c, lines * 9, lines, 0.85, 1.25, "one per line");
    assert_int_equal(c.status, ST_FAILED);
    /* reads of one channel only (umask CH0 = 1 of 3 channels instead of ANY) */
    st_judge_ratio(&c, lines / 3, lines, 0.85, 1.25, "one per line");
    assert_int_equal(c.status, ST_FAILED);
    /* no expectation at all is never a pass */
    st_judge_ratio(&c, 0, 0, 0.85, 1.25, "nothing");
    assert_int_equal(c.status, ST_FAILED);
}

/* One console line per check: status, check, counter, expected, counted, event. */
static void test_console_line(void **state)
{
    (void)state;
    struct st_check c;
    char line[200];
    judge_loop(&c, "branches_pmc2", "pmc2", PMU_BRANCH_LOOP_COND_PER_ITER, 3, 1);
    memcpy(c.event, "BR_INST_RETIRED:CONDITIONAL", sizeof("BR_INST_RETIRED:CONDITIONAL"));
    size_t n = st_format_line(line, sizeof(line), &c);
    assert_int_equal(n, strlen(line));
    assert_null(strchr(line, '\n'));
    assert_true(!strncmp(line, "  FAIL  branches_pmc2 ", 22));
    assert_non_null(strstr(line, " pmc2 "));
    assert_non_null(strstr(line, "expected 20000 +-2 "));
    assert_non_null(strstr(line, "counted 60000 "));
    assert_non_null(strstr(line, "BR_INST_RETIRED:CONDITIONAL"));
    assert_true(strlen(line) < 120);

    st_check_init(&c, "offcore_request_response", "pmc0", "OFFCORE_RESPONSE_0:rsp=0x6001", 0);
    st_judge_offcore(&c, 0x6001, 30000, 0x0160, 10, 32768);
    st_format_line(line, sizeof(line), &c);
    assert_true(!strncmp(line, "  ok    offcore_request_response ", 33));
    assert_non_null(strstr(line, "expected >= 8192 "));

    st_check_init(&c, "pebs_l1", NULL, NULL, 0);
    st_skip(&c, "no PEBS load latency on amd_fam10h");
    st_format_line(line, sizeof(line), &c);
    assert_non_null(strstr(line, "skip  pebs_l1"));
    assert_non_null(strstr(line, " - "));
    assert_non_null(strstr(line, "no PEBS load latency on amd_fam10h"));
    assert_true(line[strlen(line) - 1] != ' ');

    st_judge_range(&c, 3, 5, 9, "x");
    st_format_expected(line, sizeof(line), &c);
    assert_string_equal(line, "5..9");
    st_judge_range(&c, 3, 5, 5, "x");
    st_format_expected(line, sizeof(line), &c);
    assert_string_equal(line, "5");
    assert_int_equal(st_format_line(line, 1, &c), 0);
}

/* A failed per-counter check: its short reason (what the counter's record entry keeps) and its console line saying
 * which counter the failure disabled; a check that disabled nothing says nothing of the sort. */
static void test_disabled_counter_line(void **state)
{
    (void)state;
    struct st_check c;
    char line[240], why[72];
    judge_loop(&c, "branches_pmc2", "pmc2", PMU_BRANCH_LOOP_COND_PER_ITER, 3, 1);
    memcpy(c.event, "BR_INST_RETIRED:CONDITIONAL", sizeof("BR_INST_RETIRED:CONDITIONAL"));
    st_short_reason(why, sizeof(why), &c);
    assert_string_equal(why, "expected 20000 +-2, counted 60000");
    st_format_line(line, sizeof(line), &c);
    assert_null(strstr(line, "disabled"));
    memcpy(c.disabled, "PMC2", sizeof("PMC2"));
    size_t n = st_format_line(line, sizeof(line), &c);
    assert_int_equal(n, strlen(line));
    assert_true(!strncmp(line, "  FAIL  branches_pmc2 ", 22));
    assert_non_null(strstr(line, "counted 60000 "));
    n = strlen(line);
    assert_true(n > 30 && !strcmp(line + n - strlen("BR_INST_RETIRED:CONDITIONAL  PMC2 disabled"),
                                  "BR_INST_RETIRED:CONDITIONAL  PMC2 disabled"));
    /* not judged (the counter could not be programmed): the detail is the reason */
    st_check_init(&c, "instructions_pmc3", "pmc3", NULL, 0);
    st_fail(&c, "the counter does not exist on this PMU");
    st_short_reason(why, sizeof(why), &c);
    assert_string_equal(why, "the counter does not exist on this PMU");
    memcpy(c.disabled, "PMC3", sizeof("PMC3"));
    st_format_line(line, sizeof(line), &c);
    assert_non_null(strstr(line, "the counter does not exist on this PMU  PMC3 disabled"));
    /* a short buffer stays terminated */
    assert_int_equal(st_format_line(line, 30, &c), 29);
}

static int parse(const char *table, const char *spec, struct pmu_event_enc *e)
{
    const struct pmu_event_table *t = pmu_event_table_find(table);
    char err[256];
    if (!t)
        return -1;
    int rc = pmu_event_parse(&t, 1, spec, e, err, sizeof(err));
    if (rc)
        print_message("%s: %s: %s\n", table, spec, err);
    return rc;
}

/* The events the self-test programs: every row's specifiers parse on its tables; Nehalem/Westmere's branch event has
 * a non-zero unit mask (C4H/01H, [PAG]) whose loss would count 3 per iteration instead of 1; the CMASK/INV pair has
 * CMASK 1 and differs only in INV ([PAG] Table 1 C/I columns). */
static void test_model_events(void **state)
{
    (void)state;
    static const char *const tables[] = {"nhm",        "wsm",        "wsm_dp",          "arch",
                                         "amd_k8",     "amd_fam10h", "amd_fam15h",      "amd_fam17h_zen1",
                                         "amd_fam17h_zen2", "amd_fam19h_zen3", "amd_fam19h_zen4", "netburst",
                                         "netburst_p"};
    struct pmu_event_enc e, ge, lt;
    for (size_t i = 0; i < sizeof(tables) / sizeof(tables[0]); i++) {
        const struct st_model_events *m = st_model_events(tables[i]);
        assert_non_null(m);
        assert_int_equal(parse(tables[i], m->branches, &e), 0);
        assert_int_equal(parse(tables[i], m->instructions, &e), 0);
        if (m->cmask_ge) {
            assert_int_equal(parse(tables[i], m->cmask_ge, &ge), 0);
            assert_int_equal(parse(tables[i], m->cmask_lt, &lt), 0);
            assert_int_equal(parse(tables[i], m->cycles, &e), 0);
            assert_int_equal((ge.evtsel >> 24) & 0xff, 1);          /* CMASK = 1 (Intel and AMD: bits 31:24) */
            assert_int_equal((lt.evtsel >> 24) & 0xff, 1);
            assert_int_equal(ge.evtsel & (1u << 23), 0);             /* INV clear */
            assert_int_equal(lt.evtsel & (1u << 23), 1u << 23);     /* INV set */
            assert_int_equal(ge.evtsel ^ lt.evtsel, 1u << 23);       /* nothing else differs */
        }
        if (!m->per_counter)
            assert_non_null(m->note);
    }
    const char *intel[] = {"nhm", "wsm", "wsm_dp"};
    for (size_t i = 0; i < 3; i++) {
        const struct st_model_events *m = st_model_events(intel[i]);
        assert_int_equal(parse(intel[i], m->branches, &e), 0);
        assert_int_equal(e.evtsel & 0xff, 0xc4);
        assert_int_equal((e.evtsel >> 8) & 0xff, 0x01); /* BR_INST_RETIRED.CONDITIONAL: [PAG] umask 01H */
        assert_int_equal(m->branches_per_iter, PMU_BRANCH_LOOP_COND_PER_ITER);
        assert_true(m->per_counter);
        assert_null(m->note);
        /* C4H with umask 0 is the architectural all-branches event: 3 per iteration, a different count */
        assert_true(PMU_BRANCH_LOOP_BRANCHES_PER_ITER != m->branches_per_iter);
    }
    /* AMD counts all branches (no unit mask exists for C2H) and says so */
    const struct st_model_events *amd = st_model_events("amd_fam10h");
    assert_int_equal(amd->branches_per_iter, PMU_BRANCH_LOOP_BRANCHES_PER_ITER);
    assert_non_null(strstr(amd->note, "unit mask"));
    assert_null(st_model_events("nosuch"));
    assert_null(st_model_events(""));
    assert_null(st_model_events(NULL));
    /* no row's name is a prefix match of another */
    assert_ptr_not_equal(st_model_events("wsm"), NULL);
    assert_null(st_model_events("ws"));
}

/* The off-core check's value per part: the flow's local-DRAM event (pmu_offcore_local_dram_event), parsed with the
 * table the model row picks. Westmere-EP DP 06_2C has LOCAL_DRAM_AND_REMOTE_CACHE_HIT at bit 12 (libpfm4 wsm_dp;
 * bit 13 is REMOTE_DRAM, 14 OTHER_LLC_MISS), Westmere 06_25 LOCAL_DRAM at bit 13 (libpfm4 wsm), Nehalem and
 * Westmere-EX 06_2F LOCAL_DRAM at bit 14 ([NHM] Table 12; perf westmereex/memory.json LOCAL_DRAM 4011H; the 06_2F
 * row parses with wsm_dp, so the raw value). The old fixed 6001H was REMOTE_DRAM | OTHER_LLC_MISS on 06_2C: a
 * chase on the local node counted almost nothing there. */
static void test_offcore_value_per_part(void **state)
{
    (void)state;
    static const struct {
        uint32_t model;
        const char *table;
        uint16_t value;
    } parts[] = {{0x1a, "nhm", 0x4001}, {0x2e, "nhm", 0x4001}, {0x25, "wsm", 0x2001}, {0x2c, "wsm_dp", 0x1001},
                 {0x2f, "wsm_dp", 0x4001}};
    for (size_t i = 0; i < sizeof(parts) / sizeof(parts[0]); i++) {
        struct pmu_detect_input in;
        struct pmu_caps caps;
        memset(&in, 0, sizeof(in));
        in.vendor = PMU_VENDOR_INTEL;
        in.family = 6;
        in.model = parts[i].model;
        in.max_basic_leaf = 0xb;
        in.leaf0a[0] = 3 | (4 << 8) | (48 << 16) | (7u << 24);
        in.leaf0a[3] = 3 | (48 << 5);
        pmu_detect(&in, &caps);
        assert_non_null(caps.event_table);
        assert_string_equal(caps.event_table, parts[i].table);
        const char *spec = pmu_offcore_local_dram_event(caps.event_table, 6, parts[i].model);
        assert_non_null(spec);
        const struct pmu_event_table *t = pmu_event_table_find(caps.event_table);
        struct pmu_event_enc e;
        char err[200];
        if (pmu_event_parse(&t, 1, spec, &e, err, sizeof(err)))
            fail_msg("%s: %s", spec, err);
        assert_int_equal(e.extra_msr, 0x1A6);
        assert_int_equal(e.extra, parts[i].value);
        /* The judge with the byte swap as control: a DRAM-bound chase passes, swapped halves fail. */
        struct st_check c;
        uint16_t sw = st_swap_bytes16((uint16_t)e.extra);
        st_check_init(&c, "offcore_request_response", "pmc0", spec, 0);
        st_judge_offcore(&c, (uint16_t)e.extra, 3900, sw, 10, 4096);
        assert_int_equal(c.status, ST_OK);
        st_check_init(&c, "offcore_request_response", "pmc0", spec, 0);
        st_judge_offcore(&c, (uint16_t)e.extra, 10, sw, 3900, 4096);
        assert_int_equal(c.status, ST_FAILED);
    }
    /* The request and response halves of the three values. */
    assert_int_equal(st_swap_bytes16(0x1001), 0x0110);
    assert_int_equal(st_swap_bytes16(0x2001), 0x0120);
    assert_int_equal(st_swap_bytes16(0x4001), 0x0140);
    assert_null(pmu_offcore_local_dram_event("amd_fam10h", 0x10, 4));
    assert_null(pmu_offcore_local_dram_event(NULL, 6, 0x2c));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_branches_right_encoding_passes),
        cmocka_unit_test(test_branches_wrong_encodings_fail),
        cmocka_unit_test(test_instructions),
        cmocka_unit_test(test_cmask_inv),
        cmocka_unit_test(test_offcore_request_response),
        cmocka_unit_test(test_offcore_value_per_part),
        cmocka_unit_test(test_uncore_stream),
        cmocka_unit_test(test_console_line),
        cmocka_unit_test(test_disabled_counter_line),
        cmocka_unit_test(test_model_events),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
