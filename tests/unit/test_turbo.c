/* test_turbo.c - kernel/turbo.c against scripted CPUID and MSRs: features from CPUID only, turbo=off written and read back (stuck, ignored, #GP, HWP), AMD CpbDis, the package C-state limit, the JSON. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <cmocka.h>

#include "kernel/kernel.h"
#include "kernel/msr.h"
#include "kernel/turbo.h"

/* ---- the scripted machine ----------------------------------------------------------------------------- */

struct kernel K;

#define NMSR 8
static struct fake_msr {
    uint32_t msr;
    uint64_t val;
    bool present;     /* absent: every access #GPs */
    bool read_only;   /* writes succeed and change nothing (firmware-owned bits) */
    bool write_gp;    /* writes #GP */
    unsigned reads, writes;
} msrs[NMSR];
static uint32_t leaf6_eax, leaf80000007_edx, leaf5_edx;

static struct fake_msr *find(uint32_t msr)
{
    for (int i = 0; i < NMSR; i++)
        if (msrs[i].present && msrs[i].msr == msr)
            return &msrs[i];
    return NULL;
}

int rdmsr_safe(uint32_t msr, uint64_t *val)
{
    struct fake_msr *m = find(msr);
    *val = 0;
    if (!m)
        return MSR_EFAULT;
    m->reads++;
    *val = m->val;
    return MSR_OK;
}

int wrmsr_safe(uint32_t msr, uint64_t val)
{
    struct fake_msr *m = find(msr);
    if (!m || m->write_gp)
        return MSR_EFAULT;
    m->writes++;
    if (!m->read_only)
        m->val = val;
    return MSR_OK;
}

void kernel_cpuid(uint32_t leaf, uint32_t subleaf, uint32_t r[4], void *ctx)
{
    (void)subleaf;
    (void)ctx;
    memset(r, 0, 4 * sizeof(uint32_t));
    if (leaf == 6)
        r[0] = leaf6_eax;
    else if (leaf == 0x80000007)
        r[3] = leaf80000007_edx;
    else if (leaf == 5)
        r[3] = leaf5_edx;
}

static struct fake_msr *add_msr(uint32_t msr, uint64_t val)
{
    for (int i = 0; i < NMSR; i++)
        if (!msrs[i].present) {
            msrs[i] = (struct fake_msr){.msr = msr, .val = val, .present = true};
            return &msrs[i];
        }
    fail_msg("too many MSRs");
    return NULL;
}

static unsigned total_writes(void)
{
    unsigned n = 0;
    for (int i = 0; i < NMSR; i++)
        n += msrs[i].writes;
    return n;
}

static void machine(enum cpu_vendor v, uint32_t family, uint32_t model, bool turbo_cpuid, bool hypervisor)
{
    memset(&K, 0, sizeof(K));
    memset(msrs, 0, sizeof(msrs));
    leaf6_eax = turbo_cpuid ? 1U << 1 : 0;
    leaf80000007_edx = leaf5_edx = 0;
    K.cpu.vendor = v;
    strcpy(K.cpu.vendor_str, v == CPU_VENDOR_INTEL ? "GenuineIntel" : v == CPU_VENDOR_AMD ? "AuthenticAMD" : "Other");
    K.cpu.family = family;
    K.cpu.model = model;
    K.cpu.max_basic = 0x20;
    K.cpu.max_ext = 0x80000008;
    K.cpu.feat.turbo = turbo_cpuid;
    K.cpu.feat.hypervisor = hypervisor;
}

static struct config cfg(enum cfg_turbo t)
{
    struct config c;
    config_defaults(&c);
    c.turbo = t;
    return c;
}

static void json_of_turbo(char *buf, size_t cap)
{
    struct json j;
    json_init(&j, buf, cap);
    json_obj_begin(&j);
    turbo_json(&j);
    json_obj_end(&j);
    assert_false(j.overflow);
}

/* ---- Intel -------------------------------------------------------------------------------------------- */

static void test_intel_leave_reads_only(void **state)
{
    (void)state;
    machine(CPU_VENDOR_INTEL, 6, 0x2A, true, false); /* Sandy Bridge */
    add_msr(MSR_IA32_MISC_ENABLE, IA32_MISC_ENABLE_EIST);
    add_msr(MSR_IA32_PERF_CTL, 0x2200);
    add_msr(MSR_PKG_CST_CONFIG_CONTROL, PKG_CST_CONFIG_CFG_LOCK | 0x3);
    struct config c = cfg(CFG_TURBO_LEAVE);
    turbo_apply(&c, 0);
    const struct turbo_info *t = turbo_info();
    assert_true(t->available);
    assert_int_equal(t->before, TURBO_STATE_ON);
    assert_int_equal(t->after, TURBO_STATE_ON);
    assert_int_equal(total_writes(), 0);
    assert_int_equal(t->hwp, 0);
    assert_true(t->cst_available);
    assert_int_equal(t->cst_limit_raw, 3);
    assert_string_equal(t->cst_limit, "C6 (retention)");
    assert_int_equal(t->cst_locked, 1);
    char buf[2048];
    json_of_turbo(buf, sizeof(buf));
    assert_non_null(strstr(buf, "\"turbo\":{\"available\":true,\"state\":\"on\",\"state_before\":\"on\",\"requested\":\"leave\""));
    assert_non_null(strstr(buf, "\"pkg_limit\":\"C6 (retention)\",\"pkg_limit_raw\":3,\"locked\":true"));
    assert_non_null(strstr(buf, "\"applied\":1,\"on\":1,\"off\":0"));
}

