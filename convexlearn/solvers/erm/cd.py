"""Coordinate descent for l1 / elastic-net ERM (squared and logistic losses), with a polish.

Problem (lambda-form)::

    F(w, b) = (1/n) sum_i loss(y_i, <w, x_i> + b) + lam1 ||w||_1 + lam2/2 ||w||^2,
    lam1 = lam r, lam2 = lam (1 - r)   (r = 1 for l1, l1_ratio for elastic net)

Squared loss (y - f)^2 (also "squared_classification", the same with y = +-1): with an
intercept, X and y are centred (b = ybar - xbar^T w) and, when n >= d, coordinate descent
runs on the Gram matrix G = (2/n) Xc^T Xc ("covariance updates": one n d^2 product, then d
per coordinate; up to ``GRAM_MAX_FEATURES``), else on the residual (n per coordinate, dense or scipy.sparse CSC).
Coordinate j minimizes F exactly::

    w_j <- S(G_jj w_j - grad_j, lam1) / (G_jj + lam2),   S(z, t) = sign(z) max(|z| - t, 0)

Logistic loss: proximal Newton (glmnet's IRLS): around the current scores f, the loss is
replaced by its second-order model with weights h_i = l''(f_i) and gradients g_i =
l'(f_i); coordinate descent solves the model's l1 problem (the same update with
grad_j = (1/n) sum_i x_ij q_i, q the model's gradient in f, and G_jj = (1/n) sum_i h_i
x_ij^2); a backtracking line search on F along the result keeps F decreasing.

Active-set cycling: after a sweep over all coordinates, sweeps run over the nonzero ones
until they stop moving, then a full sweep again, until a full sweep changes nothing.
Screening on a path: the sequential strong rule (Tibshirani et al. 2012) leaves out j with
|grad_j(previous point)| < 2 lam1 - lam1_prev from the sweeps; a final check over every
coordinate takes back any it wrongly left out. Stopping: every coordinate's decrease of F
(G_jj delta_j^2 / 2) below ``tol * |F|`` (scale-free: in units of F).

Polish: on the active set A with the signs s fixed, F is smooth,
L(w_A, b) + lam1 s^T w_A + lam2/2 ||w_A||^2; Newton's method (one linear solve for the
squared loss) gives its minimizer to round-off. It is kept when the signs hold and every
coordinate outside A satisfies |grad_j| <= lam1 (so its 0.0 is exact); otherwise coordinate
descent resumes from the better point with a tighter tolerance. Copies of a column share
their coefficients evenly first, and a singular face is solved by least squares
(:mod:`convexlearn.solvers.erm.cd_polish`).

Sample weights s: the loss term (1/sum s) sum s_i loss_i = (1/n) sum v_i loss_i with
v = n s / sum s; the squared loss runs on sqrt(v)-scaled data centred at the weighted
means, the logistic's model weights its l'(f_i), l''(f_i) by v_i.

The hot loops are numba kernels (``@njit(cache=True)``); :func:`epoch_reference` and
:func:`gram_epoch_reference` are the pure-numpy versions the tests compare them with.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from numpy.typing import ArrayLike
import scipy.sparse as sp
from numba import njit

from ...errors import NotApplicableError
from .cd_polish import (loss_grad_w, zeros_stay_zero, polish_smooth, polish_squared, weighted,
                        duplicate_groups, even_split)
from ...solution import History, Timer

__all__ = ["coordinate_descent", "cd", "epoch_reference", "gram_epoch_reference",
           "penalty_split", "applies", "require"]

#: What coordinate descent needs of a loss, either set: least squares (exact coordinate
#: minimization, the Gram form) or a C^2 loss with a bounded Hessian (proximal Newton).
LOSS_NEEDS = (("least_squares",), ("hessian", "twice_differentiable", "curvature"))
#: What it needs of a penalty: lam R = lam1 ||w||_1 + lam2/2 ||w||^2.
PENALTY_NEEDS = ("split",)


def applies(loss: Any, penalty: Any) -> bool:
    """True when the loss and the penalty have what coordinate descent needs."""
    return any(loss.has(*need) for need in LOSS_NEEDS) and penalty.has(*PENALTY_NEEDS)


def require(loss: Any, penalty: Any, problem: str, method: str = "coordinate descent") -> None:
    """Raise NotApplicableError naming ``method``, ``problem`` and the missing capability."""
    loss.require_any(method, problem, *LOSS_NEEDS)
    penalty.require(method, problem, *PENALTY_NEEDS)


#: The Gram form needs d^2 floats (8 d^2 bytes: 200 MB at d = 5000); beyond, residual form.
GRAM_MAX_FEATURES = 5000


def penalty_split(penalty: Any, lam: float) -> tuple[float, float]:
    """(lam1, lam2) of lam R(w) = lam1 ||w||_1 + lam2/2 ||w||^2 (the penalty's capability
    "split": l1, elastic_net, l2, none)."""
    if not penalty.has("split"):
        raise NotApplicableError(f"coordinate descent needs penalty l1, elastic_net, l2 or "
                                 f"none (the capability 'split'); got {penalty.describe()}")
    return penalty.split(lam)


# ------------------------------------------------------------------ kernels
@njit(cache=True)
def _soft(z, t):
    if z > t:
        return z - t
    if z < -t:
        return z + t
    return 0.0


@njit(cache=True)
def _step(hj, wj, gj, lam1, lam2):
    """The exact minimizer's move along coordinate j: S(hj wj - gj, lam1) / (hj + lam2) - wj."""
    return _soft(hj * wj - gj, lam1) / (hj + lam2) - wj


