"""pmb.figures: the one reader of a record's statistics (docs/records.md, "Statistics keys" and
"Migration"): the key convention first, legacy keys second, the same figures either way."""
import glob
import os

import pytest

import logs
from pmb import cli, db, figures
from pmb.figures import count, part, reference, spread, stat, value
from pmb.parse import LogError, parse_log, read_log

FIX = os.path.join(os.path.dirname(os.path.abspath(__file__)), "fixtures")

# One record of each type carrying a figure, written both ways by hand: (new keys, legacy twin).
TWINS = {
    "data_source": (
        {"type": "data_source", "source": "L2", "status": "ok", "figure": "data_source/L2", "unit": "ns",
         "median": 3.5, "p10": 3.4, "p90": 3.7, "min": 3.3, "max": 4.0, "n": 9, "spread": 0.012,
         "ci_lo": 3.45, "ci_hi": 3.55, "converged": True, "quality": "ok", "tsc": 10.5, "cycles": 11.2,
         "cycles_method": "core_tsc_ratio:aperf_mperf", "core_tsc_ratio": 1.0667,
         "reference": "~10 cycles", "reference_lo": 10, "reference_hi": 10, "reference_unit": "cycles"},
        {"type": "data_source", "source": "L2", "status": "ok", "tsc": 10.5, "ns": 3.5, "cycles": 11.2,
         "cv": 0.05, "robust_cv": 0.012, "samples": 9, "min_ns": 3.3, "p10_ns": 3.4, "p90_ns": 3.7,
         "max_ns": 4.0, "cycles_method": "core_tsc_ratio:aperf_mperf", "core_tsc_ratio": 1.0667,
         "reference": "~10 cycles", "reference_lo": 10, "reference_hi": 10, "reference_unit": "cycles"}),
    "latency_sweep": (
        {"type": "latency_sweep", "bytes": 4096, "page_bytes": 4096, "mode": "random", "unit": "ns",
         "median": 1.2, "p10": 1.1, "p90": 1.3, "min": 1.0, "max": 1.5, "n": 7, "spread": 0.004, "tsc": 3.6,
         "cycles": 4.0},
        {"type": "latency_sweep", "bytes": 4096, "page_bytes": 4096, "mode": "random", "tsc": 3.6, "ns": 1.2,
         "cycles": 4.0, "cv": 0.02, "robust_cv": 0.004, "samples": 7, "min_ns": 1.0, "p10_ns": 1.1,
         "p90_ns": 1.3, "max_ns": 1.5}),
    "numa_latency": (
        {"type": "numa_latency", "from_node": 0, "to_node": 1, "status": "ok", "unit": "ns", "median": 105.0,
         "n": 30, "spread": 0.1, "tsc": 315.0, "cycles": 330.0},
        {"type": "numa_latency", "from_node": 0, "to_node": 1, "status": "ok", "tsc": 315.0, "ns": 105.0,
         "cycles": 330.0, "cv": 2.1, "robust_cv": 0.1, "samples": 30}),
    "loaded_latency": (
        {"type": "loaded_latency", "delay": 100, "streamers": 3, "bytes_per_s": 9.5e9, "status": "ok",
         "unit": "ns", "median": 127.0, "n": 39, "spread": 0.05, "tsc": 381.0, "cycles": 400.0},
        {"type": "loaded_latency", "delay": 100, "streamers": 3, "bytes_per_s": 9.5e9, "status": "ok",
         "tsc": 381.0, "ns": 127.0, "cycles": 400.0, "cv": 5.7, "robust_cv": 0.05, "samples": 39}),
    "cache_inferred": (
        {"type": "cache_inferred", "level": 2, "bytes": 262144, "cpuid_bytes": 262144, "unit": "ns",
         "median": 3.4, "p10": None, "p90": None, "min": None, "max": None, "n": 0, "spread": None,
         "ci_lo": None, "ci_hi": None, "cycles": 10.0, "agrees": True},
        {"type": "cache_inferred", "level": 2, "bytes": 262144, "cpuid_bytes": 262144, "ns": 3.4,
         "cycles": 10.0, "agrees": True}),
    "timer": (
        {"type": "timer", "serialize": "lfence", "unit": "tsc", "median": 62, "p10": 60, "p90": 62, "min": 58,
         "max": 70, "n": 1001, "spread": 0.1, "ns": 26.9},
        {"type": "timer", "serialize": "lfence", "unit": "tsc", "median_tsc": 62, "min_tsc": 58, "p10_tsc": 60,
         "p90_tsc": 62, "cv": 0.1, "samples": 1001, "median_ns": 26.9}),
    "bandwidth": (
        {"type": "bandwidth", "kernel": "read", "isa": "sse2", "bytes": 1 << 26, "threads": 2, "node_from": 0,
         "node_to": 1, "unit": "bytes_per_s", "median": 8e9, "p10": 7.5e9, "p90": 8.2e9, "min": 7e9,
         "max": 8.3e9, "n": 5, "spread": 0.02},
        {"type": "bandwidth", "kernel": "read", "isa": "sse2", "bytes": 1 << 26, "threads": 2, "node_from": 0,
         "node_to": 1, "bytes_per_s": 8e9, "p10_bytes_per_s": 7.5e9, "p90_bytes_per_s": 8.2e9,
         "min_bytes_per_s": 7e9, "max_bytes_per_s": 8.3e9, "samples": 5, "cv": 0.02}),
    "penalty": (
        {"type": "penalty", "name": "branch_mispredict", "unit": "cycles", "median": 17.0, "p10": None,
         "p90": None, "min": None, "max": None, "n": 7, "spread": 0.09, "ns": 5.8},
        {"type": "penalty", "name": "branch_mispredict", "cycles": 17.0, "ns": 5.8, "cv": 0.09, "samples": 7}),
    "branch": (
        {"type": "branch", "test": "cond_random", "period": 1, "unit": "cycles", "median": 9.5, "p10": 9.4,
         "p90": 9.7, "min": 9.3, "max": 9.9, "n": 7, "spread": 0.03, "ns": 3.2},
        {"type": "branch", "test": "cond_random", "period": 1, "cycles_per_branch": 9.5, "ns_per_branch": 3.2,
         "cv": 0.03, "samples": 7}),
    "c2c": (
        {"type": "c2c", "from_cpu": 0, "to_cpu": 1, "status": "ok",
         "hit": {"figure": "c2c/0-1/hit", "unit": "ns", "median": 75.0, "n": 3, "spread": 0.05, "tsc": 173.0,
                 "cycles": 1221.0},
         "hitm": {"figure": "c2c/0-1/hitm", "unit": "ns", "median": 76.5, "n": 3, "spread": 0.002,
                  "tsc": 176.0, "cycles": 1241.0}},
        {"type": "c2c", "from_cpu": 0, "to_cpu": 1, "status": "ok", "hit_ns": 75.0, "hitm_ns": 76.5,
         "hit_cycles": 1221.0, "hitm_cycles": 1241.0, "hit_tsc": 173.0, "hitm_tsc": 176.0, "hit_cv": 0.05,
         "hitm_cv": 0.002}),
}


