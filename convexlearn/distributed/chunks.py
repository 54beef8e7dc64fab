"""Row-chunked data on a Dask cluster: validation, label mapping and chunk-wise reductions.

X is a dask array of shape (n, d) chunked by rows only (column chunks are merged: a
row block must hold whole samples); y a dask (or numpy) vector cut into the same row
blocks. Nothing here gathers more than a reduced quantity (a scalar, a d-vector, a
d x d matrix) or, where a caller asks for it, the few rows it names.

Every reduction is a map over the row blocks followed by a binary tree of sums
(:func:`tree_reduce`), computed with ``dask.compute`` on the given client (or the
default scheduler: a ``dask.distributed.Client`` made current, or threads).
"""

from __future__ import annotations

import math
from typing import Any, Callable

import numpy as np
from numpy.typing import ArrayLike

from ..data import LabelMap, as_sample_weight, show_values
from ..errors import DataError, ParameterError

__all__ = ["ChunkedData", "tree_reduce", "add_parts", "combine_concat", "is_dask_array"]


def is_dask_array(obj: Any) -> bool:
    """True for a ``dask.array.Array`` (without importing dask when the caller has not)."""
    import sys
    module = sys.modules.get("dask.array")
    return module is not None and isinstance(obj, module.Array)


def add_parts(a: Any, b: Any) -> Any:
    """Elementwise sum of two equally shaped tuples of numbers/arrays (``None`` = absent)."""
    if isinstance(a, tuple):
        return tuple(add_parts(u, v) for u, v in zip(a, b))
    return a + b


def tree_reduce(parts: list, combine: Callable = add_parts) -> Any:
    """Combine delayed parts pairwise up a binary tree (depth log2 of their number)."""
    from dask import delayed
    if not parts:
        raise ValueError("tree_reduce needs at least one part")
    level = list(parts)
    while len(level) > 1:
        nxt = [delayed(combine, pure=True)(level[i], level[i + 1])
               for i in range(0, len(level) - 1, 2)]
        if len(level) % 2:
            nxt.append(level[-1])
        level = nxt
    return level[0]


def _signed(y_block, positive):
    return np.where(y_block == positive, 1.0, -1.0)


