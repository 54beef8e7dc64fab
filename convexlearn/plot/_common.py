"""Shared helpers of :mod:`convexlearn.plot`: lazy matplotlib, axes, 2-D checks, colours."""

from __future__ import annotations

import numpy as np

from ..errors import NotApplicableError

#: Colours of the classes y = -1 and y = +1 (colour-blind safe pair), and of the marks.
CLASS_COLORS = {-1: "#c0392b", 1: "#2e5fa3"}
CLASS_MARKERS = {-1: "o", 1: "s"}
FREE_COLOR, BOUNDED_COLOR, CERT_COLOR = "#1e8449", "#7d3c98", "#f1c40f"
#: From this many samples on, points are drawn small and translucent (rasterized in
#: vector formats) so that the density shows instead of a solid blob.
LARGE_N = 1500


def require_matplotlib():
    """``(Figure, FigureCanvasAgg)``; ImportError with the install hint when absent."""
    try:
        from matplotlib.backends.backend_agg import FigureCanvasAgg
        from matplotlib.figure import Figure
    except ImportError:
        raise ImportError("plotting needs matplotlib: pip install convexlearn[plot]") from None
    return Figure, FigureCanvasAgg


def new_axes(ax=None, size=(5.5, 4.8)):
    """``ax`` itself, or the axes of a new Figure (object API: no pyplot global state)."""
    if ax is not None:
        return ax
    Figure, FigureCanvasAgg = require_matplotlib()
    fig = Figure(figsize=size, dpi=100, layout="constrained")   # room for outside legends
    FigureCanvasAgg(fig)
    return fig.add_subplot(1, 1, 1)


def check_2d(X, what: str) -> np.ndarray:
    """X as a float array of shape (n, 2); NotApplicableError naming the need otherwise."""
    if X is None:
        raise NotApplicableError(f"{what} needs the features X (a precomputed kernel has none)")
    X = np.asarray(X, dtype=float)
    if X.ndim != 2 or X.shape[1] != 2:
        d = X.shape[1] if X.ndim == 2 else X.ndim
        raise NotApplicableError(
            f"{what} draws the plane of the data: it needs exactly 2 features (X has {d}); "
            f"project or select 2 features first")
    return X


def frame(X: np.ndarray, pad: float = 0.08, extra=()) -> tuple[np.ndarray, np.ndarray]:
    """Lower and upper corners of a box around the rows of X (and ``extra`` points)."""
    pts = np.vstack([X] + [np.atleast_2d(p) for p in extra])
    lo, hi = pts.min(axis=0), pts.max(axis=0)
    span = np.where(hi - lo > 0, hi - lo, np.maximum(1.0, np.abs(hi)))
    return lo - pad * span, hi + pad * span


def scatter_classes(ax, X: np.ndarray, y: np.ndarray, names, zorder: float = 2) -> list:
    """Both classes; small translucent points from :data:`LARGE_N` samples on."""
    large = X.shape[0] >= LARGE_N
    out = []
    for sign in (-1, 1):
        pts = X[y == sign]
        label = f"class {names[int(sign > 0)]} (y={sign:+d}, {pts.shape[0]})"
        out.append(ax.scatter(pts[:, 0], pts[:, 1], c=CLASS_COLORS[sign],
                              marker=CLASS_MARKERS[sign], s=5 if large else 22,
                              alpha=0.35 if large else 0.9, edgecolors="none",
                              rasterized=large, zorder=zorder, label=label))
    return out


def class_names(label_map) -> list:
    """The two original labels as plain Python values (classes[0] -> -1)."""
    return [c.item() if hasattr(c, "item") else c for c in label_map.classes]


def line_segment(w, b: float, lo, hi):
    """Endpoints of {x : <w, x> + b = 0} clipped to the box [lo, hi]; None if outside."""
    w = np.asarray(w, dtype=float)
    if not np.any(w):
        return None
    # Parametrize along the direction orthogonal to w through the closest point to 0.
    p0 = -b * w / float(w @ w)
    d = np.array([-w[1], w[0]])
    ts = []
    for k in range(2):
        if d[k] != 0:
            ts += [(lo[k] - p0[k]) / d[k], (hi[k] - p0[k]) / d[k]]
    ts = sorted(ts)
    if len(ts) < 2:
        return None
    pts = [p0 + t * d for t in ts]
    inside = [p for p in pts if np.all(p >= lo - 1e-9 * (hi - lo + 1)) and
              np.all(p <= hi + 1e-9 * (hi - lo + 1))]
    if len(inside) < 2:
        return None
    return np.array([inside[0], inside[-1]])


def legend_below(ax, ncol: int = 2) -> None:
    """The legend under the axes: inside, it would hide samples wherever it went."""
    from matplotlib.collections import PathCollection

    legend = ax.legend(loc="upper center", bbox_to_anchor=(0.5, -0.13), ncol=ncol,
                       fontsize=7, frameon=False)
    for handle in legend.legend_handles:   # small translucent points: a visible key
        if isinstance(handle, PathCollection) and len(handle.get_sizes()):
            handle.set_sizes([min(max(handle.get_sizes()[0], 25.0), 120.0)])
            handle.set_alpha(1.0)
