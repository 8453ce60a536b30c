#!/usr/bin/env python3
"""bw_vs_likwid.py - pmubench's streaming bandwidth against likwid-bench on this machine, in one run.

    scripts/bw_vs_likwid.py [--exe build/host-bench/pmubench-host] [--profile quick|full] [--repeat N]
                            [--cpu C] [--levels L1,L2,...] [--kernels copy,...] [--every-size]

Runs `pmubench-host bench=bandwidth`, then likwid-bench at the same working sets (the total bytes of all
arrays, as both tools count them): one thread at each level pmubench measured (L1 .. memory at >= 4x the
LLC; the middle one of pmubench's sizes of each level, or with --every-size all of them), two threads at the
memory level (pmubench's `scaling_package` point for 2 threads). Every likwid-bench run costs about 1 s more
than its measurement (it calibrates its timer with two 0.5 s sleeps), so the full profile's every size (about
160 pairs and sizes, 7 runs each) takes about 20 minutes; one size per level about 5. With --cpu C the
one-thread points of both tools run on CPU C (pmubench under `taskset -c C`, then a second pmubench run on
every CPU of the script's affinity for the two-thread points; likwid-bench under `taskset -c C`); without it
one pmubench run gives both, its one-thread points on the first CPU of the affinity, and likwid-bench's on
the first CPU of its node domain.

Pairs (pmubench kernel against likwid tests; "widest" is the widest vector ISA both have):
  read                         load_avx512 (or load_avx, load_sse)
  copy                         copy (scalar), copy_avx512 (or copy_avx, copy_sse)
  triad                        stream (scalar), stream_avx512 (or stream_avx, stream_sse)
  copy_nt                      copy_mem_avx512 (or copy_mem_avx, copy_mem_sse, copy_mem): non-temporal stores
  triad_nt                     stream_mem_avx512 (or stream_mem_avx, stream_mem_sse, stream_mem): non-temporal
On pmubench's side each one-thread figure is the faster of its ISAs at that size (the sweep measures SSE2
and the widest; the line names the one), since the question is whether pmubench's best reaches the peer's
best; the two-thread points are the widest ISA's (the scaling series runs that one only). Both count STREAM
bytes (every array element read or written once, no write-allocate). pmubench measures copy_nt and
triad_nt at the memory level only in its sweep (bw_sweep_measures), so those pairs are there alone.

Each repeat runs pmubench, then every pair's likwid-bench runs (best of 7 short runs, each moving about
1 GiB: a long run on a shared machine carries every preemption in its one time), so the repeats alternate
the two tools in time. One line per pair: each repeat's pmubench median and likwid best in GB/s and their
ratio, then the ratio of pmubench's best median to likwid's best over all repeats. --levels and --kernels
keep the lines of those levels and pmubench kernels only (pmubench still runs whole; likwid-bench runs only
for the lines kept).

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
LEVELS = ("L1", "L2", "L3", "llc_to_memory", "memory")
KERNELS = ("read", "copy", "triad", "copy_nt", "triad_nt")  # those with a likwid-bench counterpart


def pmubench(exe, profile, cpu=None):
    cmd = [exe, "bench=bandwidth", f"profile={profile}"]
    if cpu is not None:
        cmd = ["taskset", "-c", str(cpu)] + cmd
    p = subprocess.run(cmd, capture_output=True, text=True)
    if p.returncode != 0:
        sys.exit(f"bw_vs_likwid: {' '.join(cmd)} exited {p.returncode}: {(p.stdout + p.stderr)[-500:]}")
    recs = [json.loads(l) for l in p.stdout.splitlines() if l.startswith('{"type":"bandwidth"')]
    if not recs:
        sys.exit(f"bw_vs_likwid: {exe} wrote no bandwidth record")
    return recs


def likwid(test, total_bytes, threads, runs, cpu=None):
    """Best of `runs` short runs (about LIKWID_BYTES moved each): pmubench's samples are short too, and a
    long run on a shared machine would carry every preemption in its one time."""
    iters = max(1, LIKWID_BYTES // max(total_bytes, 1))
    cmd = [LIKWID, "-t", test, "-i", str(iters), "-W", f"N:{total_bytes}B:{threads}"]
    if cpu is not None and threads == 1:
        cmd = ["taskset", "-c", str(cpu)] + cmd
    best = None
    for _ in range(runs):
        p = subprocess.run(cmd, capture_output=True, text=True)
        m = re.search(r"^MByte/s:\s*([0-9.]+)", p.stdout, re.M)
        if p.returncode == 0 and m:
            v = float(m.group(1)) * 1e6
            best = v if best is None else max(best, v)
    return best


def first(have, names):
    return next((n for n in names if n in have), None)


def tests_for(kernel, wide, have):
    """The likwid-bench tests (of those this likwid-bench has) pmubench's `kernel` is compared with, where
    `wide` is pmubench's widest ISA."""
    vec = {"avx512": ["_avx512", "_avx", "_sse"], "avx2": ["_avx", "_sse"], "sse2": ["_sse"]}[wide]
    want = {"read": [first(have, ["load" + s for s in vec])],
            "copy": ["copy", first(have, ["copy" + s for s in vec])],
            "triad": ["stream", first(have, ["stream" + s for s in vec])],
            "copy_nt": [first(have, ["copy_mem" + s for s in vec] + ["copy_mem"])],
            "triad_nt": [first(have, ["stream_mem" + s for s in vec] + ["stream_mem"])]}.get(kernel, [])
    return [t for t in want if t and t in have]


