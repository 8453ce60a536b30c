"""Latency benchmark tests (issue 3): the sweep, the Table 2 rows, c2c, NUMA and loaded latency under QEMU TCG,
and the hosted runner on this machine. Under TCG the numbers mean little: these tests check structure, units
and sanity (positive, finite, consistent between units), never values."""
import math
import os
import re
import subprocess
import sys
import time
import types

import pytest

from conftest import ROOT, boot, independent_crc

sys.path.insert(0, os.path.join(ROOT, "scripts"))
from pmb import parse  # noqa: E402

SOURCES = ["L1", "L2", "L3_unshared", "L3_shared_other_core", "L3_modified_other_core", "remote_L3",
           "local_DRAM", "remote_DRAM"]
# Keys the statistics key convention replaced (docs/records.md, "Migration"): a fresh record has none of them.
LEGACY_LATENCY_KEYS = ("ns", "cv", "robust_cv", "samples", "min_ns", "p10_ns", "p90_ns", "max_ns")
ALL = "bench=latency,c2c,numa_latency,loaded_latency"
HOST_BENCH = os.path.join(ROOT, "build", "host-bench", "pmubench-host")


def pos(v):
    return isinstance(v, (int, float)) and not isinstance(v, bool) and math.isfinite(v) and v > 0


def assert_units(r, parsed, what):
    """A latency figure: its statistics in ns (docs/records.md, "Statistics keys"), and the same median
    converted to TSC ticks and cycles: check both conversions."""
    assert r["unit"] == "ns", (what, r)
    assert pos(r["tsc"]) and pos(r["median"]) and pos(r["cycles"]), (what, r)
    assert r["median"] == pytest.approx(r["tsc"] * 1e9 / parsed.run["tsc_hz"], rel=1e-6), what
    assert r["cycles"] == pytest.approx(r["tsc"] * r["core_tsc_ratio"], rel=1e-6), what
    clocks = [c["clock"] for c in parsed.by_type("core_clock") if c["cpu"] == 0 and c["status"] == "ok"]
    u = r["core_tsc_ratio_u"]
    if r["cycles_method"] in ("core_tsc_ratio:clock_chains, after the measurement",
                              "core_tsc_ratio:clock_chains, after each replicate (median)",
                              "core_tsc_ratio:clock_chains, steady reference"):
        # The add chain timed again right after the chase (each replicate's, their median; or its steady
        # reference when no window read clean): only where the benchmark's ratio is that chain's; its
        # uncertainty stated (at least its reading, 2 clock steps).
        assert math.isfinite(r["core_tsc_ratio"]) and r["core_tsc_ratio"] > 0, (what, r)
        assert any(c["method"] == "add_rr_chain" for c in clocks), (what, r)
        assert isinstance(u, float) and 0 < u < 1, (what, r)
    elif r["cycles_method"].startswith("core_tsc_ratio:"):
        # The ratio the benchmark CPU measured just before this benchmark (a core_clock record of CPU 0); its
        # uncertainty not stated (the runs' spread is in that record).
        assert any(r["core_tsc_ratio"] == pytest.approx(c["ratio"], rel=1e-9) and
                   r["cycles_method"] == "core_tsc_ratio:" + c["method"] for c in clocks), (what, r)
        assert u is None, (what, r)
    assert math.isfinite(r["spread"]) and r["spread"] >= 0
    assert r["n"] >= 1
    assert r["min"] <= r["p10"] <= r["median"] <= r["p90"] <= r["max"]
    for k in LEGACY_LATENCY_KEYS:
        assert k not in r, (what, k)


def assert_reference(r):
    """The row's guide reference, as the record states it (bench/lat_plan.c is its one source)."""
    lo, hi, unit = r["reference_lo"], r["reference_hi"], r["reference_unit"]
    assert 0 < lo <= hi and unit in ("cycles", "ns"), r["source"]
    assert r["reference"] == ("~%g %s" % (lo, unit) if lo == hi else "~%g-%g %s" % (lo, hi, unit))
    assert r["guide"], r["source"]


def data_sources(b):
    rows = b.run.by_type("data_source")
    assert [r["source"] for r in rows] == SOURCES  # every row, once, in the guide's order
    by = {r["source"]: r for r in rows}
    for s, r in by.items():
        assert_reference(r)
        assert r["status"] in ("ok", "unavailable"), s
        assert r["method"] in ("chase_steady_state", "placed_one_pass"), s
        if r["status"] == "unavailable":
            assert r["reason"], s
            assert r["unit"] == "ns" and r["median"] is None and r["n"] == 0, s
            assert "cycles" not in r and "tsc" not in r and "ns" not in r, s
        else:
            assert_units(r, b.run, s)
            assert r["placement"] and r["bytes"] > 0 and r["lines"] > 0
    return by


