#!/usr/bin/env python3
"""Check the MSR traces of a pmubench PMU dry run against expectations taken from the spec documents.

A dry run (config `pmu_assume=MODEL trace_msr=1 bench=pmu`) makes the kernel program the PMU of an
assumed model against QEMU's silent MSRs and log every MSR access as an `msr_trace` record. The
kernel brackets each measurement with `pmu_measure` (what it means to program: events, counters,
MSRs) and `pmu_measure_end`; it logs the DS save area as `ds_area` records and the memory it got
as `pmu_alloc` records. This checker replays the trace and verifies, with tables written from the
documents in /work/shared/spec (not from the kernel's code):

  encodings   PerfEvtSel values of the events the guides name ([PAG] Tables 1/3/4, [NHM] 3.7),
              the fixed counters ([NHM] Tables 8/9), off-core request/response bits ([NHM] Tables
              11/12, [PAG] response combinations), uncore events ([PAG] Tables 29-39), AMD events
              ([AMD] section 4) and NetBurst ESCR/CCCR words ([P4]).
  order       counters configured and cleared before the global enable; the global disable before
              any counter read and before any reprogramming ([NHM] 3.1.3).
  PEBS        IA32_PEBS_ENABLE = PEBS_EN_CTRx | LL_EN_CTRx of the counter used ([NHM] Table 14,
              SDM 18.8.1.2), MSR_PEBS_LD_LAT_THRESHOLD = the threshold (>= 3, [NHM] Table 17), the
              event 100BH with CMASK/INV 0, IA32_DS_AREA pointing at a ds_area whose PEBS index is
              its base, threshold <= absolute maximum, whole records of 0xB0 bytes for format 1
              ([NHM] Table 15), buffer inside memory the allocator gave out, counter reset
              = 2^48 - period ([NHM] 3.5.3).
  gating      uncore MSRs only on models with that uncore; AMD and NetBurst accesses only in their
              MSR ranges; no PMU MSR of another family.
  end state   everything disabled again at the end of each measurement.
  documents   enable masks, OVF_CTRL clear values, counter start values, the load-latency threshold,
              the PEBS period and LBR_SELECT from the register layouts ([NHM] Tables 5, 7, 17, 19,
              3.3.1, 3.5.3; SDM 18.8.2), not from what the kernel declared.
  sockets     a measurement's accesses come from the CPU it names (else the BSP), on the socket it
              names; every socket of the uncore_bandwidth summary is read from its own CPU with its
              stream on that CPU's node, or named as not read ([PAG] "Measuring Bandwidth From the
              Uncore"); AMD family 15h northbridge counters (NB_PERF_CTLn, [AMD] 4.2.2 per-DCT masks).
  self-test   each per-counter check on the counter it names, every general counter covered, the
              off-core value and its byte swap, the CMASK/INV pair, one check per uncore counter.
  errata      the AAK100/AAP53/BD53 PMU reset (Linux intel_pmu_nhm_workaround's steps, write for write)
              at the start of every core window on the models Linux resets (by the run's family_model);
              IA32_PEBS_ENABLE cleared around PEBS drains ([NHM] 3.1.3); PEBS period >= 32 (Linux
              nhm_limit_period); IA32_DEBUGCTL.FREEZE_WHILE_SMM written before measuring when the run
              says it tried, kept by later writes.

Usage: check_msr_trace.py LOG [--json]   (exit 0: all checks passed; 1: failures; 2: unusable log)
Library: check_run(parse.parse_log(text)) -> Report (.errors, .counts, .ok).
"""
import argparse
import json
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
if HERE not in sys.path:
    sys.path.insert(0, HERE)

from pmb.parse import LogError, parse_log  # noqa: E402

# ---- register numbers ------------------------------------------------------------------------
# [NHM] Table 40 "NHM Core PMU Register List" and the sections cited.
IA32_PMC0 = 0xC1
IA32_PERFEVTSEL0 = 0x186
IA32_FIXED_CTR0 = 0x309
IA32_FIXED_CTR_CTRL = 0x38D
IA32_PERF_GLOBAL_STATUS = 0x38E
IA32_PERF_GLOBAL_CTRL = 0x38F
IA32_PERF_GLOBAL_OVF_CTRL = 0x390
IA32_DEBUGCTL = 0x1D9
IA32_PEBS_ENABLE = 0x3F1
MSR_PEBS_LD_LAT_THRESHOLD = 0x3F6
IA32_DS_AREA = 0x600
MSR_OFFCORE_RSP_0 = 0x1A6
MSR_OFFCORE_RSP_1 = 0x1A7
MSR_LBR_SELECT = 0x1C8
MSR_LASTBRANCH_TOS = 0x1C9
# Nehalem/Westmere uncore (SDM 18.8.2).
UNC_GLOBAL_CTRL = 0x391
UNC_GLOBAL_STATUS = 0x392
UNC_GLOBAL_OVF_CTRL = 0x393
UNC_FIXED_CTR0 = 0x394
UNC_FIXED_CTR_CTRL = 0x395
UNC_PMC0 = 0x3B0
UNC_PERFEVTSEL0 = 0x3C0
# AMD family 10h BKDG MSRC001_00[00:07]; family 15h MSRC001_02xx.
AMD_PERF_CTL0 = 0xC0010000
AMD_PERF_CTR0 = 0xC0010004

# PerfEvtSelX fields ([NHM] Table 10 / [PAG] Appendix II Table 1).
EVT_USR, EVT_OS, EVT_E, EVT_PC, EVT_INT, EVT_ANY, EVT_EN, EVT_INV = (1 << 16, 1 << 17, 1 << 18, 1 << 19,
                                                                  1 << 20, 1 << 21, 1 << 22, 1 << 23)


def _rng(a, b):
    return range(a, b + 1)


# Every MSR some PMU of some model uses: an access to one outside the model's own set is an error.
PMU_UNIVERSE = [
    _rng(0xC1, 0xC8), _rng(0x186, 0x18D), _rng(0x309, 0x30C), _rng(0x38D, 0x390), _rng(0x4C1, 0x4C8),
    _rng(0x1A6, 0x1A7), _rng(0x1C8, 0x1C9), _rng(0x3F1, 0x3F1), _rng(0x3F6, 0x3F6), _rng(0x600, 0x600),
    _rng(0x680, 0x69F), _rng(0x6C0, 0x6DF),
    _rng(0x391, 0x396), _rng(0x3B0, 0x3B7), _rng(0x3C0, 0x3C7),
    _rng(0x300, 0x311), _rng(0x360, 0x371), _rng(0x3A0, 0x3E1), _rng(0x1DA, 0x1DE), _rng(0x3F2, 0x3F2),
    _rng(0xC0010000, 0xC0010007), _rng(0xC0010200, 0xC001020B), _rng(0xC0010240, 0xC0010247),
    _rng(0xC0000300, 0xC0000302),
]
NHM_CORE_SET = [_rng(0xC1, 0xC4), _rng(0x186, 0x189), _rng(0x309, 0x30B), _rng(0x38D, 0x390),
                _rng(0x1A6, 0x1A7), _rng(0x1C8, 0x1C9), _rng(0x3F1, 0x3F1), _rng(0x3F6, 0x3F6),
                _rng(0x600, 0x600), _rng(0x680, 0x68F), _rng(0x6C0, 0x6CF)]
NHM_UNCORE_SET = [_rng(0x391, 0x396), _rng(0x3B0, 0x3B7), _rng(0x3C0, 0x3C7)]
# [P4]: counters 300H-311H, CCCRs 360H-371H, the 45 ESCRs in 3A0H-3E1H (holes 3BFH, 3C6H-3C7H,
# 3CEH-3DFH), LBR TOS 1DAH, models 0-2 LBRs 1DBH-1DEH.
P4_ESCRS = set(list(range(0x3A0, 0x3BF)) + list(range(0x3C0, 0x3C6)) + list(range(0x3C8, 0x3CE)) + [0x3E0, 0x3E1])
P4_SET = [_rng(0x300, 0x311), _rng(0x360, 0x371), sorted(P4_ESCRS), _rng(0x1DA, 0x1DE)]
P4P_SET = [_rng(0x300, 0x311), _rng(0x360, 0x371), sorted(P4_ESCRS), _rng(0x1DA, 0x1DA), _rng(0x680, 0x68F),
           _rng(0x6C0, 0x6CF)]
AMD_LEGACY_SET = [_rng(0xC0010000, 0xC0010007)]

MODEL_SETS = {
    "nhm": NHM_CORE_SET + NHM_UNCORE_SET,
    "wsm": NHM_CORE_SET + NHM_UNCORE_SET,
    "nhm_ex": NHM_CORE_SET,
    "wsm_ex": NHM_CORE_SET,
    "netburst": P4_SET,
    "netburst_p": P4P_SET,
    "amd_k8": AMD_LEGACY_SET,
    "amd_fam10h": AMD_LEGACY_SET,
    # Family 15h: six extended core counters MSRC001_020[0-B] (PERF_CTL/CTR interleaved) and, with
    # CPUID 8000_0001h:ECX[24] PerfCtrExtNB, four northbridge counters MSRC001_024[0-7] (BKDG 42301).
    "amd_fam15h": [_rng(0xC0010200, 0xC001020B), _rng(0xC0010240, 0xC0010247)],
}
# Models with the 0x391.. uncore: Nehalem 06_1A/1E/1F and Westmere 06_25/2C ([PAG], SDM 18.8.2);
# the EX parts (06_2E/2F) have a box-based uncore instead.
UNCORE_MODELS = {"nhm", "wsm"}
FAMILY = {"nhm": "intel", "wsm": "intel", "nhm_ex": "intel", "wsm_ex": "intel", "netburst": "p4",
          "netburst_p": "p4", "amd_k8": "amd", "amd_fam10h": "amd", "amd_fam15h": "amd"}


def in_set(msr, ranges):
    return any(msr in r for r in ranges)


# ---- expectations from the documents ----------------------------------------------------------
# Intel core events: name (libpfm4 spelling of the guide's EVENT.UMASK) -> (event, umask, cmask,
# inv, edge, source). CMASK/INV/EDGE from the C/I/E columns of [PAG] Table 1.
def _t1(ev, um, c=0, i=0, e=0, src="[PAG] Table 1"):
    return (ev, um, c, i, e, src)


