"""Instruction snippets (issue 14): assemble text with GNU as, write the [snippet NAME] sections of
pmubench.cfg, run them in the hosted runner or the UEFI image under QEMU, print the results.

The config interface is /tmp/spec/snippet-spec.md as agreed with the C side (bench/snippet_cfg.c parses
it); docs/host-tools.md ("snippet") documents the command. Every user-facing failure is a SnippetError
whose str() is one line.
"""
import collections
import os
import re
import subprocess
import tempfile

from . import REPO_ROOT
from . import figures

HOST_BENCH = os.path.join(REPO_ROOT, "build", "host-bench", "pmubench-host")

# Limits of bench/snippet_cfg.h: checked here too, so a bad command line fails before anything runs.
MAX_SNIPPETS = 16
NAME_MAX = 31
CODE_MAX = 2048
INIT_MAX = 2048
UNROLL_MAX = 100000
LOOP_MAX = 1000000000
WARMUP_MAX = 1000000
TIMEOUT_MAX_MS = 600000
EVENTS_MAX = 8
EVENT_LEN_MAX = 95
GEN_MAX = 4 << 20          # bytes of generated code of one variant: code x unroll x 2 + init
CFG_LINE_MAX = 255         # kernel/config.h
CFG_FILE_MAX = 256 * 1024  # kernel/config.h: the largest pmubench.cfg the image and the hosted runner read
HEX_PER_LINE = 64          # bytes per `code =` line: "code = " + 64 x "xx " = 199 characters

_NAME_RE = re.compile(r"^[a-z0-9_]{1,%d}$" % NAME_MAX)
_AS_MSG_RE = re.compile(r"^[^:\n]*\.s:(\d+): (Error|Warning): (.*)$")
_TRUE = ("on", "1", "true", "yes")
_FALSE = ("off", "0", "false", "no")


class SnippetError(Exception):
    """A one-line, user-facing error (bad assembly, bad option, bad config, a run that could not start)."""


Assembled = collections.namedtuple("Assembled", "code instructions statements offsets warnings")
Assembled.__doc__ = """code: the bytes of .text; instructions: how many instructions objdump decodes in them;
statements: [(number, text)] as split (1-based numbers, as error messages count them); offsets: [(offset,
number)] where each statement's bytes start, ascending; warnings: as's warnings, one line each."""



def split_statements(text):
    """Statements of `text`: split at newlines and at ';' outside double quotes; '#' to the end of the line
    is a comment (as GNU as reads x86 code). Empty statements are dropped. -> [(number, text)]."""
    out = []
    cur = []
    in_quote = False
    i = 0
    n = len(text)
    while i <= n:
        c = text[i] if i < n else "\n"
        if in_quote:
            cur.append(c)
            if c == "\\" and i + 1 < n:
                cur.append(text[i + 1])
                i += 1
            elif c == '"':
                in_quote = False
            elif c in "\r\n":
                in_quote = False          # an unterminated string ends with its line; as reports it
                cur.pop()
                _flush(cur, out)
        elif c == '"':
            in_quote = True
            cur.append(c)
        elif c == "#":
            while i < n and text[i] not in "\r\n":
                i += 1
            continue
        elif c in ";\r\n":
            _flush(cur, out)
        else:
            cur.append(c)
        i += 1
    return [(k + 1, s) for k, s in enumerate(out)]


def _flush(cur, out):
    s = "".join(cur).strip()
    if s:
        out.append(s)
    del cur[:]


def _show(s, limit=60):
    s = "".join(ch if " " <= ch < "\x7f" else "?" for ch in s)
    return s if len(s) <= limit else s[:limit - 3] + "..."


def _run_tool(argv, cwd):
    try:
        return subprocess.run(argv, cwd=cwd, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                              universal_newlines=True, errors="replace")
    except FileNotFoundError:
        raise SnippetError("%s not found: install GNU binutils (apt-get install binutils)" % argv[0]) from None


_LABEL = "__pmb_stmt_%d"


def assemble(text, syntax="intel", what="snippet"):
    """Assemble x86-64 `text` (Intel syntax without register prefixes, or AT&T) with GNU as; -> Assembled.

    Raises SnippetError with one line naming the statement, e.g.
    snippet line 2 ("imul rax, rbx, rcx, rdx"): Error: number of operands mismatch for 'imul'
    where the line number counts statements (split at newlines and ';'). Code that needs relocations
    (references to symbols outside it) is refused: the bytes are copied to an address only the harness knows.
    """
    if syntax not in ("intel", "att"):
        raise SnippetError("syntax must be intel or att, not %r" % (syntax,))
    stmts = split_statements(text or "")
    if not stmts:
        raise SnippetError("%s: no instructions (the code is empty)" % what)
    if syntax == "intel":
        # GNU as in Intel mode takes some AT&T lines without a word (movq $1, %rax assembles, operands reversed):
        # the default syntax has no register prefixes, so an AT&T prefix is refused before as sees it.
        for num, st in stmts:
            m = _ATT_RE.search(st)
            if m:
                raise SnippetError('%s line %d ("%s"): \'%s\' is AT&T syntax; the default is Intel syntax without '
                                   'register prefixes: pass --att' % (what, num, _show(st), m.group(0)))
    return _assemble(text, syntax, what, stmts)


