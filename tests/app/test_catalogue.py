"""The problem catalogue: file validation, data loading, and every expectation in
problems/*.toml cross-checked against an outside oracle (scikit-learn, scipy's HiGHS).

The expectations were established with ``convexlearn solve`` (the exact cvxpy solver);
here each one is recomputed by a solver no one here wrote, in our conventions
(docs/conventions.md), so a wrong number in a problem file fails two independent ways:
``convexlearn check`` (test_cli.py) and this file.
"""

from __future__ import annotations

import itertools
from pathlib import Path

import numpy as np
import pytest
from scipy.optimize import linprog

from convexlearn.app.catalogue import ProblemFileError, load_dataset, load_problem, standardize
from convexlearn.app.generators import GENERATORS

ROOT = Path(__file__).resolve().parents[2]
PROBLEMS = sorted((ROOT / "problems").glob("*.toml"))


def write(tmp_path, name, text):
    path = tmp_path / name
    path.write_text(text)
    return path


TINY_CSV = "a,b,label\n0,0,-1\n1,0,-1\n0,3,1\n1,3,1\n"
TINY = """name = "tiny"
[data]
path = "tiny.csv"
label = "label"
[model]
kind = "svm"
C = 1.0
"""


@pytest.fixture
def tiny(tmp_path):
    write(tmp_path, "tiny.csv", TINY_CSV)
    return tmp_path


# ---------------------------------------------------------------------- the catalogue
def test_catalogue_covers_every_formulation():
    problems = [load_problem(p) for p in PROBLEMS]
    assert len(problems) >= 15
    names = [p.name for p in problems]
    assert len(set(names)) == len(names), "problem names must be unique"
    kinds = {p.kind for p in problems}
    assert kinds == {"svm", "erm", "halfspace", "shattering", "svr", "one_class", "nu_svc",
                     "nu_svr", "svm_l2", "crammer_singer"}
    svm = [p for p in problems if p.kind == "svm"]
    assert any(p.model["C"] == np.inf for p in svm), "a hard-margin SVM"
    assert any(p.model["kernel"] != "linear" for p in svm), "a kernel SVM"
    assert {True, False} <= {p.expect.get("separable") for p in svm}
    erm = {(p.model["loss"], p.model["penalty"]) for p in problems if p.kind == "erm"}
    assert {("squared", "l1"), ("squared", "l2"), ("logistic", "l2"),
            ("squared", "none")} <= erm
    for p in problems:
        assert p.expect, f"{p.path.name} states no expectation"
        assert p.description


def test_problem_data_files_are_small():
    for csv in (ROOT / "problems" / "data").glob("*.csv"):
        assert csv.stat().st_size < 100_000, csv


# ------------------------------------------------------------------ outside oracles
def _signed(p):
    y = p.data.y
    classes = sorted(set(y.tolist()), key=lambda c: (isinstance(c, str), c))
    return np.where(y == classes[1], 1.0, -1.0)


def _consistency_lp(X, y, homogeneous=False):
    """scipy HiGHS: is {y_i (<w, x_i> + b) >= 1} feasible? And min sum xi otherwise."""
    n, d = X.shape
    A = -y[:, None] * (X if homogeneous else np.column_stack([X, np.ones(n)]))
    k = A.shape[1]
    feas = linprog(np.zeros(k), A_ub=A, b_ub=-np.ones(n), bounds=[(None, None)] * k,
                   method="highs")
    slack = linprog(np.concatenate([np.zeros(k), np.ones(n)]),
                    A_ub=np.hstack([A, -np.eye(n)]), b_ub=-np.ones(n),
                    bounds=[(None, None)] * k + [(0, None)] * n, method="highs")
    return feas.status == 0, slack.fun


def _close(actual, expected, rtol):
    return abs(actual - expected) <= rtol * max(1.0, abs(expected))


