"""The estimators' per-fit and per-predict short cuts give what the general paths give.

Plain float64 arrays skip scikit-learn's validate_data (its bookkeeping is done by
``_plain_arrays``); binary problems are built by :func:`convexlearn.svm.checked_svm` from
the fit's checked data; a pair's block of the shared Gram matrix is four slices; a
matrix's kernel columns are row views. Each must agree with the path it short-cuts, and
every fit must still be certified from its data.
"""

import copy
import logging

import numpy as np
import pytest

pytest.importorskip("sklearn")

from sklearn.exceptions import NotFittedError  # noqa: E402
from sklearn.utils.validation import validate_data  # noqa: E402

import convexlearn as cl  # noqa: E402
from convexlearn import DataError, ParameterError  # noqa: E402
from convexlearn.estimators import KernelSVMClassifier, LinearSVMClassifier  # noqa: E402
from convexlearn.estimators import _base  # noqa: E402
from convexlearn.gram import KernelColumns, SharedGram  # noqa: E402
from convexlearn.kernels import make_kernel  # noqa: E402
from convexlearn.svm import checked_svm  # noqa: E402


def _data(n=60, d=4, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, d))
    y = (X[:, 0] + 0.5 * rng.normal(size=n) > 0).astype(int)
    return X, y


def test_plain_arrays_do_what_validate_data_does():
    X, y = _data()
    ours, theirs = KernelSVMClassifier(), KernelSVMClassifier()
    ours.feature_names_in_ = theirs.feature_names_in_ = np.array(["a", "b", "c", "d"])
    Xo, yo = _base.edge_data(ours, X, y)
    Xt, yt = validate_data(theirs, X, y, dtype=np.float64)
    assert Xo is X and yo is y                          # no copy, as validate_data
    np.testing.assert_array_equal(Xo, Xt)
    np.testing.assert_array_equal(yo, yt)
    assert ours.n_features_in_ == theirs.n_features_in_ == 4
    assert not hasattr(ours, "feature_names_in_") and not hasattr(theirs, "feature_names_in_")
    assert _base.edge_data(ours, X[:5], reset=False) is not None


@pytest.mark.parametrize("bad", ["nan_X", "inf_X", "nan_y", "short_y", "y_none", "empty"])
def test_input_that_is_not_plain_gets_scikit_learns_messages(bad):
    X, y = _data(20)
    X, y = X.copy(), y.astype(float)
    if bad == "nan_X":
        X[3, 1] = np.nan
    elif bad == "inf_X":
        X[0, 0] = -np.inf
    elif bad == "nan_y":
        y[2] = np.nan
    elif bad == "short_y":
        y = y[:-1]
    elif bad == "y_none":
        y = None
    else:
        X, y = X[:0], y[:0]
    assert _base._plain_arrays(KernelSVMClassifier(), X, y, True, {}) is None or bad == "y_none"
    with pytest.raises(ValueError) as ours:
        _base.edge_data(KernelSVMClassifier(), X, y)
    with pytest.raises(ValueError) as theirs:
        validate_data(KernelSVMClassifier(), X, y, dtype=np.float64)
    assert str(ours.value) == str(theirs.value)


def test_prediction_checks_the_number_of_features_and_fitted_state():
    X, y = _data()
    model = KernelSVMClassifier()
    assert not model.__sklearn_is_fitted__()
    with pytest.raises(NotFittedError):
        model.predict(X)
    model.fit(X, y)
    assert model.__sklearn_is_fitted__()
    with pytest.raises(ValueError, match="X has 3 features, but KernelSVMClassifier is "
                                         "expecting 4 features"):
        model.predict(X[:, :3])
    # a huge finite X: min and max decide (no overflowing sum, no warning)
    big = np.full((3, 4), np.finfo(float).max / 2)
    assert _base._plain_arrays(model, big, None, False, {}) is not None


def test_fit_does_not_modify_or_keep_a_view_of_X():
    X, y = _data()
    before = X.copy()
    model = KernelSVMClassifier(C=3.0).fit(X, y)
    np.testing.assert_array_equal(X, before)
    sv = model.support_vectors_.copy()
    X[:] = 0.0                                         # the fitted model is unaffected
    np.testing.assert_array_equal(model.support_vectors_, sv)


