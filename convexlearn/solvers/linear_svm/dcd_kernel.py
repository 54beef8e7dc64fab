"""The hot loop of dual coordinate descent: one epoch over the active coordinates.

:func:`dcd_epoch` is compiled with numba; :func:`dcd_epoch_reference` is the same epoch in
plain numpy on explicitly centred dense rows, written from the formulas rather than from
the compiled code, and a test holds the two together.

One coordinate step (Hsieh et al. 2008, LIBLINEAR's ``solve_l2r_l1l2_svc``), for the
centred rows z_i = x_i - mu of the augmented-Lagrangian problem of :mod:`.dcd`::

    G_i  = y_i (<z_i, w_c> + b) - 1 + D_ii a_i,        b = lam + rho y^T a
    PG_i = min(G_i, 0) at a_i = 0,  max(G_i, 0) at a_i = U_i,  G_i inside
    a_i <- clip(a_i - G_i / (||z_i||^2 + D_ii + rho), 0, U_i)

Shrinking: a coordinate at a_i = 0 with G_i > M_old, or at a_i = U_i with G_i < m_old,
is dropped from the active set (M_old, m_old: the largest and smallest projected gradient
of the previous epoch, +-inf when they have the wrong sign).

**Implicit centring.** The compiled epoch never forms X - mu (X may be sparse CSR): with
v = X^T (y * a), s = y^T a, it keeps w_c = v - s mu through the scalar mv = <mu, v> and
the per-row xm_i = <x_i, mu>::

    <z_i, w_c> = <x_i, v> - s xm_i - mv + s ||mu||^2.

A dense caller passes rows already centred and mu = 0, which avoids the cancellation
of those four terms on data far from the origin.

**Many epochs in one call.** :func:`dcd_epochs` runs epochs (shuffle, epoch, compaction of
the active set, LIBLINEAR's shrinking bounds) until the projected-gradient spread reaches
its tolerance: the Python loop of :mod:`.dcd` paid ~40 us an epoch around the compiled one
(a permutation, fancy indexing, the dual's norms), which on shrunk active sets of a few
dozen coordinates was most of the time (conflict_2000x10 at C = 1, no intercept: 11 of
13.6 ms over 269 epochs; LIBLINEAR runs its ~2000 epochs of over_20000x20 in 20 ms).
The order is a Fisher-Yates shuffle driven by xorshift64* (:func:`shuffle_prefix`),
deterministic for a given state.
"""

from __future__ import annotations

from typing import Any

import math

import numpy as np
from numpy.typing import ArrayLike
from numba import njit

from ...compiled import load_without_refresh

__all__ = ["dcd_epoch", "dcd_epochs", "dcd_epoch_reference", "shuffle_prefix", "STATE_FIELDS"]

#: Entries of the ``state`` vector updated in place by an epoch.
STATE_FIELDS = ("s", "mv", "a_sum", "a_sq")


@njit(cache=True)
def dcd_epoch(dense: Any, Xd: Any, indptr: Any, indices: Any, data: Any, y: ArrayLike, xm: Any,
              mm: Any, curv: Any, upper: Any, diag: Any, rho: float, lam: float,
              alpha: Any, v: Any, state: Any, perm: Any, keep: Any, pg_max_old: Any,
              pg_min_old: Any, shrinking: Any) -> Any:
    """One epoch over ``perm`` (compiled). Returns (pg_max, pg_min).

    ``dense`` selects ``Xd`` (n x d rows) or the CSR arrays (``indptr``, ``indices``,
    ``data``); ``alpha``, ``v``, ``state`` (:data:`STATE_FIELDS`) and ``keep`` (False where
    a coordinate was shrunk) are updated in place.
    """
    s, mv, a_sum, a_sq = state[0], state[1], state[2], state[3]
    pg_max, pg_min = -np.inf, np.inf
    d = v.shape[0]
    for pos in range(perm.shape[0]):
        i = perm[pos]
        yi, ai, ui = y[i], alpha[i], upper[i]
        dot = 0.0
        if dense:
            for j in range(d):
                dot += Xd[i, j] * v[j]
        else:
            for k in range(indptr[i], indptr[i + 1]):
                dot += data[k] * v[indices[k]]
        f = dot - s * xm[i] - mv + s * mm
        G = yi * (f + lam + rho * s) - 1.0 + diag * ai
        keep[pos] = True
        if ai <= 0.0:
            if shrinking and G > pg_max_old:
                keep[pos] = False
                continue
            # U_i = 0 (a zero sample weight): a_i cannot move, nothing to violate
            pg = min(G, 0.0) if ui > 0.0 else 0.0
        elif ai >= ui:
            if shrinking and G < pg_min_old:
                keep[pos] = False
                continue
            pg = max(G, 0.0)
        else:
            pg = G
        pg_max = max(pg_max, pg)
        pg_min = min(pg_min, pg)
        if pg == 0.0:
            continue
        new = min(max(ai - G / curv[i], 0.0), ui)
        delta = new - ai
        if delta == 0.0:
            continue
        alpha[i] = new
        a_sum += delta
        a_sq += new * new - ai * ai
        step = delta * yi
        if dense:
            for j in range(d):
                v[j] += step * Xd[i, j]
        else:
            for k in range(indptr[i], indptr[i + 1]):
                v[indices[k]] += step * data[k]
        mv += step * xm[i]
        s += step
    state[0], state[1], state[2], state[3] = s, mv, a_sum, a_sq
    return pg_max, pg_min


