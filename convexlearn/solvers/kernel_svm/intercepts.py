"""The intercepts a dual QP's multipliers imply, and the balance of its equality rows.

In the expansion g = K (s * a) of :mod:`~convexlearn.solvers.kernel_svm.qp`, the free
variables satisfy g_i + b = target_i; with no free variable the bounded ones only bound b
(LIBSVM takes the midpoint of that interval). The nu-problems have one row per sign and
one intercept per sign (:func:`intercepts_by_sign`).
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

__all__ = ["intercept_from_alpha", "intercepts_by_sign", "is_balanced"]


def intercept_from_alpha(y: np.ndarray, C: float, alpha: np.ndarray, g: np.ndarray,
                         sv_tol: float = 1e-6, target: np.ndarray | None = None
                         ) -> tuple[float, str]:
    """The intercept b implied by optimal multipliers.

    With ``g_i = sum_j alpha_j y_j k(x_j, x_i)`` (f = g + b):

    * free support vectors (sv_tol s < alpha_i < C_i - sv_tol s, s = max C_i or max alpha;
      C may be a scalar or the per-sample bounds C_i) lie on
      the margin, y_i (g_i + b) = 1, so b = mean_i (y_i - g_i) over them (in the dual QP
      of :mod:`~convexlearn.solvers.kernel_svm.qp`: g_i + b = target_i, ``target`` = -s * p,
      default y);
    * with no free support vector, the KKT conditions only bound b:
      alpha_i = 0 needs y_i f_i >= 1 and alpha_i = C needs y_i f_i <= 1, an interval
      [lo, hi]; its midpoint is returned (LIBSVM's rule).

    Returns
    -------
    b : float
    rule : str
        "free support vectors" or "midpoint of the feasible interval".
    """
    C = np.broadcast_to(np.asarray(C, dtype=float), alpha.shape)
    hard = bool(np.all(np.isinf(C)))
    scale = max(1.0, float(np.max(alpha))) if hard else float(np.max(C))
    lower = alpha > sv_tol * scale
    upper = (alpha < C - sv_tol * scale) if not hard else np.ones_like(lower)
    free = lower & upper
    target = y if target is None else target
    if np.any(free):
        return float(np.mean(target[free] - g[free])), "free support vectors"
    # y_i (g_i + b) >= 1 for alpha_i = 0; <= 1 for alpha_i = C. A sample with C_i = 0
    # (weight 0) is absent from the problem: it bounds b neither way.
    present = C > 0
    needs_ge = ~lower & present
    needs_le = ~upper & present
    r = target - g      # y_i f_i >= 1  <=>  b >= r_i (y_i = +1) or b <= r_i (y_i = -1)
    lo = np.concatenate([r[needs_ge & (y > 0)], r[needs_le & (y < 0)]])
    hi = np.concatenate([r[needs_ge & (y < 0)], r[needs_le & (y > 0)]])
    lo_v = float(lo.max()) if lo.size else -math.inf
    hi_v = float(hi.min()) if hi.size else math.inf
    if math.isinf(lo_v) and math.isinf(hi_v):
        return 0.0, "midpoint of the feasible interval"
    if math.isinf(lo_v):
        return hi_v, "midpoint of the feasible interval"
    if math.isinf(hi_v):
        return lo_v, "midpoint of the feasible interval"
    return 0.5 * (lo_v + hi_v), "midpoint of the feasible interval"


def intercepts_by_sign(y: np.ndarray, C: Any, alpha: np.ndarray, g: np.ndarray,
                       target: np.ndarray, sv_tol: float = 1e-6
                       ) -> tuple[tuple[float, float], str]:
    """The intercepts (b_+, b_-) of the dual QP with one equality row per sign (the
    nu-problems): :func:`intercept_from_alpha` on the variables of each sign (g_t + b_c =
    target_t on the free ones, else the midpoint of the interval the bounded ones allow;
    0 for a sign without variables). The rule returned is the two rules joined by "; "."""
    C = np.broadcast_to(np.asarray(C, dtype=float), alpha.shape)
    out, rules = [], []
    for mask in (y > 0, y < 0):
        if not mask.any():
            out.append(0.0)
            rules.append("no variable")
            continue
        b, rule = intercept_from_alpha(y[mask], C[mask], alpha[mask], g[mask], sv_tol,
                                       target[mask])
        out.append(b)
        rules.append(rule)
    return (out[0], out[1]), "; ".join(rules)


def is_balanced(beta: np.ndarray, scale: float, delta: float = 0.0) -> bool:
    """|sum_i beta_i - delta| = |y^T alpha - delta| <= 1e-12 n ``scale`` (``scale``: max
    C_i, or max alpha for the hard margin): the equality constraint of the dual with
    intercept, to the round-off of n terms of that size."""
    return abs(float(np.sum(beta)) - delta) <= 1e-12 * beta.size * scale
