/* pmu_model.c - PMU models as const rows; detection applies the matching row to raw CPUID/MSR data. */
#include "pmu/pmu_model.h"
#include "pmu/msr_pmu.h"
#include "pmu/encode.h"

/* ---- ops: counter MSR addresses per register layout ------------------------------------------ */

static uint32_t intel_ctl(unsigned i) { return MSR_IA32_PERFEVTSEL(i); }
static uint32_t intel_ctr(unsigned i) { return MSR_IA32_PMC(i); }
static uint32_t intel_fixed(unsigned i) { return MSR_IA32_FIXED_CTR(i); }
static uint32_t amd_legacy_ctl(unsigned i) { return MSR_K7_PERF_CTL(i); }
static uint32_t amd_legacy_ctr(unsigned i) { return MSR_K7_PERF_CTR(i); }
static uint32_t amd_ext_ctl(unsigned i) { return MSR_F15H_PERF_CTL(i); }
static uint32_t amd_ext_ctr(unsigned i) { return MSR_F15H_PERF_CTR(i); }
static uint32_t p4_cccr(unsigned i) { return MSR_P4_CCCR(i); }
static uint32_t p4_ctr(unsigned i) { return MSR_P4_PERFCTR(i); }

static const struct pmu_ops ops_table[] = {
    [PMU_ARCH_NONE] = {NULL, NULL, NULL, 0},
    [PMU_ARCH_INTEL] = {intel_ctl, intel_ctr, intel_fixed, 1u << 30},
    [PMU_ARCH_NETBURST] = {p4_cccr, p4_ctr, NULL, 0},
    [PMU_ARCH_AMD_LEGACY] = {amd_legacy_ctl, amd_legacy_ctr, NULL, 0},
    [PMU_ARCH_AMD_EXT] = {amd_ext_ctl, amd_ext_ctr, NULL, 0},
};

/* ---- model rows ---------------------------------------------------------------------------- */

/* Display family/model ranges a row covers; event_table overrides the row's for that range. */
struct pmu_match {
    uint8_t fam_lo, fam_hi, model_lo, model_hi;
    const char *event_table;
};

typedef void (*pmu_fill_fn)(const struct pmu_model *m, const struct pmu_detect_input *in, struct pmu_caps *c);

struct pmu_model {
    const char *name, *desc;
    enum pmu_vendor vendor;
    struct pmu_match match[4];
    uint8_t nmatch;
    uint8_t min_version, max_version; /* Intel CPUID.0AH version range (generic rows), 0/255 = any */
    enum pmu_arch arch;
    pmu_fill_fn fill;
    /* defaults used when CPUID/MSRs do not say, and model-specific facts */
    uint8_t version; /* perfmon version the model implements ([NHM] 3: Nehalem is v3) */
    uint8_t gp, gp_width, fixed, fixed_width;
    uint32_t arch_events;
    uint8_t pebs_format, lbr_format, lbr_depth;
    uint32_t lbr_from, lbr_to, lbr_tos;
    bool lbr_select;
    uint8_t offcore;
    bool load_latency;
    enum pmu_uncore_kind uncore;
    uint8_t uncore_counters, uncore_width, uncore_fixed;
    const char *event_table, *uncore_table;
    const char *uncore_note;
    const struct pmu_detect_input *sample; /* representative inputs for pmu_caps_for_model() */
};

static void intel_fill(const struct pmu_model *m, const struct pmu_detect_input *in, struct pmu_caps *c);
static void amd_fill(const struct pmu_model *m, const struct pmu_detect_input *in, struct pmu_caps *c);
static void netburst_fill(const struct pmu_model *m, const struct pmu_detect_input *in, struct pmu_caps *c);

/* Representative inputs (dry runs). Nehalem CPUID.0AH per [NHM] Table 25: v3, 4 GP x 48 bit,
 * 7 arch events, 3 fixed x 48 bit; PERF_CAPABILITIES 0x11C3 = LBR fmt 3, trap-like PEBS with GPRs,
 * PEBS record format 1, SMM_FRZ (bit 12: [NHM] Table 2 "Freeze Counters on SMI: Yes" for Nehalem,
 * Table 3 names the bit); no full-width writes (bit 13 came with Sandy Bridge). */
#define INTEL_DS_FLAGS .leaf1_ecx = CPUID_1_ECX_DTES64 | CPUID_1_ECX_PDCM, .leaf1_edx = CPUID_1_EDX_DS
static const struct pmu_detect_input s_nhm = {
    .vendor = PMU_VENDOR_INTEL, .family = 6, .model = 0x1a, .stepping = 5, .max_basic_leaf = 0xb,
    .max_ext_leaf = 0x80000008, INTEL_DS_FLAGS, .leaf0a = {0x07300403, 0, 0, 0x603},
    .perf_cap_valid = true, .perf_capabilities = 0x11c3, .misc_enable_valid = true, .misc_enable = 0x80};
static const struct pmu_detect_input s_nhm_ex = {
    .vendor = PMU_VENDOR_INTEL, .family = 6, .model = 0x2e, .stepping = 6, .max_basic_leaf = 0xb,
    .max_ext_leaf = 0x80000008, INTEL_DS_FLAGS, .leaf0a = {0x07300403, 0, 0, 0x603},
    .perf_cap_valid = true, .perf_capabilities = 0x11c3, .misc_enable_valid = true, .misc_enable = 0x80};
static const struct pmu_detect_input s_wsm = {
    .vendor = PMU_VENDOR_INTEL, .family = 6, .model = 0x2c, .stepping = 2, .max_basic_leaf = 0xb,
    .max_ext_leaf = 0x80000008, INTEL_DS_FLAGS, .leaf0a = {0x07300403, 0, 0, 0x603},
    .perf_cap_valid = true, .perf_capabilities = 0x11c3, .misc_enable_valid = true, .misc_enable = 0x80};
