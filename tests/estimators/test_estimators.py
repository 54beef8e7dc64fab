"""convexlearn.estimators: fitted attributes, conventions, errors, pipelines, pickling."""

import pickle
import subprocess
import sys
import textwrap
import warnings

import numpy as np
import pytest

pytest.importorskip("sklearn")

from sklearn.exceptions import ConvergenceWarning  # noqa: E402
from sklearn.metrics.pairwise import (linear_kernel, polynomial_kernel,  # noqa: E402
                                      rbf_kernel)
from sklearn.model_selection import GridSearchCV  # noqa: E402
from sklearn.pipeline import make_pipeline  # noqa: E402
from sklearn.preprocessing import StandardScaler  # noqa: E402

from convexlearn import DataError, InfeasibleError, ParameterError  # noqa: E402
from convexlearn.estimators import (ERMClassifier, ERMRegressor,  # noqa: E402
                                    HalfspaceClassifier, KernelSVMClassifier,
                                    LinearSVMClassifier, NotSeparableError,
                                    PerceptronClassifier, expected_failed_checks)
from helpers import _load, binary_dataset  # noqa: E402


def _run(code: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-c", textwrap.dedent(code)], capture_output=True,
                          text=True, timeout=120)


# ------------------------------------------------------------------ optional dependency
def test_core_never_imports_sklearn():
    out = _run("""
        import importlib, pathlib, sys
        import convexlearn
        root = pathlib.Path(convexlearn.__file__).parent
        for path in sorted(root.rglob("*.py")):
            parts = path.relative_to(root.parent).with_suffix("").parts
            if "estimators" in parts or parts[-1] == "__main__":
                continue
            importlib.import_module(".".join(parts[:-1] if parts[-1] == "__init__" else parts))
        print("sklearn" in sys.modules)
    """)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "False"


def test_estimators_without_sklearn_say_what_to_install():
    out = _run("""
        import sys
        sys.modules["sklearn"] = None          # as if scikit-learn were not installed
        import convexlearn                      # the core works without it
        try:
            import convexlearn.estimators
        except ImportError as exc:
            print(exc)
    """)
    assert out.returncode == 0, out.stderr
    assert "pip install convexlearn[sklearn]" in out.stdout


# ----------------------------------------------------------- decision function rebuilt
def _sklearn_gram(est, A, B):
    k = est._kernel
    if k.name == "rbf":
        return rbf_kernel(A, B, gamma=k.gamma)
    if k.name == "poly":
        return polynomial_kernel(A, B, degree=k.degree, gamma=k.gamma, coef0=k.coef0)
    return linear_kernel(A, B)


@pytest.mark.parametrize("kernel", ["rbf", "poly", "linear"])
@pytest.mark.parametrize("name, classes", [("breast_cancer", (0, 1)), ("iris", (0, 1, 2))])
def test_decision_rebuilt_from_dual_coef(kernel, name, classes):
    X, y = binary_dataset(name, classes)
    # (one-vs-rest: the decision is then the problems' f_k themselves)
    est = KernelSVMClassifier(C=1.0, kernel=kernel, degree=2, coef0=1.0,
                              multiclass="ovr").fit(X, y)
    # scikit-learn's kernels (not ours) on the public attributes only
    rebuilt = _sklearn_gram(est, X, est.support_vectors_) @ est.dual_coef_.T + est.intercept_
    rebuilt = rebuilt.ravel() if len(classes) == 2 else rebuilt
    np.testing.assert_allclose(est.decision_function(X), rebuilt, rtol=1e-10, atol=1e-10)
    np.testing.assert_array_equal(est.support_vectors_, X[est.support_])
    # ... and the full expansion of the core's solution (dropped samples had alpha = 0)
    sols = est.solution_ if isinstance(est.solution_, list) else [est.solution_]
    reports = est.kkt_ if isinstance(est.kkt_, list) else [est.kkt_]
    for k, (sol, rep) in enumerate(zip(sols, reports)):
        assert rep.passed, rep.summary()
        full = _sklearn_gram(est, X, X) @ sol.dual_coef + sol.b
        column = est.decision_function(X) if len(classes) == 2 else est.decision_function(X)[:, k]
        np.testing.assert_allclose(column, full, atol=1e-8)
        # dual_coef_ = y * alpha, +1 for classes_[1] (binary) or for class k (one-vs-rest)
        positive = y == (est.classes_[1] if len(classes) == 2 else est.classes_[k])
        sign = np.where(positive[est.support_], 1.0, -1.0)
        assert np.all(est.dual_coef_[k] * sign >= 0)
        np.testing.assert_allclose(np.abs(est.dual_coef_[k]), rep.alpha[est.support_])


