/* msr.h - architectural MSRs the kernel uses, and the one MSR choke point: inline rdmsr/wrmsr for hot
 * paths, #GP-safe rdmsr_safe/wrmsr_safe (the traced path), and the msr_trace queue. */
#ifndef PMB_MSR_H
#define PMB_MSR_H

/*
 * Sources (numbers cross-checked against Linux arch/x86/include/asm/msr-index.h):
 *   [SDM4]  Intel SDM Vol. 4, Table 2-2 "IA-32 Architectural MSRs" (numbers and bit layouts).
 *   [SDM3]  Intel SDM Vol. 3A: 11.4.4 (IA32_APIC_BASE), 11.12 (x2APIC, Table 11-6 register map),
 *           12.12 (PAT, Table 12-10 memory-type encodings).
 *   [APM2]  AMD APM Vol. 2, 3.1.7 (EFER).
 *   [SDM4-NHM] [SDM4-SNB] [SDM4-HSW]  Intel SDM Vol. 4, the model-specific tables for Nehalem (06_1AH ..),
 *           Sandy Bridge (06_2AH ..) and Haswell (06_3CH ..) and later: MSR_PKG_CST_CONFIG_CONTROL.
 *   [APM2-HWCR] AMD APM Vol. 2, Appendix A "MSR Cross-Reference", and the family PPRs: HWCR (C001_0015).
 * PMU MSRs (counters, IA32_MISC_ENABLE's perfmon bits, DS, LBR, uncore) live in pmu/msr_pmu.h.
 * This header is also included from assembly (kernel/trampoline.S): only #defines outside the
 * __ASSEMBLER__ guard, and bits through MSR_BIT, which drops the C suffix there.
 */

#ifdef __ASSEMBLER__
#define MSR_BIT(n) (1 << (n))
#else
#define MSR_BIT(n) (1ULL << (n))
#endif

/* ---------------------------------------------------------------------------------------------
 * IA32_APIC_BASE (0x1B) [SDM4], [SDM3] 11.4.4 Figure 11-5
 *   Bit Position  Use
 *   8             BSP   this processor is the bootstrap processor (RO)
 *   10            EXTD  x2APIC mode (with EN)                          x2APIC CPUs
 *   11            EN    APIC global enable
 *   MAXPHYADDR-1:12  APIC base physical address (xAPIC MMIO page)
 * ------------------------------------------------------------------------------------------- */
#define MSR_IA32_APIC_BASE 0x0000001B
#define MSR_IA32_APIC_BASE_BSP MSR_BIT(8)
#define MSR_IA32_APIC_BASE_EXTD MSR_BIT(10)
#define MSR_IA32_APIC_BASE_EN MSR_BIT(11)

/* ---------------------------------------------------------------------------------------------
 * MSR_PKG_CST_CONFIG_CONTROL (0xE2) [SDM4-NHM] [SDM4-SNB] [SDM4-HSW]: model-specific (Intel Core from
 * Nehalem); read only on the models kernel/turbo.c lists, and never under a hypervisor.
 *   Bit Position  Use
 *   2:0           package C-state limit (Nehalem .. Ivy Bridge; the encodings differ, see turbo.c)
 *   3:0           package C-state limit (Haswell and later client parts; servers keep 2:0)
 *   10            I/O MWAIT redirection enable
 *   15            CFG Lock: bits 15:0 are read-only until the next reset
 *   25 / 26       C3 / C1 state auto-demotion enable
 * ------------------------------------------------------------------------------------------- */
#define MSR_PKG_CST_CONFIG_CONTROL 0x000000E2
#define PKG_CST_CONFIG_LIMIT_MASK3 0x7ULL /* bits 2:0 */
#define PKG_CST_CONFIG_LIMIT_MASK4 0xFULL /* bits 3:0 */
#define PKG_CST_CONFIG_CFG_LOCK MSR_BIT(15)

/* ---------------------------------------------------------------------------------------------
 * IA32_MPERF (0xE7) / IA32_APERF (0xE8) [SDM4], CPUID.06H:ECX[0]: free-running counts at the
 * maximum (TSC) frequency and at the actual frequency; only their ratio is meaningful.
 * ------------------------------------------------------------------------------------------- */
