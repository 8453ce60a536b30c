/* pmu_selftest.c - check every PMU feature against a known answer before any of its numbers is used. */
#include "pmu/pmu_selftest.h"
#include "measure/chase.h"
#include "kernel/fmt.h"
#include "kernel/io.h"
#include "kernel/kernel.h"
#include "kernel/out.h"
#include "kernel/pmm.h"
#include "kernel/smp.h"
#include "kernel/time.h"
#include "pmu/chase_buf.h"
#include "pmu/counting.h"
#include "pmu/encode.h"
#include "pmu/known_loop.h"
#include "pmu/lbr_capture.h"
#include "pmu/pebs_capture.h"
#include "pmu/pmu.h"
#include "pmu/selftest_judge.h"
#include "pmu/uncore_bw.h"

/* Everything that decides pass or fail is in pmu/selftest_judge.c (pure, host-tested); this file
 * programs the counters, runs the known workloads and records the verdicts. */

#define ST_LOOP_N 20000ULL      /* branch-loop iterations for the exactness checks (and 2N) */
#define ST_CONST_MAX 1024       /* events the enable/disable path and the loop's entry/exit may add */
#define ST_DIFF_TOL 2           /* count(2N) - count(N) must be per_iter x N within this */
#define ST_RATIO_TOL 0.15       /* cycles/TSC against the start-up measurement */
#define ST_CMASK_TOL_FRAC 0.01  /* CMASK=1 + CMASK=1:INV against core cycles */
#define ST_CMASK_TOL_ABS 64ULL
#define ST_OVF_DISTANCE 1000ULL /* preload this far below the wrap */
#define ST_OVF_LOOP 1000ULL     /* branch-loop iterations: 7000 instructions, well past the wrap */
#define ST_OFFCORE_LOADS (CHASE_UNROLL * 512ULL)
/* The off-core check programs pmu_offcore_local_dram_event(table) - the `pmu` flow's own choice, with this
 * part's local-DRAM response bit (Nehalem and 06_2F 4001H, 06_25 2001H, 06_2C 1001H) - over a chase on this CPU's
 * node, and its byte swap (response bit 8 UNCORE_HIT with a prefetch request: 0140H, 0120H, 0110H; a short chase
 * over 4 x the LLC touches few lines twice, so prefetches of them rarely hit the LLC). */
#define ST_UNC_LO 0.85 /* a read pass of B bytes: B/64 line reads at the memory controller, within */
#define ST_UNC_HI 1.25 /* 0.85..1.25 (lines still in the LLC, prefetch overshoot, other traffic) */

#define ST_MAX_CHECKS 48

static struct st_check checks[ST_MAX_CHECKS];
static unsigned nchecks;

static struct st_check *add(const char *name, const char *counter, const char *event, enum pmu_feature f)
{
    struct st_check *c = &checks[nchecks < ST_MAX_CHECKS ? nchecks++ : ST_MAX_CHECKS - 1];
    st_check_init(c, name, counter, event, (int)f);
    return c;
}

static int first_fail[PMU_FEAT_COUNT]; /* index of the first failed check per feature, -1 none */
static unsigned nfail_feat[PMU_FEAT_COUNT];
static bool gone[PMU_FEAT_COUNT];      /* disabled because every counter it needs is (settle_gone) */

/* The reason a feature is disabled: its first failed check and counter, and how many more failed. A feature
 * already disabled because its counters are gone keeps that reason. */
static void disable_reason(enum pmu_feature f)
{
    char why[sizeof(PMU.failed_why[0])];
    if (gone[f])
        return;
    const struct st_check *c = &checks[first_fail[f]];
    if (nfail_feat[f] > 1)
        fmt_snprintf(why, sizeof(why), "self-test failed: %s%s%s and %u more", c->name, c->counter[0] ? " on " : "",
                     c->counter, nfail_feat[f] - 1);
    else
        fmt_snprintf(why, sizeof(why), "self-test failed: %s%s%s", c->name, c->counter[0] ? " on " : "", c->counter);
    pmu_feature_disable(f, why);
}

/* A failed check disables only what it covers. A counting check that isolates one core counter disables that
 * counter (PMU.ctrs, pmu/usable.h) and names it on its line: the per-counter rotation (one event placed by hand on
 * the counter it names: settle_counter) and a check on a fixed counter (its event is wired to it:
 * instructions_fixed0, cycles_vs_tsc on fixed1). Any other failed check disables the feature it covers, naming
 * itself and its counter - a scheduled check on a general counter (cycles_vs_tsc on AMD, NetBurst's ESCR-fed
 * checks) judges the event's encoding as much as the counter, and the next counter would get the same encoding. */
static void settle_as(struct st_check *c, bool one_counter)
{
    enum pmu_feature f = (enum pmu_feature)c->feature;
    if (c->status != ST_FAILED || (unsigned)f >= PMU_FEAT_COUNT)
        return;
    int bit = f == PMU_FEAT_COUNTING ? pmu_usable_bit_of(c->counter) : -1;
    if (bit >= 0 && (one_counter || bit >= PMU_USABLE_FIXED_SHIFT) && (PMU.ctrs.present & (1ULL << bit))) {
        char reason[sizeof(PMU.ctrs.loss[0].reason)];
        st_short_reason(reason, sizeof(reason), c);
        pmu_usable_fail(&PMU.ctrs, (unsigned)bit, c->name, reason);
        pmu_usable_counter_name(&PMU.ctrs, (unsigned)bit, c->disabled, sizeof(c->disabled));
        return;
    }
    if (first_fail[f] < 0)
        first_fail[f] = (int)(c - checks);
    nfail_feat[f]++;
    disable_reason(f);
}

