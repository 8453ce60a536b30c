/* test_chain.c - pointer chains: one cycle over exactly the selected lines, page locality, rotation. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <pthread.h>
#include <cmocka.h>

#include "measure/chain.h"

/* A page-aligned buffer and enough scratch for any mode. */
struct arena {
    char *buf;
    size_t bytes;
    uint32_t *scratch;
    size_t scratch_bytes;
};

static struct arena arena_new(size_t bytes, size_t align, size_t scratch_bytes)
{
    struct arena a;
    a.bytes = bytes;
    a.buf = aligned_alloc(align, ALIGN_UP(bytes, align));
    assert_non_null(a.buf);
    memset(a.buf, 0xA5, bytes);
    a.scratch_bytes = scratch_bytes;
    a.scratch = scratch_bytes ? malloc(scratch_bytes) : NULL;
    return a;
}

static void arena_free(struct arena *a)
{
    free(a->buf);
    free(a->scratch);
}

typedef bool (*selected_fn)(size_t line_index, const void *ctx);

/* Walks n_elems links from start. Every element must be a selected line start inside the buffer, seen
 * once; the walk must be back at start after exactly n_elems steps and every selected line must have
 * been seen. Returns the visit order (line indices) in order[] when non-NULL. */
static void check_cycle(const struct arena *a, const void *start, size_t n_elems, size_t line, selected_fn sel,
                        const void *ctx, size_t *order)
{
    size_t lines = a->bytes / line;
    uint8_t *seen = calloc(lines, 1);
    const char *p = start;
    size_t selected = 0;
    for (size_t i = 0; i < lines; i++)
        selected += sel(i, ctx);
    assert_int_equal(selected, n_elems);

    for (size_t i = 0; i < n_elems; i++) {
        assert_true(p >= a->buf && p < a->buf + lines * line);
        size_t off = (size_t)(p - a->buf);
        assert_int_equal(off % line, 0);
        size_t idx = off / line;
        assert_true(sel(idx, ctx));
        assert_false(seen[idx]);
        seen[idx] = 1;
        if (order)
            order[i] = idx;
        p = *(char *const *)p;
    }
    assert_ptr_equal(p, start);
    free(seen);
    assert_true(chain_verify(start, n_elems, a->buf, a->bytes));
}

static bool sel_all(size_t i, const void *ctx)
{
    (void)i;
    (void)ctx;
    return true;
}

/* ---- RANDOM ------------------------------------------------------------------------------------ */

static void test_random_single_cycle(void **state)
{
    (void)state;
    static const size_t counts[] = {1, 2, 3, 4, 5, 7, 8, 63, 64, 65, 1000, 4096, 10007};
    static const size_t lines[] = {8, 64, 128};
    static const uint64_t seeds[] = {0, 1, 2, 0xdeadbeefcafeull};
    for (size_t c = 0; c < sizeof(counts) / sizeof(counts[0]); c++) {
        for (size_t l = 0; l < 3; l++) {
            for (size_t s = 0; s < 4; s++) {
                struct chain_params p = {.bytes = counts[c] * lines[l], .line = lines[l], .mode = CHAIN_RANDOM,
                                         .seed = seeds[s]};
                size_t need = chain_scratch_bytes(&p);
                assert_int_equal(need, counts[c] * 4);
                struct arena a = arena_new(p.bytes, 4096, need);
                size_t n = 0;
                void *start = chain_build(a.buf, &p, a.scratch, need, &n);
                assert_ptr_equal(start, a.buf);
                assert_int_equal(n, counts[c]);
                check_cycle(&a, start, n, lines[l], sel_all, NULL, NULL);
                arena_free(&a);
            }
        }
    }
}

/* Bytes that are not a whole number of lines: the tail is not used and not written. */
static void test_random_partial_line(void **state)
{
    (void)state;
    struct chain_params p = {.bytes = 10 * 64 + 40, .line = 0 /* default 64 */, .mode = CHAIN_RANDOM, .seed = 1};
    struct arena a = arena_new(p.bytes, 64, 4096);
    size_t n = 0;
    assert_non_null(chain_build(a.buf, &p, a.scratch, a.scratch_bytes, &n));
    assert_int_equal(n, 10);
    for (size_t i = 640; i < p.bytes; i++)
        assert_int_equal((uint8_t)a.buf[i], 0xA5);
    arena_free(&a);
}

/* A random chain must not walk the buffer in order (which a prefetcher would catch). */
static void test_random_is_scattered(void **state)
{
    (void)state;
    struct chain_params p = {.bytes = 4096 * 64, .line = 64, .mode = CHAIN_RANDOM, .seed = 11};
    struct arena a = arena_new(p.bytes, 4096, chain_scratch_bytes(&p));
    size_t n;
    void *start = chain_build(a.buf, &p, a.scratch, a.scratch_bytes, &n);
    assert_non_null(start);
    size_t adjacent = 0;
    for (size_t i = 0; i < n; i++) {
        char *e = a.buf + i * 64;
        char *next = *(char **)e;
        adjacent += (next == e + 64 || next == e - 64);
    }
    assert_true(adjacent < n / 100); /* about 2 expected */
    arena_free(&a);
}

typedef void *(*chain_build_fn)(void *buf, const struct chain_params *p, void *scratch, size_t scratch_bytes,
                                size_t *n_elems);

/* A random cycle builder draws each of the (n-1)! cycles with equal probability: for n = 4, six cycles of
 * 6000 builds, ~1000 each. */
static void assert_uniform_cycles_of_4(chain_build_fn build)
{
    int counts[4 * 4 * 4 * 4] = {0};
    struct arena a = arena_new(4 * 64, 64, 16);
    for (uint64_t seed = 0; seed < 6000; seed++) {
        struct chain_params p = {.bytes = 4 * 64, .line = 64, .mode = CHAIN_RANDOM, .seed = seed};
        assert_non_null(build(a.buf, &p, a.scratch, 16, NULL));
        int key = 0;
        for (int i = 0; i < 4; i++)
            key = key * 4 + (int)((*(char **)(a.buf + i * 64) - a.buf) / 64);
        counts[key]++;
    }
    int distinct = 0;
    for (int k = 0; k < 256; k++) {
        if (counts[k]) {
            distinct++;
            assert_in_range(counts[k], 850, 1150);
        }
    }
    assert_int_equal(distinct, 6);
    arena_free(&a);
}

/* Sattolo draws each of the (n-1)! cycles with equal probability. */
static void test_random_uniform_cycles(void **state)
{
    (void)state;
    assert_uniform_cycles_of_4(chain_build);
}

/* ---- PAGE -------------------------------------------------------------------------------------- */

struct page_sel {
    const struct arena *a;
    size_t line, page;
    size_t used;      /* expected used lines per page */
    uint8_t *is_used; /* filled by the test from the chain itself, then checked for counts */
};

static bool sel_page(size_t i, const void *ctx)
{
    const struct page_sel *s = ctx;
    return s->is_used[i];
}

/* Checks page mode: each page has exactly `used` lines in the chain, and the walk stays inside a page
 * until all of its lines are visited, entering each page once. */
static void check_page_chain(const struct arena *a, const void *start, size_t n, size_t line, size_t page,
                             size_t used)
{
    size_t lines = a->bytes / line, per_page = page / line, pages = a->bytes / page;
    struct page_sel s = {a, line, page, used, calloc(lines, 1)};
    size_t *order = malloc(n * sizeof(size_t));
    assert_int_equal(n, pages * used);

    /* Mark what the chain reaches, then hold it to the full cycle check. */
    const char *p = start;
    for (size_t i = 0; i < n; i++) {
        assert_true(p >= a->buf && p < a->buf + a->bytes);
        s.is_used[(size_t)(p - a->buf) / line] = 1;
        p = *(char *const *)p;
    }
    for (size_t pg = 0; pg < pages; pg++) {
        size_t cnt = 0;
        for (size_t k = 0; k < per_page; k++)
            cnt += s.is_used[pg * per_page + k];
        assert_int_equal(cnt, used);
    }
    check_cycle(a, start, n, line, sel_page, &s, order);

    uint8_t *entered = calloc(pages, 1);
    for (size_t i = 0; i < n; i += used) {
        size_t pg = order[i] / per_page;
        assert_false(entered[pg]);
        entered[pg] = 1;
        for (size_t k = 1; k < used; k++)
            assert_int_equal(order[i + k] / per_page, pg);
    }
    free(entered);
    free(order);
    free(s.is_used);
}

