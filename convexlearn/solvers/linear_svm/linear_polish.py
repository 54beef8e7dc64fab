"""The polish of the exact linear SVM from a guess of its active set: the KKT system of
the sets in w-space, repaired by primal-dual active-set rounds (module docstring of
:mod:`.linear_exact`; the design notes in docs/routes.md, "Design notes of the
algorithms").

For given sets (F free, B bounded at C_i, the rest at 0) the optimum solves, with
r_i = y_i (z_i, 1) the signed rows and c_B = sum_{i in B} C_i r_i::

    (w, 0) - sum_{i in F} a_i r_i = c_B,      <r_i, (w, b)> = 1  (i in F)

by the null-space method (:func:`~.linear_active_set.kkt_step`), or the equilibrated
dense system when R_F is rank deficient; violators change sets by the primal-dual
active-set rule (Hintermueller, Ito and Kunisch 2002), one at a time after
``_PDAS_ROUNDS`` rounds.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from .dual_sets import dual_sets_solve, dual_solve_pays
from .linear_active_set import column_scaling, kkt_step

__all__ = ["polish_w"]

_PDAS_ROUNDS = 20          # all-at-once set changes before one-at-a-time
_MAX_ROUNDS = 400
_MAX_FREE = 3000           # a dense KKT system beyond this is not worth it here
_EPS = np.finfo(float).eps


def _equilibrated_solve(A: np.ndarray, rhs: np.ndarray) -> np.ndarray:
    """Solve A x = rhs on R A S (Ruiz scaling by powers of 2: exact) with iterative refinement
    (up to 5 steps, while the residual drops); least squares when the scaled matrix is singular."""
    r = np.ones(A.shape[0])
    c = np.ones(A.shape[1])
    M = A.copy()
    for _ in range(6):
        row = np.max(np.abs(M), axis=1)
        col = np.max(np.abs(M), axis=0)
        rr = np.where(row > 0, np.exp2(-np.round(np.log2(np.where(row > 0, row, 1.0)) / 2)), 1.0)
        cc = np.where(col > 0, np.exp2(-np.round(np.log2(np.where(col > 0, col, 1.0)) / 2)), 1.0)
        M = rr[:, None] * M * cc[None, :]
        r, c = r * rr, c * cc

    def solve(b):
        try:
            x = np.linalg.solve(M, r * b)
            if np.all(np.isfinite(x)):
                return x
        except np.linalg.LinAlgError:
            pass
        return np.linalg.lstsq(M, r * b, rcond=None)[0]
    x = c * solve(rhs)
    res = np.linalg.norm(rhs - A @ x, np.inf)
    for _ in range(5):          # iterative refinement while it helps
        step = x + c * solve(rhs - A @ x)
        new_res = np.linalg.norm(rhs - A @ step, np.inf)
        if not new_res < res:
            break
        x, res = step, new_res
    return x


def _solve_sets(Zy: np.ndarray, C: np.ndarray, intercept: bool, free: np.ndarray,
                bounded: np.ndarray, S: np.ndarray | None = None,
                zero: np.ndarray | None = None):
    """(w, b, a_F) from the KKT system of the module docstring on rows r_i = Zy[i]
    (y_i (z_i, 1), or y_i z_i without intercept): the null-space method
    (:func:`~convexlearn.solvers.linear_svm.linear_active_set.kkt_step`), or the equilibrated dense
    system when R_F is rank deficient (more free vectors than unknowns); at most p / 2
    free vectors: the same system in (a_F, b) (:mod:`.dual_sets`)."""
    p = Zy.shape[1]
    d = p - 1 if intercept else p
    R_F = Zy[free]
    k = R_F.shape[0]
    cB = Zy[bounded].T @ C[bounded] if bounded.size else np.zeros(p)
    if dual_solve_pays(k, p):       # few free vectors: (a_F, b) directly (.dual_sets)
        found = dual_sets_solve(Zy, intercept, free, cB, zero)
        if found is not None:
            return found
    step = kkt_step(R_F, cB, np.ones(k), d, column_scaling(Zy) if S is None else S)
    if step is not None:            # the null-space method on the scaled system
        u, a_F = step
        return u[:d], float(u[d]) if intercept else 0.0, a_F
    A = np.zeros((p + k, p + k))
    A[:d, :d] = np.eye(d)
    A[:p, p:] = -R_F.T
    A[p:, :p] = R_F
    rhs = np.concatenate([cB, np.ones(k)])
    x = _equilibrated_solve(A, rhs)
    w = x[:d]
    b = float(x[d]) if intercept else 0.0
    return w, b, x[p:]


def polish_w(Zy: np.ndarray, C: np.ndarray, alpha: np.ndarray, intercept: bool,
             scale: float, max_rounds: int = _MAX_ROUNDS, threshold: float = 1e-8,
             margins: np.ndarray | None = None, max_free: int = _MAX_FREE,
             scaling: np.ndarray | None = None) -> Any:
    """Active-set polish from ``alpha`` (see the module docstring).

    Parameters
    ----------
    Zy : ndarray (n, p)
        Signed rows y_i (z_i, 1) (p = d + 1), or y_i z_i without intercept (p = d).
    C : ndarray (n,)
        Upper bounds (inf for the hard margin).
    alpha : ndarray
        Starting multipliers.
    scale : float
        Scale of the multipliers (max finite C_i, or max alpha for the hard margin).
    threshold : float
        ``threshold * scale`` reads the sets off ``alpha`` (an interior point's multipliers
        miss the bounds by ~1e-7 relative: 1e-5 for them).
    margins : ndarray, optional
        m_i of a point whose margins are accurate (an interior point's): the sets are read
        off them instead (|m_i - 1| <= threshold free, below bounded, above zero), at most
        p free (the nearest to the margin), as p margin equalities fix (w, b).
    max_free : int
        A round whose free set is larger gives up (None): its KKT system is dense and,
        beyond p rows, rank deficient.
    scaling : ndarray, optional
        :func:`~.linear_active_set.column_scaling` of Zy, when the caller has it (a pass
        over Zy: ~0.75 ms at 20000 x 20, paid once a solve instead of once a polish).

    Returns
    -------
    (alpha, w, b, rounds) or None
        A point whose sets are consistent up to round-off (margins within 1e-12 of the
        rule, multipliers inside the box), None when none was found.
    """
    n = Zy.shape[0]
    finite = np.isfinite(C)
    cut = threshold * scale
    if margins is None:
        at_upper = finite & (alpha >= C - cut)
        at_zero = (alpha <= cut) & ~at_upper
    else:
        g0 = margins - 1.0
        # on the margin, or a multiplier clearly inside its box (relative to the largest
        # one: a nearly hard margin has every a_i << C_i)
        a_max = max(float(np.max(alpha)), np.finfo(float).tiny)
        inside = (alpha > 1e-4 * a_max) & (alpha < C - 1e-4 * a_max)
        near = np.flatnonzero((np.abs(g0) <= threshold) | inside)
        near = near[np.argsort(np.abs(g0[near]))][:Zy.shape[1]]
        at_upper = finite & (g0 < 0)
        at_zero = g0 >= 0
        at_upper[near] = at_zero[near] = False
    one_at_a_time = False
    S = column_scaling(Zy) if scaling is None else scaling
    for rounds in range(1, max_rounds + 1):
        free_idx = np.flatnonzero(~at_upper & ~at_zero)
        if free_idx.size > max_free:
            return None
        bound_idx = np.flatnonzero(at_upper)
        w, b, a_F = _solve_sets(Zy, C, intercept, free_idx, bound_idx, S, at_zero)
        u = np.append(w, b) if intercept else w
        m = Zy @ u
        a = np.where(at_upper, np.where(finite, C, 0.0), 0.0)
        a[free_idx] = a_F
        g = m - 1.0
        # violations, in margin units (a) and multiplier units / scale (a_F)
        # the rounding bound of each margin's evaluation (terms that cancel in <r_i, u>)
        # (evaluated only where a margin is beyond 1e-12 on the wrong side: the bound is
        # >= 1e-12, and |Zy| @ |u| over every row was ~40% of a 20000 x 20 polish)
        bad_zero = at_zero & (g < -1e-12)
        bad_upper = at_upper & (g > 1e-12)
        maybe = np.flatnonzero(bad_zero | bad_upper)
        if maybe.size:
            tol_m = 1e-12 + 8 * Zy.shape[1] * _EPS * (np.abs(Zy[maybe]) @ np.abs(u))
            within = np.abs(g[maybe]) <= tol_m
            bad_zero[maybe[within]] = False
            bad_upper[maybe[within]] = False
        over = np.zeros(n, dtype=bool)
        under = np.zeros(n, dtype=bool)
        slack_a = 1e-12 * scale          # clipped afterwards; the certificate judges
        over[free_idx] = finite[free_idx] & (a_F > C[free_idx] + slack_a)
        under[free_idx] = a_F < -slack_a
        if not (bad_zero.any() or bad_upper.any() or over.any() or under.any()):
            return np.clip(a, 0.0, C), w, b, rounds
        if rounds > _PDAS_ROUNDS:
            one_at_a_time = True
        if not one_at_a_time:
            lam = a - scale * g
            new_upper = finite & (lam > C)
            new_zero = lam < 0.0
            if np.array_equal(new_upper, at_upper) and np.array_equal(new_zero, at_zero):
                one_at_a_time = True
            else:
                at_upper, at_zero = new_upper, new_zero
                continue
        # the worst violation, each kind measured against its own scale
        score = np.zeros(n)
        score[bad_zero] = -g[bad_zero]
        score[bad_upper] = g[bad_upper]
        excess = np.where(over, (a - C) / scale, np.where(under, -a / scale, 0.0))
        score = np.maximum(score, excess)
        i = int(np.argmax(score))
        if over[i]:
            at_upper[i] = True
        elif under[i]:
            at_zero[i] = True
        else:
            at_upper[i] = at_zero[i] = False
    return None
