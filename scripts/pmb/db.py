"""History of verified runs (SQLite or PostgreSQL): schema, migrations, ingest and queries.

The schema is documented in docs/host-tools.md ("History database"). MIGRATIONS[i] takes the
database from version i to i + 1; connect() applies whatever is missing in one transaction and
refuses a database newer than this tool.

One schema and one set of migrations serve both backends: SQL is written in the SQLite dialect
with `?` placeholders, and Conn (below) translates it for PostgreSQL (placeholders, INTEGER
PRIMARY KEY -> identity, INTEGER -> BIGINT, REAL -> DOUBLE PRECISION). `connect()` takes a path
(SQLite, embedded) or a postgresql:// URL (psycopg 3).
"""
import datetime
import json
import os
import re
import sqlite3
import time

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
    # 2 -> 3: each figure's verdict (quality, quality_reason), and the figures of record types version 2 did
    # not know, both from the stored record lines (docs/host-tools.md, "History database", "Version 3").
    lambda conn: _migrate_2_to_3(conn),
]
SCHEMA_VERSION = len(MIGRATIONS)

# Record types that keep a run from ever being a baseline: a CPU that did not finish a job, a crash.
NOT_A_BASELINE = ("smp_timeout", "crash")
DEFAULT_DB = os.path.join("results", "history.sqlite")


PG_INSTALL = "apt-get install -y postgresql python3-psycopg"
# Arbitrary key of the PostgreSQL advisory lock that serialises migrations of one database.
_MIGRATION_LOCK = 0x706d6231


class DbError(Exception):
    pass


def is_url(target):
    return isinstance(target, str) and target.startswith(URL_PREFIXES)


# The --db forms (docs/host-tools.md, "History database"). The URL prefixes are libpq's own, which compares
# them case-sensitively; anything else that starts like a URL is refused rather than taken for a file name,
# so a mistyped server URL never becomes a local SQLite file that the lab's history never sees.
URL_PREFIXES = ("postgresql://", "postgres://")
DB_FORMS = ("postgresql://[USER[:PASSWORD]@][HOST][:PORT][/DBNAME][?PARAM=VALUE...] (or postgres://...), "
            "or a SQLite file path that does not start like a URL (./NAME for a name with a colon)")
_SCHEME_LIKE = re.compile(r"([A-Za-z][A-Za-z0-9+.-]*)(:|//)")


def check_target(target):
    """'postgresql' or 'sqlite' for a supported --db value; DbError (the reason and the accepted forms,
    one line) for anything else: an empty value, or a value that starts like a URL (a word followed by
    ':' or '//') without being exactly one of URL_PREFIXES. Nothing is opened or created."""
    if not isinstance(target, str) or not target:
        raise DbError("empty; accepted: %s" % DB_FORMS)
    if is_url(target):
        return "postgresql"
    m = _SCHEME_LIKE.match(target)
    if m is None:
        return "sqlite"
    scheme, sep = m.group(1), m.group(2)
    if sep == "//":
        why = "looks like a URL with the ':' after '%s' missing" % scheme
    elif scheme.lower() in ("postgresql", "postgres"):
        why = ("the scheme must be written in lower case (libpq's '%s://')" % scheme.lower()
               if scheme != scheme.lower() else "'%s:' must be followed by '//'" % scheme)
    elif scheme.lower() in ("sqlite", "sqlite3", "file"):
        why = "a SQLite database is given as a plain file path, not a '%s:' URL" % scheme
    else:
        why = "unsupported scheme '%s'" % scheme
    raise DbError("%s; accepted: %s" % (why, DB_FORMS))


def one_line(msg):
    """A (possibly multi-line) driver message as one line: libpq's connection errors carry a second
    line ('Is the server running ...?')."""
    return "; ".join(l.strip() for l in str(msg).splitlines() if l.strip())


def _psycopg():
    try:
        import psycopg
    except ImportError:
        raise DbError("PostgreSQL needs psycopg 3; run: %s" % PG_INSTALL)
    return psycopg


