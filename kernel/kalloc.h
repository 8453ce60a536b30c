/* kalloc.h - bump allocator over the scratch region boot/ reserved (LoaderData) for kernel structures. */
#ifndef PMB_KALLOC_H
#define PMB_KALLOC_H

#include "kernel/klib.h"

void kalloc_init(uint64_t base, uint64_t size);
/* Zeroed, aligned (power of two); NULL when the scratch region is exhausted. */
void *kalloc(size_t bytes, size_t align);
uint64_t kalloc_used(void);

#endif
