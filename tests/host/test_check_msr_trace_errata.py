"""scripts/check_msr_trace.py: the errata and PMU-robustness rules, on synthetic logs.

The AAK100/AAP53/BD53 PMU reset (Linux intel_pmu_nhm_workaround's steps) at the start of every core
window where the CPU needs it, IA32_PEBS_ENABLE cleared around PEBS drains ([NHM] 3.1.3), the PEBS
period floor (Linux nhm_limit_period) and IA32_DEBUGCTL.FREEZE_WHILE_SMM. Each rule: a correct trace
passes and counts it, a trace that breaks it is reported. The logs are built with the helpers of
test_check_msr_trace.py.
"""
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)

from test_check_msr_trace import BUF, DS, GOOD_GPS, Log, errors_of, hx, intel_counting, pebs_log  # noqa: E402

# Linux intel_pmu_nhm_workaround, typed in from its five documented steps.
RESET = [(0x38F, 0), (0x3F1, 0),
         (0x186, 0x4300B5), (0xC1, 0), (0x187, 0x4300D2), (0xC2, 0), (0x188, 0x4300B1), (0xC3, 0),
         (0x189, 0x4300B1), (0xC4, 0),
         (0x38F, 0xF), (0x38F, 0),
         (0x186, 0), (0xC1, 0), (0x187, 0), (0xC2, 0), (0x188, 0), (0xC3, 0), (0x189, 0), (0xC4, 0)]


def pmu_record(log, family_model=None, errata=None, **kw):
    pmu = log.recs[0]["pmu"]
    if family_model is not None:
        pmu["family_model"] = family_model
    if errata is not None:
        pmu["errata"] = errata
    pmu.update(kw)


def counting_with_reset(log, reset=RESET):
    """intel_counting's window with `reset` written first, as pmu_group_program does on 06_1A."""
    before = len(log.recs)
    intel_counting(log, GOOD_GPS[:2])
    measure_at = next(i for i in range(before, len(log.recs)) if log.recs[i]["type"] == "pmu_measure")
    window = log.recs[measure_at + 1:]
    del log.recs[measure_at + 1:]
    log.seq = window[0]["seq"]  # the reset's writes come first, the window's are renumbered after them
    for m, v in reset:
        log.w(m, v)
    for r in window:
        if r["type"] == "msr_trace":
            r["seq"] = log.seq
            log.seq += 1
        log.recs.append(r)


# ---- the PMU reset --------------------------------------------------------------------------------

def test_reset_on_aak100_model_passes_and_is_counted():
    log = Log("nhm")
    pmu_record(log, "06_1A", {"pmu_reset": "AAK100"})
    counting_with_reset(log)
    counting_with_reset(log)
    rep = log.check()
    assert rep.ok, rep.errors
    assert rep.counts["nhm_reset"] == 2 and rep.counts["nhm_reset_model"] == 1
    assert rep.counts["order_disable_first"] == 2  # the measurement's own programming is still checked


def test_reset_missing_where_the_model_needs_it():
    for fm, erratum in (("06_1A", "AAK100"), ("06_1E", "AAP53"), ("06_2C", "BD53"), ("06_2E", None)):
        log = Log("nhm")
        pmu_record(log, fm, {"pmu_reset": erratum or "Linux intel_pmu_nhm_workaround (Nehalem-EX)"})
        intel_counting(log, GOOD_GPS[:2])
        rep = log.check()
        assert any("no AAK100/AAP53/BD53 PMU reset" in e for e in errors_of(rep, "nhm_reset")), (fm, rep.errors)


def test_reset_values_are_literal():
    bad = list(RESET)
    bad[4] = (0x187, 0x4300D3)  # one magic event wrong
    log = Log("nhm")
    pmu_record(log, "06_1A", {"pmu_reset": "AAK100"})
    counting_with_reset(log, bad)
    rep = log.check()
    assert any("reset step 4" in e and "0x4300d2" in e for e in errors_of(rep, "nhm_reset")), rep.errors
    short = RESET[:11] + RESET[12:]  # GLOBAL_CTRL never cleared after setting bits 0-3
    log = Log("nhm")
    pmu_record(log, "06_1A", {"pmu_reset": "AAK100"})
    counting_with_reset(log, short)
    assert errors_of(log.check(), "nhm_reset")


def test_reset_without_pebs_enable_write_is_accepted():
    log = Log("nhm")
    pmu_record(log, "06_1A", {"pmu_reset": "AAK100"})
    counting_with_reset(log, RESET[:1] + RESET[2:])
    rep = log.check()
    assert rep.ok, rep.errors
    assert rep.counts["nhm_reset"] == 1


def test_reset_where_linux_does_not_apply_it():
    # 06_1F: Linux's intel_pmu_init has no Nehalem case for it; 06_2A is Sandy Bridge.
    for fm in ("06_1F", "06_2A"):
        log = Log("nhm")
        pmu_record(log, fm, {})
        counting_with_reset(log)
        assert any("does not need it" in e for e in errors_of(log.check(), "nhm_reset")), fm
        log = Log("nhm")
        pmu_record(log, fm, {"pmu_reset": "AAK100"})
        intel_counting(log, GOOD_GPS[:2])
        assert any("Linux does not reset" in e for e in errors_of(log.check(), "nhm_reset")), fm


