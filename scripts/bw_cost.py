#!/usr/bin/env python3
"""bw_cost.py - where a run's bandwidth benchmark spent its time, from its records alone.

    scripts/bw_cost.py LOG [LOG ...]

For every `bandwidth` record of a log (a hosted or image run, complete or cut short) the cost model of
docs/bandwidth-branch-penalty.md ("Cost"): sampling = n x the bytes of one sample / the median rate, and
the whole passes that are not samples: one warm-up pass per point (sweep), 8 more for a sweep point whose
replicates were interleaved, one pass of every thread together (scaling, numa). Logs written before samples
were chunked (no `sample_bytes`) are costed as they ran: every sample, calibration region and warm-up whole
passes (about n + 2 x passes + (R - 1) x passes + 2 passes per point). Prints one line per series and level
and the total, beside the benchmark's own elapsed time when the log has its "== bench bandwidth done in"
line. Overheads the records cannot show (buffer writes, empty regions, thread hand-overs) are the
difference.
"""
import json
import re
import sys
from collections import OrderedDict

DONE = re.compile(r"^== bench bandwidth done in ([0-9.]+) s$")


def point_cost(r):
    """(sampling seconds, other whole-pass seconds) of one record."""
    rate = r.get("median")
    if not isinstance(rate, (int, float)) or rate <= 0:
        return 0.0, 0.0
    n = r.get("n") or 0
    total = r.get("bytes_total") or 0
    one_pass = total / rate
    reps = r.get("replicates") or 1
    if "sample_bytes" in r:
        sampling = n * (r["sample_bytes"] or 0) / rate
        extra = one_pass * (1 + (reps - 1 if r.get("replicates_interleaved") else 0))
        return sampling, extra
    passes = r.get("passes") or 1
    sampling = n * passes * one_pass
    extra = (2 * passes + (reps - 1) * passes + 1 + passes) * one_pass
    return sampling, extra


def cost(path):
    rows = OrderedDict()
    elapsed = None
    with open(path, errors="replace") as f:
        for line in f:
            m = DONE.match(line.strip())
            if m:
                elapsed = float(m.group(1))
            if not line.startswith('{"type":"bandwidth"'):
                continue
            try:
                r = json.loads(line)
            except json.JSONDecodeError:
                continue  # a line cut by the end of a log
            s, e = point_cost(r)
            row = rows.setdefault((r.get("series", "?"), r.get("level", "?")), [0, 0.0, 0.0])
            row[0] += 1
            row[1] += s
            row[2] += e
    return rows, elapsed


def main(argv):
    if len(argv) < 2:
        sys.exit("usage: bw_cost.py LOG [LOG ...]")
    for path in argv[1:]:
        try:
            rows, elapsed = cost(path)
        except OSError as e:
            sys.exit(f"bw_cost: {path}: {e.strerror}")
        if not rows:
            sys.exit(f"bw_cost: {path}: no bandwidth record")
        print(path)
        print(f"  {'series':<16} {'level':<14} {'points':>6} {'sampling s':>10} {'passes s':>9} {'model s':>8}")
        tot = [0, 0.0, 0.0]
        for (series, level), (n, s, e) in rows.items():
            print(f"  {series:<16} {level:<14} {n:6d} {s:10.2f} {e:9.2f} {s + e:8.2f}")
            tot = [tot[0] + n, tot[1] + s, tot[2] + e]
        line = f"  {'total':<16} {'':<14} {tot[0]:6d} {tot[1]:10.2f} {tot[2]:9.2f} {tot[1] + tot[2]:8.2f}"
        print(line + (f"   (the benchmark's elapsed: {elapsed:.2f} s)" if elapsed is not None else
                      "   (no elapsed line: the log ends inside the benchmark)"))


if __name__ == "__main__":
    main(sys.argv)
