"""The linear algebra of the active-set polish's face (:mod:`~convexlearn.solvers.kernel_svm.polish`).

On a free set F the polish solves the bordered KKT system [K_FF E; E^T 0] [u; b] = [rhs;
total] (E: a column of ones for the row s^T a = Delta, one column per sign for the
nu-problems' two rows, none without intercept): :func:`kkt_solve` from a fresh
factorization (Cholesky and the border's Schur complement, else LU, else least squares
for a singular face), and :class:`Face`, the free set's kernel block with a kept
factorization that steers the ratio steps while the set shrinks.
"""

from __future__ import annotations

import math
from typing import Any, Callable

import numpy as np
import scipy.linalg
from scipy.linalg import blas, lapack

from ..lapack import regular_lu
from .polish_carry import (JoinedBlock, carried_solve, carry_factor, face_solve,
                           factor_solve, positions_in, refactor_block)

__all__ = ["Face", "kkt_solve"]

_EPS = float(np.finfo(float).eps)     # (np.finfo costs microseconds a call)


def _border(y: np.ndarray, by_sign: bool) -> np.ndarray:
    """The columns of the equality rows in the expansion beta = y * a, on variables with
    signs ``y``: one column of ones (one row s^T a), or one indicator per sign present
    (the rows per sign)."""
    if not by_sign:
        return np.ones((y.size, 1))
    cols = [c for c in ((y > 0).astype(float), (y < 0).astype(float)) if c.any()]
    return np.column_stack(cols)


def kkt_solve(KFF: np.ndarray, rhs: np.ndarray, total: Any, start: np.ndarray,
               margin_tol: float, E: np.ndarray | None = None, factors: list | None = None,
               refined: bool = False) -> tuple[np.ndarray, Any, np.ndarray | None]:
    """Solve [K_FF 1; 1^T 0] [u; b] = [rhs; total] (K_FF u = rhs without intercept,
    ``total`` None) for the solution u nearest ``start``, or find the face unbounded.
    With a border ``E`` (k x m: the rows per sign) the system is [K_FF E; E^T 0] [u; b] =
    [rhs; total], ``total`` and the returned b of length m.

    The unknown is the step d = u - start: [K_FF 1; 1^T 0] [d; b] = [rhs - K_FF start;
    total - 1^T start] =: r. A nonsingular system has one solution (Cholesky of K_FF and
    the Schur complement of the border when K_FF is positive definite, else LU). A singular one (a
    kernel of rank below |F| + 1: a low-rank or precomputed Gram, duplicated samples,
    large C) is solved by least squares (QR with column pivoting, singular values below
    k eps of the largest dropped, k the order), for the minimum-norm step: any solution
    is optimal on the face, and one far from ``start`` (what LU returns there) sent the
    ratio step round after round along the null space, fixing one multiplier at a time
    with t ~ 1e-13 until the rounds ran out. Singular means a reciprocal condition number
    (LAPACK's 1-norm estimate from the LU factors) below k eps.

    When the singular system has no solution - a free sample misses the margin by more
    than ``margin_tol`` at the least-squares point (the first k residuals are margin
    errors: row i is y_i f_i - 1 up to the sign y_i) - the dual is unbounded on the face:
    the residual [p; c] = r - A [d; b] lies in the null space of A (K_FF p + c 1 = 0,
    1^T p = 0), and along p the dual objective grows linearly (slope p^T r = ||r - A [d;
    b]||^2 at a balanced start) while every free margin moves by the same amount. That
    direction is returned as ``ray`` (the caller steps along it to the first bound).

    ``factors``, a list: the Cholesky factor of K_FF is appended to it when the solve
    used one (the caller's steering reuses it).

    ``refined`` (a face in a finite box, where a large solution only means a step to the
    first bound): an ill-conditioned K_FF's Cholesky solution (of K_FF + mu I when K_FF
    is not positive definite in floating point) is kept when refined to a backward-stable
    residual (:func:`_spd_bordered_solve`); the hard margin's unbounded faces keep the
    least squares and its ray.

    Returns
    -------
    u, b, ray
        ``ray`` None when the system is solved; else u is ``start`` and b is 0.
    """
    k = rhs.size
    border = None if total is None else (np.ones((k, 1)) if E is None else E)
    r = rhs - KFF @ start
    if border is not None:
        r = np.append(r, np.atleast_1d(total) - border.T @ start)
    cut = r.size * _EPS
    # K_FF positive definite (the usual case): Cholesky, half the flops of LU, and no
    # bordered copy of K_FF
    sol = _spd_bordered_solve(KFF, border, r, cut, factors, refined)
    A = KFF if border is None else None
    if sol is None:
        if A is None:
            A = _bordered(KFF, border)
        lu_piv = regular_lu(A, cut)
        if lu_piv is not None:
            sol, _ = lapack.dgetrs(*lu_piv, r)
    if sol is None or not np.all(np.isfinite(sol)):
        sol = scipy.linalg.lstsq(A, r, cond=cut, lapack_driver="gelsy")[0]
        residual = r - A @ sol
        if np.max(np.abs(residual[:k])) > margin_tol:
            ray = residual[:k]
            return start, 0.0, (ray if ray @ r[:k] >= 0.0 else -ray)
    if total is None:
        return start + sol[:k], 0.0, None
    return start + sol[:k], (float(sol[k]) if E is None else sol[k:]), None


