"""``plot_separability`` and ``plot_shattering``: separability of 2-D labeled points."""

from __future__ import annotations

import itertools

from collections.abc import Sequence
from typing import TYPE_CHECKING

import numpy as np
from numpy.typing import ArrayLike

from ..errors import ConvexLearnError
from ._common import (CERT_COLOR, CLASS_COLORS, FREE_COLOR, check_2d, class_names, frame,
                      legend_below, line_segment, new_axes, scatter_classes)

if TYPE_CHECKING:
    from matplotlib.axes import Axes

    from ..halfspace import Halfspace, SeparabilityResult

__all__ = ["plot_separability", "plot_shattering", "maximal_margin_hyperplane"]

#: Certificate weights at or below this fraction of the largest count as zero.
_LAMBDA_ZERO = 1e-9
#: At most this many lambda values are written next to their points.
_MAX_LABELS = 12


def maximal_margin_hyperplane(X: ArrayLike, y: ArrayLike, homogeneous: bool = False
                              ) -> tuple[np.ndarray, float, np.ndarray]:
    """``(w, b, support)`` of the hard-margin SVM min 1/2 ||w||^2 s.t. y_i f(x_i) >= 1.

    Solved on ``(X - c) / m`` (c the column midrange, 0 when homogeneous; m the largest
    |x_ij - c_j|), whose solution is ``(m w, b + <w, c>)``, and mapped back, as
    :class:`~convexlearn.halfspace.Halfspace` does for its margin: the exact solvers'
    tolerances are absolute, the data's units are not. The geometric margin is
    ``1 / ||w||``; ``support`` are the samples with alpha_i > 0 (on the margins).

    Raises
    ------
    InfeasibleError
        The classes are not linearly separable.
    """
    from ..certify.separability import midrange
    from ..svm import SVM

    X = np.asarray(X, dtype=float)
    c = np.zeros(X.shape[1]) if homogeneous else midrange(X)
    m = float(np.max(np.abs(X - c))) or 1.0
    sol = SVM((X - c) / m, y, C=None, intercept=not homogeneous).solve()
    w = np.asarray(sol.w, dtype=float) / m
    b = 0.0 if homogeneous else float(sol.b) - float(w @ c)
    return w, b, np.asarray(sol.report.support, int)


def _hull_polygon(P: np.ndarray) -> np.ndarray:
    """Vertices of the convex hull of the rows of P, in order (a segment or a point
    when the points are collinear or fewer than 3)."""
    from scipy.spatial import ConvexHull, QhullError

    unique = np.unique(P, axis=0)
    if unique.shape[0] >= 3:
        try:
            return unique[ConvexHull(unique).vertices]
        except QhullError:          # collinear: the hull is a segment
            pass
    if unique.shape[0] == 1:
        return unique
    direction = unique[-1] - unique[0]
    t = (unique - unique[0]) @ direction
    return unique[[int(np.argmin(t)), int(np.argmax(t))]]


def _draw_hulls(ax, X, y, alpha: float) -> None:
    from matplotlib.colors import to_rgba
    from matplotlib.patches import Polygon

    for sign in (-1, 1):
        vertices = _hull_polygon(X[y == sign])
        # Solid edge, translucent face: a hull that is a segment (collinear points)
        # must still show.
        patch = Polygon(vertices, closed=True, facecolor=to_rgba(CLASS_COLORS[sign], alpha),
                        edgecolor=CLASS_COLORS[sign], linewidth=1.5, zorder=1,
                        label=f"convex hull of y={sign:+d}")
        patch.set_gid(f"hull {sign:+d}")
        ax.add_patch(patch)


def _separable(ax, hs, result, lo, hi) -> str:
    X, y = hs.X, hs.y
    w, b, support = maximal_margin_hyperplane(X, y, hs.homogeneous)
    gx, gy = np.meshgrid(np.linspace(lo[0], hi[0], 300), np.linspace(lo[1], hi[1], 300))
    f = gx * w[0] + gy * w[1] + b
    ax.contourf(gx, gy, f, levels=[-1.0, 1.0], colors=["#cccccc"], alpha=0.45, zorder=0)
    boundary = ax.contour(gx, gy, f, levels=[0.0], colors="k", linewidths=1.6, zorder=3)
    boundary.set_gid("maximal-margin hyperplane")
    band = ax.contour(gx, gy, f, levels=[-1.0, 1.0], colors="k", linestyles="--",
                      linewidths=1.0, zorder=3)
    band.set_gid("margins")
    ax.plot([], [], "k-", label="maximal-margin hyperplane f = 0")
    ax.plot([], [], "k--", label="margins f = +-1")
    ax.scatter(X[support, 0], X[support, 1], s=120, facecolors="none", edgecolors=FREE_COLOR,
               linewidths=1.8, zorder=5, label=f"support vectors ({support.size}, on the margins)")
    margin = 1.0 / float(np.linalg.norm(w))
    reported = "" if result.margin is None else f" (reported {result.margin:.6g})"
    return f"separable: maximal margin 1/||w*|| = {margin:.6g}{reported}"


