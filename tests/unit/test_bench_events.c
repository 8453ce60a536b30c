/* test_bench_events.c - which event each benchmark counts on each PMU model: the benchmarks' own lists, resolved by
 * their own code (ca_count) against the model's generated tables (pmu_caps_for_model), must give the encodings the
 * guides print. The expected codes below are typed from the documents, not from libpfm4:
 *   [PAG]  Core i7 / Xeon 5500 Performance Analysis Guide: Table 1 (cycles, stalls, divider), Table 3 (precise
 *          loads), Table 15 (DTLB), Table 17 (4K aliasing), Table 18 (BR_MISP_EXEC; the extracted text's header
 *          reads "Table 10", between Tables 17 and 19), Table 32 (uncore IMC)
 *   [SDM]  Table 18-1 architectural events (C5H/00H, 3CH/00H)
 *   [WSM]  Intel's Westmere event files (github.com/intel/perfmon WSM-EP-DP / WSM-EP-SP): LOAD_BLOCK.OVERLAP_STORE
 *          03H/02H
 *   [AMD]  Basic Performance Measurements for AMD Athlon 64, Opteron and Phenom: 4.2.1 (76H), 4.4 (46H, unit mask
 *          07H on family 10h, else 00H), 4.5.1 (C3H), 4.5.2 (C9H), 4.6.1 (47H); family 10h BKDG: CAH retired
 *          indirect branches mispredicted, D1H dispatch stalls
 *   [P4]   SDM NetBurst event tables / FreeBSD pmc.p4(3): ESCR event select and mask bits
 * This program implements pmu/pmu_bench_api.h itself (instead of tests/unit/fake_pmu.c): an event is accepted when
 * pmu_event_parse accepts it for the model, as pmu_count_accepts does in the image. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <string.h>

#include "bench/branch.h"
#include "bench/cycle_accounting.h"
#include "pmu/event.h"
#include "pmu/pmu_bench_api.h"
#include "pmu/pmu_model.h"
#include "pmu_events.h"

/* ---- pmu/pmu_bench_api.h over the generated tables of one model ------------------------------------------- */

static const struct pmu_event_table *tabs[2];
static unsigned ntabs;
static unsigned gp;

const char *pmu_core_cycles_method(void) { return NULL; }
bool pmu_core_cycles_read(uint64_t *value)
{
    (void)value;
    return false;
}
unsigned pmu_count_max_events(const char **why)
{
    if (!gp && why)
        *why = "test: no model";
    return gp;
}
bool pmu_count_accepts(const char *spec, char *why, size_t whylen)
{
    struct pmu_event_enc e;
    char err[200];
    bool ok = ntabs && pmu_event_parse(tabs, ntabs, spec, &e, err, sizeof(err)) == PMU_EV_OK;
    if (!ok && why)
        snprintf(why, whylen, "%s", ntabs ? err : "no table");
    return ok;
}
const char *pmu_count_event_table(void) { return ntabs ? tabs[0]->name : NULL; }
enum pmu_count_status pmu_count_around(const char *const *specs, unsigned n, void (*fn)(void *), void *arg,
                                       uint64_t *counts, char *why, size_t whylen)
{
    (void)specs, (void)why, (void)whylen;
    fn(arg);
    for (unsigned i = 0; i < n; i++)
        counts[i] = 1;
    return PMU_COUNT_OK;
}
bool pmu_latency_pebs_available(void) { return false; }
void pmu_latency_pebs(const struct pmu_latency_pebs_ctx *c, int (*replay)(void *arg), void *arg,
                      struct pmu_latency_pebs_result *out)
{
    (void)c, (void)replay, (void)arg;
    *out = (struct pmu_latency_pebs_result){.why = "no PMU in this program"};
}

/* The model row's tables, as pmu_init() takes them; table (optional) replaces the core table (06_25 is the wsm
 * row with libpfm4's "wsm" table, pmu_caps_for_model gives 06_2C's "wsm_dp"). */
static void use_model(const char *row, const char *table)
{
    struct pmu_caps caps;
    assert_int_equal(pmu_caps_for_model(row, &caps), 0);
    ntabs = 0;
    tabs[ntabs++] = pmu_event_table_find(table ? table : caps.event_table);
    assert_non_null(tabs[0]);
    if (caps.uncore_table && (tabs[ntabs] = pmu_event_table_find(caps.uncore_table)) != NULL)
        ntabs++;
    gp = caps.gp_counters;
    assert_true(gp > 0);
}

