"""The KKT system of given sets of the linear SVM in the free multipliers' space.

With r_i the signed rows (y_i (z_i, 1), or y_i z_i without intercept), p their length,
F the free set and c_B = sum_{i in B} C_i r_i, the optimum of the sets solves
(:mod:`.linear_polish`)::

    w = c_B[:d] + R_F[:, :d]^T a_F,   <r_i, (w, b)> = 1 (i in F),   c_B[d] + y_F^T a_F = 0

Eliminating w leaves k + 1 unknowns (a_F, b), k = |F|::

    [ G     y_F ] [a_F]   [ 1 - R_F[:, :d] c_B[:d] ]       G = R_F[:, :d] R_F[:, :d]^T
    [ y_F^T  0  ] [ b ] = [ -c_B[d]                ]

(without intercept: G a_F = 1 - R_F c_B). Its cost is k^2 p + k^3 / 3 flops against the
w-space null-space method's complete QR of a p x p matrix (4 p^3 / 3): with few free
vectors and many unknowns (d > n, where p = n + 1 after the row-space reduction: 200 x 300
hinge at lam_max / 2, p = 201, 0-10 free vectors) a set costs ~0.1 ms instead of ~20 ms.
The residuals of the iterative refinement are recomputed from w (not from G), so the
answer is as accurate as the primal equations allow while cond(G) eps stays below 1; a
factor whose pivots fall below ``16 k eps`` of the largest (dependent free rows) is refused
(None) and the caller uses the w-space method.
"""

from __future__ import annotations

import warnings

import numpy as np
from scipy.linalg import LinAlgWarning, lu_factor, lu_solve

__all__ = ["dual_sets_solve", "dual_solve_pays"]

_EPS = np.finfo(float).eps


def dual_solve_pays(k: int, p: int) -> bool:
    """The free-space system is the cheaper one: at most p / 2 free vectors (its k^2 p
    against the w-space method's p^3)."""
    return 2 * k <= p


def dual_sets_solve(Zy: np.ndarray, intercept: bool, free_idx: np.ndarray, cB: np.ndarray,
                    zero: np.ndarray | None = None
                    ) -> tuple[np.ndarray, float, np.ndarray] | None:
    """(w, b, a_F) of the sets' KKT system (module docstring) solved in (a_F, b), with up
    to three steps of iterative refinement while the residual drops; None when the
    factor is numerically singular (the caller's w-space method takes over).

    Parameters
    ----------
    Zy : ndarray (n, p)
        The signed rows (p = d + 1 with intercept, the last column y).
    intercept : bool
    free_idx : ndarray of int
        The free set F.
    cB : ndarray (p,)
        sum over the bounded set of C_i r_i.
    zero : ndarray of bool, optional
        The samples at a_i = 0 (the rest not free is bounded): with no free vector, b is
        the midpoint of the interval its sets allow (:func:`_midpoint_b`), else 0.
    """
    p = Zy.shape[1]
    d = p - 1 if intercept else p
    R_F = Zy[free_idx]
    k = R_F.shape[0]
    if k == 0:
        # no free vector: w = c_B, and b is not determined by the system (the w-space
        # method's least-squares solve, 30-100 ms at p = 200, took 0)
        w = cB[:d].copy()
        return w, _midpoint_b(Zy, w, zero) if intercept and zero is not None else 0.0, \
            np.zeros(0)
    RFd = R_F[:, :d]
    m = k + 1 if intercept else k
    A = np.zeros((m, m))
    A[:k, :k] = RFd @ RFd.T
    if intercept:
        A[:k, k] = A[k, :k] = R_F[:, d]
    with warnings.catch_warnings():
        warnings.simplefilter("error", LinAlgWarning)
        try:
            factor = lu_factor(A, check_finite=False)
        except (LinAlgWarning, ValueError, np.linalg.LinAlgError):
            return None
    pivots = np.abs(np.diag(factor[0]))
    if not np.all(np.isfinite(pivots)) or \
            not pivots.min() > 16 * m * _EPS * max(float(pivots.max()), _EPS):
        return None

    def point(x):
        a_F = x[:k]
        w = cB[:d] + RFd.T @ a_F
        b = float(x[k]) if intercept else 0.0
        return w, b, a_F

    def residual(x):
        w, b, a_F = point(x)
        r = 1.0 - (RFd @ w + (R_F[:, d] * b if intercept else 0.0))
        # each row in the units of its terms (a zero residual is exact)
        size = np.abs(RFd) @ np.abs(w) + 1.0
        if intercept:
            size += np.abs(b)
            eq = -(cB[d] + R_F[:, d] @ a_F)
            r = np.append(r, eq)
            size = np.append(size, abs(cB[d]) + np.abs(R_F[:, d]) @ np.abs(a_F) + _EPS)
        return r, float(np.max(np.abs(r) / size))

    rhs = np.ones(m)
    rhs[:k] -= RFd @ cB[:d]
    if intercept:
        rhs[k] = -cB[d]
    x = lu_solve(factor, rhs, check_finite=False)
    if not np.all(np.isfinite(x)):
        return None
    r, size = residual(x)
    for _ in range(3):
        if size <= 4 * _EPS:
            break
        x2 = x + lu_solve(factor, r, check_finite=False)
        r2, size2 = residual(x2)
        if not size2 < size:
            break
        x, r, size = x2, r2, size2
    return point(x)


def _midpoint_b(Zy: np.ndarray, w: np.ndarray, zero: np.ndarray) -> float:
    """The b that minimizes the largest violation of the sets' margin rules at w (every
    multiplier at a bound: m_i = f_i + y_i b >= 1 at a_i = 0, <= 1 at a_i = C_i, with
    f_i = <r_i[:d], w> and y_i = r_i[d]): the midpoint of [lo, hi], the largest lower
    and the smallest upper bound the rules put on b (consistent sets: lo <= hi; else
    the violations at both ends are equal). One side unbounded: its finite end; none: 0."""
    d = Zy.shape[1] - 1
    f = Zy[:, :d] @ w
    s = Zy[:, d]
    # y_i b >= 1 - f_i (zero) or <= 1 - f_i (bounded): a lower bound on b where
    # (zero) == (y_i > 0), an upper bound otherwise
    bound = (1.0 - f) * s
    lower = zero == (s > 0)
    lo = float(np.max(bound[lower], initial=-np.inf))
    hi = float(np.min(bound[~lower], initial=np.inf))
    if np.isfinite(lo) and np.isfinite(hi):
        return 0.5 * (lo + hi)
    return lo if np.isfinite(lo) else hi if np.isfinite(hi) else 0.0
