"""Coordinate descent for the squared loss (convexlearn/solvers/erm/cd_squared.py): dense
working sets, implicitly centred sparse sweeps, their kernels against numpy references,
and the certificate on their answers."""

import tracemalloc

import numpy as np
import pytest
import scipy.sparse as sp

import convexlearn as cl
from convexlearn.solvers.erm import cd_squared as cds


def _problem(seed=0, n=300, d=40, density=0.3, shift=2.0):
    rng = np.random.default_rng(seed)
    X = rng.standard_normal((n, d))
    X[rng.random((n, d)) > density] = 0.0
    X[:, 3] += shift                 # a column with a large mean: centring matters
    y = X[:, :5] @ rng.standard_normal(5) + 0.3 * rng.standard_normal(n) + 1.0
    return X, y, rng


@pytest.mark.parametrize("penalty,kw", [("l1", {}), ("elastic_net", {"l1_ratio": 0.3})])
@pytest.mark.parametrize("intercept", [True, False])
@pytest.mark.parametrize("weighted", [False, True])
@pytest.mark.parametrize("fmt", ["csr", "csc"])
def test_sparse_equals_dense(penalty, kw, intercept, weighted, fmt):
    X, y, rng = _problem(seed=1)
    sw = rng.integers(0, 3, X.shape[0]).astype(float) if weighted else None
    args = dict(loss="squared", penalty=penalty, lam=0.05, intercept=intercept,
                sample_weight=sw, **kw)
    dense = cl.ERM(X, y, **args).solve()
    Xs = sp.csr_matrix(X) if fmt == "csr" else sp.csc_matrix(X)
    sparse = cl.ERM(Xs, y, **args).solve()
    assert dense.status == sparse.status == "optimal"
    assert dense.provenance["route"] == sparse.provenance["route"] == "cd"
    assert np.max(np.abs(dense.w - sparse.w)) <= 1e-9 * max(1.0, np.abs(dense.w).max())
    assert abs(dense.b - sparse.b) <= 1e-9 * max(1.0, abs(dense.b))
    assert np.array_equal(dense.w == 0, sparse.w == 0)


def test_sparse_certificate_fails_on_perturbed_answers():
    X, y, _ = _problem(seed=2)
    erm = cl.ERM(sp.csr_matrix(X), y, loss="squared", penalty="l1", lam=0.05)
    sol = erm.solve()
    assert sol.ok and sol.report.passed
    zero, active = np.flatnonzero(sol.w == 0)[0], np.flatnonzero(sol.w)[0]
    for j, step in ((zero, 1e-6), (active, 1e-6 * abs(sol.w[active]))):
        bad = cl.Solution(**{**sol.__dict__, "w": sol.w.copy()})
        bad.w[j] += step
        assert not erm.certificate(bad, tol=1e-9).passed


def test_sparse_epoch_equals_numpy_reference():
    X, y, rng = _problem(seed=3, n=80, d=12)
    Xs = sp.csc_matrix(X)
    xbar = X.mean(axis=0)
    hdiag = 2.0 * ((X - xbar) ** 2).sum(axis=0) / X.shape[0]
    w = np.where(rng.random(12) < 0.5, rng.standard_normal(12), 0.0)
    p = 2.0 * (X @ w - y)
    coords = np.arange(12, dtype=np.int64)
    w1, p1, U1 = w.copy(), p.copy(), np.array([p.sum()])
    w2, p2, U2 = w.copy(), p.copy(), np.array([p.sum()])
    a = cds._sweep_csc_centred(Xs.data, Xs.indices, Xs.indptr, xbar, p1, U1, w1, coords,
                               hdiag, 0.05, 0.02, 1.0 / 80, 80.0)
    b = cds.sparse_epoch_reference(Xs, xbar, p2, U2, w2, coords, hdiag, 0.05, 0.02)
    np.testing.assert_allclose(w1, w2, rtol=1e-12, atol=1e-14)
    np.testing.assert_allclose(p1, p2, rtol=1e-12, atol=1e-13)
    assert U1[0] == pytest.approx(U2[0], rel=1e-12, abs=1e-12)
    assert a == pytest.approx(b, rel=1e-12)
    assert not np.array_equal(w1, w)            # the sweep moved something
    # the implicit centring: the gradient it used is the centred one
    q = 2.0 * ((X - xbar) @ w1 - (y - y.mean()))
    np.testing.assert_allclose((Xs.T @ p1 - xbar * U1[0]) / 80, (X - xbar).T @ q / 80,
                               rtol=1e-10, atol=1e-12)


