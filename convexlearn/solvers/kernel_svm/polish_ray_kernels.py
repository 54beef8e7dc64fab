"""The ray walk's steps in one compiled call (numba): no per-step numpy/LAPACK calls.

The steps of :func:`~convexlearn.solvers.kernel_svm.polish_ray.ray_walk_reference`, in
loops: the ray p = d_S - Q Q^T d_S on the free set S (:func:`free_ray`), the ratio
test on the free entries (x + t p in [lo, hi], the entries with room <= t + 1e-15 fixed
on the bound they approached), the step's check, d <- d - K_FF (x_new - x); Q is an
orthonormal basis of the range basis's rows S (modified Gram-Schmidt, twice; a column
whose remainder has norm <= ``range_tol``
- the basis's columns have norm 1 on the whole face - spans no direction). The
reference takes the same basis from a singular value decomposition: the two differ in
rounding, not in arithmetic. It only steers (:mod:`polish_ray`).
"""

from __future__ import annotations

from typing import Any

import math

import numpy as np
from numba import njit

from ...compiled import load_without_refresh

__all__ = ["walk_kernel", "ray_steps", "free_ray", "pivoted_range", "normalize_columns",
           "project_out"]


@njit(cache=True, nogil=True)
def project_out(Q: Any, used: int, v: Any) -> None:
    """v <- v - Q_u Q_u^T v for the first ``used`` (orthonormal) columns Q_u of Q, one
    column at a time (modified Gram-Schmidt), in place."""
    k = v.size
    for q in range(used):
        dot = 0.0
        for i in range(k):
            dot += Q[i, q] * v[i]
        for i in range(k):
            v[i] -= dot * Q[i, q]


@njit(cache=True, nogil=True)
def pivoted_range(KFF: Any, cut: float, basis: Any, width: int) -> int:
    """Columns of norm 1 spanning K_FF's numerical range, by the pivoted Cholesky
    factorization K_FF ~ L L^T (the largest remaining diagonal entry first) stopped when
    no remaining diagonal entry exceeds ``cut``: column c of ``basis`` is L's column c
    normalized (:func:`normalize_columns`). Returns the number of columns, or -1 when
    ``width`` of them do not suffice (the rank is not low: the caller keeps its fresh
    rounds)."""
    k = KFF.shape[0]
    rest = np.empty(k)
    for i in range(k):
        rest[i] = KFF[i, i]
    c = 0
    while True:
        j, top = -1, cut
        for i in range(k):
            if rest[i] > top:
                j, top = i, rest[i]
        if j < 0:
            return c
        if c == width:
            return -1
        pivot = math.sqrt(top)
        for i in range(k):
            acc = KFF[i, j]
            for q in range(c):
                acc -= basis[i, q] * basis[j, q]
            basis[i, c] = acc / pivot
        basis[j, c] = pivot
        for i in range(k):
            rest[i] -= basis[i, c] * basis[i, c]
        rest[j] = 0.0
        c += 1
        # (L's columns kept unnormalized until the end: the next columns need them)
        if c == k:
            break
    return c


@njit(cache=True, nogil=True)
def normalize_columns(basis: Any, used: int) -> None:
    """Scale the first ``used`` columns of ``basis`` to norm 1."""
    k = basis.shape[0]
    for c in range(used):
        norm = 0.0
        for i in range(k):
            norm += basis[i, c] * basis[i, c]
        norm = math.sqrt(norm)
        if norm > 0.0:
            for i in range(k):
                basis[i, c] /= norm


@njit(cache=True, nogil=True)
def free_ray(d: Any, basis: Any, still: Any, range_tol: float, Q: Any, v: Any,
             p: Any) -> None:
    """p <- d_S - Q Q^T d_S on the free set S (zero elsewhere), Q an orthonormal basis
    of the range basis's rows S (modified Gram-Schmidt, twice; a column whose remainder
    has norm <= ``range_tol`` spans no direction)."""
    k = d.size
    used = 0
    for c in range(basis.shape[1]):
        for i in range(k):
            v[i] = basis[i, c] if still[i] else 0.0
        project_out(Q, used, v)
        project_out(Q, used, v)             # (twice: Gram-Schmidt's lost orthogonality)
        norm = 0.0
        for i in range(k):
            norm += v[i] * v[i]
        norm = math.sqrt(norm)
        if norm > range_tol:
            for i in range(k):
                Q[i, used] = v[i] / norm
            used += 1
    for i in range(k):
        p[i] = d[i] if still[i] else 0.0
    project_out(Q, used, p)
    for i in range(k):
        if not still[i]:
            p[i] = 0.0


