"""Extract and verify the last complete pmubench run from a serial log.

The kernel's output contract (docs/host-tools.md, "Serial log format"): every machine-readable
record is one serial line holding one JSON object with a "type" field; a run starts with a "run"
record and ends with {"type":"end","status":...,"records":N,"crc32":"xxxxxxxx"} where N counts
the records before it (run record included) and crc32 is zlib's CRC-32 over those record lines,
each as emitted from '{' to '}' plus one '\n'.

A capture may hold firmware noise, ANSI escape sequences, CR/LF mixes, NULs, partial lines and
several boots. We clean each physical line, pick the record lines, split them into runs at each
"run" record and verify the last run that has an end record. Anything we cannot verify is a
LogError: a caller never sees records that differ from what the kernel emitted.
"""
import csv
import io
import json
import os
import re
import zlib

# ANSI/VT100 sequences OVMF's terminal driver and the UEFI shell emit: CSI (ESC [ ... final,
# including private '=' parameters such as ESC[=3h), OSC (ESC ] ... BEL/ST), and two-byte
# escapes (ESC c, ESC ( B ...).
_ANSI_RE = re.compile(r"\x1b(?:\[[0-?]*[ -/]*[@-~]|\][^\x07\x1b]*(?:\x07|\x1b\\)?|[ -/]*[0-~])")
# C0 controls other than TAB/CR/LF, and DEL. JSON text never holds them raw (RFC 8259 section 7
# requires control characters in strings to be escaped), so removing them cannot remove record
# content; the CRC still has the final word.
_CTRL_RE = re.compile(r"[\x00-\x08\x0b\x0c\x0e-\x1f\x7f]")
_LINE_SPLIT_RE = re.compile(r"\r\n|\r|\n")
_CRC_RE = re.compile(r"^[0-9a-f]{8}$")
_TYPE_MARK = '{"type":'
END_STATUSES = ("ok", "error", "crashed")


class LogError(Exception):
    """A log that holds no verifiable complete run. .reason is a one-line explanation."""

    def __init__(self, reason, line=None):
        self.reason = reason
        self.line = line
        super().__init__(reason)


class Run:
    """One verified run.

    records: the N records before the end record (run record first), as dicts.
    lines:   the exact record lines, run record through end record, without line terminator.
    run/end: the run and end records. warnings: things noticed but not fatal (e.g. a later
    truncated boot). first_line: 1-based line of the run record in the source text.
    """

    def __init__(self, records, lines, end, first_line=0, warnings=None, incomplete_boots=0):
        self.records = records
        self.lines = lines
        self.end = end
        self.first_line = first_line
        self.warnings = list(warnings or [])
        # Earlier boots in the same log that did not complete: a run record not followed by its end
        # record before the next run record (a triple fault resets the machine and it boots again).
        self.incomplete_boots = incomplete_boots

    @property
    def run(self):
        return self.records[0]

    @property
    def status(self):
        return self.end.get("status")

    @property
    def crc32(self):
        return self.end.get("crc32")

    def by_type(self, t):
        return [r for r in self.records if r.get("type") == t]

    def first(self, t):
        for r in self.records:
            if r.get("type") == t:
                return r
        return None

    def types(self):
        """Record type -> count, in order of first appearance (end record excluded)."""
        out = {}
        for r in self.records:
            out[r.get("type")] = out.get(r.get("type"), 0) + 1
        return out

    def jsonl(self):
        """The run as JSON Lines, byte-identical records, end record last: itself a valid log."""
        return "".join(line + "\n" for line in self.lines)

    def __repr__(self):
        return "<Run %d records status=%s crc32=%s>" % (len(self.records), self.status, self.crc32)


def clean_text(text):
    """Remove ANSI escape sequences, NULs and other stray control characters."""
    return _CTRL_RE.sub("", _ANSI_RE.sub("", text))


def crc32_lines(lines):
    """The end record's checksum over record lines (str, without terminator)."""
    crc = 0
    for line in lines:
        crc = zlib.crc32(line.encode("utf-8", "surrogateescape") + b"\n", crc)
    return "%08x" % (crc & 0xFFFFFFFF)


