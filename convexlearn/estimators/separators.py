"""Separating hyperplanes for scikit-learn: the perceptron and the halfspace classifier.

Both predict with f(x) = <w, x> + b (classes_[1] where f >= 0; one-vs-rest for more
than two classes). The perceptron runs Rosenblatt's updates (:mod:`convexlearn.solvers.
perceptron`) and warns when an epoch budget ends without a separating hyperplane. The
halfspace classifier *decides* separability (:class:`convexlearn.Halfspace`): it returns a
consistent hyperplane, or raises :class:`NotSeparableError` carrying the verified
certificate that the convex hulls of the classes meet.
"""

from __future__ import annotations

from typing import Any


import numpy as np
from numpy.typing import ArrayLike
from sklearn.base import BaseEstimator, ClassifierMixin
from sklearn.utils.validation import validate_data

from ..data import check_count
from ..errors import InfeasibleError
from ..halfspace import Halfspace
from ..perceptron import perceptron
from ..svm import SVM
from ._base import (LinearDecisionMixin, SmallCallsMixin, fit_classes, ovr_targets, seed_from,
                    warn_if_not_optimal)

__all__ = ["PerceptronClassifier", "HalfspaceClassifier", "NotSeparableError"]


class _LinearPredictor(SmallCallsMixin, LinearDecisionMixin, ClassifierMixin, BaseEstimator):
    def _store(self, solutions) -> None:
        self.coef_ = np.vstack([s.w for s in solutions])
        self.intercept_ = np.array([s.b for s in solutions], dtype=float)
        self.n_iter_ = np.array([s.n_iter or 0 for s in solutions], dtype=int)
        self.solution_ = solutions[0] if len(solutions) == 1 else solutions


class PerceptronClassifier(_LinearPredictor):
    """Rosenblatt's perceptron: w' <- w' + y_i x'_i on each mistake y_i <w', x'_i> <= 0.

    x' = (1, x) with ``fit_intercept`` (w'_0 = b). Stops after an epoch without mistakes
    (the data are then separated) or after ``max_iter`` epochs, with a ConvergenceWarning:
    on data that are not linearly separable the perceptron never converges.

    Parameters
    ----------
    max_iter : int, default=1000
        Epochs (passes over the data).
    fit_intercept : bool, default=True
    shuffle : bool, default=False
        Visit the samples in a fresh random order each epoch (default: cyclic order).
    random_state : int, RandomState or None
        Seed of the shuffling.

    Attributes
    ----------
    coef_ : ndarray of shape (n_problems, n_features)
    intercept_ : ndarray of shape (n_problems,)
    n_iter_ : ndarray of int, epochs run per problem
    solution_ : Solution (list for one-vs-rest); ``extra["updates"]`` is the number of
        mistakes T, with the bound T <= R^2 B^2 checked where computed.
    classes_, n_features_in_, feature_names_in_ : as in scikit-learn
    """

    def __init__(self, *, max_iter: int = 1000, fit_intercept: bool = True, shuffle: bool = False,
                 random_state: Any = None):
        self.max_iter = max_iter
        self.fit_intercept = fit_intercept
        self.shuffle = shuffle
        self.random_state = random_state

    def fit(self, X: ArrayLike, y: ArrayLike) -> Any:
        """Run the perceptron (one-vs-rest for more than two classes); returns self."""
        check_count("max_iter", self.max_iter)
        X, y = validate_data(self, X, y, dtype=np.float64)
        self.classes_ = fit_classes(y, None)
        seed = seed_from(self.random_state)
        solutions = [perceptron(X, yk, max_epochs=self.max_iter, intercept=self.fit_intercept,
                                seed=seed, shuffle=self.shuffle, bound=False)
                     for yk in ovr_targets(y, self.classes_)]
        for s in solutions:   # the perceptron has no optimality check: converged = separated
            s.status = "optimal" if s.status == "converged" else s.status
        warn_if_not_optimal(self, solutions)
        self._store(solutions)
        return self


