"""The compiled inner loop of SMO: kernel entries from X, an LRU column cache, shrinking.

:func:`smo_loop` is the loop of :func:`convexlearn.solvers.kernel_svm.smo.smo` (the pure-numpy
reference, which a test holds it against iterate by iterate) written for numba: the same
selection (i = argmax of v over I_up, j by second-order selection over I_low, first index
on ties), the same clipped step and the same shrinking rule, with what LIBSVM adds for
speed (Chang and Lin 2011, section 5):

* kernel entries computed from X in the loop (rbf, linear, poly, sigmoid; ``precomputed``
  reads a given matrix), never an n x n matrix: a column from the transposed data in
  contiguous, vectorized loops, the rbf exponential by a vectorizable exp
  (:func:`exp_nonpositive`, a few ulps from numpy's);
* a column cache of ``capacity`` columns (the caller derives it from a bound in MB), least
  recently used evicted; a column fetched while fewer than 3/4 of the variables are
  active is computed on the active entries only, and dropped when the active set grows
  back;
* ``gbar_t = sum_{j: a_j = C_j} C_j y_j K_jt`` kept up to date, so that unshrinking
  rebuilds the gradient of the shrunk variables from the free multipliers only:
  ``v_t = target_t - gbar_t - sum_{j free} a_j y_j K_jt``.

The loop solves the dual QP of :mod:`~convexlearn.solvers.kernel_svm.qp` with one equality
row: ``y`` are the signs s of Q_ij = s_i s_j K_ij, ``target = -s * p`` carries the linear
term p (the C-SVC's p = -1 gives target = y), ``Cv`` the upper bounds (lower bounds 0).
With an ``index`` map (the sample of each variable: epsilon-SVR's 2n variables on n
samples) the cache holds the samples' whole columns, as LIBSVM's SVR_Q: each sample's
kernel computed once, the bound counted in samples, the 2n-entry gradient updated from
n-entry columns (entry index[t] for variable t); without one (None) numba compiles the
loop with no indirection.

State lives in arrays the caller owns (alpha, v, gbar, the cache), so the loop can be
re-entered with a smaller tolerance (the duality-gap stop of :func:`smo`).
"""

from __future__ import annotations

from typing import Any

import math

import numpy as np
from numpy.typing import ArrayLike
from numba import njit

from ...compiled import load_without_refresh
from ...gram import KERNEL_CODES
from . import smo_step

#: The kernel code of a given Gram matrix (columns read from K, not computed).
PRECOMPUTED = KERNEL_CODES["precomputed"]

__all__ = ["KERNEL_CODES", "PRECOMPUTED", "smo_loop", "CONVERGED", "MAX_ITER", "DIVERGED",
           "column_slot", "lru_slot", "add_to_gbar", "unshrink_gradient", "set_status",
           "status_at",
           "clip_pair",
           "identity_order", "inactive_variables", "WHOLE_COLUMN", "gather_rows",
           "gather_rows_into", "full_column", "gathered_entries", "add_rows", "exp_nonpositive"]
CONVERGED, MAX_ITER, DIVERGED = 0, 1, 2
# column_slot's ``full`` for a whole column: a numpy bool, which numba types as a plain
# boolean; the literal True would compile column_slot and its callees a second time.
WHOLE_COLUMN = np.bool_(True)


# fastmath without reassociation: the loops vectorize (no reduction needs reordering) and
# the Cody-Waite reduction below stays exact.
_FAST = {"nnan", "ninf", "nsz", "contract", "arcp"}

_LN2_HI = 6.93147180369123816490e-01     # ln 2 split in two (Cody-Waite reduction)
_LN2_LO = 1.90821492927058770002e-10
_LOG2E = 1.4426950408889634