def _reject_constant(name):
    raise ValueError("non-JSON constant " + name)


def _candidates(text):
    """Yield (lineno, text) for every physical line that looks like a record line."""
    for lineno, raw in enumerate(_LINE_SPLIT_RE.split(text), 1):
        if "{" not in raw:
            continue
        # Human-readable lines never start with '{' (the contract), so only column 0 counts;
        # an indented human line holding braces is not mistaken for a record.
        line = clean_text(raw).rstrip(" \t")
        if line.startswith("{"):
            yield lineno, line
            continue
        # Firmware noise that did not end its line before the kernel's first record.
        idx = line.find(_TYPE_MARK)
        if idx > 0:
            yield lineno, line[idx:]


def _decode(line):
    """Parse one candidate line -> (dict or None, error string or None)."""
    try:
        obj = json.loads(line, parse_constant=_reject_constant)
    except (ValueError, RecursionError) as e:
        return None, str(e).split("\n")[0]
    if not isinstance(obj, dict):
        return None, "not a JSON object"
    if not isinstance(obj.get("type"), str) or not obj["type"]:
        return None, 'no "type" field'
    return obj, None


class _Segment:
    def __init__(self, lineno, rec, line):
        self.first_line = lineno
        self.records = [rec]
        self.lines = [line]
        self.bad = []           # (lineno, error)
        self.end = None
        self.end_line = None
        self.end_lineno = None
        self.trailing = 0       # record-like lines after the end record


def _segments(text):
    segs = []
    cur = None
    orphans = 0
    for lineno, line in _candidates(text):
        obj, err = _decode(line)
        if obj is not None and obj["type"] == "run":
            cur = _Segment(lineno, obj, line)
            segs.append(cur)
            continue
        if cur is None:
            orphans += 1
            continue
        if cur.end is not None:
            cur.trailing += 1
            continue
        if obj is None:
            cur.bad.append((lineno, err))
        elif obj["type"] == "end":
            cur.end, cur.end_line, cur.end_lineno = obj, line, lineno
        else:
            cur.records.append(obj)
            cur.lines.append(line)
    return segs, orphans


def _verify(seg):
    if seg.bad:
        lineno, err = seg.bad[0]
        raise LogError("corrupt record at line %d: %s" % (lineno, err), lineno)
    end = seg.end
    n = end.get("records")
    if isinstance(n, bool) or not isinstance(n, int):
        raise LogError("corrupt end record at line %d: \"records\" is not an integer" % seg.end_lineno,
                       seg.end_lineno)
    crc = end.get("crc32")
    if not isinstance(crc, str) or not _CRC_RE.match(crc):
        raise LogError("corrupt end record at line %d: \"crc32\" is not 8 lowercase hex digits"
                       % seg.end_lineno, seg.end_lineno)
    if n != len(seg.records):
        raise LogError("record count mismatch: end record at line %d says %d, found %d"
                       % (seg.end_lineno, n, len(seg.records)), seg.end_lineno)
    got = crc32_lines(seg.lines)
    if got != crc:
        raise LogError("CRC mismatch: end record at line %d says %s, records give %s"
                       % (seg.end_lineno, crc, got), seg.end_lineno)