static void settle(struct st_check *c) { settle_as(c, false); }
static void settle_counter(struct st_check *c) { settle_as(c, true); }

static const char *short_name(const char *n)
{
    for (const char *p = n; *p; p++)
        if (p[0] == ':' && p[1] == ':')
            return p + 2;
    return n;
}

static struct pmu_group g; /* large: static */
static int64_t loop_const = -1;

static int parse(const char *spec, struct pmu_event_enc *e, char *err, size_t errlen)
{
    unsigned nt;
    const struct pmu_event_table *const *t = pmu_tables(&nt);
    if (!nt) {
        fmt_snprintf(err, errlen, "no event table for this PMU");
        return -1;
    }
    return pmu_event_parse(t, nt, spec, e, err, errlen) == PMU_EV_OK ? 0 : -1;
}

/* Program, start, run fn(n), stop, read, release: the counts land in g.s[]. */
static void run_group(void (*fn)(uint64_t), uint64_t n, uint64_t *tsc)
{
    pmu_group_program(&g);
    pmu_group_start(&g);
    uint64_t t0 = rdtsc_ordered();
    fn(n);
    uint64_t t1 = rdtsc_ordered();
    pmu_group_stop(&g);
    pmu_group_read(&g);
    pmu_group_release(&g);
    if (tsc)
        *tsc = t1 - t0;
}

static void counter_name(const struct pmu_slot *s, char *buf, size_t len) { pmu_slot_counter_name(s, buf, len); }

/* Instructions and core cycles on the counters the scheduler picks (Intel: FIXED_CTR0/1), over N and
 * 2N iterations of the branch loop: exact instructions, and cycles per TSC tick against start-up. */
static void check_default_counters(const struct st_model_events *me)
{
    struct pmu_event_enc ev[2];
    uint64_t inst[2] = {0, 0}, cyc[2] = {0, 0}, tsc[2] = {0, 0};
    char err[160], ci_name[32], cname[16] = "", cyname[16] = "";
    const char *why;

    if (!pmu_may_program(PMU_FEAT_COUNTING, &why) ||
        ((pmu_enc_instructions(&ev[0]) != 0 || pmu_enc_cycles(&ev[1]) != 0) &&
         (why = "no instructions-retired / core-cycles encoding for this PMU"))) {
        st_skip(add("instructions", NULL, NULL, PMU_FEAT_COUNTING), why);
        st_skip(add("cycles_vs_tsc", NULL, NULL, PMU_FEAT_COUNTING), why);
        return;
    }
    for (unsigned k = 0; k < 2; k++) {
        pmu_group_init(&g, k ? "selftest:inst_cycles_2n" : "selftest:inst_cycles_n", NULL);
        if (pmu_group_add_all(&g, ev, 2, false, err, sizeof(err)) != 0) {
            struct st_check *c = add("instructions", NULL, short_name(ev[0].name), PMU_FEAT_COUNTING);
            st_fail(c, err);
            settle(c);
            st_skip(add("cycles_vs_tsc", NULL, NULL, PMU_FEAT_COUNTING), "instructions check could not run");
            return;
        }
        run_group(pmu_known_branch_loop, ST_LOOP_N << k, &tsc[k]);
        inst[k] = pmu_group_slot(&g, 0)->value;
        cyc[k] = pmu_group_slot(&g, 1)->value;
        counter_name(pmu_group_slot(&g, 0), cname, sizeof(cname));
        counter_name(pmu_group_slot(&g, 1), cyname, sizeof(cyname));
    }
    /* A general counter is checked by the per-counter rotation below when it runs: no second check. */
    bool gp = pmu_group_slot(&g, 0)->kind != PMU_SLOT_INTEL_FIXED;
    struct st_check probe;
    st_check_init(&probe, "instructions", cname, short_name(ev[0].name), PMU_FEAT_COUNTING);
    st_judge_loop(&probe, inst[0], inst[1], ST_LOOP_N, PMU_BRANCH_LOOP_INSNS_PER_ITER, ST_DIFF_TOL, ST_CONST_MAX);
    if (probe.status == ST_OK)
        loop_const = (int64_t)(inst[0] - PMU_BRANCH_LOOP_INSNS_PER_ITER * ST_LOOP_N);
    if (!(gp && me && me->per_counter)) {
        fmt_snprintf(ci_name, sizeof(ci_name), "instructions_%s", cname);
        struct st_check *c = add(ci_name, cname, short_name(ev[0].name), PMU_FEAT_COUNTING);
        *c = probe;
        fmt_snprintf(c->name, sizeof(c->name), "%s", ci_name);
        settle(c);
    }

    struct st_check *cc = add("cycles_vs_tsc", cyname, short_name(ev[1].name), PMU_FEAT_COUNTING);
    double ref = K.time.core_tsc_ratio;
    if (!(ref > 0)) {
        st_skip(cc, "no start-up core/TSC ratio to compare with");
        return;
    }
    char what[96];
    fmt_snprintf(what, sizeof(what), "%lu TSC ticks x start-up ratio %.4f (%s)", (unsigned long)tsc[1], ref,
                 K.time.core_tsc_method);
    st_judge_ratio(cc, cyc[1], (uint64_t)((double)tsc[1] * ref), 1.0 - ST_RATIO_TOL, 1.0 + ST_RATIO_TOL, what);
    settle(cc);
}

