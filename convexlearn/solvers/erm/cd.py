"""Coordinate descent for l1 / elastic-net ERM (squared and logistic losses), with a polish.

Problem (lambda-form)::

    F(w, b) = (1/n) sum_i loss(y_i, <w, x_i> + b) + lam1 ||w||_1 + lam2/2 ||w||^2,
    lam1 = lam r, lam2 = lam (1 - r)   (r = 1 for l1, l1_ratio for elastic net)

Squared loss (y - f)^2 (also "squared_classification", the same with y = +-1): exact
coordinate minimization on the centred problem, in :mod:`convexlearn.solvers.erm.cd_squared`
(dense X: a working set with its Gram block and a KKT pass over X; sparse X: implicitly
centred sweeps, never densified). Coordinate j minimizes F exactly::

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
L(w_A, b) + lam1 s^T w_A + lam2/2 ||w_A||^2. The squared loss: one linear solve gives its
minimizer, kept when the signs hold and every coordinate outside A satisfies
|grad_j| <= lam1 (so its 0.0 is exact); otherwise coordinate descent resumes from the
better point with a tighter tolerance. Copies of a column share their coefficients evenly
first, and a singular face is solved by least squares
(:mod:`convexlearn.solvers.erm.cd_polish`). The logistic loss: the active-set Newton of
:mod:`convexlearn.solvers.erm.face_newton` (null-space moves that drop surplus columns,
projected Newton on the face, violators joining), tried once an outer step lowers F by at
most :data:`POLISH_FROM` |F| and once per support, long before CD's own stop (at a tiny
lam1 CD creeps along the null space of the active columns: tens of thousands of sweeps).

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

from ...compiled import load_without_refresh
from ...errors import NotApplicableError
from .cd_polish import active_cycles, loss_grad_w, polish_with_copies, readmit, weighted
from .face_newton import active_set_newton
from . import cd_squared
from .cd_squared import (coordinate_step, epoch_reference, gram_epoch, gram_epoch_reference,
                         residual_epoch, squared_cd)
from ...solution import History, Timer

__all__ = ["coordinate_descent", "cd", "epoch_reference", "gram_epoch_reference", "gram_epoch",
           "residual_epoch", "csc_epoch",
           "penalty_split", "applies", "require"]

#: What coordinate descent needs of a loss, either set: least squares (exact coordinate
#: minimization, the Gram form) or a C^2 loss with a bounded Hessian (proximal Newton).
LOSS_NEEDS = (("least_squares",), ("hessian", "twice_differentiable", "curvature"))
#: What it needs of a penalty: lam R = lam1 ||w||_1 + lam2/2 ||w||^2.
PENALTY_NEEDS = ("split",)
#: Logistic: the active-set Newton finish is tried once an outer step lowers F by at most
#: POLISH_FROM |F| (clf 1000 x 50 of rank 40, lam = 1e-4 lam_max: tried after 23 sweeps
#: it certifies; CD's own stop took 56 000, and 2 800 to reach a step of 1e-6 |F|)
POLISH_FROM = 1e-4
#: ... and while the tries' work so far (n k^2 a Hessian formed) is at most POLISH_WORK
#: times the sweeps' (nnz(X) each): BLAS-3 products against CD's scalar loops (sparse
#: 2000 x 500, 445 active: a try after 47 sweeps took 1 s, CD's whole solve 0.09 s)
POLISH_WORK = 10.0


def applies(loss: Any, penalty: Any) -> bool:
    """True when the loss and the penalty have what coordinate descent needs."""
    return any(loss.has(*need) for need in LOSS_NEEDS) and penalty.has(*PENALTY_NEEDS)


def require(loss: Any, penalty: Any, problem: str, method: str = "coordinate descent") -> None:
    """Raise NotApplicableError naming ``method``, ``problem`` and the missing capability."""
    loss.require_any(method, problem, *LOSS_NEEDS)
    penalty.require(method, problem, *PENALTY_NEEDS)



def penalty_split(penalty: Any, lam: float) -> tuple[float, float]:
    """(lam1, lam2) of lam R(w) = lam1 ||w||_1 + lam2/2 ||w||^2 (the penalty's capability
    "split": l1, elastic_net, l2, none)."""
    if not penalty.has("split"):
        raise NotApplicableError(f"coordinate descent needs penalty l1, elastic_net, l2 or "
                                 f"none (the capability 'split'); got {penalty.describe()}")
    return penalty.split(lam)


# ------------------------------------------------------------------ kernels
@njit(cache=True)
def csc_epoch(data: np.ndarray, indices: np.ndarray, indptr: np.ndarray, h: np.ndarray,
              q: np.ndarray, w: np.ndarray, coords: np.ndarray, hdiag: np.ndarray,
              lam1: float, lam2: float, inv_n: float) -> float:
    """:func:`residual_epoch` for X in CSC form."""
    worst = 0.0
    for j in coords:
        hj = hdiag[j]
        if hj + lam2 <= 0.0:
            continue
        gj = 0.0
        for k in range(indptr[j], indptr[j + 1]):
            gj += data[k] * q[indices[k]]
        gj *= inv_n
        delta = coordinate_step(hj, w[j], gj, lam1, lam2)
        if delta != 0.0:
            w[j] += delta
            worst = max(worst, 0.5 * (hj + lam2) * delta * delta)
            for k in range(indptr[j], indptr[j + 1]):
                q[indices[k]] += h[indices[k]] * data[k] * delta
    return worst


# ---------------------------------------------------------------- the driver
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
        self.tried = set()  # sign patterns the squared loss's active-set Newton started from


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
        w, b, info = squared_cd(prob, w, keep, tol, max_sweeps, polish, use_numba)
    else:
        w, b, info = _logistic(prob, w, b, keep, tol, max_sweeps, polish, use_numba)
    info["screened"] = int(prob.d - keep.sum())
    return w, b, info


# ------------------------------------------------------------------- logistic
def _loss_terms(loss, y, f, v=None):
    """(l'(f), l''(f)), each sample's weighted by v (the value is F_of's, in the line
    search: not recomputed here)."""
    return weighted(v, loss.derivative(y, f)), weighted(v, loss.hessian(y, f))


def _logistic(prob, w, b, keep, tol, max_sweeps, polish, use_numba):
    """Proximal Newton with coordinate descent on each quadratic model (residual form, the
    intercept a coordinate of its own)."""
    X, y, loss, n = prob.X, prob.y, prob.loss, prob.n
    lam1, lam2 = prob.lam1, prob.lam2
    if prob.sparse:
        Xf = X          # this call's CSC copy (not cached: see _SparseSquared)
    else:
        if "fortran" not in prob.cache:
            prob.cache["fortran"] = np.asfortranarray(X, dtype=float)
        Xf = prob.cache["fortran"]

    def F_of(w_, b_):
        f_ = X @ w_ + b_
        return float(np.mean(weighted(prob.v, loss.value(y, f_)))) + lam1 * np.abs(w_).sum() \
            + 0.5 * lam2 * float(w_ @ w_)

    def finish(w_, b_):
        return polish_with_copies(prob.cache, prob.X, w_, lambda u: active_set_newton(
            X, y, loss, u, b_, lam1, lam2, prob.intercept, prob.v, used=hessians))

    f = X @ w + b
    Fv = F_of(w, b)
    tried, spent, hessians = set(), 0.0, []
    sweep_work = float(X.nnz if prob.sparse else n * prob.d)
    sweeps, outer, readmitted, polished = 0, 0, 0, False
    stop_tol = max(tol, 1e-13)
    last_rel = 1.0
    for outer in range(1, 200):
        g, h = _loss_terms(loss, y, f, prob.v)
        h = np.maximum(h, 1e-12)
        hb = float(h.mean())          # the intercept's curvature: fixed over the sweeps
        if prob.sparse:
            hdiag = np.asarray(Xf.multiply(Xf).T @ h).ravel() / n
        else:
            hdiag = np.einsum("ij,ij,i->j", Xf, Xf, h) / n
        q = g.copy()
        wn, bn = w.copy(), b

        def sweep(coords):
            nonlocal bn
            if prob.sparse:
                worst = (csc_epoch(Xf.data, Xf.indices, Xf.indptr, h, q, wn, coords, hdiag,
                                    lam1, lam2, 1.0 / n) if use_numba else
                         epoch_reference(Xf, h, q, wn, coords, hdiag, lam1, lam2, 1.0 / n))
            else:
                worst = (residual_epoch(Xf, h, q, wn, coords, hdiag, lam1, lam2, 1.0 / n)
                         if use_numba else
                         epoch_reference(Xf, h, q, wn, coords, hdiag, lam1, lam2, 1.0 / n))
            if prob.intercept:
                delta = -float(q.sum()) / n / hb
                np.add(q, h * delta, out=q)
                bn += delta
                worst = max(worst, 0.5 * hb * delta * delta)
            return worst

        # inexact inner solves while far (glmnet's practice): the model's own accuracy is
        # worth little before the outer steps settle; exact (the final tolerance) near the end
        inner_tol = max(min(1e-4, 1e-2 * last_rel), 1e-14)
        sweeps += active_cycles(sweep, wn, keep, lambda: inner_tol * abs(Fv), max_sweeps)
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
        keep, back = readmit(keep, grad, w, lam1)
        readmitted += back
        if back:
            continue
        final = change <= stop_tol * abs(Fv)
        if final and not polish:
            break
        # the active-set Newton also repairs the support (drops, joins): tried once the
        # outer steps are small, once per support (signs: -0.0 is 0), long before CD's own
        # stop, while the work of the tries so far (n k^2 a Hessian, k active) is within
        # POLISH_WORK times the sweeps' (nnz(X) each); at CD's stop (final) whatever the
        # work, still once per support
        support = np.packbits(w > 0).tobytes() + np.packbits(w < 0).tobytes()
        work = n * (np.count_nonzero(w) + 1.0) ** 2
        if polish and support not in tried and (
                final or change <= POLISH_FROM * abs(Fv)
                and spent + work <= POLISH_WORK * sweeps * sweep_work):
            tried.add(support)
            hessians.clear()
            out = finish(w, b)
            spent += work * max(1, sum(hessians))
            if out is not None:
                (w, b), polished = out, True
                break
        if final:
            stop_tol *= 1e-2      # the support is not settled yet: go on, tighter
    if polish and not polished:
        out = finish(w, b)
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
    sol.extra["cd"] = {k: v for k, v in info.items() if k not in ("grad", "cert")}
    return sol

load_without_refresh(globals())   # cached kernels load without numba's compiler contexts
load_without_refresh(vars(cd_squared))
