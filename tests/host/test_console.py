"""`pmubench run`'s console (issue 23): table lines as serial.log holds them, no progress line inside a table,
what is normal under TCG said once, the next step after a KVM fallback."""
import io
import re

import logs
from pmb import cli, qemu

SERIAL = """\x1b[0m== bench latency: load-to-use latency
Latency sweep: one random cycle over the working set
working set    random 4 KiB      random 2 MiB
                 ns  cycles        ns  cycles
{"type":"latency_sweep","bytes":1024}
     1 KiB      3.25    11.4      3.23    11.4
{"type":"latency_sweep","bytes":2048}
     2 KiB      3.25    11.4      3.25    11.4
{"type":"latency_series"}
Cache levels inferred from the random curve with 2 MiB pages (3 plateau(s) found):
{"type":"cache_inferred","level":1}
  L1  CPUID 64 KiB    inferred 32 KiB        3.28 ns    11.5 cycles
  L2  CPUID 512 KiB   inferred 512 KiB       5.97 ns    21.0 cycles
== bench latency done in 13.166 s
{"type":"end","status":"ok"}
"""


def feed(quiet=False):
    out = io.StringIO()
    p = cli.Progress(out, quiet=quiet)
    for line in SERIAL.splitlines(True):
        p(line.replace("\n", "\r\n"))
    return out.getvalue().splitlines()


def test_table_lines_kept_whole_and_no_progress_inside_tables():
    lines = feed()
    human = [l for l in SERIAL.replace("\x1b[0m", "").splitlines() if not l.startswith("{")]
    progress = [i for i, l in enumerate(lines) if re.match(r"^\[\s*\d+\.\ds\] ", l)]
    assert [l for i, l in enumerate(lines) if i not in progress] == human     # leading spaces kept, in order
    assert "                 ns  cycles        ns  cycles" in lines
    done = lines.index("== bench latency done in 13.166 s")
    assert progress[0] == done + 1
    assert lines[done + 1].endswith("records: latency_sweep 2, latency_series 1, cache_inferred 1")
    assert lines[-1].endswith("end record after 4 records")


def test_quiet_prints_progress_per_record_type():
    lines = feed(quiet=True)
    assert all(re.match(r"^\[\s*\d+\.\ds\] ", l) for l in lines)
    assert [l.split("] ")[1] for l in lines][:3] == ["> latency_sweep", "  latency_sweep: 2 records", "> latency_series"]


class _Boot:
    def __init__(self, raw):
        self.raw = raw.encode()
        self.status, self.reason, self.exit_code, self.accel = "ok", "isa-debug-exit 0", 1, "tcg"
        self.cmdline, self.stderr, self.seconds = ["qemu-system-x86_64"], "", 1.0


def test_kvm_fallback_prints_the_next_step_and_tcg_note_once(tmp_path, monkeypatch, capsys):
    text = logs.serial(logs.run_lines(logs.minimal_run()))
    why = ("KVM unusable (QEMU with -accel kvm exited with status -6: qemu-system-x86_64: error: failed to set "
           "MSR 0x10a to 0x69); using TCG")
    monkeypatch.setattr(qemu, "choose_accel", lambda accel: ("tcg", why))
    monkeypatch.setattr(qemu, "boot", lambda **kw: _Boot(text))
    assert cli.main(["run", "--out", str(tmp_path / "r"), "-q", "--no-report"]) == 0
    out = capsys.readouterr().out
    assert out.count("pmubench: note: under TCG the CPU is emulated") == 1
    step = next(l for l in out.splitlines() if l.startswith("pmubench: next step for KVM: "))
    assert "IA32_ARCH_CAPABILITIES (MSR 0x10a)" in step and "build/host-bench/pmubench-host" in step
    assert out.index("accelerator tcg") < out.index("next step for KVM") < out.index("note: under TCG")


def test_kvm_next_step_per_failure():
    assert "kvm group" in qemu.kvm_next_step("cannot open /dev/kvm: Permission denied")
    assert "cannot run OVMF" in qemu.kvm_next_step("QEMU with -accel kvm cannot run OVMF: KVM internal error.")
    assert "docs/kvm.md" in qemu.kvm_next_step("something else")
