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


def latency_vs_size(series, cpuid_levels, inferred_levels, ylabel="ns"):
    """series: {label: [(bytes, value) or (bytes, value, ci_lo, ci_hi)]}, one line per label (page size and
    mode) with the CI as a shaded band where the points carry one; *_levels: [(level, bytes)] drawn as
    vertical lines. Log-log."""
    plt = _pyplot()
    fig, ax = plt.subplots(figsize=(8, 4.5))
    for label, pts in series.items():
        pts = sorted(pts, key=lambda p: p[0])
        line, = ax.plot([p[0] for p in pts], [p[1] for p in pts], marker="o", ms=3, label=label)
        band = [p for p in pts if len(p) >= 4 and p[2] is not None and p[3] is not None]
        if band:
            ax.fill_between([p[0] for p in band], [p[2] for p in band], [p[3] for p in band],
                            color=line.get_color(), alpha=0.25, lw=0)
    ax.set_xscale("log", base=2)
    ax.set_yscale("log")
    _cache_lines(ax, cpuid_levels, inferred_levels)
    ax.set_xlabel("working set (bytes)")
    ax.set_ylabel("load-to-use latency (%s)" % ylabel)
    ax.set_title("Latency vs working-set size (band: 95% CI of the median)")
    ax.grid(True, which="both", alpha=0.3)
    ax.xaxis.set_major_formatter(plt.FuncFormatter(lambda v, _p: human_bytes(v)))
    _legend_outside(ax, len(series))
    return _png(fig)


def bandwidth_vs_size(panels, cpuid_levels, subtitle=""):
    """panels: {isa: {kernel: [(bytes, GB/s)]}}: one panel per ISA, one line per kernel, log x, the
    CPUID cache sizes [(level, bytes)] as vertical lines."""
    plt = _pyplot()
    isas = list(panels)
    fig, axes = plt.subplots(1, len(isas), figsize=(max(6.5, 4.8 * len(isas) + 1.5), 4.2), squeeze=False,
                             sharey=True)
    kernels = []
    for isa in isas:
        kernels += [k for k in panels[isa] if k not in kernels]
    colour = {k: "C%d" % (i % 10) for i, k in enumerate(kernels)}     # a kernel has one colour in every panel
    for ax, isa in zip(axes[0], isas):
        for kern, pts in panels[isa].items():
            pts = sorted(pts)
            ax.plot([p[0] for p in pts], [p[1] for p in pts], marker="o", ms=3, color=colour[kern])
        ax.set_xscale("log", base=2)
        ax.set_ylim(bottom=0)
        _cache_lines(ax, cpuid_levels)
        ax.set_title("%s%s" % (isa, subtitle), fontsize=10)
        ax.set_xlabel("working set (bytes)")
        ax.grid(True, which="both", alpha=0.3)
        ax.xaxis.set_major_formatter(plt.FuncFormatter(lambda v, _p: human_bytes(v)))
        ax.tick_params(axis="x", labelsize=7)
    axes[0][0].set_ylabel("GB/s (10^9 bytes/s)")
    for k in kernels:
        axes[0][-1].plot([], [], marker="o", ms=3, color=colour[k], label=str(k))
    _legend_outside(axes[0][-1], len(kernels))
    fig.suptitle("Bandwidth vs working-set size")
    return _png(fig)


def table2_chart(rows):
    """rows: [(source, unit, value, ci_lo, ci_hi, ref_lo, ref_hi, status)] in the guide's order. One
    panel per unit (cycles, ns): the guide's range as a grey bar, this run's median as a dot with its
    CI; a row without a value is named with its status instead."""
    plt = _pyplot()
    units = [u for u in ("cycles", "ns") if any(r[1] == u for r in rows)]
    units += sorted({r[1] for r in rows} - set(units))
    units = units or ["cycles"]
    heights = [max(1, sum(1 for r in rows if r[1] == u)) for u in units]
    fig, axes = plt.subplots(len(units), 1, figsize=(7.5, 0.45 * sum(heights) + 1.2 * len(units) + 0.4),
                             squeeze=False, gridspec_kw={"height_ratios": heights})
    for ax, u in zip([a[0] for a in axes], units):
        rs = [r for r in rows if r[1] == u]
        xmax = 0.0
        for i, (src, _u, v, lo, hi, rlo, rhi, st) in enumerate(rs):
            y = len(rs) - 1 - i
            if rlo is not None and rhi is not None:
                w = max(rhi - rlo, 0.0)
                ax.barh(y, w if w > 0 else 0.0, left=rlo, height=0.5, color="tab:gray", alpha=0.35,
                        label="guide range" if i == 0 else None)
                ax.plot([rlo, rhi], [y, y], "|", color="tab:gray", ms=14, mew=2)
                xmax = max(xmax, rhi)
            if v is None:
                ax.text(rlo if rlo is not None else 0, y, "  %s" % st, va="center", fontsize=8, color="tab:red")
                continue
            xerr = None
            if lo is not None and hi is not None:
                xerr = [[max(v - lo, 0)], [max(hi - v, 0)]]
                xmax = max(xmax, hi)
            ax.errorbar([v], [y], xerr=xerr, fmt="o", color="tab:blue", ms=5, capsize=3,
                        label="this run (median, 95% CI)" if not ax.get_legend_handles_labels()[1].count(
                            "this run (median, 95% CI)") else None)
            xmax = max(xmax, v)
        ax.set_yticks(range(len(rs)))
        ax.set_yticklabels([("%s (%s)" % (r[0], r[7]) if r[2] is None else r[0]) for r in reversed(rs)], fontsize=8)
        ax.set_xlim(0, xmax * 1.15 if xmax > 0 else 1)
        ax.set_ylim(-0.6, len(rs) - 0.4)
        ax.set_xlabel(u)
        ax.grid(True, axis="x", alpha=0.3)
        _legend_outside(ax, 2)
    axes[0][0].set_title("Data sources: this run vs the guide's Table 2")
    fig.tight_layout()
    return _png(fig)


