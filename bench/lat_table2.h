/* lat_table2.h - the data sources of the guide's Table 2 measured one by one, each with its lines placed where the row says. */
#ifndef PMB_BENCH_LAT_TABLE2_H
#define PMB_BENCH_LAT_TABLE2_H

#include "kernel/klib.h"

/* Emits one data_source record per row of lat_rows (measured, or status "unavailable" with the reason),
 * calls the PEBS hook after each measured row, and prints Table 2 beside the guide's values. */
void lat_table2_run(void);
/* The CPUs the last lat_table2_run used for the rows measured with another core's help: the measuring CPU
 * and the helper (plat_cpu ids); false when no helper was found (or the rows did not run). */
bool lat_table2_helper(uint32_t *self, uint32_t *helper);

#endif
