"""scripts/check_msr_trace.py: the SMI-restart rule (SDM Vol. 3B "Freezing counters on SMI") and the family 15h
counter constraints, on synthetic logs.

With IA32_DEBUGCTL.FREEZE_WHILE_SMM an SMI clears IA32_PERF_GLOBAL_CTRL and RSM sets every enable bit of it to 1.
The checker simulates that SMI at every counter read after a window's global disable: a counter still enabled in
its PERFEVTSELx or IA32_FIXED_CTR_CTRL field would count again. The stop that clears only IA32_PERF_GLOBAL_CTRL
(the old pmu_group_stop) is reported; the stop that also clears the local enables passes and is counted; a PEBS
drain that reads its counter with EN still set is reported. The logs are built with test_check_msr_trace.py's
helpers.
"""
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)

from test_check_msr_trace import EN_USR_OS, Log, fixed, gp, hx  # noqa: E402


def errors_of(rep, check):
    return [e for e in rep.errors if e.startswith(check + ":") and "still enabled locally" in e]

EN = 1 << 22
GPS = [("MEM_LOAD_RETIRED:L1D_HIT", 0, EN_USR_OS | 0x01CB), ("MEM_INST_RETIRED:LOADS", 1, EN_USR_OS | 0x010B)]
FIXEDS = [("INSTRUCTION_RETIRED", 0), ("UNHALTED_CORE_CYCLES", 1)]


def smm_log(freeze=False, clear_gp=True, clear_fixed=True, model="nhm", pebs_drain=False):
    """One counting window as pmu/counting.c programs it; freeze: the run record's freeze_while_smm (None: no key,
    a run from before the rule). clear_*: whether the stop clears the local enables before the reads."""
    log = Log(model)
    if freeze is not None:
        log.recs[0]["pmu"]["freeze_while_smm"] = freeze
        if freeze is False:
            log.recs[0]["pmu"]["freeze_while_smm_reason"] = "IA32_DEBUGCTL[14] reads back clear"
    events = [gp(n, i, c) for (n, i, c) in GPS] + [fixed(n, j) for (n, j) in FIXEDS]
    mask = sum(1 << i for (_, i, _) in GPS) | sum(1 << (32 + j) for (_, j) in FIXEDS)
    fctl = sum(0x3 << (4 * j) for (_, j) in FIXEDS)
    if freeze is not None:  # set before the first measurement (the "smm" rule of test_check_msr_trace_errata.py)
        log.r(0x1D9, 0)
        log.w(0x1D9, 1 << 14)
        log.r(0x1D9, 1 << 14 if freeze else 0)
    mid = log.measure("counting", events, global_ctrl=hx(mask))
    log.w(0x38F, 0)
    for (_, i, c) in GPS:
        log.w(0x186 + i, c)
        log.w(0xC1 + i, 0)
    for (_, j) in FIXEDS:
        log.w(0x309 + j, 0)
    log.w(0x38D, fctl)
    log.w(0x390, 0xE00000070000000F)
    log.w(0x38F, mask)

    def stop():
        log.w(0x38F, 0)
        if clear_gp:
            for (_, i, c) in GPS:
                log.w(0x186 + i, c & ~EN)
        if clear_fixed:
            log.w(0x38D, 0)

    def restart():
        if clear_gp:
            for (_, i, c) in GPS:
                log.w(0x186 + i, c)
        if clear_fixed:
            log.w(0x38D, fctl)
        log.w(0x38F, mask)

    if pebs_drain:  # a poll drain: stop, read the counter, restart
        stop()
        log.r(0xC1)
        restart()
    stop()
    log.r(0x38E)
    for (_, i, _) in GPS:
        log.r(0xC1 + i)
    for (_, j) in FIXEDS:
        log.r(0x309 + j)
    for (_, i, _) in GPS:
        log.w(0x186 + i, 0)
    log.w(0x38D, 0)
    log.w(0x390, 0xE00000070000000F)
    log.end(mid)
    return log


def test_stop_that_clears_the_local_enables_passes():
    for freeze in (True, False):
        rep = smm_log(freeze=freeze).check()
        assert rep.ok, rep.errors
        assert rep.counts["smm_restart_safe"] == 1
    rep = smm_log(freeze=True, pebs_drain=True).check()
    assert rep.ok, rep.errors
    assert rep.counts["smm_restart_safe"] == 1


def test_global_disable_alone_is_reported():
    """The old stop: IA32_PERF_GLOBAL_CTRL = 0 and the reads, EN still set in every PERFEVTSELx and
    IA32_FIXED_CTR_CTRL: an SMI between them restarts all four counters."""
    rep = smm_log(freeze=True, clear_gp=False, clear_fixed=False).check()
    errs = errors_of(rep, "smm")
    assert len(errs) == 4, errs
    assert {c for c in ("pmc0", "pmc1", "fixed0", "fixed1") if any(" %s (" % c in e for e in errs)} == \
        {"pmc0", "pmc1", "fixed0", "fixed1"}
    assert all("RSM sets IA32_PERF_GLOBAL_CTRL" in e for e in errs)
    assert "smm_restart_safe" not in rep.counts


