"""PMU boot tests (issues 4 and 7, and the Xeon 5500/5600 and Opteron issue): the PMU flow under QEMU TCG.

Plain TCG has no PMU: the summary says unavailable, nothing is programmed, no number is faked.
With pmu_assume=MODEL the kernel takes that model's capabilities and runs its whole PMU flow against
QEMU's silent MSRs; every MSR access is traced, and scripts/check_msr_trace.py checks the trace
against the spec documents. bench=pmu boots take 5-8 s under TCG; the bench=all dry runs (every
PMU-using path: branch, penalty, cycle accounting, bandwidth's uncore check, the latency rows' PEBS
cross-check) about 10 s with the quick profile and max_bytes=64M (the bandwidth sweep must reach the
memory level, 4 x the 16 MiB L3 QEMU reports, for its uncore check to run).
"""
import importlib.util
import os
import re
import sys

import pytest

# This directory's conftest by path: with tests/host in the same pytest run, the name "conftest" can
# resolve to the other directory's file.
HERE = os.path.dirname(os.path.abspath(__file__))
_spec = importlib.util.spec_from_file_location("pmb_boot_conftest", os.path.join(HERE, "conftest.py"))
_conftest = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(_conftest)
ROOT, boot = _conftest.ROOT, _conftest.boot

sys.path.insert(0, os.path.join(ROOT, "scripts"))
import check_msr_trace as chk  # noqa: E402

DRY = "trace_msr=1 bench=pmu"
ALL = "trace_msr=1 bench=all profile=quick max_bytes=64M"
# pmu/pmu_selftest.c on a Nehalem-class PMU: 4 general counters, 3 fixed, 8 uncore general counters.
SELFTEST_CHECKS = ({"instructions_fixed0", "cycles_vs_tsc", "cmask_inv", "overflow", "offcore_request_response",
                    "pebs_l1", "lbr_loop", "uncore_clock"}
                   | {"%s_pmc%d" % (k, i) for k in ("branches", "instructions") for i in range(4)}
                   | {"uncore_stream_unc_pmc%d" % i for i in range(8)})


def dry_run(cpu, model, smp=1, extra="", args=DRY, numa=0, qemu_extra=()):
    b = boot(cpu=cpu, smp=smp, mem="1G", numa=numa, extra=qemu_extra,
             args="pmu_assume=%s %s %s" % (model, args, extra), timeout=120)
    assert b.run.status == "ok" and b.result.status == "ok"
    return b


def console_lines(b):
    return [line.strip("\r") for line in b.log.splitlines() if not line.startswith("{")]


def assert_selftest_report(b):
    """Item 9: every check names its counter and says expected vs counted, in the record and on the console."""
    st = b.one("pmu_selftest")
    lines = console_lines(b)
    head = next(i for i, line in enumerate(lines) if line.startswith("PMU self-test: "))
    assert "%d checks" % len(st["checks"]) in lines[head]
    body = lines[head + 1:head + 1 + len(st["checks"])]
    for c, line in zip(st["checks"], body):
        assert set(c) >= {"name", "status", "detail", "feature", "counter", "event", "counted", "expected_lo",
                          "expected_hi"}
        tag = {"ok": "ok", "failed": "FAIL", "skipped": "skip"}[c["status"]]
        assert line.split()[:2] == [tag, c["name"]], line
        if c["counted"] is not None:
            assert c["counter"] and c["counter"] in line.split()
            assert "expected " in line and "counted %d" % c["counted"] in line
        if c["status"] == "failed" and c["name"].startswith(("branches_", "instructions_", "uncore_stream_")):
            assert not c["expected_lo"] <= c["counted"] <= (c["expected_hi"] if c["expected_hi"] is not None
                                                             else c["counted"]), c
    # Per-counter disabling: a failed check on one core counter disables that counter, says so on its line, and
    # the record lists it with the check; the usable mask is what is left of the model's counters.
    pmu = b.run.run["pmu"]
    by_name = {c["name"]: (c, line) for c, line in zip(st["checks"], body)}
    per_counter = set()
    for kind, n in (("gp", pmu["gp_counters"]), ("fixed", pmu["fixed_counters"])):
        if kind == "fixed" and not n:
            assert "fixed_usable" not in st
            continue
        usable = int(st["%s_usable" % kind], 16)
        gone = st["%s_disabled" % kind]
        assert bin(usable).count("1") + len(gone) == n, (kind, st["%s_usable" % kind], gone)
        for d in gone:
            assert set(d) == {"counter", "check", "reason"} and d["reason"]
            c, line = by_name[d["check"]]
            assert c["status"] == "failed" and c["feature"] == "counting", c
            assert line.endswith("%s disabled" % d["counter"]), line
            assert not usable & (1 << int(re.search(r"(\d+)$", d["counter"]).group(1)))
        per_counter |= {c["name"] for c, line in by_name.values()
                        if c["status"] == "failed" and any(line.endswith("%s disabled" % d["counter"]) for d in gone)}
    gp_gone = int(st["gp_usable"], 16) == 0
    for f in st["disabled"]:
        covered = [c for c in st["checks"] if c["feature"] == f and c["status"] == "failed"]
        assert covered or (gp_gone and f in ("counting", "overflow", "pebs", "offcore")), \
            "feature %s disabled with no failed check covering it" % f
    # a failure disables only what it covers: its counter, or else its feature
    failed_features = {c["feature"] for c in st["checks"] if c["status"] == "failed" and c["name"] not in per_counter}
    assert failed_features <= set(st["disabled"])
    if "counting" in st["disabled"] and "counting" not in failed_features:
        assert gp_gone


