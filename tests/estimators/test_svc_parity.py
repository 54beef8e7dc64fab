"""KernelSVMClassifier's parity with SVC on the points scikit-learn's own SVC tests found
(issue 22): break_ties, shrinking, cache_size, verbose, a read-only coef_, predict_proba after
switching probability on, callable kernels on non-numeric data, gamma="scale" overflow, the
vote of an exact zero, negative sample weights (docs/conventions.md)."""

from __future__ import annotations

import numpy as np
import pytest
from sklearn.base import clone
from sklearn.datasets import load_iris, make_blobs, make_classification
from sklearn.exceptions import NotFittedError
from sklearn.svm import SVC

from convexlearn.errors import DataError, ParameterError
from convexlearn.estimators import KernelSVMClassifier, LinearSVMClassifier
from convexlearn.estimators._gram import shared_gram
from convexlearn.estimators._multiclass import ovr_from_ovo, vote


@pytest.fixture(scope="module")
def binary():
    X, y = make_classification(120, 5, random_state=0)
    return X, y


def test_svc_parameters_are_accepted_and_cloned():
    est = KernelSVMClassifier(shrinking=False, cache_size=50, verbose=True, break_ties=True)
    params = clone(est).get_params()
    assert (params["shrinking"], params["cache_size"], params["verbose"],
            params["break_ties"]) == (False, 50, True, True)
    assert LinearSVMClassifier(verbose=1).get_params()["verbose"] == 1


@pytest.mark.parametrize("params", [{"shrinking": "no"}, {"cache_size": 0},
                                    {"cache_size": -1.0}, {"verbose": -1},
                                    {"verbose": "yes"}, {"break_ties": None}])
def test_bad_svc_parameters_name_themselves(binary, params):
    with pytest.raises(ParameterError, match=next(iter(params))):
        KernelSVMClassifier(**params).fit(*binary)


def test_shrinking_and_cache_size_reach_smo_and_keep_the_answer():
    # n > certified_smo.SMALL_N: the compiled SMO loop with its cache runs in any process
    # (below, a fresh process takes the tiny numpy path, which has no column cache)
    X, y = make_classification(600, 5, random_state=0)
    ref = KernelSVMClassifier().fit(X, y)
    # a cache of 2 columns (its floor), no shrinking: same certified optimum
    est = KernelSVMClassifier(shrinking=False, cache_size=1e-4).fit(X, y)
    prov = est.solution_.provenance
    assert prov["route"] == "exact-smo" and prov["shrinking"] is False
    assert prov["cache_size_mb"] == 1e-4
    assert est.solution_.extra["cache"]["capacity_columns"] == 2
    assert ref.solution_.extra["cache"]["capacity_columns"] > 2
    assert est.solution_.status == "optimal"
    assert np.allclose(est.decision_function(X), ref.decision_function(X), atol=1e-7)


def test_cache_size_bounds_the_shared_gram_matrix():
    X, y = load_iris(return_X_y=True)
    spec = {"kernel": "rbf", "degree": 3, "coef0": 0.0}
    assert shared_gram(spec, 0.25, X, y, "ovo", max_bytes=8 * 150 ** 2) is not None
    assert shared_gram(spec, 0.25, X, y, "ovo", max_bytes=8 * 150 ** 2 - 1) is None


def test_the_smo_options_do_not_break_the_other_routes(binary):
    X, y = binary
    # linear kernel: route exact-linear; no intercept with weights: the cvxpy dual
    est = KernelSVMClassifier(kernel="linear", shrinking=False, cache_size=10).fit(X, y)
    assert est.solution_.status == "optimal"
    w = np.where(np.arange(len(y)) % 3 == 0, 2.0, 1.0)
    est = KernelSVMClassifier(fit_intercept=False, cache_size=10).fit(X, y, sample_weight=w)
    assert est.solution_.status == "optimal"


def test_verbose_logs_each_solve_on_stderr(binary, capsys):
    KernelSVMClassifier(verbose=True).fit(*binary)
    err = capsys.readouterr().err
    assert "SVM.solve(method='exact')" in err and "route exact-smo" in err
    KernelSVMClassifier().fit(*binary)
    assert capsys.readouterr().err == ""


def test_coef_is_read_only():
    X, y = load_iris(return_X_y=True)
    est = KernelSVMClassifier(kernel="linear").fit(X, y)
    with pytest.raises(AttributeError):
        est.coef_ = np.zeros((3, 4))
    with pytest.raises(ValueError, match="read-only"):
        est.coef_[0, 0] = 0.0


