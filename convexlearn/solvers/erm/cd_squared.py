"""Coordinate descent for the squared loss (lasso, elastic net, ridge): what
:mod:`convexlearn.solvers.erm.cd` runs for a loss with the capability "least_squares".

F(w, b) = (1/n) sum_i v_i (y_i - <w, x_i> - b)^2 + lam1 ||w||_1 + lam2/2 ||w||^2 (v the
sample weights normalized to mean 1). At the best b, b = ybar - xbar^T w (weighted means)
and F is the same problem on the centred data Xc = diag(sqrt v) (X - 1 xbar^T),
yc = sqrt(v) (y - ybar); coordinate j's exact minimizer is

    w_j <- S(G_jj w_j - grad_j, lam1) / (G_jj + lam2),   G = (2/n) Xc^T Xc,
    grad = G w - c,  c = (2/n) Xc^T yc,   S(z, t) = sign(z) max(|z| - t, 0).

**Dense X: a working set.** Only the columns of a working set K are centred, copied and
multiplied: G_KK (|K|^2 n, never the d x d Gram when few features are active) and
c_K; covariance updates on K (d per coordinate), the sign-fixed polish on the active
set, then one pass over X gives the gradient of every coordinate (KKT check: |grad_j| <=
lam1 off the support). Violators join K and the loop repeats. K starts from the strong
rule (Tibshirani et al. 2012) at lam: |c_j| >= 2 lam1 - lam1_max, lam1_max = max |c_j|
(the coordinates that can enter), with the previous support and a path's screen.
The last pass is the certificate's X^T g (handed to it: one pass over X, not two).

**Sparse X (CSR / CSC): implicit centring.** Centring would densify X; the sweeps keep
p = 2 (X_v w - u y) (X_v = diag(u) X, u = sqrt(v)) and U = u^T p, and use

    grad_j = (1/n) (X_vj^T p - xbar_j U),   p += 2 X_vj delta,  U += 2 n xbar_j delta,

which is (1/n) Xc_j^T q at q = 2 (Xc w - yc) (the term in u cancels): O(nnz_j) per
coordinate, extra memory O(nnz + n + d) (the CSC copy, p, a few d-vectors). The polish
forms G_AA on the active set only (|A|^2 <= ``SPARSE_POLISH_ENTRIES`` and <= nnz / 8 or
2^16: its ~6 dense copies stay below half the data's memory), zeros checked by one pass.

Polish (cd_polish): early tries in a work budget; a wide face (|A| > n, lam2 > 0) by its dual.
Signs whose face has no minimizer (X_A short of full rank): cd_polish.squared_newton_finish.
The numba kernels have pure-numpy twins (:func:`sparse_epoch_reference`) the tests use.
"""

from __future__ import annotations

from typing import Any

from numpy.typing import ArrayLike

import numpy as np
import scipy.sparse as sp
from numba import njit

from .cd_polish import (PolishGate, active_cycles, polish_face, polish_face_wide,
                        polish_levels, polish_or_newton, polish_with_copies, readmit,
                        squared_newton_finish, weighted_means, zeros_stay_zero)
from .face_newton import zero_excess
from .closed_forms import ridge_pcg

__all__ = ["squared_cd", "soft_threshold", "coordinate_step", "residual_epoch",
           "GRAM_MAX_FEATURES", "gram_cycles", "gram_epoch", "gram_epoch_reference",
           "sparse_epoch_reference", "epoch_reference", "SPARSE_POLISH_ENTRIES",
           "WORKING_SET_FRACTION", "WORKING_SET_START"]

#: The sparse polish's dense |A| x |A| system is formed up to this many entries (8 bytes
#: each: 200 MB) and nnz / 8 (module docstring); a larger support is left to the sweeps.
SPARSE_POLISH_ENTRIES = 25_000_000
#: The Gram block of the working set needs |K|^2 floats (8 |K|^2 bytes: 200 MB at 5000);
#: beyond (or |K| > n), the sweeps run on the working set's centred columns (n a coordinate).
GRAM_MAX_FEATURES = 5000
#: A working set above this fraction of d is taken whole (one syrk for the d x d Gram).
WORKING_SET_FRACTION = 0.5
#: The first working set's size (the strong rule's survivors with the largest |c_j|).
WORKING_SET_START = 32


