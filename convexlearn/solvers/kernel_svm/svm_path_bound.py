"""A rigorous bound on the rounding error of the exact C-path's margins (:mod:`.svm_path`).

The path keeps g = Q a + y a_0 (``lambda y_i f(x_i)``) by updates, not by a sum over the
data at every breakpoint: a fresh sum every few breakpoints, between them a prediction
g + t s along the segment's direction (t = lambda' - lambda, s = Q_E d_E + y d_0), and the
refinement's corrections g + Q_E c + y c_0. :class:`MarginBound` follows every one of these
operations and keeps ``err`` >= max_i |g_i - (Q a + y a_0)_i| for the path's *current*
(a, a_0), with u = 2^-53 and gamma_k = k u / (1 - k u) (Higham's bound of a sum of k terms
in any order, so whatever order BLAS sums in), q = max_ij |Q_ij| and N = q ||a||_1 + |a_0|
(>= |(Q a + y a_0)_i|):

* fresh sum (qL + y a_0) + Q_E a_E, the columns by blocks of :data:`BLOCK`
  (:func:`blocked_sum`: one product a block, in any order, the blocks' totals added in
  turn, so that a term meets at most BLOCK + ceil(|E| / BLOCK) + 2 roundings, not |E| + 2:
  lasso_gram's device; a bound 10x tighter at |E| ~ 800): gamma_K (N + q off + e_qL) +
  e_qL + q off with off = sum_R |a_i| + sum_L |a_i - 1| (qL = Q_L 1 with its own bound
  e_qL: gamma_{K(|L|)} q |L| summed afresh by blocks, + u (q |L| + e_qL) per rank-one
  update; ``off``: qL stands for a_L = 1, a_R = 0, which the path sets exactly, measured
  rather than assumed);
* prediction: err + |t| e_s + q Dev + dev_0 + u |t| (S + e_s) + u (1 + u) (N + err + |t| (S +
  e_s)), with S = q ||d_E||_1 + |d_0| >= |s_i|, e_s = gamma_{|E|+1} S the error of s, and
  Dev >= sum_j |a'_j - a_j - t d_j|, dev_0 >= |a_0' - a_0 - t d_0| *measured* on the step
  actually taken (the rounding of a' = a + t d included: gamma_3 (|a'_j| + |a_j| + |t d_j|)
  a term), so a step that is not the segment's shows in the bound;
* an event's multiplier put exactly on its bound: + q |a_i - bound| (g does not follow);
* a correction (c, c_0) of k multipliers: + gamma_{k+1} (q ||c||_1 + |c_0|) + u N + 2u (N +
  err + q ||c||_1 + |c_0|) (the rounding of a + c, and of the two additions to g).
  The refinement applies its steps to the elbow's margins only and the total change to
  all of g once (:meth:`MarginBound.refined`): c = fl(a_E - a_E') measured, whose rounding
  adds u / (1 - u) (q ||c||_1 + |c_0|).

Every bound is first order, multiplied by (1 + 8u) for the second-order terms. A Gram
matrix that is not exactly symmetric (the path reads its rows as columns) adds
max_ij |Q_ij - Q_ji| ||a||_1 (:meth:`MarginBound.total`).
"""

from __future__ import annotations

from typing import Any

import numpy as np
from numba import njit

from ...compiled import load_without_refresh

__all__ = ["BLOCK", "MarginBound", "abs_max_and_asymmetry", "blocked_sum", "direction_bound",
           "fresh_bound", "moved_bound", "predicted_bound", "qL_update_bound", "signed_gram",
           "step_deviation"]

_U = 2.0 ** -53
_SAFE = 1.0 + 8 * _U
#: Rows of Q summed by one product in the fresh sums (:func:`blocked_sum`).
BLOCK = 32


@njit(cache=True)
def _gamma(k: float) -> float:
    return k * _U / (1.0 - k * _U)


@njit(cache=True)
def _abs_sum(x: Any) -> float:
    """sum_i |x_i| in four chains (vectorized); any order is as good for the bound."""
    n = x.size
    r0 = r1 = r2 = r3 = 0.0
    i = 0
    while i + 3 < n:
        r0, r1 = r0 + abs(x[i]), r1 + abs(x[i + 1])
        r2, r3 = r2 + abs(x[i + 2]), r3 + abs(x[i + 3])
        i += 4
    res = (r0 + r1) + (r2 + r3)
    while i < n:
        res += abs(x[i])
        i += 1
    return res


