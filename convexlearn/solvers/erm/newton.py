"""Newton's method (Newton-Raphson; IRLS for the logistic loss) with a backtracking line search.

    H_k p_k = -grad F(x_k),   H_k = (1/n) A^T diag(l''(f)) A + lam diag(R''(w)),
    x_{k+1} = x_k + t_k p_k,  t_k = 2^-j the first with
    F(x_k + t p_k) <= F(x_k) + c t <grad F(x_k), p_k>   (c = 1e-4)

For the logistic loss with y in {-1, +1}, l''(f) = sigma(m)(1 - sigma(m)), and each step
is the weighted least-squares problem of the lectures' IRLS. The squared hinge has only
a generalized second derivative 2 * 1[m < 1]; Newton on it is semismooth Newton
(LIBLINEAR's), which the line search keeps globally convergent.

Needs a loss with a (generalized) second derivative and a penalty that is twice
differentiable ("none", "l2"). Stops when ||grad F|| <= tol (float64 gradient). H is
factored by Cholesky; a singular H (no curvature in some direction, e.g. unregularized
squared hinge with few active samples) gets a least-squares (pseudo-inverse) step.

Forming H (n d^2) is the cost of an iteration, and far from the solution an exact H buys
little: the step is limited by the loss's nonlinearity, not by H's accuracy. So H climbs
an accuracy ladder (see :func:`newton`): subsampled rows (Byrd, Chin, Neveitt & Nocedal,
"On the use of stochastic Hessian information in optimization methods for machine
learning", SIAM J. Optim. 2011), the sample doubling whenever a second estimate on
held-out rows says its error is not small beside the progress the step made, then all
rows, in float32
while progress is fast, float64 after the first slow step; near the solution the last
factored H is reused (chord steps) while they are predicted to finish. Gradients, values,
the line search and the stopping rule are always exact (float64, all samples): the
ladder changes the direction only, never the fixed point or what "converged" means.
"""

from __future__ import annotations

import math
from typing import Any, Callable

import numpy as np

from ...solution import History, Timer
from ..lapack import cho_factor, cho_solve
from .gd import roundoff_progress
from .oracle import ERMOracle

__all__ = ["newton", "subsample_residual", "CG_DIM", "CHORD_RATE", "MAX_CHORDS"]

#: Above this many coordinates (or on a sparse X) Newton solves H p = -g by conjugate
#: gradients on Hessian-vector products instead of factoring H (p^2 memory, p^3 time).
CG_DIM = 3000
#: Reuse of the factored H (see :func:`newton`, ``reuse_hessian``): only while the chord
#: steps are predicted to shrink the gradient norm at least CHORD_RATE-fold each, and to
#: reach ``tol`` within MAX_CHORDS steps.
CHORD_RATE = 0.1
MAX_CHORDS = 4


def _cg_direction(oracle: ERMOracle, x: np.ndarray, grad: np.ndarray,
                  gnorm: float, floor: float = 0.0, scale: float = 1.0) -> np.ndarray:
    """Truncated-Newton step: CG on H p = -grad until ||H p + grad|| <= max(eta ||grad||,
    floor), eta = min(0.5, sqrt(||grad|| / scale)) (superlinear near the solution:
    Eisenstat-Walker's forcing term, as in LIBLINEAR's trust-region Newton; ``scale`` a
    gradient norm that makes it unit-free, 1 by default), at most 250 iterations; ``floor``
    (half Newton's tol): a model residual below it buys nothing (the last step's CG went
    from 6e-14 to 1e-20 in 31 products where 1e-15 was asked). A direction of
    non-positive curvature ends CG with the iterate so far (or -grad)."""
    h = oracle.curvature(x)
    eta = min(0.5, float(np.sqrt(gnorm / scale)))
    p = np.zeros_like(grad)
    r = -grad.copy()
    d = r.copy()
    rr = float(r @ r)
    for _ in range(250):
        if np.sqrt(rr) <= max(eta * gnorm, floor):
            break
        Hd = oracle.hessian_vector(x, d, h)
        dHd = float(d @ Hd)
        if dHd <= 0:
            break
        t = rr / dHd
        p += t * d
        r -= t * Hd
        rr_new = float(r @ r)
        d = r + (rr_new / rr) * d
        rr = rr_new
    return p if np.any(p) else -grad


