/* pmu_flow.c - the `pmu` benchmark: every PMU path run once, each result reported or marked unavailable. */
#include "pmu/pmu_flow.h"
#include "measure/chase.h"
#include "kernel/fmt.h"
#include "kernel/io.h"
#include "kernel/kernel.h"
#include "kernel/msr.h"
#include "kernel/out.h"
#include "kernel/pmm.h"
#include "kernel/time.h"
#include "pmu/chase_buf.h"
#include "pmu/counting.h"
#include "pmu/lbr_capture.h"
#include "pmu/pebs_capture.h"
#include "pmu/pmu.h"
#include "pmu/pmu_init.h"
#include "pmu/uncore_bw.h"

/* Default counting sets: the events the documents name, so the dry-run checker can verify their
 * encodings. Nehalem/Westmere: [PAG] Tables 1 and 3 plus the fixed counters; 7 general events on 4
 * counters (L1D:REPL only on PMC0/1) need two groups. */
#define NHM_EVENTS                                                                                         \
    "INSTRUCTION_RETIRED,UNHALTED_CORE_CYCLES,UNHALTED_REFERENCE_CYCLES,MEM_INST_RETIRED:LOADS,"             \
    "MEM_LOAD_RETIRED:L1D_HIT,MEM_LOAD_RETIRED:L2_HIT,MEM_LOAD_RETIRED:LLC_UNSHARED_HIT,"                   \
    "MEM_LOAD_RETIRED:LLC_MISS,L1D:REPL,UOPS_RETIRED:STALL_CYCLES"
/* [AMD] sections 4.2.1, 4.3.1, 4.3.3, 4.3.4: IPC, DC refills, L2, L3 (EventSelect 4E0H). */
#define AMD10_EVENTS                                                                                       \
    "RETIRED_INSTRUCTIONS,CPU_CLK_UNHALTED,DATA_CACHE_ACCESSES,DATA_CACHE_MISSES,"                           \
    "DATA_CACHE_REFILLS:L2_SHARED:L2_EXCLUSIVE:L2_OWNED:L2_MODIFIED,"                                      \
    "DATA_CACHE_REFILLS_FROM_SYSTEM:SHARED:EXCLUSIVE:OWNED:MODIFIED,REQUESTS_TO_L2:INSTRUCTIONS:DATA:TLB_WALK," \
    "L2_CACHE_MISS:INSTRUCTIONS:DATA:TLB_WALK,READ_REQUEST_TO_L3_CACHE:ANY_READ:ALL_CORES"
/* [P4] pmc.p4(3): global_power_events, instr_retired, branch_retired, mispred_branch_retired (the
 * last two share CRU_ESCR0/1 with instr_retired: the scheduler must use both ESCRs). */
#define P4_EVENTS                                                                                          \
    "global_power_events:RUNNING,instr_retired:NBOGUSNTAG:NBOGUSTAG,branch_retired:MMNP:MMNM:MMTP:MMTM,"    \
    "mispred_branch_retired:BOGUS"
#define ARCH_EVENTS                                                                                        \
    "INSTRUCTION_RETIRED,UNHALTED_CORE_CYCLES,UNHALTED_REFERENCE_CYCLES,LLC_REFERENCES,LLC_MISSES,"         \
    "BRANCH_INSTRUCTIONS_RETIRED,MISPREDICTED_BRANCH_RETIRED"
/* [NHM] Table 12 request/response pairs: demand data reads from local DRAM (pmu_offcore_local_dram_event:
 * the part's own response bit, Westmere renumbered them), from the LLC without snoop (0101H), demand RFOs
 * answered HITM by another core (0402H). Nehalem has OFFCORE_RSP_0 only (three groups); Westmere moves one
 * request to OFFCORE_RSP_1 (event BBH). The chase buffer is on this CPU's node, so "local" holds. */