def _bordered(KFF: np.ndarray, E: np.ndarray) -> np.ndarray:
    """[K_FF E; E^T 0]."""
    k, m = E.shape
    A = np.zeros((k + m, k + m))
    A[:k, :k] = KFF
    A[:k, k:] = E
    A[k:, :k] = E.T
    return A


def _spd_bordered_solve(KFF: np.ndarray, E: np.ndarray | None, r: np.ndarray, cut: float,
                        factors: list | None = None, refined: bool = False
                        ) -> np.ndarray | None:
    """Solve [K_FF E; E^T 0] x = r (K_FF x = r without a border E) by the Cholesky factor
    of K_FF and the Schur complement S = E^T K_FF^{-1} E; None when K_FF is not
    numerically positive definite (reciprocal condition number, LAPACK's 1-norm estimate,
    at most ``cut``) or S is singular: the caller's LU and least squares decide then.
    The factor is appended to ``factors`` (when given) on success. ``refined``: an
    ill-conditioned K_FF's solution is kept when refined to a backward-stable residual
    (:func:`kkt_solve`)."""
    # K_FF is symmetric: LAPACK reads whichever of it and its transpose is in F-order
    M = KFF if KFF.flags.f_contiguous else KFF.T
    norm = lapack.dlange("1", M)
    if refined:
        factor, shifted = cholesky_factor(M, norm)
    else:
        factor, info = lapack.dpotrf(M, lower=False, clean=False)
        factor, shifted = (factor if info == 0 else None), False
    if factor is None:
        return None
    if not shifted:
        rcond, info = lapack.dpocon(factor, norm)
        if info == 0 and rcond > cut:
            return _kept(factor_solve(factor, E, r), factor, factors)
    # ill-conditioned (rcond <= k eps) or not positive definite in floating point: the
    # factor's solution (of K_FF + mu I when shifted) is kept when it solves the
    # system itself to a backward-stable solve's residual after iterative refinement.
    # On the very local kernels (rbf gamma = 5..10 on 2-D blobs: lambda_min(K_FF) ~
    # 3e-14, ||K_FF||_1 ~ 35) it does, where the least squares below truncated the
    # small singular values, found no solution and stepped along a ray, one round (a
    # fresh factorization, LU and QR) per fixed multiplier: 25 rounds, ~2.5 s
    # ... but only when few of its pivots are at round-off level (R_ii^2 <= k eps
    # ||K_FF||_1; the rbf faces above: at most 6 of 500..1000): a low-rank kernel (poly on
    # 2-D data: rank 6 at |F| = 68) keeps the least squares, whose minimum-norm step is
    # the one that leads somewhere there (a Cholesky step along the null space took
    # poly2/blobs3/C=1/n=400 from 5 ms to 0.1 s and a second SMO run)
    if not refined or DEFICIENT * _tiny_pivots(factor, norm) > M.shape[0]:
        return None
    sol = carried_solve(factor, M, E, r, factor_solve, cut=0.0)
    return _kept(sol, factor, factors)


