"""scripts/check_msr_trace.py: the dry-run MSR trace checker, on synthetic logs built here.

Each test builds a log the way the kernel writes one (run record, pmu_measure windows, msr_trace
records, ds_area / pmu_alloc records, CRC'd end record), checks that a correct sequence passes, then
breaks one rule and checks that exactly that rule is reported. One test replaces an expectation with
a wrong one and shows a correct trace then fails: the checker's tables have teeth.
"""
import os
import subprocess
import sys
import zlib

import pytest

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, os.path.join(ROOT, "scripts"))

import check_msr_trace as chk  # noqa: E402
from pmb.parse import parse_log  # noqa: E402

SCRIPT = os.path.join(ROOT, "scripts", "check_msr_trace.py")


def hx(v):
    return "0x%x" % v


class Log:
    """Builds a dry-run log record by record, with the kernel's sequencing."""

    def __init__(self, model="nhm", pebs_format=1):
        self.recs = [{"type": "run", "version": "test", "pmu": {"assumed": model, "model": model, "status": "assumed",
                                                               "pebs_format": pebs_format}}]
        self.seq = 0
        self.mid = 0

    def trace(self, op, msr, value=0, ok=True):
        self.recs.append({"type": "msr_trace", "seq": self.seq, "cpu": 0, "op": op, "msr": hx(msr),
                          "value": hx(value), "safe": False, "ok": ok})
        self.seq += 1

    def w(self, msr, value):
        self.trace("write", msr, value)

    def r(self, msr, value=0):
        self.trace("read", msr, value)

    def measure(self, what, events, **extra):
        self.mid += 1
        rec = {"type": "pmu_measure", "id": self.mid, "what": what, "events": events}
        rec.update(extra)
        self.recs.append(rec)
        return self.mid

    def end(self, mid=None):
        self.recs.append({"type": "pmu_measure_end", "id": mid or self.mid})

    def add(self, rec):
        self.recs.append(rec)

    def text(self):
        lines = [__import__("json").dumps(r, separators=(",", ":")) for r in self.recs]
        crc = 0
        for line in lines:
            crc = zlib.crc32(line.encode() + b"\n", crc)
        end = '{"type":"end","status":"ok","records":%d,"crc32":"%08x"}' % (len(lines), crc)
        return "\n".join(lines + [end]) + "\n"

    def check(self, model=None):
        return chk.check_run(parse_log(self.text()), model)


def gp(name, idx, ctl, extra_msr=None, extra=None, preload=0, width=48):
    e = {"name": name, "table": "nhm", "kind": "gp", "counter": "pmc%d" % idx, "index": idx, "width": width,
         "ctl_msr": hx(0x186 + idx), "ctr_msr": hx(0xC1 + idx), "ctl": hx(ctl), "extra_msr": None,
         "escr_msr": None, "preload": hx(preload)}
    if extra_msr:
        e["extra_msr"] = hx(extra_msr)
        e["extra"] = hx(extra)
    return e


def fixed(name, idx):
    return {"name": name, "table": "nhm", "kind": "fixed", "counter": "fixed%d" % idx, "index": idx, "width": 48,
            "ctl_msr": hx(0x38D), "ctr_msr": hx(0x309 + idx), "ctl": "0x3", "extra_msr": None, "escr_msr": None,
            "preload": "0x0"}


EN_USR_OS = 0x430000  # EN | OS | USR


def intel_counting(log, gps, fixeds=(), order_ok=True, read_while_on=False, leave_on=None, first_disable=True,
                   global_value=None):
    """One Intel counting window the way pmu/counting.c programs it."""
    events = [gp(n, i, c, xm, xv) for (n, i, c, xm, xv) in gps] + [fixed(n, j) for (n, j) in fixeds]
    mask = sum(1 << i for (_, i, _, _, _) in gps) | sum(1 << (32 + j) for (_, j) in fixeds)
    mid = log.measure("counting", events, global_ctrl=hx(mask))
    if first_disable:
        log.w(0x38F, 0)
    if not order_ok:
        log.w(0x38F, mask)  # enable before anything is programmed
    for (n, i, c, xm, xv) in gps:
        if xm:
            log.w(xm, xv)
        log.w(0x186 + i, c)
        log.w(0xC1 + i, 0)
    if fixeds:
        for (_, j) in fixeds:
            log.w(0x309 + j, 0)
        log.w(0x38D, sum(0x3 << (4 * j) for (_, j) in fixeds))
    log.w(0x390, 0xE00000070000000F)
    log.w(0x38F, mask if global_value is None else global_value)
    if read_while_on:
        log.r(0xC1)
    log.w(0x38F, 0)
    # the local enables too (an SMI's RSM sets IA32_PERF_GLOBAL_CTRL: test_check_msr_trace_smm.py)
    for (n, i, c, xm, xv) in gps:
        log.w(0x186 + i, c & ~(1 << 22))
    if fixeds:
        log.w(0x38D, 0)
    log.r(0x38E)
    for (n, i, c, xm, xv) in gps:
        log.r(0xC1 + i)
    for (_, j) in fixeds:
        log.r(0x309 + j)
    for (n, i, c, xm, xv) in gps:
        if leave_on != i:
            log.w(0x186 + i, 0)
        if xm in (0x1A6, 0x1A7):
            log.w(xm, 0)
    if fixeds:
        log.w(0x38D, 0)
    log.w(0x390, 0xE00000070000000F)
    log.end(mid)


