"""The exact C-path's ordinary breakpoint in one compiled call (:mod:`.svm_path`).

Most breakpoints of the path are quiet: the elbow system's residual at the new
breakpoint is already at round-off, so that the refinement makes no step, and no elbow
fraction sits within the snap of 0 or 1. What :meth:`.svm_path._PathState.advance` then
does after the event is a fixed sequence of compiled loops; :func:`quiet_tail` runs that
sequence in one call (one dispatch, not five, and no numpy temporaries between them)::

    (fresh: g = qL + y a_0 + Q_E a_E and s in one pass, (err, N) = MarginBound's fresh
     bound; the general way sums g afresh first too, then goes on as below),
    r = [-(y . a), lam - g_E],   stop unless max|r| <= 1e-15 (qmax ||a||_1 + |a_0| + lam),
    stop if the snap would move any a_E (a_E within ``snap`` of 0 or 1 but not on it,
    or outside [0, 1]),
    s = y d_0 + Q_E d_E   (not fresh)           (:func:`.svm_path_pass.elbow_pass`),
    (found, consistent, bounds, event)          (:func:`.svm_path_kernels.breakpoint_scan`).

Before the event, such a breakpoint's segment comes from the last one's scan (its direction
passed its check and no sample sat on a boundary) and the margins are predicted where no
fresh sum is due: :func:`quiet_head` forms the step and the prediction in one call (see
:func:`quiet_segment`)::

    S, e_s = MarginBound's direction bound of (d_E, d_0),
    a' = a + t d (on E),   a_0' = a_0 + t d_0,   g' = g + t s,   t = lambda' - lambda,
    (err, N) = MarginBound's prediction bound of the step.

In :func:`quiet_tail`, "stop" returns before anything but a fresh sum is written (code
:data:`REFINE`): the Python loop then runs the breakpoint its general way from the same
margins, which begins with the same residual and snap, so that both give the same path bit
for bit (tests run the path with and without the compiled calls and compare).
"""

from __future__ import annotations

from typing import Any

import numpy as np
from numba import njit

from ...compiled import load_without_refresh
from .svm_path_bound import direction_bound, fresh_bound, predicted_bound
from .svm_path_inverse import lazy_border, lazy_drop, lazy_swap
from .svm_path_kernels import (EVENT_KINDS, breakpoint_scan, elbow_residual, snapped,
                               swap_rows_cols)
from .svm_path_pass import G_FRESH, G_NONE, elbow_pass

__all__ = ["DONE", "REFINE", "fresh_due", "join_elbow", "leave_elbow", "quiet_head",
           "quiet_segment", "quiet_tail"]

#: Codes of :func:`quiet_tail`: the breakpoint is done; the general way must run it.
DONE, REFINE = 0, 1


