/* chain.c - builds pointer-chase cycles in a caller buffer (see chain.h for the modes). */
#include "measure/chain.h"
#include "measure/rand.h"

/* The parameters reduced to units: a unit is a line (RANDOM), a page (PAGE) or a stride block (STRIDE). */
struct chain_geom {
    size_t line;
    size_t unit_bytes;
    size_t units;
    size_t lines_per_unit;
    size_t used_per_unit;
    size_t n;
};

static bool chain_geom(const struct chain_params *p, struct chain_geom *g)
{
    if (!p)
        return false;
    g->line = p->line ? p->line : CHAIN_DEFAULT_LINE;
    if (!IS_POW2(g->line) || g->line < sizeof(void *))
        return false;
    switch (p->mode) {
    case CHAIN_RANDOM:
        g->unit_bytes = g->line;
        break;
    case CHAIN_PAGE:
        g->unit_bytes = p->page ? p->page : CHAIN_DEFAULT_PAGE;
        if (!IS_POW2(g->unit_bytes) || g->unit_bytes < g->line)
            return false;
        break;
    case CHAIN_STRIDE:
        g->unit_bytes = p->stride;
        if (g->unit_bytes < g->line || g->unit_bytes % g->line != 0)
            return false;
        break;
    default:
        return false;
    }
    g->lines_per_unit = g->unit_bytes / g->line;
    g->used_per_unit = g->lines_per_unit;
    if (p->mode != CHAIN_RANDOM && p->lines_per_page) {
        if (p->lines_per_page > g->lines_per_unit)
            return false;
        g->used_per_unit = p->lines_per_page;
    }
    g->units = p->bytes / g->unit_bytes;
    if (g->units == 0)
        return false;
    /* units * used <= bytes / line, so this cannot overflow. */
    g->n = g->units * g->used_per_unit;
    if (g->n > CHAIN_MAX_ELEMS)
        return false;
    return true;
}

static size_t chain_scratch_for(const struct chain_params *p, const struct chain_geom *g)
{
    switch (p->mode) {
    case CHAIN_RANDOM:
        return g->n * sizeof(uint32_t);
    case CHAIN_PAGE:
        return (g->units + g->lines_per_unit) * sizeof(uint32_t);
    default:
        return 0;
    }
}

size_t chain_scratch_bytes(const struct chain_params *p)
{
    struct chain_geom g;
    if (!chain_geom(p, &g))
        return SIZE_MAX;
    return chain_scratch_for(p, &g);
}

/* Sattolo's algorithm: a[] becomes a uniformly chosen cyclic permutation, read as "successor of i is
 * a[i]". Unlike Fisher-Yates (j <= i) it never lets an element stay put, which is what makes one cycle. */
static void sattolo(uint32_t *a, size_t n, struct rand *r)
{
    struct rand l = *r; /* a local copy: the generator's state stays in registers through the loop */
    for (size_t i = 0; i < n; i++)
        a[i] = (uint32_t)i;
    for (size_t i = n - 1; i > 0; i--) {
        size_t j = (size_t)rand_below(&l, i);
        uint32_t t = a[i];
        a[i] = a[j];
        a[j] = t;
    }
    *r = l;
}

/* Appends element e to the chain being threaded through *prev. */
static ALWAYS_INLINE void chain_link(void ***prev, char **first, char *e)
{
    if (*prev)
        **prev = e;
    else
        *first = e;
    *prev = (void **)e;
}

static char *build_random(char *base, const struct chain_geom *g, uint32_t *a, struct rand *r)
{
    sattolo(a, g->n, r);
    /* Successor form lets the pointers be written in address order (one sequential pass). */
    for (size_t i = 0; i < g->n; i++)
        *(void **)(base + i * g->line) = base + (size_t)a[i] * g->line;
    return base;
}

/* Page u's generator: a stream of its own from the seed, so that any page's line order can be drawn without
 * drawing the others first. */
static void page_rand(uint64_t seed, size_t u, struct rand *r)
{
    uint64_t x = seed ^ (0xA24BAED4963EE407ull * (uint64_t)(u + 1));
    rand_seed(r, splitmix64_next(&x));
}