GOOD_GPS = [("MEM_LOAD_RETIRED:L1D_HIT", 0, EN_USR_OS | 0x01CB, None, None),
            ("UOPS_RETIRED:STALL_CYCLES", 1, EN_USR_OS | (1 << 23) | (1 << 24) | 0x01C2, None, None),
            ("MEM_INST_RETIRED:LOADS", 2, EN_USR_OS | 0x010B, None, None)]
GOOD_FIXED = [("INSTRUCTION_RETIRED", 0), ("UNHALTED_CORE_CYCLES", 1)]


def errors_of(rep, check):
    return [e for e in rep.errors if e.startswith(check + ":")]


# ---- Intel counting ---------------------------------------------------------------------------

def test_good_intel_counting_passes():
    log = Log()
    intel_counting(log, GOOD_GPS, GOOD_FIXED)
    rep = log.check()
    assert rep.ok, rep.errors
    assert rep.counts["evtsel_spec"] == 3
    assert rep.counts["fixed_spec"] == 2
    assert rep.counts["disabled_at_end"] == 1
    assert rep.counts["order_read_after_disable"] == 5


def test_deliberately_wrong_expectation_fails(monkeypatch):
    """The checker compares against its own table: a wrong entry makes a correct trace fail."""
    log = Log()
    intel_counting(log, GOOD_GPS, GOOD_FIXED)
    assert log.check().ok
    bad = dict(chk.INTEL_CORE)
    bad["MEM_LOAD_RETIRED:L1D_HIT"] = (0xCB, 0x02, 0, 0, 0, "wrong on purpose")
    monkeypatch.setattr(chk, "INTEL_CORE", bad)
    rep = log.check()
    assert not rep.ok
    assert any("MEM_LOAD_RETIRED:L1D_HIT" in e and "umask 01H" in e for e in errors_of(rep, "evtsel")), rep.errors


def test_wrong_umask_in_trace_fails():
    gps = [("MEM_LOAD_RETIRED:L1D_HIT", 0, EN_USR_OS | 0x02CB, None, None)]
    log = Log()
    intel_counting(log, gps)
    rep = log.check()
    assert errors_of(rep, "evtsel") and "MEM_LOAD_RETIRED:L1D_HIT" in rep.errors[0]


def test_missing_cmask_inv_fails():
    gps = [("UOPS_RETIRED:STALL_CYCLES", 0, EN_USR_OS | 0x01C2, None, None)]  # Table 1: C=1, I=1
    log = Log()
    intel_counting(log, gps)
    assert errors_of(log.check(), "evtsel")


def test_int_bit_and_reserved_bits_fail():
    log = Log()
    intel_counting(log, [("MEM_INST_RETIRED:LOADS", 0, EN_USR_OS | (1 << 20) | 0x010B, None, None)])
    assert any("INT" in e for e in errors_of(log.check(), "evtsel"))
    log = Log()
    intel_counting(log, [("MEM_INST_RETIRED:LOADS", 0, EN_USR_OS | (0x20 << 24) | 0x010B, None, None)])
    assert any("31:29" in e for e in errors_of(log.check(), "evtsel"))


def test_enable_before_configure_fails():
    log = Log()
    intel_counting(log, GOOD_GPS, order_ok=False)
    rep = log.check()
    assert any("reprogrammed while counters are enabled" in e for e in errors_of(rep, "order")), rep.errors


def test_read_while_enabled_fails():
    log = Log()
    intel_counting(log, GOOD_GPS, read_while_on=True)
    assert any("read while counting is enabled" in e for e in errors_of(log.check(), "order"))


def test_no_initial_global_disable_fails():
    log = Log()
    intel_counting(log, GOOD_GPS, first_disable=False)
    assert any("global disable" in e for e in errors_of(log.check(), "order"))


def test_global_enable_mask_must_match_counters():
    log = Log()
    intel_counting(log, GOOD_GPS, global_value=0xF)  # enables PMC3, which nothing programmed
    assert any("global enable" in e for e in errors_of(log.check(), "order"))


def test_left_enabled_at_end_fails():
    log = Log()
    intel_counting(log, GOOD_GPS, leave_on=1)
    assert any("0x187" in e for e in errors_of(log.check(), "end_state"))


def test_fixed_counter_on_wrong_counter_fails():
    log = Log()
    intel_counting(log, [], [("UNHALTED_CORE_CYCLES", 0)])  # [NHM] 3.1.6: FIXED_CTR1
    assert errors_of(log.check(), "fixed")


def test_trace_gap_and_drops_fail():
    log = Log()
    intel_counting(log, GOOD_GPS)
    log.recs[5]["seq"] += 7
    assert errors_of(log.check(), "trace")
    log = Log()
    intel_counting(log, GOOD_GPS)
    log.recs[4]["dropped_before"] = 3
    assert errors_of(log.check(), "trace")


def test_pmu_write_outside_a_measurement_fails():
    log = Log()
    intel_counting(log, GOOD_GPS)
    log.w(0x186, 0x4301CB)
    assert errors_of(log.check(), "windows")


# ---- off-core response -------------------------------------------------------------------------

