/* stats_json.c - the one statistics emitter (stats_json.h). */
#include "measure/stats_json.h"

/* NaN fields (a difference of medians has no p10) and a missing figure print as null. */
static void num(struct json *j, const char *k, const struct stats *s, double v)
{
    if (s)
        json_kv_double(j, k, v); /* json_double writes NaN and inf as null */
    else
        json_kv_null(j, k);
}

void stats_json(struct json *j, const struct stats *s, const char *unit)
{
    json_kv_str(j, "unit", unit);
    num(j, "median", s, s ? s->median : 0);
    num(j, "p10", s, s ? s->p10 : 0);
    num(j, "p90", s, s ? s->p90 : 0);
    num(j, "min", s, s ? s->min : 0);
    num(j, "max", s, s ? s->max : 0);
    json_kv_uint(j, "n", s ? s->n : 0);
    num(j, "spread", s, s ? s->spread : 0);
    num(j, "ci_lo", s, s ? s->ci_lo : 0);
    num(j, "ci_hi", s, s ? s->ci_hi : 0);
    if (s && (s->allow_lo > 0 || s->allow_hi > 0)) { /* what the interval holds beyond the samples' order statistics */
        json_kv_double(j, "ci_allow_lo", s->allow_lo);
        json_kv_double(j, "ci_allow_hi", s->allow_hi);
    }
    if (s && s->replicates > 1) { /* the interval is across replicates; what one replicate alone said */
        json_kv_uint(j, "replicates", s->replicates);
        json_kv_double(j, "within_ci", s->within_ci);
        json_kv_double(j, "between_spread", s->between_spread);
        if (s->next_level > 0) { /* where the next run's figure falls (stats_next_median_ranks) */
            json_kv_double(j, "next_lo", s->next_lo);
            json_kv_double(j, "next_hi", s->next_hi);
            json_kv_double(j, "next_level", s->next_level);
        }
    }
}

struct stats stats_derived(double median)
{
    double nan = __builtin_nan("");
    return (struct stats){.n = 0, .median = median, .min = nan, .p10 = nan, .p90 = nan, .max = nan, .mean = median,
                          .stddev = nan, .cv = nan, .spread = nan, .ci_lo = nan, .ci_hi = nan};
}

void stats_json_also(struct json *j, const char *unit, double v) { json_kv_double(j, unit, v); }
