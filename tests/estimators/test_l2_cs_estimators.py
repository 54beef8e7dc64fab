"""LinearSVMClassifier(loss="squared_hinge") and CrammerSingerClassifier: scikit-learn's
checks and the anchors (LinearSVC)."""

import inspect

import numpy as np
import pytest

pytest.importorskip("sklearn")

from sklearn.utils.estimator_checks import parametrize_with_checks  # noqa: E402

from convexlearn import estimators as E  # noqa: E402

_STRICT = ({"xfail_strict": True}
           if "xfail_strict" in inspect.signature(parametrize_with_checks).parameters else {})


@parametrize_with_checks([E.LinearSVMClassifier(loss="squared_hinge"),
                          E.CrammerSingerClassifier()],
                         expected_failed_checks=E.expected_failed_checks, **_STRICT)
def test_sklearn_compatible(estimator, check):
    check(estimator)


def test_hinge_stays_the_default():
    assert E.LinearSVMClassifier().get_params()["loss"] == "hinge"


def test_squared_hinge_classifier_matches_linearsvc_without_intercept():
    from sklearn.datasets import load_iris
    from sklearn.svm import LinearSVC
    X, y = load_iris(return_X_y=True)
    ours = E.LinearSVMClassifier(loss="squared_hinge", fit_intercept=False, C=0.5).fit(X, y)
    ref = LinearSVC(C=0.5, fit_intercept=False, tol=1e-12, max_iter=1_000_000).fit(X, y)
    F, G = ours.decision_function(X), ref.decision_function(X)
    assert np.max(np.abs(F - G)) <= 1e-6 * np.max(np.abs(G))
    assert ours.solution_[0].report.gap_tol == 1e-9


def test_squared_hinge_classifier_rejects_other_methods_and_losses():
    from convexlearn.errors import ParameterError
    X = np.random.default_rng(0).standard_normal((20, 2))
    y = np.arange(20) % 2
    with pytest.raises(ParameterError, match="'hinge', 'squared_hinge'"):
        E.LinearSVMClassifier(loss="log").fit(X, y)
    with pytest.raises(ParameterError, match="method"):
        E.LinearSVMClassifier(loss="squared_hinge", method="pegasos").fit(X, y)


def test_crammer_singer_classifier_matches_linearsvc():
    from sklearn.datasets import load_iris
    from sklearn.svm import LinearSVC
    X, y = load_iris(return_X_y=True)
    ours = E.CrammerSingerClassifier(C=1.0).fit(X, y)
    ref = LinearSVC(C=1.0, multi_class="crammer_singer", fit_intercept=False, tol=1e-9,
                    max_iter=1_000_000).fit(X, y)
    F, G = ours.decision_function(X), ref.decision_function(X)
    assert F.shape == (150, 3)
    assert np.max(np.abs(F - G)) <= 1e-6 * np.max(np.abs(G))
    assert np.array_equal(ours.predict(X), ref.predict(X))
    assert ours.certificate_.passed
