"""Errors a user can cause in the host tools end in one line on stderr naming the thing and the reason,
with the documented exit status (docs/host-tools.md, "Exit status"), never a traceback; checks of the
command line (numbers, --db forms, output paths) come before any work, so a refused command creates
nothing and ingests nothing (issue 21)."""
import logging
import os
import shutil
import subprocess
import sys
import tempfile

import pytest

import logs
from pmb import cli, db

PMUBENCH = os.path.join(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))),
                        "scripts", "pmubench")


def main(argv, capsys):
    """cli.main(argv) -> (exit status, stdout, stderr); argparse's exits are statuses too."""
    try:
        rc = cli.main(argv)
    except SystemExit as e:
        rc = e.code
    out, err = capsys.readouterr()
    return rc, out, err


def one_line(err):
    assert err.endswith("\n") and err.count("\n") == 1, "not one line: %r" % err
    assert "Traceback" not in err
    return err


@pytest.fixture
def work(tmp_path, monkeypatch):
    """An empty working directory holding one valid log, a.log."""
    monkeypatch.chdir(tmp_path)
    (tmp_path / "a.log").write_text(logs.full_log(seed=1))
    return tmp_path


def ingested(tmp_path, capsys, seed=1):
    """A SQLite history in tmp_path holding one run (nightly's output discarded)."""
    p = tmp_path / ("s%d.log" % seed)
    p.write_text(logs.full_log(seed=seed))
    dbp = str(tmp_path / "h.sqlite")
    assert cli.main(["nightly", str(p), "--db", dbp, "--accel", "tcg"]) == 0
    capsys.readouterr()
    return dbp


# ---- numeric options: finite, in range, exit 2, before any work --------------------------------------------

NUMERIC = [
    # nightly
    (["nightly", "a.log", "--k", "nan"], "--k", "not a finite number"),
    (["nightly", "a.log", "--k", "inf"], "--k", "not a finite number"),
    (["nightly", "a.log", "--k", "1e400"], "--k", "not a finite number"),
    (["nightly", "a.log", "--k=-1"], "--k", "out of range"),
    (["nightly", "a.log", "--k", "1001"], "--k", "out of range"),
    (["nightly", "a.log", "--k", "three"], "--k", "not a number"),
    (["nightly", "a.log", "--baseline", "0"], "--baseline", "out of range"),
    (["nightly", "a.log", "--baseline=-3"], "--baseline", "out of range"),
    (["nightly", "a.log", "--baseline", "1.5"], "--baseline", "not an integer"),
    (["nightly", "a.log", "--baseline", "99999999999999999999"], "--baseline", "out of range"),
    # history
    (["history", "--last=-1"], "--last", "out of range"),
    (["history", "--last", "0"], "--last", "out of range"),
    (["history", "--machine", "0"], "--machine", "out of range"),
    (["history", "--machine", "one"], "--machine", "not an integer"),
    # run (refused before QEMU or a results directory)
    (["run", "--smp", "0"], "--smp", "out of range"),
    (["run", "--smp", "289"], "--smp", "out of range"),
    (["run", "--numa=-1"], "--numa", "out of range"),
    (["run", "--numa", "129"], "--numa", "out of range"),
    (["run", "--timeout", "nan"], "--timeout", "not a finite number"),
    (["run", "--timeout", "0"], "--timeout", "out of range"),
    (["run", "--timeout=-5"], "--timeout", "out of range"),
    (["run", "--mem", "1K"], "--mem", "out of range"),
    (["run", "--mem", "1536K"], "--mem", "out of range"),
    (["run", "--mem", "0"], "--mem", "out of range"),
    (["run", "--mem", "lots"], "--mem", "not a size"),
    (["run", "--mem", "32T"], "--mem", "out of range"),
    # snippet (its own checks, pmb/snippet.py: before anything is assembled or run)
    (["snippet", "nop", "--print-config", "--unroll", "0"], "--unroll", "expected a number"),
    (["snippet", "nop", "--print-config", "--loop=-1"], "--loop", "expected a number"),
    (["snippet", "nop", "--print-config", "--warmup", "nan"], "--warmup", "expected a number"),
    (["snippet", "nop", "--print-config", "--timeout-ms", "0"], "--timeout-ms", "expected a number"),
    (["snippet", "nop", "--print-config", "--timeout", "nan"], "--timeout", "positive number"),
    (["snippet", "nop", "--print-config", "--timeout=-1"], "--timeout", "positive number"),
    # repro (before any run of the hosted runner)
    (["repro", "--runs", "1"], "--runs", "out of range"),
    (["repro", "--runs", "1001"], "--runs", "out of range"),
    (["repro", "--runs", "two"], "--runs", "not an integer"),
    (["repro", "--taskset", "1-0"], "--taskset", "descending range"),
    (["repro", "--taskset", "cpu1"], "--taskset", "not a CPU list"),
]


