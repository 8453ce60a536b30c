/* encode.h - bit-exact builders for PMU control-register values (Intel core/uncore, AMD, NetBurst). */
#ifndef PMB_PMU_ENCODE_H
#define PMB_PMU_ENCODE_H

#include "kernel/klib.h"
#include "pmu/msr_pmu.h"

/* IA32_PERFEVTSELx fields ([NHM] Table 10). Out-of-range values are masked to the field width;
 * callers that must reject them check with the *_MAX constants first. */
struct pmu_evtsel {
    uint8_t event;
    uint8_t umask;
    uint8_t cmask;
    bool usr, os, edge, pc, int_en, any, en, inv;
};
uint64_t pmu_enc_perfevtsel(const struct pmu_evtsel *f);
void pmu_dec_perfevtsel(uint64_t v, struct pmu_evtsel *f);

/* Replace the 4-bit field of fixed counter idx in an IA32_FIXED_CTR_CTRL value ([NHM] Table 8/9).
 * os -> CPL0 (01b), usr -> CPL>0 (10b). idx >= 16 returns cur unchanged. */
uint64_t pmu_enc_fixed_ctrl(uint64_t cur, unsigned idx, bool os, bool usr, bool any, bool pmi);
/* IA32_PERF_GLOBAL_CTRL: PMC enables in 31:0, fixed enables from bit 32. */
uint64_t pmu_enc_global_ctrl(uint32_t pmc_mask, uint32_t fixed_mask);
/* IA32_PERF_GLOBAL_OVF_CTRL value clearing every overflow bit of n_pmc/n_fixed counters plus
 * UNC_Ovf, OvfBuf and CondChgd ([NHM] Table 7). */
uint64_t pmu_enc_global_ovf_clear_all(unsigned n_pmc, unsigned n_fixed);
/* IA32_PEBS_ENABLE (Nehalem layout, [NHM] Table 14). */
uint64_t pmu_enc_pebs_enable(uint32_t pebs_pmc_mask, uint32_t ll_pmc_mask);
/* MSR_PEBS_LD_LAT_THRESHOLD: 0 on success, -1 when cycles is outside [3, 65535] ([NHM] Table 17). */
int pmu_enc_ldlat(uint32_t cycles, uint64_t *out);

/* One step of an MSR write sequence. */
struct pmu_msr_write {
    uint32_t msr;
    uint64_t value;
};

/* Errata AAK100 (06_1A), AAP53 (06_1E), BD53 (06_2C): after reprogramming, a general counter may count
 * core cycles or nothing unless the PMU is reset first. The reset, as Linux's intel_pmu_nhm_workaround
 * (arch/x86/events/intel/core.c) documents it, for the first n_gp (at most 4) general counters:
 *   1  IA32_PERF_GLOBAL_CTRL = 0, then IA32_PEBS_ENABLE = 0 (if clear_pebs)
 *   2  for i = 0..3: IA32_PERFEVTSELi = 0x4300B5, 0x4300D2, 0x4300B1, 0x4300B1; IA32_PMCi = 0
 *   3  IA32_PERF_GLOBAL_CTRL = bits 0..n_gp-1 (0xF)
 *   4  IA32_PERF_GLOBAL_CTRL = 0
 *   5  for i = 0..3: IA32_PERFEVTSELi = 0; IA32_PMCi = 0
 * (Step 1 disables globally before clearing PEBS, [NHM] 3.1.3.) Fills out[] and returns the number of
 * steps (PMU_NHM_RESET_MAX_STEPS with 4 counters and PEBS), or 0 when n_gp is 0 or max is too small. */
#define PMU_NHM_RESET_COUNTERS 4U
#define PMU_NHM_RESET_MAX_STEPS (2U + 2U * PMU_NHM_RESET_COUNTERS + 2U + 2U * PMU_NHM_RESET_COUNTERS)
unsigned pmu_nhm_reset_sequence(struct pmu_msr_write *out, unsigned max, unsigned n_gp, bool clear_pebs);

/* Architectural events (SDM Table 18-1; [NHM] Table 25 names bits 0-6): the CPUID.0AH:EBX bit of the
 * event a PERFEVTSEL value selects (event select and unit mask), or -1 when it is not one of them. */
#define PMU_ARCH_EVENTS 8U
int pmu_arch_event_index(uint64_t evtsel);
/* "core cycles", "instructions retired", ... for EBX bit i; NULL past the end. */
const char *pmu_arch_event_name(unsigned bit);

/* MSR_OFFCORE_RSP_x ([NHM] Table 12): request bits 7:0, response bits 15:8. Returns -1 (and
 * still stores the value) when either half is empty - such a value counts nothing. */
int pmu_enc_offcore_rsp(uint8_t request, uint8_t response, uint64_t *out);
bool pmu_offcore_rsp_valid(uint64_t v);