static const struct pmu_detect_input s_wsm_ex = {
    .vendor = PMU_VENDOR_INTEL, .family = 6, .model = 0x2f, .stepping = 2, .max_basic_leaf = 0xb,
    .max_ext_leaf = 0x80000008, INTEL_DS_FLAGS, .leaf0a = {0x07300403, 0, 0, 0x603},
    .perf_cap_valid = true, .perf_capabilities = 0x11c3, .misc_enable_valid = true, .misc_enable = 0x80};
static const struct pmu_detect_input s_arch_v1 = { /* Core Duo (Yonah) */
    .vendor = PMU_VENDOR_INTEL, .family = 6, .model = 0x0e, .max_basic_leaf = 0xa, .leaf0a = {0x07280201, 0, 0, 0}};
static const struct pmu_detect_input s_arch_v2 = { /* Core 2 (Penryn) */
    .vendor = PMU_VENDOR_INTEL, .family = 6, .model = 0x17, .max_basic_leaf = 0xd, INTEL_DS_FLAGS,
    .leaf0a = {0x07280202, 0, 0, 0x503}, .perf_cap_valid = true, .perf_capabilities = 0xc1};
static const struct pmu_detect_input s_arch_v3 = { /* Sandy Bridge */
    .vendor = PMU_VENDOR_INTEL, .family = 6, .model = 0x2a, .max_basic_leaf = 0xd, INTEL_DS_FLAGS,
    .leaf0a = {0x07300803, 0, 0, 0x603}, .perf_cap_valid = true, .perf_capabilities = 0x31c3};
static const struct pmu_detect_input s_arch_v4 = { /* Skylake */
    .vendor = PMU_VENDOR_INTEL, .family = 6, .model = 0x5e, .max_basic_leaf = 0x16, INTEL_DS_FLAGS,
    .leaf0a = {0x07300404, 0, 0, 0x603}, .perf_cap_valid = true, .perf_capabilities = 0x33c5};
static const struct pmu_detect_input s_arch_v5 = { /* Ice Lake: 4 fixed, AnyThread deprecated */
    .vendor = PMU_VENDOR_INTEL, .family = 6, .model = 0x7e, .max_basic_leaf = 0x1b, INTEL_DS_FLAGS,
    .leaf0a = {0x08300805, 0, 0xf, 0x8604}, .perf_cap_valid = true, .perf_capabilities = 0x34c5};
static const struct pmu_detect_input s_netburst = { /* Northwood */
    .vendor = PMU_VENDOR_INTEL, .family = 0xf, .model = 2, .max_basic_leaf = 2, .leaf1_edx = CPUID_1_EDX_DS};
static const struct pmu_detect_input s_netburst_p = { /* Prescott */
    .vendor = PMU_VENDOR_INTEL, .family = 0xf, .model = 4, .max_basic_leaf = 5, .leaf1_edx = CPUID_1_EDX_DS};
static const struct pmu_detect_input s_amd_k8 = {
    .vendor = PMU_VENDOR_AMD, .family = 0xf, .model = 0x41, .max_basic_leaf = 1, .max_ext_leaf = 0x80000018};
static const struct pmu_detect_input s_amd_fam10h = {
    .vendor = PMU_VENDOR_AMD, .family = 0x10, .model = 0x02, .max_basic_leaf = 5, .max_ext_leaf = 0x8000001b};
static const struct pmu_detect_input s_amd_legacy = {
    .vendor = PMU_VENDOR_AMD, .family = 0x12, .model = 0x01, .max_basic_leaf = 6, .max_ext_leaf = 0x8000001b};
static const struct pmu_detect_input s_amd_fam15h = {
    .vendor = PMU_VENDOR_AMD, .family = 0x15, .model = 0x01, .max_basic_leaf = 0xd, .max_ext_leaf = 0x8000001e,
    .amd_ext_ecx = CPUID_80000001_ECX_PERFCTR_CORE | CPUID_80000001_ECX_PERFCTR_NB};
static const struct pmu_detect_input s_amd_ext = {
    .vendor = PMU_VENDOR_AMD, .family = 0x16, .model = 0x00, .max_basic_leaf = 0xd, .max_ext_leaf = 0x8000001e,
    .amd_ext_ecx = CPUID_80000001_ECX_PERFCTR_CORE};
static const struct pmu_detect_input s_amd_fam17h = {
    .vendor = PMU_VENDOR_AMD, .family = 0x17, .model = 0x01, .max_basic_leaf = 0xd, .max_ext_leaf = 0x8000001f,
    .amd_ext_ecx = CPUID_80000001_ECX_PERFCTR_CORE | CPUID_80000001_ECX_PERFCTR_NB | CPUID_80000001_ECX_PERFCTR_LLC};
static const struct pmu_detect_input s_amd_fam19h = {
    .vendor = PMU_VENDOR_AMD, .family = 0x19, .model = 0x11, .max_basic_leaf = 0x10, .max_ext_leaf = 0x80000028,
    .amd_ext_ecx = CPUID_80000001_ECX_PERFCTR_CORE | CPUID_80000001_ECX_PERFCTR_NB | CPUID_80000001_ECX_PERFCTR_LLC,
    .amd_perfmon = {CPUID_80000022_EAX_PERFMON_V2, 6 | (16 << 10), 0, 0}};

#define NHM_LBR .lbr_format = 3, .lbr_depth = 16, .lbr_from = MSR_LASTBRANCH_0_FROM_IP, \
                .lbr_to = MSR_LASTBRANCH_0_TO_IP, .lbr_tos = MSR_LASTBRANCH_TOS, .lbr_select = true