def assert_trace_records(b):
    traces = b.run.by_type("msr_trace")
    assert traces
    for t in traces[:50]:
        assert set(t) >= {"cpu", "op", "msr", "value", "safe", "ok"}
        assert t["op"] in ("read", "write") and t["msr"].startswith("0x") and t["value"].startswith("0x")
    # Every trace comes after the run record (the log contract) and in order.
    assert b.run.records[0]["type"] == "run"
    seqs = [t["seq"] for t in traces]
    assert seqs == list(range(seqs[0], seqs[0] + len(seqs)))


def assert_assumed(b, model):
    """Zero counts are never reported as measurements; the self-test fails honestly."""
    pmu = b.run.run["pmu"]
    assert pmu["assumed"] == model and pmu["model"] == model and pmu["status"] == "assumed"
    assert set(pmu) >= {"vendor", "version", "gp_counters", "gp_width", "fixed_counters", "fixed_width",
                        "pebs_format", "lbr_format", "lbr_depth", "offcore", "uncore", "status", "reason"}
    st = b.one("pmu_selftest")
    assert st["status"] == "failed" and st["assumed"] == model
    failed = {c["name"] for c in st["checks"] if c["status"] == "failed"}
    assert {"cycles_vs_tsc", "overflow"} <= failed and any(n.startswith("instructions_") for n in failed)
    assert all(c["status"] in ("failed", "skipped") for c in st["checks"])
    assert "counting" in st["disabled"]
    inst = next(c for c in st["checks"] if c["name"].startswith("instructions_"))
    assert inst["detail"].startswith("0 over 20000 iterations, 0 over 40000") and inst["counted"] == 0
    assert_selftest_report(b)
    recs = b.run.by_type("pmu_counting")
    assert {r["what"] for r in recs} >= {"counting", "offcore"}
    for r in recs:
        if r["counters_status"] == "unavailable" and r["counters"] is not None:
            assert r["counters_reason"] == "assumed PMU"
            assert all(v is None for v in r["counters"].values())
        for k in ("read_bytes_per_s", "write_bytes_per_s", "dram_bytes_per_s"):
            assert r.get(k) is None
    for r in b.run.by_type("pebs_latency"):
        assert r["status"] == "unavailable" and r["samples"] == 0 and r["mean_cycles"] is None
    lbr = b.one("lbr")
    assert lbr["lbr"] is None and lbr["loop_branch_hits"] is None and lbr["lbr_status"] == "unavailable"
    # Item 6: one bandwidth summary, every socket read or named; nothing measured in a dry run.
    ub = b.one("uncore_bandwidth")
    assert ub["status"] == "unavailable" and ub["reason"]
    assert ub["sockets_read"] + len(ub["sockets_not_read"]) >= 1
    assert all(s["reason"] for s in ub["sockets_not_read"])
    assert all(v is None for v in ub["total"].values())
    assert_trace_records(b)
    rep = chk.check_run(b.run)
    assert rep.ok, "\n".join(rep.errors)
    return rep


