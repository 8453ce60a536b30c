/* encode.c - bit-exact builders for PMU control-register values. */
#include "pmu/encode.h"
#include "pmu/event.h"

uint64_t pmu_enc_perfevtsel(const struct pmu_evtsel *f)
{
    uint64_t v = 0;
    v |= (uint64_t)f->event << IA32_PERFEVTSEL_EVENT_SHIFT;
    v |= (uint64_t)f->umask << IA32_PERFEVTSEL_UMASK_SHIFT;
    v |= (uint64_t)f->cmask << IA32_PERFEVTSEL_CMASK_SHIFT;
    if (f->usr)
        v |= IA32_PERFEVTSEL_USR;
    if (f->os)
        v |= IA32_PERFEVTSEL_OS;
    if (f->edge)
        v |= IA32_PERFEVTSEL_E;
    if (f->pc)
        v |= IA32_PERFEVTSEL_PC;
    if (f->int_en)
        v |= IA32_PERFEVTSEL_INT;
    if (f->any)
        v |= IA32_PERFEVTSEL_ANY;
    if (f->en)
        v |= IA32_PERFEVTSEL_EN;
    if (f->inv)
        v |= IA32_PERFEVTSEL_INV;
    return v;
}

void pmu_dec_perfevtsel(uint64_t v, struct pmu_evtsel *f)
{
    f->event = (uint8_t)(v & IA32_PERFEVTSEL_EVENT_MASK);
    f->umask = (uint8_t)((v & IA32_PERFEVTSEL_UMASK_MASK) >> IA32_PERFEVTSEL_UMASK_SHIFT);
    f->cmask = (uint8_t)((v & IA32_PERFEVTSEL_CMASK_MASK) >> IA32_PERFEVTSEL_CMASK_SHIFT);
    f->usr = (v & IA32_PERFEVTSEL_USR) != 0;
    f->os = (v & IA32_PERFEVTSEL_OS) != 0;
    f->edge = (v & IA32_PERFEVTSEL_E) != 0;
    f->pc = (v & IA32_PERFEVTSEL_PC) != 0;
    f->int_en = (v & IA32_PERFEVTSEL_INT) != 0;
    f->any = (v & IA32_PERFEVTSEL_ANY) != 0;
    f->en = (v & IA32_PERFEVTSEL_EN) != 0;
    f->inv = (v & IA32_PERFEVTSEL_INV) != 0;
}

uint64_t pmu_enc_fixed_ctrl(uint64_t cur, unsigned idx, bool os, bool usr, bool any, bool pmi)
{
    uint64_t field = 0;

    if (idx >= 16)
        return cur;
    if (os)
        field |= IA32_FIXED_CTR_CTRL_EN_OS;
    if (usr)
        field |= IA32_FIXED_CTR_CTRL_EN_USR;
    if (any)
        field |= IA32_FIXED_CTR_CTRL_ANY;
    if (pmi)
        field |= IA32_FIXED_CTR_CTRL_PMI;
    cur &= ~IA32_FIXED_CTR_CTRL_MASK(idx);
    return cur | (field << IA32_FIXED_CTR_CTRL_SHIFT(idx));
}

uint64_t pmu_enc_global_ctrl(uint32_t pmc_mask, uint32_t fixed_mask)
{
    return (uint64_t)pmc_mask | ((uint64_t)fixed_mask << 32);
}

static uint64_t low_bits(unsigned n)
{
    return n >= 32 ? 0xffffffffULL : ((1ULL << n) - 1);
}

uint64_t pmu_enc_global_ovf_clear_all(unsigned n_pmc, unsigned n_fixed)
{
    return low_bits(n_pmc) | (low_bits(n_fixed) << 32) | IA32_PERF_GLOBAL_STATUS_UNC_OVF |
           IA32_PERF_GLOBAL_STATUS_OVF_BUF | IA32_PERF_GLOBAL_STATUS_COND_CHGD;
}

