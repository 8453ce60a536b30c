/* pmu.c - PMU detection into one capability struct, the feature gates, PMU records and measurement windows. */
#include "pmu/pmu.h"
#include "kernel/msr.h"
#include "pmu/msr_pmu.h"
#include "build/gen/pmu_events.h"
#include "kernel/fmt.h"
#include "kernel/io.h"
#include "kernel/kernel.h"
#include "kernel/out.h"
#include "kernel/smp.h"

struct pmu_state PMU;

static char reason_buf[192];

/* ---- records and measurement windows -------------------------------------------------------
 * The msr_trace queue and its records belong to kernel/msr.c; the PMU brackets its measurement
 * windows (msr_trace_quiet: nothing is written out inside measured code) and flushes the queue
 * around its own records, so the stream's order is the order in which things happened. */

static bool in_window;
static uint32_t window_id;

/* SMP index of the calling CPU: kernel/smp.c reads it from this CPU's descriptor tables (SGDT), with
 * no CPUID (serializing, and a VM exit under a hypervisor) and no traced MSR access. */
uint32_t pmu_cpu_index(void) { return smp_current_index(); }

struct json *pmu_rec_begin(const char *type)
{
    msr_trace_flush();
    return rec_begin(type);
}

void pmu_rec_end(void)
{
    rec_end();
    if (!in_window)
        msr_trace_flush();
}

uint32_t pmu_window_next_id(void) { return ++window_id; }

void pmu_window_open(uint32_t id)
{
    (void)id;
    msr_trace_flush();
    in_window = true;
    msr_trace_quiet(true);
}

void pmu_window_close(uint32_t id)
{
    in_window = false;
    msr_trace_quiet(false);
    msr_trace_flush();
    struct json *j = rec_begin("pmu_measure_end");
    json_kv_uint(j, "id", id);
    rec_end();
}

void pmu_json_msr(struct json *j, const char *key, uint32_t msr)
{
    if (msr)
        json_kv_hex(j, key, msr);
    else
        json_kv_null(j, key);
}

/* ---- detection ------------------------------------------------------------------------------ */

static const char *vendor_string(enum pmu_vendor v)
{
    return v == PMU_VENDOR_INTEL ? "GenuineIntel" : v == PMU_VENDOR_AMD ? "AuthenticAMD" : "unknown";
}

static void set_tables(void)
{
    PMU.ntables = 0;
    const struct pmu_event_table *t = PMU.caps.event_table ? pmu_event_table_find(PMU.caps.event_table) : NULL;
    const struct pmu_event_table *u = PMU.caps.uncore_table ? pmu_event_table_find(PMU.caps.uncore_table) : NULL;
    if (t)
        PMU.tables[PMU.ntables++] = t;
    if (u && PMU.caps.uncore != PMU_UNCORE_NONE && PMU.caps.uncore != PMU_UNCORE_NHM_EX)
        PMU.tables[PMU.ntables++] = u;
}

static void set_features(void)
{
    const struct pmu_caps *c = &PMU.caps;
    bool p = PMU.present;
    PMU.has[PMU_FEAT_COUNTING] = p && c->gp_counters > 0;
    PMU.has[PMU_FEAT_OVERFLOW] = p && c->gp_counters > 0;
    /* The PEBS flow here is load latency ([NHM] 3.7), which needs record format >= 1. */
    PMU.has[PMU_FEAT_PEBS] = p && c->pebs && c->load_latency && c->pebs_format >= 1 && c->pebs_record_size;
    PMU.has[PMU_FEAT_LBR] = p && c->lbr_depth > 0 && c->lbr_from;
    PMU.has[PMU_FEAT_UNCORE] = p && (c->uncore == PMU_UNCORE_NHM || c->uncore == PMU_UNCORE_AMD_NB);
    PMU.has[PMU_FEAT_OFFCORE] = p && c->offcore_msrs > 0;

    /* Every core counter the capabilities report starts usable; the self-test clears the ones it judges wrong. */
    uint64_t present = 0;
    enum pmu_usable_naming names = PMU_USABLE_NAMES_INTEL;
    if (p && c->arch == PMU_ARCH_INTEL) {
        present = (c->gp_counters >= 32 ? PMU_USABLE_GP_MASK : (1ULL << c->gp_counters) - 1) |
                  ((uint64_t)c->fixed_mask << PMU_USABLE_FIXED_SHIFT);
    } else if (p && c->vendor == PMU_VENDOR_AMD) {
        present = c->gp_counters >= 32 ? PMU_USABLE_GP_MASK : (1ULL << c->gp_counters) - 1;
        names = PMU_USABLE_NAMES_AMD;
    } else if (p && c->arch == PMU_ARCH_NETBURST) {
        present = (1ULL << MIN(c->gp_counters, P4_NUM_COUNTERS)) - 1;
        names = PMU_USABLE_NAMES_P4;
    }
    pmu_usable_init(&PMU.ctrs, present, names);
}