class _Run:
    def __init__(self, records):
        self.records = records


def _figs(recs):
    return {n: (f.value, f.unit, f.spread, f.better) for n, f in figures.extract(_Run(recs)).items()}


@pytest.mark.parametrize("t", sorted(TWINS))
def test_new_record_gives_the_same_figures_as_its_legacy_twin(t):
    new, old = TWINS[t]
    a, b = _figs([new]), _figs([old])
    assert a == b
    if t != "timer":          # timer records are not history figures
        assert a, t
    for unit in ("ns", "cycles", "tsc", "bytes_per_s"):
        assert value(new, unit) == value(old, unit), (t, unit)
    # the new records carry statistics some legacy ones never had (branch p10, timer max): compare what both have
    for name in ("p10", "p90", "min", "max"):
        for unit in ("ns", "cycles", "tsc", "bytes_per_s"):
            if stat(old, name, unit) is not None:
                assert stat(new, name, unit) == stat(old, name, unit), (t, name, unit)
    assert spread(new) == spread(old)
    assert count(old) is None or count(new) == count(old)


def test_the_twins_are_the_migration_table():
    """logs.legacy / logs.modern implement docs/records.md's table both ways on the hand-built twins."""
    for t, (new, old) in TWINS.items():
        assert _figs([logs.legacy(new)]) == _figs([old]), t
        assert _figs([logs.modern(old)]) == _figs([new]), t


def test_value_rule():
    new = TWINS["data_source"][0]
    assert value(new, "ns") == 3.5                 # "median" in the record's unit
    assert value(new, "cycles") == 11.2            # a conversion key: only the median is converted
    assert value(new, "tsc") == 10.5
    assert value(new, "bytes_per_s") is None
    assert stat(new, "p10", "ns") == 3.4 and stat(new, "p10", "cycles") is None
    timer = TWINS["timer"][1]
    assert timer["unit"] == "tsc" and value(timer, "tsc") == 62   # legacy timer: "unit" but "median_tsc"
    assert value(timer, "ns") == 26.9 and stat(timer, "min", "tsc") == 58
    assert stat(TWINS["penalty"][0], "p10", "cycles") is None     # a difference has no quantiles
    assert value(None, "ns") is None and spread(None) is None and count({}) is None