def test_offcore_values_follow_table12():
    ok = [("OFFCORE_RESPONSE_0:DMND_DATA_RD:LOCAL_DRAM", 0, EN_USR_OS | 0x01B7, 0x1A6, 0x4001)]
    log = Log()
    intel_counting(log, ok)
    rep = log.check()
    assert rep.ok, rep.errors
    assert rep.counts["offcore_value"] == 1 and rep.counts["offcore_event"] == 1

    wrong_bits = [("OFFCORE_RESPONSE_0:DMND_DATA_RD:LOCAL_DRAM", 0, EN_USR_OS | 0x01B7, 0x1A6, 0x2001)]
    log = Log()
    intel_counting(log, wrong_bits)
    assert errors_of(log.check(), "offcore")

    no_response = [("OFFCORE_RESPONSE_0:DMND_DATA_RD", 0, EN_USR_OS | 0x01B7, 0x1A6, 0x0001)]
    log = Log()
    intel_counting(log, no_response)
    assert any("request or a response" in e for e in errors_of(log.check(), "offcore"))

    wrong_msr = [("OFFCORE_RESPONSE_0:DMND_DATA_RD:LOCAL_DRAM", 0, EN_USR_OS | 0x01B7, 0x1A7, 0x4001)]
    log = Log()
    intel_counting(log, wrong_msr)
    assert any("Table 11" in e for e in errors_of(log.check(), "offcore"))


def test_offcore_response_combination_from_the_guide():
    # [PAG]: LOCAL_CACHE = 07xx
    gps = [("OFFCORE_RESPONSE_0:DMND_DATA_RD:LOCAL_CACHE", 0, EN_USR_OS | 0x01B7, 0x1A6, 0x0701)]
    log = Log()
    intel_counting(log, gps)
    assert log.check().ok
    gps = [("OFFCORE_RESPONSE_0:DMND_DATA_RD:LOCAL_CACHE", 0, EN_USR_OS | 0x01B7, 0x1A6, 0x4701)]
    log = Log()
    intel_counting(log, gps)
    assert errors_of(log.check(), "offcore")


def westmere_log(gps, table):
    """A `wsm` dry-run window whose events were parsed with libpfm4's `table` (wsm_dp: 06_2C, wsm: 06_25)."""
    log = Log("wsm")
    intel_counting(log, gps)
    for r in log.recs:
        if r["type"] == "pmu_measure":
            r["model"] = "wsm"
            for e in r["events"]:
                e["table"] = table
    return log


def test_westmere_offcore_bits_per_part():
    # Intel's WestmereEP-DP_core.json: LOCAL_DRAM_AND_REMOTE_CACHE_HIT = 10xxH (bit 12)
    name = "OFFCORE_RESPONSE_0:DMND_DATA_RD:LOCAL_DRAM_AND_REMOTE_CACHE_HIT"
    rep = westmere_log([(name, 0, EN_USR_OS | 0x01B7, 0x1A6, 0x1001)], "wsm_dp").check()
    assert rep.ok, rep.errors
    assert rep.counts["offcore_value"] == 1 and name not in rep.unchecked
    rep = westmere_log([(name, 0, EN_USR_OS | 0x01B7, 0x1A6, 0x4001)], "wsm_dp").check()
    assert any("wsm_dp event file" in e for e in errors_of(rep, "offcore")), rep.errors
    # 06_25 (WestmereEP-SP_core.json): LOCAL_DRAM is bit 13, not Nehalem's bit 14
    rep = westmere_log([("OFFCORE_RESPONSE_0:DMND_DATA_RD:LOCAL_DRAM", 0, EN_USR_OS | 0x01B7, 0x1A6, 0x2001)],
                       "wsm").check()
    assert rep.ok and rep.counts["offcore_value"] == 1, rep.errors
    rep = westmere_log([("OFFCORE_RESPONSE_0:DMND_DATA_RD:LOCAL_DRAM", 0, EN_USR_OS | 0x01B7, 0x1A6, 0x4001)],
                       "wsm").check()
    assert errors_of(rep, "offcore")
    # Nehalem keeps [NHM] Table 12, where the Westmere name means nothing
    log = Log()
    intel_counting(log, [(name, 0, EN_USR_OS | 0x01B7, 0x1A6, 0x1001)])
    rep = log.check()
    assert rep.ok and name in rep.unchecked


def test_westmere_sp_mem_uncore_dram_umasks():
    # WestmereEP-SP_core.json: MEM_UNCORE_RETIRED.LOCAL_DRAM 0FH/10H ([PAG] Table 3, Nehalem: 20H)
    rep = westmere_log([("MEM_UNCORE_RETIRED:LOCAL_DRAM", 0, EN_USR_OS | 0x100F, None, None)], "wsm").check()
    assert rep.ok and rep.counts["evtsel_spec"] == 1, rep.errors
    rep = westmere_log([("MEM_UNCORE_RETIRED:LOCAL_DRAM", 0, EN_USR_OS | 0x200F, None, None)], "wsm").check()
    assert errors_of(rep, "evtsel")


