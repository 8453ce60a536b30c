"""Read a record's statistics whatever key convention wrote it, and turn a verified Run into named
scalar figures (value, unit, spread, direction) for history/nightly.

Key convention (docs/records.md, "Statistics keys"): a figure's statistics are "median", "p10",
"p90", "min", "max", "n" and "spread" (a fraction), all in the record's "unit"; the same median in
another unit sits under that unit's name ("ns", "cycles", "tsc"). Logs written before that
convention used per-benchmark keys ("ns"/"p10_ns", "median_tsc", "bytes_per_s"/"p10_bytes_per_s",
"cycles_per_branch", "cv", "robust_cv", "samples", c2c "hit_ns"...). value(), stat(), count(),
spread() and part() are the only places that know both: everything else in pmb reads through them.

A figure name is '/'-separated, group first: data_source/L3_unshared/cycles,
latency_sweep/random/4096/ns, bandwidth/read/avx2/1048576/t4/n0-0/bytes_per_s, ...
A name is the same for a record written with either key convention (a legacy record gives the
name a new one would), so a history database mixes old and new runs. Names must be unique per
measured point: two records that give one name collapse into one figure (the later wins).
better: "lower" or "higher" says which direction is an improvement.

Any record type is read generically (generic()): a record, or an object nested one level in it,
that carries "figure", "unit" and a numeric "median" (docs/records.md, "Statistics keys") gives
the figure <figure>/<unit>, and <figure>/ns, <figure>/cycles from its conversions. A new
benchmark's records reach history, nightly and the report with no change here. The record types
in HISTORY_NAMES are the exception, and only for their names: their history names were fixed
before records carried "figure" (and logs of that time carry none), so they keep them.
"""

STATS = ("median", "p10", "p90", "min", "max")


def _num(v):
    return isinstance(v, (int, float)) and not isinstance(v, bool)


def _first_num(rec, keys):
    for k in keys:
        v = rec.get(k)
        if _num(v):
            return v
    return None


# ---- the accessor: new keys first, legacy keys second ------------------------------------------

def value(rec, unit):
    """The figure's median in `unit` ("ns", "cycles", "tsc", "bytes_per_s"), or None.

    rec["median"] when rec["unit"] == unit; else rec[unit] (a conversion of the median, or the
    legacy key of the same name); else the legacy "median_<unit>" (timer) or "<unit>_per_branch"
    (branch). Note that loaded_latency's plain "bytes_per_s" is the load generators' bandwidth,
    a value of its own, not a statistic of the record's figure."""
    if not isinstance(rec, dict):
        return None
    if rec.get("unit") == unit and _num(rec.get("median")):
        return rec["median"]
    return _first_num(rec, (unit, "median_" + unit, unit + "_per_branch"))


def stat(rec, name, unit):
    """One statistic ("median", "p10", "p90", "min", "max") in `unit`, or None. Only the median is
    ever converted: p10 etc. exist in the record's own unit alone (new: "p10" with "unit";
    legacy: "p10_<unit>")."""
    if name == "median":
        return value(rec, unit)
    if not isinstance(rec, dict):
        return None
    if rec.get("unit") == unit and name in rec:
        return rec[name] if _num(rec[name]) else None
    return _first_num(rec, ("%s_%s" % (name, unit),))


def count(rec):
    """Samples behind the figure: "n", legacy "samples"; None when the record says neither."""
    if not isinstance(rec, dict):
        return None
    return _first_num(rec, ("n", "samples"))


def spread(rec):
    """The figure's relative spread as a fraction: "spread" (1.4826 MAD / |median|); legacy logs
    hold it as "robust_cv" (latency records) or "cv" (the others, and older latency records)."""
    if not isinstance(rec, dict):
        return None
    return _first_num(rec, ("spread", "robust_cv", "cv"))


