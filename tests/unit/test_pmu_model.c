/* test_pmu_model.c - PMU detection from raw CPUID/MSR values, model rows, dry-run caps, MSR ops. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <string.h>

#include "pmu/msr_pmu.h"
#include "pmu/pmu_model.h"

/* A Nehalem-EP as the programming guide describes it: CPUID.0AH per Table 25 (v3, 4 x 48-bit GP,
 * 7 architectural events, 3 x 48-bit fixed), PERF_CAPABILITIES LBR fmt 3 / PEBS fmt 1. */
static struct pmu_detect_input nhm_input(void)
{
    struct pmu_detect_input in;
    memset(&in, 0, sizeof(in));
    in.vendor = PMU_VENDOR_INTEL;
    in.family = 6;
    in.model = 0x1a;
    in.max_basic_leaf = 0xb;
    in.leaf1_ecx = CPUID_1_ECX_DTES64 | CPUID_1_ECX_PDCM;
    in.leaf1_edx = CPUID_1_EDX_DS;
    in.leaf0a[0] = 3 | (4 << 8) | (48 << 16) | (7u << 24);
    in.leaf0a[3] = 3 | (48 << 5);
    in.perf_cap_valid = true;
    in.perf_capabilities = 0x3 | IA32_PERF_CAP_PEBS_TRAP | IA32_PERF_CAP_PEBS_ARCH_REG | (1 << 8);
    in.misc_enable_valid = true;
    in.misc_enable = IA32_MISC_ENABLE_PERF_MON_AVAILABLE;
    return in;
}

static void test_nehalem(void **state)
{
    (void)state;
    struct pmu_detect_input in = nhm_input();
    struct pmu_caps c;
    assert_int_equal(pmu_detect(&in, &c), PMU_STATUS_OK);
    assert_string_equal(c.model, "nhm");
    assert_null(c.reason);
    assert_int_equal(c.vendor, PMU_VENDOR_INTEL);
    assert_int_equal(c.arch, PMU_ARCH_INTEL);
    assert_int_equal(c.version, 3);
    assert_int_equal(c.gp_counters, 4);
    assert_int_equal(c.gp_width, 48);
    assert_int_equal(c.fixed_counters, 3);
    assert_int_equal(c.fixed_width, 48);
    assert_int_equal(c.fixed_mask, 0x7);
    assert_int_equal(c.arch_events, 0x7f);
    assert_true(c.global_ctrl && c.any_thread);
    assert_true(c.pebs);
    assert_int_equal(c.pebs_format, 1);
    assert_int_equal(c.pebs_record_size, 0xb0);
    assert_true(c.pebs_trap && c.pebs_arch_regs);
    assert_int_equal(c.lbr_format, 3);
    assert_int_equal(c.lbr_depth, 16);
    assert_int_equal(c.lbr_from, 0x680);
    assert_int_equal(c.lbr_to, 0x6c0);
    assert_int_equal(c.lbr_tos, 0x1c9);
    assert_int_equal(c.offcore_msrs, 1);
    assert_true(c.load_latency);
    assert_int_equal(c.uncore, PMU_UNCORE_NHM);
    assert_int_equal(c.uncore_counters, 8);
    assert_string_equal(c.event_table, "nhm");
    assert_string_equal(c.uncore_table, "nhm_unc");
    /* 06_1E and 06_1F are Nehalem too */
    in.model = 0x1e;
    pmu_detect(&in, &c);
    assert_string_equal(c.model, "nhm");
    in.model = 0x1f;
    pmu_detect(&in, &c);
    assert_string_equal(c.model, "nhm");
}

