"""The robust regression losses (absolute, quantile, epsilon-insensitive, Huber): their
definitions, their routes and certificates, and scikit-learn's counterparts.

Conventions (docs/conventions.md), r = y - f the residual, F = (1/n) sum loss + lam R(w):

* QuantileRegressor(quantile=tau, alpha) minimizes (1/n) sum pinball_tau + alpha ||w||_1,
  intercept unpenalized: our F with loss="quantile", penalty="l1", lam = alpha (F equal).
* LinearSVR(C, epsilon, loss="epsilon_insensitive") minimizes 1/2 ||w||^2 + C sum
  max(0, |r| - epsilon), its intercept a penalized feature of value intercept_scaling s:
  our F on [X, s 1] without intercept, penalty "l2", lam = 1/(n C), F = F_SVR / (n C).
* HuberRegressor(epsilon, alpha) also fits a scale sigma: at its sigma, (w, b) minimizes our
  F with loss="huber", delta = epsilon sigma, penalty "l2", lam = alpha sigma / n.
"""

import math

import numpy as np
import pytest
import scipy.sparse as sp
from scipy.optimize import minimize_scalar
from sklearn.linear_model import HuberRegressor, QuantileRegressor
from sklearn.svm import LinearSVR

import convexlearn as cl
from convexlearn.errors import DataError, ParameterError
from convexlearn.estimators import ERMClassifier, ERMRegressor
from convexlearn.losses import LOSSES, Loss, make_loss, register_loss
from convexlearn.solution import Solution

ROBUST = [("absolute", {}), ("quantile", {"quantile": 0.3}),
          ("epsilon_insensitive", {"epsilon": 0.2}), ("huber", {"delta": 0.5})]
PIECEWISE = ROBUST[:3]


def _data(seed=0, n=150, d=5, scale=1.0):
    rng = np.random.default_rng(seed)
    X = rng.standard_normal((n, d)) + 0.2
    y = X @ rng.standard_normal(d) + 0.7 * rng.standard_t(2, n) + 1.0   # heavy tails
    return X * scale, y * scale


def _point(erm, w, b):
    return erm.certificate(Solution(w=np.asarray(w, float), b=float(b), objective=math.nan,
                                    status="converged", method="test"))


# ----------------------------------------------------------------- definitions
def _numeric(name, params, r):
    """The definitions in r = y - f, written independently of the catalogue."""
    if name == "absolute":
        return np.abs(r)
    if name == "quantile":
        tau = params["quantile"]
        return np.where(r >= 0, tau * r, (tau - 1) * r)
    if name == "epsilon_insensitive":
        return np.maximum(np.abs(r) - params["epsilon"], 0.0)
    delta = params["delta"]
    return np.where(np.abs(r) <= delta, 0.5 * r * r, delta * np.abs(r) - 0.5 * delta ** 2)


@pytest.mark.parametrize("name, params", ROBUST)
def test_value_and_derivative_follow_the_definitions(name, params):
    loss = make_loss(name, **params)
    y = np.linspace(-2, 2, 41)
    f = np.linspace(3, -3.3, 41) + 0.0123                 # off every kink
    np.testing.assert_allclose(loss.value(y, f), _numeric(name, params, y - f), rtol=1e-14)
    h = 1e-7
    fd = (_numeric(name, params, y - f - h) - _numeric(name, params, y - f + h)) / (2 * h)
    np.testing.assert_allclose(loss.derivative(y, f), fd, rtol=1e-6, atol=1e-7)
    assert loss.has("conjugate", "prox", "cvxpy", "lipschitz")
    assert loss.has("pieces") == (name != "huber")
    assert loss.has("hessian") == (name == "huber")      # the generalized one (semismooth)


