/* pmu_selftest.c - check every PMU feature against a known answer before any of its numbers is used. */
#include "pmu/pmu_selftest.h"
#include "measure/chase.h"
#include "kernel/fmt.h"
#include "kernel/io.h"
#include "kernel/kernel.h"
#include "kernel/out.h"
#include "kernel/time.h"
#include "pmu/chase_buf.h"
#include "pmu/counting.h"
#include "pmu/known_loop.h"
#include "pmu/lbr_capture.h"
#include "pmu/pebs_capture.h"
#include "pmu/pmu.h"

#define ST_LOOP_N 100000ULL     /* known-loop iterations for the exactness check (and 2N) */
#define ST_CONST_MAX 1024       /* instructions the enable/disable path may add (trace hook included) */
#define ST_DIFF_TOL 2           /* INST_RETIRED(2N) - INST_RETIRED(N) must be 2N within this */
#define ST_RATIO_TOL 0.15       /* cycles/TSC against the start-up measurement */
#define ST_OVF_DISTANCE 1000ULL /* preload this far below the wrap */
#define ST_OVF_LOOP 5000ULL

struct check {
    const char *name;
    const char *status; /* ok | failed | skipped */
    char detail[200];
    enum pmu_feature feat;
};

static struct check checks[8];
static unsigned nchecks;

static struct check *add(const char *name, enum pmu_feature f)
{
    struct check *c = &checks[nchecks < ARRAY_SIZE(checks) ? nchecks++ : ARRAY_SIZE(checks) - 1];
    c->name = name;
    c->status = "skipped";
    c->detail[0] = 0;
    c->feat = f;
    return c;
}