_ATT_RE = re.compile(r"%[a-z][a-z0-9]*\b|\$-?(?:0x[0-9a-f]+|\d+)", re.I)


def looks_att(text):
    """Whether code holds AT&T's register prefix (%rax) or immediate prefix ($1)."""
    return bool(_ATT_RE.search(text or ""))


def _assemble(text, syntax, what, stmts):
    lines = [".intel_syntax noprefix" if syntax == "intel" else ".att_syntax prefix", ".text"]
    line_of = {}
    for num, s in stmts:
        # A global label before every statement: nm then tells where each statement's bytes start.
        lines.append((_LABEL + ":") % num)
        lines.append(s)
        line_of[len(lines)] = num
    src = "\n".join(lines) + "\n"
    by_num = dict(stmts)

    def where(lineno):
        num = line_of.get(lineno)
        if num is None:
            for ln in sorted(line_of):      # a message about a label line: the statement after it
                if ln >= lineno:
                    num = line_of[ln]
                    break
        if num is None:
            return what
        return '%s line %d ("%s")' % (what, num, _show(by_num[num]))

    with tempfile.TemporaryDirectory(prefix="pmb-as-") as d:
        with open(os.path.join(d, "x.s"), "w", encoding="utf-8") as f:
            f.write(src)
        r = _run_tool(["as", "--64", "-o", "x.o", "x.s"], d)
        errors, warnings = [], []
        for ln in r.stderr.splitlines():
            m = _AS_MSG_RE.match(ln.strip())
            if not m:
                continue
            msg = "%s: %s: %s" % (where(int(m.group(1))), m.group(2), re.sub(r"`([^'`]*)'", r"'\1'", m.group(3)))
            (errors if m.group(2) == "Error" else warnings).append(msg)
        if r.returncode != 0 or errors:
            if not errors:
                tail = [l for l in r.stderr.splitlines() if l.strip()]
                raise SnippetError("%s: as failed: %s" % (what, tail[-1] if tail else "exit status %d" % r.returncode))
            more = " (and %d more error%s)" % (len(errors) - 1, "s" if len(errors) > 2 else "") if len(errors) > 1 else ""
            raise SnippetError(errors[0] + more)
        # Symbols: statement offsets (our labels), and what the relocations refer to.
        nm = _run_tool(["nm", "--defined-only", "x.o"], d)
        offsets = []
        for ln in nm.stdout.splitlines():
            parts = ln.split()
            if len(parts) == 3 and parts[2].startswith("__pmb_stmt_") and parts[1] in "tT":
                offsets.append((int(parts[0], 16), int(parts[2][len("__pmb_stmt_"):])))
        offsets.sort()
        rel = _run_tool(["readelf", "-rW", "x.o"], d)
        relocs = _relocations(rel.stdout)
        if relocs:
            off, typ, sym = relocs[0]
            num = _stmt_at(offsets, off)
            loc = ('%s line %d ("%s")' % (what, num, _show(by_num[num]))) if num else what
            if not sym or sym.startswith("."):
                ref = "an absolute address in the snippet itself"
            else:
                ref = "undefined symbol '%s'" % sym
            raise SnippetError("%s: needs a relocation (%s at offset %d: %s); snippet code must be self-contained "
                               "and position-independent" % (loc, typ, off, ref))
        hdr = _run_tool(["objdump", "-h", "x.o"], d)
        for name, size in _alloc_sections(hdr.stdout):
            if name != ".text" and size:
                raise SnippetError("%s: puts %d bytes in section %s; only .text is copied (keep data in the code "
                                   "or use the scratch buffer at R14)" % (what, size, name))
        oc = _run_tool(["objcopy", "-O", "binary", "-j", ".text", "x.o", "x.bin"], d)
        if oc.returncode != 0:
            raise SnippetError("%s: objcopy failed: %s" % (what, oc.stderr.strip().splitlines()[-1:]))
        with open(os.path.join(d, "x.bin"), "rb") as f:
            code = f.read()
        if not code:
            raise SnippetError("%s: the code assembles to no bytes" % what)
        dis = _run_tool(["objdump", "-d", "-j", ".text", "--no-show-raw-insn", "x.o"], d)
        ninsn = sum(1 for l in dis.stdout.splitlines() if re.match(r"^\s+[0-9a-f]+:\t", l))
    return Assembled(code, ninsn, stmts, offsets, warnings)


