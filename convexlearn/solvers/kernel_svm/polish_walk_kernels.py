"""The ratio walk's steps in one compiled call (numba): no per-step numpy/LAPACK calls.

The same steps as the numpy walk of :mod:`~convexlearn.solvers.kernel_svm.polish_walk`
(its module docstring: one Cholesky K_0 = R^T R, W = K_0^{-1} B, S = B^T W = L L^T kept
bordered, x = u - W z), in the same order, each in loops:

* the ratio test on the whole face (d = 0 on the fixed entries: their room infinite),
  the entries with room <= t + 1e-15 fixed on their bound;
* W's new column K_0^{-1} e_j: a row of the explicit inverse when given, else a column
  of the caller's column cache (``cache[:, slot[j]]``: the caller solves for missing
  ones in batches with LAPACK, BLAS 3, as the numpy walk does);
* S's factor bordered by the row ell = L^{-1} [E_0^T w; w_G], pivot w_j - ell^T ell,
  which must exceed 1e-14 |w_j| (else S lost definiteness in floating point: stop);
* z = L^{-T} L^{-1} (B^T u - [t; 0]), x = u - W z (0 on G), each balance row restored
  exactly on the free entries, d = x - beta on the free entries.

It returns when x is in the box, after ``limit`` fixed multipliers, when S loses
definiteness or a column is not finite, when no multiplier is free, or (without the
inverse) before the step that would exceed ``inverse_after`` steps, so the caller forms
K_0^{-1} once, or before a step whose columns are not in the cache, so the caller solves
for them (the state lives in the arrays passed in; the call after repeats the same ratio
test). It only steers:
the caller judges its last solution by its residual, the polish and the certificate
decide from the data. Rounding differs from the numpy walk's (other summation orders,
loops instead of LAPACK), not the arithmetic.
"""

from __future__ import annotations

from typing import Any

import math

import numpy as np
from numba import njit

from ...compiled import load_without_refresh

__all__ = ["walk_loop", "mirror_lower", "IN_BOX", "LIMIT", "FAILED", "EMPTY", "NEED_INVERSE",
           "NEED_COLUMNS"]

#: walk_loop's statuses: x in the box, limit reached, S not positive definite (or a
#: column not finite), no free multiplier left, the inverse wanted before the next step,
#: columns not in the cache (``hit[:state[3]]``) wanted before the next step.
IN_BOX, LIMIT, FAILED, EMPTY, NEED_INVERSE, NEED_COLUMNS = 0, 1, 2, 3, 4, 5


@njit(cache=True)
def _solve_s(L: Any, p: int, rhs: Any) -> Any:
    """z = L^{-T} L^{-1} rhs with L[:p, :p] lower triangular."""
    v = rhs.copy()
    for r in range(p):
        s = v[r]
        for c in range(r):
            s -= L[r, c] * v[c]
        v[r] = s / L[r, r]
    for r in range(p - 1, -1, -1):
        v[r] /= L[r, r]
        zr = v[r]
        for c in range(r):
            v[c] -= L[r, c] * zr
    return v


