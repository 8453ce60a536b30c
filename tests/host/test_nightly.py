"""pmubench nightly / history: ingest, idempotence, atomicity, baseline comparison, JUnit."""
import hashlib
import sqlite3
import xml.etree.ElementTree as ET

import pytest

import logs
from pmb import cli, db, figures, nightly, plots
from pmb.parse import parse_log


def write_log(path, **kw):
    path.write_text(logs.full_log(**kw))
    return str(path)


def sha(path):
    with open(path, "rb") as f:
        return hashlib.sha256(f.read()).hexdigest()


def dump(path):
    c = sqlite3.connect(path)
    try:
        return sorted(c.iterdump())
    finally:
        c.close()


@pytest.fixture
def history(tmp_path):
    """A DB with 5 good runs of the same machine (seeds 1..5, 1% jitter)."""
    dbp = str(tmp_path / "h.sqlite")
    for s in range(1, 6):
        rc = cli.main(["nightly", write_log(tmp_path / ("b%d.log" % s), seed=s), "--db", dbp, "--accel", "tcg"])
        assert rc == 0
    return tmp_path, dbp


def test_ingest_stores_run_records_and_figures(tmp_path):
    dbp = str(tmp_path / "h.sqlite")
    log = write_log(tmp_path / "a.log")
    assert cli.main(["nightly", log, "--db", dbp, "--accel", "tcg"]) == 0
    c = db.connect(dbp)
    assert db.version(c) == db.SCHEMA_VERSION
    (n_runs,) = c.execute("SELECT COUNT(*) FROM runs").fetchone()
    assert n_runs == 1
    run = parse_log(open(log).read())
    lines = [r[0] for r in c.execute("SELECT line FROM records ORDER BY seq")]
    assert lines == run.lines
    figs = db.figures_of(c, 1)
    l3 = next(r for r in run.by_type("data_source") if r["source"] == "L3_unshared")
    assert figs["data_source/L3_unshared/cycles"]["value"] == figures.value(l3, "cycles")
    assert figs["data_source/L3_unshared/cycles"]["cv"] == figures.spread(l3) == 0.02   # the spread, a fraction
    assert figs["bandwidth/read/sse2/67108864/t1/n0-0/bytes_per_s"]["better"] == "higher"
    m = c.execute("SELECT * FROM machines").fetchone()
    assert m["accel"] == "tcg" and m["cpus"] == 4 and m["family"] == 6
    assert c.execute("SELECT COUNT(*) FROM comparisons WHERE verdict='new'").fetchone()[0] == len(figs)


def test_reingest_is_idempotent(history, capsys):
    tmp, dbp = history
    before = dump(dbp)
    assert cli.main(["nightly", str(tmp / "b3.log"), "--db", dbp, "--accel", "tcg"]) == 0
    assert "already in the database" in capsys.readouterr().out
    assert dump(dbp) == before


def test_same_log_under_other_accel_is_another_machine(history):
    tmp, dbp = history
    assert cli.main(["nightly", str(tmp / "b3.log"), "--db", dbp, "--accel", "kvm"]) == 0
    c = db.connect(dbp)
    assert c.execute("SELECT COUNT(*) FROM machines").fetchone()[0] == 2


def test_rejected_log_leaves_db_untouched(history, capsys):
    tmp, dbp = history
    h = sha(dbp)
    bad = tmp / "bad.log"
    text = logs.full_log(seed=9)
    bad.write_text(text.replace('"mode":"random"', '"mode":"randoM"', 1))
    junit = tmp / "j.xml"
    assert cli.main(["nightly", str(bad), "--db", dbp, "--junit", str(junit)]) == 2
    assert "CRC mismatch" in capsys.readouterr().err
    assert sha(dbp) == h
    root = ET.parse(junit).getroot()
    assert root.get("failures") == "1"


def test_rejected_log_does_not_create_db(tmp_path):
    bad = tmp_path / "bad.log"
    bad.write_text("nothing here")
    assert cli.main(["nightly", str(bad), "--db", str(tmp_path / "new.sqlite")]) == 2
    assert not (tmp_path / "new.sqlite").exists()


def test_ingest_failure_rolls_back(tmp_path, monkeypatch):
    dbp = str(tmp_path / "h.sqlite")
    c = db.connect(dbp)
    run = parse_log(logs.full_log())

    def boom(_run):
        raise RuntimeError("disk full")
    monkeypatch.setattr(db.figmod, "extract", boom)
    with pytest.raises(RuntimeError):
        db.ingest(c, run, "tcg")
    for t in ("machines", "runs", "records", "figures"):
        assert c.execute("SELECT COUNT(*) FROM %s" % t).fetchone()[0] == 0