static void test_westmere_and_ex(void **state)
{
    (void)state;
    struct pmu_detect_input in = nhm_input();
    struct pmu_caps c;
    in.model = 0x2c;
    assert_int_equal(pmu_detect(&in, &c), PMU_STATUS_OK);
    assert_string_equal(c.model, "wsm");
    assert_int_equal(c.offcore_msrs, 2);
    assert_string_equal(c.event_table, "wsm_dp");
    assert_string_equal(c.uncore_table, "wsm_unc");
    in.model = 0x25;
    pmu_detect(&in, &c);
    assert_string_equal(c.event_table, "wsm");
    assert_int_equal(c.uncore, PMU_UNCORE_NHM);
    /* Nehalem-EX / Westmere-EX: same core PMU, box uncore flagged as not programmed */
    in.model = 0x2e;
    pmu_detect(&in, &c);
    assert_string_equal(c.model, "nhm_ex");
    assert_int_equal(c.uncore, PMU_UNCORE_NHM_EX);
    assert_null(c.uncore_table);
    assert_non_null(c.uncore_note);
    assert_int_equal(c.offcore_msrs, 1);
    in.model = 0x2f;
    pmu_detect(&in, &c);
    assert_string_equal(c.model, "wsm_ex");
    assert_int_equal(c.offcore_msrs, 2);
    assert_int_equal(c.uncore, PMU_UNCORE_NHM_EX);
}

static void test_max_leaf_and_version_zero(void **state)
{
    (void)state;
    struct pmu_detect_input in = nhm_input();
    struct pmu_caps c;
    /* Max basic leaf below 0AH: leaf0a holds another leaf's data (Intel returns the highest leaf)
     * and must be ignored. A model row falls back to its table values. */
    in.max_basic_leaf = 3;
    in.leaf0a[0] = 0xffffffff;
    in.leaf0a[3] = 0xffffffff;
    assert_int_equal(pmu_detect(&in, &c), PMU_STATUS_PARTIAL);
    assert_string_equal(c.model, "nhm");
    assert_int_equal(c.version, 3); /* the model's, [NHM] 3 */
    assert_true(c.global_ctrl);
    assert_int_equal(c.arch_events, 0x7f);
    assert_int_equal(c.gp_counters, 4);
    assert_int_equal(c.fixed_counters, 3);
    assert_non_null(c.reason);
    /* An unknown model without leaf 0AH has nothing to go on. */
    in.model = 0x55;
    assert_int_equal(pmu_detect(&in, &c), PMU_STATUS_UNSUPPORTED);
    assert_int_equal(c.gp_counters, 0);
    assert_false(c.pebs);
    /* Version 0 (QEMU TCG, pmu=off) */
    in = nhm_input();
    in.model = 0x55;
    in.leaf0a[0] = 0;
    assert_int_equal(pmu_detect(&in, &c), PMU_STATUS_UNSUPPORTED);
    /* IA32_MISC_ENABLE says perfmon is off */
    in = nhm_input();
    in.misc_enable = 0;
    assert_int_equal(pmu_detect(&in, &c), PMU_STATUS_UNSUPPORTED);
    assert_false(c.pebs);
    assert_int_equal(c.offcore_msrs, 0);
}

static void test_generic_versions(void **state)
{
    (void)state;
    struct pmu_detect_input in = nhm_input();
    struct pmu_caps c;
    in.model = 0x55; /* not a model row: generic */
    in.leaf0a[0] = 4 | (8 << 8) | (48 << 16) | (8u << 24);
    in.leaf0a[1] = 0x1 << 3; /* LLC references unavailable */
    in.perf_capabilities = 0x33c5;
    assert_int_equal(pmu_detect(&in, &c), PMU_STATUS_OK);
    assert_string_equal(c.model, "arch_v4");
    assert_string_equal(c.event_table, "arch");
    assert_int_equal(c.gp_counters, 8);
    assert_int_equal(c.arch_events, 0xf7);
    assert_int_equal(c.pebs_format, 3);
    assert_int_equal(c.pebs_record_size, 0xc8);
    assert_true(c.full_width_write);
    assert_int_equal(c.lbr_depth, 0); /* model-specific: unknown for a generic row */
    assert_int_equal(c.offcore_msrs, 0);

    /* v1: no fixed counters, no global control */
    in.leaf0a[0] = 1 | (2 << 8) | (40 << 16) | (7u << 24);
    in.leaf0a[3] = 3 | (40 << 5); /* must be ignored below v2 */
    pmu_detect(&in, &c);
    assert_string_equal(c.model, "arch_v1");
    assert_int_equal(c.fixed_counters, 0);
    assert_false(c.global_ctrl);
    assert_false(c.any_thread);

    /* v5: ECX is a bitmap of fixed counters, merged with EDX[4:0]; AnyThread deprecated by EDX[15] */
    in.leaf0a[0] = 5 | (8 << 8) | (48 << 16) | (8u << 24);
    in.leaf0a[2] = 0x9; /* counters 0 and 3 */
    in.leaf0a[3] = 0 | (48 << 5) | (1 << 15);
    pmu_detect(&in, &c);
    assert_string_equal(c.model, "arch_v5");
    assert_int_equal(c.fixed_mask, 0x9);
    assert_int_equal(c.fixed_counters, 4);
    assert_false(c.any_thread);
    assert_int_equal(pmu_fixed_ctr_msr(&c, 3), 0x30c);
    assert_int_equal(pmu_fixed_ctr_msr(&c, 1), 0); /* hole in the bitmap */
    /* a future v6 still lands on the newest generic row */
    in.leaf0a[0] = (in.leaf0a[0] & ~0xffu) | 6;
    pmu_detect(&in, &c);
    assert_string_equal(c.model, "arch_v5");
    assert_int_equal(c.version, 6);
}