def heatmap_figure(title, labels_from, labels_to, matrix, unit, panels=None, fmt="%.0f", xlabel="to",
                   ylabel="from"):
    """The heat map Figure (heatmap() is its PNG). matrix: rows = from, cols = to, None for missing;
    panels: [(title, matrix)] for several, side by side, each with its own colour bar. Constrained
    layout keeps a colour bar's label clear of the next panel's axis label and tick labels."""
    plt = _pyplot()
    panels = panels or [(title, matrix)]
    fig, axes = plt.subplots(1, len(panels), figsize=(4.6 * len(panels) + 0.6, 4.0), squeeze=False,
                             layout="constrained")
    cmap = plt.get_cmap("viridis").copy()
    cmap.set_bad("#dddddd")
    for ax, (t, m) in zip(axes[0], panels):
        data = [[float("nan") if v is None else v for v in row] for row in m]
        im = ax.imshow(data, cmap=cmap, aspect="auto")
        ax.set_xticks(range(len(labels_to)), [str(x) for x in labels_to])
        ax.set_yticks(range(len(labels_from)), [str(x) for x in labels_from])
        ax.set_xlabel(xlabel)
        ax.set_ylabel(ylabel)
        ax.set_title(t, fontsize=10)
        if len(labels_from) * len(labels_to) <= 64:
            vals = [v for row in m for v in row if v is not None]
            mid = (min(vals) + max(vals)) / 2 if vals else 0
            for i, row in enumerate(m):
                for k, v in enumerate(row):
                    if v is not None:
                        ax.text(k, i, fmt % v, ha="center", va="center", fontsize=7,
                                color="k" if v > mid else "w")
        fig.colorbar(im, ax=ax, label=unit, shrink=0.9)
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
    xmax = max([p[0] for p in pts] + [0.0])
    ax.set_xlim(-0.02 * (xmax or 1.0), None)
    ax.margins(y=0.1)
    ax.set_xlabel("bandwidth of the load generators (GB/s, 10^9 bytes/s)")
    ax.set_ylabel("load-to-use latency (ns)")
    ax.set_title("Loaded latency: latency vs achieved bandwidth (labels: injection delay)", fontsize=10)
    ax.grid(True, alpha=0.3)
    ax.legend(fontsize=8, loc="upper left")
    return fig


def loaded_latency(points, idle_ns=None, idle_label="idle"):
    return _png(loaded_latency_figure(points, idle_ns, idle_label))


def branch_curves_figure(panels, refs=None):
    """One panel per sweep. panels: [(title, xlabel, {series: [(x, cycles, mispredict rate or None)]}, logx)];
    refs: {label: cycles} drawn as horizontal lines in every panel (the predictable and the random
    conditional branch). The mispredict rate, where measured, on a second axis (dotted)."""
    plt = _pyplot()
    refs = refs or {}
    fig, axes = plt.subplots(1, len(panels), figsize=(5.0 * len(panels) + 0.5, 4.2), squeeze=False,
                             layout="constrained")
    ref_style = [("tab:green", ":"), ("tab:red", "--"), ("tab:gray", "-.")]
    for ax, (title, xlabel, series, logx) in zip(axes[0], panels):
        twin = None
        for i, (label, pts) in enumerate(series.items()):
            pts = sorted(pts, key=lambda p: p[0])
            c = "C%d" % i
            ax.plot([p[0] for p in pts], [p[1] for p in pts], marker="o", ms=4, color=c, label=label)
            rates = [(p[0], p[2]) for p in pts if p[2] is not None]
            if rates:
                if twin is None:
                    twin = ax.twinx()
                    twin.set_ylim(-0.02, 1.02)
                    twin.set_ylabel("mispredict rate (dotted)", fontsize=8)
                    twin.tick_params(labelsize=7)
                twin.plot([r[0] for r in rates], [r[1] for r in rates], ls=":", marker=".", color=c, alpha=0.8)
        for (label, y), (col, ls) in zip(refs.items(), ref_style):
            ax.axhline(y, color=col, ls=ls, lw=1, label="%s %.1f" % (label, y))
        if logx:
            ax.set_xscale("log", base=2)
        ax.set_ylim(bottom=0)
        ax.set_xlabel(xlabel)
        ax.set_title(title, fontsize=10)
        ax.grid(True, which="both", alpha=0.3)
        ax.legend(fontsize=7, loc="upper left")
    axes[0][0].set_ylabel("core cycles per branch")
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
            xs = [p[0] for p in band]
            ax.fill_between(xs, [p[2] - p[3] for p in band], [p[2] + p[3] for p in band], step="mid",
                            color="tab:gray", alpha=0.3, lw=0, label="baseline +- tolerance")
            ax.step(xs, [p[2] for p in band], where="mid", color="tab:gray", ls="--", lw=1, label="baseline")
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
