/* msr_pmu.h - performance-monitoring MSR numbers and bit fields (Intel core/uncore/NetBurst, AMD). */
#ifndef PMB_MSR_PMU_H
#define PMB_MSR_PMU_H

/*
 * Sources (numbers cross-checked against Linux arch/x86/include/asm/msr-index.h):
 *   [NHM]  Intel Nehalem Core PMU Programming Guide, Table 26 "NHM Core PMU Register List" and
 *          Tables 3-22 (bit layouts).
 *   [SDM]  Intel SDM Vol. 3B ch. 18 (uncore: 18.8.2 / Figures 18-29..18-33) and Vol. 4 MSR tables.
 *   [P4]   SDM Vol. 3B 18.12 (NetBurst), Table "ESCR MSRs and associated counters".
 *   [AMD]  AMD APM Vol. 2 13.2 / family 10h BKDG (PERF_CTL, PERF_CTR), PPR for PerfMonV2.
 * Values are plain integers; every field is a mask/shift pair so MSR values are built with
 * mask/shift macros, never with bitfield structs.
 */

#define PMB_BIT(n) (1ULL << (n))
#define PMB_FIELD(hi, lo) (((~0ULL) >> (63 - (hi))) & ~((1ULL << (lo)) - 1))

/* ---------------------------------------------------------------------------------------------
 * Architectural performance monitoring (CPUID leaf 0AH; [NHM] 4.2 Table 25 / Table 39)
 * ------------------------------------------------------------------------------------------- */
#define CPUID_LEAF_ARCH_PERFMON 0x0aU
#define CPUID_0A_EAX_VERSION(eax) ((eax) & 0xffU)
#define CPUID_0A_EAX_NUM_GP(eax) (((eax) >> 8) & 0xffU)
#define CPUID_0A_EAX_GP_WIDTH(eax) (((eax) >> 16) & 0xffU)
#define CPUID_0A_EAX_EBX_LEN(eax) (((eax) >> 24) & 0xffU)
#define CPUID_0A_EDX_NUM_FIXED(edx) ((edx) & 0x1fU)          /* version >= 2 */
#define CPUID_0A_EDX_FIXED_WIDTH(edx) (((edx) >> 5) & 0xffU) /* version >= 2 */
#define CPUID_0A_EDX_ANYTHREAD_DEPRECATED PMB_BIT(15)        /* version 5 */
/* EBX: a SET bit means the architectural event is NOT available ([NHM] Table 25). */
#define CPUID_0A_EBX_CORE_CYCLES 0
#define CPUID_0A_EBX_INST_RETIRED 1
#define CPUID_0A_EBX_REF_CYCLES 2
#define CPUID_0A_EBX_LLC_REF 3
#define CPUID_0A_EBX_LLC_MISSES 4
#define CPUID_0A_EBX_BR_INST_RETIRED 5
#define CPUID_0A_EBX_BR_MISP_RETIRED 6
#define CPUID_0A_EBX_TOPDOWN_SLOTS 7 /* version 5 */

/* CPUID.1 feature flags the PMU layer needs. */
#define CPUID_1_ECX_DTES64 PMB_BIT(2)  /* 64-bit DS area layout */
#define CPUID_1_ECX_PDCM PMB_BIT(15)   /* IA32_PERF_CAPABILITIES exists */
#define CPUID_1_EDX_DS PMB_BIT(21)     /* debug store (BTS/PEBS) */

/* IA32_MISC_ENABLE ([NHM] 4.3): bit 7 = perfmon available, bit 12 = PEBS *un*available. */
#define MSR_IA32_MISC_ENABLE 0x1a0U
#define IA32_MISC_ENABLE_PERF_MON_AVAILABLE PMB_BIT(7)
#define IA32_MISC_ENABLE_BTS_UNAVAILABLE PMB_BIT(11)
#define IA32_MISC_ENABLE_PEBS_UNAVAILABLE PMB_BIT(12)

/* ---------------------------------------------------------------------------------------------
 * General-purpose counters: IA32_PMCx / IA32_PERFEVTSELx ([NHM] 3.2.1 Table 10)
 *
 *   Bit Position  Use                                          Since
 *   7:0           EVTSEL  event select                          v1
 *   15:8          EVTMSK  unit mask                             v1
 *   16            USR     count at CPL 1-3                      v1
 *   17            OS      count at CPL 0                        v1
 *   18            E       edge detect                           v1
 *   19            PC      pin control (reserved from Nehalem)   v1
 *   20            INT     APIC interrupt on overflow            v1
 *   21            AnyThr  count for all threads of the core     v3 (deprecated v5)
 *   22            EN      local enable                          v1
 *   23            INV     invert CMASK comparison               v1
 *   31:24         CMASK   counter mask / threshold              v1 ([NHM]: 31:29 reserved)
 * ------------------------------------------------------------------------------------------- */
#define MSR_IA32_PMC0 0xc1U      /* ... IA32_PMC7 0xC8 */
#define MSR_IA32_PERFEVTSEL0 0x186U /* ... IA32_PERFEVTSEL7 0x18D */
/* IA32_A_PMCx (0x4C1+x): the same counters; a write sets all `width` bits instead of sign-extending
 * bit 31 ([NHM] 3.3.1). Present only when IA32_PERF_CAPABILITIES[13] (FW_WRITE) is set. */
