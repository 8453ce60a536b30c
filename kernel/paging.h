/* paging.h - the kernel's own identity-mapped page tables, page size per region, PAT memory types. */
#ifndef PMB_PAGING_H
#define PMB_PAGING_H

#include "kernel/klib.h"

#define PAGE_4K KiB(4)
#define PAGE_2M MiB(2)
#define PAGE_1G GiB(1)

/* Memory types through the PAT index we program (see paging.c for the PAT layout). */
enum mem_cache { CACHE_WB = 0, CACHE_WC = 1, CACHE_UC_MINUS = 2, CACHE_UC = 3, CACHE_WT = 7 };

struct paging_stats {
    uint64_t mapped_top;     /* identity map covers [0, mapped_top) except page 0 */
    uint64_t default_page;   /* 1 GiB when CPUID says so, else 2 MiB */
    uint64_t pages_1g, pages_2m, pages_4k;
    uint64_t table_pages;    /* page-table pages allocated */
    uint64_t pat;            /* IA32_PAT value programmed */
    bool have_1g;
};

/* Build the identity map of [0, top) and switch CR3 to it. Page 0 stays unmapped (NULL traps). */
int paging_init(uint64_t top, bool have_1g);
/* Remap [base, base+len) with the given page size (4K/2M/1G) and memory type; splits larger pages as
 * needed. Base and len must be aligned to page_size. Flushes the TLB. Returns 0 or -1. */
int paging_map(uint64_t base, uint64_t len, uint64_t page_size, enum mem_cache cache);
/* Makes the 4 KiB page at addr (aligned) absent, splitting a larger page: a guard page, so that an access to it
 * faults (a stack growing into it). Flushes this CPU's TLB. 0 or -1. */
int paging_unmap_4k(uint64_t addr);
/* Page size currently mapping `addr` (0 if unmapped). */
uint64_t paging_page_size(uint64_t addr);
const struct paging_stats *paging_stats(void);

#endif
