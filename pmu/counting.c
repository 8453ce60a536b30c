/* counting.c - counter groups on every supported register layout, in the order the manuals require:
 * configure and clear with the counters globally disabled, enable last, disable first, then read. */
#include "pmu/counting.h"
#include "kernel/msr.h"
#include "pmu/msr_pmu.h"
#include "kernel/fmt.h"
#include "kernel/kernel.h"
#include "kernel/out.h"
#include "build/gen/pmu_events.h"
#include "pmu/encode.h"
#include "pmu/pmu.h"

static uint64_t width_mask(unsigned w) { return w >= 64 ? ~0ULL : (1ULL << w) - 1; }
static uint64_t low_mask64(unsigned n) { return n >= 64 ? ~0ULL : (1ULL << n) - 1; }

/* IA32_PERF_GLOBAL_CTRL gates the counters (perfmon v2+). Without it (v1) the local EN bits do. */
static bool intel_global(void) { return PMU.caps.arch == PMU_ARCH_INTEL && PMU.caps.global_ctrl; }

static bool uses(const struct pmu_group *g, uint8_t kind);
/* The core global registers are touched only by groups with core counters. */
static bool core_global(const struct pmu_group *g)
{
    return intel_global() && (uses(g, PMU_SLOT_INTEL_GP) || uses(g, PMU_SLOT_INTEL_FIXED));
}
static bool amd_global(void) { return PMU.caps.vendor == PMU_VENDOR_AMD && PMU.caps.perfmon_v2; }

/* IA32_PERF_GLOBAL_OVF_CTRL clearing every status bit this PMU has: Ovf_Uncore (61) exists from
 * perfmon v3 on (msr_pmu.h table), and a reserved bit would make the write #GP on a v2 part. */
static uint64_t ovf_clear_value(void)
{
    uint64_t v = pmu_enc_global_ovf_clear_all(PMU.caps.gp_counters, PMU.caps.fixed_counters);
    if (PMU.caps.version < 3)
        v &= ~IA32_PERF_GLOBAL_STATUS_UNC_OVF;
    return v;
}

static void wr(struct pmu_group *g, uint32_t msr, uint64_t v)
{
    if (wrmsr_safe(msr, v) != MSR_OK)
        g->faults++;
}

static uint64_t rd(struct pmu_group *g, uint32_t msr, bool *ok)
{
    uint64_t v = 0;
    bool good = rdmsr_safe(msr, &v) == MSR_OK;
    if (!good)
        g->faults++;
    if (ok)
        *ok = good;
    return v;
}

/* ---- groups --------------------------------------------------------------------------------- */

void pmu_group_init(struct pmu_group *g, const char *what, const char *label)
{
    memset(g, 0, sizeof(*g));
    g->what = what;
    g->label = label;
}

static const char *strip_table(const char *name, const char **table, char *tbuf, size_t tlen)
{
    const char *p = name;
    for (; *p; p++) {
        if (p[0] == ':' && p[1] == ':') {
            size_t n = (size_t)(p - name);
            if (n >= tlen)
                n = tlen - 1;
            memcpy(tbuf, name, n);
            tbuf[n] = 0;
            *table = tbuf;
            return p + 2;
        }
    }
    *table = NULL;
    return name;
}

int pmu_group_add(struct pmu_group *g, const struct pmu_event_enc *e, unsigned alt, unsigned bit, int ev)
{
    const struct pmu_caps *c = &PMU.caps;
    struct pmu_slot *s;
    char tbuf[24];
    const char *table;

    if (g->n >= PMU_GROUP_MAX || !e)
        return -1;
    s = &g->s[g->n];
    memset(s, 0, sizeof(*s));
    fmt_snprintf(s->name, sizeof(s->name), "%s", strip_table(e->name, &table, tbuf, sizeof(tbuf)));
    const struct pmu_event_table *tt = table ? pmu_event_table_find(table) : NULL;
    s->table = tt ? tt->name : NULL;
    s->ev = ev;
    switch (e->cls) {
    case PMU_CLS_CORE:
        if (c->arch == PMU_ARCH_INTEL) {
            if (bit >= 32) {
                unsigned j = bit - 32;
                if (j >= 32 || !(c->fixed_mask & (1u << j)))
                    return -1;
                s->kind = PMU_SLOT_INTEL_FIXED;
                s->index = (uint8_t)j;
                s->width = c->fixed_width;
                s->ctl_msr = MSR_IA32_FIXED_CTR_CTRL;
                s->ctr_msr = MSR_IA32_FIXED_CTR(j);
                s->ctl = e->fixed_ctrl & IA32_FIXED_CTR_CTRL_FIELD_MASK;
            } else {
                if (bit >= c->gp_counters)
                    return -1;
                s->kind = PMU_SLOT_INTEL_GP;
                s->index = (uint8_t)bit;
                s->width = c->gp_width;
                s->ctl_msr = MSR_IA32_PERFEVTSEL(bit);
                /* IA32_A_PMCx where PERF_CAPABILITIES[13] allows full-width writes (the preload is then
                 * written as is, not sign-extended from bit 31), else IA32_PMCx. */
                s->ctr_msr = pmu_gp_ctr_rw_msr(c, bit);
                s->ctl = alt == 1 && e->alt_extra_msr ? e->alt_evtsel : e->evtsel;
                s->extra_msr = alt == 1 && e->alt_extra_msr ? e->alt_extra_msr : e->extra_msr;
                s->extra = e->extra;
            }
        } else if (c->vendor == PMU_VENDOR_AMD) {
            if (bit >= c->gp_counters)
                return -1;
            s->kind = PMU_SLOT_AMD;
            s->index = (uint8_t)bit;
            s->width = c->gp_width ? c->gp_width : 48;
            s->ctl_msr = pmu_gp_ctl_msr(c, bit);
            s->ctr_msr = pmu_gp_ctr_msr(c, bit);
            s->ctl = e->evtsel;
        } else {
            return -1;
        }
        break;
    case PMU_CLS_UNCORE:
        if (c->uncore != PMU_UNCORE_NHM)
            return -1;
        if (bit == 32) {
            s->kind = PMU_SLOT_UNCORE_FIXED;
            s->ctl_msr = MSR_UNCORE_FIXED_CTR_CTRL;
            s->ctr_msr = MSR_UNCORE_FIXED_CTR0;
        } else {
            if (bit >= c->uncore_counters || bit >= UNCORE_NUM_PMC)
                return -1;
            s->kind = PMU_SLOT_UNCORE_GP;
            s->index = (uint8_t)bit;
            s->ctl_msr = MSR_UNCORE_PERFEVTSEL(bit);
            s->ctr_msr = MSR_UNCORE_PMC(bit);
        }
        s->width = c->uncore_width ? c->uncore_width : 48;
        s->ctl = e->evtsel;
        break;
    case PMU_CLS_AMD_NB:
        if (c->uncore != PMU_UNCORE_AMD_NB || bit >= c->nb_counters)
            return -1;
        s->kind = PMU_SLOT_AMD_NB;
        s->index = (uint8_t)bit;
        s->width = 48;
        s->ctl_msr = MSR_F15H_NB_PERF_CTL(bit);
        s->ctr_msr = MSR_F15H_NB_PERF_CTR(bit);
        s->ctl = e->evtsel;
        break;
    case PMU_CLS_NETBURST:
        if (c->arch != PMU_ARCH_NETBURST || bit >= P4_NUM_COUNTERS || alt > 1 || !e->escr_msr[alt])
            return -1;
        s->kind = PMU_SLOT_P4;
        s->index = (uint8_t)bit;
        s->width = c->gp_width ? c->gp_width : 40;
        s->ctl_msr = MSR_P4_CCCR(bit);
        s->ctr_msr = MSR_P4_PERFCTR(bit);
        s->ctl = e->evtsel;
        s->escr_msr = e->escr_msr[alt];
        s->escr = e->escr;
        break;
    default:
        return -1;
    }
    g->n++;
    return 0;
}

