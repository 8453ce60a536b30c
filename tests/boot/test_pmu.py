"""PMU boot tests (issues 4 and 7): the PMU flow under QEMU TCG.

Plain TCG has no PMU: the summary says unavailable, nothing is programmed, no number is faked.
With pmu_assume=MODEL the kernel takes that model's capabilities and runs its whole PMU flow against
QEMU's silent MSRs; every MSR access is traced, and scripts/check_msr_trace.py checks the trace
against the spec documents. Each boot takes 5-8 s under TCG.
"""
import importlib.util
import os
import sys

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
SELFTEST_CHECKS = {"inst_retired_exact", "cycles_vs_tsc", "overflow", "offcore_response", "pebs_l1", "lbr_loop",
                   "uncore_clock"}


def dry_run(cpu, model, smp=1, extra=""):
    b = boot(cpu=cpu, smp=smp, mem="1G", args="pmu_assume=%s %s %s" % (model, DRY, extra), timeout=120)
    assert b.run.status == "ok" and b.result.status == "ok"
    return b


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
    assert {"inst_retired_exact", "cycles_vs_tsc", "overflow"} <= failed
    assert all(c["status"] in ("failed", "skipped") for c in st["checks"])
    assert "counting" in st["disabled"]
    inst = next(c for c in st["checks"] if c["name"] == "inst_retired_exact")
    assert inst["detail"].startswith("counted 0 ")
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
