/* crosscheck.c - crosscheck and summary records (crosscheck.h, docs/measurement.md "Cross-checks"). */
#include "bench/crosscheck.h"
#include "bench/platform.h"
#include "kernel/fmt.h"
#include "measure/verdict.h"

static size_t n_total, n_judged, n_agree;

/* Values a benchmark published for a later check's third measurement that are not ledger figures (a key of a
 * record, named "<figure>.<key>"). */
#define XC_NOTES 16
static struct {
    char name[LEDGER_NAME_MAX];
    double value;
    const char *unit;
} notes[XC_NOTES];
static size_t n_notes;

/* Checks kept for the end of the run (crosscheck_defer), with their strings copied. */
#define XC_DEFERRED_MAX 8
static struct deferred_check {
    struct crosscheck c;
    char quantity[128], a[LEDGER_NAME_MAX], b[LEDGER_NAME_MAX], third[LEDGER_NAME_MAX], blame[LEDGER_NAME_MAX];
    char why[VERDICT_REASON_MAX];
} deferred[XC_DEFERRED_MAX];
static size_t n_deferred;

void crosscheck_reset(void)
{
    n_total = n_judged = n_agree = 0;
    n_notes = n_deferred = 0;
}

void crosscheck_note(const char *name, double value, const char *unit)
{
    if (!name)
        return;
    size_t i = 0;
    while (i < n_notes && strcmp(notes[i].name, name))
        i++;
    if (i == n_notes) {
        if (n_notes == XC_NOTES)
            return;
        n_notes++;
    }
    fmt_snprintf(notes[i].name, sizeof(notes[i].name), "%s", name);
    notes[i].value = value;
    notes[i].unit = unit;
}

void crosscheck_counts(size_t *total, size_t *judged, size_t *agreeing)
{
    if (total)
        *total = n_total;
    if (judged)
        *judged = n_judged;
    if (agreeing)
        *agreeing = n_agree;
}

static bool is_finite(double v) { return v == v && v - v == 0; }

/* The value of a usable third measurement (in unit): a noted value (crosscheck_note), or a ledger figure whose
 * final verdict is ok or noisy (a suspect figure decides nothing: *why says so); NaN when there is none. */
static double third_value(const char *name, const char *unit, const char **why)
{
    *why = NULL;
    for (size_t i = 0; name && i < n_notes; i++)
        if (!strcmp(notes[i].name, name))
            return is_finite(notes[i].value) && notes[i].value > 0 &&
                           !(unit && notes[i].unit && strcmp(unit, notes[i].unit))
                       ? notes[i].value
                       : __builtin_nan("");
    const struct ledger_entry *e = name ? ledger_find(name) : NULL;
    if (!e || e->q == QUALITY_UNAVAILABLE || !is_finite(e->median) || !(e->median > 0) ||
        (unit && e->unit && strcmp(unit, e->unit)))
        return __builtin_nan("");
    if (e->q == QUALITY_SUSPECT) {
        *why = "is suspect itself and decides nothing: both are blamed";
        return __builtin_nan("");
    }
    return e->median;
}

/* A ledger figure whose own unit is core cycles (a penalty), not one that only carries a conversion to them. */
static bool in_cycles(const char *name)
{
    const struct ledger_entry *e = ledger_find(name);
    return e && e->unit && !strcmp(e->unit, "cycles");
}

/* Writes c's cycles_suspect names from `from` that are not figures in cycles themselves (those are under
 * "suspect") into the open array while XC_CYCLES_BYTES allow; returns the first name not written (n: all). */
#define XC_CYCLES_BYTES 6144
static size_t cycles_names(struct json *j, const struct crosscheck *c, size_t from)
{
    size_t start = j->want, i = from;
    for (; i < c->n_cycles_suspect; i++) {
        if (in_cycles(c->cycles_suspect[i]))
            continue;
        if (i > from && j->want - start + strlen(c->cycles_suspect[i]) + 4 > XC_CYCLES_BYTES)
            return i;
        json_str(j, c->cycles_suspect[i]);
    }
    return i;
}

