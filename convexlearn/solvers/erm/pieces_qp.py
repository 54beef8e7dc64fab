"""A piecewise-linear regression loss with the l2 penalty as a dual QP of the SVM core.

The problem, with r_i = <w, x_i> + b - y_i and psi of breakpoints r_1 < ... < r_K and
slopes s_0 < ... < s_K (capability "pieces": absolute, quantile, epsilon-insensitive)::

    min_{w, b}  (1/n) sum_i v_i psi(r_i) + lam2/2 ||w||^2      (v_i = n s_i / sum s, or 1)

divided by lam2 is sum_i C_i psi(r_i) + 1/2 ||w||^2 with C_i = v_i / (n lam2). Its dual in
gamma (w = X^T gamma, sum_i gamma_i = 0 with an intercept, -gamma_i / C_i in dpsi(r_i))::

    min  1/2 ||X^T gamma||^2 - y^T gamma + sum_i C_i psi^*(-gamma_i / C_i)

psi^* is piecewise linear with slope r_k on [s_{k-1}, s_k], so gamma_i splits into one
bounded variable per slope interval: sign +1 for the intervals below 0 (gamma_i > 0),
-1 for those above, linear term p = -s (y_i + r_k) so that ``target = -s p = y_i + r_k``
(a free variable's sample sits on its breakpoint, <w, x_i> + b = y_i + r_k), upper bound
C_i times the interval's length below or above 0. This is LIBSVM's
epsilon-SVR dual for the epsilon-insensitive loss (a+, a-: p = eps - y, eps + y); the
same :class:`~convexlearn.solvers.kernel_svm.qp.DualQP`, SMO and active-set polish solve
every such loss (the linear kernel: products by blocks of X X^T).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ...errors import SolverError
from ...gram import Gram
from ...kernels import make_kernel
from ..kernel_svm.qp import DualQP
from ..kernel_svm.smo import smo_qp

__all__ = ["pieces_dual_qp", "solve_pieces_l2"]


def pieces_dual_qp(X: np.ndarray, y: np.ndarray, breakpoints: np.ndarray, slopes: np.ndarray,
                   C: np.ndarray, intercept: bool) -> DualQP:
    """The dual QP of the module docstring on the linear kernel of X; ``C`` per sample."""
    n = X.shape[0]
    signs, linear, upper, index = [], [], [], []
    for k, r in enumerate(np.asarray(breakpoints, float)):
        lo, hi = float(slopes[k]), float(slopes[k + 1])
        below = min(hi, 0.0) - lo           # the part of [s_k, s_{k+1}] below 0
        above = hi - max(lo, 0.0)           # and above
        # sign -1 above 0 (and sign +1 below): target -s p = y_i + r_k in both
        for sign, length in ((1.0, below), (-1.0, above)):
            if length > 0:
                signs.append(np.full(n, sign))
                linear.append(-sign * (y + r))
                upper.append(C * length)
                index.append(np.arange(n))
    signs = np.concatenate(signs)
    rows = ((signs, 0.0),) if intercept else ()
    return DualQP.on_samples(Gram(make_kernel("linear", X), X), signs, np.concatenate(linear),
                             np.concatenate(upper), rows, index=np.concatenate(index),
                             name="piecewise-linear regression dual (l2)")


def solve_pieces_l2(X: Any, y: np.ndarray, breakpoints: np.ndarray, slopes: np.ndarray, *,
                    lam2: float, intercept: bool, sample_weight: np.ndarray | None = None,
                    tol: float = 1e-10) -> tuple[np.ndarray, float, dict]:
    """(w, b) of the module docstring's problem by SMO on its dual QP, then the active-set
    polish (the caller certifies the point). ``tol``: SMO's maximal KKT violation, in the
    units of the target y.

    Raises
    ------
    SolverError
        SMO ended without converging.
    """
    n = X.shape[0]
    v = np.ones(n) if sample_weight is None else sample_weight * (n / np.sum(sample_weight))
    C = v / (n * lam2)
    qp = pieces_dual_qp(X, y, breakpoints, slopes, C, intercept)
    scale = max(float(np.max(np.abs(y), initial=0.0)), 1.0)
    res, _, loop = smo_qp(qp, tol=tol * scale)
    if res.status != "converged":
        raise SolverError(f"SMO on the {qp.name} ended with status {res.status!r}")
    alpha, g = res.alpha, qp.target - res.v
    polished = qp.polish(alpha, g)
    if polished is not None:
        alpha, b, g = polished
    else:
        b = None
    if b is None:
        b = qp.intercept(alpha, g)[0]
    gamma = np.zeros(n)
    np.add.at(gamma, qp.index, qp.signs * alpha)
    w = np.asarray(X.T @ gamma).ravel()
    return w, (float(b) if intercept else 0.0), {"iterations": int(res.n_iter), "loop": loop,
                                                 "polished": polished is not None}
