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


def latency_vs_size(series, cpuid_levels, inferred_levels, ylabel="ns"):
    """series: {label: [(bytes, value)]}; *_levels: [(level, bytes)] drawn as vertical lines."""
    plt = _pyplot()
    fig, ax = plt.subplots(figsize=(8, 4.5))
    for label, pts in series.items():
        pts = sorted(pts)
        ax.plot([p[0] for p in pts], [p[1] for p in pts], marker="o", ms=3, label=label)
    ax.set_xscale("log", base=2)
    ax.set_yscale("log")
    ymin, ymax = ax.get_ylim()
    for lvl, b in cpuid_levels:
        ax.axvline(b, color="tab:gray", ls="-", lw=4, alpha=0.35)
        ax.text(b, ymax, " L%s CPUID" % lvl, rotation=90, va="top", ha="right", fontsize=7, color="tab:gray")
    for lvl, b in inferred_levels:
        ax.axvline(b, color="tab:red", ls="--", lw=1)
        ax.text(b, ymin, " L%s inferred" % lvl, rotation=90, va="bottom", ha="left", fontsize=7, color="tab:red")
    ax.set_xlabel("working set (bytes)")
    ax.set_ylabel("load-to-use latency (%s)" % ylabel)
    ax.set_title("Latency vs working-set size")
    ax.grid(True, which="both", alpha=0.3)
    ax.xaxis.set_major_formatter(plt.FuncFormatter(lambda v, _p: human_bytes(v)))
    if series:
        ax.legend(fontsize=8)
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
    if series:
        ax.legend(fontsize=8)
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
