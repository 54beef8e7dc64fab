"""The result types every solver returns: :class:`Solution` and its :class:`History`."""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import Any

import numpy as np

__all__ = ["History", "Solution", "Timer", "STATUSES"]

#: Status values a Solution can carry.
#: "unknown"       nothing has been checked yet (a Solution built by hand);
#: "optimal"       the method says so *and* the optimality check passed;
#: "inaccurate"    the method returned a point but the optimality check failed
#:                 (or the solver itself said optimal_inaccurate);
#: "max_iter"      an iterative method stopped at its iteration budget;
#: "stopped"       a callback asked to stop;
#: "converged"     an iterative method met its own stopping rule (not yet certified);
#: "not converged" a method that cannot converge on this input (perceptron, non-separable);
#: "diverged"      an iterative method produced a non-finite value (step too large).
STATUSES = ("unknown", "optimal", "inaccurate", "max_iter", "stopped", "converged",
            "not converged", "diverged")


class History:
    """Per-iteration record of an iterative method.

    Each call of :meth:`record` appends one row; columns are created on first use
    (``objective``, ``time``, and where defined ``gap``, ``violation``, ...). Read a
    column as a numpy array with ``history["objective"]``.
    """

    def __init__(self):
        self._rows: dict[str, list] = {}
        self._n = 0

    def record(self, **values) -> None:
        """Append one row: new keys become columns (NaN in earlier rows), absent keys get NaN."""
        for key in values.keys() - self._rows.keys():
            self._rows[key] = [np.nan] * self._n
        for key, column in self._rows.items():
            column.append(values.get(key, np.nan))
        self._n += 1

    def __getitem__(self, key: str) -> np.ndarray:
        return np.asarray(self._rows[key], dtype=float)

    def __contains__(self, key: str) -> bool:
        return key in self._rows

    def __len__(self) -> int:
        return self._n

    def keys(self):
        """The column names, in order of first use."""
        return list(self._rows)

    def as_dict(self) -> dict[str, list]:
        """Columns as plain lists (JSON-ready)."""
        return {k: [float(v) for v in col] for k, col in self._rows.items()}

    def __repr__(self) -> str:
        return f"History({self._n} rows: {', '.join(self._rows)})"


class Timer:
    """Wall-clock seconds since creation (``timer()``)."""

    def __init__(self):
        self._start = time.perf_counter()

    def __call__(self) -> float:
        return time.perf_counter() - self._start


@dataclass
class Solution:
    """A point returned by a solver, with how it was obtained.

    Attributes
    ----------
    w : ndarray or None
        Primal weights (None where only a kernel expansion exists).
    b : float
        Intercept (0 for homogeneous problems).
    alpha : ndarray or None
        Dual variables (None for primal-only methods).
    xi : ndarray or None
        Slacks, where the formulation has them.
    objective : float
        Objective value in the problem's own convention (DESIGN.md section 1).
    status : str
        One of :data:`STATUSES`.
    method : str
        The method that produced it ("exact-primal", "smo", ...).
    n_iter : int or None
        Iterations of an iterative method (interior-point iterations for exact ones).
    history : History
        Per-iteration objective, time and, where defined, gap or violation.
    time_s : float
        Wall-clock solve time in seconds.
    provenance : dict
        Solver name and version, tolerances, seed, formulation.
    dual_coef : ndarray or None
        Kernel expansion coefficients beta with f(x) = sum_i beta_i k(x_i, x) + b;
        equals y * alpha at a dual solution (scikit-learn's ``dual_coef_``).
    report : object or None
        The optimality report attached by ``solve()`` (a KKTReport or OptimalityReport).
    extra : dict
        Method-specific facts (e.g. the PSD check of the kernel, cache statistics).
    """

    w: np.ndarray | None
    b: float
    alpha: np.ndarray | None = None
    xi: np.ndarray | None = None
    objective: float = float("nan")
    status: str = "unknown"
    method: str = ""
    n_iter: int | None = None
    history: History = field(default_factory=History)
    time_s: float = 0.0
    provenance: dict[str, Any] = field(default_factory=dict)
    dual_coef: np.ndarray | None = None
    report: Any = None
    extra: dict[str, Any] = field(default_factory=dict)

    @property
    def ok(self) -> bool:
        """True when the status is "optimal" (solver said so and the check passed)."""
        return self.status == "optimal"

    def __repr__(self) -> str:
        parts = [f"method={self.method!r}", f"status={self.status!r}",
                 f"objective={self.objective:.10g}"]
        if self.n_iter is not None:
            parts.append(f"n_iter={self.n_iter}")
        parts.append(f"time_s={self.time_s:.3g}")
        return "Solution(" + ", ".join(parts) + ")"
