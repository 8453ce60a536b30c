/* event.c - parse "EVENT:UMASK:mod" / raw specifiers against the generated event tables. */
#include "pmu/event.h"
#include "pmu/encode.h"
#include "pmu/msr_pmu.h"
#include "pmu_events.h"

#define SPEC_MAX 256
#define MAX_TOKENS 24
#define NAME_MAX_LEN 63

/* ---- small freestanding string helpers ------------------------------------------------------ */

struct sbuf {
    char *p;
    size_t cap, len;
};

static void sb_init(struct sbuf *b, char *p, size_t cap)
{
    b->p = p;
    b->cap = cap;
    b->len = 0;
    if (p && cap)
        p[0] = 0;
}

static void sb_putc(struct sbuf *b, char c)
{
    if (!b->p || b->len + 1 >= b->cap)
        return;
    b->p[b->len++] = c;
    b->p[b->len] = 0;
}

static void sb_puts(struct sbuf *b, const char *s)
{
    while (s && *s)
        sb_putc(b, *s++);
}

static void sb_putn(struct sbuf *b, const char *s, size_t n)
{
    for (size_t i = 0; i < n && s[i]; i++)
        sb_putc(b, s[i]);
}

static void sb_hex(struct sbuf *b, uint64_t v)
{
    char tmp[17];
    int n = 0;
    sb_puts(b, "0x");
    do {
        tmp[n++] = "0123456789abcdef"[v & 0xf];
        v >>= 4;
    } while (v);
    while (n)
        sb_putc(b, tmp[--n]);
}

static void sb_dec(struct sbuf *b, uint64_t v)
{
    char tmp[21];
    int n = 0;
    do {
        tmp[n++] = (char)('0' + v % 10);
        v /= 10;
    } while (v);
    while (n)
        sb_putc(b, tmp[--n]);
}

/* Case-insensitive compare of a[0..alen) with the NUL-terminated b. */
static bool eq_n(const char *a, size_t alen, const char *b)
{
    size_t i;
    for (i = 0; i < alen; i++)
        if (!b[i] || kl_tolower(a[i]) != kl_tolower(b[i]))
            return false;
    return b[i] == 0;
}

/* Length of the event part of a row name ("EVENT:UMASK" -> strlen("EVENT")). */
static size_t base_len(const char *name)
{
    const char *c = strchr(name, ':');
    return c ? (size_t)(c - name) : strlen(name);
}

/* Do the first n characters of a and b match, ignoring case? */
static bool prefix_eq(const char *a, const char *b, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (kl_tolower(a[i]) != kl_tolower(b[i]))
            return false;
    return true;
}

/* Is row name n the event ev (evlen chars), with or without a unit mask? */
static bool row_is_event(const char *n, const char *ev, size_t evlen)
{
    return base_len(n) == evlen && prefix_eq(n, ev, evlen);
}

static bool streq_ci(const char *a, const char *b)
{
    return eq_n(a, strlen(a), b);
}


/* ---- lookup and suggestions ----------------------------------------------------------------- */

const struct pmu_event_desc *pmu_event_find(const struct pmu_event_table *t, const char *name)
{
    if (!t || !name)
        return NULL;
    for (uint32_t i = 0; i < t->count; i++)
        if (streq_ci(t->events[i].name, name))
            return &t->events[i];
    return NULL;
}

unsigned pmu_edit_distance(const char *a, const char *b)
{
    unsigned prev[NAME_MAX_LEN + 1], cur[NAME_MAX_LEN + 1];
    size_t la = MIN(strlen(a), (size_t)NAME_MAX_LEN), lb = MIN(strlen(b), (size_t)NAME_MAX_LEN);

    for (size_t j = 0; j <= lb; j++)
        prev[j] = (unsigned)j;
    for (size_t i = 1; i <= la; i++) {
        cur[0] = (unsigned)i;
        for (size_t j = 1; j <= lb; j++) {
            unsigned cost = kl_tolower(a[i - 1]) == kl_tolower(b[j - 1]) ? 0 : 1;
            unsigned v = prev[j - 1] + cost;
            v = MIN(v, prev[j] + 1);
            v = MIN(v, cur[j - 1] + 1);
            cur[j] = v;
        }
        memcpy(prev, cur, (lb + 1) * sizeof(prev[0]));
    }
    return prev[lb];
}

struct suggest {
    const char *name[3];
    size_t len[3];
    unsigned dist[3];
    unsigned n;
};

static void suggest_add(struct suggest *s, const char *name, size_t len, unsigned dist)
{
    for (unsigned i = 0; i < s->n; i++)
        if (s->len[i] == len && memcmp(s->name[i], name, len) == 0)
            return;
    unsigned pos = s->n;
    while (pos > 0 && s->dist[pos - 1] > dist)
        pos--;
    if (pos >= 3)
        return;
    unsigned last = s->n < 3 ? s->n : 2;
    for (unsigned i = last; i > pos; i--) {
        s->name[i] = s->name[i - 1];
        s->len[i] = s->len[i - 1];
        s->dist[i] = s->dist[i - 1];
    }
    s->name[pos] = name;
    s->len[pos] = len;
    s->dist[pos] = dist;
    if (s->n < 3)
        s->n++;
}

static unsigned dist_limit(size_t len)
{
    return len < 6 ? 2 : (unsigned)(len / 3 + 1);
}