@njit(cache=True, nogil=True)
def ray_steps(KFF: Any, d: Any, x: Any, lo: Any, hi: Any, basis: Any, p0: Any, still: Any,
              margin_tol: float, range_tol: float, max_steps: int, kept_tol: float,
              kept_cap: float, balance: bool) -> int:
    """Walk x (free where ``still``) along the rays p = P d until max |p| <= margin_tol,
    no entry is free, ``max_steps`` steps or a step after the first (along ``p0``, on all
    entries, unchecked) that fails the check of
    :func:`~convexlearn.solvers.kernel_svm.polish_ray.ray_walk_reference` (d^T step >=
    -theta max|d_S| s, |K_FF step|_inf <= theta max_i K_ii s and, with ``balance``,
    |1^T step| <= theta s, s = ||step||_1 + sum of |x_new| on the fixed entries, theta =
    min(kept_tol max(1, max|d_S| / max|p|), kept_cap)): that step is not taken. x, d and
    still are updated in place; returns the number of steps."""
    k = x.size
    top = 0.0
    for i in range(k):
        top = max(top, KFF[i, i])
    p = np.zeros(k)
    step = np.zeros(k)
    Ks = np.zeros(k)
    hit = np.zeros(k, dtype=np.bool_)
    Q = np.zeros((k, basis.shape[1]))
    v = np.zeros(k)
    steps = 0
    while steps < max_steps:
        free = 0
        for i in range(k):
            if still[i]:
                free += 1
        if free == 0:
            break
        if steps == 0:
            for i in range(k):
                p[i] = p0[i]                # (the given first ray: all entries free)
        else:
            free_ray(d, basis, still, range_tol, Q, v, p)
        largest, dmax = 0.0, 0.0
        for i in range(k):
            largest = max(largest, abs(p[i]))
            if still[i]:
                dmax = max(dmax, abs(d[i]))
        if steps > 0 and largest <= margin_tol:
            break
        theta = min(kept_tol * max(1.0, dmax / largest), kept_cap)
        t = math.inf
        for i in range(k):
            if still[i]:
                if p[i] < 0.0:
                    room = max((lo[i] - x[i]) / p[i], 0.0)
                elif p[i] > 0.0:
                    room = max((hi[i] - x[i]) / p[i], 0.0)
                else:
                    room = math.inf
                if room < t:
                    t = room
        if not t < math.inf:
            break
        scale, ascent, total = 0.0, 0.0, 0.0
        for i in range(k):
            step[i] = 0.0
            hit[i] = False
            if still[i] and p[i] != 0.0:
                room = ((lo[i] - x[i]) / p[i] if p[i] < 0.0 else (hi[i] - x[i]) / p[i])
                if max(room, 0.0) <= t + 1e-15:
                    end = hi[i] if p[i] > 0.0 else lo[i]
                    step[i] = end - x[i]
                    hit[i] = True
                    scale += abs(end)
                else:
                    step[i] = t * p[i]
            scale += abs(step[i])
            ascent += d[i] * step[i]
            total += step[i]
        kept = ascent >= -theta * dmax * scale and (not balance or abs(total) <= theta * scale)
        for i in range(k):
            acc = 0.0
            for j in range(k):
                acc += KFF[i, j] * step[j]
            Ks[i] = acc
            if not abs(acc) <= theta * top * scale:
                kept = False
        if steps > 0 and not kept:
            break                 # (a step along the projection's round-off: not taken)
        for i in range(k):
            x[i] += step[i]
            d[i] -= Ks[i]
            if hit[i]:
                still[i] = False
        steps += 1
    return steps


@njit(cache=True, nogil=True)
def walk_kernel(KFF: Any, d: Any, x: Any, lo: Any, hi: Any, p0: Any, still: Any,
                margin_tol: float, range_tol: float, max_steps: int, cut: float,
                width: int, intercept: bool, kept_tol: float,
                kept_cap: float) -> tuple[int, int]:
    """The whole walk in one call (one kernel to load the first time in a process:
    ~10 ms CPU once SMO's kernels are loaded, ~0.1 s in a process that loaded none;
    three kernels cost more): the range basis (:func:`pivoted_range`,
    :func:`normalize_columns`, then the column of ones 1 / sqrt(k) with
    ``intercept``) and :func:`ray_steps`. Returns (steps, rank of K_FF); (-1, -1)
    (nothing moved) when the rank exceeds ``width``."""
    k = KFF.shape[0]
    basis = np.zeros((k, width + 1))
    used = pivoted_range(KFF, cut, basis, width)
    if used < 0:
        return -1, -1
    rank = used
    normalize_columns(basis, used)
    if intercept:
        for i in range(k):
            basis[i, used] = 1.0 / math.sqrt(k)
        used += 1
    steps = ray_steps(KFF, d, x, lo, hi, np.ascontiguousarray(basis[:, :used]), p0, still,
                      margin_tol, range_tol, max_steps, kept_tol, kept_cap, intercept)
    return steps, rank


load_without_refresh(globals())   # cached kernels load without numba's compiler contexts