#define MSR_IA32_MPERF 0x000000E7
#define MSR_IA32_APERF 0x000000E8

/* ---------------------------------------------------------------------------------------------
 * IA32_PERF_CTL (0x199) [SDM4]: the requested performance state (per logical processor).
 *   Bit Position  Use
 *   15:0          target performance state value
 *   32            IDA engage: when 1, disengages IDA (turbo) for this processor  (06_0FH mobile and later;
 *                 ignored while HWP is enabled, IA32_PM_ENABLE[0])
 * ------------------------------------------------------------------------------------------- */
#define MSR_IA32_PERF_CTL 0x00000199
#define IA32_PERF_CTL_IDA_DISENGAGE MSR_BIT(32)

/* ---------------------------------------------------------------------------------------------
 * IA32_MISC_ENABLE (0x1A0) [SDM4]; the perfmon bits (7, 11, 12) are named in pmu/msr_pmu.h, which defines
 * the same number with this exact spelling (an identical redefinition is valid C).
 *   Bit Position  Use
 *   16            Enhanced Intel SpeedStep enable
 *   38            IDA (turbo) disable: 1 disables turbo and clears CPUID.06H:EAX[1]; meant for the BIOS,
 *                 on many parts a write is ignored or #GPs
 * ------------------------------------------------------------------------------------------- */
#define MSR_IA32_MISC_ENABLE 0x1a0U
#define IA32_MISC_ENABLE_EIST MSR_BIT(16)
#define IA32_MISC_ENABLE_IDA_DISABLE MSR_BIT(38)

/* ---------------------------------------------------------------------------------------------
 * IA32_PAT (0x277) [SDM4], [SDM3] 12.12.2: eight memory-type fields PA0..PA7, one per byte.
 *   Bit Position  Use
 *   8i+2:8i       PAi  memory type for PAT index i (Table 12-10 encodings below)
 *   8i+7:8i+3     reserved (a set bit #GPs)
 * ------------------------------------------------------------------------------------------- */
#define MSR_IA32_PAT 0x00000277
#define IA32_PAT_MT_UC 0x00ULL
#define IA32_PAT_MT_WC 0x01ULL
#define IA32_PAT_MT_WT 0x04ULL
#define IA32_PAT_MT_WP 0x05ULL
#define IA32_PAT_MT_WB 0x06ULL
#define IA32_PAT_MT_UC_MINUS 0x07ULL /* UC- */
#define IA32_PAT_PA(i, mt) ((uint64_t)(mt) << (8U * (unsigned)(i)))

/* ---------------------------------------------------------------------------------------------
 * IA32_PKRS (0x6E1) [SDM4], supervisor protection keys (CPUID.07H.0:ECX[31] PKS)
 *   Bit Position  Use
 *   2i / 2i+1     ADi / WDi  access / write disable for key i (i = 0..15)
 *   63:32         reserved: writing a 1 #GPs (and the MSR is absent without PKS): the fixup self-test
 * ------------------------------------------------------------------------------------------- */
#define MSR_IA32_PKRS 0x000006E1
#define IA32_PKRS_RESERVED_BIT32 MSR_BIT(32)

/* ---------------------------------------------------------------------------------------------
 * IA32_PM_ENABLE (0x770) [SDM4], CPUID.06H:EAX[7] HWP: bit 0 HWP enabled (then IA32_PERF_CTL is ignored).
 * ------------------------------------------------------------------------------------------- */
#define MSR_IA32_PM_ENABLE 0x00000770
#define IA32_PM_ENABLE_HWP MSR_BIT(0)

/* ---------------------------------------------------------------------------------------------
 * x2APIC registers [SDM4] "IA32_X2APIC_*", [SDM3] 11.12.1.2 Table 11-6: the xAPIC MMIO register at
 * offset off is MSR 0x800 + off/16 (0x800..0x8FF). The ICR is one 64-bit MSR in x2APIC mode
 * ([SDM3] 11.12.9): destination APIC ID in 63:32, the xAPIC ICR low word in 31:0.
 * ------------------------------------------------------------------------------------------- */
