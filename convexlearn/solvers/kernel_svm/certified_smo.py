"""The certified kernel route: SMO to a tight tolerance, active-set polish, KKT certificate.

``certified_smo(svm)`` is the exact answer of a kernel SVM at LIBSVM's scale:

1. SMO (:func:`~convexlearn.solvers.kernel_svm.smo.smo_compiled`: second-order working set,
   shrinking, kernel columns from X in a cache bounded in MB) to the maximal violation
   ``tol``; it identifies the active set (which multipliers are 0, C_i or free);
2. the active-set polish (:func:`~convexlearn.solvers.kernel_svm.polish.polish_expansion`) solves
   the KKT system of that set exactly (only the |F| x |F| block of K) and corrects the
   set until every margin agrees with it;
3. the KKT report (:func:`~convexlearn.certify.kkt.kkt_report`) recomputes every
   residual and the duality gap from the data, with f = K (y * alpha) + b by blocks of
   rows against the support vectors only (memory O(block x n_SV), no n x n matrix).

The answer is "optimal" only when the report passes at ``kkt_tol`` and the relative
duality gap |P - D| / max(|P|, |D|) is at most ``gap_tol`` (default 1e-9). When it is not
(an active set misread at a loose SMO tolerance), SMO resumes from the polished point at
a tolerance 100 times smaller, at most ``retries`` times; an SMO run that ends at its
iteration budget (large C on a low-rank kernel: 10^5..10^6 iterations at n = 400) is
polished and certified as it stands, then resumed with twice the budget; after the
last such run the polish gets ten times its rounds (1000).
"""

from __future__ import annotations

from typing import Any


import numpy as np

from ...data import check_positive
from ...errors import NotApplicableError
from ...solution import History, Solution, Timer
from .kernel_cache import KernelColumns
from .polish import intercept_from_alpha, is_balanced, polish_expansion
from .smo import KernelSpec, _raise_diverged, smo, smo_compiled

__all__ = ["certified_smo", "memory_estimate"]

#: Memory of the kernel-product blocks (kernels.PRODUCT_BLOCK_BYTES) and their temporaries.
_PRODUCT_BYTES = 4 * 2**23


def memory_estimate(svm: Any, cache_size: float = 200.0) -> int:
    """Bytes :func:`certified_smo` allocates beyond the data: the column cache (bounded
    by ``cache_size`` MB, at most n columns), ~12 vectors of n doubles, the kernel-product
    blocks, and the free-set block of the polish (at most MAX_FREE^2 doubles; estimated
    from a free set of min(n, 2000))."""
    n = svm.n_samples
    cache = min(cache_size * 2**20, 8.0 * n * n)
    free = min(n, 2000)
    gram = 0 if (svm.X is not None and svm.kernel.known_psd) or svm._K is not None else 8 * n * n
    return int(cache + 12 * 8 * n + _PRODUCT_BYTES + 2 * 8 * free * free + gram)


def _run_smo(svm, spec, alpha0, tol, max_iter, cache_size):
    if svm.intercept:
        return smo_compiled(spec, svm.y, svm.C_bounds, tol, max_iter, True, alpha0, None,
                            cache_size, record=False)
    cols = (KernelColumns.from_kernel(svm.kernel, svm.X, cache_size)
            if spec.code != 4 else KernelColumns.from_gram(spec.K))
    if svm.sample_weight is not None:     # the reference loop has one scalar C
        raise NotApplicableError("certified_smo without intercept takes no sample "
                                 "weights; use method='exact-dual'")
    return smo(cols, svm.y, svm.C, False, tol, max_iter, True, alpha0)


#: Rounds of the active-set polish after an SMO run, and after SMO's last run when it
#: spent its whole budget (the polish is then the route's only chance to certify).
_ROUNDS, _LAST_ROUNDS = 100, 1000


def _budgets(svm, max_iter: int | None) -> tuple[int, int]:
    """(iterations of SMO's first run, total iterations). A given ``max_iter`` is both.
    Default: runs of max(10^5, 100 n) iterations, doubled after each that ends at its
    budget, up to LIBSVM's total max(10^7, 100 n); the reference loop (no intercept, a
    Python loop) keeps one run of max(10^5, 100 n)."""
    n = svm.n_samples
    if max_iter is not None:
        return int(max_iter), int(max_iter)
    first = max(100_000, 100 * n)
    return first, (max(10**7, 100 * n) if svm.intercept else first)


def _feasible(svm, alpha: np.ndarray) -> bool:
    """0 <= alpha <= C_i and, with an intercept, |y^T alpha| <= 1e-12 n max C_i."""
    C = svm.C_bounds
    scale = float(np.max(C)) if np.all(np.isfinite(C)) else max(1.0, float(np.max(alpha)))
    in_box = bool(np.all(alpha >= 0.0) and np.all(alpha <= C))
    return in_box and (not svm.intercept or is_balanced(svm.y * alpha, scale))