static void avail_masks(uint64_t avail[SCHED_NUM_CLASSES])
{
    const struct pmu_caps *c = &PMU.caps;
    memset(avail, 0, sizeof(uint64_t) * SCHED_NUM_CLASSES);
    if (c->arch == PMU_ARCH_INTEL)
        avail[PMU_CLS_CORE] = low_mask64(c->gp_counters) | ((uint64_t)c->fixed_mask << 32);
    else if (c->vendor == PMU_VENDOR_AMD)
        avail[PMU_CLS_CORE] = low_mask64(c->gp_counters);
    if (c->uncore == PMU_UNCORE_NHM)
        avail[PMU_CLS_UNCORE] =
            low_mask64(MIN(c->uncore_counters, UNCORE_NUM_PMC)) | (c->uncore_fixed ? PMU_CNT_FIXED(0) : 0);
    if (c->uncore == PMU_UNCORE_AMD_NB)
        avail[PMU_CLS_AMD_NB] = low_mask64(c->nb_counters);
    if (c->arch == PMU_ARCH_NETBURST)
        avail[PMU_CLS_NETBURST] = low_mask64(MIN(c->gp_counters, P4_NUM_COUNTERS));
}

static int schedule(const struct pmu_event_enc *e, unsigned n, bool gp_only, struct sched_result *res, char *err,
                    size_t errlen)
{
    struct sched_event se[SCHED_MAX_EVENTS];
    uint64_t avail[SCHED_NUM_CLASSES];

    if (n > SCHED_MAX_EVENTS) {
        fmt_snprintf(err, errlen, "%u events: at most %u", n, (unsigned)SCHED_MAX_EVENTS);
        return -1;
    }
    for (unsigned i = 0; i < n; i++) {
        if (sched_event_from_enc(&e[i], gp_only, &se[i]) != 0) {
            fmt_snprintf(err, errlen, "%s: no counter description", e[i].name);
            return -1;
        }
    }
    avail_masks(avail);
    /* Never a counter the self-test disabled; an event left with none is refused by name, with the counters and
     * the checks that failed (pmu/usable.h). Not under pmu_assume: the dry run programs what a real run would. */
    if (!PMU.assumed) {
        const char *names[SCHED_MAX_EVENTS];
        for (unsigned i = 0; i < n; i++)
            names[i] = e[i].name;
        if (pmu_usable_restrict(&PMU.ctrs, se, names, n, avail, err, errlen) != 0)
            return -1;
    }
    int rc = sched_assign(se, n, avail, res);
    if (rc == SCHED_ERR_IMPOSSIBLE) {
        fmt_snprintf(err, errlen, "%s: no counter of this PMU can count it", e[res->bad_event].name);
        return -1;
    }
    if (rc != SCHED_OK) {
        fmt_snprintf(err, errlen, "cannot schedule the events");
        return -1;
    }
    return 0;
}

/* CPUID.0AH:EBX: an architectural event the CPU marks unavailable is not counted on a general counter
 * (SDM 18.2.1.2; e.g. erratum AAJ80 parts set bit 6, branch mispredicts retired). An event that may
 * also use a fixed counter keeps only the fixed one (fixed counters are enumerated by EDX/ECX, not by
 * EBX); one with no counter left is refused: -1 with the reason in err. */
static int arch_gate(struct pmu_event_enc *e, char *err, size_t errlen)
{
    char why[192];
    int bit;
    if (e->cls != PMU_CLS_CORE || PMU.caps.arch != PMU_ARCH_INTEL || (bit = pmu_arch_event_index(e->evtsel)) < 0)
        return 0;
    const char *name = e->name;
    for (const char *p = e->name; *p; p++)
        if (p[0] == ':' && p[1] == ':')
            name = p + 2;
    if (pmu_arch_event_refused(&PMU.caps, name, (unsigned)bit, why, sizeof(why)) == 0)
        return 0;
    e->cntmask &= ~0xffffffffULL; /* general counters are bits 31:0 of cntmask */
    if (e->cntmask)
        return 0;
    fmt_snprintf(err, errlen, "%s", why);
    return -1;
}