static bool within(double x, double ref, double tol)
{
    double d = x / ref - 1;
    return d <= tol && -d <= tol;
}

static int emit(const struct crosscheck *c, const char *not_judged)
{
    bool judged = !not_judged && is_finite(c->a_value) && is_finite(c->b_value) && c->b_value != 0 && c->a_value > 0 &&
                  c->b_value > 0;
    if (!not_judged && !judged)
        not_judged = "a value is not a positive number";
    double ratio = judged ? c->a_value / c->b_value : __builtin_nan("");
    double dev = ratio - 1;
    bool agrees = judged && dev <= c->tolerance && -dev <= c->tolerance;
    n_total++;

    struct json *j = plat_rec_begin("crosscheck");
    json_kv_str(j, "quantity", c->quantity);
    json_kv_str(j, "a", c->a);
    json_kv_str(j, "b", c->b);
    json_kv_double(j, "a_value", c->a_value);
    json_kv_double(j, "b_value", c->b_value);
    json_kv_str(j, "unit", c->unit);
    json_kv_double(j, "ratio", ratio);
    json_kv_double(j, "tolerance", c->tolerance);
    if (!judged) {
        json_kv_null(j, "agrees");
        json_kv_str(j, "reason", not_judged);
    } else {
        json_kv_bool(j, "agrees", agrees);
    }
    /* A third measurement of the same quantity decides which side is off when it agrees with exactly one. */
    const char *blame = c->blame;
    static char third_note[160];
    const char *tnote = NULL;
    const char *t_unusable = NULL;
    double tv = judged && c->third ? third_value(c->third, c->unit, &t_unusable) : __builtin_nan("");
    if (c->third) {
        json_kv_str(j, "third", c->third);
        json_kv_double(j, "third_value", tv);
    }
    if (!agrees && is_finite(tv)) {
        bool a_ok = within(c->a_value, tv, c->tolerance), b_ok = within(c->b_value, tv, c->tolerance);
        if (a_ok != b_ok) {
            blame = a_ok ? c->b : c->a;
            fmt_snprintf(third_note, sizeof(third_note), "%s (%.4g) agrees with %s and contradicts %s: only %s is blamed",
                         c->third, tv, a_ok ? c->a : c->b, blame, blame);
            tnote = third_note;
        }
    } else if (!agrees && judged && t_unusable) {
        fmt_snprintf(third_note, sizeof(third_note), "%s %s", c->third, t_unusable);
        tnote = third_note;
    }
    json_key(j, "suspect");
    json_arr_begin(j);
    if (judged && !agrees) {
        const char *marked[2] = {blame ? blame : c->a, blame ? NULL : c->b};
        for (int i = 0; i < 2; i++)
            if (marked[i] && ledger_mark_suspect(marked[i], c->quantity))
                json_str(j, marked[i]);
        /* a blamed conversion to cycles: a figure whose own unit is cycles is the conversion's product itself */
        for (size_t i = 0; c->cycles_suspect && i < c->n_cycles_suspect; i++)
            if (in_cycles(c->cycles_suspect[i]) && ledger_mark_suspect(c->cycles_suspect[i], c->quantity))
                json_str(j, c->cycles_suspect[i]);
    }
    json_arr_end(j);
    if (c->a_lo > 0 && c->a_hi > 0) {
        json_key(j, "a_interval");
        json_arr_begin(j);
        json_double(j, c->a_lo);
        json_double(j, c->a_hi);
        json_arr_end(j);
    }
    size_t cyc_next = c->n_cycles_suspect; /* the first cycles_suspect name left for a crosscheck_cycles record */
    if (c->cycles_suspect) {
        json_key(j, "cycles_suspect");
        json_arr_begin(j);
        cyc_next = judged && !agrees ? cycles_names(j, c, 0) : c->n_cycles_suspect;
        json_arr_end(j);
    }
    if (tnote && c->why) {
        static char both[VERDICT_REASON_MAX];
        fmt_snprintf(both, sizeof(both), "%s; %s", tnote, c->why);
        json_kv_str(j, "note", both);
    } else if (tnote || c->why) {
        json_kv_str(j, "note", tnote ? tnote : c->why);
    }
    plat_rec_end();
    /* the rest of a long cycles_suspect list (a sweep has hundreds of points): records of their own, each well
     * inside a record line (RECORD_MAX) */
    while (cyc_next < c->n_cycles_suspect) {
        struct json *k = plat_rec_begin("crosscheck_cycles");
        json_kv_str(k, "quantity", c->quantity);
        json_kv_str(k, "a", c->a);
        json_kv_str(k, "b", c->b);
        json_key(k, "cycles_suspect");
        json_arr_begin(k);
        cyc_next = cycles_names(k, c, cyc_next);
        json_arr_end(k);
        plat_rec_end();
    }

    if (!judged) {
        plat_printf("  crosscheck %s: %s vs %s not judged (%s)\n", c->quantity, c->a, c->b, not_judged);
        return -1;
    }
    n_judged++;
    n_agree += agrees;
    plat_printf("  crosscheck %s: %s %.4g vs %s %.4g %s, ratio %.3f, tolerance +-%g %%: %s\n", c->quantity, c->a,
                c->a_value, c->b, c->b_value, c->unit, ratio, 100 * c->tolerance, agrees ? "agrees" : "DISAGREES");
    return agrees ? 1 : 0;
}

