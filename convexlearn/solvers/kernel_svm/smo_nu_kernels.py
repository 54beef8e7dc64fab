"""The compiled inner loop of SMO for the nu-problems (LIBSVM's ``Solver_NU``).

The dual QP of :mod:`~convexlearn.solvers.kernel_svm.qp` with two equality rows, one per
sign (sum_{s_t = +1} a_t = Delta_+, sum_{s_t = -1} a_t = Delta_-): a pair (i, j) may only
move along a_i += s_i t, a_j -= s_j t with s_i = s_j, which keeps both sums. With
v = target - g (as in :mod:`~convexlearn.solvers.kernel_svm.smo_kernels`) the optimality
condition holds per sign c: m_c = max_{I_up, s = c} v <= M_c = min_{I_low, s = c} v, and
the maximal violation is max(m_+ - M_+, m_- - M_-) (LIBSVM's
max(Gmaxp + Gmaxp2, Gmaxn + Gmaxn2)). Selection (LIBSVM's
``Solver_NU::select_working_set``): i_c = argmax of v over I_up with sign c, for both
signs; j = the variable of I_low with the largest second-order gain b^2 / a among both
signs, b = m_{s_j} - v_j > 0, a = K_{i i} + K_{j j} - 2 K_{i j} with i = i_{s_j}; then
i = i_{s_j}. Shrinking (``Solver_NU::be_shrunk``): a variable in I_up only with
v_t < M_{s_t}, or in I_low only with v_t > m_{s_t}.

Kernel columns are the samples' (LIBSVM's SVR_Q): variable t reads sample ``index[t]``,
so nu-SVR's 2n variables on n samples compute and cache n-entry columns, each sample's
once (the column cache of :mod:`~convexlearn.solvers.kernel_svm.smo_kernels`, whose
:func:`column_slot` computes them whole). ``gbar`` (the multipliers at their upper
bound) and unshrinking are as there. The numpy reference
:func:`convexlearn.solvers.kernel_svm.smo_nu.smo_nu` takes the same iterates (a test
holds them together).
"""

from __future__ import annotations

from typing import Any

import math

import numpy as np
from numba import njit

from ...compiled import load_without_refresh
from .smo_kernels import (CONVERGED, MAX_ITER, WHOLE_COLUMN, clip_pair, column_slot,
                          identity_order, inactive_variables, set_status)

__all__ = ["smo_nu_loop"]


@njit(cache=True)
def _select_both(act, m, v, upn, lowp, y):
    """Per sign: (position in act of i_c, m_c, M_c), first index on ties; positions -1
    where I_up has no variable of that sign."""
    ip, iq = -1, -1
    mp, mq = -math.inf, -math.inf
    Mp, Mq = math.inf, math.inf
    for k in range(m):
        t = act[k]
        x = v[t] + upn[t]
        z = v[t] + lowp[t]
        if y[t] > 0:
            if x > mp:
                mp, ip = x, k
            if z < Mp:
                Mp = z
        else:
            if x > mq:
                mq, iq = x, k
            if z < Mq:
                Mq = z
    return ip, mp, Mp, iq, mq, Mq


@njit(cache=True)
def _sample_column(s, every, code, X, K, gamma, coef0, degree, cache, slot_of, owner, stamp,
                   partial, counters, XT, bits, scratch):
    """The cache row of sample s's whole column (computed on a miss)."""
    return cache[column_slot(s, every, every.shape[0], WHOLE_COLUMN, code, X, K, gamma, coef0,
                             degree, cache, slot_of, owner, stamp, partial, counters, XT,
                             bits, scratch)]


@njit(cache=True)
def _rebuild(rest, nrest, index, y, target, Cv, alpha, v, gbar, every, code, X, K, gamma,
             coef0, degree, cache, slot_of, owner, stamp, partial, counters, XT, bits,
             scratch):
    """v_t = target_t - gbar_t - sum_{j free} a_j y_j K_{index_j index_t} for t in
    rest[:nrest] (gbar: sum over the multipliers at C)."""
    for r in range(nrest):
        t = rest[r]
        v[t] = target[t] - gbar[t]
    for j in range(y.shape[0]):
        a = alpha[j]
        if a <= 0.0 or a >= Cv[j]:
            continue
        col = _sample_column(index[j], every, code, X, K, gamma, coef0, degree, cache,
                             slot_of, owner, stamp, partial, counters, XT, bits, scratch)
        coef = a * y[j]
        for r in range(nrest):
            t = rest[r]
            v[t] -= coef * col[index[t]]


