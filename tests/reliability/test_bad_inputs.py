"""Bad API inputs, table-driven: each must raise its error TYPE (a ConvexLearnError
subclass, never a TypeError/AttributeError from deep inside, never silent acceptance) with
a message naming the culprit (the parameter, the data name).

Found by this table before the fixes (each row failed): seed="abc"/1.5/-1 (TypeError,
ValueError), coef0="a" (ValueError), solver=123 (AttributeError), smo callback=5
(TypeError), erm tol=0/-1 and cert_tol<0 (accepted), svm.kkt and cl.compare of another
problem's solution (accepted / ValueError from numpy), ERMRegressor(loss="logistic") (a
bare ValueError), kernel parameters of the linear kernel (accepted unchecked).
"""

import math

import numpy as np
import pytest

import convexlearn as cl
from convexlearn.errors import DataError, ParameterError
from convexlearn.kernels import make_kernel

rng = np.random.default_rng(0)
X = rng.normal(size=(20, 2))
y = np.where(X[:, 0] + 0.5 * rng.normal(size=20) > 0, 1, -1)
X_other = rng.normal(size=(20, 2))
y_other = np.where(X_other[:, 0] > 0, 1, -1)
Xr = rng.normal(size=(20, 2))
yr = Xr @ np.array([1.0, -2.0]) + 0.1 * rng.normal(size=20)

_cache = {}


def svm():
    return cl.SVM(X, y)


def erm():
    return cl.ERM(X, y, loss="logistic", penalty="l2", lam=0.1)


def exact_solution():
    if "svm" not in _cache:
        _cache["svm"] = svm().solve()
        _cache["other"] = cl.SVM(X_other, y_other).solve()
        _cache["svm_C2"] = cl.SVM(X, y, C=2.0).solve()
        _cache["small"] = cl.SVM(X[:10], y[:10]).solve()
        _cache["erm"] = erm().solve("exact")
        _cache["erm_lam"] = cl.ERM(X, y, loss="logistic", penalty="l2", lam=0.2).solve("exact")
    return _cache


CASES = []


def case(name, fn, error, *needles):
    CASES.append(pytest.param(fn, error, needles, id=name))


P, D = ParameterError, DataError
BAD_REALS = {"str": "1", "nan": math.nan, "bool": True, "list": [1.0], "none": None,
             "complex": 1j}

# ---------------------------------------------------------------- SVM constructor
for key, v in {"zero": 0, "neg": -1.0, "-inf": -math.inf, **BAD_REALS}.items():
    if key == "none":
        continue    # C=None is the hard margin
    case(f"svm-C-{key}", lambda v=v: cl.SVM(X, y, C=v), P, "C")
for v in ["rbff", 5, None, "Linear"]:
    case(f"svm-kernel-{v!r}", lambda v=v: cl.SVM(X, y, kernel=v), P, "kernel")
for kernel in ("rbf", "linear"):
    for key, v in {"zero": 0, "neg": -1, "word": "x", "nan": math.nan, "bool": True,
                   "inf": math.inf}.items():
        case(f"svm-{kernel}-gamma-{key}", lambda v=v, k=kernel: cl.SVM(X, y, kernel=k, gamma=v),
             P, "gamma")
for kernel in ("poly", "linear"):
    for key, v in {"zero": 0, "neg": -2, "str": "3", "bool": True, "nan": math.nan}.items():
        case(f"svm-{kernel}-degree-{key}", lambda v=v, k=kernel: cl.SVM(X, y, kernel=k, degree=v),
             P, "degree")
case("svm-poly-degree-2.5", lambda: cl.SVM(X, y, kernel="poly", degree=2.5), P, "degree")
for kernel in ("poly", "sigmoid", "linear"):
    for key, v in {"str": "a", "nan": math.nan, "inf": math.inf, "none": None,
                   "bool": False}.items():
        case(f"svm-{kernel}-coef0-{key}", lambda v=v, k=kernel: cl.SVM(X, y, kernel=k, coef0=v),
             P, "coef0")
for key, v in {"yes": "yes", "int": 1, "none": None, "float": 0.0}.items():
    case(f"svm-intercept-{key}", lambda v=v: cl.SVM(X, y, intercept=v), P, "intercept")
    case(f"svm-repair_psd-{key}", lambda v=v: cl.SVM(X, y, repair_psd=v), P, "repair_psd")
for key, v in {"neg": -1.0, "str": "x", "nan": math.nan}.items():
    case(f"svm-psd_tol-{key}", lambda v=v: cl.SVM(X, y, psd_tol=v), P, "psd_tol")
