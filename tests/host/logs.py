"""Synthetic pmubench serial logs with real record counts and CRC-32s, for the host-tool tests.

Records are written with the statistics keys of docs/records.md ("unit", "median", "p10", ..., "n",
"spread"); legacy() turns one into its twin as tools before that convention wrote it, and
full_run(keys="legacy") writes a whole run that way. One table, RECORD_TYPES, holds one row per record
type: what a full run writes of it and its legacy keys; full_run, legacy and modern only walk it. The Table 2 reference values are not copied
here: table2_rows() reads them from the data_source records of a checked-in log of the real image.
"""
import json
import os
import random
import zlib

FIXTURES = os.path.join(os.path.dirname(os.path.abspath(__file__)), "fixtures")
REFERENCE_LOG = os.path.join(FIXTURES, "qemu-nehalem-smp4-numa2-all.log")

NOISE = ("\x1b[2J\x1b[01;01H\x1b[=3h\x1b[2J\x1b[01;01HBdsDxe: loading Boot0002 \"UEFI QEMU HARDDISK\"\r\n"
         "BdsDxe: starting Boot0002 \"UEFI QEMU HARDDISK QM00001 \"\r\n"
         "\x1b[1m\x1b[33m\x1b[40mShell> \x1b[0m\x1b[37m\x1b[40m\r\n")


def dumps(rec):
    return json.dumps(rec, separators=(",", ":"))


def crc_of(lines):
    crc = 0
    for line in lines:
        crc = zlib.crc32(line.encode() + b"\n", crc)
    return "%08x" % crc


def end_record(lines, status="ok"):
    return {"type": "end", "status": status, "records": len(lines), "crc32": crc_of(lines)}


def run_lines(records, status="ok"):
    """Record dicts (run record first) -> record lines including a valid end record."""
    lines = [dumps(r) for r in records]
    return lines + [dumps(end_record(lines, status))]


def serial(lines, noise=True, eol="\r\n", banner="pmubench 0.1.0 starting"):
    """Record lines -> a serial capture with firmware noise and human-readable lines."""
    out = [NOISE] if noise else []
    out.append(banner + eol)
    for i, line in enumerate(lines):
        out.append(line + eol)
        if noise and i % 7 == 3:
            out.append("# progress: %d records%s" % (i, eol))
    out.append("pmubench: done" + eol)
    return "".join(out)


def run_record(brand="Intel(R) Xeon(R) CPU X5570 @ 2.93GHz", cpus=4, numa=2, memory=2 << 30, seed=1):
    return {
        "type": "run", "version": "0.1.0",
        "cpu": {"vendor": "GenuineIntel", "family": 6, "model": 26, "stepping": 5, "brand": brand,
                "uarch": "nehalem"},
        "tsc_hz": 2933000000, "tsc_method": "cpuid_15h", "core_tsc_ratio": 1.0,
        "core_tsc_method": "aperf_mperf", "memory_bytes": memory, "cpus": cpus, "numa_nodes": numa,
        "caches": [{"level": 1, "type": "data", "bytes": 32768, "ways": 8, "line": 64},
                   {"level": 2, "type": "unified", "bytes": 262144, "ways": 8, "line": 64},
                   {"level": 3, "type": "unified", "bytes": 8388608, "ways": 16, "line": 64}],
        "pmu": {"version": 3, "gp_counters": 4, "fixed_counters": 3, "status": "ok", "reason": ""},
        "config": {"profile": "quick", "seed": seed, "bench": "all", "serialize": "lfence"},
    }


_TABLE2 = []


def table2_rows(path=REFERENCE_LOG):
    """[(source, lo, hi, unit, text, guide)] from the data_source records of a log of the real image,
    in its order: the reference values come from the records (bench/lat_plan.c is their one source)."""
    if _TABLE2 and path == REFERENCE_LOG:
        return list(_TABLE2)
    rows = []
    with open(path, "rb") as f:
        for raw in f.read().decode("utf-8", "replace").splitlines():
            i = raw.find('{"type":"data_source"')
            if i < 0:
                continue
            r = json.loads(raw[i:])
            rows.append((r["source"], r["reference_lo"], r["reference_hi"], r["reference_unit"], r["reference"],
                         r.get("guide", "")))
    assert rows, "no data_source records in " + path
    if path == REFERENCE_LOG:
        _TABLE2[:] = rows
    return rows