/* Page u's used lines in visiting order: a partial Fisher-Yates of its lines with page u's generator (the first
 * `used` entries of ln become a uniformly random ordered subset). */
static void page_lines(uint64_t seed, size_t u, const struct chain_geom *g, uint32_t *ln)
{
    struct rand r;
    page_rand(seed, u, &r);
    for (size_t k = 0; k < g->lines_per_unit; k++)
        ln[k] = (uint32_t)k;
    for (size_t k = 0; k < g->used_per_unit; k++) {
        size_t j = k + (size_t)rand_below(&r, g->lines_per_unit - k);
        uint32_t t = ln[k];
        ln[k] = ln[j];
        ln[j] = t;
    }
}

/* The first line page u visits: the first draw of page_lines (ln[0] of an identity swapped with ln[j]). */
static size_t page_first(uint64_t seed, size_t u, const struct chain_geom *g)
{
    struct rand r;
    page_rand(seed, u, &r);
    return (size_t)rand_below(&r, g->lines_per_unit);
}

/* Writes pages [lo, hi): each page's used lines linked in page u's own random order (ln: lines_per_unit entries of
 * scratch), its last line to the first line of the next page in the cycle (next_page[u]). Every link of page u
 * lies inside page u, and the links depend on the seed and the cycle alone: disjoint ranges may be written in
 * any order, at the same time. */
static void write_pages(char *base, const struct chain_geom *g, const uint32_t *next_page, uint32_t *ln, uint64_t seed,
                        size_t lo, size_t hi, uint32_t *tail)
{
    for (size_t u = lo; u < hi; u++) {
        char *pbase = base + u * g->unit_bytes;
        page_lines(seed, u, g, ln);
        for (size_t k = 0; k + 1 < g->used_per_unit; k++)
            *(void **)(pbase + (size_t)ln[k] * g->line) = pbase + (size_t)ln[k + 1] * g->line;
        size_t v = next_page[u];
        if (tail)
            tail[u] = (uint32_t)(u * g->lines_per_unit + ln[g->used_per_unit - 1]);
        *(void **)(pbase + (size_t)ln[g->used_per_unit - 1] * g->line) =
            base + v * g->unit_bytes + page_first(seed, v, g) * g->line;
    }
}

/* Pages in one Sattolo cycle (next_page[u]: the page after u), each page's used lines in their own random
 * order, its last line linked to the first line of the next page. Written page by page in address order, each
 * page's links inside that page: one pass over the buffer instead of a jump to a random page per page (the
 * chain depends on the seed alone, not on the order the pages are written in). */
static char *build_page(char *base, const struct chain_geom *g, uint32_t *scratch, uint64_t seed, struct rand *r)
{
    uint32_t *next_page = scratch;
    sattolo(next_page, g->units, r);
    write_pages(base, g, next_page, scratch + g->units, seed, 0, g->units, NULL);
    return base + page_first(seed, 0, g) * g->line;
}

static char *build_stride(char *base, const struct chain_geom *g)
{
    void **prev = NULL;
    char *first = NULL;
    bool rotate = g->used_per_unit < g->lines_per_unit;

    for (size_t b = 0; b < g->units; b++) {
        size_t start = rotate ? b % g->lines_per_unit : 0;
        for (size_t k = 0; k < g->used_per_unit; k++) {
            size_t idx = (start + k) % g->lines_per_unit;
            chain_link(&prev, &first, base + b * g->unit_bytes + idx * g->line);
        }
    }
    *prev = first;
    return first;
}

void *chain_build(void *buf, const struct chain_params *p, void *scratch, size_t scratch_bytes,
                  size_t *n_elems)
{
    struct chain_geom g;
    struct rand r;
    char *start;

    if (!buf || !chain_geom(p, &g))
        return NULL;
    if ((uintptr_t)buf % g.line != 0)
        return NULL;
    if (p->mode == CHAIN_PAGE && (uintptr_t)buf % g.unit_bytes != 0)
        return NULL;
    size_t need = chain_scratch_for(p, &g);
    if (need > 0 && (!scratch || scratch_bytes < need || (uintptr_t)scratch % sizeof(uint32_t) != 0))
        return NULL;

    rand_seed(&r, p->seed);
    switch (p->mode) {
    case CHAIN_RANDOM:
        start = build_random(buf, &g, scratch, &r);
        break;
    case CHAIN_PAGE:
        start = build_page(buf, &g, scratch, p->seed, &r);
        break;
    default:
        start = build_stride(buf, &g);
        break;
    }
    if (n_elems)
        *n_elems = g.n;
    return start;
}