#define MSR_IA32_A_PMC0 0x4c1U
#define MSR_IA32_PMC(n) (MSR_IA32_PMC0 + (n))
#define MSR_IA32_PERFEVTSEL(n) (MSR_IA32_PERFEVTSEL0 + (n))
#define MSR_IA32_A_PMC(n) (MSR_IA32_A_PMC0 + (n))

#define IA32_PERFEVTSEL_EVENT_MASK PMB_FIELD(7, 0)
#define IA32_PERFEVTSEL_EVENT_SHIFT 0
#define IA32_PERFEVTSEL_UMASK_MASK PMB_FIELD(15, 8)
#define IA32_PERFEVTSEL_UMASK_SHIFT 8
#define IA32_PERFEVTSEL_USR PMB_BIT(16)
#define IA32_PERFEVTSEL_OS PMB_BIT(17)
#define IA32_PERFEVTSEL_E PMB_BIT(18)
#define IA32_PERFEVTSEL_PC PMB_BIT(19)
#define IA32_PERFEVTSEL_INT PMB_BIT(20)
#define IA32_PERFEVTSEL_ANY PMB_BIT(21)
#define IA32_PERFEVTSEL_EN PMB_BIT(22)
#define IA32_PERFEVTSEL_INV PMB_BIT(23)
#define IA32_PERFEVTSEL_CMASK_MASK PMB_FIELD(31, 24)
#define IA32_PERFEVTSEL_CMASK_SHIFT 24

/* ---------------------------------------------------------------------------------------------
 * Fixed-function counters ([NHM] 3.1.6 Tables 8/9; v2+)
 *   IA32_FIXED_CTR0 = INST_RETIRED.ANY, CTR1 = CPU_CLK_UNHALTED.THREAD, CTR2 = CPU_CLK_UNHALTED.REF
 *
 * IA32_FIXED_CTR_CTRL, one 4-bit field per counter i at bits 4i+3:4i:
 *   Bit Position  Use                                          Since
 *   4i+1:4i       EN  00 off, 01 OS (CPL0), 10 USR (CPL>0), 11 all   v2
 *   4i+2          AnyThr                                       v3
 *   4i+3          PMI on overflow                              v2
 * ------------------------------------------------------------------------------------------- */
#define MSR_IA32_FIXED_CTR0 0x309U
#define MSR_IA32_FIXED_CTR(n) (MSR_IA32_FIXED_CTR0 + (n))
#define MSR_IA32_FIXED_CTR_CTRL 0x38dU
#define IA32_FIXED_CTR_CTRL_FIELD_BITS 4
#define IA32_FIXED_CTR_CTRL_FIELD_MASK 0xfULL /* one counter's field, before the shift */
#define IA32_FIXED_CTR_CTRL_EN_OS 0x1ULL
#define IA32_FIXED_CTR_CTRL_EN_USR 0x2ULL
#define IA32_FIXED_CTR_CTRL_ANY 0x4ULL
#define IA32_FIXED_CTR_CTRL_PMI 0x8ULL
#define IA32_FIXED_CTR_CTRL_SHIFT(i) (4U * (unsigned)(i))
#define IA32_FIXED_CTR_CTRL_MASK(i) (IA32_FIXED_CTR_CTRL_FIELD_MASK << IA32_FIXED_CTR_CTRL_SHIFT(i))

/* RDPMC (SDM Vol. 2B "RDPMC"): ECX[30] set selects the fixed-function counter ECX[29:0]. */
#define RDPMC_ECX_FIXED (1U << 30)

/* ---------------------------------------------------------------------------------------------
 * Global control and status ([NHM] 3.1.3-3.1.5, Tables 5-7; v2+)
 *
 * IA32_PERF_GLOBAL_CTRL (0x38F)
 *   Bit Position  Use                                          Since
 *   n-1:0         EN_PMCi                                      v2
 *   32+i          EN_FIXED_CTRi                                v2
 *
 * IA32_PERF_GLOBAL_STATUS (0x38E, RO)
 *   n-1:0         OVF_PMCi                                     v2
 *   32+i          OVF_FIXED_CTRi                               v2
 *   55            Trace_ToPA_PMI                               v4
 *   58            LBR_Frz                                      v4
 *   59            CTR_Frz                                      v4
 *   60            ASCI                                         v4 (SGX)
 *   61            Ovf_Uncore (UNC_Ovf)                          v3
 *   62            OvfBuf (PEBS/DS buffer threshold, PEBS_Ovf)   v1
 *   63            CondChgd                                     v1
 *
 * IA32_PERF_GLOBAL_OVF_CTRL (0x390, W1C; v4 renames it IA32_PERF_GLOBAL_STATUS_RESET): same bits.
 * ------------------------------------------------------------------------------------------- */
#define MSR_IA32_PERF_GLOBAL_STATUS 0x38eU
#define MSR_IA32_PERF_GLOBAL_CTRL 0x38fU
#define MSR_IA32_PERF_GLOBAL_OVF_CTRL 0x390U
#define MSR_IA32_PERF_GLOBAL_STATUS_RESET 0x390U /* v4 name of the same MSR */
/* v4+ only.  On Nehalem/Westmere 0x391/0x392 are the uncore MSRs below - model-gate them. */
#define MSR_IA32_PERF_GLOBAL_STATUS_SET 0x391U
#define MSR_IA32_PERF_GLOBAL_INUSE 0x392U

