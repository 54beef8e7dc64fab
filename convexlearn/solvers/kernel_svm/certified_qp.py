"""The certified route of a problem built on the dual QP: SMO, active-set polish, certificate.

The problem is duck-typed (a :class:`convexlearn.qp_problem.QPProblem`): ``dual_qp()``
(the :class:`~convexlearn.solvers.kernel_svm.qp.DualQP`), ``feasible_start()`` (a point
of the row s^T a = Delta, None when a = 0 is one), ``solution_from_qp(alpha, g, b)``
(the answer in the problem's terms) and ``certificate(solution, tol)`` (recomputed from
the data). As the C-SVC's :func:`~convexlearn.solvers.kernel_svm.certified_smo.certified_smo`:

1. SMO (:func:`~convexlearn.solvers.kernel_svm.smo.smo_qp`) to the maximal violation
   ``tol`` identifies the active set;
2. the polish (:meth:`DualQP.polish`) solves the KKT system of that set exactly (K read
   from the column cache SMO leaves where it holds the columns: :func:`cached_kernel`);
   where factorizing the free set would cost more than SMO's run, SMO first goes on to
   the certificate's level and its own point is certified (:func:`smo_before_polish`);
3. the certificate decides; when it fails SMO resumes from its own point at a tolerance
   100 times smaller (at most ``retries`` times), and a run that ends at its budget is
   resumed with twice the budget, up to max(10^7, 100 l) iterations in all (l variables).
"""

from __future__ import annotations

from typing import Any

import time

import numpy as np

from ...data import check_positive
from ...solution import Solution, Timer
from .certified_smo import SMOColumns
from .smo_nu import smo_any_qp as smo_qp

__all__ = ["certified_qp", "cached_kernel", "smo_before_polish"]

#: Flop rate assumed for the polish's factorization of the free set's block (|F|^3 / 3
#: flops): about what one core reaches here (the polish measured at |F| = 3185: 1.4 s).
_FACTOR_RATE = 5e9


def cached_kernel(qp: Any, columns: Any) -> Any:
    """What the polish reads K through after an SMO run: SMO's column cache ``columns``
    (a :class:`~convexlearn.gram.ColumnArrays`) over the QP's variables, or over its
    samples when the variables index them (epsilon-SVR's and nu-SVR's 2n variables on n
    samples, LIBSVM's SVR_Q: n-entry columns, each sample's once, read through
    ``qp.index``); None (the Gram operator) when there is no cache, the entries do not
    come from X, or the cache's order matches neither."""
    if columns is None:
        return None
    base = getattr(qp.gram, "base", None)
    if qp.index is not None and base is not None and columns.n == base.n:
        return SMOColumns(base, columns, qp.index) if base.from_samples else None
    if columns.n == qp.n and qp.gram.from_samples:
        return SMOColumns(qp.gram, columns)
    return None




def smo_before_polish(qp: Any, res: Any, seconds: float, cert_tol: float,
                      cache_size: float) -> tuple[Any, float] | None:
    """SMO resumed from ``res`` to the violation ``tol = cert_tol / 1000`` times the
    target's scale (max(1, max |target|)), where its own point should certify, when the
    polish's factorization of the free set (|F|^3 / 3 flops at :data:`_FACTOR_RATE`) would
    cost more than SMO's run so far (``seconds`` of CPU): a nearly interpolating fit
    (large gamma or C: thousands of free multipliers, few bounded ones to identify), which
    SMO finishes at its own pace. Its budget is the iterations that pace buys in the
    factorization's estimated time, at most a run's (max(10^5, 100 l)). Returns (the resumed result, its tol), or None where
    the polish is the cheaper (or SMO is not the compiled loop, or did not converge)."""
    if getattr(res, "columns", None) is None or res.status != "converged" or res.n_iter == 0:
        return None
    free = np.count_nonzero((res.alpha > 0.0) & (res.alpha < qp.upper))
    factor_s, seconds = free ** 3 / 3.0 / _FACTOR_RATE, max(seconds, 1e-6)
    if factor_s <= seconds:
        return None
    tol = 1e-3 * cert_tol * max(1.0, float(np.max(np.abs(qp.target))))
    budget = min(res.n_iter * factor_s / seconds, max(100_000, 100 * qp.n))   # (a run's)
    more, _, _ = smo_qp(qp, tol=tol, max_iter=max(1, int(budget)), alpha0=res.alpha,
                        cache_size=cache_size, record=False, g0=qp.target - res.v)
    return more, tol


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
        start = time.process_time()
        res, cache, loop = smo_qp(qp, tol=tol, max_iter=chunk, alpha0=alpha0,
                                  cache_size=cache_size, record=False)
        iterations += res.n_iter
        tols.append(tol)
        sol = None
        # a large free set: SMO to the certificate's level first, when that looks cheaper
        more = (smo_before_polish(qp, res, time.process_time() - start, cert_tol,
                                  cache_size) if polish and len(tols) == 1 else None)
        if more is not None:
            res, cache, _ = more[0], more[0].cache, tols.append(more[1])
            iterations += res.n_iter
            if res.status == "converged":
                sol = problem.solution_from_qp(res.alpha, qp.target - res.v, None)
                sol.report = problem.certificate(sol, tol=cert_tol)
                sol = sol if sol.report.passed else None      # (else the polish)
        if sol is None:
            g = qp.target - res.v
            kernel = cached_kernel(qp, getattr(res, "columns", None))
            refined = (qp.polish(res.alpha, g, kernel=kernel, max_rounds=100)
                       if polish else None)
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
