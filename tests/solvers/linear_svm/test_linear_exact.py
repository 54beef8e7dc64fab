"""The linear exact route and the compiled DCD epoch.

* the numba epoch equals its numpy reference (dense and CSR, with shrinking);
* DCD on CSR input equals DCD on the dense copy;
* the route agrees with the cvxpy formulations (objective to 1e-9 relative, support sets);
* its certificate fails on a perturbed answer;
* its "optimal" holds in exact rational arithmetic: P(w, b) and D(alpha) computed over
  the rationals the float data and answer are, the imbalance y^T alpha moved exactly onto
  coordinates with room (a dual-feasible rational point), relative gap <= 1e-9.
"""

from fractions import Fraction

import numpy as np
import pytest
from scipy import sparse

import convexlearn as cl
from convexlearn.certify.rational_gap import rational_duality_gap
from convexlearn.solvers.linear_svm.dcd import _as_rows, dcd_linear
from convexlearn.solvers.linear_svm import linear_exact
from convexlearn.solvers.linear_svm.dcd_kernel import (dcd_epoch, dcd_epoch_reference,
                                                       dcd_epochs, shuffle_prefix)
from convexlearn.solvers.linear_svm.linear_exact import certificate, solve_linear_exact
from helpers import binary_dataset


def _problem(n=80, d=4, seed=0, sep=0.8, sparse_frac=None):
    rng = np.random.default_rng(seed)
    y = np.where(rng.random(n) < 0.45, -1.0, 1.0)
    X = rng.normal(size=(n, d)) + sep * y[:, None] + 0.5
    if sparse_frac is not None:
        X[rng.random(X.shape) < sparse_frac] = 0.0
    return X, y


@pytest.mark.parametrize("kind", ["dense", "csr"])
def test_compiled_epoch_equals_numpy_reference(kind):
    X, y = _problem(sparse_frac=0.5)
    n, d = X.shape
    mu = X.mean(axis=0)
    Z = X - mu
    upper = np.full(n, 0.7)
    upper[::7] = 0.0           # zero sample weights: a_i fixed at 0
    rho, lam = 1.3, 0.2
    rng = np.random.default_rng(1)
    alpha = np.clip(rng.random(n) - 0.3, 0.0, upper)
    if kind == "dense":
        rows, xm, mm, base = _as_rows(Z), np.zeros(n), 0.0, Z
    else:                      # implicit centring on the sparse rows
        rows, xm, mm, base = _as_rows(sparse.csr_matrix(X)), X @ mu, float(mu @ mu), X
    curv = np.einsum("ij,ij->i", Z, Z) + rho
    v = base.T @ (y * alpha)
    state = np.array([y @ alpha, mu @ v if kind == "csr" else 0.0, alpha.sum(), alpha @ alpha])
    a_ref = alpha.copy()
    bounds = (np.inf, -np.inf)
    for epoch in range(4):
        perm = rng.permutation(n)
        keep = np.ones(n, dtype=bool)
        got = dcd_epoch(*rows, y, xm, mm, curv, upper, 0.0, rho, lam, alpha, v, state, perm,
                        keep, bounds[0], bounds[1], True)
        a_ref, w_ref, keep_ref, *ref = dcd_epoch_reference(Z, y, upper, 0.0, rho, lam, a_ref,
                                                           perm, bounds[0], bounds[1], True)
        np.testing.assert_allclose(alpha, a_ref, rtol=0, atol=1e-12, err_msg=f"epoch {epoch}")
        np.testing.assert_array_equal(keep, keep_ref)
        np.testing.assert_allclose(got, ref, atol=1e-12)
        w_c = v - state[0] * mu if kind == "csr" else v
        np.testing.assert_allclose(w_c, w_ref, atol=1e-11)
        bounds = (got[0] if got[0] > 0 else np.inf, got[1] if got[1] < 0 else -np.inf)


