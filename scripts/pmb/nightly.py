"""Nightly regression check: ingest a verified run, compare every figure with a baseline (median of
the last N good runs of the same machine identity: status ok and no smp_timeout or crash record,
db.baseline_runs; of each such run only the figures whose final verdict is not suspect) and write
JUnit XML.

Tolerance (docs/host-tools.md, "Tolerance formula"), for a figure with baseline median B, where a
run's spread is the figure's within-run relative spread (the record's "spread", a fraction; legacy
"robust_cv"/"cv", see figures.spread; stored in the figures table's `cv` column):
    s_between = 1.4826 * MAD(baseline values) / |B|      (0 with fewer than 3 baseline runs)
    total     = sqrt(spread_run^2 + median(spread_baseline)^2 + s_between^2)
    allowed   = max(K * total * |B|, floor_rel[group] * |B|, floor_abs[unit])
    worse     = value - B for lower-is-better figures, B - value for higher-is-better
    regressed if worse > allowed; improved if -worse > allowed.
"""
import math
import statistics
import xml.etree.ElementTree as ET

from . import db
from .present import change, si

K = 3.0
FLOOR_REL = {"default": 0.05, "bandwidth": 0.05, "latency_sweep": 0.05, "data_source": 0.05,
             "penalty": 0.10, "branch": 0.10, "c2c": 0.10, "cycle_accounting": 0.10,
             "loaded_latency": 0.10, "pebs_latency": 0.10, "pmu_selftest": 0.0}
FLOOR_ABS = {"cycles": 0.5, "ns": 0.2, "bytes/s": 0.0, "pass": 0.5}
MAD_SIGMA = 1.4826   # MAD -> standard deviation for normally distributed data
# A verdict needs at least this many baseline runs: with one or two, their median is one run's noise and a
# spread between runs cannot be estimated (the tolerance above takes s_between from 3 runs on).
MIN_BASELINE_RUNS = 3


class Comparison:
    __slots__ = ("name", "value", "baseline", "baseline_runs", "allowed", "verdict", "unit", "better", "detail")

    def __init__(self, name, value, baseline, baseline_runs, allowed, verdict, unit="", better="lower", detail=""):
        self.name = name
        self.value = value
        self.baseline = baseline
        self.baseline_runs = baseline_runs
        self.allowed = allowed
        self.verdict = verdict
        self.unit = unit
        self.better = better
        self.detail = detail


def tolerance(name, unit, baseline_values, spread_run, spread_baseline, k=K):
    """Allowed absolute deviation from the baseline median (see module doc). Spreads are fractions
    (None: not known, taken as 0)."""
    b = statistics.median(baseline_values)
    ab = abs(b)
    s_between = 0.0
    if len(baseline_values) >= 3 and ab > 0:
        mad = statistics.median(abs(v - b) for v in baseline_values)
        s_between = MAD_SIGMA * mad / ab
    spreads = [s for s in spread_baseline if s is not None]
    s_base = statistics.median(spreads) if spreads else 0.0
    s_run = spread_run or 0.0
    total = math.sqrt(s_run ** 2 + s_base ** 2 + s_between ** 2)
    group = name.split("/", 1)[0]
    floor_rel = FLOOR_REL.get(group, FLOOR_REL["default"])
    return b, max(k * total * ab, floor_rel * ab, FLOOR_ABS.get(unit, 0.0))