static void test_hostile_leaf0a(void **state)
{
    (void)state;
    struct pmu_detect_input in = nhm_input();
    struct pmu_caps c;
    in.model = 0x55;
    in.leaf0a[0] = 3 | (200 << 8) | (48 << 16) | (255u << 24);
    in.leaf0a[1] = 0xffffffff;
    in.leaf0a[3] = 31 | (200 << 5);
    assert_int_equal(pmu_detect(&in, &c), PMU_STATUS_PARTIAL);
    assert_int_equal(c.gp_counters, 8);
    assert_true(c.fixed_counters <= 8);
    assert_int_equal(c.fixed_width, 40);
    assert_int_equal(c.arch_events, 0);
    assert_non_null(c.reason);
    in.leaf0a[0] = 3 | (4 << 8) | (0 << 16);
    in.leaf0a[3] = 3 | (48 << 5);
    assert_int_equal(pmu_detect(&in, &c), PMU_STATUS_PARTIAL); /* width 0 */
    assert_int_equal(c.gp_width, 40);
    in.leaf0a[0] = 3 | (0 << 8) | (48 << 16);
    assert_int_equal(pmu_detect(&in, &c), PMU_STATUS_UNSUPPORTED);
    assert_int_equal(pmu_detect(NULL, &c), PMU_STATUS_UNSUPPORTED);
    memset(&in, 0, sizeof(in));
    assert_int_equal(pmu_detect(&in, &c), PMU_STATUS_UNSUPPORTED);
    assert_string_equal(c.model, "none");
}

static void test_pebs_conditions(void **state)
{
    (void)state;
    struct pmu_detect_input in = nhm_input();
    struct pmu_caps c;
    in.leaf1_edx = 0; /* no DS */
    pmu_detect(&in, &c);
    assert_false(c.pebs);
    assert_false(c.load_latency);
    assert_int_equal(c.pebs_record_size, 0);
    in = nhm_input();
    in.misc_enable |= IA32_MISC_ENABLE_PEBS_UNAVAILABLE;
    pmu_detect(&in, &c);
    assert_false(c.pebs);
    in = nhm_input();
    in.leaf1_ecx &= ~CPUID_1_ECX_DTES64;
    assert_int_equal(pmu_detect(&in, &c), PMU_STATUS_PARTIAL);
    assert_false(c.pebs);
    in = nhm_input();
    in.perf_capabilities = (in.perf_capabilities & ~IA32_PERF_CAP_PEBS_REC_FMT_MASK) | (4 << 8);
    assert_int_equal(pmu_detect(&in, &c), PMU_STATUS_PARTIAL); /* adaptive PEBS not decoded */
    assert_false(c.pebs);
    in.perf_capabilities = (in.perf_capabilities & ~IA32_PERF_CAP_PEBS_REC_FMT_MASK) | (2 << 8);
    pmu_detect(&in, &c);
    assert_int_equal(c.pebs_record_size, 0xc0);
    /* PERF_CAPABILITIES not read on a model row: Nehalem defaults, flagged */
    in = nhm_input();
    in.perf_cap_valid = false;
    assert_int_equal(pmu_detect(&in, &c), PMU_STATUS_PARTIAL);
    assert_true(c.pebs);
    assert_int_equal(c.pebs_format, 1);
    assert_int_equal(c.lbr_format, 3);
    /* ... and ignored without PDCM even if a value was supplied */
    in = nhm_input();
    in.leaf1_ecx &= ~CPUID_1_ECX_PDCM;
    in.perf_capabilities = 0x3f | (3 << 8);
    pmu_detect(&in, &c);
    assert_int_equal(c.lbr_format, 3);
    assert_int_equal(c.pebs_format, 1);
    assert_int_equal(pmu_pebs_record_size(0), 0x90);
    assert_int_equal(pmu_pebs_record_size(1), 0xb0);
    assert_int_equal(pmu_pebs_record_size(3), 0xc8);
    assert_int_equal(pmu_pebs_record_size(4), 0);
}