int pmu_group_add_all(struct pmu_group *g, const struct pmu_event_enc *e, unsigned n, bool gp_only, char *err,
                      size_t errlen)
{
    static struct sched_result res;
    static struct pmu_event_enc gated[SCHED_MAX_EVENTS];
    if (n > SCHED_MAX_EVENTS) {
        fmt_snprintf(err, errlen, "%u events: at most %u", n, (unsigned)SCHED_MAX_EVENTS);
        return -1;
    }
    for (unsigned i = 0; i < n; i++) {
        gated[i] = e[i];
        if (arch_gate(&gated[i], err, errlen) != 0)
            return -1;
    }
    e = gated;
    if (schedule(e, n, gp_only, &res, err, errlen) != 0)
        return -1;
    if (res.ngroups > 1) {
        fmt_snprintf(err, errlen, "%u events need %u groups", n, res.ngroups);
        return -1;
    }
    for (unsigned i = 0; i < n; i++) {
        if (pmu_group_add(g, &e[i], res.a[i].alt, res.a[i].counter, (int)i) != 0) {
            fmt_snprintf(err, errlen, "%s: counter %u does not exist", e[i].name, res.a[i].counter);
            return -1;
        }
    }
    return 0;
}

const struct pmu_slot *pmu_group_slot(const struct pmu_group *g, int ev)
{
    for (unsigned i = 0; i < g->n; i++)
        if (g->s[i].ev == ev)
            return &g->s[i];
    return NULL;
}

void pmu_slot_counter_name(const struct pmu_slot *s, char *buf, size_t len)
{
    static const char *const fmt[] = {
        [PMU_SLOT_INTEL_GP] = "pmc%u",     [PMU_SLOT_INTEL_FIXED] = "fixed%u", [PMU_SLOT_UNCORE_GP] = "unc_pmc%u",
        [PMU_SLOT_UNCORE_FIXED] = "unc_fixed", [PMU_SLOT_AMD] = "ctr%u",   [PMU_SLOT_AMD_NB] = "nb_ctr%u",
        [PMU_SLOT_P4] = "p4_ctr%u",
    };
    fmt_snprintf(buf, len, s->kind < ARRAY_SIZE(fmt) ? fmt[s->kind] : "?%u", s->index);
}

static const char *slot_kind_name(uint8_t k)
{
    static const char *const n[] = {"gp", "fixed", "uncore", "uncore_fixed", "amd", "amd_nb", "p4"};
    return k < ARRAY_SIZE(n) ? n[k] : "?";
}

uint32_t pmu_slot_rdpmc_index(const struct pmu_slot *s)
{
    /* SDM RDPMC: ECX[30] selects the fixed counters; AMD and NetBurst take the counter number. */
    return s->kind == PMU_SLOT_INTEL_FIXED ? RDPMC_ECX_FIXED | s->index : s->index;
}

static bool uses(const struct pmu_group *g, uint8_t kind)
{
    for (unsigned i = 0; i < g->n; i++)
        if (g->s[i].kind == kind)
            return true;
    return false;
}

/* IA32_PERF_GLOBAL_CTRL enabling the group's general-purpose and fixed counters. */
static uint64_t global_mask(const struct pmu_group *g)
{
    uint32_t pmc = 0, fixed = 0;
    for (unsigned i = 0; i < g->n; i++) {
        if (g->s[i].kind == PMU_SLOT_INTEL_GP)
            pmc |= 1u << g->s[i].index;
        else if (g->s[i].kind == PMU_SLOT_INTEL_FIXED)
            fixed |= 1u << g->s[i].index;
    }
    return pmu_enc_global_ctrl(pmc, fixed);
}

static uint64_t uncore_mask(const struct pmu_group *g)
{
    uint8_t pc = 0;
    bool fc = false;
    for (unsigned i = 0; i < g->n; i++) {
        if (g->s[i].kind == PMU_SLOT_UNCORE_GP)
            pc |= (uint8_t)(1u << g->s[i].index);
        else if (g->s[i].kind == PMU_SLOT_UNCORE_FIXED)
            fc = true;
    }
    return pmu_enc_uncore_global_ctrl(pc, fc, 0, false);
}

static uint64_t amd_global_mask(const struct pmu_group *g)
{
    uint64_t m = 0;
    for (unsigned i = 0; i < g->n; i++)
        if (g->s[i].kind == PMU_SLOT_AMD)
            m |= AMD64_PERF_CNTR_GLOBAL_EN(g->s[i].index);
    return m;
}

/* IA32_FIXED_CTR_CTRL: each fixed slot's 4-bit field (its ctl) in place ([NHM] Tables 8/9). */
static uint64_t fixed_ctrl_value(const struct pmu_group *g)
{
    uint64_t v = 0;
    for (unsigned i = 0; i < g->n; i++) {
        const struct pmu_slot *s = &g->s[i];
        if (s->kind == PMU_SLOT_INTEL_FIXED)
            v = pmu_enc_fixed_ctrl(v, s->index, s->ctl & IA32_FIXED_CTR_CTRL_EN_OS, s->ctl & IA32_FIXED_CTR_CTRL_EN_USR,
                                   s->ctl & IA32_FIXED_CTR_CTRL_ANY, s->ctl & IA32_FIXED_CTR_CTRL_PMI);
    }
    return v;
}

static bool is_offcore_rsp(uint32_t msr) { return msr == MSR_OFFCORE_RSP_0 || msr == MSR_OFFCORE_RSP_1; }

/* The value for a GP slot's extra MSR. An off-core response word is built from its request and
 * response halves ([NHM] Table 12; the event parser checked both are non-empty and nothing else is
 * set: pmu_offcore_rsp_valid). The load-latency threshold comes encoded (pmu_enc_ldlat). */
