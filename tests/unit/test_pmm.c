/* test_pmm.c - host tests for the physical memory allocator (kernel/pmm.c). */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include "kernel/pmm.h"

#define PG 4096ULL
#define E(t, ph, np) { .type = (t), .phys = (ph), .pages = (np), .attr = 0 }

/* A static pool (not malloc) so that a failing assertion, which longjmps out, leaks nothing. */
static struct pmm g_pool[2];
static unsigned g_next;

static struct pmm *new_pmm(void)
{
    struct pmm *p = &g_pool[g_next++ % ARRAY_SIZE(g_pool)];
    memset(p, 0xA5, sizeof(*p)); /* pmm_init must not rely on zeroed storage */
    pmm_init(p);
    return p;
}

static struct pmm_range g_ranges[PMM_MAX_RANGES + 8];

/* Structural invariants of the free set, through the public iterator. */
static size_t check_invariants(const struct pmm *p)
{
    size_t n = pmm_ranges(p, g_ranges, ARRAY_SIZE(g_ranges));
    assert_true(n <= PMM_MAX_RANGES);
    for (size_t k = 0; k < n; k++) {
        const struct pmm_range *r = &g_ranges[k];
        assert_true(r->len > 0);
        assert_int_equal(r->base % PG, 0);
        assert_int_equal(r->len % PG, 0);
        assert_true(r->base >= PG); /* page 0 never free */
        assert_true(r->node >= 0 && r->node < PMM_MAX_NODES);
        if (k) {
            const struct pmm_range *q = &g_ranges[k - 1];
            assert_true(q->base + q->len <= r->base);
            if (q->base + q->len == r->base)
                assert_int_not_equal(q->node, r->node); /* equal neighbours must have merged */
        }
    }
    return n;
}

static bool is_free(const struct pmm *p, uint64_t b, uint64_t e)
{
    size_t n = pmm_ranges(p, g_ranges, ARRAY_SIZE(g_ranges));
    for (size_t k = 0; k < n; k++)
        if (g_ranges[k].base <= b && e <= g_ranges[k].base + g_ranges[k].len)
            return true;
    return false;
}

static bool any_free(const struct pmm *p, uint64_t b, uint64_t e)
{
    size_t n = pmm_ranges(p, g_ranges, ARRAY_SIZE(g_ranges));
    for (size_t k = 0; k < n; k++)
        if (g_ranges[k].base < e && b < g_ranges[k].base + g_ranges[k].len)
            return true;
    return false;
}

/* An OVMF-like map, deliberately unsorted. */
static const struct boot_mmap_entry ovmf_map[] = {
    E(BOOT_MEM_LOADER_CODE, 0x3E000000, 0x100),   /* our image */
    E(BOOT_MEM_BS_CODE, 0x0, 1),                  /* page 0 */
    E(BOOT_MEM_CONVENTIONAL, 0x1000, 0x9F),       /* 4K..640K */
    E(BOOT_MEM_RESERVED, 0xA0000, 0x60),          /* legacy VGA/ROM */
    E(BOOT_MEM_CONVENTIONAL, 0x100000, 0x700),    /* 1M..8M */
    E(BOOT_MEM_ACPI_NVS, 0x800000, 0x8),
    E(BOOT_MEM_CONVENTIONAL, 0x808000, 0x8),
    E(BOOT_MEM_BS_DATA, 0x810000, 0xF0),          /* ..9M, free after ExitBootServices */
    E(BOOT_MEM_CONVENTIONAL, 0x900000, 0x3D700),  /* 9M..0x3E000000 */
    E(BOOT_MEM_LOADER_DATA, 0x3E100000, 0x100),   /* stacks, boot_info */
    E(BOOT_MEM_RT_DATA, 0x3E200000, 0x80),
    E(BOOT_MEM_RT_CODE, 0x3E280000, 0x80),
    E(BOOT_MEM_ACPI_RECLAIM, 0x3E300000, 0x10),
    E(BOOT_MEM_CONVENTIONAL, 0x3E310000, 0x1CF0), /* ..0x40000000 */
    E(BOOT_MEM_MMIO, 0xFFC00000, 0x400),          /* flash */
    E(BOOT_MEM_CONVENTIONAL, 0x100000000, 0x40000), /* 4G..5G */
};

static void test_ovmf_map(void **state)
{
    (void)state;
    struct pmm *p = new_pmm();
    assert_int_equal(pmm_add_from_uefi(p, ovmf_map, ARRAY_SIZE(ovmf_map)), PMM_OK);
    size_t n = check_invariants(p);
    static const struct { uint64_t b, e; } want[] = {
        { 0x1000, 0xA0000 }, { 0x100000, 0x800000 }, { 0x808000, 0x3E000000 },
        { 0x3E310000, 0x40000000 }, { 0x100000000, 0x140000000 },
    };
    assert_int_equal(n, ARRAY_SIZE(want));
    for (size_t k = 0; k < n; k++) {
        assert_int_equal(g_ranges[k].base, want[k].b);
        assert_int_equal(g_ranges[k].base + g_ranges[k].len, want[k].e);
        assert_int_equal(g_ranges[k].node, 0);
    }
    uint64_t sum = 0;
    for (size_t k = 0; k < ARRAY_SIZE(want); k++)
        sum += want[k].e - want[k].b;
    assert_int_equal(pmm_free_bytes(p, -1), sum);
    assert_int_equal(pmm_total_bytes(p, -1), sum);
    assert_int_equal(pmm_total_bytes(p, 0), sum);
    assert_int_equal(pmm_total_bytes(p, 1), 0);
    assert_int_equal(pmm_usable_ram_top(p), 0x140000000);
    assert_int_equal(pmm_ram_top(p), 0x140000000);
    /* A second map is refused, and changes nothing. */
    assert_int_equal(pmm_add_from_uefi(p, ovmf_map, ARRAY_SIZE(ovmf_map)), PMM_ESTATE);
    assert_int_equal(pmm_free_bytes(p, -1), sum);
}

