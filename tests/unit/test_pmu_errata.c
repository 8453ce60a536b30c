/* test_pmu_errata.c - errata and PMU-robustness logic: the AAK100/AAP53/BD53 reset sequence, which
 * models get it, FREEZE_WHILE_SMM from PERF_CAPABILITIES, full-width counter MSRs, architectural events
 * refused from CPUID.0AH:EBX, the PEBS period floor and the PEBS drain's stray records.
 *
 * Expected values are typed in from the sources (Linux intel_pmu_nhm_workaround's steps and magic
 * values, [NHM] Tables 3/4/15/25, SDM Table 18-1), not taken from pmu/: a wrong constant there fails
 * here. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <string.h>

#include "pmu/encode.h"
#include "pmu/msr_pmu.h"
#include "pmu/pebs.h"
#include "pmu/pmu_model.h"

/* ---- AAK100 / AAP53 / BD53: the reset sequence ------------------------------------------------ */

struct step {
    uint32_t msr;
    uint64_t value;
};

/* The five steps Linux documents, 4 counters, PEBS present. */
static const struct step nhm_reset_literal[] = {
    {0x38f, 0},        /* 1: IA32_PERF_GLOBAL_CTRL = 0 */
    {0x3f1, 0},        /*    IA32_PEBS_ENABLE = 0 */
    {0x186, 0x4300b5}, /* 2: PERFEVTSEL0 = 0x4300B5, PMC0 = 0 */
    {0x0c1, 0},
    {0x187, 0x4300d2}, /*    PERFEVTSEL1 = 0x4300D2 */
    {0x0c2, 0},
    {0x188, 0x4300b1}, /*    PERFEVTSEL2 = 0x4300B1 */
    {0x0c3, 0},
    {0x189, 0x4300b1}, /*    PERFEVTSEL3 = 0x4300B1 */
    {0x0c4, 0},
    {0x38f, 0xf},      /* 3: GLOBAL_CTRL bits 0-3 */
    {0x38f, 0},        /* 4: GLOBAL_CTRL = 0 */
    {0x186, 0},        /* 5: the four pairs cleared */
    {0x0c1, 0},
    {0x187, 0},
    {0x0c2, 0},
    {0x188, 0},
    {0x0c3, 0},
    {0x189, 0},
    {0x0c4, 0},
};

static void assert_steps(const struct pmu_msr_write *got, unsigned n, const struct step *want, unsigned nwant)
{
    assert_int_equal(n, nwant);
    for (unsigned i = 0; i < n; i++) {
        if (got[i].msr != want[i].msr || got[i].value != want[i].value)
            fail_msg("step %u: 0x%x = 0x%llx, want 0x%x = 0x%llx", i, got[i].msr, (unsigned long long)got[i].value,
                     want[i].msr, (unsigned long long)want[i].value);
    }
}

static void test_nhm_reset_sequence(void **state)
{
    (void)state;
    struct pmu_msr_write seq[32];
    memset(seq, 0xa5, sizeof(seq));
    unsigned n = pmu_nhm_reset_sequence(seq, 32, 4, true);
    assert_steps(seq, n, nhm_reset_literal, 20);
    assert_int_equal(PMU_NHM_RESET_MAX_STEPS, 20);

    /* More than four counters: still the four the errata name. */
    assert_steps(seq, pmu_nhm_reset_sequence(seq, 32, 8, true), nhm_reset_literal, 20);

    /* No PEBS_ENABLE (no DS): the same without that write. */
    n = pmu_nhm_reset_sequence(seq, 32, 4, false);
    assert_int_equal(n, 19);
    assert_int_equal(seq[0].msr, 0x38f);
    assert_steps(seq + 1, n - 1, nhm_reset_literal + 2, 18);

    /* Two counters (a VM showing fewer): only those, GLOBAL_CTRL bits 0-1. */
    static const struct step two[] = {{0x38f, 0}, {0x3f1, 0}, {0x186, 0x4300b5}, {0xc1, 0}, {0x187, 0x4300d2},
                                      {0xc2, 0},  {0x38f, 3}, {0x38f, 0},        {0x186, 0}, {0xc1, 0},
                                      {0x187, 0}, {0xc2, 0}};
    assert_steps(seq, pmu_nhm_reset_sequence(seq, 32, 2, true), two, 12);

    /* Nothing to do / no room: 0 steps, nothing written past max. */
    assert_int_equal(pmu_nhm_reset_sequence(seq, 32, 0, true), 0);
    memset(seq, 0xa5, sizeof(seq));
    assert_int_equal(pmu_nhm_reset_sequence(seq, 19, 4, true), 0);
    assert_int_equal(seq[0].msr, 0xa5a5a5a5u);
    assert_int_equal(pmu_nhm_reset_sequence(NULL, 32, 4, true), 0);
}

