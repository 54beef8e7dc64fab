"""Kernel columns on demand, with a least-recently-used cache bounded in memory.

A working-set method (SMO) touches two columns ``K[:, i]`` of the n x n Gram matrix per
iteration and revisits the same few hundred columns many times, so LIBSVM keeps a cache
of recently used columns instead of the whole matrix (n = 50 000 would need 20 GB).
:class:`KernelColumns` does the same: columns are computed in vectorized blocks
``kernel(X[idx], X)``, kept in an ``OrderedDict`` in least-recently-used order, and the
oldest are evicted when the cache would exceed ``cache_size`` megabytes.
"""

from __future__ import annotations

from collections import OrderedDict
from typing import Any, Callable

import numpy as np

from ...data import check_positive
from ...kernels import Kernel

__all__ = ["KernelColumns", "kernel_diagonal"]


def kernel_diagonal(kernel: Kernel, X: np.ndarray) -> np.ndarray:
    """The diagonal k(x_i, x_i) of the Gram matrix, without forming the matrix.

    Closed forms for the named kernels (linear ||x||^2, poly (gamma ||x||^2 + coef0)^degree,
    rbf 1, sigmoid tanh(gamma ||x||^2 + coef0)); one kernel call per sample otherwise.
    """
    sq = np.einsum("ij,ij->i", X, X)
    if kernel.name == "linear":
        return sq
    if kernel.name == "poly":
        return (kernel.gamma * sq + kernel.coef0) ** kernel.degree
    if kernel.name == "rbf":
        return np.ones(X.shape[0])
    if kernel.name == "sigmoid":
        return np.tanh(kernel.gamma * sq + kernel.coef0)
    return np.array([kernel(X[i:i + 1], X[i:i + 1])[0, 0] for i in range(X.shape[0])])


class KernelColumns:
    """Columns of a Gram matrix, computed on demand and cached (LRU, bounded in MB).

    Parameters
    ----------
    compute : callable
        ``compute(idx) -> ndarray of shape (len(idx), n)``: the rows ``K[idx, :]`` (equal
        to the columns, K being symmetric).
    n : int
        Number of samples.
    diagonal : ndarray of shape (n,)
        k(x_i, x_i), kept apart so that second-order selection needs no column.
    cache_size : float
        Memory bound of the cache in megabytes (LIBSVM's ``-m``; default 200). At least
        two columns are always kept, since an SMO step needs two at once.

    Attributes
    ----------
    hits, misses : int
        Cache statistics (a miss computes the column).
    """

    def __init__(self, compute: Callable[[np.ndarray], np.ndarray], n: int,
                 diagonal: np.ndarray, cache_size: float = 200.0):
        self._compute = compute
        self.n = int(n)
        self.diagonal = np.asarray(diagonal, dtype=float)
        self.cache_size = check_positive("cache_size", cache_size)
        column_bytes = 8 * max(self.n, 1)
        self.capacity = max(2, int(self.cache_size * 2**20 // column_bytes))
        self._cache: OrderedDict[int, np.ndarray] = OrderedDict()
        self.hits = 0
        self.misses = 0

    @classmethod
    def from_kernel(cls, kernel: Kernel, X: np.ndarray,
                    cache_size: float = 200.0) -> "KernelColumns":
        """Columns of ``kernel`` on the rows of ``X``, computed as ``kernel(X[idx], X)``.

        For rbf, the squared norms ||x_j||^2 are computed once (a column is then one
        matrix-vector product and one exp), instead of on every call.
        """
        if kernel.name == "rbf":
            sq = np.einsum("ij,ij->i", X, X)
            gamma = kernel.gamma

            def compute(idx):
                d2 = sq[idx, None] + sq[None, :] - 2.0 * (X[idx] @ X.T)
                np.maximum(d2, 0.0, out=d2)     # round-off can make it slightly negative
                d2 *= -gamma
                return np.exp(d2, out=d2)
        else:
            def compute(idx):
                return kernel(X[idx], X)
        return cls(compute, X.shape[0], kernel_diagonal(kernel, X), cache_size)

    @classmethod
    def from_gram(cls, K: np.ndarray) -> "KernelColumns":
        """Columns of an explicit Gram matrix (views, nothing computed or copied)."""
        # The matrix is already in memory: rows are views, no eviction needed.
        return cls(lambda idx: K[idx], K.shape[0], np.diag(K).copy(),
                   cache_size=max(1.0, K.nbytes / 2**20 + 1.0))

    def __len__(self) -> int:
        return len(self._cache)

    @property
    def nbytes(self) -> int:
        """Memory held by cached columns."""
        return 8 * self.n * len(self._cache)

    def column(self, i: int) -> np.ndarray:
        """``K[:, i]`` (read-only use), from the cache when present."""
        col = self._cache.get(i)
        if col is not None:
            self.hits += 1
            self._cache.move_to_end(i)
            return col
        self.misses += 1
        col = np.asarray(self._compute(np.array([i])), dtype=float)[0]
        self._store(i, col)
        return col

    def columns(self, idx: Any) -> np.ndarray:
        """``K[idx, :]`` as an array of shape (len(idx), n); missing columns in one block."""
        idx = np.asarray(idx, dtype=np.intp)
        out = np.empty((idx.size, self.n))
        missing: dict[int, list[int]] = {}          # column -> its rows in ``out``
        for k, i in enumerate(idx.tolist()):
            col = self._cache.get(i)
            if col is None:
                missing.setdefault(i, []).append(k)
            else:
                self.hits += 1
                self._cache.move_to_end(i)
                out[k] = col
        self.misses += len(missing)
        order = list(missing)
        # Compute in blocks no larger than the cache, so the memory bound holds.
        for start in range(0, len(order), self.capacity):
            chunk = order[start:start + self.capacity]
            block = np.asarray(self._compute(np.array(chunk)), dtype=float)
            for i, row in zip(chunk, block):
                out[missing[i]] = row
                self._store(i, row.copy())
        return out

    def _store(self, i: int, col: np.ndarray) -> None:
        self._cache[i] = col
        while len(self._cache) > self.capacity:
            self._cache.popitem(last=False)

    def stats(self) -> dict:
        """Hits, misses, cached columns and memory, for ``Solution.extra``."""
        return {"hits": self.hits, "misses": self.misses, "columns": len(self._cache),
                "capacity_columns": self.capacity, "cache_size_mb": self.cache_size}
