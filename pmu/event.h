/* event.h - event tables (generated from libpfm4) and the "EVENT:UMASK:mod" specifier parser. */
#ifndef PMB_PMU_EVENT_H
#define PMB_PMU_EVENT_H

#include "kernel/klib.h"

/* What kind of counters a table's events run on; selects the encoder. */
enum pmu_tbl_kind {
    PMU_TBL_KIND_INTEL_CORE = 0, /* IA32_PERFEVTSELx + fixed counters */
    PMU_TBL_KIND_INTEL_UNCORE,   /* Nehalem/Westmere MSR_UNCORE_PERFEVTSELx */
    PMU_TBL_KIND_AMD_CORE,       /* PERF_CTLn */
    PMU_TBL_KIND_AMD_NB,         /* family 15h northbridge PERF_CTL */
    PMU_TBL_KIND_NETBURST,       /* ESCR + CCCR */
};

/* pmu_event_desc.flags */
#define PMU_EVF_DEFAULT (1u << 0)      /* "EVENT" with libpfm4's default unit mask(s) */
#define PMU_EVF_COMBINE (1u << 1)      /* unit masks of this event may be OR-ed */
#define PMU_EVF_PEBS (1u << 2)         /* precise (PEBS-capable) */
#define PMU_EVF_OFFCORE_RSP0 (1u << 3) /* needs MSR_OFFCORE_RSP_0 (0x1A6) */
#define PMU_EVF_OFFCORE_RSP1 (1u << 4) /* needs MSR_OFFCORE_RSP_1 (0x1A7) */
#define PMU_EVF_LDLAT (1u << 5)        /* needs MSR_PEBS_LD_LAT_THRESHOLD (0x3F6) */
#define PMU_EVF_NO_PRIV (1u << 6)      /* no USR/OS filter (uncore, northbridge) */
#define PMU_EVF_AMD_NB (1u << 7)       /* counts a shared northbridge resource (family 10h E0H-FFH, 4E0H+) */
#define PMU_EVF_ALIAS (1u << 8)        /* libpfm4 marks the event/umask as an alias of another */
#define PMU_EVF_NO_UMASK (1u << 9)     /* event has no unit masks at all */
#define PMU_EVF_OFFCORE (PMU_EVF_OFFCORE_RSP0 | PMU_EVF_OFFCORE_RSP1)

/* Counter masks (cntmask): core tables bit i = GP counter i, bit 32+j = fixed counter j;
 * uncore bit i = uncore PMC i, bit 32 = uncore fixed counter; AMD bit i = PERF_CTRi;
 * NetBurst bit i = MSR_P4_PERFCTR(i). */
#define PMU_CNT_FIXED(j) (1ULL << (32 + (j)))
#define PMU_CNT_FIXED_MASK 0xffffffff00000000ULL
#define PMU_CNT_GP_MASK 0x00000000ffffffffULL

/* One generated row: an event with one unit mask ("EVENT:UMASK"), or with its defaults ("EVENT"). */
struct pmu_event_desc {
    const char *name;
    uint16_t event;      /* event select (AMD: 12 bits; NetBurst: ESCR event select) */
    uint16_t umask;      /* this unit mask's own bits (NetBurst: ESCR event-mask bits) */
    uint16_t umask_dflt; /* bits libpfm4 adds from the event's other unit-mask groups */
    uint8_t fixed;       /* fixed counter index + 1 this event may also run on, else 0 */
    uint8_t reserved;
    uint32_t mods;       /* control bits the umask implies: edge/any/inv/cmask (uncore also
                            OCC_CTR_RST), in their PERFEVTSEL positions; NetBurst: CCCR ESCR select */
    uint32_t flags;      /* PMU_EVF_* */
    uint16_t escr[2];    /* NetBurst: the two ESCR MSRs that can select this event */
    uint64_t extra;      /* offcore: own request/response bits; LDLAT: default threshold */
    uint64_t extra_dflt; /* offcore: bits libpfm4 adds from the other group (ANY_REQUEST/...) */
    uint64_t cntmask;    /* counters the event may use */
};

/* Counter constraints that depend on the event code and unit mask (pmu_cnt_rule_mask, pmu/encode.h). */
enum pmu_cnt_rule {
    PMU_CNT_RULE_NONE = 0, /* cntmask of the rows is all there is */
    PMU_CNT_RULE_AMD_F15H, /* AMD family 15h core: Linux amd_get_event_constraints_f15h */
    PMU_CNT_RULE_AMD_PAIR, /* AMD family 17h+: large-increment events need a counter pair */
};