@pytest.mark.parametrize("argv,opt,why", NUMERIC, ids=[" ".join(a[0:1] + a[-2:]) for a, _, _ in NUMERIC])
def test_numeric_options_are_checked_before_any_work(work, capsys, argv, opt, why):
    rc, out, err = main(argv + (["--db", "h.sqlite"] if argv[0] in ("nightly", "history") else [])
                        + (["--out", "res"] if argv[0] == "run" else []), capsys)
    assert rc == 2
    one_line(err)
    assert opt in err and why in err
    assert out == ""
    assert sorted(os.listdir(work)) == ["a.log"]     # no database, no results directory


def test_numbers_at_the_edges_of_their_ranges_are_accepted(work, capsys):
    # --k 0 leaves the floors (nightly.FLOOR_REL / FLOOR_ABS); --baseline 1 and --last 1 are the smallest counts
    assert main(["nightly", "a.log", "--db", "h.sqlite", "--k", "0", "--baseline", "1"], capsys)[0] == 0
    (work / "b.log").write_text(logs.full_log(seed=2))
    rc, out, _ = main(["nightly", "b.log", "--db", "h.sqlite", "--k", "0", "--baseline", "1"], capsys)
    assert rc == 0 and "baseline = median of up to 1 earlier good runs (1 found)" in out
    rc, out, _ = main(["history", "--db", "h.sqlite", "--last", "1", "--machine", "1"], capsys)
    assert rc == 0
    assert [l.split(" | ")[0] for l in out.splitlines() if l.startswith("| ") and l[2].isdigit()] == ["| 2"]


def test_argparse_errors_are_one_line_with_status_2(work, capsys):
    rc, _, err = main(["nightly", "a.log", "--frobnicate"], capsys)
    assert rc == 2 and one_line(err).startswith("pmubench: unrecognized arguments: --frobnicate")
    rc, _, err = main(["report"], capsys)
    assert rc == 2 and one_line(err) == ("pmubench report: the following arguments are required: run "
                                         "(see pmubench report --help)\n")


def test_history_machine_not_in_the_database(work, capsys):
    dbp = ingested(work, capsys)
    rc, out, err = main(["history", "--db", dbp, "--machine", "9"], capsys)
    assert rc == 1 and out == ""
    assert one_line(err) == "pmubench: --machine 9: no such machine in %s (machine ids: 1)\n" % dbp


# ---- --db: only the accepted forms -------------------------------------------------------------------------

REFUSED_DB = {
    "postgresql:/u@db.lab/pmubench": "must be followed by '//'",
    "postgresq://u@db.lab/pmubench": "unsupported scheme 'postgresq'",
    "postgresql//u@db.lab/pmubench": "':' after 'postgresql' missing",
    "POSTGRESQL://u@db.lab/pmubench": "lower case",
    "Postgres://u@db.lab/pmubench": "lower case",
    "sqlite:///x.db": "plain file path",
    "file:x.db": "plain file path",
    "mysql://u@db.lab/pmubench": "unsupported scheme 'mysql'",
    "": "empty",
}


