"""The compiled SMO loop without an equality row (no intercept): pairs without the row.

Without the row s^T a = Delta the dual QP of :mod:`~convexlearn.solvers.kernel_svm.qp`
is ``min F(a) = 1/2 a^T Q a + p^T a`` over the box ``0 <= a <= u`` only, and a single
variable can move (LIBLINEAR's dual coordinate descent). With ``v = target - g`` (g =
K (s * a), target = -s * p) the gradient is ``grad_t = -s_t v_t`` and the projected
gradient

    pg_t = grad_t, except 0 where a_t = 0 and grad_t > 0, or a_t = u_t and grad_t < 0.

Single coordinates converge slowly on smooth kernels: K is close to a constant matrix
plus a small rest, and each coordinate step moves every gradient entry by nearly the same
amount (rbf on 2-D blobs, C = 100, n = 400: 296 270 single steps to a violation of 1e-3
against 26 834 pair steps; C = 1e4: 10^7 (not converged) against 784 196). So each
iteration moves a pair, as SMO does with the row, but freely in two dimensions:

* i = the variable of the largest exact decrease of F along its coordinate (the
  clipped Newton step ``d_t = clip(a_t - grad_t / max(K_tt, tau), 0, u_t) - a_t``
  decreases F by ``gain_t = -(grad_t d_t + K_tt d_t^2 / 2)``; first index on ties);
* j = the largest decrease of the unconstrained Newton step on (a_i, a_j)
  (:func:`pair_score`, the second-order choice), among the variables that can move
  (free, or at a bound with the gradient pointing into the box);
* the pair's 2-variable box QP solved exactly (:func:`solve_pair`: it decreases F at
  least by gain_i), v -= d_i s_i K[:, i] + d_j s_j K[:, j] (two kernel columns);
* stop when max_t |pg_t| <= tol (the violation, in units of the target).

The column cache, ``gbar`` (the bounded multipliers' part of g, for unshrinking) and the
``index`` map (variables on samples, LIBSVM's SVR_Q) are those of
:mod:`~convexlearn.solvers.kernel_svm.smo_kernels`, whose helpers this loop calls.
Shrinking (the reference's rule): every min(n, 1000) iterations, a variable at 0 whose
gradient exceeds the current violation, or at u whose gradient is below minus it, leaves
the active set; the gradient of all is rebuilt (from gbar and the free multipliers) and
optimality checked on all before stopping, and once when the violation first comes within
10 tol. Hard margin (u = inf): ``alpha_i * spread > divergence`` with spread = max_t K_tt
(:mod:`~convexlearn.solvers.kernel_svm.smo`) stops with DIVERGED.

No fastmath here: the reference's operations in its order, so the iterates agree to
round-off of the kernel columns.
"""

from __future__ import annotations

from typing import Any

import math

import numpy as np
from numba import njit

from ...compiled import load_without_refresh
from .smo_kernels import (CONVERGED, DIVERGED, MAX_ITER, add_to_gbar, column_slot,
                          identity_order, unshrink_gradient)

__all__ = ["smo_box_loop", "box_step", "coordinate", "pair_score", "solve_pair", "moved"]


@njit(cache=True)
def coordinate(t: Any, y: Any, v: Any, alpha: Any, Cv: Any, diag: Any, tau: float) -> Any:
    """(|projected gradient|, clipped Newton step, its decrease of F) of variable t."""
    grad = -y[t] * v[t]
    a = alpha[t]
    pg = grad
    if a <= 0.0 and grad > 0.0:
        pg = 0.0
    if a >= Cv[t] and pg < 0.0:
        pg = 0.0
    new = a - grad / max(diag[t], tau)
    new = min(max(new, 0.0), Cv[t])
    step = new - a
    gain = -(grad * step + 0.5 * diag[t] * step * step)
    return abs(pg), step, gain


@njit(cache=True)
def pair_score(gi: float, gt: float, qii: float, qit: float, qtt: float, tau: float
               ) -> float:
    """The decrease of F by the unconstrained Newton step on (a_i, a_t): g^T H^-1 g / 2
    with H = [[q_ii, q_it], [q_it, q_tt]] (diagonal floored at tau, det at tau (q_ii +
    q_tt): nearly parallel columns score high, as LIBSVM's floored a_ij)."""
    a = max(qii, tau)
    c = max(qtt, tau)
    det = max(a * c - qit * qit, tau * (a + c))
    return (c * gi * gi - 2.0 * qit * gi * gt + a * gt * gt) / (2.0 * det)