static void detect_hardware(void)
{
    struct pmu_detect_input in;
    uint64_t v;

    pmu_detect_input_from_cpuid(kernel_cpuid, NULL, &in);
    if (in.vendor == PMU_VENDOR_INTEL) {
        /* [NHM] 4.3: check IA32_MISC_ENABLE[7] (perfmon available) and [12] (PEBS unavailable). */
        if (rdmsr_safe(MSR_IA32_MISC_ENABLE, &v) == MSR_OK) {
            in.misc_enable_valid = true;
            in.misc_enable = v;
            PMU.misc_enable_read = true;
            PMU.misc_enable = v;
        }
        /* IA32_PERF_CAPABILITIES exists only when CPUID.1:ECX.PDCM is set. */
        if ((in.leaf1_ecx & CPUID_1_ECX_PDCM) && rdmsr_safe(MSR_IA32_PERF_CAPABILITIES, &v) == MSR_OK) {
            in.perf_cap_valid = true;
            in.perf_capabilities = v;
            PMU.perf_cap_read = true;
            PMU.perf_capabilities = v;
        }
    }
    pmu_detect(&in, &PMU.caps);
    PMU.detect_ran = true;

    if (in.vendor == PMU_VENDOR_INTEL && K.cpu.feat.hypervisor &&
        (in.max_basic_leaf < CPUID_LEAF_ARCH_PERFMON || CPUID_0A_EAX_VERSION(in.leaf0a[0]) == 0)) {
        /* A model row would otherwise fill in counters the hypervisor does not virtualize. */
        PMU.status = "unavailable";
        PMU.reason = "hypervisor exposes no architectural perfmon (CPUID.0AH absent or version 0)";
        return;
    }
    switch (PMU.caps.status) {
    case PMU_STATUS_OK:
        PMU.present = true;
        PMU.status = "detected";
        break;
    case PMU_STATUS_PARTIAL:
        PMU.present = true;
        PMU.status = "partial";
        PMU.reason = PMU.caps.reason;
        break;
    default:
        PMU.status = "unavailable";
        PMU.reason = PMU.caps.reason ? PMU.caps.reason : "no usable performance counters";
        break;
    }
}

/* "Counts that include SMM": IA32_DEBUGCTL.FREEZE_WHILE_SMM ([NHM] Table 4 SMM_FRZ, bit 14) stops the
 * counters while the CPU is in SMM, where IA32_PERF_CAPABILITIES[12] says the bit exists. Set once,
 * read-modify-write (LBR capture keeps the other bits), on the BSP, the CPU that programs counters. */
static void smm_freeze_setup(void)
{
    uint64_t v = 0;
    const char *why = NULL;

    PMU.smm_freeze = -1;
    if (!PMU.present) {
        PMU.smm_freeze_why = "not supported (PMU unavailable)";
        return;
    }
    if (!pmu_smm_freeze_supported(&PMU.caps, &why)) {
        PMU.smm_freeze_why = why;
        return;
    }
    PMU.smm_freeze = 0;
    if (rdmsr_safe(MSR_IA32_DEBUGCTL, &v) != MSR_OK) {
        PMU.smm_freeze_why = "IA32_DEBUGCTL read faulted";
        return;
    }
    if (wrmsr_safe(MSR_IA32_DEBUGCTL, v | IA32_DEBUGCTL_FREEZE_WHILE_SMM) != MSR_OK) {
        PMU.smm_freeze_why = "IA32_DEBUGCTL write faulted";
        return;
    }
    if (rdmsr_safe(MSR_IA32_DEBUGCTL, &v) != MSR_OK || !(v & IA32_DEBUGCTL_FREEZE_WHILE_SMM)) {
        PMU.smm_freeze_why = PMU.assumed ? "IA32_DEBUGCTL[14] reads back clear (assumed PMU: the emulator "
                                           "does not keep it)"
                                         : "IA32_DEBUGCTL[14] reads back clear";
        return;
    }
    PMU.smm_freeze = 1;
    PMU.smm_freeze_why = NULL;
}