static void test_map_ranges(void **state)
{
    (void)state;
    struct pmm *p = new_pmm();
    struct boot_mmap_entry m[] = {
        E(BOOT_MEM_CONVENTIONAL, 0x100000, 0x100),   /* 1M..2M */
        E(BOOT_MEM_LOADER_DATA, 0x200000, 0x100),    /* touching RAM: merges */
        E(BOOT_MEM_RESERVED, 0x300000, 0x100),       /* not listed */
        E(BOOT_MEM_ACPI_NVS, 0x400000, 0x10),
        E(BOOT_MEM_MMIO, 0x404000, 0x4),             /* MMIO inside RAM wins */
        E(BOOT_MEM_UNUSABLE, 0x500000, 0x10),        /* not listed */
        E(BOOT_MEM_MMIO_PORT, 0xFEC00000, 1),
        E(BOOT_MEM_PERSISTENT, 0x200000000, 0x100),
        E(99, 0x300000000, 0x100),                   /* unknown/OEM type: not listed */
    };
    assert_int_equal(pmm_add_from_uefi(p, m, ARRAY_SIZE(m)), PMM_OK);
    struct pmm_map_range r[16];
    size_t n = pmm_map_ranges(p, r, ARRAY_SIZE(r));
    static const struct pmm_map_range want[] = {
        { 0x100000, 0x200000, PMM_MAP_RAM }, { 0x400000, 0x4000, PMM_MAP_RAM },
        { 0x404000, 0x4000, PMM_MAP_MMIO }, { 0x408000, 0x8000, PMM_MAP_RAM },
        { 0xFEC00000, 0x1000, PMM_MAP_MMIO }, { 0x200000000, 0x100000, PMM_MAP_RAM },
    };
    assert_int_equal(n, ARRAY_SIZE(want));
    for (size_t k = 0; k < n; k++) {
        assert_int_equal(r[k].base, want[k].base);
        assert_int_equal(r[k].len, want[k].len);
        assert_int_equal(r[k].kind, want[k].kind);
    }
    assert_int_equal(pmm_map_ranges(p, NULL, 0), n);
    assert_int_equal(pmm_ram_top(p), 0x200100000);
    /* Only the conventional part is free. */
    assert_int_equal(pmm_free_bytes(p, -1), 0x100000);
}

static void test_alignment(void **state)
{
    (void)state;
    struct pmm *p = new_pmm();
    /* Starts just past 1 MiB, so no alignment is free; runs to 5 GiB. */
    struct boot_mmap_entry m[] = { E(BOOT_MEM_CONVENTIONAL, 0x103000, (GiB(5) - 0x103000) / PG) };
    assert_int_equal(pmm_add_from_uefi(p, m, 1), PMM_OK);
    uint64_t a;
    assert_int_equal(pmm_alloc(p, 1, PG, -1, &a), PMM_OK); /* size rounds up to a page */
    assert_int_equal(a, 0x103000);
    assert_int_equal(pmm_alloc(p, MiB(2), MiB(2), -1, &a), PMM_OK);
    assert_int_equal(a, MiB(2));
    assert_int_equal(pmm_alloc(p, GiB(1), GiB(1), -1, &a), PMM_OK);
    assert_int_equal(a, GiB(1));
    assert_int_equal(pmm_alloc(p, MiB(3), MiB(2), -1, &a), PMM_OK); /* odd size, 2M aligned */
    assert_int_equal(a, MiB(4));
    assert_int_equal(pmm_alloc(p, GiB(2), GiB(1), -1, &a), PMM_OK);
    assert_int_equal(a, GiB(2));
    /* The holes left by alignment are used by later small requests, lowest first. */
    assert_int_equal(pmm_alloc(p, PG, PG, -1, &a), PMM_OK);
    assert_int_equal(a, 0x104000);
    assert_int_equal(pmm_alloc(p, MiB(1), MiB(1), -1, &a), PMM_OK);
    assert_int_equal(a, MiB(7));
    /* 4G..5G left: one more 1G fits exactly, then none. */
    assert_int_equal(pmm_largest_free(p, -1, GiB(1)), GiB(1));
    assert_int_equal(pmm_alloc(p, GiB(1), GiB(1), -1, &a), PMM_OK);
    assert_int_equal(a, GiB(4));
    assert_int_equal(pmm_alloc(p, GiB(1), GiB(1), -1, &a), PMM_ENOMEM);
    assert_int_equal(pmm_largest_free(p, -1, GiB(1)), 0);
    check_invariants(p);
    /* Bad alignments. */
    assert_int_equal(pmm_alloc(p, PG, 0, -1, &a), PMM_EALIGN);
    assert_int_equal(pmm_alloc(p, PG, 2048, -1, &a), PMM_EALIGN);
    assert_int_equal(pmm_alloc(p, PG, 3 * PG, -1, &a), PMM_EALIGN);
    assert_int_equal(pmm_largest_free(p, -1, 3 * PG), 0);
    /* Huge alignment: no overflow, just no fit. */
    assert_int_equal(pmm_alloc(p, PG, 1ULL << 63, -1, &a), PMM_ENOMEM);
}

static void test_bad_args(void **state)
{
    (void)state;
    struct pmm *p = new_pmm();
    uint64_t a = 0x1234;
    assert_int_equal(pmm_alloc(p, PG, PG, -1, &a), PMM_ENOMEM); /* empty */
    assert_int_equal(pmm_add_from_uefi(p, NULL, 3), PMM_EINVAL);
    struct boot_mmap_entry m[] = { E(BOOT_MEM_CONVENTIONAL, MiB(1), 0x1000) };
    assert_int_equal(pmm_add_from_uefi(p, m, 1), PMM_OK);
    uint64_t before = pmm_free_bytes(p, -1);
    assert_int_equal(pmm_alloc(p, 0, PG, -1, &a), PMM_EINVAL);
    assert_int_equal(pmm_alloc(p, UINT64_MAX, PG, -1, &a), PMM_EINVAL);
    assert_int_equal(pmm_alloc(p, UINT64_MAX - 100, PG, -1, &a), PMM_EINVAL);
    assert_int_equal(pmm_alloc(p, PG, PG, -1, NULL), PMM_EINVAL);
    assert_int_equal(pmm_alloc(p, PG, PG, -2, &a), PMM_EINVAL);
    assert_int_equal(pmm_alloc(p, PG, PG, PMM_MAX_NODES, &a), PMM_EINVAL);
    assert_int_equal(pmm_alloc(p, MiB(17), PG, -1, &a), PMM_ENOMEM);
    assert_int_equal(a, 0x1234); /* untouched on failure */
    assert_int_equal(pmm_free(p, MiB(1) + 1, PG), PMM_EINVAL);
    assert_int_equal(pmm_free(p, MiB(1), 0), PMM_EINVAL);
    assert_int_equal(pmm_free(p, UINT64_MAX & ~(PG - 1), PG), PMM_EINVAL);
    assert_int_equal(pmm_free(p, MiB(1), PG), PMM_ENOTALLOC); /* free memory was never allocated */
    assert_int_equal(pmm_free_bytes(p, -1), before);
    struct pmm_node_range bad1[] = { { 0, 0, 0 } };
    struct pmm_node_range bad2[] = { { 0, GiB(1), -1 } };
    struct pmm_node_range bad3[] = { { 0, GiB(1), PMM_MAX_NODES } };
    struct pmm_node_range bad4[] = { { 0, GiB(1), 0 }, { MiB(512), GiB(1), 1 } }; /* overlap */
    struct pmm_node_range bad5[] = { { GiB(1), UINT64_MAX, 1 } };
    assert_int_equal(pmm_set_nodes(p, bad1, 1), PMM_EINVAL);
    assert_int_equal(pmm_set_nodes(p, bad2, 1), PMM_EINVAL);
    assert_int_equal(pmm_set_nodes(p, bad3, 1), PMM_EINVAL);
    assert_int_equal(pmm_set_nodes(p, bad4, 2), PMM_EINVAL);
    assert_int_equal(pmm_set_nodes(p, bad5, 1), PMM_EINVAL);
    assert_int_equal(pmm_set_nodes(p, NULL, 1), PMM_EINVAL);
    assert_int_equal(pmm_set_nodes(p, bad4, PMM_MAX_NODE_RANGES + 1), PMM_EFULL);
    assert_int_equal(pmm_total_bytes(p, 0), before); /* rejected calls left node 0 as it was */
}

