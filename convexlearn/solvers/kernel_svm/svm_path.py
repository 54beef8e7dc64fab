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
re-anchored: ``solve_at(C)`` is asked for a certified solution at the current C and the
path continues from it; ``reanchored`` counts them.

Every breakpoint is checked against the KKT conditions (:func:`_consistent`) before the
path moves on; a degenerate tie the event logic gets wrong (several multipliers reaching a
bound at once among duplicated samples) is caught there and re-anchored a small step on.

Between two breakpoints the solution at any C is the linear interpolation, in lambda,
of the fractions a at its ends (:meth:`SVMPath.at`), exactly - except on a segment that
ends in a re-anchor, which :meth:`SVMPath.at` refuses.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Callable

import numpy as np

__all__ = ["SVMPath", "svm_c_path"]

#: A margin within this of 1 (margin units) or a fraction within this of 0 or 1 puts a
#: sample on the elbow or at its bound when the sets are read off an anchor.
SET_TOL = 1e-8
#: Candidate breakpoints within this relative distance below the current lambda are the
#: event just applied, seen again through round-off.
_EVENT_RTOL = 1e-12
#: Fractions a within this of 0 or 1 after a step are on the bound (ties of events).
_SNAP = 1e-12


@dataclass
class SVMPath:
    """Breakpoints of the SVM path in C (increasing) and exact interpolation.

    Attributes
    ----------
    Cs : ndarray of shape (k,)
    alphas : ndarray of shape (k, n)
        The multipliers alpha (in [0, C]) at each breakpoint.
    intercepts : ndarray of shape (k,)
    events : list of str
    reanchored : int
        Degenerate breakpoints where the path was re-anchored on a certified solve.
    """

    Cs: np.ndarray
    alphas: np.ndarray
    intercepts: np.ndarray
    events: list[str]
    reanchored: int = 0
    notes: list[str] = field(default_factory=list)

    def __repr__(self) -> str:
        return (f"<SVMPath: {len(self.Cs)} breakpoints, C from {self.Cs[0]:.4g} to "
                f"{self.Cs[-1]:.4g}, {self.reanchored} re-anchored>")

    def at(self, C: float) -> tuple[np.ndarray, float]:
        """(alpha, b) at any C in [Cs[0], Cs[-1]]: a = alpha / C and a_0 = b / C are
        linear in 1/C between two breakpoints."""
        C = float(C)
        if not (self.Cs[0] * (1 - 1e-12) <= C <= self.Cs[-1] * (1 + 1e-12)):
            raise ValueError(f"C={C!r} is outside the computed path "
                             f"[{self.Cs[0]:.6g}, {self.Cs[-1]:.6g}]")
        k = int(np.clip(np.searchsorted(self.Cs, C), 1, len(self.Cs) - 1))
        if self.events[k] == "re-anchor" and not np.isclose(C, self.Cs[k], rtol=1e-12):
            raise ValueError(f"C={C:.6g} lies in a segment that ends in a re-anchor (a "
                             f"degenerate tie the path could not follow): it is not "
                             f"linear there; solve at C directly")
        lam, lam_lo, lam_hi = 1 / C, 1 / self.Cs[k - 1], 1 / self.Cs[k]
        t = 0.0 if lam_lo == lam_hi else (lam_lo - lam) / (lam_lo - lam_hi)
        a = (1 - t) * self.alphas[k - 1] / self.Cs[k - 1] + t * self.alphas[k] / self.Cs[k]
        a0 = (1 - t) * self.intercepts[k - 1] / self.Cs[k - 1] + t * self.intercepts[k] / self.Cs[k]
        return a * C, float(a0 * C)


