"""The certified kernel route's costs after SMO: SMO's column cache read by the polish, the
Cholesky solve of a positive definite free set, one kernel product for the certificate."""

import numpy as np
import pytest
from scipy.linalg import lapack
from test_smo import synthetic

import convexlearn as cl
import convexlearn.gram as gram_module
from convexlearn import threads
from convexlearn.solvers.kernel_svm import polish_face, small_certified
from convexlearn.solvers.kernel_svm.c_svc import c_svc_qp
from convexlearn.solvers.kernel_svm.certified_smo import SMOColumns, certified_smo
from convexlearn.solvers.kernel_svm.smo import smo_qp


def _general_path(monkeypatch):
    """certified_smo's general path: the one-call path of small problems (its own
    polish and product in its compiled call: test_small_certified.py) not taken."""
    monkeypatch.setattr(small_certified, "small_applies", lambda svm, cache_size: False)


def _rbf(n=300, C=10.0, seed=0):
    X, y = synthetic(n=n, d=4, seed=seed)
    return cl.SVM(X, y, C=C, kernel="rbf", gamma=0.5)


@pytest.mark.parametrize("cache_mb", [200.0, 0.02])
def test_smo_columns_equal_the_gram_operator(cache_mb):
    # 0.02 MB holds ~8 of 300 columns: most entries come from the operator instead
    svm = _rbf()
    qp = c_svc_qp(svm)
    res, _, _ = smo_qp(qp, tol=1e-3, cache_size=cache_mb, record=False)
    cols = SMOColumns(qp.gram, res.columns)
    assert 0 < cols.held.sum() <= (300 if cache_mb > 1 else 8)
    B = np.zeros((svm.n_samples, 2))
    B[:, 0] = svm.y * res.alpha
    B[::7, 1] = 1.0
    exact = qp.gram.products(B)
    np.testing.assert_allclose(cols.products(B), exact, rtol=0, atol=1e-13 * np.abs(B).sum())
    np.testing.assert_allclose(cols.products(B[:, 0]), exact[:, 0], rtol=0,
                               atol=1e-13 * np.abs(B).sum())
    rows, some = np.arange(0, 300, 3), np.flatnonzero(res.alpha)[:40]
    np.testing.assert_allclose(cols.block(rows, some), qp.gram.block(rows, some),
                               rtol=0, atol=1e-14)


def test_free_block_mixes_cached_and_computed_columns_without_a_copy():
    # the polish's K_FF with some columns held and some not (0.02 MB: ~8 of 300 held):
    # filled by rows of K[cols][:, rows] and returned as its transposed view
    svm = _rbf()
    qp = c_svc_qp(svm)
    res, _, _ = smo_qp(qp, tol=1e-3, cache_size=0.02, record=False)
    cols = SMOColumns(qp.gram, res.columns)
    held = np.flatnonzero(cols.held)
    F = np.sort(np.concatenate([held, np.flatnonzero(~cols.held)[:50]]))
    assert 0 < held.size < F.size
    block = cols.block(F, F)
    assert block.flags.f_contiguous and not block.flags.c_contiguous
    np.testing.assert_allclose(block, qp.gram.block(F, F), rtol=0, atol=1e-14)
    rows = np.arange(0, 300, 7)
    np.testing.assert_allclose(cols.block(rows, F), qp.gram.block(rows, F), rtol=0, atol=1e-14)


def test_partial_columns_are_not_read():
    svm = _rbf(n=120)
    qp = c_svc_qp(svm)
    res, _, _ = smo_qp(qp, tol=1e-3, record=False)
    columns = res.columns
    slot = int(columns.slot_of[np.flatnonzero(columns.slot_of >= 0)[0]])
    j = int(columns.owner[slot])
    columns.partial[slot] = True
    columns.data[slot] = np.nan           # a partial column's other entries are stale
    cols = SMOColumns(qp.gram, columns)
    assert not cols.held[j]
    e = np.zeros(svm.n_samples)
    e[j] = 1.0
    np.testing.assert_allclose(cols.products(e), qp.gram.column(j), rtol=0, atol=1e-15)