/* The first `steps` links of a chain of n_elems from start (steps <= n_elems): every element inside
 * [buf, buf + bytes) and pointer-aligned, none leading back to start before the n_elems-th, and, when the whole
 * chain is walked (steps == n_elems), back at start after it. *h (when given) takes each element's offset into
 * FNV-1a. chain_verify walks it whole; chain_digest the prefix it hashes. */
static bool chain_walk(const void *start, size_t n_elems, size_t steps, const void *buf, size_t bytes,
                       uint64_t *h)
{
    const char *lo = buf;
    const void *p = start;

    if (!start || !buf || n_elems == 0 || bytes < sizeof(void *))
        return false;
    for (size_t i = 1; i <= steps; i++) {
        const char *c = p;
        if (c < lo || (size_t)(c - lo) > bytes - sizeof(void *) || (uintptr_t)c % sizeof(void *) != 0)
            return false;
        if (h) {
            uint64_t off = (uint64_t)(c - lo);
            for (int b = 0; b < 8; b++)
                *h = (*h ^ ((off >> (8 * b)) & 0xff)) * 0x100000001b3ull;
        }
        p = *(const void *const *)p;
        if (p == start && i != n_elems)
            return false;
    }
    return steps < n_elems || p == start;
}

bool chain_verify(const void *start, size_t n_elems, const void *buf, size_t bytes)
{
    return chain_walk(start, n_elems, n_elems, buf, bytes, NULL);
}

uint64_t chain_digest(const void *start, size_t n_elems, const void *buf, size_t bytes)
{
    uint64_t h = 0xcbf29ce484222325ull; /* FNV-1a 64-bit offset basis and prime */
    if (!chain_walk(start, n_elems, MIN(n_elems, (size_t)CHAIN_DIGEST_LINKS), buf, bytes, &h))
        return 0;
    return h ? h : 1;
}

/* ---- CHAIN_RANDOM in parts (chain.h) ---------------------------------------------------------------------- */

static size_t slice_lo(const struct chain_par *c, unsigned w)
{
    return (size_t)((uint64_t)c->n * w / CHAIN_PAR_PARTS); /* n < 2^32 */
}

/* Part w's generator for step s: distinct streams from one seed. */
static void part_rand(const struct chain_par *c, unsigned s, unsigned w, struct rand *r)
{
    uint64_t x = c->seed ^ (0xD1B54A32D192ED03ull * (uint64_t)(s * CHAIN_PAR_PARTS + w + 1));
    rand_seed(r, splitmix64_next(&x));
}

int chain_par_init(struct chain_par *c, void *buf, const struct chain_params *p, void *scratch, size_t scratch_bytes)
{
    struct chain_geom g;
    if (!c || !buf || !p || p->mode != CHAIN_RANDOM || !chain_geom(p, &g) || (uintptr_t)buf % g.line != 0)
        return -1;
    size_t need = chain_scratch_for(p, &g);
    if (!scratch || scratch_bytes < need || (uintptr_t)scratch % sizeof(uint32_t) != 0)
        return -1;
    c->base = buf;
    c->line = g.line;
    c->n = g.n;
    c->order = scratch;
    c->seed = p->seed;
    /* The table ends where the chain does, 4-byte aligned (n x line is a multiple of 8); line i's link,
     * [line x i, line x i + 8), lies below it for i < head. */
    size_t table_at = g.n * g.line - g.n * sizeof(uint32_t);
    c->table = (uint32_t *)(c->base + table_at);
    c->head = table_at >= sizeof(void *) ? (table_at - sizeof(void *)) / g.line + 1 : 0;
    for (unsigned w = 0; w < CHAIN_PAR_PARTS; w++)
        for (unsigned b = 0; b < CHAIN_PAR_PARTS; b++)
            c->at[w][b] = 0;
    return 0;
}