@njit(cache=True)
def _edge(g: float, h: float, lo: float, hi: float) -> float:
    """argmin of h d^2 / 2 + g d over [lo, hi] (h > 0)."""
    return min(max(-g / h, lo), hi)


@njit(cache=True)
def solve_pair(gi: float, gj: float, qii: float, qij: float, qjj: float, lo_i: float,
               hi_i: float, lo_j: float, hi_j: float, tau: float) -> Any:
    """(d_i, d_j, decrease) minimizing g^T d + d^T H d / 2 over the box lo <= d <= hi
    exactly: the Newton step when H is nonsingular and it lies in the box, else the best
    of the four edges and of i's own step (a convex function's minimum over a box it
    misses in the interior lies on the boundary; each edge is a clipped 1-D Newton step).
    Curvatures floored at tau; lower bounds are finite (-a), upper ones may be inf (then
    F may be unbounded below on the pair: the step is finite, at least i's own)."""
    a = max(qii, tau)
    c = max(qjj, tau)
    det = a * c - qij * qij
    if det > tau * (a + c):
        di = (qij * gj - c * gi) / det
        dj = (qij * gi - a * gj) / det
        if lo_i <= di <= hi_i and lo_j <= dj <= hi_j:
            return di, dj, -(gi * di + gj * dj + 0.5 * (qii * di * di + 2.0 * qij * di * dj
                                                        + qjj * dj * dj))
    # i alone first: the pair never gains less than i's own step (where H is singular and
    # the box unbounded above, the hard margin, F may fall without bound along a ray the
    # edges do not contain)
    bi = _edge(gi, a, lo_i, hi_i)
    bj = 0.0
    best = -(gi * bi + 0.5 * qii * bi * bi)
    for e in range(4):
        if e < 2:
            di = lo_i if e == 0 else hi_i
            if not math.isfinite(di):
                continue
            dj = _edge(gj + qij * di, c, lo_j, hi_j)
        else:
            dj = lo_j if e == 2 else hi_j
            if not math.isfinite(dj):
                continue
            di = _edge(gi + qij * dj, a, lo_i, hi_i)
        val = -(gi * di + gj * dj + 0.5 * (qii * di * di + 2.0 * qij * di * dj
                                           + qjj * dj * dj))
        if val > best:
            best = val
            bi = di
            bj = dj
    return bi, bj, best


@njit(cache=True)
def moved(t: Any, step: float, lo: float, hi: float, Cv: Any, alpha: Any) -> None:
    """alpha_t += step, snapped onto the bound the step reached (so "at bound" is exact)."""
    new = alpha[t] + step
    alpha[t] = 0.0 if (step <= lo or new <= 0.0) else (
        Cv[t] if (step >= hi or new >= Cv[t]) else new)


@njit(cache=True)
def _select(act, m, y, v, alpha, Cv, diag, tau):
    """(position in act of the largest gain, first on ties; max |pg|) over act[:m]."""
    i_loc = 0
    best = -math.inf
    violation = 0.0
    for k in range(m):
        pg, _, gain = coordinate(act[k], y, v, alpha, Cv, diag, tau)
        if pg > violation:
            violation = pg
        if gain > best:
            best = gain
            i_loc = k
    return i_loc, violation


@njit(cache=True)
def _kept_active(act, m, y, v, alpha, Cv, violation):
    """Shrinking: compact act[:m] in place (stably) to the variables that may still move
    (not at 0 with gradient > violation, nor at u with gradient < -violation); returns
    their number."""
    kept = 0
    for k in range(m):
        t = act[k]
        grad = -y[t] * v[t]
        if not ((alpha[t] <= 0.0 and grad > violation)
                or (alpha[t] >= Cv[t] and grad < -violation)):
            act[kept] = t
            kept += 1
    return kept