for key, v in {"negative": -np.ones(20), "short": np.ones(5), "strings": ["a"] * 20,
               "zeros": np.zeros(20), "nan": np.r_[np.nan, np.ones(19)]}.items():
    case(f"svm-sample_weight-{key}", lambda v=v: cl.SVM(X, y, sample_weight=v), D,
         "sample_weight")
case("svm-sample_weight-hard-margin", lambda: cl.SVM(X, y, C=None, sample_weight=np.ones(20)),
     P, "sample_weight")

# ---------------------------------------------------------------- data (every problem)
BAD_X = {"nan": np.r_[[[np.nan, 0]], X[1:]], "inf": np.r_[[[np.inf, 0]], X[1:]],
         "1d": X[:, 0], "empty": np.zeros((0, 2)), "strings": np.array([["a", "b"]] * 20),
         "complex": X + 1j, "3d": X[:, :, None]}
BAD_Y = {"one-class": np.ones(20), "three": np.arange(20) % 3, "short": y[:5],
         "nan": np.r_[np.nan, y[1:]].astype(float), "continuous": rng.normal(size=20)}
for key, v in BAD_X.items():
    case(f"svm-X-{key}", lambda v=v: cl.SVM(v, y), D, "X")
    case(f"erm-X-{key}", lambda v=v: cl.ERM(v, y, loss="logistic"), D, "X")
    case(f"halfspace-X-{key}", lambda v=v: cl.Halfspace(v, y), D, "X")
for key, v in BAD_Y.items():
    needle = "samples" if key == "short" else "y"
    case(f"svm-y-{key}", lambda v=v: cl.SVM(X, v), D, needle)
    case(f"halfspace-y-{key}", lambda v=v: cl.Halfspace(X, v), D, needle)
case("erm-regression-y-strings", lambda: cl.ERM(X, np.array(["a"] * 20), loss="squared"), D, "y")

# ---------------------------------------------------------------- SVM.solve
for v in ["foo", 5, None, "EXACT"]:
    case(f"svm-solve-method-{v!r}", lambda v=v: svm().solve(v), P, "method")
for method in ("exact", "smo", "dcd", "pegasos", "subgradient"):
    for key, v in {"zero": 0, "neg": -1, "str": "x", "nan": math.nan, "inf": math.inf,
                   "bool": True}.items():
        case(f"svm-{method}-tol-{key}", lambda v=v, m=method: svm().solve(m, tol=v), P, "tol")
for key, v in {"zero": 0.0, "neg": -1e-6, "str": "x"}.items():
    case(f"svm-cert_tol-{key}", lambda v=v: svm().solve(cert_tol=v), P, "cert_tol")
for key, v in {"yes": "yes", "int": 1, "none": None}.items():
    case(f"svm-polish-{key}", lambda v=v: svm().solve(polish=v), P, "polish")
for key, v in {"int": 123, "list": ["CLARABEL"], "bool": True}.items():
    case(f"svm-solver-{key}", lambda v=v: svm().solve(solver=v), P, "solver")
for method in ("pegasos", "dcd"):
    for key, v in {"str": "abc", "float": 1.5, "neg": -1, "bool": True, "list": [1]}.items():
        case(f"svm-{method}-seed-{key}", lambda v=v, m=method: svm().solve(m, seed=v), P, "seed")
for method in ("smo", "dcd", "pegasos", "subgradient"):
    for key, v in {"zero": 0, "neg": -5, "float": 2.5, "str": "10", "bool": True}.items():
        case(f"svm-{method}-max_iter-{key}", lambda v=v, m=method: svm().solve(m, max_iter=v),
             P, "max_iter")
    for key, v in {"int": 5, "str": "print"}.items():
        case(f"svm-{method}-callback-{key}", lambda v=v, m=method: svm().solve(m, callback=v),
             P, "callback")
    case(f"svm-{method}-unknown-option", lambda m=method: svm().solve(m, foo=1), P, "foo")
for method in ("smo", "dcd"):
    for key, v in {"zero": 0, "neg": -1, "str": "x"}.items():
        case(f"svm-{method}-gap_tol-{key}", lambda v=v, m=method: svm().solve(m, gap_tol=v),
             P, "gap_tol")
    case(f"svm-{method}-shrinking-yes", lambda m=method: svm().solve(m, shrinking="yes"),
         P, "shrinking")
case("svm-smo-loss-squared", lambda: svm().solve("smo", loss="squared_hinge"),
     cl.NotApplicableError if hasattr(cl, "NotApplicableError") else Exception, "loss")