@pytest.mark.parametrize("name, params", ROBUST)
def test_conjugate_is_the_supremum_and_fenchel_young_holds_on_the_subdifferential(name, params):
    loss = make_loss(name, **params)
    grid = np.linspace(-100, 100, 1000001)      # step 2e-4: the breakpoints lie on it
    y0 = 0.37
    for u in np.linspace(-1.2, 1.2, 25):
        sup = np.max(u * grid - _numeric(name, params, y0 - grid))
        ours = float(loss.conjugate(np.array([y0]), np.array([u]))[0])
        if math.isinf(ours):
            assert sup > 5.0          # outside the domain: unbounded along the grid
        else:
            assert ours == pytest.approx(sup, abs=1e-6)
    # Fenchel-Young: l(f) + l^*(g) = g f exactly for g in dl(f) (the ends of the interval
    # at a kink, the derivative elsewhere), > for g outside it
    y = np.full(7, y0)
    kinks = [y0 + k for k, _, _ in loss.kinks()]
    f = np.array(kinks + list(np.linspace(-2, 2, 7 - len(kinks))))
    lo, hi = loss.subdifferential(y, f, kink_tol=1e-12)
    for g in (lo, hi, 0.5 * (lo + hi)):
        np.testing.assert_allclose(loss.value(y, f) + loss.conjugate(y, g), g * f,
                                   rtol=1e-12, atol=1e-12)
    off = np.where(hi < 0.5, hi + 0.1, lo - 0.1)
    assert np.all(loss.value(y, f) + loss.conjugate(y, off) > off * f + 1e-9)


@pytest.mark.parametrize("name, params", ROBUST)
def test_prox_is_the_minimizer_that_defines_it(name, params):
    loss = make_loss(name, **params)
    y, t = 0.4, 0.7
    for v in np.linspace(-3, 3, 37):
        ours = float(loss.prox(np.array([y]), np.array([v]), t)[0])
        obj = lambda f: t * _numeric(name, params, np.array([y - f]))[0] + 0.5 * (f - v) ** 2
        num = minimize_scalar(obj, bounds=(-10, 10), method="bounded",
                              options={"xatol": 1e-12}).x
        assert obj(ours) <= obj(num) + 1e-14
        assert ours == pytest.approx(num, abs=1e-6)


@pytest.mark.parametrize("name, value, bound", [
    ("quantile", 0.0, r"quantile in \(0, 1\)"), ("quantile", 1.0, r"quantile in \(0, 1\)"),
    ("quantile", -0.2, r"quantile in \(0, 1\)"), ("quantile", math.nan, r"\(0, 1\)"),
    ("huber", 0.0, r"delta in \(0, inf\)"), ("huber", -1.0, r"delta in \(0, inf\)"),
    ("epsilon_insensitive", -0.1, r"epsilon in \[0, inf\)"),
    ("epsilon_insensitive", True, r"epsilon in \[0, inf\)")])
def test_bad_parameters_name_the_bound(name, value, bound):
    key = {"quantile": "quantile", "huber": "delta", "epsilon_insensitive": "epsilon"}[name]
    with pytest.raises(ParameterError, match=bound):
        make_loss(name, **{key: value})
    X, y = _data()
    with pytest.raises(ParameterError, match=bound):
        cl.ERM(X, y, loss=name, **{key: value})
    with pytest.raises(ParameterError, match=bound):
        ERMRegressor(loss=name, **{key: value}).fit(X, y)


def test_parameters_go_to_their_loss_only():
    with pytest.raises(ParameterError, match=r"unknown parameter.*'delta'.*'quantile'"):
        make_loss("quantile", delta=1.0)
    with pytest.raises(ParameterError, match="ready-made"):
        make_loss(make_loss("huber"), delta=2.0)
    assert make_loss("quantile", quantile=0.3).describe() == "quantile(quantile=0.3)"
    assert make_loss("epsilon_insensitive", epsilon=0.0).kinks() == [(0.0, -1.0, 1.0)]
    X, y = _data()
    a = cl.ERM(X, y, loss="quantile", quantile=0.3, penalty="l1", lam=0.01)
    b = cl.ERM(X, y, loss="quantile", quantile=0.7, penalty="l1", lam=0.01)
    assert a.fingerprint() != b.fingerprint()


