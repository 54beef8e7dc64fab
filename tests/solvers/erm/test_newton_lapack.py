"""Newton's Cholesky steps through LAPACK's potrf / potrs give scipy's cho_factor /
cho_solve to the bit (without their per-call checks), and refuse a matrix that is not
positive definite as cho_factor does (Newton then takes its least-squares step)."""

import numpy as np
import pytest
import scipy.linalg as sl

from convexlearn.solvers.erm.newton import _cho_factor, _cho_solve


@pytest.mark.parametrize("p", [1, 6, 31])
def test_cholesky_step_is_scipys_to_the_bit(p):
    rng = np.random.default_rng(p)
    A = rng.standard_normal((p + 4, p))
    H, g = A.T @ A + 0.1 * np.eye(p), rng.standard_normal(p)
    ref = sl.cho_factor(H, check_finite=False)
    factor = _cho_factor(H)
    assert np.array_equal(np.triu(factor), np.triu(ref[0]))
    step = _cho_solve(factor, g)
    assert np.array_equal(step, sl.cho_solve(ref, g, check_finite=False))
    assert np.allclose(H @ step, g, rtol=1e-10, atol=1e-12)


def test_cholesky_refuses_an_indefinite_matrix():
    with pytest.raises(np.linalg.LinAlgError):
        _cho_factor(np.diag([1.0, -1.0, 2.0]))