@njit(cache=True)
def _epoch_dense(X, h, q, w, coords, hdiag, lam1, lam2, inv_n):
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
        delta = _step(hj, w[j], gj, lam1, lam2)
        if delta != 0.0:
            w[j] += delta
            worst = max(worst, 0.5 * (hj + lam2) * delta * delta)
            for i in range(n):
                q[i] += h[i] * X[i, j] * delta
    return worst


@njit(cache=True)
def _epoch_csc(data, indices, indptr, h, q, w, coords, hdiag, lam1, lam2, inv_n):
    """:func:`_epoch_dense` for X in CSC form."""
    worst = 0.0
    for j in coords:
        hj = hdiag[j]
        if hj + lam2 <= 0.0:
            continue
        gj = 0.0
        for k in range(indptr[j], indptr[j + 1]):
            gj += data[k] * q[indices[k]]
        gj *= inv_n
        delta = _step(hj, w[j], gj, lam1, lam2)
        if delta != 0.0:
            w[j] += delta
            worst = max(worst, 0.5 * (hj + lam2) * delta * delta)
            for k in range(indptr[j], indptr[j + 1]):
                q[indices[k]] += h[indices[k]] * data[k] * delta
    return worst


@njit(cache=True)
def _epoch_gram(G, grad, w, coords, lam1, lam2):
    """One sweep of covariance updates: grad = G w - c is kept up to date."""
    d = G.shape[0]
    worst = 0.0
    for j in coords:
        hj = G[j, j]
        if hj + lam2 <= 0.0:
            continue
        delta = _step(hj, w[j], grad[j], lam1, lam2)
        if delta != 0.0:
            w[j] += delta
            worst = max(worst, 0.5 * (hj + lam2) * delta * delta)
            for k in range(d):
                grad[k] += G[k, j] * delta
    return worst


def epoch_reference(X: ArrayLike, h: Any, q: Any, w: Any, coords: Any, hdiag: Any, lam1: Any,
                    lam2: Any, inv_n: Any) -> float:
    """Pure-numpy :func:`_epoch_dense` / :func:`_epoch_csc` (X dense or sparse), in place."""
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


def gram_epoch_reference(G: Any, grad: Any, w: Any, coords: Any, lam1: Any, lam2: Any) -> float:
    """Pure-numpy :func:`_epoch_gram`, in place."""
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