def test_dry_run_nehalem():
    b = dry_run("Nehalem", "nhm", smp=2)
    rep = assert_assumed(b, "nhm")
    pmu = b.run.run["pmu"]
    assert (pmu["version"], pmu["gp_counters"], pmu["gp_width"], pmu["fixed_counters"]) == (3, 4, 48, 3)
    assert (pmu["pebs_format"], pmu["lbr_depth"], pmu["offcore"], pmu["uncore"]) == (1, 16, 1, "nhm")
    st = b.one("pmu_selftest")
    assert {c["name"] for c in st["checks"] if c["status"] == "failed"} == SELFTEST_CHECKS
    assert set(st["disabled"]) == {"counting", "overflow", "pebs", "lbr", "uncore", "offcore"}
    # Zero counts judge every checked counter wrong, one by one (recorded; not enforced under pmu_assume): PMC0-3 by
    # their branch checks, FIXED_CTR0 by instructions, FIXED_CTR1 by cycles_vs_tsc; FIXED_CTR2 has no check.
    assert st["gp_usable"] == "0x0" and st["fixed_usable"] == "0x4"
    assert [(d["counter"], d["check"]) for d in st["gp_disabled"]] == [("PMC%d" % i, "branches_pmc%d" % i)
                                                                      for i in range(4)]
    assert [(d["counter"], d["check"]) for d in st["fixed_disabled"]] == [("FIXED_CTR0", "instructions_fixed0"),
                                                                         ("FIXED_CTR1", "cycles_vs_tsc")]
    assert st["gp_disabled"][2]["reason"] == "expected 20000 +-2, counted 0"
    # Each general counter counts conditional branches with a unit mask ([PAG] Table 6: C4H/01H) and instructions.
    for i in range(4):
        ws = [m for m in b.run.by_type("pmu_measure") if m.get("label") == "branches_pmc%d" % i]
        assert len(ws) == 2 and all(int(m["events"][0]["ctl"], 16) & 0xFFFF == 0x01C4 for m in ws)
        assert all(m["events"][0]["counter"] == "pmc%d" % i for m in ws)
    # The off-core check programs the flow's local-DRAM value (Nehalem LOCAL_DRAM, bit 14) and its byte swap.
    off = {m["label"]: m["events"][0]["extra"] for m in b.run.by_type("pmu_measure") if m["what"] == "selftest:offcore"}
    assert off == {"value": "0x4001", "byte_swapped": "0x140"}
    counting = next(r for r in b.run.by_type("pmu_counting") if r["what"] == "counting")
    assert counting["events_source"] == "default" and counting["counters_reason"] == "assumed PMU"
    assert len(counting["counter_groups"]) == 2  # 7 general events on 4 counters
    off = next(r for r in b.run.by_type("pmu_counting") if r["what"] == "offcore")
    assert len(off["counter_groups"]) == 3  # one OFFCORE_RSP MSR on Nehalem: one value per group
    assert any(r["what"] == "uncore_bandwidth" for r in b.run.by_type("pmu_counting"))
    # Encodings, order, PEBS, DS area, uncore and LBR were all actually checked, not just absent.
    c = rep.counts
    assert c["evtsel_spec"] >= 7 and c["fixed_spec"] >= 3 and c["offcore_value"] >= 4
    assert c["uncore_evtsel_spec"] >= 4 and c["uncore_fixed_spec"] >= 2
    assert c["pebs_enable"] >= 2 and c["pebs_ldlat"] >= 2 and c["ds_area_pointer"] >= 2
    assert c["lbr_stack_read"] >= 2 and c["disabled_at_end"] >= 12
    # An SMI simulated at every read after a stop (RSM sets IA32_PERF_GLOBAL_CTRL) restarts nothing.
    assert c["smm_restart_safe"] >= 20 and c["selftest_offcore_local_dram"] == 1
    # Item 9/10: what the self-test programs, and values from the documents, not from the kernel's records.
    for k in ("selftest_every_counter", "selftest_offcore_swap", "selftest_cmask_pair", "selftest_uncore_counters",
              "lbr_select_doc"):
        assert c[k] >= 1, k
    assert c["global_enable_doc"] >= 20 and c["ovf_clear_doc"] >= 40 and c["counter_start_doc"] >= 50
    assert c["uncore_enable_doc"] >= 9 and c["pebs_ldlat_doc"] >= 2 and c["pebs_period_doc"] >= 2
    unc = [r for r in b.run.by_type("pmu_counting") if r["what"] == "uncore_bandwidth"]
    assert [(r["socket"], r["node"], r["cpu"]) for r in unc] == [(0, 0, 0)]
    assert {"UNC_QMC_NORMAL_READS:ANY", "UNC_QMC_WRITES:FULL_ANY", "UNC_QHL_REQUESTS:LOCAL_READS",
            "UNC_QHL_REQUESTS:REMOTE_READS"} <= set(unc[0]["counters"])
    ds = b.run.by_type("ds_area")
    assert ds and all(d["record_size"] == 0xB0 and d["pebs_index"] == d["pebs_buffer_base"] for d in ds)
    assert {a["what"] for a in b.run.by_type("pmu_alloc")} == {"ds_area", "pebs_buffer"}
    # Two CPUs: the trace comes from the BSP.
    assert {t["cpu"] for t in b.run.by_type("msr_trace")} == {0}


