"""The docs' lists checked against the code, so that a list cannot fall behind: every record type the C sources
write is named in docs/records.md, the "Benchmarks" table there is the registry (bench/bench.c) row for row, and
docs/host-tools.md's figure table names exactly the record types pmb.figures names one by one. Each check is a
function that returns its complaints; the tests also show each one fails on a page that lacks an entry."""
import os
import re

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
LAYERS = ("boot", "kernel", "measure", "pmu", "bench", "app")

# A record begins with one of the record stream's begin calls, the type a string literal: rec_begin("x"),
# plat_rec_begin("x"), pmu_rec_begin("x"), record_begin(rs, "x"), rec_message("x", ...), or the stream's own
# json_kv_str(&rs->j, "type", "x") (end, record_overflow).
BEGIN_RE = re.compile(r'\b(?:\w*rec_begin|record_begin|rec_message)\(\s*(?:&?[\w>.-]+\s*,\s*)?"([a-z0-9_]+)"'
                      r'|json_kv_str\([^,]+,\s*"type",\s*"([a-z0-9_]+)"\)')


def read(rel):
    with open(os.path.join(ROOT, rel), encoding="utf-8") as f:
        return f.read()


def record_types(root=ROOT):
    """{type: first file that writes it} over every .c under the layer folders."""
    out = {}
    for layer in LAYERS:
        for d, _dirs, files in sorted(os.walk(os.path.join(root, layer))):
            for fn in sorted(files):
                if fn.endswith(".c"):
                    rel = os.path.relpath(os.path.join(d, fn), root)
                    with open(os.path.join(root, rel), encoding="utf-8", errors="replace") as f:
                        for m in BEGIN_RE.finditer(f.read()):
                            out.setdefault(m.group(1) or m.group(2), rel)
    return out


def registry(root=ROOT):
    """[(name, image_only, explicit_only)] of bench/bench.c's bench_table, in order."""
    with open(os.path.join(root, "bench", "bench.c"), encoding="utf-8") as f:
        text = f.read()
    table = text[text.index("bench_table[] = {"):]
    table = table[:table.index("\n};")]
    rows = re.findall(r'\{"([a-z0-9_]+)",.*?,\s*(true|false),\s*(true|false)\}', table, re.S)
    return [(n, a == "true", b == "true") for n, a, b in rows]


def section(text, title):
    i = text.index("\n## %s\n" % title)
    j = text.find("\n## ", i + 1)
    return text[i:j if j >= 0 else len(text)]


def missing_record_types(records_md, types):
    """Record types (from record_types) that records_md does not name (a `type` in backticks, a "## type"
    heading or a "type":"type" example), with the file writing each."""
    named = set(re.findall(r"`([a-z0-9_]+)`", records_md)) | set(re.findall(r"(?m)^## ([a-z0-9_]+)(?:\s|$)", records_md))
    named |= set(re.findall(r'"type":"([a-z0-9_]+)"', records_md))
    return ["%s (written by %s)" % (t, f) for t, f in sorted(types.items()) if t not in named]


def benchmarks_table_complaints(records_md, rows):
    """The "Benchmarks" table of records_md vs the registry rows: same names, same order, and each image-only /
    explicit-only row says so."""
    table = section(records_md, "Benchmarks")
    lines = [l for l in table.splitlines() if l.startswith("| `")]
    doc = [re.match(r"\| `([a-z0-9_]+)`([^|]*)\|", l).groups() for l in lines]
    out = []
    if [n for n, _ in doc] != [n for n, _a, _b in rows]:
        out.append("docs/records.md \"Benchmarks\" lists %s; the registry (bench/bench.c) has %s"
                   % ([n for n, _ in doc], [n for n, _a, _b in rows]))
    for (n, note), (_n, image_only, explicit_only) in zip(doc, rows):
        if image_only != ("image only" in note) or explicit_only != ("only when named" in note):
            out.append("docs/records.md \"Benchmarks\": %s%s should say%s%s" % (
                n, note, " (image only)" if image_only else "", " (only when named)" if explicit_only else ""))
    return out


def figure_table_complaints(host_tools_md, history_names):
    """docs/host-tools.md "Figures" table (the record type is the first word of its "From" column) vs
    pmb.figures.HISTORY_NAMES: a row for each, and no other."""
    rows = [l for l in section(host_tools_md, "Figures").splitlines() if l.startswith("| `")]
    documented = {l.split("|")[2].split()[0] for l in rows}
    out = ['docs/host-tools.md "Figures" has no row for %s' % t for t in history_names if t not in documented]
    out += ['docs/host-tools.md "Figures" has a row for %s, which pmb.figures.HISTORY_NAMES does not name' % t
            for t in sorted(documented - set(history_names))]
    return out


# ---- this tree --------------------------------------------------------------------------------------------

def test_every_record_type_the_code_writes_is_in_records_md():
    types = record_types()
    assert {"run", "end", "record_overflow", "data_source", "c2c_summary", "error", "crash"} <= set(types)
    assert missing_record_types(read("docs/records.md"), types) == []


def test_benchmarks_table_is_the_registry():
    rows = registry()
    assert ("timer", True, False) in rows and ("snippet", False, True) in rows and len(rows) >= 12
    assert benchmarks_table_complaints(read("docs/records.md"), rows) == []


def test_figure_table_names_the_record_types_with_history_names():
    import sys
    sys.path.insert(0, os.path.join(ROOT, "scripts"))
    from pmb import figures
    assert figure_table_complaints(read("docs/host-tools.md"), figures.HISTORY_NAMES) == []


# ---- the checks have teeth --------------------------------------------------------------------------------

def test_a_record_type_missing_from_records_md_is_named(tmp_path):
    (tmp_path / "bench").mkdir()
    (tmp_path / "bench" / "frob.c").write_text('void f(void) { struct json *j = plat_rec_begin("frob_result"); }\n'
                                               '/* plat_rec_begin("in_a_comment") is still a literal */\n')
    types = record_types(str(tmp_path))
    assert types == {"frob_result": "bench/frob.c", "in_a_comment": "bench/frob.c"}
    text = read("docs/records.md")
    assert missing_record_types(text, types) == ["frob_result (written by bench/frob.c)",
                                                 "in_a_comment (written by bench/frob.c)"]
    assert missing_record_types(text + "\n`frob_result`, `in_a_comment`\n", types) == []
    real = record_types()
    gone = text.replace("`c2c_summary`", "c2c_summary")
    assert missing_record_types(gone, real) == ["c2c_summary (written by bench/lat_c2c.c)"]


def test_a_registry_row_missing_from_the_table_is_named():
    rows = registry()
    text = read("docs/records.md")
    gone = re.sub(r"\n\| `c2c` \|[^\n]*", "", text)
    assert any("the registry (bench/bench.c) has" in c for c in benchmarks_table_complaints(gone, rows))
    wrong = text.replace("| `timer` (image only) |", "| `timer` |")
    assert benchmarks_table_complaints(wrong, rows) == ['docs/records.md "Benchmarks": timer  should say (image only)']
    assert benchmarks_table_complaints(text, rows + [("zz_new", False, False)]) != []


def test_a_figure_row_missing_is_named():
    text = read("docs/host-tools.md")
    names = ("data_source", "penalty")
    out = figure_table_complaints(text, names)
    assert any("has a row for latency_sweep" in c for c in out)
    assert figure_table_complaints(text, names + ("zz_new",))[0] == \
        'docs/host-tools.md "Figures" has no row for zz_new'