@pytest.mark.parametrize("cmd", ["nightly", "history", "fleet"])
@pytest.mark.parametrize("target", sorted(REFUSED_DB))
def test_db_values_that_are_not_an_accepted_form_are_refused(work, capsys, cmd, target):
    argv = [cmd] + (["a.log"] if cmd == "nightly" else []) + ["--db", target]
    rc, out, err = main(argv, capsys)
    assert rc == 2 and out == ""
    one_line(err)
    assert err.startswith("pmubench: --db ") and REFUSED_DB[target] in err
    assert "accepted: postgresql://[USER[:PASSWORD]@][HOST][:PORT][/DBNAME]" in err and "SQLite file path" in err
    assert sorted(os.listdir(work)) == ["a.log"]     # nothing created in the working directory
    assert not os.path.exists("/x.db")


def test_db_refusal_masks_a_password(work, capsys):
    rc, _, err = main(["nightly", "a.log", "--db", "postgresql:/u:s3cret@db.lab/pmubench"], capsys)
    assert rc == 2 and "s3cret" not in one_line(err) and "u:***@db.lab" in err


def test_db_accepted_forms():
    assert db.check_target("postgresql://u@db.lab/pmubench") == "postgresql"
    assert db.check_target("postgres://u:pw@db.lab:5432/pmubench?sslmode=require") == "postgresql"
    for path in ("results/history.sqlite", "/var/lib/pmubench/h.sqlite", "./a:b.sqlite", "h.sqlite", "../x//y"):
        assert db.check_target(path) == "sqlite"
    with pytest.raises(db.DbError, match="lower case"):
        db.connect("POSTGRESQL://u@db.lab/pmubench")          # the library refuses as the command line does


def test_a_sqlite_path_with_a_colon_is_written_as_a_relative_path(work, capsys):
    assert main(["nightly", "a.log", "--db", "./lab:h.sqlite"], capsys)[0] == 0
    assert (work / "lab:h.sqlite").is_file()
    assert main(["nightly", "a.log", "--db", "lab:h.sqlite"], capsys)[0] == 2


def test_db_that_is_a_directory_or_not_a_database(work, capsys):
    (work / "d").mkdir()
    rc, _, err = main(["nightly", "a.log", "--db", "d"], capsys)
    assert rc == 2 and one_line(err) == "pmubench: --db d: is a directory (expected a SQLite file)\n"
    for cmd in (["nightly", "a.log"], ["history"], ["fleet"]):
        rc, _, err = main(cmd + ["--db", "a.log"], capsys)
        assert rc == 1 and one_line(err) == "pmubench: database a.log: file is not a database\n"


# ---- output paths: checked before the work --------------------------------------------------------------------

def test_nightly_junit_in_a_missing_directory_fails_before_the_ingest(work, capsys):
    rc, out, err = main(["nightly", "a.log", "--db", "h.sqlite", "--junit", "/missing/dir/j.xml"], capsys)
    assert rc == 2 and out == ""
    assert one_line(err) == "pmubench: --junit /missing/dir/j.xml: directory /missing/dir does not exist\n"
    assert not (work / "h.sqlite").exists()
    (work / "j").mkdir()
    rc, _, err = main(["nightly", "a.log", "--db", "h.sqlite", "--junit", "j"], capsys)
    assert rc == 2 and one_line(err) == "pmubench: --junit j: is a directory\n"
    assert not (work / "h.sqlite").exists()
    # a rejected log with a bad --junit: the option is refused first (the log's JUnit could not be written)
    (work / "bad.log").write_text("garbage\n")
    rc, _, err = main(["nightly", "bad.log", "--junit", "/missing/dir/j.xml"], capsys)
    assert rc == 2 and "--junit /missing/dir/j.xml" in one_line(err)


