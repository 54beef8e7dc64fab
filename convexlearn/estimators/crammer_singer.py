"""The Crammer-Singer multiclass SVM for scikit-learn: :class:`convexlearn.CrammerSingerSVM`
behind fit/predict.

The problem (no intercept, as ``LinearSVC(multi_class="crammer_singer",
fit_intercept=False)``)::

    min_W  1/2 sum_m ||w_m||^2 + sum_i C_i max_m (1[m != y_i] + <w_m - w_{y_i}, x_i>),
    C_i = C * class_weight[y_i] * sample_weight_i
"""

from __future__ import annotations

from typing import Any

import numpy as np
from numpy.typing import ArrayLike
from sklearn.base import BaseEstimator, ClassifierMixin

from ..crammer_singer import CrammerSingerSVM
from ..data import as_sample_weight, check_C, check_choice, check_positive
from ..errors import ParameterError
from ._base import (SmallCallsMixin, edge_data, fit_weighted_classes, seed_from, validated_X,
                    warn_if_not_optimal)
from ._multiclass import argmax_ties_low, rounding_bound

__all__ = ["CrammerSingerClassifier"]


class CrammerSingerClassifier(SmallCallsMixin, ClassifierMixin, BaseEstimator):
    """Crammer-Singer multiclass linear SVM, solved exactly and certified.

    Parameters
    ----------
    C : float, default=1.0
        > 0 and finite.
    class_weight : dict, "balanced" or None, default=None
        C of the samples of class c is C * class_weight[c] (LinearSVC's rule).
    method : {"exact", "exact-dual", "exact-primal"}, default="exact"
        :meth:`convexlearn.CrammerSingerSVM.solve`'s methods.
    tol : float, default=1e-6
        Tolerance of the certificate's KKT residuals (the relative duality gap is held to
        1e-9 whatever ``tol``).
    random_state : int, RandomState or None
        Order of the samples in the sequential dual method.

    Attributes
    ----------
    classes_ : ndarray of shape (n_classes,)
    coef_ : ndarray of shape (n_classes, n_features)
        One w_m per class (also for two classes, as LinearSVC's crammer_singer).
    intercept_ : ndarray of shape (n_classes,)
        Zeros (the problem has no intercept).
    class_weight_ : ndarray of shape (n_classes,)
    solution_ : Solution
    certificate_ : CrammerSingerReport
    n_iter_ : int
    n_features_in_, feature_names_in_ : as in scikit-learn
    """

    _methods = ("exact", "exact-dual", "exact-primal")

    def __init__(self, C: float = 1.0, *, class_weight: dict | str | None = None,
                 method: str = "exact", tol: float = 1e-6, random_state: Any = None) -> None:
        self.C = C
        self.class_weight = class_weight
        self.method = method
        self.tol = tol
        self.random_state = random_state

    def _keeps_sparse(self) -> bool:
        return False        # dense rows (densified below data.DENSIFY_LIMIT_BYTES)

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.input_tags.sparse = True       # densified below the limit
        return tags

    def fit(self, X: ArrayLike, y: ArrayLike,
            sample_weight: ArrayLike | None = None) -> "CrammerSingerClassifier":
        """Fit W on (X, y); ``sample_weight`` scales each sample's cost (0 removes it)."""
        C = check_C(self.C)
        if not np.isfinite(C):
            raise ParameterError("the Crammer-Singer SVM needs a finite C > 0; got C=None/inf")
        check_choice("method", self.method, self._methods)
        tol = check_positive("tol", self.tol)
        X, y = edge_data(self, X, y)
        s = as_sample_weight(sample_weight, X.shape[0])
        codes, cost = fit_weighted_classes(self, y, s)
        keep = np.flatnonzero(cost > 0)
        problem = CrammerSingerSVM(X[keep], codes[keep], C=C, sample_weight=cost[keep])
        sol = problem.solve(self.method, cert_tol=max(tol, 1e-12),
                            seed=seed_from(self.random_state) or 0)
        warn_if_not_optimal(self, [sol])
        # the problem's classes are the codes present; classes_ may hold more
        W = np.zeros((self.classes_.size, X.shape[1]))
        W[problem.classes] = sol.w
        self.coef_ = W
        self.intercept_ = np.zeros(self.classes_.size)
        self.solution_, self.certificate_ = sol, sol.report
        self.n_iter_ = int(sol.n_iter or 0)
        return self

    def _values(self, X) -> tuple[np.ndarray, np.ndarray]:
        X = validated_X(self, X)
        F = np.asarray(X @ self.coef_.T)
        return F, rounding_bound(np.abs(X) @ np.abs(self.coef_).T, np.zeros(self.classes_.size),
                                 self.coef_.shape[1])

    def decision_function(self, X: ArrayLike) -> np.ndarray:
        """<w_m, x> per class, shape (n, n_classes); for two classes the difference
        <w_1 - w_0, x> (shape (n,): > 0 means classes_[1], scikit-learn's binary rule)."""
        F, _ = self._values(X)
        return F[:, 1] - F[:, 0] if self.classes_.size == 2 else F

    def predict(self, X: ArrayLike) -> np.ndarray:
        """The class of the largest <w_m, x>; values within their rounding bound are equal
        (ties to the first class)."""
        F, E = self._values(X)
        return self.classes_[argmax_ties_low(F, E)]
