"""SMO's compiled loop on a contiguous active set (LIBSVM's layout under shrinking).

:func:`compact_loop` takes the iterates of
:func:`~convexlearn.solvers.kernel_svm.smo_kernels.smo_loop` without an index map (the
same selection, step, shrinking rule and ties: first variable on ties), with the active
variables kept at the front, in index order, of position-ordered arrays: the gradient
``v``, the set masks and ``diag`` of position k belong to variable ``act[k]``, and a
cached column of a compacted run holds K[act[k], i] at entry k. The selections and the
gradient update then read m contiguous doubles of each array, and run in vectorized or
independent chains (the j scores, the extremes of v; then the first position reaching
the extreme), instead of one scan gathering m entries spread over n.

Shrinking marks variables off (masked out of both selections; their v still follows
each step exactly); the layout is compacted when at least 1 / ``COMPACT_AT`` of its
positions are off, since each compaction costs every cached column a pass when next
used. Columns laid out for an older layout are brought to the current one then (each
compaction records where each kept position was; the records of the last ``RING``
compactions are kept, a column older than that is recomputed). A whole column (computed
before any compaction) is gathered in place the first time it is used on a compacted
layout. Unshrinking scatters every compacted column back to variable order and computes
its other entries (so that the cache the polish reads after SMO is whole:
:class:`~convexlearn.solvers.kernel_svm.certified_smo.SMOColumns`; from the inactive
variables' rows of X gathered once into a contiguous block), then rebuilds the
gradient with :func:`~convexlearn.solvers.kernel_svm.smo_kernels.unshrink_gradient`.
A compacted column is marked ``partial`` in the cache arrays, so that ``gbar``'s
updates compute their whole columns as before.

A column computed on a compacted layout has its m active entries only, computed from
the active variables' data (X^T's columns act[:m], gathered at each compaction:
:func:`_active_data`), not n entries then compacted.

Measured (rbf, make_classification(8000, 20) standardized, C = 100, 70391 iterations,
mean active set ~3700 of 8000): SMO 2.40-2.52 s of CPU with smo_loop, 1.79-1.87 s here.
"""

from __future__ import annotations

from typing import Any

import math

import numpy as np
from numba import njit

from ...compiled import load_without_refresh
from .smo_kernels import (CONVERGED, DIVERGED, MAX_ITER, PRECOMPUTED, add_to_gbar,
                          clip_pair, full_column, gathered_entries, identity_order,
                          inactive_variables, lru_slot, status_at, unshrink_gradient)

__all__ = ["compact_loop", "RING"]

# fastmath for the reductions' vectorization: no NaN, no signed zeros (the scores'
# maximum then needs no order); not "ninf" (the masks are infinite), not "contract"
# (the reference's rounding)
_MAX = {"nnan", "nsz"}

#: The layout is compacted when at least 1 / COMPACT_AT of the positions are marked off
#: (bringing each cached column to a new layout costs a pass over it; a marked-off
#: position only an entry of each pass of the iterations).
COMPACT_AT = 4

#: Columns are computed whole (then compacted) unless fewer than 1 / WHOLE_AT of their
#: entries are needed: an entry gathered from a row of X is a chain of d dependent
#: multiply-adds, ~5x the cost of one of a whole column's vectorized loops (rbf, d = 20:
#: ~30 ns against ~5.4 ns).
WHOLE_AT = 4

#: Positions of a block of :func:`_largest` (the first block reaching the largest score
#: is kept: the first position of it is searched there only).
BLOCK = 256

#: Active sets kept for bringing an older column to the current one (a column unused for
#: this many shrinkings, ~RING * 1000 iterations, is recomputed when next used).
RING = 16


@njit(cache=True)
def _to_current(row, e, epoch, ring, ring_m, ring_first):
    """Move the entries of a column laid out for the active set of shrinking e to the
    positions of the current one (shrinking ``epoch``): for each shrinking k in between,
    row[p] = row[ring[k % RING][p]] (the position before it of the variable at p) from
    its first moved position on (in place: ring[.][p] >= p)."""
    for k in range(e + 1, epoch + 1):
        r = k % RING
        src = ring[r]
        for p in range(ring_first[r], ring_m[r]):
            row[p] = row[src[p]]