static void test_page_mode(void **state)
{
    (void)state;
    static const size_t pages[] = {1, 2, 3, 17, 64};
    static const size_t lpp[] = {0, 1, 2, 7, 64};
    for (size_t i = 0; i < 5; i++) {
        for (size_t j = 0; j < 5; j++) {
            for (uint64_t seed = 0; seed < 3; seed++) {
                struct chain_params p = {.bytes = pages[i] * 4096, .line = 64, .page = 4096, .mode = CHAIN_PAGE,
                                         .lines_per_page = lpp[j], .seed = seed};
                size_t need = chain_scratch_bytes(&p);
                assert_int_equal(need, 4 * (pages[i] + 64));
                struct arena a = arena_new(p.bytes, 4096, need);
                size_t n = 0;
                void *start = chain_build(a.buf, &p, a.scratch, need, &n);
                assert_non_null(start);
                check_page_chain(&a, start, n, 64, 4096, lpp[j] ? lpp[j] : 64);
                arena_free(&a);
            }
        }
    }
}

/* Other geometries: 2 MiB pages with 4 KiB elements, 8 KiB pages with 128-byte lines. */
static void test_page_mode_geometries(void **state)
{
    (void)state;
    struct chain_params p = {.bytes = 4 << 20, .line = 4096, .page = 2 << 20, .mode = CHAIN_PAGE, .seed = 5};
    struct arena a = arena_new(p.bytes, 2 << 20, chain_scratch_bytes(&p));
    size_t n;
    void *start = chain_build(a.buf, &p, a.scratch, a.scratch_bytes, &n);
    assert_non_null(start);
    check_page_chain(&a, start, n, 4096, 2 << 20, 512);
    arena_free(&a);

    struct chain_params q = {.bytes = 10 * 8192 + 100, .line = 128, .page = 8192, .mode = CHAIN_PAGE,
                             .lines_per_page = 3, .seed = 6};
    a = arena_new(q.bytes, 8192, chain_scratch_bytes(&q));
    start = chain_build(a.buf, &q, a.scratch, a.scratch_bytes, &n);
    assert_non_null(start);
    a.bytes = 10 * 8192; /* the partial page at the end is not used */
    check_page_chain(&a, start, n, 128, 8192, 3);
    arena_free(&a);
}

/* One line per page: the line offsets must vary across pages (not all line 0: set conflicts). */
static void test_page_one_line_spread(void **state)
{
    (void)state;
    struct chain_params p = {.bytes = 256 * 4096, .line = 64, .page = 4096, .mode = CHAIN_PAGE, .lines_per_page = 1,
                             .seed = 9};
    struct arena a = arena_new(p.bytes, 4096, chain_scratch_bytes(&p));
    size_t n;
    char *start = chain_build(a.buf, &p, a.scratch, a.scratch_bytes, &n);
    assert_non_null(start);
    uint8_t offs[64] = {0};
    const char *q = start;
    for (size_t i = 0; i < n; i++) {
        offs[((size_t)(q - a.buf) % 4096) / 64] = 1;
        q = *(char *const *)q;
    }
    int distinct = 0;
    for (int i = 0; i < 64; i++)
        distinct += offs[i];
    assert_true(distinct > 40); /* 256 draws over 64 offsets: ~63 expected */
    arena_free(&a);
}

/* Page mode draws its two levels uniformly and independently: 3 pages of 4 lines, 2 used per page, 6000 seeds.
 * The pages follow one of the 2 cycles of 3 (~3000 each); each page's ordered pair of lines is one of 12
 * (~500 each); and two pages' pairs are independent (the same pair in pages 0 and 1 ~1/12 of the seeds: a
 * page's order drawn from a generator shared with, or copied from, another page's would show here). */
static void assert_page_mode_uniform(chain_build_fn build, size_t (*scratch_of)(const struct chain_params *))
{
    enum { PAGES = 3, LPP = 4, SEEDS = 6000 };
    struct chain_params p = {.bytes = PAGES * LPP * 64, .line = 64, .page = LPP * 64, .mode = CHAIN_PAGE,
                             .lines_per_page = 2};
    struct arena a = arena_new(p.bytes, LPP * 64, scratch_of(&p));
    int cycle[PAGES] = {0}, pair[PAGES][LPP * LPP] = {{0}}, same01 = 0;
    for (uint64_t seed = 0; seed < SEEDS; seed++) {
        p.seed = seed;
        size_t n = 0;
        const char *q = build(a.buf, &p, a.scratch, a.scratch_bytes, &n);
        assert_non_null(q);
        assert_int_equal(n, PAGES * 2);
        int key[PAGES], next_of_0 = -1;
        for (size_t i = 0; i < n; i += 2) { /* two lines of one page, then the next page */
            size_t l0 = (size_t)(q - a.buf) / 64, l1 = (size_t)(*(char *const *)q - a.buf) / 64;
            assert_int_equal(l0 / LPP, l1 / LPP);
            key[l0 / LPP] = (int)((l0 % LPP) * LPP + l1 % LPP);
            q = *(char *const *)*(char *const *)q;
            if (l0 / LPP == 0)
                next_of_0 = (int)((size_t)(q - a.buf) / 64 / LPP);
        }
        cycle[next_of_0]++;
        for (int u = 0; u < PAGES; u++)
            pair[u][key[u]]++;
        same01 += key[0] == key[1];
    }
    assert_int_equal(cycle[0], 0);
    assert_in_range(cycle[1], 2800, 3200);
    assert_in_range(cycle[2], 2800, 3200);
    for (int u = 0; u < PAGES; u++)
        for (int k = 0; k < LPP * LPP; k++) {
            if (k / LPP == k % LPP)
                assert_int_equal(pair[u][k], 0);
            else
                assert_in_range(pair[u][k], 400, 600);
        }
    assert_in_range(same01, 400, 600);
    arena_free(&a);
}

static void test_page_mode_uniform(void **state)
{
    (void)state;
    assert_page_mode_uniform(chain_build, chain_scratch_bytes);
}

/* Lines a chain does not use keep their contents. */
static void test_page_unused_lines_untouched(void **state)
{
    (void)state;
    struct chain_params p = {.bytes = 8 * 4096, .line = 64, .page = 4096, .mode = CHAIN_PAGE, .lines_per_page = 2,
                             .seed = 3};
    struct arena a = arena_new(p.bytes, 4096, chain_scratch_bytes(&p));
    size_t n;
    char *start = chain_build(a.buf, &p, a.scratch, a.scratch_bytes, &n);
    assert_non_null(start);
    uint8_t *used = calloc(p.bytes / 64, 1);
    const char *q = start;
    for (size_t i = 0; i < n; i++) {
        used[(size_t)(q - a.buf) / 64] = 1;
        q = *(char *const *)q;
    }
    for (size_t l = 0; l < p.bytes / 64; l++) {
        if (used[l]) {
            for (size_t b = 8; b < 64; b++) /* only the pointer word is written */
                assert_int_equal((uint8_t)a.buf[l * 64 + b], 0xA5);
        } else {
            for (size_t b = 0; b < 64; b++)
                assert_int_equal((uint8_t)a.buf[l * 64 + b], 0xA5);
        }
    }
    free(used);
    arena_free(&a);
}

/* ---- STRIDE ------------------------------------------------------------------------------------ */

struct stride_sel {
    size_t per_block, used;
};