def test_dry_run_westmere_with_config_events():
    # [PAG] Table 1/3 events that Westmere encodes as Nehalem does (MEM_UNCORE_RETIRED differs).
    events = "MEM_LOAD_RETIRED:L1D_HIT,ARITH:CYCLES_DIV_BUSY,UOPS_ISSUED:ANY,RESOURCE_STALLS:ANY," \
             "UOPS_EXECUTED:PORT015_STALL_CYCLES,MEM_STORE_RETIRED:DTLB_MISS,INSTRUCTION_RETIRED"
    b = dry_run("Westmere", "wsm", extra="events=" + events)
    rep = assert_assumed(b, "wsm")
    assert b.run.run["pmu"]["offcore"] == 2
    counting = next(r for r in b.run.by_type("pmu_counting") if r["what"] == "counting")
    assert counting["events_source"] == "config"
    assert set(counting["counters"]) == set(events.split(","))
    assert len(counting["counter_groups"]) == 2
    # Westmere moves an off-core request to MSR_OFFCORE_RSP_1 with event BBH ([NHM] Table 11).
    measures = b.run.by_type("pmu_measure")
    rsp1 = [e for m in measures for e in m["events"] if e.get("extra_msr") == "0x1a7"]
    assert rsp1 and all(int(e["ctl"], 16) & 0xFF == 0xBB for e in rsp1)
    # the six configured general events, the self-test's overflow and PEBS events, the flow's PEBS event
    assert rep.counts["evtsel_spec"] >= 6 + 3
    # 06_2C (table wsm_dp): the self-test's off-core value is the flow's LOCAL_DRAM_AND_REMOTE_CACHE_HIT (bit 12)
    # request, not 6001H (REMOTE_DRAM | OTHER_LLC_MISS there).
    off = {m["label"]: m["events"][0]["extra"] for m in b.run.by_type("pmu_measure") if m["what"] == "selftest:offcore"}
    assert off == {"value": "0x1001", "byte_swapped": "0x110"}
    assert rep.counts["selftest_offcore_local_dram"] == 1 and rep.counts["smm_restart_safe"] >= 20


