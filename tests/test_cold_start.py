"""Cold start: ``import convexlearn`` and the fast routes load only what they need.

cvxpy (0.4-0.8 s to import) is for the formulations and the fallbacks: the package imports
it inside the functions that build a cvxpy problem. matplotlib, dask and scikit-learn are
optional extras, imported by the modules that use them (plot, distributed, estimators).
Each check runs in a fresh interpreter (this process has imported everything already).
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

ROOT = Path(__file__).resolve().parents[1]
HEAVY = ("cvxpy", "matplotlib", "dask", "sklearn")


def _loaded_after(code: str) -> list[str]:
    """The HEAVY top-level packages in sys.modules after running ``code`` in a fresh
    interpreter."""
    probe = (f"{code}\nimport json, sys\n"
             f"print(json.dumps(sorted({{m.split('.')[0] for m in sys.modules}} & "
             f"set({list(HEAVY)!r}))))")
    out = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True,
                         check=True, cwd=ROOT)
    return json.loads(out.stdout.strip().splitlines()[-1])


def test_import_loads_no_heavy_optional_module():
    assert _loaded_after("import convexlearn") == []


def test_the_probe_sees_a_heavy_module():
    # guards the guard: a probe that never saw a module would pass the test above
    assert _loaded_after("import convexlearn, cvxpy") == ["cvxpy"]


def test_fast_routes_do_not_import_cvxpy():
    code = """
import numpy as np
import convexlearn as cl
rng = np.random.default_rng(0)
X = rng.standard_normal((200, 4))
y = np.where(X[:, 0] + 0.3 * rng.standard_normal(200) > 0, 1, -1)
routes = []
for kernel in ("rbf", "linear"):
    sol = cl.SVM(X, y, C=1.0, kernel=kernel).solve()
    routes.append((sol.status, sol.provenance["route"]))
for loss, penalty, target in (("squared", "l1", X[:, 0]), ("logistic", "l2", y),
                              ("hinge", "l1", y)):
    sol = cl.ERM(X, target, loss=loss, penalty=penalty, lam=0.05).solve()
    routes.append((sol.status, sol.provenance["route"]))
assert all(status == "optimal" for status, _ in routes), routes
assert not any(route.startswith("cvxpy") for _, route in routes), routes
"""
    assert _loaded_after(code) == []


def test_cvxpy_statuses_are_the_strings_the_formulations_map():
    cp = pytest.importorskip("cvxpy")
    from convexlearn.formulations import base
    assert base._WITH_POINT == {cp.OPTIMAL, cp.OPTIMAL_INACCURATE}
    assert base._INFEASIBLE == {cp.INFEASIBLE, cp.INFEASIBLE_INACCURATE}
    assert base._UNBOUNDED == {cp.UNBOUNDED, cp.UNBOUNDED_INACCURATE}


def test_a_loss_expression_is_a_cvxpy_expression():
    cp = pytest.importorskip("cvxpy")
    from convexlearn.losses import make_loss
    f = cp.Variable(3)
    expr = make_loss("hinge").cvxpy(np.array([1.0, -1.0, 1.0]), f)
    assert isinstance(expr, cp.Expression)
    f.value = np.array([2.0, 0.5, 0.0])
    assert np.allclose(expr.value, [0.0, 1.5, 1.0])