@njit(cache=True)
def _active_buffer(XT, code):
    """Room for the active variables' data (d x n doubles; empty for a given Gram matrix,
    whose columns are read, not computed)."""
    if XT is None:                 # (numba prunes the branch not taken for the type)
        return np.empty(0)
    if code == PRECOMPUTED:
        return np.empty(0)
    return np.empty(XT.shape[0] * XT.shape[1])


@njit(cache=True)
def _active_data(XT, act, m, xa):
    """xa[:d m] = XT[:, act[:m]] (d x m, contiguous): a column's m active entries are then
    computed in contiguous, vectorized loops. Rebuilt at each compaction of the layout
    (d m copies; a whole column computed, then compacted, cost n entries for m)."""
    if XT is None:                 # (numba prunes the branch not taken for the type)
        return
    if xa.size == 0:
        return
    d = XT.shape[0]
    for k in range(d):
        src = XT[k]
        base = k * m
        for p in range(m):
            xa[base + p] = src[act[p]]


@njit(cache=True)
def _compact_slot(i, act, m, shrunk, epoch, code, X, K, gamma, coef0, degree, cache,
                  slot_of, owner, stamp, partial, epoch_of, ring, ring_m, ring_first, counters,
                  XT, bits, xa):
    """Slot of column i laid out for the current active set: variable order when not
    shrunk (``shrunk`` False: act is the identity), else entry k = K[act[k], i], k < m.
    ``xa``: the active variables' data (:func:`_active_data`; empty for a given Gram
    matrix)."""
    counters[0] += 1
    s = slot_of[i]
    if s >= 0:
        if not shrunk or (partial[s] and epoch_of[s] == epoch):
            stamp[s] = counters[0]
            counters[1] += 1
            return s
        row = cache[s]
        if not partial[s]:                       # whole: gathered in place (act[k] >= k)
            for k in range(m):
                row[k] = row[act[k]]
        elif epoch - epoch_of[s] < RING:
            _to_current(row, epoch_of[s], epoch, ring, ring_m, ring_first)
        else:                                    # too old to be brought up: recomputed
            slot_of[i] = -1
            owner[s] = -1
            stamp[s] = -1
            s = -1
        if s >= 0:
            partial[s] = True
            epoch_of[s] = epoch
            stamp[s] = counters[0]
            counters[1] += 1
            return s
    s = lru_slot(i, slot_of, owner, stamp, counters)
    row = cache[s]
    n = cache.shape[1]
    if shrunk and xa.size:
        # the m active entries only, contiguous, from the active variables' data (the same
        # operations as on the whole data: the same values)
        d = xa.size // n
        full_column(i, code, X, xa[:d * m].reshape((d, m)), K, gamma, coef0, degree,
                    row[:m], bits)
    elif not shrunk or WHOLE_AT * m >= n:
        # (a gathered entry costs more than a contiguous one: whole, then compacted)
        full_column(i, code, X, XT, K, gamma, coef0, degree, row, bits)
        if shrunk:
            for k in range(m):
                row[k] = row[act[k]]
    else:
        gathered_entries(i, act, m, code, X, K, gamma, coef0, degree, row, bits)
    partial[s] = shrunk
    epoch_of[s] = epoch if shrunk else -1
    return s


@njit(cache=True)
def _rest_data(XT, rest, count):
    """XT[:, rest[:count]] (d x count, contiguous): the columns' entries on the variables
    off the active set computed in contiguous, vectorized loops (:func:`_expand`)."""
    d = XT.shape[0]
    out = np.empty((d, count))
    for k in range(d):
        src = XT[k]
        dst = out[k]
        for r in range(count):
            dst[r] = src[rest[r]]
    return out


