"""The exact lasso path: breakpoints against scikit-learn's lars_path, interpolation against
the declarative cvxpy problem solved at a lam between two breakpoints, and a certificate that
fails on a perturbed point."""

import numpy as np
import pytest
from sklearn.datasets import load_diabetes
from sklearn.linear_model import lars_path

import convexlearn as cl
from convexlearn.solvers.erm.homotopy import lasso_homotopy

DIABETES = load_diabetes(return_X_y=True)


def test_breakpoints_match_lars_path_on_diabetes():
    X, y = DIABETES
    path = lasso_homotopy(X, y)
    # lars_path solves 1/(2n) ||y - X w||^2 + alpha ||w||_1 on centred data: alpha = lam / 2.
    alphas, _, coefs = lars_path(X - X.mean(0), y - y.mean(), method="lasso")
    assert len(path.lams) == len(alphas)
    np.testing.assert_allclose(path.lams / 2, alphas, rtol=1e-12, atol=1e-14 * alphas[0])
    np.testing.assert_allclose(path.coefs, coefs.T, rtol=0, atol=1e-9 * np.abs(coefs).max())
    assert path.kkt_residuals().max() <= 1e-12
    assert path.lams[-1] == 0.0 and path.events[0] == "start" and path.events[-1] == "end"


def _cvxpy_lasso(X, y, lam):
    erm = cl.ERM(X, y, loss="squared", penalty="l1", lam=lam)
    problem = erm.problem()
    problem.solve(solver="CLARABEL", tol_gap_abs=1e-12, tol_gap_rel=1e-12, tol_feas=1e-12)
    return erm, problem.value


@pytest.mark.parametrize("t", [0.3, 0.75])
def test_interpolation_between_breakpoints_is_the_solution(t):
    X, y = DIABETES
    path = lasso_homotopy(X, y)
    k = 4
    lam = (1 - t) * path.lams[k] + t * path.lams[k + 1]
    w, b = path.at(lam)
    erm, f_star = _cvxpy_lasso(X, y, lam)
    f_path = erm.objective(w, b)
    assert f_path <= f_star + 1e-9 * abs(f_star)       # no worse than the interior point
    assert f_star - f_path <= 1e-7 * abs(f_star)        # and Clarabel agrees to its accuracy
    assert np.count_nonzero(w) == np.count_nonzero(path.coefs[k + 1] + path.coefs[k])


def test_a_perturbed_breakpoint_fails_its_certificate():
    X, y = DIABETES
    path = lasso_homotopy(X, y)
    path.coefs[5] = path.coefs[5] * (1 + 1e-4)
    residuals = path.kkt_residuals()
    assert residuals[5] > 1e-6 and np.delete(residuals, 5).max() <= 1e-12


@pytest.mark.parametrize("intercept", [True, False])
def test_wide_data_path_ends_at_the_interpolating_fit(intercept):
    rng = np.random.default_rng(0)
    X, y = rng.normal(size=(30, 80)), rng.normal(size=30)
    path = lasso_homotopy(X, y, intercept=intercept)
    assert path.kkt_residuals().max() <= 1e-12
    w, b = path.at(0.0)
    assert np.abs(y - X @ w - b).max() <= 1e-9 * np.abs(y).max()   # interpolates
    assert np.count_nonzero(w) <= 30 - intercept


def test_scale_invariance_of_the_breakpoints():
    X, y = DIABETES
    base = lasso_homotopy(X, y)
    scaled = lasso_homotopy(X * 1e6, y * 1e-3)
    # w -> w t / s, F -> t^2 F, so lam -> lam t s (X scaled by s = 1e6, y by t = 1e-3).
    np.testing.assert_allclose(scaled.lams, base.lams * 1e-3 * 1e6, rtol=1e-9)
    np.testing.assert_allclose(scaled.coefs * 1e9, base.coefs, atol=1e-9 * np.abs(base.coefs).max())
    assert scaled.kkt_residuals().max() <= 1e-12


def test_lam_below_the_path_is_refused():
    X, y = DIABETES
    path = lasso_homotopy(X, y, lam_min=0.01)
    assert path.lams[-1] == pytest.approx(0.01)
    with pytest.raises(ValueError, match="outside the computed path"):
        path.at(0.001)


