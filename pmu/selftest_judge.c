/* selftest_judge.c - the PMU self-test's verdicts from counts (no hardware access; host unit tested). */
#include "pmu/selftest_judge.h"
#include "kernel/fmt.h"
#include "pmu/known_loop.h"

static void copy(char *dst, size_t len, const char *src) { fmt_snprintf(dst, len, "%s", src ? src : ""); }

void st_check_init(struct st_check *c, const char *name, const char *counter, const char *event, int feature)
{
    memset(c, 0, sizeof(*c));
    copy(c->name, sizeof(c->name), name);
    copy(c->counter, sizeof(c->counter), counter);
    copy(c->event, sizeof(c->event), event);
    c->feature = feature;
    c->status = ST_SKIPPED;
}

void st_skip(struct st_check *c, const char *why)
{
    c->status = ST_SKIPPED;
    c->judged = false;
    copy(c->detail, sizeof(c->detail), why);
}

void st_fail(struct st_check *c, const char *why)
{
    c->status = ST_FAILED;
    c->judged = false;
    copy(c->detail, sizeof(c->detail), why);
}

static void judged(struct st_check *c, bool ok, uint64_t counted, uint64_t lo, uint64_t hi)
{
    c->status = ok ? ST_OK : ST_FAILED;
    c->judged = true;
    c->counted = counted;
    c->expected_lo = lo;
    c->expected_hi = hi;
    c->centered = false;
}

static uint64_t sat_mul(uint64_t a, uint64_t b) { return a && b > UINT64_MAX / a ? UINT64_MAX : a * b; }
static uint64_t sat_add(uint64_t a, uint64_t b) { return a > UINT64_MAX - b ? UINT64_MAX : a + b; }

void st_judge_loop(struct st_check *c, uint64_t count_n, uint64_t count_2n, uint64_t n, uint64_t per_iter,
                   uint64_t tol, uint64_t const_max)
{
    uint64_t want = sat_mul(per_iter, n);
    uint64_t lo = want > tol ? want - tol : 0, hi = sat_add(want, tol);
    bool grew = count_2n >= count_n;
    uint64_t diff = grew ? count_2n - count_n : 0;
    /* The constant part: what the enable/disable path and the loop's entry and exit add. */
    int64_t konst = (int64_t)(count_n - want);
    bool ok = grew && n > 0 && diff >= lo && diff <= hi && konst >= 0 && (uint64_t)konst <= const_max;
    judged(c, ok, diff, lo, hi);
    c->centered = lo + tol == want;
    double per = n ? (double)diff / (double)n : 0.0;
    fmt_snprintf(c->detail, sizeof(c->detail),
                 "%lu over %lu iterations, %lu over %lu: difference %s%lu (%.3f per iteration), expected %lu +-%lu "
                 "(%lu per iteration); constant %ld, allowed 0..%lu",
                 (unsigned long)count_n, (unsigned long)n, (unsigned long)count_2n, (unsigned long)(2 * n),
                 grew ? "" : "negative, ", (unsigned long)(grew ? diff : count_n - count_2n), per,
                 (unsigned long)want, (unsigned long)tol, (unsigned long)per_iter, (long)konst,
                 (unsigned long)const_max);
}

void st_judge_cmask_inv(struct st_check *c, uint64_t ge, uint64_t lt, uint64_t cycles, double tol_frac,
                        uint64_t tol_abs)
{
    uint64_t tol = sat_add((uint64_t)(tol_frac * (double)cycles), tol_abs);
    uint64_t lo = cycles > tol ? cycles - tol : 0, hi = sat_add(cycles, tol);
    uint64_t sum = sat_add(ge, lt);
    const char *why = NULL;
    if (!cycles)
        why = "no core cycles counted";
    else if (!ge || !lt)
        why = !ge ? "CMASK=1 counted nothing" : "CMASK=1 with INV counted nothing";
    else if (ge == lt)
        why = "the two counts are identical: INV is not taking effect";
    else if (sum < lo || sum > hi)
        why = "the sum is not the core cycles: CMASK or INV is not taking effect";
    judged(c, why == NULL, sum, lo, hi);
    c->centered = lo + tol == cycles;
    fmt_snprintf(c->detail, sizeof(c->detail),
                 "CMASK=1 %lu + CMASK=1:INV %lu = %lu; core cycles %lu, allowed +-%lu ([PAG]: inv=0 + inv=1 "
                 "= total cycles)%s%s",
                 (unsigned long)ge, (unsigned long)lt, (unsigned long)sum, (unsigned long)cycles, (unsigned long)tol,
                 why ? ": " : "", why ? why : "");
}

uint16_t st_swap_bytes16(uint16_t v) { return (uint16_t)((v << 8) | (v >> 8)); }

