"""User snippets in the real image under QEMU TCG: a good snippet measured, a faulting one named in the crash
record with its offset, one that never returns stopped by the watchdog on another CPU, and bad sections refused.
(TCG runs the code but its timing means nothing: these tests assert behaviour, never cycles.)"""
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


# ---- the same snippets in the hosted runner (a Linux process): the guard's signal handlers and watchdog thread ----

import os  # noqa: E402
import subprocess  # noqa: E402
import sys  # noqa: E402

import pytest  # noqa: E402

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
    p, run = hosted(host_exe, tmp_path, "bench=snippet\n[snippet x]\ncode = 90\naggregate = mean\n")
    assert p.returncode == 1 and run.status == "error"
    assert "s.cfg:4: aggregate: 'mean' is not median|min" in run.by_type("error")[0]["message"]
    p = subprocess.run([host_exe, "--cfg", str(tmp_path / "missing.cfg")], capture_output=True, text=True)
    assert p.returncode == 2 and "missing.cfg: No such file or directory" in p.stderr


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
