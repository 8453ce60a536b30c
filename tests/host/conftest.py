"""pytest setup for the host-tool tests: make scripts/pmb and tests/host/logs.py importable."""
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
for p in (os.path.join(ROOT, "scripts"), HERE):
    if p not in sys.path:
        sys.path.insert(0, p)


# ---- a private PostgreSQL server for the history-database tests -----------------------------------
import glob
import itertools
import shutil
import subprocess
import tempfile

import pytest

PG_INSTALL = "apt-get install -y postgresql python3-psycopg"


def _pg_bin():
    for d in sorted(glob.glob("/usr/lib/postgresql/*/bin"), key=lambda p: int(p.split("/")[-2].split(".")[0]),
                    reverse=True):
        if os.path.exists(os.path.join(d, "initdb")) and os.path.exists(os.path.join(d, "pg_ctl")):
            return d
    return None


@pytest.fixture(scope="session")
def pg_server():
    """Start a throw-away PostgreSQL server on a Unix socket in a temp dir (never a TCP port) and
    yield (socket dir, superuser). Missing binaries FAIL (not skip): CI installs them (scripts/deps.sh).
    PostgreSQL refuses to run as root, so as root initdb/pg_ctl run as the `postgres` user."""
    bindir = _pg_bin()
    try:
        import psycopg  # noqa: F401
    except ImportError:
        bindir = None
    if bindir is None:
        pytest.fail("PostgreSQL server binaries or psycopg 3 missing; run: %s" % PG_INSTALL, pytrace=False)
    d = tempfile.mkdtemp(prefix="pmb-pg-")
    prefix = []
    if os.geteuid() == 0:
        import pwd
        try:
            pw = pwd.getpwnam("postgres")
        except KeyError:
            pytest.fail("running as root needs the postgres user (from the postgresql package); run: %s"
                        % PG_INSTALL, pytrace=False)
        os.chown(d, pw.pw_uid, pw.pw_gid)
        prefix = ["runuser", "-u", "postgres", "--"]
    os.chmod(d, 0o755)
    data = os.path.join(d, "data")
    user = "pmb"
    run = lambda args: subprocess.run(prefix + args, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                                      universal_newlines=True, cwd=d)
    r = run([os.path.join(bindir, "initdb"), "-D", data, "-U", user, "--auth=trust", "-E", "UTF8",
             "--no-locale"])
    if r.returncode != 0:
        shutil.rmtree(d, ignore_errors=True)
        pytest.fail("initdb failed:\n" + r.stdout, pytrace=False)
    r = run([os.path.join(bindir, "pg_ctl"), "-D", data, "-l", os.path.join(d, "server.log"), "-w", "-t", "60",
             "-o", "-k %s -c listen_addresses='' -c fsync=off -c max_connections=50" % d, "start"])
    if r.returncode != 0:
        log = open(os.path.join(d, "server.log")).read() if os.path.exists(os.path.join(d, "server.log")) else ""
        shutil.rmtree(d, ignore_errors=True)
        pytest.fail("pg_ctl start failed:\n%s\n%s" % (r.stdout, log), pytrace=False)
    try:
        yield d, user
    finally:
        run([os.path.join(bindir, "pg_ctl"), "-D", data, "-m", "immediate", "-w", "stop"])
        shutil.rmtree(d, ignore_errors=True)


_pg_dbs = itertools.count(1)


@pytest.fixture
def pg_url(pg_server):
    """A fresh, empty database on the private server: its postgresql:// URL."""
    import psycopg
    sock, user = pg_server
    name = "pmb_test_%d" % next(_pg_dbs)
    with psycopg.connect("postgresql://%s@/postgres?host=%s" % (user, sock), autocommit=True) as c:
        c.execute("CREATE DATABASE %s" % name)
    yield "postgresql://%s@/%s?host=%s" % (user, name, sock)