def test_l1d_repl_and_branch_misp_exec_encodings():
    # [PAG] Table 16 L1D.REPL 51H/01H; Table 18 BR_MISP_EXEC.COND 89H/01H, .ANY 89H/7FH
    gps = [("L1D:REPL", 0, EN_USR_OS | 0x0151, None, None), ("BR_MISP_EXEC:COND", 1, EN_USR_OS | 0x0189, None, None),
           ("BR_MISP_EXEC:ANY", 2, EN_USR_OS | 0x7F89, None, None)]
    nhm = Log()
    intel_counting(nhm, gps)
    for log in (nhm, westmere_log(gps, "wsm_dp")):
        rep = log.check()
        assert rep.ok and rep.counts["evtsel_spec"] == 3 and not rep.unchecked, (rep.errors, rep.unchecked)
    log = Log()
    intel_counting(log, [("L1D:REPL", 0, EN_USR_OS | 0x0251, None, None)])
    assert errors_of(log.check(), "evtsel")


# ---- PEBS and the DS area ----------------------------------------------------------------------

DS = 0x102000
BUF = 0x103000


def pebs_log(model="nhm", pebs_enable=0x100000001, ldlat=3, index=None, rec=0xB0, maximum=None, ds_msr=DS,
             period=97, reset=None, drain_index=None, alloc_bytes=12288, pebs_format=1, evtsel=None):
    log = Log(model, pebs_format)
    nrec = 64
    maximum = maximum if maximum is not None else BUF + nrec * rec
    reset = reset if reset is not None else (1 << 48) - period
    log.add({"type": "pmu_alloc", "what": "ds_area", "base": hx(DS), "bytes": 4096})
    log.add({"type": "pmu_alloc", "what": "pebs_buffer", "base": hx(BUF), "bytes": alloc_bytes})
    ds = {"type": "ds_area", "why": "program", "address": hx(DS), "size": 160, "bts_buffer_base": "0x0",
          "bts_index": "0x0", "bts_absolute_maximum": "0x0", "bts_interrupt_threshold": "0x0",
          "pebs_buffer_base": hx(BUF), "pebs_index": hx(BUF if index is None else index),
          "pebs_absolute_maximum": hx(maximum), "pebs_interrupt_threshold": hx(maximum),
          "pebs_counter_reset": [hx(reset)] + ["0x0"] * 7, "pebs_fixed_reset": ["0x0"] * 4,
          "pebs_format": pebs_format, "record_size": rec, "buffer_bytes": alloc_bytes}
    log.add(ds)
    log.w(0x600, ds_msr)
    ev = gp("MEM_INST_RETIRED:LATENCY_ABOVE_THRESHOLD:ldlat=3", 0, EN_USR_OS | 0x100B if evtsel is None else evtsel,
            0x3F6, 3, preload=(1 << 48) - period)
    mid = log.measure("pebs", [ev], global_ctrl="0x1",
                      pebs={"counter": 0, "pebs_enable": hx(0x100000001), "ldlat": 3, "period": period})
    log.w(0x38F, 0)
    log.w(0x3F6, ldlat)
    log.w(0x186, EN_USR_OS | 0x100B if evtsel is None else evtsel)
    log.w(0xC1, (1 << 48) - period)
    log.w(0x390, 0xE00000070000000F)
    log.w(0x3F1, pebs_enable)
    log.w(0x38F, 1)
    if drain_index is not None:
        log.w(0x38F, 0)
        d = dict(ds, why="drain", pebs_index=hx(drain_index))
        log.add(d)
        log.w(0x38F, 1)
    log.w(0x38F, 0)
    log.r(0x38E)
    log.r(0xC1)
    log.w(0x3F1, 0)
    log.w(0x186, 0)
    log.w(0x390, 0xE00000070000000F)
    log.end(mid)
    return log


def test_good_pebs_passes():
    rep = pebs_log(drain_index=BUF).check()
    assert rep.ok, rep.errors
    for k in ("pebs_enable", "pebs_ldlat", "ds_area_pointer", "ds_area_drain"):
        assert rep.counts[k] == 1, k
    assert rep.counts["ds_area_consistent"] >= 2


def test_pebs_enable_needs_both_bits():
    rep = pebs_log(pebs_enable=0x1).check()  # PEBS_EN_CTR0 without LL_EN_CTR0
    assert any("IA32_PEBS_ENABLE" in e for e in errors_of(rep, "pebs"))
    rep = pebs_log(pebs_enable=0x200000002).check()  # the wrong counter
    assert errors_of(rep, "pebs")


def test_ldlat_threshold_checked():
    rep = pebs_log(ldlat=2).check()
    assert any("LD_LAT" in e for e in errors_of(rep, "pebs"))


def test_load_latency_event_must_be_100bh():
    rep = pebs_log(evtsel=EN_USR_OS | 0x010B).check()
    assert errors_of(rep, "evtsel") or errors_of(rep, "pebs")


def test_ds_area_consistency():
    assert errors_of(pebs_log(index=BUF + 0xB0).check(), "ds_area")          # index != base
    assert errors_of(pebs_log(rec=0xC0).check(), "ds_area")                  # 0xC0 records with format 1
    assert errors_of(pebs_log(maximum=BUF + 0x100).check(), "ds_area")       # not whole records
    assert errors_of(pebs_log(alloc_bytes=4096).check(), "ds_area")          # buffer past its allocation
    assert errors_of(pebs_log(ds_msr=DS + 0x1000).check(), "ds_area")        # IA32_DS_AREA points elsewhere
    assert errors_of(pebs_log(reset=(1 << 48) - 96).check(), "ds_area")      # reset is not -period
    assert errors_of(pebs_log(drain_index=BUF + 0xB0).check(), "ds_area")    # a drain that did not reset


