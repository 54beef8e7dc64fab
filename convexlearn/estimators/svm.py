"""SVM classifiers for scikit-learn: the C-form SVM of :class:`convexlearn.SVM` behind fit/predict.

Problem solved (DESIGN.md section 1), for each binary (or one-vs-rest) problem::

    min_{w, b}  1/2 ||w||^2 + sum_i C_i max(0, 1 - y_i f(x_i)),   C_i = C * sample_weight_i
    f(x) = sum_i alpha_i y_i k(x_i, x) + b   (= <w, x> + b for the linear kernel)

Fitted attributes follow scikit-learn's SVC, without its sign surprises:

* ``dual_coef_[k, j] = y_i alpha_i`` for ``i = support_[j]`` in problem k, with y_i = +1
  for classes_[1] (binary) or for classes_[k] (one-vs-rest), so that
  ``decision_function(x)[k] = dual_coef_[k] @ K(support_vectors_, x) + intercept_[k]``;
* ``intercept_`` is b (not -b); ``coef_ = dual_coef_ @ support_vectors_`` for the linear
  kernel (the primal w itself for :class:`LinearSVMClassifier`);
* ``support_`` is the union over the problems of the samples with a nonzero coefficient,
  as indices into the training set: the terms of the decision function. For exact
  (polished) solutions this is the KKT support alpha_i > 0 of ``kkt_.support``; an iterative
  method may leave small nonzero coefficients that the KKT view (alpha_i > tol C) ignores.
"""

from __future__ import annotations

import importlib
import inspect
import math

import numpy as np
from sklearn.base import BaseEstimator, ClassifierMixin
from sklearn.utils.validation import validate_data

from ..data import as_sample_weight, check_C, check_choice, check_count, check_positive
from ..errors import NotApplicableError
from ..kernels import check_gram
from ..svm import ITERATIVE_METHODS, SVM
from ._base import (fit_classes, ovr_targets, predict_from_decision,
                    seed_from, validated_X, warn_if_not_optimal)

__all__ = ["KernelSVMClassifier", "LinearSVMClassifier"]


def _accepted_options(method: str) -> set[str]:
    """Keyword options the core's iterative SVM method takes (max_iter, seed, ...)."""
    module_name, func_name = ITERATIVE_METHODS[method].split(":")
    func = getattr(importlib.import_module(f"convexlearn.solvers.{module_name}"), func_name)
    return set(inspect.signature(func).parameters)


def _double_centered(K: np.ndarray) -> np.ndarray:
    """P K P with P = I - 1 1^T / n.

    With an intercept the dual lives on y^T alpha = 0, where (y * alpha)^T K (y * alpha)
    is unchanged by the centering: the SVM needs K to be PSD on 1^perp only (conditionally
    PSD), which is exactly P K P being PSD. So a precomputed kernel shifted by a constant
    (K - c 1 1^T, as in scikit-learn's checks) is accepted, and its problem solved exactly.
    """
    col = K.mean(axis=0)
    return K - col[None, :] - K.mean(axis=1)[:, None] + col.mean()


def _class_pairs(n_classes: int) -> list[tuple[int, int]]:
    """The one-vs-one problems (k, l), k < l, in LIBSVM's order."""
    return [(k, l) for k in range(n_classes) for l in range(k + 1, n_classes)]


def _ovo_decision(D: np.ndarray, n_classes: int) -> np.ndarray:
    """Votes of the one-vs-one problems as an (n, n_classes) decision (SVC's "ovr" shape).

    Problem (k, l) votes for k where f_kl(x) >= 0, else for l; to the votes is added the
    summed confidence s_k = sum_l f_kl - sum_k' f_k'k, squashed to s / (3 (|s| + 1)) in
    (-1/3, 1/3), so the argmax is the majority vote with ties broken by confidence.
    """
    votes = np.zeros((D.shape[0], n_classes))
    conf = np.zeros((D.shape[0], n_classes))
    for p, (k, l) in enumerate(_class_pairs(n_classes)):
        win = D[:, p] >= 0
        votes[win, k] += 1
        votes[~win, l] += 1
        conf[:, k] += D[:, p]
        conf[:, l] -= D[:, p]
    return votes + conf / (3 * (np.abs(conf) + 1))