def test_predict_proba_after_switching_probability_on_is_not_fitted(binary):
    X, y = binary
    est = KernelSVMClassifier().fit(X, y)
    assert not hasattr(est, "predict_proba")
    est.probability = True
    assert hasattr(est, "predict_proba")
    with pytest.raises(NotFittedError, match="fitted with probability=False"):
        est.predict_proba(X)
    with pytest.raises(NotFittedError):
        KernelSVMClassifier(probability=True).predict_proba(X)


def test_a_callable_kernel_on_strings_is_refused_with_the_way_to_fit_them():
    data = ["A A", "A", "B", "B B", "A B"]
    counts = np.array([[2, 0], [1, 0], [0, 1], [0, 2], [1, 1]], dtype=float)
    y = np.array([1, 1, 2, 2, 1])

    def string_kernel(A, B):
        return np.array([[a.count("A") * b.count("A") + a.count("B") * b.count("B")
                          for b in B] for a in A], dtype=float)

    with pytest.raises(DataError, match="precomputed"):
        KernelSVMClassifier(kernel=string_kernel).fit(data, y)
    # the way the message gives agrees with the same kernel on the count encoding
    pre = KernelSVMClassifier(kernel="precomputed").fit(string_kernel(data, data), y)
    lin = KernelSVMClassifier(kernel="linear").fit(counts, y)
    assert np.allclose(pre.decision_function(string_kernel(data, data)),
                       lin.decision_function(counts), atol=1e-7)


def test_gamma_scale_overflow_is_reported():
    rng = np.random.RandomState(0)
    X = np.finfo(np.float64).max * rng.uniform(size=(10, 2))
    y = np.arange(10) % 2
    with pytest.raises(DataError, match="overflows"):
        KernelSVMClassifier().fit(X, y)
    KernelSVMClassifier(gamma=1e-300).fit(X / 1e300, y)     # a given gamma is not refused


def test_an_exact_zero_votes_as_in_libsvm_and_the_ovr_transform_as_in_sklearn():
    D = np.array([[0.0, 1.0, -1.0]])        # pairs (0, 1), (0, 2), (1, 2)
    E = np.zeros_like(D)
    assert vote(D, E, 3).tolist() == [[1.0, 1.0, 1.0]]     # f_01 = 0 votes for 1
    assert vote(D, E, 3, zero_for_i=True).tolist() == [[2.0, 0.0, 1.0]]
    assert np.argmax(ovr_from_ovo(D, E, 3), axis=1).tolist() == [0]


@pytest.mark.parametrize("break_ties", [False, True])
def test_predictions_equal_svc_where_pairwise_values_are_zero(break_ties):
    # scikit-learn's test_svc_ovr_tie_breaking: gamma = 1e6 makes f_ij = b_ij away from the
    # samples, and b_01 = 0 exactly: every vote there is decided by the zero rule
    X, y = make_blobs(random_state=0, n_samples=20, n_features=2)
    xx, yy = np.meshgrid(np.linspace(X[:, 0].min(), X[:, 0].max(), 100),
                         np.linspace(X[:, 1].min(), X[:, 1].max(), 100))
    grid = np.c_[xx.ravel(), yy.ravel()]
    ours = KernelSVMClassifier(gamma=1e6, break_ties=break_ties).fit(X, y)
    theirs = SVC(gamma=1e6, break_ties=break_ties).fit(X, y)
    assert ours.intercept_[0] == 0.0
    np.testing.assert_array_equal(ours.predict(grid), theirs.predict(grid))
    agree = ours.predict(grid) == np.argmax(ours.decision_function(grid), axis=1)
    assert np.all(agree) if break_ties else not np.all(agree)


def test_break_ties_with_the_ovo_shape_is_an_error_at_predict():
    X, y = make_blobs(random_state=42)
    est = KernelSVMClassifier(kernel="linear", decision_function_shape="ovo",
                              break_ties=True).fit(X, y)
    with pytest.raises(ParameterError, match="break_ties must be False"):
        est.predict(y)


def test_negative_sample_weights_are_refused_with_svcs_rule_named(binary):
    X, y = binary
    w = np.ones(len(y))
    w[3] = -0.5
    with pytest.raises(DataError, match=r"sample_weight\[3\].*np.maximum"):
        KernelSVMClassifier().fit(X, y, sample_weight=w)
    # SVC's treatment, written out: the same fit as dropping the sample
    clipped = KernelSVMClassifier().fit(X, y, sample_weight=np.maximum(w, 0))
    dropped = KernelSVMClassifier().fit(np.delete(X, 3, 0), np.delete(y, 3))
    assert np.allclose(clipped.decision_function(X), dropped.decision_function(X), atol=1e-7)
