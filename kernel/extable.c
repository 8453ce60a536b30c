/* extable.c - look up the faulting RIP in the .ex_table section (built by EXTABLE_ENTRY). */
#include "kernel/extable.h"
#include "kernel/cpu.h"

struct ex_entry {
    int32_t insn, fixup;
};
extern const struct ex_entry __ex_table_start[], __ex_table_end[];

static volatile uint64_t fixups_taken;

uint64_t extable_fixups_taken(void) { return fixups_taken; }

bool extable_fixup(struct irq_frame *f)
{
    /* Only faults a probe can cause are fixed up; NMI/#MC/#DF are always real. */
    if (f->vector != 13 && f->vector != 14 && f->vector != 6)
        return false;
    for (const struct ex_entry *e = __ex_table_start; e < __ex_table_end; e++) {
        uint64_t insn = (uint64_t)(uintptr_t)&e->insn + (int64_t)e->insn;
        if (insn == f->rip) {
            f->rip = (uint64_t)(uintptr_t)&e->fixup + (int64_t)e->fixup;
            f->rdi = f->vector + 1;
            fixups_taken++;
            return true;
        }
    }
    return false;
}
