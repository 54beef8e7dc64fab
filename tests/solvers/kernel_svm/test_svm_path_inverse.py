"""The C-path's lazily updated elbow inverse: its compiled kernels against their numpy
formulas, and a long run of joins and leaves (several folds) against the inverse of the
bordered matrix itself, updated at once."""

import numpy as np
import pytest

from convexlearn.solvers.kernel_svm.svm_path_inverse import (PENDING, LazyInverse,
                                                             fold_pending, lazy_apply,
                                                             lazy_column)


def _pending(seed, m1=9, p=5, cap=12):
    rng = np.random.default_rng(seed)
    N0 = rng.normal(size=(cap + 1, cap + 1))
    N0 = N0 + N0.T                              # (read as symmetric: its rows)
    V = rng.normal(size=(PENDING, cap + 1))
    w = rng.normal(size=PENDING)
    return rng, N0, V, w, p, m1


@pytest.mark.parametrize("seed", range(4))
def test_lazy_apply_and_column_are_their_numpy_formulas(seed):
    rng, N0, V, w, p, m1 = _pending(seed)
    x = rng.normal(size=m1)
    out = np.full(m1 + 2, np.nan)
    lazy_apply(N0, V, w, p, m1, x, out)
    want = N0[:m1, :m1] @ x + V[:p, :m1].T @ (w[:p] * (V[:p, :m1] @ x))
    np.testing.assert_allclose(out[:m1], want, rtol=1e-13, atol=1e-13)
    assert np.isnan(out[m1:]).all()
    for r in (0, m1 - 1, 3):
        col = np.empty(m1)
        lazy_column(N0, V, w, p, m1, r, col)
        np.testing.assert_allclose(col, N0[r, :m1] + V[:p, :m1].T @ (w[:p] * V[:p, r]),
                                   rtol=1e-13, atol=1e-13)


@pytest.mark.parametrize("seed", range(4))
def test_fold_pending_is_its_numpy_formula_on_the_leading_block_only(seed):
    _, N0, V, w, p, m1 = _pending(seed)
    want = N0.copy()
    want[:m1, :m1] += (V[:p, :m1].T * w[:p]) @ V[:p, :m1]
    fold_pending(N0, V, w, p, m1)
    np.testing.assert_allclose(N0, want, rtol=1e-13, atol=1e-13)


def _bordered(Q, y, idx):
    A = np.zeros((idx.size + 1, idx.size + 1))
    A[0, 1:] = A[1:, 0] = y[idx]
    A[1:, 1:] = Q[np.ix_(idx, idx)]
    return A


def test_joins_and_leaves_keep_the_inverse_of_the_bordered_matrix():
    """Joins and leaves (swapping with the last) over several folds: N A = I, and the
    returned u and (e, f) are those of the dense updates."""
    rng = np.random.default_rng(7)
    n = 60
    X = rng.normal(size=(n, 5))
    y = np.where(rng.random(n) < 0.5, -1.0, 1.0)
    K = np.exp(-0.3 * ((X[:, None] - X[None]) ** 2).sum(-1))
    Q = y[:, None] * y[None, :] * K
    idx = [0, 1, 2]
    inv = LazyInverse(cap=n)
    inv.set(np.linalg.inv(_bordered(Q, y, np.array(idx))))
    out = rng.permutation(np.arange(3, n)).tolist()
    for step in range(5 * PENDING):
        m1 = len(idx) + 1
        dense = np.linalg.inv(_bordered(Q, y, np.array(idx)))
        if step % 3 != 2 or len(idx) < 4:
            i = out.pop()
            c = np.r_[y[i], Q[i, idx]]
            sigma, u = inv.join(m1, c, Q[i, i], 1e-12)
            np.testing.assert_allclose(u, dense @ c, rtol=1e-8, atol=1e-8)
            assert sigma == pytest.approx(Q[i, i] - c @ dense @ c, rel=1e-8)
            idx.append(i)
        else:
            p = int(rng.integers(len(idx)))
            inv.swap(p + 1, m1 - 1, m1)
            dense[[p + 1, m1 - 1]] = dense[[m1 - 1, p + 1]]
            dense[:, [p + 1, m1 - 1]] = dense[:, [m1 - 1, p + 1]]
            idx[p], idx[-1] = idx[-1], idx[p]
            e, f = inv.drop_last(m1)
            np.testing.assert_allclose(e, dense[:-1, -1], rtol=1e-8, atol=1e-8)
            assert f == pytest.approx(dense[-1, -1], rel=1e-8)
            out.append(idx.pop())
        A = _bordered(Q, y, np.array(idx))
        x = rng.normal(size=A.shape[0])
        np.testing.assert_allclose(A @ inv.apply(x, A.shape[0]), x, rtol=0, atol=1e-7)
        assert inv.p <= PENDING
    N = inv.dense(len(idx) + 1)
    assert inv.p == 0
    np.testing.assert_allclose(N @ _bordered(Q, y, np.array(idx)), np.eye(len(idx) + 1),
                               rtol=0, atol=1e-7)


def test_a_singular_join_leaves_the_inverse_untouched():
    Q = np.array([[1.0, 0.5], [0.5, 1.0]])
    y = np.array([1.0, -1.0])
    inv = LazyInverse(cap=4)
    inv.set(np.linalg.inv(_bordered(Q, y, np.array([0, 1]))))
    before = inv.dense(3).copy()
    c = np.r_[y[0], Q[0]]                       # a duplicate of sample 0
    sigma, _ = inv.join(3, c, Q[0, 0], 1e-12)
    assert sigma == 0.0 and inv.p == 0
    np.testing.assert_array_equal(inv.dense(3), before)