def test_compiled_epochs_equal_numpy_reference_epochs():
    # the driver (shuffle, epoch, compaction, shrinking bounds, many epochs in one call)
    # against the numpy epoch on the same orders (the compiled shuffle's, replayed)
    X, y = _problem(n=120, d=4)
    n = X.shape[0]
    Z = X - X.mean(axis=0)
    upper = np.full(n, 0.7)
    upper[::9] = 0.0
    rho, lam = 1.3, 0.2
    alpha = np.clip(np.random.default_rng(3).random(n) - 0.3, 0.0, upper)
    a_drv, v = alpha.copy(), Z.T @ (y * alpha)
    state = np.array([y @ alpha, 0.0, alpha.sum(), alpha @ alpha])
    order, keep, bounds = np.arange(n), np.ones(n, dtype=bool), np.array([np.inf, -np.inf])
    curv = np.einsum("ij,ij->i", Z, Z) + rho
    rstate = np.array([12345], dtype=np.uint64)
    epochs, n_active, *_, visits = dcd_epochs(
        *_as_rows(Z), y, np.zeros(n), 0.0, curv, upper, 0.0, rho, lam, a_drv, v, state, order,
        n, keep, bounds, True, True, -1.0, 6, 10 ** 9, rstate)
    replay, act, a_ref, seen = np.array([12345], dtype=np.uint64), np.arange(n), alpha, 0
    old = (np.inf, -np.inf)
    for _ in range(6):
        shuffle_prefix(act, act.size, replay)
        seen += act.size
        a_ref, w_ref, keep_ref, pg_max, pg_min = dcd_epoch_reference(
            Z, y, upper, 0.0, rho, lam, a_ref, act, old[0], old[1], True)
        act = act[keep_ref]
        old = (pg_max if pg_max > 0 else np.inf, pg_min if pg_min < 0 else -np.inf)
    assert epochs == 6 and visits == seen and rstate[0] == replay[0]
    np.testing.assert_allclose(a_drv, a_ref, rtol=0, atol=1e-12)
    np.testing.assert_allclose(v, w_ref, atol=1e-11)
    np.testing.assert_array_equal(order[:n_active], act)
    np.testing.assert_allclose(bounds, old, atol=1e-12)


@pytest.mark.parametrize("intercept", [True, False])
def test_dcd_converges_with_zero_bounds(intercept):
    # a sample of weight 0 (U_i = 0) on the wrong side of its margin cannot move: it
    # is no violation (its projected gradient counted as one kept DCD at its epoch budget)
    X, y = _problem(n=300, d=5)
    C = np.where(np.arange(y.size) % 4 == 0, 0.0, 0.05)
    alpha, w, b, epochs, status, _ = dcd_linear(X, y, C, intercept=intercept, tol=1e-6,
                                                max_iter=3000)
    assert status == "converged" and epochs < 3000
    assert np.all(alpha[C == 0] == 0.0)


def test_dcd_sparse_equals_dense():
    X, y = _problem(n=120, d=6, sparse_frac=0.6)
    dense = dcd_linear(X, y, 1.0, tol=1e-9, max_iter=20_000)
    csr = dcd_linear(sparse.csr_matrix(X), y, 1.0, tol=1e-9, max_iter=20_000)
    assert dense[4] == csr[4] == "converged"
    np.testing.assert_allclose(csr[1], dense[1], atol=1e-6)
    assert abs(csr[2] - dense[2]) < 1e-6


CASES = [("synthetic", 1.0), ("synthetic", 100.0), ("iris", 0.5), ("wine", 1.0),
         ("breast_cancer", 0.1)]


def _data(name):
    if name == "synthetic":
        return _problem(n=150, d=5)
    pair = {"iris": (1, 2), "wine": (0, 1), "breast_cancer": (0, 1)}[name]
    return binary_dataset(name, pair)


@pytest.mark.parametrize("name,C", CASES)
def test_route_matches_cvxpy(name, C):
    X, y = _data(name)
    svm = cl.SVM(X, y, C=C)
    sol = svm.solve()
    ctx = f"{name}, C={C}"
    assert sol.provenance["route"] == "exact-linear", ctx
    assert sol.status == "optimal" and sol.extra["certificate"]["relative_gap"] <= 1e-9, ctx
    for method in ("exact-dual", "exact-primal"):
        ref = svm.solve(method=method)
        assert sol.objective <= ref.objective * (1 + 1e-9), f"{ctx} vs {method}"
        assert sol.objective == pytest.approx(ref.objective, rel=1e-9), f"{ctx} vs {method}"
    ref = svm.solve(method="exact-dual")
    rep, rep_ref = svm.kkt(sol, 1e-6), svm.kkt(ref, 1e-6)
    np.testing.assert_array_equal(rep.bounded, rep_ref.bounded, err_msg=ctx)
    if rep.free.size <= X.shape[1] + 1:            # unique multipliers
        np.testing.assert_array_equal(rep.support, rep_ref.support, err_msg=ctx)


