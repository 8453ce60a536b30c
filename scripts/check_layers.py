#!/usr/bin/env python3
"""check_layers.py - fail on an #include that points the wrong way between top-level folders.

Reads the `#include "..."` lines (and `#include <folder/...>` naming one of our folders) of every .c, .h and .S
under the layer folders and checks each against LAYERS below. Also fails on inline asm in a header that is not
on ASM_HEADERS: pure-logic headers compile on the host and carry no asm. Prints one line per violation
(file:line, the include, the rule) and exits 1; exits 0 when there is none.

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
        for n, line in enumerate(strip_comments(text).splitlines(), 1):
            if ASM_RE.search(line):
                out.append(f"{rel}:{n}: inline asm in a pure-logic header (only {', '.join(sorted(ASM_HEADERS))}"
                           " may hold asm: move it into a .c or one of those)")
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