INTEL_CORE = {
    "ARITH:CYCLES_DIV_BUSY": _t1(0x14, 0x01),
    "ARITH:MUL": _t1(0x14, 0x02),
    "CPU_CLK_UNHALTED:THREAD_P": _t1(0x3C, 0x00),
    "INST_RETIRED:ANY_P": _t1(0xC0, 0x01),
    "UOPS_EXECUTED:PORT0": _t1(0xB1, 0x01),
    "UOPS_EXECUTED:PORT1": _t1(0xB1, 0x02),
    "UOPS_EXECUTED:PORT5": _t1(0xB1, 0x20),
    "UOPS_EXECUTED:PORT015": _t1(0xB1, 0x40),
    "UOPS_EXECUTED:PORT015_STALL_CYCLES": _t1(0xB1, 0x40, 1, 1, 0),
    "UOPS_ISSUED:ANY": _t1(0x0E, 0x01),
    "UOPS_ISSUED:STALL_CYCLES": _t1(0x0E, 0x01, 1, 1, 0),
    "UOPS_ISSUED:FUSED": _t1(0x0E, 0x02),
    "UOPS_RETIRED:ACTIVE_CYCLES": _t1(0xC2, 0x01, 1, 0, 0),
    "UOPS_RETIRED:ANY": _t1(0xC2, 0x01),
    "UOPS_RETIRED:STALL_CYCLES": _t1(0xC2, 0x01, 1, 1, 0),
    "UOPS_RETIRED:RETIRE_SLOTS": _t1(0xC2, 0x02),
    "UOPS_RETIRED:MACRO_FUSED": _t1(0xC2, 0x04),
    "RESOURCE_STALLS:ANY": _t1(0xA2, 0x01),
    "RESOURCE_STALLS:LOAD": _t1(0xA2, 0x02),
    "RESOURCE_STALLS:RS_FULL": _t1(0xA2, 0x04),
    "RESOURCE_STALLS:STORE": _t1(0xA2, 0x08),
    "RESOURCE_STALLS:ROB_FULL": _t1(0xA2, 0x10),
    "RESOURCE_STALLS:FPCW": _t1(0xA2, 0x20),
    "RESOURCE_STALLS:MXCSR": _t1(0xA2, 0x40),
    "RESOURCE_STALLS:OTHER": _t1(0xA2, 0x80),
    # [PAG] Table 3 (precise memory events)
    "MEM_INST_RETIRED:LOADS": _t1(0x0B, 0x01, src="[PAG] Table 3"),
    "MEM_INST_RETIRED:STORES": _t1(0x0B, 0x02, src="[PAG] Table 3"),
    "MEM_LOAD_RETIRED:L1D_HIT": _t1(0xCB, 0x01, src="[PAG] Table 3"),
    "MEM_LOAD_RETIRED:L2_HIT": _t1(0xCB, 0x02, src="[PAG] Table 3"),
    "MEM_LOAD_RETIRED:LLC_UNSHARED_HIT": _t1(0xCB, 0x04, src="[PAG] Table 3"),
    "MEM_LOAD_RETIRED:OTHER_CORE_L2_HIT_HITM": _t1(0xCB, 0x08, src="[PAG] Table 3"),
    "MEM_LOAD_RETIRED:LLC_MISS": _t1(0xCB, 0x10, src="[PAG] Table 3"),
    "MEM_LOAD_RETIRED:DROPPED_EVENTS": _t1(0xCB, 0x20, src="[PAG] Table 3"),
    "MEM_LOAD_RETIRED:HIT_LFB": _t1(0xCB, 0x40, src="[PAG] Table 3"),
    "MEM_LOAD_RETIRED:DTLB_MISS": _t1(0xCB, 0x80, src="[PAG] Table 3"),
    "MEM_UNCORE_RETIRED:OTHER_CORE_L2_HITM": _t1(0x0F, 0x02, src="[PAG] Table 3"),
    "MEM_UNCORE_RETIRED:REMOTE_CACHE_LOCAL_HOME_HIT": _t1(0x0F, 0x08, src="[PAG] Table 3"),
    "MEM_UNCORE_RETIRED:REMOTE_DRAM": _t1(0x0F, 0x10, src="[PAG] Table 3"),
    "MEM_UNCORE_RETIRED:LOCAL_DRAM": _t1(0x0F, 0x20, src="[PAG] Table 3"),
    "MEM_UNCORE_RETIRED:UNCACHEABLE": _t1(0x0F, 0x80, src="[PAG] Table 3"),
    "MEM_STORE_RETIRED:DTLB_MISS": _t1(0x0C, 0x01, src="[PAG] Table 3"),
    "ITLB_MISS_RETIRED": _t1(0xC8, 0x20, src="[PAG] Table 3"),
    # [NHM] 3.7 / SDM 18.8.1.2: "PerfEvtSelX[15:0] = 0x100B"; CMASK and INV must be 0.
    "MEM_INST_RETIRED:LATENCY_ABOVE_THRESHOLD": _t1(0x0B, 0x10, src="[NHM] 3.7"),
    # [PAG] Table 4 lists the same event as MEM_INST_RETIRED.LATENCY_ABOVE_THRESHOLD_n, umask 10H, 0BH.
    # [PAG] Table 16 (L1D events; Intel's Westmere event files give the same 51H/01H).
    "L1D:REPL": _t1(0x51, 0x01, src="[PAG] Table 16"),
    "L1D:M_REPL": _t1(0x51, 0x02, src="[PAG] Table 16"),
    # [PAG] Table 18 (its header reads "Table 10" in the extracted text), the events the branch benchmarks and
    # cycle accounting count. NON_CALLS is left out: the guide prints 03H, libpfm4 and Intel's event files 07H.
    # [PAG] Table 6 (precise branch events); ALL_BRANCHES (04H there) is left out: libpfm4's nhm/wsm tables
    # encode it as the architectural C4H/00H.
    "BR_INST_RETIRED:CONDITIONAL": _t1(0xC4, 0x01, src="[PAG] Table 6"),
    "BR_INST_RETIRED:NEAR_CALL": _t1(0xC4, 0x02, src="[PAG] Table 6"),
    "BR_MISP_EXEC:COND": _t1(0x89, 0x01, src="[PAG] Table 18"),
    "BR_MISP_EXEC:DIRECT": _t1(0x89, 0x02, src="[PAG] Table 18"),
    "BR_MISP_EXEC:INDIRECT_NON_CALL": _t1(0x89, 0x04, src="[PAG] Table 18"),
    "BR_MISP_EXEC:RETURN_NEAR": _t1(0x89, 0x08, src="[PAG] Table 18"),
    "BR_MISP_EXEC:DIRECT_NEAR_CALL": _t1(0x89, 0x10, src="[PAG] Table 18"),
    "BR_MISP_EXEC:INDIRECT_NEAR_CALL": _t1(0x89, 0x20, src="[PAG] Table 18"),
    "BR_MISP_EXEC:TAKEN": _t1(0x89, 0x40, src="[PAG] Table 18"),
    "BR_MISP_EXEC:ANY": _t1(0x89, 0x7F, src="[PAG] Table 18"),
    "BR_MISP_EXEC:NEAR_CALLS": _t1(0x89, 0x30, src="[PAG] Table 18"),
}
# Westmere 06_25 (libpfm4 table `wsm`) swaps MEM_UNCORE_RETIRED's DRAM unit masks against [PAG] Table 3:
# Intel's WestmereEP-SP_core.json (github.com/intel/perfmon) gives LOCAL_DRAM 0FH/10H, REMOTE_DRAM 0FH/20H.
INTEL_CORE_BY_TABLE = {
    "wsm": {"MEM_UNCORE_RETIRED:LOCAL_DRAM": _t1(0x0F, 0x10, src="Intel WestmereEP-SP_core.json"),
            "MEM_UNCORE_RETIRED:REMOTE_DRAM": _t1(0x0F, 0x20, src="Intel WestmereEP-SP_core.json")},
}
# The guide's event names where libpfm4 spells the cache level differently (L3 = LLC).
INTEL_ALIASES = {"MEM_LOAD_RETIRED:L3_UNSHARED_HIT": "MEM_LOAD_RETIRED:LLC_UNSHARED_HIT",
                 "MEM_LOAD_RETIRED:L3_MISS": "MEM_LOAD_RETIRED:LLC_MISS"}
# Architectural events ([NHM] Table 25 names them; encodings SDM Vol. 3B Table 18-1) when they sit on
# a general counter.
INTEL_ARCH_GP = {
    "UNHALTED_CORE_CYCLES": (0x3C, 0x00, 0, 0, 0, "SDM Table 18-1"),
    "INSTRUCTION_RETIRED": (0xC0, 0x00, 0, 0, 0, "SDM Table 18-1"),
    "INSTRUCTIONS_RETIRED": (0xC0, 0x00, 0, 0, 0, "SDM Table 18-1"),
    "UNHALTED_REFERENCE_CYCLES": (0x3C, 0x01, 0, 0, 0, "SDM Table 18-1"),
    "LLC_REFERENCES": (0x2E, 0x4F, 0, 0, 0, "SDM Table 18-1"),
    "LLC_MISSES": (0x2E, 0x41, 0, 0, 0, "SDM Table 18-1"),
    "BRANCH_INSTRUCTIONS_RETIRED": (0xC4, 0x00, 0, 0, 0, "SDM Table 18-1"),
    "MISPREDICTED_BRANCH_RETIRED": (0xC5, 0x00, 0, 0, 0, "SDM Table 18-1"),
}
# Fixed counters ([NHM] 3.1.6; [PAG] Table 1 "Fixed Ctr" rows): which counter counts what.
INTEL_FIXED = {
    "INSTRUCTION_RETIRED": 0, "INSTRUCTIONS_RETIRED": 0, "INST_RETIRED:ANY": 0,
    "UNHALTED_CORE_CYCLES": 1, "CPU_CLK_UNHALTED:THREAD": 1,
    "UNHALTED_REFERENCE_CYCLES": 2, "CPU_CLK_UNHALTED:REF": 2,
}
# Off-core response ([NHM] Table 11): event/umask and the extra MSR it uses.
OFFCORE_EVENT = {"OFFCORE_RESPONSE_0": (0xB7, 0x01, MSR_OFFCORE_RSP_0),
                 "OFFCORE_RESPONSE_1": (0xBB, 0x01, MSR_OFFCORE_RSP_1)}
OFFCORE_EVENT_BY_MSR = {MSR_OFFCORE_RSP_0: 0xB7, MSR_OFFCORE_RSP_1: 0xBB}
# [NHM] Table 12 bit positions (names as there; NON_DRAM is libpfm4's name for IO_CSR_MMIO).
OFFCORE_REQUEST = {"DMND_DATA_RD": 0, "DMND_RFO": 1, "DMND_IFETCH": 2, "WB": 3, "PF_DATA_RD": 4,
                   "PF_RFO": 5, "PF_IFETCH": 6, "OTHER": 7}
OFFCORE_RESPONSE = {"UNCORE_HIT": 8, "OTHER_CORE_HIT_SNP": 9, "OTHER_CORE_HITM": 10,
                    "REMOTE_CACHE_HITM": 11, "REMOTE_CACHE_FWD": 12, "REMOTE_DRAM": 13, "LOCAL_DRAM": 14,
                    "IO_CSR_MMIO": 15, "NON_DRAM": 15}
# [PAG] "predefined combinations ... Response Type / MSR Encoding" (upper byte).
OFFCORE_RESPONSE_COMBO = {"ANY_CACHE_DRAM": 0x7F, "ANY_DRAM": 0x60, "ANY_LLC_MISS": 0xF8,
                          "ANY_LOCATION": 0xFF, "ANY_RESPONSE": 0xFF, "LOCAL_CACHE": 0x07,
                          "LOCAL_CACHE_DRAM": 0x47, "REMOTE_CACHE": 0x18, "REMOTE_CACHE_DRAM": 0x38}
# Westmere changes response bits 12-14 against [NHM] Table 12 (Nehalem's), and not the same way on every part.
# Intel's event files (github.com/intel/perfmon, the MSRValue of each OFFCORE_RESPONSE.<request>.<response>
# event) give: 06_2C WestmereEP-DP_core.json LOCAL_DRAM_AND_REMOTE_CACHE_HIT 10xxH, REMOTE_DRAM 20xxH,
# OTHER_LOCAL_DRAM 40xxH (libpfm4 wsm_dp: OTHER_LLC_MISS); 06_25 WestmereEP-SP_core.json REMOTE_CACHE_HIT 10xxH
# (libpfm4 wsm: REMOTE_CACHE_FWD), LOCAL_DRAM 20xxH, REMOTE_DRAM 40xxH; 06_2F WestmereEX_core.json as Nehalem.
# The `wsm` row parses with libpfm4's wsm_dp (06_2C) or wsm (06_25) table; pmu_measure events[].table says
# which. Request bits 0-7 and bits 8-11, 15 are Table 12's on every part. (bits, combinations) per table:
OFFCORE_RESPONSE_WSM = {
    "wsm_dp": ({"UNCORE_HIT": 8, "OTHER_CORE_HIT_SNP": 9, "OTHER_CORE_HITM": 10, "REMOTE_CACHE_HITM": 11,
                "LOCAL_DRAM_AND_REMOTE_CACHE_HIT": 12, "REMOTE_DRAM": 13, "OTHER_LLC_MISS": 14,
                "OTHER_LOCAL_DRAM": 14, "IO_CSR_MMIO": 15, "NON_DRAM": 15},
               {"ANY_CACHE_DRAM": 0x7F, "ANY_LLC_MISS": 0xF8, "ANY_LOCATION": 0xFF, "ANY_RESPONSE": 0xFF,
                "LOCAL_CACHE": 0x07, "ALL_LOCAL_DRAM_AND_REMOTE_CACHE_HIT": 0x50, "ANY_DRAM_AND_REMOTE_FWD": 0x30}),
    "wsm": ({"UNCORE_HIT": 8, "OTHER_CORE_HIT_SNP": 9, "OTHER_CORE_HITM": 10, "REMOTE_CACHE_HITM": 11,
             "REMOTE_CACHE_FWD": 12, "REMOTE_CACHE_HIT": 12, "LOCAL_DRAM": 13, "REMOTE_DRAM": 14, "IO_CSR_MMIO": 15,
             "NON_DRAM": 15},
            {"ANY_CACHE_DRAM": 0x7F, "ANY_DRAM": 0x60, "ANY_LLC_MISS": 0xF8, "ANY_LOCATION": 0xFF,
             "ANY_RESPONSE": 0xFF, "LOCAL_CACHE": 0x07, "LOCAL_CACHE_DRAM": 0x27, "REMOTE_CACHE": 0x18,
             "REMOTE_CACHE_DRAM": 0x58}),
}


def offcore_response_tables(w, ev):
    """(response bits, combinations) for an off-core event of window w: the Westmere part's, else Table 12's."""
    if w.rec.get("model") == "wsm" and ev.get("table") in OFFCORE_RESPONSE_WSM:
        return OFFCORE_RESPONSE_WSM[ev["table"]]
    return OFFCORE_RESPONSE, OFFCORE_RESPONSE_COMBO

# Uncore ([PAG] Tables 29-39; libpfm4 calls the IMC events UNC_QMC_*): name -> (event, umask, source).
UNCORE = {
    "UNC_QMC_NORMAL_READS:CH0": (0x2C, 0x01, "[PAG] Table 32 UNC_IMC_NORMAL_READS.CH0"),
    "UNC_QMC_NORMAL_READS:CH1": (0x2C, 0x02, "[PAG] Table 32"),
    "UNC_QMC_NORMAL_READS:CH2": (0x2C, 0x04, "[PAG] Table 32"),
    "UNC_QMC_NORMAL_READS:ANY": (0x2C, 0x07, "[PAG] Table 32 UNC_IMC_NORMAL_READS.ANY"),
    "UNC_QMC_WRITES:FULL_CH0": (0x2F, 0x01, "[PAG] Table 32 UNC_IMC_WRITES.FULL.CH0"),
    "UNC_QMC_WRITES:FULL_CH1": (0x2F, 0x02, "[PAG] Table 32"),
    "UNC_QMC_WRITES:FULL_CH2": (0x2F, 0x04, "[PAG] Table 32"),
    "UNC_QMC_WRITES:FULL_ANY": (0x2F, 0x07, "[PAG] Table 32 UNC_IMC_WRITES.FULL.ANY"),
    "UNC_QMC_WRITES:PARTIAL_ANY": (0x2F, 0x38, "[PAG] Table 32 UNC_IMC_WRITES.PARTIAL.ANY"),
    "UNC_QHL_REQUESTS:IOH_READS": (0x20, 0x01, "[PAG] Table 31"),
    "UNC_QHL_REQUESTS:IOH_WRITES": (0x20, 0x02, "[PAG] Table 31"),
    "UNC_QHL_REQUESTS:REMOTE_READS": (0x20, 0x04, "[PAG] Table 31"),
    "UNC_QHL_REQUESTS:REMOTE_WRITES": (0x20, 0x08, "[PAG] Table 31"),
    "UNC_QHL_REQUESTS:LOCAL_READS": (0x20, 0x10, "[PAG] Table 31"),
    "UNC_QHL_REQUESTS:LOCAL_WRITES": (0x20, 0x20, "[PAG] Table 31"),
    "UNC_QHL_OCCUPANCY:LOCAL": (0x23, 0x04, "[PAG] Table 31"),
    "UNC_QHL_CYCLES_FULL:LOCAL": (0x21, 0x04, "[PAG] Table 31"),
    "UNC_QHL_CYCLES_NOT_EMPTY:LOCAL": (0x22, 0x04, "[PAG] Table 31"),
    "UNC_DRAM_OPEN:CH0": (0x60, 0x01, "[PAG] Table 34"),
    "UNC_DRAM_OPEN:CH1": (0x60, 0x02, "[PAG] Table 34"),
    "UNC_DRAM_OPEN:CH2": (0x60, 0x04, "[PAG] Table 34"),
}
UNCORE_FIXED = {"UNC_CLK_UNHALTED"}  # the uncore fixed counter (SDM 18.8.2): EN bit 0, PMI bit 2