@njit(cache=True)
def smo_box_loop(code: Any, X: Any, K: Any, gamma: float, coef0: float, degree: Any,
                 diag: Any, y: Any, target: Any, Cv: Any, alpha: Any, v: Any, gbar: Any,
                 tol: float, it: Any, max_iter: int, shrinking: Any, tau: Any, hard: Any,
                 divergence: Any, spread: Any, dual: Any, unshrunk_once: Any,
                 cache: Any, slot_of: Any, owner: Any, stamp: Any, partial: Any,
                 counters: Any, XT: Any, bits: Any, scratch: Any, hist_obj: Any,
                 hist_viol: Any, index: Any = None) -> Any:
    """Single-variable SMO iterations from the state given (module docstring) until
    max |pg| <= tol on all variables, ``max_iter`` iterations in total, or (hard margin)
    alpha_i * spread > divergence (``spread``: max_t K_tt, 0 read as 1).

    The arguments and the returned tuple are those of
    :func:`~convexlearn.solvers.kernel_svm.smo_kernels.smo_loop` (so the caller can run
    either): (status, it, violation, dual, spread, n_shrink, unshrunk_once, diverged_at);
    on return every variable is active and v is exact on all of them.
    """
    n = y.shape[0]
    act = identity_order(n)
    m = n
    full = True
    shrink_every = min(n, 1000)
    counter = shrink_every
    n_shrink = 0
    status = MAX_ITER
    violation = math.inf
    diverged_at = -1
    s2 = spread if spread > 0.0 else 1.0
    violation_next = math.inf
    # the next i is chosen in the gradient update of the previous iteration (one pass)
    selected = False
    i_loc = 0
    while it < max_iter:
        if selected:
            violation = violation_next
        else:
            i_loc, violation = _select(act, m, y, v, alpha, Cv, diag, tau)
        selected = False
        unshrink = False
        if violation <= tol:
            if full:
                status = CONVERGED
                break
            unshrink = True                    # optimal on the active set: check all
        elif shrinking:
            counter -= 1
            if counter <= 0:
                counter = shrink_every
                if not unshrunk_once and violation <= 10 * tol:
                    unshrunk_once = True       # LIBSVM: one full re-check near the end
                    unshrink = True
                else:
                    kept = _kept_active(act, m, y, v, alpha, Cv, violation)
                    if 0 < kept < m:
                        m = kept
                        full = False
                        n_shrink += 1
                        continue
        if unshrink:
            m = unshrink_gradient(act, m, n, y, target, Cv, alpha, v, gbar, code, X, K,
                                  gamma, coef0, degree, cache, slot_of, owner, stamp,
                                  partial, bits, scratch, index, counters, XT)
            full = True
            continue
        it += 1
        i = act[i_loc]
        ci = i if index is None else index[i]
        si = column_slot(ci, act, m, full or index is not None, code, X, K, gamma, coef0,
                         degree, cache, slot_of, owner, stamp, partial, counters, XT, bits,
                         scratch)
        Ki = cache[si]
        # second-order choice of j: the largest decrease of a Newton step on (i, j), over
        # the variables that can move (free, or at a bound with the gradient pointing in)
        gi = -y[i] * v[i]
        j = np.int64(-1)     # not the literal -1: numba would compile the callees twice
        best = -math.inf
        for k in range(m):
            t = act[k]
            gt = -y[t] * v[t]
            if t == i or (alpha[t] <= 0.0 and gt > 0.0) or (alpha[t] >= Cv[t] and gt < 0.0):
                continue
            kt = Ki[t] if index is None else Ki[index[t]]
            score = pair_score(gi, gt, diag[i], y[i] * y[t] * kt, diag[t], tau)
            if score > best:
                best = score
                j = t
        lo_i, hi_i = -alpha[i], Cv[i] - alpha[i]
        upper_i = alpha[i] >= Cv[i]
        if j < 0:                              # i alone: its clipped Newton step
            _, di, gain = coordinate(i, y, v, alpha, Cv, diag, tau)
            j, dj, cj, Kj = i, 0.0, ci, Ki
        else:
            cj = j if index is None else index[j]
            sj = column_slot(cj, act, m, full or index is not None, code, X, K, gamma,
                             coef0, degree, cache, slot_of, owner, stamp, partial, counters,
                             XT, bits, scratch)
            Ki = cache[slot_of[ci]]     # (column i cannot be evicted by j: the newest)
            Kj = cache[sj]
            kij = Ki[j] if index is None else Ki[index[j]]
            di, dj, gain = solve_pair(gi, -y[j] * v[j], diag[i], y[i] * y[j] * kij, diag[j],
                                      lo_i, hi_i, -alpha[j], Cv[j] - alpha[j], tau)
        upper_j = alpha[j] >= Cv[j]
        moved(i, di, lo_i, hi_i, Cv, alpha)
        if dj != 0.0:
            moved(j, dj, -alpha[j], Cv[j] - alpha[j], Cv, alpha)
        dual += gain
        coef_i = di * y[i]
        coef_j = dj * y[j]
        # gradient update, and the next choice of i on the updated gradient (the same
        # comparisons in the same order as _select)
        i_loc = 0
        best = -math.inf
        violation_next = 0.0
        for k in range(m):
            t = act[k]
            s = t if index is None else index[t]
            v[t] = v[t] - coef_i * Ki[s] - coef_j * Kj[s]
            pg, _, g_t = coordinate(t, y, v, alpha, Cv, diag, tau)
            if pg > violation_next:
                violation_next = pg
            if g_t > best:
                best = g_t
                i_loc = k
        hist_obj[it - 1] = dual
        hist_viol[it - 1] = violation
        selected = True
        # gbar follows the multipliers at their upper bound (never, for the hard margin)
        if not hard:
            if upper_i != (alpha[i] >= Cv[i]):
                add_to_gbar(ci, (Cv[i] if not upper_i else -Cv[i]) * y[i], n, code, X, K,
                            gamma, coef0, degree, cache, slot_of, partial, gbar, counters,
                            XT, bits, scratch, index)
            if j != i and upper_j != (alpha[j] >= Cv[j]):
                add_to_gbar(cj, (Cv[j] if not upper_j else -Cv[j]) * y[j], n, code, X, K,
                            gamma, coef0, degree, cache, slot_of, partial, gbar, counters,
                            XT, bits, scratch, index)
        if hard and max(alpha[i], alpha[j]) * s2 > divergence:
            status = DIVERGED
            diverged_at = i if alpha[i] >= alpha[j] else j
            break
    if not full:
        unshrink_gradient(act, m, n, y, target, Cv, alpha, v, gbar, code, X, K, gamma, coef0,
                          degree, cache, slot_of, owner, stamp, partial, bits, scratch, index,
                          counters, XT)
    return status, it, violation, dual, spread, n_shrink, unshrunk_once, diverged_at