# ---- uncore and model gating --------------------------------------------------------------------

def uncore_log(model="nhm", evtsel=0x40072C):
    log = Log(model)
    ev = {"name": "UNC_QMC_NORMAL_READS:ANY", "table": "nhm_unc", "kind": "uncore", "counter": "unc_pmc0",
          "index": 0, "width": 48, "ctl_msr": "0x3c0", "ctr_msr": "0x3b0", "ctl": hx(evtsel), "extra_msr": None,
          "escr_msr": None, "preload": "0x0"}
    mid = log.measure("counting", [ev], uncore_global_ctrl="0x1")
    log.w(0x391, 0)
    log.w(0x3C0, evtsel)
    log.w(0x3B0, 0)
    log.w(0x393, 0xA0000001000000FF)
    log.w(0x391, 1)
    log.w(0x391, 0)
    log.r(0x392)
    log.r(0x3B0)
    log.w(0x3C0, 0)
    log.w(0x393, 0xA0000001000000FF)
    log.end(mid)
    return log


def test_uncore_on_nehalem_passes_and_is_checked():
    rep = uncore_log().check()
    assert rep.ok, rep.errors
    assert rep.counts["uncore_evtsel_spec"] == 1
    rep = uncore_log(evtsel=0x40012C).check()  # [PAG] Table 32: ANY is umask 07H
    assert errors_of(rep, "uncore")
    rep = uncore_log(evtsel=0x43072C).check()  # USR/OS: the uncore has no privilege filter
    assert errors_of(rep, "uncore")


@pytest.mark.parametrize("model", ["nhm_ex", "amd_fam10h", "netburst"])
def test_uncore_msrs_refused_on_models_without_that_uncore(model):
    rep = uncore_log(model).check()
    assert errors_of(rep, "gating"), rep.errors


def test_intel_msrs_refused_on_amd():
    log = Log("amd_fam10h")
    intel_counting(log, GOOD_GPS)
    assert errors_of(log.check(), "gating")


def test_faulting_pmu_access_fails():
    log = Log()
    intel_counting(log, GOOD_GPS)
    for r in log.recs:
        if r.get("type") == "msr_trace" and r["msr"] == "0x186":
            r["ok"] = False
            break
    assert any("faulted" in e for e in errors_of(log.check(), "gating"))


# ---- AMD ---------------------------------------------------------------------------------------

def amd_log(events, ctl_base=0xC0010000, leave_on=False):
    log = Log("amd_fam10h", 0)
    evs = []
    for i, (name, ctl) in enumerate(events):
        evs.append({"name": name, "table": "amd_fam10h", "kind": "amd", "counter": "ctr%d" % i, "index": i,
                    "width": 48, "ctl_msr": hx(ctl_base + i), "ctr_msr": hx(ctl_base + 4 + i), "ctl": hx(ctl),
                    "extra_msr": None, "escr_msr": None, "preload": "0x0"})
    mid = log.measure("counting", evs)
    for i, (name, ctl) in enumerate(events):
        log.w(ctl_base + i, ctl & ~(1 << 22))
        log.w(ctl_base + 4 + i, 0)
    for i, (name, ctl) in enumerate(events):
        log.w(ctl_base + i, ctl)
    for i, (name, ctl) in enumerate(events):
        log.w(ctl_base + i, ctl & ~(1 << 22))
    for i, _ in enumerate(events):
        log.r(ctl_base + 4 + i)
    for i, _ in enumerate(events):
        if not (leave_on and i == 0):
            log.w(ctl_base + i, 0)
    log.end(mid)
    return log


AMD_OK = [("RETIRED_INSTRUCTIONS", 0x4300C0), ("CPU_CLK_UNHALTED", 0x430076),
          ("READ_REQUEST_TO_L3_CACHE:ANY_READ:ALL_CORES", 0x40043F7E0),
          ("DATA_CACHE_REFILLS:L2_SHARED:L2_EXCLUSIVE:L2_OWNED:L2_MODIFIED", 0x431E42)]


def test_amd_events_from_the_amd_paper():
    rep = amd_log(AMD_OK).check()
    assert rep.ok, rep.errors
    assert rep.counts["amd_evtsel_spec"] == 4


def test_amd_event_select_high_bits_checked():
    # 4E0H without EventSelect[11:8] in bits 35:32 is event E0H (DRAM accesses), not L3 requests.
    rep = amd_log([("READ_REQUEST_TO_L3_CACHE:ANY_READ:ALL_CORES", 0x43F7E0)]).check()
    assert errors_of(rep, "amd")


def test_amd_extended_counter_msrs_refused_on_family_10h():
    rep = amd_log(AMD_OK[:2], ctl_base=0xC0010200).check()
    assert errors_of(rep, "gating")


def test_amd_left_enabled_fails():
    assert errors_of(amd_log(AMD_OK[:1], leave_on=True).check(), "end_state")


# ---- NetBurst ----------------------------------------------------------------------------------