def test_labels_and_tasks():
    """Decided: a regression loss takes any real targets (0/1 labels are numbers, fitted as
    such); non-numeric labels are refused, and the classifier refuses a regression loss."""
    X, y = _data(n=40)
    with pytest.raises(DataError, match="real numbers"):
        cl.ERM(X, np.where(y > 1, "yes", "no"), loss="quantile")
    with pytest.raises(ParameterError, match="needs a classification loss"):
        ERMClassifier(loss="huber").fit(X, y > 1)
    with pytest.raises(ParameterError, match="needs a regression loss"):
        ERMRegressor(loss="hinge").fit(X, y)
    with pytest.raises(DataError):
        cl.ERM(X, y, loss="hinge")               # 40 real targets are not two classes
    sol = cl.ERM(X, (y > 1).astype(float), loss="absolute", penalty="l1", lam=0.01).solve()
    assert sol.status == "optimal"


# -------------------------------------------------------------- routes, certificates
@pytest.mark.parametrize("name, params", ROBUST)
@pytest.mark.parametrize("penalty", ["none", "l1", "l2", "elastic_net"])
@pytest.mark.parametrize("intercept", [True, False])
def test_exact_is_certified_and_matches_the_cvxpy_formulation(name, params, penalty, intercept):
    X, y = _data(1)
    erm = cl.ERM(X, y, loss=name, penalty=penalty, lam=0.03, intercept=intercept, **params)
    sol = erm.solve()
    assert sol.status == "optimal", sol.report
    assert sol.report.relative_distance <= 1e-9
    if penalty != "none":
        assert sol.report.relative_gap <= 1e-9        # the Fenchel gap is defined
    ref = erm.solve("exact-primal")                     # the cvxpy problem (Clarabel)
    assert sol.objective <= ref.objective + 1e-9 * abs(ref.objective)
    assert sol.objective == pytest.approx(ref.objective, rel=1e-7)
    # the routes are chosen by capabilities
    route = sol.provenance["route"]
    if erm.loss.has("pieces") and penalty in ("none", "l1"):
        assert route == "dual-lp"
    if erm.loss.has("pieces") and penalty == "l2" and intercept:
        assert route == "dual-qp"
    if name == "huber" and penalty in ("none", "l2"):
        assert route == "newton"
    # and the certificate fails on a perturbed answer
    bad = _point(erm, sol.w * (1 + 1e-4) + 1e-4, sol.b + 1e-4)
    assert not bad.passed


@pytest.mark.parametrize("name, params", PIECEWISE)
def test_dual_lp_with_weights_sparse_data_and_copies(name, params):
    X, y = _data(2, n=80)
    s = np.random.default_rng(3).integers(0, 4, 80).astype(float)
    weighted = cl.ERM(X, y, loss=name, penalty="l1", lam=0.02, sample_weight=s, **params)
    sol = weighted.solve()
    assert sol.status == "optimal" and sol.provenance["route"] == "dual-lp", sol.report
    copies = cl.ERM(np.repeat(X, s.astype(int), axis=0), np.repeat(y, s.astype(int)),
                    loss=name, penalty="l1", lam=0.02, **params).solve()
    assert copies.objective == pytest.approx(sol.objective, rel=1e-12)
    sparse = cl.ERM(sp.csr_matrix(X), y, loss=name, penalty="l1", lam=0.02, **params).solve()
    dense = cl.ERM(X, y, loss=name, penalty="l1", lam=0.02, **params).solve()
    assert sparse.provenance["route"] == "dual-lp" and sparse.status == "optimal"
    assert sparse.objective == pytest.approx(dense.objective, rel=1e-12)


