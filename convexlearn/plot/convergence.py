"""``plot_convergence`` and ``plot_path``: iterative methods and regularization paths."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

import numpy as np

from ..errors import NotApplicableError, ParameterError
from ._common import new_axes

if TYPE_CHECKING:
    from matplotlib.axes import Axes

    from ..erm import ERM
    from ..solution import Solution
    from ..svm import SVM

__all__ = ["plot_convergence", "plot_path", "optimal_value", "path_points"]

#: Smallest relative suboptimality shown (0 is drawn there: a log axis has no 0).
FLOOR = 1e-16


def optimal_value(problem: SVM | ERM, reference: Solution | float | None = None
                  ) -> tuple[float, str]:
    """``(F*, where it comes from)``: ``reference`` (a Solution or a number), else the
    problem's exact solution ``problem.solve()``, which must be certified ("optimal")."""
    if reference is not None:
        if isinstance(reference, (int, float)) and not isinstance(reference, bool):
            return float(reference), "given"
        return float(reference.objective), _source(reference)
    sol = problem.solve()           # the exact route, certified (ERM.reference() is not)
    if getattr(sol, "status", "optimal") != "optimal":
        raise NotApplicableError(f"plot_convergence needs a certified optimum; the exact "
                                 f"solution of {problem!r} has status {sol.status!r}")
    return float(sol.objective), _source(sol)


def _source(sol) -> str:
    """"route, certified": which exact route gave F* and whether its check passed."""
    route = (getattr(sol, "provenance", None) or {}).get("route") or sol.method or "reference"
    return f"{route}, certified" if getattr(sol, "status", "") == "optimal" else route


def _named(solutions) -> list[tuple[str, object]]:
    if isinstance(solutions, dict):
        return [(str(k), v) for k, v in solutions.items()]
    if hasattr(solutions, "history"):            # a single Solution
        solutions = [solutions]
    return [(s.method or f"solution {i}", s) for i, s in enumerate(solutions)]


def plot_convergence(problem: SVM | ERM, solutions: Solution | Sequence[Solution] | dict,
                     ax: Axes | None = None, *, x: str = "iteration",
                     reference: Solution | float | None = None, tol: float | None = None,
                     log_x: bool = True) -> Axes:
    """Relative suboptimality of iterative solutions against the certified optimum.

    For each solution, from its ``history``: r_k = |F_k - F*| / |F*| (absolute when
    F* = 0), on a log scale, where F_k is the recorded objective (the best value so far
    for the subgradient methods, which are not descent methods and return their best
    point; the *dual* value D_k for dual methods such as SMO and DCD, whose
    P* - D_k >= 0 shrinks to 0 by strong duality: a curve whose first value off F* lies
    below it is labelled "dual") and
    F* the exact optimum in the problem's own convention. Values below
    :data:`FLOOR` (round-off of F*) are drawn at the floor.

    Parameters
    ----------
    problem : SVM or ERM
        Supplies F* when ``reference`` is None: ``problem.solve()``, the exact route,
        which must be certified (status "optimal").
    solutions : Solution, list of Solution or dict of name -> Solution
        Solutions with a history (exact ones have none and are skipped).
    ax : matplotlib Axes, optional
    x : {"iteration", "time"}
        The horizontal axis: the method's own iteration counter (``history["iteration"]``
        where recorded, else the row number: epochs for DCD, evaluations for Pegasos) or
        the wall-clock seconds ``history["time"]``.
    reference : Solution or float, optional
        F* (or a solution holding it), to avoid solving again.
    tol : float, optional
        Draw this relative tolerance as a dotted horizontal line.
    log_x : bool
        Log scale on x too (methods differ by decades in iterations and time).

    Returns
    -------
    matplotlib Axes
        ``ax``, one line per solution with a history, labelled by its method.

    Raises
    ------
    NotApplicableError
        No solution has a history, or F* is not certified.
    ParameterError
        ``x`` is not "iteration" or "time".
    """
    if x not in ("iteration", "time"):
        raise ParameterError(f"x must be 'iteration' or 'time'; got x={x!r}")
    named = [(n, s) for n, s in _named(solutions) if len(s.history)]
    if not named:
        raise NotApplicableError("plot_convergence needs iterative solutions with a history "
                                 "(exact solutions record none)")
    F_star, source = optimal_value(problem, reference)
    scale = abs(F_star) if F_star != 0 else 1.0
    ax = new_axes(ax)
    for name, sol in named:
        h = sol.history
        best = "best" in h
        values = h["best"] if best else h["objective"]
        if x == "time":
            if "time" not in h:
                continue
            xs = np.maximum(h["time"], 1e-7)
        else:
            xs = h["iteration"] if "iteration" in h else np.arange(1, len(h) + 1, dtype=float)
        keep = np.isfinite(values) & np.isfinite(xs)
        r = np.maximum(np.abs(values[keep] - F_star) / scale, FLOOR)
        dual = _is_dual(values[keep], F_star, scale)
        label = name + (" (best so far)" if best else "") + (" (dual)" if dual else "")
        ax.plot(xs[keep], r, label=label, linewidth=1.4)
    if tol is not None:
        ax.axhline(tol, color="0.4", linestyle=":", linewidth=1.0, label=f"tol = {tol:g}")
    ax.set_yscale("log")
    if log_x:
        _log_x(ax)
    ax.set_xlabel("time (s)" if x == "time" else "iteration (each method's own unit)")
    ax.set_ylabel("|F_k - F*| / |F*|" if F_star != 0 else "|F_k - F*|")
    ax.set_title(f"vs {x}: F* = {F_star:.10g} ({source})", fontsize=9)
    ax.grid(True, which="major", alpha=0.3)
    ax.legend(fontsize=8)
    return ax


