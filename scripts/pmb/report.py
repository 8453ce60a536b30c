"""Render a verified run as Markdown, as self-contained HTML (plots embedded as base64 PNG), and as
PNG files. The report is a list of blocks rendered by two small back ends, so both formats always
say the same thing. A section whose records are absent says so instead of showing placeholders."""
import base64
import html
import json
import os
import re

from . import figures, plots
from .figures import count, part, spread, value
from .plots import human_bytes


class Doc:
    def __init__(self):
        self.blocks = []

    def h(self, level, text):
        self.blocks.append(("h", level, text))

    def p(self, text):
        self.blocks.append(("p", text))

    def missing(self, what):
        self.blocks.append(("p", "_Not in this run: %s._" % what))

    def table(self, headers, rows):
        self.blocks.append(("table", headers, rows))

    def code(self, text):
        self.blocks.append(("code", text))

    def img(self, name, caption, png):
        if png is not None:
            self.blocks.append(("img", name, caption, png))

    def images(self):
        return [(b[1], b[3]) for b in self.blocks if b[0] == "img"]


# ---- number formatting -----------------------------------------------------------------------

def num(v, digits=3):
    if v is None or isinstance(v, bool) or not isinstance(v, (int, float)):
        return "" if v is None else str(v)
    if isinstance(v, int) or float(v).is_integer() and abs(v) >= 1000:
        return "{:,}".format(int(v))
    a = abs(v)
    if a >= 100:
        return "%.0f" % v
    if a >= 10:
        return "%.1f" % v
    return ("%%.%dg" % digits) % v


def pct(v):
    return "" if not isinstance(v, (int, float)) or isinstance(v, bool) else "%.1f%%" % (100 * v)


def gbs(v):
    return "" if not isinstance(v, (int, float)) else "%.2f" % (v / 1e9)


def _isnum(v):
    return isinstance(v, (int, float)) and not isinstance(v, bool)


# ---- sections --------------------------------------------------------------------------------

def _core_hz(run):
    r = run.run
    hz, ratio = r.get("tsc_hz"), r.get("core_tsc_ratio")
    if _isnum(hz) and hz > 0:
        return hz * (ratio if _isnum(ratio) and ratio > 0 else 1.0)
    return None


def _text(v):
    """A value as a reader wants it: nothing for None or an empty list/dict (never a Python repr), lists
    joined with commas, dicts as key=value, booleans as yes/no."""
    if v is None or v == [] or v == {} or v == "":
        return ""
    if isinstance(v, bool):
        return "yes" if v else "no"
    if isinstance(v, (list, tuple)):
        return ", ".join(t for t in (_text(x) for x in v) if t)
    if isinstance(v, dict):
        return ", ".join("%s=%s" % (k, _text(x)) for k, x in v.items() if _text(x))
    return str(v)


def pmu_text(pmu):
    """The run record's pmu object as one sentence: status and reason, then what it has."""
    st = _text(pmu.get("status")) or "unknown"
    out = st + (": %s" % pmu["reason"] if pmu.get("reason") else "")
    have = []
    if _isnum(pmu.get("version")) and pmu["version"]:
        have.append("architectural perfmon v%d" % pmu["version"])
    for key, wkey, what in (("gp_counters", "gp_width", "general-purpose"), ("fixed_counters", "fixed_width", "fixed")):
        if _isnum(pmu.get(key)) and pmu[key]:
            have.append("%d %s counter%s%s" % (pmu[key], what, "" if pmu[key] == 1 else "s",
                                                " (%d-bit)" % pmu[wkey] if _isnum(pmu.get(wkey)) and pmu[wkey] else ""))
    if pmu.get("pebs"):
        have.append("PEBS format %s%s" % (_text(pmu.get("pebs_format")) or "?",
                                          " with load latency" if pmu.get("load_latency") else ""))
    if _isnum(pmu.get("lbr_format")) and pmu.get("lbr_depth"):
        have.append("LBR format %d, %s entries" % (pmu["lbr_format"], _text(pmu.get("lbr_depth"))))
    if _isnum(pmu.get("offcore")) and pmu["offcore"]:
        have.append("%d offcore response register%s" % (pmu["offcore"], "" if pmu["offcore"] == 1 else "s"))
    if pmu.get("uncore") and pmu.get("uncore") != "none":
        have.append("uncore %s" % _text(pmu["uncore"]))
    if _text(pmu.get("model")):
        have.append("model table %s" % _text(pmu["model"]))
    if _text(pmu.get("errata")):
        have.append("errata worked around: %s" % _text(pmu["errata"]))
    known = {"status", "reason", "version", "gp_counters", "gp_width", "fixed_counters", "fixed_width", "pebs",
             "pebs_format", "load_latency", "lbr_format", "lbr_depth", "offcore", "uncore", "model", "errata", "vendor"}
    have += ["%s %s" % (k.replace("_", " "), _text(v)) for k, v in pmu.items() if k not in known and _text(v)]
    return out + ("; " + ", ".join(have) if have else "")


# A distribution-free 95 % CI of the median is the sample's min-max up to n = 8 (order statistics 1 and n
# cover 1 - 2^(1-n) >= 99 %); from 9 on it can be narrower. A band is drawn only for a real one.
REAL_CI_MIN_N = 9


def real_ci(r):
    lo, hi, n = r.get("ci_lo"), r.get("ci_hi"), r.get("n")
    if not (_isnum(lo) and _isnum(hi)) or (_isnum(n) and n < REAL_CI_MIN_N):
        return False
    mn, mx = r.get("min"), r.get("max")
    # the sampling interval: what the interval holds beyond the order statistics (ci_allow_*) set aside
    a_lo, a_hi = r.get("ci_allow_lo"), r.get("ci_allow_hi")
    lo += a_lo if _isnum(a_lo) else 0
    hi -= a_hi if _isnum(a_hi) else 0
    return not (_isnum(mn) and _isnum(mx) and lo <= mn and hi >= mx)


def next_text(r, unit=True):
    """The next-run interval (docs/records.md: where another run's median falls, at next_level) as text, in the
    record's unit; "" without one (a single series, a derived figure)."""
    lo, hi = r.get("next_lo"), r.get("next_hi")
    if not (_isnum(lo) and _isnum(hi)):
        return ""
    return "%s..%s%s" % (num(lo), num(hi), (" " + str(r.get("unit"))) if unit and r.get("unit") else "")