def svm_c_path(K: np.ndarray, y: np.ndarray, C_min: float, C_max: float,
               solve_at: Callable[[float], tuple[np.ndarray, float]],
               max_breakpoints: int = 100_000) -> SVMPath:
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

    Returns
    -------
    SVMPath
    """
    y = np.asarray(y, dtype=float)
    Q = (y[:, None] * y[None, :]) * K
    lam_end = 1.0 / C_max
    lam = 1.0 / C_min
    alpha, b = solve_at(C_min)
    a, a0 = np.asarray(alpha, float) * lam, float(b) * lam
    E, L = _sets(Q, y, a, a0, lam)
    _check_anchor(Q, y, a, a0, lam, E, L)
    Cs, alphas, intercepts, events = [C_min], [a / lam], [a0 / lam], ["anchor"]
    reanchored = 0
    while lam > lam_end and len(Cs) < max_breakpoints:
        step = _segment(Q, y, a, a0, lam, E, L, lam_end)
        if step is not None:
            lam_next, a_next, a0_next, event = step
            E_next, L_next = E.copy(), L.copy()
            _apply(event, a_next, E_next, L_next)
            if not _consistent(Q, y, a_next, a0_next, lam_next, E_next, L_next):
                step = None       # a degenerate tie the event logic got wrong
        if step is None:          # re-anchor on a certified solve where the path stands
            lam_next = _next_lambda_after_failure(lam, lam_end)
            alpha, b = solve_at(1.0 / lam_next)
            a_next, a0_next = np.asarray(alpha, float) * lam_next, float(b) * lam_next
            E_next, L_next = _sets(Q, y, a_next, a0_next, lam_next)
            _check_anchor(Q, y, a_next, a0_next, lam_next, E_next, L_next)
            event = ("re-anchor", -1)
            reanchored += 1
        lam, a, a0, E, L = lam_next, a_next, a0_next, E_next, L_next
        events.append("end" if event is None else
                      "re-anchor" if event[0] == "re-anchor" else f"{event[0]} {event[1]}")
        Cs.append(1.0 / lam)
        alphas.append(a / lam)
        intercepts.append(a0 / lam)
    notes = [] if lam <= lam_end else [f"stopped after max_breakpoints={max_breakpoints}"]
    return SVMPath(np.array(Cs), np.array(alphas), np.array(intercepts), events, reanchored,
                   notes)


def _apply(event, a, E, L) -> None:
    """Move the sample(s) of a breakpoint's event between the sets (in place)."""
    if event is None:
        return
    kind, i = event
    if kind in ("E->L", "E->R"):
        E[i] = False
        L[i] = kind == "E->L"
        a[i] = 1.0 if L[i] else 0.0        # exactly at its bound
    else:
        for j in np.atleast_1d(i):     # an empty elbow is entered by a pair
            E[j], L[j] = True, False


def _consistent(Q, y, a, a0, lam, E, L, tol: float = 1e-10) -> bool:
    """The KKT conditions in the path's variables, at a breakpoint: box, balance, margin 1
    on E, <= 1 on L (a = 1), >= 1 on R (a = 0); margins and a within ``tol``."""
    margin = (Q @ a + y * a0) / lam
    R = ~E & ~L
    return bool(abs(a @ y) <= tol * max(1.0, np.abs(a).sum())
                and np.all(np.abs(margin[E] - 1) <= tol)
                and np.all(margin[L] <= 1 + tol) and np.all(a[L] == 1.0)
                and np.all(margin[R] >= 1 - tol) and np.all(a[R] == 0.0)
                and np.all((a >= 0) & (a <= 1)))


def _check_anchor(Q, y, a, a0, lam, E, L) -> None:
    """An anchor must satisfy the KKT conditions to SET_TOL, or the path has no start."""
    if not _consistent(Q, y, a, a0, lam, E, L, tol=10 * SET_TOL):
        raise ValueError(f"the anchor at C = {1 / lam:.6g} does not satisfy the KKT "
                         f"conditions to {10 * SET_TOL:g}: the path needs a certified start")


def _next_lambda_after_failure(lam: float, lam_end: float) -> float:
    """Where to re-anchor when the path cannot continue from lam: a small step on."""
    return max(lam_end, lam * (1 - 1e-3))


def _sets(Q, y, a, a0, lam) -> tuple[np.ndarray, np.ndarray]:
    """Elbow and left sets read off a solution: E = margin within SET_TOL of 1 (any
    multiplier), L = multiplier within SET_TOL of its upper bound, margin below 1. The
    multipliers of L and R are put exactly on their bounds (in place)."""
    margin = (Q @ a + y * a0) / lam
    E = np.abs(margin - 1) <= SET_TOL
    L = ~E & (a >= 1 - SET_TOL)
    a[L] = 1.0
    a[~E & ~L] = 0.0
    return E, L


