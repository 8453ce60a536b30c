"""pmb.parse: extraction and verification of the last complete run from hostile serial logs."""
import json
import os
import subprocess
import sys

import pytest

import logs
from pmb import parse
from pmb.parse import LogError, parse_log

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
PMUBENCH = os.path.join(ROOT, "scripts", "pmubench")


def lines_of(seed=1, **kw):
    return logs.run_lines(logs.full_run(seed=seed, **kw))


def test_good_log_with_noise():
    lines = lines_of()
    run = parse_log(logs.serial(lines))
    assert run.lines == lines
    assert run.run["type"] == "run" and run.end["type"] == "end"
    assert len(run.records) == len(lines) - 1 == run.end["records"]
    assert run.status == "ok"
    assert run.crc32 == logs.crc_of(lines[:-1])
    assert len(run.by_type("data_source")) == 8
    assert run.first("pmu_selftest")["status"] == "ok"
    assert run.warnings == []


def test_unknown_record_types_are_kept():
    run = parse_log(logs.serial(lines_of()))
    assert run.by_type("future_record") == [{"type": "future_record", "x": 1, "nested": {"y": [1, 2, 3]}}]
    assert "future_record" in run.types()


def test_jsonl_round_trip_is_itself_a_valid_log():
    run = parse_log(logs.serial(lines_of()))
    again = parse_log(run.jsonl())
    assert again.lines == run.lines and again.records == run.records


def test_bytes_input_and_invalid_utf8_noise():
    lines = lines_of()
    blob = b"\xff\xfe\x80garbage\r\n" + logs.serial(lines).encode() + b"\xc3\x28\r\n"
    assert parse_log(blob).lines == lines


@pytest.mark.parametrize("eol", ["\n", "\r\n", "\r", "\r\r\n", "\n\r"])
def test_line_endings(eol):
    lines = lines_of()
    assert parse_log(logs.serial(lines, eol=eol)).lines == lines


def test_mixed_line_endings_and_nuls():
    lines = lines_of()
    eols = ["\r\n", "\n", "\r", "\x00\r\n", "\r\n\x00\x00"]
    text = "\x00\x00BdsDxe noise\r" + "".join(l + eols[i % len(eols)] for i, l in enumerate(lines))
    assert parse_log(text).lines == lines


def test_nul_and_ansi_inside_record_lines_are_transport_noise():
    lines = lines_of()
    mangled = [l[:5] + "\x00" + l[5:10] + "\x1b[0m" + l[10:] if i % 3 == 0 else l for i, l in enumerate(lines)]
    run = parse_log("\r\n".join(mangled) + "\r\n")
    assert run.lines == lines


def test_ansi_prefix_before_first_record():
    lines = lines_of()
    text = "\x1b[2J\x1b[01;01H\x1b[=3h" + lines[0] + "\r\n" + "\r\n".join(lines[1:]) + "\r\n"
    assert parse_log(text).lines == lines


def test_firmware_text_before_record_on_same_line():
    lines = lines_of()
    text = "Shell> " + lines[0] + "\r\n" + "\r\n".join(lines[1:]) + "\r\n"
    assert parse_log(text).lines == lines


def test_two_runs_gives_the_last():
    a, b = lines_of(seed=1), lines_of(seed=2)
    run = parse_log(logs.serial(a) + logs.serial(b))
    assert run.lines == b
    assert run.run["config"]["seed"] == 2


def test_repeated_boot_truncated_after_complete_run_keeps_complete_one_with_warning():
    a, b = lines_of(seed=1), lines_of(seed=2)
    text = logs.serial(a) + logs.serial(b[:10], noise=True)
    run = parse_log(text)
    assert run.lines == a
    assert any("later incomplete run" in w for w in run.warnings)


def test_truncated_single_run():
    lines = lines_of()
    text = logs.serial(lines)
    cut = text[: text.index(lines[20]) + 15]
    with pytest.raises(LogError, match="no end record"):
        parse_log(cut)


def test_truncated_just_before_end_record():
    lines = lines_of()
    with pytest.raises(LogError, match="no end record"):
        parse_log("\n".join(lines[:-1]) + "\n")


def test_truncated_inside_end_record():
    lines = lines_of()
    with pytest.raises(LogError):
        parse_log("\n".join(lines[:-1]) + "\n" + lines[-1][:-3])


def test_crc_mismatch():
    lines = lines_of()
    i = next(i for i, l in enumerate(lines) if '"source":"L2"' in l)
    lines[i] = lines[i].replace('"cycles":', '"cycles":1', 1)
    json.loads(lines[i])  # still valid JSON: only the CRC can catch it
    with pytest.raises(LogError, match="CRC mismatch"):
        parse_log("\n".join(lines) + "\n")


def test_count_mismatch_record_dropped():
    lines = lines_of()
    del lines[5]
    with pytest.raises(LogError, match="record count mismatch"):
        parse_log("\n".join(lines) + "\n")


