"""Fit, fitted attributes and prediction shared by the SVM classifiers (SVC's layout).

Each binary problem (two classes, one per pair, or one per class) is the C-form SVM with
per-sample costs::

    min_{w, b}  1/2 ||w||^2 + sum_i C_i max(0, 1 - y_i f(x_i)),
    C_i = C * class_weight[y_i] * sample_weight_i

so class_weight and sample_weight act as SVC's: they scale C. The decomposition and the
attribute layout are :mod:`convexlearn.estimators._multiclass`'s.
"""

from __future__ import annotations

import inspect
import math
import numbers

import numpy as np
from numpy.typing import ArrayLike
from sklearn.base import BaseEstimator, ClassifierMixin
from sklearn.exceptions import NotFittedError
from sklearn.utils.metaestimators import available_if
from sklearn.utils.validation import check_is_fitted

from ..data import as_sample_weight, check_bool, check_C, check_choice, check_count, \
    check_positive, is_sparse
from ..errors import DataError, NotApplicableError, ParameterError
from ..kernels import check_gram, make_kernel
from ..svm import ITERATIVE_METHODS, SVM, checked_svm
from ._gram import shared_gram
from ._base import (SmallCallsMixin, edge_data, fit_weighted_classes, seed_from,
                    validated_X, warn_if_not_optimal)
from ._multiclass import (argmax_ties_low, fit_decomposition, ovo_pairs, ovr_from_ovo,
                          rounding_bound, vote)
from ._probability import (couple_pairwise, cv_decision_values, platt_fit, platt_predict)

__all__ = ["SVMClassifierBase"]


def _accepted_options(method: str) -> set[str]:
    """Keyword options the core's iterative SVM method takes (max_iter, seed, ...)."""
    return set(inspect.signature(ITERATIVE_METHODS[method]).parameters)


def _double_centered(K: np.ndarray) -> np.ndarray:
    """P K P with P = I - 1 1^T / n.

    With an intercept the dual lives on y^T alpha = 0, where (y * alpha)^T K (y * alpha)
    is unchanged by the centering: the SVM needs K to be PSD on 1^perp only (conditionally
    PSD), which is exactly P K P being PSD. So a precomputed kernel shifted by a constant
    (K - c 1 1^T, as in scikit-learn's checks) is accepted, and its problem solved exactly.
    A principal submatrix of P K P (one pair's samples) is PSD as well, and differs from
    that pair's own centering by terms that vanish on its y^T alpha = 0.
    """
    col = K.mean(axis=0)
    return K - col[None, :] - K.mean(axis=1)[:, None] + col.mean()