def test_dry_run_amd_family_10h():
    b = dry_run("Opteron_G3", "amd_fam10h")
    rep = assert_assumed(b, "amd_fam10h")
    pmu = b.run.run["pmu"]
    assert pmu["vendor"] == "AuthenticAMD" and pmu["gp_counters"] == 4 and pmu["uncore"] == "none"
    st = {c["name"]: c for c in b.one("pmu_selftest")["checks"]}
    assert st["pebs_l1"]["status"] == "skipped" and "amd_fam10h" in st["pebs_l1"]["detail"]
    assert st["lbr_loop"]["status"] == "skipped"
    assert rep.counts["amd_evtsel_spec"] >= 9
    dram = next(r for r in b.run.by_type("pmu_counting") if r["what"] == "dram_bandwidth")
    assert dram["dram_bytes_per_s"] is None and dram["counters_reason"] == "assumed PMU"
    # Item 7: [AMD] 4.2.2 - one counter per DRAM controller, E0H/07H (DCT0) and E0H/38H (DCT1), on a core counter.
    dram_sel = {int(e["ctl"], 16) & 0xFFFF for m in b.run.by_type("pmu_measure") if m.get("label") == "dram_bandwidth"
                for e in m["events"] if int(e["ctl"], 16) & 0xFF == 0xE0}
    assert dram_sel == {0x07E0, 0x38E0}
    # F2x110[DctGangEn] cannot be read under QEMU (no northbridge device 18H): unknown, both DCTs summed.
    assert dram["dct_ganged"] is None and dram["dram_dcts"] == "DCT0 + DCT1"
    assert b.one("uncore_bandwidth")["what"] == "dram_bandwidth"
    # Per-counter checks on CTR0-3 with AMD's events (no unit mask exists for C2H: the record says so).
    st = b.one("pmu_selftest")
    assert {"branches_ctr%d" % i for i in range(4)} <= {c["name"] for c in st["checks"]}
    assert "unit mask" in st["note"]
    assert rep.counts["selftest_every_counter"] == 1 and rep.counts["selftest_cmask_pair"] == 1
    # Not assumed-PMU but absent: these say why.
    pebs = b.one("pebs_latency")
    assert "PEBS" in pebs["reason"] and pebs["reason"] != "assumed PMU"
    msrs = {int(t["msr"], 16) for t in b.run.by_type("msr_trace")}
    assert not msrs & set(range(0x186, 0x18E)) and 0x38F not in msrs and 0x3F1 not in msrs
    assert msrs & set(range(0xC0010000, 0xC0010008))


def test_dry_run_netburst():
    b = dry_run("qemu64,vendor=GenuineIntel,family=15,model=2,stepping=9", "netburst")
    rep = assert_assumed(b, "netburst")
    assert rep.counts["netburst_spec"] >= 6 and rep.counts["lbr_stack_read"] >= 1
    counting = next(r for r in b.run.by_type("pmu_counting") if r["what"] == "counting")
    assert counting["counters_reason"] == "assumed PMU"
    # instr_retired and mispred_branch_retired share CRU_ESCR0/1: both ESCRs end up used.
    escrs = {e["escr_msr"] for m in b.run.by_type("pmu_measure") for e in m["events"] if e.get("escr_msr")}
    assert {"0x3b8", "0x3b9"} <= escrs


def test_events_error_names_close_matches():
    b = dry_run("Nehalem", "nhm", extra="events=MEM_LOAD_RETRIED:L1D_HIT")
    counting = next(r for r in b.run.by_type("pmu_counting") if r["what"] == "counting")
    assert counting["counters_status"] == "error" and counting["counters"] is None
    assert "did you mean MEM_LOAD_RETIRED" in counting["counters_reason"]
    assert chk.check_run(b.run).ok


def test_plain_tcg_has_no_pmu_and_fakes_nothing():
    b = boot(cpu="Nehalem", smp=1, mem="1G", args=DRY, timeout=120)
    assert b.run.status == "ok"
    pmu = b.run.run["pmu"]
    assert pmu["status"] == "unavailable" and "TCG" in pmu["reason"] and "assumed" not in pmu
    assert pmu["version"] == 0 and pmu["gp_counters"] == 0 and pmu["pebs_format"] == 0
    st = b.one("pmu_selftest")
    assert st["status"] == "unavailable" and st["checks"] == []
    for r in b.run.by_type("pmu_counting"):
        assert r["counters_status"] == "unavailable" and r["counters"] is None and "TCG" in r["counters_reason"]
    assert b.one("pebs_latency")["status"] == "unavailable"
    assert b.one("lbr")["lbr"] is None
    assert not b.run.by_type("pmu_measure") and not b.run.by_type("ds_area")
    assert chk.pmu_writes(b.run) == 0


