/* paging.c - 4-level identity map with 4 KiB / 2 MiB / 1 GiB leaves and PAT-selected memory types. */
#include "kernel/paging.h"
#include "kernel/io.h"
#include "kernel/kalloc.h"
#include "kernel/msr.h"

/* Page-table entry bits (SDM Vol. 3A 4.5, Tables 4-15..4-20). */
#define PTE_P (1ULL << 0)
#define PTE_RW (1ULL << 1)
#define PTE_PWT (1ULL << 3)
#define PTE_PCD (1ULL << 4)
#define PTE_PS (1ULL << 7)      /* leaf at PDPT/PD level */
#define PTE_PAT_4K (1ULL << 7)  /* PAT index bit 2 in a 4 KiB PTE */
#define PTE_PAT_BIG (1ULL << 12) /* PAT index bit 2 in a 2 MiB / 1 GiB leaf */
#define PTE_ADDR 0x000FFFFFFFFFF000ULL

/* IA32_PAT (SDM Vol. 3A 12.12.2, layout in kernel/msr.h): one byte per index. We keep the power-on
 * meaning of indexes 0, 2, 3 (WB, UC-, UC) so firmware-era mappings stay valid, and put WC at 1 and WT
 * at 7 (Linux's layout); enum mem_cache names these indexes.
 *   PA0 WB  PA1 WC  PA2 UC-  PA3 UC  PA4 WB  PA5 WP  PA6 UC-  PA7 WT */
#define PAT_VALUE                                                                                        \
    (IA32_PAT_PA(0, IA32_PAT_MT_WB) | IA32_PAT_PA(1, IA32_PAT_MT_WC) | IA32_PAT_PA(2, IA32_PAT_MT_UC_MINUS) | \
     IA32_PAT_PA(3, IA32_PAT_MT_UC) | IA32_PAT_PA(4, IA32_PAT_MT_WB) | IA32_PAT_PA(5, IA32_PAT_MT_WP) |       \
     IA32_PAT_PA(6, IA32_PAT_MT_UC_MINUS) | IA32_PAT_PA(7, IA32_PAT_MT_WT))

static uint64_t *pml4;
static struct paging_stats st;

static uint64_t cache_bits(enum mem_cache c, bool big)
{
    unsigned idx = (unsigned)c & 7;
    uint64_t b = 0;
    if (idx & 1)
        b |= PTE_PWT;
    if (idx & 2)
        b |= PTE_PCD;
    if (idx & 4)
        b |= big ? PTE_PAT_BIG : PTE_PAT_4K;
    return b;
}

/* Table pages freed by merges are reused before asking kalloc for more, so repeated remapping of the
 * same buffer (4 KiB pages, then 2 MiB...) does not grow the scratch use. */
static uint64_t *free_tables;
static void count_leaf(uint64_t size, int delta);

static uint64_t *new_table(void)
{
    uint64_t *t = free_tables;
    if (t) {
        free_tables = (uint64_t *)(uintptr_t)t[0];
        memset(t, 0, 4096);
    } else {
        t = kalloc(4096, 4096);
    }
    if (t)
        st.table_pages++;
    return t;
}

/* Release a table that maps `size` bytes per entry, with everything below it. */
static void release_table(uint64_t *t, uint64_t entry_size)
{
    for (int i = 0; i < 512; i++) {
        if (!(t[i] & PTE_P))
            continue;
        if (entry_size > PAGE_4K && !(t[i] & PTE_PS))
            release_table((uint64_t *)(uintptr_t)(t[i] & PTE_ADDR), entry_size / 512);
        else
            count_leaf(entry_size, -1);
    }
    t[0] = (uint64_t)(uintptr_t)free_tables;
    free_tables = t;
    st.table_pages--;
}

static void count_leaf(uint64_t size, int delta)
{
    if (size == PAGE_1G)
        st.pages_1g += delta;
    else if (size == PAGE_2M)
        st.pages_2m += delta;
    else
        st.pages_4k += delta;
}

/* Returns the table one level below entry *e, splitting a large leaf of `size` into 512 leaves that
 * keep its memory type. */
static uint64_t *descend(uint64_t *e, uint64_t size)
{
    if ((*e & PTE_P) && !(*e & PTE_PS))
        return (uint64_t *)(uintptr_t)(*e & PTE_ADDR);
    uint64_t *t = new_table();
    if (!t)
        return NULL;
    if (*e & PTE_P) {
        uint64_t child = size / 512;
        bool child_big = child != PAGE_4K;
        uint64_t flags = *e & (PTE_P | PTE_RW | PTE_PWT | PTE_PCD);
        bool pat = (*e & PTE_PAT_BIG) != 0;
        uint64_t base = *e & PTE_ADDR & ~(size - 1);
        for (int i = 0; i < 512; i++) {
            t[i] = (base + i * child) | flags | (child_big ? PTE_PS : 0);
            if (pat)
                t[i] |= child_big ? PTE_PAT_BIG : PTE_PAT_4K;
        }
        count_leaf(size, -1);
        for (int i = 0; i < 512; i++)
            count_leaf(child, 1);
    }
    *e = (uint64_t)(uintptr_t)t | PTE_P | PTE_RW;
    return t;
}

