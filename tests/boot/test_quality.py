"""Uncertainty, verdicts and cross-checks (issue 11) on the real image under QEMU TCG: every measured figure
carries n, a 95 % CI of its median and a quality verdict; cross-check records are well formed and mark what
they say they mark; the summary record counts exactly what the records say. Under TCG the numbers mean
little; the verdicts and the bookkeeping must still be right."""
import math
import re

import pytest

from conftest import boot

QUALITIES = ("ok", "noisy", "suspect", "unavailable")
STATS = ("unit", "median", "p10", "p90", "min", "max", "n", "spread", "ci_lo", "ci_hi")


def figures(run):
    """Every record that publishes a figure: it names it in "figure" (c2c nests two)."""
    out = []
    for r in run.records:
        if "figure" in r:
            out.append(r)
        for k in ("hit", "hitm"):
            if isinstance(r.get(k), dict) and "figure" in r[k]:
                out.append(r[k])
    return out


def num(v):
    return isinstance(v, (int, float)) and not isinstance(v, bool) and math.isfinite(v)


@pytest.fixture(scope="module")
def booted():
    return boot(cpu="Nehalem", smp=2, mem="1G",
                args="bench=timer,latency,c2c,numa_latency,loaded_latency,penalty,branch,cycle_accounting",
                timeout=240)


def test_every_figure_has_n_ci_and_quality(booted):
    figs = figures(booted.run)
    assert len(figs) > 50
    names = set()
    for f in figs:
        for k in STATS + ("figure", "converged", "quality"):
            assert k in f, (k, f.get("figure"))
        assert f["figure"] not in names, "figure names are unique in a run: " + f["figure"]
        names.add(f["figure"])
        assert f["quality"] in QUALITIES
        if f["quality"] != "ok":
            assert f["quality_reason"], f["figure"]
        else:
            assert "quality_reason" not in f
        if f["quality"] == "unavailable":
            assert f["median"] is None and f["n"] == 0
            continue
        if f["median"] is None:
            # Measured but no value came out (a cache level whose knee was not found): never ok or noisy.
            assert f["quality"] == "suspect" and f["n"] == 0, f["figure"]
            continue
        assert num(f["median"]), f["figure"]
        if f["figure"].startswith(("latency_plateau/", "cache_inferred/")):
            # A derived figure: n is the sweep points it comes from, its interval that of their medians, its
            # verdict the worst of theirs; never ok from no point at all.
            assert f["n"] >= 1 and f["ci_lo"] <= f["median"] <= f["ci_hi"], f["figure"]
            assert f["min"] <= f["ci_lo"] and f["ci_hi"] <= f["max"], f["figure"]
            assert f["p10"] is None and f["p90"] is None and f["spread"] is None, f["figure"]
            continue
        if f["n"] > 0:
            # A sampled figure: its interval brackets its median and lies inside the samples, but for the
            # allowance it states (the readings' clock step, the overhead's interval, a conversion's uncertainty).
            assert f["ci_lo"] <= f["median"] <= f["ci_hi"], f["figure"]
            lo, hi = f.get("ci_allow_lo", 0), f.get("ci_allow_hi", 0)
            assert num(lo) and num(hi) and lo >= 0 and hi >= 0, f["figure"]
            if num(f["min"]):
                eps = 1e-9 * abs(f["median"])  # the allowance is subtracted, then scaled: rounding only
                assert f["min"] - lo - eps <= f["ci_lo"] and f["ci_hi"] <= f["max"] + hi + eps, f["figure"]
                assert f["min"] <= f["p10"] <= f["median"] <= f["p90"] <= f["max"], f["figure"]
            assert num(f["spread"]) and f["spread"] >= 0
            if f["n"] < 6:
                assert f["quality"] != "ok", f["figure"]  # no 95 % interval below 6 samples
        else:
            assert f["ci_lo"] is None and f["ci_hi"] is None, f["figure"]


def test_noisy_means_the_interval_is_wider_than_the_quick_target(booted):
    run = booted.run.run
    assert run["profile"] == "quick"
    for f in figures(booted.run):
        if f["quality"] == "ok" and f["n"] >= 6 and not f["figure"].startswith("timer/") and num(f["ci_lo"]):
            half = (f["ci_hi"] - f["ci_lo"]) / 2
            assert half <= 0.05 * abs(f["median"]) * (1 + 1e-9), f["figure"]
        if f["quality"] == "noisy":
            # one of the documented reasons (docs/measurement.md, "Verdicts"): the interval, too few samples
            # for one, the stop rule that did not converge, the profile's minimum n, a derived figure's points
            why = f["quality_reason"]
            assert ("CI" in why or "too few" in why or "the profile's minimum" in why
                    or "figures it comes from not ok" in why), (f["figure"], why)
        if f["quality"] == "ok" and not f["figure"].startswith(("timer/", "latency_plateau/", "cache_inferred/")):
            # ok needs a converged stop rule and the quick profile's minimum of 7 samples
            assert f["converged"] is True and f["n"] >= 7, f["figure"]


