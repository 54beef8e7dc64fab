"""The exact ERM problem: DPP path, conventions, equivalence with the SVM, bad input."""

import cvxpy as cp
import numpy as np
import pytest
from hypothesis import given, strategies as st

import convexlearn as cl
from convexlearn.errors import DataError, NotApplicableError, ParameterError
from helpers import binary_dataset, erm_grid_data

X, Y, Y_REG = erm_grid_data(seed=2)


def test_problem_is_dpp_in_lambda_and_matches_the_objective():
    erm = cl.ERM(X, Y, loss="logistic", penalty="elastic_net", lam=0.1, l1_ratio=0.5)
    prob = erm.problem()
    assert isinstance(prob, cp.Problem)
    assert prob.is_dcp(dpp=True)
    assert [p.name() for p in prob.parameters()] == ["lam"]
    sol = erm.solve("exact-primal")
    assert sol.provenance["cvxpy_objective"] == pytest.approx(sol.objective, rel=1e-9)
    # Recompute F by hand: (1/n) sum log(1 + exp(-m)) + lam (r ||w||_1 + (1-r)/2 ||w||^2).
    s = np.where(Y == 1, 1.0, -1.0)
    m = s * (X @ sol.w + sol.b)
    F = np.mean(np.log1p(np.exp(-m))) + 0.1 * (0.5 * np.abs(sol.w).sum() + 0.25 * sol.w @ sol.w)
    assert sol.objective == pytest.approx(F, rel=1e-12)


def test_path_reuses_the_compiled_problem_and_matches_fresh_solves():
    lams = np.geomspace(1.0, 1e-3, 5)
    erm = cl.ERM(X, Y_REG, loss="squared", penalty="l1", lam=0.3)
    problem = erm.problem()
    path = erm.path(lams)
    assert erm.problem() is problem and erm.lam == 0.3
    for lam, sol in zip(lams, path):
        fresh = cl.ERM(X, Y_REG, loss="squared", penalty="l1", lam=lam).solve()
        assert sol.extra["lam"] == lam
        assert sol.objective == pytest.approx(fresh.objective, rel=1e-8)
        assert sol.report.passed
    # Sparsity grows with lam.
    nnz = [np.sum(np.abs(s.w) > 1e-6) for s in path]
    assert nnz[0] <= nnz[-1]


@pytest.mark.parametrize("penalty", ["l1", "elastic_net"])
def test_cd_path_points_are_certified_and_equal_the_cvxpy_route(penalty):
    # Squared loss + l1 (the lasso's homotopy) or elastic net (coordinate descent, warm
    # started and screened): every point must pass the certificate on its own at 1e-9 and
    # agree with the cvxpy problem (an independent route), with exact zeros.
    lams = np.geomspace(1.0, 1e-3, 6)
    erm = cl.ERM(X, Y_REG, loss="squared", penalty=penalty, lam=0.3)
    path = erm.path(lams)
    route = "lasso-homotopy" if penalty == "l1" else "cd"
    assert path.certified and {s.provenance["route"] for s in path} == {route}
    for lam, sol in zip(lams, path):
        assert sol.report.relative_distance <= 1e-9
        erm.lam = lam
        ref = erm.solve("exact-primal")
        assert sol.objective <= ref.objective * (1 + 1e-9)
        assert sol.objective == pytest.approx(ref.objective, rel=1e-9)
        # a coordinate the certificate calls zero is exactly 0.0
        assert np.all(sol.w[sol.report.details["zero_coordinates"]] == 0.0)


@pytest.mark.parametrize("C", [0.05, 1.0, 20.0])
def test_hinge_l2_is_the_soft_margin_svm(C):
    Xb, yb = binary_dataset("breast_cancer")
    Xb, yb = Xb[:150, :8], yb[:150]
    n = len(yb)
    erm_sol = cl.ERM(Xb, yb, loss="hinge", penalty="l2", lam=1.0 / (n * C)).solve()
    svm = cl.SVM(Xb, yb, C=C)
    svm_sol = svm.solve()
    # F_SVM = n C F_ERM, and both are recomputed from the data at each other's points.
    assert svm_sol.objective == pytest.approx(n * C * erm_sol.objective, rel=1e-6)
    assert svm.primal_objective(erm_sol) == pytest.approx(svm_sol.objective, rel=1e-6)
    np.testing.assert_allclose(erm_sol.w, svm_sol.w, atol=1e-5 * max(1, np.abs(svm_sol.w).max()))


