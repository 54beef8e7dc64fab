"""The cascade SVM (Graf, Cosatto, Bottou, Dourdanovic and Vapnik, "Parallel support vector
machines: the Cascade SVM", NIPS 2004), finished on a working set that grows until the
answer is the exact optimum of the whole problem, certified on every chunk.

A row set is a tuple (index, X, y, s, alpha): global indices, the rows, labels in {-1, +1},
sample weights (the box is 0 <= alpha_i <= C s_i; s = 1 unweighted) and multipliers.

One pass of the cascade, with S the support set of the previous pass (empty at first):

1. every row block k solves the dual SVM on its rows plus S (the package's SMO,
   :func:`convexlearn.solvers.kernel_svm.smo.solve_svm`, on a :class:`convexlearn.SVM` built from
   them) and keeps its support vectors (rows of weight 0 are absent: left out);
2. the support sets are merged pairwise up a binary tree, each merge solving the SVM on
   the union, warm-started from its children's multipliers (each child balances
   y^T alpha = 0, so their union is a feasible start), and keeping its support vectors;
   the root's support set, its multipliers and intercept, are the pass's answer.

The finish (:mod:`convexlearn.distributed.svm`) works on a working set W, the root's
support set at first: a pass over every chunk (:func:`margins_outside`) computes the
margins m_i = y_i f(x_i) of all samples against the expansion on W and returns the worst
violators outside W (m_i < 1 with alpha_i = 0), the values f on W and on them, and the
weighted hinge total. While violators are far (1 - m_i above SMO's tolerance), they join
W and SMO resumes on W from the previous multipliers (0 for the new rows), its starting
gradient K_W (y alpha) read off the pass's f - b (:func:`smo_on`, no kernel product on
the client); once they are within SMO's tolerance, the exact solve on W
(:func:`exact_on`: SMO from the same warm start, the active-set polish, the KKT report on
W at ``cert_tol``) makes the multipliers exact on W, alpha = 0 outside. That is the global
optimum iff no sample outside W violates m_i >= 1: the next pass over the chunks checks
it from the data (every f recomputed), and its violators, if any, join W again.

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
from ..solvers.kernel_svm.c_svc import c_svc_qp
from ..certify.kkt import svm_kkt
from ..solvers.kernel_svm.certified_smo import SMOColumns, certified_smo
from ..solvers.kernel_svm.polish import intercept_from_alpha, is_balanced
from ..solvers.kernel_svm.smo import smo_qp, solve_svm

__all__ = ["cascade_pass", "margins_outside", "solve_on", "smo_on", "report_on", "exact_on",
           "empty_set",
           "worker_block_bytes", "worker_cache_mb", "expansion_values", "sub_svm"]

#: Share of a worker's memory per thread for one block of kernel rows: the block and the
#: kernel's temporaries (the rbf's squared distances, formed in place: ~3 blocks at most)
#: next to the chunk, the support set and the imports.
BLOCK_SHARE = 1 / 16
#: Share of a worker's memory per thread for a leaf's or a merge's SMO column cache.
CACHE_SHARE = 1 / 8
#: Off a worker, or a worker without a memory limit: the in-memory bounds (SMO's default
#: cache; a block of kernel rows of 16 MiB).
DEFAULT_BLOCK_BYTES, DEFAULT_CACHE_MB = 16 * 2**20, 200.0
#: The largest block of kernel rows whatever the memory: measured (rbf, 5000 x 6369,
#: d = 10, one thread), blocks of 2-16 MiB took 0.4-0.6 s of CPU, blocks of 128 MiB
#: 1.3 s (the rbf's passes over the block leave the caches).
MAX_BLOCK_BYTES = 16 * 2**20


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
    this worker's memory per thread, :func:`_worker_memory`) up to
    ``MAX_BLOCK_BYTES``, or ``DEFAULT_BLOCK_BYTES`` without a limit."""
    memory = _worker_memory() if memory is None else memory
    return (DEFAULT_BLOCK_BYTES if not memory
            else max(8, min(MAX_BLOCK_BYTES, int(memory * BLOCK_SHARE))))


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
    """A row set (index, X, y, s, alpha) with no row; indices are global."""
    return (np.zeros(0, int), np.zeros((0, d)), np.zeros(0), np.zeros(0), np.zeros(0))


def _union(a: tuple, b: tuple) -> tuple:
    """Rows of both sets, each global index once (sorted); the first set's alpha kept
    where both hold a row."""
    idx = np.concatenate([a[0], b[0]])
    keep = np.unique(idx, return_index=True)[1]
    return tuple(np.concatenate([u, v])[keep] for u, v in zip(a, b))