def test_spread_is_the_robust_fraction_new_then_legacy():
    assert spread({"spread": 0.01, "robust_cv": 0.02, "cv": 0.03}) == 0.01
    assert spread({"robust_cv": 0.02, "cv": 0.03}) == 0.02     # legacy latency: robust_cv is what "spread" became
    assert spread({"cv": 0.03}) == 0.03
    assert spread({"spread": None}) is None                   # an unavailable figure


def test_unavailable_records_give_no_figures():
    new = {"type": "data_source", "source": "remote_L3", "status": "unavailable", "reason": "one socket",
           "unit": "ns", "median": None, "p10": None, "p90": None, "min": None, "max": None, "n": 0,
           "spread": None, "reference": "~100-300 cycles", "reference_lo": 100, "reference_hi": 300,
           "reference_unit": "cycles"}
    assert _figs([new]) == {} and _figs([logs.legacy(new)]) == {}
    failed = {"type": "c2c", "from_cpu": 0, "to_cpu": 1, "status": "failed", "hit": None, "hitm": None}
    assert part(failed, "hit") is None and _figs([failed]) == {}


def test_c2c_part_reads_nested_and_flat():
    new, old = TWINS["c2c"]
    assert value(part(new, "hitm"), "ns") == value(part(old, "hitm"), "ns") == 76.5
    assert spread(part(new, "hit")) == spread(part(old, "hit")) == 0.05


def test_reference_is_read_from_the_record():
    assert reference(TWINS["data_source"][0]) == (10, 10, "cycles", "~10 cycles")
    r = {"reference_lo": 100, "reference_hi": 300, "reference_unit": "cycles"}
    assert reference(r) == (100, 300, "cycles", "~100-300 cycles")
    assert reference({"source": "L1"}) is None


@pytest.mark.parametrize("seed", [1, 7])
def test_synthetic_runs_give_the_same_figures_both_ways(seed):
    new = parse_log(logs.full_log(seed=seed))
    old = parse_log(logs.full_log(seed=seed, keys="legacy"))
    a = figures.extract(new)
    assert len(a) > 100 and _figs(new.records) == _figs(old.records)
    assert all(f.spread is not None for n, f in a.items() if n.startswith(("data_source/", "c2c/", "bandwidth/")))


def _fixture_logs():
    out = []
    for p in sorted(glob.glob(os.path.join(FIX, "*.log"))):
        try:
            out.append((os.path.basename(p), read_log(p)))
        except LogError:
            pass
    return out


@pytest.mark.parametrize("name,run", _fixture_logs(), ids=[n for n, _ in _fixture_logs()])
def test_real_logs_give_the_same_figures_in_either_convention(name, run):
    """Whichever convention the checked-in log of the real image uses, its twin in the other reads the same."""
    twin = [logs.legacy(r) if "median" in r or isinstance(r.get("hit"), dict) else logs.modern(r)
            for r in run.records]
    assert _figs(run.records) == _figs(twin)


def test_real_log_references_come_from_its_records():
    run = read_log(os.path.join(FIX, "qemu-nehalem-smp4-numa2-all.log"))
    rows = run.by_type("data_source")
    assert rows and all(reference(r) for r in rows)
    for r in rows:
        lo, hi, unit, text = reference(r)
        assert 0 < lo <= hi and unit in ("cycles", "ns") and text.startswith("~")
    assert logs.table2_rows() == [(r["source"], r["reference_lo"], r["reference_hi"], r["reference_unit"],
                                   r["reference"], r.get("guide", "")) for r in rows]


def test_history_default_figures_follow_the_records_reference_unit(tmp_path, capsys):
    dbp = str(tmp_path / "h.sqlite")
    c = db.connect(dbp)
    recs = logs.full_run()
    for r in recs:
        if r["type"] == "data_source" and r["source"] == "L1":
            r["reference_unit"] = "ns"
    db.ingest(c, parse_log("\n".join(logs.run_lines(recs))), "tcg")
    assert cli.main(["history", "--db", dbp]) == 0
    head = capsys.readouterr().out.splitlines()[0]
    cols = [x.strip() for x in head.split("|")[6:-1]]
    assert cols[0] == "data_source/L1/ns"
    assert cols == ["data_source/%s/%s" % (s, "ns" if s == "L1" else u) for s, _, _, u, _, _ in logs.table2_rows()]