def _elbow_matrix(Q, y, idx) -> np.ndarray:
    """[[0, y_E^T], [y_E, Q_EE]]: the balance row and the elbow equations."""
    m = idx.size
    A = np.empty((m + 1, m + 1))
    A[0, 0] = 0.0
    A[0, 1:] = y[idx]
    A[1:, 0] = y[idx]
    A[1:, 1:] = Q[np.ix_(idx, idx)]
    return A


def _direction(Q, y, idx):
    """d(a_0, a_E)/d lambda from the elbow system, or None when it has no solution.

    A singular but consistent system (duplicated samples on the elbow, or more elbow
    points than the kernel's rank) has many directions with the same margins: the
    minimum-norm one is taken (duplicates then move together)."""
    m = idx.size
    A = _elbow_matrix(Q, y, idx)
    rhs = np.zeros(m + 1)
    rhs[1:] = 1.0
    dd, *_ = np.linalg.lstsq(A, rhs, rcond=1e-12)
    scale = np.abs(A).sum(axis=1) @ np.abs(dd) + 1.0 if m else 1.0
    if not np.all(np.isfinite(dd)) or np.abs(A @ dd - rhs).max() > 1e-9 * scale:
        return None
    return dd[0], dd[1:]


def _consistent_direction(Q, y, a, a0, lam, E, L):
    """The direction, after moving the samples that sit on a boundary between two sets
    and would cross it at once (a just-joined multiplier that leaves its box, a sample
    on the margin whose margin moves the wrong way for its set). Modifies E and L."""
    g = Q @ a + y * a0
    on_margin = np.abs(g - lam) <= 1e-9 * lam
    for _ in range(Q.shape[0] + 1):
        idx = np.flatnonzero(E)
        if idx.size == 0:
            return None, None, idx
        found = _direction(Q, y, idx)
        if found is None:
            return None, None, idx
        d0, dE = found
        s = Q[:, idx] @ dE + y * d0         # d g_i / d lambda
        # lambda decreases: a_i moves by -dE_i, the margin slack g_i - lambda by -(s_i - 1)
        to_R = idx[(a[idx] <= 0.0) & (dE > 0)]
        to_L = idx[(a[idx] >= 1.0) & (dE < 0)]
        from_R = np.flatnonzero(~E & ~L & on_margin & (s > 1))
        from_L = np.flatnonzero(L & on_margin & (s < 1))
        if to_R.size:
            E[to_R[0]] = False
        elif to_L.size:
            E[to_L[0]], L[to_L[0]] = False, True
        elif from_R.size:
            E[from_R[0]] = True
        elif from_L.size:
            E[from_L[0]], L[from_L[0]] = True, False
        else:
            return d0, dE, idx
    return None, None, np.flatnonzero(E)


def _segment(Q, y, a, a0, lam, E, L, lam_end):
    """The next breakpoint below lam: (lam_next, a, a0, event) or None when singular."""
    if not E.any():
        return _empty_elbow(Q, y, a, lam, L, lam_end)
    d0, dE, idx = _consistent_direction(Q, y, a, a0, lam, E, L)
    if d0 is None:
        return None if idx.size else _empty_elbow(Q, y, a, lam, L, lam_end)
    s = Q[:, idx] @ dE + y * d0
    g = Q @ a + y * a0
    ceiling = lam * (1 - _EVENT_RTOL)
    best, event = lam_end, None
    with np.errstate(divide="ignore", invalid="ignore"):
        # a multiplier of E reaches a bound: a_i + (l - lam) d_i in {0, 1}
        for bound, kind in ((0.0, "E->R"), (1.0, "E->L")):
            cand = lam + (bound - a[idx]) / dE
            ok = np.isfinite(cand) & (cand > best) & (cand < ceiling)
            if ok.any():
                k = int(np.flatnonzero(ok)[np.argmax(cand[ok])])
                best, event = float(cand[k]), (kind, int(idx[k]))
        # a margin of L or R reaches 1: g_i + (l - lam) s_i = l
        cand = (g - lam * s) / (1 - s)
        for mask, kind in ((L & ~E, "L->E"), (~L & ~E, "R->E")):
            ok = mask & np.isfinite(cand) & (cand > best) & (cand < ceiling)
            if ok.any():
                i = int(np.flatnonzero(ok)[np.argmax(cand[ok])])
                best, event = float(cand[i]), (kind, i)
    a_new = a.copy()
    a_new[idx] = a[idx] + (best - lam) * dE
    a0_new = _refined(Q, y, a_new, a0 + (best - lam) * d0, best, idx, L & ~E)
    # Ties: several multipliers reach a bound at one breakpoint; put them exactly on it,
    # so that the next direction sees them there (a_i = 0 with a_i about to go negative
    # must leave E, not be clipped, which would break sum_i a_i y_i = 0).
    a_new[np.abs(a_new) <= _SNAP] = 0.0
    a_new[np.abs(a_new - 1) <= _SNAP] = 1.0
    return best, np.clip(a_new, 0.0, 1.0), a0_new, event