def test_worse_run_fails_with_junit_failure(history, capsys):
    tmp, dbp = history
    junit = tmp / "j.xml"
    worse = write_log(tmp / "worse.log", seed=42, scale=1.5)
    assert cli.main(["nightly", worse, "--db", dbp, "--accel", "tcg", "--junit", str(junit)]) == 1
    out = capsys.readouterr().out
    assert "REGRESSED data_source/L3_unshared/cycles" in out
    root = ET.parse(junit).getroot()
    fails = [tc.get("name") for tc in root.iter("testcase") if tc.find("failure") is not None]
    assert "data_source/L3_unshared/cycles" in fails
    assert "bandwidth/read/sse2/67108864/t1/n0-0/bytes_per_s" in fails   # lower bandwidth: worse
    assert int(root.get("failures")) == len(fails) > 20


def test_same_run_passes(history):
    tmp, dbp = history
    junit = tmp / "j.xml"
    assert cli.main(["nightly", str(tmp / "b5.log"), "--db", dbp, "--accel", "tcg", "--junit", str(junit)]) == 0
    root = ET.parse(junit).getroot()
    assert root.get("failures") == "0" and int(root.get("tests")) > 50


def test_new_similar_run_passes(history):
    tmp, dbp = history
    assert cli.main(["nightly", write_log(tmp / "n.log", seed=77), "--db", dbp, "--accel", "tcg"]) == 0


def test_better_run_passes_and_is_reported_improved(history, capsys):
    tmp, dbp = history
    assert cli.main(["nightly", write_log(tmp / "f.log", seed=78, scale=0.7), "--db", dbp, "--accel", "tcg"]) == 0
    assert "improved  data_source/L3_unshared/cycles" in capsys.readouterr().out


def test_crashed_run_fails_and_is_not_a_baseline(history):
    tmp, dbp = history
    p = tmp / "crash.log"
    p.write_text(logs.serial(logs.run_lines(logs.full_run(seed=90), status="crashed")))
    assert cli.main(["nightly", str(p), "--db", dbp, "--accel", "tcg"]) == 1
    c = db.connect(dbp)
    rid = c.execute("SELECT id FROM runs WHERE status='crashed'").fetchone()[0]
    nxt = cli.main(["nightly", write_log(tmp / "n2.log", seed=91), "--db", dbp, "--accel", "tcg"])
    assert nxt == 0
    last = c.execute("SELECT MAX(id) FROM runs").fetchone()[0]
    assert rid not in db.baseline_runs(c, last, 10)


def test_baseline_is_median_of_last_n_good_runs(tmp_path):
    dbp = str(tmp_path / "h.sqlite")
    c = db.connect(dbp)
    ids = []
    for s, scale in ((1, 1.0), (2, 5.0), (3, 1.0), (4, 1.0), (5, 1.0)):
        rid, created = db.ingest(c, parse_log(logs.full_log(seed=s, scale=scale, jitter=0)), "tcg")
        ids.append(rid)
    assert db.baseline_runs(c, ids[-1], 3) == [ids[3], ids[2], ids[1]]
    res = {r.name: r for r in nightly.compare(c, ids[-1], n=3)}
    r = res["data_source/L3_unshared/cycles"]
    assert r.baseline == pytest.approx(42.0) and r.baseline_runs == 3 and r.verdict == "ok"


def test_legacy_baseline_and_new_run_compare_under_the_same_names(tmp_path):
    """Runs ingested before the statistics key convention stay the baseline of runs after it."""
    dbp = str(tmp_path / "h.sqlite")
    c = db.connect(dbp)
    for s in range(1, 5):
        db.ingest(c, parse_log(logs.full_log(seed=s, keys="legacy")), "tcg")
    rid, _ = db.ingest(c, parse_log(logs.full_log(seed=5, keys="new")), "tcg")
    res = nightly.compare(c, rid, n=5)
    assert res and {r.verdict for r in res} <= {"ok"}, [(r.name, r.verdict) for r in res if r.verdict != "ok"]
    assert all(r.baseline_runs == 4 for r in res)
    worse, _ = db.ingest(c, parse_log(logs.full_log(seed=6, scale=1.5, keys="new")), "tcg")
    bad = {r.name for r in nightly.compare(c, worse, n=5) if r.verdict == "regressed"}
    assert {"data_source/L3_unshared/cycles", "c2c/0-1/hitm_ns", "branch/random/2/-1/-1/cycles_per_branch",
            "penalty/branch_mispredict/cycles", "bandwidth/read/sse2/67108864/t1/n0-0/bytes_per_s"} <= bad


