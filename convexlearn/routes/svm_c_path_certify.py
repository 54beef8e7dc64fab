"""The certificates of the exact C-path's breakpoints (:func:`convexlearn.routes.svm.
exact_c_path`).

A breakpoint is certified at ``tol`` in one of two ways, each a true certificate:

* from the path's own margins and their rounding bound (``SVMPath.bounds``,
  :mod:`convexlearn.certify.path_kkt_bound`): upper bounds of every KKT residual and of the
  relative duality gap of the reported (alpha, b) at C, O(n) a breakpoint; it keeps a
  compact :class:`PathPointReport` (the figures and the support counts, no n-vectors),
  whose :meth:`~PathPointReport.full` recomputes the full KKT report from the data on
  demand;
* by the full KKT report recomputed from the data (:func:`convexlearn.certify.kkt.
  kkt_report`, the products K (y alpha) formed for a block of breakpoints at once): at
  every :data:`FULL_EVERY`-th breakpoint, at the last, and at any breakpoint whose
  bounds do not pass (the bounds are worst-case: ~1e3 times the margins' actual error);
  the breakpoint keeps the report's figures in the same compact form (its residual
  maxima, gap and counts: ~200 bytes, not the report's n-vectors, ~180 KB at n = 2000),
  ``full()`` recomputing it.

Only the breakpoints are certified here. A C between two of them is interpolated exactly
(a = alpha / C and a_0 = b / C are linear in lambda = 1 / C on a segment,
:meth:`~convexlearn.solvers.kernel_svm.svm_path.SVMPath.at`) and certified by its own
KKT report from the data when asked for (``Path.at`` of :func:`convexlearn.routes.svm.
exact_path`): the certificate of a segment's ends is not taken for its interior.
"""

from __future__ import annotations

import gc
from dataclasses import dataclass, field
from typing import Any, Callable

import numpy as np

from ..certify.kkt import kkt_report
from ..certify.path_kkt_bound import BOUND_FIELDS
from ..fingerprints import Deferred, Provenance
from ..solution import Solution
from ..solvers.kernel_svm.c_svc import c_svc_solution

__all__ = ["FULL_EVERY", "PathPointReport", "certify_breakpoints", "path_point"]

#: Every FULL_EVERY-th breakpoint (and the last) is certified by the full report from the
#: data whatever its bounds say.
FULL_EVERY = 64
#: Memory of one block of the full reports' products K (y alpha_k) (n x block doubles).
_CERTIFY_BYTES = 2**25

# the breakpoints' figures are unpacked in this order (_Points.__call__): a check at import
# that holds under ``python -O`` too
if BOUND_FIELDS != ("max_violation", "relative_gap", "duality_gap", "primal_objective",
                    "dual_objective", "support", "free", "bounded"):
    raise ImportError(f"path_kkt_bound.BOUND_FIELDS changed order: {BOUND_FIELDS!r}")


@dataclass(repr=False)
class PathPointReport:
    """A breakpoint's KKT figures as upper bounds from the path's margins (module
    docstring): every residual scaled as in :class:`~convexlearn.certify.kkt.KKTReport`
    (margin units; the relative gap over a lower bound of the primal objective).
    :meth:`full` recomputes the full report from the data."""

    passed: bool
    tol: float
    max_violation: float
    relative_gap: float
    duality_gap: float
    primal_objective: float
    dual_objective: float
    n_support: int
    n_free: int
    n_bounded: int
    recompute: Callable[[], Any] = field(repr=False)
    source: str = "bounds from the path's margins"
    notes: list = field(default_factory=lambda: [
        "compact: full() recomputes the KKT report from the data"])

    def full(self) -> Any:
        """The full :class:`~convexlearn.certify.kkt.KKTReport`, recomputed from the data."""
        return self.recompute()

    def summary(self) -> str:
        return (f"KKT check {'PASSED' if self.passed else 'FAILED'} at tol={self.tol:g} "
                f"({self.source}): max violation {self.max_violation:.2e}, "
                f"relative gap {self.relative_gap:.2e}; support vectors: {self.n_support} "
                f"({self.n_free} free, {self.n_bounded} bounded)")

    __str__ = summary

    def __repr__(self) -> str:
        return f"<PathPointReport {'passed' if self.passed else 'FAILED'}: {self.summary()}>"


def path_point(sol: Solution, fingerprint: Deferred, C: float, event: str) -> Solution:
    """A breakpoint's solution with its report: status, objective and provenance (the
    problem's fingerprint at C hashed when first read: a path of thousands of breakpoints
    does not pay one hash each)."""
    sol.status = "optimal" if sol.report.passed else "inaccurate"
    sol.objective = sol.report.primal_objective
    sol.method = "exact-path"
    sol.provenance = Provenance({"route": "svm-c-path", "C": float(C), "event": event,
                                 "fingerprint": fingerprint})
    return sol


