"""Every SVM of the catalogue (problems/*.toml): the fast route of ``solve()`` against the cvxpy
routes, with the certificate recomputed here from the data.

``solve()`` takes the fastest route that certifies (exact-linear, exact-smo, ...); the cvxpy
formulations (exact-dual, exact-primal) are the independent cross-check: the objectives agree to
1e-9 relative, the support sets agree where the multipliers are unique, the duality gap of the
fast answer recomputed on the dense Gram matrix is <= 1e-9 relative (hard margin: every margin
>= 1 and the gap of the maximal margin), and a perturbed answer fails the KKT report.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from helpers import support_is_unique

import convexlearn as cl
from convexlearn.app.catalogue import load_problem

ROOT = Path(__file__).resolve().parents[2]
SVMS = [p for p in sorted((ROOT / "problems").glob("*.toml")) if load_problem(p).kind == "svm"]


def _svm(path):
    p = load_problem(path)
    m = p.model
    params = {k: m[k] for k in ("gamma", "degree", "coef0") if m.get(k) is not None}
    return cl.SVM(p.data.X, p.data.y, C=m["C"], kernel=m["kernel"],
                  intercept=m.get("intercept", True), **params)


def _gap(svm, sol):
    """(P - D) / max(|P|, |D|) from alpha and b alone, on the dense Gram matrix."""
    K = svm.kernel(svm.X)
    beta = svm.y * sol.alpha
    quad = float(beta @ K @ beta)
    margins = svm.y * (K @ beta + sol.b)
    if np.isinf(svm.C):
        # hard margin: P = ||w||^2 / 2 at a feasible point; the smallest margin measures
        # feasibility (1 up to the round-off of evaluating it)
        assert margins.min() >= 1 - 1e-9
        P = 0.5 * quad
    else:
        P = 0.5 * quad + svm.C * np.maximum(0.0, 1.0 - margins).sum()
    D = float(sol.alpha.sum()) - 0.5 * quad
    return abs(P - D) / max(abs(P), abs(D))


def test_the_catalogue_has_linear_kernel_and_hard_margin_svms():
    svms = [_svm(p) for p in SVMS]
    assert len(svms) >= 8
    assert any(not s.kernel.is_linear for s in svms)
    assert any(np.isinf(s.C) for s in svms)


@pytest.mark.parametrize("path", SVMS, ids=[p.stem for p in SVMS])
def test_fast_route_equals_cvxpy_and_certifies(path):
    svm = _svm(path)
    sol = svm.solve()
    route = sol.provenance["route"]
    assert sol.status == "optimal", f"{path.stem}: route {route}: {sol.report}"
    assert _gap(svm, sol) <= 1e-9, f"{path.stem}: route {route}"
    for method in ("exact-dual", "exact-primal"):
        if method == route:
            continue
        ref = _svm(path).solve(method=method)
        rel = (sol.objective - ref.objective) / abs(ref.objective)
        # the certified answer is never worse than cvxpy's beyond round-off, and equal to 1e-9
        assert abs(rel) <= 1e-9, f"{path.stem}: {route} vs {method}: {rel:.2e}"
    ref = _svm(path).solve(method="exact-dual")
    rep, rep_ref = svm.kkt(sol, 1e-6), svm.kkt(ref, 1e-6)
    if support_is_unique(svm, rep_ref):
        np.testing.assert_array_equal(rep.support, rep_ref.support, err_msg=path.stem)
        np.testing.assert_array_equal(rep.bounded, rep_ref.bounded, err_msg=path.stem)


@pytest.mark.parametrize("path", SVMS[:4], ids=[p.stem for p in SVMS[:4]])
def test_a_perturbed_fast_answer_fails(path):
    svm = _svm(path)
    sol = svm.solve()
    bad = cl.Solution(alpha=sol.alpha * (1 + 1e-3), b=sol.b + 1e-3 * (1 + abs(sol.b)),
                      w=None if sol.w is None else sol.w * (1 + 1e-3))
    assert not svm.kkt(bad, 1e-6).passed