def test_dry_run_two_sockets_uncore_per_socket():
    """Item 6: two sockets, two nodes - each socket's uncore programmed by a CPU on it, its stream on that CPU's
    node, reported per socket and in total."""
    b = dry_run("Nehalem", "nhm", smp=2, numa=2, qemu_extra=("-smp", "2,sockets=2,cores=1,threads=1"))
    rep = assert_assumed(b, "nhm")
    cpus = {c["index"]: c for c in b.one("smp")["cpus"]}
    assert {c["package"] for c in cpus.values()} == {0, 1} and {c["node"] for c in cpus.values()} == {0, 1}
    unc = [r for r in b.run.by_type("pmu_counting") if r["what"] == "uncore_bandwidth"]
    assert sorted((r["socket"], r["node"]) for r in unc) == [(0, 0), (1, 1)]
    for r in unc:
        assert cpus[r["cpu"]]["package"] == r["socket"] and cpus[r["cpu"]]["node"] == r["node"]
    ub = b.one("uncore_bandwidth")
    assert ub["sockets_read"] == 2 and ub["sockets_not_read"] == []
    assert sorted(s["socket"] for s in ub["sockets"]) == [0, 1]
    # Socket 1's window: every access by CPU 1, the uncore MSRs only.
    remote = [m for m in b.run.by_type("pmu_measure") if m.get("cpu") == 1]
    assert len(remote) == 1 and remote[0]["socket"] == 1
    cpu1 = [t for t in b.run.by_type("msr_trace") if t["cpu"] == 1]
    assert cpu1 and all(0x391 <= int(t["msr"], 16) <= 0x3C7 for t in cpu1)
    assert rep.counts["socket_read_locally"] == 1 and rep.counts["socket_stream_local"] == 2
    assert rep.counts["sockets_accounted"] == 1


def test_dry_run_amd_family_15h_northbridge():
    """Item 7: family 15h with PerfCtrExtNB - DRAM accesses of both DCTs on the northbridge counters."""
    b = dry_run("Opteron_G3", "amd_fam15h")
    rep = assert_assumed(b, "amd_fam15h")
    assert b.run.run["pmu"]["uncore"] == "amd_nb"
    nb = [e for m in b.run.by_type("pmu_measure") if m.get("label") == "dram_bandwidth" for e in m["events"]]
    assert {e["kind"] for e in nb} == {"amd_nb"}
    assert {(e["ctl_msr"], int(e["ctl"], 16) & 0xFFFF) for e in nb} == {("0xc0010240", 0x07E0),
                                                                      ("0xc0010242", 0x38E0)}
    st = {c["name"]: c for c in b.one("pmu_selftest")["checks"]}
    assert {"uncore_stream_nb_ctr%d" % i for i in range(4)} <= set(st)
    assert rep.counts["amd_nb_spec"] >= 6 and rep.counts["selftest_uncore_counters"] == 1


# Six events family 15h restricts (Linux amd_get_event_constraints_f15h): 076H, 0D1H, 07EH on PERF_CTL[2:0], 003H
# on [3], 001H and 005H on [5:3]. Written here from the Linux table, not from pmu/.
F15H_EVENTS = {"CPU_CLK_UNHALTED": 0x07, "DISPATCH_STALLS": 0x07, "L2_CACHE_MISS": 0x07, "RETIRED_SSE_OPS": 0x08,
               "CYCLES_FPU_EMPTY": 0x38, "RETIRED_SERIALIZING_OPS": 0x38}