#define MSR_IA32_X2APIC_FIRST 0x00000800
#define MSR_IA32_X2APIC_REG(mmio_off) (MSR_IA32_X2APIC_FIRST + ((mmio_off) >> 4))
#define MSR_IA32_X2APIC_ICR 0x00000830
#define IA32_X2APIC_ICR_DEST_SHIFT 32

/* ---------------------------------------------------------------------------------------------
 * IA32_EFER (0xC0000080) [SDM4], [APM2] 3.1.7
 *   Bit Position  Use
 *   0             SCE  SYSCALL/SYSRET enable
 *   8             LME  IA-32e (long) mode enable
 *   10            LMA  IA-32e mode active (RO)
 *   11            NXE  execute-disable bit enable
 * ------------------------------------------------------------------------------------------- */
#define MSR_IA32_EFER 0xC0000080
#define IA32_EFER_SCE MSR_BIT(0)
#define IA32_EFER_LME MSR_BIT(8)
#define IA32_EFER_LMA MSR_BIT(10)
#define IA32_EFER_NXE MSR_BIT(11)

/* ---------------------------------------------------------------------------------------------
 * HWCR (MSRC001_0015, Hardware Configuration) [APM2-HWCR], AMD family 0Fh and later (Linux: MSR_K7_HWCR)
 *   Bit Position  Use
 *   25            CpbDis  core performance boost disable (CPUID 8000_0007H:EDX[9] CPB), per core
 * ------------------------------------------------------------------------------------------- */
#define MSR_AMD_HWCR 0xC0010015
#define AMD_HWCR_CPB_DIS MSR_BIT(25)

#ifndef __ASSEMBLER__

#include "kernel/klib.h"

/* Result of a safe access. */
#define MSR_OK 0
#define MSR_EFAULT (-1)

/* Raw access for hot paths: a #GP here is a crash. Not traced. */
static ALWAYS_INLINE uint64_t rdmsr(uint32_t msr)
{
    uint32_t lo, hi;
    __asm__ volatile("rdmsr" : "=a"(lo), "=d"(hi) : "c"(msr));
    return ((uint64_t)hi << 32) | lo;
}

static ALWAYS_INLINE void wrmsr(uint32_t msr, uint64_t v)
{
    __asm__ volatile("wrmsr" : : "c"(msr), "a"((uint32_t)v), "d"((uint32_t)(v >> 32)) : "memory");
}

/* Everything else: the instruction runs under the exception fixup table, so an MSR the CPU lacks (a
 * PMU model row naming one, a probe) is a returned MSR_EFAULT, never a crash. Returns MSR_OK, or
 * MSR_EFAULT when it faulted (*val is then 0). With msr_trace on, each access is queued. */
int rdmsr_safe(uint32_t msr, uint64_t *val);
int wrmsr_safe(uint32_t msr, uint64_t val);

/* ---- msr_trace (config trace_msr=1) --------------------------------------------------------
 * After msr_trace_start every rdmsr_safe/wrmsr_safe on any CPU is queued here, and the BSP writes
 * the queue out as `msr_trace` records (seq, cpu, op, msr, value, safe, ok, dropped_before) when it
 * makes an access or calls msr_trace_flush, with no record open and the run record out (a record
 * before it would break the log contract). While quiet (a PMU measurement window is open) its
 * accesses only queue: serial output would land in the measured code. msr_trace_flush writes the
 * queue even then. `safe` is always true: every traced access runs under the fixup. The queue holds
 * 4096 entries; what does not fit is counted (msr_trace_dropped; dropped_before on the next record). */
void msr_trace_start(void);
void msr_trace_quiet(bool quiet);
void msr_trace_flush(void);
uint64_t msr_trace_dropped(void);

/* Other faulting instructions routed through the same fixup table (used for probes and self-tests). */
int xsetbv_safe(uint32_t idx, uint64_t val);
int read_u64_safe(uint64_t addr, uint64_t *val);

#endif /* __ASSEMBLER__ */

#endif