def test_tolerance_formula():
    # Two baseline values: no between-run term; spread 0.02 now and 0.01 before -> sqrt(5e-4).
    b, allowed = nightly.tolerance("data_source/L2/cycles", "cycles", [100.0, 100.0], 0.02, [0.01, 0.01], k=3)
    assert b == 100.0 and allowed == pytest.approx(3 * (0.02 ** 2 + 0.01 ** 2) ** 0.5 * 100)
    # Tiny spread: the 5% floor applies.
    b, allowed = nightly.tolerance("data_source/L2/cycles", "cycles", [100.0] * 5, 0.0, [0.0] * 5)
    assert allowed == pytest.approx(5.0)
    # Small values: the absolute floor (0.5 cycle) applies.
    b, allowed = nightly.tolerance("data_source/L1/cycles", "cycles", [4.0], None, [None])
    assert allowed == 0.5
    # Scattered baseline: MAD term widens the band.
    vals = [90.0, 100.0, 110.0, 100.0, 100.0]
    b, allowed = nightly.tolerance("latency_sweep/x/ns", "ns", vals, 0.0, [0.0] * 5)
    assert b == 100.0 and allowed == pytest.approx(5.0)      # MAD is 0 here: floor
    vals = [80.0, 90.0, 100.0, 110.0, 120.0]
    b, allowed = nightly.tolerance("latency_sweep/x/ns", "ns", vals, 0.0, [0.0] * 5)
    assert allowed == pytest.approx(3 * 1.4826 * 10.0)


def test_selftest_check_turning_to_fail_regresses(history, capsys):
    tmp, dbp = history
    recs = logs.full_run(seed=55)
    for r in recs:
        if r["type"] == "pmu_selftest":
            r["checks"][1]["status"] = "fail"
    p = tmp / "st.log"
    p.write_text(logs.serial(logs.run_lines(recs)))
    assert cli.main(["nightly", str(p), "--db", dbp, "--accel", "tcg"]) == 1
    assert "pmu_selftest/pmi_delivery" in capsys.readouterr().out


def test_newer_schema_refused(tmp_path):
    dbp = str(tmp_path / "h.sqlite")
    c = db.connect(dbp)
    c.execute("UPDATE schema_version SET version = 99")
    c.close()
    with pytest.raises(db.DbError, match="newer"):
        db.connect(dbp)


def test_migration_from_empty_file(tmp_path):
    dbp = tmp_path / "h.sqlite"
    sqlite3.connect(str(dbp)).close()
    c = db.connect(str(dbp))
    assert db.version(c) == len(db.MIGRATIONS)
    names = {r[0] for r in c.execute("SELECT name FROM sqlite_master WHERE type='table'")}
    assert {"schema_version", "machines", "runs", "records", "figures", "comparisons"} <= names


def test_run_dir_reads_accel_from_boot_json(tmp_path):
    d = tmp_path / "r"
    d.mkdir()
    run = parse_log(logs.full_log())
    (d / "records.jsonl").write_text(run.jsonl())
    (d / "boot.json").write_text('{"accel": "tcg"}')
    dbp = str(tmp_path / "h.sqlite")
    assert cli.main(["nightly", "--run", str(d), "--db", dbp]) == 0
    assert db.connect(dbp).execute("SELECT accel FROM machines").fetchone()[0] == "tcg"


def test_history_table_and_png(history, capsys):
    tmp, dbp = history
    cli.main(["nightly", write_log(tmp / "worse.log", seed=42, scale=1.5), "--db", dbp, "--accel", "tcg"])
    capsys.readouterr()
    png = tmp / "h.png"
    args = ["history", "--db", dbp, "--figure", "L3_unshared"]
    if plots.available():
        args += ["--png", str(png)]
    assert cli.main(args) == 0
    out = capsys.readouterr().out.splitlines()
    assert "data_source/L3_unshared/cycles" in out[0] and "data_source/L3_unshared/ns" in out[0]
    rows = [l for l in out[2:] if l.startswith("| ")]
    assert len(rows) == 6
    assert rows[-1].split("|")[6].strip().endswith("!")        # the regression is marked
    if plots.available():
        assert png.read_bytes()[:4] == b"\x89PNG"


def test_history_default_figures_and_errors(history, capsys):
    tmp, dbp = history
    assert cli.main(["history", "--db", dbp, "--last", "2"]) == 0
    out = capsys.readouterr().out
    assert "data_source/L1/cycles" in out and "data_source/local_DRAM/ns" in out
    assert "data_source/L1/ns" not in out and "data_source/local_DRAM/cycles" not in out
    assert len([l for l in out.splitlines() if l.startswith("| ") and l[2].isdigit()]) == 2
    assert cli.main(["history", "--db", dbp, "--figure", "no_such_figure"]) == 1
    assert cli.main(["history", "--db", str(tmp / "missing.sqlite")]) == 1


