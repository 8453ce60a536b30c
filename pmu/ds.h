/* ds.h - layout of the 64-bit DS save area (IA32_DS_AREA) and of BTS records; setup is in pebs.h. */
#ifndef PMB_PMU_DS_H
#define PMB_PMU_DS_H

#include "kernel/klib.h"

/*
 * 64-bit DS buffer management area ([NHM] 3.5.3 Figure 11 / 3.8.2 Figure 17; SDM Vol. 3B 18.x
 * "DS Save Area", IA-32e layout; needs CPUID.1:ECX.DTES64). Every field is 8 bytes:
 *
 *   Offset  Field
 *   0x00    BTS Buffer Base
 *   0x08    BTS Index
 *   0x10    BTS Absolute Maximum
 *   0x18    BTS Interrupt Threshold
 *   0x20    PEBS Buffer Base
 *   0x28    PEBS Index
 *   0x30    PEBS Absolute Maximum
 *   0x38    PEBS Interrupt Threshold
 *   0x40    PEBS Counter0 Reset ... 0x58 PEBS Counter3 Reset (Nehalem: 4 counters)
 *   0x60    reserved on Nehalem; PEBS Counter4..7 Reset on parts with 8 PMCs
 *   0x80    PEBS Fixed Counter0..3 Reset (adaptive PEBS parts only)
 *
 * Counter reset values are written to the counter as is - all 48 bits, no sign extension from
 * bit 31 ([NHM] 3.5.3) - so a sample-after value N is stored as 2^width - N.
 */
struct ds_area {
    uint64_t bts_buffer_base;
    uint64_t bts_index;
    uint64_t bts_absolute_maximum;
    uint64_t bts_interrupt_threshold;
    uint64_t pebs_buffer_base;
    uint64_t pebs_index;
    uint64_t pebs_absolute_maximum;
    uint64_t pebs_interrupt_threshold;
    uint64_t pebs_counter_reset[8];
    uint64_t pebs_fixed_reset[4];
};

#define DS_OFF_BTS_BUFFER_BASE 0x00
#define DS_OFF_BTS_INDEX 0x08
#define DS_OFF_BTS_ABSOLUTE_MAXIMUM 0x10
#define DS_OFF_BTS_INTERRUPT_THRESHOLD 0x18
#define DS_OFF_PEBS_BUFFER_BASE 0x20
#define DS_OFF_PEBS_INDEX 0x28
#define DS_OFF_PEBS_ABSOLUTE_MAXIMUM 0x30
#define DS_OFF_PEBS_INTERRUPT_THRESHOLD 0x38
#define DS_OFF_PEBS_COUNTER_RESET(i) (0x40 + 8 * (i))
#define DS_OFF_PEBS_FIXED_RESET(i) (0x80 + 8 * (i))
#define DS_AREA_SIZE 0xa0

_Static_assert(offsetof(struct ds_area, bts_buffer_base) == DS_OFF_BTS_BUFFER_BASE, "DS layout");
_Static_assert(offsetof(struct ds_area, bts_index) == DS_OFF_BTS_INDEX, "DS layout");
_Static_assert(offsetof(struct ds_area, bts_absolute_maximum) == DS_OFF_BTS_ABSOLUTE_MAXIMUM, "DS layout");
_Static_assert(offsetof(struct ds_area, bts_interrupt_threshold) == DS_OFF_BTS_INTERRUPT_THRESHOLD, "DS layout");
_Static_assert(offsetof(struct ds_area, pebs_buffer_base) == DS_OFF_PEBS_BUFFER_BASE, "DS layout");
_Static_assert(offsetof(struct ds_area, pebs_index) == DS_OFF_PEBS_INDEX, "DS layout");
_Static_assert(offsetof(struct ds_area, pebs_absolute_maximum) == DS_OFF_PEBS_ABSOLUTE_MAXIMUM, "DS layout");
_Static_assert(offsetof(struct ds_area, pebs_interrupt_threshold) == DS_OFF_PEBS_INTERRUPT_THRESHOLD, "DS layout");
_Static_assert(offsetof(struct ds_area, pebs_counter_reset) == DS_OFF_PEBS_COUNTER_RESET(0), "DS layout");
_Static_assert(offsetof(struct ds_area, pebs_fixed_reset) == DS_OFF_PEBS_FIXED_RESET(0), "DS layout");
_Static_assert(sizeof(struct ds_area) == DS_AREA_SIZE, "DS layout");

/*
 * 64-bit branch trace message in the BTS buffer ([NHM] 3.8.2 Figure 16):
 *   0x00 Last Branch From, 0x08 Last Branch To, 0x10 flags: bit 4 = branch was predicted.
 */
#define BTS_RECORD_SIZE 24
#define BTS_OFF_FROM 0x00
#define BTS_OFF_TO 0x08
#define BTS_OFF_FLAGS 0x10
#define BTS_FLAG_PREDICTED (1ULL << 4)

#endif
