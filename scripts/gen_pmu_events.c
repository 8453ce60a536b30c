/* gen_pmu_events.c - host tool: turn libpfm4's event tables into freestanding C for the kernel.
 *
 * Usage: gen_pmu_events [--pkg-version VER] OUT.c OUT.h
 *
 * For every PMU below it enumerates the events and unit masks with pfm_get_event_info() /
 * pfm_get_event_attr_info() and asks libpfm4 for the raw register values with
 * pfm_get_os_event_encoding(PFM_OS_NONE) (LIBPFM_ENCODE_INACTIVE=1 lets it encode for PMUs this
 * host does not have). The values are split back into event select, unit mask and the modifier
 * bits a unit mask implies; the INT bit libpfm4 sets is dropped (pmubench arms no PMI handler).
 *
 * What libpfm4's API does not expose is supplied here, each with its source:
 *   - counter constraints (libpfm4 lib/events/intel_{nhm,wsm}_events.h .cntmsk, the same set as
 *     Linux intel_nehalem/westmere_event_constraints; AMD family 15h and 17h+ from Linux
 *     arch/x86/events/amd/core.c through pmu_cnt_rule_mask, pmu/encode.c: libpfm4's AMD tables
 *     give every event every counter),
 *   - fixed-counter aliases (SDM 18.2.2: FIXED_CTR0 = C0H/00H, CTR1 = 3CH/00H, CTR2 = pseudo 00H/03H),
 *   - NetBurst ESCR choices per event (SDM Vol. 3B Appendix A Pentium 4 event tables; the same as
 *     FreeBSD hwpmc_p4.c / Linux p4_event_bind_map); the ESCR->counter map is pmu/encode.c's,
 *   - the architectural event list (SDM Vol. 3B Table 18-1), since libpfm4's ix86arch PMU is
 *     built from the host's CPUID.
 * Output is deterministic (no dates) so rebuilding is reproducible.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <limits.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include <perfmon/pfmlib.h>

#include "pmu/encode.h"
#include "pmu/event.h"
#include "pmu/msr_pmu.h"

#define MAX_UMASKS 128
#define MAX_ROWS 8192

struct pmu_spec {
    const char *name;      /* our table name */
    const char *libpfm;    /* libpfm4 PMU name, NULL for hand-written tables */
    const char *desc;
    enum pmu_tbl_kind kind;
    unsigned cmask_max;
    unsigned gp, fixed;
    const char *id;        /* enum suffix */
    enum pmu_cnt_rule cnt_rule; /* event/unit-mask counter constraints (pmu_cnt_rule_mask) */
};

/* Nehalem/Westmere reserve PERFEVTSEL bits 31:29 ([NHM] Table 10), so CMASK <= 31 there. */
static const struct pmu_spec specs[] = {
    {"arch", NULL, "Intel architectural events", PMU_TBL_KIND_INTEL_CORE, 255, 8, 4, "ARCH", PMU_CNT_RULE_NONE},
    {"nhm", "nhm", "Intel Nehalem core (06_1A/1E/1F/2E)", PMU_TBL_KIND_INTEL_CORE, 31, 4, 3, "NHM", PMU_CNT_RULE_NONE},
    {"nhm_unc", "nhm_unc", "Intel Nehalem uncore (06_1A/1E/1F)", PMU_TBL_KIND_INTEL_UNCORE, 255, 8, 1, "NHM_UNC", PMU_CNT_RULE_NONE},
    {"wsm", "wsm", "Intel Westmere client core (06_25)", PMU_TBL_KIND_INTEL_CORE, 31, 4, 3, "WSM", PMU_CNT_RULE_NONE},
    {"wsm_dp", "wsm_dp", "Intel Westmere-EP core (06_2C/2F)", PMU_TBL_KIND_INTEL_CORE, 31, 4, 3, "WSM_DP", PMU_CNT_RULE_NONE},
    {"wsm_unc", "wsm_unc", "Intel Westmere uncore (06_25/2C)", PMU_TBL_KIND_INTEL_UNCORE, 255, 8, 1, "WSM_UNC", PMU_CNT_RULE_NONE},
    {"amd_k8", "amd64_k8_revg", "AMD K8 (family 0Fh) rev G", PMU_TBL_KIND_AMD_CORE, 255, 4, 0, "AMD_K8", PMU_CNT_RULE_NONE},
    {"amd_fam10h", "amd64_fam10h_barcelona", "AMD family 10h Barcelona", PMU_TBL_KIND_AMD_CORE, 255, 4, 0, "AMD_FAM10H", PMU_CNT_RULE_NONE},
    {"amd_fam15h", "amd64_fam15h_interlagos", "AMD family 15h Interlagos core", PMU_TBL_KIND_AMD_CORE, 255, 6, 0, "AMD_FAM15H",
     PMU_CNT_RULE_AMD_F15H},
    {"amd_fam15h_nb", "amd64_fam15h_nb", "AMD family 15h northbridge", PMU_TBL_KIND_AMD_NB, 255, 4, 0, "AMD_FAM15H_NB", PMU_CNT_RULE_NONE},
    {"amd_fam17h_zen1", "amd64_fam17h_zen1", "AMD family 17h Zen 1", PMU_TBL_KIND_AMD_CORE, 255, 6, 0, "AMD_ZEN1", PMU_CNT_RULE_AMD_PAIR},
    {"amd_fam17h_zen2", "amd64_fam17h_zen2", "AMD family 17h Zen 2", PMU_TBL_KIND_AMD_CORE, 255, 6, 0, "AMD_ZEN2", PMU_CNT_RULE_AMD_PAIR},
    {"amd_fam19h_zen3", "amd64_fam19h_zen3", "AMD family 19h Zen 3", PMU_TBL_KIND_AMD_CORE, 255, 6, 0, "AMD_ZEN3", PMU_CNT_RULE_AMD_PAIR},
    {"amd_fam19h_zen4", "amd64_fam19h_zen4", "AMD family 19h Zen 4", PMU_TBL_KIND_AMD_CORE, 255, 6, 0, "AMD_ZEN4", PMU_CNT_RULE_AMD_PAIR},
    {"netburst", "netburst", "Intel NetBurst (family 0Fh models 0-2)", PMU_TBL_KIND_NETBURST, 15, 18, 0, "NETBURST", PMU_CNT_RULE_NONE},
    {"netburst_p", "netburst_p", "Intel NetBurst Prescott (family 0Fh models 3+)", PMU_TBL_KIND_NETBURST, 15, 18, 0, "NETBURST_P", PMU_CNT_RULE_NONE},
};