#define OFFCORE_OTHER_EVENTS "OFFCORE_RESPONSE_0:DMND_DATA_RD:UNCORE_HIT,OFFCORE_RESPONSE_0:DMND_RFO:OTHER_CORE_HITM"
#define COUNT_CHASE_BYTES KiB(64)
#define COUNT_CHASE_LOADS (64ULL * 256)
#define OFFCORE_CHASE_BYTES MiB(1)
#define OFFCORE_CHASE_LOADS (64ULL * 512)
#define PEBS_CHASE_BYTES KiB(256)
#define PEBS_CHASE_LOADS (64ULL * 2048)
#define BW_BYTES MiB(16)

static struct pmu_counting pc;

static bool is_row(const char *a, const char *b) { return a && !strcmp(a, b); }

const char *pmu_default_events(void)
{
    const char *m = PMU.caps.model;
    if (is_row(m, "nhm") || is_row(m, "nhm_ex") || is_row(m, "wsm") || is_row(m, "wsm_ex"))
        return NHM_EVENTS;
    if (is_row(m, "amd_fam10h"))
        return AMD10_EVENTS;
    if (is_row(m, "netburst") || is_row(m, "netburst_p"))
        return P4_EVENTS;
    if (m && !strncmp(m, "arch_v", 6))
        return ARCH_EVENTS;
    return "";
}

static void caps_record(void)
{
    struct json *j = pmu_rec_begin("pmu");
    json_kv_str(j, "status", PMU.status);
    if (PMU.reason)
        json_kv_str(j, "reason", PMU.reason);
    if (PMU.assumed)
        json_kv_str(j, "assumed", PMU.assumed_name);
    json_key(j, "caps");
    pmu_caps_json(j);
    pmu_rec_end();
    kprintf("PMU: %s %s%s%s\n", PMU.detect_ran ? PMU.caps.model : "-", PMU.status, PMU.reason ? ": " : "",
            PMU.reason ? PMU.reason : "");
}

/* Counting groups over a chase: each group runs the same deterministic chase once. */
static void counting_step(const char *what, const char *events, const char *source, size_t bytes, uint64_t loads,
                          enum pmu_feature gate)
{
    struct pmu_chase ch;
    const char *why = NULL;
    bool have_chase = false;

    if (!pmu_may_program(gate, &why)) {
        memset(&pc, 0, sizeof(pc));
        pc.status = PMU_COUNTING_UNAVAILABLE;
        pc.why = why;
    } else {
        pmu_counting_prepare(&pc, events, what);
        if (pc.status == PMU_COUNTING_OK && pmu_chase_alloc(&ch, bytes, 0xc0ffee ^ bytes, PMU_CHASE_LOCAL_NODE,
                                                                "pmu_flow_chase") == 0)
            have_chase = true;
        else if (pc.status == PMU_COUNTING_OK) {
            pc.status = PMU_COUNTING_UNAVAILABLE;
            pc.why = "cannot allocate the chase buffer";
        }
    }
    uint64_t iters = loads / CHASE_UNROLL, ticks = 0;
    if (have_chase) {
        chase_run(ch.start, iters); /* warm-up pass: the same cache state for every group */
        for (unsigned g = 0; g < pc.ngroups; g++) {
            if (pmu_counting_begin(&pc, g) != 0)
                continue;
            uint64_t t0 = rdtsc_ordered();
            chase_run(ch.start, iters);
            ticks += rdtsc_ordered() - t0;
            pmu_counting_end(&pc, g);
        }
        pmu_chase_free(&ch);
    }
    struct json *j = pmu_rec_begin("pmu_counting");
    json_kv_str(j, "what", what);
    json_kv_str(j, "bench", "chase");
    json_kv_uint(j, "bytes", bytes);
    json_kv_uint(j, "loads", iters * CHASE_UNROLL);
    json_kv_str(j, "events_source", source);
    json_kv_str(j, "per", "load");
    json_kv_uint(j, "elapsed_tsc", ticks);
    pmu_counting_json(&pc, j, (double)(iters * CHASE_UNROLL));
    pmu_rec_end();
    const char *said = pc.status == PMU_COUNTING_ERROR ? pc.err
                       : pc.status == PMU_COUNTING_NONE  ? "no events (this model has no default set; config events=)"
                                                         : pc.why;
    kprintf("PMU %s: %s (%u group(s))%s%s\n", what,
            pc.status == PMU_COUNTING_OK ? (pc.valid ? "measured" : "programmed, not measured") : "not run",
            pc.ngroups, said ? ": " : "", said ? said : "");
}