@pytest.mark.parametrize("name, params", PIECEWISE)
@pytest.mark.parametrize("intercept, weighted", [(True, False), (False, False), (True, True)])
def test_dual_qp_route_on_the_svm_core(name, params, intercept, weighted):
    """l2: the dual QP (SMO + polish) alone, certified, and equal to the cvxpy problem."""
    from convexlearn.routes.erm import solve_exact
    X, y = _data(9, n=120)
    s = np.random.default_rng(1).uniform(0.2, 3.0, 120) if weighted else None
    erm = cl.ERM(X, y, loss=name, penalty="l2", lam=0.02, intercept=intercept,
                 sample_weight=s, **params)
    sol = solve_exact(erm, routes=["dual-qp"])
    assert sol.status == "optimal" and sol.provenance["route"] == "dual-qp", sol.report
    assert sol.report.relative_gap <= 1e-9
    ref = erm.solve("exact-primal")
    assert sol.objective <= ref.objective + 1e-9 * abs(ref.objective)
    assert sol.objective == pytest.approx(ref.objective, rel=1e-7)


def test_a_piecewise_linear_loss_from_a_test_file_takes_the_dual_lp():
    """Capabilities, not names: a three-piece loss defined here (an asymmetric tube) is
    solved by the dual LP and certified, its conjugate and prox from its pieces."""
    bps, slopes = (-0.5, 0.2), (-0.7, 0.0, 1.3)
    psi = lambda r: np.maximum.reduce([slopes[0] * (r - bps[0]), 0 * r, slopes[2] * (r - bps[1])])
    tube = Loss("asymmetric_tube_test", "regression", "asymmetric tube", True, False, False,
                None, None, psi, _dphi=lambda r: np.where(r < bps[0], slopes[0],
                                                          np.where(r >= bps[1], slopes[2], 0.0)),
                lipschitz=1.3, shape="piecewise_linear", _pieces=(bps, slopes),
                _conj=lambda u: np.where((u < slopes[0]) | (u > slopes[2]), np.inf,
                                         np.maximum(bps[0] * u, bps[1] * u)))
    register_loss(tube)
    try:
        X, y = _data(4)
        erm = cl.ERM(X, y, loss="asymmetric_tube_test", penalty="l1", lam=0.02)
        sol = erm.solve()
        assert sol.status == "optimal" and sol.provenance["route"] == "dual-lp", sol.report
        assert sol.report.relative_gap <= 1e-9
        assert not tube.has("cvxpy")    # no cvxpy expression: the dual LP is its exact route
        assert not _point(erm, sol.w + 1e-4, sol.b).passed
        ridge = cl.ERM(X, y, loss="asymmetric_tube_test", penalty="l2", lam=0.02).solve()
        assert ridge.status == "optimal" and ridge.provenance["route"] == "dual-qp"
    finally:
        del LOSSES["asymmetric_tube_test"]


def test_huber_with_l1_goes_through_a_certified_route():
    X, y = _data(5)
    erm = cl.ERM(X, y, loss="huber", delta=0.8, penalty="l1", lam=0.3)
    sol = erm.solve()
    assert sol.status == "optimal" and sol.report.relative_gap <= 1e-9, sol.report
    assert np.any(sol.w == 0.0)      # the l1 zeros are exact


# ------------------------------------------------------------------ scikit-learn
@pytest.mark.parametrize("tau, alpha", [(0.3, 0.01), (0.5, 0.0), (0.8, 0.05)])
def test_quantile_regressor_same_objective_to_1e9(tau, alpha):
    X, y = _data(6, n=300, d=8)
    qr = QuantileRegressor(quantile=tau, alpha=alpha, solver="highs").fit(X, y)
    model = ERMRegressor(loss="quantile", quantile=tau, penalty="l1" if alpha else "none",
                         lam=alpha).fit(X, y)
    erm = cl.ERM(X, y, loss="quantile", quantile=tau, penalty="l1", lam=alpha)
    F_sk = erm.objective(qr.coef_, qr.intercept_)           # F = F_QuantileRegressor
    F_us = erm.objective(model.coef_, model.intercept_)
    assert model.solution_.status == "optimal"
    assert F_us <= F_sk * (1 + 1e-12)
    assert F_us == pytest.approx(F_sk, rel=1e-9)
    # an LP optimum is a vertex: scikit-learn's and ours interpolate the same samples here
    np.testing.assert_allclose(model.predict(X), qr.predict(X), rtol=1e-6, atol=1e-6)


