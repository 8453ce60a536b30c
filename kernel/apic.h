/* apic.h - local APIC access in xAPIC (MMIO) or x2APIC (MSR) mode, masking, IPIs, and the legacy PIC. */
#ifndef PMB_APIC_H
#define PMB_APIC_H

#include "kernel/klib.h"

/* Local APIC registers (SDM Vol. 3A Table 11-1), as xAPIC MMIO offsets; x2APIC MSR = 0x800 + off/16. */
#define LAPIC_ID 0x020
#define LAPIC_VERSION 0x030
#define LAPIC_TPR 0x080 /* task priority: 0 lets every vector through */
#define LAPIC_EOI 0x0B0
#define LAPIC_SVR 0x0F0
#define LAPIC_SVR_ENABLE (1u << 8) /* SDM Vol. 3A 11.9 "Spurious Interrupt": APIC software enable */
#define LAPIC_ESR 0x280
#define LAPIC_ICR_LO 0x300
#define LAPIC_ICR_HI 0x310
#define LAPIC_LVT_TIMER 0x320
#define LAPIC_LVT_THERMAL 0x330
#define LAPIC_LVT_PERF 0x340
#define LAPIC_LVT_LINT0 0x350
#define LAPIC_LVT_LINT1 0x360
#define LAPIC_LVT_ERROR 0x370
#define LAPIC_TIMER_INIT 0x380
#define LAPIC_LVT_MASKED (1u << 16)

struct apic_state {
    bool present;
    bool x2apic;
    uint64_t base;      /* xAPIC MMIO base */
    uint32_t bsp_id;
    uint32_t max_lvt;
};

/* Reads IA32_APIC_BASE (safely), masks every LVT entry and the legacy 8259 PICs. */
void apic_init(struct apic_state *a, bool cpu_has_apic, bool cpu_has_x2apic);
uint32_t apic_read(const struct apic_state *a, uint32_t reg);
void apic_write(const struct apic_state *a, uint32_t reg, uint32_t v);
uint32_t apic_current_id(const struct apic_state *a);
void apic_mask_all(const struct apic_state *a);
void pic_mask_all(void);

#endif
