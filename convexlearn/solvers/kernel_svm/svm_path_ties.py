"""Where the exact C-path (:mod:`.svm_path`) cannot go on: degenerate breakpoints.

A breakpoint whose KKT check fails is a degenerate tie (several samples at a boundary at
one lambda) read wrongly through the round-off of an ill-conditioned elbow system (2-D
data under an rbf kernel: an elbow of ~25 samples with a condition number up to 1e7; a
refinement step then pushes a tied multiplier out of its box, or a tied margin to the
wrong side of 1 by 1e-10 .. 1e-5). The solution there differs from the one the path
stands at by a few changes of the sets at most, so instead of a cold solve of the whole
problem (SMO and its polish, ~45 ms at n = 2000) the sets are corrected by an active-set
iteration on the path's own variables (a = alpha / C in [0, 1], a_0 = b / C, margins
g = lambda y f), each round::

    [ 0    y_E^T ] [a_0]   [ -sum_{j in L} y_j ]
    [ y_E  Q_EE  ] [a_E] = [ lambda 1 - (Q_L 1)_E ],     g = Q_E a_E + Q_L 1 + y a_0,

on a fresh factorization, then the worst sample that contradicts its set moves: a_E < 0
to R, a_E > 1 to L, else a sample of R with g_i < lambda or of L with g_i > lambda to E
(one a round: the set change at the tie that is consistent). It costs O(n |E| + |E|^3) a
round (Q_L 1 kept by rank-one changes), not a pass over Q. Its answer is only a
candidate: :mod:`.svm_path` keeps it where the path's own KKT check (1e-10, margins
summed afresh) and the breakpoint's bounded KKT figures at ``kkt_tol`` pass; at the
failed breakpoint's own lambda (a tie resolved in place) only where its elbow system is
regular (the solution there unique) and the straight segment to it from the breakpoint
before holds the KKT conditions along its length (:func:`straight`: a segment before the
tie that was itself wrong, a missed crossing, is not a line of the path), else a small
step on (:func:`next_lambda_after_failure`, a re-anchor), else by a cold solve.

:func:`consistent_direction` is the path's own rule for samples that sit on a boundary
when a segment starts: they move, one at a time, until the direction keeps every sample
in its set.
"""

from __future__ import annotations

import copy
from typing import Any, Callable

import numpy as np

from .svm_path_bound import blocked_sum
from .svm_path_elbow import direction, elbow_matrix
from .svm_path_kernels import first_crossings, leaving_at_bound

__all__ = ["ROUNDS", "adopt", "consistent_direction", "next_lambda_after_failure",
           "straight", "warm_anchor"]

#: Active-set rounds at most before the cold solve takes over (a cycle among tied
#: samples, or far more set changes than a step of 1e-3 in lambda makes).
ROUNDS = 16
#: A margin this far (relative, margin units) on the wrong side of 1 moves its sample:
#: a tenth of the path's KKT check (1e-10), so that the answer passes it with room.
_MARGIN = 1e-11
#: Fractions within this of 0 or 1 are put on it (the path's snap of ties).
_SNAP = 1e-12


def next_lambda_after_failure(lam: float, lam_end: float) -> float:
    """Where to re-anchor when the path cannot continue from lam: a small step on,
    max(lam_end, lam (1 - 1e-3))."""
    return max(lam_end, lam * (1 - 1e-3))