uint64_t pmu_enc_pebs_enable(uint32_t pebs_pmc_mask, uint32_t ll_pmc_mask)
{
    /* Nehalem has 4 PMCs: bits 3:0 and 35:32 ([NHM] Table 14); anything else is reserved. */
    return ((uint64_t)pebs_pmc_mask & IA32_PEBS_ENABLE_PMC_MASK) |
           (((uint64_t)ll_pmc_mask << IA32_PEBS_ENABLE_LL_SHIFT) & IA32_PEBS_ENABLE_LL_MASK);
}

unsigned pmu_nhm_reset_sequence(struct pmu_msr_write *out, unsigned max, unsigned n_gp, bool clear_pebs)
{
    /* The three "non-counting" events of the errata (event B5H, D2H, B1H, B1H; unit mask 00H; USR, OS,
     * EN): 0x4300B5, 0x4300D2, 0x4300B1, 0x4300B1. Linux programs all four counters ("in practice it
     * appears some of these events do in fact count"). */
    static const uint8_t magic_event[PMU_NHM_RESET_COUNTERS] = {0xb5, 0xd2, 0xb1, 0xb1};
    unsigned n = n_gp < PMU_NHM_RESET_COUNTERS ? n_gp : PMU_NHM_RESET_COUNTERS;
    unsigned need = (clear_pebs ? 2U : 1U) + 2U * n + 2U + 2U * n;
    unsigned k = 0;

    if (!out || n == 0 || max < need)
        return 0;
    out[k++] = (struct pmu_msr_write){MSR_IA32_PERF_GLOBAL_CTRL, 0};
    if (clear_pebs)
        out[k++] = (struct pmu_msr_write){MSR_IA32_PEBS_ENABLE, 0};
    for (unsigned i = 0; i < n; i++) {
        struct pmu_evtsel f = {.event = magic_event[i], .usr = true, .os = true, .en = true};
        out[k++] = (struct pmu_msr_write){MSR_IA32_PERFEVTSEL(i), pmu_enc_perfevtsel(&f)};
        out[k++] = (struct pmu_msr_write){MSR_IA32_PMC(i), 0};
    }
    out[k++] = (struct pmu_msr_write){MSR_IA32_PERF_GLOBAL_CTRL, pmu_enc_global_ctrl((1u << n) - 1, 0)};
    out[k++] = (struct pmu_msr_write){MSR_IA32_PERF_GLOBAL_CTRL, 0};
    for (unsigned i = 0; i < n; i++) {
        out[k++] = (struct pmu_msr_write){MSR_IA32_PERFEVTSEL(i), 0};
        out[k++] = (struct pmu_msr_write){MSR_IA32_PMC(i), 0};
    }
    return k;
}

/* SDM Vol. 3B Table 18-1 "UMask and Event Select Encodings for Pre-Defined Architectural Performance
 * Events", indexed by the CPUID.0AH:EBX bit; bit 7 (topdown slots) is perfmon v5. */
static const struct {
    uint8_t event, umask;
    const char *name;
} arch_events[PMU_ARCH_EVENTS] = {
    {0x3c, 0x00, "core cycles"},
    {0xc0, 0x00, "instructions retired"},
    {0x3c, 0x01, "reference cycles"},
    {0x2e, 0x4f, "last-level cache references"},
    {0x2e, 0x41, "last-level cache misses"},
    {0xc4, 0x00, "branch instructions retired"},
    {0xc5, 0x00, "branch mispredicts retired"},
    {0xa4, 0x01, "topdown slots"},
};

int pmu_arch_event_index(uint64_t evtsel)
{
    uint8_t ev = (uint8_t)(evtsel & IA32_PERFEVTSEL_EVENT_MASK);
    uint8_t um = (uint8_t)((evtsel & IA32_PERFEVTSEL_UMASK_MASK) >> IA32_PERFEVTSEL_UMASK_SHIFT);
    for (unsigned i = 0; i < PMU_ARCH_EVENTS; i++)
        if (arch_events[i].event == ev && arch_events[i].umask == um)
            return (int)i;
    return -1;
}

const char *pmu_arch_event_name(unsigned bit) { return bit < PMU_ARCH_EVENTS ? arch_events[bit].name : NULL; }

