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
* ``relative_distance`` = distance / (the size of the terms that cancel in it), and the
  Fenchel duality gap at the same multipliers divided by max(|P|, |D|) (floors stated at
  :data:`STATIONARITY_FLOOR`, :data:`GAP_FLOOR`): these two decide ``passed``
  (:func:`certificate`), whatever algorithm produced the point.
* ``suboptimality`` = F(x) - F* against an exact optimum F*, only when one is asked for.

Unregularized logistic or exponential loss on linearly separable data has no finite
minimizer (the infimum 0 is approached along a separating direction);
:func:`recession_direction` detects it with an LP; :func:`recession_bound` shows the
LP's answer "none" from a solver's positive multipliers without solving it.
"""

from __future__ import annotations

from typing import Any

import math
from dataclasses import dataclass, field

import numpy as np
from scipy.optimize import linprog, lsq_linear

from ..data import DENSIFY_LIMIT_BYTES, sq_norms
from ..losses import Loss
from .duality import dual_objective
from ..penalties import Penalty

__all__ = ["OptimalityReport", "certificate", "fixed_multipliers", "null_scale",
           "subgradient_distance", "minimum_norm_subgradient", "relative_report",
           "stationarity_scale", "recession_direction", "recession_bound", "RECESSION_TOL"]

#: :func:`recession_direction`'s threshold: a direction is found iff the LP's optimum
#: exceeds RECESSION_TOL n (n samples; the LP's columns, then rows, scaled to max |entry| 1).
RECESSION_TOL = 1e-9


#: Floors of the relative certificate, as fractions of the null scale S0 (1 for a
#: classification loss, whose values and slopes at margin 0 are O(1); the variance of y,
#: or its mean square without an intercept, for the squared regression loss): the scale of
#: the stationarity terms is at least STATIONARITY_FLOOR * sqrt(S0), that of the objective
#: at least GAP_FLOOR * S0. They matter only for an optimum near 0 (an exact interpolation).
STATIONARITY_FLOOR = 1e-3
GAP_FLOOR = 1e-3


@dataclass
class OptimalityReport:
    """How far an ERM point is from optimal (relative figures decide; see below).

    Attributes
    ----------
    distance : float
        Distance of 0 to the subdifferential of F at the point (norm of the minimum-norm
        subgradient, coordinates in units of F); 0 exactly at a minimizer.
    relative_distance : float
        ``distance / scale``: ``scale`` is the size of the terms that cancel at an optimum,
        the norm over coordinates j of ``||X_j|| ||g|| / n + lam |r_j|`` (same units; g
        the loss multipliers, r the penalty subgradient), floored at
        ``STATIONARITY_FLOOR * sqrt(S0)``.
    duality_gap, relative_gap : float
        P - D at the certificate's multipliers made dual feasible
        (:mod:`convexlearn.certify.duality`), and ``(P - D) / max(|P|, |D|, GAP_FLOOR * S0)``;
        nan where no dual is written (penalty none or lp, lam = 0).
    suboptimality : float
        F(x) - F*, only when a reference F* was asked for (else nan); not part of ``passed``.
    passed : bool
        ``relative_distance <= tol`` and (``relative_gap <= tol`` where the gap is defined).
    tol : float
    objective, optimal_objective : float
        F(x) and F* (nan when not asked).
    details : dict
        ``kink_tol``, ``on_kink`` (samples treated as on a kink), ``zero_coordinates``
        (penalty coordinates treated as 0), ``multipliers`` (the minimizing g),
        ``method`` (how the projection was computed), ``scale``, ``dual_objective``,
        ``smooth_gradient_norm``.
    """

    distance: float
    suboptimality: float
    passed: bool
    tol: float
    objective: float = math.nan
    optimal_objective: float = math.nan
    details: dict = field(default_factory=dict)
    relative_distance: float = math.nan
    duality_gap: float = math.nan
    relative_gap: float = math.nan

    def summary(self) -> str:
        """One line: the verdict, the relative distance and gap, F, and the kink count."""
        verdict = "passed" if self.passed else "FAILED"
        sub = ("" if math.isnan(self.suboptimality) else
               f", F - F* = {self.suboptimality:.3e} (F* = {self.optimal_objective:.12g})")
        return (f"optimality {verdict} at tol={self.tol:g} (relative): distance of 0 to dF = "
                f"{self.relative_distance:.3e} ({self.distance:.3e} absolute), duality gap "
                f"{self.relative_gap:.3e}; F = {self.objective:.12g}{sub}; "
                f"{len(self.details.get('on_kink', ()))} samples on a kink, "
                f"kink band {self.details.get('kink_tol', float('nan')):g}")

    __str__ = summary


def null_scale(loss: Loss, y: np.ndarray, intercept: bool) -> float:
    """S0: 1 for a classification loss; Var(y) (mean y^2 without intercept) for a
    regression loss, 1 when that is 0."""
    if loss.margin_based:
        return 1.0
    s0 = float(np.var(y) if intercept else np.mean(y * y))
    return s0 if s0 > 0 else 1.0


def column_rms(X: Any) -> np.ndarray:
    """Root mean square of each column (1 for a zero column), without an n x d temporary."""
    n = X.shape[0]
    sq = sq_norms(X, axis=0)          # a sparse X read in place (no copy of its values)
    units = np.sqrt(sq / n)
    return np.where(units > 0, units, 1.0)


def subgradient_distance(X: np.ndarray, y: np.ndarray, loss: Loss, penalty: Penalty,
                         lam: float, intercept: bool, w: np.ndarray, b: float,
                         kink_tol: float = 1e-6, units: np.ndarray | None = None,
                         scores: np.ndarray | None = None, XTg: np.ndarray | None = None,
                         sample_weight: np.ndarray | None = None,
                         scaled_columns: bool = False,
                         multipliers: np.ndarray | None = None) -> tuple[float, dict]:
    """Distance of 0 to dF(w, b), and how it was obtained (see the module docstring).

    ``scaled_columns``: the box least squares on unit-norm columns (the same problem, its
    answer evaluated on the original matrix): a second opinion for badly scaled data.

    ``multipliers``: loss multipliers g proposed by the solver (the SVM route's dual point);
    the kink samples take them, clipped to their intervals, instead of the box least
    squares: a feasible choice, so the distance is still a true upper bound, computed by
    two products with X (no dense block of the kink samples' rows).

    ``units``: the root mean square of each column of X (computed when not given).
    ``scores`` (X w + b) and ``XTg`` (X^T g at the fixed part of the multipliers, see
    :func:`fixed_multipliers`) may be given: a path certifies all its points with two
    matrix products instead of two passes over X per point.
    ``details["scale"]`` is the size of the cancelling terms (see
    :class:`OptimalityReport`), before its floor.

    With sample weights s the loss term is (1/sum s) sum_i s_i loss_i: sample i's
    subdifferential interval is scaled by v_i = n s_i / sum s (the (1/n) A^T g form stays;
    ``XTg``, if given, must be of the weighted multipliers).

    Returns
    -------
    distance : float
    details : dict
    """
    n, d = X.shape
    f = X @ w + b if scores is None else scores                # pass 1 over X
    # Coordinate j of a subgradient is in units of F times units of x_j: measured in units
    # of F, it is divided by the RMS of feature j (1 for the intercept and zero columns),
    # so the distance does not change with the units of X (found in review: at features
    # x 1e-8 a wrong point passed at 1e-6, at x 1e8 exact optima failed).
    units = np.append(column_rms(X) if units is None else units, [1.0] * int(intercept))
    if not loss.kinks() and sample_weight is None:
        # a differentiable loss: the multipliers are its derivative, none free (the general
        # branch below with every interval a point, without its n-vector temporaries)
        g = loss.derivative(y, f)
        if XTg is None:
            XTg = np.asarray(X.T @ g).ravel()                  # pass 2 over X
        base = XTg / n
        if intercept:
            base = np.append(base, g.sum() / n)
        empty = np.zeros(0)
        distance, details, _, r_pen = _project(base, np.zeros((base.shape[0], 0)), empty,
                                               empty, units, penalty, lam, w, kink_tol,
                                               scaled_columns)
        details.update(on_kink=np.zeros(0, dtype=np.int64), multipliers=g, XTg=XTg,
                       scores=f)
        details["scale"] = stationarity_scale(float(np.linalg.norm(g)), n, lam, penalty,
                                              r_pen, units)
        return distance, details
    lo, hi = loss.subdifferential(y, f, kink_tol)
    if sample_weight is not None:
        v = np.asarray(sample_weight, float) * (n / np.sum(sample_weight))
        lo, hi = lo * v, hi * v
    free = lo < hi
    hinted = multipliers is not None
    g_fixed = np.where(free, np.clip(multipliers, lo, hi) if hinted else 0.0, lo)
    if hinted:
        on_kink, free = np.flatnonzero(free), np.zeros(n, dtype=bool)
        XTg = None
    if XTg is None:
        XTg = np.asarray(X.T @ g_fixed).ravel()                # pass 2 over X
    base = XTg / n
    if intercept:
        base = np.append(base, g_fixed.sum() / n)
    idx_free = np.flatnonzero(free)
    Xf = X[idx_free]
    Xf = Xf.toarray() if hasattr(Xf, "toarray") else np.asarray(Xf)
    A_free = (np.vstack([Xf.T, np.ones(len(idx_free))]) if intercept else Xf.T) / n
    distance, details, z, r_pen = _project(base, A_free, lo[free], hi[free], units, penalty,
                                           lam, w, kink_tol, scaled_columns)
    details["on_kink"] = on_kink if hinted else idx_free
    if hinted:
        details["method"] = "the solver's multipliers on the kink samples (clipped)"
    g = g_fixed.copy()
    g[free] = z
    details["multipliers"] = g
    if idx_free.size:       # X^T g at the final multipliers (kink samples moved)
        XTg = XTg + Xf.T @ (g - g_fixed)[idx_free]
    details["XTg"], details["scores"] = XTg, f
    details["scale"] = stationarity_scale(float(np.linalg.norm(g)), n, lam, penalty, r_pen,
                                          units)
    return distance, details


def fixed_multipliers(y: np.ndarray, loss: Loss, scores: np.ndarray,
                      kink_tol: float = 1e-6) -> np.ndarray:
    """The loss multipliers that the kinks do not leave free (0 on a kink): what
    :func:`subgradient_distance` multiplies by X^T first."""
    lo, hi = loss.subdifferential(y, scores, kink_tol)
    return np.where(lo < hi, 0.0, lo)


def relative_report(distance: float, details: dict, P: float, D: float, s0: float,
                    tol: float) -> OptimalityReport:
    """The verdict from the certificate's figures: ``relative_distance`` = distance /
    max(details["scale"], STATIONARITY_FLOOR sqrt(S0)) and ``relative_gap`` = (P - D) /
    max(|P|, |D|, GAP_FLOOR S0) (nan where D is nan: no gap written); ``passed`` iff both
    are <= tol (the gap where defined). Shared by the in-memory and the chunk-wise
    certificates."""
    rel_distance = distance / max(details["scale"], STATIONARITY_FLOOR * math.sqrt(s0))
    gap = P - D
    rel_gap = gap / max(abs(P), abs(D), GAP_FLOOR * s0) if math.isfinite(D) else \
        (math.nan if math.isnan(D) else math.inf)
    details.update(dual_objective=D, null_scale=s0)
    gap_ok = math.isnan(rel_gap) or rel_gap <= tol
    return OptimalityReport(distance=distance, suboptimality=math.nan,
                            passed=bool(rel_distance <= tol and gap_ok), tol=tol,
                            objective=P, details=details, relative_distance=rel_distance,
                            duality_gap=gap, relative_gap=rel_gap)


def stationarity_scale(g_norm: float, n: int, lam: float, penalty: Penalty,
                       r_pen: np.ndarray, units: np.ndarray) -> float:
    """The size of the terms that cancel in the subgradient, per coordinate in units of
    F: |(1/n) A_j^T g| <= ||A_j|| ||g|| / n = ||g|| U_j / sqrt(n), and lam |r_j| (the norm
    over coordinates of their sum divided by U_j)."""
    pen_size = np.zeros(units.shape[0])
    if lam > 0 and not penalty.has("zero"):
        pen_size[:r_pen.shape[0]] = lam * np.abs(r_pen)
    return float(np.linalg.norm(g_norm / math.sqrt(n) + pen_size / units))


def certificate(X: np.ndarray, y: np.ndarray, loss: Loss, penalty: Penalty, lam: float,
                intercept: bool, w: np.ndarray, b: float, tol: float = 1e-9,
                kink_tol: float = 1e-6, units: np.ndarray | None = None,
                col_sums: np.ndarray | None = None, scores: np.ndarray | None = None,
                XTg: np.ndarray | None = None,
                sample_weight: np.ndarray | None = None,
                multipliers: np.ndarray | None = None,
                s0: float | None = None) -> OptimalityReport:
    """The relative certificate of (w, b): stationarity distance and duality gap.

    Two passes over X (the scores X w + b, then X^T g; a third, X^T g+, only for a margin
    loss with an intercept whose dual point must be rebalanced); ``units`` (column RMS),
    ``col_sums`` (X^T 1), ``scores`` and ``XTg`` may be given (see
    :func:`subgradient_distance`) by a caller that certifies many points of one problem.

    ``passed`` = ``relative_distance <= tol`` and ``relative_gap <= tol`` (where a gap is
    defined); see :class:`OptimalityReport` for the scales and floors. No reference
    optimum is computed (``suboptimality`` is nan). With ``sample_weight`` the objective is
    the weighted mean of the losses, and the gap is that of its Fenchel dual
    (:func:`convexlearn.certify.duality.dual_objective`). ``multipliers``: the solver's
    loss multipliers, tried first on the kink samples (see :func:`subgradient_distance`);
    when they do not pass, the box least squares decides (where its dense block of the
    kink samples fits below data.DENSIFY_LIMIT_BYTES). ``s0``: :func:`null_scale`, when the
    caller keeps it.
    """
    s0 = null_scale(loss, y, intercept) if s0 is None else s0
    n = X.shape[0]

    def report(scaled_columns: bool, hint=None) -> OptimalityReport:
        distance, details = subgradient_distance(X, y, loss, penalty, lam, intercept, w, b,
                                                 kink_tol, units, scores, XTg, sample_weight,
                                                 scaled_columns=scaled_columns,
                                                 multipliers=hint)
        losses = loss.value(y, details["scores"])
        P = float(np.mean(losses) if sample_weight is None
                  else np.asarray(sample_weight) @ losses / np.sum(sample_weight))
        if lam > 0:
            P += lam * penalty.value(w)
        XTg_final = details.pop("XTg")
        D = dual_objective(X, y, loss, penalty, lam, intercept, details["multipliers"],
                           XTg_final, col_sums, sample_weight)
        del details["scores"]
        details["n_samples"] = n
        return relative_report(distance, details, P, D, s0, tol)

    if multipliers is not None:
        hinted = report(False, np.asarray(multipliers, dtype=float))
        kinks = hinted.details["on_kink"].size * (X.shape[1] + 1) * 8
        if hinted.passed or kinks > DENSIFY_LIMIT_BYTES:
            return hinted
    first = report(False)
    if first.passed or not first.details["method"].startswith("bounded-variable"):
        return first
    # a second feasible multiplier from the column-scaled problem (a true upper bound on
    # the distance, a dual point for the gap, as the first): the one that passes stands
    second = report(True)
    if second.passed:
        second.details["method"] += " on unit-norm columns"
        return second
    return first


def minimum_norm_subgradient(base: np.ndarray, kink_columns: np.ndarray, lower: np.ndarray,
                             upper: np.ndarray, units: np.ndarray, penalty: Penalty,
                             lam: float, w: np.ndarray, kink_tol: float = 1e-6,
                             scaled_columns: bool = False) -> tuple[float, dict, np.ndarray]:
    """min ||U^{-1} (base + M z + lam (c + r, 0))|| over lower <= z <= upper, r in dR(w) - c.

    The projection step of :func:`subgradient_distance`, on data already reduced to
    vectors of the dimension of x = (w, b): ``base`` = (1/n) A^T g over the samples off
    any kink (g their loss derivatives), ``kink_columns`` M = (1/n) A^T restricted to the
    k samples on a kink (shape (dim, k)) with their derivative intervals [lower, upper],
    ``units`` the RMS of the columns of A (zeros are read as 1). Callers that hold A
    in pieces (the distributed module) reduce it chunk by chunk and call this.

    ``scaled_columns``: the projection on unit-norm columns (see
    :func:`subgradient_distance`).

    Returns
    -------
    distance : float
    details : dict
        ``kink_tol``, ``zero_coordinates``, ``smooth_gradient_norm``, ``method``,
        ``penalty_subgradient`` (the r of the minimizer, length d).
    z : ndarray (k,)
        The minimizing multipliers of the samples on a kink.
    """
    distance, details, z, r_pen = _project(base, kink_columns, lower, upper,
                                           np.where(units > 0, units, 1.0), penalty, lam, w,
                                           kink_tol, scaled_columns)
    details["penalty_subgradient"] = r_pen
    return distance, details, z


def _project(base, kink_columns, lower, upper, units, penalty, lam, w, kink_tol,
             scaled_columns=False):
    """:func:`minimum_norm_subgradient`, also returning the penalty's subgradient c + r at
    the minimizer (its size enters the certificate's scale). ``units`` > 0."""
    dim = base.shape[0]
    d = np.asarray(w).shape[0]
    base = np.array(base, dtype=float, copy=True)
    cols, lows, highs = [kink_columns], [lower], [upper]
    ball_q = None
    zero_coords = np.zeros(0, dtype=int)
    pen_c = np.zeros(d)
    if lam > 0 and not penalty.has("zero"):
        sub = penalty.subdifferential(w, kink_tol)
        if sub[0] == "ball":
            ball_q = sub[1]
        else:
            _, pen_c, r_lo, r_hi = sub
            base[:d] += lam * pen_c
            box = r_lo < r_hi
            zero_coords = np.flatnonzero(box)
            lows.append(r_lo[box])
            highs.append(r_hi[box])
    k_kink = kink_columns.shape[1]
    if zero_coords.size and (k_kink or ball_q is not None):
        # the zero coordinates' columns lam e_j (dim x zeros, dense): only where a kink or
        # the ball couples them; alone they are a clip (below), at d = 20000 they were 3 GB
        E = np.zeros((dim, zero_coords.size))
        E[zero_coords, np.arange(zero_coords.size)] = lam
        cols.append(E)
    M = np.hstack(cols) / units[:, None]
    base = base / units
    lb, ub = np.concatenate(lows), np.concatenate(highs)
    details = {"kink_tol": kink_tol, "zero_coordinates": zero_coords,
               "smooth_gradient_norm": float(np.linalg.norm(base))}
    z, r_pen = np.zeros(k_kink), np.array(pen_c, dtype=float)
    if ball_q is not None:
        # min ||base + M z + lam (r, 0)|| over the box and the q-ball. The returned point
        # is made exactly feasible (z clipped, r scaled into the ball), so the distance
        # evaluated there is a true upper bound whatever the SOCP solver's tolerance.
        import cvxpy as cp
        k = M.shape[1]
        r = cp.Variable(d)
        pad = np.vstack([np.eye(d), np.zeros((dim - d, d))]) / units[:, None]
        expr, cons = base + lam * (pad @ r), [cp.norm(r, ball_q) <= 1]
        if k:
            zv = cp.Variable(k)
            expr, cons = expr + M @ zv, cons + [zv >= lb, zv <= ub]
        cp.Problem(cp.Minimize(cp.norm(expr)), cons).solve(solver="CLARABEL")
        r_pen = r.value / max(1.0, float(np.linalg.norm(r.value, ball_q)))
        z_val = np.clip(zv.value, lb, ub) if k else np.zeros(0)
        distance = float(np.linalg.norm(base + M @ z_val + lam * (pad @ r_pen)))
        z = z_val[:k_kink]
        details["method"] = f"cvxpy SOCP (dual-norm ball, q={ball_q:g}, at w = 0)"
        # r = 0 is in the ball too: its exact box least squares is another true upper
        # bound, exact where 0 is (the perceptron at (0, 0): the SOCP left ~1e-10)
        z0 = (lsq_linear(M, -base, bounds=(lb, ub), method="bvls", tol=1e-14).x if k
              else np.zeros(0))
        distance0 = float(np.linalg.norm(base + M @ z0)) if k else float(np.linalg.norm(base))
        if distance0 < distance:
            distance, z, r_pen = distance0, z0[:k_kink], np.zeros(d)
            details["method"] += "; r = 0 and bounded-variable least squares closer"
    elif k_kink == 0 and zero_coords.size == 0:
        distance = float(np.linalg.norm(base))
        details["method"] = "gradient (no kink, no zero coordinate)"
    elif k_kink == 0:
        # only zero coordinates of the penalty: one box variable per coordinate, each in its
        # own row (lam e_j / U_j): the projection is a clip, coordinate by coordinate
        zc = np.clip(-base[zero_coords] * units[zero_coords] / lam, lb, ub)
        resid = base.copy()
        resid[zero_coords] += lam * zc / units[zero_coords]
        distance = float(np.linalg.norm(resid))
        r_pen[zero_coords] += zc
        details["method"] = "coordinate-wise clip (no kink; separable penalty box)"
    else:
        # scaled: columns of unit norm (the same problem): a kink column ~ x_i / (n U) and
        # a zero coordinate's lam / U_j can be 1e10 apart (features x 1e4 and x 1e-4),
        # where bvls on M itself stopped ~1e-8 (relative) short of an exact multiplier
        # (not the default: on 2000 x 500 sparse data with 1200 columns it took 4x longer)
        cn = np.linalg.norm(M, axis=0) if scaled_columns else np.ones(M.shape[1])
        cn[cn == 0] = 1.0
        res = lsq_linear(M / cn, -base, bounds=(lb * cn, ub * cn), method="bvls", tol=1e-14)
        x = np.clip(res.x / cn, lb, ub)     # feasible: the distance is a true upper bound
        distance = float(np.linalg.norm(base + M @ x))
        z = x[:k_kink]
        r_pen[zero_coords] += x[k_kink:]
        details["method"] = "bounded-variable least squares (scipy lsq_linear, bvls)"
    return distance, details, z, r_pen


def recession_direction(X: np.ndarray, y: np.ndarray, intercept: bool = True,
                        tol: float = RECESSION_TOL) -> Any:
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
    A, col, _ = _recession_matrix(X, y, intercept)
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


def _recession_matrix(X: np.ndarray, y: np.ndarray, intercept: bool):
    """(A, col, row): the rows y_i (x_i, 1) of :func:`recession_direction`'s LP with their
    columns, then rows, scaled to max |entry| 1 (positive scalings keep the sign pattern of
    every y_i (<v, x_i> + c), so the answer is the same, but a direction that needs a
    feature of scale 1e-8 next to one of 1e8 is no longer lost in the box bounds and
    tolerances; a direction maps back as v_j / col_j)."""
    n = X.shape[0]
    A = y[:, None] * (np.column_stack([X, np.ones(n)]) if intercept else X)
    col = np.abs(A).max(axis=0)
    col[col == 0] = 1.0
    A = A / col
    row = np.abs(A).max(axis=1)
    row = np.where(row > 0, row, 1.0)
    return A / row[:, None], col, row


def recession_bound(X: np.ndarray, y: np.ndarray, intercept: bool,
                    multipliers: np.ndarray) -> float:
    """An upper bound on the optimum of :func:`recession_direction`'s LP from positive
    multipliers, without solving it: the LP finds no direction when this is <= tol n.

    With A the LP's scaled rows (:func:`_recession_matrix`) and any lam >= 1 (entrywise),
    weak duality bounds its optimum: for every feasible z (A z >= 0, |z_j| <= 1),
    1^T A z <= lam^T A z = (A^T lam)^T z <= ||A^T lam||_1. At a stationary point of the
    unregularized logistic / exponential ERM, lam_i = -y_i l'(f_i) s_i > 0 balance:
    sum_i lam_i y_i (x_i, 1) = 0 (the gradient) - the certificate that the class hulls
    meet with every sample inside, so no (v, c) separates even weakly. Here lam = row *
    multipliers (A's rows carry 1/row), projected onto the null space of A^T (the
    gradient's residual removed; singular directions below n eps of the largest kept out:
    a dependent column) and divided by its minimum (lam >= 1 exactly: x / m >= 1 rounds
    monotonically). ||A^T lam||_1 is evaluated in two levels of sqrt(n)-sized sums, each
    sum of k terms off by at most (k - 1) eps/2 times the sum of its terms' sizes in any
    order, and that rounding bound is added: the bound holds for the floats given to
    HiGHS. Returns inf when the projected multipliers are not all positive.

    Parameters
    ----------
    X : ndarray (n, d), y : ndarray (n,) in {-1, +1}, intercept : bool
        The samples of the problem (weight-0 samples left out).
    multipliers : ndarray (n,)
        lam_i > 0 (e.g. -y_i l'(f_i) s_i at the solver's answer).
    """
    A, _, row = _recession_matrix(X, y, intercept)
    n = A.shape[0]
    lam = np.asarray(multipliers, dtype=float) * row
    if n == 0 or not np.all(np.isfinite(lam)) or lam.min() <= 0:
        return math.inf
    U, S, _ = np.linalg.svd(A, full_matrices=False)
    U = U[:, S > S[0] * n * np.finfo(float).eps] if S.size and S[0] > 0 else U[:, :0]
    lam = lam - U @ (U.T @ lam)
    low = float(lam.min())
    if not low > 0:
        return math.inf
    lam = lam / low
    B = max(1, math.isqrt(n))
    P = np.zeros((-(-n // B) * B, A.shape[1]))
    P[:n] = A * lam[:, None]               # each product within eps/2 of the exact one
    blocks = P.reshape(-1, B, A.shape[1])
    inner, k2 = blocks.sum(axis=1), blocks.shape[0]
    total = inner.sum(axis=0)
    size = np.abs(P).sum(axis=0)
    u = np.finfo(float).eps / 2
    err = (u + (B - 1 + k2 - 1) * u * (1 + u) ** (B + k2)) * size
    # (1 + 1e-6): the rounding of the bound's own sums (relative n eps)
    return float((np.abs(total).sum() + err.sum()) * (1 + 1e-6))
