"""Shattering by halfspaces: the LP decider and the rank criterion agree; VC witnesses."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st
from scipy.optimize import linprog

import convexlearn as cl
from convexlearn.errors import DataError, ParameterError
from convexlearn.shattering import (MAX_LP_POINTS, unrealizable_labeling, vc_dimension,
                                    vc_witness)


def realizable(points, labels, homogeneous):
    """scipy's HiGHS on the consistency LP (an outside oracle for one labeling)."""
    A = points if homogeneous else np.hstack([points, np.ones((len(points), 1))])
    res = linprog(np.zeros(A.shape[1]), A_ub=-(labels[:, None] * A), b_ub=-np.ones(len(labels)),
                  bounds=(None, None), method="highs")
    assert res.status in (0, 2), res.message
    return res.status == 0


def assert_methods_agree(points, homogeneous):
    by_lp = cl.shatters(points, homogeneous, method="lp")
    by_rank = cl.shatters(points, homogeneous, method="algebra")
    assert by_lp == by_rank, f"lp says {by_lp}, algebra says {by_rank} for\n{points}"
    for method in ("lp", "algebra"):
        witness = unrealizable_labeling(points, homogeneous, method=method)
        assert (witness is None) == by_lp
        if witness is not None:          # the witness really is unrealizable (outside oracle)
            assert not realizable(np.asarray(points, float), witness, homogeneous), method
    return by_lp


@pytest.mark.parametrize("homogeneous", [True, False])
@pytest.mark.parametrize("d", [1, 2, 3])
def test_vc_dimension_is_witnessed(d, homogeneous):
    W = vc_witness(d, homogeneous)
    assert W.shape == (vc_dimension(d, homogeneous), d)
    assert vc_dimension(d, homogeneous) == (d if homogeneous else d + 1)
    assert assert_methods_agree(W, homogeneous)
    # one more point, wherever it is, breaks shattering (Radon / linear dependence)
    rng = np.random.default_rng(d)
    for _ in range(2):
        bigger = np.vstack([W, rng.standard_normal((1, d))])
        assert not assert_methods_agree(bigger, homogeneous)


@pytest.mark.parametrize("homogeneous", [True, False])
def test_random_point_sets_agree(homogeneous):
    rng = np.random.default_rng(7)
    outcomes = set()
    for m, d in [(2, 2), (3, 2), (3, 3), (4, 3), (5, 4), (4, 2)]:
        outcomes.add(assert_methods_agree(rng.standard_normal((m, d)), homogeneous))
    assert outcomes == {True, False}       # both answers occur


@pytest.mark.parametrize("points, homogeneous, expected", [
    ([[1.0, 2.0], [1.0, 2.0]], False, False),                   # a repeated point
    ([[0.0, 0.0], [1.0, 1.0], [2.0, 2.0]], False, False),       # collinear in R^2
    ([[1.0, 1.0], [2.0, 2.0]], True, False),                    # on one line through 0
    ([[0.0, 0.0], [1.0, 3.0]], True, False),                    # the origin, homogeneous
    ([[0.0, 0.0], [1.0, 3.0]], False, True),                    # ... is fine when affine
    ([[1.0, 0.0, 0.0], [0.0, 1.0, 0.0], [1.0, 1.0, 0.0]], True, False),  # dependent in R^3
    ([[1.0, 0.0, 0.0], [0.0, 1.0, 0.0], [1.0, 1.0, 0.0]], False, True),  # affinely independent
])
def test_degenerate_point_sets(points, homogeneous, expected):
    assert assert_methods_agree(np.array(points), homogeneous) == expected


@given(st.integers(1, 3), st.integers(1, 5), st.booleans(), st.integers(0, 2**32 - 1))
def test_methods_agree_on_small_integer_sets(d, m, homogeneous, seed):
    # Small integer coordinates make exact degeneracies (repeats, collinearity) common.
    points = np.random.default_rng(seed).integers(-2, 3, size=(m, d)).astype(float)
    assert_methods_agree(points, homogeneous)


def test_limits_and_errors():
    with pytest.raises(ParameterError, match=r"at most 12 points.*algebra"):
        cl.shatters(np.eye(MAX_LP_POINTS + 1), homogeneous=True)
    assert cl.shatters(np.eye(MAX_LP_POINTS + 1), homogeneous=True, method="algebra")
    with pytest.raises(ParameterError, match="method"):
        cl.shatters(np.eye(2), method="rank")
    with pytest.raises(DataError, match="non-finite"):
        cl.shatters([[0.0, np.nan]])
    with pytest.raises(DataError, match="empty"):
        cl.shatters(np.zeros((0, 2)))
    with pytest.raises(ParameterError, match="positive integer"):
        vc_dimension(0)