@pytest.mark.parametrize("argv,expect", [
    (["report", "a.log", "--html", "."], "--html .: is a directory"),
    (["report", "a.log", "--html", "/missing/dir/r.html"], "--html /missing/dir/r.html: directory /missing/dir "
                                                           "does not exist"),
    (["report", "a.log", "--html", "a.log/r.html"], "--html a.log/r.html: %s is not a directory"),
    (["report", "a.log", "--png", "a.log"], "--png a.log: exists and is not a directory"),
    (["report", "a.log", "--png", "a.log/plots"], "--png a.log/plots: %s is not a directory"),
    (["history", "--png", "."], "--png .: is a directory"),
    (["fleet", "--png", "/missing/x.png"], "--png /missing/x.png: directory /missing does not exist"),
    (["run", "--out", "a.log"], "--out a.log: exists and is not a directory"),
    (["usb", "--image", "."], "--image .: is a directory"),
    (["repro", "a.log", "a.log", "--save", "a.log"], "--save a.log: exists and is not a directory"),
])
def test_output_paths_are_checked_before_the_work(work, capsys, argv, expect):
    dbp = ingested(work, capsys) if argv[0] in ("history", "fleet") else None
    before = sorted(os.listdir(work))
    rc, out, err = main(argv + (["--db", dbp] if dbp else []), capsys)
    assert rc == 2 and out == ""
    assert one_line(err) == "pmubench: %s\n" % (expect % str(work / "a.log") if "%s" in expect else expect)
    assert sorted(os.listdir(work)) == before


def test_usb_device_and_image_together_are_refused(work, capsys):
    rc, out, err = main(["usb", "/dev/loop0", "--image", "out.img"], capsys)
    assert rc == 2 and out == ""
    assert one_line(err) == ("pmubench: usb: DEVICE /dev/loop0 and --image out.img given: write the device or "
                             "the file, not both\n")
    assert not (work / "out.img").exists()


@pytest.mark.parametrize("argv,expect", [
    (["nightly", "a.log", "--run", "."], "nightly: LOG a.log and --run . given: ingest one of them"),
    (["nightly"], "nightly needs LOG or --run DIR"),
    (["run", "--tcg", "--image", "a.log", "--disk", "a.log", "--out", "res"],
     "run: --image a.log and --disk a.log given: boot one of them"),
    (["run", "--tcg", "--numa", "3", "--mem", "1G", "--out", "res"],
     "--numa 3: memory (1024 MiB) does not split evenly into 3 NUMA nodes"),
])
def test_options_that_would_be_ignored_or_cannot_work_together_are_refused(work, capsys, argv, expect):
    rc, out, err = main(argv + (["--db", "h.sqlite"] if argv[0] == "nightly" else []), capsys)
    assert rc == 2 and out == ""
    assert one_line(err) == "pmubench: %s\n" % expect
    assert sorted(os.listdir(work)) == ["a.log"]


def test_history_figure_that_matches_nothing(work, capsys):
    dbp = ingested(work, capsys)
    for q in ("", "no_such_figure"):
        rc, out, err = main(["history", "--db", dbp, "--figure", q], capsys)
        assert rc == 1 and out == "" and one_line(err) == "pmubench: no figure matches %r\n" % q


def test_run_cfg_that_cannot_be_read_is_bad_input(work, capsys):
    (work / "bin.cfg").write_bytes(b"bench = latency\n\xff\xfe\n")
    rc, _, err = main(["run", "--tcg", "--cfg", "bin.cfg", "--out", "res"], capsys)
    assert rc == 2 and one_line(err) == "pmubench: --cfg bin.cfg: not UTF-8 text (byte 0xff at offset 16)\n"
    rc, _, err = main(["run", "--tcg", "--cfg", "none.cfg", "--out", "res"], capsys)
    assert rc == 2 and one_line(err) == "pmubench: --cfg none.cfg: cannot read: No such file or directory\n"
    assert not (work / "res").exists()