@njit(cache=True, error_model="numpy")
def quiet_tail(y: Any, a: Any, a0: float, lam: float, g: Any, idx: Any, cols: Any,
               qL: Any, qmax: float, x: Any, with_x: bool, s: Any, E: Any, L: Any,
               err: float, N: float, qabs: float, kkt_tol: float, lam_end: float,
               ceiling: float, snap: float, fresh: bool, e_qL: float) -> Any:
    """The rest of a quiet breakpoint (module docstring), s formed in place: returns
    ``(code, found, consistent, bounds, to_r, to_l, from_r, from_l, best, kind, who, err,
    N)`` (:func:`.svm_path_kernels.breakpoint_scan`'s figures, only ``code`` meaningful
    when it is :data:`REFINE`; and the margins' bound (err, N), as given but with
    ``fresh``). With ``fresh`` the margins are first summed afresh, g in place, with s in
    the same pass, and (err, N) are :func:`.svm_path_bound.fresh_bound`'s, whatever the
    code: the general way then goes on from the fresh g."""
    m = idx.size
    if fresh:
        w = np.empty(m)
        for k in range(m):
            w[k] = a[idx[k]]
        elbow_pass(cols, m, w, qL, a0, y, x[1:], x[0], g, s, G_FRESH, with_x)
        err, N = fresh_bound(qabs, e_qL, m, a, a0, E, L)
    r, worst, scale = elbow_residual(y, a, a0, lam, g[idx], qmax)
    quiet = worst <= 1e-15 * scale
    for k in range(m):
        if snapped(a[idx[k]], snap) != a[idx[k]]:
            quiet = False
    if not quiet:
        return (DONE + REFINE, False, False, np.empty(8), -1, -1, -1, -1, lam_end, -1, -1,
                err, N)
    for k in range(m):          # (a no-op but for the sign of a zero, as snap_elbow)
        a[idx[k]] = snapped(a[idx[k]], snap)
    if with_x and not fresh:
        elbow_pass(cols, m, x[1:], qL, 0.0, y, x[1:], x[0], g, s, G_NONE, True)
    found, ok, bounds, to_r, to_l, from_r, from_l, best, kind, who = breakpoint_scan(
        y, a, a0, lam, g, err, qabs, kkt_tol, x, with_x, s, idx, E, L, qmax, lam_end,
        ceiling)
    return DONE, found, ok, bounds, to_r, to_l, from_r, from_l, best, kind, who, err, N


@njit(cache=True)
def quiet_head(a: Any, a0: float, lam: float, idx: Any, dE: Any, d0: float, best: float,
               g: Any, s: Any, E: Any, qabs: float, err: float, N: float,
               predict: bool = True) -> Any:
    """The step to the next breakpoint at ``best`` and the margins' prediction (module
    docstring), g in place: returns (a', a_0', S, e_s, err, N) with the bound's figures of
    :func:`.svm_path_bound.direction_bound` and :func:`.svm_path_bound.predicted_bound`.
    Without ``predict`` (a fresh sum is due there) g, err and N are left as they are."""
    s_scale, s_err = direction_bound(qabs, idx.size, dE, d0)
    t = best - lam
    a_new = a.copy()
    for k in range(idx.size):
        a_new[idx[k]] = a[idx[k]] + t * dE[k]
    a0_new = a0 + t * d0
    if not predict:
        return a_new, a0_new, s_scale, s_err, err, N
    for i in range(g.size):
        g[i] += t * s[i]
    err, N = predicted_bound(err, N, s_scale, s_err, qabs, a, a_new, a0, a0_new, t, E, idx,
                             dE, d0)
    return a_new, a0_new, s_scale, s_err, err, N


@njit(cache=True)
def fresh_due(since: int, fresh_every: int, lam: float, lam_fresh: float) -> bool:
    """Whether the margins g are summed afresh at the breakpoint at ``lam``, the
    ``since``-th since the last sum (at ``lam_fresh``): every ``fresh_every`` breakpoints,
    and once lambda has halved since that sum (the prediction's round-off is eps |g| at
    the sum, while the margins g / lambda it decides on grow as 1 / lambda). The one rule
    of :meth:`.svm_path._PathState.advance`, :func:`quiet_segment` and
    :func:`.svm_path_loop.quiet_run`."""
    return not (since < fresh_every and lam >= 0.5 * lam_fresh)


def quiet_segment(state: Any, lam: float, fresh_every: int) -> Any:
    """The next breakpoint (lam', a', a_0', event) of a quiet segment by :func:`quiet_head`,
    the state's margins and bound moved there (its ``advance`` then told so), or None
    (nothing changed) where the general way must run: no scanned event, or the margins
    are due a fresh sum at lam' (every ``fresh_every`` breakpoints, and once lambda has
    halved since the last)."""
    if state.m == 0 or state.scan is None or state.found is None or state.scan[1] is None:
        return None
    best, kind, who = state.scan[1]
    if fresh_due(state.since_fresh + 1, fresh_every, best, state.lam_fresh):
        return None
    d0, dE, s = state.found
    bound = state.bound
    a_new, a0_new, bound.s_scale, bound.s_err, bound.err, bound.N = quiet_head(
        state.a, state.a0, lam, state.idx, dE, d0, best, state.g, s, state.E, bound.qabs,
        bound.err, bound.N)
    state.s, state.dE, state.d0 = s, dE, d0
    return best, a_new, a0_new, None if kind < 0 else (EVENT_KINDS[kind], int(who))



