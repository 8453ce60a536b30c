"""Synthetic pmubench serial logs with real record counts and CRC-32s, for the host-tool tests.

Records are written with the statistics keys of docs/records.md ("unit", "median", "p10", ..., "n",
"spread"); legacy() turns one into its twin as tools before that convention wrote it, and
full_run(keys="legacy") writes a whole run that way. The Table 2 reference values are not copied
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


LATENCY_TYPES = ("latency_sweep", "data_source", "numa_latency", "loaded_latency")
ISSUE11 = ("figure", "ci_lo", "ci_hi", "converged", "quality", "quality_reason")


def legacy(rec):
    """The record as tools before the statistics key convention wrote it (docs/records.md, "Migration")."""
    r = dict(rec)
    t = r.get("type")
    if "median" not in r and t != "c2c":
        return r
    for k in ISSUE11:
        r.pop(k, None)

    def move(pairs):
        for new, old in pairs:
            if new in r:
                v = r.pop(new)
                if old is not None and r.get("status") != "unavailable":   # legacy: no statistics at all
                    r[old] = v
    if t in LATENCY_TYPES:
        unit = r.pop("unit")
        assert unit == "ns"
        move([("median", "ns"), ("min", "min_ns"), ("p10", "p10_ns"), ("p90", "p90_ns"), ("max", "max_ns"),
              ("n", "samples"), ("spread", "robust_cv")])
        if "robust_cv" in r:
            r["cv"] = r["robust_cv"] * 1.5       # the old plain CV, a different (larger) number
    elif t == "cache_inferred":
        r.pop("unit")
        move([("median", "ns"), ("min", None), ("p10", None), ("p90", None), ("max", None), ("n", None),
              ("spread", None)])
    elif t == "timer":                           # "unit": "tsc" was already there
        move([("median", "median_tsc"), ("min", "min_tsc"), ("p10", "p10_tsc"), ("p90", "p90_tsc"),
              ("max", None), ("n", "samples"), ("spread", "cv"), ("ns", "median_ns")])
    elif t == "bandwidth":
        r.pop("unit")
        move([("median", "bytes_per_s"), ("min", "min_bytes_per_s"), ("p10", "p10_bytes_per_s"),
              ("p90", "p90_bytes_per_s"), ("max", "max_bytes_per_s"), ("n", "samples"), ("spread", "cv")])
    elif t == "penalty":
        r.pop("unit")
        move([("median", "cycles"), ("min", None), ("p10", None), ("p90", None), ("max", None),
              ("n", "samples"), ("spread", "cv")])
    elif t == "branch":
        r.pop("unit")
        move([("median", "cycles_per_branch"), ("ns", "ns_per_branch"), ("min", None), ("p10", None),
              ("p90", None), ("max", None), ("n", "samples"), ("spread", "cv")])
    elif t == "c2c":
        for k in ("hit", "hitm"):
            f = r.pop(k, None)
            if isinstance(f, dict):
                r["%s_ns" % k] = f["median"]
                for u in ("cycles", "tsc"):
                    if u in f:
                        r["%s_%s" % (k, u)] = f[u]
                r["%s_cv" % k] = f["spread"]
    return r


def modern(rec):
    """The inverse of legacy(): a record of an older tool as the statistics key convention writes it
    (what the image writes now, less the issue 11 keys); a record already in the convention is returned
    as it is."""
    r = dict(rec)
    t = r.get("type")
    nulls = {"p10": None, "p90": None, "min": None, "max": None}

    def move(unit, pairs, spread_keys=("cv",)):
        out = {"unit": unit}
        for old, new in pairs:
            if old in r:
                out[new] = r.pop(old)
        sp = [r.pop(k) for k in spread_keys if k in r]
        out["spread"] = sp[0] if sp else None
        for k in ("cv", "robust_cv"):
            r.pop(k, None)
        r.update(out)
    if "median" in r or t == "c2c" and ("hit" in r or "hitm" in r):
        return r
    if t in LATENCY_TYPES:
        if r.get("status", "ok") != "ok" and "ns" not in r:
            r.update(stats("ns", None, None))
            return r
        move("ns", [("ns", "median"), ("min_ns", "min"), ("p10_ns", "p10"), ("p90_ns", "p90"), ("max_ns", "max"),
                    ("samples", "n")], ("robust_cv", "cv"))
    elif t == "cache_inferred" and "ns" in r:
        r.update(dict(stats("ns", None, None), median=r.pop("ns")))
    elif t == "timer" and "median_tsc" in r:
        move("tsc", [("median_tsc", "median"), ("min_tsc", "min"), ("p10_tsc", "p10"), ("p90_tsc", "p90"),
                     ("samples", "n"), ("median_ns", "ns")])
    elif t == "bandwidth" and "bytes_per_s" in r:
        move("bytes_per_s", [("bytes_per_s", "median"), ("min_bytes_per_s", "min"), ("p10_bytes_per_s", "p10"),
                             ("p90_bytes_per_s", "p90"), ("max_bytes_per_s", "max"), ("samples", "n")])
    elif t == "penalty" and "cycles" in r:
        r.update(nulls)
        move("cycles", [("cycles", "median"), ("samples", "n")])
    elif t == "branch" and "cycles_per_branch" in r:
        r.update(nulls)
        move("cycles", [("cycles_per_branch", "median"), ("ns_per_branch", "ns"), ("samples", "n")])
    elif t == "c2c":
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


def full_run(scale=1.0, seed=1, jitter=0.01, cpus=4, numa=2, brand=None, status_rows=None,
             extra_types=True, keys="new"):
    """A complete run's records (no end record). scale multiplies latencies and divides bandwidths,
    so scale > 1 is a worse machine; jitter is the relative random noise per figure. Every Table 2
    row measures 5% above its reference value (the middle of a range). keys: "new" (docs/records.md)
    or "legacy" (each record through legacy())."""
    rnd = random.Random(seed)

    def j(v):
        return v * scale * (1 + rnd.uniform(-jitter, jitter))

    ghz = 2.933
    recs = [run_record(brand=brand or "Intel(R) Xeon(R) CPU X5570 @ 2.93GHz", cpus=cpus, numa=numa, seed=seed)]
    recs.append({"type": "cpu", "apic_id": 0, "x2apic": False})
    recs.append({"type": "topology", "packages": 1, "cores": cpus, "threads": 1})
    recs.append({"type": "memory", "ranges": 3, "usable_bytes": (2 << 30) - (64 << 20)})

    def lat(cyc, spread=0.01, n=15):
        """The latency figure keys for a median of `cyc` core cycles (core/TSC ratio 1)."""
        ns = round(cyc / ghz, 3)
        return dict(stats("ns", ns, spread, n), tsc=round(cyc, 2), cycles=round(cyc, 2),
                    cycles_method="core_tsc_ratio:aperf_mperf", core_tsc_ratio=1.0)
    # latency sweep: plateaus at L1 4c, L2 10c, L3 40c, DRAM 60ns.
    for shift in range(12, 28):
        size = 1 << shift
        cyc = 4 if size <= 32768 else 10 if size <= 262144 else 40 if size <= 8 << 20 else 60 * ghz
        recs.append(dict({"type": "latency_sweep", "bytes": size, "page_bytes": 4096, "mode": "random",
                          "figure": "latency_sweep/random/4096/%d" % size}, **lat(j(cyc))))
    for src, lo, hi, unit, text, guide in table2_rows():
        ref = {"reference": text, "reference_lo": lo, "reference_hi": hi, "reference_unit": unit, "guide": guide}
        fig = {"figure": "data_source/" + src}
        st = (status_rows or {}).get(src, "ok")
        if st != "ok":
            recs.append(dict({"type": "data_source", "source": src, "status": "unavailable",
                              "reason": "single socket"}, **fig, **stats("ns", None, None),
                             quality="unavailable", quality_reason="single socket", method="pointer_chase", **ref))
            continue
        mid = (lo + hi) / 2 * 1.05
        c = j(mid if unit == "cycles" else mid * ghz)
        recs.append(dict({"type": "data_source", "source": src, "status": "ok"}, **fig, **lat(c, 0.02),
                         method="pointer_chase", **ref))
    for a in range(cpus):
        for b in range(cpus):
            if a != b:
                recs.append({"type": "c2c", "from_cpu": a, "to_cpu": b, "status": "ok",
                             "hit": dict(lat(j(25 + a + b) * ghz, 0.03, 5), figure="c2c/%d-%d/hit" % (a, b)),
                             "hitm": dict(lat(j(30 + 2 * abs(a - b)) * ghz, 0.04, 5),
                                          figure="c2c/%d-%d/hitm" % (a, b))})
    for a in range(numa):
        for b in range(numa):
            recs.append(dict({"type": "numa_latency", "from_node": a, "to_node": b,
                              "figure": "numa_latency/%d-%d" % (a, b)}, **lat(j(62 if a == b else 105) * ghz)))
    for d in (0, 100, 1000):
        recs.append(dict({"type": "loaded_latency", "delay": d, "bytes_per_s": round(20e9 / scale / (1 + d / 200)),
                          "figure": "loaded_latency/%d" % d}, **lat(j(62 + 100 / (1 + d / 100)) * ghz, 0.05)))
    for lvl, b in ((1, 32768), (2, 262144), (3, 8 << 20)):
        c = j({1: 4, 2: 10, 3: 40}[lvl])
        plateau = dict(stats("ns", None, None), median=round(c / ghz, 3))   # derived: no samples of its own
        recs.append(dict({"type": "cache_inferred", "level": lvl, "bytes": b, "cpuid_bytes": b,
                          "figure": "cache_inferred/L%d" % lvl}, **plateau, cycles=round(c, 2), agrees=True))
    for kern in ("read", "write", "copy"):
        for t in (1, 2, 4):
            bw = round(8e9 * min(t, 3) / scale * (1 + rnd.uniform(-jitter, jitter)))
            recs.append(dict({"type": "bandwidth", "kernel": kern, "isa": "sse2", "bytes": 64 << 20, "threads": t,
                              "node_from": 0, "node_to": 0,
                              "figure": "bandwidth/sweep/%s/sse2/%d/%d/0-0" % (kern, 64 << 20, t)},
                             **stats("bytes_per_s", bw, 0.02, 5)))
    c = j(9.5)
    recs.append(dict({"type": "branch", "test": "random", "period": 2, "figure": "branch/random/2/-1/-1"},
                     **stats("cycles", round(c, 2), 0.03, 7), ns=round(c / ghz, 3), mispredict_rate=0.5,
                     method="pmc"))
    for name, cyc, ref in (("l1d_miss_l2_hit", 6, "guide: ~6 cycles"), ("branch_mispredict", 17, "")):
        c = j(cyc)
        pen = dict(stats("cycles", round(c, 2), 0.03, 7), p10=None, p90=None, min=None, max=None)
        recs.append(dict({"type": "penalty", "name": name, "figure": "penalty/" + name}, **pen,
                         ns=round(c / ghz, 3), method="difference", reference=ref))
    recs.append({"type": "cycle_accounting", "bench": "pointer_chase_l3", "total_cycles": round(j(1e6)),
                 "retiring_cycles": 100000, "stall_cycles": 880000, "counted_stall_cycles": 850000,
                 "unaccounted_cycles": 30000,
                 "terms": [{"event": "MEM_LOAD_RETIRED.LLC_UNSHARED_HIT", "count": 20000, "penalty": 40},
                           {"event": "MEM_LOAD_RETIRED.L2_HIT", "count": 5000, "penalty": 10}]})
    recs.append({"type": "pmu_selftest", "status": "ok",
                 "checks": [{"name": "fixed_ctr0_counts", "status": "ok", "detail": ""},
                            {"name": "pmi_delivery", "status": "ok", "detail": ""}]})
    recs.append({"type": "pebs_latency", "row": "L3_unshared", "source": 1, "samples": 1000,
                 "mean_cycles": round(j(45), 2), "histogram": [[32, 10], [64, 900], [128, 90]]})
    if extra_types:
        recs.append({"type": "future_record", "x": 1, "nested": {"y": [1, 2, 3]}})
    if keys == "legacy":
        recs = [legacy(r) for r in recs]
    else:
        assert keys == "new", keys
    return recs


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