int pmu_enc_ldlat(uint32_t cycles, uint64_t *out)
{
    *out = cycles & PEBS_LD_LAT_THRESHOLD_MASK;
    if (cycles < PEBS_LD_LAT_THRESHOLD_MIN || cycles > PEBS_LD_LAT_THRESHOLD_MASK)
        return -1;
    return 0;
}

int pmu_enc_offcore_rsp(uint8_t request, uint8_t response, uint64_t *out)
{
    *out = ((uint64_t)request << OFFCORE_RSP_REQUEST_SHIFT) | ((uint64_t)response << OFFCORE_RSP_RESPONSE_SHIFT);
    return pmu_offcore_rsp_valid(*out) ? 0 : -1;
}

bool pmu_offcore_rsp_valid(uint64_t v)
{
    return (v & OFFCORE_RSP_REQUEST_MASK) != 0 && (v & OFFCORE_RSP_RESPONSE_MASK) != 0 &&
           (v & ~(OFFCORE_RSP_REQUEST_MASK | OFFCORE_RSP_RESPONSE_MASK)) == 0;
}

uint64_t pmu_enc_uncore_evtsel(const struct pmu_unc_evtsel *f)
{
    uint64_t v = (uint64_t)f->event | ((uint64_t)f->umask << UNCORE_PERFEVTSEL_UMASK_SHIFT) |
                 ((uint64_t)f->cmask << UNCORE_PERFEVTSEL_CMASK_SHIFT);
    if (f->occ_ctr_rst)
        v |= UNCORE_PERFEVTSEL_OCC_CTR_RST;
    if (f->edge)
        v |= UNCORE_PERFEVTSEL_E;
    if (f->pmi)
        v |= UNCORE_PERFEVTSEL_PMI;
    if (f->en)
        v |= UNCORE_PERFEVTSEL_EN;
    if (f->inv)
        v |= UNCORE_PERFEVTSEL_INV;
    return v;
}

uint64_t pmu_enc_uncore_fixed_ctrl(bool en, bool pmi)
{
    return (en ? UNCORE_FIXED_CTR_CTRL_EN : 0) | (pmi ? UNCORE_FIXED_CTR_CTRL_PMI : 0);
}

uint64_t pmu_enc_uncore_global_ctrl(uint8_t pc_mask, bool fc0, uint8_t pmi_core_mask, bool pmi_frz)
{
    uint64_t v = pc_mask;
    if (fc0)
        v |= UNCORE_PERF_GLOBAL_CTRL_EN_FC0;
    v |= ((uint64_t)pmi_core_mask << UNCORE_PERF_GLOBAL_CTRL_EN_PMI_CORE_SHIFT) &
         UNCORE_PERF_GLOBAL_CTRL_EN_PMI_CORE_MASK;
    if (pmi_frz)
        v |= UNCORE_PERF_GLOBAL_CTRL_PMI_FRZ;
    return v;
}

uint64_t pmu_enc_uncore_global_ovf_clear_all(void)
{
    return UNCORE_PERF_GLOBAL_STATUS_OVF_PC_ALL | UNCORE_PERF_GLOBAL_STATUS_OVF_FC0 |
           UNCORE_PERF_GLOBAL_STATUS_OVF_PMI | UNCORE_PERF_GLOBAL_STATUS_CHG;
}

uint64_t pmu_enc_amd_evtsel(const struct pmu_amd_evtsel *f)
{
    /* EventSelect[7:0] in 7:0, EventSelect[11:8] in 35:32. */
    uint64_t v = ((uint64_t)f->event & AMD_PERF_CTL_EVENT_LO_MASK) | ((uint64_t)f->umask << AMD_PERF_CTL_UMASK_SHIFT) |
                 ((uint64_t)f->cmask << AMD_PERF_CTL_CMASK_SHIFT) |
                 (((uint64_t)(f->event >> 8) << AMD_PERF_CTL_EVENT_HI_SHIFT) & AMD_PERF_CTL_EVENT_HI_MASK);
    if (f->usr)
        v |= AMD_PERF_CTL_USR;
    if (f->os)
        v |= AMD_PERF_CTL_OS;
    if (f->edge)
        v |= AMD_PERF_CTL_EDGE;
    if (f->int_en)
        v |= AMD_PERF_CTL_INT;
    if (f->en)
        v |= AMD_PERF_CTL_EN;
    if (f->inv)
        v |= AMD_PERF_CTL_INV;
    if (f->guest_only)
        v |= AMD_PERF_CTL_GUEST_ONLY;
    if (f->host_only)
        v |= AMD_PERF_CTL_HOST_ONLY;
    return v;
}

