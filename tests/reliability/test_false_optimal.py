"""No false "optimal": every route, small random problems, an independent certificate.

For each SVM method and each ERM method on a set of small random problems (feature scales
1e-3..1e3, shifted data, C and lambda over four decades), every answer whose status is
"optimal" is re-certified here, from the data, by code that shares nothing with the
package's own checks:

* SVM: P(w, b) = 1/2 ||w||^2 + C sum_i max(0, 1 - m_i) against the dual value of the
  multipliers (the solution's, else the report's), after checking them feasible
  (0 <= alpha <= C, |y^T alpha| small) and w = X^T (y alpha): the relative gap
  (P - D) / max(1, |P|) must be <= the status tolerance (1e-6), and the stationarity
  ||w - X^T(y alpha)|| / (||X|| ||alpha||) too.
* ERM: F(w, b) against F* of a tight cvxpy (Clarabel) reference solved here:
  (F - F*) / max(1, |F*|) <= 1e-6.

The count of false "optimal" answers must be 0 (the count is printed with -s).
"""

import cvxpy as cp
import numpy as np
import pytest

import convexlearn as cl

TOL = 1e-6
SVM_METHODS = ["exact", "exact-primal", "exact-dual", "smo", "dcd", "pegasos", "subgradient"]
ERM_CASES = [("logistic", "l2"), ("squared", "l1"), ("squared", "l2"), ("hinge", "l2"),
             ("logistic", "l1")]
ERM_METHODS = ["exact", "gd", "newton", "prox", "fista", "subgradient", "closed-form"]


def problems(k: int = 3):
    rng = np.random.default_rng(16)
    for i in range(k):
        n, d = int(rng.integers(8, 25)), int(rng.integers(1, 5))
        scale = 10.0 ** rng.uniform(-3, 3, size=d)
        X = (rng.normal(size=(n, d)) + rng.normal(size=d) * 3) * scale
        y = np.where(X[:, 0] / scale[0] + rng.normal(size=n) > np.median(X[:, 0] / scale[0]),
                     1, -1)
        y[:2] = (1, -1)
        yield i, X, y, float(10.0 ** rng.uniform(-2, 2))


def svm_certificate_fails(X, y, C, sol) -> str | None:
    """The independent check of a linear SVM answer; None when it holds."""
    alpha = sol.alpha if sol.alpha is not None else sol.report.alpha
    alpha = np.asarray(alpha, float)
    w, b = np.asarray(sol.w, float), float(sol.b)
    m = y * (X @ w + b)
    P = 0.5 * w @ w + C * np.maximum(0.0, 1.0 - m).sum()
    v = X.T @ (y * alpha)
    D = alpha.sum() - 0.5 * v @ v
    if alpha.min() < -TOL * C or alpha.max() > C * (1 + TOL):
        return f"alpha outside [0, C]: [{alpha.min():.3g}, {alpha.max():.3g}], C={C:g}"
    if abs(y @ alpha) > TOL * max(alpha.sum(), 1e-300):
        return f"|y^T alpha| = {abs(y @ alpha):.3g}"
    gap = (P - D) / max(1.0, abs(P))
    if gap > TOL:
        return f"relative gap {gap:.3g} (P={P:.10g}, D={D:.10g})"
    stat = np.linalg.norm(w - v) / max(np.linalg.norm(X, 2) * np.linalg.norm(alpha), 1e-300)
    if stat > TOL:
        return f"stationarity {stat:.3g}"
    return None


def erm_reference(X, y, loss, penalty, lam):
    n, d = X.shape
    w, b = cp.Variable(d), cp.Variable()
    f = X @ w + b
    losses = {"logistic": cp.sum(cp.logistic(-cp.multiply(y, f))),
              "hinge": cp.sum(cp.pos(1 - cp.multiply(y, f))),
              "squared": cp.sum_squares(y - f)}
    reg = {"l1": cp.norm1(w), "l2": 0.5 * cp.sum_squares(w)}[penalty]
    prob = cp.Problem(cp.Minimize(losses[loss] / n + lam * reg))
    prob.solve(solver="CLARABEL", tol_gap_abs=1e-12, tol_gap_rel=1e-12, tol_feas=1e-12)
    return prob.value


def erm_value(X, y, loss, penalty, lam, sol):
    f = X @ sol.w + sol.b
    m = y * f
    value = {"logistic": np.logaddexp(0, -m), "hinge": np.maximum(0, 1 - m),
             "squared": (y - f) ** 2}[loss].mean()
    reg = {"l1": np.abs(sol.w).sum(), "l2": 0.5 * sol.w @ sol.w}[penalty]
    return value + lam * reg


def test_no_false_optimal_on_any_route(capsys):
    false, optimal, refused = [], 0, []
    for i, X, y, C in problems():
        svm = cl.SVM(X, y, C=C)
        for method in SVM_METHODS:
            try:
                sol = svm.solve(method)
            except (cl.SolverError, cl.NotApplicableError, cl.InfeasibleError) as exc:
                refused.append(f"svm {i} {method}: {type(exc).__name__}")
                continue
            if sol.status == "optimal":
                optimal += 1
                why = svm_certificate_fails(X, y, C, sol)
                if why:
                    false.append(f"svm problem {i} {method}: {why}")
        for loss, penalty in ERM_CASES:
            Xs = X / np.abs(X).max(axis=0)      # ERM's F is not scale-free in X: unit features
            target = y if loss != "squared" else Xs @ np.arange(1, X.shape[1] + 1) + y
            lam = 1.0 / (len(y) * C)
            erm = cl.ERM(Xs, target, loss=loss, penalty=penalty, lam=lam)
            f_star = erm_reference(Xs, target, loss, penalty, lam)
            for method in ERM_METHODS:
                try:
                    sol = erm.solve(method)
                except (cl.SolverError, cl.NotApplicableError, cl.UnboundedError) as exc:
                    # not applicable, or an honest failure: not a false claim
                    refused.append(f"erm {loss}/{penalty} {method}: {type(exc).__name__}")
                    continue
                if sol.status == "optimal":
                    optimal += 1
                    sub = (erm_value(Xs, target, loss, penalty, lam, sol) - f_star) / max(
                        1.0, abs(f_star))
                    if sub > TOL:
                        false.append(f"erm problem {i} {loss}/{penalty} {method}: "
                                     f"(F - F*) / max(1, |F*|) = {sub:.3g}")
    with capsys.disabled():
        print(f"\n[false optimal] {len(false)} false of {optimal} 'optimal' answers "
              f"({len(refused)} refused or not applicable: "
              f"{sorted(set(r.split(': ')[0].split(' ', 2)[-1] for r in refused))})")
    assert optimal > 50
    assert not false, "\n".join(false)


def test_the_independent_check_catches_a_wrong_optimal():
    _, X, y, C = next(problems(1))
    svm = cl.SVM(X, y, C=C)
    sol = svm.solve()
    assert svm_certificate_fails(X, y, C, sol) is None
    sol.w = sol.w * (1 + 1e-4)
    assert svm_certificate_fails(X, y, C, sol) is not None


pytestmark = pytest.mark.slow