def one_cell_sentence(what, froms, tos, m, unit):
    v = m[0][0] if m and m[0] else None
    return "%s: one cell only (node %s to node %s): %s %s; no heat map for a single value." % (
        what, froms[0] if froms else "?", tos[0] if tos else "?", num(v) if v is not None else "no value", unit)


def emulated(run):
    """Why this run's timings are an emulator's, or None: QEMU TCG shows in the hypervisor CPUID leaf."""
    cpu = run.run.get("cpu") or {}
    hv, brand = str(cpu.get("hypervisor") or ""), str(cpu.get("brand") or "")
    if "TCG" in hv or "QEMU TCG" in brand:
        return "the CPU is QEMU's TCG emulator (hypervisor CPUID leaf %s)" % (hv or brand)
    return None


def section_banner(doc, run, boot=None):
    """The first thing on the page when the run was emulated or KVM could not be used: why, what it
    means for every figure below, and what to do."""
    boot = boot or {}
    why = emulated(run)
    reason = str(boot.get("accel_reason") or "")
    if reason.startswith("KVM unusable"):
        from .qemu import kvm_next_step
        why_kvm = reason[len("KVM unusable ("):].rsplit("); using TCG", 1)[0]
        doc.p("**KVM could not be used** (%s), so QEMU emulated the CPU (TCG). What to do: %s." % (
            why_kvm, kvm_next_step(why_kvm)))
    if why:
        doc.p("**This run was emulated**: %s. Emulated instructions have no latency, so every timing, core-cycle "
              "count, cache knee and bandwidth below describes the emulator, not a CPU: `DISAGREES` cross-checks, "
              "`noisy` and `suspect` figures and meaningless cycle counts are expected here; the run checks that "
              "the image boots, measures and writes verified records. For real figures: KVM (docs/kvm.md), the "
              "hosted runner or hardware (docs/measurement.md, \"Under QEMU TCG\")." % why)


def _side(name, value, unit):
    return "%s = %s %s" % (name, num(value) if _isnum(value) else "no value", unit or "")


def section_disagreements(doc, run):
    """Every crosscheck record (docs/measurement.md, "Cross-checks") that disagreed: both figures, the
    ratio against its tolerance and the side the record blames (its "suspect" list)."""
    recs = run.by_type("crosscheck")
    doc.h(2, "Disagreements")
    if not recs:
        doc.p("_No `crosscheck` records in this log: nothing was measured two ways, so nothing can disagree._")
        return
    bad = [r for r in recs if r.get("agrees") is False]
    unjudged = [r for r in recs if r.get("agrees") is None]
    doc.p("%d cross-check%s: %d agree, %d disagree, %d could not be judged%s." % (
        len(recs), "" if len(recs) == 1 else "s", sum(1 for r in recs if r.get("agrees") is True), len(bad),
        len(unjudged), " (%s)" % "; ".join(sorted({str(r.get("reason")) for r in unjudged if r.get("reason")}))
        if unjudged else ""))
    if not bad:
        return
    rows = []
    for r in bad:
        a, b = str(r.get("a", "a")), str(r.get("b", "b"))
        sus = [str(x) for x in (r.get("suspect") or [])]
        blamed = []
        for x in sus:
            blamed.append("a" if a.startswith(x) or x.startswith(a.split(".")[0]) else
                          "b" if b.startswith(x) or x.startswith(b.split(".")[0]) else x)
        blame = ", ".join(sorted(set("%s (%s)" % (x, a if x == "a" else b) if x in ("a", "b") else x
                                     for x in blamed))) or "neither (no figure marked suspect)"
        cyc = r.get("cycles_suspect")
        if isinstance(cyc, list) and cyc:   # a clock conversion blamed: the figures' cycles, not the figures
            n = len(cyc) + sum(len(x.get("cycles_suspect") or []) for x in run.by_type("crosscheck_cycles")
                               if x.get("quantity") == r.get("quantity") and x.get("a") == a)
            blame = "b (%s): the cycles of %d figure%s converted with it" % (b, n, "" if n == 1 else "s")
        third = r.get("third")
        if isinstance(third, str) and third:   # a third measurement of the quantity (docs/measurement.md)
            tv = r.get("third_value")
            blame += "; third: %s" % (_side(third, tv, r.get("unit")) if _isnum(tv) else third + " (not usable)")
        tol = r.get("tolerance")
        rows.append([_text(r.get("quantity")), _side(a, r.get("a_value"), r.get("unit")),
                     _side(b, r.get("b_value"), r.get("unit")),
                     ("%.3f" % r["ratio"]) if _isnum(r.get("ratio")) else "",
                     ("+-%.1f %%" % (100 * tol)) if _isnum(tol) else "", blame])
    doc.table(["Quantity", "First figure (a)", "Second figure (b)", "Ratio a/b", "Tolerance", "Blamed"], rows)


def section_summary(doc, run):
    r = run.run
    cpu = r.get("cpu") or {}
    doc.h(1, "pmubench report")
    fam, model = cpu.get("family"), cpu.get("model")
    rows = [
        ["Tool version", r.get("version", "")],
        ["CPU", cpu.get("brand", "")],
        ["Vendor / family / model / stepping", " / ".join(_text(x) or "?" for x in (
            cpu.get("vendor"), fam, ("0x%x" % model) if isinstance(model, int) else model,
            cpu.get("stepping")))],
        ["Microarchitecture", cpu.get("uarch", "")],
        ["TSC", "%s MHz (%s)" % (num(r["tsc_hz"] / 1e6) if _isnum(r.get("tsc_hz")) else "?",
                                r.get("tsc_method", "?"))],
        ["Core/TSC ratio", "%s (%s)" % (num(r.get("core_tsc_ratio")), r.get("core_tsc_method", "?"))],
        ["Memory", human_bytes(r["memory_bytes"]) if _isnum(r.get("memory_bytes")) else "?"],
        ["CPUs / NUMA nodes", "%s / %s" % (r.get("cpus", "?"), r.get("numa_nodes", "?"))],
    ]
    if r.get("profile"):
        rows.append(["Profile", "%s (%s)" % (r["profile"], r.get("profile_why") or "?")])
    if isinstance(r.get("minimal_samples"), bool):  # docs/records.md: the run record says why when there is a why
        why = r.get("minimal_samples_why")
        rows.append(["Samples", ("minimum only, no convergence loops" if r["minimal_samples"] else "as on hardware")
                     + (" (%s)" % why if why else "")])
    pmu = r.get("pmu") or {}
    if isinstance(pmu, dict) and pmu:
        rows.append(["PMU", pmu_text(pmu)])
    rows.append(["End", "status %s, %d records, crc32 %s" % (run.status, len(run.records), run.crc32)])
    doc.table(["Item", "Value"], rows)
    if run.warnings:
        doc.p("Warnings: " + "; ".join(run.warnings))


