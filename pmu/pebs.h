/* pebs.h - DS area setup, PEBS record decoding (formats 0-3), load-latency data sources, histograms. */
#ifndef PMB_PMU_PEBS_H
#define PMB_PMU_PEBS_H

#include "kernel/klib.h"
#include "pmu/ds.h"

/*
 * PEBS record layouts (IA32_PERF_CAPABILITIES[11:8]); all fields 8 bytes ([NHM] Table 15):
 *   0x00 RFLAGS  0x08 RIP  0x10 RAX  0x18 RBX  0x20 RCX  0x28 RDX  0x30 RSI  0x38 RDI
 *   0x40 RBP  0x48 RSP  0x50..0x88 R8..R15                       format 0 (Core 2): 0x90 bytes
 *   0x90 IA32_PERF_GLOBAL_STATUS  0x98 Data Linear Address
 *   0xA0 Data Source Encoding  0xA8 Latency (core cycles)          format 1 (Nehalem): 0xB0 bytes
 *   0xB0 Eventing IP  0xB8 TX abort information                    format 2 (Haswell): 0xC0 bytes
 *   0xC0 TSC                                                       format 3 (Skylake): 0xC8 bytes
 * Format 4 (adaptive PEBS) has a variable layout and is not decoded here.
 */
#define PEBS_OFF_FLAGS 0x00
#define PEBS_OFF_IP 0x08
#define PEBS_OFF_GPR(i) (0x10 + 8 * (i)) /* enum pebs_gpr order */
#define PEBS_OFF_GLOBAL_STATUS 0x90
#define PEBS_OFF_DLA 0x98
#define PEBS_OFF_DSE 0xa0
#define PEBS_OFF_LAT 0xa8
#define PEBS_OFF_EVENTING_IP 0xb0
#define PEBS_OFF_TSX 0xb8
#define PEBS_OFF_TSC 0xc0
#define PEBS_MAX_FORMAT 3

enum pebs_gpr {
    PEBS_RAX, PEBS_RBX, PEBS_RCX, PEBS_RDX, PEBS_RSI, PEBS_RDI, PEBS_RBP, PEBS_RSP,
    PEBS_R8, PEBS_R9, PEBS_R10, PEBS_R11, PEBS_R12, PEBS_R13, PEBS_R14, PEBS_R15,
};

struct pebs_record {
    uint8_t format;
    uint64_t flags, ip;
    uint64_t gpr[16];
    bool has_status; /* format >= 1 */
    uint64_t global_status;
    uint64_t dla;     /* data linear address (lower 48 bits valid on Nehalem) */
    uint64_t dse;     /* data source encoding, bits 3:0 index pebs_dse_table */
    uint64_t latency; /* load latency, core cycles */
    bool has_eventing_ip; /* format >= 2 */
    uint64_t eventing_ip;
    uint64_t tsx;
    bool has_tsc; /* format >= 3 */
    uint64_t tsc;
};

/* Decode one record of `format` from buf (len bytes available). 0, or -1 when the format is not
 * 0..3 or len is shorter than the record. Reads with memcpy: buf needs no alignment. */
int pebs_decode(const void *buf, size_t len, unsigned format, struct pebs_record *out);

/* ---- DS area values ------------------------------------------------------------------------ */

/* PEBS buffer of `bytes` at linear address base: base and index = base, absolute maximum = first
 * byte past the last whole record, interrupt threshold = base + thresh_records records, or the
 * absolute maximum when thresh_records is 0 or too large (threshold <= maximum always). Resets are
 * cleared. -1 if base is not 8-byte aligned, rec_size is 0 or not a multiple of 8, the buffer holds
 * no record, or base + bytes overflows. */
int ds_setup_pebs(struct ds_area *ds, uint64_t base, uint64_t bytes, unsigned rec_size, unsigned thresh_records);
/* Same for the BTS buffer (24-byte records). */
int ds_setup_bts(struct ds_area *ds, uint64_t base, uint64_t bytes, unsigned thresh_records);
/* Counter reset for "sample every `period` events" on a `width`-bit counter: 2^width - period.
 * -1 if counter > 7, width not in [32, 64] or period is 0 or >= 2^(width-1). */
int ds_set_pebs_reset(struct ds_area *ds, unsigned counter, unsigned width, uint64_t period);
/* Records written so far ((index - base) / rec_size), or -1 if index is outside [base, max] or not
 * on a record boundary. */
long ds_pebs_count(const struct ds_area *ds, unsigned rec_size);

/* The sample-after value to program for a requested one: at least `min` (PEBS_MIN_PERIOD, 32: Linux
 * nhm_limit_period). *clamped (optional) says whether it was raised. */
uint64_t pebs_period_clamp(uint64_t requested, uint64_t min, bool *clamped);

/* ---- load-latency data sources ([NHM] Table 16) --------------------------------------------- */

/* Rows of Table 2 of the Core i7 / Xeon 5500 performance analysis guide (approximate latencies). */
enum pebs_t2_row {
    PEBS_T2_NONE = -1,
    PEBS_T2_L3_UNSHARED = 0,  /* L3 hit, line unshared: ~40 cycles */
    PEBS_T2_L3_SHARED,        /* L3 hit, shared line in another core: ~65 cycles */
    PEBS_T2_L3_MODIFIED,      /* L3 hit, modified in another core: ~75 cycles */
    PEBS_T2_REMOTE_L3,        /* remote L3: ~100-300 cycles */
    PEBS_T2_LOCAL_DRAM,       /* ~60 ns */
    PEBS_T2_REMOTE_DRAM,      /* ~100 ns */
    PEBS_T2_ROWS
};

