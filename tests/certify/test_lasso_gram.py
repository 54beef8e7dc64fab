"""The lasso's certificate from Gram summaries (convexlearn.certify.lasso_gram): the same
verdict and objective as the certificate from the data where its rounding bound fits, no
verdict (None) where it does not, and a failure on a perturbed point."""

import numpy as np
import pytest

import convexlearn as cl
from convexlearn.certify.lasso_gram import gram_certificate, gram_summary
from convexlearn.certify.optimality import null_scale


def _data(seed=0, n=400, d=30, noise=1.0, offset=0.0):
    rng = np.random.default_rng(seed)
    X = np.sqrt(0.5) * rng.standard_normal((n, d)) + np.sqrt(0.5) * rng.standard_normal((n, 1))
    w = np.zeros(d)
    w[:5] = rng.standard_normal(5)
    return X + offset, X @ w + noise * rng.standard_normal(n) + 3.0


def _gram(erm, sol, summary, tol=1e-9):
    return gram_certificate(summary, erm.loss, erm.penalty, erm.lam, sol.w, sol.b,
                            null_scale(erm.loss, erm.y, erm.intercept), tol)


@pytest.mark.parametrize("intercept", [True, False])
@pytest.mark.parametrize("offset", [0.0, 1e3])
def test_agrees_with_the_certificate_from_the_data(intercept, offset):
    X, y = _data(offset=offset)
    summary = gram_summary(X, y, intercept, block=64)
    erm = cl.ERM(X, y, loss="squared", penalty="l1", lam=1.0, intercept=intercept)
    lam_max = 2 * np.abs(summary.xty).max() / len(y)
    for frac in (0.9, 0.1, 0.01):
        erm.lam = frac * lam_max
        sol = erm.solve()
        direct = erm.certificate(sol)
        rep = _gram(erm, sol, summary)
        assert direct.passed and rep is not None and rep.passed
        assert rep.objective == pytest.approx(direct.objective, rel=1e-11)
        # upper bounds of the figures from the data, within the rounding bounds
        assert rep.relative_gap >= direct.relative_gap - 1e-12
        assert rep.relative_distance >= 0 and rep.details["method"].startswith("Gram")


def test_a_perturbed_point_is_not_certified():
    X, y = _data()
    summary = gram_summary(X, y, True)
    erm = cl.ERM(X, y, loss="squared", penalty="l1", lam=0.05)
    sol = erm.solve()
    assert _gram(erm, sol, summary) is not None
    for j, step in ((0, 1e-6), (20, 1e-6)):       # a nonzero coordinate, a zero one
        w = np.array(sol.w)
        w[j] += step * max(1.0, abs(w[j]))
        bad = cl.Solution(w=w, b=sol.b)
        assert not erm.certificate(bad).passed
        assert _gram(erm, bad, summary) is None
    assert _gram(erm, cl.Solution(w=sol.w, b=sol.b + 1e-5), summary) is None


def test_no_verdict_where_the_rounding_bound_does_not_fit():
    # an almost interpolating fit: ||r|| ~ 1e-7 ||y||, the Gram's sum cancels to ~1e-14
    # of its terms; its bound exceeds the tolerance and the caller must use X itself
    X, y = _data(noise=1e-7)
    summary = gram_summary(X, y, True)
    erm = cl.ERM(X, y, loss="squared", penalty="l1", lam=1e-9)
    sol = erm.solve()
    assert erm.certificate(sol).passed
    assert _gram(erm, sol, summary) is None
    # ... which the path does: every point certified, the small lam from the data
    lam_max = 2 * np.abs(summary.xty).max() / len(y)
    path = erm.path([0.5 * lam_max, 1e-9])
    assert path.certified
    methods = [s.report.details["method"] for s in path]
    assert methods[0].startswith("Gram") and not methods[1].startswith("Gram")


def test_only_the_lasso():
    X, y = _data()
    summary = gram_summary(X, y, True)
    erm = cl.ERM(X, y, loss="squared", penalty="elastic_net", lam=0.05, l1_ratio=0.5)
    assert _gram(erm, erm.solve(), summary) is None
    clf = cl.ERM(X, (y > np.median(y)).astype(int), loss="squared_classification",
                 penalty="l1", lam=0.05)
    assert _gram(clf, clf.solve(), gram_summary(X, clf.y, True)) is None
