"""Saving and loading a Solution: exact round trip, every field, the saved fixture, refusals."""

from __future__ import annotations

import json
import math
import os
from pathlib import Path

import numpy as np
import pytest

import convexlearn as cl
from convexlearn.errors import DataError
from convexlearn.serialize import TMP_PREFIX, Record, decode, encode

DATA = Path(__file__).parent / "data"
# The fixture's problem: 6 points, C = 1 (also written in tests/data/README.md).
FIXTURE_X = np.array([[0, 0], [-1, -1], [0, 3], [1, 4], [0.5, 1.0], [1, 1.2]], float)
FIXTURE_Y = np.array([-1, -1, 1, 1, -1, 1])


def _bits(a):
    return None if a is None else np.asarray(a, float).tobytes()


def _assert_same(a: cl.Solution, b: cl.Solution):
    for name in ("w", "alpha", "xi", "dual_coef"):
        assert _bits(getattr(a, name)) == _bits(getattr(b, name)), name
    for name in ("b", "objective", "time_s"):
        x, y = float(getattr(a, name)), float(getattr(b, name))
        assert x == y or (math.isnan(x) and math.isnan(y)), name
    assert (a.status, a.method, a.n_iter) == (b.status, b.method, b.n_iter)
    assert a.history.keys() == b.history.keys()
    for key in a.history.keys():
        np.testing.assert_array_equal(a.history[key], b.history[key])
    assert a.to_dict() == b.to_dict()


@pytest.fixture(scope="module")
def problems():
    rng = np.random.default_rng(3)
    X = rng.standard_normal((30, 3))
    y = np.where(X[:, 0] + 0.5 * rng.standard_normal(30) > 0, 1, -1)
    return X, y


@pytest.mark.parametrize("kind, method", [("svm", "exact-primal"), ("svm", "exact-dual"),
                                          ("svm", "smo"), ("svm", "dcd"), ("svm", "pegasos"),
                                          ("rbf", "exact"), ("erm", "prox"), ("erm", "exact")])
def test_round_trip_is_exact_through_a_file(tmp_path, problems, kind, method):
    X, y = problems
    if kind == "erm":
        sol = cl.ERM(X, y, loss="logistic", penalty="l1", lam=0.05).solve(method)
    else:
        svm = cl.SVM(X, y, C=1.0, kernel="rbf" if kind == "rbf" else "linear")
        sol = svm.solve(method) if method.startswith("exact") else svm.solve(method, tol=1e-3)
    path = sol.save(tmp_path / "s.json")
    assert os.listdir(tmp_path) == ["s.json"]            # no temporary file left
    loaded = cl.load(path)
    _assert_same(sol, loaded)
    assert loaded.report.type == type(sol.report).__name__
    if kind != "erm":                                    # the report's arrays, bit for bit
        np.testing.assert_array_equal(loaded.report.support, sol.report.support)
        np.testing.assert_array_equal(loaded.support, sol.report.support)
        assert loaded.report.residuals.keys() == sol.report.residuals.keys()
        cmp = cl.compare(sol, loaded)
        assert cmp.objective_gap == 0.0 and cmp.same_support
    else:
        assert loaded.report.distance == sol.report.distance
    assert json.loads(path.read_text())["format_version"] == cl.solution.FORMAT_VERSION