#define NHM_COUNTERS .version = 3, .gp = 4, .gp_width = 48, .fixed = 3, .fixed_width = 48, .arch_events = 0x7f, \
                     .pebs_format = 1
#define NHM_UNCORE .uncore = PMU_UNCORE_NHM, .uncore_counters = 8, .uncore_width = 48, .uncore_fixed = 1
#define EX_UNCORE .uncore = PMU_UNCORE_NHM_EX, \
                  .uncore_note = "box-based EX uncore (MSRs 0xC00+) differs from 0x391..; not programmed"
#define GENERIC_INTEL(v, s) {"arch_v" #v, "Intel architectural perfmon v" #v " (CPUID.0AH)", PMU_VENDOR_INTEL, \
        {{6, 0xff, 0, 0xff, NULL}}, 1, v, v == 5 ? 255 : v, PMU_ARCH_INTEL, intel_fill, \
        .gp = 2, .gp_width = 40, .event_table = "arch", .sample = &s}

static const struct pmu_model models[] = {
    /* Nehalem ([NHM] Table 24): EP/Bloomfield 06_1A, Lynnfield 06_1E, Havendale 06_1F. Core PMU v3,
     * PEBS format 1 (0xB0 records), 16 LBRs, OFFCORE_RSP_0 only, load latency, 0x391 uncore. */
    {"nhm", "Intel Nehalem", PMU_VENDOR_INTEL, {{6, 6, 0x1a, 0x1a, NULL}, {6, 6, 0x1e, 0x1f, NULL}}, 2, 0, 255,
     PMU_ARCH_INTEL, intel_fill, NHM_COUNTERS, NHM_LBR, .offcore = 1, .load_latency = true, NHM_UNCORE,
     .event_table = "nhm", .uncore_table = "nhm_unc", .sample = &s_nhm},
    /* Nehalem-EX 06_2E: same core PMU, different ("significantly different", [NHM] 2) uncore. */
    {"nhm_ex", "Intel Nehalem-EX", PMU_VENDOR_INTEL, {{6, 6, 0x2e, 0x2e, NULL}}, 1, 0, 255, PMU_ARCH_INTEL,
     intel_fill, NHM_COUNTERS, NHM_LBR, .offcore = 1, .load_latency = true, EX_UNCORE, .event_table = "nhm",
     .sample = &s_nhm_ex},
    /* Westmere 06_25 (client) / 06_2C (EP): adds OFFCORE_RSP_1 (0x1A7). */
    {"wsm", "Intel Westmere", PMU_VENDOR_INTEL, {{6, 6, 0x2c, 0x2c, "wsm_dp"}, {6, 6, 0x25, 0x25, "wsm"}}, 2, 0,
     255, PMU_ARCH_INTEL, intel_fill, NHM_COUNTERS, NHM_LBR, .offcore = 2, .load_latency = true, NHM_UNCORE,
     .event_table = "wsm_dp", .uncore_table = "wsm_unc", .sample = &s_wsm},
    {"wsm_ex", "Intel Westmere-EX", PMU_VENDOR_INTEL, {{6, 6, 0x2f, 0x2f, NULL}}, 1, 0, 255, PMU_ARCH_INTEL,
     intel_fill, NHM_COUNTERS, NHM_LBR, .offcore = 2, .load_latency = true, EX_UNCORE, .event_table = "wsm_dp",
     .sample = &s_wsm_ex},
    /* NetBurst: 18 x 40-bit counters, ESCR/CCCR ([P4]). Models 0-2: 4 LBRs as single MSRs at 0x1DB;
     * models 3+: 16 FROM/TO pairs at 0x680/0x6C0, TOS at 0x1DA. */
    {"netburst", "Intel NetBurst (Pentium 4, models 0-2)", PMU_VENDOR_INTEL, {{0xf, 0xf, 0, 2, NULL}}, 1, 0, 255,
     PMU_ARCH_NETBURST, netburst_fill, .gp = 18, .gp_width = 40, .lbr_format = 0, .lbr_depth = 4,
     .lbr_from = MSR_P4_LASTBRANCH_0, .lbr_to = 0, .lbr_tos = MSR_P4_LASTBRANCH_TOS, .event_table = "netburst",
     .sample = &s_netburst},
    {"netburst_p", "Intel NetBurst (Prescott and later, models 3+)", PMU_VENDOR_INTEL, {{0xf, 0xf, 3, 0xff, NULL}},
     1, 0, 255, PMU_ARCH_NETBURST, netburst_fill, .gp = 18, .gp_width = 40, .lbr_format = 1, .lbr_depth = 16,
     .lbr_from = MSR_LASTBRANCH_0_FROM_IP, .lbr_to = MSR_LASTBRANCH_0_TO_IP, .lbr_tos = MSR_P4_LASTBRANCH_TOS,
     .event_table = "netburst_p", .sample = &s_netburst_p},
    /* Any other Intel CPU: whatever CPUID.0AH enumerates, architectural events only. */
    GENERIC_INTEL(1, s_arch_v1),
    GENERIC_INTEL(2, s_arch_v2),
    GENERIC_INTEL(3, s_arch_v3),
    GENERIC_INTEL(4, s_arch_v4),
    GENERIC_INTEL(5, s_arch_v5),
    /* AMD ([AMD] BKDGs/PPRs): 48-bit counters throughout. */
    {"amd_k8", "AMD K8 (family 0Fh)", PMU_VENDOR_AMD, {{0xf, 0xf, 0, 0xff, NULL}}, 1, 0, 255, PMU_ARCH_AMD_LEGACY,
     amd_fill, .gp = 4, .gp_width = 48, .event_table = "amd_k8", .sample = &s_amd_k8},
    {"amd_fam10h", "AMD family 10h (K10)", PMU_VENDOR_AMD, {{0x10, 0x10, 0, 0xff, NULL}}, 1, 0, 255,
     PMU_ARCH_AMD_LEGACY, amd_fill, .gp = 4, .gp_width = 48, .event_table = "amd_fam10h",
     .uncore_note = "northbridge events (E0H-FFH, 4E0H+) count on the core counters, once per node",
     .sample = &s_amd_fam10h},
    {"amd_legacy", "AMD families 11h/12h/14h", PMU_VENDOR_AMD, {{0x11, 0x12, 0, 0xff, NULL}, {0x14, 0x14, 0, 0xff, NULL}},
     2, 0, 255, PMU_ARCH_AMD_LEGACY, amd_fill, .gp = 4, .gp_width = 48, .sample = &s_amd_legacy},
    {"amd_fam15h", "AMD family 15h (Bulldozer)", PMU_VENDOR_AMD, {{0x15, 0x15, 0, 0xff, NULL}}, 1, 0, 255,
     PMU_ARCH_AMD_EXT, amd_fill, .gp = 6, .gp_width = 48, .event_table = "amd_fam15h",
     .uncore_table = "amd_fam15h_nb", .sample = &s_amd_fam15h},
    {"amd_fam17h", "AMD family 17h (Zen 1/2)", PMU_VENDOR_AMD,
     {{0x17, 0x17, 0x00, 0x2f, "amd_fam17h_zen1"}, {0x17, 0x17, 0x30, 0xff, "amd_fam17h_zen2"}}, 2, 0, 255,
     PMU_ARCH_AMD_EXT, amd_fill, .gp = 6, .gp_width = 48, .event_table = "amd_fam17h_zen1", .sample = &s_amd_fam17h},
    {"amd_fam19h", "AMD family 19h (Zen 3/4)", PMU_VENDOR_AMD,
     {{0x19, 0x19, 0x10, 0x1f, "amd_fam19h_zen4"}, {0x19, 0x19, 0x60, 0xaf, "amd_fam19h_zen4"},
      {0x19, 0x19, 0x00, 0xff, "amd_fam19h_zen3"}},
     3, 0, 255, PMU_ARCH_AMD_EXT, amd_fill, .gp = 6, .gp_width = 48, .event_table = "amd_fam19h_zen3",
     .sample = &s_amd_fam19h},
    {"amd_ext", "AMD family 16h/18h (Hygon)/1Ah+ (extended counters, raw events only)", PMU_VENDOR_AMD,
     {{0x16, 0x16, 0, 0xff, NULL}, {0x18, 0x18, 0, 0xff, NULL}, {0x1a, 0xff, 0, 0xff, NULL}}, 3, 0, 255, PMU_ARCH_AMD_EXT, amd_fill, .gp = 6,
     .gp_width = 48, .sample = &s_amd_ext},
};