# ---------------------------------------------------------------- the driver
def _active_cycles(sweep, d: int, w: np.ndarray, keep: np.ndarray, stop: float,
                   max_sweeps: int) -> int:
    """Full sweep over ``keep``, then sweeps over the nonzero coordinates until they stop
    moving, until a full sweep changes nothing; returns the number of sweeps."""
    every = np.flatnonzero(keep).astype(np.int64)
    sweeps = 0
    while sweeps < max_sweeps:
        worst = sweep(every)
        sweeps += 1
        if worst <= stop():
            break
        active = np.flatnonzero(w).astype(np.int64)
        while sweeps < max_sweeps:
            sweeps += 1
            if sweep(active) <= stop():
                break
    return sweeps


class _Problem:
    """Data and penalty of one solve (centred copies for the squared loss)."""

    def __init__(self, X, y, loss, lam1, lam2, intercept, v=None):
        self.v = v          # sample weights normalized to mean 1 (None: unweighted)
        self.sparse = sp.issparse(X)
        self.X = X.tocsc() if self.sparse else X
        self.y, self.loss, self.lam1, self.lam2 = y, loss, lam1, lam2
        self.intercept = intercept
        self.n, self.d = X.shape
        self.squared = loss.has("least_squares")


def coordinate_descent(X: ArrayLike, y: ArrayLike, loss: Any, penalty: Any, lam: float,
                       intercept: bool = True, *,
                       w0: np.ndarray | None = None, b0: float = 0.0, tol: float = 1e-12,
                       max_sweeps: int = 10000, polish: bool = True,
                       screen: tuple | None = None, use_numba: bool = True,
                       cache: dict | None = None, sample_weight: Any = None) -> Any:
    """Minimize F by coordinate descent (see the module docstring); returns (w, b, info).

    Parameters
    ----------
    X : ndarray (n, d) or scipy.sparse matrix
    y : ndarray (n,)
        Targets (squared) or labels in {-1, +1}.
    loss : Loss
        "squared", "squared_classification" or "logistic".
    penalty : Penalty
        "l1" or "elastic_net" (also "l2", "none").
    lam : float
    intercept : bool
    w0, b0 : starting point (a path's previous point).
    tol : float
        Stop when every coordinate's decrease of F is <= tol * |F| (relative, units of F).
    screen : (lam1_prev, grad_prev), optional
        The sequential strong rule's input: the previous lam1 and the loss gradient in w at
        the previous point.
    use_numba : bool
        False runs the pure-numpy reference sweeps (tests).
    cache : dict, optional
        Keeps what depends on (X, y, intercept) only across calls (a path): the centred,
        column-ordered X and the Gram matrix (n d^2, the dominant cost of one solve).
        The caller owns it and must not share it between problems.
    sample_weight : ndarray (n,), optional
        s_i >= 0: the loss term is (1/sum s) sum_i s_i loss_i = (1/n) sum_i v_i loss_i with
        v = n s / sum s (the squared loss: CD on sqrt(v)-scaled, weighted-centred data).

    Returns
    -------
    w : ndarray, b : float
    info : dict
        ``sweeps``, ``outer`` (proximal Newton steps), ``polished`` (bool), ``screened``
        (coordinates left out by the strong rule), ``readmitted``, ``grad`` (loss gradient in
        w at the result, for the next strong rule), ``gram`` (bool).
    """
    require(loss, penalty, f"ERM with the {loss.name} loss and the {penalty.describe()} "
            f"penalty")
    lam1, lam2 = penalty.split(lam)
    v = (None if sample_weight is None else np.asarray(sample_weight, dtype=float)
         * (X.shape[0] / np.sum(sample_weight)))
    prob = _Problem(X, y, loss, lam1, lam2, intercept, v)
    prob.cache = {} if cache is None else cache
    w = np.zeros(prob.d) if w0 is None else np.array(w0, dtype=float)
    b = float(b0) if intercept else 0.0
    keep = np.ones(prob.d, dtype=bool)
    if screen is not None and lam1 > 0:
        lam1_prev, grad_prev = screen
        keep = (np.abs(grad_prev) >= 2 * lam1 - lam1_prev) | (w != 0)
    if prob.squared:
        w, b, info = _squared(prob, w, keep, tol, max_sweeps, polish, use_numba)
    else:
        w, b, info = _logistic(prob, w, b, keep, tol, max_sweeps, polish, use_numba)
    info["screened"] = int(prob.d - keep.sum())
    return w, b, info