@njit(cache=True)
def _expand(act, m, epoch, code, X, K, gamma, coef0, degree, cache, slot_of, owner, stamp,
            partial, epoch_of, ring, ring_m, ring_first, XT, bits, scratch):
    """Every compacted column back to variable order, its entries on the variables off
    act[:m] computed (columns too old to be brought up are dropped). Those entries come
    from the off variables' rows of X gathered once into a contiguous d x (n - m) block:
    :func:`~convexlearn.solvers.kernel_svm.smo_kernels.full_column` on it, the same
    operations as on the whole data (the same values), where each column gathered its
    entries row by row (~5x the cost of a contiguous entry) or, at n - m >= n / 4, was
    computed whole again (rbf, make_classification(8000, 20), C = 100: two unshrinkings
    of ~3200 cached columns at m ~ 4000, 0.38 s of SMO's 1.6 s)."""
    n = cache.shape[1]
    rest = np.empty(n - m, dtype=np.int64)
    inactive_variables(act, m, n, rest)
    buf = scratch[1]
    if XT is None:                 # (a given Gram matrix: numba prunes the other branch)
        contiguous = False
        rest_XT = XT
    else:
        contiguous = code != PRECOMPUTED and rest.size > 0
        rest_XT = _rest_data(XT, rest, rest.size) if contiguous else XT
    for s in range(owner.shape[0]):
        if owner[s] < 0 or not partial[s]:
            continue
        if epoch - epoch_of[s] >= RING:
            slot_of[owner[s]] = -1
            owner[s] = -1
            stamp[s] = -1
            partial[s] = False
            continue
        row = cache[s]
        if epoch_of[s] != epoch:
            _to_current(row, epoch_of[s], epoch, ring, ring_m, ring_first)
        for k in range(m - 1, -1, -1):          # scattered back (act[k] >= k)
            row[act[k]] = row[k]
        if rest.size:
            if contiguous:
                full_column(owner[s], code, X, rest_XT, K, gamma, coef0, degree,
                            buf[:rest.size], bits)
            else:
                gathered_entries(owner[s], rest, rest.size, code, X, K, gamma, coef0,
                                 degree, buf, bits)
            for r in range(rest.size):
                row[rest[r]] = buf[r]
        partial[s] = False
        epoch_of[s] = -1


@njit(cache=True)
def _mark_off(m, vA, upn, lowp, off, m_val, M_val):
    """Mark off (off[k], out of I_up and I_low) the variables LIBSVM's shrinking removes:
    bounded ones that cannot be part of a violating pair at (m_val, M_val). Returns how
    many; none are marked when that would be all of the active ones (as the compaction
    of :func:`~convexlearn.solvers.kernel_svm.smo_kernels.smo_loop` keeps them all)."""
    active = 0
    newly = 0
    for k in range(m):
        if not off[k]:
            active += 1
            up = upn[k] == 0.0
            low = lowp[k] == 0.0
            if (up and not low and vA[k] < M_val) or (low and not up and vA[k] > m_val):
                newly += 1
    if newly == 0 or newly == active:
        return 0
    for k in range(m):
        if not off[k]:
            up = upn[k] == 0.0
            low = lowp[k] == 0.0
            if (up and not low and vA[k] < M_val) or (low and not up and vA[k] > m_val):
                off[k] = True
                upn[k] = -math.inf
                lowp[k] = math.inf
    return newly


@njit(cache=True)
def _compact(m, act, vA, dA, upn, lowp, off, src, ring_m, ring_first, epoch):
    """Drop the variables marked off from the front of the position-ordered arrays (stable:
    index order kept), recording in ``src`` where each kept one was (ring row of shrinking
    ``epoch``: the cached columns follow it lazily). Returns the new m."""
    kept = 0
    first = -1
    for k in range(m):
        if not off[k]:
            src[kept] = k
            act[kept] = act[k]
            vA[kept] = vA[k]
            dA[kept] = dA[k]
            upn[kept] = upn[k]
            lowp[kept] = lowp[k]
            off[kept] = False
            kept += 1
        elif first < 0:
            first = kept
    for k in range(kept, m):
        off[k] = False
    ring_m[epoch % RING] = kept
    ring_first[epoch % RING] = first
    return kept


@njit(cache=True)
def _reload(n, y, Cv, alpha, v, diag, vA, upn, lowp, dA):
    """Position-ordered arrays of the whole active set (position t = variable t)."""
    for t in range(n):
        vA[t] = v[t]
        dA[t] = diag[t]
        status_at(t, t, y, Cv, alpha, upn, lowp)


@njit(cache=True)
def _update(vA, Ki, Kj, step, m):
    """vA[k] += step (Kj[k] - Ki[k]) for k < m (contiguous: vectorized; no fastmath, so
    no fused multiply-add: the reference's rounding)."""
    for k in range(m):
        vA[k] += step * (Kj[k] - Ki[k])


