"""`pmubench snippet` (issue 14, host side): the GNU as wrapper, the [snippet NAME] config text, the command
line, the printout from a scripted runner, and end-to-end hosted runs of chains of known latency.

The host-only tests take a few seconds (as/objdump per assembly). The end-to-end tests need the C side: they
are skipped only while build/host-bench/pmubench-host --help does not mention --cfg.
"""
import functools
import json
import os
import stat
import subprocess
import sys

import pytest

import logs
from pmb import cli
from pmb import parse as parsemod
from pmb import snippet as sn

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
PMUBENCH = os.path.join(ROOT, "scripts", "pmubench")


def hexb(s):
    return bytes.fromhex(s)


# ---- the assembler wrapper ----------------------------------------------------------------------------

@pytest.mark.parametrize("text,syntax,code", [
    ("add rax, rax", "intel", "48 01 c0"),
    ("imul rax, rax", "intel", "48 0f af c0"),
    ("crc32 rax, rax", "intel", "f2 48 0f 38 f1 c0"),
    ("addq %rax, %rax", "att", "48 01 c0"),
    ("imulq %rax, %rax", "att", "48 0f af c0"),
])
def test_assemble_single(text, syntax, code):
    a = sn.assemble(text, syntax)
    assert a.code == hexb(code)
    assert a.instructions == 1
    assert a.offsets == [(0, 1)]


def test_assemble_several_statements_semicolons_newlines_comments():
    a = sn.assemble("add rax,1; add rbx,1\n  add rcx,1   # a comment; not a statement\n\n;add rdx,1;")
    assert a.code == hexb("48 83 c0 01 48 83 c3 01 48 83 c1 01 48 83 c2 01")
    assert a.instructions == 4
    assert [t for _, t in a.statements] == ["add rax,1", "add rbx,1", "add rcx,1", "add rdx,1"]
    assert a.offsets == [(0, 1), (4, 2), (8, 3), (12, 4)]
    assert sn.statement_at(a, 9) == (3, "add rcx,1")


def test_assemble_local_labels_resolve_without_relocations():
    a = sn.assemble("1: dec rcx\njnz 1b")
    assert a.code == hexb("48 ff c9 75 fb")
    assert a.instructions == 2


def test_split_statements_keeps_quoted_semicolons():
    assert sn.split_statements('.ascii "a;b#c"; nop # x; y\r\nret') == [(1, '.ascii "a;b#c"'), (2, "nop"), (3, "ret")]


def test_bad_assembly_names_the_statement():
    with pytest.raises(sn.SnippetError) as e:
        sn.assemble("add rax, rax\nimul rax, rbx, rcx, rdx")
    msg = str(e.value)
    assert msg.startswith('snippet line 2 ("imul rax, rbx, rcx, rdx"): Error: ')
    assert "operands" in msg and "\n" not in msg
    # ';' separates statements too, and blank statements are not counted.
    with pytest.raises(sn.SnippetError, match=r'^snippet line 3 \("bogus rax"\): Error: .*bogus'):
        sn.assemble("nop;; nop\n\nbogus rax; nop")


def test_att_syntax_error_and_several_errors():
    with pytest.raises(sn.SnippetError) as e:
        sn.assemble("addq %rax, %rax; addq %rax; frob", "att")
    msg = str(e.value)
    assert msg.startswith('snippet line 2 ("addq %rax"): Error: ') and msg.endswith("(and 1 more error)")


def test_undefined_symbol_and_absolute_addresses_are_refused():
    with pytest.raises(sn.SnippetError, match=r"^snippet line 2 \(\"call foo\"\): needs a relocation .*"
                                              r"undefined symbol 'foo'"):
        sn.assemble("nop; call foo")
    with pytest.raises(sn.SnippetError, match="absolute address in the snippet itself"):
        sn.assemble("mov rax, offset 1f; 1: nop")
    with pytest.raises(sn.SnippetError, match="section .data; only .text is copied"):
        sn.assemble("nop; .data; .byte 1")