def _with_copies_split(prob, w, polish):
    """``polish(w)``; when it fails (None) and some active column has identical copies,
    ``polish`` again from w with each group of copies sharing its sum evenly (CD can leave
    copies with opposite signs, a face without a stationary point). The copies are searched
    only then (one pass over X, cached): most problems have none and polish at once."""
    out = polish(w)
    if out is not None:
        return out
    if "duplicates" not in prob.cache:
        prob.cache["duplicates"] = duplicate_groups(prob.X)
    groups = [g for g in prob.cache["duplicates"] if np.any(w[g] != 0)]
    return polish(even_split(w, groups)) if groups else None


def _centred_dense(prob):
    """(Xc, yc, xbar, ybar) with Xc Fortran-ordered (column sweeps)."""
    X, y, v = np.asarray(prob.X, dtype=float), prob.y.astype(float), prob.v
    xbar, ybar = np.zeros(prob.d), 0.0
    if prob.intercept:      # the (weighted) means: b = ybar - xbar^T w at the optimum
        xbar = X.mean(axis=0) if v is None else v @ X / prob.n
        ybar = float(y.mean() if v is None else v @ y / prob.n)
    if v is None:
        return np.asfortranarray(X - xbar), y - ybar, xbar, ybar
    # (1/n) sum v_i (y_i - b - x_i w)^2 = (1/n) ||sqrt(v) (yc - Xc w)||^2 at the best b
    r = np.sqrt(v)
    return np.asfortranarray(r[:, None] * (X - xbar)), r * (y - ybar), xbar, ybar


def _squared(prob, w, keep, tol, max_sweeps, polish, use_numba):
    """Squared loss: Gram form when dense and n >= d, else residual form; then polish."""
    n, d, lam1, lam2 = prob.n, prob.d, prob.lam1, prob.lam2
    gram = not prob.sparse and n >= d and d <= GRAM_MAX_FEATURES
    if prob.sparse:
        # centring would densify X: the intercept is a coordinate of its own instead
        return _logistic(prob, w, 0.0, keep, tol, max_sweeps, polish, use_numba)
    if "centred" not in prob.cache:
        prob.cache["centred"] = _centred_dense(prob)
    Xc, yc, xbar, ybar = prob.cache["centred"]
    F0 = float(yc @ yc) / n
    info = {"gram": gram, "outer": 1, "readmitted": 0}
    if gram:
        if "gram" not in prob.cache:
            G = Xc.T @ Xc
            G *= 2.0 / n
            prob.cache["gram"] = (G, (2.0 / n) * (Xc.T @ yc))
        G, c = prob.cache["gram"]
        grad = G @ w - c

        def sweep(coords):
            if use_numba:
                return _epoch_gram(G, grad, w, coords, lam1, lam2)
            return gram_epoch_reference(G, grad, w, coords, lam1, lam2)

        def loss_grad():
            return grad

        def objective():
            return 0.5 * float(w @ (grad - c)) + F0 + lam1 * np.abs(w).sum() \
                + 0.5 * lam2 * float(w @ w)
    else:
        h = np.full(n, 2.0)
        q = 2.0 * (Xc @ w - yc)
        hdiag = 2.0 * np.einsum("ij,ij->j", Xc, Xc) / n

        def sweep(coords):
            if use_numba:
                return _epoch_dense(Xc, h, q, w, coords, hdiag, lam1, lam2, 1.0 / n)
            return epoch_reference(Xc, h, q, w, coords, hdiag, lam1, lam2, 1.0 / n)

        def loss_grad():
            return Xc.T @ q / n

        def objective():
            return 0.25 * float(q @ q) / n + lam1 * np.abs(w).sum() + 0.5 * lam2 * float(w @ w)

    sweeps, polished = 0, False
    for attempt in range(6):
        stop_tol = tol * 10.0 ** (-2 * attempt)
        sweeps += _active_cycles(sweep, d, w, keep, lambda: stop_tol * abs(objective()),
                                 max_sweeps)
        keep, readmitted = _readmit(keep, loss_grad(), w, lam1)
        info["readmitted"] += readmitted
        if readmitted:
            continue
        if not polish:
            break
        Gg, cg = (G, c) if gram else (None, None)

        def attempt(w_):
            new_ = polish_squared(Xc, yc, w_, lam1, lam2, Gg, cg)
            ok = new_ is not None and zeros_stay_zero(Xc, yc, new_, lam1, Gg, cg)
            return new_ if ok else None

        new = _with_copies_split(prob, w, attempt)
        if new is not None:
            w[:] = new
            polished = True
            break
    info.update(sweeps=sweeps, polished=polished)
    b = ybar - float(xbar @ w) if prob.intercept else 0.0
    info["grad"] = (G @ w - c) if gram else Xc.T @ (2.0 * (Xc @ w - yc)) / n
    return w, b, info


