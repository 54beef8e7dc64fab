"""The Gram operator: one object through which solvers and certificates read a kernel.

K_ij = k(x_i, x_j) on n training samples, seen as an operator rather than a matrix:

* ``matrix``: K formed (only when asked) and PSD-checked (``psd_check``; repaired on request);
* ``block(rows, cols)``, ``column(i)``, ``products(B) = K @ B`` and ``diagonal``: from X, by
  blocks bounded in memory (:data:`PRODUCT_BLOCK_BYTES`), when K is not in memory and the
  kernel is PSD by construction, from K otherwise;
* ``columns(cache_size)``: an LRU cache of columns bounded in MB (:class:`KernelColumns`,
  LIBSVM's ``-m``), and ``spec()`` / ``column_arrays(cache_size)``: the compiled kernel spec
  and the column-cache arrays that the numba SMO loop reads;
* ``take(index)``: the Gram matrix of the samples ``index`` (repeats allowed), K[index][:,
  index], as an operator on the same data: a dual QP with 2n variables on n samples
  (epsilon-SVR), or a sub-problem of one-vs-one;
* ``share(K)``: a Gram matrix computed elsewhere, and :class:`SharedGram`, the Gram matrix
  of all training samples shared by the binary problems of a multiclass fit.

A view (``take``) computes its entries from the base operator: nothing is copied.
"""

from __future__ import annotations

from collections import OrderedDict
from dataclasses import dataclass
from typing import Any, Callable

import numpy as np

from .data import check_positive, dense_or_refuse, is_sparse, row_sq_norms
from .errors import ParameterError
from .kernels import DEFAULT_PSD_TOL, Kernel, PSDCheck, check_psd
from .threads import by_blocks

__all__ = ["Gram", "KernelColumns", "KernelSpec", "ColumnArrays", "SharedGram",
           "KERNEL_CODES", "PRODUCT_BLOCK_BYTES", "kernel_diagonal", "kernel_products",
           "indexed_products"]

#: Memory of one block of kernel rows in :func:`kernel_products` (4 MiB: reused by the
#: allocator, not page-faulted afresh; 8 MiB cost 1.5x the CPU of an rbf K beta, n = 8000).
PRODUCT_BLOCK_BYTES = 2**22

#: Kernel codes of the compiled SMO loop (solvers/kernel_svm/smo_kernels.py).
KERNEL_CODES = {"linear": 0, "poly": 1, "rbf": 2, "sigmoid": 3, "precomputed": 4}


def indexed_products(products: Callable[[np.ndarray], np.ndarray], n: int,
                     index: np.ndarray, B: Any) -> np.ndarray:
    """``K[index][:, index] @ B`` from ``products(C) = K @ C`` of the n samples: the rows
    of B of the same sample are added first, so that one product of n rows serves all
    |index| variables (epsilon-SVR's 2n variables read n samples' kernel)."""
    B = np.asarray(B, dtype=float)
    merged = np.zeros((n,) + B.shape[1:])
    np.add.at(merged, index, B)
    return np.asarray(products(merged))[index]