def errors():
    """Exception classes a database operation may raise (for the command line's error paths)."""
    out = [DbError, sqlite3.Error]
    try:
        import psycopg
        out.append(psycopg.Error)
    except ImportError:
        pass
    return tuple(out)


class Row:
    """A result row readable by position and by column name, like sqlite3.Row."""
    __slots__ = ("_names", "_values")

    def __init__(self, names, values):
        self._names = names
        self._values = values

    def __getitem__(self, k):
        if isinstance(k, str):
            return self._values[self._names.index(k)]
        return self._values[k]

    def keys(self):
        return list(self._names)

    def __len__(self):
        return len(self._values)

    def __iter__(self):
        return iter(self._values)

    def __repr__(self):
        return "Row(%r)" % dict(zip(self._names, self._values))


# executemany's statements: INSERT INTO t (cols) VALUES (?,?,...), sent to PostgreSQL as multi-row INSERTs
# of at most _ROWS_PER_INSERT rows (PostgreSQL allows 65535 parameters per statement).
_INSERT_VALUES = re.compile(r"(\s*INSERT\s+INTO\s+\w+\s*\([^()]*\)\s*VALUES\s*)(\((?:\s*\?\s*,)*\s*\?\s*\))\s*$",
                            re.I)
_ROWS_PER_INSERT = 1000


def _pg_row_factory(cursor):
    names = [c.name for c in cursor.description] if cursor.description else []
    return lambda values: Row(names, values)


class Conn:
    """A connection to either backend with the sqlite3-style API the tools use: execute(sql,
    params) -> cursor (fetchone/fetchall/iteration), executemany, begin/commit/rollback, close.
    SQL is written for SQLite and translated here for PostgreSQL."""

    def __init__(self, raw, backend):
        self.raw = raw
        self.backend = backend

    @property
    def pg(self):
        return self.backend == "postgresql"

    def sql(self, q):
        if not self.pg:
            return q
        q = re.sub(r"\bINTEGER PRIMARY KEY\b", "BIGINT GENERATED BY DEFAULT AS IDENTITY PRIMARY KEY", q)
        q = re.sub(r"\bINTEGER\b", "BIGINT", q)
        q = re.sub(r"\bREAL\b", "DOUBLE PRECISION", q)
        return q.replace("%", "%%").replace("?", "%s")

    def execute(self, q, params=()):
        if not self.pg:
            return self.raw.execute(q, params)
        cur = self.raw.cursor()
        cur.execute(self.sql(q), tuple(params))
        return cur

    def executemany(self, q, seq):
        if not self.pg:
            return self.raw.executemany(q, seq)
        seq = [tuple(p) for p in seq]
        cur = self.raw.cursor()
        m = _INSERT_VALUES.match(q)
        if m is None:
            if seq:
                cur.executemany(self.sql(q), seq)
            return cur
        # One multi-row INSERT per chunk instead of psycopg's executemany: that one runs in pipeline mode,
        # and a serialization failure inside the pipeline (concurrent ingests; transaction() retries it)
        # logs "error ignored terminating <psycopg.Pipeline [INERROR]>: pipeline aborted" on stderr and,
        # on the retry, can name a prepared statement the aborted pipeline never created (psycopg 3.1:
        # InvalidSqlStatementName "_pg3_N" does not exist).
        head, row = m.group(1), m.group(2)
        for i in range(0, len(seq), _ROWS_PER_INSERT):
            chunk = seq[i:i + _ROWS_PER_INSERT]
            cur.execute(self.sql(head + ",".join([row] * len(chunk))), [v for p in chunk for v in p])
        return cur

    def begin(self, serializable=False):
        if self.pg:
            self.raw.execute("BEGIN ISOLATION LEVEL SERIALIZABLE" if serializable else "BEGIN")
        else:
            self.raw.execute("BEGIN IMMEDIATE")

    def commit(self):
        self.raw.execute("COMMIT")

    def rollback(self):
        self.raw.execute("ROLLBACK")

    def has_table(self, name):
        if self.pg:
            # a query on the catalog, not to_regclass(): that reads a cache which may not yet see a
            # table another session created while this one waited for the migration lock
            return self.execute("SELECT 1 FROM pg_catalog.pg_tables WHERE schemaname = current_schema()"
                                " AND tablename = ?", (name,)).fetchone() is not None
        return self.execute("SELECT name FROM sqlite_master WHERE type='table' AND name=?", (name,)).fetchone() \
            is not None

    def close(self):
        self.raw.close()