def _hull_distance_2d(A, B):
    """Distance between the convex hulls of two point sets in the plane (scipy's Qhull):
    for disjoint polygons, the minimum over vertex-edge pairs of both polygons."""
    from scipy.spatial import ConvexHull

    def vertices(P):
        return P[ConvexHull(P).vertices]

    def point_segment(p, a, b):
        t = np.clip((p - a) @ (b - a) / ((b - a) @ (b - a)), 0.0, 1.0)
        return np.linalg.norm(p - (a + t * (b - a)))

    VA, VB = vertices(A), vertices(B)
    return min(point_segment(p, Q[i], Q[(i + 1) % len(Q)])
               for P, Q in ((VA, VB), (VB, VA)) for p in P for i in range(len(Q)))


def _oracle_svm(p):
    from sklearn.metrics.pairwise import pairwise_kernels
    from sklearn.svm import SVC
    X, y, m = p.data.X, _signed(p), p.model
    hard = np.isinf(m["C"])
    if hard and X.shape[1] == 2 and m["intercept"]:
        # LIBSVM with a huge C stalls ~3e-5 short of the hard-margin optimum on iris (its
        # float32 kernel cache); geometry is exact: P* = 1/(2 gamma^2), the margin gamma
        # being half the distance between the class hulls.
        dist = _hull_distance_2d(X[y < 0], X[y > 0])
        return {"objective": 2.0 / dist ** 2,
                "separable": _consistency_lp(X, y)[0]}, 1e-9
    C = 1e8 if hard else m["C"]
    svc = SVC(C=C, kernel=m["kernel"], gamma=m["gamma"], degree=m["degree"],
              coef0=m["coef0"], tol=1e-10, max_iter=10_000_000).fit(X, y)
    f = svc.decision_function(X)
    beta = svc.dual_coef_.ravel()
    Ks = pairwise_kernels(svc.support_vectors_, metric=m["kernel"], filter_params=True,
                          gamma=m["gamma"], degree=m["degree"], coef0=m["coef0"])
    w2 = float(beta @ Ks @ beta)
    hinge = np.maximum(0.0, 1.0 - y * f)
    objective = 0.5 * w2 + (0.0 if hard else C * hinge.sum())
    alpha = np.abs(beta)
    facts = {"objective": objective, "n_support": int(svc.support_.size),
             "n_bounded": 0 if hard else int(np.sum(alpha >= C * (1 - 1e-8))),
             "training_errors": int(np.sum(np.where(f >= 0, 1.0, -1.0) != y))}
    facts["n_free"] = facts["n_support"] - facts["n_bounded"]
    if p.expect.get("separable") is not None:
        facts["separable"] = _consistency_lp(X, y, not m["intercept"])[0]
    return facts, 1e-5


def _oracle_robust(p):
    """Quantile + l1: scikit-learn's QuantileRegressor (alpha = lam, the same F);
    epsilon-insensitive + l1: its primal LP written here for scipy's linprog (HiGHS)."""
    from scipy.optimize import linprog
    from sklearn.linear_model import QuantileRegressor
    X, y, m = p.data.X, p.data.y, p.model
    n, d = X.shape
    lam = m["lam"]
    assert m["penalty"] == "l1" and m["intercept"]
    if m["loss"] == "quantile":
        est = QuantileRegressor(quantile=m["quantile"], alpha=lam, solver="highs").fit(X, y)
        w, b = est.coef_, float(est.intercept_)
        r = y - X @ w - b
        tau = m["quantile"]
        obj = float(np.mean(np.maximum(tau * r, (tau - 1) * r)) + lam * np.abs(w).sum())
    else:
        # min (1/n) sum (s+ + s-) + lam sum (u + v)  s.t.  -eps - s- <= y - X(u - v) - b
        # <= eps + s+, with s+-, u, v >= 0 and b free
        eps = m["epsilon"]
        cost = np.concatenate([np.full(2 * d, lam), [0.0], np.full(2 * n, 1.0 / n)])
        I = np.eye(n)
        A = np.block([[-X, X, -np.ones((n, 1)), -I, np.zeros((n, n))],
                      [X, -X, np.ones((n, 1)), np.zeros((n, n)), -I]])
        rhs = np.concatenate([eps - y, eps + y])
        bounds = [(0, None)] * (2 * d) + [(None, None)] + [(0, None)] * (2 * n)
        res = linprog(cost, A_ub=A, b_ub=rhs, bounds=bounds, method="highs")
        assert res.status == 0
        w, b = res.x[:d] - res.x[d:2 * d], float(res.x[2 * d])
        r = y - X @ w - b
        obj = float(np.mean(np.maximum(np.abs(r) - eps, 0.0)) + lam * np.abs(w).sum())
    facts = {"objective": obj,
             "nonzeros": int(np.sum(np.abs(w) > 1e-6 * max(1.0, np.abs(w).max())))}
    return facts, 1e-7


