"""Fenchel duality gap of regularized ERM, recomputed from the data.

For F(w, b) = (1/n) sum_i l_i(f_i) + lam R(w), f = X w + b, Fenchel-Rockafellar duality
gives, for any dual point g in R^n (one multiplier per sample)::

    D(g) = -(1/n) sum_i l_i^*(g_i) - lam R^*(-X^T g / (n lam)),   sum_i g_i = 0 (intercept)

and weak duality P(w, b) >= D(g) for every feasible g; at the optimum g_i = l_i'(f_i) and
P = D. The conjugates are the catalogue's (capability "conjugate" of a loss and of a
penalty; without it the gap is nan). Those of the losses in f (margin losses phi(y f),
y = +-1, have l^*(u) = phi^*(y u)):

=======================  ===========================================  ==============
loss                     phi^*(v) (or l^*(u) for regression)          domain
=======================  ===========================================  ==============
hinge                    v                                            -1 <= v <= 0
perceptron               0                                            -1 <= v <= 0
squared_hinge            v + v^2/4                                    v <= 0
logistic                 (-v) log(-v) + (1 + v) log(1 + v)            -1 <= v <= 0
logistic_log2            c phi_logistic^*(v / c), c = 1/log 2         -c <= v <= 0
exponential              v + (-v) log(-v)                             v <= 0
squared_classification   v + v^2/4                                    all v
squared (regression)     u y + u^2/4                                  all u
absolute                 u y                                          -1 <= u <= 1
quantile (tau)           u y                                          -tau <= u <= 1-tau
epsilon_insensitive      u y + epsilon |u|                            -1 <= u <= 1
huber (delta)            u y + u^2/2                                  |u| <= delta
=======================  ===========================================  ==============

and of the penalties: l2 R^* = 1/2 ||v||^2; l1 the indicator of ||v||_inf <= 1; elastic
net sum_j max(|v_j| - r, 0)^2 / (2 (1 - r)) (r = l1_ratio < 1). Penalty "none" (R^*
the indicator of v = 0) and lp declare no conjugate (nan): their certificate is the
stationarity distance alone.

The dual point is the certificate's own multiplier vector (an element of the loss's
subdifferential at the point), made feasible by shrinking toward 0 (every domain
above contains 0): for the intercept, the class (sign of g) with the larger total is
scaled down until sum_i g_i = 0 (regression losses: g is centred instead, which keeps an
unbounded domain; where the centred point leaves a bounded one - absolute, quantile,
epsilon-insensitive, Huber - the sign-side scaling is used); for a pure l1 penalty (split lam2 = 0), g is scaled by
min(1, n lam / ||X^T g||_inf).
"""

from __future__ import annotations

from typing import Any

import math
from dataclasses import dataclass, replace

import numpy as np
from numpy.typing import ArrayLike

__all__ = ["DualShrink", "dual_objective", "dual_shrink", "dual_value", "feasible_dual_point",
           "gap_defined"]

def _loss_conjugate_mean(loss, y: np.ndarray, g: np.ndarray,
                         weights: np.ndarray | None = None) -> float:
    """(1/n) sum_i v_i l_i^*(g_i / v_i) (v = 1 without weights; a sample of weight 0
    admits only g_i = 0); the loss needs the capability "conjugate"."""
    n = g.shape[0]
    if weights is not None:
        held = weights > 0
        if np.any(g[~held] != 0.0):
            return math.inf
        y, g, v = y[held], g[held] / weights[held], weights[held]
    else:
        v = None
    values = loss.conjugate(y, g)
    return float(np.sum(values if v is None else v * values)) / n


def _l1_bound(penalty, lam: float) -> float | None:
    """lam1 when lam R = lam1 ||w||_1 (split with lam2 = 0 < lam1): the conjugate's domain
    ||X^T g|| / n <= lam1 is bounded and g must be scaled into it; else None."""
    if lam <= 0 or not penalty.has("split"):
        return None
    lam1, lam2 = penalty.split(lam)
    return lam1 if lam1 > 0 and lam2 == 0 else None


