"""The active-set Newton finish of coordinate descent (solvers/erm/face_newton.py) on nearly
unregularized logistic + l1 / elastic net with redundant features (X of deficient rank):
CD alone creeps along the null space of the active columns (the sweep's clf_1000x50 at
lam = 1e-4 lam_max: 56 000 sweeps, a point 5.5e-6 from the certificate, then cvxpy)."""

from __future__ import annotations

import numpy as np
import pytest
from sklearn.datasets import make_classification

import convexlearn as cl
from convexlearn.solvers.erm.cd import coordinate_descent
from convexlearn.solvers.erm.face_newton import active_set_newton


def _redundant(n: int, d: int, seed: int):
    """make_classification with d // 5 redundant features (exact linear combinations of
    the d // 5 informative ones): rank(X) = d - d // 5."""
    X, lab = make_classification(n, d, n_informative=d // 5, n_redundant=d // 5,
                                 flip_y=0.05, random_state=seed)
    return X, np.where(lab == 1, 1.0, -1.0)


def _lam(X, y, frac: float, l1_ratio: float = 1.0) -> float:
    """frac * lam_max: lam_max = ||(1/n) X^T l'(b0)||_inf / l1_ratio at w = 0 and the best
    intercept alone, b0 = log(n+ / n-) (logistic loss log(1 + exp(-y f)))."""
    b0 = np.log(np.mean(y > 0) / np.mean(y < 0))
    g = -y / (1.0 + np.exp(y * b0))
    return frac * float(np.max(np.abs(X.T @ g))) / len(y) / l1_ratio


def test_sweep_case_clf_1000x50_certifies_on_cd():
    # benchmarks/sweep_exact_erm.py --seed 10, clf_1000x50 logistic+l1 frac=1e-4: on main
    # CD's point failed the certificate (5.5e-6 > 1e-9) and cvxpy answered in 24 s
    X, lab = make_classification(1000, 50, n_informative=10, n_redundant=10, flip_y=0.05,
                                 random_state=10)
    y = np.where(lab == 1, 1.0, -1.0)
    sol = cl.ERM(X, y, loss="logistic", penalty="l1", lam=_lam(X, y, 1e-4)).solve()
    assert sol.status == "optimal"
    assert sol.provenance["route"] == "cd"
    assert not sol.provenance.get("fallback_from")


@pytest.mark.parametrize("pen, frac", [("l1", 1e-4), ("l1", 1e-5), ("elastic_net", 1e-5)])
def test_rank_deficient_logistic_certifies_in_few_sweeps(pen, frac):
    # main: 10 156 / 101 100 / 64 335 sweeps (0.4 / 1.8 / 3.4 s); the finish: 22
    X, y = _redundant(300, 30, 0)
    kw = {"l1_ratio": 0.5} if pen == "elastic_net" else {}
    lam = _lam(X, y, frac, kw.get("l1_ratio", 1.0))
    sol = cl.ERM(X, y, loss="logistic", penalty=pen, lam=lam, **kw).solve()
    assert sol.status == "optimal"
    assert sol.provenance["route"] == "cd"
    assert not sol.provenance.get("fallback_from")
    assert sol.provenance["polished"]
    assert sol.n_iter <= 1000           # CD's sweeps
    if pen == "l1":             # a vertex: at most rank([X, 1]) - 1 nonzero coefficients
        assert np.count_nonzero(sol.w) <= np.linalg.matrix_rank(X)


def test_support_reduction_from_a_rough_point():
    # 60 sweeps: every coefficient nonzero, more than the rank of X; the null-space moves
    # drop the surplus (F does not increase), Newton and the zero check finish
    X, y = _redundant(300, 30, 1)
    lam = _lam(X, y, 1e-4)
    erm = cl.ERM(X, y, loss="logistic", penalty="l1", lam=lam)
    w, b, _ = coordinate_descent(X, y, erm.loss, erm.penalty, lam, True, tol=1e-6,
                                 max_sweeps=60, polish=False)
    assert np.count_nonzero(w) > np.linalg.matrix_rank(X)
    out = active_set_newton(X, y, erm.loss, w, b, lam, 0.0, True)
    assert out is not None
    w2, b2 = out
    assert np.count_nonzero(w2) <= np.linalg.matrix_rank(X)
    assert erm.objective(w2, b2) <= erm.objective(w, b)
    sol = cl.Solution(w=w2, b=b2, objective=np.nan, status="converged", method="cd",
                      n_iter=0, time_s=0.0)
    assert erm.certificate(sol, tol=1e-9).passed