static void noop(void *arg) { (void)arg; }

/* The list's event on the current model, parsed; NULL when the list has none (and then why in note). */
static const char *resolve(const char *const *list, struct pmu_event_enc *e, char *note, size_t notelen)
{
    struct ca_event ev = {.candidates = list};
    char why[320];
    int n = ca_count(&ev, 1, noop, NULL, why, sizeof(why));
    snprintf(note, notelen, "%s", ev.note);
    if (n != 1)
        return NULL;
    char err[200];
    if (pmu_event_parse(tabs, ntabs, ev.used, e, err, sizeof(err)) != PMU_EV_OK)
        fail_msg("%s: %s", ev.used, err);
    return ev.used;
}

/* ---- expectations ------------------------------------------------------------------------------------------ */

enum { NONE = 0xFFFF };
struct want {
    const char *what;
    const char *const *list;
    uint16_t event; /* NONE: the list has no event for this model; NetBurst: ESCR event select */
    uint16_t umask; /* NetBurst: ESCR event mask */
    uint8_t cmask, inv;
    const char *src;
};

static const char *const *term(const char *penalty)
{
    for (size_t i = 0; i < ca_n_terms; i++)
        if (!strcmp(ca_terms[i].penalty, penalty))
            return ca_terms[i].candidates;
    fail_msg("no cycle-accounting term %s", penalty);
    return NULL;
}

static void check(const char *model, const struct want *w, size_t n, enum pmu_tbl_kind kind)
{
    for (size_t i = 0; i < n; i++) {
        struct pmu_event_enc e;
        char note[CA_NOTE_MAX];
        const char *used = resolve(w[i].list, &e, note, sizeof(note));
        if (w[i].event == NONE) {
            if (used)
                fail_msg("%s %s: counts %s, but %s has no such event", model, w[i].what, used, w[i].src);
            continue;
        }
        if (!used)
            fail_msg("%s %s: nothing counted (%s); %s gives %03XH/%02XH", model, w[i].what, note, w[i].src,
                     w[i].event, w[i].umask);
        /* the first entry for this model counts: nothing refused on the way */
        if (note[0])
            fail_msg("%s %s: %s counted after a fallback: %s", model, w[i].what, used, note);
        unsigned ev, um, cm = 0, inv = 0;
        if (e.kind == PMU_TBL_KIND_NETBURST) {
            ev = (unsigned)(e.escr >> 25) & 0x3F; /* ESCR[30:25] event select */
            um = (unsigned)(e.escr >> 9) & 0xFFFF; /* ESCR[24:9] event mask */
        } else if (e.kind == PMU_TBL_KIND_AMD_CORE) {
            ev = (unsigned)(e.evtsel & 0xFF) | (unsigned)((e.evtsel >> 32) & 0xF) << 8; /* EventSelect[11:8] at 35:32 */
            um = (unsigned)(e.evtsel >> 8) & 0xFF;
        } else {
            ev = (unsigned)e.evtsel & 0xFF;
            um = (unsigned)(e.evtsel >> 8) & 0xFF;
            cm = (unsigned)(e.evtsel >> 24) & 0xFF;
            inv = (unsigned)(e.evtsel >> 23) & 1;
        }
        if (e.kind != kind && !(kind == PMU_TBL_KIND_INTEL_CORE && e.kind == PMU_TBL_KIND_INTEL_UNCORE))
            fail_msg("%s %s: %s is a kind-%u event", model, w[i].what, used, e.kind);
        if (ev != w[i].event || um != w[i].umask || cm != w[i].cmask || inv != w[i].inv)
            fail_msg("%s %s: %s encodes %03XH/%02XH cmask %u inv %u; %s gives %03XH/%02XH cmask %u inv %u", model,
                     w[i].what, used, ev, um, cm, inv, w[i].src, w[i].event, w[i].umask, w[i].cmask, w[i].inv);
    }
}

