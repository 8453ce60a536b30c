"""Property-based fuzzing of pmb.parse.parse_log with a seeded plain `random` module.

Properties, for random logs (1-3 runs, firmware noise) under random truncation, corruption and
interleaving:
  1. parse_log raises nothing but LogError;
  2. when it accepts, the returned record lines are exactly one original run's lines (never altered);
  3. a mutation that only adds transport noise between lines (or strips nothing) is accepted and
     yields the last complete run.
"""
import random

import pytest

import logs
from pmb.parse import LogError, parse_log

NOISE_LINES = ["BdsDxe: loading Boot0001", "\x1b[1m\x1b[33m\x1b[40mShell> \x1b[0m", "", "\x00\x00\x00",
               "Press ESC in 5 seconds", "# pmubench: human text {not json}", "\x1b[2J\x1b[01;01H",
               "iPXE 1.0 -- Open Source Network Boot Firmware", "\x08 \x08\x08 \x08"]


def random_run(rnd, seed):
    recs = logs.full_run(seed=seed, jitter=rnd.uniform(0, 0.1), cpus=rnd.choice([1, 2, 4]),
                         numa=rnd.choice([1, 2]))
    keep = rnd.randint(1, len(recs))
    recs = recs[:1] + rnd.sample(recs[1:], keep - 1)
    return logs.run_lines(recs, status=rnd.choice(["ok", "ok", "error", "crashed"]))


def build(rnd):
    runs = [random_run(rnd, rnd.randint(1, 10**6)) for _ in range(rnd.randint(1, 3))]
    parts = []
    for lines in runs:
        for l in lines:
            if rnd.random() < 0.2:
                parts.append(rnd.choice(NOISE_LINES))
            parts.append(l)
    eols = ["\r\n", "\n", "\r", "\r\r\n"]
    text = "".join(p + rnd.choice(eols) for p in parts)
    return runs, text


def mutate(rnd, text):
    """One random corruption. Returns (new text, harmless) where harmless means only noise was
    added between whole lines, so the log must still verify."""
    kind = rnd.choice(["truncate", "flip", "insert", "delete", "dup_line", "swap_lines", "interleave",
                       "nul_ansi", "drop_line", "bytes", "noop", "splice_noise_midline"])
    n = len(text)
    if kind == "noop" or n == 0:
        return text, True
    if kind == "truncate":
        return text[: rnd.randrange(n)], False
    if kind == "flip":
        i = rnd.randrange(n)
        return text[:i] + chr(rnd.randrange(32, 127)) + text[i + 1:], False
    if kind == "insert":
        i = rnd.randrange(n)
        return text[:i] + rnd.choice(['"', "}", "{", ",", "0", " ", "\n", "\\"]) + text[i:], False
    if kind == "delete":
        i = rnd.randrange(n)
        return text[:i] + text[i + rnd.randint(1, 40):], False
    lines = text.split("\n")
    if kind == "dup_line":
        i = rnd.randrange(len(lines))
        lines.insert(i, lines[i])
        return "\n".join(lines), False
    if kind == "swap_lines" and len(lines) > 2:
        i = rnd.randrange(len(lines) - 1)
        lines[i], lines[i + 1] = lines[i + 1], lines[i]
        return "\n".join(lines), False
    if kind == "drop_line":
        del lines[rnd.randrange(len(lines))]
        return "\n".join(lines), False
    if kind == "interleave":
        for _ in range(rnd.randint(1, 5)):
            lines.insert(rnd.randrange(len(lines) + 1), rnd.choice(NOISE_LINES) + "\r")
        return "\n".join(lines), True
    if kind == "nul_ansi":
        # Between whole lines only: a NUL or ANSI sequence at the start of a line.
        i = rnd.randrange(len(lines))
        lines[i] = rnd.choice(["\x00", "\x1b[0m", "\x1b[37m\x1b[40m", "\x00\x00"]) + lines[i]
        return "\n".join(lines), True
    if kind == "splice_noise_midline":
        i = rnd.randrange(n)
        return text[:i] + rnd.choice(["BdsDxe", "\x1b[2J", "Shell> ", "}\n{"]) + text[i:], False
    if kind == "bytes":
        b = bytearray(text.encode("utf-8", "surrogateescape"))
        for _ in range(rnd.randint(1, 4)):
            b[rnd.randrange(len(b))] = rnd.randrange(256)
        return bytes(b).decode("utf-8", "surrogateescape"), False
    return text, True


def last_complete(runs):
    return runs[-1]


@pytest.mark.parametrize("block", range(8))
def test_fuzz_parser(block):
    rnd = random.Random(0x5EED + block)
    accepted = rejected = 0
    for _ in range(150):
        runs, text = build(rnd)
        mutated, harmless = text, True
        for _ in range(rnd.randint(1, 3)):
            mutated, h = mutate(rnd, mutated)
            harmless = harmless and h
        if rnd.random() < 0.3:
            mutated = mutated.encode("utf-8", "surrogateescape")
        try:
            run = parse_log(mutated)
        except LogError as e:
            assert e.reason and "\n" not in e.reason
            assert not harmless, "harmless noise rejected: %s" % e.reason
            rejected += 1
            continue
        # Property 2: accepted records are exactly one of the original runs, byte for byte.
        assert any(run.lines == r for r in runs), "accepted altered records"
        if harmless:
            assert run.lines == last_complete(runs)
        accepted += 1
    assert accepted > 10 and rejected > 10     # both paths exercised


def test_fuzz_never_accepts_single_altered_byte_in_records():
    """Exhaustive-ish: change one character inside the chosen run's record lines -> never the
    altered records come back."""
    rnd = random.Random(7)
    lines = logs.run_lines(logs.full_run(seed=3))
    text = "\r\n".join(lines) + "\r\n"
    for _ in range(600):
        i = rnd.randrange(len(text))
        if text[i] in "\r\n":
            continue
        c = chr(rnd.randrange(32, 127))
        if c == text[i]:
            continue
        bad = text[:i] + c + text[i + 1:]
        try:
            run = parse_log(bad)
        except LogError:
            continue
        assert run.lines == lines  # only possible if the change was outside any record: never here
