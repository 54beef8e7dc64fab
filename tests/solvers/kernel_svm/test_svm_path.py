"""The exact SVM path in C: every breakpoint certified by the KKT report of its own problem,
any C between two breakpoints interpolated exactly (checked against a fresh exact solve),
degenerate ties (iris's duplicated samples) re-anchored rather than followed wrongly."""

import numpy as np
import pytest
from sklearn.datasets import load_iris

import convexlearn as cl
from convexlearn.routes.svm import exact_c_path
from convexlearn.solvers.kernel_svm.svm_path import svm_c_path
from helpers import assert_path_point_exact


def _random(seed, n=50, d=2):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, d))
    return X, np.where(X[:, 0] + 0.8 * rng.normal(size=n) > 0.2, 1, -1)


def _interior_Cs(path, k=5):
    ok = [i for i in range(1, len(path.Cs)) if path.events[i] != "re-anchor"]
    picks = np.linspace(0, len(ok) - 1, k).astype(int)
    return [np.sqrt(path.Cs[ok[i] - 1] * path.Cs[ok[i]]) for i in picks]


@pytest.mark.parametrize("kernel, params", [("linear", {}), ("rbf", {"gamma": 1.0}),
                                            ("poly", {"degree": 2, "gamma": 1.0, "coef0": 1.0})])
@pytest.mark.parametrize("seed", [0, 1])
def test_breakpoints_certified_and_interpolation_exact(kernel, params, seed):
    X, y = _random(seed)
    svm = cl.SVM(X, y, C=1.0, kernel=kernel, **params)
    path, solutions = exact_c_path(svm, 0.01, 100.0)
    assert len(path.Cs) > 10 and path.Cs[0] == 0.01 and path.Cs[-1] == pytest.approx(100.0)
    assert all(s.status == "optimal" for s in solutions)
    assert max(s.report.max_violation for s in solutions) <= 1e-9
    for C in _interior_Cs(path):
        assert_path_point_exact(svm, path, C)


def test_separable_data_reach_the_hard_margin_regime():
    X, y = load_iris(return_X_y=True)
    keep = y < 2
    svm = cl.SVM(X[keep], y[keep], C=1.0)
    path, solutions = exact_c_path(svm, 0.01, 1e4)
    assert all(s.status == "optimal" for s in solutions)
    # Beyond the last breakpoint no sample is in L: alpha stops growing (hard margin).
    hard = cl.SVM(X[keep], y[keep], C=None).solve()
    assert solutions[-1].objective == pytest.approx(hard.objective, rel=1e-9)


def test_duplicated_samples_are_reanchored_not_followed_wrongly():
    X, y = load_iris(return_X_y=True)
    keep = y > 0
    svm = cl.SVM(X[keep][:, [2, 3]], y[keep], C=1.0)    # many identical petal pairs
    path, solutions = exact_c_path(svm, 0.1, 3.0)
    assert path.reanchored > 0
    assert all(s.status == "optimal" for s in solutions)
    k = path.events.index("re-anchor")
    with pytest.raises(ValueError, match="re-anchor"):
        path.at(np.sqrt(path.Cs[k - 1] * path.Cs[k]))


def test_a_wrong_anchor_is_caught_by_the_certificate():
    X, y = _random(3)
    svm = cl.SVM(X, y, C=1.0, kernel="rbf", gamma=1.0)

    def bad_anchor(C):       # a certified anchor, perturbed
        sol = svm.with_C(C).solve(cert_tol=1e-9)
        return sol.alpha * (1 + 1e-3), sol.b

    with pytest.raises(ValueError, match="certified start"):
        svm_c_path(svm.gram, svm.y, 0.1, 10.0, bad_anchor)


def test_bad_ranges_are_refused():
    X, y = _random(0)
    svm = cl.SVM(X, y)
    with pytest.raises(cl.ParameterError, match="C_min"):
        exact_c_path(svm, 10.0, 1.0)
    with pytest.raises(cl.NotApplicableError, match="soft margin"):
        exact_c_path(cl.SVM(X, y, C=None), 0.1, 1.0)


def test_svm_path_exact_through_the_public_api():
    X, y = _random(5)
    svm = cl.SVM(X, y, kernel="rbf", gamma=1.0)
    path = svm.path([0.05, 20.0], exact=True)
    assert path.exact and path.certified and path.parameter == "C"
    assert path.values[0] == 0.05 and path.values[-1] == pytest.approx(20.0)
    C = float(np.sqrt(path.values[3] * path.values[4]))
    between = path.at(C)
    assert between.status == "optimal" and between.provenance["event"] == "interpolated"
    fresh = svm.with_C(C).solve(cert_tol=1e-9)
    assert abs(between.objective - fresh.objective) <= 1e-9 * abs(fresh.objective)
    assert svm.C == 1.0
    warm = svm.path([0.05, 1.0, 20.0])
    assert not warm.exact and warm.certified