static struct pmu_detect_input intel_input(unsigned model, uint64_t perf_cap)
{
    struct pmu_detect_input in;
    memset(&in, 0, sizeof(in));
    in.vendor = PMU_VENDOR_INTEL;
    in.family = 6;
    in.model = model;
    in.max_basic_leaf = 0xb;
    in.leaf1_ecx = CPUID_1_ECX_DTES64 | CPUID_1_ECX_PDCM;
    in.leaf1_edx = CPUID_1_EDX_DS;
    in.leaf0a[0] = 3 | (4 << 8) | (48 << 16) | (7u << 24); /* [NHM] Table 25 */
    in.leaf0a[3] = 3 | (48 << 5);
    in.perf_cap_valid = true;
    in.perf_capabilities = perf_cap;
    in.misc_enable_valid = true;
    in.misc_enable = IA32_MISC_ENABLE_PERF_MON_AVAILABLE;
    return in;
}

static void test_errata_models(void **state)
{
    (void)state;
    const char *id;
    /* The three errata Linux's comment names, by model. */
    assert_int_equal(pmu_errata_for(PMU_VENDOR_INTEL, 6, 0x1a, &id), PMU_ERRATUM_NHM_RESET);
    assert_string_equal(id, "AAK100");
    assert_int_equal(pmu_errata_for(PMU_VENDOR_INTEL, 6, 0x1e, &id), PMU_ERRATUM_NHM_RESET);
    assert_string_equal(id, "AAP53");
    assert_int_equal(pmu_errata_for(PMU_VENDOR_INTEL, 6, 0x2c, &id), PMU_ERRATUM_NHM_RESET);
    assert_string_equal(id, "BD53");
    /* Linux also installs intel_pmu_nhm_enable_all for Nehalem-EX and the other Westmeres. */
    static const unsigned linux_too[] = {0x2e, 0x25, 0x2f};
    for (unsigned i = 0; i < 3; i++) {
        assert_int_equal(pmu_errata_for(PMU_VENDOR_INTEL, 6, linux_too[i], &id), PMU_ERRATUM_NHM_RESET);
        assert_non_null(strstr(id, "Linux intel_pmu_nhm_workaround"));
    }
    /* 06_1F has no case in Linux's intel_pmu_init: no reset. Nor Sandy Bridge, Core 2, AMD. */
    static const unsigned none[] = {0x1f, 0x2a, 0x17, 0x1d};
    for (unsigned i = 0; i < 4; i++) {
        assert_int_equal(pmu_errata_for(PMU_VENDOR_INTEL, 6, none[i], &id), 0);
        assert_null(id);
    }
    assert_int_equal(pmu_errata_for(PMU_VENDOR_AMD, 6, 0x1a, &id), 0);
    assert_int_equal(pmu_errata_for(PMU_VENDOR_INTEL, 0xf, 0x1a, NULL), 0);

    /* Detection carries it, with the family/model it ran on. */
    struct pmu_caps c;
    struct pmu_detect_input in = intel_input(0x1e, 0x11c3);
    pmu_detect(&in, &c);
    assert_string_equal(c.model, "nhm");
    assert_int_equal(c.errata, PMU_ERRATUM_NHM_RESET);
    assert_string_equal(c.erratum_reset, "AAP53");
    assert_int_equal(c.cpu_family, 6);
    assert_int_equal(c.cpu_model, 0x1e);
    in = intel_input(0x1f, 0x11c3);
    pmu_detect(&in, &c);
    assert_string_equal(c.model, "nhm"); /* same PMU row, no reset */
    assert_int_equal(c.errata, 0);
    assert_null(c.erratum_reset);

    /* The dry-run rows: pmu_assume=nhm is 06_1A, wsm 06_2C. */
    assert_int_equal(pmu_caps_for_model("nhm", &c), 0);
    assert_int_equal(c.cpu_model, 0x1a);
    assert_string_equal(c.erratum_reset, "AAK100");
    assert_int_equal(pmu_caps_for_model("wsm", &c), 0);
    assert_int_equal(c.cpu_model, 0x2c);
    assert_string_equal(c.erratum_reset, "BD53");
    assert_int_equal(pmu_caps_for_model("nhm_ex", &c), 0);
    assert_int_equal(c.errata, PMU_ERRATUM_NHM_RESET);
    assert_int_equal(pmu_caps_for_model("wsm_ex", &c), 0);
    assert_int_equal(c.errata, PMU_ERRATUM_NHM_RESET);
    assert_int_equal(pmu_caps_for_model("arch_v3", &c), 0);
    assert_int_equal(c.errata, 0);
    assert_int_equal(pmu_caps_for_model("amd_fam10h", &c), 0);
    assert_int_equal(c.errata, 0);
}