def test_each_local_enable_is_needed():
    errs = errors_of(smm_log(freeze=True, clear_fixed=False).check(), "smm")
    assert len(errs) == 2 and all("fixed" in e for e in errs), errs
    errs = errors_of(smm_log(freeze=True, clear_gp=False).check(), "smm")
    assert len(errs) == 2 and all("pmc" in e for e in errs), errs


def test_pebs_drain_counter_read_with_en_set_is_reported():
    """A drain that stops with the global disable only: the counter would run during the drain with PEBS off."""
    rep = smm_log(freeze=True, clear_gp=False, clear_fixed=False, pebs_drain=True).check()
    assert errors_of(rep, "smm")


def test_rule_applies_only_where_freeze_while_smm_is_used():
    # No freeze_while_smm in the run record, or "not supported": RSM does not touch IA32_PERF_GLOBAL_CTRL.
    rep = smm_log(freeze=None, clear_gp=False, clear_fixed=False).check()
    assert not errors_of(rep, "smm") and "smm_restart_safe" not in rep.counts
    log = smm_log(freeze=None, clear_gp=False, clear_fixed=False)
    log.recs[0]["pmu"]["freeze_while_smm"] = "not supported (PERF_CAPABILITIES[12] clear)"
    rep = log.check()
    assert not errors_of(rep, "smm") and "smm_restart_safe" not in rep.counts


# ---- family 15h counter constraints (the same file: this round's dry-run rules) ---------------------------------

def f15h_log(placed):
    """One family 15h counting window on the extended counters: placed = [(name, PERF_CTL index, control value)]."""
    log = Log("amd_fam15h", 0)
    evs = [{"name": n, "table": "amd_fam15h", "kind": "amd", "counter": "ctr%d" % i, "index": i, "width": 48,
            "ctl_msr": hx(0xC0010200 + 2 * i), "ctr_msr": hx(0xC0010201 + 2 * i), "ctl": hx(v), "extra_msr": None,
            "escr_msr": None, "preload": "0x0"} for (n, i, v) in placed]
    mid = log.measure("counting", evs, model="amd_fam15h")
    for (_, i, v) in placed:
        log.w(0xC0010200 + 2 * i, v & ~EN)
        log.w(0xC0010201 + 2 * i, 0)
    for (_, i, v) in placed:
        log.w(0xC0010200 + 2 * i, v)
    for (_, i, v) in placed:
        log.w(0xC0010200 + 2 * i, v & ~EN)
    for (_, i, _) in placed:
        log.r(0xC0010201 + 2 * i)
    for (_, i, _) in placed:
        log.w(0xC0010200 + 2 * i, 0)
    log.end(mid)
    return log


USR_OS_EN = 0x430000


def test_family_15h_counter_constraints():
    """The issue's six events: cycles (076H), dispatch stalls (0D1H), L2 misses (07EH) on PERF_CTL0-2 pass; on
    PERF_CTL3-5, where the old scheduler put them as the 4th-6th events, each is reported."""
    good = [("RETIRED_INSTRUCTIONS", 3, USR_OS_EN | 0xC0), ("RETIRED_BRANCH_INSTRUCTIONS", 4, USR_OS_EN | 0xC2),
            ("DATA_CACHE_ACCESSES", 5, USR_OS_EN | 0x40), ("CPU_CLK_UNHALTED", 0, USR_OS_EN | 0x76),
            ("DISPATCH_STALLS", 1, USR_OS_EN | 0xD1), ("L2_CACHE_MISS:ALL", 2, USR_OS_EN | 0x177E)]
    rep = f15h_log(good).check()
    assert not [e for e in rep.errors if "amd_get_event_constraints_f15h" in e], rep.errors
    assert rep.counts["amd_f15h_counter"] == 6
    old = [("RETIRED_INSTRUCTIONS", 0, USR_OS_EN | 0xC0), ("RETIRED_BRANCH_INSTRUCTIONS", 1, USR_OS_EN | 0xC2),
           ("DATA_CACHE_ACCESSES", 2, USR_OS_EN | 0x40), ("CPU_CLK_UNHALTED", 3, USR_OS_EN | 0x76),
           ("DISPATCH_STALLS", 4, USR_OS_EN | 0xD1), ("L2_CACHE_MISS:ALL", 5, USR_OS_EN | 0x177E)]
    errs = [e for e in f15h_log(old).check().errors if "amd_get_event_constraints_f15h" in e]
    assert len(errs) == 3 and all("PERF_CTL0, PERF_CTL1, PERF_CTL2" in e for e in errs), errs
    # Exceptions: 1C0H (EventSelect[11:8] in bits 35:32) only on [5:3]; 08FH only on PERF_CTL0; 031H with two
    # unit-mask bits on none.
    assert [e for e in f15h_log([("r1000000c0", 0, USR_OS_EN | (1 << 32) | 0xC0)]).check().errors
            if "PERF_CTL3, PERF_CTL4, PERF_CTL5" in e]
    assert f15h_log([("r008f", 0, USR_OS_EN | 0x8F)]).check().counts["amd_f15h_counter"] == 1
    assert [e for e in f15h_log([("r0331", 0, USR_OS_EN | 0x0331)]).check().errors if "no core counter" in e]