static void suggest_events(struct suggest *s, const struct pmu_event_table *const *tables, unsigned ntables,
                           const char *ev, size_t evlen)
{
    char q[NAME_MAX_LEN + 1], cand[NAME_MAX_LEN + 1];
    size_t ql = MIN(evlen, (size_t)NAME_MAX_LEN);
    memcpy(q, ev, ql);
    q[ql] = 0;
    for (unsigned t = 0; t < ntables; t++) {
        for (uint32_t i = 0; i < tables[t]->count; i++) {
            const char *n = tables[t]->events[i].name;
            size_t bl = MIN(base_len(n), (size_t)NAME_MAX_LEN);
            memcpy(cand, n, bl);
            cand[bl] = 0;
            unsigned d = pmu_edit_distance(q, cand);
            if (d <= dist_limit(ql))
                suggest_add(s, n, bl, d);
        }
    }
}

static void suggest_umasks(struct suggest *s, const struct pmu_event_table *t, const char *ev, size_t evlen,
                           const char *um, size_t umlen)
{
    char q[NAME_MAX_LEN + 1];
    size_t ql = MIN(umlen, (size_t)NAME_MAX_LEN);
    memcpy(q, um, ql);
    q[ql] = 0;
    for (uint32_t i = 0; i < t->count; i++) {
        const char *n = t->events[i].name;
        size_t bl = base_len(n);
        if (n[bl] != ':' || !row_is_event(n, ev, evlen))
            continue;
        unsigned d = pmu_edit_distance(q, n + bl + 1);
        if (d <= dist_limit(ql))
            suggest_add(s, n + bl + 1, strlen(n + bl + 1), d);
    }
}

static void suggest_print(struct sbuf *e, const struct suggest *s)
{
    if (s->n == 0) {
        sb_puts(e, "; no close match");
        return;
    }
    sb_puts(e, "; did you mean ");
    for (unsigned i = 0; i < s->n; i++) {
        if (i)
            sb_puts(e, i + 1 == s->n ? " or " : ", ");
        sb_putn(e, s->name[i], s->len[i]);
    }
    sb_putc(e, '?');
}

/* ---- modifiers ------------------------------------------------------------------------------ */

struct mods {
    int usr, os, inv, edge, any, host, guest, cmpl; /* -1 = not given */
    int64_t cmask, ldlat, thr;                     /* -1 = not given */
    int64_t rsp;
};

static void mods_init(struct mods *m)
{
    m->usr = m->os = m->inv = m->edge = m->any = m->host = m->guest = m->cmpl = -1;
    m->cmask = m->ldlat = m->thr = m->rsp = -1;
}

static bool parse_u64(const char *s, size_t n, uint64_t *out)
{
    uint64_t v = 0;
    size_t i = 0;
    unsigned base = 10;

    if (n >= 2 && s[0] == '0' && (s[1] == 'x' || s[1] == 'X')) {
        base = 16;
        i = 2;
    }
    if (i >= n)
        return false;
    for (; i < n; i++) {
        int c = kl_tolower(s[i]);
        unsigned d;
        if (kl_isdigit(c))
            d = (unsigned)(c - '0');
        else if (base == 16 && c >= 'a' && c <= 'f')
            d = (unsigned)(c - 'a' + 10);
        else
            return false;
        if (v > (UINT64_MAX - d) / base)
            return false;
        v = v * base + d;
    }
    *out = v;
    return true;
}

enum mod_type { MT_BOOL, MT_INT };
struct mod_def {
    const char *name;
    enum mod_type type;
    size_t off; /* offset into struct mods */
};
#define MOFF(f) offsetof(struct mods, f)
static const struct mod_def mod_defs[] = {
    {"u", MT_BOOL, MOFF(usr)},          {"k", MT_BOOL, MOFF(os)},          {"i", MT_BOOL, MOFF(inv)},
    {"inv", MT_BOOL, MOFF(inv)},        {"e", MT_BOOL, MOFF(edge)},        {"edge", MT_BOOL, MOFF(edge)},
    {"t", MT_BOOL, MOFF(any)},          {"any", MT_BOOL, MOFF(any)},       {"h", MT_BOOL, MOFF(host)},
    {"g", MT_BOOL, MOFF(guest)},        {"cmpl", MT_BOOL, MOFF(cmpl)},     {"c", MT_INT, MOFF(cmask)},
    {"cmask", MT_INT, MOFF(cmask)},     {"ldlat", MT_INT, MOFF(ldlat)},    {"thr", MT_INT, MOFF(thr)},
    {"offcore_rsp", MT_INT, MOFF(rsp)}, {"rsp", MT_INT, MOFF(rsp)},
};

/* Returns 1 if tok is a modifier (stored), 0 if it is not one, <0 on a malformed modifier. */
static int parse_mod(const char *tok, size_t n, struct mods *m, struct sbuf *e)
{
    const char *eq = NULL;
    for (size_t i = 0; i < n; i++)
        if (tok[i] == '=') {
            eq = tok + i;
            break;
        }
    size_t nl = eq ? (size_t)(eq - tok) : n;
    for (size_t d = 0; d < ARRAY_SIZE(mod_defs); d++) {
        if (!eq_n(tok, nl, mod_defs[d].name))
            continue;
        uint64_t v = 1;
        if (eq && !parse_u64(eq + 1, n - nl - 1, &v)) {
            sb_puts(e, "bad value in modifier '");
            sb_putn(e, tok, n);
            sb_puts(e, "'");
            return PMU_EV_ERR_MODIFIER;
        }
        if (mod_defs[d].type == MT_BOOL) {
            if (v > 1) {
                sb_puts(e, "modifier '");
                sb_putn(e, tok, nl);
                sb_puts(e, "' takes 0 or 1");
                return PMU_EV_ERR_RANGE;
            }
            *(int *)((char *)m + mod_defs[d].off) = (int)v;
        } else {
            if (!eq) {
                sb_puts(e, "modifier '");
                sb_putn(e, tok, nl);
                sb_puts(e, "' needs a value (");
                sb_putn(e, tok, nl);
                sb_puts(e, "=N)");
                return PMU_EV_ERR_MODIFIER;
            }
            if (v > (uint64_t)INT64_MAX)
                v = (uint64_t)INT64_MAX;
            *(int64_t *)((char *)m + mod_defs[d].off) = (int64_t)v;
        }
        return 1;
    }
    return 0;
}

