/* lbr_capture.c - LBR stack capture: DEBUGCTL.LBR on around the code, freeze, read TOS/FROM/TO, decode. */
#include "pmu/lbr_capture.h"
#include "kernel/msr.h"
#include "pmu/msr_pmu.h"
#include "kernel/fmt.h"
#include "pmu/known_loop.h"
#include "pmu/pmu.h"

int pmu_lbr_begin(struct pmu_lbr_capture *c, uint32_t capture)
{
    const struct pmu_caps *cp = &PMU.caps;
    const char *why = NULL;
    uint64_t v = 0;

    memset(c, 0, sizeof(*c));
    c->status = -1;
    if (!pmu_may_program(PMU_FEAT_LBR, &why)) {
        c->why = why;
        return -1;
    }
    c->valid = pmu_figures_valid(PMU_FEAT_LBR, &c->why);
    if (cp->lbr_depth > PMU_LBR_MAX) {
        c->why = "LBR stack deeper than this code reads";
        return -1;
    }
    c->select = cp->lbr_select ? lbr_select_value(capture) : 0;
    c->id = pmu_window_next_id();

    struct json *j = pmu_rec_begin("pmu_measure");
    json_kv_uint(j, "id", c->id);
    json_kv_str(j, "what", "lbr");
    json_kv_str(j, "model", cp->model);
    json_kv_str(j, "arch", pmu_arch_name(cp->arch));
    json_kv_bool(j, "assumed", PMU.assumed);
    json_key(j, "events");
    json_arr_begin(j);
    json_arr_end(j);
    json_key(j, "lbr");
    json_obj_begin(j);
    json_kv_uint(j, "format", cp->lbr_format);
    json_kv_uint(j, "depth", cp->lbr_depth);
    json_kv_hex(j, "from_msr", cp->lbr_from);
    pmu_json_msr(j, "to_msr", cp->lbr_to);
    json_kv_hex(j, "tos_msr", cp->lbr_tos);
    if (cp->lbr_select)
        json_kv_hex(j, "select", c->select);
    else
        json_kv_null(j, "select");
    json_obj_end(j);
    pmu_rec_end();
    pmu_window_open(c->id);

    if (rdmsr_safe(MSR_IA32_DEBUGCTL, &v) != MSR_OK)
        c->faults++;
    c->debugctl = v;
    if (cp->lbr_select && wrmsr_safe(MSR_LBR_SELECT, c->select) != MSR_OK)
        c->faults++;
    /* [NHM] Table 4: LBR and TR share hardware; BTS/TR stay as they were (off in this kernel). */
    if (wrmsr_safe(MSR_IA32_DEBUGCTL, (v & ~(IA32_DEBUGCTL_TR | IA32_DEBUGCTL_BTS)) | IA32_DEBUGCTL_LBR) != MSR_OK)
        c->faults++;
    c->active = true;
    c->status = 0;
    return 0;
}

void pmu_lbr_end(struct pmu_lbr_capture *c)
{
    const struct pmu_caps *cp = &PMU.caps;
    static uint64_t from[PMU_LBR_MAX], to[PMU_LBR_MAX];
    uint64_t v;

    if (!c->active)
        return;
    /* Off first: every branch after this point would push the captured ones out. */
    if (wrmsr_safe(MSR_IA32_DEBUGCTL, c->debugctl & ~IA32_DEBUGCTL_LBR) != MSR_OK)
        c->faults++;
    c->active = false;
    if (rdmsr_safe(cp->lbr_tos, &c->tos) != MSR_OK)
        c->faults++;
    for (unsigned i = 0; i < cp->lbr_depth; i++) {
        if (rdmsr_safe(cp->lbr_from + i, &v) != MSR_OK)
            c->faults++;
        from[i] = v;
        to[i] = 0;
        if (cp->lbr_to) {
            if (rdmsr_safe(cp->lbr_to + i, &v) != MSR_OK)
                c->faults++;
            to[i] = v;
        }
    }
    if (cp->lbr_select && wrmsr_safe(MSR_LBR_SELECT, 0) != MSR_OK)
        c->faults++;
    int n = lbr_decode_stack(cp->lbr_format, cp->lbr_depth, c->tos, from, to, NULL, c->e);
    c->n = n > 0 ? (unsigned)n : 0;
    if (n < 0 && c->valid) {
        c->valid = false;
        c->why = "LBR format not decoded";
    }
    if (c->faults && c->valid) {
        c->valid = false;
        c->why = "an MSR access faulted";
    }
    pmu_window_close(c->id);
}

unsigned pmu_lbr_count(const struct pmu_lbr_capture *c, uint64_t from, uint64_t to)
{
    unsigned k = 0;
    for (unsigned i = 0; i < c->n; i++)
        if (c->e[i].from == from && c->e[i].to == to)
            k++;
    return k;
}

void pmu_lbr_json(const struct pmu_lbr_capture *c, struct json *j)
{
    bool ok = c->status == 0 && c->valid;
    json_kv_str(j, "lbr_status", ok ? "ok" : "unavailable");
    if (!ok)
        json_kv_str(j, "lbr_reason", c->why ? c->why : "unavailable");
    json_kv_uint(j, "lbr_format", PMU.caps.lbr_format);
    json_kv_uint(j, "lbr_depth", PMU.caps.lbr_depth);
    if (!ok) {
        json_kv_null(j, "lbr");
        return;
    }
    json_kv_uint(j, "lbr_tos", c->tos);
    json_key(j, "lbr");
    json_arr_begin(j);
    for (unsigned i = 0; i < c->n; i++) {
        json_obj_begin(j);
        json_kv_hex(j, "from", c->e[i].from);
        json_kv_hex(j, "to", c->e[i].to);
        if (c->e[i].has_mispred)
            json_kv_bool(j, "mispred", c->e[i].mispred);
        json_obj_end(j);
    }
    json_arr_end(j);
}

int pmu_lbr_known_loop(struct pmu_lbr_capture *c, uint64_t iterations, unsigned *hits)
{
    /* Conditional branches only where LBR_SELECT exists: the calls, returns and jumps on the way
     * out of the loop then cannot push its branches off a 16-deep stack. */
    if (pmu_lbr_begin(c, LBR_CAPTURE_RING0 | LBR_CAPTURE_JCC) != 0) {
        if (hits)
            *hits = 0;
        return -1;
    }
    pmu_known_loop(iterations ? iterations : 1);
    pmu_lbr_end(c);
    if (hits)
        *hits = pmu_lbr_count(c, pmu_known_loop_branch(), pmu_known_loop_head());
    return 0;
}
