"""A small certified C-SVC in one compiled call (the route "exact-smo"'s fast path).

:func:`certified_small` answers what
:func:`~convexlearn.solvers.kernel_svm.certified_smo.certified_smo` answers, for a C-SVC with intercept and finite costs on a nonlinear kernel whose n
columns fit in SMO's cache (``cache_size`` MB, and n <= :data:`SMALL_MAX`): SMO, the
active-set polish and the certificate's product K beta run as one compiled call
(:func:`~convexlearn.solvers.kernel_svm.small_kernels.small_solve`); the KKT report is
then :func:`~convexlearn.certify.kkt.kkt_report` on that product, recomputed from the data
(the support's kernel columns, not SMO's cache or the polish's running gradient). The
answer is returned only when it is certified at ``kkt_tol`` and ``gap_tol`` (the same
test as the general path); otherwise - the plain polish giving up (a block K_FF not
numerically positive definite, too large a free set, rounds out), or the certificate
failing (after SMO spent its first run's iterations, or a misread active set) - SMO's
point is handed back and the general path goes on from it (its polish, its retries), so
that the call costs at most its own time (~0.3 ms at n ~ 300).

:func:`certified_small_reference` is the same solve in numpy (SMO's reference loop
:func:`~convexlearn.solvers.kernel_svm.smo.smo` on the same Gram matrix, the numpy polish
:func:`~convexlearn.solvers.kernel_svm.polish.polish_expansion`, the report from the
Gram operator's products): tests/solvers/kernel_svm/test_small_certified.py holds the two
to the same sets and to residuals within rounding bounds.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ...certify.kkt import kkt_report
from ...certify.kkt_kernels import allow_compiled
from ...gram import KERNEL_CODES, KernelColumns
from ...solution import History, Solution, Timer
from .c_svc import c_svc_solution
from .qp import curvature_floor
from .smo import smo

__all__ = ["MAX_FREE_SMALL", "SMALL_MAX", "certified_small", "certified_small_reference",
           "label_exact_smo", "reported_solution", "small_applies"]

#: Largest n of the one-call path (its cache or the given K: 8 n^2 bytes). Above ~1000 a
#: solve takes 50 ms and more, the fixed costs the call saves no longer count, and a
#: declined call (a free set above MAX_FREE_SMALL) costs its SMO run again.
SMALL_MAX = 1000
#: Largest free set the one-call polish factorizes (its Cholesky is a plain loop; above,
#: the numpy polish's LAPACK).
MAX_FREE_SMALL = 400
#: The polish's options, as the general path's (polish_expansion's defaults, MAX_JOIN;
#: its rounds after a converged SMO run and after one that spent its iterations).
THRESHOLD, MARGIN_TOL, ROUNDS, SPENT_ROUNDS, MAX_JOIN = 1e-10, 1e-9, 100, 1000, 64


def small_applies(svm: Any, cache_size: float) -> bool:
    """True when ``svm`` is a problem of the one-call path (module docstring): intercept,
    finite costs, a nonlinear kernel, the Gram matrix in memory or its n columns within
    ``cache_size`` MB from a dense X, n <= SMALL_MAX."""
    n = svm.n_samples
    if not svm.intercept or svm.hard_margin or svm.kernel.is_linear or n < 2 or n > SMALL_MAX:
        return False
    gram = svm.gram_operator
    if gram.formed:
        return True
    return (gram.from_samples and gram.kernel.name in KERNEL_CODES
            and isinstance(gram.X, np.ndarray) and 8.0 * n * n <= cache_size * 2**20)


def reported_solution(svm: Any, alpha: np.ndarray, g: np.ndarray, b: float | None,
                      products: Any, kkt_tol: float, rows: tuple | None = None) -> Solution:
    """The C-SVC solution of the multipliers ``alpha`` (``g`` = K (y alpha); b None: from
    them, the midpoint rule) and its KKT report at ``kkt_tol`` from ``products`` = K beta
    (the report's own product if None) and ``rows``, its per-sample pass when computed
    already (the report's own if None). The one-call and the tiny path finish here."""
    sol = c_svc_solution(svm, alpha, g, b)
    # [products, products] as one (n, 2) array: np.repeat is one C call, column_stack a
    # Python-level concatenation (~40 us of each of a 10-class fit's 45 pairs)
    both = None if products is None else np.repeat(products[:, None], 2, axis=1)
    sol.report = kkt_report(svm, sol, tol=kkt_tol, products=both, rows=rows)
    return sol


def certified_small(svm: Any, *, tol: float, kkt_tol: float, gap_tol: float,
                    shrinking: bool = True, cache_size: float = 200.0,
                    max_iter: int | None = None,
                    rounds: tuple[int, int] = (ROUNDS, SPENT_ROUNDS)
                    ) -> tuple[Solution | None, tuple | None]:
    """The one-call solve of ``svm`` (:func:`small_applies` must hold): SMO to ``tol``
    within ``max_iter`` iterations (default max(10^5, 100 n), the general path's first
    run), the polish with ``rounds`` = (rounds, rounds after an SMO run that spent its
    iterations). ``tol``: SMO's maximal violation (margin units); ``kkt_tol``: the KKT
    report's tolerance (:func:`~convexlearn.certify.kkt.svm_kkt`: margins absolute,
    multipliers in units of max_i C_i, stationarity of the expansion's scale);
    ``gap_tol``: the relative duality gap (:func:`~convexlearn.certify.kkt.relative_gap`).

    Returns
    -------
    (solution, None)
        Certified (status "optimal", the general path's fields and provenance).
    (None, (alpha, g, n_iter))
        Not certified here: SMO's point, g = K (y alpha) and its iterations, for the
        general path to go on from.
    """
    from .small_kernels import NO_FREE, OK, small_solve
    allow_compiled()              # numba is initialized: the report's compiled pass
    timer = Timer()
    n = svm.n_samples
    spec = svm.gram_operator.spec()
    XT = spec.X if spec.code == KERNEL_CODES["precomputed"] else np.ascontiguousarray(spec.X.T)
    y = np.ascontiguousarray(svm.y, dtype=float)
    C = np.empty(n)             # C_bounds (a number or per sample), writeable, by one
    C[:] = svm.C_bounds         # assignment (broadcast_to's Python costs ~25 us a call)
    k_max = float(np.max(spec.diag))
    tau = curvature_floor(k_max)
    budget = max(100_000, 100 * n) if max_iter is None else int(max_iter)
    (outcome, _, alpha, b, g, Kbeta, n_iter, _, used, smo_alpha, smo_g,
     rows) = small_solve(spec.code, spec.X, XT, spec.K, spec.gamma, spec.coef0, spec.degree,
                         np.ascontiguousarray(spec.diag, dtype=float), y, C, float(tol),
                         budget, bool(shrinking), tau, THRESHOLD, MARGIN_TOL, int(rounds[0]),
                         int(rounds[1]), MAX_JOIN, MAX_FREE_SMALL, float(kkt_tol))
    if outcome not in (OK, NO_FREE):
        return None, (smo_alpha, smo_g, int(n_iter))
    # NO_FREE: b from the bounded multipliers (the midpoint rule) and the report's own pass
    sol = reported_solution(svm, alpha, g, b if outcome == OK else None, Kbeta, kkt_tol,
                            rows if outcome == OK else None)
    report = sol.report
    if not (report.passed and report.relative_gap <= gap_tol):
        return None, (smo_alpha, smo_g, int(n_iter))
    label_exact_smo(sol, svm, n_iter=int(n_iter), time_s=timer(), gap_tol=gap_tol,
                    smo_tol=[tol], polished=True, kkt_tol=kkt_tol, shrinking=shrinking,
                    cache_size_mb=cache_size, loop="compiled, one call (small_kernels)",
                    polish_rounds=int(used))
    # every column held: the Gram matrix in memory, or a cache of all n columns
    sol.extra["cache"] = {"capacity_columns": n, "cache_size_mb": cache_size,
                          "gram_in_memory": spec.code == KERNEL_CODES["precomputed"]}
    return sol, None


def label_exact_smo(sol: Solution, svm: Any, *, n_iter: int, time_s: float, gap_tol: float,
                    **provenance: Any) -> None:
    """Status ("optimal" iff the report passed and its relative gap is at most
    ``gap_tol``), objective, method, iterations and provenance of an exact-smo answer
    (this path's and certified_smo's general path's); ``provenance``: the route's entries
    after the certificate's figures."""
    report = sol.report
    sol.status = ("optimal" if report.passed and report.relative_gap <= gap_tol
                  else "inaccurate")
    sol.objective = report.primal_objective
    sol.method = "exact-smo"
    sol.n_iter = n_iter
    sol.history = History()
    sol.time_s = time_s
    label = "SVM dual (SMO, then active-set polish)"
    if svm.sample_weight is not None:
        label += " with per-sample costs C_i = C s_i"
    sol.provenance = {"solver": "convexlearn.smo + active-set polish", "formulation": label,
                      "smo_tol": provenance.pop("smo_tol"),
                      "polished": provenance.pop("polished"),
                      "max_violation": report.max_violation,
                      "relative_gap": report.relative_gap, "gap_tol": gap_tol,
                      **provenance}


def certified_small_reference(svm: Any, *, tol: float = 1e-3, kkt_tol: float = 1e-6,
                              gap_tol: float = 1e-9, shrinking: bool = True) -> Solution:
    """:func:`certified_small` in numpy (the reference the tests hold it to): SMO's numpy
    loop on K itself, :func:`~convexlearn.solvers.kernel_svm.polish.polish_expansion`
    with the same options, the KKT report from the Gram operator's own products. Status
    "optimal" when certified, else "inaccurate" (no fallback here)."""
    from .polish import polish_expansion
    timer = Timer()
    n = svm.n_samples
    gram = svm.gram_operator
    everything = np.arange(n)
    K = np.ascontiguousarray(gram.block(everything, everything))
    y = np.asarray(svm.y, dtype=float)
    C = np.broadcast_to(np.asarray(svm.C_bounds, dtype=float), (n,))
    res = smo(KernelColumns.from_gram(K), y, C, True, tol, max(100_000, 100 * n), shrinking)
    g = y - res.v
    out = polish_expansion(y, C, res.alpha, g, True, lambda r, c: K[np.ix_(r, c)],
                           lambda B: K @ B, threshold=THRESHOLD, max_rounds=ROUNDS,
                           margin_tol=MARGIN_TOL)
    alpha, b, g = (res.alpha, None, g) if out is None else out
    sol = reported_solution(svm, alpha, g, b, None, kkt_tol)
    label_exact_smo(sol, svm, n_iter=res.n_iter, time_s=timer(), gap_tol=gap_tol,
                    smo_tol=[tol], polished=out is not None, kkt_tol=kkt_tol,
                    shrinking=shrinking, loop="numpy reference")
    return sol