const char *pmu_model_name(unsigned idx)
{
    return idx < ARRAY_SIZE(models) ? models[idx].name : NULL;
}

/* ---- helpers ------------------------------------------------------------------------------- */

static void set_status(struct pmu_caps *c, enum pmu_status s, const char *reason)
{
    if (s > c->status)
        c->status = s;
    if (!c->reason && reason)
        c->reason = reason;
}

uint16_t pmu_pebs_record_size(unsigned format)
{
    /* SDM 18.x PEBS record layouts: Core 2 (18 GPR-sized fields), Nehalem adds global status, data
     * address, data source, latency; Haswell adds eventing IP and TSX info; Skylake adds TSC. */
    static const uint16_t sizes[] = {0x90, 0xb0, 0xc0, 0xc8};
    return format < ARRAY_SIZE(sizes) ? sizes[format] : 0;
}

static unsigned highest_bit(uint32_t v)
{
    unsigned n = 0;
    while (v) {
        n++;
        v >>= 1;
    }
    return n;
}

static uint32_t low_mask(unsigned n)
{
    return n >= 32 ? 0xffffffffu : ((1u << n) - 1);
}

/* ---- Intel --------------------------------------------------------------------------------- */

static void intel_pebs(const struct pmu_model *m, const struct pmu_detect_input *in, struct pmu_caps *c)
{
    c->ds = (in->leaf1_edx & CPUID_1_EDX_DS) != 0;
    c->dtes64 = (in->leaf1_ecx & CPUID_1_ECX_DTES64) != 0;
    c->pdcm = (in->leaf1_ecx & CPUID_1_ECX_PDCM) != 0;

    bool caps_ok = c->pdcm && in->perf_cap_valid;
    uint64_t pc = caps_ok ? in->perf_capabilities : 0;
    c->perf_cap_known = caps_ok;
    if (caps_ok) {
        c->smm_freeze = (pc & IA32_PERF_CAP_FREEZE_WHILE_SMM) != 0;
        c->lbr_format = (uint8_t)((pc & IA32_PERF_CAP_LBR_FMT_MASK) >> IA32_PERF_CAP_LBR_FMT_SHIFT);
        c->pebs_format = (uint8_t)((pc & IA32_PERF_CAP_PEBS_REC_FMT_MASK) >> IA32_PERF_CAP_PEBS_REC_FMT_SHIFT);
        c->pebs_trap = (pc & IA32_PERF_CAP_PEBS_TRAP) != 0;
        c->pebs_arch_regs = (pc & IA32_PERF_CAP_PEBS_ARCH_REG) != 0;
        c->full_width_write = (pc & IA32_PERF_CAP_FW_WRITE) != 0;
    } else {
        c->lbr_format = m->lbr_format;
        c->pebs_format = m->pebs_format;
        c->pebs_arch_regs = true;
    }

    if (!c->ds)
        return; /* no debug store: no PEBS */
    if (in->misc_enable_valid && (in->misc_enable & IA32_MISC_ENABLE_PEBS_UNAVAILABLE))
        return;
    if (!c->dtes64) {
        set_status(c, PMU_STATUS_PARTIAL, "PEBS off: only the 32-bit DS layout is enumerated (no DTES64)");
        return;
    }
    if (!caps_ok && m->min_version) {
        /* generic row without PERF_CAPABILITIES: the record format is unknown */
        set_status(c, PMU_STATUS_PARTIAL, "PEBS off: IA32_PERF_CAPABILITIES not read, record format unknown");
        return;
    }
    c->pebs_record_size = pmu_pebs_record_size(c->pebs_format);
    if (!c->pebs_record_size) {
        set_status(c, PMU_STATUS_PARTIAL, "PEBS off: record format >= 4 (adaptive PEBS) is not decoded");
        return;
    }
    if (!caps_ok)
        set_status(c, PMU_STATUS_PARTIAL, "IA32_PERF_CAPABILITIES not read: PEBS/LBR formats assumed from the model");
    c->pebs = true;
}