def test_reset_claims_must_match_the_spec_update():
    log = Log("nhm")
    pmu_record(log, "06_1A", {"pmu_reset": "BD53"})
    counting_with_reset(log)
    assert any("spec update's is AAK100" in e for e in errors_of(log.check(), "nhm_reset"))
    log = Log("wsm")
    pmu_record(log, "06_2C", {})
    counting_with_reset(log)
    assert any("does not name it" in e for e in errors_of(log.check(), "nhm_reset"))


def test_old_logs_without_family_model_are_not_required_to_reset():
    log = Log("nhm")
    intel_counting(log, GOOD_GPS[:2])
    assert log.check().ok
    log = Log("nhm")
    counting_with_reset(log)  # present without a claim: still verified literally
    rep = log.check()
    assert rep.ok and rep.counts["nhm_reset"] == 1


# ---- PEBS: IA32_PEBS_ENABLE around drains, period floor -----------------------------------------

def pebs_with_drains(pebs_off=True, restore=True, period=97):
    """pebs_log's window with one drain, the way pmu_pebs_poll / pmu_pebs_end program it now."""
    log = pebs_log(period=period)
    for r in log.recs:
        if r["type"] == "ds_area":
            r["stray"] = 0
    # Rebuild the tail after the enable: drain, final disable, read, release.
    en = max(i for i, r in enumerate(log.recs) if r["type"] == "msr_trace" and r["msr"] == "0x38f"
             and r["value"] == "0x1")
    end = log.recs[-1]
    del log.recs[en + 1:]
    log.seq = log.recs[en]["seq"] + 1
    log.w(0x38F, 0)
    if pebs_off:
        log.w(0x3F1, 0)
    log.r(0xC1)
    log.add({"type": "ds_area", "why": "drain", "address": hx(DS), "size": 160, "bts_buffer_base": "0x0",
             "bts_index": "0x0", "bts_absolute_maximum": "0x0", "bts_interrupt_threshold": "0x0",
             "pebs_buffer_base": hx(BUF), "pebs_index": hx(BUF), "pebs_absolute_maximum": hx(BUF + 64 * 0xB0),
             "pebs_interrupt_threshold": hx(BUF + 64 * 0xB0), "pebs_counter_reset": [hx((1 << 48) - 97)] + ["0x0"] * 7,
             "pebs_fixed_reset": ["0x0"] * 4, "pebs_format": 1, "record_size": 0xB0, "buffer_bytes": 12288,
             "stray": 1})
    if restore:
        log.w(0x3F1, 0x100000001)
    log.w(0x38F, 1)
    log.w(0x38F, 0)
    if pebs_off:
        log.w(0x3F1, 0)
    log.r(0x38E)
    log.r(0xC1)
    log.w(0x3F1, 0)
    log.w(0x186, 0)
    log.w(0x390, 0xE00000070000000F)
    log.add(end)
    return log


def test_pebs_enable_cleared_around_drains():
    rep = pebs_with_drains().check()
    assert rep.ok, rep.errors
    assert rep.counts["pebs_off_around_drain"] == 2  # the drain and the final disable
    assert rep.counts["pebs_min_period"] == 1


def test_pebs_enable_left_on_during_drain_fails():
    rep = pebs_with_drains(pebs_off=False).check()
    assert any("not cleared right after the global disable" in e for e in errors_of(rep, "pebs")), rep.errors


def test_pebs_enable_not_restored_fails():
    rep = pebs_with_drains(restore=False).check()
    assert any("does not restore IA32_PEBS_ENABLE" in e for e in errors_of(rep, "pebs")), rep.errors


def test_pebs_period_below_32_fails():
    rep = pebs_log(period=16).check()
    assert any("below 32" in e for e in errors_of(rep, "pebs")), rep.errors


# ---- IA32_DEBUGCTL.FREEZE_WHILE_SMM ----------------------------------------------------------------

def smm_log(fr, write=True, read_first=True, after_window=False, lbr_drops=False, **kw):
    log = Log("nhm")
    pmu_record(log, **kw)
    log.recs[0]["pmu"]["freeze_while_smm"] = fr
    if fr is False:
        log.recs[0]["pmu"]["freeze_while_smm_reason"] = "IA32_DEBUGCTL[14] reads back clear"

    def smm():
        if read_first:
            log.r(0x1D9, 0)
        log.w(0x1D9, 1 << 14)
        log.r(0x1D9, 1 << 14)
    if write and not after_window:
        smm()
    intel_counting(log, GOOD_GPS[:1])
    if write and after_window:
        smm()
    if lbr_drops:
        log.w(0x1D9, 0x1)  # an LBR enable that lost bit 14
    return log


def test_smm_freeze_set_before_measuring():
    rep = smm_log(True).check()
    assert rep.ok, rep.errors
    assert rep.counts["smm_freeze_set"] == 1
    assert smm_log(False).check().ok  # tried, the CPU did not keep it: said so


def test_smm_freeze_rules():
    assert any("not set before the first measurement" in e for e in errors_of(smm_log(True, write=False).check(),
                                                                                  "smm"))
    assert errors_of(smm_log(True, after_window=True).check(), "smm")
    assert any("without reading it first" in e for e in errors_of(smm_log(True, read_first=False).check(), "smm"))
    assert any("drops FREEZE_WHILE_SMM" in e for e in errors_of(smm_log(True, lbr_drops=True).check(), "smm"))
    # Not supported: never written.
    rep = smm_log("not supported (PERF_CAPABILITIES[12] clear)").check()
    assert any("although the run says" in e for e in errors_of(rep, "smm"))
    assert smm_log("not supported (PERF_CAPABILITIES[12] clear)", write=False).check().ok

