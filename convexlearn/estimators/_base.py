"""What every convexlearn estimator shares: input checks at the scikit-learn edge and one-vs-rest.

Input: scikit-learn's ``validate_data`` is used at the edge because its checks (and users'
pipelines) rely on its exact behaviour: ``n_features_in_``, ``feature_names_in_``, the
messages for complex, empty or NaN input. (Plain input, a finite float64 ndarray X and a
numeric 1-D y, which validate_data would return unchanged, skips it: its bookkeeping of
``n_features_in_`` and ``feature_names_in_`` is done by :func:`_plain_arrays`, and any
other input goes through validate_data.) scipy.sparse CSR/CSC is accepted
(:func:`edge_data`): kept sparse where the estimator's method uses X through products,
else densified below ``convexlearn.data.DENSIFY_LIMIT_BYTES`` or refused with the size of
the dense copy. The numerical core still validates the arrays it receives through
:mod:`convexlearn.data`.

Multiclass for the linear models (ERM): one-vs-rest. With classes c_1 < ... < c_K (K > 2),
problem k separates c_k (+1) from the rest (-1); the decision function has one column per
class and the prediction is the class of the largest column. For K = 2 there is one
problem with classes_[0] -> -1 and classes_[1] -> +1 (the package's label rule), a 1-D
decision function and prediction classes_[1] where f(x) >= 0 (sign(0) = +1). The SVM
classifiers also offer one-vs-one (:mod:`convexlearn.estimators._multiclass`).
"""

from __future__ import annotations

import math
import numbers
import warnings

import numpy as np
from numpy.typing import ArrayLike
from sklearn.exceptions import ConvergenceWarning
from sklearn.utils import check_random_state
from sklearn.utils.class_weight import compute_class_weight
from sklearn.utils.multiclass import check_classification_targets
from sklearn.utils.validation import check_is_fitted, validate_data

from ..data import dense_or_refuse, is_sparse
from ..errors import DataError, ParameterError
from ._multiclass import argmax_ties_low, rounding_bound

__all__ = ["check_class_weight", "fit_weighted_classes", "ovr_targets", "seed_from",
           "warn_if_not_optimal", "fit_classes", "validated_X", "edge_data", "SmallCallsMixin"]


def fit_classes(y: np.ndarray, sample_weight: np.ndarray | None) -> np.ndarray:
    """The classes of a classifier: labels of the samples with positive weight, sorted.

    A zero weight removes a sample, so a class whose samples all weigh zero is not a class
    of the fit. Fewer than two classes is an error.
    """
    # a 1-D array of integers (or booleans) is always a valid target (scikit-learn's
    # type_of_target: "binary" or "multiclass"); its checks (~0.3 ms, a fixed cost of small
    # fits) run for every other kind, with their messages
    if not (isinstance(y, np.ndarray) and y.ndim == 1 and y.dtype.kind in "iub"):
        check_classification_targets(y)
    present = y if sample_weight is None else y[sample_weight > 0]
    classes = np.unique(present)
    if classes.size < 2:
        dropped = "" if sample_weight is None else " among the samples with sample_weight > 0"
        raise DataError(f"y has one class only{dropped} ({classes[0]!r}); a classifier "
                        f"needs at least two classes")
    return classes


def check_class_weight(class_weight) -> None:
    """None, "balanced" or a dict {class: weight >= 0}."""
    if class_weight is None or (isinstance(class_weight, str) and class_weight == "balanced"):
        return
    if not isinstance(class_weight, dict):
        raise ParameterError(f"class_weight must be None, 'balanced' or a dict {{class: "
                             f"weight}}; got class_weight={class_weight!r}")


def fit_weighted_classes(estimator, y: np.ndarray,
                         sample_weight: np.ndarray | None) -> tuple[np.ndarray, np.ndarray]:
    """Set ``classes_`` and ``class_weight_``; return (class code, weight v_i) per sample.

    v_i = class_weight_[y_i] * sample_weight_i, 0 for a label outside classes_ (whose
    samples all weigh 0). "balanced" is scikit-learn's (SVC's) n / (n_classes bincount),
    counted over the samples of positive weight, unweighted.
    """
    check_class_weight(estimator.class_weight)
    s = sample_weight
    estimator.classes_ = classes = fit_classes(y, s)
    codes = np.minimum(np.searchsorted(classes, y), classes.size - 1)
    if s is None and estimator.class_weight is None:
        # every label is a class (classes_ are all of y's labels) and every weight is 1
        estimator.class_weight_ = np.ones(classes.size)
        return codes, np.ones(y.shape[0])
    known = classes[codes] == y
    present = known if s is None else known & (s > 0)
    # None: all ones (scikit-learn's compute_class_weight validates its input again, ~1 ms
    # per fit, a fixed cost that shows on small problems)
    estimator.class_weight_ = (np.ones(classes.size) if estimator.class_weight is None else
                               compute_class_weight(estimator.class_weight, classes=classes,
                                                    y=y[present]))
    v = np.where(known, estimator.class_weight_[codes], 0.0) * (1.0 if s is None else s)
    return codes, v


