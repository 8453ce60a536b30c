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


def heatmap(title, labels_from, labels_to, matrix, unit, panels=None):
    """matrix: rows = from, cols = to, None for missing. panels: [(title, matrix)] for several."""
    plt = _pyplot()
    panels = panels or [(title, matrix)]
    fig, axes = plt.subplots(1, len(panels), figsize=(4.2 * len(panels) + 1, 3.8), squeeze=False)
    for ax, (t, m) in zip(axes[0], panels):
        data = [[float("nan") if v is None else v for v in row] for row in m]
        im = ax.imshow(data, cmap="viridis", aspect="auto")
        ax.set_xticks(range(len(labels_to)), [str(x) for x in labels_to])
        ax.set_yticks(range(len(labels_from)), [str(x) for x in labels_from])
        ax.set_xlabel("to")
        ax.set_ylabel("from")
        ax.set_title(t)
        if len(labels_from) * len(labels_to) <= 64:
            for i, row in enumerate(m):
                for k, v in enumerate(row):
                    if v is not None:
                        ax.text(k, i, "%.0f" % v, ha="center", va="center", fontsize=7, color="w")
        fig.colorbar(im, ax=ax, label=unit)
    return _png(fig)


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


def trend(title, series, ylabel):
    """series: {figure name: [(run index, value, baseline or None)]}."""
    plt = _pyplot()
    fig, ax = plt.subplots(figsize=(8, 4))
    for label, pts in series.items():
        ax.plot([p[0] for p in pts], [p[1] for p in pts], marker="o", ms=4, label=label)
    ax.set_xlabel("run id")
    ax.xaxis.set_major_locator(plt.MaxNLocator(integer=True))
    ax.set_ylabel(ylabel)
    ax.set_title(title)
    ax.grid(True, alpha=0.3)
    if series:
        ax.legend(fontsize=7)
    return _png(fig)


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
