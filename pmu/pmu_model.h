/* pmu_model.h - PMU models as data: detect from raw CPUID/MSR inputs into struct pmu_caps. */
#ifndef PMB_PMU_MODEL_H
#define PMB_PMU_MODEL_H

#include "kernel/klib.h"
#include "kernel/cpuid.h"

enum pmu_vendor { PMU_VENDOR_UNKNOWN = 0, PMU_VENDOR_INTEL, PMU_VENDOR_AMD };

/* Register layout of the general-purpose counters (selects the ops table). */
enum pmu_arch {
    PMU_ARCH_NONE = 0,
    PMU_ARCH_INTEL,      /* IA32_PERFEVTSELx / IA32_PMCx (+ fixed, global ctrl from v2) */
    PMU_ARCH_NETBURST,   /* CCCR / ESCR / 18 counters */
    PMU_ARCH_AMD_LEGACY, /* PERF_CTL 0xC0010000-3, PERF_CTR 0xC0010004-7 */
    PMU_ARCH_AMD_EXT,    /* PERF_CTL/CTR interleaved from 0xC0010200 */
};

enum pmu_uncore_kind {
    PMU_UNCORE_NONE = 0,
    PMU_UNCORE_NHM,    /* Nehalem/Westmere U-clock PMU at 0x391.. (06_1A/1E/1F/25/2C) */
    PMU_UNCORE_NHM_EX, /* Nehalem-EX/Westmere-EX box uncore (0xC00..): not programmed here */
    PMU_UNCORE_AMD_NB, /* family 15h northbridge counters 0xC0010240.. */
};

enum pmu_status {
    PMU_STATUS_OK = 0,
    PMU_STATUS_PARTIAL,     /* usable, but something was assumed or clamped: see reason */
    PMU_STATUS_UNSUPPORTED, /* no usable counters */
};

/* Everything detection looks at, as raw values, so tests can feed captured or hostile inputs. */
struct pmu_detect_input {
    enum pmu_vendor vendor;
    uint32_t family, model, stepping; /* display family/model (SDM CPUID.1 rules applied) */
    uint32_t max_basic_leaf;          /* CPUID.0:EAX */
    uint32_t max_ext_leaf;            /* CPUID.80000000h:EAX */
    uint32_t leaf1_ecx, leaf1_edx;
    uint32_t leaf0a[4];               /* CPUID.0AH EAX,EBX,ECX,EDX; ignored if max_basic_leaf < 0AH */
    bool perf_cap_valid;              /* IA32_PERF_CAPABILITIES was read (needs PDCM) */
    uint64_t perf_capabilities;
    bool misc_enable_valid;
    uint64_t misc_enable;             /* IA32_MISC_ENABLE */
    uint32_t amd_ext_ecx;             /* CPUID.80000001h:ECX */
    uint32_t amd_perfmon[4];          /* CPUID.80000022h EAX..EDX; ignored if max_ext_leaf < it */
};

struct pmu_model;

/* Errata workarounds the PMU layer applies (struct pmu_caps.errata; table in pmu_model.c, docs/pmu.md
 * "Errata"). */
#define PMU_ERRATUM_NHM_RESET (1u << 0) /* AAK100/AAP53/BD53: reset the PMU before every group program */