static void intel_fill(const struct pmu_model *m, const struct pmu_detect_input *in, struct pmu_caps *c)
{
    uint32_t eax = 0, ebx = 0, ecx = 0, edx = 0;

    /* Intel answers out-of-range leaves with the highest basic leaf's data: check first. */
    if (in->max_basic_leaf >= CPUID_LEAF_ARCH_PERFMON) {
        eax = in->leaf0a[0];
        ebx = in->leaf0a[1];
        ecx = in->leaf0a[2];
        edx = in->leaf0a[3];
    }
    unsigned version = CPUID_0A_EAX_VERSION(eax);
    if (version == 0) {
        if (m->min_version) {
            set_status(c, PMU_STATUS_UNSUPPORTED, "no architectural perfmon (CPUID.0AH absent or version 0)");
            return;
        }
        /* A model row knows its layout; a VM or "limit CPUID maxval" may hide leaf 0AH. */
        set_status(c, PMU_STATUS_PARTIAL, "CPUID.0AH unavailable: counter layout taken from the model table");
        c->version = m->version;
        c->arch_events = m->arch_events;
        c->arch_events_len = (uint8_t)highest_bit(m->arch_events);
        c->global_ctrl = m->version >= 2;
        c->any_thread = m->version >= 3;
        c->gp_counters = m->gp;
        c->gp_width = m->gp_width;
        c->fixed_counters = m->fixed;
        c->fixed_width = m->fixed_width;
    } else {
        unsigned gp = CPUID_0A_EAX_NUM_GP(eax), width = CPUID_0A_EAX_GP_WIDTH(eax);
        unsigned len = CPUID_0A_EAX_EBX_LEN(eax);
        c->version = (uint8_t)version;
        if (gp > 8) {
            /* IA32_PERFEVTSEL0-7 (0x186-0x18D) is all the architecture defines. */
            set_status(c, PMU_STATUS_PARTIAL, "CPUID.0AH reports more than 8 GP counters: clamped to 8");
            gp = 8;
        }
        if (width > 64 || (gp && width < 8)) {
            set_status(c, PMU_STATUS_PARTIAL, "CPUID.0AH counter width implausible: using 40 bits");
            width = 40;
        }
        c->gp_counters = (uint8_t)gp;
        c->gp_width = (uint8_t)width;
        c->arch_events = ~ebx & low_mask(MIN(len, 32u));
        c->arch_events_len = (uint8_t)len;
        if (version >= 2) {
            unsigned nfixed = CPUID_0A_EDX_NUM_FIXED(edx), fw = CPUID_0A_EDX_FIXED_WIDTH(edx);
            uint32_t fmask = low_mask(nfixed);
            if (version >= 5)
                fmask |= ecx; /* SDM: fixed counter i exists if ECX[i] || EDX[4:0] > i */
            if (fmask & ~0xffu) {
                set_status(c, PMU_STATUS_PARTIAL, "CPUID.0AH reports more than 8 fixed counters: clamped");
                fmask &= 0xff;
            }
            if (fw > 64 || (fmask && fw < 8)) {
                set_status(c, PMU_STATUS_PARTIAL, "CPUID.0AH fixed counter width implausible: using 40 bits");
                fw = 40;
            }
            c->fixed_mask = fmask;
            c->fixed_counters = (uint8_t)highest_bit(fmask);
            c->fixed_width = (uint8_t)fw;
            c->global_ctrl = true;
        }
        c->any_thread = version >= 3 && !(version >= 5 && (edx & CPUID_0A_EDX_ANYTHREAD_DEPRECATED));
        if (!m->min_version && (gp != m->gp || c->fixed_counters != m->fixed))
            set_status(c, PMU_STATUS_PARTIAL, "CPUID.0AH counter counts differ from the model table (VM?)");
    }
    if (c->fixed_counters && !c->fixed_mask)
        c->fixed_mask = low_mask(c->fixed_counters);
    if (c->gp_counters == 0)
        set_status(c, PMU_STATUS_UNSUPPORTED, "no general-purpose counters enumerated");
    intel_pebs(m, in, c);
    c->load_latency = m->load_latency && c->pebs && c->pebs_format >= 1;
    if (in->misc_enable_valid && !(in->misc_enable & IA32_MISC_ENABLE_PERF_MON_AVAILABLE))
        set_status(c, PMU_STATUS_UNSUPPORTED, "IA32_MISC_ENABLE[7]: performance monitoring not available");
}

/* ---- NetBurst ------------------------------------------------------------------------------ */

