/* kalloc.c - never-freeing bump allocator: kernel structures live for the whole run. */
#include "kernel/kalloc.h"

static uint64_t k_base, k_size, k_used;

void kalloc_init(uint64_t base, uint64_t size)
{
    k_base = base;
    k_size = size;
    k_used = 0;
}

void *kalloc(size_t bytes, size_t align)
{
    if (align < 16)
        align = 16;
    uint64_t at = ALIGN_UP(k_base + k_used, align);
    if (bytes > k_size || at + bytes > k_base + k_size)
        return NULL;
    k_used = at + bytes - k_base;
    memset((void *)(uintptr_t)at, 0, bytes);
    return (void *)(uintptr_t)at;
}

uint64_t kalloc_used(void) { return k_used; }
