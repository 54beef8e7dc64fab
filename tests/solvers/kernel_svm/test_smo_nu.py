"""Solver_NU on the dual QP core: the compiled loop takes the reference's iterates, the
answers match LIBSVM (scikit-learn's NuSVC / NuSVR), the polish and the two-row gap
certify them, and a perturbed answer fails the certificate."""

import numpy as np
import pytest
from sklearn.metrics.pairwise import rbf_kernel
from sklearn.svm import NuSVC, NuSVR

from convexlearn.errors import NotApplicableError, ParameterError
from convexlearn.gram import Gram
from convexlearn.kernels import make_kernel
from convexlearn.solvers.kernel_svm.nu import (nu_gap, nu_svc_qp, nu_svc_read, nu_svr_qp,
                                               nu_svr_read, solve_nu_qp)
from convexlearn.solvers.kernel_svm.qp import DualQP
from convexlearn.solvers.kernel_svm.smo_nu import (sample_spec, smo_nu, smo_nu_compiled,
                                                   smo_nu_qp)


def _data(seed, n=80):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, 2))
    y = np.where(X[:, 0] + 0.5 * rng.normal(size=n) > 0, 1.0, -1.0)
    z = np.sin(X[:, 0]) + 0.1 * rng.normal(size=n)
    return X, y, z


def _float32_gram(X):
    """A positive definite Gram matrix whose entries are floats of 32 bits: LIBSVM
    caches Q in single precision (Qfloat), exact on this matrix, so that its answer and
    ours solve the same problem (on an rbf Gram from X the float32 cache moves LIBSVM's
    dual_coef_ by ~4e-6 relative, as much for SVC with C = 1 / r on the same data)."""
    K = rbf_kernel(X, gamma=0.5) + 0.01 * np.eye(X.shape[0])
    return K.astype(np.float32).astype(float)


def _precomputed(K):
    return Gram(make_kernel("precomputed"), K=K)


def _full(ref, n):
    out = np.zeros(n)
    out[ref.support_] = ref.dual_coef_[0]
    return out


def _rel(a, b):
    return float(np.max(np.abs(np.asarray(a) - b)) / np.max(np.abs(b)))


@pytest.mark.parametrize("seed", [0, 1])
@pytest.mark.parametrize("nu", [0.2, 0.6])
def test_nu_svc_matches_libsvm_on_a_float32_exact_gram(seed, nu):
    X, y, _ = _data(seed)
    K = _float32_gram(X)
    qp = nu_svc_qp(_precomputed(K), y, nu)
    out = solve_nu_qp(qp, tol=1e-3)
    assert out["certified"] and out["gap"] <= 1e-9
    ours = nu_svc_read(y, out["alpha"], out["b"])
    ref = NuSVC(nu=nu, kernel="precomputed", tol=1e-12).fit(K, y)
    assert _rel(ours["dual_coef"], _full(ref, y.size)) <= 1e-6
    assert abs(ours["intercept"] - ref.intercept_[0]) <= 1e-6 * max(1.0, abs(ref.intercept_[0]))


@pytest.mark.parametrize("seed", [0, 1])
@pytest.mark.parametrize("nu,C", [(0.3, 2.0), (0.7, 0.5)])
def test_nu_svr_matches_libsvm_on_a_float32_exact_gram(seed, nu, C):
    X, _, z = _data(seed)
    K = _float32_gram(X)
    qp = nu_svr_qp(_precomputed(K), z, C, nu)
    out = solve_nu_qp(qp, tol=1e-3)
    assert out["certified"]
    ours = nu_svr_read(out["alpha"], out["b"])
    ref = NuSVR(nu=nu, C=C, kernel="precomputed", tol=1e-12).fit(K, z)
    assert _rel(ours["dual_coef"], _full(ref, z.size)) <= 1e-6
    assert abs(ours["intercept"] - ref.intercept_[0]) <= 1e-6 * max(1.0, abs(ref.intercept_[0]))
    # the tube: the residuals of the free multipliers sit on it, |z - f| = eps
    f = K @ ours["dual_coef"] + ours["intercept"]
    free = (out["alpha"][:z.size] > 1e-9) & (out["alpha"][:z.size] < C - 1e-9)
    np.testing.assert_allclose(z[free] - f[free], ours["epsilon"], atol=1e-8)


