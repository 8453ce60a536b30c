/* turbo.c - read (and on request switch off) turbo on every CPU, read the package C-state limit, report both.
 * Hardware only through K.cpu, kernel_cpuid and rdmsr_safe/wrmsr_safe, which tests/unit/test_turbo.c scripts. */
#include "kernel/turbo.h"
#include "kernel/fmt.h"
#include "kernel/kernel.h"
#include "kernel/msr.h"
#include "kernel/smp.h"

/* CPUID bits read here (SDM Vol. 2A CPUID; AMD APM Vol. 3 appendix E). */
#define CPUID_06_EAX_TURBO (1U << 1)      /* Intel Turbo Boost available (clear while IA32_MISC_ENABLE[38]) */
#define CPUID_06_EAX_HWP (1U << 7)        /* IA32_PM_ENABLE and the HWP MSRs exist */
#define CPUID_80000007_EDX_CPB (1U << 9)  /* AMD core performance boost */
#define CPUID_LEAF_MWAIT 0x05U
#define CPUID_LEAF_THERMAL_POWER 0x06U
#define CPUID_LEAF_APM 0x80000007U

static struct turbo_info info = {.hwp = -1, .cst_limit_raw = -1, .cst_locked = -1};
static struct turbo_cpu cpus[SMP_MAX_CPUS];

const struct turbo_info *turbo_info(void) { return &info; }
const struct turbo_cpu *turbo_cpu(uint32_t i) { return i < SMP_MAX_CPUS ? &cpus[i] : NULL; }

const char *turbo_state_name(enum turbo_state s)
{
    switch (s) {
    case TURBO_STATE_ON:
        return "on";
    case TURBO_STATE_OFF:
        return "off";
    case TURBO_STATE_UNKNOWN:
        return "unknown";
    default:
        return "not_available";
    }
}