def _retryable(e):
    """A PostgreSQL serialization failure or deadlock (retry the transaction), or a busy SQLite."""
    if getattr(e, "sqlstate", None) in ("40001", "40P01"):
        return True
    return isinstance(e, sqlite3.OperationalError) and "locked" in str(e)


def transaction(conn, fn, serializable=True, attempts=20):
    """Run fn() inside one transaction; serialization failures (concurrent ingests on PostgreSQL)
    roll back and run fn again, up to `attempts` times."""
    for i in range(attempts):
        conn.begin(serializable)
        try:
            out = fn()
            conn.commit()
            return out
        except Exception as e:
            try:
                conn.rollback()
            except Exception:
                pass
            if not _retryable(e) or i == attempts - 1:
                raise
        time.sleep(min(0.5, 0.01 * 2 ** i))


def connect(target):
    """Open (creating if needed) and migrate the database: a SQLite path or a postgresql:// URL
    (check_target: any other URL-like value is refused before anything is created)."""
    if check_target(target) == "postgresql":
        psycopg = _psycopg()
        try:
            raw = psycopg.connect(target, autocommit=True, row_factory=_pg_row_factory)
        except psycopg.Error as e:
            raise DbError(one_line(e)) from None
        conn = Conn(raw, "postgresql")
    else:
        d = os.path.dirname(target)
        if d:
            os.makedirs(d, exist_ok=True)
        raw = sqlite3.connect(target, isolation_level=None, timeout=60)   # explicit BEGIN/COMMIT below
        raw.row_factory = sqlite3.Row
        raw.execute("PRAGMA foreign_keys = ON")
        conn = Conn(raw, "sqlite")
    try:
        migrate(conn)
    except Exception:
        conn.close()
        raise
    return conn


def version(conn):
    if not conn.has_table("schema_version"):
        return 0
    row = conn.execute("SELECT version FROM schema_version").fetchone()
    return row[0] if row else 0


def migrate(conn):
    v = version(conn)
    if v > SCHEMA_VERSION:
        raise DbError("database schema version %d is newer than this tool's (%d)" % (v, SCHEMA_VERSION))
    if v == SCHEMA_VERSION:
        return
    conn.begin()
    try:
        if conn.pg:   # several boxes may open a new database at once: one migrates, the others wait
            conn.execute("SELECT pg_advisory_xact_lock(?)", (_MIGRATION_LOCK,))
        v = version(conn)
        if v >= SCHEMA_VERSION:
            conn.commit()
            return
        conn.execute("CREATE TABLE IF NOT EXISTS schema_version (version INTEGER NOT NULL)")
        for i in range(v, SCHEMA_VERSION):
            if callable(MIGRATIONS[i]):
                MIGRATIONS[i](conn)
            else:
                for stmt in _statements(MIGRATIONS[i]):
                    conn.execute(stmt)
        conn.execute("DELETE FROM schema_version")
        conn.execute("INSERT INTO schema_version (version) VALUES (?)", (SCHEMA_VERSION,))
        conn.commit()
    except Exception:
        conn.rollback()
        raise


def _statements(script):
    # sqlite3.executescript would COMMIT on its own; split so the migration stays one transaction.
    lines = [l.split("--", 1)[0] for l in script.splitlines()]
    return [s.strip() for s in "\n".join(lines).split(";") if s.strip()]


class _StoredRun:
    """The records of a stored run, as figures.extract reads them."""

    def __init__(self, records):
        self.records = records


