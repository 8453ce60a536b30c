"""PNG plots for reports and history. matplotlib is imported here, lazily, and only on first use,
so parsing, nightly and history tables work on a machine without it; available() says whether
plots can be drawn."""
import io

_plt = None


def available():
    try:
        _pyplot()
        return True
    except ImportError:
        return False


def _pyplot():
    global _plt
    if _plt is None:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
        _plt = plt
    return _plt


def _png(fig):
    buf = io.BytesIO()
    fig.savefig(buf, format="png", dpi=100, bbox_inches="tight")
    _pyplot().close(fig)
    return buf.getvalue()


def human_bytes(n):
    n = float(n)
    for unit in ("B", "KiB", "MiB", "GiB", "TiB"):
        if abs(n) < 1024 or unit == "TiB":
            return ("%d %s" % (n, unit)) if n == int(n) else ("%.1f %s" % (n, unit))
        n /= 1024
    return str(n)


def _cache_lines(ax, cpuid_levels, inferred_levels=()):
    """CPUID cache sizes as solid grey lines (labelled at the top), inferred ones dashed red."""
    ymin, ymax = ax.get_ylim()
    for lvl, b in cpuid_levels:
        ax.axvline(b, color="tab:gray", ls="-", lw=4, alpha=0.35)
        ax.text(b, ymax, " L%s CPUID" % lvl, rotation=90, va="top", ha="right", fontsize=7, color="tab:gray")
    for lvl, b in inferred_levels:
        ax.axvline(b, color="tab:red", ls="--", lw=1)
        ax.text(b, ymin, " L%s inferred" % lvl, rotation=90, va="bottom", ha="left", fontsize=7, color="tab:red")
    ax.set_ylim(ymin, ymax)


def _legend_outside(ax, n):
    """A legend right of the axes (never over the data); smaller type when it is long."""
    if n:
        ax.legend(fontsize=8 if n <= 8 else 6, loc="upper left", bbox_to_anchor=(1.01, 1.0), borderaxespad=0.0,
                  ncol=1 if n <= 16 else 2)


def _ylim_of(values, log=False, zero=False, pad=0.08):
    """Axis limits that show every value in values: from 0 when zero (a ratio or a rate is read from
    the axis), else around the data; on a log axis a factor of pad around the extremes."""
    v = [float(x) for x in values if x is not None and x == x and (not log or x > 0)]
    if not v:
        return (0.0, 1.0) if not log else (0.1, 10.0)
    lo, hi = min(v), max(v)
    if log:
        return lo / (1 + 3 * pad), hi * (1 + 3 * pad)
    if zero:
        lo = min(0.0, lo)
    span = (hi - lo) or abs(hi) or 1.0
    return (lo if zero else lo - pad * span), hi + pad * span


def _band(ax, xs, los, his, colour, ylim, log):
    """A CI band clipped to the axis; where an interval runs past the axis an arrow marker sits on the
    axis edge (the interval is cut there, not hidden). Returns whether anything was clipped."""
    lo_lim, hi_lim = ylim
    nan = float("nan")
    clo = [nan if v is None else max(v, lo_lim) for v in los]     # None: no CI there, the band breaks
    chi = [nan if v is None else min(v, hi_lim) for v in his]
    ax.fill_between(xs, clo, chi, color=colour, alpha=0.25, lw=0)
    alone = [i for i in range(len(xs)) if los[i] is not None and (i == 0 or los[i - 1] is None)
             and (i == len(xs) - 1 or los[i + 1] is None)]
    for i in alone:           # a band needs two neighbours: a lone CI is a vertical bar
        ax.plot([xs[i], xs[i]], [clo[i], chi[i]], color=colour, alpha=0.5, lw=3)
    up = [x for x, v in zip(xs, his) if v is not None and v > hi_lim]
    down = [x for x, v in zip(xs, los) if v is not None and v < lo_lim]
    if up:
        ax.plot(up, [hi_lim] * len(up), ls="none", marker="^", ms=7, color=colour, clip_on=False)
    if down:
        ax.plot(down, [lo_lim] * len(down), ls="none", marker="v", ms=7, color=colour, clip_on=False)
    return bool(up or down)