def _relocations(readelf_out):
    """[(offset, type, symbol)] of every relocation entry in `readelf -rW` output."""
    out = []
    for ln in readelf_out.splitlines():
        parts = ln.split()
        if len(parts) >= 3 and re.match(r"^[0-9a-f]{8,16}$", parts[0]) and parts[2].startswith("R_X86_64"):
            sym = parts[4] if len(parts) >= 5 else ""
            out.append((int(parts[0], 16), parts[2], sym if not sym.startswith("+") else ""))
    return out


def _alloc_sections(objdump_h):
    """[(name, size)] of the sections `objdump -h` lists with the ALLOC flag."""
    out = []
    lines = objdump_h.splitlines()
    for i, ln in enumerate(lines):
        m = re.match(r"^\s*\d+\s+(\S+)\s+([0-9a-f]+)\s", ln)
        if m and i + 1 < len(lines) and "ALLOC" in lines[i + 1]:
            out.append((m.group(1), int(m.group(2), 16)))
    return out


def _stmt_at(offsets, off):
    """The statement whose bytes hold offset `off` (the last one starting at or before it), or None."""
    num = None
    for o, n in offsets:
        if o <= off:
            num = n
        else:
            break
    return num


def statement_at(asm, off):
    """(number, text) of the statement of Assembled `asm` that holds byte offset `off`, or None."""
    if asm is None:
        return None
    # Several labels can share an offset (statements that produce no bytes): the last one is the instruction.
    num = _stmt_at(asm.offsets, off)
    return (num, dict(asm.statements)[num]) if num else None


# ---- configuration ---------------------------------------------------------------------------------

class Snippet:
    """One [snippet NAME] section. Keys left None are not written (the C side's defaults apply).
    instructions/asm: what the assembler said (for the printout); not part of the config."""

    KEYS = ("unroll", "loop", "warmup", "events", "differencing", "aggregate", "timeout_ms")

    def __init__(self, name, code, init=b"", unroll=None, loop=None, warmup=None, events=None,
                 differencing=None, aggregate=None, timeout_ms=None, source=None, asm=None, init_asm=None):
        self.name = name
        self.code = bytes(code)
        self.init = bytes(init or b"")
        self.unroll = unroll
        self.loop = loop
        self.warmup = warmup
        self.events = events
        self.differencing = differencing
        self.aggregate = aggregate
        self.timeout_ms = timeout_ms
        self.source = source
        self.asm = asm
        self.init_asm = init_asm

    @property
    def instructions(self):
        return self.asm.instructions if self.asm is not None else None

    def __eq__(self, other):
        return isinstance(other, Snippet) and all(
            getattr(self, k) == getattr(other, k) for k in ("name", "code", "init") + self.KEYS)

    def __repr__(self):
        return "<Snippet %s %d bytes>" % (self.name, len(self.code))


def check_int(opt, value, lo, hi):
    """int(value) within lo..hi, else SnippetError naming the option."""
    s = str(value).strip()
    if not re.match(r"^[0-9]+$", s) or not (lo <= int(s) <= hi):
        raise SnippetError("%s: expected a number %d..%d, got '%s'" % (opt, lo, hi, _show(str(value), 40)))
    return int(s)


def normalize_events(value, opt="events"):
    """A comma-separated list of event specifiers as the C side accepts it ("A,B"): no blanks inside a
    specifier, no quotes, at most 8, each at most 95 characters."""
    if not str(value).strip():
        return None
    items = [e.strip() for e in str(value).split(",")]
    for e in items:
        if not e:
            raise SnippetError("%s: empty event name in '%s'" % (opt, _show(value, 40)))
        if any(ord(c) <= 0x20 or ord(c) >= 0x7f or c == '"' for c in e):
            raise SnippetError("%s: '%s' has a character not allowed in an event specifier" % (opt, _show(e, 40)))
        if len(e) > EVENT_LEN_MAX:
            raise SnippetError("%s: '%s' is longer than %d characters" % (opt, _show(e, 40), EVENT_LEN_MAX))
    if len(items) > EVENTS_MAX:
        raise SnippetError("%s: more than %d events" % (opt, EVENTS_MAX))
    return ",".join(items)


