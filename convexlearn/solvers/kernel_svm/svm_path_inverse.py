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

__all__ = ["PENDING", "LazyInverse", "lazy_apply", "lazy_column", "fold_pending"]

#: Pending rank-one changes at most before they are folded into N_0.
PENDING = 16


@njit(cache=True)
def lazy_apply(N0: Any, V: Any, w: Any, p: int, m1: int, x: Any, out: Any) -> None:
    """out[:m1] = (N_0 + V^T diag(w) V) x over the leading m1 x m1 block, the p pending
    vectors the rows of V (N_0 read as symmetric: its rows); in numpy::

        out[:m1] = N0[:m1, :m1] @ x[:m1] + V[:p, :m1].T @ (w[:p] * (V[:p, :m1] @ x[:m1]))
    """
    # by rows of N_0 scaled and added (N_0 symmetric): vectorized, where a dot product a
    # row would be a chain of dependent additions
    for i in range(m1):
        out[i] = 0.0
    for j in range(m1):
        row = N0[j]
        xj = x[j]
        for i in range(m1):
            out[i] += xj * row[i]
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
    for i in range(m1):
        row = N0[i]
        for k in range(p):
            vk = V[k]
            c = w[k] * vk[i]
            for j in range(m1):
                row[j] += c * vk[j]


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

    def _push(self, v: np.ndarray, weight: float, m1: int) -> None:
        if self.p == PENDING:
            self.fold(m1)
        self.V[self.p, :m1] = v
        self.w[self.p] = weight
        self.p += 1

    def join(self, m1: int, c: np.ndarray, qii: float, tol: float) -> tuple[float, np.ndarray]:
        """Border N (m1 x m1) by the column c and corner qii: returns (sigma, u = N c);
        sigma = 0 and N untouched when |sigma| <= tol (|qii| + |c|^T |u|) (singular to
        round-off)."""
        u = self.apply(c, m1)
        sigma = qii - float(c @ u)
        if abs(sigma) <= tol * (abs(qii) + float(np.abs(c) @ np.abs(u))):
            return 0.0, u
        if self.p == PENDING:
            self.fold(m1)
        self.N0[m1, :m1 + 1] = 0.0
        self.N0[:m1, m1] = 0.0
        self.V[:self.p, m1] = 0.0
        v = np.empty(m1 + 1)
        v[:m1] = u
        v[m1] = -1.0
        self._push(v, 1.0 / sigma, m1 + 1)
        return sigma, u

    def swap(self, i: int, j: int, m1: int) -> None:
        """Exchange the indices i and j (rows and columns) of N."""
        swap_rows_cols(self.N0, i, j, m1)
        V = self.V[:self.p]
        V[:, [i, j]] = V[:, [j, i]]

    def drop_last(self, m1: int) -> tuple[np.ndarray, float] | None:
        """Remove the last row and column of N (m1 x m1): returns (e, f), e = N's last
        column without its last entry, f = N_rr; None (N untouched) when |f| <= 1e-300."""
        col = np.empty(m1)
        lazy_column(self.N0, self.V, self.w, self.p, m1, m1 - 1, col)
        f = float(col[m1 - 1])
        if not abs(f) > 1e-300:
            return None
        e = col[:m1 - 1]
        self._push(e, -1.0 / f, m1 - 1)
        return e, f

load_without_refresh(globals())   # cached kernels load without numba's compiler contexts
