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
    assert names == ["table2.png", "latency.png", "c2c.png", "numa.png", "loaded_latency.png", "bandwidth.png",
                     "bandwidth_threads.png"]
    paths = report.write_pngs(doc, str(tmp_path / "png"))
    for p in paths:
        with open(p, "rb") as f:
            assert f.read(8) == b"\x89PNG\r\n\x1a\n"
    html = report.to_html(doc)
    assert html.startswith("<!DOCTYPE html>")
    imgs = re.findall(r'src="data:image/png;base64,([A-Za-z0-9+/=]+)"', html)
    assert len(imgs) == 7
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


# ---- issue 13: plots and the summary-first HTML ---------------------------------------------------

SUMMARY = {"type": "summary", "figures": 57, "ok": 41, "noisy": 9, "suspect": 4, "unavailable": 3,
           "figures_not_counted": 0, "crosschecks": 12, "crosschecks_judged": 10, "crosschecks_agreeing": 8}


def rich_run():
    """full_run plus a summary record and a bandwidth sweep over working sets in two ISAs."""
    recs = logs.full_run(jitter=0)
    for kern in ("read", "write"):
        for isa in ("sse2", "avx2"):
            for shift in range(14, 27, 2):
                bw = 8e9 * (4 if shift <= 15 else 2 if shift <= 18 else 1)
                recs.append(dict({"type": "bandwidth", "kernel": kern, "isa": isa, "bytes": 1 << shift, "threads": 1,
                                  "node_from": 0, "node_to": 0}, **logs.stats("bytes_per_s", bw, 0.02, 5)))
    recs.append(dict(SUMMARY))
    return parse_log("\n".join(logs.run_lines(recs)))


def _png_ok(data):
    import matplotlib.image as mpimg
    import io
    assert data[:8] == b"\x89PNG\r\n\x1a\n"
    a = mpimg.imread(io.BytesIO(data), format="png")
    assert a.ndim == 3 and a.shape[0] > 200 and a.shape[1] > 300
    return a


@needs_mpl
def test_bandwidth_plots_by_working_set_and_threads(tmp_path):
    doc = report.build(rich_run(), want_plots=True)
    imgs = dict(doc.images())
    _png_ok(imgs["bandwidth.png"])
    _png_ok(imgs["bandwidth_threads.png"])
    # the working-set figure: one panel per ISA, a line per kernel, the CPUID cache sizes as vertical lines
    rows = report._table2_rows(rich_run())
    assert rows
    paths = report.write_pngs(doc, str(tmp_path))
    assert any(p.endswith("bandwidth.png") for p in paths)


@needs_mpl
def test_bandwidth_plot_structure(monkeypatch):
    seen = {}
    real = plots.bandwidth_vs_size

    def spy(panels, levels, subtitle=""):
        seen.update(panels=panels, levels=levels)
        return real(panels, levels, subtitle)
    monkeypatch.setattr(plots, "bandwidth_vs_size", spy)
    report.build(rich_run(), want_plots=True)
    assert set(seen["panels"]) == {"sse2", "avx2"}
    assert set(seen["panels"]["avx2"]) == {"read", "write"}
    assert len(seen["panels"]["avx2"]["read"]) == 7              # the working sets, 1 thread, local memory
    assert [b for _l, b in seen["levels"]] == [32768, 262144, 8 << 20]


@needs_mpl
def test_no_thread_scaling_figure_with_one_thread_count():
    recs = [r for r in logs.full_run(jitter=0) if not (r["type"] == "bandwidth" and r["threads"] != 1)]
    doc = report.build(parse_log("\n".join(logs.run_lines(recs))), want_plots=True)
    names = [n for n, _ in doc.images()]
    assert "bandwidth.png" in names and "bandwidth_threads.png" not in names