@njit(cache=True)
def join_elbow(i: int, m: int, Q: Any, y: Any, idx: Any, pos: Any, cols: Any, abuf: Any,
               N0: Any, V: Any, w: Any, p: int, has_inv: bool, x: Any, s_x: Any,
               want_x: bool) -> Any:
    """Sample i becomes the elbow's (m + 1)-th, in one call: idx, pos, the column buffer
    (row m = Q[i], Q symmetric) and the bordered matrix A (its row and column m + 1 =
    c = [y_i, Q_Ei], corner Q_ii); with an inverse, N bordered by the Schur complement
    sigma = Q_ii - c^T N c (:func:`.svm_path_inverse.lazy_border`, u = N c) and, with
    ``want_x``, the maintained direction d' = [d - beta u, beta], beta = (1 - s_i) /
    sigma. Returns (sigma (0 when singular to round-off, N untouched; 1 without an
    inverse), the pending count, d' or x itself)."""
    c = np.empty(m + 1)
    c[0] = y[i]
    for k in range(m):
        c[k + 1] = Q[i, idx[k]]
    schur = 1.0
    if has_inv:
        u = np.empty(m + 1)
        schur, p = lazy_border(N0, V, w, p, m + 1, c, Q[i, i], 1e-12, u)
        if schur != 0.0 and want_x:
            beta = (1.0 - s_x[i]) / schur
            x_new = np.empty(m + 2)
            for k in range(m + 1):
                x_new[k] = u[k] * -beta + x[k]
            x_new[m + 1] = beta
            x = x_new
    idx[m] = i
    pos[i] = m
    cols[m, :] = Q[i]
    for k in range(m + 1):
        abuf[m + 1, k] = c[k]
        abuf[k, m + 1] = c[k]
    abuf[m + 1, m + 1] = Q[i, i]
    return schur, p, x


@njit(cache=True)
def leave_elbow(i: int, m: int, idx: Any, pos: Any, cols: Any, abuf: Any, N0: Any, V: Any,
                w: Any, p: int, has_inv: bool, x: Any, want_x: bool) -> Any:
    """Sample i leaves the elbow of m, in one call: it swaps places with the last (idx,
    pos, the column buffer, A's rows and columns, N's), whose row and column N then loses
    (:func:`.svm_path_inverse.lazy_drop`: N_KK - N_Kr N_rK / N_rr); with ``want_x`` the
    maintained direction follows, d'_K = d_K - e_K d_r / f (e = N's last column, f =
    N_rr). Returns (whether N dropped them (False when |f| <= 1e-300, N untouched; True
    without an inverse), the pending count, d' or x itself)."""
    q = pos[i]
    last = m - 1
    if q != last:
        # (the leaver's row is dropped below: the last one's moved into its place)
        idx[q] = idx[last]
        pos[idx[q]] = q
        cols[q, :] = cols[last]
        swap_rows_cols(abuf, q + 1, last + 1, last + 2)
        if has_inv:
            lazy_swap(N0, V, p, q + 1, last + 1, last + 2)
    if not has_inv:
        return True, p, x
    col = np.empty(last + 2)
    f, p = lazy_drop(N0, V, w, p, last + 2, col)
    if not abs(f) > 1e-300:
        return False, p, x
    if want_x:
        x[q + 1], x[last + 1] = x[last + 1], x[q + 1]
        r = x[last + 1] / f
        x_new = np.empty(last + 1)
        for k in range(last + 1):
            x_new[k] = x[k] - col[k] * r
        x = x_new
    return True, p, x


load_without_refresh(globals())   # cached kernels load without numba's compiler contexts