def _refined(Q, y, a, a0, lam, idx, L) -> float:
    """One step of iterative refinement of (a_0, a_E) on the elbow system at lam (the
    minimum-norm correction), so that round-off does not accumulate over breakpoints.
    Updates a[idx] in place; returns a_0."""
    m = idx.size
    A = _elbow_matrix(Q, y, idx)
    rhs = np.empty(m + 1)
    rhs[0] = -y[L].sum()
    rhs[1:] = lam - Q[np.ix_(idx, np.flatnonzero(L))].sum(axis=1)
    x = np.concatenate([[a0], a[idx]])
    correction, *_ = np.linalg.lstsq(A, rhs - A @ x, rcond=1e-12)
    x += correction
    a[idx] = x[1:]
    return float(x[0])


def _empty_elbow(Q, y, a, lam, L, lam_end):
    """No sample on the margin: a is fixed, a_0 lies in an interval [lo(l), hi(l)] that
    shrinks as lambda falls; the next breakpoint is where it closes, and the samples that
    close it join E."""
    q = Q @ a                 # g_i = q_i + y_i a_0
    pos, neg = y > 0, y < 0
    # lambda y_i f_i = q_i + y_i a_0 is <= lambda on L and >= lambda on R:
    #   L, y=+1: a_0 <= l - q_i      L, y=-1: a_0 >= q_i - l
    #   R, y=+1: a_0 >= l - q_i      R, y=-1: a_0 <= q_i - l
    up_c = np.concatenate([-q[L & pos], q[~L & neg]])     # hi = min(+-l + c)
    up_s = np.concatenate([np.ones((L & pos).sum()), -np.ones((~L & neg).sum())])
    lo_c = np.concatenate([q[L & neg], -q[~L & pos]])
    lo_s = np.concatenate([-np.ones((L & neg).sum()), np.ones((~L & pos).sum())])
    up_i = np.concatenate([np.flatnonzero(L & pos), np.flatnonzero(~L & neg)])
    lo_i = np.concatenate([np.flatnonzero(L & neg), np.flatnonzero(~L & pos)])
    # hi(l) - lo(l) is concave piecewise linear in l; find the largest l < lam where it
    # reaches 0 by checking every pair's crossing (n is small enough on this branch).
    best, pair = lam_end, None
    for u_c, u_s, ui in zip(up_c, up_s, up_i):
        slope = u_s - lo_s
        with np.errstate(divide="ignore", invalid="ignore"):
            cross = (lo_c - u_c) / slope
        ok = np.isfinite(cross) & (cross > best) & (cross < lam * (1 - _EVENT_RTOL))
        for k in np.flatnonzero(ok):
            l_ = cross[k]
            hi = np.min(up_s * l_ + up_c)
            lo = np.max(lo_s * l_ + lo_c)
            if abs(hi - lo) <= 1e-12 * max(1.0, abs(hi)):    # this pair binds
                best, pair = float(l_), (int(ui), int(lo_i[k]))
    if pair is None:
        hi = np.min(up_s * best + up_c)
        lo = np.max(lo_s * best + lo_c)
        return best, a.copy(), 0.5 * (hi + lo), None
    k = list(up_i).index(pair[0])
    return best, a.copy(), float(up_s[k] * best + up_c[k]), ("pair->E", pair)
