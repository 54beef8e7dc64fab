"""The exact regularization path of the SVM in C (Hastie, Rosset, Tibshirani & Zhu, 2004).

Write lambda = 1/C and the multipliers as fractions of their box, ``a_i = alpha_i / C`` in
[0, 1], with ``a_0 = b / C``. Then ``lambda y_i f(x_i) = g_i`` with::

    g_i = sum_j a_j y_i y_j K_ij + y_i a_0,

and the KKT conditions of the SVM sort the samples into three sets: the *elbow* E
(``y_i f_i = 1``, ``0 <= a_i <= 1``), the *left* L (``y_i f_i < 1``, ``a_i = 1``) and the
*right* R (``y_i f_i > 1``, ``a_i = 0``), with ``sum_i a_i y_i = 0``. While the sets stay
fixed, the elbow equations ``g_i = lambda`` (i in E) and the balance are linear in
(a_E, a_0) with a right-hand side linear in lambda::

    [ 0    y_E^T ] [a_0]   [ -sum_{j in L} y_j           ]
    [ y_E  Q_EE  ] [a_E] = [ lambda 1 - Q_EL 1           ]     (Q_ij = y_i y_j K_ij)

so a (hence ``alpha / C``) is linear in lambda = 1/C between *breakpoints*, where a
multiplier of E reaches 0 or 1 (it leaves for R or L) or a margin of L or R reaches 1
(it joins E). The path is followed from a certified anchor at ``C_min`` (the problem
class solves it with its exact route, so no special start-up for unbalanced classes is
needed) up to ``C_max``. When E is empty, a_0 is free in an interval that shrinks as
lambda falls; the breakpoint is where the interval closes.

A singular elbow system (duplicated samples, or more elbow points than the kernel's rank)
that is consistent moves along its minimum-norm direction. An inconsistent one is
re-anchored a small step on (``reanchored`` counts them): warm, by an active-set iteration
from the sets where the path stands (:func:`.svm_path_ties.warm_anchor`, O(n |E|) a
round), kept where the path's KKT check and the bounded KKT figures at ``kkt_tol`` pass;
else ``solve_at(C)`` is asked for a certified solution at that C.

Every breakpoint is checked against the KKT conditions (``path_consistent`` in
:func:`.svm_path_kernels.breakpoint_scan`, or :func:`_consistent`) before the
path moves on. A degenerate tie the event logic gets wrong (several samples at a boundary
at once, through an ill-conditioned elbow's round-off) is caught there and resolved in
place by that iteration (event "tie ...", where the elbow is regular), else re-anchored.

Most breakpoints are ordinary (a single join or leave along a direction that passed its
check, no refinement step): :mod:`.svm_path_loop` runs many of them in one compiled
call, by the same steps in the same order (the same path bit for bit), and hands any
other back to the Python loop below.

Between two breakpoints the solution at any C is the linear interpolation, in lambda,
of the fractions a at its ends (:meth:`SVMPath.at`), exactly - except on a segment that
ends in a re-anchor, which :meth:`SVMPath.at` refuses.
"""

from __future__ import annotations

from typing import Callable

import numpy as np

from ...certify.path_kkt_bound import bounded_kkt
from .svm_path_bound import MarginBound, blocked_sum, signed_gram
from .svm_path_empty import EVENT_RTOL as _EVENT_RTOL, empty_elbow as _empty_elbow
from .svm_path_inverse import LazyInverse
from .svm_path_record import Breakpoints, SVMPath
from .svm_path_kernels import (EVENT_KINDS, breakpoint_scan, elbow_residual, next_event,
                               path_consistent, snap_elbow)
from .svm_path_elbow import bordered_inverse as _bordered_inverse, candidate, checked
from .svm_path_elbow import elbow_matrix as _elbow_matrix
from .svm_path_pass import G_CORRECT, G_FRESH, G_NONE, elbow_pass
from .svm_path_ties import (adopt, consistent_direction, next_lambda_after_failure,
                             straight, warm_anchor)
from .svm_path_run import (DONE, fresh_due, join_elbow, leave_elbow, quiet_segment,
                            quiet_tail)
from .svm_path_loop import run_quiet

__all__ = ["SVMPath", "svm_c_path"]

#: A margin within this of 1 (margin units) or a fraction within this of 0 or 1 puts a
#: sample on the elbow or at its bound when the sets are read off an anchor.
SET_TOL = 1e-8
#: Fractions a within this of 0 or 1 after a step are on the bound (ties of events).
_SNAP = 1e-12