def test_weighted_and_no_intercept():
    X, y = _redundant(300, 30, 2)
    s = np.random.default_rng(0).integers(0, 3, len(y)).astype(float)
    lam = _lam(X, y, 1e-4)
    for kw in ({"sample_weight": s}, {"intercept": False}):
        sol = cl.ERM(X, y, loss="logistic", penalty="l1", lam=lam, **kw).solve()
        assert sol.status == "optimal" and sol.provenance["route"] == "cd", kw


def _lam_squared(X, y, frac: float, l1_ratio: float = 1.0) -> float:
    """frac * lam_max of the squared loss (y - f)^2: ||(2/n) Xc^T (y - ybar)||_inf / l1_ratio
    (Xc the centred X; the same for squared_classification with y = +-1)."""
    Xc = X - X.mean(axis=0)
    return frac * float(np.max(np.abs(Xc.T @ (y - y.mean())))) * 2.0 / len(y) / l1_ratio


@pytest.mark.parametrize("loss, pen, frac", [("squared_classification", "l1", 1e-4),
                                             ("squared", "l1", 1e-5),
                                             ("squared_classification", "elastic_net", 1e-5)])
def test_rank_deficient_squared_certifies_on_cd(loss, pen, frac):
    # X of rank 16 < 20: the sign-fixed polish (cd_polish.polish_face) has no face minimizer
    # and CD creeps; on main CD's point failed the certificate and the homotopy answered
    # (the sweep's clf_1000x50 squared_classification+l1 at 1e-3 / 1e-4 lam_max)
    X, y = _redundant(300, 20, 1)
    kw = {"l1_ratio": 0.5} if pen == "elastic_net" else {}
    lam = _lam_squared(X, y, frac, kw.get("l1_ratio", 1.0))
    sol = cl.ERM(X, y, loss=loss, penalty=pen, lam=lam, **kw).solve()
    assert sol.status == "optimal"
    assert sol.provenance["route"] == "cd"
    assert not sol.provenance.get("fallback_from")
    assert sol.provenance["polished"]
    if pen == "l1":
        assert np.count_nonzero(sol.w) <= np.linalg.matrix_rank(X)


def test_rank_deficient_squared_sparse_and_weighted():
    # the implicitly centred sparse CD and the weighted dense CD reach the same finish
    import scipy.sparse as sp
    X, y = _redundant(300, 20, 1)
    lam = _lam_squared(X, y, 1e-4)
    s = np.random.default_rng(0).integers(1, 3, len(y)).astype(float)
    for X_, kw in ((sp.csr_matrix(X), {}), (X, {"sample_weight": s})):
        sol = cl.ERM(X_, y, loss="squared_classification", penalty="l1", lam=lam,
                     **kw).solve()
        assert sol.status == "optimal" and sol.provenance["route"] == "cd", kw
        assert not sol.provenance.get("fallback_from"), kw


def test_null_basis_of_square_and_tall_rank_deficient_faces():
    # a square face gets its R from a QR too (its own diagonal says nothing of its rank)
    from convexlearn.solvers.erm import face_newton
    for M in (np.array([[1.0, 1.0], [2.0, 2.0]]), np.array([[1.0, 1.0], [2.0, 2.0], [3.0, 3.0]])):
        N = face_newton._null_basis(M, None)
        assert N.shape == (1, 2)
        assert np.allclose(M @ N.T, 0.0) and np.isclose(np.linalg.norm(N), 1.0)
    assert face_newton._null_basis(np.array([[2.0, 1.0], [1.0, 2.0]]), None).shape[0] == 0