class SVMClassifierBase(SmallCallsMixin, ClassifierMixin, BaseEstimator):
    """The machinery of :class:`KernelSVMClassifier` and :class:`LinearSVMClassifier`."""

    _methods: tuple[str, ...] = ()
    _linear_only = False

    # ------------------------------------------------------------ parameters
    def _kernel_spec(self) -> dict:
        return {"kernel": "linear"}

    def _scheme(self) -> str:
        return "ovr"

    def _problem_options(self) -> dict:
        """Keyword arguments of each binary problem beyond the kernel (the SVM's loss)."""
        return {}

    def _keeps_sparse(self) -> bool:
        """A sparse X stays sparse for the linear kernel (products only)."""
        return self._kernel_spec()["kernel"] == "linear"

    def _check_params(self) -> float:
        # Iterative methods are offered as the core registers them (convexlearn.svm).
        available = [m for m in self._methods if m == "exact" or m in ITERATIVE_METHODS]
        check_choice("method", self.method, available)
        check_positive("tol", self.tol)
        if self.max_iter is not None:
            check_count("max_iter", self.max_iter)
        check_bool("probability", self.probability)
        for name in ("shrinking", "break_ties"):
            if hasattr(self, name):
                check_bool(name, getattr(self, name))
        if hasattr(self, "cache_size"):
            check_positive("cache_size", self.cache_size)
        if not isinstance(self.verbose, numbers.Integral) or self.verbose < 0:
            raise ParameterError(f"verbose must be a bool or an integer >= 0 (1: INFO, 2: "
                                 f"DEBUG on stderr); got verbose={self.verbose!r}")
        return check_C(self.C)

    def _options(self) -> dict:
        """Keyword options of ``SVM.solve``: ``verbose``, SMO's ``cache_size`` and
        ``shrinking`` (the estimators that have them; the exact chain gives them to its
        SMO route only), an iterative method's ``max_iter`` and ``seed``."""
        options = {"verbose": self.verbose}
        smo = {name: getattr(self, name) for name in ("cache_size", "shrinking")
               if hasattr(self, name)}
        if self.method == "exact":
            return {**options, **smo}
        accepted = _accepted_options(self.method)
        options.update({k: v for k, v in smo.items() if k in accepted})
        if self.max_iter is not None and "max_iter" in accepted:
            options["max_iter"] = int(self.max_iter)
        if "seed" in accepted:
            options["seed"] = seed_from(self.random_state)
        return options

    def __sklearn_is_fitted__(self) -> bool:
        """Fitted once ``fit`` has laid out the expansion (scikit-learn's protocol:
        check_is_fitted asks this instead of scanning the attributes)."""
        return hasattr(self, "_expansion")

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.input_tags.pairwise = self._kernel_spec()["kernel"] == "precomputed"
        tags.input_tags.sparse = True     # kept sparse (linear kernel) or densified (limit)
        return tags

    # ------------------------------------------------------------------ fit
    def fit(self, X: ArrayLike, y: ArrayLike,
            sample_weight: ArrayLike | None = None) -> "SVMClassifierBase":
        """Fit the binary problem(s): one for two classes, else one per pair (one-vs-one)
        or per class (one-vs-rest).

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features), or (n_samples, n_samples) Gram
            matrix for ``kernel="precomputed"``
        y : array-like of shape (n_samples,)
        sample_weight : array-like of shape (n_samples,), optional
            Per-sample cost C_i = C * class_weight[y_i] * sample_weight_i. A weight of 0
            removes the sample, an integer weight k is the same fit as k copies of the
            sample. Non-uniform costs need ``method="exact"`` (the iterative methods take
            one C).

        Returns
        -------
        self
        """
        C = self._check_params()
        _refuse_objects_for_callable(self._kernel_spec()["kernel"], X)
        X, y = edge_data(self, X, y)
        precomputed = self._kernel_spec()["kernel"] == "precomputed"
        _refuse_negative_weights(sample_weight)
        s = as_sample_weight(sample_weight, X.shape[0])
        codes, cost = fit_weighted_classes(self, y, s)
        _refuse_weightless_classes(self, codes, cost)
        keep = np.flatnonzero(cost > 0)
        if precomputed:
            X = check_gram(X)
            Xk = X[np.ix_(keep, keep)]
            Xk_solve = _double_centered(Xk) if self.fit_intercept else Xk
        elif keep.size == X.shape[0]:     # every sample kept: no copy (X is only read)
            Xk = Xk_solve = X if is_sparse(X) else np.ascontiguousarray(X)
        else:
            Xk = Xk_solve = X[keep]
        costs = cost[keep]
        self._fit_kernel = _resolved_kernel(self, Xk, None if s is None else s[keep],
                                            precomputed)
        self._gamma = (self._fit_kernel.gamma if self._fit_kernel is not None
                       and self._fit_kernel.name not in ("linear", "callable")
                       else self._kernel_spec().get("gamma"))
        uniform_all = bool(np.all(costs == 1.0))
        gram = None if precomputed else shared_gram(
            self._kernel_spec(), self._gamma, Xk, codes[keep], self._scheme(),
            getattr(self, "cache_size", 200.0) * 2**20, kernel=self._fit_kernel)
        fits = []

        def fit_binary(rows, y_pm):
            # all samples in order (binary, one-vs-rest): no copy; a one-vs-one pair that
            # covers every sample still comes in class order, so the order is checked
            whole = rows.size == keep.size and np.array_equal(rows, np.arange(rows.size))
            data = Xk_solve if whole else _rows(Xk_solve, rows, precomputed)
            svm, sol = self._fit_binary(data, y_pm,
                                        None if uniform_all else costs[rows], C,
                                        None if gram is None else gram.block(rows))
            beta = sol.dual_coef if sol.dual_coef is not None else svm.y * sol.report.alpha
            # the kernel, not the problem: its block of the shared Gram matrix is freed
            # now, and the next pair's block reuses the memory (fresh pages cost more)
            fits.append((rows, y_pm, svm.kernel, sol))
            return beta, float(sol.b), None

        expansion, _ = fit_decomposition(codes[keep], self.classes_.size, self._scheme(),
                                         fit_binary)
        self._set_attributes(expansion, fits, X, Xk, keep, precomputed)
        if self.probability:
            self._fit_platt(fits, Xk_solve, costs if not uniform_all else None, C,
                            precomputed, gram)
        return self

    def _fit_binary(self, X, y, s, C, gram=None):
        """(problem, solution) of one binary problem with per-sample costs C * s; ``gram``,
        when given, is the problem's block of the shared Gram matrix."""
        uniform = s is None or bool(np.all(s == s[0]))
        C_eff = C if s is None or not uniform else C * float(s[0])
        if uniform or math.isinf(C):
            svm = _problem(self, X, y, C_eff, None, gram)
            return svm, svm.solve(method=self.method, tol=self.tol, **self._options())
        if self.method != "exact":
            raise NotApplicableError(
                f"method={self.method!r} solves the SVM with one C for all samples; "
                f"non-uniform sample_weight or class_weight needs per-sample costs C_i = "
                f"C * class_weight[y_i] * sample_weight_i, which method='exact' solves")
        weighted = _problem(self, X, y, C, s, gram)
        return weighted, weighted.solve(method="exact", tol=max(self.tol, 1e-6),
                                        **self._options())

    def _set_attributes(self, expansion, fits, X, Xk, keep, precomputed) -> None:
        solutions = [sol for *_, sol in fits]
        warn_if_not_optimal(self, solutions)
        self.support_ = keep[expansion.support].astype(np.int32)
        self.n_support_ = expansion.n_support
        self.dual_coef_ = expansion.dual_coef
        self.intercept_ = expansion.intercept.copy()
        self._expansion = expansion
        self._coefs = expansion.coefficients()
        if precomputed and self.fit_intercept:
            # Solved on P K P; on K itself f = K beta + b - c^T beta, c = K's column means
            # over the training samples (1^T beta = 0 in each problem).
            self.intercept_ -= self._coefs @ Xk.mean(axis=0)[expansion.support]
        self.support_vectors_ = np.empty((0, 0)) if precomputed else X[self.support_]
        if self._linear_only:
            self.coef_ = np.vstack([sol.w for sol in solutions])
        self.n_iter_ = np.array([sol.n_iter or 0 for sol in solutions], dtype=int)
        binary = len(solutions) == 1
        self.solution_ = solutions[0] if binary else solutions
        self.kkt_ = solutions[0].report if binary else [sol.report for sol in solutions]
        self._kernel = fits[0][2]

    # ----------------------------------------------------------- probability
    def _fit_platt(self, fits, Xk, costs, C, precomputed, gram) -> None:
        """Platt's (A, B) per problem from 5-fold cross-validated decision values
        (``gram``: the fit's :class:`~._gram.SharedGram`, or None)."""
        seed = seed_from(self.random_state)
        probA, probB = [], []
        for rows, y_pm, _, _ in fits:
            def fit_predict(train, test, rows=rows, y_pm=y_pm):
                tr, te = rows[train], rows[test]
                svm, sol = self._fit_binary(_rows(Xk, tr, precomputed), y_pm[train],
                                            None if costs is None else costs[tr], C,
                                            None if gram is None else gram.block(tr))
                new = Xk[np.ix_(te, tr)] if precomputed else Xk[te]
                return svm.decision_function(sol, new)
            f = cv_decision_values(y_pm, fit_predict, seed=seed)
            A, B = platt_fit(f, y_pm)
            probA.append(A)
            probB.append(B)
        self.probA_, self.probB_ = np.array(probA), np.array(probB)

    # ----------------------------------------------------------- prediction
    def _problem_values(self, X) -> tuple[np.ndarray, np.ndarray]:
        """(F, E): the value of each binary problem (n, n_problems) and its rounding bound
        (see :mod:`convexlearn.estimators._multiclass`)."""
        X = validated_X(self, X)
        if self._linear_only:
            W, n_terms = self.coef_, self.coef_.shape[1]
            F, absF = X @ W.T, np.abs(X) @ np.abs(W).T
        else:
            K = (X[:, self.support_] if self._kernel.name == "precomputed"
                 else self._kernel(X, self.support_vectors_))
            F, absF = K @ self._coefs.T, np.abs(K) @ np.abs(self._coefs).T
            n_terms = self._coefs.shape[1]
        return F + self.intercept_, rounding_bound(absF, np.abs(self.intercept_), n_terms)

    def decision_function(self, X: ArrayLike) -> np.ndarray:
        """f(x): (n,) for two classes (f >= 0 means classes_[1]); one-vs-rest (n, n_classes);
        one-vs-one (n, n_classes (n_classes - 1) / 2) with ``decision_function_shape="ovo"``
        (f_ij > 0 means class i), else scikit-learn's "ovr" transform of the votes
        (votes + confidence / (3 (|confidence| + 1))).

        For a precomputed kernel X is the (n_test, n_train) kernel between test and
        training samples.
        """
        F, E = self._problem_values(X)
        scheme = self._expansion.scheme
        if scheme == "binary":
            return F.ravel()
        if scheme == "ovo" and getattr(self, "decision_function_shape", "ovr") == "ovr":
            return ovr_from_ovo(F, E, self.classes_.size)
        return F

    def predict(self, X: ArrayLike) -> np.ndarray:
        """classes_[1] where f(x) >= 0 (binary); the class of most votes (one-vs-one: f_ij > 0
        votes for i, else j, as LIBSVM) or of the largest f_k (one-vs-rest), ties to the
        first class; with ``break_ties`` the argmax of the "ovr" decision function. Values
        within their rounding bound are equal."""
        break_ties = getattr(self, "break_ties", False)
        if break_ties and self.decision_function_shape == "ovo":
            raise ParameterError("break_ties must be False when decision_function_shape "
                                 "is 'ovo' (SVC's rule)")
        F, E = self._problem_values(X)
        scheme = self._expansion.scheme
        if scheme == "binary":
            return np.where(F[:, 0] >= -E[:, 0], self.classes_[1], self.classes_[0])
        if scheme == "ovo":
            if break_ties:
                # SVC's: the largest "ovr" value, votes then confidences (first on ties)
                return self.classes_[np.argmax(ovr_from_ovo(F, E, self.classes_.size),
                                               axis=1)]
            return self.classes_[np.argmax(vote(F, E, self.classes_.size), axis=1)]
        return self.classes_[argmax_ties_low(F, E)]

    def _check_proba(self) -> bool:
        if not self.probability:
            raise AttributeError("predict_proba is available when probability=True "
                                 "(Platt scaling fitted by internal cross-validation)")
        return True

    @available_if(_check_proba)
    def predict_proba(self, X: ArrayLike) -> np.ndarray:
        """P(class | x), shape (n, n_classes), rows summing to 1 (``probability=True``).

        Binary: Platt's 1 / (1 + exp(A f + B)) for classes_[1]. One-vs-one: Platt per pair,
        coupled by Wu-Lin-Weng's second method (LIBSVM's). One-vs-rest: Platt per class,
        normalized to sum 1. (A, B) were fitted on 5-fold cross-validated decision values,
        so the argmax may differ from ``predict`` near the boundaries (as in LIBSVM).

        Raises
        ------
        NotFittedError
            Not fitted, or fitted with ``probability=False`` (SVC's behaviour when
            ``probability`` is switched on after the fit).
        """
        check_is_fitted(self)
        if not hasattr(self, "probA_"):
            raise NotFittedError("predict_proba is not available when fitted with "
                                 "probability=False: set probability=True and fit again")
        F, _ = self._problem_values(X)
        P = platt_predict(F, self.probA_, self.probB_)
        scheme = self._expansion.scheme
        if scheme == "binary":
            return np.column_stack([1.0 - P[:, 0], P[:, 0]])
        if scheme == "ovo":
            return couple_pairwise(P, self.classes_.size, ovo_pairs(self.classes_.size))
        return P / P.sum(axis=1, keepdims=True)

    @available_if(_check_proba)
    def predict_log_proba(self, X: ArrayLike) -> np.ndarray:
        """log of :meth:`predict_proba`."""
        return np.log(self.predict_proba(X))