def _oracle_erm(p):
    from sklearn.linear_model import Lasso, LinearRegression, LogisticRegression, Ridge
    X, m, n = p.data.X, p.model, p.data.X.shape[0]
    lam, icpt = m["lam"], m["intercept"]
    if m["loss"] in ("quantile", "epsilon_insensitive"):
        return _oracle_robust(p)
    if m["loss"] == "squared":
        y = p.data.y
        est = {"l1": lambda: Lasso(alpha=lam / 2, fit_intercept=icpt, tol=1e-14,
                                   max_iter=1_000_000),
               "l2": lambda: Ridge(alpha=n * lam / 2, fit_intercept=icpt, tol=1e-14),
               "none": lambda: LinearRegression(fit_intercept=icpt)}[m["penalty"]]().fit(X, y)
        w, b = est.coef_.ravel(), float(np.ravel(est.intercept_)[0]) if icpt else 0.0
        reg = {"l1": lam * np.abs(w).sum(), "l2": lam / 2 * w @ w, "none": 0.0}[m["penalty"]]
        facts = {"objective": float(np.mean((y - X @ w - b) ** 2) + reg)}
    else:
        assert (m["loss"], m["penalty"]) == ("logistic", "l2")
        y = _signed(p)
        est = LogisticRegression(C=1.0 / (n * lam), fit_intercept=icpt, tol=1e-12,
                                 max_iter=100_000).fit(X, y)
        w, b = est.coef_.ravel(), float(est.intercept_[0]) if icpt else 0.0
        f = X @ w + b
        facts = {"objective": float(np.mean(np.logaddexp(0.0, -y * f)) + lam / 2 * w @ w),
                 "training_errors": int(np.sum(np.where(f >= 0, 1.0, -1.0) != y))}
    facts["nonzeros"] = int(np.sum(np.abs(w) > 1e-6 * max(1.0, np.abs(w).max())))
    return facts, 1e-7


def _oracle_halfspace(p):
    separable, slack = _consistency_lp(p.data.X, _signed(p), not p.model["intercept"])
    return {"separable": separable, "min_total_slack": 0.0 if separable else slack}, 1e-7


def _oracle_shattering(p):
    P, hom = p.data.X, not p.model["intercept"]
    realizable = [_consistency_lp(P, np.array(lab, float), hom)[0]
                  for lab in itertools.product([-1, 1], repeat=P.shape[0])]
    return {"shattered": all(realizable)}, 0.0


# LIBSVM caches the kernel matrix Q in single precision (Qfloat = float). On the raw
# breast-cancer features (mean_area ~ 1e3, so K_ij ~ 1e6) that perturbs the problem itself:
# LIBSVM converges to P = 1.3288703 for any tol <= 1e-6, while the exact optimum is
# 1.3288537 (KKT residuals 2e-10). Solving our exact dual on the float32-rounded Gram matrix
# reproduces LIBSVM's value (1.3288682), which locates the 1.2e-5 difference in the
# oracle's arithmetic, not in the expectation. Everything else is checked at full rtol.
ORACLE_RTOL = {"breast_cancer_raw": 2e-5}