def check_snippet(s, cli=False):
    """Validate one Snippet against the C side's limits; SnippetError (one line) when it would be refused.
    cli: name the command-line options (--timeout-ms) rather than the config keys (timeout_ms)."""
    opt = (lambda k: "--" + k.replace("_", "-")) if cli else (lambda k: k)
    if not isinstance(s.name, str) or not _NAME_RE.match(s.name):
        raise SnippetError("snippet name '%s': 1..%d characters of a-z, 0-9 and _" % (_show(str(s.name), 40), NAME_MAX))
    if not s.code:
        raise SnippetError("snippet %s: no code" % s.name)
    if len(s.code) > CODE_MAX:
        raise SnippetError("snippet %s: %d bytes of code, at most %d" % (s.name, len(s.code), CODE_MAX))
    if len(s.init) > INIT_MAX:
        raise SnippetError("snippet %s: %d bytes of init code, at most %d" % (s.name, len(s.init), INIT_MAX))
    if s.unroll is not None:
        s.unroll = check_int(opt("unroll"), s.unroll, 1, UNROLL_MAX)
    if s.loop is not None:
        s.loop = check_int(opt("loop"), s.loop, 0, LOOP_MAX)
    if s.warmup is not None:
        s.warmup = check_int(opt("warmup"), s.warmup, 0, WARMUP_MAX)
    if s.timeout_ms is not None:
        s.timeout_ms = check_int(opt("timeout_ms"), s.timeout_ms, 1, TIMEOUT_MAX_MS)
    if s.events is not None:
        s.events = normalize_events(s.events, opt("events"))
    if s.differencing is not None and not isinstance(s.differencing, bool):
        v = str(s.differencing).strip().lower()
        if v not in _TRUE + _FALSE:
            raise SnippetError("%s: '%s' is not on|off" % (opt("differencing"), _show(str(s.differencing), 40)))
        s.differencing = v in _TRUE
    if s.aggregate is not None and s.aggregate not in ("median", "min"):
        raise SnippetError("%s: '%s' is not median|min" % (opt("aggregate"), _show(str(s.aggregate), 40)))
    unroll = s.unroll if s.unroll is not None else 100
    if len(s.code) * unroll * 2 + len(s.init) > GEN_MAX:
        raise SnippetError("snippet %s: %d code bytes x unroll %d x 2 exceeds %d bytes of generated code"
                           % (s.name, len(s.code), unroll, GEN_MAX))
    return s


def _hex_lines(key, data):
    return ["%s = %s" % (key, " ".join("%02x" % b for b in data[i:i + HEX_PER_LINE]))
            for i in range(0, len(data), HEX_PER_LINE)]


def _comment(text):
    return ("# " + _show(text, CFG_LINE_MAX - 2)) if text else "#"


def config_text(snippets, globals=None):
    """pmubench.cfg text: the global key = value lines (bench = snippet unless `globals` names a bench),
    then one [snippet NAME] section per Snippet. Code and init are hex bytes, at most 64 per line
    (several `code =` lines append), so no line is longer than the 255 characters the parser takes."""
    snippets = list(snippets)
    if not snippets:
        raise SnippetError("no snippets")
    if len(snippets) > MAX_SNIPPETS:
        raise SnippetError("%d snippets, at most %d per run" % (len(snippets), MAX_SNIPPETS))
    seen = set()
    for s in snippets:
        check_snippet(s)
        if s.name in seen:
            raise SnippetError("snippet name '%s' is used twice" % s.name)
        seen.add(s.name)
    g = collections.OrderedDict()
    g["bench"] = "snippet"
    for k, v in (globals or {}).items():
        if v is None:
            continue
        g[k] = v
    out = ["# pmubench.cfg written by `pmubench snippet` (docs/host-tools.md, docs/config.md)"]
    for k, v in g.items():
        k, v = str(k), str(v)
        if not re.match(r"^[a-z_][a-z0-9_]*$", k):
            raise SnippetError("config key '%s': not a key name" % _show(k, 40))
        if any(c in v for c in "\r\n\0") or v.strip() != v or not v:
            raise SnippetError("config %s: bad value '%s'" % (k, _show(v, 40)))
        if re.search(r"(^|[ \t])#", v):
            v = '"%s"' % v
            if v.count('"') != 2:
                raise SnippetError("config %s: a value with ' #' cannot also hold '\"'" % k)
        out.append("%s = %s" % (k, v))
    for s in snippets:
        out.append("")
        if s.source:
            for ln in str(s.source).splitlines() or [""]:
                out.append(_comment(ln.strip()))
        out.append("[snippet %s]" % s.name)
        out += _hex_lines("code", s.code)
        if s.init:
            out += _hex_lines("init", s.init)
        for k in Snippet.KEYS:
            v = getattr(s, k)
            if v is None:
                continue
            if k == "differencing":
                v = "on" if v else "off"
            out.append("%s = %s" % (k, v))
    for ln in out:
        if len(ln) > CFG_LINE_MAX:       # cannot happen for what we write; a guard against a future key
            raise SnippetError("config line longer than %d characters: %s" % (CFG_LINE_MAX, _show(ln, 40)))
    text = "\n".join(out) + "\n"
    size = len(text.encode("utf-8"))
    if size > CFG_FILE_MAX:              # the largest valid set fits (tests/host/test_snippet_host.py); a guard
        raise SnippetError("the config would be %d bytes, more than the %d bytes pmubench.cfg may hold"
                           % (size, CFG_FILE_MAX))
    return text


