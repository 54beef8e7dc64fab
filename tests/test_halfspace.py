"""Halfspace.check(): verdicts, certificates, agreement with scipy's HiGHS, bad input."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st
from scipy.optimize import linprog

import convexlearn as cl
from convexlearn.certify.separability import verify, verify_certificate, verify_result
from convexlearn.errors import DataError, ParameterError
from helpers import binary_dataset

XOR_X = np.array([[0.0, 0.0], [1.0, 1.0], [0.0, 1.0], [1.0, 0.0]])
XOR_Y = np.array([1, 1, -1, -1])


def assert_verified(X, y, res, exact=True):
    """Re-check the result's certificate from the data, independently of res.verified."""
    checks = verify_result(X, y, res, exact="auto" if exact else False)
    assert res.verified, res.summary()
    assert all(c.passed for c in checks), "\n".join(map(str, checks))
    if exact:
        assert any(c.arithmetic == "exact" for c in checks), "expected an exact check"
    return checks


def linprog_consistency(X, y, homogeneous=False):
    """scipy's HiGHS on the consistency LP: -y_i [x_i, 1] . (w, b) <= -1."""
    A = X if homogeneous else np.hstack([X, np.ones((X.shape[0], 1))])
    return linprog(np.zeros(A.shape[1]), A_ub=-(y[:, None] * A), b_ub=-np.ones(len(y)),
                   bounds=(None, None), method="highs")


def linprog_min_slack(X, y):
    n, d = X.shape
    A = np.hstack([X, np.ones((n, 1)), np.zeros((n, n))])
    A = -(y[:, None] * A)
    A[:, d + 1:] -= np.eye(n)
    c = np.r_[np.zeros(d + 1), np.ones(n)]
    return linprog(c, A_ub=A, b_ub=-np.ones(n), bounds=[(None, None)] * (d + 1) + [(0, None)] * n,
                   method="highs")


def signed(y, classes):
    return np.where(y == classes[1], 1.0, -1.0)


@pytest.mark.parametrize("standardized", [False, True])
def test_iris_setosa_versicolor_separable_agrees_with_highs(standardized):
    X, y = binary_dataset("iris", (0, 1), standardized=standardized)
    res = cl.Halfspace(X, y).check()
    assert res.separable
    assert_verified(X, y, res)
    ys = signed(y, res.label_map.classes)
    assert np.min(ys * (X @ res.w + res.b)) >= 1 - 1e-7
    ref = linprog_consistency(X, ys)
    assert ref.status == 0, ref.message          # HiGHS also finds the LP feasible
    # scipy's hyperplane passes our verifier too
    assert all(c.passed for c in verify(X, ys, w=ref.x[:-1], b=ref.x[-1]))
    # The maximal margin bounds the LP hyperplane's geometric margin, and matches LIBSVM.
    geometric = np.min(ys * (X @ res.w + res.b)) / np.linalg.norm(res.w)
    assert res.margin >= geometric * (1 - 1e-6)
    from sklearn.svm import SVC
    svc = SVC(kernel="linear", C=1e8, tol=1e-10).fit(X, y)
    assert res.margin == pytest.approx(1 / np.linalg.norm(svc.coef_), rel=1e-4)


@pytest.mark.parametrize("standardized", [False, True])
def test_iris_versicolor_virginica_not_separable_agrees_with_highs(standardized):
    X, y = binary_dataset("iris", (1, 2), standardized=standardized)
    res = cl.Halfspace(X, y).check()
    assert not res.separable
    assert_verified(X, y, res)
    ys = signed(y, res.label_map.classes)
    lam = res.certificate
    assert lam.min() >= 0
    assert lam[ys > 0].sum() == pytest.approx(1) and lam[ys < 0].sum() == pytest.approx(1)
    # the meeting point is in both hulls
    assert np.allclose(X[ys > 0].T @ lam[ys > 0], res.meeting_point, atol=1e-9)
    assert np.allclose(X[ys < 0].T @ lam[ys < 0], res.meeting_point, atol=1e-9)
    assert linprog_consistency(X, ys).status == 2      # HiGHS: infeasible
    slack = linprog_min_slack(X, ys)
    assert slack.status == 0
    assert res.min_total_slack == pytest.approx(slack.fun, rel=1e-7)
    assert res.slack_samples.size >= 1