static unsigned popcount8(uint8_t v)
{
    unsigned n = 0;
    for (; v; v &= (uint8_t)(v - 1))
        n++;
    return n;
}

/* Linux amd_get_event_constraints_f15h's masks (amd_f15_PMC0/PMC20/PMC3/PMC30/PMC50/PMC53). */
#define F15H_PMC0 0x01ULL
#define F15H_PMC20 0x07ULL
#define F15H_PMC3 0x08ULL
#define F15H_PMC30 0x09ULL
#define F15H_PMC50 0x3fULL
#define F15H_PMC53 0x38ULL

static uint64_t f15h_mask(uint16_t ev, uint8_t umask, const char **why)
{
    switch (ev & 0xf0) {
    case 0x00: /* FP */
    case 0x10:
        if (ev == 0x003 || ev == 0x00b || ev == 0x00d)
            return F15H_PMC3;
        if (ev == 0x000 && (umask & 0xf0) && (umask & 0x0f))
            return F15H_PMC3;
        if (ev == 0x004 && popcount8(umask) > 1)
            return F15H_PMC3;
        return F15H_PMC53;
    case 0x20: /* LS */
    case 0x30:
    case 0x40: /* DC */
    case 0x50:
    case 0xc0: /* EX/LS */
        switch (ev) {
        case 0x023:
        case 0x043:
        case 0x045:
        case 0x046:
        case 0x054:
        case 0x055:
            return F15H_PMC20;
        case 0x02d:
            return F15H_PMC3;
        case 0x02e:
            return F15H_PMC30;
        case 0x031:
            if (popcount8(umask) <= 1)
                return F15H_PMC20;
            *why = "family 15h counts event 031H with one unit-mask bit at a time (Linux "
                   "amd_get_event_constraints_f15h)";
            return 0;
        case 0x1c0:
            return F15H_PMC53;
        default:
            return F15H_PMC50;
        }
    case 0x60: /* CU */
    case 0x70:
    case 0x80: /* IC/DE */
    case 0x90:
    case 0xd0: /* DE */
        if (ev == 0x08f || ev == 0x187 || ev == 0x188)
            return F15H_PMC0;
        if ((ev >= 0x0db && ev <= 0x0df) || ev == 0x1d6 || ev == 0x1d8)
            return F15H_PMC50;
        return F15H_PMC20;
    case 0xe0: /* NB */
    case 0xf0:
        *why = "family 15h counts northbridge events (0E0H-0FFH) on NB_PERF_CTL only: use the amd_fam15h_nb table";
        return 0;
    default:
        *why = "family 15h has no core counter for events 0A0H-0BFH (Linux amd_get_event_constraints_f15h)";
        return 0;
    }
}

uint64_t pmu_cnt_rule_mask(unsigned rule, uint16_t event, uint8_t umask, uint64_t gp_mask, const char **why)
{
    const char *w = NULL;
    uint64_t m = gp_mask;
    if (rule == PMU_CNT_RULE_AMD_F15H) {
        m = gp_mask & f15h_mask(event, umask, &w);
        if (!m && !w)
            w = "the family 15h counters that can count it are not present";
    } else if (rule == PMU_CNT_RULE_AMD_PAIR && event == 0x003) {
        m = 0;
        w = "event 003H counts up to 64 per cycle and needs an even/odd counter pair with the Merge event (0FFFH) "
            "on the odd one (Linux amd_is_pair_event_code); pmubench does not program counter pairs";
    }
    if (why)
        *why = m ? NULL : w;
    return m;
}