def parse_log(text):
    """Return the last complete, verified Run in `text` (str or bytes); raise LogError otherwise."""
    if isinstance(text, (bytes, bytearray)):
        text = bytes(text).decode("utf-8", "surrogateescape")
    elif not isinstance(text, str):
        raise LogError("log is not text")
    segs, _ = _segments(text)
    if not segs:
        raise LogError("no run record found")
    complete = [i for i, s in enumerate(segs) if s.end is not None]
    if not complete:
        last = segs[-1]
        raise LogError("no end record: run starting at line %d is truncated after %d records"
                       % (last.first_line, len(last.records)), last.first_line)
    idx = complete[-1]
    seg = segs[idx]
    _verify(seg)
    status = seg.end.get("status")
    if status not in END_STATUSES:
        # The end record is outside the CRC, so accept only the values the contract defines.
        raise LogError("corrupt end record at line %d: status %r is not one of %s"
                       % (seg.end_lineno, status, "/".join(END_STATUSES)), seg.end_lineno)
    warnings = []
    earlier = [(e, segs[i + 1]) for i, e in enumerate(segs[:idx]) if e.end is None]
    for e, nxt in earlier:
        warnings.append("an earlier boot did not complete: run starting at line %d has %d records and no end "
                        "record before the next run record at line %d (a reset or crash mid-run?)"
                        % (e.first_line, len(e.records), nxt.first_line))
    if seg.trailing:
        warnings.append("%d record line(s) after the end record at line %d ignored"
                        % (seg.trailing, seg.end_lineno))
    for later in segs[idx + 1:]:
        warnings.append("ignored a later incomplete run starting at line %d (%d records, no end record)"
                        % (later.first_line, len(later.records)))
    return Run(seg.records, seg.lines + [seg.end_line], seg.end, seg.first_line, warnings, len(earlier))


# A run's serial log is a few MiB at most (a 16-CPU full run: about 1 MiB); more than this is not one, and
# reading on would never end for an endless device (/dev/zero) or fill the memory.
LOG_MAX_BYTES = 256 << 20


def read_log(path):
    with open(path, "rb") as f:
        data = f.read(LOG_MAX_BYTES + 1)
    if len(data) > LOG_MAX_BYTES:
        raise LogError("%s: more than %d MiB, not the serial log of a run" % (path, LOG_MAX_BYTES >> 20))
    return parse_log(data)


def load_run(path):
    """A Run from a serial log, a records.jsonl, or a results directory (records.jsonl preferred)."""
    if os.path.isdir(path):
        for name in ("records.jsonl", "serial.log"):
            p = os.path.join(path, name)
            if os.path.exists(p):
                return read_log(p)
        raise LogError("%s holds neither records.jsonl nor serial.log" % path)
    try:
        return read_log(path)
    except OSError as e:
        raise LogError("cannot read %s: %s" % (path, e.strerror or e))


# ---- CSV ------------------------------------------------------------------------------------

def flatten(rec, prefix="", out=None):
    """Flatten nested dicts/lists to dotted keys: cpu.vendor, caches.0.bytes; scalar lists -> a;b."""
    if out is None:
        out = {}
    for k, v in rec.items():
        key = prefix + str(k)
        if isinstance(v, dict):
            flatten(v, key + ".", out)
        elif isinstance(v, list):
            if all(not isinstance(x, (dict, list)) for x in v):
                out[key] = ";".join(_scalar(x) for x in v)
            else:
                for i, x in enumerate(v):
                    if isinstance(x, dict):
                        flatten(x, "%s.%d." % (key, i), out)
                    elif isinstance(x, list):
                        out["%s.%d" % (key, i)] = json.dumps(x, separators=(",", ":"))
                    else:
                        out["%s.%d" % (key, i)] = _scalar(x)
        else:
            out[key] = _scalar(v)
    return out


def _scalar(v):
    if v is None:
        return ""
    if v is True:
        return "true"
    if v is False:
        return "false"
    if isinstance(v, float):
        return repr(v)
    return str(v)


def to_csv(run):
    """One CSV block per record type (order of first appearance, end record last), each with its
    own header row whose first column is "type"; blocks are separated by one empty line."""
    groups = {}
    for r in run.records + [run.end]:
        groups.setdefault(r.get("type"), []).append(flatten(r))
    buf = io.StringIO()
    first = True
    for t, rows in groups.items():
        cols = ["type"]
        for row in rows:
            for k in row:
                if k not in cols:
                    cols.append(k)
        if not first:
            buf.write("\n")
        first = False
        w = csv.writer(buf, lineterminator="\n")
        w.writerow(cols)
        for row in rows:
            w.writerow([row.get(c, "") for c in cols])
    return buf.getvalue()
