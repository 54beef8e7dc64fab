"""Regularized ERM estimators: :class:`convexlearn.ERM` behind fit/predict.

Problem solved (one-vs-rest for more than two classes)::

    F(w, b) = (1/n) sum_i loss(y_i, <w, x_i> + b) + lam * R(w),    b unpenalized

Conversions (see :mod:`convexlearn.erm`): scikit-learn's ``LogisticRegression(C)`` with an
l2 penalty is loss="logistic", penalty="l2", lam = 1/(n C); ``Ridge(alpha)`` is
loss="squared", penalty="l2", lam = 2 alpha / n; ``Lasso(alpha)`` is loss="squared",
penalty="l1", lam = 2 alpha.

Sample and class weights: the loss term is the weighted mean (1/sum v) sum_i v_i loss_i,
v_i = class_weight[y_i] * sample_weight_i (integer weights are copies of samples; lam keeps
its meaning).
"""

from __future__ import annotations


import numpy as np
from numpy.typing import ArrayLike
from scipy.special import expit
from sklearn.base import BaseEstimator, ClassifierMixin, RegressorMixin
from sklearn.utils.metaestimators import available_if

from ..data import as_sample_weight, check_count, check_nonnegative
from ..erm import ERM
from ..errors import ParameterError
from ._base import (LinearDecisionMixin, SmallCallsMixin, edge_data, fit_weighted_classes,
                    ovr_targets, validated_X, warn_if_not_optimal)

__all__ = ["ERMClassifier", "ERMRegressor"]

_COMMON_DOC = """
    Parameters
    ----------
    loss : str, default={loss!r}
        See :mod:`convexlearn.losses`.
    penalty : str, default="l2"
        "none", "l1", "l2" (1/2 ||w||^2), "lp", "elastic_net"; see :mod:`convexlearn.penalties`.
    lam : float >= 0, default=0.01
        Regularization strength in the lambda-form (losses averaged over the samples).
    fit_intercept : bool, default=True
        Fit an unpenalized intercept b.
    class_weight : dict, "balanced" or None (ERMClassifier only)
        Weight of the losses of class c's samples; "balanced" = n / (n_classes count(c)).
    method : str, default="exact"
        "exact" (cvxpy), "closed-form", "gd", "newton", "prox", "fista", "subgradient"
        (where they apply: the core raises NotApplicableError naming what is missing).
    tol : float, default=1e-8
        Stopping tolerance of the iterative methods.
    max_iter : int or None, default=None
        Iteration budget of the iterative methods (None: the method's default).
    p : float, default=2.0
        Exponent of penalty="lp".
    l1_ratio : float, default=0.5
        Mixing of penalty="elastic_net".

    Attributes
    ----------
    coef_ : ndarray
        w; shape {coef_shape}.
    intercept_ : {intercept_type}
        b.
    n_iter_ : ndarray of int
        Iterations of each problem (at least 1: a direct solve, one KKT system that
        Clarabel reports as 0 interior-point iterations, counts as one).
    solution_ : Solution (list of them for one-vs-rest)
    optimality_ : OptimalityReport (list of them for one-vs-rest)
        Distance of 0 to the subdifferential of F and F - F*, recomputed from the data.
    n_features_in_, feature_names_in_ : as in scikit-learn
"""


_REGRESSION_LOSS_DOC = """    quantile : float in (0, 1), default=0.5
        tau of loss="quantile", the pinball loss max(tau (y - f), (tau - 1)(y - f))
        (scikit-learn's QuantileRegressor name; its alpha is our lam with penalty="l1").
    epsilon : float >= 0, default=0.1
        Half-width of loss="epsilon_insensitive", max(0, |y - f| - epsilon) (LinearSVR's).
    delta : float > 0, default=1.0
        Threshold of loss="huber": r^2/2 for |r| <= delta, delta |r| - delta^2/2 beyond.
        Not HuberRegressor's epsilon, a threshold on r / sigma with a fitted scale sigma
        (docs/conventions.md gives the conversion at a fixed sigma).
"""


