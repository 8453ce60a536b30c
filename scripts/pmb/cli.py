"""pmubench command line: run, parse, report, nightly, history, fleet, usb, snippet, repro. See docs/host-tools.md."""
import argparse
import datetime
import json
import os
import shutil
import sys
import time

from . import __version__, REPO_ROOT
from . import parse as parsemod

EXIT_OK, EXIT_FAIL, EXIT_BAD_LOG, EXIT_TIMEOUT = 0, 1, 2, 124


def err(msg):
    sys.stderr.write("pmubench: %s\n" % msg)


def warn_run(run):
    for w in run.warnings:
        sys.stderr.write("pmubench: warning: %s\n" % w)


# ---- run -------------------------------------------------------------------------------------

class Progress:
    """Echo serial output: human-readable lines as they are (ANSI removed), and for JSON records a
    progress line whenever the record type changes, instead of the raw JSON."""

    def __init__(self, out, quiet=False, verbose=False):
        self.out = out
        self.quiet = quiet
        self.verbose = verbose
        self.t0 = time.monotonic()
        self.cur = None
        self.count = 0
        self.counts = {}

    def _flush_type(self):
        if self.cur is not None and self.count > 1:
            self._say("  %s: %d records" % (self.cur, self.count))

    def _say(self, s):
        self.out.write("[%7.1fs] %s\n" % (time.monotonic() - self.t0, s))
        self.out.flush()

    def __call__(self, line):
        text = parsemod.clean_text(line).strip()
        if not text:
            return
        if text.startswith("{"):
            try:
                t = json.loads(text).get("type", "?")
            except (ValueError, AttributeError):
                t = "?"
            self.counts[t] = self.counts.get(t, 0) + 1
            if self.verbose:
                self.out.write(text + "\n")
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
    try:
        chosen, why = qemu.choose_accel(accel)
    except qemu.QemuError as e:
        err(str(e))
        return EXIT_FAIL
    print("pmubench: accelerator %s (%s)" % (chosen, why), flush=True)
    cfg_text = None
    if a.cfg:
        try:
            with open(a.cfg, encoding="utf-8") as f:
                cfg_text = f.read()
        except OSError as e:
            err("cannot read %s: %s" % (a.cfg, e.strerror))
            return EXIT_FAIL
    d = _results_dir(a.out)
    log_path = os.path.join(d, "serial.log")
    progress = Progress(sys.stdout, a.quiet, a.verbose)
    try:
        res = qemu.boot(image=a.image if not a.disk else None, disk=a.disk, cpu=a.cpu, smp=a.smp,
                        mem=a.mem, numa=a.numa, cfg_text=cfg_text, args=a.args, accel=chosen,
                        timeout=a.timeout, on_line=progress, log_path=log_path,
                        firmware="bios" if a.bios else "uefi")
    except (qemu.QemuError, ValueError) as e:
        err(str(e))
        shutil.rmtree(d, ignore_errors=True)
        return EXIT_FAIL
    meta = {"tool_version": __version__, "accel": res.accel, "accel_reason": why, "status": res.status,
            "reason": res.reason, "exit_code": res.exit_code, "seconds": round(res.seconds, 2),
            "cmdline": res.cmdline, "image": a.disk or a.image, "args": a.args}
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
            meta["report"] = _write_run_report(run, d)
    with open(os.path.join(d, "boot.json"), "w", encoding="utf-8") as f:
        json.dump(meta, f, indent=1)
        f.write("\n")
    _copy_latest(a.out, d)
    print("pmubench: results in %s (copied to %s)" % (d, os.path.join(a.out, "latest")))
    if meta.get("report"):
        print("report: %s" % os.path.join(d, meta["report"]))
    return rc


def _write_run_report(run, d):
    """report.html (self-contained), report.md and plots/*.png in the results directory d; the HTML's
    name, or None after saying why not (a report that cannot be drawn never fails the run)."""
    from . import report
    try:
        doc = report.build(run, want_plots=True)
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

def cmd_report(a):
    from . import report
    run = _load(a.run)
    if run is None:
        return EXIT_BAD_LOG
    doc = report.build(run, want_plots=bool(a.html or a.png))
    if a.png:
        report.write_pngs(doc, a.png)
    sys.stdout.write(report.to_markdown(doc, a.png))
    if a.html:
        with open(a.html, "w", encoding="utf-8") as f:
            f.write(report.to_html(doc))
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
    src = a.run or a.log
    if not src:
        err("nightly needs LOG or --run DIR")
        return EXIT_BAD_LOG
    try:
        run = parsemod.load_run(src)
    except parsemod.LogError as e:
        err("log rejected: %s" % e.reason)
        if a.junit:
            with open(a.junit, "wb") as f:
                f.write(nightly.junit([], None, None, None, log_error=e.reason))
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
        with open(a.junit, "wb") as f:
            f.write(nightly.junit(results, run.status, ident, run.crc32, incomplete_boots=run.incomplete_boots,
                                  not_a_baseline=why_not, skipped_baselines=skipped,
                                  figures=figures.extract(run)))
    bad = [r for r in results if r.verdict == "regressed"]
    if run.status != "ok":
        err("run ended with status %s" % run.status)
    if bad or run.status != "ok":
        return EXIT_FAIL
    return EXIT_OK


# ---- history ---------------------------------------------------------------------------------

def _db_name(target):
    """The database as messages name it: a URL without its password."""
    from . import db
    if db.is_url(target):
        import re
        return re.sub(r"(://[^:/@]*):[^@/]*@", r"\1:***@", target)
    return target


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
        err("no figure matches %r" % figure if figure else "the database holds no figures")
    return names