void pmu_probe(void)
{
    if (PMU.initialized)
        return;
    memset(&PMU, 0, sizeof(PMU));
    PMU.initialized = true;
    if (K.cfg.trace_msr)
        msr_trace_start();

    if (K.cfg.pmu_assume[0]) {
        fmt_snprintf(PMU.assumed_name, sizeof(PMU.assumed_name), "%s", K.cfg.pmu_assume);
        if (pmu_caps_for_model(K.cfg.pmu_assume, &PMU.caps) != 0) {
            PMU.status = "unavailable";
            fmt_snprintf(reason_buf, sizeof(reason_buf), "pmu_assume=%s names no PMU model row", K.cfg.pmu_assume);
            PMU.reason = reason_buf;
        } else {
            PMU.detect_ran = true;
            PMU.assumed = true;
            PMU.present = PMU.caps.status != PMU_STATUS_UNSUPPORTED;
            PMU.status = "assumed";
            fmt_snprintf(reason_buf, sizeof(reason_buf),
                         "pmu_assume=%s: capabilities of the %s model row, not CPUID; counts are not measurements",
                         K.cfg.pmu_assume, PMU.caps.model);
            PMU.reason = reason_buf;
        }
    } else if (K.cpu.is_qemu_tcg) {
        PMU.status = "unavailable";
        PMU.reason = "QEMU TCG emulates no performance counters (hypervisor TCGTCGTCGTCG)";
    } else {
        detect_hardware();
    }
    set_tables();
    set_features();
    smm_freeze_setup();
}

/* ---- gates ---------------------------------------------------------------------------------- */

const char *pmu_feature_name(enum pmu_feature f)
{
    static const char *const n[PMU_FEAT_COUNT] = {"counting", "overflow", "pebs", "lbr", "uncore", "offcore"};
    return (unsigned)f < PMU_FEAT_COUNT ? n[f] : "unknown";
}

static const char *absent_reason(enum pmu_feature f)
{
    static char buf[128];
    if (!PMU.present)
        return PMU.reason ? PMU.reason : "PMU unavailable";
    switch (f) {
    case PMU_FEAT_PEBS:
        fmt_snprintf(buf, sizeof(buf), "no PEBS load latency on %s", PMU.caps.model);
        break;
    case PMU_FEAT_LBR:
        fmt_snprintf(buf, sizeof(buf), "no usable LBR stack on %s", PMU.caps.model);
        break;
    case PMU_FEAT_UNCORE:
        fmt_snprintf(buf, sizeof(buf), "no programmable uncore on %s%s%s", PMU.caps.model,
                     PMU.caps.uncore_note ? ": " : "", PMU.caps.uncore_note ? PMU.caps.uncore_note : "");
        break;
    case PMU_FEAT_OFFCORE:
        fmt_snprintf(buf, sizeof(buf), "no off-core response MSRs on %s", PMU.caps.model);
        break;
    default:
        fmt_snprintf(buf, sizeof(buf), "no counters on %s", PMU.caps.model);
        break;
    }
    return buf;
}

bool pmu_may_program(enum pmu_feature f, const char **why)
{
    const char *w = NULL;
    if (!PMU.initialized)
        w = "PMU not initialized";
    else if ((unsigned)f >= PMU_FEAT_COUNT || !PMU.has[f])
        w = absent_reason(f);
    else if (PMU.failed[f] && !PMU.assumed)
        w = PMU.failed_why[f];
    if (why)
        *why = w;
    return w == NULL;
}