@pytest.mark.filterwarnings("ignore:invalid value encountered:RuntimeWarning")   # cvxpy bounds
def test_a_wrong_solver_answer_is_never_reported_optimal():
    # Separable data: hinge without penalty has F* = 0. cvxpy 1.9.3 + HiGHS answered
    # "optimal" with F = 1 (w = 0) on this problem; the certificate must not accept that.
    # (A fresh problem per solver: re-solving a problem that already holds values through
    # HiGHS raised a raw ValueError inside cvxpy 1.9.3.)
    Xs, ys = binary_dataset("iris", (0, 1))
    for solver in ("CLARABEL", "HIGHS"):
        sol = cl.ERM(Xs, ys, loss="hinge", penalty="none").solve(solver=solver)
        right = sol.objective <= 1e-8
        assert sol.ok == right, f"{solver}: F = {sol.objective}, status {sol.status}"
        assert sol.report.passed == right
    assert cl.ERM(Xs, ys, loss="hinge", penalty="none").solve().ok   # the default is right


def test_without_intercept_b_is_zero():
    erm = cl.ERM(X, Y, loss="squared_hinge", penalty="l2", lam=0.1, intercept=False)
    sol = erm.solve()
    assert sol.b == 0.0 and sol.report.passed
    with_b = cl.ERM(X, Y, loss="squared_hinge", penalty="l2", lam=0.1).solve()
    assert with_b.objective <= sol.objective + 1e-10


def test_predict_uses_the_original_labels_and_sign_zero_is_plus():
    Xs, ys = binary_dataset("iris", (0, 1))
    labels = np.where(ys == 1, "versicolor", "setosa")
    erm = cl.ERM(Xs, labels, loss="logistic", penalty="l2", lam=0.01)
    sol = erm.solve("newton")
    assert set(erm.classes) == {"setosa", "versicolor"}
    assert np.all(erm.predict(sol) == labels)
    zero = cl.Solution(w=np.zeros(Xs.shape[1]), b=0.0)
    assert np.all(erm.predict(zero) == "versicolor")     # classes[1] when f = 0


def test_evaluation_only_parts_evaluate_but_do_not_solve():
    erm = cl.ERM(X, Y, loss="zero_one", penalty="l0", lam=0.1)
    w = np.array([1.0, 0.0, -2.0, 0.0, 0.0])
    s = np.where(Y == 1, 1.0, -1.0)
    expected = np.mean(np.where(X @ w + 0.5 >= 0, 1.0, -1.0) != s) + 0.1 * 2
    assert erm.objective(w, 0.5) == pytest.approx(expected)
    for method in ("exact", "subgradient", "fista"):
        with pytest.raises(NotApplicableError, match="not convex"):
            erm.solve(method)
    l0 = cl.ERM(X, Y, loss="logistic", penalty="l0", lam=0.1)
    with pytest.raises(NotApplicableError, match=r"method 'exact'.*l0 penalty.*not convex"):
        l0.solve("exact")
    with pytest.raises(NotApplicableError):
        l0.problem()


# --------------------------------------------------------------------- bad input
@pytest.mark.parametrize("kwargs,error,match", [
    ({"lam": -0.1}, ParameterError, r"lam must be >= 0.*-0.1"),
    ({"lam": float("nan")}, ParameterError, "lam must be a number"),
    ({"loss": "tukey"}, ParameterError, r"unknown loss 'tukey'; valid: 'hinge'"),
    ({"penalty": "l3"}, ParameterError, r"unknown penalty 'l3'; valid: 'none'"),
    ({"penalty": "lp", "p": 0.5}, ParameterError, r"p must be a finite number >= 1.*0.5"),
    ({"penalty": "elastic_net", "l1_ratio": 1.5}, ParameterError, r"l1_ratio.*\[0, 1\].*1.5"),
    ({"penalty": "l2", "p": 2}, ParameterError, r"unknown parameter.*'p'.*penalty 'l2'"),
])
def test_bad_parameters(kwargs, error, match):
    args = {"loss": "logistic", "penalty": "l2", "lam": 0.1, **kwargs}
    with pytest.raises(error, match=match):
        cl.ERM(X, Y, **args)


