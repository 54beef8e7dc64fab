"""The SVM's exact formulations agree with each other and with LIBSVM."""

import math

import numpy as np
import pytest
from sklearn.svm import SVC

import convexlearn as cl
from helpers import assert_objectives_agree, binary_dataset, support_groups, svc_alpha

RNG = np.random.default_rng(1)


def _blobs(n=40, d=3, shift=1.0, seed=0):
    rng = np.random.default_rng(seed)
    y = np.repeat([0, 1], n // 2)
    X = rng.normal(size=(n, d)) + shift * (2 * y[:, None] - 1)
    return X, y


SEPARABLE = _blobs(shift=3.0)
OVERLAPPING = _blobs(shift=0.6)
KERNELS = [("linear", {}), ("rbf", dict(gamma=0.5)), ("poly", dict(gamma=0.5, coef0=1.0, degree=2))]


@pytest.mark.parametrize("kernel, params", KERNELS, ids=[k for k, _ in KERNELS])
@pytest.mark.parametrize("C", [None, 0.5, 10.0], ids=["hard", "C0.5", "C10"])
@pytest.mark.parametrize("intercept", [True, False], ids=["affine", "homogeneous"])
def test_primal_slack_hinge_and_dual_agree(kernel, params, C, intercept):
    X, y = SEPARABLE if C is None else OVERLAPPING
    svm = cl.SVM(X, y, C=C, kernel=kernel, intercept=intercept, **params)
    methods = ["exact-primal", "exact-dual"] + ([] if C is None else ["exact-primal-hinge"])
    solutions = {m: svm.solve(m) for m in methods}
    for m, sol in solutions.items():
        assert sol.status == "optimal", f"{m}: {sol.report.summary()}"
        assert sol.report.relative_gap <= 1e-6, m
        if not intercept:
            assert sol.b == 0.0
    assert_objectives_agree(solutions, rtol=1e-7, context=f"{kernel} C={C} intercept={intercept}")
    ref = solutions["exact-dual"]
    for m, sol in solutions.items():
        np.testing.assert_allclose(svm.decision_function(sol), svm.decision_function(ref),
                                   atol=1e-5, err_msg=f"{m} vs exact-dual")


@pytest.mark.parametrize("C", [0.5, 10.0])
def test_unpolished_interior_point_forms_agree_too(C):
    # The formulations themselves, before the active-set polish, agree to the solver's accuracy.
    X, y = OVERLAPPING
    svm = cl.SVM(X, y, C=C)
    sols = {m: svm.solve(m, polish=False) for m in ("exact-primal", "exact-primal-hinge", "exact-dual")}
    assert all(not s.provenance["polished"] for s in sols.values())
    assert_objectives_agree(sols, rtol=1e-7, context=f"unpolished C={C}")


@pytest.mark.parametrize("C", [None, 1.0])
def test_linear_w_from_dual_equals_w_from_primal(C):
    X, y = SEPARABLE if C is None else OVERLAPPING
    svm = cl.SVM(X, y, C=C)
    primal, dual = svm.solve("exact-primal", polish=False), svm.solve("exact-dual", polish=False)
    np.testing.assert_allclose(dual.w, primal.w, atol=1e-5)
    np.testing.assert_allclose(dual.w, X.T @ (svm.y * dual.alpha), atol=1e-12)
    assert dual.b == pytest.approx(primal.b, abs=1e-5)


SVC_CASES = [("iris", (1, 2)), ("wine", (0, 1)), ("breast_cancer", (0, 1))]
SVC_KERNELS = [("linear", {}), ("poly", dict(gamma=0.1, coef0=1.0, degree=3)), ("rbf", dict(gamma=0.1))]


@pytest.mark.parametrize("name, classes", SVC_CASES, ids=[n for n, _ in SVC_CASES])
@pytest.mark.parametrize("kernel, params", SVC_KERNELS, ids=[k for k, _ in SVC_KERNELS])
@pytest.mark.parametrize("C", [0.1, 1.0, 10.0])
def test_exact_svm_matches_libsvm(name, classes, kernel, params, C):
    X, y = binary_dataset(name, classes, standardized=True)
    svm = cl.SVM(X, y, C=C, kernel=kernel, **params)
    sol = svm.solve()
    assert sol.status == "optimal", sol.report.summary()
    svc = SVC(C=C, kernel=kernel, tol=1e-8, **params).fit(X, y)
    alpha = svc_alpha(svc, len(y))
    libsvm_objective = svm.dual_objective(alpha)
    rel = abs(sol.objective - libsvm_objective) / abs(libsvm_objective)
    assert rel <= 1e-6, f"objective {sol.objective} vs LIBSVM {libsvm_objective}"
    ours, theirs = (support_groups(X, y, sol.report.support), support_groups(X, y, svc.support_))
    assert ours == theirs, (f"support vectors differ: only ours {ours - theirs}, "
                            f"only LIBSVM {theirs - ours}")
    assert sol.b == pytest.approx(svc.intercept_[0], abs=1e-4)
    np.testing.assert_array_equal(svm.predict(sol, X), svc.predict(X))


def test_hard_margin_on_non_separable_data_points_to_the_separability_check():
    X, y = binary_dataset("iris", (1, 2))
    for method in ("exact-primal", "exact-dual"):
        with pytest.raises(cl.InfeasibleError, match=r"Halfspace\(X, y\)\.check\(\)"):
            cl.SVM(X, y, C=None).solve(method)


def test_hard_margin_on_raw_breast_cancer_is_never_falsely_optimal():
    # cvxpy + Clarabel alone say optimal_inaccurate with margins of 0.59 here.
    X, y = binary_dataset("breast_cancer", standardized=False)
    for method in ("exact-primal", "exact-dual"):
        sol = cl.SVM(X, y, C=None).solve(method)
        report = sol.report
        if sol.status == "optimal":
            assert report.passed and report.margins.min() >= 1 - 1e-6
        else:
            assert sol.status == "inaccurate"
            names = [name for name, _, _ in report.violations()]
            assert names and not report.passed
            assert report.max_violation > report.tol
            assert "FAILED" in report.summary()


def test_hinge_form_needs_finite_C():
    X, y = SEPARABLE
    with pytest.raises(cl.NotApplicableError, match="finite C"):
        cl.SVM(X, y, C=None).primal(form="hinge")


def test_problems_are_inspectable_and_dpp():
    X, y = OVERLAPPING
    svm = cl.SVM(X, y, C=1.0)
    for problem in (svm.primal(), svm.primal("hinge"), svm.dual()):
        assert problem.is_dcp(dpp=True)
        assert [p.name() for p in problem.parameters()] == ["C"]
    kernel_dual = cl.SVM(X, y, C=1.0, kernel="rbf", gamma=0.3).dual()
    assert kernel_dual.is_dcp(dpp=True) and kernel_dual.is_qp()


def test_exact_chain_records_its_route():
    from convexlearn.routes.svm import exact_chain
    X, y = OVERLAPPING
    svm = cl.SVM(X, y, kernel="rbf")
    sol = svm.solve()
    assert sol.provenance["route"] == exact_chain(svm)[0]
    assert sol.method == sol.provenance["route"]


def test_solution_carries_provenance_and_the_report():
    X, y = OVERLAPPING
    sol = cl.SVM(X, y, C=1.0).solve(method="exact-dual")
    assert sol.provenance["solver"] == "CLARABEL"
    assert sol.provenance["solver_version"] != "unknown"
    assert sol.provenance["cvxpy_version"]
    assert isinstance(sol.report, cl.KKTReport) and sol.report.passed
    assert sol.time_s > 0 and sol.method == "exact-dual"
    fast = cl.SVM(X, y, C=1.0).solve()       # the linear kernel's first route
    assert fast.provenance["route"] == "exact-linear" and fast.report.passed
    assert fast.extra["certificate"]["relative_gap"] <= 1e-9


def test_predictions_use_the_original_labels_and_new_data():
    X, y = OVERLAPPING
    labels = np.where(y == 1, "yes", "no")
    svm = cl.SVM(X, labels, C=1.0, kernel="rbf", gamma=0.5)
    sol = svm.solve()
    X_new = RNG.normal(size=(7, X.shape[1]))
    f = svm.decision_function(sol, X_new)
    expected = svm.kernel(X_new, X) @ (svm.y * sol.alpha) + sol.b
    np.testing.assert_allclose(f, expected, atol=1e-10)
    assert set(svm.predict(sol, X_new)) <= {"yes", "no"}
    with pytest.raises(cl.ParameterError, match="built with 3"):
        svm.decision_function(sol, X_new[:, :2])


def test_precomputed_test_kernel_gives_the_same_predictions():
    X, y = OVERLAPPING
    rbf = cl.SVM(X, y, C=1.0, kernel="rbf", gamma=0.5)
    pre = cl.SVM(rbf.kernel(X), y, C=1.0, kernel="precomputed")
    X_new = RNG.normal(size=(5, X.shape[1]))
    f_rbf = rbf.decision_function(rbf.solve(), X_new)
    f_pre = pre.decision_function(pre.solve(), rbf.kernel(X_new, X))
    np.testing.assert_allclose(f_pre, f_rbf, atol=1e-7)


def test_hard_margin_is_C_none_or_inf():
    X, y = SEPARABLE
    a, b = cl.SVM(X, y, C=None).solve(), cl.SVM(X, y, C=math.inf).solve()
    assert a.objective == pytest.approx(b.objective, rel=1e-12)
    assert cl.SVM(X, y, C=None).hard_margin


@pytest.mark.parametrize("kernel, params", KERNELS[:2], ids=["linear", "rbf"])
def test_sample_weight_zero_removes_and_integer_repeats(kernel, params):
    X, y = OVERLAPPING
    weights = np.ones(len(y))
    weights[[0, 5]] = 0.0
    weights[[3, 30]] = 3.0
    weighted = cl.SVM(X, y, C=0.7, kernel=kernel, sample_weight=weights, **params)
    sol = weighted.solve()
    assert sol.status == "optimal", sol.report.summary()
    repeat = np.repeat(np.arange(len(y)), weights.astype(int))
    expanded = cl.SVM(X[repeat], y[repeat], C=0.7, kernel=kernel, **params)
    ref = expanded.solve()
    assert sol.objective == pytest.approx(ref.objective, rel=1e-8)
    X_new = RNG.normal(size=(6, X.shape[1]))
    np.testing.assert_allclose(weighted.decision_function(sol, X_new),
                               expanded.decision_function(ref, X_new), atol=1e-6)
    assert sol.alpha[[0, 5]].max() == 0.0
    assert np.all(sol.alpha <= 0.7 * weights + 1e-12)


@pytest.mark.parametrize("method", ["exact", "exact-primal", "exact-primal-hinge",
                                    "exact-dual"])
@pytest.mark.parametrize("removed_at", [0.5, 2.5])
def test_weight_zero_inside_the_margin_is_removal(method, removed_at):
    # Found in review: a weight-0 sample (C_i = 0) counted as both "at 0" and "at C" and
    # pinned the intercept (status inaccurate, P = 3 instead of 1.5), was listed as a KKT
    # disagreement, and on the margin band crashed the multiplier reconstruction (bounds
    # [0, 0] to lsq_linear).
    X = np.array([[0.0], [1.0], [2.0], [3.0], [removed_at]])
    y = np.array([0, 0, 1, 1, 1])
    svm = cl.SVM(X, y, C=1.0, sample_weight=[1, 1, 1, 1, 0])
    sol = svm.solve(method)
    ref = cl.SVM(X[:4], y[:4], C=1.0).solve()
    assert sol.status == "optimal", sol.report.summary()
    assert sol.objective == pytest.approx(ref.objective, rel=1e-8)
    assert sol.report.disagreements.size == 0
    assert svm.kkt(cl.Solution(w=sol.w, b=sol.b, objective=sol.objective)).passed


def test_a_class_with_zero_total_weight_is_refused():
    X, y = OVERLAPPING
    weights = np.where(y == y[0], 0.0, 1.0)
    with pytest.raises(cl.DataError, match="has weight 0.*one class is left"):
        cl.SVM(X, y, C=1.0, sample_weight=weights)


def test_weighted_forms_agree_and_iterative_methods_refuse_weights():
    X, y = OVERLAPPING
    weights = np.linspace(0.2, 2.0, len(y))
    svm = cl.SVM(X, y, C=1.0, sample_weight=weights)
    sols = {m: svm.solve(m) for m in ("exact-primal", "exact-primal-hinge", "exact-dual")}
    assert all(s.status == "optimal" for s in sols.values())
    assert_objectives_agree(sols, rtol=1e-9, context="weighted")
    with pytest.raises(cl.NotApplicableError, match="sample weights"):
        svm.solve("smo")


@pytest.mark.parametrize("weights, C, error, fragment", [
    (-np.ones(40), 1.0, cl.DataError, "must be >= 0"),
    (np.zeros(40), 1.0, cl.DataError, "zero everywhere"),
    (np.ones(39), 1.0, cl.DataError, "40 samples but sample_weight has 39"),
    (np.ones(40), None, cl.ParameterError, "finite C"),
    (np.r_[np.nan, np.ones(39)], 1.0, cl.DataError, "non-finite weights"),
])
def test_bad_sample_weights_are_named(weights, C, error, fragment):
    X, y = OVERLAPPING
    with pytest.raises(error, match=fragment):
        cl.SVM(X, y, C=C, sample_weight=weights)


def test_solve_refuses_a_loss_other_than_the_hinge():
    X, y = OVERLAPPING
    with pytest.raises(cl.NotApplicableError, match="squared_hinge.*cl.ERM"):
        cl.SVM(X, y).solve("dcd", loss="squared_hinge")


@pytest.mark.parametrize("scale", [1e-8, 1e-4, 1e4, 1e8])
@pytest.mark.parametrize("C", [None, 1.0])
def test_scaling_law_holds_across_orders_of_magnitude(scale, C):
    # Hard margin: w(sX) = w(X) / s, so P*(sX) = P*(X) / s^2; soft margin with C/s^2 likewise
    # (the C-scaling law). The exact solver normalizes internally, so no scale is "infeasible".
    X, y = SEPARABLE
    base = cl.SVM(X, y, C=C).solve()
    C_s = None if C is None else C / scale**2
    scaled = cl.SVM(X * scale, y, C=C_s).solve()
    assert scaled.status == "optimal", scaled.report.summary()
    assert scaled.objective * scale**2 == pytest.approx(base.objective, rel=1e-7)


def test_a_large_finite_C_is_never_reported_infeasible():
    X, y = SEPARABLE
    sol = cl.SVM(X, y, C=1e8).solve()
    hard = cl.SVM(X, y, C=None).solve()
    assert sol.status == "optimal"
    assert sol.objective == pytest.approx(hard.objective, rel=1e-6)


def test_far_from_origin_data_are_centred_for_the_solver():
    svm = cl.SVM([[1e9], [1e9 + 1]], [0, 1], C=None)
    sol = svm.solve()
    assert sol.status == "optimal"
    assert sol.objective == pytest.approx(2.0, rel=1e-9)            # w = 2, margin 1/2
    assert sol.w[0] * (1e9 + 0.5) + sol.b == pytest.approx(0.0, abs=1e-6)


def test_unknown_options_and_bad_degree_are_parameter_errors():
    X, y = OVERLAPPING
    with pytest.raises(cl.ParameterError, match="foo"):
        cl.SVM(X, y).solve(foo=1)
    with pytest.raises(cl.ParameterError, match="has no option.*'foo'.*valid: .*max_iter"):
        cl.SVM(X, y).solve("smo", foo=1)
    with pytest.raises(cl.ParameterError, match="integer degree"):
        cl.SVM(X, y, kernel="poly", degree=2.5)


def test_exact_certification_does_not_loosen_with_tol():
    X, y = OVERLAPPING
    sol = cl.SVM(X, y).solve(tol=0.5)
    assert sol.report.tol == 1e-6


def test_integer_weights_equal_repetition_with_gamma_scale():
    X, y = OVERLAPPING
    weights = np.ones(len(y))
    weights[[1, 7, 20]] = [3.0, 2.0, 4.0]
    weights[11] = 0.0
    weighted = cl.SVM(X, y, C=0.7, kernel="rbf", sample_weight=weights)
    repeat = np.repeat(np.arange(len(y)), weights.astype(int))
    expanded = cl.SVM(X[repeat], y[repeat], C=0.7, kernel="rbf")
    assert weighted.kernel.gamma == pytest.approx(expanded.kernel.gamma, rel=1e-12)
    assert weighted.solve().objective == pytest.approx(expanded.solve().objective, rel=1e-8)


def test_homogeneous_hard_margin_with_the_zero_vector_is_infeasible():
    # y_i <w, 0> = 0 < 1 for every w: no homogeneous hyperplane has margin there.
    X = np.array([[0.0, 0.0], [1.0, 1.0], [-1.0, -1.0]])
    with pytest.raises(cl.InfeasibleError, match="Halfspace"):
        cl.SVM(X, [0, 1, 0], C=None, intercept=False).solve()


@pytest.mark.parametrize("method", ["exact", "smo"])
def test_unproven_not_separable_verdict_is_not_infeasible(method):
    # Found in review: separable with margin 5e-10 (below the LPs' resolution): the LP says
    # "not separable" but its certificate does not verify. That is undecided, not a proof
    # of infeasibility: SolverError, never InfeasibleError.
    X = np.array([[0.0], [1e-9], [1.0], [-1.0]])
    y = np.array([0, 1, 1, 0])
    verdict = cl.Halfspace(X, y).check()
    if verdict.verified:        # an LP that resolves this margin: nothing unproven left
        assert verdict.separable
        return
    with pytest.raises(cl.SolverError, match="did not verify"):
        cl.SVM(X, y, C=None).solve(method)


def test_exact_tries_the_other_formulation_when_the_kkt_check_fails():
    # Found in review: iris versicolor/virginica scaled by 1e-4 (C-scaling law: C = 1e-8 on
    # the unscaled data) - the dual's point failed its KKT check at 1.9e-4 and "exact"
    # returned it; the primal's point passes. "exact" now keeps the better of the two.
    X, y = binary_dataset("iris", (1, 2), standardized=False)
    svm = cl.SVM(X * 1e-4, y, C=1.0)
    sol = svm.solve()
    assert sol.status == "optimal", sol.report.summary()
    ref = cl.SVM(X, y, C=1e-8).solve("exact-primal")      # P(sX, C) = P(X, C s^2) / s^2
    assert sol.objective == pytest.approx(ref.objective * 1e8, rel=1e-6)
    if sol.provenance["route"] == "exact-primal":
        assert "exact-dual" in sol.provenance["fallback_from"]


def test_kernel_hard_margin_without_a_certified_point_is_never_an_answer():
    """Two concentric circles under the homogeneous cubic kernel (coef0 = 0: f - b is
    odd, so two antipodal points of one circle force b >= 1 and b <= -1 at once): no
    hard-margin solution exists. SMO's alpha only grows (to ~1e5 at its budget); that
    point used to come back as status "inaccurate". Now the error names the verdict."""
    from sklearn.datasets import make_circles

    X, y = make_circles(200, noise=0.05, factor=0.5, random_state=0)
    with pytest.raises((cl.InfeasibleError, cl.SolverError),
                       match="exact-smo: route 'exact-smo' found no certified"):
        cl.SVM(X, y, C=None, kernel="poly", degree=3).solve()
