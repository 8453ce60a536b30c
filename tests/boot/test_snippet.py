"""User snippets in the real image under QEMU TCG: a good snippet measured, a faulting one named in the crash
record with its offset, one that never returns stopped by the watchdog on another CPU, and bad sections refused.
(TCG runs the code but its timing means nothing: these tests assert behaviour, never cycles.)"""
import pytest

from conftest import boot

GOOD = """bench=snippet
[snippet add_chain]
code = 48 01 c0
unroll = 20
[snippet inc_loop]
init = 49 c7 06 00 00 00 00   # mov qword [r14], 0
code = 49 ff 06               # inc qword [r14]
loop = 4
unroll = 8
events = INST_RETIRED:ANY_P
"""


def test_snippets_measured_and_recorded():
    b = boot(cpu="Nehalem", smp=2, mem="1G", cfg_text=GOOD)
    assert b.run.status == "ok"
    recs = {r["name"]: r for r in b.run.by_type("snippet")}
    assert set(recs) == {"add_chain", "inc_loop"}
    a = recs["add_chain"]
    assert a["code_bytes"] == 3 and a["unroll"] == 20 and a["loop"] == 0 and a["differencing"] is True
    assert a["figure"] == "snippet/add_chain" and a["unit"] == "cycles"
    assert a["quality"] != "unavailable" and a["n"] >= 7
    assert a["method"].startswith("n_vs_2n")
    # TCG has no PMU: cycles through the core/TSC ratio, and the counters say why they are missing
    assert a["cycles_method"].startswith("core_tsc_ratio")
    assert a["instructions"] is None and a["counters_why"]
    i = recs["inc_loop"]
    assert i["loop"] == 4 and i["init_bytes"] == 7
    assert i["counters"] == {"INST_RETIRED:ANY_P": None}
    # the run record carries the snippets in the effective config
    assert "snippet" in b.run.run["config"]["bench"]


def test_faulting_snippet_names_itself_and_offset():
    cfg = """bench=snippet
[snippet fine]
code = 90
[snippet bad_ud2]
code = 48 01 c0 0f 0b   # add rax, rax; ud2
unroll = 10
"""
    b = boot(cpu="Nehalem", smp=2, mem="1G", cfg_text=cfg)
    assert b.run.status == "crashed"
    assert [r["name"] for r in b.run.by_type("snippet")] == ["fine"]  # the one before it finished
    c = b.one("crash")
    assert c["vector"] == 6 and c["name"].startswith("#UD")
    assert c["snippet"] == {"name": "bad_ud2", "part": "code", "offset": 3}
    assert "in snippet 'bad_ud2', code at offset 3" in b.log


def test_fault_in_init_is_located_in_init():
    cfg = "bench=snippet\n[snippet bad_init]\ninit = 90 90 0f 0b\ncode = 90\n"
    b = boot(cpu="Nehalem", smp=2, mem="1G", cfg_text=cfg)
    assert b.run.status == "crashed"
    assert b.one("crash")["snippet"] == {"name": "bad_init", "part": "init", "offset": 2}


def test_snippet_that_never_returns_is_stopped_by_the_watchdog():
    cfg = """bench=snippet
[snippet spin]
code = eb fe          # jmp $ (an endless loop)
unroll = 1
timeout_ms = 300
"""
    b = boot(cpu="Nehalem", smp=2, mem="1G", cfg_text=cfg, timeout=60)
    assert b.run.status == "error"
    e = [r for r in b.run.by_type("error") if r.get("what") == "snippet_timeout"]
    assert len(e) == 1
    assert e[0]["snippet"]["name"] == "spin" and e[0]["snippet"]["part"] == "code"
    assert e[0]["timeout_ms"] == 300
    assert "spin" in e[0]["message"]
    assert "watchdog: snippet 'spin' did not return within 300 ms" in b.log


def test_one_cpu_has_no_watchdog_and_runs_nothing():
    cfg = "bench=snippet\n[snippet spin]\ncode = eb fe\n"
    b = boot(cpu="Nehalem", smp=1, mem="1G", cfg_text=cfg)
    assert b.run.status == "ok"
    s = b.one("snippet")
    assert s["quality"] == "unavailable" and "second CPU" in s["quality_reason"]


