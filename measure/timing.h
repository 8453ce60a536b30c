/* timing.h - serialized TSC/PMC reads, pause and barriers for timed regions (kernel and Linux user space). */
#ifndef PMB_MEASURE_TIMING_H
#define PMB_MEASURE_TIMING_H

#include "kernel/klib.h"
#include "measure/serialize.h"

/* RDPMC index of fixed-function counter n: ECX[30] selects the fixed counters (SDM Vol. 2B RDPMC). */
#define TIMING_RDPMC_FIXED(n) ((1u << 30) | (uint32_t)(n))

/* Keeps the compiler from moving memory accesses across this point; emits nothing. */
#define timing_barrier() __asm__ __volatile__("" ::: "memory")

#if defined(__x86_64__)

static ALWAYS_INLINE uint64_t timing_rdtsc(void)
{
    uint32_t lo, hi;
    __asm__ __volatile__("lfence\n\trdtsc\n\tlfence" : "=a"(lo), "=d"(hi) : : "memory");
    return ((uint64_t)hi << 32) | lo;
}

static ALWAYS_INLINE uint64_t timing_rdtsc_cpuid(void)
{
    uint32_t lo, hi;
    /* The second CPUID keeps later instructions from starting before RDTSC has read the counter. */
    __asm__ __volatile__("xorl %%eax, %%eax\n\tcpuid\n\trdtsc\n\t"
                         "movl %%eax, %0\n\tmovl %%edx, %1\n\t"
                         "xorl %%eax, %%eax\n\tcpuid"
                         : "=&r"(lo), "=&r"(hi)
                         :
                         : "rax", "rbx", "rcx", "rdx", "memory");
    return ((uint64_t)hi << 32) | lo;
}

/* RDTSCP waits for earlier instructions to execute before reading (not for stores to drain); the trailing
 * LFENCE holds back later ones. *aux gets IA32_TSC_AUX (the OS's CPU number). The caller must have seen
 * CPUID.80000001H:EDX.RDTSCP[bit 27]; without it the instruction is #UD. */
static ALWAYS_INLINE uint64_t timing_rdtscp(uint32_t *aux)
{
    uint32_t lo, hi, c;
    __asm__ __volatile__("rdtscp\n\tlfence" : "=a"(lo), "=d"(hi), "=c"(c) : : "memory");
    if (aux)
        *aux = c;
    return ((uint64_t)hi << 32) | lo;
}

/* Reads performance counter idx (general: 0..N-1, fixed: TIMING_RDPMC_FIXED(n)), fenced like
 * timing_rdtsc since RDPMC is not serializing either. #GP in user mode unless CR4.PCE is set. */
static ALWAYS_INLINE uint64_t timing_rdpmc(uint32_t idx)
{
    uint32_t lo, hi;
    __asm__ __volatile__("lfence\n\trdpmc\n\tlfence" : "=a"(lo), "=d"(hi) : "c"(idx) : "memory");
    return ((uint64_t)hi << 32) | lo;
}

/* Spin-wait hint: saves power and avoids the memory-order machine clear on leaving a spin loop. */
static ALWAYS_INLINE void timing_pause(void) { __asm__ __volatile__("pause" ::: "memory"); }

static ALWAYS_INLINE void timing_lfence(void) { __asm__ __volatile__("lfence" ::: "memory"); }

#elif defined(PMB_HOST)

/* Non-x86 host: pure-logic tests that include this header still build. These are not clocks: each read
 * just advances a per-file counter. */
static uint64_t timing_fake_tsc_;
static inline uint64_t timing_rdtsc(void) { return ++timing_fake_tsc_; }
static inline uint64_t timing_rdtsc_cpuid(void) { return ++timing_fake_tsc_; }
static inline uint64_t timing_rdtscp(uint32_t *aux)
{
    if (aux)
        *aux = 0;
    return ++timing_fake_tsc_;
}
static inline uint64_t timing_rdpmc(uint32_t idx)
{
    (void)idx;
    return 0;
}
static inline void timing_pause(void) { timing_barrier(); }
static inline void timing_lfence(void) { timing_barrier(); }

#else
#error "measure/timing.h: x86-64 only (or a PMB_HOST test build)"
#endif

/* The timestamp read selected by s. */
static ALWAYS_INLINE uint64_t timing_read(enum timing_serialize s)
{
    return s == TIMING_CPUID ? timing_rdtsc_cpuid() : timing_rdtsc();
}

#endif