METHODS = ([(KernelSVMClassifier, m) for m in ("exact", "smo", "subgradient")]
           + [(LinearSVMClassifier, m) for m in ("exact", "dcd", "pegasos", "subgradient")])


@pytest.mark.parametrize("cls, method", METHODS, ids=lambda v: getattr(v, "__name__", v))
def test_decision_function_is_the_solutions_for_every_method(cls, method):
    # Converged or not, the estimator predicts with exactly the solution it reports.
    X, y = binary_dataset("iris", (1, 2))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        est = cls(method=method, max_iter=300, random_state=0).fit(X, y)
    sol, signed = est.solution_, np.where(y == est.classes_[1], 1.0, -1.0)
    if cls is LinearSVMClassifier:
        expected = X @ sol.w + sol.b
    else:
        beta = sol.dual_coef if sol.dual_coef is not None else signed * sol.alpha
        expected = _sklearn_gram(est, X, X) @ beta + sol.b
    np.testing.assert_allclose(est.decision_function(X), expected, atol=1e-10)
    assert est.n_iter_[0] >= 1 and est.solution_.method.startswith(method.split("-")[0])


def test_linear_svm_coef_is_dual_expansion():
    X, y = binary_dataset("wine", (0, 1))
    est = LinearSVMClassifier(C=0.5).fit(X, y)
    np.testing.assert_allclose(est.dual_coef_ @ est.support_vectors_, est.coef_, atol=1e-8)
    np.testing.assert_allclose(est.decision_function(X), X @ est.coef_[0] + est.intercept_[0])
    kernel = KernelSVMClassifier(C=0.5, kernel="linear").fit(X, y)
    np.testing.assert_allclose(kernel.coef_, est.coef_, atol=1e-7)
    with pytest.raises(AttributeError, match="linear kernel"):
        KernelSVMClassifier(kernel="rbf").fit(X, y).coef_


def test_precomputed_equals_kernel_and_ignores_constant_shift():
    X, y = binary_dataset("iris", (1, 2))
    est = KernelSVMClassifier(C=2.0, kernel="rbf", gamma=0.3).fit(X, y)
    K = rbf_kernel(X, X, gamma=0.3)
    pre = KernelSVMClassifier(C=2.0, kernel="precomputed").fit(K, y)
    np.testing.assert_allclose(pre.decision_function(K), est.decision_function(X), atol=1e-7)
    # K - c 1 1^T is indefinite but conditionally PSD: with an intercept it is the same SVM
    shifted = KernelSVMClassifier(C=2.0, kernel="precomputed").fit(K - 5.0, y)
    np.testing.assert_allclose(shifted.decision_function(K - 5.0), est.decision_function(X),
                               atol=1e-7)
    with pytest.raises(DataError, match="not positive semidefinite"):
        KernelSVMClassifier(kernel="precomputed", fit_intercept=False).fit(K - 5.0, y)


# -------------------------------------------------------------------- scikit-learn use
def test_pipeline_and_grid_search():
    X, y = _load("wine")
    pipe = make_pipeline(StandardScaler(), KernelSVMClassifier())
    grid = GridSearchCV(pipe, {"kernelsvmclassifier__C": [0.1, 1.0, 10.0]}, cv=3).fit(X, y)
    best_C = grid.best_params_["kernelsvmclassifier__C"]
    refit = make_pipeline(StandardScaler(), KernelSVMClassifier(C=best_C)).fit(X, y)
    np.testing.assert_allclose(grid.decision_function(X), refit.decision_function(X))
    assert grid.best_score_ > 0.9


@pytest.mark.parametrize("est", [KernelSVMClassifier(), LinearSVMClassifier(), ERMClassifier(),
                                 PerceptronClassifier()], ids=lambda e: type(e).__name__)
def test_pickle_round_trip(est):
    X, y = binary_dataset("iris", (0, 1))
    est.fit(X, y)
    again = pickle.loads(pickle.dumps(est))
    np.testing.assert_array_equal(again.decision_function(X), est.decision_function(X))
    assert again.solution_.status == est.solution_.status


