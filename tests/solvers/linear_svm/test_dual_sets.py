"""The sets' KKT system in the free multipliers' space (solvers/linear_svm/dual_sets.py)
against the w-space null-space method, its midpoint intercept with no free vector, and
the wide linear SVM that its cheap rounds let the chunk polish certify early."""

import numpy as np
import pytest
from sklearn.datasets import make_classification

import convexlearn as cl
from convexlearn.solvers.linear_svm.dual_sets import dual_sets_solve, dual_solve_pays
from convexlearn.solvers.linear_svm.linear_active_set import column_scaling, kkt_step


def _rows(n, d, intercept, seed):
    rng = np.random.default_rng(seed)
    Z = rng.standard_normal((n, d)) * np.exp(rng.uniform(-2, 2, d))
    y = np.where(rng.standard_normal(n) > 0, 1.0, -1.0)
    R = np.column_stack([Z, np.ones(n)]) if intercept else Z
    return y[:, None] * R, y


@pytest.mark.parametrize("intercept", [True, False])
@pytest.mark.parametrize("k", [1, 5, 12])
def test_matches_the_w_space_method(intercept, k):
    Zy, _ = _rows(60, 25, intercept, seed=k)
    p = Zy.shape[1]
    d = p - 1 if intercept else p
    rng = np.random.default_rng(100 + k)
    order = rng.permutation(60)
    free, bounded = order[:k], order[k:k + 20]
    C = rng.uniform(0.5, 2.0, 60)
    cB = Zy[bounded].T @ C[bounded]
    assert dual_solve_pays(k, p)
    w, b, a_F = dual_sets_solve(Zy, intercept, free, cB)
    u_ref, a_ref = kkt_step(Zy[free], cB, np.ones(k), d, column_scaling(Zy))
    u = np.append(w, b) if intercept else w
    np.testing.assert_allclose(u, u_ref, rtol=1e-9, atol=1e-9 * np.abs(u_ref).max())
    np.testing.assert_allclose(a_F, a_ref, rtol=1e-9, atol=1e-9 * np.abs(a_ref).max())
    # the system itself: free margins at 1, stationarity, the equality row
    np.testing.assert_allclose(Zy[free] @ u, 1.0, atol=1e-12)
    np.testing.assert_allclose(w, cB[:d] + Zy[free][:, :d].T @ a_F, atol=1e-12)
    if intercept:
        assert abs(cB[d] + Zy[free][:, d] @ a_F) <= 1e-10 * (abs(cB[d]) + np.abs(a_F).sum())
    # a perturbed multiplier breaks a free margin
    a_bad = a_F.copy()
    a_bad[0] *= 1.001
    w_bad = cB[:d] + Zy[free][:, :d].T @ a_bad
    u_bad = np.append(w_bad, b) if intercept else w_bad
    assert np.max(np.abs(Zy[free] @ u_bad - 1.0)) > 1e-8


def test_dependent_free_rows_are_refused():
    Zy, _ = _rows(40, 10, True, seed=3)
    Zy[1] = Zy[0]
    assert dual_sets_solve(Zy, True, np.array([0, 1, 2]), np.zeros(Zy.shape[1])) is None


def test_more_than_half_p_free_goes_to_the_w_space_method():
    assert dual_solve_pays(0, 31) and dual_solve_pays(15, 31)
    assert not dual_solve_pays(16, 31)


def test_no_free_vector_takes_the_midpoint_intercept():
    Zy, y = _rows(50, 6, True, seed=7)
    d = Zy.shape[1] - 1
    C = np.ones(50)
    bounded = np.zeros(50, dtype=bool)
    bounded[:10] = True
    cB = Zy[bounded].T @ C[bounded]
    w, b, a_F = dual_sets_solve(Zy, True, np.zeros(0, dtype=int), cB, zero=~bounded)
    assert a_F.size == 0 and np.array_equal(w, cB[:d])

    def worst(bb):      # the largest violation of the sets' margin rules at (w, bb)
        m = Zy[:, :d] @ w + y * bb
        return max(np.max(1.0 - m[~bounded], initial=0.0), np.max(m[bounded] - 1.0,
                                                                  initial=0.0))
    grid = b + np.linspace(-1.0, 1.0, 201) * max(1.0, abs(b))
    assert worst(b) <= min(worst(t) for t in grid) + 1e-12
    assert worst(b + 0.1 * max(1.0, abs(b))) > worst(b) or worst(b) == 0.0
    # without intercept b stays 0
    Zn = Zy[:, :d]
    assert dual_sets_solve(Zn, False, np.zeros(0, dtype=int), Zn[:10].sum(0),
                           zero=~bounded)[1] == 0.0


def test_wide_svm_certified_by_a_chunk_polish_before_the_epoch_budget():
    # d > n, few free vectors (C small): the polish of a DCD chunk is cheap in (a_F, b)
    # and certifies before DCD's 300 epochs (it ran them all before)
    X, y = make_classification(200, 300, n_informative=60, n_redundant=60, flip_y=0.05,
                               random_state=5)
    # (C = 1 / (n lam), lam = lam_max / 2 of hinge + l2: the ERM sweep's case, seed 5;
    # before: the short run's polish failed and DCD ran all 300 epochs)
    sol = cl.SVM(X, y, C=0.0016681513981949905, kernel="linear").solve(method="exact-linear")
    assert sol.status == "optimal"
    assert abs(sol.extra["certificate"]["relative_gap"]) <= 1e-9
    assert sol.n_iter < 300
    assert sol.provenance["polish"] == "pdas"
    assert sol.provenance["warm_start"].endswith("epochs)")      # a chunk's polish