# ---------------------------------------------------------------- SVM.kkt and compare
case("svm-kkt-other-problem", lambda: svm().kkt(exact_solution()["other"]), P, "another problem")
case("svm-kkt-other-C", lambda: svm().kkt(exact_solution()["svm_C2"]), P, "another problem")
case("svm-kkt-other-size", lambda: svm().kkt(exact_solution()["small"]), P, "another problem")
case("svm-kkt-not-a-solution", lambda: svm().kkt({"w": [1, 2]}), P, "Solution")
for key, v in {"zero": 0, "neg": -1, "str": "x"}.items():
    case(f"svm-kkt-tol-{key}", lambda v=v: svm().kkt(exact_solution()["svm"], tol=v), P, "tol")
case("compare-different-data", lambda: cl.compare(exact_solution()["svm"],
                                                  exact_solution()["other"]), P, "another problem")
case("compare-different-C", lambda: cl.compare(exact_solution()["svm"],
                                               exact_solution()["svm_C2"]), P, "another problem")
case("compare-different-lam", lambda: cl.compare(exact_solution()["erm"],
                                                 exact_solution()["erm_lam"]), P, "another problem")
case("compare-svm-vs-erm", lambda: cl.compare(exact_solution()["svm"], exact_solution()["erm"]),
     P, "another problem")
case("compare-wrong-problem", lambda: cl.compare(exact_solution()["other"],
                                                 exact_solution()["other"], svm()),
     P, "another problem")
case("compare-not-a-solution", lambda: cl.compare("ref", exact_solution()["svm"]), P, "Solution")

# ---------------------------------------------------------------- ERM
for v in ["foo", 3, None]:
    case(f"erm-loss-{v!r}", lambda v=v: cl.ERM(X, y, loss=v), P, "loss")
    case(f"erm-penalty-{v!r}", lambda v=v: cl.ERM(X, y, loss="logistic", penalty=v), P,
         "penalty")
for key, v in {"neg": -1, "str": "x", "nan": math.nan, "bool": True, "inf": math.inf}.items():
    case(f"erm-lam-{key}", lambda v=v: cl.ERM(X, y, loss="logistic", lam=v), P, "lam")
case("erm-intercept-no", lambda: cl.ERM(X, y, loss="logistic", intercept="no"), P, "intercept")
for key, v in {"half": 0.5, "str": "x", "nan": math.nan}.items():
    case(f"erm-lp-p-{key}", lambda v=v: cl.ERM(X, y, loss="logistic", penalty="lp", p=v), P, "p")
for key, v in {"two": 2.0, "neg": -0.1, "str": "x"}.items():
    case(f"erm-l1_ratio-{key}", lambda v=v: cl.ERM(X, y, loss="logistic", penalty="elastic_net",
                                                   l1_ratio=v), P, "l1_ratio")
for v in ["foo", 1, None]:
    case(f"erm-solve-method-{v!r}", lambda v=v: erm().solve(v), P, "method")
for method in ("gd", "newton", "exact"):
    for key, v in {"zero": 0, "neg": -1, "str": "x", "nan": math.nan}.items():
        case(f"erm-{method}-tol-{key}", lambda v=v, m=method: erm().solve(m, tol=v), P, "tol")
for key, v in {"zero": 0, "neg": -1, "nan": math.nan}.items():
    case(f"erm-cert_tol-{key}", lambda v=v: erm().solve("gd", cert_tol=v), P, "cert_tol")
case("erm-certify-yes", lambda: erm().solve("gd", certify="yes"), P, "certify")
case("erm-solver-int", lambda: erm().solve(solver=123), P, "solver")
for key, v in {"zero": 0, "float": 1.5}.items():
    case(f"erm-gd-max_iter-{key}", lambda v=v: erm().solve("gd", max_iter=v), P, "max_iter")
case("erm-gd-callback-int", lambda: erm().solve("gd", callback=5), P, "callback")
case("erm-newton-hinge", lambda: cl.ERM(X, y, loss="hinge", penalty="l2", lam=0.1).solve("newton"),
     cl.NotApplicableError, "newton")

# ---------------------------------------------------------------- Halfspace
for key, v in {"no": "no", "int": 1, "none": None}.items():
    case(f"halfspace-intercept-{key}", lambda v=v: cl.Halfspace(X, y, intercept=v), P,
         "intercept")
    case(f"halfspace-check-margin-{key}", lambda v=v: cl.Halfspace(X, y).check(margin=v), P,
         "margin")
    case(f"halfspace-check-slack-{key}", lambda v=v: cl.Halfspace(X, y).check(slack=v), P,
         "slack")