@needs_mpl
def test_table2_chart_rows_units_and_unavailable():
    recs = logs.full_run(jitter=0, status_rows={"remote_L3": "unavailable"})
    run = parse_log("\n".join(logs.run_lines(recs)))
    rows = {r[0]: r for r in report._table2_rows(run)}
    assert rows["L3_unshared"][1] == "cycles" and rows["local_DRAM"][1] == "ns"
    src, unit, v, lo, hi, rlo, rhi, st = rows["L3_unshared"]
    assert lo < v < hi and (rlo, rhi) == (40, 40) and st == "ok"
    assert rows["remote_L3"][2] is None and rows["remote_L3"][7] == "unavailable"
    _png_ok(dict(report.build(run, want_plots=True).images())["table2.png"])


@needs_mpl
def test_latency_plot_has_ci_band(monkeypatch):
    seen = {}
    real = plots.latency_vs_size

    def spy(series, cpuid, inferred, ylabel="ns"):
        seen.update(series=series, cpuid=cpuid)
        return real(series, cpuid, inferred, ylabel)
    monkeypatch.setattr(plots, "latency_vs_size", spy)
    _png_ok(dict(report.build(full(), want_plots=True).images())["latency.png"])
    (label, pts), = seen["series"].items()
    assert label == "random, 4 KiB pages" and len(pts) == 16
    assert all(lo < v < hi for _b, v, lo, hi in pts)
    assert [b for _l, b in seen["cpuid"]] == [32768, 262144, 8 << 20]


@needs_mpl
def test_html_summary_first_quality_counts_self_contained():
    doc = report.build(rich_run(), want_plots=True)
    page = report.to_html(doc)
    first = page.index("<details")
    head = page[:first]
    assert "X5570" in head                                        # the machine
    for label, n in (("ok", 41), ("noisy", 9), ("suspect", 4), ("unavailable", 3)):
        assert re.search(r"<td>\s*%s</td><td>%d</td>" % (label, n), head), label
    assert "<td>Figures</td><td>57</td>" in head and "8 / 10 / 12" in head
    assert "table2.png" in head and head.index("table2.png") > head.index("noisy")
    assert page.count("<details") == page.count("</details>") >= 10
    assert "<summary>Bandwidth scaling</summary>" in page
    # every image inlined, nothing external
    imgs = re.findall(r'<img [^>]*src="([^"]*)"', page)
    assert len(imgs) == len(doc.images()) and all(i.startswith("data:image/png;base64,") for i in imgs)
    for i in imgs:
        _png_ok(base64.b64decode(i.split(",", 1)[1]))
    assert not re.search(r'(src|href)="(?!data:)', page) and "url(" not in page and "@import" not in page
    assert "<link" not in page and "<script" not in page
    # reads from 420 px to 1920 px: scaled images, tables scroll in their own wrapper
    assert "img{max-width:100%" in page and ".tw{overflow-x:auto" in page
    assert page.count('<div class="tw"><table>') == page.count("<table>")
    assert 'name="viewport"' in page


def test_html_without_summary_record_says_so():
    page = report.to_html(report.build(full(), want_plots=False))
    assert "no <code>summary</code> record" in page.split("<details")[0]


# ---- issue 23: a report that says what failed and what is normal --------------------------------------------------

import json as _json  # noqa: E402
import os as _os  # noqa: E402

RUNS = _os.path.join(logs.FIXTURES, "runs")
KVM_FALLBACK = {"accel": "tcg", "accel_reason": "KVM unusable (QEMU with -accel kvm exited with status -6: "
                "qemu-system-x86_64: error: failed to set MSR 0x10a to 0x69); using TCG"}


def tcg_run():
    return parse_log(open(_os.path.join(RUNS, "qemu-tcg-smp4-make-run.log"), encoding="utf-8").read())


def host_run():
    return parse_log(open(_os.path.join(RUNS, "host-2cpu-quick.log"), encoding="utf-8").read())


def _body_text(page):
    body = page.split("<body>", 1)[1]
    body = re.sub(r'src="data:image/png;base64,[^"]*"', "", body)
    return re.sub(r"<[^>]+>", " ", body)


