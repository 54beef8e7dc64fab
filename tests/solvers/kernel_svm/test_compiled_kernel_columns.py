"""The compiled SMO computes kernel entries itself (smo_kernels._full_column and _gathered,
numba loops over the data): each formula must equal kernels.make_kernel's, the one
definition (the registry of copies is in tests/test_architecture.py)."""

import numpy as np
import pytest

from convexlearn.kernels import make_kernel
from convexlearn.solvers.kernel_svm.smo_kernels import (KERNEL_CODES, _full_column, _gathered,
                                                        gather_rows, gather_rows_into, add_rows)

KERNELS = [("linear", {}), ("rbf", {"gamma": 0.7}), ("rbf", {"gamma": 40.0}),
           ("poly", {"gamma": 0.5, "coef0": 1.0, "degree": 3}),
           ("poly", {"gamma": 2.0, "coef0": 0.0, "degree": 2}),
           ("sigmoid", {"gamma": 0.1, "coef0": -0.3})]


@pytest.mark.parametrize("name,params", KERNELS)
def test_compiled_columns_equal_make_kernel(name, params):
    rng = np.random.default_rng(3)
    X = rng.normal(size=(37, 4))
    kernel = make_kernel(name, X, **params)
    K = kernel(X, X)
    n = X.shape[0]
    XT = np.ascontiguousarray(X.T)
    args = (KERNEL_CODES[name], X, np.zeros((1, 1)), kernel.gamma, kernel.coef0,
            kernel.degree)
    row, bits = np.empty(n), np.empty(n, dtype=np.int64)
    idx = np.array([36, 0, 5, 5, 17], dtype=np.int64)
    buf = np.empty(idx.size)
    for i in (0, 11, 36):
        _full_column(i, args[0], X, XT, *args[2:], row, bits)
        # fastmath and the vectorized exp: equal up to a few ulps, not bit for bit
        np.testing.assert_allclose(row, K[:, i], rtol=1e-13, atol=1e-15)
        _gathered(i, idx, idx.size, args[0], X, *args[2:], buf, bits)
        np.testing.assert_allclose(buf, K[i, idx], rtol=1e-13, atol=1e-15)


def test_a_wrong_formula_would_be_caught():
    # guards the guard: the comparison above sees a changed coefficient
    X = np.random.default_rng(4).normal(size=(9, 2))
    kernel = make_kernel("rbf", X, gamma=0.7)
    row, bits = np.empty(9), np.empty(9, dtype=np.int64)
    _full_column(2, KERNEL_CODES["rbf"], X, np.ascontiguousarray(X.T), np.zeros((1, 1)),
                 0.7 * (1 + 1e-9), 0.0, 3, row, bits)
    with pytest.raises(AssertionError):
        np.testing.assert_allclose(row, kernel(X, X)[:, 2], rtol=1e-13, atol=1e-15)


def test_gather_rows_equals_numpy_fancy_indexing():
    # the compiled gather of cached columns (the polish's K_FF) against numpy's ix_
    rng = np.random.default_rng(3)
    data = rng.normal(size=(7, 11))
    slots = np.array([4, 0, 6, 4], dtype=np.int64)
    cols = np.array([10, 2, 3, 2, 0], dtype=np.intp)
    np.testing.assert_array_equal(gather_rows(data, slots, cols), data[np.ix_(slots, cols)])
    assert gather_rows(data, slots[:0], cols).shape == (0, 5)


def test_gather_rows_into_writes_the_given_rows_only():
    rng = np.random.default_rng(4)
    data = rng.normal(size=(7, 11))
    slots = np.array([4, 0, 6], dtype=np.int64)
    cols = np.array([10, 2, 3, 2, 0], dtype=np.intp)
    out = np.full((5, 5), -1.0)
    at = np.array([3, 0, 4], dtype=np.intp)
    gather_rows_into(data, slots, cols, out, at)
    np.testing.assert_array_equal(out[at], data[np.ix_(slots, cols)])
    assert np.all(out[[1, 2]] == -1.0)


def test_add_rows_equals_the_product_of_the_gathered_rows():
    # SMOColumns.products' cached part: out += data[slots].T @ coef, read in place
    rng = np.random.default_rng(6)
    data = rng.normal(size=(9, 13))
    slots = np.array([8, 1, 4, 2], dtype=np.int64)
    coef = rng.normal(size=(4, 2))
    coef[1, 0] = 0.0
    start = rng.normal(size=(13, 2))
    out = start.copy()
    add_rows(data, slots, coef, out)
    np.testing.assert_allclose(out, start + data[slots].T @ coef, rtol=0, atol=1e-13)
