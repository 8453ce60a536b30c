/* io.h - inline wrappers for the privileged x86 instructions the kernel uses (ports, CRs, CPUID, TSC). */
#ifndef PMB_IO_H
#define PMB_IO_H

#include "kernel/klib.h"

static ALWAYS_INLINE void outb(uint16_t port, uint8_t v) { __asm__ volatile("outb %0, %1" : : "a"(v), "Nd"(port)); }
static ALWAYS_INLINE void outw(uint16_t port, uint16_t v) { __asm__ volatile("outw %0, %1" : : "a"(v), "Nd"(port)); }
static ALWAYS_INLINE void outl(uint16_t port, uint32_t v) { __asm__ volatile("outl %0, %1" : : "a"(v), "Nd"(port)); }
static ALWAYS_INLINE uint8_t inb(uint16_t port)
{
    uint8_t v;
    __asm__ volatile("inb %1, %0" : "=a"(v) : "Nd"(port));
    return v;
}
static ALWAYS_INLINE uint16_t inw(uint16_t port)
{
    uint16_t v;
    __asm__ volatile("inw %1, %0" : "=a"(v) : "Nd"(port));
    return v;
}
static ALWAYS_INLINE uint32_t inl(uint16_t port)
{
    uint32_t v;
    __asm__ volatile("inl %1, %0" : "=a"(v) : "Nd"(port));
    return v;
}

static ALWAYS_INLINE void cpuid_raw(uint32_t leaf, uint32_t sub, uint32_t r[4])
{
    __asm__ volatile("cpuid" : "=a"(r[0]), "=b"(r[1]), "=c"(r[2]), "=d"(r[3]) : "a"(leaf), "c"(sub));
}

static ALWAYS_INLINE uint64_t rdtsc_raw(void)
{
    uint32_t lo, hi;
    __asm__ volatile("rdtsc" : "=a"(lo), "=d"(hi));
    return ((uint64_t)hi << 32) | lo;
}

/* lfence; rdtsc; lfence: keeps earlier and later instructions out of the timed window (SDM 17.17). */
static ALWAYS_INLINE uint64_t rdtsc_ordered(void)
{
    uint32_t lo, hi;
    __asm__ volatile("lfence\n\trdtsc\n\tlfence" : "=a"(lo), "=d"(hi) : : "memory");
    return ((uint64_t)hi << 32) | lo;
}

#define DEFINE_CR(n)                                                                                 \
    static ALWAYS_INLINE uint64_t read_cr##n(void)                                                   \
    {                                                                                                \
        uint64_t v;                                                                                  \
        __asm__ volatile("mov %%cr" #n ", %0" : "=r"(v));                                            \
        return v;                                                                                    \
    }                                                                                                \
    static ALWAYS_INLINE void write_cr##n(uint64_t v) { __asm__ volatile("mov %0, %%cr" #n : : "r"(v) : "memory"); }
DEFINE_CR(0)
DEFINE_CR(2)
DEFINE_CR(3)
DEFINE_CR(4)
#undef DEFINE_CR

/* CR0 / CR4 bits (SDM Vol. 3A 2.5). */
#define CR0_MP (1ULL << 1)
#define CR0_EM (1ULL << 2)
#define CR0_TS (1ULL << 3)
#define CR0_NE (1ULL << 5)
#define CR0_WP (1ULL << 16)
#define CR0_NW (1ULL << 29)
#define CR0_CD (1ULL << 30)
#define CR4_PSE (1ULL << 4)
#define CR4_PAE (1ULL << 5)
#define CR4_PGE (1ULL << 7)
#define CR4_PCE (1ULL << 8) /* RDPMC allowed at any CPL; harmless at CPL0, needed by a hosted twin */
#define CR4_OSFXSR (1ULL << 9)
#define CR4_OSXMMEXCPT (1ULL << 10)
#define CR4_OSXSAVE (1ULL << 18)

static ALWAYS_INLINE uint64_t xgetbv(uint32_t idx)
{
    uint32_t lo, hi;
    __asm__ volatile("xgetbv" : "=a"(lo), "=d"(hi) : "c"(idx));
    return ((uint64_t)hi << 32) | lo;
}

static ALWAYS_INLINE void cli(void) { __asm__ volatile("cli" ::: "memory"); }
static ALWAYS_INLINE void hlt(void) { __asm__ volatile("hlt" ::: "memory"); }
static ALWAYS_INLINE void cpu_pause(void) { __asm__ volatile("pause" ::: "memory"); }
static ALWAYS_INLINE uint64_t read_rflags(void)
{
    uint64_t f;
    __asm__ volatile("pushfq; popq %0" : "=r"(f));
    return f;
}
/* SGDT: the limit and base of the running CPU's GDT (smp.c finds its per-CPU tables from the base). */
struct gdtr_value {
    uint16_t limit;
    uint64_t base;
} __attribute__((packed));
static ALWAYS_INLINE struct gdtr_value sgdt(void)
{
    struct gdtr_value g;
    __asm__ volatile("sgdt %0" : "=m"(g));
    return g;
}
static ALWAYS_INLINE void wbinvd(void) { __asm__ volatile("wbinvd" ::: "memory"); }
static ALWAYS_INLINE void invlpg(uint64_t va) { __asm__ volatile("invlpg (%0)" : : "r"(va) : "memory"); }

static ALWAYS_INLINE uint32_t mmio_read32(uint64_t a) { return *(volatile uint32_t *)(uintptr_t)a; }
static ALWAYS_INLINE void mmio_write32(uint64_t a, uint32_t v) { *(volatile uint32_t *)(uintptr_t)a = v; }
static ALWAYS_INLINE uint64_t mmio_read64(uint64_t a) { return *(volatile uint64_t *)(uintptr_t)a; }

#endif