class _ERMBase(BaseEstimator):
    _default_loss = "logistic"
    _task = "classification"

    def _check_task(self) -> None:
        """A classifier needs a classification loss, a regressor a regression loss (found
        in review: loss="squared" in the classifier fitted the raw 0/1 labels as real
        targets and thresholded at 0)."""
        from ..losses import make_loss
        loss = make_loss(self.loss)
        if loss.task != self._task:
            hint = ("'squared_classification' is the squared loss on labels mapped to "
                    "-1/+1" if self._task == "classification" else "use ERMClassifier")
            raise ParameterError(f"{type(self).__name__} needs a {self._task} loss; "
                                 f"loss={self.loss!r} is a {loss.task} loss ({hint})")

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.input_tags.sparse = True         # X is used through products only
        return tags

    def _penalty_params(self) -> dict:
        if self.penalty == "lp":
            return {"p": self.p}
        if self.penalty == "elastic_net":
            return {"l1_ratio": self.l1_ratio}
        return {}

    def _loss_params(self) -> dict:
        """The parameters the loss takes (quantile, epsilon, delta), from the estimator's."""
        from ..losses import loss_parameters
        return {k: getattr(self, k) for k in loss_parameters(self.loss)}

    def _solve(self, X, y, s=None):
        check_nonnegative("lam", self.lam)
        if self.max_iter is not None:
            check_count("max_iter", self.max_iter)
        options = {} if self.max_iter is None or self.method in ("exact", "closed-form") \
            else {"max_iter": int(self.max_iter)}
        erm = ERM(X, y, loss=self.loss, penalty=self.penalty, lam=self.lam,
                  intercept=self.fit_intercept, sample_weight=s, **self._penalty_params(),
                  **self._loss_params())
        # the exact route is certified at the project's exact tolerance (distance of 0 to
        # dF <= 1e-9): cvxpy re-solves at tighter settings until it holds (found by
        # check_sample_weight_equivalence: at 1e-6, copies and weights differed by 6e-7).
        # Iterative methods keep the core's 1e-6: they stop at their own tol.
        exact = {"cert_tol": 1e-9} if self.method == "exact" else {}
        return erm.solve(method=self.method, tol=self.tol, **exact, **options)

    def _store(self, solutions) -> None:
        warn_if_not_optimal(self, solutions)
        # A direct solve (one KKT system: Clarabel on an unconstrained QP reports 0
        # interior-point iterations, or the closed form) counts as one iteration.
        self.n_iter_ = np.array([max(s.n_iter or 0, 1) for s in solutions], dtype=int)
        one = len(solutions) == 1
        self.solution_ = solutions[0] if one else solutions
        self.optimality_ = solutions[0].report if one else [s.report for s in solutions]


