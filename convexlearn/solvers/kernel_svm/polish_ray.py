"""The active-set polish's walk along the rays of a singular face without solution.

On a low-rank kernel (poly on 2-D data, a linear Gram X X^T of rank d) the free block
K_FF of the polish (:mod:`~convexlearn.solvers.kernel_svm.polish`) has rank r << |F|;
once more than r + 1 samples are free, its bordered system [K_FF 1; 1^T 0] [u; b] =
[rhs; total] has in general no solution and the dual is unbounded on the face: along
the ray p = P d, d = target_F - g_F (the free margin errors) and P the orthogonal
projection onto

    N_F = {p : K_FF p = 0, 1^T p = 0},

the dual objective grows as t ||p||^2 while g = K beta does not move (K positive
semidefinite: K_FF p = 0 gives K_{:,F} p = 0). The polish steps along it to the first
bound and fixes that multiplier; done one fresh least-squares round per fixed
multiplier (the only way :func:`~convexlearn.solvers.kernel_svm.polish_face.kkt_solve`
finds the ray), a face of 60 free samples from SMO's early point costs ~60 rounds of
~0.2 ms (pre-lin/blobs1/C=100/n=400: 250 rounds, 47 ms, of which nearly all were such
steps). :func:`ray_walk` makes the whole run of steps from one rank-revealing (pivoted
Cholesky) factorization of K_FF: the range of K_{F'F'} on a smaller set F' is that of
K_FF's range basis restricted to the rows F' (range K_{F'F'} = range Z_{F'} for K = Z
Z^T), so each step costs an
orthonormalization of a |F| x (r + 1) matrix and one product with K_FF (which keeps d
exact where K_FF's null space is only numerical). The walk only steers: the
caller keeps g exact (K_FF times the walk's step, the rest's columns later) and every
residual is recomputed by the certificate. The steps run in one compiled call
(:func:`~convexlearn.solvers.kernel_svm.polish_ray_kernels.ray_steps`: ~3 us a step at
|F| ~ 60, where the numpy steps of :func:`ray_walk_reference` cost ~50 us, most of it
call overhead); the reference is what the tests hold it to.
"""

from __future__ import annotations

import numpy as np

__all__ = ["ray_walk", "ray_walk_reference", "range_basis", "RANGE_TOL", "KEPT_STEP",
           "KEPT_CAP"]

_EPS = float(np.finfo(float).eps)
#: A column of the range basis (norm 1 on the whole face) whose part on the free rows,
#: orthogonalized against the columns before it, has norm at most RANGE_TOL spans no
#: direction there: restricting an r-dimensional range to fewer rows loses dimensions
#: exactly, so such a remainder is round-off.
RANGE_TOL = 1e-10
#: The walk runs on faces of numerical rank at most RANK_MAX (each step orthonormalizes
#: |F| x (rank + 1) columns: O(|F| rank^2)); a face of higher rank (duplicated samples
#: of an rbf kernel) has a null space of few dimensions, hence few ray steps, and keeps
#: the fresh rounds.
RANK_MAX = 32
#: A ray step is kept when g and the balance move by at most KEPT_STEP |F| eps times the
#: step's scale (:func:`ray_walk_reference`): the round-off of K_FF's product with a
#: step along null(K_FF), with room for the snaps to the bounds.
KEPT_STEP = 64.0
#: ... and at most KEPT_CAP relative however far the ray is below |d|: a ray that is only
#: the projection's round-off moves g and the balance by O(1) relative (0.59 on a rank-2
#: face offset by +1000). 1e-8 ended real walks of ill-scaled faces early (a linear Gram
#: of 2-D blobs + 50 at C = 1e4 then no longer certified), 1e-6 too.
KEPT_CAP = 1e-4