@pytest.mark.parametrize("text", ["", "   \n ; ;", "# only a comment"])
def test_empty_code(text):
    with pytest.raises(sn.SnippetError, match="code is empty"):
        sn.assemble(text)


def test_code_without_bytes():
    with pytest.raises(sn.SnippetError, match="assembles to no bytes"):
        sn.assemble("x:")


# ---- the config text --------------------------------------------------------------------------------

def test_config_text_round_trip():
    s0 = sn.Snippet("add_chain", hexb("48 01 c0"), init=hexb("48 31 c0"), unroll=50, loop=10, warmup=2,
                    events="INST_RETIRED:ANY_P , BR_INST_RETIRED:ALL_BRANCHES", differencing=False,
                    aggregate="min", timeout_ms=100, source="add_chain: add rax, rax")
    s1 = sn.Snippet("s1", hexb("90"))
    text = sn.config_text([s0, s1], {"profile": "quick"})
    lines = text.splitlines()
    assert "bench = snippet" in lines and "profile = quick" in lines
    assert lines.index("[snippet add_chain]") < lines.index("[snippet s1]")
    assert "code = 48 01 c0" in lines and "init = 48 31 c0" in lines
    assert "events = INST_RETIRED:ANY_P,BR_INST_RETIRED:ALL_BRANCHES" in lines
    assert "differencing = off" in lines and "aggregate = min" in lines
    # s1 leaves every key but code to the C side's defaults.
    assert lines[lines.index("[snippet s1]") + 1:] == ["code = 90"]
    g, back = sn.parse_config(text)
    assert g == {"bench": "snippet", "profile": "quick"}
    assert back == [s0, s1]
    assert back[0].unroll == 50 and back[0].differencing is False


def test_long_code_is_split_into_lines_within_the_limit():
    code = bytes(range(256)) * 8               # 2048 bytes: the most a snippet may have
    text = sn.config_text([sn.Snippet("big", code, init=bytes(200), unroll=1)])
    code_lines = [l for l in text.splitlines() if l.startswith("code =")]
    assert len(code_lines) == 2048 // 64
    assert max(len(l) for l in text.splitlines()) <= 255
    assert sn.parse_config(text)[1][0].code == code
    assert sn.parse_config(text)[1][0].init == bytes(200)


@pytest.mark.parametrize("snips,msg", [
    ([sn.Snippet("Bad-Name", b"\x90")], "a-z, 0-9 and _"),
    ([sn.Snippet("x" * 32, b"\x90")], "1..31 characters"),
    ([sn.Snippet("a", b"\x90"), sn.Snippet("a", b"\x90")], "used twice"),
    ([sn.Snippet("s%d" % i, b"\x90") for i in range(17)], "at most 16"),
    ([sn.Snippet("a", b"\x90" * 2049)], "at most 2048"),
    ([sn.Snippet("a", b"\x90", init=b"\x90" * 2049)], "at most 2048"),
    ([sn.Snippet("a", b"\x90", unroll=0)], "unroll: expected a number 1..100000"),
    ([sn.Snippet("a", b"\x90", unroll="1e3")], "unroll: expected a number"),
    ([sn.Snippet("a", b"\x90", timeout_ms=0)], "timeout_ms"),
    ([sn.Snippet("a", b"\x90", aggregate="mean")], "not median|min"),
    ([sn.Snippet("a", b"\x90", differencing="maybe")], "not on|off"),
    ([sn.Snippet("a", b"\x90", events="A B")], "not allowed"),
    ([sn.Snippet("a", b"\x90", events="A,,B")], "empty event"),
    ([sn.Snippet("a", b"\x90", events=",".join("E%d" % i for i in range(9)))], "more than 8"),
    ([sn.Snippet("a", b"\x90" * 2048, unroll=100000)], "exceeds"),
    ([], "no snippets"),
])
def test_config_text_refuses_what_the_c_side_would(snips, msg):
    with pytest.raises(sn.SnippetError, match=msg):
        sn.config_text(snips)