@njit(fastmath=_MAX, cache=True)
def _spread(spread, di, dA, Ki, upn, lowp, m):
    """max(spread, max_k di + dA[k] - 2 Ki[k]) over the positions not marked off (the hard
    margin's s^2, over the active set as smo_loop: with C = inf every active variable is
    in I_up or I_low, a marked-off one in neither)."""
    for k in range(m):
        if upn[k] == 0.0 or lowp[k] == 0.0:
            spread = max(spread, di + dA[k] - 2.0 * Ki[k])
    return spread


@njit(fastmath=_MAX, error_model="numpy", cache=True)
def _scores(m_val, vA, lowp, dA, Ki, di, tau, m, score):
    """score[k] = b_k^2 / a_k where b_k = m_val - vA[k] > 0 in I_low (lowp[k] = 0), else 0;
    a_k = max(di + dA[k] - 2 Ki[k], tau). Branch-free, and vectorized: the selects are
    written out (numba's max() branches on NaN) and numpy's error model drops the
    division's zero check (a_k >= tau > 0)."""
    for k in range(m):
        gain = m_val - vA[k] - lowp[k]
        curv = di + dA[k] - 2.0 * Ki[k]
        curv = curv if curv > tau else tau
        sc = gain * gain / curv
        score[k] = sc if gain > 0.0 else 0.0


@njit(cache=True)
def _largest(score, m):
    """(max(0, max_k score[k]) for k < m, the first block of ``BLOCK`` positions reaching
    it, -1 when no score is positive), in four independent chains within each block
    (exact: a maximum does not depend on the order): the first k of the maximum is then
    searched in that block only (a scan from position 0 read half of the m scores on
    average)."""
    best = 0.0
    at = -1
    for start in range(0, m, BLOCK):
        stop = min(start + BLOCK, m)
        b0 = b1 = b2 = b3 = 0.0
        k = start
        while k + 4 <= stop:
            b0 = score[k] if score[k] > b0 else b0
            b1 = score[k + 1] if score[k + 1] > b1 else b1
            b2 = score[k + 2] if score[k + 2] > b2 else b2
            b3 = score[k + 3] if score[k + 3] > b3 else b3
            k += 4
        while k < stop:
            b0 = score[k] if score[k] > b0 else b0
            k += 1
        b0 = b1 if b1 > b0 else b0
        b2 = b3 if b3 > b2 else b2
        b0 = b2 if b2 > b0 else b0
        if b0 > best:             # (strict: the first block reaching the maximum)
            best = b0
            at = start
    return best, at


@njit(cache=True)
def _select_i(vA, upn, lowp, m):
    """(i, m_val, M_val): m_val = max_k vA[k] + upn[k] (over I_up), i the first k reaching
    it, M_val = min_k vA[k] + lowp[k] (over I_low), k < m. The extremes in four
    independent chains each (exact in any order; half the time of one chain with its
    position), then the first k at the maximum: the i of a scan keeping the first strict
    improvement."""
    a0 = a1 = a2 = a3 = -math.inf
    c0 = c1 = c2 = c3 = math.inf
    k = 0
    while k + 4 <= m:
        x0 = vA[k] + upn[k]
        x1 = vA[k + 1] + upn[k + 1]
        x2 = vA[k + 2] + upn[k + 2]
        x3 = vA[k + 3] + upn[k + 3]
        a0 = x0 if x0 > a0 else a0
        a1 = x1 if x1 > a1 else a1
        a2 = x2 if x2 > a2 else a2
        a3 = x3 if x3 > a3 else a3
        z0 = vA[k] + lowp[k]
        z1 = vA[k + 1] + lowp[k + 1]
        z2 = vA[k + 2] + lowp[k + 2]
        z3 = vA[k + 3] + lowp[k + 3]
        c0 = z0 if z0 < c0 else c0
        c1 = z1 if z1 < c1 else c1
        c2 = z2 if z2 < c2 else c2
        c3 = z3 if z3 < c3 else c3
        k += 4
    while k < m:
        x0 = vA[k] + upn[k]
        a0 = x0 if x0 > a0 else a0
        z0 = vA[k] + lowp[k]
        c0 = z0 if z0 < c0 else c0
        k += 1
    a0 = a1 if a1 > a0 else a0
    a2 = a3 if a3 > a2 else a2
    m_val = a2 if a2 > a0 else a0
    c0 = c1 if c1 < c0 else c0
    c2 = c3 if c3 < c2 else c2
    M_val = c2 if c2 < c0 else c0
    for k in range(m):
        if vA[k] + upn[k] == m_val:
            return np.int64(k), m_val, M_val
    return np.int64(0), m_val, M_val