#define IA32_PERF_GLOBAL_EN_PMC(i) PMB_BIT(i)
#define IA32_PERF_GLOBAL_EN_FIXED(i) PMB_BIT(32 + (i))
#define IA32_PERF_GLOBAL_STATUS_OVF_PMC(i) PMB_BIT(i)
#define IA32_PERF_GLOBAL_STATUS_OVF_FIXED(i) PMB_BIT(32 + (i))
#define IA32_PERF_GLOBAL_STATUS_TRACE_TOPA_PMI PMB_BIT(55)
#define IA32_PERF_GLOBAL_STATUS_LBR_FRZ PMB_BIT(58)
#define IA32_PERF_GLOBAL_STATUS_CTR_FRZ PMB_BIT(59)
#define IA32_PERF_GLOBAL_STATUS_ASCI PMB_BIT(60)
#define IA32_PERF_GLOBAL_STATUS_UNC_OVF PMB_BIT(61)
#define IA32_PERF_GLOBAL_STATUS_OVF_BUF PMB_BIT(62)
#define IA32_PERF_GLOBAL_STATUS_COND_CHGD PMB_BIT(63)

/* ---------------------------------------------------------------------------------------------
 * IA32_PERF_CAPABILITIES (0x345, RO; present when CPUID.1:ECX.PDCM) ([NHM] 3.1.1 Table 3)
 *   Bit Position  Use                                          Since
 *   5:0           LBR_FMT  LBR record format                   PDCM
 *   6             PEBS_TRAP  1 = trap-like assist              PDCM
 *   7             PEBS_ARCH_REG  record holds GPRs             PDCM
 *   11:8          PEBS_REC_FMT                                 PDCM (1 = Nehalem)
 *   12            SMM_FRZ  freeze while in SMM supported       PDCM
 *   13            FW_WRITE  IA32_A_PMCx full-width writes      later (Sandy Bridge)
 *   15            PERF_METRICS available                       later (Ice Lake)
 *   16            PEBS_OUTPUT_PT_AVAIL                         later
 * ------------------------------------------------------------------------------------------- */
#define MSR_IA32_PERF_CAPABILITIES 0x345U
#define IA32_PERF_CAP_LBR_FMT_MASK PMB_FIELD(5, 0)
#define IA32_PERF_CAP_LBR_FMT_SHIFT 0
#define IA32_PERF_CAP_PEBS_TRAP PMB_BIT(6)
#define IA32_PERF_CAP_PEBS_ARCH_REG PMB_BIT(7)
#define IA32_PERF_CAP_PEBS_REC_FMT_MASK PMB_FIELD(11, 8)
#define IA32_PERF_CAP_PEBS_REC_FMT_SHIFT 8
#define IA32_PERF_CAP_SMM_FRZ PMB_BIT(12)
#define IA32_PERF_CAP_FREEZE_WHILE_SMM IA32_PERF_CAP_SMM_FRZ /* SDM name: IA32_DEBUGCTL[14] is usable */
#define IA32_PERF_CAP_FW_WRITE PMB_BIT(13)
#define IA32_PERF_CAP_PERF_METRICS PMB_BIT(15)
#define IA32_PERF_CAP_PEBS_OUTPUT_PT PMB_BIT(16)

/* ---------------------------------------------------------------------------------------------
 * IA32_DEBUGCTL (0x1D9) ([NHM] 3.1.2 Table 4)
 *   Bit Position  Use
 *   0             LBR  record branches in the LBR stack
 *   1             BTF  single-step on branches
 *   6             TR   send branch trace messages
 *   7             BTS  store BTMs in the BTS buffer
 *   8             BTINT  interrupt when BTS buffer full (else circular)
 *   9             BTS_OFF_OS
 *   10            BTS_OFF_USR
 *   11            FRZ_LBRS_ON_PMI
 *   12            FRZ_PERFMON_ON_PMI
 *   13            UNCORE_PMI_EN  (Nehalem; "ENABLE_UNCORE_PMI")
 *   14            SMM_FRZ  (FREEZE_WHILE_SMM)
 *   15            RTM_DEBUG  (later)
 * ------------------------------------------------------------------------------------------- */
#define MSR_IA32_DEBUGCTL 0x1d9U
#define IA32_DEBUGCTL_LBR PMB_BIT(0)
#define IA32_DEBUGCTL_BTF PMB_BIT(1)
#define IA32_DEBUGCTL_TR PMB_BIT(6)
#define IA32_DEBUGCTL_BTS PMB_BIT(7)
#define IA32_DEBUGCTL_BTINT PMB_BIT(8)
#define IA32_DEBUGCTL_BTS_OFF_OS PMB_BIT(9)
#define IA32_DEBUGCTL_BTS_OFF_USR PMB_BIT(10)
#define IA32_DEBUGCTL_FRZ_LBRS_ON_PMI PMB_BIT(11)
#define IA32_DEBUGCTL_FRZ_PERFMON_ON_PMI PMB_BIT(12)
#define IA32_DEBUGCTL_UNCORE_PMI_EN PMB_BIT(13)
#define IA32_DEBUGCTL_SMM_FRZ PMB_BIT(14)
#define IA32_DEBUGCTL_FREEZE_WHILE_SMM IA32_DEBUGCTL_SMM_FRZ /* SDM name; only if IA32_PERF_CAPABILITIES[12] */
#define IA32_DEBUGCTL_RTM_DEBUG PMB_BIT(15)