def test_bad_sections_are_a_config_error():
    for cfg, want in [
        ("bench=snippet\n", "bench=snippet needs at least one [snippet NAME]"),
        ("bench=snippet\n[snippet x]\ncode = 4g\n", "pmubench.cfg:3: code:"),
        ("bench=timer\n[snippet x]\nunroll = 0\ncode = 90\n", "pmubench.cfg:3: unroll: 0 is out of range"),
    ]:
        b = boot(cpu="Nehalem", smp=1, mem="1G", cfg_text=cfg)
        assert b.run.status == "error", cfg
        err = [r for r in b.run.by_type("error") if r.get("what") == "config"]
        assert err and want in err[0]["message"], (cfg, err)


# The hosted runner's hostile cases (test_hosted_hostile_snippet_is_contained below) in the image: the same snippet
# and the same location, by the CPU's exception; the image then ends the run (docs/snippets.md, "Safety").
@pytest.mark.parametrize("code,extra,vector,part,offset", [
    ("c3", "", 14, "outside", None),                          # ret: #PF at the popped address
    ("e9 00 00 00 10", "", 14, "outside", None),              # a far jump
    ("50", "", 14, "outside", None),                          # push without pop: ret to RAX
    ("48 31 e4", "", 8, "harness", None),                     # xor rsp, rsp: #DF on the IST stack
    ("50", "loop = 1000000\n", 8, "code", 0),                 # stack overflow: the guard page below its stack
    ("b8 e7 00 00 00 31 ff 0f 05", "", 6, "code", 7),         # exit_group: syscall is #UD (EFER.SCE off)
    ("0f 05", "", 6, "code", 0),
    ("cd 80", "", 13, "code", 0),                             # int 0x80: #GP
])
def test_hostile_snippet_in_the_image(code, extra, vector, part, offset):
    cfg = ("bench=snippet\n[snippet before]\ncode = 48 01 c0\n[snippet bad]\ncode = %s\n%s[snippet after]\ncode = 90\n"
           % (code, extra))
    b = boot(cpu="Nehalem", smp=2, mem="1G", cfg_text=cfg, timeout=120)
    assert b.run.status == "crashed"
    assert [r["name"] for r in b.run.by_type("snippet")] == ["before"]
    c = b.one("crash")
    assert c["vector"] == vector and c["snippet"]["name"] == "bad" and c["snippet"]["part"] == part
    if offset is not None:
        assert c["snippet"]["offset"] == offset


def largest_config(bench="snippet"):
    """The largest pmubench.cfg the snippet writer emits: 16 snippets of 2048 code and 2048 init bytes (NOPs, so the
    run stays short under TCG), each with its assembly as comments and every key, through scripts/pmb/snippet.py."""
    from pmb import snippet as sn
    snips = []
    for i in range(sn.MAX_SNIPPETS):
        name = ("s%02d_" % i).ljust(sn.NAME_MAX, "x")
        src = "%s: %s\ninit: %s" % (name, "; ".join(["nop"] * 2048), "; ".join(["nop"] * 2048))
        snips.append(sn.Snippet(name, b"\x90" * sn.CODE_MAX, init=b"\x90" * sn.INIT_MAX, unroll=1, loop=0, warmup=1,
                                events=",".join(["INST_RETIRED:ANY_P"] * 8), differencing=True, aggregate="median",
                                timeout_ms=60000, source=src))
    text = sn.config_text(snips, {"profile": "quick"})
    if bench != "snippet":
        text = text.replace("bench = snippet", "bench = " + bench, 1)
    return text, sn.CFG_FILE_MAX


def test_largest_valid_config_boots():
    """The image reads the largest file the snippet writer emits (kernel/config.h CFG_FILE_MAX holds it) and runs
    all 16 snippets from it; one byte over the limit is refused with the limit named."""
    text, limit = largest_config()
    assert 200 * 1024 < len(text) <= limit
    b = boot(cpu="Nehalem", smp=2, mem="1G", cfg_text=text, timeout=600)
    assert b.run.status == "ok", [r for r in b.run.records if r.get("type") in ("error", "crash")]
    recs = b.run.by_type("snippet")
    assert len(recs) == 16 and all(r["code_bytes"] == 2048 and r["init_bytes"] == 2048 for r in recs)
    assert all(r["quality"] != "unavailable" for r in recs)
    over = text + "#" * (limit + 1 - len(text))
    b = boot(cpu="Nehalem", smp=1, mem="1G", cfg_text=over)
    assert b.run.status == "error"
    assert "pmubench.cfg: file larger than %d bytes" % limit in b.one("error")["message"]