def svm_c_path(K: np.ndarray, y: np.ndarray, C_min: float, C_max: float,
               solve_at: Callable[[float], tuple[np.ndarray, float]],
               max_breakpoints: int = 100_000, kkt_tol: float = 1e-9) -> SVMPath:
    """Follow the SVM path from ``C_min`` to ``C_max`` (module docstring).

    Parameters
    ----------
    K : ndarray of shape (n, n)
        Gram matrix of the training samples.
    y : ndarray of {-1.0, +1.0}
    C_min, C_max : float
        0 < C_min <= C_max < inf.
    solve_at : callable
        ``solve_at(C) -> (alpha, b)``: a certified solution at C (the anchor at C_min,
        and re-anchors at degenerate breakpoints).
    max_breakpoints : int
    kkt_tol : float
        The support threshold of the breakpoints' bounded KKT figures (``bounds``).

    Returns
    -------
    SVMPath
    """
    y = np.asarray(y, dtype=float)
    # Q_ij = y_i y_j K_ij (exact: y = +-1), one n x n array, with max |Q_ij| and Q's
    # asymmetry (MarginBound's) in the same pass over K
    Q = np.empty((y.size, y.size))
    figures = signed_gram(np.asarray(K, dtype=float), y, Q)
    lam_end = 1.0 / C_max
    lam = 1.0 / C_min
    state = _anchored(Q, y, solve_at, lam, figures=figures)
    record = Breakpoints(y.size)
    record.add(lam, state.a, state.a0, "anchor", _bounded(state, lam, kkt_tol))
    reanchored = ties = 0
    while lam > lam_end and record.k < max_breakpoints:
        # ordinary breakpoints by the compiled loop (svm_path_loop), recorded there; one it
        # stops in comes back finished: (consistent, event, lambda before it)
        done = (run_quiet(state, record, lam_end, kkt_tol, max_breakpoints, _SETTINGS)
                if QUIET else None)
        if done is not None:
            ok, event, lam = done
            lam_next = state.lam
        else:
            lam = state.lam
            if not (lam > lam_end and record.k < max_breakpoints):
                break
            quiet = quiet_segment(state, lam, _FRESH) if QUIET else None    # (svm_path_run)
            step = quiet if quiet is not None else _segment(state, lam, lam_end)
            ok = step is not None
            if ok:
                lam_next, a_next, a0_next, event = step
                # (False: a degenerate tie the event logic got wrong)
                ok = state.advance(event, a_next, a0_next, lam_next, (lam_end, kkt_tol),
                                   quiet is not None)
        # a tie the path's steps got wrong: resolved where the path stands (warm, its elbow
        # system regular, and the line to it from the last breakpoint passing the KKT check
        # at kkt_tol, the breakpoints' own level: svm_path_ties.straight), else re-anchored
        # a small step on (warm, else certified)
        tied = (_warm(Q, y, state, state.lam, kkt_tol, True) if not ok and state.lam < lam
                else None)
        tied = (tied if tied is None or straight(tied, *record.last(), kkt_tol, _consistent)
                else None)
        if tied is not None:         # (recorded as "tie <the event the path had read>")
            state, lam_next, ties = tied, tied.lam, ties + 1
            event = ("tie", "end" if event is None else f"{event[0]} {event[1]}")
        elif not ok:
            lam_next = next_lambda_after_failure(lam, lam_end)
            state = _anchored(Q, y, solve_at, lam_next, state, kkt_tol,
                              (state.bound.qabs, state.bound.asym))
            event = ("re-anchor", -1)
            reanchored += 1
        lam = lam_next
        record.add(lam, state.a, state.a0,
                   "end" if event is None else
                   "re-anchor" if event[0] == "re-anchor" else f"{event[0]} {event[1]}",
                   _bounded(state, lam, kkt_tol))
    notes = [] if lam <= lam_end else [f"stopped after max_breakpoints={max_breakpoints}"]
    notes += [f"{ties} degenerate breakpoints resolved in place"] if ties else []
    Cs, alphas, intercepts, events, bounds = record.arrays()
    return SVMPath(Cs, alphas, intercepts, events, reanchored, notes, bounds)