/* ---------------------------------------------------------------------------------------------
 * Debug store / PEBS ([NHM] 3.5, Table 14; load latency 3.7 Table 17)
 *
 * IA32_PEBS_ENABLE (0x3F1) on Nehalem/Westmere:
 *   Bit Position  Use
 *   3:0           PEBS_EN_PMCi  capture PEBS record on PMCi overflow
 *   35:32         LL_EN_PMCi    load-latency capture on PMCi (needs PEBS_EN too)
 * (NetBurst uses this MSR with a different, replay-tagging layout; Ice Lake+ reuses 35:32 for
 *  fixed counters - do not apply this layout there.)
 *
 * MSR_PEBS_LD_LAT_THRESHOLD (0x3F6):
 *   15:0          LD_LAT_THRESH  load latency threshold, core clocks, minimum 3
 * ------------------------------------------------------------------------------------------- */
#define MSR_IA32_DS_AREA 0x600U
#define MSR_IA32_PEBS_ENABLE 0x3f1U
#define IA32_PEBS_ENABLE_PMC(i) PMB_BIT(i)
#define IA32_PEBS_ENABLE_LL_PMC(i) PMB_BIT(32 + (i))
#define IA32_PEBS_ENABLE_PMC_MASK PMB_FIELD(3, 0)
#define IA32_PEBS_ENABLE_LL_MASK PMB_FIELD(35, 32)
#define IA32_PEBS_ENABLE_LL_SHIFT 32
#define MSR_PEBS_LD_LAT_THRESHOLD 0x3f6U
#define PEBS_LD_LAT_THRESHOLD_MASK PMB_FIELD(15, 0)
#define PEBS_LD_LAT_THRESHOLD_MIN 3U
/* Smallest PEBS sample-after value programmed: Linux nhm_limit_period (arch/x86/events/intel/core.c)
 * raises every Nehalem period below 32, which was found to lock the machine up. */
#define PEBS_MIN_PERIOD 32U

/* ---------------------------------------------------------------------------------------------
 * Off-core response ([NHM] 3.4 Tables 11/12). Event B7H/umask 01H uses MSR_OFFCORE_RSP_0;
 * event BBH/umask 01H uses MSR_OFFCORE_RSP_1 (Westmere only; Nehalem has RSP_0 only).
 *
 * MSR_OFFCORE_RSP_x:
 *   Bit Position  Use (request type, bits 7:0)
 *   0             DMND_DATA_RD
 *   1             DMND_RFO
 *   2             DMND_IFETCH
 *   3             WB
 *   4             PF_DATA_RD
 *   5             PF_RFO
 *   6             PF_IFETCH
 *   7             OTHER
 *                 Use (response type, bits 15:8)
 *   8             UNCORE_HIT
 *   9             OTHER_CORE_HIT_SNP
 *   10            OTHER_CORE_HITM
 *   11            REMOTE_CACHE_HITM  (not supported until WSM-T0)
 *   12            REMOTE_CACHE_FWD
 *   13            REMOTE_DRAM
 *   14            LOCAL_DRAM
 *   15            IO_CSR_MMIO
 * At least one request bit and one response bit must be set or the event counts zero.
 * ------------------------------------------------------------------------------------------- */
#define MSR_OFFCORE_RSP_0 0x1a6U
#define MSR_OFFCORE_RSP_1 0x1a7U
#define NHM_OFFCORE_EVENT_RSP_0 0xb7U
#define NHM_OFFCORE_EVENT_RSP_1 0xbbU
#define OFFCORE_RSP_REQUEST_MASK PMB_FIELD(7, 0)
#define OFFCORE_RSP_REQUEST_SHIFT 0
#define OFFCORE_RSP_RESPONSE_MASK PMB_FIELD(15, 8)
#define OFFCORE_RSP_RESPONSE_SHIFT 8
#define OFFCORE_RSP_DMND_DATA_RD PMB_BIT(0)
#define OFFCORE_RSP_DMND_RFO PMB_BIT(1)
#define OFFCORE_RSP_DMND_IFETCH PMB_BIT(2)
#define OFFCORE_RSP_WB PMB_BIT(3)
#define OFFCORE_RSP_PF_DATA_RD PMB_BIT(4)
#define OFFCORE_RSP_PF_RFO PMB_BIT(5)
#define OFFCORE_RSP_PF_IFETCH PMB_BIT(6)
#define OFFCORE_RSP_OTHER PMB_BIT(7)
#define OFFCORE_RSP_UNCORE_HIT PMB_BIT(8)
#define OFFCORE_RSP_OTHER_CORE_HIT_SNP PMB_BIT(9)
#define OFFCORE_RSP_OTHER_CORE_HITM PMB_BIT(10)
#define OFFCORE_RSP_REMOTE_CACHE_HITM PMB_BIT(11)
#define OFFCORE_RSP_REMOTE_CACHE_FWD PMB_BIT(12)
#define OFFCORE_RSP_REMOTE_DRAM PMB_BIT(13)
#define OFFCORE_RSP_LOCAL_DRAM PMB_BIT(14)
#define OFFCORE_RSP_IO_CSR_MMIO PMB_BIT(15)