def test_count_mismatch_with_matching_crc():
    recs = logs.full_run()
    body = [logs.dumps(r) for r in recs]
    end = logs.end_record(body)
    end["records"] += 1
    with pytest.raises(LogError, match="record count mismatch"):
        parse_log("\n".join(body + [logs.dumps(end)]))


def test_duplicated_record_line():
    lines = lines_of()
    lines.insert(7, lines[7])
    with pytest.raises(LogError, match="count mismatch"):
        parse_log("\n".join(lines))


def test_swapped_records():
    lines = lines_of()
    lines[5], lines[6] = lines[6], lines[5]
    with pytest.raises(LogError, match="CRC mismatch"):
        parse_log("\n".join(lines))


def test_corrupt_record():
    lines = lines_of()
    lines[9] = lines[9][:-1]        # lost closing brace
    with pytest.raises(LogError, match="corrupt record at line 10"):
        parse_log("\n".join(lines))


@pytest.mark.parametrize("bad", ['{"no_type":1}', '{"type":""}', '{"type":5}', "{not json}",
                                 '{"type":"x","v":NaN}', '{"type":"x","v":Infinity}', '{"type":"x"} trailing'])
def test_corrupt_record_variants(bad):
    lines = lines_of()
    lines.insert(3, bad)
    with pytest.raises(LogError, match="corrupt record"):
        parse_log("\n".join(lines))


def test_deeply_nested_record_is_rejected_not_crashing():
    lines = lines_of()
    lines.insert(3, '{"type":"x","v":' + "[" * 100000 + "]" * 100000 + "}")
    with pytest.raises(LogError):
        parse_log("\n".join(lines))


def test_noise_inside_record_line_rejected():
    lines = lines_of()
    lines[4] = lines[4][:20] + "BdsDxe: hello" + lines[4][20:]
    with pytest.raises(LogError):
        parse_log("\n".join(lines))


def test_no_end_record():
    with pytest.raises(LogError, match="no end record"):
        parse_log("\n".join(logs.run_lines(logs.minimal_run())[:-1]))


def test_no_run_record():
    with pytest.raises(LogError, match="no run record"):
        parse_log("BdsDxe: nothing\r\nShell> \r\n")
    with pytest.raises(LogError, match="no run record"):
        parse_log("")
    with pytest.raises(LogError, match="no run record"):
        parse_log(b"\x00" * 1000)


def test_orphan_records_before_run_are_ignored():
    lines = lines_of()
    text = '{"type":"end","status":"ok","records":0,"crc32":"00000000"}\n{"type":"cpu"}\n' + "\n".join(lines)
    assert parse_log(text).lines == lines


@pytest.mark.parametrize("field,value,msg", [("crc32", "ABCDEF01", "crc32"), ("crc32", 12345678, "crc32"),
                                             ("crc32", "abc", "crc32"), ("records", "3", "records"),
                                             ("records", True, "records"), ("records", 3.0, "records")])
def test_malformed_end_record(field, value, msg):
    body = [logs.dumps(r) for r in logs.minimal_run()]
    end = logs.end_record(body)
    end[field] = value
    with pytest.raises(LogError, match=msg):
        parse_log("\n".join(body + [logs.dumps(end)]))


def test_error_and_crashed_runs_parse_with_their_status():
    for st in ("error", "crashed"):
        run = parse_log("\n".join(logs.run_lines(logs.minimal_run(), status=st)))
        assert run.status == st and run.warnings == []


@pytest.mark.parametrize("status", ["weird", "", None, 1, "OK"])
def test_unknown_end_status_is_rejected(status):
    body = [logs.dumps(r) for r in logs.minimal_run()]
    end = logs.end_record(body)
    end["status"] = status
    with pytest.raises(LogError, match="status"):
        parse_log("\n".join(body + [logs.dumps(end)]))


def test_records_after_end_are_reported():
    lines = logs.run_lines(logs.minimal_run())
    run = parse_log("\n".join(lines + ['{"type":"cpu"}']))
    assert run.lines == lines and any("after the end record" in w for w in run.warnings)


def test_non_text_input():
    with pytest.raises(LogError):
        parse_log(None)


def test_load_run_dir_prefers_records_jsonl(tmp_path):
    a, b = lines_of(seed=1), lines_of(seed=2)
    (tmp_path / "serial.log").write_text(logs.serial(a))
    assert parse.load_run(str(tmp_path)).lines == a
    (tmp_path / "records.jsonl").write_text("\n".join(b) + "\n")
    assert parse.load_run(str(tmp_path)).lines == b
    with pytest.raises(LogError, match="cannot read"):
        parse.load_run(str(tmp_path / "nope.log"))
    empty = tmp_path / "empty"
    empty.mkdir()
    with pytest.raises(LogError, match="neither"):
        parse.load_run(str(empty))


