"""The face step of the exact linear SVM on sparse X: the face's KKT system by conjugate gradients.

With the multipliers split by a DCD point into F (free, 0 < a_i < C_i), U (a_i = C_i) and
the rest (a_i = 0), the dual optimum on that face solves, for i in F (z_i = x_i - mu, any
mu with an intercept: y^T a = 0 makes the shift vanish)::

    y_i <z_i, Z_F^T (y a)_F> + y_i b_c = 1 - y_i <z_i, c_U>,   c_U = Z_U^T (y C)_U
    y_F^T a_F = -y_U^T C_U                                        (with an intercept)

a positive semidefinite system in a_F, Q_FF = Y_F Z_F Z_F^T Y_F, bordered by the balance
row. Conjugate gradients on it (projected onto y_F^T a_F = const with an intercept: Gould,
Hribar and Nocedal 2001) need only products with X_F and X_F^T: O(nnz of the free rows) per
iteration and vectors of n and d, never Q_FF (|F| x |F|: 1.6 GB at |F| = 14000) nor a
d x d matrix. The centring is implicit (Z v = X v - 1 <mu, v>), as in DCD: with the raw
rows the constant direction is a huge eigenvalue that round-off feeds back into the
projected iteration (measured: no convergence in 2000 iterations on the 50000 x 20000
benchmark, against ~150 centred).

DCD reaches the right face long before it reaches an accurate point on it (coordinate
descent converges linearly at a rate set by the conditioning of Q_FF, conjugate gradients
at its square root); a face solve whose multipliers leave the box, or whose margins
contradict the sets, hands the clipped point back to DCD, which moves the few samples on
the wrong side (:func:`convexlearn.solvers.linear_svm.linear_exact.solve_linear_exact`).
"""

from __future__ import annotations

from typing import Any

import math

import numpy as np

__all__ = ["face_solve"]

#: Relative threshold (of max C_i) below which a multiplier is read as at its bound.
SET_CUT = 1e-10
#: Relative excursion (of max C_i) outside the box that ends a face solve at ``box_check``.
BOX_OUT = 1e-6


def face_solve(X: Any, y: np.ndarray, C: np.ndarray, alpha: np.ndarray, intercept: bool,
               mu: np.ndarray, tol: float = 1e-13, max_iter: int = 2000,
               box_check: float | None = None) -> Any:
    """The optimum of the face of ``alpha`` (module docstring) by conjugate gradients.

    Parameters
    ----------
    X : scipy.sparse matrix (n, d), CSR
    y : ndarray of {-1, +1}
    C : ndarray (n,)
        Bounds C_i (inf for the hard margin).
    alpha : ndarray (n,)
        The multipliers whose sets define the face (and the starting point on it).
    intercept : bool
    mu : ndarray (d,)
        The implicit centre (the column means with an intercept; zeros without).
    tol : float
        Stop when the root mean square of the projected residual (margin units:
        1 - y_i f_i on F) is <= tol.
    max_iter : int
    box_check : float, optional
        A looser residual (same units as ``tol``) at which the iterate is checked against
        the box: a multiplier outside [0, C_i] by more than ``BOX_OUT`` max_i C_i there
        says the face is wrong, and the solve stops (its point, clipped, goes back to DCD:
        solving a wrong face to ``tol`` buys nothing; measured at n = 100000, d = 50000,
        the first faces had 74 and 6 multipliers outside, their solves ~45 % of the time).

    Returns
    -------
    (a, b, iterations, free) or None
        ``a``: alpha with a_F replaced by the face's solution (not clipped: entries outside
        [0, C_i] say the face is wrong), ``b`` the intercept on the original data (0 without),
        ``free`` the indices F; None when there is no free multiplier. A solve stopped by
        ``box_check`` returns its point with at least one entry outside the box.
    """
    finite = np.isfinite(C)
    scale = float(np.max(C[finite])) if finite.any() else max(float(np.max(alpha)), 1.0)
    cut = SET_CUT * scale
    free = np.flatnonzero((alpha > cut) & (alpha < C - cut))
    if free.size == 0:
        return None
    upper = np.flatnonzero(finite & (alpha >= C - cut))
    XF, yF = X[free], y[free]
    s_upper = float(y[upper] @ C[upper])
    c_U = np.asarray(X[upper].T @ (y[upper] * C[upper])).ravel() - mu * s_upper
    rhs = 1.0 - yF * (np.asarray(XF @ c_U).ravel() - float(mu @ c_U))

    def Q(v):
        u = yF * v
        wv = np.asarray(XF.T @ u).ravel() - mu * float(u.sum())
        return yF * (np.asarray(XF @ wv).ravel() - float(mu @ wv))

    k = free.size
    if intercept:
        def P(r):
            return r - yF * (float(yF @ r) / k)
    else:
        def P(r):
            return r
    x = alpha[free].astype(float)
    if intercept:                       # onto y_F^T a_F = -y_U^T C_U
        x += yF * ((-s_upper - float(yF @ x)) / k)
    r = Q(x) - rhs
    g = P(r)
    p = -g
    # r^T P r as ||P r||^2: r itself is ~ y_F b_c, large, and r^T P r computed as written
    # cancels to round-off of ||r||^2 (measured: a negative step from the optimum)
    rg = float(g @ g)
    goal = tol * tol * k
    check = -1.0 if box_check is None else box_check * box_check * k
    out = BOX_OUT * scale
    it = 0
    for it in range(1, max_iter + 1):
        if rg <= goal:
            break
        if rg <= check:
            check = -1.0            # once: the face is judged at the looser residual
            if bool(np.any((x < -out) | (x > C[free] + out))):
                break
        p = P(p)                        # against drift out of the constraint's null space
        Qp = Q(p)
        pQp = float(p @ Qp)
        if not pQp > 0:                 # a null direction of Q_FF: nothing left to gain
            break
        step = rg / pQp
        x += step * p
        r += step * Qp
        g = P(r)
        rg_new = float(g @ g)
        p = -g + (rg_new / rg) * p
        rg = rg_new
    a = alpha.astype(float)
    a[free] = x
    b = 0.0
    if intercept:
        # r = -y_F b_c on the face (module docstring); b on X = b_c - <mu, w>
        b_c = -float(yF @ r) / k
        w = np.asarray(X.T @ (y * a)).ravel() - mu * float(y @ a)
        b = b_c - float(mu @ w)
    if not (np.all(np.isfinite(a)) and math.isfinite(b)):
        return None
    return a, b, it, free