# ------------------------------------------------------------------ kernels
@njit(cache=True)
def soft_threshold(z: float, t: float) -> float:
    """S(z, t) = sign(z) max(|z| - t, 0)."""
    if z > t:
        return z - t
    if z < -t:
        return z + t
    return 0.0


@njit(cache=True)
def coordinate_step(hj: float, wj: float, gj: float, lam1: float, lam2: float) -> float:
    """The exact minimizer's move along coordinate j: S(hj wj - gj, lam1) / (hj + lam2) - wj."""
    return soft_threshold(hj * wj - gj, lam1) / (hj + lam2) - wj


@njit(cache=True)
def residual_epoch(X: np.ndarray, h: np.ndarray, q: np.ndarray, w: np.ndarray,
                   coords: np.ndarray, hdiag: np.ndarray, lam1: float, lam2: float,
                   inv_n: float) -> float:
    """One sweep over ``coords`` of the residual form (dense X, Fortran order); returns the
    largest decrease hdiag_j delta_j^2 / 2."""
    n = X.shape[0]
    worst = 0.0
    for j in coords:
        hj = hdiag[j]
        if hj + lam2 <= 0.0:
            continue
        gj = 0.0
        for i in range(n):
            gj += X[i, j] * q[i]
        gj *= inv_n
        delta = coordinate_step(hj, w[j], gj, lam1, lam2)
        if delta != 0.0:
            w[j] += delta
            worst = max(worst, 0.5 * (hj + lam2) * delta * delta)
            for i in range(n):
                q[i] += h[i] * X[i, j] * delta
    return worst


def epoch_reference(X: ArrayLike, h: Any, q: Any, w: Any, coords: Any, hdiag: Any, lam1: Any,
                    lam2: Any, inv_n: Any) -> float:
    """Pure-numpy :func:`residual_epoch` / :func:`convexlearn.solvers.erm.cd.csc_epoch` (X
    dense or sparse), in place."""
    worst = 0.0
    for j in coords:
        hj = hdiag[j]
        if hj + lam2 <= 0.0:
            continue
        col = X[:, [j]].toarray().ravel() if sp.issparse(X) else X[:, j]
        gj = float(col @ q) * inv_n
        z = hj * w[j] - gj
        new = np.sign(z) * max(abs(z) - lam1, 0.0) / (hj + lam2)
        delta = new - w[j]
        if delta != 0.0:
            q += h * col * delta
            w[j] = new
            worst = max(worst, 0.5 * (hj + lam2) * delta * delta)
    return worst


@njit(cache=True)
def gram_epoch(G: np.ndarray, grad: np.ndarray, w: np.ndarray, coords: np.ndarray,
               lam1: float, lam2: float) -> float:
    """Covariance updates over ``coords`` (indices into G's rows); grad = G w - c kept
    up to date; returns the largest decrease (G_jj + lam2) delta_j^2 / 2."""
    d = G.shape[0]
    worst = 0.0
    for j in coords:
        hj = G[j, j]
        if hj + lam2 <= 0.0:
            continue
        delta = coordinate_step(hj, w[j], grad[j], lam1, lam2)
        if delta != 0.0:
            w[j] += delta
            worst = max(worst, 0.5 * (hj + lam2) * delta * delta)
            for k in range(d):
                grad[k] += G[k, j] * delta
    return worst


@njit(cache=True)
def gram_cycles(G: np.ndarray, grad: np.ndarray, w: np.ndarray, every: np.ndarray,
                c: np.ndarray, F0: float, lam1: float, lam2: float, stop_rel: float,
                max_sweeps: int) -> int:
    """:func:`~convexlearn.solvers.erm.cd_polish.active_cycles` of :func:`gram_epoch`, compiled
    (a small working set runs hundreds of sweeps of microseconds each), stopping when the
    largest decrease is <= stop_rel |F|, F = 1/2 w^T (grad - c) + F0 + lam1 ||w||_1 +
    lam2/2 ||w||^2 (grad = G w - c); returns the number of sweeps."""
    sweeps, first, active, m = 0, True, np.empty(w.shape[0], dtype=np.int64), 0
    while sweeps < max_sweeps:
        worst = gram_epoch(G, grad, w, every if first else active[:m], lam1, lam2)
        sweeps += 1
        F = F0
        for j in range(w.shape[0]):
            F += 0.5 * w[j] * (grad[j] - c[j]) + lam1 * abs(w[j]) + 0.5 * lam2 * w[j] * w[j]
        if worst <= stop_rel * abs(F):
            if first:
                break
            first = True            # the active set settled: a sweep over every coordinate
        elif first:
            first, m = False, 0     # sweeps over w's nonzeros until they settle
            for j in range(w.shape[0]):
                if w[j] != 0.0:
                    active[m] = j
                    m += 1
    return sweeps