@pytest.mark.parametrize("text,msg", [
    ("[snippet a]\ncode = 4\n", "not hex"),
    ("[snippet a]\ncode = 48 0g\n", "not hex"),
    ("[snippet a]\nunroll = 5\n", "no code"),
    ("[snippet a]\ncode = 90\n[snippet a]\ncode = 90\n", "defined twice"),
    ("[snippet A]\ncode = 90\n", "bad snippet name"),
    ("[loop a]\ncode = 90\n", "unknown section"),
    ("[snippet a\ncode = 90\n", "without ']'"),
    ("[snippet a]\ncode = 90\ncolour = red\n", "unknown snippet key"),
    ("[snippet a]\ncode 90\n", "missing '='"),
    ("[snippet a]\ncode = " + "90 " * 90 + "\n", "line too long"),
    ("[snippet a]\ncode = 90\0\n", "NUL"),
])
def test_parse_config_hostile(text, msg):
    with pytest.raises(sn.SnippetError, match=msg):
        sn.parse_config(text)


def test_parse_config_comments_and_line_ends():
    g, s = sn.parse_config("\ufeffbench=snippet # c\r\n[snippet a]   # name\rcode = 48 01 # c0\n# x\ncode=c0\n")
    assert g == {"bench": "snippet"}
    assert s[0].code == hexb("48 01 c0")
    with pytest.raises(sn.SnippetError, match="not hex"):     # '#' glued to text is not a comment
        sn.parse_config("[snippet a]\ncode = 48 01#c0\n")


# ---- the command line ---------------------------------------------------------------------------------

def _cli(argv, capsys):
    rc = cli.main(["snippet"] + argv)
    out, err = capsys.readouterr()
    return rc, out, err


def test_cli_print_config_subprocess():
    r = subprocess.run([sys.executable, PMUBENCH, "snippet", "imul rax, rax", "add rax,1; add rbx,1",
                        "--name", "imul", "--name", "adds", "--init", "xor eax, eax", "--unroll", "20",
                        "--events", "INST_RETIRED.ANY", "--no-differencing", "--aggregate", "min",
                        "--timeout-ms", "1000", "--profile", "quick", "--print-config"],
                       stdout=subprocess.PIPE, stderr=subprocess.PIPE, universal_newlines=True)
    assert r.returncode == 0, r.stderr
    g, s = sn.parse_config(r.stdout)
    assert g == {"bench": "snippet", "profile": "quick"}
    assert [x.name for x in s] == ["imul", "adds"]
    assert s[0].code == hexb("48 0f af c0") and s[0].init == hexb("31 c0") == s[1].init
    assert s[1].code == hexb("48 83 c0 01 48 83 c3 01")
    assert (s[0].unroll, s[0].events, s[0].differencing, s[0].aggregate, s[0].timeout_ms) == \
        (20, "INST_RETIRED.ANY", False, "min", 1000)
    assert "# imul: imul rax, rax" in r.stdout.splitlines()


def test_cli_att_and_default_names(capsys):
    rc, out, _ = _cli(["addq %rax, %rax", "nop", "--att", "--print-config"], capsys)
    assert rc == 0
    s = sn.parse_config(out)[1]
    assert [(x.name, x.code) for x in s] == [("s0", hexb("48 01 c0")), ("s1", hexb("90"))]
    assert s[0].unroll is None and "profile" not in sn.parse_config(out)[0]