@njit(fastmath=_FAST, cache=True)
def exp_nonpositive(x: Any, bits: Any) -> None:
    """x <- exp(x) in place for x <= 0 (rbf exponents), in a form LLVM vectorizes.

    exp(x) = 2^k exp(r), k = round(x / ln 2), |r| <= ln 2 / 2, exp(r) by its Taylor
    polynomial of degree 13 (truncation error < 3e-16 relative); 2^k built in the exponent
    bits. Agrees with ``numpy.exp`` to a few ulps (a test checks 1e-14 relative); the
    scalar libm exp in a numba loop is 5x slower. Arguments below -708 give exp(-708).
    """
    for t in range(x.shape[0]):
        xt = max(x[t], -708.0)
        k = math.floor(xt * _LOG2E + 0.5)
        r = (xt - k * _LN2_HI) - k * _LN2_LO
        p = 1.0 / 6227020800.0
        p = p * r + 1.0 / 479001600.0
        p = p * r + 1.0 / 39916800.0
        p = p * r + 1.0 / 3628800.0
        p = p * r + 1.0 / 362880.0
        p = p * r + 1.0 / 40320.0
        p = p * r + 1.0 / 5040.0
        p = p * r + 1.0 / 720.0
        p = p * r + 1.0 / 120.0
        p = p * r + 1.0 / 24.0
        p = p * r + 1.0 / 6.0
        p = p * r + 0.5
        p = p * r + 1.0
        p = p * r + 1.0
        x[t] = p
        bits[t] = (np.int64(k) + 1023) << 52
    scale = bits.view(np.float64)
    for t in range(x.shape[0]):
        x[t] *= scale[t]


@njit(cache=True)
def _integral(degree):
    """An integer degree 1..64 (raised by products: :func:`_integer_powers`)."""
    return 1.0 <= degree <= 64.0 and math.floor(degree) == degree


@njit(cache=True)
def _integer_powers(row, m, gamma, coef0, degree):
    """row[t] = (gamma row[t] + coef0) ** degree for t < m, an integer ``degree`` >= 1 by
    repeated squaring (as kernels.Kernel and LIBSVM's powi: pow() costs ~14 ns an
    entry, ~25x the products; a poly column at n = 3000 spent most of its time there)."""
    for t in range(m):
        base = gamma * row[t] + coef0
        out = 1.0
        p = degree
        first = True
        while True:
            if p & 1:
                out = base if first else out * base
                first = False
            p >>= 1
            if p == 0:
                break
            base = base * base
        row[t] = out


@njit(fastmath=_FAST, cache=True)
def _full_column(i, code, X, XT, K, gamma, coef0, degree, row, bits):
    """row[:] = K[:, i], all n entries, from the transposed data XT (d x n) so that
    the loops run over contiguous memory and vectorize."""
    n = row.shape[0]
    if code == PRECOMPUTED:
        for t in range(n):
            row[t] = K[i, t]
        return
    for t in range(n):
        row[t] = 0.0
    d = XT.shape[0]
    if code == 2:
        for k in range(d):
            xik = X[i, k]
            xk = XT[k]
            for t in range(n):
                diff = xik - xk[t]
                row[t] += diff * diff
        for t in range(n):
            row[t] *= -gamma
        exp_nonpositive(row, bits)
        return
    for k in range(d):
        xik = X[i, k]
        xk = XT[k]
        for t in range(n):
            row[t] += xik * xk[t]
    if code == 1:
        if _integral(degree):
            _integer_powers(row, n, gamma, coef0, int(degree))
        else:
            for t in range(n):
                row[t] = (gamma * row[t] + coef0) ** degree
    elif code == 3:
        for t in range(n):
            row[t] = math.tanh(gamma * row[t] + coef0)


#: K[:, i] whole into ``row`` (for the other compiled modules: small_kernels).
full_column = _full_column


@njit(fastmath=_FAST, cache=True)
def _gathered(i, idx, m, code, X, K, gamma, coef0, degree, buf, bits):
    """buf[k] = k(x_i, x_idx[k]) for k < m (rows of X gathered; the exp vectorized)."""
    if code == PRECOMPUTED:
        for k in range(m):
            buf[k] = K[i, idx[k]]
        return
    d = X.shape[1]
    xi = X[i]
    for k in range(m):
        xt = X[idx[k]]
        acc = 0.0
        if code == 2:
            for c in range(d):
                diff = xi[c] - xt[c]
                acc += diff * diff
            buf[k] = -gamma * acc
        else:
            for c in range(d):
                acc += xi[c] * xt[c]
            buf[k] = acc
    if code == 2:
        exp_nonpositive(buf[:m], bits)
    elif code == 1:
        if _integral(degree):
            _integer_powers(buf, m, gamma, coef0, int(degree))
        else:
            for k in range(m):
                buf[k] = (gamma * buf[k] + coef0) ** degree
    elif code == 3:
        for k in range(m):
            buf[k] = math.tanh(gamma * buf[k] + coef0)


