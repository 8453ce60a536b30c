/* sched.c - counter assignment: most-constrained-first backtracking over an increasing group count. */
#include "pmu/sched.h"
#include "pmu/encode.h"

#define SCHED_NODE_BUDGET (1u << 20) /* placement attempts per group count before giving up proof */
#define MAX_REGS_PER_GROUP SCHED_MAX_EVENTS

struct group_state {
    uint64_t used[SCHED_NUM_CLASSES];
    unsigned nregs;
    uint32_t reg[MAX_REGS_PER_GROUP];
    uint64_t val[MAX_REGS_PER_GROUP];
    uint32_t refs[MAX_REGS_PER_GROUP];
};

struct search {
    const struct sched_event *ev;
    unsigned n;
    const uint64_t *avail;
    unsigned order[SCHED_MAX_EVENTS];
    struct group_state g[SCHED_MAX_EVENTS];
    struct sched_assign a[SCHED_MAX_EVENTS];
    unsigned k;
    unsigned nodes;
    bool budget_hit;
};

static unsigned popcount64(uint64_t v)
{
    unsigned n = 0;
    while (v) {
        v &= v - 1;
        n++;
    }
    return n;
}

/* Candidate counters in preference order: fixed counters (bits 32+) first so general counters stay
 * free for events that need them, then general counters ascending. */
static unsigned counter_order(uint64_t mask, uint8_t out[64])
{
    unsigned n = 0;
    for (unsigned b = 32; b < 64; b++)
        if (mask & (1ULL << b))
            out[n++] = (uint8_t)b;
    for (unsigned b = 0; b < 32; b++)
        if (mask & (1ULL << b))
            out[n++] = (uint8_t)b;
    return n;
}

static int reg_find(const struct group_state *g, uint32_t reg)
{
    for (unsigned i = 0; i < g->nregs; i++)
        if (g->reg[i] == reg)
            return (int)i;
    return -1;
}

static bool reg_ok(const struct group_state *g, uint32_t reg, uint64_t val)
{
    int i;
    if (!reg)
        return true;
    i = reg_find(g, reg);
    return i < 0 || g->val[i] == val;
}

static void reg_take(struct group_state *g, uint32_t reg, uint64_t val)
{
    int i;
    if (!reg)
        return;
    i = reg_find(g, reg);
    if (i >= 0) {
        g->refs[i]++;
        return;
    }
    g->reg[g->nregs] = reg;
    g->val[g->nregs] = val;
    g->refs[g->nregs] = 1;
    g->nregs++;
}

static void reg_drop(struct group_state *g, uint32_t reg)
{
    int i;
    if (!reg)
        return;
    i = reg_find(g, reg);
    if (i < 0)
        return;
    if (--g->refs[i] == 0) {
        g->nregs--;
        g->reg[i] = g->reg[g->nregs];
        g->val[i] = g->val[g->nregs];
        g->refs[i] = g->refs[g->nregs];
    }
}

/* Try to place event e into group gi; on success recurse to the next event. */
static bool place(struct search *s, unsigned pos, unsigned used_groups);

static bool try_group(struct search *s, unsigned pos, unsigned gi, unsigned used_groups)
{
    unsigned e = s->order[pos];
    const struct sched_event *ev = &s->ev[e];
    struct group_state *g = &s->g[gi];

    for (unsigned ai = 0; ai < ev->nalt; ai++) {
        const struct sched_alt *alt = &ev->alt[ai];
        uint8_t cand[64];
        unsigned nc;

        if (!reg_ok(g, alt->reg, alt->reg_val))
            continue;
        nc = counter_order(alt->cntmask & s->avail[ev->cls] & ~g->used[ev->cls], cand);
        for (unsigned ci = 0; ci < nc; ci++) {
            if (++s->nodes > SCHED_NODE_BUDGET) {
                s->budget_hit = true;
                return false;
            }
            g->used[ev->cls] |= 1ULL << cand[ci];
            reg_take(g, alt->reg, alt->reg_val);
            s->a[e].group = (uint8_t)gi;
            s->a[e].alt = (uint8_t)ai;
            s->a[e].counter = cand[ci];
            if (place(s, pos + 1, gi + 1 > used_groups ? gi + 1 : used_groups))
                return true;
            reg_drop(g, alt->reg);
            g->used[ev->cls] &= ~(1ULL << cand[ci]);
            if (s->budget_hit)
                return false;
        }
    }
    return false;
}

static bool place(struct search *s, unsigned pos, unsigned used_groups)
{
    if (pos == s->n)
        return true;
    /* Groups are interchangeable: an event opens at most one new group (the next index). */
    unsigned limit = used_groups < s->k ? used_groups + 1 : s->k;
    for (unsigned gi = 0; gi < limit; gi++) {
        if (try_group(s, pos, gi, used_groups))
            return true;
        if (s->budget_hit)
            return false;
    }
    return false;
}

static unsigned choices(const struct sched_event *ev, const uint64_t *avail)
{
    unsigned c = 0;
    for (unsigned i = 0; i < ev->nalt; i++)
        c += popcount64(ev->alt[i].cntmask & avail[ev->cls]);
    return c;
}