def test_erm_path_exact_through_the_public_api():
    X, y = DIABETES
    erm = cl.ERM(X, y, loss="squared", penalty="l1", lam=1.0)
    path = erm.path([0.01, 1.0], exact=True)
    assert path.exact and path.certified and path.parameter == "lam"
    assert path.values[-1] == pytest.approx(0.01) and erm.lam == 1.0
    lam = 0.5 * (path.values[2] + path.values[3])
    between = path.at(lam)
    assert between.status == "optimal"
    erm.lam = lam
    fresh = erm.solve()
    assert abs(between.objective - fresh.objective) <= 1e-9 * abs(fresh.objective)
    with pytest.raises(cl.NotApplicableError, match="lasso"):
        cl.ERM(X, y, loss="squared", penalty="l2", lam=1.0).path([0.1, 1.0], exact=True)


def _correlated(seed, n=300, d=40):
    rng = np.random.default_rng(seed)
    X = np.sqrt(0.5) * rng.standard_normal((n, d)) + np.sqrt(0.5) * rng.standard_normal((n, 1))
    w = np.zeros(d)
    w[:5] = rng.standard_normal(5)
    return X, X @ w + rng.standard_normal(n)


@pytest.mark.parametrize("seed", [22, 73])
def test_a_feature_that_just_joined_does_not_leave_through_round_off(seed):
    # Found on n=50000, d=200 (and these seeds): the zero of a feature that just joined,
    # recomputed ~1e-12 below mu, passed for a leave; the path went on with a wrong active
    # set (KKT residual ~1e-5 at every later breakpoint).
    X, y = _correlated(seed)
    Xc, yc = X - X.mean(0), y - y.mean()
    lam_min = 1e-4 * 2 * np.abs(Xc.T @ yc).max() / len(y)
    path = lasso_homotopy(X, y, lam_min=lam_min)
    assert path.kkt_residuals().max() <= 1e-12
    for before, after in zip(path.events, path.events[1:]):
        assert not (before.startswith("join") and after == before.replace("join", "leave"))
    alphas, _, coefs = lars_path(Xc, yc, method="lasso", alpha_min=lam_min / 2)
    assert len(path.lams) == len(alphas)
    np.testing.assert_allclose(path.lams / 2, alphas, rtol=1e-9, atol=1e-13 * alphas[0])
    np.testing.assert_allclose(path.coefs, coefs.T, rtol=0, atol=1e-9 * np.abs(coefs).max())


def test_gram_summary_is_the_products_of_the_centred_data():
    from convexlearn.certify.lasso_gram import gram_summary
    rng = np.random.default_rng(0)
    X = rng.normal(size=(1000, 7)) * [1, 10, 1e-3, 1, 1, 5, 2] + 100.0   # large means
    y = rng.normal(size=1000) + 50.0
    Xc, yc = X - X.mean(0), y - y.mean()
    s = gram_summary(X, y, True, block=96)
    np.testing.assert_allclose(s.gram, Xc.T @ Xc, rtol=1e-12,
                               atol=1e-12 * np.abs(Xc.T @ Xc).max())
    np.testing.assert_allclose(s.xty, Xc.T @ yc, rtol=1e-10, atol=1e-12 * np.abs(Xc.T @ yc).max())
    assert s.yty == pytest.approx(yc @ yc, rel=1e-12)
    np.testing.assert_allclose(s.units, np.sqrt((X * X).mean(0)), rtol=1e-12)
    assert np.abs(s.x_dev).max() <= 1e-9 * np.abs(X).sum(0).max() and abs(s.y_dev) <= 1e-9 * 50e3
    # the homotopy from a summary is the homotopy that computes its own
    a, b = lasso_homotopy(X, y, lam_min=1e-3), lasso_homotopy(X, y, lam_min=1e-3, summary=s)
    assert a.events == b.events
    np.testing.assert_allclose(a.coefs, b.coefs, rtol=0, atol=1e-9 * np.abs(a.coefs).max())
