"""SVMRegressor and OneClassSVM against scikit-learn's SVR and OneClassSVM: the same
fitted attributes (support_, dual_coef_ = alpha - alpha*, intercept_, offset_ = rho),
decision values to 1e-6 relative, and the certified solution kept."""

import numpy as np
import pytest
from sklearn import svm as sk

from convexlearn.estimators import OneClassSVM, SVMRegressor


def _data(n=100, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, 3))
    return X, np.sin(2 * X[:, 0]) + 0.5 * X[:, 1] + 0.1 * rng.normal(size=n)


@pytest.mark.parametrize("params", [{}, {"kernel": "linear", "C": 0.5},
                                    {"kernel": "rbf", "gamma": 0.3, "C": 1.0, "epsilon": 0.2}])
def test_svm_regressor_has_svr_attributes(params):
    X, y = _data()
    mine = SVMRegressor(**params).fit(X, y)
    ref = sk.SVR(tol=1e-12, **params).fit(X, y)
    assert mine.solution_.status == "optimal" and mine.kkt_.passed
    np.testing.assert_array_equal(mine.support_, ref.support_)
    np.testing.assert_array_equal(mine.n_support_, ref.n_support_)
    # (LIBSVM's kernel cache is float32: its coefficients move by ~1e-6 C, while the
    # decision values below agree to 1e-6 relative; ours are certified, kkt_ above)
    np.testing.assert_allclose(mine.dual_coef_, ref.dual_coef_, atol=1e-5 * mine.C)
    np.testing.assert_allclose(mine.support_vectors_, ref.support_vectors_)
    X_new = _data(seed=1)[0]
    f = ref.predict(X_new)
    assert np.max(np.abs(mine.predict(X_new) - f)) <= 1e-6 * np.max(np.abs(f))
    assert abs(mine.intercept_[0] - ref.intercept_[0]) <= 1e-6 * np.max(np.abs(f))
    if params.get("kernel") == "linear":
        np.testing.assert_allclose(mine.coef_, ref.coef_, atol=1e-6)
    else:
        with pytest.raises(AttributeError):
            mine.coef_
    assert mine.score(X, y) == pytest.approx(ref.score(X, y), rel=1e-6)


def test_svm_regressor_precomputed():
    X, y = _data(n=60)
    K = X @ X.T
    mine = SVMRegressor(kernel="precomputed").fit(K, y)
    ref = sk.SVR(kernel="precomputed", tol=1e-12).fit(K, y)
    f = ref.predict(K)
    assert np.max(np.abs(mine.predict(K) - f)) <= 1e-6 * np.max(np.abs(f))


@pytest.mark.parametrize("params", [{}, {"nu": 0.1, "gamma": 0.5}, {"nu": 0.55}])
def test_one_class_has_sklearn_attributes(params):
    X = _data()[0]
    mine = OneClassSVM(**params).fit(X)
    ref = sk.OneClassSVM(tol=1e-12, **params).fit(X)
    assert mine.kkt_.passed
    np.testing.assert_array_equal(mine.support_, ref.support_)
    np.testing.assert_allclose(mine.dual_coef_, ref.dual_coef_, atol=1e-6)
    scale = abs(ref.offset_[0])
    assert abs(mine.offset_[0] - ref.offset_[0]) <= 1e-6 * scale
    assert mine.intercept_[0] == -mine.offset_[0]
    X_new = _data(seed=2)[0]
    np.testing.assert_allclose(mine.decision_function(X_new), ref.decision_function(X_new),
                               rtol=0, atol=1e-6 * scale)
    np.testing.assert_allclose(mine.score_samples(X_new), ref.score_samples(X_new),
                               rtol=0, atol=1e-6 * scale)
    clear = np.abs(ref.decision_function(X_new)) > 1e-5 * scale
    np.testing.assert_array_equal(mine.predict(X_new)[clear], ref.predict(X_new)[clear])


def test_one_class_boundary_samples_predict_the_same_in_any_batch():
    X = _data()[0]
    est = OneClassSVM(nu=0.3).fit(X)
    free = est.solution_.report.free          # on the boundary: f = 0 up to round-off
    assert free.size
    whole = est.predict(X)
    for i in free:
        assert est.predict(X[i:i + 1])[0] == whole[i] == 1
        assert est.decision_function(X[i:i + 1])[0] == 0.0