def _bounded(state, lam, tol):
    """The breakpoint's bounded KKT figures (:func:`bounded_kkt`) from the state's margins
    (formed by the breakpoint's scan in :meth:`_PathState.advance` where it ran)."""
    if state.scan is not None:
        return state.scan[0]
    return bounded_kkt(state.y, state.a, state.a0, lam, state.g, state.bound.total(state.a),
                       state.bound.qabs, tol)


def _anchored(Q, y, solve_at, lam, near=None, tol=0.0, figures=None) -> "_PathState":
    """The path's state at a certified solution of ``solve_at(1 / lam)``; first, from the
    sets of ``near`` (:func:`.svm_path_ties.warm_anchor`), kept where it passes the path's
    KKT check and its bounded figures pass at ``tol``. ``figures``: Q's (max |Q_ij|,
    asymmetry) for its MarginBound (:func:`.svm_path_bound.signed_gram`'s)."""
    warm = None if near is None else _warm(Q, y, near, lam, tol)
    if warm is not None:
        return warm
    alpha, b = solve_at(1.0 / lam)
    a, a0 = np.asarray(alpha, float) * lam, float(b) * lam
    E, L, g = _sets(Q, y, a, a0, lam)
    _check_anchor(Q, y, a, a0, lam, E, L, g)
    return _PathState(Q, y, a, a0, lam, E, L, (MarginBound(Q, y, figures), None, 0))


def _warm(Q, y, near, lam, tol, regular=False) -> "_PathState | None":
    """The state at :func:`.svm_path_ties.warm_anchor`'s solution at lam from the sets of
    ``near``, where the path's KKT check and its bounded figures at ``tol`` pass (and,
    with ``regular``, its elbow system has an inverse): ``near`` moved there in place
    (:func:`.svm_path_ties.adopt`) with ``regular``, else a new state with the carried qL;
    then one with qL summed afresh (the carried one's updates may round beyond the check)."""
    warm = warm_anchor(near, lam)
    for carried in () if warm is None else (warm[5], (warm[5][0], None, 0)):
        state = (adopt(near, *warm[:5]) if regular and carried is warm[5] else
                 _PathState(Q, y, *warm[:5], carried))      # (in place: no new buffers)
        if (_consistent(y, state.a, state.a0, lam, state.E, state.L, state.g)
                and _bounded(state, lam, tol)[0] <= tol):
            return state if state.has_inv or not regular else None
    return None


