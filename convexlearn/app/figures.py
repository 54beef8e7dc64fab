"""Pictures of a run: the decision boundary of 2-D problems and convergence curves.

matplotlib is an optional dependency (the ``plot`` extra) imported only here, lazily,
through its object-oriented API (no pyplot: no global state, no display needed).

* Boundary panel (2-D features): the samples of both classes, the decision boundary
  f(x) = 0 and the margin lines f(x) = -1, +1 of the exact reference; support vectors
  marked free (0 < alpha_i < C, on the margin) or bounded (alpha_i = C); where the data
  are not separable, the meeting point p of the two convex hulls given by the
  certificate (p = sum_{y=+1} lambda_i x_i = sum_{y=-1} lambda_i x_i).
* Convergence panels (any problem with an iterative method): relative suboptimality
  |F_k - F*| / max(1, |F*|) (the table's gap) against the iteration k and against the wall-clock time, log scale, F* the
  exact optimum. For dual methods F_k is the dual objective, and P* - D_k >= 0 is the
  dual suboptimality (strong duality makes F* the optimum of both).
"""

from __future__ import annotations

import numpy as np

from ..errors import NotApplicableError

__all__ = ["plot_result", "save_figure", "figure_png", "figure_bytes", "plot_format", "FORMATS",
           "make_figure", "plot_boundary",
           "plot_convergence", "PANEL_SIZE", "DPI"]

PANEL_SIZE = (5.0, 4.5)      # inches per panel
DPI = 100
_FLOOR = 1e-16               # suboptimality shown on a log axis: 0 becomes the floor


def require_matplotlib():
    try:
        from matplotlib.backends.backend_agg import FigureCanvasAgg
        from matplotlib.figure import Figure
    except ImportError:
        raise ImportError("plotting needs matplotlib: pip install convexlearn[plot]") from None
    return Figure, FigureCanvasAgg


def can_plot_boundary(result) -> bool:
    """2-D labeled data with a decision function, or a certificate's meeting point."""
    if result.problem.data.X.shape[1] != 2 or result.label_map is None:
        return False
    sep = result.separability
    return result.decision is not None or (sep is not None and not sep.separable)


def iterative_rows(result) -> list:
    return [r for r in result.rows if len(r.history.get("objective", ())) >= 1]


def make_figure(result):
    """A matplotlib Figure with the panels that apply to ``result``.

    Raises
    ------
    NotApplicableError
        When neither panel applies (not 2-D and no iterative method).
    """
    Figure, FigureCanvasAgg = require_matplotlib()
    boundary, curves = can_plot_boundary(result), bool(iterative_rows(result))
    panels = int(boundary) + 2 * int(curves)
    if not panels:
        raise NotApplicableError(
            f"nothing to plot for {result.problem.name}: the boundary needs 2 features "
            f"(it has {result.problem.data.X.shape[1]}) and the convergence curves an "
            f"iterative method (ran: {', '.join(r.method for r in result.rows)})")
    fig = Figure(figsize=(PANEL_SIZE[0] * panels, PANEL_SIZE[1]), dpi=DPI)
    FigureCanvasAgg(fig)
    axes = fig.subplots(1, panels, squeeze=False)[0]
    if boundary:
        plot_boundary(axes[0], result)
    if curves:
        plot_convergence(axes[-2], axes[-1], result)
    fig.suptitle(result.problem.name)
    fig.tight_layout()
    return fig


def plot_boundary(ax, result, grid: int = 200) -> None:
    """Samples, f = 0 and f = +-1 contours, support vectors, meeting point (2-D)."""
    X, y = result.problem.data.X, result.signed_y
    pad = 0.1 * (X.max(axis=0) - X.min(axis=0) + 1e-12)
    lo, hi = X.min(axis=0) - pad, X.max(axis=0) + pad
    gx, gy = np.meshgrid(np.linspace(lo[0], hi[0], grid), np.linspace(lo[1], hi[1], grid))
    if result.decision is not None:
        f = result.decision(np.column_stack([gx.ravel(), gy.ravel()])).reshape(gx.shape)
        ax.contourf(gx, gy, f, levels=[-np.inf, 0, np.inf], colors=["#f4d6d6", "#d6e2f4"],
                    alpha=0.6)
        levels = [-1.0, 0.0, 1.0] if result.margin_lines else [0.0]
        styles = ["--", "-", "--"] if result.margin_lines else ["-"]
        cs = ax.contour(gx, gy, f, levels=levels, colors="k", linestyles=styles,
                        linewidths=1.2)
        cs.set_gid("decision boundary and margins" if result.margin_lines
                   else "decision boundary")
    names = result.class_names
    for sign, color, marker in ((-1, "#c0392b", "o"), (1, "#2e5fa3", "s")):
        ax.scatter(*X[y == sign].T, c=color, marker=marker, s=22, edgecolors="none",
                   label=f"class {names[int(sign > 0)]} (y={sign:+d})")
    free, bounded = result.support_sets
    if free is not None and free.size:
        ax.scatter(*X[free].T, s=130, facecolors="none", edgecolors="#1e8449", linewidths=1.8,
                   label=f"free support vectors ({free.size})")
    if bounded is not None and bounded.size:
        ax.scatter(*X[bounded].T, s=110, facecolors="none", edgecolors="#7d3c98", marker="D",
                   linewidths=1.4, label=f"bounded support vectors ({bounded.size})")
    sep = result.separability
    if sep is not None and not sep.separable and sep.meeting_point is not None:
        ax.scatter(*np.asarray(sep.meeting_point)[:2], s=260, marker="*", c="#f1c40f",
                   edgecolors="k", linewidths=1.0, zorder=5, label="meeting point of the hulls")
    ax.set_xlim(lo[0], hi[0])
    ax.set_ylim(lo[1], hi[1])
    names = result.problem.data.feature_names
    ax.set_xlabel(names[0])
    ax.set_ylabel(names[1])
    if result.decision is None:
        ax.set_title("no separating line: the class hulls meet")
    else:
        ax.set_title("decision boundary f=0" + (", margins f=+-1" if result.margin_lines
                                                  else ""))
    # Below the axes: inside, it would hide samples wherever it went.
    ax.legend(loc="upper center", bbox_to_anchor=(0.5, -0.16), ncol=2, fontsize=7,
              frameon=False)