def test_csc_column_sums_equal_numpy():
    X, _, _ = _problem(seed=4, n=50, d=9)
    X[:, 5] = 0.0                               # an empty column
    Xs = sp.csc_matrix(X)
    s, q = cds._csc_column_sums(Xs.data, Xs.indptr)
    np.testing.assert_allclose(s, X.sum(axis=0), rtol=1e-13, atol=1e-14)
    np.testing.assert_allclose(q, (X * X).sum(axis=0), rtol=1e-13, atol=1e-14)


def _strong(n=4000, d=200, seed=5):
    rng = np.random.default_rng(seed)
    X = rng.standard_normal((n, d))
    w = np.zeros(d)
    w[:10] = rng.standard_normal(10)
    return X, X @ w + rng.standard_normal(n)


def test_working_set_never_forms_the_full_gram():
    X, y = _strong()
    erm = cl.ERM(X, y, loss="squared", penalty="l1", lam=0.2)
    sol = erm.solve()
    assert sol.ok and sol.provenance["route"] == "cd"
    ws = erm.work_cache("cd")["working_set"]
    assert ws["G"].shape[0] == ws["K"].size < X.shape[1] // 2
    assert np.count_nonzero(sol.w) <= ws["K"].size


@pytest.mark.parametrize("start", [1, 3])
def test_kkt_pass_readmits_what_the_start_left_out(monkeypatch, start):
    # a working set too small to hold the answer: the KKT pass over X must grow it
    X, y = _strong(seed=6)
    ref = cl.ERM(X, y, loss="squared", penalty="elastic_net", l1_ratio=0.7, lam=0.05).solve()
    monkeypatch.setattr(cds, "WORKING_SET_START", start)
    erm = cl.ERM(X, y, loss="squared", penalty="elastic_net", l1_ratio=0.7, lam=0.05)
    sol = erm.solve()
    assert sol.ok and np.count_nonzero(sol.w) > start
    assert np.max(np.abs(sol.w - ref.w)) <= 1e-9 * np.abs(ref.w).max()
    assert erm.work_cache("cd")["working_set"]["K"].size < X.shape[1]


def test_certificate_inputs_from_cd_equal_a_fresh_certificate():
    X, y = _strong(seed=7, n=1500, d=60)
    erm = cl.ERM(X, y, loss="squared", penalty="l1", lam=0.1)
    sol = erm.solve()
    fresh = cl.ERM(X, y, loss="squared", penalty="l1", lam=0.1).certificate(sol, tol=1e-9)
    assert fresh.passed
    assert sol.report.relative_gap == pytest.approx(fresh.relative_gap, abs=1e-14)
    assert sol.report.relative_distance == pytest.approx(fresh.relative_distance, abs=1e-14)


def test_residual_sweeps_when_the_working_set_outgrows_the_gram(monkeypatch):
    X, y = _strong(seed=8, n=600, d=80)
    ref = cl.ERM(X, y, loss="squared", penalty="l1", lam=0.01).solve()
    monkeypatch.setattr(cds, "GRAM_MAX_FEATURES", 10)
    erm = cl.ERM(X, y, loss="squared", penalty="l1", lam=0.01)
    sol = erm.solve()
    assert sol.ok and erm.work_cache("cd")["working_set"]["G"] is None
    assert np.max(np.abs(sol.w - ref.w)) <= 1e-9 * np.abs(ref.w).max()