def test_banner_for_an_emulated_run_after_a_kvm_fallback():
    md = report.to_markdown(report.build(tcg_run(), want_plots=False, boot=KVM_FALLBACK))
    head = md.split("\n## ")[0]
    kvm = next(l for l in head.splitlines() if l.startswith("**KVM could not be used**"))
    assert "failed to set MSR 0x10a to 0x69" in kvm and "What to do:" in kvm and "hosted runner" in kvm
    emu = next(l for l in head.splitlines() if l.startswith("**This run was emulated**"))
    assert "TCGTCGTCGTCG" in emu and "`DISAGREES` cross-checks" in emu and "are expected here" in emu
    assert head.index("**This run was emulated**") < head.index("| Quality | Count |")


def test_no_banner_for_a_real_machine():
    md = report.to_markdown(report.build(host_run(), want_plots=False))
    assert "This run was emulated" not in md and "KVM could not be used" not in md


def test_disagreements_section_lists_each_with_both_figures_and_the_blamed_side():
    run = tcg_run()
    md = report.to_markdown(report.build(run, want_plots=False))
    sec = md.split("## Disagreements\n")[1].split("\n## ")[0]
    bad = [r for r in run.by_type("crosscheck") if r.get("agrees") is False]
    assert len(bad) == 7
    assert "23 cross-checks: 16 agree, 7 disagree, 0 could not be judged." in sec
    rows = [l for l in sec.splitlines() if l.startswith("| ") and not l.startswith("| Quantity")]
    assert len(rows) == len(bad)
    for r, row in zip(bad, rows):
        assert r["quantity"] in row and r["a"] in row and r["b"] in row and "%.3f" % r["ratio"] in row
    hitm = next(l for l in rows if l.startswith("| line modified in another core"))
    assert "c2c/1-0/hitm = 27.4 ns" in hitm and "data_source/L3_modified_other_core = 143 ns" in hitm
    assert hitm.rstrip(" |").endswith("a (c2c/1-0/hitm), b (data_source/L3_modified_other_core)")
    clock = next(l for l in rows if l.startswith("| core/TSC ratio (add_rr chain vs imul chain)"))
    assert "neither (no figure marked suspect)" in clock
    other = md.split("## Other records")[1] if "## Other records" in md else ""
    assert "| crosscheck |" not in other                  # no longer a record type the tool does not know


def test_table2_status_is_the_final_verdict_and_pmu_is_text():
    """The status column shows each row's final verdict (docs/measurement.md, "Verdicts"): the record's quality,
    made suspect where a disagreeing cross-check of the run blamed the row, with the record's own quality and
    reason beside it then. (Issue 23 asked for the record's quality instead of its "status" key, which read ok
    for a noisy row; the final verdict is never better than the record's quality, so that still holds.)"""
    run = tcg_run()
    md = report.to_markdown(report.build(run, want_plots=False))
    sec = md.split("## Data sources vs the guide's Table 2")[1].split("\n## ")[0]

    def status(src):
        return next(l for l in sec.splitlines() if l.startswith("| %s |" % src)).split("|")[-2].strip()
    # the record says noisy, the c2c HIT check blamed the row: suspect, with both reasons
    st = status("L3_shared_other_core")
    assert st.startswith("suspect (record: noisy, 95 % CI ")
    assert "; cross-check disagrees: line shared with another core (c2c HIT vs Table 2 row))" in st
    # the record says ok, the sweep check blamed it
    assert status("L3_unshared").startswith("suspect (record: ok; cross-check disagrees: L3 hit latency, unshared")
    # two checks blamed local_DRAM: both named
    st = status("local_DRAM")
    assert "loaded-latency idle point vs Table 2 row" in st and "penalty dram_local vs Table 2 row" in st
    assert status("L1") == "ok"                                           # nothing blamed it
    assert status("remote_L3").startswith("unavailable: ")
    # without the disagreeing c2c checks the same row shows its record's quality and reason, as before
    run.records = [r for r in run.records if not (r.get("type") == "crosscheck" and "c2c" in r.get("quantity", ""))]
    md2 = report.to_markdown(report.build(run, want_plots=False))
    sec = md2.split("## Data sources vs the guide's Table 2")[1].split("\n## ")[0]
    assert status("L3_shared_other_core").startswith("noisy (95 % CI ")
    pmu = next(l for l in md.splitlines() if l.startswith("| PMU |"))
    assert pmu.startswith("| PMU | unavailable: QEMU TCG emulates no performance counters")
    assert "=None" not in pmu and "{}" not in pmu and "model=" not in pmu