def parse_config(text):
    """The inverse of config_text, following kernel/config.c and bench/snippet_cfg.c: -> (globals dict,
    [Snippet]). Raises SnippetError "line N: ..." on what the C side refuses. For tests and for
    reading back a cfg file."""
    g = collections.OrderedDict()
    snippets = []
    cur = None
    if text.startswith("\ufeff"):
        text = text[1:]
    for num, raw in enumerate(re.split(r"\r\n|\r|\n", text), 1):
        if "\0" in raw:
            raise SnippetError("line %d: NUL byte" % num)
        if len(raw) > CFG_LINE_MAX:
            raise SnippetError("line %d: line too long (%d characters, at most %d)" % (num, len(raw), CFG_LINE_MAX))
        s = _strip_comment(raw).strip(" \t")
        if not s:
            continue
        if s.startswith("["):
            if not s.endswith("]"):
                raise SnippetError("line %d: section header without ']'" % num)
            h = s[1:-1].strip(" \t").split(None, 1)
            if not h or h[0] != "snippet":
                raise SnippetError("line %d: unknown section '%s'" % (num, _show(s, 40)))
            name = h[1].strip() if len(h) > 1 else ""
            if not _NAME_RE.match(name):
                raise SnippetError("line %d: bad snippet name '%s'" % (num, _show(name, 40)))
            if any(x.name == name for x in snippets):
                raise SnippetError("line %d: snippet '%s' is defined twice" % (num, name))
            cur = Snippet(name, b"")
            snippets.append(cur)
            continue
        if "=" not in s:
            raise SnippetError("line %d: missing '=' in '%s'" % (num, _show(s, 40)))
        k, v = s.split("=", 1)
        k, v = k.strip(" \t"), v.strip(" \t")
        if len(v) >= 2 and v[0] == '"' and v[-1] == '"':
            v = v[1:-1]
        if cur is None:
            g[k.lower()] = v
            continue
        if k in ("code", "init"):
            if not re.match(r"^([0-9a-fA-F]{2}[ \t]*)+$", v):
                raise SnippetError("line %d: %s: not hex bytes" % (num, k))
            setattr(cur, k, getattr(cur, k) + bytes.fromhex(re.sub(r"[ \t]", "", v)))
        elif k in Snippet.KEYS:
            setattr(cur, k, v)
        else:
            raise SnippetError("line %d: unknown snippet key '%s'" % (num, _show(k, 40)))
    for s in snippets:
        check_snippet(s)
    if len(snippets) > MAX_SNIPPETS:
        raise SnippetError("more than %d snippets" % MAX_SNIPPETS)
    return g, snippets


def _strip_comment(line):
    """'#' at the start or after a blank, outside double quotes, starts a comment (kernel/config.c)."""
    in_quote = False
    for i, c in enumerate(line):
        if c == '"':
            in_quote = not in_quote
        elif c == "#" and not in_quote and (i == 0 or line[i - 1] in " \t"):
            return line[:i]
    return line


# ---- running ---------------------------------------------------------------------------------------

RunOutcome = collections.namedtuple("RunOutcome", "raw status reason stderr")
RunOutcome.__doc__ = """raw: the output (bytes) holding the records; status: "ok" when the runner/QEMU finished,
"timeout" when it was stopped; reason: one line; stderr: its stderr text."""


def _make_failure(target, output, rc):
    """One line for a failed make: the first compiler/linker error line, else make's last line."""
    lines = [l.strip() for l in output.splitlines() if l.strip()]
    first = next((l for l in lines if re.search(r"\b(error|undefined reference)\b", l) and not l.startswith("make")),
                 None)
    return "make %s failed: %s" % (target, _show(first or (lines[-1] if lines else "exit status %d" % rc), 200))


def build_host_bench(make="make"):
    """`make -s host-bench` (incremental). Its chatter is captured, so stdout stays the records'."""
    try:
        r = subprocess.run([make, "-s", "-C", REPO_ROOT, "host-bench"], stdout=subprocess.PIPE,
                           stderr=subprocess.STDOUT, universal_newlines=True, errors="replace")
    except FileNotFoundError:
        raise SnippetError("make not found (needed to build the hosted runner)") from None
    if r.returncode != 0:
        raise SnippetError(_make_failure("host-bench", r.stdout, r.returncode))
    if not os.access(HOST_BENCH, os.X_OK):
        raise SnippetError("make host-bench did not produce %s" % HOST_BENCH)


def run_hosted(cfg_text, timeout=300, binary=None, build=True):
    """Run the hosted runner (default HOST_BENCH, rebuilt first) on cfg_text: `pmubench-host --cfg FILE`
    -> RunOutcome."""
    if binary is None:
        binary = HOST_BENCH
        if build:
            build_host_bench()
    with tempfile.TemporaryDirectory(prefix="pmb-snippet-") as d:
        cfg = os.path.join(d, "pmubench.cfg")
        with open(cfg, "w", encoding="utf-8", newline="\n") as f:
            f.write(cfg_text)
        try:
            r = subprocess.run([binary, "--cfg", cfg], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                               timeout=timeout)
        except subprocess.TimeoutExpired as e:
            return RunOutcome(e.stdout or b"", "timeout", "the hosted runner did not finish in %gs" % timeout,
                              (e.stderr or b"").decode("utf-8", "replace"))
        except OSError as e:
            raise SnippetError("cannot run %s: %s" % (binary, e.strerror or e)) from None
    return RunOutcome(r.stdout, "ok", "hosted runner exit status %d" % r.returncode,
                      r.stderr.decode("utf-8", "replace"))