def _oracle_qp_family(p):
    """scikit-learn's SVR / OneClassSVM at tol=1e-12; the objective recomputed from its
    expansion in LIBSVM's scaling (docs/conventions.md): SVR 1/2 beta^T K beta + C sum
    max(0, |y - f| - eps); one-class 1/2 a^T K a - nu n rho + sum max(0, rho - g)."""
    from sklearn.metrics.pairwise import rbf_kernel
    from sklearn.svm import SVR, OneClassSVM
    m, X = p.model, p.data.X
    assert m["kernel"] == "rbf"
    K = rbf_kernel(X, gamma=m["gamma"])
    if p.kind == "svr":
        est = SVR(C=m["C"], epsilon=m["epsilon"], gamma=m["gamma"], tol=1e-12).fit(X, p.data.y)
    else:
        est = OneClassSVM(nu=m["nu"], gamma=m["gamma"], tol=1e-12).fit(X)
    beta = np.zeros(X.shape[0])
    beta[est.support_] = est.dual_coef_[0]
    g, b = K @ beta, float(est.intercept_[0])
    if p.kind == "svr":
        objective = 0.5 * beta @ g + m["C"] * np.sum(np.maximum(0, np.abs(p.data.y - g - b)
                                                                   - m["epsilon"]))
        bound = m["C"]
    else:
        objective = 0.5 * beta @ g + b * m["nu"] * X.shape[0] + np.sum(np.maximum(0, -b - g))
        bound = 1.0
    # (LIBSVM's float32 kernel cache: a coefficient within 1e-6 of the bound is at it)
    n_bounded = int(np.sum(np.abs(np.abs(beta) - bound) <= 1e-6 * bound))
    return {"objective": float(objective), "intercept": b, "n_support": int(beta.size and
            np.count_nonzero(beta)), "n_bounded": n_bounded,
            "n_free": int(np.count_nonzero(beta)) - n_bounded}, 1e-6


def _kernel_matrix(p):
    from sklearn.metrics.pairwise import pairwise_kernels
    m = p.model
    assert not isinstance(m["gamma"], str), "the oracle takes a numeric gamma"
    return pairwise_kernels(p.data.X, metric=m["kernel"], filter_params=True, gamma=m["gamma"],
                            degree=m["degree"], coef0=m["coef0"])


def _oracle_nu_family(p):
    """scikit-learn's NuSVC / NuSVR at tol=1e-12, in their own scale (docs/conventions.md),
    the objective recomputed from the expansion (beta = dual_coef_, b = intercept_):

    * nu-SVC: NuSVC's answer is the LIBSVM one divided by r, so the primal 1/2 ||w||^2 -
      nu n rho + sum xi along its ray (w, b, rho) = r (K beta, b, 1) is P(r) = r^2 A - r B,
      A = 1/2 beta^T K beta, B = nu n - sum max(0, 1 - y f): r = B / (2 A), P = -B^2 / (4 A);
    * nu-SVR: P(eps) = 1/2 beta^T K beta + C (nu n eps + sum max(0, |y - f| - eps)),
      piecewise linear in eps: its minimum over the breakpoints {0} u {|y_i - f_i|}.

    Bounded: |beta_i| within 1e-6 of the box (1 / r, C): LIBSVM's float32 kernel cache."""
    from sklearn.svm import NuSVC, NuSVR
    m, X, n = p.model, p.data.X, p.data.X.shape[0]
    params = dict(nu=m["nu"], kernel=m["kernel"], gamma=m["gamma"], degree=m["degree"],
                  coef0=m["coef0"], tol=1e-12)
    K = _kernel_matrix(p)
    if p.kind == "nu_svc":
        y = _signed(p)
        est = NuSVC(**params).fit(X, y)
        f = est.decision_function(X)
    else:
        y = p.data.y
        est = NuSVR(C=m["C"], **params).fit(X, y)
        f = est.predict(X)
    beta = np.zeros(n)
    beta[est.support_] = est.dual_coef_[0]
    quad = 0.5 * float(beta @ K @ beta)
    facts = {"intercept": float(est.intercept_[0]), "decision": f,
             "n_support": int(np.count_nonzero(beta))}
    if p.kind == "nu_svc":
        B = m["nu"] * n - float(np.sum(np.maximum(0.0, 1.0 - y * f)))
        r = B / (2.0 * quad)
        facts.update(objective=-B * B / (4.0 * quad), r=r,
                     training_errors=int(np.sum(np.where(f >= 0, 1.0, -1.0) != y)))
        bound = 1.0 / r
    else:
        dev = np.abs(y - f)
        eps = np.r_[0.0, dev]
        values = quad + m["C"] * (m["nu"] * n * eps + np.maximum(0.0, dev[None, :]
                                                                  - eps[:, None]).sum(axis=1))
        facts.update(objective=float(values.min()), epsilon=float(eps[np.argmin(values)]))
        bound = m["C"]
    facts["n_bounded"] = int(np.sum(np.abs(np.abs(beta) - bound) <= 1e-6 * bound))
    facts["n_free"] = facts["n_support"] - facts["n_bounded"]
    return facts, 1e-6


