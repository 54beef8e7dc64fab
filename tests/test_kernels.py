"""Kernels, the PSD check and the explicit polynomial feature map."""

import math
import re

import numpy as np
import pytest
from sklearn.metrics.pairwise import polynomial_kernel, rbf_kernel, sigmoid_kernel

import convexlearn as cl
from convexlearn.kernels import check_gram, check_psd, polynomial_feature_count

RNG = np.random.default_rng(0)
A = RNG.normal(size=(12, 4))
B = RNG.normal(size=(5, 4))


@pytest.mark.parametrize("name, params, reference", [
    ("linear", {}, lambda a, b: a @ b.T),
    ("poly", dict(gamma=0.3, coef0=1.5, degree=3),
     lambda a, b: polynomial_kernel(a, b, degree=3, gamma=0.3, coef0=1.5)),
    ("rbf", dict(gamma=0.7), lambda a, b: rbf_kernel(a, b, gamma=0.7)),
    ("sigmoid", dict(gamma=0.2, coef0=-0.5), lambda a, b: sigmoid_kernel(a, b, gamma=0.2, coef0=-0.5)),
])
def test_kernels_match_scikit_learn(name, params, reference):
    k = cl.make_kernel(name, A, **params)
    np.testing.assert_allclose(k(A, B), reference(A, B), rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("degree", [1, 2, 3, 4, 5, 7, 12])
def test_integer_poly_degree_by_products_within_ulps_of_pow(degree):
    """An integer degree is raised by repeated squaring (numpy's float power calls pow for
    every entry): within 2 log2(degree) + 1 ulps of pow, entry by entry; the base is the
    kernel's own, so A's and B's entries are left as they were."""
    a, b = A.copy(), B.copy()
    K = cl.make_kernel("poly", A, gamma=0.3, coef0=0.7, degree=degree)(a, b)
    exact = (0.3 * (A @ B.T) + 0.7) ** float(degree)
    ulps = np.abs(K - exact) / np.spacing(np.abs(exact))
    assert ulps.max() <= 2 * math.log2(degree) + 1
    assert np.array_equal(a, A) and np.array_equal(b, B)
    # a non-integer degree (a Kernel built directly) keeps pow
    half = cl.Kernel("poly", gamma=0.3, coef0=2.0, degree=1.5)(A, B)
    np.testing.assert_array_equal(half, (0.3 * (A @ B.T) + 2.0) ** 1.5)


def test_gamma_scale_is_scikit_learns():
    k = cl.make_kernel("rbf", A, gamma="scale")
    assert k.gamma == pytest.approx(1.0 / (A.shape[1] * A.var()))
    assert cl.make_kernel("rbf", A, gamma="auto").gamma == pytest.approx(1.0 / A.shape[1])


def test_lecture_polynomial_kernel_is_gamma1_coef01():
    k = cl.make_kernel("poly", A, gamma=1, coef0=1, degree=2)
    np.testing.assert_allclose(k(A, B), (A @ B.T + 1) ** 2)


def test_psd_with_round_off_negative_eigenvalue_passes():
    Q, _ = np.linalg.qr(RNG.normal(size=(6, 6)))
    K = (Q * np.array([-1e-16, 0.0, 1e-3, 0.5, 1.0, 2.0])) @ Q.T
    K = 0.5 * (K + K.T)
    _, check = check_psd(K)
    assert not check.repaired and check.min_eigenvalue > -check.tolerance


def test_indefinite_sigmoid_is_refused_with_its_eigenvalue():
    X = RNG.normal(size=(30, 3))
    K = cl.make_kernel("sigmoid", X, gamma=2.0, coef0=-1.0)(X)
    lam_min = np.linalg.eigvalsh(K)[0]
    assert lam_min < -1e-3
    with pytest.raises(cl.NotPSDError, match=re.escape(f"{lam_min:.3e}")) as info:
        check_psd(K)
    assert info.value.min_eigenvalue == pytest.approx(lam_min)
    with pytest.raises(cl.NotPSDError):
        cl.SVM(X, np.arange(30) % 2, kernel="sigmoid", gamma=2.0, coef0=-1.0).solve()


def _with_spectrum(eigenvalues, seed=1):
    Q, _ = np.linalg.qr(np.random.default_rng(seed).normal(size=(len(eigenvalues),) * 2))
    K = (Q * np.asarray(eigenvalues)) @ Q.T
    return 0.5 * (K + K.T)


@pytest.mark.parametrize("n", [5, 60, 400])
def test_cholesky_proof_is_a_true_lower_bound(n):
    X = np.random.default_rng(n).normal(size=(n, 3))
    for K in (rbf_kernel(X, gamma=0.4), X @ X.T, polynomial_kernel(X, degree=2)):
        _, check = check_psd(K)
        assert check.method == "cholesky"
        lam_min = np.linalg.eigvalsh(K)[0]
        # the proven bound is below the true smallest eigenvalue and above -tol ||K||_2
        assert check.min_eigenvalue <= lam_min
        assert -check.tolerance <= check.min_eigenvalue < 0
        assert check.tolerance <= 1e-9 * np.max(np.abs(np.linalg.eigvalsh(K))) * (1 + 1e-12)


def test_indefinite_beyond_the_tolerance_is_refused_with_its_eigenvalue():
    # lambda_min = -3e-9 ||K||_2: Cholesky of K + eps I fails, the eigenvalues refuse it
    K = _with_spectrum([-3e-9, 0.0, 1e-3, 0.5, 1.0, 2.0, 2.0, 1.5])
    lam_min = np.linalg.eigvalsh(K)[0]
    with pytest.raises(cl.NotPSDError, match=re.escape(f"{lam_min:.3e}")) as info:
        check_psd(K)
    assert info.value.min_eigenvalue == pytest.approx(lam_min)
    assert info.value.tolerance == pytest.approx(1e-9 * 2.0)
    fixed, check = check_psd(K, repair=True)
    assert check.repaired and check.method == "eigvalsh"
    assert np.linalg.eigvalsh(fixed)[0] >= -1e-15


def test_psd_within_tolerance_but_beyond_the_shift_falls_back_to_eigenvalues():
    # lambda_min = -0.9e-9 ||K||_2: accepted (as before), but not provable with the shift
    # eps = tol s / 2 <= 0.5e-9 ||K||_2, so the eigenvalues decide
    K = _with_spectrum([-0.9e-9, 0.3, 1.0, 1.0, 0.7, 0.2])
    out, check = check_psd(K)
    assert out is K and check.method == "eigvalsh" and not check.repaired
    assert check.min_eigenvalue == pytest.approx(np.linalg.eigvalsh(K)[0])


def test_psd_repair_is_reported_and_yields_psd():
    X = RNG.normal(size=(30, 3))
    K = cl.make_kernel("sigmoid", X, gamma=2.0, coef0=-1.0)(X)
    fixed, check = check_psd(K, repair=True)
    assert check.repaired and check.repair_size > 0
    assert np.linalg.eigvalsh(fixed)[0] >= -1e-10
    svm = cl.SVM(X, np.arange(30) % 2, kernel="sigmoid", gamma=2.0, coef0=-1.0, repair_psd=True)
    sol = svm.solve()
    assert sol.extra["psd_check"].repaired


@pytest.mark.parametrize("K, fragment", [
    (np.ones((3, 4)), "square"),
    (np.array([[1.0, 2.0], [0.0, 1.0]]), "not symmetric"),
    (np.array([[1.0, np.nan], [np.nan, 1.0]]), "non-finite"),
])
def test_bad_precomputed_kernels_are_rejected(K, fragment):
    with pytest.raises(cl.DataError, match=fragment):
        check_gram(K)


@pytest.mark.parametrize("degree, gamma, coef0", [(1, 1.0, 1.0), (2, 0.5, 1.0), (3, 0.7, 2.5),
                                                  (2, 1.0, 0.0), (4, 0.3, 0.0)])
def test_polynomial_feature_map_reproduces_the_kernel(degree, gamma, coef0):
    Phi_a = cl.polynomial_features(A, degree=degree, gamma=gamma, coef0=coef0)
    Phi_b = cl.polynomial_features(B, degree=degree, gamma=gamma, coef0=coef0)
    assert Phi_a.shape[1] == polynomial_feature_count(A.shape[1], degree, coef0)
    np.testing.assert_allclose(Phi_a @ Phi_b.T, (gamma * A @ B.T + coef0) ** degree,
                               rtol=1e-10, atol=1e-10)


def test_full_map_has_binomial_many_features():
    assert cl.polynomial_features(A, degree=3).shape[1] == math.comb(3 + 4, 4)


def test_lecture_example_R3_to_R6():
    # (x.x')^2 on R^3: phi(x) = (x1^2, x2^2, x3^2, sqrt2 x1x2, sqrt2 x1x3, sqrt2 x2x3), in some order.
    x = np.array([[1.0, 2.0, 3.0]])
    phi = cl.polynomial_features(x, degree=2, gamma=1.0, coef0=0.0)
    assert phi.shape == (1, 6)
    expected = [1, 4, 9, math.sqrt(2) * 2, math.sqrt(2) * 3, math.sqrt(2) * 6]
    np.testing.assert_allclose(np.sort(phi.ravel()), np.sort(expected))


def test_feature_map_rejects_non_integer_degree():
    with pytest.raises(cl.ParameterError, match="positive integer"):
        cl.polynomial_features(A, degree=2.5)


def test_callable_and_precomputed_kernels_agree_with_rbf():
    X = RNG.normal(size=(40, 3))
    y = (X[:, 0] + 0.3 * RNG.normal(size=40) > 0).astype(int)
    ref = cl.SVM(X, y, C=2.0, kernel="rbf", gamma=0.5).solve()
    pre = cl.SVM(rbf_kernel(X, gamma=0.5), y, C=2.0, kernel="precomputed").solve()
    fun = cl.SVM(X, y, C=2.0, kernel=lambda a, b: rbf_kernel(a, b, gamma=0.5)).solve()
    for other in (pre, fun):
        assert other.status == "optimal"
        assert other.objective == pytest.approx(ref.objective, rel=1e-9)