/* One event on one named general counter, over N and 2N iterations of the branch loop. */
static void loop_on_counter(const char *kind, const char *spec, uint64_t per_iter, unsigned ctr)
{
    struct pmu_event_enc e;
    char err[160], name[32], cname[16];
    uint64_t cnt[2] = {0, 0};

    struct pmu_slot tmp = {.kind = PMU.caps.vendor == PMU_VENDOR_AMD ? PMU_SLOT_AMD : PMU_SLOT_INTEL_GP,
                           .index = (uint8_t)ctr};
    counter_name(&tmp, cname, sizeof(cname));
    fmt_snprintf(name, sizeof(name), "%s_%s", kind, cname);
    struct st_check *c = add(name, cname, spec, PMU_FEAT_COUNTING);
    if (parse(spec, &e, err, sizeof(err)) != 0) {
        st_skip(c, err);
        return;
    }
    fmt_snprintf(c->event, sizeof(c->event), "%s", short_name(e.name));
    if (!(e.cntmask & (1ULL << ctr))) {
        st_skip(c, "the event cannot be counted on this counter");
        return;
    }
    /* The placement is forced (pmu_group_add): apply the CPUID.0AH:EBX gate pmu_group_add_all applies. */
    int arch = PMU.caps.arch == PMU_ARCH_INTEL ? pmu_arch_event_index(e.evtsel) : -1;
    if (arch >= 0 && pmu_arch_event_refused(&PMU.caps, c->event, (unsigned)arch, err, sizeof(err)) != 0) {
        st_skip(c, err);
        return;
    }
    for (unsigned k = 0; k < 2; k++) {
        pmu_group_init(&g, "selftest:counter", c->name);
        if (pmu_group_add(&g, &e, 0, ctr, 0) != 0) {
            st_fail(c, "the counter does not exist on this PMU");
            settle_counter(c);
            return;
        }
        run_group(pmu_known_branch_loop, ST_LOOP_N << k, NULL);
        cnt[k] = g.s[0].value;
    }
    st_judge_loop(c, cnt[0], cnt[1], ST_LOOP_N, per_iter, ST_DIFF_TOL, ST_CONST_MAX);
    settle_counter(c);
}

/* Every general counter counts the branch loop's retired branches (a unit-masked event where the
 * model has one) and its instructions exactly. */
static void check_each_counter(const struct st_model_events *me)
{
    const char *why;
    if (!me || !me->per_counter)
        return;
    if (!pmu_may_program(PMU_FEAT_COUNTING, &why)) {
        st_skip(add("branches_each_counter", NULL, NULL, PMU_FEAT_COUNTING), why);
        return;
    }
    unsigned n = MIN(PMU.caps.gp_counters, 8u);
    for (unsigned i = 0; i < n; i++) {
        loop_on_counter("branches", me->branches, me->branches_per_iter, i);
        loop_on_counter("instructions", me->instructions, PMU_BRANCH_LOOP_INSNS_PER_ITER, i);
    }
}

/* NetBurst: retired branches on whichever counter its ESCR feeds. */
static void check_branches_scheduled(const struct st_model_events *me)
{
    struct pmu_event_enc e;
    char err[160], name[32], cname[16] = "";
    const char *why;
    uint64_t cnt[2] = {0, 0};
    if (!me || me->per_counter)
        return;
    if (!pmu_may_program(PMU_FEAT_COUNTING, &why)) {
        st_skip(add("branches", NULL, me->branches, PMU_FEAT_COUNTING), why);
        return;
    }
    if (parse(me->branches, &e, err, sizeof(err)) != 0) {
        st_skip(add("branches", NULL, me->branches, PMU_FEAT_COUNTING), err);
        return;
    }
    for (unsigned k = 0; k < 2; k++) {
        pmu_group_init(&g, "selftest:branches", NULL);
        if (pmu_group_add_all(&g, &e, 1, false, err, sizeof(err)) != 0) {
            struct st_check *c = add("branches", NULL, short_name(e.name), PMU_FEAT_COUNTING);
            st_fail(c, err);
            settle(c);
            return;
        }
        run_group(pmu_known_branch_loop, ST_LOOP_N << k, NULL);
        cnt[k] = g.s[0].value;
        counter_name(&g.s[0], cname, sizeof(cname));
    }
    fmt_snprintf(name, sizeof(name), "branches_%s", cname);
    struct st_check *c = add(name, cname, short_name(e.name), PMU_FEAT_COUNTING);
    st_judge_loop(c, cnt[0], cnt[1], ST_LOOP_N, me->branches_per_iter, ST_DIFF_TOL, ST_CONST_MAX);
    settle(c);
}

