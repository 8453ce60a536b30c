"""pmubench command line: run, parse, report, nightly, history, fleet, usb, snippet, repro. See docs/host-tools.md."""
import argparse
import datetime
import json
import math
import os
import re
import shutil
import sys
import time

from . import __version__, REPO_ROOT
from . import parse as parsemod

# Exit statuses (docs/host-tools.md, "Errors and exit statuses"): 1 the checked thing failed or the work could
# not be done (a database or file error on the way); 2 bad input: the command line (argparse, a number out of
# range, a --db that is not one of the accepted forms, an output path that cannot be written) or a rejected log.
EXIT_OK, EXIT_FAIL, EXIT_BAD_LOG, EXIT_TIMEOUT, EXIT_INTERRUPTED = 0, 1, 2, 124, 130
EXIT_USAGE = 2


def err(msg):
    sys.stderr.write("pmubench: %s\n" % msg)


def warn_run(run):
    for w in run.warnings:
        sys.stderr.write("pmubench: warning: %s\n" % w)


# ---- run -------------------------------------------------------------------------------------

class Progress:
    """Echo serial output: human-readable lines as they are (ANSI removed, leading spaces kept, so table
    columns line up as in serial.log). Without -q the image's own lines are the progress, and a record
    count is said only after each "== bench ... done" line, never between a table's lines; with -q a
    progress line whenever the record type changes."""

    def __init__(self, out, quiet=False, verbose=False):
        self.out = out
        self.quiet = quiet
        self.verbose = verbose
        self.t0 = time.monotonic()
        self.cur = None
        self.count = 0
        self.counts = {}
        self.since = {}            # record types since the last "== bench" line (without -q)

    def _flush_type(self):
        if self.cur is not None and self.count > 1:
            self._say("  %s: %d records" % (self.cur, self.count))

    def _say(self, s):
        self.out.write("[%7.1fs] %s\n" % (time.monotonic() - self.t0, s))
        self.out.flush()

    def __call__(self, line):
        text = parsemod.clean_text(line).rstrip()
        if not text.strip():
            return
        if text.lstrip().startswith("{"):
            text = text.strip()
            try:
                t = json.loads(text).get("type", "?")
            except (ValueError, AttributeError):
                t = "?"
            self.counts[t] = self.counts.get(t, 0) + 1
            if self.verbose:
                self.out.write(text + "\n")
            if not self.quiet:
                self.since[t] = self.since.get(t, 0) + 1
                if t == "end":
                    self._say("end record after %d records" % (sum(self.counts.values()) - self.counts["end"]))
                return
            if t != self.cur:
                self._flush_type()
                self.cur, self.count = t, 0
                self._say("> %s" % t)
            self.count += 1
            if t == "end":
                self._flush_type()
            return
        if not self.quiet:
            self.out.write(text + "\n")
            if text.startswith("== bench ") and " done in " in text and self.since:
                self._say("records: " + ", ".join("%s %d" % kv for kv in self.since.items()))
                self.since = {}
            self.out.flush()


def _results_dir(base):
    stamp = datetime.datetime.now().strftime("%Y%m%d-%H%M%S")
    d = os.path.join(base, stamp)
    i = 1
    while os.path.exists(d):
        i += 1
        d = os.path.join(base, "%s-%d" % (stamp, i))
    os.makedirs(d)
    return d


def _copy_latest(base, d):
    latest = os.path.join(base, "latest")
    tmp = os.path.join(base, ".latest.tmp")
    shutil.rmtree(tmp, ignore_errors=True)
    shutil.copytree(d, tmp)
    if os.path.islink(latest) or os.path.isfile(latest):
        os.unlink(latest)
    elif os.path.isdir(latest):
        shutil.rmtree(latest)
    os.rename(tmp, latest)


