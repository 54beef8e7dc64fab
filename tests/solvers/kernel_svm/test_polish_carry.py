"""The polish's carried factor (polish_carry): removals folded out of a Cholesky factor and
joiners bordered onto it agree with a fresh factorization to a stated rounding bound, a
carried solve is kept only at a backward-stable residual, and the polish that carries
its factor across rounds still ends at a certified answer (a perturbed one fails)."""

import numpy as np
import pytest
from scipy.linalg import lapack

import convexlearn as cl
from convexlearn.solvers.kernel_svm import polish_carry, polish_face, small_certified
from convexlearn.solvers.kernel_svm.polish_carry import (JoinedBlock, arrange,
                                                         bordered_residual, carried_solve,
                                                         carry_factor, factor_solve,
                                                         positions_in)
from convexlearn.solvers.kernel_svm.polish_carry_kernels import drop_positions

EPS = np.finfo(float).eps


def _spd(k, seed=0, extra=10):
    rng = np.random.default_rng(seed)
    A = rng.normal(size=(k, k + extra))
    return A @ A.T / (k + extra) + 0.5 * np.eye(k)


def _fresh(K):
    R, info = lapack.dpotrf(np.asfortranarray(K), lower=False, clean=True)
    assert info == 0
    return R


def _factor_bound(K, k):
    """A forward bound for Cholesky factors of K: c k eps cond(K) max|R| (c = 10)."""
    return 10 * k * EPS * np.linalg.cond(K)


@pytest.mark.parametrize("removed", [[], [0], [3, 17, 18, 59], list(range(50, 60)),
                                     list(range(0, 60, 7))])
def test_dropped_factor_equals_a_fresh_one(removed):
    k = 60
    K = _spd(k)
    R = _fresh(K)
    removed = np.asarray(removed, dtype=np.intp)
    keep = np.setdiff1d(np.arange(k), removed)
    T = np.zeros((keep.size, keep.size), order="F")
    drop_positions(R, keep, removed, T)
    T = np.triu(T)
    fresh = _fresh(K[np.ix_(keep, keep)])
    # R^T R reproduces the kept block to a backward-stable factorization's residual
    assert np.max(np.abs(T.T @ T - K[np.ix_(keep, keep)])) <= 10 * k * EPS * np.abs(K).max()
    # and the factor is the fresh one (both have a positive diagonal: it is unique)
    assert np.max(np.abs(T - fresh)) <= _factor_bound(K, k) * np.abs(fresh).max()
    assert np.all(np.diag(T) > 0)


def _kernel_problem(n=90, seed=1):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, 2))
    K = np.exp(-0.7 * ((X[:, None, :] - X[None, :, :]) ** 2).sum(-1)) + 1e-2 * np.eye(n)
    return K, (lambda rows, cols: K[np.ix_(rows, cols)])


def test_carried_block_equals_the_fresh_one_after_removals_and_joins():
    K, block = _kernel_problem()
    F0 = np.arange(0, 60)
    R0 = _fresh(K[np.ix_(F0, F0)])
    free = np.zeros(K.shape[0], dtype=bool)
    free[F0] = True
    free[[48, 53, 58]] = False                  # removed by the ratio steps (late:
    # cheap to fold out, polish_carry.DROP_RATIO)
    free[[70, 75, 88]] = True                   # joiners
    F = arrange(F0, free)
    assert list(F[-3:]) == [70, 75, 88] and np.all(np.diff(F[:-3]) > 0)
    position = positions_in(F0, F)
    assert np.all(position[-3:] == -1)
    joined = carry_factor(R0, K[np.ix_(F0, F0)], position, F, block)
    assert isinstance(joined, JoinedBlock) and joined.size == F.size
    KF, RF = joined.materialize()
    np.testing.assert_array_equal(KF, K[np.ix_(F, F)])
    fresh = _fresh(K[np.ix_(F, F)])
    assert np.max(np.abs(np.triu(RF) - fresh)) <= (_factor_bound(KF, F.size)
                                                   * np.abs(fresh).max())
    # the pieces solve as the whole: K'^{-1} B and the bordered system
    B = np.random.default_rng(2).normal(size=(F.size, 2))
    np.testing.assert_allclose(KF @ joined.potrs(B), B, atol=1e-9)
    r = np.append(np.ones(F.size), 0.3)
    x = carried_solve(joined, None, np.ones((F.size, 1)), r, factor_solve)
    assert x is not None
    res, bound = bordered_residual(lambda v: KF @ v, np.ones((F.size, 1)), x, r,
                                   float(np.abs(KF).sum(axis=0).max()) + 1.0)
    assert np.max(np.abs(res)) <= bound