QUALITIES = ("ok", "noisy", "suspect", "unavailable")


def section_quality(doc, run):
    """The summary record (docs/measurement.md, "Cross-checks"): figures per final quality and the
    cross-checks that agree."""
    s = run.first("summary")
    if not isinstance(s, dict):
        doc.p("Quality: _no `summary` record in this log (a tool before issue 11)._")
        return
    doc.table(["Quality", "Count"],
              [["Figures", num(s.get("figures"))]] +
              [["  %s" % q, num(s.get(q))] for q in QUALITIES] +
              [["Figures not counted", num(s.get("figures_not_counted"))],
               ["Cross-checks agreeing / judged / total", "%s / %s / %s" % (
                   num(s.get("crosschecks_agreeing")), num(s.get("crosschecks_judged")), num(s.get("crosschecks")))]])


def section_machine(doc, run):
    r = run.run
    doc.h(2, "Machine details")
    caches = r.get("caches") or []
    if caches:
        doc.table(["Level", "Type", "Size", "Ways", "Line"],
                  [[c.get("level"), c.get("type", ""), human_bytes(c["bytes"]) if _isnum(c.get("bytes")) else "",
                    c.get("ways", ""), c.get("line", "")] for c in caches if isinstance(c, dict)])
    cfg = r.get("config")
    if isinstance(cfg, dict) and cfg:
        doc.p("Effective configuration:")
        doc.code("\n".join("%s=%s" % (k, ("true" if v else "false") if isinstance(v, bool) else _text(v))
                            for k, v in cfg.items()))
    if not caches and not (isinstance(cfg, dict) and cfg):
        doc.p("No cache or configuration details in the run record.")


def _vs_guide(ref, v):
    lo, hi = ref[0], ref[1]
    if lo == hi:
        return "%.2fx" % (v / lo)
    if v < lo:
        return "below range (%.2fx of %g)" % (v / lo, lo)
    if v > hi:
        return "above range (%.2fx of %g)" % (v / hi, hi)
    return "within range"


def verdict_text(rec, suspects):
    """A figure's final verdict for a status cell (figures.final_quality: the record's quality, made
    suspect by a disagreeing cross-check of the run), with its reason; where a cross-check changed it,
    the record's own quality too: "suspect (record: ok; cross-check disagrees: <quantity>)". A record
    without a quality (a log written before verdicts) reads ok, as the image counted such rows."""
    own, own_why = str(rec.get("quality") or "ok"), rec.get("quality_reason")
    q, why = figures.final_quality(rec, suspects)
    q = str(q or "ok")
    own_text = own + (" (%s)" % own_why if own != "ok" and own_why else "")
    if q == own:
        return own_text
    return "%s (record: %s%s; %s)" % (q, own, (", " + str(own_why)) if own != "ok" and own_why else "", why)


def _table2_rows(run):
    """[(source, unit, median, ci_lo, ci_hi, ref_lo, ref_hi, status)] for the chart, in the unit of the
    row's reference (cycles when it has none), status the row's final verdict (figures.final_quality).
    CI bounds exist in the record's own unit only."""
    hz = _core_hz(run)
    sus = figures.crosscheck_suspects(run.records)
    rows = []
    for r in run.by_type("data_source"):
        ref = figures.reference(r)
        unit = ref[2] if ref else "cycles"
        rlo, rhi = (ref[0], ref[1]) if ref else (None, None)
        if r.get("status", "ok") != "ok":
            rows.append((str(r.get("source")), unit, None, None, None, rlo, rhi, str(r.get("status"))))
            continue
        quality = str(figures.final_quality(r, sus)[0] or "ok")
        v, lo, hi = value(r, unit), None, None
        if r.get("unit") == unit:
            lo, hi = r.get("ci_lo"), r.get("ci_hi")
        elif _isnum(v) and _isnum(r.get("median")) and r["median"] and _isnum(r.get("ci_lo")) and _isnum(r.get("ci_hi")):
            f = v / r["median"]          # the CI scales as the median did
            lo, hi = r["ci_lo"] * f, r["ci_hi"] * f
        other = "ns" if unit == "cycles" else "cycles"
        if not _isnum(v) and _isnum(value(r, other)) and hz:
            o = value(r, other)
            v = o * hz / 1e9 if unit == "cycles" else o / hz * 1e9
        rows.append((str(r.get("source")), unit, v if _isnum(v) else None, lo if _isnum(lo) else None,
                     hi if _isnum(hi) else None, rlo, rhi, quality if _isnum(v) else "no value"))
    return rows


def section_table2_chart(doc, run, want_plots):
    if not want_plots:
        return
    rows = _table2_rows(run)
    if rows:
        doc.img("table2.png", "This run's Table 2 rows (median, 95% CI, coloured by the final verdict: a row a "
                "cross-check blamed is suspect) beside the guide's "
                "range; cycles and ns rows in separate panels; an interval past the axis is cut with an arrow "
                "and its end written beside it", plots.table2_chart(rows))