# ---- branch figures: one per test, period, target count and depth ---------------------------------

def branch_log(path, seed, keys="new", slow=None, status="ok", extra=()):
    recs = logs.full_run(seed=seed, keys=keys) + logs.branch_sweep(seed=seed, keys=keys, slow=slow) + list(extra)
    path.write_text(logs.serial(logs.run_lines(recs, status)))
    return str(path)


def test_branch_points_are_distinct_figures_in_either_convention(tmp_path):
    new = parse_log(open(branch_log(tmp_path / "n.log", 1)).read())
    old = parse_log(open(branch_log(tmp_path / "o.log", 1, keys="legacy")).read())
    pts = [r for r in new.by_type("branch") if r.get("figure", "").count("/") == 4]
    assert len(pts) == 26   # the sweep and the synthetic run's branch/random/2
    fn = {n: f.value for n, f in figures.extract(new).items() if n.startswith("branch/")}
    fo = {n: f.value for n, f in figures.extract(old).items() if n.startswith("branch/")}
    # every point of the sweep its own figure (plus the synthetic run's branch/random/2 point), named as
    # the record names it, and a legacy log without "figure" gives the same names and values
    assert {r["figure"] + "/cycles_per_branch" for r in pts} <= set(fn)
    assert len(fn) == 26 and fn == fo
    assert "branch/indirect_random/-1/4/-1/cycles_per_branch" in fn
    assert "branch/indirect_cyclic/4/4/-1/cycles_per_branch" in fn
    assert "branch/return_stack/-1/-1/8/cycles_per_branch" in fn
    assert "branch/cond_random/-1/-1/-1/cycles_per_branch" in fn


def test_nightly_compares_every_indirect_and_return_stack_point(tmp_path, capsys):
    dbp = str(tmp_path / "h.sqlite")
    for s in range(1, 5):
        assert cli.main(["nightly", branch_log(tmp_path / ("b%d.log" % s), s), "--db", dbp, "--accel", "tcg"]) == 0
    # one indirect point and one return-stack depth get 50% slower: exactly those two regress
    slow = {("indirect_random", None, 16, None): 1.5, ("return_stack", None, None, 4): 1.5}
    assert cli.main(["nightly", branch_log(tmp_path / "w.log", 5, slow=slow), "--db", dbp, "--accel", "tcg"]) == 1
    out = capsys.readouterr().out
    c = db.connect(dbp)
    rows = {r["name"]: r for r in c.execute("SELECT * FROM comparisons WHERE run_id = 5 AND name LIKE 'branch/%'")}
    assert len(rows) == 26
    assert all(r["baseline_runs"] == 4 for r in rows.values()), [n for n, r in rows.items() if r["baseline_runs"] != 4]
    bad = {n for n, r in rows.items() if r["verdict"] == "regressed"}
    assert bad == {"branch/indirect_random/-1/16/-1/cycles_per_branch", "branch/return_stack/-1/-1/4/cycles_per_branch"}
    assert {r["verdict"] for n, r in rows.items() if n not in bad} == {"ok"}
    assert "REGRESSED branch/indirect_random/-1/16/-1/cycles_per_branch" in out


def _v1_database(path, logs_text):
    """A version 1 database as the tool before the migration wrote it: branch figures named
    branch/<test>/<period>/cycles_per_branch (period null -> "None"; later points overwrote earlier)."""
    c = sqlite3.connect(path, isolation_level=None)
    c.execute("CREATE TABLE schema_version (version INTEGER NOT NULL)")
    for stmt in db._statements(db.MIGRATIONS[0]):
        c.execute(stmt)
    c.execute("INSERT INTO schema_version VALUES (1)")
    c.execute("INSERT INTO machines (id, identity, first_seen) VALUES (1, 'm', 'now')")
    for rid, text in enumerate(logs_text, 1):
        run = parse_log(text)
        c.execute("INSERT INTO runs (id, machine_id, crc32, records, status, ingested_at) VALUES (?,1,?,?,?,'now')",
                  (rid, run.crc32, len(run.records), run.status))
        types = [r["type"] for r in run.records] + ["end"]
        c.executemany("INSERT INTO records VALUES (?,?,?,?)",
                      [(rid, i, t, line) for i, (t, line) in enumerate(zip(types, run.lines))])
        figs = {n: f for n, f in figures.extract(run).items() if not n.startswith("branch/")}
        for r in run.by_type("branch"):
            n = "branch/%s/%s/cycles_per_branch" % (r.get("test"), r.get("period"))
            figs[n] = figures.Figure(n, figures.value(r, "cycles"), "cycles", figures.spread(r))
        c.executemany("INSERT INTO figures VALUES (?,?,?,?,?,?)",
                      [(rid, f.name, f.value, f.unit, f.spread, f.better) for f in figs.values()])
        c.execute("INSERT INTO comparisons VALUES (?, 'branch/indirect_random/None/cycles_per_branch', 1, 1, 1, 1, 'ok')",
                  (rid,))
    c.close()