def test_carry_declines_large_changes_and_a_perturbed_solution_fails_the_bound():
    K, block = _kernel_problem()
    F0 = np.arange(60)
    R0 = _fresh(K[np.ix_(F0, F0)])
    # half the block removed: a fresh factorization is cheaper
    free = np.zeros(K.shape[0], dtype=bool)
    free[30:60] = True
    F = arrange(F0, free)
    assert carry_factor(R0, K[np.ix_(F0, F0)], positions_in(F0, F), F, block) is None
    # too many joiners at once
    free[:] = False
    free[:60] = True
    free[60:] = True
    F = arrange(F0, free)
    assert carry_factor(R0, K[np.ix_(F0, F0)], positions_in(F0, F), F, block) is None
    # a factor that is not K's: refinement cannot bring the residual to the bound
    KF = K[np.ix_(F0, F0)]
    r = np.ones(F0.size)
    wrong = R0.copy()
    wrong[0, 0] *= 1.5
    assert carried_solve(wrong, KF, None, r, factor_solve) is None
    x = carried_solve(R0, KF, None, r, factor_solve)
    assert x is not None
    norm = float(np.abs(KF).sum(axis=0).max()) + 1.0
    res, bound = bordered_residual(lambda v: KF @ v, None, x * (1 + 1e-6), r, norm)
    assert np.max(np.abs(res)) > bound


def _local_problem(seed):
    from sklearn.datasets import make_blobs
    X, y = make_blobs(500, centers=2, random_state=seed)
    return cl.SVM(X, y, C=1.0, kernel="rbf", gamma=10.0)


@pytest.mark.parametrize("seed", [0, 1])
def test_polish_with_carried_factors_is_certified_and_matches_fresh(seed, monkeypatch):
    calls = []
    original = polish_face.carry_factor

    def counted(*args):
        out = original(*args)
        calls.append(out is not None)
        return out

    # the general path's polish (a small problem's one-call path has its own)
    monkeypatch.setattr(small_certified, "small_applies", lambda svm, cache_size: False)
    monkeypatch.setattr(polish_face, "carry_factor", counted)
    sol = _local_problem(seed).solve()
    assert sol.status == "optimal" and sol.report.relative_gap <= 1e-9
    assert any(calls)                   # the local kernel's rounds carried their factor
    monkeypatch.setattr(polish_face, "carry_factor", lambda *a: None)
    fresh = _local_problem(seed).solve()
    assert fresh.status == "optimal"
    scale = max(1.0, abs(fresh.objective))
    assert abs(sol.objective - fresh.objective) <= 1e-9 * scale
    # a perturbed answer fails the certificate recomputed from the data
    svm = _local_problem(seed)
    bad = svm.from_alpha(np.clip(sol.alpha * (1 + 1e-3), 0.0, svm.C_bounds))
    assert not (svm.kkt(bad, tol=1e-6).passed and svm.kkt(bad).relative_gap <= 1e-9)


def test_drop_ratio_and_join_ratio_are_positive():
    assert polish_carry.DROP_RATIO > 0 and polish_carry.JOIN_RATIO > 1