# AMD ([AMD] section 4 tables; "N/A" unit masks are 0): 12-bit event select -> (event, umask, name).
AMD = {
    "CPU_CLK_UNHALTED": (0x076, 0x00, "CPU_clocks 4.2.1"),
    "RETIRED_INSTRUCTIONS": (0x0C0, 0x00, "Ret_instructions 4.2.1"),
    "SYSTEM_READ_RESPONSES:EXCLUSIVE:MODIFIED:SHARED": (0x06C, 0x07, "System_read 4.2.2"),
    "QUADWORDS_WRITTEN_TO_SYSTEM:QUADWORD_WRITE_TRANSFER": (0x06D, 0x01, "System_write 4.2.2"),
    # 4.2.2: "A separate performance counter must be configured for each memory controller": E0H/07H
    # DRAM_accesses_0 [DCT0] and E0H/38H DRAM_accesses_1 [DCT1] (07H alone on one-controller parts).
    "DRAM_ACCESSES_PAGE:HIT:MISS:CONFLICT": (0x0E0, 0x07, "DRAM_accesses_0 [DCT0] 4.2.2"),
    "DRAM_ACCESSES_PAGE:DCT1_PAGE_HIT:DCT1_PAGE_MISS:DCT1_PAGE_CONFLICT": (0x0E0, 0x38, "DRAM_accesses_1 [DCT1] 4.2.2"),
    "DATA_CACHE_ACCESSES": (0x040, 0x00, "DC_accesses 4.3.1"),
    "DATA_CACHE_MISSES": (0x041, 0x00, "DC_misses 4.3.1"),
    "DATA_CACHE_REFILLS:L2_SHARED:L2_EXCLUSIVE:L2_OWNED:L2_MODIFIED": (0x042, 0x1E, "DC_refills_L2 4.3.1"),
    "DATA_CACHE_REFILLS_FROM_SYSTEM:SHARED:EXCLUSIVE:OWNED:MODIFIED": (0x043, 0x1E, "DC_refills_sys 4.3.1"),
    "INSTRUCTION_CACHE_FETCHES": (0x080, 0x00, "IC_fetches 4.3.2"),
    "INSTRUCTION_CACHE_REFILLS_FROM_L2": (0x082, 0x00, "IC_refills_L2 4.3.2"),
    "INSTRUCTION_CACHE_REFILLS_FROM_SYSTEM": (0x083, 0x00, "IC_refills_sys 4.3.2"),
    "REQUESTS_TO_L2:INSTRUCTIONS:DATA:TLB_WALK": (0x07D, 0x07, "L2_requests 4.3.3"),
    "L2_CACHE_MISS:INSTRUCTIONS:DATA:TLB_WALK": (0x07E, 0x07, "L2_misses 4.3.3"),
    "REQUESTS_TO_L2:TLB_WALK": (0x07D, 0x04, "L2_requests_TLB 4.3.3"),
    "L2_CACHE_MISS:TLB_WALK": (0x07E, 0x04, "L2_misses_TLB 4.3.3"),
    "READ_REQUEST_TO_L3_CACHE:ANY_READ:ALL_CORES": (0x4E0, 0xF7, "L3_requests 4.3.4"),
    "L3_CACHE_MISSES:ANY_READ:ALL_CORES": (0x4E1, 0xF7, "L3_misses 4.3.4"),
    "RETIRED_BRANCH_INSTRUCTIONS": (0x0C2, 0x00, "Branches 4.5.1"),
    "RETIRED_MISPREDICTED_BRANCH_INSTRUCTIONS": (0x0C3, 0x00, "Mispred_branches 4.5.1"),
    "RETIRED_TAKEN_BRANCH_INSTRUCTIONS": (0x0C4, 0x00, "Taken_branches 4.5.1"),
    "RETIRED_NEAR_RETURNS": (0x0C8, 0x00, "Near_returns 4.5.2"),
    "RETIRED_NEAR_RETURNS_MISPREDICTED": (0x0C9, 0x00, "Mispred_near_ret 4.5.2"),
    "MISALIGNED_ACCESSES": (0x047, 0x00, "Misalign_access 4.6.1"),
}

# AMD family 15h northbridge counters (NB_PERF_CTL, MSRC001_024[0,2,4,6]): the same E0H DRAM accesses with
# [AMD] 4.2.2's per-DCT unit masks (libpfm4 amd64_fam15h_nb names them DCTn_PAGE_HIT/MISS/CONFLICT).
AMD_NB = {
    "DRAM_ACCESSES:DCT0_PAGE_HIT:DCT0_PAGE_MISS:DCT0_PAGE_CONFLICT": (0x0E0, 0x07, "DRAM_accesses_0 [DCT0] 4.2.2"),
    "DRAM_ACCESSES:DCT1_PAGE_HIT:DCT1_PAGE_MISS:DCT1_PAGE_CONFLICT": (0x0E0, 0x38, "DRAM_accesses_1 [DCT1] 4.2.2"),
    "DRAM_ACCESSES:ALL": (0x0E0, 0x3F, "DRAM_accesses_0 | DRAM_accesses_1 4.2.2"),
}
AMD_NB_CTL0 = 0xC0010240
AMD_EXT_CTL0 = 0xC0010200

# NetBurst ([P4] pmc.p4(3) for names and masks; event selects, ESCRs, CCCR selects and counters
# from the SDM Pentium 4 event tables and its "ESCR MSRs and associated counters" table).
P4 = {
    "global_power_events": {"select": 0x13, "escr": (0x3A2, 0x3A3), "cccr": 6, "masks": {"RUNNING": 0}},
    "instr_retired": {"select": 0x02, "escr": (0x3B8, 0x3B9), "cccr": 4,
                      "masks": {"NBOGUSNTAG": 0, "NBOGUSTAG": 1, "BOGUSNTAG": 2, "BOGUSTAG": 3}},
    "branch_retired": {"select": 0x06, "escr": (0x3CC, 0x3CD), "cccr": 5,
                       "masks": {"MMNP": 0, "MMNM": 1, "MMTP": 2, "MMTM": 3}},
    # pmc.p4(3) calls bit 0 "nbogus"; libpfm4 calls it BOGUS (docs/pmu.md).
    "mispred_branch_retired": {"select": 0x03, "escr": (0x3B8, 0x3B9), "cccr": 4,
                               "masks": {"NBOGUS": 0, "BOGUS": 0}},
}
P4_ESCR_COUNTERS = {0x3A2: {0, 1}, 0x3A3: {2, 3}, 0x3B8: {12, 13, 16}, 0x3B9: {14, 15, 17},
                    0x3CC: {12, 13, 16}, 0x3CD: {14, 15, 17}}

PEBS_RECORD_SIZE = {0: 0x90, 1: 0xB0, 2: 0xC0, 3: 0xC8}  # [NHM] Table 15 (format 1); later formats SDM

# Errata AAK100 (06_1A), AAP53 (06_1E), BD53 (06_2C): "These chips need to be 'reset' when adding counters
# by programming the magic three (non-counting) events 0x4300B5, 0x4300D2, and 0x4300B1"; the steps as
# Linux's intel_pmu_nhm_workaround documents them (arch/x86/events/intel/core.c). Linux installs it
# (intel_pmu_nhm_enable_all) for 06_1A/1E/2E and 06_25/2C/2F; 06_1F has no case there. family_model ->
# the erratum (None: no number, Linux's own choice).
NHM_RESET_MODELS = {"06_1A": "AAK100", "06_1E": "AAP53", "06_2C": "BD53", "06_2E": None, "06_25": None,
                    "06_2F": None}
NHM_RESET_SEQUENCE = [
    (IA32_PERF_GLOBAL_CTRL, 0), (IA32_PEBS_ENABLE, 0),               # 1) clear GLOBAL_CTRL and PEBS_ENABLE
    (0x186, 0x4300B5), (0xC1, 0), (0x187, 0x4300D2), (0xC2, 0),      # 2) the magic events, PMCx cleared
    (0x188, 0x4300B1), (0xC3, 0), (0x189, 0x4300B1), (0xC4, 0),
    (IA32_PERF_GLOBAL_CTRL, 0xF),                                    # 3) set bits 0-3
    (IA32_PERF_GLOBAL_CTRL, 0),                                      # 4) clear it
    (0x186, 0), (0xC1, 0), (0x187, 0), (0xC2, 0), (0x188, 0), (0xC3, 0), (0x189, 0), (0xC4, 0),  # 5)
]
# Linux nhm_limit_period: no PEBS sample-after value below 32 on these parts.
PEBS_MIN_PERIOD = 32
# IA32_DEBUGCTL.FREEZE_WHILE_SMM ([NHM] Table 4 SMM_FRZ), usable when IA32_PERF_CAPABILITIES[12] is set.
DEBUGCTL_FREEZE_WHILE_SMM = 1 << 14


# ---- report -------------------------------------------------------------------------------------
class Report:
    def __init__(self):
        self.errors = []
        self.notes = []
        self.counts = {}
        self.unchecked = []

    def err(self, check, msg):
        self.errors.append("%s: %s" % (check, msg))

    def count(self, what, n=1):
        self.counts[what] = self.counts.get(what, 0) + n

    @property
    def ok(self):
        return not self.errors

    def summary(self):
        c = ", ".join("%s=%d" % kv for kv in sorted(self.counts.items()))
        return "%s: %d error(s); verified %s" % ("OK" if self.ok else "FAILED", len(self.errors), c or "nothing")

    def as_dict(self):
        return {"ok": self.ok, "errors": self.errors, "counts": self.counts, "notes": self.notes,
                "unchecked": self.unchecked}


def hx(v):
    return int(v, 16) if isinstance(v, str) else int(v)


def split_name(name):
    """'EVT:U1:U2:ldlat=3:u' -> ('EVT', frozenset({'U1','U2'}), {'ldlat': '3', 'u': ''})."""
    toks = name.split(":")
    ev, umasks, mods = toks[0], set(), {}
    for t in toks[1:]:
        if "=" in t:
            k, v = t.split("=", 1)
            mods[k.lower()] = v
        elif t and t == t.lower() and not t.isdigit():
            mods[t] = ""
        else:
            umasks.add(t.upper())
    return ev, frozenset(umasks), mods


def table_lookup(table, name, aliases=None):
    ev, um, mods = split_name(name)
    for key, val in table.items():
        kev, kum, _ = split_name(key)
        if kev.upper() == ev.upper() and kum == um:
            return key, val, mods
    if aliases:
        for a, target in aliases.items():
            aev, aum, _ = split_name(a)
            if aev == ev and aum == um:
                return table_lookup(table, target)[0], table[target], mods
    return None, None, mods


def expected_priv(mods):
    """USR/OS from u/k modifiers (naming one alone counts only that level; default both)."""
    u = "u" in mods and mods["u"] in ("", "1")
    k = "k" in mods and mods["k"] in ("", "1")
    if not u and not k:
        return True, True
    return u, k


# ---- trace model ---------------------------------------------------------------------------
class Access:
    __slots__ = ("seq", "op", "msr", "value", "ok", "safe", "cpu", "idx")

    def __init__(self, r, idx):
        self.seq = r.get("seq")
        self.op = r["op"]
        self.msr = hx(r["msr"])
        self.value = hx(r["value"])
        self.ok = r.get("ok", True)
        self.safe = r.get("safe", False)
        self.cpu = r.get("cpu", 0)
        self.idx = idx


class Window:
    def __init__(self, rec, idx):
        self.rec = rec
        self.id = rec.get("id")
        self.what = rec.get("what", "?")
        self.events = rec.get("events") or []
        self.pebs = rec.get("pebs")
        self.lbr = rec.get("lbr")
        self.start = idx
        self.end = None
        self.accesses = []

    def label(self):
        return "measure %s (%s)" % (self.id, self.what)