/* Block b uses lines (b + k) mod per_block, k < used, when used < per_block; all lines otherwise. */
static bool sel_stride(size_t i, const void *ctx)
{
    const struct stride_sel *s = ctx;
    size_t b = i / s->per_block, l = i % s->per_block;
    if (s->used == s->per_block)
        return true;
    return (l + s->per_block - b % s->per_block) % s->per_block < s->used;
}

static void test_stride_mode(void **state)
{
    (void)state;
    static const struct {
        size_t bytes, line, stride, lpp;
    } cases[] = {
        {64 * 100, 64, 64, 0},           /* sequential over every line */
        {4096 * 100, 64, 4096, 1},       /* one line per page, rotating: the TLB chain */
        {256 * 37, 64, 256, 2},          /* two of four lines per block */
        {192 * 50, 64, 192, 0},          /* stride that is not a power of two */
        {192 * 50, 64, 192, 1},
        {4096 * 3 + 77, 128, 4096, 31},  /* partial block at the end is not used */
    };
    for (size_t c = 0; c < sizeof(cases) / sizeof(cases[0]); c++) {
        struct chain_params p = {.bytes = cases[c].bytes, .line = cases[c].line, .mode = CHAIN_STRIDE,
                                 .stride = cases[c].stride, .lines_per_page = cases[c].lpp};
        assert_int_equal(chain_scratch_bytes(&p), 0);
        struct arena a = arena_new(p.bytes, 4096, 0);
        size_t n = 0;
        char *start = chain_build(a.buf, &p, NULL, 0, &n);
        assert_non_null(start);
        size_t per_block = p.stride / p.line, blocks = p.bytes / p.stride;
        struct stride_sel s = {per_block, p.lines_per_page ? p.lines_per_page : per_block};
        assert_int_equal(n, blocks * s.used);
        a.bytes = blocks * p.stride;
        size_t *order = malloc(n * sizeof(size_t));
        check_cycle(&a, start, n, p.line, sel_stride, &s, order);
        /* Visited in address order: block by block, starting at block 0. */
        for (size_t i = 0; i < n; i++) {
            size_t b = i / s.used, k = i % s.used;
            size_t first = s.used < per_block ? b % per_block : 0;
            assert_int_equal(order[i], b * per_block + (first + k) % per_block);
        }
        free(order);
        arena_free(&a);
    }
}

/* One line per 4 KiB block over 64 blocks: every one of the 64 line offsets (and so every L1 set
 * group) is used exactly once. */
static void test_stride_rotation_covers_sets(void **state)
{
    (void)state;
    struct chain_params p = {.bytes = 64 * 4096, .line = 64, .mode = CHAIN_STRIDE, .stride = 4096,
                             .lines_per_page = 1};
    struct arena a = arena_new(p.bytes, 4096, 0);
    size_t n;
    char *start = chain_build(a.buf, &p, NULL, 0, &n);
    assert_ptr_equal(start, a.buf);
    int offs[64] = {0};
    const char *q = start;
    for (size_t i = 0; i < n; i++) {
        offs[((size_t)(q - a.buf) % 4096) / 64]++;
        q = *(char *const *)q;
    }
    for (int i = 0; i < 64; i++)
        assert_int_equal(offs[i], 1);
    arena_free(&a);
}

/* ---- common ------------------------------------------------------------------------------------ */

static void test_deterministic(void **state)
{
    (void)state;
    static const enum chain_mode modes[] = {CHAIN_RANDOM, CHAIN_PAGE};
    for (int m = 0; m < 2; m++) {
        struct chain_params p = {.bytes = 64 * 4096, .line = 64, .page = 4096, .mode = modes[m],
                                 .lines_per_page = 5, .seed = 77};
        size_t need = chain_scratch_bytes(&p);
        struct arena a = arena_new(p.bytes, 4096, need), b = arena_new(p.bytes, 4096, need);
        void *sa = chain_build(a.buf, &p, a.scratch, need, NULL);
        void *sb = chain_build(b.buf, &p, b.scratch, need, NULL);
        assert_int_equal((char *)sa - a.buf, (char *)sb - b.buf);
        /* Same links relative to each buffer. */
        for (size_t off = 0; off < p.bytes; off += 64) {
            uint64_t va, vb;
            memcpy(&va, a.buf + off, 8);
            memcpy(&vb, b.buf + off, 8);
            if (va == 0xA5A5A5A5A5A5A5A5ull) {
                assert_true(vb == va);
                continue;
            }
            assert_int_equal((char *)(uintptr_t)va - a.buf, (char *)(uintptr_t)vb - b.buf);
        }
        /* A different seed gives a different chain. */
        p.seed = 78;
        chain_build(b.buf, &p, b.scratch, need, NULL);
        size_t differ = 0;
        for (size_t off = 0; off < p.bytes; off += 64) {
            uint64_t va, vb;
            memcpy(&va, a.buf + off, 8);
            memcpy(&vb, b.buf + off, 8);
            differ += (va == 0xA5A5A5A5A5A5A5A5ull) != (vb == 0xA5A5A5A5A5A5A5A5ull) ||
                      (va != 0xA5A5A5A5A5A5A5A5ull && (char *)(uintptr_t)va - a.buf != (char *)(uintptr_t)vb - b.buf);
        }
        assert_true(differ > 100);
        arena_free(&a);
        arena_free(&b);
    }
}

static void test_tiny(void **state)
{
    (void)state;
    struct arena a = arena_new(8192, 4096, 1024);
    size_t n = 99;

    /* One line: a self loop. */
    struct chain_params p = {.bytes = 64, .line = 64, .mode = CHAIN_RANDOM, .seed = 1};
    void *s = chain_build(a.buf, &p, a.scratch, 4, &n);
    assert_ptr_equal(s, a.buf);
    assert_int_equal(n, 1);
    assert_ptr_equal(*(void **)a.buf, a.buf);
    assert_true(chain_verify(s, 1, a.buf, 64));

    /* One page, one line of it. */
    struct chain_params q = {.bytes = 4096, .line = 64, .page = 4096, .mode = CHAIN_PAGE, .lines_per_page = 1};
    s = chain_build(a.buf, &q, a.scratch, 4 * (1 + 64), &n);
    assert_non_null(s);
    assert_int_equal(n, 1);
    assert_ptr_equal(*(void **)s, s);

    /* One page, all of it: stays in the page. */
    q.lines_per_page = 0;
    s = chain_build(a.buf, &q, a.scratch, 4 * (1 + 64), &n);
    assert_int_equal(n, 64);
    a.bytes = 4096;
    check_page_chain(&a, s, n, 64, 4096, 64);

    /* One stride block, one line. */
    struct chain_params r = {.bytes = 4096, .line = 64, .mode = CHAIN_STRIDE, .stride = 4096, .lines_per_page = 1};
    s = chain_build(a.buf, &r, NULL, 0, &n);
    assert_ptr_equal(s, a.buf);
    assert_int_equal(n, 1);
    assert_ptr_equal(*(void **)s, s);
    arena_free(&a);
}

