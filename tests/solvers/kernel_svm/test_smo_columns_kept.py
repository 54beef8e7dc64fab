"""SMOColumns keeps the columns a product computes from the Gram operator (those SMO's
cache does not hold) for the polish's next rounds, within KEPT_BYTES."""

import numpy as np
import pytest
from test_smo import synthetic

import convexlearn as cl
import convexlearn.gram as gram_module
from convexlearn.solvers.kernel_svm.c_svc import c_svc_qp
from convexlearn.solvers.kernel_svm.certified_smo import SMOColumns
from convexlearn.solvers.kernel_svm.smo import smo_qp


def _reader(monkeypatch, kept_bytes=None):
    """An SMOColumns over a cache of ~8 of 300 columns, and the list of the operator's
    kernel evaluations (entries) made through it."""
    X, y = synthetic(n=300, d=4, seed=0)
    svm = cl.SVM(X, y, C=10.0, kernel="rbf", gamma=0.5)
    qp = c_svc_qp(svm)
    res, _, _ = smo_qp(qp, tol=1e-3, cache_size=0.02, record=False)
    if kept_bytes is not None:
        monkeypatch.setattr(SMOColumns, "KEPT_BYTES", kept_bytes)
    cols = SMOColumns(qp.gram, res.columns)
    evaluated = []
    products, block = gram_module.kernel_products, qp.gram.block

    def counted_products(kernel, X, B, block_bytes=None):
        B2 = np.asarray(B).reshape(len(X), -1)
        evaluated.append(len(X) * int(np.count_nonzero(np.any(B2 != 0.0, axis=1))))
        return products(kernel, X, B, block_bytes)

    def counted_block(rows, c):
        evaluated.append(len(rows) * len(c))
        return block(rows, c)

    monkeypatch.setattr(gram_module, "kernel_products", counted_products)
    monkeypatch.setattr(qp.gram, "block", counted_block)
    return svm, qp, res, cols, evaluated


def test_a_second_product_evaluates_no_kernel_entry(monkeypatch):
    svm, qp, res, cols, evaluated = _reader(monkeypatch)
    assert cols.held.sum() <= 8
    B = svm.y * res.alpha
    exact = gram_module.kernel_products(qp.gram.kernel, qp.gram.X, B)
    evaluated.clear()
    first = cols.products(B)
    missing = int(np.count_nonzero((B != 0) & ~cols.held))
    assert missing > 0 and sum(evaluated) == missing * svm.n_samples
    evaluated.clear()
    B2 = np.where(B != 0, B * 0.5 + 1e-3, 0.0)          # the same support, moved
    second = cols.products(B2)
    assert evaluated == []
    scale = np.abs(B).sum()
    np.testing.assert_allclose(first, exact, rtol=0, atol=1e-13 * scale)
    np.testing.assert_allclose(second, qp.gram.products(B2), rtol=0, atol=1e-13 * scale)
    # a block of kept columns is read, not evaluated
    some = np.flatnonzero((B != 0) & ~cols.held)[:20]
    rows = np.arange(0, 300, 3)
    evaluated.clear()
    got = cols.block(rows, some)
    assert evaluated == []
    np.testing.assert_allclose(got, qp.gram.block(rows, some), rtol=0, atol=1e-15)


@pytest.mark.parametrize("room", [0, 5])
def test_kept_columns_stay_within_their_bytes(monkeypatch, room):
    svm, qp, res, cols, evaluated = _reader(monkeypatch, kept_bytes=8 * 300 * room)
    B = svm.y * res.alpha
    missing = int(np.count_nonzero((B != 0) & ~cols.held))
    assert missing > room
    first = cols.products(B)
    assert int(np.count_nonzero(cols.kept_slot >= 0)) == room
    evaluated.clear()
    second = cols.products(B)
    # only the columns without room are evaluated again
    assert sum(evaluated) == (missing - room) * svm.n_samples
    np.testing.assert_allclose(second, first, rtol=0, atol=1e-13 * np.abs(B).sum())

