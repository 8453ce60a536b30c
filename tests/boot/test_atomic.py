"""The atomic benchmark (bench/atomic.c) end to end: under QEMU TCG in the image and in the hosted runner on this
machine, one `atomic` record with the figure `atomic_rmw` in cycles through the statistics emitter, its table
line, and the figure in the report's figures table. Structure only: TCG timings mean nothing, and this machine's
are reported in docs/latency.md, not asserted."""
import math
import os
import subprocess
import sys

import pytest

from conftest import ROOT, boot

sys.path.insert(0, os.path.join(ROOT, "scripts"))
from pmb import parse, report  # noqa: E402

HOST_BENCH = os.path.join(ROOT, "build", "host-bench", "pmubench-host")
STATS = ("unit", "median", "p10", "p90", "min", "max", "n", "spread", "ci_lo", "ci_hi", "converged", "quality")


def num(v):
    return isinstance(v, (int, float)) and not isinstance(v, bool) and math.isfinite(v)


def check(run, log):
    assert run.status == "ok"
    recs = run.by_type("atomic")
    assert len(recs) == 1, recs
    r = recs[0]
    for k in STATS + ("figure", "ns", "tsc", "cycles_method", "core_tsc_ratio", "add_cycles", "instruction", "method",
                      "cpu", "iters_per_sample"):
        assert k in r, k
    assert r["figure"] == "atomic_rmw" and r["unit"] == "cycles" and r["instruction"] == "lock xadd r64, m64"
    assert r["quality"] in ("ok", "noisy", "suspect")
    assert (r["quality"] == "ok") == ("quality_reason" not in r)
    assert r["n"] >= 7 and r["iters_per_sample"] >= 16         # the quick profile's minimum samples
    assert all(num(r[k]) and r[k] > 0 for k in ("median", "ns", "tsc", "add_cycles", "core_tsc_ratio"))
    assert r["min"] <= r["p10"] <= r["median"] <= r["p90"] <= r["max"]
    assert r["ci_lo"] <= r["median"] <= r["ci_hi"]
    assert r["cycles_method"].startswith("core_tsc_ratio:")
    assert "== bench atomic: latency of a dependent lock xadd chain" in log
    assert any(line.strip().startswith("atomic_rmw ") for line in log.splitlines())
    md = report.to_markdown(report.build(run, want_plots=False))
    row = next(l for l in md.split("## Figures", 1)[1].splitlines() if l.startswith("| atomic_rmw "))
    assert "| atomic | " in row and "| cycles |" in row
    return r


def test_atomic_in_the_image_under_tcg():
    b = boot(cpu="max", smp=1, mem="512M", args="bench=atomic", timeout=90)
    r = check(b.run, b.log)
    assert r["cpu"] == 0


@pytest.fixture(scope="module")
def exe():
    p = subprocess.run(["make", "-s", "host-bench"], cwd=ROOT, capture_output=True, text=True, timeout=300)
    assert p.returncode == 0, p.stdout + p.stderr
    return HOST_BENCH


def test_atomic_in_the_hosted_runner(exe):
    p = subprocess.run([exe, "bench=atomic", "profile=quick"], capture_output=True, text=True, timeout=120)
    assert p.returncode == 0, p.stderr[-2000:]
    check(parse.parse_log(p.stdout), p.stdout)


def test_bench_all_includes_atomic(exe):
    """docs/records.md "atomic": bench=all runs it (a few milliseconds); the usage text says so."""
    p = subprocess.run([exe, "--help"], capture_output=True, text=True, timeout=30)
    line = next(l for l in (p.stdout + p.stderr).splitlines() if l.startswith("Benchmarks:"))
    assert " atomic " in line and "bench=all runs every one but snippet" in line