/* Nehalem and Westmere: the same codes ([PAG] is Nehalem's guide; Intel's Westmere event files agree). */
#define NHM_WANT(sf_event, sf_umask, sf_src)                                                                        \
    {"branch: conditional (penalty, pattern sweep)", branch_ev_cond, 0x89, 0x01, 0, 0,                             \
     "[PAG] Table 18 BR_MISP_EXEC.COND"},                                                                            \
    {"branch: indirect call", branch_ev_indirect, 0x89, 0x20, 0, 0, "[PAG] Table 18 BR_MISP_EXEC.INDIRECT_NEAR_CALL"}, \
    {"branch: return stack", branch_ev_return, 0x89, 0x08, 0, 0, "[PAG] Table 18 BR_MISP_EXEC.RETURN_NEAR"},        \
    {"cycle accounting: branch term", ca_ev_br_misp, 0x89, 0x7F, 0, 0, "[PAG] Table 18 BR_MISP_EXEC.ANY (AAJ80)"},   \
    {"cycles", ca_ev_cycles, 0x3C, 0x00, 0, 0, "[PAG] Table 1 CPU_CLK_UNHALTED.THREAD_P"},                          \
    {"stalls", ca_ev_stalls, 0xC2, 0x01, 1, 1, "[PAG] Table 1 UOPS_RETIRED.STALL_CYCLES (C 1, I 1)"},               \
    {"term dram_local", term(CA_P_DRAM), 0xCB, 0x10, 0, 0, "[PAG] Table 3 MEM_LOAD_RETIRED.LLC_MISS"},              \
    {"term llc_hit", term(CA_P_LLC), 0xCB, 0x04, 0, 0, "[PAG] Table 3 MEM_LOAD_RETIRED.LLC_UNSHARED_HIT"},          \
    {"term l2_hit", term(CA_P_L2), 0xCB, 0x02, 0, 0, "[PAG] Table 3 MEM_LOAD_RETIRED.L2_HIT"},                      \
    {"term l1d_miss_hit_lfb", term(CA_P_LFB), 0xCB, 0x40, 0, 0, "[PAG] Table 3 MEM_LOAD_RETIRED.HIT_LFB"},          \
    {"term dtlb_miss_4k", term(CA_P_DTLB), 0x08, 0x02, 0, 0, "[PAG] Table 15 DTLB_LOAD_MISSES.WALK_COMPLETED"},     \
    {"term / penalty divider", ca_ev_div_busy, 0x14, 0x01, 0, 0, "[PAG] Table 1 ARITH.CYCLES_DIV_BUSY"},          \
    {"term 4k_alias", term(CA_P_ALIAS), 0x07, 0x01, 0, 0, "[PAG] Table 17 PARTIAL_ADDRESS_ALIAS"},                 \
    {"term store_forward_fail_size", term(CA_P_SF_FAIL), sf_event, sf_umask, 0, 0, sf_src},                        \
    {"term line_split_load", term(CA_P_LINE_SPLIT), NONE, 0, 0, 0, "[PAG] (no split-load event)"},                  \
    {"bandwidth: uncore reads", ca_ev_unc_reads, 0x2C, 0x07, 0, 0, "[PAG] Table 32 UNC_IMC_NORMAL_READS.ANY"},      \
    {"bandwidth: uncore writes", ca_ev_unc_writes, 0x2F, 0x07, 0, 0, "[PAG] Table 32 UNC_IMC_WRITES.FULL.ANY"}

static void test_nehalem(void **state)
{
    (void)state;
    use_model("nhm", NULL); /* 06_1A */
    assert_string_equal(tabs[0]->name, "nhm");
    const struct want w[] = {NHM_WANT(NONE, 0, "[PAG] Store Forwarding: 'There is not event that detects when this occurs'")};
    check("nhm", w, sizeof(w) / sizeof(w[0]), PMU_TBL_KIND_INTEL_CORE);
}

static void test_westmere(void **state)
{
    (void)state;
    const struct want w[] = {NHM_WANT(0x03, 0x02, "[WSM] LOAD_BLOCK.OVERLAP_STORE")};
    use_model("wsm", NULL); /* 06_2C: libpfm4 wsm_dp */
    assert_string_equal(tabs[0]->name, "wsm_dp");
    check("wsm 06_2C", w, sizeof(w) / sizeof(w[0]), PMU_TBL_KIND_INTEL_CORE);
    use_model("wsm", "wsm"); /* 06_25 */
    check("wsm 06_25", w, sizeof(w) / sizeof(w[0]), PMU_TBL_KIND_INTEL_CORE);
    use_model("wsm_ex", NULL); /* 06_2F: wsm_dp, no 0x391 uncore */
    const struct want ex[] = {
        {"branch: conditional", branch_ev_cond, 0x89, 0x01, 0, 0, "[PAG] Table 18"},
        {"cycle accounting: branch term", ca_ev_br_misp, 0x89, 0x7F, 0, 0, "[PAG] Table 18"},
        {"bandwidth: uncore reads", ca_ev_unc_reads, NONE, 0, 0, 0, "Westmere-EX has a box uncore, not programmed"},
    };
    check("wsm_ex", ex, sizeof(ex) / sizeof(ex[0]), PMU_TBL_KIND_INTEL_CORE);
}

