"""History database on PostgreSQL (a private server the tests start, conftest.pg_server): migrations,
ingest and nightly giving the same comparisons as SQLite, concurrent idempotent ingest, and the
fleet table (also on SQLite)."""
import multiprocessing

import pytest

import logs
from pmb import cli, db, fleet, nightly, plots
from pmb.parse import parse_log

TABLES = {"schema_version", "machines", "runs", "records", "figures", "comparisons"}


def write_log(path, **kw):
    path.write_text(logs.full_log(**kw))
    return str(path)


def test_migrations_on_an_empty_postgresql_database(pg_url):
    c = db.connect(pg_url)
    try:
        assert c.backend == "postgresql"
        assert db.version(c) == db.SCHEMA_VERSION
        names = {r[0] for r in c.execute("SELECT table_name FROM information_schema.tables "
                                         "WHERE table_schema = 'public'")}
        assert TABLES <= names
        cols = {r[0]: r[1] for r in c.execute("SELECT column_name, data_type FROM information_schema.columns "
                                              "WHERE table_name = 'runs'")}
        assert cols["incomplete_boots"] == "bigint" and cols["tsc_hz"] == "double precision"
        ident = c.execute("SELECT is_identity FROM information_schema.columns WHERE table_name = 'machines' "
                          "AND column_name = 'id'").fetchone()[0]
        assert ident == "YES"
    finally:
        c.close()
    c = db.connect(pg_url)   # opening again migrates nothing
    assert c.execute("SELECT COUNT(*) FROM schema_version").fetchone()[0] == 1
    c.execute("UPDATE schema_version SET version = 99")
    c.close()
    with pytest.raises(db.DbError, match="newer"):
        db.connect(pg_url)


def _sequence(tmp_path, target):
    """The same logs through nightly into `target`: 5 baseline runs, a re-ingest, a worse run, a
    crashed run, a better run, under two accelerators. -> ([exit codes], {run: [(name, verdict, ...)]})."""
    specs = [dict(seed=s) for s in range(1, 6)] + [dict(seed=3), dict(seed=42, scale=1.5), dict(seed=60, scale=0.7)]
    rcs = []
    for i, kw in enumerate(specs):
        rcs.append(cli.main(["nightly", write_log(tmp_path / ("l%d.log" % i), **kw), "--db", target,
                             "--accel", "tcg"]))
    p = tmp_path / "crash.log"
    p.write_text(logs.serial(logs.run_lines(logs.full_run(seed=90), status="crashed")))
    rcs.append(cli.main(["nightly", str(p), "--db", target, "--accel", "tcg"]))
    rcs.append(cli.main(["nightly", str(tmp_path / "l4.log"), "--db", target, "--accel", "kvm"]))
    c = db.connect(target)
    try:
        comps = {}
        for r in c.execute("SELECT * FROM comparisons ORDER BY run_id, name"):
            comps.setdefault(r["run_id"], []).append(
                (r["name"], r["verdict"], r["baseline_runs"], r["value"], r["baseline"],
                 None if r["allowed"] is None else round(r["allowed"], 9)))
        runs = [(r["id"], r["machine_id"], r["crc32"], r["status"], r["records"]) for r in db.runs_of(c)]
        base = [db.baseline_runs(c, r[0], 5) for r in runs]
    finally:
        c.close()
    return rcs, comps, runs, base


def test_postgresql_gives_the_same_comparisons_as_sqlite(tmp_path, pg_url, capsys):
    (tmp_path / "s").mkdir()
    (tmp_path / "p").mkdir()
    lite = _sequence(tmp_path / "s", str(tmp_path / "s" / "h.sqlite"))
    pg = _sequence(tmp_path / "p", pg_url)
    assert lite[0] == pg[0] == [0, 0, 0, 0, 0, 0, 1, 0, 1, 0]
    assert lite[2] == pg[2] and len(pg[2]) == 9     # the re-ingest stored nothing
    assert lite[3] == pg[3]
    assert lite[1] == pg[1]
    verdicts = {v for rows in pg[1].values() for _, v, *_ in rows}
    assert {"new", "ok", "regressed", "improved"} <= verdicts
    # history reads the PostgreSQL database as well
    capsys.readouterr()
    # (by default the newest run's machine: the one kvm run; each machine's runs with --machine)
    rows = 0
    for m in (None, 1):
        assert cli.main(["history", "--db", pg_url, "--figure", "L3_unshared"] +
                        (["--machine", str(m)] if m else [])) == 0
        rows += len([l for l in capsys.readouterr().out.splitlines() if l.startswith("| ") and l[2].isdigit()])
    assert rows == 9