/* Groups needed at least: per class, events / counters; per single-choice register, distinct values. */
static unsigned lower_bound(const struct sched_event *ev, unsigned n, const uint64_t *avail)
{
    unsigned lb = 1;
    for (unsigned cls = 0; cls < SCHED_NUM_CLASSES; cls++) {
        unsigned cnt = 0, ctrs = popcount64(avail[cls]);
        for (unsigned i = 0; i < n; i++)
            if (ev[i].cls == cls)
                cnt++;
        if (cnt && ctrs)
            lb = MAX(lb, (cnt + ctrs - 1) / ctrs);
    }
    /* Hall-type bound: events whose counters all lie inside one event's counter set M share M. */
    for (unsigned i = 0; i < n; i++) {
        uint64_t m = 0, cnt = 0;
        for (unsigned a = 0; a < ev[i].nalt; a++)
            m |= ev[i].alt[a].cntmask;
        m &= avail[ev[i].cls];
        for (unsigned j = 0; j < n; j++) {
            uint64_t mj = 0;
            if (ev[j].cls != ev[i].cls)
                continue;
            for (unsigned a = 0; a < ev[j].nalt; a++)
                mj |= ev[j].alt[a].cntmask;
            if ((mj & avail[ev[j].cls] & ~m) == 0)
                cnt++;
        }
        if (popcount64(m))
            lb = MAX(lb, (unsigned)((cnt + popcount64(m) - 1) / popcount64(m)));
    }
    for (unsigned i = 0; i < n; i++) {
        if (ev[i].nalt != 1 || !ev[i].alt[0].reg)
            continue;
        unsigned distinct = 0;
        for (unsigned j = 0; j < n; j++) {
            if (ev[j].nalt != 1 || ev[j].alt[0].reg != ev[i].alt[0].reg)
                continue;
            bool first = true;
            for (unsigned k = 0; k < j; k++)
                if (ev[k].nalt == 1 && ev[k].alt[0].reg == ev[j].alt[0].reg &&
                    ev[k].alt[0].reg_val == ev[j].alt[0].reg_val)
                    first = false;
            if (first)
                distinct++;
        }
        lb = MAX(lb, distinct);
    }
    return lb;
}

int sched_assign(const struct sched_event *ev, unsigned n, const uint64_t avail[SCHED_NUM_CLASSES],
                 struct sched_result *res)
{
    static struct search s; /* large; the scheduler is not reentrant (single boot CPU uses it) */
    unsigned ch[SCHED_MAX_EVENTS];

    if (!res)
        return SCHED_ERR_ARGS;
    memset(res, 0, sizeof(*res));
    res->bad_event = -1;
    if (!ev || !avail || n > SCHED_MAX_EVENTS)
        return SCHED_ERR_ARGS;
    if (n == 0) {
        res->optimal = true;
        return SCHED_OK;
    }
    for (unsigned i = 0; i < n; i++) {
        if (ev[i].cls >= SCHED_NUM_CLASSES || ev[i].nalt == 0 || ev[i].nalt > SCHED_MAX_ALTS)
            return SCHED_ERR_ARGS;
        ch[i] = choices(&ev[i], avail);
        if (ch[i] == 0) {
            res->bad_event = (int)i;
            return SCHED_ERR_IMPOSSIBLE;
        }
    }

    memset(&s, 0, sizeof(s));
    s.ev = ev;
    s.n = n;
    s.avail = avail;
    /* Most constrained first: fewest (alternative, counter) choices, then extra registers, then input
     * order (insertion sort keeps it stable and deterministic). */
    for (unsigned i = 0; i < n; i++) {
        unsigned j = i;
        while (j > 0) {
            unsigned p = s.order[j - 1];
            bool p_reg = ev[p].alt[0].reg != 0, i_reg = ev[i].alt[0].reg != 0;
            if (ch[p] < ch[i] || (ch[p] == ch[i] && (p_reg >= i_reg)))
                break;
            s.order[j] = p;
            j--;
        }
        s.order[j] = i;
    }

    bool proved = true;
    for (unsigned k = lower_bound(ev, n, avail); k <= n; k++) {
        memset(s.g, 0, sizeof(s.g));
        s.k = k;
        s.nodes = 0;
        s.budget_hit = false;
        if (place(&s, 0, 0)) {
            res->ngroups = k;
            res->optimal = proved;
            memcpy(res->a, s.a, sizeof(res->a[0]) * n);
            return SCHED_OK;
        }
        if (s.budget_hit)
            proved = false;
    }
    /* Unreachable: with k == n every event sits alone and each fits alone. */
    return SCHED_ERR_IMPOSSIBLE;
}

int sched_event_from_enc(const struct pmu_event_enc *e, bool gp_only, struct sched_event *out)
{
    uint64_t mask;

    memset(out, 0, sizeof(*out));
    if (!e)
        return -1;
    mask = e->cntmask;
    if (gp_only && e->cls == PMU_CLS_CORE)
        mask &= PMU_CNT_GP_MASK;
    out->cls = e->cls;
    if (e->cls == PMU_CLS_NETBURST) {
        for (unsigned i = 0; i < 2; i++) {
            const struct p4_escr_info *x;
            if (!e->escr_msr[i])
                continue;
            x = pmu_p4_escr_by_msr(e->escr_msr[i]);
            if (!x)
                return -1;
            out->alt[out->nalt].cntmask = mask & x->counters;
            out->alt[out->nalt].reg = x->msr;
            out->alt[out->nalt].reg_val = e->escr;
            out->nalt++;
        }
        return out->nalt ? 0 : -1;
    }
    out->nalt = 1;
    out->alt[0].cntmask = mask;
    out->alt[0].reg = e->extra_msr;
    out->alt[0].reg_val = e->extra;
    if (e->alt_extra_msr) {
        out->nalt = 2;
        out->alt[1].cntmask = mask;
        out->alt[1].reg = e->alt_extra_msr;
        out->alt[1].reg_val = e->extra;
    }
    return 0;
}