# ----------------------------------------------------------------- separators
def test_halfspace_separable_gives_max_margin_hyperplane():
    X, y = binary_dataset("iris", (0, 1))
    est = HalfspaceClassifier().fit(X, y)
    signed = np.where(y == est.classes_[1], 1.0, -1.0)
    assert np.min(signed * est.decision_function(X)) >= 1 - 1e-7
    assert est.separability_.separable and est.separability_.verified
    assert est.margin_[0] == pytest.approx(1 / np.linalg.norm(est.coef_), rel=1e-6)
    lp = HalfspaceClassifier(max_margin=False).fit(X, y)
    assert np.min(signed * lp.decision_function(X)) >= 1 - 1e-7
    assert lp.margin_[0] <= est.margin_[0] * (1 + 1e-6)      # the SVM's margin is maximal


def test_halfspace_not_separable_raises_with_certificate():
    X, y = binary_dataset("iris", (1, 2))
    with pytest.raises(NotSeparableError) as info:
        HalfspaceClassifier().fit(X, y)
    lam, s = info.value.certificate, np.where(y == 2, 1.0, -1.0)
    assert isinstance(info.value, InfeasibleError) and info.value.result.verified
    assert np.all(lam >= 0)
    np.testing.assert_allclose([lam[s > 0].sum(), lam[s < 0].sum()], [1.0, 1.0], atol=1e-9)
    np.testing.assert_allclose(X.T @ (lam * s), 0.0, atol=1e-7)     # the hulls meet


def test_perceptron_separates_or_warns():
    X, y = binary_dataset("iris", (0, 1))
    with warnings.catch_warnings():
        warnings.simplefilter("error", ConvergenceWarning)
        est = PerceptronClassifier().fit(X, y)
    assert est.score(X, y) == 1.0 and est.solution_.status == "optimal"
    X, y = binary_dataset("iris", (1, 2))
    with pytest.warns(ConvergenceWarning, match="not converged"):
        est = PerceptronClassifier(max_iter=5).fit(X, y)
    assert est.n_iter_[0] == 5


# -------------------------------------------------------------------------- errors
def test_bad_parameters_and_data():
    X, y = binary_dataset("iris", (0, 1))
    with pytest.raises(ParameterError, match="method"):
        KernelSVMClassifier(method="newton").fit(X, y)
    with pytest.raises(ParameterError, match="C must be > 0"):
        LinearSVMClassifier(C=-1.0).fit(X, y)
    with pytest.raises(DataError, match="sample_weight must be >= 0"):
        KernelSVMClassifier().fit(X, y, sample_weight=-np.ones(len(y)))
    w = (y == 0).astype(float)
    with pytest.raises(DataError, match="one class only among the samples with sample_weight"):
        KernelSVMClassifier().fit(X, y, sample_weight=w)
    Xn, yn = binary_dataset("iris", (1, 2))
    with pytest.raises(InfeasibleError, match="hard-margin"):
        LinearSVMClassifier(C=None).fit(Xn, yn)


def test_expected_failures_have_reasons():
    for est in [KernelSVMClassifier(), LinearSVMClassifier(), ERMClassifier(),
                PerceptronClassifier()]:
        assert expected_failed_checks(est) == {}
    halfspace = expected_failed_checks(HalfspaceClassifier())
    assert all("not linearly separable" in reason for reason in halfspace.values())
    # (the exact squared + l2 route is Newton: n_iter_ >= 1, the n_iter check passes)
    assert expected_failed_checks(ERMRegressor()) == {}
    assert expected_failed_checks(ERMRegressor(loss="squared", penalty="l1")) == {}


def test_erm_estimators_refuse_a_loss_of_the_other_task():
    # Found in review: ERMClassifier(loss="squared") fitted 0/1 labels as real targets
    # (accuracy 0.58 where squared_classification gets 0.83); ERMRegressor(loss="logistic")
    # fitted a classifier and predicted logits.
    X, y = binary_dataset("wine", (0, 1))
    with pytest.raises(ValueError, match="needs a classification loss.*squared_classification"):
        ERMClassifier(loss="squared").fit(X, y)
    with pytest.raises(ValueError, match="needs a regression loss"):
        ERMRegressor(loss="logistic").fit(X, y.astype(float))
    assert ERMClassifier(loss="squared_classification").fit(X, y).score(X, y) > 0.9
