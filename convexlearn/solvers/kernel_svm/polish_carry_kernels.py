"""Removing rows and columns from a Cholesky factor in one compiled call (numba).

With K = R^T R (R upper triangular) and ``keep`` the positions that stay, the kept
columns of R with the removed rows struck out form an upper triangular T, and

    K[keep][:, keep] = T^T T + sum_{d removed} v_d v_d^T,     v_d = R[d, keep],

a rank-|D| *update* (never a downdate: no cancellation), made by Givens rotations
that fold each v_d into T row by row. v_d is zero on the kept positions before d, so the
rotations of d start at the first kept position after it. The work is column by column
(R and T are Fortran-ordered: a column is contiguous): column j of T first receives
the rotations of the rows above it, in order, then its diagonal entry those of the
rows v_d that reach it. About 3 |D| m^2 / 2 flops when the removed positions spread
evenly (m = |keep|), against m^3 / 3 for a fresh factorization.
"""

from __future__ import annotations

from typing import Any

import math

import numpy as np
from numba import njit

from ...compiled import load_without_refresh

__all__ = ["drop_positions", "gather_symmetric", "count_small", "zero_small",
           "max_abs_column_sum", "max_abs"]


@njit(cache=True)
def count_small(K: Any, limit: float) -> int:
    """The number of entries with |K_ij| < ``limit`` (a read pass, no temporaries)."""
    count = 0
    for j in range(K.shape[1]):
        for i in range(K.shape[0]):
            if abs(K[i, j]) < limit:
                count += 1
    return count


@njit(cache=True)
def max_abs(K: Any) -> float:
    """max_ij |K_ij|."""
    best = 0.0
    for j in range(K.shape[1]):
        for i in range(K.shape[0]):
            best = max(best, abs(K[i, j]))
    return best


@njit(cache=True)
def max_abs_column_sum(K: Any) -> float:
    """max_j sum_i |K_ij| (||K||_1; ||K||_inf for a symmetric K), column by column."""
    best = 0.0
    for j in range(K.shape[1]):
        total = 0.0
        for i in range(K.shape[0]):
            total += abs(K[i, j])
        best = max(best, total)
    return best


@njit(cache=True)
def zero_small(K: Any, limit: float) -> None:
    """K_ij = 0 where |K_ij| < ``limit``, in place."""
    for j in range(K.shape[1]):
        for i in range(K.shape[0]):
            if abs(K[i, j]) < limit:
                K[i, j] = 0.0


@njit(cache=True)
def gather_symmetric(K: Any, keep: Any, out: Any) -> None:
    """out[:m, :m] = K[keep][:, keep] (m = keep.size), column by column."""
    m = keep.shape[0]
    for j in range(m):
        cj = keep[j]
        for i in range(m):
            out[i, j] = K[keep[i], cj]


@njit(cache=True)
def drop_positions(R: Any, keep: Any, removed: Any, T: Any) -> None:
    """T[:m, :m] = the upper Cholesky factor of K[keep][:, keep] from R (K = R^T R,
    Fortran order; m = keep.size), ``keep`` and ``removed`` increasing positions that
    partition R's order (module docstring); T's lower triangle is left as it is. Its
    diagonal is positive (a row's rotation takes r = hypot(T_jj, v_dj) >= T_jj)."""
    m, nd = keep.shape[0], removed.shape[0]
    V = np.zeros((m, nd))                        # V[j, d]: row v_d at kept position j
    first = np.empty(nd, dtype=np.int64)         # the first kept position after d
    for j in range(m):
        cj = keep[j]
        for i in range(j + 1):
            T[i, j] = R[keep[i], cj]
        for d in range(nd):
            V[j, d] = R[removed[d], cj] if removed[d] < cj else 0.0
    p = 0
    for d in range(nd):
        while p < m and keep[p] < removed[d]:
            p += 1
        first[d] = p
    # (``removed`` increasing: the rows v_d active at kept position i are d < active[i])
    active = np.zeros(m, dtype=np.int64)
    for d in range(nd):
        for i in range(first[d], m):
            active[i] += 1
    c = np.ones((m, nd))
    s = np.zeros((m, nd))
    start = first[0] if nd else m
    for j in range(start, m):
        # the rotations of the rows above j, in the order they were made
        Vj = V[j]
        for i in range(start, j):
            t = T[i, j]
            ci, si = c[i], s[i]
            for d in range(active[i]):
                v = Vj[d]
                Vj[d] = ci[d] * v - si[d] * t
                t = ci[d] * t + si[d] * v
            T[i, j] = t
        # row j's own rotations: fold each v_d's entry j into the diagonal
        t = T[j, j]
        for d in range(active[j]):
            v = Vj[d]
            r = math.hypot(t, v)
            if r > 0.0:
                c[j, d], s[j, d] = t / r, v / r
                t = r
            Vj[d] = 0.0
        T[j, j] = t

load_without_refresh(globals())   # cached kernels load without numba's compiler contexts
