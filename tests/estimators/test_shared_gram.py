"""The Gram matrix a multiclass fit forms once and shares among its binary problems.

Each problem's block must be the kernel of its own samples (whatever their order), the
problem must refuse a block of other samples, and a fit with the shared matrix must be
the fit without it (the same problems, certified at the same tolerance).
"""

import numpy as np
import pytest

pytest.importorskip("sklearn")

from sklearn.datasets import load_iris  # noqa: E402
from sklearn.svm import SVC  # noqa: E402

import convexlearn as cl  # noqa: E402
from convexlearn import ParameterError  # noqa: E402
from convexlearn.estimators import KernelSVMClassifier  # noqa: E402
from convexlearn.estimators import _gram  # noqa: E402
from convexlearn.kernels import make_kernel  # noqa: E402

SPEC = {"kernel": "rbf", "degree": 3, "coef0": 0.0}


@pytest.mark.parametrize("scheme", ["ovo", "ovr"])
def test_blocks_are_the_kernel_of_their_rows(scheme):
    rng = np.random.default_rng(0)
    X, codes = rng.normal(size=(70, 3)), rng.integers(0, 4, 70)
    kernel = make_kernel("rbf", X, gamma=0.7)
    gram = _gram.shared_gram(SPEC, 0.7, X, codes, scheme)
    pair = np.concatenate([np.flatnonzero(codes == 1), np.flatnonzero(codes == 3)])
    for rows in (pair, np.flatnonzero(codes == 2), np.arange(70), rng.permutation(70)[:33],
                 np.sort(rng.permutation(70)[:33]), pair[::2]):
        np.testing.assert_allclose(gram.block(rows), kernel(X[rows], X[rows]),
                                   rtol=0, atol=1e-15)


def test_not_shared_where_it_does_not_apply():
    X, codes = np.random.default_rng(1).normal(size=(20, 2)), np.arange(20) % 3
    assert _gram.shared_gram(SPEC, 1.0, X, codes % 2, "ovo") is None      # one problem
    assert _gram.shared_gram({**SPEC, "kernel": "linear"}, None, X, codes, "ovo") is None
    assert _gram.shared_gram({**SPEC, "kernel": "sigmoid"}, 1.0, X, codes, "ovo") is None
    assert _gram.shared_gram(SPEC, 1.0, X, codes, "ovo") is not None


def test_problem_refuses_a_block_of_other_samples():
    rng = np.random.default_rng(2)
    X, y = rng.normal(size=(30, 3)), np.repeat([1.0, -1.0], 15)
    kernel = make_kernel("rbf", X, gamma=0.5)
    svm = cl.SVM(X, y, C=1.0, kernel="rbf", gamma=0.5)
    with pytest.raises(ParameterError, match="not this kernel's Gram matrix"):
        svm.share_gram(kernel(X[::-1]))
    with pytest.raises(ParameterError, match="shape"):
        svm.share_gram(kernel(X[:29]))
    sig = cl.SVM(X, y, C=1.0, kernel="sigmoid", gamma=0.1)
    with pytest.raises(ParameterError, match="PSD by construction"):
        sig.share_gram(np.eye(30))
    svm.share_gram(kernel(X))
    assert svm.solve().provenance["route"] == "exact-smo"


@pytest.mark.parametrize("multiclass, class_weight, kernel", [
    ("ovo", None, "rbf"), ("ovr", None, "rbf"), ("ovo", "balanced", "rbf"),
    ("ovo", None, "poly")])