/* Events restricted to some general counters (libpfm4 .cntmsk; Linux *_event_constraints). */
struct cnt_override {
    const char *table;
    const char *event;
    uint64_t mask;
};
static const struct cnt_override overrides[] = {
    {"nhm", "CACHE_LOCK_CYCLES", 0x3}, {"nhm", "L1D", 0x3}, {"nhm", "L1D_ALL_REF", 0x3},
    {"nhm", "L1D_CACHE_LD", 0x3}, {"nhm", "L1D_CACHE_LOCK", 0x3}, {"nhm", "L1D_CACHE_LOCK_FB_HIT", 0x3},
    {"nhm", "L1D_CACHE_PREFETCH_LOCK_FB_HIT", 0x3}, {"nhm", "L1D_CACHE_ST", 0x3},
    {"nhm", "L1D_PREFETCH", 0x3}, {"nhm", "LOAD_HIT_PRE", 0x3},
    {"wsm", "CACHE_LOCK_CYCLES", 0x3}, {"wsm", "L1D_CACHE_PREFETCH_LOCK_FB_HIT", 0x3},
    {"wsm", "L1D_PREFETCH", 0x3}, {"wsm", "LOAD_HIT_PRE", 0x3}, {"wsm", "L1D", 0x3},
    {"wsm", "OFFCORE_REQUESTS_OUTSTANDING", 0x1}, {"wsm", "SNOOPQ_REQUESTS_OUTSTANDING", 0x1},
    {"wsm_dp", "CACHE_LOCK_CYCLES", 0x3}, {"wsm_dp", "L1D_CACHE_PREFETCH_LOCK_FB_HIT", 0x3},
    {"wsm_dp", "L1D_PREFETCH", 0x3}, {"wsm_dp", "LOAD_HIT_PRE", 0x3}, {"wsm_dp", "L1D", 0x3},
    {"wsm_dp", "OFFCORE_REQUESTS_OUTSTANDING", 0x1}, {"wsm_dp", "SNOOPQ_REQUESTS_OUTSTANDING", 0x1},
};

/* NetBurst event -> its two ESCRs (SDM Vol. 3B Appendix A, Pentium 4 event tables). */
struct p4_bind {
    const char *event;
    uint32_t escr0, escr1;
    const char *skip_reason;
};
/* The SDM gives b2b_cycles, bnr, snoop and response CCCR select 03H although they live in
 * FSB_ESCR0/1, whose select is 06H for every other FSB event (libpfm4 and Linux copy the 03H).
 * CCCR select 3 in the BPU group routes ITLB_ESCRx, so one of the two is wrong: not generated. */