void pmu_dec_amd_evtsel(uint64_t v, struct pmu_amd_evtsel *f)
{
    f->event = (uint16_t)((v & AMD_PERF_CTL_EVENT_LO_MASK) |
                          (((v & AMD_PERF_CTL_EVENT_HI_MASK) >> AMD_PERF_CTL_EVENT_HI_SHIFT) << 8));
    f->umask = (uint8_t)((v & AMD_PERF_CTL_UMASK_MASK) >> AMD_PERF_CTL_UMASK_SHIFT);
    f->cmask = (uint8_t)((v & AMD_PERF_CTL_CMASK_MASK) >> AMD_PERF_CTL_CMASK_SHIFT);
    f->usr = (v & AMD_PERF_CTL_USR) != 0;
    f->os = (v & AMD_PERF_CTL_OS) != 0;
    f->edge = (v & AMD_PERF_CTL_EDGE) != 0;
    f->int_en = (v & AMD_PERF_CTL_INT) != 0;
    f->en = (v & AMD_PERF_CTL_EN) != 0;
    f->inv = (v & AMD_PERF_CTL_INV) != 0;
    f->guest_only = (v & AMD_PERF_CTL_GUEST_ONLY) != 0;
    f->host_only = (v & AMD_PERF_CTL_HOST_ONLY) != 0;
}

uint64_t pmu_enc_p4_escr(const struct pmu_p4_escr *f)
{
    uint64_t v = (((uint64_t)f->event_select << P4_ESCR_EVENT_SELECT_SHIFT) & P4_ESCR_EVENT_SELECT_MASK) |
                 ((uint64_t)f->event_mask << P4_ESCR_EVENT_MASK_SHIFT) |
                 (((uint64_t)f->tag_value << P4_ESCR_TAG_VALUE_SHIFT) & P4_ESCR_TAG_VALUE_MASK);
    if (f->tag_enable)
        v |= P4_ESCR_TAG_ENABLE;
    if (f->t0_os)
        v |= P4_ESCR_T0_OS;
    if (f->t0_usr)
        v |= P4_ESCR_T0_USR;
    if (f->t1_os)
        v |= P4_ESCR_T1_OS;
    if (f->t1_usr)
        v |= P4_ESCR_T1_USR;
    return v;
}

void pmu_dec_p4_escr(uint64_t v, struct pmu_p4_escr *f)
{
    f->event_select = (uint8_t)((v & P4_ESCR_EVENT_SELECT_MASK) >> P4_ESCR_EVENT_SELECT_SHIFT);
    f->event_mask = (uint16_t)((v & P4_ESCR_EVENT_MASK_MASK) >> P4_ESCR_EVENT_MASK_SHIFT);
    f->tag_value = (uint8_t)((v & P4_ESCR_TAG_VALUE_MASK) >> P4_ESCR_TAG_VALUE_SHIFT);
    f->tag_enable = (v & P4_ESCR_TAG_ENABLE) != 0;
    f->t0_os = (v & P4_ESCR_T0_OS) != 0;
    f->t0_usr = (v & P4_ESCR_T0_USR) != 0;
    f->t1_os = (v & P4_ESCR_T1_OS) != 0;
    f->t1_usr = (v & P4_ESCR_T1_USR) != 0;
}

uint64_t pmu_enc_p4_cccr(const struct pmu_p4_cccr *f)
{
    uint64_t v = (((uint64_t)f->escr_select << P4_CCCR_ESCR_SELECT_SHIFT) & P4_CCCR_ESCR_SELECT_MASK) |
                 (((uint64_t)f->active_thread << P4_CCCR_ACTIVE_THREAD_SHIFT) & P4_CCCR_ACTIVE_THREAD_MASK) |
                 (((uint64_t)f->threshold << P4_CCCR_THRESHOLD_SHIFT) & P4_CCCR_THRESHOLD_MASK);
    if (f->enable)
        v |= P4_CCCR_ENABLE;
    if (f->compare)
        v |= P4_CCCR_COMPARE;
    if (f->complement)
        v |= P4_CCCR_COMPLEMENT;
    if (f->edge)
        v |= P4_CCCR_EDGE;
    if (f->force_ovf)
        v |= P4_CCCR_FORCE_OVF;
    if (f->ovf_pmi_t0)
        v |= P4_CCCR_OVF_PMI_T0;
    if (f->ovf_pmi_t1)
        v |= P4_CCCR_OVF_PMI_T1;
    if (f->cascade)
        v |= P4_CCCR_CASCADE;
    return v;
}