def ovr_targets(y: np.ndarray, classes: np.ndarray):
    """Yield the binary targets of the one-vs-rest problems, in classes_ order.

    Binary: the labels themselves (the core maps classes[0] -> -1, classes[1] -> +1).
    K > 2 classes: y_k = +1 where y == classes[k], else -1.
    """
    if classes.size == 2:
        yield y
        return
    for c in classes:
        yield np.where(y == c, 1.0, -1.0)


def seed_from(random_state) -> int | None:
    """An integer seed for the core's ``seed`` option (None stays None)."""
    if random_state is None or isinstance(random_state, numbers.Integral):
        return random_state
    return int(check_random_state(random_state).randint(np.iinfo(np.int32).max))


def _check_summary(sol) -> str:
    """What failed, and at which tolerance: the KKT check, the duality-gap certificate of
    an exact route (relative gap > its gap_tol while the KKT residuals passed), the ERM
    optimality check, or, when every check passed, the solver's own status."""
    report = sol.report
    if hasattr(report, "max_violation"):
        if not report.passed:
            worst = max(report.worst().items(), key=lambda kv: kv[1])[0]
            return (f"; the KKT check failed: max violation {report.max_violation:.2e} > tol "
                    f"{report.tol:g} (worst condition: {worst})")
        gap_tol = sol.provenance.get("gap_tol")
        if gap_tol is not None and abs(report.relative_gap) > gap_tol:
            return (f"; the duality-gap certificate failed: relative gap "
                    f"{report.relative_gap:.2e} > {gap_tol:g} (the KKT residuals passed: max "
                    f"{report.max_violation:.2e} <= tol {report.tol:g})")
    elif hasattr(report, "distance"):
        if not report.passed:
            return (f"; the optimality check failed at tol {report.tol:g} (relative): "
                    f"distance of 0 to the subdifferential {report.relative_distance:.2e}, "
                    f"duality gap {report.relative_gap:.2e}")
    else:
        return ""
    return (f"; its optimality check passed at tol {report.tol:g}, but the solver did not "
            f"report success (its status: {sol.provenance.get('solver_status', sol.status)!r}"
            f"{f', after {sol.n_iter} iterations' if sol.n_iter else ''})")


def warn_if_not_optimal(estimator, solutions) -> None:
    """ConvergenceWarning for each solution whose status is not "optimal", saying what
    failed and at which tolerance (:func:`_check_summary`)."""
    for k, sol in enumerate(solutions):
        if sol.status != "optimal":
            which = f" (one-vs-rest problem {k})" if len(solutions) > 1 else ""
            solver = sol.provenance.get("cvxpy_status")
            solver = f" (cvxpy status {solver!r})" if solver not in (None, "optimal") else ""
            warnings.warn(f"{type(estimator).__name__}{which}: method {sol.method!r} ended "
                          f"with status {sol.status!r}{solver}{_check_summary(sol)} "
                          f"(see solution_)", ConvergenceWarning, stacklevel=3)


def edge_data(estimator, X, y="no_validation", reset: bool = True, **kwargs):
    """scikit-learn's validate_data, with scipy.sparse CSR/CSC accepted: kept sparse where
    the estimator's method uses X through products (``estimator._keeps_sparse()``), else
    densified below data.DENSIFY_LIMIT_BYTES or refused with the size of the dense copy."""
    only_X = isinstance(y, str) and y == "no_validation"
    fast = None if y is None else _plain_arrays(estimator, X, None if only_X else y, reset,
                                                kwargs)
    if fast is not None:
        return fast[0] if only_X else fast
    formats = ("csr", "csc") if hasattr(estimator, "_keeps_sparse") else False
    if only_X:
        X = validate_data(estimator, X, reset=reset, dtype=np.float64,
                          accept_sparse=formats, **kwargs)
    else:
        X, y = validate_data(estimator, X, y, reset=reset, dtype=np.float64,
                             accept_sparse=formats, **kwargs)
    if is_sparse(X):
        X = X.tocsr() if estimator._keeps_sparse() else dense_or_refuse(
            X, f"{type(estimator).__name__} with these parameters")
    return X if only_X else (X, y)


def _plain_arrays(estimator, X, y, reset: bool, kwargs: dict):
    """(X, y) when they are input that scikit-learn's validate_data would return as they
    are, after doing its bookkeeping here; None for any other input (validate_data then
    runs, with its messages and warnings).

    Plain input: X a float64 ndarray (not a subclass) of shape (n >= 1, d >= 1) with
    finite entries (its min and max are finite: both propagate a NaN); y None or
    a 1-D ndarray of n numbers, finite where it is a float. For those validate_data
    converts nothing and only sets ``n_features_in_`` (``reset``) or checks it, and, for
    an ndarray, deletes ``feature_names_in_`` (``reset``) or warns when there is one. Its
    dataframe detection and dtype machinery cost ~0.2 ms per call (X, y: ~0.4 ms), a
    fixed cost of every small fit and prediction."""
    if (type(X) is not np.ndarray or X.dtype != np.float64 or X.ndim != 2 or X.size == 0
            or (kwargs and set(kwargs) != {"y_numeric"})):
        return None
    if y is not None and (type(y) is not np.ndarray or y.ndim != 1
                          or y.shape[0] != X.shape[0] or y.dtype.kind not in "biuf"
                          or (y.dtype.kind == "f" and not _finite(y))):
        return None
    if not _finite(X):
        return None
    names = hasattr(estimator, "feature_names_in_")
    if reset:
        if names:
            del estimator.feature_names_in_
        estimator.n_features_in_ = X.shape[1]
    elif names or getattr(estimator, "n_features_in_", X.shape[1]) != X.shape[1]:
        return None              # validate_data warns (names) or raises (n_features)
    return X, y


