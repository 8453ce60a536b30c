#!/usr/bin/env python3
"""bench_cost.py - what a hosted run costs: wall time, time per benchmark, loads issued by the latency sweep,
peak RSS; one row per configuration, each against the first.

    scripts/bench_cost.py [--exe build/host-bench/pmubench-host] [--repeat N] [--cpus 0,1] \\
        "bench=latency profile=full sweep_top=256M" "bench=latency profile=full sweep_top=2G"

Each configuration (key=value words, as pmubench-host takes them) runs --repeat times in a fresh process
pinned to --cpus; the row shows the median of the repeats. The time per benchmark comes from the run's own
"== bench NAME done in S s" lines, the loads, chain-building time and buffer time from its `latency_series`
records (`loads`, `build_seconds`, `alloc_seconds`: taking the series' buffers, faulting them in and giving
them back), the CPU time (user + system, every thread) and the peak RSS from the kernel's
accounting of the child (wait4). The machine's
load average is printed before and after: other work on the machine shows in every number.
"""
import argparse
import json
import os
import re
import shlex
import statistics
import subprocess
import sys
import time

DONE = re.compile(r"^== bench (\w+) done in ([0-9.]+) s$")


def run_once(exe, cfg, cpus, keep=None):
    cmd = [exe] + shlex.split(cfg)
    if cpus:
        cmd = ["taskset", "-c", cpus] + cmd
    t0 = time.monotonic()
    p = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    out = p.stdout.read()
    _, status, ru = os.wait4(p.pid, 0)
    wall = time.monotonic() - t0
    if keep:
        with open(keep, "w") as f:
            f.write(out)
    p.returncode = os.waitstatus_to_exitcode(status)
    row = {"wall": wall, "cpu": ru.ru_utime + ru.ru_stime, "rss_mib": ru.ru_maxrss / 1024.0, "bench": {}, "loads": 0, "build": 0.0, "alloc": 0.0,
           "points": 0, "rc": p.returncode}
    for line in out.splitlines():
        m = DONE.match(line.strip())
        if m:
            row["bench"][m.group(1)] = float(m.group(2))
        elif line.startswith('{"type":"latency_series"'):
            r = json.loads(line)
            row["loads"] += r.get("loads", 0)
            row["build"] += r.get("build_seconds", 0.0)
            row["alloc"] += r.get("alloc_seconds", 0.0)
            row["points"] += r.get("points", 0)
    if p.returncode != 0:
        tail = "\n".join(out.splitlines()[-5:])
        sys.exit(f"bench_cost: '{cfg}' exited {p.returncode}:\n{tail}")
    return row


def median_row(rows):
    med = lambda k: statistics.median(r[k] for r in rows)
    names = sorted({n for r in rows for n in r["bench"]})
    return {"wall": med("wall"), "cpu": med("cpu"), "rss_mib": med("rss_mib"), "loads": med("loads"), "build": med("build"), "alloc": med("alloc"),
            "points": med("points"),
            "bench": {n: statistics.median(r["bench"].get(n, 0.0) for r in rows) for n in names},
            "walls": [r["wall"] for r in rows]}


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--exe", default="build/host-bench/pmubench-host")
    ap.add_argument("--repeat", type=int, default=1)
    ap.add_argument("--cpus", default="", help="taskset CPU list (default: all)")
    ap.add_argument("--keep", default="", help="directory to keep each run's output in (cCONFIG-rREPEAT.log)")
    ap.add_argument("configs", nargs="+", help="one configuration: key=value words in one argument")
    a = ap.parse_args()
    if not os.access(a.exe, os.X_OK):
        sys.exit(f"bench_cost: {a.exe}: not an executable (make host-bench builds it)")
    if a.repeat < 1:
        sys.exit(f"bench_cost: --repeat {a.repeat}: at least 1")
    if a.keep and not os.path.isdir(a.keep):
        sys.exit(f"bench_cost: --keep {a.keep}: not a directory")
    print(f"load average before: {' '.join(f'{x:.2f}' for x in os.getloadavg())} ({os.cpu_count()} CPUs)")
    rows = []
    for cfg in a.configs:
        keep = lambda i, r: os.path.join(a.keep, f"c{i}-r{r}.log") if a.keep else None  # noqa: E731
        runs = [run_once(a.exe, cfg, a.cpus, keep(len(rows), r)) for r in range(a.repeat)]
        rows.append((cfg, median_row(runs)))
    print(f"load average after:  {' '.join(f'{x:.2f}' for x in os.getloadavg())}")
    base = rows[0][1]
    for cfg, r in rows:
        ratio = r["wall"] / base["wall"] if base["wall"] else float("nan")
        print(f"\n{cfg}  [{a.exe}]")
        cr = r["cpu"] / base["cpu"] if base["cpu"] else float("nan")
        print(f"  wall {r['wall']:.2f} s (runs: {', '.join(f'{w:.2f}' for w in r['walls'])}), "
              f"x{ratio:.2f} of the first; CPU time {r['cpu']:.2f} s (x{cr:.2f}); peak RSS {r['rss_mib']:.0f} MiB")
        if r["points"]:
            lr = r["loads"] / base["loads"] if base["loads"] else float("nan")
            print(f"  latency sweep: {r['points']:.0f} points, {r['loads'] / 1e6:.2f} M loads (x{lr:.2f}), "
                  f"chains built in {r['build']:.2f} s, buffers taken in {r['alloc']:.2f} s")
        for n, s in r["bench"].items():
            print(f"  {n:<18} {s:8.2f} s")


if __name__ == "__main__":
    main()
