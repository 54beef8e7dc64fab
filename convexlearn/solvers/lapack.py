"""Small dense LAPACK calls made straight, for the loops that make thousands of them on
p x p blocks (the active-set method, the interior point, Newton): each is the routine
scipy.linalg calls, with the same arguments, so the result is the same to the bit, without
scipy's per-call argument checks and dispatch (~15-35 us a call, against 2-3 us of work
at p = 31).
"""

from __future__ import annotations

import numpy as np
from scipy.linalg.lapack import dgecon, dgetrf, dlange, dpotrf, dpotrs, dtrtrs

__all__ = ["solve_triangular", "cho_factor", "cho_solve", "regular_lu"]


def _checked(info: int, routine: str, singular: str) -> None:
    """LAPACK's ``info``: > 0 a singular / indefinite matrix (LinAlgError, as scipy),
    < 0 an illegal argument (ValueError)."""
    if info > 0:
        raise np.linalg.LinAlgError(singular.format(info))
    if info < 0:
        raise ValueError(f"illegal value in argument {-info} of {routine}")


def solve_triangular(T: np.ndarray, b: np.ndarray, trans: str = "N",
                     lower: bool = False) -> np.ndarray:
    """T x = b (``trans="T"``: T^T x = b) for triangular T (upper, or ``lower``): trtrs as
    :func:`scipy.linalg.solve_triangular` calls it (a C-ordered T as the transposed system
    on T.T, which trtrs reads in Fortran order without a copy)."""
    flag = 0 if trans == "N" else 1
    if T.flags.f_contiguous:
        x, info = dtrtrs(T, b, lower=int(lower), trans=flag)
    else:
        x, info = dtrtrs(T.T, b, lower=int(not lower), trans=1 - flag)
    _checked(info, "trtrs", "singular matrix: resolution failed at diagonal {}")
    return x


def cho_factor(H: np.ndarray) -> np.ndarray:
    """The upper Cholesky factor of H (float64; potrf as :func:`scipy.linalg.cho_factor`
    calls it, the other triangle left as it was)."""
    factor, info = dpotrf(H, lower=0, clean=0)
    _checked(info, "potrf", "{}-th leading minor of the array is not positive definite")
    return factor


def cho_solve(factor: np.ndarray, g: np.ndarray) -> np.ndarray:
    """H^{-1} g from :func:`cho_factor`'s factor (potrs, as :func:`scipy.linalg.cho_solve`
    calls it)."""
    x, info = dpotrs(factor, g, lower=0)
    _checked(info, "potrs", "{}")
    return x


def regular_lu(A: np.ndarray, rcond_min: float) -> tuple[np.ndarray, np.ndarray] | None:
    """The LU factors (lu, piv) of the square A (getrf, A not overwritten), or None when A
    is singular to the caller's precision: a zero pivot, or LAPACK's estimate of the
    reciprocal condition number 1 / (||A||_1 ||A^-1||_1) (gecon) at most ``rcond_min``
    (O(n^2) beyond the factorization, where an SVD would cost more than the solve)."""
    lu, piv, info = dgetrf(A)
    if info != 0:
        return None
    # ||A||_1 is the inf-norm of A^T: read in place when A is C-ordered (no copy)
    anorm = dlange("I", A.T) if A.flags.c_contiguous else dlange("1", A)
    rcond, info = dgecon(lu, anorm, norm="1")
    if info != 0 or not rcond > rcond_min:
        return None
    return lu, piv