def kernel_products(kernel: Kernel, X: np.ndarray, B: np.ndarray,
                    block_bytes: int | None = None) -> np.ndarray:
    """``K @ B`` for the Gram matrix K_ij = k(x_i, x_j) of X, without forming K.

    Only the rows S of B that are not all zero enter (the support of an expansion): K is
    read as blocks ``kernel(X[rows], X[S])`` of at most ``block_bytes`` bytes, so the
    memory is O(block) whatever n, and the work n |S| kernel evaluations.

    Parameters
    ----------
    kernel : Kernel
        Not ``precomputed`` (multiply the matrix itself).
    X : ndarray of shape (n, d)
    B : ndarray of shape (n,) or (n, k)
    block_bytes : int, optional
        Default :data:`PRODUCT_BLOCK_BYTES`.

    Returns
    -------
    ndarray of the shape of B
    """
    block_bytes = PRODUCT_BLOCK_BYTES if block_bytes is None else int(block_bytes)
    B = np.asarray(B, dtype=float)
    flat = B.ndim == 1
    B2 = B[:, None] if flat else B
    support = np.flatnonzero(np.any(B2 != 0.0, axis=1))
    out = np.zeros((X.shape[0], B2.shape[1]))
    if support.size:
        Xs, Bs = X[support], B2[support]
        rows = max(1, int(block_bytes // (8 * support.size)))
        def block(start: int, stop: int) -> None:
            out[start:stop] = kernel(X[start:stop], Xs) @ Bs
        # (on two threads when large: threads.by_blocks; a user's callable on one)
        by_blocks(block, X.shape[0], rows, X.shape[0] * support.size, kernel.name != "callable")
    return out[:, 0] if flat else out


def kernel_diagonal(kernel: Kernel, X: Any) -> np.ndarray:
    """The diagonal k(x_i, x_i) of the Gram matrix, without forming the matrix.

    Closed forms for the named kernels (linear ||x||^2, poly (gamma ||x||^2 + coef0)^degree,
    rbf 1, sigmoid tanh(gamma ||x||^2 + coef0)); one kernel call per sample otherwise.
    A sparse X is read in place (:func:`row_sq_norms`).
    """
    if kernel.name == "rbf":            # (no norms needed: a fixed cost of every small fit)
        return np.ones(X.shape[0])
    sq = row_sq_norms(X)
    if kernel.name == "linear":
        return sq
    if kernel.name == "poly":
        return (kernel.gamma * sq + kernel.coef0) ** kernel.degree
    if kernel.name == "sigmoid":
        return np.tanh(kernel.gamma * sq + kernel.coef0)
    return np.array([kernel(X[i:i + 1], X[i:i + 1])[0, 0] for i in range(X.shape[0])])


class Gram:
    """The training Gram matrix K_ij = k(x_i, x_j) as an operator (module docstring).

    Parameters
    ----------
    kernel : Kernel
    X : ndarray of shape (n, d), sparse matrix, or None
        The samples (None for a precomputed kernel).
    K : ndarray of shape (n, n), optional
        The matrix, when given (precomputed; checked for PSD on first use of ``matrix``).
    psd_tol : float
        Relative round-off tolerance of the PSD check.
    repair_psd : bool
        Clip negative eigenvalues of a formed K that is not PSD by construction.

    Attributes
    ----------
    psd_check : PSDCheck or None
        The outcome of the PSD check, once K was formed (``skipped`` for a kernel PSD by
        construction).
    """

    def __init__(self, kernel: Kernel, X: Any = None, K: np.ndarray | None = None, *,
                 psd_tol: float = DEFAULT_PSD_TOL, repair_psd: bool = False):
        self.kernel, self.X, self._K = kernel, X, K
        self.psd_tol, self.repair_psd = psd_tol, repair_psd
        self.psd_check: PSDCheck | None = None
        self._diagonal: np.ndarray | None = None

    # ------------------------------------------------------------------ state
    @property
    def n(self) -> int:
        """Number of samples."""
        return (self._K if self._K is not None else self.X).shape[0]

    @property
    def source(self) -> Any:
        """What the entries come from: X, or K as given (precomputed; repaired once the
        PSD check repaired it)."""
        return self.X if self.X is not None else self._K

    @property
    def formed(self) -> bool:
        """True when K is in memory (precomputed, shared, or formed for a formulation)."""
        return self._K is not None

    @property
    def from_samples(self) -> bool:
        """True when entries are computed from X (K not in memory, kernel PSD by
        construction): no n x n matrix is ever needed."""
        return self._K is None and self.X is not None and self.kernel.known_psd

    @property
    def matrix(self) -> np.ndarray:
        """K, PSD-checked (formed once: ``self.kernel(X)``)."""
        if self._K is None:
            self.densify("the Gram matrix")
            self._K = self.kernel(self.X)
        if self.psd_check is None:
            if self.kernel.known_psd:
                self.psd_check = PSDCheck(float("nan"), float("nan"), skipped=True)
            else:
                self._K, self.psd_check = check_psd(self._K, tol=self.psd_tol,
                                                    repair=self.repair_psd,
                                                    name=f"{self.kernel.describe()} Gram matrix")
        return self._K

    def densify(self, purpose: str) -> None:
        """Replace a sparse X by its dense copy (below data.DENSIFY_LIMIT_BYTES; beyond, a
        DataError gives the dense size)."""
        if is_sparse(self.X):
            self.X = dense_or_refuse(self.X, purpose)

    def share(self, K: np.ndarray) -> None:
        """Use K = kernel(X, X), computed by the caller (a block of a :class:`SharedGram`).

        Raises
        ------
        ParameterError
            Wrong shape, a kernel not PSD by construction (or precomputed), or K differing
            from the kernel on rows 0 and n - 1 (recomputed from X) by more than 1e-9 of
            their largest entry (rounding is ~1e-16 of it): a block of the wrong samples.
        """
        n = self.n
        K = np.asarray(K, dtype=float)
        if self.X is None or not self.kernel.known_psd or K.shape != (n, n):
            raise ParameterError(f"share_gram takes the ({n}, {n}) Gram matrix of a kernel "
                                 f"PSD by construction on features; got shape "
                                 f"{K.shape} for {self.kernel.describe()}")
        probe = np.unique([0, n - 1])
        rows = K[probe]
        scale = max(float(np.max(np.abs(rows))), np.finfo(float).tiny)
        if np.max(np.abs(self.kernel(self.X[probe], self.X) - rows)) > 1e-9 * scale:
            raise ParameterError("share_gram: K is not this kernel's Gram matrix of X "
                                 "(rows 0 and n - 1 differ)")
        self._K = K

    # ---------------------------------------------------------------- entries
    @property
    def diagonal(self) -> np.ndarray:
        """k(x_i, x_i), without forming K (computed once)."""
        if self._diagonal is None:
            self._diagonal = (np.diag(self.matrix).copy() if not self.from_samples
                              else kernel_diagonal(self.kernel, self.X))
        return self._diagonal

    def block(self, rows: np.ndarray, cols: np.ndarray) -> np.ndarray:
        """K[rows][:, cols]."""
        if self.from_samples:
            return self.kernel(self.X[rows], self.X[cols])
        return self.matrix[np.ix_(rows, cols)]

    def column(self, i: int) -> np.ndarray:
        """K[:, i] (uncached: see :meth:`columns` for SMO's cache)."""
        return self.block(np.arange(self.n), np.array([i]))[:, 0]

    def products(self, B: Any) -> np.ndarray:
        """``K @ B``, B of shape (n,) or (n, k): by blocks of rows against the nonzero rows
        of B (:func:`kernel_products`) when entries come from X; the matrix otherwise."""
        if self.from_samples:
            return kernel_products(self.kernel, self.X, B)
        return self.matrix @ np.asarray(B, dtype=float)

    def take(self, index: Any) -> "Gram":
        """The Gram operator of the samples ``index`` (repeats allowed): K[index][:, index]
        (:class:`IndexedGram`, computed from this one; identity: this one)."""
        index = np.asarray(index, dtype=np.intp)
        if index.size == self.n and np.array_equal(index, np.arange(self.n)):
            return self
        return IndexedGram(self, index)

    # ----------------------------------------------------------- for solvers
    def columns(self, cache_size: float = 200.0) -> "KernelColumns":
        """SMO's columns: an LRU cache bounded by ``cache_size`` MB (from X), or views of
        the checked matrix (kernels not PSD by construction, or K in memory)."""
        if not self.from_samples:
            return KernelColumns.from_gram(self.matrix)
        return KernelColumns.from_kernel(self.kernel, self.X, cache_size)

    def spec(self) -> "KernelSpec":
        """What the compiled loop needs to compute entries (:class:`KernelSpec`). Kernels
        not PSD by construction (sigmoid, callables, precomputed) go through the checked
        (possibly repaired) matrix: SMO must not run on a non-convex problem; a matrix
        already in memory (e.g. shared by a multiclass fit) is read, not recomputed."""
        placeholder = np.zeros((1, 1))
        if not self.from_samples:
            K = np.ascontiguousarray(self.matrix)
            return KernelSpec(KERNEL_CODES["precomputed"], placeholder, K, 0.0, 0.0, 1.0,
                              np.diag(K).copy(), lambda B: K @ B)
        kernel = self.kernel
        X = np.ascontiguousarray(self.X, dtype=float)
        return KernelSpec(KERNEL_CODES[kernel.name], X, placeholder, float(kernel.gamma or 0.0),
                          float(kernel.coef0 or 0.0), float(kernel.degree or 1.0),
                          kernel_diagonal(kernel, X), self.products)

    def memory_bytes(self) -> int:
        """Bytes a solver needs for K itself: 0 when entries come from X or K is in memory,
        8 n^2 when K must be formed."""
        return 0 if self.from_samples or self.formed else 8 * self.n * self.n


class IndexedGram(Gram):
    """K[index][:, index] for a base operator and an index map (repeats allowed).

    Blocks and the diagonal are read through the base; ``products`` adds B's rows of the
    same sample before one product of the base (n samples' kernel, not |index|). SMO's
    compiled loops read the base's spec and the index map (columns of the n samples,
    each computed once, as LIBSVM's SVR_Q: ``DualQP.sample_spec``); a base with K in memory
    (precomputed, or not PSD by construction) gives the view K[index][:, index] as a
    matrix."""

    def __init__(self, base: Gram, index: np.ndarray):
        super().__init__(base.kernel, None if base.X is None else base.X[index],
                         psd_tol=base.psd_tol, repair_psd=base.repair_psd)
        self.base, self.index = base, index
        # entries of a formed or checked base come from its matrix
        if not base.from_samples:
            self._K = base.matrix[np.ix_(index, index)]
            self.psd_check = base.psd_check

    @property
    def n(self) -> int:
        return self.index.size

    @property
    def diagonal(self) -> np.ndarray:
        return self.base.diagonal[self.index]

    def block(self, rows: np.ndarray, cols: np.ndarray) -> np.ndarray:
        return self.base.block(self.index[rows], self.index[cols])

    def products(self, B: Any) -> np.ndarray:
        return indexed_products(self.base.products, self.base.n, self.index, B)


@dataclass
class KernelSpec:
    """What the compiled loop needs to compute kernel entries: the kernel code of
    :data:`KERNEL_CODES`, X (or the matrix K for ``precomputed``; the other one a 1 x 1
    placeholder), the parameters, the diagonal, and ``products(B) = K @ B``."""

    code: int
    X: np.ndarray
    K: np.ndarray
    gamma: float
    coef0: float
    degree: float
    diag: np.ndarray
    products: object

    @classmethod
    def of(cls, problem: Any) -> "KernelSpec":
        """The spec of a problem's Gram operator (``problem.gram_operator``)."""
        return problem.gram_operator.spec()

    @property
    def n(self) -> int:
        return self.diag.shape[0]

    def on_variables(self, index: Any) -> tuple[np.ndarray | None, np.ndarray, Callable]:
        """(index as contiguous int64, K_tt per variable, ``B -> K[index][:, index] @ B``)
        for variables on the samples ``index`` (None: one variable per sample, this spec's
        own diagonal and products)."""
        if index is None:
            return None, self.diag, self.products
        index = np.ascontiguousarray(index, dtype=np.int64)
        return (index, np.ascontiguousarray(self.diag[index]),
                lambda B: indexed_products(self.products, self.n, index, B))

    def column_arrays(self, cache_size: float) -> "ColumnArrays":
        """The column-cache arrays of the compiled loop for this spec's samples."""
        return ColumnArrays(self.n, cache_size, self.X)


class ColumnArrays:
    """The arrays of the compiled loop's kernel-column cache, bounded in megabytes.

    ``capacity = max(2, floor(cache_mb * 2**20 / (8 n)))`` columns of n doubles, at most
    n (then the whole matrix fits). ``hits`` and ``misses`` count column requests.
    """

    def __init__(self, n: int, cache_mb: float, X: np.ndarray | None = None):
        self.n = int(n)
        self.cache_mb = float(cache_mb)
        capacity = max(2, int(self.cache_mb * 2**20 // (8 * max(self.n, 1))))
        self.capacity = min(capacity, max(self.n, 2))
        self.data = np.empty((self.capacity, max(self.n, 1)))
        self.slot_of = np.full(max(self.n, 1), -1, dtype=np.int64)
        self.owner = np.full(self.capacity, -1, dtype=np.int64)
        self.stamp = np.full(self.capacity, -1, dtype=np.int64)
        self.partial = np.zeros(self.capacity, dtype=np.bool_)
        # clock, hits, misses, gbar updates, gbar updates computing a column afresh
        self.counters = np.zeros(5, dtype=np.int64)
        self.bits = np.empty(max(self.n, 1), dtype=np.int64)     # scratch of the rbf exp
        self.scratch = np.empty((2, max(self.n, 1)))            # an uncached column
        self.XT = None if X is None else np.ascontiguousarray(X.T)

    def arrays(self, XT: np.ndarray | None = None) -> tuple:
        """(data, slot_of, owner, stamp, partial, counters, XT, bits, scratch), in the
        compiled loop's order; ``XT`` is the data transposed (d x n, contiguous)."""
        return (self.data, self.slot_of, self.owner, self.stamp, self.partial,
                self.counters, self.XT if XT is None else XT, self.bits, self.scratch)

    def stats(self) -> dict:
        """Hits, misses, cached columns and the bound, for ``Solution.extra``."""
        return {"hits": int(self.counters[1]), "misses": int(self.counters[2]),
                "gbar_updates": int(self.counters[3]), "gbar_computed": int(self.counters[4]),
                "columns": int(np.count_nonzero(self.owner >= 0)),
                "capacity_columns": self.capacity, "cache_size_mb": self.cache_mb}


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
        self._matrix: np.ndarray | None = None       # from_gram: a column is a row view
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
        cols = cls(lambda idx: K[idx], K.shape[0], np.diag(K).copy(),
                   cache_size=max(1.0, K.nbytes / 2**20 + 1.0))
        if K.dtype == np.float64:
            cols._matrix = K
        return cols

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
        col = (self._matrix[i] if self._matrix is not None      # (K symmetric: row i)
               else np.asarray(self._compute(np.array([i])), dtype=float)[0])
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


class SharedGram:
    """The Gram matrix G = kernel(X, X) of all training samples, and blocks of it.

    One-vs-one (``grouped``): stored as the upper triangle of G with the samples grouped
    by class, one row block per class c: ``kernel(X_c, [X_c, X_{c+1}, ..., X_{K-1}])``
    (half of G's kernel evaluations; the blocks below the diagonal are transposes). A
    pair's block (class i's samples, then class j's) is then four slices of two row
    blocks. One-vs-rest: G itself, in training order (each problem reads all of it).

    Parameters
    ----------
    kernel : Kernel or callable ``kernel(A, B=None)`` forming its blocks
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
        sizes = np.array([m.size for m in members])
        self.offset = np.concatenate([[0], np.cumsum(sizes)])     # class c's first row of G
        self.local = np.empty(codes.size, dtype=np.int64)         # index within its class
        for m in members:
            self.local[m] = np.arange(m.size)
        Xg, o = X[np.concatenate(members)], self.offset   # one gather; blocks: slices
        self.rows_of = [kernel(Xg[o[c]:o[c + 1]], Xg[o[c]:]) for c in range(n_classes)]
        self.members = members

    def block(self, rows: np.ndarray) -> np.ndarray:
        """K[rows][:, rows] for training indices ``rows`` (a new array, or G itself when
        ``rows`` are all samples in order, one-vs-rest)."""
        if not self.grouped:
            if rows.size == self.codes.size and np.array_equal(rows, np.arange(rows.size)):
                return self.G
            return self.G[np.ix_(rows, rows)]
        pair = self._pair_block(rows)
        if pair is not None:
            return pair
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

    def _pair_block(self, rows: np.ndarray) -> np.ndarray | None:
        """The block of a one-vs-one pair's rows (all of class i's samples, then all of
        class j's, i < j): four slices of two row blocks, or None for other rows."""
        if rows.size == 0:
            return None
        i, j = int(self.codes[rows[0]]), int(self.codes[rows[-1]])
        a, b = self.members[i].size, self.members[j].size
        if (i >= j or rows.size != a + b or not np.array_equal(rows[:a], self.members[i])
                or not np.array_equal(rows[a:], self.members[j])):
            return None
        shift = self.offset[j] - self.offset[i]
        out = np.empty((a + b, a + b))
        out[:a, :a] = self.rows_of[i][:, :a]
        out[:a, a:] = self.rows_of[i][:, shift:shift + b]
        out[a:, :a] = out[:a, a:].T
        out[a:, a:] = self.rows_of[j][:, :b]
        return out


def _take(M: np.ndarray, r: np.ndarray, c: np.ndarray) -> np.ndarray:
    """M[r][:, c]: slices when r and c are runs of consecutive indices, else a gather."""
    if _is_run(r) and _is_run(c):
        return M[r[0]:r[-1] + 1, c[0]:c[-1] + 1]
    return M[np.ix_(r, c)]


def _is_run(idx: np.ndarray) -> bool:
    return idx.size > 0 and idx[-1] - idx[0] == idx.size - 1 and bool(np.all(np.diff(idx) == 1))