static void gone_disable(enum pmu_feature f, uint64_t mask, const char *what)
{
    char why[sizeof(PMU.failed_why[0])];
    if (!PMU.has[f] || gone[f] || !pmu_usable_all_gone(&PMU.ctrs, mask))
        return;
    pmu_usable_gone_reason(&PMU.ctrs, mask, what, why, sizeof(why));
    pmu_feature_disable(f, why);
    gone[f] = true;
}

/* The general counters of a feature's event; all of them when it does not parse here (its own check says so). */
static uint64_t event_gp_counters(const char *spec)
{
    struct pmu_event_enc e;
    char err[160];
    uint64_t m = parse(spec, &e, err, sizeof(err)) == 0 ? e.cntmask & PMU_USABLE_GP_MASK : 0;
    return m ? m : PMU_USABLE_GP_MASK;
}

/* After the per-counter checks: a feature is disabled as a whole only when every counter it needs is gone.
 * Counting, overflow and the off-core events need a general counter; PEBS one of its PEBS counters ([NHM] 3.7:
 * PMC0-3, the load-latency event's counter mask). */
static void settle_gone(void)
{
    const uint64_t gp = PMU_USABLE_GP_MASK;
    gone_disable(PMU_FEAT_COUNTING, gp, "general counter");
    gone_disable(PMU_FEAT_OVERFLOW, gp, "general counter");
    if (PMU.has[PMU_FEAT_OFFCORE])
        gone_disable(PMU_FEAT_OFFCORE, event_gp_counters("OFFCORE_RESPONSE_0:DMND_DATA_RD:UNCORE_HIT"),
                     "counter OFFCORE_RESPONSE_0 can use");
    if (PMU.has[PMU_FEAT_PEBS])
        gone_disable(PMU_FEAT_PEBS, event_gp_counters("MEM_INST_RETIRED:LATENCY_ABOVE_THRESHOLD"), "PEBS counter");
}

/* CMASK=1 and CMASK=1 + INV of one event, with core cycles, over the branch loop: [PAG] says the two
 * add up to the core cycles. */
static void check_cmask_inv(const struct st_model_events *me)
{
    struct pmu_event_enc ev[3];
    char err[160], cn[2][16], pair[24];
    const char *why;
    if (!me || !me->cmask_ge) {
        st_skip(add("cmask_inv", NULL, NULL, PMU_FEAT_COUNTING),
                me && me->note ? me->note : "no CMASK/INV events known for this PMU");
        return;
    }
    if (!pmu_may_program(PMU_FEAT_COUNTING, &why)) {
        st_skip(add("cmask_inv", NULL, me->cmask_lt, PMU_FEAT_COUNTING), why);
        return;
    }
    if (parse(me->cmask_ge, &ev[0], err, sizeof(err)) != 0 || parse(me->cmask_lt, &ev[1], err, sizeof(err)) != 0 ||
        parse(me->cycles, &ev[2], err, sizeof(err)) != 0) {
        st_skip(add("cmask_inv", NULL, me->cmask_lt, PMU_FEAT_COUNTING), err);
        return;
    }
    pmu_group_init(&g, "selftest:cmask_inv", NULL);
    if (pmu_group_add_all(&g, ev, 3, true, err, sizeof(err)) != 0) {
        struct st_check *c = add("cmask_inv", NULL, short_name(ev[1].name), PMU_FEAT_COUNTING);
        st_fail(c, err);
        settle(c);
        return;
    }
    run_group(pmu_known_branch_loop, 2 * ST_LOOP_N, NULL);
    counter_name(pmu_group_slot(&g, 0), cn[0], sizeof(cn[0]));
    counter_name(pmu_group_slot(&g, 1), cn[1], sizeof(cn[1]));
    fmt_snprintf(pair, sizeof(pair), "%s+%s", cn[0], cn[1]);
    struct st_check *c = add("cmask_inv", pair, short_name(ev[1].name), PMU_FEAT_COUNTING);
    st_judge_cmask_inv(c, pmu_group_slot(&g, 0)->value, pmu_group_slot(&g, 1)->value, pmu_group_slot(&g, 2)->value,
                       ST_CMASK_TOL_FRAC, ST_CMASK_TOL_ABS);
    settle(c);
}