/* ---- FREEZE_WHILE_SMM from IA32_PERF_CAPABILITIES[12] ------------------------------------------ */

static void test_smm_freeze_decision(void **state)
{
    (void)state;
    struct pmu_caps c;
    const char *why;
    struct pmu_detect_input in;

    /* [NHM] Table 3: LBR fmt 3, PEBS trap/arch regs, record format 1; bit 12 SMM_FRZ. */
    in = intel_input(0x1a, 0x1c3);
    pmu_detect(&in, &c);
    assert_false(pmu_smm_freeze_supported(&c, &why));
    assert_string_equal(why, "not supported (PERF_CAPABILITIES[12] clear)");

    in = intel_input(0x1a, 0x11c3);
    pmu_detect(&in, &c);
    why = "stale";
    assert_true(pmu_smm_freeze_supported(&c, &why));
    assert_null(why);
    assert_true(pmu_smm_freeze_supported(&c, NULL));

    in = intel_input(0x2a, 0x31c3); /* Sandy Bridge: bits 12 and 13 */
    pmu_detect(&in, &c);
    assert_true(pmu_smm_freeze_supported(&c, &why));

    in = intel_input(0x1a, 1ULL << 12);
    in.leaf1_ecx &= ~(uint32_t)CPUID_1_ECX_PDCM; /* no PDCM: the MSR does not exist, nothing is known */
    pmu_detect(&in, &c);
    assert_false(pmu_smm_freeze_supported(&c, &why));
    assert_string_equal(why, "not supported (IA32_PERF_CAPABILITIES not read)");

    in = intel_input(0x1a, 0x11c3);
    in.perf_cap_valid = false; /* the read faulted */
    pmu_detect(&in, &c);
    assert_false(pmu_smm_freeze_supported(&c, &why));
    assert_string_equal(why, "not supported (IA32_PERF_CAPABILITIES not read)");

    assert_int_equal(pmu_caps_for_model("amd_fam10h", &c), 0);
    assert_false(pmu_smm_freeze_supported(&c, &why));
    assert_string_equal(why, "not supported (no IA32_PERF_CAPABILITIES on AMD)");
    assert_int_equal(pmu_caps_for_model("netburst", &c), 0);
    assert_false(pmu_smm_freeze_supported(&c, &why));
    assert_string_equal(why, "not supported (no IA32_PERF_CAPABILITIES on NetBurst)");

    /* The dry-run rows claim it ([NHM] Table 2: "Freeze Counters on SMI: Yes" for Nehalem). */
    assert_int_equal(pmu_caps_for_model("nhm", &c), 0);
    assert_true(pmu_smm_freeze_supported(&c, NULL));
    assert_false(c.full_width_write);
}

/* ---- full-width counter writes: IA32_A_PMCx when PERF_CAPABILITIES[13] ------------------------- */

