"""nu-SVM estimators for scikit-learn: :class:`convexlearn.NuSVM` and
:class:`convexlearn.NuSVR` behind fit/predict, with NuSVC's and NuSVR's parameter names
and fitted attributes.

Each binary problem of :class:`NuSVMClassifier` (two classes; one per pair of classes,
one-vs-one as NuSVC) is LIBSVM's nu-SVC, its answer in scikit-learn's terms
(docs/conventions.md: ``dual_coef_`` = y a / r, ``intercept_`` = -rho / r), laid out as
:class:`~convexlearn.estimators.KernelSVMClassifier`'s (SVC's layout). Per-sample costs
(non-uniform ``sample_weight`` or ``class_weight``) are not offered: NotApplicableError
(a weight of 0 removes the sample, equal weights change nothing).
"""

from __future__ import annotations

from typing import Any

import numpy as np
from numpy.typing import ArrayLike
from sklearn.base import BaseEstimator, RegressorMixin

from ..data import as_sample_weight, check_choice, check_count, check_positive
from ..errors import NotApplicableError
from ..nu_svm import NuSVM, NuSVR, check_nu_fraction
from ._base import edge_data, validated_X, warn_if_not_optimal
from ._svm_base import SVMClassifierBase

__all__ = ["NuSVMClassifier", "NuSVMRegressor"]

_METHODS = ("exact", "smo")


def _uniform_costs(what: str, costs: np.ndarray | None) -> None:
    """Raise NotApplicableError for per-sample costs that are not all equal."""
    if costs is not None and costs.size and not np.all(costs == costs[0]):
        raise NotApplicableError(
            f"{what}: non-uniform sample_weight or class_weight (per-sample bounds of the "
            f"nu-problem's QP) is not offered; a weight of 0 removes a sample")


def _solve(problem: Any, method: str, tol: float, max_iter: int | None) -> Any:
    """``problem.solve``: the certified exact route, or SMO alone at ``tol``."""
    if method == "exact":
        return problem.solve()
    options = {} if max_iter is None else {"max_iter": int(max_iter)}
    return problem.solve("smo", tol=tol, **options)


class NuSVMClassifier(SVMClassifierBase):
    """nu-SVC classifier (scikit-learn's NuSVC), solved exactly (certified at 1e-9) or by
    SMO alone.

    Parameters
    ----------
    nu : float, default=0.5
        In (0, 1]; for each binary problem at most 2 min(n+, n-) / n of its samples
        (ParameterError naming the bound otherwise, NuSVC's "specified nu is infeasible").
    kernel, gamma, degree, coef0, repair_psd :
        As in :class:`~convexlearn.estimators.KernelSVMClassifier`.
    class_weight : dict, "balanced" or None, default=None
        Only weights equal for all classes (NotApplicableError otherwise).
    decision_function_shape : {"ovr", "ovo"}, default="ovr"
    probability : bool, default=False
        Platt scaling on 5-fold cross-validated decision values.
    method : {"exact", "smo"}, default="exact"
        "exact": Solver_NU, the active-set polish and the certificate (the cvxpy dual as
        the fallback); "smo": Solver_NU alone at ``tol``.
    tol : float, default=1e-3
        SMO's stopping tolerance (method "smo"; LIBSVM's ``-e``).
    max_iter : int or None, default=None
        SMO's iteration budget (method "smo").
    random_state : int, RandomState or None
        Seed of the cross-validation folds of Platt scaling.

    Attributes
    ----------
    classes_, class_weight_, support_, n_support_, support_vectors_, dual_coef_,
    intercept_, probA_, probB_, n_iter_, n_features_in_ :
        NuSVC's (one-vs-one layout of SVC), ``dual_coef_`` divided by each problem's r.
    kkt_ : QPKKTReport, or a list of them (one per problem)
    solution_ : Solution, or a list of them
    """

    _methods = _METHODS
    fit_intercept = True          # nu-SVC always has its intercept

    def __init__(self, nu: float = 0.5, *, kernel: Any = "rbf", gamma: Any = "scale",
                 degree: float = 3, coef0: float = 0.0, repair_psd: bool = False,
                 class_weight: dict | str | None = None,
                 decision_function_shape: str = "ovr", probability: bool = False,
                 method: str = "exact", tol: float = 1e-3, max_iter: int | None = None,
                 random_state: Any = None) -> None:
        self.nu = nu
        self.kernel = kernel
        self.gamma = gamma
        self.degree = degree
        self.coef0 = coef0
        self.repair_psd = repair_psd
        self.class_weight = class_weight
        self.decision_function_shape = decision_function_shape
        self.probability = probability
        self.method = method
        self.tol = tol
        self.max_iter = max_iter
        self.random_state = random_state

    def _kernel_spec(self) -> dict:
        return {"kernel": self.kernel, "gamma": self.gamma, "degree": self.degree,
                "coef0": self.coef0, "repair_psd": self.repair_psd}

    def _scheme(self) -> str:
        return "ovo"

    def _check_params(self) -> float:
        check_choice("method", self.method, _METHODS)
        check_choice("decision_function_shape", self.decision_function_shape, ("ovr", "ovo"))
        check_positive("tol", self.tol)
        if self.max_iter is not None:
            check_count("max_iter", self.max_iter)
        return check_nu_fraction(self.nu)

    def _fit_binary(self, X, y, s, nu, gram=None):
        """(problem, solution) of one binary nu-SVC (``s``: the samples' costs, equal)."""
        _uniform_costs(type(self).__name__, s)
        spec = self._kernel_spec()
        spec["gamma"] = self._gamma
        problem = NuSVM(X, y, nu=nu, **spec)
        if gram is not None:
            problem.share_gram(gram)
        return problem, _solve(problem, self.method, self.tol, self.max_iter)