@pytest.mark.parametrize("argv,msg", [
    (["add rax, rax", "--unroll", "0"], "--unroll: expected a number 1..100000, got '0'"),
    (["add rax, rax", "--unroll", "many"], "--unroll: expected a number 1..100000, got 'many'"),
    (["add rax, rax", "--aggregate", "mean"], "--aggregate: 'mean' is not median|min"),
    (["add rax, rax", "--loop", "-1"], "--loop: expected a number"),
    (["add rax, rax", "--profile", "fast"], "--profile: 'fast' is not quick|full|auto"),
    (["add rax, rax", "--events", "A B"], "--events: 'A B' has a character not allowed"),
    (["add rax, rax", "--timeout", "soon"], "--timeout: expected a positive number"),
    (["add rax, rax", "nop", "--name", "a"], "--name given 1 times for 2 snippets"),
    (["add rax, rax", "--name", "A"], "snippet name 'A'"),
    (["add rax, rax", "nop", "--name", "a", "--name", "a"], "used twice"),
    (["add rax, rax", "nop", "ret", "--init", "nop", "--init", "nop"], "--init given 2 times for 3 snippets"),
    (["add rax, rax\nimul rax, rbx, rcx, rdx"], 'snippet line 2 ("imul rax, rbx, rcx, rdx"): Error:'),
    (["nop", "bogus", "--name", "x", "--name", "y"], 'snippet y line 1 ("bogus"): Error:'),
    (["nop", "--init", "call foo"], 'init line 1 ("call foo"): needs a relocation'),
    ([""], "snippet: no instructions (the code is empty)"),
])
def test_cli_bad_input_one_line(argv, msg, capsys):
    rc, out, err = _cli(argv + ["--print-config"], capsys)
    assert rc == sn.EXIT_USAGE
    assert out == ""
    assert err.count("\n") == 1 and err.startswith("pmubench snippet: ") and msg in err, err


def test_cli_bad_input_subprocess_exit_status():
    r = subprocess.run([sys.executable, PMUBENCH, "snippet", "imul rax, rax", "--unroll", "0"],
                       stdout=subprocess.PIPE, stderr=subprocess.PIPE, universal_newlines=True)
    assert r.returncode != 0 and r.stdout == ""
    assert r.stderr == "pmubench snippet: --unroll: expected a number 1..100000, got '0'\n"


def test_cli_kvm_unusable_is_one_line(monkeypatch, capsys):
    from pmb import qemu

    def no_kvm(accel, *a, **k):
        assert accel == "kvm"
        raise qemu.QemuError("KVM requested but unusable: QEMU with -accel kvm cannot run OVMF: KVM internal error")

    monkeypatch.setattr(qemu, "choose_accel", no_kvm)
    monkeypatch.setattr(sn, "_build_efi", lambda: pytest.fail("built the image although KVM is unusable"))
    rc, out, err = _cli(["add rax, rax", "--kvm"], capsys)
    assert rc == sn.EXIT_RUN and out == ""
    assert err.splitlines() == ["pmubench snippet: KVM requested but unusable: QEMU with -accel kvm cannot run "
                                "OVMF: KVM internal error"]


# ---- printout and exit status from a scripted runner -------------------------------------------------

def _snippet_record(name, cycles, **kw):
    r = {"type": "snippet", "name": name, "code_bytes": 3, "init_bytes": 0, "unroll": 100, "loop": 0,
         "differencing": True, "aggregate": "median", "cpu": 0, "figure": "snippet/" + name, "unit": "cycles",
         "median": cycles, "p10": cycles * 0.99, "p90": cycles * 1.01, "min": cycles * 0.98, "max": cycles * 1.05,
         "n": 21, "spread": 0.01, "ci_lo": cycles * 0.995, "ci_hi": cycles * 1.005, "converged": True,
         "quality": "ok", "cycles": cycles, "cycles_method": "tsc*core_tsc_ratio:calibrated",
         "tsc_per_iter": cycles * 0.9, "instructions": None, "instructions_method": None, "counters": {},
         "counters_why": "no PMU in the hosted runner", "method": "n vs 2n differencing"}
    r.update(kw)
    return r


