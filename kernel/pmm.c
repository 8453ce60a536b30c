/* pmm.c - physical memory allocator: sorted span tables, lowest-address-first, no heap.
 *
 * Every table is a sorted array of disjoint half-open spans. All edits go through span_paint(), which
 * replaces whatever overlaps [b, e) with one new span (or a hole), merges equal-tagged neighbours and
 * checks the capacity before touching the array, so a full table fails without corrupting anything.
 * Policy and limits: docs/memory.md. */
#include "kernel/pmm.h"

#define HOLE (-1)

/* ---- span tables --------------------------------------------------------------------------- */

/* First index whose span ends after b (spans are sorted and disjoint, so ends are sorted too). */
static uint32_t span_first_after(const struct pmm_span *s, uint32_t n, uint64_t b)
{
    uint32_t lo = 0, hi = n;
    while (lo < hi) {
        uint32_t mid = lo + (hi - lo) / 2;
        if (s[mid].end > b)
            hi = mid;
        else
            lo = mid + 1;
    }
    return lo;
}

/* The edit that makes [b, e) one span tagged `tag` (or a hole when tag == HOLE): spans lo..hi-1 are
 * replaced by seg[0..m-1], equal-tagged touching neighbours merged in. */
struct span_edit {
    uint32_t lo, hi, m;
    struct pmm_span seg[3];
};

static void span_plan(const struct pmm_span *s, uint32_t n, uint64_t b, uint64_t e, int32_t tag,
                      struct span_edit *ed)
{
    uint32_t i = span_first_after(s, n, b);
    uint32_t j = i;
    while (j < n && s[j].base < e)
        j++;

    struct pmm_span *seg = ed->seg;
    uint32_t m = 0;
    if (i < j && s[i].base < b)
        seg[m++] = (struct pmm_span){ s[i].base, b, s[i].tag };
    if (tag != HOLE) {
        if (m && seg[m - 1].tag == tag)
            seg[m - 1].end = e;
        else
            seg[m++] = (struct pmm_span){ b, e, tag };
    }
    if (i < j && s[j - 1].end > e) {
        if (tag != HOLE && seg[m - 1].tag == s[j - 1].tag)
            seg[m - 1].end = s[j - 1].end;
        else
            seg[m++] = (struct pmm_span){ e, s[j - 1].end, s[j - 1].tag };
    }

    uint32_t lo = i, hi = j;
    if (m) {
        if (lo > 0 && s[lo - 1].end == seg[0].base && s[lo - 1].tag == seg[0].tag) {
            seg[0].base = s[lo - 1].base;
            lo--;
        }
        if (hi < n && s[hi].base == seg[m - 1].end && s[hi].tag == seg[m - 1].tag) {
            seg[m - 1].end = s[hi].end;
            hi++;
        }
    }
    ed->lo = lo;
    ed->hi = hi;
    ed->m = m;
}

/* How many spans painting [b, e) would add (may be negative). */
static int span_growth(const struct pmm_span *s, uint32_t n, uint64_t b, uint64_t e, int32_t tag)
{
    struct span_edit ed;
    if (b >= e)
        return 0;
    span_plan(s, n, b, e, tag, &ed);
    return (int)ed.m - (int)(ed.hi - ed.lo);
}

/* Paint [b, e). Transactional: PMM_EFULL leaves the table as it was. */
static int span_paint(struct pmm_span *s, uint32_t *np, uint32_t cap, uint64_t b, uint64_t e, int32_t tag)
{
    struct span_edit ed;
    uint32_t n = *np;
    if (b >= e)
        return PMM_OK;
    span_plan(s, n, b, e, tag, &ed);
    uint32_t newn = n - (ed.hi - ed.lo) + ed.m;
    if (newn > cap)
        return PMM_EFULL;
    if (ed.lo + ed.m != ed.hi)
        memmove(&s[ed.lo + ed.m], &s[ed.hi], (size_t)(n - ed.hi) * sizeof(*s));
    for (uint32_t k = 0; k < ed.m; k++)
        s[ed.lo + k] = ed.seg[k];
    *np = newn;
    return PMM_OK;
}

/* Remove [b, e) from the free set, never failing to remove: if splitting a span does not fit the
 * table, the smaller side goes too (counted in lost_bytes) and PMM_EFULL is returned. */
