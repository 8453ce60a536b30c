/* chain.h - pointer-chase chains for the latency benchmarks: random, page-by-page and strided cycles. */
#ifndef PMB_MEASURE_CHAIN_H
#define PMB_MEASURE_CHAIN_H

#include "kernel/klib.h"

#define CHAIN_DEFAULT_LINE 64u   /* cache line of every x86 CPU we target (CPUID.01H:EBX[15:8] x 8) */
#define CHAIN_DEFAULT_PAGE 4096u /* 4 KiB base page */

/* Chains index elements with uint32 in the scratch, so one chain holds at most this many elements. */
#define CHAIN_MAX_ELEMS 0xFFFFFFFFull

enum chain_mode {
    /* One random cycle over every line of the buffer (Sattolo's algorithm): defeats prefetchers,
     * mixes cache and TLB misses once the buffer outgrows the TLB reach. */
    CHAIN_RANDOM,
    /* Pages in one random cycle; inside each page its used lines in random order, all of them before
     * leaving the page. One TLB miss per page visit, so the cache and TLB costs can be told apart
     * (lines_per_page = 1 measures the page walk plus one miss per step). */
    CHAIN_PAGE,
    /* Fixed stride: blocks of `stride` bytes visited in address order. When a block uses fewer than all of
     * its lines, block i starts at line (i mod lines-per-block) so the used lines spread over all cache
     * sets instead of piling into the sets of line 0 (lmbench's and Chips-and-Cheese's offset rotation). */
    CHAIN_STRIDE,
};

/* Defaults: line 0 -> 64, page 0 -> 4096, lines_per_page 0 -> all lines of a page (PAGE) or of a block
 * (STRIDE). */
struct chain_params {
    size_t bytes;          /* working set: how much of buf the chain may use (rounded down to whole units) */
    size_t line;           /* element size: power of two, >= 8; each element holds one pointer */
    size_t page;           /* CHAIN_PAGE: page size (power of two, >= line); buf must be page aligned */
    enum chain_mode mode;
    size_t stride;         /* CHAIN_STRIDE: block size in bytes, a multiple of line */
    size_t lines_per_page; /* PAGE/STRIDE: lines used per page/block; 0 = all */
    uint64_t seed;         /* RANDOM/PAGE: same seed, same chain */
    size_t buf_page;       /* RANDOM built in parts (bench/lat_common.c lat_chain): the page size backing buf, 0 when
                            * not known; it picks how the links are written (below), never which chain */
};

/* Scratch chain_build needs, in bytes (uint32 indices):
 *   CHAIN_RANDOM  4 x (bytes / line)
 *   CHAIN_PAGE    4 x (bytes / page + page / line)
 *   CHAIN_STRIDE  0
 * Returns SIZE_MAX for parameters chain_build would reject. */
size_t chain_scratch_bytes(const struct chain_params *p);

/* Writes the chain into buf (which must be line aligned, page aligned in CHAIN_PAGE mode, and at least
 * p->bytes long). Every element's first 8 bytes hold the address of the next element; the elements form a
 * single cycle that visits every selected line exactly once. Lines that are not selected are left
 * untouched. Returns the first element (where a chase starts) and its element count in *n_elems
 * (optional), or NULL when a parameter is invalid or the scratch is too small. */
void *chain_build(void *buf, const struct chain_params *p, void *scratch, size_t scratch_bytes,
                  size_t *n_elems);

/* Follows n_elems links from start and checks that every element lies inside [buf, buf + bytes) and that
 * the walk first returns to start after exactly n_elems steps: a cheap self-check before measuring. */
bool chain_verify(const void *start, size_t n_elems, const void *buf, size_t bytes);

/* Links chain_digest follows: a few microseconds on hardware for every sweep point, so that records can show that
 * two runs with the same seed built the same chains (one CPU or several: chain_par's chain does not depend on how
 * many CPUs ran its parts). */
#define CHAIN_DIGEST_LINKS 1024

/* FNV-1a (64-bit) over the byte offsets from buf of the first min(n_elems, CHAIN_DIGEST_LINKS) elements from
 * start, in chain order: equal for the same chain at the same place of a buffer. The walk checks what
 * chain_verify checks on the elements it visits (inside [buf, buf + bytes), aligned, not back at start before
 * n_elems steps; back at start after exactly n_elems when n_elems <= CHAIN_DIGEST_LINKS) and returns 0 when
 * one fails (a digest is never 0 otherwise). */
uint64_t chain_digest(const void *start, size_t n_elems, const void *buf, size_t bytes);

