"""convexlearn.solvers.lapack: the LAPACK routines scipy.linalg calls, made straight,
give scipy's results to the bit (trtrs for solve_triangular, potrf / potrs for cho_factor /
cho_solve) and refuse a singular or indefinite matrix as scipy does (LinAlgError)."""

import numpy as np
import pytest
import scipy.linalg as sl

from convexlearn.solvers.lapack import cho_factor, cho_solve, solve_triangular


@pytest.mark.parametrize("order", ["C", "F"])
@pytest.mark.parametrize("lower", [False, True])
@pytest.mark.parametrize("trans", ["N", "T"])
def test_triangular_solve_is_scipys_to_the_bit(order, lower, trans):
    rng = np.random.default_rng(3)
    for k in (1, 4, 17):
        A = rng.standard_normal((k + 5, k))[:k] + 4 * np.eye(k)
        T = np.asarray(np.tril(A) if lower else np.triu(A), order=order)
        b = rng.standard_normal(k)
        ours = solve_triangular(T, b, trans, lower=lower)
        assert np.array_equal(ours, sl.solve_triangular(T, b, trans=trans, lower=lower))
        assert np.allclose((T.T if trans == "T" else T) @ ours, b, rtol=1e-12, atol=1e-12)


def test_triangular_solve_refuses_a_zero_diagonal():
    T = np.triu(np.ones((3, 3)))
    T[1, 1] = 0.0
    with pytest.raises(np.linalg.LinAlgError):
        solve_triangular(T, np.ones(3))


@pytest.mark.parametrize("p", [1, 6, 31])
def test_cholesky_step_is_scipys_to_the_bit(p):
    rng = np.random.default_rng(p)
    A = rng.standard_normal((p + 4, p))
    H, g = A.T @ A + 0.1 * np.eye(p), rng.standard_normal(p)
    ref = sl.cho_factor(H, check_finite=False)
    factor = cho_factor(H)
    assert np.array_equal(np.triu(factor), np.triu(ref[0]))
    step = cho_solve(factor, g)
    assert np.array_equal(step, sl.cho_solve(ref, g, check_finite=False))
    assert np.allclose(H @ step, g, rtol=1e-10, atol=1e-12)


def test_cholesky_refuses_an_indefinite_matrix():
    with pytest.raises(np.linalg.LinAlgError):
        cho_factor(np.diag([1.0, -1.0, 2.0]))
