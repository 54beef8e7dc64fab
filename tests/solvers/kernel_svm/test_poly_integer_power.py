"""The compiled SMO's poly columns: an integer degree raised by products
(smo_kernels._integer_powers, as kernels.Kernel), a non-integer degree by pow; both equal
kernels.Kernel's entries (test_compiled_kernel_columns.py covers make_kernel's)."""

import numpy as np
import pytest

from convexlearn.kernels import Kernel
from convexlearn.solvers.kernel_svm.smo_kernels import KERNEL_CODES, full_column


@pytest.mark.parametrize("degree", [1.0, 3.0, 4.0, 7.0, 2.5])
def test_compiled_poly_columns_equal_the_kernels(degree):
    rng = np.random.default_rng(5)
    X = rng.normal(size=(29, 3))
    kernel = Kernel("poly", gamma=0.4, coef0=2.0, degree=degree)   # (base > 0: 2.5 defined)
    K = kernel(X, X)
    row, bits = np.empty(X.shape[0]), np.empty(X.shape[0], dtype=np.int64)
    for i in (0, 13, 28):
        full_column(i, KERNEL_CODES["poly"], X, np.ascontiguousarray(X.T), np.zeros((1, 1)),
                    kernel.gamma, kernel.coef0, kernel.degree, row, bits)
        np.testing.assert_allclose(row, K[:, i], rtol=1e-13, atol=0)
