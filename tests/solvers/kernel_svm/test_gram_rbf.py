"""gram_rbf: the rbf blocks of a shared Gram matrix in one compiled pass (a copy of the rbf
formula, registered in tests/test_architecture.py: equal to kernels.make_kernel's within
a few ulps), and the one-vs-one fit that uses them certified."""

import subprocess
import sys

import numpy as np
import pytest

from convexlearn.estimators import KernelSVMClassifier
from convexlearn.estimators import _gram as estimators_gram
from convexlearn.estimators._gram import shared_gram
from convexlearn.gram import SharedGram
from convexlearn.kernels import make_kernel
from convexlearn.solvers.kernel_svm import gram_rbf
from convexlearn.solvers.kernel_svm.gram_rbf import gram_block_function, rbf_block


@pytest.mark.parametrize("gamma", [1e-3, 0.7, 40.0])
def test_rbf_block_equals_make_kernel(gamma):
    rng = np.random.default_rng(4)
    A, B = rng.normal(size=(23, 5)), rng.normal(size=(31, 5))
    B[3] = A[7]                                   # a zero distance: exactly 1
    expected = make_kernel("rbf", A, gamma=gamma)(A, B)
    got = rbf_block(A, B, gamma)
    # the vectorized exp: within a few ulps of numpy's, not bit for bit
    np.testing.assert_allclose(got, expected, rtol=1e-14, atol=0)
    assert (gamma < 40.0) or np.any(expected < 1e-308)    # the underflow range is seen
    assert got[7, 3] == 1.0
    assert rbf_block(A[:0], B, gamma).shape == (0, 31)


def test_a_wrong_rbf_formula_would_be_caught():
    # guards the comparison above: a gamma off by one part in 1e10 is seen
    rng = np.random.default_rng(5)
    A = rng.normal(size=(9, 3))
    with pytest.raises(AssertionError):
        np.testing.assert_allclose(rbf_block(A, A, 0.7 * (1 + 1e-10)),
                                   make_kernel("rbf", A, gamma=0.7)(A, A), rtol=1e-14)


def test_block_function_is_compiled_for_rbf_only():
    X = np.random.default_rng(6).normal(size=(8, 2))
    poly = make_kernel("poly", X, gamma=0.5, coef0=1.0, degree=2)
    assert gram_block_function(poly) is poly
    rbf = make_kernel("rbf", X, gamma=0.3)
    np.testing.assert_allclose(gram_block_function(rbf)(X, X[:3]), rbf(X, X[:3]), rtol=1e-14)


@pytest.mark.parametrize("scheme", ["ovo", "ovr"])
def test_shared_gram_uses_the_compiled_blocks(scheme, monkeypatch):
    calls = []
    compiled = gram_rbf.rbf_block
    monkeypatch.setattr(gram_rbf, "rbf_block", lambda *a: calls.append(1) or compiled(*a))
    monkeypatch.setattr(estimators_gram, "compiled_loop_loaded", lambda intercept: True)
    rng = np.random.default_rng(7)
    X, codes = rng.normal(size=(60, 3)), rng.integers(0, 4, 60)
    kernel = make_kernel("rbf", X, gamma=0.3)
    spec = {"kernel": "rbf", "degree": 3, "coef0": 0.0}
    fast = shared_gram(spec, 0.3, X, codes, scheme, kernel=kernel)
    plain = SharedGram(kernel, X, codes, scheme == "ovo")
    assert calls                                  # the shared matrix came from rbf_block
    members = [np.flatnonzero(codes == c) for c in range(4)]
    for i in range(4):
        for j in range(i + 1, 4):
            rows = np.concatenate([members[i], members[j]])
            np.testing.assert_allclose(fast.block(rows), plain.block(rows), rtol=1e-14)
            np.testing.assert_allclose(fast.block(rows), kernel(X[rows], X[rows]), rtol=1e-14)


def test_one_vs_one_fit_on_the_compiled_gram_is_certified():
    from sklearn.datasets import load_digits
    from sklearn.svm import SVC
    X, y = load_digits(return_X_y=True)
    X, y = X[:500], y[:500]
    ours = KernelSVMClassifier(C=10, gamma=0.001).fit(X, y)
    assert all(s.status == "optimal" and s.report.relative_gap <= 1e-9 for s in ours.solution_)
    svc = SVC(C=10, gamma=0.001, tol=1e-6).fit(X, y)
    np.testing.assert_array_equal(ours.predict(X), svc.predict(X))


def test_shared_gram_is_numpy_before_the_compiled_loop_is_loaded(monkeypatch):
    calls = []
    monkeypatch.setattr(gram_rbf, "rbf_block", lambda *a: calls.append(1))
    monkeypatch.setattr(estimators_gram, "compiled_loop_loaded", lambda intercept: False)
    X, codes = np.random.default_rng(8).normal(size=(30, 2)), np.arange(30) % 3
    kernel = make_kernel("rbf", X, gamma=0.3)
    gram = shared_gram({"kernel": "rbf", "degree": 3, "coef0": 0.0}, 0.3, X, codes, "ovo",
                       kernel=kernel)
    assert calls == []
    np.testing.assert_array_equal(gram.block(np.arange(30)[codes < 2]),
                                  SharedGram(kernel, X, codes, True).block(
                                      np.arange(30)[codes < 2]))


def test_first_multiclass_fit_does_not_load_the_compiled_gram():
    """A process's first multiclass fits stay in numpy (the rent-or-buy rule of
    certified_smo): the shared Gram matrix does not load numba's compiled pass."""
    lines = ["import sys",
             "from sklearn.datasets import load_wine",
             "from convexlearn.estimators import KernelSVMClassifier",
             "m = KernelSVMClassifier().fit(*load_wine(return_X_y=True))",
             "assert all(s.status == 'optimal' for s in m.solution_)",
             "print('convexlearn.solvers.kernel_svm.gram_rbf' in sys.modules)"]
    out = subprocess.check_output([sys.executable, "-c", "\n".join(lines)], text=True)
    assert out.strip() == "False"