static void test_low_memory(void **state)
{
    (void)state;
    struct pmm *p = new_pmm();
    struct boot_mmap_entry m[] = {
        E(BOOT_MEM_CONVENTIONAL, 0, 0x9F),          /* 0..636K, page 0 included */
        E(BOOT_MEM_CONVENTIONAL, 0xFF000, 0x2),     /* straddles 1 MiB: 0xFF000..0x101000 */
    };
    assert_int_equal(pmm_add_from_uefi(p, m, ARRAY_SIZE(m)), PMM_OK);
    assert_false(any_free(p, 0, PG));
    uint64_t a;
    /* Ordinary allocations only see the one page at 1 MiB. */
    assert_int_equal(pmm_largest_free(p, -1, PG), PG);
    assert_int_equal(pmm_alloc(p, PG, PG, -1, &a), PMM_OK);
    assert_int_equal(a, MiB(1));
    assert_int_equal(pmm_alloc(p, PG, PG, -1, &a), PMM_ENOMEM);
    assert_int_equal(pmm_alloc(p, PG, PG, 0, &a), PMM_ENOMEM); /* node 0 has memory, just not above 1M */
    /* Low allocations: lowest page above 0, and never crossing 1 MiB. */
    assert_int_equal(pmm_alloc_low(p, PG, PG, "trampoline", &a), PMM_OK);
    assert_int_equal(a, PG);
    assert_int_equal(pmm_alloc_low(p, 2 * PG, 2 * PG, "x", &a), PMM_OK);
    assert_int_equal(a, 2 * PG);
    assert_int_equal(pmm_alloc_low(p, 2 * PG, PG, "x", &a), PMM_OK);
    assert_int_equal(a, 4 * PG);
    uint64_t left = pmm_free_bytes(p, -1);
    assert_int_equal(left, 0x9F000 - 6 * PG + PG);
    assert_int_equal(pmm_alloc_low(p, MiB(1), PG, "x", &a), PMM_ENOMEM);
    for (;;) {
        int rc = pmm_alloc_low(p, PG, PG, "x", &a);
        if (rc)
            break;
        assert_true(a >= PG && a + PG <= MiB(1));
    }
    assert_int_equal(pmm_free_bytes(p, -1), 0);
    check_invariants(p);
}

static void test_nodes(void **state)
{
    (void)state;
    struct pmm *p = new_pmm();
    struct boot_mmap_entry m[] = { E(BOOT_MEM_CONVENTIONAL, MiB(1), (GiB(3) - MiB(1)) / PG),
                                   E(BOOT_MEM_CONVENTIONAL, GiB(4), GiB(2) / PG) };
    assert_int_equal(pmm_add_from_uefi(p, m, ARRAY_SIZE(m)), PMM_OK);
    /* Node 1 owns 2G..5G; 5G..6G is covered by no range: node 0. */
    struct pmm_node_range nr[] = { { GiB(2), GiB(3), 1 }, { 0, GiB(2), 0 } };
    assert_int_equal(pmm_set_nodes(p, nr, ARRAY_SIZE(nr)), PMM_OK);
    size_t n = check_invariants(p);
    assert_int_equal(n, 4);
    assert_int_equal(g_ranges[0].base, MiB(1));
    assert_int_equal(g_ranges[0].len, GiB(2) - MiB(1));
    assert_int_equal(g_ranges[0].node, 0);
    assert_int_equal(g_ranges[1].base, GiB(2));
    assert_int_equal(g_ranges[1].len, GiB(1));
    assert_int_equal(g_ranges[1].node, 1);
    assert_int_equal(g_ranges[2].base, GiB(4));
    assert_int_equal(g_ranges[2].node, 1);
    assert_int_equal(g_ranges[3].base, GiB(5));
    assert_int_equal(g_ranges[3].node, 0);
    assert_int_equal(pmm_total_bytes(p, 1), GiB(2));
    assert_int_equal(pmm_total_bytes(p, 0), GiB(3) - MiB(1));
    assert_int_equal(pmm_node_of(p, GiB(2) - 1), 0);
    assert_int_equal(pmm_node_of(p, GiB(2)), 1);
    assert_int_equal(pmm_node_of(p, GiB(5)), 0);

    uint64_t a;
    /* 1M..3G is contiguous but split at the node boundary: nothing spans it, even with node -1. */
    assert_int_equal(pmm_largest_free(p, -1, PG), GiB(2) - MiB(1));
    assert_int_equal(pmm_alloc(p, GiB(2), PG, -1, &a), PMM_ENOMEM);
    assert_int_equal(pmm_alloc(p, MiB(2), MiB(2), 1, &a), PMM_OK);
    assert_int_equal(a, GiB(2));
    assert_int_equal(pmm_alloc(p, MiB(2), MiB(2), 0, &a), PMM_OK);
    assert_int_equal(a, MiB(2));
    assert_int_equal(pmm_alloc(p, GiB(1), GiB(1), 0, &a), PMM_OK);
    assert_int_equal(a, GiB(1));
    assert_int_equal(pmm_alloc(p, GiB(1), GiB(1), 0, &a), PMM_OK); /* only 5G..6G is left on node 0 */
    assert_int_equal(a, GiB(5));
    assert_int_equal(pmm_alloc(p, GiB(1), GiB(1), 1, &a), PMM_OK); /* 2G..3G is partly used: 4G */
    assert_int_equal(a, GiB(4));
    assert_int_equal(pmm_alloc(p, PG, PG, 7, &a), PMM_ENONODE);
    assert_int_equal(pmm_largest_free(p, 7, PG), 0);
    /* Accounting: totals per node are unchanged by allocation. */
    assert_int_equal(pmm_total_bytes(p, 1), GiB(2));
    assert_int_equal(pmm_total_bytes(p, 0), GiB(3) - MiB(1));
    assert_int_equal(pmm_free_bytes(p, 1), GiB(1) - MiB(2));
    /* Node 1 exhausted by a 1G request, node 0 still has memory: ENOMEM, not ENONODE. */
    assert_int_equal(pmm_alloc(p, GiB(1), PG, 1, &a), PMM_ENOMEM);
    /* Replacing the node table retags the free set and merges equal neighbours. */
    assert_int_equal(pmm_set_nodes(p, NULL, 0), PMM_OK);
    n = check_invariants(p);
    for (size_t k = 0; k < n; k++)
        assert_int_equal(g_ranges[k].node, 0);
    assert_int_equal(pmm_free_bytes(p, 0), pmm_free_bytes(p, -1));
}

