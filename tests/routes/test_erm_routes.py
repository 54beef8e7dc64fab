"""The fast certified routes of ERM.solve() against the cvxpy route, and their parts:
coordinate descent (numba against its numpy reference, dense against CSC), exact zeros,
the relative certificate, paths."""

from pathlib import Path as FilePath

import numpy as np
import pytest
import scipy.sparse as sp

import convexlearn as cl
from convexlearn.losses import make_loss
from convexlearn.penalties import make_penalty
from convexlearn.routes.erm import exact_chain
from convexlearn.solvers.erm import cd as cdmod
from helpers import binary_dataset

PROBLEMS = FilePath(__file__).resolve().parents[2] / "problems"
LOSSES = ["logistic", "squared", "exponential", "squared_hinge", "hinge", "perceptron",
          "squared_classification"]
PENALTIES = [("none", {}), ("l2", {}), ("l1", {}), ("elastic_net", {"l1_ratio": 0.3}),
             ("lp", {"p": 1.5})]
EXPECTED_ROUTE = {("hinge", "l2"): "svm", ("hinge", "l1"): "lp", ("hinge", "none"): "lp",
                  ("logistic", "l1"): "cd", ("logistic", "elastic_net"): "cd",
                  ("squared", "l1"): "cd", ("squared", "elastic_net"): "cd",
                  ("squared_classification", "l1"): "cd",
                  ("squared_classification", "elastic_net"): "cd"}


def _data(seed=0, n=80, d=6):
    rng = np.random.default_rng(seed)
    # correlated features of mixed scales, not centred: the routes must cope
    Z = rng.standard_normal((n, d))
    X = (Z + 0.6 * Z[:, [0]]) * np.geomspace(0.1, 30.0, d) + 2.0
    t = X @ rng.standard_normal(d) / np.abs(X).mean(axis=0).sum() + 0.7 * rng.standard_normal(n)
    return X, np.where(t > np.median(t), 1, 0), 10 * t + 50


def _expected(loss, penalty):
    if loss == "perceptron":        # F >= 0 = F(0, 0) whatever the penalty
        return "zero"
    if (loss, penalty) in EXPECTED_ROUTE:
        return EXPECTED_ROUTE[(loss, penalty)]
    if penalty in ("none", "l2") and loss not in ("hinge", "perceptron"):
        return "newton"
    return "exact-primal"


CASES = [(loss, pen, params) for loss in LOSSES for pen, params in PENALTIES]


@pytest.mark.parametrize("loss,penalty,params", CASES, ids=[f"{a}-{b}" for a, b, _ in CASES])
def test_fast_route_agrees_with_cvxpy_and_certifies(loss, penalty, params):
    X, yc, yr = _data(seed=len(loss) + len(penalty))
    y = yr if loss == "squared" else yc
    erm = cl.ERM(X, y, loss=loss, penalty=penalty, lam=0.03, **params)
    sol = erm.solve()
    assert sol.provenance["route"] == _expected(loss, penalty), sol.provenance
    assert sol.ok and sol.report.relative_distance <= 1e-9, sol.report.summary()
    ref = erm.solve("exact-primal")
    # (floor: F* = 0 for the perceptron, where both answers are round-off)
    rel = (sol.objective - ref.objective) / max(abs(ref.objective), 1e-3)
    assert abs(rel) <= 1e-9, f"{erm}: route {sol.provenance['route']} vs cvxpy: {rel:.2e}"
    # a perturbed answer fails its certificate
    bad = cl.Solution(w=sol.w * (1 + 1e-3) + 1e-3 * np.abs(sol.w).max(initial=1.0),
                      b=sol.b + 1e-3)
    assert not erm.certificate(bad).passed


