/* stats_json.c - the one statistics emitter (stats_json.h). */
#include "measure/stats_json.h"

static void num(struct json *j, const char *k, double v, bool have)
{
    if (have)
        json_kv_double(j, k, v);
    else
        json_kv_null(j, k);
}

void stats_json(struct json *j, const struct stats *s, const char *unit)
{
    bool have = s && s->n > 0;
    json_kv_str(j, "unit", unit);
    num(j, "median", have ? s->median : 0, have);
    num(j, "p10", have ? s->p10 : 0, have);
    num(j, "p90", have ? s->p90 : 0, have);
    num(j, "min", have ? s->min : 0, have);
    num(j, "max", have ? s->max : 0, have);
    json_kv_uint(j, "n", have ? s->n : 0);
    num(j, "spread", have ? s->spread : 0, have);
    num(j, "ci_lo", have ? s->ci_lo : 0, have);
    num(j, "ci_hi", have ? s->ci_hi : 0, have);
}

void stats_json_value(struct json *j, double v, const char *unit)
{
    json_kv_str(j, "unit", unit);
    json_kv_double(j, "median", v);
}

void stats_json_also(struct json *j, const char *unit, double v) { json_kv_double(j, unit, v); }