@njit(cache=True)
def column_slot(i: Any, act: Any, m: Any, full: Any, code: Any, X: Any, K: Any, gamma: Any,
                coef0: Any, degree: Any, cache: Any, slot_of: Any, owner: Any, stamp: Any,
                partial: Any, counters: Any, XT: Any, bits: Any, scratch: Any) -> Any:
    """Slot of column i in ``cache`` (computed on a miss: all entries when ``full``, else
    the active ones act[:m]). ``counters``: clock, hits, misses."""
    s = hit_slot(i, slot_of, stamp, counters)
    if s >= 0:
        return s
    counters[0] += 1                     # (the clock ticks for a miss too)
    s = lru_slot(i, slot_of, owner, stamp, counters)
    # A gathered entry costs more than a contiguous one: all n entries unless the
    # active set is under three quarters of them.
    whole = full or 4 * m >= 3 * cache.shape[1]
    partial[s] = not whole
    row = cache[s]
    if whole:
        _full_column(i, code, X, XT, K, gamma, coef0, degree, row, bits)
    else:
        buf = scratch[1]
        _gathered(i, act, m, code, X, K, gamma, coef0, degree, buf, bits)
        for k in range(m):
            row[act[k]] = buf[k]
    return s


@njit(cache=True)
def _drop_partial(slot_of, owner, stamp, partial):
    for s in range(owner.shape[0]):
        if owner[s] >= 0 and partial[s]:
            slot_of[owner[s]] = -1
            owner[s] = -1
            stamp[s] = -1
            partial[s] = False


@njit(cache=True)
def add_to_gbar(i: Any, coef: Any, n: Any, code: Any, X: Any, K: Any, gamma: Any,
                coef0: Any, degree: Any, cache: Any, slot_of: Any, partial: Any, gbar: Any,
                counters: Any, XT: Any, bits: Any, scratch: Any, index: Any = None) -> Any:
    """gbar += coef * K[:, i] over all n variables (the cached column when it is
    complete); with ``index`` (the sample of each variable) i is a sample and variable t
    reads entry index[t] of its column."""
    counters[3] += 1
    s = slot_of[i]
    if s >= 0 and not partial[s]:
        row = cache[s]
    else:
        row = scratch[0]
        _full_column(i, code, X, XT, K, gamma, coef0, degree, row, bits)
        counters[4] += 1
    if index is None:
        for t in range(n):
            gbar[t] += coef * row[t]
    else:
        for t in range(n):
            gbar[t] += coef * row[index[t]]


# The helpers below are loops rather than np.arange / np.ones / np.flatnonzero: each
# numpy overload is one more compilation on a fresh install (about a second each).
@njit(cache=True)
def identity_order(n: Any) -> Any:
    """The int64 array 0, 1, ..., n - 1 (an active set holding every variable)."""
    order = np.empty(n, dtype=np.int64)
    for t in range(n):
        order[t] = t
    return order


@njit(cache=True)
def inactive_variables(act: Any, m: Any, n: Any, rest: Any) -> Any:
    """rest[:count] = the variables not in act[:m], in index order; returns count."""
    inactive = np.empty(n, dtype=np.bool_)
    for t in range(n):
        inactive[t] = True
    for k in range(m):
        inactive[act[k]] = False
    count = 0
    for t in range(n):
        if inactive[t]:
            rest[count] = t
            count += 1
    return count