def _stored_records(conn, where):
    """The stored record lines matching `where` (SQL over records.type), decoded, as {run_id: [record, ...]} in
    the order they were emitted; a line that does not decode to an object is skipped."""
    by_run = {}
    for run_id, line in conn.execute("SELECT run_id, line FROM records WHERE %s ORDER BY run_id, seq" % where):
        try:
            rec = json.loads(line)
        except ValueError:
            continue
        if isinstance(rec, dict):
            by_run.setdefault(run_id, []).append(rec)
    return by_run


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
    for run_id, recs in _stored_records(conn, "type = 'branch'").items():
        figs = figmod.extract(_StoredRun(recs)).values()
        conn.executemany("INSERT INTO figures (run_id, name, value, unit, cv, better) VALUES (?,?,?,?,?,?)",
                         [(run_id, f.name, f.value, f.unit, f.spread, f.better) for f in figs])


FIGURE_COLUMNS = "run_id, name, value, unit, cv, better, quality, quality_reason"


def _figure_rows(run_id, figs):
    # `cv` holds the figure's spread (a fraction): the column is older than the "spread" key.
    return [(run_id, f.name, f.value, f.unit, f.spread, f.better, f.quality, f.quality_reason) for f in figs]


def _migrate_2_to_3(conn):
    """Version 2 stored no verdicts, and only the figures of the record types figures.py named one by one
    (a snippet, timer or latency_plateau figure, or a new benchmark's, never reached the history). Add
    figures.quality and figures.quality_reason, and re-derive every stored run's figures from its record
    lines: the verdicts of the figures already there are filled in (their values stay as stored), the
    figures that were missing are added."""
    conn.execute("ALTER TABLE figures ADD COLUMN quality TEXT")
    conn.execute("ALTER TABLE figures ADD COLUMN quality_reason TEXT")
    for run_id, recs in _stored_records(conn, "type NOT IN ('run', 'end')").items():
        figs = figmod.extract(_StoredRun(recs))
        have = {r[0] for r in conn.execute("SELECT name FROM figures WHERE run_id = ?", (run_id,))}
        conn.executemany("UPDATE figures SET quality = ?, quality_reason = ? WHERE run_id = ? AND name = ?",
                         [(f.quality, f.quality_reason, run_id, f.name) for f in figs.values() if f.name in have])
        conn.executemany("INSERT INTO figures (%s) VALUES (?,?,?,?,?,?,?,?)" % FIGURE_COLUMNS,
                         _figure_rows(run_id, [f for f in figs.values() if f.name not in have]))


# ---- identity --------------------------------------------------------------------------------

# The CPU identity: boxes that agree on all of these are "identical machines" (pmubench fleet
# compares them with each other).
IDENTITY_KEYS = ("vendor", "family", "model", "stepping", "brand", "cpus", "memory_bytes", "accel")


def identity(run, accel="unknown", host=None):
    """The machine identity of a run: the CPU identity (IDENTITY_KEYS) plus, when known, the box's
    name (`host`: nightly --host, else the run record's "hostname" or "host"). Without a host name
    every box with the same CPU identity is one machine, as before host names existed."""
    r = run.run
    cpu = r.get("cpu") or {}
    ident = {"vendor": cpu.get("vendor"), "family": cpu.get("family"), "model": cpu.get("model"),
             "stepping": cpu.get("stepping"), "brand": cpu.get("brand"), "cpus": r.get("cpus"),
             "memory_bytes": r.get("memory_bytes"), "accel": accel}
    if host is None:
        host = r.get("hostname") or r.get("host")
    if host:
        ident["host"] = str(host)
    return ident


def identity_key(ident):
    """Canonical JSON of the identity (machines.identity). "host" is only there when set, so the
    identities stored before host names existed stay the same."""
    d = {k: ident.get(k) for k in IDENTITY_KEYS}
    if ident.get("host"):
        d["host"] = ident["host"]
    return json.dumps(d, sort_keys=True, separators=(",", ":"))


def cpu_key(ident):
    """Canonical JSON of the CPU identity alone (the identity without the host name)."""
    return json.dumps({k: ident.get(k) for k in IDENTITY_KEYS}, sort_keys=True, separators=(",", ":"))


