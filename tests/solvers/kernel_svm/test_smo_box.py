"""SMO without intercept (no equality row): the compiled pair loop against its numpy
reference, the exact 2-variable box step, and the certified route on it."""

import numpy as np
import pytest
from test_smo import synthetic

import convexlearn as cl
from convexlearn.errors import InfeasibleError
from convexlearn.gram import KernelColumns, KernelSpec
from convexlearn.solvers.kernel_svm.c_svc import c_svc_qp
from convexlearn.solvers.kernel_svm.certified_smo import certified_smo
from convexlearn.solvers.kernel_svm.qp import DualQP
from convexlearn.solvers.kernel_svm.smo import smo, smo_compiled, smo_qp
from convexlearn.solvers.kernel_svm.smo_box_kernels import solve_pair

PARAMS = {"rbf": {"gamma": 0.5}, "poly": {"gamma": 0.5, "coef0": 1.0, "degree": 2}}


def _svm(kernel, C, n=80, seed=0):
    X, y = synthetic(n=n, d=4, seed=seed)
    return cl.SVM(X, y, C=C, kernel=kernel, intercept=False, **PARAMS[kernel])


@pytest.mark.parametrize("kernel", ["rbf", "poly"])
@pytest.mark.parametrize("C", [1.0, 100.0, None])
@pytest.mark.parametrize("budget", [1, 7, 40, None])
def test_compiled_loop_takes_the_reference_iterates(kernel, C, budget):
    svm = _svm(kernel, C)
    cols = KernelColumns.from_kernel(svm.kernel, svm.X)
    ref = smo(cols, svm.y, svm.C_bounds, False, 1e-9, budget, shrinking=False)
    fast = smo_compiled(KernelSpec.of(svm), svm.y, svm.C_bounds, 1e-9, budget,
                        shrinking=False, intercept=False)
    assert fast.n_iter == ref.n_iter and fast.status == ref.status
    assert fast.violation == pytest.approx(ref.violation, rel=1e-9)
    np.testing.assert_allclose(fast.alpha, ref.alpha, rtol=0, atol=1e-10)
    np.testing.assert_allclose(fast.v, ref.v, rtol=0, atol=1e-10)
    np.testing.assert_allclose(fast.history["objective"], ref.history["objective"],
                               rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("cache_mb", [200.0, 4 * 8 * 120 / 2**20])
def test_shrinking_and_a_tiny_cache_reach_the_reference_optimum(cache_mb):
    # shrinking, unshrinking from gbar and the free columns, evictions (4 columns of 120)
    X, y = synthetic(n=120, d=4, seed=2)
    X = X + 1.5
    svm = cl.SVM(X, y, C=5.0, kernel="rbf", gamma=0.5, intercept=False)
    qp = c_svc_qp(svm)
    ref = smo(KernelColumns.from_kernel(svm.kernel, svm.X), svm.y, svm.C_bounds, False,
              1e-11, shrinking=False)
    res, stats, loop = smo_qp(qp, tol=1e-11, cache_size=cache_mb)
    assert loop == "compiled (numba)" and res.status == "converged" and res.n_shrink > 0
    if cache_mb < 1:
        assert stats["capacity_columns"] == 4 and stats["misses"] > 4
    np.testing.assert_allclose(res.alpha, ref.alpha, rtol=0, atol=1e-8)
    np.testing.assert_allclose(res.v, qp.target - qp.expansion_products(res.alpha),
                               rtol=0, atol=1e-10)
    # at bound exactly where the reference is (the steps snap onto the bounds)
    assert np.array_equal(res.alpha >= svm.C_bounds, ref.alpha >= svm.C_bounds)


def test_the_index_map_reads_the_samples_columns():
    # an epsilon-SVR-like QP without the row: 2n variables on n samples
    rng = np.random.default_rng(4)
    n = 30
    X = rng.normal(size=(n, 3))
    z = np.sin(X[:, 0])
    kernel = cl.kernels.make_kernel("rbf", X, gamma=0.5)
    signs = np.r_[np.ones(n), -np.ones(n)]
    qp = DualQP.on_samples(cl.gram.Gram(kernel, X), signs, np.r_[0.1 - z, 0.1 + z], 3.0,
                           (), index=np.r_[np.arange(n), np.arange(n)])
    ref = smo(qp.gram.columns(), qp.signs, qp.upper, False, 1e-10, 25, shrinking=False,
              target=qp.target)
    spec, index = qp.sample_spec()
    fast = smo_compiled(spec, qp.signs, qp.upper, 1e-10, 25, shrinking=False,
                        target=qp.target, index=index, intercept=False)
    np.testing.assert_allclose(fast.alpha, ref.alpha, rtol=0, atol=1e-10)
    res, _, _ = smo_qp(qp, tol=1e-10)
    assert res.status == "converged"
    np.testing.assert_allclose(res.v, qp.target - qp.expansion_products(res.alpha),
                               rtol=0, atol=1e-9)


def _kkt_of_pair(g, H, d, lo, hi):
    """Largest violation of the box QP's optimality conditions at d (projected gradient)."""
    grad = g + H @ d
    worst = 0.0
    for k in range(2):
        if d[k] <= lo[k]:
            worst = max(worst, -grad[k])
        elif d[k] >= hi[k]:
            worst = max(worst, grad[k])
        else:
            worst = max(worst, abs(grad[k]))
    return worst


@pytest.mark.parametrize("seed", range(40))
def test_the_pair_step_solves_the_two_variable_box_qp(seed):
    rng = np.random.default_rng(seed)
    A = rng.normal(size=(2, 2 if seed % 3 else 1))       # a third singular
    H = A @ A.T
    g = rng.normal(size=2) * 3.0
    lo = -rng.uniform(0.0, 2.0, size=2)
    hi = rng.uniform(0.0, 2.0, size=2)
    if seed % 5 == 0:
        hi[:] = np.inf                                      # the hard margin
    tau = 1e-12
    di, dj, gain = solve_pair.py_func(g[0], g[1], H[0, 0], H[0, 1], H[1, 1], lo[0], hi[0],
                                      lo[1], hi[1], tau)
    d = np.array([di, dj])
    assert np.all(d >= lo) and np.all(d <= hi)
    assert gain == pytest.approx(-(g @ d + 0.5 * d @ H @ d), abs=1e-12)
    assert _kkt_of_pair(g, H, d, lo, hi) <= 1e-8 * max(1.0, np.abs(g).max())
    # the compiled function is the same
    assert solve_pair(g[0], g[1], H[0, 0], H[0, 1], H[1, 1], lo[0], hi[0], lo[1], hi[1],
                      tau) == pytest.approx((di, dj, gain), abs=1e-14)
    # and a perturbed step is worse (the decrease is the largest in the box)
    other = np.clip(d + rng.normal(size=2) * 0.1, lo, np.minimum(hi, 1e6))
    assert -(g @ other + 0.5 * other @ H @ other) <= gain + 1e-12


@pytest.mark.parametrize("kernel,C", [("rbf", 100.0), ("poly", 10.0)])
def test_certified_route_without_intercept_is_compiled_and_matches_the_cvxpy_dual(kernel, C):
    X, y = synthetic(n=150, d=3, seed=1, shift=1.5)
    svm = cl.SVM(X + 2.0, y, C=C, kernel=kernel, intercept=False, **PARAMS[kernel])
    _, _, loop = smo_qp(c_svc_qp(svm), tol=1e-3, max_iter=5)
    assert loop == "compiled (numba)"
    sol = certified_smo(svm)
    assert sol.status == "optimal" and sol.report.relative_gap <= 1e-9 and sol.b == 0.0
    exact = svm.solve("exact-dual")
    assert abs(sol.objective - exact.objective) <= 1e-6 * abs(exact.objective)
    # the certificate fails on a perturbed answer
    bad = svm.from_alpha(np.clip(sol.alpha * (1 + 1e-3), 0.0, svm.C_bounds))
    assert not (svm.kkt(bad, tol=1e-6).passed and svm.kkt(bad).relative_gap <= 1e-9)


def test_weighted_no_intercept_takes_the_fast_route():
    rng = np.random.default_rng(7)
    X = rng.normal(size=(120, 2)) + 1.0
    y = np.where(X[:, 0] + 0.3 * rng.normal(size=120) > 1.0, 1, -1)
    w = rng.uniform(0.1, 3.0, size=120)
    w[::10] = 0.0
    svm = cl.SVM(X, y, C=10.0, kernel="rbf", intercept=False, sample_weight=w)
    sol = svm.solve()
    assert sol.status == "optimal" and sol.provenance["route"] == "exact-smo"
    assert np.all(sol.alpha[w == 0.0] == 0.0)


def test_hard_margin_without_intercept_on_inseparable_data_is_infeasible():
    # a point and its copy with the other label: separable by no homogeneous rule; the
    # pair moves along the null direction of Q by finite steps (alpha grows linearly),
    # so the budget's end asks the separability LP
    X, y = synthetic(n=20, d=2, seed=3, shift=3.0)
    X2, y2 = np.vstack([X, X[:1]]), np.append(y, -y[0])
    svm = cl.SVM(X2, y2, C=None, kernel="rbf", gamma=0.5, intercept=False)
    res, _, _ = smo_qp(c_svc_qp(svm), tol=1e-6, max_iter=3000)
    assert res.status in ("diverged", "max_iter") and res.alpha[[0, 20]].min() > 100.0
    with pytest.raises(InfeasibleError, match="not linearly separable"):
        svm.solve("smo", tol=1e-6, max_iter=3000)