static void test_bad_params(void **state)
{
    (void)state;
    struct arena a = arena_new(16384, 4096, 1 << 16);
    const struct chain_params good = {.bytes = 8192, .line = 64, .page = 4096, .mode = CHAIN_PAGE, .seed = 1};
    size_t n = 12345;
    assert_non_null(chain_build(a.buf, &good, a.scratch, a.scratch_bytes, &n));

    struct chain_params p;
#define REJECT(field_change)                                                                      \
    do {                                                                                          \
        p = good;                                                                                 \
        field_change;                                                                             \
        n = 12345;                                                                                \
        assert_null(chain_build(a.buf, &p, a.scratch, a.scratch_bytes, &n));                      \
        assert_int_equal(n, 12345);                                                               \
        assert_true(chain_scratch_bytes(&p) == SIZE_MAX);                                         \
    } while (0)
    REJECT(p.line = 12);                                /* not a power of two */
    REJECT(p.line = 4);                                 /* cannot hold a pointer */
    REJECT(p.page = 32);                                /* page smaller than a line */
    REJECT(p.page = 3000);                              /* not a power of two */
    REJECT(p.bytes = 4095);                             /* less than one page */
    REJECT(p.bytes = 0);
    REJECT(p.lines_per_page = 65);                      /* more than a page has */
    REJECT(p.mode = (enum chain_mode)7);
    REJECT((p.mode = CHAIN_STRIDE, p.stride = 0));
    REJECT((p.mode = CHAIN_STRIDE, p.stride = 100));    /* not a multiple of the line */
    REJECT((p.mode = CHAIN_STRIDE, p.stride = 32));     /* less than a line */
    REJECT((p.mode = CHAIN_STRIDE, p.stride = 256, p.lines_per_page = 5));
    REJECT((p.mode = CHAIN_RANDOM, p.bytes = 63));
    REJECT((p.mode = CHAIN_RANDOM, p.bytes = (size_t)64 << 33)); /* more than 2^32 elements */
#undef REJECT

    assert_null(chain_build(NULL, &good, a.scratch, a.scratch_bytes, &n));
    assert_null(chain_build(a.buf, NULL, a.scratch, a.scratch_bytes, &n));
    assert_true(chain_scratch_bytes(NULL) == SIZE_MAX);
    /* Alignment: line alignment always, page alignment in page mode. */
    assert_null(chain_build(a.buf + 8, &good, a.scratch, a.scratch_bytes, &n));
    assert_null(chain_build(a.buf + 64, &good, a.scratch, a.scratch_bytes, &n));
    p = good;
    p.mode = CHAIN_RANDOM;
    assert_non_null(chain_build(a.buf + 64, &p, a.scratch, a.scratch_bytes, &n));
    assert_null(chain_build(a.buf + 32, &p, a.scratch, a.scratch_bytes, &n));
    /* Scratch: too small by one byte, missing, misaligned. */
    size_t need = chain_scratch_bytes(&good);
    assert_int_equal(need, 4 * (2 + 64));
    assert_null(chain_build(a.buf, &good, a.scratch, need - 1, &n));
    assert_null(chain_build(a.buf, &good, NULL, 0, &n));
    assert_null(chain_build(a.buf, &good, (char *)a.scratch + 2, need, &n));
    assert_non_null(chain_build(a.buf, &good, a.scratch, need, &n));
    arena_free(&a);
}

/* chain_digest: the offsets of the first CHAIN_DIGEST_LINKS elements; another chain, another place or a broken
 * chain differ (a broken one gives 0) */
static void test_digest(void **state)
{
    (void)state;
    struct arena a = arena_new(8 * 64, 64, 0);
    void **e[8];
    for (int i = 0; i < 8; i++)
        e[i] = (void **)(a.buf + i * 64);
    for (int i = 0; i < 8; i++)
        *e[i] = e[(i + 1) % 8];
    uint64_t d0 = chain_digest(e[0], 8, a.buf, a.bytes);
    assert_true(d0 != 0);
    assert_true(d0 == chain_digest(e[0], 8, a.buf, a.bytes));
    assert_true(d0 != chain_digest(e[1], 8, a.buf, a.bytes)); /* another start: another order of offsets */
    *e[7] = e[3];                                            /* rho: never back at start */
    assert_true(chain_digest(e[0], 8, a.buf, a.bytes) == 0);
    *e[7] = e[0];
    assert_true(chain_digest(e[0], 7, a.buf, a.bytes) == 0); /* not back after n_elems */
    assert_true(chain_digest(e[0], 9, a.buf, a.bytes) == 0); /* back too early */
    *e[2] = a.buf + a.bytes;                                 /* leaves the buffer */
    assert_true(chain_digest(e[0], 8, a.buf, a.bytes) == 0);
    assert_true(chain_digest(NULL, 8, a.buf, a.bytes) == 0);
    arena_free(&a);

    /* longer than CHAIN_DIGEST_LINKS: only the prefix counts, and a chain that differs past it has the same digest */
    size_t n = 3 * CHAIN_DIGEST_LINKS;
    struct arena b = arena_new(n * 64, 64, 0);
    for (size_t i = 0; i < n; i++)
        *(void **)(b.buf + i * 64) = b.buf + ((i + 1) % n) * 64;
    uint64_t d1 = chain_digest(b.buf, n, b.buf, b.bytes);
    assert_true(d1 != 0);
    *(void **)(b.buf + (CHAIN_DIGEST_LINKS + 5) * 64) = b.buf; /* short cycle past the prefix */
    assert_true(chain_digest(b.buf, n, b.buf, b.bytes) == d1);
    *(void **)(b.buf + 5 * 64) = b.buf + 7 * 64; /* inside it */
    assert_true(chain_digest(b.buf, n, b.buf, b.bytes) != d1);
    arena_free(&b);
}

static void test_verify_rejects(void **state)
{
    (void)state;
    struct arena a = arena_new(8 * 64, 64, 0);
    void **e[8];
    for (int i = 0; i < 8; i++)
        e[i] = (void **)(a.buf + i * 64);
    /* Two cycles of four: 0-1-2-3 and 4-5-6-7. */
    for (int i = 0; i < 8; i++)
        *e[i] = e[(i / 4) * 4 + (i + 1) % 4];
    assert_true(chain_verify(e[0], 4, a.buf, a.bytes));
    assert_false(chain_verify(e[0], 8, a.buf, a.bytes)); /* returns early */
    assert_false(chain_verify(e[0], 3, a.buf, a.bytes)); /* not back yet */
    /* A link that leaves the buffer. */
    *e[3] = a.buf + a.bytes;
    assert_false(chain_verify(e[0], 4, a.buf, a.bytes));
    /* A tail leading into a cycle that does not contain start (rho shape). */
    *e[3] = e[1];
    assert_false(chain_verify(e[0], 4, a.buf, a.bytes));
    assert_false(chain_verify(NULL, 4, a.buf, a.bytes));
    assert_false(chain_verify(e[0], 0, a.buf, a.bytes));
    arena_free(&a);
}

/* ---- CHAIN_RANDOM in parts ------------------------------------------------------------------------- */

/* One cycle over every line, for counts around the part and bucket sizes; the result is the same whether
 * the parts run in order, backwards or interleaved (what several CPUs may do), and depends on the seed. */
static void test_par_single_cycle_any_part_order(void **state)
{
    (void)state;
    static const size_t counts[] = {1, 2, 3, 63, 64, 65, 127, 1000, 4096, 10007, 70000};
    static struct chain_par c;
    for (size_t k = 0; k < sizeof(counts) / sizeof(counts[0]); k++) {
        for (uint64_t seed = 0; seed < 3; seed++) {
            struct chain_params p = {.bytes = counts[k] * 64, .line = 64, .mode = CHAIN_RANDOM, .seed = seed};
            size_t need = chain_scratch_bytes(&p);
            struct arena a = arena_new(p.bytes, 4096, need);
            size_t n = 0;
            void *start = chain_par_build(a.buf, &p, a.scratch, need, &n);
            assert_non_null(start);
            assert_int_equal(n, counts[k]);
            size_t *o1 = malloc(n * sizeof(size_t)), *o2 = malloc(n * sizeof(size_t));
            check_cycle(&a, start, n, 64, sel_all, NULL, o1);
            /* the parts backwards, step by step, into a fresh buffer */
            memset(a.buf, 0xA5, a.bytes);
            assert_int_equal(chain_par_init(&c, a.buf, &p, a.scratch, need), 0);
            for (unsigned w = CHAIN_PAR_PARTS; w-- > 0;)
                chain_par_step(&c, CHAIN_PAR_COUNT, w);
            chain_par_place(&c);
            for (unsigned w = CHAIN_PAR_PARTS; w-- > 0;)
                chain_par_step(&c, CHAIN_PAR_SCATTER, w);
            for (unsigned w = 0; w < CHAIN_PAR_PARTS; w += 2)
                chain_par_step(&c, CHAIN_PAR_SHUFFLE, w);
            for (unsigned w = 1; w < CHAIN_PAR_PARTS; w += 2)
                chain_par_step(&c, CHAIN_PAR_SHUFFLE, w);
            for (unsigned w = CHAIN_PAR_PARTS; w-- > 0;)
                chain_par_step(&c, CHAIN_PAR_LINK, w);
            size_t n2 = 0;
            void *start2 = chain_par_start(&c, &n2);
            assert_ptr_equal(start2, start);
            assert_int_equal(n2, n);
            check_cycle(&a, start2, n2, 64, sel_all, NULL, o2);
            assert_memory_equal(o1, o2, n * sizeof(size_t));
            free(o1);
            free(o2);
            arena_free(&a);
        }
    }
}