def test_warm_path_certifies_every_point_at_1e9_by_default_and_equals_cold_solves():
    X, y = _random(7)
    svm = cl.SVM(X, y, kernel="rbf", gamma=1.0)
    Cs = [0.1, 0.5, 2.0, 8.0, 3.0, 0.2]            # up and down: any order
    path = svm.path(Cs)
    assert path.certified and svm.C == 1.0
    routes = [s.provenance["route"] for s in path.solutions]
    assert routes[0] == "exact-smo" and set(routes[1:]) == {"exact-smo (warm-started)"}
    for C, sol in zip(Cs, path.solutions):
        assert sol.report.tol == 1e-9 and sol.report.passed
        assert sol.report.relative_gap <= 1e-9
        cold = svm.with_C(C).solve(cert_tol=1e-9)
        assert abs(sol.objective - cold.objective) <= 1e-9 * abs(cold.objective)
        # recomputed from the data by the problem at that C
        assert svm.with_C(C).kkt(sol, tol=1e-9).passed
    with pytest.raises(cl.ParameterError, match="shrinking"):
        svm.path(Cs, shrinking=False)


def test_warm_path_falls_back_to_the_chain_when_a_point_does_not_certify(monkeypatch):
    from convexlearn.routes import svm_warm_path as module
    X, y = _random(8)
    svm = cl.SVM(X, y, kernel="rbf", gamma=1.0)
    real = module.certified_smo

    def uncertified(problem, **options):
        sol = real(problem, **options)
        sol.status = "inaccurate"
        return sol

    monkeypatch.setattr(module, "certified_smo", uncertified)
    path = svm.path([0.5, 2.0])
    assert path.certified
    for sol in path.solutions:
        assert "exact-smo" in sol.provenance["fallback_from"]
        assert sol.report.tol == 1e-9 and sol.report.passed


def test_rank_one_updates_of_the_elbow_match_a_fresh_factorization():
    """The path keeps the inverse of [[0, y_E^T], [y_E, Q_EE]] and Q[:, E] by rank-one
    changes as samples join and leave the elbow: after a sequence of both they equal
    what a fresh factorization and a fresh gather give."""
    from convexlearn.solvers.kernel_svm import svm_path
    X, y = _random(7, n=40, d=3)
    svm = cl.SVM(X, y, kernel="rbf", gamma=0.5)
    yy = svm.y
    Q = (yy[:, None] * yy[None, :]) * svm.gram
    E = np.zeros(40, dtype=bool)
    E[[1, 4, 9]] = True
    L = np.zeros(40, dtype=bool)
    L[[2, 3, 30]] = True
    a = np.where(L, 1.0, 0.0)
    a[E] = 0.5
    state = svm_path._PathState(Q, yy, a, 0.1, 1.0, E, L)

    def direction_known():
        # the direction and its s, as a pass forms them; a join needs s at the joiner
        x = np.linalg.solve(svm_path._elbow_matrix(Q, yy, state.idx),
                            np.r_[0.0, np.ones(state.m)])
        state.x, state.s_x = x.copy(), Q[:, state.idx] @ x[1:] + yy * x[0]

    for i in (12, 2, 17, 25, 3):
        direction_known()
        state.join(i)
    state.leave(4, to_L=True)
    state.leave(17, to_L=False)
    direction_known()
    state.join(33)
    state.leave(1, to_L=False)
    idx = state.idx
    # the direction kept by the same rank-one changes (svm_path_elbow) solves the system
    x = np.linalg.solve(svm_path._elbow_matrix(Q, yy, idx), np.r_[0.0, np.ones(idx.size)])
    assert state.x is not None
    assert np.allclose(state.x, x, rtol=1e-9, atol=1e-9 * np.abs(x).max())
    assert sorted(idx.tolist()) == sorted(np.flatnonzero(state.E).tolist())
    fresh = np.linalg.inv(svm_path._elbow_matrix(Q, yy, idx))
    assert np.allclose(state.inv, fresh, rtol=1e-9, atol=1e-9 * np.abs(fresh).max())
    assert np.array_equal(state.QE, Q[:, idx])
    assert np.allclose(state.qL, Q[:, state.L].sum(axis=1), rtol=0, atol=1e-12)