def compare(conn, run_id, n=5, k=K):
    """[Comparison] for every figure of run_id against its baseline runs."""
    base_ids = db.baseline_runs(conn, run_id, n)
    cur = db.figures_of(conn, run_id)
    base = [db.figures_of(conn, b) for b in base_ids]
    out = []
    names = list(cur) + sorted({nm for bf in base for nm in bf} - set(cur))
    for name in names:
        f = cur.get(name)
        # A baseline value is a figure of a baseline run whose final verdict (the figures table's `quality`:
        # the record's, made suspect by a disagreeing cross-check of that run) is not suspect: a figure that
        # failed a sanity check or was blamed by a cross-check is no reference for the next run.
        usable = [bf[name] for bf in base if name in bf and _quality(bf[name]) != "suspect"]
        left_out = sum(1 for bf in base if name in bf) - len(usable)
        vals = [b_["value"] for b_ in usable]
        spreads = [b_["cv"] for b_ in usable]   # the `cv` column holds the spread
        why_out = ("; %d suspect baseline value%s left out" % (left_out, "" if left_out == 1 else "s")
                   if left_out else "")
        if f is None:
            out.append(Comparison(name, None, statistics.median(vals) if vals else None, len(vals), None, "missing",
                                  detail="in the baseline, absent in this run" + why_out))
            continue
        if not vals:
            out.append(Comparison(name, f["value"], None, 0, None, "new", f["unit"], f["better"],
                                  "no baseline value" + why_out))
            continue
        b, allowed = tolerance(name, f["unit"], vals, f["cv"], spreads, k)
        worse = f["value"] - b if f["better"] == "lower" else b - f["value"]
        if len(vals) < MIN_BASELINE_RUNS:
            verdict = "unjudged"
        else:
            verdict = "regressed" if worse > allowed else "improved" if -worse > allowed else "ok"
        out.append(Comparison(name, f["value"], b, len(vals), allowed, verdict, f["unit"], f["better"],
                              "%s vs baseline %s (median of %d run%s), %s, allowed +-%s%s"
                              % (si(f["value"], f["unit"]), si(b, f["unit"]), len(vals), "" if len(vals) == 1 else "s",
                                 change(f["value"], b, f["better"]), si(allowed, f["unit"]),
                                 ("; not judged: a verdict needs %d baseline runs" % MIN_BASELINE_RUNS
                                  if verdict == "unjudged" else "") + why_out)))
    return out


def _quality(row):
    """A stored figure's final verdict, None for a database row without the column's value (a log written
    before verdicts)."""
    try:
        return row["quality"]
    except (KeyError, IndexError):
        return None


def _g(v):
    return "%.6g" % v if isinstance(v, float) else str(v)


def not_a_baseline_reason(run_status, blockers):
    """Why a run is never a baseline (db.baseline_runs), or None when it can be one."""
    why = []
    if run_status != "ok":
        why.append("status %s" % run_status)
    why += ["%d %s record%s" % (n, t, "" if n == 1 else "s") for t, n in sorted((blockers or {}).items())]
    return ", ".join(why) or None