def test_non_finite_values_numpy_scalars_and_nested_types_round_trip():
    sol = cl.Solution(w=np.array([1.0, np.nan, np.inf, -np.inf, 5e-324, 0.1 + 0.2]),
                      b=np.float64(-0.0), alpha=None, objective=float("nan"),
                      n_iter=np.int64(3), status="max_iter", method="handmade",
                      provenance={"tol": np.float32(1e-3), "attempts": [("A", 1, np.inf)],
                                  "ints": np.arange(3), "labels": np.array(["a", "b"]),
                                  "flag": np.bool_(True), "nested": {"x": -np.inf}})
    sol.history.record(objective=1.0, time=0.0)
    sol.history.record(objective=np.nan, gap=np.inf)
    data = json.loads(json.dumps(sol.to_dict(), allow_nan=False))     # strict JSON
    back = cl.Solution.from_dict(data)
    assert back.to_dict() == sol.to_dict()
    np.testing.assert_array_equal(back.w, sol.w)
    assert math.copysign(1.0, back.b) == -1.0                         # -0.0 stays -0.0
    assert back.provenance["attempts"] == [("A", 1, math.inf)]
    assert back.provenance["ints"].dtype == np.int64
    assert back.provenance["labels"].tolist() == ["a", "b"]
    assert back.provenance["tol"] == float(np.float32(1e-3))
    assert np.isnan(back.history["objective"][1]) and np.isnan(back.history["gap"][0])
    assert isinstance(back.n_iter, int)


def test_encode_decode_table():
    value = {"t": (1, 2.5), "r": Record("KKTReport", {"support": np.array([1, 4])}),
             "f": [math.nan, math.inf], "o": object()}
    data = encode(value)
    json.dumps(data, allow_nan=False)
    back = decode(data)
    assert back["t"] == (1, 2.5) and back["r"].support.tolist() == [1, 4]
    assert math.isnan(back["f"][0]) and back["f"][1] == math.inf
    assert back["o"].startswith("<object object")                     # the one lossy case
    assert encode({k: v for k, v in back.items() if k != "o"}) == \
        {k: v for k, v in data.items() if k != "o"}
    with pytest.raises(AttributeError, match="no field 'nope'"):
        back["r"].nope


def test_saved_fixture_of_format_1_still_loads_and_certifies():
    """A reference saved by an earlier version (tests/data/solution_v1.json) loads, and
    its answer is still the certified optimum of its problem."""
    ref = cl.load(DATA / "solution_v1.json")
    assert ref.method == "exact-dual" and ref.status == "optimal"
    assert ref.support.tolist() == [0, 2, 4, 5]
    svm = cl.SVM(FIXTURE_X, FIXTURE_Y, C=1.0)
    assert svm.kkt(ref).passed                     # recomputed from the data: still optimal
    fresh = svm.solve("exact-dual")
    cmp = cl.compare(ref, fresh)
    assert cmp.relative_gap < 1e-9 and cmp.w_distance < 1e-8 and cmp.same_support


def test_refusals_name_the_file_and_the_reason(tmp_path):
    with pytest.raises(DataError, match="no such file"):
        cl.load(tmp_path / "missing.json")
    (tmp_path / "bad.json").write_text("{not json")
    with pytest.raises(DataError, match="bad.json: not JSON"):
        cl.load(tmp_path / "bad.json")
    (tmp_path / "other.json").write_text('{"format": "something"}')
    with pytest.raises(DataError, match="not a saved convexlearn solution"):
        cl.load(tmp_path / "other.json")
    data = json.loads((DATA / "solution_v1.json").read_text())
    data["format_version"] = 99
    (tmp_path / "new.json").write_text(json.dumps(data))
    with pytest.raises(DataError, match="format version 99, newer than this convexlearn"):
        cl.load(tmp_path / "new.json")
    del data["status"]
    data["format_version"] = 1
    (tmp_path / "cut.json").write_text(json.dumps(data))
    with pytest.raises(DataError, match="missing field 'status'"):
        cl.load(tmp_path / "cut.json")


def test_save_is_atomic_on_failure(tmp_path, monkeypatch):
    sol = cl.load(DATA / "solution_v1.json")
    target = tmp_path / "ref.json"
    target.write_text("old")
    monkeypatch.setattr(os, "replace", lambda *a: (_ for _ in ()).throw(OSError(28, "full")))
    with pytest.raises(OSError):
        sol.save(target)
    assert target.read_text() == "old"
    assert not [p for p in os.listdir(tmp_path) if p.startswith(TMP_PREFIX)]