static void check_overflow(void)
{
    struct pmu_event_enc e;
    char err[160], cname[16];
    const char *why;

    if (!pmu_may_program(PMU_FEAT_OVERFLOW, &why)) {
        st_skip(add("overflow", NULL, NULL, PMU_FEAT_OVERFLOW), why);
        return;
    }
    if (pmu_enc_instructions(&e) != 0) {
        st_skip(add("overflow", NULL, NULL, PMU_FEAT_OVERFLOW), "no instructions-retired encoding for this PMU");
        return;
    }
    pmu_group_init(&g, "selftest:overflow", NULL);
    if (pmu_group_add_all(&g, &e, 1, true, err, sizeof(err)) != 0) {
        struct st_check *c = add("overflow", NULL, short_name(e.name), PMU_FEAT_OVERFLOW);
        st_fail(c, err);
        settle(c);
        return;
    }
    struct pmu_slot *s = &g.s[0];
    s->preload = (s->width >= 64 ? 0 : (1ULL << s->width)) - ST_OVF_DISTANCE;
    run_group(pmu_known_branch_loop, ST_OVF_LOOP, NULL);
    counter_name(s, cname, sizeof(cname));
    struct st_check *c = add("overflow", cname, short_name(e.name), PMU_FEAT_OVERFLOW);
    uint64_t lo = PMU_BRANCH_LOOP_INSNS_PER_ITER * ST_OVF_LOOP;
    uint64_t hi = lo + (loop_const >= 0 ? (uint64_t)loop_const + ST_DIFF_TOL : ST_CONST_MAX);
    if (loop_const >= 0)
        lo += (uint64_t)loop_const > ST_DIFF_TOL ? (uint64_t)loop_const - ST_DIFF_TOL : 0;
    st_judge_range(c, s->value, lo, hi, "branch-loop instructions plus the measured constant");
    char d[sizeof(c->detail)];
    fmt_snprintf(d, sizeof(d), "preloaded 0x%lx (%lu below the wrap), read 0x%lx: overflow %s; %s",
                 (unsigned long)s->preload, (unsigned long)ST_OVF_DISTANCE, (unsigned long)s->raw,
                 s->overflowed ? "seen" : "NOT seen", c->detail);
    memcpy(c->detail, d, sizeof(d));
    if (!s->overflowed)
        c->status = ST_FAILED;
    settle(c);
}

static uint64_t llc_bytes(void)
{
    uint64_t b = 0;
    for (uint32_t i = 0; i < K.cpu.n_caches; i++)
        if (K.cpu.caches[i].type != CPU_CACHE_INSTRUCTION && K.cpu.caches[i].bytes > b)
            b = K.cpu.caches[i].bytes;
    return b ? b : MiB(8);
}

/* Memory far larger than the LLC for the off-core and uncore checks: 4 x LLC, at least 8 MiB. */
static size_t big_bytes(void) { return (size_t)MAX(4 * llc_bytes(), MiB(8)); }

static void check_offcore(void)
{
    struct pmu_event_enc e[2];
    struct pmu_chase ch;
    char err[200], spec[2][80], cname[16] = "";
    const char *why;
    uint64_t cnt[2] = {0, 0};
    uint16_t val[2] = {0, 0};

    if (!pmu_may_program(PMU_FEAT_OFFCORE, &why)) {
        st_skip(add("offcore_request_response", NULL, NULL, PMU_FEAT_OFFCORE), why);
        return;
    }
    const char *dram = pmu_offcore_local_dram_event(PMU.caps.event_table, PMU.caps.cpu_family, PMU.caps.cpu_model);
    if (!dram) {
        st_skip(add("offcore_request_response", NULL, NULL, PMU_FEAT_OFFCORE),
                "no local-DRAM off-core response event for this table");
        return;
    }
    for (unsigned k = 0; k < 2; k++) {
        if (k)
            fmt_snprintf(spec[k], sizeof(spec[k]), "OFFCORE_RESPONSE_0:rsp=0x%04x", val[1]);
        else
            fmt_snprintf(spec[k], sizeof(spec[k]), "%s", dram);
        int rc = parse(spec[k], &e[k], err, sizeof(err));
        if (!k && !rc) {
            val[0] = (uint16_t)e[0].extra;
            val[1] = st_swap_bytes16(val[0]);
        }
        if (rc != 0) {
            struct st_check *c = add("offcore_request_response", NULL, spec[k], PMU_FEAT_OFFCORE);
            st_fail(c, err);
            settle(c);
            return;
        }
    }
    size_t bytes = big_bytes();
    /* On this CPU's node: the value counts local DRAM responses only. */
    if (pmu_chase_alloc(&ch, bytes, 0x5e1f7e57, PMU_CHASE_LOCAL_NODE, "pmu_selftest_chase") != 0) {
        st_skip(add("offcore_request_response", NULL, spec[0], PMU_FEAT_OFFCORE),
                "cannot allocate a chase buffer of 4 x the LLC on this CPU's node");
        return;
    }
    void *p = chase_run(ch.start, ST_OFFCORE_LOADS / CHASE_UNROLL); /* warm the TLB path, not the lines */
    for (unsigned k = 0; k < 2; k++) {
        pmu_group_init(&g, "selftest:offcore", k ? "byte_swapped" : "value");
        if (pmu_group_add_all(&g, &e[k], 1, false, err, sizeof(err)) != 0) {
            pmu_chase_free(&ch);
            struct st_check *c = add("offcore_request_response", NULL, spec[k], PMU_FEAT_OFFCORE);
            st_fail(c, err);
            settle(c);
            return;
        }
        pmu_group_program(&g);
        pmu_group_start(&g);
        p = chase_run(p, ST_OFFCORE_LOADS / CHASE_UNROLL);
        pmu_group_stop(&g);
        pmu_group_read(&g);
        pmu_group_release(&g);
        cnt[k] = g.s[0].value;
        if (!k)
            counter_name(&g.s[0], cname, sizeof(cname));
    }
    pmu_chase_free(&ch);
    struct st_check *c = add("offcore_request_response", cname, spec[0], PMU_FEAT_OFFCORE);
    st_judge_offcore(c, val[0], cnt[0], val[1], cnt[1], ST_OFFCORE_LOADS);
    settle(c);
}