def test_any_record_with_the_statistics_keys_is_a_figure():
    """figures.extract reads a record type it has never heard of: <figure>/<unit>, its ns/cycles conversions,
    nested figures one level down, bytes_per_s as higher-is-better; a record without "figure", "unit" or a
    numeric median gives nothing."""
    recs = [logs.run_record(),
            dict({"type": "zz_new", "figure": "zz_new/a"}, **logs.stats("cycles", 20.0, 0.01), ns=6.8, tsc=14.0,
                 quality="noisy", quality_reason="why"),
            {"type": "zz_pair", "x": dict({"figure": "zz_pair/x"}, **logs.stats("ns", 5.0, 0.02))},
            dict({"type": "zz_bw", "figure": "zz_bw/read"}, **logs.stats("bytes_per_s", 1e9, 0.02)),
            dict({"type": "zz_unmeasured", "figure": "zz_unmeasured/a"}, **logs.stats("cycles", None, None)),
            dict({"type": "zz_nameless"}, **logs.stats("cycles", 3.0, 0.01)),
            {"type": "crosscheck", "agrees": False, "quantity": "q", "suspect": ["zz_pair/x"]}]
    figs = figures.extract(parse_log("\n".join(logs.run_lines(recs))))
    assert set(figs) == {"zz_new/a/cycles", "zz_new/a/ns", "zz_pair/x/ns", "zz_bw/read/bytes_per_s"}
    a = figs["zz_new/a/cycles"]
    assert (a.value, a.unit, a.spread, a.better, a.quality, a.quality_reason) == (20.0, "cycles", 0.01, "lower",
                                                                                   "noisy", "why")
    assert figs["zz_new/a/ns"].value == 6.8 and figs["zz_new/a/ns"].unit == "ns"
    assert figs["zz_pair/x/ns"].quality is None     # no verdict in the record: a cross-check marks only verdicts
    bw = figs["zz_bw/read/bytes_per_s"]
    assert (bw.unit, bw.better) == ("bytes/s", "higher")


def test_cycles_suspect_marks_the_cycles_figure_only():
    """A crosscheck that blames a clock conversion ("cycles_suspect", docs/records.md) makes the figure's
    <figure>/cycles suspect and leaves its own unit's verdict alone; a figure it does not list keeps both."""
    pt = {"type": "latency_sweep", "bytes": 1024, "page_bytes": 2097152, "mode": "random",
          "figure": "latency_sweep/random/2097152/1024", "unit": "ns", "median": 1.927, "n": 75,
          "quality": "ok", "tsc": 4.047, "cycles": 4.81,
          "cycles_method": "core_tsc_ratio:clock_chains, after each replicate (median)"}
    other = dict(pt, bytes=1216, figure="latency_sweep/random/2097152/1216")
    xc = {"type": "crosscheck", "quantity": "core clock vs L1 load latency (an integer number of cycles)",
          "a": "latency_plateau/random/2097152/0", "b": "clock/cpu2/clock_chains", "a_value": 4.81,
          "b_value": 5, "agrees": False, "suspect": [], "cycles_suspect": [pt["figure"]]}
    sus = figures.crosscheck_suspects([pt, other, xc])
    assert figures.final_quality(pt, sus) == ("ok", None)
    q, why = figures.final_quality(pt, sus, "cycles")
    assert q == "suspect" and "core clock vs L1 load latency" in why
    assert figures.final_quality(other, sus, "cycles") == ("ok", None)
    out = {}
    figures.generic(out, pt, sus)
    assert out[pt["figure"] + "/cycles"].quality == "suspect"
    assert out[pt["figure"] + "/ns"].quality == "ok"
    # a long list goes on in crosscheck_cycles records
    more = {"type": "crosscheck_cycles", "quantity": xc["quantity"], "a": xc["a"], "b": xc["b"],
            "cycles_suspect": [other["figure"]]}
    sus = figures.crosscheck_suspects([pt, other, xc, more])
    assert figures.final_quality(other, sus, "cycles")[0] == "suspect"
    assert figures.final_quality(other, sus) == ("ok", None)
    # an agreeing check marks nothing
    sus = figures.crosscheck_suspects([pt, dict(xc, agrees=True)])
    assert figures.final_quality(pt, sus, "cycles") == ("ok", None)