static void test_nodes_before_map(void **state)
{
    (void)state;
    struct pmm *a = new_pmm(), *b = new_pmm();
    struct boot_mmap_entry m[] = { E(BOOT_MEM_CONVENTIONAL, MiB(1), 0x10000),
                                   E(BOOT_MEM_RT_DATA, MiB(20), 0x100) };
    struct pmm_node_range nr[] = { { MiB(16), MiB(16), 1 }, { MiB(40), MiB(8), 2 }, { MiB(48), MiB(8), 2 } };
    assert_int_equal(pmm_set_nodes(a, nr, ARRAY_SIZE(nr)), PMM_OK);
    assert_int_equal(pmm_add_from_uefi(a, m, ARRAY_SIZE(m)), PMM_OK);
    assert_int_equal(pmm_add_from_uefi(b, m, ARRAY_SIZE(m)), PMM_OK);
    assert_int_equal(pmm_set_nodes(b, nr, ARRAY_SIZE(nr)), PMM_OK);
    struct pmm_range ra[16], rb[16];
    size_t na = pmm_ranges(a, ra, 16), nb = pmm_ranges(b, rb, 16);
    assert_int_equal(na, nb);
    for (size_t k = 0; k < na; k++) {
        assert_int_equal(ra[k].base, rb[k].base);
        assert_int_equal(ra[k].len, rb[k].len);
        assert_int_equal(ra[k].node, rb[k].node);
    }
    /* 1M..16M n0, 16M..20M n1, 21M..32M n1, 32M..40M n0, 40M..56M n2 (touching ranges merged), 56M..65M n0 */
    assert_int_equal(na, 6);
    assert_int_equal(ra[4].base, MiB(40));
    assert_int_equal(ra[4].len, MiB(16));
    assert_int_equal(ra[4].node, 2);
    assert_int_equal(pmm_total_bytes(a, 2), MiB(16));
}

static void test_exclude(void **state)
{
    (void)state;
    struct pmm *p = new_pmm();
    struct boot_mmap_entry m[] = { E(BOOT_MEM_CONVENTIONAL, MiB(1), MiB(15) / PG),   /* 1M..16M */
                                   E(BOOT_MEM_CONVENTIONAL, MiB(32), MiB(16) / PG) }; /* 32M..48M */
    assert_int_equal(pmm_add_from_uefi(p, m, ARRAY_SIZE(m)), PMM_OK);
    uint64_t total = pmm_free_bytes(p, -1);
    assert_int_equal(pmm_exclude(p, MiB(1), PG, "start"), PMM_OK);         /* left edge */
    assert_int_equal(pmm_exclude(p, MiB(16) - PG, PG, "end"), PMM_OK);     /* right edge */
    assert_int_equal(pmm_exclude(p, MiB(4) + 10, 100, "middle"), PMM_OK);  /* rounds out to one page */
    assert_int_equal(pmm_exclude(p, MiB(15), MiB(18), "across"), PMM_OK);  /* across the gap */
    assert_int_equal(pmm_exclude(p, GiB(100), MiB(1), "outside"), PMM_OK); /* nothing there: recorded */
    assert_int_equal(pmm_exclude(p, MiB(8), 0, "empty"), PMM_OK);
    assert_int_equal(pmm_exclude(p, UINT64_MAX - 10, 100, "wrap"), PMM_OK);
    assert_int_equal(pmm_exclude(p, GiB(1), UINT64_MAX, "huge"), PMM_OK);   /* clipped, no overflow */
    check_invariants(p);
    assert_false(any_free(p, MiB(1), MiB(1) + PG));
    assert_true(is_free(p, MiB(1) + PG, MiB(4)));
    assert_false(any_free(p, MiB(4), MiB(4) + PG));
    assert_true(is_free(p, MiB(4) + PG, MiB(15)));
    assert_false(any_free(p, MiB(15), MiB(33)));
    assert_true(is_free(p, MiB(33), MiB(48)));
    assert_int_equal(pmm_free_bytes(p, -1), total - 3 * PG - (MiB(1) - PG) - MiB(1));
    assert_int_equal(pmm_total_bytes(p, -1), pmm_free_bytes(p, -1)); /* exclusions are not counted */

    struct pmm_record r[16];
    size_t n = pmm_records(p, r, 16);
    assert_int_equal(n, 6);
    assert_string_equal(r[0].why, "start");
    assert_int_equal(r[0].kind, PMM_REC_EXCLUDE);
    assert_int_equal(r[2].base, MiB(4));
    assert_int_equal(r[2].len, PG);
    assert_string_equal(r[4].why, "outside");

    /* Allocations never come from excluded memory, and freeing into it is refused. */
    uint64_t a;
    assert_int_equal(pmm_alloc(p, PG, PG, -1, &a), PMM_OK);
    assert_int_equal(a, MiB(1) + PG);
    assert_int_equal(pmm_free(p, MiB(4), PG), PMM_EEXCLUDED);
    /* Excluding an allocated page: its later free is refused too. */
    assert_int_equal(pmm_exclude(p, a, PG, "late"), PMM_OK);
    assert_int_equal(pmm_free(p, a, PG), PMM_EEXCLUDED);
    assert_false(any_free(p, a, a + PG));
}

static void test_exclude_before_map(void **state)
{
    (void)state;
    struct pmm *p = new_pmm();
    assert_int_equal(pmm_exclude(p, MiB(2), MiB(1), "early"), PMM_OK);
    struct boot_mmap_entry m[] = { E(BOOT_MEM_CONVENTIONAL, MiB(1), MiB(3) / PG) };
    assert_int_equal(pmm_add_from_uefi(p, m, 1), PMM_OK);
    assert_false(any_free(p, MiB(2), MiB(3)));
    assert_int_equal(pmm_free_bytes(p, -1), MiB(2));
}

static void test_exhaustion_and_merge(void **state)
{
    (void)state;
    struct pmm *p = new_pmm();
    struct boot_mmap_entry m[] = { E(BOOT_MEM_CONVENTIONAL, MiB(1), 64),
                                   E(BOOT_MEM_CONVENTIONAL, MiB(2), 64) };
    assert_int_equal(pmm_add_from_uefi(p, m, ARRAY_SIZE(m)), PMM_OK);
    uint64_t got[128];
    size_t k = 0;
    uint64_t a;
    while (pmm_alloc_tagged(p, PG, PG, -1, "page", &a) == PMM_OK) {
        assert_true(k < 128);
        got[k++] = a;
    }
    assert_int_equal(k, 128);
    for (size_t i = 1; i < k; i++)
        assert_true(got[i] > got[i - 1]); /* lowest first: ascending */
    assert_int_equal(pmm_free_bytes(p, -1), 0);
    assert_int_equal(pmm_total_bytes(p, -1), 128 * PG);
    assert_int_equal(pmm_alloc(p, PG, PG, -1, &a), PMM_ENOMEM);
    assert_int_equal(pmm_alloc(p, PG, PG, 0, &a), PMM_ENOMEM);
    /* Adjacent allocations with one label share one record per contiguous run. */
    assert_int_equal(pmm_records(p, NULL, 0), 2);
    /* Free in a scattered order: everything merges back to the two original ranges. */
    for (size_t i = 0; i < k; i += 2)
        assert_int_equal(pmm_free(p, got[i], PG), PMM_OK);
    assert_int_equal(pmm_free(p, got[0], PG), PMM_ENOTALLOC); /* double free */
    for (size_t i = k - 1; i < k; i -= 2)
        assert_int_equal(pmm_free(p, got[i], PG), PMM_OK);
    size_t n = check_invariants(p);
    assert_int_equal(n, 2);
    assert_int_equal(g_ranges[0].base, MiB(1));
    assert_int_equal(g_ranges[0].len, 64 * PG);
    assert_int_equal(g_ranges[1].base, MiB(2));
    assert_int_equal(pmm_records(p, NULL, 0), 0);
    assert_int_equal(pmm_free_bytes(p, -1), 128 * PG);
}

