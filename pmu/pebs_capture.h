/* pebs_capture.h - PEBS load-latency capture: DS save area, programming, poll-drain, pebs_latency records. */
#ifndef PMB_PMU_PEBS_CAPTURE_H
#define PMB_PMU_PEBS_CAPTURE_H

#include "kernel/klib.h"
#include "pmu/counting.h"
#include "pmu/pebs.h"

#define PMU_PEBS_RECORDS 64      /* PEBS buffer capacity (records); drained by polling */
#define PMU_PEBS_DEFAULT_LDLAT 3 /* MSR_PEBS_LD_LAT_THRESHOLD minimum ([NHM] Table 17) */
#define PMU_PEBS_DEFAULT_PERIOD 997 /* qualifying loads per sample (prime: no lock-step with a chain) */

struct pmu_pebs_capture {
    struct pebs_lat_hist hist; /* per data source (bits 3:0 of the record's data source) */
    uint64_t records;          /* records drained into the histogram */
    uint64_t outside;          /* of those, records whose data linear address is outside [lo, hi) */
    uint64_t inside, inside_cycles; /* the others (the buffer's own loads), and their latencies summed */
    uint64_t stray;            /* records written after a global disable ([NHM] 3.1.3): counted, not
                                  decoded (pebs.h "draining the PEBS buffer") */
    uint64_t bad;              /* drains that found an inconsistent PEBS index */
    uint64_t drains;
    uint64_t lo, hi;           /* the benchmark buffer */
    uint32_t ldlat;
    uint64_t period;           /* programmed sample-after value: the request, at least PEBS_MIN_PERIOD */
    uint64_t period_requested;
    bool period_clamped;       /* the request was below PEBS_MIN_PERIOD and was raised to it */
    int status;                /* 0 programmed; -1 nothing programmed (why) */
    bool active;
    bool valid;                /* the records are measurements (else why) */
    const char *why;
    uint64_t counter;          /* the PEBS counter's events after the last sample */
    double timing_cycles;      /* the benchmark's own latency for the row (core cycles), 0: none; set
                                  it after pmu_pebs_begin: pmu_pebs_emit puts it beside the PEBS mean */
    struct pmu_group g;
};

/* Program load-latency PEBS ([NHM] 3.5, 3.7; SDM 18.8.1.2) on a general counter: the DS area with a
 * PMU_PEBS_RECORDS buffer and the counter reset for `period` (0: default; below PEBS_MIN_PERIOD it is
 * raised to it and the records say so), IA32_DS_AREA,
 * MEM_INST_RETIRED:LATENCY_ABOVE_THRESHOLD with MSR_PEBS_LD_LAT_THRESHOLD = ldlat (0: 3),
 * IA32_PEBS_ENABLE = PEBS_EN_PMCi | LL_EN_PMCi, then the global enable. [buf, buf + bytes) is where
 * sampled addresses must fall. Runs the PMU self-test first if it has not run. Returns 0 when
 * programmed (also in a dry run), -1 when nothing was programmed (c->why). Call with no record open. */
int pmu_pebs_begin(struct pmu_pebs_capture *c, const void *buf, size_t bytes, uint32_t ldlat, uint64_t period);
/* Drain if the buffer is at least half full (or force): global disable, IA32_PEBS_ENABLE = 0 (an armed
 * assist can still fire after the global disable, [NHM] 3.1.3), the PEBS counter read, every record
 * decoded into the histogram (stray ones counted), the PEBS index reset (a ds_area record says so),
 * IA32_PEBS_ENABLE restored, global enable. Cheap when there is nothing to drain: call it between
 * chunks of the measured loop. */
void pmu_pebs_poll(struct pmu_pebs_capture *c, bool force);
/* Global disable, IA32_PEBS_ENABLE = 0, counter read, last drain, the event select cleared. */
void pmu_pebs_end(struct pmu_pebs_capture *c);
/* `pebs_latency` records for benchmark row `row`: one per data source with samples (row, source,
 * dse, samples, mean_cycles, min/max, histogram [[low_cycles, count], ...], table2_row,
 * addresses_outside, stray_records, period / period_requested, status); or one record with samples 0
 * and status unavailable and the reason. */
void pmu_pebs_emit(const struct pmu_pebs_capture *c, const char *row);
/* Mean latency (core cycles) of data source `dse` (0..15), or of all sources (-1); 0 without samples.
 * *samples (optional) gets the count. Meaningful only when c->valid. */
double pmu_pebs_mean(const struct pmu_pebs_capture *c, int dse, uint64_t *samples);

/* Convenience for the latency benchmarks: chase `loads` links from start (measure/chase.h chase_run,
 * in chunks with polling) under a capture, emit its pebs_latency records for `row`. Returns where the
 * chase ended (to keep the chain position), or start when nothing ran. */
void *pmu_pebs_chase(struct pmu_pebs_capture *c, const char *row, void *start, uint64_t loads, const void *buf,
                     size_t bytes, uint32_t ldlat, uint64_t period);

#endif