def test_shared_gram_fit_is_the_fit_without_it(monkeypatch, multiclass, class_weight, kernel):
    X, y = load_iris(return_X_y=True)
    params = dict(C=10.0, gamma=0.5, multiclass=multiclass, class_weight=class_weight,
                  kernel=kernel, coef0=1.0)
    shared = KernelSVMClassifier(**params).fit(X, y)
    monkeypatch.setattr(_gram, "SHARED_GRAM_BYTES", 0)
    alone = KernelSVMClassifier(**params).fit(X, y)
    assert all(s.status == "optimal" for s in shared.solution_ + alone.solution_)
    np.testing.assert_array_equal(shared.support_, alone.support_)
    np.testing.assert_allclose(shared.dual_coef_, alone.dual_coef_, atol=1e-8 * 10.0)
    np.testing.assert_allclose(shared.intercept_, alone.intercept_, atol=1e-8)
    np.testing.assert_array_equal(shared.predict(X), alone.predict(X))
    if multiclass == "ovo" and class_weight is None and kernel == "rbf":
        # (the cubic kernel of 4 features has rank <= 35 < 100 samples a pair: its
        # multipliers are not unique, so SVC's need not be these)
        svc = SVC(C=10.0, gamma=0.5, tol=1e-8, kernel=kernel, coef0=1.0).fit(X, y)
        np.testing.assert_array_equal(shared.support_, svc.support_)
        np.testing.assert_allclose(shared.dual_coef_, svc.dual_coef_, atol=1e-5 * 10.0)


def test_platt_folds_read_the_shared_gram(monkeypatch):
    # the cross-validation folds pose subsets of each pair: blocks of the shared matrix
    X, y = load_iris(return_X_y=True)
    params = dict(C=1.0, gamma=0.5, probability=True, random_state=0)
    shared = KernelSVMClassifier(**params).fit(X, y)
    monkeypatch.setattr(_gram, "SHARED_GRAM_BYTES", 0)
    alone = KernelSVMClassifier(**params).fit(X, y)
    np.testing.assert_allclose(shared.probA_, alone.probA_, rtol=1e-6, atol=1e-8)
    np.testing.assert_allclose(shared.probB_, alone.probB_, rtol=1e-6, atol=1e-8)
    np.testing.assert_allclose(shared.predict_proba(X), alone.predict_proba(X), atol=1e-8)


def test_integer_targets_skip_no_check_that_matters():
    """fit_classes checks 1-D integer labels itself (always valid classification targets);
    every other kind still goes through scikit-learn's checks and messages."""
    from convexlearn.estimators import KernelSVMClassifier
    from convexlearn.estimators._base import fit_classes
    rng = np.random.default_rng(2)
    X = rng.normal(size=(40, 3))
    y = np.arange(40) % 3
    for labels in (y, y.astype(np.uint8), y.astype(float), np.array(["a", "b", "c"])[y]):
        est = KernelSVMClassifier().fit(X, labels)
        assert list(est.classes_) == list(np.unique(labels))
    np.testing.assert_array_equal(fit_classes(np.array([True, False, True]), None),
                                  [False, True])
    with pytest.raises(ValueError, match="Unknown label type"):
        KernelSVMClassifier().fit(X, rng.normal(size=40))        # continuous targets
    with pytest.raises(ValueError, match="Unknown label type"):
        fit_classes(np.array([0.5, 1.0, 2.0]), None)
    with pytest.raises(cl.DataError, match="one class"):
        fit_classes(np.zeros(5, dtype=int), None)


@pytest.mark.parametrize("n_classes", [2, 3])
@pytest.mark.parametrize("kind", ["kernel", "linear"])
def test_a_class_of_weight_zero_is_a_parameter_error_naming_it(n_classes, kind):
    # class_weight {k: 0}: C_i = 0 for every sample of class k, so each binary problem of
    # k has samples of the other side only; its optimum w = 0, b <= -1 is not unique.
    # scikit-learn's SVC fails on the same fit (non-finite intercepts), the oracle here.
    from convexlearn.estimators import LinearSVMClassifier
    X, y = load_iris(return_X_y=True)
    X, y = X[y < n_classes], y[y < n_classes]
    make = KernelSVMClassifier if kind == "kernel" else LinearSVMClassifier
    with pytest.raises(ValueError, match="not finite"):
        SVC(class_weight={1: 0}).fit(X, y)
    with pytest.raises(ParameterError, match=r"class_weight\[1\] = 0 .* class 1 "):
        make(class_weight={1: 0}).fit(X, y)
    # a positive weight, however small, is a fit (every problem has both sides)
    fitted = make(class_weight={1: 1e-3}).fit(X, y)
    solutions = fitted.solution_ if n_classes > 2 else [fitted.solution_]
    assert all(s.status == "optimal" for s in solutions)