@njit(cache=True)
def _sweep_csc_centred(data, indices, indptr, xbar, p, U, w, coords, hdiag, lam1, lam2,
                       inv_n, n):
    """One sweep of the implicitly centred residual form (module docstring); U is a
    1-element array updated in place. Returns the largest decrease."""
    worst = 0.0
    for j in coords:
        hj = hdiag[j]
        if hj + lam2 <= 0.0:
            continue
        gj = 0.0
        for k in range(indptr[j], indptr[j + 1]):
            gj += data[k] * p[indices[k]]
        gj = (gj - xbar[j] * U[0]) * inv_n
        delta = coordinate_step(hj, w[j], gj, lam1, lam2)
        if delta != 0.0:
            w[j] += delta
            worst = max(worst, 0.5 * (hj + lam2) * delta * delta)
            for k in range(indptr[j], indptr[j + 1]):
                p[indices[k]] += 2.0 * data[k] * delta
            U[0] += 2.0 * n * xbar[j] * delta
    return worst


def sparse_epoch_reference(Xv: Any, xbar: np.ndarray, p: np.ndarray, U: np.ndarray,
                           w: np.ndarray, coords: Any, hdiag: np.ndarray, lam1: float,
                           lam2: float) -> float:
    """Pure-numpy :func:`_sweep_csc_centred` (Xv dense or sparse), in place."""
    n = Xv.shape[0]
    worst = 0.0
    for j in coords:
        hj = hdiag[j]
        if hj + lam2 <= 0.0:
            continue
        col = Xv[:, [j]].toarray().ravel() if sp.issparse(Xv) else np.asarray(Xv)[:, j]
        gj = (float(col @ p) - xbar[j] * U[0]) / n
        z = hj * w[j] - gj
        delta = np.sign(z) * max(abs(z) - lam1, 0.0) / (hj + lam2) - w[j]
        if delta != 0.0:
            w[j] += delta
            p += 2.0 * col * delta
            U[0] += 2.0 * n * xbar[j] * delta
            worst = max(worst, 0.5 * (hj + lam2) * delta * delta)
    return worst


def gram_epoch_reference(G: Any, grad: Any, w: Any, coords: Any, lam1: Any,
                         lam2: Any) -> float:
    """Pure-numpy :func:`gram_epoch`, in place."""
    worst = 0.0
    for j in coords:
        hj = G[j, j]
        if hj + lam2 <= 0.0:
            continue
        z = hj * w[j] - grad[j]
        new = np.sign(z) * max(abs(z) - lam1, 0.0) / (hj + lam2)
        delta = new - w[j]
        if delta != 0.0:
            grad += G[:, j] * delta
            w[j] = new
            worst = max(worst, 0.5 * (hj + lam2) * delta * delta)
    return worst


# ------------------------------------------------------------------ driver
def squared_cd(prob: Any, w: np.ndarray, keep: np.ndarray, tol: float, max_sweeps: int,
               polish: bool, use_numba: bool) -> tuple[np.ndarray, float, dict]:
    """The squared loss's coordinate descent on ``prob`` (a :class:`cd._Problem`): the
    working-set form on dense X, the implicitly centred one on sparse X; returns (w, b,
    info) with info["cert"] = (scores, X^T g) at the answer when computed on the way."""
    if prob.sparse:
        return _SparseSquared(prob).run(w, keep, tol, max_sweeps, polish, use_numba)
    return _DenseSquared(prob).run(w, keep, tol, max_sweeps, polish, use_numba)