def machine_identity(row):
    """The identity dict of a machines row."""
    try:
        d = json.loads(row["identity"])
    except (TypeError, ValueError):
        d = None
    if not isinstance(d, dict):
        d = {k: row[k] for k in IDENTITY_KEYS}
    return d


# ---- ingest ----------------------------------------------------------------------------------

def _now():
    return datetime.datetime.now(datetime.timezone.utc).replace(microsecond=0).isoformat()


def find_run(conn, ident, crc):
    row = conn.execute("SELECT r.id FROM runs r JOIN machines m ON m.id = r.machine_id "
                       "WHERE m.identity = ? AND r.crc32 = ?", (identity_key(ident), crc)).fetchone()
    return row[0] if row else None


def ingest(conn, run, accel="unknown", source=None, host=None):
    """Store a verified Run. -> (run_id, created). Same machine identity + crc32 (the end record's
    CRC over every record line, run record included) -> the existing id, nothing written. All
    inserts are one transaction; the inserts of the machine and of the run are INSERT ... ON
    CONFLICT DO NOTHING on their unique keys, so concurrent ingests of the same log (several boxes
    or jobs at once) store it once; on PostgreSQL the transaction is SERIALIZABLE and retried on a
    serialization failure."""
    ident = identity(run, accel, host)
    key = identity_key(ident)
    r = run.run

    def body():
        existing = find_run(conn, ident, run.crc32)
        if existing is not None:
            return existing, False
        row = conn.execute("SELECT id FROM machines WHERE identity = ?", (key,)).fetchone()
        if row is None:   # (a PostgreSQL identity advances even when ON CONFLICT drops the row: look first)
            row = conn.execute(
                "INSERT INTO machines (identity, vendor, family, model, stepping, brand, cpus, memory_bytes,"
                " accel, first_seen) VALUES (?,?,?,?,?,?,?,?,?,?) ON CONFLICT (identity) DO NOTHING RETURNING id",
                (key,) + tuple(_sqlval(ident[k]) for k in IDENTITY_KEYS) + (_now(),)).fetchone()
        mid = row[0] if row else conn.execute("SELECT id FROM machines WHERE identity = ?", (key,)).fetchone()[0]
        row = conn.execute(
            "INSERT INTO runs (machine_id, crc32, records, status, version, tsc_hz, config, source, ingested_at,"
            " incomplete_boots) VALUES (?,?,?,?,?,?,?,?,?,?) ON CONFLICT (machine_id, crc32) DO NOTHING RETURNING id",
            (mid, run.crc32, len(run.records), str(run.status), _sqlval(r.get("version")),
             r.get("tsc_hz") if isinstance(r.get("tsc_hz"), (int, float)) else None,
             json.dumps(r.get("config"), sort_keys=True), source, _now(),
             int(getattr(run, "incomplete_boots", 0) or 0))).fetchone()
        if row is None:   # stored by a concurrent ingest since find_run
            return find_run(conn, ident, run.crc32), False
        rid = row[0]
        types = [rec.get("type") for rec in run.records] + ["end"]
        conn.executemany("INSERT INTO records (run_id, seq, type, line) VALUES (?,?,?,?)",
                         [(rid, i, t, line) for i, (t, line) in enumerate(zip(types, run.lines))])
        conn.executemany("INSERT INTO figures (%s) VALUES (?,?,?,?,?,?,?,?)" % FIGURE_COLUMNS,
                         _figure_rows(rid, figmod.extract(run).values()))
        return rid, True

    return transaction(conn, body)


def _sqlval(v):
    if v is None or isinstance(v, (int, float, str)) and not isinstance(v, bool):
        return v
    return json.dumps(v)


def save_comparisons(conn, run_id, results):
    def body():
        conn.execute("DELETE FROM comparisons WHERE run_id = ?", (run_id,))
        conn.executemany(
            "INSERT INTO comparisons (run_id, name, value, baseline, baseline_runs, allowed, verdict)"
            " VALUES (?,?,?,?,?,?,?)",
            [(run_id, c.name, c.value, c.baseline, c.baseline_runs, c.allowed, c.verdict) for c in results])
    transaction(conn, body)


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
