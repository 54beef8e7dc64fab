"""The cascade SVM (Graf, Cosatto, Bottou, Dourdanovic and Vapnik, "Parallel support vector
machines: the Cascade SVM", NIPS 2004), finished by an active-set polish so that the
answer is the exact optimum of the whole problem, certified on every chunk.

One pass of the cascade, with S the support set of the previous pass (empty at first):

1. every row block k solves the dual SVM on its rows plus S (the package's SMO,
   :func:`convexlearn.solvers.kernel_svm.smo.solve_svm`, on a :class:`convexlearn.SVM` built from
   them) and keeps its support vectors;
2. the support sets are merged pairwise up a binary tree, each merge solving the SVM on
   the union and keeping its support vectors; the root's support set is the new S.

Passes repeat until S stops changing (Graf et al. prove the root's dual objective
increases pass after pass and reaches the global optimum). The exact finish: on a working
set W (S, then S plus any violators found) SMO at tolerance ``finish_tol`` followed by
the active-set polish (:func:`convexlearn.solvers.kernel_svm.polish.polish_alpha`) gives the exact
optimum of the SVM restricted to W, alpha = 0 outside. That is the global optimum iff no
sample outside W violates its KKT condition, m_i = y_i f(x_i) >= 1 (alpha_i = 0): a pass
over every chunk computes its margins against the expansion on W and returns the worst
violators (at most ``max_add`` per chunk), which join W; repeat until none is left at
``cert_tol``. Only support sets (rows of X) and scalars travel; each chunk's kernel block
against W is formed on its worker.

Memory on a worker: its kernel rows against W are formed by blocks of at most
:func:`worker_block_bytes` (a share of the worker's ``memory_limit`` per thread), and the
SMO kernel cache of a leaf or a merge is bounded likewise (:func:`worker_cache_mb`), as the
in-memory routes bound theirs in MB: a chunk of 25000 rows against 30000 support vectors
(6 GB at once) stays within a 2 GiB worker.
"""

from __future__ import annotations

from typing import Any

import math

import numpy as np

from ..kernels import Kernel
from ..solvers.kernel_svm.polish import polish_alpha
from ..solvers.kernel_svm.smo import solve_svm

__all__ = ["cascade_pass", "margins_outside", "solve_on", "polished", "empty_set",
           "worker_block_bytes", "worker_cache_mb", "expansion_values"]

#: Share of a worker's memory per thread for one block of kernel rows: the block and the
#: kernel's temporaries (the rbf's squared distances, formed in place: ~3 blocks at most)
#: next to the chunk, the support set and the imports.
BLOCK_SHARE = 1 / 16
#: Share of a worker's memory per thread for a leaf's or a merge's SMO column cache.
CACHE_SHARE = 1 / 8
#: Off a worker, or a worker without a memory limit: the in-memory bounds (SMO's default
#: cache; a block of kernel rows of 64 MiB).
DEFAULT_BLOCK_BYTES, DEFAULT_CACHE_MB = 64 * 2**20, 200.0


def _worker_memory() -> float | None:
    """Bytes of memory per thread of the dask worker running this task (its
    ``memory_limit`` / threads), or None off a worker or without a limit."""
    try:
        from distributed import get_worker
        worker = get_worker()
    except (ImportError, ValueError):
        return None
    limit = worker.memory_manager.memory_limit
    return limit / max(1, worker.state.nthreads) if limit else None


def worker_block_bytes(memory: float | None = None) -> int:
    """Bytes one block of kernel rows may take: ``BLOCK_SHARE`` of ``memory`` (default:
    this worker's memory per thread, :func:`_worker_memory`), or
    ``DEFAULT_BLOCK_BYTES`` without a limit."""
    memory = _worker_memory() if memory is None else memory
    return DEFAULT_BLOCK_BYTES if not memory else max(8, int(memory * BLOCK_SHARE))


def worker_cache_mb(memory: float | None = None) -> float:
    """SMO's kernel cache in MB on this worker: ``CACHE_SHARE`` of its memory per thread,
    at most ``DEFAULT_CACHE_MB`` (SMO's default)."""
    memory = _worker_memory() if memory is None else memory
    return DEFAULT_CACHE_MB if not memory else min(DEFAULT_CACHE_MB,
                                                     memory * CACHE_SHARE / 2**20)