def _oracle_svm_l2(p):
    """scikit-learn's LinearSVC (squared hinge, primal Newton, tol=1e-12): intercept =
    "penalized" is its problem with intercept_scaling = 1 (b a weight of a constant
    feature 1), intercept = false its fit_intercept=False (docs/conventions.md); P = 1/2
    ||w||^2 [+ 1/2 b^2] + C sum max(0, 1 - y f)^2."""
    from sklearn.svm import LinearSVC
    m, X, y = p.model, p.data.X, _signed(p)
    assert m["kernel"] == "linear" and m["intercept"] in ("penalized", False), \
        "LinearSVC's problem: linear kernel, penalized intercept or none"
    penalized = m["intercept"] == "penalized"
    est = LinearSVC(C=m["C"], loss="squared_hinge", dual=False, tol=1e-12,
                    max_iter=1_000_000, fit_intercept=penalized, intercept_scaling=1.0).fit(X, y)
    w, b = est.coef_.ravel(), float(est.intercept_[0]) if penalized else 0.0
    f = X @ w + b
    xi = np.maximum(0.0, 1.0 - y * f)
    return {"objective": float(0.5 * w @ w + 0.5 * b * b + m["C"] * xi @ xi), "intercept": b,
            "n_support": int(np.sum(y * f < 1.0 - 1e-9)), "decision": f,
            "training_errors": int(np.sum(np.where(f >= 0, 1.0, -1.0) != y))}, 1e-6


def _oracle_crammer_singer(p):
    """scikit-learn's LinearSVC(multi_class="crammer_singer", fit_intercept=False,
    tol=1e-12) (LIBLINEAR -s 4); P = 1/2 ||W||^2 + C sum_i max_m (e_im + f_im - f_{i y_i})
    with e_im = 1 - [m = y_i], recomputed from its coef_ (docs/conventions.md)."""
    from sklearn.svm import LinearSVC
    X, y, C = p.data.X, p.data.y, p.model["C"]
    est = LinearSVC(C=C, multi_class="crammer_singer", fit_intercept=False, tol=1e-12,
                    max_iter=1_000_000).fit(X, y)
    W = est.coef_
    F = X @ W.T
    codes = np.searchsorted(est.classes_, y)
    rows = np.arange(X.shape[0])
    E = np.ones_like(F)
    E[rows, codes] = 0.0
    hinge = np.max(E + F - F[rows, codes][:, None], axis=1)
    return {"objective": float(0.5 * np.sum(W * W) + C * hinge.sum()), "decision": F,
            "training_errors": int(np.sum(est.predict(X) != y))}, 1e-6


ORACLES = {"svm": _oracle_svm, "erm": _oracle_erm, "halfspace": _oracle_halfspace,
           "shattering": _oracle_shattering, "svr": _oracle_qp_family,
           "one_class": _oracle_qp_family, "nu_svc": _oracle_nu_family,
           "nu_svr": _oracle_nu_family, "svm_l2": _oracle_svm_l2,
           "crammer_singer": _oracle_crammer_singer}


