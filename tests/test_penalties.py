"""The penalty catalogue: values, subgradients, proxes (against cvxpy), subdifferentials."""

import cvxpy as cp
import numpy as np
import pytest
from hypothesis import given, strategies as st
from hypothesis.extra.numpy import arrays

from convexlearn.errors import NotApplicableError, ParameterError
from convexlearn.penalties import make_penalty

W = np.array([1.5, -0.5, 0.0, 2.0, -3.0])
SPECS = [("none", {}), ("l1", {}), ("l2", {}), ("lp", {"p": 1}), ("lp", {"p": 1.5}),
         ("lp", {"p": 2}), ("lp", {"p": 3}), ("elastic_net", {"l1_ratio": 0.3})]
IDS = [f"{n}{v}" for n, v in SPECS]


def test_values():
    expect = {"none": 0.0, "l1": 7.0, "l2": 0.5 * (W @ W),
              "elastic_net": 0.3 * 7.0 + 0.35 * (W @ W)}
    for name, value in expect.items():
        params = {"l1_ratio": 0.3} if name == "elastic_net" else {}
        assert make_penalty(name, **params).value(W) == pytest.approx(value)
    for p in (1, 1.5, 2, 3):
        assert make_penalty("lp", p=p).value(W) == pytest.approx(np.sum(np.abs(W) ** p) ** (1 / p))
    assert make_penalty("l0").value(W) == 4.0


@pytest.mark.parametrize("name,params", SPECS, ids=IDS)
def test_cvxpy_expression(name, params):
    pen = make_penalty(name, **params)
    assert float(pen.cvxpy(cp.Constant(W)).value) == pytest.approx(pen.value(W), rel=1e-9)


@pytest.mark.parametrize("name,params", SPECS, ids=IDS)
@pytest.mark.parametrize("t", [0.1, 2.0])
def test_prox_against_cvxpy(name, params, t):
    pen = make_penalty(name, **params)
    v = np.array([0.3, -2.0, 0.05, 1.2, -0.7])
    u = pen.prox(v, t)
    x = cp.Variable(5)
    obj = 0.5 * cp.sum_squares(x - v) + t * pen.cvxpy(x)
    cp.Problem(cp.Minimize(obj)).solve(solver="CLARABEL", tol_gap_abs=1e-10, tol_gap_rel=1e-10,
                                       tol_feas=1e-10)

    def F(z):
        return 0.5 * np.sum((z - v) ** 2) + t * pen.value(z)
    assert F(u) <= F(x.value) + 1e-9        # at least as good as the interior-point answer
    np.testing.assert_allclose(u, x.value, atol=1e-5)


@given(arrays(float, 4, elements=st.floats(-3, 3)), arrays(float, 4, elements=st.floats(-3, 3)),
       st.sampled_from(SPECS))
def test_subgradient_inequality(w, z, spec):
    pen = make_penalty(spec[0], **spec[1])
    g = pen.subgradient(w)
    assert pen.value(z) >= pen.value(w) + g @ (z - w) - 1e-9


def test_subdifferential_boxes_and_ball():
    lo_c = make_penalty("l1").subdifferential(W, tol=1e-9)
    kind, c, lo, hi = lo_c
    assert kind == "box" and c[2] == 0.0 and (lo[2], hi[2]) == (-1.0, 1.0)
    np.testing.assert_array_equal(c[[0, 1, 3, 4]], [1, -1, 1, -1])
    kind, c, lo, hi = make_penalty("elastic_net", l1_ratio=0.3).subdifferential(W)
    assert (lo[2], hi[2]) == (-0.3, 0.3)
    assert make_penalty("lp", p=3).subdifferential(np.zeros(3)) == ("ball", 1.5)
    assert make_penalty("lp", p=2).subdifferential(np.zeros(3)) == ("ball", 2.0)


def test_lp_with_p_one_is_l1():
    l1, lp1 = make_penalty("l1"), make_penalty("lp", p=1)
    v = np.array([0.3, -2.0, 0.05])
    np.testing.assert_array_equal(l1.prox(v, 0.5), lp1.prox(v, 0.5))
    assert l1.value(W) == lp1.value(W)


def test_bad_parameters_and_l0():
    with pytest.raises(ParameterError, match="unknown penalty 'l3'"):
        make_penalty("l3")
    with pytest.raises(ParameterError, match=r"p must be .*>= 1.*p=0.5"):
        make_penalty("lp", p=0.5)
    with pytest.raises(ParameterError, match="p=inf"):
        make_penalty("lp", p=float("inf"))
    with pytest.raises(ParameterError, match="l1_ratio"):
        make_penalty("elastic_net", l1_ratio=-0.1)
    with pytest.raises(ParameterError, match=r"unknown parameter.*'q'"):
        make_penalty("lp", q=2)
    l0 = make_penalty("l0")
    assert not l0.convex
    with pytest.raises(NotApplicableError, match="l0.*not convex"):
        l0.cvxpy(cp.Variable(3))
    with pytest.raises(NotApplicableError, match="l0"):
        l0.subgradient(W)


