"""The last stage of the exact linear SVM: the SVM on a working set of samples by an
interior point (chunking, Osuna et al. 1997), then the polish from its margins
(:func:`~.linear_polish.polish_w`); samples outside the set that violate their margin join
it. Called by :func:`convexlearn.solvers.linear_svm.linear_exact.solve_linear_exact` when
every faster stage missed the certificate.
"""

from __future__ import annotations

from typing import Any

import math

import numpy as np

from .linear_polish import polish_w

__all__ = ["working_set_polish"]


def _reduced_qp(Zy: np.ndarray, C: np.ndarray, intercept: bool, work: np.ndarray,
                cost_scaled: bool = True):
    """The SVM primal on a working set U (chunking, Osuna et al. 1997), by an interior
    point (Clarabel) of size p + |U|; the samples outside U are assumed beyond the margin
    (a_i = 0)::

        min_u,xi  1/2 ||w||^2 + sum_U C_i xi_i
        s.t.      <r_i, u> >= 1 - xi_i,  xi_i >= 0   (i in U; xi = 0 for the hard margin)

    Returns (alpha, u) with a_U the multipliers of the margin constraints, or None when
    the solver fails. ``cost_scaled=False`` keeps the objective's own scale (better when
    the answer is nearly a hard margin, every a_i << C_i).
    """
    import cvxpy as cp
    p = Zy.shape[1]
    d = p - 1 if intercept else p
    R_U = Zy[work]
    C_U = C[work]
    # A diagonal change of variables u = v / c (c_j = max_i |r_ij|: every column of the
    # constraints at scale 1) and the objective divided by max C_i: the same problem, but
    # the interior point sees coefficients of one scale (features of 1e6 next to 1e-3 and
    # C sigma^2 ~ 1e13 failed as 'infeasible' / 'unbounded' in their raw form).
    c = np.max(np.abs(R_U), axis=0)
    c = np.where(c > 0, c, 1.0)
    finite = bool(np.isfinite(C_U).all())
    cost = float(np.max(C_U)) if finite and cost_scaled and np.max(C_U) > 0 else 1.0
    v = cp.Variable(p)
    objective = 0.5 * cp.sum_squares(cp.multiply(1.0 / (c[:d] * math.sqrt(cost)), v[:d]))
    if finite:
        xi = cp.Variable(work.size, nonneg=True)
        margin = (R_U / c) @ v >= 1 - xi
        objective = objective + (C_U / cost) @ xi
    else:
        margin = (R_U / c) @ v >= 1
    problem = cp.Problem(cp.Minimize(objective), [margin])
    try:
        problem.solve(solver="CLARABEL")
    except cp.error.SolverError:
        return None
    if problem.status not in ("optimal", "optimal_inaccurate") or margin.dual_value is None:
        return None
    alpha = np.zeros(Zy.shape[0])
    alpha[work] = np.clip(np.asarray(margin.dual_value, dtype=float) * cost, 0.0, C_U)
    return alpha, np.asarray(v.value, dtype=float) / c


def working_set_polish(Zy: np.ndarray, C: np.ndarray, intercept: bool, alpha: np.ndarray,
                       w: np.ndarray, b: float, scale: float, rounds: int = 8) -> Any:
    """Polish from the margins of a rough point (w, b): U = the samples on or inside the
    margin (m_i <= 1.1), the free multipliers and the 4p samples nearest the margin; the
    SVM on U (:func:`_reduced_qp`), then :func:`polish_w` from its margins. Samples
    outside U that violate their margin join U and the QP runs again; the last round
    takes every sample."""
    n, p = Zy.shape
    u = np.append(w, b) if intercept else w
    g = Zy @ u - 1.0
    finite = np.isfinite(C)
    free = (alpha > 1e-8 * scale) & ~(finite & (alpha >= C * (1 - 1e-8)))
    work = free | (g <= 0.1)
    work[np.argsort(np.abs(g))[:min(n, 4 * p)]] = True
    for k in range(rounds):
        if k == rounds - 1:
            work[:] = True
        reduced = _reduced_qp(Zy, C, intercept, np.flatnonzero(work))
        if reduced is None:
            if work.all():
                return None
            work[:] = True
            continue
        start, u = reduced
        result = polish_w(Zy, C, start, intercept, scale, max_rounds=40, threshold=1e-6,
                          margins=Zy @ u)
        if result is None:
            retry = _reduced_qp(Zy, C, intercept, np.flatnonzero(work), cost_scaled=False)
            if retry is not None:
                result = polish_w(Zy, C, retry[0], intercept, scale, max_rounds=40,
                                  threshold=1e-6, margins=Zy @ retry[1])
        if result is not None:
            return result
        g = Zy @ u - 1.0
        wrong = ~work & (g < 1e-6)
        if not wrong.any():
            if work.all():
                return None
            work[:] = True          # the sets were right, the polish was not: all of it
            continue
        work |= wrong
    return None