def test_breakpoints_record_their_own_problem_lazily():
    """A breakpoint's fingerprint (hashed when read) and full report are those of the
    problem at its own C; the fingerprint refuses the breakpoint for another C."""
    from convexlearn.fingerprints import Deferred
    X, y = _random(3)
    svm = cl.SVM(X, y, C=1.0, kernel="rbf", gamma=1.0)
    path, solutions = exact_c_path(svm, 0.05, 20.0)
    for i in (0, len(solutions) // 2, len(solutions) - 1):
        sol, C = solutions[i], float(path.Cs[i])
        assert isinstance(dict.__getitem__(sol.provenance, "fingerprint"), Deferred)
        assert sol.provenance["C"] == C and sol.provenance["event"] == path.events[i]
        assert sol.provenance["fingerprint"] == svm.with_C(C).fingerprint()
        assert sol.provenance["fingerprint"] != svm.with_C(2.0 * C).fingerprint()
        full = sol.report.full()
        assert full.passed and full.max_violation <= 1e-9
        assert svm.with_C(C).kkt(sol, tol=1e-9).passed
        with pytest.raises(Exception, match="fingerprint|problem"):
            svm.with_C(2.0 * C).kkt(sol, tol=1e-9)
    assert svm.C == 1.0


@pytest.mark.parametrize("case", ["rbf", "linear", "iris duplicates"])
def test_compiled_quiet_breakpoints_give_the_general_path_bit_for_bit(case, monkeypatch):
    """svm_path_run's and svm_path_loop's compiled breakpoints (QUIET) against the Python
    loop alone: the same Cs, multipliers, intercepts, bounds and events, exactly (the
    anchors cached: the exact chain's solves need not repeat to the bit); with iris's
    duplicated samples, through re-anchors too."""
    from convexlearn.solvers.kernel_svm import svm_path
    if case == "iris duplicates":
        X, y = load_iris(return_X_y=True)
        svm = cl.SVM(X[y > 0][:, [2, 3]], y[y > 0], C=1.0, kernel="rbf")
    else:
        X, y = _random(3, n=120, d=3)
        svm = cl.SVM(X, y, C=1.0, kernel=case, **({"gamma": 0.5} if case == "rbf" else {}))
    anchors = {}

    def solve_at(C):
        if C not in anchors:
            sol = svm.with_C(C).solve(cert_tol=1e-9)
            anchors[C] = (sol.alpha.copy(), sol.b)
        return anchors[C][0].copy(), anchors[C][1]

    from convexlearn.solvers.kernel_svm.svm_path_record import Breakpoints
    compiled_rows = []
    written = Breakpoints.written

    def counting(self, rows, *args):
        compiled_rows.append(rows)
        return written(self, rows, *args)

    monkeypatch.setattr(Breakpoints, "written", counting)
    fresh_in_python = []          # breakpoints whose fresh sum of g the Python loop made
    settle = svm_path._PathState.settle

    def settling(self, fresh, scan=None):
        fresh_in_python[-1] += bool(fresh)
        return settle(self, fresh, scan)

    monkeypatch.setattr(svm_path._PathState, "settle", settling)
    paths = []
    for quiet in (True, False):
        monkeypatch.setattr(svm_path, "QUIET", quiet)
        fresh_in_python.append(0)
        paths.append(svm_c_path(svm.gram, svm.y, 0.01, 1000.0, solve_at))
    fast, general = paths
    assert len(fast.Cs) > 50 and fast.events == general.events
    # the compiled loop did run: most breakpoints of the fast path came from it (with
    # iris's duplicates, where half the breakpoints are re-anchors, some), the fresh
    # sums of the margins (every svm_path._FRESH breakpoints) among them
    assert sum(compiled_rows) >= (len(fast.Cs) // 2 if case != "iris duplicates" else 10)
    assert fresh_in_python[1] >= len(general.Cs) // (2 * svm_path._FRESH)
    # (iris re-anchors often: a fresh sum after a re-anchor runs in Python; there 14 of
    # 18, rbf 2 of 32, linear 2 of 22)
    if case == "iris duplicates":
        assert fresh_in_python[0] < fresh_in_python[1]
    else:
        assert fresh_in_python[0] <= fresh_in_python[1] // 4
    assert fast.reanchored == general.reanchored
    assert fast.reanchored > 0 or case != "iris duplicates"
    for name in ("Cs", "alphas", "intercepts", "bounds"):
        assert np.array_equal(getattr(fast, name), getattr(general, name)), name