/* ---- CHAIN_RANDOM built in parts, on several CPUs at once --------------------------------------------------
 * The same kind of cycle as CHAIN_RANDOM (a uniformly random cyclic order of every line), built in steps
 * whose CHAIN_PAR_PARTS parts may run on different CPUs at the same time (the caller runs every part of a
 * step, on whatever CPUs, before it starts the next step):
 *   CHAIN_PAR_COUNT   (part w) each index of slice w draws one of CHAIN_PAR_PARTS buckets from part w's own
 *                     generator; counts per (part, bucket)
 *   chain_par_place   (once)   prefix sums: where part w's indices of bucket b go in the order array
 *   CHAIN_PAR_SCATTER (part w) the same draws again; each index written to its bucket's next place
 *   CHAIN_PAR_SHUFFLE (part b) Fisher-Yates inside bucket b (its own generator)
 *   CHAIN_PAR_LINK    (part w) slice w of the order: element order[j] points to order[j + 1], the last to
 *                     the first
 * or, instead of CHAIN_PAR_LINK, the same links written in address order through a successor table of 4 bytes
 * per line kept in the chain's own lines (its last 4 x n bytes, chain_par_table):
 *   CHAIN_PAR_SUCC    (part w) slice w of the order: order[j + 1], as a line index, into order[j]'s entry
 *   CHAIN_PAR_WRITE   (part w) slice w of the lines whose link lies below the table: each line's link from its
 *                     entry, in address order
 *   CHAIN_PAR_TAIL    (part 0 alone; the other parts do nothing) the remaining lines, in ascending order: each
 *                     entry is read before any link written after it can reach it
 * Independent uniform buckets, each shuffled uniformly, then concatenated, give a uniformly random
 * permutation (Sanders, "Random permutations on distributed, external and hierarchical memory", 1998), so
 * the cycle has the distribution of Sattolo's. Every access but the links is sequential or inside one
 * bucket (n / 64 indices: an L2's worth at 2 GiB), and the links are independent stores: unlike Sattolo's
 * swaps over the whole index array, no step waits on memory latency. The chain depends on the seed alone,
 * not on how many CPUs ran the parts, nor on which of the two ways wrote the links (the same pointers, byte
 * for byte). Scratch: the same as CHAIN_RANDOM (chain_scratch_bytes).
 * Which way to link: CHAIN_PAR_LINK's stores go to random lines of the whole buffer, one cache miss and, on
 * 4 KiB pages, one TLB miss (a page walk, two-dimensional in a guest) each; the table's random stores go to
 * 4 x n bytes (1/16 of a 64-byte-line chain: 16 entries per line, a sixteenth of the pages) and the links are
 * then written in one sequential pass. On 4 KiB pages the table is 2-6x faster per line (docs/measurement.md,
 * "sweep_top"); on 2 MiB pages, where the direct stores miss no TLB, the extra pass makes it slower. The table
 * overwrites the bytes after each link in the chain's last 4 x n bytes (for 64-byte lines, the rest of its last
 * sixteenth of lines): only for a caller whose chain owns its lines (chain_build leaves them untouched). */
#define CHAIN_PAR_PARTS 64u

enum chain_par_step {
    CHAIN_PAR_COUNT,
    CHAIN_PAR_SCATTER,
    CHAIN_PAR_SHUFFLE,
    CHAIN_PAR_LINK,
    CHAIN_PAR_SUCC,
    CHAIN_PAR_WRITE,
    CHAIN_PAR_TAIL,
};

struct chain_par {
    char *base;
    size_t line, n;
    uint32_t *order; /* the scratch: the visiting order, n indices */
    uint64_t seed;
    uint32_t at[CHAIN_PAR_PARTS][CHAIN_PAR_PARTS]; /* [part][bucket]: count, then the next place */
    uint32_t from[CHAIN_PAR_PARTS + 1];            /* bucket b is order[from[b] .. from[b + 1]) */
    uint32_t *table;                               /* CHAIN_PAR_SUCC's successor table: base + (line - 4) x n */
    size_t head;                                   /* lines CHAIN_PAR_WRITE writes: their links lie below table */
};

/* Checks p (CHAIN_RANDOM only) and the buffers as chain_build does and readies c: 0, or -1. */
int chain_par_init(struct chain_par *c, void *buf, const struct chain_params *p, void *scratch, size_t scratch_bytes);
/* One part (0 <= part < CHAIN_PAR_PARTS) of one step. */
void chain_par_step(struct chain_par *c, enum chain_par_step step, unsigned part);
/* Between CHAIN_PAR_COUNT and CHAIN_PAR_SCATTER, once. */
void chain_par_place(struct chain_par *c);
/* Where the chase starts (after CHAIN_PAR_LINK) and how many elements the cycle has. */
void *chain_par_start(const struct chain_par *c, size_t *n_elems);
/* Every step in order on the calling CPU: chain_build's contract for CHAIN_RANDOM, with this chain. */
void *chain_par_build(void *buf, const struct chain_params *p, void *scratch, size_t scratch_bytes, size_t *n_elems);
/* The same chain, linked through the successor table (CHAIN_PAR_SUCC, CHAIN_PAR_WRITE, CHAIN_PAR_TAIL): the
 * chain's last 4 x n bytes are overwritten besides the links. */
void *chain_par_build_table(void *buf, const struct chain_params *p, void *scratch, size_t scratch_bytes,
                            size_t *n_elems);