def _ingest_worker(args):
    url, text, host = args
    c = db.connect(url)
    try:
        rid, created = db.ingest(c, parse_log(text), "tcg", "/lab/%s.log" % host, host=host)
        if created:
            db.save_comparisons(c, rid, nightly.compare(c, rid))
        return rid, created
    finally:
        c.close()


@pytest.mark.parametrize("backend", ["postgresql", "sqlite"])
def test_concurrent_ingest_is_atomic_and_idempotent(tmp_path, backend, request):
    url = request.getfixturevalue("pg_url") if backend == "postgresql" else str(tmp_path / "h.sqlite")
    a, b, c3 = (logs.full_log(seed=s) for s in (1, 2, 3))
    # 8 ingests at once into a database nobody has opened yet: log a from box1 three times, log b
    # from box1 twice, log a from box2 twice (another machine), log c from box2 once -> 4 runs.
    jobs = [(url, a, "box1")] * 3 + [(url, b, "box1")] * 2 + [(url, a, "box2")] * 2 + [(url, c3, "box2")]
    with multiprocessing.get_context("fork").Pool(8) as pool:
        res = pool.map(_ingest_worker, jobs, chunksize=1)
    assert sum(created for _, created in res) == 4
    assert len({rid for rid, _ in res}) == 4
    assert res[0][0] == res[1][0] == res[2][0] and res[3][0] == res[4][0] and res[5][0] == res[6][0]
    conn = db.connect(url)
    try:
        assert conn.execute("SELECT COUNT(*) FROM machines").fetchone()[0] == 2
        assert conn.execute("SELECT COUNT(*) FROM runs").fetchone()[0] == 4
        n_lines = len(parse_log(a).lines)
        for rid, _ in res:
            assert conn.execute("SELECT COUNT(*) FROM records WHERE run_id = ?", (rid,)).fetchone()[0] == n_lines
        assert conn.execute("SELECT COUNT(DISTINCT run_id) FROM comparisons").fetchone()[0] == 4
        assert conn.execute("SELECT COUNT(*) FROM schema_version").fetchone()[0] == 1
    finally:
        conn.close()


def test_baselines_are_per_machine_host(tmp_path):
    """Two identical boxes: each one's baseline is its own earlier runs, never the other box's."""
    dbp = str(tmp_path / "h.sqlite")
    for s in range(1, 4):
        assert cli.main(["nightly", write_log(tmp_path / ("a%d.log" % s), seed=s), "--db", dbp, "--accel", "tcg",
                         "--host", "box-a"]) == 0
    # box-b is 50% slower from its first run on: with no baseline of its own, nothing regresses
    assert cli.main(["nightly", write_log(tmp_path / "b1.log", seed=11, scale=1.5), "--db", dbp, "--accel", "tcg",
                     "--host", "box-b"]) == 0
    assert cli.main(["nightly", write_log(tmp_path / "b2.log", seed=12, scale=1.5), "--db", dbp, "--accel", "tcg",
                     "--host", "box-b"]) == 0
    c = db.connect(dbp)
    assert db.baseline_runs(c, 5, 5) == [4]
    assert db.baseline_runs(c, 3, 5) == [2, 1]
    idents = [db.machine_identity(m) for m in db.machines(c)]
    assert [i.get("host") for i in idents] == ["box-a", "box-b"]
    assert db.cpu_key(idents[0]) == db.cpu_key(idents[1])
    # without --host the identity is what it was before host names (no "host" key)
    assert "host" not in db.identity_key(db.identity(parse_log(logs.full_log()), "tcg"))


def _fleet_db(target, tmp_path):
    # 3 identical boxes (two runs each: the latest counts), box3's latest run 30% slower; one odd box
    for host, runs in (("box1", [(1, 1.0), (2, 1.0)]), ("box2", [(3, 1.0), (4, 1.0)]),
                       ("box3", [(5, 1.0), (6, 1.3)])):
        for seed, scale in runs:
            assert cli.main(["nightly", write_log(tmp_path / ("%s-%d.log" % (host, seed)), seed=seed, scale=scale),
                             "--db", target, "--accel", "tcg", "--host", host]) in (0, 1)
    assert cli.main(["nightly", write_log(tmp_path / "odd.log", seed=7, cpus=8), "--db", target, "--accel", "tcg",
                     "--host", "odd"]) == 0