def test_hard_margin_and_no_intercept_match_cvxpy():
    X, y = _problem(n=60, d=3, sep=2.5)
    for kwargs in ({"C": None}, {"C": 2.0, "intercept": False}):
        svm = cl.SVM(X, y, **kwargs)
        sol = solve_linear_exact(svm)
        ref = svm.solve(method="exact-dual")
        assert sol.status == "optimal", kwargs
        assert sol.objective == pytest.approx(ref.objective, rel=1e-9), kwargs


def test_a_perturbed_answer_fails_the_certificate():
    X, y = _problem()
    svm = cl.SVM(X, y, C=1.0)
    sol = solve_linear_exact(svm)
    assert certificate(X, svm.y, 1.0, True, sol.w, sol.b, sol.alpha)["passed"]
    for w, b, a in [(sol.w * (1 + 1e-6), sol.b, sol.alpha), (sol.w, sol.b + 1e-6, sol.alpha),
                    (sol.w, sol.b, sol.alpha * (1 - 1e-6))]:
        assert not certificate(X, svm.y, 1.0, True, w, b, a)["passed"]
    exact = rational_duality_gap(X, svm.y, 1.0, sol.w, sol.b, sol.alpha)
    assert 0 <= exact <= Fraction(1, 10**9)
    assert rational_duality_gap(X, svm.y, 1.0, sol.w * (1 + 1e-6), sol.b, sol.alpha) > \
        Fraction(1, 10**9)


def test_optimal_holds_in_exact_rational_arithmetic_across_units():
    rng = np.random.default_rng(7)
    certified = 0
    for _ in range(20):
        n, d = 40, 3
        y = np.where(rng.random(n) < 0.5, -1.0, 1.0)
        X = (rng.normal(size=(n, d)) + 0.8 * y[:, None]) * 10.0 ** rng.uniform(-4, 6)
        X[:, 0] *= 10.0 ** rng.uniform(-2, 2)
        C = 10.0 ** rng.uniform(-3, 3)
        svm = cl.SVM(X, y, C=C)
        sol = solve_linear_exact(svm)
        if sol.status != "optimal":
            continue
        certified += 1
        gap = rational_duality_gap(X, svm.y, C, sol.w, sol.b, sol.alpha)
        assert gap is not None and gap <= Fraction(1, 10**9), (float(gap), C)
    # not vacuous: most of them certify (the rest are left to the next route of the chain)
    assert certified >= 10


@pytest.mark.parametrize("shift", [1e6, 1e7, 1e8])
def test_no_false_optimal_far_from_the_origin(shift):
    # <x_i, w> and b cancel: in float64 the recomputed gap of a point whose exact gap was
    # 5e-9 came out -2e-10 ("optimal"); the certificate accumulates in extended precision
    rng = np.random.default_rng(0)
    X = rng.normal(size=(30, 3))
    y = np.where(X[:, 0] + 0.3 * rng.normal(size=30) > 0, 1.0, -1.0)
    for C in (1.0, 100.0):
        Xs = X + shift
        sol = solve_linear_exact(cl.SVM(Xs, y, C=C))
        gap = rational_duality_gap(Xs, y, C, sol.w, sol.b, sol.alpha)
        exact_ok = gap is not None and gap <= Fraction(1, 10**9)
        if sol.status == "optimal":
            assert exact_ok, (shift, C, float(gap))
        # the recomputed figure is the exact one to a few percent (charged balance aside)
        rel = sol.extra["certificate"]["relative_gap"]
        assert gap is not None and rel >= float(gap) * 0.9 - 1e-15, (shift, C, rel, float(gap))


def _stages_after_the_short_run(monkeypatch):
    """The route without DCD's extended and tighter runs after the short one: the stages
    below them (still the fallbacks) answer, as they did before those runs existed."""
    monkeypatch.setattr(linear_exact, "_EXTEND_EPOCHS", 0)
    monkeypatch.setattr(linear_exact, "_TIGHTEN", ())


def test_nearly_separable_hands_dcd_free_vectors_to_the_active_set(monkeypatch):
    # issue 24's case: classes 5 apart along the diagonal (2.5 / sqrt(d) per feature), C=1.
    # DCD stalls with |F| slightly above p = d + 1 (it converges like 1/k there); the
    # active set on its candidates (free vectors first, every other multiplier at its
    # bound: .linear_reduced) finishes, certified, equal to the cvxpy dual's answer
    rng = np.random.default_rng(0)
    n, d = 5000, 50
    y = np.where(rng.random(n) < 0.5, -1.0, 1.0)
    X = rng.standard_normal((n, d)) + y[:, None] * (2.5 / np.sqrt(d))
    _stages_after_the_short_run(monkeypatch)
    _certified_by_stage(cl.SVM(X, y, C=1.0), "reduced active set", "dcd")


