"""The LRU cache of kernel columns (gram.KernelColumns) used by SMO: right values, bounded
memory, LRU order."""

import numpy as np
import pytest

from convexlearn.errors import ParameterError
from convexlearn.kernels import make_kernel
from convexlearn.gram import KernelColumns, kernel_diagonal


@pytest.fixture(scope="module")
def X():
    return np.random.default_rng(0).normal(size=(40, 3))


@pytest.mark.parametrize("name,params", [("linear", {}), ("rbf", {"gamma": 0.7}),
                                         ("poly", {"gamma": 0.5, "coef0": 1.0, "degree": 3}),
                                         ("sigmoid", {"gamma": 0.1, "coef0": 0.0})])
def test_columns_and_diagonal_match_the_gram_matrix(X, name, params):
    kernel = make_kernel(name, X, **params)
    K = kernel(X, X)
    cols = KernelColumns.from_kernel(kernel, X)
    np.testing.assert_allclose(cols.diagonal, np.diag(K), rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(kernel_diagonal(kernel, X), np.diag(K), rtol=1e-12, atol=1e-12)
    for i in (0, 7, 39):
        np.testing.assert_allclose(cols.column(i), K[:, i], rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(cols.columns([3, 5, 3]), K[[3, 5, 3]], rtol=1e-12, atol=1e-12)


def test_callable_kernel_diagonal_by_rows(X):
    kernel = make_kernel(lambda A, B: (A @ B.T + 2.0) ** 2)
    np.testing.assert_allclose(kernel_diagonal(kernel, X), (np.sum(X * X, 1) + 2.0) ** 2)


def test_lru_eviction_and_memory_bound():
    n = 1000
    calls = []

    def compute(idx):
        calls.extend(int(i) for i in idx)
        return np.tile(np.asarray(idx, float)[:, None], (1, n))

    # 3 columns of 1000 doubles = 24 000 bytes
    cols = KernelColumns(compute, n, np.zeros(n), cache_size=24_000 / 2**20)
    assert cols.capacity == 3
    for i in (0, 1, 2):
        cols.column(i)
    cols.column(0)                    # 0 becomes the most recent
    cols.column(3)                    # evicts 1, the least recently used
    assert len(cols) == 3 and cols.nbytes <= 24_000
    calls.clear()
    cols.column(0)
    cols.column(2)
    assert calls == []                # both still cached
    cols.column(1)
    assert calls == [1]               # 1 had been evicted
    assert cols.hits == 3 and cols.misses == 5
    # a block larger than the cache is still returned whole, the bound still holds
    block = cols.columns(np.arange(10, 20))
    np.testing.assert_array_equal(block[:, 0], np.arange(10, 20))
    assert len(cols) <= cols.capacity


def test_at_least_two_columns_and_bad_size():
    cols = KernelColumns(lambda idx: np.zeros((len(idx), 10**6)), 10**6, np.zeros(10**6),
                         cache_size=1.0)
    assert cols.capacity == 2         # an SMO step needs two columns at once
    with pytest.raises(ParameterError, match="cache_size"):
        KernelColumns(lambda idx: None, 5, np.zeros(5), cache_size=0)


def test_from_gram_returns_rows_without_copy():
    K = np.arange(16.0).reshape(4, 4)
    K = K + K.T
    cols = KernelColumns.from_gram(K)
    np.testing.assert_array_equal(cols.column(2), K[2])
    np.testing.assert_array_equal(cols.diagonal, np.diag(K))
