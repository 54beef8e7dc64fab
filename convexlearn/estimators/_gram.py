"""One Gram matrix of all training samples, shared by the binary problems of a multiclass fit.

The K (K - 1) / 2 one-vs-one problems of K classes (or the K one-vs-rest problems) are
problems on subsets of the same samples: each needs its block of the kernel matrix G of all
training samples. Forming G once evaluates every entry once, where solving each problem
from X evaluates its SMO columns, its products K beta (polish, certificate) and its
free-set blocks again, per problem (one-vs-one: every block of a class with itself is read
by K - 1 pairs). For one-vs-one, G is stored by class (:class:`SharedGram`): a pair's
block is then copied from four slices, with no gather.

Only for kernels PSD by construction (a block of G needs no check of its own) and when G
fits in :data:`SHARED_GRAM_BYTES` (LIBSVM's default kernel cache, 200 MiB).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ..kernels import make_kernel

__all__ = ["SHARED_GRAM_BYTES", "SharedGram", "shared_gram"]

#: Largest shared Gram matrix, in bytes (8 n^2 for n training samples).
SHARED_GRAM_BYTES = 200 * 2**20

class SharedGram:
    """The Gram matrix G = kernel(X, X) of all training samples, and blocks of it.

    One-vs-one (``grouped``): stored as the upper triangle of G with the samples grouped
    by class, one row block per class c: ``kernel(X_c, [X_c, X_{c+1}, ..., X_{K-1}])``
    (half of G's kernel evaluations; the blocks below the diagonal are transposes). A
    pair's block (class i's samples, then class j's) is then four slices of two row
    blocks. One-vs-rest: G itself, in training order (each problem reads all of it).

    Parameters
    ----------
    kernel : Kernel
        PSD by construction (not checked here; :func:`shared_gram` decides).
    X : ndarray of shape (n, d)
    codes : ndarray of int, shape (n,)
        Class index (0 .. K-1) of each sample.
    grouped : bool
    """

    def __init__(self, kernel: Any, X: np.ndarray, codes: np.ndarray, grouped: bool) -> None:
        self.codes = codes
        self.grouped = grouped
        if not grouped:
            self.G = kernel(X)
            return
        n_classes = int(codes.max()) + 1
        members = [np.flatnonzero(codes == c) for c in range(n_classes)]
        order = np.concatenate(members)
        sizes = np.array([m.size for m in members])
        self.offset = np.concatenate([[0], np.cumsum(sizes)])     # class c's first row of G
        self.local = np.empty(codes.size, dtype=np.int64)         # index within its class
        for m in members:
            self.local[m] = np.arange(m.size)
        self.rows_of = [kernel(X[m], X[order[self.offset[c]:]]) for c, m in enumerate(members)]

    def block(self, rows: np.ndarray) -> np.ndarray:
        """K[rows][:, rows] for training indices ``rows`` (a new array, or G itself when
        ``rows`` are all samples in order, one-vs-rest)."""
        if not self.grouped:
            if rows.size == self.codes.size and np.array_equal(rows, np.arange(rows.size)):
                return self.G
            return self.G[np.ix_(rows, rows)]
        c = self.codes[rows]
        if np.any(np.diff(c) < 0):     # not grouped by class: build grouped, then permute
            perm = np.argsort(c, kind="stable")
            inverse = np.empty_like(perm)
            inverse[perm] = np.arange(perm.size)
            return self.block(rows[perm])[np.ix_(inverse, inverse)]
        cuts = np.flatnonzero(np.diff(c)) + 1
        segments = [(int(c[s]), self.local[rows[s:e]], slice(s, e))
                    for s, e in zip(np.concatenate([[0], cuts]),
                                    np.concatenate([cuts, [rows.size]]))]
        out = np.empty((rows.size, rows.size))
        for a, (ca, la, sa) in enumerate(segments):
            for cb, lb, sb in segments[a:]:
                sub = _take(self.rows_of[ca], la, lb + (self.offset[cb] - self.offset[ca]))
                out[sa, sb] = sub
                if cb != ca:
                    out[sb, sa] = sub.T
        return out


def _take(M: np.ndarray, r: np.ndarray, c: np.ndarray) -> np.ndarray:
    """M[r][:, c]: slices when r and c are runs of consecutive indices, else a gather."""
    if _is_run(r) and _is_run(c):
        return M[r[0]:r[-1] + 1, c[0]:c[-1] + 1]
    return M[np.ix_(r, c)]


def _is_run(idx: np.ndarray) -> bool:
    return idx.size > 0 and idx[-1] - idx[0] == idx.size - 1 and bool(np.all(np.diff(idx) == 1))


def shared_gram(spec: dict, gamma: Any, X: np.ndarray, codes: np.ndarray,
                scheme: str) -> SharedGram | None:
    """The shared Gram matrix of a fit, or None where it does not pay or does not apply.

    Parameters
    ----------
    spec : dict
        The estimator's kernel parameters (kernel, degree, coef0).
    gamma : float or None
        The resolved gamma.
    X : ndarray of shape (n, d)
        Training samples (dense).
    codes : ndarray of int, shape (n,)
        Class index (0 .. K-1) of each sample.
    scheme : {"ovo", "ovr"}
        One-vs-one stores G with the samples grouped by class (its problems read class
        blocks); one-vs-rest in training order (each problem reads all of G).

    Returns
    -------
    SharedGram or None
        None for two classes (one problem: SMO computes only the columns it needs, fewer
        than all of G), the linear kernel (its exact route works on X), callables,
        kernels not PSD by construction (each problem checks its own Gram matrix), and
        8 n^2 > :data:`SHARED_GRAM_BYTES`.
    """
    n = X.shape[0]
    name = spec["kernel"]
    if (np.max(codes) < 2 or callable(name) or name in ("linear", "precomputed")
            or 8 * n * n > SHARED_GRAM_BYTES):
        return None
    kernel = make_kernel(name, X, gamma=gamma, degree=spec["degree"], coef0=spec["coef0"])
    if not kernel.known_psd:
        return None
    return SharedGram(kernel, X, codes, scheme == "ovo")
