"""A fitted scikit-learn estimator -> the problem it claims to solve, in convexlearn's
conventions (docs/conventions.md, "Converting to and from scikit-learn").

With sample weights s (S = sum s; S = n without) and class weights folded into them:

======================================  ==================================================
estimator                               problem
======================================  ==================================================
SVC(C, kernel, gamma, degree, coef0)    SVM(C, same kernel, gamma=SVC._gamma), costs C s_i;
                                        one per pair of classes; beta = dual_coef_ = y alpha
LinearSVC(C, loss, penalty)             ERM(loss, penalty, lam = 1/(C S)) on [X, s_int]
                                        (intercept_scaling s_int: the intercept is a
                                        penalized weight), no free intercept; one-vs-rest
LogisticRegression(C, penalty)          ERM(logistic, l2 / l1 / elastic_net(l1_ratio) /
                                        none, lam = 1/(C S)); solver "liblinear": on
                                        [X, s_int] as LinearSVC
Lasso(alpha) / ElasticNet(alpha, r)     ERM(squared, l1 / elastic_net(r), lam = 2 alpha)
Ridge(alpha)                            ERM(squared, l2, lam = 2 alpha / S)
SGDClassifier / SGDRegressor(alpha)     ERM(loss, penalty, lam = alpha n / S), times 2 for
                                        the squared losses (scikit-learn's is 1/2 r^2)
======================================  ==================================================

Refused, naming what is missing: NuSVC, SVR, NuSVR, OneClassSVM, LinearSVR,
QuantileRegressor, multinomial logistic regression, LinearSVC(crammer_singer), positive=
True, SGD losses outside the catalogue (modified_huber, huber, epsilon_insensitive,
squared_epsilon_insensitive). An unfitted estimator is a ParameterError.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ..erm import ERM
from ..errors import ParameterError
from ..svm import SVM
from .claims import (Source, check_features, check_labels, linear_claims, not_in_package,
                     ovo_claims)

__all__ = ["from_estimator"]

_MISSING = {
    "NuSVC": ("the nu-SVM (nu-parametrized dual with sum alpha_i = nu n)",),
    "NuSVR": ("the epsilon-insensitive loss and the nu-SVR dual",),
    "SVR": ("the epsilon-insensitive loss (epsilon-SVR)",),
    "OneClassSVM": ("the one-class SVM (Schoelkopf's nu-dual, no labels)",),
    "LinearSVR": ("the epsilon-insensitive loss (or its square)",),
}
_SGD_LOSSES = {"hinge": ("hinge", 1.0), "log_loss": ("logistic", 1.0),
               "squared_hinge": ("squared_hinge", 1.0), "perceptron": ("perceptron", 1.0),
               "squared_error": (None, 2.0)}
_SGD_REFUSED = {"modified_huber": "the modified Huber loss",
                "huber": "the Huber loss", "epsilon_insensitive": "the epsilon-insensitive loss",
                "squared_epsilon_insensitive": "the squared epsilon-insensitive loss"}


def _weights(est, y, sample_weight) -> np.ndarray | None:
    """Sample weights times class weights (scikit-learn's rule), or None."""
    s = None if sample_weight is None else np.asarray(sample_weight, dtype=float)
    cw = getattr(est, "class_weight", None)
    if cw is not None and hasattr(est, "classes_"):
        from sklearn.utils.class_weight import compute_class_weight
        per_class = compute_class_weight(cw, classes=est.classes_, y=y)
        c = per_class[np.searchsorted(est.classes_, y)]
        s = c if s is None else s * c
    return s


#: scikit-learn's penalty words -> (convexlearn's catalogue name, takes l1_ratio).
_SKLEARN_PENALTY = {None: ("none", False), "none": ("none", False), "l1": ("l1", False),
                    "l2": ("l2", False), "elasticnet": ("elastic_net", True)}


def _penalty(word: Any, l1_ratio: Any) -> tuple[str, dict]:
    if word not in _SKLEARN_PENALTY:
        raise ParameterError(f"unknown penalty {word!r}")
    name, mixed = _SKLEARN_PENALTY[word]
    return name, ({"l1_ratio": float(l1_ratio)} if mixed else {})


def _fitted(est, attribute: str) -> None:
    if not hasattr(est, attribute):
        raise ParameterError(f"{type(est).__name__} is not fitted (no {attribute}): call "
                             f"fit first, then verify")


def _svc(est, X, y, s) -> Source:
    _fitted(est, "dual_coef_")
    check_features(X, est.shape_fit_[1], "SVC")
    check_labels(y, est.classes_, "SVC")
    kernel = est.kernel
    X = np.asarray(X, dtype=float) if not hasattr(X, "tocsr") else X.tocsr()
    classes = est.classes_
    binary = len(classes) == 2
    # LIBSVM's own layout, the arrays predict() uses (scikit-learn flips the signs of a
    # binary model's public dual_coef_ and intercept_; the private copies are unflipped)
    coef = getattr(est, "_dual_coef_", -est.dual_coef_ if binary else est.dual_coef_)
    rho = -getattr(est, "_intercept_", -est.intercept_ if binary else est.intercept_)
    sv_rows = np.asarray(est.support_)
    sv_class = np.repeat(np.arange(len(classes)), est.n_support_)

    def make_svm(rows):
        data = X[np.ix_(rows, rows)] if kernel == "precomputed" else X[rows]
        return SVM(data, y[rows], C=est.C, kernel=kernel, gamma=est._gamma,
                   degree=est.degree, coef0=est.coef0,
                   sample_weight=None if s is None else s[rows])

    proba = None
    if hasattr(est, "predict_proba"):      # probability=True ("deprecated" is truthy)
        proba = (est.predict_proba, est.predict)
    notes = [f"SVC(C={est.C:g}, kernel={est.kernel!r}, gamma={est._gamma:g}, "
             f"tol={est.tol:g})"]
    return ovo_claims("SVC", y, classes, sv_rows, sv_class, coef, rho, make_svm, notes, proba)


def _linear_svc(est, X, y, s) -> Source:
    _fitted(est, "coef_")
    check_features(X, est.coef_.shape[1], "LinearSVC")
    check_labels(y, est.classes_, "LinearSVC")
    if est.multi_class == "crammer_singer":
        raise not_in_package("LinearSVC(multi_class='crammer_singer')",
                             "the Crammer-Singer multiclass hinge loss")
    loss = "squared_hinge" if est.loss == "squared_hinge" else "hinge"
    S = y.shape[0] if s is None else float(np.sum(s))
    lam = 1.0 / (est.C * S)
    scaling = est.intercept_scaling if est.fit_intercept else None
    W = est.coef_.T
    if scaling is not None:
        W = np.vstack([W, est.intercept_[None, :] / scaling])

    def make(Z, labels):
        return ERM(Z, labels, loss=loss, penalty=est.penalty, lam=lam, intercept=False,
                   sample_weight=s)

    return linear_claims("LinearSVC", X, y, W, np.zeros(W.shape[1]), est.classes_, make,
                         scaling,
                         notes=[f"LinearSVC(C={est.C:g}, loss={est.loss!r}, penalty="
                                f"{est.penalty!r}): lam = 1/(C S) = {lam:.6g}"
                                + (f", intercept as a penalized bias feature "
                                   f"{scaling:g}" if scaling is not None else "")])


def _logistic(est, X, y, s) -> Source:
    _fitted(est, "coef_")
    check_features(X, est.coef_.shape[1], "LogisticRegression")
    check_labels(y, est.classes_, "LogisticRegression")
    multi = getattr(est, "multi_class", "auto")
    if len(est.classes_) > 2 and not (est.solver == "liblinear" or multi == "ovr"):
        raise not_in_package("a multinomial LogisticRegression",
                             "the multinomial (softmax) logistic loss")
    l1_ratio = getattr(est, "l1_ratio", None)
    penalty_name = getattr(est, "penalty", "l2")
    if penalty_name == "deprecated":       # scikit-learn >= 1.8: l1_ratio decides
        penalty_name = "l2" if not l1_ratio else ("l1" if l1_ratio == 1 else "elasticnet")
    penalty, params = _penalty(penalty_name, l1_ratio)
    S = y.shape[0] if s is None else float(np.sum(s))
    lam = 0.0 if penalty == "none" or np.isinf(est.C) else 1.0 / (est.C * S)
    if lam == 0.0:
        penalty = "none"
    liblinear = est.solver == "liblinear"
    scaling = est.intercept_scaling if (liblinear and est.fit_intercept) else None
    W, b = est.coef_.T, est.intercept_
    if scaling is not None:
        W = np.vstack([W, b[None, :] / scaling])

    def make(Z, labels):
        return ERM(Z, labels, loss="logistic", penalty=penalty, lam=lam,
                   intercept=est.fit_intercept and not liblinear, sample_weight=s, **params)

    return linear_claims("LogisticRegression", X, y, W, b, est.classes_, make, scaling,
                         notes=[f"LogisticRegression(C={est.C:g}, penalty={penalty_name!r}, "
                                f"solver={est.solver!r}): lam = 1/(C S) = {lam:.6g}"])


def _regression(est, X, y, s, penalty: str, params: dict, lam: float, name: str,
                loss: str = "squared") -> Source:
    from .claims import Claim
    from ..solution import Solution
    _fitted(est, "coef_")
    coef = np.asarray(est.coef_, dtype=float)
    if coef.ndim != 1:
        raise not_in_package(f"a multi-target {name}", "one problem per target")
    check_features(X, coef.shape[0], name)
    if getattr(est, "positive", False):
        raise not_in_package(f"{name}(positive=True)", "the constraint w >= 0")
    erm = ERM(X, y, loss=loss, penalty=penalty, lam=lam,
              intercept=bool(est.fit_intercept), sample_weight=s, **params)
    sol = Solution(w=coef.copy(), b=float(np.ravel(est.intercept_)[0])
                   if est.fit_intercept else 0.0)
    return Source(name, [Claim(erm, sol, name)], "regression",
                  notes=[f"{name}: lam = {lam:.6g} ({erm.penalty.describe()})"])


def _sgd(est, X, y, s, classifier: bool) -> Source:
    _fitted(est, "coef_")
    name = type(est).__name__
    if est.loss in _SGD_REFUSED:
        raise not_in_package(f"{name}(loss={est.loss!r})", _SGD_REFUSED[est.loss])
    if est.loss not in _SGD_LOSSES:
        raise not_in_package(f"{name}(loss={est.loss!r})", f"the {est.loss} loss")
    loss, factor = _SGD_LOSSES[est.loss]
    loss = loss or ("squared_classification" if classifier else "squared")
    penalty, params = _penalty(est.penalty, est.l1_ratio)
    n = y.shape[0]
    S = n if s is None else float(np.sum(s))
    lam = factor * est.alpha * n / S if penalty != "none" else 0.0
    if not classifier:
        return _regression(est, X, y, s, penalty, params, lam, name)
    check_features(X, est.coef_.shape[1], name)
    check_labels(y, est.classes_, name)

    def make(Z, labels):
        return ERM(Z, labels, loss=loss, penalty=penalty, lam=lam,
                   intercept=bool(est.fit_intercept), sample_weight=s, **params)

    return linear_claims(name, X, y, est.coef_.T, np.ravel(est.intercept_), est.classes_,
                         make, None, notes=[f"{name}(loss={est.loss!r}, alpha={est.alpha:g})"
                                            f": lam = {lam:.6g}"])


def from_estimator(est: Any, X: Any, y: Any, sample_weight: Any = None) -> Source:
    """The claims of a fitted scikit-learn estimator on its training data (X, y)."""
    name = type(est).__name__
    if name in _MISSING:
        raise not_in_package(name, _MISSING[name][0])
    y = np.asarray(y)
    if hasattr(est, "classes_") or name in ("SVC", "LinearSVC", "LogisticRegression"):
        s = _weights(est, y, sample_weight)
    else:
        s = None if sample_weight is None else np.asarray(sample_weight, float)
    if name == "SVC":
        return _svc(est, X, y, s)
    if name == "LinearSVC":
        return _linear_svc(est, X, y, s)
    if name == "LogisticRegression":
        return _logistic(est, X, y, s)
    if name == "Lasso":
        return _regression(est, X, y, s, "l1", {}, 2.0 * est.alpha, name)
    if name == "ElasticNet":
        return _regression(est, X, y, s, "elastic_net", {"l1_ratio": est.l1_ratio},
                           2.0 * est.alpha, name)
    if name == "Ridge":
        S = y.shape[0] if s is None else float(np.sum(s))
        alpha = float(np.ravel(est.alpha)[0])
        return _regression(est, X, y, s, "l2", {}, 2.0 * alpha / S, name)
    if name in ("SGDClassifier", "SGDRegressor"):
        return _sgd(est, X, y, s, classifier=name == "SGDClassifier")
    if name == "QuantileRegressor":
        # (1/sum s) sum s_i pinball_tau + alpha ||w||_1 (scikit-learn scales alpha by sum s)
        return _regression(est, X, y, s, "l1" if est.alpha > 0 else "none",
                           {"quantile": est.quantile}, float(est.alpha), name,
                           loss="quantile")
    raise not_in_package(name, "a mapping to one of convexlearn's problems (SVC, LinearSVC, "
                         "LogisticRegression, Lasso, ElasticNet, Ridge, SGDClassifier, "
                         "SGDRegressor and QuantileRegressor are mapped)")
