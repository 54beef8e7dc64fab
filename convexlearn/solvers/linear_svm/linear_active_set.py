"""The linear SVM's equality-constrained KKT step in w-space, and the SVM (soft or hard
margin) by a primal active-set method.

:func:`kkt_step` solves, for a set W of samples held on their margin (r_i the signed rows
y_i (z_i, 1), E = diag(1, ..., 1, 0): b is not penalized)::

    E u - R_W^T a_W = c,     R_W u = t

by the null-space method on feature-scaled rows (forming the saddle-point matrix squares
the condition number of R_W). :func:`active_set` minimizes
1/2 ||w||^2 + sum_i C_i max(0, 1 - <r_i, u>) (C_i = inf: R u >= 1) by Nocedal and
Wright's Algorithm 16.3 on the piecewise quadratic, with exact long line searches. Details
and the measurements behind them: docs/routes.md, "Design notes of the algorithms".
"""

from __future__ import annotations

from typing import Callable

import numpy as np
from scipy.linalg import qr_delete, qr_insert

from ..lapack import solve_triangular

# BLAS on one thread: the active-set loop makes thousands of calls on p x p blocks and
# n x p products, where threads gain nothing and on a loaded 2-core machine OpenBLAS's
# threads made a 20000 x 101 product 16 ms instead of 1.4 ms (measured). The shared
# controller is built once per process: threadpoolctl's threadpool_limits, called here
# before, inspected the loaded libraries on every call (~5 ms CPU a solve).
from ...threads import one_blas_thread

__all__ = ["column_scaling", "kkt_step", "active_set", "feasible_start", "one_blas_thread"]

_EPS = np.finfo(float).eps


def column_scaling(R: np.ndarray) -> np.ndarray:
    """Powers of 2 s_j with max_i |R_ij| s_j in [1/sqrt 2, sqrt 2] (1 for a zero column):
    the diagonal change of variables u = S v of :func:`kkt_step`, exact in floating point."""
    c = np.max(np.abs(R), axis=0) if R.shape[0] else np.ones(R.shape[1])
    c = np.where(c > 0, c, 1.0)
    return np.exp2(-np.round(np.log2(c)))


def _factor(R_W: np.ndarray, d: int, S: np.ndarray,
            qr: tuple[np.ndarray, np.ndarray] | None = None) -> Callable | None:
    """The null-space solver of the module docstring for this W: ``solve(c, t) -> (u, a)``;
    None when R_W S is rank deficient (more rows than unknowns, or dependent rows).
    ``qr``: the complete QR of (R_W S)^T when the caller keeps it up to date."""
    k, p = R_W.shape
    if k > p:
        return None
    h = np.zeros(p)
    h[:d] = S[:d] ** 2
    Q, T = np.linalg.qr((R_W * S).T, mode="complete") if qr is None else qr
    T = T[:k]
    diag = np.abs(np.diag(T))
    if k and not diag.min() > p * _EPS * max(float(diag.max()), 1.0) * 16:
        return None
    Q1, Q2 = Q[:, :k], Q[:, k:]
    M = Q2.T @ (h[:, None] * Q2) if Q2.shape[1] else None

    def solve(c: np.ndarray, t: np.ndarray):
        Sc = S * c
        v = Q1 @ solve_triangular(T, t, trans="T") if k else np.zeros(p)
        if M is not None:
            g = Q2.T @ (Sc - h * v)
            try:
                z = np.linalg.solve(M, g)
                if not np.all(np.isfinite(z)):
                    raise np.linalg.LinAlgError
            except np.linalg.LinAlgError:     # b unconstrained (W empty): any minimizer
                z = np.linalg.lstsq(M, g, rcond=None)[0]
            v = v + Q2 @ z
        a = solve_triangular(T, Q1.T @ (h * v - Sc)) if k else np.zeros(0)
        return S * v, a
    return solve