def part(rec, name):
    """A figure nested in a record (c2c "hit" / "hitm"), as a record the accessors above read, or
    None (the pair failed). Legacy c2c records flattened it: "hit_ns", "hit_cycles", "hit_tsc",
    "hit_cv"."""
    if not isinstance(rec, dict):
        return None
    v = rec.get(name)
    if isinstance(v, dict):
        return v
    legacy = {k: rec.get("%s_%s" % (name, k)) for k in ("ns", "cycles", "tsc", "cv")}
    legacy = {k: x for k, x in legacy.items() if _num(x)}
    return legacy or None


def reference(rec):
    """A data_source record's guide reference as (low, high, unit, text), or None when the record
    carries none. The values come from the record (bench/lat_plan.c is their one source)."""
    if not isinstance(rec, dict):
        return None
    lo, hi, unit = rec.get("reference_lo"), rec.get("reference_hi"), rec.get("reference_unit")
    if not (_num(lo) and _num(hi) and isinstance(unit, str) and unit):
        return None
    text = rec.get("reference")
    if not isinstance(text, str) or not text:
        text = ("~%g %s" % (lo, unit)) if lo == hi else ("~%g-%g %s" % (lo, hi, unit))
    return lo, hi, unit, text


# ---- named figures ---------------------------------------------------------------------------

class Figure:
    __slots__ = ("name", "value", "unit", "spread", "better", "group", "quality", "quality_reason")

    def __init__(self, name, value, unit, spread=None, better="lower", quality=None, quality_reason=None):
        self.name = name
        self.value = float(value)
        self.unit = unit
        self.spread = None if spread is None else float(spread)
        self.better = better
        self.group = name.split("/", 1)[0]
        # The figure's final verdict (ok | noisy | suspect | unavailable; final_quality): the record's,
        # made "suspect" when a cross-check of the run marked it; None for logs written before verdicts.
        self.quality = quality
        self.quality_reason = quality_reason

    def __repr__(self):
        return "Figure(%s=%g %s spread=%s)" % (self.name, self.value, self.unit, self.spread)


def crosscheck_suspects(records):
    """{figure name: [quantity, ...]} of every figure that a disagreeing `crosscheck` record of the run lists
    under "suspect" (docs/measurement.md, "Verdicts"), the quantities in record order. A cross-check runs
    after the records of both its figures were written, so a record's own "quality" cannot say so: this map
    is the other half of a figure's final verdict (final_quality). A figure whose conversion to cycles a check
    blamed (the record's "cycles_suspect", continued in "crosscheck_cycles" records: the clock draws it was
    converted with, while its own figure holds) is under "cycles:<figure name>"."""
    out = {}
    for r in records:
        # a long cycles_suspect list goes on in "crosscheck_cycles" records, written only for a disagreeing check
        if isinstance(r, dict) and (r.get("type") == "crosscheck" and r.get("agrees") is False or
                                    r.get("type") == "crosscheck_cycles"):
            q = r.get("quantity") or "?"
            for key, prefix in (("suspect", ""), ("cycles_suspect", "cycles:")):
                for n in r.get(key) or []:
                    if isinstance(n, str) and q not in out.setdefault(prefix + n, []):
                        out[prefix + n].append(q)
    return out


def final_quality(rec, suspects, unit=None):
    """(quality, reason) of a record's figure after every cross-check of its run: the record's own
    "quality" / "quality_reason", made "suspect" when a disagreeing cross-check (suspects, from
    crosscheck_suspects) marked it; (None, None) for a log written before verdicts. The image's summary
    record counts figures by this verdict, and every host tool shows and uses it (reports, nightly
    baselines and comparisons, history, repro). unit "cycles" for a record in another unit: the figure's
    conversion to core cycles, also suspect where a check blamed that conversion (crosscheck "cycles_suspect")."""
    if not isinstance(rec, dict):
        return None, None
    q, why = rec.get("quality"), rec.get("quality_reason")
    xq = suspects.get(rec.get("figure")) if suspects else None
    if xq and q in ("ok", "noisy"):
        q, why = "suspect", "cross-check disagrees: %s" % "; ".join(xq)
    cq = suspects.get("cycles:%s" % rec.get("figure")) if suspects and unit == "cycles" and \
        rec.get("unit") != "cycles" else None
    if cq and q in ("ok", "noisy"):
        q, why = "suspect", "its conversion to cycles is blamed by a cross-check: %s" % "; ".join(cq)
    return q, why