def _fake_runner(tmp_path, monkeypatch, records, status="ok", exit_code=0, noise="human table\n"):
    """A stand-in for pmubench-host: checks it got --cfg FILE with [snippet] sections, prints the records."""
    lines = logs.run_lines([logs.run_record()] + records, status)
    out = tmp_path / "out.log"
    out.write_text(noise + "".join(l + "\r\n" for l in lines))
    cfg_copy = tmp_path / "seen.cfg"
    prog = tmp_path / "pmubench-host"
    prog.write_text("#!/bin/sh\n[ \"$1\" = --cfg ] || exit 9\ncp \"$2\" %s\ncat %s\nexit %d\n"
                    % (cfg_copy, out, exit_code))
    prog.chmod(prog.stat().st_mode | stat.S_IEXEC)
    monkeypatch.setattr(sn, "HOST_BENCH", str(prog))
    monkeypatch.setattr(sn, "build_host_bench", lambda: None)
    return lines, cfg_copy


def test_table_from_scripted_run(tmp_path, monkeypatch, capsys):
    recs = [_snippet_record("s0", 3.01),
            _snippet_record("s1", 1.02, quality="noisy", quality_reason="spread 6 % above 5 %",
                            instructions=4.0, instructions_method="pmu:INST_RETIRED.ANY",
                            counters={"INST_RETIRED.ANY": 4.0}, cycles_method="pmu:CPU_CLK_UNHALTED.THREAD")]
    _, cfg = _fake_runner(tmp_path, monkeypatch, recs)
    rc, out, err = _cli(["imul rax, rax", "add rax,1; add rbx,1; add rcx,1; add rdx,1", "--profile", "quick"],
                        capsys)
    assert rc == 0, err
    assert [x.name for x in sn.parse_config(cfg.read_text())[1]] == ["s0", "s1"]
    lines = out.splitlines()
    assert lines[0].split() == ["snippet", "cycles/copy", "cycles_method", "CI", "n", "quality", "inst/copy",
                                "cyc/inst"]
    assert lines[1].split()[:6] == ["s0", "3.010", "tsc*core_tsc_ratio:calibrated", "[2.995,", "3.025]", "21"]
    assert lines[1].split()[6:] == ["ok", "1", "(asm)", "3.010"]
    assert "4 (asm) 4.00 (pmu:INST_RETIRED.ANY)" in lines[2] and lines[2].endswith("0.255")
    assert "  s0: no counters: no PMU in the hosted runner" in lines
    assert "  s1: quality noisy: spread 6 % above 5 %" in lines
    assert "  s1: counters per iteration: INST_RETIRED.ANY=4.000" in lines
    assert lines[-1].startswith("run end: ok (") and "verified" in lines[-1]


def test_json_is_the_records_as_emitted(tmp_path, monkeypatch, capsys):
    lines, _ = _fake_runner(tmp_path, monkeypatch, [_snippet_record("s0", 1.0)])
    rc, out, _ = _cli(["add rax, rax", "--json"], capsys)
    assert rc == 0
    assert out == "".join(l + "\n" for l in lines)
    run = parsemod.parse_log(out)
    assert run.status == "ok" and run.first("snippet")["cycles"] == 1.0


def test_crash_is_explained_and_fails(tmp_path, monkeypatch, capsys):
    crash = {"type": "crash", "kind": "exception", "cpu": 0, "vector": 6, "name": "#UD", "error_code": 0,
             "rip": "0xffff800000401004", "rsp": "0x0", "cr2": "0x0", "cr3": "0x1000",
             "message": "invalid opcode", "snippet": {"name": "bad", "part": "code", "offset": 4}}
    _fake_runner(tmp_path, monkeypatch, [crash], status="crashed", exit_code=1)
    rc, out, _ = _cli(["add rax, rax; nop; ud2", "--name", "bad"], capsys)
    assert rc == sn.EXIT_RUN
    assert ('crash: #UD (vector 6) in snippet bad, code at offset 4 (snippet line 3: "ud2"): '
            'rip 0xffff800000401004; invalid opcode') in out.splitlines()
    assert out.splitlines()[-1].startswith("run end: crashed")