def _held_out(oracle: ERMOracle, stride: int) -> ERMOracle:
    """The oracle of the rows a stride-``stride`` subsample leaves out (offset stride // 2):
    a second, independent Hessian estimate to check the first against. The rows are a
    strided view of X, not a copy (BLAS takes the row stride; measured: a copy of half
    the rows costs more than the two products the check makes with them)."""
    rows = slice(stride // 2, None, stride)
    held = ERMOracle(oracle.X[rows], oracle.y[rows], oracle.loss, oracle.penalty,
                     oracle.lam, oracle.intercept)
    # the weights normalized over all n, as in the subsampled ERMOracle.hessian
    held.weights = None if oracle.weights is None else oracle.weights[rows]
    return held


def subsample_residual(held_out: ERMOracle, x: np.ndarray, grad: np.ndarray,
                       p: np.ndarray) -> float:
    """||grad + H_o p|| / ||grad||: how far the step p, solved with a subsampled Hessian,
    is from solving Newton's equation with H_o, the Hessian estimated on held-out rows
    (an inexact-Newton residual; ~sqrt(2) times the residual against the full H, since
    both estimates err independently). One product with the held-out rows each way."""
    return float(np.linalg.norm(grad + held_out.hessian_vector(x, p))) / float(
        np.linalg.norm(grad))


def newton(oracle: ERMOracle, x0: np.ndarray | None = None, *, tol: float = 1e-8,
           max_iter: int = 100, callback: Callable[..., Any] | None = None, armijo: float = 1e-4,
           max_backtracks: int = 60,
           mixed_precision: bool = True, subsample: bool | None = None,
           reuse_hessian: bool = False,
           stop: Callable[[np.ndarray, float, np.ndarray], bool] | None = None,
           forcing_scale: float = 1.0) -> Any:
    """Minimize F by damped Newton; returns a Solution (history: objective, grad_norm, step,
    precision, hessian_rows, hessian_formed, subsample_residual, time; each row is the
    iterate and the step that led to it, except hessian_rows / hessian_formed / precision:
    of the step taken from it).

    ``subsample``: the Hessian averages l'' A^T A over every k-th sample only,
    k = min(8, n // (10 p)) with p the number of coordinates (d, plus 1 for an intercept):
    at least 10 samples per coordinate; k = 1, no subsampling, when that is below 2. The
    subsample is kept while it does not limit the progress: after each subsampled step,
    with r = ||grad_new|| / ||grad|| (the contraction the step achieved) and e the
    residual of its direction against a Hessian estimated on held-out rows
    (:func:`subsample_residual`), k halves (the sample doubles) when e > r / 2, and stays
    otherwise. Far from the solution the loss's nonlinearity limits each step (r ~ 0.3-0.4
    at e ~ 0.05 measured on logistic n=50000, d=200: six steps on every 8th row), and near
    it e stays while r would fall: the sample then grows to all rows. (An oracle without
    an in-memory X, e.g. the distributed one, has no held-out rows: there k halves at
    every step.) Default
    (None): only from a cold start (no ``x0``); a
    warm start (a path's previous point) is usually in the quadratic phase already, where
    a subsampled H costs steps (measured: a 20-point logistic path at n=5000, d=50 took 37
    ms with it, 28 ms without).
    ``mixed_precision``: form the Hessian in float32 (half the time of its n d^2 product);
    its relative error ~1e-7 cond(H) only perturbs the direction.
    ``reuse_hessian``: near the solution H hardly changes over the next (shorter) steps,
    and a step with the last factored H (a chord step) costs a gradient instead of an
    n p^2 product; its linear rate rho is about the relative change of H. rho is taken
    as 2 r after a step with a fresh H (r = ||grad_new|| / ||grad||; measured ~1.5-2 r
    on logistic n=50000, d=200) and as the observed r after a chord step. The next step
    reuses the factor when rho <= CHORD_RATE (0.1) and log(tol / ||grad_new||) / log(rho)
    <= MAX_CHORDS (4): the chord steps are predicted to finish. Otherwise, or when a
    reused step's line search finds no decrease, H is formed anew. Off by default: chord
    steps converge linearly, so they stop just below ``tol`` where a Newton step would
    overshoot it by orders; the exact route (whose ``tol`` is far below what its
    certificate needs) turns it on.

    ``stop``: called at each iterate as ``stop(x, F(x), grad F(x))`` before the test
    ||grad|| <= tol; True ends the run there with status "converged" (the caller's own
    criterion, e.g. the exact route's certificate; ``tol`` stays the last resort). A
    ``stop`` with an attribute ``gradient_target`` (a gradient norm at which it expects to
    pass) also sets Newton-CG's floor (half of it, as half of ``tol`` otherwise): CG then
    does not solve the model further than the caller needs.

    ``forcing_scale``: Newton-CG's forcing term is sqrt(||grad|| / forcing_scale) (see
    :func:`_cg_direction`); the default 1 takes the gradient's own units, the exact route
    passes ||grad F(0)|| (measured on a 50000 x 20000 sparse logistic problem: 44
    Hessian-vector products and 8 steps against 54 and 7 with the default).

    Both approximations (subsample, float32) end for good (all rows, float64) at the first
    step that fails to halve the gradient norm, or whose line search finds no decrease
    (the step is then retried with the exact Hessian): the inexact direction is the
    suspect. Gradients, values and the stopping rule are always exact.
    """
    oracle.require("newton", hessian=True, twice_smooth_penalty=True)
    timer, history = Timer(), History()
    x = oracle.zeros() if x0 is None else np.array(x0, dtype=float)
    if subsample is None:
        subsample = x0 is None
    stride = min(8, oracle.n // (10 * oracle.dim)) if subsample else 1
    stride = stride if stride >= 2 else 1
    # A sparse X or a large p: Newton-CG (H never formed: a dense p x p H of a 20 000-column
    # X is 3.2 GB); otherwise the factored H of the accuracy ladder below.
    cg = oracle.sparse or oracle.dim > CG_DIM
    if cg:
        stride, mixed_precision = 1, False
    held_out = (_held_out(oracle, stride)
                if stride > 1 and isinstance(oracle.X, np.ndarray) else None)
    value, grad = oracle.value_grad(x)
    status, k, t = "max_iter", 0, 1.0
    factor, reuse = None, False      # the last Cholesky factor of H, and whether to reuse it
    e = np.nan                       # subsample residual of the step that led to x
    for k in range(1, max_iter + 1):
        gnorm = float(np.linalg.norm(grad))
        reuse = reuse and factor is not None and not cg
        history.record(objective=value, grad_norm=gnorm, step=t,
                       precision=32 if mixed_precision else 64,
                       hessian_rows=-(-oracle.n // stride), hessian_formed=int(not reuse),
                       subsample_residual=e, time=timer())
        if callback is not None and callback(k, x, value) is False:
            status = "stopped"
            break
        if gnorm <= tol or (stop is not None and stop(x, value, grad)):
            status = "converged"
            break
        if cg:
            p = _cg_direction(oracle, x, grad, gnorm,
                              0.5 * max(tol, getattr(stop, "gradient_target", 0.0)),
                              forcing_scale)
        elif reuse:
            p = -cho_solve(factor, grad)
        else:
            H = oracle.hessian(x, dtype=np.float32 if mixed_precision else np.float64,
                               stride=stride)
            try:
                # H and grad are finite (finite data and iterates): skip scipy's input scans.
                factor = cho_factor(H)
                p = -cho_solve(factor, grad)
            except np.linalg.LinAlgError:   # singular H: pseudo-inverse step
                factor = None
                p = -np.linalg.lstsq(H, grad, rcond=None)[0]
        slope = float(grad @ p)
        if not slope < 0:        # not a descent direction (H singular along grad): use -grad
            p, slope = -grad, -gnorm ** 2
        t = 1.0
        for _ in range(max_backtracks):
            x_new = x + t * p
            value_new, grad_new = oracle.value_grad(x_new)
            if value_new <= value + armijo * t * slope or \
                    roundoff_progress(value, value_new, gnorm ** 2, grad_new):
                break
            t *= 0.5
        else:
            if reuse:                             # the old H is the suspect: form it anew
                reuse = False
                continue
            if stride > 1 or mixed_precision:     # the approximate H is the suspect
                stride, mixed_precision = 1, False
                continue
            break        # no decrease at machine precision: the gradient norm says how close
        ratio, e = float(np.linalg.norm(grad_new)) / gnorm, np.nan
        if ratio > 0.5:
            stride, mixed_precision = 1, False    # slow progress: exact Hessians for good
        elif stride > 1 and held_out is None:
            stride //= 2                          # no held-out rows: the doubling ladder
        elif stride > 1 and not reuse:
            e = subsample_residual(held_out, x, grad, p)
            if e > ratio / 2:                     # the subsample limits the progress now
                stride //= 2
                held_out = _held_out(oracle, stride) if stride > 1 else None
        rho = ratio if reuse else 2.0 * ratio          # the chord rate (see the docstring)
        gnew = ratio * gnorm
        reuse = (reuse_hessian and stride == 1 and t == 1.0 and 0.0 < rho <= CHORD_RATE
                 and tol > 0
                 and (gnew <= tol or math.log(tol / gnew) / math.log(rho) <= MAX_CHORDS))
        x, value, grad = x_new, value_new, grad_new
    return oracle.solution(x, "newton", status, k, history, timer(), objective=value, tol=tol,
                           max_iter=max_iter)