def range_basis(KFF: np.ndarray, intercept: bool) -> np.ndarray | None:
    """Columns of norm 1 spanning K_FF's numerical range and, with ``intercept``, the
    vector of ones; None when its rank exceeds :data:`RANK_MAX`. The range is that of
    the pivoted Cholesky factor K_FF ~ L L^T stopped when every remaining diagonal
    entry is at most |F| eps max_i K_ii (:func:`~convexlearn.solvers.kernel_svm.
    polish_ray_kernels.pivoted_range`; O(|F| rank^2), where an eigendecomposition cost
    O(|F|^3): ~0.2 ms at |F| = 60, the rest of the walk ~0.2 ms)."""
    from .polish_ray_kernels import normalize_columns, pivoted_range
    K = np.ascontiguousarray(KFF, dtype=float)
    k = K.shape[0]
    top = float(np.max(np.diagonal(K), initial=0.0))
    width = min(k, RANK_MAX)
    basis = np.zeros((k, width + 1))
    used = pivoted_range(K, k * _EPS * top, basis, width)
    if used < 0:
        return None
    normalize_columns(basis, used)
    if intercept:
        basis[:, used] = 1.0 / np.sqrt(k)
        used += 1
    return np.ascontiguousarray(basis[:, :used])


def ray_walk(KFF: np.ndarray, d: np.ndarray, start: np.ndarray, lo: np.ndarray,
             hi: np.ndarray, ray: np.ndarray, margin_tol: float, intercept: bool,
             max_steps: int) -> tuple[np.ndarray, np.ndarray, int, int] | None:
    """:func:`ray_walk_reference`'s walk, its steps in one compiled call
    (:func:`~convexlearn.solvers.kernel_svm.polish_ray_kernels.walk_kernel`: the basis
    of :func:`range_basis` and the steps); None when K_FF's rank exceeds
    :data:`RANK_MAX`."""
    from .polish_ray_kernels import walk_kernel
    K = np.ascontiguousarray(KFF, dtype=float)
    k = K.shape[0]
    top = float(np.max(np.diagonal(K), initial=0.0))
    x = np.array(start, dtype=float)
    d = np.array(d, dtype=float)
    still = np.ones(k, dtype=np.bool_)
    steps, rank = walk_kernel(K, d, x, np.ascontiguousarray(lo, dtype=float),
                              np.ascontiguousarray(hi, dtype=float),
                              np.ascontiguousarray(ray, dtype=float), still,
                              float(margin_tol), RANGE_TOL, int(max(max_steps, 0)),
                              k * _EPS * top, min(k, RANK_MAX), bool(intercept),
                              KEPT_STEP * k * _EPS, KEPT_CAP)
    if steps < 0:
        return None
    return x, still, int(steps), int(rank)