/* Every one of the (n-1)! cycles with equal probability, like Sattolo's: n = 4, six cycles ~1000 each; and
 * a large chain is scattered (no prefetchable neighbours) and differs from seed to seed. */
static void test_par_uniform_and_scattered(void **state)
{
    (void)state;
    assert_uniform_cycles_of_4(chain_par_build);

    struct chain_params p = {.bytes = 65536 * 64, .line = 64, .mode = CHAIN_RANDOM, .seed = 5};
    struct arena b = arena_new(p.bytes, 4096, chain_scratch_bytes(&p));
    size_t n;
    assert_non_null(chain_par_build(b.buf, &p, b.scratch, b.scratch_bytes, &n));
    size_t adjacent = 0;
    char **first = malloc(n * sizeof(char *));
    for (size_t i = 0; i < n; i++) {
        char *e = b.buf + i * 64, *next = *(char **)e;
        first[i] = next;
        adjacent += (next == e + 64 || next == e - 64);
    }
    assert_true(adjacent < n / 100); /* about 2 expected */
    p.seed = 6;
    assert_non_null(chain_par_build(b.buf, &p, b.scratch, b.scratch_bytes, &n));
    size_t same = 0;
    for (size_t i = 0; i < n; i++)
        same += *(char **)(b.buf + i * 64) == first[i];
    assert_true(same < n / 100);
    free(first);
    arena_free(&b);
}

/* What chain_build refuses, chain_par_init refuses; and only CHAIN_RANDOM is built in parts. */
static void test_par_bad_params(void **state)
{
    (void)state;
    static struct chain_par c;
    struct arena a = arena_new(4096, 4096, 4096);
    struct chain_params p = {.bytes = 4096, .line = 64, .mode = CHAIN_RANDOM};
    assert_int_equal(chain_par_init(&c, a.buf, &p, a.scratch, 4096), 0);
    assert_int_equal(chain_par_init(&c, a.buf, &p, a.scratch, 63 * 4), -1);  /* scratch too small */
    assert_int_equal(chain_par_init(&c, a.buf, &p, NULL, 4096), -1);
    assert_int_equal(chain_par_init(&c, a.buf + 8, &p, a.scratch, 4096), -1); /* not line aligned */
    assert_int_equal(chain_par_init(&c, NULL, &p, a.scratch, 4096), -1);
    p.mode = CHAIN_PAGE;
    assert_int_equal(chain_par_init(&c, a.buf, &p, a.scratch, 4096), -1);
    p.mode = CHAIN_RANDOM;
    p.line = 48;
    assert_int_equal(chain_par_init(&c, a.buf, &p, a.scratch, 4096), -1);
    p.line = 64;
    p.bytes = 32;
    assert_null(chain_par_build(a.buf, &p, a.scratch, 4096, NULL));
    arena_free(&a);
}

/* Thread k of nw runs parts k, k + nw, ... of one step (how bench/lat_common.c spreads them over CPUs). */
struct par_worker {
    struct chain_par *c;
    enum chain_par_step step;
    unsigned k, nw;
};

static void *par_worker_run(void *arg)
{
    struct par_worker *w = arg;
    for (unsigned part = w->k; part < CHAIN_PAR_PARTS; part += w->nw)
        chain_par_step(w->c, w->step, part);
    return NULL;
}

/* The random chain built in parts by nw threads at once, every step on all of them before the next, linked
 * directly or through the successor table; the start in *start. */
static void par_threads(const struct chain_params *p, char *buf, uint32_t *scratch, size_t scratch_bytes, unsigned nw,
                        bool table, void **start, size_t *n)
{
    static struct chain_par c;
    static const enum chain_par_step direct[] = {CHAIN_PAR_COUNT, CHAIN_PAR_SCATTER, CHAIN_PAR_SHUFFLE,
                                                 CHAIN_PAR_LINK};
    static const enum chain_par_step by_table[] = {CHAIN_PAR_COUNT, CHAIN_PAR_SCATTER, CHAIN_PAR_SHUFFLE,
                                                   CHAIN_PAR_SUCC,  CHAIN_PAR_WRITE,   CHAIN_PAR_TAIL};
    const enum chain_par_step *steps = table ? by_table : direct;
    size_t n_steps = table ? sizeof(by_table) / sizeof(by_table[0]) : sizeof(direct) / sizeof(direct[0]);
    pthread_t th[8];
    struct par_worker w[8];
    assert_true(nw >= 1 && nw <= 8);
    assert_int_equal(chain_par_init(&c, buf, p, scratch, scratch_bytes), 0);
    for (size_t s = 0; s < n_steps; s++) {
        for (unsigned k = 0; k < nw; k++) {
            w[k] = (struct par_worker){&c, steps[s], k, nw};
            assert_int_equal(pthread_create(&th[k], NULL, par_worker_run, &w[k]), 0);
        }
        for (unsigned k = 0; k < nw; k++)
            assert_int_equal(pthread_join(th[k], NULL), 0);
        if (steps[s] == CHAIN_PAR_COUNT)
            chain_par_place(&c);
    }
    *start = chain_par_start(&c, n);
}

/* The same links, byte for byte, whether built on 1, 2, 3 or 7 threads at once, linked directly or through the
 * successor table (chain_par_build_table too): one cycle over every line, for counts around the 64 parts and
 * buckets, lines of 8 bytes (the table is half the chain) to 256, a partial line at the end (untouched), and a
 * few seeds. Through the table the bytes after each link may change, and only in the chain's last 4 x n bytes. */
static void test_par_table_same_chain_any_workers(void **state)
{
    (void)state;
    static const size_t counts[] = {1, 2, 3, 5, 63, 64, 65, 127, 1000, 4099, 70001};
    static const size_t lines[] = {8, 16, 64, 256};
    static const unsigned workers[] = {1, 2, 3, 7};
    for (size_t k = 0; k < sizeof(counts) / sizeof(counts[0]); k++) {
        for (size_t l = 0; l < sizeof(lines) / sizeof(lines[0]); l++) {
            if (lines[l] >= 256 && counts[k] > 5000)
                continue; /* enough lines above; keeps the test's memory small */
            for (uint64_t seed = 0; seed < 2; seed++) {
                size_t line = lines[l], n_lines = counts[k], tail = line / 2 + 3;
                struct chain_params p = {.bytes = n_lines * line + tail, .line = line, .mode = CHAIN_RANDOM,
                                         .seed = seed * 0x9E3779B97F4A7C15ull + k};
                size_t need = chain_scratch_bytes(&p);
                struct arena ref = arena_new(p.bytes, 4096, need), a = arena_new(p.bytes, 4096, need);
                size_t n_ref = 0, n = 0;
                void *s_ref = chain_par_build(ref.buf, &p, ref.scratch, need, &n_ref);
                assert_non_null(s_ref);
                assert_int_equal(n_ref, n_lines);
                check_cycle(&ref, s_ref, n_ref, line, sel_all, NULL, NULL);
                size_t table_at = n_lines * line - 4 * n_lines;
                for (unsigned t = 0; t < 2; t++) {
                    for (size_t w = 0; w < sizeof(workers) / sizeof(workers[0]); w++) {
                        void *start = NULL;
                        memset(a.buf, 0xA5, a.bytes);
                        par_threads(&p, a.buf, a.scratch, need, workers[w], t == 1, &start, &n);
                        assert_int_equal(n, n_ref);
                        assert_int_equal((char *)start - a.buf, (char *)s_ref - ref.buf);
                        for (size_t i = 0; i < n_lines; i++) {
                            char *x = *(char **)(ref.buf + i * line), *y = *(char **)(a.buf + i * line);
                            assert_int_equal(y - a.buf, x - ref.buf);
                            /* the rest of a line: as it was, except inside the table */
                            for (size_t b = i * line + 8; b < (i + 1) * line; b++)
                                if (t == 0 || b < table_at)
                                    assert_int_equal((unsigned char)a.buf[b], 0xA5);
                        }
                        assert_memory_equal(ref.buf + n_lines * line, a.buf + n_lines * line, tail);
                        /* what the sweep records: the same digest whatever the worker count */
                        uint64_t d = chain_digest(start, n, a.buf, a.bytes);
                        assert_true(d != 0);
                        assert_true(d == chain_digest(s_ref, n_ref, ref.buf, ref.bytes));
                    }
                }
                memset(a.buf, 0xA5, a.bytes);
                void *start = chain_par_build_table(a.buf, &p, a.scratch, need, &n);
                assert_int_equal((char *)start - a.buf, (char *)s_ref - ref.buf);
                check_cycle(&a, start, n, line, sel_all, NULL, NULL);
                arena_free(&ref);
                arena_free(&a);
            }
        }
    }
}

