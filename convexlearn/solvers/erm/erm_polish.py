"""Polish of an ERM point on its smooth piece: Newton with the piece held fixed.

Near an optimum F is smooth once three things are fixed: the coordinates at 0 of an l1 /
elastic-net penalty (held at 0.0, the others keep their signs), and for a piecewise-
linear loss (capability "kink": hinge, perceptron) the samples on the kink (held there: y_i f_i = kink, an
equality) and the side of every other sample (its loss linear); for a piecewise-linear
regression loss (capability "pieces": absolute, quantile, epsilon-insensitive) the samples
on a breakpoint r_k (held at f_i - y_i = r_k) and the piece of every other. On that piece::

    min  (1/n) sum_i loss(y_i, f_i) + lam R(w)   s.t.  y_i (<w, x_i> + b) = kink, i in K

is solved by Newton's method on the KKT system (equality-constrained Newton; the
multipliers of K are the loss's subgradients there, which the certificate then checks
against their intervals). Penalty pieces (capability "smooth_piece"): l2, elastic net /
l1 off zero, lp (p > 1) off w = 0, none. Used after a cvxpy solve, whose interior-point answer is ~1e-8 from the
optimum, to reach the exact tolerance.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from numpy.typing import ArrayLike

from ...errors import NotApplicableError

__all__ = ["penalty_grad_hess", "polish_point"]


def penalty_grad_hess(penalty: Any, lam: float, w: np.ndarray) -> Any:
    """Gradient and Hessian of lam R at w on its smooth piece (signs fixed, zeros held by
    the caller): the penalty's capability "smooth_piece" (0 for lam = 0 or an empty w)."""
    k = w.size
    if lam <= 0 or penalty.has("zero") or k == 0:
        return np.zeros(k), np.zeros((k, k))
    if not penalty.has("smooth_piece"):
        raise NotApplicableError(f"no smooth piece for penalty {penalty.describe()}")
    return penalty.smooth_piece(w, lam)


def polish_point(X: ArrayLike, y: ArrayLike, loss: Any, penalty: Any, lam: float, intercept: bool,
                 w: Any, b: Any, zeros: Any, on_kink: Any,
                 max_iter: int = 30) -> Any:
    """Newton on the smooth piece through (w, b) (see the module docstring); returns the
    polished (w, b). ``zeros``: penalty coordinates held at 0; ``on_kink``: samples held on
    the loss's kink (ignored for a smooth loss).

    Raises
    ------
    NotApplicableError
        The loss has neither a Hessian nor a kink, or the penalty no smooth piece here.
    """
    smooth = loss.has("hessian", "gradient")
    if not smooth and not (loss.has("kink") or loss.has("pieces")):
        raise NotApplicableError(f"the polish needs a loss with the capabilities 'hessian' and "
                                 f"'gradient', or 'kink' or 'pieces': no smooth piece for the "
                                 f"{loss.name} loss")
    n = X.shape[0]
    w = np.array(w, dtype=float)
    zeros = np.asarray(zeros, dtype=int)
    if penalty.has("sparse") and lam > 0:
        w[zeros] = 0.0
        A = np.flatnonzero(w)
    else:
        A = np.arange(w.size)
    K = np.zeros(0, dtype=int) if smooth else np.asarray(on_kink, dtype=int)
    XA = np.column_stack([X[:, A], np.ones(n)]) if intercept else X[:, A]
    k, dim = A.size, XA.shape[1]
    x = np.append(w[A], b) if intercept else w[A].copy()
    signs = np.sign(x[:k])
    others = np.setdiff1d(np.arange(n), K)
    if smooth or loss.has("kink"):
        # margin y_i f_i held at the kink; the others keep their side of it
        C = y[K, None] * XA[K] if K.size else np.zeros((0, dim))
        kink = 0.0 if smooth else loss.kink

        def side(f_):
            return np.sign(y * f_ - kink)[others]
    else:
        # residual f_i - y_i held at its nearest breakpoint: f_i = y_i + r_k; the others
        # keep their piece (the interval between breakpoints they lie in)
        bps = loss.pieces()[0]
        nearest = bps[np.argmin(np.abs((XA[K] @ x - y[K])[:, None] - bps[None, :]), axis=1)] \
            if K.size else np.zeros(0)
        C = XA[K] if K.size else np.zeros((0, dim))
        kink = y[K] + nearest

        def side(f_):
            return np.searchsorted(bps, (f_ - y)[others])

    def value_grad(x_):
        f = XA @ x_
        pg, _ = penalty_grad_hess(penalty, lam, x_[:k])
        val = float(np.mean(loss.value(y, f))) + (lam * penalty.value(x_[:k]) if lam > 0
                                                   else 0.0)
        g = XA.T @ loss.derivative(y, f) / n
        g[:k] += pg
        return val, g, f

    val, grad, f = value_grad(x)
    for _ in range(max_iter):
        H = np.zeros((dim, dim))
        if smooth:
            h = loss.hessian(y, f)
            H = (XA * h[:, None]).T @ XA / n
        H[:k, :k] += penalty_grad_hess(penalty, lam, x[:k])[1]
        m = K.size
        KKT = np.zeros((dim + m, dim + m))
        KKT[:dim, :dim], KKT[:dim, dim:], KKT[dim:, :dim] = H, C.T, C
        rhs = np.concatenate([-grad, kink - C @ x])
        sol = np.linalg.lstsq(KKT, rhs, rcond=None)[0]
        step = sol[:dim]
        if not np.all(np.isfinite(step)):
            break
        # the Newton step of the piece; a step leaving the piece (a sign change, a sample
        # crossing the kink) is halved, then the piece is left as it is
        t = 1.0
        for _ in range(30):
            xn = x + t * step
            side_ok = smooth or np.all(side(XA @ xn) == side(f))
            if np.all(np.sign(xn[:k]) == signs) and side_ok:
                break
            t *= 0.5
        else:
            break
        _, gn, fn = value_grad(xn)
        change = np.linalg.norm(xn - x)
        x, grad, f = xn, gn, fn
        if change <= 1e-15 * max(np.linalg.norm(x), 1e-300):
            break
    w_new = np.zeros_like(w)
    w_new[A] = x[:k]
    return w_new, (float(x[k]) if intercept else 0.0)