def test_bench_error_names_file_and_line():
    b = boot(cpu="Nehalem", smp=1, mem="1G", cfg_text="profile = quick\nbench = latency,frob\n")
    assert b.run.status == "error"
    assert b.one("error")["message"].startswith("pmubench.cfg:2: bad value for 'bench': unknown benchmark 'frob'")


# ---- the same snippets in the hosted runner (a Linux process): each in a child process under a seccomp filter ----

import os  # noqa: E402
import subprocess  # noqa: E402
import sys  # noqa: E402


from conftest import ROOT  # noqa: E402

sys.path.insert(0, os.path.join(ROOT, "scripts"))
from pmb import parse  # noqa: E402

HOST_BENCH = os.path.join(ROOT, "build", "host-bench", "pmubench-host")


@pytest.fixture(scope="module")
def host_exe():
    p = subprocess.run(["make", "-s", "host-bench"], cwd=ROOT, capture_output=True, text=True, timeout=300)
    assert p.returncode == 0, p.stdout + p.stderr
    return HOST_BENCH


def hosted(exe, tmp_path, cfg, *args, timeout=60):
    f = tmp_path / "s.cfg"
    f.write_text(cfg)
    p = subprocess.run([exe, "--cfg", str(f), *args], capture_output=True, text=True, timeout=timeout)
    return p, parse.parse_log(p.stdout)


def test_hosted_fault_names_snippet_and_offset(host_exe, tmp_path):
    p, run = hosted(host_exe, tmp_path, "bench=snippet\n[snippet ok]\ncode = 90\n"
                                        "[snippet bad]\ncode = 48 01 c0 48 01 c0 0f 0b\nunroll = 4\n")
    assert p.returncode == 1
    assert run.status == "crashed"
    assert [r["name"] for r in run.by_type("snippet")] == ["ok"]
    c = run.by_type("crash")[0]
    assert c["name"] == "SIGILL" and c["snippet"] == {"name": "bad", "part": "code", "offset": 6}
    assert "in snippet 'bad', code at offset 6" in p.stdout
    # a load from an unmapped address: SIGSEGV, located the same way
    p, run = hosted(host_exe, tmp_path, "bench=snippet\n[snippet segv]\ninit = 31 c0\ncode = 48 8b 00\nunroll = 2\n")
    c = run.by_type("crash")[0]
    assert run.status == "crashed" and c["name"] == "SIGSEGV" and c["addr"] == "0x0"
    assert c["snippet"] == {"name": "segv", "part": "code", "offset": 0}


def test_hosted_watchdog_ends_run_with_error(host_exe, tmp_path):
    p, run = hosted(host_exe, tmp_path, "bench=snippet\n[snippet spin]\ncode = eb fe\nunroll = 1\ntimeout_ms = 200\n",
                    timeout=30)
    assert p.returncode == 1
    assert run.status == "error"
    e = [r for r in run.by_type("error") if r.get("what") == "snippet_timeout"][0]
    assert e["snippet"]["name"] == "spin" and e["timeout_ms"] == 200


def test_hosted_cfg_errors(host_exe, tmp_path):
    # A config error: one line on stderr, exit 2, and the record stream (run, error, end) on stdout.
    p, run = hosted(host_exe, tmp_path, "bench=snippet\n[snippet x]\ncode = 90\naggregate = mean\n")
    assert p.returncode == 2 and run.status == "error"
    assert "s.cfg:4: aggregate: 'mean' is not median|min" in run.by_type("error")[0]["message"]
    assert p.stderr.strip().splitlines() == ["pmubench-host: config error: " + run.by_type("error")[0]["message"]]
    assert "config error" not in p.stdout
    p = subprocess.run([host_exe, "--cfg", str(tmp_path / "missing.cfg")], capture_output=True, text=True)
    assert p.returncode == 2 and "missing.cfg: No such file or directory" in p.stderr
    # bench= naming an unknown benchmark: the file and the line, like every other config error
    p, run = hosted(host_exe, tmp_path, "profile = quick\n\nbench = latency,frob\n")
    assert p.returncode == 2 and run.status == "error"
    assert run.by_type("error")[0]["message"].startswith("%s:3: bad value for 'bench': unknown benchmark 'frob'"
                                                         % (tmp_path / "s.cfg"))
    p, run = hosted(host_exe, tmp_path, "profile = quick\n", "bench=frob")
    assert p.returncode == 2 and run.by_type("error")[0]["message"].startswith("command line: bad value for 'bench'")