def cmd_run(a):
    from . import qemu
    accel = "kvm" if a.kvm else "tcg" if a.tcg else "auto"
    if a.disk is not None and a.image is not None:
        err("run: --image %s and --disk %s given: boot one of them" % (a.image, a.disk))
        return EXIT_USAGE
    try:
        qemu.numa_args(a.numa, a.smp, qemu.parse_size(a.mem))
    except ValueError as e:
        err("--numa %d: %s" % (a.numa, e))
        return EXIT_USAGE
    cfg_text = None
    if a.cfg is not None:       # bad input before the KVM probe and before anything is created
        try:
            with open(a.cfg, encoding="utf-8") as f:
                cfg_text = f.read()
        except OSError as e:
            err("--cfg %s: cannot read: %s" % (a.cfg, e.strerror))
            return EXIT_USAGE
        except UnicodeDecodeError as e:
            err("--cfg %s: not UTF-8 text (byte 0x%02x at offset %d)" % (a.cfg, e.object[e.start], e.start))
            return EXIT_USAGE
    try:
        chosen, why = qemu.choose_accel(accel)
    except qemu.QemuError as e:
        err(str(e))
        return EXIT_FAIL
    print("pmubench: accelerator %s (%s)" % (chosen, why), flush=True)
    if why.startswith("KVM unusable"):
        print("pmubench: next step for KVM: %s" % qemu.kvm_next_step(why), flush=True)
    if chosen == "tcg":
        print("pmubench: note: %s" % qemu.TCG_NOTE, flush=True)
    d = _results_dir(a.out)
    log_path = os.path.join(d, "serial.log")
    progress = Progress(sys.stdout, a.quiet, a.verbose)
    try:
        res = qemu.boot(image=None if a.disk else a.image or qemu.DEFAULT_IMAGE, disk=a.disk, cpu=a.cpu,
                        smp=a.smp, mem=a.mem, numa=a.numa, cfg_text=cfg_text, args=a.args, accel=chosen,
                        timeout=a.timeout, on_line=progress, log_path=log_path,
                        firmware="bios" if a.bios else "uefi", quick=not a.full_firmware_start,
                        vars_cache=qemu.VARS_CACHE_DIR)
    except (qemu.QemuError, ValueError) as e:
        err(str(e))
        shutil.rmtree(d, ignore_errors=True)
        return EXIT_FAIL
    meta = {"tool_version": __version__, "accel": res.accel, "accel_reason": why, "status": res.status,
            "reason": res.reason, "exit_code": res.exit_code, "seconds": round(res.seconds, 2),
            "cmdline": res.cmdline, "image": a.disk or a.image or qemu.DEFAULT_IMAGE, "args": a.args,
            "firmware_start": "full" if a.full_firmware_start or a.bios else "quick"}
    print("pmubench: QEMU finished: %s (%s) after %.1fs" % (res.status, res.reason, res.seconds))
    if res.stderr.strip():
        sys.stderr.write(res.stderr)
    rc = EXIT_OK
    try:
        run = parsemod.parse_log(res.raw)
    except parsemod.LogError as e:
        err("log rejected: %s" % e.reason)
        meta["log_error"] = e.reason
        rc = EXIT_TIMEOUT if res.status == "timeout" else EXIT_BAD_LOG
        run = None
    if run is not None:
        warn_run(run)
        with open(os.path.join(d, "records.jsonl"), "w", encoding="utf-8", newline="\n",
                  errors="surrogateescape") as f:
            f.write(run.jsonl())
        meta.update(records=len(run.records), crc32=run.crc32, run_status=run.status)
        print("pmubench: verified %d records, crc32 %s, run status %s" % (len(run.records), run.crc32, run.status))
        if run.status != "ok" or res.status not in ("ok", "unknown"):
            rc = EXIT_FAIL
        if not a.no_report:
            meta["report"] = _write_run_report(run, d, meta)
    with open(os.path.join(d, "boot.json"), "w", encoding="utf-8") as f:
        json.dump(meta, f, indent=1)
        f.write("\n")
    _copy_latest(a.out, d)
    print("pmubench: results in %s (copied to %s)" % (d, os.path.join(a.out, "latest")))
    if meta.get("report"):
        print("report: %s" % os.path.join(d, meta["report"]))
    return rc


