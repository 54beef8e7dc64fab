"""Face steps for dual coordinate descent: purification, then an active-set walk on faces.

The dual of the linear SVM on centred rows z_i (b unpenalized)::

    max_a  D(a) = e^T a - 1/2 ||Z^T (y * a)||^2,    0 <= a_i <= C_i,   y^T a = 0

depends on a only through sum_i a_i r_i, r_i = y_i (z_i, 1). Coordinate descent keeps
many multipliers inside the box long after w is nearly right; a face step first purifies
the free set (moves along null directions of its rows until they are independent: w,
y^T a kept, D not decreasing), then walks faces whose optimum solves the bordered KKT
system, a violator joining or a bound leaving per step. The caller's epochs verify the
point. Details: docs/routes.md, "Design notes of the algorithms".
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ..kernel_svm.polish import solve_on_active_set

__all__ = ["purify", "face_walk"]

_REFACTOR = 256        # pivots between fresh factorizations (Sherman-Morrison drift)
_RANK_TOL = 1e-10      # eigenvalues of R_F^T R_F below this times the largest: rank lost


def _factor(R: np.ndarray, g: np.ndarray):
    """(Rt, M, h) for the rows R: Rt = R V in an orthonormal basis V of their span,
    M = (Rt^T Rt)^-1 (diagonal here), h = Rt^T g."""
    lam, V = np.linalg.eigh(R.T @ R)
    keep = lam > _RANK_TOL * max(float(lam[-1]), np.finfo(float).tiny)
    Rt = R @ V[:, keep]
    return Rt, np.diag(1.0 / lam[keep]), Rt.T @ g


def purify(R: np.ndarray, g: np.ndarray, a: np.ndarray, upper: np.ndarray) -> Any:
    """Purification of the free multipliers ``a`` (see the module docstring).

    Parameters
    ----------
    R : ndarray (k, p)
        Signed augmented rows r_i = y_i (z_i, 1) of the free coordinates.
    g : ndarray (k,)
        Gradient of the dual there, 1 - y_i <z_i, w> (any multiple of y may be added).
    a : ndarray (k,)
        Free multipliers, 0 < a_i < upper_i.
    upper : ndarray (k,)

    Returns
    -------
    a, free, pivots
        The new multipliers (those that left F at a bound exactly), the mask of the
        coordinates still free (their rows are independent), and the number of pivots.
    """
    a = np.array(a, dtype=float)
    idx = np.arange(a.size)        # the rows of Rt (positions in the input)
    live = np.ones(a.size, dtype=bool)
    pivots, since = 0, _REFACTOR
    while idx.size:
        if since >= _REFACTOR:
            idx = idx[live]
            Rt, M, h = _factor(R[idx], g[idx])
            gA, uA = g[idx], upper[idx]
            live = np.ones(idx.size, dtype=bool)
            count, since = idx.size, 0
        if count <= Rt.shape[1]:
            break                              # independent rows: nothing to purify
        aA = a[idx]
        n = gA - Rt @ (M @ h)
        n[~live] = 0.0
        if np.max(np.abs(n)) <= 1e-12 * (1.0 + np.max(np.abs(gA[live]))):
            # no ascent left: a null vector of the coordinate nearest its bound
            room = np.where(live, np.minimum(aA, uA - aA), np.inf)
            j = int(np.argmin(room))
            n = -(Rt @ (M @ Rt[j]))
            n[j] += 1.0
            n[~live] = 0.0
            if aA[j] < uA[j] - aA[j]:
                n = -n
        big = 1e-12 * np.max(np.abs(n))
        with np.errstate(divide="ignore", invalid="ignore"):
            ratio = np.where(n > big, (uA - aA) / n, np.where(n < -big, -aA / n, np.inf))
        k = int(np.argmin(ratio))
        if not np.isfinite(ratio[k]):
            break
        new = np.clip(aA + ratio[k] * n, 0.0, uA)
        new[k] = uA[k] if n[k] > 0 else 0.0
        a[idx] = new
        # row k leaves: zeroed in place (a deleted copy per pivot cost a third of the time)
        x = Rt[k].copy()
        Rt[k] = 0.0
        live[k] = False
        count -= 1
        pivots += 1
        Mx = M @ x
        denom = 1.0 - float(x @ Mx)
        if denom <= 1e-8:                      # the rank drops: refactor
            since = _REFACTOR
            continue
        M += np.outer(Mx, Mx) / denom
        h -= x * gA[k]
        since += 1
    free = np.zeros(a.size, dtype=bool)
    free[idx[live]] = True
    return a, free, pivots


def _signed_rows(Z: np.ndarray, y: np.ndarray, idx: np.ndarray) -> np.ndarray:
    return y[idx, None] * np.column_stack([Z[idx], np.ones(idx.size)])


class _CrossBlock:
    """Z[rows] Z[cols]^T as an operator: the face system needs only its product with the
    bounded multipliers, O(n d) through w_B = Z^T v (scattered), never the |rows| x |cols|
    matrix (which for |F| ~ 3000 and 10^6 bounded rows would take 24 GB)."""

    def __init__(self, Z: np.ndarray, rows: np.ndarray, cols: np.ndarray):
        self.Z, self.rows, self.cols = Z, rows, cols

    def __matmul__(self, v: np.ndarray) -> np.ndarray:
        full = np.zeros(self.Z.shape[0])
        full[self.cols] = v
        return self.Z[self.rows] @ (self.Z.T @ full)


def face_walk(Z: np.ndarray, y: np.ndarray, upper: np.ndarray, alpha: np.ndarray,
              max_rounds: int = 200, margin_tol: float = 1e-9) -> Any:
    """Purification and the active-set walk of the module docstring, from ``alpha``.

    Parameters
    ----------
    Z : ndarray (n, d)
        Dense rows (centred or not: the intercept absorbs a shift).
    y : ndarray of {-1, +1}
    upper : ndarray (n,)
        Finite bounds C_i.
    alpha : ndarray (n,)
        Starting multipliers inside the box (need not be balanced).
    max_rounds : int
        Face solves at most.
    margin_tol : float
        Margin violation (margin units) that makes a sample join the free set.

    Returns
    -------
    alpha, b, info
        The last point (balanced once a face optimum was reached), its intercept (None if
        no face optimum was reached) and ``info`` = dict(rounds, pivots, optimal): optimal
        when no margin contradicted the last face.
    """
    a = np.clip(np.array(alpha, dtype=float), 0.0, upper)
    w = Z.T @ (y * a)
    in_F = (a > 0.0) & (a < upper)
    pivots = rounds = 0

    def purify_free(w):
        nonlocal pivots
        F = np.flatnonzero(in_F)
        if F.size:
            g = 1.0 - y[F] * (Z[F] @ w)
            new, keep, piv = purify(_signed_rows(Z, y, F), g, a[F], upper[F])
            a[F] = new
            in_F[F[~keep]] = False
            pivots += piv

    def kernel_block(rows, cols):
        if rows is cols:
            return Z[rows] @ Z[rows].T
        return _CrossBlock(Z, rows, cols)

    purify_free(w)
    b = None
    info = dict(rounds=0, pivots=0, optimal=False)
    while rounds < max_rounds:
        rounds += 1
        F = np.flatnonzero(in_F)
        if F.size == 0:
            break
        B = np.flatnonzero(~in_F & (a >= upper))
        target, b_face = solve_on_active_set(y, upper, True, kernel_block, F, B)
        step = target - a[F]
        out = (target < 0.0) | (target > upper[F])
        if out.any():
            # stop at the box: the first coordinate to reach its bound leaves F
            with np.errstate(divide="ignore", invalid="ignore"):
                t = np.where(step > 0, (upper[F] - a[F]) / step,
                             np.where(step < 0, -a[F] / step, np.inf))
            k = int(np.argmin(t))
            a[F] = np.clip(a[F] + min(float(t[k]), 1.0) * step, 0.0, upper[F])
            a[F[k]] = upper[F[k]] if step[k] > 0 else 0.0
            in_F[F[k]] = False
            continue
        a[F] = target
        b = float(b_face)
        w = Z.T @ (y * a)
        m = y * (Z @ w + b)
        wrong = np.where(in_F, 0.0, np.where(a <= 0.0, 1.0 - m, m - 1.0))
        wrong[upper <= 0.0] = 0.0        # C_i = 0 (weight 0): any margin is optimal
        j = int(np.argmax(wrong))
        if wrong[j] <= margin_tol:
            info["optimal"] = True
            break
        in_F[j] = True
        purify_free(w)
    info.update(rounds=rounds, pivots=pivots)
    return a, b, info