@pytest.mark.parametrize("loss,intercept", [("logistic", True), ("squared_hinge", False)])
def test_newton_route_with_subsampled_and_reused_hessians_agrees_with_cvxpy(loss, intercept):
    # n = 800 >= 20 (d + 1): the route's Newton starts on every 8th row, ends on all rows
    # and (run past its certificate, to its last resort) reuses a factor in its last
    # steps; the answer is the cvxpy one all the same.
    from convexlearn.routes.erm_newton import newton_route
    X, yc, _ = _data(seed=11, n=800, d=4)
    erm = cl.ERM(X, yc, loss=loss, penalty="l2", lam=1e-3, intercept=intercept)
    sol = erm.solve()
    rows = sol.history["hessian_rows"]
    assert sol.provenance["route"] == "newton" and rows[0] == 100 and rows[-1] == 800
    deep = newton_route(erm, tol=0.0)            # no certificate passes at 0
    assert 0 in deep.history["hessian_formed"][:-1]
    assert abs(deep.objective - sol.objective) <= 1e-12 * abs(sol.objective)
    assert sol.ok and sol.report.relative_distance <= 1e-9
    assert sol.report.relative_gap <= 1e-9
    ref = erm.solve("exact-primal")
    assert abs(sol.objective - ref.objective) <= 1e-9 * abs(ref.objective)
    bad = cl.Solution(w=sol.w * (1 + 1e-6), b=sol.b)
    assert not erm.certificate(bad).passed


def _catalogue_erm():
    from convexlearn.app.catalogue import load_problem
    out = []
    for path in sorted(PROBLEMS.glob("*.toml")):
        prob = load_problem(path)
        if prob.kind == "erm":
            out.append(prob)
    return out


def test_catalogue_erm_problems_fast_route_equals_cvxpy():
    problems = _catalogue_erm()
    assert len(problems) >= 4
    for prob in problems:
        m = prob.model
        params = {k: m[k] for k in ("p", "l1_ratio") if m.get(k) is not None}
        erm = cl.ERM(prob.data.X, prob.data.y, loss=m["loss"], penalty=m["penalty"],
                     lam=m["lam"], intercept=m.get("intercept", True), **params)
        sol, ref = erm.solve(), erm.solve("exact-primal")
        assert sol.ok, f"{prob.name}: {sol.report.summary()}"
        assert sol.objective == pytest.approx(ref.objective, rel=1e-9), prob.name
        assert sol.objective <= ref.objective * (1 + 1e-12) + 1e-300, prob.name


@pytest.mark.parametrize("route_loss", ["squared", "logistic"])
def test_l1_zeros_are_exactly_zero(route_loss):
    X, yc, yr = _data(seed=3, d=12)
    erm = cl.ERM(X, yr if route_loss == "squared" else yc, loss=route_loss, penalty="l1",
                 lam=3.0 if route_loss == "squared" else 0.05)
    sol = erm.solve()
    zeros = sol.report.details["zero_coordinates"]
    assert sol.provenance["route"] == "cd" and zeros.size > 0
    assert np.all(sol.w[zeros] == 0.0) and np.all(sol.w[sol.w != 0] != 0)
    assert np.count_nonzero(sol.w) == X.shape[1] - zeros.size
    # the cvxpy answer leaves residues where the certificate sees zeros
    ref = erm.solve("exact-primal", certify=True)
    assert np.count_nonzero(ref.w) >= np.count_nonzero(sol.w)


def test_hinge_l1_lp_route_gives_exact_zeros():
    X, yc, _ = _data(seed=4, d=10)
    sol = cl.ERM(X, yc, loss="hinge", penalty="l1", lam=0.05).solve()
    assert sol.provenance["route"] == "lp" and sol.ok
    assert np.all(sol.w[sol.report.details["zero_coordinates"]] == 0.0)


# ------------------------------------------------------------- coordinate descent
def _cd_problem(seed=0, n=60, d=9):
    rng = np.random.default_rng(seed)
    X = rng.standard_normal((n, d))
    X[rng.random((n, d)) < 0.5] = 0.0
    h = rng.random(n) + 0.5
    q = rng.standard_normal(n)
    w = np.where(rng.random(d) < 0.5, rng.standard_normal(d), 0.0)
    return X, h, q, w, np.einsum("ij,ij,i->j", X, X, h) / n