def collect(run, rep):
    """Split the records into accesses, windows, ds_area and allocation records (in stream order)."""
    accesses, windows, ds_recs, allocs = [], [], [], []
    cur = None
    last_seq = None
    for i, r in enumerate(run.records):
        t = r.get("type")
        if t == "msr_trace":
            a = Access(r, i)
            if r.get("dropped_before"):
                rep.err("trace", "%d msr_trace entries dropped before seq %s" % (r["dropped_before"], a.seq))
            if last_seq is not None and a.seq is not None and a.seq != last_seq + 1:
                rep.err("trace", "msr_trace seq jumps from %s to %s (entries lost)" % (last_seq, a.seq))
            last_seq = a.seq
            accesses.append(a)
            if cur is not None:
                cur.accesses.append(a)
        elif t == "pmu_measure":
            if cur is not None:
                rep.err("windows", "%s opened inside %s" % (r.get("id"), cur.label()))
            cur = Window(r, i)
            windows.append(cur)
        elif t == "pmu_measure_end":
            if cur is None or cur.id != r.get("id"):
                rep.err("windows", "pmu_measure_end %s without its pmu_measure" % r.get("id"))
            else:
                cur.end = i
            cur = None
        elif t == "ds_area":
            ds_recs.append((i, r))
        elif t == "pmu_alloc":
            allocs.append((i, r))
    if cur is not None:
        rep.err("windows", "%s never ended" % cur.label())
    return accesses, windows, ds_recs, allocs


# ---- checks ---------------------------------------------------------------------------------
def check_gating(model, accesses, rep):
    allowed = MODEL_SETS.get(model)
    if allowed is None:
        rep.notes.append("no MSR range table for model %r: range checks skipped" % model)
        return
    n = 0
    for a in accesses:
        if not in_set(a.msr, PMU_UNIVERSE):
            continue
        n += 1
        if not in_set(a.msr, allowed):
            what = "uncore MSR" if in_set(a.msr, NHM_UNCORE_SET) and FAMILY.get(model) == "intel" else "PMU MSR"
            rep.err("gating", "%s %s 0x%x on model %s, which has no such register" % (a.op, what, a.msr, model))
        if not a.ok:
            rep.err("gating", "%s of PMU MSR 0x%x faulted" % (a.op, a.msr))
    rep.count("pmu_accesses", n)


def decode_evtsel(v):
    return {"event": v & 0xFF, "umask": (v >> 8) & 0xFF, "usr": bool(v & EVT_USR), "os": bool(v & EVT_OS),
            "edge": bool(v & EVT_E), "pc": bool(v & EVT_PC), "int": bool(v & EVT_INT), "any": bool(v & EVT_ANY),
            "en": bool(v & EVT_EN), "inv": bool(v & EVT_INV), "cmask": (v >> 24) & 0xFF, "high": v >> 32}


def check_intel_evtsel(w, ev, value, rep, pebs_counter=None):
    """A PerfEvtSel value against the documents, for event `ev` of window w."""
    name = ev["name"]
    d = decode_evtsel(value)
    where = "%s %s on %s" % (w.label(), name, ev["counter"])
    if d["high"]:
        rep.err("evtsel", "%s: bits 63:32 set (0x%x)" % (where, value))
    if d["pc"]:
        rep.err("evtsel", "%s: PC (bit 19) is reserved on Nehalem ([NHM] 3.2.1)" % where)
    if d["cmask"] & 0xE0:
        rep.err("evtsel", "%s: CMASK bits 31:29 must be 0 ([NHM] Table 10)" % where)
    if d["int"]:
        rep.err("evtsel", "%s: INT set but no PMI handler is armed" % where)
    if not d["en"]:
        rep.err("evtsel", "%s: EN clear in the value programmed before the global enable" % where)
    ev_name, um, mods = split_name(name)
    base = ev_name + "".join(":" + u for u in sorted(um))
    if ev_name in OFFCORE_EVENT:
        return check_offcore_evtsel(w, ev, d, rep)
    key, exp, mods = None, None, None
    if w.rec.get("model") == "wsm" and ev.get("table") in INTEL_CORE_BY_TABLE:
        key, exp, mods = table_lookup(INTEL_CORE_BY_TABLE[ev["table"]], name)
    if exp is None:
        key, exp, mods = table_lookup(INTEL_CORE, name, INTEL_ALIASES)
    if exp is None:
        key, exp, mods = table_lookup(INTEL_ARCH_GP, name)
    if exp is None:
        rep.unchecked.append(base)
        return
    usr, os_ = expected_priv(mods)
    cm = int(mods["c"], 0) if "c" in mods else int(mods["cmask"], 0) if "cmask" in mods else exp[2]
    inv = exp[3] or "i" in mods or "inv" in mods
    edge = exp[4] or "e" in mods or "edge" in mods
    got = (d["event"], d["umask"], d["cmask"], int(d["inv"]), int(d["edge"]), d["usr"], d["os"])
    want = (exp[0], exp[1], cm, int(bool(inv)), int(bool(edge)), usr, os_)
    if got != want:
        rep.err("evtsel", "%s: programmed event %02xH umask %02xH cmask %d inv %d edge %d usr %d os %d, "
                "%s says %02xH/%02xH cmask %d inv %d edge %d (usr %d os %d)"
                % (where, got[0], got[1], got[2], got[3], got[4], got[5], got[6], exp[5], want[0], want[1],
                   want[2], want[3], want[4], want[5], want[6]))
    else:
        rep.count("evtsel_spec")
    if key == "MEM_INST_RETIRED:LATENCY_ABOVE_THRESHOLD" and (value & 0xFFFF) != 0x100B:
        rep.err("pebs", "%s: PerfEvtSelX[15:0] = %04xH, [NHM] 3.7 requires 100BH" % (where, value & 0xFFFF))


def offcore_expected(umasks, response=OFFCORE_RESPONSE, combo=OFFCORE_RESPONSE_COMBO):
    """(request bits, response bits or None where the name leaves a half to libpfm4's default)."""
    req = resp = 0
    known = True
    req_named = resp_named = False
    for u in umasks:
        if u in OFFCORE_REQUEST:
            req |= 1 << OFFCORE_REQUEST[u]
            req_named = True
        elif u in response:
            resp |= 1 << response[u]
            resp_named = True
        elif u in combo:
            resp |= combo[u] << 8
            resp_named = True
        else:
            known = False
    return (req if req_named else None), (resp if resp_named else None), known


def check_offcore_evtsel(w, ev, d, rep):
    name = ev["name"]
    ev_name, um, mods = split_name(name)
    where = "%s %s" % (w.label(), name)
    xmsr = hx(ev["extra_msr"]) if ev.get("extra_msr") else None
    if xmsr not in OFFCORE_EVENT_BY_MSR:
        rep.err("offcore", "%s: no OFFCORE_RSP_x MSR named" % where)
        return
    # [NHM] Table 11: B7H/01H goes with 1A6H, BBH/01H with 1A7H (the event follows the MSR it uses).
    if d["event"] != OFFCORE_EVENT_BY_MSR[xmsr] or d["umask"] != 0x01:
        rep.err("offcore", "%s: event %02xH/%02xH with MSR 0x%x; [NHM] Table 11 pairs 0x%x with %02xH/01H"
                % (where, d["event"], d["umask"], xmsr, xmsr, OFFCORE_EVENT_BY_MSR[xmsr]))
    else:
        rep.count("offcore_event")


def offcore_value_check(w, ev, value, rep):
    name = ev["name"]
    ev_name, um, mods = split_name(name)
    where = "%s %s" % (w.label(), name)
    req_h, resp_h = value & 0xFF, (value >> 8) & 0xFF
    if value >> 16:
        rep.err("offcore", "%s: bits above 15 set in 0x%x" % (where, value))
    # [NHM] 3.4: "software must set at least one request type and one response type bit".
    if not req_h or not resp_h:
        rep.err("offcore", "%s: 0x%x lacks a request or a response bit ([NHM] 3.4)" % (where, value))
        return
    if "rsp" in mods or "offcore_rsp" in mods:
        want = int(mods.get("rsp", mods.get("offcore_rsp")), 0)
        if value != want:
            rep.err("offcore", "%s: wrote 0x%x, the name asks for 0x%x" % (where, value, want))
        else:
            rep.count("offcore_value")
        return
    req, resp, known = offcore_expected(um, *offcore_response_tables(w, ev))
    if not known:
        rep.unchecked.append(name)
        return
    bad = (req is not None and req_h != req) or (resp is not None and resp_h << 8 != resp)
    if bad:
        src = "[NHM] Table 12" if offcore_response_tables(w, ev)[0] is OFFCORE_RESPONSE else \
            "Intel's %s event file" % ev.get("table")
        rep.err("offcore", "%s: wrote 0x%04x; %s gives request 0x%s response 0x%s"
                % (where, value, src, "%02x" % req if req is not None else "any",
                   "%04x" % resp if resp is not None else "any"))
    else:
        rep.count("offcore_value")


def check_uncore_evtsel(w, ev, value, rep):
    where = "%s %s on %s" % (w.label(), ev["name"], ev["counter"])
    d = decode_evtsel(value)
    if d["usr"] or d["os"]:
        rep.err("uncore", "%s: USR/OS set; the uncore has no privilege filter" % where)
    if d["int"]:
        rep.err("uncore", "%s: PMI set with no handler" % where)
    if not d["en"]:
        rep.err("uncore", "%s: EN clear" % where)
    key, exp, _ = table_lookup(UNCORE, ev["name"])
    if exp is None:
        rep.unchecked.append(ev["name"])
        return
    if (d["event"], d["umask"]) != exp[:2]:
        rep.err("uncore", "%s: %02xH/%02xH, %s says %02xH/%02xH" % (where, d["event"], d["umask"], exp[2], exp[0],
                                                                   exp[1]))
    else:
        rep.count("uncore_evtsel_spec")


def check_amd_ctl(w, ev, value, rep):
    where = "%s %s on %s" % (w.label(), ev["name"], ev["counter"])
    event = (value & 0xFF) | (((value >> 32) & 0xF) << 8)  # EventSelect[11:8] in bits 35:32
    umask = (value >> 8) & 0xFF
    if value & (1 << 20):
        rep.err("amd", "%s: INT set with no handler" % where)
    _, _, mods = split_name(ev["name"])
    want_cm = int(mods.get("c", mods.get("cmask", "0")), 0)
    want_inv = "i" in mods or "inv" in mods
    if (value >> 24) & 0xFF != want_cm or bool(value & (1 << 23)) != want_inv or value & (1 << 18):
        rep.err("amd", "%s: CntMask %d Inv %d Edge %d, the name asks for CntMask %d Inv %d Edge 0 (APM Vol. 2 "
                "13.2.1 PERF_CTL)" % (where, (value >> 24) & 0xFF, bool(value & (1 << 23)), bool(value & (1 << 18)),
                                      want_cm, want_inv))
    if value & (3 << 40):
        rep.err("amd", "%s: Host/GuestOnly set" % where)
    if (value & ((1 << 16) | (1 << 17))) != ((1 << 16) | (1 << 17)):
        rep.err("amd", "%s: not counting both USR and OS" % where)
    key, exp, _ = table_lookup(AMD, ev["name"])
    if exp is None:
        rep.unchecked.append(ev["name"])
        return
    if (event, umask) != exp[:2]:
        rep.err("amd", "%s: event %03xH umask %02xH, [AMD] %s says %03xH/%02xH" % (where, event, umask, exp[2],
                                                                                   exp[0], exp[1]))
    else:
        rep.count("amd_evtsel_spec")


def f15h_allowed(event, umask):
    """PERF_CTL counters (bit n = PERF_CTLn) family 15h lets an event use: Linux arch/x86/events/amd/core.c
    amd_get_event_constraints_f15h, typed in from its table (unit = EventSelect[7:4]); 0 = none."""
    unit = event & 0xF0
    ones = bin(umask).count("1")
    if unit in (0x00, 0x10):                                   # FP: PERF_CTL[5:3]
        if event in (0x003, 0x00B, 0x00D) or (event == 0x000 and umask & 0xF0 and umask & 0x0F) or \
                (event == 0x004 and ones > 1):
            return 0x08
        return 0x38
    if unit in (0x20, 0x30, 0x40, 0x50, 0xC0):                 # LS, DC, EX/LS: all six, with exceptions
        if event in (0x023, 0x043, 0x045, 0x046, 0x054, 0x055):
            return 0x07
        if event == 0x02D:
            return 0x08
        if event == 0x02E:
            return 0x09
        if event == 0x031:                                      # one unit-mask bit at a time
            return 0x07 if ones <= 1 else 0
        if event == 0x1C0:
            return 0x38
        return 0x3F
    if unit in (0x60, 0x70, 0x80, 0x90, 0xD0):                 # CU, IC/DE, DE: PERF_CTL[2:0], with exceptions
        if event in (0x08F, 0x187, 0x188):
            return 0x01
        if 0x0DB <= event <= 0x0DF or event in (0x1D6, 0x1D8):
            return 0x3F
        return 0x07
    return 0                                                    # 0A0H-0BFH, northbridge 0E0H-0FFH


def check_amd_f15h_counter(w, ev, value, ctl, rep):
    """Family 15h: the core counter an event was programmed on (from its PERF_CTL MSR, MSRC001_0200 + 2n) is one
    Linux's constraint table allows for its EventSelect and unit mask."""
    n = (ctl - AMD_EXT_CTL0) // 2
    event = (value & 0xFF) | (((value >> 32) & 0xF) << 8)
    umask = (value >> 8) & 0xFF
    allowed = f15h_allowed(event, umask)
    if not allowed >> n & 1:
        rep.err("amd", "%s: %s (%03xH/%02xH) on PERF_CTL%d, family 15h counts it only on %s (Linux "
                "amd_get_event_constraints_f15h)" % (w.label(), ev["name"], event, umask, n,
                                                      ", ".join("PERF_CTL%d" % i for i in range(6) if allowed >> i & 1)
                                                      or "no core counter"))
    else:
        rep.count("amd_f15h_counter")