/* ---------------------------------------------------------------------------------------------
 * Last branch records ([NHM] 3.8, Tables 19-22). Nehalem/Westmere: 16 FROM/TO pairs.
 *
 * MSR_LBR_SELECT (0x1C8) - a SET bit suppresses capture:
 *   0 CPL_EQ_0   1 CPL_NEQ_0   2 JCC   3 NEAR_REL_CALL   4 NEAR_IND_CALL
 *   5 NEAR_RET   6 NEAR_IND_JMP   7 NEAR_REL_JMP   8 FAR_BRANCH
 * MSR_LASTBRANCH_TOS (0x1C9): 3:0 index of the most recent record.
 * MSR_LASTBRANCH_x_FROM_IP: 47:0 address, 62:48 sign extension, 63 MISPRED (format 3).
 * MSR_LASTBRANCH_x_TO_IP:   47:0 address, 63:48 sign extension.
 * ------------------------------------------------------------------------------------------- */
#define MSR_LBR_SELECT 0x1c8U
#define LBR_SELECT_CPL_EQ_0 PMB_BIT(0)
#define LBR_SELECT_CPL_NEQ_0 PMB_BIT(1)
#define LBR_SELECT_JCC PMB_BIT(2)
#define LBR_SELECT_NEAR_REL_CALL PMB_BIT(3)
#define LBR_SELECT_NEAR_IND_CALL PMB_BIT(4)
#define LBR_SELECT_NEAR_RET PMB_BIT(5)
#define LBR_SELECT_NEAR_IND_JMP PMB_BIT(6)
#define LBR_SELECT_NEAR_REL_JMP PMB_BIT(7)
#define LBR_SELECT_FAR_BRANCH PMB_BIT(8)
#define LBR_SELECT_MASK PMB_FIELD(8, 0)
#define MSR_LASTBRANCH_TOS 0x1c9U
#define MSR_LASTBRANCH_0_FROM_IP 0x680U /* ... 0x68F on Nehalem */
#define MSR_LASTBRANCH_0_TO_IP 0x6c0U   /* ... 0x6CF on Nehalem */
#define MSR_LASTBRANCH_FROM_IP(n) (MSR_LASTBRANCH_0_FROM_IP + (n))
#define MSR_LASTBRANCH_TO_IP(n) (MSR_LASTBRANCH_0_TO_IP + (n))
#define LBR_FROM_MISPRED PMB_BIT(63)
#define LBR_FROM_IN_TSX PMB_BIT(62)   /* format 4 */
#define LBR_FROM_TSX_ABORT PMB_BIT(61) /* format 4 */
/* Core 2 / Atom keep 4/8 records at different addresses (same names in the SDM, other models). */
#define MSR_CORE2_LASTBRANCH_0_FROM_IP 0x40U
#define MSR_CORE2_LASTBRANCH_0_TO_IP 0x60U
/* NetBurst (SDM 17.x "LBR stack for Pentium 4"): TOS lives at 0x1DA. */
#define MSR_P4_LASTBRANCH_TOS 0x1daU
#define MSR_P4_LASTBRANCH_0 0x1dbU /* models 0-2: 4 single-MSR records 0x1DB..0x1DE */

/* ---------------------------------------------------------------------------------------------
 * Nehalem/Westmere uncore, U-clock PMU ([SDM] 18.8.2 Figures 18-29..18-33). Only models 06_1A,
 * 06_1E, 06_1F, 06_25, 06_2C. Nehalem-EX (06_2E) and Westmere-EX (06_2F) have a different,
 * box-based uncore (MSRs 0xC00+) which this layer does not program.
 *
 * MSR_UNCORE_PERF_GLOBAL_CTRL (0x391)
 *   Bit Position  Use
 *   7:0           EN_PCi     enable uncore PMCi
 *   32            EN_FC0     enable uncore fixed counter
 *   51:48         EN_PMI_COREi  route uncore PMI to core i
 *   63            PMI_FRZ    freeze all uncore counters on PMI
 * MSR_UNCORE_PERF_GLOBAL_STATUS (0x392, RO): 7:0 OVF_PCi, 32 OVF_FC0, 61 OVF_PMI, 63 CHG
 * MSR_UNCORE_PERF_GLOBAL_OVF_CTRL (0x393, W1C): same bit positions (CLR_*)
 *
 * MSR_UNCORE_PERFEVTSELx (0x3C0+x)
 *   7:0 Event Select   15:8 Unit Mask   17 OCC_CTR_RST   18 E (edge)   20 PMI
 *   22 EN   23 INV   31:24 CMASK     (no USR/OS: the uncore has no privilege filter)
 * MSR_UNCORE_FIXED_CTR_CTRL (0x395): 0 EN, 2 PMI
 * ------------------------------------------------------------------------------------------- */