static void test_partial_free(void **state)
{
    (void)state;
    struct pmm *p = new_pmm();
    struct boot_mmap_entry m[] = { E(BOOT_MEM_CONVENTIONAL, MiB(1), 256) };
    assert_int_equal(pmm_add_from_uefi(p, m, 1), PMM_OK);
    uint64_t a;
    assert_int_equal(pmm_alloc_tagged(p, 16 * PG, PG, -1, "buf", &a), PMM_OK);
    assert_int_equal(pmm_free(p, a + 4 * PG, 4 * PG), PMM_OK); /* middle: record splits */
    struct pmm_record r[4];
    assert_int_equal(pmm_records(p, r, 4), 2);
    assert_int_equal(pmm_free(p, a + 2 * PG, 4 * PG), PMM_ENOTALLOC); /* half of it is free already */
    assert_int_equal(pmm_free(p, a, 2 * PG), PMM_OK);                /* front */
    assert_int_equal(pmm_free(p, a + 14 * PG, 2 * PG), PMM_OK);      /* back */
    assert_int_equal(pmm_free_bytes(p, -1), (256 - 8) * PG);
    assert_true(is_free(p, a, a + 2 * PG));
    assert_false(any_free(p, a + 2 * PG, a + 4 * PG));
    assert_false(any_free(p, a + 8 * PG, a + 14 * PG));
    assert_int_equal(pmm_free(p, a + 2 * PG, 2 * PG), PMM_OK);
    assert_int_equal(pmm_free(p, a + 8 * PG, 6 * PG), PMM_OK);
    assert_int_equal(check_invariants(p), 1);
    assert_int_equal(pmm_free_bytes(p, -1), 256 * PG);
}

static void test_overlapping_map(void **state)
{
    (void)state;
    struct pmm *p = new_pmm();
    struct boot_mmap_entry m[] = {
        E(BOOT_MEM_CONVENTIONAL, MiB(8), MiB(8) / PG),   /* 8M..16M */
        E(BOOT_MEM_RT_DATA, MiB(12), 1),                  /* inside it: claimed */
        E(BOOT_MEM_CONVENTIONAL, MiB(4), MiB(8) / PG),   /* 4M..12M overlaps the first */
        E(BOOT_MEM_CONVENTIONAL, MiB(4), MiB(8) / PG),   /* exact duplicate */
        E(BOOT_MEM_ACPI_RECLAIM, MiB(15), MiB(2) / PG),  /* overlaps the end */
        E(BOOT_MEM_LOADER_DATA, MiB(3), MiB(2) / PG),    /* overlaps the start */
        E(BOOT_MEM_BS_DATA, MiB(20), 16),
        E(BOOT_MEM_MMIO, MiB(20) + 4 * PG, 1),           /* MMIO claimed inside BS data */
        { .type = BOOT_MEM_CONVENTIONAL, .phys = MiB(30), .pages = 16, .attr = PMM_EFI_MEMORY_RUNTIME },
        { .type = BOOT_MEM_CONVENTIONAL, .phys = MiB(31), .pages = 16, .attr = PMM_EFI_MEMORY_SP },
        { .type = BOOT_MEM_CONVENTIONAL, .phys = MiB(40) + 123, .pages = 2, .attr = 0 }, /* unaligned: inward */
        { .type = BOOT_MEM_UNUSABLE, .phys = MiB(24) + 5, .pages = 1, .attr = 0 },        /* unaligned: outward */
        E(BOOT_MEM_CONVENTIONAL, MiB(24) - 2 * PG, 4),
        E(BOOT_MEM_CONVENTIONAL, 0xFFFFFFFFFFFFF000ULL, 0x10),        /* wraps */
        E(BOOT_MEM_CONVENTIONAL, GiB(1), UINT64_MAX),                 /* absurd length: clipped */
        E(BOOT_MEM_RESERVED, GiB(1) + MiB(1), UINT64_MAX / 2),        /* claims all above */
        E(BOOT_MEM_CONVENTIONAL, MiB(50), 0),                         /* empty */
    };
    assert_int_equal(pmm_add_from_uefi(p, m, ARRAY_SIZE(m)), PMM_OK);
    size_t n = check_invariants(p);
    static const struct { uint64_t b, e; } want[] = {
        { MiB(5), MiB(12) }, { MiB(12) + PG, MiB(15) },
        { MiB(20), MiB(20) + 4 * PG }, { MiB(20) + 5 * PG, MiB(20) + 16 * PG },
        { MiB(24) - 2 * PG, MiB(24) }, /* the unusable page at 24M+5 claims 24M..24M+8K */
        { MiB(40) + PG, MiB(40) + 2 * PG },
        { GiB(1), GiB(1) + MiB(1) },
    };
    for (size_t k = 0; k < n && k < ARRAY_SIZE(want); k++) {
        assert_int_equal(g_ranges[k].base, want[k].b);
        assert_int_equal(g_ranges[k].base + g_ranges[k].len, want[k].e);
    }
    assert_int_equal(n, ARRAY_SIZE(want));
}

