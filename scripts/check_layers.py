#!/usr/bin/env python3
"""check_layers.py - fail on an #include that points the wrong way between top-level folders.

Reads the `#include "..."` lines (and `#include <folder/...>` naming one of our folders) of every .c, .h and .S
under the layer folders and checks each against LAYERS below. Also fails on inline asm in a header that is not
on ASM_HEADERS (pure-logic headers compile on the host and carry no asm) and in a .c that is not on ASM_SOURCES
(asm in a .c only where the exact instruction is the point; docs/design.md "Layers"). An empty template
(`__asm__("" : "+r"(x))`) emits no instruction: it is a compiler barrier and allowed everywhere. Prints one line
per violation (file:line, the include or the asm, the rule) and exits 1; exits 0 when there is none.

Usage: scripts/check_layers.py [--root DIR]        (`make check-layers`; `make test` runs it too)
"""
import argparse
import os
import re
import sys

# Which folder may include which: the layer picture of docs/design.md, one row per top-level folder.
# "gen" is build/gen/, the generated PMU event tables ("build/gen/pmu_events.h" or "pmu_events.h").
LAYERS = {
    # folder    may include (besides itself)          why
    "boot":    (["kernel"],                           "boot hands over to kernel and knows nothing above it"),
    "kernel":  ([],                                   "kernel knows nothing above it"),
    "measure": (["kernel"],                           "the measurement layer sits below pmu and bench"),
    "pmu":     (["measure", "kernel", "gen"],         "pmu never includes bench or app"),
    "bench":   (["pmu", "measure", "kernel"],         "bench may call pmu, never app"),
    "app":     (["bench", "pmu", "measure", "kernel", "gen"], "app is the composition root: nothing includes it"),
}
GEN_DIR = "build/gen"

# Headers that may hold inline asm: the hardware-access choke points. Every other header is pure logic.
ASM_HEADERS = {
    "kernel/io.h",       # port I/O, cpuid, control registers, interrupts
    "kernel/msr.h",      # rdmsr/wrmsr
    "measure/timing.h",  # serialized rdtsc/rdpmc around timed regions
}

# The .c files that may hold inline asm (docs/design.md "Layers" lists the same, and tests/host/test_layers.py
# checks the two agree): each where the exact instruction is the point. Everything else reaches the machine
# through the asm headers above, or uses a compiler builtin (bench/atomic.c's lock xadd is __atomic_fetch_add).
ASM_SOURCES = {
    "kernel/core_clock.c":  "the add and imul chains whose latency defines the core clock",
    "kernel/cpu.c":         "GDT/IDT/TSS loads, segment reloads, FPU/SSE/AVX enable",
    "kernel/msr.c":         "rdmsr/wrmsr with an exception-table fixup",
    "kernel/main.c":        "crash_test=: the faulting instructions themselves",
    "pmu/known_loop.c":     "the self-test's loop of known instruction and branch counts",
    "pmu/pebs_capture.c":   "MFENCE before a PEBS buffer drain",
    "bench/branch.c":       "branch-prediction loops: the branches are the measurement",
    "bench/penalty.c":      "penalty loops: misaligned and aliasing loads, store forwarding, dividers",
    "bench/bw_kernels.c":   "streaming kernels in SSE2, AVX2 and AVX-512F",
    "bench/clock.c":        "the TSC step probe's dependent reg-reg add chain of chosen lengths",
}

INCLUDE_RE = re.compile(r'^\s*#\s*include\s*(?:"([^"]+)"|<([^>]+)>)')
ASM_RE = re.compile(r"\b(?:__asm__|__asm|asm)\b\s*(?:volatile|__volatile__|goto|inline)?\s*\(")
COMMENT_RE = re.compile(r"/\*.*?\*/|//[^\n]*", re.S)


def layer_of_include(root, src, name, quoted):
    """The folder an include resolves to, or None when it is outside the layer folders (a system header)."""
    if name.startswith(GEN_DIR + "/"):
        return "gen"
    top = name.split("/", 1)[0]
    if "/" in name and top in LAYERS:
        return top
    if not quoted:
        return None
    here = os.path.normpath(os.path.join(os.path.dirname(src), name))   # C looks beside the file first
    if os.path.exists(os.path.join(root, here)):
        return here.split(os.sep, 1)[0]
    return "gen"   # not beside the file, not root-relative: only -I build/gen can supply it


def strip_comments(text):
    """Blank out comments, keeping newlines so that line numbers stay right."""
    return COMMENT_RE.sub(lambda m: re.sub(r"[^\n]", " ", m.group(0)), text)


def check_file(root, rel):
    layer = rel.split("/", 1)[0]
    allowed, why = LAYERS[layer]
    with open(os.path.join(root, rel), encoding="utf-8", errors="replace") as f:
        text = f.read()
    out = []
    for n, line in enumerate(text.splitlines(), 1):
        m = INCLUDE_RE.match(line)
        if not m:
            continue
        name = m.group(1) or m.group(2)
        target = layer_of_include(root, rel, name, m.group(1) is not None)
        if target is None or target == layer or target in allowed:
            continue
        may = ", ".join(GEN_DIR if x == "gen" else x for x in [layer] + allowed)
        out.append(f'{rel}:{n}: #include "{name}": {layer} may include only {may} ({why})')
    if rel.endswith(".h") and rel not in ASM_HEADERS:
        for n in asm_lines(text):
            out.append(f"{rel}:{n}: inline asm in a pure-logic header (only {', '.join(sorted(ASM_HEADERS))}"
                       " may hold asm: move it into a .c or one of those)")
    elif rel.endswith(".c") and rel not in ASM_SOURCES:
        for n in asm_lines(text):
            out.append(f"{rel}:{n}: inline asm in a .c that is not on the allow-list (ASM_SOURCES in "
                       "scripts/check_layers.py, docs/design.md \"Layers\": use an asm header or a compiler "
                       "builtin, or add the file where the exact instruction is the point)")
    return out


def asm_lines(text):
    """Line numbers of the inline asm statements in C text, comments and empty templates (barriers) left out."""
    code = strip_comments(text)
    out = []
    for m in ASM_RE.finditer(code):
        if code[m.end():].lstrip().startswith('""'):
            continue
        out.append(code.count("\n", 0, m.start()) + 1)
    return out


def sources(root):
    for layer in LAYERS:
        top = os.path.join(root, layer)
        for d, dirs, files in os.walk(top):
            dirs.sort()
            for fn in sorted(files):
                if fn.endswith((".c", ".h", ".S")):
                    yield os.path.relpath(os.path.join(d, fn), root).replace(os.sep, "/")


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--root", default=os.path.dirname(os.path.dirname(os.path.abspath(__file__))),
                    help="tree to check (default: this repository)")
    a = ap.parse_args(argv)
    files = list(sources(a.root))
    bad = [v for rel in files for v in check_file(a.root, rel)]
    for v in bad:
        print(v)
    if bad:
        print(f"check_layers: {len(bad)} forbidden include(s) or asm in {len(files)} files", file=sys.stderr)
        return 1
    print(f"check_layers: {len(files)} files, every include points down")
    return 0


if __name__ == "__main__":
    sys.exit(main())