static uint64_t extra_value(const struct pmu_slot *s)
{
    uint64_t v;
    if (!is_offcore_rsp(s->extra_msr))
        return s->extra;
    pmu_enc_offcore_rsp((uint8_t)((s->extra & OFFCORE_RSP_REQUEST_MASK) >> OFFCORE_RSP_REQUEST_SHIFT),
                        (uint8_t)((s->extra & OFFCORE_RSP_RESPONSE_MASK) >> OFFCORE_RSP_RESPONSE_SHIFT), &v);
    return v;
}

/* The local enable bit of a control value, per layout. */
static uint64_t local_en(uint8_t kind)
{
    switch (kind) {
    case PMU_SLOT_INTEL_GP: return IA32_PERFEVTSEL_EN;
    case PMU_SLOT_AMD:
    case PMU_SLOT_AMD_NB: return AMD_PERF_CTL_EN;
    case PMU_SLOT_P4: return P4_CCCR_ENABLE;
    default: return 0;
    }
}

/* Slots whose local enable does the starting (no global control gates them). */
static bool locally_enabled(uint8_t kind)
{
    if (kind == PMU_SLOT_INTEL_GP)
        return !intel_global();
    if (kind == PMU_SLOT_AMD)
        return true; /* PerfMonV2 adds a global gate, the EN bit still has to be set */
    return kind == PMU_SLOT_AMD_NB || kind == PMU_SLOT_P4;
}

bool pmu_group_uses_uncore(const struct pmu_group *g)
{
    return uses(g, PMU_SLOT_UNCORE_GP) || uses(g, PMU_SLOT_UNCORE_FIXED);
}

void pmu_group_record(const struct pmu_group *g, int cpu, int socket)
{
    char cname[24];
    struct json *j = pmu_rec_begin("pmu_measure");
    json_kv_uint(j, "id", g->id);
    json_kv_str(j, "what", g->what);
    if (g->label)
        json_kv_str(j, "label", g->label);
    json_kv_str(j, "model", PMU.caps.model);
    json_kv_str(j, "arch", pmu_arch_name(PMU.caps.arch));
    json_kv_bool(j, "assumed", PMU.assumed);
    if (cpu >= 0) {
        json_kv_uint(j, "cpu", (uint64_t)cpu);
        json_kv_uint(j, "socket", (uint64_t)socket);
    }
    json_key(j, "events");
    json_arr_begin(j);
    for (unsigned i = 0; i < g->n; i++) {
        const struct pmu_slot *s = &g->s[i];
        json_obj_begin(j);
        json_kv_str(j, "name", s->name);
        json_kv_str(j, "table", s->table);
        json_kv_str(j, "kind", slot_kind_name(s->kind));
        pmu_slot_counter_name(s, cname, sizeof(cname));
        json_kv_str(j, "counter", cname);
        json_kv_uint(j, "index", s->index);
        json_kv_uint(j, "width", s->width);
        json_kv_hex(j, "ctl_msr", s->ctl_msr);
        json_kv_hex(j, "ctr_msr", s->ctr_msr);
        json_kv_hex(j, "ctl", s->ctl);
        pmu_json_msr(j, "extra_msr", s->extra_msr);
        if (s->extra_msr)
            json_kv_hex(j, "extra", s->extra);
        pmu_json_msr(j, "escr_msr", s->escr_msr);
        if (s->escr_msr)
            json_kv_hex(j, "escr", s->escr);
        json_kv_hex(j, "preload", s->preload);
        json_obj_end(j);
    }
    json_arr_end(j);
    if (core_global(g))
        json_kv_hex(j, "global_ctrl", global_mask(g));
    if (uses(g, PMU_SLOT_INTEL_FIXED))
        json_kv_hex(j, "fixed_ctr_ctrl", fixed_ctrl_value(g));
    if (pmu_group_uses_uncore(g))
        json_kv_hex(j, "uncore_global_ctrl", uncore_mask(g));
    if (g->pebs) {
        json_key(j, "pebs");
        json_obj_begin(j);
        json_kv_uint(j, "counter", g->pebs_counter);
        json_kv_hex(j, "pebs_enable", g->pebs_enable);
        json_kv_uint(j, "ldlat", g->pebs_ldlat);
        json_kv_uint(j, "period", g->pebs_period);
        json_obj_end(j);
    }
    pmu_rec_end();
}

static struct pmu_group cycles_group;