/* 1100 disjoint usable entries cannot all fit: the table fills and reports it, and stays sound. */
static void test_capacity(void **state)
{
    (void)state;
    struct pmm *p = new_pmm();
    enum { N = PMM_MAX_RANGES + 76 };
    static struct boot_mmap_entry m[N];
    for (size_t k = 0; k < N; k++)
        m[k] = (struct boot_mmap_entry)E(BOOT_MEM_CONVENTIONAL, MiB(2) + k * 16 * PG, 8);
    assert_int_equal(pmm_add_from_uefi(p, m, N), PMM_EFULL);
    assert_int_equal(check_invariants(p), PMM_MAX_RANGES);
    uint64_t total = pmm_free_bytes(p, -1);
    assert_int_equal(total, PMM_MAX_RANGES * 8 * PG);

    /* An exclusion splitting a range cannot fit: the smaller side is given up, the carve still holds. */
    uint64_t b0 = MiB(2) + 16 * PG;
    assert_int_equal(pmm_exclude(p, b0 + 2 * PG, PG, "split"), PMM_EFULL);
    assert_false(any_free(p, b0 + 2 * PG, b0 + 3 * PG));
    assert_false(any_free(p, b0, b0 + 2 * PG)); /* 2 pages left of it < 5 right of it: dropped */
    assert_true(is_free(p, b0 + 3 * PG, b0 + 8 * PG));
    assert_int_equal(pmm_free_bytes(p, -1), total - 3 * PG);
    assert_int_equal(p->lost_bytes, 2 * PG);
    assert_int_equal(check_invariants(p), PMM_MAX_RANGES);
    /* Still full (the range shrank, none went away): the same happens on the right-hand side. */
    assert_int_equal(pmm_exclude(p, MiB(2) + 5 * PG, PG, "split2"), PMM_EFULL);
    assert_true(is_free(p, MiB(2), MiB(2) + 5 * PG));
    assert_false(any_free(p, MiB(2) + 5 * PG, MiB(2) + 8 * PG));
    assert_int_equal(p->lost_bytes, 4 * PG);
    /* Removing a whole range frees a slot; then a split fits and loses nothing. */
    assert_int_equal(pmm_exclude(p, MiB(2) + 32 * PG, 8 * PG, "whole"), PMM_OK);
    assert_int_equal(check_invariants(p), PMM_MAX_RANGES - 1);
    assert_int_equal(pmm_exclude(p, MiB(2) + 2 * PG, PG, "split3"), PMM_OK);
    assert_int_equal(check_invariants(p), PMM_MAX_RANGES);
    assert_int_equal(p->lost_bytes, 4 * PG);
    assert_true(is_free(p, MiB(2), MiB(2) + 2 * PG));
    assert_true(is_free(p, MiB(2) + 3 * PG, MiB(2) + 5 * PG));

    /* Allocating and freeing at a range edge needs no slot. */
    uint64_t a, before = pmm_free_bytes(p, -1);
    assert_int_equal(pmm_alloc(p, PG, PG, -1, &a), PMM_OK);
    assert_int_equal(a, MiB(2));
    assert_int_equal(pmm_free(p, a, PG), PMM_OK);
    assert_int_equal(pmm_free_bytes(p, -1), before);
    assert_int_equal(check_invariants(p), PMM_MAX_RANGES);
    /* Retagging by nodes that would cut every range in two: refused, nothing changes. */
    struct pmm_node_range nr[PMM_MAX_NODE_RANGES];
    for (size_t k = 0; k < PMM_MAX_NODE_RANGES; k++)
        nr[k] = (struct pmm_node_range){ MiB(2) + k * 16 * PG + 4 * PG, 16 * PG, 1 + (int)(k % 2) };
    assert_int_equal(pmm_set_nodes(p, nr, PMM_MAX_NODE_RANGES), PMM_EFULL);
    assert_int_equal(pmm_total_bytes(p, 1), 0);
    assert_int_equal(check_invariants(p), PMM_MAX_RANGES);
}

/* An aligned allocation in the middle of a range needs one more slot: at capacity it must fail
 * without changing anything. */
static void test_capacity_alloc_split(void **state)
{
    (void)state;
    struct pmm *p = new_pmm();
    enum { N = PMM_MAX_RANGES };
    static struct boot_mmap_entry m[N];
    /* Each range 0x?1000..0x?9000 (8 pages) in its own 64K slot, so a 16K-aligned page is inside. */
    for (size_t k = 0; k < N; k++)
        m[k] = (struct boot_mmap_entry)E(BOOT_MEM_CONVENTIONAL, MiB(2) + k * 0x10000 + PG, 8);
    assert_int_equal(pmm_add_from_uefi(p, m, N), PMM_OK);
    assert_int_equal(check_invariants(p), PMM_MAX_RANGES);
    uint64_t a = 77, before = pmm_free_bytes(p, -1);
    assert_int_equal(pmm_alloc(p, PG, 4 * PG, -1, &a), PMM_EFULL);
    assert_int_equal(a, 77);
    assert_int_equal(pmm_free_bytes(p, -1), before);
    assert_int_equal(pmm_records(p, NULL, 0), 0);
    /* Aligned at the start of a range: no split, succeeds. */
    assert_int_equal(pmm_alloc(p, PG, PG, -1, &a), PMM_OK);
    assert_int_equal(a, MiB(2) + PG);
    /* The table is still full (the range only shrank): a splitting request is still refused. */
    assert_int_equal(pmm_alloc(p, PG, 4 * PG, -1, &a), PMM_EFULL);
    assert_int_equal(pmm_records(p, NULL, 0), 1);
    /* Free it back: merges, no growth. */
    assert_int_equal(pmm_free(p, MiB(2) + PG, PG), PMM_OK);
    assert_int_equal(pmm_free_bytes(p, -1), before);
}

static void test_records(void **state)
{
    (void)state;
    struct pmm *p = new_pmm();
    struct boot_mmap_entry m[] = { E(BOOT_MEM_CONVENTIONAL, MiB(1), 4096) };
    assert_int_equal(pmm_add_from_uefi(p, m, 1), PMM_OK);
    uint64_t a, b, c;
    assert_int_equal(pmm_alloc_tagged(p, PG, PG, -1, "page tables", &a), PMM_OK);
    assert_int_equal(pmm_alloc_tagged(p, PG, PG, -1, "page tables", &b), PMM_OK);
    assert_int_equal(pmm_alloc_tagged(p, PG, PG, -1, "a label far longer than the record keeps", &c), PMM_OK);
    assert_int_equal(pmm_alloc(p, PG, PG, -1, &c), PMM_OK);
    assert_int_equal(pmm_exclude(p, GiB(1), PG, NULL), PMM_OK);
    struct pmm_record r[8];
    size_t n = pmm_records(p, r, 8);
    assert_int_equal(n, 4);
    assert_string_equal(r[0].why, "page tables");
    assert_int_equal(r[0].base, a);
    assert_int_equal(r[0].len, 2 * PG);
    assert_int_equal(r[0].kind, PMM_REC_ALLOC);
    assert_int_equal(strlen(r[1].why), PMM_WHY_LEN - 1);
    assert_memory_equal(r[1].why, "a label far longer", 18);
    assert_string_equal(r[2].why, "alloc");
    assert_string_equal(r[3].why, "?");
    assert_int_equal(r[3].kind, PMM_REC_EXCLUDE);
    assert_int_equal(pmm_records(p, r, 1), 4); /* count even when out is short */

    /* Fill the record table with non-touching allocations: the next one fails cleanly. */
    size_t made = n;
    const char *last = "alloc";
    while (made < PMM_MAX_RECORDS) {
        last = made % 2 ? "odd" : "even";
        assert_int_equal(pmm_alloc_tagged(p, PG, PG, -1, last, &a), PMM_OK);
        assert_int_equal(pmm_records(p, NULL, 0), made + 1);
        made++;
    }
    uint64_t before = pmm_free_bytes(p, -1);
    const char *other = strcmp(last, "odd") == 0 ? "even" : "odd"; /* cannot merge */
    assert_int_equal(pmm_alloc_tagged(p, PG, PG, -1, other, &a), PMM_ERECFULL);
    assert_int_equal(pmm_free_bytes(p, -1), before);
    /* Same label as the last one: merges, so it still works (twice: a 3-page record). */
    assert_int_equal(pmm_alloc_tagged(p, PG, PG, -1, last, &a), PMM_OK);
    assert_int_equal(pmm_alloc_tagged(p, PG, PG, -1, last, &a), PMM_OK);
    assert_int_equal(pmm_records(p, NULL, 0), PMM_MAX_RECORDS);
    /* Freeing the middle page of a merged record needs a slot: refused, nothing changes. */
    assert_int_equal(pmm_free(p, r[0].base + PG, PG), PMM_OK); /* end of the 2-page record: no split */
    assert_int_equal(pmm_free(p, a - PG, PG), PMM_ERECFULL);    /* middle of the last record */
    assert_false(any_free(p, a - PG, a));
    /* Exclusion with a full record table: applied, reported. */
    assert_int_equal(pmm_exclude(p, MiB(10), PG, "x"), PMM_ERECFULL);
    assert_false(any_free(p, MiB(10), MiB(10) + PG));
    assert_int_equal(p->rec_dropped, 1);
}

