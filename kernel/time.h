/* time.h - TSC frequency (CPUID, and calibrated against the ACPI PM timer and the HPET) and the core-clock/TSC ratio. */
#ifndef PMB_TIME_H
#define PMB_TIME_H

#include "kernel/klib.h"
#include "kernel/core_clock.h"
#include "kernel/json.h"

struct time_ref {
    bool pm_present;
    bool pm_io;        /* I/O port vs MMIO */
    uint64_t pm_addr;
    bool pm_32bit;     /* FADT TMR_VAL_EXT */
    uint64_t hpet_base; /* 0 when absent */
};

#define TIME_MAX_RUNS 16

/* The TSC against one reference timer: median and spread of its calibration windows. */
struct time_ref_result {
    uint64_t hz;               /* median (0: absent, or it stopped answering) */
    uint32_t runs;
    double spread;             /* (max - min) / median */
    double run_hz[TIME_MAX_RUNS];
};

struct time_info {
    uint64_t tsc_hz;           /* the value everything uses */
    const char *tsc_method;    /* cpuid.15h | cpuid.16h | acpi_pm_timer | hpet | none */
    uint64_t cpuid_tsc_hz;     /* what CPUID said (0: nothing) */
    const char *cpuid_method;
    /* Every reference timer that exists is measured (windows interleaved): QEMU q35 and most PCs have both. */
    struct time_ref_result pm_timer, hpet;
    /* The primary reference (the PM timer when it answered, else the HPET), as before: */
    uint64_t measured_tsc_hz;  /* its median (0: no reference timer) */
    const char *measured_ref;  /* acpi_pm_timer | hpet | none */
    uint32_t runs;
    double run_hz[TIME_MAX_RUNS];
    double spread;             /* (max - min) / median of its runs */
    double window_ms;          /* length of one calibration window */
    bool invariant_tsc;
    double core_tsc_ratio;     /* core cycles per TSC tick (= core.ratio) */
    const char *core_tsc_method; /* aperf_mperf | add_rr_chain | imul_chain | none (= core.method) */
    double core_ratio_spread;
    struct core_clock core;    /* both chains, their agreement and why this method */
};

/* Calibrates against every reference timer present; uses CPUID's value when given (cpuid_hz != 0) and still
 * measures it for comparison. */
void time_calibrate(struct time_info *t, const struct time_ref *ref, uint64_t cpuid_hz, const char *cpuid_method,
                    uint32_t runs, uint32_t window_ms);
/* The start-up core/TSC ratio on the calling CPU (core_clock_measure). */
void time_core_ratio(struct time_info *t, bool aperfmperf);
uint64_t time_tsc_hz(void);
/* Busy-wait using the TSC (requires calibration). */
void tsc_delay_us(uint64_t us);
double tsc_to_ns(double ticks);

/*
 * The clock facts the run record's description (kernel/run_desc.h: tsc_hz, tsc_method, tsc_measured_hz,
 * tsc_measured_ref, tsc_spread, invariant_tsc, core_tsc_ratio, core_tsc_method) does not carry, as keys of
 * an open JSON object: tsc_hz_pm_timer, tsc_hz_hpet, tsc_hz_cpuid (null when that clock is absent),
 * tsc_hz_cpuid_source, tsc_spread_pm_timer, tsc_spread_hpet, core_tsc_ratio_add, core_tsc_ratio_imul,
 * core_tsc_ratio_aperf (null when not measured), core_tsc_imul_latency, core_tsc_agree (true / false /
 * null: not judged), core_tsc_suspect (the chain reading higher when they disagree, else null),
 * core_tsc_note.
 */
void time_json(struct json *j, const struct time_info *t);

#endif