static int free_remove(struct pmm *p, uint64_t b, uint64_t e)
{
    if (span_paint(p->free, &p->nfree, PMM_MAX_RANGES, b, e, HOLE) == PMM_OK)
        return PMM_OK;
    /* Only a strict split of one span grows the table; that span contains [b, e). */
    uint32_t i = span_first_after(p->free, p->nfree, b);
    struct pmm_span *s = &p->free[i];
    uint64_t left = b - s->base, right = s->end - e;
    if (left <= right) {
        p->lost_bytes += left;
        b = s->base;
    } else {
        p->lost_bytes += right;
        e = s->end;
    }
    span_paint(p->free, &p->nfree, PMM_MAX_RANGES, b, e, HOLE); /* cannot grow: fits */
    return PMM_EFULL;
}

/* ---- nodes --------------------------------------------------------------------------------- */

/* The piece of [c, e) that starts at c and has one node: returns its end, sets *node. */
static uint64_t node_piece(const struct pmm_span *nodes, uint32_t nn, uint64_t c, uint64_t e, int *node)
{
    uint32_t k = span_first_after(nodes, nn, c);
    if (k < nn && nodes[k].base <= c) {
        *node = nodes[k].tag;
        return MIN(e, nodes[k].end);
    }
    *node = 0; /* not covered by SRAT: node 0 */
    return k < nn ? MIN(e, nodes[k].base) : e;
}

static uint32_t node_pieces(const struct pmm_span *nodes, uint32_t nn, uint64_t b, uint64_t e)
{
    uint32_t count = 0;
    int node;
    for (uint64_t c = b; c < e; c = node_piece(nodes, nn, c, e, &node))
        count++;
    return count;
}

/* Bytes of [b, e) on `node` (-1: all). */
static uint64_t node_bytes(const struct pmm *p, uint64_t b, uint64_t e, int node)
{
    if (node < 0)
        return e - b;
    uint64_t sum = 0;
    int nd;
    for (uint64_t c = b; c < e;) {
        uint64_t pe = node_piece(p->nodes, p->nnodes, c, e, &nd);
        if (nd == node)
            sum += pe - c;
        c = pe;
    }
    return sum;
}

int pmm_node_of(const struct pmm *p, uint64_t phys)
{
    int node;
    node_piece(p->nodes, p->nnodes, phys, phys + 1, &node);
    return node;
}

/* Add [b, e) to the free set, split and tagged by node; each piece grows the table by at most one.
 * Not transactional across pieces: on PMM_EFULL a prefix was added (still a subset of what was offered). */
static int free_add(struct pmm *p, uint64_t b, uint64_t e)
{
    if (b >= e)
        return PMM_OK;
    int node;
    for (uint64_t c = b; c < e;) {
        uint64_t pe = node_piece(p->nodes, p->nnodes, c, e, &node);
        int rc = span_paint(p->free, &p->nfree, PMM_MAX_RANGES, c, pe, node);
        if (rc)
            return rc;
        c = pe;
    }
    return PMM_OK;
}

/* ---- records ------------------------------------------------------------------------------- */

static void why_copy(char *dst, const char *src)
{
    size_t k = 0;
    if (!src)
        src = "?";
    for (; k + 1 < PMM_WHY_LEN && src[k]; k++)
        dst[k] = src[k];
    dst[k] = 0;
}

static bool why_eq(const char *a, const char *b)
{
    char tmp[PMM_WHY_LEN];
    why_copy(tmp, b);
    return strcmp(a, tmp) == 0;
}

/* Index of a record that [b, b+len) extends (same kind, label and node, touching), or -1. */
static int rec_mergeable(const struct pmm *p, int kind, uint64_t b, uint64_t len, int node, const char *why)
{
    for (uint32_t k = 0; k < p->nrec; k++) {
        const struct pmm_record *r = &p->rec[k];
        if (r->kind == kind && r->node == node && (r->base + r->len == b || b + len == r->base) &&
            why_eq(r->why, why))
            return (int)k;
    }
    return -1;
}

static bool rec_room(const struct pmm *p, int kind, uint64_t b, uint64_t len, int node, const char *why)
{
    return p->nrec < PMM_MAX_RECORDS || rec_mergeable(p, kind, b, len, node, why) >= 0;
}