def test_rbf_from_samples_matches_libsvm_decision_values():
    X, y, z = _data(3, n=120)
    kernel = make_kernel("rbf", X, gamma=0.5)
    out = solve_nu_qp(nu_svc_qp(Gram(kernel, X), y, 0.4))
    assert out["certified"]
    ours = nu_svc_read(y, out["alpha"], out["b"])
    ref = NuSVC(nu=0.4, kernel="rbf", gamma=0.5, tol=1e-12).fit(X, y)
    f = (out["g"] + (out["b"][0] + out["b"][1]) / 2) / ours["r"]
    theirs = ref.decision_function(X)
    assert _rel(f, theirs) <= 1e-6
    assert abs(ours["intercept"] - ref.intercept_[0]) <= 1e-6 * max(1.0, abs(ref.intercept_[0]))
    svr = solve_nu_qp(nu_svr_qp(Gram(kernel, X), z, 1.5, 0.5))
    assert svr["certified"]
    ref = NuSVR(nu=0.5, C=1.5, kernel="rbf", gamma=0.5, tol=1e-12).fit(X, z)
    fit = nu_svr_read(svr["alpha"], svr["b"])
    f = svr["g"][:z.size] + fit["intercept"]
    assert _rel(f, ref.predict(X)) <= 1e-6


def _perturbed_gap(qp, out, scale):
    """The certificate's gap at the answer with b_+ moved by ``scale``."""
    b = (out["b"][0] + scale, out["b"][1])
    return nu_gap(qp, out["alpha"], out["g"], b)[2]


def test_the_certificate_fails_on_a_perturbed_answer():
    X, y, _ = _data(4)
    qp = nu_svc_qp(_precomputed(_float32_gram(X)), y, 0.5)
    out = solve_nu_qp(qp)
    assert out["gap"] <= 1e-9
    assert _perturbed_gap(qp, out, 1e-3) > 1e-6
    # a feasible move along a pair of one class raises the gap as well
    alpha = out["alpha"].copy()
    free = np.flatnonzero((alpha > 1e-6) & (alpha < 1 - 1e-6) & (y > 0))
    alpha[free[0]] += 1e-4
    alpha[free[1]] -= 1e-4
    g = qp.expansion_products(alpha)
    b, _ = qp.intercept(alpha, g)
    assert nu_gap(qp, alpha, g, b)[2] > 1e-9


@pytest.mark.parametrize("budget", [1, 7, 21])
@pytest.mark.parametrize("problem", ["svc", "svr"])
def test_the_compiled_loop_takes_the_reference_iterates(budget, problem):
    # (up to iteration 21 of nu-SVC: at 22 two variables of I_up, 37 and 39, have v equal
    # up to round-off, a tie each loop breaks by its own roundings; the optimum is
    # compared in test_both_loops_converge_to_the_same_optimum_with_shrinking)
    X, y, z = _data(5, n=40)
    gram = Gram(make_kernel("rbf", X, gamma=0.5), X)
    qp = nu_svc_qp(gram, y, 0.5) if problem == "svc" else nu_svr_qp(gram, z, 1.0, 0.5)
    start = qp.nu_start()
    ref = smo_nu(qp.gram.columns(), qp.signs, qp.upper, start, qp.target, 1e-10, budget,
                 shrinking=False)
    spec, index = sample_spec(qp)          # (nu-SVR: the n samples' columns, read twice)
    fast = smo_nu_compiled(spec, qp.signs, qp.upper, start, qp.target, 1e-10, budget,
                           shrinking=False, index=index)
    assert fast.n_iter == ref.n_iter == budget and fast.status == ref.status
    np.testing.assert_allclose(fast.alpha, ref.alpha, rtol=0, atol=1e-12)
    np.testing.assert_allclose(fast.v, ref.v, rtol=0, atol=1e-12)
    np.testing.assert_allclose(fast.history["objective"], ref.history["objective"],
                               rtol=1e-12, atol=1e-12)
    # both rows held
    for mask, d in zip((qp.signs > 0, qp.signs < 0), qp.deltas):
        assert abs(fast.alpha[mask].sum() - d) <= 1e-12 * qp.n
    # the objective tracked is -F(a)
    assert abs(fast.history["objective"][-1] + qp.objective(fast.alpha)) <= 1e-9