def section_table2(doc, run):
    doc.h(2, "Data sources vs the guide's Table 2")
    recs = run.by_type("data_source")
    if not recs:
        doc.missing("no `data_source` records")
        return
    doc.p("Guide: Intel Core i7 / Xeon 5500 performance analysis guide (L1D 4 and L2 10 cycles from "
          "the memory subsystem section, the rest from Table 2), as each record states it. Spread is this "
          "run's robust coefficient of variation over its samples (1.4826 MAD / median), as a percent. Status is "
          "the final verdict after the run's cross-checks; where one of them disagreed and blamed the row, the "
          "record's own quality is given beside it. Next run: where another run's median of the row falls "
          "(the next-run interval, 97 % for 9 replicates; docs/measurement.md, \"Replicates\"); empty for a "
          "single series.")
    hz = _core_hz(run)
    sus = figures.crosscheck_suspects(run.records)
    rows = []
    for r in recs:     # the record order: the image writes every row, in the guide's order
        src = r.get("source")
        ref = figures.reference(r)
        guide = ref[3] if ref else "not in this log"
        if r.get("status", "ok") != "ok":
            rows.append([src, guide, "unavailable", "", "", "", "", r.get("method", ""),
                         "%s: %s" % (r.get("status"), r.get("reason", ""))])
            continue
        unit = ref[2] if ref else "cycles"
        other = "ns" if unit == "cycles" else "cycles"
        val, oval, note = value(r, unit), value(r, other), ""
        if not _isnum(val) and _isnum(oval) and hz:
            val = oval * hz / 1e9 if unit == "cycles" else oval / hz * 1e9
            note = " (converted)"
        this = ("%s %s%s" % (num(val), unit, note)) if _isnum(val) else ""
        oth = ("%s %s" % (num(oval), other)) if _isnum(oval) else ""
        ratio = _vs_guide(ref, val) if ref and _isnum(val) else ""
        rows.append([src, guide, this, oth, pct(spread(r)), next_text(r), ratio, r.get("method", ""),
                     verdict_text(r, sus)])
    doc.table(["Source", "Guide", "This run", "Also", "Spread", "Next run", "vs guide", "Method", "Status"], rows)


def section_latency(doc, run, want_plots):
    doc.h(2, "Latency vs working-set size")
    pts = run.by_type("latency_sweep")
    inferred = run.by_type("cache_inferred")
    caches = [c for c in (run.run.get("caches") or []) if isinstance(c, dict) and c.get("type") != "instruction"]
    if not pts:
        doc.missing("no `latency_sweep` records")
    else:
        series = {}
        for r in pts:
            if _isnum(r.get("bytes")) and _isnum(value(r, "ns")):
                label = "%s, %s pages" % (r.get("mode", "?"), human_bytes(r.get("page_bytes", 0) or 0))
                lo, hi = (r.get("ci_lo"), r.get("ci_hi")) if r.get("unit") == "ns" else (None, None)
                ok = _isnum(lo) and _isnum(hi) and real_ci(r)
                series.setdefault(label, []).append((r["bytes"], value(r, "ns"), lo if ok else None,
                                                     hi if ok else None))
        doc.table(["Working set", "Mode", "Page", "ns", "cycles", "TSC ticks", "Spread", "Samples"],
                  [[human_bytes(r.get("bytes", 0)), r.get("mode", ""),
                    human_bytes(r["page_bytes"]) if _isnum(r.get("page_bytes")) else "",
                    num(value(r, "ns")), num(value(r, "cycles")), num(value(r, "tsc")), pct(spread(r)), num(count(r))]
                   for r in pts])
        if want_plots:
            doc.img("latency.png", "Latency vs working-set size (log-log), one line per mode and page size, "
                    "band: 95%% CI of the median where it is one (n >= %d and narrower than the sample's "
                    "min-max), clipped with an arrow at the axis; solid: CPUID cache sizes, dashed: inferred"
                    % REAL_CI_MIN_N,
                    plots.latency_vs_size(series, [(c.get("level"), c["bytes"]) for c in caches if _isnum(c.get("bytes"))],
                                          [(c.get("level"), c["bytes"]) for c in inferred if _isnum(c.get("bytes"))]))
    doc.h(3, "Cache levels: CPUID vs inferred from the sweep")
    if not inferred:
        doc.missing("no `cache_inferred` records")
        return
    doc.table(["Level", "CPUID size", "Inferred size", "Agrees", "ns", "cycles"],
              [["L%s" % r.get("level"), human_bytes(r["cpuid_bytes"]) if _isnum(r.get("cpuid_bytes")) else "",
                human_bytes(r["bytes"]) if _isnum(r.get("bytes")) else "", "yes" if r.get("agrees") else "no",
                num(value(r, "ns")), num(value(r, "cycles"))] for r in inferred])


def _matrix(recs, kf, kt, get):
    """get(record) -> the cell's value."""
    froms = sorted({r.get(kf) for r in recs if r.get(kf) is not None}, key=str)
    tos = sorted({r.get(kt) for r in recs if r.get(kt) is not None}, key=str)
    try:
        froms.sort()
        tos.sort()
    except TypeError:
        pass
    cell = {(r.get(kf), r.get(kt)): get(r) for r in recs}
    m = [[cell.get((a, b)) if _isnum(cell.get((a, b))) else None for b in tos] for a in froms]
    return froms, tos, m


def _matrix_table(doc, froms, tos, m, corner):
    doc.table([corner] + [str(t) for t in tos], [[str(a)] + [num(v) if v is not None else "" for v in row]
                                                 for a, row in zip(froms, m)])


def section_c2c(doc, run, want_plots):
    doc.h(2, "Core-to-core transfer latency (c2c)")
    recs = run.by_type("c2c")
    if not recs:
        doc.missing("no `c2c` records")
        return
    panels = []
    for key, title in (("hit", "clean line (HIT), ns"), ("hitm", "modified line (HITM), ns")):
        froms, tos, m = _matrix(recs, "from_cpu", "to_cpu", lambda r, k=key: value(part(r, k), "ns"))
        doc.p("%s, rows: from CPU, columns: to CPU" % title.capitalize())
        _matrix_table(doc, froms, tos, m, "from\\to")
        panels.append((title, m))
    if want_plots and len(froms) * len(tos) > 1 and any(v is not None for _t, m in panels for row in m for v in row):
        doc.img("c2c.png", "Core-to-core latency heat maps (rows: from CPU, columns: to CPU), HIT and HITM on one "
                "robust colour scale (a cell past it takes the end colour), each cell's value printed", plots.heatmap("c2c", froms, tos, None, "latency (ns)", panels,
                                                             xlabel="to CPU", ylabel="from CPU"))


def _numa_bandwidth(run):
    """{(kernel, isa): [records]} of the bandwidth benchmark's NUMA node-pair series (docs/bandwidth-
    branch-penalty.md: series "numa", threads on node_from, memory on node_to)."""
    out = {}
    for r in run.by_type("bandwidth"):
        if r.get("series") == "numa" and _isnum(r.get("node_from")) and _isnum(r.get("node_to")):
            out.setdefault((str(r.get("kernel")), str(r.get("isa"))), []).append(r)
    return out