def warm_anchor(state: Any, lam: float) -> tuple | None:
    """(a, a_0, lam, E, L, carried) at ``lam`` by the active-set iteration of the module
    docstring from the sets of ``state`` (a :class:`.svm_path._PathState`, left
    unchanged), ``carried`` = (a :class:`.svm_path_bound.MarginBound` of the same Q, Q_L 1,
    its updates since its last fresh sum): the state's, moved by the iteration's changes of
    L as :meth:`.svm_path._PathState.join` and ``leave`` move them (a fresh sum once the
    updates outnumber L's columns), so that the new state needs no pass over Q. None where
    it does not settle within :data:`ROUNDS` rounds or its elbow is empty."""
    Q, y = state.Q, state.y
    E, L = state.E.copy(), state.L.copy()
    qL, n_L, changes = state.qL.copy(), state.n_L, state.l_changes
    bound = copy.copy(state.bound)          # (its e_qL kept: qL's updates go on)
    bound.err = bound.N = bound.s_scale = bound.s_err = 0.0
    band = _MARGIN * lam
    for _ in range(ROUNDS):
        idx = np.flatnonzero(E)
        if idx.size == 0:
            return None
        A = elbow_matrix(Q, y, idx)
        rhs = np.empty(idx.size + 1)
        rhs[0] = -float(y[L].sum())
        rhs[1:] = lam - qL[idx]
        try:
            x = np.linalg.solve(A, rhs)
        except np.linalg.LinAlgError:
            x = np.linalg.lstsq(A, rhs, rcond=1e-12)[0]
        if not np.all(np.isfinite(x)):
            return None
        a0, aE = float(x[0]), x[1:]
        # the worst contradiction moves, one a round: the multipliers out of their box
        # first, then the margins (all at once overshoot: a wholesale swap of the sets of
        # an ill-conditioned elbow cycles through hundreds of samples)
        out = np.maximum(-aE, aE - 1)
        k = int(np.argmax(out))
        if out[k] > _SNAP:
            i, to_L = int(idx[k]), bool(aE[k] > 1)
            E[i] = False
            if to_L:
                L[i], n_L, changes = True, n_L + 1, changes + 1
                qL, changes = _moved_qL(Q, L, qL, i, 1.0, n_L, changes, bound)
            continue
        g = aE @ Q[idx] + qL + y * a0          # (Q symmetric: rows idx are its columns)
        wrong = np.where(L, g - lam, np.where(E, -np.inf, lam - g))
        i = int(np.argmax(wrong))
        if not wrong[i] > band:
            a = L.astype(float)
            a[idx] = np.where(np.abs(aE) <= _SNAP, 0.0,
                              np.where(np.abs(aE - 1) <= _SNAP, 1.0, aE))
            return a, a0, lam, E, L, (bound, qL, changes)
        E[i] = True
        if L[i]:
            L[i], n_L, changes = False, n_L - 1, changes + 1
            qL, changes = _moved_qL(Q, L, qL, i, -1.0, n_L, changes, bound)
    return None


def adopt(state: Any, a: np.ndarray, a0: float, lam: float, E: np.ndarray, L: np.ndarray
          ) -> Any:
    """``state`` (a :class:`.svm_path._PathState` at lam) moved to :func:`warm_anchor`'s
    (a, a_0, E, L) at the same lambda, in place: its sets changed by its own leave and join
    (rank-one changes of its buffers, inverse and qL), its inverse refactorized and its
    margins summed afresh, as a breakpoint's are; no new state and its buffers (a tie
    resolved where the path stands). Returns the state."""
    for i in np.flatnonzero(state.E & ~E).tolist():
        state.leave(i, bool(L[i]))
    for i in np.flatnonzero(E & ~state.E).tolist():
        state.join(i)
    for i in np.flatnonzero(~E & (L != state.L)).tolist():    # (R <-> L by way of E)
        state.join(i)
        state.leave(i, bool(L[i]))
    state.a, state.a0, state.lam = a, a0, lam
    state.refresh_inverse()
    state.g = state.margins()
    state.since_fresh, state.lam_fresh = 0, lam
    state.s = state.dE = state.found = state.scan = state.s_x = None
    return state


