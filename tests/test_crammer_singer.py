"""The Crammer-Singer multiclass SVM: cl.CrammerSingerSVM."""

import numpy as np
import pytest

import convexlearn as cl
from convexlearn.errors import DataError, ParameterError


def _rel(a, b):
    return float(np.max(np.abs(a - b)) / max(np.max(np.abs(b)), 1e-300))


def _iris(n=60, seed=0):
    from sklearn.datasets import load_iris
    X, y = load_iris(return_X_y=True)
    idx = np.random.default_rng(seed).choice(150, n, replace=False)
    return X[idx], y[idx]


def test_exact_route_matches_the_cvxpy_primal_and_dual():
    X, y = _iris()
    p = cl.CrammerSingerSVM(X, y, C=0.5)
    s = p.solve()
    assert s.status == "optimal" and s.provenance["route"] == "exact-cs"
    assert s.report.passed and s.report.relative_gap <= 1e-9
    F = p.decision_function(s)
    assert F.shape == (60, 3)
    for method in ("exact-dual", "exact-primal"):
        t = p.solve(method)
        assert _rel(p.decision_function(t), F) <= 1e-6
    assert abs(p.primal().solve() - s.objective) <= 1e-6 * s.objective
    assert abs(p.dual().solve() - s.objective) <= 1e-6 * s.objective


def test_labels_and_predict():
    X, y = _iris()
    labels = np.array(["setosa", "versicolor", "virginica"])[y]
    p = cl.CrammerSingerSVM(X, labels, C=0.5)
    s = p.solve()
    assert list(p.classes) == ["setosa", "versicolor", "virginica"]
    pred = p.predict(s, X[:5])
    assert pred.shape == (5,) and set(pred) <= set(p.classes)
    assert np.mean(p.predict(s) == labels) > 0.9


@pytest.mark.parametrize("dataset", ["iris", "digits"])
def test_matches_linearsvc_crammer_singer(dataset):
    """LinearSVC(multi_class="crammer_singer", fit_intercept=False) is the same problem."""
    from sklearn.datasets import load_digits, load_iris
    from sklearn.svm import LinearSVC
    if dataset == "iris":
        X, y = load_iris(return_X_y=True)
    else:
        X, y = load_digits(return_X_y=True)
        X, y = X[:400] / 16.0, y[:400]
    p = cl.CrammerSingerSVM(X, y, C=1.0)
    s = p.solve()
    assert s.status == "optimal"
    m = LinearSVC(C=1.0, multi_class="crammer_singer", fit_intercept=False, tol=1e-9,
                  max_iter=1_000_000).fit(X, y)
    assert _rel(m.decision_function(X), p.decision_function(s)) <= 1e-6


def test_certificate_fails_on_a_perturbed_answer():
    X, y = _iris()
    p = cl.CrammerSingerSVM(X, y, C=0.5)
    s = p.solve()
    assert p.certificate(s).passed
    s.w = s.w * (1 + 1e-4)
    assert not p.certificate(s).passed
    s.alpha = None                   # the primal alone: multipliers from its active classes
    assert not p.certificate(s).passed


def test_sample_weights_are_copies():
    X, y = _iris(n=45, seed=2)
    w = np.arange(45) % 3
    rep = np.repeat(np.arange(45), w)
    a = cl.CrammerSingerSVM(X, y, C=0.5, sample_weight=w)
    b = cl.CrammerSingerSVM(X[rep], y[rep], C=0.5)
    sa, sb = a.solve(), b.solve()
    assert sa.status == sb.status == "optimal"
    assert _rel(a.decision_function(sa), b.decision_function(sb, X)) <= 1e-7


def test_bad_input():
    X, y = _iris()
    with pytest.raises(ParameterError, match="C must be > 0"):
        cl.CrammerSingerSVM(X, y, C=-1.0)
    with pytest.raises(ParameterError, match="finite C"):
        cl.CrammerSingerSVM(X, y, C=None)
    with pytest.raises(DataError, match="one class"):
        cl.CrammerSingerSVM(X, np.zeros(60))
    with pytest.raises(DataError, match="60 labels"):
        cl.CrammerSingerSVM(X, y[:10])
    with pytest.raises(ParameterError, match="unknown method"):
        cl.CrammerSingerSVM(X, y).solve("smo")
    p = cl.CrammerSingerSVM(X, y)
    with pytest.raises(ParameterError, match="features"):
        p.decision_function(p.solve(), X[:, :2])