@pytest.mark.skipif(not os.path.exists("/dev/full"), reason="needs /dev/full")
def test_a_write_error_during_the_work_is_one_line_naming_the_file(work, capsys):
    # a full disk cannot be foreseen: the top-level handler names the file (exit 1)
    rc, out, err = main(["nightly", "a.log", "--db", "h.sqlite", "--junit", "/dev/full"], capsys)
    assert rc == 1 and "run 1 ingested" in out
    assert one_line(err) == "pmubench: /dev/full: No space left on device\n"


# ---- a read-only SQLite file or directory --------------------------------------------------------------------

def _unprivileged():
    """The command prefix that runs pmubench as a user the permission bits apply to (root ignores them)."""
    if os.geteuid() != 0:
        return []
    if shutil.which("runuser") is None:
        pytest.skip("running as root needs runuser (util-linux) to drop to the nobody user")
    import pwd
    try:
        pwd.getpwnam("nobody")
    except KeyError:
        pytest.skip("running as root needs the nobody user")
    return ["runuser", "-u", "nobody", "--"]


@pytest.fixture
def shared_dir():
    """A directory outside pytest's private tmp tree (which the nobody user cannot enter)."""
    d = tempfile.mkdtemp(prefix="pmb-ro-")
    os.chmod(d, 0o755)
    try:
        yield d
    finally:
        for root, dirs, _ in os.walk(d):
            for x in dirs:
                os.chmod(os.path.join(root, x), 0o755)
        os.chmod(d, 0o755)
        shutil.rmtree(d)


def pmubench_as_user(args, cwd):
    mpl = tempfile.mkdtemp(prefix="pmb-mpl-")      # matplotlib's cache (the nobody user has no home)
    os.chmod(mpl, 0o777)
    try:
        return subprocess.run(_unprivileged() + [sys.executable, PMUBENCH] + args, cwd=cwd, stdout=subprocess.PIPE,
                              stderr=subprocess.PIPE, universal_newlines=True, timeout=120,
                              env=dict(os.environ, MPLCONFIGDIR=mpl))
    finally:
        shutil.rmtree(mpl, ignore_errors=True)


def test_read_only_sqlite_file_and_directory(shared_dir):
    _unprivileged()            # skips early when the test cannot drop privileges
    d = shared_dir
    for s in (1, 2):
        with open(os.path.join(d, "l%d.log" % s), "w") as f:
            f.write(logs.full_log(seed=s))
        os.chmod(os.path.join(d, "l%d.log" % s), 0o644)
    dbp = os.path.join(d, "h.sqlite")
    assert cli.main(["nightly", os.path.join(d, "l1.log"), "--db", dbp, "--accel", "tcg"]) == 0

    # the file is read-only (its directory is not): reading works, ingesting is one line, exit 1
    os.chmod(d, 0o777)
    os.chmod(dbp, 0o444)
    r = pmubench_as_user(["history", "--db", dbp], d)
    assert r.returncode == 0 and r.stderr == ""
    r = pmubench_as_user(["nightly", "l2.log", "--db", dbp], d)
    assert r.returncode == 1
    assert one_line(r.stderr) == "pmubench: database %s: attempt to write a readonly database\n" % dbp

    # the directory is read-only (the file is not): SQLite cannot create its journal beside the file
    os.chmod(dbp, 0o666)
    os.chmod(d, 0o555)
    r = pmubench_as_user(["nightly", "l2.log", "--db", dbp], d)
    assert r.returncode == 1
    assert one_line(r.stderr).startswith("pmubench: database %s: " % dbp)
    assert "readonly database" in r.stderr or "unable to open database file" in r.stderr

    # a new database in a read-only directory
    new = os.path.join(d, "new.sqlite")
    r = pmubench_as_user(["nightly", "l2.log", "--db", new], d)
    assert r.returncode == 1
    assert one_line(r.stderr) == "pmubench: database %s: unable to open database file\n" % new
    assert not os.path.exists(new)
    # the history was not changed by any of this
    os.chmod(d, 0o755)
    c = db.connect(dbp)
    try:
        assert c.execute("SELECT COUNT(*) FROM runs").fetchone()[0] == 1
    finally:
        c.close()


