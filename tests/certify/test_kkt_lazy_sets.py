"""The KKT report's index sets, deferred on the numpy path (svm_kkt), are those the eager
pass gives; the verdict is computed before they are; copies and pickles carry them."""

from __future__ import annotations

import copy
import pickle

import numpy as np
import pytest

import convexlearn as cl
from convexlearn.app.generators import blobs
from convexlearn.certify import kkt

SETS = ("support", "free", "bounded", "margin_support", "disagreements")


def _args(perturb: float):
    X, y = blobs(80, 0, d=2, separation=1.0)[:2]
    svm = cl.SVM(X, y, C=1.0, kernel="rbf")
    sol = svm.solve()
    alpha = sol.alpha.copy()
    alpha[np.flatnonzero(alpha > 0)[0]] += perturb
    f = svm.decision_function(sol)
    return svm, sol, alpha, f


@pytest.mark.parametrize("perturb", [0.0, 1e-3])
def test_lazy_sets_equal_the_eager_pass(monkeypatch, perturb):
    svm, sol, alpha, f = _args(perturb)
    monkeypatch.setattr(kkt, "compiled_ready", lambda: False)
    common = (svm.y, 1.0, True, alpha, f, 1.0, 1.0, 0.0)
    lazy = kkt.svm_kkt(*common, tol=1e-6)
    C = np.full(alpha.shape, 1.0)
    eager = kkt.svm_kkt(*common, tol=1e-6, rows=kkt.svm_kkt_rows(
        np.asarray(svm.y, float), C, alpha, f, np.zeros(0), False, False, 1.0, 1e-6))
    assert "support" not in lazy.__dict__            # deferred, verdict already there
    assert lazy.passed == eager.passed and lazy.max_violation == eager.max_violation
    pickled = pickle.loads(pickle.dumps(lazy))
    copied = copy.deepcopy(lazy)
    for report in (lazy, pickled, copied):
        for name in SETS:
            np.testing.assert_array_equal(getattr(report, name), getattr(eager, name))
    fresh = kkt.svm_kkt(*common, tol=1e-6)               # the summary reads the sets
    assert fresh.summary() == eager.summary()
    with pytest.raises(AttributeError):
        lazy.no_such_field


def test_perturbed_answer_still_fails_with_lazy_sets(monkeypatch):
    svm, sol, alpha, f = _args(0.0)
    monkeypatch.setattr(kkt, "compiled_ready", lambda: False)
    good = kkt.kkt_report(svm, sol, tol=1e-6)
    assert good.passed and "support" not in good.__dict__
    bad_sol = copy.copy(sol)
    bad_sol.alpha = sol.alpha * 1.01
    bad_sol.dual_coef = svm.y * bad_sol.alpha
    assert not kkt.kkt_report(svm, bad_sol, tol=1e-6).passed