class ChunkedData:
    """X and y as aligned row blocks on the cluster, validated.

    Parameters
    ----------
    X : dask.array.Array (n, d)
        Real, finite; rechunked to whole rows when it has several column chunks.
    y : dask.array.Array or array_like (n,)
    task : str
        "classification" (two labels, mapped to {-1, +1} by scikit-learn's rule,
        classes[0] -> -1) or "regression" (real targets).
    client : dask.distributed.Client, optional
        Where to compute; default the current default scheduler.
    sample_weight : dask.array.Array or array_like (n,), optional
        Weights s_i >= 0, not all 0. Kept normalized, v = s n / sum(s) (so sum v = n and
        (1/n) sum_i v_i l_i = (1/sum s) sum_i s_i l_i): every block function gets its
        block of v as the keyword ``weight`` (see :meth:`map_reduce`).
    normalize : bool
        False: the weights are kept as given, v = s (the SVM's per-sample costs C s_i),
        with the same checks; ``weight_total`` is sum(s) either way.

    Attributes
    ----------
    n, d : int
    X, y : dask.array.Array
        y in {-1.0, +1.0} for classification.
    label_map : LabelMap or None
    blocks : list of (delayed X block, delayed y block, int offset)
    weight_blocks : list of delayed v blocks, or None (unweighted)
    """

    def __init__(self, X: ArrayLike, y: ArrayLike, task: str, client: Any = None,
                 sample_weight: Any = None, normalize: bool = True):
        import dask.array as da
        if not is_dask_array(X):
            raise DataError(f"X must be a dask array here; got {type(X).__name__}")
        if X.ndim != 2:
            raise DataError(f"X must be 2-D (n_samples, n_features); got shape {X.shape}")
        if any(math.isnan(s) for s in X.shape):
            raise DataError("X has unknown chunk sizes (nan in its shape); call "
                            "X.compute_chunk_sizes() first")
        if X.shape[0] == 0 or X.shape[1] == 0:
            raise DataError(f"X is empty: shape {X.shape}")
        if X.dtype.kind not in "biuf":
            raise DataError(f"X must be real numbers; got dtype {X.dtype}")
        if len(X.chunks[1]) > 1:
            X = X.rechunk({1: -1})        # a block must hold whole samples
        X = X.astype(float)
        if not is_dask_array(y):
            y_np = np.asarray(y)
            if y_np.ndim != 1:
                raise DataError(f"y must be 1-D; got shape {y_np.shape}")
            y = da.from_array(y_np, chunks=(X.chunks[0],))
        if y.ndim != 1 or y.shape[0] != X.shape[0]:
            raise DataError(f"y has shape {y.shape}; X has {X.shape[0]} samples")
        if y.chunks[0] != X.chunks[0]:
            y = y.rechunk((X.chunks[0],))
        self.client = client
        self.n, self.d = int(X.shape[0]), int(X.shape[1])
        if task == "classification":
            classes = np.sort(self.compute(da.unique(y)))
            if classes.size != 2:
                what = "one class" if classes.size == 1 else f"{classes.size} classes"
                raise DataError(f"y must have exactly two classes for a binary model; found "
                                f"{what}: {show_values(classes)}")
            if classes.dtype.kind == "f" and not np.all(np.isfinite(classes)):
                raise DataError("y contains NaN or infinite values")
            self.label_map = LabelMap(classes=classes)
            y = y.map_blocks(_signed, classes[1], dtype=float)
        elif task == "regression":
            if y.dtype.kind not in "biuf":
                raise DataError(f"y must be real targets for a regression loss; got dtype "
                                f"{y.dtype}")
            self.label_map = None
            y = y.astype(float)
        else:
            raise ParameterError(f"task must be 'classification' or 'regression'; got {task!r}")
        self.X, self.y = X, y
        xb, yb = X.to_delayed().ravel(), y.to_delayed().ravel()
        offsets = np.concatenate([[0], np.cumsum(X.chunks[0])[:-1]]).astype(int)
        self.blocks = list(zip(xb, yb, offsets.tolist()))
        self.chunk_rows = tuple(int(c) for c in X.chunks[0])
        self.weight_total = None
        self.weights = self._normalized_weights(sample_weight, X.chunks[0], normalize)
        self.weight_blocks = (None if self.weights is None
                              else list(self.weights.to_delayed().ravel()))

    def _normalized_weights(self, sample_weight: Any, chunks: tuple, normalize: bool = True
                            ) -> Any:
        """v = s n / sum(s) (s itself when not ``normalize``) as a dask array in the row
        blocks of X (validated: finite, >= 0, not all zero), or None."""
        import dask.array as da
        if sample_weight is None:
            return None
        if not is_dask_array(sample_weight):
            s = as_sample_weight(sample_weight, self.n)
            s = da.from_array(s, chunks=(chunks,))
        else:
            if sample_weight.ndim != 1 or sample_weight.shape[0] != self.n:
                raise DataError(f"sample_weight has shape {sample_weight.shape}; X has "
                                f"{self.n} samples")
            s = sample_weight.astype(float).rechunk((chunks,))
        low, total, finite = self.compute(s.min(), s.sum(), da.isfinite(s).all())
        if not finite:
            raise DataError("sample_weight contains NaN or infinite values")
        if low < 0:
            raise DataError(f"sample_weight must be >= 0; found {float(low)!r}")
        if not total > 0:
            raise DataError("sample_weight is zero everywhere: no sample is left to fit "
                            "(a weight of zero removes the sample)")
        self.weight_total = float(total)
        return s * (self.n / float(total)) if normalize else s

    def _weight_of(self, k: int) -> dict:
        """The keyword arguments of block k's task: {} or {"weight": its v block}."""
        return {} if self.weight_blocks is None else {"weight": self.weight_blocks[k]}

    @property
    def n_chunks(self) -> int:
        """Number of row blocks."""
        return len(self.blocks)

    def compute(self, *values) -> Any:
        """``dask.compute`` on this data's client (one value -> that value)."""
        import dask
        kwargs = {} if self.client is None else {"scheduler": self.client}
        out = dask.compute(*values, **kwargs)
        return out[0] if len(values) == 1 else out

    def map_reduce(self, func: Callable, *args, combine: Callable = add_parts,
                   with_offset: bool = False) -> Any:
        """sum_k func(X_k, y_k, *args) over the row blocks (tree reduction), computed.

        ``func`` runs on a worker and must return a tuple of numbers/arrays (or what
        ``combine`` adds); small arguments (a d-vector) travel with each task.
        ``with_offset``: pass the block's first row index as a third argument. With
        sample weights ``func`` also gets ``weight=`` its block of v (class docstring).
        """
        from dask import delayed
        f = delayed(func, pure=True)
        parts = [f(xb, yb, off, *args, **self._weight_of(k)) if with_offset
                 else f(xb, yb, *args, **self._weight_of(k))
                 for k, (xb, yb, off) in enumerate(self.blocks)]
        return self.compute(tree_reduce(parts, combine))

    def map_blocks(self, func: Callable, *args) -> list:
        """[func(X_k, y_k, offset_k, *args) for each block], computed, in block order
        (``weight=`` as in :meth:`map_reduce`)."""
        from dask import delayed
        f = delayed(func, pure=True)
        return list(self.compute(*[f(xb, yb, off, *args, **self._weight_of(k))
                                   for k, (xb, yb, off) in enumerate(self.blocks)]))

    def tasks(self, func: Callable, per_block: list) -> list:
        """[func(X_k, y_k, offset_k, *per_block[k]) for each block] as delayed tasks
        (``weight=`` as in :meth:`map_reduce`): block-specific arguments."""
        from dask import delayed
        f = delayed(func, pure=True)
        return [f(xb, yb, off, *per_block[k], **self._weight_of(k))
                for k, (xb, yb, off) in enumerate(self.blocks)]

    def rows(self, index: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """(X[index], y[index]) gathered, for a few rows named by global index (sorted)."""
        index = np.asarray(index, dtype=int)
        if index.size == 0:
            return np.zeros((0, self.d)), np.zeros(0)
        order = np.argsort(index)
        idx = index[order]
        Xs, ys = self.compute(self.X[idx], self.y[idx])
        inv = np.empty_like(order)
        inv[order] = np.arange(order.size)
        return np.asarray(Xs)[inv], np.asarray(ys)[inv]


def combine_concat(a: Any, b: Any) -> Any:
    """Like :func:`add_parts`, but lists are concatenated (rows picked on the chunks)."""
    return tuple(u + v if isinstance(u, list) else add_parts(u, v) for u, v in zip(a, b))