static void test_amd(void **state)
{
    (void)state;
    struct pmu_detect_input in;
    struct pmu_caps c;
    memset(&in, 0, sizeof(in));
    in.vendor = PMU_VENDOR_AMD;
    in.family = 0x10;
    in.model = 0x04;
    in.max_basic_leaf = 5;
    in.max_ext_leaf = 0x8000001b;
    in.leaf0a[0] = 0x07300403; /* garbage: AMD family 10h has no leaf 0AH */
    assert_int_equal(pmu_detect(&in, &c), PMU_STATUS_OK);
    assert_string_equal(c.model, "amd_fam10h");
    assert_int_equal(c.arch, PMU_ARCH_AMD_LEGACY);
    assert_int_equal(c.gp_counters, 4);
    assert_int_equal(c.gp_width, 48);
    assert_int_equal(c.fixed_counters, 0);
    assert_int_equal(c.version, 0);
    assert_string_equal(c.event_table, "amd_fam10h");
    assert_int_equal(pmu_gp_ctl_msr(&c, 3), 0xc0010003u);
    assert_int_equal(pmu_gp_ctr_msr(&c, 0), 0xc0010004u);
    assert_int_equal(pmu_gp_ctl_msr(&c, 4), 0);

    in.family = 0x15;
    in.amd_ext_ecx = CPUID_80000001_ECX_PERFCTR_CORE | CPUID_80000001_ECX_PERFCTR_NB;
    assert_int_equal(pmu_detect(&in, &c), PMU_STATUS_OK);
    assert_int_equal(c.arch, PMU_ARCH_AMD_EXT);
    assert_int_equal(c.gp_counters, 6);
    assert_int_equal(c.uncore, PMU_UNCORE_AMD_NB);
    assert_int_equal(c.nb_counters, 4);
    assert_int_equal(pmu_gp_ctl_msr(&c, 5), 0xc001020au);
    assert_int_equal(pmu_gp_ctr_msr(&c, 5), 0xc001020bu);
    /* without PerfCtrExtCore the extended MSRs are not there */
    in.amd_ext_ecx = 0;
    assert_int_equal(pmu_detect(&in, &c), PMU_STATUS_PARTIAL);
    assert_int_equal(c.arch, PMU_ARCH_AMD_LEGACY);
    assert_int_equal(c.gp_counters, 4);
    assert_int_equal(c.uncore, PMU_UNCORE_NONE);

    /* Zen 3 with PerfMonV2 */
    in.family = 0x19;
    in.model = 0x21;
    in.max_ext_leaf = 0x80000028;
    in.amd_ext_ecx = CPUID_80000001_ECX_PERFCTR_CORE;
    in.amd_perfmon[0] = CPUID_80000022_EAX_PERFMON_V2;
    in.amd_perfmon[1] = 6;
    assert_int_equal(pmu_detect(&in, &c), PMU_STATUS_OK);
    assert_string_equal(c.event_table, "amd_fam19h_zen3");
    assert_true(c.perfmon_v2 && c.global_ctrl);
    assert_int_equal(c.version, 2);
    in.model = 0x61; /* Zen 4 desktop */
    pmu_detect(&in, &c);
    assert_string_equal(c.event_table, "amd_fam19h_zen4");
    in.amd_perfmon[1] = 15; /* hostile */
    assert_int_equal(pmu_detect(&in, &c), PMU_STATUS_PARTIAL);
    assert_int_equal(c.gp_counters, 6);
    /* leaf 8000_0022h beyond max_ext_leaf is ignored */
    in.max_ext_leaf = 0x80000020;
    pmu_detect(&in, &c);
    assert_false(c.perfmon_v2);
    /* Zen 2 by model */
    in.family = 0x17;
    in.model = 0x31;
    pmu_detect(&in, &c);
    assert_string_equal(c.event_table, "amd_fam17h_zen2");
    /* Hygon / other families: extended counters, raw events only */
    in.family = 0x18;
    pmu_detect(&in, &c);
    assert_string_equal(c.model, "amd_ext");
    assert_null(c.event_table);
}

