"""The certificate of the L2-loss (squared hinge) SVM, recomputed from the data.

The problem (docs/conventions.md), margins m_i = y_i f(x_i), xi_i = max(0, 1 - m_i)::

    P(w, b) = 1/2 ||w||^2 [+ 1/2 b^2] + sum_i C_i xi_i^2
    D(a)    = sum_i a_i - 1/2 (y a)^T K (y a) [- 1/2 (y^T a)^2] - sum_i a_i^2 / (4 C_i)
              a >= 0,  y^T a = 0 (unpenalized intercept only)

The bracketed terms belong to the penalized bias (``intercept="penalized"``: LIBLINEAR's
``-B 1``, b a weight on a constant feature 1). At the optimum a_i = 2 C_i xi_i and
w = sum_i a_i y_i phi(x_i) (b = y^T a for the penalized bias). A sample of weight 0
(C_i = 0) has a_i = 0.

=======================  ======================================  ==========================
condition                 per-sample residual r_i                 scaled by
=======================  ======================================  ==========================
stationarity             ||w - sum_i a_i y_i phi(x_i)|| (and      s_w = max(||w||,
                         |b - y^T a| for the penalized bias)      sum_i a_i ||phi(x_i)||)
balance (intercept)      |sum_i a_i y_i|                         s_a
dual_feasibility         max(0, -a_i)                            s_a
multiplier_slack         |a_i - 2 C_i xi_i|                      s_a
duality_gap              (P - D(a')) / max(|P|, |D|)             (relative)
=======================  ======================================  ==========================

s_a = max_i a_i (or max_i 2 C_i xi_i; the multipliers have no box to give a scale). D is
evaluated at a' = a clipped at 0 and, for the unpenalized intercept, moved onto y^T a = 0
by scaling down the heavier class's multipliers (a lower bound on P* only there): so the
gap bounds the suboptimality of (w, b) whatever produced it.
"""

from __future__ import annotations

import math
from typing import Any, Callable

import numpy as np

from .kkt import KKTReport, relative_gap, worst_residual

__all__ = ["squared_hinge_report", "balanced_multipliers", "INTERCEPT_MODES"]

#: How the intercept enters: none (b = 0), unpenalized (C-form), penalized (LIBLINEAR -B 1).
INTERCEPT_MODES = ("none", "unpenalized", "penalized")

_TINY = np.finfo(float).tiny


def balanced_multipliers(alpha: np.ndarray, y: np.ndarray) -> np.ndarray:
    """alpha >= 0 moved onto y^T a = 0 by scaling down the class with the larger sum
    (unbounded multipliers: always feasible when both classes carry some weight)."""
    a = np.maximum(np.asarray(alpha, dtype=float), 0.0)
    pos, neg = float(a[y > 0].sum()), float(a[y < 0].sum())
    if pos > neg:
        a = np.where(y > 0, a * (neg / pos), a)
    elif neg > pos:
        a = np.where(y < 0, a * (pos / neg), a)
    return a


def squared_hinge_report(y: np.ndarray, C: Any, mode: str, f: np.ndarray, b: float,
                         w_norm2: float, quad: Callable[[np.ndarray], float],
                         w_minus: Callable[[np.ndarray], float], norms: np.ndarray,
                         alpha: np.ndarray | None = None,
                         tol: float = 1e-6) -> KKTReport:
    """The report of the module docstring for a point with decision values ``f``.

    Parameters
    ----------
    y : ndarray of {-1, +1}
    C : float or ndarray
        Per-sample costs C_i (finite, >= 0).
    mode : {"none", "unpenalized", "penalized"}
    f : ndarray
        f(x_i) = <w, phi(x_i)> + b at the training samples.
    b : float
    w_norm2 : float
        ||w||^2 of the point (without b).
    quad : callable
        ``quad(c) -> c^T K c`` = ||sum_i c_i phi(x_i)||^2 (K the training Gram matrix).
    w_minus : callable
        ``w_minus(c) -> ||w - sum_i c_i phi(x_i)||``: the stationarity residual.
    norms : ndarray
        ||phi(x_i)|| (for the scale s_w).
    alpha : ndarray, optional
        The solution's multipliers; default 2 C_i xi_i.
    """
    n = y.shape[0]
    C = np.broadcast_to(np.asarray(C, dtype=float), (n,))
    m = y * f
    xi = np.maximum(0.0, 1.0 - m)
    implied = 2.0 * C * xi
    a = implied if alpha is None else np.asarray(alpha, dtype=float)
    notes = [] if alpha is not None else ["multipliers a_i = 2 C_i xi_i taken from the margins"]
    a_use = np.where(C > 0, np.maximum(a, 0.0), 0.0)
    if mode == "unpenalized":
        a_use = balanced_multipliers(a_use, y)
    ya = y * a_use
    aQa = float(quad(ya))
    penalized = mode == "penalized"
    primal = 0.5 * w_norm2 + (0.5 * b * b if penalized else 0.0) + float(C @ (xi * xi))
    ridge = np.divide(a_use * a_use, 4.0 * C, out=np.zeros(n), where=C > 0)
    dual = float(a_use.sum()) - 0.5 * aQa - float(ridge.sum())
    if penalized:
        dual -= 0.5 * float(y @ a_use) ** 2
    s_a = max(float(np.max(np.abs(a), initial=0.0)), float(np.max(implied, initial=0.0)), _TINY)
    s_w = max(math.sqrt(max(w_norm2, 0.0)), float(np.abs(a) @ norms), _TINY)
    station = w_minus(y * a)
    if penalized:
        station = math.hypot(station, b - float(y @ a))
    res: dict = {"stationarity": station / s_w}
    if mode == "unpenalized":
        res["balance"] = abs(float(y @ a)) / s_a
    res["dual_feasibility"] = np.maximum(0.0, -a) / s_a
    res["multiplier_slack"] = np.abs(a - implied) / s_a
    rel = (primal - dual) / max(abs(primal), abs(dual), _TINY)
    # |P - D|: a negative gap beyond the tolerance (weak duality broken) fails as well
    res["duality_gap"] = abs(rel)
    max_violation = worst_residual(float(np.max(r)) if np.ndim(r) else float(r)
                                   for r in res.values())
    a_tol = tol * s_a
    support = a > a_tol
    return KKTReport(
        passed=bool(max_violation <= tol), tol=tol, max_violation=max_violation,
        duality_gap=primal - dual, relative_gap=relative_gap(primal, dual),
        primal_objective=primal, dual_objective=dual, residuals=res,
        support=np.flatnonzero(support), free=np.flatnonzero(support),
        bounded=np.zeros(0, dtype=int), margin_support=np.flatnonzero(m <= 1 + tol),
        disagreements=np.flatnonzero((support & (m > 1 + tol)) | (~support & (m < 1 - tol)
                                                                   & (C > 0))),
        margins=m, alpha=a, notes=notes)