def _write_run_report(run, d, meta=None):
    """report.html (self-contained), report.md and plots/*.png in the results directory d; the HTML's
    name, or None after saying why not (a report that cannot be drawn never fails the run). meta: what
    boot.json will hold (the accelerator and why), for the report's banner."""
    from . import report
    try:
        doc = report.build(run, want_plots=True, boot=meta)
        if doc.images():
            report.write_pngs(doc, os.path.join(d, "plots"))
        with open(os.path.join(d, "report.md"), "w", encoding="utf-8") as f:
            f.write(report.to_markdown(doc, "plots" if doc.images() else None))
        with open(os.path.join(d, "report.html"), "w", encoding="utf-8") as f:
            f.write(report.to_html(doc))
    except Exception as e:     # noqa: BLE001 - the run's records are saved; the report is an extra
        err("report not written: %s: %s" % (type(e).__name__, e))
        return None
    return "report.html"


def _write_output(path, data):
    """Write bytes, or text as UTF-8, to an output file; an OSError names the file (a write error such
    as ENOSPC carries no file name of its own)."""
    if isinstance(data, str):
        data = data.encode("utf-8")
    try:
        with open(path, "wb") as f:
            f.write(data)
    except OSError as e:
        raise OSError(e.errno, e.strerror or str(e), path) from None


# ---- parse -----------------------------------------------------------------------------------

def _load(path):
    try:
        run = parsemod.load_run(path)
    except parsemod.LogError as e:
        err(e.reason)
        return None
    warn_run(run)
    return run


def cmd_parse(a):
    run = _load(a.log)
    if run is None:
        return EXIT_BAD_LOG
    if a.csv:
        sys.stdout.write(parsemod.to_csv(run))
    elif a.json:
        sys.stdout.write(run.jsonl())
    else:
        print("run: %d records, status %s, crc32 %s (verified), starting at line %d"
              % (len(run.records), run.status, run.crc32, run.first_line))
        if run.incomplete_boots:
            print("earlier incomplete boots: %d (run records without an end record before the next run)"
                  % run.incomplete_boots)
        for t, n in run.types().items():
            print("  %-24s %d" % (t, n))
    return EXIT_OK


# ---- report ----------------------------------------------------------------------------------

def _boot_meta(path):
    """The boot.json beside a log or in a results directory ({} when there is none or it is unreadable)."""
    d = path if os.path.isdir(path) else os.path.dirname(path)
    try:
        with open(os.path.join(d, "boot.json"), encoding="utf-8") as f:
            meta = json.load(f)
        return meta if isinstance(meta, dict) else {}
    except (OSError, ValueError):
        return {}


def cmd_report(a):
    from . import report
    run = _load(a.run)
    if run is None:
        return EXIT_BAD_LOG
    doc = report.build(run, want_plots=bool(a.html or a.png), boot=_boot_meta(a.run))
    if a.png:
        report.write_pngs(doc, a.png)
    sys.stdout.write(report.to_markdown(doc, a.png))
    if a.html:
        _write_output(a.html, report.to_html(doc))
    return EXIT_OK


# ---- nightly ---------------------------------------------------------------------------------

def _accel_for(path, explicit, run):
    if explicit:
        return explicit
    d = path if os.path.isdir(path) else os.path.dirname(path)
    meta = os.path.join(d, "boot.json")
    if os.path.isfile(meta):
        try:
            with open(meta, encoding="utf-8") as f:
                acc = json.load(f).get("accel")
            if acc:
                return acc
        except (OSError, ValueError):
            pass
    return str(run.run.get("accel") or "unknown")