def test_disagreements_name_the_third_measurement():
    recs = [r for r in logs.full_run(jitter=0)]
    recs.append({"type": "crosscheck", "quantity": "L1D hit latency (Table 2 row vs sweep plateau at its footprint)",
                 "a": "data_source/L1", "b": "latency_plateau/random/2097152/0", "a_value": 6.5, "b_value": 5.0,
                 "unit": "cycles", "ratio": 1.3, "tolerance": 0.15, "agrees": False, "third": "penalty/l1_hit",
                 "third_value": 5.1, "suspect": ["data_source/L1"]})
    recs.append({"type": "crosscheck", "quantity": "no third here", "a": "x/a", "b": "x/b", "a_value": 6.5,
                 "b_value": 5.0, "unit": "ns", "ratio": 1.3, "tolerance": 0.15, "agrees": False,
                 "third": "numa_latency/0-0", "third_value": None, "suspect": ["x/a", "x/b"]})
    md = report.to_markdown(report.build(parse_log("\n".join(logs.run_lines(recs))), want_plots=False))
    sec = md.split("## Disagreements")[1].split("\n## ")[0]
    row = next(l for l in sec.splitlines() if l.startswith("| L1D hit latency"))
    assert "| a (data_source/L1); third: penalty/l1_hit = 5.1 cycles |" in row
    row = next(l for l in sec.splitlines() if l.startswith("| no third here"))
    assert "third: numa_latency/0-0 (not usable) |" in row


def test_figures_section_and_verdict_text_use_the_final_verdict():
    """report.verdict_text: the record's quality when nothing blamed the figure; a blamed ok or noisy figure is
    suspect with the record's own quality kept; a figure already suspect or unavailable stays so."""
    sus = {"penalty/x": ["q1", "q2"]}
    assert report.verdict_text({"figure": "penalty/y", "quality": "ok"}, sus) == "ok"
    assert report.verdict_text({"figure": "penalty/y", "quality": "noisy", "quality_reason": "n < 7"}, sus) == \
        "noisy (n < 7)"
    assert report.verdict_text({"figure": "penalty/x", "quality": "ok"}, sus) == \
        "suspect (record: ok; cross-check disagrees: q1; q2)"
    assert report.verdict_text({"figure": "penalty/x", "quality": "suspect", "quality_reason": "<= 0"}, sus) == \
        "suspect (<= 0)"
    assert report.verdict_text({"figure": "penalty/x", "quality": "unavailable", "quality_reason": "no PMU"},
                               sus) == "unavailable (no PMU)"
    # the Figures section (record types without a section of their own) shows the same final verdict
    recs = [r for r in logs.full_run(jitter=0)]
    recs.append(dict({"type": "zz_new", "figure": "zz_new/a"}, **logs.stats("cycles", 7.0, 0.01, 15), quality="ok"))
    recs.append({"type": "crosscheck", "quantity": "zz both ways", "a": "zz_new/a", "b": "x", "a_value": 7.0,
                 "b_value": 20.0, "unit": "cycles", "ratio": 0.35, "tolerance": 0.15, "agrees": False,
                 "suspect": ["zz_new/a"]})
    md = report.to_markdown(report.build(parse_log("\n".join(logs.run_lines(recs))), want_plots=False))
    row = next(l for l in md.split("## Figures")[1].splitlines() if l.startswith("| zz_new/a |"))
    assert "| suspect | cross-check disagrees: zz both ways |" in row


@needs_mpl
@pytest.mark.parametrize("which", ["tcg", "host", "rich"])
def test_no_python_reprs_anywhere_in_the_page(which):
    run = {"tcg": tcg_run, "host": host_run, "rich": rich_run}[which]()
    doc = report.build(run, want_plots=True, boot=KVM_FALLBACK if which == "tcg" else None)
    for text in (_body_text(report.to_html(doc)), report.to_markdown(doc)):
        for bad in (r"\bNone\b", r"\[\]", r"\{\}", r"\bTrue\b", r"\bFalse\b", r"\[\s*'"):
            m = re.search(bad, text)
            assert m is None, (which, bad, text[max(0, m.start() - 120):m.end() + 60])


