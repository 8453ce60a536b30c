/* bw_kernels.h - STREAM-style streaming kernels (read, write, copy, triad; write, copy and triad also with non-temporal stores) per vector ISA, picked at run time. */
#ifndef PMB_BENCH_BW_KERNELS_H
#define PMB_BENCH_BW_KERNELS_H

#include "kernel/klib.h"
#include "kernel/cpuid.h"

/*
 * The kernels, over arrays of doubles a, b, c (McCalpin's STREAM names them the same way):
 *   read      s += a[i]            (64-bit integer sum of the words, so the loads cannot be dropped)
 *   write     a[i] = q
 *   write_nt  a[i] = q             with non-temporal stores (MOVNTPD), SFENCE after each pass
 *   copy      c[i] = a[i]          (STREAM "Copy")
 *   triad     a[i] = b[i] + q*c[i] (STREAM "Triad"; the AVX-512 build may fuse it into one FMA)
 *   copy_nt   c[i] = a[i]          with non-temporal stores, SFENCE after each pass
 *   triad_nt  a[i] = b[i] + q*c[i] with non-temporal stores, SFENCE after each pass
 * Bytes per pass follow STREAM's convention: every array element read or written counts once, the
 * write-allocate (RFO) read of a cached store does not. So write/copy/triad at DRAM sizes move about
 * 2x / 1.5x / 1.33x the counted bytes over the bus (an uncore count sees that; docs/bandwidth-branch-penalty.md);
 * the _nt kernels store around the caches, with no write-allocate read, and move what they count (what
 * McCalpin's STREAM Copy does where the compiler turns it into a memcpy that uses non-temporal stores, and
 * likwid-bench's copy_mem / stream_mem).
 */
enum bw_kernel { BW_READ, BW_WRITE, BW_WRITE_NT, BW_COPY, BW_TRIAD, BW_COPY_NT, BW_TRIAD_NT, BW_KERNEL_COUNT };

/* Vector width of the loads and stores: SSE2 (128-bit, the x86-64 and Nehalem baseline), AVX2 (256-bit),
 * AVX-512F (512-bit). Each ISA's kernels are compiled with __attribute__((target(...))) and only called
 * when bw_isa_usable says the CPU has the instructions and XCR0 enables their register state. */
enum bw_isa { BW_ISA_SSE2, BW_ISA_AVX2, BW_ISA_AVX512, BW_ISA_COUNT };

/* Every kernel's unrolled loop body covers 256 bytes of each array (8 x 16, 8 x 32 or 4 x 64 bytes). */
#define BW_GRANULE 256u
#define BW_ALIGN 64u /* arrays start on a cache line: aligned vector loads, no line splits */

/* Arrays a kernel touches (BW_A | BW_B | BW_C). */
#define BW_A 1u
#define BW_B 2u
#define BW_C 4u

struct bw_arrays {
    double *a, *b, *c; /* BW_ALIGN-aligned; the kernel's unused arrays may be NULL */
    size_t n;          /* elements per array: a multiple of BW_GRANULE / 8 */
    double q;          /* the value written (write, write_nt) and triad's scalar */
};

/* Runs `passes` passes of the kernel over x. Returns the read kernel's sum (wrapping, over all passes), 0
 * for the others. Nothing is checked: the caller passes arrays valid for bw_kernel_check. */
typedef uint64_t (*bw_fn)(const struct bw_arrays *x, uint64_t passes);

const char *bw_kernel_name(enum bw_kernel k); /* "read" ... "triad_nt"; "?" out of range */
const char *bw_isa_name(enum bw_isa isa);     /* "sse2", "avx2", "avx512"; "?" out of range */
/* Name -> enum, -1 when unknown. */
int bw_kernel_from_name(const char *name);
unsigned bw_kernel_arrays(enum bw_kernel k);  /* BW_A | ... ; 0 out of range */
bool bw_kernel_nt(enum bw_kernel k);          /* its stores are non-temporal (write_nt, copy_nt, triad_nt) */
/* Bytes one pass counts (STREAM convention): 8n per array the kernel touches. 0 out of range. */
uint64_t bw_kernel_bytes(enum bw_kernel k, size_t n);
/* Largest element count n <= bytes_per_array / 8 that the kernels accept (a multiple of BW_GRANULE / 8). */
size_t bw_elems_for(uint64_t bytes_per_array);
/* 0 when x is fit for kernel k (arrays it uses non-NULL and aligned, n a positive multiple of the granule),
 * else -1. */
int bw_kernel_check(enum bw_kernel k, const struct bw_arrays *x);

/* XCR0 state-component bits an ISA needs enabled (SDM Vol. 1, 13.3 "Enabling the XSAVE Feature Set"):
 * bit 1 SSE, bit 2 AVX (upper YMM), bits 5-7 opmask, ZMM_Hi256, Hi16_ZMM. */
#define BW_XCR0_AVX 0x06ull
#define BW_XCR0_AVX512 0xE6ull

/* Whether ISA isa may run here: the CPUID feature flags (f) and the XCR0 the OS/kernel set. *why (optional)
 * names the missing piece, or "" when usable. */
bool bw_isa_usable(enum bw_isa isa, const struct cpu_features *f, uint64_t xcr0, const char **why);
/* Widest usable ISA (SSE2 at least). */
enum bw_isa bw_isa_widest(const struct cpu_features *f, uint64_t xcr0);
/* XCR0 as set now on this CPU: XGETBV(0) when CPUID.01H:ECX.OSXSAVE[bit 27] (read live: it reflects
 * CR4.OSXSAVE, which the kernel sets after its first CPUID decode), else 0. */
uint64_t bw_xcr0(void);

/* The kernel function, or NULL for an out-of-range pair. */
bw_fn bw_kernel_fn(enum bw_kernel k, enum bw_isa isa);

#endif