int pmu_group_program(struct pmu_group *g)
{
    const struct pmu_caps *c = &PMU.caps;
    bool unc = uses(g, PMU_SLOT_UNCORE_GP) || uses(g, PMU_SLOT_UNCORE_FIXED);
    bool unc_fixed = uses(g, PMU_SLOT_UNCORE_FIXED);
    uint64_t unc_fixed_ctl = 0;

    if (g->n == 0)
        return -1;
    /* One group at a time: a running cycles counter (pmu_cycles_start) would be switched off by the
     * global disable below anyway; stop it properly so its reader sees it is not running. */
    if (g != &cycles_group && cycles_group.programmed)
        pmu_cycles_stop();
    g->id = pmu_window_next_id();
    pmu_group_record(g, -1, -1);
    pmu_window_open(g->id);

    /* Errata AAK100 (06_1A), AAP53 (06_1E), BD53 (06_2C), and the other Nehalem/Westmere models Linux
     * covers (pmu_errata_for): a reprogrammed general counter may count core cycles or nothing unless
     * the PMU is reset first - Linux intel_pmu_nhm_workaround's sequence (pmu_nhm_reset_sequence),
     * before every group with core counters. It starts with the global disable and ends with all four
     * PERFEVTSELx/PMCx pairs clear; the programming below then starts from that state. */
    if (core_global(g) && (c->errata & PMU_ERRATUM_NHM_RESET)) {
        struct pmu_msr_write seq[PMU_NHM_RESET_MAX_STEPS];
        /* IA32_PEBS_ENABLE only where PEBS is usable (IA32_MISC_ENABLE[12] clear): nothing else can
         * have enabled it, and a faulting write would invalidate the group's counts. */
        unsigned n = pmu_nhm_reset_sequence(seq, ARRAY_SIZE(seq), c->gp_counters, c->pebs);
        for (unsigned i = 0; i < n; i++)
            wr(g, seq[i].msr, seq[i].value);
    }
    /* [NHM] 3.1.3: a counter whose IA32_PERF_GLOBAL_CTRL bit is clear ignores all other programming,
     * so everything below happens with the counters globally disabled. */
    if (core_global(g))
        wr(g, MSR_IA32_PERF_GLOBAL_CTRL, 0);
    if (amd_global())
        wr(g, MSR_AMD64_PERF_CNTR_GLOBAL_CTL, 0);
    if (unc)
        wr(g, MSR_UNCORE_PERF_GLOBAL_CTRL, 0);

    for (unsigned i = 0; i < g->n; i++) {
        struct pmu_slot *s = &g->s[i];
        uint64_t ctl = locally_enabled(s->kind) ? s->ctl & ~local_en(s->kind) : s->ctl;
        switch (s->kind) {
        case PMU_SLOT_INTEL_GP:
            if (s->extra_msr) /* [NHM] 3.4: the extra register with the event */
                wr(g, s->extra_msr, extra_value(s));
            wr(g, s->ctl_msr, ctl);
            /* [NHM] 3.3.1: writes set bits 31:0, 47:32 sign-extend from bit 31. */
            wr(g, s->ctr_msr, s->preload & width_mask(s->width));
            break;
        case PMU_SLOT_INTEL_FIXED:
            wr(g, s->ctr_msr, s->preload & width_mask(s->width));
            break;
        case PMU_SLOT_UNCORE_GP:
            wr(g, s->ctl_msr, s->ctl);
            wr(g, s->ctr_msr, 0);
            break;
        case PMU_SLOT_UNCORE_FIXED:
            wr(g, s->ctr_msr, 0);
            unc_fixed_ctl = s->ctl;
            break;
        case PMU_SLOT_AMD:
        case PMU_SLOT_AMD_NB:
            wr(g, s->ctl_msr, ctl);
            wr(g, s->ctr_msr, s->preload & width_mask(s->width));
            break;
        case PMU_SLOT_P4:
            wr(g, s->escr_msr, s->escr);
            wr(g, s->ctl_msr, ctl);
            wr(g, s->ctr_msr, s->preload & width_mask(s->width));
            break;
        }
    }
    if (uses(g, PMU_SLOT_INTEL_FIXED))
        wr(g, MSR_IA32_FIXED_CTR_CTRL, fixed_ctrl_value(g));
    if (unc_fixed)
        wr(g, MSR_UNCORE_FIXED_CTR_CTRL, unc_fixed_ctl);
    if (core_global(g))
        wr(g, MSR_IA32_PERF_GLOBAL_OVF_CTRL, ovf_clear_value());
    if (amd_global())
        wr(g, MSR_AMD64_PERF_CNTR_GLOBAL_STATUS_CLR, low_mask64(c->gp_counters));
    if (unc)
        wr(g, MSR_UNCORE_PERF_GLOBAL_OVF_CTRL, pmu_enc_uncore_global_ovf_clear_all());
    if (g->pebs)
        wr(g, MSR_IA32_PEBS_ENABLE, g->pebs_enable);
    g->programmed = true;
    return 0;
}

void pmu_group_start(struct pmu_group *g)
{
    if (!g->programmed)
        return;
    if (uses(g, PMU_SLOT_UNCORE_GP) || uses(g, PMU_SLOT_UNCORE_FIXED))
        wr(g, MSR_UNCORE_PERF_GLOBAL_CTRL, uncore_mask(g));
    for (unsigned i = 0; i < g->n; i++)
        if (locally_enabled(g->s[i].kind) || (g->local_off && g->s[i].kind == PMU_SLOT_INTEL_GP))
            wr(g, g->s[i].ctl_msr, g->s[i].ctl | local_en(g->s[i].kind));
    if (g->local_off && uses(g, PMU_SLOT_INTEL_FIXED))
        wr(g, MSR_IA32_FIXED_CTR_CTRL, fixed_ctrl_value(g));
    if (g->local_off && g->pebs)
        wr(g, MSR_IA32_PEBS_ENABLE, g->pebs_enable); /* last before the enable, as pmu_group_stop cleared it */
    g->local_off = false;
    if (amd_global())
        wr(g, MSR_AMD64_PERF_CNTR_GLOBAL_CTL, amd_global_mask(g));
    if (core_global(g))
        wr(g, MSR_IA32_PERF_GLOBAL_CTRL, global_mask(g)); /* last: counting starts here */
    g->running = true;
}