@pytest.mark.parametrize("path", PROBLEMS, ids=[p.stem for p in PROBLEMS])
def test_expectations_agree_with_outside_oracle(path):
    p = load_problem(path)
    facts, rtol = ORACLES[p.kind](p)
    rtol = ORACLE_RTOL.get(path.stem, rtol)
    checked = 0
    for key, expected in p.expect.items():
        if key not in facts or expected is None:
            continue
        checked += 1
        actual = facts[key]
        if isinstance(expected, float):
            assert _close(actual, expected, max(rtol, p.expect.get(f"{key}_rtol", 0.0))), \
                f"{path.name}: {key} = {expected!r} in the file, oracle says {actual!r}"
        else:
            assert actual == expected, \
                f"{path.name}: {key} = {expected!r} in the file, oracle says {actual!r}"
    assert checked >= 1, f"{path.name}: no expectation the oracle could check"


#: The kinds whose oracle returns scikit-learn's decision values ("decision").
DECISION_KINDS = ("nu_svc", "nu_svr", "svm_l2", "crammer_singer")


@pytest.mark.parametrize("path", [p for p in PROBLEMS if load_problem(p).kind in DECISION_KINDS],
                         ids=lambda p: p.stem)
def test_exact_decision_values_agree_with_scikit_learn(path):
    """The exact reference's decision values (nu-SVC in NuSVC's 1/r scale, nu-SVR's f,
    LinearSVC's f, Crammer-Singer's X W^T of shape (n, K)) equal scikit-learn's to 1e-6
    relative to their largest magnitude."""
    from convexlearn.app.runner import run_problem
    p = load_problem(path)
    result = run_problem(p, methods=["exact"])
    ours = result.model.decision_function(result.solutions["exact"])
    theirs = ORACLES[p.kind](p)[0]["decision"]
    assert ours.shape == theirs.shape
    scale = np.max(np.abs(theirs))
    assert np.max(np.abs(ours - theirs)) <= 1e-6 * scale, \
        f"{path.name}: max |f - f_sklearn| / max |f_sklearn| = " \
        f"{np.max(np.abs(ours - theirs)) / scale:.2e}"


# ---------------------------------------------------------------- file validation
@pytest.mark.parametrize("text, message", [
    ('name = "x"\n[data]\npath = = "a"\n', "line 3, column 8: TOML syntax error"),
    ('name = "x"\n[data\n', "line 2"),
])
def test_toml_syntax_error_names_the_line(tmp_path, text, message):
    with pytest.raises(ProblemFileError, match=message):
        load_problem(write(tmp_path, "p.toml", text))


def test_unknown_key_lists_the_valid_ones(tiny):
    path = write(tiny, "p.toml", TINY.replace("C = 1.0", "C = 1.0\ncost = 2"))
    with pytest.raises(ProblemFileError) as err:
        load_problem(path)
    msg = str(err.value)
    assert "line 8" in msg and "unknown key 'model.cost'" in msg
    for valid in ("C", "kernel", "gamma", "intercept"):
        assert valid in msg


def test_wrong_type_names_key_and_type(tiny):
    path = write(tiny, "p.toml", TINY.replace("C = 1.0", 'C = "one"'))
    with pytest.raises(ProblemFileError, match=r"line 7: key 'model.C' must be a number; "
                                               r"got str 'one'"):
        load_problem(path)


def test_missing_required_and_both_sources(tiny):
    with pytest.raises(ProblemFileError, match="missing required key.*name"):
        load_problem(write(tiny, "p.toml", TINY.replace('name = "tiny"', "")))
    both = TINY + '[data.generator]\nkind = "xor"\n'
    with pytest.raises(ProblemFileError, match="exactly one of 'path'"):
        load_problem(write(tiny, "p.toml", both))


def test_unknown_model_kind_and_generator(tiny):
    with pytest.raises(Exception, match="unknown model kind 'svn'; valid: crammer_singer, "
                                        "erm, halfspace"):
        load_problem(write(tiny, "p.toml", TINY.replace('"svm"', '"svn"')))
    text = 'name = "g"\n[data.generator]\nkind = "spiral"\n[model]\nkind = "svm"\n'
    with pytest.raises(ProblemFileError, match="unknown generator 'spiral'; valid: blobs"):
        load_problem(write(tiny, "p.toml", text))