static void test_strerror(void **state)
{
    (void)state;
    int codes[] = { PMM_OK, PMM_EINVAL, PMM_EALIGN, PMM_ENOMEM, PMM_ENONODE, PMM_EFULL,
                    PMM_ERECFULL, PMM_ENOTALLOC, PMM_EEXCLUDED, PMM_ESTATE };
    for (size_t i = 0; i < ARRAY_SIZE(codes); i++)
        for (size_t j = i + 1; j < ARRAY_SIZE(codes); j++)
            assert_string_not_equal(pmm_strerror(codes[i]), pmm_strerror(codes[j]));
    assert_string_equal(pmm_strerror(-1000), "unknown pmm error");
}

/* ---- property test -------------------------------------------------------------------------- */

#define UPAGES 16384 /* 64 MiB universe */
static uint64_t rng_s;
static uint64_t rnd(void)
{
    rng_s ^= rng_s << 13;
    rng_s ^= rng_s >> 7;
    rng_s ^= rng_s << 17;
    return rng_s;
}
static uint64_t rnd_below(uint64_t n) { return rnd() % n; }

static uint8_t ref_usable[UPAGES], ref_claim[UPAGES], ref_excl[UPAGES], ref_owned[UPAGES];
static int8_t ref_node[UPAGES];
static uint32_t runlen[UPAGES];

struct live { uint64_t page, npages; };

static bool ref_free(size_t pg) { return ref_usable[pg] && !ref_excl[pg] && !ref_owned[pg]; }

/* Lowest aligned start >= 1 MiB of `np` free pages within one node (== node unless node < 0). */
static int64_t ref_find(uint64_t np, uint64_t align_pages, int node)
{
    for (size_t pg = UPAGES; pg-- > 0;) {
        bool ok = ref_free(pg) && (node < 0 || ref_node[pg] == node);
        runlen[pg] = !ok ? 0 : (pg + 1 < UPAGES && ref_node[pg + 1] == ref_node[pg] ? runlen[pg + 1] : 0) + 1;
    }
    for (size_t pg = ALIGN_UP(MiB(1) / PG, align_pages); pg < UPAGES; pg += align_pages)
        if (runlen[pg] >= np)
            return (int64_t)pg;
    return -1;
}

static void check_against_ref(const struct pmm *p)
{
    check_invariants(p);
    static uint8_t seen[UPAGES];
    memset(seen, 0, sizeof(seen));
    size_t n = pmm_ranges(p, g_ranges, ARRAY_SIZE(g_ranges));
    for (size_t k = 0; k < n; k++) {
        assert_true(g_ranges[k].base + g_ranges[k].len <= UPAGES * PG);
        for (uint64_t pg = g_ranges[k].base / PG; pg < (g_ranges[k].base + g_ranges[k].len) / PG; pg++) {
            seen[pg] = 1;
            assert_int_equal(g_ranges[k].node, ref_node[pg]);
        }
    }
    for (size_t pg = 0; pg < UPAGES; pg++)
        if (seen[pg] != ref_free(pg)) {
            fail_msg("page %#zx: pmm free=%d, reference free=%d (usable %d excl %d owned %d)", pg * PG,
                     seen[pg], ref_free(pg), ref_usable[pg], ref_excl[pg], ref_owned[pg]);
        }
}