def _text_regression(n, d, per_row, seed, k=50, noise=0.5):
    """CSR rows of ``per_row`` values in [0.1, 1.1), y = X w + noise, w: k entries of 3."""
    rng = np.random.default_rng(seed)
    cols = rng.integers(0, d, (n, per_row))
    X = sp.csr_matrix((rng.random(n * per_row) + 0.1, cols.ravel(),
                       np.arange(0, n * per_row + 1, per_row)), shape=(n, d))
    X.sum_duplicates()
    w = np.zeros(d)
    w[rng.choice(d, k, replace=False)] = 3.0
    return X, X @ w + noise * rng.standard_normal(n)


def test_sparse_lasso_with_many_features_stays_small():
    # the certificate built a dense (d x zeros) block for the zero coordinates: 200 MB here
    X, y = _text_regression(3000, 5000, 5, seed=9, k=40, noise=0.3)
    erm = cl.ERM(X, y, loss="squared", penalty="l1", lam=1e-3)
    tracemalloc.start()
    try:
        sol = erm.solve()
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert sol.ok and sol.provenance["route"] == "cd" and "fallback_from" not in sol.provenance
    assert peak < 30e6, f"peak {peak / 1e6:.0f} MB"


def test_sparse_ridge_and_elastic_net_certify_and_match_dense():
    X, y, _ = _problem(seed=10)
    for penalty, kw in (("l2", {}), ("elastic_net", {"l1_ratio": 0.5})):
        a = cl.ERM(X, y, loss="squared", penalty=penalty, lam=0.03, **kw).solve()
        b = cl.ERM(sp.csr_matrix(X), y, loss="squared", penalty=penalty, lam=0.03, **kw).solve()
        assert a.ok and b.ok
        assert b.provenance["route"] == "cd"      # ridge on sparse X too: O(nnz) sweeps
        assert np.max(np.abs(a.w - b.w)) <= 1e-8 * max(1.0, np.abs(a.w).max())


@pytest.mark.parametrize("lam1,lam2", [(0.05, 0.0), (0.02, 0.1), (0.3, 0.0)])
def test_compiled_cycles_equal_the_python_loop(lam1, lam2):
    """gram_cycles (compiled) takes the same sweeps to the same point as active_cycles of
    gram_epoch_reference, its stopping rule on the same F."""
    from convexlearn.solvers.erm.cd_polish import active_cycles
    X, y, rng = _problem(seed=4, density=1.0)
    Xc, yc = X - X.mean(axis=0), y - y.mean()
    n = X.shape[0]
    G, c = (2.0 / n) * Xc.T @ Xc, (2.0 / n) * Xc.T @ yc
    F0 = float(yc @ yc) / n
    keep = np.ones(X.shape[1], dtype=bool)
    keep[::7] = False
    out = []
    for compiled in (True, False):
        w = np.zeros(X.shape[1])
        g = G @ w - c
        if compiled:
            sweeps = cds.gram_cycles(G, g, w, np.flatnonzero(keep).astype(np.int64), c, F0,
                                     lam1, lam2, 1e-10, 500)
        else:
            def F():
                return (0.5 * float(w @ (g - c)) + F0 + lam1 * np.abs(w).sum()
                        + 0.5 * lam2 * float(w @ w))
            sweeps = active_cycles(lambda K: cds.gram_epoch_reference(G, g, w, K, lam1, lam2),
                                   w, keep, lambda: 1e-10 * abs(F()), 500)
        out.append((sweeps, w, g))
    assert out[0][0] == out[1][0] and 2 < out[0][0] < 500
    assert np.allclose(out[0][1], out[1][1], rtol=0, atol=1e-12)
    assert np.allclose(out[0][2], G @ out[0][1] - c, rtol=0, atol=1e-12)
    assert np.all(out[0][1][~keep] == 0)


