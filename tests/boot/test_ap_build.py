"""The parallel chain builder on the image's APs, under QEMU TCG with samples=normal (docs/config.md).

Under TCG the image takes minimal samples by default, and minimal mode builds every chain on one CPU
(lat_build_cpus), so without samples=normal no boot would run the builder's parts on the APs."""
import pytest

from conftest import boot

# A short full-profile sweep whose top chains have 2^18 lines (16 MiB of 64-byte lines): the random series on
# 4 KiB and 2 MiB pages and the page-by-page series, each built in parts from LAT_PAR_MIN_LINES on.
SWEEP = "bench=latency samples=normal profile=full sweep_top=16M time_budget_ms=1 seed=0x5eed"
PAR_MIN_LINES = 1 << 18


def series_of(b):
    return {(s["mode"], s["page_bytes"]): s for s in b.run.by_type("latency_series") if s["status"] == "ok"}


def points_of(b):
    pts = {}
    for p in b.run.by_type("latency_sweep"):
        pts.setdefault((p["mode"], p["page_bytes"]), []).append(p)
    return pts


@pytest.fixture(scope="module")
def runs():
    # the same machine and seed twice: every CPU, then max_cpus=1 (the one-CPU build of the same chains)
    par = boot(smp=2, mem="1G", args=SWEEP, timeout=240)
    one = boot(smp=2, mem="1G", args=SWEEP + " max_cpus=1", timeout=240)
    return par, one


def test_large_chains_built_on_every_cpu_of_the_node(runs):
    par, _ = runs
    r = par.run.run
    assert par.run.status == "ok"
    assert r["minimal_samples"] is False and r["config"]["samples"] == "normal"
    assert r["minimal_samples_why"].startswith("config: samples=normal") and "TCG" in r["minimal_samples_why"]
    assert par.log.count("Samples  as on hardware") == 1 and "Samples  minimum only" not in par.log
    assert r["cpus"] == 2 and r["numa_nodes"] == 1
    series, points = series_of(par), points_of(par)
    assert {("random", 4096), ("random", 2 << 20), ("page", 4096)} <= set(series)
    for key, s in series.items():
        pts = points[key]
        assert len(pts) == s["points"] > 0
        big = [p for p in pts if p["lines"] >= PAR_MIN_LINES]
        assert big, key  # the sweep reached chains the builder splits into parts
        # build_cpus is the most CPUs that built one chain of the series: both CPUs of the node
        assert s["build_cpus"] == r["cpus"], s
        # valid chains: chased with loads counted, every point measured (under TCG noisy is as good as ok),
        # and each point's chain walked by its digest (0 would have dropped the point)
        assert s["loads"] > 0 and s["ended"] == "top" and s["top_bytes"] == 16 << 20
        for p in pts:
            assert p["quality"] in ("ok", "noisy"), p
            assert p["n"] > 0 and int(p["chain_digest"], 16) != 0
            # not minimal: replicates (the full profile's), each its own chain up to fresh_max_bytes
            assert p["replicates"] > 1 and p["fresh_chains"] == (p["bytes"] <= s["fresh_max_bytes"])


def test_parallel_build_matches_the_one_cpu_build(runs):
    par, one = runs
    assert one.run.status == "ok" and one.run.run["cpus"] == 1 and one.run.run["minimal_samples"] is False
    sp, so = series_of(par), series_of(one)
    assert set(sp) == set(so)
    pp, po = points_of(par), points_of(one)
    for key in sp:
        a, b = sp[key], so[key]
        assert b["build_cpus"] == 1 and a["build_cpus"] == 2
        # what does not depend on timing or on the CPUs that built the chains is the same
        for k in ("points", "top_bytes", "buffer_bytes", "page_bytes", "ended", "fresh_max_bytes"):
            assert a[k] == b[k], (key, k, a[k], b[k])
        assert [p["bytes"] for p in pp[key]] == [p["bytes"] for p in po[key]]
        for x, y in zip(pp[key], po[key]):
            assert x["lines"] == y["lines"] and x["fresh_chains"] == y["fresh_chains"]
            assert x["replicate_offsets"] == y["replicate_offsets"], (key, x["bytes"])
            # the same chain, element for element over its first links, however many CPUs built it
            assert x["chain_digest"] == y["chain_digest"], (key, x["bytes"])
    # distinct chains, distinct digests (the digest names the chain chased, not just its size)
    dig = {p["chain_digest"] for pts in pp.values() for p in pts if p["lines"] >= PAR_MIN_LINES}
    assert len(dig) == len([p for pts in pp.values() for p in pts if p["lines"] >= PAR_MIN_LINES])


def test_samples_minimal_and_bad_value():
    # samples=minimal says so as the config's choice; a bad value is one line naming the key and the words
    b = boot(smp=1, mem="512M", args="bench=none samples=minimal", timeout=90)
    assert b.run.status == "ok"
    r = b.run.run
    assert r["minimal_samples"] is True and r["minimal_samples_why"] == "config: samples=minimal"
    bad = boot(smp=1, mem="512M", args="bench=none samples=full", timeout=90)
    assert bad.run.status == "error"
    msg = bad.run.first("error")["message"]
    assert msg == "load options: bad value 'full' for 'samples': expected auto|minimal|normal", msg


def test_two_nodes_build_on_the_benchmark_cpus_node():
    # 4 vCPUs in two NUMA nodes: a chain lives in the benchmark CPU's node, and so do the CPUs that build it
    # (par_cpus: the benchmark CPU and the other CPUs of its node), 2 of the 4
    b = boot(smp=4, mem="2G", numa=2, timeout=240,
             args="bench=latency samples=normal profile=quick sweep_top=16M time_budget_ms=1")
    assert b.run.status == "ok" and b.run.run["cpus"] == 4 and b.run.run["numa_nodes"] == 2
    cpus = b.one("smp")["cpus"]
    node = cpus[0]["node"]
    same = len([c for c in cpus if c["online"] and c["node"] == node])
    assert same == 2
    series, points = series_of(b), points_of(b)
    assert {("random", 4096), ("random", 2 << 20)} <= set(series)
    for key, s in series.items():
        assert any(p["lines"] >= PAR_MIN_LINES for p in points[key]), key
        assert s["build_cpus"] == same, s
        assert all(p["quality"] in ("ok", "noisy") and int(p["chain_digest"], 16) != 0 for p in points[key])