void chain_par_place(struct chain_par *c)
{
    uint32_t pos = 0;
    for (unsigned b = 0; b < CHAIN_PAR_PARTS; b++) {
        c->from[b] = pos;
        for (unsigned w = 0; w < CHAIN_PAR_PARTS; w++) {
            uint32_t k = c->at[w][b];
            c->at[w][b] = pos;
            pos += k;
        }
    }
    c->from[CHAIN_PAR_PARTS] = pos;
}

void chain_par_step(struct chain_par *c, enum chain_par_step step, unsigned part)
{
    struct rand r;
    if (part >= CHAIN_PAR_PARTS)
        return;
    size_t lo = slice_lo(c, part), hi = slice_lo(c, part + 1);
    uint32_t *at = c->at[part];
    switch (step) {
    case CHAIN_PAR_COUNT:
        part_rand(c, 0, part, &r);
        for (size_t i = lo; i < hi; i++)
            at[rand_next(&r) >> 58]++; /* top 6 bits: one of 64 buckets, exactly uniform */
        break;
    case CHAIN_PAR_SCATTER:
        part_rand(c, 0, part, &r); /* the same draws as CHAIN_PAR_COUNT */
        for (size_t i = lo; i < hi; i++)
            c->order[at[rand_next(&r) >> 58]++] = (uint32_t)i;
        break;
    case CHAIN_PAR_SHUFFLE: {
        uint32_t *a = c->order + c->from[part];
        size_t m = c->from[part + 1] - c->from[part];
        part_rand(c, 1, part, &r);
        for (size_t i = m; i > 1; i--) { /* Fisher-Yates: j <= i - 1 */
            size_t j = (size_t)rand_below(&r, i);
            uint32_t t = a[i - 1];
            a[i - 1] = a[j];
            a[j] = t;
        }
        break;
    }
    case CHAIN_PAR_LINK:
        for (size_t j = lo; j < hi; j++) {
            size_t next = j + 1 < c->n ? j + 1 : 0;
            *(void **)(c->base + (size_t)c->order[j] * c->line) = c->base + (size_t)c->order[next] * c->line;
        }
        break;
    case CHAIN_PAR_SUCC:
        for (size_t j = lo; j < hi; j++)
            c->table[c->order[j]] = c->order[j + 1 < c->n ? j + 1 : 0];
        break;
    case CHAIN_PAR_WRITE: {
        /* slice w of the head lines: entries only read, links only below the table, so slices run at once */
        size_t wlo = (size_t)((uint64_t)c->head * part / CHAIN_PAR_PARTS); /* head < 2^32 */
        size_t whi = (size_t)((uint64_t)c->head * (part + 1) / CHAIN_PAR_PARTS);
        for (size_t i = wlo; i < whi; i++)
            *(void **)(c->base + i * c->line) = c->base + (size_t)c->table[i] * c->line;
        break;
    }
    case CHAIN_PAR_TAIL:
        /* Line i's link ends at line x i + 8 <= table + 4 x (i + 1) for every line >= 8 bytes (i < n), so
         * writing in ascending order reads each entry before a link covers it. */
        if (part != 0)
            break;
        for (size_t i = c->head; i < c->n; i++) {
            uint32_t next = c->table[i];
            /* the entry is read before the link that may cover it is stored (a uint32 load and a pointer store:
             * under type-based alias analysis the compiler could otherwise swap them) */
            __asm__ __volatile__("" ::: "memory");
            *(void **)(c->base + i * c->line) = c->base + (size_t)next * c->line;
        }
        break;
    }
}

_Static_assert(CHAIN_PAR_PARTS == 64, "CHAIN_PAR_COUNT takes the bucket from the top 6 bits of a draw");

void *chain_par_start(const struct chain_par *c, size_t *n_elems)
{
    if (n_elems)
        *n_elems = c->n;
    return c->base + (size_t)c->order[0] * c->line;
}

