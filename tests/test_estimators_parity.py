"""Estimators at SVC parity: class_weight, one-vs-one in SVC's layout, n_support_,
predict_proba (Platt for the SVM, sigma(f) for the logistic loss)."""

import numpy as np
import pytest

pytest.importorskip("sklearn")

from sklearn.datasets import load_breast_cancer, load_wine, make_blobs, make_classification  # noqa: E402
from sklearn.linear_model import LogisticRegression  # noqa: E402
from sklearn.metrics.pairwise import rbf_kernel  # noqa: E402
from sklearn.preprocessing import StandardScaler  # noqa: E402
from sklearn.svm import SVC  # noqa: E402

from convexlearn.estimators import ERMClassifier, KernelSVMClassifier  # noqa: E402
from convexlearn.estimators._multiclass import ovo_pairs  # noqa: E402
from convexlearn.estimators._probability import couple_pairwise, platt_fit, platt_predict  # noqa: E402


def _imbalanced():
    X, y = make_classification(700, 8, n_informative=5, weights=[0.9, 0.1], flip_y=0.03,
                               class_sep=0.8, random_state=3)
    return X[:400], X[400:], y[:400], y[400:]


def _cancer():
    X, y = load_breast_cancer(return_X_y=True)
    X = StandardScaler().fit_transform(X)
    rng = np.random.default_rng(0)
    # keep every benign and one malignant in four: 357 vs ~53, clearly imbalanced
    keep = (y == 1) | (rng.random(y.size) < 0.25)
    X, y = X[keep], y[keep]
    order = rng.permutation(y.size)
    X, y = X[order], y[order]
    half = y.size // 2
    return X[:half], X[half:], y[:half], y[half:]


@pytest.mark.parametrize("data", [_imbalanced, _cancer], ids=["make_classification", "cancer"])
def test_balanced_class_weight_predicts_as_svc(data):
    Xtr, Xte, ytr, yte = data()
    ours = KernelSVMClassifier(class_weight="balanced").fit(Xtr, ytr)
    svc = SVC(class_weight="balanced", tol=1e-8).fit(Xtr, ytr)
    np.testing.assert_allclose(ours.class_weight_, svc.class_weight_)
    assert np.mean(ours.predict(Xte) == svc.predict(Xte)) >= 0.99
    # the weights matter: the unweighted fit predicts differently somewhere
    plain = KernelSVMClassifier().fit(Xtr, ytr)
    assert np.any(plain.predict(Xte) != ours.predict(Xte))


def test_class_weight_dict_is_per_sample_cost():
    Xtr, _, ytr, _ = _imbalanced()
    # (an explicit gamma: "scale" weighs the variance by sample_weight, not by class_weight)
    by_class = KernelSVMClassifier(gamma=0.1, class_weight={0: 0.5, 1: 3.0}).fit(Xtr, ytr)
    by_sample = KernelSVMClassifier(gamma=0.1).fit(Xtr, ytr,
                                                  sample_weight=np.where(ytr == 1, 3.0, 0.5))
    np.testing.assert_allclose(by_class.decision_function(Xtr),
                               by_sample.decision_function(Xtr), atol=1e-6)


def _blobs3():
    X, y = make_blobs(150, centers=[[0, 0], [2.5, 0], [1.2, 2.2]], cluster_std=1.0,
                      random_state=1)
    return X, y


def test_ovo_layout_matches_svc():
    X, y = _blobs3()            # continuous features: the support set is unique
    ours = KernelSVMClassifier(C=1.0, decision_function_shape="ovo").fit(X, y)
    svc = SVC(C=1.0, decision_function_shape="ovo", tol=1e-10).fit(X, y)
    np.testing.assert_array_equal(ours.n_support_, svc.n_support_)
    np.testing.assert_array_equal(ours.support_, svc.support_)
    assert ours.dual_coef_.shape == svc.dual_coef_.shape == (2, svc.support_.size)
    np.testing.assert_allclose(ours.dual_coef_, svc.dual_coef_, atol=1e-5)
    np.testing.assert_allclose(ours.intercept_, svc.intercept_, atol=1e-5)
    np.testing.assert_allclose(ours.decision_function(X), svc.decision_function(X), atol=1e-5)
    np.testing.assert_array_equal(ours.predict(X), svc.predict(X))