def ray_walk_reference(KFF: np.ndarray, d: np.ndarray, start: np.ndarray, lo: np.ndarray,
                       hi: np.ndarray, ray: np.ndarray, margin_tol: float,
                       intercept: bool, max_steps: int
                       ) -> tuple[np.ndarray, np.ndarray, int, int] | None:
    """Walk from ``start`` (beta_F, in the box [lo, hi]) along the face's rays, fixing
    one multiplier at a bound per step, until the face's system has a solution.

    Each step: the ray p = P' d on the free set F' (P' the projection onto N_F' =
    null(K_{F'F'}) and, with ``intercept``, 1^T p = 0): p = d - Q Q^T d, Q an
    orthonormal basis of [U_{F'}, 1] (U: a basis of range(K_FF), :func:`range_basis`;
    the first ray is ``ray``, kkt_solve's, taken unchecked - the step the caller would
    take - since starting from the projection, or checking that step, made the low-rank
    cases of the kernel sweep ~30% slower: on a face of a well-scaled Gram the walk then
    often ended before its first step); then x <- x + t p with t the
    largest step keeping x in [lo, hi] (the first multiplier that reaches its bound is
    fixed there, on the bound it approached), and d <- d - K_FF step. The walk ends when
    max |p| <= ``margin_tol`` (the system of F' then has a solution up to that margin
    error: the caller's next round solves it), no multiplier is free, after
    ``max_steps`` steps, or at a step after the first (not taken) that fails its check

        d^T step >= -theta max|d_F'| s,   |K_FF step|_inf <= theta max_i K_ii s,
        |1^T step| <= theta s

    (the balance with ``intercept``; a step of t = 0 only fixes a multiplier), s =
    ||step||_1 + sum_{fixed} |x_new,i| (the snap to a bound rounds at eps |x_new,i|),
    theta = min(tau max(1, max|d_F'| / max|p|), :data:`KEPT_CAP`), tau =
    :data:`KEPT_STEP` |F| eps: the round-off of a step along the computed ray, whose
    error is that of the projection, eps |d| (not eps |p|). On
    an ill-scaled face (a linear Gram of data offset by +50: |d| ~ 1e6) the ray ends
    as that round-off, which the stop test max|p| <= margin_tol does not see: t grows to
    1e7-1e8 and the step leaves null(K_FF) (g moves, the balance breaks by O(1)
    relative, the objective may go down); the check ends the walk there and the caller's
    fresh rounds go on.

    Parameters
    ----------
    KFF : ndarray
        K_FF (symmetric).
    d : ndarray
        target_F - g_F at ``start`` (the system's residual at the step 0).
    start, lo, hi : ndarray
        The free multipliers in the expansion beta = y * alpha and their box.
    ray : ndarray
        The first ray (kkt_solve's, the ascent direction).
    margin_tol : float
    intercept : bool
        Whether the row 1^T beta = const holds (its column in the projection).
    max_steps : int

    Returns
    -------
    (x, still, steps, rank)
        The walked multipliers, which of them are still free, the steps taken, the
        numerical rank of K_FF; None when it exceeds :data:`RANK_MAX`.
    """
    k = start.size
    basis = range_basis(KFF, intercept)
    if basis is None:
        return None
    rank = basis.shape[1] - int(intercept)
    x, d = np.array(start, dtype=float), np.array(d, dtype=float)
    still = np.ones(k, dtype=bool)
    top = float(np.max(np.diagonal(KFF), initial=0.0))
    tau = KEPT_STEP * k * _EPS
    steps = 0
    while steps < max_steps:
        idx = np.flatnonzero(still)
        if idx.size == 0:
            break
        rows = basis[idx]
        p = np.array(ray, dtype=float) if steps == 0 else d[idx].copy()
        if rows.shape[1] and steps > 0:
            U, s, _ = np.linalg.svd(rows, full_matrices=False)
            U = U[:, s > RANGE_TOL]
            p -= U @ (U.T @ p)
        largest = float(np.max(np.abs(p)))
        if steps > 0 and largest <= margin_tol:
            break
        theta = min(tau * max(1.0, float(np.max(np.abs(d[idx]))) / largest), KEPT_CAP)
        with np.errstate(divide="ignore", invalid="ignore"):
            room = np.where(p < 0.0, (lo[idx] - x[idx]) / p,
                            np.where(p > 0.0, (hi[idx] - x[idx]) / p, np.inf))
        room = np.maximum(room, 0.0)
        t = float(np.min(room))
        if not np.isfinite(t):
            break                     # (no bound stops it: the caller's round decides)
        hit = (room <= t + 1e-15) & (p != 0.0)
        step = np.zeros(k)
        step[idx] = t * p
        hits = idx[hit]
        ends = np.where(p[hit] > 0.0, hi[hits], lo[hits])
        step[hits] = ends - x[hits]
        scale = float(np.abs(step).sum() + np.abs(ends).sum())
        Ks = KFF @ step
        dmax = float(np.max(np.abs(d[idx])))
        if steps > 0 and not (d @ step >= -theta * dmax * scale
                              and np.max(np.abs(Ks)) <= theta * top * scale
                              and (not intercept or abs(step.sum()) <= theta * scale)):
            break                     # (a step along the projection's round-off)
        x += step
        d -= Ks
        still[hits] = False
        steps += 1
    return x, still, steps, rank