/* Later Intel (the generic rows): only the architectural events; the branch tests count every mispredicted
 * branch (the records say so), and cycle accounting has no stall event. */
static void test_architectural(void **state)
{
    (void)state;
    use_model("arch_v4", NULL);
    assert_string_equal(tabs[0]->name, "arch");
    const struct want w[] = {
        {"branch: conditional", branch_ev_cond, 0xC5, 0x00, 0, 0, "[SDM] Table 18-1 branch misses retired"},
        {"branch: indirect call", branch_ev_indirect, 0xC5, 0x00, 0, 0, "[SDM] Table 18-1"},
        {"branch: return stack", branch_ev_return, 0xC5, 0x00, 0, 0, "[SDM] Table 18-1"},
        {"cycle accounting: branch term", ca_ev_br_misp, 0xC5, 0x00, 0, 0, "[SDM] Table 18-1"},
        {"cycles", ca_ev_cycles, 0x3C, 0x00, 0, 0, "[SDM] Table 18-1 unhalted core cycles"},
        {"stalls", ca_ev_stalls, NONE, 0, 0, 0, "[SDM] Table 18-1 (no stall event)"},
        {"term dram_local", term(CA_P_DRAM), NONE, 0, 0, 0, "[SDM] Table 18-1"},
        {"divider", ca_ev_div_busy, NONE, 0, 0, 0, "[SDM] Table 18-1"},
        {"bandwidth: uncore reads", ca_ev_unc_reads, NONE, 0, 0, 0, "no 0x391 uncore"},
    };
    check("arch_v4", w, sizeof(w) / sizeof(w[0]), PMU_TBL_KIND_INTEL_CORE);
}

static void test_amd(void **state)
{
    (void)state;
#define AMD_WANT(dtlb_umask)                                                                                         \
    {"branch: conditional", branch_ev_cond, 0xC3, 0x00, 0, 0, "[AMD] 4.5.1 Mispred_branches (every branch)"},       \
    {"branch: indirect call", branch_ev_indirect, 0xCA, 0x00, 0, 0, "family 10h BKDG: retired indirect mispredicted"}, \
    {"branch: return stack", branch_ev_return, 0xC9, 0x00, 0, 0, "[AMD] 4.5.2 Mispred_near_ret"},                   \
    {"cycle accounting: branch term", ca_ev_br_misp, 0xC3, 0x00, 0, 0, "[AMD] 4.5.1 Mispred_branches"},             \
    {"cycles", ca_ev_cycles, 0x76, 0x00, 0, 0, "[AMD] 4.2.1 CPU_clocks"},                                          \
    {"stalls", ca_ev_stalls, 0xD1, 0x00, 0, 0, "family 10h BKDG: dispatch stalls"},                               \
    {"term dtlb_miss_4k", term(CA_P_DTLB), 0x46, dtlb_umask, 0, 0, "[AMD] 4.4 DTLB_L1M_L2M"},                       \
    {"term line_split_load", term(CA_P_LINE_SPLIT), 0x47, 0x00, 0, 0, "[AMD] 4.6.1 Misalign_access"},              \
    {"term dram_local", term(CA_P_DRAM), NONE, 0, 0, 0, "[AMD] (no retired-load data-source event)"},              \
    {"divider", ca_ev_div_busy, NONE, 0, 0, 0, "[AMD]"},                                                            \
    {"bandwidth: uncore reads", ca_ev_unc_reads, NONE, 0, 0, 0, "[AMD] 4.2.2 uses other events"}
    const struct want k10[] = {AMD_WANT(0x07)};
    use_model("amd_fam10h", NULL);
    check("amd_fam10h", k10, sizeof(k10) / sizeof(k10[0]), PMU_TBL_KIND_AMD_CORE);
    const struct want k8[] = {AMD_WANT(0x00)};
    use_model("amd_k8", NULL);
    check("amd_k8", k8, sizeof(k8) / sizeof(k8[0]), PMU_TBL_KIND_AMD_CORE);
#undef AMD_WANT
}

