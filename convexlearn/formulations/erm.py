"""Regularized ERM as a declarative cvxpy problem (lambda-form, docs/conventions.md)::

    min_{w, b}  F(w, b) = (1/n) sum_i loss(y_i, <w, x_i> + b) + lam * R(w)

The intercept b is not penalized (``intercept=False`` fixes b = 0). ``lam`` is a
nonnegative cvxpy Parameter multiplying a parameter-free convex expression, so the
problem is DPP: a regularization path changes ``lam.value`` and re-solves without
recompiling (``problem.is_dcp(dpp=True)`` holds).

Problem class: a loss and a penalty whose shapes a QP writes (capabilities
"piecewise_linear", "quadratic", "piecewise_quadratic", "zero":
:data:`convexlearn.capabilities.QP_SHAPES`; hinge, perceptron, squared, squared hinge with
none/l1/l2/elastic net) -> QP; any other (logistic, exponential, lp) -> conic
(exponential and power cones). Both are solved by Clarabel by default.
"""

from __future__ import annotations

import numpy as np

from ..capabilities import QP_SHAPES
from ..losses import Loss
from ..penalties import Penalty
from .base import Formulation

__all__ = ["erm_problem"]


def _qp_shaped(entry) -> bool:
    return any(entry.has(shape) for shape in QP_SHAPES if shape in entry.VOCABULARY)


def _kind(loss: Loss, penalty: Penalty) -> str:
    # LP-representable problems (hinge/perceptron with none/l1) are reported as "qp" so
    # that the default solver is Clarabel, not HiGHS: with cvxpy 1.9.3, HiGHS returned a
    # wrong "optimal" (F = 1 at w = 0 where F* = 0) for sum(pos(1 - y (X w + b))) / n,
    # after NaN bounds in cvxpy's bound propagation. The certificate catches such answers
    # when HiGHS is asked for explicitly (tests/test_erm_exact.py).
    return "qp" if _qp_shaped(loss) and _qp_shaped(penalty) else "conic"


def erm_problem(X: np.ndarray, y: np.ndarray, loss: Loss, penalty: Penalty, lam: float,
                intercept: bool = True, sample_weight: np.ndarray | None = None) -> Formulation:
    """Build the ERM problem.

    Parameters
    ----------
    X : ndarray of shape (n, d)
    y : ndarray of shape (n,)
        Labels in {-1, +1} for a classification loss, real targets for a regression loss.
    loss : Loss
    penalty : Penalty
        Must be convex (l0 is refused by ``penalty.cvxpy``).
    lam : float >= 0
    intercept : bool
    sample_weight : ndarray of shape (n,), optional
        s_i >= 0; the loss term becomes (1/sum s) sum_i s_i loss_i.

    Returns
    -------
    Formulation
        Variables ``w`` (and ``b``); parameter ``lam`` (absent for penalty "none").
    """
    import cvxpy as cp
    n, d = X.shape
    w = cp.Variable(d, name="w")
    variables, parameters = {"w": w}, {}
    scores = X @ w
    if intercept:
        b = cp.Variable(name="b")
        variables["b"] = b
        scores = scores + b
    if sample_weight is None:
        objective = cp.sum(loss.cvxpy(y, scores)) / n
    else:
        s = np.asarray(sample_weight, dtype=float)
        objective = cp.sum(cp.multiply(s / s.sum(), loss.cvxpy(y, scores)))
    if not penalty.has("zero"):
        lam_par = cp.Parameter(nonneg=True, value=float(lam), name="lam")
        parameters["lam"] = lam_par
        objective = objective + lam_par * penalty.cvxpy(w)
    problem = cp.Problem(cp.Minimize(objective))
    name = f"ERM ({loss.name} loss, {penalty.describe()} penalty)"
    return Formulation(problem, variables, {}, parameters, name=name, kind=_kind(loss, penalty))