int crosscheck_emit(const struct crosscheck *c) { return emit(c, c->not_judged); }

static const char *keep(char *buf, size_t n, const char *s)
{
    if (!s)
        return NULL;
    fmt_snprintf(buf, n, "%s", s);
    return buf;
}

int crosscheck_defer(const struct crosscheck *c)
{
    if (n_deferred == XC_DEFERRED_MAX)
        return crosscheck_emit(c); /* no room: judged now, with what exists now */
    struct deferred_check *d = &deferred[n_deferred++];
    d->c = *c;
    d->c.quantity = keep(d->quantity, sizeof(d->quantity), c->quantity);
    d->c.a = keep(d->a, sizeof(d->a), c->a);
    d->c.b = keep(d->b, sizeof(d->b), c->b);
    d->c.third = keep(d->third, sizeof(d->third), c->third);
    d->c.blame = keep(d->blame, sizeof(d->blame), c->blame);
    d->c.why = keep(d->why, sizeof(d->why), c->why);
    return XC_DEFERRED;
}

size_t crosscheck_run_deferred(void)
{
    size_t n = n_deferred;
    if (n)
        plat_printf("Cross-checks judged at the end of the run (a later benchmark's measurement can decide the "
                    "blame):\n");
    for (size_t i = 0; i < n; i++)
        crosscheck_emit(&deferred[i].c);
    n_deferred = 0;
    return n;
}

int crosscheck_figures(const char *quantity, const char *a, const char *b, double tolerance, const char *blame,
                       const char *why)
{
    return crosscheck_figures3(quantity, a, b, NULL, tolerance, blame, why);
}