static void test_netburst(void **state)
{
    (void)state;
    struct pmu_detect_input in;
    struct pmu_caps c;
    memset(&in, 0, sizeof(in));
    in.vendor = PMU_VENDOR_INTEL;
    in.family = 0xf;
    in.model = 2;
    in.max_basic_leaf = 2;
    assert_int_equal(pmu_detect(&in, &c), PMU_STATUS_OK);
    assert_string_equal(c.model, "netburst");
    assert_int_equal(c.arch, PMU_ARCH_NETBURST);
    assert_int_equal(c.gp_counters, 18);
    assert_int_equal(c.gp_width, 40);
    assert_int_equal(c.lbr_depth, 4);
    assert_int_equal(c.lbr_tos, 0x1da);
    assert_false(c.pebs);
    assert_int_equal(pmu_gp_ctl_msr(&c, 17), 0x371); /* CCCR */
    assert_int_equal(pmu_gp_ctr_msr(&c, 17), 0x311);
    assert_int_equal(pmu_fixed_ctr_msr(&c, 0), 0);
    in.model = 4;
    pmu_detect(&in, &c);
    assert_string_equal(c.model, "netburst_p");
    assert_string_equal(c.event_table, "netburst_p");
    assert_int_equal(c.lbr_depth, 16);
}

struct fake_cpuid {
    uint32_t leaf[8][5]; /* leaf, eax, ebx, ecx, edx */
    unsigned n;
    unsigned calls_0a;
};

static void fake_fn(uint32_t leaf, uint32_t subleaf, uint32_t r[4], void *ctx)
{
    struct fake_cpuid *f = ctx;
    (void)subleaf;
    if (leaf == 0xa)
        f->calls_0a++;
    for (unsigned i = 0; i < f->n; i++)
        if (f->leaf[i][0] == leaf) {
            memcpy(r, &f->leaf[i][1], 16);
            return;
        }
    /* Intel-style out-of-range answer: the highest basic leaf's data */
    memcpy(r, &f->leaf[f->n - 1][1], 16);
}

static void test_input_from_cpuid(void **state)
{
    (void)state;
    /* captured Nehalem-EP: leaf 1 EAX 0x000106A5 -> family 6, model 0x1A, stepping 5 */
    struct fake_cpuid f = {
        .leaf = {{0x0, 0xb, 0x756e6547, 0x6c65746e, 0x49656e69},
                 {0x1, 0x000106a5, 0, CPUID_1_ECX_DTES64 | CPUID_1_ECX_PDCM, CPUID_1_EDX_DS},
                 {0xa, 0x07300403, 0, 0, 0x603},
                 {0x80000000u, 0x80000008u, 0, 0, 0},
                 {0x80000001u, 0, 0, 0, 0}},
        .n = 5};
    struct pmu_detect_input in;
    struct pmu_caps c;
    pmu_detect_input_from_cpuid(fake_fn, &f, &in);
    assert_int_equal(in.vendor, PMU_VENDOR_INTEL);
    assert_int_equal(in.family, 6);
    assert_int_equal(in.model, 0x1a);
    assert_int_equal(in.stepping, 5);
    assert_int_equal(in.leaf0a[0], 0x07300403);
    assert_false(in.perf_cap_valid);
    pmu_detect(&in, &c);
    assert_string_equal(c.model, "nhm");
    assert_int_equal(c.status, PMU_STATUS_PARTIAL); /* PERF_CAPABILITIES left to the caller */

    /* max basic leaf 5: leaf 0AH must not even be asked for */
    f.leaf[0][1] = 5;
    f.calls_0a = 0;
    pmu_detect_input_from_cpuid(fake_fn, &f, &in);
    assert_int_equal(f.calls_0a, 0);
    assert_int_equal(in.leaf0a[0], 0);

    /* AMD family 10h: leaf 1 EAX 0x00100F22 -> base family F + ext 1 = 10h, model 2 */
    struct fake_cpuid a = {
        .leaf = {{0x0, 0x5, 0x68747541, 0x444d4163, 0x69746e65},
                 {0x1, 0x00100f22, 0, 0, 0},
                 {0x80000000u, 0x8000001bu, 0, 0, 0},
                 {0x80000001u, 0, 0, CPUID_80000001_ECX_PERFCTR_CORE, 0}},
        .n = 4};
    pmu_detect_input_from_cpuid(fake_fn, &a, &in);
    assert_int_equal(in.vendor, PMU_VENDOR_AMD);
    assert_int_equal(in.family, 0x10);
    assert_int_equal(in.model, 2);
    assert_int_equal(in.amd_ext_ecx, CPUID_80000001_ECX_PERFCTR_CORE);
    pmu_detect_input_from_cpuid(NULL, NULL, &in);
    assert_int_equal(in.vendor, PMU_VENDOR_UNKNOWN);
}

