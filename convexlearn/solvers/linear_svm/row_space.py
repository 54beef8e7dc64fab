"""The rows' span of wide data (n < d) for the exact linear SVM, with Q kept implicit.

With Z^T = Q R (Householder QR, Q: d x n with orthonormal columns), the SVM on the n x n
rows R^T is the problem on Z (w = Q w': margins and ||w|| preserved), on p = n (+ 1)
unknowns instead of d (+ 1) (:mod:`.linear_exact`). Q is never formed: LAPACK's reflectors
(``geqrf``) apply it to a vector (``ormqr``, O(n d)); forming it (``orgqr``) cost as much
as the factorization itself (200 x 500: 4.3 ms for both, 1.7 ms for the reflectors).
"""

from __future__ import annotations

import numpy as np
from scipy import linalg
from scipy.linalg import lapack

__all__ = ["RowBasis", "row_space"]

_EPS = np.finfo(float).eps


class RowBasis:
    """The columns ``keep`` of Q (Z^T = Q R) held as Householder reflectors:
    ``basis @ v`` is Q[:, keep] v, for a vector or a matrix v."""

    def __init__(self, reflectors: np.ndarray, tau: np.ndarray, keep: np.ndarray) -> None:
        self.reflectors, self.tau, self.keep = reflectors, tau, keep

    def __matmul__(self, v: np.ndarray) -> np.ndarray:
        v = np.asarray(v, dtype=float)
        c = np.zeros((self.reflectors.shape[0],) + v.shape[1:], dtype=float)
        c[np.flatnonzero(self.keep)] = v
        c2 = c.reshape(c.shape[0], -1)
        out, _, info = lapack.dormqr("L", "N", self.reflectors, self.tau, c2,
                                     lwork=max(1, 64 * c2.shape[1]))
        if info != 0:
            raise np.linalg.LinAlgError(f"ormqr failed (info {info})")
        return out.reshape(c.shape)

    @property
    def shape(self) -> tuple[int, int]:
        """(d, number of kept columns), as the dense Q[:, keep]."""
        return self.reflectors.shape[0], int(np.count_nonzero(self.keep))


def row_space(Z: np.ndarray) -> tuple[RowBasis, np.ndarray]:
    """(Q[:, keep], Z Q[:, keep]) with Z^T = Q R, R = Q^T Z^T; ``keep`` drops the
    coordinates k whose row R[k] is numerically zero (every entry below 16 n eps times the
    largest |R|: the centred rows' dependent direction); Z = (Z Q) Q^T up to those rows.
    Householder QR without pivoting (a pivoted one, LAPACK's geqp3, took 3x as long on
    500 x 200). Z is n x d with n <= d."""
    (reflectors, tau), _ = linalg.qr(Z.T, mode="raw")
    n = Z.shape[0]
    R = np.triu(reflectors[:n])
    size = np.max(np.abs(R), axis=1)
    keep = size > 16 * n * _EPS * max(float(size.max(initial=0.0)), _EPS)
    return RowBasis(reflectors, tau, keep), np.ascontiguousarray(R[keep].T)
