"""The KKT report of a dual QP of the SVM family, per variable, recomputed from the data.

The QP (:mod:`convexlearn.solvers.kernel_svm.qp`, in its form with lower bounds 0)::

    min_a  F(a) = 1/2 a^T Q a + p^T a,   Q_ij = s_i s_j K_ij,
    s.t.   s^T a = Delta (with a row),   0 <= a <= u

For a point a, the multiplier b of the row and g = K (s * a) (computed from the data by
the caller), the gradient of the Lagrangian F(a) + b (s^T a - Delta) is

    G_i = s_i (g_i + b - t_i),    t = -s * p  (the target)

and the KKT conditions are: 0 <= a <= u, s^T a = Delta, and per variable a_i = 0 =>
G_i >= 0, a_i = u_i => G_i <= 0, 0 < a_i < u_i => G_i = 0. At a feasible a the
Lagrangian duality gap is a sum of one nonnegative term per variable,

    P - D = sum_i [a_i max(0, G_i) + (u_i - a_i) max(0, -G_i)]

with P = 1/2 a^T Q a + b Delta + sum_i u_i max(0, -G_i) and D = -F(a), zero exactly at an
optimum (as :func:`convexlearn.certify.kkt.dual_qp_objectives`; several rows: each adds
b_k r_k to G and b_k Delta_k to P). For the C-SVC P is the primal 1/2 ||w||^2 + C sum xi_i, for epsilon-SVR
1/2 ||w||^2 + C sum max(0, |y_i - f_i| - eps), for the one-class SVM
1/2 ||w||^2 - rho Delta + sum max(0, rho - g_i).

Residuals (each free of units, one ``tol`` for all):

=================  ================================================  ====================
condition          per-variable residual                             scaled by
=================  ================================================  ====================
bounds             max(0, -a_i, a_i - u_i)                           s_a
balance            |s^T a - Delta|  (one number, with a row)         s_a
complementarity    a_i max(0, G_i) + (u_i - a_i) max(0, -G_i)        s_a s_G
                   (u_i = inf: max(0, -G_i), scaled by s_G alone)
duality_gap        |P - D| / max(|P|, |D|, 1e-6 S, GAP_FLOOR)        (relative)
=================  ================================================  ====================

``s_a`` = max of the finite u_i (max(1, max a_i) when no u_i is finite) is the scale of
the multipliers; ``s_G`` = max(max_i |t_i|, max_i |g_i|, 1e-6 B) is the size of the two
terms whose difference G is (margins for the C-SVC, units of y for SVR, of K for the
one-class SVM), so that scaling y, or K with u, leaves each residual unchanged.

Floors, for optima at w = 0 (the linear one-class SVM on data around the origin: g, rho
and P are then round-off): with ||phi_i|| = sqrt(K_ii), B = max_i ||phi_i|| sum_j
|a_j| ||phi_j|| bounds every |g_i| (triangle inequality) and S = (sum_j |a_j|
||phi_j||)^2 + sum_j |p_j| a_j bounds the terms of F; the relative gap is |P - D| /
max(|P|, |D|, 1e-6 S, GAP_FLOOR). Below 1e-6 of these bounds the round-off of their terms
(eps B, eps S) is above 1e-10 of the value, so no float point could be certified against
the value itself; above them, the floors play no part (on the C-SVC and epsilon-SVR
tests |P| exceeds 1e-6 S by orders of magnitude). GAP_FLOOR (the smallest normal
double) only avoids 0/0; without ``norms`` the floors are not applied.

Sets, from the multipliers with band ``tol s_a``: at the lower bound (a_i <= tol s_a), at
the upper bound (a_i >= u_i - tol s_a), free (between).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np

from .kkt import GAP_FLOOR, KKTReport, worst_residual

__all__ = ["QPKKTReport", "qp_kkt_report", "tube_kkt", "QP_CONDITIONS"]

QP_CONDITIONS = ("bounds", "balance", "complementarity", "duality_gap")

@dataclass(repr=False)
class QPKKTReport:
    """KKT conditions of a point of a dual QP, per variable (module docstring).

    Attributes
    ----------
    passed : bool
        Every scaled residual, and the relative duality gap, is <= ``tol``.
    tol : float
    max_violation : float
    duality_gap, relative_gap : float
        P - D (absolute) and |P - D| / max(|P|, |D|, floor) (module docstring).
    primal_objective, dual_objective : float
        P and D = -F(a).
    residuals : dict[str, ndarray or float]
        Scaled residual per condition (per variable where it is per variable).
    free, at_lower, at_upper : ndarray of int
        Variables strictly inside the box, at 0, at u_i.
    gradient : ndarray
        G = s (g + b - t).
    alpha : ndarray
    scales : dict
        ``s_a``, ``s_G`` and ``gap_floor``.
    notes : list of str
    """

    passed: bool
    tol: float
    max_violation: float
    duality_gap: float
    relative_gap: float
    primal_objective: float
    dual_objective: float
    residuals: dict
    free: np.ndarray
    at_lower: np.ndarray
    at_upper: np.ndarray
    gradient: np.ndarray
    alpha: np.ndarray
    scales: dict
    notes: list = field(default_factory=list)

    @property
    def gap_tol(self) -> float:
        """The tolerance the relative duality gap is certified at (``tol``)."""
        return self.tol

    @property
    def support(self) -> np.ndarray:
        """Variables not at the lower bound (free or at the upper bound)."""
        return np.union1d(self.free, self.at_upper)

    @property
    def bounded(self) -> np.ndarray:
        """Variables at the upper bound (the name the SVM report uses)."""
        return self.at_upper

    def add(self, name: str, value: Any) -> None:
        """Add a condition's scaled residual (a problem's own condition) to the verdict."""
        self.residuals[name] = value
        worst = float(np.max(value, initial=0.0)) if np.ndim(value) else float(value)
        self.max_violation = max(self.max_violation, worst)
        self.passed = bool(self.max_violation <= self.tol)

    # the largest residual of each condition, and the conditions above tol with their
    # worst variables: as the SVM's report (residuals and tol alike)
    worst = KKTReport.worst
    violations = KKTReport.violations

    def summary(self) -> str:
        """A few lines for people: verdict, objectives, sets, worst residuals."""
        verdict = "CERTIFIED" if self.passed else "NOT CERTIFIED"
        lines = [f"{verdict} at {self.tol:g}: relative duality gap {self.relative_gap:.2e}, "
                 f"max scaled KKT residual {self.max_violation:.2e}",
                 f"  primal objective {self.primal_objective:.12g}, dual objective "
                 f"{self.dual_objective:.12g}",
                 f"  variables: {self.free.size} free, {self.at_upper.size} at the upper bound, "
                 f"{self.at_lower.size} at 0"]
        for name, value in self.worst().items():
            flag = "  <-- violated" if value > self.tol else ""
            lines.append(f"  {name:16s} {value:.2e}{flag}")
        for name, _, where in self.violations():
            if where:
                lines.append(f"  {name} violated at variables {where}")
        lines.extend(f"  note: {note}" for note in self.notes)
        return "\n".join(lines)

    def __str__(self) -> str:
        return self.summary()

    def __repr__(self) -> str:
        return (f"<QPKKTReport {'passed' if self.passed else 'FAILED'} at tol={self.tol:g}: "
                f"relative gap {self.relative_gap:.2e}, max violation "
                f"{self.max_violation:.2e}, {self.alpha.size} variables ({self.free.size} "
                f"free, {self.at_upper.size} at the upper bound)>")


def qp_kkt_report(signs: np.ndarray, target: np.ndarray, upper: Any, alpha: np.ndarray,
                  g: np.ndarray, b: Any, *, rows: Any = None, norms: Any = None,
                  tol: float = 1e-9, notes: Any = ()) -> QPKKTReport:
    """The KKT report of ``alpha`` with the multipliers ``b`` of the rows, for the dual QP
    given by its signs, target t = -s * p and upper bounds u (module docstring).

    Parameters
    ----------
    signs, target, upper : ndarray
    alpha : ndarray
        The point (lower bounds 0).
    g : ndarray
        K (s * alpha), computed from the data by the caller.
    b : float or sequence of float
        The multiplier of each row (one row: the intercept; none: ignored).
    rows : tuple of (ndarray, float), optional
        The rows (r_k, Delta_k) of r_k^T a = Delta_k (the QP's ``equality``; None: no
        row). With several rows (the
        nu-problems' two) the gradient of the Lagrangian is G = s * g + p + sum_k b_k r_k
        (= s (g + b - t) for the one row r = s) and P = 1/2 a^T Q a + sum_k b_k Delta_k +
        sum_i u_i max(0, -G_i); ``balance`` is the largest |r_k^T a - Delta_k| / s_a.
    norms : ndarray, optional
        ||phi_i|| = sqrt(K_ii) of each variable's sample, for the floors (module
        docstring).
    tol : float
        Tolerance of every scaled residual and of the relative duality gap.
    """
    alpha = np.asarray(alpha, dtype=float)
    signs = np.asarray(signs, dtype=float)
    target = np.asarray(target, dtype=float)
    rows = tuple(rows or ())
    mult = np.atleast_1d(np.asarray(b, dtype=float))[:len(rows)]
    upper = np.broadcast_to(np.asarray(upper, dtype=float), alpha.shape)
    finite = np.isfinite(upper)
    s_a = (float(np.max(upper[finite])) if finite.any() else 1.0)
    if not finite.all():
        s_a = max(s_a, float(np.max(alpha, initial=1.0)))
    s_a = max(s_a, GAP_FLOOR)
    spread = 0.0 if norms is None else float(np.abs(alpha) @ norms)
    B = spread * float(np.max(norms, initial=0.0)) if norms is not None else 0.0
    S = spread ** 2 + float(np.abs(signs * target) @ np.abs(alpha))
    s_G = max(float(np.max(np.abs(target), initial=0.0)),
              float(np.max(np.abs(g), initial=0.0)), 1e-6 * B, GAP_FLOOR)
    G = signs * (g - target)              # = Q a + p
    for (r, _), b_k in zip(rows, mult):
        G = G + b_k * np.asarray(r, dtype=float)
    res: dict[str, Any] = {}
    res["bounds"] = np.maximum(np.maximum(0.0, -alpha), alpha - upper) / s_a + 0.0
    if rows:
        res["balance"] = max(abs(float(np.asarray(r, float) @ alpha) - d) for r, d in rows) / s_a
    room = np.where(finite, upper - alpha, 0.0)
    comp = (np.maximum(alpha, 0.0) * np.maximum(0.0, G)
            + np.maximum(room, 0.0) * np.maximum(0.0, -G)) / (s_a * s_G)
    res["complementarity"] = np.where(finite, comp, np.maximum(0.0, -G) / s_G)
    aQa = float((signs * alpha) @ g)
    dual = float((signs * target) @ alpha) - 0.5 * aQa          # -F(a), p = -s * t
    primal = 0.5 * aQa + sum(b_k * d for (_, d), b_k in zip(rows, mult))
    if finite.any():
        primal += float(upper[finite] @ np.maximum(0.0, -G[finite]))
    rel = abs(primal - dual) / max(abs(primal), abs(dual),
                                   1e-6 * S if norms is not None else 0.0, GAP_FLOOR)
    res["duality_gap"] = rel
    max_violation = worst_residual(float(np.max(r, initial=0.0)) if np.ndim(r) else float(r)
                                   for r in res.values())
    band = tol * s_a
    low = alpha <= band
    high = finite & (alpha >= upper - band) & ~low
    return QPKKTReport(
        passed=bool(max_violation <= tol), tol=tol, max_violation=max_violation,
        duality_gap=primal - dual, relative_gap=rel, primal_objective=primal,
        dual_objective=dual, residuals=res, free=np.flatnonzero(~low & ~high),
        at_lower=np.flatnonzero(low), at_upper=np.flatnonzero(high), gradient=G,
        alpha=alpha, scales={"s_a": s_a, "s_G": s_G,
                             "gap_floor": max(1e-6 * S if norms is not None else 0.0,
                                              GAP_FLOOR)},
        notes=list(notes))


def tube_kkt(residual: np.ndarray, coef: np.ndarray, epsilon: float, C: Any,
             tol: float = 1e-9) -> dict[str, np.ndarray]:
    """Epsilon-SVR's KKT conditions per sample, in the tube's terms.

    With r_i = y_i - f(x_i) and beta_i = a+_i - a-_i, band = tol max(max|r|, eps), and C_i
    the box: inside the tube (|r_i| < eps - band) beta_i = 0; on its upper edge
    (|r_i - eps| <= band: y above f) 0 <= beta_i <= C_i; on its lower edge (|r_i + eps| <=
    band) -C_i <= beta_i <= 0; outside (|r_i| > eps + band) beta_i = C_i sign(r_i).

    Returns
    -------
    dict
        ``inside``, ``upper_edge``, ``lower_edge``, ``outside`` (sample indices) and
        ``violation`` (per sample: the distance of beta_i to the set its position allows,
        divided by max C_i).
    """
    r = np.asarray(residual, dtype=float)
    coef = np.asarray(coef, dtype=float)
    C = np.broadcast_to(np.asarray(C, dtype=float), r.shape)
    band = tol * max(float(np.max(np.abs(r), initial=0.0)), epsilon, GAP_FLOOR)
    upper_edge = np.abs(r - epsilon) <= band
    lower_edge = (np.abs(r + epsilon) <= band) & ~upper_edge
    inside = (np.abs(r) < epsilon - band) & ~upper_edge & ~lower_edge
    outside = ~(inside | upper_edge | lower_edge)
    # (eps <= band: a sample on both edges, beta_i anywhere in [-C_i, C_i])
    both = upper_edge & (np.abs(r + epsilon) <= band)
    lo = np.where((upper_edge & ~both) | inside, 0.0, -C)
    hi = np.where(lower_edge | inside, 0.0, C)
    lo = np.where(outside, np.sign(r) * C, lo)
    hi = np.where(outside, np.sign(r) * C, hi)
    violation = np.maximum(np.maximum(lo - coef, coef - hi), 0.0) / max(float(np.max(C)),
                                                                         GAP_FLOOR)
    return {"inside": np.flatnonzero(inside), "upper_edge": np.flatnonzero(upper_edge),
            "lower_edge": np.flatnonzero(lower_edge), "outside": np.flatnonzero(outside),
            "violation": violation}