def run_qemu(cfg_text, accel, timeout=600, image=None, on_line=None):
    """Boot the UEFI image with cfg_text as pmubench.cfg (2 CPUs: the watchdog runs on the second) -> RunOutcome.
    accel "kvm" fails with qemu.choose_accel's one-line reason when KVM cannot run OVMF."""
    from . import qemu
    try:
        chosen, _why = qemu.choose_accel(accel)
        res = qemu.boot(image=image, cfg_text=cfg_text, accel=chosen, smp=2, mem="1G", timeout=timeout,
                        on_line=on_line)
    except (qemu.QemuError, ValueError) as e:
        raise SnippetError(str(e)) from None
    return RunOutcome(res.raw, "timeout" if res.status == "timeout" else "ok",
                      "QEMU (%s): %s (%s) after %.1fs" % (res.accel, res.status, res.reason, res.seconds), res.stderr)


# ---- printing --------------------------------------------------------------------------------------

def _num(v, fmt="%.3f"):
    if isinstance(v, bool) or v is None:
        return "-"
    if isinstance(v, (int, float)):
        return fmt % v
    return str(v)


def _ci(r):
    lo, hi = r.get("ci_lo"), r.get("ci_hi")
    if lo is None and hi is None:
        return "-"
    return "[%s, %s]" % (_num(lo), _num(hi))


def describe_crash(rec, snippets=None):
    """One line for a crash record; with the snippet's name, part and offset (and the statement there when
    the Snippet's assembly is known)."""
    by_name = {s.name: s for s in (snippets or [])}
    what = rec.get("name") or rec.get("kind") or "crash"
    if rec.get("vector") is not None:
        what = "%s (vector %s)" % (what, rec.get("vector"))
    sn = rec.get("snippet")
    where = ""
    if isinstance(sn, dict):
        name, part, off = sn.get("name"), sn.get("part"), sn.get("offset")
        if part == "outside":
            where = "in snippet %s, outside its code" % name
        elif part is None:
            where = "in snippet %s" % name
        elif off is None:
            where = "in snippet %s, %s" % (name, part)
        else:
            where = "in snippet %s, %s at offset %s" % (name, part, off)
        s = by_name.get(name)
        if s is not None and isinstance(off, int):
            st = statement_at(s.init_asm if part == "init" else s.asm, off)
            if st:
                where += ' (%s line %d: "%s")' % ("init" if part == "init" else "snippet", st[0], _show(st[1], 50))
    msg = rec.get("message")
    rip = rec.get("rip")
    tail = "; ".join(x for x in (("rip %s" % rip) if rip is not None else "", msg or "") if x)
    return "crash: %s%s%s" % (what, (" " + where) if where else "", (": " + tail) if tail else "")


def describe_error(rec):
    what = rec.get("what", "error")
    sn = rec.get("snippet")
    if isinstance(sn, dict):                  # {"name": ..} as the C side writes it; a plain name as the spec does
        sn = sn.get("name")
    msg = str(rec.get("message", ""))
    name = (" snippet %s:" % sn) if isinstance(sn, str) and sn not in msg else ""
    return ("error: %s:%s %s" % (what, name, msg)).rstrip()


COLUMNS = [
    "columns: cycles/copy = core cycles per copy of the snippet (the harness repeats the code; median over the "
    "samples), cycles_method = how cycles were obtained, CI = 95 % CI of the median, n = samples;",
    "  inst/copy = instructions per copy: 'N (asm)' counted from the assembled code, 'M (pmu:EVENT)' counted by "
    "the PMU where it can; cyc/inst = cycles per copy / instructions per copy (docs/snippets.md)"]