static void pebs_step(void)
{
    static struct pmu_pebs_capture cap;
    struct pmu_chase ch;
    const char *why = NULL;

    if (!pmu_may_program(PMU_FEAT_PEBS, &why) ||
        pmu_chase_alloc(&ch, PEBS_CHASE_BYTES, 0xbeb5, PMU_CHASE_LOCAL_NODE, "pmu_flow_pebs") != 0) {
        memset(&cap, 0, sizeof(cap));
        cap.status = -1;
        cap.why = why ? why : "cannot allocate the chase buffer";
        pmu_pebs_emit(&cap, "pmu_chase_256k");
        kprintf("PMU PEBS: not run: %s\n", cap.why);
        return;
    }
    chase_run(ch.start, PEBS_CHASE_LOADS / CHASE_UNROLL); /* warm-up */
    pmu_pebs_chase(&cap, "pmu_chase_256k", ch.start, PEBS_CHASE_LOADS, ch.buf, ch.bytes, 0, 0);
    pmu_chase_free(&ch);
    kprintf("PMU PEBS: %lu records, %lu outside the buffer%s%s\n", (unsigned long)cap.records,
            (unsigned long)cap.outside, cap.valid ? "" : "; not measurements: ", cap.valid ? "" : cap.why);
}

static void lbr_step(void)
{
    static struct pmu_lbr_capture lc;
    unsigned hits = 0;
    const char *why = NULL;
    bool ran = pmu_may_program(PMU_FEAT_LBR, &why) && pmu_lbr_known_loop(&lc, 1000, &hits) == 0;
    if (!ran) {
        memset(&lc, 0, sizeof(lc));
        lc.status = -1;
        lc.why = why ? why : "LBR could not be programmed";
    }
    struct json *j = pmu_rec_begin("lbr");
    json_kv_str(j, "what", "known_loop");
    json_kv_uint(j, "iterations", 1000);
    if (ran && lc.valid)
        json_kv_uint(j, "loop_branch_hits", hits);
    else
        json_kv_null(j, "loop_branch_hits");
    pmu_lbr_json(&lc, j);
    pmu_rec_end();
    kprintf("PMU LBR: %s%s%s\n", ran ? (lc.valid ? "captured" : "programmed, not measured") : "not run",
            lc.valid ? "" : ": ", lc.valid ? "" : lc.why);
}

void pmu_bench(void)
{
    pmu_probe(); /* no-op when main already ran it */
    caps_record();
    pmu_init(); /* the self-test, unless start-up already ran it */
    const char *events = K.cfg.events[0] ? K.cfg.events : pmu_default_events();
    counting_step("counting", events, K.cfg.events[0] ? "config" : "default", COUNT_CHASE_BYTES, COUNT_CHASE_LOADS,
                  PMU_FEAT_COUNTING);
    static char offcore[256];
    const char *dram = pmu_offcore_local_dram_event(PMU.ntables && PMU.tables[0] ? PMU.tables[0]->name : NULL,
                                                    PMU.caps.cpu_family, PMU.caps.cpu_model);
    fmt_snprintf(offcore, sizeof(offcore), "%s,%s", dram ? dram : "OFFCORE_RESPONSE_0:DMND_DATA_RD:LOCAL_DRAM",
                 OFFCORE_OTHER_EVENTS);
    counting_step("offcore", offcore, "default", OFFCORE_CHASE_BYTES, OFFCORE_CHASE_LOADS, PMU_FEAT_OFFCORE);
    pmu_uncore_bandwidth(BW_BYTES); /* per socket: pmu/uncore_bw.h */
    pebs_step();
    lbr_step();
    msr_trace_flush();
}
