"""scripts/check_layers.py: the include graph between top-level folders points one way.

The first test runs the checker on this tree (`make test` counts it like any other test). The others build
small fake trees and show the checker passes a clean one and fails, naming file:line, the include and the
rule, on each kind of forbidden include and on asm in a pure-logic header: the check has teeth.
"""
import os
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
SCRIPT = os.path.join(ROOT, "scripts", "check_layers.py")


def check(root=None):
    cmd = [sys.executable, SCRIPT] + (["--root", str(root)] if root else [])
    p = subprocess.run(cmd, capture_output=True, text=True, timeout=60)
    return p.returncode, p.stdout


def tree(tmp_path, files):
    for rel, text in files.items():
        p = tmp_path / rel
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_text(text)
    return tmp_path


# A tree where every arrow points down: boot -> kernel, measure -> kernel, pmu -> measure/kernel/gen,
# bench -> pmu/measure, app -> everything, bench/hosted -> bench, a bare include beside the file.
CLEAN = {
    "boot/efi_main.c": '#include <efi.h>\n#include "kernel/kernel.h"\n',
    "kernel/kernel.h": '/* kernel.h */\n#include "kernel/klib.h"\n',
    "kernel/klib.h": "/* klib.h */\n",
    "kernel/io.h": '/* io.h */\nstatic inline void outb(void) { __asm__ volatile("outb %al, $0x80"); }\n',
    "kernel/isr.S": '#include "kernel/kernel.h"\n',
    "measure/timing.h": '#include "kernel/klib.h"\nstatic inline void f(void) { __asm__ volatile("lfence"); }\n',
    "measure/stats.c": '#include "measure/stats.h"\n#include "kernel/klib.h"\n',
    "measure/stats.h": "/* stats.h - the word asm( in a comment is fine */\n",
    "pmu/pmu.c": '#include "pmu/pmu.h"\n#include "measure/stats.h"\n#include "build/gen/pmu_events.h"\n',
    "pmu/event.c": '#include "event.h"\n#include "pmu_events.h"\n',
    "pmu/event.h": "/* event.h */\n",
    "pmu/pmu.h": "/* pmu.h */\n",
    "bench/latency.c": '#include "pmu/pmu.h"\n#include "measure/timing.h"\n#include <stdint.h>\n',
    "bench/hosted/main.c": '#include "bench/latency.h"\n',
    "bench/latency.h": "/* latency.h */\n",
    "app/main.c": '#include "app/start.h"\n#include "bench/latency.h"\n#include "pmu/pmu.h"\n#include "kernel/kernel.h"\n',
    "app/start.h": "/* start.h */\n",
}


def test_tree_has_no_forbidden_include():
    rc, out = check()
    assert rc == 0, "forbidden includes in the tree:\n" + out


def test_clean_fake_tree_passes(tmp_path):
    rc, out = check(tree(tmp_path, CLEAN))
    assert rc == 0, out
    assert "every include points down" in out


def test_forbidden_includes_fail(tmp_path):
    bad = dict(CLEAN)
    bad["pmu/latency_hooks.c"] = '#include "pmu/pmu.h"\n\n#include "bench/latency.h"\n'
    bad["kernel/main.c"] = '#include "kernel/kernel.h"\n#include "pmu/pmu.h"\n'
    bad["boot/efi_main.c"] = '#include <efi.h>\n#include  "bench/latency.h"\n'
    bad["measure/chase.c"] = '# include "measure/stats.h"\n#include <pmu/pmu.h>\n'
    bad["bench/bench.c"] = '#include "app/start.h"\n'
    bad["kernel/report.c"] = '#include "pmu_events.h"\n'
    rc, out = check(tree(tmp_path, bad))
    assert rc == 1
    lines = out.splitlines()
    assert 'pmu/latency_hooks.c:3: #include "bench/latency.h": pmu may include only pmu, measure, kernel, ' \
           "build/gen (pmu never includes bench or app)" in lines
    assert 'kernel/main.c:2: #include "pmu/pmu.h": kernel may include only kernel ' \
           "(kernel knows nothing above it)" in lines
    assert any(ln.startswith('boot/efi_main.c:2: #include "bench/latency.h": boot may include only boot, kernel')
               for ln in lines)
    assert any(ln.startswith('measure/chase.c:2: #include "pmu/pmu.h": measure may include') for ln in lines)
    assert any(ln.startswith('bench/bench.c:1: #include "app/start.h": bench may include') for ln in lines)
    assert any(ln.startswith('kernel/report.c:1: #include "pmu_events.h": kernel may include') for ln in lines)
    assert len(lines) == 6, out     # exactly the six, nothing from the clean part


def test_asm_in_pure_logic_header_fails(tmp_path):
    bad = dict(CLEAN)
    bad["measure/chase.h"] = '/* chase.h */\n\nstatic inline unsigned long t(void)\n' \
                             '{ unsigned lo, hi; asm volatile("rdtsc" : "=a"(lo), "=d"(hi)); return lo; }\n'
    rc, out = check(tree(tmp_path, bad))
    assert rc == 1
    lines = out.splitlines()
    assert len(lines) == 1 and lines[0].startswith("measure/chase.h:4: inline asm in a pure-logic header"), out


def test_asm_in_c_off_the_allow_list_fails(tmp_path):
    bad = dict(CLEAN)
    bad["bench/latency.c"] = ('#include "pmu/pmu.h"\n/* asm("nop") in a comment is fine */\n'
                              'static void f(unsigned long *x) { __asm__("" : "+r"(*x)); }\n'
                              'static void g(void)\n{\n    __asm__ volatile(\n        "lock xaddq %0, (%1)");\n}\n')
    bad["kernel/msr.c"] = 'static void w(void) { __asm__ volatile("wrmsr"); }\n'   # on the allow-list
    rc, out = check(tree(tmp_path, bad))
    assert rc == 1
    lines = out.splitlines()
    assert len(lines) == 1 and lines[0].startswith("bench/latency.c:6: inline asm in a .c that is not on the "
                                                   "allow-list"), out


def test_asm_allow_list_is_the_one_in_design_md():
    """docs/design.md "Layers" names the .c files that may hold asm; that list is check_layers.ASM_SOURCES."""
    import re
    sys.path.insert(0, os.path.join(ROOT, "scripts"))
    try:
        import check_layers
    finally:
        sys.path.pop(0)
    with open(os.path.join(ROOT, "docs", "design.md")) as f:
        text = f.read()
    para = text[text.index("Asm in a `.c` is allowed"):]
    para = para[:para.index("\n- **")]
    named = set(re.findall(r"\b((?:kernel|pmu|bench|measure|boot|app)/[a-z0-9_]+\.c)\b", para))
    named.discard("bench/atomic.c")     # named as the example that needs no asm
    assert named == set(check_layers.ASM_SOURCES), (named, set(check_layers.ASM_SOURCES))
    for rel in check_layers.ASM_SOURCES:
        assert os.path.exists(os.path.join(ROOT, rel)), rel
