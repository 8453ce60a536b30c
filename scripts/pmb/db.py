"""SQLite history of verified runs: schema, migrations, ingest and queries.

The schema is documented in docs/host-tools.md ("History database"). MIGRATIONS[i] takes the
database from version i to i + 1; connect() applies whatever is missing in one transaction and
refuses a database newer than this tool.
"""
import datetime
import json
import os
import sqlite3

from . import figures as figmod

MIGRATIONS = [
    # 0 -> 1: the initial schema.
    """
    CREATE TABLE machines (
        id           INTEGER PRIMARY KEY,
        identity     TEXT NOT NULL UNIQUE,   -- canonical JSON of the identity fields below
        vendor       TEXT, family INTEGER, model INTEGER, stepping INTEGER, brand TEXT,
        cpus         INTEGER, memory_bytes INTEGER, accel TEXT,
        first_seen   TEXT NOT NULL
    );
    CREATE TABLE runs (
        id           INTEGER PRIMARY KEY,     -- ingest order
        machine_id   INTEGER NOT NULL REFERENCES machines(id),
        crc32        TEXT NOT NULL,
        records      INTEGER NOT NULL,
        status       TEXT NOT NULL,           -- end record status: ok | error | crashed
        version      TEXT,
        tsc_hz       REAL,
        config       TEXT,                    -- the run record's config object, JSON
        source       TEXT,                    -- path it was ingested from
        ingested_at  TEXT NOT NULL,           -- UTC, ISO 8601
        UNIQUE (machine_id, crc32)
    );
    CREATE TABLE records (
        run_id       INTEGER NOT NULL REFERENCES runs(id) ON DELETE CASCADE,
        seq          INTEGER NOT NULL,        -- 0 = run record; the end record is last
        type         TEXT NOT NULL,
        line         TEXT NOT NULL,           -- the record line exactly as emitted
        PRIMARY KEY (run_id, seq)
    );
    CREATE TABLE figures (
        run_id       INTEGER NOT NULL REFERENCES runs(id) ON DELETE CASCADE,
        name         TEXT NOT NULL,
        value        REAL NOT NULL,
        unit         TEXT NOT NULL,
        cv           REAL,
        better       TEXT NOT NULL CHECK (better IN ('lower', 'higher')),
        PRIMARY KEY (run_id, name)
    );
    CREATE INDEX figures_by_name ON figures(name, run_id);
    CREATE TABLE comparisons (
        run_id        INTEGER NOT NULL REFERENCES runs(id) ON DELETE CASCADE,
        name          TEXT NOT NULL,
        value         REAL,
        baseline      REAL,
        baseline_runs INTEGER NOT NULL,
        allowed       REAL,
        verdict       TEXT NOT NULL,          -- ok | regressed | improved | new | missing
        PRIMARY KEY (run_id, name)
    );
    """,
    # 1 -> 2: branch figures renamed (docs/host-tools.md, "History database", "Version 2"), and the
    # count of earlier incomplete boots in the log a run came from.
    lambda conn: _migrate_1_to_2(conn),
]
SCHEMA_VERSION = len(MIGRATIONS)

# Record types that keep a run from ever being a baseline: a CPU that did not finish a job, a crash.
NOT_A_BASELINE = ("smp_timeout", "crash")
DEFAULT_DB = os.path.join("results", "history.sqlite")


class DbError(Exception):
    pass


def connect(path):
    """Open (creating if needed) and migrate the database."""
    d = os.path.dirname(path)
    if d:
        os.makedirs(d, exist_ok=True)
    conn = sqlite3.connect(path, isolation_level=None)   # explicit BEGIN/COMMIT below
    conn.row_factory = sqlite3.Row
    conn.execute("PRAGMA foreign_keys = ON")
    try:
        migrate(conn)
    except Exception:
        conn.close()
        raise
    return conn


def version(conn):
    row = conn.execute("SELECT name FROM sqlite_master WHERE type='table' AND name='schema_version'").fetchone()
    if row is None:
        return 0
    row = conn.execute("SELECT version FROM schema_version").fetchone()
    return row[0] if row else 0