#define MSR_UNCORE_PERF_GLOBAL_CTRL 0x391U
#define MSR_UNCORE_PERF_GLOBAL_STATUS 0x392U
#define MSR_UNCORE_PERF_GLOBAL_OVF_CTRL 0x393U
#define MSR_UNCORE_FIXED_CTR0 0x394U
#define MSR_UNCORE_FIXED_CTR_CTRL 0x395U
#define MSR_UNCORE_ADDR_OPCODE_MATCH 0x396U
#define MSR_UNCORE_PMC0 0x3b0U       /* ... 0x3B7 */
#define MSR_UNCORE_PERFEVTSEL0 0x3c0U /* ... 0x3C7 */
#define MSR_UNCORE_PMC(n) (MSR_UNCORE_PMC0 + (n))
#define MSR_UNCORE_PERFEVTSEL(n) (MSR_UNCORE_PERFEVTSEL0 + (n))
#define UNCORE_NUM_PMC 8U
#define UNCORE_PERF_GLOBAL_CTRL_EN_PC(i) PMB_BIT(i)
#define UNCORE_PERF_GLOBAL_CTRL_EN_FC0 PMB_BIT(32)
#define UNCORE_PERF_GLOBAL_CTRL_EN_PMI_CORE(i) PMB_BIT(48 + (i))
#define UNCORE_PERF_GLOBAL_CTRL_EN_PMI_CORE_MASK PMB_FIELD(51, 48)
#define UNCORE_PERF_GLOBAL_CTRL_EN_PMI_CORE_SHIFT 48
#define UNCORE_PERF_GLOBAL_CTRL_PMI_FRZ PMB_BIT(63)
#define UNCORE_PERF_GLOBAL_STATUS_OVF_PC(i) PMB_BIT(i)
#define UNCORE_PERF_GLOBAL_STATUS_OVF_PC_ALL PMB_FIELD(7, 0)
#define UNCORE_PERF_GLOBAL_STATUS_OVF_FC0 PMB_BIT(32)
#define UNCORE_PERF_GLOBAL_STATUS_OVF_PMI PMB_BIT(61)
#define UNCORE_PERF_GLOBAL_STATUS_CHG PMB_BIT(63)
#define UNCORE_PERFEVTSEL_EVENT_MASK PMB_FIELD(7, 0)
#define UNCORE_PERFEVTSEL_UMASK_MASK PMB_FIELD(15, 8)
#define UNCORE_PERFEVTSEL_UMASK_SHIFT 8
#define UNCORE_PERFEVTSEL_OCC_CTR_RST PMB_BIT(17)
#define UNCORE_PERFEVTSEL_E PMB_BIT(18)
#define UNCORE_PERFEVTSEL_PMI PMB_BIT(20)
#define UNCORE_PERFEVTSEL_EN PMB_BIT(22)
#define UNCORE_PERFEVTSEL_INV PMB_BIT(23)
#define UNCORE_PERFEVTSEL_CMASK_MASK PMB_FIELD(31, 24)
#define UNCORE_PERFEVTSEL_CMASK_SHIFT 24
#define UNCORE_FIXED_CTR_CTRL_EN PMB_BIT(0)
#define UNCORE_FIXED_CTR_CTRL_PMI PMB_BIT(2)

/* ---------------------------------------------------------------------------------------------
 * AMD core counters ([AMD] APM Vol. 2 13.2.1; BKDG family 10h MSRC001_00[00:07])
 *
 * PERF_CTL[n] (legacy 0xC0010000+n, n<4; extended 0xC0010200+2n, n<6)
 *   Bit Position  Use                                          Since
 *   7:0           EventSelect[7:0]                             K7
 *   15:8          UnitMask                                     K7
 *   16            USR                                          K7
 *   17            OS                                           K7
 *   18            Edge                                         K7
 *   20            INT  APIC interrupt on overflow              K7
 *   22            EN                                           K7
 *   23            INV                                          K7
 *   31:24         CntMask                                      K7
 *   35:32         EventSelect[11:8]                            family 10h
 *   40            GuestOnly                                    family 10h (SVM)
 *   41            HostOnly                                     family 10h (SVM)
 * PERF_CTR[n] is 48 bits wide. Extended counters (CPUID 8000_0001h:ECX[23] PerfCtrExtCore) put
 * CTL and CTR at interleaved addresses; the legacy addresses alias the first four.
 * ------------------------------------------------------------------------------------------- */
#define MSR_K7_PERF_CTL0 0xc0010000U
#define MSR_K7_PERF_CTR0 0xc0010004U
#define MSR_K7_PERF_CTL(n) (MSR_K7_PERF_CTL0 + (n))
#define MSR_K7_PERF_CTR(n) (MSR_K7_PERF_CTR0 + (n))
#define MSR_F15H_PERF_CTL0 0xc0010200U
#define MSR_F15H_PERF_CTR0 0xc0010201U
#define MSR_F15H_PERF_CTL(n) (MSR_F15H_PERF_CTL0 + 2U * (n))
#define MSR_F15H_PERF_CTR(n) (MSR_F15H_PERF_CTR0 + 2U * (n))
/* Northbridge counters (family 15h, CPUID 8000_0001h:ECX[24] PerfCtrExtNB), same CTL layout. */
#define MSR_F15H_NB_PERF_CTL0 0xc0010240U
#define MSR_F15H_NB_PERF_CTR0 0xc0010241U
#define MSR_F15H_NB_PERF_CTL(n) (MSR_F15H_NB_PERF_CTL0 + 2U * (n))
#define MSR_F15H_NB_PERF_CTR(n) (MSR_F15H_NB_PERF_CTR0 + 2U * (n))
/* L3 counters (family 17h, CPUID 8000_0001h:ECX[28] PerfCtrExtLLC). */
#define MSR_F17H_L3_PERF_CTL0 0xc0010230U
#define MSR_F17H_L3_PERF_CTR0 0xc0010231U