class _SVMClassifierBase(ClassifierMixin, BaseEstimator):
    """Fit, attributes and prediction shared by the kernel and the linear SVM classifiers."""

    _methods: tuple[str, ...] = ()
    _linear_only = False

    # ------------------------------------------------------------ parameters
    def _kernel_spec(self) -> dict:
        return {"kernel": "linear"}

    def _check_params(self) -> float:
        # Iterative methods are offered as the core registers them (convexlearn.svm).
        available = [m for m in self._methods if m == "exact" or m in ITERATIVE_METHODS]
        check_choice("method", self.method, available)
        check_positive("tol", self.tol)
        if self.max_iter is not None:
            check_count("max_iter", self.max_iter)
        return check_C(self.C)

    def _options(self) -> dict:
        """Keyword options for an iterative method (none for "exact")."""
        if self.method == "exact":
            return {}
        accepted = _accepted_options(self.method)
        options = {}
        if self.max_iter is not None and "max_iter" in accepted:
            options["max_iter"] = int(self.max_iter)
        if "seed" in accepted:
            options["seed"] = seed_from(self.random_state)
        return options

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.input_tags.pairwise = self._kernel_spec()["kernel"] == "precomputed"
        return tags

    # ------------------------------------------------------------------ fit
    def fit(self, X, y, sample_weight=None):
        """Fit one SVM (binary) or one per class (one-vs-rest).

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features), or (n_samples, n_samples) Gram
            matrix for ``kernel="precomputed"``
        y : array-like of shape (n_samples,)
        sample_weight : array-like of shape (n_samples,), optional
            Per-sample cost C_i = C * sample_weight_i. A weight of 0 removes the sample, an
            integer weight k is the same fit as k copies of the sample. Non-uniform weights
            need ``method="exact"`` (the iterative methods take one C).

        Returns
        -------
        self
        """
        C = self._check_params()
        X, y = validate_data(self, X, y, dtype=np.float64)
        spec = self._kernel_spec()
        precomputed = spec["kernel"] == "precomputed"
        s = as_sample_weight(sample_weight, X.shape[0])
        self.classes_ = fit_classes(y, s)
        if precomputed:
            X = check_gram(X)
        keep = np.arange(X.shape[0]) if s is None else np.flatnonzero(s > 0)
        Xk = X[np.ix_(keep, keep)] if precomputed else X[keep]
        sk = None if s is None else s[keep]
        if precomputed and self.fit_intercept:
            Xk = _double_centered(Xk)
        if self._one_vs_one():
            fits = self._fit_pairs(Xk, y[keep], sk, C, spec, precomputed)
        else:
            fits = [self._fit_binary(Xk, yk, sk, C, spec)
                    for yk in ovr_targets(y[keep], self.classes_)]
        self._set_attributes(fits, X, keep, precomputed)
        return self

    def _one_vs_one(self) -> bool:
        """True when more than two classes are fitted one-vs-one (``multiclass="ovo"``)."""
        return (getattr(self, "multiclass", "ovr") == "ovo"
                and getattr(self, "classes_", np.empty(0)).size > 2)

    def _fit_pairs(self, X, y, s, C, spec, precomputed):
        """One-vs-one: a binary problem per pair of classes (k, l), k < l, on their samples
        only, y = +1 for classes_[k]; each expansion is returned over all samples (zero
        outside the pair), so that the attributes are built as for one-vs-rest."""
        fits = []
        for k, l in _class_pairs(self.classes_.size):
            rows = np.flatnonzero((y == self.classes_[k]) | (y == self.classes_[l]))
            Xp = X[np.ix_(rows, rows)] if precomputed else X[rows]
            yp = np.where(y[rows] == self.classes_[k], 1.0, -1.0)
            svm, sol = self._fit_binary(Xp, yp, None if s is None else s[rows], C, spec)
            beta = np.zeros(y.size)
            beta[rows] = sol.dual_coef if sol.dual_coef is not None else svm.y * sol.report.alpha
            fits.append((svm, sol, beta, rows))
        return fits

    def _fit_binary(self, X, y, s, C, spec):
        """(problem, solution) of one binary problem with per-sample costs C * s."""
        uniform = s is None or bool(np.all(s == s[0]))
        C_eff = C if s is None or not uniform else C * float(s[0])
        svm = SVM(X, y, C=C_eff, intercept=self.fit_intercept, **spec)
        if uniform or math.isinf(C):
            return svm, svm.solve(method=self.method, tol=self.tol, **self._options())
        if self.method != "exact":
            raise NotApplicableError(
                f"method={self.method!r} solves the SVM with one C for all samples; "
                f"non-uniform sample_weight needs per-sample costs C_i = C * sample_weight_i, "
                f"which method='exact' solves")
        weighted = SVM(X, y, C=C, intercept=self.fit_intercept, sample_weight=s, **spec)
        return weighted, weighted.solve(method="exact", tol=max(self.tol, 1e-6))

    def _set_attributes(self, fits, X, keep, precomputed) -> None:
        solutions = [fit[1] for fit in fits]
        warn_if_not_optimal(self, solutions)
        # Expansion coefficients: the solution's own (kernel expansions), else y * alpha
        # (for primal-only linear solutions, the multipliers the KKT report rebuilt).
        betas = [fit[2] if len(fit) > 2 else
                 fit[1].dual_coef if fit[1].dual_coef is not None else fit[0].y * fit[1].report.alpha
                 for fit in fits]
        # The samples with a nonzero coefficient in some expansion: exactly the terms of the
        # decision function (polished exact solutions have alpha_i = 0 off the KKT support).
        local = np.flatnonzero(np.any(np.vstack(betas) != 0, axis=0))
        self.support_ = keep[local]
        self.dual_coef_ = np.vstack([beta[local] for beta in betas])
        self.intercept_ = np.array([sol.b for sol in solutions], dtype=float)
        if precomputed and self.fit_intercept:
            # Solved on P K P; on the original K, f = K beta + b - mean(K beta) (1^T beta = 0).
            # (one-vs-one: the mean over the pair's samples, on which its K was centred)
            K = X[np.ix_(keep, keep)]
            rows = [fit[3] if len(fit) > 3 else slice(None) for fit in fits]
            self.intercept_ -= np.array([np.mean((K @ beta)[r]) for beta, r in zip(betas, rows)])
        self.support_vectors_ = np.empty((0, 0)) if precomputed else X[self.support_]
        if self._linear_only:
            self.coef_ = np.vstack([sol.w for sol in solutions])
        self.n_iter_ = np.array([sol.n_iter or 0 for sol in solutions], dtype=int)
        binary = len(solutions) == 1
        self.solution_ = solutions[0] if binary else solutions
        self.kkt_ = solutions[0].report if binary else [sol.report for sol in solutions]
        self._kernel = fits[0][0].kernel

    # ----------------------------------------------------------- prediction
    def decision_function(self, X):
        """f(x): shape (n,) for two classes (f >= 0 means classes_[1]), else (n, n_classes).

        ``dual_coef_ @ K(support_vectors_, X).T + intercept_`` (``X @ coef_.T +
        intercept_`` for :class:`LinearSVMClassifier`); for a precomputed kernel X is the
        (n_test, n_train) kernel between test and training samples.
        """
        X = validated_X(self, X)
        if self._linear_only:
            D = X @ self.coef_.T
        else:
            K = (X[:, self.support_] if self._kernel.name == "precomputed"
                 else self._kernel(X, self.support_vectors_))
            # einsum sums each row in a fixed order, whatever the batch: exact one-vs-rest
            # ties (a sample on the margin of two classes) are then broken the same way in
            # every batch, which a BLAS product (blocked by batch size) does not guarantee.
            D = np.einsum("ij,kj->ik", K, self.dual_coef_)
        D = D + self.intercept_
        if self._one_vs_one():
            return _ovo_decision(D, self.classes_.size)
        return D.ravel() if self.classes_.size == 2 else D

    def predict(self, X):
        """classes_[1] where f(x) >= 0 (binary), else the class of the largest f_k(x)."""
        return predict_from_decision(self.decision_function(X), self.classes_)