def test_timeout_error_is_explained_and_fails(tmp_path, monkeypatch, capsys):
    e = {"type": "error", "what": "snippet_timeout", "snippet": "spin", "message": "no return within 100 ms"}
    _fake_runner(tmp_path, monkeypatch, [e], status="error", exit_code=1)
    rc, out, _ = _cli(["1: jmp 1b", "--name", "spin", "--timeout-ms", "100"], capsys)
    assert rc == sn.EXIT_RUN
    assert "error: snippet_timeout: snippet spin: no return within 100 ms" in out.splitlines()
    # The C side writes "snippet": {"name": ...}, and names the snippet in the message.
    e = {"type": "error", "what": "snippet_timeout", "snippet": {"name": "spin"},
         "message": "snippet 'spin' did not return within 100 ms"}
    assert sn.describe_error(e) == "error: snippet_timeout: snippet 'spin' did not return within 100 ms"
    assert sn.describe_error(dict(e, message="watchdog fired")) == "error: snippet_timeout: snippet spin: watchdog fired"


def test_crash_outside_the_code_and_system_call_are_explained():
    rec = {"type": "crash", "kind": "signal", "name": "SIGSEGV", "rip": "0x5", "message": "snippet 'b' faulted",
           "snippet": {"name": "b", "part": "outside"}}
    assert sn.describe_crash(rec) == "crash: SIGSEGV in snippet b, outside its code: rip 0x5; snippet 'b' faulted"
    rec = {"type": "crash", "kind": "signal", "name": "SIGKILL", "message": "killed", "snippet": {"name": "b"}}
    assert sn.describe_crash(rec) == "crash: SIGKILL in snippet b: killed"


def test_largest_config_fits_the_one_size_limit():
    """16 snippets of 2048 code and init bytes with every key and their assembly as comments: the largest file the
    writer emits is within CFG_FILE_MAX (kernel/config.h), which the image, the hosted runner and the writer share;
    a file over it is refused here rather than by the image."""
    snips = []
    for i in range(sn.MAX_SNIPPETS):
        name = ("s%02d_" % i).ljust(sn.NAME_MAX, "x")
        snips.append(sn.Snippet(name, b"\x90" * sn.CODE_MAX, init=b"\x90" * sn.INIT_MAX, unroll=1, loop=sn.LOOP_MAX,
                                warmup=sn.WARMUP_MAX, events=",".join(["E" * 24] * 8), differencing=False,
                                aggregate="median", timeout_ms=sn.TIMEOUT_MAX_MS,
                                source="%s: %s\ninit: %s" % (name, "; ".join(["nop"] * 2048), "; ".join(["nop"] * 2048))))
    text = sn.config_text(snips, {"profile": "quick"})
    assert 200 * 1024 < len(text) <= sn.CFG_FILE_MAX == 256 * 1024
    assert sn.parse_config(text)[1] == snips
    with open(os.path.join(os.path.dirname(__file__), "..", "..", "kernel", "config.h")) as f:
        assert "#define CFG_FILE_MAX (256u * 1024u)" in f.read()
    old = sn.CFG_FILE_MAX
    try:
        sn.CFG_FILE_MAX = len(text) - 1
        with pytest.raises(sn.SnippetError, match=r"^the config would be %d bytes, more than the %d bytes pmubench.cfg "
                                                  r"may hold$" % (len(text), len(text) - 1)):
            sn.config_text(snips, {"profile": "quick"})
    finally:
        sn.CFG_FILE_MAX = old


def test_unverifiable_output_fails(tmp_path, monkeypatch, capsys):
    lines, _ = _fake_runner(tmp_path, monkeypatch, [_snippet_record("s0", 1.0)])
    bad = tmp_path / "out.log"
    bad.write_text(bad.read_text().replace('"cycles":1.0', '"cycles":2.0'))
    rc, out, err = _cli(["add rax, rax", "--json"], capsys)
    assert rc == sn.EXIT_BAD_LOG and out == ""
    assert "output rejected" in err and "crc" in err.lower()