#define AMD_PERF_CTL_EVENT_LO_MASK PMB_FIELD(7, 0)
#define AMD_PERF_CTL_UMASK_MASK PMB_FIELD(15, 8)
#define AMD_PERF_CTL_UMASK_SHIFT 8
#define AMD_PERF_CTL_USR PMB_BIT(16)
#define AMD_PERF_CTL_OS PMB_BIT(17)
#define AMD_PERF_CTL_EDGE PMB_BIT(18)
#define AMD_PERF_CTL_INT PMB_BIT(20)
#define AMD_PERF_CTL_EN PMB_BIT(22)
#define AMD_PERF_CTL_INV PMB_BIT(23)
#define AMD_PERF_CTL_CMASK_MASK PMB_FIELD(31, 24)
#define AMD_PERF_CTL_CMASK_SHIFT 24
#define AMD_PERF_CTL_EVENT_HI_MASK PMB_FIELD(35, 32)
#define AMD_PERF_CTL_EVENT_HI_SHIFT 32
#define AMD_PERF_CTL_GUEST_ONLY PMB_BIT(40)
#define AMD_PERF_CTL_HOST_ONLY PMB_BIT(41)

/* CPUID 8000_0001h ECX counter-extension flags and PerfMonV2 leaf 8000_0022h. */
#define CPUID_80000001_ECX_PERFCTR_CORE PMB_BIT(23)
#define CPUID_80000001_ECX_PERFCTR_NB PMB_BIT(24)
#define CPUID_80000001_ECX_PERFCTR_LLC PMB_BIT(28)
#define CPUID_LEAF_AMD_PERFMON 0x80000022U
#define CPUID_80000022_EAX_PERFMON_V2 PMB_BIT(0)
#define CPUID_80000022_EBX_NUM_CORE(ebx) ((ebx) & 0xfU)
#define CPUID_80000022_EBX_NUM_NB(ebx) (((ebx) >> 10) & 0x3fU)

/* PerfMonV2 global control (family 19h+; also reported on some 17h), [AMD] PPR "PerfCntrGlobalCtl":
 *   Bit Position  Use
 *   n-1:0         core counter i: enable (CTL), overflowed (STATUS), clear overflow (STATUS_CLR) */
#define MSR_AMD64_PERF_CNTR_GLOBAL_STATUS 0xc0000300U
#define MSR_AMD64_PERF_CNTR_GLOBAL_CTL 0xc0000301U
#define MSR_AMD64_PERF_CNTR_GLOBAL_STATUS_CLR 0xc0000302U
#define AMD64_PERF_CNTR_GLOBAL_EN(i) PMB_BIT(i)

/* ---------------------------------------------------------------------------------------------
 * NetBurst (Pentium 4 / Xeon family 0FH) [P4]: 18 counters (40-bit) in four groups, each with a
 * CCCR; events are selected in 45 ESCRs (0x3A0..0x3E1) and routed to a counter through the CCCR's
 * ESCR-select field. Which ESCR feeds which counter is in pmu/encode.c (p4_escr_table).
 *
 * ESCR (event selection control register)
 *   Bit Position  Use
 *   0             T1_USR
 *   1             T1_OS
 *   2             T0_USR
 *   3             T0_OS
 *   4             Tag Enable
 *   8:5           Tag Value
 *   24:9          Event Mask
 *   30:25         Event Select
 *
 * CCCR (counter configuration control register)
 *   Bit Position  Use
 *   12            Enable
 *   15:13         ESCR Select
 *   17:16         Active Thread (00 none, 01 single, 10 both, 11 any)   HT processors
 *   18            Compare
 *   19            Complement
 *   23:20         Threshold
 *   24            Edge
 *   25            FORCE_OVF
 *   26            OVF_PMI_T0
 *   27            OVF_PMI_T1
 *   30            Cascade
 *   31            OVF (sticky overflow flag)
 * ------------------------------------------------------------------------------------------- */
#define MSR_P4_BPU_PERFCTR0 0x300U /* counters 0x300..0x311 */
#define MSR_P4_MS_PERFCTR0 0x304U
#define MSR_P4_FLAME_PERFCTR0 0x308U
#define MSR_P4_IQ_PERFCTR0 0x30cU
#define MSR_P4_PERFCTR(n) (MSR_P4_BPU_PERFCTR0 + (n))
#define MSR_P4_BPU_CCCR0 0x360U /* CCCRs 0x360..0x371 */
#define MSR_P4_MS_CCCR0 0x364U
#define MSR_P4_FLAME_CCCR0 0x368U
#define MSR_P4_IQ_CCCR0 0x36cU
#define MSR_P4_CCCR(n) (MSR_P4_BPU_CCCR0 + (n))
#define P4_NUM_COUNTERS 18U