static int rec_add(struct pmm *p, int kind, uint64_t b, uint64_t len, int node, const char *why)
{
    int k = rec_mergeable(p, kind, b, len, node, why);
    if (k >= 0) {
        struct pmm_record *r = &p->rec[k];
        if (b < r->base)
            r->base = b;
        r->len += len;
        return PMM_OK;
    }
    if (p->nrec >= PMM_MAX_RECORDS)
        return PMM_ERECFULL;
    struct pmm_record *r = &p->rec[p->nrec++];
    r->base = b;
    r->len = len;
    r->node = node;
    r->kind = kind;
    why_copy(r->why, why);
    return PMM_OK;
}

/* ---- setup --------------------------------------------------------------------------------- */

void pmm_init(struct pmm *p)
{
    memset(p, 0, sizeof(*p));
}

/* UEFI types the kernel may hand out once boot services are gone (UEFI spec 2.10, table 7.6:
 * EfiBootServicesCode/Data are free after ExitBootServices). Loader code/data is our image. */
static bool type_usable(uint32_t type)
{
    return type == BOOT_MEM_CONVENTIONAL || type == BOOT_MEM_BS_CODE || type == BOOT_MEM_BS_DATA;
}

static int type_map_kind(uint32_t type)
{
    switch (type) {
    case BOOT_MEM_LOADER_CODE: case BOOT_MEM_LOADER_DATA: case BOOT_MEM_BS_CODE: case BOOT_MEM_BS_DATA:
    case BOOT_MEM_RT_CODE: case BOOT_MEM_RT_DATA: case BOOT_MEM_CONVENTIONAL: case BOOT_MEM_ACPI_RECLAIM:
    case BOOT_MEM_ACPI_NVS: case BOOT_MEM_PAL: case BOOT_MEM_PERSISTENT:
        return PMM_MAP_RAM;
    case BOOT_MEM_MMIO: case BOOT_MEM_MMIO_PORT:
        return PMM_MAP_MMIO;
    default:
        return 0; /* reserved, unusable, unknown/OEM: not mapped, never handed out */
    }
}

/* Page range of a map entry, clipped to PMM_PHYS_LIMIT; rounded outward (claims) or inward (offers). */
static bool entry_range(const struct boot_mmap_entry *m, bool outward, uint64_t *b, uint64_t *e)
{
    if (m->pages == 0 || m->phys >= PMM_PHYS_LIMIT)
        return false;
    uint64_t room = (PMM_PHYS_LIMIT - m->phys) / PMM_PAGE;
    uint64_t end = m->pages >= room ? PMM_PHYS_LIMIT : m->phys + m->pages * PMM_PAGE;
    if (outward) {
        *b = ALIGN_DOWN(m->phys, PMM_PAGE);
        *e = ALIGN_UP(end, PMM_PAGE);
    } else {
        *b = ALIGN_UP(m->phys, PMM_PAGE);
        *e = ALIGN_DOWN(end, PMM_PAGE);
    }
    return *b < *e;
}

int pmm_add_from_uefi(struct pmm *p, const struct boot_mmap_entry *m, size_t n)
{
    if (p->map_added)
        return PMM_ESTATE;
    if (n && !m)
        return PMM_EINVAL;
    p->map_added = true;
    int err = PMM_OK;
    uint64_t b, e;

    /* Mapping table: RAM first, then MMIO painted over it (UC wins over WB on a conflicting map). */
    for (int pass = PMM_MAP_RAM; pass <= PMM_MAP_MMIO; pass++)
        for (size_t k = 0; k < n; k++)
            if (type_map_kind(m[k].type) == pass && entry_range(&m[k], true, &b, &e))
                if (span_paint(p->map, &p->nmap, PMM_MAX_MAP, b, e, pass))
                    err = PMM_EFULL;

    /* Free set: every usable entry, then every page any other entry claims is taken out again,
     * so overlapping or unsorted maps can only lose memory, never offer a claimed page. */
    for (size_t k = 0; k < n; k++) {
        bool usable = type_usable(m[k].type) &&
                      !(m[k].attr & (PMM_EFI_MEMORY_RUNTIME | PMM_EFI_MEMORY_SP));
        if (usable && entry_range(&m[k], false, &b, &e) && free_add(p, b, e))
            err = PMM_EFULL;
    }
    for (size_t k = 0; k < n; k++) {
        bool usable = type_usable(m[k].type) &&
                      !(m[k].attr & (PMM_EFI_MEMORY_RUNTIME | PMM_EFI_MEMORY_SP));
        if (!usable && entry_range(&m[k], true, &b, &e) && free_remove(p, b, e))
            err = PMM_EFULL;
    }
    /* Page 0 is never handed out (a null physical pointer must stay an error). */
    if (free_remove(p, 0, PMM_PAGE))
        err = PMM_EFULL;
    /* Exclusions made before the map arrived apply to it too. */
    for (uint32_t k = 0; k < p->nrec; k++)
        if (p->rec[k].kind == PMM_REC_EXCLUDE &&
            free_remove(p, p->rec[k].base, p->rec[k].base + p->rec[k].len))
            err = PMM_EFULL;
    return err;
}