@njit(cache=True)
def unshrink_gradient(act: Any, m: Any, n: Any, y: Any, target: Any, Cv: Any, alpha: Any,
                      v: Any, gbar: Any, code: Any, X: Any, K: Any, gamma: Any, coef0: Any,
                      degree: Any, cache: Any, slot_of: Any, owner: Any, stamp: Any,
                      partial: Any, bits: Any, scratch: Any, index: Any = None,
                      counters: Any = None, XT: Any = None) -> Any:
    """Rebuild v on the shrunk variables (v_t = target_t - gbar_t - free terms), reactivate
    every variable in index order, drop the partial columns. Returns n. With ``index``
    (the sample of each variable) the free variables' sample columns come whole through
    the cache (LIBSVM's reconstruct_gradient through SVR_Q)."""
    rest = np.empty(n - m, dtype=np.int64)
    inactive_variables(act, m, n, rest)
    if rest.size:
        for r in range(rest.size):
            t = rest[r]
            v[t] = target[t] - gbar[t]
        for j in range(n):
            a = alpha[j]
            if a <= 0.0 or a >= Cv[j]:
                continue
            coef = a * y[j]
            if index is not None:
                row = cache[column_slot(index[j], act, n, WHOLE_COLUMN, code, X, K, gamma, coef0,
                                        degree, cache, slot_of, owner, stamp, partial,
                                        counters, XT, bits, scratch)]
                for r in range(rest.size):
                    v[rest[r]] -= coef * row[index[rest[r]]]
                continue
            s = slot_of[j]
            if s >= 0 and not partial[s]:
                row = cache[s]
                for r in range(rest.size):
                    v[rest[r]] -= coef * row[rest[r]]
            else:
                buf = scratch[1]
                _gathered(j, rest, rest.size, code, X, K, gamma, coef0, degree, buf, bits)
                for r in range(rest.size):
                    v[rest[r]] -= coef * buf[r]
    for k in range(n):
        act[k] = k
    _drop_partial(slot_of, owner, stamp, partial)
    return n


#: SMO's clipped step on a pair (smo_step.clip_pair's source, compiled; the numpy
#: references call the same source, ``clip_pair.py_func``); the column cache's miss (both
#: loops) and hit (smo_loop's, tested before column_slot's call).
clip_pair = njit(cache=True)(smo_step.clip_pair)
lru_slot, hit_slot = (njit(cache=True)(f) for f in (smo_step.lru_slot, smo_step.hit_slot))


@njit(cache=True)
def gather_rows(data: Any, slots: Any, cols: Any) -> Any:
    """data[slots][:, cols] (rows ``slots`` of the column cache, entries ``cols``), one
    contiguous output row per slot: a third of the time of ``data[np.ix_(slots, cols)]``
    (3000 x 3000 entries of an 8000-wide cache: 0.07 s against 0.19-0.26 s)."""
    out = np.empty((slots.shape[0], cols.shape[0]))
    gather_rows_into(data, slots, cols, out, identity_order(slots.shape[0]))
    return out


@njit(cache=True)
def gather_rows_into(data: Any, slots: Any, cols: Any, out: Any, at: Any) -> None:
    """out[at[k]] = data[slots[k]][cols] for each k (:func:`gather_rows` into rows of a
    given array: no temporary of the gathered size)."""
    for k in range(slots.shape[0]):
        row = data[slots[k]]
        dest = out[at[k]]
        for r in range(cols.shape[0]):
            dest[r] = row[cols[r]]


@njit(fastmath=_FAST, cache=True)
def add_rows(data: Any, slots: Any, coef: Any, out: Any) -> None:
    """out[:, c] += sum_k coef[k, c] data[slots[k]] (cached columns times coefficients,
    read in place: no gathered copy of the rows)."""
    for k in range(slots.shape[0]):
        row = data[slots[k]]
        for c in range(coef.shape[1]):
            w = coef[k, c]
            if w != 0.0:
                dest = out[:, c]
                for t in range(row.shape[0]):
                    dest[t] += w * row[t]


@njit(cache=True)
def status_at(k: Any, t: Any, y: Any, Cv: Any, alpha: Any, upn: Any, lowp: Any) -> Any:
    """upn[k] = 0 if variable t is in I_up else -inf; lowp[k] = 0 if in I_low else +inf."""
    a = alpha[t]
    if y[t] > 0:
        up = a < Cv[t]
        low = a > 0.0
    else:
        up = a > 0.0
        low = a < Cv[t]
    upn[k] = 0.0 if up else -math.inf
    lowp[k] = 0.0 if low else math.inf


@njit(cache=True)
def set_status(t: Any, y: Any, Cv: Any, alpha: Any, upn: Any, lowp: Any) -> Any:
    """upn[t] = 0 if t in I_up else -inf; lowp[t] = 0 if t in I_low else +inf."""
    status_at(t, t, y, Cv, alpha, upn, lowp)


