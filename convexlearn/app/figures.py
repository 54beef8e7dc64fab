"""Pictures of a run (``convexlearn solve --plot OUT``), drawn by :mod:`convexlearn.plot`.

One figure, one panel per view that applies to the problem:

* the plane of the data (2 features only): the decision function, margins and support
  vectors of an SVM or a classification ERM (:func:`~convexlearn.plot.plot_decision`);
  the maximal-margin hyperplane or the hulls and certificate of a halfspace problem, and
  of an SVM whose file asks for the separability verdict when the classes are not
  separable (:func:`~convexlearn.plot.plot_separability`); the labelings of a
  shattering problem (:func:`~convexlearn.plot.plot_shattering`);
* two convergence panels when an iterative method ran: relative suboptimality
  |F_k - F*| / |F*| against iterations and against time, F* the certified exact
  reference of the run (:func:`~convexlearn.plot.plot_convergence`).

The file format is the one the output's extension names: .png, .svg or .pdf.
"""

from __future__ import annotations

from typing import Any

import io
from pathlib import Path

from ..errors import NotApplicableError, ParameterError
from ..plot._common import require_matplotlib

__all__ = ["plot_result", "save_figure", "figure_bytes", "figure_png", "make_figure",
           "plot_panels", "check_plot_path", "check_plottable", "FORMATS", "PANEL_SIZE", "DPI"]

PANEL_SIZE = (5.0, 4.5)      # inches per panel
DPI = 100
#: Output formats, by file extension.
FORMATS = {".png": "png", ".svg": "svg", ".pdf": "pdf"}
# No creation date in vector files: the same run writes the same bytes.
_METADATA = {"svg": {"Date": None}, "pdf": {"CreationDate": None}}


def check_plot_path(path: Any) -> str:
    """The format named by the extension of ``path``; ParameterError for any other."""
    suffix = Path(str(path)).suffix.lower()
    if suffix not in FORMATS:
        raise ParameterError(f"--plot {path}: the extension must name the format; accepted: "
                             f"{', '.join(FORMATS)}; got {suffix or 'no extension'}")
    return FORMATS[suffix]


def _plane_view(problem) -> str | None:
    """Which view of the plane applies: "decision", "halfspace", "shattering" or None."""
    from .adapters import adapter_for

    if problem.data.X.shape[1] != 2:
        return None
    kind = problem.kind
    if kind in ("halfspace", "shattering"):
        return kind
    if kind == "svm" and problem.model.get("kernel") != "precomputed":
        return "decision"
    if kind == "erm" and adapter_for(kind).task(problem.model) == "classification":
        return "decision"
    return None


def _iterative(methods) -> bool:
    return any(not m.startswith("exact") and m not in ("lp", "algebra", "closed-form")
               for m in methods)


def check_plottable(problem: Any, methods: Any) -> None:
    """Raise NotApplicableError before solving when no panel would apply.

    A panel needs 2 features of a classification, halfspace or shattering problem, or
    an iterative method among ``methods``.
    """
    if _plane_view(problem) is None and not _iterative(methods):
        d = problem.data.X.shape[1]
        plane = (f"it has {d} features" if d != 2 else
                 f"a {problem.kind} problem with real targets has no classes to draw")
        raise NotApplicableError(
            f"--plot: nothing to plot for {problem.name}: the plane of the data needs 2 "
            f"features of a classification, halfspace or shattering problem ({plane}) and "
            f"the convergence curves an iterative method (methods: {', '.join(methods)})")


def _iterative_solutions(result) -> dict:
    return {m: s for m, s in result.solutions.items() if len(getattr(s, "history", ()))}


def plot_panels(result: Any) -> list[str]:
    """The panels ``make_figure`` draws for ``result``, in order."""
    panels = []
    view = _plane_view(result.problem)
    if view == "decision":
        panels.append("decision")
        sep = result.separability
        if sep is not None and not sep.separable:
            panels.append("separability")
    elif view is not None:
        panels.append(view)
    if _iterative_solutions(result):
        panels += ["convergence-iteration", "convergence-time"]
    return panels


def make_figure(result: Any) -> Any:
    """A matplotlib Figure with the panels that apply to ``result`` (:func:`plot_panels`).

    Raises
    ------
    NotApplicableError
        When no panel applies (not 2-D and no iterative method).
    """
    from ..halfspace import Halfspace
    from ..plot import (plot_convergence, plot_decision, plot_separability,
                        plot_shattering)

    panels = plot_panels(result)
    if not panels:
        check_plottable(result.problem, [row.method for row in result.rows])
    Figure, FigureCanvasAgg = require_matplotlib()
    fig = Figure(figsize=(PANEL_SIZE[0] * len(panels), PANEL_SIZE[1] + 0.6), dpi=DPI,
                 layout="constrained")
    FigureCanvasAgg(fig)
    axes = dict(zip(panels, fig.subplots(1, len(panels), squeeze=False)[0]))
    data, ref_row = result.problem.data, result.reference
    names = data.feature_names[:2]
    ref = result.solutions.get(ref_row.method) if ref_row is not None else None
    if "decision" in axes:
        plot_decision(result.model, ref, axes["decision"], feature_names=names)
    if "separability" in axes or "halfspace" in axes:
        sep = result.separability
        hs = Halfspace(data.X, data.y, intercept=not sep.homogeneous)
        plot_separability(hs, sep, axes.get("separability", axes.get("halfspace")),
                          feature_names=names)
    if "shattering" in axes:
        plot_shattering(data.X, not result.problem.model["intercept"], axes["shattering"])
    if "convergence-iteration" in axes:
        sols = _iterative_solutions(result)
        for x in ("iteration", "time"):
            plot_convergence(result.model, sols, axes[f"convergence-{x}"], x=x,
                             reference=ref, tol=result.tol)
    fig.suptitle(result.problem.name)
    return fig


def figure_bytes(fig: Any, path: Any) -> bytes:
    """``fig`` rendered in the format ``path``'s extension names (png, svg, pdf).

    Rendered in memory before anything is written (the CLI writes all outputs or none).
    """
    fmt = check_plot_path(path)
    buffer = io.BytesIO()
    fig.savefig(buffer, format=fmt, dpi=DPI, metadata=_METADATA.get(fmt))
    return buffer.getvalue()


def figure_png(fig: Any) -> bytes:
    """``fig`` as PNG bytes (:func:`figure_bytes` with a .png name)."""
    return figure_bytes(fig, "figure.png")


def save_figure(fig: Any, path: Any) -> None:
    """Write ``fig`` to ``path`` in the format of its extension, atomically."""
    from .report import write_atomic
    write_atomic(path, figure_bytes(fig, path))


def plot_result(result: Any, path: Any) -> object:
    """Draw ``result`` and write it to ``path`` (png, svg or pdf), atomically; return the
    Figure."""
    from .report import check_writable
    check_plot_path(path)
    check_writable(path)
    fig = make_figure(result)
    save_figure(fig, path)
    return fig