def test_cells_never_show_python_reprs():
    assert report._text(None) == "" and report._text([]) == "" and report._text({}) == ""
    assert report._text([1, "a"]) == "1, a" and report._text({"x": 1, "y": None}) == "x=1"
    assert report._text(True) == "yes"
    doc = report.Doc()
    doc.table(["a", "b", "c"], [[None, [], {"k": [1, 2]}]])
    assert "| a | b | c |\n|---|---|---|\n|  |  | k=1, 2 |" in report.to_markdown(doc)


def test_summary_first_then_disagreements_and_table2_open():
    page = report.to_html(report.build(tcg_run(), want_plots=False, boot=KVM_FALLBACK))
    opened = re.findall(r"<details open><summary>([^<]+)</summary>", page)
    assert opened == ["Disagreements", "Data sources vs the guide&#x27;s Table 2"]
    assert page.index("This run was emulated") < page.index("<details")


def test_next_run_interval_is_shown_where_the_record_has_one():
    """A Table 2 row and a generic figure measured in replicates show their next-run interval (docs/records.md,
    next_lo / next_hi); a row without one leaves the cell empty."""
    recs = logs.full_run(jitter=0)
    l1 = next(r for r in recs if r.get("type") == "data_source" and r.get("source") == "L1")
    l1.update(replicates=9, next_lo=1.2345, next_hi=1.3456, next_level=0.9706)
    recs.append(dict({"type": "newbench", "figure": "newbench/x", "replicates": 9, "next_lo": 41.5, "next_hi": 43.25,
                      "next_level": 0.9706}, **logs.stats("ns", 42.0, 0.01, 11)))
    md = report.to_markdown(report.build(parse_log("\n".join(logs.run_lines(recs))), want_plots=False))
    sec = md.split("## Data sources vs the guide's Table 2")[1].split("\n## ")[0]
    head = next(l for l in sec.splitlines() if l.startswith("| Source |")).split("|")
    col = [c.strip() for c in head].index("Next run")
    row = next(l for l in sec.splitlines() if l.startswith("| L1 |")).split("|")
    assert row[col].strip() == "1.23..1.35 ns", row[col]
    other = next(l for l in sec.splitlines() if l.startswith("| L2 |")).split("|")
    assert other[col].strip() == ""
    figs = md.split("## Figures")[1].split("\n## ")[0]
    fhead = [c.strip() for c in next(l for l in figs.splitlines() if l.startswith("| Figure |")).split("|")]
    frow = next(l for l in figs.splitlines() if l.startswith("| newbench/x |")).split("|")
    assert frow[fhead.index("Next run")].strip() == "41.5..43.2", frow


def test_summary_says_profile_and_samples_as_the_run_record_does():
    # the run record's profile and minimal_samples (docs/records.md) in the summary table, with their whys; a
    # record from before minimal_samples existed gets no Samples row (nothing is made up)
    run = tcg_run()
    md = report.to_markdown(report.build(run, want_plots=False))
    summary = md.split("| End |")[0]
    assert "| Profile | quick (auto: QEMU TCG (hypervisor CPUID leaf)) |" in summary and "| Samples |" not in summary
    run.run["minimal_samples"] = True
    run.run["minimal_samples_why"] = "auto: QEMU TCG (hypervisor CPUID leaf): emulated timing means nothing"
    md = report.to_markdown(report.build(run, want_plots=False))
    assert ("| Samples | minimum only, no convergence loops (auto: QEMU TCG (hypervisor CPUID leaf): emulated "
            "timing means nothing) |") in md
    run.run["minimal_samples"] = False
    run.run["minimal_samples_why"] = "config: samples=normal"
    md = report.to_markdown(report.build(run, want_plots=False))
    assert "| Samples | as on hardware (config: samples=normal) |" in md
    md = report.to_markdown(report.build(host_run(), want_plots=False))
    assert "| Profile | quick (config) |" in md