@njit(cache=True)
def walk_loop(beta: Any, d: Any, lo: Any, hi: Any, free: Any, u: Any, totals: Any,
              E0: Any, W: Any, L: Any, G: Any, state: Any, inverse: Any, cache: Any,
              slot: Any, room: Any, hit: Any, x: Any, z: Any, limit: int,
              inverse_after: int) -> int:
    """Ratio steps until a stop (module docstring); returns the status.

    ``state`` = [steps, |G|, x valid, |hit|] is read and written; beta, d, free, u,
    totals, W, L, G, x, z (its first m + |G| entries), room (each entry's room in the
    last ratio test) and hit (the entries it fixes) are updated in place. ``inverse``
    with 0 rows: columns from ``cache`` (``slot[j]``: j's column, -1 when missing), and
    NEED_INVERSE before step ``inverse_after`` + 1.
    """
    k, m = E0.shape
    steps, nG = state[0], state[1]
    rhs = np.empty(m + W.shape[1])
    while True:
        t = math.inf
        for i in range(k):
            di = d[i]
            if di < 0.0:
                r = (beta[i] - lo[i]) / -di
            elif di > 0.0:
                r = (hi[i] - beta[i]) / di
            else:
                r = math.inf
            r = max(r, 0.0)
            room[i] = r
            t = min(t, r)
        if not t < 1.0:
            status = IN_BOX
            break
        if inverse.shape[0] == 0 and steps + 1 > inverse_after:
            status = NEED_INVERSE
            break
        nhit = 0
        missing = False
        for i in range(k):
            if room[i] <= t + 1e-15:
                hit[nhit] = i
                nhit += 1
                missing = missing or slot[i] < 0
        state[3] = nhit
        if inverse.shape[0] == 0 and missing:
            status = NEED_COLUMNS
            break
        steps += 1
        for i in range(k):
            beta[i] += t * d[i]
        for h in range(nhit):
            i = hit[h]
            beta[i] = hi[i] if d[i] > 0.0 else lo[i]
            free[i] = False
            u[i] -= beta[i]
        for c in range(m):
            s = 0.0
            for h in range(nhit):
                s += E0[hit[h], c] * beta[hit[h]]
            totals[c] -= s
        state[2] = 0
        if nG + nhit > limit:
            status = LIMIT
            break
        # the new columns first: none joins when one is not finite (as the numpy walk)
        finite = True
        for h in range(nhit):
            col = W[:, m + nG + h]
            if inverse.shape[0]:
                col[:] = inverse[hit[h]]
            else:
                col[:] = cache[:, slot[hit[h]]]
            for i in range(k):
                if not np.isfinite(col[i]):
                    finite = False
        if not finite:
            status = FAILED
            break
        definite = True
        for h in range(nhit):
            j = hit[h]
            p = m + nG
            w = W[:, p]
            for c in range(m):
                s = 0.0
                for i in range(k):
                    s += E0[i, c] * w[i]
                L[p, c] = s
            for g in range(nG):
                L[p, m + g] = w[G[g]]
            for r in range(p):              # ell = L^{-1} s, in place on row p
                s = L[p, r]
                for c in range(r):
                    s -= L[r, c] * L[p, c]
                L[p, r] = s / L[r, r]
            pivot = w[j]
            for r in range(p):
                pivot -= L[p, r] * L[p, r]
            if not pivot > 1e-14 * abs(w[j]):
                for r in range(p):
                    L[p, r] = 0.0
                definite = False
                break
            L[p, p] = math.sqrt(pivot)
            G[nG] = j
            nG += 1
        if not definite:
            status = FAILED
            break
        anyfree = False
        for i in range(k):
            if free[i]:
                anyfree = True
                break
        if not anyfree:
            status = EMPTY
            break
        # the face's solution x = u - W z, z = S^{-1} (B^T u - [totals; 0])
        p = m + nG
        for c in range(m):
            s = 0.0
            for i in range(k):
                s += E0[i, c] * u[i]
            rhs[c] = s - totals[c]
        for g in range(nG):
            rhs[m + g] = u[G[g]]
        zz = _solve_s(L, p, rhs[:p])
        z[:p] = zz
        x[:] = u
        for c in range(p):
            zc = zz[c]
            for i in range(k):
                x[i] -= W[i, c] * zc
        for g in range(nG):
            x[G[g]] = 0.0
        state[2] = 1
        # each row's balance exactly, whatever the steering's round-off
        for c in range(m):
            s = 0.0
            count = 0
            for i in range(k):
                if free[i] and E0[i, c] > 0:
                    s += x[i]
                    count += 1
            shift = (s - totals[c]) / max(1, count)
            for i in range(k):
                if free[i] and E0[i, c] > 0:
                    x[i] -= shift
        for i in range(k):
            d[i] = x[i] - beta[i] if free[i] else 0.0
    state[0], state[1] = steps, nG
    return status


@njit(cache=True)
def mirror_lower(A: Any, block: int = 64) -> None:
    """A[j, i] = A[i, j] for i > j, in place (the upper triangle from the lower one), in
    square tiles of ``block`` so that the strided reads stay in cache. Called on the
    C-ordered transpose of LAPACK's dpotri result (whose upper triangle holds the
    inverse: the transpose's lower one); the result is the whole symmetric inverse."""
    k = A.shape[0]
    for jb in range(0, k, block):
        je = min(k, jb + block)
        for ib in range(jb, k, block):
            ie = min(k, ib + block)
            for j in range(jb, je):
                for i in range(max(ib, j + 1), ie):
                    A[j, i] = A[i, j]


load_without_refresh(globals())   # cached kernels load without numba's compiler contexts