def test_migration_1_to_2_renames_branch_figures_from_the_stored_records(tmp_path):
    dbp = str(tmp_path / "v1.sqlite")
    texts = [logs.serial(logs.run_lines(logs.full_run(seed=s, keys="legacy") + logs.branch_sweep(seed=s, keys="legacy")))
             for s in (1, 2, 3)]
    _v1_database(dbp, texts)
    c = sqlite3.connect(dbp)
    old = {r[0] for r in c.execute("SELECT name FROM figures WHERE run_id = 1 AND name LIKE 'branch/%'")}
    assert "branch/indirect_random/None/cycles_per_branch" in old and len(old) == 16   # 26 points, 12 of them in 2 names
    c.close()
    c = db.connect(dbp)
    assert db.version(c) == db.SCHEMA_VERSION >= 2
    for rid, text in enumerate(texts, 1):
        want = {n: f.value for n, f in figures.extract(parse_log(text)).items() if n.startswith("branch/")}
        got = {r["name"]: r["value"] for r in c.execute(
            "SELECT name, value FROM figures WHERE run_id = ? AND name LIKE 'branch/%'", (rid,))}
        assert got == want and len(got) == 26
        assert c.execute("SELECT incomplete_boots FROM runs WHERE id = ?", (rid,)).fetchone()[0] is None
    # other figures untouched; comparisons under the old names dropped
    assert c.execute("SELECT COUNT(*) FROM figures WHERE name LIKE 'data_source/%' AND run_id = 1").fetchone()[0] > 0
    assert c.execute("SELECT COUNT(*) FROM comparisons").fetchone()[0] == 0
    # the migrated runs are the baseline of a new run under the new names
    c.execute("UPDATE machines SET identity = ?", (db.identity_key(db.identity(parse_log(texts[0]), "tcg")),))
    rid, _ = db.ingest(c, parse_log(logs.serial(logs.run_lines(logs.full_run(seed=4) + logs.branch_sweep(seed=4)))),
                       "tcg")
    res = {r.name: r for r in nightly.compare(c, rid) if r.name.startswith("branch/")}
    assert len(res) == 26 and {r.verdict for r in res.values()} == {"ok"}
    assert {r.baseline_runs for r in res.values()} == {3}


# ---- runs with smp_timeout or crash records are never a baseline ------------------------------------

def test_run_with_smp_timeout_or_crash_record_is_never_a_baseline(tmp_path, capsys):
    dbp = str(tmp_path / "h.sqlite")
    jx = tmp_path / "j.xml"
    timeout = {"type": "smp_timeout", "cpu": 2, "apic_id": 2, "timeout_us": 1000000, "action": "skipped"}
    crash = {"type": "crash", "kind": "exception", "cpu": 1, "vector": 13, "name": "#GP", "message": "x"}
    assert cli.main(["nightly", branch_log(tmp_path / "a.log", 1), "--db", dbp, "--accel", "tcg"]) == 0
    # status ok, but a CPU timed out: it passes (nothing regressed) yet says it will never be a baseline
    assert cli.main(["nightly", branch_log(tmp_path / "t.log", 2, extra=[timeout]), "--db", dbp, "--accel", "tcg",
                     "--junit", str(jx)]) == 0
    out = capsys.readouterr().out
    assert "this run will never be a baseline: 1 smp_timeout record" in out
    props = {p.get("name"): p.get("value") for p in ET.parse(jx).getroot().iter("property")}
    assert props["run.baseline"] == "no: 1 smp_timeout record"
    # a crash record in a run whose end status still says ok (e.g. on an AP, caught and reported)
    assert cli.main(["nightly", branch_log(tmp_path / "c.log", 3, extra=[crash]), "--db", dbp, "--accel", "tcg"]) == 0
    capsys.readouterr()
    assert cli.main(["nightly", branch_log(tmp_path / "n.log", 4), "--db", dbp, "--accel", "tcg", "--junit",
                     str(jx)]) == 0
    out = capsys.readouterr().out
    c = db.connect(dbp)
    assert db.baseline_runs(c, 4, 5) == [1]
    assert db.skipped_baseline_runs(c, 4, 5) == [3, 2]
    assert "(1 found)" in out and "not a baseline: run(s) 3, 2 (smp_timeout or crash records)" in out
    props = {p.get("name"): p.get("value") for p in ET.parse(jx).getroot().iter("property")}
    assert props["run.baseline"] == "yes" and props["baseline.skipped_runs"] == "3,2"
    assert {r["baseline_runs"] for r in c.execute("SELECT baseline_runs FROM comparisons WHERE run_id = 4")} == {1}