def sub_svm(part: tuple, C: float, kernel: Kernel, intercept: bool, weighted: bool) -> Any:
    """The :class:`convexlearn.SVM` on the rows of ``part`` (its weights when
    ``weighted``), the kernel's parameters resolved."""
    from ..svm import SVM
    _, X, y, s, _ = part
    return SVM(X, y, C=C, kernel=kernel.name, intercept=intercept,
               sample_weight=s if weighted else None, gamma=kernel.gamma,
               degree=kernel.degree, coef0=kernel.coef0)


def _feasible_start(alpha: np.ndarray, y: np.ndarray, upper: np.ndarray) -> bool:
    """alpha in its box and balanced (y^T alpha = 0 to 1e-12 n max C_i): a start SMO keeps
    feasible."""
    top = float(np.max(upper)) if upper.size else 1.0
    scale = top if math.isfinite(top) else max(1.0, float(np.max(alpha, initial=0.0)))
    return bool(np.all(alpha >= 0.0) and np.all(alpha <= upper)
                and is_balanced(y * alpha, scale, 0.0))


def solve_on(part: tuple, C: float, kernel: Kernel, intercept: bool, tol: float,
             weighted: bool = False, warm: bool = False) -> Any:
    """SMO on the rows of ``part`` at ``tol`` (from its alpha when ``warm`` and feasible);
    returns (Solution, SVM) or (None, None) when the rows hold one class (nothing to
    separate)."""
    if np.unique(part[2]).size < 2:
        return None, None
    svm = sub_svm(part, C, kernel, intercept, weighted)
    alpha = part[4]
    upper = np.broadcast_to(np.asarray(svm.C_bounds, float), alpha.shape)
    start = alpha if warm and alpha.any() and _feasible_start(alpha, svm.y, upper) else None
    return solve_svm(svm, tol=tol, warm_start=start, cache_size=worker_cache_mb()), svm


def _support_of(part, C, kernel, intercept, tol, weighted, warm=False):
    """(the support vectors of the SVM on ``part`` with their multipliers, its b); the
    part itself and b = 0 when it holds one class."""
    sol, _ = solve_on(part, C, kernel, intercept, tol, weighted, warm)
    if sol is None:
        return part, 0.0
    keep = sol.alpha > 0
    return tuple(v[keep] for v in part[:4]) + (sol.alpha[keep],), float(sol.b)


def _leaf(X, y, offset, S, C, kernel, intercept, tol, weighted, weight=None):
    s = np.ones(X.shape[0]) if weight is None else weight
    own = (np.arange(offset, offset + X.shape[0]), X, y, s, np.zeros(X.shape[0]))
    present = s > 0                    # weight 0: absent from the problem
    own = tuple(v[present] for v in own)
    # S's multipliers are those of another problem: a leaf starts from 0
    S = S[:4] + (np.zeros(S[0].size),)
    return _support_of(_union(own, S), C, kernel, intercept, tol, weighted)


def _merge(a, b, C, kernel, intercept, tol, weighted):
    # each child's multipliers balance on its own rows: their union is a feasible start
    # (where both hold a row, the first child's; then it may not balance: from 0)
    return _support_of(_union(a[0], b[0]), C, kernel, intercept, tol, weighted, warm=True)


def cascade_pass(data: Any, S: tuple, C: float, kernel: Kernel, intercept: bool, tol: float,
                 weighted: bool = False) -> Any:
    """One pass (leaves on every block with S fed back, binary tree of merges); returns
    the root's (support set, b), computed: only support sets travel."""
    from dask import delayed
    leaf, merge = delayed(_leaf, pure=True), delayed(_merge, pure=True)
    weights = data.weight_blocks or [None] * data.n_chunks
    level = [leaf(xb, yb, off, S, C, kernel, intercept, tol, weighted, weight=w)
             for (xb, yb, off), w in zip(data.blocks, weights)]
    while len(level) > 1:
        nxt = [merge(level[i], level[i + 1], C, kernel, intercept, tol, weighted)
               for i in range(0, len(level) - 1, 2)]
        if len(level) % 2:
            nxt.append(level[-1])
        level = nxt
    return data.compute(level[0])


def _block_margins(X, y, offset, base, W_index, Z, coef, b, kernel, max_add, weight=None):
    """On one block, with g = ``base`` + sum_j coef_j k(x, z_j) (``base`` None: 0) and
    f = g + b: (sum of s_i max(0, 1 - m_i) over its rows, the worst violators outside W
    (1 - m_i > 0, s_i > 0; at most ``max_add``) as a row set with f in place of alpha,
    their count, the largest 1 - m_i outside W, (global index, f) of its rows in W, g);
    the kernel rows against Z by blocks sized from the worker's memory."""
    s = np.ones(X.shape[0]) if weight is None else weight
    g = expansion_values(kernel, X, Z, coef, worker_block_bytes())
    if base is not None:
        g += base
    f = g + b
    m = y * f
    hinge = float(s @ np.maximum(0.0, 1.0 - m))
    rows = np.arange(offset, offset + X.shape[0])
    inside = np.isin(rows, W_index)
    outside = ~inside & (s > 0)
    viol = np.where(outside, 1.0 - m, -math.inf)
    order = np.argsort(-viol)[:max_add]
    order = order[viol[order] > 0]
    found = (rows[order], X[order], y[order], s[order], f[order])
    return (hinge, found, int(np.sum(viol > 0)),
            float(np.max(viol)) if outside.any() else -math.inf, (rows[inside], f[inside]), g)


