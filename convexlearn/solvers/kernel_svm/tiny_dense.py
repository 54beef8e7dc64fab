"""The certified C-SVC of a tiny problem in numpy: dense SMO to a loose tolerance, then a
dense primal active-set solve, then the KKT certificate.

While the compiled SMO loop is not loaded in the process (loading it costs ~0.15 s of
CPU: :func:`~convexlearn.solvers.kernel_svm.certified_smo.smo_small_first`'s rent-or-buy
rule), a C-SVC of at most :data:`TINY_N` samples with intercept is solved here on its Gram
matrix K, formed once (8 n^2 bytes, at most 0.7 MB):

1. SMO (maximal violating pair, second-order choice of j) on the dense K, without
   shrinking or history, to the loose tolerance :data:`TINY_TOL` (in units of the
   margins): it only has to bring the active set near;
2. a primal active-set method in the expansion beta = y * alpha: on the free set F
   (0 < alpha_i < C_i) it solves the bordered system

       K_FF beta_F + b 1 = y_F - K_FR beta_R,      1^T beta_F = -1^T beta_R

   (R: the multipliers at 0 or C_i) by one dense solve; when the solution leaves the box
   it steps towards it until the first free multiplier reaches its bound and fixes it
   there (the point stays feasible and balanced, the objective decreases); otherwise
   every sample whose margin contradicts its bound (alpha = 0 with y_i f_i < 1 -
   :data:`MARGIN_TOL`, alpha = C_i with y_i f_i > 1 + MARGIN_TOL) joins F at once (a
   round costs one |F| x |F| solve and one n x n product: ~50 us at n ~ 100);
3. the KKT report (:func:`~convexlearn.certify.kkt.kkt_report`), every residual and the
   duality gap recomputed from the data (on the product K beta of the answer's
   multipliers with K as the Gram operator formed it, not the running gradient), at the
   caller's ``kkt_tol`` and ``gap_tol``.

The answer is returned only when certified; otherwise (a singular bordered system, the
rounds out, the certificate failing) SMO's point is handed back and the general path goes
on from it (its SMO, its polish, its retries). Measured on wine's two classes (n = 95,
rbf, C = 1): ~25 SMO iterations and 1-2 rounds instead of ~70 iterations of the general
numpy loop and its polish.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np
from scipy.linalg.lapack import dgesv

from ...solution import Solution
from .qp import curvature_floor
from .smo_step import clip_pair
from .small_certified import MARGIN_TOL, THRESHOLD, reported_solution

__all__ = ["TINY_N", "TINY_TOL", "tiny_applies", "certified_tiny", "tiny_smo",
           "active_set_dense"]

#: Largest n of this path (K formed: 8 n^2 bytes; SMO's numpy steps are O(n) each).
TINY_N = 300
#: SMO's tolerance before the active-set solve (maximal violation, margin units).
TINY_TOL = 1e-1
#: SMO's iteration budget here (beyond it the general path goes on from SMO's point).
TINY_BUDGET = 2000
#: Rounds of the active-set solve (solves plus ratio steps).
ROUNDS = 60


def _max(x: np.ndarray) -> float:
    """max(x) as x[argmax(x)]: the same value (NaN when x holds one), without the reduction's
    Python wrapper (~2 us against ~0.5 us at n ~ 100 with numpy 2.4; a tiny solve makes
    ~100 such calls)."""
    return float(x.flat[x.argmax()])


def tiny_applies(svm: Any) -> bool:
    """True for a C-SVC of this path: intercept, finite costs, 2 <= n <= TINY_N, a Gram
    operator that forms K (from samples or given)."""
    n = svm.n_samples
    gram = svm.gram_operator
    return (bool(svm.intercept) and not svm.hard_margin and 2 <= n <= TINY_N
            and (gram.formed or gram.from_samples))


def tiny_smo(K: np.ndarray, y: np.ndarray, C: np.ndarray, tol: float, budget: int,
             alpha: np.ndarray | None = None) -> tuple[np.ndarray, np.ndarray, int, bool]:
    """SMO on the dense Gram matrix ``K`` of the C-SVC's dual (s = y, p = -1, row y^T a =
    0), from ``alpha`` (default 0; modified in place), to the maximal violation ``tol``
    within ``budget`` iterations. Returns (alpha, g = K (y * alpha), iterations,
    converged).

    The pair's step is the compiled loop's source (:func:`~convexlearn.solvers.kernel_svm.
    smo_step.clip_pair`: t = min(step, the rooms of a_i and a_j), each multiplier snapped
    onto the bound that limited t), called on Python floats: the same roundings, without
    the numpy scalars (~3 us a step at n = 95) or the import of the compiled module (its
    dispatchers, ~15 ms on a process's first fit)."""
    n = y.size
    alpha = np.zeros(n) if alpha is None else alpha
    diag = np.ascontiguousarray(np.diagonal(K))
    k_max = float(diag.max())
    tau = curvature_floor(k_max)
    # the curvatures K_ii + K_jj - 2 K_ij of every pair, floored at tau: one n x n pass
    # here instead of three vector operations per iteration
    curvature = np.maximum(diag[:, None] + diag[None, :] - 2.0 * K, tau)
    v = y - K @ (y * alpha)                 # v = y - g
    pos = y > 0
    # 0 on I_up (I_low), -inf (+inf) off it: v + these are the masked v's
    off_up = np.where(np.where(pos, alpha < C, alpha > 0.0), 0.0, -np.inf)
    off_low = np.where(np.where(pos, alpha > 0.0, alpha < C), 0.0, np.inf)
    vu, vl, score = np.empty(n), np.empty(n), np.empty(n)
    # (Python scalars: the per-step updates)
    positive, Cs, a, ys = pos.tolist(), C.tolist(), alpha.tolist(), y.tolist()
    it, converged = 0, False
    while it < budget:
        np.add(v, off_up, out=vu)
        i = int(vu.argmax())
        m_val = float(vu[i])
        np.add(v, off_low, out=vl)
        if m_val - float(vl[vl.argmin()]) <= tol:       # (argmin: see _max)
            converged = True
            break
        # second-order choice of j: maximal gain^2 / curvature over I_low with gain > 0
        np.subtract(m_val, vl, out=score)       # (-inf off I_low)
        np.maximum(score, 0.0, out=score)
        score *= score
        score /= curvature[i]
        j = int(score.argmax())
        t = clip_pair(i, j, (m_val - float(v[j])) / float(curvature[i, j]), ys, Cs, a)
        v += t * (K[j] - K[i])
        for k in (i, j):
            ak, c = a[k], Cs[k]
            if positive[k]:
                off_up[k] = 0.0 if ak < c else -np.inf
                off_low[k] = 0.0 if ak > 0.0 else np.inf
            else:
                off_up[k] = 0.0 if ak > 0.0 else -np.inf
                off_low[k] = 0.0 if ak < c else np.inf
        it += 1
    alpha[:] = a
    return alpha, y - v, it, converged


def active_set_dense(K: np.ndarray, y: np.ndarray, C: np.ndarray, alpha: np.ndarray,
                     rounds: int = ROUNDS) -> tuple[np.ndarray, float | None, np.ndarray] | None:
    """The primal active-set method of the module docstring from a feasible, balanced
    ``alpha`` (not modified). Returns (alpha, b or None when no multiplier is free, g = K
    (y * alpha)), or None (a singular bordered system: its solve's residual above 1e-9
    of its scale; or the rounds out)."""
    scale = _max(C)
    cut = THRESHOLD * scale
    a = np.where(alpha > cut, np.where(alpha >= C - cut, C, alpha), 0.0)
    if abs(float(y @ a)) > 1e-12 * a.size * scale:     # the snap unbalanced it
        a = alpha.copy()
    free = (a > 0.0) & (a < C)
    ones = np.ones(y.size)
    for _ in range(rounds):
        F = free.nonzero()[0]
        beta = y * a
        if F.size == 0:
            return a, None, K @ beta
        k = F.size
        KF = K[F]                               # the free rows (k x n)
        A = np.empty((k + 1, k + 1))
        A[:k, :k] = KF[:, F]
        A[:k, k] = 1.0
        A[k, :k] = 1.0
        A[k, k] = 0.0
        rhs = np.empty(k + 1)
        # y_F - K_FR beta_R = y_F - K_F. beta + K_FF beta_F
        rhs[:k] = y[F] - KF @ beta + A[:k, :k] @ beta[F]
        rhs[k] = float(ones[:k] @ beta[F] - ones @ beta)
        # LAPACK's gesv itself (np.linalg.solve's ~10 us of wrapping a call, three calls a
        # fit on wine); info > 0: an exact zero pivot, np.linalg.solve's LinAlgError
        sol, info = dgesv(A, rhs)[2:]
        if info != 0:
            return None
        size = max(1.0, _max(np.abs(rhs)), _max(np.abs(A)) * _max(np.abs(sol)))
        if not _max(np.abs(A @ sol - rhs)) <= 1e-9 * size:    # (also NaN)
            return None
        aF, CF = a[F], C[F]
        target = y[F] * sol[:k]                 # alpha_F of the face's minimizer
        if not (target[target.argmin()] >= 0.0 and not np.count_nonzero(target > CF)):
            # step towards it until the first free multiplier reaches its bound
            d = target - aF
            room = np.full(k, np.inf)
            rise, fall = d > 0, d < 0
            room[rise] = (CF[rise] - aF[rise]) / d[rise]
            room[fall] = -aF[fall] / d[fall]
            hit = int(room.argmin())
            a[F] = np.clip(aF + float(room[hit]) * d, 0.0, CF)
            j = F[hit]
            a[j] = C[j] if d[hit] > 0 else 0.0
            free[j] = False
            continue
        a[F] = target
        b = float(sol[k])
        g = K @ (y * a)
        err = y * (g + b) - 1.0                 # margin error y_i f_i - 1
        join = np.where(a <= 0.0, err < -MARGIN_TOL, err > MARGIN_TOL) & ~free
        join &= C > 0.0                         # (C_i = 0: fixed at 0 = C_i)
        if not np.count_nonzero(join):
            return a, b, g
        free |= join
    return None


def certified_tiny(svm: Any, *, kkt_tol: float, gap_tol: float, tol: float = TINY_TOL
                   ) -> tuple[Solution | None, np.ndarray | None, int]:
    """The tiny path's solve of ``svm`` (:func:`tiny_applies` must hold).

    Returns
    -------
    (solution, None, iterations)
        Certified at ``kkt_tol`` and ``gap_tol`` (status "optimal"; the caller labels it).
    (None, alpha, iterations)
        Not certified here: SMO's point (feasible and balanced), for the general path.
    """
    n = svm.n_samples
    everything = np.arange(n)
    K = np.ascontiguousarray(svm.gram_operator.block(everything, everything), dtype=float)
    y = np.asarray(svm.y, dtype=float)
    bounds = svm.C_bounds
    C = (np.full(n, float(bounds)) if np.ndim(bounds) == 0
         else np.ascontiguousarray(np.broadcast_to(np.asarray(bounds, dtype=float), (n,))))
    alpha, g, n_iter, _ = tiny_smo(K, y, C, tol, TINY_BUDGET)
    out = active_set_dense(K, y, C, alpha)
    if out is None:
        return None, alpha, n_iter
    a, b, g = out
    # the report's product K beta: active_set_dense's g, computed at its exit as
    # K @ (y * a) with K as the Gram operator formed it from the data (not a running
    # gradient), so it is that product itself
    sol = reported_solution(svm, a, g, b, g, kkt_tol)
    report = sol.report
    if not (report.passed and report.relative_gap <= gap_tol and math.isfinite(sol.b)):
        return None, alpha, n_iter
    return sol, None, n_iter
