"""The polish's walk along the rays of a singular face without solution (polish_ray): the
compiled steps take the reference's, keep g = K beta, the balance and the box, and end on
a face whose system has a solution; on a low-rank Gram the early polish from SMO's short
chunk then certifies where its rounds ran out before."""

import numpy as np
import pytest

import convexlearn as cl
from convexlearn.app.generators import blobs
from convexlearn.solvers.kernel_svm import polish as polish_module, polish_face
from convexlearn.solvers.kernel_svm.c_svc import c_svc_qp, c_svc_solution
from convexlearn.solvers.kernel_svm.polish_face import kkt_solve
from convexlearn.solvers.kernel_svm.polish_ray import (KEPT_CAP, range_basis, ray_walk,
                                                       ray_walk_reference)
from convexlearn.solvers.kernel_svm.smo import smo_qp


def _face(seed, k=40, r=2, intercept=True, offset=0.0, scale=1.0):
    """A face of k free multipliers on a rank-r Gram block (of points offset and scaled:
    an ill-scaled face, |d| ~ 1e6), a balanced start inside the box, and kkt_solve's ray
    there (the system has no solution)."""
    rng = np.random.default_rng(seed)
    Z = (rng.standard_normal((k, r)) + offset) * scale
    K = Z @ Z.T
    y = np.where(rng.random(k) < 0.5, 1.0, -1.0)
    C = rng.uniform(0.5, 2.0, k)
    lo = np.where(y > 0, 0.0, -C)
    start = lo + C * rng.uniform(0.2, 0.8, k)
    d = y - K @ start                         # target_F - g_F, the rest's part folded in
    total = float(start.sum()) if intercept else None
    u, b, ray = kkt_solve(K, d + K @ start, total, start, 1e-9)
    assert ray is not None
    return K, d, start, lo, lo + C, ray


@pytest.mark.parametrize("seed", range(4))
@pytest.mark.parametrize("intercept", [True, False])
def test_compiled_walk_takes_the_reference_steps(seed, intercept):
    K, d, start, lo, hi, ray = _face(seed, intercept=intercept)
    x, still, steps, rank = ray_walk(K, d, start, lo, hi, ray, 1e-9, intercept, 1000)
    x_ref, still_ref, steps_ref, rank_ref = ray_walk_reference(K, d, start, lo, hi, ray,
                                                               1e-9, intercept, 1000)
    assert steps == steps_ref > 1 and rank == rank_ref == 2
    np.testing.assert_array_equal(still, still_ref)
    np.testing.assert_allclose(x, x_ref, rtol=0, atol=1e-10)
    step = x - start
    # in the box, the fixed ones on a bound, the balance kept (with the row)
    assert np.all(x >= lo - 1e-15) and np.all(x <= hi + 1e-15)
    assert np.all((x[~still] == lo[~still]) | (x[~still] == hi[~still]))
    if intercept:
        assert abs(step.sum()) <= 1e-12 * np.abs(start).sum()
    # along null(K_FF): g = K beta unmoved (K = Z Z^T: the whole column block too), and
    # the dual objective d^T step + ... grows (d is its gradient, the curvature 0)
    assert np.max(np.abs(K @ step)) <= 1e-10 * np.max(np.abs(K)) * np.abs(step).sum()
    assert d @ step > 0.0
    # the walk ends on a face whose system has a solution (or with nothing free)
    F = np.flatnonzero(still)
    if F.size:
        KFF = K[np.ix_(F, F)]
        rhs = (d + K @ x)[F] - K[np.ix_(F, np.flatnonzero(~still))] @ x[~still]
        total = float(x[F].sum()) if intercept else None
        _, _, ray_end = kkt_solve(KFF, rhs, total, x[F], 1e-9)
        assert ray_end is None