static void test_intel_off_misc_ignored_perf_ctl_sticks(void **state)
{
    (void)state;
    machine(CPU_VENDOR_INTEL, 6, 0x1A, true, false); /* Nehalem */
    struct fake_msr *misc = add_msr(MSR_IA32_MISC_ENABLE, 0);
    misc->read_only = true; /* the BIOS owns bit 38 on this part */
    struct fake_msr *perf = add_msr(MSR_IA32_PERF_CTL, 0x14);
    add_msr(MSR_PKG_CST_CONFIG_CONTROL, 0x7);
    struct config c = cfg(CFG_TURBO_OFF);
    turbo_apply(&c, 0);
    const struct turbo_info *t = turbo_info();
    assert_int_equal(t->before, TURBO_STATE_ON);
    assert_int_equal(t->after, TURBO_STATE_OFF);
    assert_int_equal(misc->writes, 1);
    assert_int_equal(perf->val, 0x14 | IA32_PERF_CTL_IDA_DISENGAGE); /* the target ratio kept */
    assert_non_null(strstr(t->how, "IA32_MISC_ENABLE[38]: ignored"));
    assert_non_null(strstr(t->how, "IA32_PERF_CTL[32]: read back set"));
    assert_string_equal(t->cst_limit, "no limit");

    /* An AP whose write faults on both: counted as failed. */
    misc->write_gp = true;
    perf->write_gp = true;
    perf->val = 0x14;
    turbo_apply(&c, 1);
    assert_int_equal(turbo_cpu(1)->after, TURBO_STATE_ON);
    assert_true(turbo_cpu(1)->write_faulted);
    char buf[2048];
    json_of_turbo(buf, sizeof(buf));
    assert_non_null(strstr(buf, "\"applied\":2,\"on\":1,\"off\":1,\"unknown\":0,\"failed\":1"));
}

static void test_intel_off_misc_sticks_hwp_ignores_perf_ctl(void **state)
{
    (void)state;
    machine(CPU_VENDOR_INTEL, 6, 0x8F, true, false); /* Sapphire Rapids */
    leaf6_eax |= 1U << 7;                             /* HWP */
    struct fake_msr *misc = add_msr(MSR_IA32_MISC_ENABLE, 0);
    struct fake_msr *perf = add_msr(MSR_IA32_PERF_CTL, 0);
    add_msr(MSR_IA32_PM_ENABLE, IA32_PM_ENABLE_HWP);
    add_msr(MSR_PKG_CST_CONFIG_CONTROL, 0x2);
    struct config c = cfg(CFG_TURBO_OFF);
    turbo_apply(&c, 0);
    const struct turbo_info *t = turbo_info();
    assert_int_equal(t->hwp, 1);
    assert_int_equal(t->after, TURBO_STATE_OFF);
    assert_true(misc->val & IA32_MISC_ENABLE_IDA_DISABLE);
    assert_int_equal(perf->writes, 0); /* ignored under HWP: not written */
    assert_null(t->cst_limit);        /* a generation whose encoding is reported raw */
    assert_int_equal(t->cst_limit_raw, 2);
    assert_non_null(strstr(t->cst_reason, "raw value only"));
}

static void test_intel_disabled_by_firmware(void **state)
{
    (void)state;
    /* IA32_MISC_ENABLE[38] set by the BIOS clears CPUID.06H:EAX[1]: available, and off. */
    machine(CPU_VENDOR_INTEL, 6, 0x3A, false, false);
    add_msr(MSR_IA32_MISC_ENABLE, IA32_MISC_ENABLE_IDA_DISABLE);
    add_msr(MSR_IA32_PERF_CTL, 0);
    struct config c = cfg(CFG_TURBO_LEAVE);
    turbo_apply(&c, 0);
    const struct turbo_info *t = turbo_info();
    assert_true(t->available);
    assert_int_equal(t->before, TURBO_STATE_OFF);
    assert_int_equal(t->after, TURBO_STATE_OFF);
}

