/* extable.h - exception fixup table: an instruction listed here resumes at its fixup instead of crashing. */
#ifndef PMB_EXTABLE_H
#define PMB_EXTABLE_H

#include "kernel/klib.h"

/* Each entry holds two offsets relative to the entry's own fields (no run-time relocation needed).
 * On a fault at `insn` the handler stores (vector + 1) in the register the asm names as FIXUP_REG
 * (%rdi) and resumes at `fixup`. */
#define EXTABLE_ENTRY(insn, fixup)                                                                   \
    ".pushsection .ex_table, \"a\"\n\t.balign 4\n\t.long " #insn " - .\n\t.long " #fixup " - .\n\t.popsection\n\t"

struct irq_frame;
/* Returns true and redirects the frame when the faulting RIP has a fixup. */
bool extable_fixup(struct irq_frame *f);
uint64_t extable_fixups_taken(void);

#endif