def margins_outside(data: Any, W: tuple, beta: np.ndarray, b: float, kernel: Kernel,
                    max_add: int, base: list | None = None) -> Any:
    """Chunk-wise global check of the expansion f = g + b, g = sum_{j in W} beta_j
    k(., x_j): the weighted hinge total sum_i s_i max(0, 1 - m_i), the worst violators
    outside W (row sets with f in place of alpha, at most ``max_add`` per chunk), their
    count, the largest 1 - m_i outside W (-inf when W holds every sample), f on W (in
    W's order: W's index is sorted), and g on each chunk.

    With ``base`` (each chunk's g from an earlier pass), ``beta`` is the change of the
    expansion since then and g = base + sum_j beta_j k(., x_j): the kernel rows of the
    multipliers that moved only (an incremental pass; the certificate's pass recomputes
    g whole)."""
    keep = beta != 0.0          # only the nonzero terms travel
    Z, coef = W[1][keep], beta[keep]
    per_block = [(None if base is None else base[k], W[0], Z, coef, float(b), kernel, max_add)
                 for k in range(data.n_chunks)]
    parts = data.compute(*data.tasks(_block_margins, per_block))
    hinge = sum(p[0] for p in parts)
    found = [p[1] for p in parts if p[1][0].size]
    count = sum(p[2] for p in parts)
    worst = max(p[3] for p in parts)
    at = np.concatenate([p[4][0] for p in parts])
    f_W = np.zeros(W[0].size)
    f_W[np.searchsorted(W[0], at)] = np.concatenate([p[4][1] for p in parts])
    return hinge, found, count, worst, f_W, [p[5] for p in parts]


def smo_on(svm: Any, alpha: np.ndarray, g: np.ndarray, tol: float, polish: bool = False
           ) -> tuple:
    """SMO on ``svm`` at ``tol`` from the feasible ``alpha`` with its gradient g = K (y *
    alpha) known (no kernel product to start), then with ``polish`` the active-set polish
    (reading K from SMO's column cache where it holds the columns, as the in-memory exact
    route; its answer is kept when it is found); returns (alpha, b). Nothing is certified
    here: the caller's pass over the chunks gives f on W for the report
    (:func:`report_on`)."""
    qp = c_svc_qp(svm)
    res, _, _ = smo_qp(qp, tol=tol, alpha0=alpha, g0=g, record=False)
    alpha, b, g = res.alpha, None, qp.target - res.v
    if polish:
        cached = (SMOColumns(qp.gram, res.columns)
                  if res.columns is not None and qp.gram.from_samples else None)
        refined = qp.polish(alpha, g, kernel=cached)
        if refined is not None:
            alpha, b, g = refined
    if not svm.intercept:
        b = 0.0
    elif b is None:
        b = intercept_from_alpha(svm.y, svm.C_bounds, alpha, g)[0]
    return alpha, float(b)


def report_on(svm: Any, alpha: np.ndarray, b: float, f: np.ndarray, tol: float) -> Any:
    """The KKT report of (alpha, b) on ``svm`` (the SVM on W) from its decision values f
    on W, recomputed from the data by the pass over the chunks: the report of
    :func:`convexlearn.certify.kkt.kkt_report` (beta = y * alpha: stationarity 0,
    alpha^T Q alpha = beta^T (f - b)) without a kernel product on the client."""
    beta = svm.y * alpha
    aQa = float(beta @ (f - b))
    scale = float(np.abs(beta) @ np.sqrt(np.maximum(svm.gram_operator.diagonal, 0.0)))
    return svm_kkt(svm.y, svm.C_bounds, svm.intercept, alpha, f, aQa, aQa, 0.0, tol=tol,
                   stationarity_scale=scale)


def exact_on(svm: Any, alpha: np.ndarray, g: np.ndarray, tol: float, cert_tol: float) -> Any:
    """The exact optimum of ``svm`` by the in-memory exact route, with its retries: SMO at
    ``tol`` from ``alpha`` (gradient ``g``), the active-set polish and the KKT report at
    ``cert_tol`` (relative gap too), SMO resumed at a smaller tolerance while it fails
    (:func:`~convexlearn.solvers.kernel_svm.certified_smo.certified_smo`)."""
    return certified_smo(svm, tol=tol, kkt_tol=cert_tol, gap_tol=cert_tol,
                         warm_start=alpha, warm_products=g)