def latency_vs_size_figure(series, cpuid_levels, inferred_levels, ylabel="ns"):
    """series: {label: [(bytes, value) or (bytes, value, ci_lo, ci_hi)]}, one line per label (page size and
    mode) with the CI as a shaded band where the points carry one (the caller passes a CI only where it
    is a real one: never the min-max of a few samples); *_levels: [(level, bytes)] drawn as vertical
    lines. Log-log; the y axis is set by the medians, and an interval that runs past it is clipped
    there with an arrow, so one wide interval cannot flatten the curve."""
    plt = _pyplot()
    fig, ax = plt.subplots(figsize=(8, 4.5))
    ylim = _ylim_of([p[1] for pts in series.values() for p in pts], log=True)
    ylim = (ylim[0] / 1.3, ylim[1] * 1.3)
    clipped = False
    for label, pts in series.items():
        pts = sorted(pts, key=lambda p: p[0])
        line, = ax.plot([p[0] for p in pts], [p[1] for p in pts], marker="o", ms=3, label=label)
        real = [len(p) >= 4 and p[2] is not None and p[3] is not None for p in pts]
        if any(real):
            clipped |= _band(ax, [p[0] for p in pts], [p[2] if ok else None for p, ok in zip(pts, real)],
                             [p[3] if ok else None for p, ok in zip(pts, real)], line.get_color(), ylim, True)
    ax.set_xscale("log", base=2)
    ax.set_yscale("log")
    ax.set_ylim(*ylim)
    _cache_lines(ax, cpuid_levels, inferred_levels)
    ax.set_xlabel("working set (bytes)")
    ax.set_ylabel("load-to-use latency (%s)" % ylabel)
    ax.set_title("Latency vs working-set size (band: 95%% CI of the median%s)"
                 % (", arrow: clipped at the axis" if clipped else ""), fontsize=10)
    ax.grid(True, which="both", alpha=0.3)
    ax.xaxis.set_major_formatter(plt.FuncFormatter(lambda v, _p: human_bytes(v)))
    _legend_outside(ax, len(series))
    return fig


def latency_vs_size(series, cpuid_levels, inferred_levels, ylabel="ns"):
    return _png(latency_vs_size_figure(series, cpuid_levels, inferred_levels, ylabel))


def bandwidth_vs_size_figure(panels, cpuid_levels, subtitle=""):
    """panels: {isa: {kernel: [(bytes, GB/s)]}}: one panel per ISA, one line per kernel, log x, the
    CPUID cache sizes [(level, bytes)] as vertical lines. Each panel has its own y axis from 0 to its
    own largest point (AVX-512 reads of the L1 run at twice SSE2's: a shared axis cut them off)."""
    plt = _pyplot()
    isas = list(panels)
    fig, axes = plt.subplots(1, len(isas), figsize=(max(6.5, 4.8 * len(isas) + 1.5), 4.2), squeeze=False)
    kernels = []
    for isa in isas:
        kernels += [k for k in panels[isa] if k not in kernels]
    colour = {k: "C%d" % (i % 10) for i, k in enumerate(kernels)}     # a kernel has one colour in every panel
    handles = {}
    for ax, isa in zip(axes[0], isas):
        for kern, pts in panels[isa].items():
            pts = sorted(pts)
            line, = ax.plot([p[0] for p in pts], [p[1] for p in pts], marker="o", ms=3, color=colour[kern],
                            label=str(kern))
            handles.setdefault(kern, line)
        ax.set_xscale("log", base=2)
        ax.set_ylim(*_ylim_of([p[1] for pts in panels[isa].values() for p in pts], zero=True))
        _cache_lines(ax, cpuid_levels)
        ax.set_title("%s%s" % (isa, subtitle), fontsize=10)
        ax.set_xlabel("working set (bytes)")
        ax.set_ylabel("GB/s (10^9 bytes/s)")
        ax.grid(True, which="both", alpha=0.3)
        ax.xaxis.set_major_formatter(plt.FuncFormatter(lambda v, _p: human_bytes(v)))
        ax.tick_params(axis="x", labelsize=7)
    ks = [k for k in kernels if k in handles]
    if ks:
        axes[0][-1].legend([handles[k] for k in ks], [str(k) for k in ks], fontsize=8 if len(ks) <= 8 else 6,
                           loc="upper left", bbox_to_anchor=(1.01, 1.0), borderaxespad=0.0)
    fig.suptitle("Bandwidth vs working-set size (each panel its own y axis)")
    fig.tight_layout()
    return fig


def bandwidth_vs_size(panels, cpuid_levels, subtitle=""):
    return _png(bandwidth_vs_size_figure(panels, cpuid_levels, subtitle))