#define P4_SEL_CONFLICT "SDM CCCR select 03H contradicts FSB_ESCR select 06H"
static const struct p4_bind p4_binds[] = {
    {"TC_deliver_mode", MSR_P4_TC_ESCR0, MSR_P4_TC_ESCR1, NULL},
    {"BPU_fetch_request", MSR_P4_BPU_ESCR0, MSR_P4_BPU_ESCR1, NULL},
    {"ITLB_reference", MSR_P4_ITLB_ESCR0, MSR_P4_ITLB_ESCR1, NULL},
    {"memory_cancel", MSR_P4_DAC_ESCR0, MSR_P4_DAC_ESCR1, NULL},
    {"memory_complete", MSR_P4_SAAT_ESCR0, MSR_P4_SAAT_ESCR1, NULL},
    {"load_port_replay", MSR_P4_SAAT_ESCR0, MSR_P4_SAAT_ESCR1, NULL},
    {"store_port_replay", MSR_P4_SAAT_ESCR0, MSR_P4_SAAT_ESCR1, NULL},
    {"MOB_load_replay", MSR_P4_MOB_ESCR0, MSR_P4_MOB_ESCR1, NULL},
    {"page_walk_type", MSR_P4_PMH_ESCR0, MSR_P4_PMH_ESCR1, NULL},
    {"BSQ_cache_reference", MSR_P4_BSU_ESCR0, MSR_P4_BSU_ESCR1, NULL},
    {"IOQ_allocation", MSR_P4_FSB_ESCR0, MSR_P4_FSB_ESCR1, NULL},
    {"IOQ_active_entries", MSR_P4_FSB_ESCR1, 0, NULL},
    {"FSB_data_activity", MSR_P4_FSB_ESCR0, MSR_P4_FSB_ESCR1, NULL},
    {"BSQ_allocation", MSR_P4_BSU_ESCR0, 0, NULL},
    {"BSQ_active_entries", MSR_P4_BSU_ESCR1, 0, NULL},
    {"SSE_input_assist", MSR_P4_FIRM_ESCR0, MSR_P4_FIRM_ESCR1, NULL},
    {"packed_SP_uop", MSR_P4_FIRM_ESCR0, MSR_P4_FIRM_ESCR1, NULL},
    {"packed_DP_uop", MSR_P4_FIRM_ESCR0, MSR_P4_FIRM_ESCR1, NULL},
    {"scalar_SP_uop", MSR_P4_FIRM_ESCR0, MSR_P4_FIRM_ESCR1, NULL},
    {"scalar_DP_uop", MSR_P4_FIRM_ESCR0, MSR_P4_FIRM_ESCR1, NULL},
    {"64bit_MMX_uop", MSR_P4_FIRM_ESCR0, MSR_P4_FIRM_ESCR1, NULL},
    {"128bit_MMX_uop", MSR_P4_FIRM_ESCR0, MSR_P4_FIRM_ESCR1, NULL},
    {"x87_FP_uop", MSR_P4_FIRM_ESCR0, MSR_P4_FIRM_ESCR1, NULL},
    {"x87_SIMD_moves_uop", MSR_P4_FIRM_ESCR0, MSR_P4_FIRM_ESCR1, NULL},
    {"TC_misc", MSR_P4_TC_ESCR0, MSR_P4_TC_ESCR1, NULL},
    {"global_power_events", MSR_P4_FSB_ESCR0, MSR_P4_FSB_ESCR1, NULL},
    {"tc_ms_xfer", MSR_P4_MS_ESCR0, MSR_P4_MS_ESCR1, NULL},
    {"uop_queue_writes", MSR_P4_MS_ESCR0, MSR_P4_MS_ESCR1, NULL},
    {"retired_mispred_branch_type", MSR_P4_TBPU_ESCR0, MSR_P4_TBPU_ESCR1, NULL},
    {"retired_branch_type", MSR_P4_TBPU_ESCR0, MSR_P4_TBPU_ESCR1, NULL},
    {"resource_stall", MSR_P4_ALF_ESCR0, MSR_P4_ALF_ESCR1, NULL},
    {"WC_Buffer", MSR_P4_DAC_ESCR0, MSR_P4_DAC_ESCR1, NULL},
    {"b2b_cycles", MSR_P4_FSB_ESCR0, MSR_P4_FSB_ESCR1, P4_SEL_CONFLICT},
    {"bnr", MSR_P4_FSB_ESCR0, MSR_P4_FSB_ESCR1, P4_SEL_CONFLICT},
    {"snoop", MSR_P4_FSB_ESCR0, MSR_P4_FSB_ESCR1, P4_SEL_CONFLICT},
    {"response", MSR_P4_FSB_ESCR0, MSR_P4_FSB_ESCR1, P4_SEL_CONFLICT},
    {"front_end_event", MSR_P4_CRU_ESCR2, MSR_P4_CRU_ESCR3, NULL},
    {"execution_event", MSR_P4_CRU_ESCR2, MSR_P4_CRU_ESCR3, NULL},
    {"replay_event", MSR_P4_CRU_ESCR2, MSR_P4_CRU_ESCR3, NULL},
    {"instr_retired", MSR_P4_CRU_ESCR0, MSR_P4_CRU_ESCR1, NULL},
    {"uops_retired", MSR_P4_CRU_ESCR0, MSR_P4_CRU_ESCR1, NULL},
    {"uops_type", MSR_P4_RAT_ESCR0, MSR_P4_RAT_ESCR1, NULL},
    {"branch_retired", MSR_P4_CRU_ESCR2, MSR_P4_CRU_ESCR3, NULL},
    {"mispred_branch_retired", MSR_P4_CRU_ESCR0, MSR_P4_CRU_ESCR1, NULL},
    {"x87_assist", MSR_P4_CRU_ESCR2, MSR_P4_CRU_ESCR3, NULL},
    {"machine_clear", MSR_P4_CRU_ESCR2, MSR_P4_CRU_ESCR3, NULL},
    {"instr_completed", MSR_P4_CRU_ESCR0, MSR_P4_CRU_ESCR1, NULL},
};