def test_min_total_slack_matches_its_dual_bound():
    """Weak duality: a lambda with 0 <= lambda <= 1 and the balance gives sum(lambda) <= slack."""
    X, y = binary_dataset("iris", (1, 2), standardized=False)
    res = cl.Halfspace(X, y).check()
    ys = signed(y, res.label_map.classes)
    lam = res.certificate / res.certificate.max()   # scaled into [0, 1], still balanced
    assert np.allclose(X.T @ (ys * lam), 0, atol=1e-9) and abs(ys @ lam) < 1e-9
    assert lam.sum() <= res.min_total_slack + 1e-9


def test_xor_not_separable_then_separable_after_degree_2_map():
    res = cl.Halfspace(XOR_X, XOR_Y).check()
    assert not res.separable
    assert_verified(XOR_X, XOR_Y, res)
    assert np.allclose(res.meeting_point, [0.5, 0.5])
    assert res.min_total_slack == pytest.approx(4.0)
    exact_lam = [c for c in res.checks if c.arithmetic == "exact"][0].exact
    assert exact_lam == [0.5, 0.5, 0.5, 0.5]
    Phi = cl.polynomial_features(XOR_X, degree=2)
    lifted = cl.Halfspace(Phi, XOR_Y).check()
    assert lifted.separable
    assert_verified(Phi, XOR_Y, lifted)
    assert lifted.margin > 0


def test_homogeneous_differs_from_affine():
    # +1 at (1, 0) and (-1, 0), -1 at (0, 1): b separates them, no line through 0 does.
    X = np.array([[1.0, 0.0], [-1.0, 0.0], [0.0, 1.0]])
    y = np.array([1, 1, -1])
    affine = cl.Halfspace(X, y).check()
    assert affine.separable
    assert_verified(X, y, affine)
    hom = cl.Halfspace(X, y, intercept=False).check()
    assert not hom.separable and hom.homogeneous
    assert_verified(X, y, hom)
    assert hom.certificate[2] == 0 and hom.certificate[0] == pytest.approx(0.5)


def test_homogeneous_separable_has_zero_intercept():
    rng = np.random.default_rng(3)
    X = rng.standard_normal((40, 4))
    y = np.where(X @ rng.standard_normal(4) >= 0, 1, -1)
    res = cl.Halfspace(X, y, intercept=False).check()
    assert res.separable and res.b == 0.0
    assert_verified(X, y, res)
    assert linprog_consistency(X, y.astype(float), homogeneous=True).status == 0


def test_summary_and_problem():
    res = cl.Halfspace(XOR_X, XOR_Y).check()
    text = res.summary()
    assert "NOT SEPARABLE" in text and "meeting point" in text and "verified: yes" in text
    hs = cl.Halfspace(XOR_X, XOR_Y)
    for which in ("consistency", "certificate", "min_slack"):
        assert hs.problem(which).is_dcp()
    with pytest.raises(ParameterError, match="which"):
        hs.problem("dual")


def test_bad_input_errors():
    with pytest.raises(DataError, match="one class"):
        cl.Halfspace([[0.0], [1.0]], [1, 1])
    with pytest.raises(DataError, match="empty"):
        cl.Halfspace(np.zeros((0, 2)), [])
    with pytest.raises(DataError, match="non-finite"):
        cl.Halfspace([[0.0, np.nan], [1.0, 1.0]], [0, 1])
    with pytest.raises(DataError, match=r"zero vector.*intercept=True"):
        cl.Halfspace(XOR_X, XOR_Y, intercept=False)
    # the zero vector is no problem for affine halfspaces
    assert not cl.Halfspace(XOR_X, XOR_Y).check(slack=False).separable