def cmd_nightly(a):
    from . import db, figures, nightly
    if a.run is not None and a.log is not None:
        err("nightly: LOG %s and --run %s given: ingest one of them" % (a.log, a.run))
        return EXIT_USAGE
    src = a.run or a.log
    if not src:
        err("nightly needs LOG or --run DIR")
        return EXIT_USAGE
    try:
        run = parsemod.load_run(src)
    except parsemod.LogError as e:
        err("log rejected: %s" % e.reason)
        if a.junit:
            _write_output(a.junit, nightly.junit([], None, None, None, log_error=e.reason))
        return EXIT_BAD_LOG
    warn_run(run)
    accel = _accel_for(src, a.accel, run)
    try:
        conn = db.connect(a.db)
    except (OSError,) + db.errors() as e:
        err("database %s: %s" % (_db_name(a.db), e))
        return EXIT_FAIL
    try:
        run_id, created = db.ingest(conn, run, accel, os.path.abspath(src), host=a.host)
        results = nightly.compare(conn, run_id, a.baseline, a.k)
        if created:
            db.save_comparisons(conn, run_id, results)
        blockers = db.baseline_blockers(conn, run_id)
        skipped = db.skipped_baseline_runs(conn, run_id, a.baseline)
    finally:
        conn.close()
    ident = db.identity(run, accel, a.host)
    print("nightly: run %d %s (crc32 %s, status %s, machine %s)"
          % (run_id, "ingested" if created else "already in the database", run.crc32, run.status,
             db.identity_key(ident)))
    if run.incomplete_boots:
        print("nightly: incomplete_boots %d: the log holds earlier boots that did not complete" % run.incomplete_boots)
    base_n = max((r.baseline_runs for r in results), default=0)
    print("nightly: baseline = median of up to %d earlier good runs (%d found)" % (a.baseline, base_n))
    if skipped:
        print("nightly: not a baseline: run(s) %s (smp_timeout or crash records)" % ", ".join(map(str, skipped)))
    why_not = nightly.not_a_baseline_reason(run.status, blockers)
    if why_not:
        print("nightly: this run will never be a baseline: %s" % why_not)
    for line in nightly.summary_lines(results):
        print(line)
    if a.junit:
        _write_output(a.junit, nightly.junit(results, run.status, ident, run.crc32,
                                             incomplete_boots=run.incomplete_boots, not_a_baseline=why_not,
                                             skipped_baselines=skipped, figures=figures.extract(run)))
    bad = [r for r in results if r.verdict == "regressed"]
    if run.status != "ok":
        err("run ended with status %s" % run.status)
    if bad or run.status != "ok":
        return EXIT_FAIL
    return EXIT_OK


# ---- history ---------------------------------------------------------------------------------

def _db_name(target):
    """The database as messages name it: a URL (or a value that looks like one) without its password."""
    return re.sub(r"([^:/@]*):[^:@/]*@", r"\1:***@", target) if "@" in str(target) else str(target)


def _open_existing(target):
    from . import db
    if not db.is_url(target) and not os.path.exists(target):
        err("no database at %s" % target)
        return None
    try:
        return db.connect(target)
    except (OSError,) + db.errors() as e:
        err("database %s: %s" % (_db_name(target), e))
        return None


def _figure_names(conn, figure):
    """The figure names --figure selects (all when None), or [] after saying why."""
    from . import history
    names = history.select_names(conn, figure)
    if not names:
        near = history.suggestions(conn, figure) if figure is not None else []
        err(("no figure matches %r%s" % (figure, "; did you mean: " + ", ".join(near) if near else ""))
            if figure is not None else "the database holds no figures")
    return names