/* Architectural events, SDM Vol. 3B Table 18-1 (and 18.2.2 for the fixed counters). */
struct arch_ev {
    const char *name;
    uint16_t event, umask;
    uint8_t fixed; /* index+1 */
    bool fixed_only;
};
static const struct arch_ev arch_events[] = {
    {"UNHALTED_CORE_CYCLES", 0x3c, 0x00, 2, false},
    {"INSTRUCTION_RETIRED", 0xc0, 0x00, 1, false},
    {"UNHALTED_REFERENCE_CYCLES", 0x3c, 0x01, 0, false},
    {"LLC_REFERENCES", 0x2e, 0x4f, 0, false},
    {"LLC_MISSES", 0x2e, 0x41, 0, false},
    {"BRANCH_INSTRUCTIONS_RETIRED", 0xc4, 0x00, 0, false},
    {"MISPREDICTED_BRANCH_RETIRED", 0xc5, 0x00, 0, false},
    {"TOPDOWN_SLOTS", 0xa4, 0x01, 4, false},       /* v5: also fixed counter 3 */
    {"CPU_CLK_UNHALTED:REF_TSC", 0x00, 0x03, 3, true}, /* pseudo encoding of fixed counter 2 */
};

struct row {
    char name[96];
    uint16_t event, umask, umask_dflt;
    uint8_t fixed;
    uint32_t mods, flags;
    uint32_t escr[2];
    uint64_t extra, extra_dflt, cntmask;
};

static struct row rows[MAX_ROWS];
static unsigned nrows;
static unsigned n_skipped;

/* What libpfm4 lists but this table leaves out, written as a comment into the output. */
#define MAX_SKIPS 1024
static struct {
    char text[160];
    const char *table;
} skips[MAX_SKIPS];
static unsigned nskips;

static void skip(const char *table, const char *what, const char *why)
{
    n_skipped++;
    if (nskips < MAX_SKIPS) {
        snprintf(skips[nskips].text, sizeof(skips[nskips].text), "%.100s: %.50s", what, why);
        skips[nskips].table = table;
        nskips++;
    }
}

static void die(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    fprintf(stderr, "gen_pmu_events: ");
    vfprintf(stderr, fmt, ap);
    fprintf(stderr, "\n");
    va_end(ap);
    exit(1);
}

static void set_name(struct row *r, const char *name)
{
    size_t n = strlen(name);
    if (n >= sizeof(r->name))
        die("event name too long: %s", name);
    memcpy(r->name, name, n + 1);
}

static struct row *new_row(void)
{
    if (nrows >= MAX_ROWS)
        die("more than %d rows", MAX_ROWS);
    memset(&rows[nrows], 0, sizeof(rows[nrows]));
    return &rows[nrows++];
}

static uint64_t gp_mask(unsigned n)
{
    return n >= 32 ? 0xffffffffULL : ((1ULL << n) - 1);
}

static int find_pmu(const char *name, pfm_pmu_info_t *out)
{
    pfm_pmu_t p;
    pfm_for_all_pmus(p)
    {
        pfm_pmu_info_t info;
        memset(&info, 0, sizeof(info));
        info.size = sizeof(info);
        if (pfm_get_pmu_info(p, &info) != PFM_SUCCESS)
            continue;
        if (strcmp(info.name, name) == 0) {
            *out = info;
            return 0;
        }
    }
    return -1;
}

/* Encode "pmu::spec" at PLM0|PLM3; returns number of codes (0 on failure). */
static int encode(const char *pmu, const char *spec, uint64_t codes[4])
{
    char full[256];
    pfm_pmu_encode_arg_t arg;
    int ret;

    snprintf(full, sizeof(full), "%s::%s", pmu, spec);
    memset(&arg, 0, sizeof(arg));
    arg.size = sizeof(arg);
    ret = pfm_get_os_event_encoding(full, PFM_PLM0 | PFM_PLM3, PFM_OS_NONE, &arg);
    if (ret != PFM_SUCCESS) {
        free(arg.codes);
        return 0;
    }
    if (arg.count < 1 || arg.count > 4)
        die("%s: unexpected code count %d", full, arg.count);
    for (int i = 0; i < arg.count; i++)
        codes[i] = arg.codes[i];
    ret = arg.count;
    free(arg.codes);
    return ret;
}

static const struct cnt_override *find_override(const char *table, const char *event)
{
    for (size_t i = 0; i < sizeof(overrides) / sizeof(overrides[0]); i++)
        if (!strcmp(overrides[i].table, table) && !strcmp(overrides[i].event, event))
            return &overrides[i];
    return NULL;
}

static const struct p4_bind *find_p4_bind(const char *event)
{
    for (size_t i = 0; i < sizeof(p4_binds) / sizeof(p4_binds[0]); i++)
        if (!strcasecmp(p4_binds[i].event, event))
            return &p4_binds[i];
    return NULL;
}

static bool is_amd_nb_event(const struct pmu_spec *s, unsigned ev)
{
    /* Family 0Fh/10h BKDG: E0H-FFH are northbridge (DRAM, HT link, memory controller) events and
     * 4E0H-4EFH the shared L3; they count a resource shared by all cores of a node. */
    if (strcmp(s->name, "amd_k8") != 0 && strcmp(s->name, "amd_fam10h") != 0)
        return false;
    return (ev >= 0xe0 && ev <= 0xff) || (ev >= 0x4e0 && ev <= 0x4ff);
}

/* Split a libpfm4 encoding into a row. umask_own/extra_own are this unit mask's own bits (or ~0
 * for the default row, which keeps the full value). Returns false if the row must be skipped. */