static void result(struct check *c, bool ok, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static void result(struct check *c, bool ok, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    fmt_vsnprintf(c->detail, sizeof(c->detail), fmt, ap);
    va_end(ap);
    c->status = ok ? "ok" : "failed";
    if (!ok) {
        char why[96];
        fmt_snprintf(why, sizeof(why), "self-test failed: %s", c->name);
        pmu_feature_disable(c->feat, why);
    }
}

static void skip(struct check *c, const char *why) { fmt_snprintf(c->detail, sizeof(c->detail), "%s", why); }

static struct pmu_group g; /* large: static */
static int64_t loop_const = -1;

/* INST_RETIRED over N and 2N iterations of the known loop: the difference cancels the constant
 * cost of the enable/disable path (nanoBench's n vs 2n). The 2N run also gives cycles per tick. */
static void check_counting(void)
{
    struct check *ci = add("inst_retired_exact", PMU_FEAT_COUNTING);
    struct check *cc = add("cycles_vs_tsc", PMU_FEAT_COUNTING);
    struct pmu_event_enc ev[2];
    uint64_t inst[2] = {0, 0}, cyc[2] = {0, 0}, tsc[2] = {0, 0};
    char err[160];
    const char *why;

    if (!pmu_may_program(PMU_FEAT_COUNTING, &why)) {
        skip(ci, why);
        skip(cc, why);
        return;
    }
    if (pmu_enc_instructions(&ev[0]) != 0 || pmu_enc_cycles(&ev[1]) != 0) {
        skip(ci, "no instructions-retired / core-cycles encoding for this PMU");
        skip(cc, "no instructions-retired / core-cycles encoding for this PMU");
        return;
    }
    for (unsigned k = 0; k < 2; k++) {
        uint64_t n = ST_LOOP_N << k;
        pmu_group_init(&g, k ? "selftest:inst_cycles_2n" : "selftest:inst_cycles_n", NULL);
        if (pmu_group_add_all(&g, ev, 2, false, err, sizeof(err)) != 0) {
            result(ci, false, "cannot place the events: %s", err);
            skip(cc, "instructions check could not run");
            return;
        }
        pmu_group_program(&g);
        pmu_group_start(&g);
        uint64_t t0 = rdtsc_ordered();
        pmu_known_loop(n);
        uint64_t t1 = rdtsc_ordered();
        pmu_group_stop(&g);
        pmu_group_read(&g);
        pmu_group_release(&g);
        inst[k] = pmu_group_slot(&g, 0)->value;
        cyc[k] = pmu_group_slot(&g, 1)->value;
        tsc[k] = t1 - t0;
    }
    int64_t diff = (int64_t)(inst[1] - inst[0]);
    int64_t want = (int64_t)(PMU_KNOWN_LOOP_INSNS(2 * ST_LOOP_N) - PMU_KNOWN_LOOP_INSNS(ST_LOOP_N));
    int64_t konst = (int64_t)inst[0] - (int64_t)PMU_KNOWN_LOOP_INSNS(ST_LOOP_N);
    bool ok = diff >= want - ST_DIFF_TOL && diff <= want + ST_DIFF_TOL && konst >= 0 && konst <= ST_CONST_MAX;
    if (ok)
        loop_const = konst;
    result(ci, ok,
           "counted %lu over %lu iterations and %lu over %lu: difference %ld, expected %ld +-%d; constant %ld "
           "(allowed 0..%d)",
           (unsigned long)inst[0], (unsigned long)ST_LOOP_N, (unsigned long)inst[1], (unsigned long)(2 * ST_LOOP_N),
           (long)diff, (long)want, ST_DIFF_TOL, (long)konst, ST_CONST_MAX);

    double ref = K.time.core_tsc_ratio;
    double ratio = tsc[1] ? (double)cyc[1] / (double)tsc[1] : 0.0;
    if (!(ref > 0)) {
        skip(cc, "no start-up core/TSC ratio to compare with");
        return;
    }
    double dev = ratio / ref - 1.0;
    result(cc, dev >= -ST_RATIO_TOL && dev <= ST_RATIO_TOL,
           "%lu core cycles over %lu TSC ticks = %.4f per tick; start-up ratio %.4f (%s); allowed +-%.0f%%",
           (unsigned long)cyc[1], (unsigned long)tsc[1], ratio, ref, K.time.core_tsc_method,
           ST_RATIO_TOL * 100.0);
}

static void check_overflow(void)
{
    struct check *c = add("overflow", PMU_FEAT_OVERFLOW);
    struct pmu_event_enc e;
    char err[160];
    const char *why;

    if (!pmu_may_program(PMU_FEAT_OVERFLOW, &why)) {
        skip(c, why);
        return;
    }
    if (pmu_enc_instructions(&e) != 0) {
        skip(c, "no instructions-retired encoding for this PMU");
        return;
    }
    pmu_group_init(&g, "selftest:overflow", NULL);
    if (pmu_group_add_all(&g, &e, 1, true, err, sizeof(err)) != 0) {
        result(c, false, "cannot place the event on a general counter: %s", err);
        return;
    }
    struct pmu_slot *s = &g.s[0];
    s->preload = (s->width >= 64 ? 0 : (1ULL << s->width)) - ST_OVF_DISTANCE;
    pmu_group_program(&g);
    pmu_group_start(&g);
    pmu_known_loop(ST_OVF_LOOP);
    pmu_group_stop(&g);
    pmu_group_read(&g);
    pmu_group_release(&g);
    uint64_t lo = PMU_KNOWN_LOOP_INSNS(ST_OVF_LOOP);
    uint64_t hi = lo + (loop_const >= 0 ? (uint64_t)loop_const + ST_DIFF_TOL : ST_CONST_MAX);
    bool ok = s->overflowed && s->value >= lo && s->value <= hi;
    result(c, ok, "counter %u preloaded 0x%lx, read 0x%lx: overflow %s, %lu events counted (expected %lu..%lu)",
           s->index, (unsigned long)s->preload, (unsigned long)s->raw, s->overflowed ? "seen" : "not seen",
           (unsigned long)s->value, (unsigned long)lo, (unsigned long)hi);
}

static void check_offcore(void)
{
    struct check *c = add("offcore_response", PMU_FEAT_OFFCORE);
    struct pmu_event_enc e;
    struct pmu_chase ch;
    unsigned nt;
    const struct pmu_event_table *const *t = pmu_tables(&nt);
    char err[200];
    const char *why;

    if (!pmu_may_program(PMU_FEAT_OFFCORE, &why)) {
        skip(c, why);
        return;
    }
    /* [NHM] Table 12: DMND_DATA_RD with every response type (libpfm4's default ANY_RESPONSE). */
    if (!nt || pmu_event_parse(t, nt, "OFFCORE_RESPONSE_0:DMND_DATA_RD", &e, err, sizeof(err)) != PMU_EV_OK) {
        result(c, false, "cannot encode OFFCORE_RESPONSE_0:DMND_DATA_RD: %s", err);
        return;
    }
    if (pmu_chase_alloc(&ch, MiB(1), 0x5e1f7e57, "pmu_selftest_chase") != 0) {
        skip(c, "cannot allocate a 1 MiB chase buffer");
        return;
    }
    pmu_group_init(&g, "selftest:offcore", NULL);
    if (pmu_group_add_all(&g, &e, 1, false, err, sizeof(err)) != 0) {
        pmu_chase_free(&ch);
        result(c, false, "cannot place the event: %s", err);
        return;
    }
    uint64_t iters = 2 * ch.n_elems / 64 + 1; /* two passes over a 1 MiB chain: past the 256 KiB L2 */
    pmu_group_program(&g);
    pmu_group_start(&g);
    chase_run(ch.start, iters);
    pmu_group_stop(&g);
    pmu_group_read(&g);
    pmu_group_release(&g);
    pmu_chase_free(&ch);
    uint64_t loads = iters * 64;
    result(c, g.s[0].value > loads / 32, "%lu demand data reads answered off-core over %lu loads of a 1 MiB chase "
                                         "(expected more than %lu)",
           (unsigned long)g.s[0].value, (unsigned long)loads, (unsigned long)(loads / 32));
}

static void check_pebs(void)
{
    static struct pmu_pebs_capture pc;
    struct check *c = add("pebs_l1", PMU_FEAT_PEBS);
    struct pmu_chase ch;
    const char *why;

    if (!pmu_may_program(PMU_FEAT_PEBS, &why)) {
        skip(c, why);
        return;
    }
    if (pmu_chase_alloc(&ch, KiB(4), 0x11c4a5e, "pmu_selftest_l1") != 0) {
        skip(c, "cannot allocate the L1 chase buffer");
        return;
    }
    /* 64 lines: L1-resident after the first pass. ldlat 3 is the minimum ([NHM] Table 17), so every
     * load (L1 hit: 4 cycles) qualifies; a prime period keeps samples off one line. */
    pmu_pebs_chase(&pc, "selftest_l1", ch.start, 64 * 1024, ch.buf, ch.bytes, PMU_PEBS_DEFAULT_LDLAT, 97);
    pmu_chase_free(&ch);
    if (pc.status != 0) {
        result(c, false, "PEBS could not be programmed: %s", pc.why ? pc.why : "?");
        return;
    }
    uint64_t l1 = pc.hist.count[1];
    bool ok = pc.records > 0 && pc.outside == 0 && pc.bad == 0 && 2 * l1 >= pc.records;
    result(c, ok, "%lu PEBS records (%lu with data source 1 = L1 hit), %lu outside the 4 KiB buffer, %lu bad drains",
           (unsigned long)pc.records, (unsigned long)l1, (unsigned long)pc.outside, (unsigned long)pc.bad);
}

static void check_lbr(void)
{
    static struct pmu_lbr_capture lc;
    struct check *c = add("lbr_loop", PMU_FEAT_LBR);
    const char *why;
    unsigned hits = 0;

    if (!pmu_may_program(PMU_FEAT_LBR, &why)) {
        skip(c, why);
        return;
    }
    if (pmu_lbr_known_loop(&lc, 200, &hits) != 0) {
        result(c, false, "LBR could not be programmed: %s", lc.why ? lc.why : "?");
        return;
    }
    unsigned need = PMU.caps.lbr_depth >= 16 ? 4 : 1;
    result(c, hits >= need && lc.faults == 0,
           "%u of %u LBR entries are the loop branch 0x%lx -> 0x%lx (need %u); TOS %lu", hits, lc.n,
           (unsigned long)pmu_known_loop_branch(), (unsigned long)pmu_known_loop_head(), need, (unsigned long)lc.tos);
}

static void check_uncore(void)
{
    struct check *c = add("uncore_clock", PMU_FEAT_UNCORE);
    struct pmu_event_enc e;
    unsigned nt;
    const struct pmu_event_table *const *t = pmu_tables(&nt);
    char err[200];
    const char *why;

    if (!pmu_may_program(PMU_FEAT_UNCORE, &why)) {
        skip(c, why);
        return;
    }
    if (PMU.caps.uncore != PMU_UNCORE_NHM) {
        skip(c, "no uncore clock check for this uncore");
        return;
    }
    if (pmu_event_parse(t, nt, "UNC_CLK_UNHALTED", &e, err, sizeof(err)) != PMU_EV_OK) {
        result(c, false, "cannot encode UNC_CLK_UNHALTED: %s", err);
        return;
    }
    pmu_group_init(&g, "selftest:uncore_clock", NULL);
    if (pmu_group_add_all(&g, &e, 1, false, err, sizeof(err)) != 0) {
        result(c, false, "cannot place the event: %s", err);
        return;
    }
    pmu_group_program(&g);
    pmu_group_start(&g);
    uint64_t t0 = rdtsc_ordered();
    tsc_delay_us(1000);
    uint64_t t1 = rdtsc_ordered();
    pmu_group_stop(&g);
    pmu_group_read(&g);
    pmu_group_release(&g);
    double r = t1 > t0 ? (double)g.s[0].value / (double)(t1 - t0) : 0.0;
    result(c, r >= 0.05 && r <= 5.0, "%lu uncore clocks over %lu TSC ticks = %.3f per tick (expected 0.05..5)",
           (unsigned long)g.s[0].value, (unsigned long)(t1 - t0), r);
}

void pmu_selftest_run(void)
{
    PMU.selftest_done = true;
    nchecks = 0;
    if (PMU.present) {
        check_counting();
        check_overflow();
        check_offcore();
        check_pebs();
        check_lbr();
        check_uncore();
    }
    bool failed = false;
    for (unsigned i = 0; i < nchecks; i++)
        failed |= !strcmp(checks[i].status, "failed");

    struct json *j = pmu_rec_begin("pmu_selftest");
    json_kv_str(j, "status", !PMU.present ? "unavailable" : failed ? "failed" : "ok");
    if (!PMU.present)
        json_kv_str(j, "reason", PMU.reason ? PMU.reason : "PMU unavailable");
    json_kv_str(j, "model", PMU.detect_ran ? PMU.caps.model : NULL);
    if (PMU.assumed)
        json_kv_str(j, "assumed", PMU.assumed_name);
    json_key(j, "checks");
    json_arr_begin(j);
    for (unsigned i = 0; i < nchecks; i++) {
        json_obj_begin(j);
        json_kv_str(j, "name", checks[i].name);
        json_kv_str(j, "status", checks[i].status);
        json_kv_str(j, "detail", checks[i].detail);
        json_kv_str(j, "feature", pmu_feature_name(checks[i].feat));
        json_obj_end(j);
    }
    json_arr_end(j);
    json_key(j, "disabled");
    json_arr_begin(j);
    for (unsigned f = 0; f < PMU_FEAT_COUNT; f++)
        if (PMU.failed[f])
            json_str(j, pmu_feature_name((enum pmu_feature)f));
    json_arr_end(j);
    pmu_rec_end();

    kprintf("PMU self-test: %s", !PMU.present ? "unavailable" : failed ? "FAILED" : "ok");
    for (unsigned i = 0; i < nchecks; i++)
        kprintf("%s %s=%s", i ? "," : ":", checks[i].name, checks[i].status);
    kprintf("%s\n", PMU.assumed ? " (assumed PMU: QEMU's MSRs are silent, zero counts fail)" : "");
}

void pmu_selftest_ensure(void)
{
    if (PMU.initialized && !PMU.selftest_done)
        pmu_selftest_run();
}