@pytest.mark.parametrize("kind", [np.float32, np.float16, np.float64, np.int64, int, float])
def test_numpy_scalar_parameters_are_accepted(kind):
    """np.float32 is not a float subclass: it used to be rejected as 'not a number'."""
    enet = make_penalty("elastic_net", l1_ratio=kind(1) if kind in (int, np.int64)
                        else kind(0.25))
    expected = 1.0 if kind in (int, np.int64) else 0.25
    assert type(enet.l1_ratio) is float and enet.l1_ratio == expected
    lp = make_penalty("lp", p=kind(3))
    assert type(lp.p) is float and lp.p == 3.0
    assert lp.value(W) == pytest.approx(np.sum(np.abs(W) ** 3) ** (1 / 3))
    for bad in (True, np.bool_(True), "0.5", np.float32("nan"), None):
        with pytest.raises(ParameterError, match="l1_ratio"):
            make_penalty("elastic_net", l1_ratio=bad)
        with pytest.raises(ParameterError, match="p must be"):
            make_penalty("lp", p=bad)


@pytest.mark.parametrize("p", [1.01, 1.1, 1.5, 3.0, 10.0])
def test_lp_prox_is_the_minimizer_and_does_not_depend_on_earlier_calls(p):
    # Found in review: at p = 1.01 (q = 101) the inner root solve crawled and stopped far
    # from the root, so the prox was wrong and changed between identical calls (it starts
    # from the previous call's multiplier).
    v, t = np.array([0.3, -1.2, 2.0, 0.01, 5.0, -0.7]), 0.7
    pen = make_penalty("lp", p=p)
    first = pen.prox(v, t)
    pen.prox(3.0 * v, 0.1)                          # another call in between
    again = pen.prox(v, t)
    np.testing.assert_allclose(again, first, rtol=0, atol=1e-12)
    x = cp.Variable(6)
    cp.Problem(cp.Minimize(0.5 * cp.sum_squares(x - v) + t * cp.pnorm(x, p))).solve(
        solver="CLARABEL")

    def objective(z):
        return 0.5 * np.sum((z - v) ** 2) + t * np.linalg.norm(z, p)
    assert objective(first) <= objective(x.value) + 1e-8


def test_p_that_cvxpy_cannot_represent_is_refused():
    with pytest.raises(ParameterError, match="p=1.0001 is represented by cvxpy's pnorm as p=1.0"):
        make_penalty("lp", p=1.0001)
    assert make_penalty("lp", p=1.001).p == 1.001


# ------------------------------------------------------------------ capabilities
CAPABLE = [(n, v) for n, v in SPECS + [("elastic_net", {"l1_ratio": 1.0})]]


@pytest.mark.parametrize("name,params", CAPABLE)
def test_split_writes_the_penalty(name, params):
    pen = make_penalty(name, **params)
    if not pen.has("split"):
        with pytest.raises(NotApplicableError):
            pen.split(1.0)
        return
    lam1, lam2 = pen.split(0.7)
    assert 0.7 * pen.value(W) == pytest.approx(lam1 * np.abs(W).sum() + lam2 / 2 * (W @ W))


@pytest.mark.parametrize("name,params", CAPABLE)
def test_conjugate_is_the_supremum_that_defines_it(name, params):
    pen = make_penalty(name, **params)
    if not pen.has("conjugate"):
        with pytest.raises(NotApplicableError):
            pen.conjugate(W)
        return
    for v in (np.array([0.2, -0.9]), np.array([1.6, 0.1])):
        ours = pen.conjugate(v)
        w = cp.Variable(2)
        sup = cp.Problem(cp.Maximize(v @ w - pen.cvxpy(w)), [cp.norm_inf(w) <= 1e3]).solve()
        if np.isinf(ours):
            assert sup > 100.0
        else:
            assert ours == pytest.approx(sup, abs=1e-6)


@pytest.mark.parametrize("name,params", CAPABLE)
def test_smooth_piece_is_the_gradient_and_hessian_off_zero(name, params):
    pen = make_penalty(name, **params)
    w = np.array([0.8, -1.3, 2.1])
    if not pen.has("smooth_piece"):
        return
    if name == "lp" and params["p"] == 1:
        with pytest.raises(NotApplicableError):
            pen.smooth_piece(w, 1.0)
        return
    g, H = pen.smooth_piece(w, 2.0)
    eps = 1e-6
    for j in range(3):
        e = np.eye(3)[j] * eps
        fd = (pen.value(w + e) - pen.value(w - e)) / (2 * eps)
        assert 2.0 * fd == pytest.approx(g[j], rel=1e-6)
        gp, _ = pen.smooth_piece(w + e, 2.0)
        gm, _ = pen.smooth_piece(w - e, 2.0)
        np.testing.assert_allclose((gp - gm) / (2 * eps), H[:, j], atol=1e-6)


def test_capabilities_are_queried_alike_and_a_misspelt_one_is_an_error():
    l1 = make_penalty("l1")
    assert l1.has("prox", "split", "sparse", "conjugate") and not l1.has("gradient")
    assert make_penalty("none").has("zero") and not l1.has("zero")
    assert not make_penalty("l0").has("prox") and not make_penalty("l0").has_prox
    with pytest.raises(ValueError, match="unknown penalty capability"):
        l1.has("spars")
    with pytest.raises(NotApplicableError, match="needs the penalty capability 'hessian'.*l1"):
        l1.require("newton", "some problem", "hessian")
