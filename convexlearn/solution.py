"""The result types every solver returns: :class:`Solution` and its :class:`History`."""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from .errors import DataError, ParameterError
from .fingerprints import data_digest, problem_fingerprint
from .serialize import (FORMAT, FORMAT_VERSION, array_from_list, float_list, read_solution_data,
                        solution_fields, solution_record, write_json)

__all__ = ["History", "Solution", "Timer", "STATUSES", "load", "FORMAT", "FORMAT_VERSION",
           "data_digest", "problem_fingerprint", "check_same_problem",
           "check_solution_shapes"]

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

    def keys(self) -> Any:
        """The column names, in order of first use."""
        return list(self._rows)

    def as_dict(self) -> dict[str, list]:
        """Columns as plain lists (JSON-ready)."""
        return {k: [float(v) for v in col] for k, col in self._rows.items()}

    def to_dict(self) -> dict[str, list]:
        """Columns as lists of floats, NaN and +-inf as "nan", "inf", "-inf" (strict JSON)."""
        return {k: float_list(np.asarray(col, dtype=float)) for k, col in self._rows.items()}

    @classmethod
    def from_dict(cls, columns: dict[str, list]) -> "History":
        """Inverse of :meth:`to_dict`; every column must have the same length."""
        history = cls()
        lengths = {len(col) for col in columns.values()}
        if len(lengths) > 1:
            raise DataError(f"history columns differ in length: "
                            f"{ {k: len(v) for k, v in columns.items()} }")
        history._rows = {k: array_from_list(col).tolist() for k, col in columns.items()}
        history._n = lengths.pop() if lengths else 0
        return history

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
        Objective value in the problem's own convention (see the problem class: SVM, ERM).
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

    @property
    def support(self) -> np.ndarray | None:
        """Indices of the support vectors: the report's dual view where there is a report
        with one (alpha_i > tol * s_a), else {i : alpha_i > 0}; None without alpha."""
        support = getattr(self.report, "support", None)
        if support is not None:
            return np.asarray(support, dtype=int)
        if self.alpha is None:
            return None
        return np.flatnonzero(np.asarray(self.alpha) > 0)

    def to_dict(self) -> dict[str, Any]:
        """The whole answer as strict JSON data, exactly (:meth:`from_dict` inverts it;
        the fields: :func:`convexlearn.serialize.solution_record`)."""
        return solution_record(self)

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> "Solution":
        """A Solution from :meth:`to_dict`'s data; the report comes back as a
        :class:`~convexlearn.serialize.Record` with the same fields.

        Raises
        ------
        DataError
            Not a saved solution, a newer format version, or a malformed field (the
            message names it).
        """
        fields = solution_fields(data)
        try:
            fields["history"] = History.from_dict(fields["history"])
        except (TypeError, ValueError, AttributeError) as exc:
            raise DataError(f"malformed saved solution: history: {exc}") from None
        return cls(**fields)

    def save(self, path: Any) -> Path:
        """Write :meth:`to_dict` as JSON to ``path``, atomically (a temporary file
        ``.convexlearn-tmp-*`` next to it, then a rename); return the path. Read it back
        with :func:`convexlearn.load`."""
        return write_json(path, self.to_dict())

    def __repr__(self) -> str:
        parts = [f"method={self.method!r}", f"status={self.status!r}",
                 f"objective={self.objective:.10g}"]
        if self.n_iter is not None:
            parts.append(f"n_iter={self.n_iter}")
        parts.append(f"time_s={self.time_s:.3g}")
        return "Solution(" + ", ".join(parts) + ")"


def load(path: Any, method: str | None = None) -> Solution:
    """Read a solution written by :meth:`Solution.save`, or one of the solutions of a
    ``convexlearn solve --json`` record (``method``, by default the run's exact reference).

    Raises
    ------
    DataError
        No such file, not JSON, not a saved solution, or a newer format version (the
        message names the file).
    """
    data = read_solution_data(path, method)
    try:
        return Solution.from_dict(data)
    except DataError as exc:
        raise DataError(f"{path}: {exc}") from None


def check_same_problem(solution: Solution, fingerprint: str | None, where: str,
                       name: str = "solution") -> None:
    """Refuse a solution recorded as the answer of another problem (ParameterError).

    A solution without a fingerprint (built by hand, or by a solver function called
    directly) is accepted: there is nothing to compare; ``fingerprint=None`` checks only
    that ``solution`` is a Solution."""
    if not isinstance(solution, Solution):
        raise ParameterError(f"{where}: {name} must be a convexlearn Solution; got "
                             f"{type(solution).__name__}")
    recorded = solution.provenance.get("fingerprint")
    if None not in (recorded, fingerprint) and recorded != fingerprint:
        raise ParameterError(
            f"{where}: {name} (method {solution.method!r}) was computed for another problem "
            f"(its provenance records problem {recorded[:19]}..., this one is "
            f"{fingerprint[:19]}...): data or parameters (C, kernel, lam, ...) differ")


def check_solution_shapes(solution: Solution, n: int, d: int | None, where: str) -> None:
    """Refuse a solution whose arrays do not fit a problem of n samples and d features."""
    for name in ("alpha", "dual_coef", "xi"):
        value = getattr(solution, name)
        if value is not None and np.shape(value) != (n,):
            raise ParameterError(f"{where}: solution.{name} has shape {np.shape(value)}; this "
                                 f"problem has n={n} samples (a solution of another problem?)")
    if solution.w is not None and d is not None and np.shape(solution.w) != (d,):
        raise ParameterError(f"{where}: solution.w has shape {np.shape(solution.w)}; this problem "
                             f"has d={d} features (a solution of another problem?)")