def check_p4(w, ev, escr_msr, escr, cccr, rep):
    where = "%s %s on %s" % (w.label(), ev["name"], ev["counter"])
    ev_name, um, _ = split_name(ev["name"])
    spec = P4.get(ev_name.lower())
    idx = ev["index"]
    if escr_msr not in P4_ESCRS:
        rep.err("netburst", "%s: ESCR 0x%x is not a NetBurst ESCR" % (where, escr_msr))
    if spec is None:
        rep.unchecked.append(ev["name"])
        return
    sel = (escr >> 25) & 0x3F
    mask = (escr >> 9) & 0xFFFF
    want_mask = 0
    for u in um:
        if u not in spec["masks"]:
            rep.unchecked.append(ev["name"])
            return
        want_mask |= 1 << spec["masks"][u]
    errs = []
    if escr_msr not in spec["escr"]:
        errs.append("ESCR 0x%x, the event lives in %s" % (escr_msr, "/".join("0x%x" % e for e in spec["escr"])))
    elif idx not in P4_ESCR_COUNTERS.get(escr_msr, set()):
        errs.append("counter %d cannot be fed by ESCR 0x%x" % (idx, escr_msr))
    if sel != spec["select"]:
        errs.append("event select %02xH, want %02xH" % (sel, spec["select"]))
    if mask != want_mask:
        errs.append("event mask 0x%x, want 0x%x" % (mask, want_mask))
    if (escr & 0xF) != 0xC:
        errs.append("ESCR T0_OS/T0_USR must be set and T1 bits clear (low nibble 0x%x)" % (escr & 0xF))
    if escr & 0x1F0:
        errs.append("tagging bits set")
    if ((cccr >> 13) & 7) != spec["cccr"]:
        errs.append("CCCR ESCR select %d, want %d" % ((cccr >> 13) & 7, spec["cccr"]))
    if not cccr & (1 << 12):
        errs.append("CCCR enable clear")
    if cccr & ((1 << 18) | (1 << 19) | (0xF << 20) | (1 << 24) | (1 << 26) | (1 << 27) | (1 << 30)):
        errs.append("CCCR compare/threshold/edge/PMI/cascade bits set (0x%x)" % cccr)
    if errs:
        rep.err("netburst", "%s: %s" % (where, "; ".join(errs)))
    else:
        rep.count("netburst_spec")


def last_write_before(accs, msr, stop_idx):
    v = None
    for a in accs:
        if a.idx >= stop_idx:
            break
        if a.op == "write" and a.msr == msr:
            v = a
    return v


def check_nhm_reset(w, accs, required, rep):
    """The AAK100/AAP53/BD53 reset at the start of a core window: verified write for write against
    NHM_RESET_SEQUENCE (with or without the IA32_PEBS_ENABLE write). Returns the window's accesses after
    it (the measurement's own programming, which the other rules check)."""
    label = w.label()
    writes = [a for a in accs if a.op == "write"]
    looks = (len(writes) >= 2 and (writes[0].msr, writes[0].value) == (IA32_PERF_GLOBAL_CTRL, 0)
             and (writes[1].msr, writes[1].value) in ((IA32_PEBS_ENABLE, 0), NHM_RESET_SEQUENCE[2]))
    if not looks:
        if required:
            rep.err("nhm_reset", "%s: no AAK100/AAP53/BD53 PMU reset before the programming" % label)
        return accs
    want = NHM_RESET_SEQUENCE if writes[1].msr == IA32_PEBS_ENABLE else NHM_RESET_SEQUENCE[:1] + NHM_RESET_SEQUENCE[2:]
    got = accs[:len(want)]
    for i, (m, v) in enumerate(want):
        a = got[i] if i < len(got) else None
        if a is None or a.op != "write" or (a.msr, a.value) != (m, v):
            rep.err("nhm_reset", "%s: reset step %d is %s, Linux intel_pmu_nhm_workaround writes 0x%x = 0x%x"
                    % (label, i, "missing" if a is None else "%s 0x%x = 0x%x" % (a.op, a.msr, a.value), m, v))
            return accs
    if required is False:
        rep.err("nhm_reset", "%s: PMU reset on a model that does not need it" % label)
    rep.count("nhm_reset")
    return accs[len(want):]


def check_window(w, family, ds_recs, allocs, pebs_format, rep, state, nhm_reset=None):
    accs = w.accesses
    label = w.label()
    if w.lbr:
        return check_lbr_window(w, rep)
    if not w.events:
        rep.err("windows", "%s has no events" % label)
        return
    rep.count("windows")
    kinds = {e["kind"] for e in w.events}
    core = bool(kinds & {"gp", "fixed"}) and family == "intel"
    unc = bool(kinds & {"uncore", "uncore_fixed"})
    if core:
        accs = w.prog = check_nhm_reset(w, accs, nhm_reset, rep)
    writes = [a for a in accs if a.op == "write"]

    # Enable point: the write that starts counting (global ctrl; AMD/P4: the CTL/CCCR with EN).
    enable_idx = None
    if core:
        for a in writes:
            if a.msr == IA32_PERF_GLOBAL_CTRL and a.value:
                enable_idx = a.idx
                want = hx(w.rec["global_ctrl"]) if "global_ctrl" in w.rec else None
                if want is not None and a.value != want:
                    rep.err("order", "%s: global enable 0x%x, the measurement uses 0x%x" % (label, a.value, want))
                break
        first_pmu = next((a for a in writes if a.msr != IA32_PERF_GLOBAL_CTRL), None)
        first_gc = next((a for a in writes if a.msr == IA32_PERF_GLOBAL_CTRL), None)
        if first_gc is None or first_gc.value != 0 or (first_pmu and first_pmu.idx < first_gc.idx):
            rep.err("order", "%s: does not start with a global disable (IA32_PERF_GLOBAL_CTRL = 0)" % label)
        else:
            rep.count("order_disable_first")
    if unc:
        uen = next((a for a in writes if a.msr == UNC_GLOBAL_CTRL and a.value), None)
        ufirst = next((a for a in writes if in_set(a.msr, NHM_UNCORE_SET)), None)
        if ufirst is None or ufirst.msr != UNC_GLOBAL_CTRL or ufirst.value != 0:
            rep.err("order", "%s: uncore not globally disabled before programming" % label)
        if uen is None:
            rep.err("order", "%s: uncore never enabled" % label)
        else:
            want = hx(w.rec.get("uncore_global_ctrl", "0x0"))
            if uen.value != want:
                rep.err("order", "%s: uncore enable 0x%x, expected 0x%x" % (label, uen.value, want))
            enable_idx = uen.idx if enable_idx is None else min(enable_idx, uen.idx)

    # Global state replay: reprogramming and counter reads only while disabled.
    gstate = 0
    ustate = 0
    counters = {hx(e["ctr_msr"]) for e in w.events}
    controls = set()
    for e in w.events:
        controls.add(hx(e["ctl_msr"]))
        if e.get("extra_msr"):
            controls.add(hx(e["extra_msr"]))
        if e.get("escr_msr"):
            controls.add(hx(e["escr_msr"]))
    controls |= {IA32_PEBS_ENABLE, IA32_DS_AREA, MSR_PEBS_LD_LAT_THRESHOLD, IA32_FIXED_CTR_CTRL}
    local_en = {}  # AMD/P4: control MSR -> enabled?
    enabled_seen = False
    for a in accs:
        if a.op == "write" and a.msr == IA32_PERF_GLOBAL_CTRL:
            gstate = a.value
            enabled_seen |= bool(a.value)
            continue
        if a.op == "write" and a.msr == UNC_GLOBAL_CTRL:
            ustate = a.value
            enabled_seen |= bool(a.value)
            continue
        if family in ("amd", "p4") and a.op == "write" and a.msr in controls and not (a.msr in P4_ESCRS):
            en_bit = (1 << 22) if family == "amd" else (1 << 12)
            on = bool(a.value & en_bit)
            if on:
                enabled_seen = True
            local_en[a.msr] = on
            continue
        running = bool(gstate) or bool(ustate) or any(local_en.values())
        if a.op == "write" and a.msr in controls and running:
            rep.err("order", "%s: 0x%x reprogrammed while counters are enabled" % (label, a.msr))
        if a.op == "read" and a.msr in counters:
            if running:
                rep.err("order", "%s: counter 0x%x read while counting is enabled" % (label, a.msr))
            elif not enabled_seen:
                rep.err("order", "%s: counter 0x%x read before anything was enabled" % (label, a.msr))
            else:
                rep.count("order_read_after_disable")

    if family in ("amd", "p4"):
        en_bit = (1 << 22) if family == "amd" else (1 << 12)
        for e in w.events:
            ctl = hx(e["ctl_msr"])
            en = next((a for a in writes if a.msr == ctl and a.value & en_bit), None)
            if en is None:
                rep.err("order", "%s: %s never enabled" % (label, e["name"]))
                continue
            enable_idx = en.idx if enable_idx is None else min(enable_idx, en.idx)
    if enable_idx is None:
        rep.err("order", "%s: nothing was ever enabled" % label)
        return

    # Per event: configured and cleared before the enable; encodings against the documents.
    for e in w.events:
        kind = e["kind"]
        ctl, ctr = hx(e["ctl_msr"]), hx(e["ctr_msr"])
        preload = hx(e.get("preload", "0x0"))
        width = e.get("width", 48)
        wctr = last_write_before(accs, ctr, enable_idx)
        if wctr is None:
            rep.err("order", "%s: counter 0x%x of %s not cleared before the enable" % (label, ctr, e["name"]))
        elif wctr.value & ((1 << width) - 1) != preload & ((1 << width) - 1):
            rep.err("order", "%s: counter 0x%x written 0x%x before the enable, declared start 0x%x"
                    % (label, ctr, wctr.value, preload))
        else:
            rep.count("order_cleared_before_enable")
        if kind == "fixed":
            wf = last_write_before(accs, IA32_FIXED_CTR_CTRL, enable_idx)
            if wf is None:
                rep.err("fixed", "%s: IA32_FIXED_CTR_CTRL not programmed before the enable" % label)
                continue
            field = (wf.value >> (4 * e["index"])) & 0xF
            fev, fum, _ = split_name(e["name"])
            want_idx = INTEL_FIXED.get(fev + "".join(":" + u for u in sorted(fum)))
            if field != 0x3:
                rep.err("fixed", "%s: fixed counter %d field 0x%x, want 0x3 (OS+USR, no AnyThr, no PMI; [NHM] "
                        "Tables 8/9)" % (label, e["index"], field))
            elif want_idx is None:
                rep.unchecked.append(e["name"])
            elif want_idx != e["index"]:
                rep.err("fixed", "%s: %s on fixed counter %d; [NHM] 3.1.6 puts it on %d"
                        % (label, e["name"], e["index"], want_idx))
            else:
                rep.count("fixed_spec")
            continue
        if kind == "uncore_fixed":
            wf = last_write_before(accs, UNC_FIXED_CTR_CTRL, enable_idx)
            if wf is None or wf.value != 0x1:
                rep.err("uncore", "%s: MSR_UNCORE_FIXED_CTR_CTRL %s, want 0x1 (EN, no PMI)"
                        % (label, "unwritten" if wf is None else "0x%x" % wf.value))
            elif split_name(e["name"])[0] not in UNCORE_FIXED:
                rep.unchecked.append(e["name"])
            else:
                rep.count("uncore_fixed_spec")
            continue
        wc = last_write_before(accs, ctl, enable_idx + 1)
        if kind in ("amd", "p4"):
            wc = next((a for a in writes if a.msr == ctl and a.idx >= enable_idx), None) or wc
        if wc is None:
            rep.err("order", "%s: %s control 0x%x not programmed" % (label, e["name"], ctl))
            continue
        if kind == "gp":
            check_intel_evtsel(w, e, wc.value, rep)
            if e.get("extra_msr"):
                xm = hx(e["extra_msr"])
                wx = last_write_before(accs, xm, enable_idx)
                if wx is None:
                    rep.err("order", "%s: extra MSR 0x%x of %s not programmed before the enable"
                            % (label, xm, e["name"]))
                elif xm in (MSR_OFFCORE_RSP_0, MSR_OFFCORE_RSP_1):
                    offcore_value_check(w, e, wx.value, rep)
        elif kind == "uncore":
            check_uncore_evtsel(w, e, wc.value, rep)
        elif kind == "amd":
            legacy = AMD_PERF_CTL0 <= ctl <= AMD_PERF_CTL0 + 3 and ctr == ctl + 4
            ext = AMD_EXT_CTL0 <= ctl <= AMD_EXT_CTL0 + 10 and (ctl - AMD_EXT_CTL0) % 2 == 0 and ctr == ctl + 1
            if not legacy and not ext:
                rep.err("amd", "%s: %s uses CTL 0x%x / CTR 0x%x: neither a legacy pair MSRC001_000n/000(n+4) nor an "
                        "extended pair MSRC001_020(2n)/020(2n+1)" % (label, e["name"], ctl, ctr))
            check_amd_ctl(w, e, wc.value, rep)
            if w.rec.get("model") == "amd_fam15h" and ext:
                check_amd_f15h_counter(w, e, wc.value, ctl, rep)
        elif kind == "p4":
            escr_msr = hx(e["escr_msr"])
            we = last_write_before(accs, escr_msr, enable_idx)
            if we is None:
                rep.err("order", "%s: ESCR 0x%x not written before the enable" % (label, escr_msr))
                continue
            if ctl != 0x360 + e["index"] or ctr != 0x300 + e["index"]:
                rep.err("netburst", "%s: CCCR/counter 0x%x/0x%x do not belong to counter %d" % (label, ctl, ctr,
                                                                                                e["index"]))
            check_p4(w, e, escr_msr, we.value, wc.value, rep)

    if w.pebs:
        check_pebs_window(w, enable_idx, ds_recs, allocs, pebs_format, rep)

    # End state: everything this measurement enabled is disabled again.
    final = {}
    for a in writes:
        final[a.msr] = a.value
    must_zero = set()
    if core:
        must_zero.add(IA32_PERF_GLOBAL_CTRL)
    if unc:
        must_zero |= {UNC_GLOBAL_CTRL}
    for e in w.events:
        if e["kind"] == "fixed":
            must_zero.add(IA32_FIXED_CTR_CTRL)
        elif e["kind"] == "uncore_fixed":
            must_zero.add(UNC_FIXED_CTR_CTRL)
        else:
            must_zero.add(hx(e["ctl_msr"]))
        if e.get("extra_msr") and hx(e["extra_msr"]) in (MSR_OFFCORE_RSP_0, MSR_OFFCORE_RSP_1):
            must_zero.add(hx(e["extra_msr"]))
        if e.get("escr_msr"):
            must_zero.add(hx(e["escr_msr"]))
    if w.pebs:
        must_zero.add(IA32_PEBS_ENABLE)
    bad = sorted(m for m in must_zero if final.get(m, 0) != 0)
    if bad:
        rep.err("end_state", "%s ends with %s still set" % (label, ", ".join("0x%x=0x%x" % (m, final[m]) for m in bad)))
    else:
        rep.count("disabled_at_end")
    for m, v in final.items():
        state[m] = v