def expansion_values(kernel: Kernel, X: np.ndarray, Z: np.ndarray, beta: np.ndarray,
                     block_bytes: int) -> np.ndarray:
    """sum_j beta_j k(x, z_j) for every row x of X, formed by blocks of rows of at most
    ``block_bytes`` bytes of kernel entries (rows with beta_j = 0 skipped): memory
    O(block_bytes) whatever the sizes."""
    keep = beta != 0.0
    Z, beta = Z[keep], beta[keep]
    out = np.zeros(X.shape[0])
    if beta.size:
        rows = max(1, int(block_bytes // (8 * beta.size)))
        for start in range(0, X.shape[0], rows):
            out[start:start + rows] = kernel(X[start:start + rows], Z) @ beta
    return out


def empty_set(d: int) -> tuple:
    """A support set (index, X rows, y, alpha) with no vector; indices are global."""
    return (np.zeros(0, int), np.zeros((0, d)), np.zeros(0), np.zeros(0))


def _union(a: tuple, b: tuple) -> tuple:
    """Rows of both sets, each global index once (sorted); alpha kept where present."""
    idx = np.concatenate([a[0], b[0]])
    keep = np.unique(idx, return_index=True)[1]
    return tuple(np.concatenate([u, v])[keep] for u, v in zip(a, b))


def solve_on(part: tuple, C: float, kernel: Kernel, intercept: bool, tol: float,
             warm: bool = False) -> Any:
    """SMO on the rows of ``part`` = (index, X, y, alpha); returns (Solution, SVM) or
    (None, None) when the rows hold one class (nothing to separate)."""
    from ..svm import SVM
    idx, X, y, alpha = part
    if np.unique(y).size < 2:
        return None, None
    svm = SVM(X, y, C=C, kernel=kernel.name, intercept=intercept,
              **_kernel_params(kernel))
    start = alpha if warm and abs(float(alpha @ y)) <= 1e-12 * max(1.0, np.abs(alpha).sum()) \
        else None
    return solve_svm(svm, tol=tol, warm_start=start, cache_size=worker_cache_mb()), svm


def _kernel_params(kernel: Kernel) -> dict:
    return {"gamma": kernel.gamma, "degree": kernel.degree, "coef0": kernel.coef0}


def _support_of(part, C, kernel, intercept, tol):
    """The support vectors of the SVM on ``part`` (the part itself when one-class)."""
    sol, _ = solve_on(part, C, kernel, intercept, tol)
    if sol is None:
        return part
    keep = sol.alpha > 0
    idx, X, y, _ = part
    return (idx[keep], X[keep], y[keep], sol.alpha[keep])


def _leaf(X, y, offset, S, C, kernel, intercept, tol):
    own = (np.arange(offset, offset + X.shape[0]), X, y, np.zeros(X.shape[0]))
    return _support_of(_union(own, S), C, kernel, intercept, tol)


def _merge(a, b, C, kernel, intercept, tol):
    return _support_of(_union(a, b), C, kernel, intercept, tol)


def cascade_pass(data: Any, S: tuple, C: float, kernel: Kernel, intercept: bool, tol: float) -> Any:
    """One pass (leaves on every block with S fed back, binary tree of merges); returns
    the root's support set (computed: only support sets travel)."""
    from dask import delayed
    leaf, merge = delayed(_leaf, pure=True), delayed(_merge, pure=True)
    level = [leaf(xb, yb, off, S, C, kernel, intercept, tol) for xb, yb, off in data.blocks]
    while len(level) > 1:
        nxt = [merge(level[i], level[i + 1], C, kernel, intercept, tol)
               for i in range(0, len(level) - 1, 2)]
        if len(level) % 2:
            nxt.append(level[-1])
        level = nxt
    return data.compute(level[0])


def _block_margins(X, y, offset, W_index, W_X, beta, b, kernel, max_add):
    """On one block: (sum of hinge over all rows, worst margin violators outside W as
    (index, X, y, 1 - m), count of violators at margin < 1, min margin outside W); the
    kernel rows against W by blocks sized from the worker's memory."""
    f = expansion_values(kernel, X, W_X, beta, worker_block_bytes()) + b
    m = y * f
    hinge = float(np.maximum(0.0, 1.0 - m).sum())
    rows = np.arange(offset, offset + X.shape[0])
    outside = ~np.isin(rows, W_index)
    viol = np.where(outside, 1.0 - m, -math.inf)
    order = np.argsort(-viol)[:max_add]
    order = order[viol[order] > 0]
    return (hinge, [(rows[order], X[order], y[order], viol[order])],
            int(np.sum(viol > 0)), float(np.max(viol)) if outside.any() else -math.inf)


def margins_outside(data: Any, W: tuple, beta: np.ndarray, b: float, kernel: Kernel,
                    max_add: int) -> Any:
    """Chunk-wise global check: total hinge sum_i max(0, 1 - m_i), the worst violators
    outside W (rows, at most ``max_add`` per chunk), their count, and the largest
    1 - m_i outside W (-inf when W holds every sample)."""
    parts = data.map_blocks(_block_margins, W[0], W[1], beta, float(b), kernel, max_add)
    hinge = sum(p[0] for p in parts)
    found = [p[1][0] for p in parts if p[1][0][0].size]
    count = sum(p[2] for p in parts)
    worst = max(p[3] for p in parts)
    return hinge, found, count, worst


def polished(part: tuple, C: float, kernel: Kernel, intercept: bool, tol: float) -> Any:
    """SMO at ``tol`` then the active-set polish on W = ``part``; returns (alpha, b, svm,
    smo solution). The polished multipliers are kept when they pass the KKT check on W
    better than SMO's (the caller certifies globally)."""
    sol, svm = solve_on(part, C, kernel, intercept, tol, warm=True)
    alpha, b = sol.alpha, sol.b
    block = svm.kernel_block
    refined = polish_alpha(svm.y, svm.C_bounds, alpha, intercept, block)
    if refined is not None:
        cand = svm.from_alpha(refined[0], b=refined[1])
        if svm.kkt(cand).max_violation <= svm.kkt(sol).max_violation:
            alpha, b = cand.alpha, cand.b
    return alpha, float(b), svm, sol