def certified_smo(svm: Any, *, tol: float = 1e-3, kkt_tol: float = 1e-6, gap_tol: float = 1e-9,
                  cache_size: float = 200.0, max_iter: int | None = None,
                  retries: int = 3, polish: bool = True) -> Solution:
    """Solve a (kernel) SVM exactly: SMO, active-set polish, certificate (module docstring).

    Parameters
    ----------
    svm : convexlearn.SVM
    tol : float
        SMO's maximal KKT violation m(a) - M(a) before the polish (in units of the
        margins, LIBSVM's ``-e`` and its default 1e-3): on the benchmarks (rbf n = 2000 ..
        20000, digits) the active set is then already right or one polish round from it;
        where it is not, the retries tighten it.
    kkt_tol : float
        Tolerance of the KKT report (scaled residuals, see :mod:`convexlearn.certify.kkt`).
    gap_tol : float
        Relative duality gap |P - D| / max(|P|, |D|) required for "optimal".
    cache_size : float
        Kernel column cache of SMO, in MB (LIBSVM's ``-m``, default 200).
    max_iter : int, optional
        SMO's iteration budget (per run and in total). Default: a first run of
        max(10^5, 100 n) iterations; a run that ends at its budget is polished and
        certified, then resumed with twice the budget, up to max(10^7, 100 n) iterations
        in all (LIBSVM's cap); without intercept (the reference loop) one run of
        max(10^5, 100 n).
    retries : int
        SMO restarts (tolerance / 100 each) when the certificate fails.
    polish : bool
        False: certify SMO's own point (the restarts then carry the whole burden).

    Returns
    -------
    Solution
        ``alpha``, ``b``, ``dual_coef = y * alpha``, ``xi``, ``w`` (linear kernel),
        ``objective`` = P from the report, ``report`` (the KKT report at ``kkt_tol``),
        status "optimal" (certified) or "inaccurate"; ``provenance`` with the SMO
        tolerances, iterations, whether the polish was kept, and the certificate's
        figures (``max_violation``, ``relative_gap``).
    """
    tol = check_positive("tol", tol)
    kkt_tol = check_positive("kkt_tol", kkt_tol)
    gap_tol = check_positive("gap_tol", gap_tol)
    timer = Timer()
    y, C = svm.y, svm.C_bounds
    spec = KernelSpec.of(svm)
    alpha0, best = None, None
    iterations, tols, polished_any = 0, [], False
    chunk, budget = _budgets(svm, max_iter)
    attempt = 0
    while True:
        res = _run_smo(svm, spec, alpha0, tol, chunk, cache_size)
        if res.status == "diverged":
            _raise_diverged(svm, res)
        iterations += res.n_iter
        tols.append(tol)
        g = y - res.v
        # SMO's last word (its budget spent): the polish, an active-set method that
        # converges from any feasible point given rounds, gets ten times as many
        last = res.status == "max_iter" and iterations >= budget
        refined = (polish_expansion(y, C, res.alpha, g, svm.intercept, svm.kernel_block,
                                    svm.gram_products, max_rounds=_LAST_ROUNDS if last
                                    else _ROUNDS) if polish else None)
        polished = refined is not None
        polished_any |= polished
        alpha, b, g = refined if polished else (res.alpha, None, g)
        if not svm.intercept:
            b, rule = 0.0, "no intercept"
        elif b is None:
            b, rule = intercept_from_alpha(y, C, alpha, g)
        else:
            rule = "active-set polish"
        beta = y * alpha
        w = svm.X.T @ beta if svm.kernel.is_linear and svm.X is not None else None
        xi = None if svm.hard_margin else np.maximum(0.0, 1.0 - y * (g + b))
        sol = Solution(w=w, b=float(b), alpha=alpha, xi=xi, dual_coef=beta)
        sol.extra["intercept_rule"] = rule
        sol.report = report = svm.kkt(sol, tol=kkt_tol)
        certified = report.passed and report.relative_gap <= gap_tol
        if best is None or report.max_violation < best.report.max_violation or certified:
            best = sol
        if certified:
            break
        # resume from the polished point only when it is feasible (in the box and
        # balanced); SMO's own point always is
        alpha0 = alpha if polished and _feasible(svm, alpha) else res.alpha
        if res.status == "max_iter":
            # SMO ran out of its chunk at this tolerance (large C on a low-rank kernel
            # needs 10^5..10^6 iterations at n = 400): resume it with twice the chunk,
            # polishing in between, within the total budget
            if iterations >= budget:
                break
            chunk = min(2 * chunk, budget - iterations)
            continue
        attempt += 1
        if attempt > retries:
            break
        tol = max(tol / 100.0, 1e-15)
    report = best.report
    best.status = ("optimal" if report.passed and report.relative_gap <= gap_tol
                   else "inaccurate")
    best.objective = report.primal_objective
    best.method = "exact-smo"
    best.n_iter = iterations
    best.history = History()
    best.time_s = timer()
    label = "SVM dual (SMO, then active-set polish)"
    if svm.sample_weight is not None:
        label += " with per-sample costs C_i = C s_i"
    best.provenance = {"solver": "convexlearn.smo + active-set polish", "formulation": label,
                       "smo_tol": tols,
                       "polished": polished_any, "max_violation": report.max_violation,
                       "relative_gap": report.relative_gap, "gap_tol": gap_tol,
                       "kkt_tol": kkt_tol, "cache_size_mb": cache_size}
    if res.cache is not None:
        best.extra["cache"] = res.cache
    return best