@njit(cache=True)
def _csc_column_sums(data, indptr):
    """Each column's sum and sum of squares (X in CSC form), one pass over the values."""
    d = indptr.shape[0] - 1
    s, q = np.zeros(d), np.zeros(d)
    for j in range(d):
        for k in range(indptr[j], indptr[j + 1]):
            s[j] += data[k]
            q[j] += data[k] * data[k]
    return s, q


class _DenseSquared:
    """Working-set coordinate descent on dense X (module docstring)."""

    def __init__(self, prob):
        self.prob = prob
        cache = prob.cache
        if "dense_stats" not in cache:
            X = np.asarray(prob.X, dtype=float)
            xbar, ybar, u = weighted_means(prob)
            yc = prob.y - ybar if u is None else u * (prob.y - ybar)
            # c over every column in one pass: (2/n) X^T (u * yc) (the xbar part cancels:
            # sum_i u_i yc_i = sum_i v_i (y_i - ybar) = 0)
            c = (2.0 / prob.n) * (X.T @ (yc if u is None else u * yc))
            cache["dense_stats"] = (X, xbar, ybar, u, yc, c)
        self.X, self.xbar, self.ybar, self.u, self.yc, self.c = cache["dense_stats"]
        # the working set's centred columns and Gram block (grown, kept along a path)
        self.ws = cache.setdefault("working_set", {"K": np.zeros(0, dtype=np.int64),
                                                   "Xc": np.zeros((prob.n, 0), order="F"),
                                                   "G": np.zeros((0, 0))})

    def _grow(self, new):
        """Add columns ``new`` to the working set: centred copies and, while |K| <=
        min(n, GRAM_MAX_FEATURES), their Gram block (else None: residual sweeps)."""
        ws, n, d = self.ws, self.prob.n, self.prob.d
        new = np.setdiff1d(new, ws["K"])
        if new.size == 0:
            return
        Xn = np.empty((n, new.size), order="F")     # centred straight into column order
        np.subtract(self.X if new.size == d else self.X[:, new], self.xbar[new], out=Xn)
        if self.u is not None:
            Xn *= self.u[:, None]
        K = np.concatenate([ws["K"], new])
        order = np.argsort(K, kind="stable")
        G = None
        if ws["G"] is not None and K.size <= min(n, GRAM_MAX_FEATURES):
            block = Xn.T @ Xn                       # syrk: Xn.T is Xn's own buffer
            block *= 2.0 / n
            if ws["K"].size == 0:
                G = block
            else:
                cross = (2.0 / n) * (ws["Xc"].T @ Xn)
                G = np.block([[ws["G"], cross], [cross.T, block]])
                G = np.ascontiguousarray(G[np.ix_(order, order)])
        ws["K"], ws["G"] = K[order], G
        ws["Xc"] = Xn if ws["Xc"].shape[1] == 0 else \
            np.asfortranarray(np.hstack([ws["Xc"], Xn])[:, order])
        ws.pop("hdiag", None)

    def _start(self, w, keep):
        """The first working set: the strong rule at lam (|c_j| >= 2 lam1 - max |c|) and
        the screen, its ``WORKING_SET_START`` largest |c_j| (at least twice w's support),
        and w's support; all of X when that is most of it, or the strong set and n d^2 <= 1e8."""
        lam1, d, n = self.prob.lam1, self.prob.d, self.prob.n
        c = np.abs(self.c)
        top = float(c.max(initial=0.0))
        strong = (c >= 2.0 * lam1 - top if lam1 > 0 else np.ones(d, dtype=bool)) & keep
        cand = np.flatnonzero(strong)
        size = max(WORKING_SET_START, 2 * int(np.count_nonzero(w)))
        if cand.size > size and (cand.size <= WORKING_SET_FRACTION * d or n * d * d > 1e8):
            cand = cand[np.argsort(-c[cand], kind="stable")[:size]]
        K0 = np.union1d(cand, np.flatnonzero(w))
        if K0.size > WORKING_SET_FRACTION * d:
            K0 = np.arange(d)
        self._grow(K0 if K0.size else np.array([int(np.argmax(c))]))

    def _violators(self, grad, lam1):
        """Coordinates outside K with |grad_j| > lam1, the worst first; at most
        max(|K|, WORKING_SET_START) of them (the working set at most doubles a round), all
        of X when that is most of it."""
        K, d = self.ws["K"], self.prob.d
        outside = np.ones(d, dtype=bool)
        outside[K] = False
        viol = np.flatnonzero(outside & (np.abs(grad) > lam1 * (1 + 1e-12)))
        cap = max(K.size, WORKING_SET_START)
        if viol.size > cap:
            viol = viol[np.argsort(-np.abs(grad[viol]), kind="stable")[:cap]]
        if viol.size and K.size + viol.size > WORKING_SET_FRACTION * d:
            viol = np.flatnonzero(outside)
        return viol

    def run(self, w, keep, tol, max_sweeps, polish, use_numba):
        prob = self.prob
        lam1 = prob.lam1
        self._start(w, keep)
        gate = PolishGate()
        info = {"gram": True, "outer": 0, "readmitted": 0, "sweeps": 0, "polished": False}
        while True:
            info["outer"] += 1
            K = self.ws["K"]
            face = _Face(self, w[K].copy(), use_numba)
            keepK = keep[K] | (face.w != 0)

            def attempt(late, search, K=K, face=face):   # a polish try (cd_polish.polish_levels)
                finish = polish_or_newton(prob, face.polished, K, gate.newton, late)
                return polish_with_copies(prob.cache, self.X, _spread(face.w, K, prob.d),
                                          finish, within=K, search=search)
            polished = polish_levels(face, keepK, tol, max_sweeps, polish, gate, info,
                                     attempt, prob)
            w = _spread(face.w, K, prob.d)
            scores, XTg, grad = self._gradient(w)
            viol = self._violators(grad, lam1)
            if viol.size == 0:
                break
            info["readmitted"] += int(viol.size)
            keep = keep.copy()
            keep[viol] = True
            self._grow(viol)
        b = self.ybar - float(self.xbar @ w) if prob.intercept else 0.0
        info.update(polished=polished, grad=grad, working_set=int(K.size),
                    gram=self.ws["G"] is not None,
                    cert=None if self.u is not None else (scores + b, XTg))
        return w, b, info

    def _gradient(self, w):
        """Scores X w (b excluded), X^T g with g = 2 (X w + b - y) at the best b, and the
        loss gradient in w: one pass over X (the active columns, then X^T)."""
        X, n = self.X, self.prob.n
        A = np.flatnonzero(w)
        b = self.ybar - float(self.xbar @ w) if self.prob.intercept else 0.0
        scores = X[:, A] @ w[A] if A.size else np.zeros(n)
        g = 2.0 * (scores + b - self.prob.y)
        if self.u is not None:
            g = self.prob.v * g
        XTg = X.T @ g
        # the centred gradient (2/n) Xc^T (...) = (X^T g - xbar sum g) / n
        grad = (XTg - self.xbar * g.sum()) / n if self.prob.intercept else XTg / n
        return scores, XTg, grad