/* Reject modifiers the counter kind has no field for. */
static int check_mods(const struct mods *m, uint8_t kind, uint32_t flags, struct sbuf *e)
{
    const char *bad = NULL;
    bool priv = !(flags & PMU_EVF_NO_PRIV);

    switch (kind) {
    case PMU_TBL_KIND_INTEL_CORE:
        if (m->host >= 0 || m->guest >= 0)
            bad = "h/g (AMD only)";
        else if (m->cmpl >= 0 || m->thr >= 0)
            bad = "cmpl/thr (NetBurst only)";
        break;
    case PMU_TBL_KIND_INTEL_UNCORE:
        if (m->any >= 0 || m->host >= 0 || m->guest >= 0 || m->cmpl >= 0 || m->thr >= 0)
            bad = "t/h/g/cmpl/thr";
        break;
    case PMU_TBL_KIND_AMD_CORE:
    case PMU_TBL_KIND_AMD_NB:
        if (m->any >= 0)
            bad = "t (Intel only)";
        else if (m->cmpl >= 0 || m->thr >= 0)
            bad = "cmpl/thr (NetBurst only)";
        break;
    case PMU_TBL_KIND_NETBURST:
        if (m->inv >= 0 || m->any >= 0 || m->cmask >= 0 || m->host >= 0 || m->guest >= 0)
            bad = "i/t/c/h/g (NetBurst uses thr/cmpl/e)";
        break;
    }
    if (!bad && !priv && (m->usr >= 0 || m->os >= 0))
        bad = "u/k (this counter has no privilege filter)";
    if (!bad && m->ldlat >= 0 && !(flags & PMU_EVF_LDLAT))
        bad = "ldlat (only MEM_INST_RETIRED:LATENCY_ABOVE_THRESHOLD)";
    if (!bad && m->rsp >= 0 && !(flags & PMU_EVF_OFFCORE))
        bad = "offcore_rsp (only OFFCORE_RESPONSE_x)";
    if (bad) {
        sb_puts(e, "modifier not valid here: ");
        sb_puts(e, bad);
        return PMU_EV_ERR_MODIFIER;
    }
    return 0;
}

/* ---- combining rows ------------------------------------------------------------------------- */

struct combined {
    const struct pmu_event_desc *first;
    uint16_t event;
    uint32_t umask;
    uint32_t mods;
    uint32_t flags;
    uint64_t extra;
    uint64_t cntmask;
    uint8_t fixed;
    uint16_t escr[2];
};

static int combine_rows(const struct pmu_event_desc *const *rows, unsigned n, struct combined *c,
                        struct sbuf *e)
{
    uint32_t umask_or = 0, umask_and = 0xffff;
    uint64_t extra_or = 0, extra_and = ~0ULL;

    memset(c, 0, sizeof(*c));
    c->first = rows[0];
    c->event = rows[0]->event;
    c->flags = rows[0]->flags;
    c->cntmask = ~0ULL;
    c->escr[0] = rows[0]->escr[0];
    c->escr[1] = rows[0]->escr[1];
    for (unsigned i = 0; i < n; i++) {
        const struct pmu_event_desc *r = rows[i];
        if (n > 1 && !(r->flags & PMU_EVF_COMBINE)) {
            sb_puts(e, "unit masks of ");
            sb_putn(e, r->name, base_len(r->name));
            sb_puts(e, " cannot be combined (libpfm4 rejects it); count them as separate events");
            return PMU_EV_ERR_COMBINE;
        }
        if (r->mods && c->mods && r->mods != c->mods) {
            sb_puts(e, "unit masks ");
            sb_puts(e, rows[0]->name);
            sb_puts(e, " and ");
            sb_puts(e, r->name);
            sb_puts(e, " imply different cmask/inv/edge settings");
            return PMU_EV_ERR_COMBINE;
        }
        c->mods |= r->mods;
        umask_or |= r->umask;
        umask_and &= r->umask_dflt;
        extra_or |= r->extra;
        extra_and &= r->extra_dflt;
        c->cntmask &= r->cntmask;
        c->flags = (c->flags & r->flags & PMU_EVF_PEBS) | ((c->flags | r->flags) & ~PMU_EVF_PEBS);
    }
    /* Own bits of every given unit mask, plus the defaults of groups none of them belongs to
     * (ANY_RESPONSE when only request bits were named, and so on). */
    c->umask = umask_or | umask_and;
    c->extra = extra_or | (n > 0 ? extra_and : 0);
    c->flags &= ~(PMU_EVF_DEFAULT | PMU_EVF_ALIAS);
    c->fixed = n == 1 ? rows[0]->fixed : 0;
    return 0;
}

/* ---- encoders per table kind ---------------------------------------------------------------- */