static void netburst_fill(const struct pmu_model *m, const struct pmu_detect_input *in, struct pmu_caps *c)
{
    c->gp_counters = m->gp;
    c->gp_width = m->gp_width;
    c->ds = (in->leaf1_edx & CPUID_1_EDX_DS) != 0;
    c->dtes64 = (in->leaf1_ecx & CPUID_1_ECX_DTES64) != 0;
    c->lbr_format = m->lbr_format;
    /* NetBurst PEBS works through replay tagging (IA32_PEBS_ENABLE/MSR_PEBS_MATRIX_VERT), which this
     * layer does not program; the counters themselves are fine. */
    c->pebs = false;
    if (in->misc_enable_valid && !(in->misc_enable & IA32_MISC_ENABLE_PERF_MON_AVAILABLE))
        set_status(c, PMU_STATUS_UNSUPPORTED, "IA32_MISC_ENABLE[7]: performance monitoring not available");
}

/* ---- AMD ----------------------------------------------------------------------------------- */

static void amd_fill(const struct pmu_model *m, const struct pmu_detect_input *in, struct pmu_caps *c)
{
    bool ext = (in->amd_ext_ecx & CPUID_80000001_ECX_PERFCTR_CORE) != 0;

    c->gp_width = 48;
    c->gp_counters = m->gp;
    if (m->arch == PMU_ARCH_AMD_EXT && !ext) {
        /* The extended MSRs are only there when CPUID says so; the legacy four always are. */
        c->arch = PMU_ARCH_AMD_LEGACY;
        c->gp_counters = 4;
        set_status(c, PMU_STATUS_PARTIAL, "CPUID 8000_0001h:ECX[23] clear: using the 4 legacy counters");
    } else if (m->arch == PMU_ARCH_AMD_LEGACY && ext) {
        c->arch = PMU_ARCH_AMD_EXT;
        c->gp_counters = 6;
    }
    if (in->max_ext_leaf >= CPUID_LEAF_AMD_PERFMON && (in->amd_perfmon[0] & CPUID_80000022_EAX_PERFMON_V2)) {
        unsigned n = CPUID_80000022_EBX_NUM_CORE(in->amd_perfmon[1]);
        c->perfmon_v2 = true;
        c->version = 2;
        c->global_ctrl = true;
        if (n > 6) {
            set_status(c, PMU_STATUS_PARTIAL, "CPUID 8000_0022h reports more than 6 core counters: clamped to 6");
            n = 6;
        }
        if (n)
            c->gp_counters = (uint8_t)n;
    }
    if ((in->amd_ext_ecx & CPUID_80000001_ECX_PERFCTR_NB) && m->uncore_table) {
        c->uncore = PMU_UNCORE_AMD_NB;
        c->nb_counters = 4;
        c->uncore_counters = 4;
        c->uncore_width = 48;
    }
}

/* ---- detection ----------------------------------------------------------------------------- */

static const struct pmu_match *row_matches(const struct pmu_model *m, const struct pmu_detect_input *in,
                                           unsigned version)
{
    if (m->vendor != in->vendor)
        return NULL;
    if (m->min_version && (version < m->min_version || version > m->max_version))
        return NULL;
    for (unsigned i = 0; i < m->nmatch; i++) {
        const struct pmu_match *x = &m->match[i];
        if (in->family >= x->fam_lo && in->family <= x->fam_hi && in->model >= x->model_lo &&
            in->model <= x->model_hi)
            return x;
    }
    return NULL;
}

enum pmu_status pmu_detect(const struct pmu_detect_input *in, struct pmu_caps *c)
{
    unsigned version = 0;

    memset(c, 0, sizeof(*c));
    c->status = PMU_STATUS_OK;
    if (!in) {
        set_status(c, PMU_STATUS_UNSUPPORTED, "no input");
        return c->status;
    }
    c->vendor = in->vendor;
    c->cpu_family = (uint8_t)in->family;
    c->cpu_model = (uint8_t)in->model;
    c->errata = pmu_errata_for(in->vendor, in->family, in->model, &c->erratum_reset);
    if (in->vendor == PMU_VENDOR_INTEL && in->max_basic_leaf >= CPUID_LEAF_ARCH_PERFMON)
        version = CPUID_0A_EAX_VERSION(in->leaf0a[0]);

    for (unsigned i = 0; i < ARRAY_SIZE(models); i++) {
        const struct pmu_model *m = &models[i];
        const struct pmu_match *x = row_matches(m, in, version);
        if (!x)
            continue;
        c->row = m;
        c->model = m->name;
        c->desc = m->desc;
        c->arch = m->arch;
        c->event_table = x->event_table ? x->event_table : m->event_table;
        c->uncore_table = m->uncore_table;
        c->uncore = m->uncore;
        c->uncore_counters = m->uncore_counters;
        c->uncore_width = m->uncore_width;
        c->uncore_fixed = m->uncore_fixed;
        c->uncore_note = m->uncore_note;
        c->offcore_msrs = m->offcore;
        c->lbr_format = m->lbr_format;
        c->lbr_depth = m->lbr_depth;
        c->lbr_from = m->lbr_from;
        c->lbr_to = m->lbr_to;
        c->lbr_tos = m->lbr_tos;
        c->lbr_select = m->lbr_select;
        m->fill(m, in, c);
        if (c->status == PMU_STATUS_UNSUPPORTED) {
            c->pebs = false;
            c->load_latency = false;
            c->offcore_msrs = 0;
            c->lbr_depth = 0;
        }
        return c->status;
    }
    c->model = "none";
    c->desc = "no matching PMU model";
    set_status(c, PMU_STATUS_UNSUPPORTED,
               in->vendor == PMU_VENDOR_UNKNOWN ? "unknown CPU vendor"
                                                : "no architectural perfmon and no model-specific row");
    return c->status;
}