def _add(out, name, v, unit, s=None, better="lower", rec=None, suspects=None):
    if _num(v):
        q, why = final_quality(rec, suspects, unit)
        out[name] = Figure(name, v, unit, s if _num(s) else None, better, q, why)


def _add_fig(out, name, rec, unit, fig_unit=None, better="lower", suspects=None):
    """The record's figure in `unit`, with its spread (relative, so the same in every unit) and verdict."""
    _add(out, name, value(rec, unit), fig_unit or unit, spread(rec), better, rec, suspects)


def _int_or_na(v):
    """A branch point's period / targets / depth as the image writes it in the figure name: the
    integer, or -1 where the test has none (null or absent)."""
    return int(v) if _num(v) and v == int(v) else -1


def branch_figure(rec):
    """The name of a branch point: branch/<test>/<period>/<targets>/<depth>, -1 where not applicable
    (bench/branch.c rec_point). Each test, period, target count and return depth is its own figure:
    the indirect and return-stack tests have period null, so a name by period alone merged their
    points. The record's own "figure" is taken where it has one; a log written before records named
    their figures gets the same name from test, period, targets and depth."""
    f = rec.get("figure")
    if isinstance(f, str) and f.startswith("branch/") and f.count("/") == 4:
        return f
    return "branch/%s/%d/%d/%d" % (rec.get("test"), _int_or_na(rec.get("period")),
                                   _int_or_na(rec.get("targets")), _int_or_na(rec.get("depth")))


# The units a generic figure is also named in when the record converts its median to them.
CONVERSIONS = ("ns", "cycles")
# A figure's unit in the figures table where it differs from the record's "unit" key (the name keeps the key).
UNIT_NAMES = {"bytes_per_s": "bytes/s"}
# Units where a larger value is better; every other figure is better lower (latencies, cycles, ticks).
HIGHER_IS_BETTER = ("bytes_per_s", "bytes/s", "pass")


def is_figure(rec):
    """A measured figure through the statistics emitter: "figure", "unit" and a numeric "median"."""
    return (isinstance(rec, dict) and isinstance(rec.get("figure"), str) and rec["figure"] != ""
            and isinstance(rec.get("unit"), str) and rec["unit"] != "" and _num(rec.get("median")))


def _names_figure(rec):
    return (isinstance(rec, dict) and isinstance(rec.get("figure"), str) and rec["figure"] != ""
            and isinstance(rec.get("unit"), str) and rec["unit"] != "")


def figure_records(rec, measured=True):
    """The figures a record carries: itself and the objects nested one level in it (c2c's "hit"/"hitm")
    that pass is_figure, in key order; measured=False also those not measured (a null median: quality
    unavailable)."""
    ok = is_figure if measured else _names_figure
    if not isinstance(rec, dict):
        return []
    out = [rec] if ok(rec) else []
    return out + [v for v in rec.values() if ok(v)]


def generic(out, rec, suspects=None):
    """Every figure a record of any type carries (figure_records), named <figure>/<unit>, plus
    <figure>/<u> for each conversion u in CONVERSIONS the record has; verdicts final (suspects:
    crosscheck_suspects of the run)."""
    for f in figure_records(rec):
        unit = f["unit"]
        better = "higher" if unit in HIGHER_IS_BETTER else "lower"
        _add_fig(out, "%s/%s" % (f["figure"], unit), f, unit, UNIT_NAMES.get(unit, unit), better, suspects)
        for u in CONVERSIONS:
            if u != unit and _num(f.get(u)):
                _add_fig(out, "%s/%s" % (f["figure"], u), f, u, better=better, suspects=suspects)


