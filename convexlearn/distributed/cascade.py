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
"""

from __future__ import annotations

from typing import Any

import math

import numpy as np

from ..kernels import Kernel
from ..solvers.kernel_svm.polish import polish_alpha
from ..solvers.kernel_svm.smo import solve_svm

__all__ = ["cascade_pass", "margins_outside", "solve_on", "polished", "empty_set"]



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
    return solve_svm(svm, tol=tol, warm_start=start), svm


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
    (index, X, y, 1 - m), count of violators at margin < 1, min margin outside W)."""
    f = (kernel(X, W_X) @ beta if beta.size else np.zeros(X.shape[0])) + b
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