struct pebs_dse_info {
    uint8_t code;
    const char *name;       /* short name, as in the performance analysis guide Table 5 */
    const char *desc;       /* [NHM] Table 16 */
    int8_t table2_row;      /* enum pebs_t2_row */
    bool l3_miss;           /* the load missed the local L3 (0x0 and 0x8-0xD) */
    bool doc_reserved;      /* [NHM] Table 16 / SDM call it reserved or unsupported: see docs/pmu.md */
};

/* A Table 2 row a data source maps to: `row` is the name the data_source records use (bench/lat_plan.c
 * lat_rows, which alone holds the guide's reference latencies; pmu/ never includes bench/), `source` the
 * guide's wording of the row. */
struct pebs_t2_info {
    const char *row;
    const char *source;
};

extern const struct pebs_dse_info pebs_dse_table[16];
extern const struct pebs_t2_info pebs_t2_table[PEBS_T2_ROWS];
const struct pebs_dse_info *pebs_dse(uint64_t dse); /* uses bits 3:0; the model-independent table */
/* The data source of a record on one CPU model (display family/model, SDM CPUID.1 rules): pebs_dse_table
 * patched per model, as Linux patches its pebs_data_source (intel_pmu_pebs_data_source_nhm). 07H is
 * "LLC Snoop HitM" only on 06_2E (Nehalem-EX; SDM Vol. 3B Table 18-24 note 1: "supported only for ...
 * 06_2A, and 06_2E; otherwise it is reserved") and reserved on 06_1A/1E/1F/25/2C/2F ([NHM] Table 16,
 * [PAG] Table 5 "encoding not supported"). Linux gives 07H HITM on every Nehalem/Westmere; the SDM's
 * footnote is followed here. */
const struct pebs_dse_info *pebs_dse_model(unsigned family, unsigned model, uint64_t dse);

/* ---- latency histogram per data source ----------------------------------------------------- */

#define PEBS_HIST_BUCKETS 24 /* bucket b >= 1 holds [2^(b-1), 2^b) cycles; bucket 0 holds 0 */

struct pebs_lat_hist {
    uint64_t count[16];
    uint64_t sum[16];
    uint64_t min[16], max[16];
    uint64_t bucket[16][PEBS_HIST_BUCKETS];
    uint64_t total;
};

void pebs_hist_init(struct pebs_lat_hist *h);
unsigned pebs_hist_bucket(uint64_t latency);
void pebs_hist_add(struct pebs_lat_hist *h, uint64_t dse, uint64_t latency);
/* Add every record between ds->pebs_buffer_base and ds->pebs_index, where `mem` is that buffer as
 * this code sees it. Returns the number of records added, or -1 on a bad index / format. */
long pebs_hist_add_buffer(struct pebs_lat_hist *h, const struct ds_area *ds, const void *mem, unsigned format);
/* Mean latency of one source in cycles, 0 if it has no samples. */
double pebs_hist_mean(const struct pebs_lat_hist *h, unsigned src);

/* ---- draining the PEBS buffer ----------------------------------------------------------------
 * [NHM] 3.1.3: a counter that overflowed while enabled arms the PEBS hardware, and the assist fires on
 * the next event "even if an intervening write to [IA32_PERF_GLOBAL_CTRL] disables the counter". Such
 * a record describes a load of the code that stopped the counter (or of the drain), not of the measured
 * region. The drain therefore runs with IA32_PEBS_ENABLE clear (no assist can fire), and a record that
 * arrived after the global disable is counted as stray: neither decoded into the histogram nor lost. */
struct pebs_drain_acc {
    uint64_t records; /* decoded into the histogram */
    uint64_t stray;   /* written after the global disable: counted only */
    uint64_t outside; /* decoded records whose data linear address is outside [lo, hi) */
    uint64_t inside, inside_cycles; /* the others: how many, and their load latencies summed (core cycles) */
    uint64_t bad;     /* inconsistent PEBS index or undecodable record */
};

/* Whether the newest record in the buffer was written at or after the global disable, judged from the
 * PEBS counter read right after that disable: an assist reloads the counter with its DS reset value
 * ([NHM] 3.5.3), so a counter that still holds exactly that value has counted nothing since its last
 * assist. (It also holds when the last assist came just before the disable with no qualifying load
 * after it: that record is then counted as stray too - kept out of the figures, never lost.) */
bool pebs_last_record_after_disable(uint64_t counter, uint64_t reset, unsigned width);

/* One drain: every record between snap->pebs_buffer_base and snap->pebs_index (snap: the DS area read
 * after the disable; mem: that buffer as this code sees it) is decoded into h, its data linear address
 * (lower 48 bits, sign-extended: [NHM] 3.7) checked against [lo, hi), except the newest one when
 * last_is_stray, which is counted in acc->stray. Returns the records decoded, or -1 (acc->bad) when
 * the index is inconsistent or the format unknown. */
long pebs_drain_records(struct pebs_lat_hist *h, struct pebs_drain_acc *acc, const struct ds_area *snap,
                        const void *mem, unsigned format, uint64_t lo, uint64_t hi, bool last_is_stray);
/* Records written past snap->pebs_index by the time the index read index_now (after the records were
 * decoded, before it is reset): all stray. Returns how many, or -1 (acc->bad) if index_now is below
 * the snapshot's index, beyond the absolute maximum or not on a record boundary. */
long pebs_drain_late(struct pebs_drain_acc *acc, const struct ds_area *snap, uint64_t index_now, unsigned format);

#endif
