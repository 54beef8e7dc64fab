"""The exact C-path's elbow system and its direction (:mod:`.svm_path`).

On a segment the elbow's fractions move along d = (d a_0 / d lambda, d a_E / d lambda),
the solution of the bordered system::

    A d = [0, 1, ..., 1],      A = [[0, y_E^T], [y_E, Q_EE]],

and the margins along s = d g / d lambda = Q_E d_E + y d_0. The path keeps A's inverse N
by rank-one changes, and d with it (O(|E|), not the O(|E|^2) of N rhs, and no product
with A to check it): when sample i joins with c = [y_i, Q_Ei], u = N c and Schur
complement sigma = Q_ii - c^T u,

    d' = [d - beta u, beta],   beta = (1 - s_i) / sigma      (c^T d = s_i),

and when the last one leaves, d'_K = d_K - N_Kr d_r / N_rr. A direction is used only once
the segment's s shows that it solves the system (:func:`checked`: s_E = 1 and y_E^T d_E = 0
to 1e-9 of max_i Q_ii ||d_E||_1 + |d_0| + 1): s comes from the breakpoint's one pass over
the elbow's columns (:func:`.svm_path_pass.elbow_pass`) anyway, so the check is O(|E|).
A direction that misses it is solved again by a fresh inverse, then by least squares
(minimum norm: a singular system of duplicated samples, or more elbow points than the
kernel's rank; duplicates then move together).
"""

from __future__ import annotations

from typing import Any

import numpy as np
from scipy.linalg import lapack

from ..lapack import regular_lu
from .svm_path_kernels import direction_miss
from .svm_path_pass import G_NONE, elbow_pass

__all__ = ["bordered_inverse", "candidate", "checked", "direction", "elbow_matrix"]


def elbow_matrix(Q: np.ndarray, y: np.ndarray, idx: np.ndarray) -> np.ndarray:
    """[[0, y_E^T], [y_E, Q_EE]]: the balance row and the elbow equations."""
    m = idx.size
    A = np.empty((m + 1, m + 1))
    A[0, 0] = 0.0
    A[0, 1:] = y[idx]
    A[1:, 0] = y[idx]
    A[1:, 1:] = Q[np.ix_(idx, idx)]
    return A


def bordered_inverse(A: np.ndarray) -> np.ndarray | None:
    """The inverse of A = [[0, y_E^T], [y_E, Q_EE]] by its LU factors, or None when E is
    empty or the matrix is singular (LAPACK's estimate of the reciprocal condition number
    in the 1-norm below 1e-12: O(|E|^2) beyond the factorization, where an SVD would cost
    more than the path)."""
    if A.shape[0] <= 1:
        return None
    lu_piv = regular_lu(A, 1e-12)
    if lu_piv is None:
        return None
    inv, info = lapack.dgetri(*lu_piv)
    return inv if info == 0 else None


def _rhs(m: int) -> np.ndarray:
    rhs = np.ones(m + 1)
    rhs[0] = 0.0
    return rhs


def candidate(state: Any) -> np.ndarray | None:
    """The maintained direction d (N rhs when the updates have none), or None without an
    inverse; not yet checked."""
    if state.m == 0 or not state.has_inv:
        return None
    if state.x is None:
        state.x = state.inv_apply(_rhs(state.m))
    return state.x          # (a non-finite one fails :func:`checked`)


def checked(state: Any, x: np.ndarray, s: np.ndarray) -> bool:
    """Does d = x solve the elbow system, read off its s (module docstring)?"""
    return bool(direction_miss(x, s, state.idx, state.y, state.qmax) <= 1e-9)


def direction(state: Any) -> tuple[float, np.ndarray, np.ndarray] | None:
    """(d_0, d_E, s): the one the last pass formed and checked (``state.found``), else the
    maintained one, a fresh inverse's, least squares' - the first that passes
    :func:`checked`, its s formed by a pass over the elbow's columns; None without one."""
    if state.found is not None:
        return state.found
    if state.m == 0:
        return None
    for attempt in range(3):
        if attempt == 1:
            state.refresh_inverse()       # the updates drifted: refactorize once
        x = (candidate(state) if attempt < 2 else
             np.linalg.lstsq(state.A, _rhs(state.m), rcond=1e-12)[0])
        if x is None or not np.all(np.isfinite(x)):
            continue
        s = np.empty(state.y.size)
        elbow_pass(state.QE.T, state.m, x[1:], state.qL, 0.0, state.y, x[1:], float(x[0]),
                   state.g, s, G_NONE, True)
        if checked(state, x, s):
            state.x, state.s_x = x, s
            state.found = (float(x[0]), x[1:], s)
            return state.found
    return None