def _certified_by_stage(svm, polish, warm_start):
    """The exact-linear route answers from this stage, certified, at the cvxpy dual's
    optimum."""
    sol = svm.solve()
    assert sol.status == "optimal" and sol.provenance["route"] == "exact-linear"
    assert (sol.provenance["polish"], sol.provenance["warm_start"]) == (polish, warm_start)
    assert sol.extra["certificate"]["relative_gap"] <= 1e-9
    ref = svm.solve("exact-dual")
    assert ref.status == "optimal"
    assert sol.objective <= ref.objective * (1 + 1e-9)
    assert sol.objective == pytest.approx(ref.objective, rel=1e-9)


def test_dcd_free_set_above_p_is_refined_before_the_costly_stages(monkeypatch):
    # issue 24's sweep case over_5000x50 without intercept at C = 1e-3: DCD at its tol
    # leaves 51 > p = 50 free multipliers (some still on their way to a bound), so the
    # polish was skipped and the free vectors (failed) then the interior point answered at
    # ~10x DCD's time; a few DCD epochs more at tol / 10 settle the sets and the active set
    # on the candidates (.linear_reduced) certifies
    from sklearn.datasets import make_classification
    X, y = make_classification(5000, 50, flip_y=0.1, random_state=0)
    _stages_after_the_short_run(monkeypatch)
    _certified_by_stage(cl.SVM(X, y, C=1e-3, kernel="linear", intercept=False),
                        "reduced active set", "dcd refined (tol / 10)")


def test_converged_short_run_goes_on_to_tighter_tolerances_and_polishes():
    # the same case as the route runs it: DCD's short run converged, so DCD goes on to
    # tol 1e-3, 1e-4, ... (compiled epochs on shrunk sets: cheap) and the w-space polish
    # of a tighter run's sets certifies, before any of the stages above
    from sklearn.datasets import make_classification
    X, y = make_classification(5000, 50, flip_y=0.1, random_state=0)
    svm = cl.SVM(X, y, C=1e-3, kernel="linear", intercept=False)
    tighter = tuple(f"dcd (tol {t:g})" for t in linear_exact._TIGHTEN)
    sol = svm.solve()
    assert sol.provenance["polish"] == "pdas" and sol.provenance["warm_start"] in tighter
    _certified_by_stage(svm, "pdas", sol.provenance["warm_start"])


def test_polish_between_dcd_chunks_answers_early_and_certified(monkeypatch):
    # Weighted breast cancer (weights 0-3) at the ERM sweep's lam_max / 2: the short run's
    # sets do not polish, one of DCD's later chunks does (the sweep's bc_weights: at 120 of
    # 300 epochs). The chunk's answer must be certified (gap recomputed from the data, and
    # failing on a perturbed w) and save the rest of the epoch budget.
    X, y = binary_dataset("breast_cancer")
    s = np.random.default_rng(2).integers(0, 4, X.shape[0]).astype(float)
    erm = cl.ERM(X, y, loss="hinge", penalty="l2", lam=1.0, sample_weight=s)
    _stages_after_the_short_run(monkeypatch)
    found = None
    for lam in (0.3, 0.1, 0.03, 0.01, 3e-3, 1e-3, 3e-4):
        erm.lam = lam
        svm = erm.as_svm()
        sol = solve_linear_exact(svm, max_epochs=300)
        if sol.provenance["warm_start"].startswith("dcd (") and "epochs" in \
                sol.provenance["warm_start"]:
            found = (svm, sol)
            break
    assert found is not None, "no chunk answered on this grid"
    svm, sol = found
    assert sol.status == "optimal" and sol.n_iter < 300
    cert = certificate(svm.X, svm.y, svm.C_bounds, True, sol.w, sol.b, sol.alpha)
    assert cert["passed"] and abs(cert["relative_gap"]) <= 1e-9
    # perturbed, the same certificate fails
    bad = certificate(svm.X, svm.y, svm.C_bounds, True, sol.w * 1.001, sol.b, sol.alpha)
    assert not bad["passed"]
