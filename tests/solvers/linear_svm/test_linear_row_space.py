"""The dense exact-linear route's fixed costs: wide problems on the rows' span, and the
polish of a short DCD run.

* n <= d / 2: the route solves on the n x n rows of Z^T = Q R (``provenance["row_space"]``),
  certified in exact rational arithmetic on the original data and equal to the cvxpy
  dual's optimum, with and without intercept;
* a basis that misses a direction that matters is not certified, and the route solves
  the problem as given instead;
* the short DCD run's polish answers where its sets are right (over_5000x50-like data at
  C = 1e-3 without intercept), certified and equal to the cvxpy dual's optimum; where it
  is not certified the full DCD run and the stages after it answer as before;
* heavy overlap (more than 2p free multipliers after the short run) goes to the interior
  point at once, and without it on to the full run; where the short run's extension
  converges, DCD's tighter runs and the polish answer instead.
"""

from fractions import Fraction

import numpy as np
import pytest

import convexlearn as cl
from convexlearn.certify.rational_gap import rational_duality_gap
from convexlearn.solvers.linear_svm import linear_exact
from convexlearn.solvers.linear_svm.linear_exact import solve_linear_exact


def _wide(n=60, d=200, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.standard_normal((n, d)) + 0.3
    y = np.where(X[:, 0] + 0.5 * rng.standard_normal(n) > 0.3, 1.0, -1.0)
    return X, y


@pytest.mark.parametrize("intercept", [True, False])
@pytest.mark.parametrize("C", [1e-2, 1.0, 100.0])
def test_wide_problem_solved_on_the_rows_span(intercept, C):
    X, y = _wide()
    svm = cl.SVM(X, y, C=C, intercept=intercept)
    sol = solve_linear_exact(svm)
    assert sol.status == "optimal" and sol.provenance["row_space"] is True
    gap = rational_duality_gap(X, svm.y, C, sol.w, sol.b, sol.alpha, intercept=intercept)
    assert gap is not None and gap <= Fraction(1, 10**9)
    ref = svm.solve("exact-dual")
    assert ref.status == "optimal"
    assert sol.objective == pytest.approx(ref.objective, rel=1e-8)
    assert sol.w.shape == (X.shape[1],)


def test_a_basis_missing_a_direction_falls_back_to_the_problem_as_given(monkeypatch):
    X, y = _wide(seed=1)
    real = linear_exact.row_space
    calls = []

    def crippled(Z):
        calls.append(Z.shape)
        basis, rows = real(Z)
        Q = basis @ np.eye(basis.shape[1])    # the dense Q[:, keep]
        return Q[:, :-5], rows[:, :-5]        # five directions of the span dropped
    monkeypatch.setattr(linear_exact, "row_space", crippled)
    svm = cl.SVM(X, y, C=1.0)
    sol = solve_linear_exact(svm)
    assert calls                                # the reduced problem was tried
    assert sol.status == "optimal" and sol.provenance["row_space"] is False
    ref = svm.solve("exact-dual")
    assert sol.objective == pytest.approx(ref.objective, rel=1e-8)


def test_short_dcd_run_polishes_where_its_sets_are_right():
    from sklearn.datasets import make_classification
    X, y = make_classification(2000, 20, flip_y=0.1, random_state=0)
    svm = cl.SVM(X, y, C=1e-3, intercept=False)
    sol = solve_linear_exact(svm)
    assert sol.status == "optimal"
    # the short run, or (it converged) DCD's tighter runs after it, each within its budget
    tighter = tuple(f"dcd (tol {t:g})" for t in linear_exact._TIGHTEN)
    assert sol.provenance["warm_start"] in ("dcd (short run)", *tighter)
    assert sol.n_iter <= linear_exact._FIRST_EPOCHS + len(tighter) * \
        linear_exact._TIGHTEN_EPOCHS
    ref = svm.solve("exact-dual")
    assert sol.objective == pytest.approx(ref.objective, rel=1e-8)


def test_short_run_not_certified_goes_on_to_the_full_run(monkeypatch):
    from sklearn.datasets import make_classification
    X, y = make_classification(2000, 20, flip_y=0.1, random_state=0)
    svm = cl.SVM(X, y, C=1e-3, intercept=False)
    monkeypatch.setattr(linear_exact, "_early_pdas", lambda *a, **k: None)
    sol = solve_linear_exact(svm)
    assert sol.status == "optimal"
    assert sol.provenance["warm_start"] != "dcd (short run)"
    ref = svm.solve("exact-dual")
    assert sol.objective == pytest.approx(ref.objective, rel=1e-8)


def _overlapping():
    from sklearn.datasets import make_blobs
    X, y = make_blobs(2000, 2, centers=[[0.0, 0.0], [1.0, 1.0]], cluster_std=1.0,
                      random_state=1)
    return cl.SVM(X, y, C=1.0, intercept=False)


def test_heavy_overlap_goes_to_the_interior_point_after_the_short_run(monkeypatch):
    # (without the short run's extension, which converges on these data: next test)
    monkeypatch.setattr(linear_exact, "_EXTEND_EPOCHS", 0)
    svm = _overlapping()
    sol = solve_linear_exact(svm)
    assert sol.status == "optimal"
    assert sol.provenance["polish"] == "interior point, active set"
    assert sol.n_iter <= linear_exact._FIRST_EPOCHS       # the full DCD run was not paid
    ref = svm.solve("exact-dual")
    assert sol.objective == pytest.approx(ref.objective, rel=1e-8)


def test_short_run_at_its_budget_goes_on_and_polishes_when_it_converges():
    # the short run's extension (as many coordinate steps again, on shrunk sets) converges
    # here, and DCD's tighter runs give sets the polish (or the candidates' active set)
    # certifies: no interior point
    svm = _overlapping()
    sol = solve_linear_exact(svm)
    assert sol.status == "optimal" and sol.provenance["warm_start"].startswith("dcd (tol")
    assert sol.provenance["polish"] in ("pdas", "reduced active set")
    assert sol.n_iter <= linear_exact._FIRST_EPOCHS + linear_exact._EXTEND_EPOCHS + \
        len(linear_exact._TIGHTEN) * linear_exact._TIGHTEN_EPOCHS
    ref = svm.solve("exact-dual")
    assert sol.objective == pytest.approx(ref.objective, rel=1e-8)


def test_heavy_overlap_without_an_interior_point_goes_on_to_the_full_run(monkeypatch):
    monkeypatch.setattr(linear_exact, "_EXTEND_EPOCHS", 0)
    svm = _overlapping()
    monkeypatch.setattr(linear_exact, "_ipm_start", lambda *a, **k: (None, None))
    sol = solve_linear_exact(svm)
    assert sol.status == "optimal"
    assert sol.n_iter > linear_exact._FIRST_EPOCHS
    ref = svm.solve("exact-dual")
    assert sol.objective == pytest.approx(ref.objective, rel=1e-8)