def stats(unit, median, spread, n=15):
    """A figure's keys as the one statistics emitter writes them (synthetic quantiles around the median)."""
    if median is None:
        return {"unit": unit, "median": None, "p10": None, "p90": None, "min": None, "max": None, "n": 0,
                "spread": None, "ci_lo": None, "ci_hi": None}
    d = abs(median) * spread
    return {"unit": unit, "median": median, "p10": median - d, "p90": median + d, "min": median - 2 * d,
            "max": median + 3 * d, "n": n, "spread": spread, "ci_lo": median - d / 2, "ci_hi": median + d / 2}


ISSUE11 = ("figure", "ci_lo", "ci_hi", "converged", "quality", "quality_reason")
STAT_KEYS = ("median", "min", "p10", "p90", "max", "n", "spread")
LATENCY_TYPES = ("latency_sweep", "data_source", "numa_latency", "loaded_latency")


class Gen:
    """One synthetic run's parameters and random stream, handed to every row's build()."""

    def __init__(self, scale, seed, jitter, cpus, numa, brand, status_rows):
        self.scale, self.seed, self.jitter, self.cpus, self.numa = scale, seed, jitter, cpus, numa
        self.brand = brand or "Intel(R) Xeon(R) CPU X5570 @ 2.93GHz"
        self.status_rows = status_rows or {}
        self.rnd = random.Random(seed)
        self.ghz = 2.933

    def j(self, v):
        """v scaled, with the run's relative jitter."""
        return v * self.scale * (1 + self.rnd.uniform(-self.jitter, self.jitter))

    def lat(self, cyc, spread=0.01, n=15):
        """The latency figure keys for a median of `cyc` core cycles (core/TSC ratio 1)."""
        ns = round(cyc / self.ghz, 3)
        return dict(stats("ns", ns, spread, n), tsc=round(cyc, 2), cycles=round(cyc, 2),
                    cycles_method="core_tsc_ratio:aperf_mperf", core_tsc_ratio=1.0)


# ---- what a full run writes, one builder per record type ----------------------------------------------------

def _sweep(g):
    # plateaus at L1 4c, L2 10c, L3 40c, DRAM 60ns
    out = []
    for shift in range(12, 28):
        size = 1 << shift
        cyc = 4 if size <= 32768 else 10 if size <= 262144 else 40 if size <= 8 << 20 else 60 * g.ghz
        out.append(dict({"type": "latency_sweep", "bytes": size, "page_bytes": 4096, "mode": "random",
                         "figure": "latency_sweep/random/4096/%d" % size}, **g.lat(g.j(cyc))))
    return out


def _data_source(g):
    # every Table 2 row measures 5% above its reference value (the middle of a range)
    out = []
    for src, lo, hi, unit, text, guide in table2_rows():
        ref = {"reference": text, "reference_lo": lo, "reference_hi": hi, "reference_unit": unit, "guide": guide}
        fig = {"figure": "data_source/" + src}
        if g.status_rows.get(src, "ok") != "ok":
            out.append(dict({"type": "data_source", "source": src, "status": "unavailable",
                             "reason": "single socket"}, **fig, **stats("ns", None, None),
                            quality="unavailable", quality_reason="single socket", method="pointer_chase", **ref))
            continue
        mid = (lo + hi) / 2 * 1.05
        c = g.j(mid if unit == "cycles" else mid * g.ghz)
        out.append(dict({"type": "data_source", "source": src, "status": "ok"}, **fig, **g.lat(c, 0.02),
                        method="pointer_chase", **ref))
    return out


def _c2c(g):
    return [{"type": "c2c", "from_cpu": a, "to_cpu": b, "status": "ok",
             "hit": dict(g.lat(g.j(25 + a + b) * g.ghz, 0.03, 5), figure="c2c/%d-%d/hit" % (a, b)),
             "hitm": dict(g.lat(g.j(30 + 2 * abs(a - b)) * g.ghz, 0.04, 5), figure="c2c/%d-%d/hitm" % (a, b))}
            for a in range(g.cpus) for b in range(g.cpus) if a != b]


def _numa(g):
    return [dict({"type": "numa_latency", "from_node": a, "to_node": b, "figure": "numa_latency/%d-%d" % (a, b)},
                 **g.lat(g.j(62 if a == b else 105) * g.ghz)) for a in range(g.numa) for b in range(g.numa)]