class NotSeparableError(InfeasibleError):
    """The classes are not linearly separable; ``result`` holds the verified proof.

    Attributes
    ----------
    result : SeparabilityResult
        ``certificate`` (lambda: sum over each class is 1 and sum_i lambda_i y_i x_i = 0),
        ``meeting_point`` (a point of both convex hulls), ``min_total_slack``, ``verified``.
    certificate : ndarray
        ``result.certificate``, indexed like the training samples.
    problem : int or None
        The one-vs-rest problem (index into classes_) that is not separable.
    """

    def __init__(self, message: str, result: Any, problem: int | None = None):
        super().__init__(message)
        self.result = result
        self.certificate = result.certificate
        self.problem = problem


class HalfspaceClassifier(_LinearPredictor):
    """A hyperplane consistent with the training data: y_i (<w, x_i> + b) >= 1 for all i.

    Decided by the consistency LP with a verified certificate either way
    (:class:`convexlearn.Halfspace`). Where separable, the returned hyperplane is the
    maximal-margin one (the hard-margin SVM, unique) when ``max_margin``, else the LP's
    vertex. Where not, ``fit`` raises :class:`NotSeparableError` with the certificate.

    Parameters
    ----------
    fit_intercept : bool, default=True
        False: hyperplanes through the origin (the homogeneous problem).
    max_margin : bool, default=True

    Attributes
    ----------
    coef_ : ndarray of shape (n_problems, n_features)
    intercept_ : ndarray of shape (n_problems,)
    margin_ : ndarray of shape (n_problems,)
        Geometric margin min_i y_i f(x_i) / ||w|| of the returned hyperplane.
    separability_ : SeparabilityResult (list for one-vs-rest)
    kkt_ : KKTReport (list) of the hard-margin SVM, when ``max_margin``
    solution_ : Solution (list), when ``max_margin``
    n_iter_ : ndarray of int (interior-point iterations of the SVM; 1 for the LP)
    classes_, n_features_in_, feature_names_in_ : as in scikit-learn
    """

    def __init__(self, *, fit_intercept: bool = True, max_margin: bool = True):
        self.fit_intercept = fit_intercept
        self.max_margin = max_margin

    def fit(self, X: ArrayLike, y: ArrayLike) -> Any:
        """Find a consistent hyperplane per problem, or raise NotSeparableError; returns self."""
        X, y = validate_data(self, X, y, dtype=np.float64)
        self.classes_ = fit_classes(y, None)
        results, solutions = [], []
        for k, yk in enumerate(ovr_targets(y, self.classes_)):
            res = Halfspace(X, yk, intercept=self.fit_intercept).check(margin=False)
            if not res.separable:
                which = (f"class {self.classes_[k]!r} vs the rest" if self.classes_.size > 2
                         else f"classes {self.classes_[0]!r} and {self.classes_[1]!r}")
                raise NotSeparableError(
                    f"{which} are not linearly separable: their convex hulls meet (certificate "
                    f"lambda on {np.count_nonzero(res.certificate)} samples, verified="
                    f"{res.verified}; minimum total slack {res.min_total_slack:.4g}); see "
                    f"error.result", res, k if self.classes_.size > 2 else None)
            results.append(res)
            if self.max_margin:
                solutions.append(SVM(X, yk, C=None, intercept=self.fit_intercept).solve())
        if self.max_margin:
            warn_if_not_optimal(self, solutions)
            self._store(solutions)
            self.kkt_ = [s.report for s in solutions]
            if len(solutions) == 1:
                self.kkt_ = self.kkt_[0]
        else:
            self.coef_ = np.vstack([r.w for r in results])
            self.intercept_ = np.array([r.b for r in results], dtype=float)
            self.n_iter_ = np.ones(len(results), dtype=int)
        signed = [np.where(y == c, 1.0, -1.0) for c in self.classes_]
        signed = signed[1:] if self.classes_.size == 2 else signed
        self.margin_ = np.array([np.min(s * (X @ w + b)) / np.linalg.norm(w)
                                 for s, w, b in zip(signed, self.coef_, self.intercept_)])
        self.separability_ = results[0] if len(results) == 1 else results
        return self
