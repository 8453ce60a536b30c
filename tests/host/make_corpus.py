#!/usr/bin/python3
"""Regenerate tests/host/corpus/: hostile serial logs and their expected verdicts (EXPECT).

Each EXPECT line: `<file> ok <records> <crc32>` or `<file> reject <text in the reason>`.
The files are committed; rerun this only when the set of cases changes.
"""
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import logs  # noqa: E402

OUT = os.path.join(HERE, "corpus")


def main():
    os.makedirs(OUT, exist_ok=True)
    cases = []

    def add(name, data, verdict):
        path = os.path.join(OUT, name)
        with open(path, "wb") as f:
            f.write(data if isinstance(data, bytes) else data.encode("utf-8", "surrogateescape"))
        cases.append((name, verdict))

    a = logs.run_lines(logs.full_run(seed=11))
    b = logs.run_lines(logs.full_run(seed=12, scale=1.2))
    small = logs.run_lines(logs.minimal_run(seed=13))

    def ok(lines):
        return "ok %d %s" % (len(lines) - 1, logs.crc_of(lines[:-1]))

    add("ok_ovmf_noise.log", logs.serial(a), ok(a))
    add("ok_two_boots.log", logs.serial(a) + logs.serial(b), ok(b))
    add("ok_lf_only.log", logs.serial(a, eol="\n"), ok(a))
    add("ok_cr_only.log", logs.serial(a, eol="\r"), ok(a))
    add("ok_nul_padding.log", "\x00" * 64 + logs.serial(a).replace("\r\n", "\r\n\x00"), ok(a))
    add("ok_ansi_before_run.log", "\x1b[2J\x1b[01;01H\x1b[=3h" + "\r\n".join(a) + "\r\n", ok(a))
    add("ok_shell_prompt_prefix.log", "\x1b[1m\x1b[33m\x1b[40mShell> \x1b[0m" + "\r\n".join(a) + "\r\n", ok(a))
    add("ok_later_boot_truncated.log", logs.serial(a) + logs.serial(b)[:3000], ok(a))
    add("ok_invalid_utf8_noise.log", b"\xff\xfe\xfd\x80\r\n" + logs.serial(small).encode() + b"\xc3\r\n", ok(small))
    add("ok_crashed_status.log", logs.serial(logs.run_lines(logs.minimal_run(seed=14), "crashed")),
        ok(logs.run_lines(logs.minimal_run(seed=14), "crashed")))
    add("ok_orphans_before_run.log", '{"type":"end","status":"ok","records":1,"crc32":"00000000"}\r\n'
        '{"type":"latency_sweep","bytes":1}\r\n' + logs.serial(small), ok(small))

    text = logs.serial(a)
    add("bad_truncated.log", text[: len(text) // 2], "reject no end record")
    add("bad_truncated_in_end.log", text[: text.rindex('"crc32"')], "reject no end record")
    add("bad_no_end.log", "\r\n".join(a[:-1]) + "\r\n", "reject no end record")
    add("bad_empty.log", "", "reject no run record")
    add("bad_only_noise.log", logs.NOISE * 20, "reject no run record")
    add("bad_binary_garbage.log", bytes(range(256)) * 64, "reject no run record")
    crc = list(a)
    crc[10] = crc[10].replace('"mode":"random"', '"mode":"randon"')
    add("bad_crc.log", "\r\n".join(crc) + "\r\n", "reject CRC mismatch")
    cnt = list(a)
    del cnt[12]
    add("bad_count.log", "\r\n".join(cnt) + "\r\n", "reject record count mismatch")
    swap = list(a)
    swap[5], swap[6] = swap[6], swap[5]
    add("bad_swapped_lines.log", "\r\n".join(swap) + "\r\n", "reject CRC mismatch")
    bad = list(a)
    bad[7] = bad[7][: len(bad[7]) // 2]
    add("bad_corrupt_json.log", "\r\n".join(bad) + "\r\n", "reject corrupt record")
    mid = list(a)
    mid[8] = mid[8][:30] + "BdsDxe: interrupt" + mid[8][30:]
    add("bad_noise_midline.log", "\r\n".join(mid) + "\r\n", "reject CRC mismatch")
    nest = list(small)
    nest.insert(1, '{"type":"x","v":' + "[" * 50000 + "]" * 50000 + "}")
    add("bad_deep_nesting.log", "\r\n".join(nest) + "\r\n", "reject corrupt record")
    nan = list(small)
    nan.insert(1, '{"type":"x","v":NaN}')
    add("bad_nan.log", "\r\n".join(nan) + "\r\n", "reject corrupt record")
    up = list(small)
    up[-1] = up[-1].replace(up[-1][-10:-2], up[-1][-10:-2].upper()) if any(c in "abcdef" for c in up[-1][-10:-2]) \
        else up[-1].replace('"crc32":"', '"crc32":"X')
    add("bad_uppercase_crc.log", "\r\n".join(up) + "\r\n", "reject crc32")
    st = list(small)
    st[-1] = st[-1].replace('"status":"ok"', '"status":"fine"')
    add("bad_end_status.log", "\r\n".join(st) + "\r\n", "reject status")
    add("bad_last_run_corrupt.log", logs.serial(a) + "\r\n".join(crc) + "\r\n", "reject CRC mismatch")
    add("bad_end_without_run.log", small[-1] + "\r\n", "reject no run record")
    twice = logs.serial(small[:-1]) + logs.serial(small[:-1])
    add("bad_two_truncated.log", twice, "reject no end record")

    with open(os.path.join(OUT, "EXPECT"), "w") as f:
        for name, verdict in cases:
            f.write("%s %s\n" % (name, verdict))
    print("wrote %d cases to %s" % (len(cases), OUT))


if __name__ == "__main__":
    main()
