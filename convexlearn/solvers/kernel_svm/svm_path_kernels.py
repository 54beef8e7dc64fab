"""Compiled loops of the exact SVM C-path (:mod:`.svm_path`): one pass over the samples
where numpy would make several (a mask, a comparison and a reduction each).

The path spends its time between breakpoints on O(n) scans (which sample's margin reaches
1 first, are the KKT conditions met) and O(|E|^2) changes of the elbow system (its
inverse: :mod:`.svm_path_inverse`); in numpy each is a few temporaries of that size. The
numpy formulas these loops implement are written beside each docstring;
tests/solvers/kernel_svm/test_svm_path_kernels.py checks each loop against them.
:func:`breakpoint_scan` runs a breakpoint's scans in one call (one dispatch, not six).
"""

from __future__ import annotations

from typing import Any

import numpy as np
from numba import njit

from ...certify.path_kkt_bound import bounded_kkt
from ...compiled import load_without_refresh

__all__ = ["swap_rows_cols", "snap_elbow", "snapped", "elbow_residual", "direction_miss",
           "leaving_at_bound", "path_consistent", "first_crossings", "next_event",
           "breakpoint_scan"]

#: Event codes of :func:`next_event` (the index into :data:`EVENT_KINDS`).
EVENT_KINDS = ("E->R", "E->L", "L->E", "R->E")


@njit(cache=True)
def swap_rows_cols(A: Any, p: int, q: int, size: int) -> None:
    """Rows p and q, then columns p and q, of ``A[:size, :size]`` swapped in place (in
    numpy: ``A[[p, q], :size] = A[[q, p], :size]; A[:size, [p, q]] = A[:size, [q, p]]``)."""
    for j in range(size):
        A[p, j], A[q, j] = A[q, j], A[p, j]
    for i in range(size):
        A[i, p], A[i, q] = A[i, q], A[i, p]


@njit(cache=True)
def snap_elbow(a: Any, idx: Any, snap: float) -> None:
    """The elbow's fractions within ``snap`` of 0 or 1 put on it, all into [0, 1], in
    place; in numpy::

        aE = a[idx]
        a[idx] = clip(where(|aE| <= snap, 0, where(|aE - 1| <= snap, 1, aE)), 0, 1)
    """
    for k in range(idx.size):
        a[idx[k]] = snapped(a[idx[k]], snap)


@njit(cache=True)
def snapped(v: float, snap: float) -> float:
    """:func:`snap_elbow`'s rule for one fraction: 0 within ``snap`` of 0, 1 within
    ``snap`` of 1, clipped into [0, 1]."""
    if abs(v) <= snap:
        v = 0.0
    elif abs(v - 1.0) <= snap:
        v = 1.0
    return min(max(v, 0.0), 1.0)


@njit(cache=True)
def elbow_residual(y: Any, a: Any, a0: float, lam: float, gE: Any, qmax: float
                   ) -> tuple[Any, float, float]:
    """The elbow system's residual at a breakpoint and its scale, in one pass; in numpy::

        r = [-(y @ a), lam - gE],   max|r|,   qmax ||a||_1 + |a_0| + lam
    """
    r = np.empty(gE.size + 1)
    balance = 0.0
    norm = 0.0
    for i in range(a.size):
        balance += y[i] * a[i]
        norm += abs(a[i])
    r[0] = -balance
    worst = abs(balance)
    for k in range(gE.size):
        r[k + 1] = lam - gE[k]
        worst = max(worst, abs(r[k + 1]))
    return r, worst, qmax * norm + abs(a0) + lam


@njit(cache=True, error_model="numpy")
def direction_miss(x: Any, s: Any, idx: Any, y: Any, qmax: float) -> float:
    """How far d = x misses the elbow system, relative to its scale, read off its s; in
    numpy (nan for a non-finite x or s)::

        max(|s_E - 1|, |y_E . x_E|) / (qmax ||x_E||_1 + |x_0| + 1)
    """
    miss = 0.0
    balance = 0.0
    norm = 0.0
    for k in range(idx.size):
        miss = max(miss, abs(s[idx[k]] - 1.0))
        balance += y[idx[k]] * x[k + 1]
        norm += abs(x[k + 1])
    miss = max(miss, abs(balance))
    value = miss / (qmax * norm + abs(x[0]) + 1.0)
    for k in range(idx.size):
        if not np.isfinite(s[idx[k]]):
            return np.nan
    finite = np.isfinite(value) and np.isfinite(norm) and np.isfinite(x[0])
    return value if finite else np.nan


@njit(cache=True, error_model="numpy")
def path_consistent(y: Any, a: Any, lam: float, E: Any, L: Any, g: Any, tol: float) -> bool:
    """The path's KKT conditions at a breakpoint, in one pass. With margin = g / lam and
    R the complement of E and L::

        |a . y| <= tol max(1, ||a||_1),  0 <= a <= 1,
        |margin_E - 1| <= tol,  margin_L <= 1 + tol, a_L = 1,  margin_R >= 1 - tol, a_R = 0
    """
    balance = 0.0
    total = 0.0
    for i in range(a.size):
        ai = a[i]
        if not (ai >= 0.0 and ai <= 1.0):
            return False
        balance += ai * y[i]
        total += abs(ai)
        margin = g[i] / lam
        if E[i]:
            if not abs(margin - 1.0) <= tol:
                return False
        elif L[i]:
            if not (margin <= 1.0 + tol and ai == 1.0):
                return False
        elif not (margin >= 1.0 - tol and ai == 0.0):
            return False
    return abs(balance) <= tol * max(1.0, total)