def _finite(a: np.ndarray) -> bool:
    """No NaN or inf in a (two reductions, no temporary array, no overflow warning)."""
    return math.isfinite(a.max()) and math.isfinite(a.min())


def validated_X(estimator, X):
    """X at prediction time: fitted check, then the same validation as in fit. (An
    estimator's own ``__sklearn_is_fitted__`` answers first: scikit-learn's check_is_fitted
    reads its tags, ~15 us, and raises when it says False.)"""
    fitted = getattr(estimator, "__sklearn_is_fitted__", None)
    if fitted is None or not fitted():
        check_is_fitted(estimator)
    return edge_data(estimator, X, reset=False)


#: class -> (its __init__, the sorted names of its parameters): scikit-learn's
#: _get_param_names reads the signature of __init__ on every get_params (~50 us with 20
#: parameters; clone calls get_params twice, cross-validation clones once per fold)
_PARAM_NAMES: dict[type, tuple] = {}


class SmallCallsMixin:
    """scikit-learn's per-call costs of a classifier cut where they are fixed: the
    parameter names (for get_params, clone) read once per class, and ``score`` on plain
    integer labels as the accuracy itself. Placed before ``ClassifierMixin`` and
    ``BaseEstimator``; everything else (and every other input) is theirs."""

    @classmethod
    def _get_param_names(cls) -> list[str]:
        # (scikit-learn's classmethod, memoized; recomputed if __init__ was replaced)
        init = cls.__init__
        known = _PARAM_NAMES.get(cls)
        if known is None or known[0] is not init:
            known = _PARAM_NAMES[cls] = (init, tuple(super()._get_param_names()))
        return list(known[1])

    def score(self, X: ArrayLike, y: ArrayLike, sample_weight: ArrayLike | None = None
              ) -> float:
        """Mean accuracy of ``predict(X)`` against y: (1/n) sum_i [predict(x_i) == y_i]
        (weighted: sum_i s_i [...] / sum_i s_i), as ``ClassifierMixin.score``.

        For y a 1-D ndarray of integers (or booleans) of n entries, no weights, and
        integer predictions, the targets are "binary" or "multiclass" of one kind, and
        scikit-learn's accuracy_score (whose checks of the targets' types cost ~0.35 ms a
        call, a fixed cost of every fold of a cross-validation) is that mean itself;
        it computes every other case, with its checks and messages."""
        from sklearn.metrics import accuracy_score
        pred = self.predict(X)
        if (sample_weight is None and type(y) is np.ndarray and y.ndim == 1 and y.size
                and y.dtype.kind in "iub" and type(pred) is np.ndarray
                and pred.shape == y.shape and pred.dtype.kind in "iub"):
            return int(np.count_nonzero(pred == y)) / y.size
        return accuracy_score(y, pred, sample_weight=sample_weight)


class LinearDecisionMixin:
    """decision_function and predict of a fitted linear model (coef_, intercept_, classes_)."""

    def _keeps_sparse(self) -> bool:
        return True

    def _values(self, X) -> tuple[np.ndarray, np.ndarray]:
        """(F, E): f_k(x) = <w_k, x> + b_k, (n, n_problems), and the rounding bound of each
        value (:func:`convexlearn.estimators._multiclass.rounding_bound`)."""
        X = validated_X(self, X)
        F = X @ self.coef_.T + self.intercept_
        E = rounding_bound(abs(X) @ np.abs(self.coef_).T, np.abs(self.intercept_),
                           self.coef_.shape[1])
        return np.asarray(F), np.asarray(E)

    def decision_function(self, X: ArrayLike) -> np.ndarray:
        """f(x) = <w, x> + b: shape (n,) for two classes, else (n, n_classes)."""
        F, _ = self._values(X)
        return F.ravel() if self.classes_.size == 2 else F

    def predict(self, X: ArrayLike) -> np.ndarray:
        """classes_[1] where f(x) >= 0 (binary), else the class of the largest f_k(x);
        values within their rounding bound are equal (ties to the first class), so a
        prediction does not depend on the batch it is computed in."""
        F, E = self._values(X)
        if self.classes_.size == 2:
            return np.where(F[:, 0] >= -E[:, 0], self.classes_[1], self.classes_[0])
        return self.classes_[argmax_ties_low(F, E)]