def kkt_step(R_W: np.ndarray, c: np.ndarray, t: np.ndarray, d: int, S: np.ndarray,
             qr: tuple[np.ndarray, np.ndarray] | None = None
             ) -> tuple[np.ndarray, np.ndarray] | None:
    """(u, a_W) solving E u - R_W^T a_W = c, R_W u = t (module docstring) with iterative
    refinement; None when R_W S is rank deficient (the caller falls back to a dense
    solve).

    Parameters
    ----------
    R_W : ndarray (k, p)
        The signed rows of W.
    c, t : ndarray (p,), (k,)
    d : int
        Number of penalized coordinates (p - 1 with intercept, p without).
    S : ndarray (p,)
        :func:`column_scaling` of the whole R (one scale for every W).
    qr : (Q, T), optional
        The complete QR factorization of (R_W S)^T, if the caller updates it (the
        active-set method: O(p^2) per change of W instead of O(p^3)).
    """
    solve = _factor(R_W, d, S, qr)
    if solve is None:
        return None
    E = np.zeros(R_W.shape[1])
    E[:d] = 1.0

    def residual(u, a):
        r1 = c - (E * u - R_W.T @ a)
        r2 = t - R_W @ u
        # in the units of each row's terms (a zero residual is exact)
        s1 = np.abs(E * u) + np.abs(R_W.T) @ np.abs(a) + np.abs(c)
        s2 = np.abs(R_W) @ np.abs(u) + np.abs(t)
        size = max(float(np.max(np.abs(r1) / np.where(s1 > 0, s1, 1.0), initial=0.0)),
                   float(np.max(np.abs(r2) / np.where(s2 > 0, s2, 1.0), initial=0.0)))
        return r1, r2, size
    u, a = solve(c, t)
    r1, r2, size = residual(u, a)
    for _ in range(3):
        if size <= 4 * _EPS:
            break
        du, da = solve(r1, r2)
        u2, a2 = u + du, a + da
        q1, q2, size2 = residual(u2, a2)
        if not size2 < size:
            break
        u, a, r1, r2, size = u2, a2, q1, q2, size2
    return u, a


def feasible_start(R: np.ndarray, S: np.ndarray) -> np.ndarray | None:
    """A point with R u >= 1 (every margin, with its rounding bound): the consistency LP
    R S v >= 1 on the scaled signed rows (HiGHS; the intercept is a column of R, so the
    LP is homogeneous), u = S v scaled up until it holds; None when the LP says
    infeasible or its point does not separate."""
    from ...formulations.halfspace import solve_consistency_highspy
    values, _, _ = solve_consistency_highspy(R * S, np.ones(R.shape[0]), True)
    if values is None:
        return None
    u = S * np.asarray(values["w"], dtype=float)
    low = float(np.min(R @ u - (R.shape[1] + 2) * _EPS * (np.abs(R) @ np.abs(u))))
    if not low > 0:
        return None
    return u * max(1.0, (1.0 + 8 * _EPS) / low)


def _line_search(w, dw, slope, m, Rp, below, inW, C, scale):
    """The minimizer alpha* in [0, 1] of the objective along u + alpha (u' - u), convex
    and piecewise quadratic: 1/2 ||w + alpha dw||^2 + sum_i C_i max(0, 1 - m_i - alpha Rp_i).

    Its slope, w.dw + alpha ||dw||^2 - sum_{i below} C_i Rp_i, jumps up by C_i |Rp_i| where
    sample i crosses its margin (alpha_i = (1 - m_i) / Rp_i): the breakpoints are walked
    in order (a "long step": one step may move many samples across, where the basic
    method stops at the first). Returns (alpha*, the samples crossed before alpha*, the
    sample whose breakpoint is alpha* or -1); ``slope`` is the slope at alpha = 0+
    (the linear terms of every sample below, c.(u' - u), subtracted); the samples passed
    may be a subset (those that can cross); ``scale`` = |R| |u' - u| bounds the rounding
    of Rp."""
    noise = (_EPS * 16) * scale
    up = below & (Rp > noise)
    down = ~below & ~inW & (Rp < -noise)
    cand = np.flatnonzero(up | down)
    t = np.maximum((1.0 - m[cand]) / Rp[cand], 0.0)
    keep = t < 1.0
    cand, t = cand[keep], t[keep]
    order = np.argsort(t, kind="stable")
    cand, t = cand[order], t[order]
    q = float(dw @ dw)
    jumps = np.where(np.isfinite(C[cand]), C[cand] * np.abs(Rp[cand]), np.inf)
    after = slope + np.cumsum(jumps)                    # the slope just after t_k
    before = np.concatenate([[slope], after[:-1]])      # and on [t_{k-1}, t_k]
    inside = (before + t * q >= 0) if q > 0 else np.zeros(t.size, dtype=bool)
    at = after + t * q >= 0
    hit = np.flatnonzero(inside | at)
    if hit.size:
        k = int(hit[0])
        if inside[k]:
            return max(-float(before[k]) / q, float(t[k - 1]) if k else 0.0), cand[:k], -1
        return float(t[k]), cand[:k], int(cand[k])
    return 1.0, cand, -1        # every breakpoint before 1 crossed (the slope still < 0)


