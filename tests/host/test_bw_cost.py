"""scripts/bw_cost.py: the bandwidth cost model over a log's records (docs/bandwidth-branch-penalty.md, "Cost")."""
import json
import os
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, os.path.join(ROOT, "scripts"))

import bw_cost  # noqa: E402

SCRIPT = os.path.join(ROOT, "scripts", "bw_cost.py")


def rec(**kw):
    r = {"type": "bandwidth", "series": "sweep", "level": "memory", "bytes_total": 1000, "median": 100.0, "n": 27,
         "replicates": 9}
    r.update(kw)
    return r


def test_chunked_interleaved_and_back_to_back():
    # 27 samples of 50 bytes at 100 bytes/s: 13.5 s; one warm-up pass of 10 s, 8 more when interleaved
    s, e = bw_cost.point_cost(rec(sample_bytes=50, replicates_interleaved=False))
    assert (s, e) == (13.5, 10.0)
    s, e = bw_cost.point_cost(rec(sample_bytes=50, replicates_interleaved=True))
    assert (s, e) == (13.5, 90.0)
    # a multi-threaded point: one pass of every thread together
    s, e = bw_cost.point_cost(rec(series="scaling_package", sample_bytes=50))
    assert (s, e) == (13.5, 10.0)


def test_whole_pass_log():
    # before chunked samples: 27 samples of one pass, 2 + 8 calibration passes, warm-up and counted pass
    s, e = bw_cost.point_cost(rec(passes=1))
    assert s == 270.0 and e == (2 + 8 + 1 + 1) * 10.0
    assert bw_cost.point_cost(rec(median=None)) == (0.0, 0.0)


def test_log_cut_short_and_elapsed(tmp_path):
    p = tmp_path / "run.log"
    lines = [json.dumps(rec(sample_bytes=50, level="L1"), separators=(",", ":")),
             json.dumps(rec(sample_bytes=50), separators=(",", ":")),
             "== bench bandwidth done in 30.00 s", '{"type":"bandwidth","series":"sweep","lev']
    p.write_text("\n".join(lines) + "\n")
    rows, elapsed = bw_cost.cost(str(p))
    assert elapsed == 30.0
    assert rows[("sweep", "L1")] == [1, 13.5, 10.0] and rows[("sweep", "memory")] == [1, 13.5, 10.0]
    out = subprocess.run([sys.executable, SCRIPT, str(p)], capture_output=True, text=True)
    assert out.returncode == 0 and "the benchmark's elapsed: 30.00 s" in out.stdout


def test_bad_inputs(tmp_path):
    empty = tmp_path / "empty.log"
    empty.write_text('{"type":"run"}\n')
    out = subprocess.run([sys.executable, SCRIPT, str(empty)], capture_output=True, text=True)
    assert out.returncode != 0 and out.stderr.strip() == f"bw_cost: {empty}: no bandwidth record"
    out = subprocess.run([sys.executable, SCRIPT, str(tmp_path / "none.log")], capture_output=True, text=True)
    assert out.returncode != 0 and "none.log: No such file or directory" in out.stderr
    assert len(out.stderr.strip().splitlines()) == 1