void pmu_detect_input_from_cpuid(cpuid_fn fn, void *ctx, struct pmu_detect_input *in)
{
    uint32_t r[4];

    memset(in, 0, sizeof(*in));
    if (!fn)
        return;
    fn(0, 0, r, ctx);
    in->max_basic_leaf = r[0];
    /* vendor string is EBX, EDX, ECX */
    if (r[1] == 0x756e6547 && r[3] == 0x49656e69 && r[2] == 0x6c65746e)
        in->vendor = PMU_VENDOR_INTEL; /* "GenuineIntel" */
    else if (r[1] == 0x68747541 && r[3] == 0x69746e65 && r[2] == 0x444d4163)
        in->vendor = PMU_VENDOR_AMD; /* "AuthenticAMD" */
    else if (r[1] == 0x6f677948 && r[3] == 0x6e65476e && r[2] == 0x656e6975)
        in->vendor = PMU_VENDOR_AMD; /* "HygonGenuine": AMD Zen PMU */
    if (in->max_basic_leaf >= 1) {
        fn(1, 0, r, ctx);
        uint32_t base_fam = (r[0] >> 8) & 0xf, base_model = (r[0] >> 4) & 0xf;
        in->family = base_fam == 0xf ? base_fam + ((r[0] >> 20) & 0xff) : base_fam;
        in->model = (base_fam == 0x6 || base_fam == 0xf) ? (((r[0] >> 16) & 0xf) << 4) | base_model : base_model;
        in->stepping = r[0] & 0xf;
        in->leaf1_ecx = r[2];
        in->leaf1_edx = r[3];
    }
    if (in->max_basic_leaf >= CPUID_LEAF_ARCH_PERFMON)
        fn(CPUID_LEAF_ARCH_PERFMON, 0, in->leaf0a, ctx);
    fn(0x80000000u, 0, r, ctx);
    in->max_ext_leaf = (r[0] & 0xffff0000u) == 0x80000000u ? r[0] : 0;
    if (in->max_ext_leaf >= 0x80000001u) {
        fn(0x80000001u, 0, r, ctx);
        in->amd_ext_ecx = in->vendor == PMU_VENDOR_AMD ? r[2] : 0;
    }
    if (in->vendor == PMU_VENDOR_AMD && in->max_ext_leaf >= CPUID_LEAF_AMD_PERFMON)
        fn(CPUID_LEAF_AMD_PERFMON, 0, in->amd_perfmon, ctx);
}

int pmu_caps_for_model(const char *name, struct pmu_caps *caps)
{
    if (!name)
        return -1;
    for (unsigned i = 0; i < ARRAY_SIZE(models); i++) {
        if (strcmp(models[i].name, name) == 0) {
            pmu_detect(models[i].sample, caps);
            return caps->row == &models[i] ? 0 : -1;
        }
    }
    memset(caps, 0, sizeof(*caps));
    return -1;
}

/* ---- errata --------------------------------------------------------------------------------
 * One row per CPU that needs a workaround (docs/pmu.md "Errata"). PMU_ERRATUM_NHM_RESET follows
 * Linux: intel_pmu_init() installs intel_pmu_nhm_enable_all (which runs intel_pmu_nhm_workaround) for
 * INTEL_NEHALEM (06_1E), _EP (06_1A), _EX (06_2E) and INTEL_WESTMERE (06_25), _EP (06_2C), _EX (06_2F).
 * 06_1F (Nehalem "G") has no case there and gets the generic architectural PMU, so no reset here
 * either. The erratum numbers are the spec updates' as Linux's comment cites them; the other three
 * models get the reset because Linux gives it to them, without an erratum number of their own. */

static const struct {
    uint8_t family, model;
    uint32_t errata;
    const char *id;
} errata_rows[] = {
    {6, 0x1a, PMU_ERRATUM_NHM_RESET, "AAK100"}, /* Core i7-900 / Xeon 5500 (Nehalem-EP) */
    {6, 0x1e, PMU_ERRATUM_NHM_RESET, "AAP53"},  /* Core i7-800 / i5-700 (Lynnfield) */
    {6, 0x2c, PMU_ERRATUM_NHM_RESET, "BD53"},   /* Xeon 5600 (Westmere-EP) */
    {6, 0x2e, PMU_ERRATUM_NHM_RESET, "Linux intel_pmu_nhm_workaround (Nehalem-EX)"},
    {6, 0x25, PMU_ERRATUM_NHM_RESET, "Linux intel_pmu_nhm_workaround (Westmere)"},
    {6, 0x2f, PMU_ERRATUM_NHM_RESET, "Linux intel_pmu_nhm_workaround (Westmere-EX)"},
};

uint32_t pmu_errata_for(enum pmu_vendor v, unsigned family, unsigned model, const char **id)
{
    if (id)
        *id = NULL;
    if (v != PMU_VENDOR_INTEL)
        return 0;
    for (unsigned i = 0; i < ARRAY_SIZE(errata_rows); i++) {
        if (errata_rows[i].family == family && errata_rows[i].model == model) {
            if (id)
                *id = errata_rows[i].id;
            return errata_rows[i].errata;
        }
    }
    return 0;
}

bool pmu_smm_freeze_supported(const struct pmu_caps *c, const char **why)
{
    const char *w = NULL;
    if (!c || c->vendor != PMU_VENDOR_INTEL)
        w = c && c->vendor == PMU_VENDOR_AMD ? "not supported (no IA32_PERF_CAPABILITIES on AMD)"
                                             : "not supported (no IA32_PERF_CAPABILITIES)";
    else if (c->arch != PMU_ARCH_INTEL)
        w = "not supported (no IA32_PERF_CAPABILITIES on NetBurst)";
    else if (!c->perf_cap_known)
        w = "not supported (IA32_PERF_CAPABILITIES not read)";
    else if (!c->smm_freeze)
        w = "not supported (PERF_CAPABILITIES[12] clear)";
    if (why)
        *why = w;
    return w == NULL;
}

