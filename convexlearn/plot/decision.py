"""``plot_decision``: the decision function of a fitted 2-D classifier."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

import numpy as np

from ..errors import NotApplicableError
from ._common import (BOUNDED_COLOR, FREE_COLOR, LARGE_N, check_2d, class_names, frame,
                      legend_below, new_axes, scatter_classes)

if TYPE_CHECKING:
    from matplotlib.axes import Axes

    from ..erm import ERM
    from ..solution import Solution
    from ..svm import SVM

__all__ = ["plot_decision", "decision_grid"]

#: Largest kernel block (grid points x training samples) evaluated at once.
_BLOCK = 4_000_000


def decision_grid(problem: SVM | ERM, solution: Solution, lo: np.ndarray, hi: np.ndarray,
                  grid: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """``(gx, gy, f)``: f = ``problem.decision_function(solution, .)`` on a grid x grid
    mesh of the box [lo, hi], evaluated in blocks so that a kernel expansion over many
    samples never builds one huge kernel matrix."""
    gx, gy = np.meshgrid(np.linspace(lo[0], hi[0], grid), np.linspace(lo[1], hi[1], grid))
    Z = np.column_stack([gx.ravel(), gy.ravel()])
    f_of = _expansion_on_support(problem, solution)
    if f_of is None:
        def f_of(block):
            return problem.decision_function(solution, block)
        width = problem.X.shape[0]
    else:
        width = f_of.width
    step = max(256, _BLOCK // max(1, width))
    f = np.concatenate([f_of(Z[i:i + step]) for i in range(0, Z.shape[0], step)])
    return gx, gy, f.reshape(gx.shape)


def _expansion_on_support(problem, solution):
    """f(z) = sum_{beta_i != 0} beta_i k(x_i, z) + b for a kernel SVM solution: only the
    support vectors enter (beta = ``dual_coef``, else y * alpha), which is what makes a
    grid over thousands of samples cheap. None when f is not such an expansion."""
    kernel = getattr(problem, "kernel", None)
    if kernel is None or kernel.is_linear or not hasattr(problem, "kkt"):
        return None
    if solution.dual_coef is not None:
        beta = np.asarray(solution.dual_coef, dtype=float)
    elif solution.alpha is not None:
        beta = np.asarray(problem.y, dtype=float) * np.asarray(solution.alpha, dtype=float)
    else:
        return None
    support = np.flatnonzero(beta)
    Xs, bs, b = problem.X[support], beta[support], float(solution.b)

    def f(block):
        return kernel(block, Xs) @ bs + b
    f.width = max(1, support.size)
    return f


def _support_sets(problem, solution):
    """(free, bounded) indices of an SVM solution; (None, None) for other problems."""
    if not hasattr(problem, "kkt"):
        return None, None
    report = solution.report
    if not (hasattr(report, "free") and hasattr(report, "bounded")):
        report = problem.kkt(solution)
    return np.asarray(report.free, int), np.asarray(report.bounded, int)


def plot_decision(problem: SVM | ERM, solution: Solution, ax: Axes | None = None, *,
                  grid: int | None = None, margins: bool | None = None,
                  support: bool = True, feature_names: Sequence[str] = ("x1", "x2")) -> Axes:
    """Draw the decision function f of a 2-D classifier: f = 0, f = +-1, support vectors.

    The plane is filled by the value of f (a diverging scale clipped at |f| = 2: red
    where f < 0, i.e. class y = -1, blue where f > 0), with the boundary f(x) = 0 as a
    solid line and, for an SVM, the margins f(x) = -1 and f(x) = +1 dashed. Kernel
    problems work the same way: f is evaluated on a grid,
    f(x) = sum_i alpha_i y_i k(x_i, x) + b. Support vectors (alpha_i > 0, from the KKT
    report of the solution) are ringed: free ones (0 < alpha_i < C, on the margin
    y_i f(x_i) = 1) in green, bounded ones (alpha_i = C, y_i f(x_i) <= 1) in purple.
    From :data:`~convexlearn.plot._common.LARGE_N` samples on the points are drawn small
    and translucent (density shows instead of a blob; rasterized in svg/pdf) and the
    support vectors with thin marks on top.

    Parameters
    ----------
    problem : SVM or ERM
        A classification problem with 2 features (``problem.X`` of shape (n, 2)) and a
        ``decision_function(solution, X)``.
    solution : Solution
        Its solution (any method).
    ax : matplotlib Axes, optional
        Where to draw; a new Figure is made when None.
    grid : int, optional
        Grid points per axis for f (default 300; 200 for kernel expansions over more than
        2000 samples).
    margins : bool, optional
        Draw f = +-1 (default: for an SVM, whose margins they are).
    support : bool
        Ring the support vectors (SVM only).
    feature_names : pair of str
        Axis labels.

    Returns
    -------
    matplotlib Axes
        ``ax``. The contour sets carry the gids "decision boundary" and "margins".

    Raises
    ------
    NotApplicableError
        Not 2 features, a precomputed kernel, or a regression problem (no classes).
    """
    what = "plot_decision"
    label_map = getattr(problem, "label_map", None)
    if label_map is None:
        raise NotApplicableError(f"{what} needs a classification problem (two classes); "
                                 f"{type(problem).__name__} has real targets")
    X = check_2d(getattr(problem, "X", None), what)
    y = np.asarray(problem.y, dtype=float)
    is_svm = hasattr(problem, "kkt")
    margins = is_svm if margins is None else bool(margins)
    kernel = getattr(problem, "kernel", None)
    expansion = kernel is not None and not kernel.is_linear
    if grid is None:
        grid = 200 if expansion and X.shape[0] > 2000 else 300
    ax = new_axes(ax)
    lo, hi = frame(X)
    gx, gy, f = decision_grid(problem, solution, lo, hi, grid)
    # Clipped at |f| = 2 and drawn with a norm of +-3: the far regions stay light
    # enough for the points of the same colour on them.
    fill = ax.contourf(gx, gy, np.clip(f, -2.0, 2.0), levels=np.linspace(-2.0, 2.0, 17),
                       cmap="RdBu", vmin=-3.0, vmax=3.0, alpha=0.35, zorder=0)
    fill.set_rasterized(True)      # a field, not lines: svg/pdf stay small
    boundary = ax.contour(gx, gy, f, levels=[0.0], colors="k", linewidths=1.6, zorder=3)
    boundary.set_gid("decision boundary")
    if margins:
        band = ax.contour(gx, gy, f, levels=[-1.0, 1.0], colors="k", linestyles="--",
                          linewidths=1.0, zorder=3)
        band.set_gid("margins")
    scatter_classes(ax, X, y, class_names(label_map))
    if support and is_svm:
        free, bounded = _support_sets(problem, solution)
        large = X.shape[0] >= LARGE_N
        if bounded.size:
            # Many bounded SVs crowd the overlap of the classes: thin small marks
            # there, so the samples under them still show.
            ax.scatter(X[bounded, 0], X[bounded, 1], s=8 if large else 60, marker="D",
                       facecolors="none", edgecolors=BOUNDED_COLOR,
                       linewidths=0.4 if large else 1.2, alpha=0.6 if large else 1.0,
                       zorder=4, rasterized=large,
                       label=f"bounded support vectors ({bounded.size}, alpha = C)")
        if free.size:
            ax.scatter(X[free, 0], X[free, 1], s=40 if large else 110, facecolors="none",
                       edgecolors=FREE_COLOR, linewidths=1.0 if large else 1.8, zorder=5,
                       label=f"free support vectors ({free.size}, on the margin)")
    ax.plot([], [], "k-", label="f(x) = 0")
    if margins:
        ax.plot([], [], "k--", label="f(x) = -1, +1 (margins)")
    ax.set_xlim(lo[0], hi[0])
    ax.set_ylim(lo[1], hi[1])
    ax.set_xlabel(str(feature_names[0]))
    ax.set_ylabel(str(feature_names[1]))
    describe = getattr(problem, "describe", None)
    ax.set_title(describe() if describe else type(problem).__name__, fontsize=9)
    legend_below(ax)
    return ax