def test_route_computes_one_kernel_product_from_the_data(monkeypatch):
    # SMO's cache holds the columns SMO moved: the polish reads them (computing only the
    # few it lacks: partial columns of a shrunk run), and the certificate is the one
    # product of n x n_SV kernel entries computed from X after SMO
    svm = _rbf(n=400, C=100.0)
    calls = []
    products = gram_module.kernel_products

    def counted(kernel, X, B, block_bytes=None):
        B2 = np.asarray(B).reshape(len(X), -1)
        calls.append(int(np.count_nonzero(np.any(B2 != 0.0, axis=1))))
        return products(kernel, X, B, block_bytes)

    monkeypatch.setattr(gram_module, "kernel_products", counted)
    _general_path(monkeypatch)
    sol = certified_smo(svm, kkt_tol=1e-9)
    assert sol.status == "optimal" and sol.provenance["polished"]
    assert calls[-1] == sol.report.support.size
    assert sum(calls[:-1]) <= 0.05 * sol.report.support.size, calls


def test_spd_solve_equals_the_lu_solve_and_refuses_indefinite_blocks():
    rng = np.random.default_rng(3)
    X = rng.normal(size=(60, 3))
    K = cl.make_kernel("rbf", gamma=0.3)(X, X)
    k = K.shape[0]
    A = np.zeros((k + 1, k + 1))
    A[:k, :k], A[:k, k], A[k, :k] = K, 1.0, 1.0
    r = rng.normal(size=k + 1)
    cut = (k + 1) * np.finfo(float).eps
    sol = polish_face._spd_bordered_solve(K, np.ones((k, 1)), r, cut)
    lu, piv, _ = lapack.dgetrf(A)
    reference, _ = lapack.dgetrs(lu, piv, r)
    scale = np.abs(reference).max() * np.linalg.cond(A) * 1e-15
    np.testing.assert_allclose(sol, reference, rtol=0, atol=scale)
    reference = np.linalg.solve(K, r[:k])
    np.testing.assert_allclose(polish_face._spd_bordered_solve(K, None, r[:k], cut),
                               reference, rtol=0,
                               atol=np.linalg.cond(K) * 1e-15 * np.abs(reference).max())
    assert polish_face._spd_bordered_solve(K - 2.0 * np.eye(k), None, r[:k], cut) is None
    singular = np.ones((k, k))                 # rank one: not numerically definite
    assert polish_face._spd_bordered_solve(singular, np.ones((k, 1)), r, cut) is None


def _certified_and_perturbed_fails(svm, sol):
    """``sol`` certified at 1e-9 (also on the dense Gram), and one free multiplier moved
    off its optimum fails."""
    assert sol.status == "optimal" and sol.report.relative_gap <= 1e-9
    dense = cl.SVM(svm.gram, svm.y, C=svm.C, kernel="precomputed").kkt(sol, tol=1e-9)
    assert dense.passed, dense.summary()
    alpha = sol.alpha.copy()
    alpha[sol.report.free[0]] *= 1 + 1e-6            # one free multiplier off its optimum
    off = cl.Solution(w=None, b=sol.b, alpha=alpha, dual_coef=svm.y * alpha)
    assert not svm.kkt(off, tol=1e-9).passed


def test_polish_through_the_cache_certifies_and_perturbed_answers_fail():
    svm = _rbf(n=400, C=100.0, seed=2)
    sol = certified_smo(svm, kkt_tol=1e-9)
    _certified_and_perturbed_fails(svm, sol)


def test_mixed_free_block_and_split_product_certify_and_perturbed_answers_fail(monkeypatch):
    # the general path with a cache too small for the free set (its block mixes cached
    # and computed columns) and the certificate's product split over two threads
    _general_path(monkeypatch)
    monkeypatch.setattr(threads, "SPLIT_ENTRIES", 1)
    monkeypatch.setattr(threads.os, "cpu_count", lambda: 2)
    mixed = []
    block = SMOColumns.block

    def spy(self, rows, cols):
        held = self.held[np.asarray(cols)]
        mixed.append(bool(held.any() and not held.all()))
        return block(self, rows, cols)

    monkeypatch.setattr(SMOColumns, "block", spy)
    svm = _rbf(n=400, C=100.0, seed=2)
    # (without shrinking: the columns the cache holds at the end are whole, ~32 of 105)
    sol = certified_smo(svm, kkt_tol=1e-9, cache_size=0.1, shrinking=False)
    assert any(mixed)
    _certified_and_perturbed_fails(svm, sol)


