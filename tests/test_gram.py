"""The Gram operator: every way of reading K agrees with the matrix, views by index, the
PSD check, the shared Gram matrix."""

import numpy as np
import pytest

import convexlearn as cl
from convexlearn.errors import NotPSDError, ParameterError
import convexlearn.gram as gram_module
from convexlearn import threads
from convexlearn.gram import Gram, KERNEL_CODES
from convexlearn.kernels import make_kernel


@pytest.fixture(scope="module")
def X():
    return np.random.default_rng(1).normal(size=(30, 4))


@pytest.mark.parametrize("name,params", [("linear", {}), ("rbf", {"gamma": 0.3}),
                                         ("poly", {"gamma": 0.5, "coef0": 1.0, "degree": 2}),
                                         ("sigmoid", {"gamma": 0.05, "coef0": 0.0})])
def test_blocks_columns_products_and_diagonal_agree_with_the_matrix(X, name, params):
    kernel = make_kernel(name, X, **params)
    K = kernel(X, X)
    gram = Gram(kernel, X, repair_psd=True)
    # a kernel PSD by construction is read from X: K is never formed; another one is read
    # from its checked (here repaired) matrix
    assert gram.from_samples == kernel.known_psd
    if not kernel.known_psd:
        K = gram.matrix
        assert gram.psd_check.repaired
    rows, cols = np.array([3, 0, 7]), np.array([5, 5, 29, 1])
    np.testing.assert_allclose(gram.block(rows, cols), K[np.ix_(rows, cols)], rtol=1e-12,
                               atol=1e-12)
    np.testing.assert_allclose(gram.column(4), K[:, 4], rtol=1e-12, atol=1e-12)
    B = np.random.default_rng(2).normal(size=(30, 2))
    B[::3] = 0.0
    np.testing.assert_allclose(gram.products(B), K @ B, rtol=1e-10, atol=1e-10)
    np.testing.assert_allclose(gram.diagonal, np.diag(K), rtol=1e-12, atol=1e-12)
    assert gram.formed == (not kernel.known_psd)
    spec = gram.spec()
    assert spec.code == (KERNEL_CODES[name] if kernel.known_psd else KERNEL_CODES["precomputed"])
    np.testing.assert_allclose(spec.products(B), K @ B, rtol=1e-10, atol=1e-10)
    cols_cache = gram.columns(cache_size=1.0)
    np.testing.assert_allclose(cols_cache.column(2), K[:, 2], rtol=1e-12, atol=1e-12)


def test_a_view_by_index_reads_the_base_with_repeats(X):
    kernel = make_kernel("rbf", X, gamma=0.5)
    K = kernel(X, X)
    gram = Gram(kernel, X)
    index = np.r_[np.arange(30), np.arange(30)]          # epsilon-SVR: 2n variables on n
    view = gram.take(index)
    Kv = K[np.ix_(index, index)]
    assert view.n == 60 and gram.take(np.arange(30)) is gram
    np.testing.assert_allclose(view.diagonal, np.diag(Kv))
    np.testing.assert_allclose(view.block(np.arange(60), np.array([1, 31])), Kv[:, [1, 31]],
                               rtol=1e-12)
    B = np.random.default_rng(3).normal(size=60)
    np.testing.assert_allclose(view.products(B), Kv @ B, rtol=1e-10, atol=1e-10)
    np.testing.assert_allclose(view.spec().products(B), Kv @ B, rtol=1e-10, atol=1e-10)


def test_the_psd_check_of_a_formed_matrix(X):
    K = -np.eye(30)
    gram = Gram(make_kernel("precomputed"), None, K)
    with pytest.raises(NotPSDError):
        gram.matrix
    repaired = Gram(make_kernel("precomputed"), None, K, repair_psd=True)
    assert repaired.psd_check is None
    np.testing.assert_allclose(repaired.matrix, 0.0, atol=1e-12)
    assert repaired.psd_check.repaired


def test_a_shared_matrix_must_be_this_kernels(X):
    y = np.where(X[:, 0] > 0, 1, -1)
    svm = cl.SVM(X, y, kernel="rbf", gamma=0.5)
    assert not svm.gram_formed
    with pytest.raises(ParameterError):
        svm.share_gram(make_kernel("rbf", X, gamma=0.7)(X, X))
    svm.share_gram(svm.kernel(X, X))
    assert svm.gram_formed and svm.gram_operator.spec().code == KERNEL_CODES["precomputed"]


def test_a_large_product_splits_its_rows_over_two_threads(monkeypatch):
    # kernel_products' two halves (n |S| >= threads.SPLIT_ENTRIES) against one thread,
    # and the split taken (the pool's threads called the kernel) or not (a callable)
    import threading
    rng = np.random.default_rng(5)
    X = rng.normal(size=(300, 4))
    B = np.zeros((300, 2))
    B[::3] = rng.normal(size=(100, 2))
    kernel = make_kernel("rbf", X, gamma=0.3)
    monkeypatch.setattr(threads, "SPLIT_ENTRIES", 2**62)
    one = gram_module.kernel_products(kernel, X, B, block_bytes=8 * 100 * 40)
    seen = set()

    class Spy:
        name = "rbf"

        def __call__(self, A, C):
            seen.add(threading.get_ident())
            return kernel(A, C)

    monkeypatch.setattr(threads, "SPLIT_ENTRIES", 1)
    monkeypatch.setattr(threads.os, "cpu_count", lambda: 2)
    two = gram_module.kernel_products(Spy(), X, B, block_bytes=8 * 100 * 40)
    # 300 rows in blocks of 40: the split falls on a block boundary (160), not at 150,
    # so the two threads compute the blocks of one: the same bits
    np.testing.assert_array_equal(two, one)
    main = threading.main_thread().ident
    assert seen and main not in seen          # the halves ran on the pool's threads
    seen.clear()
    Spy.name = "callable"
    np.testing.assert_allclose(gram_module.kernel_products(Spy(), X, B), one,
                               rtol=0, atol=1e-13)
    assert seen == {main}


def test_the_split_keeps_the_callers_numpy_error_state(monkeypatch):
    # numpy's error state is per thread: the pool's threads take the caller's
    monkeypatch.setattr(threads.os, "cpu_count", lambda: 2)
    seen = []

    def block(start: int, stop: int) -> None:
        seen.append(np.geterr()["over"])

    with np.errstate(over="raise"):
        threads.by_blocks(block, 10, 3, threads.SPLIT_ENTRIES)
    assert seen == ["raise"] * 4
