"""Unregularized logistic / exponential ERM: the existence of a minimizer from Newton's answer.

Such a problem has a finite minimizer iff no direction (v, c) has y_i (<v, x_i> + c) >= 0
for every sample and > 0 for one (:func:`convexlearn.certify.optimality.
recession_direction`, an LP). That LP was ~90% of a 5000 x 20 solve (HiGHS, ~0.1 s
against Newton's 15 ms). Its answer "no direction" has a certificate that Newton
computes anyway: at a stationary point the multipliers lam_i = -y_i l'(f_i) s_i are
positive and balance, sum_i lam_i y_i (x_i, 1) = 0, so the class hulls meet with every
sample inside and nothing separates, even weakly. :func:`~convexlearn.certify.optimality.
recession_bound` turns them into an upper bound on the LP's optimum (weak duality, its
rounding included); when that is at most the LP's own threshold (tol n), the LP would
answer "none", and it is not run.

So the exact solve runs Newton first (at most :data:`NEWTON_BUDGET` iterations: it takes
5-10 where a minimizer exists; on separable data it walks off along the direction, ~60 ms
lost on 569 x 30); not with n <= d + 1 samples (in general position they are separable:
Newton's budget on 200 x 300 cost 1.4 s before the LP's 0.1 s). The LP runs only when Newton's answer does not certify or its multipliers do not bound the LP
(then the exact chain runs as before, from the caller's warm start).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ..certify.optimality import RECESSION_TOL, recession_bound
from ..data import is_sparse
from ..errors import ConvexLearnError
from ..solution import Solution, Timer
from ..threads import small_problem_threads
from .erm_newton import newton_route

__all__ = ["NEWTON_BUDGET", "RECESSION_TOL", "existence_needs_proof", "newton_proves_existence"]

#: Newton's iterations before the separability LP decides (5-10 where a minimizer exists).
NEWTON_BUDGET = 15


def existence_needs_proof(erm: Any) -> bool:
    """The loss reaches its infimum only at infinity (logistic, exponential), the penalty
    is absent, no proof is recorded yet, and there are more samples than d + 1 (fewer in
    general position are separable: the LP's answer, Newton's budget not spent)."""
    return (erm.loss.zero_only_at_infinity and (erm.penalty.has("zero") or erm.lam == 0)
            and erm._recession is None and erm.n_samples > erm.X.shape[1] + 1)


def newton_proves_existence(erm: Any, tol: float, warm_start: Solution | None = None
                            ) -> Solution | None:
    """Newton's certified answer when its multipliers prove that a minimizer exists (the
    proof recorded on ``erm``, as the LP's answer "no direction" would be), else None
    (the LP decides, as before).

    Parameters
    ----------
    erm : convexlearn.ERM
        Unregularized, with a loss minimal only at infinity (:func:`existence_needs_proof`).
    tol : float
        The exact certificate's relative tolerance.
    warm_start : Solution, optional
        Newton's starting point.
    """
    timer = Timer()
    with small_problem_threads(erm.X.nnz if is_sparse(erm.X) else erm.X.size):
        try:
            sol = newton_route(erm, warm_start=warm_start, tol=tol, max_iter=NEWTON_BUDGET)
        except (ConvexLearnError, np.linalg.LinAlgError, FloatingPointError):
            return None
        if not (np.all(np.isfinite(sol.w)) and np.isfinite(sol.b)):
            return None
        sol.report = erm.certificate(sol, tol=tol)
        if not sol.report.passed:
            return None
        rows = slice(None) if erm.sample_weight is None else erm.sample_weight > 0
        X = erm._dense("the existence proof (separability LP's bound)")[rows]
        y = erm.y[rows]
        lam = -y * erm.loss.derivative(y, X @ sol.w + sol.b)
        if erm.sample_weight is not None:
            lam = lam * erm.sample_weight[rows]
        bound = recession_bound(X, y, erm.intercept, lam)
    if not bound <= RECESSION_TOL * X.shape[0]:
        return None
    d = erm.X.shape[1]
    erm._recession = (False, np.zeros(d), 0.0, 0)
    sol.objective = sol.report.objective
    sol.status = "optimal"
    sol.provenance.update(route="newton", existence=(
        f"no separating direction: the multipliers -y_i l'(f_i) s_i > 0 bound the "
        f"separability LP's optimum by {bound:.3g} <= {RECESSION_TOL:g} n (weak duality)"))
    sol.time_s = timer()
    return sol
