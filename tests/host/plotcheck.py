"""What a plot must not do, checked on the matplotlib Figure after it is laid out (fig.canvas.draw()):
a data point drawn outside its axes (clipped away or past the frame), a legend entry with no drawn
artist behind it, and a legend box over a plotted point. Each check returns a list of readable
problems, empty when the figure is right."""
import math

import numpy as np


def _title(ax):
    return ax.get_title() or ax.get_ylabel() or "axes"


def _display(artist, xy):
    xy = np.asarray(xy, dtype=float).reshape(-1, 2)
    with np.errstate(all="ignore"):
        return artist.get_transform().transform(xy) if len(xy) else xy


def _finite_rows(xy):
    xy = np.asarray(xy, dtype=float).reshape(-1, 2)
    return xy[np.all(np.isfinite(xy), axis=1)]


def _line_xy(line):
    xs = np.asarray(line.get_xdata(orig=False), dtype=float)
    ys = np.asarray(line.get_ydata(orig=False), dtype=float)
    if xs.shape != ys.shape:
        xs, ys = np.broadcast_arrays(xs, ys)
    return _finite_rows(np.column_stack([xs, ys]) if len(xs) else np.zeros((0, 2)))


def _artist_points(ax):
    """[(label, artist, display points)] of what ax draws from data: lines, filled bands and bars."""
    out = []
    for line in ax.lines:
        xy = _line_xy(line)
        out.append((line.get_label(), line, _display(line, xy), xy))
    for coll in ax.collections:
        if hasattr(coll, "get_offsets") and len(coll.get_offsets()) and not coll.get_paths() == []:
            off = _finite_rows(coll.get_offsets())
            if type(coll).__name__ == "PathCollection":
                out.append((coll.get_label(), coll, coll.get_offset_transform().transform(off) if len(off) else off, off))
                continue
        verts = [p.vertices for p in coll.get_paths() if len(p.vertices)]
        xy = _finite_rows(np.concatenate(verts)) if verts else np.zeros((0, 2))
        out.append((coll.get_label(), coll, _display(coll, xy), xy))
    for patch in ax.patches:
        if type(patch).__name__ != "Rectangle":
            continue
        x, y, w, h = patch.get_x(), patch.get_y(), patch.get_width(), patch.get_height()
        xy = np.array([[x, y], [x + w, y + h]], dtype=float)
        with np.errstate(all="ignore"):      # a patch's own transform maps its unit square: use the data one
            out.append((patch.get_label(), patch, patch.get_data_transform().transform(xy), xy))
    return out


def _data_axes(fig):
    """The axes that plot data (colour bars are axes too: they are skipped)."""
    return [ax for ax in fig.axes if ax.get_visible() and not hasattr(ax, "_colorbar")
            and getattr(ax, "get_label", lambda: "")() != "<colorbar>"]


def outside_points(fig, tol=1.5):
    """Every plotted value that lies outside its axes: [(axes, artist label, data x, data y)]."""
    fig.canvas.draw()
    bad = []
    for ax in _data_axes(fig):
        box = ax.get_window_extent()
        for label, _artist, disp, data in _artist_points(ax):
            for (dx, dy), (x, y) in zip(disp, data):
                if not (math.isfinite(dx) and math.isfinite(dy)) or not (
                        box.x0 - tol <= dx <= box.x1 + tol and box.y0 - tol <= dy <= box.y1 + tol):
                    bad.append((_title(ax), label, float(x), float(y)))
    return bad


def _has_data(artist):
    name = type(artist).__name__
    if name == "Line2D":
        return artist.get_visible() and len(_line_xy(artist)) > 0
    if hasattr(artist, "get_paths") and name != "Line2D":
        return artist.get_visible() and any(len(p.vertices) for p in artist.get_paths())
    if name == "Rectangle":
        return artist.get_visible() and artist.get_width() != 0 and artist.get_height() != 0
    if hasattr(artist, "lines"):            # an errorbar container
        return any(_has_data(a) for a in artist.lines if a is not None and not isinstance(a, tuple))
    if hasattr(artist, "patches"):          # a bar container
        return any(_has_data(a) for a in artist.patches)
    return artist.get_visible()


def _legends(fig):
    out = [(ax, ax.get_legend()) for ax in fig.axes if ax.get_legend() is not None]
    return out + [(None, leg) for leg in fig.legends]


def legend_without_artist(fig):
    """Legend entries that name nothing drawn: [(legend owner, entry text)]."""
    drawn = {}
    for ax in fig.axes:
        for a in list(ax.lines) + list(ax.collections) + list(ax.patches) + list(ax.containers):
            if _has_data(a):
                drawn.setdefault(a.get_label(), []).append(a)
    bad = []
    for ax, leg in _legends(fig):
        for t in leg.get_texts():
            if t.get_text() not in drawn:
                bad.append((_title(ax) if ax is not None else "figure", t.get_text()))
    return bad


def legend_over_points(fig):
    """Plotted markers under a legend box: [(legend owner, artist label, x, y)]."""
    fig.canvas.draw()
    bad = []
    for owner, leg in _legends(fig):
        lb = leg.get_window_extent()
        for ax in _data_axes(fig):
            for line in ax.lines:
                if line.get_marker() in (None, "None", "", " ") or not line.get_visible():
                    continue
                xy = _line_xy(line)
                for (dx, dy), (x, y) in zip(_display(line, xy), xy):
                    if lb.x0 < dx < lb.x1 and lb.y0 < dy < lb.y1:
                        bad.append((_title(owner) if owner is not None else "figure", line.get_label(), x, y))
    return bad


def problems(fig):
    return {"outside": outside_points(fig), "legend_without_artist": legend_without_artist(fig),
            "legend_over_points": legend_over_points(fig)}
