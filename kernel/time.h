/* time.h - TSC frequency (CPUID or calibrated against the ACPI PM timer / HPET) and core-clock/TSC ratio. */
#ifndef PMB_TIME_H
#define PMB_TIME_H

#include "kernel/klib.h"

struct time_ref {
    bool pm_present;
    bool pm_io;        /* I/O port vs MMIO */
    uint64_t pm_addr;
    bool pm_32bit;     /* FADT TMR_VAL_EXT */
    uint64_t hpet_base; /* 0 when absent */
};

#define TIME_MAX_RUNS 16

struct time_info {
    uint64_t tsc_hz;           /* the value everything uses */
    const char *tsc_method;    /* cpuid.15h | cpuid.16h | acpi_pm_timer | hpet | none */
    uint64_t cpuid_tsc_hz;     /* what CPUID said (0: nothing) */
    const char *cpuid_method;
    uint64_t measured_tsc_hz;  /* median of the calibration runs (0: no reference timer) */
    const char *measured_ref;  /* acpi_pm_timer | hpet | none */
    uint32_t runs;
    double run_hz[TIME_MAX_RUNS];
    double spread;             /* (max - min) / median of the runs */
    double window_ms;          /* length of one calibration window */
    bool invariant_tsc;
    double core_tsc_ratio;     /* core cycles per TSC tick */
    const char *core_tsc_method; /* aperf_mperf | dependent_add_chain */
    double core_ratio_spread;
};

/* Calibrates against the reference timers; uses CPUID's value when given (cpuid_hz != 0) and still
 * measures it for comparison. */
void time_calibrate(struct time_info *t, const struct time_ref *ref, uint64_t cpuid_hz, const char *cpuid_method,
                    uint32_t runs, uint32_t window_ms);
void time_core_ratio(struct time_info *t, bool aperfmperf);
uint64_t time_tsc_hz(void);
/* Busy-wait using the TSC (requires calibration). */
void tsc_delay_us(uint64_t us);
double tsc_to_ns(double ticks);

#endif
