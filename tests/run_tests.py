#!/usr/bin/env python3
"""Run every test pmubench has and print one summary line: `N passed, N failed`.

Unit tests are cmocka binaries run with TAP output; Python tests (QEMU boot tests, host tools)
run under pytest with a JUnit XML report. Exit status is non-zero when anything failed.
"""
import argparse
import os
import re
import subprocess
import sys
import tempfile
import xml.etree.ElementTree as ET

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def run_unit(binaries):
    passed = failed = 0
    for b in binaries:
        env = dict(os.environ, CMOCKA_MESSAGE_OUTPUT="TAP")
        p = subprocess.run([b], env=env, capture_output=True, text=True, timeout=300)
        ok = len(re.findall(r"^ok \d+", p.stdout, re.M))
        bad = len(re.findall(r"^not ok \d+", p.stdout, re.M))
        if p.returncode != 0 and bad == 0:
            bad = 1  # crashed (sanitizer, abort) before reporting
        status = "ok" if bad == 0 else "FAILED"
        print(f"unit {os.path.basename(b)}: {ok} passed, {bad} failed [{status}]")
        if bad:
            sys.stdout.write(p.stdout[-4000:])
            sys.stdout.write(p.stderr[-4000:])
        passed += ok
        failed += bad
    return passed, failed


def run_pytest(paths, extra):
    with tempfile.TemporaryDirectory() as d:
        xml = os.path.join(d, "junit.xml")
        cmd = [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider",
               f"--junitxml={xml}", *extra, *paths]
        print("+", " ".join(cmd), flush=True)
        rc = subprocess.run(cmd, cwd=ROOT).returncode
        if not os.path.exists(xml):
            return 0, 1
        root = ET.parse(xml).getroot()
        suites = [root] if root.tag == "testsuite" else list(root)
        tests = sum(int(s.get("tests", 0)) for s in suites)
        bad = sum(int(s.get("failures", 0)) + int(s.get("errors", 0)) for s in suites)
        skipped = sum(int(s.get("skipped", 0)) for s in suites)
        if rc not in (0, 1, 5) and bad == 0:
            bad = 1
        return tests - bad - skipped, bad


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--unit", nargs="*", default=[])
    ap.add_argument("--boot", action="store_true", help="QEMU boot tests (tests/boot)")
    ap.add_argument("--py", action="store_true", help="host tool tests (tests/host)")
    ap.add_argument("-k", default=None)
    a = ap.parse_args()
    passed, failed = run_unit(a.unit)
    paths = []
    if a.py or a.boot:
        paths.append("tests/host")
    if a.boot:
        paths.append("tests/boot")
    paths = [p for p in paths if os.path.isdir(os.path.join(ROOT, p))]
    if paths:
        p, f = run_pytest(paths, ["-k", a.k] if a.k else [])
        passed += p
        failed += f
    print(f"{passed} passed, {failed} failed")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