for key, v in {"neg": -1, "zero": 0, "str": "x"}.items():
    case(f"halfspace-check-cert_tol-{key}", lambda v=v: cl.Halfspace(X, y).check(cert_tol=v), P,
         "cert_tol")
case("halfspace-check-exact-maybe", lambda: cl.Halfspace(X, y).check(exact="maybe"), P, "exact")
case("halfspace-check-exact-int", lambda: cl.Halfspace(X, y).check(exact=2), P, "exact")
case("halfspace-check-solver-int", lambda: cl.Halfspace(X, y).check(solver=123), P, "solver")
case("shatters-homogeneous-no", lambda: cl.shatters(X[:3], homogeneous="no"), P, "homogeneous")
case("perceptron-seed-str", lambda: cl.perceptron(X, y, seed="a"), P, "seed")
case("perceptron-callback-int", lambda: cl.perceptron(X, y, callback=3), P, "callback")
case("erm-warm_start-str", lambda: erm().solve("gd", warm_start="x"), P, "warm_start")
case("svm-smo-warm_start-str", lambda: svm().solve("smo", warm_start="x"), P, "warm_start")
case("erm-optimality-tol", lambda: erm().optimality(exact_solution()["erm"], tol=-1), P, "tol")
case("erm-optimality-not-a-solution", lambda: erm().optimality("x"), P, "Solution")
case("erm-optimality-other-size", lambda: cl.ERM(X[:, :1], y, loss="logistic", lam=0.1)
     .optimality(exact_solution()["erm"]), P, "features")
case("halfspace-backend", lambda: cl.Halfspace(X, y).check(backend="gurobi"), P, "backend")
case("halfspace-problem-which", lambda: cl.Halfspace(X, y).problem("foo"), P, "which")

# ---------------------------------------------------------------- kernels
for v in ["foo", 1.0]:
    case(f"make_kernel-{v!r}", lambda v=v: make_kernel(v, X), P, "kernel")
case("make_kernel-gamma-word", lambda: make_kernel("rbf", X, gamma="big"), P, "gamma")
case("precomputed-not-square", lambda: cl.SVM(np.ones((20, 3)), y, kernel="precomputed"), D,
     "kernel")


# ---------------------------------------------------------------- estimators
def _estimators():
    from convexlearn import estimators as est
    return est


for key, v in {"neg": -1.0, "str": "x"}.items():
    case(f"LinearSVMClassifier-C-{key}",
         lambda v=v: _estimators().LinearSVMClassifier(C=v).fit(X, y), P, "C")
    case(f"KernelSVMClassifier-C-{key}",
         lambda v=v: _estimators().KernelSVMClassifier(C=v).fit(X, y), P, "C")
case("KernelSVMClassifier-coef0", lambda: _estimators().KernelSVMClassifier(kernel="poly",
                                                                         coef0="a").fit(X, y),
     P, "coef0")
case("KernelSVMClassifier-method", lambda: _estimators().KernelSVMClassifier(method="x").fit(X, y),
     P, "method")
case("LinearSVMClassifier-max_iter", lambda: _estimators().LinearSVMClassifier(
    method="dcd", max_iter=0).fit(X, y), P, "max_iter")
case("LinearSVMClassifier-tol", lambda: _estimators().LinearSVMClassifier(tol=-1).fit(X, y),
     P, "tol")
case("ERMRegressor-logistic", lambda: _estimators().ERMRegressor(loss="logistic").fit(Xr, yr),
     P, "loss")
case("ERMClassifier-squared", lambda: _estimators().ERMClassifier(loss="squared").fit(X, y),
     P, "loss")
case("ERMClassifier-lam", lambda: _estimators().ERMClassifier(lam=-1).fit(X, y), P, "lam")
case("ERMRegressor-tol", lambda: _estimators().ERMRegressor(tol=0).fit(Xr, yr), P, "tol")
case("ERMRegressor-max_iter", lambda: _estimators().ERMRegressor(method="gd",
                                                                 max_iter=-3).fit(Xr, yr),
     P, "max_iter")


def test_table_is_large():
    assert len(CASES) >= 150, len(CASES)


@pytest.mark.parametrize("fn, error, needles", CASES)
def test_bad_input_is_refused(fn, error, needles):
    with pytest.raises(error) as info:
        fn()
    assert isinstance(info.value, cl.ConvexLearnError), type(info.value)
    message = str(info.value)
    for needle in needles:
        assert needle in message, message