def box_step(cols: Any, y: np.ndarray, C: np.ndarray, alpha: np.ndarray,
             active: np.ndarray, full: bool, vA: np.ndarray, dA: np.ndarray,
             tau: float) -> tuple[int, float]:
    """One iteration of :func:`smo_box_loop` in numpy, for the reference loop
    :func:`convexlearn.solvers.kernel_svm.smo.smo` without intercept (the same operations
    in the same order, vectorized over the active set ``active``; ``vA``, ``dA``: v and
    K_tt there, ``cols`` the kernel columns). Updates alpha and vA in place; returns (the
    moved variable with the larger multiplier, for the divergence test; the decrease of
    F)."""
    yA, aA, CA = y[active], alpha[active], C[active]
    grad = -yA * vA
    step = np.minimum(np.maximum(aA - grad / np.maximum(dA, tau), 0.0), CA) - aA
    gain = -(grad * step + 0.5 * dA * step * step)
    i_loc = int(np.argmax(gain))
    i = int(active[i_loc])
    KiA = cols.column(i) if full else cols.column(i)[active]
    # the second-order choice of j (pair_score over the variables that can move)
    qit = yA[i_loc] * yA * KiA
    gi, a = grad[i_loc], max(dA[i_loc], tau)
    c = np.maximum(dA, tau)
    det = np.maximum(a * c - qit * qit, tau * (a + c))
    score = (c * gi * gi - 2.0 * qit * gi * grad + a * grad * grad) / (2.0 * det)
    movable = ~(((aA <= 0.0) & (grad > 0.0)) | ((aA >= CA) & (grad < 0.0)))
    movable[i_loc] = False
    lo_i, hi_i = -alpha[i], C[i] - alpha[i]
    if not movable.any():
        di, decrease, j, dj, KjA = step[i_loc], gain[i_loc], i, 0.0, KiA
    else:
        j_loc = int(np.argmax(np.where(movable, score, -np.inf)))
        j = int(active[j_loc])
        KjA = cols.column(j) if full else cols.column(j)[active]
        di, dj, decrease = solve_pair.py_func(gi, grad[j_loc], dA[i_loc], qit[j_loc],
                                              dA[j_loc], lo_i, hi_i, -alpha[j],
                                              C[j] - alpha[j], tau)
    moved.py_func(i, di, lo_i, hi_i, C, alpha)
    if dj != 0.0:
        moved.py_func(j, dj, -alpha[j], C[j] - alpha[j], C, alpha)
    vA -= (di * y[i]) * KiA
    vA -= (dj * y[j]) * KjA
    return (i if alpha[i] >= alpha[j] else j), float(decrease)

load_without_refresh(globals())   # cached kernels load without numba's compiler contexts
