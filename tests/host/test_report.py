"""pmb.report: Markdown, self-contained HTML and PNGs from a synthetic complete run."""
import base64
import re

import pytest

import logs
from pmb import cli, plots, report
from pmb.parse import parse_log

needs_mpl = pytest.mark.skipif(not plots.available(), reason="matplotlib not installed")


def full(keys="new"):
    return parse_log(logs.full_log(keys=keys))


def minimal():
    return parse_log("\n".join(logs.run_lines(logs.minimal_run())))


@pytest.mark.parametrize("keys", ["new", "legacy"])
def test_markdown_has_every_section_and_table2_references(keys):
    md = report.to_markdown(report.build(full(keys), want_plots=False))
    for title in ("# pmubench report", "## Data sources vs the guide's Table 2", "## Latency vs working-set size",
                  "## Core-to-core transfer latency (c2c)", "## NUMA latency", "## Loaded latency",
                  "## Bandwidth scaling", "## Branch prediction", "## Penalties", "## Cycle accounting",
                  "## PMU self-test", "## PEBS load latency", "## Other records"):
        assert title in md, title
    assert "Not in this run" not in md
    t2 = md.split("## Data sources")[1].split("## Latency")[0]
    rows = {l.split("|")[1].strip(): l for l in t2.splitlines() if l.startswith("| ")}
    assert "~4 cycles" in rows["L1"] and "~10 cycles" in rows["L2"]
    assert "~40 cycles" in rows["L3_unshared"] and "~65 cycles" in rows["L3_shared_other_core"]
    assert "~75 cycles" in rows["L3_modified_other_core"] and "~100-300 cycles" in rows["remote_L3"]
    assert "~60 ns" in rows["local_DRAM"] and "~100 ns" in rows["remote_DRAM"]
    assert "within range" in rows["remote_L3"]
    assert "2.0%" in rows["L3_unshared"]           # the run's spread (0.02; legacy robust_cv, not cv 0.03)
    assert "3.0%" not in rows["L3_unshared"]
    assert "future_record" in md


def test_new_and_legacy_keys_give_the_same_report():
    """A run written with the statistics key convention and its legacy twin read the same."""
    def body(keys):
        md = report.to_markdown(report.build(full(keys), want_plots=False))
        return md.split("## Data sources", 1)[1]       # the summary names the run's crc32, which differs
    assert body("new") == body("legacy")


def test_table2_reference_comes_from_the_record():
    recs = logs.full_run(jitter=0)
    for r in recs:
        if r["type"] == "data_source" and r["source"] == "L3_unshared":
            r.update(reference="~21 cycles", reference_lo=21, reference_hi=21)
    md = report.to_markdown(report.build(parse_log("\n".join(logs.run_lines(recs))), want_plots=False))
    row = next(l for l in md.splitlines() if l.startswith("| L3_unshared "))
    assert "~21 cycles" in row and "2.00x" in row and "~40" not in row


def test_table2_values_come_from_the_run():
    recs = logs.full_run(scale=2.0, jitter=0)
    md = report.to_markdown(report.build(parse_log("\n".join(logs.run_lines(recs))), want_plots=False))
    row = next(l for l in md.splitlines() if l.startswith("| L3_unshared "))
    assert "84.0 cycles" in row and "2.10x" in row


def test_unavailable_rows_and_rows_without_reference_are_said_so():
    recs = logs.full_run(status_rows={"remote_L3": "unavailable"})
    recs = [r for r in recs if not (r["type"] == "data_source" and r["source"] == "remote_DRAM")]
    for r in recs:
        if r["type"] == "data_source" and r["source"] == "local_DRAM":
            for k in ("reference", "reference_lo", "reference_hi", "reference_unit"):
                del r[k]     # as from a tool that did not write them
    md = report.to_markdown(report.build(parse_log("\n".join(logs.run_lines(recs))), want_plots=False))
    assert re.search(r"\| remote_L3 \| ~100-300 cycles \|[^\n]*unavailable[^\n]*single socket", md)
    # no copy of the guide to fill in from: a row the log lacks is not shown, one without its reference says so
    assert "| remote_DRAM |" not in md
    row = next(l for l in md.splitlines() if l.startswith("| local_DRAM "))
    assert "not in this log" in row and "~60" not in row and "x |" not in row


