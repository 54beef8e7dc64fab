"""The rbf Gram blocks of a multiclass fit's shared Gram matrix, in one compiled pass.

``kernels.Kernel`` forms an rbf block K(A, B) as numpy does: ||a||^2 + ||b||^2 - 2 A B^T,
clipped at 0, times -gamma, exp - five passes over an m x n array, and numpy's exp is the
scalar libm call (~9 ns an entry on AVX2 machines: on the 10-class digits fit, 1347
samples, the exp alone was half of the Gram matrix's cost). :func:`rbf_block` keeps BLAS's
product A B^T and does the rest in one pass per row, with SMO's vectorizable exp
(:func:`~convexlearn.solvers.kernel_svm.smo_kernels.exp_nonpositive`, a few ulps from
numpy's: the kernel the compiled SMO loop computes its columns with). The squared distance
and its scaling are rounded as in ``kernels.Kernel`` (the same operations, in the same
order); only the exp differs, by a few ulps (a test holds the two within 1e-14 relative).
"""

from __future__ import annotations

import math
from typing import Any, Callable

import numpy as np
from numba import njit

from ...compiled import load_without_refresh
from .smo_kernels import exp_nonpositive

__all__ = ["rbf_block", "gram_block_function"]

# fastmath without reassociation (smo_kernels' flags): the row loop vectorizes
_FAST = {"nnan", "ninf", "nsz", "contract", "arcp"}


@njit(fastmath=_FAST, cache=True)
def _rbf_rows(AB, na, nb, gamma, bits, arg):
    """AB <- exp(-gamma max(na_i + nb_j - 2 AB_ij, 0)) in place, row by row (``arg``: a
    row's exponents, kept for the few below -708, which the vectorized exp clamps)."""
    m, n = AB.shape
    for i in range(m):
        row = AB[i]
        low = False
        for t in range(n):
            d2 = (na[i] + nb[t]) + (-2.0 * row[t])   # (-2 AB_ij exact: one rounding, as numpy)
            a = -gamma * max(d2, 0.0)
            arg[t] = a
            row[t] = a
            low |= a < -708.0
        exp_nonpositive(row, bits)
        if low:             # exp(x) < 3.3e-308: libm's (subnormal or 0), as numpy
            for t in range(n):
                if arg[t] < -708.0:
                    row[t] = math.exp(arg[t])


def rbf_block(A: np.ndarray, B: np.ndarray, gamma: float) -> np.ndarray:
    """K_ij = exp(-gamma ||a_i - b_j||^2) for the rows of A (m x d) and B (n x d), dense
    float64: ||a_i||^2 + ||b_j||^2 - 2 a_i . b_j clipped at 0 (cancellation), the product
    by BLAS, the rest in one compiled pass (module docstring)."""
    A = np.ascontiguousarray(A, dtype=np.float64)
    B = np.ascontiguousarray(B, dtype=np.float64)
    K = A @ B.T
    if K.size:
        _rbf_rows(K, (A * A).sum(1), (B * B).sum(1), float(gamma),
                  np.empty(K.shape[1], dtype=np.int64), np.empty(K.shape[1]))
    return K


def gram_block_function(kernel: Any) -> Callable[..., np.ndarray]:
    """The function (A, B=None) -> K(A, B) (B None: A) a shared Gram matrix forms its
    blocks with: rbf's compiled pass (:func:`rbf_block`), else the kernel itself."""
    if getattr(kernel, "name", None) == "rbf":
        gamma = float(kernel.gamma)
        return lambda A, B=None: rbf_block(A, A if B is None else B, gamma)
    return kernel


load_without_refresh(globals())   # cached kernels load without numba's compiler contexts