struct pmu_caps {
    const char *model;  /* row name: "nhm", "wsm", "arch_v4", "amd_fam10h", "netburst", ... */
    const char *desc;
    enum pmu_vendor vendor;
    enum pmu_arch arch;
    uint8_t version;    /* Intel CPUID.0AH version; AMD: 2 with PerfMonV2, else 0 */
    uint8_t gp_counters, gp_width;
    uint8_t fixed_counters, fixed_width;
    uint32_t fixed_mask;   /* bit j = fixed counter j exists (v5 ECX bitmap merged with EDX count) */
    uint32_t arch_events;  /* bit i = architectural event i available (inverted CPUID.0AH:EBX) */
    uint8_t arch_events_len; /* CPUID.0AH:EAX[31:24], the EBX vector's length (model row: its own) */
    uint8_t cpu_family, cpu_model; /* display family/model detection ran on (the row's sample when assumed) */
    bool global_ctrl;      /* IA32_PERF_GLOBAL_CTRL (v2+) or AMD PerfMonV2 global control */
    bool any_thread;       /* AnyThr usable (v3+, not deprecated) */
    bool full_width_write; /* IA32_PERF_CAPABILITIES[13]: counters written through IA32_A_PMCx */
    bool perf_cap_known;   /* IA32_PERF_CAPABILITIES was read (PDCM): the bits below come from it */
    bool smm_freeze;       /* IA32_PERF_CAPABILITIES[12]: IA32_DEBUGCTL.FREEZE_WHILE_SMM exists */
    bool ds, dtes64, pdcm;
    bool pebs;
    uint8_t pebs_format;
    uint16_t pebs_record_size; /* bytes; 0 when PEBS is unusable */
    bool pebs_trap;            /* IA32_PERF_CAPABILITIES[6] per SDM: 1 = trap-like (IP after) */
    bool pebs_arch_regs;
    uint8_t lbr_format;
    uint8_t lbr_depth;         /* 0 = unknown for this model: do not use LBRs */
    uint32_t lbr_from, lbr_to, lbr_tos;
    bool lbr_select;
    uint8_t offcore_msrs;      /* 0, 1 (0x1A6) or 2 (0x1A6 + 0x1A7) */
    bool load_latency;         /* MSR_PEBS_LD_LAT_THRESHOLD + LL_EN bits */
    enum pmu_uncore_kind uncore;
    uint8_t uncore_counters, uncore_width, uncore_fixed;
    uint8_t nb_counters;       /* AMD family 15h northbridge */
    bool perfmon_v2;           /* AMD PerfMonV2 */
    const char *event_table;   /* generated table name, NULL = raw events only */
    const char *uncore_table;
    enum pmu_status status;
    const char *reason;        /* why PARTIAL/UNSUPPORTED (first cause), NULL when OK */
    const char *uncore_note;   /* e.g. why the uncore is not usable */
    uint32_t errata;           /* PMU_ERRATUM_* workarounds this CPU needs */
    const char *erratum_reset; /* the erratum behind PMU_ERRATUM_NHM_RESET ("AAK100", ...) */
    const struct pmu_model *row;
};

/* Counter MSR addresses for a register layout (one small ops table per pmu_arch). */
struct pmu_ops {
    uint32_t (*gp_ctl_msr)(unsigned idx); /* PERFEVTSEL / PERF_CTL / CCCR */
    uint32_t (*gp_ctr_msr)(unsigned idx);
    uint32_t (*fixed_ctr_msr)(unsigned idx); /* NULL when the layout has none */
    uint32_t rdpmc_fixed_flag;               /* ECX bit 30 selects fixed counters (Intel) */
};

/* Fill in from raw inputs. Never reads hardware. Returns caps->status. */
enum pmu_status pmu_detect(const struct pmu_detect_input *in, struct pmu_caps *caps);
/* Gather the CPUID part of the input through fn (MSR fields stay invalid: the caller reads
 * IA32_PERF_CAPABILITIES / IA32_MISC_ENABLE when PDCM / the vendor allows, then sets *_valid). */
void pmu_detect_input_from_cpuid(cpuid_fn fn, void *ctx, struct pmu_detect_input *in);
/* Caps for an assumed model ("nhm", "wsm", "amd_fam10h", "netburst", any row name) for dry runs:
 * detection run on the row's representative CPUID/MSR values. -1 if the name is unknown. */
int pmu_caps_for_model(const char *name, struct pmu_caps *caps);
/* Row names, in detection order; NULL past the end. */
const char *pmu_model_name(unsigned idx);

