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
"""

from __future__ import annotations

from typing import Any

import math

import numpy as np
from numpy.typing import ArrayLike
from numba import njit

from ...compiled import load_without_refresh

__all__ = ["dcd_epoch", "dcd_epoch_reference", "STATE_FIELDS"]

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