def _thinned_labels(xs, min_octaves=0.25):
    """Labels for ticks at every x of a log2 axis, left empty where a label would sit closer than min_octaves to
    the one before (9..16 threads otherwise print as one run of digits); the last x always keeps its label, taking
    the place of a too-close one before it."""
    import math
    shown = []
    for i, x in enumerate(xs):
        if not shown or math.log2(x / xs[shown[-1]]) >= min_octaves:
            shown.append(i)
        elif i == len(xs) - 1:
            shown[-1] = i
    return [str(x) if i in shown else "" for i, x in enumerate(xs)]


def scaling_figure(series, title="Bandwidth scaling vs threads"):
    """series: {label: [(threads, GB/s)]}: one line per kernel, threads on a log2 axis, GB/s from 0 so
    the ratio between thread counts reads off the axis."""
    plt = _pyplot()
    fig, ax = plt.subplots(figsize=(7.5, 4.2))
    xs = sorted({p[0] for pts in series.values() for p in pts})
    for label, pts in series.items():
        pts = sorted(pts)
        ax.plot([p[0] for p in pts], [p[1] for p in pts], marker="o", ms=4, label=str(label))
    if len(xs) > 1 and xs[0] > 0:
        ax.set_xscale("log", base=2)
        ax.set_xticks(xs, _thinned_labels(xs))
        ax.set_xlim(xs[0] / 1.25, xs[-1] * 1.25)
    else:
        ax.set_xticks(xs, [str(x) for x in xs])
    ax.set_ylim(*_ylim_of([p[1] for pts in series.values() for p in pts], zero=True))
    ax.set_xlabel("threads")
    ax.set_ylabel("GB/s (10^9 bytes/s)")
    ax.set_title(title, fontsize=10)
    ax.grid(True, alpha=0.3)
    _legend_outside(ax, len(series))
    return fig


def scaling(series, title="Bandwidth scaling vs threads"):
    return _png(scaling_figure(series, title))


QUALITY_COLOUR = {"ok": "tab:blue", "noisy": "tab:orange", "suspect": "tab:red"}


