"""How the host tools write a figure's value, a change against a baseline and a machine for a reader:
the record's natural unit with an SI prefix (GB/s, ns, cycles), a signed percent that says whether it
is better or worse, a machine's name instead of its database id, and the figure names a --figure
query that matched nothing was probably after."""
import difflib
import math

_PREFIX = [(1e12, "T"), (1e9, "G"), (1e6, "M"), (1e3, "k")]
# units that take an SI prefix, with their short form
_SI_UNITS = {"bytes/s": "B/s", "bytes_per_s": "B/s", "Hz": "Hz", "bytes": "B"}


def _sig(v, digits=4):
    if v == 0 or not math.isfinite(v):
        return "%g" % v
    s = "%.*g" % (digits, v)
    if "e" in s:
        s = "%.*f" % (max(0, digits - 1 - int(math.floor(math.log10(abs(v))))), v)
    return s


def si(value, unit, digits=4):
    """'265.2 GB/s', '127.3 ns', '503.9 cycles': value in its unit, with an SI prefix where the unit takes
    one (bytes/s, Hz), 4 significant digits."""
    if value is None:
        return "no value"
    if not isinstance(value, (int, float)) or isinstance(value, bool):
        return "%s %s" % (value, unit or "")
    short = _SI_UNITS.get(unit)
    if short:
        for f, p in _PREFIX:
            if abs(value) >= f:
                return "%s %s%s" % (_sig(value / f, digits), p, short)
        return "%s %s" % (_sig(value, digits), short)
    return ("%s %s" % (_sig(value, digits), unit or "")).rstrip()


def change(value, base, better):
    """'+32.4 % (better)': the value's change against base as a signed percent of base, and whether the
    change is for the better (better: 'higher' or 'lower' is better)."""
    if base in (None, 0) or value is None:
        return "no baseline"
    rel = (value - base) / abs(base)
    good = rel > 0 if better == "higher" else rel < 0
    return "%+.1f %% (%s)" % (100 * rel, "same" if rel == 0 else "better" if good else "worse")


def machine_name(ident, machine_id=None):
    """A machine as a reader knows it: its host name, else its CPU, CPU count and accelerator."""
    ident = ident or {}
    if ident.get("host"):
        return str(ident["host"])
    cpu = ident.get("brand") or " ".join(str(ident.get(k)) for k in ("vendor", "family", "model") if ident.get(k))
    parts = [str(cpu or "unknown CPU")]
    if ident.get("cpus"):
        parts.append("%s CPUs" % ident["cpus"])
    if ident.get("accel") and ident.get("accel") != "unknown":
        parts.append(str(ident["accel"]))
    name = ", ".join(parts)
    return name + (" (#%d)" % machine_id if machine_id is not None else "")


def suggest(names, query, n=6):
    """Figure names near a query that matched nothing: names holding it case-insensitively (HITM ->
    c2c/.../hitm), then the closest spellings of a name or one of its '/'-components."""
    q = query.strip("/").lower()
    hits = [x for x in names if q and q in x.lower()]
    if hits:
        return hits[:n]
    comps = sorted({c for x in names for c in x.split("/")})
    near = difflib.get_close_matches(query, comps, n=3, cutoff=0.6) + \
        difflib.get_close_matches(query.lower(), [c.lower() for c in comps], n=3, cutoff=0.6)
    out = []
    for c in near:
        for x in names:
            if c in x.split("/") or c in x.lower().split("/"):
                if x not in out:
                    out.append(x)
                break
    out += [x for x in difflib.get_close_matches(query, names, n=n, cutoff=0.5) if x not in out]
    return out[:n]
