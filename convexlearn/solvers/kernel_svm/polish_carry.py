"""A Cholesky factor of the polish's face carried from one round to the next.

Between two rounds of the active-set polish (:mod:`~convexlearn.solvers.kernel_svm.polish`)
the free set changes a little: the ratio steps fix a few multipliers on their bounds (the
set S that stays), and the samples whose margins contradict their set join (J, at most
MAX_JOIN). The next round's system has the block K_FF, F = S + J, which a fresh solve
factorizes at |F|^3 / 3 flops (with |F| = 800: ~12 ms a round, 15 rounds on rbf gamma =
10; with |F| = 3000: ~0.3 s, for one joiner). From the factor R of the previous block
(K_0 = R^T R):

* the positions that left are removed by a rank-|D| update of R's kept part
  (:func:`~convexlearn.solvers.kernel_svm.polish_carry_kernels.drop_positions`, Givens
  rotations, 3 (|S| - p_d)^2 flops for a removal before kept position p_d; taken while
  that costs less than a fresh factorization, :data:`DROP_RATIO`);
* the joiners border it: R' = [R_S X; 0 R_J] with R_S^T X = K_SJ (one triangular solve
  with |J| right-hand sides, |S|^2 |J| flops) and R_J^T R_J = K_JJ - X^T X (taken while
  |J| <= |F| / :data:`JOIN_RATIO` and that Schur complement is positive definite in
  floating point); only the new columns K_FJ are evaluated.

The face's block keeps the factor's order: S in the previous block's order, then J
(:func:`arrange`), and K_FF and the factor stay in pieces (:class:`JoinedBlock`) until a
caller needs whole arrays. A solve from the carried factor (:func:`carried_solve`) is kept
when the factor's pivots pass a necessary form of the fresh solve's condition test and
the solution solves the bordered system to a backward-stable solve's residual after at
most :data:`REFINE` steps of iterative refinement; otherwise the face is factorized
afresh. Joiners that the solution pushes out of the box are fixed by the walk, which frees
them again where their gradient points back into the box. Either way the polish only
steers: the certificate recomputes every residual from the data.

Measured (2 cores shared with other jobs, CPU seconds): rbf n = 8000 d = 20 C = 100, the
polish's second round (one joiner on |F| = 2971) 0.7 s -> 0.07 s, and the process's
peak memory 490 -> 369 MB; rbf gamma = 10 on make_blobs(2000, random_state=1), 14
rounds on |F| ~ 780, the polish 0.70 -> 0.56 s (random_state=0: 0.32 -> 0.34, within
the noise).
"""

from __future__ import annotations

from typing import Any, Callable

import numpy as np
from scipy.linalg import lapack

__all__ = ["arrange", "positions_in", "carry_factor", "refactor_block", "carried_solve",
           "bordered_residual",
           "face_solve", "factor_solve", "JoinedBlock"]

#: Removed positions are folded out of the factor while the rotations, sum over the
#: removed d of (|S| - p_d)^2 / 2 (p_d: the first kept position after d), are at most
#: |S|^3 / DROP_RATIO (measured, |S| = 800: 20 removals spread evenly, ~2.1e6 rotations,
#: 5 ms; the last 20, 2 ms; a fresh factorization 8 ms and the block's kernel evaluations).
DROP_RATIO = 160
#: Joiners border the factor while |J| <= |F| / JOIN_RATIO (the bordering's |S|^2 |J|
#: flops against |F|^3 / 3).
JOIN_RATIO = 4
#: Steps of iterative refinement of a carried solve before it is judged.
REFINE = 2

_EPS = float(np.finfo(float).eps)


def arrange(F0: np.ndarray | None, free: np.ndarray) -> np.ndarray:
    """The free set (mask ``free``) in the block's order: F0's free members in F0's
    order, then the others in increasing order (F0 None: increasing)."""
    if F0 is None:
        return np.flatnonzero(free)
    others = free.copy()
    others[F0] = False
    return np.concatenate([F0[free[F0]], np.flatnonzero(others)])


def positions_in(F0: np.ndarray, F: np.ndarray) -> np.ndarray:
    """Each entry of F's position in F0, -1 where it is not in F0."""
    if F0.size == 0:
        return np.full(F.size, -1, dtype=np.intp)
    sorter = np.argsort(F0, kind="stable")
    position = sorter[np.minimum(np.searchsorted(F0, F, sorter=sorter), F0.size - 1)]
    return np.where(F0[position] == F, position, -1)