# ---- end to end: the hosted runner (needs the C side) -------------------------------------------------

@functools.lru_cache(maxsize=None)
def _hosted_runner_takes_cfg():
    """True when the hosted runner (rebuilt if make can) documents --cfg. A failing make is not a skip:
    the binary already there decides, and the run under test then reports the build failure."""
    try:
        sn.build_host_bench()
    except sn.SnippetError:
        pass
    try:
        r = subprocess.run([sn.HOST_BENCH, "--help"], stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                           universal_newlines=True, errors="replace", timeout=30)
    except OSError:
        return False
    return "--cfg" in r.stdout


def needs_hosted_cfg():
    if not _hosted_runner_takes_cfg():
        pytest.skip("build/host-bench/pmubench-host --help does not mention --cfg (the C side of snippets)")


def _hosted(argv):
    # full: a CI target of 1 % (not quick's 5 %), so interference shows as `noisy`; a hosted snippet run takes ~1 s.
    r = subprocess.run([sys.executable, PMUBENCH, "snippet", "--hosted", "--json", "--profile", "full"] + argv,
                       stdout=subprocess.PIPE, stderr=subprocess.PIPE, universal_newlines=True, timeout=600)
    assert r.returncode == 0, r.stderr[-2000:]
    run = parsemod.parse_log(r.stdout)       # the end record's CRC verifies over exactly what was printed
    assert run.status == "ok"
    recs = {x["name"]: x for x in run.by_type("snippet")}
    for x in recs.values():
        assert x.get("quality") != "unavailable", x
        assert isinstance(x.get("cycles"), (int, float)), x
    return recs


# Tolerances. Where the hosted runner has no PMU, cycles = TSC ticks x the core/TSC ratio it measures, and that
# ratio carries a CI of about 1-2 %; on a shared KVM guest (this box) steal time and frequency changes add a
# few percent more. +-10 % covers both while still telling 1 from 2 and 3 from 2 or 4 cycles, the mistakes
# that matter (a wrong ratio, a lost differencing step, a dependency chain that was not one).
# Attempts: on this 2-vCPU guest (a Firecracker VM on a shared host), about 1 run in 3 of the independent adds
# came out 20-55 % slow and mostly `noisy`, with the box otherwise idle and whether or not the runner's other
# CPU was in use (max_cpus=1 did the same): another tenant on the host core's SMT sibling takes ALU slots, which
# a throughput test feels and a latency chain does not (docs/snippets.md, "Validation"). Such interference is
# transient; a harness bug is not, so a check passes when one of 3 runs is within its tolerance, and a failure
# lists all 3.
ATTEMPTS = 3


def _within(argv, name, ok):
    seen = []
    for _ in range(ATTEMPTS):
        rec = _hosted(argv)[name]
        if ok(rec["cycles"]):
            return rec
        seen.append({k: rec.get(k) for k in ("cycles", "ci_lo", "ci_hi", "n", "quality", "quality_reason",
                                             "cycles_method")})
    pytest.fail("%s: no run of %d within tolerance: %s" % (" ".join(argv), ATTEMPTS, json.dumps(seen)),
                pytrace=False)


@pytest.mark.parametrize("asm,lo,hi", [
    ("add rax, rax", 0.9, 1.1),
    ("imul rax, rax", 2.7, 3.3),
    ("crc32 rax, rax", 2.7, 3.3),
])
def test_hosted_known_latency_chains(asm, lo, hi):
    needs_hosted_cfg()
    _within([asm, "--name", "chain"], "chain", lambda c: lo <= c <= hi)


def test_hosted_independent_adds_throughput():
    needs_hosted_cfg()
    # Every x86 core since Sandy Bridge / Zen has at least 3 integer ALUs (4 on Haswell+ and Zen), so 4
    # independent adds retire at 3 or more per cycle; 2.7 is that bound less the same 10 % as above.
    _within(["add rax,1; add rbx,1; add rcx,1; add rdx,1", "--name", "adds"], "adds", lambda c: 4 / c >= 2.7)