def _independent(rows: np.ndarray, index: np.ndarray) -> list[int]:
    """The entries of ``index`` whose rows are linearly independent (a pivoted QR of the
    rows' transpose; redundant features make R rank deficient)."""
    from scipy.linalg import qr
    _, T, piv = qr(rows.T, mode="economic", pivoting=True)
    diag = np.abs(np.diag(T))
    rank = int(np.sum(diag > rows.shape[1] * 16 * _EPS * max(float(diag[0]), 1.0))) \
        if diag.size else 0
    return [int(i) for i in index[piv[:rank]]]


def active_set(R: np.ndarray, C: np.ndarray, d: int, u0: np.ndarray,
               max_iter: int | None = None, start_set: np.ndarray | None = None,
               scaling: np.ndarray | None = None, c_fixed: np.ndarray | None = None
               ) -> tuple[np.ndarray, np.ndarray, int] | None:
    """The SVM in w-space, min 1/2 ||w||^2 + sum_i C_i max(0, 1 - <r_i, u>), by the
    active-set method of the module docstring (C_i = inf: the hard margin, from a
    feasible ``u0``).

    Every sample outside the working set W keeps the side of its margin it is on: below
    (a_i = C_i, its hinge term is linear: c = sum C_i r_i over them) or above (a_i = 0).
    A step stops where a sample crosses its margin (it joins W); at the minimizer of the
    piece, a multiplier of W outside [0, C_i] sends its sample to the side it belongs to
    (the worst one, relative to C_i, or to max |a| for the hard margin).

    Parameters
    ----------
    R : ndarray (n, p)
        Signed rows.
    C : ndarray (n,)
        Bounds; all inf for the hard margin.
    d : int
        Penalized coordinates (the first d of u); d = p - 1 with intercept.
    u0 : ndarray (p,)
        Starting point (feasible, R u0 >= 1, for the hard margin).
    max_iter : int, optional
        Default 10 (n + p).
    start_set : ndarray of int, optional
        Samples to put on their margin first (soft margin only; ignored when their rows
        are dependent): the free vectors of an interior point's answer.
    scaling : ndarray (p,), optional
        The diagonal change of variables of :func:`kkt_step` (default
        :func:`column_scaling` of R).
    c_fixed : ndarray (p,), optional
        sum C_i r_i of samples held below their margin outside R (their hinge terms, a
        linear term - <c_fixed, u>): the problem on a subset of the rows
        (:mod:`.linear_reduced`).

    Returns
    -------
    (u, alpha, iterations) or None
        The KKT point (alpha in the box); None when the iteration limit is reached or a
        step cannot be solved.
    """
    n, p = R.shape
    S = column_scaling(R) if scaling is None else scaling
    finite = np.isfinite(C)
    Cf = np.where(finite, C, 0.0)
    fixed = np.zeros(p) if c_fixed is None else np.asarray(c_fixed, dtype=float)
    u = np.asarray(u0, dtype=float).copy()
    m = R @ u
    below = finite & (m < 1.0)          # side of each sample outside W
    inW = np.zeros(n, dtype=bool)
    W: list[int] = []
    if start_set is not None and len(start_set) and finite.all():
        # crash start: the minimizer with start_set on its margin and every other sample
        # on its side at u0 (an interior point's margins: then a few steps remain); the
        # sides are then read again at that point
        W0 = _independent(R[start_set] * S, np.asarray(start_set))
        step = kkt_step(R[W0], (Cf * below) @ R - Cf[W0] * below[W0] @ R[W0] + fixed,
                        np.ones(len(W0)), d, S)
        if step is not None:
            u = step[0]
            W = W0
            inW[W] = True
            m = R @ u
            below = finite & (m < 1.0) & ~inW    # the sides at the new point
    if not W and d < p and (below.any() or fixed.any()):
        # the intercept is flat on W = {} but the linear terms tilt it: start with the
        # sample nearest its margin on it (b moved), every other side re-read
        i = int(np.argmin(np.abs(m - 1.0)))
        u[d] += (1.0 - m[i]) * R[i, d]
        m = R @ u
        W, inW[i] = [i], True
        below = finite & (m < 1.0) & ~inW
    max_iter = 10 * (n + p) if max_iter is None else max_iter
    qr = np.linalg.qr((R[W] * S).T, mode="complete")     # of (R_W S)^T, updated below
    c = (Cf * below) @ R + fixed        # kept up to date as samples change side
    # sum_j |R_ij x_j| <= rho_i ||x / S|| (Cauchy-Schwarz): the rounding bound of R x
    # without a second pass over R
    RS = R * S
    rho = np.sqrt(np.einsum("ij,ij->i", RS, RS))
    del RS
    for it in range(1, max_iter + 1):
        if it % 64 == 0:                # against the drift of the updates
            c, m = (Cf * below) @ R + fixed, R @ u
            qr = np.linalg.qr((R[W] * S).T, mode="complete")
        step = kkt_step(R[W], c, np.ones(len(W)), d, S, qr)
        if step is None:
            return None
        target, lam = step
        direction = target - u
        Rp = R @ direction
        if len(W) < p:                  # W = p rows: u' = u up to round-off
            alpha_star, crossed, joins = _line_search(
                u[:d], direction[:d], float(u[:d] @ direction[:d]) - float(c @ direction),
                m, Rp, below, inW, C, rho * float(np.linalg.norm(direction / S)))
            if crossed.size or joins >= 0:
                u = u + alpha_star * direction
                m = m + alpha_star * Rp
                flip = crossed[below[crossed]]
                c -= Cf[flip] @ R[flip]
                back = crossed[~below[crossed]]
                c += Cf[back] @ R[back]
                below[crossed] = ~below[crossed]
                if joins >= 0:
                    if below[joins]:
                        c -= Cf[joins] * R[joins]
                    qr = qr_insert(*qr, S * R[joins], len(W), which="col")
                    W.append(joins)
                    inW[joins], below[joins] = True, False
                continue
        u = target
        m = m + Rp
        if not W:
            break
        CW = C[W]
        size = max(float(np.max(np.abs(lam))), 1e-300)
        low = -lam / size
        high = np.full(len(W), -np.inf)
        fin = np.isfinite(CW)
        high[fin] = (lam[fin] - CW[fin]) / np.where(CW[fin] > 0, CW[fin], 1.0)
        worst = np.maximum(low, high)
        k = int(np.argmax(worst))
        if worst[k] <= 1e-13:
            break
        i = W.pop(k)
        qr = qr_delete(*qr, k, 1, which="col")
        inW[i] = False
        if high[k] > low[k]:
            below[i] = True
            c += Cf[i] * R[i]
    else:
        return None
    alpha = np.where(below, Cf, 0.0)
    if W:
        alpha[W] = np.clip(lam, 0.0, C[W])
    return u, alpha, it