def test_dry_run_amd_family_15h_restricted_events():
    """A user events= list of six restricted events: each on a counter its unit allows, in one group."""
    b = dry_run("Opteron_G3", "amd_fam15h", extra="events=" + ",".join(F15H_EVENTS))
    rep = assert_assumed(b, "amd_fam15h")
    # The checker's own copy of Linux's table agrees for every core event of every window (self-test included).
    assert rep.counts["amd_f15h_counter"] >= 6 + 8
    counting = next(r for r in b.run.by_type("pmu_counting") if r["what"] == "counting")
    assert counting["events_source"] == "config" and counting["counters_reason"] == "assumed PMU"
    assert counting["counter_groups"] == [list(F15H_EVENTS)]
    ws = [m for m in b.run.by_type("pmu_measure") if m["what"] == "counting" and m.get("label") == "counting"]
    assert len(ws) == 1
    placed = {e["name"]: e for e in ws[0]["events"]}
    assert set(placed) == set(F15H_EVENTS)
    for name, allowed in F15H_EVENTS.items():
        e = placed[name]
        assert e["kind"] == "amd" and allowed >> e["index"] & 1, (name, e["counter"])
        assert e["ctl_msr"] == "0x%x" % (0xC0010200 + 2 * e["index"])
    # The same list with 031H carrying two unit-mask bits: refused by name with the reason, nothing counted.
    b = dry_run("Opteron_G3", "amd_fam15h", extra="events=CPU_CLK_UNHALTED,r0331")
    counting = next(r for r in b.run.by_type("pmu_counting") if r["what"] == "counting")
    assert counting["counters_status"] == "error" and counting["counters"] is None
    assert "r0331" in counting["counters_reason"] and "one unit-mask bit" in counting["counters_reason"]
    assert not [m for m in b.run.by_type("pmu_measure") if m["what"] == "counting" and m.get("label") == "counting"]
    assert chk.check_run(b.run).ok


@pytest.mark.parametrize("cpu,model", [("Nehalem", "nhm"), ("Westmere", "wsm"), ("Opteron_G3", "amd_fam10h")])
def test_dry_run_every_pmu_path(cpu, model):
    """Item 10: bench=all under pmu_assume - branch with its mispredict events, the penalty counters, the
    cycle-accounting groups, the bandwidth uncore/DRAM check and the latency rows' PEBS cross-check all program
    the (silent) MSRs, the checker verifies every window, and no count becomes a figure."""
    b = dry_run(cpu, model, args=ALL)
    rep = assert_assumed(b, model)
    amd = model.startswith("amd")
    bench_events = {e["name"] for m in b.run.by_type("pmu_measure") if m.get("label") == "cycle_accounting"
                    for e in m["events"]}
    # branch: mispredicted branches; penalty: core cycles; cycle accounting: stall cycles
    assert any("MISP" in n for n in bench_events), bench_events
    assert ("CPU_CLK_UNHALTED" if amd else "UNHALTED_CORE_CYCLES") in bench_events
    assert ("DISPATCH_STALLS" if amd else "UOPS_RETIRED:STALL_CYCLES") in bench_events
    # bandwidth's DRAM check at the memory level: the uncore's QMC events, AMD's two DCTs
    if amd:
        assert {"DRAM_ACCESSES_PAGE:HIT:MISS:CONFLICT",
                "DRAM_ACCESSES_PAGE:DCT1_PAGE_HIT:DCT1_PAGE_MISS:DCT1_PAGE_CONFLICT"} <= bench_events
    else:
        assert {"UNC_QMC_NORMAL_READS:ANY", "UNC_QMC_WRITES:FULL_ANY"} <= bench_events
    mem = [r for r in b.run.by_type("bandwidth") if r.get("level") == "memory" and "uncore" in r]
    assert mem and all(r["uncore"]["status"] == "unavailable" and r["uncore"]["reason"] == "PMU: assumed PMU"
                       and r["uncore"]["socket"] == 0 for r in mem)
    for r in b.run.by_type("cycle_accounting"):
        assert r["status"] == "unavailable" and r["reason"] == "PMU: assumed PMU", r
    # the latency rows' PEBS cross-check (Nehalem-class PEBS only)
    rows = {r["source"] for r in b.run.by_type("data_source") if r.get("status") == "ok"}
    pebs_rows = {r["row"] for r in b.run.by_type("pebs_latency")}
    if amd:
        assert not [m for m in b.run.by_type("pmu_measure") if m["what"] == "pebs" and m.get("label") in rows]
    else:
        assert rows and rows <= pebs_rows
        assert rep.counts["pebs_enable"] >= 2 + len(rows)
    assert rep.counts["windows"] >= 100
    assert rep.counts.get("evtsel_spec", 0) + rep.counts.get("amd_evtsel_spec", 0) >= 90