def _loaded(g):
    return [dict({"type": "loaded_latency", "delay": d, "bytes_per_s": round(20e9 / g.scale / (1 + d / 200)),
                  "figure": "loaded_latency/%d" % d}, **g.lat(g.j(62 + 100 / (1 + d / 100)) * g.ghz, 0.05))
            for d in (0, 100, 1000)]


def _cache_inferred(g):
    out = []
    for lvl, b in ((1, 32768), (2, 262144), (3, 8 << 20)):
        c = g.j({1: 4, 2: 10, 3: 40}[lvl])
        plateau = dict(stats("ns", None, None), median=round(c / g.ghz, 3))   # derived: no samples of its own
        out.append(dict({"type": "cache_inferred", "level": lvl, "bytes": b, "cpuid_bytes": b,
                         "figure": "cache_inferred/L%d" % lvl}, **plateau, cycles=round(c, 2), agrees=True))
    return out


def _bandwidth(g):
    out = []
    for kern in ("read", "write", "copy"):
        for t in (1, 2, 4):
            bw = round(8e9 * min(t, 3) / g.scale * (1 + g.rnd.uniform(-g.jitter, g.jitter)))
            out.append(dict({"type": "bandwidth", "kernel": kern, "isa": "sse2", "bytes": 64 << 20, "threads": t,
                             "node_from": 0, "node_to": 0,
                             "figure": "bandwidth/sweep/%s/sse2/%d/%d/0-0" % (kern, 64 << 20, t)},
                            **stats("bytes_per_s", bw, 0.02, 5)))
    return out


def _branch(g):
    c = g.j(9.5)
    return [dict({"type": "branch", "test": "random", "period": 2, "figure": "branch/random/2/-1/-1"},
                 **stats("cycles", round(c, 2), 0.03, 7), ns=round(c / g.ghz, 3), mispredict_rate=0.5, method="pmc")]


def _penalty(g):
    out = []
    for name, cyc, ref in (("l1d_miss_l2_hit", 6, "guide: ~6 cycles"), ("branch_mispredict", 17, "")):
        c = g.j(cyc)
        pen = dict(stats("cycles", round(c, 2), 0.03, 7), p10=None, p90=None, min=None, max=None)
        out.append(dict({"type": "penalty", "name": name, "figure": "penalty/" + name}, **pen,
                        ns=round(c / g.ghz, 3), method="difference", reference=ref))
    return out


def _cycle_accounting(g):
    return [{"type": "cycle_accounting", "bench": "pointer_chase_l3", "total_cycles": round(g.j(1e6)),
             "retiring_cycles": 100000, "stall_cycles": 880000, "counted_stall_cycles": 850000,
             "unaccounted_cycles": 30000,
             "terms": [{"event": "MEM_LOAD_RETIRED.LLC_UNSHARED_HIT", "count": 20000, "penalty": 40},
                       {"event": "MEM_LOAD_RETIRED.L2_HIT", "count": 5000, "penalty": 10}]}]


def _pebs(g):
    return [{"type": "pebs_latency", "row": "L3_unshared", "source": 1, "samples": 1000,
             "mean_cycles": round(g.j(45), 2), "histogram": [[32, 10], [64, 900], [128, 90]]}]


# ---- legacy keys of c2c's nested figures ---------------------------------------------------------------------

def _c2c_legacy(r):
    for k in ("hit", "hitm"):
        f = r.pop(k, None)
        if isinstance(f, dict):
            r["%s_ns" % k] = f["median"]
            for u in ("cycles", "tsc"):
                if u in f:
                    r["%s_%s" % (k, u)] = f[u]
            r["%s_cv" % k] = f["spread"]
    return r


def _c2c_modern(r):
    if "hit" in r or "hitm" in r:
        return r
    for k in ("hit", "hitm"):
        if "%s_ns" % k not in r:
            r[k] = None
            continue
        f = {"unit": "ns", "median": r.pop("%s_ns" % k)}
        for u in ("cycles", "tsc"):
            if "%s_%s" % (k, u) in r:
                f[u] = r.pop("%s_%s" % (k, u))
        f["spread"] = r.pop("%s_cv" % k, None)
        r[k] = f
    return r


def _legacy_cv(r):
    if "robust_cv" in r:
        r["cv"] = r["robust_cv"] * 1.5       # the old plain CV, a different (larger) number
    return r