def check_pebs_drains(w, accs, enable_idx, required, rep):
    """[NHM] 3.1.3: an armed PEBS assist fires even after the global disable. Around every drain (a
    global disable followed by a re-enable) and before the final counter read, IA32_PEBS_ENABLE is 0
    right after the disable; a drain restores the declared value last before the re-enable."""
    label = w.label()
    p = w.pebs
    want = hx(p["pebs_enable"])
    ctr = next(hx(e["ctr_msr"]) for e in w.events if e["index"] == p["counter"] and e["kind"] == "gp")
    after = [a for a in accs if a.idx > enable_idx]
    gcs = [i for i, a in enumerate(after) if a.op == "write" and a.msr == IA32_PERF_GLOBAL_CTRL]
    for k, gi in enumerate(gcs):
        if after[gi].value:
            continue
        nxt = next((a for a in after[gi + 1:] if a.op == "write" or a.msr == ctr), None)
        cleared = nxt is not None and nxt.op == "write" and nxt.msr == IA32_PEBS_ENABLE and nxt.value == 0
        reenable = gcs[k + 1] if k + 1 < len(gcs) and after[gcs[k + 1]].value else None
        what = "drain" if reenable is not None else "final disable"
        if not cleared:
            if required:
                rep.err("pebs", "%s: IA32_PEBS_ENABLE not cleared right after the global disable (%s; [NHM] 3.1.3)"
                        % (label, what))
            continue
        if reenable is not None:
            last = next((a for a in reversed(after[gi + 1:reenable]) if a.op == "write"), None)
            if last is None or last.msr != IA32_PEBS_ENABLE or last.value != want:
                rep.err("pebs", "%s: drain does not restore IA32_PEBS_ENABLE = 0x%x just before the re-enable"
                        % (label, want))
                continue
        rep.count("pebs_off_around_drain")


def check_pebs_window(w, enable_idx, ds_recs, allocs, pebs_format, rep):
    label = w.label()
    p = w.pebs
    c = p["counter"]
    accs = getattr(w, "prog", w.accesses)
    if p.get("period") is not None:
        if p["period"] < PEBS_MIN_PERIOD:
            rep.err("pebs", "%s: PEBS period %d below %d (Linux nhm_limit_period)" % (label, p["period"],
                                                                                     PEBS_MIN_PERIOD))
        else:
            rep.count("pebs_min_period")
    # [NHM] Table 14 / SDM 18.8.1.2 example: PMC0 -> 00000001_00000001H.
    want = (1 << c) | (1 << (32 + c))
    wpe = last_write_before(accs, IA32_PEBS_ENABLE, enable_idx)
    if wpe is None:
        rep.err("pebs", "%s: IA32_PEBS_ENABLE not written before the enable" % label)
    elif wpe.value != want:
        rep.err("pebs", "%s: IA32_PEBS_ENABLE = 0x%x, want PEBS_EN_CTR%d|LL_EN_CTR%d = 0x%x" % (label, wpe.value, c,
                                                                                             c, want))
    else:
        rep.count("pebs_enable")
    wl = last_write_before(accs, MSR_PEBS_LD_LAT_THRESHOLD, enable_idx)
    if wl is None:
        rep.err("pebs", "%s: MSR_PEBS_LD_LAT_THRESHOLD not written" % label)
    elif wl.value != p["ldlat"] or not 3 <= wl.value <= 0xFFFF:
        rep.err("pebs", "%s: MSR_PEBS_LD_LAT_THRESHOLD = 0x%x, want %d within 3..65535 ([NHM] Table 17)"
                % (label, wl.value, p["ldlat"]))
    else:
        rep.count("pebs_ldlat")
    # The DS area in force: the last ds_area "program" record before the window and the last
    # IA32_DS_AREA write before the enable (anywhere in the stream).
    prog = [(i, r) for i, r in ds_recs if i < w.start and r.get("why") == "program"]
    if not prog:
        rep.err("ds_area", "%s: PEBS without a ds_area record" % label)
        return
    ds = prog[-1][1]
    # Kernels that count stray records ("stray" in ds_area) clear IA32_PEBS_ENABLE around every drain.
    check_pebs_drains(w, accs, enable_idx, "stray" in ds, rep)
    check_ds_area(ds, allocs, pebs_format, rep, label, counter=c, period=p.get("period"))
    ctr = next(e for e in w.events if e["index"] == c and e["kind"] == "gp")
    reset = hx(ds["pebs_counter_reset"][c])
    if hx(ctr["preload"]) != reset:
        rep.err("ds_area", "%s: PMC%d preload 0x%x differs from its DS reset 0x%x" % (label, c, hx(ctr["preload"]),
                                                                                     reset))
    state_ds = w.__dict__.get("ds_msr")
    if state_ds is None or state_ds != hx(ds["address"]):
        rep.err("ds_area", "%s: IA32_DS_AREA is %s, the ds_area record is at %s" % (
            label, "unwritten" if state_ds is None else "0x%x" % state_ds, ds["address"]))
    else:
        rep.count("ds_area_pointer")
    for i, r in ds_recs:
        if w.start < i < (w.end or 1 << 60) and r.get("why") == "drain":
            if hx(r["pebs_index"]) != hx(r["pebs_buffer_base"]):
                rep.err("ds_area", "%s: drained DS area index 0x%x is not its base" % (label, hx(r["pebs_index"])))
            else:
                rep.count("ds_area_drain")


def check_ds_area(r, allocs, pebs_format, rep, label, counter=None, period=None):
    base, idx = hx(r["pebs_buffer_base"]), hx(r["pebs_index"])
    mx, th = hx(r["pebs_absolute_maximum"]), hx(r["pebs_interrupt_threshold"])
    addr = hx(r["address"])
    size = PEBS_RECORD_SIZE.get(pebs_format)
    errs = []
    if idx != base:
        errs.append("PEBS index 0x%x != base 0x%x ([NHM] 3.5.3)" % (idx, base))
    if not base <= th <= mx:
        errs.append("threshold 0x%x not within [base 0x%x, maximum 0x%x]" % (th, base, mx))
    if size is None:
        errs.append("unknown PEBS format %r" % pebs_format)
    else:
        if r.get("record_size") != size:
            errs.append("record size %s, format %d records are 0x%x bytes" % (r.get("record_size"), pebs_format, size))
        if mx <= base or (mx - base) % size:
            errs.append("maximum 0x%x is not base + whole records of 0x%x" % (mx, size))
        if (th - base) % size:
            errs.append("threshold not on a record boundary")
    buf_alloc = [a for i, a in allocs if a.get("what") == "pebs_buffer"]
    ds_alloc = [a for i, a in allocs if a.get("what") == "ds_area"]
    if not any(hx(a["base"]) <= base and mx <= hx(a["base"]) + a["bytes"] for a in buf_alloc):
        errs.append("PEBS buffer [0x%x, 0x%x) not inside an allocation the kernel reported" % (base, mx))
    if not any(hx(a["base"]) <= addr and addr + 0xA0 <= hx(a["base"]) + a["bytes"] for a in ds_alloc):
        errs.append("DS area 0x%x not inside an allocation the kernel reported" % addr)
    if hx(r["bts_buffer_base"]) or hx(r["bts_index"]) or hx(r["bts_absolute_maximum"]):
        errs.append("BTS fields set but BTS is not used")
    if counter is not None and period is not None:
        reset = hx(r["pebs_counter_reset"][counter])
        # [NHM] 3.5.3: the full 48-bit value, "negative N" for a sample every N events.
        if reset >= 1 << 48 or (1 << 48) - reset != period:
            errs.append("counter %d reset 0x%x is not 2^48 - %d" % (counter, reset, period))
    if errs:
        rep.err("ds_area", "%s: %s" % (label, "; ".join(errs)))
    else:
        rep.count("ds_area_consistent")


def check_lbr_window(w, rep):
    label = w.label()
    lb = w.lbr
    accs = w.accesses
    rep.count("lbr_windows")
    on = next((a for a in accs if a.op == "write" and a.msr == IA32_DEBUGCTL and a.value & 1), None)
    if on is None:
        rep.err("lbr", "%s: IA32_DEBUGCTL.LBR never set" % label)
        return
    if on.value & ((1 << 6) | (1 << 7)):
        rep.err("lbr", "%s: TR/BTS set together with LBR ([NHM] Table 4)" % label)
    off = next((a for a in accs if a.op == "write" and a.msr == IA32_DEBUGCTL and a.idx > on.idx and not a.value & 1),
               None)
    if off is None:
        rep.err("lbr", "%s: IA32_DEBUGCTL.LBR never cleared" % label)
        return
    if lb.get("select") is not None:
        ws = last_write_before(accs, MSR_LBR_SELECT, on.idx)
        if ws is None or ws.value != hx(lb["select"]) or ws.value >> 9:
            rep.err("lbr", "%s: MSR_LBR_SELECT %s, declared %s (bits 8:0 only, [NHM] Table 19)"
                    % (label, "unwritten" if ws is None else "0x%x" % ws.value, lb["select"]))
    fr, to, tos, depth = hx(lb["from_msr"]), hx(lb["to_msr"]) if lb.get("to_msr") else None, hx(lb["tos_msr"]), \
        lb["depth"]
    lbr_msrs = set(range(fr, fr + depth)) | ({tos}) | (set(range(to, to + depth)) if to else set())
    reads = [a for a in accs if a.op == "read" and a.msr in lbr_msrs]
    if any(a.idx < off.idx for a in reads):
        rep.err("lbr", "%s: LBR stack read while recording" % label)
    if {a.msr for a in reads} != lbr_msrs:
        rep.err("lbr", "%s: read %d of the %d LBR MSRs" % (label, len({a.msr for a in reads}), len(lbr_msrs)))
    else:
        rep.count("lbr_stack_read")
    final_dbg = [a for a in accs if a.op == "write" and a.msr == IA32_DEBUGCTL][-1]
    if final_dbg.value & 1:
        rep.err("end_state", "%s ends with IA32_DEBUGCTL.LBR set" % label)
    else:
        rep.count("disabled_at_end")


def check_errata_claims(pmu, family, rep):
    """Whether every core window must start with the AAK100/AAP53/BD53 reset: from the CPU's
    family_model and this checker's own table when the run names it (the kernel's `errata` must agree),
    else from the run's `errata` claim (True), else unknown (None: verified only where present)."""
    fm = pmu.get("family_model")
    claim = (pmu.get("errata") or {}).get("pmu_reset")
    if family != "intel":
        if claim:
            rep.err("nhm_reset", "errata.pmu_reset on a %s PMU" % family)
        return False if fm else None
    if fm is None:
        return True if claim else None
    fm = fm.upper()
    if fm not in NHM_RESET_MODELS:
        if claim:
            rep.err("nhm_reset", "errata.pmu_reset (%s) claimed for %s, which Linux does not reset" % (claim, fm))
        return False
    erratum = NHM_RESET_MODELS[fm]
    if not claim:
        rep.err("nhm_reset", "%s needs the PMU reset (%s) but the run record does not name it"
                % (fm, erratum or "Linux intel_pmu_nhm_workaround"))
    elif erratum and claim != erratum:
        rep.err("nhm_reset", "%s: the run names erratum %s, the spec update's is %s" % (fm, claim, erratum))
    else:
        rep.count("nhm_reset_model")
    return True


def check_smm_freeze(pmu, accesses, windows, rep):
    """IA32_DEBUGCTL.FREEZE_WHILE_SMM: set (read-modify-write) before any measurement when the run says it
    tried (true, or false with a reason), never when it says "not supported"; once confirmed set, every
    later IA32_DEBUGCTL write (LBR capture) keeps it."""
    if "freeze_while_smm" not in pmu:
        return
    fr = pmu["freeze_while_smm"]
    first_window = min((w.start for w in windows), default=1 << 60)
    dbg = [a for a in accesses if a.msr == IA32_DEBUGCTL]
    sets = [a for a in dbg if a.op == "write" and a.value & DEBUGCTL_FREEZE_WHILE_SMM]
    if isinstance(fr, str):
        if not fr.startswith("not supported"):
            rep.err("smm", "freeze_while_smm is %r: true, false or \"not supported (...)\"" % fr)
        if sets:
            rep.err("smm", "IA32_DEBUGCTL.FREEZE_WHILE_SMM written although the run says %r" % fr)
        return
    if fr is False and not pmu.get("freeze_while_smm_reason"):
        rep.err("smm", "freeze_while_smm false without freeze_while_smm_reason")
    first = sets[0] if sets else None
    if first is None or first.idx > first_window:
        rep.err("smm", "IA32_DEBUGCTL.FREEZE_WHILE_SMM not set before the first measurement")
        return
    if not any(a.op == "read" and a.idx < first.idx for a in dbg):
        rep.err("smm", "IA32_DEBUGCTL written without reading it first (other bits lost)")
    if fr is True:
        for a in dbg:
            if a.op == "write" and a.idx > first.idx and not a.value & DEBUGCTL_FREEZE_WHILE_SMM:
                rep.err("smm", "IA32_DEBUGCTL = 0x%x drops FREEZE_WHILE_SMM" % a.value)
    rep.count("smm_freeze_set")