void st_judge_offcore(struct st_check *c, uint16_t value, uint64_t value_count, uint16_t swapped,
                      uint64_t swapped_count, uint64_t loads)
{
    uint64_t lo = loads / 4, ctl_max = loads / 16;
    const char *why = NULL;
    if (swapped != st_swap_bytes16(value) || value == swapped)
        why = "the control value is not the byte swap of the value (or equals it): no verdict possible";
    else if (!loads)
        why = "no loads";
    else if (value_count < lo)
        why = swapped_count >= lo ? "the swapped value counted what the value should: request and response bytes "
                                    "are swapped"
                                  : "the value counted too little";
    else if (swapped_count > ctl_max || swapped_count * 4 >= value_count)
        why = "the swapped value counts as much as the value: the request and response bytes are not told apart";
    judged(c, why == NULL, value_count, lo, ST_UNBOUNDED);
    fmt_snprintf(c->detail, sizeof(c->detail),
                 "0x%04x (request 0x%02x, response 0x%02x) counted %lu over %lu loads, expected >= %lu; its byte "
                 "swap 0x%04x counted %lu, allowed <= %lu and < a quarter of it%s%s",
                 value, value & 0xffu, value >> 8, (unsigned long)value_count, (unsigned long)loads,
                 (unsigned long)lo, swapped, (unsigned long)swapped_count, (unsigned long)ctl_max, why ? ": " : "",
                 why ? why : "");
}

void st_judge_ratio(struct st_check *c, uint64_t counted, uint64_t expected, double lo_frac, double hi_frac,
                    const char *what)
{
    uint64_t lo = (uint64_t)((double)expected * lo_frac);
    uint64_t hi = (uint64_t)((double)expected * hi_frac);
    bool ok = expected > 0 && counted >= lo && counted <= hi;
    judged(c, ok, counted, lo, hi);
    fmt_snprintf(c->detail, sizeof(c->detail), "counted %lu; %s: %lu, allowed %.2f..%.2f of it (%lu..%lu)",
                 (unsigned long)counted, what ? what : "expected", (unsigned long)expected, lo_frac, hi_frac,
                 (unsigned long)lo, (unsigned long)hi);
}

void st_judge_range(struct st_check *c, uint64_t counted, uint64_t lo, uint64_t hi, const char *what)
{
    judged(c, counted >= lo && counted <= hi, counted, lo, hi);
    if (hi == ST_UNBOUNDED)
        fmt_snprintf(c->detail, sizeof(c->detail), "counted %lu; %s: >= %lu", (unsigned long)counted,
                     what ? what : "expected", (unsigned long)lo);
    else
        fmt_snprintf(c->detail, sizeof(c->detail), "counted %lu; %s: %lu..%lu", (unsigned long)counted,
                     what ? what : "expected", (unsigned long)lo, (unsigned long)hi);
}

/* Nehalem/Westmere: BR_INST_RETIRED.CONDITIONAL is C4H umask 01H ([PAG] Table 6), one per
 * iteration; with the unit mask lost the event is C4H/00H, all branches, three per iteration. The
 * CMASK/INV pair is [PAG] Table 1's UOPS_RETIRED.ACTIVE_CYCLES / STALL_CYCLES (C2H/01H, C=1, I=0/1).
 * AMD has no unit-masked retired-branch event ([AMD] 4.5.1: C2H, unit mask N/A): all branches, and
 * the pair is RETIRED_INSTRUCTIONS with CntMask=1 / CntMask=1 + Inv (APM Vol. 2 13.2.1). The
 * architectural table's branch event C4H/00H has no unit mask either. NetBurst counters are fed
 * through ESCRs (no per-counter rotation) and its CCCR compare/complement is left alone. */
