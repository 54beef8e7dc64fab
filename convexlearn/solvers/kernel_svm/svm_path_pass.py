"""The exact C-path's one pass over the elbow's kernel columns a breakpoint (:mod:`.svm_path`).

A breakpoint needs two n-vectors that each cost O(n |E|): the margins g = Q a + y a_0
(summed afresh, or corrected by the refinement's total change (c, c_0) of the elbow's
multipliers) and the segment's direction s = Q_E d_E + y d_0. Both read the same columns
Q[:, E]; :func:`elbow_pass` forms them in one pass over those columns (the path's time is
the memory traffic of that pass, n |E| doubles, not its arithmetic), without numpy's
temporaries. Everything else a breakpoint does is O(|E|^2) on the elbow system or an O(n)
scan.

The sums are blocked as :func:`.svm_path_bound.blocked_sum` is (:data:`.svm_path_bound.BLOCK`
columns summed into a block's accumulator, the blocks' totals added in turn to the
start value), so that a term meets at most ``BLOCK + ceil(|E| / BLOCK) + 2`` roundings:
the rounding bounds of :class:`.svm_path_bound.MarginBound` (``fresh``: gamma of that
count; ``corrected`` and ``direction``: gamma_{|E|+1}, which that count never exceeds)
hold for this order as for the numpy one. :func:`elbow_pass_reference` is the numpy
formula the compiled loop implements (tests check one against the other).
"""

from __future__ import annotations

from typing import Any

import numpy as np
from numba import njit

from ...compiled import load_without_refresh
from .svm_path_bound import BLOCK, blocked_sum

__all__ = ["G_NONE", "G_FRESH", "G_CORRECT", "elbow_pass", "elbow_pass_reference"]

#: ``g_mode`` of :func:`elbow_pass`: leave g, sum it afresh, add a correction.
G_NONE, G_FRESH, G_CORRECT = 0, 1, 2


@njit(cache=True)
def elbow_pass(cols: Any, m: int, w: Any, base: Any, w0: float, y: Any, d: Any, d0: float,
               g: Any, s: Any, g_mode: int, want_s: bool) -> None:
    """In place, over the rows ``cols[:m]`` (row k = the column Q[:, idx_k])::

        G_FRESH:    g = (base + y w0) + sum_k w_k cols[k]      (base = qL, w0 = a_0)
        G_CORRECT:  g = g + (y w0 + sum_k w_k cols[k])         (w = c, w0 = c_0)
        want_s:     s = y d0 + sum_k d_k cols[k]

    each sum blocked (module docstring); g untouched for G_NONE, s unless ``want_s``."""
    n = y.size
    use_w = g_mode != 0
    if not (use_w or want_s):
        return
    # (the buffers of a sum not asked for stay empty: G_NONE's pass writes s alone)
    acc_w = np.empty(n if use_w else 0)
    acc_d = np.empty(n if want_s else 0)
    tot = np.empty(n if use_w else 0)
    if use_w:
        for i in range(n):
            tot[i] = base[i] + y[i] * w0 if g_mode == 1 else y[i] * w0
    if want_s:
        for i in range(n):
            s[i] = y[i] * d0
    for start in range(0, m, BLOCK):
        stop = min(m, start + BLOCK)
        acc_w[:] = 0.0
        acc_d[:] = 0.0
        k = start
        # four columns a sweep: a quarter of the accumulators' traffic (a term still
        # meets at most BLOCK roundings in its block)
        while k + 3 < stop:
            r0, r1, r2, r3 = cols[k], cols[k + 1], cols[k + 2], cols[k + 3]
            if use_w and want_s:
                wa, wb, wc, wd = w[k], w[k + 1], w[k + 2], w[k + 3]
                da, db, dc, dd = d[k], d[k + 1], d[k + 2], d[k + 3]
                for i in range(n):
                    x0, x1, x2, x3 = r0[i], r1[i], r2[i], r3[i]
                    acc_w[i] += (wa * x0 + wb * x1) + (wc * x2 + wd * x3)
                    acc_d[i] += (da * x0 + db * x1) + (dc * x2 + dd * x3)
            elif use_w:
                wa, wb, wc, wd = w[k], w[k + 1], w[k + 2], w[k + 3]
                for i in range(n):
                    acc_w[i] += (wa * r0[i] + wb * r1[i]) + (wc * r2[i] + wd * r3[i])
            elif want_s:
                da, db, dc, dd = d[k], d[k + 1], d[k + 2], d[k + 3]
                for i in range(n):
                    acc_d[i] += (da * r0[i] + db * r1[i]) + (dc * r2[i] + dd * r3[i])
            k += 4
        while k < stop:
            r0 = cols[k]
            if use_w:
                wa = w[k]
                for i in range(n):
                    acc_w[i] += wa * r0[i]
            if want_s:
                da = d[k]
                for i in range(n):
                    acc_d[i] += da * r0[i]
            k += 1
        if use_w:
            for i in range(n):
                tot[i] += acc_w[i]
        if want_s:
            for i in range(n):
                s[i] += acc_d[i]
    if g_mode == 1:
        for i in range(n):
            g[i] = tot[i]
    elif g_mode == 2:
        for i in range(n):
            g[i] += tot[i]


def elbow_pass_reference(cols: Any, m: int, w: np.ndarray, base: np.ndarray, w0: float,
                         y: np.ndarray, d: np.ndarray, d0: float, g: np.ndarray,
                         s: np.ndarray, g_mode: int, want_s: bool) -> None:
    """:func:`elbow_pass` in numpy (blocked products in BLAS's order)."""
    idx = np.arange(m)
    if g_mode == G_FRESH:
        g[:] = blocked_sum(cols, idx, w[:m], base + y * w0)
    elif g_mode == G_CORRECT:
        g += blocked_sum(cols, idx, w[:m], y * w0)
    if want_s:
        s[:] = blocked_sum(cols, idx, d[:m], y * d0)

load_without_refresh(globals())   # cached kernels load without numba's compiler contexts