@pytest.mark.parametrize("backend", ["sqlite", "postgresql"])
def test_fleet_flags_the_deviating_box_and_the_box_without_peer(tmp_path, backend, request, capsys):
    target = request.getfixturevalue("pg_url") if backend == "postgresql" else str(tmp_path / "h.sqlite")
    _fleet_db(target, tmp_path)
    capsys.readouterr()
    png = tmp_path / "fleet.png"
    args = ["fleet", "--db", target, "--figure", "L3_unshared"]
    if plots.available():
        args += ["--png", str(png)]
    assert cli.main(args) == 0
    out = capsys.readouterr().out.splitlines()
    head = [h.strip() for h in out[0].strip("|").split("|")]
    col = head.index("data_source/L3_unshared/cycles")
    rows = {r.strip("|").split("|")[0].strip(): [x.strip() for x in r.strip("|").split("|")]
            for r in out[2:] if r.startswith("| ")}
    assert set(rows) == {"box1", "box2", "box3", "odd"}
    assert rows["box3"][col].endswith("!") and rows["box3"][col].startswith("+")
    dev3 = float(rows["box3"][col].split("%")[0])
    assert 25 < dev3 < 35
    for h in ("box1", "box2"):
        assert not rows[h][col].endswith("!") and abs(float(rows[h][col].split("%")[0])) < 3
        assert rows[h][3] == "3"
    assert rows["odd"][3] == "none: no identical peer" and rows["odd"][col] == "n/a"
    assert any(l.startswith("DEVIATES box3 data_source/L3_unshared/cycles") for l in out)
    assert not any(l.startswith("DEVIATES box1") or l.startswith("DEVIATES box2") for l in out)
    assert any(l.startswith("no identical peer: odd") for l in out)
    if plots.available():
        assert png.read_bytes()[:4] == b"\x89PNG"


def test_fleet_uses_the_latest_good_run(tmp_path):
    dbp = str(tmp_path / "h.sqlite")
    _fleet_db(dbp, tmp_path)
    c = db.connect(dbp)
    ms = {m.label: m for m in fleet.build(c, ["data_source/L3_unshared/cycles"])}
    assert ms["box3"].run_id == 6 and ms["box1"].run_id == 2
    # a crashed latest run is not what the fleet compares
    p = tmp_path / "crash.log"
    p.write_text(logs.serial(logs.run_lines(logs.full_run(seed=90), status="crashed")))
    db.ingest(c, parse_log(p.read_text()), "tcg", host="box1")
    assert {m.label: m for m in fleet.build(c, [])}["box1"].run_id == 2


def test_fleet_median_leaves_out_suspect_figures(tmp_path):
    """The fleet median reads each machine's final verdict: a box whose L3_unshared a cross-check of its run
    blamed (suspect, its record ok) does not move the median of the others, and its own cell says suspect."""
    dbp = str(tmp_path / "h.sqlite")
    for i, (host, scale, blamed) in enumerate((("box1", 1.0, False), ("box2", 1.0, False), ("box3", 1.02, False),
                                               ("box4", 3.0, True), ("box5", 3.0, True),
                                               ("box6", 3.0, True))):
        recs = logs.full_run(seed=i + 1, scale=scale)
        for r in recs:
            if r.get("type") == "data_source":
                r["figure"], r["quality"] = "data_source/" + r["source"], "ok"
        if blamed:
            recs.append({"type": "crosscheck", "quantity": "L3 hit latency (Table 2 row vs sweep plateau)",
                         "a": "data_source/L3_unshared", "b": "latency_plateau/random/2097152/2", "a_value": 60.0,
                         "b_value": 20.0, "unit": "ns", "ratio": 3.0, "tolerance": 0.15, "agrees": False,
                         "suspect": ["data_source/L3_unshared"]})
        p = tmp_path / ("%s.log" % host)
        p.write_text(logs.serial(logs.run_lines(recs)))
        cli.main(["nightly", str(p), "--db", dbp, "--accel", "tcg", "--host", host])
    c = db.connect(dbp)
    name = "data_source/L3_unshared/cycles"
    ms = {m.label: m for m in fleet.build(c, [name])}
    # the median of box1-3 (with box4-6, three times slower and blamed, it would be about 2x: box1 at -50 %)
    for h in ("box1", "box2", "box3"):
        assert abs(ms[h].cells[name].deviation) < 4 and not ms[h].cells[name].suspect
    c4 = ms["box4"].cells[name]
    assert c4.suspect and c4.mark == "!" and 150 < c4.deviation < 250
    table = fleet.table(list(ms.values()), [name])
    assert "(suspect)" in next(l for l in table.splitlines() if l.startswith("| box4 |"))
    assert "(suspect)" not in next(l for l in table.splitlines() if l.startswith("| box1 |"))
    assert any(l.startswith("DEVIATES box4 ") and l.endswith("(suspect in its run)")
               for l in fleet.summary_lines(list(ms.values()), [name]))


def test_fleet_errors(tmp_path, capsys):
    assert cli.main(["fleet", "--db", str(tmp_path / "missing.sqlite")]) == 1
    assert "no database" in capsys.readouterr().err