void pmu_dec_p4_cccr(uint64_t v, struct pmu_p4_cccr *f)
{
    f->escr_select = (uint8_t)((v & P4_CCCR_ESCR_SELECT_MASK) >> P4_CCCR_ESCR_SELECT_SHIFT);
    f->active_thread = (uint8_t)((v & P4_CCCR_ACTIVE_THREAD_MASK) >> P4_CCCR_ACTIVE_THREAD_SHIFT);
    f->threshold = (uint8_t)((v & P4_CCCR_THRESHOLD_MASK) >> P4_CCCR_THRESHOLD_SHIFT);
    f->enable = (v & P4_CCCR_ENABLE) != 0;
    f->compare = (v & P4_CCCR_COMPARE) != 0;
    f->complement = (v & P4_CCCR_COMPLEMENT) != 0;
    f->edge = (v & P4_CCCR_EDGE) != 0;
    f->force_ovf = (v & P4_CCCR_FORCE_OVF) != 0;
    f->ovf_pmi_t0 = (v & P4_CCCR_OVF_PMI_T0) != 0;
    f->ovf_pmi_t1 = (v & P4_CCCR_OVF_PMI_T1) != 0;
    f->cascade = (v & P4_CCCR_CASCADE) != 0;
}

/* Counter sets per ESCR: the "0" ESCR of a group feeds the group's first counters, the "1" ESCR
 * the second ones ([P4] table "Performance Counter MSRs and Associated CCCR and ESCR MSRs";
 * the same assignment as FreeBSD hwpmc_p4.c and Linux p4_event_bind_map). */
#define P4C(a) (1U << (a))
#define BPU_0 (P4C(0) | P4C(1))
#define BPU_1 (P4C(2) | P4C(3))
#define MS_0 (P4C(4) | P4C(5))
#define MS_1 (P4C(6) | P4C(7))
#define FLAME_0 (P4C(8) | P4C(9))
#define FLAME_1 (P4C(10) | P4C(11))
#define IQ_0 (P4C(12) | P4C(13) | P4C(16))
#define IQ_1 (P4C(14) | P4C(15) | P4C(17))