def test_hosted_two_cfg_files_are_refused(host_exe, tmp_path):
    a, b = tmp_path / "a.cfg", tmp_path / "b.cfg"
    a.write_text("profile = quick\n")
    b.write_text("bench = none\n")
    p = subprocess.run([host_exe, "--cfg", str(a), "--cfg=" + str(b)], capture_output=True, text=True, timeout=60)
    assert p.returncode == 2 and p.stdout == ""
    assert p.stderr.strip() == ("pmubench-host: --cfg given twice (%s, then %s): give one config file; key=value "
                                "arguments override its keys" % (a, b))


def test_hosted_config_size_limit(host_exe, tmp_path):
    """The image's limit, in the hosted runner too: the largest file the snippet writer emits runs, one byte more
    is refused before anything runs."""
    text, limit = largest_config()
    p, run = hosted(host_exe, tmp_path, text, timeout=300)
    assert p.returncode == 0 and run.status == "ok", p.stderr
    assert len(run.by_type("snippet")) == 16
    f = tmp_path / "big.cfg"
    f.write_text(text + "#" * (limit + 1 - len(text)))
    p = subprocess.run([host_exe, "--cfg", str(f)], capture_output=True, text=True, timeout=60)
    assert p.returncode == 2 and p.stdout == ""
    assert p.stderr.strip() == ("pmubench-host: --cfg %s: file larger than %d bytes (the limit of pmubench.cfg, "
                                "docs/config.md)" % (f, limit))


def test_hosted_crash_test_raised_through_the_guard_or_refused(host_exe, tmp_path):
    for kind, sig, off in [("ud", "SIGILL", 0), ("gp", "SIGSEGV", 0), ("pf", "SIGSEGV", 2)]:
        p, run = hosted(host_exe, tmp_path, "profile = quick\nbench = none\n", "crash_test=" + kind)
        assert p.returncode == 1 and run.status == "crashed", (kind, p.stderr)
        c = run.by_type("crash")[0]
        assert c["name"] == sig and c["crash_test"] == {"name": kind, "part": "code", "offset": off}
    for kind in ("nested", "ap_ud", "ap_hang"):
        p, run = hosted(host_exe, tmp_path, "profile = quick\ncrash_test = %s\n" % kind)
        assert p.returncode == 2 and run.status == "error"
        msg = run.by_type("error")[0]["message"]
        assert msg == "%s:2: crash_test=%s cannot be raised in the hosted runner (it raises ud, gp and pf)" % (
            tmp_path / "s.cfg", kind)


def test_hosted_max_cpus_beyond_the_mask_is_said(host_exe, tmp_path):
    p, run = hosted(host_exe, tmp_path, "profile = quick\nbench = none\nmax_cpus = 4096\n")
    assert p.returncode == 0 and run.status == "ok"
    n = run.run["cpus"]
    note = "max_cpus=4096, but this process can use %d CPU(s) (%d in its affinity mask); running on %d" % (
        n, run.run["cpus_allowed"], n)
    assert run.run["max_cpus_note"] == note
    assert "pmubench-host: " + note in p.stderr
    p, run = hosted(host_exe, tmp_path, "profile = quick\nbench = none\nmax_cpus = 1\n")
    assert "max_cpus_note" not in run.run and "max_cpus=1, but" not in p.stderr


# Snippets that take the process down outside their own bytes, or talk to the kernel: each ends in the image's record
# (the snippet, the part, the offset where known), the snippets around it keep their figures, the end record says
# crashed (docs/snippets.md, "Safety").
GOOD_AROUND = "bench=snippet\nprofile=quick\n[snippet before]\ncode = 48 01 c0\n%s[snippet after]\ncode = 90\n"