class KernelSVMClassifier(_SVMClassifierBase):
    """Kernel SVM classifier (C-form), solved exactly (cvxpy) or by SMO / subgradient.

    Parameters
    ----------
    C : float or None, default=1.0
        Slack cost; None or inf gives the hard margin (an error on non-separable data).
    kernel : {"rbf", "linear", "poly", "sigmoid", "precomputed"} or callable, default="rbf"
        See :mod:`convexlearn.kernels`; sigmoid Gram matrices are checked for PSD.
    gamma : float or {"scale", "auto"}, default="scale"
        "scale" is 1 / (d Var(X)) with Var over the weighted training samples.
    degree, coef0 : float
        Polynomial / sigmoid kernel parameters (scikit-learn's defaults 3 and 0).
    repair_psd : bool, default=False
        Clip the negative eigenvalues of an indefinite Gram matrix (sigmoid, precomputed,
        callable) instead of refusing the non-convex problem; reported in ``solution_``.
        A precomputed kernel with intercept is checked after double centering (only
        PSD on 1^perp is needed); ``intercept_`` refers to the kernel as given.
    fit_intercept : bool, default=True
        False solves the homogeneous problem (b = 0, no constraint y^T alpha = 0).
    method : {"exact", "smo", "subgradient"}, default="exact"
        "exact": the cvxpy dual (Clarabel), polished on its active set; iterative methods
        where :mod:`convexlearn.svm` provides them.
    tol : float, default=1e-6
        Stopping tolerance of iterative methods and tolerance of the KKT check.
    max_iter : int or None, default=None
        Iteration budget of the iterative methods (None: the method's default).
    random_state : int, RandomState or None
        Seed of randomized methods.
    multiclass : {"ovo", "ovr"}, default="ovo"
        More than two classes: "ovo" (SVC's way) fits one problem per pair of classes
        (k, l), k < l, on their samples, y = +1 for classes_[k], and predicts by majority
        vote; ``decision_function`` is then the votes plus squashed confidences, shape
        (n, n_classes), as SVC's ``decision_function_shape="ovr"``. "ovr" fits one
        problem per class against the rest and predicts the largest f_k.

    Attributes
    ----------
    classes_ : ndarray of shape (n_classes,)
    support_ : ndarray of int
        Training indices of the support vectors (union over the problems).
    support_vectors_ : ndarray of shape (n_SV, n_features) (empty for "precomputed")
    dual_coef_ : ndarray of shape (n_problems, n_SV)
        y_i alpha_i, y_i = +1 for classes_[1] (binary), for class k (row k, one-vs-rest),
        or for classes_[k] in problem (k, l) (one-vs-one; 0 outside the pair's samples).
    intercept_ : ndarray of shape (n_problems,)
        b of each problem.
    coef_ : ndarray of shape (n_problems, n_features)
        Linear kernel only: dual_coef_ @ support_vectors_.
    n_iter_ : ndarray of int, shape (n_problems,)
    kkt_ : KKTReport, or list of them (one per class) for more than two classes
    solution_ : Solution, or list of them
    n_features_in_, feature_names_in_ : as in scikit-learn

    n_problems is 1 for two classes, n_classes (n_classes - 1) / 2 for one-vs-one (in the
    order (0, 1), (0, 2), ..., (1, 2), ...), n_classes for one-vs-rest.
    """

    _methods = ("exact", "smo", "subgradient")

    def _check_params(self) -> float:
        check_choice("multiclass", self.multiclass, ["ovo", "ovr"])
        return super()._check_params()

    def __init__(self, C=1.0, *, kernel="rbf", gamma="scale", degree=3, coef0=0.0,
                 repair_psd=False, fit_intercept=True, method="exact", tol=1e-6, max_iter=None,
                 random_state=None, multiclass="ovo"):
        self.multiclass = multiclass
        self.C = C
        self.kernel = kernel
        self.gamma = gamma
        self.degree = degree
        self.coef0 = coef0
        self.repair_psd = repair_psd
        self.fit_intercept = fit_intercept
        self.method = method
        self.tol = tol
        self.max_iter = max_iter
        self.random_state = random_state

    def _kernel_spec(self) -> dict:
        return {"kernel": self.kernel, "gamma": self.gamma, "degree": self.degree,
                "coef0": self.coef0, "repair_psd": self.repair_psd}

    @property
    def coef_(self):
        """w = dual_coef_ @ support_vectors_ (linear kernel only)."""
        if getattr(self, "_kernel", None) is None or not self._kernel.is_linear:
            raise AttributeError("coef_ is only available for a fitted linear kernel; "
                                 "use dual_coef_ and support_vectors_")
        return self.dual_coef_ @ self.support_vectors_


