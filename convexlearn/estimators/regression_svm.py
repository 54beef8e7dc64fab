"""scikit-learn estimators for epsilon-SVR and the one-class SVM (certified answers).

``SVMRegressor`` has scikit-learn SVR's parameter names and fitted attributes
(``support_``, ``support_vectors_``, ``dual_coef_`` = (alpha - alpha*) on the support,
``intercept_``, ``n_support_``, ``coef_`` for the linear kernel); ``OneClassSVM`` those of
scikit-learn's OneClassSVM (``dual_coef_`` = LIBSVM's alpha on the support, in [0, 1]
with sum nu n; ``intercept_`` = -rho; ``offset_`` = rho; ``decision_function`` =
``score_samples`` - ``offset_``; ``predict`` in {-1, +1}). Both solve
:class:`convexlearn.SVR` / :class:`convexlearn.OneClassSVM` with ``method`` (default
"exact": certified at a relative duality gap of 1e-9) and keep ``solution_`` and its
certificate ``kkt_``.

Not taken (a TypeError, as any unknown parameter): ``shrinking``, ``verbose`` and
``max_iter`` (the exact route has its own budget) and ``sample_weight`` in ``fit``.
``OneClassSVM.fit`` ignores ``y``, as scikit-learn's (the library's
:class:`convexlearn.OneClassSVM` refuses labels).
"""

from __future__ import annotations

from typing import Any

import numpy as np
from numpy.typing import ArrayLike
from sklearn.base import BaseEstimator, OutlierMixin, RegressorMixin

from ..data import check_positive
from ..one_class import OneClassSVM as OneClassProblem
from ..svr import SVR
from ._base import edge_data, validated_X, warn_if_not_optimal
from ._multiclass import rounding_bound

__all__ = ["SVMRegressor", "OneClassSVM"]


class _KernelExpansion(BaseEstimator):
    """Shared fitting of the kernel expansion f(x) = sum_j beta_j k(x_j, x) + b."""

    def _kernel_params(self) -> dict:
        return {"kernel": self.kernel, "gamma": self.gamma, "degree": self.degree,
                "coef0": self.coef0}

    def _keeps_sparse(self) -> bool:
        return isinstance(self.kernel, str) and self.kernel == "linear"

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.input_tags.pairwise = isinstance(self.kernel, str) and self.kernel == "precomputed"
        tags.input_tags.sparse = True
        return tags

    def _solve(self, problem):
        """Solve, keep the expansion on its support, set the fitted attributes."""
        sol = problem.solve(self.method, tol=self.tol, cache_size=self.cache_size)
        warn_if_not_optimal(self, [sol])
        beta = problem.expansion(sol)
        support = np.flatnonzero(beta != 0)
        self.support_ = support.astype(np.int32)
        self.n_support_ = np.array([support.size], dtype=np.int32)
        self.dual_coef_ = beta[support][None, :]
        self.intercept_ = np.array([float(sol.b)])
        precomputed = problem.X is None
        self.support_vectors_ = (np.empty((0, 0)) if precomputed
                                 else problem.X[support])
        if sol.w is not None:
            self._coef = np.asarray(sol.w, dtype=float)[None, :]
        self.fit_status_ = 0 if sol.status == "optimal" else 1
        self.n_iter_ = sol.n_iter or 0
        self.solution_, self.kkt_ = sol, sol.report
        self._kernel = problem.kernel
        return self

    @property
    def coef_(self) -> np.ndarray:
        """w (1, d) of the linear kernel (read-only copy; AttributeError otherwise)."""
        if getattr(self, "_coef", None) is None:
            raise AttributeError("coef_ is only available when kernel='linear'")
        return self._coef.copy()

    def _raw(self, X: ArrayLike) -> tuple[np.ndarray, np.ndarray]:
        """(sum_j beta_j k(x_j, x) over the support, its rounding bound): two evaluations
        in different batches (a matrix product is blocked by the batch size) differ by
        at most the bound of :func:`~convexlearn.estimators._multiclass.rounding_bound`."""
        X = validated_X(self, X)
        if getattr(self, "_coef", None) is not None:
            w = self._coef[0]
            return (np.asarray(X @ w).ravel(),
                    rounding_bound(np.asarray(abs(X) @ np.abs(w)).ravel(), 0.0, w.size))
        K = (np.asarray(X[:, self.support_]) if self._kernel.name == "precomputed"
             else self._kernel(X, self.support_vectors_))
        coef = self.dual_coef_[0]
        return K @ coef, rounding_bound(np.abs(K) @ np.abs(coef), 0.0, coef.size)


