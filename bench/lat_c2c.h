/* lat_c2c.h - the `c2c` benchmark: core-to-core line transfer latency for every ordered pair of CPUs (clean HIT and modified HITM). */
#ifndef PMB_BENCH_LAT_C2C_H
#define PMB_BENCH_LAT_C2C_H

#include "kernel/klib.h"

#define C2C_WHAT "core-to-core latency matrix: read of a line another CPU last read (HIT) or wrote (HITM)"

/* One c2c record per ordered pair (from_cpu holds the lines, to_cpu reads them), all pairs of up to
 * LAT_C2C_MAX_CPUS CPUs (evenly sampled beyond that, and the c2c_summary record says so), then the two
 * matrices as text. With one CPU only the c2c_summary record, status "unavailable". */
void bench_c2c(void);

#endif