bool pmu_figures_valid(enum pmu_feature f, const char **why)
{
    if (!pmu_may_program(f, why))
        return false;
    if (PMU.assumed) {
        if (why)
            *why = PMU_REASON_ASSUMED;
        return false;
    }
    if (PMU.failed[f]) {
        if (why)
            *why = PMU.failed_why[f];
        return false;
    }
    return true;
}

void pmu_feature_disable(enum pmu_feature f, const char *why)
{
    if ((unsigned)f >= PMU_FEAT_COUNT)
        return;
    PMU.failed[f] = true;
    fmt_snprintf(PMU.failed_why[f], sizeof(PMU.failed_why[f]), "%s", why ? why : "disabled");
}

const struct pmu_event_table *const *pmu_tables(unsigned *n)
{
    if (n)
        *n = PMU.ntables;
    return PMU.tables;
}

/* ---- JSON ----------------------------------------------------------------------------------- */

void pmu_summary_json(struct json *j)
{
    const struct pmu_caps *c = &PMU.caps;
    const struct cpu_perfmon *p = &K.cpu.perf;
    bool use_caps = PMU.present;

    json_obj_begin(j);
    if (PMU.assumed)
        json_kv_str(j, "assumed", PMU.assumed_name);
    json_kv_str(j, "vendor", use_caps ? vendor_string(c->vendor) : K.cpu.vendor_str);
    if (PMU.detect_ran)
        json_kv_str(j, "model", c->model);
    else
        json_kv_null(j, "model");
    json_kv_uint(j, "version", use_caps ? c->version : p->version);
    json_kv_uint(j, "gp_counters", use_caps ? c->gp_counters : p->gp_counters);
    json_kv_uint(j, "gp_width", use_caps ? c->gp_width : p->gp_width);
    json_kv_uint(j, "fixed_counters", use_caps ? c->fixed_counters : p->fixed_counters);
    json_kv_uint(j, "fixed_width", use_caps ? c->fixed_width : p->fixed_width);
    json_kv_bool(j, "pebs", use_caps && c->pebs);
    json_kv_uint(j, "pebs_format", use_caps && c->pebs ? c->pebs_format : 0);
    json_kv_bool(j, "load_latency", use_caps && c->load_latency);
    json_kv_uint(j, "lbr_format", use_caps ? c->lbr_format : 0);
    json_kv_uint(j, "lbr_depth", use_caps ? c->lbr_depth : 0);
    json_kv_uint(j, "offcore", use_caps ? c->offcore_msrs : 0);
    json_kv_str(j, "uncore", use_caps ? pmu_uncore_name(c->uncore) : "none");
    json_kv_bool(j, "full_width_write", use_caps && c->full_width_write);
    if (PMU.smm_freeze > 0) {
        json_kv_bool(j, "freeze_while_smm", true);
    } else if (PMU.smm_freeze == 0) {
        json_kv_bool(j, "freeze_while_smm", false);
        json_kv_str(j, "freeze_while_smm_reason", PMU.smm_freeze_why);
    } else {
        json_kv_str(j, "freeze_while_smm", PMU.smm_freeze_why ? PMU.smm_freeze_why : "not supported");
    }
    if (PMU.detect_ran) {
        char fm[8];
        fmt_snprintf(fm, sizeof(fm), "%02X_%02X", c->cpu_family, c->cpu_model);
        json_kv_str(j, "family_model", fm);
    } else {
        json_kv_null(j, "family_model");
    }
    /* Errata workarounds this run applies (docs/pmu.md "Errata"): the erratum behind each. */
    json_key(j, "errata");
    json_obj_begin(j);
    if (use_caps && (c->errata & PMU_ERRATUM_NHM_RESET))
        json_kv_str(j, "pmu_reset", c->erratum_reset);
    json_obj_end(j);
    json_kv_str(j, "status", PMU.status ? PMU.status : "unavailable");
    if (PMU.reason)
        json_kv_str(j, "reason", PMU.reason);
    json_obj_end(j);
}