@pytest.mark.parametrize("kernel", ["rbf", "poly", "linear"])
def test_checked_svm_is_the_svm_of_the_same_data(kernel):
    X, y = _data(seed=3)
    y_pm = np.where(y == 1, 1.0, -1.0)
    k = make_kernel(kernel, X, gamma="scale", degree=2, coef0=1.0)
    fast = checked_svm(X, y_pm, 2.0, k)
    slow = cl.SVM(X, y_pm, C=2.0, kernel=kernel, gamma=k.gamma, degree=2, coef0=1.0)
    assert fast.fingerprint() == slow.fingerprint()
    a, b = fast.solve(), slow.solve()
    assert a.status == b.status == "optimal"
    np.testing.assert_allclose(a.alpha, b.alpha, rtol=0, atol=1e-9 * max(1, b.alpha.max()))
    np.testing.assert_array_equal(fast.label_map.classes, slow.label_map.classes)


def test_checked_svm_checks_weights_and_refuses_a_gram_of_an_unchecked_kernel():
    X, y = _data(seed=4)
    y_pm = np.where(y == 1, 1.0, -1.0)
    s = np.where(y_pm > 0, 0.0, 1.0)
    with pytest.raises(DataError, match="has weight 0"):
        checked_svm(X, y_pm, 1.0, make_kernel("rbf", X, gamma=0.5), sample_weight=s)
    sig = make_kernel("sigmoid", X, gamma=0.1)
    with pytest.raises(ParameterError, match="PSD by construction"):
        checked_svm(X, y_pm, 1.0, sig, K=sig(X))


def test_a_fit_is_still_certified_from_its_data():
    X, y = _data(80, seed=5)
    model = KernelSVMClassifier(C=2.0).fit(X, y)
    assert model.kkt_.passed and model.solution_.status == "optimal"
    svm = cl.SVM(X, np.where(y == 1, 1.0, -1.0), C=2.0, kernel="rbf", gamma=model._gamma)
    assert svm.kkt(model.solution_).passed
    bad = copy.deepcopy(model.solution_)
    bad.alpha = bad.alpha * 1.01
    bad.dual_coef = svm.y * bad.alpha
    bad.provenance = {}
    assert not svm.kkt(bad).passed


@pytest.mark.parametrize("estimator", [KernelSVMClassifier(C=5.0, multiclass="ovo"),
                                       KernelSVMClassifier(C=5.0, multiclass="ovr"),
                                       LinearSVMClassifier(C=0.5)])
def test_multiclass_fits_agree_with_and_without_the_short_cuts(estimator, monkeypatch):
    rng = np.random.default_rng(6)
    X = rng.normal(size=(90, 3))
    y = np.argmax(X @ rng.normal(size=(3, 3)), axis=1)
    fast = copy.deepcopy(estimator).fit(X, y)
    from convexlearn.estimators import _svm_base

    def general(X, y, C, kernel, *, intercept, sample_weight, K, repair_psd):
        svm = cl.SVM(X, y, C=C, kernel=kernel.name, gamma=kernel.gamma, degree=kernel.degree,
                     coef0=kernel.coef0, intercept=intercept, sample_weight=sample_weight,
                     repair_psd=repair_psd)
        if K is not None:
            svm.share_gram(K)           # (with its probe of the block's rows)
        return svm
    monkeypatch.setattr(_base, "_plain_arrays", lambda *args: None)
    monkeypatch.setattr(SharedGram, "_pair_block", lambda self, rows: None)
    monkeypatch.setattr(_svm_base, "checked_svm", general)
    slow = copy.deepcopy(estimator).fit(X, y)
    np.testing.assert_array_equal(fast.support_, slow.support_)
    np.testing.assert_allclose(fast.dual_coef_, slow.dual_coef_, rtol=0, atol=1e-8)
    np.testing.assert_allclose(fast.intercept_, slow.intercept_, rtol=0, atol=1e-8)
    np.testing.assert_array_equal(fast.predict(X), slow.predict(X))


def test_pair_blocks_are_the_general_blocks():
    rng = np.random.default_rng(7)
    X, codes = rng.normal(size=(50, 3)), rng.integers(0, 4, 50)
    gram = SharedGram(make_kernel("rbf", X, gamma=0.3), X, codes, True)
    members = [np.flatnonzero(codes == c) for c in range(4)]
    for i in range(4):
        for j in range(i + 1, 4):
            rows = np.concatenate([members[i], members[j]])
            fast = gram._pair_block(rows)
            assert fast is not None
            gram._pair_block = lambda rows: None        # the general path, on this object
            general = gram.block(rows)
            del gram._pair_block
            np.testing.assert_array_equal(fast, general)
    # not a whole pair in order: the general path
    assert gram._pair_block(np.concatenate([members[2], members[1]])) is None
    assert gram._pair_block(np.concatenate([members[0], members[1][:-1]])) is None


