/* lat_table2.h - the data sources of the guide's Table 2 measured one by one, each with its lines placed where the row says. */
#ifndef PMB_BENCH_LAT_TABLE2_H
#define PMB_BENCH_LAT_TABLE2_H

#include "kernel/klib.h"

/* Emits one data_source record per row of lat_rows (measured, or status "unavailable" with the reason),
 * calls the PEBS hook after each measured row, and prints Table 2 beside the guide's values: lat_table2_begin,
 * then lat_table2_finish (its passes back to back). */
void lat_table2_run(void);

/* The rows in passes spread over time (docs/measurement.md "Replicates"): lat_table2_begin finds the CPUs and
 * allocates the rows' buffers (no records); each lat_table2_pass measures the next replicate k of every row
 * measured in passes (L1, L2, L3_unshared, L3_shared_other_core, L3_modified_other_core, remote_L3, in that
 * order), replicate k of each in its own region; lat_table2_finish runs the passes still to do, combines each
 * row across its replicates, runs the DRAM rows (their replicates back to back) and emits every record, the
 * table and the cross-checks. lat_table2_passes: R, the passes in all (0 before begin). */
void lat_table2_begin(void);
size_t lat_table2_passes(void);
size_t lat_table2_passes_done(void); /* passes measured since lat_table2_begin */
void lat_table2_pass(void);
void lat_table2_finish(void);
/* The passes due after `done` of `total` passes of something else (the sweep's): floor(done x reps / total),
 * all of them once done >= total (or total is 0). */
size_t lat_table2_due(size_t done, size_t total, size_t reps);
/* For lat_sweep_between: runs the passes due (lat_table2_due) after the sweep's pass `done` of `total`. */
void lat_table2_between(size_t done, size_t total);
/* The CPUs the last lat_table2_run used for the rows measured with another core's help: the measuring CPU
 * and the helper (plat_cpu ids); false when no helper was found (or the rows did not run). */
bool lat_table2_helper(uint32_t *self, uint32_t *helper);
/* The sweep plateau the last run's row `source` ("L1") was checked against in cycles (lat_sweep_plateau_cycles at
 * the row's footprint) and its cycles; NULL when the row was not measured or no such plateau exists. A third
 * measurement for a later check of the same latency (penalty l1_hit against the L1 row). */
const char *lat_table2_sweep_plateau(const char *source, double *cycles);
/* The last run's row `source` in core cycles as its data_source record states it (converted with its replicates'
 * own ratios); 0 when the row was not measured. */
double lat_table2_row_cycles(const char *source);
/* The last run's L1 row as a reading of the L1 latency in cycles for clock_l1_check (its CI and its conversion's
 * u); false when the row was not measured or its cycles were not converted with the clock chain draws. */
struct clock_l1_reading;
bool lat_table2_l1_reading(struct clock_l1_reading *out);

#endif
