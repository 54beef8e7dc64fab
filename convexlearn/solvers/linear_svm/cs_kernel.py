"""The hot loop of the Crammer-Singer sequential dual method: one pass over the samples.

For sample i with the others fixed, LIBLINEAR's ``Solver_MCSVM_CS`` (Keerthi et al. 2008)
solves the k-variable subproblem exactly::

    min_{a_i}  1/2 A_i ||a_i||^2 + B^T a_i,   sum_m a_im = 0,   a_im <= C_i [m = y_i]

with A_i = ||x_i||^2, B_m = G_m - A_i a_im and G_m = <w_m, x_i> + e_im the gradient: the
solution is a_im = min(C_i [m = y_i], (beta - B_m) / A_i) for the beta found by sorting
D = B (+ A_i C_i at y_i) in decreasing order. The sample is skipped when its gradient
spread max_m G_m - min_{m : a_im < C_i [m = y_i]} G_m is within ``eps``.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from numba import njit

from ...compiled import load_without_refresh

__all__ = ["cs_epoch"]


@njit(cache=True)
def cs_epoch(X: Any, sq: Any, codes: Any, C: Any, A: Any, W: Any, order: Any,
             eps: float) -> float:
    """One pass over ``order``; A (n, k) and W (k, d) updated in place (W = A^T X).
    Returns the largest gradient spread met (before each sample's step)."""
    k, d = W.shape
    G = np.empty(k)
    B = np.empty(k)
    D = np.empty(k)
    worst = 0.0
    for t in range(order.shape[0]):
        i = order[t]
        Ai = sq[i]
        if Ai <= 0.0 or C[i] <= 0.0:
            continue
        yi = codes[i]
        for m in range(k):
            s = 0.0
            for j in range(d):
                s += W[m, j] * X[i, j]
            G[m] = s + (0.0 if m == yi else 1.0)
        gmax = -np.inf
        gmin = np.inf
        for m in range(k):
            if G[m] > gmax:
                gmax = G[m]
            bound = C[i] if m == yi else 0.0
            if A[i, m] < bound and G[m] < gmin:
                gmin = G[m]
        spread = gmax - gmin
        if spread > worst:
            worst = spread
        if spread <= eps:
            continue
        for m in range(k):
            B[m] = G[m] - Ai * A[i, m]
            D[m] = B[m]
        D[yi] += Ai * C[i]
        D[:] = -np.sort(-D)
        beta = D[0] - Ai * C[i]
        r = 1
        while r < k and beta < r * D[r]:
            beta += D[r]
            r += 1
        beta /= r
        for m in range(k):
            bound = C[i] if m == yi else 0.0
            new = min(bound, (beta - B[m]) / Ai)
            delta = new - A[i, m]
            if delta != 0.0:
                A[i, m] = new
                for j in range(d):
                    W[m, j] += delta * X[i, j]
    return worst

load_without_refresh(globals())   # cached kernels load without numba's compiler contexts