# ---- PostgreSQL: connection errors in one line, no pipeline noise ----------------------------------------

def test_postgresql_connection_errors_are_one_line(work, capsys, pg_server):
    sock, user = pg_server
    nowhere = tempfile.mkdtemp(prefix="pmb-nosock-")
    try:
        url = "postgresql://%s:pw@/pmubench?host=%s" % (user, nowhere)
        rc, _, err = main(["nightly", "a.log", "--db", url], capsys)
        assert rc == 1
        assert one_line(err).startswith("pmubench: database postgresql://%s:***@/pmubench?host=%s: " % (user, nowhere))
        assert "pw@" not in err and "No such file or directory" in err
        for cmd in (["history"], ["fleet"]):
            rc, _, err = main(cmd + ["--db", url], capsys)
            assert rc == 1 and one_line(err).startswith("pmubench: database postgresql://")
    finally:
        shutil.rmtree(nowhere)
    rc, _, err = main(["nightly", "a.log", "--db", "postgresql://%s@/no_such_db?host=%s" % (user, sock)], capsys)
    assert rc == 1 and 'database "no_such_db" does not exist' in one_line(err)
    assert sorted(os.listdir(work)) == ["a.log"]


def test_postgresql_errors_during_the_work_are_one_line(work, capsys, pg_url):
    """A role that may read the history but not write it (the PostgreSQL side of a read-only SQLite file):
    history works, nightly's ingest fails in one line through the top-level handler."""
    import psycopg
    assert main(["nightly", "a.log", "--db", pg_url, "--accel", "tcg"], capsys)[0] == 0
    with psycopg.connect(pg_url, autocommit=True) as c:
        c.execute("DROP ROLE IF EXISTS pmb_reader")
        c.execute("CREATE ROLE pmb_reader LOGIN")
        c.execute("GRANT SELECT ON ALL TABLES IN SCHEMA public TO pmb_reader")
    reader = pg_url.replace("postgresql://pmb@", "postgresql://pmb_reader@")
    assert reader != pg_url
    assert main(["history", "--db", reader], capsys)[0] == 0
    (work / "b.log").write_text(logs.full_log(seed=2))
    rc, out, err = main(["nightly", "b.log", "--db", reader, "--accel", "tcg"], capsys)
    assert rc == 1 and out == ""
    assert one_line(err).startswith("pmubench: database %s: permission denied for table " % reader)


def test_failed_multi_row_insert_leaves_no_pipeline_noise_and_a_usable_connection(pg_url, caplog):
    """An error in the middle of a bulk insert (as a serialization failure between concurrent nightly jobs
    is, which db.transaction retries): psycopg's pipelined executemany logged 'error ignored terminating
    <psycopg.Pipeline [BAD]>: pipeline aborted' on stderr for each. Here a unique violation early in a
    20000-row insert, seven times (past psycopg's prepare threshold), then the good insert on the same
    connection."""
    import psycopg
    caplog.set_level(logging.WARNING, logger="psycopg")
    c = db.connect(pg_url)
    try:
        c.execute("CREATE TABLE bulk (k INTEGER PRIMARY KEY, v TEXT)")
        rows = [(i, "x%d" % i) for i in range(20000)]
        for _ in range(7):
            c.begin()
            with pytest.raises(psycopg.errors.UniqueViolation):
                c.executemany("INSERT INTO bulk (k, v) VALUES (?, ?)", rows[:10] + [(7, "again")] + rows[10:])
            c.rollback()
        db.transaction(c, lambda: c.executemany("INSERT INTO bulk (k, v) VALUES (?,?)", rows))
        assert tuple(c.execute("SELECT COUNT(*), SUM(k) FROM bulk").fetchone()) == (20000, sum(range(20000)))
    finally:
        c.close()
    noise = [r.getMessage() for r in caplog.records if r.name.startswith("psycopg") and r.levelno >= logging.WARNING]
    assert noise == []


