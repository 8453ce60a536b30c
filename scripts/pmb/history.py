"""Trend table and plot of figures across the runs in the history database."""
import json

from . import db, figures
from .present import machine_name, suggest


def default_figures(conn):
    """Shown when no --figure is given: the Table 2 rows, in the guide's units, in the order of the
    newest stored run's data_source records (each record names its reference unit; a record without
    one, from an older tool, counts as cycles)."""
    row = conn.execute("SELECT MAX(run_id) FROM records WHERE type = 'data_source'").fetchone()
    if row is None or row[0] is None:
        return []
    out = []
    for (line,) in conn.execute("SELECT line FROM records WHERE run_id = ? AND type = 'data_source' ORDER BY seq",
                                (row[0],)):
        try:
            rec = json.loads(line)
        except ValueError:
            continue
        ref = figures.reference(rec)
        name = "data_source/%s/%s" % (rec.get("source"), ref[2] if ref else "cycles")
        if name not in out:
            out.append(name)
    return out


def select_names(conn, query=None):
    names = [r[0] for r in conn.execute("SELECT DISTINCT name FROM figures ORDER BY name")]
    if query is None:
        have = set(names)
        return [n for n in default_figures(conn) if n in have]
    return [n for n in names if figures.matches(n, query)]


def suggestions(conn, query):
    """Figure names near a --figure query that matched nothing."""
    return suggest([r[0] for r in conn.execute("SELECT DISTINCT name FROM figures ORDER BY name")], query)


def machine_names(conn):
    """{machine id: name} (present.machine_name: host name, else CPU, CPU count, accelerator; the id is
    added only where two machines would read the same)."""
    rows = list(db.machines(conn))
    plain = {r["id"]: machine_name(db.machine_identity(r)) for r in rows}
    dup = {n for n in plain.values() if list(plain.values()).count(n) > 1}
    return {i: (machine_name(db.machine_identity(r), i) if plain[i] in dup else plain[i])
            for i, r in ((r["id"], r) for r in rows)}


def newest_machine(conn):
    """(machine id of the newest run, how many machines hold runs), for the default of one machine."""
    row = conn.execute("SELECT machine_id FROM runs ORDER BY id DESC LIMIT 1").fetchone()
    n = conn.execute("SELECT COUNT(DISTINCT machine_id) FROM runs").fetchone()[0]
    return (row[0] if row else None), n


def trend(conn, names, machine_id=None, last=None):
    """(runs, {name: {run_id: value}}, {run_id: {name: verdict}}) for the chosen runs."""
    runs = list(db.runs_of(conn, machine_id))
    if last:
        runs = runs[-last:]
    ids = [r["id"] for r in runs]
    values = {n: {} for n in names}
    verdicts = {}
    if ids and names:
        q = ",".join("?" * len(ids))
        qn = ",".join("?" * len(names))
        for row in conn.execute("SELECT run_id, name, value FROM figures WHERE run_id IN (%s) AND name IN (%s)"
                                % (q, qn), ids + names):
            values[row["name"]][row["run_id"]] = row["value"]
        for row in conn.execute("SELECT run_id, name, verdict FROM comparisons WHERE run_id IN (%s) AND name IN (%s)"
                                % (q, qn), ids + names):
            verdicts.setdefault(row["run_id"], {})[row["name"]] = row["verdict"]
    return runs, values, verdicts


def qualities(conn, names, runs):
    """{run_id: {name: quality}} of the chosen runs' figures whose verdict is not ok (the figures table's
    `quality`; NULL for a figure of a log written before verdicts existed)."""
    ids = [r["id"] for r in runs]
    out = {}
    if ids and names:
        q = ",".join("?" * len(ids))
        qn = ",".join("?" * len(names))
        for row in conn.execute("SELECT run_id, name, quality FROM figures WHERE run_id IN (%s) AND name IN (%s)"
                                " AND quality IS NOT NULL AND quality <> 'ok'" % (q, qn), ids + names):
            out.setdefault(row["run_id"], {})[row["name"]] = row["quality"]
    return out


def table(runs, names, values, verdicts, quality=None, machines=None):
    """Markdown trend table: one row per run, one column per figure; '!' marks a regression and
    '+' an improvement found when that run was ingested; a figure whose verdict was not ok says which
    (quality from qualities(): "(noisy)", "(suspect)"). machines: {id: name} (machine_names)."""
    head = ["Run", "Ingested (UTC)", "Machine", "Status", "crc32"] + names
    out = ["| " + " | ".join(head) + " |", "|" + "|".join("---" for _ in head) + "|"]
    for r in runs:
        cells = [str(r["id"]), r["ingested_at"], (machines or {}).get(r["machine_id"], str(r["machine_id"])),
                 r["status"], r["crc32"]]
        for n in names:
            v = values[n].get(r["id"])
            mark = {"regressed": " !", "improved": " +"}.get(verdicts.get(r["id"], {}).get(n), "")
            q = (quality or {}).get(r["id"], {}).get(n)
            cells.append("" if v is None else ("%.4g" % v) + mark + (" (%s)" % q if q else ""))
        out.append("| " + " | ".join(cells) + " |")
    return "\n".join(out) + "\n"


def bands(conn, names, runs):
    """{name: {run_id: (baseline, allowed, verdict)}}: what nightly compared each run's figure with
    when it was ingested (the comparisons table; baseline and allowed None without a baseline)."""
    ids = [r["id"] for r in runs]
    out = {n: {} for n in names}
    if ids and names:
        q = ",".join("?" * len(ids))
        qn = ",".join("?" * len(names))
        for row in conn.execute("SELECT run_id, name, baseline, allowed, verdict FROM comparisons"
                                " WHERE run_id IN (%s) AND name IN (%s)" % (q, qn), ids + names):
            out[row["name"]][row["run_id"]] = (row["baseline"], row["allowed"], row["verdict"])
    return out


def plot(runs, names, values, title="pmubench history", bands=None):
    """PNG: one panel per figure, its value over the runs, with the baseline +- tolerance each run was
    judged against as a shaded band (bands from bands(); without it, the values alone)."""
    from . import plots
    series = {}
    units = {}
    for n in names:
        b = (bands or {}).get(n, {})
        pts = []
        for r in runs:
            if r["id"] not in values[n]:
                continue
            base, allowed, verdict = b.get(r["id"], (None, None, None))
            pts.append((r["id"], values[n][r["id"]], base, allowed, verdict))
        if pts:
            series[n] = pts
            units[n] = n.rsplit("/", 1)[-1]
    return plots.trend(title, series, units)
