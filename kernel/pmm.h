/* pmm.h - physical memory allocator over the UEFI memory map: aligned contiguous ranges per NUMA node. */
#ifndef PMB_PMM_H
#define PMB_PMM_H

#include "kernel/klib.h"
#include "kernel/boot_info.h"

/* Capacities (fixed storage inside struct pmm; see docs/memory.md "Limits"). */
#define PMM_MAX_RANGES 1024     /* free ranges */
#define PMM_MAX_MAP 1024        /* RAM/MMIO ranges kept for the paging code */
#define PMM_MAX_NODE_RANGES 128 /* SRAT memory affinity ranges */
#define PMM_MAX_NODES 64        /* node ids 0..63 */
#define PMM_MAX_RECORDS 256     /* exclusion/allocation records */
#define PMM_WHY_LEN 24          /* record label, NUL included (longer labels are cut) */

#define PMM_PAGE 4096ULL
#define PMM_LOW_LIMIT MiB(1)              /* ordinary allocations never return memory below this */
#define PMM_PHYS_LIMIT (1ULL << 52)       /* architectural MAXPHYADDR ceiling (SDM Vol. 3A 4.1.4) */

/* UEFI EFI_MEMORY_DESCRIPTOR.Attribute bits that make memory unusable whatever its type
 * (UEFI spec 2.10, 7.2 GetMemoryMap): runtime-mapped, and "specific purpose" (soft-reserved). */
#define PMM_EFI_MEMORY_SP 0x0000000000040000ULL
#define PMM_EFI_MEMORY_RUNTIME 0x8000000000000000ULL

/* Error codes (negative returns). */
enum {
    PMM_OK = 0,
    PMM_EINVAL = -1,   /* bad argument (size 0, overflow, bad node id, unaligned base...) */
    PMM_EALIGN = -2,   /* alignment not a power of two >= 4096 */
    PMM_ENOMEM = -3,   /* no free range fits the request */
    PMM_ENONODE = -4,  /* the requested node has no memory at all */
    PMM_EFULL = -5,    /* the free-range or map table is full */
    PMM_ERECFULL = -6, /* the record table is full */
    PMM_ENOTALLOC = -7, /* pmm_free of memory not allocated here (or already freed) */
    PMM_EEXCLUDED = -8, /* pmm_free of memory that overlaps an exclusion */
    PMM_ESTATE = -9,   /* pmm_add_from_uefi called twice */
};

/* One free range, as reported by pmm_ranges. */
struct pmm_range {
    uint64_t base, len;
    int node;
};

/* One SRAT memory affinity range, input to pmm_set_nodes. */
struct pmm_node_range {
    uint64_t base, len;
    int node;
};

/* What the paging code must map: RAM (write-back) or MMIO (uncacheable). */
enum { PMM_MAP_RAM = 1, PMM_MAP_MMIO = 2 };
struct pmm_map_range {
    uint64_t base, len;
    int kind; /* PMM_MAP_* */
};

/* Exclusion/allocation record, for the memory record. */
enum { PMM_REC_EXCLUDE = 1, PMM_REC_ALLOC = 2 };
struct pmm_record {
    uint64_t base, len;
    int node; /* node of the first byte at the time of the call */
    int kind; /* PMM_REC_* */
    char why[PMM_WHY_LEN];
};

/* Internal: a half-open interval [base, end) with a tag (node id or map kind). */
struct pmm_span {
    uint64_t base, end;
    int32_t tag;
};

struct pmm {
    uint32_t nfree, nmap, nnodes, nrec;
    bool map_added;
    uint32_t rec_dropped;  /* exclusion records that did not fit (the exclusion itself was applied) */
    uint64_t lost_bytes;   /* free memory given up because a split did not fit the table */
    struct pmm_span free[PMM_MAX_RANGES];     /* sorted, disjoint, adjacent spans differ in node */
    struct pmm_span map[PMM_MAX_MAP];         /* sorted, disjoint, tag = PMM_MAP_* */
    struct pmm_span nodes[PMM_MAX_NODE_RANGES]; /* sorted, disjoint, tag = node */
    struct pmm_record rec[PMM_MAX_RECORDS];
};