class _PathState:
    """Where the path stands: the fractions a and a_0 at lambda, the sets E and L, and
    what a breakpoint needs from them kept up to date by rank-one changes.

    * ``QE``: the elbow's columns Q[:, E] (n x |E|, in the order of ``idx``), a column
      added as a sample joins E; one that leaves swaps places with the last first;
      ``A`` = [[0, y_E^T], [y_E, Q_EE]] in the same order (the refinement and the
      direction's check cost O(|E|^2) on it; one pass over QE a breakpoint forms g and s);
    * ``inv``: the inverse of the bordered elbow matrix [[0, y_E^T], [y_E, Q_EE]], updated
      by its Schur complement when a sample joins (O(|E|^2)) and by the inverse's own
      blocks when one leaves, so that a direction costs O(|E|^2), not a factorization
      (svmpath's updates); None while the system is singular (duplicated samples, or
      more elbow points than the kernel's rank), where
      :func:`.svm_path_elbow.direction` takes the minimum-norm solution by least squares;
    * ``qL`` = Q[:, L] 1, so that the margins g = Q a + y a_0 = QE a_E + qL + y a_0
      cost O(n |E|). Its updates add round-off of eps max|Q| each, which the margins
      g / lambda multiply by C: qL is summed afresh once the updates since its last sum
      outnumber the columns of L (about the error of a fresh sum; O(n) a change,
      amortized). The inverse is refactorized every max(:data:`_REFRESH`, 4 |E|) changes
      of E, and at each change while there is none.
    """

    def __init__(self, Q, y, a, a0, lam, E, L, carried=None):
        self.Q, self.y, self.a, self.a0, self.lam = Q, y, a, a0, lam
        self.E, self.L = E, L
        first = np.flatnonzero(E)
        self.m = first.size
        # buffers with room to grow: row k of _cols is Q[:, idx[k]] (contiguous), the
        # inverse in _inv (its leading m + 1 block); a leaving sample swaps with the last
        cap = max(16, 2 * self.m)
        self._idx = np.empty(cap, dtype=np.int64)
        self._idx[:self.m] = first
        self._pos = np.empty(y.size, dtype=np.int64)    # _pos[idx[k]] = k on the elbow
        self._pos[first] = np.arange(self.m)
        self._cols = np.empty((cap, Q.shape[0]))
        self._cols[:self.m] = Q[first]
        self._inv = LazyInverse(cap)
        self._abuf = np.empty((cap + 1, cap + 1))     # the bordered matrix itself
        self._abuf[:self.m + 1, :self.m + 1] = _elbow_matrix(Q, y, first)
        self.found = None            # the direction the last breakpoint's pass formed
        self.x = self.s_x = None     # d kept by the rank-one changes, and its s (if formed)
        self.changes = self.l_changes = 0
        self.qmax = max(float(np.max(np.diag(Q), initial=0.0)), 1e-300)   # >= |Q_ij| (PSD)
        # err >= max_i |g_i - (Q a + y a_0)_i|; a warm re-anchor carries its Q's bound and
        # qL with their updates (svm_path_ties.warm_anchor: no pass over Q)
        self.bound, self.qL, self.l_changes = carried or (MarginBound(Q, y), None, 0)
        self.n_L = int(L.sum())        # |L|, kept by join and leave (no O(n) count)
        if self.qL is None:
            self.qL = blocked_sum(Q, np.flatnonzero(L))
            self.bound.fresh_qL(self.n_L)
        self.refresh_inverse()
        self.g = self.margins()
        self.s = None                 # d g / d lambda on the current segment
        self.dE = self.d0 = None      # its direction d a_E / d lambda, d a_0 / d lambda
        self.since_fresh = 0          # breakpoints since g was summed afresh, at lam_fresh
        self.lam_fresh = lam
        self.scan = None              # the last breakpoint's breakpoint_scan (advance)

    @property
    def idx(self) -> np.ndarray:
        """The elbow's samples, in the order of QE's columns."""
        return self._idx[:self.m]

    @property
    def QE(self) -> np.ndarray:
        """Q[:, idx] (a view)."""
        return self._cols[:self.m].T

    @property
    def A(self) -> np.ndarray:
        """[[0, y_E^T], [y_E, Q_EE]] in the order of idx (a view)."""
        return self._abuf[:self.m + 1, :self.m + 1]

    @property
    def inv(self):
        """The inverse of A (its pending changes folded), None without one."""
        return self._inv.dense(self.m + 1) if self.has_inv else None

    def inv_apply(self, r: np.ndarray) -> np.ndarray:
        """A^-1 r by the lazily updated inverse (there must be one)."""
        return self._inv.apply(r, self.m + 1)

    def margins(self) -> np.ndarray:
        """g = Q a + y a_0 from QE and qL (its rounding bound reset)."""
        self.bound.fresh(self.m, self.a, self.a0, self.E, self.L)
        return blocked_sum(self._cols, np.arange(self.m), self.a[self.idx],
                           self.qL + self.y * self.a0)

    def _grow(self) -> None:
        cap = 2 * self._idx.size
        idx, cols, A = self._idx, self._cols, self._abuf
        self._idx = np.empty(cap, dtype=np.int64)
        self._idx[:self.m] = idx[:self.m]
        self._cols = np.empty((cap, cols.shape[1]))
        self._cols[:self.m] = cols[:self.m]
        self._inv.grow(cap, self.m + 1)
        self._abuf = np.empty((cap + 1, cap + 1))
        self._abuf[:self.m + 1, :self.m + 1] = A[:self.m + 1, :self.m + 1]

    def join(self, i: int) -> None:
        """Sample i enters E (from L or R): a row and column more in the inverse, by the
        Schur complement Q_ii - c^T A^-1 c of c = [y_i, Q_Ei]."""
        if self.L[i]:
            self.L[i] = False
            self.n_L -= 1
            self._update_qL(i, -1.0)
        self.E[i] = True
        if self.m == self._idx.size:
            self._grow()
        inv = self._inv
        want_x = self.has_inv and self.s_x is not None and self.x is not None
        schur, inv.p, x = join_elbow(i, self.m, self.Q, self.y, self._idx, self._pos,
                                     self._cols, self._abuf, inv.N0, inv.V, inv.w, inv.p,
                                     self.has_inv, self.x if want_x else _NO_X,
                                     self.s_x if want_x else _NO_X, want_x)
        if self.has_inv:                    # (x: svm_path_elbow's update of d)
            if schur == 0.0:
                self.has_inv = False        # nearly singular: factorize afresh below
            self.x = x if want_x and schur != 0.0 else None
        self.m += 1
        self._changed()

    def leave(self, i: int, to_L: bool) -> None:
        """Sample i leaves E for L (a_i = 1) or R (a_i = 0): it swaps places with the last
        elbow sample, whose row and column the inverse then loses (A_KK^-1 = N_KK -
        N_Kr N_rK / N_rr for the inverse N)."""
        self.E[i] = False
        self.L[i] = to_L
        if to_L:
            self.n_L += 1
            self._update_qL(i, 1.0)
        inv = self._inv
        want_x = self.has_inv and self.x is not None
        dropped, inv.p, x = leave_elbow(i, self.m, self._idx, self._pos, self._cols,
                                        self._abuf, inv.N0, inv.V, inv.w, inv.p,
                                        self.has_inv, self.x if want_x else _NO_X, want_x)
        if not dropped:
            self.has_inv = False
        elif want_x:
            self.x = x                      # (svm_path_elbow's update of d)
        self.m -= 1
        self._changed()

    def _update_qL(self, i: int, sign: float) -> None:
        self.l_changes += 1
        size = self.n_L
        if self.l_changes > size:       # (an empty L: qL = 0 exactly)
            self.qL = blocked_sum(self.Q, np.flatnonzero(self.L))
            self.l_changes = 0
            self.bound.fresh_qL(size)
        else:
            self.qL += sign * self.Q[i]      # (Q symmetric: its row i is its column)
            self.bound.update_qL(size)

    def _changed(self) -> None:
        # round-off of the updates does not accumulate: a fresh inverse (|E|^3) every
        # max(_REFRESH, 4 |E|) changes, O(|E|^2) a change amortized (sooner where the
        # direction's check or the refinement sees the updates drift); without an inverse
        # (a singular system, or an update's Schur complement at round-off) one is tried
        # at every change, as least squares costs more than a factorization
        self.changes += 1
        self.found = self.s_x = self.scan = None
        if not self.has_inv:
            self.x = None
        if self.changes >= max(_REFRESH, 4 * self.m) or not self.has_inv:
            self.refresh_inverse()

    def refresh_inverse(self) -> None:
        """Factorize the inverse afresh (None while the system is singular)."""
        inv = _bordered_inverse(self.A)
        self.changes = 0
        self.x = None
        self.has_inv = inv is not None
        if self.has_inv:
            self._inv.set(inv)

    def advance(self, event, a, a0, lam, scan=None, predicted=False) -> bool:
        """Move to the breakpoint (a, a0, lam) and apply its event; refine (a_E, a_0) on
        the new elbow system so that round-off does not accumulate over breakpoints; form
        the margins g and the next segment's direction in one pass over the elbow's
        columns (:func:`.svm_path_pass.elbow_pass`); False (the state is then stale:
        re-anchor) when the KKT conditions do not hold there (:func:`_consistent`). With
        ``scan = (lam_end, kkt_tol)`` the checks, the bounded KKT figures and the next
        segment's event come from one :func:`.svm_path_kernels.breakpoint_scan` (kept in
        ``self.scan`` for the path's record and :func:`_segment`). ``predicted``: g and
        its bound are already at lam (:func:`.svm_path_run.quiet_segment`)."""
        # g on the segment is g + (l - lam) s, exactly in exact arithmetic: predicted, or
        # summed afresh when svm_path_run.fresh_due says so (the direction's own error is
        # in s, so the refinement below sees it)
        self.since_fresh += 1
        fresh = self.s is None or fresh_due(self.since_fresh, _FRESH, lam, self.lam_fresh)
        if not fresh and not predicted:
            t = lam - self.lam
            self.g += t * self.s
            self.bound.predicted(self.a, a, self.a0, a0, t, self.E, self.idx, self.dE, self.d0)
        self.a, self.a0, self.lam, self.s, self.found = a, a0, lam, None, None
        if event is not None:
            kind, i = event
            if kind in ("E->L", "E->R"):
                bound = 1.0 if kind == "E->L" else 0.0
                self.bound.moved(abs(a[i] - bound))       # g does not follow: bounded
                a[i] = bound                               # exactly at its bound
                self.leave(i, kind == "E->L")
            else:
                for j in np.atleast_1d(i):     # an empty elbow is entered by a pair
                    self.join(int(j))
        return self.settle(fresh, scan)

    def settle(self, fresh: bool, scan=None) -> bool:
        """:meth:`advance`'s rest once the state stands at the breakpoint with its event
        applied (also :func:`.svm_path_loop.run_quiet`'s, for one it stopped in)."""
        a, a0, lam, idx, y = self.a, self.a0, self.lam, self.idx, self.y
        bound = self.bound
        if QUIET and scan is not None and self.m and (not fresh or bound.asym == 0.0):
            # the quiet breakpoint's rest in one compiled call (svm_path_run), which does
            # what the lines below do when their refinement makes no step and no snap moves
            x = candidate(self)
            s = np.empty(y.size)
            out = quiet_tail(y, a, a0, lam, self.g, idx, self._cols, self.qL, self.qmax,
                             _NO_X if x is None else x, x is not None, s, self.E, self.L,
                             bound.total(a), bound.N, bound.qabs, scan[1], scan[0],
                             lam * (1 - _EVENT_RTOL), _SNAP, fresh, bound.e_qL)
            if fresh:               # (g summed afresh there; Q symmetric: err is total)
                bound.err, bound.N = out[11], out[12]
                self.since_fresh, self.lam_fresh, fresh = 0, lam, False
            if out[0] == DONE:
                return _scanned(self, x, s, out[1:11])
        if fresh:
            # the margins summed afresh (the pass quiet_tail makes, without s): what
            # follows is a predicted breakpoint's
            elbow_pass(self._cols, self.m, a[idx], self.qL, a0, y, _NO_X, 0.0, self.g, _NO_X,
                       G_FRESH, False)
            bound.fresh(self.m, a, a0, self.E, self.L)
            self.since_fresh, self.lam_fresh = 0, lam
        a_start, a0_start = a[idx], a0
        # the elbow's margins read off g (predicted, or summed afresh above); the
        # refinement's steps move them only, the pass below moves all of g once
        gE = self.g[idx]
        # iterative refinement on [[0, y_E^T], [y_E, Q_EE]] (the residual from g: the
        # balance -y^T a and the elbow's lam - g_E) until it is at round-off of the
        # margins' terms, so that round-off does not accumulate over breakpoints (a long
        # segment multiplies the direction's error by its length); the inverse is
        # refactorized when its corrections stall
        for step in range(_REFINE_STEPS if self.m else 0):
            r, worst, scale = elbow_residual(y, a, a0, lam, gE, self.qmax)
            if worst <= 1e-15 * scale:
                break
            if step == _REFINE_STEPS // 2:
                self.refresh_inverse()
            corr = (self.inv_apply(r) if self.has_inv else
                    np.linalg.lstsq(self.A, r, rcond=1e-12)[0])
            if not np.all(np.isfinite(corr)):      # (then _consistent decides)
                break
            a[idx] += corr[1:]
            self.a0 = a0 = a0 + corr[0]
            gE = gE + self.A[1:] @ corr
        # ties: several multipliers reach a bound at one breakpoint; put them exactly on
        # it, so that the next direction sees them there
        snap_elbow(a, idx, _SNAP)
        x = candidate(self)
        d0, dE = (float(x[0]), x[1:]) if x is not None else (0.0, a_start)
        s = np.empty(y.size)
        # the measured total change of the refinement and the snaps (bounded with its
        # rounding by MarginBound.refined)
        c, c0 = a[idx] - a_start, a0 - a0_start
        moved = bool(c0 != 0.0 or c.any())
        elbow_pass(self._cols, self.m, c, self.qL, c0, y, dE, d0, self.g, s,
                   G_CORRECT if moved else G_NONE, x is not None)
        if moved:
            self.bound.refined(self.m, c, c0, a, a0)
        if scan is not None:
            return _scanned(self, x, s, breakpoint_scan(
                y, a, self.a0, lam, self.g, self.bound.total(a), self.bound.qabs, scan[1],
                _NO_X if x is None else x, x is not None, s, idx, self.E, self.L, self.qmax,
                scan[0], lam * (1 - _EVENT_RTOL)))
        if x is not None and checked(self, x, s):
            self.s_x, self.found = s, (d0, dE, s)
        return _consistent(y, a, self.a0, lam, self.E, self.L, self.g)