static void test_full_width_counter_msr(void **state)
{
    (void)state;
    struct pmu_caps c;
    struct pmu_detect_input in = intel_input(0x2a, 0x31c3); /* FW_WRITE (bit 13) set */
    pmu_detect(&in, &c);
    assert_true(c.full_width_write);
    assert_int_equal(pmu_gp_ctr_rw_msr(&c, 0), 0x4c1);
    assert_int_equal(pmu_gp_ctr_rw_msr(&c, 3), 0x4c4);
    assert_int_equal(pmu_gp_ctr_rw_msr(&c, 4), 0); /* 4 counters: no fifth */

    in = intel_input(0x1a, 0x11c3); /* Nehalem: bit 13 clear -> IA32_PMCx, writes sign-extend bit 31 */
    pmu_detect(&in, &c);
    assert_false(c.full_width_write);
    assert_int_equal(pmu_gp_ctr_rw_msr(&c, 0), 0xc1);
    assert_int_equal(pmu_gp_ctr_rw_msr(&c, 3), 0xc4);

    in = intel_input(0x2a, 0x31c3);
    in.perf_cap_valid = false; /* unknown: never the alias */
    pmu_detect(&in, &c);
    assert_int_equal(pmu_gp_ctr_rw_msr(&c, 0), 0xc1);

    assert_int_equal(pmu_caps_for_model("amd_fam10h", &c), 0); /* other layouts: their own counter MSRs */
    assert_int_equal(pmu_gp_ctr_rw_msr(&c, 1), 0xc0010005);
    assert_int_equal(pmu_caps_for_model("netburst", &c), 0);
    assert_int_equal(pmu_gp_ctr_rw_msr(&c, 2), 0x302);
}

/* ---- architectural events and CPUID.0AH:EBX ---------------------------------------------------- */

static void test_arch_event_index(void **state)
{
    (void)state;
    /* SDM Table 18-1: event select / unit mask per EBX bit; USR/OS/EN/CMASK do not matter. */
    assert_int_equal(pmu_arch_event_index(0x43003c), 0);
    assert_int_equal(pmu_arch_event_index(0x4300c0), 1);
    assert_int_equal(pmu_arch_event_index(0x43013c), 2);
    assert_int_equal(pmu_arch_event_index(0x434f2e), 3);
    assert_int_equal(pmu_arch_event_index(0x43412e), 4);
    assert_int_equal(pmu_arch_event_index(0x4300c4), 5);
    assert_int_equal(pmu_arch_event_index(0x4300c5), 6);
    assert_int_equal(pmu_arch_event_index(0x4301a4), 7);
    assert_int_equal(pmu_arch_event_index(0x01c300c5), 6);
    assert_int_equal(pmu_arch_event_index(0x4304c5), -1); /* BR_MISP_RETIRED.NEAR_CALL: not architectural */
    assert_int_equal(pmu_arch_event_index(0x437f89), -1); /* BR_MISP_EXEC.ANY (Linux's AAJ80 replacement) */
    assert_int_equal(pmu_arch_event_index(0x4300b5), -1);
    assert_string_equal(pmu_arch_event_name(6), "branch mispredicts retired");
    assert_null(pmu_arch_event_name(8));
}

static void test_arch_event_refused(void **state)
{
    (void)state;
    struct pmu_caps c;
    char why[200];

    /* All seven available ([NHM] Table 25: a zero bit means supported). */
    struct pmu_detect_input in = intel_input(0x1a, 0x11c3);
    pmu_detect(&in, &c);
    assert_int_equal(c.arch_events, 0x7f);
    assert_int_equal(c.arch_events_len, 7);
    for (unsigned b = 0; b < 7; b++)
        assert_int_equal(pmu_arch_event_refused(&c, "X", b, why, sizeof(why)), 0);
    assert_int_equal(pmu_arch_event_refused(&c, "TOPDOWN_SLOTS", 7, why, sizeof(why)), -1);
    assert_string_equal(why, "TOPDOWN_SLOTS: architectural event 7 (topdown slots) not enumerated: "
                             "CPUID.0AH:EAX[31:24] = 7 EBX bits");

    /* EBX[6] set, as on parts with erratum AAJ80: branch mispredicts retired refused, the rest fine. */
    in.leaf0a[1] = 1u << 6;
    pmu_detect(&in, &c);
    assert_int_equal(c.arch_events, 0x3f);
    assert_int_equal(pmu_arch_event_refused(&c, "MISPREDICTED_BRANCH_RETIRED", 6, why, sizeof(why)), -1);
    assert_string_equal(why, "MISPREDICTED_BRANCH_RETIRED: architectural event 6 (branch mispredicts retired) "
                             "marked unavailable by CPUID.0AH:EBX[6]");
    assert_int_equal(pmu_arch_event_refused(&c, "BRANCH_INSTRUCTIONS_RETIRED", 5, why, sizeof(why)), 0);

    /* A vector only 5 bits long: bits 5 and 6 are not enumerated, whatever EBX holds there. */
    in.leaf0a[0] = 3 | (4 << 8) | (48 << 16) | (5u << 24);
    in.leaf0a[1] = 0;
    pmu_detect(&in, &c);
    assert_int_equal(c.arch_events, 0x1f);
    assert_int_equal(pmu_arch_event_refused(&c, "BR_INST_RETIRED", 5, why, sizeof(why)), -1);
    assert_string_equal(why, "BR_INST_RETIRED: architectural event 5 (branch instructions retired) not "
                             "enumerated: CPUID.0AH:EAX[31:24] = 5 EBX bits");

    /* A short buffer is cut, never overrun; no buffer still refuses. */
    char small[12];
    memset(small, 'z', sizeof(small));
    assert_int_equal(pmu_arch_event_refused(&c, "BR_INST_RETIRED", 5, small, 8), -1);
    assert_string_equal(small, "BR_INST");
    assert_int_equal(small[8], 'z');
    assert_int_equal(pmu_arch_event_refused(&c, "BR_INST_RETIRED", 5, NULL, 0), -1);

    /* Not an Intel architectural PMU: EBX means nothing there. */
    assert_int_equal(pmu_caps_for_model("amd_fam10h", &c), 0);
    assert_int_equal(pmu_arch_event_refused(&c, "RETIRED_INSTRUCTIONS", 1, why, sizeof(why)), 0);
    assert_int_equal(pmu_caps_for_model("netburst", &c), 0);
    assert_int_equal(pmu_arch_event_refused(&c, "instr_retired", 1, why, sizeof(why)), 0);
}