# ---- a record type no tool has seen ------------------------------------------------------------------

def _never_seen(seed, scale=1.0, quality="ok"):
    """A log whose run carries a record type no host tool names anywhere, with one figure in the statistics
    keys of docs/records.md (and its ns conversion), beside the usual records."""
    rec = dict({"type": "zz_never_seen", "figure": "zz_never_seen/chain", "method": "a test's own"},
               **logs.stats("cycles", round(20.0 * scale * (1 + 0.001 * seed), 4), 0.01, 11),
               ns=round(6.8 * scale, 4), converged=quality == "ok", quality=quality)
    if quality != "ok":
        rec["quality_reason"] = "95 % CI +-2 % of the median, the profile's target is +-1 %"
    return logs.serial(logs.run_lines(logs.full_run(seed=seed) + [rec]))


@pytest.mark.parametrize("backend", ["sqlite", "postgresql"])
def test_a_record_type_never_seen_reaches_report_database_history_and_nightly(tmp_path, backend, request, capsys):
    from pmb import report
    url = request.getfixturevalue("pg_url") if backend == "postgresql" else str(tmp_path / "h.sqlite")
    paths = []
    for i, kw in enumerate([dict(seed=s) for s in range(1, 5)] + [dict(seed=5, quality="noisy"),
                                                                  dict(seed=6, scale=1.5)]):
        p = tmp_path / ("n%d.log" % i)
        p.write_text(_never_seen(**kw))
        paths.append(str(p))
    # the report: the figure in the figures table, not under "Other records"
    md = report.to_markdown(report.build(parse_log(open(paths[4]).read()), want_plots=False))
    figs = md.split("## Figures", 1)[1]
    row = next(l for l in figs.splitlines() if l.startswith("| zz_never_seen/chain "))
    cells = [c.strip() for c in row.strip("|").split("|")]
    head = [c.strip() for c in next(l for l in figs.splitlines() if l.startswith("| Figure |")).strip("|").split("|")]
    col = {h: cells[i] for i, h in enumerate(head)}
    assert cells[:4] == ["zz_never_seen/chain", "zz_never_seen", "20.1", "cycles"] and col["n"] == "11"
    assert "6.8 ns" in col["Also"] and col["Spread"] == "1.0%" and col["Quality"] == "noisy"
    assert "profile's target" in col["Reason"] and col["Next run"] == ""  # one series: no next-run interval
    assert "zz_never_seen" not in md.split("## Other records", 1)[-1] or "## Other records" not in md
    # nightly: stored with its unit, spread and verdict, and judged against its baseline
    rcs = [cli.main(["nightly", p, "--db", url, "--accel", "tcg"]) for p in paths]
    assert rcs == [0, 0, 0, 0, 0, 1]
    out = capsys.readouterr().out
    assert "REGRESSED zz_never_seen/chain/cycles" in out
    c = db.connect(url)
    try:
        rows = {(r["run_id"], r["name"]): r for r in c.execute(
            "SELECT * FROM figures WHERE name LIKE 'zz_never_seen/%' ORDER BY run_id, name")}
        assert {n for _r, n in rows} == {"zz_never_seen/chain/cycles", "zz_never_seen/chain/ns"}
        r5 = rows[(5, "zz_never_seen/chain/cycles")]
        assert (r5["unit"], r5["better"], r5["quality"]) == ("cycles", "lower", "noisy")
        assert r5["cv"] == pytest.approx(0.01) and r5["value"] == pytest.approx(20.1)
        assert "profile's target" in r5["quality_reason"]
        assert rows[(1, "zz_never_seen/chain/ns")]["unit"] == "ns" and rows[(1, "zz_never_seen/chain/ns")]["quality"] == "ok"
        verdicts = {r["run_id"]: r["verdict"] for r in c.execute(
            "SELECT run_id, verdict FROM comparisons WHERE name = 'zz_never_seen/chain/cycles'")}
        assert verdicts == {1: "new", 2: "unjudged", 3: "unjudged", 4: "ok", 5: "ok", 6: "regressed"}   # 3 baseline runs for a verdict
    finally:
        c.close()
    # history: selected by name, each run's value, the verdict marks
    assert cli.main(["history", "--db", url, "--figure", "zz_never_seen/chain"]) == 0
    out = capsys.readouterr().out
    head, rows = out.splitlines()[0], out.splitlines()[2:]
    assert "zz_never_seen/chain/cycles" in head and "zz_never_seen/chain/ns" in head
    assert len(rows) == 6
    assert "20.1 (noisy)" in rows[4] and "30.18 !" in rows[5]