static bool fill_row(const struct pmu_spec *s, struct row *r, const char *evname, int n,
                     const uint64_t *codes, uint64_t own, bool is_default, bool has_ldlat)
{
    uint64_t c = codes[0];

    switch (s->kind) {
    case PMU_TBL_KIND_INTEL_CORE: {
        unsigned umask = (unsigned)((c >> 8) & 0xff);
        r->event = (uint16_t)(c & 0xff);
        r->mods = (uint32_t)(c & (IA32_PERFEVTSEL_E | IA32_PERFEVTSEL_ANY | IA32_PERFEVTSEL_INV |
                                  IA32_PERFEVTSEL_CMASK_MASK));
        if (!(c & IA32_PERFEVTSEL_EN))
            die("%s::%s: EN not set in 0x%llx", s->libpfm, r->name, (unsigned long long)c);
        bool offcore = n == 2 && (r->event == NHM_OFFCORE_EVENT_RSP_0 || r->event == NHM_OFFCORE_EVENT_RSP_1);
        if (offcore) {
            r->umask = (uint16_t)umask;
            r->extra = is_default ? codes[1] : (codes[1] & own);
            r->extra_dflt = is_default ? 0 : (codes[1] & ~own);
            r->flags |= r->event == NHM_OFFCORE_EVENT_RSP_0 ? PMU_EVF_OFFCORE_RSP0 : PMU_EVF_OFFCORE_RSP1;
            if (!is_default && (codes[1] & own) != own)
                die("%s::%s: umask bits 0x%llx not in 0x%llx", s->libpfm, r->name,
                    (unsigned long long)own, (unsigned long long)codes[1]);
        } else {
            if (n == 2 && has_ldlat) {
                r->flags |= PMU_EVF_LDLAT;
                r->extra = codes[1];
            } else if (n != 1) {
                die("%s::%s: %d codes for a non-offcore event", s->libpfm, r->name, n);
            }
            uint64_t o = is_default ? umask : (own & 0xff);
            if ((umask & o) != o) {
                o = umask; /* libpfm4 umask code carries modifier bits only */
            }
            r->umask = (uint16_t)o;
            r->umask_dflt = (uint16_t)(umask & ~o);
        }
        /* Fixed-counter aliases, SDM 18.2.2 / [NHM] 3.1.6. */
        r->cntmask = gp_mask(s->gp);
        if (r->event == 0xc0 && umask == 0 && r->mods == 0) {
            r->fixed = 1;
            r->cntmask |= PMU_CNT_FIXED(0);
        } else if (r->event == 0x3c && umask == 0 && r->mods == 0) {
            r->fixed = 2;
            r->cntmask |= PMU_CNT_FIXED(1);
        } else if (r->event == 0x00 && umask == 0x03) {
            r->fixed = 3;
            r->cntmask = PMU_CNT_FIXED(2);
        }
        const struct cnt_override *ov = find_override(s->name, evname);
        if (ov)
            r->cntmask = (r->cntmask & PMU_CNT_FIXED_MASK) | ov->mask;
        break;
    }
    case PMU_TBL_KIND_INTEL_UNCORE: {
        unsigned umask = (unsigned)((c >> 8) & 0xff);
        if (n != 1)
            die("%s::%s: %d codes", s->libpfm, r->name, n);
        r->event = (uint16_t)(c & 0xff);
        r->mods = (uint32_t)(c & (UNCORE_PERFEVTSEL_E | UNCORE_PERFEVTSEL_INV | UNCORE_PERFEVTSEL_CMASK_MASK |
                                  UNCORE_PERFEVTSEL_OCC_CTR_RST));
        uint64_t o = is_default ? umask : (own & 0xff);
        if ((umask & o) != o)
            o = umask;
        r->umask = (uint16_t)o;
        r->umask_dflt = (uint16_t)(umask & ~o);
        r->flags |= PMU_EVF_NO_PRIV;
        if (r->event == 0xff) { /* UNC_CLK_UNHALTED: pseudo code for the uncore fixed counter */
            r->fixed = 1;
            r->cntmask = PMU_CNT_FIXED(0);
        } else {
            r->cntmask = gp_mask(s->gp);
        }
        break;
    }
    case PMU_TBL_KIND_AMD_CORE:
    case PMU_TBL_KIND_AMD_NB: {
        unsigned umask = (unsigned)((c >> 8) & 0xff);
        if (n != 1)
            die("%s::%s: %d codes", s->libpfm, r->name, n);
        r->event = (uint16_t)((c & 0xff) | (((c >> 32) & 0xf) << 8));
        r->mods = (uint32_t)(c & (AMD_PERF_CTL_EDGE | AMD_PERF_CTL_INV | AMD_PERF_CTL_CMASK_MASK));
        uint64_t o = is_default ? umask : (own & 0xff);
        if ((umask & o) != o)
            o = umask;
        r->umask = (uint16_t)o;
        r->umask_dflt = (uint16_t)(umask & ~o);
        /* Family 15h restricts most events to some counters and family 17h+ pairs large-increment
         * events (pmu_cnt_rule_mask, from Linux amd/core.c); a row no counter can take keeps mask 0 and
         * the parser refuses it with the rule's reason. */
        r->cntmask = pmu_cnt_rule_mask(s->cnt_rule, r->event, (uint8_t)(r->umask | r->umask_dflt), gp_mask(s->gp),
                                       NULL);
        if (s->kind == PMU_TBL_KIND_AMD_NB)
            r->flags |= PMU_EVF_NO_PRIV | PMU_EVF_AMD_NB;
        else if (is_amd_nb_event(s, r->event))
            r->flags |= PMU_EVF_AMD_NB;
        break;
    }
    case PMU_TBL_KIND_NETBURST: {
        struct pmu_p4_escr e;
        const struct p4_bind *b = find_p4_bind(evname);
        if (n != 2)
            die("%s::%s: %d codes", s->libpfm, r->name, n);
        if (!b)
            die("no ESCR binding for NetBurst event %s", evname);
        if (b->skip_reason) {
            skip(s->name, r->name, b->skip_reason);
            return false;
        }
        pmu_dec_p4_escr(c, &e);
        r->event = e.event_select;
        uint64_t o = is_default ? e.event_mask : own;
        if (!is_default && own > 0xffff) {
            /* TAGn "unit masks" set ESCR tag bits 8:4 for front-end/execution uop tagging, which
             * needs a second, upstream event; not generated. */
            skip(s->name, r->name, "ESCR uop tagging");
            return false;
        }
        if ((e.event_mask & o) != o) {
            /* replay_event's "virtual" mask bits select IA32_PEBS_ENABLE/MSR_PEBS_MATRIX_VERT
             * replay tagging, which this layer does not program. */
            skip(s->name, r->name, "needs replay tagging (PEBS_MATRIX_VERT)");
            return false;
        }
        r->umask = (uint16_t)o;
        r->umask_dflt = (uint16_t)(e.event_mask & ~o);
        r->mods = (uint32_t)(codes[1] & P4_CCCR_ESCR_SELECT_MASK);
        r->escr[0] = b->escr0;
        r->escr[1] = b->escr1;
        unsigned sel = (unsigned)((codes[1] & P4_CCCR_ESCR_SELECT_MASK) >> P4_CCCR_ESCR_SELECT_SHIFT);
        r->cntmask = 0;
        for (int i = 0; i < 2; i++) {
            if (!r->escr[i])
                continue;
            const struct p4_escr_info *ei = pmu_p4_escr_by_msr(r->escr[i]);
            if (!ei)
                die("%s: ESCR 0x%x not in p4_escr_table", evname, r->escr[i]);
            if (ei->cccr_select != sel)
                die("%s: libpfm4 CCCR select %u but %s has %u", evname, sel, ei->name, ei->cccr_select);
            r->cntmask |= ei->counters;
        }
        break;
    }
    }
    return true;
}