@njit(cache=True)
def _select_i(act, m, v, upn, lowp):
    """(position in act of i = argmax of v over I_up, first on ties; m = that max;
    M = min of v over I_low), over the active set act[:m]."""
    i_loc = 0
    m_val = -math.inf
    M_val = math.inf
    for k in range(m):
        t = act[k]
        x = v[t] + upn[t]
        if x > m_val:
            m_val = x
            i_loc = k
        z = v[t] + lowp[t]
        if z < M_val:
            M_val = z
    return i_loc, m_val, M_val


@njit(cache=True)
def smo_loop(code: Any, X: ArrayLike, K: Any, gamma: float, coef0: float, degree: int, diag: Any,
             y: ArrayLike, target: Any, Cv: Any, alpha: Any, v: Any, gbar: Any, tol: float, it: Any,
             max_iter: int, shrinking: Any, tau: Any, hard: Any, divergence: Any, spread: Any,
             dual: Any, unshrunk_once: Any,
             cache: Any, slot_of: Any, owner: Any, stamp: Any, partial: Any, counters: Any,
             XT: Any, bits: Any, scratch: Any, hist_obj: Any,
             hist_viol: Any, index: Any = None) -> Any:
    """SMO iterations from the state given (the whole active set) until the maximal
    violation m - M <= tol on all variables, ``max_iter`` iterations in total, or (hard
    margin) alpha_i * spread > divergence.

    ``index`` (None: variable t is sample t) is the sample of each variable (epsilon-SVR's
    2n variables on n samples, LIBSVM's SVR_Q): the cache then holds the samples' whole
    columns (each sample's kernel computed once, the bound counted in samples) and
    variable t reads entry index[t]; ``diag`` is K_tt per variable. None compiles the loop
    without the indirection (numba prunes the branches on it).

    Returns
    -------
    (status, it, violation, dual, spread, n_shrink, unshrunk_once, diverged_at)
        status: CONVERGED, MAX_ITER or DIVERGED. On return every variable is active and
        v is exact on all of them. ``hist_obj[t]``, ``hist_viol[t]``: the dual objective
        after iteration t + 1 and the violation it started from.
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
    upn = np.empty(n)
    lowp = np.empty(n)
    for t in range(n):
        set_status(t, y, Cv, alpha, upn, lowp)
    # the selection of i is made in the gradient update of the previous iteration (one
    # pass over the active set instead of two); ``selected`` says it is still current
    selected = False
    i_loc = 0
    m_val = -math.inf
    M_val = math.inf
    while it < max_iter:
        # ------------------------------------------------------------ selection of i
        # (branch-free on the sets: upn = 0 on I_up, -inf off it; lowp = 0 on I_low, +inf)
        if not selected:
            i_loc, m_val, M_val = _select_i(act, m, v, upn, lowp)
        selected = False
        violation = m_val - M_val
        if violation <= tol:
            if not full:
                m = unshrink_gradient(act, m, n, y, target, Cv, alpha, v, gbar, code, X, K,
                                      gamma, coef0, degree, cache, slot_of, owner, stamp,
                                      partial, bits, scratch, index, counters, XT)
                full = True
                continue
            status = CONVERGED
            break
        if shrinking:
            counter -= 1
            if counter <= 0:
                counter = shrink_every
                if not unshrunk_once and violation <= 10 * tol:
                    unshrunk_once = True       # LIBSVM: one full re-check near the end
                    m = unshrink_gradient(act, m, n, y, target, Cv, alpha, v, gbar, code, X,
                                          K, gamma, coef0, degree, cache, slot_of, owner,
                                          stamp, partial, bits, scratch, index, counters,
                                          XT)
                    full = True
                    continue
                # stable compaction in place: with nothing kept act is untouched, with
                # everything kept it is rewritten as it was
                kept = 0
                for k in range(m):
                    t = act[k]
                    up = upn[t] == 0.0
                    low = lowp[t] == 0.0
                    if not ((up and not low and v[t] < M_val)
                            or (low and not up and v[t] > m_val)):
                        act[kept] = t
                        kept += 1
                if 0 < kept < m:
                    m = kept
                    full = False
                    n_shrink += 1
                    continue
        it += 1                          # ------ second-order selection of j (WSS 2)
        i = act[i_loc]
        ci = i if index is None else index[i]     # (index map: the sample's, as SVR_Q)
        si = hit_slot(ci, slot_of, stamp, counters)          # (-1: a miss)
        si = si if si >= 0 else column_slot(ci, act, m, full or index is not None, code,
                                             X, K, gamma, coef0, degree, cache, slot_of, owner,
                                             stamp, partial, counters, XT, bits, scratch)
        Ki = cache[si]
        di = diag[i]
        best = 0.0
        j = np.int64(-1)     # not the literal -1: numba would compile every callee twice
        a_ij = tau
        for k in range(m):
            t = act[k]
            # gain <= 0 off I_low (lowp = inf) and where v_t >= m: its score 0 never wins,
            # so the column entry and the division are skipped there (about half of the
            # active set; the same j as scoring every t)
            gain = m_val - v[t] - lowp[t]
            if hard:
                kt = Ki[t] if index is None else Ki[index[t]]
                spread = max(spread, di + diag[t] - 2.0 * kt)
            if gain > 0.0:
                kt = Ki[t] if index is None else Ki[index[t]]
                curv = max(di + diag[t] - 2.0 * kt, tau)
                score = gain * gain / curv
                if score > best:
                    best = score
                    j = t
                    a_ij = curv
        cj = j if index is None else index[j]
        sj = hit_slot(cj, slot_of, stamp, counters)          # (-1: a miss)
        sj = sj if sj >= 0 else column_slot(cj, act, m, full or index is not None, code,
                                             X, K, gamma, coef0, degree, cache, slot_of, owner,
                                             stamp, partial, counters, XT, bits, scratch)
        Ki = cache[slot_of[ci]]     # (column i cannot be evicted by j: it is the newest)
        Kj = cache[sj]
        b_ij = m_val - v[j]
        upper_i = alpha[i] >= Cv[i]
        upper_j = alpha[j] >= Cv[j]
        step = clip_pair(i, j, b_ij / a_ij, y, Cv, alpha)
        dual += step * b_ij - 0.5 * step * step * a_ij
        set_status(i, y, Cv, alpha, upn, lowp)
        set_status(j, y, Cv, alpha, upn, lowp)
        # gradient update, and the next selection of i on the updated gradient (the
        # same comparisons in the same order as _select_i: the same i)
        i_loc = 0
        m_val = -math.inf
        M_val = math.inf
        for k in range(m):
            t = act[k]
            s = t if index is None else index[t]
            vt = v[t] + step * (Kj[s] - Ki[s])
            v[t] = vt
            x = vt + upn[t]
            if x > m_val:
                m_val = x
                i_loc = k
            z = vt + lowp[t]
            if z < M_val:
                M_val = z
        selected = True
        # gbar follows the multipliers at their upper bound (never, for the hard margin)
        if not hard:
            if upper_i != (alpha[i] >= Cv[i]):
                add_to_gbar(ci, (Cv[i] if not upper_i else -Cv[i]) * y[i], n, code, X, K,
                             gamma, coef0, degree, cache, slot_of, partial, gbar, counters, XT, bits,
                             scratch, index)
            if upper_j != (alpha[j] >= Cv[j]):
                add_to_gbar(cj, (Cv[j] if not upper_j else -Cv[j]) * y[j], n, code, X, K,
                             gamma, coef0, degree, cache, slot_of, partial, gbar, counters, XT, bits,
                             scratch, index)
        hist_obj[it - 1] = dual
        hist_viol[it - 1] = violation
        if hard:
            s2 = spread if spread > 0.0 else 1.0
            if alpha[i] * s2 > divergence:
                status = DIVERGED
                diverged_at = i
                break
    if not full:
        unshrink_gradient(act, m, n, y, target, Cv, alpha, v, gbar, code, X, K, gamma, coef0,
                          degree, cache, slot_of, owner, stamp, partial, bits, scratch, index,
                          counters, XT)
    return status, it, violation, dual, spread, n_shrink, unshrunk_once, diverged_at


gathered_entries = _gathered      # buf[k] = K[idx[k], i], k < m (smo_compact_kernels)
load_without_refresh(globals())   # cached kernels load without numba's compiler contexts