/* Default: every privilege level. Naming one of u/k alone selects only that level. */
static int resolve_priv(const struct mods *m, bool *usr, bool *os, struct sbuf *e)
{
    if (m->usr < 0 && m->os < 0) {
        *usr = *os = true;
        return 0;
    }
    *usr = m->usr > 0;
    *os = m->os > 0;
    if (!*usr && !*os) {
        sb_puts(e, "u=0 with k=0 would count nothing");
        return PMU_EV_ERR_MODIFIER;
    }
    return 0;
}

static bool table_has_flag(const struct pmu_event_table *t, uint32_t flag)
{
    for (uint32_t i = 0; i < t->count; i++)
        if (t->events[i].flags & flag)
            return true;
    return false;
}

/* Merge a user value into a field the unit mask may already set. */
static int merge_field(int64_t user, uint64_t implied, uint64_t *out, const char *what, struct sbuf *e)
{
    if (user < 0) {
        *out = implied;
        return 0;
    }
    if (implied && (uint64_t)user != implied) {
        sb_puts(e, "modifier ");
        sb_puts(e, what);
        sb_puts(e, " conflicts with the value the unit mask implies (");
        sb_dec(e, implied);
        sb_puts(e, ")");
        return PMU_EV_ERR_MODIFIER;
    }
    *out = (uint64_t)user;
    return 0;
}

static int encode_intel_core(const struct pmu_event_table *t, const struct combined *c, const struct mods *m,
                             struct pmu_event_enc *out, struct sbuf *e)
{
    struct pmu_evtsel f;
    uint64_t cmask, inv, edge, any;
    int rc;

    memset(&f, 0, sizeof(f));
    if ((rc = merge_field(m->cmask, (c->mods & IA32_PERFEVTSEL_CMASK_MASK) >> IA32_PERFEVTSEL_CMASK_SHIFT, &cmask,
                          "c", e)))
        return rc;
    if ((rc = merge_field(m->inv, (c->mods & IA32_PERFEVTSEL_INV) ? 1 : 0, &inv, "i", e)))
        return rc;
    if ((rc = merge_field(m->edge, (c->mods & IA32_PERFEVTSEL_E) ? 1 : 0, &edge, "e", e)))
        return rc;
    if ((rc = merge_field(m->any, (c->mods & IA32_PERFEVTSEL_ANY) ? 1 : 0, &any, "t", e)))
        return rc;
    if (cmask > t->cmask_max) {
        sb_puts(e, "c=");
        sb_dec(e, cmask);
        sb_puts(e, " out of range (max ");
        sb_dec(e, t->cmask_max);
        sb_puts(e, ")");
        return PMU_EV_ERR_RANGE;
    }
    if (edge && cmask == 0) {
        /* Core i7 performance analysis guide, Table 1: edge detect needs a non-zero cmask. */
        sb_puts(e, "e (edge detect) needs c=N with N > 0");
        return PMU_EV_ERR_MODIFIER;
    }
    f.event = (uint8_t)c->event;
    f.umask = (uint8_t)c->umask;
    f.cmask = (uint8_t)cmask;
    f.inv = inv;
    f.edge = edge;
    f.any = any;
    f.en = true;
    if ((rc = resolve_priv(m, &f.usr, &f.os, e)))
        return rc;
    out->evtsel = pmu_enc_perfevtsel(&f);
    out->cls = PMU_CLS_CORE;

    if (c->flags & PMU_EVF_LDLAT) {
        /* [NHM] 3.7: CMASK and INV must stay 0 for the load-latency event. */
        if (cmask || inv) {
            sb_puts(e, "load-latency event must not use c or i ([NHM] 3.7)");
            return PMU_EV_ERR_MODIFIER;
        }
        uint32_t thr = m->ldlat >= 0 ? (m->ldlat > 0xffffffLL ? 0xffffffU : (uint32_t)m->ldlat) : (uint32_t)c->extra;
        if (pmu_enc_ldlat(thr, &out->extra)) {
            sb_puts(e, "ldlat=");
            sb_dec(e, thr);
            sb_puts(e, " out of range [3, 65535] ([NHM] Table 17)");
            return PMU_EV_ERR_RANGE;
        }
        out->extra_msr = MSR_PEBS_LD_LAT_THRESHOLD;
    }
    if (c->flags & PMU_EVF_OFFCORE) {
        uint64_t v = m->rsp >= 0 ? (uint64_t)m->rsp : c->extra;
        if (!pmu_offcore_rsp_valid(v)) {
            sb_puts(e, "offcore response value ");
            sb_hex(e, v);
            sb_puts(e, " needs at least one request bit (7:0) and one response bit (15:8), nothing above");
            return PMU_EV_ERR_RANGE;
        }
        bool rsp1 = (c->flags & PMU_EVF_OFFCORE_RSP1) != 0;
        out->extra = v;
        out->extra_msr = rsp1 ? MSR_OFFCORE_RSP_1 : MSR_OFFCORE_RSP_0;
        /* Westmere has both MSRs; the same request can move to the other one (Linux intel_alt_er). */
        if (table_has_flag(t, rsp1 ? PMU_EVF_OFFCORE_RSP0 : PMU_EVF_OFFCORE_RSP1)) {
            out->alt_extra_msr = rsp1 ? MSR_OFFCORE_RSP_0 : MSR_OFFCORE_RSP_1;
            out->alt_evtsel = (out->evtsel & ~IA32_PERFEVTSEL_EVENT_MASK) |
                              (rsp1 ? NHM_OFFCORE_EVENT_RSP_0 : NHM_OFFCORE_EVENT_RSP_1);
        }
    }
    out->cntmask = c->cntmask;
    if (c->fixed && cmask == 0 && !inv && !edge) {
        out->fixed_idx = (uint8_t)(c->fixed - 1);
        out->fixed_ctrl = (uint8_t)((f.os ? IA32_FIXED_CTR_CTRL_EN_OS : 0) | (f.usr ? IA32_FIXED_CTR_CTRL_EN_USR : 0) |
                                    (any ? IA32_FIXED_CTR_CTRL_ANY : 0));
    } else {
        out->cntmask &= PMU_CNT_GP_MASK; /* fixed counters have no cmask/inv/edge */
    }
    return 0;
}