static void gen_arch(const struct pmu_spec *s, unsigned *first, unsigned *count)
{
    *first = nrows;
    for (size_t i = 0; i < sizeof(arch_events) / sizeof(arch_events[0]); i++) {
        const struct arch_ev *a = &arch_events[i];
        struct row *r = new_row();
        set_name(r, a->name);
        r->event = a->event;
        r->umask = a->umask;
        r->fixed = a->fixed;
        r->flags = strchr(a->name, ':') ? 0 : PMU_EVF_DEFAULT | PMU_EVF_NO_UMASK;
        r->cntmask = a->fixed_only ? 0 : gp_mask(s->gp);
        if (a->fixed)
            r->cntmask |= PMU_CNT_FIXED(a->fixed - 1);
    }
    *count = nrows - *first;
}

static void gen_pmu(const struct pmu_spec *s, unsigned *first, unsigned *count)
{
    pfm_pmu_info_t pinfo;

    *first = nrows;
    if (find_pmu(s->libpfm, &pinfo))
        die("libpfm4 has no PMU named %s", s->libpfm);

    for (int e = pinfo.first_event; e != -1; e = pfm_get_event_next(e)) {
        pfm_event_info_t ei;
        pfm_event_attr_info_t um[MAX_UMASKS];
        int nu = 0;
        bool has_ldlat = false;

        memset(&ei, 0, sizeof(ei));
        ei.size = sizeof(ei);
        if (pfm_get_event_info(e, PFM_OS_NONE, &ei) != PFM_SUCCESS)
            die("pfm_get_event_info(%d) failed", e);
        for (int a = 0; a < ei.nattrs; a++) {
            pfm_event_attr_info_t ai;
            memset(&ai, 0, sizeof(ai));
            ai.size = sizeof(ai);
            if (pfm_get_event_attr_info(e, a, PFM_OS_NONE, &ai) != PFM_SUCCESS)
                die("pfm_get_event_attr_info(%s, %d) failed", ei.name, a);
            if (ai.type == PFM_ATTR_UMASK) {
                if (nu >= MAX_UMASKS)
                    die("%s: too many unit masks", ei.name);
                um[nu++] = ai;
            } else if (ai.type == PFM_ATTR_MOD_INTEGER && !strcmp(ai.name, "ldlat")) {
                has_ldlat = true;
            }
        }

        /* Can two unit masks be OR-ed? Ask libpfm4 with the first two. */
        bool combine = false;
        if (nu >= 2) {
            char spec[256];
            uint64_t codes[4];
            snprintf(spec, sizeof(spec), "%s:%s:%s", ei.name, um[0].name, um[1].name);
            combine = encode(s->libpfm, spec, codes) > 0;
        }
        uint32_t common = (combine ? PMU_EVF_COMBINE : 0) | (nu == 0 ? PMU_EVF_NO_UMASK : 0) |
                          (ei.equiv ? PMU_EVF_ALIAS : 0);

        /* The event alone, with libpfm4's default unit mask(s). */
        {
            uint64_t codes[4];
            int n = encode(s->libpfm, ei.name, codes);
            if (n > 0) {
                struct row *r = new_row();
                bool prec = ei.is_precise;
                set_name(r, ei.name);
                for (int i = 0; i < nu; i++)
                    if (um[i].is_dfl && !um[i].is_precise)
                        prec = false;
                r->flags = common | PMU_EVF_DEFAULT | (prec ? PMU_EVF_PEBS : 0);
                if (!fill_row(s, r, ei.name, n, codes, 0, true, has_ldlat))
                    nrows--;
            } else if (nu == 0) {
                skip(s->name, ei.name, "libpfm4 cannot encode it");
            }
        }
        for (int i = 0; i < nu; i++) {
            char spec[256];
            uint64_t codes[4];
            snprintf(spec, sizeof(spec), "%s:%s", ei.name, um[i].name);
            int n = encode(s->libpfm, spec, codes);
            if (n == 0) {
                skip(s->name, spec, "libpfm4 cannot encode it");
                continue;
            }
            struct row *r = new_row();
            set_name(r, spec);
            r->flags = common | (um[i].is_precise ? PMU_EVF_PEBS : 0) | (um[i].equiv ? PMU_EVF_ALIAS : 0);
            uint64_t own = s->kind == PMU_TBL_KIND_NETBURST ? (1ULL << um[i].code) : um[i].code;
            if (s->kind == PMU_TBL_KIND_INTEL_CORE && n == 2 && !has_ldlat)
                own = um[i].code & 0xffff; /* offcore request/response bits */
            if (!fill_row(s, r, ei.name, n, codes, own, false, has_ldlat))
                nrows--;
        }
    }
    *count = nrows - *first;
}