@pytest.mark.parametrize("code,extra,sig,part,offset,syscall", [
    ("c3", "", "SIGSEGV", "outside", None, None),                        # ret: returns into a saved register
    ("e9 00 00 00 10", "", "SIGSEGV", "outside", None, None),            # a far jump
    ("50", "", "SIGSEGV", "outside", None, None),                        # push without pop: ret to RAX
    ("48 31 e4", "", "SIGSEGV", "harness", None, None),                  # xor rsp, rsp: the harness's pop faults
    ("50", "loop = 1000000\n", "SIGSEGV", "code", 0, None),              # stack overflow: 10^8 pushes
    ("b8 e7 00 00 00 31 ff 0f 05", "", "SIGSYS", "code", 7, 231),        # exit_group(0)
    ("0f 05", "", "SIGSYS", "code", 0, None),                            # a bare syscall
    ("cd 80", "", "SIGSYS", "code", 0, None),                            # int 0x80 (the i386 ABI)
])
def test_hosted_hostile_snippet_is_contained(host_exe, tmp_path, code, extra, sig, part, offset, syscall):
    p, run = hosted(host_exe, tmp_path, GOOD_AROUND % ("[snippet bad]\ncode = %s\n%s" % (code, extra)))
    assert p.returncode == 1 and run.status == "crashed", p.stdout[-2000:]
    assert [r["name"] for r in run.by_type("snippet")] == ["before", "after"]
    assert all(r["quality"] != "unavailable" for r in run.by_type("snippet"))
    crashes = run.by_type("crash")
    assert len(crashes) == 1
    c = crashes[0]
    assert c["kind"] == "signal" and c["name"] == sig
    assert c["snippet"]["name"] == "bad" and c["snippet"]["part"] == part
    if offset is not None:
        assert c["snippet"]["offset"] == offset
    if sig == "SIGSYS":
        assert "no system call is allowed" in c["message"]
        if syscall is not None:
            assert c["syscall"] == syscall
    # the record order: the crash where the snippet ran
    types = [r["type"] for r in run.records if r["type"] in ("snippet", "crash")]
    assert types == ["snippet", "crash", "snippet"]
    assert "run ended 'crashed'" in p.stderr


def test_hosted_timeout_goes_on_with_the_next_snippet(host_exe, tmp_path):
    p, run = hosted(host_exe, tmp_path,
                    GOOD_AROUND % "[snippet spin]\ncode = eb fe\nunroll = 1\ntimeout_ms = 200\n", timeout=60)
    assert p.returncode == 1 and run.status == "error"
    assert [r["name"] for r in run.by_type("snippet")] == ["before", "after"]
    e = [r for r in run.by_type("error") if r.get("what") == "snippet_timeout"][0]
    assert e["snippet"] == {"name": "spin", "part": "code", "offset": 0} and e["rip"].startswith("0x")
    assert "the run goes on" in e["message"]


def test_hosted_crash_outranks_timeout_in_the_end_record(host_exe, tmp_path):
    cfg = ("bench=snippet\nprofile=quick\n[snippet spin]\ncode = eb fe\ntimeout_ms = 200\n"
           "[snippet bad]\ncode = 0f 0b\n[snippet fine]\ncode = 90\n")
    p, run = hosted(host_exe, tmp_path, cfg)
    assert p.returncode == 1 and run.status == "crashed"
    assert [r["name"] for r in run.by_type("snippet")] == ["fine"]


# ---- scripts/pmubench snippet against the image

def test_host_command_boots_the_image_under_tcg(tmp_path):
    """scripts/pmubench snippet --tcg: assemble, write the config, boot the UEFI image, verify, print records."""
    pmubench = os.path.join(ROOT, "scripts", "pmubench")
    p = subprocess.run([sys.executable, pmubench, "snippet", "--tcg", "--json", "imul rax, rax", "--name", "imul"],
                       capture_output=True, text=True, timeout=300)
    assert p.returncode == 0, p.stderr[-2000:]
    run = parse.parse_log(p.stdout)
    assert run.status == "ok" and run.run["firmware"]["kind"] == "uefi"
    s = run.by_type("snippet")[0]
    assert s["name"] == "imul" and s["code"] == "480fafc0" and s["quality"] != "unavailable"
    # --kvm where KVM cannot run the image: one line, non-zero, no traceback
    p = subprocess.run([sys.executable, pmubench, "snippet", "--kvm", "nop"], capture_output=True, text=True,
                       timeout=120)
    if p.returncode == 0:
        pytest.skip("KVM works on this machine")
    assert "Traceback" not in p.stderr and len(p.stderr.strip().splitlines()) == 1, p.stderr