static void check_pebs(void)
{
    static struct pmu_pebs_capture pc;
    struct pmu_chase ch;
    const char *why;
    char cname[16] = "";

    if (!pmu_may_program(PMU_FEAT_PEBS, &why)) {
        st_skip(add("pebs_l1", NULL, NULL, PMU_FEAT_PEBS), why);
        return;
    }
    if (pmu_chase_alloc(&ch, KiB(4), 0x11c4a5e, PMU_CHASE_LOCAL_NODE, "pmu_selftest_l1") != 0) {
        st_skip(add("pebs_l1", NULL, NULL, PMU_FEAT_PEBS), "cannot allocate the L1 chase buffer");
        return;
    }
    /* 64 lines: L1-resident after the first pass. ldlat 3 is the minimum ([NHM] Table 17), so every
     * load (L1 hit: 4 cycles) qualifies; a prime period keeps samples off one line. */
    pmu_pebs_chase(&pc, "selftest_l1", ch.start, 64 * 1024, ch.buf, ch.bytes, PMU_PEBS_DEFAULT_LDLAT, 97);
    pmu_chase_free(&ch);
    if (pc.g.n)
        counter_name(&pc.g.s[0], cname, sizeof(cname));
    struct st_check *c = add("pebs_l1", cname, "MEM_INST_RETIRED:LATENCY_ABOVE_THRESHOLD", PMU_FEAT_PEBS);
    if (pc.status != 0) {
        char w[160];
        fmt_snprintf(w, sizeof(w), "PEBS could not be programmed: %s", pc.why ? pc.why : "?");
        st_fail(c, w);
        settle(c);
        return;
    }
    uint64_t l1 = pc.hist.count[1];
    st_judge_range(c, l1, pc.records ? (pc.records + 1) / 2 : 1, pc.records ? pc.records : 1,
                   "records with data source 1 (L1 hit): at least half of all records");
    char d[sizeof(c->detail)];
    fmt_snprintf(d, sizeof(d), "%lu PEBS records, %lu outside the 4 KiB buffer, %lu bad drains; %s",
                 (unsigned long)pc.records, (unsigned long)pc.outside, (unsigned long)pc.bad, c->detail);
    memcpy(c->detail, d, sizeof(d));
    if (pc.outside || pc.bad)
        c->status = ST_FAILED;
    settle(c);
}

static void check_lbr(void)
{
    static struct pmu_lbr_capture lc;
    const char *why;
    unsigned hits = 0;

    if (!pmu_may_program(PMU_FEAT_LBR, &why)) {
        st_skip(add("lbr_loop", NULL, NULL, PMU_FEAT_LBR), why);
        return;
    }
    struct st_check *c = add("lbr_loop", "lbr", NULL, PMU_FEAT_LBR);
    if (pmu_lbr_known_loop(&lc, 200, &hits) != 0) {
        char w[160];
        fmt_snprintf(w, sizeof(w), "LBR could not be programmed: %s", lc.why ? lc.why : "?");
        st_fail(c, w);
        settle(c);
        return;
    }
    unsigned need = PMU.caps.lbr_depth >= 16 ? 4 : 1;
    char what[96];
    fmt_snprintf(what, sizeof(what), "entries holding the loop branch 0x%lx -> 0x%lx (TOS %lu)",
                 (unsigned long)pmu_known_loop_branch(), (unsigned long)pmu_known_loop_head(), (unsigned long)lc.tos);
    st_judge_range(c, hits, need, lc.n ? lc.n : need, what);
    if (lc.faults)
        c->status = ST_FAILED;
    settle(c);
}

/* The uncore general counters (Nehalem/Westmere UNC_QMC_NORMAL_READS.ANY, [PAG] Table 32; family 15h
 * northbridge DRAM accesses of both DCTs) over a known read stream on this CPU's node: one count
 * per 64-byte line, within ST_UNC_LO..ST_UNC_HI. */