# --------------------------------------------------------------- property tests
def _labels(draw, n):
    y = np.array(draw(st.lists(st.sampled_from([-1, 1]), min_size=n, max_size=n)))
    y[0], y[1] = 1, -1              # both classes present
    return y


@st.composite
def general_position(draw):
    d = draw(st.integers(2, 6))
    n = draw(st.integers(2, d))
    seed = draw(st.integers(0, 2**32 - 1))
    X = np.random.default_rng(seed).standard_normal((n, d))
    return X, _labels(draw, n)


@given(general_position(), st.booleans())
def test_n_le_d_points_in_general_position_are_separable(data, homogeneous):
    X, y = data
    res = cl.Halfspace(X, y, intercept=not homogeneous).check(margin=False)
    assert res.separable
    assert_verified(X, y, res)


@given(st.integers(0, 2**32 - 1), st.integers(1, 4), st.integers(3, 12))
def test_identical_points_with_opposite_labels_are_never_separable(seed, d, n):
    rng = np.random.default_rng(seed)
    X = rng.standard_normal((n, d))
    y = rng.choice([-1, 1], size=n)
    i = rng.integers(n)
    X = np.vstack([X, X[i]])
    y = np.append(y, -y[i])
    res = cl.Halfspace(X, y).check(slack=False)
    assert not res.separable
    assert_verified(X, y, res)


@given(st.integers(0, 2**32 - 1), st.integers(1, 3), st.integers(4, 15),
       st.floats(1e-3, 1e3), st.booleans(), st.booleans())
def test_verdict_invariant_to_permutation_and_scaling(seed, d, n, scale, negate, homogeneous):
    rng = np.random.default_rng(seed)
    X = rng.integers(-3, 4, size=(n, d)).astype(float) + rng.standard_normal((n, d)) * 0.5
    X[np.all(X == 0, axis=1)] = 1.0       # homogeneous problems exclude the zero vector
    y = rng.choice([-1, 1], size=n)
    y[:2] = [1, -1]
    c = -scale if negate else scale
    perm = rng.permutation(n)
    base = cl.Halfspace(X, y, intercept=not homogeneous).check(margin=False, slack=False)
    other = cl.Halfspace(c * X[perm], y[perm], intercept=not homogeneous).check(margin=False,
                                                                            slack=False)
    assert base.separable == other.separable
    assert_verified(X, y, base, exact=False)
    assert_verified(c * X[perm], y[perm], other, exact=False)


@pytest.mark.parametrize("classes, homogeneous", [((0, 1), False), ((1, 2), False),
                                                  ((1, 2), True)])
def test_highspy_and_cvxpy_backends_agree(classes, homogeneous):
    X, y = binary_dataset("iris", classes, standardized=False)
    by_cvxpy = cl.Halfspace(X, y, intercept=not homogeneous).check(backend="cvxpy", margin=False)
    by_highspy = cl.Halfspace(X, y, intercept=not homogeneous).check(backend="highspy", margin=False)
    assert by_cvxpy.separable == by_highspy.separable
    assert by_cvxpy.provenance["backend"] == "cvxpy" and by_highspy.provenance["backend"] == "highspy"
    for res in (by_cvxpy, by_highspy):
        assert_verified(X, y, res)
    if not by_cvxpy.separable:
        assert by_cvxpy.provenance["certificate_source"] == "certificate LP"
        assert by_highspy.provenance["certificate_source"] in (
            "dual ray of the consistency LP", "certificate LP")
        assert by_cvxpy.min_total_slack == pytest.approx(by_highspy.min_total_slack, rel=1e-7)
    with pytest.raises(ParameterError, match="backend"):
        cl.Halfspace(X, y).check(backend="glpk")


