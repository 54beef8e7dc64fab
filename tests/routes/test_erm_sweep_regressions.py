"""Regressions found by benchmarks/sweep_exact_erm.py: the fast exact routes of ERM must
certify (no fallback to the cvxpy route) on sample weights, sparse X and duplicated columns."""

import numpy as np
import pytest
import scipy.sparse as sp

import convexlearn as cl


def _data(n=120, d=6, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.standard_normal((n, d))
    y = np.where(X @ rng.standard_normal(d) + 0.8 * rng.standard_normal(n) > 0, 1, -1)
    s = rng.integers(0, 4, n).astype(float)      # zeros included: removed samples
    return X, y, s


@pytest.mark.parametrize("loss,penalty,route", [
    ("squared", "l1", "cd"), ("squared", "elastic_net", "cd"), ("logistic", "l1", "cd"),
    ("logistic", "elastic_net", "cd"), ("hinge", "l2", "svm"), ("hinge", "l1", "lp")])
def test_weighted_fast_route_certifies(loss, penalty, route):
    # the routes ignored the weights: certificate failed (relative gap 1e-2..1), cvxpy answered
    X, y, s = _data()
    target = X[:, 0] - 2 * X[:, 1] + 0.1 * y if loss == "squared" else y
    erm = cl.ERM(X, target, loss=loss, penalty=penalty, lam=0.02, sample_weight=s)
    sol = erm.solve()
    assert sol.status == "optimal"
    assert sol.provenance["route"] == route
    assert "fallback_from" not in sol.provenance
    # integer weights are copies of samples: the same optimum as the repeated data
    rep = np.repeat(np.arange(len(y)), s.astype(int))
    ref = cl.ERM(X[rep], target[rep], loss=loss, penalty=penalty, lam=0.02).solve()
    assert abs(sol.objective - ref.objective) <= 1e-8 * max(1.0, abs(ref.objective))


def test_weighted_cd_method_certifies():
    X, y, s = _data()
    sol = cl.ERM(X, y, loss="logistic", penalty="l1", lam=0.02, sample_weight=s).solve("cd")
    assert sol.status == "optimal"


@pytest.mark.parametrize("loss", ["hinge", "perceptron"])
def test_lp_route_on_sparse_X(loss):
    # y[:, None] * X on a CSR matrix raised a ValueError inside the LP route
    X, y, _ = _data()
    Xs = sp.csr_matrix(np.where(np.abs(X) > 0.5, X, 0.0))
    from convexlearn.routes.erm import solve_exact
    sol = solve_exact(cl.ERM(Xs, y, loss=loss, penalty="l1", lam=0.01), routes=["lp"])
    assert sol.report.passed and sol.provenance["route"] == "lp"


def _duplicated_columns(n):
    from sklearn.datasets import load_breast_cancer
    X, y = load_breast_cancer(return_X_y=True)
    X = (X - X.mean(0)) / X.std(0)
    idx = np.random.default_rng(0).permutation(len(y))[:n]
    return np.hstack([X[idx], X[idx][:, :5]]), y[idx]


@pytest.mark.parametrize("loss,n,lam", [("squared", 150, 1e-6), ("logistic", 300, 1e-4)])
def test_cd_certifies_with_duplicated_columns(loss, n, lam):
    # copies of a column make the sign-fixed face singular (LU: a huge, sign-breaking
    # solve) and CD leaves copies with opposite signs: the polish failed, cvxpy answered
    X, y = _duplicated_columns(n)
    target = y.astype(float) if loss == "squared" else y
    sol = cl.ERM(X, target, loss=loss, penalty="l1", lam=lam).solve()
    assert sol.status == "optimal"
    assert sol.provenance["route"] == "cd" and "fallback_from" not in sol.provenance
    w = np.asarray(sol.w)
    for j in range(5):      # the copies share one sign (or are both 0)
        assert np.sign(w[j]) * np.sign(w[30 + j]) >= 0


def test_even_split_never_increases_the_objective():
    from convexlearn.solvers.erm.cd_polish import duplicate_groups, even_split
    X, y = _duplicated_columns(150)
    groups = duplicate_groups(X)
    assert sorted(map(tuple, groups)) == [(j, 30 + j) for j in range(5)]
    erm = cl.ERM(X, y, loss="logistic", penalty="elastic_net", lam=1e-3)
    w = np.random.default_rng(1).standard_normal(X.shape[1])
    w2 = even_split(w, groups)
    assert np.allclose(X @ w, X @ w2)
    assert erm.objective(w2, 0.3) <= erm.objective(w, 0.3)


def test_lp_route_refines_its_vertex_onto_the_kinks():
    # d > n, small lam: HiGHS's vertex had margins ~1e-9 off the kink, relative gap 2.2e-8;
    # the chain fell back to cvxpy
    from sklearn.datasets import make_classification
    X, y = make_classification(200, 300, n_informative=60, n_redundant=60, flip_y=0.05,
                               random_state=0)
    sol = cl.ERM(X, y, loss="hinge", penalty="l1", lam=5.7766e-4).solve()
    assert sol.status == "optimal"
    assert sol.provenance["route"] == "lp" and "fallback_from" not in sol.provenance
    assert sol.report.relative_gap <= 1e-9


@pytest.mark.parametrize("n,d,chain", [(200, 300, ["homotopy", "cd", "exact-primal"]),
                                       (300, 20, ["cd", "homotopy", "exact-primal"])])
def test_lasso_chain_has_the_homotopy(n, d, chain):
    from sklearn.datasets import make_classification
    from convexlearn.routes.erm import exact_chain
    X, y = make_classification(n, d, n_informative=max(2, d // 5), n_redundant=max(1, d // 5),
                               flip_y=0.05, random_state=0)
    erm = cl.ERM(X, y, loss="squared_classification", penalty="l1", lam=5.7e-4)
    assert exact_chain(erm) == chain
    if d > n:
        # d > n near interpolation: CD's polish never settled (relative gap 1.6e-2), cvxpy
        # answered in 8-13 s; the homotopy certifies at ~1e-15
        sol = erm.solve()
        assert sol.status == "optimal"
        assert sol.provenance["route"] == "homotopy" and "fallback_from" not in sol.provenance
    weighted = cl.ERM(X, y, loss="squared_classification", penalty="l1", lam=5.7e-4,
                      sample_weight=np.ones(n))
    assert exact_chain(weighted) == ["cd", "exact-primal"]


@pytest.mark.parametrize("penalty,kw", [("lp", {"p": 1.5}), ("l2", {}), ("l1", {}),
                                        ("none", {})])
def test_perceptron_answers_zero(penalty, kw):
    # F >= 0 = F(0, 0): the cvxpy route took 25 s on breast cancer (lp, lam 3e-5) and its
    # answer was "inaccurate"; at w = 0 the lp certificate's SOCP left a distance ~1e-10
    X, y, _ = _data()
    sol = cl.ERM(X, y, loss="perceptron", penalty=penalty, lam=1e-6, **kw).solve()
    assert sol.status == "optimal" and sol.provenance["route"] == "zero"
    assert sol.report.distance == 0.0 and sol.objective == 0.0


@pytest.mark.parametrize("lam", [3785.3314, 0.37853314])
def test_certificate_on_mixed_feature_scales(lam):
    # features alternately x 1e4 and x 1e-4: bvls on the unscaled projection matrix stopped
    # at a relative distance ~5e-8 from an exact multiplier (the LP's optimal vertex, and
    # cvxpy's answer, were called "inaccurate")
    from sklearn.datasets import load_breast_cancer
    X, y = load_breast_cancer(return_X_y=True)
    X = (X - X.mean(0)) / X.std(0) * np.where(np.arange(X.shape[1]) % 2 == 0, 1e4, 1e-4)
    sol = cl.ERM(X, y, loss="hinge", penalty="l1", lam=lam).solve()
    assert sol.status == "optimal"
    assert sol.provenance["route"] == "lp" and "fallback_from" not in sol.provenance
    # the certificate still refuses a point off the optimum
    bad = cl.Solution(w=sol.w * (1 + 1e-6), b=sol.b)
    assert not cl.ERM(X, y, loss="hinge", penalty="l1", lam=lam).certificate(bad).passed


@pytest.mark.parametrize("order", ["C", "F"])
def test_column_hashes_equal_the_numpy_reference_and_find_copies(order):
    # the compiled hash replaced np.unique over whole columns (1.6 s at 50000 x 200, the
    # lasso benchmark's 0.24 s -> 1.34 s); copies must still be found, -0.0 equal to 0.0
    from convexlearn.solvers.erm.cd_polish import (_column_hashes, column_hashes_reference,
                                                   duplicate_groups)
    rng = np.random.default_rng(3)
    X = rng.standard_normal((40, 9))
    X[:, 4] = X[:, 1]
    X[:, 7] = -0.0 * np.abs(X[:, 7])
    X[:, 8] = 0.0
    X[0, 2] = X[0, 5] = 1.0          # equal in one entry only: not copies
    X = np.asarray(X, order=order)
    got = _column_hashes(X.view(np.uint64), X.flags.f_contiguous)
    np.testing.assert_array_equal(got, column_hashes_reference(X))
    assert [tuple(g) for g in duplicate_groups(X)] == [(1, 4), (7, 8)]
    X[3, 4] += 1e-15                  # one ulp-size change: no longer a copy
    assert [tuple(g) for g in duplicate_groups(X)] == [(7, 8)]


def test_wide_lasso_far_from_interpolation_goes_to_cd_first():
    """d > n: the homotopy first only below HOMOTOPY_FIRST_FRACTION lam_max; above, the
    support is small and CD's working sets answer (measured 3x faster at lam_max / 2)."""
    from sklearn.datasets import make_regression
    from convexlearn.routes.erm import HOMOTOPY_FIRST_FRACTION, exact_chain
    X, y = make_regression(200, 300, n_informative=60, effective_rank=75, noise=1.0,
                           random_state=0)
    lam_max = float(np.max(np.abs(2.0 / 200 * (X - X.mean(0)).T @ (y - y.mean()))))
    for frac, first in ((0.5, "cd"), (0.3 * HOMOTOPY_FIRST_FRACTION, "homotopy")):
        erm = cl.ERM(X, y, loss="squared", penalty="l1", lam=frac * lam_max)
        assert exact_chain(erm)[0] == first
        sol = erm.solve()
        assert sol.ok and sol.provenance["route"] == first
    below = cl.ERM(X, y, loss="squared", penalty="l1", lam=1.001 * lam_max).solve()
    assert below.ok and not np.any(below.w)
