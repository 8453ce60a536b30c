/* bw_kernels.c - the streaming kernels in SSE2, AVX2 and AVX-512F (one template, three target attributes) and the run-time choice. */
#include "bench/bw_kernels.h"
#include "measure/timing.h"

/* GCC vector types: the compiler emits exactly one aligned vector load/store per element access. */
typedef double v2d __attribute__((vector_size(16)));
typedef uint64_t v2u __attribute__((vector_size(16)));
typedef double v4d __attribute__((vector_size(32)));
typedef uint64_t v4u __attribute__((vector_size(32)));
typedef double v8d __attribute__((vector_size(64)));
typedef uint64_t v8u __attribute__((vector_size(64)));

/* Hides a value from the optimizer (emits nothing): without it GCC turns the write loop into memset and
 * the copy loop into memcpy (-ftree-loop-distribute-patterns), which would time libc/klib, not the kernel. */
#define BW_LAUNDER(v) __asm__("" : "+v"(v))

/*
 * One template per ISA. U vectors of each array per loop iteration make BW_GRANULE bytes; the read kernel
 * keeps U independent accumulators so the 1-cycle integer adds never limit an L1-resident pass.
 * NT is the non-temporal store mnemonic (MOVNTPD / VMOVNTPD, SDM Vol. 2B): it writes around the caches
 * through the write-combining buffers, so no RFO; SFENCE drains them at the end of each pass. write_nt,
 * copy_nt and triad_nt are write, copy and triad with every store non-temporal (the loads and the FMA the same).
 */