def table(run, snippets=None):
    """The printout of a verified parse.Run: one row per snippet record, counters below, problems, end status."""
    by_name = {s.name: s for s in (snippets or [])}
    recs = run.by_type("snippet")
    sus = figures.crosscheck_suspects(run.records)   # no check names a snippet today; the final verdict regardless
    head = ("snippet", "cycles/copy", "cycles_method", "CI", "n", "quality", "inst/copy", "cyc/inst")
    rows = []
    extra = []
    for r in recs:
        name = r.get("name", "?")
        s = by_name.get(name)
        cyc = r.get("cycles")
        static = s.instructions if s is not None else None
        measured = r.get("instructions")
        if static:
            inst = "%d (asm)" % static
            if isinstance(measured, (int, float)) and not isinstance(measured, bool):
                inst += " %.2f (%s)" % (measured, r.get("instructions_method") or "measured")
            per = static
        elif isinstance(measured, (int, float)) and not isinstance(measured, bool):
            inst = "%.2f (%s)" % (measured, r.get("instructions_method") or "measured")
            per = measured
        else:
            inst, per = "-", None
        cpi = "%.3f" % (cyc / per) if isinstance(cyc, (int, float)) and not isinstance(cyc, bool) and per else "-"
        fq, fwhy = figures.final_quality(r, sus)
        q = str(fq or "-")
        rows.append((name, _num(cyc), str(r.get("cycles_method") or "-"), _ci(r), _num(r.get("n"), "%d"), q,
                     inst, cpi))
        if fwhy:
            extra.append("  %s: quality %s: %s" % (name, q, fwhy))
        counters = r.get("counters")
        if isinstance(counters, dict) and counters:
            extra.append("  %s: counters per iteration: %s" % (
                name, ", ".join("%s=%s" % (k, _num(v)) for k, v in counters.items())))
        elif r.get("counters_why"):
            extra.append("  %s: no counters: %s" % (name, r["counters_why"]))
    out = []
    if rows:
        w = [max(len(head[i]), *(len(row[i]) for row in rows)) for i in range(len(head))]
        out.append("  ".join(h.ljust(w[i]) for i, h in enumerate(head)).rstrip())
        for row in rows:
            out.append("  ".join(c.rjust(w[i]) if i in (1, 4) else c.ljust(w[i]) for i, c in enumerate(row)).rstrip())
    else:
        out.append("no snippet results")
    out += extra
    if rows:
        out += COLUMNS
    for r in run.records:
        if r.get("type") == "crash":
            out.append(describe_crash(r, snippets))
        elif r.get("type") == "error":
            out.append(describe_error(r))
    out.append("run end: %s (%d records, crc32 %s verified)" % (run.status, len(run.records), run.crc32))
    return "\n".join(out) + "\n"


# ---- the `pmubench snippet` command ------------------------------------------------------------------

EXIT_OK, EXIT_RUN, EXIT_USAGE, EXIT_BAD_LOG, EXIT_TIMEOUT = 0, 1, 2, 3, 124


def _err(msg):
    import sys
    sys.stderr.write("pmubench snippet: %s\n" % msg)


def snippets_from_args(a):
    """The Snippets a parsed command line describes (assembled); SnippetError on bad input."""
    texts = list(a.code or [])
    if not texts:
        raise SnippetError("no snippet given")
    if len(texts) > MAX_SNIPPETS:
        raise SnippetError("%d snippets, at most %d per run" % (len(texts), MAX_SNIPPETS))
    names = list(a.name or [])
    if names and len(names) != len(texts):
        raise SnippetError("--name given %d times for %d snippets (give it once per snippet, or never)"
                           % (len(names), len(texts)))
    inits = list(a.init or [])
    if len(inits) == 1:
        inits = inits * len(texts)
    elif inits and len(inits) != len(texts):
        raise SnippetError("--init given %d times for %d snippets (give it once for all, or once per snippet)"
                           % (len(inits), len(texts)))
    syntax = "att" if a.att else "intel"
    opts = dict(unroll=a.unroll, loop=a.loop, warmup=a.warmup, timeout_ms=a.timeout_ms, aggregate=a.aggregate,
                events=a.events, differencing=False if a.no_differencing else None)
    # The options first (cheap, and the same for every snippet), so a bad number is reported before as runs.
    check_snippet(Snippet("s0", b"\x90", **opts), cli=True)
    out = []
    for i, text in enumerate(texts):
        name = names[i] if names else "s%d" % i
        check_snippet(Snippet(name, b"\x90"))
        what = "snippet" if len(texts) == 1 else "snippet %s" % name
        asm = assemble(text, syntax, what)
        init_asm = None
        if inits and inits[i].strip():
            init_asm = assemble(inits[i], syntax, "init" if len(texts) == 1 else "init of %s" % name)
        source = "%s: %s" % (name, "; ".join(t for _, t in asm.statements))
        if init_asm is not None:
            source += "\ninit: " + "; ".join(t for _, t in init_asm.statements)
        out.append(Snippet(name, asm.code, init_asm.code if init_asm else b"", source=source, asm=asm,
                           init_asm=init_asm, **opts))
    return out