def migrate(conn):
    v = version(conn)
    if v > SCHEMA_VERSION:
        raise DbError("database schema version %d is newer than this tool's (%d)" % (v, SCHEMA_VERSION))
    if v == SCHEMA_VERSION:
        return
    conn.execute("BEGIN IMMEDIATE")
    try:
        conn.execute("CREATE TABLE IF NOT EXISTS schema_version (version INTEGER NOT NULL)")
        for i in range(v, SCHEMA_VERSION):
            if callable(MIGRATIONS[i]):
                MIGRATIONS[i](conn)
            else:
                for stmt in _statements(MIGRATIONS[i]):
                    conn.execute(stmt)
        conn.execute("DELETE FROM schema_version")
        conn.execute("INSERT INTO schema_version (version) VALUES (?)", (SCHEMA_VERSION,))
        conn.execute("COMMIT")
    except Exception:
        conn.execute("ROLLBACK")
        raise


def _statements(script):
    # sqlite3.executescript would COMMIT on its own; split so the migration stays one transaction.
    lines = [l.split("--", 1)[0] for l in script.splitlines()]
    return [s.strip() for s in "\n".join(lines).split(";") if s.strip()]


class _StoredRun:
    """The records of a stored run, as figures.extract reads them."""

    def __init__(self, records):
        self.records = records


def _migrate_1_to_2(conn):
    """Version 1 named branch figures branch/<test>/<period>/cycles_per_branch: the indirect and
    return-stack tests have period null, so all their points got one name (the last point's value
    won) and the points were never compared. Re-derive every branch figure from the stored record
    lines under the new names (branch/<test>/<period>/<targets>/<depth>/cycles_per_branch), and
    drop the comparisons stored under the old names (they compared merged points). Add
    runs.incomplete_boots (NULL for runs ingested before: the earlier boots were not stored)."""
    conn.execute("ALTER TABLE runs ADD COLUMN incomplete_boots INTEGER")
    conn.execute("DELETE FROM figures WHERE name LIKE 'branch/%'")
    conn.execute("DELETE FROM comparisons WHERE name LIKE 'branch/%'")
    by_run = {}
    for run_id, line in conn.execute("SELECT run_id, line FROM records WHERE type = 'branch' ORDER BY run_id, seq"):
        try:
            rec = json.loads(line)
        except ValueError:
            continue
        if isinstance(rec, dict):
            by_run.setdefault(run_id, []).append(rec)
    for run_id, recs in by_run.items():
        figs = figmod.extract(_StoredRun(recs)).values()
        conn.executemany("INSERT INTO figures (run_id, name, value, unit, cv, better) VALUES (?,?,?,?,?,?)",
                         [(run_id, f.name, f.value, f.unit, f.spread, f.better) for f in figs])


# ---- identity --------------------------------------------------------------------------------

IDENTITY_KEYS = ("vendor", "family", "model", "stepping", "brand", "cpus", "memory_bytes", "accel")


def identity(run, accel="unknown"):
    r = run.run
    cpu = r.get("cpu") or {}
    return {"vendor": cpu.get("vendor"), "family": cpu.get("family"), "model": cpu.get("model"),
            "stepping": cpu.get("stepping"), "brand": cpu.get("brand"), "cpus": r.get("cpus"),
            "memory_bytes": r.get("memory_bytes"), "accel": accel}


def identity_key(ident):
    return json.dumps({k: ident.get(k) for k in IDENTITY_KEYS}, sort_keys=True, separators=(",", ":"))


# ---- ingest ----------------------------------------------------------------------------------

def _now():
    return datetime.datetime.now(datetime.timezone.utc).replace(microsecond=0).isoformat()


def find_run(conn, ident, crc):
    row = conn.execute("SELECT r.id FROM runs r JOIN machines m ON m.id = r.machine_id "
                       "WHERE m.identity = ? AND r.crc32 = ?", (identity_key(ident), crc)).fetchone()
    return row[0] if row else None