def sweep_points(b):
    pts = b.run.by_type("latency_sweep")
    series = {}
    for p in pts:
        assert p["mode"] in ("random", "page")
        assert p["bytes"] == p["lines"] * p["line_bytes"]
        assert_units(p, b.run, "sweep %s" % p["bytes"])
        series.setdefault((p["mode"], p["page_bytes"]), []).append(p["bytes"])
    for k, sizes in series.items():
        assert sizes == sorted(sizes) and len(set(sizes)) == len(sizes), k
    return series


def llc_bytes(run):
    return max(c["bytes"] for c in run["caches"] if c["type"] in ("data", "unified"))


def bench_seconds(log, name):
    m = re.search(r"== bench %s done in ([0-9.]+) s" % name, log)
    assert m, "no end line for %s" % name
    return float(m.group(1))


def arrival_seconds(stamped, name):
    """Host time between the arrival of "== bench NAME:" and of "== bench NAME done in" on the serial line."""
    start = next(t for t, s in stamped if s.startswith("== bench %s:" % name))
    end = next(t for t, s in stamped if s.startswith("== bench %s done in" % name))
    return end - start


def test_quick_smp4_two_nodes_every_record_and_fast():
    stamped = []
    b = boot(cpu="Nehalem", smp=4, mem="2G", numa=2, args=ALL, timeout=150,
             on_line=lambda s: stamped.append((time.monotonic(), parse.clean_text(s).strip())))
    run = b.run.run
    assert b.run.status == "ok" and run["profile"] == "quick" and run["cpus"] == 4

    # Minimal mode (docs/measurement.md): under TCG every benchmark takes its minimum samples, no stop rule
    # and no convergence loop; the run record and the console say so once.
    assert run["minimal_samples"] is True and "TCG" in run["minimal_samples_why"]
    assert b.log.count("Samples  minimum only") == 1
    for r in b.run.by_type("latency_sweep"):
        assert r["n"] == 7 and r["converged"] is False, r["figure"]
    for r in b.run.by_type("c2c"):
        for k in ("hitm", "hit"):
            assert r[k]["n"] == 3, (r["from_cpu"], r["to_cpu"], k)

    # Each benchmark's reported time against the host's clock on the serial lines (the c2c line was once
    # suspected of 0.006 s for a second of work). Under TCG the guest TSC follows QEMU's virtual clock, which
    # runs with the host's monotonic clock, and the kernel's TSC rate is calibrated against the emulated PM
    # timer/HPET on that same clock, so both measure the same interval. Differences: the kernel's window
    # starts after the per-benchmark core-clock measurement printed after the start line (~15 ms here) and
    # the lines reach the host through the serial chardev and a pipe (a few ms, more when the 4 vCPU threads
    # compete for 2 host CPUs): 0.2 s + 10 % covers both and still catches a time off by a factor of 2.
    for name in ("latency", "c2c", "numa_latency", "loaded_latency"):
        host = arrival_seconds(stamped, name)
        assert abs(bench_seconds(b.log, name) - host) <= 0.2 + 0.1 * host, (name, bench_seconds(b.log, name), host)
    # c2c, whose reported time was once a fraction of the work's (0.006 s for a second): 12 pairs x 2 rows x 3
    # rounds can take well under the tolerance above, which then cannot see a factor, so its time is held
    # against the host's interval itself (less 20 ms of line delays).
    assert bench_seconds(b.log, "c2c") >= 0.5 * arrival_seconds(stamped, "c2c") - 0.02

    # The whole quick run (4 latency benchmarks, 4 vCPUs under TCG) in well under 30 s of kernel time.
    m = re.search(r"pmubench: run ok after ([0-9.]+) s", b.log)
    assert m and float(m.group(1)) < 30, m and m.group(1)
    total = sum(bench_seconds(b.log, n) for n in ("latency", "c2c", "numa_latency", "loaded_latency"))
    assert total < 25, total

    # Sweep: 1 KiB to 2x the LLC (16 MiB here; emulated, minimal samples: not 4x, docs/latency.md "Sweep"),
    # 4 KiB and 2 MiB pages, one point per octave.
    series = sweep_points(b)
    llc = llc_bytes(run)
    assert run["minimal_samples"] is True
    for page in (4096, 2 << 20):
        sizes = series[("random", page)]
        assert sizes[0] == 1024 and sizes[-1] == 1 << (2 * llc - 1).bit_length(), (page, sizes[-1])
        assert all(sizes[i + 1] == 2 * sizes[i] for i in range(len(sizes) - 1))
    assert ("random", 1 << 30) not in series  # Nehalem has no 1 GiB pages
    ls = {(s["mode"], s["page_bytes"]): s for s in b.run.by_type("latency_series")}
    assert ls[("random", 4096)]["status"] == "ok" and ls[("random", 4096)]["page_how"] == "paging_map"
    assert ls[("random", 2 << 20)]["status"] == "ok"

    # Knees vs CPUID: one record per data/unified level, CPUID sizes as the run record has them.
    inferred = b.run.by_type("cache_inferred")
    cpuid = sorted((c["level"], c["bytes"]) for c in run["caches"] if c["type"] in ("data", "unified"))
    assert sorted((r["level"], r["cpuid_bytes"]) for r in inferred) == cpuid
    for r in inferred:
        # One point per octave (quick) cannot place a knee well enough to judge a size: no verdict at all.
        assert r["points_per_octave"] == 1 and r["agrees"] is None
        if r["bytes"] is None:
            assert r["quality"] == "suspect" and "no knee" in r["quality_reason"], r
        assert r["unit"] == "ns" and "ns" not in r
        assert r["bytes"] is None or (pos(r["bytes"]) and pos(r["median"]) and pos(r["cycles"]))

    # Table 2: one socket, four cores, two nodes.
    ds = data_sources(b)
    for s in ("L1", "L2", "L3_unshared", "L3_shared_other_core", "L3_modified_other_core", "local_DRAM",
              "remote_DRAM"):
        assert ds[s]["status"] == "ok", (s, ds[s].get("reason"))
    assert ds["remote_L3"]["status"] == "unavailable" and "socket" in ds["remote_L3"]["reason"]
    for s in ("L3_shared_other_core", "L3_modified_other_core"):
        assert ds[s]["holder_cpu"] != ds[s]["cpu"] and ds[s]["holder_package"] == 0
        assert ds[s]["method"] == "placed_one_pass" and ds[s]["rounds"] >= 3
    assert ds["L3_shared_other_core"]["evict_bytes"] > 0 and "evict" in ds["L3_shared_other_core"]["placement"]
    assert "evict_bytes" not in ds["L3_modified_other_core"]
    assert ds["local_DRAM"]["node"] == ds["local_DRAM"]["cpu_node"] == 0
    assert ds["remote_DRAM"]["node"] == 1 and ds["remote_DRAM"]["cpu_node"] == 0
    assert ds["local_DRAM"]["bytes"] >= 2 * llc

    # c2c: every ordered pair of the 4 CPUs, once.
    c2c = b.run.by_type("c2c")
    assert sorted((r["from_cpu"], r["to_cpu"]) for r in c2c) == [(i, j) for i in range(4) for j in range(4) if i != j]
    for r in c2c:
        assert r["status"] == "ok", r
        for k in ("hit", "hitm"):           # two figures per pair, each with the latency keys
            assert_units(r[k], b.run, "c2c %s %d->%d" % (k, r["from_cpu"], r["to_cpu"]))
        for k in ("hit_ns", "hitm_ns", "hit_cycles", "hitm_cycles", "hit_tsc", "hitm_tsc", "hit_cv", "hitm_cv"):
            assert k not in r, k
    summ = b.one("c2c_summary")
    assert summ["status"] == "ok" and summ["cpus"] == 4 and summ["sampled"] is False and summ["pairs"] == 12

    # NUMA: 2x2, SLIT distances beside it.
    numa = b.run.by_type("numa_latency")
    assert sorted((r["from_node"], r["to_node"]) for r in numa) == [(0, 0), (0, 1), (1, 0), (1, 1)]
    for r in numa:
        assert r["status"] == "ok"
        assert_units(r, b.run, "numa")
        assert r["distance"] == (10 if r["from_node"] == r["to_node"] else 20)
        assert r["buffer_node"] == r["to_node"]

    # Loaded latency: the quick delays, then the idle point.
    loaded = b.run.by_type("loaded_latency")
    assert [r["delay"] for r in loaded][-1] == "idle"
    delays = [r["delay"] for r in loaded[:-1]]
    assert delays == sorted(delays) and delays[0] == 0 and len(delays) >= 2
    for r in loaded:
        assert r["status"] == "ok" and r["bytes_per_s"] >= 0   # the load generators' bandwidth, beside the figure
        assert_units(r, b.run, "loaded %s" % r["delay"])
    assert all(r["streamers"] == 3 and pos(r["bytes_per_s"]) for r in loaded[:-1])
    assert loaded[-1]["streamers"] == 0 and loaded[-1]["bytes_per_s"] == 0

    # The human-readable side: Table 2 beside the guide, the sweep table, both matrices.
    assert "Table 2 of the Intel Core i7 / Xeon 5500 performance analysis guide" in b.log
    for s in SOURCES:
        assert re.search(r"^\s+%s\s+%s\s" % (s, re.escape(ds[s]["reference"])), b.log, re.M), s
    assert "Latency sweep:" in b.log and "Cache levels inferred" in b.log
    assert "c2c HIT:" in b.log and "c2c HITM:" in b.log and "NUMA latency (ns" in b.log


