"""scripts/bw_vs_likwid.py: which likwid-bench test each pmubench kernel is compared with, and which sizes."""
import os
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, os.path.join(ROOT, "scripts"))

import bw_vs_likwid as bvl  # noqa: E402

SCRIPT = os.path.join(ROOT, "scripts", "bw_vs_likwid.py")
LIKWID_TESTS = {"load_avx512", "load_avx", "copy", "copy_sse", "copy_avx", "copy_avx512", "copy_mem", "copy_mem_sse",
                "copy_mem_avx", "copy_mem_avx512", "stream", "stream_sse", "stream_avx", "stream_avx512",
                "stream_mem", "stream_mem_sse", "stream_mem_avx", "stream_mem_avx512"}


def test_pairs_widest_isa_and_nt_stores():
    p = bvl.pairs_for("avx512", LIKWID_TESTS)
    assert ("copy_nt", "avx512", "copy_mem_avx512") in p
    assert ("triad_nt", "avx512", "stream_mem_avx512") in p
    assert ("copy", "avx512", "copy_avx512") in p and ("copy", "avx512", "copy") in p
    assert ("triad", "avx512", "stream_avx512") in p and ("read", "avx512", "load_avx512") in p
    # cached-store kernels never against likwid's non-temporal tests, nor the other way round
    for k, _, t in p:
        assert k.endswith("_nt") == ("_mem" in t), (k, t)
    # a likwid-bench without the AVX-512 tests: the next widest, then the scalar non-temporal test
    have = LIKWID_TESTS - {"copy_mem_avx512", "stream_mem_avx512", "copy_avx512", "stream_avx512"}
    p = bvl.pairs_for("avx512", have)
    assert ("copy_nt", "avx512", "copy_mem_avx") in p and ("triad_nt", "avx512", "stream_mem_avx") in p
    p = bvl.pairs_for("sse2", {"copy", "copy_mem", "stream", "stream_mem"})
    assert ("copy_nt", "sse2", "copy_mem") in p and ("triad_nt", "sse2", "stream_mem") in p
    assert not [x for x in p if x[0] == "read"]  # no load_avx512 / load_avx: no read pair


def rec(kernel, total, level, series="sweep", threads=1, median=1e9):
    return {"type": "bandwidth", "series": series, "kernel": kernel, "isa": "avx512", "bytes_total": total,
            "threads": threads, "level": level, "median": median}


def test_points_middle_size_per_level():
    recs = [rec("copy", b, "L1") for b in (8192, 16384, 24576, 32768)] + \
           [rec("copy", b, "memory") for b in (1 << 27,)] + \
           [rec("copy_nt", b, "llc_to_memory") for b in (3 << 24, 1 << 26, 3 << 25)] + \
           [rec("read", 1 << 27, "memory", series="scaling_package", threads=2),
            rec("read", 1 << 27, "memory", series="scaling_package", threads=1),  # 1 thread of scaling: not compared
            rec("read", 1 << 20, "L2", median=None)]  # no figure: not compared
    pts = bvl.points(recs)
    assert set(pts) == {("copy", "avx512", 16384, 1), ("copy", "avx512", 1 << 27, 1),
                        ("copy_nt", "avx512", 1 << 26, 1), ("read", "avx512", 1 << 27, 2)}
    assert pts[("copy", "avx512", 16384, 1)] == (1e9, "L1")
    assert len(bvl.points(recs, every_size=True)) == 4 + 1 + 3 + 1


def test_bad_arguments_one_line_each():
    for args, want in ((["--repeat", "0"], "--repeat 0: at least 1"), (["--levels", "L4"], "--levels L4: unknown level L4"),
                       (["--exe", "/nonexistent"], "/nonexistent: not an executable")):
        p = subprocess.run([sys.executable, SCRIPT] + args, capture_output=True, text=True, cwd=ROOT)
        if "likwid-bench not found" in p.stderr:
            return  # the checks come after the likwid-bench check
        assert p.returncode != 0 and want in p.stderr, (args, p.stderr)