@pytest.mark.parametrize("fit_intercept", [False, True])
def test_linear_svr_conversion(fit_intercept):
    X, y = _data(7, n=200, d=6)
    C, eps, s = 0.5, 0.3, 1.0
    svr = LinearSVR(C=C, epsilon=eps, loss="epsilon_insensitive", tol=1e-12, max_iter=10 ** 6,
                    fit_intercept=fit_intercept, intercept_scaling=s, dual=True).fit(X, y)
    n = X.shape[0]
    # LinearSVR penalizes its intercept as the weight of a feature of value s
    Z = np.column_stack([X, np.full(n, s)]) if fit_intercept else X
    erm = cl.ERM(Z, y, loss="epsilon_insensitive", epsilon=eps, penalty="l2",
                 lam=1.0 / (n * C), intercept=False)
    sol = erm.solve()
    assert sol.status == "optimal", sol.report
    theirs = np.append(svr.coef_, svr.intercept_ / s) if fit_intercept else svr.coef_
    F_sk = erm.objective(theirs)
    assert sol.objective <= F_sk * (1 + 1e-12)
    assert sol.objective == pytest.approx(F_sk, rel=1e-6)
    np.testing.assert_allclose(erm.decision_function(sol), Z @ theirs, rtol=1e-4, atol=1e-4)


def test_huber_regressor_at_its_fitted_scale():
    """Not the same problem (HuberRegressor also fits sigma); at its sigma, the (w, b) part
    is our Huber ERM with delta = epsilon sigma, lam = alpha sigma / n."""
    X, y = _data(8, n=200, d=4)
    hub = HuberRegressor(epsilon=1.35, alpha=0.5, tol=1e-12, max_iter=100000).fit(X, y)
    sigma, n = hub.scale_, X.shape[0]
    erm = cl.ERM(X, y, loss="huber", delta=1.35 * sigma, penalty="l2", lam=0.5 * sigma / n)
    sol = erm.solve()
    assert sol.status == "optimal"
    F_sk = erm.objective(hub.coef_, hub.intercept_)
    assert sol.objective <= F_sk * (1 + 1e-12)
    assert sol.objective == pytest.approx(F_sk, rel=1e-8)
    np.testing.assert_allclose(sol.w, hub.coef_, rtol=1e-4, atol=1e-5)


def test_verify_maps_a_quantile_regressor_and_refutes_a_perturbed_one():
    X, y = _data(10, n=200)
    s = np.random.default_rng(2).uniform(0.5, 2.0, 200)
    est = QuantileRegressor(quantile=0.7, alpha=0.02, solver="highs").fit(X, y, sample_weight=s)
    report = cl.verify(est, X, y, sample_weight=s)
    assert report.passed, report
    est.coef_ = est.coef_ * 1.001
    assert not cl.verify(est, X, y, sample_weight=s).passed


def test_the_dual_point_stays_in_a_bounded_conjugate_domain():
    """Centring g for the intercept would leave [-tau, 1 - tau]; the certificate's dual
    point shrinks one sign's side instead (a finite Fenchel gap, sum g = 0)."""
    from convexlearn.certify.duality import feasible_dual_point
    from convexlearn.penalties import make_penalty
    loss = make_loss("quantile", quantile=0.3)
    X = np.array([[1.0], [2.0], [3.0]])
    g = np.array([0.7, 0.7, -0.3])
    centred = g - g.mean()
    assert np.isinf(loss.conjugate(np.zeros(3), centred)).any()
    point, XTg = feasible_dual_point(X, loss, make_penalty("l2"), 0.1, True, g)
    assert abs(point.sum()) <= 1e-15
    assert np.all(np.isfinite(loss.conjugate(np.zeros(3), point)))
    np.testing.assert_allclose(XTg, X.T @ point, rtol=1e-14)