def cmd_history(a):
    from . import db, history
    conn = _open_existing(a.db)
    if conn is None:
        return EXIT_FAIL
    try:
        names = _figure_names(conn, a.figure)
        if not names:
            return EXIT_FAIL
        ids = [m["id"] for m in db.machines(conn)]
        if a.machine is not None and a.machine not in ids:
            err("--machine %d: no such machine in %s (machine ids: %s)"
                % (a.machine, _db_name(a.db), ", ".join(map(str, ids)) or "none"))
            return EXIT_FAIL
        machine = a.machine
        if machine is None:       # runs of different machines are not one trend: the newest run's machine
            machine, n_machines = history.newest_machine(conn)
            if n_machines > 1:
                err("note: runs of %s only (%d machines in the database; --machine ID picks another)"
                    % (history.machine_names(conn).get(machine, machine), n_machines))
        runs, values, verdicts = history.trend(conn, names, machine, a.last)
        bands = history.bands(conn, names, runs) if a.png else None
        quality = history.qualities(conn, names, runs)
        mnames = history.machine_names(conn)
    finally:
        conn.close()
    sys.stdout.write(history.table(runs, names, values, verdicts, quality, mnames))
    if a.png:
        png = history.plot(runs, names, values, "pmubench history: %s" % (a.figure or "Table 2 rows"), bands)
        _write_output(a.png, png)
    return EXIT_OK


# ---- fleet -----------------------------------------------------------------------------------

def cmd_fleet(a):
    from . import fleet
    conn = _open_existing(a.db)
    if conn is None:
        return EXIT_FAIL
    try:
        names = _figure_names(conn, a.figure)
        if not names:
            return EXIT_FAIL
        ms = fleet.build(conn, names)
    finally:
        conn.close()
    sys.stdout.write(fleet.table(ms, names))
    for line in fleet.summary_lines(ms, names):
        print(line)
    if a.png:
        _write_output(a.png, fleet.plot(ms, names))
    return EXIT_OK


# ---- usb -------------------------------------------------------------------------------------

def cmd_usb(a):
    from . import usb
    if a.device and a.image_out:
        err("usb: DEVICE %s and --image %s given: write the device or the file, not both" % (a.device, a.image_out))
        return EXIT_USAGE
    dest = a.image_out or a.device
    if not dest:
        err("usb needs DEVICE or --image FILE")
        return EXIT_USAGE
    try:
        n = usb.write_image(a.source, dest, force=a.force, to_file=bool(a.image_out),
                            out=lambda s: sys.stderr.write("pmubench: %s\n" % s))
    except usb.UsbError as e:
        err(str(e))
        return EXIT_FAIL
    except OSError as e:
        err("%s: %s" % (dest, e.strerror or e))
        return EXIT_FAIL
    print("pmubench: wrote %d bytes to %s" % (n, dest))
    return EXIT_OK


# ---- snippet ---------------------------------------------------------------------------------

def cmd_repro(a):
    from . import repro
    return repro.command(a)


def cmd_snippet(a):
    from . import snippet
    return snippet.command(a)


# ---- argparse --------------------------------------------------------------------------------

class Parser(argparse.ArgumentParser):
    """argparse with its errors in one line: `pmubench nightly: argument --k: ... (pmubench nightly --help)`,
    exit status 2 (EXIT_USAGE). Subcommand parsers are of the same class (add_subparsers' default)."""

    def error(self, message):
        self.exit(EXIT_USAGE, "%s: %s (see %s --help)\n" % (self.prog, message, self.prog))


def integer(lo, hi):
    """argparse type: an integer in [lo, hi]."""
    def conv(text):
        try:
            v = int(text, 10)
        except ValueError:
            raise argparse.ArgumentTypeError("'%s' is not an integer (expected %d..%d)" % (text, lo, hi)) from None
        if not lo <= v <= hi:
            raise argparse.ArgumentTypeError("%d is out of range (expected %d..%d)" % (v, lo, hi))
        return v
    return conv