class ERMClassifier(SmallCallsMixin, LinearDecisionMixin, ClassifierMixin, _ERMBase):
    __doc__ = ("Linear classifier by regularized ERM (binary, or one-vs-rest).\n" +
               _COMMON_DOC.format(loss="logistic", coef_shape="(n_problems, n_features)",
                                  intercept_type="ndarray of shape (n_problems,)"))

    def __init__(self, loss: str = "logistic", penalty: str = "l2", lam: float = 0.01, *,
                 fit_intercept: bool = True, class_weight: dict | str | None = None,
                 method: str = "exact", tol: float = 1e-8, max_iter: int | None = None,
                 p: float = 2.0, l1_ratio: float = 0.5) -> None:
        self.loss = loss
        self.penalty = penalty
        self.lam = lam
        self.fit_intercept = fit_intercept
        self.class_weight = class_weight
        self.method = method
        self.tol = tol
        self.max_iter = max_iter
        self.p = p
        self.l1_ratio = l1_ratio

    def fit(self, X: ArrayLike, y: ArrayLike,
            sample_weight: ArrayLike | None = None) -> "ERMClassifier":
        """Fit one problem (two classes, classes_[1] -> +1) or one per class; returns self.

        ``sample_weight`` s and ``class_weight`` c make the loss term the weighted mean
        (1/sum v) sum_i v_i loss_i with v_i = c[y_i] s_i (integer weights are copies);
        samples of weight 0 are left out.
        """
        self._check_task()
        X, y = edge_data(self, X, y)
        codes, v = fit_weighted_classes(self, y, as_sample_weight(sample_weight, X.shape[0]))
        keep = np.flatnonzero(v > 0)
        weights = None if np.all(v == 1.0) else v[keep]
        X, y = X[keep], y[keep]
        solutions = [self._solve(X, yk, weights) for yk in ovr_targets(y, self.classes_)]
        self.coef_ = np.vstack([s.w for s in solutions])
        self.intercept_ = np.array([s.b for s in solutions], dtype=float)
        self._store(solutions)
        return self


    def _has_proba(self) -> bool:
        if self.loss != "logistic":
            raise AttributeError(f"predict_proba needs loss='logistic' (a probability "
                                 f"model); loss={self.loss!r} has none")
        return True

    @available_if(_has_proba)
    def predict_proba(self, X: ArrayLike) -> np.ndarray:
        """P(class | x), shape (n, n_classes), for the logistic loss.

        Binary: P(classes_[1] | x) = sigma(f(x)) = 1 / (1 + exp(-f(x))), the model the
        logistic loss is the negative log-likelihood of. One-vs-rest: sigma(f_k(x)),
        normalized to sum 1 over the classes (scikit-learn's "ovr" rule).
        """
        D = self.decision_function(X)
        if D.ndim == 1:
            p = expit(D)
            return np.column_stack([1.0 - p, p])
        P = expit(D)
        return P / P.sum(axis=1, keepdims=True)

    @available_if(_has_proba)
    def predict_log_proba(self, X: ArrayLike) -> np.ndarray:
        """log of :meth:`predict_proba` (binary: log sigma(+-f) via logaddexp, stable)."""
        D = self.decision_function(X)
        if D.ndim == 1:
            return np.column_stack([-np.logaddexp(0.0, D), -np.logaddexp(0.0, -D)])
        return np.log(self.predict_proba(X))


class ERMRegressor(RegressorMixin, _ERMBase):
    _task = "regression"

    def _keeps_sparse(self) -> bool:
        return True

    __doc__ = ("Linear regressor by regularized ERM.\n" +
               _COMMON_DOC.format(loss="squared", coef_shape="(n_features,)",
                                  intercept_type="float").replace(
                   "\n\n    Attributes", "\n" + _REGRESSION_LOSS_DOC + "\n    Attributes", 1))

    def __init__(self, loss: str = "squared", penalty: str = "l2", lam: float = 0.01, *,
                 fit_intercept: bool = True, method: str = "exact", tol: float = 1e-8,
                 max_iter: int | None = None, p: float = 2.0, l1_ratio: float = 0.5,
                 quantile: float = 0.5, epsilon: float = 0.1, delta: float = 1.0) -> None:
        self.quantile = quantile
        self.epsilon = epsilon
        self.delta = delta
        self.loss = loss
        self.penalty = penalty
        self.lam = lam
        self.fit_intercept = fit_intercept
        self.method = method
        self.tol = tol
        self.max_iter = max_iter
        self.p = p
        self.l1_ratio = l1_ratio

    def fit(self, X: ArrayLike, y: ArrayLike,
            sample_weight: ArrayLike | None = None) -> "ERMRegressor":
        """Fit w, b to real targets; returns self. ``sample_weight`` s: the loss term is
        (1/sum s) sum_i s_i loss_i (integer weights are copies; weight 0 leaves a sample
        out)."""
        self._check_task()
        X, y = edge_data(self, X, y, y_numeric=True)
        s = as_sample_weight(sample_weight, X.shape[0])
        if s is not None:
            keep = np.flatnonzero(s > 0)
            X, y, s = X[keep], y[keep], s[keep]
        solution = self._solve(X, y, s)
        self.coef_ = np.asarray(solution.w, dtype=float)
        self.intercept_ = float(solution.b)
        self._store([solution])
        return self

    def predict(self, X: ArrayLike) -> np.ndarray:
        """f(x) = <w, x> + b."""
        X = validated_X(self, X)
        return X @ self.coef_ + self.intercept_