def test_one_cpu_rows_unavailable_with_reasons_and_max_bytes_cap():
    b = boot(cpu="Nehalem", smp=1, mem="1G", args=ALL + " max_bytes=8M", timeout=90)
    assert b.run.status == "ok"
    ds = data_sources(b)
    for s in ("L1", "L2", "L3_unshared", "local_DRAM"):
        assert ds[s]["status"] == "ok", s
    for s in ("L3_shared_other_core", "L3_modified_other_core", "remote_L3"):
        assert ds[s]["status"] == "unavailable" and "one CPU" in ds[s]["reason"], s
    assert ds["remote_DRAM"]["status"] == "unavailable" and "one NUMA node" in ds["remote_DRAM"]["reason"]
    # max_bytes caps the sweep and the DRAM working set (and the record says the DRAM row is then not clean).
    series = sweep_points(b)
    assert max(max(v) for v in series.values()) <= 8 << 20
    assert ds["local_DRAM"]["bytes"] <= 8 << 20 and "note" in ds["local_DRAM"]
    assert not b.run.by_type("c2c")
    assert b.one("c2c_summary")["status"] == "unavailable"
    ll = b.one("loaded_latency")
    assert ll["status"] == "unavailable" and "one CPU" in ll["reason"]
    numa = b.one("numa_latency")
    assert (numa["from_node"], numa["to_node"]) == (0, 0) and numa["status"] == "ok"