/* ---- PEBS period floor ----------------------------------------------------------------------- */

static void test_pebs_period_clamp(void **state)
{
    (void)state;
    bool clamped = false;
    assert_int_equal(PEBS_MIN_PERIOD, 32); /* Linux nhm_limit_period */
    assert_int_equal(pebs_period_clamp(1, 32, &clamped), 32);
    assert_true(clamped);
    assert_int_equal(pebs_period_clamp(31, 32, &clamped), 32);
    assert_true(clamped);
    assert_int_equal(pebs_period_clamp(32, 32, &clamped), 32);
    assert_false(clamped);
    assert_int_equal(pebs_period_clamp(997, 32, &clamped), 997);
    assert_false(clamped);
    assert_int_equal(pebs_period_clamp(0, 32, NULL), 32);
}

/* ---- PEBS drain: stray records --------------------------------------------------------------- */

static void put64(uint8_t *buf, size_t off, uint64_t v)
{
    for (unsigned i = 0; i < 8; i++)
        buf[off + i] = (uint8_t)(v >> (8 * i));
}

/* A format 1 record ([NHM] Table 15): data linear address 0x98, data source 0xA0, latency 0xA8. */
static void fmt1(uint8_t *r, uint64_t dla, uint64_t dse, uint64_t lat)
{
    memset(r, 0xee, 0xb0);
    put64(r, 0x00, 0x246);
    put64(r, 0x08, 0xffffffff80001234ULL);
    put64(r, 0x90, 0x1);
    put64(r, 0x98, dla);
    put64(r, 0xa0, dse);
    put64(r, 0xa8, lat);
}

#define LIN 0x200000ULL /* where the buffer would be, as the DS area says */
#define LO 0x10000000ULL
#define HI 0x10010000ULL

static struct ds_area snap_of(unsigned nrec)
{
    struct ds_area d;
    memset(&d, 0, sizeof(d));
    d.pebs_buffer_base = LIN;
    d.pebs_index = LIN + nrec * 0xb0ULL;
    d.pebs_absolute_maximum = LIN + 8 * 0xb0ULL;
    d.pebs_interrupt_threshold = d.pebs_absolute_maximum;
    d.pebs_counter_reset[0] = 0xfffffffffc1bULL; /* 2^48 - 997 */
    return d;
}