int pmm_exclude(struct pmm *p, uint64_t base, uint64_t len, const char *why)
{
    if (len == 0 || base >= PMM_PHYS_LIMIT)
        return PMM_OK;
    uint64_t end = len > PMM_PHYS_LIMIT - base ? PMM_PHYS_LIMIT : base + len;
    uint64_t b = ALIGN_DOWN(base, PMM_PAGE), e = ALIGN_UP(end, PMM_PAGE);
    int rc = free_remove(p, b, e);
    if (rec_add(p, PMM_REC_EXCLUDE, b, e - b, pmm_node_of(p, b), why)) {
        p->rec_dropped++;
        if (rc == PMM_OK)
            rc = PMM_ERECFULL;
    }
    return rc;
}

int pmm_set_nodes(struct pmm *p, const struct pmm_node_range *r, size_t n)
{
    if (n && !r)
        return PMM_EINVAL;
    if (n > PMM_MAX_NODE_RANGES)
        return PMM_EFULL;
    struct pmm_span nodes[PMM_MAX_NODE_RANGES];
    uint32_t nn = 0;
    for (size_t k = 0; k < n; k++) {
        if (r[k].node < 0 || r[k].node >= PMM_MAX_NODES || r[k].len == 0 || r[k].len > UINT64_MAX - r[k].base)
            return PMM_EINVAL;
        if (r[k].base >= PMM_PHYS_LIMIT)
            continue;
        /* Boundaries go to the page that contains them (SRAT ranges are page-aligned in practice). */
        uint64_t b = ALIGN_DOWN(r[k].base, PMM_PAGE);
        uint64_t e = ALIGN_DOWN(MIN(r[k].base + r[k].len, PMM_PHYS_LIMIT), PMM_PAGE);
        if (b >= e)
            continue;
        uint32_t pos = nn; /* insertion sort by base */
        while (pos > 0 && nodes[pos - 1].base > b) {
            nodes[pos] = nodes[pos - 1];
            pos--;
        }
        nodes[pos] = (struct pmm_span){ b, e, r[k].node };
        nn++;
    }
    for (uint32_t k = 1; k < nn; k++)
        if (nodes[k].base < nodes[k - 1].end)
            return PMM_EINVAL; /* overlapping affinity ranges: which node would own the overlap? */
    /* Touching ranges of one node become one, so pieces never split needlessly. */
    uint32_t w = 0;
    for (uint32_t k = 0; k < nn; k++) {
        if (w && nodes[w - 1].end == nodes[k].base && nodes[w - 1].tag == nodes[k].tag)
            nodes[w - 1].end = nodes[k].end;
        else
            nodes[w++] = nodes[k];
    }
    nn = w;

    /* Retag the free set in place: expand back to front (pieces >= 1 per span, so the write cursor
     * never passes the read one), then merge equal neighbours. The count is an upper bound. */
    uint64_t need = 0;
    for (uint32_t k = 0; k < p->nfree; k++)
        need += node_pieces(nodes, nn, p->free[k].base, p->free[k].end);
    if (need > PMM_MAX_RANGES)
        return PMM_EFULL;
    memcpy(p->nodes, nodes, nn * sizeof(nodes[0]));
    p->nnodes = nn;
    uint32_t wr = (uint32_t)need;
    for (uint32_t k = p->nfree; k-- > 0;) {
        struct pmm_span s = p->free[k];
        uint32_t cnt = node_pieces(nodes, nn, s.base, s.end);
        uint32_t at = wr - cnt;
        int node;
        for (uint64_t c = s.base; c < s.end; at++) {
            uint64_t pe = node_piece(nodes, nn, c, s.end, &node);
            p->free[at] = (struct pmm_span){ c, pe, node };
            c = pe;
        }
        wr -= cnt;
    }
    w = 0;
    for (uint32_t k = 0; k < need; k++) {
        if (w && p->free[w - 1].end == p->free[k].base && p->free[w - 1].tag == p->free[k].tag)
            p->free[w - 1].end = p->free[k].end;
        else
            p->free[w++] = p->free[k];
    }
    p->nfree = w;
    return PMM_OK;
}