def test_one_gib_pages_series_when_supported():
    b = boot(cpu="max", smp=2, mem="4G", args="bench=latency max_bytes=16M", timeout=90)
    assert b.run.status == "ok"
    ls = {s["page_bytes_requested"]: s for s in b.run.by_type("latency_series")}
    assert ls[1 << 30]["status"] == "ok" and ls[1 << 30]["page_bytes"] == 1 << 30
    series = sweep_points(b)
    assert series[("random", 1 << 30)] == series[("random", 4096)] == series[("random", 2 << 20)]
    # The knees come from the largest-page curve, unless that curve was disturbed (its clock drifted or its L1
    # plateau was slower than another series': under TCG on a loaded host it can be), which its sweep_reference
    # record then says; then from the largest undisturbed one. Either way from the series marked reference.
    refs = {r["page_bytes"]: r for r in b.run.by_type("sweep_reference")}
    chosen = [p for p, r in refs.items() if r["reference"]]
    assert len(chosen) == 1
    assert {r["series"]["page_bytes"] for r in b.run.by_type("cache_inferred")} == set(chosen)
    if not refs[1 << 30]["disturbed"]:
        assert chosen == [1 << 30]
    else:
        assert chosen == [max(p for p, r in refs.items() if not r["disturbed"])]


def test_full_profile_four_points_per_octave_and_page_mode():
    b = boot(cpu="Nehalem", smp=2, mem="1G",
             args="bench=latency,c2c profile=full max_bytes=1M time_budget_ms=1", timeout=120)
    assert b.run.status == "ok" and b.run.run["profile"] == "full"
    series = sweep_points(b)
    r4k = series[("random", 4096)]
    for lo in (1 << 12, 1 << 14, 1 << 16):
        assert len([s for s in r4k if lo <= s < 2 * lo]) == 4, lo
    assert ("page", 4096) in series and all(s % 4096 == 0 for s in series[("page", 4096)])
    ds = data_sources(b)
    # Placed rows sample adaptively (at most 101 rounds per replicate in the full profile, in 9 independent
    # replicates whose medians give the interval, docs/measurement.md "Replicates"); under TCG the minimum, 11
    # rounds, in one replicate (minimal samples: no replicates, so no replicates/within_ci keys).
    assert b.run.run["minimal_samples"] is True
    l3 = ds["L3_unshared"]
    assert l3["rounds"] == 11 and l3["n"] == 11 and "replicates" not in l3
    # one replicate: every chain and line set where it always was, at the start of its buffer
    assert all(p["replicate_offsets"] == [0] for p in b.run.by_type("latency_sweep"))
    assert l3["replicate_offsets"] == [0] and l3["evict_replicate_offsets"] == [0]
    assert b.one("c2c_summary")["replicate_offsets"] == [0]
    assert b.one("c2c_summary")["evict_replicate_offsets"] == [0]
    assert b.one("c2c_summary")["rounds"] == 11 and len(b.run.by_type("c2c")) == 2


def test_sweep_top_key_sets_the_largest_working_set():
    # sweep_top=3M on a 16 MiB-LLC model: the sweep ends at 3 MiB (not a power of two), whatever 4x the LLC is.
    b = boot(cpu="Nehalem", smp=2, mem="1G", args="bench=latency sweep_top=3M", timeout=90)
    assert b.run.status == "ok" and b.run.run["config"]["sweep_top"] == 3 << 20
    series = sweep_points(b)
    for page in (4096, 2 << 20):
        assert series[("random", page)][0] == 1024 and series[("random", page)][-1] == 3 << 20
    for s in b.run.by_type("latency_series"):
        assert s["top_bytes"] == 3 << 20 and s["ended"] == "top"
    assert "(top from sweep_top)" in b.log