def _column_sums(K: np.ndarray, block: int = 256) -> np.ndarray:
    """sum_i |K_ij| for each column j, by blocks of columns (no |K|-sized temporary)."""
    return np.concatenate([np.abs(K[:, j:j + block]).sum(axis=0)
                           for j in range(0, K.shape[1], block)] or [np.zeros(0)])


class JoinedBlock:
    """K' = [K_S K_SJ; K_JS K_JJ] and its factor R' = [R X; 0 R_J] kept in pieces (no
    copy of the |S| x |S| parts: a new array of |F|^2 doubles is a new peak of the
    process's memory, ~3 ms per MB of first-touched pages measured here at |F| = 3000),
    joined into whole arrays only when a caller needs them (:meth:`materialize`)."""

    def __init__(self, K: np.ndarray, R: np.ndarray, KSJ: np.ndarray, KJJ: np.ndarray,
                 X: np.ndarray, RJ: np.ndarray):
        self.K, self.R, self.KSJ, self.KJJ, self.X, self.RJ = K, R, KSJ, KJJ, X, RJ
        self.size = K.shape[0] + KJJ.shape[0]
        self._norm: float | None = None
        self.column_sums: np.ndarray | None = None      # of |K_S|, computed once

    def product(self, x: np.ndarray) -> np.ndarray:
        """K' @ x."""
        s = self.K.shape[0]
        return np.concatenate([self.K @ x[:s] + self.KSJ @ x[s:],
                               self.KSJ.T @ x[:s] + self.KJJ @ x[s:]])

    def potrs(self, B: np.ndarray) -> np.ndarray:
        """K'^{-1} B (B of shape (|F|,) or (|F|, c)) by the four triangular solves of
        R'^T R' v = B."""
        s = self.K.shape[0]
        if s == self.size:
            return lapack.dpotrs(self.R, B, lower=False)[0]
        B2 = B.reshape(B.shape[0], -1)
        y1, _ = lapack.dtrtrs(self.R, B2[:s], lower=0, trans=1)
        y2, _ = lapack.dtrtrs(self.RJ, B2[s:] - self.X.T @ y1, lower=0, trans=1)
        v2, _ = lapack.dtrtrs(self.RJ, y2, lower=0, trans=0)
        v1, _ = lapack.dtrtrs(self.R, y1 - self.X @ v2, lower=0, trans=0)
        return np.vstack([v1, v2]).reshape(B.shape)

    def norm(self) -> float:
        """||K'||_1 (= ||K'||_inf: K' is symmetric), once."""
        if self._norm is None:
            if self.column_sums is None:
                self.column_sums = _column_sums(self.K)
            self._norm = float(max(np.max(self.column_sums + np.abs(self.KSJ).sum(axis=1),
                                          initial=0.0),
                                   np.max(np.abs(self.KSJ).sum(axis=0)
                                          + np.abs(self.KJJ).sum(axis=0), initial=0.0)))
        return self._norm

    @property
    def known_norm(self) -> float | None:
        """||K'||_1 when :meth:`norm` has computed it, else None."""
        return self._norm

    def conditioned(self, cut: float) -> bool:
        """Every pivot of R' with R'_ii^2 > ``cut`` ||K'||_1: a necessary condition of K''s
        reciprocal condition number exceeding ``cut`` (the fresh solve's test, whose
        LAPACK estimate costs ~4 ms a round at |F| = 800; the carried solve's residual
        test judges the rest)."""
        pivots = np.concatenate([np.diag(self.R), np.diag(self.RJ)])
        return bool(np.all(pivots ** 2 > cut * self.norm()))

    def materialize(self) -> tuple[np.ndarray, np.ndarray]:
        """(K', R') as Fortran-ordered arrays. R''s lower triangle is not read (LAPACK's
        calls on an upper factor): only its block below the joiners' rows is zeroed, not
        all of it (a memset of |F|^2 doubles, ~1 ms a round at |F| = 800)."""
        s, k = self.K.shape[0], self.size
        if k == s:
            return self.K, self.R
        K = np.empty((k, k), order="F")
        R = np.empty((k, k), order="F")
        R[s:, :s] = 0.0
        K[:s, :s], K[:s, s:], K[s:, :s], K[s:, s:] = self.K, self.KSJ, self.KSJ.T, self.KJJ
        R[:s, :s], R[:s, s:], R[s:, s:] = self.R, self.X, self.RJ
        return K, R