uint32_t pmu_gp_ctr_rw_msr(const struct pmu_caps *c, unsigned idx)
{
    if (!c || c->arch != PMU_ARCH_INTEL || idx >= c->gp_counters)
        return pmu_gp_ctr_msr(c, idx);
    return c->full_width_write ? MSR_IA32_A_PMC(idx) : MSR_IA32_PMC(idx);
}

/* Append s to buf[*o..len), always terminated. */
static void cat(char *buf, size_t len, size_t *o, const char *s)
{
    while (*s && *o + 1 < len)
        buf[(*o)++] = *s++;
    if (len)
        buf[*o < len ? *o : len - 1] = 0;
}

static void cat_uint(char *buf, size_t len, size_t *o, unsigned v)
{
    char t[12];
    unsigned n = 0;
    do {
        t[n++] = (char)('0' + v % 10);
        v /= 10;
    } while (v && n < sizeof(t) - 1);
    char r[12];
    for (unsigned i = 0; i < n; i++)
        r[i] = t[n - 1 - i];
    r[n] = 0;
    cat(buf, len, o, r);
}

int pmu_arch_event_refused(const struct pmu_caps *c, const char *name, unsigned bit, char *why, size_t len)
{
    size_t o = 0;
    if (!c || c->arch != PMU_ARCH_INTEL || c->vendor != PMU_VENDOR_INTEL || bit >= 32)
        return 0;
    if (c->arch_events & (1u << bit))
        return 0;
    if (!why || !len)
        return -1;
    why[0] = 0;
    cat(why, len, &o, name ? name : "event");
    cat(why, len, &o, ": architectural event ");
    cat_uint(why, len, &o, bit);
    if (pmu_arch_event_name(bit)) {
        cat(why, len, &o, " (");
        cat(why, len, &o, pmu_arch_event_name(bit));
        cat(why, len, &o, ")");
    }
    if (bit < c->arch_events_len) {
        cat(why, len, &o, " marked unavailable by CPUID.0AH:EBX[");
        cat_uint(why, len, &o, bit);
        cat(why, len, &o, "]");
    } else {
        cat(why, len, &o, " not enumerated: CPUID.0AH:EAX[31:24] = ");
        cat_uint(why, len, &o, c->arch_events_len);
        cat(why, len, &o, " EBX bits");
    }
    return -1;
}

/* ---- accessors and names ------------------------------------------------------------------- */

const struct pmu_ops *pmu_caps_ops(const struct pmu_caps *caps)
{
    unsigned a = caps ? (unsigned)caps->arch : 0;
    return &ops_table[a < ARRAY_SIZE(ops_table) ? a : 0];
}

uint32_t pmu_gp_ctl_msr(const struct pmu_caps *caps, unsigned idx)
{
    const struct pmu_ops *o = pmu_caps_ops(caps);
    return (o->gp_ctl_msr && idx < caps->gp_counters) ? o->gp_ctl_msr(idx) : 0;
}

uint32_t pmu_gp_ctr_msr(const struct pmu_caps *caps, unsigned idx)
{
    const struct pmu_ops *o = pmu_caps_ops(caps);
    return (o->gp_ctr_msr && idx < caps->gp_counters) ? o->gp_ctr_msr(idx) : 0;
}

uint32_t pmu_fixed_ctr_msr(const struct pmu_caps *caps, unsigned idx)
{
    const struct pmu_ops *o = pmu_caps_ops(caps);
    return (o->fixed_ctr_msr && idx < 32 && (caps->fixed_mask & (1u << idx))) ? o->fixed_ctr_msr(idx) : 0;
}

const char *pmu_vendor_name(enum pmu_vendor v)
{
    static const char *const n[] = {"unknown", "intel", "amd"};
    return (unsigned)v < ARRAY_SIZE(n) ? n[v] : "unknown";
}

const char *pmu_arch_name(enum pmu_arch a)
{
    static const char *const n[] = {"none", "intel", "netburst", "amd_legacy", "amd_ext"};
    return (unsigned)a < ARRAY_SIZE(n) ? n[a] : "none";
}

const char *pmu_uncore_name(enum pmu_uncore_kind u)
{
    static const char *const n[] = {"none", "nhm", "nhm_ex", "amd_nb"};
    return (unsigned)u < ARRAY_SIZE(n) ? n[u] : "none";
}

const char *pmu_status_name(enum pmu_status s)
{
    static const char *const n[] = {"ok", "partial", "unsupported"};
    return (unsigned)s < ARRAY_SIZE(n) ? n[s] : "unsupported";
}

const char *pmu_offcore_local_dram_event(const char *table, unsigned family, unsigned model)
{
    if (!table)
        return NULL;
    if (family == 6 && model == 0x2f && !strcmp(table, "wsm_dp"))
        return "OFFCORE_RESPONSE_0:rsp=0x4001"; /* DMND_DATA_RD | LOCAL_DRAM (bit 14) on Westmere-EX */
    if (!strcmp(table, "wsm_dp"))
        return "OFFCORE_RESPONSE_0:DMND_DATA_RD:LOCAL_DRAM_AND_REMOTE_CACHE_HIT";
    if (!strcmp(table, "nhm") || !strcmp(table, "wsm"))
        return "OFFCORE_RESPONSE_0:DMND_DATA_RD:LOCAL_DRAM";
    return NULL;
}
