"""ERM equals scikit-learn's estimators under written-down conversions (module docstring
of convexlearn.erm), on data sets scikit-learn ships, to 1e-6.

* Lasso(alpha):       lam = 2 alpha,        F_ERM = 2 F_Lasso     (squared loss, l1)
* ElasticNet(alpha, l1_ratio): lam = 2 alpha (penalty elastic_net, same l1_ratio)
* Ridge(alpha):       lam = 2 alpha / n,    F_ERM = F_Ridge / n   (squared loss, l2)
* LogisticRegression(C): lam = 1 / (n C),  F_ERM = F_LR / (n C)   (logistic loss, l2)
"""

import warnings

import numpy as np
import pytest
from sklearn import datasets, linear_model

import convexlearn as cl
from helpers import binary_dataset, standardize

REL = 1e-6


@pytest.fixture(scope="module")
def diabetes():
    X, y = datasets.load_diabetes(return_X_y=True)
    return standardize(X), y


def _rel(a, b):
    return abs(a - b) / max(1.0, abs(a), abs(b))


@pytest.mark.parametrize("alpha", [0.1, 1.0, 5.0])
def test_lasso(diabetes, alpha):
    X, y = diabetes
    sk = linear_model.Lasso(alpha=alpha, tol=1e-14, max_iter=200000).fit(X, y)
    erm = cl.ERM(X, y, loss="squared", penalty="l1", lam=2 * alpha)
    sol = erm.solve("fista", tol=1e-10)
    exact = erm.solve("exact")
    F_sk = erm.objective(sk.coef_, sk.intercept_)
    n = len(y)
    lasso = (np.sum((y - X @ sk.coef_ - sk.intercept_) ** 2) / (2 * n)
             + alpha * np.abs(sk.coef_).sum())
    assert F_sk == pytest.approx(2 * lasso, rel=1e-12)          # the conversion itself
    assert _rel(F_sk, exact.objective) <= REL and _rel(F_sk, sol.objective) <= REL
    np.testing.assert_allclose(sol.w, sk.coef_, atol=1e-6 * np.abs(sk.coef_).max())
    assert sol.b == pytest.approx(sk.intercept_, rel=1e-6)
    np.testing.assert_array_equal(np.abs(exact.w) > 1e-6, sk.coef_ != 0)   # same support


def test_elastic_net(diabetes):
    X, y = diabetes
    alpha, r = 0.5, 0.3
    sk = linear_model.ElasticNet(alpha=alpha, l1_ratio=r, tol=1e-14, max_iter=200000).fit(X, y)
    erm = cl.ERM(X, y, loss="squared", penalty="elastic_net", lam=2 * alpha, l1_ratio=r)
    sol = erm.solve("fista", tol=1e-10)
    assert _rel(erm.objective(sk.coef_, sk.intercept_), sol.objective) <= REL
    np.testing.assert_allclose(sol.w, sk.coef_, atol=1e-6 * np.abs(sk.coef_).max())


@pytest.mark.parametrize("alpha", [0.01, 1.0, 100.0])
def test_ridge(diabetes, alpha):
    X, y = diabetes
    n = len(y)
    sk = linear_model.Ridge(alpha=alpha, solver="cholesky").fit(X, y)
    erm = cl.ERM(X, y, loss="squared", penalty="l2", lam=2 * alpha / n)
    for method in ("closed-form", "newton", "exact"):
        sol = erm.solve(method)
        np.testing.assert_allclose(sol.w, sk.coef_, rtol=1e-6, atol=1e-6,
                                   err_msg=f"Ridge({alpha}) vs {method}")
        assert sol.b == pytest.approx(sk.intercept_, rel=1e-6)
        F_ridge = np.sum((y - X @ sk.coef_ - sk.intercept_) ** 2) + alpha * sk.coef_ @ sk.coef_
        assert sol.objective == pytest.approx(F_ridge / n, rel=REL)


@pytest.mark.parametrize("name,classes,C", [("breast_cancer", (0, 1), 0.1),
                                            ("breast_cancer", (0, 1), 10.0),
                                            ("wine", (0, 1), 1.0), ("digits", (3, 8), 0.05)])
def test_logistic_regression(name, classes, C):
    X, y = binary_dataset(name, classes)
    n = len(y)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")      # deprecation notes of newer scikit-learn
        sk = linear_model.LogisticRegression(C=C, tol=1e-12, max_iter=100000,
                                             solver="lbfgs").fit(X, y)
    erm = cl.ERM(X, y, loss="logistic", penalty="l2", lam=1.0 / (n * C))
    sol = erm.solve("newton", tol=1e-10)
    assert sol.ok, sol.report.summary()
    F_sk = erm.objective(sk.coef_.ravel(), sk.intercept_[0])
    s = np.where(y == classes[1], 1.0, -1.0)
    F_lr = C * np.sum(np.logaddexp(0, -s * (X @ sk.coef_.ravel() + sk.intercept_[0]))) + \
        0.5 * sk.coef_.ravel() @ sk.coef_.ravel()
    assert F_sk == pytest.approx(F_lr / (n * C), rel=1e-12)      # the conversion itself
    assert _rel(F_sk, sol.objective) <= REL
    assert sol.objective <= F_sk + 1e-12                         # Newton is at least as good
    # lbfgs stops at ~1e-6 in w; scikit-learn's Newton solver meets ours to round-off.
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        skn = linear_model.LogisticRegression(C=C, tol=1e-12, max_iter=1000,
                                              solver="newton-cholesky").fit(X, y)
    np.testing.assert_allclose(sol.w, skn.coef_.ravel(), atol=1e-8 * np.abs(sol.w).max())
    assert sol.b == pytest.approx(skn.intercept_[0], abs=1e-8)
