"""Small QPs start in the numpy loop while the compiled SMO loop is not loaded
(certified_smo.SMALL_N):
same answer, a hand-over to the compiled loop past SMALL_BUDGET iterations, and the
rent-or-buy switch once the numpy loops have cost what loading costs."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from convexlearn.gram import Gram
from convexlearn.kernels import make_kernel
from convexlearn.solvers.kernel_svm import certified_smo as cs, smo
from convexlearn.solvers.kernel_svm.qp import DualQP

ROOT = Path(__file__).resolve().parents[3]


def _c_svc_qp(n=120, C=1.0, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, 4))
    y = np.where(X[:, 0] + 0.7 * rng.normal(size=n) > 0, 1.0, -1.0)
    kernel = make_kernel("rbf", X, gamma=0.3)
    return DualQP.on_samples(Gram(kernel, X), y, -np.ones(n), C, ((y, 0.0),),
                             name="C-SVC dual")


def _small_first(qp, tol):
    return cs.smo_small_first(qp, tol=tol, max_iter=None, alpha0=None, cache_size=200.0,
                              shrinking=True)


@pytest.fixture
def not_loaded(monkeypatch):
    monkeypatch.setattr(cs, "compiled_loop_loaded", lambda intercept=True: False)
    monkeypatch.setattr(cs, "_numpy_loop_cpu", [0.0])


def test_a_small_qp_runs_the_numpy_loop_first_with_the_same_answer(not_loaded):
    qp = _c_svc_qp()
    first, _, loop = _small_first(qp, 1e-8)
    assert loop.startswith("numpy reference") and first.status == "converged"
    assert cs._numpy_loop_cpu[0] > 0
    compiled, _, loop = smo.smo_qp(qp, tol=1e-8)
    assert loop == "compiled (numba)"
    assert first.n_iter == compiled.n_iter
    np.testing.assert_allclose(first.alpha, compiled.alpha, atol=1e-10)


def test_the_numpy_loop_reads_k_formed_once_and_leaves_the_operator_unformed(not_loaded,
                                                                              monkeypatch):
    qp = _c_svc_qp()
    calls = []
    real = qp.gram.block
    monkeypatch.setattr(qp.gram, "block", lambda r, c: calls.append(len(r)) or real(r, c))
    monkeypatch.setattr(qp.gram, "columns", lambda *a: pytest.fail("columns one by one"))
    res, stats, loop = _small_first(qp, 1e-8)
    assert loop.startswith("numpy reference") and calls == [qp.n]
    assert qp.gram.from_samples and not qp.gram.formed
    compiled, _, _ = smo.smo_qp(qp, tol=1e-8)
    assert res.n_iter == compiled.n_iter


def test_past_its_budget_the_compiled_loop_takes_over(not_loaded, monkeypatch):
    monkeypatch.setattr(cs, "SMALL_BUDGET", 5)
    qp = _c_svc_qp()
    res, _, loop = _small_first(qp, 1e-8)
    ref, _, _ = smo.smo_qp(qp, tol=1e-8)
    assert loop == "compiled (numba)" and res.status == "converged" and res.n_iter > 5
    # the same optimum (the dual objective is strictly convex in f on these data)
    np.testing.assert_allclose(res.alpha, ref.alpha, atol=1e-6)


def test_rent_or_buy_loads_the_compiled_loop_once_the_numpy_loops_cost_as_much(not_loaded):
    cs._numpy_loop_cpu[0] = cs.LOAD_CPU_SECONDS
    _, _, loop = _small_first(_c_svc_qp(), 1e-6)
    assert loop == "compiled (numba)"


def test_large_qps_and_other_callers_use_the_compiled_loop(not_loaded):
    assert _small_first(_c_svc_qp(n=cs.SMALL_N + 1), 1e-3)[2] == "compiled (numba)"
    assert smo.smo_qp(_c_svc_qp())[2] == "compiled (numba)"


def test_a_fresh_process_certifies_a_small_svm_without_loading_the_compiled_loop():
    code = """
import numpy as np, sys
import convexlearn as cl
from convexlearn.solvers.kernel_svm import certified_smo as cs, smo
rng = np.random.default_rng(0)
X = rng.normal(size=(100, 5))
y = np.where(X[:, 0] + 0.5 * rng.normal(size=100) > 0, 1, -1)
sol = cl.SVM(X, y, C=1.0, kernel="rbf").solve()
assert sol.status == "optimal" and sol.provenance["route"] == "exact-smo", sol.status
assert not cs.compiled_loop_loaded()
X = rng.normal(size=(1000, 5))
y = np.where(X[:, 0] + 0.5 * rng.normal(size=1000) > 0, 1, -1)
assert cl.SVM(X, y, C=1.0, kernel="rbf").solve().status == "optimal"
assert cs.compiled_loop_loaded() and True in cs._loaded      # remembered once found
assert cs.compiled_loop_loaded()
print("ok")
"""
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         cwd=ROOT, check=True)
    assert out.stdout.strip() == "ok"