def test_ovo_decision_rebuilt_from_dual_coef():
    # scikit-learn's own rebuild of SVC's one-vs-one decision values, on our attributes
    X, y = load_wine(return_X_y=True)
    X = StandardScaler().fit_transform(X)
    est = KernelSVMClassifier(C=2.0, gamma=0.1, decision_function_shape="ovo").fit(X, y)
    K = rbf_kernel(X, est.support_vectors_, gamma=0.1)
    start = np.concatenate([[0], np.cumsum(est.n_support_)])
    rebuilt = []
    for p, (i, j) in enumerate(ovo_pairs(3)):
        si, sj = slice(start[i], start[i + 1]), slice(start[j], start[j + 1])
        rebuilt.append(K[:, si] @ est.dual_coef_[j - 1, si] + K[:, sj] @ est.dual_coef_[i, sj]
                       + est.intercept_[p])
    np.testing.assert_allclose(est.decision_function(X), np.column_stack(rebuilt),
                               rtol=1e-10, atol=1e-10)
    # SVC's "ovr" shape: votes + transformed confidences; its argmax is the prediction
    ovr = KernelSVMClassifier(C=2.0, gamma=0.1).fit(X, y).decision_function(X)
    assert ovr.shape == (X.shape[0], 3)
    np.testing.assert_array_equal(est.classes_[np.argmax(ovr, axis=1)], est.predict(X))


def test_ovr_option_and_binary_layout():
    X, y = _blobs3()
    ovr = KernelSVMClassifier(multiclass="ovr").fit(X, y)
    assert ovr.dual_coef_.shape == (3, ovr.support_.size) and ovr.intercept_.shape == (3,)
    assert np.mean(ovr.predict(X) == KernelSVMClassifier().fit(X, y).predict(X)) > 0.95
    m = y < 2
    binary = KernelSVMClassifier().fit(X[m], y[m])
    svc = SVC(tol=1e-10).fit(X[m], y[m])
    np.testing.assert_array_equal(binary.support_, svc.support_)
    np.testing.assert_array_equal(binary.n_support_, svc.n_support_)
    np.testing.assert_allclose(binary.dual_coef_, svc.dual_coef_, atol=1e-5)


def test_platt_fit_recovers_a_known_sigmoid():
    rng = np.random.default_rng(0)
    f = rng.normal(0, 2, 4000)
    y = np.where(rng.random(f.size) < platt_predict(f, -1.5, 0.4), 1.0, -1.0)
    A, B = platt_fit(f, y)
    assert abs(A + 1.5) < 0.15 and abs(B - 0.4) < 0.15
    # far decision values do not overflow
    assert np.all(np.isfinite(platt_predict(np.array([-1e6, 1e6]), A, B)))


def test_pairwise_coupling_recovers_consistent_probabilities():
    p = np.array([[0.5, 0.3, 0.2], [0.1, 0.1, 0.8]])
    R = np.column_stack([p[:, i] / (p[:, i] + p[:, j]) for i, j in ovo_pairs(3)])
    np.testing.assert_allclose(couple_pairwise(R, 3, ovo_pairs(3)), p, atol=1e-6)


@pytest.mark.parametrize("multiclass", ["ovo", "ovr"])
def test_svm_predict_proba(multiclass):
    X, y = _blobs3()
    est = KernelSVMClassifier(probability=True, multiclass=multiclass,
                              random_state=0).fit(X, y)
    P = est.predict_proba(X)
    assert P.shape == (X.shape[0], 3) and np.all(P >= 0)
    np.testing.assert_allclose(P.sum(axis=1), 1.0)
    assert np.mean(est.classes_[P.argmax(axis=1)] == est.predict(X)) >= 0.9
    assert not hasattr(KernelSVMClassifier().fit(X, y), "predict_proba")