static int encode_intel_uncore(const struct pmu_event_table *t, const struct combined *c, const struct mods *m,
                               struct pmu_event_enc *out, struct sbuf *e)
{
    struct pmu_unc_evtsel f;
    uint64_t cmask, inv, edge;
    int rc;

    memset(&f, 0, sizeof(f));
    if ((rc = merge_field(m->cmask, (c->mods & UNCORE_PERFEVTSEL_CMASK_MASK) >> UNCORE_PERFEVTSEL_CMASK_SHIFT,
                          &cmask, "c", e)))
        return rc;
    if ((rc = merge_field(m->inv, (c->mods & UNCORE_PERFEVTSEL_INV) ? 1 : 0, &inv, "i", e)))
        return rc;
    if ((rc = merge_field(m->edge, (c->mods & UNCORE_PERFEVTSEL_E) ? 1 : 0, &edge, "e", e)))
        return rc;
    if (cmask > t->cmask_max) {
        sb_puts(e, "c out of range");
        return PMU_EV_ERR_RANGE;
    }
    out->cls = PMU_CLS_UNCORE;
    out->cntmask = c->cntmask;
    if (c->fixed) {
        if (cmask || inv || edge) {
            sb_puts(e, "the uncore fixed counter takes no c/i/e");
            return PMU_EV_ERR_MODIFIER;
        }
        out->fixed_idx = (uint8_t)(c->fixed - 1);
        out->evtsel = pmu_enc_uncore_fixed_ctrl(true, false);
        return 0;
    }
    f.event = (uint8_t)c->event;
    f.umask = (uint8_t)c->umask;
    f.cmask = (uint8_t)cmask;
    f.inv = inv;
    f.edge = edge;
    f.occ_ctr_rst = (c->mods & UNCORE_PERFEVTSEL_OCC_CTR_RST) != 0;
    f.en = true;
    out->evtsel = pmu_enc_uncore_evtsel(&f);
    return 0;
}

static int encode_amd(const struct pmu_event_table *t, const struct combined *c, const struct mods *m,
                      struct pmu_event_enc *out, struct sbuf *e)
{
    struct pmu_amd_evtsel f;
    uint64_t cmask, inv, edge;
    int rc;

    memset(&f, 0, sizeof(f));
    if ((rc = merge_field(m->cmask, (c->mods & AMD_PERF_CTL_CMASK_MASK) >> AMD_PERF_CTL_CMASK_SHIFT, &cmask, "c", e)))
        return rc;
    if ((rc = merge_field(m->inv, (c->mods & AMD_PERF_CTL_INV) ? 1 : 0, &inv, "i", e)))
        return rc;
    if ((rc = merge_field(m->edge, (c->mods & AMD_PERF_CTL_EDGE) ? 1 : 0, &edge, "e", e)))
        return rc;
    if (cmask > t->cmask_max) {
        sb_puts(e, "c out of range");
        return PMU_EV_ERR_RANGE;
    }
    f.event = c->event;
    f.umask = (uint8_t)c->umask;
    f.cmask = (uint8_t)cmask;
    f.inv = inv;
    f.edge = edge;
    f.en = true;
    f.host_only = m->host > 0;
    f.guest_only = m->guest > 0;
    if (c->flags & PMU_EVF_NO_PRIV) {
        f.usr = f.os = false;
    } else if ((rc = resolve_priv(m, &f.usr, &f.os, e))) {
        return rc;
    }
    out->evtsel = pmu_enc_amd_evtsel(&f);
    out->cls = t->kind == PMU_TBL_KIND_AMD_NB ? PMU_CLS_AMD_NB : PMU_CLS_CORE;
    /* The rule again on the final event and unit mask: OR-ed unit masks and raw values can narrow it. */
    const char *why = NULL;
    out->cntmask = c->cntmask & pmu_cnt_rule_mask(t->cnt_rule, f.event, f.umask, PMU_CNT_GP_MASK, &why);
    if (!out->cntmask && why) {
        sb_puts(e, why);
        return PMU_EV_ERR_NO_COUNTER;
    }
    return 0;
}

static int encode_netburst(const struct pmu_event_table *t, const struct combined *c, const struct mods *m,
                           struct pmu_event_enc *out, struct sbuf *e)
{
    struct pmu_p4_escr es;
    struct pmu_p4_cccr cc;
    bool usr, os;

