"""pmubench repro: do a figure's intervals hold on the next run? (docs/measurement.md, "Replicates").

Takes N runs (verified logs given on the command line, or N runs of the hosted runner made here) and,
for every figure class (the Table 2 rows by level, the sweep points by the cache level their working set
fits, bandwidth, penalties, c2c, ...), counts over ordered pairs of runs (i, j), i != j, how often an
interval of a figure in run i holds the median of the same figure in run j:

- the 95 % CI [ci_lo, ci_hi] of the median: how well run i knows its own median. Even where every run is
  set up alike (replicates exchangeable across runs) it holds another run's median with probability below
  95 %, since that median scatters as well: 86.9 % for the sign-test interval x[1]..x[7] of 9 replicates
  (EXPECTED_CI_NEXT);
- the next-run interval [next_lo, next_hi] (stats_next_median_ranks, records with replicates): where the next
  run's median falls, at probability next_level (97.1 % for 9 replicates). A figure without one (a single
  series, a derived figure) is counted with its CI.

Only figures whose final verdict in run i (the record's quality, made suspect by a disagreeing cross-check
of that run) is `ok` count towards the coverage; `noisy` figures are shown beside them and may miss.

This is a benchmark of the tool's intervals, not a test: its numbers depend on the machine and its load.
"""
import math
import os
import subprocess
import sys

from . import REPO_ROOT
from . import figures as figmod
from . import parse as parsemod

DEFAULT_RUNNER = os.path.join(REPO_ROOT, "build", "host-bench", "pmubench-host")

# Print order of the classes.
CLASSES = ("table2/L1", "table2/L2", "table2/L3", "table2/DRAM",
           "sweep/L1", "sweep/L2", "sweep/L3", "sweep/DRAM",
           "bandwidth", "penalty", "c2c", "numa/loaded", "branch", "derived", "other")


def _num(v):
    return isinstance(v, (int, float)) and not isinstance(v, bool) and math.isfinite(v)


# P(the CI x[1]..x[7] of 9 replicate medians holds another run's median of 9), the runs' 18 replicates
# exchangeable: 1 - 2 P(K <= 1), K the number of this run's medians below the other's (stats.h,
# stats_next_median_ranks). The CI is a statement about this run's median, so this is its ceiling here.
def expected_ci_next(r=9, lo=1):
    h = (r + 1) // 2
    tot = math.comb(2 * r, r)
    return 1 - 2 * sum(math.comb(k + h - 1, h - 1) * math.comb(2 * r - k - h, r - h) for k in range(lo + 1)) / tot


EXPECTED_CI_NEXT = expected_ci_next()


class Fig:
    __slots__ = ("name", "cls", "median", "lo", "hi", "quality", "nlo", "nhi")

    def __init__(self, name, cls, median, lo, hi, quality, nlo=None, nhi=None):
        self.name, self.cls, self.median, self.lo, self.hi, self.quality = name, cls, median, lo, hi, quality
        # the next-run interval; the CI where the figure has none
        self.nlo, self.nhi = (nlo, nhi) if nlo is not None and nhi is not None else (lo, hi)


def _cache_sizes(run_rec):
    """{1: L1D bytes, 2: L2, 3: L3} from the run record's CPUID caches (data or unified)."""
    out = {}
    for c in (run_rec or {}).get("caches") or []:
        if isinstance(c, dict) and c.get("type") in ("data", "unified") and _num(c.get("bytes")):
            out.setdefault(int(c.get("level", 0)), c["bytes"])
    return out