def _spread(wK, K, d):
    w = np.zeros(d)
    w[K] = wK
    return w


class _Face:
    """Coordinate descent restricted to the working set K: covariance updates on G_KK, or
    (|K| > min(n, GRAM_MAX_FEATURES)) residual sweeps on K's centred columns."""

    def __init__(self, owner, wK, use_numba):
        prob, ws = owner.prob, owner.ws
        self.n, self.lam1, self.lam2 = prob.n, prob.lam1, prob.lam2
        self.w, self.G, self.Xc, self.yc = wK, ws["G"], ws["Xc"], owner.yc
        self.c = owner.c[ws["K"]]
        self.use_numba = use_numba
        if self.G is not None:
            self.g = self.G @ wK - self.c
            self.F0 = float(self.yc @ self.yc) / self.n
        else:
            self.q = 2.0 * (self.Xc @ wK - self.yc)
            self.h = np.full(self.n, 2.0)
            if "hdiag" not in ws:
                ws["hdiag"] = 2.0 * np.einsum("ij,ij->j", self.Xc, self.Xc) / self.n
            self.hdiag = ws["hdiag"]

    def sweep(self, coords):
        l1, l2 = self.lam1, self.lam2
        if self.G is not None:
            run = gram_epoch if self.use_numba else gram_epoch_reference
            return run(self.G, self.g, self.w, coords, l1, l2)
        if self.use_numba:
            return residual_epoch(self.Xc, self.h, self.q, self.w, coords, self.hdiag, l1, l2,
                                  1.0 / self.n)
        return epoch_reference(self.Xc, self.h, self.q, self.w, coords, self.hdiag,
                                        l1, l2, 1.0 / self.n)

    def cycles(self, keep, stop_tol, max_sweeps):
        """active_cycles of :meth:`sweep` on ``keep`` to a decrease <= stop_tol |F|
        (compiled on the Gram block); returns the sweeps."""
        if self.G is not None and self.use_numba:
            return gram_cycles(self.G, self.g, self.w, np.flatnonzero(keep).astype(np.int64),
                               self.c, self.F0, self.lam1, self.lam2, stop_tol, max_sweeps)
        return active_cycles(self.sweep, self.w, keep, lambda: stop_tol * abs(self.objective()),
                             max_sweeps)

    def grad(self):
        return self.g if self.G is not None else self.Xc.T @ self.q / self.n

    def objective(self):
        pen = self.lam1 * np.abs(self.w).sum() + 0.5 * self.lam2 * float(self.w @ self.w)
        if self.G is not None:
            return 0.5 * float(self.w @ (self.g - self.c)) + self.F0 + pen
        return 0.25 * float(self.q @ self.q) / self.n + pen

    def polished(self, wK):
        """The sign-fixed minimizer on the active set when it keeps its signs and every
        zero of K has |grad_j| <= lam1 (up to rounding); else None."""
        A = np.flatnonzero(wK)
        if self.G is not None:
            GA = self.G[np.ix_(A, A)]
        elif A.size > self.n and self.lam2 > 0 and A.size <= GRAM_MAX_FEATURES:
            GA = None       # wide: the n x n dual form
        else:
            if A.size > min(self.n, GRAM_MAX_FEATURES):
                return None
            XA = self.Xc[:, A]
            GA = (2.0 / self.n) * (XA.T @ XA)
        wA = polish_face_wide(self.Xc[:, A], self.c[A], wK[A], self.lam1, self.lam2) \
            if GA is None else polish_face(GA, self.c[A], wK[A], self.lam1, self.lam2)
        if wA is None:
            return None
        out = np.zeros_like(wK)
        out[A] = wA
        if self.G is not None:
            ok = zeros_stay_zero(None, None, out, self.lam1, self.G, self.c)
        else:
            ok = zeros_stay_zero(self.Xc, self.yc, out, self.lam1, None, None)
        return out if ok else None