def test_hosted_several_snippets_json_verifies():
    needs_hosted_cfg()
    recs = _hosted(["add rax, rax", "imul rax, rax", "--name", "add", "--name", "imul"])
    assert set(recs) == {"add", "imul"}
    assert recs["imul"]["cycles"] > recs["add"]["cycles"]


def test_hosted_crash_names_the_snippet():
    needs_hosted_cfg()
    r = subprocess.run([sys.executable, PMUBENCH, "snippet", "--hosted", "--profile", "quick", "nop; ud2",
                        "--name", "bad"], stdout=subprocess.PIPE, stderr=subprocess.PIPE, universal_newlines=True,
                       timeout=600)
    assert r.returncode == sn.EXIT_RUN
    assert 'in snippet bad, code at offset 1 (snippet line 2: "ud2")' in r.stdout
    assert r.stdout.splitlines()[-1].startswith("run end: crashed")


def test_hosted_failing_snippet_keeps_the_good_results():
    """A snippet that takes its process down (ret: outside its own bytes) or makes a system call: the good snippets
    around it keep their figures, the crash is explained, the run ends crashed with a verified end record."""
    needs_hosted_cfg()
    r = subprocess.run([sys.executable, PMUBENCH, "snippet", "--hosted", "--profile", "quick", "add rax, rax", "ret",
                        "mov eax, 231; xor edi, edi; syscall", "imul rax, rax", "--name", "add", "--name", "ret",
                        "--name", "exit", "--name", "imul"],
                       stdout=subprocess.PIPE, stderr=subprocess.PIPE, universal_newlines=True, timeout=600)
    assert r.returncode == sn.EXIT_RUN, r.stderr
    out = r.stdout.splitlines()
    assert [ln.split()[0] for ln in out[1:3]] == ["add", "imul"]
    assert any(ln.startswith("crash: SIGSEGV in snippet ret, outside its code") for ln in out), r.stdout
    assert any(ln.startswith('crash: SIGSYS in snippet exit, code at offset 7 (snippet line 3: "syscall")')
               for ln in out), r.stdout
    assert out[-1].startswith("run end: crashed (") and "verified" in out[-1]
    assert "Traceback" not in r.stderr


# ---- issue 23: the printout explains itself; AT&T without --att is told so -------------------------------------

def test_att_code_without_att_suggests_att():
    for code in ("movq $1, %rax", "add %rbx, %rax", "imul $3, %rcx, %rcx"):
        with pytest.raises(sn.SnippetError) as e:
            sn.assemble(code)
        msg = str(e.value)
        assert msg.startswith('snippet line 1 ("%s"): ' % code) and msg.endswith(
            "is AT&T syntax; the default is Intel syntax without register prefixes: pass --att"), msg
        assert "\n" not in msg
        assert sn.assemble(code, "att").code                           # and with --att it assembles
    with pytest.raises(sn.SnippetError) as e:
        sn.assemble("imul rax, rbx, rcx, rdx")                        # an Intel mistake gets no AT&T hint
    assert "--att" not in str(e.value)


def test_table_says_cycles_per_copy_and_explains_its_columns():
    recs = logs.minimal_run() + [dict({"type": "snippet", "name": "s0", "cycles": 3.01,
                                       "cycles_method": "tsc*core_tsc_ratio:calibrated", "quality": "ok"},
                                      **logs.stats("cycles", 3.01, 0.002, 21))]
    run = parsemod.parse_log("\n".join(logs.run_lines(recs)))
    out = sn.table(run, [sn.Snippet("s0", b"\x48\x83\xc0\x01", asm=sn.assemble("add rax, 1"))])
    assert out.splitlines()[0].split()[:2] == ["snippet", "cycles/copy"]
    assert "cycles/copy = core cycles per copy of the snippet" in out
    assert "'N (asm)' counted from the assembled code" in out