@pytest.mark.parametrize("seed", range(4))
@pytest.mark.parametrize("offset, scale", [(50.0, 1.0), (0.0, 1e3)])
def test_walk_on_an_ill_scaled_face_keeps_only_checked_steps(seed, offset, scale):
    # points offset by +50 or scaled by 1e3 (|d| ~ 1e4-1e6): the projection's round-off
    # is eps |d|; the compiled walk still takes the reference's steps (to that round-off)
    K, d, start, lo, hi, ray = _face(seed, offset=offset, scale=scale)
    x, still, steps, _ = ray_walk(K, d, start, lo, hi, ray, 1e-9, True, 1000)
    x_ref, still_ref, steps_ref, _ = ray_walk_reference(K, d, start, lo, hi, ray, 1e-9,
                                                        True, 1000)
    assert steps == steps_ref > 1
    np.testing.assert_array_equal(still, still_ref)
    np.testing.assert_allclose(x, x_ref, rtol=0, atol=1e-6 * np.max(hi - lo))
    # each kept step after the first (kkt_solve's ray, taken as given) passes the check:
    # an ascent, g and the balance moved by at most KEPT_CAP times the step's scale
    top = float(np.max(np.diagonal(K)))
    before, free_before = start, np.ones(start.size, dtype=bool)
    for j in range(1, steps + 1):
        after, free_after, _, _ = ray_walk(K, d, start, lo, hi, ray, 1e-9, True, j)
        step = after - before
        if j > 1:
            resid = d - K @ (before - start)
            s = np.abs(step).sum() + np.abs(after[free_before & ~free_after]).sum()
            assert resid @ step >= -KEPT_CAP * np.max(np.abs(resid)) * s
            assert np.max(np.abs(K @ step)) <= KEPT_CAP * top * s
            assert abs(step.sum()) <= KEPT_CAP * s
        before, free_before = after, free_after


def test_walk_declines_a_face_of_high_rank():
    # rank 40 > RANK_MAX: the polish keeps its fresh rounds (few ray steps there)
    K, d, start, lo, hi, ray = _face(3, k=50, r=40)
    assert ray_walk(K, d, start, lo, hi, ray, 1e-9, True, 1000) is None
    assert range_basis(K, True) is None
    # the basis of a low-rank face: its rank plus the column of ones, norm 1 each
    K, *_ = _face(3, k=50, r=4)
    basis = range_basis(K, True)
    assert basis.shape == (50, 5)
    np.testing.assert_allclose(np.linalg.norm(basis, axis=0), 1.0, rtol=1e-14)
    Q = np.linalg.qr(basis[:, :4])[0]
    np.testing.assert_allclose(Q @ (Q.T @ K), K, rtol=0, atol=1e-12 * np.abs(K).max())


def test_low_rank_joiners_are_the_worst():
    wrong = np.array([0.0, 3.0, 0.5, 2.0, 0.1, 5.0])
    join = np.flatnonzero(wrong > 0.2)
    assert sorted(polish_module.worst_of(join, wrong, 2)) == [1, 5]
    assert polish_module.worst_of(join, wrong, 10) is join
    # the walk's face counts as of low rank (these joins) only at a rank well below |F|
    assert polish_module.rank_is_low(2, 40) and not polish_module.rank_is_low(20, 40)
    K, d, start, lo, hi, ray = _face(3, k=40, r=25)
    assert ray_walk(K, d, start, lo, hi, ray, 1e-9, True, 1000)[3] == 25


def test_walk_stops_after_its_steps():
    K, d, start, lo, hi, ray = _face(7)
    x, still, steps, _ = ray_walk(K, d, start, lo, hi, ray, 1e-9, True, 3)
    assert steps == 3 and np.count_nonzero(~still) >= 3


@pytest.mark.parametrize("seed", [12, 13])
def test_early_polish_on_a_linear_gram_certifies_in_fewer_solves(seed, monkeypatch):
    # the linear Gram X X^T of 2-D blobs (rank 2) at C = 100, from SMO's point after 10^4
    # iterations (the one-call path's short chunk): the early polish's rounds were mostly
    # one fresh least-squares solve per multiplier fixed along a ray (seed 13 on the
    # route: 250 rounds ran out, 47 ms); with the walk it certifies in a few fresh solves
    X, y = blobs(400, seed, d=2, separation=1.0)[:2]
    svm = cl.SVM(X @ X.T, y, C=100.0, kernel="precomputed")
    qp = c_svc_qp(svm)
    res, _, _ = smo_qp(qp, tol=1e-3, max_iter=10_000, record=False)
    assert res.status == "max_iter"
    solves = []
    fresh = polish_face.kkt_solve
    monkeypatch.setattr(polish_face, "kkt_solve",
                        lambda *a, **k: solves.append(1) or fresh(*a, **k))
    counts = []
    for walk in (True, False):
        monkeypatch.setattr(polish_module, "RAY_WALK", walk)
        solves.clear()
        out = qp.polish(res.alpha, qp.target - res.v, max_rounds=1000)
        counts.append(len(solves))
        assert out is not None
        alpha, b, g = out
        report = svm.kkt(c_svc_solution(svm, alpha, g, b), tol=1e-6)
        assert report.passed and report.relative_gap <= 1e-9
    assert 3 * counts[0] < counts[1]      # (seed 13: 63 against 252)
