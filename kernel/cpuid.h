/* cpuid.h - CPUID decoding into struct cpu_info (pure logic; the instruction itself is behind cpuid_fn). */
#ifndef PMB_CPUID_H
#define PMB_CPUID_H

#include "kernel/klib.h"

/* Executes CPUID(leaf, subleaf) and stores eax, ebx, ecx, edx in r[0..3]. The kernel passes the real
 * instruction; host tests pass a table captured from a real or emulated CPU. */
typedef void (*cpuid_fn)(uint32_t leaf, uint32_t subleaf, uint32_t r[4], void *ctx);

enum cpu_vendor {
    CPU_VENDOR_UNKNOWN = 0, /* no CPUID function, or leaf 0 returned an empty vendor string */
    CPU_VENDOR_INTEL,       /* "GenuineIntel" */
    CPU_VENDOR_AMD,         /* "AuthenticAMD" */
    CPU_VENDOR_HYGON,       /* "HygonGenuine" (AMD Zen licensee; decoded like AMD) */
    CPU_VENDOR_OTHER,       /* any other vendor string; decoded with the Intel rules */
};

/* Cache type, numbered as CPUID.04H:EAX[4:0] and CPUID.8000001DH:EAX[4:0] number it. */
enum cpu_cache_type {
    CPU_CACHE_NULL = 0,
    CPU_CACHE_DATA = 1,
    CPU_CACHE_INSTRUCTION = 2,
    CPU_CACHE_UNIFIED = 3,
};

#define CPU_MAX_CACHES 8

struct cpu_cache {
    uint8_t level;        /* 1, 2, 3 ... */
    uint8_t type;         /* enum cpu_cache_type */
    bool inclusive;       /* includes the lower levels (04H/8000001DH EDX[1]); false when unknown */
    bool fully_assoc;     /* then ways == bytes / line and sets == 1 */
    uint32_t ways;
    uint32_t line;        /* bytes per line */
    uint32_t sets;
    uint32_t shared_by;   /* max logical CPUs sharing it (04H/8000001DH EAX[25:14]+1); estimated for the
                             legacy sources, see docs/cpuid.md */
    uint64_t bytes;
};

/* Feature flags: what the CPU enumerates, not what is enabled (AVX also needs XCR0, see osxsave). */
struct cpu_features {
    /* leaf 1 EDX */
    bool fpu, tsc, msr, pae, cx8, apic, mtrr, pge, cmov, pat, pse36, clflush, ds, mmx, fxsr, sse, sse2, htt;
    /* leaf 1 ECX */
    bool sse3, dtes64, monitor, vmx, ssse3, fma, cx16, pdcm, pcid, sse4_1, sse4_2, x2apic, movbe, popcnt,
        tsc_deadline, aes, xsave, osxsave, avx, f16c, rdrand, hypervisor;
    /* leaf 6 */
    bool turbo, arat, aperfmperf; /* EAX[1], EAX[2], ECX[0] */
    /* leaf 7 subleaf 0 */
    bool fsgsbase, bmi1, avx2, smep, bmi2, erms, invpcid, rtm, avx512f, avx512dq, rdseed, adx, smap,
        clflushopt, clwb, intel_pt, avx512cd, sha, avx512bw, avx512vl, rdpid, fsrm, hybrid, arch_lbr;
    /* 8000_0001 */
    bool lahf_lm, cmp_legacy, svm, lzcnt, sse4a, topoext, perfctr_core, perfctr_nb, nx, pdpe1gb, rdtscp, lm;
    /* 8000_0007 EDX[8] */
    bool invariant_tsc;
};

/* Where threads and cores sit in an APIC id: [pkg | core | smt]. core covers every level between
 * SMT and package (module, tile, die) so that the split is exact on any part. */
struct cpu_topology {
    uint32_t initial_apic_id;  /* leaf 1 EBX[31:24] */
    uint32_t x2apic_id;        /* 0BH/1FH EDX, AMD 8000001EH EAX; else initial_apic_id */
    uint32_t smt_bits;         /* APIC-id bits for the thread within a core */
    uint32_t core_bits;        /* APIC-id bits above smt_bits for the core within the package */
    uint32_t threads_per_core; /* as seen by this CPU, see docs/cpuid.md for hybrid parts */
    uint32_t cores_per_package;
    uint32_t logical_per_package;
    uint32_t amd_node_id;           /* 8000001EH ECX[7:0] (TOPOEXT only) */
    uint32_t amd_nodes_per_package; /* 8000001EH ECX[10:8]+1 (TOPOEXT only), else 0 */
    const char *source; /* "cpuid.1fh", "cpuid.0bh", "cpuid.8000001eh", "cpuid.80000008h", "cpuid.01h", "none" */
};

/* Performance-monitoring summary. Intel: leaf 0AH (SDM Vol.3B 20.2 "Architectural Performance
 * Monitoring"). AMD: APM Vol.2 13.2, CPUID 8000_0001 ECX[23,24] and 8000_0022 (PerfMonV2). */
