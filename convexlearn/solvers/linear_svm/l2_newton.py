"""The exact L2-loss (squared hinge) linear SVM: DCD warm start, then Newton in w-space.

In the variables u of the rows z_i (z_i = (x_i - mu, 1) with an intercept, x_i without)::

    P(u) = 1/2 u^T R u + sum_i C_i max(0, 1 - y_i <z_i, u>)^2

R = I, except R_bb = 0 for the unpenalized intercept. P is convex, piecewise quadratic and
C^1: on the set A = {i : y_i <z_i, u> < 1} it is the quadratic whose minimizer solves

    (R + 2 Z_A^T diag(C_A) Z_A) u = 2 Z_A^T (C_A y_A)

The generalized Newton method (Mangasarian 2002; Keerthi & DeCoste 2005 for this loss)
solves that system for the current set and moves by an exact line search along the
direction (P is piecewise quadratic on a line: its derivative is piecewise linear and
increasing, found by Newton steps on its pieces). It ends when the set at the new point
is the set it was computed for: then the gradient vanishes up to round-off and u is the
optimum (the set is finite, P decreases at every step: finite termination). DCD
(:func:`~convexlearn.solvers.linear_svm.dcd.dcd_linear`, LIBLINEAR's L2-loss dual
coordinate descent) to a loose tolerance guesses the set, so that one or two systems
usually finish it. Centring the rows (unpenalized b absorbs <w, mu>) keeps the system
well conditioned on data far from the origin.
"""

from __future__ import annotations

from typing import Any

import math

import numpy as np
from scipy import linalg

from .linear_active_set import one_blas_thread

__all__ = ["l2_newton", "rows_of", "squared_hinge_linear"]

_MAX_NEWTON = 200


def rows_of(X: np.ndarray, mode: str) -> tuple[np.ndarray, np.ndarray, np.ndarray | None]:
    """(Z, R's diagonal, mu): the rows z_i for the intercept ``mode`` ("none",
    "unpenalized": centred rows and a 1, "penalized": x_i and a 1, LIBLINEAR's bias 1)."""
    n, d = X.shape
    if mode == "none":
        return np.asarray(X, dtype=float), np.ones(d), None
    mu = X.mean(axis=0) if mode == "unpenalized" else None
    Z = np.empty((n, d + 1))
    Z[:, :d] = X if mu is None else X - mu
    Z[:, d] = 1.0
    reg = np.ones(d + 1)
    if mode == "unpenalized":
        reg[d] = 0.0
    return Z, reg, mu


def _objective(u, reg, m, C):
    xi = np.maximum(0.0, 1.0 - m)
    return 0.5 * float(u @ (reg * u)) + float(C @ (xi * xi))


def _line_search(u, du, reg, m, dm, C) -> float:
    """argmin_t P(u + t du) for t >= 0: the root of the piecewise linear, increasing
    phi'(t) = t du^T R du + u^T R du - 2 sum_i C_i max(0, 1 - m_i - t dm_i) dm_i."""
    a0, a1 = float(u @ (reg * du)), float(du @ (reg * du))
    t, lo, hi = 1.0, 0.0, math.inf
    for _ in range(100):
        r = 1.0 - m - t * dm
        act = r > 0
        slope = a0 + t * a1 - 2.0 * float(np.sum(C[act] * r[act] * dm[act]))
        curv = a1 + 2.0 * float(np.sum(C[act] * dm[act] ** 2))
        if slope == 0.0 or curv <= 0.0:
            break
        if slope > 0:
            hi = t
        else:
            lo = t
        step = t - slope / curv
        new = step if lo < step < hi else (0.5 * (lo + hi) if math.isfinite(hi) else 2 * t)
        if abs(new - t) <= 1e-15 * max(1.0, t):
            t = new
            break
        t = new
    return t


def _normal_equations(Z, y, C, rows):
    """(2 Z_S^T diag(C_S) Z_S, 2 Z_S^T (C_S y_S)) on the rows S."""
    c = 2.0 * C[rows]
    ZS = Z[rows]
    B = ZS * np.sqrt(c)[:, None]
    return B.T @ B, ZS.T @ (c * y[rows])


def l2_newton(Z: np.ndarray, y: np.ndarray, C: np.ndarray, reg: np.ndarray,
              u0: np.ndarray | None = None, max_iter: int = _MAX_NEWTON) -> tuple[Any, ...]:
    """Generalized Newton on P(u) (module docstring) from ``u0`` (default 0).

    Returns
    -------
    u, n_iter, converged
        ``converged``: the last system's set is the set at its solution (exact up to the
        round-off of one linear solve).
    """
    p = Z.shape[1]
    u = np.zeros(p) if u0 is None else np.asarray(u0, dtype=float).copy()
    m = y * (Z @ u)
    H = rhs = None
    prev = np.zeros(Z.shape[0], dtype=bool)
    for it in range(1, max_iter + 1):
        act = (m < 1.0) & (C > 0)
        added, removed = act & ~prev, prev & ~act
        if H is None or added.sum() + removed.sum() > act.sum() // 2:
            H, rhs = _normal_equations(Z, y, C, act)
        else:       # the set moved by a few rows: update R + 2 Z_A^T C_A Z_A by them
            for rows, sign in ((added, 1.0), (removed, -1.0)):
                if rows.any():
                    dH, drhs = _normal_equations(Z, y, C, rows)
                    H += sign * dH
                    rhs += sign * drhs
        prev = act
        A = H.copy()
        A[np.diag_indices(p)] += reg
        try:
            target = linalg.solve(A, rhs, assume_a="pos", check_finite=False)
        except (linalg.LinAlgError, ValueError):
            target = np.linalg.lstsq(A, rhs, rcond=None)[0]
        m_target = y * (Z @ target)
        if np.array_equal((m_target < 1.0) & (C > 0), act):
            # the minimizer of the set's quadratic has that set: the optimum
            return target, it, True
        du = target - u
        t = _line_search(u, du, reg, m, m_target - m, C)
        u = u + t * du
        m = y * (Z @ u)
    return u, max_iter, False


def squared_hinge_linear(X: np.ndarray, y: np.ndarray, C: np.ndarray, mode: str, *,
                         warm_tol: float = 1e-2, warm_epochs: int = 0, seed: Any = 0
                         ) -> tuple[np.ndarray, float, dict]:
    """(w, b, info) of the L2-loss SVM on dense X with per-sample costs C (module docstring).

    DCD warm start (uniform C only: its dual adds a / (2C) to one diagonal), then
    :func:`l2_newton`. ``info``: newton_iter, converged, dcd_epochs.
    """
    from .dcd import dcd_linear     # (same package: the warm start)
    Z, reg, mu = rows_of(X, mode)
    d = X.shape[1]
    u0, epochs = None, 0
    if warm_epochs and bool(np.all(C == C[0])) and C[0] > 0:
        Xw = Z if mode == "penalized" else X
        _, w0, b0, epochs, _, _ = dcd_linear(Xw, y, float(C[0]), "squared_hinge",
                                             mode == "unpenalized", warm_tol, warm_epochs, seed,
                                             record=False)
        if mode == "unpenalized":
            u0 = np.append(w0, b0 + float(w0 @ mu))
        else:
            u0 = np.asarray(w0, dtype=float)
    with one_blas_thread():     # p x p systems and n x p products: threads only contend
        u, it, converged = l2_newton(Z, y, C, reg, u0)
    if mode == "none":
        w, b = u, 0.0
    else:
        w, b = u[:d], float(u[d])
        if mu is not None:
            b -= float(w @ mu)
    return w, b, {"newton_iter": it, "converged": converged, "dcd_epochs": epochs}