static void test_tcg_like_nothing_from_msrs(void **state)
{
    (void)state;
    /* QEMU TCG: CPUID says no turbo, the MSRs answer 0 and drop writes. Nothing is written, the package
     * C-state MSR is not even read (hypervisor), and the record says CPUID. */
    machine(CPU_VENDOR_INTEL, 6, 0x1A, false, true);
    struct fake_msr *misc = add_msr(MSR_IA32_MISC_ENABLE, 0);
    misc->read_only = true;
    struct fake_msr *cst = add_msr(MSR_PKG_CST_CONFIG_CONTROL, 0);
    struct config c = cfg(CFG_TURBO_OFF);
    turbo_apply(&c, 0);
    const struct turbo_info *t = turbo_info();
    assert_false(t->available);
    assert_int_equal(t->after, TURBO_STATE_NOT_AVAILABLE);
    assert_int_equal(total_writes(), 0);
    assert_int_equal(cst->reads, 0);
    assert_false(t->cst_available);
    assert_non_null(strstr(t->reason, "not available (CPUID.06H:EAX[1] = 0"));
    assert_non_null(strstr(t->cst_reason, "hypervisor"));
    char buf[2048];
    json_of_turbo(buf, sizeof(buf));
    assert_non_null(strstr(buf, "\"state\":\"not_available\""));
    assert_non_null(strstr(buf, "\"failed\":0")); /* nothing to switch off is not a failure */
    assert_non_null(strstr(buf, "\"pkg_limit\":null,\"pkg_limit_raw\":null,\"locked\":null"));
}

static void test_unknown_model_not_read(void **state)
{
    (void)state;
    machine(CPU_VENDOR_INTEL, 6, 0x37, false, false); /* Silvermont: another C-state MSR layout */
    struct fake_msr *cst = add_msr(MSR_PKG_CST_CONFIG_CONTROL, 0);
    struct config c = cfg(CFG_TURBO_LEAVE);
    turbo_apply(&c, 0);
    assert_int_equal(cst->reads, 0);
    assert_non_null(strstr(turbo_info()->cst_reason, "layout not known"));
}

/* ---- AMD ---------------------------------------------------------------------------------------------- */

static void test_amd_cpb(void **state)
{
    (void)state;
    machine(CPU_VENDOR_AMD, 0x19, 0x21, false, false);
    leaf80000007_edx = 1U << 9;
    struct fake_msr *hwcr = add_msr(MSR_AMD_HWCR, 0x1000000);
    struct config c = cfg(CFG_TURBO_OFF);
    turbo_apply(&c, 0);
    const struct turbo_info *t = turbo_info();
    assert_true(t->available);
    assert_int_equal(t->before, TURBO_STATE_ON);
    assert_int_equal(t->after, TURBO_STATE_OFF);
    assert_int_equal(hwcr->val, 0x1000000 | AMD_HWCR_CPB_DIS);
    assert_non_null(strstr(t->how, "CpbDis: read back set"));
    assert_non_null(strstr(t->cst_reason, "vendor"));

    /* No CPB in CPUID: HWCR is not touched. */
    machine(CPU_VENDOR_AMD, 0x0F, 0x6B, false, true);
    hwcr = add_msr(MSR_AMD_HWCR, 0);
    turbo_apply(&c, 0);
    assert_int_equal(hwcr->reads + hwcr->writes, 0);
    assert_non_null(strstr(turbo_info()->reason, "CPB = 0"));

    /* CPB, but HWCR faults: unknown. */
    machine(CPU_VENDOR_AMD, 0x17, 0x31, false, false);
    leaf80000007_edx = 1U << 9;
    turbo_apply(&c, 0);
    assert_int_equal(turbo_info()->after, TURBO_STATE_UNKNOWN);
}

static void test_line(void **state)
{
    (void)state;
    machine(CPU_VENDOR_INTEL, 6, 0x2A, true, false);
    add_msr(MSR_IA32_MISC_ENABLE, 0);
    add_msr(MSR_IA32_PERF_CTL, 0);
    add_msr(MSR_PKG_CST_CONFIG_CONTROL, 0x7);
    struct config c = cfg(CFG_TURBO_OFF);
    turbo_apply(&c, 0);
    char line[200];
    turbo_line(line, sizeof(line));
    assert_string_equal(line, "turbo off (off requested, 1/1 CPUs off), package C-state limit no limit");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_intel_leave_reads_only),
        cmocka_unit_test(test_intel_off_misc_ignored_perf_ctl_sticks),
        cmocka_unit_test(test_intel_off_misc_sticks_hwp_ignores_perf_ctl),
        cmocka_unit_test(test_intel_disabled_by_firmware),
        cmocka_unit_test(test_tcg_like_nothing_from_msrs),
        cmocka_unit_test(test_unknown_model_not_read),
        cmocka_unit_test(test_amd_cpb),
        cmocka_unit_test(test_line),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
