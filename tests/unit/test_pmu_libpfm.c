/* test_pmu_libpfm.c - our parser + generated tables against libpfm4 itself, PMU by PMU.
 *
 * Each PMU runs in a child process with LIBPFM_FORCE_PMU set before pfm_initialize() (libpfm4 reads
 * it once per process), so unqualified event names resolve to that PMU as they would on such a
 * machine. libpfm4's pfm_get_os_event_encoding(PFM_OS_NONE) is compared with pmu_event_parse():
 * equal except for the INT/PMI bit libpfm4 sets and we never set, and NetBurst's T1 ESCR bits
 * (libpfm4 enables both threads; we program thread 0). AMD h/g are left out: libpfm4 clears USR/OS
 * when h or g is given, we keep u/k independent of HostOnly/GuestOnly (docs/pmu.md).
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include <perfmon/pfmlib.h>

#include "pmu/event.h"
#include "pmu/msr_pmu.h"
#include "pmu_events.h"

struct pmu_case {
    const char *libpfm; /* LIBPFM_FORCE_PMU value */
    const char *table;  /* our generated table */
    const char *const *specs;
};

static const char *const nhm_specs[] = {
    "INST_RETIRED:ANY_P", "INST_RETIRED:ANY_P:u", "INST_RETIRED:ANY_P:k:t=1", "UOPS_EXECUTED:PORT015:c=1:i=1",
    "UOPS_EXECUTED:PORT015_STALL_CYCLES", "UOPS_EXECUTED:PORT2_CORE", "UOPS_ISSUED:ANY:c=1:i=1",
    "UOPS_ISSUED:ANY:c=1:i=1:e=1", "MEM_INST_RETIRED:LOADS", "MEM_INST_RETIRED:LATENCY_ABOVE_THRESHOLD:ldlat=32",
    "MEM_INST_RETIRED:LATENCY_ABOVE_THRESHOLD:ldlat=3", "OFFCORE_RESPONSE_0:DMND_DATA_RD:LOCAL_DRAM",
    "OFFCORE_RESPONSE_0:ANY_DATA:ANY_LLC_MISS", "OFFCORE_RESPONSE_0:DMND_DATA_RD", "OFFCORE_RESPONSE_0:LOCAL_DRAM",
    "OFFCORE_RESPONSE_0:DMND_DATA_RD:DMND_RFO:UNCORE_HIT:OTHER_CORE_HIT_SNP", "L1D_CACHE_LD:MESI",
    "L1D_CACHE_LD:I_STATE:k", "BR_INST_RETIRED:ALL_BRANCHES", "BR_MISP_RETIRED:NEAR_CALL", "RESOURCE_STALLS:ANY",
    "ARITH:DIV", "UNHALTED_CORE_CYCLES", "INSTRUCTION_RETIRED", "UNHALTED_REFERENCE_CYCLES", "LLC_MISSES",
    "MEM_LOAD_RETIRED:LLC_MISS", "SSEX_UOPS_RETIRED:PACKED_DOUBLE", "SSEX_UOPS_RETIRED:SCALAR_SINGLE:u", NULL};
static const char *const nhm_unc_specs[] = {
    "UNC_QMC_NORMAL_READS:ANY", "UNC_QMC_NORMAL_READS:CH0:CH1", "UNC_QMC_WRITES:FULL_ANY",
    "UNC_QMC_WRITES:PARTIAL_ANY", "UNC_QHL_REQUESTS:LOCAL_READS", "UNC_LLC_MISS:READ", "UNC_GQ_ALLOC:READ_TRACKER",
    "UNC_QMC_NORMAL_READS:ANY:c=2:i=1", NULL};
static const char *const wsm_dp_specs[] = {
    "OFFCORE_RESPONSE_1:DMND_DATA_RD:OTHER_LLC_MISS", "OFFCORE_RESPONSE_0:ANY_REQUEST:ANY_RESPONSE",
    "MEM_INST_RETIRED:LATENCY_ABOVE_THRESHOLD:ldlat=100", "INST_RETIRED:ANY_P", "SNOOPQ_REQUESTS_OUTSTANDING:DATA",
    "L1D:REPL", "UNHALTED_CORE_CYCLES:u", NULL};