def section_numa(doc, run, want_plots):
    doc.h(2, "NUMA latency and bandwidth")
    recs = run.by_type("numa_latency")
    if not recs:
        doc.missing("no `numa_latency` records")
    else:
        froms, tos, m = _matrix(recs, "from_node", "to_node", lambda r: value(r, "ns"))
        doc.p("Idle DRAM latency in ns, rows: CPU node, columns: memory node")
        _matrix_table(doc, froms, tos, m, "node")
        if len(froms) * len(tos) == 1:
            doc.p(one_cell_sentence("NUMA latency", froms, tos, m, "ns"))
        elif want_plots and any(v is not None for row in m for v in row):
            doc.img("numa.png", "NUMA latency heat map (rows: CPU node, columns: memory node)",
                    plots.heatmap("NUMA latency (ns)", froms, tos, m, "latency (ns)", xlabel="memory node",
                                  ylabel="CPU node"))
    doc.h(3, "NUMA node-pair bandwidth")
    groups = _numa_bandwidth(run)
    if not groups:
        doc.p("_No NUMA-pair bandwidth in this run_ (no `bandwidth` records of series `numa`: the bandwidth "
              "benchmark writes them only with more than one NUMA node).")
        return
    panels = []
    froms = tos = None
    for (kern, isa), rs in groups.items():
        f, t, m = _matrix(rs, "node_from", "node_to",
                          lambda r: value(r, "bytes_per_s") / 1e9 if _isnum(value(r, "bytes_per_s")) else None)
        threads = sorted({r.get("threads") for r in rs if _isnum(r.get("threads"))})
        doc.p("%s (%s), GB/s (10^9 bytes/s), all cores of the CPU node (%s thread%s), rows: CPU node, "
              "columns: memory node" % (kern, isa, "/".join(map(str, threads)) or "?",
                                        "" if threads == [1] else "s"))
        doc.table(["node"] + [str(x) for x in t], [[str(a)] + [gbs(v * 1e9) if v is not None else "" for v in row]
                                                  for a, row in zip(f, m)])
        if froms is None or (f == froms and t == tos):
            froms, tos = f, t
            panels.append(("%s (%s), GB/s" % (kern, isa), m))
    if froms is not None and len(froms) * len(tos) == 1:
        doc.p(one_cell_sentence("NUMA bandwidth", froms, tos, panels[0][1], "GB/s"))
    elif want_plots and panels and any(v is not None for _t, m in panels for row in m for v in row):
        doc.img("numa_bandwidth.png", "NUMA node-pair bandwidth heat maps, one per kernel (rows: CPU node, "
                "columns: memory node)", plots.heatmap("NUMA bandwidth", froms, tos, None, "GB/s", panels,
                                                      fmt="%.3g", xlabel="memory node", ylabel="CPU node"))


def _idle_latency(run, loaded):
    """(ns, label) of the unloaded latency: the loaded-latency sweep's own idle point, else the Table 2
    local_DRAM row (the same chain rule; bench/lat_numa.c cross-checks the two), else (None, None)."""
    for r in loaded:
        if r.get("delay") == "idle" and r.get("status", "ok") == "ok" and _isnum(value(r, "ns")):
            return value(r, "ns"), "idle (no load)"
    for r in run.by_type("data_source"):
        if r.get("source") == "local_DRAM" and r.get("status", "ok") == "ok" and _isnum(value(r, "ns")):
            return value(r, "ns"), "idle: Table 2 local_DRAM row"
    return None, None


def section_loaded(doc, run, want_plots):
    doc.h(2, "Loaded latency")
    recs = run.by_type("loaded_latency")
    if not recs:
        doc.missing("no `loaded_latency` records")
        return
    # "bytes_per_s" here is the load generators' bandwidth, a value of its own beside the latency figure
    doc.table(["Delay", "Streamers", "Bandwidth (GB/s)", "Latency (ns)", "Spread", "Status"],
              [[r.get("delay"), r.get("streamers", ""), gbs(r.get("bytes_per_s")), num(value(r, "ns")),
                pct(spread(r)), r.get("status", "ok") + (" (%s)" % r["reason"] if r.get("reason") else "")]
               for r in recs])
    pts = [(r["bytes_per_s"] / 1e9, value(r, "ns"), r["delay"]) for r in recs
           if _isnum(r.get("delay")) and r.get("status", "ok") == "ok" and _isnum(r.get("bytes_per_s"))
           and _isnum(value(r, "ns"))]
    idle, idle_label = _idle_latency(run, recs)
    if pts and idle is not None:
        heavy = min(pts, key=lambda p: p[2])
        doc.p("Unloaded latency %s ns (%s); at the heaviest load (delay %s) %s ns at %s GB/s, %+.0f%%." % (
            num(idle), idle_label, heavy[2], num(heavy[1]), num(heavy[0]), 100 * (heavy[1] / idle - 1)))
    if want_plots and pts:
        doc.img("loaded_latency.png", "Loaded latency: latency vs the load generators' bandwidth, one point per "
                "injection delay (%d), %s as the dashed line" % (len(pts), idle_label or "no idle point"),
                plots.loaded_latency(pts, idle, idle_label or "idle"))


def _is_scaling(r):
    return str(r.get("series", "")).startswith("scaling")