def cmd_history(a):
    from . import history
    conn = _open_existing(a.db)
    if conn is None:
        return EXIT_FAIL
    try:
        names = _figure_names(conn, a.figure)
        if not names:
            return EXIT_FAIL
        runs, values, verdicts = history.trend(conn, names, a.machine, a.last)
        bands = history.bands(conn, names, runs) if a.png else None
    finally:
        conn.close()
    sys.stdout.write(history.table(runs, names, values, verdicts))
    if a.png:
        png = history.plot(runs, names, values, "pmubench history: %s" % (a.figure or "Table 2 rows"), bands)
        with open(a.png, "wb") as f:
            f.write(png)
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
        with open(a.png, "wb") as f:
            f.write(fleet.plot(ms, names))
    return EXIT_OK


# ---- usb -------------------------------------------------------------------------------------

def cmd_usb(a):
    from . import usb
    dest = a.image_out or a.device
    if not dest:
        err("usb needs DEVICE or --image FILE")
        return EXIT_FAIL
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

def build_parser():
    from .db import DEFAULT_DB
    from .qemu import DEFAULT_IMAGE
    from .usb import DEFAULT_IMAGE as USB_IMAGE
    p = argparse.ArgumentParser(prog="pmubench", description="pmubench host tools (docs/host-tools.md)")
    p.add_argument("--version", action="version", version="pmubench " + __version__)
    sub = p.add_subparsers(dest="cmd", required=True)

    r = sub.add_parser("run", help="boot the image under QEMU/OVMF and save verified results")
    g = r.add_mutually_exclusive_group()
    g.add_argument("--kvm", action="store_true", help="require KVM (fail if it does not work)")
    g.add_argument("--tcg", action="store_true", help="force TCG (default: KVM if it works, else TCG)")
    r.add_argument("--smp", type=int, default=1)
    r.add_argument("--mem", default="1G", help="guest memory, e.g. 512M, 2G (default 1G)")
    r.add_argument("--numa", type=int, default=0, help="NUMA nodes (2: two nodes, half the CPUs each)")
    r.add_argument("--cpu", default=None, help="QEMU CPU model (default: max under TCG, host,pmu=on under KVM)")
    r.add_argument("--cfg", help="config file put on the ESP as pmubench.cfg")
    r.add_argument("--args", default=None, help='load options, e.g. "bench=latency seed=2" (via startup.nsh)')
    r.add_argument("--image", default=DEFAULT_IMAGE, help="EFI image (default build/pmubench.efi)")
    r.add_argument("--disk", default=None, help="boot this raw disk image (e.g. the USB image) instead")
    r.add_argument("--bios", action="store_true",
                   help="boot --disk (the make usb image) under SeaBIOS through GRUB/Multiboot2 instead of OVMF; "
                        "the configuration goes in --cfg")
    r.add_argument("--out", default=os.path.join(REPO_ROOT, "results"), help="results directory")
    r.add_argument("--timeout", type=float, default=600, help="hard timeout in seconds (default 600)")
    r.add_argument("-q", "--quiet", action="store_true", help="do not echo firmware/human-readable lines")
    r.add_argument("-v", "--verbose", action="store_true", help="also echo the raw JSON records")
    r.add_argument("--no-report", action="store_true",
                   help="do not write report.html / report.md / plots/ into the results directory")
    r.set_defaults(fn=cmd_run)

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
    r.set_defaults(fn=cmd_report)

    r = sub.add_parser("nightly", help="ingest a run, compare with the baseline, write JUnit")
    r.add_argument("log", nargs="?")
    r.add_argument("--run", help="a results directory instead of LOG")
    r.add_argument("--db", default=DEFAULT_DB, help="SQLite path (default %(default)s) or postgresql:// URL")
    r.add_argument("--host", help="the box's name, part of the machine identity (default: the run record's "
                                  "hostname/host, else none)")
    r.add_argument("--baseline", type=int, default=5, help="baseline = median of the last N good runs (5)")
    r.add_argument("--junit", help="write JUnit XML here")
    r.add_argument("--accel", help="accelerator for the machine identity (default: boot.json, else unknown)")
    r.add_argument("--k", type=float, default=3.0, help="tolerance multiplier on the measured spread (3)")
    r.set_defaults(fn=cmd_nightly)

    r = sub.add_parser("history", help="trend table (and PNG) of figures in the database")
    r.add_argument("--db", default=DEFAULT_DB, help="SQLite path (default %(default)s) or postgresql:// URL")
    r.add_argument("--figure", help="figure name, prefix or component, e.g. L3_unshared")
    r.add_argument("--machine", type=int, help="only this machine id")
    r.add_argument("--last", type=int, help="only the last N runs")
    r.add_argument("--png", help="write a trend plot here")
    r.set_defaults(fn=cmd_history)

    r = sub.add_parser("fleet", help="each machine's deviation from the median of its identical machines")
    r.add_argument("--db", default=DEFAULT_DB, help="SQLite path (default %(default)s) or postgresql:// URL")
    r.add_argument("--figure", help="figure name, prefix or component (default: the Table 2 rows)")
    r.add_argument("--png", help="write a heat map here")
    r.set_defaults(fn=cmd_fleet)

    r = sub.add_parser("usb", help="write the USB image to a removable device or a file")
    r.add_argument("device", nargs="?")
    r.add_argument("--image", dest="image_out", metavar="FILE", help="copy the image to FILE instead")
    r.add_argument("--source", default=USB_IMAGE, help="image to write (default build/pmubench-usb.img)")
    r.add_argument("--force", action="store_true", help="write even a mounted or non-removable device")
    r.set_defaults(fn=cmd_usb)

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
    a = build_parser().parse_args(argv)
    try:
        return a.fn(a)
    except KeyboardInterrupt:
        err("interrupted")
        return 130
    except BrokenPipeError:
        return EXIT_OK
