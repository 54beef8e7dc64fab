"""One compiled call for a small C-SVC: SMO, the active-set polish, the certificate's product.

:func:`small_solve` is what :mod:`~convexlearn.solvers.kernel_svm.small_certified` runs
for a C-SVC with intercept whose whole Gram matrix fits in SMO's column cache (a pair of a
one-vs-one fit, a problem of a few hundred samples). At those sizes an SMO run is
~100 .. 1000 iterations (~0.1 ms compiled) and the polish one |F| x |F| solve, while the
Python around them (the column cache's set-up, the polish's rounds in numpy and LAPACK
calls, the report's products) cost ~1 ms per problem; here the whole of it is one call:

1. SMO: :func:`~convexlearn.solvers.kernel_svm.smo_kernels.smo_loop` itself (the same
   iterates as the compiled loop of :func:`~convexlearn.solvers.kernel_svm.smo.smo_qp`),
   with its column cache sized to hold all n columns; a Gram matrix already in memory
   (shared by a multiclass fit, precomputed) IS the cache, every column present (row i of
   the symmetric K is column i): nothing is copied.
2. The polish (:func:`_polish`): the active-set method of
   :func:`~convexlearn.solvers.kernel_svm.polish.polish_expansion` in its plain form -
   each round solves the bordered system [K_FF 1; 1^T 0] [d; b] = [y_F - g_F; -1^T beta]
   for the step d from the current point by the Cholesky factor U^T U of K_FF and the Schur
   complement of the border, steps to the first bound when the solution leaves the box,
   else joins the worst margin violators (at most ``max_join`` a round). A block that is
   not numerically positive definite (pivot^2 <= k eps max K_ii), a free set above
   ``max_free``, or rounds run out: the call reports it, and the caller runs the numpy
   polish (LU, least squares, null-space rays) from SMO's point instead.
3. The certificate's product (:func:`certificate_products`): f - b = K beta recomputed
   from the data (the support's columns computed afresh from X with the loop's kernel,
   or read from the matrix given), not from the cache or the polish's running g, and the
   report's per-sample rows on it (:func:`~convexlearn.certify.kkt_kernels.kkt_pass`,
   the report's own compiled pass); the rest of the report (objectives, gap, verdict) is
   :func:`~convexlearn.certify.kkt.kkt_report`'s.

Nothing here decides optimality: the caller's certificate does.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np
from numba import njit

from ...compiled import load_without_refresh
from ...certify.kkt_kernels import kkt_pass
from .smo_kernels import PRECOMPUTED, WHOLE_COLUMN, column_slot, full_column, smo_loop

__all__ = ["small_solve", "certificate_products", "OK", "NO_FREE", "POLISH_FAILED"]

#: Outcomes of :func:`small_solve`: polished with free multipliers; polished, none free
#: (b from the bounded ones, by the caller); the polish gave up.
OK, NO_FREE, POLISH_FAILED = 0, 1, 3
_EPS = 2.220446049250313e-16


@njit(cache=True)
def _column(j, n, code, X, K, gamma, coef0, degree, cache, slot_of, owner, stamp, partial,
            counters, XT, bits, scratch, act):
    """Column j of K from the cache (computed whole into a free slot when missing); a
    Gram matrix given (code PRECOMPUTED, the cache itself) is read directly: row j, the
    slot column_slot would find, without its call (~20 arrays passed: a digits pair's
    polish spent ~0.2 us a column in it, more than in the column's use)."""
    if code == PRECOMPUTED:
        return K[j]
    return cache[column_slot(j, act, n, WHOLE_COLUMN, code, X, K, gamma, coef0, degree,
                             cache, slot_of, owner, stamp, partial, counters, XT, bits,
                             scratch)]


# fastmath with reassociation, for the Cholesky's dot products only: their partial sums
# then vectorize (a plain loop is ~1 FMA a cycle). A dot product's rounding error is
# bounded by the same gamma_m sum |a_i b_i| in any order; the order is fixed by the
# compiled code, so a given build gives the same bits every call. The polish's answer is
# certified afterwards from the data (the report), whatever the factor's last bits.
_DOT_FAST = {"reassoc", "contract"}


@njit(fastmath=_DOT_FAST, cache=True)
def _dot_prefix(a, b, m):
    """sum_{i < m} a_i b_i (vectorized partial sums: _DOT_FAST)."""
    s = 0.0
    for i in range(m):
        s += a[i] * b[i]
    return s


@njit(cache=True)
def _cholesky_upper(A, k):
    """In place: U with U^T U = A[:k, :k] in A's upper triangle; False when a pivot is at
    most k eps max_i A_ii (not numerically positive definite). Row-oriented Cholesky-Crout
    on the lower factor L = U^T (row j of L from the rows above it: each entry one dot
    product of two contiguous row prefixes, vectorized, :func:`_dot_prefix`), then
    written transposed into A: k = 67 (a digits one-vs-one pair's free set) 37 -> 13 us,
    k = 150 376 -> 91 us, k = 300 2.8 -> 0.56 ms against the right-looking loop it
    replaces (whose row updates did not vectorize)."""
    top = 0.0
    for i in range(k):
        top = max(top, A[i, i])
    floor = k * _EPS * top
    L = np.empty((k, k))
    for j in range(k):
        Lj = L[j]
        pivot = A[j, j] - _dot_prefix(Lj, Lj, j)
        if not pivot > floor:
            return False
        d = math.sqrt(pivot)
        Lj[j] = d
        for c in range(j + 1, k):
            Lc = L[c]
            Lc[j] = (A[j, c] - _dot_prefix(Lc, Lj, j)) / d     # A[j, c] = A[c, j]
    for j in range(k):
        for c in range(j, k):
            A[j, c] = L[c, j]
    return True


@njit(cache=True)
def _upper_solve(U, k, x):
    """x <- (U^T U)^{-1} x in place (U^T z = x by rows of U, then U x = z)."""
    for i in range(k):
        x[i] /= U[i, i]
        xi = x[i]
        for c in range(i + 1, k):
            x[c] -= U[i, c] * xi
    for i in range(k - 1, -1, -1):
        s = x[i]
        for c in range(i + 1, k):
            s -= U[i, c] * x[c]
        x[i] = s / U[i, i]


@njit(cache=True)
def _add_column(g, coef, col, n):
    for t in range(n):
        g[t] += coef * col[t]


@njit(cache=True)
def _polish(code, X, K, gamma, coef0, degree, y, Cv, alpha, g, cache, slot_of, owner, stamp,
            partial, counters, XT, bits, scratch, threshold, margin_tol, max_rounds,
            max_join, max_free):
    """The active-set polish of the module docstring, from SMO's ``alpha`` with g = K (y
    alpha); alpha, g updated in place. Returns (outcome, b, rounds)."""
    n = y.shape[0]
    act = np.empty(1, dtype=np.int64)           # (unused: whole columns)
    scale = 0.0
    for t in range(n):
        scale = max(scale, Cv[t])
    cut = threshold * scale
    beta = np.empty(n)
    free = np.zeros(n, dtype=np.bool_)
    for t in range(n):
        a = alpha[t]
        s = 0.0
        if a > cut:
            s = Cv[t] if a >= Cv[t] - cut else a
        beta[t] = y[t] * s
        if s != a:               # snapped: g follows (SMO's own ends snap exactly)
            _add_column(g, y[t] * (s - a), _column(t, n, code, X, K, gamma, coef0, degree,
                                                   cache, slot_of, owner, stamp, partial,
                                                   counters, XT, bits, scratch, act), n)
        free[t] = 0.0 < s < Cv[t]
    F = np.empty(n, dtype=np.int64)
    A = np.empty((max_free, max_free))
    p = np.empty(max_free)
    q = np.empty(max_free)
    wrong = np.empty(n)
    b = 0.0
    for rounds in range(1, max_rounds + 1):
        k = 0
        for t in range(n):
            if free[t]:
                F[k] = t
                k += 1
        if k > max_free:
            return POLISH_FAILED, 0.0, rounds
        if k == 0:
            total = 0.0
            for t in range(n):
                total += beta[t]
            if abs(total) > 1e-12 * n * scale:
                return POLISH_FAILED, 0.0, rounds
            for t in range(n):
                alpha[t] = y[t] * beta[t]
            return NO_FREE, 0.0, rounds
        # [K_FF 1; 1^T 0] [d; b] = [y_F - g_F; -1^T beta] for the step d
        for a in range(k):
            col = _column(F[a], n, code, X, K, gamma, coef0, degree, cache, slot_of, owner,
                          stamp, partial, counters, XT, bits, scratch, act)
            for c in range(a, k):
                A[a, c] = col[F[c]]
            p[a] = y[F[a]] - g[F[a]]
            q[a] = 1.0
        if not _cholesky_upper(A, k):
            return POLISH_FAILED, 0.0, rounds
        _upper_solve(A, k, p)
        _upper_solve(A, k, q)
        S, pq, total = 0.0, 0.0, 0.0
        for a in range(k):
            S += q[a]
            pq += p[a]
        for t in range(n):
            total += beta[t]
        if not S > 0.0:
            return POLISH_FAILED, 0.0, rounds
        b = (pq + total) / S
        for a in range(k):
            p[a] -= q[a] * b                      # the step d
        # the longest step in the box (a = y beta moves by y d)
        step = 1.0
        for a in range(k):
            t = F[a]
            at, dt = y[t] * beta[t], y[t] * p[a]
            if dt < 0.0:
                room = at / -dt
            elif dt > 0.0:
                room = (Cv[t] - at) / dt
            else:
                continue
            step = min(step, max(room, 0.0))
        if step < 1.0:
            # to the first bound; the multipliers there are snapped onto it and leave F
            for a in range(k):
                t = F[a]
                at, dt = y[t] * beta[t], y[t] * p[a]
                room = math.inf
                if dt < 0.0:
                    room = max(at / -dt, 0.0)
                elif dt > 0.0:
                    room = max((Cv[t] - at) / dt, 0.0)
                new = beta[t] + step * p[a]
                if room <= step + 1e-15:
                    new = y[t] * (Cv[t] if dt > 0.0 else 0.0)
                    free[t] = False
                delta = new - beta[t]
                beta[t] = new
                if delta != 0.0:
                    _add_column(g, delta, _column(t, n, code, X, K, gamma, coef0, degree,
                                                  cache, slot_of, owner, stamp, partial,
                                                  counters, XT, bits, scratch, act), n)
            continue
        for a in range(k):
            t = F[a]
            beta[t] += p[a]
            _add_column(g, p[a], _column(t, n, code, X, K, gamma, coef0, degree, cache,
                                         slot_of, owner, stamp, partial, counters, XT, bits,
                                         scratch, act), n)
        # samples whose margin contradicts their set join F (the worst max_join)
        joins = 0
        for t in range(n):
            w = 0.0
            if not free[t] and Cv[t] > 0.0:
                err = y[t] * (g[t] + b - y[t])          # m_t - 1
                a = y[t] * beta[t]
                if a <= 0.0:
                    w = max(-err, 0.0)
                elif a >= Cv[t]:
                    w = max(err, 0.0)
            wrong[t] = w
            if w > margin_tol:
                joins += 1
        if joins == 0:
            for t in range(n):
                alpha[t] = y[t] * beta[t]
            return OK, b, rounds
        # (ties at the cut: the first ones in index order)
        cut_w = np.sort(wrong)[n - max_join] if joins > max_join else margin_tol
        added = 0
        for t in range(n):
            if wrong[t] > margin_tol and wrong[t] >= cut_w and added < max_join:
                free[t] = True
                added += 1
    return POLISH_FAILED, 0.0, max_rounds


@njit(cache=True)
def certificate_products(code: int, X: np.ndarray, XT: np.ndarray, K: np.ndarray,
                         gamma: float, coef0: float, degree: float, beta: np.ndarray,
                         bits: Any, row: np.ndarray) -> np.ndarray:
    """K beta from the data: each support column computed afresh (kernel code 0..3, from
    X and its transpose XT) or read from K (code PRECOMPUTED), summed in index order."""
    n = beta.shape[0]
    out = np.zeros(n)
    for j in range(n):
        c = beta[j]
        if c == 0.0:
            continue
        if code == PRECOMPUTED:
            col = K[j]
        else:
            full_column(j, code, X, XT, K, gamma, coef0, degree, row, bits)
            col = row
        for t in range(n):
            out[t] += c * col[t]
    return out


@njit(cache=True)
def small_solve(code: Any, X: Any, XT: Any, K: Any, gamma: float, coef0: float, degree: float,
                diag: Any, y: Any, Cv: Any, tol: float, max_iter: int, shrinking: bool,
                tau: float, threshold: float, margin_tol: float, max_rounds: int,
                spent_rounds: int, max_join: int, max_free: int, kkt_tol: float) -> tuple:
    """SMO to ``tol`` from alpha = 0 (at most ``max_iter`` iterations), the polish
    (``max_rounds`` rounds, ``spent_rounds`` after an SMO run that spent its iterations:
    the active set is then far, as in the general path), and the certificate's K beta
    (module docstring) for the C-SVC with intercept: target y, upper bounds ``Cv``
    (finite).

    Returns
    -------
    (outcome, spent, alpha, b, g, Kbeta, n_iter, violation, rounds, smo_alpha, smo_g, rows)
        ``outcome`` OK / NO_FREE: alpha, b (0 for NO_FREE: the caller's midpoint rule) and
        g = K (y alpha) the polish's; ``Kbeta`` the certificate's product at that alpha;
        ``rows`` (OK only, else of zero length) the KKT report's per-sample pass at
        ``kkt_tol`` on that answer (:func:`_rows`).
        POLISH_FAILED: ``Kbeta`` empty. ``spent``: SMO ended at ``max_iter``.
        ``smo_alpha`` and ``smo_g`` are SMO's point (for the numpy polish or SMO's next
        run).
    """
    n = y.shape[0]
    if code == PRECOMPUTED:
        # K itself is the cache: every column present, row i = column i
        cache = K
        slot_of = np.empty(n, dtype=np.int64)
        for t in range(n):
            slot_of[t] = t
        owner = slot_of.copy()
        stamp = np.zeros(n, dtype=np.int64)
    else:
        cache = np.empty((n, n))
        slot_of = np.full(n, -1, dtype=np.int64)
        owner = np.full(n, -1, dtype=np.int64)
        stamp = np.full(n, -1, dtype=np.int64)
    partial = np.zeros(n, dtype=np.bool_)
    counters = np.zeros(5, dtype=np.int64)
    bits = np.empty(n, dtype=np.int64)
    scratch = np.empty((2, n))
    alpha = np.zeros(n)
    v = y.copy()
    gbar = np.zeros(n)
    hist_obj = np.empty(max_iter)
    hist_viol = np.empty(max_iter)
    status, it, violation, dual, spread, shrunk, once, div_at = smo_loop(
        code, X, K, gamma, coef0, degree, diag, y, y, Cv, alpha, v, gbar, tol, 0, max_iter,
        shrinking, tau, False, 1e12, 0.0, 0.0, False, cache, slot_of, owner, stamp, partial,
        counters, XT, bits, scratch, hist_obj, hist_viol, None)
    g = y - v
    smo_alpha = alpha.copy()
    smo_g = g.copy()
    spent = status != 0
    outcome, b, rounds = _polish(code, X, K, gamma, coef0, degree, y, Cv, alpha, g, cache,
                                 slot_of, owner, stamp, partial, counters, XT, bits, scratch,
                                 threshold, margin_tol,
                                 spent_rounds if spent else max_rounds, max_join,
                                 min(max_free, n))
    s_a = 0.0
    for t in range(n):
        s_a = max(s_a, Cv[t])
    if outcome == POLISH_FAILED:
        empty = np.empty(0)
        return (outcome, spent, alpha, 0.0, g, empty, it, violation, rounds, smo_alpha,
                smo_g, _rows(y[:0], Cv[:0], alpha[:0], empty, 0.0, g[:0], 1.0, kkt_tol))
    beta = np.empty(n)
    for t in range(n):
        beta[t] = y[t] * alpha[t]
    Kbeta = certificate_products(code, X, XT, K, gamma, coef0, degree, beta, bits,
                                 scratch[0])
    if outcome != OK:               # (b from the caller's midpoint rule: its own pass)
        return (outcome, spent, alpha, b, g, Kbeta, it, violation, rounds, smo_alpha, smo_g,
                _rows(y[:0], Cv[:0], alpha[:0], Kbeta[:0], 0.0, g[:0], 1.0, kkt_tol))
    return (outcome, spent, alpha, b, g, Kbeta, it, violation, rounds, smo_alpha, smo_g,
            _rows(y, Cv, alpha, Kbeta, b, g, s_a, kkt_tol))


@njit(cache=True)
def _rows(y, Cv, alpha, Kbeta, b, g, s_a, tol):
    """The KKT report's per-sample pass (:func:`~convexlearn.certify.kkt_kernels.kkt_pass`)
    on the answer: f = K beta + b from the certificate's product, the solution's slacks
    xi = max(0, 1 - y (g + b)) (c_svc_solution's, from the polish's g), the same
    operations as the report's own call on them (so the same bits)."""
    n = y.shape[0]
    f = np.empty(n)
    xi = np.empty(n)
    for t in range(n):
        f[t] = Kbeta[t] + b
        xi[t] = max(0.0, 1.0 - y[t] * (g[t] + b))
    return kkt_pass(y, Cv, alpha, f, xi, True, False, s_a, tol)

load_without_refresh(globals())   # cached kernels load without numba's compiler contexts