static void check_uncore_stream(void)
{
    struct pmu_event_enc e;
    char err[200], name[32], cname[16];
    const char *why, *spec;
    uint64_t phys = 0;
    unsigned n;

    if (!pmu_may_program(PMU_FEAT_UNCORE, &why)) {
        st_skip(add("uncore_stream", NULL, NULL, PMU_FEAT_UNCORE), why);
        return;
    }
    if (PMU.caps.uncore == PMU_UNCORE_NHM) {
        spec = "UNC_QMC_NORMAL_READS:ANY";
        n = MIN(PMU.caps.uncore_counters, UNCORE_BW_MAX_COUNTERS);
    } else if (PMU.caps.uncore == PMU_UNCORE_AMD_NB) {
        spec = "DRAM_ACCESSES:ALL";
        n = MIN(PMU.caps.nb_counters, UNCORE_BW_MAX_COUNTERS);
    } else {
        st_skip(add("uncore_stream", NULL, NULL, PMU_FEAT_UNCORE), "no uncore stream check for this uncore");
        return;
    }
    if (parse(spec, &e, err, sizeof(err)) != 0) {
        struct st_check *c = add("uncore_stream", NULL, spec, PMU_FEAT_UNCORE);
        st_fail(c, err);
        settle(c);
        return;
    }
    size_t bytes = big_bytes();
    const struct smp_cpu *me = smp_cpu(pmu_cpu_index());
    int node = me ? me->node : -1;
    if (!K.pmm || pmm_alloc_tagged(K.pmm, bytes, 4096, node, "pmu_selftest_stream", &phys) != PMM_OK) {
        st_skip(add("uncore_stream", NULL, spec, PMU_FEAT_UNCORE), "cannot allocate a stream buffer of 4 x the LLC");
        return;
    }
    void *buf = (void *)(uintptr_t)phys;
    pmu_stream_read(buf, bytes); /* the LLC now holds the buffer's tail: the next pass misses on every line */
    for (unsigned i = 0; i < n; i++) {
        uint8_t kind = PMU.caps.uncore == PMU_UNCORE_NHM ? PMU_SLOT_UNCORE_GP : PMU_SLOT_AMD_NB;
        struct pmu_slot tmp = {.kind = kind, .index = (uint8_t)i};
        counter_name(&tmp, cname, sizeof(cname));
        fmt_snprintf(name, sizeof(name), "uncore_stream_%s", cname);
        struct st_check *c = add(name, cname, short_name(e.name), PMU_FEAT_UNCORE);
        pmu_group_init(&g, "selftest:uncore_stream", c->name);
        if (!(e.cntmask & (1ULL << i))) {
            st_skip(c, "the event cannot be counted on this counter");
            continue;
        }
        if (pmu_group_add(&g, &e, 0, i, 0) != 0) {
            st_fail(c, "the counter does not exist on this PMU");
            settle(c);
            continue;
        }
        pmu_group_program(&g);
        pmu_group_start(&g);
        pmu_stream_read(buf, bytes);
        pmu_group_stop(&g);
        pmu_group_read(&g);
        pmu_group_release(&g);
        char what[96];
        fmt_snprintf(what, sizeof(what), "one per 64-byte line of a %lu MiB read pass on node %d",
                     (unsigned long)(bytes >> 20), node);
        st_judge_ratio(c, g.s[0].value, bytes / 64, ST_UNC_LO, ST_UNC_HI, what);
        settle(c);
    }
    pmm_free(K.pmm, phys, bytes);
}