def command(a):
    """`pmubench snippet` (cli.py's cmd_snippet): -> exit status."""
    import sys
    from . import parse as parsemod
    try:
        if a.profile is not None and a.profile not in ("quick", "full", "auto"):
            raise SnippetError("--profile: '%s' is not quick|full|auto" % _show(a.profile, 40))
        if a.timeout is not None:
            try:
                a.timeout = float(a.timeout)
            except ValueError:
                a.timeout = -1
            if not 0 < a.timeout < 1e6:
                raise SnippetError("--timeout: expected a positive number of seconds")
        snippets = snippets_from_args(a)
        cfg = config_text(snippets, {"profile": a.profile})
    except SnippetError as e:
        _err(str(e))
        return EXIT_USAGE
    for s in snippets:
        for w in s.asm.warnings + (s.init_asm.warnings if s.init_asm else []):
            _err("warning: " + w)
    if a.print_config:
        sys.stdout.write(cfg)
        return EXIT_OK
    mode = "tcg" if a.tcg else "kvm" if a.kvm else "hosted"
    try:
        if mode == "hosted":
            outcome = run_hosted(cfg, timeout=a.timeout or 300)
        else:
            from . import qemu
            try:
                qemu.choose_accel(mode)        # --kvm where KVM cannot run OVMF: its one-line reason, nothing built
            except qemu.QemuError as e:
                raise SnippetError(str(e)) from None
            image = a.image
            if image is None:
                _build_efi()
            _err("booting the image under QEMU (%s), 2 CPUs ..." % mode)
            outcome = run_qemu(cfg, mode, timeout=a.timeout or 600, image=image)
    except SnippetError as e:
        _err(str(e))
        return EXIT_RUN
    try:
        run = parsemod.parse_log(outcome.raw)
    except parsemod.LogError as e:
        if outcome.stderr.strip():
            sys.stderr.write(outcome.stderr if outcome.stderr.endswith("\n") else outcome.stderr + "\n")
        _err("%s; output rejected: %s" % (outcome.reason, e.reason))
        return EXIT_TIMEOUT if outcome.status == "timeout" else EXIT_BAD_LOG
    for w in run.warnings:
        _err("warning: " + w)
    if run.status != "ok" and outcome.stderr.strip():
        sys.stderr.write(outcome.stderr if outcome.stderr.endswith("\n") else outcome.stderr + "\n")
    if a.json:
        sys.stdout.write(run.jsonl())
    else:
        sys.stdout.write(table(run, snippets))
    return EXIT_OK if run.status == "ok" else EXIT_RUN


def _build_efi(make="make"):
    """`make -s efi` (incremental), so the image booted is this tree's."""
    try:
        r = subprocess.run([make, "-s", "-C", REPO_ROOT, "efi"], stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                           universal_newlines=True, errors="replace")
    except FileNotFoundError:
        raise SnippetError("make not found (needed to build the image)") from None
    if r.returncode != 0:
        raise SnippetError(_make_failure("efi", r.stdout, r.returncode))


def add_arguments(r):
    """The `snippet` subcommand's options (cli.py's build_parser calls this)."""
    r.add_argument("code", nargs="+", metavar="ASM",
                   help="instructions, separated by ';' or newlines; each ASM argument is one snippet")
    r.add_argument("--name", action="append", help="snippet name [a-z0-9_] (default s0, s1, ...); once per snippet")
    r.add_argument("--init", action="append", metavar="ASM",
                   help="code run at the start of every timed call, before the copies; once for all or once "
                        "per snippet")
    r.add_argument("--unroll", metavar="N", help="copies of the code per loop body, 1..100000 (default 100)")
    r.add_argument("--loop", metavar="N", help="0: no loop (default); N: the unrolled body runs N times (R15 counts)")
    r.add_argument("--warmup", metavar="N", help="untimed calls before measuring (default 5)")
    r.add_argument("--events", metavar="LIST", help="comma-separated PMU event specifiers to count (at most 8)")
    r.add_argument("--no-differencing", action="store_true", help="one run instead of n vs 2n copies")
    r.add_argument("--aggregate", metavar="median|min", help="aggregate of the samples (default median)")
    r.add_argument("--timeout-ms", metavar="N", help="watchdog per snippet in ms (default 5000)")
    r.add_argument("--att", action="store_true", help="AT&T syntax (default: Intel syntax, no register prefixes)")
    r.add_argument("--profile", metavar="quick|full", help="measurement effort (default: the runner's auto)")
    g = r.add_mutually_exclusive_group()
    g.add_argument("--hosted", action="store_true", help="run in the Linux hosted runner (the default)")
    g.add_argument("--tcg", action="store_true", help="boot the UEFI image under QEMU TCG (no PMU, TSC-based)")
    g.add_argument("--kvm", action="store_true", help="boot the UEFI image under QEMU/KVM (fails if KVM cannot)")
    r.add_argument("--image", help="EFI image for --tcg/--kvm (default: build/pmubench.efi, rebuilt by make efi)")
    r.add_argument("--timeout", metavar="S", help="wall-clock limit of the run (default 300 s hosted, "
                                                              "600 s QEMU)")
    g = r.add_mutually_exclusive_group()
    g.add_argument("--json", action="store_true", help="print the run's records (JSON Lines, as emitted)")
    g.add_argument("--print-config", action="store_true", help="print the generated pmubench.cfg and stop")