    memset(&es, 0, sizeof(es));
    memset(&cc, 0, sizeof(cc));
    if (m->thr >= 0 && (m->thr < 1 || m->thr > t->cmask_max)) {
        sb_puts(e, "thr out of range [1, 15]");
        return PMU_EV_ERR_RANGE;
    }
    if ((m->edge > 0 || m->cmpl > 0) && m->thr < 0) {
        /* FreeBSD pmc.p4(3): edge and complement only act on the threshold comparison. */
        sb_puts(e, "e and cmpl need thr=N");
        return PMU_EV_ERR_MODIFIER;
    }
    int rc = resolve_priv(m, &usr, &os, e);
    if (rc)
        return rc;
    es.event_select = (uint8_t)c->event;
    es.event_mask = (uint16_t)c->umask;
    es.t0_os = os;
    es.t0_usr = usr;
    cc.enable = true;
    cc.escr_select = (uint8_t)((c->mods & P4_CCCR_ESCR_SELECT_MASK) >> P4_CCCR_ESCR_SELECT_SHIFT);
    cc.active_thread = P4_CCCR_ACTIVE_THREAD_ANY;
    if (m->thr >= 0) {
        cc.compare = true;
        cc.threshold = (uint8_t)m->thr;
        cc.complement = m->cmpl > 0;
        cc.edge = m->edge > 0;
    }
    out->escr = pmu_enc_p4_escr(&es);
    out->evtsel = pmu_enc_p4_cccr(&cc);
    out->escr_msr[0] = c->escr[0];
    out->escr_msr[1] = c->escr[1];
    out->cls = PMU_CLS_NETBURST;
    out->cntmask = c->cntmask;
    return 0;
}

static int encode_combined(const struct pmu_event_table *t, const struct combined *c, const struct mods *m,
                           struct pmu_event_enc *out, struct sbuf *e)
{
    int rc = check_mods(m, t->kind, c->flags, e);
    if (rc)
        return rc;
    out->kind = t->kind;
    out->flags = c->flags;
    out->desc = c->first;
    out->fixed_idx = PMU_FIXED_NONE;
    switch (t->kind) {
    case PMU_TBL_KIND_INTEL_CORE:
        rc = encode_intel_core(t, c, m, out, e);
        break;
    case PMU_TBL_KIND_INTEL_UNCORE:
        rc = encode_intel_uncore(t, c, m, out, e);
        break;
    case PMU_TBL_KIND_AMD_CORE:
    case PMU_TBL_KIND_AMD_NB:
        rc = encode_amd(t, c, m, out, e);
        break;
    case PMU_TBL_KIND_NETBURST:
        rc = encode_netburst(t, c, m, out, e);
        break;
    default:
        sb_puts(e, "unknown table kind");
        rc = PMU_EV_ERR_SYNTAX;
    }
    if (!rc && !out->cntmask) {
        sb_puts(e, "no counter can take this event with these modifiers");
        rc = PMU_EV_ERR_NO_COUNTER;
    }
    return rc;
}

/* ---- raw events ----------------------------------------------------------------------------- */

static bool is_raw(const char *tok, size_t n)
{
    size_t i = 1;
    if (n < 2 || (tok[0] != 'r' && tok[0] != 'R'))
        return false;
    if (n > 3 && tok[1] == '0' && (tok[2] == 'x' || tok[2] == 'X'))
        i = 3;
    if (n - i > 16)
        return false;
    for (; i < n; i++) {
        int c = kl_tolower(tok[i]);
        if (!kl_isdigit(c) && !(c >= 'a' && c <= 'f'))
            return false;
    }
    return true;
}

static int parse_raw(const struct pmu_event_table *t, const char *tok, size_t n, const struct mods *m,
                     struct pmu_event_enc *out, struct sbuf *e)
{
    uint64_t v, allowed, ignored, umask;
    struct combined c;
    const char *hex = tok + 1;
    size_t hn = n - 1;