def section_bandwidth(doc, run, want_plots):
    doc.h(2, "Bandwidth scaling")
    recs = run.by_type("bandwidth")
    if not recs:
        doc.missing("no `bandwidth` records")
        return
    scal = [r for r in recs if _is_scaling(r)]
    rest = [r for r in recs if not _is_scaling(r)]
    threads = sorted({r.get("threads") for r in rest if _isnum(r.get("threads"))})
    groups = {}
    for r in rest:
        key = (r.get("kernel"), r.get("isa"), r.get("bytes"), r.get("node_from", 0), r.get("node_to", 0))
        groups.setdefault(key, {})[r.get("threads")] = r
    if groups:
        rows = []
        for (k, isa, b, nf, nt), by_t in groups.items():
            rows.append([k, isa, human_bytes(b) if _isnum(b) else b, "%s->%s" % (nf, nt)] +
                        [("%s (%s)" % (gbs(value(by_t[t], "bytes_per_s")), pct(spread(by_t[t]))) if t in by_t
                          else "") for t in threads])
        doc.p("GB/s (10^9 bytes/s) with the run's spread, by working set%s" % (
            " and thread count" if len(threads) > 1 else " (%s thread%s)" % (
                threads[0] if threads else "?", "" if threads == [1] else "s")))
        doc.table(["Kernel", "ISA", "Buffer", "Nodes"] + ["%s thr" % t for t in threads], rows)
    # thread scaling: one row per (series, kernel, ISA); each thread count has its own buffer size
    sgroups = {}
    for r in scal:
        if _isnum(r.get("threads")):
            sgroups.setdefault((str(r.get("series")), str(r.get("kernel")), str(r.get("isa"))), {})[r["threads"]] = r
    sthreads = sorted({t for by_t in sgroups.values() for t in by_t})
    if sgroups:
        doc.p("Thread scaling (`scaling_*` series: each thread streams its own buffer), GB/s (10^9 bytes/s) "
              "with the run's spread, by thread count")
        doc.table(["Series", "Kernel", "ISA", "Buffer per thread"] + ["%s thr" % t for t in sthreads],
                  [[sr, k, isa, " / ".join(human_bytes(by_t[t]["bytes"]) for t in sorted(by_t)
                                           if _isnum(by_t[t].get("bytes")))] +
                   [("%s (%s)" % (gbs(value(by_t[t], "bytes_per_s")), pct(spread(by_t[t]))) if t in by_t else "")
                    for t in sthreads] for (sr, k, isa), by_t in sgroups.items()])
    if not want_plots:
        return
    caches = [c for c in (run.run.get("caches") or []) if isinstance(c, dict) and c.get("type") != "instruction"]
    levels = [(c.get("level"), c["bytes"]) for c in caches if _isnum(c.get("bytes"))]
    t0 = threads[0] if threads else None
    panels = {}
    for (k, isa, b, nf, nt), by_t in groups.items():     # local memory, the fewest threads
        r = by_t.get(t0)
        if r is None or nf != nt or not _isnum(b) or not _isnum(value(r, "bytes_per_s")):
            continue
        pts = panels.setdefault(str(isa), {}).setdefault(str(k), {})
        pts.setdefault(b, value(r, "bytes_per_s") / 1e9)
    if panels:
        doc.img("bandwidth.png", "Bandwidth vs working-set size, one panel per ISA (each its own y axis), one "
                "line per kernel (%s thread%s, local memory); grey: CPUID cache sizes" % (t0, "" if t0 == 1 else "s"),
                plots.bandwidth_vs_size({i: {k: sorted(v.items()) for k, v in ks.items()}
                                         for i, ks in panels.items()}, levels,
                                        " (%s thread%s)" % (t0, "" if t0 == 1 else "s")))
    series = {}
    if sgroups:
        many = len({sr for sr, _k, _i in sgroups}) > 1
        isas = {isa for _sr, _k, isa in sgroups}
        for (sr, k, isa), by_t in sgroups.items():
            label = k if len(isas) == 1 else "%s/%s" % (k, isa)
            label = "%s, %s" % (label, sr) if many else label
            series[label] = [(t, value(r, "bytes_per_s") / 1e9) for t, r in by_t.items()
                             if _isnum(value(r, "bytes_per_s"))]
        what = "the scaling records: each thread its own buffer"
        title = "Bandwidth scaling vs threads" + (" (%s)" % next(iter(isas)) if len(isas) == 1 else "")
    elif len(threads) > 1:
        isas = {isa for (_k, isa, _b, _f, _t) in groups}
        big = {}
        for (k, isa, b, nf, nt), by_t in groups.items():  # local memory, the largest working set
            if nf == nt and _isnum(b) and ((k, isa) not in big or b > big[(k, isa)][0]):
                big[(k, isa)] = (b, by_t)
        for (k, isa), (b, by_t) in big.items():
            label = str(k) if len(isas) == 1 else "%s/%s" % (k, isa)
            series[label] = [(t, value(by_t[t], "bytes_per_s") / 1e9) for t in by_t
                             if _isnum(t) and _isnum(value(by_t[t], "bytes_per_s"))]
        what = "largest working set, local memory"
        title = "Bandwidth scaling vs threads"
    series = {k: v for k, v in series.items() if v}
    if series and len({p[0] for v in series.values() for p in v}) > 1:
        doc.img("bandwidth_threads.png", "Bandwidth vs threads per kernel (%s); y from 0, so the ratio between "
                "thread counts reads off the axis" % what, plots.scaling(series, title))


def _branch_x(r, key):
    return r.get(key) if _isnum(r.get(key)) else None


def section_branch(doc, run, want_plots=False):
    doc.h(2, "Branch prediction")
    recs = run.by_type("branch")
    if not recs:
        doc.missing("no `branch` records")
        return
    doc.table(["Test", "Period", "Targets", "Depth", "Cycles/branch", "Mispredict rate", "Method"],
              [[r.get("test"), "" if r.get("period") is None else r.get("period"), r.get("targets", ""),
                r.get("depth", ""), num(value(r, "cycles")), pct(r.get("mispredict_rate")), r.get("method", "")]
               for r in recs])
    pen = next((p for p in run.by_type("penalty") if p.get("name") == "branch_mispredict"), None)
    if pen is not None and _isnum(value(pen, "cycles")):
        doc.p("Mispredict penalty (`penalty` branch_mispredict): %s cycles (%s)." % (
            num(value(pen, "cycles")), pen.get("method", "")))
    if not want_plots:
        return

    def pts(test, key):
        out = []
        for r in recs:
            x, y = _branch_x(r, key), value(r, "cycles")
            if r.get("test") == test and x is not None and _isnum(y):
                rate = r.get("mispredict_rate")
                out.append((x, y, rate if _isnum(rate) else None))
        return out
    panels = []
    p = pts("pattern", "period")
    if p:
        panels.append(("Pattern period", "pattern period (branches, log2)", {"pattern": p}, True))
    ind = {lab: v for lab, v in (("indirect, random target", pts("indirect_random", "targets")),
                                 ("indirect, cyclic targets", pts("indirect_cyclic", "targets"))) if v}
    if ind:
        panels.append(("Indirect target count", "distinct targets (log2)", ind, True))
    p = pts("return_stack", "depth")
    if p:
        panels.append(("Return-stack depth", "call depth (call+return pairs)", {"return_stack": p}, False))
    refs = {}
    for test, label in (("cond_predictable", "predictable"), ("cond_random", "random (LFSR)")):
        r = next((x for x in recs if x.get("test") == test and _isnum(value(x, "cycles"))), None)
        if r is not None:
            refs[label] = value(r, "cycles")
    if any(len(v) >= 2 for _t, _x, series, _l in panels for v in series.values()):
        doc.img("branch.png", "Cycles per branch vs pattern period, indirect target count and return-stack depth "
                "(dotted, right axis: mispredict rate where measured); horizontal lines: the predictable and the "
                "random conditional branch", plots.branch_curves(panels, refs))