# ---- earlier incomplete boots in the log ---------------------------------------------------------------

def test_nightly_records_incomplete_boots(tmp_path, capsys):
    dbp = str(tmp_path / "h.sqlite")
    jx = tmp_path / "j.xml"
    first = logs.run_lines(logs.full_run(seed=1))[:40]          # the first boot died after 40 records
    p = tmp_path / "twice.log"
    p.write_text(logs.serial(first) + logs.full_log(seed=2))
    assert cli.main(["nightly", str(p), "--db", dbp, "--accel", "tcg", "--junit", str(jx)]) == 0
    assert "incomplete_boots 1" in capsys.readouterr().out
    c = db.connect(dbp)
    assert c.execute("SELECT incomplete_boots FROM runs").fetchone()[0] == 1
    props = {q.get("name"): q.get("value") for q in ET.parse(jx).getroot().iter("property")}
    assert props["run.incomplete_boots"] == "1"
    assert cli.main(["nightly", write_log(tmp_path / "ok.log", seed=3), "--db", dbp, "--accel", "tcg"]) == 0
    assert c.execute("SELECT incomplete_boots FROM runs WHERE id = 2").fetchone()[0] == 0


def test_junit_case_per_figure_has_value_baseline_tolerance_and_quality(history):
    """Each figure's testcase says its value, baseline, tolerance and quality; a figure a cross-check of the run
    marked is flagged SUSPECT in its output while its comparison still goes by the numbers."""
    tmp, dbp = history
    recs = logs.full_run(seed=91)
    for r in recs:
        if r.get("type") == "data_source":
            r["figure"] = "data_source/" + r["source"]
            r["quality"] = "ok"
    recs.append({"type": "crosscheck", "quantity": "L3 hit latency (Table 2 row vs sweep plateau)",
                 "a": "data_source/L3_unshared", "b": "latency_plateau/random/2097152/2", "a_value": 20.0,
                 "b_value": 14.0, "unit": "ns", "ratio": 20 / 14, "tolerance": 0.15, "agrees": False,
                 "suspect": ["data_source/L3_unshared"]})
    p = tmp / "q.log"
    p.write_text(logs.serial(logs.run_lines(recs)))
    junit = tmp / "q.xml"
    cli.main(["nightly", str(p), "--db", dbp, "--accel", "tcg", "--junit", str(junit)])
    cases = {tc.get("name"): tc for tc in ET.parse(junit).getroot().iter("testcase")}
    props = lambda tc: {e.get("name"): e.get("value") for e in tc.find("properties")}  # noqa: E731
    tc = cases["data_source/L3_unshared/cycles"]
    pr = props(tc)
    assert {"value", "unit", "baseline", "tolerance", "quality"} <= set(pr) and pr["quality"] == "suspect"
    assert float(pr["value"]) > 0 and float(pr["tolerance"]) > 0
    assert tc.find("system-out").text.startswith("SUSPECT: cross-check disagrees: L3 hit latency")
    ok = props(cases["data_source/L2/cycles"])
    assert ok["quality"] == "ok"
    assert cases["data_source/L2/cycles"].find("system-out") is None or \
        "SUSPECT" not in cases["data_source/L2/cycles"].find("system-out").text