struct pmu_event_table {
    const char *name;        /* our name: "nhm", "nhm_unc", "wsm_dp", "amd_fam10h", "netburst", ... */
    const char *source;      /* libpfm4 PMU it was generated from, or the manual table */
    const char *desc;
    uint8_t kind;            /* enum pmu_tbl_kind */
    uint8_t cmask_max;       /* largest legal counter-mask / threshold value */
    uint8_t gp_counters;     /* counters the table's cntmask values assume */
    uint8_t fixed_counters;
    const struct pmu_event_desc *events;
    uint32_t count;
    uint8_t cnt_rule;        /* enum pmu_cnt_rule */
};

/* The tables themselves are generated: build/gen/pmu_events.h declares pmu_event_tables[] and
 * pmu_event_table_find(); scripts/gen_pmu_events.c writes them from libpfm4. */

/* Result of parsing one specifier. All MSR values are ready to write: EN set, INT (PMI) clear,
 * USR/OS from the modifiers. */
enum pmu_ctr_class {
    PMU_CLS_CORE = 0, /* Intel GP + fixed, or AMD core */
    PMU_CLS_UNCORE,   /* Intel Nehalem uncore */
    PMU_CLS_AMD_NB,
    PMU_CLS_NETBURST,
};

#define PMU_FIXED_NONE 0xffu

struct pmu_event_enc {
    char name[80];        /* canonical "table::EVENT:UMASK..." or the raw text */
    uint8_t kind;         /* enum pmu_tbl_kind */
    uint8_t cls;          /* enum pmu_ctr_class */
    uint8_t fixed_idx;    /* fixed counter this event may use, PMU_FIXED_NONE if none */
    uint8_t fixed_ctrl;   /* its 4-bit IA32_FIXED_CTR_CTRL field (EN/ANY, PMI clear) */
    uint64_t evtsel;      /* PERFEVTSEL / uncore PERFEVTSEL / AMD PERF_CTL; NetBurst: CCCR */
    uint64_t escr;        /* NetBurst ESCR value (T0 bits) */
    uint32_t escr_msr[2]; /* NetBurst: usable ESCRs */
    uint32_t extra_msr;   /* 0, MSR_OFFCORE_RSP_0/1 or MSR_PEBS_LD_LAT_THRESHOLD */
    uint64_t extra;       /* value for extra_msr */
    uint32_t alt_extra_msr; /* Westmere: the other offcore MSR the event can move to (0 = none) */
    uint64_t alt_evtsel;    /* evtsel to use with alt_extra_msr */
    uint64_t cntmask;
    uint32_t flags;       /* PMU_EVF_* of the matched rows (AND of PEBS, OR of needs) */
    const struct pmu_event_desc *desc; /* first matched row; NULL for raw events */
};

enum pmu_event_err {
    PMU_EV_OK = 0,
    PMU_EV_ERR_SYNTAX = -1,
    PMU_EV_ERR_UNKNOWN_EVENT = -2,
    PMU_EV_ERR_UNKNOWN_UMASK = -3,
    PMU_EV_ERR_NEEDS_UMASK = -4,
    PMU_EV_ERR_COMBINE = -5,
    PMU_EV_ERR_MODIFIER = -6,
    PMU_EV_ERR_RANGE = -7,
    PMU_EV_ERR_NO_COUNTER = -8,
};

/* Parse spec against tables[0..ntables) (e.g. a model's core and uncore tables). Accepted:
 *   [table::]EVENT[:UMASK...][:mod...]   mods: u k u=0|1 k=0|1 i e t(any) c=N cmask=N ldlat=N
 *                                        offcore_rsp=N (rsp=N) h g (AMD) thr=N cmpl (NetBurst)
 *   rHEX / r0xHEX                        raw PERFEVTSEL/PERF_CTL bits for tables[0]
 * On error returns a PMU_EV_ERR_* code and writes one line to err (with up to 3 close matches
 * for unknown names). */
int pmu_event_parse(const struct pmu_event_table *const *tables, unsigned ntables, const char *spec,
                    struct pmu_event_enc *out, char *err, size_t errlen);

/* Exact, case-insensitive lookup of "EVENT:UMASK" or "EVENT" in one table. */
const struct pmu_event_desc *pmu_event_find(const struct pmu_event_table *t, const char *name);
/* Levenshtein distance, case-insensitive, strings truncated to 63 characters. */
unsigned pmu_edit_distance(const char *a, const char *b);

#endif