class SVMRegressor(RegressorMixin, _KernelExpansion):
    """Epsilon-SVR with scikit-learn SVR's parameters (:class:`convexlearn.SVR`).

    Parameters
    ----------
    kernel, degree, gamma, coef0 :
        As scikit-learn's SVR ("rbf", 3, "scale", 0.0).
    C : float
        Cost of a deviation beyond the tube (> 0).
    epsilon : float
        Half-width of the tube (>= 0).
    tol : float
        SMO's tolerance for ``method="smo"`` (the exact routes certify at 1e-9).
    cache_size : float
        SMO's kernel column cache, MB.
    method : str
        "exact" (default), "exact-smo", "exact-dual" or "smo".
    """

    def __init__(self, *, kernel: Any = "rbf", degree: int = 3, gamma: Any = "scale",
                 coef0: float = 0.0, tol: float = 1e-3, C: float = 1.0, epsilon: float = 0.1,
                 cache_size: float = 200.0, method: str = "exact") -> None:
        self.kernel, self.degree, self.gamma, self.coef0 = kernel, degree, gamma, coef0
        self.tol, self.C, self.epsilon = tol, C, epsilon
        self.cache_size, self.method = cache_size, method

    def fit(self, X: ArrayLike, y: ArrayLike) -> "SVMRegressor":
        """Fit the epsilon-SVR on (X, y); returns self."""
        X, y = edge_data(self, X, y, y_numeric=True)
        problem = SVR(X, y, C=self.C, epsilon=self.epsilon, **self._kernel_params())
        self.shape_fit_ = X.shape
        return self._solve(problem)

    def predict(self, X: ArrayLike) -> np.ndarray:
        """f(x) = sum_j dual_coef_j k(sv_j, x) + intercept_."""
        return self._raw(X)[0] + self.intercept_[0]


class OneClassSVM(OutlierMixin, _KernelExpansion):
    """The one-class SVM with scikit-learn OneClassSVM's parameters
    (:class:`convexlearn.OneClassSVM`, LIBSVM's scaling).

    Parameters
    ----------
    kernel, degree, gamma, coef0 :
        As scikit-learn's OneClassSVM ("rbf", 3, "scale", 0.0).
    nu : float
        In (0, 1].
    tol, cache_size, method :
        As :class:`SVMRegressor`.
    """

    def __init__(self, *, kernel: Any = "rbf", degree: int = 3, gamma: Any = "scale",
                 coef0: float = 0.0, tol: float = 1e-3, nu: float = 0.5,
                 cache_size: float = 200.0, method: str = "exact") -> None:
        self.kernel, self.degree, self.gamma, self.coef0 = kernel, degree, gamma, coef0
        self.tol, self.nu, self.cache_size, self.method = tol, nu, cache_size, method

    def fit(self, X: ArrayLike, y: ArrayLike | None = None) -> "OneClassSVM":
        """Fit on X (``y`` is ignored, as scikit-learn's); returns self."""
        check_positive("tol", self.tol)
        X = edge_data(self, X)
        problem = OneClassProblem(X, nu=self.nu, **self._kernel_params())
        self._solve(problem)
        self.offset_ = -self.intercept_
        return self

    def _scores(self, X: ArrayLike) -> tuple[np.ndarray, np.ndarray]:
        """(score_samples, decision_function). A sample whose score is within its
        rounding bound (plus the rounding of the subtraction) of ``offset_`` (a support
        vector on the boundary) gets the score ``offset_`` and the decision 0 exactly, so
        that the sign of its decision, and ``predict``, do not depend on the batch it is
        computed in (scikit-learn's check_methods_subset_invariance)."""
        raw, bound = self._raw(X)
        rho = self.offset_[0]
        f = raw - rho
        on = np.abs(f) <= bound + 4 * np.finfo(float).eps * abs(rho)
        return np.where(on, rho, raw), np.where(on, 0.0, f)

    def score_samples(self, X: ArrayLike) -> np.ndarray:
        """sum_j dual_coef_j k(sv_j, x) (= decision_function + offset_)."""
        return self._scores(X)[0]

    def decision_function(self, X: ArrayLike) -> np.ndarray:
        """score_samples - offset_ (negative outside the learned region)."""
        return self._scores(X)[1]

    def predict(self, X: ArrayLike) -> np.ndarray:
        """+1 where decision_function >= 0 (inlier), -1 elsewhere."""
        return np.where(self.decision_function(X) >= 0, 1, -1)