#: An ill-conditioned face is solved by its Cholesky factor only while at most 1 /
#: DEFICIENT of the factor's pivots are at round-off level (:func:`_spd_bordered_solve`).
DEFICIENT = 16


def _steering_factor(M: np.ndarray, bounded: bool) -> np.ndarray | None:
    """The upper Cholesky factor of the block M (its lower triangle not cleaned), else,
    in a finite box (``bounded``), that of M + mu I while few of its pivots are at
    round-off level (:func:`_spd_bordered_solve`'s rule); None otherwise."""
    factor, info = lapack.dpotrf(M, lower=False, clean=False)
    if info == 0:
        return factor
    if not bounded:
        return None
    norm = lapack.dlange("1", M)
    factor, _ = cholesky_factor(M, norm)
    if factor is None or DEFICIENT * _tiny_pivots(factor, norm) > M.shape[0]:
        return None
    return factor


def _tiny_pivots(factor: np.ndarray, norm: float) -> int:
    """The number of pivots R_ii of the factor with R_ii^2 <= k eps ``norm``."""
    d = np.diagonal(factor)
    return int(np.count_nonzero(d * d <= d.size * _EPS * norm))


#: Shifts mu / (eps ||K||_1) tried in turn when K is not positive definite in floating
#: point (a Gram block of near-duplicate samples: eigenvalues at round-off level). The
#: factor of K + mu I only steers (the walk, the refined solves above); mu up to ~k eps
#: ||K|| is within a backward-stable solve's perturbation of K. (make_blobs(2000,
#: random_state=6), rbf gamma = 10, C = 1: a face of 805 needed 256; without it, two
#: rounds of LU and least squares, ~0.17 s.)
SHIFTS = (1.0, 16.0, 256.0)


def cholesky_factor(M: np.ndarray, norm: float | None = None
                    ) -> tuple[np.ndarray | None, bool]:
    """The upper Cholesky factor of the symmetric M (F-ordered; its lower triangle may
    hold garbage), else that of M + mu I for the first of :data:`SHIFTS` (times eps
    ||M||_1) for which LAPACK succeeds; (factor or None, whether shifted)."""
    factor, info = lapack.dpotrf(M, lower=False, clean=False)
    if info == 0:
        return factor, False
    if norm is None:
        norm = lapack.dlange("1", M)
    diagonal = np.arange(M.shape[0])
    for shift in SHIFTS:
        A = np.array(M, order="F")
        A[diagonal, diagonal] += shift * _EPS * norm
        factor, info = lapack.dpotrf(A, lower=False, clean=False, overwrite_a=True)
        if info == 0:
            return factor, True
    return None, False


def _kept(sol: np.ndarray | None, factor: np.ndarray, factors: list | None
          ) -> np.ndarray | None:
    """``sol`` when finite (its factor appended to ``factors``), else None."""
    if sol is None or not np.all(np.isfinite(sol)):
        return None
    if factors is not None:
        factors.append(factor)
    return sol