def _lat_keys(unit):
    return {"median": unit, "min": "min_" + unit, "p10": "p10_" + unit, "p90": "p90_" + unit, "max": "max_" + unit,
            "n": "samples"}


_NO_QUANTILES = {"min": None, "p10": None, "p90": None, "max": None}


class RecordType:
    """One record type of the synthetic logs: what a full run writes of it (build(Gen) -> records, None: the
    full run has none), and how tools before the statistics key convention wrote it (docs/records.md,
    "Migration"): `unit` the figure's unit, `old` {new key: legacy key, or None where the legacy record had
    none}, `keep_unit` whether the legacy record kept "unit", `post` a last touch of the legacy record;
    `to_legacy` / `to_modern` replace the key moves where a record nests its figures (c2c)."""

    def __init__(self, build=None, unit=None, old=None, keep_unit=False, post=None, to_legacy=None, to_modern=None):
        self.build, self.unit, self.old, self.keep_unit, self.post = build, unit, old or {}, keep_unit, post
        self.to_legacy, self.to_modern = to_legacy, to_modern


# The one table: every record type the synthetic logs write or translate, in the order a full run writes them.
# A new record type is one row here (and a builder above): full_run, legacy and modern follow.
RECORD_TYPES = {
    "run": RecordType(lambda g: [run_record(brand=g.brand, cpus=g.cpus, numa=g.numa, seed=g.seed)]),
    "cpu": RecordType(lambda g: [{"type": "cpu", "apic_id": 0, "x2apic": False}]),
    "topology": RecordType(lambda g: [{"type": "topology", "packages": 1, "cores": g.cpus, "threads": 1}]),
    "memory": RecordType(lambda g: [{"type": "memory", "ranges": 3, "usable_bytes": (2 << 30) - (64 << 20)}]),
    "latency_sweep": RecordType(_sweep, "ns", dict(_lat_keys("ns"), spread="robust_cv"), post=_legacy_cv),
    "data_source": RecordType(_data_source, "ns", dict(_lat_keys("ns"), spread="robust_cv"), post=_legacy_cv),
    "c2c": RecordType(_c2c, to_legacy=_c2c_legacy, to_modern=_c2c_modern),
    "numa_latency": RecordType(_numa, "ns", dict(_lat_keys("ns"), spread="robust_cv"), post=_legacy_cv),
    "loaded_latency": RecordType(_loaded, "ns", dict(_lat_keys("ns"), spread="robust_cv"), post=_legacy_cv),
    "cache_inferred": RecordType(_cache_inferred, "ns", dict({k: None for k in STAT_KEYS}, median="ns")),
    "bandwidth": RecordType(_bandwidth, "bytes_per_s", dict(_lat_keys("bytes_per_s"), spread="cv")),
    "branch": RecordType(_branch, "cycles", dict(_NO_QUANTILES, median="cycles_per_branch", ns="ns_per_branch",
                                                 n="samples", spread="cv")),
    "penalty": RecordType(_penalty, "cycles", dict(_NO_QUANTILES, median="cycles", n="samples", spread="cv")),
    "cycle_accounting": RecordType(_cycle_accounting),
    "pmu_selftest": RecordType(lambda g: [{"type": "pmu_selftest", "status": "ok",
                                           "checks": [{"name": "fixed_ctr0_counts", "status": "ok", "detail": ""},
                                                      {"name": "pmi_delivery", "status": "ok", "detail": ""}]}]),
    "pebs_latency": RecordType(_pebs),
    "timer": RecordType(None, "tsc", dict(_lat_keys("tsc"), median="median_tsc", max=None, spread="cv",
                                          ns="median_ns"), keep_unit=True),
    # a record type no tool knows: the tools keep it as it is
    "future_record": RecordType(lambda g: [{"type": "future_record", "x": 1, "nested": {"y": [1, 2, 3]}}]),
}


def legacy(rec):
    """The record as tools before the statistics key convention wrote it (docs/records.md, "Migration"), by its
    RECORD_TYPES row."""
    r = dict(rec)
    row = RECORD_TYPES.get(r.get("type"))
    if row is None or "median" not in r and row.to_legacy is None:
        return r
    for k in ISSUE11:
        r.pop(k, None)
    if row.to_legacy:
        return row.to_legacy(r)
    unit = r.get("unit") if row.keep_unit else r.pop("unit")
    assert unit == row.unit, (r.get("type"), unit)
    for new, old in row.old.items():
        if new in r:
            v = r.pop(new)
            if old is not None and r.get("status") != "unavailable":   # legacy: no statistics at all
                r[old] = v
    return row.post(r) if row.post else r