    if (hn > 2 && hex[0] == '0' && (hex[1] == 'x' || hex[1] == 'X')) {
        hex += 2;
        hn -= 2;
    }
    {
        char buf[20] = "0x";
        memcpy(buf + 2, hex, hn);
        if (!parse_u64(buf, hn + 2, &v)) {
            sb_puts(e, "bad raw value");
            return PMU_EV_ERR_SYNTAX;
        }
    }
    memset(&c, 0, sizeof(c));
    switch (t->kind) {
    case PMU_TBL_KIND_INTEL_CORE:
        allowed = IA32_PERFEVTSEL_EVENT_MASK | IA32_PERFEVTSEL_UMASK_MASK | IA32_PERFEVTSEL_E |
                  IA32_PERFEVTSEL_ANY | IA32_PERFEVTSEL_INV | IA32_PERFEVTSEL_CMASK_MASK;
        ignored = IA32_PERFEVTSEL_USR | IA32_PERFEVTSEL_OS | IA32_PERFEVTSEL_EN;
        c.event = (uint16_t)(v & 0xff);
        c.mods = (uint32_t)(v & (IA32_PERFEVTSEL_E | IA32_PERFEVTSEL_ANY | IA32_PERFEVTSEL_INV |
                                 IA32_PERFEVTSEL_CMASK_MASK));
        break;
    case PMU_TBL_KIND_INTEL_UNCORE:
        allowed = UNCORE_PERFEVTSEL_EVENT_MASK | UNCORE_PERFEVTSEL_UMASK_MASK | UNCORE_PERFEVTSEL_E |
                  UNCORE_PERFEVTSEL_INV | UNCORE_PERFEVTSEL_CMASK_MASK | UNCORE_PERFEVTSEL_OCC_CTR_RST;
        ignored = UNCORE_PERFEVTSEL_EN;
        c.event = (uint16_t)(v & 0xff);
        c.mods = (uint32_t)(v & (UNCORE_PERFEVTSEL_E | UNCORE_PERFEVTSEL_INV | UNCORE_PERFEVTSEL_CMASK_MASK |
                                 UNCORE_PERFEVTSEL_OCC_CTR_RST));
        break;
    case PMU_TBL_KIND_AMD_CORE:
    case PMU_TBL_KIND_AMD_NB:
        allowed = AMD_PERF_CTL_EVENT_LO_MASK | AMD_PERF_CTL_UMASK_MASK | AMD_PERF_CTL_EDGE | AMD_PERF_CTL_INV |
                  AMD_PERF_CTL_CMASK_MASK | AMD_PERF_CTL_EVENT_HI_MASK;
        ignored = AMD_PERF_CTL_USR | AMD_PERF_CTL_OS | AMD_PERF_CTL_EN;
        c.event = (uint16_t)((v & 0xff) | (((v & AMD_PERF_CTL_EVENT_HI_MASK) >> AMD_PERF_CTL_EVENT_HI_SHIFT) << 8));
        c.mods = (uint32_t)(v & (AMD_PERF_CTL_EDGE | AMD_PERF_CTL_INV | AMD_PERF_CTL_CMASK_MASK));
        break;
    default:
        sb_puts(e, "raw events are not supported for NetBurst (an ESCR must be chosen); use a named event");
        return PMU_EV_ERR_SYNTAX;
    }
    if (v & ~(allowed | ignored)) {
        sb_puts(e, "raw value ");
        sb_hex(e, v);
        sb_puts(e, " sets bits outside event/umask/e/t/i/cmask (INT is never set: no PMI handler)");
        return PMU_EV_ERR_RANGE;
    }
    umask = (v >> 8) & 0xff;
    c.umask = (uint32_t)umask;
    if (t->kind == PMU_TBL_KIND_INTEL_UNCORE || t->kind == PMU_TBL_KIND_AMD_NB)
        c.flags |= PMU_EVF_NO_PRIV;
    c.cntmask = t->gp_counters >= 32 ? PMU_CNT_GP_MASK : ((1ULL << t->gp_counters) - 1);
    /* Inherit constraints and extra-MSR needs from the table row with the same encoding. */
    for (uint32_t i = 0; i < t->count; i++) {
        const struct pmu_event_desc *r = &t->events[i];
        if (r->event == c.event && (uint32_t)(r->umask | r->umask_dflt) == umask && r->mods == c.mods) {
            c.first = r;
            c.cntmask = r->cntmask;
            c.fixed = r->fixed;
            c.extra = r->extra | r->extra_dflt;
            c.flags |= r->flags & ~(PMU_EVF_DEFAULT | PMU_EVF_ALIAS | PMU_EVF_COMBINE);
            break;
        }
    }
    if (t->kind == PMU_TBL_KIND_INTEL_CORE && !(c.flags & PMU_EVF_OFFCORE) &&
        (c.event == NHM_OFFCORE_EVENT_RSP_0 || c.event == NHM_OFFCORE_EVENT_RSP_1) && m->rsp >= 0)
        c.flags |= c.event == NHM_OFFCORE_EVENT_RSP_0 ? PMU_EVF_OFFCORE_RSP0 : PMU_EVF_OFFCORE_RSP1;
    if ((c.flags & PMU_EVF_OFFCORE) && m->rsp < 0) {
        sb_puts(e, "raw off-core response event needs :offcore_rsp=0xNNNN");
        return PMU_EV_ERR_MODIFIER;
    }
    int rc = encode_combined(t, &c, m, out, e);
    out->desc = NULL;
    return rc;
}

/* ---- the parser ----------------------------------------------------------------------------- */

struct tok {
    const char *p;
    size_t n;
};

static void canon_name(struct pmu_event_enc *out, const struct pmu_event_table *t, const struct tok *toks,
                       unsigned ntok)
{
    struct sbuf b;
    sb_init(&b, out->name, sizeof(out->name));
    sb_puts(&b, t->name);
    sb_puts(&b, "::");
    for (unsigned i = 0; i < ntok; i++) {
        if (i)
            sb_putc(&b, ':');
        sb_putn(&b, toks[i].p, toks[i].n);
    }
}

int pmu_event_parse(const struct pmu_event_table *const *tables, unsigned ntables, const char *spec,
                    struct pmu_event_enc *out, char *err, size_t errlen)
{
    char buf[SPEC_MAX];
    struct tok toks[MAX_TOKENS];
    unsigned ntok = 0;
    struct sbuf e;
    struct mods m;
    const struct pmu_event_table *forced = NULL;
    size_t len;
    char *s;
    int rc;

    sb_init(&e, err, errlen);
    if (!out)
        return PMU_EV_ERR_SYNTAX;
    memset(out, 0, sizeof(*out));
    out->fixed_idx = PMU_FIXED_NONE;
    if (!tables || ntables == 0 || !tables[0] || !spec) {
        sb_puts(&e, "no event table for this PMU");
        return PMU_EV_ERR_SYNTAX;
    }
    while (kl_isspace(*spec))
        spec++;
    len = strlen(spec);
    while (len && kl_isspace(spec[len - 1]))
        len--;
    if (len == 0 || len >= sizeof(buf)) {
        sb_puts(&e, len ? "event specifier too long" : "empty event specifier");
        return PMU_EV_ERR_SYNTAX;
    }
    memcpy(buf, spec, len);
    buf[len] = 0;
    s = buf;