def plot_convergence(ax_iter, ax_time, result) -> None:
    """Relative suboptimality |F_k - F*| / max(1, |F*|) per iterative method (the table's
    gap) against iterations and time, log scale."""
    from matplotlib.ticker import FormatStrFormatter, LogLocator, NullFormatter
    ref = result.reference
    scale = max(1.0, abs(ref.objective))
    for row in iterative_rows(result):
        h = row.history
        # Subgradient methods are not descent methods: they return (and we plot) the best
        # value so far; the others their current value (dual value for dual methods).
        values, label = (h["best"], f"{row.method} (best so far)") if "best" in h \
            else (h["objective"], row.method)
        sub = np.maximum(np.abs(values - ref.objective) / scale, _FLOOR)
        k = h["iteration"] if "iteration" in h else np.arange(1, sub.size + 1)
        ax_iter.semilogy(k, sub, label=label)
        if "time" in h:
            ax_time.semilogy(np.maximum(h["time"], 1e-7), sub, label=label)
    for ax in (ax_iter, ax_time):          # methods differ by decades in iterations and time
        ax.set_xscale("log")
        ax.xaxis.set_minor_formatter(NullFormatter())     # minor labels overlap
        lo, hi = ax.get_xlim()
        if lo > 0 and hi / lo < 30:
            # Under ~1.5 decades the default log ticks show no label: use 1, 2, 5 x 10^k.
            ax.xaxis.set_major_locator(LogLocator(base=10, subs=(1.0, 2.0, 5.0)))
            ax.xaxis.set_major_formatter(FormatStrFormatter("%g"))
    for ax, xlabel in ((ax_iter, "iteration"), (ax_time, "time (s)")):
        ax.set_xlabel(xlabel + (" (each method's own unit)" if ax is ax_iter else ""))
        ax.set_ylabel("|F_k - F*| / max(1, |F*|)")
        ax.grid(True, which="both", alpha=0.3)
        ax.legend(fontsize=8)
    ax_iter.set_title(f"suboptimality vs iterations (F* = {ref.objective:.8g}, {ref.method})",
                      fontsize=10)
    ax_time.set_title("suboptimality vs time", fontsize=10)


def figure_png(fig) -> bytes:
    """``fig`` rendered as PNG bytes (render before writing anything: see the CLI)."""
    import io
    buffer = io.BytesIO()
    fig.savefig(buffer, format="png", dpi=DPI)
    return buffer.getvalue()


#: The formats ``--plot`` writes, chosen by the file's extension.
FORMATS = ("png", "svg", "pdf")


def plot_format(path) -> str:
    """The format named by ``path``'s extension; ParameterError when not in FORMATS."""
    from pathlib import Path
    from ..errors import ParameterError
    ext = Path(str(path)).suffix.lower().lstrip(".")
    if ext not in FORMATS:
        raise ParameterError(f"--plot {path}: the extension must name the format, one of "
                             f".{', .'.join(FORMATS)}; got {('.' + ext) if ext else 'none'}")
    return ext


def figure_bytes(fig, path) -> bytes:
    """``fig`` rendered in the format of ``path``'s extension (png, svg or pdf)."""
    import io
    buffer = io.BytesIO()
    fig.savefig(buffer, format=plot_format(path), dpi=DPI)
    return buffer.getvalue()


def save_figure(fig, path) -> None:
    """Write ``fig`` to ``path`` in the format its extension names (png, svg, pdf),
    atomically (a staged file, then a rename)."""
    from .report import write_atomic
    write_atomic(path, figure_bytes(fig, path))


def plot_result(result, path) -> object:
    """Draw ``result`` and write it to ``path`` (png, svg or pdf by its extension),
    atomically; return the Figure."""
    from .report import check_writable
    plot_format(path)
    check_writable(path)
    fig = make_figure(result)
    save_figure(fig, path)
    return fig