/* ---- allocation ---------------------------------------------------------------------------- */

static int alloc_window(struct pmm *p, uint64_t size, uint64_t align, int node, uint64_t lo, uint64_t hi,
                        const char *why, uint64_t *out)
{
    if (!out)
        return PMM_EINVAL;
    if (!IS_POW2(align) || align < PMM_PAGE)
        return PMM_EALIGN;
    if (size == 0 || size > PMM_PHYS_LIMIT || node < -1 || node >= PMM_MAX_NODES)
        return PMM_EINVAL;
    size = ALIGN_UP(size, PMM_PAGE);

    uint64_t a = 0;
    bool found = false;
    for (uint32_t k = 0; k < p->nfree && !found; k++) {
        const struct pmm_span *s = &p->free[k];
        if (node >= 0 && s->tag != node)
            continue;
        uint64_t b = MAX(s->base, lo), lim = MIN(s->end, hi);
        if (b >= lim)
            continue;
        a = ALIGN_UP(b, align); /* b < 2^52 and align <= 2^63: no overflow */
        found = a < lim && lim - a >= size;
    }
    if (!found)
        return (node >= 0 && pmm_total_bytes(p, node) == 0) ? PMM_ENONODE : PMM_ENOMEM;
    int nd = pmm_node_of(p, a);
    if (!rec_room(p, PMM_REC_ALLOC, a, size, nd, why))
        return PMM_ERECFULL;
    int rc = span_paint(p->free, &p->nfree, PMM_MAX_RANGES, a, a + size, HOLE);
    if (rc)
        return rc;
    rec_add(p, PMM_REC_ALLOC, a, size, nd, why);
    *out = a;
    return PMM_OK;
}

int pmm_alloc_tagged(struct pmm *p, uint64_t size, uint64_t align, int node, const char *why, uint64_t *out_phys)
{
    return alloc_window(p, size, align, node, PMM_LOW_LIMIT, PMM_PHYS_LIMIT, why, out_phys);
}

int pmm_alloc(struct pmm *p, uint64_t size, uint64_t align, int node, uint64_t *out_phys)
{
    return pmm_alloc_tagged(p, size, align, node, "alloc", out_phys);
}

int pmm_alloc_low(struct pmm *p, uint64_t size, uint64_t align, const char *why, uint64_t *out_phys)
{
    return alloc_window(p, size, align, -1, 0, PMM_LOW_LIMIT, why, out_phys);
}

int pmm_free(struct pmm *p, uint64_t base, uint64_t size)
{
    if (size == 0 || size > PMM_PHYS_LIMIT || base >= PMM_PHYS_LIMIT || (base & (PMM_PAGE - 1)))
        return PMM_EINVAL;
    size = ALIGN_UP(size, PMM_PAGE);
    uint64_t e = base + size;

    struct pmm_record *r = NULL;
    for (uint32_t k = 0; k < p->nrec; k++) {
        struct pmm_record *q = &p->rec[k];
        if (q->kind == PMM_REC_EXCLUDE && base < q->base + q->len && q->base < e)
            return PMM_EEXCLUDED;
        if (q->kind == PMM_REC_ALLOC && q->base <= base && e <= q->base + q->len)
            r = q;
    }
    if (!r)
        return PMM_ENOTALLOC;
    bool split = r->base < base && e < r->base + r->len;
    if (split && p->nrec >= PMM_MAX_RECORDS)
        return PMM_ERECFULL;
    /* Exact room check: the pieces (one per node) touch no free span but their neighbours, and
     * pieces next to each other differ in node, so their growths add up. */
    int grow = 0, node;
    for (uint64_t c = base; c < e;) {
        uint64_t pe = node_piece(p->nodes, p->nnodes, c, e, &node);
        grow += span_growth(p->free, p->nfree, c, pe, node);
        c = pe;
    }
    if ((int)p->nfree + grow > PMM_MAX_RANGES)
        return PMM_EFULL;
    free_add(p, base, e);

    uint64_t rend = r->base + r->len;
    if (split) {
        struct pmm_record *t = &p->rec[p->nrec++];
        *t = *r;
        t->base = e;
        t->len = rend - e;
        t->node = pmm_node_of(p, e);
        r->len = base - r->base;
    } else if (r->base == base && rend == e) {
        *r = p->rec[--p->nrec]; /* order of records is not meaningful */
    } else if (r->base == base) {
        r->base = e;
        r->len = rend - e;
        r->node = pmm_node_of(p, e);
    } else {
        r->len = base - r->base;
    }
    return PMM_OK;
}