def classify(rec, fig_name, caches):
    """The figure class of a figure (name) in a record."""
    t = rec.get("type")
    if t == "data_source":
        src = rec.get("source") or ""
        if src == "L1":
            return "table2/L1"
        if src == "L2":
            return "table2/L2"
        if "DRAM" in src:
            return "table2/DRAM"
        return "table2/L3"
    if t == "latency_sweep":
        b = rec.get("bytes")
        if not _num(b):
            return "other"
        for lvl in (1, 2, 3):
            if lvl in caches and b <= caches[lvl]:
                return "sweep/L%d" % lvl
        return "sweep/DRAM"
    if t in ("bandwidth", "bandwidth_peak"):
        return "bandwidth"
    if t == "penalty":
        return "penalty"
    if t in ("c2c",):
        return "c2c"
    if t in ("numa_latency", "loaded_latency"):
        return "numa/loaded"
    if t == "branch":
        return "branch"
    if t in ("latency_plateau", "cache_inferred"):
        return "derived"
    return "other"


def _figures_in(rec):
    """(figure dict, its record) for the record and its nested figures (c2c "hit" / "hitm")."""
    if "figure" in rec:
        yield rec
    for v in rec.values():
        if isinstance(v, dict) and "figure" in v:
            yield v


def figures(run):
    """name -> Fig of one verified run, with the final verdict (a disagreeing cross-check's suspect list
    applied)."""
    caches = _cache_sizes(run.records[0] if run.records else None)
    marked = figmod.crosscheck_suspects(run.records)
    out = {}
    for r in run.records:
        for f in _figures_in(r):
            name = f.get("figure")
            if not isinstance(name, str) or not _num(f.get("median")):
                continue
            q, _why = figmod.final_quality(f, marked)
            lo, hi = f.get("ci_lo"), f.get("ci_hi")
            nlo, nhi = f.get("next_lo"), f.get("next_hi")
            nok = _num(nlo) and _num(nhi)
            out[name] = Fig(name, classify(r, name, caches), f["median"], lo if _num(lo) else None,
                            hi if _num(hi) else None, q, nlo if nok else None, nhi if nok else None)
    return out


class Row:
    def __init__(self):
        self.pairs = self.covered = 0
        self.noisy_pairs = self.noisy_covered = 0
        self.okok_pairs = self.okok_covered = 0  # ok pairs whose other run's figure is ok as well
        self.next_covered = 0   # ok pairs whose next-run interval (or CI, without one) holds the other median
        self.okok_next = 0      # ok -> ok pairs whose next-run interval holds it
        self.next_half = []     # next-run interval half-width / |median| of ok figures
        self.figs = set()
        self.dev = []   # |median_j / median_i - 1| of ok figures
        self.half = []  # CI half-width / |median| of ok figures