class NuSVMRegressor(RegressorMixin, BaseEstimator):
    """nu-SVR regressor (scikit-learn's NuSVR), solved exactly or by SMO alone.

    Parameters
    ----------
    nu : float, default=0.5
        In (0, 1]: bounds the fraction of samples outside the tube (above) and of support
        vectors (below); the tube's width is fitted.
    C : float, default=1.0
        Cost of a deviation beyond the tube (scikit-learn's C).
    kernel, gamma, degree, coef0, repair_psd :
        As in :class:`NuSVMClassifier`.
    method, tol, max_iter :
        As in :class:`NuSVMClassifier`.

    Attributes
    ----------
    support_ : ndarray of int32
        Samples with a nonzero coefficient.
    support_vectors_ : ndarray (empty for "precomputed")
    dual_coef_ : ndarray of shape (1, n_SV)
        a+ - a- on the support.
    intercept_ : ndarray of shape (1,)
    n_support_ : ndarray of int32, shape (1,)
    epsilon_ : float
        The tube's fitted half-width (LIBSVM prints it as -r).
    n_iter_ : int
    kkt_ : QPKKTReport
    solution_ : Solution
    n_features_in_ : int
    """

    def __init__(self, nu: float = 0.5, C: float = 1.0, *, kernel: Any = "rbf",
                 gamma: Any = "scale", degree: float = 3, coef0: float = 0.0,
                 repair_psd: bool = False, method: str = "exact", tol: float = 1e-3,
                 max_iter: int | None = None) -> None:
        self.nu = nu
        self.C = C
        self.kernel = kernel
        self.gamma = gamma
        self.degree = degree
        self.coef0 = coef0
        self.repair_psd = repair_psd
        self.method = method
        self.tol = tol
        self.max_iter = max_iter

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.input_tags.pairwise = self.kernel == "precomputed"
        return tags

    def fit(self, X: ArrayLike, y: ArrayLike,
            sample_weight: ArrayLike | None = None) -> "NuSVMRegressor":
        """Fit the nu-SVR on (X, y); ``sample_weight``: 0 removes a sample, other weights
        must be equal (NotApplicableError otherwise)."""
        check_choice("method", self.method, _METHODS)
        check_positive("tol", self.tol)
        if self.max_iter is not None:
            check_count("max_iter", self.max_iter)
        X, y = edge_data(self, X, y, y_numeric=True)
        s = as_sample_weight(sample_weight, X.shape[0])
        keep = np.arange(X.shape[0]) if s is None else np.flatnonzero(s > 0)
        _uniform_costs(type(self).__name__, None if s is None else s[keep])
        precomputed = self.kernel == "precomputed"
        Xk = X[np.ix_(keep, keep)] if precomputed else X[keep]
        problem = NuSVR(Xk, y[keep], C=self.C, nu=self.nu, kernel=self.kernel,
                        gamma=self.gamma, degree=self.degree, coef0=self.coef0,
                        repair_psd=self.repair_psd)
        sol = _solve(problem, self.method, self.tol, self.max_iter)
        warn_if_not_optimal(self, [sol])
        support = np.flatnonzero(sol.dual_coef)
        self.support_ = keep[support].astype(np.int32)
        self.n_support_ = np.array([support.size], dtype=np.int32)
        self.dual_coef_ = sol.dual_coef[support][None, :]
        self.intercept_ = np.array([sol.b])
        self.epsilon_ = float(sol.extra["epsilon"])
        self.support_vectors_ = np.empty((0, 0)) if precomputed else X[self.support_]
        self.n_iter_ = int(sol.n_iter or 0)
        self.solution_, self.kkt_ = sol, sol.report
        self._kernel = problem.kernel
        return self

    def predict(self, X: ArrayLike) -> np.ndarray:
        """f(x) = dual_coef_ K(support_vectors_, x) + intercept_ (for "precomputed", X is
        the (n_test, n_train) kernel)."""
        X = validated_X(self, X)
        K = (X[:, self.support_] if self._kernel.name == "precomputed"
             else self._kernel(X, self.support_vectors_))
        return K @ self.dual_coef_[0] + self.intercept_[0]