static void *par_build(void *buf, const struct chain_params *p, void *scratch, size_t scratch_bytes, size_t *n_elems,
                       bool table)
{
    static struct chain_par c; /* 16 KiB of counts: not on a small stack */
    if (chain_par_init(&c, buf, p, scratch, scratch_bytes) != 0)
        return NULL;
    for (unsigned w = 0; w < CHAIN_PAR_PARTS; w++)
        chain_par_step(&c, CHAIN_PAR_COUNT, w);
    chain_par_place(&c);
    static const enum chain_par_step direct[] = {CHAIN_PAR_SCATTER, CHAIN_PAR_SHUFFLE, CHAIN_PAR_LINK};
    static const enum chain_par_step by_table[] = {CHAIN_PAR_SCATTER, CHAIN_PAR_SHUFFLE, CHAIN_PAR_SUCC,
                                                   CHAIN_PAR_WRITE, CHAIN_PAR_TAIL};
    const enum chain_par_step *rest = table ? by_table : direct;
    size_t steps = table ? ARRAY_SIZE(by_table) : ARRAY_SIZE(direct);
    for (size_t s = 0; s < steps; s++)
        for (unsigned w = 0; w < CHAIN_PAR_PARTS; w++)
            chain_par_step(&c, rest[s], w);
    return chain_par_start(&c, n_elems);
}

void *chain_par_build(void *buf, const struct chain_params *p, void *scratch, size_t scratch_bytes, size_t *n_elems)
{
    return par_build(buf, p, scratch, scratch_bytes, n_elems, false);
}

void *chain_par_build_table(void *buf, const struct chain_params *p, void *scratch, size_t scratch_bytes,
                            size_t *n_elems)
{
    return par_build(buf, p, scratch, scratch_bytes, n_elems, true);
}

/* ---- CHAIN_PAGE in parts (chain.h) ------------------------------------------------------------------------ */

static void page_par_geom(const struct chain_page_par *c, struct chain_geom *g)
{
    *g = (struct chain_geom){.line = c->line, .unit_bytes = c->page, .units = c->pages,
                             .lines_per_unit = c->lines_per_page, .used_per_unit = c->used, .n = c->n};
}

size_t chain_page_par_scratch_bytes(const struct chain_params *p)
{
    struct chain_geom g;
    if (!p || p->mode != CHAIN_PAGE || !chain_geom(p, &g))
        return SIZE_MAX;
    if (g.lines_per_unit > (SIZE_MAX / sizeof(uint32_t) - g.units) / CHAIN_PAR_PARTS)
        return SIZE_MAX; /* a page of more lines than any scratch could hold */
    return (g.units + (size_t)CHAIN_PAR_PARTS * g.lines_per_unit) * sizeof(uint32_t);
}

int chain_page_par_init(struct chain_page_par *c, void *buf, const struct chain_params *p, void *scratch,
                        size_t scratch_bytes)
{
    struct chain_geom g;
    struct rand r;
    if (!c || !buf || !p || p->mode != CHAIN_PAGE || !chain_geom(p, &g) || (uintptr_t)buf % g.unit_bytes != 0)
        return -1;
    size_t need = chain_page_par_scratch_bytes(p);
    if (!scratch || scratch_bytes < need || (uintptr_t)scratch % sizeof(uint32_t) != 0)
        return -1;
    c->base = buf;
    c->line = g.line;
    c->page = g.unit_bytes;
    c->pages = g.units;
    c->lines_per_page = g.lines_per_unit;
    c->used = g.used_per_unit;
    c->n = g.n;
    c->next_page = scratch;
    c->ln = (uint32_t *)scratch + g.units;
    c->seed = p->seed;
    c->tail = NULL;
    rand_seed(&r, p->seed); /* the generator and draws of chain_build's CHAIN_PAGE: the same page cycle */
    sattolo(c->next_page, g.units, &r);
    return 0;
}

void chain_page_par_part(struct chain_page_par *c, unsigned part)
{
    struct chain_geom g;
    if (part >= CHAIN_PAR_PARTS)
        return;
    page_par_geom(c, &g);
    size_t lo = (size_t)((uint64_t)c->pages * part / CHAIN_PAR_PARTS); /* pages < 2^32 */
    size_t hi = (size_t)((uint64_t)c->pages * (part + 1) / CHAIN_PAR_PARTS);
    write_pages(c->base, &g, c->next_page, c->ln + (size_t)part * c->lines_per_page, c->seed, lo, hi, c->tail);
}