def section_penalties(doc, run):
    doc.h(2, "Penalties")
    recs = run.by_type("penalty")
    if not recs:
        doc.missing("no `penalty` records")
        return
    doc.table(["Penalty", "Cycles", "ns", "Spread", "Method", "Reference"],
              [[r.get("name"), num(value(r, "cycles")), num(value(r, "ns")), pct(spread(r)), r.get("method", ""),
                r.get("reference", "")] for r in recs])


def section_cycle_accounting(doc, run):
    doc.h(2, "Cycle accounting")
    recs = run.by_type("cycle_accounting")
    if not recs:
        doc.missing("no `cycle_accounting` records")
        return
    for r in recs:
        doc.h(3, str(r.get("bench", "?")))
        if r.get("status") not in (None, "ok") or not _isnum(r.get("total_cycles")):
            doc.p("Status: %s%s" % (r.get("status", "?"), (" (%s)" % r["reason"]) if r.get("reason") else ""))
            continue
        tot = r["total_cycles"] or 1
        rows = []
        for k in ("total_cycles", "retiring_cycles", "stall_cycles", "counted_stall_cycles", "unaccounted_cycles"):
            if _isnum(r.get(k)):
                rows.append([k.replace("_", " "), num(r[k]), pct(r[k] / tot)])
        doc.table(["Cycles", "Count", "Share of total"], rows)
        terms = [t for t in (r.get("terms") or []) if isinstance(t, dict)]
        if terms:
            trows = []
            for t in terms:
                c, pen = t.get("count"), t.get("penalty")
                cyc = c * pen if _isnum(c) and _isnum(pen) else None
                trows.append([t.get("event"), num(c), num(pen), num(cyc), pct(cyc / tot) if cyc is not None else ""])
            doc.table(["Event", "Count", "Penalty (cycles)", "Count x penalty", "Share of total"], trows)


def section_selftest(doc, run):
    doc.h(2, "PMU self-test")
    recs = run.by_type("pmu_selftest")
    if not recs:
        doc.missing("no `pmu_selftest` records")
        return
    for r in recs:
        doc.p("Status: **%s**" % r.get("status", "?"))
        checks = [c for c in (r.get("checks") or []) if isinstance(c, dict)]
        if checks:
            doc.table(["Check", "Status", "Detail"], [[c.get("name"), c.get("status"), c.get("detail", "")] for c in checks])


def section_pebs(doc, run):
    doc.h(2, "PEBS load latency")
    recs = run.by_type("pebs_latency")
    if not recs:
        doc.missing("no `pebs_latency` records")
        return
    rows = []
    for r in recs:
        h = r.get("histogram")
        hs = json.dumps(h, separators=(",", ":")) if h else ""
        rows.append([r.get("row"), r.get("source"), r.get("samples"), num(r.get("mean_cycles")),
                     hs if len(hs) <= 80 else hs[:77] + "..."])
    doc.table(["Row", "Source", "Samples", "Mean cycles", "Histogram"], rows)


def section_figures(doc, run):
    """Every figure of a record type that no section above shows (figures.figure_records: "figure", "unit"
    and the statistics keys): a new benchmark's records are listed here, read generically, with no code of
    their own in this file."""
    figs = [(r.get("type"), f) for r in run.records if r.get("type") not in SHOWN
            for f in figures.figure_records(r, measured=False)]
    if not figs:
        return
    sus = figures.crosscheck_suspects(run.records)
    doc.h(2, "Figures")
    doc.p("Figures of record types without a section of their own (docs/records.md, \"Statistics keys\"): "
          "the median with its 95 % CI, where the next run's median falls (the next-run interval, for figures "
          "measured in replicates), samples, spread and verdict.")
    rows = []
    for t, f in figs:
        q, why = figures.final_quality(f, sus)
        also = ", ".join("%s %s" % (num(f[u]), u) for u in figures.CONVERSIONS if u != f["unit"] and _isnum(f.get(u)))
        ci = ("%s..%s" % (num(f["ci_lo"]), num(f["ci_hi"]))) if _isnum(f.get("ci_lo")) and _isnum(f.get("ci_hi")) \
            else ""
        rows.append([f["figure"], t, num(value(f, f["unit"])), f["unit"], ci, next_text(f, unit=False), also,
                     num(count(f)), pct(spread(f)), q or "", why or ""])
    doc.table(["Figure", "Record", "Median", "Unit", "95% CI", "Next run", "Also", "n", "Spread", "Quality", "Reason"],
              rows)


def section_other(doc, run):
    """Record types that no section shows and that carry no figure: kept as they were."""
    other = [(t, n) for t, n in run.types().items()
             if t not in SHOWN and not any(figures.figure_records(r, measured=False) for r in run.by_type(t))]
    if not other:
        return
    doc.h(2, "Other records")
    doc.p("Record types this tool has no section for and that carry no figure; kept as they were.")
    doc.table(["Type", "Count", "First record"],
              [[t, n, _text({k: v for k, v in run.first(t).items() if k != "type"})[:100]] for t, n in other])