def p4_log(escr_msr=0x3B8, escr=0x0400060C, counter=12, cccr=0x39000, intel_write=False):
    """instr_retired:NBOGUSNTAG:NBOGUSTAG on an IQ counter ([P4]; CRU_ESCR0 -> 12, 13, 16, select 4)."""
    log = Log("netburst", 0)
    ev = {"name": "instr_retired:NBOGUSNTAG:NBOGUSTAG", "table": "netburst", "kind": "p4",
          "counter": "p4_ctr%d" % counter, "index": counter, "width": 40, "ctl_msr": hx(0x360 + counter),
          "ctr_msr": hx(0x300 + counter), "ctl": hx(cccr), "extra_msr": None, "escr_msr": hx(escr_msr),
          "escr": hx(escr), "preload": "0x0"}
    mid = log.measure("counting", [ev])
    log.w(escr_msr, escr)
    log.w(0x360 + counter, cccr & ~(1 << 12))
    log.w(0x300 + counter, 0)
    if intel_write:
        log.w(0x186, 0)
    log.w(0x360 + counter, cccr)
    log.w(0x360 + counter, cccr & ~(1 << 12))
    log.r(0x300 + counter)
    log.r(0x360 + counter)
    log.w(0x360 + counter, 0)
    log.w(escr_msr, 0)
    log.end(mid)
    return log


def test_netburst_escr_cccr_words():
    rep = p4_log().check()
    assert rep.ok, rep.errors
    assert rep.counts["netburst_spec"] == 1
    assert errors_of(p4_log(cccr=0x3B000).check(), "netburst")          # CCCR ESCR select 5, not 4
    assert errors_of(p4_log(counter=14).check(), "netburst")            # CRU_ESCR0 cannot feed counter 14
    assert errors_of(p4_log(escr=0x0600060C).check(), "netburst")       # event select 03H, not 02H
    assert errors_of(p4_log(escr=0x0400060F).check(), "netburst")       # T1 bits set
    assert errors_of(p4_log(intel_write=True).check(), "gating")        # PERFEVTSEL0 on a Pentium 4


# ---- LBR ---------------------------------------------------------------------------------------

def lbr_log(read_early=False, leave_on=False, select_written=0x1FA):
    log = Log()
    mid = log.measure("lbr", [], lbr={"format": 3, "depth": 16, "from_msr": "0x680", "to_msr": "0x6c0",
                                      "tos_msr": "0x1c9", "select": "0x1fa"})
    log.r(0x1D9, 0)
    log.w(0x1C8, select_written)
    log.w(0x1D9, 1)
    if read_early:
        log.r(0x680)
    if not leave_on:
        log.w(0x1D9, 0)
    log.r(0x1C9)
    for i in range(16):
        log.r(0x680 + i)
        log.r(0x6C0 + i)
    log.w(0x1C8, 0)
    if leave_on:
        log.w(0x1D9, 1)
    log.end(mid)
    return log


def test_lbr_capture_rules():
    rep = lbr_log().check()
    assert rep.ok, rep.errors
    assert rep.counts["lbr_stack_read"] == 1
    assert errors_of(lbr_log(read_early=True).check(), "lbr")
    assert errors_of(lbr_log(select_written=0x2).check(), "lbr")
    assert lbr_log(leave_on=True).check().errors


# ---- command line ------------------------------------------------------------------------------

def test_cli_exit_codes(tmp_path):
    good = tmp_path / "good.log"
    good.write_text(pebs_log().text())
    bad = tmp_path / "bad.log"
    bad.write_text(pebs_log(ldlat=1).text())
    junk = tmp_path / "junk.log"
    junk.write_text("no records here\n")
    run = lambda p: subprocess.run([sys.executable, SCRIPT, str(p)], capture_output=True, text=True)  # noqa: E731
    r = run(good)
    assert r.returncode == 0 and "OK" in r.stdout
    r = run(bad)
    assert r.returncode == 1 and "ERROR pebs" in r.stdout
    assert run(junk).returncode == 2


def test_empty_trace_is_not_a_pass(tmp_path):
    log = Log()
    p = tmp_path / "empty.log"
    p.write_text(log.text())
    r = subprocess.run([sys.executable, SCRIPT, str(p)], capture_output=True, text=True)
    assert r.returncode == 1 and "no msr_trace" in r.stdout


# ---- values from the documents, sockets, northbridge, self-test (issue items 6, 7, 9, 10) ------------------

NHM_PMU = {"gp_counters": 4, "fixed_counters": 3, "version": 3}


def with_caps(log, **caps):
    log.recs[0]["pmu"].update(caps)
    return log


def measure_rec(log, what=None):
    return next(r for r in log.recs if r.get("type") == "pmu_measure" and (what is None or r["what"] == what))


def test_doc_values_catch_what_the_kernel_declared_wrong():
    """A kernel that declares and writes the same wrong value passes the declaration checks; the document
    values catch it: [NHM] Table 5 enable bits, Table 7 OVF_CTRL clear-all, counters starting at 0."""
    log = with_caps(Log(), **NHM_PMU)
    intel_counting(log, GOOD_GPS, GOOD_FIXED)
    rep = log.check()
    assert rep.ok, rep.errors
    assert rep.counts["global_enable_doc"] == 1 and rep.counts["ovf_clear_doc"] == 2
    assert rep.counts["counter_start_doc"] == 5
    # PMC3 enabled too, and declared so: only the document rule sees it
    log = with_caps(Log(), **NHM_PMU)
    intel_counting(log, GOOD_GPS, GOOD_FIXED, global_value=0x30000000F)
    measure_rec(log)["global_ctrl"] = "0x30000000f"
    rep = log.check()
    assert not errors_of(rep, "order") and any("Table 5" in e for e in errors_of(rep, "doc")), rep.errors
    # an OVF_CTRL value without CondChgd / OvfBuf / Ovf_Uncore
    log = with_caps(Log(), **NHM_PMU)
    intel_counting(log, GOOD_GPS, GOOD_FIXED)
    for r in log.recs:
        if r.get("msr") == "0x390":
            r["value"] = "0x70000000f"
    assert any("Table 7" in e for e in errors_of(log.check(), "doc"))
    # a counting counter preloaded, and declared preloaded
    log = with_caps(Log(), **NHM_PMU)
    intel_counting(log, GOOD_GPS[:1])
    for r in log.recs:
        if r.get("msr") == "0xc1" and r["op"] == "write":
            r["value"] = "0x10"
            break
    measure_rec(log)["events"][0]["preload"] = "0x10"
    rep = log.check()
    assert not errors_of(rep, "order") and any("starts at 0x10" in e for e in errors_of(rep, "doc")), rep.errors


