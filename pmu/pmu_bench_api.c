/* pmu_bench_api.c - the UEFI image's pmu_bench_api.h: RDPMC core cycles, counting groups around a function, PEBS per Table 2 row. */
#include "pmu/pmu_bench_api.h"
#include "kernel/fmt.h"
#include "measure/timing.h"
#include "pmu/counting.h"
#include "pmu/msr_pmu.h"
#include "pmu/pebs_capture.h"
#include "pmu/pmu.h"

/* ---- core cycles ---------------------------------------------------------------------------------- */

static uint32_t cycles_idx;
static uint64_t cycles_mask;

const char *pmu_core_cycles_method(void)
{
    if (!PMU.has[PMU_FEAT_COUNTING] || PMU.assumed)
        return NULL; /* QEMU raises #UD for RDPMC: never under pmu_assume */
    return "pmu unhalted core cycles via RDPMC (IA32_FIXED_CTR1 / 3CH, AMD 76H, P4 global_power_events)";
}

bool pmu_core_cycles_read(uint64_t *value)
{
    const char *why;
    if (!pmu_core_cycles_method() || pmu_cpu_index() != 0)
        return false;
    if (!pmu_figures_valid(PMU_FEAT_COUNTING, &why))
        return false;
    if (!pmu_cycles_running()) {
        if (!pmu_cycles_start(&cycles_idx, &why))
            return false;
        uint8_t w = pmu_cycles_width();
        cycles_mask = w >= 64 ? ~0ULL : (1ULL << w) - 1;
    }
    *value = timing_rdpmc(cycles_idx) & cycles_mask;
    return true;
}

/* ---- counting groups -------------------------------------------------------------------------------
 * One pmu/counting.h set, one group, per call. Whether counting is possible is decided once, on first
 * use: the PMU may be programmed and its figures are measurements (self-test passed). A dry run
 * (pmu_assume) programs the groups too - every benchmark's counting path then runs against QEMU's
 * silent MSRs and scripts/check_msr_trace.py checks it - but its counts are never handed out:
 * pmu_count_around returns PMU_COUNT_LOST with why "PMU: assumed PMU". */

static struct pmu_counting count_pc, count_probe;
static bool count_decided, count_dry;
static unsigned count_max;
static char count_reason[160];

unsigned pmu_count_max_events(const char **why)
{
    if (!count_decided) {
        const char *w = NULL;
        count_decided = true;
        if (!pmu_may_program(PMU_FEAT_COUNTING, &w))
            fmt_snprintf(count_reason, sizeof(count_reason), "PMU: %s", w ? w : "not usable");
        else if (!pmu_figures_valid(PMU_FEAT_COUNTING, &w) && !PMU.assumed)
            fmt_snprintf(count_reason, sizeof(count_reason), "PMU: %s", w ? w : "not usable");
        else {
            count_dry = PMU.assumed;
            if (count_dry)
                fmt_snprintf(count_reason, sizeof(count_reason), "PMU: %s", w ? w : PMU_REASON_ASSUMED);
            count_max = PMU.caps.gp_counters ? PMU.caps.gp_counters : 2;
        }
    }
    if (!count_max && why)
        *why = count_reason;
    return count_max;
}

bool pmu_count_accepts(const char *spec, char *why, size_t whylen)
{
    const char *no;
    if (!pmu_count_max_events(&no)) {
        if (why)
            fmt_snprintf(why, whylen, "%s", no);
        return false;
    }
    int st = pmu_counting_prepare(&count_probe, spec, "probe");
    if (st == PMU_COUNTING_OK && (count_probe.valid || count_dry) && count_probe.nev == 1)
        return true;
    if (why)
        fmt_snprintf(why, whylen, "%s", count_probe.err[0] ? count_probe.err
                                        : count_probe.why  ? count_probe.why
                                        : count_probe.nev != 1 ? "not exactly one event"
                                                               : "not countable");
    return false;
}

const char *pmu_count_event_table(void)
{
    return pmu_count_max_events(NULL) && PMU.ntables && PMU.tables[0] ? PMU.tables[0]->name : NULL;
}