_XS_MULT = np.uint64(2685821657736338717)
#: An epoch whose multipliers or w grow beyond these hands back to the Python loop, which
#: decides (with the dual's norms) whether the run diverged (the hard margin, U = inf).
_HUGE_V = 1e150
_HUGE_A = 1e300


@njit(cache=True)
def shuffle_prefix(order: Any, count: int, rstate: Any) -> None:
    """Shuffle ``order[:count]`` in place (Fisher-Yates; xorshift64* on ``rstate[0]``,
    a nonzero uint64, advanced in place)."""
    x = rstate[0]
    for i in range(count - 1, 0, -1):
        x ^= x >> np.uint64(12)
        x ^= x << np.uint64(25)
        x ^= x >> np.uint64(27)
        r = (x * _XS_MULT) >> np.uint64(11)
        j = np.int64(r % np.uint64(i + 1))
        order[i], order[j] = order[j], order[i]
    rstate[0] = x


@njit(cache=True)
def dcd_epochs(dense: Any, Xd: Any, indptr: Any, indices: Any, data: Any, y: ArrayLike,
               xm: Any, mm: Any, curv: Any, upper: Any, diag: Any, rho: float, lam: float,
               alpha: Any, v: Any, state: Any, active: Any, n_active: int, keep: Any,
               bounds: Any, shrinking: Any, spread: Any, tol: float, max_epochs: int,
               max_visits: int, rstate: Any) -> Any:
    """Epochs of :func:`dcd_epoch` over ``active[:n_active]`` (shuffled by
    :func:`shuffle_prefix` each epoch, then compacted to the coordinates kept) until the
    violation is <= ``tol``, ``max_epochs`` have run, the epochs have visited
    ``max_visits`` coordinates in all (a budget in work, not in epochs: an epoch on a
    shrunk set of a few dozen coordinates costs what one step does on the full set), or
    a multiplier or w grows huge.

    The violation of an epoch: pg_max - pg_min (``spread``: with an intercept) or
    max(pg_max, -pg_min), 0 when no coordinate is left; ``bounds`` (pg_max_old,
    pg_min_old) are updated after each epoch as LIBLINEAR does (+-inf when of the wrong
    sign). Returns (epochs, n_active, n_pass, pg_max, pg_min, violation, visits): the
    last epoch's figures (n_pass: the coordinates it visited), visits over all epochs.
    """
    epochs, n_pass, visits = 0, 0, 0
    pg_max, pg_min, violation = -np.inf, np.inf, np.inf
    d = v.shape[0]
    while epochs < max_epochs:
        epochs += 1
        shuffle_prefix(active, n_active, rstate)
        pg_max, pg_min = dcd_epoch(dense, Xd, indptr, indices, data, y, xm, mm, curv, upper,
                                   diag, rho, lam, alpha, v, state, active[:n_active], keep,
                                   bounds[0], bounds[1], shrinking)
        n_pass = n_active
        visits += n_pass
        kept = 0
        for pos in range(n_pass):
            if keep[pos]:
                active[kept] = active[pos]
                kept += 1
        n_active = kept
        if n_active == 0:
            violation = 0.0
        elif spread:
            violation = pg_max - pg_min
        else:
            violation = max(pg_max, -pg_min)
        bounds[0] = pg_max if pg_max > 0 else np.inf
        bounds[1] = pg_min if pg_min < 0 else -np.inf
        if violation <= tol or visits >= max_visits or not abs(state[2]) < _HUGE_A:
            break
        big = False
        for j in range(d):
            if not abs(v[j]) < _HUGE_V:
                big = True
                break
        if big:
            break
    return epochs, n_active, n_pass, pg_max, pg_min, violation, visits


def dcd_epoch_reference(Z: Any, y: ArrayLike, upper: Any, diag: Any, rho: float, lam: float,
                        alpha: Any, perm: Any, pg_max_old: Any, pg_min_old: Any,
                        shrinking: Any) -> Any:
    """The same epoch in numpy on explicitly centred dense rows ``Z`` (the test's oracle).

    Keeps w_c = Z^T (y * a) directly. Returns (alpha, w_c, keep, pg_max, pg_min); ``alpha``
    is a new array.
    """
    alpha = np.array(alpha, dtype=float)
    w = Z.T @ (y * alpha)
    s = float(y @ alpha)
    curv = np.maximum(np.einsum("ij,ij->i", Z, Z) + diag + rho, 1e-300)
    keep = np.ones(perm.size, dtype=bool)
    pg_max, pg_min = -math.inf, math.inf
    for pos, i in enumerate(perm):
        G = y[i] * (Z[i] @ w + lam + rho * s) - 1.0 + diag * alpha[i]
        if alpha[i] <= 0.0 and shrinking and G > pg_max_old:
            keep[pos] = False
            continue
        if alpha[i] >= upper[i] and alpha[i] > 0.0 and shrinking and G < pg_min_old:
            keep[pos] = False
            continue
        if alpha[i] <= 0.0:
            pg = min(G, 0.0) if upper[i] > 0.0 else 0.0     # U_i = 0: a_i is fixed
        else:
            pg = max(G, 0.0) if alpha[i] >= upper[i] else G
        pg_max, pg_min = max(pg_max, pg), min(pg_min, pg)
        new = float(np.clip(alpha[i] - G / curv[i], 0.0, upper[i])) if pg != 0.0 else alpha[i]
        w += (new - alpha[i]) * y[i] * Z[i]
        s += (new - alpha[i]) * y[i]
        alpha[i] = new
    return alpha, w, keep, pg_max, pg_min

load_without_refresh(globals())   # cached kernels load without numba's compiler contexts