# ------------------------------------------------- scaling (absolute solver tolerances)
def _noisy_gaussian():
    """20 points in 2-D labeled by a noisy sign of x_0 (separable for this seed)."""
    rng = np.random.default_rng(0)
    X = rng.normal(size=(20, 2))
    return X, np.where(X[:, 0] + 0.3 * rng.normal(size=20) > 0, 1, -1)


@pytest.mark.parametrize("data", ["gaussian", "iris"])
@pytest.mark.parametrize("scale", [1e8, 1e-8])
def test_margin_is_scale_covariant_at_extreme_scales(data, scale):
    """margin(sX) = s margin(X). Before the fix, on the gaussian data, 1e8 crashed with
    ZeroDivisionError (the SVM returned w = 0) and 1e-8 raised InfeasibleError."""
    X, y = _noisy_gaussian() if data == "gaussian" else binary_dataset("iris", (0, 1), False)
    base = cl.Halfspace(X, y).check(slack=False)
    assert base.separable and base.margin > 0
    res = cl.Halfspace(scale * X, y).check(slack=False)
    assert res.separable
    assert_verified(scale * X, y, res)
    assert res.margin == pytest.approx(scale * base.margin, rel=1e-6)
    assert res.notes == [] and res.provenance["margin_svm_status"] == "optimal"


class _Broken:
    """Stand-ins for a failing hard-margin SVM solve."""

    @staticmethod
    def raises(self, *args, **kwargs):
        raise cl.SolverError("simulated solver failure")

    @staticmethod
    def inaccurate(self, *args, **kwargs):
        sol = _Broken.real(self, *args, **kwargs)
        sol.status = "inaccurate"
        return sol


@pytest.mark.parametrize("mode, reason", [("raises", "SolverError: simulated"),
                                          ("inaccurate", "status 'inaccurate'")])
def test_margin_failure_keeps_the_proven_verdict(monkeypatch, mode, reason):
    from convexlearn.svm import SVM
    _Broken.real = SVM.solve
    monkeypatch.setattr(SVM, "solve", getattr(_Broken, mode))
    X, y = binary_dataset("iris", (0, 1), standardized=True)
    res = cl.Halfspace(X, y).check()
    assert res.separable and res.margin is None
    assert_verified(X, y, res)
    assert len(res.notes) == 1 and reason in res.notes[0] and "margin not computed" in res.notes[0]
    assert "note: margin not computed" in res.summary()


@pytest.mark.parametrize("homogeneous", [False, True])
def test_tiny_and_huge_features_do_not_change_the_verdict(homogeneous):
    """HiGHS's tolerances are absolute: 1e-12 apart used to read as 'not separable'."""
    # Two distinct points 1e-12 apart (homogeneous: on either side of 0).
    X = np.array([[-1e-12], [1e-12]]) if homogeneous else np.array([[0.0], [1e-12]])
    y = np.array([0, 1])
    res = cl.Halfspace(X, y, intercept=not homogeneous).check()
    assert res.separable
    assert_verified(X, y, res)
    # One tiny and one huge feature, the classes split by the sign of the tiny one.
    rng = np.random.default_rng(1)
    Z = np.column_stack([rng.standard_normal(30) * 1e-10, rng.standard_normal(30) * 1e9])
    labels = np.where(Z[:, 0] > 0, 1, -1)
    res = cl.Halfspace(Z, labels, intercept=not homogeneous).check(margin=False)
    assert res.separable
    assert_verified(Z, labels, res)


def test_exact_certificate_check_is_invariant_to_feature_scales():
    # Found by hypothesis: 4 points, columns scaled by 1e8 and 1e-8. The basis for the exact
    # solve was picked by a QR rank threshold relative to the largest row, so the 1e-8 row
    # counted as zero and a valid certificate was reported "not proven".
    rng = np.random.default_rng(0)
    X = rng.integers(-3, 4, size=(4, 2)).astype(float) + rng.standard_normal((4, 2)) * 0.5
    y = rng.choice([-1, 1], size=4)
    y[:2] = [1, -1]
    base = cl.Halfspace(X, y).check(margin=False, slack=False)
    assert not base.separable
    for D in ([1e8, 1e-8], [1e-8, 1e8], [1.0, 1.0]):
        XD = X * np.array(D)
        res = cl.Halfspace(XD, y).check(margin=False, slack=False)
        assert not res.separable
        assert_verified(XD, y, res, exact=False)
        exact = verify(XD, y, lam=res.certificate, exact=True)[-1]
        assert exact.arithmetic == "exact" and exact.passed, exact.message