def junit(results, run_status, ident, crc, log_error=None, suite="pmubench.nightly", incomplete_boots=0,
          not_a_baseline=None, skipped_baselines=(), figures=None):
    """JUnit XML (bytes): one testcase per figure; regressions are failures, new/missing skipped.
    Properties say how many earlier boots in the log did not complete (run.incomplete_boots), whether
    this run can be a baseline (run.baseline: yes, or why not) and which earlier runs the baseline
    left out for smp_timeout/crash records (baseline.skipped_runs). Each figure's testcase carries
    properties value, unit, baseline, tolerance (the allowed deviation) and, from `figures` (name ->
    figures.Figure of this run), quality; a suspect figure says so in its system-out (its comparison
    still passes or fails on the numbers)."""
    ts = ET.Element("testsuite", name=suite)
    props = ET.SubElement(ts, "properties")
    for k_, v in (ident or {}).items():
        ET.SubElement(props, "property", name="machine." + k_, value=str(v))
    if crc:
        ET.SubElement(props, "property", name="run.crc32", value=crc)
    if log_error is None:
        ET.SubElement(props, "property", name="run.incomplete_boots", value=str(int(incomplete_boots or 0)))
        ET.SubElement(props, "property", name="run.baseline",
                      value="no: %s" % not_a_baseline if not_a_baseline else "yes")
        ET.SubElement(props, "property", name="baseline.skipped_runs",
                      value=",".join(str(i) for i in skipped_baselines))
    tests = failures = skipped = 0

    def case(classname, name):
        nonlocal tests
        tests += 1
        return ET.SubElement(ts, "testcase", classname=classname, name=name, time="0")

    c = case("pmubench.log", "verify")
    if log_error is not None:
        ET.SubElement(c, "failure", message=log_error, type="LogError").text = log_error
        failures += 1
    else:
        c = case("pmubench.run", "status")
        if run_status != "ok":
            ET.SubElement(c, "failure", message="run ended with status %s" % run_status, type="RunStatus")
            failures += 1
        notes = []
        if incomplete_boots:
            notes.append("%d earlier boot(s) in the log did not complete" % incomplete_boots)
        if not_a_baseline:
            notes.append("never a baseline: %s" % not_a_baseline)
        if skipped_baselines:
            notes.append("baseline left out run(s) %s (smp_timeout or crash records)"
                         % ", ".join(str(i) for i in skipped_baselines))
        if notes:
            ET.SubElement(c, "system-out").text = "; ".join(notes)
    for r in results:
        c = case("pmubench." + r.name.split("/", 1)[0], r.name)
        f = (figures or {}).get(r.name)
        cp = ET.SubElement(c, "properties")
        for k_, v in (("value", r.value), ("unit", r.unit), ("baseline", r.baseline), ("tolerance", r.allowed),
                      ("quality", f.quality if f is not None else None)):
            if v is not None:
                ET.SubElement(cp, "property", name=k_, value=("%.6g" % v) if isinstance(v, float) else str(v))
        suspect = "SUSPECT: %s" % (f.quality_reason or "?") if f is not None and f.quality == "suspect" else None
        if r.verdict == "regressed":
            ET.SubElement(c, "failure", message=r.detail, type="Regression").text = r.detail
            failures += 1
        elif r.verdict in ("new", "missing", "unjudged"):
            ET.SubElement(c, "skipped", message=r.detail)
            skipped += 1
        if r.detail or suspect:
            ET.SubElement(c, "system-out").text = "; ".join(x for x in (suspect, r.detail) if x)
    ts.set("tests", str(tests))
    ts.set("failures", str(failures))
    ts.set("errors", "0")
    ts.set("skipped", str(skipped))
    root = ET.Element("testsuites", tests=str(tests), failures=str(failures), errors="0", skipped=str(skipped))
    root.append(ts)
    ET.indent(root)
    return ET.tostring(root, encoding="utf-8", xml_declaration=True) + b"\n"


def summary_lines(results):
    counts = {}
    for r in results:
        counts[r.verdict] = counts.get(r.verdict, 0) + 1
    lines = []
    for r in results:
        if r.verdict in ("regressed", "improved"):
            lines.append("%-9s %s: %s" % (r.verdict.upper() if r.verdict == "regressed" else r.verdict, r.name, r.detail))
    few = [r for r in results if r.verdict == "unjudged"]
    if few:
        runs = sorted({r.baseline_runs for r in few})
        lines.append("not judged: %d figure%s against %s baseline run%s: a regression verdict needs at least %d "
                     "(run nightly on %d more good run%s of this machine)"
                     % (len(few), "" if len(few) == 1 else "s", "/".join(map(str, runs)),
                        "" if runs == [1] else "s", MIN_BASELINE_RUNS, MIN_BASELINE_RUNS - max(runs),
                        "" if MIN_BASELINE_RUNS - max(runs) == 1 else "s"))
    missing = [r.name for r in results if r.verdict == "missing"]
    if missing:
        lines.append("missing (in the baseline, absent in this run): " + ", ".join(missing[:20]) +
                     (", and %d more" % (len(missing) - 20) if len(missing) > 20 else ""))
    lines.append("figures: " + ", ".join("%d %s" % (n, v) for v, n in sorted(counts.items())) if counts
                 else "figures: none")
    return lines