static void emit_str(FILE *f, const char *s)
{
    fputc('"', f);
    for (; *s; s++) {
        if (*s == '"' || *s == '\\')
            fputc('\\', f);
        if ((unsigned char)*s < 0x20 || (unsigned char)*s > 0x7e)
            fputc('?', f);
        else
            fputc(*s, f);
    }
    fputc('"', f);
}

static const char *kind_name(enum pmu_tbl_kind k)
{
    static const char *const names[] = {
        [PMU_TBL_KIND_INTEL_CORE] = "PMU_TBL_KIND_INTEL_CORE",
        [PMU_TBL_KIND_INTEL_UNCORE] = "PMU_TBL_KIND_INTEL_UNCORE",
        [PMU_TBL_KIND_AMD_CORE] = "PMU_TBL_KIND_AMD_CORE",
        [PMU_TBL_KIND_AMD_NB] = "PMU_TBL_KIND_AMD_NB",
        [PMU_TBL_KIND_NETBURST] = "PMU_TBL_KIND_NETBURST",
    };
    return names[k];
}

static void library_file(char *buf, size_t len)
{
    Dl_info info;
    char real[PATH_MAX];
    snprintf(buf, len, "unknown");
    if (dladdr((void *)pfm_initialize, &info) && info.dli_fname && realpath(info.dli_fname, real)) {
        const char *base = strrchr(real, '/');
        snprintf(buf, len, "%s", base ? base + 1 : real);
    }
}

