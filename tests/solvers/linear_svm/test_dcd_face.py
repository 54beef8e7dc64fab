"""Face steps of DCD: purification keeps w and y^T a and does not lower the dual; the walk
on faces ends at the certified optimum; DCD with face steps is certified where the
epochs alone are not."""

import numpy as np
import pytest
from sklearn.datasets import make_classification

import convexlearn as cl
from convexlearn.solvers.linear_svm.dcd import dcd_linear
from convexlearn.solvers.linear_svm.dcd_face import face_walk, purify


def heavy_overlap(n=1500, d=12, seed=0):
    X, y = make_classification(n, d, flip_y=0.1, random_state=seed)
    return X, 2.0 * y - 1.0


def _dual(Z, y, a):
    w = Z.T @ (y * a)
    return float(a.sum()) - 0.5 * float(w @ w)


def test_purify_keeps_w_and_balance_and_frees_independent_rows():
    X, y = heavy_overlap()
    Z = X - X.mean(axis=0)
    alpha = dcd_linear(X, y, 1.0, tol=1e-6, max_iter=20)[0]     # many free multipliers
    F = np.flatnonzero((alpha > 0) & (alpha < 1))
    assert F.size > 3 * (Z.shape[1] + 1)
    R = y[F, None] * np.column_stack([Z[F], np.ones(F.size)])
    w = Z.T @ (y * alpha)
    new_F, free, pivots = purify(R, 1.0 - y[F] * (Z[F] @ w), alpha[F], np.ones(F.size))
    new = alpha.copy()
    new[F] = new_F
    assert pivots >= F.size - (Z.shape[1] + 1)
    assert np.all((new >= 0) & (new <= 1))
    assert np.all((new_F[~free] == 0) | (new_F[~free] == 1))       # left F at a bound
    assert np.linalg.matrix_rank(R[free]) == free.sum()           # independent rows
    scale = np.abs(R).sum(axis=0) @ np.abs(R).sum(axis=0)
    np.testing.assert_allclose(Z.T @ (y * new), w, atol=1e-9 * np.sqrt(scale))
    assert abs(y @ new - y @ alpha) <= 1e-9 * F.size
    assert _dual(Z, y, new) >= _dual(Z, y, alpha) - 1e-9 * abs(_dual(Z, y, alpha))


def test_face_walk_ends_at_the_certified_optimum():
    X, y = heavy_overlap()
    svm = cl.SVM(X, y, C=1.0)
    mu = X.mean(axis=0)
    alpha = dcd_linear(X, y, 1.0, tol=1e-6, max_iter=50)[0]
    a, b, info = face_walk(X - mu, y, np.ones(y.size), alpha)
    assert info["optimal"] and info["rounds"] >= 1
    w = X.T @ (y * a)
    rep = svm.kkt(cl.Solution(w=w, b=b - w @ mu, alpha=a), tol=1e-9)
    assert rep.passed, rep.summary()


@pytest.mark.parametrize("C", [0.1, 1.0])
def test_dcd_with_face_steps_is_certified_where_epochs_are_not(C):
    X, y = heavy_overlap()
    svm = cl.SVM(X, y, C=C)
    plain = svm.solve("dcd", face_every=0, max_iter=300)
    faces = svm.solve("dcd", max_iter=300)
    assert plain.status == "max_iter" and not plain.report.passed
    assert faces.status == "optimal" and faces.provenance["face_steps"] >= 1
    rep = svm.kkt(faces, tol=1e-9)
    assert rep.passed, rep.summary()
    assert faces.objective == pytest.approx(svm.solve().objective, rel=1e-9)
