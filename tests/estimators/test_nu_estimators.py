"""NuSVMClassifier and NuSVMRegressor: scikit-learn's checks, NuSVC's / NuSVR's fitted
attributes and predictions, one-vs-one multiclass, and the costs they refuse."""

import inspect

import numpy as np
import pytest
from sklearn.datasets import load_iris
from sklearn.svm import NuSVC, NuSVR
from sklearn.utils.estimator_checks import parametrize_with_checks

from convexlearn import estimators as E
from convexlearn.errors import NotApplicableError, ParameterError

ESTIMATORS = [E.NuSVMClassifier(), E.NuSVMRegressor()]
_STRICT = ({"xfail_strict": True}
           if "xfail_strict" in inspect.signature(parametrize_with_checks).parameters else {})


@parametrize_with_checks(ESTIMATORS, expected_failed_checks=E.expected_failed_checks, **_STRICT)
def test_sklearn_compatible(estimator, check):
    check(estimator)


def test_multiclass_one_vs_one_matches_nusvc():
    # (nu = 0.5: every pair has free multipliers of both classes, so r is unique; see
    # docs/conventions.md for the pairs where it is not)
    X, y = load_iris(return_X_y=True)
    ours = E.NuSVMClassifier(nu=0.5).fit(X, y)
    ref = NuSVC(nu=0.5, tol=1e-12).fit(X, y)
    np.testing.assert_array_equal(ours.support_, ref.support_)
    np.testing.assert_array_equal(ours.n_support_, ref.n_support_)
    scale = np.max(np.abs(ref.dual_coef_))
    np.testing.assert_allclose(ours.dual_coef_, ref.dual_coef_, atol=1e-5 * scale)
    np.testing.assert_allclose(ours.intercept_, ref.intercept_, atol=1e-6)
    f, g = ours.decision_function(X), ref.decision_function(X)
    assert np.max(np.abs(f - g)) <= 1e-6 * np.max(np.abs(g))
    np.testing.assert_array_equal(ours.predict(X), ref.predict(X))
    assert all(sol.status == "optimal" for sol in ours.solution_)


def test_binary_and_the_regressor_match_their_anchors():
    rng = np.random.default_rng(0)
    X = rng.normal(size=(120, 3))
    y = np.where(X[:, 0] - X[:, 1] + 0.5 * rng.normal(size=120) > 0, "b", "a")
    ours = E.NuSVMClassifier(nu=0.6, gamma=0.5).fit(X, y)
    ref = NuSVC(nu=0.6, gamma=0.5, tol=1e-12).fit(X, y)
    g = ref.decision_function(X)
    assert np.max(np.abs(ours.decision_function(X) - g)) <= 1e-6 * np.max(np.abs(g))
    assert ours.dual_coef_.shape == ref.dual_coef_.shape and ours.kkt_.passed
    z = X[:, 0] ** 2 + 0.1 * rng.normal(size=120)
    reg = E.NuSVMRegressor(nu=0.3, C=2.0).fit(X, z)
    anchor = NuSVR(nu=0.3, C=2.0, tol=1e-12).fit(X, z)
    p = anchor.predict(X)
    assert np.max(np.abs(reg.predict(X) - p)) <= 1e-6 * np.max(np.abs(p))
    np.testing.assert_array_equal(reg.support_, anchor.support_)
    assert abs(reg.intercept_[0] - anchor.intercept_[0]) <= 1e-6 * abs(anchor.intercept_[0])
    assert reg.epsilon_ > 0 and reg.kkt_.passed


def test_smo_method_and_refused_costs_and_parameters():
    X, y = load_iris(return_X_y=True)
    fast = E.NuSVMClassifier(nu=0.5, method="smo", tol=1e-3).fit(X, y)
    assert np.mean(fast.predict(X) == NuSVC(nu=0.5).fit(X, y).predict(X)) >= 0.99
    with pytest.raises(NotApplicableError, match="non-uniform"):
        E.NuSVMClassifier().fit(X, y, sample_weight=np.r_[np.ones(100), 2 * np.ones(50)])
    with pytest.raises(NotApplicableError, match="non-uniform"):
        E.NuSVMClassifier(class_weight={0: 2.0}).fit(X, y)
    with pytest.raises(ParameterError, match=r"\(0, 1\]"):
        E.NuSVMClassifier(nu=1.5).fit(X, y)
    with pytest.raises(ParameterError, match="infeasible"):
        E.NuSVMClassifier(nu=0.9).fit(X[:60], y[:60])       # 50 vs 10 samples: bound 1/3
    with pytest.raises(NotApplicableError):
        E.NuSVMRegressor().fit(X, X[:, 0], sample_weight=np.arange(150.0))
