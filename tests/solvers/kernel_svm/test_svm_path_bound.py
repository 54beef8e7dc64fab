"""The C-path's breakpoints certified from its margins: the rounding bound holds at every
breakpoint, the bounded figures are upper bounds of the full report's, a perturbed path
fails, and full() recomputes the report from the data."""

import numpy as np
import pytest

import convexlearn as cl
from convexlearn.certify.path_kkt_bound import bounded_kkt
from convexlearn.routes import svm_c_path_certify as certify
from convexlearn.routes.svm import exact_c_path
from convexlearn.solvers.kernel_svm import svm_path


def _svm(seed=0, n=80):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, 3))
    y = np.where(X[:, 0] + 0.8 * rng.normal(size=n) > 0.2, 1, -1)
    return cl.SVM(X, y, C=1.0, kernel="rbf", gamma=1.0)


def test_margin_bound_holds_at_every_breakpoint(monkeypatch):
    svm = _svm()
    Q = svm.y[:, None] * svm.y[None, :] * svm.gram
    seen = []
    real = svm_path._bounded

    def checked(state, lam, tol):
        actual = np.abs(state.g - (Q @ state.a + svm.y * state.a0)).max()
        seen.append((actual, state.bound.total(state.a)))
        return real(state, lam, tol)

    monkeypatch.setattr(svm_path, "_bounded", checked)
    # the Python loop alone, so that _bounded sees every breakpoint; the compiled one
    # (svm_path_loop) records the same path bit for bit
    monkeypatch.setattr(svm_path, "QUIET", False)
    path, solutions = exact_c_path(svm, 0.01, 100.0)
    assert len(seen) == len(path.Cs) > 20
    monkeypatch.setattr(svm_path, "QUIET", True)
    fast, _ = exact_c_path(svm, 0.01, 100.0)
    assert np.array_equal(fast.bounds, path.bounds) and np.array_equal(fast.alphas, path.alphas)
    assert all(actual <= bound for actual, bound in seen)
    assert all(s.status == "optimal" for s in solutions)
    bounded = [s for s in solutions if s.report.source.startswith("bounds")]
    assert len(bounded) > len(solutions) // 2          # most certified by the bounds
    assert all(isinstance(s.report, certify.PathPointReport) for s in solutions)


def test_bounds_are_upper_bounds_of_the_full_report_and_full_recomputes():
    svm = _svm(1)
    path, solutions = exact_c_path(svm, 0.05, 50.0)
    checked = 0
    for sol in solutions:
        if sol.report.source.startswith("bounds"):
            full = sol.report.full()
            assert full.passed
            assert full.max_violation <= sol.report.max_violation
            assert full.relative_gap <= sol.report.relative_gap
            assert full.support.size == sol.report.n_support
            checked += 1
    assert checked > 0


