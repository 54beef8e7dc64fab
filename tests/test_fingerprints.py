"""Fingerprints recorded by ERM.solve: hashed when first read, equal to the eager one, and still
refusing a solution of another problem (compare, save/load, verify, paths)."""

from __future__ import annotations

import copy
import json
import pickle

import numpy as np
import pytest

import convexlearn as cl
from convexlearn import fingerprints
from convexlearn.errors import ParameterError
from convexlearn.fingerprints import Deferred, Provenance


def _problem(lam=0.05, shift=0.0, **kw):
    rng = np.random.default_rng(3)
    X = rng.standard_normal((120, 8)) + shift
    y = X[:, 0] - 2 * X[:, 1] + 0.5 * rng.standard_normal(120)
    return cl.ERM(X, y, loss="squared", penalty="l1", lam=lam, **kw)


@pytest.fixture
def hashes(monkeypatch):
    """Counts the passes of data_digest over the data."""
    count = [0]
    real = fingerprints.data_digest

    def counted(*arrays):
        count[0] += 1
        return real(*arrays)

    monkeypatch.setattr(fingerprints, "data_digest", counted)
    return count


def test_solve_does_not_hash_until_the_fingerprint_is_read(hashes):
    erm = _problem()
    sol = erm.solve()
    assert sol.ok and hashes[0] == 0
    assert "fingerprint" in sol.provenance and sol.provenance["route"] and hashes[0] == 0
    recorded = sol.provenance["fingerprint"]
    assert hashes[0] == 1 and isinstance(recorded, str) and recorded.startswith("sha256:")
    assert recorded == erm.fingerprint() and hashes[0] == 1      # hashed once per problem
    assert erm.solve("cd").provenance["fingerprint"] == recorded and hashes[0] == 1


def test_deferred_fingerprint_keeps_the_parameters_of_its_solve():
    erm = _problem()
    sol = erm.solve()
    erm.lam = 0.2             # read after lam changed: still the fingerprint of lam = 0.05
    assert sol.provenance["fingerprint"] == _problem(lam=0.05).fingerprint()
    assert sol.provenance["fingerprint"] != erm.fingerprint()


def test_deferred_fingerprint_refuses_other_problems():
    sol = _problem().solve()
    other = _problem(shift=1e-12)                 # other data, the same parameters
    with pytest.raises(ParameterError, match="another problem"):
        cl.compare(sol, other.solve())
    with pytest.raises(ParameterError, match="another problem"):
        cl.verify(sol, problem=other)
    weighted = _problem(sample_weight=np.linspace(1.0, 2.0, 120))
    assert weighted.fingerprint() != _problem().fingerprint()     # the weights count
    assert _problem(sample_weight=None).fingerprint() == _problem().fingerprint()


def test_every_whole_view_of_the_provenance_computes_the_values():
    def fresh():
        p = Provenance(route="cd")
        p["fingerprint"] = Deferred(lambda: "sha256:abc")
        return p

    want = {"route": "cd", "fingerprint": "sha256:abc"}
    views = [dict, lambda p: {**p}, lambda p: json.loads(json.dumps(p)), repr,
             lambda p: pickle.loads(pickle.dumps(p)), copy.deepcopy, copy.copy,
             lambda p: p.copy(), lambda p: dict(p.items()), lambda p: dict(zip(p, p.values())),
             lambda p: p | {}, lambda p: {} | p]
    for view in views:
        got = view(fresh())
        assert (got == repr(want)) if isinstance(got, str) else (got == want), view
        assert not any(isinstance(v, Deferred) for v in dict.values(got)) \
            if isinstance(got, dict) else True
    p = fresh()
    assert p == want and not (p != want)
    assert fresh().get("fingerprint") == "sha256:abc" and fresh().pop("fingerprint") == \
        "sha256:abc"
    assert isinstance(dict.__getitem__(fresh(), "fingerprint"), Deferred)


def test_saved_solution_carries_the_fingerprint(tmp_path):
    erm = _problem()
    sol = erm.solve()
    back = cl.load(sol.save(tmp_path / "s.json"))
    assert back.provenance["fingerprint"] == erm.fingerprint()
    other = _problem(lam=0.3)
    with pytest.raises(ParameterError, match="another problem"):
        cl.verify(back, problem=other)


def test_exact_path_points_record_their_own_lam():
    erm = _problem()
    path = erm.path([0.3, 0.1], exact=True)
    for sol in path.solutions[:3]:
        erm.lam = sol.extra["lam"]
        assert sol.provenance["fingerprint"] == erm.fingerprint()


def _kernel_svm(C=1.0, shift=0.0):
    rng = np.random.default_rng(5)
    X = rng.standard_normal((80, 3)) + shift
    return cl.SVM(X, np.where(X[:, 0] + X[:, 1] > 0, 1, -1), C=C, kernel="rbf")


def test_svm_solve_does_not_hash_until_the_fingerprint_is_read(hashes):
    svm = _kernel_svm()
    sol = svm.solve()            # its certificate included: nothing to compare inside
    assert sol.status == "optimal" and hashes[0] == 0
    assert isinstance(sol.provenance, Provenance) and "fingerprint" in sol.provenance
    recorded = sol.provenance["fingerprint"]
    assert hashes[0] == 1 and recorded == svm.fingerprint() and hashes[0] == 1
    assert svm.with_C(2.0).solve().provenance["fingerprint"] == svm.with_C(2.0).fingerprint()
    assert hashes[0] == 1                       # with_C shares the problem's digest
    assert svm.kkt(sol, tol=1e-6).passed        # the recorded fingerprint is compared


def test_svm_deferred_fingerprint_refuses_other_problems():
    sol = _kernel_svm().solve()
    for other in (_kernel_svm(shift=1e-12), _kernel_svm(C=2.0)):
        with pytest.raises(ParameterError, match="another problem"):
            other.kkt(sol)
    sol_c = _kernel_svm().solve()
    _kernel_svm().with_C(3.0)                   # (a copy's C does not leak into the record)
    assert sol_c.provenance["fingerprint"] == _kernel_svm().fingerprint()