/* ---- queries ------------------------------------------------------------------------------- */

uint64_t pmm_free_bytes(const struct pmm *p, int node)
{
    uint64_t sum = 0;
    for (uint32_t k = 0; k < p->nfree; k++)
        if (node < 0 || p->free[k].tag == node)
            sum += p->free[k].end - p->free[k].base;
    return sum;
}

uint64_t pmm_total_bytes(const struct pmm *p, int node)
{
    uint64_t sum = pmm_free_bytes(p, node);
    for (uint32_t k = 0; k < p->nrec; k++)
        if (p->rec[k].kind == PMM_REC_ALLOC)
            sum += node_bytes(p, p->rec[k].base, p->rec[k].base + p->rec[k].len, node);
    return sum;
}

uint64_t pmm_largest_free(const struct pmm *p, int node, uint64_t align)
{
    if (!IS_POW2(align) || align < PMM_PAGE)
        return 0;
    uint64_t best = 0;
    for (uint32_t k = 0; k < p->nfree; k++) {
        const struct pmm_span *s = &p->free[k];
        if (node >= 0 && s->tag != node)
            continue;
        uint64_t b = MAX(s->base, PMM_LOW_LIMIT);
        if (b >= s->end)
            continue;
        uint64_t a = ALIGN_UP(b, align);
        if (a < s->end && s->end - a > best)
            best = s->end - a;
    }
    return best;
}

size_t pmm_ranges(const struct pmm *p, struct pmm_range *out, size_t max)
{
    for (size_t k = 0; k < p->nfree && k < max; k++)
        out[k] = (struct pmm_range){ p->free[k].base, p->free[k].end - p->free[k].base, p->free[k].tag };
    return p->nfree;
}

size_t pmm_records(const struct pmm *p, struct pmm_record *out, size_t max)
{
    for (size_t k = 0; k < p->nrec && k < max; k++)
        out[k] = p->rec[k];
    return p->nrec;
}

size_t pmm_map_ranges(const struct pmm *p, struct pmm_map_range *out, size_t max)
{
    for (size_t k = 0; k < p->nmap && k < max; k++)
        out[k] = (struct pmm_map_range){ p->map[k].base, p->map[k].end - p->map[k].base, p->map[k].tag };
    return p->nmap;
}

uint64_t pmm_ram_top(const struct pmm *p)
{
    for (uint32_t k = p->nmap; k-- > 0;)
        if (p->map[k].tag == PMM_MAP_RAM)
            return p->map[k].end;
    return 0;
}

uint64_t pmm_usable_ram_top(const struct pmm *p)
{
    uint64_t top = p->nfree ? p->free[p->nfree - 1].end : 0;
    for (uint32_t k = 0; k < p->nrec; k++)
        if (p->rec[k].kind == PMM_REC_ALLOC)
            top = MAX(top, p->rec[k].base + p->rec[k].len);
    return top;
}

const char *pmm_strerror(int err)
{
    switch (err) {
    case PMM_OK: return "ok";
    case PMM_EINVAL: return "invalid argument";
    case PMM_EALIGN: return "alignment must be a power of two >= 4096";
    case PMM_ENOMEM: return "no free range fits";
    case PMM_ENONODE: return "node has no memory";
    case PMM_EFULL: return "range table full";
    case PMM_ERECFULL: return "record table full";
    case PMM_ENOTALLOC: return "range was not allocated";
    case PMM_EEXCLUDED: return "range overlaps an exclusion";
    case PMM_ESTATE: return "memory map already added";
    default: return "unknown pmm error";
    }
}