def _not_separable(ax, hs, result, lo, hi) -> str:
    X, y = hs.X, hs.y
    lam = np.asarray(result.certificate, dtype=float)
    p = np.asarray(result.meeting_point, dtype=float)
    used = np.flatnonzero(lam > _LAMBDA_ZERO * lam.max())
    for i in used:                  # p is a convex combination of each class's points
        ax.plot([X[i, 0], p[0]], [X[i, 1], p[1]], ":", color=CLASS_COLORS[int(y[i])],
                linewidth=1.0, zorder=3)
    if hs.homogeneous:
        ax.scatter([0.0], [0.0], marker="+", s=120, c="k", zorder=5, label="origin")
        for i in used:              # the cones: rays from 0 through the certificate points
            ax.plot([0.0, X[i, 0]], [0.0, X[i, 1]], "-", color=CLASS_COLORS[int(y[i])],
                    alpha=0.4, linewidth=1.0, zorder=1)
    sizes = 40.0 + 260.0 * lam[used] / lam[used].max()
    cert = ax.scatter(X[used, 0], X[used, 1], s=sizes, facecolors="none", edgecolors="k",
                      linewidths=1.5, zorder=5,
                      label=f"certificate points ({used.size}, size ~ lambda_i)")
    cert.set_gid("certificate points")
    for i in used[np.argsort(-lam[used])][:_MAX_LABELS]:
        ax.annotate(f"\u03bb={lam[i]:.3g}", X[i], xytext=(8, 6), textcoords="offset points",
                    fontsize=7, zorder=7,
                    bbox=dict(boxstyle="round,pad=0.15", fc="white", ec="none", alpha=0.8))
    star = ax.scatter([p[0]], [p[1]], marker="*", s=280, c=CERT_COLOR, edgecolors="k",
                      linewidths=1.0, zorder=6,
                      label="meeting point p = sum lambda_i x_i (each class)")
    star.set_gid("meeting point")
    where = "cones" if hs.homogeneous else "hulls"
    return f"not separable: the convex {where} meet (lambda certificate)"


def plot_separability(halfspace: Halfspace, result: SeparabilityResult,
                      ax: Axes | None = None, *, hulls: bool = True,
                      feature_names: Sequence[str] = ("x1", "x2")) -> Axes:
    """Draw the proof of a separability verdict in the plane.

    Separable: the hyperplane of *maximal* margin, i.e. the hard-margin SVM
    min 1/2 ||w||^2 s.t. y_i (<w, x_i> + b) >= 1 (not the LP's feasible (w, b), which is
    any separating line), its margins f = +-1 with the band between them shaded, and its
    support vectors; the geometric margin 1/||w*|| is in the title next to the result's
    ``margin``. Not separable: the convex hulls of both classes (affine case), the
    certificate's points x_i with lambda_i > 0 (marker area proportional to lambda_i,
    the largest weights written next to them), dotted segments from them to the meeting
    point p = sum_{y=+1} lambda_i x_i = sum_{y=-1} lambda_i x_i (a yellow star) that
    both hulls contain. Homogeneous problems: rays from the origin instead of hulls.

    Parameters
    ----------
    halfspace : Halfspace
        The problem (``X`` of shape (n, 2)).
    result : SeparabilityResult
        ``halfspace.check()``.
    ax : matplotlib Axes, optional
    hulls : bool
        Draw the convex hulls of both classes (affine problems).
    feature_names : pair of str

    Returns
    -------
    matplotlib Axes
        ``ax``; hull patches carry the gids "hull -1" and "hull +1", the certificate's
        scatter "certificate points", the star "meeting point".

    Raises
    ------
    NotApplicableError
        Not 2 features.
    InfeasibleError
        ``result`` says separable but the hard-margin SVM is infeasible (it is not).
    """
    X = check_2d(halfspace.X, "plot_separability")
    y = np.asarray(halfspace.y, dtype=float)
    ax = new_axes(ax)
    extra = [np.zeros(2)] if halfspace.homogeneous else []
    if not result.separable:
        extra.append(np.asarray(result.meeting_point, dtype=float))
    lo, hi = frame(X, extra=extra)
    if hulls and not halfspace.homogeneous:
        _draw_hulls(ax, X, y, alpha=0.12 if result.separable else 0.22)
    scatter_classes(ax, X, y, class_names(halfspace.label_map))
    if result.separable:
        title = _separable(ax, halfspace, result, lo, hi)
    else:
        title = _not_separable(ax, halfspace, result, lo, hi)
    ax.set_xlim(lo[0], hi[0])
    ax.set_ylim(lo[1], hi[1])
    ax.set_xlabel(str(feature_names[0]))
    ax.set_ylabel(str(feature_names[1]))
    ax.set_title(title, fontsize=9)
    legend_below(ax)
    return ax