def modern(rec):
    """The inverse of legacy(): a record of an older tool as the statistics key convention writes it (what the
    image writes now, less the issue 11 keys); a record already in the convention is returned as it is."""
    r = dict(rec)
    row = RECORD_TYPES.get(r.get("type"))
    if row is None or "median" in r:
        return r
    if row.to_modern:
        return row.to_modern(r)
    if row.unit is None or row.old.get("median") not in r:
        if row.unit is not None and r.get("status", "ok") != "ok":
            r.update(stats(row.unit, None, None))       # an unavailable figure: its unit and null statistics
        return r
    out = {"unit": row.unit}
    for new, old in row.old.items():
        if old is None:
            out[new] = 0 if new == "n" else None
        elif old in r:
            out[new] = r.pop(old)
    out.setdefault("spread", r.get("robust_cv", r.get("cv")))   # legacy latency: robust_cv, else cv
    if row.old.get("n", "") is None:                             # a derived figure: no samples, no interval
        out.update(ci_lo=None, ci_hi=None)
    for k in ("cv", "robust_cv"):
        r.pop(k, None)
    r.update(out)
    return r


def full_run(scale=1.0, seed=1, jitter=0.01, cpus=4, numa=2, brand=None, status_rows=None,
             extra_types=True, keys="new"):
    """A complete run's records (no end record): every RECORD_TYPES row's build(), in the table's order. scale
    multiplies latencies and divides bandwidths, so scale > 1 is a worse machine; jitter is the relative random
    noise per figure. extra_types: also the record type no tool knows. keys: "new" (docs/records.md) or
    "legacy" (each record through legacy())."""
    assert keys in ("new", "legacy"), keys
    g = Gen(scale, seed, jitter, cpus, numa, brand, status_rows)
    recs = []
    for t, row in RECORD_TYPES.items():
        if row.build is not None and (extra_types or t != "future_record"):
            recs += row.build(g)
    return [legacy(r) for r in recs] if keys == "legacy" else recs


def branch_sweep(scale=1.0, seed=1, jitter=0.01, keys="new", slow=None):
    """The branch benchmark's points as the image writes them (bench/branch.c rec_point): period null
    for cond_random, indirect_random and return_stack; targets on the indirect tests, depth on the
    return-stack test; each record names its figure branch/<test>/<period>/<targets>/<depth> with -1
    where not applicable. slow: {(test, period, targets, depth): factor} makes those points slower.
    25 points; with period null, the 7 indirect_random and 5 return_stack points shared a name per test."""
    rnd = random.Random(seed * 7919)
    pts = [("cond_predictable", 1, None, None), ("cond_random", None, None, None)]
    pts += [("pattern", p, None, None) for p in (1, 8, 128, 2048)]
    for t in (1, 2, 4, 8, 16, 32, 64):
        pts += [("indirect_random", None, t, None), ("indirect_cyclic", t, t, None)]
    pts += [("return_stack", None, None, d) for d in (1, 2, 4, 8, 16)]
    recs = []
    for i, (test, period, targets, depth) in enumerate(pts):
        c = (20 + 7 * i) * scale * (1 + rnd.uniform(-jitter, jitter))
        c *= (slow or {}).get((test, period, targets, depth), 1.0)
        r = {"type": "branch", "test": test, "period": period}
        if targets is not None:
            r["targets"] = targets
        if depth is not None:
            r["depth"] = depth
        na = lambda v: -1 if v is None else v   # noqa: E731
        r["figure"] = "branch/%s/%d/%d/%d" % (test, na(period), na(targets), na(depth))
        r.update(stats("cycles", round(c, 3), 0.02, 5), ns=round(c / 2.933, 3), mispredict_rate=0.5, method="x")
        recs.append(legacy(r) if keys == "legacy" else r)
    return recs


def minimal_run(seed=1):
    return [run_record(seed=seed), {"type": "cpu", "apic_id": 0}]


def full_log(noise=True, status="ok", **kw):
    return serial(run_lines(full_run(**kw), status), noise=noise)