void pmu_group_stop(struct pmu_group *g)
{
    if (!g->running)
        return;
    if (core_global(g))
        wr(g, MSR_IA32_PERF_GLOBAL_CTRL, 0); /* first: counting stops here */
    /* [NHM] 3.1.3: an armed PEBS assist fires on the next event even after the global disable; with
     * PEBS_EN clear it cannot. At once, before anything else (the drain reads the buffer after this). */
    if (g->pebs && core_global(g))
        wr(g, MSR_IA32_PEBS_ENABLE, 0);
    if (amd_global())
        wr(g, MSR_AMD64_PERF_CNTR_GLOBAL_CTL, 0);
    /* SDM Vol. 3B "Freezing counters on SMI": with IA32_DEBUGCTL.FREEZE_WHILE_SMM the SMI clears
     * IA32_PERF_GLOBAL_CTRL and RSM sets its enable bits to 1 - not to what they were. A counter still
     * enabled in its PERFEVTSELx or IA32_FIXED_CTR_CTRL would count again from the RSM: extra counts
     * before the read, and during a PEBS poll drain (IA32_PEBS_ENABLE clear) an overflow with no assist
     * and no reload, which ends the sampling. So the local enables go too; pmu_group_start restores
     * them. (docs/pmu.md, Errata: "SMI restart after RSM".) */
    bool intel_local = core_global(g);
    for (unsigned i = 0; i < g->n; i++)
        if (locally_enabled(g->s[i].kind) || (intel_local && g->s[i].kind == PMU_SLOT_INTEL_GP))
            wr(g, g->s[i].ctl_msr, g->s[i].ctl & ~local_en(g->s[i].kind));
    if (intel_local && uses(g, PMU_SLOT_INTEL_FIXED))
        wr(g, MSR_IA32_FIXED_CTR_CTRL, 0);
    g->local_off = intel_local;
    /* An SMI between the global disable and the writes above restarted the counters for those few
     * writes; RSM leaves IA32_PERF_GLOBAL_CTRL non-zero, which says so. */
    if (intel_local && PMU.smm_freeze > 0 && rd(g, MSR_IA32_PERF_GLOBAL_CTRL, NULL) != 0)
        g->smm_restart = true;
    if (uses(g, PMU_SLOT_UNCORE_GP) || uses(g, PMU_SLOT_UNCORE_FIXED))
        wr(g, MSR_UNCORE_PERF_GLOBAL_CTRL, 0);
    g->running = false;
}

void pmu_group_read(struct pmu_group *g)
{
    bool unc = uses(g, PMU_SLOT_UNCORE_GP) || uses(g, PMU_SLOT_UNCORE_FIXED);
    if (!g->programmed)
        return;
    g->status = core_global(g) ? rd(g, MSR_IA32_PERF_GLOBAL_STATUS, NULL) : 0;
    g->unc_status = unc ? rd(g, MSR_UNCORE_PERF_GLOBAL_STATUS, NULL) : 0;
    for (unsigned i = 0; i < g->n; i++) {
        struct pmu_slot *s = &g->s[i];
        uint64_t m = width_mask(s->width);
        bool ovf = false;
        s->raw = rd(g, s->ctr_msr, &s->read_ok) & m;
        switch (s->kind) {
        case PMU_SLOT_INTEL_GP: ovf = (g->status & IA32_PERF_GLOBAL_STATUS_OVF_PMC(s->index)) != 0; break;
        case PMU_SLOT_INTEL_FIXED: ovf = (g->status & IA32_PERF_GLOBAL_STATUS_OVF_FIXED(s->index)) != 0; break;
        case PMU_SLOT_UNCORE_GP: ovf = (g->unc_status & UNCORE_PERF_GLOBAL_STATUS_OVF_PC(s->index)) != 0; break;
        case PMU_SLOT_UNCORE_FIXED: ovf = (g->unc_status & UNCORE_PERF_GLOBAL_STATUS_OVF_FC0) != 0; break;
        case PMU_SLOT_P4: ovf = (rd(g, s->ctl_msr, NULL) & P4_CCCR_OVF) != 0; break; /* sticky CCCR.OVF */
        default:
            /* AMD has no overflow status: a preloaded counter that reads below its start wrapped. */
            ovf = s->preload && s->raw < s->preload;
            break;
        }
        s->overflowed = ovf;
        /* One wrap at most: a 48-bit counter needs ~20 h at 4 GHz to wrap twice, a 40-bit one ~4.5 min. */
        if (ovf && !(s->kind == PMU_SLOT_AMD || s->kind == PMU_SLOT_AMD_NB))
            s->value = s->raw + (s->width >= 64 ? 0 : (1ULL << s->width)) - s->preload;
        else
            s->value = (s->raw - s->preload) & m;
    }
}

void pmu_group_release(struct pmu_group *g)
{
    bool unc = uses(g, PMU_SLOT_UNCORE_GP) || uses(g, PMU_SLOT_UNCORE_FIXED);
    if (!g->programmed)
        return;
    if (g->running)
        pmu_group_stop(g);
    if (g->pebs)
        wr(g, MSR_IA32_PEBS_ENABLE, 0);
    for (unsigned i = 0; i < g->n; i++) {
        struct pmu_slot *s = &g->s[i];
        switch (s->kind) {
        case PMU_SLOT_INTEL_GP:
            wr(g, s->ctl_msr, 0);
            /* The off-core request goes back to 0; the load-latency threshold has no "off" value
             * (minimum 3, [NHM] Table 17) and stays as it was. */
            if (is_offcore_rsp(s->extra_msr))
                wr(g, s->extra_msr, 0);
            break;
        case PMU_SLOT_UNCORE_GP:
        case PMU_SLOT_AMD:
        case PMU_SLOT_AMD_NB:
            wr(g, s->ctl_msr, 0);
            break;
        case PMU_SLOT_P4:
            wr(g, s->ctl_msr, 0);
            wr(g, s->escr_msr, 0);
            break;
        default:
            break;
        }
    }
    if (uses(g, PMU_SLOT_INTEL_FIXED))
        wr(g, MSR_IA32_FIXED_CTR_CTRL, 0);
    if (uses(g, PMU_SLOT_UNCORE_FIXED))
        wr(g, MSR_UNCORE_FIXED_CTR_CTRL, 0);
    if (core_global(g))
        wr(g, MSR_IA32_PERF_GLOBAL_OVF_CTRL, ovf_clear_value());
    if (unc)
        wr(g, MSR_UNCORE_PERF_GLOBAL_OVF_CTRL, pmu_enc_uncore_global_ovf_clear_all());
    g->programmed = false;
    pmu_window_close(g->id);
}

/* ---- built-in encodings ------------------------------------------------------------------------ */

static int parse_first(const char *const *specs, unsigned n, struct pmu_event_enc *e)
{
    unsigned nt;
    const struct pmu_event_table *const *t = pmu_tables(&nt);
    char err[160];
    if (!nt)
        return -1;
    for (unsigned i = 0; i < n; i++)
        if (pmu_event_parse(t, nt, specs[i], e, err, sizeof(err)) == PMU_EV_OK)
            return 0;
    return -1;
}