@dataclass(frozen=True)
class DualShrink:
    """The map that makes a multiplier vector g dual feasible (module docstring):
    g -> factor * (g_+ * pos + g_- * neg - shift * v), with v = 1 (or the weights).

    Computed from sums over the samples only (:func:`dual_shrink`), so that a caller
    holding X in pieces (row chunks on a cluster) applies the same map chunk by chunk.
    """

    pos: float = 1.0
    neg: float = 1.0
    shift: float = 0.0
    factor: float = 1.0

    def apply(self, g: np.ndarray, weights: np.ndarray | None = None) -> np.ndarray:
        """The shrunk multipliers (a new array)."""
        g = np.asarray(g, dtype=float)
        # few n-vector temporaries: at n = 50000 each costs about as much as its arithmetic
        if self.pos != 1.0 or self.neg != 1.0:
            out = np.where(g > 0, g * self.pos, g * self.neg)
        elif self.shift:
            out = g - self.shift * (1.0 if weights is None else weights)
        else:
            out = g.copy()
        if self.shift and (self.pos != 1.0 or self.neg != 1.0):
            out -= self.shift * (1.0 if weights is None else weights)
        if self.factor != 1.0:
            out *= self.factor
        return out


def dual_shrink(loss: Any, penalty: Any, lam: float, intercept: bool, n: int,
                XTg: np.ndarray, *, pos_sum: float = 0.0, neg_sum: float = 0.0,
                XT_pos: np.ndarray | None = None, g_sum: float = 0.0,
                shift_columns: np.ndarray | None = None,
                weight_sum: float | None = None,
                balance: bool | None = None) -> tuple[DualShrink, np.ndarray]:
    """The feasibility map of g and X^T g at the shrunk point, from sums over the samples.

    Parameters
    ----------
    XTg : ndarray (d,)
        X^T g.
    pos_sum, neg_sum : float
        sum of g_i > 0 and of -g_i for g_i < 0 (a margin loss with an intercept).
    XT_pos : ndarray (d,), optional
        X^T max(g, 0), needed when the classes must be rebalanced (pos_sum != neg_sum).
    g_sum : float
        sum_i g_i (a regression loss with an intercept).
    shift_columns : ndarray (d,), optional
        X^T v: the column sums X^T 1 without weights, X^T v with weights v.
    weight_sum : float, optional
        sum_i v_i when the shift is along the weights (default: n, unweighted).
    balance : bool, optional
        With an intercept, make sum g = 0 by scaling the side (sign) with the larger total
        toward 0 rather than by a shift (default: for margin losses). Every interval
        domain containing 0 is kept, which a shift can leave (the bounded conjugate
        domains of absolute, quantile, epsilon-insensitive and Huber).
    """
    XTg = np.asarray(XTg, dtype=float)
    pos = neg = 1.0
    shift = 0.0
    if balance is None:
        balance = loss.margin_based
    if intercept:
        if balance:
            if pos_sum > neg_sum:
                pos = neg_sum / pos_sum
            elif neg_sum > pos_sum:
                neg = pos_sum / neg_sum
            if pos != 1.0 or neg != 1.0:
                # X^T g' = pos X^T g+ + neg (X^T g - X^T g+)
                XTg = pos * XT_pos + neg * (XTg - XT_pos)
        else:
            shift = g_sum / (n if weight_sum is None else weight_sum)
            XTg = XTg - shift * shift_columns
    factor = 1.0
    lam1 = _l1_bound(penalty, lam)
    if lam1 is not None:
        top = float(np.max(np.abs(XTg), initial=0.0)) / n
        if top > lam1:
            factor = lam1 / top
            XTg = XTg * factor
    return DualShrink(pos, neg, shift, factor), XTg


def _in_domain(loss, g: np.ndarray, weights: np.ndarray | None) -> bool:
    """Every g_i / v_i (v = 1 without weights) in the domain of the conjugate of a regression
    loss, u y_i + psi^*(u): the domain of psi^*, an interval (a convex function of one
    variable) whatever y_i, so its two ends decide."""
    u = g if weights is None else np.divide(g, weights, out=np.zeros_like(g),
                                            where=weights > 0)
    if u.size == 0:
        return True
    ends = np.array([u.min(), u.max()])
    return bool(np.all(np.isfinite(loss.conjugate(np.zeros(2), ends))))