/* Through the table, every one of the (n-1)! cycles with equal probability, as Sattolo's. */
static void test_par_table_uniform(void **state)
{
    (void)state;
    assert_uniform_cycles_of_4(chain_par_build_table);
}

/* ---- CHAIN_PAGE in parts ---------------------------------------------------------------------------- */

/* Worker k of nw: parts k, k + nw, ... (how bench/lat_common.c spreads them over CPUs). */
struct page_worker {
    struct chain_page_par *c;
    unsigned k, nw;
};

static void *page_worker_run(void *arg)
{
    struct page_worker *w = arg;
    for (unsigned part = w->k; part < CHAIN_PAR_PARTS; part += w->nw)
        chain_page_par_part(w->c, part);
    return NULL;
}

/* The chain built in parts by nw threads at once into a buffer filled with 0xA5; the start in *start. */
static void page_par_threads(const struct chain_params *p, char *buf, uint32_t *scratch, size_t scratch_bytes,
                             unsigned nw, void **start, size_t *n)
{
    struct chain_page_par c;
    pthread_t th[8];
    struct page_worker w[8];
    assert_true(nw >= 1 && nw <= 8);
    assert_int_equal(chain_page_par_init(&c, buf, p, scratch, scratch_bytes), 0);
    for (unsigned k = 0; k < nw; k++) {
        w[k] = (struct page_worker){&c, k, nw};
        assert_int_equal(pthread_create(&th[k], NULL, page_worker_run, &w[k]), 0);
    }
    for (unsigned k = 0; k < nw; k++)
        assert_int_equal(pthread_join(th[k], NULL), 0);
    *start = chain_page_par_start(&c, n);
}

/* chain_build's chain, byte for byte (the lines it leaves untouched included), whether the parts run on 1, 2, 3
 * or 7 threads at once, or one after the other backwards: for page counts around the 64 parts, some used lines
 * per page, other page and line sizes, a partial page at the end, and a few seeds. */
static void test_page_par_same_chain_any_workers(void **state)
{
    (void)state;
    static const struct {
        size_t pages, page, line, lpp, tail;
    } geo[] = {
        {1, 4096, 64, 0, 0},   {2, 4096, 64, 0, 0},   {3, 4096, 64, 7, 0},   {63, 4096, 64, 0, 0},
        {64, 4096, 64, 1, 0},  {65, 4096, 64, 0, 0},  {200, 4096, 64, 2, 0}, {1000, 4096, 64, 0, 100},
        {4099, 4096, 64, 0, 0}, {130, 8192, 128, 3, 8000}, {70, 65536, 4096, 0, 0},
    };
    static const unsigned workers[] = {1, 2, 3, 7};
    for (size_t g = 0; g < sizeof(geo) / sizeof(geo[0]); g++) {
        for (uint64_t seed = 0; seed < 3; seed++) {
            struct chain_params p = {.bytes = geo[g].pages * geo[g].page + geo[g].tail, .line = geo[g].line,
                                     .page = geo[g].page, .mode = CHAIN_PAGE, .lines_per_page = geo[g].lpp,
                                     .seed = seed * 0x9E3779B97F4A7C15ull + g};
            size_t need = chain_page_par_scratch_bytes(&p);
            size_t lpp_all = geo[g].page / geo[g].line;
            assert_int_equal(need, 4 * (geo[g].pages + 64 * lpp_all));
            assert_true(need >= chain_scratch_bytes(&p));
            struct arena ref = arena_new(p.bytes, geo[g].page, need), a = arena_new(p.bytes, geo[g].page, need);
            size_t n_ref = 0, n = 0;
            void *s_ref = chain_build(ref.buf, &p, ref.scratch, need, &n_ref);
            assert_non_null(s_ref);
            for (size_t k = 0; k < sizeof(workers) / sizeof(workers[0]); k++) {
                void *start = NULL;
                memset(a.buf, 0xA5, a.bytes);
                page_par_threads(&p, a.buf, a.scratch, need, workers[k], &start, &n);
                assert_int_equal(n, n_ref);
                assert_int_equal((char *)start - a.buf, (char *)s_ref - ref.buf);
                /* the links point into a's buffer: compare them as offsets */
                for (size_t off = 0; off < p.bytes; off += geo[g].line) {
                    char *x = *(char **)(ref.buf + off), *y = *(char **)(a.buf + off);
                    if ((uintptr_t)x == 0xA5A5A5A5A5A5A5A5ull)
                        assert_true((uintptr_t)y == 0xA5A5A5A5A5A5A5A5ull);
                    else
                        assert_int_equal(y - a.buf, x - ref.buf);
                    assert_memory_equal(ref.buf + off + 8, a.buf + off + 8, geo[g].line - 8);
                }
                assert_memory_equal(ref.buf + geo[g].pages * geo[g].page, a.buf + geo[g].pages * geo[g].page,
                                    geo[g].tail);
                uint64_t d = chain_digest(start, n, a.buf, a.bytes); /* chain_build's chain's digest */
                assert_true(d != 0 && d == chain_digest(s_ref, n_ref, ref.buf, ref.bytes));
            }
            /* the parts one after the other, backwards, and chain_page_par_build */
            struct chain_page_par c;
            memset(a.buf, 0xA5, a.bytes);
            assert_int_equal(chain_page_par_init(&c, a.buf, &p, a.scratch, need), 0);
            for (unsigned w = CHAIN_PAR_PARTS; w-- > 0;)
                chain_page_par_part(&c, w);
            char *after_backwards = malloc(p.bytes);
            memcpy(after_backwards, a.buf, p.bytes);
            memset(a.buf, 0xA5, a.bytes);
            void *start = chain_page_par_build(a.buf, &p, a.scratch, need, &n);
            assert_int_equal((char *)start - a.buf, (char *)s_ref - ref.buf);
            assert_memory_equal(after_backwards, a.buf, p.bytes);
            check_page_chain(&a, start, n, geo[g].line, geo[g].page, geo[g].lpp ? geo[g].lpp : lpp_all);
            free(after_backwards);
            arena_free(&ref);
            arena_free(&a);
        }
    }
}

/* The same two-level distribution as chain_build's (it is the same chain). */
static void test_page_par_uniform(void **state)
{
    (void)state;
    assert_page_mode_uniform(chain_page_par_build, chain_page_par_scratch_bytes);
}