#define BW_TEMPLATE(SFX, TGT, VD, VU, U, NT)                                                                  \
    TGT static uint64_t read_##SFX(const struct bw_arrays *x, uint64_t passes)                              \
    {                                                                                                         \
        VU s[4] = {{0}, {0}, {0}, {0}};                                                                       \
        for (uint64_t p = 0; p < passes; p++) {                                                               \
            const VU *a = (const VU *)x->a;                                                                   \
            for (size_t i = 0; i < x->n; i += U * sizeof(VU) / 8, a += U) {                                   \
                _Pragma("GCC unroll 16") for (unsigned j = 0; j < U; j++) s[j & 3] += a[j];                   \
            }                                                                                                 \
            timing_barrier(); /* one pass is one pass: nothing is merged or hoisted across passes */          \
        }                                                                                                     \
        VU t = s[0] + s[1] + s[2] + s[3];                                                                     \
        uint64_t r = 0;                                                                                       \
        for (unsigned k = 0; k < sizeof(VU) / 8; k++)                                                         \
            r += t[k];                                                                                        \
        return r;                                                                                             \
    }                                                                                                         \
    TGT static uint64_t write_##SFX(const struct bw_arrays *x, uint64_t passes)                             \
    {                                                                                                         \
        const VD q = (VD){0} + x->q;                                                                          \
        for (uint64_t p = 0; p < passes; p++) {                                                               \
            VD *a = (VD *)x->a;                                                                               \
            for (size_t i = 0; i < x->n; i += U * sizeof(VD) / 8, a += U) {                                   \
                VD v = q;                                                                                     \
                BW_LAUNDER(v);                                                                                \
                _Pragma("GCC unroll 16") for (unsigned j = 0; j < U; j++) a[j] = v;                            \
            }                                                                                                 \
            timing_barrier();                                                                                 \
        }                                                                                                     \
        return 0;                                                                                             \
    }                                                                                                         \
    TGT static uint64_t write_nt_##SFX(const struct bw_arrays *x, uint64_t passes)                          \
    {                                                                                                         \
        const VD q = (VD){0} + x->q;                                                                          \
        for (uint64_t p = 0; p < passes; p++) {                                                               \
            VD *a = (VD *)x->a;                                                                               \
            for (size_t i = 0; i < x->n; i += U * sizeof(VD) / 8, a += U) {                                   \
                _Pragma("GCC unroll 16") for (unsigned j = 0; j < U; j++)                                      \
                    __asm__ volatile(NT " %1, %0" : "=m"(a[j]) : "v"(q));                                     \
            }                                                                                                 \
            __asm__ volatile("sfence" ::: "memory");                                                          \
        }                                                                                                     \
        return 0;                                                                                             \
    }                                                                                                         \
    TGT static uint64_t copy_##SFX(const struct bw_arrays *x, uint64_t passes)                              \
    {                                                                                                         \
        for (uint64_t p = 0; p < passes; p++) {                                                               \
            const VD *a = (const VD *)x->a;                                                                   \
            VD *c = (VD *)x->c;                                                                               \
            for (size_t i = 0; i < x->n; i += U * sizeof(VD) / 8, a += U, c += U) {                           \
                _Pragma("GCC unroll 16") for (unsigned j = 0; j < U; j++)                                     \
                {                                                                                             \
                    VD t = a[j];                                                                              \
                    BW_LAUNDER(t);                                                                            \
                    c[j] = t;                                                                                 \
                }                                                                                             \
            }                                                                                                 \
            timing_barrier();                                                                                 \
        }                                                                                                     \
        return 0;                                                                                             \
    }                                                                                                         \
    TGT static uint64_t triad_##SFX(const struct bw_arrays *x, uint64_t passes)                             \
    {                                                                                                         \
        const VD q = (VD){0} + x->q;                                                                          \
        for (uint64_t p = 0; p < passes; p++) {                                                               \
            VD *a = (VD *)x->a;                                                                               \
            const VD *b = (const VD *)x->b, *c = (const VD *)x->c;                                            \
            for (size_t i = 0; i < x->n; i += U * sizeof(VD) / 8, a += U, b += U, c += U) {                   \
                _Pragma("GCC unroll 16") for (unsigned j = 0; j < U; j++) a[j] = b[j] + q * c[j];              \
            }                                                                                                 \
            timing_barrier();                                                                                 \
        }                                                                                                     \
        return 0;                                                                                             \
    }                                                                                                         \
    TGT static uint64_t copy_nt_##SFX(const struct bw_arrays *x, uint64_t passes)                           \
    {                                                                                                         \
        const size_t n = x->n; /* a local: the asm stores could alias *x for all GCC knows */                 \
        for (uint64_t p = 0; p < passes; p++) {                                                               \
            const VD *a = (const VD *)x->a;                                                                   \
            VD *c = (VD *)x->c;                                                                               \
            for (size_t i = 0; i < n; i += U * sizeof(VD) / 8, a += U, c += U) {                              \
                _Pragma("GCC unroll 16") for (unsigned j = 0; j < U; j++)                                     \
                    __asm__ volatile(NT " %1, %0" : "=m"(c[j]) : "v"(a[j]));                                  \
            }                                                                                                 \
            __asm__ volatile("sfence" ::: "memory");                                                          \
        }                                                                                                     \
        return 0;                                                                                             \
    }                                                                                                         \
    TGT static uint64_t triad_nt_##SFX(const struct bw_arrays *x, uint64_t passes)                          \
    {                                                                                                         \
        const size_t n = x->n; /* a local: the asm stores could alias *x for all GCC knows */                 \
        const VD q = (VD){0} + x->q;                                                                          \
        for (uint64_t p = 0; p < passes; p++) {                                                               \
            VD *a = (VD *)x->a;                                                                               \
            const VD *b = (const VD *)x->b, *c = (const VD *)x->c;                                            \
            for (size_t i = 0; i < n; i += U * sizeof(VD) / 8, a += U, b += U, c += U) {                      \
                _Pragma("GCC unroll 16") for (unsigned j = 0; j < U; j++)                                     \
                    __asm__ volatile(NT " %1, %0" : "=m"(a[j]) : "v"(b[j] + q * c[j]));                       \
            }                                                                                                 \
            __asm__ volatile("sfence" ::: "memory");                                                          \
        }                                                                                                     \
        return 0;                                                                                             \
    }

#define BW_NO_TARGET
BW_TEMPLATE(sse2, BW_NO_TARGET, v2d, v2u, 16, "movntpd")
BW_TEMPLATE(avx2, __attribute__((target("avx2"))), v4d, v4u, 8, "vmovntpd")
BW_TEMPLATE(avx512, __attribute__((target("avx512f"))), v8d, v8u, 4, "vmovntpd")

_Static_assert(16 * 16 == BW_GRANULE && 8 * 32 == BW_GRANULE && 4 * 64 == BW_GRANULE,
               "each ISA's loop body covers one granule");

static const bw_fn bw_table[BW_ISA_COUNT][BW_KERNEL_COUNT] = {
    [BW_ISA_SSE2] = {read_sse2, write_sse2, write_nt_sse2, copy_sse2, triad_sse2, copy_nt_sse2, triad_nt_sse2},
    [BW_ISA_AVX2] = {read_avx2, write_avx2, write_nt_avx2, copy_avx2, triad_avx2, copy_nt_avx2, triad_nt_avx2},
    [BW_ISA_AVX512] = {read_avx512, write_avx512, write_nt_avx512, copy_avx512, triad_avx512, copy_nt_avx512,
                       triad_nt_avx512},
};