/* The architectural encodings ([NHM] Table 25 / SDM Table 18-1: C0H/00H instructions, 3CH/00H
 * cycles; [AMD] 4.2.1: C0H retired instructions, 76H CPU clocks) for models without a table. */
static int builtin(struct pmu_event_enc *e, bool cycles)
{
    const struct pmu_caps *c = &PMU.caps;
    memset(e, 0, sizeof(*e));
    e->fixed_idx = PMU_FIXED_NONE;
    e->cls = PMU_CLS_CORE;
    if (c->arch == PMU_ARCH_INTEL) {
        struct pmu_evtsel f = {.event = cycles ? 0x3c : 0xc0, .usr = true, .os = true, .en = true};
        unsigned fx = cycles ? 1 : 0;
        e->kind = PMU_TBL_KIND_INTEL_CORE;
        e->evtsel = pmu_enc_perfevtsel(&f);
        e->cntmask = low_mask64(c->gp_counters);
        if (c->fixed_mask & (1u << fx)) {
            e->fixed_idx = (uint8_t)fx;
            e->fixed_ctrl = IA32_FIXED_CTR_CTRL_EN_OS | IA32_FIXED_CTR_CTRL_EN_USR;
            e->cntmask |= PMU_CNT_FIXED(fx);
        }
        fmt_snprintf(e->name, sizeof(e->name), "arch::%s", cycles ? "UNHALTED_CORE_CYCLES" : "INSTRUCTION_RETIRED");
        return 0;
    }
    if (c->vendor == PMU_VENDOR_AMD) {
        struct pmu_amd_evtsel f = {.event = cycles ? 0x76 : 0xc0, .usr = true, .os = true, .en = true};
        e->kind = PMU_TBL_KIND_AMD_CORE;
        e->evtsel = pmu_enc_amd_evtsel(&f);
        e->cntmask = low_mask64(c->gp_counters);
        fmt_snprintf(e->name, sizeof(e->name), "amd::%s", cycles ? "CPU_CLK_UNHALTED" : "RETIRED_INSTRUCTIONS");
        return 0;
    }
    return -1;
}

int pmu_enc_instructions(struct pmu_event_enc *e)
{
    static const char *const specs[] = {"INSTRUCTION_RETIRED", "RETIRED_INSTRUCTIONS",
                                        "instr_retired:NBOGUSNTAG:NBOGUSTAG"};
    return parse_first(specs, ARRAY_SIZE(specs), e) == 0 ? 0 : builtin(e, false);
}

int pmu_enc_cycles(struct pmu_event_enc *e)
{
    static const char *const specs[] = {"UNHALTED_CORE_CYCLES", "CPU_CLK_UNHALTED", "global_power_events:RUNNING"};
    return parse_first(specs, ARRAY_SIZE(specs), e) == 0 ? 0 : builtin(e, true);
}

/* ---- counting API ------------------------------------------------------------------------------ */

int pmu_counting_prepare(struct pmu_counting *c, const char *events, const char *label)
{
    unsigned nt;
    const struct pmu_event_table *const *t;
    const char *why = NULL;
    char spec[160];

    memset(c, 0, sizeof(*c));
    c->label = label;
    if (!events)
        events = K.cfg.events;
    if (!pmu_may_program(PMU_FEAT_COUNTING, &why)) {
        c->why = why;
        return c->status = PMU_COUNTING_UNAVAILABLE;
    }
    c->valid = pmu_figures_valid(PMU_FEAT_COUNTING, &c->why);
    t = pmu_tables(&nt);
    for (const char *p = events; *p;) {
        while (*p == ',' || kl_isspace(*p))
            p++;
        if (!*p)
            break;
        size_t n = 0;
        while (p[n] && p[n] != ',' && !kl_isspace(p[n]))
            n++;
        if (n >= sizeof(spec)) {
            fmt_snprintf(c->err, sizeof(c->err), "event specifier '%.40s...' too long", p);
            return c->status = PMU_COUNTING_ERROR;
        }
        if (c->nev >= PMU_COUNTING_MAX) {
            fmt_snprintf(c->err, sizeof(c->err), "more than %u events", (unsigned)PMU_COUNTING_MAX);
            return c->status = PMU_COUNTING_ERROR;
        }
        memcpy(spec, p, n);
        spec[n] = 0;
        p += n;
        char err[200];
        int prc = nt ? pmu_event_parse(t, nt, spec, &c->ev[c->nev], err, sizeof(err)) : PMU_EV_ERR_SYNTAX;
        if (prc != PMU_EV_OK) {
            /* A counter refusal names the event here (the parser's other errors quote it themselves). */
            if (prc == PMU_EV_ERR_NO_COUNTER)
                fmt_snprintf(c->err, sizeof(c->err), "events: %s: %s", spec, err);
            else
                fmt_snprintf(c->err, sizeof(c->err), "events: %s", nt ? err : "this PMU model has no event table");
            return c->status = PMU_COUNTING_ERROR;
        }
        if (arch_gate(&c->ev[c->nev], err, sizeof(err)) != 0) {
            fmt_snprintf(c->err, sizeof(c->err), "events: %s", err);
            return c->status = PMU_COUNTING_ERROR;
        }
        /* The uncore and the off-core response MSRs are separate features with their own gates. */
        if (c->ev[c->nev].cls == PMU_CLS_UNCORE || c->ev[c->nev].cls == PMU_CLS_AMD_NB) {
            if (!pmu_may_program(PMU_FEAT_UNCORE, &why)) {
                fmt_snprintf(c->err, sizeof(c->err), "events: %s: %s", spec, why);
                return c->status = PMU_COUNTING_ERROR;
            }
            if (c->valid && !pmu_figures_valid(PMU_FEAT_UNCORE, &c->why))
                c->valid = false;
        }
        if (c->ev[c->nev].flags & PMU_EVF_OFFCORE) {
            if (!pmu_may_program(PMU_FEAT_OFFCORE, &why)) {
                fmt_snprintf(c->err, sizeof(c->err), "events: %s: %s", spec, why);
                return c->status = PMU_COUNTING_ERROR;
            }
            if (c->valid && !pmu_figures_valid(PMU_FEAT_OFFCORE, &c->why))
                c->valid = false;
        }
        c->nev++;
    }
    if (c->nev == 0)
        return c->status = PMU_COUNTING_NONE;
    if (schedule(c->ev, c->nev, false, &c->sched, c->err, sizeof(c->err)) != 0)
        return c->status = PMU_COUNTING_ERROR;
    c->ngroups = c->sched.ngroups;
    return c->status = PMU_COUNTING_OK;
}