/* What chain_build refuses, chain_page_par_init refuses; only CHAIN_PAGE; the parts' scratch is needed. */
static void test_page_par_bad_params(void **state)
{
    (void)state;
    struct chain_page_par c;
    struct chain_params p = {.bytes = 8192, .line = 64, .page = 4096, .mode = CHAIN_PAGE, .seed = 1};
    size_t need = chain_page_par_scratch_bytes(&p);
    assert_int_equal(need, 4 * (2 + 64 * 64));
    struct arena a = arena_new(8192, 4096, need);
    assert_int_equal(chain_page_par_init(&c, a.buf, &p, a.scratch, need), 0);
    assert_int_equal(chain_page_par_init(&c, a.buf, &p, a.scratch, need - 4), -1); /* too small */
    assert_int_equal(chain_page_par_init(&c, a.buf, &p, a.scratch, chain_scratch_bytes(&p)), -1);
    assert_int_equal(chain_page_par_init(&c, a.buf, &p, NULL, need), -1);
    assert_int_equal(chain_page_par_init(&c, NULL, &p, a.scratch, need), -1);
    assert_int_equal(chain_page_par_init(&c, a.buf + 64, &p, a.scratch, need), -1); /* not page aligned */
    assert_int_equal(chain_page_par_init(&c, a.buf, NULL, a.scratch, need), -1);
    assert_null(chain_page_par_build(a.buf, &p, a.scratch, need - 4, NULL));
    p.mode = CHAIN_RANDOM;
    assert_true(chain_page_par_scratch_bytes(&p) == SIZE_MAX);
    assert_int_equal(chain_page_par_init(&c, a.buf, &p, a.scratch, need), -1);
    p.mode = CHAIN_PAGE;
    p.bytes = 4095; /* no whole page */
    assert_true(chain_page_par_scratch_bytes(&p) == SIZE_MAX);
    assert_int_equal(chain_page_par_init(&c, a.buf, &p, a.scratch, need), -1);
    p.bytes = 8192;
    p.lines_per_page = 65;
    assert_true(chain_page_par_scratch_bytes(&p) == SIZE_MAX);
    p.lines_per_page = 0;
    p.page = 3000;
    assert_true(chain_page_par_scratch_bytes(&p) == SIZE_MAX);
    assert_true(chain_page_par_scratch_bytes(NULL) == SIZE_MAX);
    arena_free(&a);
}

/* ---- relinking a built chain -------------------------------------------------------------------------- */

/* A page chain of `pages` pages of `page` bytes (lines_per_page used), built in parts with its tails kept. */
static struct chain_segs page_segs(struct arena *a, size_t pages, size_t page, size_t used, uint64_t seed,
                                   uint32_t **mem)
{
    struct chain_params p = {.bytes = pages * page, .line = 64, .page = page, .mode = CHAIN_PAGE,
                             .lines_per_page = used, .seed = seed};
    size_t need = chain_page_par_scratch_bytes(&p);
    *a = arena_new(p.bytes, page, need);
    *mem = malloc(CHAIN_SEGS_WORDS(pages) * sizeof(uint32_t));
    struct chain_page_par c;
    assert_int_equal(chain_page_par_init(&c, a->buf, &p, a->scratch, need), 0);
    c.tail = *mem + pages;
    for (unsigned w = 0; w < CHAIN_PAR_PARTS; w++)
        chain_page_par_part(&c, w);
    struct chain_segs s;
    assert_int_equal(chain_page_par_segs(&c, &s, *mem), 0);
    return s;
}

struct win {
    size_t lo, hi, unit;
    const uint8_t *used; /* NULL: every line of a page; else the lines the chain uses */
};

static bool sel_window(size_t i, const void *ctx)
{
    const struct win *w = ctx;
    return i / w->unit >= w->lo && i / w->unit < w->hi && (!w->used || w->used[i]);
}

/* The walk's pages in visiting order: each page entered once and all its used lines taken before it is left. */
static size_t pages_visited(const size_t *order, size_t n, size_t lines_per_page, size_t used, size_t *pages)
{
    size_t np = 0;
    for (size_t i = 0; i < n; i += used) {
        size_t u = order[i] / lines_per_page;
        for (size_t k = 1; k < used; k++)
            assert_int_equal(order[i + k] / lines_per_page, u);
        for (size_t q = 0; q < np; q++)
            assert_int_not_equal(pages[q], u);
        pages[np++] = u;
    }
    return np;
}

/* A relinked page chain is one cycle over every used line of its window's pages, each page visited once and
 * whole, its lines in the order the build gave them; another seed gives another page order; a relink writes the
 * tails' links and no other byte. */
static void test_relink_page(void **state)
{
    (void)state;
    const size_t pages = 24, page = 4096, lpp = page / 64;
    static const size_t useds[] = {64, 5, 1};
    for (size_t ui = 0; ui < sizeof(useds) / sizeof(useds[0]); ui++) {
        size_t used = useds[ui];
        struct arena a;
        uint32_t *mem;
        struct chain_segs s = page_segs(&a, pages, page, used, 7, &mem);
        assert_int_equal(s.n, pages);
        assert_int_equal(s.per, used);
        /* the chain as built, for the line order inside each page */
        size_t *built = malloc(pages * used * sizeof(size_t));
        uint8_t inuse[24 * 64] = {0};
        const char *q = (char *)a.buf + (size_t)s.head[0] * 64;
        for (size_t i = 0; i < pages * used; i++, q = *(char *const *)q) { /* the chain as built */
            built[i] = (size_t)(q - a.buf) / 64;
            inuse[built[i]] = 1;
        }
        struct win all = {0, pages, lpp, inuse};
        check_cycle(&a, (char *)a.buf + (size_t)s.head[0] * 64, pages * used, 64, sel_window, &all, built);
        size_t next_in_page[24 * 64];
        for (size_t i = 0; i < pages * used; i++)
            next_in_page[built[i]] = (i + 1) % used ? built[i + 1] : SIZE_MAX;

        static const struct win wins[] = {{0, 24, 64, NULL}, {0, 17, 64, NULL}, {3, 20, 64, NULL}, {7, 24, 64, NULL},
                                          {11, 12, 64, NULL}};
        size_t orders[2][24];
        for (size_t wi = 0; wi < sizeof(wins) / sizeof(wins[0]); wi++) {
            struct win wv = wins[wi];
            wv.used = inuse;
            const struct win *w = &wv;
            for (uint64_t seed = 0; seed < 2; seed++) {
                char *before = malloc(a.bytes);
                memcpy(before, a.buf, a.bytes);
                size_t n = 0;
                void *start = chain_relink(&s, w->lo, w->hi - w->lo, 100 + seed, 0, 1, &n);
                assert_non_null(start);
                assert_int_equal(n, (w->hi - w->lo) * used);
                /* untouched: only the window's tails' links may differ */
                for (size_t off = 0; off < a.bytes; off += 8) {
                    bool tail_link = false;
                    for (size_t u = w->lo; u < w->hi; u++)
                        tail_link |= off == (size_t)s.tail[u] * 64;
                    if (!tail_link)
                        assert_memory_equal(a.buf + off, before + off, 8);
                }
                free(before);
                size_t *ord = malloc(n * sizeof(size_t));
                check_cycle(&a, start, n, 64, sel_window, w, ord);
                size_t visited[24];
                size_t np = pages_visited(ord, n, lpp, used, visited);
                assert_int_equal(np, w->hi - w->lo);
                for (size_t i = 0; i < n; i++) /* inner order as built */
                    if ((i + 1) % used)
                        assert_int_equal(next_in_page[ord[i]], ord[i + 1]);
                for (size_t q = 0; q < np; q++)
                    orders[seed][q] = visited[q];
                free(ord);
            }
            if (w->hi - w->lo > 3) /* (count - 1)! orders: two seeds alike by chance 1 in 2 at most for 3 */
                assert_memory_not_equal(orders[0], orders[1], (w->hi - w->lo) * sizeof(size_t));
        }
        /* the same seed: the same chain */
        size_t n1 = 0, n2 = 0;
        size_t *o1 = malloc(pages * used * sizeof(size_t)), *o2 = malloc(pages * used * sizeof(size_t));
        void *s1 = chain_relink(&s, 0, pages, 5, 0, 1, &n1);
        check_cycle(&a, s1, n1, 64, sel_window, &all, o1);
        chain_relink(&s, 2, 9, 6, 0, 1, NULL);
        void *s2 = chain_relink(&s, 0, pages, 5, 0, 1, &n2);
        check_cycle(&a, s2, n2, 64, sel_window, &all, o2);
        assert_memory_equal(o1, o2, pages * used * sizeof(size_t));
        free(o1);
        free(o2);
        free(built);
        free(mem);
        arena_free(&a);
    }
}