const struct pmu_ops *pmu_caps_ops(const struct pmu_caps *caps);
/* MSR addresses for counter idx of caps, or 0 when it does not exist. */
uint32_t pmu_gp_ctl_msr(const struct pmu_caps *caps, unsigned idx);
uint32_t pmu_gp_ctr_msr(const struct pmu_caps *caps, unsigned idx);
uint32_t pmu_fixed_ctr_msr(const struct pmu_caps *caps, unsigned idx);
/* PEBS record size for a PERF_CAPABILITIES format (0x90/0xB0/0xC0/0xC8), 0 if not fixed-size. */
uint16_t pmu_pebs_record_size(unsigned format);

/* The MSR through which general counter idx is written and read: IA32_A_PMCx (0x4C1+idx) when
 * IA32_PERF_CAPABILITIES[13] allows full-width writes, else IA32_PMCx (writes sign-extend bit 31,
 * [NHM] 3.3.1); 0 when the counter does not exist. Intel layout only (else pmu_gp_ctr_msr). */
uint32_t pmu_gp_ctr_rw_msr(const struct pmu_caps *caps, unsigned idx);

/* Errata workarounds (PMU_ERRATUM_*) for an Intel display family/model and the erratum's name in *id.
 * PMU_ERRATUM_NHM_RESET where Linux applies intel_pmu_nhm_workaround: 06_1A (AAK100), 06_1E (AAP53),
 * 06_2C (BD53), and 06_2E, 06_25, 06_2F (no erratum number: Linux's Nehalem-EX / Westmere cases); not
 * 06_1F, which Linux's PMU driver does not treat as Nehalem. 0 (and *id NULL) otherwise. */
uint32_t pmu_errata_for(enum pmu_vendor v, unsigned family, unsigned model, const char **id);

/* Whether IA32_DEBUGCTL.FREEZE_WHILE_SMM (bit 14) exists: IA32_PERF_CAPABILITIES[12] ([NHM] Table 3
 * SMM_FRZ). false with *why = "not supported (PERF_CAPABILITIES[12] clear)", "not supported
 * (IA32_PERF_CAPABILITIES not read)" or "not supported (no IA32_PERF_CAPABILITIES on <vendor/arch>)". */
bool pmu_smm_freeze_supported(const struct pmu_caps *caps, const char **why);

/* Whether architectural event `bit` (pmu_arch_event_index) may be counted on a general counter:
 * CPUID.0AH:EBX[bit] set, or bit at/after the vector length EAX[31:24], means the CPU says it is not
 * available. 0 when usable (or not an Intel architectural-perfmon PMU); -1 with one line in why:
 * "<name>: architectural event 6 (branch mispredicts retired) marked unavailable by CPUID.0AH:EBX[6]". */
int pmu_arch_event_refused(const struct pmu_caps *caps, const char *name, unsigned bit, char *why, size_t len);

/* The off-core response event for demand data reads answered by this node's DRAM on a part (its core
 * table and display family/model), or NULL when the part has no off-core response event. Westmere
 * renumbered the DRAM response bits, and not the same way on every part: Nehalem LOCAL_DRAM is bit 14
 * (4001H, [NHM] Table 12), Westmere 06_25 (table wsm) LOCAL_DRAM bit 13 (2001H), Westmere-EP 06_2C
 * (table wsm_dp) LOCAL_DRAM_AND_REMOTE_CACHE_HIT bit 12 (1001H) - libpfm4's names; Westmere-EX 06_2F
 * keeps Nehalem's bit 14 (Intel's WestmereEX event file, Linux perf westmereex/memory.json
 * OFFCORE_RESPONSE.ANY_DATA.LOCAL_DRAM = 4011H), although its row parses with libpfm4's wsm_dp table,
 * whose bit 14 is OTHER_LLC_MISS: the raw response value is used there. The `pmu` flow's off-core step
 * and the self-test's off-core check both use this one choice. */
const char *pmu_offcore_local_dram_event(const char *table, unsigned family, unsigned model);

const char *pmu_vendor_name(enum pmu_vendor v);
const char *pmu_arch_name(enum pmu_arch a);
const char *pmu_uncore_name(enum pmu_uncore_kind u);
const char *pmu_status_name(enum pmu_status s);

#endif
