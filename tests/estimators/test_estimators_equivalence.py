"""Estimators against outside oracles, and the sample-weight equivalences.

Conventions (convexlearn.erm):

* ``KernelSVMClassifier(C, kernel, gamma)`` and ``LinearSVMClassifier(C)`` solve the problem
  of scikit-learn's ``SVC(C, kernel, gamma)`` (LIBSVM, C-form, unpenalized intercept);
  binary ``dual_coef_`` and ``intercept_`` have the same meaning in both.
* ``ERMClassifier("logistic", "l2", lam)`` is ``LogisticRegression(C)`` with lam = 1/(n C).
* Least squares on targets +-1 (``ERMRegressor("squared", "none")``) gives the LDA direction
  Sigma_W^{-1} (mu_+ - mu_-); with balanced classes its intercept puts the boundary at the
  midpoint of the class means, which is ``LinearDiscriminantAnalysis(priors=[.5, .5])``.
"""

import numpy as np
import pytest

pytest.importorskip("sklearn")

from hypothesis import given, strategies as st  # noqa: E402
from sklearn.discriminant_analysis import LinearDiscriminantAnalysis  # noqa: E402
from sklearn.linear_model import LogisticRegression  # noqa: E402
from sklearn.svm import SVC  # noqa: E402

from convexlearn import NotApplicableError  # noqa: E402
from convexlearn.estimators import (ERMClassifier, ERMRegressor,  # noqa: E402
                                    KernelSVMClassifier, LinearSVMClassifier)
from helpers import binary_dataset  # noqa: E402

SVC_CASES = [("breast_cancer", (0, 1), "rbf", 1.0), ("iris", (1, 2), "linear", 10.0),
             ("wine", (0, 2), "rbf", 0.5), ("digits", (3, 8), "rbf", 2.0),
             ("digits", (1, 7), "linear", 0.1)]


@pytest.mark.parametrize("name, classes, kernel, C", SVC_CASES)
def test_kernel_svm_matches_svc(name, classes, kernel, C):
    X, y = binary_dataset(name, classes)
    gamma = 1.0 / X.shape[1]
    ours = KernelSVMClassifier(C=C, kernel=kernel, gamma=gamma).fit(X, y)
    svc = SVC(C=C, kernel=kernel, gamma=gamma, tol=1e-8).fit(X, y)
    np.testing.assert_array_equal(ours.predict(X), svc.predict(X))
    scale = max(1.0, np.abs(svc.decision_function(X)).max())
    np.testing.assert_allclose(ours.decision_function(X), svc.decision_function(X),
                               atol=1e-5 * scale)
    np.testing.assert_allclose(ours.intercept_, svc.intercept_, atol=1e-5 * scale)
    # same support in SVC's order (grouped by class), same n_support_ and the same signed
    # coefficients y_i alpha_i (LIBSVM stops at tol 1e-8)
    np.testing.assert_array_equal(ours.support_, svc.support_)
    np.testing.assert_array_equal(ours.n_support_, svc.n_support_)
    np.testing.assert_allclose(ours.dual_coef_, svc.dual_coef_, atol=1e-5 * C)


@pytest.mark.parametrize("name, classes", [("breast_cancer", (0, 1)), ("wine", (1, 2))])
def test_linear_svm_matches_svc_linear(name, classes):
    X, y = binary_dataset(name, classes)
    ours = LinearSVMClassifier(C=1.0).fit(X, y)
    svc = SVC(C=1.0, kernel="linear", tol=1e-8).fit(X, y)
    np.testing.assert_array_equal(ours.predict(X), svc.predict(X))
    np.testing.assert_allclose(ours.coef_, svc.coef_, atol=1e-5 * max(1, np.abs(svc.coef_).max()))
    np.testing.assert_allclose(ours.intercept_, svc.intercept_, atol=1e-5)


@pytest.mark.parametrize("name, classes, C", [("breast_cancer", (0, 1), 0.1),
                                              ("wine", (0, 1), 1.0), ("digits", (4, 9), 0.05)])
def test_logistic_erm_matches_logistic_regression(name, classes, C):
    X, y = binary_dataset(name, classes)
    ours = ERMClassifier("logistic", "l2", lam=1.0 / (len(y) * C)).fit(X, y)
    lr = LogisticRegression(C=C, tol=1e-10, max_iter=10_000).fit(X, y)
    np.testing.assert_array_equal(ours.predict(X), lr.predict(X))
    np.testing.assert_allclose(ours.coef_, lr.coef_, atol=1e-5 * max(1, np.abs(lr.coef_).max()))
    np.testing.assert_allclose(ours.intercept_, lr.intercept_, atol=1e-5)


