"""SMO's loop on a contiguous active set (smo_compact_kernels) takes the iterates of the
loop with an index array (smo_kernels.smo_loop), through shrinking, compaction, columns
brought to a newer layout or dropped as too old, evictions and unshrinking, and leaves a
whole column cache and an exact gradient."""

import numpy as np
import pytest
from test_smo import synthetic

import convexlearn as cl
from convexlearn.gram import KernelSpec
from convexlearn.solvers.kernel_svm import smo_compact_kernels, smo_kernels
from convexlearn.solvers.kernel_svm.smo import smo_compiled


def _both(monkeypatch, svm, **kw):
    """(compact loop's result, index-array loop's result) of smo_compiled."""
    fast = smo_compiled(KernelSpec.of(svm), svm.y, svm.C, **kw)
    monkeypatch.setattr(smo_compact_kernels, "compact_loop",
                        lambda *args: smo_kernels.smo_loop(*args, None))
    ref = smo_compiled(KernelSpec.of(svm), svm.y, svm.C, **kw)
    return fast, ref


@pytest.mark.parametrize("kernel, C, cache_mb", [
    ("rbf", 100.0, 200.0), ("rbf", 100.0, 0.05), ("rbf", 10.0, 0.02), ("poly", 10.0, 0.02)])
def test_compact_loop_takes_the_iterates_of_the_index_loop(monkeypatch, kernel, C, cache_mb):
    X, y = synthetic(n=400, d=3, seed=1)
    params = {"gamma": 2.0} if kernel == "rbf" else {"gamma": 0.5, "coef0": 1.0, "degree": 3}
    svm = cl.SVM(X, y, C=C, kernel=kernel, **params)
    fast, ref = _both(monkeypatch, svm, tol=1e-6, shrinking=True, cache_mb=cache_mb)
    assert fast.n_shrink > 2 and fast.n_iter > 2000
    assert fast.n_iter == ref.n_iter and fast.status == ref.status == "converged"
    np.testing.assert_allclose(fast.alpha, ref.alpha, rtol=0, atol=1e-9 * C)
    exact = svm.y - svm.gram @ (svm.y * fast.alpha)
    np.testing.assert_allclose(fast.v, exact, rtol=0, atol=1e-9 * C)
    # every cached column is whole and in variable order after the run
    cache = fast.columns
    held = np.flatnonzero(np.asarray(cache.owner) >= 0)
    assert held.size and not np.asarray(cache.partial)[held].any()
    for s in held:
        np.testing.assert_allclose(cache.data[s], svm.gram[:, cache.owner[s]], atol=1e-13)


def test_a_released_cache_buffer_is_reused_by_the_next_cache_that_fits(monkeypatch):
    from convexlearn.gram import ColumnArrays
    from convexlearn.solvers.kernel_svm import cache_pool
    monkeypatch.setattr(cache_pool, "_SPARE", [])
    first = ColumnArrays(300, 0.5)
    memory = first.data
    cache_pool.release(first)
    assert first.data is None
    smaller = cache_pool.reuse_buffer(ColumnArrays(200, 0.2))
    assert np.shares_memory(smaller.data, memory)
    assert smaller.data.shape == (smaller.capacity, 200)
    assert cache_pool.reuse_buffer(ColumnArrays(300, 0.5)).data is not memory   # (taken)
    cache_pool.release(smaller)                      # the whole buffer comes back
    larger = cache_pool.reuse_buffer(ColumnArrays(2000, 5.0))
    assert not np.shares_memory(larger.data, memory)


def test_drop_spare_gives_the_kept_buffer_back(monkeypatch):
    from convexlearn.gram import ColumnArrays
    from convexlearn.solvers.kernel_svm import cache_pool
    monkeypatch.setattr(cache_pool, "_SPARE", [])
    first = ColumnArrays(300, 0.5)
    memory, nbytes = first.data, first.data.nbytes
    cache_pool.release(first)
    assert cache_pool.drop_spare() == nbytes and cache_pool.drop_spare() == 0
    assert not np.shares_memory(cache_pool.reuse_buffer(ColumnArrays(300, 0.5)).data, memory)


def test_certified_solves_in_a_row_share_the_cache_buffer_and_certify():
    X, y = synthetic(n=1500, d=3, seed=2)
    first = cl.SVM(X, y, C=10.0, kernel="rbf", gamma=2.0).solve()
    second = cl.SVM(X, y, C=10.0, kernel="rbf", gamma=2.0).solve()
    assert first.status == second.status == "optimal"
    np.testing.assert_array_equal(first.alpha, second.alpha)


def test_compact_loop_on_the_hard_margin_takes_the_index_loop_iterates(monkeypatch):
    # separable (rbf), shrinking on: the divergence test's spread is taken over the active
    # set in both loops
    X, y = synthetic(n=1200, d=3, shift=1.5, seed=3)
    svm = cl.SVM(X, y, C=None, kernel="rbf", gamma=1.0)
    fast, ref = _both(monkeypatch, svm, tol=1e-6, shrinking=True, cache_mb=0.5)
    assert fast.n_iter == ref.n_iter and fast.status == ref.status == "converged"
    assert fast.n_shrink > 0
    np.testing.assert_allclose(fast.alpha, ref.alpha, rtol=1e-9, atol=1e-9)
