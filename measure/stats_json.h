/* stats_json.h - the one statistics emitter: every measured figure's keys, one convention for all records (docs/records.md). */
#ifndef PMB_MEASURE_STATS_JSON_H
#define PMB_MEASURE_STATS_JSON_H

#include "kernel/json.h"
#include "measure/stats.h"

/* Units a figure may be stated in (the value of the "unit" key). */
#define UNIT_NS "ns"
#define UNIT_CYCLES "cycles"
#define UNIT_TSC "tsc"
#define UNIT_BYTES_PER_S "bytes_per_s"

/* Writes the figure s, already converted into `unit`, into the open record j:
 *   "unit", "median", "p10", "p90", "min", "max", "n", "spread", "ci_lo", "ci_hi"
 * spread is the robust coefficient of variation (a fraction); ci_lo/ci_hi the distribution-free 95 %
 * confidence interval of the median (stats.h). NaN fields, and every field when s is NULL (a figure not
 * measured), are null. A figure of replicates adds "replicates", "within_ci", "between_spread" and, with its
 * next-run interval, "next_lo", "next_hi", "next_level" (stats.h). The same median in another unit goes under that unit's name with stats_json_also. */
void stats_json(struct json *j, const struct stats *s, const char *unit);
/* A figure derived from other figures rather than sampled (the plateau of a curve): n 0, the median, and
 * every other statistic NaN (null in the record); its uncertainty is that of the figures it comes from. */
struct stats stats_derived(double median);
/* The figure's median converted into another unit: "<unit>": v (only ever a median, never statistics). */
void stats_json_also(struct json *j, const char *unit, double v);

#endif