@njit(cache=True)
def initial_gradient(code: Any, X: Any, K: Any, gamma: float, coef0: float, degree: int,
                     index: Any, y: Any, target: Any, Cv: Any, alpha: Any, v: Any, gbar: Any,
                     cache: Any, slot_of: Any, owner: Any, stamp: Any, partial: Any,
                     counters: Any, XT: Any, bits: Any, scratch: Any) -> None:
    """v = target - K (y * alpha) and gbar = K (y * C on the variables at C), from the
    sample columns of the nonzero multipliers fetched through the column cache (LIBSVM's
    start: the nu-problems begin with nu n of them, and the iterations move the same
    variables again, so their columns are computed once)."""
    n = y.shape[0]
    every = identity_order(cache.shape[1])
    for t in range(n):
        v[t] = target[t]
        gbar[t] = 0.0
    for j in range(n):
        a = alpha[j]
        if a <= 0.0:
            continue
        col = _sample_column(index[j], every, code, X, K, gamma, coef0, degree, cache,
                             slot_of, owner, stamp, partial, counters, XT, bits, scratch)
        coef = a * y[j]
        for t in range(n):
            v[t] -= coef * col[index[t]]
        if a >= Cv[j]:
            coef = Cv[j] * y[j]
            for t in range(n):
                gbar[t] += coef * col[index[t]]