static void property_round(uint64_t seed)
{
    rng_s = seed * 0x9E3779B97F4A7C15ULL + 1;
    struct pmm *p = new_pmm();
    memset(ref_usable, 0, sizeof(ref_usable));
    memset(ref_claim, 0, sizeof(ref_claim));
    memset(ref_excl, 0, sizeof(ref_excl));
    memset(ref_owned, 0, sizeof(ref_owned));
    memset(ref_node, 0, sizeof(ref_node));

    /* Random firmware map: unsorted, overlapping, sometimes unaligned, sometimes out of the universe. */
    struct boot_mmap_entry m[48];
    size_t nm = 1 + rnd_below(ARRAY_SIZE(m) - 1);
    for (size_t k = 0; k < nm; k++) {
        uint64_t r = rnd_below(100);
        uint32_t type = r < 45 ? BOOT_MEM_CONVENTIONAL : r < 55 ? BOOT_MEM_BS_CODE : r < 65 ? BOOT_MEM_BS_DATA
                        : (uint32_t)rnd_below(16);
        uint64_t phys = rnd_below(UPAGES) * PG;
        if (rnd_below(8) == 0)
            phys += rnd_below(PG);
        uint64_t pages = 1 + rnd_below(rnd_below(4) ? 512 : 4096);
        uint64_t attr = rnd_below(20) == 0 ? PMM_EFI_MEMORY_RUNTIME : rnd_below(20) == 0 ? PMM_EFI_MEMORY_SP : 0;
        m[k] = (struct boot_mmap_entry){ type, phys, pages, attr };
        uint64_t end = phys + pages * PG;
        bool usable = (type == 7 || type == 3 || type == 4) && attr == 0;
        if (usable) {
            for (uint64_t pg = (phys + PG - 1) / PG; pg < end / PG && pg < UPAGES; pg++)
                ref_usable[pg] = 1;
        } else {
            for (uint64_t pg = phys / PG; pg < (end + PG - 1) / PG && pg < UPAGES; pg++)
                ref_claim[pg] = 1;
        }
    }
    for (size_t pg = 0; pg < UPAGES; pg++)
        if (ref_claim[pg] || pg == 0)
            ref_usable[pg] = 0;

    /* Random node layout: cut points, each piece a node or uncovered (node 0). */
    struct pmm_node_range nr[8];
    size_t nn = 0;
    uint64_t cur = 0;
    while (nn < ARRAY_SIZE(nr) && cur < UPAGES) {
        uint64_t len = 1 + rnd_below(UPAGES / 3);
        if (cur + len > UPAGES)
            len = UPAGES - cur;
        if (rnd_below(4)) {
            int node = (int)rnd_below(4);
            nr[nn++] = (struct pmm_node_range){ cur * PG, len * PG, node };
            for (uint64_t pg = cur; pg < cur + len; pg++)
                ref_node[pg] = (int8_t)node;
        }
        cur += len;
    }
    bool nodes_first = rnd_below(2);
    if (nodes_first)
        assert_int_equal(pmm_set_nodes(p, nr, nn), PMM_OK);
    /* Everything above the universe is claimed, so the reference can stay small. */
    m[nm] = (struct boot_mmap_entry){ BOOT_MEM_RESERVED, UPAGES * PG, UINT64_MAX / PG, 0 };
    size_t at = rnd_below(nm + 1);
    struct boot_mmap_entry t = m[at];
    m[at] = m[nm];
    m[nm++] = t;
    assert_int_equal(pmm_add_from_uefi(p, m, nm), PMM_OK);
    if (!nodes_first)
        assert_int_equal(pmm_set_nodes(p, nr, nn), PMM_OK);
    check_against_ref(p);

    size_t nx = rnd_below(6);
    for (size_t k = 0; k < nx; k++) {
        uint64_t b = rnd_below(UPAGES * PG), len = 1 + rnd_below(MiB(2));
        assert_int_equal(pmm_exclude(p, b, len, "prop"), PMM_OK);
        for (uint64_t pg = b / PG; pg < (b + len + PG - 1) / PG && pg < UPAGES; pg++)
            ref_excl[pg] = 1;
    }
    check_against_ref(p);
    uint64_t total = pmm_total_bytes(p, -1);
    uint64_t node_total[4];
    for (int nd = 0; nd < 4; nd++)
        node_total[nd] = pmm_total_bytes(p, nd);

    static struct live live[512];
    size_t nlive = 0;
    for (int op = 0; op < 120; op++) {
        if (nlive == 0 || rnd_below(10) < 7) {
            uint64_t size = rnd_below(4) ? 1 + rnd_below(64 * PG) : 1 + rnd_below(MiB(3));
            uint64_t align = PG << rnd_below(11); /* 4K..4M */
            int node = rnd_below(10) == 0 ? 4 : (int)rnd_below(5) - 1; /* -1..3, 4 never has memory */
            uint64_t np = (size + PG - 1) / PG;
            uint64_t a = 0;
            int rc = pmm_alloc_tagged(p, size, align, node, rnd_below(2) ? "x" : "y", &a);
            int64_t want = ref_find(np, align / PG, node);
            if (rc == PMM_OK) {
                assert_int_equal(a % align, 0);
                assert_true(a >= PMM_LOW_LIMIT);
                assert_int_equal((int64_t)(a / PG), want); /* lowest address that fits */
                for (uint64_t pg = a / PG; pg < a / PG + np; pg++) {
                    assert_true(pg < UPAGES);
                    assert_true(ref_usable[pg]); /* usable, never claimed by any entry */
                    assert_false(ref_excl[pg]);
                    assert_false(ref_owned[pg]); /* no overlap with a live allocation */
                    if (node >= 0)
                        assert_int_equal(ref_node[pg], node);
                    ref_owned[pg] = 1;
                }
                assert_true(nlive < ARRAY_SIZE(live));
                live[nlive++] = (struct live){ a / PG, np };
            } else if (rc == PMM_ENOMEM) {
                assert_int_equal(want, -1);
            } else if (rc == PMM_ENONODE) {
                assert_int_equal(want, -1);
                assert_true(node >= 0 && (node == 4 || node_total[node] == 0));
            } else if (rc == PMM_ERECFULL) {
                assert_int_equal(pmm_records(p, NULL, 0), PMM_MAX_RECORDS);
            } else {
                fail_msg("unexpected %s", pmm_strerror(rc));
            }
        } else if (rnd_below(8) == 0) {
            /* Hostile free of memory not allocated: refused, nothing changes. */
            uint64_t pg = rnd_below(UPAGES);
            bool owned = ref_owned[pg];
            int rc = pmm_free(p, pg * PG, PG);
            if (!owned)
                assert_true(rc == PMM_ENOTALLOC || rc == PMM_EEXCLUDED);
            if (owned && rc == PMM_ERECFULL)
                assert_int_equal(pmm_records(p, NULL, 0), PMM_MAX_RECORDS);
            if (owned && rc != PMM_ERECFULL) { /* split the live entry the same way */
                assert_int_equal(rc, PMM_OK);
                ref_owned[pg] = 0;
                for (size_t k = 0; k < nlive; k++)
                    if (live[k].page <= pg && pg < live[k].page + live[k].npages) {
                        struct live l = live[k];
                        live[k] = live[--nlive];
                        if (pg > l.page)
                            live[nlive++] = (struct live){ l.page, pg - l.page };
                        if (pg + 1 < l.page + l.npages)
                            live[nlive++] = (struct live){ pg + 1, l.page + l.npages - pg - 1 };
                        break;
                    }
            }
        } else {
            size_t k = rnd_below(nlive);
            struct live l = live[k];
            /* Whole, or a random sub-range (splits the record). */
            uint64_t off = rnd_below(3) ? 0 : rnd_below(l.npages);
            uint64_t cnt = rnd_below(3) ? l.npages - off : 1 + rnd_below(l.npages - off);
            int rc = pmm_free(p, (l.page + off) * PG, cnt * PG);
            if (rc == PMM_ERECFULL) {
                assert_int_equal(pmm_records(p, NULL, 0), PMM_MAX_RECORDS);
                continue;
            }
            assert_int_equal(rc, PMM_OK);
            for (uint64_t pg = l.page + off; pg < l.page + off + cnt; pg++)
                ref_owned[pg] = 0;
            live[k] = live[--nlive];
            if (off)
                live[nlive++] = (struct live){ l.page, off };
            if (off + cnt < l.npages)
                live[nlive++] = (struct live){ l.page + off + cnt, l.npages - off - cnt };
        }
        check_against_ref(p);
        assert_int_equal(pmm_total_bytes(p, -1), total); /* free + allocated is conserved */
        for (int nd = 0; nd < 4; nd++)
            assert_int_equal(pmm_total_bytes(p, nd), node_total[nd]);
        /* largest_free is exact: that size fits, one page more does not. */
        uint64_t al = PG << rnd_below(10);
        int nd = (int)rnd_below(5) - 1;
        uint64_t lf = pmm_largest_free(p, nd, al);
        if (lf) {
            assert_true(ref_find(lf / PG, al / PG, nd) >= 0);
            assert_int_equal(ref_find(lf / PG + 1, al / PG, nd), -1);
        } else {
            assert_int_equal(ref_find(1, al / PG, nd), -1);
        }
    }
}

static void test_property_random(void **state)
{
    (void)state;
    for (uint64_t seed = 1; seed <= 150; seed++)
        property_round(seed);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_ovmf_map),
        cmocka_unit_test(test_map_ranges),
        cmocka_unit_test(test_alignment),
        cmocka_unit_test(test_bad_args),
        cmocka_unit_test(test_low_memory),
        cmocka_unit_test(test_nodes),
        cmocka_unit_test(test_nodes_before_map),
        cmocka_unit_test(test_exclude),
        cmocka_unit_test(test_exclude_before_map),
        cmocka_unit_test(test_exhaustion_and_merge),
        cmocka_unit_test(test_partial_free),
        cmocka_unit_test(test_overlapping_map),
        cmocka_unit_test(test_capacity),
        cmocka_unit_test(test_capacity_alloc_split),
        cmocka_unit_test(test_records),
        cmocka_unit_test(test_strerror),
        cmocka_unit_test(test_property_random),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
