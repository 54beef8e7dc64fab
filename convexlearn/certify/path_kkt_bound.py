"""The KKT conditions of a C-path breakpoint from its margins and their rounding bound.

The exact C-path (:mod:`convexlearn.solvers.kernel_svm.svm_path`) reports at a breakpoint
lambda = 1 / C the multipliers alpha = fl(a / lambda), the intercept b = fl(a_0 / lambda)
and C = fl(1 / lambda), and keeps the margins g ~ Q a + y a_0 with a bound ``err`` >=
max_i |g_i - (Q a + y a_0)_i| on their rounding (Q_ij = y_i y_j K_ij).  The margins of the
reported solution, m_i = y_i f(x_i) = sum_j Q_ij alpha_j + y_i b, then lie within

    e = (err + u (q ||a||_1 + |a_0|)) / lambda        (q = max_ij |Q_ij|, u = 2^-53)

of g_i / lambda (alpha_j = a_j (1 + d_j) / lambda with |d_j| <= u), and alpha / C lies
within a factor (1 +- 3u) of a (exactly 1 where a = 1, exactly 0 where a = 0).  With the
optimal slack xi_i = max(0, 1 - m_i) the rows of :mod:`convexlearn.certify.kkt` are, scaled
by s_a = C:

* primal feasibility, slack nonnegativity, stationarity (beta = y alpha): 0 exactly;
* dual feasibility max(0, -alpha_i, alpha_i - C) / C: from alpha itself;
* balance |sum_i alpha_i y_i| / C: summed, + gamma_n sum_i alpha_i;
* complementary margin (alpha_i / C) max(0, m_i - 1) <= a_i (1 + 3u) max(0, g_i / lambda +
  e_i - 1), complementary slack (1 - alpha_i / C) max(0, 1 - m_i) <= (1 - a_i + 3u a_i)
  max(0, 1 - g_i / lambda + e_i), e_i = e (1 + 4u) + 2u |fl(g_i / lambda)|;
* the duality gap: with alpha^T Q alpha = sum_i alpha_i m_i - b alpha^T y,

      P - D = sum_i [alpha_i max(0, m_i - 1) + (C - alpha_i) max(0, 1 - m_i)] - b alpha^T y

  = C (sum of the two complementary rows) - b alpha^T y: a sum of terms that vanish at the
  optimum (no cancellation of P against D), bounded by C times the rows' bounds plus |b|
  times the balance's; it is divided by a lower bound of P = 1/2 alpha^T Q alpha + C sum xi
  (both terms >= 0): C sum_i max(0, 1 - g_i / lambda - e_i) + 1/2 max(0, sum_i alpha_i
  (g_i / lambda - e_i) - |b| |alpha^T y|), each sum's rounding (gamma_{n+2}) taken off.

Each figure is an upper bound of the exact residual of the reported solution against the
Gram matrix Q was formed from: a breakpoint passes at ``tol`` only when the bounds do, a
true certificate, never a looser one (a breakpoint that does not pass is certified by the
full report from the data, :func:`convexlearn.certify.kkt.kkt_report`).
"""

from __future__ import annotations

from typing import Any

import numpy as np
from numba import njit

from ..compiled import load_without_refresh

__all__ = ["BOUND_FIELDS", "bounded_kkt", "m_nan"]

#: The figures of :func:`bounded_kkt`, in order.
BOUND_FIELDS = ("max_violation", "relative_gap", "duality_gap", "primal_objective",
                "dual_objective", "support", "free", "bounded")

_U = 2.0 ** -53


@njit(cache=True)
def m_nan(x: float) -> bool:
    return not np.isfinite(x)


@njit(cache=True, error_model="numpy")
def bounded_kkt(y: Any, a: Any, a0: float, lam: float, g: Any, err: float, qabs: float,
                tol: float) -> Any:
    """Upper bounds of the KKT figures of (alpha, b, C) = (a, a_0, 1) / lambda (module
    docstring), in the order of :data:`BOUND_FIELDS`; the objectives are the computed
    values (not bounds) and the support counts use ``tol`` as the KKT report does."""
    n = a.size
    gn = (n + 2) * _U / (1 - (n + 2) * _U)
    C = 1.0 / lam
    b = a0 / lam
    norm_a = 0.0
    for i in range(n):
        norm_a += abs(a[i])
    e = (err + _U * (qabs * norm_a * (1 + gn) + abs(a0))) * (1 + gn) / lam * (1 + 4 * _U)
    worst = 0.0
    balance = 0.0
    alpha_sum = 0.0
    comp = 0.0          # sum of both complementary rows' bounds
    slack_lo = 0.0      # sum_i max(0, 1 - m_hi)
    aqa = 0.0           # sum_i alpha_i (m_lo) and its rounding scale
    aqa_abs = 0.0
    primal_slack = 0.0
    alpha_m = 0.0
    n_sv = n_free = n_bd = 0
    for i in range(n):
        ai = a[i]
        alpha = ai / lam
        if alpha != alpha or m_nan(g[i]):
            worst = np.inf
        elif not (alpha >= 0.0 and alpha <= C):       # dual feasibility
            worst = max(worst, max(-alpha, alpha - C) / C * (1 + 2 * _U))
        balance += alpha * y[i]
        alpha_sum += abs(alpha)
        m = g[i] / lam
        ei = e + 2 * _U * abs(m)
        cm = ai * (1 + 3 * _U) * max(0.0, m + ei - 1.0)
        cs = (1.0 - ai + 3 * _U * ai) * max(0.0, 1.0 - m + ei)
        worst = max(worst, cm, cs)
        comp += cm + cs
        slack_lo += max(0.0, 1.0 - m - ei)
        aqa += alpha * (m - ei)
        aqa_abs += abs(alpha) * (abs(m) + ei)
        primal_slack += max(0.0, 1.0 - m)
        alpha_m += alpha * m
        if alpha > tol * C:
            n_sv += 1
            if alpha >= C - tol * C:
                n_bd += 1
            else:
                n_free += 1
    bal_hi = (abs(balance) + gn * alpha_sum) * (1 + 2 * _U)
    worst = max(worst, bal_hi / C * (1 + 2 * _U)) * (1 + 4 * _U)
    gap = (C * comp * (1 + gn) + abs(b) * bal_hi) * (1 + 4 * _U)
    aqa_lo = max(0.0, aqa - gn * aqa_abs - abs(b) * bal_hi)
    p_lo = (C * slack_lo * (1 - gn) + 0.5 * aqa_lo) * (1 - 4 * _U)
    rel = gap / p_lo if p_lo > 0 else np.inf
    worst = max(worst, rel)
    aqa_c = alpha_m - b * balance
    primal = 0.5 * aqa_c + C * primal_slack
    out = np.empty(8)
    out[0], out[1], out[2], out[3] = worst, rel, gap, primal
    out[4], out[5], out[6], out[7] = alpha_sum - 0.5 * aqa_c, n_sv, n_free, n_bd
    return out

load_without_refresh(globals())   # cached kernels load without numba's compiler contexts