def carry_factor(factor: np.ndarray, K0: np.ndarray, position: np.ndarray, F: np.ndarray,
                 kernel_block: Callable) -> JoinedBlock | None:
    """K_FF and its carried upper factor (a :class:`JoinedBlock`), F = S + J; ``position`` is
    F's positions in the previous block (increasing on S, -1 on J, S first), ``factor``
    the block's upper Cholesky factor (its lower triangle not read). None when the
    change is too large to carry (:data:`DROP_RATIO`, :data:`JOIN_RATIO`) or the
    joiners' Schur complement is not positive definite in floating point."""
    s = int(np.count_nonzero(position >= 0))
    keep = position[:s]
    k0, k = K0.shape[0], F.size
    if s == 0 or np.any(position[s:] >= 0) or np.any(np.diff(keep) <= 0):
        return None
    if (k - s) * JOIN_RATIO > k:
        return None
    # K_0 is symmetric: its Fortran-ordered face (a C-ordered copy costs a transposition)
    K0 = K0 if K0.flags.f_contiguous else K0.T
    if s < k0:
        removed = np.setdiff1d(np.arange(k0), keep)
        first = np.searchsorted(keep, removed)
        if float(np.sum((s - first.astype(float)) ** 2)) / 2.0 > s ** 3 / DROP_RATIO:
            return None
        from .polish_carry_kernels import drop_positions, gather_symmetric
        R, KS = np.empty((s, s), order="F"), np.empty((s, s), order="F")
        drop_positions(factor, keep, removed, R)
        gather_symmetric(K0, keep, KS)
    else:
        R, KS = factor, K0
    return _bordered(KS, R, F, kernel_block)


def refactor_block(K0: np.ndarray, position: np.ndarray, F: np.ndarray,
                   kernel_block: Callable) -> JoinedBlock | None:
    """:func:`carry_factor` when its removals cost more than a fresh factorization: the
    kept block K_SS gathered from K_0 (no kernel evaluations: ~5 ms of the ~15 ms a fresh
    solve spent at |F| = 812 on rbf gamma = 10, make_blobs(2000)), factorized afresh (R_S^T
    R_S = K_SS, |S|^3 / 3 flops) and bordered by the joiners as there. None when the
    change is not a removal and a join (the arguments of :func:`carry_factor`), too many
    join (:data:`JOIN_RATIO`) or a factorization fails in floating point."""
    s = int(np.count_nonzero(position >= 0))
    keep = position[:s]
    if s == 0 or np.any(position[s:] >= 0) or (F.size - s) * JOIN_RATIO > F.size:
        return None
    from .polish_carry_kernels import gather_symmetric
    K0 = K0 if K0.flags.f_contiguous else K0.T
    KS = np.empty((s, s), order="F")
    gather_symmetric(K0, keep, KS)
    R, info = lapack.dpotrf(KS, lower=False, clean=False)
    if info != 0:
        return None
    return _bordered(KS, R, F, kernel_block)


def _bordered(KS: np.ndarray, R: np.ndarray, F: np.ndarray, kernel_block: Callable
              ) -> JoinedBlock | None:
    """The block of F = S + J (S: the first |KS| entries) from K_SS and its upper factor
    R: only K_FJ evaluated, R_S^T X = K_SJ and R_J^T R_J = K_JJ - X^T X (module
    docstring); None when the joiners' Schur complement is not positive definite in
    floating point."""
    s, k = KS.shape[0], F.size
    KSJ, KJJ = np.zeros((s, 0)), np.zeros((0, 0))
    X, RJ = KSJ, KJJ
    if k > s:
        KFJ = np.asarray(kernel_block(F, F[s:]), dtype=float)
        KSJ, KJJ = KFJ[:s], KFJ[s:]
        X, info = lapack.dtrtrs(R, KSJ, lower=0, trans=1)
        if info != 0 or not np.all(np.isfinite(X)):
            return None
        RJ, info = lapack.dpotrf(KJJ - X.T @ X, lower=False, clean=True)
        if info != 0:
            return None
    return JoinedBlock(KS, R, KSJ, KJJ, X, RJ)


def bordered_residual(product: Callable, E: np.ndarray | None, x: np.ndarray,
                      r: np.ndarray, norm: float) -> tuple[np.ndarray, float]:
    """The residual A x - r of A = [K E; E^T 0] (A = K without E; ``product(v)`` = K v)
    and the bound a backward-stable solve meets: k eps (N max |x| + max |r|), k the
    order and N = ``norm`` (||K||_inf + 1 >= ||A||_inf's row part)."""
    if E is None:
        residual = product(x) - r
    else:
        k = E.shape[0]
        residual = np.concatenate([product(x[:k]) + E @ x[k:] - r[:k], E.T @ x[:k] - r[k:]])
    scale = norm * float(np.max(np.abs(x), initial=0.0)) + float(np.max(np.abs(r),
                                                                        initial=0.0))
    return residual, residual.size * _EPS * scale