/* Appends "; text" (or text) to a TURBO_TEXT_MAX buffer; only the boot CPU writes the shared texts. */
static void add_text(char *buf, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void add_text(char *buf, const char *fmt, ...)
{
    size_t len = strlen(buf);
    if (len && len + 2 < TURBO_TEXT_MAX) {
        memcpy(buf + len, "; ", 3);
        len += 2;
    }
    va_list ap;
    va_start(ap, fmt);
    fmt_vsnprintf(buf + len, TURBO_TEXT_MAX - len, fmt, ap);
    va_end(ap);
}

/* Sets `bit` in `msr` and reads it back: 1 it stuck, 0 ignored, -1 the write (or the read back) faulted. */
static int set_and_check(uint32_t msr, uint64_t old, uint64_t bit)
{
    uint64_t v;
    if (wrmsr_safe(msr, old | bit) != MSR_OK)
        return -1;
    if (rdmsr_safe(msr, &v) != MSR_OK)
        return -1;
    return (v & bit) != 0;
}

static const char *outcome(int r) { return r > 0 ? "read back set" : r == 0 ? "ignored (read back clear)" : "#GP"; }

/* ---- Intel -------------------------------------------------------------------------------------------- */

static void intel_turbo(struct turbo_cpu *pc, bool off, bool bsp)
{
    uint64_t misc = 0, perf = 0, pm = 0;
    uint32_t r[4] = {0, 0, 0, 0};
    bool misc_ok = rdmsr_safe(MSR_IA32_MISC_ENABLE, &misc) == MSR_OK;
    bool misc_off = misc_ok && (misc & IA32_MISC_ENABLE_IDA_DISABLE);
    /* K.cpu was decoded on the boot CPU before anything was written: CPUID.06H:EAX[1] as the firmware left
     * it. A set IA32_MISC_ENABLE[38] clears that bit, so it also says turbo exists. */
    if (!K.cpu.feat.turbo && !misc_off) {
        pc->before = pc->after = TURBO_STATE_NOT_AVAILABLE;
        if (bsp)
            add_text(info.reason, "not available (CPUID.06H:EAX[1] = 0%s)",
                     misc_ok ? ", IA32_MISC_ENABLE[38] clear" : "");
        return;
    }
    if (bsp)
        info.available = true;
    bool hwp = false;
    if (K.cpu.max_basic >= CPUID_LEAF_THERMAL_POWER)
        kernel_cpuid(CPUID_LEAF_THERMAL_POWER, 0, r, NULL);
    if (r[0] & CPUID_06_EAX_HWP) {
        bool pm_ok = rdmsr_safe(MSR_IA32_PM_ENABLE, &pm) == MSR_OK;
        hwp = pm_ok && (pm & IA32_PM_ENABLE_HWP);
        if (bsp)
            info.hwp = pm_ok ? hwp : -1;
    } else if (bsp) {
        info.hwp = 0;
    }
    /* IA32_PERF_CTL[32] counts only while HWP is off: HWP ignores IA32_PERF_CTL. */
    bool perf_ok = !hwp && rdmsr_safe(MSR_IA32_PERF_CTL, &perf) == MSR_OK;
    bool perf_off = perf_ok && (perf & IA32_PERF_CTL_IDA_DISENGAGE);
    pc->before = !misc_ok ? TURBO_STATE_UNKNOWN : misc_off || perf_off ? TURBO_STATE_OFF : TURBO_STATE_ON;
    if (bsp) {
        if (!misc_ok)
            add_text(info.reason, "IA32_MISC_ENABLE read #GP");
        fmt_snprintf(info.how, sizeof(info.how), "IA32_MISC_ENABLE[38] = %d, IA32_PERF_CTL[32] = %s",
                     misc_off ? 1 : 0, hwp ? "ignored (HWP enabled)" : perf_ok ? (perf_off ? "1" : "0") : "unread");
    }
    if (!off || pc->before == TURBO_STATE_OFF) {
        pc->after = pc->before;
        return;
    }
    int m = misc_ok && !misc_off ? set_and_check(MSR_IA32_MISC_ENABLE, misc, IA32_MISC_ENABLE_IDA_DISABLE) : 0;
    int p = perf_ok && !perf_off ? set_and_check(MSR_IA32_PERF_CTL, perf, IA32_PERF_CTL_IDA_DISENGAGE) : 0;
    pc->write_faulted = m < 0 || p < 0;
    pc->write_ignored = (misc_ok && m == 0) && (!perf_ok || p == 0);
    pc->after = m > 0 || p > 0 ? TURBO_STATE_OFF : pc->before;
    if (bsp) {
        info.how[0] = '\0';
        if (misc_ok)
            add_text(info.how, "set IA32_MISC_ENABLE[38]: %s", outcome(m));
        if (perf_ok)
            add_text(info.how, "set IA32_PERF_CTL[32]: %s", outcome(p));
        else if (hwp)
            add_text(info.how, "IA32_PERF_CTL[32] not used (HWP enabled)");
        if (pc->after != TURBO_STATE_OFF)
            add_text(info.reason, "turbo=off requested but no control bit stuck (firmware-owned on this part?)");
    }
}

/* ---- AMD ---------------------------------------------------------------------------------------------- */

static void amd_turbo(struct turbo_cpu *pc, bool off, bool bsp)
{
    uint32_t r[4] = {0, 0, 0, 0};
    if (K.cpu.max_ext >= CPUID_LEAF_APM)
        kernel_cpuid(CPUID_LEAF_APM, 0, r, NULL);
    if (!(r[3] & CPUID_80000007_EDX_CPB)) {
        pc->before = pc->after = TURBO_STATE_NOT_AVAILABLE;
        if (bsp)
            add_text(info.reason, "not available (CPUID 8000_0007H:EDX[9] CPB = 0)");
        return;
    }
    if (bsp)
        info.available = true;
    uint64_t hwcr;
    if (rdmsr_safe(MSR_AMD_HWCR, &hwcr) != MSR_OK) {
        pc->before = pc->after = TURBO_STATE_UNKNOWN;
        if (bsp)
            add_text(info.reason, "HWCR (C001_0015) read #GP");
        return;
    }
    pc->before = hwcr & AMD_HWCR_CPB_DIS ? TURBO_STATE_OFF : TURBO_STATE_ON;
    if (bsp)
        fmt_snprintf(info.how, sizeof(info.how), "HWCR[25] CpbDis = %d", pc->before == TURBO_STATE_OFF);
    if (!off || pc->before == TURBO_STATE_OFF) {
        pc->after = pc->before;
        return;
    }
    int h = set_and_check(MSR_AMD_HWCR, hwcr, AMD_HWCR_CPB_DIS);
    pc->write_faulted = h < 0;
    pc->write_ignored = h == 0;
    pc->after = h > 0 ? TURBO_STATE_OFF : pc->before;
    if (bsp) {
        fmt_snprintf(info.how, sizeof(info.how), "set HWCR[25] CpbDis: %s", outcome(h));
        if (h <= 0)
            add_text(info.reason, "turbo=off requested but HWCR[25] did not stick");
    }
}

/* ---- package C-state limit (boot CPU only) ------------------------------------------------------------ */

/* Intel Core / Xeon models (family 6) with MSR_PKG_CST_CONFIG_CONTROL, and which encoding of its limit
 * field this file can name ([SDM4-NHM], [SDM4-SNB]; later parts' encodings differ between client and server
 * and are reported raw). Atom-line parts have the MSR with other layouts: not read. */
enum cst_enc { CST_NHM, CST_SNB, CST_RAW };
static const struct {
    uint8_t model;
    uint8_t enc;
} cst_models[] = {
    {0x1A, CST_NHM}, {0x1E, CST_NHM}, {0x1F, CST_NHM}, {0x2E, CST_NHM}, /* Nehalem */
    {0x25, CST_NHM}, {0x2C, CST_NHM}, {0x2F, CST_NHM},                  /* Westmere */
    {0x2A, CST_SNB}, {0x2D, CST_SNB}, {0x3A, CST_SNB}, {0x3E, CST_SNB}, /* Sandy Bridge, Ivy Bridge */
    {0x3C, CST_RAW}, {0x3F, CST_RAW}, {0x45, CST_RAW}, {0x46, CST_RAW}, /* Haswell */
    {0x3D, CST_RAW}, {0x47, CST_RAW}, {0x4F, CST_RAW}, {0x56, CST_RAW}, /* Broadwell */
    {0x4E, CST_RAW}, {0x5E, CST_RAW}, {0x55, CST_RAW}, {0x8E, CST_RAW}, /* Skylake, Cascade Lake, */
    {0x9E, CST_RAW}, {0xA5, CST_RAW}, {0xA6, CST_RAW},                  /* Kaby/Coffee/Comet Lake */
    {0x66, CST_RAW}, {0x6A, CST_RAW}, {0x6C, CST_RAW}, {0x7D, CST_RAW}, {0x7E, CST_RAW}, /* Ice Lake */
    {0x8C, CST_RAW}, {0x8D, CST_RAW}, {0xA7, CST_RAW},                  /* Tiger Lake, Rocket Lake */
    {0x8F, CST_RAW}, {0xCF, CST_RAW}, {0xAD, CST_RAW}, {0xAE, CST_RAW}, /* Sapphire/Emerald/Granite Rapids */
    {0x97, CST_RAW}, {0x9A, CST_RAW}, {0xB7, CST_RAW}, {0xBA, CST_RAW}, {0xBF, CST_RAW}, /* Alder/Raptor Lake */
    {0xAA, CST_RAW}, {0xAC, CST_RAW}, {0xBD, CST_RAW}, {0xC5, CST_RAW}, {0xC6, CST_RAW}, /* Meteor..Arrow Lake */
};

/* [SDM4-NHM] MSR_PKG_CST_CONFIG_CONTROL[2:0]; 5 and 6 reserved. */
static const char *const cst_nhm[8] = {"C0 (no package C-state)", "C1", "C3", "C6", "C7", NULL, NULL, "no limit"};
/* [SDM4-SNB] MSR_PKG_CST_CONFIG_CONTROL[2:0]; 6 reserved. */
static const char *const cst_snb[8] = {"C0/C1 (no package C-state)", "C2", "C6 (no retention)", "C6 (retention)",
                                       "C7", "C7s", NULL, "no limit"};

static void read_cstates(void)
{
    uint32_t r[4];
    if (K.cpu.feat.monitor && K.cpu.max_basic >= CPUID_LEAF_MWAIT) {
        kernel_cpuid(CPUID_LEAF_MWAIT, 0, r, NULL);
        info.mwait_substates = r[3];
    }
    if (K.cpu.vendor != CPU_VENDOR_INTEL) {
        add_text(info.cst_reason, "not read: no architectural package C-state limit register on this vendor");
        return;
    }
    if (K.cpu.feat.hypervisor) {
        add_text(info.cst_reason, "not read: under a hypervisor (CPUID.01H:ECX[31]) model-specific power MSRs are "
                                  "emulated or absent");
        return;
    }
    int enc = -1;
    for (size_t i = 0; K.cpu.family == 6 && i < ARRAY_SIZE(cst_models); i++)
        if (cst_models[i].model == K.cpu.model)
            enc = cst_models[i].enc;
    if (enc < 0) {
        add_text(info.cst_reason, "not read: MSR_PKG_CST_CONFIG_CONTROL layout not known for family 0x%x model 0x%x",
                 K.cpu.family, K.cpu.model);
        return;
    }
    uint64_t v;
    if (rdmsr_safe(MSR_PKG_CST_CONFIG_CONTROL, &v) != MSR_OK) {
        add_text(info.cst_reason, "MSR_PKG_CST_CONFIG_CONTROL (0xE2) read #GP");
        return;
    }
    info.cst_available = true;
    info.cst_locked = (v & PKG_CST_CONFIG_CFG_LOCK) != 0;
    if (enc == CST_RAW) {
        info.cst_limit_raw = (int)(v & PKG_CST_CONFIG_LIMIT_MASK4);
        fmt_snprintf(info.cst_how, sizeof(info.cst_how), "MSR_PKG_CST_CONFIG_CONTROL (0xE2) bits 3:0");
        add_text(info.cst_reason, "limit encoding differs between this generation's client and server parts "
                                  "(SDM Vol. 4): raw value only");
    } else {
        info.cst_limit_raw = (int)(v & PKG_CST_CONFIG_LIMIT_MASK3);
        info.cst_limit = (enc == CST_NHM ? cst_nhm : cst_snb)[info.cst_limit_raw];
        fmt_snprintf(info.cst_how, sizeof(info.cst_how), "MSR_PKG_CST_CONFIG_CONTROL (0xE2) bits 2:0, %s encoding",
                     enc == CST_NHM ? "Nehalem" : "Sandy Bridge");
        if (!info.cst_limit)
            add_text(info.cst_reason, "reserved limit value %d", info.cst_limit_raw);
    }
}

/* ---- per CPU ------------------------------------------------------------------------------------------ */

void turbo_apply(const struct config *c, uint32_t cpu_index)
{
    if (cpu_index >= SMP_MAX_CPUS)
        return;
    bool bsp = cpu_index == 0, off = c->turbo == CFG_TURBO_OFF;
    struct turbo_cpu *pc = &cpus[cpu_index];
    if (bsp)
        memset(cpus, 0, sizeof(cpus)); /* the boot CPU comes first: a new record */
    memset(pc, 0, sizeof(*pc));
    if (bsp) {
        memset(&info, 0, sizeof(info));
        info.hwp = info.cst_limit_raw = info.cst_locked = -1;
        info.requested = c->turbo;
        read_cstates();
    }
    switch (K.cpu.vendor) {
    case CPU_VENDOR_INTEL:
        intel_turbo(pc, off, bsp);
        break;
    case CPU_VENDOR_AMD:
    case CPU_VENDOR_HYGON:
        amd_turbo(pc, off, bsp);
        break;
    default:
        pc->before = pc->after = TURBO_STATE_NOT_AVAILABLE;
        if (bsp)
            add_text(info.reason, "not available (CPUID: no turbo control known for vendor \"%s\")", K.cpu.vendor_str);
        break;
    }
    if (bsp) {
        info.before = pc->before;
        info.after = pc->after;
    }
    __atomic_store_n(&pc->applied, true, __ATOMIC_RELEASE);
}

static void count_cpus(void)
{
    info.cpus_applied = info.cpus_on = info.cpus_off = info.cpus_unknown = info.cpus_failed = 0;
    for (uint32_t i = 0; i < SMP_MAX_CPUS; i++) {
        const struct turbo_cpu *pc = &cpus[i];
        if (!__atomic_load_n(&pc->applied, __ATOMIC_ACQUIRE))
            continue;
        info.cpus_applied++;
        info.cpus_on += pc->after == TURBO_STATE_ON;
        info.cpus_off += pc->after == TURBO_STATE_OFF;
        info.cpus_unknown += pc->after == TURBO_STATE_UNKNOWN;
        info.cpus_failed += info.requested == CFG_TURBO_OFF && info.available && pc->after != TURBO_STATE_OFF;
    }
}

static void kv_text(struct json *j, const char *k, const char *s)
{
    if (s && s[0])
        json_kv_str(j, k, s);
    else
        json_kv_null(j, k);
}

void turbo_json(struct json *j)
{
    count_cpus();
    json_key(j, "turbo");
    json_obj_begin(j);
    json_kv_bool(j, "available", info.available);
    json_kv_str(j, "state", turbo_state_name(info.after));
    json_kv_str(j, "state_before", turbo_state_name(info.before));
    json_kv_str(j, "requested", info.requested == CFG_TURBO_OFF ? "off" : "leave");
    kv_text(j, "how", info.how);
    kv_text(j, "reason", info.reason);
    if (info.hwp < 0)
        json_kv_null(j, "hwp");
    else
        json_kv_bool(j, "hwp", info.hwp == 1);
    json_key(j, "cpus");
    json_obj_begin(j);
    json_kv_uint(j, "applied", info.cpus_applied);
    json_kv_uint(j, "on", info.cpus_on);
    json_kv_uint(j, "off", info.cpus_off);
    json_kv_uint(j, "unknown", info.cpus_unknown);
    json_kv_uint(j, "failed", info.cpus_failed);
    json_obj_end(j);
    json_obj_end(j);

    json_key(j, "cstates");
    json_obj_begin(j);
    json_kv_bool(j, "available", info.cst_available);
    kv_text(j, "pkg_limit", info.cst_limit);
    if (info.cst_limit_raw < 0)
        json_kv_null(j, "pkg_limit_raw");
    else
        json_kv_uint(j, "pkg_limit_raw", (uint64_t)info.cst_limit_raw);
    if (info.cst_locked < 0)
        json_kv_null(j, "locked");
    else
        json_kv_bool(j, "locked", info.cst_locked == 1);
    kv_text(j, "how", info.cst_how);
    kv_text(j, "reason", info.cst_reason);
    if (info.mwait_substates)
        json_kv_hex(j, "mwait_substates", info.mwait_substates);
    else
        json_kv_null(j, "mwait_substates");
    json_kv_str(j, "idle", "spin on PAUSE: no HLT or MWAIT while measuring");
    json_obj_end(j);
}

void turbo_line(char *buf, size_t cap)
{
    count_cpus();
    char limit[48];
    if (info.cst_limit)
        fmt_snprintf(limit, sizeof(limit), "%s", info.cst_limit);
    else if (info.cst_limit_raw >= 0)
        fmt_snprintf(limit, sizeof(limit), "raw %d", info.cst_limit_raw);
    else
        fmt_snprintf(limit, sizeof(limit), "not read");
    fmt_snprintf(buf, cap, "turbo %s (%s%s, %u/%u CPUs off), package C-state limit %s%s",
                 turbo_state_name(info.after), info.requested == CFG_TURBO_OFF ? "off requested" : "left",
                 info.cpus_failed ? ", NOT applied everywhere" : "", info.cpus_off, info.cpus_applied, limit,
                 info.cst_locked == 1 ? " (locked)" : "");
}