def best_isa(pts):
    """(kernel, bytes_total, threads) -> (median, level, isa): the fastest ISA of each point."""
    out = {}
    for (kern, isa, total, threads), (bw, level) in pts.items():
        k = (kern, total, threads)
        if k not in out or bw > out[k][0]:
            out[k] = (bw, level, isa)
    return out


def points(recs, every_size=False):
    """(kernel, isa, bytes_total, threads) -> (median, level) of the one- and two-thread points compared: every
    size, or per kernel, ISA, thread count and level the middle one of pmubench's sizes there (the lower
    middle of an even count), the same size for every kernel of a sweep row."""
    out = {}
    for r in recs:
        if not r.get("median"):
            continue
        if (r["series"] == "sweep" and r["threads"] == 1) or (r["series"] == "scaling_package" and r["threads"] == 2):
            out[(r["kernel"], r["isa"], r["bytes_total"], r["threads"])] = (r["median"], r["level"])
    if every_size:
        return out
    groups = {}
    for k, (_, level) in out.items():
        groups.setdefault((k[0], k[1], k[3], level), []).append(k)
    keep = {sorted(ks, key=lambda k: k[2])[(len(ks) - 1) // 2] for ks in groups.values()}
    return {k: v for k, v in out.items() if k in keep}


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--exe", default="build/host-bench/pmubench-host")
    ap.add_argument("--profile", default="quick", choices=("quick", "full"))
    ap.add_argument("--repeat", type=int, default=1)
    ap.add_argument("--cpu", type=int, default=None, help="CPU for the one-thread points of both tools")
    ap.add_argument("--levels", default=",".join(LEVELS), help="levels to compare (comma-separated)")
    ap.add_argument("--kernels", default="", help="pmubench kernels to compare (comma-separated; default: all)")
    ap.add_argument("--every-size", action="store_true",
                    help="every size pmubench measured, not the middle size of each level")
    a = ap.parse_args()
    if not shutil.which(LIKWID):
        sys.exit("bw_vs_likwid: likwid-bench not found; on Debian or Ubuntu: apt-get install likwid")
    if a.repeat < 1:
        sys.exit(f"bw_vs_likwid: --repeat {a.repeat}: at least 1")
    kernels = [k for k in a.kernels.split(",") if k]
    if [k for k in kernels if k not in KERNELS]:
        sys.exit(f"bw_vs_likwid: --kernels {a.kernels}: unknown kernel "
                 f"{[k for k in kernels if k not in KERNELS][0]}; known: {', '.join(KERNELS)}")
    levels = [l for l in a.levels.split(",") if l]
    bad = [l for l in levels if l not in LEVELS]
    if bad or not levels:
        sys.exit(f"bw_vs_likwid: --levels {a.levels}: unknown level {bad[0] if bad else '(none)'}; "
                 f"known: {', '.join(LEVELS)}")
    if a.cpu is not None and a.cpu not in os.sched_getaffinity(0):
        sys.exit(f"bw_vs_likwid: --cpu {a.cpu}: not in this process's affinity {sorted(os.sched_getaffinity(0))}")
    # the arguments first: a bad one is named whether or not the runner is built yet
    if not os.access(a.exe, os.X_OK):
        sys.exit(f"bw_vs_likwid: {a.exe}: not an executable (make host-bench builds it)")
    listing = subprocess.run([LIKWID, "-a"], capture_output=True, text=True).stdout
    have = {l.split(" - ")[0].strip() for l in listing.splitlines() if " - " in l}
    print(f"load average before: {' '.join(f'{x:.2f}' for x in os.getloadavg())} ({os.cpu_count()} CPUs)")

    rows = {}  # (threads, bytes_total, kernel, isa, test) -> {"level", "pmb": [...], "lw": [...]}
    for rep in range(a.repeat):
        if a.cpu is None:
            pts = points(pmubench(a.exe, a.profile), a.every_size)
        else:  # one-thread points on --cpu, two-thread points from a run on every CPU
            pts = {k: v for k, v in points(pmubench(a.exe, a.profile, a.cpu), a.every_size).items() if k[3] == 1}
            pts.update({k: v for k, v in points(pmubench(a.exe, a.profile), a.every_size).items() if k[3] == 2})
        isas = {k[1] for k in pts}
        wide = "avx512" if "avx512" in isas else "avx2" if "avx2" in isas else "sse2"
        for (kern, total, threads), (bw, level, isa) in sorted(best_isa(pts).items(), key=lambda x: (x[0][2], x[0][1])):
            if level not in levels or (kernels and kern not in kernels):
                continue
            for test in tests_for(kern, wide, have):
                row = rows.setdefault((threads, total, kern, test), {"level": level, "pmb": [], "lw": [], "isa": []})
                row["pmb"].append(bw)
                row["isa"].append(isa)
                row["lw"].append(likwid(test, total, threads, LIKWID_RUNS, a.cpu))
        print(f"repeat {rep + 1} of {a.repeat} done; load average {' '.join(f'{x:.2f}' for x in os.getloadavg())}",
              flush=True)

    def gb(v):
        return f"{v / 1e9:.2f}" if v else "failed"

    print(f"{'threads':>7} {'level':<14} {'bytes':>12}  {'pmubench':<16} {'likwid-bench':<18} "
          f"{'pmubench GB/s':>13}  {'likwid GB/s':>11}  {'ratio':>6}  best/best")
    for (threads, total, kern, test), row in sorted(rows.items()):
        ratios = [f"{p / l:.2f}" if l else "-" for p, l in zip(row["pmb"], row["lw"])]
        lws = [l for l in row["lw"] if l]
        best = f"{max(row['pmb']) / max(lws):.2f}" if lws else "-"
        isa = "+".join(sorted(set(row["isa"])))
        print(f"{threads:>7} {row['level']:<14} {total:>12}  {kern + '/' + isa:<16} {test:<18} "
              f"{'/'.join(gb(p) for p in row['pmb']):>13}  {'/'.join(gb(l) for l in row['lw']):>11}  "
              f"{'/'.join(ratios):>6}  {best}")
    print(f"load average after:  {' '.join(f'{x:.2f}' for x in os.getloadavg())}")


if __name__ == "__main__":
    main()