def test_a_discarded_path_is_freed_without_the_cyclic_collector():
    # the breakpoints' Solutions hold no reference cycle (a report's recompute closes
    # over the breakpoint's values, not its Solution): dropping the path and its
    # solutions frees the multipliers at once, not at the next full collection
    import gc
    import weakref
    path, solutions = exact_c_path(_svm(2), 0.05, 50.0)
    alphas = weakref.ref(path.alphas)
    assert solutions[len(solutions) // 2].report.full().passed    # (a closure in use)
    gc.disable()
    try:
        del path, solutions
        assert alphas() is None
    finally:
        gc.enable()


def test_the_bounded_certificate_fails_on_perturbed_margins_and_multipliers():
    svm = _svm(2)
    y = svm.y
    Q = y[:, None] * y[None, :] * svm.gram
    sol = svm.with_C(2.0).solve(cert_tol=1e-9)
    lam = 0.5
    a, a0 = sol.alpha * lam, sol.b * lam
    qabs = float(np.abs(Q).max())
    g = Q @ a + y * a0
    err = 1e-14 * (qabs * np.abs(a).sum() + 1)
    assert bounded_kkt(y, a, a0, lam, g, err, qabs, 1e-9)[0] <= 1e-9
    # the margins off by more than the bound: fails
    free = np.flatnonzero((a > 1e-6) & (a < 1 - 1e-6))
    g_off = g.copy()
    g_off[free[0]] += 1e-7 * lam
    assert bounded_kkt(y, a, a0, lam, g_off, err, qabs, 1e-9)[0] > 1e-9
    # the same margins with a bound that admits 1e-7: fails too (the bound is added)
    assert bounded_kkt(y, a, a0, lam, g, 1e-7 * lam, qabs, 1e-9)[0] > 1e-9
    # perturbed multipliers with their true margins: the KKT conditions fail
    a_off = a.copy()
    a_off[free[0]] *= 1 + 1e-4
    assert bounded_kkt(y, a_off, a0, lam, Q @ a_off + y * a0, err, qabs, 1e-9)[0] > 1e-9


def test_a_perturbed_step_shows_in_the_bound_and_is_not_certified(monkeypatch):
    """A step that is not the segment's (a multiplier of the elbow moved off it, margins
    predicted as if it were not) is measured by the bound: the breakpoint's bounds fail
    and its full report from the data fails too."""
    svm = _svm(3)
    real = svm_path._segment
    count = {"k": 0, "at": None}

    def perturbed(state, lam, lam_end):
        step = real(state, lam, lam_end)
        count["k"] += 1
        # a breakpoint whose margins are predicted (not summed afresh, which would let
        # the refinement repair the step)
        if (count["at"] is None and count["k"] > 5 and step is not None and state.idx.size
                and state.since_fresh + 1 < svm_path._FRESH
                and step[0] >= 0.5 * state.lam_fresh):
            step[1][state.idx[0]] += 1e-5
            count["at"] = count["k"]
        return step

    monkeypatch.setattr(svm_path, "_segment", perturbed)
    monkeypatch.setattr(svm_path, "QUIET", False)      # every segment by _segment
    path, solutions = exact_c_path(svm, 0.01, 100.0)
    k = count["at"]
    assert k is not None and path.bounds[k, 0] > 1e-9
    assert solutions[k].status != "optimal"
    assert solutions[k].report.source == "full KKT report from the data"
    assert not solutions[k].report.full().passed


def test_the_bound_holds_where_the_refinement_corrects_the_margins(monkeypatch):
    """A step off the segment by a little (the balance then misses): the refinement
    corrects the elbow's multipliers and the one pass over the elbow's columns moves all
    of g by the measured total change (MarginBound.refined); the bound holds there."""
    from convexlearn.solvers.kernel_svm import svm_path_bound
    svm = _svm(4)
    Q = svm.y[:, None] * svm.y[None, :] * svm.gram
    real_segment, real_refined = svm_path._segment, svm_path_bound.MarginBound.refined
    refined, seen = [], []

    def perturbed(state, lam, lam_end):
        step = real_segment(state, lam, lam_end)
        if step is not None and state.idx.size and len(seen) % 3 == 1:
            step[1][state.idx[0]] += 1e-9 * (1 if step[1][state.idx[0]] < 0.5 else -1)
        return step

    def counted(self, *args):
        refined.append(1)
        return real_refined(self, *args)

    def checked(state, lam, tol):
        seen.append((np.abs(state.g - (Q @ state.a + svm.y * state.a0)).max(),
                     state.bound.total(state.a), len(refined)))
        return real_bounded(state, lam, tol)

    real_bounded = svm_path._bounded
    monkeypatch.setattr(svm_path, "_segment", perturbed)
    monkeypatch.setattr(svm_path, "QUIET", False)      # every segment by _segment
    monkeypatch.setattr(svm_path_bound.MarginBound, "refined", counted)
    monkeypatch.setattr(svm_path, "_bounded", checked)
    exact_c_path(svm, 0.05, 20.0)
    assert len(refined) > 5
    assert all(actual <= bound for actual, bound, _ in seen)


@pytest.mark.parametrize("n", [1, 63, 64, 65, 130])
def test_abs_max_and_asymmetry_equal_their_numpy_formulas(n):
    from convexlearn.solvers.kernel_svm.svm_path_bound import abs_max_and_asymmetry
    rng = np.random.default_rng(n)
    Q = rng.normal(size=(n, n))
    Q = Q + Q.T
    assert abs_max_and_asymmetry(Q) == (float(np.abs(Q).max()), 0.0)
    i, j = rng.integers(n, size=2)
    Q[i, j] += 1e-3 if i != j else 0.0
    Q[n - 1, 0] = -50.0                    # the largest magnitude, below the diagonal
    assert abs_max_and_asymmetry(Q) == (50.0, float(np.abs(Q - Q.T).max()))


def test_compiled_l1_bounds_the_exact_one_norm_from_above():
    """MarginBound's ||x||_1 (compiled, shared by the Python and the compiled breakpoints)
    is never below the exactly rounded 1-norm (math.fsum), and above it by at most its
    factor 1 / (1 - gamma_k) plus the sum's own rounding."""
    import math
    from convexlearn.solvers.kernel_svm.svm_path_bound import _gamma, _l1
    rng = np.random.default_rng(5)
    for n in list(range(0, 260)) + [511, 1000, 1031, 2000, 4097, 10007]:
        x = rng.normal(size=n) * np.exp(5 * rng.normal(size=n))
        for v in (x, x[::3], np.full(n, 0.1), 1.0 + 1e-3 * np.arange(n)):
            exact = math.fsum(np.abs(v))
            assert exact <= _l1(v) <= exact * (1 + 3 * _gamma(v.size)) + 1e-300