void *chain_page_par_start(const struct chain_page_par *c, size_t *n_elems)
{
    struct chain_geom g;
    page_par_geom(c, &g);
    if (n_elems)
        *n_elems = c->n;
    return c->base + page_first(c->seed, 0, &g) * c->line;
}

void *chain_page_par_build(void *buf, const struct chain_params *p, void *scratch, size_t scratch_bytes,
                           size_t *n_elems)
{
    struct chain_page_par c;
    if (chain_page_par_init(&c, buf, p, scratch, scratch_bytes) != 0)
        return NULL;
    for (unsigned w = 0; w < CHAIN_PAR_PARTS; w++)
        chain_page_par_part(&c, w);
    return chain_page_par_start(&c, n_elems);
}

/* ---- relinking a built chain (chain.h) -------------------------------------------------------------------- */

int chain_page_par_segs(const struct chain_page_par *c, struct chain_segs *s, uint32_t *mem)
{
    struct chain_geom g;
    if (!c || !s || !mem || c->tail != mem + c->pages)
        return -1;
    page_par_geom(c, &g);
    *s = (struct chain_segs){.base = c->base, .line = c->line, .n = c->pages, .per = c->used, .total = c->n,
                             .head = mem, .tail = c->tail, .order = mem + 2 * c->pages};
    for (size_t u = 0; u < c->pages; u++)
        s->head[u] = (uint32_t)(u * c->lines_per_page + page_first(c->seed, u, &g));
    return 0;
}

int chain_par_segs(const struct chain_par *c, size_t m, struct chain_segs *s, uint32_t *mem)
{
    if (!c || !s || !mem || m == 0 || m > c->n)
        return -1;
    *s = (struct chain_segs){.base = c->base, .line = c->line, .n = m, .per = c->n % m ? 0 : c->n / m,
                             .total = c->n, .head = mem, .tail = mem + m, .order = mem + 2 * m};
    for (size_t k = 0; k < m; k++) {
        size_t lo = (size_t)((uint64_t)c->n * k / m), hi = (size_t)((uint64_t)c->n * (k + 1) / m); /* n < 2^32 */
        s->head[k] = c->order[lo];
        s->tail[k] = c->order[hi - 1];
    }
    return 0;
}

void *chain_relink(const struct chain_segs *s, size_t lo, size_t count, uint64_t seed, size_t first, size_t strata,
                   size_t *n_elems)
{
    struct rand r;
    if (!s || !s->base || count == 0 || lo > s->n || count > s->n - lo || (count < s->n && !s->per) || strata == 0)
        return NULL;
    /* a stream of its own: not the build's page cycle when the seed is the build's */
    uint64_t x = seed ^ 0x5EC7A11CE5EEDull;
    rand_seed(&r, splitmix64_next(&x));
    /* The visiting order: the window's segments of stratum `first` (absolute index mod strata), shuffled, then the
     * others, shuffled (Fisher-Yates each); with one stratum a uniformly random order, so a uniformly random
     * cycle. */
    uint32_t *v = s->order;
    size_t m = 0;
    for (size_t i = 0; i < count; i++)
        if ((lo + i) % strata == first % strata)
            v[m++] = (uint32_t)i;
    size_t head_n = m;
    for (size_t i = 0; i < count; i++)
        if ((lo + i) % strata != first % strata)
            v[m++] = (uint32_t)i;
    for (size_t part = 0; part < 2; part++) {
        uint32_t *a = part ? v + head_n : v;
        size_t k = part ? count - head_n : head_n;
        for (size_t i = k; i > 1; i--) {
            size_t j = (size_t)rand_below(&r, i);
            uint32_t t = a[i - 1];
            a[i - 1] = a[j];
            a[j] = t;
        }
    }
    for (size_t i = 0; i < count; i++) {
        size_t next = v[i + 1 < count ? i + 1 : 0];
        *(void **)(s->base + (size_t)s->tail[lo + v[i]] * s->line) = s->base + (size_t)s->head[lo + next] * s->line;
    }
    if (n_elems)
        *n_elems = count == s->n ? s->total : count * s->per;
    return s->base + (size_t)s->head[lo + v[0]] * s->line;
}