class LinearSVMClassifier(_SVMClassifierBase):
    """Linear SVM classifier in C-form (unpenalized intercept, unlike LIBLINEAR's LinearSVC).

    ``min 1/2 ||w||^2 + sum_i C_i max(0, 1 - y_i (<w, x_i> + b))``.

    Parameters
    ----------
    C : float or None, default=1.0
        None or inf: hard margin.
    fit_intercept : bool, default=True
    method : {"exact", "dcd", "pegasos", "subgradient"}, default="exact"
        "exact": the cvxpy primal or dual, whichever is faster for the shape.
    tol, max_iter, random_state :
        As in :class:`KernelSVMClassifier`.

    Attributes
    ----------
    coef_ : ndarray of shape (n_problems, n_features)
        The primal w of each problem.
    intercept_, classes_, support_, support_vectors_, dual_coef_, n_iter_, kkt_, solution_ :
        As in :class:`KernelSVMClassifier`; ``dual_coef_ @ support_vectors_`` equals
        ``coef_`` up to the stationarity residual of ``kkt_`` (for primal-only methods the
        multipliers are those the KKT report rebuilt from w).
    """

    _methods = ("exact", "dcd", "pegasos", "subgradient")
    _linear_only = True

    def __init__(self, C=1.0, *, fit_intercept=True, method="exact", tol=1e-6,
                 max_iter=None, random_state=None):
        self.C = C
        self.fit_intercept = fit_intercept
        self.method = method
        self.tol = tol
        self.max_iter = max_iter
        self.random_state = random_state