@given(st.integers(0, 2**32 - 1), st.integers(1, 3), st.integers(4, 12), st.booleans(),
       st.data())
def test_verdict_invariant_to_per_column_scaling(seed, d, n, homogeneous, data):
    """Separability is invariant under X -> X D (D > 0 diagonal, factors in [1e-9, 1e9]);
    the certificate found on X D, mapped back (w -> D w, lambda unchanged), proves it on X."""
    rng = np.random.default_rng(seed)
    X = rng.integers(-3, 4, size=(n, d)).astype(float) + rng.standard_normal((n, d)) * 0.5
    X[np.all(X == 0, axis=1)] = 1.0
    y = rng.choice([-1, 1], size=n)
    y[:2] = [1, -1]
    exponents = data.draw(st.lists(st.floats(-9, 9), min_size=d, max_size=d))
    D = 10.0 ** np.array(exponents)
    base = cl.Halfspace(X, y, intercept=not homogeneous).check(margin=False, slack=False)
    other = cl.Halfspace(X * D, y, intercept=not homogeneous).check(margin=False, slack=False)
    assert base.separable == other.separable
    assert_verified(X, y, base, exact=False)
    assert_verified(X * D, y, other, exact=False)
    if other.separable:
        mapped = verify(X, y, w=other.w * D, b=other.b, homogeneous=homogeneous, exact="auto")
    else:
        mapped = verify(X, y, lam=other.certificate, homogeneous=homogeneous, exact="auto")
    assert all(c.passed for c in mapped), "\n".join(map(str, mapped))


@pytest.mark.parametrize("offset", [1e6, 1e9, 1e12])
def test_far_from_the_origin_verdicts_and_certificates(offset):
    # Found in review: at x ~ 1e9 with spread 1, the LPs (absolute tolerances) called a
    # separable set not separable, and the float lambda check passed a wrong lambda because
    # its rounding scale included the offset. Both now work on centred data.
    X = np.array([[0.0, 5.0], [1.0, 5.0], [0.0, 6.0], [1.0, 6.0]]) + [offset, 0.0]
    y = np.array([0, 1, 0, 1])                      # x_0 = offset + 1/2 separates
    res = cl.Halfspace(X, y).check()
    assert res.separable and res.verified
    assert res.margin == pytest.approx(0.5, rel=1e-6)
    assert_verified(X, y, res)
    wrong = verify_certificate(X, np.where(y > 0, 1, -1), [1.0, 1.0, 0.0, 0.0])
    assert not wrong.passed and "balance" in wrong.message
    # XOR at the same offset: not separable, with a certificate that verifies.
    xor = cl.Halfspace(X, np.array([0, 1, 1, 0])).check()
    assert not xor.separable and xor.verified
    assert_verified(X, np.array([0, 1, 1, 0]), xor)


@pytest.mark.parametrize("shift", [0.0, 5.0])
def test_repr_is_short_whatever_n(shift):
    # the arrays are there to inspect, not to print (the dataclass repr was 8 KB at n=60)
    rng = np.random.default_rng(0)
    for n in (60, 600):
        X = rng.standard_normal((n, 3))
        y = np.where(rng.random(n) > 0.5, 1, -1)
        res = cl.Halfspace(X + shift * y[:, None], y).check(margin=False)
        text = repr(res)
        assert len(text) < 200 and "\n" not in text and "array" not in text
        assert text.startswith("SeparabilityResult(separable" if res.separable
                               else "SeparabilityResult(not separable")
        assert "verified=True" in text and "exact passed" in text