def number(lo, hi, lo_open=False):
    """argparse type: a finite number in [lo, hi] ((lo, hi] with lo_open); nan and inf are refused."""
    def conv(text):
        want = "a number %s %g and <= %g" % (">" if lo_open else ">=", lo, hi)
        try:
            v = float(text)
        except ValueError:
            raise argparse.ArgumentTypeError("'%s' is not a number (expected %s)" % (text, want)) from None
        if not math.isfinite(v):
            raise argparse.ArgumentTypeError("'%s' is not a finite number (expected %s)" % (text, want))
        if v < lo or v > hi or (lo_open and v == lo):
            raise argparse.ArgumentTypeError("'%s' is out of range (expected %s)" % (text, want))
        return v
    return conv


def mem_size(text):
    """argparse type for run --mem: a size QEMU takes (512M, 2G), at least 64 MiB, whole MiB; kept as given."""
    from .qemu import parse_size
    try:
        v = parse_size(text)
    except ValueError:
        raise argparse.ArgumentTypeError("'%s' is not a size (expected e.g. 512M or 2G)" % text) from None
    if v < 64 << 20 or v % (1 << 20) or v > 16 << 40:
        raise argparse.ArgumentTypeError("'%s' is out of range (expected whole MiB from 64M to 16T)" % text)
    return text


# Ranges of the numeric options (docs/host-tools.md): wide enough for any real use, narrow enough that the
# value cannot switch a check off (--k inf) or overflow a query (--baseline 1e30).
SMP_MAX = 288          # QEMU's q35 machine
NUMA_MAX = 128         # QEMU's MAX_NODES
TIMEOUT_MAX_S = 1e6
COUNT_MAX = 1000000    # --baseline, --last, --machine
K_MAX = 1000.0


def _check_output(path, kind):
    """Why `path` cannot be written as an output `kind` ('file', or 'dir': created with its parents), or
    None. Checked before any work so that e.g. nightly never ingests a run whose JUnit it cannot write."""
    if path == "":
        return "empty path"
    if kind == "file":
        if os.path.isdir(path):
            return "is a directory"
        if os.path.exists(path):       # overwritten in place: its directory need not be writable
            return None if os.access(path, os.W_OK) else "not writable"
        parent = os.path.dirname(os.path.abspath(path))
        if not os.path.exists(parent):
            return "directory %s does not exist" % parent
        if not os.path.isdir(parent):
            return "%s is not a directory" % parent
        if not os.access(parent, os.W_OK | os.X_OK):
            return "directory %s is not writable" % parent
        return None
    if os.path.exists(path):
        if not os.path.isdir(path):
            return "exists and is not a directory"
        if not os.access(path, os.W_OK | os.X_OK):
            return "directory not writable"
        return None
    anc = os.path.dirname(os.path.abspath(path))
    while not os.path.exists(anc):
        anc = os.path.dirname(anc)
    if not os.path.isdir(anc):
        return "%s is not a directory" % anc
    if not os.access(anc, os.W_OK | os.X_OK):
        return "cannot create it: directory %s is not writable" % anc
    return None


def preflight(a):
    """Checks of the parsed command line before any work: the --db form and the output paths (the
    subparser's `outputs`: (option, attribute, kind)). -> None, or the one-line error (exit 2)."""
    from . import db
    if getattr(a, "db", None) is not None:
        try:
            backend = db.check_target(a.db)
        except db.DbError as e:
            return "--db %s: %s" % (_db_name(a.db) or "''", e)
        if backend == "sqlite" and os.path.isdir(a.db):
            return "--db %s: is a directory (expected a SQLite file)" % a.db
    for opt, attr, kind in getattr(a, "outputs", ()):
        path = getattr(a, attr, None)
        if path is None:
            continue
        why = _check_output(path, kind)
        if why:
            return "%s %s: %s" % (opt, path, why)
    return None