static void test_dry_run_models(void **state)
{
    (void)state;
    struct pmu_caps c;
    static const char *const wanted[] = {"nhm", "wsm", "amd_fam10h", "netburst"};
    for (size_t i = 0; i < sizeof(wanted) / sizeof(wanted[0]); i++) {
        assert_int_equal(pmu_caps_for_model(wanted[i], &c), 0);
        assert_string_equal(c.model, wanted[i]);
        assert_int_not_equal(c.status, PMU_STATUS_UNSUPPORTED);
    }
    assert_int_equal(pmu_caps_for_model("nhm", &c), 0);
    assert_int_equal(c.status, PMU_STATUS_OK);
    assert_true(c.pebs && c.load_latency);
    assert_int_equal(pmu_caps_for_model("wsm", &c), 0);
    assert_int_equal(c.offcore_msrs, 2);
    /* every row's sample is detected as that row */
    unsigned n = 0;
    for (const char *name; (name = pmu_model_name(n)); n++) {
        if (pmu_caps_for_model(name, &c))
            fail_msg("row %s: sample not detected as itself (got %s)", name, c.model ? c.model : "?");
        assert_int_not_equal(c.status, PMU_STATUS_UNSUPPORTED);
    }
    assert_true(n >= 15);
    assert_int_equal(pmu_caps_for_model("bogus", &c), -1);
    assert_int_equal(pmu_caps_for_model(NULL, &c), -1);
}

static void test_ops_and_names(void **state)
{
    (void)state;
    struct pmu_caps c;
    pmu_caps_for_model("nhm", &c);
    assert_int_equal(pmu_gp_ctl_msr(&c, 0), 0x186);
    assert_int_equal(pmu_gp_ctr_msr(&c, 3), 0xc4);
    assert_int_equal(pmu_gp_ctl_msr(&c, 4), 0);
    assert_int_equal(pmu_fixed_ctr_msr(&c, 2), 0x30b);
    assert_int_equal(pmu_fixed_ctr_msr(&c, 3), 0);
    assert_int_equal(pmu_caps_ops(&c)->rdpmc_fixed_flag, 1u << 30);
    assert_string_equal(pmu_vendor_name(PMU_VENDOR_AMD), "amd");
    assert_string_equal(pmu_arch_name(PMU_ARCH_NETBURST), "netburst");
    assert_string_equal(pmu_uncore_name(PMU_UNCORE_NHM_EX), "nhm_ex");
    assert_string_equal(pmu_status_name(PMU_STATUS_PARTIAL), "partial");
    assert_string_equal(pmu_status_name((enum pmu_status)77), "unsupported");
    memset(&c, 0, sizeof(c));
    assert_int_equal(pmu_gp_ctl_msr(&c, 0), 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_nehalem),          cmocka_unit_test(test_westmere_and_ex),
        cmocka_unit_test(test_max_leaf_and_version_zero), cmocka_unit_test(test_generic_versions),
        cmocka_unit_test(test_hostile_leaf0a),   cmocka_unit_test(test_pebs_conditions),
        cmocka_unit_test(test_amd),              cmocka_unit_test(test_netburst),
        cmocka_unit_test(test_input_from_cpuid), cmocka_unit_test(test_dry_run_models),
        cmocka_unit_test(test_ops_and_names),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
