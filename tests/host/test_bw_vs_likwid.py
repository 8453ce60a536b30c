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


def test_tests_widest_isa_and_nt_stores():
    t = bvl.tests_for
    assert t("copy_nt", "avx512", LIKWID_TESTS) == ["copy_mem_avx512"]
    assert t("triad_nt", "avx512", LIKWID_TESTS) == ["stream_mem_avx512"]
    assert t("copy", "avx512", LIKWID_TESTS) == ["copy", "copy_avx512"]
    assert t("triad", "avx512", LIKWID_TESTS) == ["stream", "stream_avx512"]
    assert t("read", "avx512", LIKWID_TESTS) == ["load_avx512"]
    assert t("read", "avx2", LIKWID_TESTS) == ["load_avx"]
    assert t("write", "avx512", LIKWID_TESTS) == []  # no likwid counterpart compared
    # cached-store kernels never against likwid's non-temporal tests, nor the other way round
    for k in bvl.KERNELS:
        for x in t(k, "avx512", LIKWID_TESTS):
            assert k.endswith("_nt") == ("_mem" in x), (k, x)
    # a likwid-bench without the AVX-512 tests: the next widest, then the scalar non-temporal test
    have = LIKWID_TESTS - {"copy_mem_avx512", "stream_mem_avx512", "copy_avx512", "stream_avx512"}
    assert t("copy_nt", "avx512", have) == ["copy_mem_avx"] and t("triad_nt", "avx512", have) == ["stream_mem_avx"]
    have = {"copy", "copy_mem", "stream", "stream_mem"}
    assert t("copy_nt", "sse2", have) == ["copy_mem"] and t("triad_nt", "sse2", have) == ["stream_mem"]
    assert t("read", "sse2", have) == []  # no load test: no read pair


def test_best_isa_per_point():
    pts = {("copy", "sse2", 100, 1): (35e9, "memory"), ("copy", "avx512", 100, 1): (29e9, "memory"),
           ("read", "sse2", 100, 1): (30e9, "memory"), ("read", "avx512", 100, 1): (32e9, "memory"),
           ("read", "avx512", 200, 2): (31e9, "memory")}
    b = bvl.best_isa(pts)
    assert b[("copy", 100, 1)] == (35e9, "memory", "sse2")
    assert b[("read", 100, 1)] == (32e9, "memory", "avx512")
    assert b[("read", 200, 2)] == (31e9, "memory", "avx512")


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
                       (["--exe", "/nonexistent"], "/nonexistent: not an executable"),
                       (["--kernels", "write"], "--kernels write: unknown kernel write")):
        p = subprocess.run([sys.executable, SCRIPT] + args, capture_output=True, text=True, cwd=ROOT)
        if "likwid-bench not found" in p.stderr:
            return  # the checks come after the likwid-bench check
        assert p.returncode != 0 and want in p.stderr, (args, p.stderr)