def smm_restart_applies(pmu, family):
    """RSM sets IA32_PERF_GLOBAL_CTRL's enable bits only where IA32_DEBUGCTL.FREEZE_WHILE_SMM is in use: the runs
    that tried to set it (freeze_while_smm true, or false with the reason it did not stick)."""
    fr = pmu.get("freeze_while_smm")
    return family == "intel" and isinstance(fr, bool)


def check_smm_restart(w, pmu, family, rep):
    """SDM Vol. 3B "Freezing counters on SMI": with FREEZE_WHILE_SMM an SMI clears IA32_PERF_GLOBAL_CTRL and RSM
    sets every enable bit of it to 1. Simulate that SMI at every counter read that follows the window's first
    global disable after counting ran (the stop's reads, a PEBS drain's counter read): IA32_PERF_GLOBAL_CTRL all
    ones, so a counter counts iff its PERFEVTSELx EN bit or its IA32_FIXED_CTR_CTRL field is set at that moment.
    Any such counter would count again between the stop and the read (or overflow with PEBS off during a drain,
    with no reload): reported. The window's own declarations are not consulted."""
    if not smm_restart_applies(pmu, family):
        return
    core = [e for e in w.events if e["kind"] in ("gp", "fixed")]
    if not core:
        return
    ctr_msrs = set()
    for e in core:
        ctr_msrs.add(hx(e["ctr_msr"]))
        if e["kind"] == "gp":
            ctr_msrs.add(IA32_A_PMC0 + e["index"])
    evtsel, fixed_ctrl, glob, ran = {}, 0, 0, False
    checked, bad = 0, set()
    for a in w.accesses:
        if a.op == "write":
            if IA32_PERFEVTSEL0 <= a.msr < IA32_PERFEVTSEL0 + 8:
                evtsel[a.msr] = a.value
            elif a.msr == IA32_FIXED_CTR_CTRL:
                fixed_ctrl = a.value
            elif a.msr == IA32_PERF_GLOBAL_CTRL:
                glob = a.value
                ran = ran or bool(a.value)
            continue
        if not (ran and glob == 0 and a.msr in ctr_msrs):
            continue
        checked += 1
        for e in core:
            if e["kind"] == "gp":
                live = evtsel.get(hx(e["ctl_msr"]), 0) & (1 << 22)
            else:
                live = (fixed_ctrl >> (4 * e["index"])) & 0x3
            if live and e["counter"] not in bad:
                bad.add(e["counter"])
                rep.err("smm", "%s: %s (%s) still enabled locally when counter 0x%x is read after the global disable: "
                        "an SMI there restarts it, because RSM sets IA32_PERF_GLOBAL_CTRL (SDM 'Freezing counters on "
                        "SMI'); clear PERFEVTSELx.EN / the IA32_FIXED_CTR_CTRL field at the stop"
                        % (w.label(), e["counter"], e["name"], a.msr))
    if checked and not bad:
        rep.count("smm_restart_safe")


# ---- uncore, northbridge, self-test and document values ----------------------------------------
# Rules in this section take their expected values from the documents (the register layouts), not from
# what the kernel declared in pmu_measure: the declared values are compared above as well, so a kernel
# that declares and writes the same wrong value is caught here.

def doc_global_enable(events):
    """[NHM] Table 5 IA32_PERF_GLOBAL_CTRL: EN_PCx is bit x, EN_FCx bit 32+x."""
    v = 0
    for e in events:
        if e["kind"] == "gp":
            v |= 1 << e["index"]
        elif e["kind"] == "fixed":
            v |= 1 << (32 + e["index"])
    return v


def doc_uncore_enable(events):
    """SDM 18.8.2 MSR_UNCORE_PERF_GLOBAL_CTRL: EN_PCx bit x, EN_FC0 bit 32; no PMI routing (51:48), no
    PMI_FRZ (63): no PMI is armed."""
    v = 0
    for e in events:
        if e["kind"] == "uncore":
            v |= 1 << e["index"]
        elif e["kind"] == "uncore_fixed":
            v |= 1 << 32
    return v


def doc_ovf_clear(pmu):
    """[NHM] Table 7 IA32_PERF_GLOBAL_OVF_CTRL: CLR_OVF_PCx bit x, CLR_OVF_FCx bit 32+x, CLR_UNC_Ovf 61
    (perfmon v3), CLR_PEBS_Ovf 62, CLR_CondChg 63. None when the run record does not say how many counters."""
    if not all(k in pmu for k in ("gp_counters", "fixed_counters", "version")):
        return None
    v = (1 << pmu.get("gp_counters", 0)) - 1
    v |= ((1 << pmu.get("fixed_counters", 0)) - 1) << 32
    if pmu.get("version", 0) >= 3:
        v |= 1 << 61
    return v | (1 << 62) | (1 << 63)


# SDM 18.8.2 MSR_UNCORE_PERF_GLOBAL_OVF_CTRL: CLR_OVF_PC0-7 (7:0), CLR_OVF_FC0 (32), CLR_OVF_PMI (61), CLR_CHG (63).
DOC_UNCORE_OVF_CLEAR = 0xFF | (1 << 32) | (1 << 61) | (1 << 63)
IA32_A_PMC0 = 0x4C1  # full-width writes (IA32_PERF_CAPABILITIES[13]); IA32_PMCx writes sign-extend bit 31


def sign_extend_write(value, width):
    """[NHM] 3.3.1: a write to IA32_PMCx sets bits 31:0 and sign-extends bit 31 into the upper bits."""
    lo = value & 0xFFFFFFFF
    if lo & 0x80000000:
        return lo | (((1 << width) - 1) & ~0xFFFFFFFF)
    return lo


def doc_counter_start(w, e, ds):
    """What a counter must start at: a PEBS counter at its DS reset value ([NHM] 3.5.3: the reset value is
    reloaded after each record, so the first sample needs the same start); the overflow self-test's
    counter near the wrap (returns None: checked separately); every other counter at 0."""
    if w.pebs and e["kind"] == "gp" and e["index"] == w.pebs["counter"] and ds is not None:
        return hx(ds["pebs_counter_reset"][e["index"]])
    if w.what == "selftest:overflow":
        return None
    return 0


def check_doc_values(w, pmu, ds_recs, rep):
    accs = getattr(w, "prog", None) or w.accesses
    writes = [a for a in accs if a.op == "write"]
    label = w.label()
    if w.lbr:
        sel = next((a for a in writes if a.msr == MSR_LBR_SELECT), None)
        if sel is not None:
            # [NHM] Table 19: nine suppress bits; CPL_EQ_0 (0) and JCC (2) set would drop the known loop's
            # ring-0 conditional jump from the capture.
            if sel.value >> 9 or sel.value & 0x5:
                rep.err("lbr", "%s: MSR_LBR_SELECT 0x%x: bits above 8 or CPL_EQ_0/JCC set ([NHM] Table 19), the "
                        "known loop's ring-0 jnz would not be captured" % (label, sel.value))
            else:
                rep.count("lbr_select_doc")
        return
    kinds = {e["kind"] for e in w.events}
    core_en = next((a for a in writes if a.msr == IA32_PERF_GLOBAL_CTRL and a.value), None)
    if kinds & {"gp", "fixed"} and core_en is not None:
        want = doc_global_enable(w.events)
        if core_en.value != want:
            rep.err("doc", "%s: IA32_PERF_GLOBAL_CTRL enable 0x%x, [NHM] Table 5 for its counters is 0x%x"
                    % (label, core_en.value, want))
        else:
            rep.count("global_enable_doc")
    unc_en = next((a for a in writes if a.msr == UNC_GLOBAL_CTRL and a.value), None)
    if kinds & {"uncore", "uncore_fixed"} and unc_en is not None:
        want = doc_uncore_enable(w.events)
        if unc_en.value != want:
            rep.err("doc", "%s: MSR_UNCORE_PERF_GLOBAL_CTRL enable 0x%x, SDM 18.8.2 for its counters is 0x%x"
                    % (label, unc_en.value, want))
        else:
            rep.count("uncore_enable_doc")
    for a in writes:
        if a.msr == IA32_PERF_GLOBAL_OVF_CTRL:
            want = doc_ovf_clear(pmu)
            if want is None:
                continue
            if a.value != want:
                rep.err("doc", "%s: IA32_PERF_GLOBAL_OVF_CTRL = 0x%x, [NHM] Table 7 clears this PMU's status with 0x%x"
                        % (label, a.value, want))
            else:
                rep.count("ovf_clear_doc")
        elif a.msr == UNC_GLOBAL_OVF_CTRL:
            if a.value != DOC_UNCORE_OVF_CLEAR:
                rep.err("doc", "%s: MSR_UNCORE_PERF_GLOBAL_OVF_CTRL = 0x%x, SDM 18.8.2 clear-all is 0x%x"
                        % (label, a.value, DOC_UNCORE_OVF_CLEAR))
            else:
                rep.count("ovf_clear_doc")
    # Counter start values.
    en_idx = min([a.idx for a in (core_en, unc_en) if a is not None] or
                 [a.idx for a in writes if a.value & (1 << 22) and FAMILY.get(pmu.get("model")) == "amd"] or [None])
    if en_idx is None:
        return
    prog = [(i, r) for i, r in ds_recs if i < w.start and r.get("why") == "program"]
    ds = prog[-1][1] if prog else None
    for e in w.events:
        width = e.get("width", 48)
        wctr = None
        for a in writes:
            if a.idx >= en_idx:
                break
            if a.msr == hx(e["ctr_msr"]) or (e["kind"] == "gp" and a.msr == IA32_A_PMC0 + e["index"]):
                wctr = a
        if wctr is None:
            continue  # reported by the order rules
        full = wctr.msr >= IA32_A_PMC0 and e["kind"] == "gp"
        got = wctr.value & ((1 << width) - 1) if full or e["kind"] != "gp" else sign_extend_write(wctr.value, width)
        want = doc_counter_start(w, e, ds)
        if want is None:
            # the overflow check: a start near the wrap that a 32-bit write can give ([NHM] 3.3.1)
            d = (1 << width) - got
            if not 0 < d <= (1 << 31) or got != hx(e.get("preload", "0x0")) & ((1 << width) - 1):
                rep.err("doc", "%s: %s starts at 0x%x: not within 2^31 below the wrap, or not its declared preload "
                        "after [NHM] 3.3.1's sign extension" % (label, e["counter"], got))
            else:
                rep.count("counter_start_doc")
        elif got != want & ((1 << width) - 1):
            rep.err("doc", "%s: %s starts at 0x%x (as the counter sees the write), expected 0x%x (%s)"
                    % (label, e["counter"], got, want, "the DS counter reset, [NHM] 3.5.3" if want else "cleared"))
        else:
            rep.count("counter_start_doc")
    if w.pebs:
        ev = next((e for e in w.events if e["kind"] == "gp" and e["index"] == w.pebs["counter"]), None)
        mods = split_name(ev["name"])[2] if ev else {}
        want = int(mods["ldlat"], 0) if "ldlat" in mods else 3  # [NHM] Table 17: 3 is the minimum threshold
        wl = last_write_before(accs, MSR_PEBS_LD_LAT_THRESHOLD, en_idx)
        if wl is not None and wl.value != want:
            rep.err("doc", "%s: MSR_PEBS_LD_LAT_THRESHOLD = %d, want %d (the event's ldlat=, else [NHM] Table 17's "
                    "minimum 3)" % (label, wl.value, want))
        elif wl is not None:
            rep.count("pebs_ldlat_doc")
        if ds is not None:
            period = (1 << 48) - hx(ds["pebs_counter_reset"][w.pebs["counter"]])
            # [NHM] 3.3.1: a preload written through IA32_PMCx must have bits 47:31 set: period <= 2^31.
            if not 1 <= period <= (1 << 31):
                rep.err("doc", "%s: PEBS period %d from the DS reset is outside 1..2^31 ([NHM] 3.3.1/3.5.3)"
                        % (label, period))
            else:
                rep.count("pebs_period_doc")