@njit(cache=True)
def leaving_at_bound(a: Any, idx: Any, dE: Any) -> tuple[int, int]:
    """The first elbow sample at 0 whose fraction would fall below it and the first at 1
    that would rise above it as lambda falls (-1 where there is none); in numpy::

        idx[(a[idx] <= 0) & (dE > 0)][0],   idx[(a[idx] >= 1) & (dE < 0)][0]
    """
    to_r = -1
    to_l = -1
    for k in range(idx.size):
        ak = a[idx[k]]
        if to_r < 0 and ak <= 0.0 and dE[k] > 0.0:
            to_r = idx[k]
        if to_l < 0 and ak >= 1.0 and dE[k] < 0.0:
            to_l = idx[k]
    return to_r, to_l


@njit(cache=True)
def first_crossings(g: Any, s: Any, lam: float, E: Any, L: Any) -> tuple[int, int]:
    """The first sample of R and of L that sits on the margin (|g_i - lam| <= 1e-9 lam)
    and whose margin moves into the elbow as lambda falls: in numpy::

        on = abs(g - lam) <= 1e-9 * lam
        flatnonzero(~E & ~L & on & (s > 1))[0],  flatnonzero(L & on & (s < 1))[0]

    (-1 where there is none)."""
    from_r = -1
    from_l = -1
    band = 1e-9 * lam
    for i in range(g.size):
        if E[i] or abs(g[i] - lam) > band:
            continue
        if L[i]:
            if from_l < 0 and s[i] < 1.0:
                from_l = i
        elif from_r < 0 and s[i] > 1.0:
            from_r = i
        if from_r >= 0 and from_l >= 0:
            break
    return from_r, from_l


@njit(cache=True, error_model="numpy")
def next_event(a: Any, idx: Any, dE: Any, g: Any, s: Any, E: Any, L: Any, lam: float,
               lam_end: float, ceiling: float) -> tuple[float, int, int]:
    """The next breakpoint below lam: (lambda, kind, sample), kind an index into
    :data:`EVENT_KINDS`, or (lam_end, -1, -1) when none comes before lam_end.

    Candidates in (best, ceiling), best starting at lam_end; the groups in the order
    E->R, E->L, L->E, R->E, each taking its largest candidate (the first of equal ones)
    only when it beats those before. In numpy::

        E->R: lam + (0 - a_E) / dE,   E->L: lam + (1 - a_E) / dE     (over the elbow)
        L->E, R->E: (g - lam s) / (1 - s)                            (over L, over R)
    """
    best = lam_end
    kind = -1
    who = -1
    for code in range(2):
        bound = float(code)
        for k in range(idx.size):
            cand = lam + (bound - a[idx[k]]) / dE[k]
            if np.isfinite(cand) and cand > best and cand < ceiling:
                best, kind, who = cand, code, idx[k]
    best_l, who_l, best_r, who_r = best, -1, best, -1
    for i in range(g.size):
        if E[i]:
            continue
        cand = (g[i] - lam * s[i]) / (1.0 - s[i])
        if not (np.isfinite(cand) and cand < ceiling):
            continue
        if L[i]:
            if cand > best_l:
                best_l, who_l = cand, i
        elif cand > best_r:
            best_r, who_r = cand, i
    if who_l >= 0:
        best, kind, who = best_l, 2, who_l
    if who_r >= 0 and best_r > best:
        best, kind, who = best_r, 3, who_r
    return best, kind, who


@njit(cache=True, error_model="numpy")
def breakpoint_scan(y: Any, a: Any, a0: float, lam: float, g: Any, err: float, qabs: float,
                    kkt_tol: float, x: Any, with_x: bool, s: Any, idx: Any, E: Any, L: Any,
                    qmax: float, lam_end: float, ceiling: float) -> Any:
    """What the path reads off a breakpoint once its pass has formed g and s, in one call
    (each step the loop above it): ``(found, consistent, bounds, to_r, to_l, from_r,
    from_l, best, kind, who)`` with

        found = with_x and direction_miss(x, s, idx, y, qmax) <= 1e-9,
        consistent = path_consistent(y, a, lam, E, L, g, 1e-10),
        bounds = bounded_kkt(y, a, a0, lam, g, err, qabs, kkt_tol),

    and, when found: leaving_at_bound(a, idx, x[1:]), first_crossings(g, s, lam, E, L)
    and, where these find no sample, next_event(a, idx, x[1:], g, s, E, L, lam, lam_end,
    ceiling) (-1 and lam_end where not computed)."""
    found = with_x and direction_miss(x, s, idx, y, qmax) <= 1e-9
    consistent = path_consistent(y, a, lam, E, L, g, 1e-10)
    bounds = bounded_kkt(y, a, a0, lam, g, err, qabs, kkt_tol)
    to_r = to_l = from_r = from_l = kind = who = -1
    best = lam_end
    if found:
        dE = x[1:]
        to_r, to_l = leaving_at_bound(a, idx, dE)
        from_r, from_l = first_crossings(g, s, lam, E, L)
        if to_r < 0 and to_l < 0 and from_r < 0 and from_l < 0:
            best, kind, who = next_event(a, idx, dE, g, s, E, L, lam, lam_end, ceiling)
    return found, consistent, bounds, to_r, to_l, from_r, from_l, best, kind, who

load_without_refresh(globals())   # cached kernels load without numba's compiler contexts