static const struct st_model_events model_events[] = {
    {"wsm wsm_dp", "BR_INST_RETIRED:CONDITIONAL", PMU_BRANCH_LOOP_COND_PER_ITER, "INST_RETIRED:ANY_P",
     "UOPS_RETIRED:ACTIVE_CYCLES", "UOPS_RETIRED:STALL_CYCLES", "UNHALTED_CORE_CYCLES", true, NULL},
    /* libpfm4's nhm table encodes INST_RETIRED:ANY_P as C0H/00H where [PAG] Table 1 gives C0H/01H
     * (docs/pmu.md): the architectural name says which encoding is meant. */
    {"nhm", "BR_INST_RETIRED:CONDITIONAL", PMU_BRANCH_LOOP_COND_PER_ITER, "INSTRUCTION_RETIRED",
     "UOPS_RETIRED:ACTIVE_CYCLES", "UOPS_RETIRED:STALL_CYCLES", "UNHALTED_CORE_CYCLES", true, NULL},
    {"arch", "BRANCH_INSTRUCTIONS_RETIRED", PMU_BRANCH_LOOP_BRANCHES_PER_ITER, "INSTRUCTION_RETIRED",
     "INSTRUCTION_RETIRED:c=1", "INSTRUCTION_RETIRED:c=1:i", "UNHALTED_CORE_CYCLES", true,
     "the architectural branch event (C4H/00H) has no unit mask"},
    {"amd_k8 amd_fam10h amd_fam15h", "RETIRED_BRANCH_INSTRUCTIONS", PMU_BRANCH_LOOP_BRANCHES_PER_ITER,
     "RETIRED_INSTRUCTIONS", "RETIRED_INSTRUCTIONS:c=1", "RETIRED_INSTRUCTIONS:c=1:i", "CPU_CLK_UNHALTED", true,
     "AMD's retired-branch event (C2H) has no unit mask ([AMD] 4.5.1)"},
    {"amd_fam17h_zen1 amd_fam17h_zen2 amd_fam19h_zen3 amd_fam19h_zen4", "RETIRED_BRANCH_INSTRUCTIONS",
     PMU_BRANCH_LOOP_BRANCHES_PER_ITER, "RETIRED_INSTRUCTIONS", "RETIRED_INSTRUCTIONS:c=1",
     "RETIRED_INSTRUCTIONS:c=1:i", "CYCLES_NOT_IN_HALT", true,
     "AMD's retired-branch event (C2H) has no unit mask ([AMD] 4.5.1)"},
    {"netburst netburst_p", "branch_retired:MMNP:MMNM:MMTP:MMTM", PMU_BRANCH_LOOP_BRANCHES_PER_ITER,
     "instr_retired:NBOGUSNTAG:NBOGUSTAG", NULL, NULL, NULL, false,
     "NetBurst: one counter per event (ESCR-fed), no CCCR compare/complement check"},
};

static bool word_in(const char *list, const char *w)
{
    size_t n = strlen(w);
    for (const char *p = list; *p;) {
        while (*p == ' ')
            p++;
        size_t l = 0;
        while (p[l] && p[l] != ' ')
            l++;
        if (l == n && !strncmp(p, w, n))
            return true;
        p += l;
    }
    return false;
}

const struct st_model_events *st_model_events(const char *core_table)
{
    if (!core_table || !*core_table)
        return NULL;
    for (size_t i = 0; i < ARRAY_SIZE(model_events); i++)
        if (word_in(model_events[i].tables, core_table))
            return &model_events[i];
    return NULL;
}

void st_format_expected(char *buf, size_t len, const struct st_check *c)
{
    uint64_t lo = c->expected_lo, hi = c->expected_hi;
    if (!c->judged)
        fmt_snprintf(buf, len, "-");
    else if (hi == ST_UNBOUNDED)
        fmt_snprintf(buf, len, ">= %lu", (unsigned long)lo);
    else if (lo == hi)
        fmt_snprintf(buf, len, "%lu", (unsigned long)lo);
    else if (c->centered && (hi - lo) % 2 == 0)
        fmt_snprintf(buf, len, "%lu +-%lu", (unsigned long)(lo + (hi - lo) / 2), (unsigned long)((hi - lo) / 2));
    else
        fmt_snprintf(buf, len, "%lu..%lu", (unsigned long)lo, (unsigned long)hi);
}

void st_short_reason(char *buf, size_t len, const struct st_check *c)
{
    char exp[48];
    if (!len)
        return;
    if (!c->judged) {
        fmt_snprintf(buf, len, "%s", c->detail[0] ? c->detail : "failed");
        return;
    }
    st_format_expected(exp, sizeof(exp), c);
    fmt_snprintf(buf, len, "expected %s, counted %lu", exp, (unsigned long)c->counted);
}

size_t st_format_line(char *buf, size_t len, const struct st_check *c)
{
    static const char *const tag[] = {[ST_SKIPPED] = "skip", [ST_OK] = "ok", [ST_FAILED] = "FAIL"};
    char exp[48];
    int n;
    if (!len)
        return 0;
    if (!c->judged) {
        n = fmt_snprintf(buf, len, "  %-4s  %-24s %-9s %s", tag[c->status], c->name,
                         c->counter[0] ? c->counter : "-", c->detail);
    } else {
        st_format_expected(exp, sizeof(exp), c);
        n = fmt_snprintf(buf, len, "  %-4s  %-24s %-9s expected %-16s counted %-9lu %s", tag[c->status], c->name,
                         c->counter[0] ? c->counter : "-", exp, (unsigned long)c->counted, c->event);
    }
    /* No trailing blanks when the event is empty. */
    size_t l = n < 0 ? 0 : (size_t)n >= len ? len - 1 : (size_t)n;
    while (l && buf[l - 1] == ' ')
        buf[--l] = 0;
    if (c->disabled[0] && l + 1 < len) {
        n = fmt_snprintf(buf + l, len - l, "  %s disabled", c->disabled);
        l += n < 0 ? 0 : (size_t)n >= len - l ? len - l - 1 : (size_t)n;
    }
    return l;
}