def extract(run):
    """dict name -> Figure for every comparable number in the run (later duplicates win): the record
    types of HISTORY_NAMES by their history names, every other record through generic(); each with its
    final verdict (final_quality)."""
    out = {}
    sus = crosscheck_suspects(run.records)

    def fig(name, rec, unit, fig_unit=None, better="lower"):
        _add_fig(out, name, rec, unit, fig_unit, better, sus)

    for r in run.records:
        t = r.get("type")
        if t not in HISTORY_NAMES:
            generic(out, r, sus)
        elif t == "data_source":
            if r.get("status", "ok") != "ok":
                continue
            src = r.get("source")
            fig("data_source/%s/cycles" % src, r, "cycles")
            fig("data_source/%s/ns" % src, r, "ns")
        elif t == "latency_sweep":
            base = "latency_sweep/%s/%s/%s" % (r.get("mode", "random"), r.get("page_bytes", 0), r.get("bytes"))
            fig(base + "/ns", r, "ns")
            fig(base + "/cycles", r, "cycles")
        elif t == "bandwidth":
            name = "bandwidth/%s/%s/%s/t%s/n%s-%s/bytes_per_s" % (
                r.get("kernel"), r.get("isa"), r.get("bytes"), r.get("threads"),
                r.get("node_from", 0), r.get("node_to", 0))
            fig(name, r, "bytes_per_s", "bytes/s", better="higher")
        elif t == "penalty":
            fig("penalty/%s/cycles" % r.get("name"), r, "cycles")
            fig("penalty/%s/ns" % r.get("name"), r, "ns")
        elif t == "c2c":
            pair = "%s-%s" % (r.get("from_cpu"), r.get("to_cpu"))
            for k in ("hit", "hitm"):
                fig("c2c/%s/%s_ns" % (pair, k), part(r, k), "ns")
        elif t == "numa_latency":
            fig("numa_latency/%s-%s/ns" % (r.get("from_node"), r.get("to_node")), r, "ns")
        elif t == "loaded_latency":
            fig("loaded_latency/%s/ns" % r.get("delay"), r, "ns")
            # the load generators' bandwidth: a plain value beside the latency figure (not a statistic
            # of it); it has no spread of its own and carries the latency's, as it always has
            _add(out, "loaded_latency/%s/bytes_per_s" % r.get("delay"), r.get("bytes_per_s"), "bytes/s",
                 spread(r), better="higher", suspects=sus)
        elif t == "cache_inferred":
            fig("cache_inferred/L%s/ns" % r.get("level"), r, "ns")
        elif t == "branch":
            fig(branch_figure(r) + "/cycles_per_branch", r, "cycles")
        elif t == "cycle_accounting":
            _add(out, "cycle_accounting/%s/total_cycles" % r.get("bench"), r.get("total_cycles"), "cycles")
        elif t == "pebs_latency":
            _add(out, "pebs_latency/%s/%s/mean_cycles" % (r.get("row"), r.get("source")), r.get("mean_cycles"),
                 "cycles")
        elif t == "pmu_selftest":
            for c in r.get("checks") or []:
                if isinstance(c, dict) and c.get("name"):
                    ok = 1.0 if c.get("status") in ("ok", "pass", "passed") else 0.0
                    n = "pmu_selftest/%s" % c["name"]
                    out[n] = Figure(n, ok, "pass", None, "higher")
    return out


# Record types named by extract()'s own branches: names fixed before records carried "figure" (legacy logs
# have none), kept so that a history database compares old runs with new ones. Nothing else is special here.
HISTORY_NAMES = ("data_source", "latency_sweep", "bandwidth", "penalty", "c2c", "numa_latency", "loaded_latency",
                 "cache_inferred", "branch", "cycle_accounting", "pebs_latency", "pmu_selftest")


def matches(name, query):
    """--figure matching: exact name, a prefix ending at '/', or any '/'-component equal to query."""
    if name == query or name.startswith(query.rstrip("/") + "/"):
        return True
    return query in name.split("/")
