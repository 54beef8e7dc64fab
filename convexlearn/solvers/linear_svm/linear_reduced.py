"""The exact linear SVM's polish on a few candidate samples, every other multiplier
held at its bound.

Where DCD leaves more free multipliers than unknowns p (small C: nearly every sample at
a_i = C_i, a few dozen still on their way to a bound), the sets' KKT system of
:mod:`.linear_polish` is rank deficient and its all-at-once set changes scatter a
nearly right guess. Here the samples split in three: K, the candidates (DCD's free
multipliers and the 2p samples nearest their margin), B (a_i = C_i, read off DCD) and
the rest (a_i = 0). With B and the rest fixed, the SVM on the rows of K::

    min_u 1/2 ||w||^2 - <c_B, u> + sum_{i in K} C_i max(0, 1 - <r_i, u>),
    c_B = sum_{i in B} C_i r_i

is solved exactly by the primal active-set method
(:func:`~.linear_active_set.active_set`, the linear term as ``c_fixed``) on |K| rows
instead of n: its steps cost |K| p, not n p. The point is optimal for the whole problem
when every sample outside K is on its side (m_i <= 1 in B, >= 1 in the rest); the
samples that are not join K and the method runs again from there.
"""

from __future__ import annotations

import numpy as np

from .linear_active_set import active_set

__all__ = ["reduced_active_set"]

_ROUNDS = 6             # candidate sets tried (each adds the samples outside it that violate)
_NEAREST = 2            # candidates: DCD's free multipliers and the _NEAREST * p nearest
_STEPS = 10             # active-set steps allowed beyond p / 2 (see max_steps)
_EPS = np.finfo(float).eps


def reduced_active_set(Zy: np.ndarray, C: np.ndarray, intercept: bool, alpha: np.ndarray,
                       u0: np.ndarray, scale: float, max_candidates: int | None = None,
                       max_steps: int | None = None
                       ) -> tuple[np.ndarray, np.ndarray, float, int] | None:
    """The polish of the module docstring from DCD's (alpha, u0).

    Parameters
    ----------
    Zy : ndarray (n, p)
        Signed rows y_i (z_i, 1) (p = d + 1), or y_i z_i without intercept (p = d).
    C : ndarray (n,)
        Finite upper bounds.
    alpha, u0 : ndarray
        DCD's multipliers and its point (w, b) (b last, with intercept).
    scale : float
        max C_i: a_i >= C_i - 1e-8 scale is read as bounded, a_i <= 1e-8 scale as zero.
    max_candidates : int, optional
        Gives up (None) when K grows beyond this (default 8 p): then the sets are far
        from right and the w-space stages over every row are the better tool.
    max_steps : int, optional
        Active-set steps allowed over all rounds (default ``_STEPS`` + p / 2: the
        candidates of a settled DCD run took 1-21 steps in the sweeps, p <= 51; on the
        raw breast cancer data, columns 1e6 apart in scale, a failing run took 1300 steps,
        0.5 s, before the interior point answered in 10 ms).

    Returns
    -------
    (alpha, w, b, iterations) or None
        The KKT point of the sets (multipliers in the box, every sample outside K on its
        side up to the rounding bound of its margin); iterations: the active-set steps.
    """
    n, p = Zy.shape
    d = p - 1 if intercept else p
    limit = 8 * p if max_candidates is None else max_candidates
    cut = 1e-8 * scale
    g = Zy @ u0 - 1.0
    cand = (alpha > cut) & (alpha < C - cut)
    cand[np.argpartition(np.abs(g), min(n, _NEAREST * p) - 1)[:_NEAREST * p]] = True
    bounded = ~cand & (alpha >= C - cut)
    u, steps = np.asarray(u0, dtype=float), 0
    # the crash start: DCD's free multipliers on their margin, nearest first (at most p)
    inside = (alpha > cut) & (alpha < C - cut)
    for _ in range(_ROUNDS):
        idx = np.flatnonzero(cand)
        if idx.size > limit:
            return None
        start = np.flatnonzero(inside[idx])
        start = start[np.argsort(np.abs(g[idx[start]]))][:p]
        budget = (_STEPS + p // 2 if max_steps is None else max_steps) - steps
        if budget <= 0:
            return None
        found = active_set(Zy[idx], C[idx], d, u, max_iter=budget,
                           start_set=start, c_fixed=C[bounded] @ Zy[bounded])
        if found is None:
            return None
        u, a_K, it = found
        inside = np.zeros(n, dtype=bool)
        inside[idx] = (a_K > cut) & (a_K < C[idx] - cut)
        steps += it
        m = Zy @ u
        # (a sample with C_i = 0, a zero weight, has a_i = 0 = C_i on either side)
        wrong = ~cand & (C > 0) & np.where(bounded, m > 1.0, m < 1.0)
        # beyond the rounding bound of its margin (terms that cancel in <r_i, u>), as
        # polish_w's; bounded only where a sample is on the wrong side at all (an n x p
        # pass of |Zy| saved)
        maybe = np.flatnonzero(wrong)
        tol_m = 1e-12 + 8 * p * _EPS * (np.abs(Zy[maybe]) @ np.abs(u))
        wrong[maybe] = np.abs(m[maybe] - 1.0) > tol_m
        if not wrong.any():
            a = np.where(bounded, C, 0.0)
            a[idx] = a_K
            return a, u[:d], float(u[d]) if intercept else 0.0, steps
        cand |= wrong
        bounded &= ~wrong
        g = m - 1.0
    return None