static void test_netburst(void **state)
{
    (void)state;
    use_model("netburst", NULL);
    const struct want w[] = {
        {"branch: conditional", branch_ev_cond, 0x05, 1u << 1, 0, 0, "[P4] retired_mispred_branch_type CONDITIONAL"},
        {"branch: indirect call", branch_ev_indirect, 0x05, 1u << 2, 0, 0, "[P4] retired_mispred_branch_type CALL"},
        {"branch: return stack", branch_ev_return, 0x05, 1u << 3, 0, 0, "[P4] retired_mispred_branch_type RETURN"},
        {"cycle accounting: branch term", ca_ev_br_misp, 0x03, 1u << 0, 0, 0, "[P4] mispred_branch_retired NBOGUS"},
        {"cycles", ca_ev_cycles, 0x13, 1u << 0, 0, 0, "[P4] global_power_events RUNNING"},
        {"stalls", ca_ev_stalls, NONE, 0, 0, 0, "[P4] (no stall-cycle event used)"},
    };
    check("netburst", w, sizeof(w) / sizeof(w[0]), PMU_TBL_KIND_NETBURST);
    /* the TBPU ESCRs (MSR_TBPU_ESCR0/1) select retired_mispred_branch_type */
    struct pmu_event_enc e;
    char note[CA_NOTE_MAX];
    assert_non_null(resolve(branch_ev_cond, &e, note, sizeof(note)));
    assert_true(e.escr_msr[0] == 0x3C2 && e.escr_msr[1] == 0x3C3);
}

/* On Nehalem, bare BR_MISP_RETIRED means libpfm4's default unit mask NEAR_CALL (C5H/02H: mispredicted calls
 * only), and BR_MISP_RETIRED:ALL_BRANCHES does not exist: the reason the lists name BR_MISP_EXEC. */
static void test_nehalem_retired_branch_event_is_calls_only(void **state)
{
    (void)state;
    use_model("nhm", NULL);
    struct pmu_event_enc e;
    char err[200];
    assert_int_equal(pmu_event_parse(tabs, ntabs, "BR_MISP_RETIRED", &e, err, sizeof(err)), PMU_EV_OK);
    assert_true((e.evtsel & 0xFFFF) == 0x02C5);
    assert_int_not_equal(pmu_event_parse(tabs, ntabs, "BR_MISP_RETIRED:ALL_BRANCHES", &e, err, sizeof(err)), PMU_EV_OK);
}

/* Every "tables@spec" entry of every list names only generated tables, and parses on each of them: a misspelt
 * name would otherwise just never count (with a note), on a model no other test boots. */
static void test_every_entry_parses_where_listed(void **state)
{
    (void)state;
    const char *const *lists[3 + 6 + 16] = {branch_ev_cond, branch_ev_indirect, branch_ev_return, ca_ev_cycles,
                                            ca_ev_stalls,   ca_ev_br_misp,      ca_ev_div_busy,   ca_ev_unc_reads,
                                            ca_ev_unc_writes};
    size_t nl = 9, checked = 0;
    for (size_t i = 0; i < ca_n_terms; i++)
        lists[nl++] = ca_terms[i].candidates;
    for (size_t l = 0; l < nl; l++)
        for (const char *const *c = lists[l]; *c; c++) {
            const char *at = strchr(*c, '@');
            if (!at)
                continue;
            char names[160];
            snprintf(names, sizeof(names), "%.*s", (int)(at - *c), *c);
            for (char *save = NULL, *t = strtok_r(names, " ", &save); t; t = strtok_r(NULL, " ", &save)) {
                const struct pmu_event_table *tb = pmu_event_table_find(t);
                if (!tb)
                    fail_msg("%s: no generated table '%s'", *c, t);
                struct pmu_event_enc e;
                char err[200];
                if (pmu_event_parse(&tb, 1, at + 1, &e, err, sizeof(err)) != PMU_EV_OK)
                    fail_msg("%s on %s: %s", at + 1, t, err);
                checked++;
            }
        }
    assert_true(checked > 40);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_every_entry_parses_where_listed),
        cmocka_unit_test(test_nehalem),
        cmocka_unit_test(test_westmere),
        cmocka_unit_test(test_architectural),
        cmocka_unit_test(test_amd),
        cmocka_unit_test(test_netburst),
        cmocka_unit_test(test_nehalem_retired_branch_event_is_calls_only),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