static int figures3(const char *quantity, const char *a, const char *b, const char *third, double tolerance,
                    const char *blame, const char *why, bool later)
{
    const struct ledger_entry *ea = ledger_find(a), *eb = ledger_find(b);
    struct crosscheck c = {
        .quantity = quantity,
        .a = a,
        .b = b,
        .a_value = ea ? ea->median : __builtin_nan(""),
        .b_value = eb ? eb->median : __builtin_nan(""),
        .unit = ea ? ea->unit : eb ? eb->unit : "",
        .tolerance = tolerance,
        .blame = blame,
        .why = why,
        .third = third,
    };
    static char reason[160];
    const char *nj = NULL;
    if (!ea || !eb) {
        fmt_snprintf(reason, sizeof(reason), "%s was not measured in this run", !ea ? a : b);
        nj = reason;
    } else if (ea->q == QUALITY_UNAVAILABLE || eb->q == QUALITY_UNAVAILABLE) {
        fmt_snprintf(reason, sizeof(reason), "%s is unavailable", ea->q == QUALITY_UNAVAILABLE ? a : b);
        nj = reason;
    } else if (!is_finite(ea->median) || !is_finite(eb->median)) {
        const struct ledger_entry *e = !is_finite(ea->median) ? ea : eb;
        fmt_snprintf(reason, sizeof(reason), "%s has no value (%s)", e->name, quality_name(e->q));
        nj = reason;
    } else if (ea->unit && eb->unit && strcmp(ea->unit, eb->unit)) {
        fmt_snprintf(reason, sizeof(reason), "units differ (%s vs %s)", ea->unit, eb->unit);
        nj = reason;
    }
    if (later && !nj) /* a check that cannot be judged has nothing for a third to decide: said now */
        return crosscheck_defer(&c);
    return emit(&c, nj);
}

int crosscheck_figures3(const char *quantity, const char *a, const char *b, const char *third, double tolerance,
                        const char *blame, const char *why)
{
    return figures3(quantity, a, b, third, tolerance, blame, why, false);
}

int crosscheck_figures3_later(const char *quantity, const char *a, const char *b, const char *third,
                              double tolerance, const char *blame, const char *why)
{
    return figures3(quantity, a, b, third, tolerance, blame, why, true);
}

int crosscheck_value(const char *quantity, const char *a, double a_value, const char *unit, const char *b,
                     const char *third, double tolerance)
{
    const struct ledger_entry *eb = ledger_find(b);
    struct crosscheck c = {.quantity = quantity, .a = a, .b = b, .a_value = a_value,
                           .b_value = eb ? eb->median : __builtin_nan(""), .unit = unit, .tolerance = tolerance,
                           .third = third};
    static char reason[160];
    const char *nj = NULL;
    if (!eb)
        fmt_snprintf(reason, sizeof(reason), "%s was not measured in this run", b), nj = reason;
    else if (eb->q == QUALITY_UNAVAILABLE || !is_finite(eb->median))
        fmt_snprintf(reason, sizeof(reason), "%s has no value (%s)", b, quality_name(eb->q)), nj = reason;
    else if (eb->unit && strcmp(eb->unit, unit))
        fmt_snprintf(reason, sizeof(reason), "units differ (%s vs %s)", unit, eb->unit), nj = reason;
    return emit(&c, nj);
}

void crosscheck_summary(void)
{
    size_t counts[QUALITY_COUNT], dropped, all = 0;
    ledger_counts(counts, &dropped);
    for (size_t q = 0; q < QUALITY_COUNT; q++)
        all += counts[q];
    struct json *j = plat_rec_begin("summary");
    json_kv_uint(j, "figures", all);
    for (size_t q = 0; q < QUALITY_COUNT; q++)
        json_kv_uint(j, quality_name((enum quality)q), counts[q]);
    json_kv_uint(j, "figures_not_counted", dropped);
    json_kv_uint(j, "crosschecks", n_total);
    json_kv_uint(j, "crosschecks_judged", n_judged);
    json_kv_uint(j, "crosschecks_agreeing", n_agree);
    plat_rec_end();
    plat_printf("summary: %lu figures: %lu ok, %lu noisy, %lu suspect, %lu unavailable; cross-checks: %lu of %lu "
                "judged agree (%lu not judged)\n",
                (unsigned long)all, (unsigned long)counts[QUALITY_OK], (unsigned long)counts[QUALITY_NOISY],
                (unsigned long)counts[QUALITY_SUSPECT], (unsigned long)counts[QUALITY_UNAVAILABLE],
                (unsigned long)n_agree, (unsigned long)n_judged, (unsigned long)(n_total - n_judged));
}