def _readmit(keep, grad, w, lam1):
    """Coordinates the strong rule left out that violate |grad_j| <= lam1: back in."""
    if keep.all():
        return keep, 0
    bad = (~keep) & (np.abs(grad) > lam1)
    if bad.any():
        keep = keep | bad
    return keep, int(bad.sum())


# ------------------------------------------------------------------- logistic
def _loss_terms(loss, y, f, v=None):
    """(mean loss, l'(f), l''(f)), each sample's weighted by v."""
    return (float(np.mean(weighted(v, loss.value(y, f)))), weighted(v, loss.derivative(y, f)),
            weighted(v, loss.hessian(y, f)))


def _logistic(prob, w, b, keep, tol, max_sweeps, polish, use_numba):
    """Proximal Newton with coordinate descent on each quadratic model (residual form, the
    intercept a coordinate of its own); the squared loss on sparse X also comes here (its
    model is exact: one outer step)."""
    X, y, loss, n, d = prob.X, prob.y, prob.loss, prob.n, prob.d
    lam1, lam2 = prob.lam1, prob.lam2
    if "fortran" not in prob.cache:
        prob.cache["fortran"] = X if prob.sparse else np.asfortranarray(X, dtype=float)
    Xf = prob.cache["fortran"]

    def F_of(w_, b_):
        f_ = X @ w_ + b_
        return float(np.mean(weighted(prob.v, loss.value(y, f_)))) + lam1 * np.abs(w_).sum() \
            + 0.5 * lam2 * float(w_ @ w_)

    f = X @ w + b
    Fv = F_of(w, b)
    sweeps, outer, readmitted, polished = 0, 0, 0, False
    stop_tol = max(tol, 1e-13)
    last_rel = 1.0
    for outer in range(1, 200):
        _, g, h = _loss_terms(loss, y, f, prob.v)
        h = np.maximum(h, 1e-12)
        if prob.sparse:
            hdiag = np.asarray(Xf.multiply(Xf).T @ h).ravel() / n
        else:
            hdiag = np.einsum("ij,ij,i->j", Xf, Xf, h) / n
        q = g.copy()
        wn, bn = w.copy(), b

        def sweep(coords):
            nonlocal bn
            if prob.sparse:
                worst = (_epoch_csc(Xf.data, Xf.indices, Xf.indptr, h, q, wn, coords, hdiag,
                                    lam1, lam2, 1.0 / n) if use_numba else
                         epoch_reference(Xf, h, q, wn, coords, hdiag, lam1, lam2, 1.0 / n))
            else:
                worst = (_epoch_dense(Xf, h, q, wn, coords, hdiag, lam1, lam2, 1.0 / n)
                         if use_numba else
                         epoch_reference(Xf, h, q, wn, coords, hdiag, lam1, lam2, 1.0 / n))
            if prob.intercept:
                hb = h.mean()
                delta = -q.mean() / hb
                np.add(q, h * delta, out=q)
                bn += delta
                worst = max(worst, 0.5 * hb * delta * delta)
            return worst

        # inexact inner solves while far (glmnet's practice): the model's own accuracy is
        # worth little before the outer steps settle; exact (the final tolerance) near the end
        inner_tol = 1e-14 if prob.squared else max(min(1e-4, 1e-2 * last_rel), 1e-14)
        sweeps += _active_cycles(sweep, d, wn, keep, lambda: inner_tol * abs(Fv), max_sweeps)
        # line search on F along the model's minimizer
        dw, db = wn - w, bn - b
        df = X @ dw + db
        slope = float(g @ df) / n + lam1 * (np.abs(wn).sum() - np.abs(w).sum()) \
            + lam2 * float(w @ dw) + 0.5 * lam2 * float(dw @ dw)
        t, accepted = 1.0, False
        for _ in range(40):
            wt, bt = w + t * dw, b + t * db
            Ft = F_of(wt, bt)
            if Ft <= Fv + 1e-4 * t * min(slope, 0.0):
                accepted = True
                break
            t *= 0.5
        if not accepted:
            break
        change = Fv - Ft
        last_rel = change / max(abs(Ft), 1e-300)
        w, b, Fv = wt, bt, Ft
        f = f + t * df
        if not prob.intercept:
            b = 0.0
        grad = loss_grad_w(X, loss, y, f, n, prob.v)
        keep, back = _readmit(keep, grad, w, lam1)
        readmitted += back
        if back:
            continue
        if change <= stop_tol * abs(Fv) or prob.squared:
            if not polish:
                break
            out = _with_copies_split(prob, w, lambda w_: polish_smooth(
                X, y, loss, w_, b, lam1, lam2, prob.intercept, prob.v))
            if out is not None:
                (w, b), polished = out, True
                break
            stop_tol *= 1e-2      # the support is not settled yet: go on, tighter
    if polish and not polished:
        out = _with_copies_split(prob, w, lambda w_: polish_smooth(
            X, y, loss, w_, b, lam1, lam2, prob.intercept, prob.v))
        if out is not None:
            (w, b), polished = out, True
    grad = loss_grad_w(X, loss, y, X @ w + b, n, prob.v)
    return w, b, {"sweeps": sweeps, "outer": outer, "polished": polished,
                  "readmitted": readmitted, "grad": grad, "gram": False}


# ------------------------------------------------------- as an iterative method
def cd(oracle: Any, x0: np.ndarray | None = None, *, tol: float = 1e-10, max_iter: int = 10000,
       polish: bool = True) -> Any:
    """ERM method "cd": :func:`coordinate_descent` on the oracle's problem; returns a
    Solution (status "converged": the certificate decides "optimal"). ``tol`` is the
    relative per-coordinate decrease of F at which sweeps stop; ``max_iter`` bounds the
    sweeps."""
    timer = Timer()
    w0, b0 = (None, 0.0) if x0 is None else oracle.split(x0)
    w, b, info = coordinate_descent(oracle.X, oracle.y, oracle.loss, oracle.penalty,
                                    oracle.lam, oracle.intercept, w0=w0, b0=b0, tol=tol,
                                    max_sweeps=max_iter, polish=polish,
                                    sample_weight=oracle.weights)
    history = History()
    status = "converged" if info["sweeps"] < max_iter else "max_iter"
    sol = oracle.solution(oracle.join(w, b), "cd", status, info["sweeps"], history, timer(),
                          tol=tol, max_iter=max_iter, polished=info["polished"],
                          screened=info["screened"])
    sol.extra["cd"] = {k: v for k, v in info.items() if k != "grad"}
    return sol