/* A random chain's visiting order cut into stretches: relinked, one cycle over every line, each stretch whole
 * and once, in another order for another seed; only the stretches' last lines' links change. */
static void test_relink_random(void **state)
{
    (void)state;
    static struct chain_par c;
    static const size_t counts[] = {1, 2, 65, 1000, 4099};
    static const size_t ms[] = {1, 2, 7, 64};
    for (size_t ci = 0; ci < sizeof(counts) / sizeof(counts[0]); ci++) {
        for (size_t mi = 0; mi < sizeof(ms) / sizeof(ms[0]); mi++) {
            size_t cnt = counts[ci], m = ms[mi];
            if (m > cnt)
                continue;
            struct chain_params p = {.bytes = cnt * 64, .line = 64, .mode = CHAIN_RANDOM, .seed = 3};
            size_t need = chain_scratch_bytes(&p);
            struct arena a = arena_new(p.bytes, 4096, need);
            assert_int_equal(chain_par_init(&c, a.buf, &p, a.scratch, need), 0);
            for (unsigned w = 0; w < CHAIN_PAR_PARTS; w++)
                chain_par_step(&c, CHAIN_PAR_COUNT, w);
            chain_par_place(&c);
            static const enum chain_par_step steps[] = {CHAIN_PAR_SCATTER, CHAIN_PAR_SHUFFLE, CHAIN_PAR_LINK};
            for (size_t st = 0; st < 3; st++)
                for (unsigned w = 0; w < CHAIN_PAR_PARTS; w++)
                    chain_par_step(&c, steps[st], w);
            size_t *built = malloc(cnt * sizeof(size_t)), *ord = malloc(cnt * sizeof(size_t));
            size_t n0 = 0;
            check_cycle(&a, chain_par_start(&c, &n0), cnt, 64, sel_all, NULL, built);
            size_t *pos = malloc(cnt * sizeof(size_t)); /* a line's place in the built order */
            for (size_t i = 0; i < cnt; i++)
                pos[built[i]] = i;
            uint32_t *mem = malloc(CHAIN_SEGS_WORDS(m) * sizeof(uint32_t));
            struct chain_segs s;
            assert_int_equal(chain_par_segs(&c, m, &s, mem), 0);
            size_t firsts[2][64];
            for (uint64_t seed = 0; seed < 2; seed++) {
                char *before = malloc(a.bytes);
                memcpy(before, a.buf, a.bytes);
                size_t n = 0;
                void *start = chain_relink(&s, 0, m, 40 + seed, 0, 1, &n);
                assert_int_equal(n, cnt);
                for (size_t off = 0; off < a.bytes; off += 8) {
                    bool tail_link = false;
                    for (size_t k = 0; k < m; k++)
                        tail_link |= off == (size_t)s.tail[k] * 64;
                    if (!tail_link)
                        assert_memory_equal(a.buf + off, before + off, 8);
                }
                free(before);
                check_cycle(&a, start, n, 64, sel_all, NULL, ord);
                /* stretches whole: a step leaves the built order only from a stretch's last line to a first */
                size_t nseg = 0;
                for (size_t i = 0; i < cnt; i++) {
                    size_t k = pos[ord[i]];
                    size_t seg = 0;
                    while (seg + 1 < m && (uint64_t)cnt * (seg + 1) / m <= k)
                        seg++;
                    if ((uint64_t)cnt * seg / m == k) /* a stretch's first line: entered here */
                        firsts[seed][nseg++] = seg;
                    else
                        assert_int_equal(pos[ord[i - 1]] + 1, k);
                }
                assert_int_equal(nseg, m);
            }
            if (m > 3)
                assert_memory_not_equal(firsts[0], firsts[1], m * sizeof(size_t));
            /* a window needs equal stretches */
            if (cnt % m)
                assert_null(chain_relink(&s, 0, m - 1, 1, 0, 1, NULL));
            assert_null(chain_relink(&s, 1, m, 1, 0, 1, NULL));
            assert_null(chain_relink(&s, 0, 0, 1, 0, 1, NULL));
            assert_int_equal(chain_par_segs(&c, cnt + 1, &s, mem), -1);
            free(mem);
            free(pos);
            free(built);
            free(ord);
            arena_free(&a);
        }
    }
}

/* Strata: replicate k's cycle visits the window's pages of index k mod R first (all of them, in random order), then
 * the rest; still one cycle over every used line, each page once; the replicates' first strata are disjoint. */
static void test_relink_strata_first(void **state)
{
    (void)state;
    const size_t pages = 24, lpp = 64, used = 3, reps = 5, lo = 2, count = 20;
    struct arena a;
    uint32_t *mem;
    struct chain_segs s = page_segs(&a, pages, 4096, used, 9, &mem);
    uint8_t inuse[24 * 64] = {0};
    const char *q = (char *)a.buf + (size_t)s.head[0] * 64;
    for (size_t i = 0; i < pages * used; i++, q = *(char *const *)q)
        inuse[(size_t)(q - a.buf) / 64] = 1;
    struct win w = {lo, lo + count, lpp, inuse};
    uint8_t owner[24];
    memset(owner, 0xFF, sizeof(owner));
    for (size_t k = 0; k < reps; k++) {
        size_t n = 0, ord[24 * 3], visited[24];
        void *start = chain_relink(&s, lo, count, 77 + k, k, reps, &n);
        assert_non_null(start);
        check_cycle(&a, start, n, 64, sel_window, &w, ord);
        size_t np = pages_visited(ord, n, lpp, used, visited);
        assert_int_equal(np, count);
        size_t in_stratum = 0;
        for (size_t u = lo; u < lo + count; u++)
            in_stratum += u % reps == k;
        for (size_t i = 0; i < np; i++)
            assert_int_equal(visited[i] % reps == k, i < in_stratum);
        for (size_t i = 0; i < in_stratum; i++) { /* no page is first-stratum for two replicates */
            assert_int_equal(owner[visited[i]], 0xFF);
            owner[visited[i]] = (uint8_t)k;
        }
    }
    assert_null(chain_relink(&s, lo, count, 1, 0, 0, NULL));
    free(mem);
    arena_free(&a);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_random_single_cycle),  cmocka_unit_test(test_random_partial_line),
        cmocka_unit_test(test_random_is_scattered),  cmocka_unit_test(test_random_uniform_cycles),
        cmocka_unit_test(test_page_mode),            cmocka_unit_test(test_page_mode_geometries),
        cmocka_unit_test(test_page_one_line_spread), cmocka_unit_test(test_page_unused_lines_untouched),
        cmocka_unit_test(test_page_mode_uniform),
        cmocka_unit_test(test_relink_page),          cmocka_unit_test(test_relink_random),
        cmocka_unit_test(test_relink_strata_first),
        cmocka_unit_test(test_stride_mode),          cmocka_unit_test(test_stride_rotation_covers_sets),
        cmocka_unit_test(test_deterministic),        cmocka_unit_test(test_tiny),
        cmocka_unit_test(test_bad_params),           cmocka_unit_test(test_verify_rejects),
        cmocka_unit_test(test_par_single_cycle_any_part_order), cmocka_unit_test(test_par_uniform_and_scattered),
        cmocka_unit_test(test_par_bad_params),
        cmocka_unit_test(test_par_table_same_chain_any_workers), cmocka_unit_test(test_par_table_uniform),
        cmocka_unit_test(test_page_par_same_chain_any_workers), cmocka_unit_test(test_page_par_uniform),
        cmocka_unit_test(test_page_par_bad_params), cmocka_unit_test(test_digest),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
