#!/usr/bin/env python3
"""bw_vs_likwid.py - pmubench's streaming bandwidth against likwid-bench on this machine, in one run.

    scripts/bw_vs_likwid.py [--exe build/host-bench/pmubench-host] [--profile quick|full] [--repeat N]

Runs `pmubench-host bench=bandwidth` once per repeat, then likwid-bench at the same working sets (the total
bytes of all arrays, as both tools count them): one thread at each level pmubench measured (L1 .. memory at
>= 4x the LLC) on CPU 0, two threads at the memory level (pmubench's `scaling_package` point for 2 threads).
Pairs: pmubench `read` avx512 / avx2 against likwid `load_avx512` / `load_avx`, `copy` against `copy` and
`copy_avx512` (or `copy_avx`), `triad` against `stream` and `stream_avx512` (or `stream_avx`). Both count
STREAM bytes (every array element read or written once, no write-allocate). Prints one line per pair: the
two rates in GB/s (pmubench: the best median of the repeats; likwid: the best of 7 short runs per repeat,
each moving about 1 GiB, since a long run on a shared machine carries every preemption in its one time)
and pmubench / likwid.

likwid-bench is not a dependency of pmubench: on Debian or Ubuntu, `apt-get install likwid` installs it.
The machine's load average is printed before and after; other work on the machine lowers both tools' rates,
not always equally, so repeat when the load is low.
"""
import argparse
import json
import os
import re
import shutil
import subprocess
import sys

LIKWID = "likwid-bench"
LIKWID_BYTES = 1 << 30  # per likwid run: a few ms to a few hundred ms, like pmubench's samples
LIKWID_RUNS = 7


def pmubench(exe, profile):
    p = subprocess.run([exe, "bench=bandwidth", f"profile={profile}"], capture_output=True, text=True)
    if p.returncode != 0:
        sys.exit(f"bw_vs_likwid: {exe} exited {p.returncode}: {(p.stdout + p.stderr)[-500:]}")
    recs = [json.loads(l) for l in p.stdout.splitlines() if l.startswith('{"type":"bandwidth"')]
    if not recs:
        sys.exit(f"bw_vs_likwid: {exe} wrote no bandwidth record")
    return recs


def likwid(test, total_bytes, threads, runs):
    """Best of `runs` short runs (about LIKWID_BYTES moved each): pmubench's samples are short too, and a
    long run on a shared machine would carry every preemption in its one time."""
    iters = max(1, LIKWID_BYTES // max(total_bytes, 1))
    cmd = [LIKWID, "-t", test, "-i", str(iters), "-W", f"N:{total_bytes}B:{threads}"]
    best = None
    for _ in range(runs):
        p = subprocess.run(cmd, capture_output=True, text=True)
        m = re.search(r"^MByte/s:\s*([0-9.]+)", p.stdout, re.M)
        if p.returncode == 0 and m:
            v = float(m.group(1)) * 1e6
            best = v if best is None else max(best, v)
    return best


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--exe", default="build/host-bench/pmubench-host")
    ap.add_argument("--profile", default="quick", choices=("quick", "full"))
    ap.add_argument("--repeat", type=int, default=1)
    a = ap.parse_args()
    if not shutil.which(LIKWID):
        sys.exit("bw_vs_likwid: likwid-bench not found; on Debian or Ubuntu: apt-get install likwid")
    if not os.access(a.exe, os.X_OK):
        sys.exit(f"bw_vs_likwid: {a.exe}: not an executable (make host-bench builds it)")
    if a.repeat < 1:
        sys.exit(f"bw_vs_likwid: --repeat {a.repeat}: at least 1")
    listing = subprocess.run([LIKWID, "-a"], capture_output=True, text=True).stdout
    have = {l.split(" - ")[0].strip() for l in listing.splitlines() if " - " in l}
    print(f"load average before: {' '.join(f'{x:.2f}' for x in os.getloadavg())} ({os.cpu_count()} CPUs)")

    best = {}  # (series, kernel, isa, bytes_total, threads) -> (bytes/s, level)
    for _ in range(a.repeat):
        for r in pmubench(a.exe, a.profile):
            if (r["series"] == "sweep" or (r["series"] == "scaling_package" and r["threads"] == 2)) \
                    and r.get("median"):
                k = (r["series"], r["kernel"], r["isa"], r["bytes_total"], r["threads"])
                if k not in best or r["median"] > best[k][0]:
                    best[k] = (r["median"], r["level"])
    isas = {k[2] for k in best}
    wide = "avx512" if "avx512" in isas else "avx2" if "avx2" in isas else "sse2"
    sfx = {"avx512": "_avx512", "avx2": "_avx", "sse2": ""}[wide]
    pairs = [("read", "avx512", "load_avx512"), ("read", "avx2", "load_avx"), ("copy", wide, "copy"),
             ("copy", wide, "copy" + sfx), ("triad", wide, "stream"), ("triad", wide, "stream" + sfx)]
    print(f"{'threads':>7} {'level':<14} {'bytes':>12}  {'pmubench':<16} {'likwid-bench':<14} "
          f"{'pmubench GB/s':>13} {'likwid GB/s':>11} {'ratio':>6}")
    seen = set()
    for (series, kern, isa, total, threads), (bw, level) in sorted(best.items(), key=lambda x: (x[0][4], x[0][3])):
        for pk, pisa, test in pairs:
            if (pk, pisa) != (kern, isa) or test not in have or (test, total, threads) in seen:
                continue
            seen.add((test, total, threads))
            lw = likwid(test, total, threads, LIKWID_RUNS * a.repeat)
            if not lw:
                print(f"{threads:>7} {level:<14} {total:>12}  {kern + '/' + isa:<16} {test:<14} "
                      f"{bw / 1e9:13.2f} {'failed':>11}")
                continue
            print(f"{threads:>7} {level:<14} {total:>12}  {kern + '/' + isa:<16} {test:<14} "
                  f"{bw / 1e9:13.2f} {lw / 1e9:11.2f} {bw / lw:6.2f}")
    print(f"load average after:  {' '.join(f'{x:.2f}' for x in os.getloadavg())}")


if __name__ == "__main__":
    main()