def _is_dual(values: np.ndarray, F_star: float, scale: float) -> bool:
    """Whether a history records dual values: its first value off F* by more than
    round-off lies below F* (a dual method starts at D_0 <= P*; a primal or
    best-so-far value never lies below F* but by round-off, which the threshold
    ignores)."""
    off = np.flatnonzero(np.abs(values - F_star) > 1e-9 * scale)
    return bool(off.size) and bool(values[off[0]] < F_star)


def path_points(path: Any) -> tuple[np.ndarray, list, str]:
    """``(values, solutions, parameter name)`` of a regularization path.

    Accepts an object with ``.values`` and ``.solutions`` (and optionally
    ``.parameter``), a list of (value, Solution) pairs, or a list of Solutions that
    record their value in ``extra["lam"]`` or ``extra["C"]`` (as ``ERM.path`` does).
    """
    if hasattr(path, "values") and hasattr(path, "solutions") and not callable(path.values):
        values, sols = list(path.values), list(path.solutions)
        name = str(getattr(path, "parameter", None) or "regularization value")
    else:
        items = list(path)
        if items and all(isinstance(p, tuple) and len(p) == 2 for p in items):
            values, sols = [p[0] for p in items], [p[1] for p in items]
            name = "regularization value"
        else:
            key = next((k for k in ("lam", "C") if items and all(
                k in getattr(s, "extra", {}) for s in items)), None)
            if key is None:
                raise ParameterError(
                    "plot_path needs a path: an object with .values and .solutions, a list "
                    "of (value, Solution) pairs, or Solutions with extra['lam'] or extra['C']")
            values, sols, name = [s.extra[key] for s in items], items, key
    if len(values) != len(sols) or not values:
        raise ParameterError(f"plot_path: {len(values)} values for {len(sols)} solutions")
    return np.asarray(values, dtype=float), sols, name


