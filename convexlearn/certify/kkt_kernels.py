"""The per-sample part of the SVM's KKT report (:func:`~convexlearn.certify.kkt.svm_kkt`)
in one compiled pass.

numpy evaluates the report's rows as some forty array operations (a temporary and a call
each): at the sizes of one-vs-one pairs (n ~ 300) they cost ~0.1 ms, a fixed cost of every
certified fit. :func:`kkt_pass` computes the same rows in one loop over the samples, with
the same floating-point operations in the same order (each row is bit for bit the numpy
expression written beside it; tests/certify/test_kkt_kernels.py checks them against
:func:`~convexlearn.certify.kkt.svm_kkt_rows`). Sums (the objectives, the balance) stay
with numpy, so the certificate's gap is the same number either way. Nothing here is
solved: the report still recomputes every residual from the decision values f = K beta + b
the caller formed from the data.

Loading a compiled function costs numba's runtime start and the code's loading (~0.15 s of
CPU from its disk cache: convexlearn.compiled) in a process that has not paid it, more than
the whole of a small certified fit: the compiled pass is used only once
:func:`allow_compiled` was called (by a solver that has loaded its own compiled loop) or it
is already loaded.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from numba import njit

from ..compiled import load_without_refresh

__all__ = ["kkt_pass", "allow_compiled", "compiled_ready"]

_allowed = [False]


def allow_compiled() -> None:
    """Let the report use :func:`kkt_pass` (numba is initialized in this process)."""
    _allowed[0] = True


def compiled_ready() -> bool:
    """Whether the report may use the compiled pass now (allowed, or already loaded)."""
    return _allowed[0] or bool(kkt_pass.signatures)


@njit(inline="always")
def _max(a: float, b: float) -> float:
    """np.maximum(a, b): NaN when either is NaN."""
    if a != a or a >= b:
        return a
    return b


@njit(inline="always")
def _top(current: float, value: float) -> float:
    """The running np.max (NaN once a NaN is seen)."""
    if current != current:
        return current
    if value != value or value > current:
        return value
    return current


@njit(cache=True)
def kkt_pass(y: Any, C: Any, alpha: Any, f: Any, xi: Any, use_xi: bool, hard: bool,
             s_a: float, tol: float) -> tuple:
    """The per-sample rows of the KKT report (numpy forms of :func:`svm_kkt_rows`)::

        m = y * f;  xi_u = xi if use_xi else max(0, 1 - m)  (0 for the hard margin)
        primal_feasibility   = max(0, 1 - xi_u - m)
        slack_nonnegativity  = max(0, -xi_u)
        dual_feasibility     = max(max(0, -a), max(0, a - C)) / s_a   (no a - C when hard)
        complementary_margin = |a| |m - 1 + xi_u| / s_a
        complementary_slack  = |C - a| |xi_u| / s_a

    and the index sets (t = tol): support a > t s_a, bounded support & a >= C - t s_a
    (never for the hard margin), free support & ~bounded, margin_support m <= 1 + t,
    disagreements (support & m > 1 + t) | (~at_upper & m < 1 - t) | (free & |m - 1| > t).

    Returns
    -------
    (m, xi_u, rows (5, n), row maxima (5,), support, free, bounded, margin_support,
    disagreements)
        Rows in the order above; the slack rows are zero (and unused) for the hard margin.
    """
    n = y.size
    m = np.empty(n)
    xi_u = np.empty(n)
    rows = np.zeros((5, n))
    top = np.full(5, -np.inf)
    flags = np.zeros(n, dtype=np.int8)        # 1 support, 2 bounded, 4 free, 8 margin, 16 dis
    a_tol = tol * s_a
    counts = np.zeros(5, dtype=np.int64)
    for i in range(n):
        mi = y[i] * f[i]
        m[i] = mi
        if hard:
            x = 0.0
        elif use_xi:
            x = xi[i]
        else:
            x = _max(0.0, 1.0 - mi)
        xi_u[i] = x
        a = alpha[i]
        c = C[i]
        rows[0, i] = _max(0.0, 1.0 - x - mi)
        upper = 0.0 if hard else _max(0.0, a - c)
        rows[2, i] = _max(_max(0.0, -a), upper) / s_a
        rows[3, i] = abs(a) * abs(mi - 1.0 + x) / s_a
        if not hard:
            rows[1, i] = _max(0.0, -x)
            rows[4, i] = abs(c - a) * abs(x) / s_a
        for r in range(5):
            top[r] = _top(top[r], rows[r, i])
        support = a > a_tol
        at_upper = False if hard else a >= c - a_tol
        bounded = support and at_upper
        free = support and not bounded
        flag = 0
        if support:
            flag |= 1
        if bounded:
            flag |= 2
        if free:
            flag |= 4
        if mi <= 1.0 + tol:
            flag |= 8
        if ((support and mi > 1.0 + tol) or (not at_upper and mi < 1.0 - tol)
                or (free and abs(mi - 1.0) > tol)):
            flag |= 16
        flags[i] = flag
        for k in range(5):
            if flag & (1 << k):
                counts[k] += 1
    sets = [np.empty(counts[k], dtype=np.int64) for k in range(5)]
    filled = np.zeros(5, dtype=np.int64)
    for i in range(n):
        for k in range(5):
            if flags[i] & (1 << k):
                sets[k][filled[k]] = i
                filled[k] += 1
    return m, xi_u, rows, top, sets[0], sets[2], sets[1], sets[3], sets[4]

load_without_refresh(globals())   # cached kernels load without numba's compiler contexts