def certify_breakpoints(svm: Any, path: Any, tol: float) -> list[Solution]:
    """One certified Solution per breakpoint of ``path`` (module docstring)."""
    # thousands of small objects (a Solution, its report and provenance a breakpoint)
    # set off the cyclic collector's full passes over every live object of the process,
    # which find nothing to free here: ~0.1 s CPU at n = 2000 (3900 breakpoints), twice
    # the work itself; the collector is paused while they are made
    enabled = gc.isenabled()
    gc.disable()
    try:
        return _certify(svm, path, tol)
    finally:
        if enabled:
            gc.enable()


def _certify(svm: Any, path: Any, tol: float) -> list[Solution]:
    k = len(path.Cs)
    bounds = path.bounds
    full = np.ones(k, dtype=bool) if bounds is None else ~(bounds[:, 0] <= tol)
    full[::FULL_EVERY] = True
    full[-1] = True
    solutions: list[Solution | None] = [None] * k
    point = _Points(svm, path, tol)
    picked = np.flatnonzero(full)
    block = max(1, _CERTIFY_BYTES // (8 * svm.n_samples))
    for start in range(0, picked.size, block):
        ks = picked[start:start + block]
        alphas = np.clip(path.alpha_rows(ks), 0.0, path.Cs[ks, None])
        products = svm.gram_products((svm.y * alphas).T)
        for j, i in enumerate(ks.tolist()):
            problem = svm.with_C(path.Cs[i])
            Kb = products[:, j]
            sol = c_svc_solution(problem, alphas[j], Kb, path.intercepts[i])
            report = kkt_report(problem, sol, tol, products=np.column_stack([Kb, Kb]))
            solutions[i] = point(i, report.passed, (
                report.max_violation, report.relative_gap, report.duality_gap,
                report.primal_objective, report.dual_objective, report.support.size,
                report.free.size, report.bounded.size), "full KKT report from the data")
    if bounds is not None:
        # (the rows as Python floats at once: ~4000 breakpoints, one small object each)
        rows = bounds.tolist()
        for i in np.flatnonzero(~full).tolist():
            figures = rows[i]
            solutions[i] = point(i, figures[0] <= tol, figures,
                                 "bounds from the path's margins")
    return solutions


class _Points:
    """The breakpoints' Solutions with their compact reports (:meth:`__call__`); what is the
    same for every breakpoint of the path read once (the path's C, b and events as Python
    objects, whether w is formed)."""

    def __init__(self, svm: Any, path: Any, tol: float):
        self.svm, self.path, self.tol = svm, path, tol
        self.linear = bool(svm.kernel.is_linear and svm.X is not None)
        self.Cs, self.intercepts = path.Cs.tolist(), path.intercepts.tolist()

    def __call__(self, i: int, passed: bool, figures: Any, source: str) -> Solution:
        """Breakpoint i's Solution, ``figures`` its KKT figures in the order of
        ``BOUND_FIELDS`` (alpha a view of the path's row, within [0, C] where the
        certificate passed). The problem at C (a copy of ``svm``) is made only when its full
        report or its fingerprint is read: the verdict above does not need it."""
        svm, tol = self.svm, self.tol
        C, b = self.Cs[i], self.intercepts[i]
        alpha = self.path.alpha(i)   # (a view of the record's row: no dense (k, n) array)
        if not passed:
            alpha = np.clip(alpha, 0.0, C)
        w = svm.X.T @ (svm.y * alpha) if self.linear else None
        sol = Solution(w=w, b=b, alpha=alpha)

        def recompute():
            # (from the breakpoint's values, not ``sol``: a closure over sol would be a
            # reference cycle, sol -> report -> recompute -> sol, and each path's
            # thousands of Solutions, with the n x k multipliers they view and the
            # problem's Gram matrix, would outlive their last reference until a full pass
            # of the cyclic collector: each later path then faults in ~100 MB of fresh
            # pages at n = 2000, ~0.05-0.1 s of system time)
            return kkt_report(svm.with_C(C), Solution(w=w, b=b, alpha=alpha), tol)

        violation, gap, duality_gap, primal, dual, support, free, bounded = figures
        sol.report = PathPointReport(
            passed=bool(passed), tol=tol, max_violation=violation, relative_gap=gap,
            duality_gap=duality_gap, primal_objective=primal, dual_objective=dual,
            n_support=int(support), n_free=int(free), n_bounded=int(bounded),
            recompute=recompute, source=source)
        return path_point(sol, Deferred(lambda: svm.with_C(C).fingerprint()), C,
                          self.path.events[i])