def _resolved_kernel(estimator, X, s, precomputed):
    """The fit's kernel, resolved once on all training samples: gamma="scale"/"auto"
    by SVC's rule (Var weighted by sample_weight, so integer weights are copies), not
    per problem; None for a precomputed kernel (each problem checks its block)."""
    if precomputed:
        return None
    spec = estimator._kernel_spec()
    return make_kernel(spec["kernel"], X, gamma=spec.get("gamma", "scale"),
                       degree=spec.get("degree", 3), coef0=spec.get("coef0", 0.0),
                       sample_weight=s)


def _problem(estimator, X, y, C, s, gram):
    """The binary problem on rows X with labels y in {-1, +1}, per-sample costs C * s
    (s None: C), ``gram`` its block of the shared Gram matrix (or None). Dense X
    with the fit's resolved kernel and the hinge loss: :func:`~convexlearn.svm.
    checked_svm` (X, the kernel and C were checked once for the fit); otherwise
    ``SVM(...)`` with its checks."""
    options = estimator._problem_options()
    kernel = getattr(estimator, "_fit_kernel", None)
    if (kernel is not None and type(X) is np.ndarray and X.flags.c_contiguous
            and options.get("loss", "hinge") == "hinge" and y.min() < 0 < y.max()):
        return checked_svm(X, y, C, kernel, intercept=estimator.fit_intercept,
                           sample_weight=s, K=gram,
                           repair_psd=estimator._kernel_spec().get("repair_psd", False))
    spec = estimator._kernel_spec()
    if "gamma" in spec:
        spec["gamma"] = estimator._gamma
    svm = SVM(X, y, C=C, intercept=estimator.fit_intercept, sample_weight=s, **spec, **options)
    if gram is not None:
        svm.share_gram(gram)
    return svm