enum pmu_count_status pmu_count_around(const char *const *specs, unsigned n, void (*fn)(void *), void *arg,
                                       uint64_t *counts, char *why, size_t whylen)
{
    const char *no;
    if (!pmu_count_max_events(&no)) {
        fmt_snprintf(why, whylen, "%s", no);
        return PMU_COUNT_REFUSED;
    }
    char list[768];
    size_t o = 0;
    list[0] = 0;
    for (unsigned i = 0; i < n && o < sizeof(list); i++)
        o += (size_t)fmt_snprintf(list + o, sizeof(list) - o, "%s%s", i ? "," : "", specs[i]);
    if (o >= sizeof(list)) {
        fmt_snprintf(why, whylen, "event list too long");
        return PMU_COUNT_REFUSED;
    }
    int st = pmu_counting_prepare(&count_pc, list, "cycle_accounting");
    if (st != PMU_COUNTING_OK || (!count_pc.valid && !count_dry)) {
        fmt_snprintf(why, whylen, "%s", count_pc.err[0] ? count_pc.err : count_pc.why ? count_pc.why : "not countable");
        return PMU_COUNT_REFUSED;
    }
    if (count_pc.ngroups != 1 || count_pc.nev != n) {
        fmt_snprintf(why, whylen, "%u events need %u counter groups", n, count_pc.ngroups);
        return PMU_COUNT_REFUSED;
    }
    if (pmu_counting_begin(&count_pc, 0) != 0) {
        fmt_snprintf(why, whylen, "the counter group could not be programmed");
        return PMU_COUNT_REFUSED;
    }
    fn(arg);
    pmu_counting_end(&count_pc, 0);
    if (!count_pc.valid) { /* a dry run, or an access faulted */
        fmt_snprintf(why, whylen, "PMU: %s", count_pc.why ? count_pc.why : "not a measurement");
        return PMU_COUNT_LOST;
    }
    for (unsigned i = 0; i < n; i++) {
        if (i >= count_pc.nev || !count_pc.measured[i] || count_pc.overflowed[i]) {
            fmt_snprintf(why, whylen, "count lost (overflow or a counter not read)");
            return PMU_COUNT_LOST;
        }
        counts[i] = count_pc.value[i];
    }
    return PMU_COUNT_OK;
}

/* ---- PEBS per Table 2 row --------------------------------------------------------------------------- */

#define PEBS_MIN_RECORDS 256 /* replay until this many samples ... */
#define PEBS_MAX_REPLAYS 16  /* ... or this many replays */

bool pmu_latency_pebs_available(void) { return PMU.has[PMU_FEAT_PEBS]; }

void pmu_latency_pebs(const struct pmu_latency_pebs_ctx *c, int (*replay)(void *arg), void *arg,
                      struct pmu_latency_pebs_result *out)
{
    static struct pmu_pebs_capture cap;
    *out = (struct pmu_latency_pebs_result){0};
    if (c->cpu != 0) {
        memset(&cap, 0, sizeof(cap));
        cap.status = -1;
        cap.why = "PEBS is armed on the benchmark's own CPU only; this row measures on another CPU";
        cap.timing_cycles = c->cycles;
        pmu_pebs_emit(&cap, c->row);
        out->why = cap.why;
        return;
    }
    /* Enough samples from PEBS_MAX_REPLAYS replays to reach PEBS_MIN_RECORDS: a placed row replays only a few
     * hundred loads, so the default period (997) would give it a handful. Odd, so that it does not step in
     * lock-step with a chain; pmu_pebs_begin raises it to PEBS_MIN_PERIOD (32) at least. */
    uint64_t period = c->loads_per_replay * PEBS_MAX_REPLAYS / (2 * PEBS_MIN_RECORDS);
    period = (period > PMU_PEBS_DEFAULT_PERIOD ? PMU_PEBS_DEFAULT_PERIOD : period < PEBS_MIN_PERIOD ? PEBS_MIN_PERIOD
                                                                                                 : period) | 1;
    if (pmu_pebs_begin(&cap, c->lines, c->bytes, PMU_PEBS_DEFAULT_LDLAT, period) == 0) {
        unsigned max = cap.valid ? PEBS_MAX_REPLAYS : 1; /* a dry run exercises the path once */
        for (unsigned i = 0; i < max; i++) {
            if (replay(arg) != 0)
                break;
            pmu_pebs_poll(&cap, false);
            if (cap.records >= PEBS_MIN_RECORDS)
                break;
        }
        pmu_pebs_end(&cap);
    }
    cap.timing_cycles = c->cycles;
    pmu_pebs_emit(&cap, c->row);
    /* The row's own loads only: a row's replay also reads an eviction buffer on this CPU. */
    out->samples = cap.inside;
    out->mean_cycles = cap.inside ? (double)cap.inside_cycles / (double)cap.inside : 0;
    out->valid = cap.status == 0 && cap.valid && out->samples > 0;
    out->why = out->valid ? NULL : cap.status != 0 || !cap.valid ? cap.why : "no PEBS record inside the row's buffer";
}