#: Rank-one changes of the elbow between two refactorizations of its inverse.
_REFRESH = 200
#: Refinement steps at a breakpoint at most (the inverse refactorized halfway).
_REFINE_STEPS = 4
#: Breakpoints between two fresh sums of the margins g (predicted on the segment between).
_FRESH = 8
#: Quiet breakpoints by :func:`.svm_path_run.quiet_tail` (False: all the general way; tests).
QUIET = True
#: What svm_path_loop's compiled breakpoints take from here.
_SETTINGS = (_FRESH, _REFRESH, _EVENT_RTOL, _SNAP)
#: breakpoint_scan's x where there is no direction.
_NO_X = np.zeros(1)


def _consistent(y, a, a0, lam, E, L, g, tol: float = 1e-10) -> bool:
    """The KKT conditions in the path's variables, at a breakpoint: box, balance, margin 1
    on E, <= 1 on L (a = 1), >= 1 on R (a = 0); margins g / lambda and a within ``tol``."""
    return bool(path_consistent(y, a, lam, E, L, g, tol))


def _check_anchor(Q, y, a, a0, lam, E, L, g=None) -> None:
    """An anchor must satisfy the KKT conditions to SET_TOL, or the path has no start.
    ``g``: its margins Q a + y a_0 where :func:`_sets` formed them for this very a."""
    g = Q @ a + y * a0 if g is None else g
    if not _consistent(y, a, a0, lam, E, L, g, tol=10 * SET_TOL):
        raise ValueError(f"the anchor at C = {1 / lam:.6g} does not satisfy the KKT "
                         f"conditions to {10 * SET_TOL:g}: the path needs a certified start")


