"""Optimality certificate of regularized ERM, recomputed from the data.

For F(w, b) = (1/n) sum_i loss(y_i, f_i) + lam R(w), f = A x with A = [X, 1] and
x = (w, b), the sum and affine chain rules are exact for finite convex functions::

    dF(x) = { (1/n) A^T g + lam (r, 0) :  g_i in d loss(y_i, .)(f_i),  r in dR(w) }

A point is optimal iff 0 is in dF(x). The report gives

* ``distance`` = min ||U^{-1} ((1/n) A^T g + lam (r, 0))|| over that set: the norm of
  the minimum-norm subgradient, each coordinate in units of F (U = diag of the columns'
  root mean squares, 1 for the intercept), so that it does not depend on the units of
  the features. Every per-sample interval [lo_i, hi_i] and every
  per-coordinate subdifferential of l1/elastic net is a box, so the minimization is a
  box-constrained least-squares problem, solved exactly by scipy's ``lsq_linear``
  (bounded-variable least squares); only ||w||_p (p > 1) at w = 0, whose subdifferential
  is the dual-norm ball, goes through a small cvxpy SOCP. A floating-point point never
  lands exactly on a kink, so margins within ``kink_tol`` of a kink (and |w_j| <=
  ``kink_tol`` for l1) are treated as on it; the band is reported.
* ``suboptimality`` = F(x) - F* against the exact optimum F* (cvxpy reference).

Unregularized logistic or exponential loss on linearly separable data has no finite
minimizer (the infimum 0 is approached along a separating direction);
:func:`recession_direction` detects it with an LP.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import cvxpy as cp
import numpy as np
from scipy.optimize import linprog, lsq_linear

from ..losses import Loss
from ..penalties import Penalty

__all__ = ["OptimalityReport", "subgradient_distance", "minimum_norm_subgradient",
           "recession_direction"]


@dataclass
class OptimalityReport:
    """How far an ERM point is from optimal.

    Attributes
    ----------
    distance : float
        Distance of 0 to the subdifferential of F at the point (norm of the minimum-norm
        subgradient); 0 exactly at a minimizer.
    suboptimality : float
        F(x) - F*, with F* from the exact solver (nan when no reference was computed).
    passed : bool
        ``distance <= tol`` and ``suboptimality <= tol * max(1, |F*|)``.
    tol : float
    objective, optimal_objective : float
        F(x) and F*.
    details : dict
        ``kink_tol``, ``on_kink`` (samples treated as on a kink), ``zero_coordinates``
        (penalty coordinates treated as 0), ``multipliers`` (the minimizing g),
        ``method`` (how the projection was computed), ``smooth_gradient_norm``.
    """

    distance: float
    suboptimality: float
    passed: bool
    tol: float
    objective: float = math.nan
    optimal_objective: float = math.nan
    details: dict = field(default_factory=dict)

    def summary(self) -> str:
        """One line: the verdict, the distance of 0 to dF, F - F*, F, F* and the kink count."""
        verdict = "passed" if self.passed else "FAILED"
        return (f"optimality {verdict} at tol={self.tol:g}: distance of 0 to dF = "
                f"{self.distance:.3e}, F - F* = {self.suboptimality:.3e} "
                f"(F = {self.objective:.12g}, F* = {self.optimal_objective:.12g}; "
                f"{len(self.details.get('on_kink', ()))} samples on a kink, "
                f"kink band {self.details.get('kink_tol', float('nan')):g})")

    __str__ = summary


def subgradient_distance(X: np.ndarray, y: np.ndarray, loss: Loss, penalty: Penalty,
                         lam: float, intercept: bool, w: np.ndarray, b: float,
                         kink_tol: float = 1e-6) -> tuple[float, dict]:
    """Distance of 0 to dF(w, b), and how it was obtained (see the module docstring).

    Returns
    -------
    distance : float
    details : dict
    """
    n, d = X.shape
    f = X @ w + b
    lo, hi = loss.subdifferential(y, f, kink_tol)
    free = lo < hi
    A_T = np.vstack([X.T, np.ones(n)]) if intercept else X.T       # (dim, n)
    # Coordinate j of a subgradient is in units of F times units of x_j: measured in units
    # of F, it is divided by the RMS of feature j (1 for the intercept and zero columns),
    # so the distance does not change with the units of X (found in review: at features
    # x 1e-8 a wrong point passed at 1e-6, at x 1e8 exact optima failed).
    units = np.sqrt(np.mean(A_T * A_T, axis=1))
    g_fixed = np.where(free, 0.0, lo)
    base = A_T @ g_fixed / n
    distance, details, z = minimum_norm_subgradient(
        base, A_T[:, free] / n, lo[free], hi[free], units, penalty, lam, w, kink_tol)
    g = g_fixed.copy()
    g[free] = z
    details["on_kink"] = np.flatnonzero(free)
    details["multipliers"] = g
    return distance, details


def minimum_norm_subgradient(base: np.ndarray, kink_columns: np.ndarray, lower: np.ndarray,
                             upper: np.ndarray, units: np.ndarray, penalty: Penalty,
                             lam: float, w: np.ndarray, kink_tol: float = 1e-6
                             ) -> tuple[float, dict, np.ndarray]:
    """min ||U^{-1} (base + M z + lam (c + r, 0))|| over lower <= z <= upper, r in dR(w) - c.

    The projection step of :func:`subgradient_distance`, on data already reduced to
    vectors of the dimension of x = (w, b): ``base`` = (1/n) A^T g over the samples off
    any kink (g their loss derivatives), ``kink_columns`` M = (1/n) A^T restricted to the
    k samples on a kink (shape (dim, k)) with their derivative intervals [lower, upper],
    ``units`` the RMS of the columns of A (zeros are read as 1). Callers that hold A
    in pieces (the distributed module) reduce it chunk by chunk and call this.

    Returns
    -------
    distance : float
    details : dict
        ``kink_tol``, ``zero_coordinates``, ``smooth_gradient_norm``, ``method``.
    z : ndarray (k,)
        The minimizing multipliers of the samples on a kink.
    """
    dim = base.shape[0]
    d = np.asarray(w).shape[0]
    units = np.where(units > 0, units, 1.0)
    base = np.array(base, dtype=float, copy=True)
    cols, lows, highs = [kink_columns], [lower], [upper]
    ball_q = None
    zero_coords = np.zeros(0, dtype=int)
    if lam > 0 and penalty.name != "none":
        sub = penalty.subdifferential(w, kink_tol)
        if sub[0] == "ball":
            ball_q = sub[1]
        else:
            _, c, r_lo, r_hi = sub
            base[:d] += lam * c
            box = r_lo < r_hi
            zero_coords = np.flatnonzero(box)
            E = np.zeros((dim, box.sum()))
            E[zero_coords, np.arange(box.sum())] = lam
            cols.append(E)
            lows.append(r_lo[box])
            highs.append(r_hi[box])
    M = np.hstack(cols) / units[:, None]
    base = base / units
    lb, ub = np.concatenate(lows), np.concatenate(highs)
    k_kink = kink_columns.shape[1]
    details = {"kink_tol": kink_tol, "zero_coordinates": zero_coords,
               "smooth_gradient_norm": float(np.linalg.norm(base))}
    z = np.zeros(k_kink)
    if ball_q is not None:
        # min ||base + M z + lam (r, 0)|| over the box and the q-ball. The returned point
        # is made exactly feasible (z clipped, r scaled into the ball), so the distance
        # evaluated there is a true upper bound whatever the SOCP solver's tolerance.
        k = M.shape[1]
        r = cp.Variable(d)
        pad = np.vstack([np.eye(d), np.zeros((dim - d, d))]) / units[:, None]
        expr, cons = base + lam * (pad @ r), [cp.norm(r, ball_q) <= 1]
        if k:
            zv = cp.Variable(k)
            expr, cons = expr + M @ zv, cons + [zv >= lb, zv <= ub]
        cp.Problem(cp.Minimize(cp.norm(expr)), cons).solve(solver="CLARABEL")
        r_val = r.value / max(1.0, float(np.linalg.norm(r.value, ball_q)))
        z_val = np.clip(zv.value, lb, ub) if k else np.zeros(0)
        distance = float(np.linalg.norm(base + M @ z_val + lam * (pad @ r_val)))
        z = z_val[:k_kink]
        details["method"] = f"cvxpy SOCP (dual-norm ball, q={ball_q:g}, at w = 0)"
    elif M.shape[1] == 0:
        distance = float(np.linalg.norm(base))
        details["method"] = "gradient (no kink, no zero coordinate)"
    else:
        res = lsq_linear(M, -base, bounds=(lb, ub), method="bvls", tol=1e-14)
        distance = float(np.linalg.norm(base + M @ res.x))
        z = res.x[:k_kink]
        details["method"] = "bounded-variable least squares (scipy lsq_linear, bvls)"
    return distance, details, z


def recession_direction(X: np.ndarray, y: np.ndarray, intercept: bool = True,
                        tol: float = 1e-9):
    """Is there (v, c) != 0 with y_i (<v, x_i> + c) >= 0 for all i, > 0 for some i?

    Then logistic and exponential losses decrease strictly along (v, c) forever and the
    unregularized ERM has no finite minimizer (complete or quasi-complete separation;
    Albert & Anderson 1984). LP (HiGHS): maximize sum_i y_i (<v, x_i> + c) subject to
    y_i (<v, x_i> + c) >= 0 and -1 <= v_j, c <= 1.

    Returns
    -------
    found : bool
    v : ndarray, c : float
        The direction (zero when none).
    n_strict : int
        Samples with y_i (<v, x_i> + c) > 0 along it.
    """
    n, d = X.shape
    A = y[:, None] * (np.column_stack([X, np.ones(n)]) if intercept else X)
    # The LP runs on A with columns, then rows, scaled to max |entry| 1: positive scalings
    # keep the sign pattern of every y_i (<v, x_i> + c), so the answer is the same, but a
    # direction that needs a feature of scale 1e-8 next to one of 1e8 is no longer lost
    # in the box bounds and tolerances. The direction is mapped back (v_j / column scale).
    col = np.abs(A).max(axis=0)
    col[col == 0] = 1.0
    A = A / col
    row = np.abs(A).max(axis=1)
    A = A / np.where(row > 0, row, 1.0)[:, None]
    res = linprog(-A.sum(axis=0), A_ub=-A, b_ub=np.zeros(n), bounds=[(-1.0, 1.0)] * A.shape[1],
                  method="highs")
    # The LP is always feasible and bounded (0 is feasible, box bounds); a solver failure
    # is reported as "no direction found" by the caller's own message.
    if res.status != 0:
        return False, np.zeros(d), 0.0, 0
    s = A @ res.x
    found = -res.fun > tol * n and s.min() >= -tol
    z = res.x / col
    v, c = z[:d], (float(z[d]) if intercept else 0.0)
    return bool(found), v, c, int(np.sum(s > tol))