static const char *const wsm_unc_specs[] = {"UNC_QMC_NORMAL_READS:ANY", "UNC_QMC_WRITES:FULL_ANY", NULL};
static const char *const fam10h_specs[] = {
    "CPU_CLK_UNHALTED", "RETIRED_INSTRUCTIONS", "RETIRED_INSTRUCTIONS:u", "RETIRED_INSTRUCTIONS:c=2:i=1",
    "READ_REQUEST_TO_L3_CACHE:READ_BLOCK_EXCLUSIVE:ALL_CORES", "READ_REQUEST_TO_L3_CACHE:READ_BLOCK_EXCLUSIVE",
    "READ_REQUEST_TO_L3_CACHE", "DATA_CACHE_REFILLS:ALL", "DATA_CACHE_REFILLS:L2_SHARED:L2_OWNED",
    "DRAM_ACCESSES_PAGE:HIT:MISS", NULL};
static const char *const k8_specs[] = {"CPU_CLK_UNHALTED", "DATA_CACHE_REFILLS_FROM_SYSTEM:ALL",
                                       "RETIRED_INSTRUCTIONS:k", NULL};
static const char *const fam15h_specs[] = {"DISPATCHED_FPU_OPS:OPS_PIPE0", "DISPATCHED_FPU_OPS", "RETIRED_SSE_OPS",
                                           NULL};
static const char *const zen1_specs[] = {"RETIRED_BRANCH_INSTRUCTIONS", "L1_ITLB_MISS_L2_ITLB_MISS:IF4K",
                                         "L1_ITLB_MISS_L2_ITLB_MISS:IF4K:IF2M", "DIV_CYCLES_BUSY_COUNT:u", NULL};
static const char *const netburst_specs[] = {
    "global_power_events:RUNNING", "global_power_events:RUNNING:u", "instr_retired:NBOGUSNTAG:NBOGUSTAG",
    "branch_retired:MMTP:MMTM", "mispred_branch_retired", "BSQ_cache_reference:RD_2ndL_HITS",
    "uops_retired:NBOGUS", "instr_retired:NBOGUSNTAG:thr=2:cmpl=1", "instr_retired:NBOGUSNTAG:thr=2:e=1",
    "TC_deliver_mode:DD", NULL};

static const struct pmu_case cases[] = {
    {"nhm", "nhm", nhm_specs},
    {"nhm_unc", "nhm_unc", nhm_unc_specs},
    {"wsm_dp", "wsm_dp", wsm_dp_specs},
    {"wsm_unc", "wsm_unc", wsm_unc_specs},
    {"amd64_fam10h_barcelona", "amd_fam10h", fam10h_specs},
    {"amd64_k8_revg", "amd_k8", k8_specs},
    {"amd64_fam15h_interlagos", "amd_fam15h", fam15h_specs},
    {"amd64_fam17h_zen1", "amd_fam17h_zen1", zen1_specs},
    {"netburst_p", "netburst_p", netburst_specs},
};

static bool forced_present(const char *name)
{
    pfm_pmu_t p;
    pfm_for_all_pmus(p)
    {
        pfm_pmu_info_t info;
        memset(&info, 0, sizeof(info));
        info.size = sizeof(info);
        if (pfm_get_pmu_info(p, &info) == PFM_SUCCESS && strcmp(info.name, name) == 0)
            return info.is_present;
    }
    return false;
}

