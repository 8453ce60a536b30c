"""pmubench repro: coverage of other runs' medians by a figure's 95 % CI, per class, over synthetic logs."""
import os
import subprocess
import sys

import pytest

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, os.path.join(ROOT, "scripts"))
sys.path.insert(0, HERE)

import logs  # noqa: E402
from pmb import parse, repro  # noqa: E402

PMUBENCH = os.path.join(ROOT, "scripts", "pmubench")


def fig(rtype, name, median, lo, hi, quality="ok", **kw):
    r = {"type": rtype, "figure": name, "unit": "ns", "median": median, "ci_lo": lo, "ci_hi": hi, "n": 11,
         "quality": quality}
    r.update(kw)
    return r


def run_with(records):
    rr = logs.run_record()
    rr["caches"] = [{"level": 1, "type": "data", "bytes": 32768}, {"level": 2, "type": "unified", "bytes": 262144},
                    {"level": 3, "type": "unified", "bytes": 8 << 20}]
    return [rr] + records


def write_log(tmp_path, name, records):
    p = tmp_path / name
    p.write_text(logs.serial(logs.run_lines(run_with(records))))
    return str(p)


def three_runs(tmp_path, l1=(1.0, 1.0, 1.0), extra=None):
    """Three runs: an L1 row whose CI is +-1 % around l1[i], a sweep point in the L3 region whose CI is
    too narrow for the others' medians, a noisy DRAM row and a bandwidth figure that a cross-check marks
    suspect in run 1."""
    paths = []
    for i in range(3):
        recs = [
            fig("data_source", "data_source/L1", l1[i], l1[i] * 0.99, l1[i] * 1.01, source="L1"),
            fig("latency_sweep", "latency_sweep/random/4096/4194304", 10.0 + i, 9.99 + i, 10.01 + i,
                bytes=4194304),
            fig("data_source", "data_source/local_DRAM", 90.0 + 5 * i, 80.0, 110.0, quality="noisy",
                source="local_DRAM"),
            fig("bandwidth", "bandwidth/sweep/read/sse2/8192/1/0-0", 100.0, 99.0, 101.0, unit="bytes_per_s"),
        ]
        if i == 0:
            recs.append({"type": "crosscheck", "quantity": "q", "agrees": False,
                         "suspect": ["bandwidth/sweep/read/sse2/8192/1/0-0"]})
        paths.append(write_log(tmp_path, "run%d.log" % i, recs + (extra or [])))
    return paths


def test_next_run_interval_is_counted_beside_the_ci(tmp_path):
    """A figure with a next-run interval (next_lo / next_hi) is counted with it in the `next` column; one without
    (a single series) with its CI."""
    paths = []
    for i, m in enumerate((1.0, 1.012, 1.03)):
        recs = [fig("data_source", "data_source/L1", m, m * 0.995, m * 1.005, source="L1", replicates=9,
                    next_lo=m * 0.985, next_hi=m * 1.015, next_level=0.97),
                fig("penalty", "penalty/x", 4.0 + 0.1 * i, 3.95 + 0.1 * i, 4.05 + 0.1 * i)]
        paths.append(write_log(tmp_path, "n%d.log" % i, recs))
    rows = repro.coverage([repro.figures(parse.read_log(p)) for p in paths])
    # CI: 0.995..1.005 holds neither 1.012 nor 1.03; 1.00694..1.01706 neither 1.0 nor 1.03; 1.02485..1.03515
    # neither. Next: 0.985..1.015 holds 1.012; 0.99682..1.02718 holds 1.0; 1.01455..1.04545 neither
    assert (rows["table2/L1"].covered, rows["table2/L1"].next_covered, rows["table2/L1"].pairs) == (0, 2, 6)
    # no next-run interval: the CI (+-0.05 around medians 0.1 apart) for both columns
    assert (rows["penalty"].covered, rows["penalty"].next_covered) == (0, 0)
    text, tot = repro.table(rows, 3)
    assert tot.next_covered == 2 and " 16.7 %" in text  # 2 of 12 ok pairs
    assert "86.9 %" in text and "97.1 %" in text