def test_lam_setter_validates():
    erm = cl.ERM(X, Y)
    with pytest.raises(ParameterError, match="lam"):
        erm.lam = -1
    with pytest.raises(ParameterError, match="lam"):
        erm.path([0.1, -0.2])


def test_regression_loss_on_string_labels():
    labels = np.where(Y == 1, "yes", "no")
    with pytest.raises(DataError, match="real numbers for a regression loss.*'no'"):
        cl.ERM(X, labels, loss="squared", penalty="l2")


def test_classification_loss_on_continuous_targets():
    with pytest.raises(DataError, match="looks continuous.*regression loss"):
        cl.ERM(X, Y_REG, loss="logistic", penalty="l2")


def test_bad_data_is_caught_at_the_edge():
    Xn = X.copy()
    Xn[3, 1] = np.nan
    with pytest.raises(DataError, match="non-finite.*row 3, column 1"):
        cl.ERM(Xn, Y)
    with pytest.raises(DataError, match="X has 60 samples but y has 59"):
        cl.ERM(X, Y[:-1])
    with pytest.raises(DataError, match="one class"):
        cl.ERM(X, np.zeros(len(Y)), loss="hinge")


# ---------------------------------------------------------------- invariants
@given(st.permutations(list(range(20))))
def test_permuting_samples_changes_nothing(perm):
    Xs, ys = X[:20], Y[:20]
    base = cl.ERM(Xs, ys, loss="logistic", penalty="l2", lam=0.1).solve("newton", certify=False)
    p = np.asarray(perm)
    permuted = cl.ERM(Xs[p], ys[p], loss="logistic", penalty="l2", lam=0.1).solve(
        "newton", certify=False)
    np.testing.assert_allclose(permuted.w, base.w, atol=1e-9)
    assert permuted.b == pytest.approx(base.b, abs=1e-9)


@given(st.sampled_from(["logistic", "squared_hinge", "exponential", "hinge"]),
       st.sampled_from(["l1", "l2"]))
def test_label_flip_negates_the_solution(loss, penalty):
    # Margin losses depend on y f only: swapping the classes maps (w, b) to (-w, -b).
    a = cl.ERM(X, Y, loss=loss, penalty=penalty, lam=0.1).solve(certify=False)
    b = cl.ERM(X, 1 - Y, loss=loss, penalty=penalty, lam=0.1).solve(certify=False)
    assert b.objective == pytest.approx(a.objective, rel=1e-7)
    if loss != "hinge":   # the hinge minimizer need not be unique
        np.testing.assert_allclose(b.w, -a.w, atol=1e-5)


def test_wrong_shapes_and_unknown_options_are_parameter_errors():
    X = np.random.default_rng(2).normal(size=(30, 3))
    y = (X[:, 0] > 0).astype(int)
    erm = cl.ERM(X, y, loss="logistic", penalty="l2", lam=0.1)
    sol = erm.solve("newton")
    with pytest.raises(cl.ParameterError, match="built with 3"):
        erm.decision_function(sol, X[:, :2])
    with pytest.raises(cl.ParameterError, match="has no option.*'foo'"):
        erm.solve("gd", foo=1)
    bad = cl.Solution(w=np.zeros(2), b=0.0)
    with pytest.raises(cl.ParameterError, match="shape"):
        erm.optimality(bad)
    with pytest.raises(cl.ParameterError, match="shape"):
        erm.solve("gd", warm_start=bad)


def test_optimal_is_never_reported_without_the_certificate():
    X = np.random.default_rng(3).normal(size=(30, 3))
    y = X @ np.array([1.0, -2.0, 0.5])
    erm = cl.ERM(X, y, loss="squared", penalty="l2", lam=0.1)
    assert erm.solve("exact", certify=False).status == "optimal"    # exact always certifies
    assert erm.solve("newton", certify=False).status == "converged"
    assert erm.solve("closed-form", certify=False).status == "converged"
    assert erm.solve("closed-form").status == "optimal"
    assert cl.Solution(w=None, b=0.0).status == "unknown"