def test_warm_start_with_its_products_reaches_the_cold_optimum():
    svm = _rbf(n=300, C=1.0, seed=4)
    first = certified_smo(svm, kkt_tol=1e-9, gap_tol=1e-9)
    svm.C = 3.0
    cold = certified_smo(svm, kkt_tol=1e-9, gap_tol=1e-9)
    warm = first.alpha * 3.0
    products = (svm.y * first.report.margins - first.b) * 3.0
    np.testing.assert_allclose(products, svm.gram_products(svm.y * warm), rtol=0, atol=1e-12)
    for given in (None, products):
        sol = certified_smo(svm, kkt_tol=1e-9, gap_tol=1e-9, warm_start=warm,
                            warm_products=given)
        assert sol.status == "optimal"
        assert abs(sol.objective - cold.objective) <= 1e-9 * abs(cold.objective)
    # an infeasible start (unbalanced) is not used, nor its products
    bad = warm.copy()
    bad[np.flatnonzero(svm.y > 0)[0]] = 0.0
    sol = certified_smo(svm, kkt_tol=1e-9, gap_tol=1e-9, warm_start=bad,
                        warm_products=np.zeros(svm.n_samples))
    assert sol.status == "optimal"
    assert abs(sol.objective - cold.objective) <= 1e-9 * abs(cold.objective)


def test_uncertified_point_goes_on_with_a_tighter_smo_until_it_certifies(monkeypatch):
    # the first polish is refused (as when its set was misread): the route must not stop
    # at SMO's 1e-3 point but resume SMO at 1e-5 from it, polish again and certify at 1e-9
    svm = _rbf(n=300, C=10.0, seed=5)
    from convexlearn.solvers.kernel_svm.qp import DualQP
    polish, calls = DualQP.polish, []

    def refuse_once(self, alpha, g, **options):
        calls.append(1)
        return None if len(calls) == 1 else polish(self, alpha, g, **options)

    monkeypatch.setattr(DualQP, "polish", refuse_once)
    _general_path(monkeypatch)
    sol = certified_smo(svm, kkt_tol=1e-9, gap_tol=1e-9)
    assert len(calls) >= 2 and sol.provenance["smo_tol"][:2] == [1e-3, 1e-5]
    assert sol.status == "optimal" and sol.report.tol == 1e-9
    assert sol.report.relative_gap <= 1e-9 and sol.report.passed


def test_a_spent_smo_chunk_gets_the_long_polish(monkeypatch):
    # poly-3 (rank 4 on 2-D data) at C = 1e4: SMO zigzags on an almost flat face for
    # 10^5+ iterations; after a chunk of 5000 the polish, given its long budget of
    # rounds, certifies from SMO's point (100 rounds do not suffice there: the route
    # then needed further chunks)
    from sklearn.datasets import make_moons
    from convexlearn.solvers.kernel_svm import certified_smo as module
    from convexlearn.solvers.kernel_svm.qp import DualQP
    X, y = make_moons(200, noise=0.2, random_state=1)
    svm = cl.SVM(X, 2 * y - 1, C=1e4, kernel="poly", degree=3, coef0=0.0,
                 gamma=1.0 / (2 * X.var()))
    monkeypatch.setattr(module, "_budgets", lambda svm, max_iter: (5000, 10**6))
    polish, rounds = DualQP.polish, []

    def spy(self, alpha, g, **options):
        rounds.append(options["max_rounds"])
        return polish(self, alpha, g, **options)

    monkeypatch.setattr(DualQP, "polish", spy)
    _general_path(monkeypatch)
    sol = certified_smo(svm)
    assert rounds[0] == module._LAST_ROUNDS
    assert sol.status == "optimal" and sol.n_iter == 5000
    assert sol.report.passed and sol.report.relative_gap <= 1e-9