def test_uncore_enable_from_the_sdm_layout():
    log = uncore_log()
    rep = log.check()
    assert rep.counts["uncore_enable_doc"] == 1 and rep.counts["ovf_clear_doc"] == 2
    for r in log.recs:
        if r.get("msr") == "0x391" and r["value"] == "0x1":
            r["value"] = "0x100000001"  # EN_FC0 with no fixed counter in the measurement
    measure_rec(log)["uncore_global_ctrl"] = "0x100000001"
    rep = log.check()
    assert any("SDM 18.8.2" in e for e in errors_of(rep, "doc")), rep.errors
    log = uncore_log()
    for r in log.recs:
        if r.get("msr") == "0x393":
            r["value"] = "0xff"
    assert any("clear-all" in e for e in errors_of(log.check(), "doc"))


def two_socket_log(window_cpu=1, trace_cpu=1, socket=1, not_read=None, read_node=1):
    log = uncore_log()
    log.recs.insert(1, {"type": "smp", "cpus": [{"index": 0, "node": 0, "package": 0, "online": True},
                                                {"index": 1, "node": 1, "package": 1, "online": True}]})
    m = measure_rec(log)
    m["cpu"], m["socket"] = window_cpu, socket
    for r in log.recs:
        if r.get("type") == "msr_trace":
            r["cpu"] = trace_cpu
    sockets = [{"socket": 0, "node": 0, "cpu": 0}]
    if not_read is None:
        sockets.append({"socket": 1, "node": read_node, "cpu": 1})
    log.add({"type": "uncore_bandwidth", "sockets": sockets, "sockets_read": len(sockets),
             "sockets_not_read": [] if not_read is None else [{"socket": 1, "node": 1, "reason": not_read}]})
    return log


def test_each_socket_read_from_its_own_cpu_and_node():
    rep = two_socket_log().check()
    assert rep.ok, rep.errors
    assert rep.counts["socket_read_locally"] == 1 and rep.counts["socket_stream_local"] == 2
    assert rep.counts["sockets_accounted"] == 1
    # socket 1's uncore programmed from the BSP (package 0)
    assert errors_of(two_socket_log(trace_cpu=0).check(), "socket")
    assert errors_of(two_socket_log(window_cpu=0, trace_cpu=0).check(), "socket")
    # the stream buffer on the other node
    assert errors_of(two_socket_log(read_node=0).check(), "socket")
    # a socket not read must be named with a reason
    assert two_socket_log(not_read="CPU 1 did not finish its counting job").check().ok
    assert errors_of(two_socket_log(not_read="").check(), "socket")
    log = two_socket_log(not_read="x")
    log.recs[-1]["sockets_not_read"] = []
    assert any("neither read nor named" in e for e in errors_of(log.check(), "socket"))


def test_amd_dram_accesses_per_dct():
    """[AMD] 4.2.2: one counter per memory controller, E0H/07H (DCT0) and E0H/38H (DCT1)."""
    ok = [("DRAM_ACCESSES_PAGE:HIT:MISS:CONFLICT", 0x4307E0),
          ("DRAM_ACCESSES_PAGE:DCT1_PAGE_HIT:DCT1_PAGE_MISS:DCT1_PAGE_CONFLICT", 0x4338E0)]
    rep = amd_log(ok).check()
    assert rep.ok, rep.errors
    assert rep.counts["amd_evtsel_spec"] == 2
    bad = [ok[0], (ok[1][0], 0x4307E0)]  # DCT1 counted with DCT0's unit mask
    assert errors_of(amd_log(bad).check(), "amd")


def test_amd_cmask_inv_as_named():
    rep = amd_log([("RETIRED_INSTRUCTIONS:c=1", 0x14300C0), ("RETIRED_INSTRUCTIONS:c=1:i", 0x1C300C0)]).check()
    assert rep.ok, rep.errors
    assert errors_of(amd_log([("RETIRED_INSTRUCTIONS:c=1:i", 0x14300C0)]).check(), "amd")  # Inv missing
    assert errors_of(amd_log([("RETIRED_INSTRUCTIONS", 0x14300C0)]).check(), "amd")  # CntMask not asked for