def plot_shattering(points: ArrayLike, homogeneous: bool = False, ax: Axes | None = None, *,
                    method: str = "lp") -> Axes:
    """Do (affine or homogeneous) halfspaces shatter these points of the plane? Draw why.

    Not shattered: the labeling no halfspace realizes (from
    :func:`~convexlearn.shattering.unrealizable_labeling`) drawn as by
    :func:`plot_separability`: both hulls and the certificate's meeting point.
    Shattered: the points, numbered, and for every labeling with both signs and
    ``y_0 = +1`` (the opposite labeling is the same line with the sides swapped) the
    maximal-margin line that realizes it.

    Parameters
    ----------
    points : array_like of shape (m, 2)
    homogeneous : bool
        Halfspaces through the origin.
    ax : matplotlib Axes, optional
    method : {"lp", "algebra"}
        The decider of :func:`~convexlearn.shattering.unrealizable_labeling`.

    Returns
    -------
    matplotlib Axes

    Raises
    ------
    NotApplicableError
        The points are not in the plane (2 coordinates).
    """
    from ..halfspace import Halfspace
    from ..shattering import unrealizable_labeling

    P = check_2d(points, "plot_shattering")
    ax = new_axes(ax)
    witness = unrealizable_labeling(P, homogeneous, method=method)
    kind = "homogeneous" if homogeneous else "affine"
    if witness is not None and np.unique(witness).size == 2:
        try:
            hs = Halfspace(P, witness.astype(int), intercept=not homogeneous)
            plot_separability(hs, hs.check(), ax)
            labels = "[" + ", ".join(f"{int(v):+d}" for v in witness) + "]"
            ax.set_title(f"not shattered by {kind} halfspaces: y = {labels} is not "
                         f"realizable", fontsize=9)
            ax.set_aspect("equal", adjustable="box")
            return ax
        except ConvexLearnError:    # e.g. the zero vector (homogeneous): drawn below
            pass
    lo, hi = frame(P, pad=0.25, extra=[np.zeros(2)] if homogeneous else [])
    ax.scatter(P[:, 0], P[:, 1], s=60, c="k", zorder=4, label=f"points ({P.shape[0]})")
    for i, point in enumerate(P):
        ax.annotate(str(i), point, xytext=(6, 6), textcoords="offset points", fontsize=9)
    if witness is None:
        palette = ["#1b9e77", "#d95f02", "#7570b3", "#e7298a", "#66a61e", "#e6ab02"]
        tails = itertools.product((1.0, -1.0), repeat=P.shape[0] - 1)
        drawn = 0
        for tail in tails:
            labels = np.array((1.0,) + tail)
            if np.unique(labels).size < 2 or drawn >= 16:
                continue
            w, b, _ = maximal_margin_hyperplane(P, labels, homogeneous)
            seg = line_segment(w, b, lo, hi)
            if seg is not None:
                ax.plot(seg[:, 0], seg[:, 1], color=palette[drawn % len(palette)],
                        linewidth=1.2, label="y = [" + ", ".join(f"{int(v):+d}" for v in labels)
                        + "]")
                drawn += 1
        title = f"shattered by {kind} halfspaces: a line for every labeling"
    else:
        title = f"not shattered by {kind} halfspaces (y = {witness.astype(int).tolist()})"
    ax.set_xlim(lo[0], hi[0])
    ax.set_ylim(lo[1], hi[1])
    ax.set_title(title, fontsize=9)
    ax.set_xlabel("x1")
    ax.set_ylabel("x2")
    ax.set_aspect("equal", adjustable="box")
    legend_below(ax)
    return ax