def test_sparse_cd_keeps_no_copy_of_x_past_its_call():
    # the CSC copy held in the route's cache stayed alive through the certificate: the
    # peak was the copy + CD's vectors + the certificate's vectors (1.6x Lasso's memory)
    n, d = 20000, 4000
    X, y = _text_regression(n, d, 10, seed=3)
    erm = cl.ERM(X, y, loss="squared", penalty="l1", lam=1e-3)
    erm.solve()                                    # compiled code loaded
    erm = cl.ERM(X, y, loss="squared", penalty="l1", lam=1e-3)
    tracemalloc.start()
    try:
        base = tracemalloc.get_traced_memory()[0]
        sol = erm.solve()
        peak = tracemalloc.get_traced_memory()[1] - base
    finally:
        tracemalloc.stop()
    assert sol.ok and sol.provenance["route"] == "cd"
    held = [k for k, v in erm.work_cache("cd").items() if sp.issparse(v)
            or (isinstance(v, tuple) and any(sp.issparse(a) for a in v))]
    assert held == []
    csc = X.nnz * (X.data.itemsize + X.indices.itemsize) + (d + 1) * X.indptr.itemsize
    # one CSC copy and a few vectors of n and d at a time
    assert peak < csc + 8 * 8 * (n + d), f"{peak / 1e6:.2f} MB, CSC {csc / 1e6:.2f} MB"


@pytest.mark.parametrize("intercept", [True, False])
@pytest.mark.parametrize("weighted", [False, True])
def test_sparse_ridge_by_conjugate_gradients_equals_dense(intercept, weighted):
    X, y, rng = _problem(seed=12)
    sw = rng.random(X.shape[0]) + 0.5 if weighted else None
    args = dict(loss="squared", penalty="l2", lam=0.02, intercept=intercept, sample_weight=sw)
    dense = cl.ERM(X, y, **args).solve()
    erm = cl.ERM(sp.csr_matrix(X), y, **args)
    sparse = erm.solve()
    assert sparse.ok and sparse.provenance["route"] == "cd"
    from convexlearn.solvers.erm.cd import coordinate_descent
    info = coordinate_descent(erm.X, y, erm.loss, erm.penalty, 0.02, intercept,
                              sample_weight=sw)[2]
    assert info["cg_iterations"] > 0 and info["sweeps"] == 0      # no sweep was needed
    assert np.max(np.abs(dense.w - sparse.w)) <= 1e-9 * max(1.0, np.abs(dense.w).max())
    assert abs(dense.b - sparse.b) <= 1e-9 * max(1.0, abs(dense.b))
    # the certificate fails on a point moved off the solution
    moved = cl.Solution(w=sparse.w * (1 + 1e-6), b=sparse.b, objective=np.nan,
                        status="x", method="x")
    assert not erm.certificate(moved, tol=1e-9).passed


def test_first_working_set_is_all_of_x_when_the_strong_set_is_most_of_it():
    # Wide correlated data at lam <= lam_max / 2: the strong rule keeps most columns, and
    # (n d^2 small) the working set starts whole: one round, no growth 32 -> 64 -> ... with
    # a polish each; near lam_max it starts small. Both answers certify.
    from convexlearn.solvers.erm.cd import coordinate_descent
    rng = np.random.default_rng(4)
    X = rng.standard_normal((120, 20)) @ rng.standard_normal((20, 160)) \
        + 0.1 * rng.standard_normal((120, 160))
    y = X @ rng.standard_normal(160) + rng.standard_normal(120)
    lam_max = 2.0 * np.max(np.abs(X.T @ (y - y.mean()))) / len(y) / 0.5
    for frac, whole in ((1e-2, True), (0.9, False)):
        erm = cl.ERM(X, y, loss="squared", penalty="elastic_net", l1_ratio=0.5,
                     lam=frac * lam_max)
        cache = {}
        w, b, info = coordinate_descent(X, y, erm.loss, erm.penalty, erm.lam, cache=cache)
        c = np.abs(cache["dense_stats"][5])
        strong = np.count_nonzero(c >= 2 * erm.penalty.split(erm.lam)[0] - c.max())
        assert (strong > cds.WORKING_SET_FRACTION * X.shape[1]) == whole
        if whole:
            assert info["outer"] == 1 and info["working_set"] == X.shape[1]
        else:
            assert info["working_set"] < X.shape[1]
        sol = erm.solve("exact")
        assert sol.status == "optimal"
