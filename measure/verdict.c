/* verdict.c - quality verdicts and the run's ledger of figures (verdict.h). */
#include "measure/verdict.h"
#include "kernel/fmt.h"
#include "measure/stats_json.h"

static const char *const names[QUALITY_COUNT] = {"ok", "noisy", "suspect", "unavailable"};

const char *quality_name(enum quality q) { return q < QUALITY_COUNT ? names[q] : "unavailable"; }

static void append(struct verdict *v, const char *fmt, va_list ap)
{
    size_t len = strlen(v->reason);
    if (len && len + 2 < sizeof(v->reason)) {
        v->reason[len++] = ';';
        v->reason[len++] = ' ';
        v->reason[len] = 0;
    }
    if (len < sizeof(v->reason))
        fmt_vsnprintf(v->reason + len, sizeof(v->reason) - len, fmt, ap);
}

void verdict_worsen(struct verdict *v, enum quality q, const char *fmt, ...)
{
    va_list ap;
    if (q > v->q)
        v->q = q;
    va_start(ap, fmt);
    append(v, fmt, ap);
    va_end(ap);
}

void verdict_unavailable(struct verdict *v, const char *reason)
{
    *v = (struct verdict){.q = QUALITY_UNAVAILABLE};
    fmt_snprintf(v->reason, sizeof(v->reason), "%s", reason ? reason : "not measured");
}

void verdict_from_stats(struct verdict *v, const struct stats *s, bool converged, double target_ci, size_t min_n)
{
    *v = (struct verdict){.q = QUALITY_OK, .converged = converged};
    if (!s || s->n == 0) {
        verdict_unavailable(v, "no samples");
        v->converged = false;
        return;
    }
    size_t lo, hi;
    bool exact;
    bool reps = s->replicates > 1;
    stats_median_ci_ranks(reps ? s->replicates : s->n, &lo, &hi, &exact);
    if (!exact) {
        if (reps)
            verdict_worsen(v, QUALITY_NOISY, "%lu replicates: too few for a 95 %% confidence interval (6 needed)",
                           (unsigned long)s->replicates);
        else
            verdict_worsen(v, QUALITY_NOISY, "%lu samples: too few for a 95 %% confidence interval (6 needed)",
                           (unsigned long)s->n);
        return;
    }
    if (s->n < min_n)
        verdict_worsen(v, QUALITY_NOISY, "%lu samples: the profile's minimum is %lu", (unsigned long)s->n,
                       (unsigned long)min_n);
    if (!converged)
        verdict_worsen(v, QUALITY_NOISY, "sampling ended before its CI target (time budget or sample cap)");
    double am = s->median < 0 ? -s->median : s->median;
    double half = (s->ci_hi - s->ci_lo) / 2;
    if (target_ci > 0 && !(half <= target_ci * am))
        verdict_worsen(v, QUALITY_NOISY, "95 %% CI +-%.2f %% of the median, the profile's target is +-%.0f %%",
                       am > 0 ? 100 * half / am : 100.0, 100 * target_ci);
}

void verdict_derived(struct verdict *v, const enum quality *qs, size_t n, const char *what)
{
    *v = (struct verdict){.q = QUALITY_OK, .converged = n > 0};
    if (n == 0) {
        verdict_worsen(v, QUALITY_NOISY, "%s: derived from no measured figure", what ? what : "derived figure");
        return;
    }
    enum quality worst = QUALITY_OK;
    size_t bad = 0;
    for (size_t i = 0; i < n; i++) {
        enum quality q = qs[i] >= QUALITY_UNAVAILABLE ? QUALITY_SUSPECT : qs[i]; /* a value from nothing is suspect */
        if (q > worst)
            worst = q;
        bad += q != QUALITY_OK;
    }
    if (worst != QUALITY_OK)
        verdict_worsen(v, worst, "%s: %lu of the %lu figures it comes from not ok (worst: %s)",
                       what ? what : "derived figure", (unsigned long)bad, (unsigned long)n, quality_name(worst));
    v->converged = worst == QUALITY_OK;
}

void verdict_json(struct json *j, const struct verdict *v)
{
    json_kv_bool(j, "converged", v->converged);
    json_kv_str(j, "quality", quality_name(v->q));
    if (v->q != QUALITY_OK)
        json_kv_str(j, "quality_reason", v->reason[0] ? v->reason : quality_name(v->q));
}

/* ---- ledger ------------------------------------------------------------------------------------------- */

static struct ledger_entry ledger[LEDGER_MAX];
static size_t ledger_n, ledger_dropped;

void ledger_reset(void)
{
    ledger_n = 0;
    ledger_dropped = 0;
}

static struct ledger_entry *find(const char *name)
{
    for (size_t i = 0; i < ledger_n; i++)
        if (!strcmp(ledger[i].name, name))
            return &ledger[i];
    return NULL;
}

bool ledger_add(const char *name, const char *unit, const struct stats *s, enum quality q)
{
    struct ledger_entry *e = find(name);
    if (!e) {
        if (ledger_n >= LEDGER_MAX) {
            ledger_dropped++;
            return false;
        }
        e = &ledger[ledger_n++];
    }
    *e = (struct ledger_entry){.unit = unit, .q = q};
    fmt_snprintf(e->name, sizeof(e->name), "%s", name);
    if (s) {
        e->median = s->median;
        e->ci_lo = s->ci_lo;
        e->ci_hi = s->ci_hi;
    } else {
        e->median = e->ci_lo = e->ci_hi = __builtin_nan("");
    }
    return true;
}

const struct ledger_entry *ledger_find(const char *name) { return find(name); }

bool ledger_mark_suspect(const char *name, const char *why)
{
    struct ledger_entry *e = find(name);
    if (!e)
        return false;
    if (e->q < QUALITY_SUSPECT) {
        e->q = QUALITY_SUSPECT;
        fmt_snprintf(e->why, sizeof(e->why), "%s", why && why[0] ? why : "a cross-check disagrees");
    }
    return true;
}

enum quality ledger_final_quality(const char *name, enum quality q, const char **why)
{
    const struct ledger_entry *e = name ? find(name) : NULL;
    if (why)
        *why = NULL;
    if (!e || e->q <= q)
        return q;
    if (why)
        *why = e->why[0] ? e->why : quality_name(e->q);
    return e->q;
}

void ledger_counts(size_t counts[QUALITY_COUNT], size_t *dropped)
{
    for (size_t q = 0; q < QUALITY_COUNT; q++)
        counts[q] = 0;
    for (size_t i = 0; i < ledger_n; i++)
        counts[ledger[i].q]++;
    if (dropped)
        *dropped = ledger_dropped;
}

void figure_json(struct json *j, const char *name, const struct stats *s, const char *unit, const struct verdict *v)
{
    json_kv_str(j, "figure", name);
    stats_json(j, s, unit);
    verdict_json(j, v);
    ledger_add(name, unit, s, v->q);
}