/* ---- CHAIN_PAGE built in parts, on several CPUs at once ----------------------------------------------------
 * chain_build's CHAIN_PAGE chain, byte for byte, in two steps:
 *   chain_page_par_init (once)   checks as chain_build does and draws the page cycle (Sattolo over the pages
 *                                with the seed's generator, as chain_build does: 4 bytes and one swap per page)
 *   chain_page_par_part (part w) writes slice w of the pages (CHAIN_PAR_PARTS slices in address order): each
 *                                page's used lines in the order its own generator draws, the last linked to
 *                                the next page's first line (drawn from that page's generator)
 * A part writes only inside its own pages and uses its own line-order scratch, so the parts may run on
 * different CPUs at the same time and in any order: the chain depends on the seed alone. */
struct chain_page_par {
    char *base;
    size_t line, page, pages, lines_per_page, used, n;
    uint32_t *next_page; /* the page cycle: the page after page u */
    uint32_t *ln;        /* CHAIN_PAR_PARTS x lines_per_page: each part's line order */
    uint64_t seed;
    uint32_t *tail;      /* NULL (init sets it so), or `pages` entries the parts fill: page u's last line, as a line
                          * index from base (what chain_page_par_segs needs) */
};

/* Scratch the parts need, in bytes: 4 x (pages + CHAIN_PAR_PARTS x lines per page); SIZE_MAX for parameters
 * chain_build would reject or a mode other than CHAIN_PAGE. */
size_t chain_page_par_scratch_bytes(const struct chain_params *p);
/* Checks p (CHAIN_PAGE only) and the buffers, readies c and draws the page cycle: 0, or -1. */
int chain_page_par_init(struct chain_page_par *c, void *buf, const struct chain_params *p, void *scratch,
                        size_t scratch_bytes);
/* One part (0 <= part < CHAIN_PAR_PARTS): its slice of the pages. */
void chain_page_par_part(struct chain_page_par *c, unsigned part);
/* Where the chase starts (after every part) and how many elements the cycle has. */
void *chain_page_par_start(const struct chain_page_par *c, size_t *n_elems);
/* Every part in order on the calling CPU (scratch: chain_page_par_scratch_bytes). */
void *chain_page_par_build(void *buf, const struct chain_params *p, void *scratch, size_t scratch_bytes,
                           size_t *n_elems);

/* ---- a built chain relinked: a fresh order of its segments in O(segments) writes --------------------------
 * A chain cut into segments, each a path of elements from its head to its tail whose inner links stay as built:
 * a CHAIN_PAGE chain's pages (a page's lines are a path: the page's random line order), or consecutive stretches
 * of a CHAIN_RANDOM cycle's visiting order (chain_par's order array, still in the scratch after the build).
 * chain_relink links a window of them, segments [lo, lo + count), into one random cycle (Sattolo over the window
 * with the seed's generator): each tail's link to the head of the segment after it, `count` pointer stores; the
 * inner links, the segments outside the window and every other byte stay as they are. A different seed gives
 * another order of the segments, another window other memory (a replicate's fresh chain without a rebuild:
 * docs/measurement.md "Replicates"). */
struct chain_segs {
    char *base;
    size_t line;
    size_t n;        /* segments */
    size_t per;      /* elements per segment when all are equal (CHAIN_PAGE), else 0 */
    size_t total;    /* elements of all segments */
    uint32_t *head;  /* n line indices from base: where segment s starts */
    uint32_t *tail;  /* n: its last element */
    uint32_t *order; /* n: chain_relink's work space */
};
/* uint32 entries of the memory the segments of a chain need: 3 per segment (head, tail, work space). */
#define CHAIN_SEGS_WORDS(n) (3 * (size_t)(n))
/* A CHAIN_PAGE chain built in parts with c->tail set to mem + pages (CHAIN_SEGS_WORDS(pages) entries at mem)
 * before its parts ran: its pages as segments. 0, or -1 when c->tail is not that. */
int chain_page_par_segs(const struct chain_page_par *c, struct chain_segs *s, uint32_t *mem);
/* A CHAIN_RANDOM chain built by chain_par (its order array still intact): its visiting order cut into m
 * stretches of n / m elements or one more (1 <= m <= n), as segments in mem (CHAIN_SEGS_WORDS(m) entries). 0, or
 * -1. */
int chain_par_segs(const struct chain_par *c, size_t m, struct chain_segs *s, uint32_t *mem);
/* Links segments [lo, lo + count) into one cycle in a random order drawn from seed, the segments of stratum
 * `first` (those whose index is first mod strata) visited first, from the start on: replicates that start each in a
 * stratum of their own and walk fewer segments than a stratum holds chase disjoint segments (none finds another's
 * lines still cached). strata 1: a uniformly random cycle. Returns where the chase starts (the first segment's
 * head) and the cycle's element count in *n_elems (optional), or NULL when the window does not fit, is empty,
 * (count < n) the segments are not of equal length, or strata is 0. */
void *chain_relink(const struct chain_segs *s, size_t lo, size_t count, uint64_t seed, size_t first, size_t strata,
                   size_t *n_elems);

#endif