def _median(xs):
    xs = sorted(xs)
    n = len(xs)
    if not n:
        return None
    return xs[n // 2] if n % 2 else (xs[n // 2 - 1] + xs[n // 2]) / 2


def coverage(runs_figs):
    """class -> Row over every ordered pair of runs. runs_figs: list of name -> Fig."""
    rows = {}
    for i, fi in enumerate(runs_figs):
        for name, f in fi.items():
            if f.lo is None or f.hi is None or f.quality not in ("ok", "noisy"):
                continue
            row = rows.setdefault(f.cls, Row())
            for j, fj in enumerate(runs_figs):
                g = fj.get(name)
                if i == j or g is None:
                    continue
                hit = f.lo <= g.median <= f.hi
                if f.quality == "ok":
                    row.pairs += 1
                    row.covered += hit
                    nhit = f.nlo is not None and f.nlo <= g.median <= f.nhi
                    row.next_covered += nhit
                    if g.quality == "ok":
                        row.okok_pairs += 1
                        row.okok_covered += hit
                        row.okok_next += nhit
                    row.figs.add(name)
                    if f.median:
                        row.dev.append(abs(g.median / f.median - 1))
                        row.half.append((f.hi - f.lo) / 2 / abs(f.median))
                        if f.nlo is not None:
                            row.next_half.append((f.nhi - f.nlo) / 2 / abs(f.median))
                else:
                    row.noisy_pairs += 1
                    row.noisy_covered += hit
    return rows


def _pct(a, b):
    return "%5.1f %%" % (100.0 * a / b) if b else "    -  "


def table(rows, n_runs):
    """The human table, one line per class and a total over the ok figures."""
    out = ["Coverage over %d runs: how often an ok figure's interval holds another run's median. covered: its 95 %% "
           "CI (which holds another run's median %.1f %% of the time where the runs' 9 replicates are alike: it is "
           "about this run's median); next: its next-run interval (next_lo..next_hi, %.1f %% for 9 replicates; the "
           "CI where it has none); ok->ok: of the pairs whose other run's figure is ok too, CI and next-run coverage"
           % (n_runs, 100 * EXPECTED_CI_NEXT, 100 * expected_ci_next(9, 0)),
           "  %-12s %7s %12s %9s %9s %14s %15s %15s %16s %16s %12s" % (
               "class", "figures", "ok pairs", "covered", "next", "median |dev|", "median CI +-", "median next +-",
               "noisy covered", "ok->ok covered", "ok->ok next")]
    tot = Row()
    for c in CLASSES:
        r = rows.get(c)
        if r is None:
            continue
        tot.pairs += r.pairs
        tot.covered += r.covered
        tot.noisy_pairs += r.noisy_pairs
        tot.noisy_covered += r.noisy_covered
        tot.okok_pairs += r.okok_pairs
        tot.okok_covered += r.okok_covered
        tot.next_covered += r.next_covered
        tot.okok_next += r.okok_next
        tot.figs |= r.figs
        dev, half, nhalf = _median(r.dev), _median(r.half), _median(r.next_half)
        out.append("  %-12s %7d %12s %9s %9s %14s %15s %15s %16s %16s %12s" % (
            c, len(r.figs), "%d/%d" % (r.covered, r.pairs), _pct(r.covered, r.pairs), _pct(r.next_covered, r.pairs),
            "%.2f %%" % (100 * dev) if dev is not None else "-",
            "%.2f %%" % (100 * half) if half is not None else "-",
            "%.2f %%" % (100 * nhalf) if nhalf is not None else "-",
            "%s of %d" % (_pct(r.noisy_covered, r.noisy_pairs).strip(), r.noisy_pairs),
            "%s of %d" % (_pct(r.okok_covered, r.okok_pairs).strip(), r.okok_pairs),
            _pct(r.okok_next, r.okok_pairs)))
    out.append("  %-12s %7d %12s %9s %9s %14s %15s %15s %16s %16s %12s" % (
        "all ok", len(tot.figs), "%d/%d" % (tot.covered, tot.pairs), _pct(tot.covered, tot.pairs),
        _pct(tot.next_covered, tot.pairs), "", "", "",
        "%s of %d" % (_pct(tot.noisy_covered, tot.noisy_pairs).strip(), tot.noisy_pairs),
        "%s of %d" % (_pct(tot.okok_covered, tot.okok_pairs).strip(), tot.okok_pairs),
        _pct(tot.okok_next, tot.okok_pairs)))
    return "\n".join(out), tot


def per_run(runs_figs):
    """[(ok figures, held, pairs)] per run j: of the other runs' ok figures that run j also has, how many hold
    run j's median in their next-run interval (their CI where they have none). A run far below the others was
    slowed or sped up as a whole (the host, the clock): what one run cannot see from inside."""
    out = []
    for j, fj in enumerate(runs_figs):
        held = pairs = 0
        for i, fi in enumerate(runs_figs):
            if i == j:
                continue
            for name, f in fi.items():
                g = fj.get(name)
                if g is None or f.quality != "ok" or f.nlo is None:
                    continue
                pairs += 1
                held += f.nlo <= g.median <= f.nhi
        out.append((sum(1 for f in fj.values() if f.quality == "ok"), held, pairs))
    return out


def per_run_table(rows):
    out = ["Per run: its ok figures, and how often the other runs' ok figures hold its median in their next-run "
           "interval (a run far below the others was moved as a whole: by the host, or the clock)"]
    for j, (ok, held, pairs) in enumerate(rows):
        out.append("  run %-3d %5d ok figures   %s of %d held" % (j + 1, ok, _pct(held, pairs).strip(), pairs))
    return "\n".join(out)


def run_hosted(runner, args, n, save_dir=None, taskset=None, echo=None):
    """N runs of the hosted runner; returns their verified runs. A run that fails raises parse.LogError or
    RuntimeError with a one-line reason."""
    if not os.access(runner, os.X_OK):
        raise RuntimeError("%s: not an executable hosted runner (build it with `make host-bench`)" % runner)
    cmd = ([ "taskset", "-c", taskset] if taskset else []) + [runner] + list(args)
    runs = []
    for k in range(n):
        if echo:
            echo("repro: run %d of %d: %s" % (k + 1, n, " ".join(cmd)))
        p = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        text = p.stdout.decode("utf-8", "replace")
        if save_dir:
            os.makedirs(save_dir, exist_ok=True)
            with open(os.path.join(save_dir, "run%d.log" % (k + 1)), "w") as fh:
                fh.write(text)
        if p.returncode != 0:
            tail = p.stderr.decode("utf-8", "replace").strip().splitlines()
            raise RuntimeError("run %d: %s exited with status %d%s" % (k + 1, runner, p.returncode,
                                                                        ": " + tail[-1] if tail else ""))
        runs.append(parsemod.parse_log(text))
    return runs


RUNS_MAX = 1000  # --runs: each run of the full profile takes minutes


def cpu_list(text):
    """argparse type for --taskset: a CPU list as taskset -c takes it (0, 1-3, 0,2-5), ranges ascending."""
    import argparse
    import re
    if not re.fullmatch(r"\d+(-\d+)?(,\d+(-\d+)?)*", text or ""):
        raise argparse.ArgumentTypeError("'%s' is not a CPU list (expected e.g. 1, 0-3 or 0,2-5)" % text)
    for part in text.split(","):
        lo, _, hi = part.partition("-")
        if hi and int(hi, 10) < int(lo, 10):
            raise argparse.ArgumentTypeError("'%s' has a descending range %s (expected e.g. 0-3)" % (text, part))
    return text


def add_arguments(r):
    """The `repro` subcommand's options (cli.py's build_parser calls this); numbers range-checked as cli's."""
    from .cli import integer
    r.add_argument("logs", nargs="*", help="verified logs of the same machine and profile (at least 2); "
                                           "without them, --runs runs of the hosted runner are made")
    r.add_argument("--runs", type=integer(2, RUNS_MAX), default=5,
                   help="runs of the hosted runner to make, 2..%d (default 5)" % RUNS_MAX)
    r.add_argument("--runner", default=DEFAULT_RUNNER, help="hosted runner (default build/host-bench/pmubench-host)")
    r.add_argument("--args", default="profile=full", help='its arguments (default "profile=full")')
    r.add_argument("--taskset", type=cpu_list, help="CPU list for taskset -c (e.g. 1)")
    r.add_argument("--save", help="keep the runs' logs in this directory")
    r.set_defaults(outputs=(("--save", "save", "dir"),))


def command(a):
    if a.logs and len(a.logs) < 2:  # --runs below 2 is refused by its type (cli.integer)
        sys.stderr.write("pmubench: repro: at least 2 logs are needed to compare, got 1\n")
        return 2
    try:
        if a.logs:
            runs = []
            for p in a.logs:
                try:
                    runs.append(parsemod.load_run(p))
                except parsemod.LogError as e:
                    raise parsemod.LogError("%s: %s" % (p, e.reason))
        else:
            runs = run_hosted(a.runner, a.args.split(), a.runs, a.save, a.taskset,
                              echo=lambda s: sys.stderr.write(s + "\n"))
    except parsemod.LogError as e:
        sys.stderr.write("pmubench: repro: %s\n" % e.reason)
        return 2
    except (OSError, RuntimeError) as e:
        sys.stderr.write("pmubench: repro: %s\n" % e)
        return 1
    figs = [figures(r) for r in runs]
    text, _ = table(coverage(figs), len(runs))
    print(text)
    print(per_run_table(per_run(figs)))
    return 0