def _sets(Q, y, a, a0, lam) -> tuple[np.ndarray, np.ndarray, np.ndarray | None]:
    """Elbow and left sets read off a solution: E = margin within SET_TOL of 1 (any
    multiplier), L = multiplier within SET_TOL of its upper bound, margin below 1. The
    multipliers of L and R are put exactly on their bounds (in place). Also the margins
    g = Q a + y a_0 where that moved none of them (the same a: :func:`_check_anchor` need
    not form Q a again, ~2 ms at n = 2000), else None."""
    g = Q @ a + y * a0
    margin = g / lam
    E = np.abs(margin - 1) <= SET_TOL
    L = ~E & (a >= 1 - SET_TOL)
    R = ~E & ~L
    same = not (np.any(a[L] != 1.0) or np.any(a[R] != 0.0))
    a[L] = 1.0
    a[R] = 0.0
    return E, L, g if same else None


def _segment(state, lam, lam_end):
    """The next breakpoint below lam: (lam_next, a, a0, event) or None when singular."""
    if state.m == 0:                # (m = |E|, kept by join and leave)
        return _empty_elbow(state, lam, lam_end)
    # the event breakpoint_scan found where the direction passed and no sample sits on a
    # boundary (state.scan is cleared by any change of the sets since)
    found = None if state.scan is None or state.found is None else state.scan[1]
    if found is not None:
        d0, dE, s = state.found
    else:
        d0, dE, s = consistent_direction(state)
        if d0 is None:
            return None if state.idx.size else _empty_elbow(state, lam, lam_end)
    a, a0, idx = state.a, state.a0, state.idx
    state.s, state.dE, state.d0 = s, dE, d0
    state.bound.direction(idx.size, dE, d0)
    # a multiplier of E reaches a bound (a_i + (l - lam) d_i in {0, 1}) or a margin of L
    # or R reaches 1 (g_i + (l - lam) s_i = l): the largest such l below lam
    best, kind, who = found if found is not None else next_event(
        a, idx, dE, state.g, s, state.E, state.L, lam, lam_end, lam * (1 - _EVENT_RTOL))
    event = None if kind < 0 else (EVENT_KINDS[kind], int(who))
    a_new = a.copy()
    a_new[idx] = a[idx] + (best - lam) * dE
    return best, a_new, a0 + (best - lam) * d0, event


def _scanned(state, x, s, scanned) -> bool:
    """Keep a breakpoint_scan's verdict: the direction x (None without one) with its s
    where it passed, the bounds and the next event; the KKT conditions' verdict."""
    found, ok, bounds, to_r, to_l, from_r, from_l, best, kind, who = scanned
    if found:
        state.s_x, state.found = s, (float(x[0]), x[1:], s)
    # (the event only where the direction passed and no sample sits on a boundary)
    clear = found and max(to_r, to_l, from_r, from_l) < 0
    state.scan = (bounds, (best, kind, who) if clear else None)
    return bool(ok)
