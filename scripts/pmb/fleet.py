"""Fleet view: each machine's deviation from the median of the identical machines in the history.

Identical machines share the CPU identity (db.IDENTITY_KEYS: vendor, family, model, stepping, brand,
CPU count, memory bytes, accelerator) and differ in the host name (nightly --host). For every machine
the latest good run (status ok, no smp_timeout or crash record: what could be a baseline) is taken;
for every figure the fleet median is the median of those runs' values over the machine's identical
peers (itself included) whose final verdict is not suspect (a figure a cross-check or a sanity check
blamed is no reference), and the deviation is 100 * (value - median) / |median| percent; a machine's
own suspect figure still gets its deviation, marked "(suspect)". A deviation
is flagged when it is larger than nightly's tolerance floor for the figure (nightly.FLOOR_REL of the
figure's group, at least nightly.FLOOR_ABS of its unit): '!' when worse, '+' when better. A machine
with no identical peer has nothing to be compared with and says so.
"""
import statistics

from . import db, nightly
from .present import change, machine_name, si


class Cell:
    __slots__ = ("value", "median", "deviation", "allowed", "mark", "unit", "better", "suspect")

    def __init__(self, value, median, deviation, allowed, mark, unit, better, suspect=False):
        self.suspect = suspect  # the figure's final verdict in this machine's run is suspect
        self.value = value
        self.median = median
        self.deviation = deviation
        self.allowed = allowed
        self.mark = mark
        self.unit = unit
        self.better = better


class Machine:
    def __init__(self, row, ident, run_id):
        self.id = row["id"]
        self.ident = ident
        self.host = ident.get("host")
        self.cpu = db.cpu_key(ident)
        self.run_id = run_id
        self.peers = 0          # identical machines with a good run, itself included
        self.cells = {}         # name -> Cell

    @property
    def label(self):
        return self.host or machine_name(self.ident, self.id)


def latest_good_run(conn, machine_id):
    row = conn.execute("SELECT MAX(id) FROM runs WHERE machine_id = ? AND status = 'ok' AND NOT %s"
                       % db._NOT_A_BASELINE_SQL, (machine_id,)).fetchone()
    return row[0] if row else None


def build(conn, names):
    """[Machine] (ordered by CPU identity, then host name), each with a Cell per figure it has."""
    ms = []
    for row in db.machines(conn):
        ms.append(Machine(row, db.machine_identity(row), latest_good_run(conn, row["id"])))
    figs = {m.id: (db.figures_of(conn, m.run_id) if m.run_id is not None else {}) for m in ms}
    groups = {}
    for m in ms:
        if m.run_id is not None:
            groups.setdefault(m.cpu, []).append(m)
    for peers in groups.values():
        for m in peers:
            m.peers = len(peers)
        for name in names:
            # the fleet median of the peers' values whose final verdict is not suspect (nightly._quality): a
            # figure a cross-check or a sanity check blamed is no reference for the others
            vals = [figs[m.id][name]["value"] for m in peers
                    if name in figs[m.id] and nightly._quality(figs[m.id][name]) != "suspect"]
            for m in peers:
                f = figs[m.id].get(name)
                if f is None:
                    continue
                sus = nightly._quality(f) == "suspect"
                if len(vals) < 2:
                    m.cells[name] = Cell(f["value"], None, None, None, "", f["unit"], f["better"], sus)
                    continue
                med = statistics.median(vals)
                group = name.split("/", 1)[0]
                allowed = max(nightly.FLOOR_REL.get(group, nightly.FLOOR_REL["default"]) * abs(med),
                              nightly.FLOOR_ABS.get(f["unit"], 0.0))
                worse = f["value"] - med if f["better"] == "lower" else med - f["value"]
                mark = "!" if worse > allowed else "+" if -worse > allowed else ""
                dev = 100.0 * (f["value"] - med) / abs(med) if med else (0.0 if f["value"] == med else float("inf"))
                m.cells[name] = Cell(f["value"], med, dev, allowed, mark, f["unit"], f["better"], sus)
    ms.sort(key=lambda m: (m.cpu, m.host or "", m.id))
    return ms


def _cpu_label(ident):
    mem = ident.get("memory_bytes")
    mem = "%g GiB" % (mem / 2 ** 30) if isinstance(mem, (int, float)) else "?"
    return "%s, %s CPUs, %s, %s" % (ident.get("brand") or "%s %s/%s/%s" % (ident.get("vendor"), ident.get("family"),
                                    ident.get("model"), ident.get("stepping")), ident.get("cpus"), mem,
                                    ident.get("accel"))


def table(ms, names):
    """Markdown: one row per machine, one column per figure, cells the deviation in percent from the
    fleet median of its identical machines ('!' worse beyond tolerance, '+' better beyond it)."""
    head = ["Machine", "CPU identity", "Run", "Identical machines"] + names
    out = ["| " + " | ".join(head) + " |", "|" + "|".join("---" for _ in head) + "|"]
    for m in ms:
        if m.run_id is None:
            peers = "no good run"
        elif m.peers < 2:
            peers = "none: no identical peer"
        else:
            peers = str(m.peers)
        cells = [m.label, _cpu_label(m.ident), "" if m.run_id is None else str(m.run_id), peers]
        for n in names:
            c = m.cells.get(n)
            if c is None:
                cells.append("")
            elif c.deviation is None:
                cells.append("n/a" + (" (suspect)" if c.suspect else ""))
            else:
                cells.append("%+.1f%%%s%s" % (c.deviation, " " + c.mark if c.mark else "",
                                              " (suspect)" if c.suspect else ""))
        out.append("| " + " | ".join(cells) + " |")
    return "\n".join(out) + "\n"


def flagged(ms, names):
    """[(machine, name, cell)] of the deviations beyond tolerance."""
    return [(m, n, m.cells[n]) for m in ms for n in names if n in m.cells and m.cells[n].mark]


def summary_lines(ms, names):
    lines = []
    for m, n, c in flagged(ms, names):
        lines.append("%s %s %s: %s vs median %s of %d identical machines, %s, allowed +-%s%s"
                     % ("DEVIATES" if c.mark == "!" else "better  ", m.label, n, si(c.value, c.unit),
                        si(c.median, c.unit), m.peers, change(c.value, c.median, c.better), si(c.allowed, c.unit),
                        " (suspect in its run)" if c.suspect else ""))
    for m in ms:
        if m.run_id is not None and m.peers < 2:
            lines.append("no identical peer: %s (%s)" % (m.label, _cpu_label(m.ident)))
        elif m.run_id is None:
            lines.append("no good run: %s" % m.label)
    return lines


def plot(ms, names, title="pmubench fleet: deviation from the median of identical machines (%)"):
    from . import plots
    rows = [m.label for m in ms]
    data = [[(m.cells[n].deviation if n in m.cells and m.cells[n].deviation is not None else None) for n in names]
            for m in ms]
    return plots.deviation_map(title, rows, names, data)