int pmu_counting_begin(struct pmu_counting *c, unsigned group)
{
    if (c->status != PMU_COUNTING_OK || group >= c->ngroups)
        return -1;
    pmu_group_init(&c->g, "counting", c->label);
    for (unsigned i = 0; i < c->nev; i++)
        if (c->sched.a[i].group == group &&
            pmu_group_add(&c->g, &c->ev[i], c->sched.a[i].alt, c->sched.a[i].counter, (int)i) != 0)
            return -1;
    if (pmu_group_program(&c->g) != 0)
        return -1;
    pmu_group_start(&c->g);
    return 0;
}

void pmu_counting_end(struct pmu_counting *c, unsigned group)
{
    if (c->status != PMU_COUNTING_OK || group >= c->ngroups || !c->g.programmed)
        return;
    pmu_group_stop(&c->g);
    pmu_group_read(&c->g);
    for (unsigned i = 0; i < c->g.n; i++) {
        const struct pmu_slot *s = &c->g.s[i];
        if (s->ev < 0 || s->ev >= (int)c->nev)
            continue;
        c->value[s->ev] = s->value;
        c->measured[s->ev] = s->read_ok;
        c->overflowed[s->ev] = s->overflowed;
    }
    if (c->g.faults && c->valid) {
        c->valid = false;
        c->why = "an MSR access faulted";
    }
    if (c->g.smm_restart && c->valid) {
        c->valid = false;
        c->why = "an SMI during the stop restarted the counters (RSM sets IA32_PERF_GLOBAL_CTRL)";
    }
    pmu_group_release(&c->g);
}

static const char *short_name(const struct pmu_event_enc *e)
{
    const char *p = e->name;
    for (; *p; p++)
        if (p[0] == ':' && p[1] == ':')
            return p + 2;
    return e->name;
}

void pmu_counting_json(const struct pmu_counting *c, struct json *j, double per)
{
    const char *status = c->status == PMU_COUNTING_OK ? (c->valid ? "ok" : "unavailable")
                         : c->status == PMU_COUNTING_NONE ? "none"
                         : c->status == PMU_COUNTING_ERROR ? "error"
                                                           : "unavailable";
    json_key(j, "counters");
    if (c->status == PMU_COUNTING_OK) {
        json_obj_begin(j);
        for (unsigned i = 0; i < c->nev; i++) {
            json_key(j, short_name(&c->ev[i]));
            if (c->valid && c->measured[i] && per > 0)
                json_double(j, (double)c->value[i] / per);
            else
                json_null(j);
        }
        json_obj_end(j);
    } else {
        json_null(j);
    }
    json_kv_double(j, "counters_per", per);
    json_kv_str(j, "counters_status", status);
    if (c->status == PMU_COUNTING_ERROR)
        json_kv_str(j, "counters_reason", c->err);
    else if (c->status != PMU_COUNTING_NONE && !(c->status == PMU_COUNTING_OK && c->valid))
        json_kv_str(j, "counters_reason", c->why ? c->why : "unavailable");
    if (c->status == PMU_COUNTING_OK) {
        json_key(j, "counter_groups");
        json_arr_begin(j);
        for (unsigned g = 0; g < c->ngroups; g++) {
            json_arr_begin(j);
            for (unsigned i = 0; i < c->nev; i++)
                if (c->sched.a[i].group == g)
                    json_str(j, short_name(&c->ev[i]));
            json_arr_end(j);
        }
        json_arr_end(j);
    }
}

/* ---- cycles via RDPMC ------------------------------------------------------------------------ */

bool pmu_cycles_start(uint32_t *rdpmc_idx, const char **why)
{
    struct pmu_event_enc e;
    char err[160];
    const char *w = NULL;

    pmu_cycles_stop();
    if (!pmu_may_program(PMU_FEAT_COUNTING, &w)) {
        if (why)
            *why = w;
        return false;
    }
    pmu_group_init(&cycles_group, "cycles", NULL);
    if (pmu_enc_cycles(&e) != 0 || pmu_group_add_all(&cycles_group, &e, 1, false, err, sizeof(err)) != 0) {
        if (why)
            *why = "no core-cycles event for this PMU";
        return false;
    }
    pmu_group_program(&cycles_group);
    pmu_group_start(&cycles_group);
    if (rdpmc_idx)
        *rdpmc_idx = pmu_slot_rdpmc_index(&cycles_group.s[0]);
    if (!pmu_figures_valid(PMU_FEAT_COUNTING, &w)) {
        if (why)
            *why = w; /* programmed (dry run), but RDPMC must not run */
        return false;
    }
    if (why)
        *why = NULL;
    return true;
}

uint8_t pmu_cycles_width(void) { return cycles_group.n ? cycles_group.s[0].width : 0; }

bool pmu_cycles_running(void) { return cycles_group.running; }

void pmu_cycles_stop(void)
{
    if (!cycles_group.programmed)
        return;
    pmu_group_stop(&cycles_group);
    pmu_group_read(&cycles_group);
    pmu_group_release(&cycles_group);
}