def build_parser():
    from .db import DEFAULT_DB
    from .qemu import DEFAULT_IMAGE
    from .usb import DEFAULT_IMAGE as USB_IMAGE
    p = Parser(prog="pmubench", description="pmubench host tools (docs/host-tools.md)")
    p.add_argument("--version", action="version", version="pmubench " + __version__)
    sub = p.add_subparsers(dest="cmd", required=True)

    r = sub.add_parser("run", help="boot the image under QEMU/OVMF and save verified results")
    g = r.add_mutually_exclusive_group()
    g.add_argument("--kvm", action="store_true", help="require KVM (fail if it does not work)")
    g.add_argument("--tcg", action="store_true", help="force TCG (default: KVM if it works, else TCG)")
    r.add_argument("--smp", type=integer(1, SMP_MAX), default=1, help="CPUs, 1..%d (default 1)" % SMP_MAX)
    r.add_argument("--mem", type=mem_size, default="1G", help="guest memory, e.g. 512M, 2G (default 1G)")
    r.add_argument("--numa", type=integer(0, NUMA_MAX), default=0,
                   help="NUMA nodes, 0..%d (2: two nodes, half the CPUs each)" % NUMA_MAX)
    r.add_argument("--cpu", default=None, help="QEMU CPU model (default: max under TCG, host,pmu=on under KVM)")
    r.add_argument("--cfg", help="config file put on the ESP as pmubench.cfg")
    r.add_argument("--args", default=None, help='load options, e.g. "bench=latency seed=2" (via startup.nsh)')
    r.add_argument("--image", help="EFI image (default %s)" % os.path.relpath(DEFAULT_IMAGE, REPO_ROOT))
    r.add_argument("--disk", default=None, help="boot this raw disk image (e.g. the USB image) instead")
    r.add_argument("--bios", action="store_true",
                   help="boot --disk (the make usb image) under SeaBIOS through GRUB/Multiboot2 instead of OVMF; "
                        "the configuration goes in --cfg")
    r.add_argument("--full-firmware-start", action="store_true",
                   help="boot with the 4 MiB OVMF, a fresh variable store and QEMU's default devices instead of "
                        "the quick firmware start (docs/host-tools.md, run)")
    r.add_argument("--out", default=os.path.join(REPO_ROOT, "results"), help="results directory")
    r.add_argument("--timeout", type=number(0, TIMEOUT_MAX_S, lo_open=True), default=600,
                   help="hard timeout in seconds (default 600)")
    r.add_argument("-q", "--quiet", action="store_true", help="do not echo firmware/human-readable lines")
    r.add_argument("-v", "--verbose", action="store_true", help="also echo the raw JSON records")
    r.add_argument("--no-report", action="store_true",
                   help="do not write report.html / report.md / plots/ into the results directory")
    r.set_defaults(fn=cmd_run, outputs=(("--out", "out", "dir"),))

    r = sub.add_parser("parse", help="verify and extract the last complete run from a serial log")
    r.add_argument("log")
    g = r.add_mutually_exclusive_group()
    g.add_argument("--json", action="store_true", help="print the run's record lines (JSON Lines)")
    g.add_argument("--csv", action="store_true", help="print one CSV block per record type")
    r.set_defaults(fn=cmd_parse)

    r = sub.add_parser("report", help="Markdown report (and HTML/PNG) for a run")
    r.add_argument("run", help="serial log, records.jsonl or results directory")
    r.add_argument("--html", help="write a self-contained HTML report here")
    r.add_argument("--png", help="write the plots as PNG files into this directory")
    r.set_defaults(fn=cmd_report, outputs=(("--html", "html", "file"), ("--png", "png", "dir")))

    r = sub.add_parser("nightly", help="ingest a run, compare with the baseline, write JUnit")
    r.add_argument("log", nargs="?")
    r.add_argument("--run", help="a results directory instead of LOG")
    r.add_argument("--db", default=DEFAULT_DB, help="SQLite path (default %(default)s) or postgresql:// URL")
    r.add_argument("--host", help="the box's name, part of the machine identity (default: the run record's "
                                  "hostname/host, else none)")
    r.add_argument("--baseline", type=integer(1, COUNT_MAX), default=5,
                   help="baseline = median of the last N good runs, N >= 1 (5)")
    r.add_argument("--junit", help="write JUnit XML here")
    r.add_argument("--accel", help="accelerator for the machine identity (default: boot.json, else unknown)")
    r.add_argument("--k", type=number(0, K_MAX), default=3.0,
                   help="tolerance multiplier on the measured spread, 0..%g (3)" % K_MAX)
    r.set_defaults(fn=cmd_nightly, outputs=(("--junit", "junit", "file"),))

    r = sub.add_parser("history", help="trend table (and PNG) of figures in the database")
    r.add_argument("--db", default=DEFAULT_DB, help="SQLite path (default %(default)s) or postgresql:// URL")
    r.add_argument("--figure", help="figure name, prefix or component, e.g. L3_unshared")
    r.add_argument("--machine", type=integer(1, COUNT_MAX), help="only this machine id")
    r.add_argument("--last", type=integer(1, COUNT_MAX), help="only the last N runs, N >= 1")
    r.add_argument("--png", help="write a trend plot here")
    r.set_defaults(fn=cmd_history, outputs=(("--png", "png", "file"),))

    r = sub.add_parser("fleet", help="each machine's deviation from the median of its identical machines")
    r.add_argument("--db", default=DEFAULT_DB, help="SQLite path (default %(default)s) or postgresql:// URL")
    r.add_argument("--figure", help="figure name, prefix or component (default: the Table 2 rows)")
    r.add_argument("--png", help="write a heat map here")
    r.set_defaults(fn=cmd_fleet, outputs=(("--png", "png", "file"),))

    r = sub.add_parser("usb", help="write the USB image to a removable device or a file")
    r.add_argument("device", nargs="?")
    r.add_argument("--image", dest="image_out", metavar="FILE", help="copy the image to FILE instead")
    r.add_argument("--source", default=USB_IMAGE, help="image to write (default build/pmubench-usb.img)")
    r.add_argument("--force", action="store_true", help="write even a mounted or non-removable device")
    r.set_defaults(fn=cmd_usb, outputs=(("--image", "image_out", "file"),))

    from .snippet import add_arguments as snippet_arguments
    r = sub.add_parser("snippet", help="assemble instruction snippets, run them (hosted or under QEMU), print "
                                       "cycles per iteration")
    snippet_arguments(r)
    r.set_defaults(fn=cmd_snippet)

    from .repro import add_arguments as repro_arguments
    r = sub.add_parser("repro", help="how often an ok figure's 95 %% CI holds the other runs' medians, per figure "
                                     "class, over N logs or N runs of the hosted runner")
    repro_arguments(r)
    r.set_defaults(fn=cmd_repro)
    return p


def main(argv=None):
    """Parse, check (preflight), run the subcommand. Whatever a user can cause ends in one line on stderr
    and a documented exit status: argparse and preflight errors 2; a database or file error met on the way
    (a read-only database, a server that refuses the connection, a full disk) 1, naming the database or
    the file."""
    from . import db
    a = build_parser().parse_args(argv)
    why = preflight(a)
    if why:
        err(why)
        return EXIT_USAGE
    try:
        return a.fn(a)
    except KeyboardInterrupt:
        err("interrupted")
        return EXIT_INTERRUPTED
    except BrokenPipeError:
        return EXIT_OK
    except db.errors() as e:
        where = _db_name(a.db) if getattr(a, "db", None) is not None else "?"
        err("database %s: %s" % (where, db.one_line(e) or type(e).__name__))
        return EXIT_FAIL
    except OSError as e:
        what = " -> ".join(str(f) for f in (e.filename, e.filename2) if f is not None)
        err("%s%s" % (what + ": " if what else "", e.strerror or db.one_line(e) or type(e).__name__))
        return EXIT_FAIL