struct cpu_perfmon {
    uint32_t version;         /* 0AH EAX[7:0]; 0 on AMD and on QEMU TCG */
    uint32_t gp_counters;     /* 0AH EAX[15:8]; AMD: 8000_0022 EBX[3:0], else 6 with PerfCtrExtCore, else 4 */
    uint32_t gp_width;        /* 0AH EAX[23:16]; AMD: 48 */
    uint32_t ebx_length;      /* 0AH EAX[31:24]: valid bits in events_unavailable */
    uint32_t events_unavailable; /* 0AH EBX, masked to ebx_length bits: 1 = architectural event absent */
    uint32_t fixed_counters;  /* 0AH EDX[4:0] (version >= 2) */
    uint32_t fixed_width;     /* 0AH EDX[12:5] (version >= 2) */
    uint32_t fixed_mask;      /* 0AH ECX (version >= 5): bitmap of fixed counters */
    bool amd_perfctr_core;    /* 8000_0001 ECX[23]: six core counters at MSR C001_0200 */
    bool amd_perfctr_nb;      /* 8000_0001 ECX[24]: northbridge / data-fabric counters */
    bool amd_perfmon_v2;      /* 8000_0022 EAX[0]: global control/status MSRs */
    uint32_t amd_core_counters; /* 8000_0022 EBX[3:0] */
    uint32_t amd_nb_counters;   /* 8000_0022 EBX[15:10] */
};

struct cpu_info {
    enum cpu_vendor vendor;
    char vendor_str[13];
    uint32_t max_basic;  /* leaf 0 EAX */
    uint32_t max_ext;    /* 8000_0000 EAX, 0 when the extended range is absent */
    uint32_t signature;  /* leaf 1 EAX as returned */
    uint32_t family;     /* display family (SDM Vol.2A CPUID, "Processor Version Information") */
    uint32_t model;      /* display model */
    uint32_t stepping;
    char brand[49];      /* 8000_0002..4, leading and trailing blanks removed; "" when absent */
    const char *uarch;   /* cpu_uarch_name(), never NULL */
    uint8_t core_type;   /* leaf 1AH EAX[31:24] on hybrid parts: 0x20 Atom, 0x40 Core; else 0 */
    uint32_t clflush_line;  /* leaf 1 EBX[15:8]*8 bytes, when clflush */
    uint32_t phys_addr_bits, virt_addr_bits; /* 8000_0008 EAX[7:0], [15:8]; else 36/32 or 32/32 */

    struct cpu_features feat;

    uint64_t xcr0_supported; /* 0DH.0 EDX:EAX: state components XCR0 may enable */
    uint32_t xsave_size;     /* 0DH.0 EBX: XSAVE area for the components enabled in XCR0 now */
    uint32_t xsave_size_max; /* 0DH.0 ECX: XSAVE area if every supported component were enabled */

    char hv_vendor[13];   /* 4000_0000 EBX:ECX:EDX when leaf 1 ECX[31] is set, else "" */
    uint32_t hv_max_leaf; /* 4000_0000 EAX, 0 when no hypervisor leaves */
    bool is_qemu_tcg;     /* hv_vendor == "TCGTCGTCGTCG": no PMU, emulated timing */

    struct cpu_cache caches[CPU_MAX_CACHES];
    uint32_t n_caches;
    const char *cache_source; /* "cpuid.04h", "cpuid.02h", "cpuid.8000001dh", "cpuid.80000005h", "none" */

    struct cpu_topology topo;

    uint64_t tsc_hz;            /* nominal TSC rate, 0 = unknown (calibrate) */
    const char *tsc_hz_source;  /* "cpuid.15h", "cpuid.16h", "none" */
    uint64_t crystal_hz;        /* 15H ECX, or the SDM per-model value when ECX is 0; 0 = unknown */
    bool crystal_from_table;    /* crystal_hz came from the per-model table, not from 15H ECX */
    uint32_t base_mhz, max_mhz, bus_mhz; /* 16H EAX/EBX/ECX [15:0]; 0 = not enumerated */

    struct cpu_perfmon perf;
};

/* Fills *ci from CPUID. Every leaf is range-checked against max_basic / max_ext / hv_max_leaf before
 * use (Intel returns the highest basic leaf's data for out-of-range leaves). fn may be NULL: *ci is
 * then zeroed with vendor UNKNOWN. */
void cpuid_decode(struct cpu_info *ci, cpuid_fn fn, void *ctx);

/* Microarchitecture name for a display family/model, "unknown" when not in the table. */
const char *cpu_uarch_name(enum cpu_vendor v, uint32_t family, uint32_t model);

/* Splits an (x2)APIC id into package, core-within-package and thread-within-core ids using
 * ci->topo.smt_bits / core_bits. Any output pointer may be NULL. */
void cpu_topology_split(const struct cpu_info *ci, uint32_t apic_id, uint32_t *pkg, uint32_t *core,
                        uint32_t *smt);

/* Name of a cache type for reports: "data", "instruction", "unified", "null". */
const char *cpu_cache_type_name(uint8_t type);

#endif