# The sections after the summary, in order, each with the record types it shows. Record-type-specific code
# exists here only for a view a table of figures cannot give (the guide's Table 2 beside its references, curves,
# matrices, heat maps, cycle-accounting terms); every other record type's figures are in section_figures, and
# a record type with neither is in section_other. (run: the summary; summary: the quality counts.)
SECTIONS = [
    (section_machine, ("run", "cpu", "topology", "memory")),
    (section_table2, ("data_source",)),
    (section_latency, ("latency_sweep", "cache_inferred")),
    (section_c2c, ("c2c",)),
    (section_numa, ("numa_latency",)),
    (section_loaded, ("loaded_latency",)),
    (section_bandwidth, ("bandwidth",)),
    (section_branch, ("branch",)),
    (section_penalties, ("penalty",)),
    (section_cycle_accounting, ("cycle_accounting",)),
    (section_selftest, ("pmu_selftest",)),
    (section_pebs, ("pebs_latency",)),
    (section_figures, ()),
    (section_other, ()),
]
SHOWN = {t for _fn, types in SECTIONS for t in types} | {"summary", "crosscheck", "crosscheck_cycles"}   # section_disagreements
_PLOTS = (section_latency, section_c2c, section_numa, section_loaded, section_bandwidth, section_branch)


def build(run, want_plots=True, boot=None):
    """Doc for a run. want_plots is ignored (plots skipped, with a note) without matplotlib. boot: the
    results directory's boot.json (how QEMU ran), for the banner."""
    doc = Doc()
    if want_plots and not plots.available():
        want_plots = False
        nomatplotlib = True
    else:
        nomatplotlib = False
    # Summary first (machine, quality counts, the Table 2 chart); every "##" section after it is a
    # detail, collapsible in HTML.
    section_summary(doc, run)
    section_banner(doc, run, boot)
    section_quality(doc, run)
    if nomatplotlib:
        doc.p("_Plots skipped: matplotlib is not installed (apt-get install python3-matplotlib)._")
    section_table2_chart(doc, run, want_plots)
    section_disagreements(doc, run)
    for fn, _types in SECTIONS:
        if fn in _PLOTS:
            fn(doc, run, want_plots)
        else:
            fn(doc, run)
    return doc


# ---- back ends -------------------------------------------------------------------------------

def _md_cell(v):
    return _text(v).replace("|", "\\|").replace("\n", " ")


def to_markdown(doc, png_dir=None):
    """Markdown text; images are linked as png_dir/<name> when png_dir is given."""
    out = []
    for b in doc.blocks:
        if b[0] == "h":
            out.append("#" * b[1] + " " + b[2])
        elif b[0] == "p":
            out.append(b[1])
        elif b[0] == "code":
            out.append("```\n" + b[1] + "\n```")
        elif b[0] == "table":
            headers, rows = b[1], b[2]
            lines = ["| " + " | ".join(_md_cell(h) for h in headers) + " |",
                     "|" + "|".join("---" for _ in headers) + "|"]
            for r in rows:
                lines.append("| " + " | ".join(_md_cell(c) for c in r) + " |")
            out.append("\n".join(lines))
        elif b[0] == "img":
            if png_dir is not None:
                out.append("![%s](%s)" % (b[2], os.path.join(png_dir, b[1])))
            else:
                out.append("_Plot %s: see the HTML report or --png._" % b[1])
    return "\n\n".join(out) + "\n"


def _inline(text):
    s = html.escape(text)
    s = re.sub(r"`([^`]+)`", r"<code>\1</code>", s)
    s = re.sub(r"\*\*([^*]+)\*\*", r"<b>\1</b>", s)
    s = re.sub(r"(?<![\w])_([^_]+)_(?![\w])", r"<i>\1</i>", s)
    return s


_CSS = """*{box-sizing:border-box}
body{font-family:sans-serif;max-width:1200px;margin:1em auto;padding:0 1em;color:#222;line-height:1.35}
.tw{overflow-x:auto;max-width:100%;margin:.5em 0 1em}
table{border-collapse:collapse}td,th{border:1px solid #bbb;padding:2px 8px;font-size:13px}
th{background:#eee}td{text-align:right}td:first-child{text-align:left}
pre{background:#f6f6f6;padding:.5em;overflow-x:auto;max-width:100%}
figure{margin:.5em 0}img{max-width:100%;height:auto}figcaption{font-size:12px;color:#555}
details{border-top:1px solid #ccc;padding:.3em 0}summary{cursor:pointer;font-size:1.2em;font-weight:bold}
@media (max-width:600px){body{padding:0 .4em}td,th{padding:1px 4px;font-size:12px}}"""


# Sections a reader needs first start unfolded: what disagreed and the Table 2 rows.
OPEN_SECTIONS = {"Disagreements", "Data sources vs the guide's Table 2"}


def to_html(doc, title="pmubench report"):
    """One self-contained HTML page: no external files, PNGs embedded as data: URIs."""
    out = ["<!DOCTYPE html>", "<html lang=\"en\"><head><meta charset=\"utf-8\">"
           "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\"><title>%s</title>" % html.escape(title),
           "<style>%s</style></head><body>" % _CSS]
    open_details = False
    for b in doc.blocks:
        if b[0] == "h" and b[1] == 2:     # the summary is everything before the first "##": the rest folds
            if open_details:
                out.append("</details>")
            out.append("<details%s><summary>%s</summary>" % (" open" if b[2] in OPEN_SECTIONS else "",
                                                              _inline(b[2])))
            open_details = True
        elif b[0] == "h":
            out.append("<h%d>%s</h%d>" % (b[1], _inline(b[2]), b[1]))
        elif b[0] == "p":
            out.append("<p>%s</p>" % _inline(b[1]))
        elif b[0] == "code":
            out.append("<pre>%s</pre>" % html.escape(b[1]))
        elif b[0] == "table":
            rows = ["<tr>" + "".join("<th>%s</th>" % html.escape(str(h)) for h in b[1]) + "</tr>"]
            for r in b[2]:
                rows.append("<tr>" + "".join("<td>%s</td>" % html.escape(_text(c)) for c in r) + "</tr>")
            out.append("<div class=\"tw\"><table>%s</table></div>" % "".join(rows))
        elif b[0] == "img":
            data = base64.b64encode(b[3]).decode("ascii")
            out.append("<figure><img alt=\"%s\" src=\"data:image/png;base64,%s\"><figcaption>%s</figcaption></figure>"
                       % (html.escape(b[1]), data, html.escape(b[2])))
    if open_details:
        out.append("</details>")
    out.append("</body></html>")
    return "\n".join(out) + "\n"


def write_pngs(doc, png_dir):
    os.makedirs(png_dir, exist_ok=True)
    paths = []
    for name, png in doc.images():
        p = os.path.join(png_dir, name)
        with open(p, "wb") as f:
            f.write(png)
        paths.append(p)
    return paths