def test_migration_2_to_3_adds_verdicts_and_the_figures_version_2_did_not_know(tmp_path):
    """A version 2 database stored no verdict and only the record types figures.py named one by one: the
    migration fills in each stored figure's quality from its record line and adds the figures of the other
    record types (a snippet's, a record type nobody named), leaving the stored values as they were."""
    dbp = str(tmp_path / "v2.sqlite")
    extra = [dict({"type": "zz_other", "figure": "zz_other/x"}, **logs.stats("cycles", 7.0, 0.02, 9),
                  quality="noisy", quality_reason="too few samples"),
             dict({"type": "snippet", "name": "add", "figure": "snippet/add"}, **logs.stats("cycles", 1.0, 0.01, 9),
                  quality="ok")]
    text = logs.serial(logs.run_lines(logs.full_run(seed=1) + extra))
    run = parse_log(text)
    raw = sqlite3.connect(dbp, isolation_level=None)
    raw.execute("CREATE TABLE schema_version (version INTEGER NOT NULL)")
    for stmt in db._statements(db.MIGRATIONS[0]):
        raw.execute(stmt)
    db.MIGRATIONS[1](db.Conn(raw, "sqlite"))
    raw.execute("INSERT INTO schema_version VALUES (2)")
    raw.execute("INSERT INTO machines (id, identity, first_seen) VALUES (1, 'm', 'now')")
    raw.execute("INSERT INTO runs (id, machine_id, crc32, records, status, ingested_at) VALUES (1,1,?,?,?,'now')",
                (run.crc32, len(run.records), run.status))
    types = [r["type"] for r in run.records] + ["end"]
    raw.executemany("INSERT INTO records VALUES (?,?,?,?)",
                    [(1, i, t, line) for i, (t, line) in enumerate(zip(types, run.lines))])
    v2 = {n: f for n, f in figures.extract(run).items() if n.split("/", 1)[0] in figures.HISTORY_NAMES}
    raw.executemany("INSERT INTO figures VALUES (?,?,?,?,?,?)",
                    [(1, f.name, f.value + 1000, f.unit, f.spread, f.better) for f in v2.values()])
    raw.close()
    c = db.connect(dbp)
    assert db.version(c) == db.SCHEMA_VERSION == 3
    got = {r["name"]: r for r in c.execute("SELECT * FROM figures WHERE run_id = 1")}
    want = figures.extract(run)
    assert set(got) == set(want) and set(want) - set(v2) == {"zz_other/x/cycles", "snippet/add/cycles"}
    for n, f in want.items():
        assert got[n]["quality"] == f.quality and got[n]["quality_reason"] == f.quality_reason, n
        assert got[n]["value"] == (f.value + 1000 if n in v2 else f.value), n   # stored values stay
    assert got["zz_other/x/cycles"]["quality"] == "noisy" and got["data_source/L1/cycles"]["quality"] is None
    assert got["snippet/add/cycles"]["unit"] == "cycles"


# ---- issue 23: what a reader sees from nightly, history and fleet ------------------------------------------------

from pmb import present  # noqa: E402


def test_values_in_their_unit_with_si_prefixes_and_signed_changes():
    assert present.si(2.65e11, "bytes/s") == "265 GB/s" and present.si(1e10, "bytes/s") == "10 GB/s"
    assert present.si(127.34, "ns") == "127.3 ns" and present.si(503.9, "cycles") == "503.9 cycles"
    assert present.change(2.65e11, 2.0e11, "higher") == "+32.5 % (better)"
    assert present.change(150.0, 127.0, "lower") == "+18.1 % (worse)"
    assert present.change(90.0, 100.0, "lower") == "-10.0 % (better)"


def test_nightly_twice_gives_no_verdict_from_one_baseline_run(tmp_path, capsys):
    dbp = str(tmp_path / "h.sqlite")
    assert cli.main(["nightly", write_log(tmp_path / "a.log", seed=1), "--db", dbp, "--accel", "tcg"]) == 0
    capsys.readouterr()
    # far off in every figure: with one baseline run that is still no regression, and it says why
    assert cli.main(["nightly", write_log(tmp_path / "b.log", seed=2, scale=1.5), "--db", dbp, "--accel", "tcg"]) == 0
    out = capsys.readouterr().out
    assert "REGRESSED" not in out and "improved " not in out
    assert "against 1 baseline run: a regression verdict needs at least 3 (run nightly on 2 more good runs" in out
    c = db.connect(dbp)
    res = nightly.compare(c, 2)
    c.close()
    assert {r.verdict for r in res} == {"unjudged"}
    bw = next(r for r in res if r.name.startswith("bandwidth/") and r.unit == "bytes/s")
    assert " GB/s vs baseline " in bw.detail and "% (worse)" in bw.detail and "allowed +-" in bw.detail
    assert "e+" not in bw.detail


def test_third_baseline_run_gives_verdicts(tmp_path, capsys):
    dbp = str(tmp_path / "h.sqlite")
    for s in (1, 2, 3):
        assert cli.main(["nightly", write_log(tmp_path / ("%d.log" % s), seed=s), "--db", dbp, "--accel", "tcg"]) == 0
    capsys.readouterr()
    assert cli.main(["nightly", write_log(tmp_path / "w.log", seed=9, scale=1.5), "--db", dbp, "--accel", "tcg"]) == 1
    out = capsys.readouterr().out
    line = next(l for l in out.splitlines() if l.startswith("REGRESSED data_source/L3_unshared/cycles"))
    assert "cycles vs baseline" in line and "(median of 3 runs), +50." in line and "% (worse)" in line


def test_missing_figures_are_named(history, capsys):
    tmp, dbp = history
    recs = [r for r in logs.full_run(seed=3) if not (r["type"] == "data_source" and r.get("source") == "L2")]
    p = tmp / "noL2.log"
    p.write_text(logs.serial(logs.run_lines(recs)))
    cli.main(["nightly", str(p), "--db", dbp, "--accel", "tcg"])
    out = capsys.readouterr().out
    line = next(l for l in out.splitlines() if l.startswith("missing (in the baseline, absent in this run): "))
    assert "data_source/L2/cycles" in line and "data_source/L2/ns" in line