def ingest(conn, run, accel="unknown", source=None):
    """Store a verified Run. -> (run_id, created). Same identity + crc32 -> the existing id,
    nothing written. All inserts are one transaction."""
    ident = identity(run, accel)
    key = identity_key(ident)
    conn.execute("BEGIN IMMEDIATE")
    try:
        existing = find_run(conn, ident, run.crc32)
        if existing is not None:
            conn.execute("COMMIT")
            return existing, False
        row = conn.execute("SELECT id FROM machines WHERE identity = ?", (key,)).fetchone()
        if row:
            mid = row[0]
        else:
            mid = conn.execute(
                "INSERT INTO machines (identity, vendor, family, model, stepping, brand, cpus, memory_bytes,"
                " accel, first_seen) VALUES (?,?,?,?,?,?,?,?,?,?)",
                (key,) + tuple(_sqlval(ident[k]) for k in IDENTITY_KEYS) + (_now(),)).lastrowid
        r = run.run
        rid = conn.execute(
            "INSERT INTO runs (machine_id, crc32, records, status, version, tsc_hz, config, source, ingested_at,"
            " incomplete_boots) VALUES (?,?,?,?,?,?,?,?,?,?)",
            (mid, run.crc32, len(run.records), str(run.status), _sqlval(r.get("version")),
             r.get("tsc_hz") if isinstance(r.get("tsc_hz"), (int, float)) else None,
             json.dumps(r.get("config"), sort_keys=True), source, _now(),
             int(getattr(run, "incomplete_boots", 0) or 0))).lastrowid
        types = [rec.get("type") for rec in run.records] + ["end"]
        conn.executemany("INSERT INTO records (run_id, seq, type, line) VALUES (?,?,?,?)",
                         [(rid, i, t, line) for i, (t, line) in enumerate(zip(types, run.lines))])
        # `cv` holds the figure's spread (a fraction): the column is older than the "spread" key.
        conn.executemany("INSERT INTO figures (run_id, name, value, unit, cv, better) VALUES (?,?,?,?,?,?)",
                         [(rid, f.name, f.value, f.unit, f.spread, f.better) for f in figmod.extract(run).values()])
        conn.execute("COMMIT")
        return rid, True
    except Exception:
        conn.execute("ROLLBACK")
        raise


def _sqlval(v):
    if v is None or isinstance(v, (int, float, str)) and not isinstance(v, bool):
        return v
    return json.dumps(v)


def save_comparisons(conn, run_id, results):
    conn.execute("BEGIN IMMEDIATE")
    try:
        conn.execute("DELETE FROM comparisons WHERE run_id = ?", (run_id,))
        conn.executemany(
            "INSERT INTO comparisons (run_id, name, value, baseline, baseline_runs, allowed, verdict)"
            " VALUES (?,?,?,?,?,?,?)",
            [(run_id, c.name, c.value, c.baseline, c.baseline_runs, c.allowed, c.verdict) for c in results])
        conn.execute("COMMIT")
    except Exception:
        conn.execute("ROLLBACK")
        raise


# ---- queries ---------------------------------------------------------------------------------

def run_row(conn, run_id):
    return conn.execute("SELECT * FROM runs WHERE id = ?", (run_id,)).fetchone()


_NOT_A_BASELINE_SQL = ("EXISTS (SELECT 1 FROM records x WHERE x.run_id = runs.id AND x.type IN (%s))"
                       % ",".join("'%s'" % t for t in NOT_A_BASELINE))


def baseline_runs(conn, run_id, n):
    """Ids of the last n good runs of run_id's machine ingested before it: status ok and no
    smp_timeout or crash record (a CPU that timed out or crashed makes every figure suspect)."""
    row = run_row(conn, run_id)
    return [r[0] for r in conn.execute(
        "SELECT id FROM runs WHERE machine_id = ? AND id < ? AND status = 'ok' AND NOT %s ORDER BY id DESC LIMIT ?"
        % _NOT_A_BASELINE_SQL, (row["machine_id"], run_id, n))]


def skipped_baseline_runs(conn, run_id, n):
    """Ids of status-ok runs of run_id's machine, among the last ones before it that baseline_runs
    looked at, left out for their smp_timeout or crash records (newest first)."""
    row = run_row(conn, run_id)
    base = baseline_runs(conn, run_id, n)
    oldest = min(base) if len(base) == n else 0
    return [r[0] for r in conn.execute(
        "SELECT id FROM runs WHERE machine_id = ? AND id < ? AND id > ? AND status = 'ok' AND %s ORDER BY id DESC"
        % _NOT_A_BASELINE_SQL, (row["machine_id"], run_id, oldest))]


def baseline_blockers(conn, run_id):
    """{record type: count} of the records that keep run_id from being a baseline (empty: none)."""
    q = ",".join("?" * len(NOT_A_BASELINE))
    return {t: c for t, c in conn.execute(
        "SELECT type, COUNT(*) FROM records WHERE run_id = ? AND type IN (%s) GROUP BY type ORDER BY type" % q,
        (run_id,) + NOT_A_BASELINE)}


def figures_of(conn, run_id):
    return {r["name"]: r for r in conn.execute("SELECT * FROM figures WHERE run_id = ?", (run_id,))}


def machines(conn):
    return conn.execute("SELECT * FROM machines ORDER BY id").fetchall()


def runs_of(conn, machine_id=None):
    if machine_id is None:
        return conn.execute("SELECT * FROM runs ORDER BY id").fetchall()
    return conn.execute("SELECT * FROM runs WHERE machine_id = ? ORDER BY id", (machine_id,)).fetchall()