def check_amd_nb(w, rep):
    """Family 15h northbridge counters: NB_PERF_CTLn at MSRC001_0240 + 2n, its counter next to it; event and
    unit mask per [AMD] 4.2.2; no USR/OS, Host/Guest, INT, CntMask, Inv, Edge (Linux AMD64_RAW_EVENT_MASK_NB:
    the northbridge counts for the whole node); enabled by its EN bit."""
    for e in w.events:
        if e["kind"] != "amd_nb":
            continue
        ctl, ctr, n = hx(e["ctl_msr"]), hx(e["ctr_msr"]), e["index"]
        where = "%s %s on %s" % (w.label(), e["name"], e["counter"])
        if ctl != AMD_NB_CTL0 + 2 * n or ctr != ctl + 1 or not 0 <= n < 4:
            rep.err("amd_nb", "%s: CTL 0x%x / CTR 0x%x is not NB_PERF_CTL%d/CTR%d (MSRC001_024%d/%d)"
                    % (where, ctl, ctr, n, n, 2 * n, 2 * n + 1))
        vals = [a.value for a in w.accesses if a.op == "write" and a.msr == ctl and a.value]
        if not vals:
            rep.err("amd_nb", "%s: never programmed" % where)
            continue
        en = [v for v in vals if v & (1 << 22)]
        if not en:
            rep.err("amd_nb", "%s: EN never set" % where)
        v = en[0] if en else vals[-1]
        event = (v & 0xFF) | (((v >> 32) & 0xF) << 8)
        umask = (v >> 8) & 0xFF
        bad = v & ((3 << 16) | (1 << 18) | (1 << 20) | (1 << 23) | (0xFF << 24) | (3 << 40))
        if bad:
            rep.err("amd_nb", "%s: bits 0x%x set (USR/OS/Edge/INT/Inv/CntMask/Host/Guest)" % (where, bad))
        key, exp, _ = table_lookup(AMD_NB, e["name"])
        if exp is None:
            rep.unchecked.append(e["name"])
        elif (event, umask) != exp[:2]:
            rep.err("amd_nb", "%s: %03xH/%02xH, [AMD] %s says %03xH/%02xH" % (where, event, umask, exp[2], exp[0], exp[1]))
        else:
            rep.count("amd_nb_spec")


def smp_cpus(run):
    r = next((r for r in run.records if r.get("type") == "smp"), None)
    return {c["index"]: c for c in (r or {}).get("cpus") or [] if "index" in c}


def check_window_cpu(w, cpus, rep):
    """Counters are per logical CPU and the uncore per package: a measurement's accesses come from the CPU it
    names ("cpu"), on the socket it names ("socket"), else from the BSP."""
    want = w.rec.get("cpu", 0)
    bad = sorted({a.cpu for a in w.accesses if a.cpu != want})
    if bad:
        rep.err("socket", "%s: MSR accesses from CPU %s, the measurement runs on CPU %d" % (w.label(), bad, want))
        return
    if "socket" in w.rec:
        c = cpus.get(want)
        if c is None or c.get("package") != w.rec["socket"]:
            rep.err("socket", "%s: socket %s read from CPU %d, which is on package %s" % (
                w.label(), w.rec["socket"], want, c.get("package") if c else "?"))
        else:
            rep.count("socket_read_locally")


def check_uncore_bandwidth(run, cpus, rep):
    """Item 6: every socket is read from one of its own CPUs with the stream on that CPU's node, or named as not
    read; the per-socket records agree with the summary."""
    for r in run.records:
        if r.get("type") != "uncore_bandwidth":
            continue
        read = {(s["socket"], s["node"]): s for s in r.get("sockets") or []}
        named = {s.get("socket") for s in r.get("sockets_not_read") or []}
        for s in read.values():
            c = cpus.get(s["cpu"])
            if c is None or c.get("package") != s["socket"]:
                rep.err("socket", "uncore_bandwidth: socket %s read from CPU %s of another package" % (s["socket"],
                                                                                                    s["cpu"]))
            elif c.get("node") != s["node"]:
                rep.err("socket", "uncore_bandwidth: socket %s's stream on node %s, its CPU %s is on node %s"
                        % (s["socket"], s["node"], s["cpu"], c.get("node")))
            else:
                rep.count("socket_stream_local")
        for n in r.get("sockets_not_read") or []:
            if not n.get("reason"):
                rep.err("socket", "uncore_bandwidth: socket %s not read and no reason given" % n.get("socket"))
        packages = {c.get("package") for c in cpus.values()}
        missing = sorted(p for p in packages if p not in {k[0] for k in read} and p not in named)
        if missing:
            rep.err("socket", "uncore_bandwidth: package(s) %s neither read nor named as not read" % missing)
        else:
            rep.count("sockets_accounted")
        if r.get("sockets_read") != len(read):
            rep.err("socket", "uncore_bandwidth: sockets_read %s but %d sockets listed" % (r.get("sockets_read"),
                                                                                        len(read)))


# The self-test's windows (pmu/pmu_selftest.c): which check programs what, from the documents.
PER_COUNTER_FAMILIES = {"intel": "pmc", "amd": "ctr"}


def check_selftest_windows(run, windows, pmu, family, rep):
    done = [w for w in windows if w.end is not None]
    st = next((r for r in run.records if r.get("type") == "pmu_selftest"), None)
    names = {c["name"] for c in (st or {}).get("checks") or []}
    # Per-counter checks: the event sits on the counter the check names, one event per window.
    seen = set()
    for w in done:
        if w.what != "selftest:counter":
            continue
        lab = w.rec.get("label") or ""
        ctr = lab.split("_", 1)[1] if "_" in lab else ""
        if len(w.events) != 1 or w.events[0]["counter"] != ctr:
            rep.err("selftest", "%s: check %s must program exactly its counter %s, got %s"
                    % (w.label(), lab, ctr, [e["counter"] for e in w.events]))
            continue
        seen.add(lab)
        ev, um, _ = split_name(w.events[0]["name"])
        if lab.startswith("branches_") and family == "intel" and ev == "BR_INST_RETIRED" and not um:
            rep.err("selftest", "%s: the per-counter branch check needs a unit-masked event ([PAG] Table 6)"
                    % w.label())
    prefix = PER_COUNTER_FAMILIES.get(family)
    if prefix and any(n.startswith("branches_") for n in names):
        want = {"%s_%s%d" % (k, prefix, i) for k in ("branches", "instructions")
                for i in range(pmu.get("gp_counters", 0))}
        missing = sorted(want - seen)
        if missing:
            rep.err("selftest", "general counters not exercised by the self-test: %s" % ", ".join(missing))
        else:
            rep.count("selftest_every_counter")
    # Off-core: the value and its byte swap ([NHM] Table 12: request type 7:0, response type 15:8).
    off = {w.rec.get("label"): w for w in done if w.what == "selftest:offcore"}
    if off:
        vals = {}
        for lab, w in off.items():
            x = [a.value for a in w.accesses if a.op == "write" and a.msr in (MSR_OFFCORE_RSP_0, MSR_OFFCORE_RSP_1)
                 and a.value]
            vals[lab] = x[0] if x else None
        v, sw = vals.get("value"), vals.get("byte_swapped")
        if v is None or sw is None or sw != (((v & 0xFF) << 8) | (v >> 8)) or v == sw:
            rep.err("selftest", "offcore check: value %s and control %s are not a value and its byte swap"
                    % (hex(v) if v is not None else None, hex(sw) if sw is not None else None))
        elif not (v & 0xFF and v >> 8):
            rep.err("selftest", "offcore check: 0x%x lacks a request or a response bit" % v)
        else:
            rep.count("selftest_offcore_swap")
        # The value: demand data reads answered by the local DRAM, in the part's own response bit (the chase is on
        # the CPU's node): Table 12's LOCAL_DRAM, Westmere 06_25's LOCAL_DRAM, 06_2C's LOCAL_DRAM_AND_REMOTE_CACHE_HIT.
        w0 = off.get("value")
        table = (w0.events[0].get("table") if w0 is not None and w0.events else None) or ""
        # Per part as offcore_response_tables: the `wsm` row's 06_25/06_2C tables; 06_2F (wsm_ex) and Nehalem Table 12.
        wsm = w0 is not None and w0.rec.get("model") == "wsm" and table in OFFCORE_RESPONSE_WSM
        bits = OFFCORE_RESPONSE_WSM[table][0] if wsm else OFFCORE_RESPONSE
        table = table if wsm else "Table 12"
        local = bits.get("LOCAL_DRAM_AND_REMOTE_CACHE_HIT", bits.get("LOCAL_DRAM"))
        want = (1 << OFFCORE_REQUEST["DMND_DATA_RD"]) | (1 << local)
        if v is not None and v != want:
            rep.err("selftest", "offcore check: value 0x%x, the demand-data-read / local-DRAM value is 0x%x (%s; "
                    "Westmere per part, Intel's event files)" % (v, want, table))
        elif v is not None:
            rep.count("selftest_offcore_local_dram")
    # CMASK/INV: the same event with CMASK 1, INV 0 and 1 ([PAG]: their sum is the core cycles), and the cycles.
    for w in done:
        if w.what != "selftest:cmask_inv":
            continue
        ctl = {}
        for e in w.events:
            v = [a.value for a in w.accesses if a.op == "write" and a.msr == hx(e["ctl_msr"]) and a.value]
            if v and e["kind"] in ("gp", "amd"):
                ctl[e["name"]] = v[-1]
        pair = [v for v in ctl.values() if (v >> 24) & 0xFF == 1]
        if len(pair) != 2 or (pair[0] ^ pair[1]) & ~((1 << 23) | (1 << 22)) or not (pair[0] ^ pair[1]) & (1 << 23):
            rep.err("selftest", "%s: not one event with CMASK=1 twice, INV clear and set" % w.label())
        else:
            rep.count("selftest_cmask_pair")
    # Uncore stream: every uncore general counter ([PAG]: 8), one event each, on the counter the check names.
    unc = [w for w in done if w.what == "selftest:uncore_stream"]
    if unc:
        ok = True
        for w in unc:
            lab = (w.rec.get("label") or "").replace("uncore_stream_", "")
            if len(w.events) != 1 or w.events[0]["counter"] != lab:
                rep.err("selftest", "%s: uncore check %s programs %s" % (w.label(), lab,
                                                                        [e["counter"] for e in w.events]))
                ok = False
        n = 8 if unc[0].events and unc[0].events[0]["kind"] == "uncore" else 4
        if len(unc) != n:
            rep.err("selftest", "%d uncore stream checks, the uncore has %d general counters" % (len(unc), n))
        elif ok:
            rep.count("selftest_uncore_counters")


def check_run(run, model=None):
    """Check a parsed run (pmb.parse.Run). model: override the PMU model row (default: run.pmu)."""
    rep = Report()
    pmu = (run.run or {}).get("pmu") or {}
    model = model or pmu.get("model")
    family = FAMILY.get(model, "intel")
    pebs_format = pmu.get("pebs_format")
    accesses, windows, ds_recs, allocs = collect(run, rep)
    rep.count("msr_trace", len(accesses))
    if model:
        check_gating(model, accesses, rep)
        if model not in UNCORE_MODELS:
            for a in accesses:
                if in_set(a.msr, [_rng(0x391, 0x396)]) and family == "intel":
                    rep.err("gating", "uncore MSR 0x%x accessed on %s (0x391/0x392 are other registers on "
                            "perfmon v4+)" % (a.msr, model))
    # IA32_DS_AREA value in force for each window (writes can be before the window).
    ds_msr = None
    wi = 0
    for a in accesses:
        while wi < len(windows) and windows[wi].start < a.idx:
            windows[wi].ds_msr = ds_msr
            wi += 1
        if a.op == "write" and a.msr == IA32_DS_AREA:
            ds_msr = a.value
    while wi < len(windows):
        windows[wi].ds_msr = ds_msr
        wi += 1
    for i, r in ds_recs:
        if r.get("why") == "program":
            check_ds_area(r, allocs, pebs_format, rep, "ds_area record")
    nhm_reset = check_errata_claims(pmu, family, rep)
    check_smm_freeze(pmu, accesses, windows, rep)
    state = {}
    cpus = smp_cpus(run)
    for w in windows:
        if w.end is None:
            continue
        check_window(w, family, ds_recs, allocs, pebs_format, rep, state, nhm_reset)
        check_smm_restart(w, pmu, family, rep)
        check_doc_values(w, pmu, ds_recs, rep)
        check_amd_nb(w, rep)
        check_window_cpu(w, cpus, rep)
    check_selftest_windows(run, windows, pmu, family, rep)
    check_uncore_bandwidth(run, cpus, rep)
    # Writes outside windows: a PMU control written outside a measurement is unexplained.
    inside = {a.idx for w in windows for a in w.accesses}
    for a in accesses:
        if a.op == "write" and a.idx not in inside and in_set(a.msr, PMU_UNIVERSE) and a.msr != IA32_DS_AREA:
            rep.err("windows", "write of PMU MSR 0x%x = 0x%x outside any measurement" % (a.msr, a.value))
    rep.unchecked = sorted(set(rep.unchecked))
    return rep


def pmu_writes(run):
    """PMU-MSR writes in a run (any model): a run that must not program counters has none."""
    n = 0
    for r in run.records:
        if r.get("type") == "msr_trace" and r.get("op") == "write" and in_set(hx(r["msr"]), PMU_UNIVERSE):
            n += 1
    return n


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("log", help="serial log or records.jsonl of a dry run (pmu_assume=... trace_msr=1 bench=pmu)")
    ap.add_argument("--model", help="PMU model row (default: the run record's pmu.model)")
    ap.add_argument("--json", action="store_true", help="print the report as JSON")
    a = ap.parse_args(argv)
    try:
        with open(a.log, "rb") as f:
            run = parse_log(f.read())
    except (OSError, LogError) as e:
        print("check_msr_trace: %s" % (getattr(e, "reason", None) or e), file=sys.stderr)
        return 2
    rep = check_run(run, a.model)
    if not rep.counts.get("msr_trace"):
        rep.err("trace", "no msr_trace records (run with trace_msr=1)")
    if a.json:
        print(json.dumps(rep.as_dict(), indent=1))
    else:
        for e in rep.errors:
            print("ERROR " + e)
        for n in rep.notes:
            print("note: " + n)
        if rep.unchecked:
            print("note: no document expectation for: " + ", ".join(rep.unchecked))
        print(rep.summary())
    return 0 if rep.ok else 1


if __name__ == "__main__":
    sys.exit(main())