def test_cd_numba_sweeps_equal_the_numpy_reference():
    X, h, q, w, hdiag = _cd_problem()
    coords = np.arange(X.shape[1], dtype=np.int64)
    args = (h, 0.05, 0.02, 1.0 / X.shape[0])
    ref_q, ref_w = q.copy(), w.copy()
    worst_ref = cdmod.epoch_reference(X, args[0], ref_q, ref_w, coords, hdiag, *args[1:])
    for Xk, kernel in ((np.asfortranarray(X), "dense"), (sp.csc_matrix(X), "csc")):
        qq, ww = q.copy(), w.copy()
        if kernel == "dense":
            worst = cdmod.residual_epoch(Xk, h, qq, ww, coords, hdiag, 0.05, 0.02, 1 / X.shape[0])
        else:
            worst = cdmod.csc_epoch(Xk.data, Xk.indices, Xk.indptr, h, qq, ww, coords, hdiag,
                                     0.05, 0.02, 1 / X.shape[0])
        np.testing.assert_allclose(ww, ref_w, rtol=1e-12, atol=1e-14, err_msg=kernel)
        np.testing.assert_allclose(qq, ref_q, rtol=1e-12, atol=1e-14, err_msg=kernel)
        assert worst == pytest.approx(worst_ref, rel=1e-12)
    G = X.T @ X / X.shape[0]
    grad = G @ w - 0.3
    g1, w1, g2, w2 = grad.copy(), w.copy(), grad.copy(), w.copy()
    a = cdmod.gram_epoch(G, g1, w1, coords, 0.05, 0.02)
    b = cdmod.gram_epoch_reference(G, g2, w2, coords, 0.05, 0.02)
    np.testing.assert_allclose(w1, w2, rtol=1e-12, atol=1e-14)
    np.testing.assert_allclose(g1, g2, rtol=1e-12, atol=1e-14)
    assert a == pytest.approx(b, rel=1e-12)


@pytest.mark.parametrize("loss", ["squared", "logistic"])
def test_cd_sparse_equals_dense_and_numba_equals_reference(loss):
    X, yc, yr = _data(seed=5, n=50, d=7)
    X[np.random.default_rng(0).random(X.shape) < 0.4] = 0.0
    y = yr if loss == "squared" else np.where(yc == 1, 1.0, -1.0)
    lo, pen = make_loss(loss), make_penalty("elastic_net", l1_ratio=0.7)
    dense = cdmod.coordinate_descent(X, y, lo, pen, 0.05)
    csc = cdmod.coordinate_descent(sp.csc_matrix(X), y, lo, pen, 0.05)
    slow = cdmod.coordinate_descent(X, y, lo, pen, 0.05, use_numba=False)
    for other in (csc, slow):
        np.testing.assert_allclose(other[0], dense[0], rtol=1e-8, atol=1e-10)
        assert other[1] == pytest.approx(dense[1], rel=1e-8, abs=1e-10)
        np.testing.assert_array_equal(other[0] == 0, dense[0] == 0)


def test_method_cd_is_an_iterative_method_with_a_certified_status():
    X, _, yr = _data(seed=6)
    erm = cl.ERM(X, yr, loss="squared", penalty="l1", lam=0.1)
    sol = erm.solve("cd")
    assert sol.method == "cd" and sol.ok
    with pytest.raises(cl.NotApplicableError, match="'cd'.*squared"):
        cl.ERM(X, yr, loss="squared", penalty="lp", p=1.5).solve("cd")


# ------------------------------------------------------------------ certificate
def test_raw_breast_cancer_elastic_net_mean_area_is_certified():
    # Found on main: stationarity 3.7e-4 in the target's units (area ~ 1000) against
    # F ~ 8.8e4 was called "inaccurate"; relative to its own terms it is round-off.
    from sklearn.datasets import load_breast_cancer
    data = load_breast_cancer()
    j = list(data.feature_names).index("mean area")
    X, y = np.delete(data.data, j, axis=1), data.data[:, j]
    erm = cl.ERM(X, y, loss="squared", penalty="elastic_net", lam=1.0, l1_ratio=0.5)
    sol = erm.solve()
    assert sol.ok and sol.report.relative_distance <= 1e-9, sol.report.summary()
    assert sol.objective <= erm.solve("exact-primal").objective * (1 + 1e-9)


def test_digits_iterative_optimal_is_close_in_objective():
    # |F*| < 1 and raw pixels: "optimal" at the iterative tolerance 1e-6 must be within
    # ~1e-6 relative of F* (the relative duality gap bounds it), not 2e-5 away.
    X, y = binary_dataset("digits", (4, 9), standardized=False)
    erm = cl.ERM(X, y, loss="logistic", penalty="l2", lam=1e-3)
    exact = erm.solve()
    for method, opts in (("newton", {}), ("gd", {"max_iter": 3000})):
        sol = erm.solve(method, tol=1e-5, **opts)
        rel = (sol.objective - exact.objective) / exact.objective
        if sol.ok:
            assert rel <= 1e-6, f"{method}: 'optimal' at {rel:.1e} relative"
        assert sol.report.relative_gap >= rel * (1 - 1e-6) - 1e-15   # the gap bounds F - F*