static const char *const kernel_names[BW_KERNEL_COUNT] = {"read",  "write",   "write_nt", "copy",
                                                          "triad", "copy_nt", "triad_nt"};
static const unsigned kernel_arrays[BW_KERNEL_COUNT] = {BW_A, BW_A, BW_A, BW_A | BW_C, BW_A | BW_B | BW_C,
                                                        BW_A | BW_C, BW_A | BW_B | BW_C};
static const char *const isa_names[BW_ISA_COUNT] = {"sse2", "avx2", "avx512"};

const char *bw_kernel_name(enum bw_kernel k) { return (unsigned)k < BW_KERNEL_COUNT ? kernel_names[k] : "?"; }
const char *bw_isa_name(enum bw_isa isa) { return (unsigned)isa < BW_ISA_COUNT ? isa_names[isa] : "?"; }

int bw_kernel_from_name(const char *name)
{
    for (unsigned k = 0; name && k < BW_KERNEL_COUNT; k++)
        if (!strcmp(name, kernel_names[k]))
            return (int)k;
    return -1;
}

bool bw_kernel_nt(enum bw_kernel k) { return k == BW_WRITE_NT || k == BW_COPY_NT || k == BW_TRIAD_NT; }

unsigned bw_kernel_arrays(enum bw_kernel k) { return (unsigned)k < BW_KERNEL_COUNT ? kernel_arrays[k] : 0; }

uint64_t bw_kernel_bytes(enum bw_kernel k, size_t n)
{
    unsigned m = bw_kernel_arrays(k);
    unsigned arrays = (m & 1) + ((m >> 1) & 1) + ((m >> 2) & 1);
    return (uint64_t)arrays * 8 * n;
}

size_t bw_elems_for(uint64_t bytes_per_array) { return (size_t)(ALIGN_DOWN(bytes_per_array, BW_GRANULE) / 8); }

int bw_kernel_check(enum bw_kernel k, const struct bw_arrays *x)
{
    unsigned m = bw_kernel_arrays(k);
    if (!m || !x || x->n == 0 || (x->n * 8) % BW_GRANULE)
        return -1;
    double *arr[3] = {x->a, x->b, x->c};
    for (unsigned i = 0; i < 3; i++)
        if ((m & (1u << i)) && (!arr[i] || (uintptr_t)arr[i] % BW_ALIGN))
            return -1;
    return 0;
}

bool bw_isa_usable(enum bw_isa isa, const struct cpu_features *f, uint64_t xcr0, const char **why)
{
    const char *w = "";
    switch (isa) {
    case BW_ISA_SSE2:
        /* Architectural on x86-64 (SDM Vol. 1, 5.6); CR4.OSFXSR is set by every kernel that uses SSE. */
        break;
    case BW_ISA_AVX2:
        if (!f || !f->avx || !f->avx2)
            w = "CPUID: no AVX2";
        else if ((xcr0 & BW_XCR0_AVX) != BW_XCR0_AVX)
            w = "XCR0: YMM state not enabled";
        break;
    case BW_ISA_AVX512:
        if (!f || !f->avx512f)
            w = "CPUID: no AVX-512F";
        else if ((xcr0 & BW_XCR0_AVX512) != BW_XCR0_AVX512)
            w = "XCR0: opmask/ZMM state not enabled";
        break;
    default:
        w = "unknown ISA";
        break;
    }
    if (why)
        *why = w;
    return w[0] == 0;
}

enum bw_isa bw_isa_widest(const struct cpu_features *f, uint64_t xcr0)
{
    for (int i = BW_ISA_COUNT - 1; i > 0; i--)
        if (bw_isa_usable((enum bw_isa)i, f, xcr0, NULL))
            return (enum bw_isa)i;
    return BW_ISA_SSE2;
}

uint64_t bw_xcr0(void)
{
#if defined(__x86_64__)
    uint32_t a, b, c, d;
    __asm__ volatile("cpuid" : "=a"(a), "=b"(b), "=c"(c), "=d"(d) : "a"(1), "c"(0));
    (void)a, (void)b, (void)d;
    if (!(c & (1u << 27))) /* OSXSAVE: XGETBV is #UD without it */
        return 0;
    uint32_t lo, hi;
    __asm__ volatile("xgetbv" : "=a"(lo), "=d"(hi) : "c"(0));
    return ((uint64_t)hi << 32) | lo;
#else
    return 0;
#endif
}

bw_fn bw_kernel_fn(enum bw_kernel k, enum bw_isa isa)
{
    if ((unsigned)k >= BW_KERNEL_COUNT || (unsigned)isa >= BW_ISA_COUNT)
        return NULL;
    return bw_table[isa][k];
}
