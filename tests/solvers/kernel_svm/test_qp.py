"""The dual QP core: a problem other than the C-SVC (epsilon-SVR: 2n variables on n
samples, a linear term other than -1) runs through the same SMO, polish and gap, and the
C-SVC's cases are fields of its QP."""

import numpy as np
import pytest
from sklearn.svm import SVR

import convexlearn as cl
from convexlearn.certify.kkt import dual_qp_objectives
from convexlearn.errors import NotApplicableError, ParameterError
from convexlearn.gram import Gram
from convexlearn.kernels import make_kernel
from convexlearn.solvers.kernel_svm.c_svc import c_svc_qp
from convexlearn.solvers.kernel_svm.qp import DualQP
from convexlearn.solvers.kernel_svm.smo import smo, smo_compiled, smo_qp


def _svr_qp(n=60, C=2.0, eps=0.1, seed=0):
    """LIBSVM's epsilon-SVR dual: a = (a+, a-), s = (+1, -1), p = (eps - z, eps + z),
    0 <= a <= C, s^T a = 0, on the Gram operator of n samples indexed twice."""
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, 3))
    z = np.sin(X[:, 0]) + 0.1 * rng.normal(size=n)
    kernel = make_kernel("rbf", X, gamma=0.5)
    signs = np.r_[np.ones(n), -np.ones(n)]
    qp = DualQP.on_samples(Gram(kernel, X), signs, np.r_[eps - z, eps + z], C,
                           ((signs, 0.0),), index=np.r_[np.arange(n), np.arange(n)],
                           name="epsilon-SVR dual")
    return X, z, qp


def test_epsilon_svr_through_the_core_matches_libsvm():
    X, z, qp = _svr_qp()
    n = z.size
    res, _, loop = smo_qp(qp, tol=1e-10)
    assert res.status == "converged" and loop == "compiled (numba)"
    g = qp.target - res.v
    b, _ = qp.intercept(res.alpha, g)
    coef = res.alpha[:n] - res.alpha[n:]
    ref = SVR(kernel="rbf", gamma=0.5, C=2.0, epsilon=0.1, tol=1e-12).fit(X, z)
    theirs = np.zeros(n)
    theirs[ref.support_] = ref.dual_coef_[0]
    np.testing.assert_allclose(coef, theirs, atol=1e-6)
    assert abs(b - float(ref.intercept_[0])) <= 1e-6
    # the gap of the QP's certificate closes, and the polish keeps it closed
    primal, dual = dual_qp_objectives(qp.signs, qp.target, qp.upper, res.alpha, g, b)
    assert abs(primal - dual) <= 1e-8 * abs(dual)
    polished = qp.polish(res.alpha, g)
    assert polished is not None
    alpha, b_pol, g_pol = polished
    assert abs(float(qp.signs @ alpha)) <= 1e-12 * n * 2.0
    primal, dual = dual_qp_objectives(qp.signs, qp.target, qp.upper, alpha, g_pol, b_pol)
    assert abs(primal - dual) <= 1e-12 * abs(dual)


@pytest.mark.parametrize("samples", [False, True])
@pytest.mark.parametrize("budget", [1, 9, 30])
def test_the_compiled_loop_takes_the_reference_iterates_on_another_linear_term(budget,
                                                                                samples):
    # (up to iteration 34: there two variables of I_up have v equal up to round-off, a
    # tie each loop breaks by its own roundings; the optimum is compared above)
    # samples: the loop reads the n samples' columns through the index map (LIBSVM's
    # SVR_Q), else the 2n-entry columns of the view X[index]
    _, _, qp = _svr_qp(n=40)
    ref = smo(qp.gram.columns(), qp.signs, qp.upper, True, 1e-10, budget, shrinking=False,
              target=qp.target)
    spec, index = qp.sample_spec() if samples else (qp.gram.spec(), None)
    assert (spec.n, None if index is None else index.size) == ((40, 80) if samples
                                                              else (80, None))
    fast = smo_compiled(spec, qp.signs, qp.upper, 1e-10, budget, shrinking=False,
                        target=qp.target, index=index)
    assert fast.n_iter == ref.n_iter and fast.status == ref.status
    np.testing.assert_allclose(fast.alpha, ref.alpha, rtol=0, atol=1e-10)
    np.testing.assert_allclose(fast.v, ref.v, rtol=0, atol=1e-10)
    np.testing.assert_allclose(fast.history["objective"], ref.history["objective"],
                               rtol=1e-12, atol=1e-12)
    # the objective SMO tracks is -F(a) of this QP
    assert abs(fast.history["objective"][-1] + qp.objective(fast.alpha)) <= 1e-9