# ---- the hosted runner ----------------------------------------------------------------------------------

@pytest.fixture(scope="module")
def host_bench():
    p = subprocess.run(["make", "-s", "host-bench"], cwd=ROOT, capture_output=True, text=True, timeout=300)
    assert p.returncode == 0, p.stdout + p.stderr
    assert os.access(HOST_BENCH, os.X_OK)
    return HOST_BENCH


def run_host(exe, *args, timeout=300):
    p = subprocess.run([exe, *args], capture_output=True, text=True, timeout=timeout)
    return p


def test_hosted_runner_same_records(host_bench):
    p = run_host(host_bench, ALL, "profile=quick", "max_bytes=16M", "time_budget_ms=1")
    assert p.returncode == 0, p.stdout[-2000:] + p.stderr
    run = parse.parse_log(p.stdout)
    assert run.status == "ok"
    assert run.end["records"] == len(run.lines) - 1
    assert run.end["crc32"] == independent_crc(run.lines[:-1])
    r = run.run
    assert r["platform"] == "linux" and r["hosted"] is True and pos(r["tsc_hz"]) and pos(r["core_tsc_ratio"])
    assert r["cpus"] >= 1
    rows = run.by_type("data_source")
    assert [x["source"] for x in rows] == SOURCES
    for x in rows:
        assert_reference(x)
        if x["status"] == "ok":
            assert x["unit"] == "ns" and x["median"] == pytest.approx(x["tsc"] * 1e9 / r["tsc_hz"], rel=1e-6)
        else:
            assert x["reason"]
    assert run.by_type("latency_sweep") and run.by_type("cache_inferred")
    n = r["cpus"]
    assert len(run.by_type("c2c")) == n * (n - 1)
    assert run.by_type("numa_latency") and run.by_type("loaded_latency")
    for line in p.stdout.splitlines():
        assert not line.startswith("{") or line.startswith('{"type"'), line


def test_hosted_runner_sweep_top_and_sparse_octaves_past_the_llc(host_bench):
    # 4x this machine's LLC and more: past 2x the LLC one point per octave; every series ends at sweep_top
    # (or, page-by-page, where its page-walk plateau is clear); chains of many lines built on every CPU.
    p = run_host(host_bench, "bench=latency", "profile=full", "time_budget_ms=1", "seed=5")
    assert p.returncode == 0, p.stdout[-2000:] + p.stderr
    run = parse.parse_log(p.stdout)
    assert run.run["minimal_samples"] is False
    llc = llc_bytes(run.run)
    top = max(s["top_bytes"] for s in run.by_type("latency_series"))
    series = sweep_points(types.SimpleNamespace(run=run))
    for (mode, page), sizes in series.items():
        dense = [x for x in sizes if x <= 2 * llc]
        sparse = [x for x in sizes if x > 2 * llc]
        assert all(b == 2 * a for a, b in zip(sparse, sparse[1:])), (mode, page, sparse)
        if mode == "random":
            assert sizes[-1] == top
        assert len([x for x in dense if llc < x <= 2 * llc]) >= 3  # full density up to 2x the LLC
    for s in run.by_type("latency_series"):
        assert s["loads"] > 0 and s["build_seconds"] >= 0 and s["build_cpus"] >= 1 and s["alloc_seconds"] >= 0
        # a fresh permutation per replicate up to 2x the LLC and 2^20 lines per CPU that builds the chain (random
        # and page-by-page chains alike, both built in parts on every CPU of the node: one node here); larger
        # points take their replicates back to back on one chain
        cpus = run.run["cpus"]
        assert s["fresh_max_bytes"] == min(2 * llc, (1 << 26) * cpus), s
        pts = [x for x in run.by_type("latency_sweep") if (x["mode"], x["page_bytes"]) == (s["mode"], s["page_bytes"])]
        assert all(x["fresh_chains"] == (x["bytes"] <= s["fresh_max_bytes"]) for x in pts), s
        assert any(not x["fresh_chains"] for x in pts) or s["mode"] == "page"
        assert s["ended"] in ("top", "page_walk_plateau") and (s["ended"] == "top" or s["mode"] == "page")
    # one node here: every CPU builds a chain of 2^18 lines (16 MiB) or more, random or page-by-page
    largest = {}
    for x in run.by_type("latency_sweep"):
        largest[x["mode"], x["page_bytes"]] = max(largest.get((x["mode"], x["page_bytes"]), 0), x["bytes"])
    big = [s for s in run.by_type("latency_series") if largest.get((s["mode"], s["page_bytes"]), 0) >= 1 << 24]
    assert {s["mode"] for s in big} == {"random", "page"}
    assert all(s["build_cpus"] == run.run["cpus"] for s in big)
    assert all(s["buffer_bytes"] == top for s in run.by_type("latency_series") if s["status"] == "ok")
    bad = run_host(host_bench, "bench=latency", "sweep_top=1K", timeout=60)
    assert bad.returncode == 2 and "'sweep_top': too small" in bad.stderr