def test_flatten():
    flat = parse.flatten({"type": "t", "a": {"b": 1, "c": [1, 2]}, "l": [{"x": 1}, {"x": 2}], "n": None,
                          "f": True, "g": 0.5})
    assert flat == {"type": "t", "a.b": "1", "a.c": "1;2", "l.0.x": "1", "l.1.x": "2", "n": "", "f": "true",
                    "g": "0.5"}


def test_csv_blocks():
    run = parse_log("\n".join(lines_of()))
    text = parse.to_csv(run)
    blocks = text.strip("\n").split("\n\n")
    heads = [b.split("\n")[0] for b in blocks]
    assert heads[0].startswith("type,version,cpu.vendor")
    assert heads[-1] == "type,status,records,crc32"
    ds = next(b for b in blocks if b.startswith("type,source"))
    assert len(ds.split("\n")) == 1 + 8
    assert all(h.startswith("type,") for h in heads)
    assert len(blocks) == len(run.types()) + 1


def _cli(*args, stdin=None):
    return subprocess.run([sys.executable, PMUBENCH, *args], capture_output=True, text=True, input=stdin)


def test_cli_parse_json(tmp_path):
    lines = lines_of()
    p = tmp_path / "serial.log"
    p.write_bytes(logs.serial(lines).encode())
    r = _cli("parse", str(p), "--json")
    assert r.returncode == 0, r.stderr
    assert r.stdout.splitlines() == lines
    r = _cli("parse", str(p))
    assert r.returncode == 0 and "verified" in r.stdout
    r = _cli("parse", str(p), "--csv")
    assert r.returncode == 0 and r.stdout.startswith("type,version")


def test_cli_parse_rejects_with_one_line_and_no_output(tmp_path):
    lines = lines_of()
    lines[4] = lines[4].replace("4096", "4097", 1)
    assert lines[4] != lines_of()[4]
    p = tmp_path / "bad.log"
    p.write_text("\n".join(lines))
    for flag in ([], ["--json"], ["--csv"]):
        r = _cli("parse", str(p), *flag)
        assert r.returncode == 2
        assert r.stdout == ""
        assert len(r.stderr.strip().splitlines()) == 1 and "mismatch" in r.stderr


def test_cli_parse_warns_on_stderr(tmp_path):
    a, b = lines_of(seed=1), lines_of(seed=2)
    p = tmp_path / "s.log"
    p.write_text(logs.serial(a) + logs.serial(b[:5]))
    r = _cli("parse", str(p), "--json")
    assert r.returncode == 0 and r.stdout.splitlines() == a and "warning" in r.stderr


def test_indented_human_lines_with_braces_are_not_records():
    lines = lines_of()
    text = lines[0] + "\n  {not a record}\n\t{x}\n" + "\n".join(lines[1:])
    assert parse_log(text).lines == lines


def test_earlier_incomplete_boot_is_reported():
    """A first boot that died half-way (a triple fault resets the box, the stick boots again), then a
    complete one: the complete run is chosen, and the incomplete one is counted and warned about."""
    a, b = lines_of(seed=1), lines_of(seed=2)
    text = logs.serial(a[:12]) + "\x1b[2J BdsDxe: loading Boot0001\r\n" + logs.serial(b)
    run = parse_log(text)
    assert run.lines == b and run.incomplete_boots == 1
    assert any("earlier boot did not complete" in w and "12 records" in w for w in run.warnings), run.warnings
    # two dead boots, a complete one, and a later truncated one (not counted as earlier)
    run = parse_log(logs.serial(a[:5]) + logs.serial(a[:30]) + logs.serial(b) + logs.serial(a[:3]))
    assert run.lines == b and run.incomplete_boots == 2
    assert any("later incomplete run" in w for w in run.warnings)
    # a clean log has none
    assert parse_log(logs.serial(b)).incomplete_boots == 0


def test_cli_parse_reports_earlier_incomplete_boot(tmp_path):
    a, b = lines_of(seed=1), lines_of(seed=2)
    p = tmp_path / "s.log"
    p.write_text(logs.serial(a[:12]) + logs.serial(b))
    r = _cli("parse", str(p))
    assert r.returncode == 0
    assert "earlier incomplete boots: 1" in r.stdout
    assert "warning: an earlier boot did not complete" in r.stderr
    r = _cli("parse", str(p), "--json")
    assert r.returncode == 0 and r.stdout.splitlines() == b and "earlier boot" in r.stderr
    # the exit status follows the last complete run: a crashed one still parses (0) but nightly fails it
    p.write_text(logs.serial(a[:12]) + logs.serial(logs.run_lines(logs.full_run(seed=3), status="crashed")))
    r = _cli("parse", str(p))
    assert r.returncode == 0 and "status crashed" in r.stdout and "earlier incomplete boots: 1" in r.stdout