static void check_uncore_clock(void)
{
    struct pmu_event_enc e;
    char err[200];
    const char *why;

    if (!pmu_may_program(PMU_FEAT_UNCORE, &why)) {
        st_skip(add("uncore_clock", NULL, NULL, PMU_FEAT_UNCORE), why);
        return;
    }
    if (PMU.caps.uncore != PMU_UNCORE_NHM) {
        st_skip(add("uncore_clock", NULL, NULL, PMU_FEAT_UNCORE), "no uncore fixed counter on this PMU");
        return;
    }
    struct st_check *c = add("uncore_clock", "unc_fixed", "UNC_CLK_UNHALTED", PMU_FEAT_UNCORE);
    if (parse("UNC_CLK_UNHALTED", &e, err, sizeof(err)) != 0) {
        st_fail(c, err);
        settle(c);
        return;
    }
    pmu_group_init(&g, "selftest:uncore_clock", NULL);
    if (pmu_group_add_all(&g, &e, 1, false, err, sizeof(err)) != 0) {
        st_fail(c, err);
        settle(c);
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
    char what[80];
    fmt_snprintf(what, sizeof(what), "0.05..5 uncore clocks per TSC tick over %lu ticks", (unsigned long)(t1 - t0));
    st_judge_ratio(c, g.s[0].value, t1 - t0, 0.05, 5.0, what);
    settle(c);
}

/* "<kind>_usable": "0xb", "<kind>_disabled": [{counter, check, reason}] for the counters of mask. */
static void counters_json(struct json *j, const char *kind, uint64_t mask, uint32_t usable)
{
    char k[24], n[16];
    fmt_snprintf(k, sizeof(k), "%s_usable", kind);
    json_kv_hex(j, k, usable);
    fmt_snprintf(k, sizeof(k), "%s_disabled", kind);
    json_key(j, k);
    json_arr_begin(j);
    for (unsigned b = 0; b < 64; b++) {
        if (!pmu_usable_gone(&PMU.ctrs, mask & (1ULL << b)))
            continue;
        pmu_usable_counter_name(&PMU.ctrs, b, n, sizeof(n));
        json_obj_begin(j);
        json_kv_str(j, "counter", n);
        json_kv_str(j, "check", PMU.ctrs.loss[b].check);
        json_kv_str(j, "reason", PMU.ctrs.loss[b].reason);
        json_obj_end(j);
    }
    json_arr_end(j);
}

static const char *status_name(enum st_status s)
{
    return s == ST_OK ? "ok" : s == ST_FAILED ? "failed" : "skipped";
}

void pmu_selftest_run(void)
{
    PMU.selftest_done = true;
    nchecks = 0;
    loop_const = -1;
    for (unsigned f = 0; f < PMU_FEAT_COUNT; f++)
        first_fail[f] = -1, nfail_feat[f] = 0, gone[f] = false;
    pmu_usable_init(&PMU.ctrs, PMU.ctrs.present, (enum pmu_usable_naming)PMU.ctrs.naming);
    const struct st_model_events *me = NULL;
    if (PMU.present) {
        me = st_model_events(PMU.caps.event_table);
        check_default_counters(me);
        check_each_counter(me);
        check_branches_scheduled(me);
        settle_gone();
        check_cmask_inv(me);
        check_overflow();
        check_offcore();
        check_pebs();
        check_lbr();
        check_uncore_stream();
        check_uncore_clock();
    }
    unsigned nok = 0, nfail = 0, nskip = 0;
    for (unsigned i = 0; i < nchecks; i++) {
        nok += checks[i].status == ST_OK;
        nfail += checks[i].status == ST_FAILED;
        nskip += checks[i].status == ST_SKIPPED;
    }

    struct json *j = pmu_rec_begin("pmu_selftest");
    json_kv_str(j, "status", !PMU.present ? "unavailable" : nfail ? "failed" : "ok");
    if (!PMU.present)
        json_kv_str(j, "reason", PMU.reason ? PMU.reason : "PMU unavailable");
    json_kv_str(j, "model", PMU.detect_ran ? PMU.caps.model : NULL);
    if (PMU.assumed)
        json_kv_str(j, "assumed", PMU.assumed_name);
    if (me && me->note)
        json_kv_str(j, "note", me->note);
    json_key(j, "checks");
    json_arr_begin(j);
    for (unsigned i = 0; i < nchecks; i++) {
        const struct st_check *c = &checks[i];
        json_obj_begin(j);
        json_kv_str(j, "name", c->name);
        json_kv_str(j, "status", status_name(c->status));
        json_kv_str(j, "detail", c->detail);
        json_kv_str(j, "feature", pmu_feature_name((enum pmu_feature)c->feature));
        json_kv_str(j, "counter", c->counter[0] ? c->counter : NULL);
        json_kv_str(j, "event", c->event[0] ? c->event : NULL);
        if (c->judged) {
            json_kv_uint(j, "counted", c->counted);
            json_kv_uint(j, "expected_lo", c->expected_lo);
            if (c->expected_hi == ST_UNBOUNDED)
                json_kv_null(j, "expected_hi");
            else
                json_kv_uint(j, "expected_hi", c->expected_hi);
        } else {
            json_kv_null(j, "counted");
            json_kv_null(j, "expected_lo");
            json_kv_null(j, "expected_hi");
        }
        json_obj_end(j);
    }
    json_arr_end(j);
    json_key(j, "disabled");
    json_arr_begin(j);
    for (unsigned f = 0; f < PMU_FEAT_COUNT; f++)
        if (PMU.failed[f])
            json_str(j, pmu_feature_name((enum pmu_feature)f));
    json_arr_end(j);
    if (PMU.present) {
        counters_json(j, "gp", PMU_USABLE_GP_MASK, pmu_usable_gp(&PMU.ctrs));
        if (PMU.ctrs.present >> PMU_USABLE_FIXED_SHIFT)
            counters_json(j, "fixed", ~PMU_USABLE_GP_MASK, pmu_usable_fixed(&PMU.ctrs));
    }
    pmu_rec_end();

    /* The console report: a header, then one line per check (status, check, counter, expected, counted). */
    kprintf("PMU self-test: %s", !PMU.present ? "unavailable" : nfail ? "FAILED" : "ok");
    if (PMU.present)
        kprintf(" - %u checks: %u ok, %u failed, %u skipped", nchecks, nok, nfail, nskip);
    kprintf("%s\n", PMU.assumed ? " (assumed PMU: QEMU's MSRs are silent, zero counts fail)" : "");
    for (unsigned i = 0; i < nchecks; i++) {
        char line[200];
        st_format_line(line, sizeof(line), &checks[i]);
        kprintf("%s\n", line);
    }
    if (pmu_usable_gone(&PMU.ctrs, ~0ULL)) {
        kprintf("  counters disabled:");
        for (unsigned b = 0; b < 64; b++)
            if (pmu_usable_gone(&PMU.ctrs, 1ULL << b)) {
                char n[16];
                pmu_usable_counter_name(&PMU.ctrs, b, n, sizeof(n));
                kprintf(" %s", n);
            }
        kprintf(" (usable: general 0x%lx, fixed 0x%lx)%s\n", (unsigned long)pmu_usable_gp(&PMU.ctrs),
                (unsigned long)pmu_usable_fixed(&PMU.ctrs), PMU.assumed ? "; not enforced under pmu_assume" : "");
    }
    bool any = false;
    for (unsigned f = 0; f < PMU_FEAT_COUNT; f++)
        if (PMU.failed[f]) {
            kprintf("%s%s (%s)", any ? ", " : "  disabled: ", pmu_feature_name((enum pmu_feature)f), PMU.failed_why[f]);
            any = true;
        }
    if (any)
        kprintf("\n");
}
