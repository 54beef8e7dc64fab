"""The certified route of a problem built on the dual QP: SMO, active-set polish, certificate.

The problem is duck-typed (a :class:`convexlearn.qp_problem.QPProblem`): ``dual_qp()``
(the :class:`~convexlearn.solvers.kernel_svm.qp.DualQP`), ``feasible_start()`` (a point
of the row s^T a = Delta, None when a = 0 is one), ``solution_from_qp(alpha, g, b)``
(the answer in the problem's terms) and ``certificate(solution, tol)`` (recomputed from
the data). As the C-SVC's :func:`~convexlearn.solvers.kernel_svm.certified_smo.certified_smo`:

1. SMO (:func:`~convexlearn.solvers.kernel_svm.smo.smo_qp`) to the maximal violation
   ``tol`` identifies the active set;
2. the polish (:meth:`DualQP.polish`) solves the KKT system of that set exactly, reading
   K from the column cache SMO leaves where it holds the columns (:func:`cached_kernel`);
3. the certificate decides; when it fails SMO resumes from its own point at a tolerance
   100 times smaller (at most ``retries`` times), and a run that ends at its budget is
   resumed with twice the budget, up to max(10^7, 100 l) iterations in all (l variables).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ...data import check_positive
from ...solution import Solution, Timer
from .certified_smo import SMOColumns
from .smo_nu import smo_any_qp as smo_qp

__all__ = ["certified_qp", "cached_kernel"]


class _SampleColumns:
    """The blocks and products of a QP on samples indexed by ``index`` (nu-SVR's 2n
    variables on n samples) from a reader of the samples' kernel (:class:`SMOColumns`):
    K_var[r, c] = K[index_r, index_c], and K_var B = (K merged)[index] with merged_s the
    sum of B over the variables of sample s."""

    def __init__(self, samples: SMOColumns, index: np.ndarray, n_samples: int):
        self.samples, self.index, self.n_samples = samples, index, n_samples

    def block(self, rows: np.ndarray, cols: np.ndarray) -> np.ndarray:
        return self.samples.block(self.index[rows], self.index[cols])

    def products(self, B: Any) -> np.ndarray:
        B = np.asarray(B, dtype=float)
        merged = np.zeros((self.n_samples,) + B.shape[1:])
        np.add.at(merged, self.index, B)
        return self.samples.products(merged)[self.index]


def cached_kernel(qp: Any, columns: Any) -> Any:
    """What the polish reads K through after an SMO run: SMO's column cache ``columns``
    (a :class:`~convexlearn.gram.ColumnArrays`) over the QP's variables, or over its
    samples when the variables index them (Solver_NU's cache of nu-SVR: n-entry columns,
    each sample's once); None (the Gram operator) when there is no cache, the entries do
    not come from X, or the cache's order matches neither."""
    gram = qp.gram
    if columns is None or not gram.from_samples:
        return None
    if columns.n == qp.n:
        return SMOColumns(gram, columns)
    base = getattr(gram, "base", None)
    if qp.index is not None and base is not None and columns.n == base.n:
        return _SampleColumns(SMOColumns(base, columns), qp.index, base.n)
    return None


def certified_qp(problem: Any, *, tol: float = 1e-3, cert_tol: float = 1e-9,
                 cache_size: float = 200.0, max_iter: int | None = None, retries: int = 3,
                 polish: bool = True) -> Solution:
    """The certified answer of ``problem`` (module docstring).

    Parameters
    ----------
    problem : QPProblem
    tol : float
        SMO's first maximal KKT violation (LIBSVM's ``-e``), in units of the target.
    cert_tol : float
        Tolerance of the certificate (relative duality gap and scaled residuals).
    cache_size : float
        SMO's kernel column cache, MB.
    max_iter : int, optional
        Total SMO iterations (default max(10^7, 100 l), in runs of max(10^5, 100 l)).
    retries : int
        SMO restarts at tol / 100 after a failed certificate.
    polish : bool
        False: certify SMO's own point.

    Returns
    -------
    Solution
        The first certified point, else the one with the smallest violation; ``report``
        set, status "optimal" or "inaccurate", provenance with SMO's tolerances.
    """
    tol = check_positive("tol", tol)
    timer = Timer()
    qp = problem.dual_qp()
    l = qp.n
    chunk = max(100_000, 100 * l) if max_iter is None else int(max_iter)
    budget = max(10**7, 100 * l) if max_iter is None else int(max_iter)
    alpha0, best, iterations, tols, polished_any, cache = (problem.feasible_start(), None,
                                                           0, [], False, None)
    attempt = 0
    while True:
        res, cache, loop = smo_qp(qp, tol=tol, max_iter=chunk, alpha0=alpha0,
                                  cache_size=cache_size, record=False)
        iterations += res.n_iter
        tols.append(tol)
        g = qp.target - res.v
        kernel = cached_kernel(qp, getattr(res, "columns", None))
        refined = qp.polish(res.alpha, g, kernel=kernel, max_rounds=100) if polish else None
        res.columns = kernel = None     # the cache's memory goes before SMO's next run
        polished_any |= refined is not None
        alpha, b, g = refined if refined is not None else (res.alpha, None, g)
        sol = problem.solution_from_qp(alpha, g, b)
        sol.report = problem.certificate(sol, tol=cert_tol)
        if best is None or sol.report.passed or (
                sol.report.max_violation < best.report.max_violation):
            best = sol
        if sol.report.passed:
            break
        alpha0 = res.alpha              # SMO's own point is feasible
        if res.status == "max_iter":
            if iterations >= budget:
                break
            chunk = min(2 * chunk, budget - iterations)
            continue
        attempt += 1
        if attempt > retries:
            break
        tol = max(tol / 100.0, 1e-15)
    best.status = "optimal" if best.report.passed else "inaccurate"
    best.objective = best.report.primal_objective
    best.method, best.n_iter, best.time_s = "exact-smo", iterations, timer()
    best.provenance = {"solver": "convexlearn.smo + active-set polish",
                       "formulation": f"{qp.name} (SMO, then active-set polish)",
                       "loop": loop, "smo_tol": tols, "polished": polished_any,
                       "relative_gap": best.report.relative_gap,
                       "max_violation": best.report.max_violation, "cert_tol": cert_tol,
                       "cache_size_mb": cache_size}
    best.extra["cache"] = cache
    return best