@pytest.mark.parametrize("csv, message", [
    ("a,b,label\n0,0,-1\n1,x,-1\n0,3,1\n", r"line 3, column 'b': non-numeric value 'x'"),
    ("a,b,label\n0,0,-1\n1,,-1\n0,3,1\n", r"line 3, column 'b': missing value"),
    ("a,b,label\n0,0,-1\n1,0,-1\nnan,3,1\n", r"line 4, column 'a': missing value \('nan'\)"),
    ("a,b,label\n0,0,-1\n1,0\n", r"line 3: 2 cells, but the header has 3 columns"),
    ("a,b,label\n0,0,1\n1,0,1\n", r"has one class only \(1\.0\)"),
    ("a,b,label\n0,0,1\n1,0,2\n2,2,3\n", r"has 3 classes \[1\.0, 2\.0, 3\.0\]; this model is "
                                        r"binary: choose two with 'classes = \[a, b\]'"),
])
def test_bad_csv_cells_name_line_and_column(tmp_path, csv, message):
    write(tmp_path, "tiny.csv", csv)
    with pytest.raises(ProblemFileError, match=message):
        load_problem(write(tmp_path, "p.toml", TINY))


def test_class_selection_and_label_types(tmp_path):
    write(tmp_path, "d.csv", "x,y,kind\n0,1,cat\n1,2,dog\n2,3,eel\n3,5,dog\n")
    data = load_dataset(tmp_path / "d.csv", "kind", classes=["dog", "eel"])
    assert data.y.tolist() == ["dog", "eel", "dog"]
    assert data.X.tolist() == [[1, 2], [2, 3], [3, 5]]
    with pytest.raises(ProblemFileError, match=r"class\(es\) \['cow'\] not found.*'cat', 'dog'"):
        load_dataset(tmp_path / "d.csv", "kind", classes=["dog", "cow"])
    with pytest.raises(ProblemFileError, match="choose two with --classes A B"):
        load_dataset(tmp_path / "d.csv", "kind")
    with pytest.raises(ProblemFileError, match="column 'z' not in d.csv; columns: x, y, kind"):
        load_dataset(tmp_path / "d.csv", "kind", classes=["dog", "eel"], features=["z"])


def test_standardize_and_checksum():
    rng = np.random.default_rng(1)
    X = np.column_stack([rng.normal(5, 3, 50), np.full(50, 2.0)])
    Z = standardize(X)
    np.testing.assert_allclose(Z.mean(axis=0), 0, atol=1e-12)
    np.testing.assert_allclose(Z[:, 0].std(), 1)
    assert np.all(Z[:, 1] == 0), "a constant column is centred, not divided by 0"
    a = load_problem(ROOT / "problems" / "breast_cancer_raw.toml").data
    b = load_problem(ROOT / "problems" / "breast_cancer_standardized.toml").data
    assert a.source_sha256 == b.source_sha256 and a.sha256 != b.sha256
    assert b.transforms == ["standardized (z-score, population std)"]


@pytest.mark.parametrize("kind", sorted(set(GENERATORS) - {"points"}))
def test_generators_are_seeded(kind):
    func, _ = GENERATORS[kind]
    X1, y1 = func(n=20, seed=3)
    X2, y2 = func(n=20, seed=3)
    X3, _ = func(n=20, seed=4)
    np.testing.assert_array_equal(X1, X2)
    np.testing.assert_array_equal(y1, y2)
    assert not np.array_equal(X1, X3)


def test_xor_generator_labels_and_rank_deficient_design():
    X, y = GENERATORS["xor"][0](n=40, seed=0)
    assert np.all(y == np.where(X[:, 0] * X[:, 1] >= 0, 1, -1))
    assert np.sum(y == 1) == np.sum(y == -1) == 20
    X, _ = GENERATORS["rank_deficient"][0](n=30, seed=0, d=6, rank=3)
    assert np.linalg.matrix_rank(X) == 3