#define MSR_P4_BSU_ESCR0 0x3a0U
#define MSR_P4_BSU_ESCR1 0x3a1U
#define MSR_P4_FSB_ESCR0 0x3a2U
#define MSR_P4_FSB_ESCR1 0x3a3U
#define MSR_P4_FIRM_ESCR0 0x3a4U
#define MSR_P4_FIRM_ESCR1 0x3a5U
#define MSR_P4_FLAME_ESCR0 0x3a6U
#define MSR_P4_FLAME_ESCR1 0x3a7U
#define MSR_P4_DAC_ESCR0 0x3a8U
#define MSR_P4_DAC_ESCR1 0x3a9U
#define MSR_P4_MOB_ESCR0 0x3aaU
#define MSR_P4_MOB_ESCR1 0x3abU
#define MSR_P4_PMH_ESCR0 0x3acU
#define MSR_P4_PMH_ESCR1 0x3adU
#define MSR_P4_SAAT_ESCR0 0x3aeU
#define MSR_P4_SAAT_ESCR1 0x3afU
#define MSR_P4_U2L_ESCR0 0x3b0U
#define MSR_P4_U2L_ESCR1 0x3b1U
#define MSR_P4_BPU_ESCR0 0x3b2U
#define MSR_P4_BPU_ESCR1 0x3b3U
#define MSR_P4_IS_ESCR0 0x3b4U
#define MSR_P4_IS_ESCR1 0x3b5U
#define MSR_P4_ITLB_ESCR0 0x3b6U
#define MSR_P4_ITLB_ESCR1 0x3b7U
#define MSR_P4_CRU_ESCR0 0x3b8U
#define MSR_P4_CRU_ESCR1 0x3b9U
#define MSR_P4_IQ_ESCR0 0x3baU /* models 1 and 2 only */
#define MSR_P4_IQ_ESCR1 0x3bbU /* models 1 and 2 only */
#define MSR_P4_RAT_ESCR0 0x3bcU
#define MSR_P4_RAT_ESCR1 0x3bdU
#define MSR_P4_SSU_ESCR0 0x3beU
#define MSR_P4_MS_ESCR0 0x3c0U
#define MSR_P4_MS_ESCR1 0x3c1U
#define MSR_P4_TBPU_ESCR0 0x3c2U
#define MSR_P4_TBPU_ESCR1 0x3c3U
#define MSR_P4_TC_ESCR0 0x3c4U
#define MSR_P4_TC_ESCR1 0x3c5U
#define MSR_P4_IX_ESCR0 0x3c8U
#define MSR_P4_IX_ESCR1 0x3c9U
#define MSR_P4_ALF_ESCR0 0x3caU
#define MSR_P4_ALF_ESCR1 0x3cbU
#define MSR_P4_CRU_ESCR2 0x3ccU
#define MSR_P4_CRU_ESCR3 0x3cdU
#define MSR_P4_CRU_ESCR4 0x3e0U
#define MSR_P4_CRU_ESCR5 0x3e1U
#define MSR_P4_ESCR_FIRST 0x3a0U
#define MSR_P4_ESCR_LAST 0x3e1U
#define MSR_P4_PEBS_MATRIX_VERT 0x3f2U

#define P4_ESCR_T1_USR PMB_BIT(0)
#define P4_ESCR_T1_OS PMB_BIT(1)
#define P4_ESCR_T0_USR PMB_BIT(2)
#define P4_ESCR_T0_OS PMB_BIT(3)
#define P4_ESCR_TAG_ENABLE PMB_BIT(4)
#define P4_ESCR_TAG_VALUE_MASK PMB_FIELD(8, 5)
#define P4_ESCR_TAG_VALUE_SHIFT 5
#define P4_ESCR_EVENT_MASK_MASK PMB_FIELD(24, 9)
#define P4_ESCR_EVENT_MASK_SHIFT 9
#define P4_ESCR_EVENT_SELECT_MASK PMB_FIELD(30, 25)
#define P4_ESCR_EVENT_SELECT_SHIFT 25

#define P4_CCCR_ENABLE PMB_BIT(12)
#define P4_CCCR_ESCR_SELECT_MASK PMB_FIELD(15, 13)
#define P4_CCCR_ESCR_SELECT_SHIFT 13
#define P4_CCCR_ACTIVE_THREAD_MASK PMB_FIELD(17, 16)
#define P4_CCCR_ACTIVE_THREAD_SHIFT 16
#define P4_CCCR_ACTIVE_THREAD_NONE 0U
#define P4_CCCR_ACTIVE_THREAD_SINGLE 1U
#define P4_CCCR_ACTIVE_THREAD_BOTH 2U
#define P4_CCCR_ACTIVE_THREAD_ANY 3U
#define P4_CCCR_COMPARE PMB_BIT(18)
#define P4_CCCR_COMPLEMENT PMB_BIT(19)
#define P4_CCCR_THRESHOLD_MASK PMB_FIELD(23, 20)
#define P4_CCCR_THRESHOLD_SHIFT 20
#define P4_CCCR_EDGE PMB_BIT(24)
#define P4_CCCR_FORCE_OVF PMB_BIT(25)
#define P4_CCCR_OVF_PMI_T0 PMB_BIT(26)
#define P4_CCCR_OVF_PMI_T1 PMB_BIT(27)
#define P4_CCCR_CASCADE PMB_BIT(30)
#define P4_CCCR_OVF PMB_BIT(31)

#endif