class _SparseSquared:
    """Implicitly centred coordinate descent on sparse X (module docstring)."""

    def __init__(self, prob):
        # this call's CSC copy is not cached: it stayed alive through the certificate (1.6x
        # Lasso's memory beyond the data); the vectors below are kept along a path
        self.prob, cache, X, u = prob, prob.cache, prob.X, None if prob.v is None else \
            np.sqrt(prob.v)
        X.sum_duplicates()
        self.Xv = X if u is None else sp.csc_matrix(sp.diags(u) @ X)
        if "sparse_stats" not in cache:
            n = prob.n
            colsum, sumsq = _csc_column_sums(X.data, X.indptr)
            if prob.v is None:      # the certificate's units and X^T 1, from this pass
                cache["column_stats"] = (np.sqrt(sumsq / n), colsum)
            xbar, ybar, u = weighted_means(prob)
            if u is not None:
                sumsq = _csc_column_sums(self.Xv.data, self.Xv.indptr)[1]
            var = sumsq - n * xbar * xbar          # ||Xc_j||^2 (v-weighted); a column
            var = np.where(var > 1e-12 * sumsq, var, 0.0)   # constant up to rounding: 0
            uy = np.asarray(prob.y, dtype=float) if u is None else u * prob.y
            cache["sparse_stats"] = (xbar, ybar, u, uy, (2.0 / n) * var)
        self.xbar, self.ybar, self.u, self.uy, self.hdiag = cache["sparse_stats"]

    def _state(self, w):
        p = 2.0 * (self.Xv @ w - self.uy)
        U = np.array([float(p.sum() if self.u is None else self.u @ p)])
        return p, U

    def run(self, w, keep, tol, max_sweeps, polish, use_numba):
        prob = self.prob
        lam1, lam2, n, Xv, xbar = prob.lam1, prob.lam2, prob.n, self.Xv, self.xbar
        hdiag, (p, U), ybar = self.hdiag, self._state(w), self.ybar

        def sweep(coords):
            if use_numba:
                return _sweep_csc_centred(Xv.data, Xv.indices, Xv.indptr, xbar, p, U, w,
                                          coords, hdiag, lam1, lam2, 1.0 / n, float(n))
            return sparse_epoch_reference(Xv, xbar, p, U, w, coords, hdiag, lam1, lam2)

        def objective():
            # q = p - s u with s = 2 (xbar^T w - ybar): F's loss part is ||q||^2 / (4 n),
            # ||q||^2 = ||p||^2 - 2 s U + s^2 n (u^T p = U, u^T u = n); no n-vector formed
            s = 2.0 * (float(xbar @ w) - ybar) if prob.intercept else 0.0
            qq = float(p @ p) - 2.0 * s * U[0] + s * s * n
            return 0.25 * qq / n + lam1 * np.abs(w).sum() + 0.5 * lam2 * float(w @ w)

        info = {"gram": False, "outer": 1, "readmitted": 0, "sweeps": 0, "polished": False}
        if ridge := (lam1 == 0 and lam2 > 0):   # CG on the normal equations: 17 iterations
            w[:], info["cg_iterations"], done = ridge_pcg(Xv, xbar, self._c(Xv), hdiag, lam2)
            p, U = self._state(w)
        for attempt in range(0 if ridge and done else 6):
            stop_tol = tol * 10.0 ** (-2 * attempt)
            info["sweeps"] += active_cycles(sweep, w, keep, lambda: stop_tol * abs(objective()),
                                            max_sweeps)
            grad = self._grad(p, U)
            keep, back = readmit(keep, grad, w, lam1)
            info["readmitted"] += back
            if back:
                continue
            if not polish:
                break
            new = self._polish(w, lam1, lam2)
            if new is not None:
                w[:] = new
                p, U = self._state(w)
                info["polished"] = True
                break
        b = ybar - float(xbar @ w) if prob.intercept else 0.0
        info["grad"] = self._grad(p, U)
        return w, b, info

    def _c(self, XA):
        """(2/n) Xc_A^T yc = (2/n) X_vA^T (u (y - ybar)) (Xc_A = X_vA - u xbar_A^T, u^T yc = 0)."""
        yc = self.uy - self.ybar if self.u is None else self.uy - self.ybar * self.u
        return (2.0 / self.prob.n) * np.asarray(XA.T @ yc).ravel()

    def _grad(self, p, U):
        return (np.asarray(self.Xv.T @ p).ravel() - self.xbar * U[0]) / self.prob.n

    def _polish(self, w, lam1, lam2):
        A = np.flatnonzero(w)
        if A.size == 0:
            return w.copy()
        if A.size * A.size > min(SPARSE_POLISH_ENTRIES, max(1 << 16, self.Xv.nnz // 8)):
            return None
        n, XA, xa = self.prob.n, self.Xv[:, A], self.xbar[A]
        # X_vA^T u = n xbar_A, u^T u = n: Xc_A^T Xc_A = X_vA^T X_vA - n xbar_A xbar_A^T
        GA = (XA.T @ XA).toarray() - n * np.outer(xa, xa)
        GA *= 2.0 / n
        wA = polish_face(GA, self._c(XA), w[A], lam1, lam2)
        if wA is None:      # no face minimizer with these signs: the active-set Newton
            return squared_newton_finish(self.prob, w)
        out = np.zeros_like(w)
        out[A] = wA
        p, U = self._state(out)
        grad = self._grad(p, U)
        zero = out == 0
        if np.all(np.abs(grad[zero]) <= lam1 * (1 + 1e-12)):
            return out
        # up to the rounding of grad_j (its terms' sizes, as zeros_stay_zero)
        Xv = self.Xv
        absX = sp.csc_matrix((np.abs(Xv.data), Xv.indices, Xv.indptr), shape=Xv.shape)
        size = (np.asarray(absX.T @ np.abs(p)).ravel() + np.abs(self.xbar * U[0])) / n
        return None if np.any(zero_excess(grad[zero], size[zero], lam1) > 0) else out