def test_missing_sections_are_said_missing_not_faked():
    md = report.to_markdown(report.build(minimal(), want_plots=False))
    for t in ("data_source", "latency_sweep", "c2c", "numa_latency", "loaded_latency", "bandwidth",
              "branch", "penalty", "cycle_accounting", "pmu_selftest", "pebs_latency", "cache_inferred"):
        assert "_Not in this run: no `%s` records._" % t in md
    assert "| L1 |" not in md


def test_cycle_accounting_unavailable():
    recs = logs.minimal_run() + [{"type": "cycle_accounting", "bench": "chase", "status": "unavailable",
                                  "reason": "no PMU"}]
    md = report.to_markdown(report.build(parse_log("\n".join(logs.run_lines(recs))), want_plots=False))
    assert "Status: unavailable (no PMU)" in md


@needs_mpl
def test_pngs_and_html(tmp_path):
    doc = report.build(full(), want_plots=True)
    names = [n for n, _ in doc.images()]
    assert names == ["latency.png", "c2c.png", "numa.png", "loaded_latency.png", "bandwidth.png"]
    paths = report.write_pngs(doc, str(tmp_path / "png"))
    for p in paths:
        with open(p, "rb") as f:
            assert f.read(8) == b"\x89PNG\r\n\x1a\n"
    html = report.to_html(doc)
    assert html.startswith("<!DOCTYPE html>")
    imgs = re.findall(r'src="data:image/png;base64,([A-Za-z0-9+/=]+)"', html)
    assert len(imgs) == 5
    assert all(base64.b64decode(i)[:4] == b"\x89PNG" for i in imgs)
    # Self-contained: nothing fetched from elsewhere.
    assert not re.search(r'(src|href)="(?!data:)', html)
    assert "<table>" in html and "~40 cycles" in html
    md = report.to_markdown(doc, str(tmp_path / "png"))
    assert "![Latency vs working-set size" in md and "png/latency.png" in md


def test_html_escapes_record_text():
    recs = logs.minimal_run() + [{"type": "penalty", "name": "<script>alert(1)</script>", "cycles": 3}]
    html = report.to_html(report.build(parse_log("\n".join(logs.run_lines(recs))), want_plots=False))
    assert "<script>" not in html and "&lt;script&gt;" in html


@needs_mpl
def test_cli_report_results_dir(tmp_path, capsys):
    d = tmp_path / "run1"
    d.mkdir()
    run = full()
    (d / "records.jsonl").write_text(run.jsonl())
    rc = cli.main(["report", str(d), "--html", str(tmp_path / "r.html"), "--png", str(tmp_path / "p")])
    out = capsys.readouterr().out
    assert rc == 0 and out.startswith("# pmubench report")
    assert (tmp_path / "r.html").stat().st_size > 10000
    assert (tmp_path / "p" / "latency.png").exists()


def test_cli_report_rejected_log(tmp_path, capsys):
    p = tmp_path / "bad.log"
    p.write_text("\n".join(logs.run_lines(logs.minimal_run())[:-1]))
    assert cli.main(["report", str(p), "--html", str(tmp_path / "r.html")]) == 2
    assert capsys.readouterr().out == ""
    assert not (tmp_path / "r.html").exists()


def test_number_formatting():
    assert report.num(4) == "4"
    assert report.num(2933000000) == "2,933,000,000"
    assert report.num(42.345) == "42.3"
    assert report.num(3.14159) == "3.14"
    assert report.num(None) == ""
    assert report.pct(0.025) == "2.5%"
    assert plots.human_bytes(32768) == "32 KiB" and plots.human_bytes(1536) == "1.5 KiB"
