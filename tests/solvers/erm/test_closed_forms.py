"""Closed forms: pseudo-inverse least squares, ridge, classification by regression, LDA,
polynomial regression — against ERM, numpy/scipy and scikit-learn."""

import numpy as np
import pytest
from sklearn.discriminant_analysis import LinearDiscriminantAnalysis
from sklearn.linear_model import LinearRegression
from sklearn.preprocessing import PolynomialFeatures

import convexlearn as cl
from convexlearn.solvers.erm import closed_forms as cf
from convexlearn.errors import DataError, ParameterError
from helpers import binary_dataset


def test_least_squares_rank_deficient_is_the_minimum_norm_solution():
    rng = np.random.default_rng(0)
    B = rng.normal(size=(30, 3))
    X = np.column_stack([B, B @ [1.0, -2.0, 0.5], B[:, 0]])   # rank 3 of 5 columns
    y = rng.normal(size=30)
    m = cf.least_squares(X, y, intercept=False)
    assert m.details["rank"] == 3 and m.details["rank_deficient"]
    # w = X^+ y: normal equations hold and w lies in the row space (minimum norm).
    np.testing.assert_allclose(X.T @ (X @ m.w - y), 0, atol=1e-10)
    P_row = np.linalg.pinv(X) @ X
    np.testing.assert_allclose(P_row @ m.w, m.w, atol=1e-12)
    # Any other minimizer, w + null-space vector, is longer.
    null = np.eye(5) - P_row
    other = m.w + null @ rng.normal(size=5)
    assert np.linalg.norm(X @ other - y) == pytest.approx(np.linalg.norm(X @ m.w - y))
    assert np.linalg.norm(other) > np.linalg.norm(m.w)
    # ERM (squared, none) reaches the same optimal value through every applicable method.
    erm = cl.ERM(X, y, loss="squared", penalty="none", intercept=False)
    cf_sol, exact = erm.solve("closed-form"), erm.solve("exact")
    assert cf_sol.objective == pytest.approx(exact.objective, rel=1e-8)
    assert cf_sol.report.passed


def test_least_squares_with_intercept_matches_lstsq():
    X, _ = binary_dataset("wine", (0, 1))
    y = X[:, 0] * 2.0 - X[:, 3] + 0.1 * np.arange(len(X)) % 3
    m = cf.least_squares(X[:, 1:], y)
    A = np.column_stack([X[:, 1:], np.ones(len(X))])
    coef = np.linalg.lstsq(A, y, rcond=None)[0]
    np.testing.assert_allclose(np.append(m.w, m.b), coef, atol=1e-10)


@pytest.mark.parametrize("alpha", [0.1, 10.0])
def test_ridge_primal_and_push_through_forms_agree(alpha):
    rng = np.random.default_rng(1)
    X, y = rng.normal(size=(15, 40)), rng.normal(size=15)          # d > n
    m = cf.ridge(X, y, alpha)
    Xc, yc = X - X.mean(0), y - y.mean()
    w = np.linalg.solve(Xc.T @ Xc + alpha * np.eye(40), Xc.T @ yc)
    np.testing.assert_allclose(m.w, w, atol=1e-10)
    with pytest.raises(ParameterError, match="alpha"):
        cf.ridge(X, y, -1.0)


def test_classification_by_regression_thresholds_at_one_half():
    X, y = binary_dataset("breast_cancer")
    m = cf.classify_by_regression(X, y)
    f = m.decision_function(X)
    np.testing.assert_array_equal(m.predict(X), np.where(f >= 0.5, 1, 0))
    # It is least squares on {0, 1} targets.
    ls = cf.least_squares(X, (y == 1).astype(float))
    np.testing.assert_allclose(m.w, ls.w)
    assert np.mean(m.predict(X) == y) > 0.9


def test_lda_matches_scikit_learn():
    X, y = binary_dataset("wine", (0, 1), standardized=False)
    sk = LinearDiscriminantAnalysis(solver="lsqr").fit(X, y)
    mle = cf.lda(X, y, pooled="mle")      # scikit-learn's covariance divides by N
    np.testing.assert_allclose(mle.w, sk.coef_.ravel(), rtol=1e-6)
    assert mle.b == pytest.approx(sk.intercept_[0], rel=1e-6)
    np.testing.assert_array_equal(mle.predict(X), sk.predict(X))
    # The unbiased pooled covariance (N - 2) gives the same direction, (N-2)/N times as long.
    unb = cf.lda(X, y)
    n = len(y)
    np.testing.assert_allclose(unb.w, mle.w * (n - 2) / n, rtol=1e-10)
    cos = unb.w @ sk.coef_.ravel() / np.linalg.norm(unb.w) / np.linalg.norm(sk.coef_)
    assert cos == pytest.approx(1.0, abs=1e-12)


def test_lda_singular_covariance_is_an_error():
    X = np.array([[0.0, 1.0], [1.0, 1.0], [2.0, 1.0], [3.0, 1.0]])
    with pytest.raises(DataError, match="singular"):
        cf.lda(X, [0, 0, 1, 1])


def test_polynomial_regression_matches_plain_monomials():
    rng = np.random.default_rng(2)
    X = rng.uniform(-1, 1, size=(40, 2))
    y = 1 + X[:, 0] - 2 * X[:, 0] * X[:, 1] + X[:, 1] ** 3 + 0.01 * rng.normal(size=40)
    m = cf.polynomial_regression(X, y, degree=3)
    sk = LinearRegression().fit(PolynomialFeatures(3).fit_transform(X), y)
    Xt = rng.uniform(-1, 1, size=(10, 2))
    np.testing.assert_allclose(m.predict(Xt), sk.predict(PolynomialFeatures(3).fit_transform(Xt)),
                               atol=1e-8)
    with pytest.raises(DataError, match="features"):
        m.decision_function(np.ones((2, 3)))