def _refuse_objects_for_callable(kernel, X) -> None:
    """A callable kernel is evaluated on float64 rows here (SVC passes strings or other
    objects through to it): non-numeric X is refused with the way to fit such data, its Gram
    matrix with kernel="precomputed"."""
    if not callable(kernel) or not isinstance(X, (list, tuple, np.ndarray)):
        return
    try:
        np.asarray(X, dtype=np.float64)
    except (TypeError, ValueError):
        first = np.ravel(np.asarray(X, dtype=object))[:1]
        what = type(first[0]).__name__ if first.size else "non-numeric"
        raise DataError(f"a callable kernel is evaluated on float64 rows here; X holds "
                        f"{what} values. For a kernel on other objects (strings, graphs), "
                        f"fit its Gram matrix: fit(kernel(X, X), y) with "
                        f"kernel='precomputed', then predict from kernel(X_new, X)") from None


def _refuse_weightless_classes(estimator, codes: np.ndarray, cost: np.ndarray) -> None:
    """A class of ``classes_`` whose samples all cost C_i = 0 (``class_weight`` 0) is an
    error: every binary problem of that class (its one-vs-one pairs, its one-vs-rest
    problem, the only problem of two classes) has samples of the other side only, and its
    optimum (w = 0, any b <= -1) is not unique. SVC (LIBSVM) fails on it too ("The dual
    coefficients or intercepts are not finite")."""
    total = np.bincount(codes, weights=cost, minlength=estimator.classes_.size)
    empty = np.flatnonzero(total <= 0)
    if empty.size:
        c, w = estimator.classes_[empty[0]], float(estimator.class_weight_[empty[0]])
        c = c.item() if isinstance(c, np.generic) else c       # (1, not np.int64(1))
        raise ParameterError(
            f"class_weight[{c!r}] = {w:g} gives every sample of class {c!r} the cost "
            f"C_i = 0: the binary problems of class {c!r} then fit samples of the other "
            f"side only, and their optimum (w = 0, any intercept b <= -1) is not unique, so "
            f"there is no certified fit (SVC fails on it too: its intercepts are not "
            f"finite). Remove the samples of class {c!r} from X and y, or give it a "
            f"class_weight > 0")


def _refuse_negative_weights(sample_weight) -> None:
    """A negative weight is an error (docs/conventions.md): the cost C_i = C s_i < 0 makes
    the sample's hinge term concave, so the problem is not convex and has no certificate.
    LIBSVM (SVC) treats it as 0 instead, silently."""
    s = None if sample_weight is None else np.asarray(sample_weight)
    if s is not None and s.dtype.kind in "iuf" and np.any(s < 0):
        i = int(np.flatnonzero(np.ravel(s) < 0)[0])
        raise DataError(f"sample_weight must be >= 0; sample_weight[{i}] = "
                        f"{float(np.ravel(s)[i])!r}: a negative cost C_i = C s_i makes the "
                        f"problem non-convex. SVC (LIBSVM) treats negative weights as 0; "
                        f"pass np.maximum(sample_weight, 0) for that")


def _rows(X: np.ndarray, rows: np.ndarray, precomputed: bool) -> np.ndarray:
    """The training block of ``rows``: X[rows], or K[rows][:, rows] for a Gram matrix."""
    return X[np.ix_(rows, rows)] if precomputed else X[rows]