@njit(cache=True)
def _second_order(m_val, vA, lowp, dA, Ki, di, tau, m, score):
    """(j, a_ij): the first k < m of the largest score (:func:`_scores`; -1 and tau when no
    score is positive): the j of a scan keeping the first strict improvement, without its
    branch on b_k > 0 (taken at random, about half of the time)."""
    _scores(m_val, vA, lowp, dA, Ki, di, tau, m, score)
    best, at = _largest(score, m)
    if at < 0:
        return np.int64(-1), tau
    for k in range(at, min(at + BLOCK, m)):
        if score[k] == best:
            return np.int64(k), max(di + dA[k] - 2.0 * Ki[k], tau)
    return np.int64(-1), tau


@njit(cache=True)
def compact_loop(code: Any, X: Any, K: Any, gamma: float, coef0: float, degree: int,
                 diag: Any, y: Any, target: Any, Cv: Any, alpha: Any, v: Any, gbar: Any,
                 tol: float, it: Any, max_iter: int, shrinking: Any, tau: Any, hard: Any,
                 divergence: Any, spread: Any, dual: Any, unshrunk_once: Any, cache: Any,
                 slot_of: Any, owner: Any, stamp: Any, partial: Any, counters: Any, XT: Any,
                 bits: Any, scratch: Any, hist_obj: Any, hist_viol: Any) -> Any:
    """:func:`~convexlearn.solvers.kernel_svm.smo_kernels.smo_loop` without an index map,
    on a contiguous active set (module docstring): the same arguments, iterates and
    return value (status, it, violation, dual, spread, n_shrink, unshrunk_once,
    diverged_at); on return every variable is active, v exact and every cached column
    whole."""
    n = y.shape[0]
    act = identity_order(n)
    m = n
    shrunk = False
    epoch = 0
    ring = np.empty((RING, n), dtype=np.int64)
    ring_m = np.zeros(RING, dtype=np.int64)
    ring_first = np.zeros(RING, dtype=np.int64)
    epoch_of = np.full(owner.shape[0], -1, dtype=np.int64)
    for s in range(owner.shape[0]):              # (a column left partial by another loop)
        if owner[s] >= 0 and partial[s]:
            slot_of[owner[s]] = -1
            owner[s] = -1
            stamp[s] = -1
            partial[s] = False
    shrink_every = min(n, 1000)
    counter = shrink_every
    n_shrink = 0
    status = MAX_ITER
    violation = math.inf
    diverged_at = -1
    vA = np.empty(n)
    dA = np.empty(n)
    score = np.empty(n)
    off = np.zeros(n, dtype=np.bool_)     # marked off by shrinking, not yet compacted out
    n_off = 0
    upn = np.empty(n)
    lowp = np.empty(n)
    _reload(n, y, Cv, alpha, v, diag, vA, upn, lowp, dA)
    xa = _active_buffer(XT, code)          # the active variables' data, once compacted
    selected = False
    i_loc = 0
    m_val = -math.inf
    M_val = math.inf
    while it < max_iter:
        if not selected:
            i_loc, m_val, M_val = _select_i(vA, upn, lowp, m)
        selected = False
        violation = m_val - M_val
        unshrink = False
        if violation <= tol:
            if not shrunk:
                status = CONVERGED
                break
            unshrink = True
        elif shrinking:
            counter -= 1
            if counter <= 0:
                counter = shrink_every
                if not unshrunk_once and violation <= 10 * tol:
                    unshrunk_once = True       # LIBSVM: one full re-check near the end
                    unshrink = shrunk
                    if not shrunk:
                        continue
                else:
                    # LIBSVM's rule marks variables off (masked out of the selections);
                    # the layout is compacted once enough of them are off
                    newly = _mark_off(m, vA, upn, lowp, off, m_val, M_val)
                    if newly > 0:
                        n_off += newly
                        n_shrink += 1
                        shrunk = True
                        if n_off * COMPACT_AT >= m:
                            m = _compact(m, act, vA, dA, upn, lowp, off,
                                         ring[(epoch + 1) % RING], ring_m, ring_first,
                                         epoch + 1)
                            epoch += 1
                            _active_data(XT, act, m, xa)
                            n_off = 0
                        continue
        if unshrink:
            if m < n:
                for k in range(m):
                    v[act[k]] = vA[k]
                _expand(act, m, epoch, code, X, K, gamma, coef0, degree, cache, slot_of,
                        owner, stamp, partial, epoch_of, ring, ring_m, ring_first, XT,
                        bits, scratch)
                m = unshrink_gradient(act, m, n, y, target, Cv, alpha, v, gbar, code, X, K,
                                      gamma, coef0, degree, cache, slot_of, owner, stamp,
                                      partial, bits, scratch, None, counters, XT)
                _reload(n, y, Cv, alpha, v, diag, vA, upn, lowp, dA)
            else:              # (only marked off: their v followed every step, exactly)
                for k in range(n):
                    if off[k]:
                        status_at(k, k, y, Cv, alpha, upn, lowp)
            for k in range(n):
                off[k] = False
            n_off = 0
            shrunk = False
            continue
        it += 1
        i = act[i_loc]
        si = _compact_slot(i, act, m, m < n, epoch, code, X, K, gamma, coef0, degree, cache,
                           slot_of, owner, stamp, partial, epoch_of, ring, ring_m, ring_first,
                           counters, XT, bits, xa)
        Ki = cache[si]
        di = dA[i_loc]
        if hard:
            spread = _spread(spread, di, dA, Ki, upn, lowp, m)
        j_loc, a_ij = _second_order(m_val, vA, lowp, dA, Ki, di, tau, m, score)
        j = act[j_loc]
        sj = _compact_slot(j, act, m, m < n, epoch, code, X, K, gamma, coef0, degree, cache,
                           slot_of, owner, stamp, partial, epoch_of, ring, ring_m, ring_first,
                           counters, XT, bits, xa)
        Ki = cache[slot_of[i]]     # (column i cannot be evicted by j: it is the newest)
        Kj = cache[sj]
        b_ij = m_val - vA[j_loc]
        upper_i = alpha[i] >= Cv[i]
        upper_j = alpha[j] >= Cv[j]
        step = clip_pair(i, j, b_ij / a_ij, y, Cv, alpha)
        dual += step * b_ij - 0.5 * step * step * a_ij
        status_at(i_loc, i, y, Cv, alpha, upn, lowp)
        status_at(j_loc, j, y, Cv, alpha, upn, lowp)
        # gradient update, then the next selection of i on it (the same comparisons in
        # the same order as above: the same i)
        _update(vA, Ki, Kj, step, m)
        i_loc, m_val, M_val = _select_i(vA, upn, lowp, m)
        selected = True
        if not hard:
            if upper_i != (alpha[i] >= Cv[i]):
                add_to_gbar(i, (Cv[i] if not upper_i else -Cv[i]) * y[i], n, code, X, K,
                            gamma, coef0, degree, cache, slot_of, partial, gbar, counters,
                            XT, bits, scratch, None)
            if upper_j != (alpha[j] >= Cv[j]):
                add_to_gbar(j, (Cv[j] if not upper_j else -Cv[j]) * y[j], n, code, X, K,
                            gamma, coef0, degree, cache, slot_of, partial, gbar, counters,
                            XT, bits, scratch, None)
        hist_obj[it - 1] = dual
        hist_viol[it - 1] = violation
        if hard:
            s2 = spread if spread > 0.0 else 1.0
            if alpha[i] * s2 > divergence:
                status = DIVERGED
                diverged_at = i
                break
    if m < n:
        for k in range(m):
            v[act[k]] = vA[k]
        _expand(act, m, epoch, code, X, K, gamma, coef0, degree, cache, slot_of, owner,
                stamp, partial, epoch_of, ring, ring_m, ring_first, XT, bits, scratch)
        unshrink_gradient(act, m, n, y, target, Cv, alpha, v, gbar, code, X, K, gamma, coef0,
                          degree, cache, slot_of, owner, stamp, partial, bits, scratch, None,
                          counters, XT)
    else:
        for k in range(n):
            v[k] = vA[k]
    return status, it, violation, dual, spread, n_shrink, unshrunk_once, diverged_at


load_without_refresh(globals())   # cached kernels load without numba's compiler contexts