class Face:
    """The free set's kernel block and, while the set only shrinks, a factorization of
    its bordered matrix A = [K_FF E; E^T 0] (E: one column of ones with intercept, one
    per sign with the nu-problems' rows; [K_FF] without) that steers the ratio steps.

    A ratio step removes one sample j from F. The steering keeps the Cholesky factor of
    the block's K_0 = K_{F_0 F_0} (F_0: the set last factorized) and solves the smaller
    system in F_0's coordinates with the removed positions G pinned by extra border
    columns: with B = [E_0, e_G] and W = K_0^{-1} B (one pair of triangular solves per
    removed sample, added as it leaves),

        u = K_0^{-1} r,   z = S^{-1} (B^T u - [t; 0]),   S = B^T W,   x = u - W z

    gives x_G = 0, x_{F} the reduced system's solution and z[:m] its intercepts: O(|F_0|^2)
    per step, no kernel evaluations, K_FF read through the free positions (no copies).
    Measured (nu-SVR, rbf, n = 5000, |F| = 1756, ~30 ratio steps): the explicit inverse
    this replaced (LU and its inversion, 2 |F|^3 flops) took 1.1 .. 2.8 s per rebuild;
    the Cholesky factor (|F|^3 / 3) ~0.07 s. When K_0 is not numerically positive
    definite (a singular kernel block) the steering is the explicit inverse of A,
    downdated in place by M' = M - M e_j e_j^T M / M_jj, while A itself is not singular
    (:func:`_bordered_inverse`; else no steering). Either steers: a point it puts
    inside the box is solved again from a fresh factorization before it is accepted,
    unless (Cholesky steering only) its residual in the smaller system is within a
    backward-stable solve's bound (:meth:`accurate`); the steering is rebuilt every
    ``REFRESH`` removals.

    With one row per sign (``signs`` given: the nu-problems) the border has one column
    per sign present in F (:func:`_border`); a set whose signs differ from the block's is
    factorized afresh.
    """

    REFRESH = 256

    def __init__(self, intercept: bool, signs: np.ndarray | None = None,
                 bounded: bool = False):
        self.intercept = intercept
        self.signs = signs
        self.bounded = bounded          # a finite box: kkt_solve's ``refined``
        self.E0: np.ndarray | None = None      # the border of the block's set
        self.F0: np.ndarray | None = None      # the set of the block (and the steering)
        self._K0 = np.empty((0, 0))
        self.position = np.empty(0, dtype=int)  # F's rows in the block
        self.factor: np.ndarray | None = None   # Cholesky factor of K0 (upper)
        self.W = np.empty((0, 0))               # K0^{-1} [E0, e_G]: border, then removed
        self._W = self.W                        # its storage (columns for REFRESH more)
        self.removed: list[int] = []            # G: positions removed since the factor
        self.inverse: np.ndarray | None = None  # the fallback: A's inverse, downdated
        self.downdates = 0
        self.last_fresh = False             # was the last solution from a factorization?
        self.fresh_factor: np.ndarray | None = None   # its Cholesky factor of the block
        self.step: tuple | None = None          # the last steered step system and solution
        self.norm: float | None = None          # max row sum of |K0|, once per block
        self.carried: Any = None                # a carried factor of K0 (polish_carry)
        self.joined: JoinedBlock | None = None  # K0 and its factor in pieces, not joined

    @property
    def steering(self) -> bool:
        """True when a factorization of the block steers the ratio steps."""
        return self.factor is not None or self.inverse is not None

    def _drop_steering(self) -> None:
        self.factor, self.inverse, self.removed, self.downdates = None, None, [], 0
        self.fresh_factor, self.step = None, None

    def focus(self, F: np.ndarray, kernel_block: Callable) -> None:
        """Make the face's data those of the free set ``F``."""
        position = None if self.F0 is None else positions_in(self.F0, F)
        if position is not None and F.size <= self.position.size and (
                self.signs is None or self._border(F).shape[1] == self.E0.shape[1]):
            if np.all(position >= 0):
                if position.size < self.position.size and self.steering:
                    gone = np.setdiff1d(self.position, position)
                    if self.downdates + gone.size > self.REFRESH or not all(
                            self._remove(int(j)) for j in gone):
                        self._drop_steering()
                self.position = position
                return
        K0, base = (None, None) if position is None else (self.K0, self.carry_base())
        block = (None if base is None
                 else carry_factor(base, K0, position, F, kernel_block))
        if block is None and base is not None:
            block = refactor_block(K0, position, F, kernel_block)
        if block is not None:
            self.adopt(F, block)
            return
        self.F0, self.K0 = F, kernel_block(F, F)
        self.E0 = self._border(F)
        self.position = np.arange(F.size)
        self.norm = None
        self._drop_steering()
        self.carried = None

    @property
    def K0(self) -> np.ndarray:
        """K_{F_0 F_0} (a block carried in pieces is joined into arrays first)."""
        self._join()
        return self._K0

    def _join(self) -> None:
        """A block carried in pieces (:class:`JoinedBlock`) becomes whole arrays."""
        if self.joined is not None:
            if self.joined.known_norm is not None:     # (the carried solve's ||K0||_1)
                self.norm = self.joined.known_norm + 1.0
            self._K0, factor = self.joined.materialize()
            for name in ("carried", "fresh_factor"):
                if getattr(self, name) is self.joined:
                    setattr(self, name, factor)
            self.joined = None

    @K0.setter
    def K0(self, value: np.ndarray) -> None:
        self._K0, self.joined = value, None

    def adopt(self, F: np.ndarray, block: JoinedBlock) -> None:
        """Make the carried ``block`` the face's (on F), its factor the next solve's."""
        self.F0, self.K0, self.E0 = F, None, self._border(F)
        self.position, self.norm = np.arange(F.size), None
        self._drop_steering()
        self.joined = self.carried = block

    def carry_base(self) -> np.ndarray | JoinedBlock | None:
        """The factor of the whole block a carried one starts from (polish_carry): the
        carried one not yet used, else the last fresh solve's; None with one row per sign
        (the nu-problems' border is factorized afresh)."""
        if self.signs is not None:
            return None
        return self.carried if self.carried is not None else self.fresh_factor

    def keep_factor(self, factor: np.ndarray | JoinedBlock) -> None:
        """The factor of a solve from a carried one becomes the block's fresh factor."""
        self._drop_steering()
        self.fresh_factor = factor

    def _remove(self, j: int) -> bool:
        """Take position j of the block out of the steering; False when it cannot."""
        self.downdates += 1
        if self.inverse is not None:
            return _downdate_in_place(self.inverse, j)
        unit = np.zeros(self.F0.size)
        unit[j] = 1.0
        w, info = lapack.dpotrs(self.factor, unit, lower=False)
        if info != 0 or not np.all(np.isfinite(w)):
            return False
        used = self.W.shape[1]
        if used == self._W.shape[1]:
            return False
        self._W[:, used] = w
        self.W = self._W[:, :used + 1]
        self.removed.append(j)
        return True

    def _border(self, F: np.ndarray) -> np.ndarray | bool:
        """The border's columns on F (True: one column of ones, False: none)."""
        if not self.intercept or self.signs is None:
            return self.intercept
        return _border(self.signs[F], True)

    def _border_columns(self) -> np.ndarray:
        """E_0 as a |F_0| x m array (m = 0 without intercept)."""
        if isinstance(self.E0, np.ndarray):
            return self.E0
        return np.ones((self.F0.size, 1 if self.E0 else 0))

    @property
    def KFF(self) -> np.ndarray:
        """K_FF as an array (a copy when F is smaller than the block's set)."""
        if self.position.size == self.F0.size:
            return self.K0
        return self.K0[np.ix_(self.position, self.position)]

    def prepare_downdates(self) -> None:
        """Factorize the block before a ratio step (only then: on the usual last round
        the face's solution is in the box and no steering is needed), reusing the
        Cholesky factor of the fresh solve that just ran on the block."""
        if self.steering or self.position.size != self.F0.size:
            return
        self._join()
        factor, self.removed, self.downdates = self.fresh_factor, [], 0
        if factor is None:
            M = self.K0 if self.K0.flags.f_contiguous else self.K0.T
            factor = _steering_factor(M, self.bounded)
            factor = None if factor is None else np.triu(factor)
        if factor is not None:
            E0 = self._border_columns()
            W, info = lapack.dpotrs(factor, E0, lower=False)
            if info == 0 and np.all(np.isfinite(W)):
                # room for the removed samples' columns (REFRESH of them at most)
                self._W = np.empty((self.F0.size, E0.shape[1] + self.REFRESH), order="F")
                self._W[:, :E0.shape[1]] = W.reshape(self.F0.size, -1)
                self.factor, self.W = factor, self._W[:, :E0.shape[1]]
                return
        self.inverse = _bordered_inverse(self.K0, self.E0)

    def cholesky(self) -> np.ndarray | None:
        """The upper Cholesky factor of the block K_0 (F the block's whole set): the fresh
        solve's, else factorized here (a block positive definite in floating point whose
        condition the fresh solve found too large still steers); None when F is smaller
        than the block or K_0 is not positive definite in floating point."""
        if self.position.size != self.F0.size:
            return None
        self._join()
        if self.fresh_factor is None:
            M = self.K0 if self.K0.flags.f_contiguous else self.K0.T
            self.fresh_factor = _steering_factor(M, self.bounded)
        return self.fresh_factor

    def product(self, x: np.ndarray) -> np.ndarray:
        """K_FF @ x without forming K_FF."""
        if self.joined is not None and self.position.size == self.F0.size:
            return self.joined.product(x)
        if self.position.size == self.F0.size:
            return self.K0 @ x
        padded = np.zeros(self.F0.size)
        padded[self.position] = x
        return (self.K0 @ padded)[self.position]

    def solve(self, rhs: np.ndarray, total: float | None, start: np.ndarray,
              margin_tol: float, fresh: bool) -> tuple[np.ndarray, float, np.ndarray | None]:
        """:func:`kkt_solve` on this face; from the kept steering unless ``fresh``."""
        self.last_fresh = fresh or not self.steering
        E = None if self.signs is None else self.E0[self.position]
        if self.last_fresh:
            carried = face_solve(self, rhs, total, start)
            if carried is not None:
                return carried
            KFF = self.KFF
            factors: list = []
            u, b, ray = kkt_solve(KFF, rhs, total, start, margin_tol, E, factors,
                                  refined=self.bounded)
            if self.position.size < self.F0.size:      # refactorized: the block shrinks
                self.F0, self.K0 = self.F0[self.position], KFF
                self.E0 = self._border(self.F0)
                self.position = np.arange(KFF.shape[0])
                self.norm = None
            self._drop_steering()
            self.fresh_factor = factors[0] if factors else None
            return u, b, ray
        k, k0 = rhs.size, self.F0.size
        r = np.zeros(k0)
        r[self.position] = rhs - self.product(start)
        t = np.zeros(0) if total is None else np.atleast_1d(total) - (
            np.full(1, start.sum()) if E is None else E.T @ start)
        if self.factor is not None:
            try:
                x, z = self._schur_solve(r, t)
            except np.linalg.LinAlgError:       # S singular: no steering on this set
                return self.solve(rhs, total, start, margin_tol, fresh=True)
        else:
            m = self.inverse.shape[0] - k0
            rr = np.concatenate([r, t]) if m else r
            step = self.inverse @ rr
            x, z = step[:k0], step[k0:]
        d = x[self.position]
        self.step = (r[self.position], t, d, z) if self.factor is not None else None
        if total is None:
            return start + d, 0.0, None
        # each row's balance exactly, whatever the steering's error
        border = np.ones((k, 1)) if E is None else E
        for c in range(border.shape[1]):
            on = border[:, c] > 0
            d[on] -= (float(d[on].sum()) - t[c]) / np.count_nonzero(on)
        return start + d, (float(z[0]) if E is None else z[:border.shape[1]]), None

    def accurate(self) -> bool:
        """True when the last steered solution (by the Cholesky factor; the inverse's are
        never kept) solves the face's system A [d; b] = [r; t], A = [K_FF E; E^T 0], with
        the residual a backward-stable solve guarantees: max |residual| <= k eps (N max
        |[d; b]| + max |[r; t]|), k the order and N = ||K_0||_inf + 1 <= ||A||_inf (a
        bound no looser than the one with ||A||_inf itself)."""
        if self.step is None:
            return False
        r, t, d, z = self.step
        E = self._border_columns()[self.position]
        b = z[:E.shape[1]]
        residual = np.concatenate([self.product(d) + E @ b - r, E.T @ d - t])
        if self.norm is None:
            self.norm = float(np.max(np.abs(self.K0).sum(axis=1))) + 1.0
        size = max(float(np.max(np.abs(d), initial=0.0)), float(np.max(np.abs(b), initial=0.0)))
        scale = self.norm * size + max(float(np.max(np.abs(r), initial=0.0)),
                                       float(np.max(np.abs(t), initial=0.0)))
        bound = residual.size * _EPS * scale
        return bool(np.all(np.isfinite(residual)) and np.max(np.abs(residual)) <= bound)

    def _schur_solve(self, r: np.ndarray, t: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """x (on the block, 0 at the removed positions) and z (the border's multipliers,
        then the removed positions') of [K_0 B; B^T 0] [x; z] = [r; t, 0] (class
        docstring)."""
        u, _ = lapack.dpotrs(self.factor, r, lower=False)
        E0 = self._border_columns()
        G = np.asarray(self.removed, dtype=np.intp)
        BtW = np.vstack([E0.T @ self.W, self.W[G]])
        Btu = np.concatenate([E0.T @ u, u[G]])
        rhs = Btu - np.concatenate([t, np.zeros(G.size)])
        z = np.linalg.solve(BtW, rhs) if rhs.size else rhs
        return u - self.W @ z, z


def _bordered_inverse(KFF: np.ndarray, intercept: Any) -> np.ndarray | None:
    """The inverse of [K_FF 1; 1^T 0] (of K_FF without intercept; of [K_FF E; E^T 0]
    when ``intercept`` is the border E) from its LU factors; None when the matrix is
    singular: a pivot exactly 0, or a reciprocal condition number (LAPACK's 1-norm
    estimate) at most k eps, k the order (:func:`kkt_solve`'s test). Ill-conditioned is
    fine here, it only steers; a singular matrix's computed inverse is round-off, whose
    steps fixed free multipliers at random: duplicated samples both free (rbf, C = 100,
    n = 400, every sample twice) had the ratio steps fix the free set down to one
    multiplier, margins then off by up to ~200, and the polish failed from SMO's point on
    4 of 12 data seeds (0.11 s of the route's 0.145 s, SVC 0.009 s); without steering each
    step is solved afresh (the minimum-norm step) and they certify in a few rounds."""
    k = KFF.shape[0]
    A = KFF
    if isinstance(intercept, np.ndarray):
        A = _bordered(KFF, intercept)
    elif intercept:
        A = _bordered(KFF, np.ones((k, 1)))
    lu_piv = regular_lu(A, A.shape[0] * _EPS)
    if lu_piv is None:
        return None
    inverse, info = lapack.dgetri(*lu_piv)
    if info != 0 or not np.all(np.isfinite(inverse)):
        return None
    return np.asfortranarray(inverse)


def _downdate_in_place(inverse: np.ndarray, j: int) -> bool:
    """Remove row and column j from the matrix whose inverse is ``inverse``: M <- M - M e_j
    e_j^T M / M_jj (in place, a BLAS rank-1 update), after which row and column j of M are
    0 (up to round-off) and the rest is the smaller matrix's inverse; False when M_jj is 0
    or not finite."""
    pivot = inverse[j, j]
    if not pivot != 0.0 or not math.isfinite(pivot):
        return False
    column, row = inverse[:, j].copy(), inverse[j, :].copy()
    updated = blas.dger(-1.0 / pivot, column, row, a=inverse, overwrite_a=True)
    if updated is not inverse and not np.shares_memory(updated, inverse):
        inverse[...] = updated              # BLAS could not work in place (not F-order)
    return True
