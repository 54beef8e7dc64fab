"""The inverse of the exact C-path's bordered elbow matrix, with its rank-one changes
applied lazily (:mod:`.svm_path`).

A sample joining the elbow borders the inverse N (its Schur complement sigma = q_ii -
c^T N c, u = N c)::

    N' = [[N + u u^T / sigma, -u / sigma], [-u^T / sigma, 1 / sigma]]
       = [[N, 0], [0, 0]] + w v v^T,       v = [u, -1],  w = 1 / sigma,

and the last one leaving drops a row and column (e = N[:, r], f = N_rr)::

    N'_KK = N_KK + w e_K e_K^T,            w = -1 / f.

Applied at once, each change is a pass over N's m^2 entries that reads and writes them
(a join two: u = N c, then the update). Here N is kept as N_0 + sum_j w_j v_j v_j^T
(Woodbury's form) with at most :data:`PENDING` pending vectors: a product N x costs one
pass reading N_0 and O(m p) for the p pending ones, a leave O(m p) (its column of N), and
the pending vectors are folded into N_0 once there are :data:`PENDING` of them (one pass
for PENDING changes, its arithmetic kept in cache a row at a time). The inverse is not
part of any certificate: the path checks the directions it gives by their margins
(:func:`.svm_path_elbow.checked`) and refactorizes it when they miss.

The compiled kernels' numpy formulas are written beside them; tests check one against the
other and the lazy inverse against a dense one updated at once.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from numba import njit

from ...compiled import load_without_refresh
from .svm_path_kernels import swap_rows_cols

__all__ = ["PENDING", "LazyInverse", "lazy_apply", "lazy_column", "fold_pending", "lazy_border",
           "lazy_drop", "lazy_swap"]

#: Pending rank-one changes at most before they are folded into N_0.
PENDING = 16


@njit(cache=True)
def lazy_apply(N0: Any, V: Any, w: Any, p: int, m1: int, x: Any, out: Any) -> None:
    """out[:m1] = (N_0 + V^T diag(w) V) x over the leading m1 x m1 block, the p pending
    vectors the rows of V (N_0 read as symmetric: its rows); in numpy::

        out[:m1] = N0[:m1, :m1] @ x[:m1] + V[:p, :m1].T @ (w[:p] * (V[:p, :m1] @ x[:m1]))
    """
    # by rows of N_0 scaled and added (N_0 symmetric), four rows a sweep: vectorized,
    # where a dot product a row would be a chain of dependent additions, and a quarter
    # of out's loads and stores
    for i in range(m1):
        out[i] = 0.0
    j = 0
    while j + 3 < m1:
        r0, r1, r2, r3 = N0[j], N0[j + 1], N0[j + 2], N0[j + 3]
        x0, x1, x2, x3 = x[j], x[j + 1], x[j + 2], x[j + 3]
        for i in range(m1):
            out[i] += (x0 * r0[i] + x1 * r1[i]) + (x2 * r2[i] + x3 * r3[i])
        j += 4
    while j < m1:
        row = N0[j]
        xj = x[j]
        for i in range(m1):
            out[i] += xj * row[i]
        j += 1
    for k in range(p):
        vk = V[k]
        z = 0.0
        for j in range(m1):
            z += vk[j] * x[j]
        z *= w[k]
        for i in range(m1):
            out[i] += z * vk[i]


@njit(cache=True)
def lazy_column(N0: Any, V: Any, w: Any, p: int, m1: int, r: int, out: Any) -> None:
    """out[:m1] = column r of N_0 + V^T diag(w) V over the leading block; in numpy::

        out[:m1] = N0[r, :m1] + V[:p, :m1].T @ (w[:p] * V[:p, r])
    """
    row = N0[r]
    for i in range(m1):
        out[i] = row[i]
    for k in range(p):
        vk = V[k]
        z = w[k] * vk[r]
        for i in range(m1):
            out[i] += z * vk[i]


@njit(cache=True)
def fold_pending(N0: Any, V: Any, w: Any, p: int, m1: int) -> None:
    """N_0[:m1, :m1] += V^T diag(w) V in place, a row at a time; in numpy::

        N0[:m1, :m1] += (V[:p, :m1].T * w[:p]) @ V[:p, :m1]
    """
    # eight pending vectors a sweep over the row: an eighth of its loads and stores
    # (20 % faster than four at m1 = 300-800, p = 16)
    for i in range(m1):
        row = N0[i]
        k = 0
        while k + 7 < p:
            v0, v1, v2, v3 = V[k], V[k + 1], V[k + 2], V[k + 3]
            v4, v5, v6, v7 = V[k + 4], V[k + 5], V[k + 6], V[k + 7]
            c0, c1 = w[k] * v0[i], w[k + 1] * v1[i]
            c2, c3 = w[k + 2] * v2[i], w[k + 3] * v3[i]
            c4, c5 = w[k + 4] * v4[i], w[k + 5] * v5[i]
            c6, c7 = w[k + 6] * v6[i], w[k + 7] * v7[i]
            for j in range(m1):
                row[j] += (((c0 * v0[j] + c1 * v1[j]) + (c2 * v2[j] + c3 * v3[j]))
                           + ((c4 * v4[j] + c5 * v5[j]) + (c6 * v6[j] + c7 * v7[j])))
            k += 8
        while k < p:
            vk = V[k]
            c = w[k] * vk[i]
            for j in range(m1):
                row[j] += c * vk[j]
            k += 1


@njit(cache=True)
def lazy_border(N0: Any, V: Any, w: Any, p: int, m1: int, c: Any, qii: float, tol: float,
                u: Any) -> tuple[float, int]:
    """:meth:`LazyInverse.join` in one call: u = N c (:func:`lazy_apply`), sigma = qii -
    c^T u; unless |sigma| <= tol (|qii| + |c|^T |u|) (then (0, p), N untouched), N's
    row and column m1 zeroed and v = [u, -1] pushed with weight 1 / sigma (the pending
    ones folded first when there are PENDING). Returns (sigma, the new p)."""
    lazy_apply(N0, V, w, p, m1, c, u)
    cu = 0.0
    scale = abs(qii)
    for i in range(m1):
        cu += c[i] * u[i]
        scale += abs(c[i]) * abs(u[i])
    sigma = qii - cu
    if abs(sigma) <= tol * scale:
        return 0.0, p
    if p == PENDING:
        fold_pending(N0, V, w, p, m1)
        p = 0
    for j in range(m1 + 1):
        N0[m1, j] = 0.0
    for i in range(m1):
        N0[i, m1] = 0.0
    for k in range(p):
        V[k, m1] = 0.0
    for i in range(m1):
        V[p, i] = u[i]
    V[p, m1] = -1.0
    w[p] = 1.0 / sigma
    return sigma, p + 1


@njit(cache=True)
def lazy_drop(N0: Any, V: Any, w: Any, p: int, m1: int, col: Any) -> tuple[float, int]:
    """:meth:`LazyInverse.drop_last` in one call: col = N's last column
    (:func:`lazy_column`), f = its last entry; unless |f| <= 1e-300 (then (f, p), N
    untouched), e = col[:m1 - 1] pushed with weight -1 / f (the pending ones folded first
    when there are PENDING). Returns (f, the new p)."""
    lazy_column(N0, V, w, p, m1, m1 - 1, col)
    f = col[m1 - 1]
    if not abs(f) > 1e-300:
        return f, p
    if p == PENDING:
        fold_pending(N0, V, w, p, m1 - 1)
        p = 0
    for i in range(m1 - 1):
        V[p, i] = col[i]
    w[p] = -1.0 / f
    return f, p + 1


@njit(cache=True)
def lazy_swap(N0: Any, V: Any, p: int, i: int, j: int, m1: int) -> None:
    """Indices i and j (rows and columns of N_0, entries of the p pending vectors)
    exchanged over the leading m1 x m1 block."""
    swap_rows_cols(N0, i, j, m1)
    for k in range(p):
        V[k, i], V[k, j] = V[k, j], V[k, i]


class LazyInverse:
    """N = N_0 + sum_j w_j v_j v_j^T over the leading (m + 1) x (m + 1) block of buffers
    with room for ``cap`` elbow samples (module docstring)."""

    def __init__(self, cap: int):
        self.N0 = np.empty((cap + 1, cap + 1))
        self.V = np.empty((PENDING, cap + 1))
        self.w = np.empty(PENDING)
        self.p = 0

    def grow(self, cap: int, m1: int) -> None:
        """Larger buffers, the leading m1 x m1 block and the pending vectors kept."""
        N0, V = self.N0, self.V
        self.N0 = np.empty((cap + 1, cap + 1))
        self.N0[:m1, :m1] = N0[:m1, :m1]
        self.V = np.empty((PENDING, cap + 1))
        self.V[:self.p, :m1] = V[:self.p, :m1]

    def set(self, inv: np.ndarray) -> None:
        """N = inv (a fresh factorization), no change pending."""
        m1 = inv.shape[0]
        self.N0[:m1, :m1] = inv
        self.p = 0

    def fold(self, m1: int) -> None:
        """Apply the pending changes to N_0."""
        if self.p:
            fold_pending(self.N0, self.V, self.w, self.p, m1)
            self.p = 0

    def dense(self, m1: int) -> np.ndarray:
        """N itself (the pending changes folded): a view of N_0's leading block."""
        self.fold(m1)
        return self.N0[:m1, :m1]

    def apply(self, x: np.ndarray, m1: int) -> np.ndarray:
        """N x."""
        out = np.empty(m1)
        lazy_apply(self.N0, self.V, self.w, self.p, m1, x, out)
        return out

    def join(self, m1: int, c: np.ndarray, qii: float, tol: float) -> tuple[float, np.ndarray]:
        """Border N (m1 x m1) by the column c and corner qii: returns (sigma, u = N c);
        sigma = 0 and N untouched when |sigma| <= tol (|qii| + |c|^T |u|) (singular to
        round-off)."""
        u = np.empty(m1)
        sigma, self.p = lazy_border(self.N0, self.V, self.w, self.p, m1, c, qii, tol, u)
        return sigma, u

    def swap(self, i: int, j: int, m1: int) -> None:
        """Exchange the indices i and j (rows and columns) of N."""
        lazy_swap(self.N0, self.V, self.p, i, j, m1)

    def drop_last(self, m1: int) -> tuple[np.ndarray, float] | None:
        """Remove the last row and column of N (m1 x m1): returns (e, f), e = N's last
        column without its last entry, f = N_rr; None (N untouched) when |f| <= 1e-300."""
        col = np.empty(m1)
        f, self.p = lazy_drop(self.N0, self.V, self.w, self.p, m1, col)
        if not abs(f) > 1e-300:
            return None
        return col[:m1 - 1], f

load_without_refresh(globals())   # cached kernels load without numba's compiler contexts