# ------------------------------------------------------------------------ paths
def _lasso_grid(X, yr, k=12, ratio=1e-3):
    lam_max = 2 * np.abs((X - X.mean(0)).T @ (yr - yr.mean())).max() / len(yr)
    return lam_max * np.geomspace(1.0, ratio, k)


def test_lasso_path_is_read_off_the_homotopy_and_certified():
    X, _, yr = _data(seed=7, n=100, d=15)
    erm = cl.ERM(X, yr, loss="squared", penalty="l1", lam=1.0)
    lams = _lasso_grid(X, yr)
    path = erm.path(lams)
    assert isinstance(path, cl.Path) and path.certified and len(path) == 12
    assert "12/12 certified" in repr(path) and erm.lam == 1.0
    assert path.provenance["routes"] == ["lasso-homotopy"]
    np.testing.assert_array_equal(path.values, lams)
    assert np.count_nonzero(path[0].w) == 0
    for lam, sol in zip(lams[::4], path.solutions[::4]):
        assert sol.report.relative_distance <= 1e-9 and sol.report.relative_gap <= 1e-9
        fresh = cl.ERM(X, yr, loss="squared", penalty="l1", lam=lam).solve("exact-primal")
        assert sol.objective == pytest.approx(fresh.objective, rel=1e-9)
        assert sol.objective <= fresh.objective * (1 + 1e-12)
    # the same points as coordinate descent's (the exact chain at each lam), to 1e-9
    for lam, sol in zip(lams[1::3], path.solutions[1::3]):
        cd = cl.ERM(X, yr, loss="squared", penalty="l1", lam=lam).solve()
        assert cd.provenance["route"] == "cd"
        np.testing.assert_allclose(sol.w, cd.w, atol=1e-9 * np.abs(cd.w).max())
        assert sol.objective == pytest.approx(cd.objective, rel=1e-12)


def test_lasso_path_point_that_fails_its_certificate_falls_back_to_cd(monkeypatch):
    from convexlearn.routes import erm_path
    X, _, yr = _data(seed=7, n=100, d=15)
    lams = _lasso_grid(X, yr, k=8)
    exact_points = erm_path._homotopy_points

    def spoiled(erm, grid, summary):
        raw = exact_points(erm, grid, summary)
        raw[3].w = raw[3].w * (1 + 1e-6)         # a perturbed answer
        raw[5] = None                            # a point the homotopy did not reach
        return raw

    monkeypatch.setattr(erm_path, "_homotopy_points", spoiled)
    path = cl.ERM(X, yr, loss="squared", penalty="l1", lam=1.0).path(lams)
    assert path.certified
    routes = [s.provenance["route"] for s in path]
    assert routes == ["lasso-homotopy"] * 3 + ["cd", "lasso-homotopy", "cd"] + \
        ["lasso-homotopy"] * 2
    assert "certificate failed" in path[3].provenance["fallback_from"]["lasso-homotopy"]
    assert path[5].provenance["fallback_from"]["lasso-homotopy"] == "route failed"
    monkeypatch.undo()
    clean = cl.ERM(X, yr, loss="squared", penalty="l1", lam=1.0).path(lams)
    for k in (3, 5):
        assert path[k].objective == pytest.approx(clean[k].objective, rel=1e-12)


@pytest.mark.parametrize("intercept", [True, False])
def test_lasso_path_in_any_order_with_points_above_lam_max(intercept):
    X, _, yr = _data(seed=9, n=90, d=12)
    Xc = X - X.mean(0) if intercept else X
    yc = yr - yr.mean() if intercept else yr
    lam_max = 2 * np.abs(Xc.T @ yc).max() / len(yr)
    grid = lam_max * np.geomspace(1.0, 1e-3, 6)
    lams = [grid[3], 3 * lam_max, grid[5], grid[3], grid[1], lam_max]
    erm = cl.ERM(X, yr, loss="squared", penalty="l1", lam=1.0, intercept=intercept)
    path = erm.path(lams)
    assert path.certified and path.provenance["routes"] == ["lasso-homotopy"]
    assert np.count_nonzero(path[1].w) == 0 and np.count_nonzero(path[5].w) == 0
    np.testing.assert_array_equal(path[0].w, path[3].w)
    for lam, sol in zip(lams, path):
        erm.lam = lam
        ref = erm.solve("exact-primal")
        assert sol.objective == pytest.approx(ref.objective, rel=1e-9)
        assert intercept or sol.b == 0.0