def test_expected_coverage_of_exchangeable_runs():
    """The reference levels printed with the table: the sign-test CI of 9 medians holds another run's median
    86.9 % of the time, the whole range of the 9 (the next-run interval) 97.1 %; checked by simulation."""
    import random
    assert abs(repro.EXPECTED_CI_NEXT - 0.8688) < 1e-4
    assert abs(repro.expected_ci_next(9, 0) - 0.97059) < 1e-4
    rnd = random.Random(19)
    hit_ci = hit_next = 0
    n = 20000
    for _ in range(n):
        a = sorted(rnd.random() for _ in range(9))
        b = sorted(rnd.random() for _ in range(9))[4]
        hit_ci += a[1] <= b <= a[7]
        hit_next += a[0] <= b <= a[8]
    assert abs(hit_ci / n - repro.EXPECTED_CI_NEXT) < 0.01
    assert abs(hit_next / n - repro.expected_ci_next(9, 0)) < 0.006


def test_coverage_per_class(tmp_path):
    runs = [parse.read_log(p) for p in three_runs(tmp_path, l1=(1.0, 1.005, 1.03))]
    rows = repro.coverage([repro.figures(r) for r in runs])
    # L1: run 0's CI 0.99..1.01 holds 1.005, not 1.03; run 1's 0.995..1.015 holds 1.0, not 1.03; run 2's
    # 1.0197..1.0403 holds neither: 2 of 6 ordered pairs
    assert (rows["table2/L1"].covered, rows["table2/L1"].pairs) == (2, 6)
    # the 4 MiB point is in the L3 region (L2 256 KiB < 4 MiB <= L3 8 MiB) and never covers the others
    assert (rows["sweep/L3"].covered, rows["sweep/L3"].pairs) == (0, 6)
    # a noisy figure is counted apart: DRAM 80..110 holds every other median
    assert rows["table2/DRAM"].pairs == 0
    assert (rows["table2/DRAM"].noisy_covered, rows["table2/DRAM"].noisy_pairs) == (6, 6)
    # the cross-check made run 0's bandwidth figure suspect: only runs 1 and 2 count (2 x 2 pairs)
    assert (rows["bandwidth"].covered, rows["bandwidth"].pairs) == (4, 4)
    # ok -> ok: the pairs whose other run's figure is ok too (run 0's suspect bandwidth figure is no target)
    assert (rows["table2/L1"].okok_covered, rows["table2/L1"].okok_pairs) == (2, 6)
    assert (rows["bandwidth"].okok_covered, rows["bandwidth"].okok_pairs) == (2, 2)
    text, tot = repro.table(rows, 3)
    assert (tot.covered, tot.pairs) == (6, 16)
    assert (tot.okok_covered, tot.okok_pairs) == (4, 14)
    assert "table2/L1" in text and " 33.3 %" in text and "all ok" in text


def test_classify_sweep_regions():
    caches = {1: 32768, 2: 262144, 3: 8 << 20}
    assert repro.classify({"type": "latency_sweep", "bytes": 32768}, "x", caches) == "sweep/L1"
    assert repro.classify({"type": "latency_sweep", "bytes": 32769}, "x", caches) == "sweep/L2"
    assert repro.classify({"type": "latency_sweep", "bytes": 16 << 20}, "x", caches) == "sweep/DRAM"
    assert repro.classify({"type": "data_source", "source": "L3_modified_other_core"}, "x", caches) == "table2/L3"
    assert repro.classify({"type": "penalty"}, "x", caches) == "penalty"
    assert repro.classify({"type": "latency_plateau"}, "x", caches) == "derived"


def test_nested_c2c_figures(tmp_path):
    c2c = {"type": "c2c", "from_cpu": 1, "to_cpu": 0,
           "hit": {"figure": "c2c/1-0/hit", "unit": "ns", "median": 60.0, "ci_lo": 55.0, "ci_hi": 65.0,
                   "quality": "ok"},
           "hitm": {"figure": "c2c/1-0/hitm", "unit": "ns", "median": 70.0, "ci_lo": 69.9, "ci_hi": 70.1,
                    "quality": "ok"}}
    runs = [parse.read_log(p) for p in three_runs(tmp_path, extra=[c2c])]
    f = repro.figures(runs[0])
    assert f["c2c/1-0/hit"].cls == "c2c" and f["c2c/1-0/hitm"].median == 70.0