def test_history_names_machines_keeps_to_one_and_suggests_figures(history, capsys):
    tmp, dbp = history
    other = tmp / "other.log"
    other.write_text(logs.full_log(seed=5, cpus=8))
    assert cli.main(["nightly", str(other), "--db", dbp, "--accel", "tcg"]) == 0
    capsys.readouterr()
    assert cli.main(["history", "--db", dbp, "--figure", "L3_unshared"]) == 0
    cap = capsys.readouterr()
    rows = [l for l in cap.out.splitlines() if l.startswith("| ") and l[2].isdigit()]
    assert len(rows) == 1 and "| Intel(R) Xeon(R) CPU X5570 @ 2.93GHz, 8 CPUs, tcg |" in rows[0]
    assert "runs of Intel(R) Xeon(R) CPU X5570 @ 2.93GHz, 8 CPUs, tcg only (2 machines" in cap.err
    assert cli.main(["history", "--db", dbp, "--figure", "L3_unshared", "--machine", "1"]) == 0
    rows = [l for l in capsys.readouterr().out.splitlines() if l.startswith("| ") and l[2].isdigit()]
    assert len(rows) == 5 and all(", 4 CPUs, tcg |" in r for r in rows)
    assert cli.main(["history", "--db", dbp, "--figure", "l3_unshared"]) == 1
    e = capsys.readouterr().err
    assert "no figure matches 'l3_unshared'; did you mean: data_source/L3_unshared/cycles" in e
    assert cli.main(["history", "--db", dbp, "--figure", "HITM"]) == 1
    assert "did you mean: c2c/" in capsys.readouterr().err


def _l3_run(seed, factor=1.0, blamed=False):
    """A run whose data_source rows carry verdicts; L3_unshared scaled by factor and, when blamed, listed by a
    disagreeing cross-check of the run (its final verdict suspect, its record's quality still ok)."""
    recs = logs.full_run(seed=seed)
    for r in recs:
        if r.get("type") == "data_source":
            r["figure"] = "data_source/" + r["source"]
            r["quality"] = "ok"
            if r["source"] == "L3_unshared":
                for k in ("median", "cycles", "ns", "p10", "p90", "min", "max", "ci_lo", "ci_hi"):
                    if isinstance(r.get(k), (int, float)) and not isinstance(r.get(k), bool):
                        r[k] *= factor
    if blamed:
        recs.append({"type": "crosscheck", "quantity": "L3 hit latency (Table 2 row vs sweep plateau)",
                     "a": "data_source/L3_unshared", "b": "latency_plateau/random/2097152/2", "a_value": 40.0,
                     "b_value": 14.0, "unit": "ns", "ratio": 40 / 14, "tolerance": 0.15, "agrees": False,
                     "suspect": ["data_source/L3_unshared"]})
    return logs.serial(logs.run_lines(recs))


def test_baseline_leaves_out_suspect_values(tmp_path):
    """A nightly baseline reads each baseline run's final verdict: a figure a cross-check of that run blamed
    (suspect in the figures table, though its record said ok) is no reference. Two of four baseline runs read
    L3_unshared twice as slow and were blamed: the baseline is the other two's median, and with two values no
    regression verdict is given; the comparison says what was left out."""
    dbp = str(tmp_path / "h.sqlite")
    for i, (f, b) in enumerate([(1, False), (2, True), (2, True), (1, False), (1, False)]):
        p = tmp_path / ("%d.log" % i)
        p.write_text(_l3_run(i + 1, f, b))
        cli.main(["nightly", str(p), "--db", dbp, "--accel", "tcg"])
    c = db.connect(dbp)
    q = {r[0]: r[1] for r in c.execute("SELECT run_id, quality FROM figures WHERE name = ?",
                                       ("data_source/L3_unshared/cycles",))}
    assert [q[i] for i in sorted(q)] == ["ok", "suspect", "suspect", "ok", "ok"]
    res = {r.name: r for r in nightly.compare(c, 5)}
    c.close()
    l3 = res["data_source/L3_unshared/cycles"]
    assert l3.baseline_runs == 2 and l3.verdict == "unjudged"
    assert "2 suspect baseline values left out" in l3.detail
    assert l3.baseline == pytest.approx(l3.value, rel=0.05)      # not pulled towards the blamed runs' 2x
    l2 = res["data_source/L2/cycles"]                           # nothing blamed: all four baseline runs
    assert l2.baseline_runs == 4 and "left out" not in l2.detail