def nb_log(ctl=0x4007E0, ctl_msr=0xC0010240, index=0, model="amd_fam15h"):
    log = Log(model, 0)
    ev = {"name": "DRAM_ACCESSES:DCT0_PAGE_HIT:DCT0_PAGE_MISS:DCT0_PAGE_CONFLICT", "table": "amd_fam15h_nb",
          "kind": "amd_nb", "counter": "nb_ctr%d" % index, "index": index, "width": 48, "ctl_msr": hx(ctl_msr),
          "ctr_msr": hx(ctl_msr + 1), "ctl": hx(ctl), "extra_msr": None, "escr_msr": None, "preload": "0x0"}
    mid = log.measure("counting", [ev])
    log.w(ctl_msr, ctl & ~(1 << 22))
    log.w(ctl_msr + 1, 0)
    log.w(ctl_msr, ctl)
    log.w(ctl_msr, ctl & ~(1 << 22))
    log.r(ctl_msr + 1)
    log.w(ctl_msr, 0)
    log.end(mid)
    return log


def test_family_15h_northbridge_counters():
    rep = nb_log().check()
    assert rep.ok, rep.errors
    assert rep.counts["amd_nb_spec"] == 1
    assert errors_of(nb_log(ctl=0x4307E0).check(), "amd_nb")            # USR/OS on a northbridge counter
    assert errors_of(nb_log(ctl=0x4038E0).check(), "amd_nb")            # DCT1's unit mask for DCT0
    assert errors_of(nb_log(ctl_msr=0xC0010242).check(), "amd_nb")      # NB_PERF_CTL1 named as counter 0
    assert errors_of(nb_log(model="amd_fam10h").check(), "gating")      # no NB counters on family 10h


def selftest_offcore_log(value=0x4001, swapped=0x0140, table="nhm", model="nhm"):
    log = Log(model)
    for lab, v in (("value", value), ("byte_swapped", swapped)):
        ev = gp("OFFCORE_RESPONSE_0:rsp=0x%04x" % v, 0, EN_USR_OS | 0x01B7, 0x1A6, v)
        ev["table"] = table
        mid = log.measure("selftest:offcore", [ev], label=lab, global_ctrl="0x1", model=model)
        log.w(0x38F, 0)
        log.w(0x1A6, v)
        log.w(0x186, EN_USR_OS | 0x01B7)
        log.w(0xC1, 0)
        log.w(0x390, 0xE00000070000000F)
        log.w(0x38F, 1)
        log.w(0x38F, 0)
        log.r(0x38E)
        log.r(0xC1)
        log.w(0x186, 0)
        log.w(0x1A6, 0)
        log.w(0x390, 0xE00000070000000F)
        log.end(mid)
    return log


def test_selftest_offcore_value_and_its_byte_swap():
    rep = selftest_offcore_log().check()
    assert rep.ok, rep.errors
    assert rep.counts["selftest_offcore_swap"] == 1
    # a control that is not the byte swap of the value cannot tell request from response bits
    assert errors_of(selftest_offcore_log(swapped=0x4001).check(), "selftest")
    assert errors_of(selftest_offcore_log(value=0x0101, swapped=0x0101).check(), "selftest")
    assert rep.counts["selftest_offcore_local_dram"] == 1


def test_selftest_offcore_value_is_the_parts_local_dram():
    # Westmere-EP DP 06_2C (table wsm_dp): LOCAL_DRAM_AND_REMOTE_CACHE_HIT, bit 12; 06_25 (wsm): LOCAL_DRAM, bit 13.
    assert selftest_offcore_log(0x1001, 0x0110, "wsm_dp", "wsm").check().ok
    assert selftest_offcore_log(0x2001, 0x0120, "wsm", "wsm").check().ok
    # The old fixed 6001H is REMOTE_DRAM | OTHER_LLC_MISS on 06_2C: the local chase counts almost nothing.
    assert any("local-DRAM" in e for e in errors_of(selftest_offcore_log(0x6001, 0x0160, "wsm_dp", "wsm").check(),
                                                      "selftest"))
    assert errors_of(selftest_offcore_log(0x1001, 0x0110, "wsm", "wsm").check(), "selftest")  # 06_25: bit 12 is remote
    assert errors_of(selftest_offcore_log(0x6001, 0x0160).check(), "selftest")  # Nehalem: local DRAM alone
    # Westmere-EX 06_2F (row wsm_ex, parsed with wsm_dp): Nehalem's bit 14 (perf westmereex LOCAL_DRAM 4011H).
    assert selftest_offcore_log(0x4001, 0x0140, "wsm_dp", "wsm_ex").check().ok
    assert errors_of(selftest_offcore_log(0x1001, 0x0110, "wsm_dp", "wsm_ex").check(), "selftest")


def test_selftest_counter_checks_program_their_counter():
    log = Log()
    gps = [("BR_INST_RETIRED:CONDITIONAL", 2, EN_USR_OS | 0x01C4, None, None)]
    intel_counting(log, gps)
    m = measure_rec(log)
    m["what"], m["label"] = "selftest:counter", "branches_pmc2"
    rep = log.check()
    assert rep.ok, rep.errors
    m["label"] = "branches_pmc1"  # the check says PMC1, the event sits on PMC2
    assert errors_of(log.check(), "selftest")
    log = Log()
    intel_counting(log, [("BR_INST_RETIRED:CONDITIONAL", 2, EN_USR_OS | 0x00C4, None, None)])  # umask lost
    m = measure_rec(log)
    m["what"], m["label"] = "selftest:counter", "branches_pmc2"
    assert any("Table 6" in e for e in errors_of(log.check(), "evtsel"))