@njit(cache=True)
def smo_nu_loop(code: Any, X: Any, K: Any, gamma: float, coef0: float, degree: int, diag: Any,
                index: Any, y: Any, target: Any, Cv: Any, alpha: Any, v: Any, gbar: Any,
                tol: float, it: int, max_iter: int, shrinking: bool, tau: float, dual: float,
                unshrunk_once: bool, cache: Any, slot_of: Any, owner: Any, stamp: Any,
                partial: Any, counters: Any, XT: Any, bits: Any, scratch: Any,
                hist_obj: Any, hist_viol: Any) -> Any:
    """Solver_NU's iterations from a feasible state until the maximal violation
    max_c (m_c - M_c) <= tol on all variables, or ``max_iter`` iterations in total.
    ``diag`` is K_tt per variable, ``index`` the sample of each variable; the cache holds
    the samples' columns.

    Returns
    -------
    (status, it, violation, dual, n_shrink, unshrunk_once)
        status CONVERGED or MAX_ITER; on return every variable is active and v is exact.
    """
    n = y.shape[0]
    every = identity_order(cache.shape[1])
    act = identity_order(n)
    rest = np.empty(n, dtype=np.int64)
    m = n
    shrink_every = min(n, 1000)
    counter = shrink_every
    n_shrink = 0
    status = MAX_ITER
    violation = math.inf
    upn = np.empty(n)
    lowp = np.empty(n)
    for t in range(n):
        set_status(t, y, Cv, alpha, upn, lowp)
    selected = False
    ip, mp, Mp, iq, mq, Mq = -1, -math.inf, math.inf, -1, -math.inf, math.inf
    while it < max_iter:
        if not selected:
            ip, mp, Mp, iq, mq, Mq = _select_both(act, m, v, upn, lowp, y)
        selected = False
        violation = max(mp - Mp, mq - Mq)
        unshrink = False
        if violation <= tol:
            if m == n:
                status = CONVERGED
                break
            unshrink = True
        elif shrinking:
            counter -= 1
            if counter <= 0:
                counter = shrink_every
                if not unshrunk_once and violation <= 10 * tol:
                    unshrunk_once = True       # LIBSVM: one full re-check near the end
                    unshrink = True
                else:
                    kept = 0
                    for k in range(m):
                        t = act[k]
                        up = upn[t] == 0.0
                        low = lowp[t] == 0.0
                        hi = mp if y[t] > 0 else mq
                        lo = Mp if y[t] > 0 else Mq
                        if not ((up and not low and v[t] < lo)
                                or (low and not up and v[t] > hi)):
                            act[kept] = t
                            kept += 1
                    if 0 < kept < m:
                        m = kept
                        n_shrink += 1
                        continue
        if unshrink:
            if m < n:
                nrest = inactive_variables(act, m, n, rest)
                _rebuild(rest, nrest, index, y, target, Cv, alpha, v, gbar, every, code, X,
                         K, gamma, coef0, degree, cache, slot_of, owner, stamp, partial,
                         counters, XT, bits, scratch)
                for k in range(n):
                    act[k] = k
                m = n
            continue
        it += 1
        # the columns of both candidates i_+ and i_- (LIBSVM fetches both as well)
        i_p = act[ip] if ip >= 0 else -1
        i_q = act[iq] if iq >= 0 else -1
        best = 0.0
        j = np.int64(-1)     # not the literal -1: numba would compile the callees twice
        a_ij = tau
        # (a sign without a candidate i has m_c = -inf: no gain, its column is not read)
        sp = -1 if i_p < 0 else column_slot(index[i_p], every, every.shape[0], WHOLE_COLUMN, code, X,
                                            K, gamma, coef0, degree, cache, slot_of, owner,
                                            stamp, partial, counters, XT, bits, scratch)
        sq = -1 if i_q < 0 else column_slot(index[i_q], every, every.shape[0], WHOLE_COLUMN, code, X,
                                            K, gamma, coef0, degree, cache, slot_of, owner,
                                            stamp, partial, counters, XT, bits, scratch)
        if sp >= 0:
            sp = slot_of[index[i_p]]      # (i_-'s fetch may have evicted i_+ in a tiny cache)
        d_p = diag[i_p] if i_p >= 0 else 0.0
        d_q = diag[i_q] if i_q >= 0 else 0.0
        for k in range(m):
            t = act[k]
            if y[t] > 0:
                if sp < 0:
                    continue
                gain = max(mp - v[t] - lowp[t], 0.0)
                kt = cache[sp, index[t]]
                curv = ((diag[t] - kt) - kt) + d_p
            else:
                if sq < 0:
                    continue
                gain = max(mq - v[t] - lowp[t], 0.0)
                kt = cache[sq, index[t]]
                curv = ((diag[t] - kt) - kt) + d_q
            curv = max(curv, tau)
            score = gain * gain / curv
            if score > best:
                best = score
                j = t
                a_ij = curv
        if j < 0:            # (no pair decreases F: cannot happen above tol; stop safely)
            status = CONVERGED
            break
        i = i_p if y[j] > 0 else i_q
        m_val = mp if y[j] > 0 else mq
        Kj = _sample_column(index[j], every, code, X, K, gamma, coef0, degree, cache, slot_of,
                            owner, stamp, partial, counters, XT, bits, scratch)
        Ki = _sample_column(index[i], every, code, X, K, gamma, coef0, degree, cache, slot_of,
                            owner, stamp, partial, counters, XT, bits, scratch)
        Kj = cache[slot_of[index[j]]]      # (fetching i cannot evict j: j is the newest)
        b_ij = m_val - v[j]
        upper_i = alpha[i] >= Cv[i]
        upper_j = alpha[j] >= Cv[j]
        step = clip_pair(i, j, b_ij / a_ij, y, Cv, alpha)
        dual += step * b_ij - 0.5 * step * step * a_ij
        set_status(i, y, Cv, alpha, upn, lowp)
        set_status(j, y, Cv, alpha, upn, lowp)
        # gradient update and the next selection in the same pass (as _select_both)
        ip, iq = -1, -1
        mp, mq = -math.inf, -math.inf
        Mp, Mq = math.inf, math.inf
        for k in range(m):
            t = act[k]
            s = index[t]
            vt = v[t] + step * (Kj[s] - Ki[s])
            v[t] = vt
            x = vt + upn[t]
            z = vt + lowp[t]
            if y[t] > 0:
                if x > mp:
                    mp, ip = x, k
                if z < Mp:
                    Mp = z
            else:
                if x > mq:
                    mq, iq = x, k
                if z < Mq:
                    Mq = z
        selected = True
        # gbar follows the multipliers at their upper bound (columns still in the cache)
        for t_c, was in ((i, upper_i), (j, upper_j)):
            if was != (alpha[t_c] >= Cv[t_c]):
                coef = (Cv[t_c] if not was else -Cv[t_c]) * y[t_c]
                col = _sample_column(index[t_c], every, code, X, K, gamma, coef0, degree,
                                     cache, slot_of, owner, stamp, partial, counters, XT,
                                     bits, scratch)
                for t in range(n):
                    gbar[t] += coef * col[index[t]]
        hist_obj[it - 1] = dual
        hist_viol[it - 1] = violation
    if m < n:
        nrest = inactive_variables(act, m, n, rest)
        _rebuild(rest, nrest, index, y, target, Cv, alpha, v, gbar, every, code, X, K, gamma,
                 coef0, degree, cache, slot_of, owner, stamp, partial, counters, XT, bits,
                 scratch)
    return status, it, violation, dual, n_shrink, unshrunk_once

load_without_refresh(globals())   # cached kernels load without numba's compiler contexts