def test_columns_of_a_matrix_are_its_rows():
    rng = np.random.default_rng(8)
    A = rng.normal(size=(6, 3))
    K = A @ A.T
    cols = KernelColumns.from_gram(K)
    for i in (2, 4, 2):
        np.testing.assert_array_equal(cols.column(i), K[:, i])
    assert cols.stats()["hits"] == 1 and cols.stats()["misses"] == 2


def test_quiet_solves_skip_the_logging_set_up_but_keep_its_checks(caplog):
    X, y = _data(30)
    svm = cl.SVM(X, y, C=1.0, kernel="rbf")
    with pytest.raises(ParameterError, match="verbose"):
        svm.solve(verbose=None)
    with caplog.at_level(logging.INFO, logger="convexlearn"):
        svm.solve()
    assert any("SVM.solve" in r.getMessage() for r in caplog.records)


@pytest.mark.parametrize("estimator, name", [
    (KernelSVMClassifier(kernel="rbf", fit_intercept="yes"), "intercept"),
    (KernelSVMClassifier(kernel="rbf", fit_intercept=1), "intercept"),
    (KernelSVMClassifier(kernel="rbf", repair_psd="yes"), "repair_psd"),
    (LinearSVMClassifier(fit_intercept="no"), "intercept")])
def test_checked_problems_still_refuse_bad_flags(estimator, name):
    # checked_svm skips SVM(...)'s checks of X, y and the kernel, not of the flags: the
    # same ParameterError as the general path (review: "yes" was fitted as True)
    X, y = _data()
    with pytest.raises(ParameterError, match=f"{name} must be True or False"):
        estimator.fit(X, y)


def test_score_is_accuracy_score_on_every_kind_of_labels():
    from sklearn.metrics import accuracy_score
    X, y = _data(80)
    est = KernelSVMClassifier().fit(X[:60], y[:60])
    Xt, yt = X[60:], y[60:]
    pred = est.predict(Xt)
    assert est.score(Xt, yt) == accuracy_score(yt, pred)              # the short cut
    assert type(est.score(Xt, yt)) is float
    w = np.linspace(0.5, 2.0, yt.size)
    assert est.score(Xt, yt, sample_weight=w) == accuracy_score(yt, pred, sample_weight=w)
    assert est.score(Xt, list(yt)) == accuracy_score(yt, pred)         # a list: theirs
    labels = np.array(["a", "b"])
    named = KernelSVMClassifier().fit(X[:60], labels[y[:60]])
    assert named.score(Xt, labels[yt]) == accuracy_score(labels[yt], labels[pred])
    flags = KernelSVMClassifier().fit(X[:60], y[:60].astype(bool))
    assert flags.score(Xt, yt.astype(bool)) == accuracy_score(yt, pred)
    with pytest.raises(ValueError, match="inconsistent numbers of samples"):
        est.score(Xt, yt[:-1])                           # scikit-learn's message


def test_parameter_names_are_read_once_per_class_and_init():
    from sklearn.base import clone
    est = KernelSVMClassifier(C=3.0, gamma=0.5)
    twin = clone(est)
    assert twin.get_params() == est.get_params() and twin is not est

    class Narrow(KernelSVMClassifier):
        def __init__(self, C=1.0, *, kernel="rbf"):
            super().__init__(C, kernel=kernel)

    assert Narrow._get_param_names() == ["C", "kernel"]
    assert len(KernelSVMClassifier._get_param_names()) == len(est.get_params())
    assert clone(Narrow(C=2.0)).get_params() == {"C": 2.0, "kernel": "rbf"}


@pytest.mark.parametrize("make", ["LinearSVMClassifier", "ERMClassifier",
                                  "CrammerSingerClassifier"])
def test_every_classifiers_score_is_accuracy_score(make):
    from sklearn.metrics import accuracy_score
    import convexlearn.estimators as estimators
    rng = np.random.default_rng(3)
    X = rng.normal(size=(90, 3))
    y = np.argmax(X @ rng.normal(size=(3, 3)) + 0.5 * rng.normal(size=(90, 3)), axis=1)
    est = getattr(estimators, make)().fit(X[:60], y[:60])
    assert est.score(X[60:], y[60:]) == accuracy_score(y[60:], est.predict(X[60:]))
    assert est.score(X[60:], y[60:].tolist()) == accuracy_score(y[60:], est.predict(X[60:]))