def feasible_dual_point(X: ArrayLike, loss: Any, penalty: Any, lam: float, intercept: bool,
                        g: np.ndarray,
                        XTg: np.ndarray | None = None,
                        col_sums: np.ndarray | None = None,
                        weights: np.ndarray | None = None) -> tuple[np.ndarray, np.ndarray]:
    """``g`` made dual feasible by shrinking toward 0 (see the module docstring), and
    X^T g at it. ``XTg`` (X^T g) and ``col_sums`` (X^T 1) spare passes over X (the
    certificate has them); rebalancing the classes of a margin loss costs one (X^T g+).
    With ``weights`` v (see :func:`dual_objective`) a regression loss's g is shifted by
    a multiple of v instead of a constant, so that g_i / v_i moves uniformly and a sample
    of weight 0 keeps g_i = 0."""
    g = np.asarray(g, dtype=float)      # not changed here: every map returns a new array
    if XTg is None:
        XTg = np.asarray(X.T @ g).ravel()

    def sign_sums() -> dict:
        sums = dict(pos_sum=float(g[g > 0].sum()), neg_sum=float(-g[g < 0].sum()))
        if sums["pos_sum"] != sums["neg_sum"]:
            sums["XT_pos"] = np.asarray(X.T @ np.maximum(g, 0.0)).ravel()
        return sums

    n = X.shape[0]
    if intercept and loss.margin_based:
        shrink, XTg_s = dual_shrink(loss, penalty, lam, intercept, n, XTg, **sign_sums())
        return shrink.apply(g, weights), XTg_s
    sums: dict = {}
    if intercept:
        sums["g_sum"] = float(g.sum())
        if weights is None:
            sums["shift_columns"] = (np.asarray(X.sum(axis=0)).ravel() if col_sums is None
                                     else col_sums)
        else:
            sums.update(shift_columns=np.asarray(X.T @ weights).ravel(),
                        weight_sum=float(weights.sum()))
    shrink, XTg_s = dual_shrink(loss, penalty, lam, intercept, n, XTg, **sums)
    if intercept and loss.has("conjugate"):
        shifted = replace(shrink, factor=1.0).apply(g, weights)
        if _in_domain(loss, shifted, weights):
            if shrink.factor != 1.0:
                shifted *= shrink.factor            # = shrink.apply(g, weights)
            return shifted, XTg_s
        # a conjugate with a bounded domain (absolute, quantile, epsilon-insensitive,
        # Huber): the shift can leave it; shrinking one sign's side toward 0 cannot
        shrink, XTg_s = dual_shrink(loss, penalty, lam, intercept, n, XTg, balance=True,
                                    **sign_sums())
    return shrink.apply(g, weights), XTg_s


def gap_defined(loss: Any, penalty: Any, lam: float) -> bool:
    """Whether the Fenchel dual is written here: lam > 0 and both conjugates known."""
    return lam > 0 and penalty.has("conjugate") and loss.has("conjugate")


def dual_value(loss_conjugate_mean: float, penalty: Any, lam: float, XTg: np.ndarray,
               n: int) -> float:
    """D = -(1/n) sum_i l_i^*(g_i) - lam R^*(-X^T g / (n lam)) at a feasible g, from the
    mean of the loss conjugates and X^T g."""
    return -loss_conjugate_mean - lam * penalty.conjugate(-XTg / (n * lam))


def dual_objective(X: ArrayLike, y: ArrayLike, loss: Any, penalty: Any, lam: float,
                   intercept: bool, g: np.ndarray,
                   XTg: np.ndarray | None = None,
                   col_sums: np.ndarray | None = None,
                   sample_weight: ArrayLike | None = None) -> float:
    """D(g) at the feasible point made from ``g`` (nan where no gap is defined here: the
    loss or the penalty lacks the capability "conjugate", or lam = 0).

    With ``sample_weight`` s the primal's loss term is (1/S) sum_i s_i l_i, S = sum s, i.e.
    (1/n) sum_i v_i l_i with v_i = n s_i / S; the conjugate of v_i l_i is
    u -> v_i l_i^*(u / v_i), so D(g) = -(1/n) sum_i v_i l_i^*(g_i / v_i) - lam R^*(-X^T g /
    (n lam)) - the unweighted formula at v = 1. The certificate's multipliers already lie
    in v_i dl_i (its intervals are scaled by v_i).
    """
    if not gap_defined(loss, penalty, lam):
        return math.nan
    weights = None
    if sample_weight is not None:
        s = np.asarray(sample_weight, dtype=float)
        weights = s * (s.shape[0] / s.sum())
    g, XTg = feasible_dual_point(X, loss, penalty, lam, intercept, g, XTg, col_sums, weights)
    return dual_value(_loss_conjugate_mean(loss, y, g, weights), penalty, lam, XTg,
                      X.shape[0])
