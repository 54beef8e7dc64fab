"""SMO's clipped step on a pair and its column cache's miss, in plain Python: one source
for every SMO loop.

The compiled loops use it through ``smo_kernels.clip_pair`` (this function compiled by
numba); the numpy loops call it directly, on numpy arrays or, in the tiny path
(:mod:`~convexlearn.solvers.kernel_svm.tiny_dense`), on Python lists of floats, which
costs no numpy scalars and loads no compiled module.
"""

from __future__ import annotations

from typing import Any

__all__ = ["clip_pair", "hit_slot", "lru_slot"]


def clip_pair(i: Any, j: Any, step: Any, y: Any, Cv: Any, alpha: Any) -> Any:
    """SMO's step on the pair (i, j) along a_i += y_i t, a_j -= y_j t: t = min(step, the
    room of a_i, the room of a_j), ``alpha`` updated in place and snapped to the bound that
    limited the step (so that "at bound" is exact); returns t."""
    room_i = (Cv[i] - alpha[i]) if y[i] > 0 else alpha[i]
    room_j = alpha[j] if y[j] > 0 else (Cv[j] - alpha[j])
    if room_i < step:
        step = room_i
    if room_j < step:
        step = room_j
    alpha[i] += y[i] * step
    alpha[j] -= y[j] * step
    if step == room_i:
        alpha[i] = Cv[i] if y[i] > 0 else 0.0
    if step == room_j:
        alpha[j] = 0.0 if y[j] > 0 else Cv[j]
    return step


def hit_slot(i: Any, slot_of: Any, stamp: Any, counters: Any) -> Any:
    """The slot of column i when cached (a hit: the clock counters[0] and the hits
    counters[1] counted, its stamp renewed, as ``column_slot`` does), else -1. The compiled
    loop tests this before calling ``column_slot`` (~20 arrays passed: ~0.1 us a call, a
    fifth of an SMO iteration at n ~ 270). (Compiled as ``smo_kernels.hit_slot``.)"""
    s = slot_of[i]
    if s >= 0:
        counters[0] += 1
        stamp[s] = counters[0]
        counters[1] += 1
    return s


def lru_slot(i: Any, slot_of: Any, owner: Any, stamp: Any, counters: Any) -> Any:
    """A miss of column i in a column cache: the least recently used slot (free slots,
    stamp -1, first) is given to i and its old column forgotten; counters[2] (misses) += 1,
    counters[0] is the clock. Returns the slot. (Compiled as ``smo_kernels.lru_slot``.)"""
    counters[2] += 1
    s = 0
    for k in range(1, owner.shape[0]):
        if stamp[k] < stamp[s]:
            s = k
    if owner[s] >= 0:
        slot_of[owner[s]] = -1
    owner[s], slot_of[i], stamp[s] = i, s, counters[0]
    return s