def table2_chart_figure(rows):
    """rows: [(source, unit, value, ci_lo, ci_hi, ref_lo, ref_hi, status)] in the guide's order, status
    the row's final verdict (the record's quality, suspect where a cross-check blamed it). One panel
    per unit (cycles, ns): the guide's range as a grey bar, this run's median as a dot (coloured by
    its verdict) with its CI; a row without a value is named with its
    status and its guide range is only outlined. The axis is set by the medians and the guide, never
    by an interval: an interval past the axis is cut at the edge with an arrow and its end written
    beside it. Medians spanning more than 100x put the panel on a log axis."""
    plt = _pyplot()
    units = [u for u in ("cycles", "ns") if any(r[1] == u for r in rows)]
    units += sorted({r[1] for r in rows} - set(units))
    units = units or ["cycles"]
    heights = [max(1, sum(1 for r in rows if r[1] == u)) for u in units]
    fig, axes = plt.subplots(len(units), 1, figsize=(7.5, 0.45 * sum(heights) + 1.3 * len(units) + 0.4),
                             squeeze=False, gridspec_kw={"height_ratios": heights})
    for ax, u in zip([a[0] for a in axes], units):
        rs = [r for r in rows if r[1] == u]
        vals = [r[2] for r in rs if r[2] is not None]
        refs = [x for r in rs for x in (r[5], r[6]) if x is not None]
        pos = [x for x in vals + refs if x > 0]
        vpos = [x for x in vals if x > 0]
        log = bool(vals) and len(pos) == len(vals + refs) and max(vpos) / min(vpos) > 100
        if log:
            xlim = (min(pos) / 1.6, max(pos) * 1.6)
        else:
            xlim = (0.0, max(vals + refs + [0.0]) * 1.15 or 1.0)
        clipped = False
        seen = set()

        def once(label):
            if label in seen:
                return None
            seen.add(label)
            return label
        for i, (src, _u, v, lo, hi, rlo, rhi, st) in enumerate(rs):
            y = len(rs) - 1 - i
            if rlo is not None and rhi is not None:
                if v is None:      # an unavailable row: its guide range outlined, not a block of grey
                    ax.plot([rlo, rhi], [y, y], color="tab:gray", lw=1, ls=":")
                elif rhi > rlo:
                    ax.barh(y, rhi - rlo, left=rlo, height=0.5, color="tab:gray", alpha=0.35)
                ax.plot([rlo, rhi], [y, y], "|", color="tab:gray", ms=14, mew=2, label=once("guide value or range"))
            if v is None:
                ax.text(rlo if rlo is not None else xlim[0], y, "  %s" % st, va="center", fontsize=8,
                        color="tab:red")
                continue
            col = QUALITY_COLOUR.get(st, "tab:purple")
            xerr = None
            if lo is not None and hi is not None:
                clo, chi = max(lo, xlim[0]), min(hi, xlim[1])
                xerr = [[max(v - clo, 0)], [max(chi - v, 0)]]
                for end, edge, mk, ha in ((hi, xlim[1], ">", "right"), (lo, xlim[0], "<", "left")):
                    if (end > edge) if mk == ">" else (end < edge):
                        clipped = True
                        ax.plot([edge], [y], ls="none", marker=mk, ms=8, color=col, clip_on=False)
                        ax.annotate("CI to %.4g" % end, (edge, y), textcoords="offset points",
                                    xytext=(-6 if ha == "right" else 6, 7), ha=ha, fontsize=7, color=col)
            ax.errorbar([v], [y], xerr=xerr, fmt="o", color=col, ms=5, capsize=3,
                        label=once("this run, %s (median, 95%% CI)" % st))
        ax.set_yticks(range(len(rs)))
        ax.set_yticklabels([("%s (%s)" % (r[0], r[7]) if r[2] is None or r[7] != "ok" else r[0])
                            for r in reversed(rs)], fontsize=8)
        if log:
            ax.set_xscale("log")
        ax.set_xlim(*xlim)
        ax.set_ylim(-0.6, len(rs) - 0.4)
        ax.set_xlabel(u + (" (log scale: medians span more than 100x)" if log else ""))
        ax.grid(True, axis="x", which="both", alpha=0.3)
        if clipped:
            ax.text(1.0, -0.22 if len(rs) > 2 else -0.4, "arrow: the 95% CI runs past the axis (its end written "
                    "beside it)", transform=ax.transAxes, ha="right", va="top", fontsize=7, color="tab:gray")
        _legend_outside(ax, len(seen))
    axes[0][0].set_title("Data sources: this run vs the guide's Table 2")
    fig.tight_layout()
    return fig


def table2_chart(rows):
    return _png(table2_chart_figure(rows))