void pmu_caps_json(struct json *j)
{
    const struct pmu_caps *c = &PMU.caps;
    json_obj_begin(j);
    json_kv_bool(j, "present", PMU.present);
    json_kv_bool(j, "detection_ran", PMU.detect_ran);
    json_kv_str(j, "model", PMU.detect_ran ? c->model : NULL);
    json_kv_str(j, "desc", PMU.detect_ran ? c->desc : NULL);
    json_kv_str(j, "arch", pmu_arch_name(c->arch));
    json_kv_str(j, "caps_status", PMU.detect_ran ? pmu_status_name(c->status) : NULL);
    json_kv_uint(j, "version", c->version);
    json_kv_uint(j, "gp_counters", c->gp_counters);
    json_kv_uint(j, "gp_width", c->gp_width);
    json_kv_uint(j, "fixed_counters", c->fixed_counters);
    json_kv_uint(j, "fixed_width", c->fixed_width);
    json_kv_hex(j, "fixed_mask", c->fixed_mask);
    json_kv_hex(j, "arch_events", c->arch_events);
    json_kv_bool(j, "global_ctrl", c->global_ctrl);
    json_kv_bool(j, "any_thread", c->any_thread);
    json_kv_bool(j, "full_width_write", c->full_width_write);
    json_kv_bool(j, "perf_capabilities_read", c->perf_cap_known);
    json_kv_bool(j, "smm_freeze", c->smm_freeze);
    json_kv_uint(j, "arch_events_len", c->arch_events_len);
    json_kv_hex(j, "errata", c->errata);
    json_kv_str(j, "erratum_reset", c->erratum_reset);
    json_kv_bool(j, "ds", c->ds);
    json_kv_bool(j, "dtes64", c->dtes64);
    json_kv_bool(j, "pdcm", c->pdcm);
    json_kv_bool(j, "pebs", c->pebs);
    json_kv_uint(j, "pebs_format", c->pebs_format);
    json_kv_uint(j, "pebs_record_size", c->pebs_record_size);
    json_kv_bool(j, "pebs_trap", c->pebs_trap);
    json_kv_bool(j, "load_latency", c->load_latency);
    json_kv_uint(j, "lbr_format", c->lbr_format);
    json_kv_uint(j, "lbr_depth", c->lbr_depth);
    json_kv_hex(j, "lbr_from", c->lbr_from);
    json_kv_hex(j, "lbr_to", c->lbr_to);
    json_kv_hex(j, "lbr_tos", c->lbr_tos);
    json_kv_bool(j, "lbr_select", c->lbr_select);
    json_kv_uint(j, "offcore_msrs", c->offcore_msrs);
    json_kv_str(j, "uncore", pmu_uncore_name(c->uncore));
    json_kv_uint(j, "uncore_counters", c->uncore_counters);
    json_kv_uint(j, "uncore_fixed", c->uncore_fixed);
    json_kv_str(j, "uncore_note", c->uncore_note);
    json_kv_uint(j, "nb_counters", c->nb_counters);
    json_kv_bool(j, "perfmon_v2", c->perfmon_v2);
    json_kv_str(j, "event_table", c->event_table);
    json_kv_str(j, "uncore_table", c->uncore_table);
    json_kv_str(j, "events_source", PMU_EVENTS_SOURCE);
    if (PMU.perf_cap_read)
        json_kv_hex(j, "perf_capabilities", PMU.perf_capabilities);
    if (PMU.misc_enable_read)
        json_kv_hex(j, "misc_enable", PMU.misc_enable);
    json_key(j, "features");
    json_obj_begin(j);
    for (unsigned f = 0; f < PMU_FEAT_COUNT; f++) {
        const char *why = NULL;
        bool ok = pmu_may_program((enum pmu_feature)f, &why);
        json_key(j, pmu_feature_name((enum pmu_feature)f));
        json_obj_begin(j);
        json_kv_bool(j, "programmed", ok);
        bool valid = pmu_figures_valid((enum pmu_feature)f, &why);
        json_kv_bool(j, "measured", valid);
        if (why)
            json_kv_str(j, "reason", why);
        json_obj_end(j);
    }
    json_obj_end(j);
    json_kv_uint(j, "trace_dropped", msr_trace_dropped());
    json_obj_end(j);
}