/* Nehalem uncore MSR_UNCORE_PERFEVTSELx ([SDM] Figure 18-32). */
struct pmu_unc_evtsel {
    uint8_t event;
    uint8_t umask;
    uint8_t cmask;
    bool occ_ctr_rst, edge, pmi, en, inv;
};
uint64_t pmu_enc_uncore_evtsel(const struct pmu_unc_evtsel *f);
uint64_t pmu_enc_uncore_fixed_ctrl(bool en, bool pmi);
uint64_t pmu_enc_uncore_global_ctrl(uint8_t pc_mask, bool fc0, uint8_t pmi_core_mask, bool pmi_frz);
/* MSR_UNCORE_PERF_GLOBAL_OVF_CTRL value clearing every overflow bit: the eight PCs, FC0, PMI and
 * CHG ([SDM] Figure 18-31, same positions as the status register). */
uint64_t pmu_enc_uncore_global_ovf_clear_all(void);

/* AMD PERF_CTLn ([AMD] APM 13.2.1): 12-bit event select split over 7:0 and 35:32. */
struct pmu_amd_evtsel {
    uint16_t event; /* 0..0xFFF */
    uint8_t umask;
    uint8_t cmask;
    bool usr, os, edge, int_en, en, inv, guest_only, host_only;
};
uint64_t pmu_enc_amd_evtsel(const struct pmu_amd_evtsel *f);
void pmu_dec_amd_evtsel(uint64_t v, struct pmu_amd_evtsel *f);

/* Per-event counter constraints of an AMD core PMU (enum pmu_cnt_rule in pmu/event.h; the generator
 * applies them to every row, the parser again to the final event/unit mask, raw events included).
 *   PMU_CNT_RULE_AMD_F15H  family 15h, Linux arch/x86/events/amd/core.c amd_get_event_constraints_f15h:
 *     by the event's unit (EventSelect[7:4]): FP 000H-01FH PERF_CTL[5:3] (003H, 00BH, 00DH only [3];
 *     000H with unit-mask bits in both nibbles and 004H with more than one bit: [3]); LS/DC/EX
 *     020H-05FH, 0C0H-0CFH all six, except 023H, 043H, 045H, 046H, 054H, 055H [2:0], 02DH [3], 02EH
 *     [3,0], 031H [2:0] with one unit-mask bit (none with more), 1C0H [5:3]; CU/IC/DE 060H-09FH and
 *     0D0H-0DFH [2:0], except 08FH, 187H, 188H [0] and 0DBH-0DFH, 1D6H, 1D8H all six; 0A0H-0BFH and the
 *     northbridge 0E0H-0FFH none (NB events count on NB_PERF_CTL, table amd_fam15h_nb).
 *   PMU_CNT_RULE_AMD_PAIR  family 17h and later (Linux amd_core_pmu_init, amd_is_pair_event_code):
 *     003H (retired SSE/AVX FLOPs, up to 64 per cycle) needs an even counter paired with the Merge event
 *     (0FFFH) on the next odd one; this layer does not program the pair, so none.
 * Returns the counters of gp_mask (bit i = PERF_CTRi) the event may use; 0 with *why set when none. */
uint64_t pmu_cnt_rule_mask(unsigned rule, uint16_t event, uint8_t umask, uint64_t gp_mask, const char **why);

/* NetBurst ESCR / CCCR words ([P4], msr_pmu.h tables). */
struct pmu_p4_escr {
    uint8_t event_select; /* 6 bits */
    uint16_t event_mask;  /* 16 bits */
    uint8_t tag_value;    /* 4 bits */
    bool tag_enable, t0_os, t0_usr, t1_os, t1_usr;
};
uint64_t pmu_enc_p4_escr(const struct pmu_p4_escr *f);
void pmu_dec_p4_escr(uint64_t v, struct pmu_p4_escr *f);

struct pmu_p4_cccr {
    uint8_t escr_select;   /* 3 bits */
    uint8_t active_thread; /* P4_CCCR_ACTIVE_THREAD_* */
    uint8_t threshold;     /* 4 bits */
    bool enable, compare, complement, edge, force_ovf, ovf_pmi_t0, ovf_pmi_t1, cascade;
};
uint64_t pmu_enc_p4_cccr(const struct pmu_p4_cccr *f);
void pmu_dec_p4_cccr(uint64_t v, struct pmu_p4_cccr *f);

/* One NetBurst ESCR: its MSR, the value the CCCR's ESCR-select field must hold to route it, and
 * the counters (bit i = MSR_P4_PERFCTR(i)) it can feed ([P4] ESCR/counter table). */
struct p4_escr_info {
    const char *name;
    uint32_t msr;
    uint8_t cccr_select;
    uint32_t counters;
    bool model_1_2_only; /* IQ_ESCR0/1 are absent from model 3 on */
};
extern const struct p4_escr_info p4_escr_table[];
extern const unsigned p4_escr_table_len;
const struct p4_escr_info *pmu_p4_escr_by_msr(uint32_t msr);
const struct p4_escr_info *pmu_p4_escr_by_name(const char *name);

#endif
