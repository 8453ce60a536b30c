"""Host tools against serial logs of the real image under QEMU (tests/host/fixtures, `make fixtures`)."""
import glob
import json
import os
import sqlite3
import subprocess
import sys

import pytest

from pmb import parse

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
FIX = os.path.join(HERE, "fixtures")
TOOL = [sys.executable, os.path.join(ROOT, "scripts", "pmubench")]
ALL = os.path.join(FIX, "qemu-nehalem-smp4-numa2-all.log")
EXPECT = {"qemu-nehalem-smp4-numa2-all": "ok", "qemu-max-smp2-latency": "ok", "qemu-nehalem-pmu-dryrun": "ok",
          "qemu-bad-config": "error", "qemu-crash-gp": "crashed"}


def tool(*args, **kw):
    return subprocess.run([*TOOL, *args], capture_output=True, text=True, timeout=300, **kw)


@pytest.mark.parametrize("name", sorted(EXPECT))
def test_parse_real_log(name):
    with open(os.path.join(FIX, name + ".log"), "rb") as f:
        run = parse.parse_log(f.read())
    assert run.status == EXPECT[name]
    assert run.records[0]["type"] == "run"
    p = tool("parse", os.path.join(FIX, name + ".log"), "--json")
    assert p.returncode == 0
    lines = p.stdout.splitlines()
    assert json.loads(lines[-1])["type"] == "end" and len(lines) == len(run.records) + 1


def test_fixture_set_is_complete():
    assert sorted(os.path.basename(p)[:-4] for p in glob.glob(os.path.join(FIX, "*.log"))) == sorted(EXPECT)


def test_parse_csv_real_log():
    p = tool("parse", ALL, "--csv")
    assert p.returncode == 0
    assert "data_source" in p.stdout and "latency_sweep" in p.stdout


def test_truncated_real_log_rejected(tmp_path):
    data = open(ALL, "rb").read()
    cut = tmp_path / "cut.log"
    cut.write_bytes(data[: len(data) * 2 // 3])
    p = tool("parse", str(cut))
    assert p.returncode != 0 and p.stderr.strip() and "\n" not in p.stderr.strip()


def test_report_real_log(tmp_path):
    html, png = tmp_path / "r.html", tmp_path / "png"
    p = tool("report", ALL, "--html", str(html), "--png", str(png))
    assert p.returncode == 0, p.stderr
    assert "L3_unshared" in p.stdout and "local_DRAM" in p.stdout
    assert html.read_text().count("data:image/png;base64") >= 1
    assert list(png.glob("*.png"))


def _worse_copy(src, dst, factor=3.0):
    """The same run with every data_source latency made `factor` times worse, CRC recomputed."""
    run = parse.parse_log(open(src, "rb").read())
    recs = []
    for r in run.records:
        r = dict(r)
        if r["type"] == "data_source" and r.get("status") == "ok":
            for k in ("median", "cycles", "ns", "tsc"):   # the figure's median and its conversions, either convention
                if isinstance(r.get(k), (int, float)):
                    r[k] = r[k] * factor
        recs.append(r)
    lines = [json.dumps(r, separators=(",", ":")) for r in recs]
    import zlib
    crc = 0
    for line in lines:
        crc = zlib.crc32(line.encode() + b"\n", crc)
    end = {"type": "end", "status": "ok", "records": len(lines), "crc32": f"{crc:08x}"}
    dst.write_text("\r\n".join(lines + [json.dumps(end, separators=(",", ":"))]) + "\r\n")


def test_nightly_real_runs(tmp_path):
    db, junit = tmp_path / "h.sqlite", tmp_path / "j.xml"
    for _ in range(2):  # re-ingest is idempotent
        p = tool("nightly", ALL, "--db", str(db), "--junit", str(junit), "--accel", "tcg")
        assert p.returncode == 0, p.stdout + p.stderr
    n = sqlite3.connect(db).execute("select count(*) from runs").fetchone()[0]
    assert n == 1
    for f in (1.001, 0.999):    # two more baseline runs (a verdict needs 3), each its own CRC
        other = tmp_path / ("base%s.log" % f)
        _worse_copy(ALL, other, f)
        assert tool("nightly", str(other), "--db", str(db), "--accel", "tcg").returncode == 0
    worse = tmp_path / "worse.log"
    _worse_copy(ALL, worse)
    p = tool("nightly", str(worse), "--db", str(db), "--junit", str(junit), "--accel", "tcg")
    assert p.returncode == 1, p.stdout + p.stderr
    assert "<failure" in junit.read_text()
    p = tool("history", "--db", str(db), "--figure", "L1")
    assert p.returncode == 0 and "L1" in p.stdout


def test_nightly_rejects_bad_log_and_leaves_db(tmp_path):
    db = tmp_path / "h.sqlite"
    assert tool("nightly", ALL, "--db", str(db), "--accel", "tcg").returncode == 0
    before = db.read_bytes()
    bad = tmp_path / "bad.log"
    bad.write_bytes(open(ALL, "rb").read().replace(b'"type":"data_source"', b'"type":"data_sourcf"', 1))
    p = tool("nightly", str(bad), "--db", str(db), "--accel", "tcg")
    assert p.returncode == 2
    assert db.read_bytes() == before