def plot_path(path: Any, ax: Axes | None = None, *, what: str = "coef",
              feature_names: Sequence[str] | None = None) -> Axes:
    """Coefficients (or the objective) along a regularization path, log x.

    ``what="coef"``: one line per coefficient w_j against the regularization value
    (lambda of the lambda-form, or C of the C-form SVM), the number of nonzero
    coefficients (|w_j| > 1e-9 max(1, ||w||_inf)) of each point on a second axis above.
    ``what="objective"``: the optimal objective F against the value. The x axis is
    logarithmic ("symlog" when a value is 0).

    Parameters
    ----------
    path : Path, list of (value, Solution) or list of Solution
        See :func:`path_points`.
    ax : matplotlib Axes, optional
    what : {"coef", "objective"}
    feature_names : list of str, optional
        Legend of the coefficient lines (shown for at most 12 features).

    Returns
    -------
    matplotlib Axes

    Raises
    ------
    NotApplicableError
        ``what="coef"`` on solutions without w (kernel expansions).
    """
    if what not in ("coef", "objective"):
        raise ParameterError(f"what must be 'coef' or 'objective'; got what={what!r}")
    values, sols, name = path_points(path)
    order = np.argsort(values)
    values, sols = values[order], [sols[i] for i in order]
    ax = new_axes(ax)
    if what == "coef":
        if any(s.w is None for s in sols):
            raise NotApplicableError("plot_path(what='coef') needs primal weights w; a kernel "
                                     "expansion has none: use what='objective'")
        W = np.vstack([np.asarray(s.w, dtype=float) for s in sols])
        names = list(feature_names) if feature_names is not None else \
            [f"w_{j}" for j in range(W.shape[1])]
        for j in range(W.shape[1]):
            ax.plot(values, W[:, j], linewidth=1.2, label=str(names[j]))
        ax.axhline(0.0, color="0.5", linewidth=0.6)
        ax.set_ylabel("coefficient w_j")
        if W.shape[1] <= 12:
            ax.legend(fontsize=7, ncol=2)
    else:
        F = np.array([s.objective for s in sols], dtype=float)
        ax.plot(values, F, "o-", markersize=3, linewidth=1.2)
        ax.set_ylabel("optimal objective F")
        if np.all(F > 0) and F.max() > 30 * F.min():     # log only over decades
            ax.set_yscale("log")
    ax.set_xscale("log" if np.all(values > 0) else "symlog")
    if what == "coef":
        # The support size on top (glmnet's habit): set after the log scale, or the
        # secondary axis keeps its own log ticks instead of these.
        from matplotlib.ticker import NullLocator

        scale = np.maximum(1.0, np.abs(W).max(axis=1, keepdims=True))
        nnz = np.sum(np.abs(W) > 1e-9 * scale, axis=1)
        top = ax.secondary_xaxis("top")
        ticks = _spread(values)
        top.set_xticks(values[ticks], labels=[str(int(k)) for k in nnz[ticks]], fontsize=7)
        top.xaxis.set_minor_locator(NullLocator())
        top.set_xlabel("nonzero coefficients", fontsize=8)
    ax.set_xlabel(name + " (log scale)")
    ax.grid(True, alpha=0.3)
    ax.set_title(f"regularization path ({len(sols)} points)", fontsize=9)
    return ax


def _spread(values: np.ndarray, most: int = 8) -> np.ndarray:
    """Indices of at most ``most`` values spread evenly along the (log) axis."""
    if values.size <= most:
        return np.arange(values.size)
    return np.unique(np.linspace(0, values.size - 1, most).round().astype(int))


def _log_x(ax) -> None:
    """Log x with readable labels: no minor labels (they overlap), and under ~1.5
    decades (where the default shows no major label) ticks at 1, 2, 5 x 10^k."""
    from matplotlib.ticker import FormatStrFormatter, LogLocator, NullFormatter

    ax.set_xscale("log")
    ax.xaxis.set_minor_formatter(NullFormatter())
    lo, hi = ax.get_xlim()
    if lo > 0 and hi / lo < 30:
        ax.xaxis.set_major_locator(LogLocator(base=10, subs=(1.0, 2.0, 5.0)))
        ax.xaxis.set_major_formatter(FormatStrFormatter("%g"))