def test_elastic_net_path_is_warm_started_and_screened():
    X, _, yr = _data(seed=7, n=100, d=15)
    erm = cl.ERM(X, yr, loss="squared", penalty="elastic_net", l1_ratio=0.7, lam=1.0)
    path = erm.path(_lasso_grid(X, yr) / 0.7)
    assert path.certified and path.provenance["routes"] == ["cd"]
    assert sum(s.provenance["screened"] for s in path) > 0        # the strong rule worked


@pytest.mark.parametrize("loss", ["logistic", "squared_hinge", "hinge"])
def test_batch_products_are_the_per_point_products(loss):
    from convexlearn.certify.optimality import fixed_multipliers
    from convexlearn.routes.erm_path import _batch_products, _support_columns
    X, yc, _ = _data(seed=3, n=60, d=5)
    erm = cl.ERM(X, yc, loss=loss, penalty="l1", lam=0.1)
    rng = np.random.default_rng(0)
    sols = [cl.Solution(w=rng.normal(size=5) * (rng.uniform(size=5) < 0.5),
                        b=float(rng.normal())) for _ in range(4)]
    sols[1].w = np.zeros(5)
    for sparse_support in (False, True):
        if sparse_support:
            for sol in sols:
                sol.w[[1, 3, 4]] = 0.0      # columns no point uses: left out of the scores
        cols, X_cols = _support_columns(erm, sols)
        assert (len(cols) <= 2 and X_cols.shape == (60, len(cols))) if sparse_support \
            else X_cols is erm.X
        scores, XTG = _batch_products(erm, sols, cols, X_cols)
        for i, sol in enumerate(sols):
            f = X @ sol.w + sol.b
            np.testing.assert_allclose(scores[i], f, rtol=1e-13, atol=1e-12 * np.abs(f).max())
            g = fixed_multipliers(erm.y, erm.loss, f)
            np.testing.assert_allclose(XTG[i], X.T @ g, rtol=1e-12,
                                       atol=1e-12 * np.abs(X).sum())


def test_logistic_l2_path_is_warm_started_newton():
    X, yc, _ = _data(seed=8)
    path = cl.ERM(X, yc, loss="logistic", penalty="l2").path(np.geomspace(1, 1e-3, 6))
    assert path.certified and {s.provenance["route"] for s in path} == {"newton"}
    iters = [s.n_iter for s in path]
    assert max(iters[1:]) <= 10 and path.objectives.shape == (6,)


def test_exact_chain_table():
    X, yc, yr = _data()
    assert exact_chain(cl.ERM(X, yc, loss="hinge", penalty="l2")) == ["svm", "exact-primal"]
    assert exact_chain(cl.ERM(X, yc, loss="hinge", penalty="l2", lam=0.0))[0] == "lp"
    assert exact_chain(cl.ERM(X, yr, loss="squared", penalty="lp", p=3)) == ["exact-primal"]


def test_svm_path_is_warm_started_and_certified():
    X, y = binary_dataset("breast_cancer")
    X, y = X[:120, :6], y[:120]
    Cs = [0.05, 0.5, 5.0, 1.0]            # up, then down: the warm start is scaled into the box
    svm = cl.SVM(X, y, C=2.0, kernel="rbf")
    path = svm.path(Cs)
    assert svm.C == 2.0 and isinstance(path, cl.Path) and path.certified
    assert path.parameter == "C" and list(path.values) == Cs
    assert [s.provenance["route"] for s in path][1:] == ["exact-smo (warm-started)"] * 3
    for C, sol in zip(Cs, path):
        fresh = cl.SVM(X, y, C=C, kernel="rbf").solve()
        assert sol.objective == pytest.approx(fresh.objective, rel=1e-6)
    with pytest.raises(cl.ParameterError):
        svm.path([1.0, -1.0])