def robust_range(values):
    """(vmin, vmax, clipped_low, clipped_high) of a colour scale that one outlier cannot take over: the
    median +- 4 robust standard deviations (1.4826 MAD), never wider than the data (min-max when the MAD
    is 0), and never narrower than the median +- 10 %."""
    v = sorted(float(x) for x in values)
    if not v:
        return 0.0, 1.0, False, False
    n = len(v)
    med = v[n // 2] if n % 2 else (v[n // 2 - 1] + v[n // 2]) / 2
    dev = sorted(abs(x - med) for x in v)
    mad = dev[n // 2] if n % 2 else (dev[n // 2 - 1] + dev[n // 2]) / 2
    lo, hi = v[0], v[-1]
    if mad > 0:
        lo, hi = max(lo, med - 4 * 1.4826 * mad), min(hi, med + 4 * 1.4826 * mad)
    # never narrower than +-10 % of the median: cells within a few percent of each other read as alike,
    # not as the two ends of the colour map
    if hi - lo < 0.2 * abs(med):
        lo, hi = min(lo, med - 0.1 * abs(med)), max(hi, med + 0.1 * abs(med))
    if hi <= lo:
        hi = lo + (abs(lo) * 0.01 or 1.0)
    return lo, hi, lo > v[0], hi < v[-1]


def heatmap_figure(title, labels_from, labels_to, matrix, unit, panels=None, fmt="%.0f", xlabel="to",
                   ylabel="from"):
    """The heat map Figure (heatmap() is its PNG). matrix: rows = from, cols = to, None for missing;
    panels: [(title, matrix)] for several, side by side. Every panel shares one robust colour scale
    (robust_range over all cells: one slow pair cannot make every other cell look alike; a cell past
    the scale takes its end colour and the colour bar shows an arrow) and every cell prints its value.
    Constrained layout keeps a colour bar's label clear of the next panel's axis label and tick labels."""
    plt = _pyplot()
    panels = panels or [(title, matrix)]
    n = max(len(labels_from), len(labels_to), 1)
    side = max(4.6, 0.42 * n + 1.6)
    fig, axes = plt.subplots(1, len(panels), figsize=(side * len(panels) + 0.6, max(4.0, side - 0.6)),
                             squeeze=False, layout="constrained")
    cmap = plt.get_cmap("viridis").copy()
    cmap.set_bad("#dddddd")
    allv = [v for _t, m in panels for row in m for v in row if v is not None]
    vmin, vmax, cut_lo, cut_hi = robust_range(allv)
    extend = {(False, False): "neither", (True, False): "min", (False, True): "max", (True, True): "both"}[
        (cut_lo, cut_hi)]
    fs = max(4.5, min(8.0, 80.0 / n))
    if fmt == "%.0f" and allv and max(allv) - min(allv) < 10:
        fmt = "%.1f"          # close values: a decimal tells them apart
    for ax, (t, m) in zip(axes[0], panels):
        data = [[float("nan") if v is None else v for v in row] for row in m]
        im = ax.imshow(data, cmap=cmap, aspect="auto", vmin=vmin, vmax=vmax)
        ax.set_xticks(range(len(labels_to)), [str(x) for x in labels_to])
        ax.set_yticks(range(len(labels_from)), [str(x) for x in labels_from])
        ax.set_xlabel(xlabel)
        ax.set_ylabel(ylabel)
        ax.set_title(t, fontsize=10)
        for i, row in enumerate(m):
            for k, v in enumerate(row):
                if v is not None:
                    bright = (min(max(v, vmin), vmax) - vmin) / (vmax - vmin) > 0.55   # viridis: light at the top
                    ax.text(k, i, fmt % v, ha="center", va="center", fontsize=fs, color="k" if bright else "w")
        fig.colorbar(im, ax=ax, label=unit, shrink=0.9, extend=extend)
    if cut_lo or cut_hi:
        fig.suptitle("%s: one colour scale for every panel (%s to %s, %s); a cell past it takes the end colour, "
                     "its printed value is exact" % (title, fmt % vmin, fmt % vmax, unit), fontsize=9)
    return fig


def heatmap(title, labels_from, labels_to, matrix, unit, panels=None, fmt="%.0f", xlabel="to", ylabel="from"):
    return _png(heatmap_figure(title, labels_from, labels_to, matrix, unit, panels, fmt, xlabel, ylabel))


def loaded_latency_figure(points, idle_ns=None, idle_label="idle"):
    """MLC-style loaded-latency curve. points: [(GB/s, ns, delay)] of the loaded points; idle_ns: the
    latency with no load (a horizontal dashed line and a distinct marker at 0 GB/s). The delays label
    the points when there are few enough to read."""
    plt = _pyplot()
    fig, ax = plt.subplots(figsize=(8, 4.5), layout="constrained")
    pts = sorted(points, key=lambda p: p[0])
    ax.plot([p[0] for p in pts], [p[1] for p in pts], marker="o", ms=5, color="tab:blue",
            label="loaded (other CPUs stream reads)")
    if pts:
        # label the delays, skipping a label that would sit on one already placed (light loads crowd near 0 GB/s)
        xr = (max(p[0] for p in pts) - min(p[0] for p in pts)) or 1.0
        ys = [p[1] for p in pts] + ([idle_ns] if idle_ns is not None else [])
        yr = (max(ys) - min(ys)) or 1.0
        placed = []
        for bw, ns, d in sorted(pts, key=lambda p: p[2]):
            if all(abs(bw - x) / xr > 0.06 or abs(ns - y) / yr > 0.08 for x, y in placed):
                ax.annotate(str(d), (bw, ns), textcoords="offset points", xytext=(3, 5), fontsize=8,
                            color="tab:gray")
                placed.append((bw, ns))
    if idle_ns is not None:
        ax.axhline(idle_ns, color="tab:green", ls="--", lw=1.2, label="%s: %.1f ns" % (idle_label, idle_ns))
        ax.plot([0], [idle_ns], marker="D", ms=8, color="tab:green", ls="none")
        odd = [p for p in pts if p[1] < idle_ns]
        if odd:      # a loaded chase cannot be faster than the idle one: noise, or not the same chain
            ax.plot([p[0] for p in odd], [p[1] for p in odd], ls="none", marker="o", ms=13, mfc="none",
                    mec="tab:red", mew=1.5, label="below the idle latency: physically odd (%d)" % len(odd))
    xmax = max([p[0] for p in pts] + [0.0])
    ax.set_xlim(-0.03 * (xmax or 1.0), (xmax or 1.0) * 1.08)
    # from 0: the loaded/idle ratio is the question, and a 4 % rise must not look like a cliff
    ax.set_ylim(*_ylim_of([p[1] for p in pts] + ([idle_ns] if idle_ns is not None else []), zero=True, pad=0.12))
    ax.set_xlabel("bandwidth of the load generators (GB/s, 10^9 bytes/s)")
    ax.set_ylabel("load-to-use latency (ns)")
    ax.set_title("Loaded latency: latency vs achieved bandwidth (labels: injection delay)", fontsize=10)
    ax.grid(True, alpha=0.3)
    ax.legend(fontsize=8, loc="upper center", bbox_to_anchor=(0.5, -0.14), ncol=2, borderaxespad=0.0)
    return fig


def loaded_latency(points, idle_ns=None, idle_label="idle"):
    return _png(loaded_latency_figure(points, idle_ns, idle_label))


def branch_curves_figure(panels, refs=None):
    """One column per sweep. panels: [(title, xlabel, {series: [(x, cycles, mispredict rate or None)]}, logx)];
    refs: {label: cycles} of the predictable and the random conditional branch, drawn as horizontal lines
    in the panels of conditional and indirect branches (not the return stack, where they mean nothing).
    The mispredict rate, where measured, in a second row under the cycles (0 to 1, solid lines in the
    series' colours), so neither is read off a second y axis."""
    plt = _pyplot()
    refs = refs or {}
    has_rate = any(p[2] is not None for _t, _x, series, _l in panels for pts in series.values() for p in pts)
    rows = 2 if has_rate else 1
    fig, axes = plt.subplots(rows, len(panels), figsize=(5.0 * len(panels) + 0.5, 4.2 + 2.2 * (rows - 1)),
                             squeeze=False, layout="constrained", sharex="col",
                             gridspec_kw={"height_ratios": [2, 1][:rows]})
    ref_style = [("tab:green", ":"), ("tab:red", "--"), ("tab:gray", "-.")]
    for col, (title, xlabel, series, logx) in enumerate(panels):
        ax = axes[0][col]
        ys = []
        for i, (label, pts) in enumerate(series.items()):
            pts = sorted(pts, key=lambda p: p[0])
            c = "C%d" % i
            ax.plot([p[0] for p in pts], [p[1] for p in pts], marker="o", ms=4, color=c, label=label)
            ys += [p[1] for p in pts]
            rates = [(p[0], p[2]) for p in pts if p[2] is not None]
            if rates and has_rate:
                axes[1][col].plot([r[0] for r in rates], [r[1] for r in rates], marker=".", color=c, label=label)
        if not title.lower().startswith("return"):
            for (label, y), (colr, ls) in zip(refs.items(), ref_style):
                ax.axhline(y, color=colr, ls=ls, lw=1, label="%s %.1f" % (label, y))
                ys.append(y)
        if logx:
            ax.set_xscale("log", base=2)
        ax.set_ylim(*_ylim_of(ys, zero=True))
        ax.set_title(title, fontsize=10)
        ax.grid(True, which="both", alpha=0.3)
        low = axes[rows - 1][col]
        low.set_xlabel(xlabel)
        h, lab = ax.get_legend_handles_labels()
        low.legend(h, lab, fontsize=7, loc="upper center", bbox_to_anchor=(0.5, -0.3 if has_rate else -0.14),
                   ncol=2, borderaxespad=0.0)
        if has_rate:
            r = axes[1][col]
            r.set_ylim(-0.03, 1.03)
            r.grid(True, which="both", alpha=0.3)
            if not r.lines:
                r.text(0.5, 0.5, "not measured", transform=r.transAxes, ha="center", va="center",
                       fontsize=8, color="tab:gray")
    axes[0][0].set_ylabel("core cycles per branch")
    if has_rate:
        axes[1][0].set_ylabel("mispredict rate")
    return fig


def branch_curves(panels, refs=None):
    return _png(branch_curves_figure(panels, refs))


def lines(title, xlabel, ylabel, series, logx=False):
    """series: {label: [(x, y)]}."""
    plt = _pyplot()
    fig, ax = plt.subplots(figsize=(7, 4))
    for label, pts in series.items():
        pts = sorted(pts)
        ax.plot([p[0] for p in pts], [p[1] for p in pts], marker="o", ms=4, label=str(label))
    if logx:
        ax.set_xscale("log", base=2)
    ax.set_xlabel(xlabel)
    ax.set_ylabel(ylabel)
    ax.set_title(title)
    ax.grid(True, alpha=0.3)
    if len(series) > 1:
        _legend_outside(ax, len(series))
    return _png(fig)


def trend_figure(title, series, units=None):
    """One panel per figure, over the runs. series: {figure name: [(run id, value, baseline, allowed,
    verdict)]}: baseline and allowed (None when the run had no baseline) are what nightly compared
    that run with; the baseline +- allowed is a shaded band, the baseline a dashed line, a point
    found regressed a red cross, an improved one a green triangle. units: {name: unit} for the y labels."""
    plt = _pyplot()
    names = list(series) or ["(no figures)"]
    fig, axes = plt.subplots(len(names), 1, figsize=(8, 2.6 * len(names) + 0.8), squeeze=False, sharex=True,
                             layout="constrained")
    for ax, name in zip([a[0] for a in axes], names):
        pts = sorted(series.get(name, []), key=lambda p: p[0])
        ax.plot([p[0] for p in pts], [p[1] for p in pts], marker="o", ms=4, color="tab:blue", label="value")
        band = [p for p in pts if p[2] is not None and p[3] is not None]
        if band:
            # each run's band spans +-0.4 around it: one run with a baseline is a visible box, not a zero-width step
            xs = [x for p in band for x in (p[0] - 0.4, p[0] + 0.4)]
            ax.fill_between(xs, [p[2] - p[3] for p in band for _ in "ab"], [p[2] + p[3] for p in band for _ in "ab"],
                            color="tab:gray", alpha=0.3, lw=0, label="baseline +- tolerance")
            ax.plot(xs, [p[2] for p in band for _ in "ab"], color="tab:gray", ls="--", lw=1.2, label="baseline")
        for verdict, mk, col in (("regressed", "X", "tab:red"), ("improved", "^", "tab:green")):
            hit = [p for p in pts if len(p) > 4 and p[4] == verdict]
            if hit:
                ax.plot([p[0] for p in hit], [p[1] for p in hit], ls="none", marker=mk, ms=9, color=col,
                        label=verdict)
        ax.set_title(name, fontsize=9)
        ax.set_ylabel((units or {}).get(name, ""))
        ax.grid(True, alpha=0.3)
        if pts:
            ax.legend(fontsize=7, loc="upper left", bbox_to_anchor=(1.01, 1.0), borderaxespad=0.0)
    axes[-1][0].set_xlabel("run id")
    axes[-1][0].xaxis.set_major_locator(plt.MaxNLocator(integer=True))
    fig.suptitle(title, fontsize=10)
    return fig


def trend(title, series, units=None):
    return _png(trend_figure(title, series, units))


def deviation_map(title, rows, cols, data, label="%"):
    """Diverging heat map of data[row][col] (None: no value, drawn grey), symmetric around 0."""
    plt = _pyplot()
    import numpy as np
    a = np.array([[np.nan if v is None else float(v) for v in r] for r in data], dtype=float).reshape(len(rows),
                                                                                                      len(cols))
    finite = a[np.isfinite(a)]
    lim = max(1.0, float(np.max(np.abs(finite)))) if finite.size else 1.0
    fig, ax = plt.subplots(figsize=(max(6, 0.6 * len(cols) + 3), max(3, 0.4 * len(rows) + 2)))
    cmap = plt.get_cmap("RdBu_r").copy()
    cmap.set_bad("#dddddd")
    im = ax.imshow(np.ma.masked_invalid(a), cmap=cmap, vmin=-lim, vmax=lim, aspect="auto")
    ax.set_xticks(range(len(cols)))
    ax.set_xticklabels(cols, rotation=60, ha="right", fontsize=7)
    ax.set_yticks(range(len(rows)))
    ax.set_yticklabels(rows, fontsize=8)
    for i in range(len(rows)):
        for j in range(len(cols)):
            if np.isfinite(a[i, j]):
                ax.text(j, i, "%+.1f" % a[i, j], ha="center", va="center", fontsize=6)
    fig.colorbar(im, ax=ax, label=label)
    ax.set_title(title, fontsize=9)
    return _png(fig)