/* Runs in the child: returns the number of mismatches (0..125) or 126 on setup failure. */
static int run_case(const struct pmu_case *c)
{
    const struct pmu_event_table *t = pmu_event_table_find(c->table);
    int bad = 0;

    if (!t)
        return 126;
    unsetenv("LIBPFM_ENCODE_INACTIVE");
    setenv("LIBPFM_FORCE_PMU", c->libpfm, 1);
    if (pfm_initialize() != PFM_SUCCESS || !forced_present(c->libpfm)) {
        fprintf(stderr, "%s: LIBPFM_FORCE_PMU did not take\n", c->libpfm);
        return 126;
    }
    for (const char *const *s = c->specs; *s; s++) {
        pfm_pmu_encode_arg_t arg;
        struct pmu_event_enc e;
        char err[256];
        memset(&arg, 0, sizeof(arg));
        arg.size = sizeof(arg);
        int lrc = pfm_get_os_event_encoding(*s, PFM_PLM0 | PFM_PLM3, PFM_OS_NONE, &arg);
        int orc = pmu_event_parse(&t, 1, *s, &e, err, sizeof(err));
        if (lrc != PFM_SUCCESS || orc != 0) {
            fprintf(stderr, "%s::%s: libpfm4 %s, ours %s\n", c->libpfm, *s, pfm_strerror(lrc), orc ? err : "ok");
            bad++;
            free(arg.codes);
            continue;
        }
        uint64_t want0 = arg.codes[0], want1 = arg.count > 1 ? arg.codes[1] : 0;
        uint64_t got0 = e.evtsel, got1 = 0;
        switch (t->kind) {
        case PMU_TBL_KIND_INTEL_CORE:
            want0 &= ~IA32_PERFEVTSEL_INT;
            got1 = e.extra;
            break;
        case PMU_TBL_KIND_INTEL_UNCORE:
            want0 &= ~UNCORE_PERFEVTSEL_PMI;
            break;
        case PMU_TBL_KIND_AMD_CORE:
        case PMU_TBL_KIND_AMD_NB:
            want0 &= ~AMD_PERF_CTL_INT;
            break;
        case PMU_TBL_KIND_NETBURST:
            want0 &= ~(P4_ESCR_T1_OS | P4_ESCR_T1_USR);
            got0 = e.escr;
            got1 = e.evtsel; /* CCCR */
            break;
        }
        if (want0 != got0 || want1 != got1) {
            fprintf(stderr, "%s::%s: libpfm4 0x%llx/0x%llx, ours 0x%llx/0x%llx\n", c->libpfm, *s,
                    (unsigned long long)want0, (unsigned long long)want1, (unsigned long long)got0,
                    (unsigned long long)got1);
            bad++;
        }
        free(arg.codes);
    }
    pfm_terminate();
    return bad > 125 ? 125 : bad;
}

static void test_against_libpfm(void **state)
{
    const struct pmu_case *c = *state;
    fflush(NULL);
    pid_t pid = fork();
    assert_true(pid >= 0);
    if (pid == 0)
        _exit(run_case(c)); /* _exit: no atexit/LeakSanitizer pass in the child */
    int st = 0;
    assert_int_equal(waitpid(pid, &st, 0), pid);
    assert_true(WIFEXITED(st));
    if (WEXITSTATUS(st) != 0)
        fail_msg("%s: %d mismatches against libpfm4 (see stderr)", c->libpfm, WEXITSTATUS(st));
}

/* The generated header records which libpfm4 produced the tables; it must be this one. */
static void test_source_version(void **state)
{
    (void)state;
    assert_int_equal(PMU_EVENTS_LIBPFM_API, LIBPFM_VERSION);
    assert_non_null(strstr(PMU_EVENTS_SOURCE, "libpfm4"));
}

int main(void)
{
    struct CMUnitTest tests[sizeof(cases) / sizeof(cases[0]) + 1];
    static char names[sizeof(cases) / sizeof(cases[0])][64];
    size_t n = 0;
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++, n++) {
        snprintf(names[i], sizeof(names[i]), "libpfm4_%s", cases[i].libpfm);
        tests[n] = (struct CMUnitTest){names[i], test_against_libpfm, NULL, NULL, (void *)&cases[i]};
    }
    tests[n++] = (struct CMUnitTest){"source_version", test_source_version, NULL, NULL, NULL};
    return _cmocka_run_group_tests("pmu_libpfm", tests, n, NULL, NULL);
}