def test_concurrent_nightly_jobs_print_no_pipeline_noise(tmp_path, pg_url):
    """8 nightly processes at once (3 boxes, 2 logs) into one new PostgreSQL database: every job exits 0 with
    nothing on stderr, and each (box, log) is stored once."""
    paths = []
    for s in (1, 2):
        p = tmp_path / ("l%d.log" % s)
        p.write_text(logs.full_log(seed=s))
        paths.append(str(p))
    jobs = [(paths[i % 2], "box%d" % (i % 3)) for i in range(8)]
    procs = [subprocess.Popen([sys.executable, PMUBENCH, "nightly", log, "--db", pg_url, "--host", host,
                               "--accel", "tcg"], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                              universal_newlines=True) for log, host in jobs]
    results = [(p.wait(timeout=300), p.stdout.read(), p.stderr.read()) for p in procs]
    for p in procs:
        p.stdout.close()
        p.stderr.close()
    for rc, out, err in results:
        assert (rc, err) == (0, ""), out
    c = db.connect(pg_url)
    try:
        assert c.execute("SELECT COUNT(*) FROM runs").fetchone()[0] == len(set(jobs))
    finally:
        c.close()


def test_output_paths_without_write_permission(shared_dir):
    """Permission bits of an output file and of its directory, checked before the work (as a user they apply
    to): an existing file is overwritten in place, so its directory need not be writable."""
    _unprivileged()
    d = shared_dir
    log = os.path.join(d, "a.log")
    with open(log, "w") as f:
        f.write(logs.full_log(seed=1))
    ro = os.path.join(d, "ro.html")
    open(ro, "w").close()
    os.chmod(ro, 0o444)
    r = pmubench_as_user(["report", "a.log", "--html", "ro.html"], d)
    assert (r.returncode, r.stdout) == (2, "") and one_line(r.stderr) == "pmubench: --html ro.html: not writable\n"
    r = pmubench_as_user(["report", "a.log", "--html", "new.html"], d)     # d is 0755, not the user's
    assert (r.returncode, r.stdout) == (2, "")
    assert one_line(r.stderr) == "pmubench: --html new.html: directory %s is not writable\n" % d
    r = pmubench_as_user(["report", "a.log", "--png", "plots"], d)
    assert r.returncode == 2
    assert one_line(r.stderr) == "pmubench: --png plots: cannot create it: directory %s is not writable\n" % d
    os.chmod(ro, 0o666)
    r = pmubench_as_user(["report", "a.log", "--html", "ro.html"], d)
    assert r.returncode == 0 and r.stderr == "" and os.path.getsize(ro) > 1000


# ---- inputs that used to be accepted silently or never ended -------------------------------------------------

def test_an_endless_device_as_a_log_is_refused_not_read_forever(work, capsys):
    """report /dev/zero: read up to the serial-log bound, then one line and exit 2 (it used to read forever)."""
    rc, out, err = main(["report", "/dev/zero"], capsys)
    assert rc == 2
    assert "/dev/zero" in one_line(err) and "not the serial log of a run" in err


def test_snippet_events_of_only_commas_are_refused(work, capsys):
    """--events ',,' names three empty events: refused, not read as 'no events'; '' still means none."""
    from pmb import snippet
    rc, out, err = main(["snippet", "nop", "--events", ",,"], capsys)
    assert rc == 2
    assert "--events" in one_line(err) and "empty event name" in err
    assert snippet.normalize_events("  ") is None
    with pytest.raises(snippet.SnippetError):
        snippet.normalize_events(" , ")