int main(int argc, char **argv)
{
    const char *pkg = "";
    const char *out_c, *out_h;
    unsigned first[sizeof(specs) / sizeof(specs[0])], count[sizeof(specs) / sizeof(specs[0])];
    const size_t nspecs = sizeof(specs) / sizeof(specs[0]);
    char libfile[PATH_MAX], source[PATH_MAX + 512];
    int ai = 1;

    if (argc > 2 && !strcmp(argv[1], "--pkg-version")) {
        pkg = argv[2];
        ai = 3;
    }
    if (argc - ai != 2) {
        fprintf(stderr, "usage: %s [--pkg-version VER] OUT.c OUT.h\n", argv[0]);
        return 2;
    }
    out_c = argv[ai];
    out_h = argv[ai + 1];

    /* Encode for PMUs this build host does not have; never let the host's CPU pick a PMU. */
    setenv("LIBPFM_ENCODE_INACTIVE", "1", 1);
    unsetenv("LIBPFM_FORCE_PMU");
    if (pfm_initialize() != PFM_SUCCESS)
        die("pfm_initialize failed");

    for (size_t i = 0; i < nspecs; i++) {
        if (specs[i].libpfm)
            gen_pmu(&specs[i], &first[i], &count[i]);
        else
            gen_arch(&specs[i], &first[i], &count[i]);
        if (count[i] == 0)
            die("table %s is empty", specs[i].name);
    }

    library_file(libfile, sizeof(libfile));
    if (strlen(pkg) > 256)
        die("--pkg-version too long");
    snprintf(source, sizeof(source), "libpfm4 %.256s (%.1024s, API %d.%d)", pkg[0] ? pkg : "unknown-package",
             libfile, PFM_MAJ_VERSION(pfm_get_version()), PFM_MIN_VERSION(pfm_get_version()));

    FILE *h = fopen(out_h, "w");
    if (!h)
        die("%s: %s", out_h, strerror(errno));
    fprintf(h, "/* pmu_events.h - GENERATED by scripts/gen_pmu_events.c from %s; do not edit. */\n", source);
    fprintf(h, "#ifndef PMB_PMU_EVENTS_H\n#define PMB_PMU_EVENTS_H\n\n#include \"pmu/event.h\"\n\n");
    fprintf(h, "#define PMU_EVENTS_SOURCE ");
    emit_str(h, source);
    fprintf(h, "\n#define PMU_EVENTS_LIBPFM_API 0x%x /* pfm_get_version() */\n", (unsigned)pfm_get_version());
    fprintf(h, "#define PMU_EVENTS_LIBPFM_HEADER_API 0x%x /* LIBPFM_VERSION */\n", (unsigned)LIBPFM_VERSION);
    fprintf(h, "#define PMU_EVENTS_LIBPFM_PACKAGE ");
    emit_str(h, pkg);
    fprintf(h, "\n#define PMU_EVENTS_LIBPFM_LIBRARY ");
    emit_str(h, libfile);
    fprintf(h, "\n#define PMU_EVENTS_ROWS %u\n\n", nrows);
    fprintf(h, "enum pmu_event_table_id {\n");
    for (size_t i = 0; i < nspecs; i++)
        fprintf(h, "    PMU_TBL_%s = %zu,\n", specs[i].id, i);
    fprintf(h, "    PMU_TBL_COUNT = %zu\n};\n\n", nspecs);
    fprintf(h, "extern const struct pmu_event_table pmu_event_tables[PMU_TBL_COUNT];\n");
    fprintf(h, "/* Table by name (\"nhm\", \"amd_fam10h\", ...), case-insensitive; NULL if none. */\n");
    fprintf(h, "const struct pmu_event_table *pmu_event_table_find(const char *name);\n\n#endif\n");
    if (fclose(h))
        die("%s: write failed", out_h);

    FILE *c = fopen(out_c, "w");
    if (!c)
        die("%s: %s", out_c, strerror(errno));
    fprintf(c, "/* pmu_events.c - GENERATED by scripts/gen_pmu_events.c from %s; do not edit.\n", source);
    fprintf(c, " * Rows: name, event, umask, umask_dflt, fixed, reserved, mods, flags, {escr0, escr1},\n"
               " *       extra, extra_dflt, cntmask (see pmu/event.h). INT is never set. */\n");
    fprintf(c, "#include \"pmu_events.h\"\n\n");
    for (size_t i = 0; i < nspecs; i++) {
        fprintf(c, "/* %s: %s, from %s, %u rows */\n", specs[i].name, specs[i].desc,
                specs[i].libpfm ? specs[i].libpfm : "SDM Vol. 3B Table 18-1", count[i]);
        for (unsigned k = 0; k < nskips; k++)
            if (skips[k].table == specs[i].name)
                fprintf(c, "/*   not generated: %s */\n", skips[k].text);
        fprintf(c, "static const struct pmu_event_desc ev_%s[] = {\n", specs[i].name);
        for (unsigned k = first[i]; k < first[i] + count[i]; k++) {
            const struct row *r = &rows[k];
            fprintf(c, "    {");
            emit_str(c, r->name);
            fprintf(c, ", 0x%x, 0x%x, 0x%x, %u, 0, 0x%xu, 0x%xu, {0x%x, 0x%x}, 0x%llxULL, 0x%llxULL, 0x%llxULL},\n",
                    r->event, r->umask, r->umask_dflt, r->fixed, r->mods, r->flags, r->escr[0], r->escr[1],
                    (unsigned long long)r->extra, (unsigned long long)r->extra_dflt,
                    (unsigned long long)r->cntmask);
        }
        fprintf(c, "};\n\n");
    }
    fprintf(c, "const struct pmu_event_table pmu_event_tables[PMU_TBL_COUNT] = {\n");
    for (size_t i = 0; i < nspecs; i++) {
        fprintf(c, "    {");
        emit_str(c, specs[i].name);
        fprintf(c, ", ");
        emit_str(c, specs[i].libpfm ? specs[i].libpfm : "SDM Vol. 3B Table 18-1");
        fprintf(c, ", ");
        emit_str(c, specs[i].desc);
        fprintf(c, ", %s, %u, %u, %u, ev_%s, %u, %u},\n", kind_name(specs[i].kind), specs[i].cmask_max, specs[i].gp,
                specs[i].fixed, specs[i].name, count[i], (unsigned)specs[i].cnt_rule);
    }
    fprintf(c, "};\n\n");
    fprintf(c, "const struct pmu_event_table *pmu_event_table_find(const char *name)\n{\n"
               "    for (unsigned i = 0; i < PMU_TBL_COUNT; i++) {\n"
               "        const char *a = pmu_event_tables[i].name, *b = name;\n"
               "        while (*a && kl_tolower(*a) == kl_tolower(*b)) {\n"
               "            a++;\n            b++;\n        }\n"
               "        if (*a == 0 && *b == 0)\n            return &pmu_event_tables[i];\n"
               "    }\n    return NULL;\n}\n");
    if (fclose(c))
        die("%s: write failed", out_c);

    fprintf(stderr, "gen_pmu_events: %u rows in %zu tables (%u unit masks skipped) from %s\n", nrows, nspecs,
            n_skipped, source);
    pfm_terminate();
    return 0;
}