@pytest.mark.parametrize("cache_mb", [200.0, 2 * 8 * 50 / 2**20])
def test_the_samples_columns_with_shrinking_and_a_tiny_cache_reach_the_reference(cache_mb):
    # shrinking, unshrinking (columns of free variables fetched whole through the cache)
    # and gbar on the samples' columns; a cache of 2 columns evicts all the time
    _, _, qp = _svr_qp(n=50, C=5.0, seed=3)
    ref = smo(qp.gram.columns(), qp.signs, qp.upper, True, 1e-11, shrinking=False,
              target=qp.target)
    res, stats, loop = smo_qp(qp, tol=1e-11, cache_size=cache_mb)
    assert loop == "compiled (numba)" and res.status == "converged" and res.n_shrink > 0
    assert stats["capacity_columns"] == (50 if cache_mb > 1 else 2)   # counted in samples
    np.testing.assert_allclose(res.alpha, ref.alpha, rtol=0, atol=1e-8)
    # v is exact on every variable at the end (rebuilt after shrinking)
    np.testing.assert_allclose(res.v, qp.target - qp.expansion_products(res.alpha),
                               rtol=0, atol=1e-10)


def test_the_polish_reads_the_samples_columns_through_the_index_map():
    from convexlearn.solvers.kernel_svm.certified_smo import SMOColumns
    _, _, qp = _svr_qp(n=30)
    res, _, _ = smo_qp(qp, tol=1e-3, cache_size=8 * 30 * 10 / 2**20)   # 10 of 30 columns
    reader = SMOColumns(qp.gram.base, res.columns, qp.index)
    assert 0 < reader.held.sum() < 30
    rows, cols = np.arange(60), np.r_[0:60:7, 31, 1]
    np.testing.assert_allclose(reader.block(rows, cols), qp.gram.block(rows, cols),
                               rtol=1e-14, atol=1e-15)
    B = np.random.default_rng(7).normal(size=(60, 2))
    B[::3] = 0.0
    np.testing.assert_allclose(reader.products(B), qp.gram.products(B), rtol=1e-12,
                               atol=1e-12)
    np.testing.assert_allclose(reader.products(B[:, 0]), qp.gram.products(B[:, 0]),
                               rtol=1e-12, atol=1e-12)


def test_the_c_svc_cases_are_fields_of_its_qp():
    rng = np.random.default_rng(4)
    X = rng.normal(size=(20, 2))
    y = np.where(X[:, 0] + 0.3 * rng.normal(size=20) > 0, 1, -1)
    soft = c_svc_qp(cl.SVM(X, y, C=3.0, kernel="rbf"))
    np.testing.assert_array_equal(soft.linear, -1.0)
    np.testing.assert_array_equal(soft.target, soft.signs)
    assert soft.has_equality and not soft.hard and np.all(soft.upper == 3.0)
    assert c_svc_qp(cl.SVM(X, y, C=None, kernel="rbf")).hard
    assert not c_svc_qp(cl.SVM(X, y, C=3.0, kernel="rbf", intercept=False)).has_equality
    w = rng.uniform(0.5, 2.0, size=20)
    np.testing.assert_allclose(c_svc_qp(cl.SVM(X, y, C=3.0, sample_weight=w)).upper, 3.0 * w)


def test_weighted_samples_without_intercept_run_the_compiled_loop():
    # per-variable bounds without an equality row: the compiled loop takes a vector C
    rng = np.random.default_rng(5)
    X = rng.normal(size=(40, 2))
    y = np.where(X[:, 0] > 0, 1, -1)
    w = rng.uniform(0.2, 3.0, size=40)
    svm = cl.SVM(X, y, C=1.0, kernel="rbf", intercept=False, sample_weight=w)
    res, _, loop = smo_qp(c_svc_qp(svm), tol=1e-10)
    assert loop == "compiled (numba)" and res.status == "converged"
    sol = svm.from_alpha(res.alpha)
    assert svm.kkt(sol, tol=1e-7).passed
    assert np.all(res.alpha <= svm.C_bounds)


def test_forms_smo_does_not_take_are_refused_and_lower_bounds_shift():
    _, _, qp = _svr_qp(n=10)
    two_rows = DualQP(qp.gram, qp.signs, qp.linear, qp.upper,
                      equality=((qp.signs, 0.0), (np.ones(20), 1.0)))
    with pytest.raises(NotApplicableError):
        smo_qp(two_rows)
    with pytest.raises(ParameterError):
        smo_qp(DualQP(qp.gram, qp.signs, qp.linear, qp.upper, equality=((qp.signs, 1.0),)))
    lower = np.full(20, 0.1)
    boxed = DualQP(qp.gram, qp.signs, qp.linear, qp.upper, lower, ((qp.signs, 0.0),))
    with pytest.raises(NotApplicableError):
        smo_qp(boxed)
    moved = boxed.shifted()
    a = np.random.default_rng(6).uniform(0.0, 1.0, size=20)
    # F(l + a') = F'(a') + F(l): the same objective up to a constant
    assert abs(boxed.objective(lower + a) - moved.objective(a) - boxed.objective(lower)) <= 1e-10
    np.testing.assert_allclose(moved.upper, qp.upper - 0.1)
    assert moved.delta == pytest.approx(-float(qp.signs @ lower))