const struct p4_escr_info p4_escr_table[] = {
    /* BPU counters 0-3 */
    {"BSU_ESCR0", MSR_P4_BSU_ESCR0, 7, BPU_0, false},
    {"BSU_ESCR1", MSR_P4_BSU_ESCR1, 7, BPU_1, false},
    {"FSB_ESCR0", MSR_P4_FSB_ESCR0, 6, BPU_0, false},
    {"FSB_ESCR1", MSR_P4_FSB_ESCR1, 6, BPU_1, false},
    {"MOB_ESCR0", MSR_P4_MOB_ESCR0, 2, BPU_0, false},
    {"MOB_ESCR1", MSR_P4_MOB_ESCR1, 2, BPU_1, false},
    {"PMH_ESCR0", MSR_P4_PMH_ESCR0, 4, BPU_0, false},
    {"PMH_ESCR1", MSR_P4_PMH_ESCR1, 4, BPU_1, false},
    {"BPU_ESCR0", MSR_P4_BPU_ESCR0, 0, BPU_0, false},
    {"BPU_ESCR1", MSR_P4_BPU_ESCR1, 0, BPU_1, false},
    {"IS_ESCR0", MSR_P4_IS_ESCR0, 1, BPU_0, false},
    {"IS_ESCR1", MSR_P4_IS_ESCR1, 1, BPU_1, false},
    {"ITLB_ESCR0", MSR_P4_ITLB_ESCR0, 3, BPU_0, false},
    {"ITLB_ESCR1", MSR_P4_ITLB_ESCR1, 3, BPU_1, false},
    {"IX_ESCR0", MSR_P4_IX_ESCR0, 5, BPU_0, false},
    {"IX_ESCR1", MSR_P4_IX_ESCR1, 5, BPU_1, false},
    /* MS counters 4-7 */
    {"MS_ESCR0", MSR_P4_MS_ESCR0, 0, MS_0, false},
    {"MS_ESCR1", MSR_P4_MS_ESCR1, 0, MS_1, false},
    {"TBPU_ESCR0", MSR_P4_TBPU_ESCR0, 2, MS_0, false},
    {"TBPU_ESCR1", MSR_P4_TBPU_ESCR1, 2, MS_1, false},
    {"TC_ESCR0", MSR_P4_TC_ESCR0, 1, MS_0, false},
    {"TC_ESCR1", MSR_P4_TC_ESCR1, 1, MS_1, false},
    /* FLAME counters 8-11 */
    {"FLAME_ESCR0", MSR_P4_FLAME_ESCR0, 0, FLAME_0, false},
    {"FLAME_ESCR1", MSR_P4_FLAME_ESCR1, 0, FLAME_1, false},
    {"FIRM_ESCR0", MSR_P4_FIRM_ESCR0, 1, FLAME_0, false},
    {"FIRM_ESCR1", MSR_P4_FIRM_ESCR1, 1, FLAME_1, false},
    {"SAAT_ESCR0", MSR_P4_SAAT_ESCR0, 2, FLAME_0, false},
    {"SAAT_ESCR1", MSR_P4_SAAT_ESCR1, 2, FLAME_1, false},
    {"U2L_ESCR0", MSR_P4_U2L_ESCR0, 3, FLAME_0, false},
    {"U2L_ESCR1", MSR_P4_U2L_ESCR1, 3, FLAME_1, false},
    {"DAC_ESCR0", MSR_P4_DAC_ESCR0, 5, FLAME_0, false},
    {"DAC_ESCR1", MSR_P4_DAC_ESCR1, 5, FLAME_1, false},
    /* IQ counters 12-17 */
    {"IQ_ESCR0", MSR_P4_IQ_ESCR0, 0, IQ_0, true},
    {"IQ_ESCR1", MSR_P4_IQ_ESCR1, 0, IQ_1, true},
    {"ALF_ESCR0", MSR_P4_ALF_ESCR0, 1, IQ_0, false},
    {"ALF_ESCR1", MSR_P4_ALF_ESCR1, 1, IQ_1, false},
    {"RAT_ESCR0", MSR_P4_RAT_ESCR0, 2, IQ_0, false},
    {"RAT_ESCR1", MSR_P4_RAT_ESCR1, 2, IQ_1, false},
    {"SSU_ESCR0", MSR_P4_SSU_ESCR0, 3, IQ_0, false},
    {"CRU_ESCR0", MSR_P4_CRU_ESCR0, 4, IQ_0, false},
    {"CRU_ESCR1", MSR_P4_CRU_ESCR1, 4, IQ_1, false},
    {"CRU_ESCR2", MSR_P4_CRU_ESCR2, 5, IQ_0, false},
    {"CRU_ESCR3", MSR_P4_CRU_ESCR3, 5, IQ_1, false},
    {"CRU_ESCR4", MSR_P4_CRU_ESCR4, 6, IQ_0, false},
    {"CRU_ESCR5", MSR_P4_CRU_ESCR5, 6, IQ_1, false},
};
const unsigned p4_escr_table_len = ARRAY_SIZE(p4_escr_table);

const struct p4_escr_info *pmu_p4_escr_by_msr(uint32_t msr)
{
    for (unsigned i = 0; i < p4_escr_table_len; i++)
        if (p4_escr_table[i].msr == msr)
            return &p4_escr_table[i];
    return NULL;
}

const struct p4_escr_info *pmu_p4_escr_by_name(const char *name)
{
    for (unsigned i = 0; i < p4_escr_table_len; i++) {
        const char *a = p4_escr_table[i].name, *b = name;
        while (*a && kl_tolower(*a) == kl_tolower(*b)) {
            a++;
            b++;
        }
        if (*a == 0 && *b == 0)
            return &p4_escr_table[i];
    }
    return NULL;
}