def straight(state: Any, lam_prev: float, a_prev: np.ndarray, a0_prev: float, tol: float,
             check: Callable[..., bool]) -> bool:
    """Whether the straight segment from the breakpoint before, (a, a_0) at lam_prev, to
    the tie ``state`` resolved (its a, a_0, lam and freshly summed margins g) holds the
    KKT conditions along its length: ``check`` (the path's own, :func:`.svm_path._consistent`)
    at ``tol`` (the path's ``kkt_tol``, the level its breakpoints are certified at: a
    segment read through a missed breakpoint within ~1e-9 of the last one is off its line
    by less, one that overshoots an event is off by the overshoot) at the points t = 1/3
    and 2/3 of it.

    Along the segment, (a, a_0, lambda) and so the margins g move on straight lines, and
    so does each sample's pair (a_i, g_i - lambda). A valid pair lies on the staircase::

        {a = 0, g >= lambda}  U  {0 <= a <= 1, g = lambda}  U  {a = 1, g <= lambda}

    (a monotone polyline of three legs). A straight segment between two points of it stays
    on it iff both lie on a common leg; else it meets it in at most one interior point. So
    two interior points that pass decide it for every sample at once (the balance
    sum a y = 0 is linear and holds at both ends). At the points the sets are L where a = 1
    at both ends, R where a = 0 at both ends, E elsewhere (there 0 < a < 1: the elbow
    leg, g = lambda). The margins before need no pass over Q::

        g_prev = g - (Q (a - a_prev) + y (a_0 - a0_prev)),

    by Q's rows of the few samples whose a changed (the elbows and the changed ones; Q
    symmetric): O(n |a != a_prev|). ``a_prev`` is read back from the record (alpha lambda),
    so it is put on 0 or 1 within round-off first."""
    Q, y, a, a0, lam, g = state.Q, state.y, state.a, state.a0, state.lam, state.g
    a_prev = np.where(np.abs(a_prev - 1) <= _SNAP, 1.0,
                      np.where(np.abs(a_prev) <= _SNAP, 0.0, a_prev))
    moved = np.flatnonzero(a != a_prev)
    g_prev = g - (a[moved] - a_prev[moved]) @ Q[moved] - y * (a0 - a0_prev)
    L = (a_prev == 1.0) & (a == 1.0)
    R = (a_prev == 0.0) & (a == 0.0)
    E = ~(L | R)
    for t in (1 / 3, 2 / 3):
        a_t = np.where(L, 1.0, np.where(R, 0.0, (1 - t) * a_prev + t * a))
        if not check(y, a_t, (1 - t) * a0_prev + t * a0, (1 - t) * lam_prev + t * lam, E, L,
                     (1 - t) * g_prev + t * g, tol):
            return False
    return True


def _moved_qL(Q: np.ndarray, L: np.ndarray, qL: np.ndarray, i: int, sign: float, n_L: int,
              changes: int, bound: Any) -> tuple[np.ndarray, int]:
    """qL = Q_L 1 after sample i entered (sign 1) or left (-1) L, and its update count, as
    :meth:`.svm_path._PathState._update_qL` does: summed afresh once the updates outnumber
    L's columns, else by Q's row i (its bound's e_qL updated in place)."""
    if changes > n_L:
        bound.fresh_qL(n_L)
        return blocked_sum(Q, np.flatnonzero(L)), 0
    qL += sign * Q[i]
    bound.update_qL(n_L)
    return qL, changes


def consistent_direction(state: Any) -> tuple:
    """The direction, after moving the samples that sit on a boundary between two sets
    and would cross it at once (a just-joined multiplier that leaves its box, a sample
    on the margin whose margin moves the wrong way for its set). Modifies the sets."""
    a, lam, E, L = state.a, state.lam, state.E, state.L
    for _ in range(state.Q.shape[0] + 1):
        idx = state.idx
        if idx.size == 0:
            return None, None, None
        found = direction(state)
        if found is None:
            return None, None, None
        d0, dE, s = found                        # s = d g / d lambda
        # lambda decreases: a_i moves by -dE_i, the margin slack g_i - lambda by -(s_i - 1)
        to_R, to_L = leaving_at_bound(a, idx, dE)
        # (samples on the margin, |g - lam| <= 1e-9 lam, of R rising or L falling into E)
        from_R, from_L = first_crossings(state.g, s, lam, E, L)
        if to_R >= 0:
            state.leave(int(to_R), False)
        elif to_L >= 0:
            state.leave(int(to_L), True)
        elif from_R >= 0:
            state.join(int(from_R))
        elif from_L >= 0:
            state.join(int(from_L))
        else:
            return d0, dE, s
    return None, None, None