def test_hosted_runner_replicates_on_other_memory(host_bench):
    # Full profile, 9 replicates: each sweep point's replicate k at its own offset of the series buffer (aligned
    # to the series' page, inside the buffer, replicate 0 at the start), the L1 and placed rows' lines and the
    # eviction buffer in a 2 MiB-aligned region of their own per replicate, c2c a fresh line set per replicate
    # (docs/measurement.md "Replicates").
    p = run_host(host_bench, "bench=latency,c2c", "profile=full", "time_budget_ms=1", "max_bytes=8M")
    assert p.returncode == 0, p.stdout[-2000:] + p.stderr
    run = parse.parse_log(p.stdout)
    top = {(s["mode"], s["page_bytes"]): s["buffer_bytes"] for s in run.by_type("latency_series") if s["status"] == "ok"}
    distinct = 0
    for pt in run.by_type("latency_sweep"):
        offs, page = pt["replicate_offsets"], pt["page_bytes"]
        assert offs[0] == 0 and len(offs) in (1, 9), pt
        assert all(o % page == 0 and o + pt["bytes"] <= top[(pt["mode"], page)] for o in offs), pt
        if len(offs) == 9 and page == 4096 and pt["bytes"] + 8 * 4096 <= top[(pt["mode"], page)]:
            assert len(set(offs)) == 9, pt
            distinct += 1
    assert distinct > 20
    two_mib = 2 << 20
    ds = {r["source"]: r for r in run.by_type("data_source")}
    for s in ("L1", "L2", "L3_unshared"):
        r = ds[s]
        assert r["status"] == "ok", r
        span = r["bytes"]
        assert r["replicate_offsets"] == [k * two_mib for k in range(9)], r
        assert r["replicate_offsets"][-1] + span <= r["buffer_bytes"]
        if s != "L1":
            ev = r["evict_replicate_offsets"]
            assert len(set(ev)) == 9 and all(o % two_mib == 0 for o in ev)
            assert all(b - a >= r["evict_bytes"] for a, b in zip(ev, ev[1:]))  # disjoint windows
            assert ev[-1] + r["evict_bytes"] <= r["evict_buffer_bytes"]
    assert_relinked(ds["local_DRAM"])  # under max_bytes=8M: no spare units, fresh orders of the same ones
    # Table 2 rows in 9 passes spread over the sweep's passes: replicate k of L1, L2, L3_unshared in that order
    # in pass k, pass k before pass k + 1; each replicate's lines start in its own region; the passes span most
    # of the sweep's time, not the rows' own milliseconds (docs/measurement.md "Replicates").
    ms = {s: ds[s]["replicate_ms"] for s in ("L1", "L2", "L3_unshared")}
    for s in ms:
        r = ds[s]
        assert len(ms[s]) == 9 and len(r["replicate_starts"]) == 9, r
        assert all(o <= st < o + r["bytes"] for o, st in zip(r["replicate_offsets"], r["replicate_starts"])), r
    for k in range(9):
        assert ms["L1"][k] <= ms["L2"][k] <= ms["L3_unshared"][k]
        if k < 8:
            assert ms["L3_unshared"][k] <= ms["L1"][k + 1]
    sweep_s = sum(s["seconds"] for s in run.by_type("latency_series") if s["status"] == "ok")
    assert (ms["L3_unshared"][-1] - ms["L3_unshared"][0]) / 1000 >= 0.5 * sweep_s, (ms, sweep_s)
    summ = run.by_type("c2c_summary")[0]
    assert summ["replicate_offsets"] == [k * two_mib for k in range(9)]
    assert summ["replicate_offsets"][-1] + summ["bytes"] <= summ["buffer_bytes"]
    # and each replicate's HIT placement evicts with a window of its own, as the Table 2 placed rows
    ev = summ["evict_replicate_offsets"]
    assert len(set(ev)) == 9 and all(o % two_mib == 0 for o in ev), summ
    assert all(b - a >= summ["evict_bytes"] for a, b in zip(ev, ev[1:]))  # disjoint windows
    assert ev[-1] + summ["evict_bytes"] <= summ["evict_buffer_bytes"]