@pytest.mark.parametrize("shrinking", [True, False])
def test_both_loops_converge_to_the_same_optimum_with_shrinking(shrinking):
    X, y, _ = _data(6, n=300)
    qp = nu_svc_qp(Gram(make_kernel("rbf", X, gamma=2.0), X), y, 0.3)
    fast, _, loop = smo_nu_qp(qp, tol=1e-10, shrinking=shrinking, cache_size=0.01)
    slow, _, ref_loop = smo_nu_qp(qp, tol=1e-10, shrinking=shrinking,
                                  callback=lambda *a: True)
    assert (loop, ref_loop) == ("compiled (numba)", "numpy reference")
    assert fast.status == slow.status == "converged"
    if shrinking:
        assert fast.n_shrink > 0 and slow.n_shrink > 0
    np.testing.assert_allclose(fast.alpha, slow.alpha, atol=1e-8)


def test_gap_stop_and_the_polish_close_the_gap():
    X, y, z = _data(7, n=100)
    qp = nu_svr_qp(Gram(make_kernel("rbf", X, gamma=1.0), X), z, 3.0, 0.4)
    res, _, _ = smo_nu_qp(qp, tol=1e-2, gap_tol=1e-10)
    g = qp.target - res.v
    b, _ = qp.intercept(res.alpha, g)
    assert res.gap_checks and nu_gap(qp, res.alpha, g, b)[2] <= 1e-10
    loose, _, _ = smo_nu_qp(qp, tol=1e-2)
    g = qp.target - loose.v
    alpha, b, g = qp.polish(loose.alpha, g)
    assert nu_gap(qp, alpha, g, b)[2] <= 1e-12
    np.testing.assert_allclose(g, qp.expansion_products(alpha), atol=1e-10)


def test_rows_that_are_not_one_per_sign_are_refused_and_infeasible_rows_named():
    X, y, _ = _data(8, n=20)
    qp = nu_svc_qp(Gram(make_kernel("rbf", X, gamma=0.5), X), y, 0.5)
    swapped = DualQP(qp.gram, qp.signs, qp.linear, qp.upper,
                     equality=(qp.equality[1], qp.equality[0]))
    with pytest.raises(NotApplicableError):
        smo_nu_qp(swapped)
    n_pos = int((y > 0).sum())
    too_much = DualQP(qp.gram, qp.signs, qp.linear, qp.upper,
                      equality=(((y > 0).astype(float), n_pos + 1.0), qp.equality[1]))
    with pytest.raises(ParameterError, match="sign \\+1"):
        smo_nu_qp(too_much)


@pytest.mark.parametrize("kind", ["nu-SVC", "nu-SVR"])
def test_the_polish_reads_solver_nu_column_cache(kind):
    """After Solver_NU the certified route's polish reads K from SMO's column cache: the
    samples' n-entry columns, read for nu-SVR's 2n variables through the index. Its
    blocks and products are the Gram operator's, and the route certifies with it; a
    cache of another size is not read."""
    from types import SimpleNamespace

    from convexlearn.solvers.kernel_svm.certified_qp import cached_kernel

    X, y, z = _data(11, n=120)
    gram = Gram(make_kernel("rbf", X, gamma=0.7), X)
    qp = nu_svc_qp(gram, y, 0.4) if kind == "nu-SVC" else nu_svr_qp(gram, z, 2.0, 0.4)
    res, _, _ = smo_nu_qp(qp, record=False)
    kernel = cached_kernel(qp, res.columns)
    assert kernel is not None
    rng = np.random.default_rng(0)
    rows, cols = rng.choice(qp.n, 30, replace=False), rng.choice(qp.n, 17, replace=False)
    np.testing.assert_allclose(kernel.block(rows, cols), qp.gram.block(rows, cols),
                               atol=1e-14)
    B = np.where(rng.random(qp.n) < 0.3, rng.normal(size=qp.n), 0.0)
    np.testing.assert_allclose(kernel.products(B), qp.gram.products(B), atol=1e-12)
    g = qp.target - res.v
    alpha, b, g = qp.polish(res.alpha, g, kernel=kernel)
    assert nu_gap(qp, alpha, g, b)[2] <= 1e-12
    np.testing.assert_allclose(g, qp.expansion_products(alpha), atol=1e-10)
    assert cached_kernel(qp, SimpleNamespace(n=qp.n + 1)) is None
    assert cached_kernel(qp, None) is None
