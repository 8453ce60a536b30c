/* apic.c - keep every interrupt source quiet: the kernel runs with IF=0 and polls. */
#include "kernel/apic.h"
#include "kernel/io.h"
#include "kernel/msr.h"

uint32_t apic_read(const struct apic_state *a, uint32_t reg)
{
    if (a->x2apic) {
        uint64_t v = 0;
        rdmsr_safe(MSR_IA32_X2APIC_REG(reg), &v);
        return (uint32_t)v;
    }
    return mmio_read32(a->base + reg);
}

void apic_write(const struct apic_state *a, uint32_t reg, uint32_t v)
{
    if (a->x2apic) {
        wrmsr_safe(MSR_IA32_X2APIC_REG(reg), v);
        return;
    }
    mmio_write32(a->base + reg, v);
}

uint32_t apic_current_id(const struct apic_state *a)
{
    uint32_t id = apic_read(a, LAPIC_ID);
    return a->x2apic ? id : id >> 24;
}

void pic_mask_all(void)
{
    /* 8259A OCW1: mask all IRQ lines on master (0x21) and slave (0xA1). */
    outb(0x21, 0xFF);
    outb(0xA1, 0xFF);
}

void apic_mask_all(const struct apic_state *a)
{
    static const uint32_t lvts[] = {LAPIC_LVT_TIMER, LAPIC_LVT_THERMAL, LAPIC_LVT_PERF,
                                    LAPIC_LVT_LINT0, LAPIC_LVT_LINT1, LAPIC_LVT_ERROR};
    if (!a->present)
        return;
    apic_write(a, LAPIC_TIMER_INIT, 0); /* stop the timer */
    for (size_t i = 0; i < ARRAY_SIZE(lvts); i++) {
        /* Thermal and perf LVTs exist only when max LVT says so (Version register bits 23:16). */
        if (lvts[i] == LAPIC_LVT_THERMAL && a->max_lvt < 5)
            continue;
        if (lvts[i] == LAPIC_LVT_PERF && a->max_lvt < 4)
            continue;
        apic_write(a, lvts[i], apic_read(a, lvts[i]) | LAPIC_LVT_MASKED);
    }
}

void apic_init(struct apic_state *a, bool cpu_has_apic, bool cpu_has_x2apic)
{
    memset(a, 0, sizeof(*a));
    pic_mask_all();
    if (!cpu_has_apic)
        return;
    uint64_t base = 0;
    if (rdmsr_safe(MSR_IA32_APIC_BASE, &base) != MSR_OK || !(base & MSR_IA32_APIC_BASE_EN))
        return;
    a->present = true;
    a->x2apic = cpu_has_x2apic && (base & MSR_IA32_APIC_BASE_EXTD);
    a->base = base & 0xFFFFFF000ULL;
    a->max_lvt = (apic_read(a, LAPIC_VERSION) >> 16) & 0xFF;
    a->bsp_id = apic_current_id(a);
    apic_mask_all(a);
}