def assert_relinked(r, reps=9):
    """A DRAM-sized chain's replicates (docs/measurement.md "Replicates"): each a relink of the one chain, on large
    pages in a window of 2 MiB units of its own (distinct, aligned, inside the buffer, replicate 0 at the start), on
    4 KiB pages a fresh order of the cycle's 2 MiB stretches over the same lines."""
    two_mib = 2 << 20
    assert r["relinked"] is True, r
    offs = r["replicate_offsets"]
    assert len(offs) == reps and offs[0] == 0, r
    if r["chain"] == "page":
        assert r["relink_segments"] == r["buffer_bytes"] // two_mib, r
        assert r["relink_segments_used"] == r["bytes"] // two_mib, r
        assert all(o % two_mib == 0 and o + r["bytes"] <= r["buffer_bytes"] for o in offs), r
        if r["buffer_bytes"] - r["bytes"] >= (reps - 1) * two_mib:
            assert len(set(offs)) == reps and offs == sorted(offs), r
        else:  # no room under the cap: every replicate on the same units, in a fresh order
            assert set(offs) == {0}, r
    else:
        assert set(offs) == {0} and r["buffer_bytes"] == r["bytes"], r
        assert r["relink_segments"] == r["relink_segments_used"] == max(r["bytes"] // two_mib, 1), r


def test_hosted_runner_dram_replicates_relinked(host_bench):
    # Full profile: the local_DRAM row and every numa_latency pair chase one chain built once, relinked per
    # replicate; with large pages each replicate in a window of units of its own, the buffer 1/8 larger than the
    # working set (at least 8 spare units); under max_bytes no spare, the same units in fresh orders.
    p = run_host(host_bench, "bench=latency,numa_latency", "profile=full", "time_budget_ms=1", "sweep_top=1M")
    assert p.returncode == 0, p.stdout[-2000:] + p.stderr
    run = parse.parse_log(p.stdout)
    ds = {r["source"]: r for r in run.by_type("data_source")}
    dram = ds["local_DRAM"]
    assert dram["status"] == "ok" and dram["build_seconds"] > 0, dram
    assert_relinked(dram)
    numa = run.by_type("numa_latency")
    assert numa and all(r["status"] == "ok" for r in numa)
    for r in numa:
        assert_relinked(r)
    if dram["chain"] == "page":
        units = dram["bytes"] // (2 << 20)
        assert dram["buffer_bytes"] == dram["bytes"] + max(-(-units // 8), 8) * (2 << 20), dram
        assert "its own window" in dram["placement"], dram
    capped = run_host(host_bench, "bench=numa_latency", "profile=full", "time_budget_ms=1", "max_bytes=8M")
    assert capped.returncode == 0, capped.stdout[-2000:] + capped.stderr
    for r in parse.parse_log(capped.stdout).by_type("numa_latency"):
        assert r["bytes"] == r["buffer_bytes"] == 8 << 20, r
        assert_relinked(r)
    # one replicate (quick profile): the chain as built, nothing relinked
    quick = run_host(host_bench, "bench=numa_latency", "profile=quick", "time_budget_ms=1")
    assert quick.returncode == 0
    for r in parse.parse_log(quick.stdout).by_type("numa_latency"):
        assert r["relinked"] is False and r["replicate_offsets"] == [0] and r["buffer_bytes"] == r["bytes"], r


def test_hosted_runner_page_series_buffer_stops_at_the_llc_rule(host_bench):
    # sweep_top above the LLC rule (4x the LLC, rounded up to a power of two): the random series go to sweep_top on buffers of
    # that size; the page-by-page series stops at the rule's top at the latest and takes no larger a buffer
    run = parse.parse_log(run_host(host_bench, "bench=latency", "profile=full", "time_budget_ms=1",
                                   "seed=3", "sweep_top=512M").stdout)
    llc = llc_bytes(run.run)
    rule = 1 << (4 * llc - 1).bit_length()
    series = {s["mode"]: s for s in run.by_type("latency_series") if s["status"] == "ok"}
    if rule >= (1 << 29):
        pytest.skip("the LLC rule's top is 512 MiB or more here")
    assert series["random"]["buffer_bytes"] == series["random"]["top_bytes"] == 1 << 29
    page = series["page"]
    assert page["buffer_bytes"] == rule, page
    assert max(x["bytes"] for x in run.by_type("latency_sweep") if x["mode"] == "page") <= rule


def test_bench_cost_reports_build_and_buffer_time_and_keeps_outputs(host_bench, tmp_path):
    # scripts/bench_cost.py: the sweep's loads, chain-building and buffer time from the records, each run's
    # output kept under --keep; a --keep that is not a directory is refused with its reason
    cfg = "bench=latency profile=quick max_bytes=16M time_budget_ms=1"
    p = subprocess.run([sys.executable, os.path.join(ROOT, "scripts", "bench_cost.py"), "--exe", host_bench,
                        "--repeat", "2", "--keep", str(tmp_path), cfg], capture_output=True, text=True, timeout=300)
    assert p.returncode == 0, p.stdout + p.stderr
    m = re.search(r"chains built in ([0-9.]+) s, buffers taken in ([0-9.]+) s", p.stdout)
    assert m, p.stdout
    kept = sorted(x.name for x in tmp_path.iterdir())
    assert kept == ["c0-r0.log", "c0-r1.log"]
    runs = [parse.parse_log((tmp_path / k).read_text()) for k in kept]
    alloc = sorted(sum(s["alloc_seconds"] for s in r.by_type("latency_series")) for r in runs)
    assert float(m.group(2)) == pytest.approx(sum(alloc) / 2, abs=0.006)  # the median of two runs
    bad = subprocess.run([sys.executable, os.path.join(ROOT, "scripts", "bench_cost.py"), "--exe", host_bench,
                          "--keep", str(tmp_path / "nosuch"), cfg], capture_output=True, text=True, timeout=60)
    assert bad.returncode != 0 and "--keep" in bad.stderr and "not a directory" in bad.stderr


def test_hosted_runner_rejects_bad_config(host_bench):
    # bad input: exit 2, the one-line reason on stderr, the record stream (run, error, end) on stdout
    p = run_host(host_bench, "bench=latency,nosuch", timeout=60)
    assert p.returncode == 2
    run = parse.parse_log(p.stdout)
    assert run.status == "error" and "nosuch" in run.first("error")["message"]
    assert run.first("error")["message"].startswith("command line: bad value for 'bench'")
    assert p.stderr.startswith("pmubench-host: config error: command line: bad value for 'bench'")
    p = run_host(host_bench, "profile=fast", timeout=60)
    assert p.returncode == 2 and "profile" in parse.parse_log(p.stdout).first("error")["message"]


def test_hosted_runner_bandwidth_branch_penalty(host_bench):
    """Issue 5: the hosted runner emits the same bandwidth/branch/penalty records as the image."""
    p = run_host(host_bench, "bench=bandwidth,branch,penalty,cycle_accounting", "profile=quick", "max_bytes=16M")
    assert p.returncode == 0, p.stderr[-2000:]
    from pmb import parse
    run = parse.parse_log(p.stdout)
    assert run.status == "ok"
    bw = run.by_type("bandwidth")
    assert {r["kernel"] for r in bw} >= {"read", "write", "write_nt", "copy", "triad"}
    assert all(r["unit"] == "bytes_per_s" and pos(r["median"]) for r in bw)
    assert run.by_type("branch") and run.by_type("penalty") and run.by_type("cycle_accounting")


def test_hosted_bandwidth_interleaved_replicates_on_other_pages(host_bench):
    # Full profile: a sweep point whose replicates are interleaved over the passes streams replicate k at its own
    # page-aligned offset of the buffer (replicate 0 at the start, inside the buffer); a point measured whole
    # (replicates back to back on warm arrays) stays where it is (docs/measurement.md "Replicates").
    p = run_host(host_bench, "bench=bandwidth", "profile=full", "time_budget_ms=1", "max_bytes=8M")
    assert p.returncode == 0, p.stdout[-2000:] + p.stderr
    run = parse.parse_log(p.stdout)
    sweep = [r for r in run.by_type("bandwidth") if r["series"] == "sweep"]
    moved = 0
    for r in sweep:
        offs = r["replicate_offsets"]
        assert offs[0] == 0, r["figure"]
        if not r["replicates_interleaved"]:
            assert offs == [0], r["figure"]
            continue
        assert len(offs) == 9 and all(o % r["page_bytes"] == 0 for o in offs), (r["figure"], offs)
        # max_bytes=8M leaves room for a few 2 MiB pages past a small point: the offsets that fit, in turn
        if r["bytes"] <= 1 << 20:
            assert len(set(offs)) >= 4 and offs[:len(set(offs))] == sorted(set(offs)), (r["figure"], offs)
            moved += 1
    assert moved >= 20, (moved, len(sweep))


def test_hosted_bandwidth_scaling_replicates_on_other_pages(host_bench):
    # Full profile: the multi-threaded series (scaling_package, scaling_core, numa) put each replicate's arrays at
    # a page-aligned offset of the first thread's buffer, spread over the eighth of room every such buffer has
    # beyond the largest working set it serves (docs/measurement.md "Replicates").
    p = run_host(host_bench, "bench=bandwidth", "profile=full", "time_budget_ms=1")
    assert p.returncode == 0, p.stdout[-2000:] + p.stderr
    run = parse.parse_log(p.stdout)
    mt = [r for r in run.by_type("bandwidth") if r["series"] != "sweep"]
    assert mt or run.run["cpus"] < 2  # one CPU allowed: no multi-threaded series
    for r in mt:
        offs = r["replicate_offsets"]
        assert len(offs) == 9 and offs[0] == 0, (r["figure"], offs)
        assert all(o % r["page_bytes"] == 0 for o in offs), (r["figure"], offs)
        assert r["replicates_on_other_pages"] == sum(o != 0 for o in offs), r["figure"]
        # room of at least bytes / 8: as many distinct offsets as whole pages fit in it, up to the 9 replicates
        slots = min(9, r["bytes"] // 8 // r["page_bytes"] + 1)
        assert len(set(offs)) >= slots, (r["figure"], r["bytes"], offs)
    if mt:
        assert any(len(set(r["replicate_offsets"])) == 9 for r in mt)  # memory level: 4 x this LLC and more
