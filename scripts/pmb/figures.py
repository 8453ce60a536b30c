"""Turn a verified Run into named scalar figures (value, unit, spread, direction) for history/nightly.

A figure name is '/'-separated, group first: data_source/L3_unshared/cycles,
latency_sweep/random/4096/ns, bandwidth/read/avx2/1048576/t4/n0-0/bytes_per_s, ...
better: "lower" or "higher" says which direction is an improvement.
"""

# Reference values from the Intel Core i7 / Xeon 5500 performance analysis guide: L1D 4 cycles and
# L2 10 cycles (section "Core memory subsystem"), the rest from Table 2 (data sources responding to
# an L2 miss). (unit, low, high): a single figure has low == high.
GUIDE_TABLE2 = {
    "L1": ("cycles", 4, 4),
    "L2": ("cycles", 10, 10),
    "L3_unshared": ("cycles", 40, 40),
    "L3_shared_other_core": ("cycles", 65, 65),
    "L3_modified_other_core": ("cycles", 75, 75),
    "remote_L3": ("cycles", 100, 300),
    "local_DRAM": ("ns", 60, 60),
    "remote_DRAM": ("ns", 100, 100),
}
DATA_SOURCES = list(GUIDE_TABLE2)


class Figure:
    __slots__ = ("name", "value", "unit", "cv", "better", "group")

    def __init__(self, name, value, unit, cv=None, better="lower"):
        self.name = name
        self.value = float(value)
        self.unit = unit
        self.cv = None if cv is None else float(cv)
        self.better = better
        self.group = name.split("/", 1)[0]

    def __repr__(self):
        return "Figure(%s=%g %s cv=%s)" % (self.name, self.value, self.unit, self.cv)


def _num(v):
    return isinstance(v, (int, float)) and not isinstance(v, bool)


def _add(out, name, rec, key, unit, cv_key="cv", better="lower"):
    v = rec.get(key)
    if _num(v):
        cv = rec.get(cv_key)
        out[name] = Figure(name, v, unit, cv if _num(cv) else None, better)


def extract(run):
    """dict name -> Figure for every comparable number in the run (later duplicates win)."""
    out = {}
    for r in run.records:
        t = r.get("type")
        if t == "data_source":
            if r.get("status", "ok") != "ok":
                continue
            src = r.get("source")
            _add(out, "data_source/%s/cycles" % src, r, "cycles", "cycles")
            _add(out, "data_source/%s/ns" % src, r, "ns", "ns")
        elif t == "latency_sweep":
            base = "latency_sweep/%s/%s/%s" % (r.get("mode", "random"), r.get("page_bytes", 0), r.get("bytes"))
            _add(out, base + "/ns", r, "ns", "ns")
            _add(out, base + "/cycles", r, "cycles", "cycles")
        elif t == "bandwidth":
            name = "bandwidth/%s/%s/%s/t%s/n%s-%s/bytes_per_s" % (
                r.get("kernel"), r.get("isa"), r.get("bytes"), r.get("threads"),
                r.get("node_from", 0), r.get("node_to", 0))
            _add(out, name, r, "bytes_per_s", "bytes/s", better="higher")
        elif t == "penalty":
            _add(out, "penalty/%s/cycles" % r.get("name"), r, "cycles", "cycles")
            _add(out, "penalty/%s/ns" % r.get("name"), r, "ns", "ns")
        elif t == "c2c":
            pair = "%s-%s" % (r.get("from_cpu"), r.get("to_cpu"))
            _add(out, "c2c/%s/hit_ns" % pair, r, "hit_ns", "ns")
            _add(out, "c2c/%s/hitm_ns" % pair, r, "hitm_ns", "ns")
        elif t == "numa_latency":
            _add(out, "numa_latency/%s-%s/ns" % (r.get("from_node"), r.get("to_node")), r, "ns", "ns")
        elif t == "loaded_latency":
            _add(out, "loaded_latency/%s/ns" % r.get("delay"), r, "ns", "ns")
            _add(out, "loaded_latency/%s/bytes_per_s" % r.get("delay"), r, "bytes_per_s", "bytes/s",
                 better="higher")
        elif t == "cache_inferred":
            _add(out, "cache_inferred/L%s/ns" % r.get("level"), r, "ns", "ns")
        elif t == "branch":
            base = "branch/%s/%s" % (r.get("test"), r.get("period"))
            _add(out, base + "/cycles_per_branch", r, "cycles_per_branch", "cycles")
        elif t == "cycle_accounting":
            _add(out, "cycle_accounting/%s/total_cycles" % r.get("bench"), r, "total_cycles", "cycles")
        elif t == "pebs_latency":
            _add(out, "pebs_latency/%s/%s/mean_cycles" % (r.get("row"), r.get("source")), r,
                 "mean_cycles", "cycles")
        elif t == "pmu_selftest":
            for c in r.get("checks") or []:
                if isinstance(c, dict) and c.get("name"):
                    ok = 1.0 if c.get("status") in ("ok", "pass", "passed") else 0.0
                    n = "pmu_selftest/%s" % c["name"]
                    out[n] = Figure(n, ok, "pass", None, "higher")
    return out


def matches(name, query):
    """--figure matching: exact name, a prefix ending at '/', or any '/'-component equal to query."""
    if name == query or name.startswith(query.rstrip("/") + "/"):
        return True
    return query in name.split("/")