def test_binary_svm_predict_proba_is_monotone_in_f():
    Xtr, Xte, ytr, _ = _imbalanced()
    est = KernelSVMClassifier(probability=True,
                              random_state=0).fit(Xtr[:200], ytr[:200])
    P = est.predict_proba(Xte)
    np.testing.assert_allclose(P.sum(axis=1), 1.0)
    order = np.argsort(est.decision_function(Xte))
    assert np.all(np.diff(P[order, 1]) >= 0)
    assert np.mean((P[:, 1] >= 0.5) == (est.predict(Xte) == 1)) >= 0.9


def test_logistic_predict_proba_is_sigmoid_of_f():
    X, y = load_breast_cancer(return_X_y=True)
    X = StandardScaler().fit_transform(X)
    C = 0.5
    ours = ERMClassifier("logistic", "l2", lam=1.0 / (len(y) * C)).fit(X, y)
    lr = LogisticRegression(C=C, tol=1e-10, max_iter=10_000).fit(X, y)
    np.testing.assert_allclose(ours.predict_proba(X), lr.predict_proba(X), atol=1e-6)
    np.testing.assert_allclose(np.exp(ours.predict_log_proba(X)), ours.predict_proba(X))
    assert not hasattr(ERMClassifier("hinge"), "predict_proba")


def test_ties_within_rounding_go_to_the_first_class():
    from convexlearn.estimators._multiclass import argmax_ties_low, rounding_bound
    D = np.array([[-1.0000000000000004, -0.9999999999999989, -2.0],
                  [0.5, 0.5 + 1e-9, 0.0]])
    E = rounding_bound(np.full((2, 3), 20.0), np.ones(3), 20)
    # row 0: equal up to round-off -> class 0; row 1: 1e-9 apart is a real difference
    np.testing.assert_array_equal(argmax_ties_low(D, E), [0, 1])


@pytest.mark.parametrize("loss, penalty, method", [("logistic", "l2", "exact"),
                                                   ("logistic", "l2", "newton"),
                                                   ("squared_classification", "l1", "fista"),
                                                   ("hinge", "l2", "exact")])
def test_erm_integer_sample_weights_are_copies(loss, penalty, method):
    import convexlearn as cl
    rng = np.random.default_rng(0)
    X = rng.standard_normal((80, 5))
    y = np.where(X[:, 0] + 0.5 * rng.standard_normal(80) > 0, 1, -1)
    s = rng.integers(0, 4, 80).astype(float)
    rep = np.repeat(np.arange(80), s.astype(int))
    copies = cl.ERM(X[rep], y[rep], loss, penalty, lam=0.05).solve("exact")
    weighted = cl.ERM(X, y, loss, penalty, lam=0.05, sample_weight=s).solve(
        method, **({} if method == "exact" else {"max_iter": 20000}))
    assert weighted.status == "optimal", weighted.report
    assert weighted.objective == pytest.approx(copies.objective, rel=1e-9, abs=1e-12)
    np.testing.assert_allclose(weighted.w, copies.w, atol=1e-6)


def test_erm_classifier_class_weight_is_sample_weight():
    Xtr, _, ytr, _ = _imbalanced()
    a = ERMClassifier(class_weight="balanced", method="newton").fit(Xtr, ytr)
    counts = np.bincount(ytr)
    b = ERMClassifier(method="newton").fit(Xtr, ytr,
                                           sample_weight=(len(ytr) / (2 * counts))[ytr])
    np.testing.assert_allclose(a.coef_, b.coef_, atol=1e-9)
    assert np.mean(a.predict(Xtr) == 1) > np.mean(ERMClassifier().fit(Xtr, ytr).predict(Xtr) == 1)