def test_cli_logs(tmp_path):
    paths = three_runs(tmp_path)
    p = subprocess.run([sys.executable, PMUBENCH, "repro"] + paths, capture_output=True, text=True)
    assert p.returncode == 0, p.stderr
    assert p.stdout.startswith("Coverage over 3 runs")
    assert "table2/L1" in p.stdout and "100.0 %" in p.stdout


def test_cli_errors(tmp_path):
    paths = three_runs(tmp_path)
    p = subprocess.run([sys.executable, PMUBENCH, "repro", paths[0]], capture_output=True, text=True)
    assert p.returncode == 2
    assert p.stderr.strip() == "pmubench: repro: at least 2 logs are needed to compare, got 1"
    p = subprocess.run([sys.executable, PMUBENCH, "repro", "--runs", "1"], capture_output=True, text=True)
    assert p.returncode == 2
    assert p.stderr.strip() == ("pmubench repro: argument --runs: 1 is out of range (expected 2..1000) "
                                "(see pmubench repro --help)")
    bad = tmp_path / "bad.log"
    bad.write_text("no records here\n")
    p = subprocess.run([sys.executable, PMUBENCH, "repro", paths[0], str(bad)], capture_output=True, text=True)
    assert p.returncode == 2
    assert p.stderr.strip() == "pmubench: repro: %s: no run record found" % bad
    p = subprocess.run([sys.executable, PMUBENCH, "repro", "--runs", "2", "--runner", str(tmp_path / "nope")],
                       capture_output=True, text=True)
    assert p.returncode == 1
    assert "not an executable hosted runner" in p.stderr and p.stderr.count("\n") == 1


def test_runs_the_runner(tmp_path):
    """--runs N runs the given runner N times and compares its logs (a stand-in script prints a log)."""
    paths = three_runs(tmp_path)
    runner = tmp_path / "runner.sh"
    counter = tmp_path / "count"
    counter.write_text("0")
    runner.write_text("#!/bin/sh\nn=$(cat %s)\necho $((n + 1)) > %s\ncat %s/run$((n %% 3)).log\n"
                      % (counter, counter, tmp_path))
    runner.chmod(0o755)
    save = tmp_path / "saved"
    p = subprocess.run([sys.executable, PMUBENCH, "repro", "--runs", "3", "--runner", str(runner), "--save",
                        str(save)], capture_output=True, text=True)
    assert p.returncode == 0, p.stderr
    assert counter.read_text().strip() == "3"
    assert sorted(os.listdir(save)) == ["run1.log", "run2.log", "run3.log"]
    assert "Coverage over 3 runs" in p.stdout


def test_per_run_shows_the_run_moved_as_a_whole(tmp_path):
    """Runs 0 and 1 agree; run 2 is 10 % slower in every figure: the others' next-run intervals hold none of
    its medians, and it holds none of theirs."""
    paths = []
    for i, k in enumerate((1.0, 1.001, 1.1)):
        recs = [fig("penalty", "penalty/%s" % n, v * k, v * k * 0.99, v * k * 1.01, replicates=9,
                    next_lo=v * k * 0.98, next_hi=v * k * 1.02, next_level=0.97,
                    quality="noisy" if (i == 2 and n == "b") else "ok")
                for n, v in (("a", 4.0), ("b", 10.0))]
        paths.append(write_log(tmp_path, "p%d.log" % i, recs))
    figs = [repro.figures(parse.read_log(p)) for p in paths]
    rows = repro.per_run(figs)
    # run 0: runs 1 and 2 hold it with their ok figures: run 1 both (2), run 2 only "a" (ok), and misses it
    assert rows[0] == (2, 2, 3)
    assert rows[1] == (2, 2, 3)
    assert rows[2] == (1, 0, 4)   # one ok figure of its own; the 4 ok figures of runs 0 and 1 hold none
    text = repro.per_run_table(rows)
    assert "run 3" in text and "0.0 % of 4 held" in text and "66.7 % of 3 held" in text