    /* "table::" prefix */
    for (size_t i = 0; i + 1 < len; i++) {
        if (s[i] == ':' && s[i + 1] == ':') {
            for (unsigned t = 0; t < ntables; t++)
                if (tables[t] && eq_n(s, i, tables[t]->name))
                    forced = tables[t];
            if (!forced) {
                s[i] = 0;
                forced = pmu_event_table_find(s);
            }
            if (!forced) {
                sb_puts(&e, "unknown event table '");
                sb_putn(&e, s, i);
                sb_puts(&e, "'");
                return PMU_EV_ERR_UNKNOWN_EVENT;
            }
            s += i + 2;
            break;
        }
    }

    /* split on ':' */
    for (char *p = s;;) {
        char *c = strchr(p, ':');
        size_t n = c ? (size_t)(c - p) : strlen(p);
        if (n == 0 || ntok >= MAX_TOKENS) {
            sb_puts(&e, n == 0 ? "empty field in '" : "too many fields in '");
            sb_putn(&e, spec, len);
            sb_puts(&e, "'");
            return PMU_EV_ERR_SYNTAX;
        }
        toks[ntok].p = p;
        toks[ntok].n = n;
        ntok++;
        if (!c)
            break;
        p = c + 1;
    }

    const struct pmu_event_table *const *tabs = forced ? &forced : tables;
    unsigned ntabs = forced ? 1 : ntables;

    /* Find the table that has the event. */
    const struct pmu_event_table *t = NULL;
    for (unsigned i = 0; i < ntabs && !t; i++) {
        if (!tabs[i])
            continue;
        for (uint32_t k = 0; k < tabs[i]->count; k++) {
            if (row_is_event(tabs[i]->events[k].name, toks[0].p, toks[0].n)) {
                t = tabs[i];
                break;
            }
        }
    }

    mods_init(&m);
    if (!t && is_raw(toks[0].p, toks[0].n)) {
        for (unsigned i = 1; i < ntok; i++) {
            rc = parse_mod(toks[i].p, toks[i].n, &m, &e);
            if (rc < 0)
                return rc;
            if (rc == 0) {
                sb_puts(&e, "unknown modifier '");
                sb_putn(&e, toks[i].p, toks[i].n);
                sb_puts(&e, "' on a raw event");
                return PMU_EV_ERR_MODIFIER;
            }
        }
        rc = parse_raw(tabs[0], toks[0].p, toks[0].n, &m, out, &e);
        if (!rc)
            canon_name(out, tabs[0], toks, ntok);
        return rc;
    }
    if (!t) {
        struct suggest sg;
        memset(&sg, 0, sizeof(sg));
        suggest_events(&sg, tabs, ntabs, toks[0].p, toks[0].n);
        sb_puts(&e, "unknown event '");
        sb_putn(&e, toks[0].p, toks[0].n);
        sb_puts(&e, "' for ");
        sb_puts(&e, tabs[0]->name);
        for (unsigned i = 1; i < ntabs; i++) {
            sb_puts(&e, "/");
            sb_puts(&e, tabs[i]->name);
        }
        suggest_print(&e, &sg);
        return PMU_EV_ERR_UNKNOWN_EVENT;
    }

    /* Unit masks (looked up first, so a unit mask named like a modifier wins) and modifiers. */
    const struct pmu_event_desc *rows[MAX_TOKENS];
    unsigned nrows = 0;
    for (unsigned i = 1; i < ntok; i++) {
        char name[SPEC_MAX];
        const struct pmu_event_desc *r = NULL;
        if (toks[0].n + 1 + toks[i].n < sizeof(name)) {
            memcpy(name, toks[0].p, toks[0].n);
            name[toks[0].n] = ':';
            memcpy(name + toks[0].n + 1, toks[i].p, toks[i].n);
            name[toks[0].n + 1 + toks[i].n] = 0;
            r = pmu_event_find(t, name);
        }
        if (r) {
            rows[nrows++] = r;
            continue;
        }
        rc = parse_mod(toks[i].p, toks[i].n, &m, &e);
        if (rc < 0)
            return rc;
        if (rc == 0) {
            struct suggest sg;
            memset(&sg, 0, sizeof(sg));
            suggest_umasks(&sg, t, toks[0].p, toks[0].n, toks[i].p, toks[i].n);
            sb_puts(&e, "unknown unit mask or modifier '");
            sb_putn(&e, toks[i].p, toks[i].n);
            sb_puts(&e, "' for ");
            sb_putn(&e, toks[0].p, toks[0].n);
            suggest_print(&e, &sg);
            return PMU_EV_ERR_UNKNOWN_UMASK;
        }
    }
    if (nrows == 0) {
        char name[SPEC_MAX];
        memcpy(name, toks[0].p, toks[0].n);
        name[toks[0].n] = 0;
        const struct pmu_event_desc *d = pmu_event_find(t, name);
        if (!d || !(d->flags & PMU_EVF_DEFAULT)) {
            unsigned shown = 0;
            sb_puts(&e, "event '");
            sb_putn(&e, toks[0].p, toks[0].n);
            sb_puts(&e, "' needs a unit mask, e.g. ");
            for (uint32_t k = 0; k < t->count && shown < 3; k++) {
                const char *n = t->events[k].name;
                if (n[base_len(n)] == ':' && row_is_event(n, toks[0].p, toks[0].n)) {
                    if (shown++)
                        sb_puts(&e, ", ");
                    sb_puts(&e, n);
                }
            }
            return PMU_EV_ERR_NEEDS_UMASK;
        }
        rows[nrows++] = d;
    }

    struct combined c;
    rc = combine_rows(rows, nrows, &c, &e);
    if (rc)
        return rc;
    rc = encode_combined(t, &c, &m, out, &e);
    if (!rc)
        canon_name(out, t, toks, ntok);
    return rc;
}