void pmm_init(struct pmm *p);

/* Take the usable memory of a UEFI memory map (types 3, 4, 7 without the RUNTIME/SP attributes),
 * minus every page that any other entry claims, minus page 0. Entries may be unsorted, overlapping
 * or unaligned. Call once. Returns 0 or PMM_E*; on PMM_EFULL the free set is still a subset of usable memory. */
int pmm_add_from_uefi(struct pmm *p, const struct boot_mmap_entry *m, size_t n);

/* Never hand out [base, base+len) (rounded out to pages). The carve is always applied; returns
 * PMM_EFULL if a split did not fit (the smaller side was given up), PMM_ERECFULL if not recorded. */
int pmm_exclude(struct pmm *p, uint64_t base, uint64_t len, const char *why);

/* Tag memory with NUMA nodes from SRAT; memory no range covers is node 0. Ranges must be disjoint.
 * May be called before or after pmm_add_from_uefi; a later call replaces the earlier one. */
int pmm_set_nodes(struct pmm *p, const struct pmm_node_range *r, size_t n);

/* Contiguous, aligned allocation at or above 1 MiB: the lowest address that fits on `node`
 * (-1 = any node). size is rounded up to 4 KiB; align is a power of two >= 4096. */
int pmm_alloc(struct pmm *p, uint64_t size, uint64_t align, int node, uint64_t *out_phys);
/* Same, with a label for the memory record (pmm_alloc uses "alloc"). */
int pmm_alloc_tagged(struct pmm *p, uint64_t size, uint64_t align, int node, const char *why,
                     uint64_t *out_phys);
/* Allocation entirely below 1 MiB (e.g. a real-mode trampoline); lowest address first, any node. */
int pmm_alloc_low(struct pmm *p, uint64_t size, uint64_t align, const char *why, uint64_t *out_phys);

/* Give back [base, base+size) (size rounded up to 4 KiB); it must lie inside one allocation record. */
int pmm_free(struct pmm *p, uint64_t base, uint64_t size);

/* Accounting; node -1 = all nodes. total = free + allocated (exclusions are not counted). */
uint64_t pmm_total_bytes(const struct pmm *p, int node);
uint64_t pmm_free_bytes(const struct pmm *p, int node);
/* Largest size pmm_alloc(size, align, node) would succeed with now (0 if none or bad align). */
uint64_t pmm_largest_free(const struct pmm *p, int node, uint64_t align);

/* Copy up to max entries to out (out may be NULL when max is 0); return the total count. */
size_t pmm_ranges(const struct pmm *p, struct pmm_range *out, size_t max);
size_t pmm_records(const struct pmm *p, struct pmm_record *out, size_t max);
/* Every range the kernel must identity-map: all RAM types (usable, loader, boot services, runtime,
 * ACPI, persistent, PAL) as PMM_MAP_RAM and MMIO/MMIO-port entries as PMM_MAP_MMIO (MMIO wins on overlap).
 * Reserved and unusable entries are not listed: device windows from ACPI (LAPIC, ECAM) are mapped by their users. */
size_t pmm_map_ranges(const struct pmm *p, struct pmm_map_range *out, size_t max);
/* End (exclusive) of the highest RAM range in the map; 0 before pmm_add_from_uefi. */
uint64_t pmm_ram_top(const struct pmm *p);
/* End (exclusive) of the highest usable (free or allocated) memory. */
uint64_t pmm_usable_ram_top(const struct pmm *p);
/* Node of a physical address by the SRAT ranges given (0 where none covers it). */
int pmm_node_of(const struct pmm *p, uint64_t phys);

const char *pmm_strerror(int err);

#endif
