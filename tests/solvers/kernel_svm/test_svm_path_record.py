"""The C-path's record: multipliers in chunks never copied, SVMPath's alphas formed once
from them (the same rows as alpha(k), alpha_rows and at()), and Q with its bound's figures
formed in one pass (svm_path_bound.signed_gram) equal to numpy's, bit for bit."""

import numpy as np
import pytest

import convexlearn as cl
from convexlearn.routes.svm import exact_c_path
from convexlearn.solvers.kernel_svm.svm_path import SVMPath
from convexlearn.solvers.kernel_svm.svm_path_bound import abs_max_and_asymmetry, signed_gram
from convexlearn.solvers.kernel_svm.svm_path_record import CHUNK, AlphaRows, Breakpoints


def test_rows_stay_where_they_were_written():
    rng = np.random.default_rng(0)
    record = Breakpoints(7)
    rows, views = [], []
    for k in range(3 * CHUNK + 5):
        a, lam = rng.random(7), 0.5 + rng.random()
        record.add(lam, a, 0.1, "E->L 1", np.zeros(8))
        rows.append(a / lam)
        if k % 100 == 0:
            views.append((k, record.free_rows()[:0].base))
    Cs, alphas, intercepts, events, bounds = record.arrays()
    assert isinstance(alphas, AlphaRows) and len(alphas.chunks) == 4
    # no chunk was reallocated: every row lives in the chunk it was written to
    for k, base in views:
        assert np.shares_memory(alphas.row(k), base)
    dense = alphas.dense()
    assert dense.shape == (3 * CHUNK + 5, 7) and np.array_equal(dense, np.array(rows))
    assert alphas.dense() is dense
    ks = np.array([5, CHUNK + 1, 0, 3 * CHUNK + 4, 2 * CHUNK])
    assert np.array_equal(alphas.take(ks), dense[ks])
    assert np.array_equal(alphas.row(-1), dense[-1])
    assert np.array_equal(alphas.take([-1, -CHUNK - 2]), dense[[-1, -CHUNK - 2]])
    for bad in (3 * CHUNK + 5, -3 * CHUNK - 6):
        with pytest.raises(IndexError):
            alphas.row(bad)
        with pytest.raises(IndexError):          # (rows past k were never written)
            alphas.take([0, bad])
    # once formed, the dense array holds the rows: the chunks are its views
    assert all(np.shares_memory(chunk, dense) for chunk in alphas.chunks)
    dense[CHUNK + 1, 3] = -7.0
    assert alphas.row(CHUNK + 1)[3] == -7.0 and alphas.take([CHUNK + 1])[0, 3] == -7.0


def test_a_path_reads_its_rows_without_the_dense_array_and_forms_it_once():
    rng = np.random.default_rng(1)
    X = rng.normal(size=(250, 2))
    y = np.where(X[:, 0] + 0.7 * rng.normal(size=250) > 0, 1, -1)
    path, solutions = exact_c_path(cl.SVM(X, y, C=1.0, kernel="rbf", gamma=2.0), 0.01, 100.0)
    k = len(path.Cs)
    assert k > CHUNK                     # (rows in more than one chunk)
    assert all(s.status == "optimal" for s in solutions)
    rows = path._rows
    assert rows._dense is None           # certified and its Solutions made: not formed
    for i in (0, CHUNK - 1, CHUNK, k - 1):
        assert np.shares_memory(solutions[i].alpha, path.alpha(i))
    same = SVMPath(path.Cs, path.alphas, path.intercepts, path.events, path.reanchored,
                   path.notes, path.bounds)
    assert path.alphas is rows._dense and path.alphas.shape == (k, y.size)
    for i in (0, CHUNK, k - 1):
        assert np.array_equal(path.alphas[i], path.alpha(i))
        assert np.array_equal(solutions[i].alpha, path.alphas[i])
    ks = np.arange(0, k, 7)
    assert np.array_equal(path.alpha_rows(ks), path.alphas[ks])
    # at() from the chunks equals at() on a path made from the dense array
    for C in np.geomspace(path.Cs[0], path.Cs[-1], 37):
        a1, b1 = path.at(C)
        a2, b2 = same.at(C)
        assert np.array_equal(a1, a2) and b1 == b2


@pytest.mark.parametrize("n", [1, 63, 64, 65, 130])
def test_signed_gram_equals_numpy_and_the_separate_pass(n):
    rng = np.random.default_rng(n)
    K = rng.normal(size=(n, n))
    K = K + K.T
    y = np.where(rng.random(n) < 0.5, -1.0, 1.0)

    def numpy(K):
        Q = K * y[:, None]
        Q *= y[None, :]
        return Q

    Q = np.empty((n, n))
    big, asym = signed_gram(K, y, Q)
    assert np.array_equal(Q, numpy(K)) and (big, asym) == abs_max_and_asymmetry(Q)
    assert asym == 0.0
    i, j = rng.integers(n, size=2)
    K[i, j] += 1e-3 if i != j else 0.0
    K[n - 1, 0] = -50.0                    # the largest magnitude, below the diagonal
    Q = np.empty((n, n))
    big, asym = signed_gram(K, y, Q)
    assert np.array_equal(Q, numpy(K)) and (big, asym) == abs_max_and_asymmetry(numpy(K))
    assert big == 50.0
    K[0, n - 1] = np.nan
    Q = np.empty((n, n))
    big, asym = signed_gram(K, y, Q)
    assert np.isnan(big) and np.isnan(asym)
    assert np.array_equal(Q, numpy(K), equal_nan=True)