def factor_solve(factor: np.ndarray, E: np.ndarray | None, r: np.ndarray
                 ) -> np.ndarray | None:
    """[K_FF E; E^T 0] x = r (K_FF x = r without E) from the upper Cholesky factor R of
    K_FF (K_FF = R^T R; its lower triangle is not read; or a factor in pieces,
    :class:`~convexlearn.solvers.kernel_svm.polish_carry.JoinedBlock`) and the Schur
    complement S = E^T K_FF^{-1} E; None when S is singular."""
    if isinstance(factor, JoinedBlock):
        k, potrs = factor.size, factor.potrs
    else:
        k, potrs = factor.shape[0], (lambda B: lapack.dpotrs(factor, B, lower=False)[0])
    if E is None:
        return potrs(r)
    m = E.shape[1]
    solved = potrs(np.column_stack([r[:k], E]))
    u, W = solved[:, 0], solved[:, 1:]
    S = E.T @ W
    if m == 1:
        # (the 1 x 1 case of the solve below, LAPACK's division, without its call cost)
        if S[0, 0] == 0.0:
            return None
        b = (E.T @ u - r[k:k + m]) / S[0, 0]
    else:
        try:
            b = np.linalg.solve(S, E.T @ u - r[k:k + m])
        except np.linalg.LinAlgError:
            return None
    return np.concatenate([u - W @ b, b])


def carried_solve(factor: np.ndarray | JoinedBlock, K: np.ndarray | None,
                  E: np.ndarray | None, r: np.ndarray, solve: Callable,
                  cut: float | None = None) -> np.ndarray | None:
    """[K E; E^T 0] x = r from a carried factor (K = R^T R up to the updates' rounding;
    K None: the factor is a :class:`JoinedBlock`, which holds K): ``solve(factor, E,
    r)`` (:func:`factor_solve`) refined at
    most :data:`REFINE` times; x when the factor's reciprocal condition estimate exceeds
    k eps (the fresh solve's test; for a :class:`JoinedBlock` its necessary form on the
    pivots, :meth:`JoinedBlock.conditioned`) and the residual is within
    :func:`bordered_residual`'s bound, else None. ``cut``: the condition test's
    threshold (default k eps; 0: the residual test alone)."""
    cut = r.size * _EPS if cut is None else cut
    joined = isinstance(factor, JoinedBlock)
    if joined:
        if not factor.conditioned(cut):
            return None
        norm = factor.norm() + 1.0
    else:
        if cut > 0.0:
            rcond, info = lapack.dpocon(factor, lapack.dlange("1", K))
            if info != 0 or not rcond > cut:
                return None
        norm = float(np.max(_column_sums(K), initial=0.0)) + 1.0
    product = factor.product if joined else K.__matmul__
    x = solve(factor, E, r)
    for refinement in range(REFINE + 1):
        if x is None or not np.all(np.isfinite(x)):
            return None
        residual, bound = bordered_residual(product, E, x, r, norm)
        if np.max(np.abs(residual)) <= bound:
            return x
        if refinement == REFINE:
            return None
        dx = solve(factor, E, residual)
        x = None if dx is None else x - dx
    return None


def face_solve(face: Any, rhs: np.ndarray, total: float | None, start: np.ndarray
               ) -> tuple[np.ndarray, float, None] | None:
    """The solution of :class:`~convexlearn.solvers.kernel_svm.polish_face.Face`'s system
    from a carried factor (the block shrunk by removals first when F is smaller than
    it), then kept as the block's fresh factor; None when there is none or its solution
    is not accurate (the caller factorizes afresh)."""
    base = face.carry_base()
    if base is None:
        return None
    if face.position.size < face.F0.size:
        K0, base = face.K0, face.carry_base()        # (joined into arrays first)
        F = face.F0[face.position]
        block = carry_factor(base, K0, face.position, F, None)
        if block is None:
            return None
        face.adopt(F, block)
    factor = face.carried if face.carried is not None else base
    face.carried = None
    k = rhs.size
    E = None if total is None else np.ones((k, 1))
    r = rhs - face.product(start)
    if E is not None:
        r = np.append(r, float(total) - float(start.sum()))
    K = None if isinstance(factor, JoinedBlock) else face.K0
    x = carried_solve(factor, K, E, r, factor_solve)
    if x is None:
        return None
    face.keep_factor(factor)
    return start + x[:k], (0.0 if E is None else float(x[k])), None