@njit(cache=True)
def _l1(x: Any) -> float:
    """An upper bound of ||x||_1 from a floating-point sum: a sum of k terms in any order
    is off by at most gamma_{k-1} of the sum of their magnitudes (Higham), which
    ``_SAFE``'s 8 u does not cover beyond a few terms."""
    return _abs_sum(x) / (1.0 - _gamma(x.size))


@njit(cache=True)
def _blocked_gamma(m: int) -> float:
    """The rounding factor of :func:`blocked_sum` over m rows (module docstring)."""
    return _gamma(BLOCK + -(-m // BLOCK) + 2)


def blocked_sum(rows: np.ndarray, idx: np.ndarray, w: np.ndarray | None = None,
                out: np.ndarray | None = None) -> np.ndarray:
    """out + sum_k w_k rows[idx_k] (w = 1 by default, out = 0), BLOCK rows a product
    and the blocks' totals added in turn."""
    out = np.zeros(rows.shape[1]) if out is None else out
    for start in range(0, idx.size, BLOCK):
        block = rows[idx[start:start + BLOCK]]
        out += block.sum(axis=0) if w is None else w[start:start + BLOCK] @ block
    return out


@njit(cache=True, error_model="numpy")
def abs_max_and_asymmetry(Q: Any) -> tuple[float, float]:
    """(max_ij |Q_ij|, max_ij |Q_ij - Q_ji|) in one pass over Q's upper triangle by
    tiles (both exact: a maximum rounds nothing, nor does the difference's magnitude
    compared here but through fl(Q_ij - Q_ji), as numpy's ``abs(Q - Q.T).max()``); nan
    anywhere gives nan. In numpy::

        max(abs(Q.max(initial=0)), abs(Q.min(initial=0))),  abs(Q - Q.T).max(initial=0)
    """
    n = Q.shape[0]
    big = 0.0
    asym = 0.0
    tile = 64
    for i0 in range(0, n, tile):
        for j0 in range(i0, n, tile):
            for i in range(i0, min(n, i0 + tile)):
                for j in range(max(j0, i), min(n, j0 + tile)):
                    qij = Q[i, j]
                    qji = Q[j, i]
                    big = max(big, abs(qij), abs(qji))
                    asym = max(asym, abs(qij - qji))
                    if qij != qij or qji != qji:
                        return np.nan, np.nan
    return big, asym


@njit(cache=True, error_model="numpy")
def signed_gram(K: Any, y: Any, Q: Any) -> tuple[float, float]:
    """Q_ij = y_i y_j K_ij written into ``Q`` (n x n, fresh: allocated by numpy, which asks
    the kernel for huge pages where it allows them; the path's first touch of 32 MB at
    n = 2000 costs 0.017 s CPU so, 0.024 s in numba's allocation), and (max_ij |Q_ij|,
    max_ij |Q_ij - Q_ji|), formed and measured in one pass over K by blocks of rows (the
    path's Q and :func:`abs_max_and_asymmetry`'s figures of it, bit for bit: each entry
    (K_ij y_i) y_j as numpy's ``K * y[:, None] * y[None, :]``, the figures equal for a
    finite K; nan anywhere, or a symmetric pair of infinities, gives nan figures, where
    the separate pass gives nan or (inf, 0): either fails every bound; n = 2000, pages already touched: 0.011 s CPU against 0.018 s for numpy's
    product and the separate pass). In numpy::

        Q[:] = K * y[:, None] * y[None, :];  abs_max_and_asymmetry(Q)
    """
    n = K.shape[0]
    big = 0.0
    asym = 0.0
    bad = False
    tile = 64
    for i0 in range(0, n, tile):
        i1 = min(n, i0 + tile)
        # a block of rows formed whole, row-major (K read and Q written contiguously:
        # a tiled write of Q's transposed half costs more than the pass it saves) ...
        for i in range(i0, i1):
            yi = y[i]
            for j in range(n):
                Q[i, j] = K[i, j] * yi * y[j]
        # ... then its pairs (i, j <= i) measured by tiles: rows j <= i are formed
        for j0 in range(0, i1, tile):
            for i in range(i0, i1):
                for j in range(j0, min(i + 1, j0 + tile)):
                    qij = Q[i, j]
                    qji = Q[j, i]
                    big = max(big, abs(qij), abs(qji))
                    d = abs(qij - qji)
                    asym = max(asym, d)
                    if d != d:                  # (nan in either)
                        bad = True
    if bad:
        return np.nan, np.nan
    return big, asym


@njit(cache=True)
def step_deviation(a_old: Any, a_new: Any, E: Any, idx: Any, dE: Any, t: float
                   ) -> tuple[float, float]:
    """(Dev, ||a_new||_1): Dev >= sum_j |a_new_j - a_old_j - t d_j| (d_j = dE at sample
    idx[k] = j, 0 off the elbow E), rounding of its own evaluation included."""
    g3 = 3 * _U / (1 - 3 * _U)
    dev = 0.0
    norm = 0.0
    for k in range(idx.size):
        j = idx[k]
        td = t * dE[k]
        dev += abs((a_new[j] - a_old[j]) - td) + g3 * (abs(a_new[j]) + abs(a_old[j]) + abs(td))
    for j in range(a_new.size):
        norm += abs(a_new[j])
        if not E[j]:
            dev += abs(a_new[j] - a_old[j]) * (1 + 2 * _U)
    n = a_new.size + idx.size + 2
    return dev * (1 + n * _U / (1 - n * _U)), norm * (1 + n * _U / (1 - n * _U))


@njit(cache=True)
def direction_bound(qabs: float, m: int, dE: Any, d0: float) -> tuple[float, float]:
    """(S, e_s) of a segment's direction: S = q ||d_E||_1 + |d_0| >= |s_i| and e_s =
    gamma_{m+1} S, the error of s (module docstring)."""
    s_scale = (qabs * _l1(dE) + abs(d0)) * _SAFE
    return s_scale, _gamma(m + 1) * s_scale


@njit(cache=True)
def predicted_bound(err: float, N: float, s_scale: float, s_err: float, qabs: float,
                    a_old: Any, a_new: Any, a0_old: float, a0_new: float, t: float, E: Any,
                    idx: Any, dE: Any, d0: float) -> tuple[float, float]:
    """(err, N) after the prediction g + t s to (a_new, a0_new) (module docstring):
    err + |t| e_s + q Dev + dev_0 + u |t| (S + e_s) + u (1 + u) (N + err + |t| (S + e_s))
    and N = q ||a_new||_1 + |a0_new|, Dev measured by :func:`step_deviation`."""
    dev, norm = step_deviation(a_old, a_new, E, idx, dE, t)
    td0 = t * d0
    dev0 = (abs((a0_new - a0_old) - td0)
            + _gamma(3) * (abs(a0_new) + abs(a0_old) + abs(td0))) * _SAFE
    t = abs(t)
    s_hi = s_scale + s_err
    err = (err + t * s_err + qabs * dev + dev0 + _U * t * s_hi
           + _U * (1 + _U) * (N + err + t * s_hi)) * _SAFE
    return err, (qabs * norm + abs(a0_new)) * _SAFE


@njit(cache=True)
def fresh_bound(qabs: float, e_qL: float, m: int, a: Any, a0: float, E: Any, L: Any
                ) -> tuple[float, float]:
    """(err, N) of a fresh sum over the m elbow columns (module docstring): N = q ||a||_1 +
    |a_0| and gamma_K (N + q off + e_qL) + e_qL + q off, off = sum_R |a_i| + sum_L |a_i - 1|
    (each 1-norm over the gathered terms bounded by :func:`_l1`; a_L - 1 is
    rounded once, a relative u)."""
    N = (qabs * _l1(a) + abs(a0)) * _SAFE
    n_l = n_r = 0
    for i in range(a.size):
        if L[i]:
            n_l += 1
        elif not E[i]:
            n_r += 1
    on_r = np.empty(n_r)
    on_l = np.empty(n_l)
    j = k = 0
    for i in range(a.size):
        if L[i]:
            on_l[k] = a[i] - 1.0
            k += 1
        elif not E[i]:
            on_r[j] = a[i]
            j += 1
    off = qabs * (_l1(on_r) + _l1(on_l) / (1 - _U)) * _SAFE
    return (_blocked_gamma(m) * (N + off + e_qL) + e_qL + off) * _SAFE, N


@njit(cache=True)
def moved_bound(err: float, N: float, qabs: float, delta: float) -> tuple[float, float]:
    """(err, N) once a multiplier is put on its bound, |a_i - bound| = delta, g not
    following: err + q delta, N + q delta."""
    return (err + qabs * delta) * _SAFE, N + qabs * delta * _SAFE


@njit(cache=True)
def qL_update_bound(e_qL: float, qabs: float, size: int) -> float:
    """e_qL after a rank-one update of qL = Q_L 1 (|L| = size): + u (q |L| + e_qL)."""
    return (e_qL + _U * (qabs * size + e_qL)) * _SAFE


class MarginBound:
    """``err`` >= max_i |g_i - (Q a + y a_0)_i| along the path (module docstring)."""

    def __init__(self, Q: np.ndarray, y: np.ndarray, figures: tuple | None = None):
        # figures: (max |Q_ij|, max |Q_ij - Q_ji|) where the caller has them (signed_gram's,
        # formed with Q: no pass over Q here)
        self.qabs, self.asym = abs_max_and_asymmetry(Q) if figures is None else figures
        self.err = self.e_qL = self.N = 0.0
        self.s_scale = self.s_err = 0.0

    def fresh_qL(self, size: int) -> None:
        self.e_qL = _blocked_gamma(size) * self.qabs * size * _SAFE

    def update_qL(self, size: int) -> None:
        self.e_qL = qL_update_bound(self.e_qL, self.qabs, size)

    def fresh(self, m: int, a: np.ndarray, a0: float, E: np.ndarray, L: np.ndarray) -> None:
        self.err, self.N = fresh_bound(self.qabs, self.e_qL, m, a, a0, E, L)

    def direction(self, m: int, dE: np.ndarray, d0: float) -> None:
        self.s_scale, self.s_err = direction_bound(self.qabs, m, dE, d0)

    def predicted(self, a_old: np.ndarray, a_new: np.ndarray, a0_old: float, a0_new: float,
                  t: float, E: np.ndarray, idx: np.ndarray, dE: np.ndarray, d0: float
                  ) -> None:
        self.err, self.N = predicted_bound(self.err, self.N, self.s_scale, self.s_err,
                                           self.qabs, a_old, a_new, a0_old, a0_new, t, E,
                                           idx, dE, d0)

    def moved(self, delta: float) -> None:
        self.err, self.N = moved_bound(self.err, self.N, self.qabs, delta)

    def corrected(self, k: int, c: np.ndarray, c0: float, a: np.ndarray, a0: float) -> None:
        size = (self.qabs * _l1(c) + abs(c0)) * _SAFE
        # ||a + c||_1 <= ||a||_1 + ||c||_1 (rounding: 1 + u): no pass over a
        self.N = N = (self.N + size) * (1 + _U) * _SAFE
        self.err = (self.err + _gamma(k + 1) * size + _U * N
                    + 2 * _U * (N + self.err + size)) * _SAFE

    def refined(self, k: int, c: np.ndarray, c0: float, a: np.ndarray, a0: float) -> None:
        """g + (Q_E c + y c_0) with c = fl(a_E - a_E'), c_0 = fl(a_0 - a_0') the measured
        change of the multipliers since the margins were last right (the refinement's
        steps and snaps): :meth:`corrected`, plus the rounding of those differences,
        |(a - a') - c| <= u / (1 - u) |c| a term."""
        dev = _U / (1 - _U) * (self.qabs * _l1(c) + abs(c0)) * _SAFE
        self.err = (self.err + dev) * _SAFE
        self.N = (self.N + dev) * _SAFE
        self.corrected(k, c, c0, a, a0)

    def total(self, a: np.ndarray) -> float:
        """The bound for the margins of the exact Q (its rows as rows)."""
        if self.asym == 0.0:          # (a symmetric Q: no pass over a)
            return self.err
        return self.err + self.asym * _l1(a) * _SAFE

load_without_refresh(globals())   # cached kernels load without numba's compiler contexts