static int map_one(uint64_t addr, uint64_t size, enum mem_cache cache)
{
    static const int shift[4] = {39, 30, 21, 12};
    uint64_t *t = pml4;
    for (int lvl = 0; lvl < 4; lvl++) {
        uint64_t level_size = 1ULL << shift[lvl];
        uint64_t *e = &t[(addr >> shift[lvl]) & 511];
        if (level_size == size) {
            bool big = size != PAGE_4K;
            if (*e & PTE_P) {
                if (big && !(*e & PTE_PS))
                    release_table((uint64_t *)(uintptr_t)(*e & PTE_ADDR), size / 512); /* merge */
                else
                    count_leaf(size, -1);
            }
            *e = addr | PTE_P | PTE_RW | (big ? PTE_PS : 0) | cache_bits(cache, big);
            count_leaf(size, 1);
            return 0;
        }
        t = descend(e, level_size);
        if (!t)
            return -1;
    }
    return -1;
}

int paging_map(uint64_t base, uint64_t len, uint64_t page_size, enum mem_cache cache)
{
    if (page_size != PAGE_4K && page_size != PAGE_2M && page_size != PAGE_1G)
        return -1;
    if (page_size == PAGE_1G && !st.have_1g)
        return -1;
    if ((base | len) & (page_size - 1))
        return -1;
    for (uint64_t a = base; a < base + len; a += page_size) {
        if (map_one(a, page_size, cache) != 0)
            return -1;
    }
    if (pml4)
        write_cr3(read_cr3()); /* flush non-global TLB entries */
    return 0;
}

int paging_init(uint64_t top, bool have_1g)
{
    memset(&st, 0, sizeof(st));
    st.have_1g = have_1g;
    st.default_page = have_1g ? PAGE_1G : PAGE_2M;
    pml4 = new_table();
    if (!pml4)
        return -1;
    top = ALIGN_UP(top, st.default_page);
    st.mapped_top = top;
    for (uint64_t a = 0; a < top; a += st.default_page) {
        if (map_one(a, st.default_page, CACHE_WB) != 0)
            return -1;
    }
    /* First 2 MiB in 4 KiB pages with page 0 absent: a NULL dereference faults instead of reading
     * the real-mode IVT. */
    if (map_one(0, PAGE_4K, CACHE_WB) != 0)
        return -1;
    uint64_t *pdpt = (uint64_t *)(uintptr_t)(pml4[0] & PTE_ADDR);
    uint64_t *pd = (uint64_t *)(uintptr_t)(pdpt[0] & PTE_ADDR);
    uint64_t *pt = (uint64_t *)(uintptr_t)(pd[0] & PTE_ADDR);
    pt[0] = 0;
    st.pages_4k--;

    /* PAT must be programmed before any mapping uses indexes 1 or 7. */
    st.pat = PAT_VALUE;
    wrmsr_safe(MSR_IA32_PAT, PAT_VALUE);
    write_cr3((uint64_t)(uintptr_t)pml4);
    return 0;
}

int paging_unmap_4k(uint64_t addr)
{
    static const int shift[4] = {39, 30, 21, 12};
    if ((addr & (PAGE_4K - 1)) || !pml4 || map_one(addr, PAGE_4K, CACHE_WB) != 0)
        return -1;
    uint64_t *t = pml4;
    for (int lvl = 0; lvl < 3; lvl++)
        t = (uint64_t *)(uintptr_t)(t[(addr >> shift[lvl]) & 511] & PTE_ADDR);
    t[(addr >> 12) & 511] = 0;
    count_leaf(PAGE_4K, -1);
    write_cr3(read_cr3());
    return 0;
}

uint64_t paging_page_size(uint64_t addr)
{
    static const int shift[4] = {39, 30, 21, 12};
    uint64_t *t = pml4;
    for (int lvl = 0; lvl < 4 && t; lvl++) {
        uint64_t e = t[(addr >> shift[lvl]) & 511];
        if (!(e & PTE_P))
            return 0;
        if (lvl == 3 || (e & PTE_PS))
            return 1ULL << shift[lvl];
        t = (uint64_t *)(uintptr_t)(e & PTE_ADDR);
    }
    return 0;
}

const struct paging_stats *paging_stats(void) { return &st; }