static void test_pebs_drain_stray(void **state)
{
    (void)state;
    static uint8_t buf[8 * 0xb0];
    struct pebs_lat_hist h;
    struct pebs_drain_acc acc;
    struct ds_area d;

    fmt1(buf + 0 * 0xb0, LO + 0x40, 0x1, 4);                    /* L1 hit, in the buffer */
    fmt1(buf + 1 * 0xb0, 0xabcd000010000080ULL, 0x3, 12);       /* bits 63:48 junk, low 48 inside */
    fmt1(buf + 2 * 0xb0, 0x7ffff000ULL, 0x1, 5);                 /* outside [LO, HI) */
    fmt1(buf + 3 * 0xb0, 0xffff800000001000ULL, 0x6, 200);      /* the drain code's own load */

    /* The counter moved on after its last assist: all four are samples. */
    pebs_hist_init(&h);
    memset(&acc, 0, sizeof(acc));
    d = snap_of(4);
    assert_false(pebs_last_record_after_disable(0xfffffffffc1bULL + 17, d.pebs_counter_reset[0], 48));
    assert_int_equal(pebs_drain_records(&h, &acc, &d, buf, 1, LO, HI, false), 4);
    assert_int_equal(acc.records, 4);
    assert_int_equal(acc.stray, 0);
    assert_int_equal(acc.outside, 2);
    /* the buffer's own loads, for the row's cross-check: the two inside, 4 + 12 cycles */
    assert_int_equal(acc.inside, 2);
    assert_int_equal(acc.inside_cycles, 16);
    assert_int_equal(h.count[1], 2);
    assert_int_equal(h.count[3], 1);
    assert_int_equal(h.count[6], 1);

    /* The counter still holds its reset value: the newest record came after the disable. It is
     * counted as stray - not in the histogram, not an address outside the buffer, not lost. */
    pebs_hist_init(&h);
    memset(&acc, 0, sizeof(acc));
    assert_true(pebs_last_record_after_disable(0xfffffffffc1bULL, d.pebs_counter_reset[0], 48));
    assert_true(pebs_last_record_after_disable(0xfffffffffffffc1bULL, d.pebs_counter_reset[0], 48));
    assert_int_equal(pebs_drain_records(&h, &acc, &d, buf, 1, LO, HI, true), 3);
    assert_int_equal(acc.records, 3);
    assert_int_equal(acc.stray, 1);
    assert_int_equal(acc.outside, 1);
    assert_int_equal(h.count[6], 0);
    assert_int_equal(h.max[3], 12);

    /* A record written while the drain decoded (index moved past the snapshot): stray too. */
    assert_int_equal(pebs_drain_late(&acc, &d, d.pebs_index + 0xb0, 1), 1);
    assert_int_equal(acc.stray, 2);
    assert_int_equal(pebs_drain_late(&acc, &d, d.pebs_index, 1), 0);
    assert_int_equal(acc.stray, 2);
    assert_int_equal(acc.bad, 0);
    assert_int_equal(pebs_drain_late(&acc, &d, d.pebs_index - 0xb0, 1), -1); /* went backwards */
    assert_int_equal(pebs_drain_late(&acc, &d, d.pebs_index + 0x10, 1), -1); /* not a record boundary */
    assert_int_equal(pebs_drain_late(&acc, &d, LIN + 9 * 0xb0ULL, 1), -1);   /* past the maximum */
    assert_int_equal(acc.bad, 3);
    assert_int_equal(acc.stray, 2);

    /* Empty buffer: nothing decoded, nothing stray even if the counter sits at its reset. */
    memset(&acc, 0, sizeof(acc));
    d = snap_of(0);
    assert_int_equal(pebs_drain_records(&h, &acc, &d, buf, 1, LO, HI, true), 0);
    assert_int_equal(acc.stray, 0);
    assert_int_equal(acc.records, 0);

    /* An index off a record boundary: nothing decoded, counted as bad. */
    d = snap_of(2);
    d.pebs_index += 8;
    assert_int_equal(pebs_drain_records(&h, &acc, &d, buf, 1, LO, HI, false), -1);
    assert_int_equal(acc.bad, 1);
    assert_int_equal(acc.records, 0);

    /* The width masks the comparison: a 40-bit counter. */
    assert_true(pebs_last_record_after_disable(0xff00000003e5ULL, 0x3e5, 40));
    assert_false(pebs_last_record_after_disable(0, 0xfffffffffc1bULL, 48));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_nhm_reset_sequence),     cmocka_unit_test(test_errata_models),
        cmocka_unit_test(test_smm_freeze_decision),    cmocka_unit_test(test_full_width_counter_msr),
        cmocka_unit_test(test_arch_event_index),       cmocka_unit_test(test_arch_event_refused),
        cmocka_unit_test(test_pebs_period_clamp),      cmocka_unit_test(test_pebs_drain_stray),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
