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