@pytest.mark.parametrize("classes", [(0, 1), (0, 2), (1, 2)])
def test_least_squares_is_lda_on_balanced_classes(classes):
    X, y = binary_dataset("iris", classes, standardized=False)   # 50 samples per class
    signed = np.where(y == classes[1], 1.0, -1.0)
    reg = ERMRegressor("squared", "none", lam=0.0).fit(X, signed)
    lda = LinearDiscriminantAnalysis(solver="lsqr", priors=[0.5, 0.5]).fit(X, y)
    cosine = reg.coef_ @ lda.coef_[0] / (np.linalg.norm(reg.coef_) * np.linalg.norm(lda.coef_))
    assert cosine == pytest.approx(1.0, abs=1e-8)
    ours = np.where(reg.predict(X) >= 0, classes[1], classes[0])
    np.testing.assert_array_equal(ours, lda.predict(X))


# ------------------------------------------------------------------ sample weights
WEIGHT_CASES = [(KernelSVMClassifier, {"C": 1.0}, "wine", (0, 1, 2)),
                (KernelSVMClassifier, {"C": 5.0, "kernel": "poly", "degree": 2}, "iris", (1, 2)),
                (LinearSVMClassifier, {"C": 0.3}, "breast_cancer", (0, 1))]


def _assert_same_fit(a, b, X, context):
    np.testing.assert_allclose(a.decision_function(X), b.decision_function(X), rtol=1e-6,
                               atol=1e-6, err_msg=context)
    np.testing.assert_array_equal(a.predict(X), b.predict(X), err_msg=context)


@pytest.mark.parametrize("cls, params, name, classes", WEIGHT_CASES)
def test_zero_weight_is_removal_and_integer_weight_is_repetition(cls, params, name, classes):
    X, y = binary_dataset(name, classes)
    rng = np.random.default_rng(0)
    w = rng.integers(0, 4, size=len(y))
    weighted = cls(**params).fit(X, y, sample_weight=w)
    repeated = cls(**params).fit(np.repeat(X, w, axis=0), np.repeat(y, w))
    _assert_same_fit(weighted, repeated, X, "integer weights vs repeated samples")
    assert all(r.passed for r in np.atleast_1d(weighted.kkt_))
    # support_ indexes the training samples given to fit; no zero-weight sample is in it
    assert np.all(w[weighted.support_] > 0)
    keep = w > 0
    removed = cls(**params).fit(X[keep], y[keep], sample_weight=w[keep])
    _assert_same_fit(weighted, removed, X, "zero weights vs removed samples")


def test_uniform_weight_scales_C():
    X, y = binary_dataset("breast_cancer")
    a = KernelSVMClassifier(C=0.5).fit(X, y, sample_weight=np.full(len(y), 3.0))
    b = KernelSVMClassifier(C=1.5).fit(X, y)
    _assert_same_fit(a, b, X, "weights 3 vs C * 3")


def test_weighted_route_equals_core_when_weights_are_one_but_one():
    # weights (1, ..., 1, 2): the per-sample-cost dual (ours) against the duplicated sample
    # solved by the core SVM; both polished, both KKT-certified.
    X, y = binary_dataset("wine", (0, 1))
    w = np.ones(len(y))
    w[0] = 2.0
    a = KernelSVMClassifier(C=1.0).fit(X, y, sample_weight=w)
    b = KernelSVMClassifier(C=1.0).fit(np.vstack([X, X[:1]]), np.append(y, y[0]))
    _assert_same_fit(a, b, X, "weight 2 vs duplicate")
    assert a.solution_.provenance["formulation"].endswith("C_i = C s_i")


@pytest.mark.parametrize("cls, method, classes", [(KernelSVMClassifier, "smo", (0, 1, 2)),
                                                  (LinearSVMClassifier, "dcd", (0, 1))])
def test_iterative_methods_agree_with_exact(cls, method, classes):
    X, y = binary_dataset("wine", classes)
    exact = cls(C=1.0).fit(X, y)
    iterative = cls(C=1.0, method=method, tol=1e-6, max_iter=100_000,
                    random_state=0).fit(X, y)
    np.testing.assert_array_equal(iterative.predict(X), exact.predict(X))
    np.testing.assert_allclose(iterative.decision_function(X), exact.decision_function(X),
                               atol=1e-5, err_msg=f"{method} vs exact")   # measured 6e-7
    assert np.all(iterative.n_iter_ >= 1)
    assert all(r.passed for r in np.atleast_1d(iterative.kkt_))
    w = np.arange(len(y)) % 3 + 1.0
    with pytest.raises(NotApplicableError, match="per-sample costs"):
        cls(method=method).fit(X, y, sample_weight=w)


@given(st.permutations(list(range(30))))
def test_sample_order_does_not_change_the_fit(perm):
    X, y = binary_dataset("iris", (1, 2))
    X, y = X[::3][:30], y[::3][:30]
    perm = np.asarray(perm)
    a = KernelSVMClassifier(C=1.0).fit(X, y)
    b = KernelSVMClassifier(C=1.0).fit(X[perm], y[perm])
    np.testing.assert_allclose(a.decision_function(X), b.decision_function(X), atol=1e-7)
    np.testing.assert_array_equal(np.sort(perm[b.support_]), a.support_)