def test_penalties_never_negative_unless_suspect(booted):
    pens = booted.run.by_type("penalty")
    assert pens
    for p in pens:
        if p["quality"] in ("ok", "noisy"):
            assert p["median"] > 0, p["name"]
            assert p["ci_lo"] > 0, p["name"]
        if num(p.get("median")) and p["median"] <= 0:
            assert p["quality"] == "suspect"
    # The fill-buffer hit is not measured (no single penalty exists) and says why.
    lfb = [p for p in pens if p["name"] == "l1d_miss_hit_lfb"]
    assert len(lfb) == 1 and lfb[0]["quality"] == "unavailable" and "in-flight" in lfb[0]["quality_reason"]
    # Cycle accounting never uses a suspect penalty: each such term is listed as dropped, with the reason.
    suspect = {p["name"] for p in pens if p["quality"] == "suspect"}
    for ca in booted.run.by_type("cycle_accounting"):
        for t in ca.get("terms") or []:
            if t["penalty_name"] in suspect:
                assert t["penalty"] is None and t["dropped"].startswith("suspect: ")


def test_crosschecks_are_well_formed(booted):
    xcs = booted.run.by_type("crosscheck")
    assert xcs
    figs = {f["figure"]: f for f in figures(booted.run)}
    for x in xcs:
        for k in ("quantity", "a", "b", "a_value", "b_value", "unit", "ratio", "tolerance", "agrees", "suspect"):
            assert k in x, (k, x)
        if x["agrees"] is None:
            assert x["reason"] and x["suspect"] == []
            continue
        assert x["ratio"] == pytest.approx(x["a_value"] / x["b_value"], rel=1e-9)
        assert x["agrees"] == (abs(x["ratio"] - 1) <= x["tolerance"])
        if x["agrees"]:
            assert x["suspect"] == []
        else:
            # The figures of a disagreeing pair are marked (only the blamed one when the tool can say which
            # method is wrong); a pair of calibrations (clock/..., run/tsc_hz/...) marks no figure, nor does a
            # check that blames a conversion to cycles (the L1 clock check: the figures' cycles are listed under
            # "cycles_suspect", their own figures hold).
            if not x["suspect"]:
                assert (x["a"] not in figs and x["b"] not in figs) or \
                    ("cycles_suspect" in x and x["b"].startswith("clock/")), x
            for name in x.get("cycles_suspect") or []:
                assert name in figs and name not in x["suspect"], name
            for name in x["suspect"]:
                assert name in figs, name
    # The clocks: every TSC rate source against the one in use, the two chains, every CPU and every benchmark.
    qs = [x["quantity"] for x in xcs]
    assert "TSC rate (acpi_pm_timer vs hpet)" in qs  # q35 has both timers
    assert "core/TSC ratio (add_rr chain vs imul chain)" in qs
    assert "core/TSC ratio (CPU 1 vs CPU 0)" in qs
    clocks = booted.run.by_type("core_clock")
    assert sorted(c["cpu"] for c in clocks if c["when"] == "start") == [0, 1]
    benches = [c["when"] for c in clocks if c["when"] != "start"]
    # Every benchmark that ran (its "== bench NAME:" line, in the engine's order) has its clock record, in
    # that order; the list comes from the log, not from a copy of the engine's table kept here.
    ran = re.findall(r"^== bench ([a-z_0-9]+): ", booted.log, re.M)
    assert ran and benches == ran
    assert set(ran) == set(booted.one("run")["config"]["bench"].split(","))
    for b in benches:
        assert "core/TSC ratio (before %s vs start)" % b in qs
    # The Table 2 rows are checked against the sweep.
    assert any(x["a"] == "data_source/L1" for x in xcs)
    assert any(x["b"] == "data_source/local_DRAM" and x["a"].startswith("numa_latency/") for x in xcs)


def test_summary_counts_match_the_records(booted):
    s = booted.one("summary")
    assert booted.run.records[-1]["type"] == "summary", "the summary is the last record before end"
    figs = figures(booted.run)
    marked = set()
    for x in booted.run.by_type("crosscheck"):
        marked.update(x["suspect"])
    final = {}
    for f in figs:
        q = f["quality"]
        if f["figure"] in marked and q in ("ok", "noisy"):
            q = "suspect"
        final[f["figure"]] = q
    assert s["figures"] == len(final)
    for q in QUALITIES:
        assert s[q] == sum(1 for v in final.values() if v == q), q
    xcs = booted.run.by_type("crosscheck")
    assert s["crosschecks"] == len(xcs)
    assert s["crosschecks_judged"] == sum(1 for x in xcs if x["agrees"] is not None)
    assert s["crosschecks_agreeing"] == sum(1 for x in xcs if x["agrees"] is True)
    assert "summary: %d figures: %d ok, %d noisy, %d suspect, %d unavailable" % (
        s["figures"], s["ok"], s["noisy"], s["suspect"], s["unavailable"]) in booted.log
