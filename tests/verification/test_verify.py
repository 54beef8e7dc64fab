"""cl.verify: every source checked against the certificate of the same answer computed the
long way (the problem built by hand, the answer converted by hand), a perturbed answer
fails, and the models whose problem convexlearn cannot state are refused by name."""

import warnings

import numpy as np
import pytest

import convexlearn as cl
from convexlearn.errors import DataError, NotApplicableError, ParameterError

sk = pytest.importorskip("sklearn")
from sklearn import linear_model, svm as sksvm  # noqa: E402
from sklearn.datasets import load_breast_cancer, load_iris, make_regression  # noqa: E402


def _cancer(n=150):
    X, y = load_breast_cancer(return_X_y=True)
    X = X[:n, :8]
    return (X - X.mean(0)) / X.std(0), y[:n]


X, Y = _cancer()
XR, YR = make_regression(80, 6, noise=1.0, random_state=0)


def _svm_long_way(est, X, y, C):
    """SVC -> SVM and its answer by hand: alpha from support_ and |dual_coef_|."""
    problem = cl.SVM(X, y, C=C, kernel=est.kernel, gamma=est._gamma)
    alpha = np.zeros(len(y))
    alpha[est.support_] = np.abs(est.dual_coef_.ravel())
    sol = cl.Solution(w=None, b=float(est.intercept_[0]), alpha=alpha,
                      dual_coef=problem.y * alpha)
    return problem, sol


def test_svc_matches_the_long_way_and_a_perturbed_model_fails():
    est = sksvm.SVC(C=2.0, tol=1e-10).fit(X, Y)
    rep = cl.verify(est, X, Y)
    problem, sol = _svm_long_way(est, X, Y, 2.0)
    kkt = problem.kkt(sol, tol=1e-6)
    assert rep.passed and kkt.passed
    assert rep.gap == pytest.approx(kkt.relative_gap, rel=1e-9, abs=1e-15)
    assert rep.objective == pytest.approx(kkt.primal_objective, rel=1e-12)
    assert rep.optimum == pytest.approx(problem.solve("exact-dual").objective, rel=1e-6)
    assert rep.flipped == [] and rep.support_missing == [] and rep.support_extra == []
    est._intercept_[0] -= 0.05       # the perturbed model (predict's copy, -b for binary)
    bad = cl.verify(est, X, Y)
    assert not bad.passed and len(bad.violators) > 0
    # the same violators as the hand-built report sees
    sol.b += 0.05
    worst = problem.kkt(sol, tol=1e-6)
    assert not worst.passed
    assert set(bad.violators) <= set(range(len(Y)))


def test_multiclass_svc_pairs_and_probability_disagreements():
    Xi, yi = load_iris(return_X_y=True)
    est = sksvm.SVC(C=1.0, tol=1e-10, probability=True, random_state=0).fit(Xi, yi)
    rep = cl.verify(est, Xi, yi)
    assert len(rep.parts) == 3 and rep.passed and rep.flipped == []
    top = est.classes_[np.argmax(est.predict_proba(Xi), axis=1)]
    assert rep.proba_disagree == np.flatnonzero(top != est.predict(Xi)).tolist()
    # pair 1 vs 2 the long way: beta on that pair's rows, +1 = class 2
    rows = np.flatnonzero(yi > 0)
    problem = cl.SVM(Xi[rows], yi[rows], C=1.0, kernel="rbf", gamma=est._gamma)
    sol = problem.solve("exact-dual")
    assert rep.parts[2].optimum == pytest.approx(sol.objective, rel=1e-6)


def test_sample_weights_reach_the_problem():
    w = np.random.default_rng(1).uniform(0.2, 3.0, len(Y))
    est = sksvm.SVC(C=1.0, kernel="linear", tol=1e-10).fit(X, Y, sample_weight=w)
    assert cl.verify(est, X, Y, sample_weight=w).passed
    assert not cl.verify(est, X, Y).passed       # another problem without them


@pytest.mark.parametrize("est", [
    sksvm.LinearSVC(C=0.5, tol=1e-12, max_iter=100000),
    sksvm.LinearSVC(C=0.5, loss="hinge", tol=1e-12, max_iter=200000, intercept_scaling=3.0),
    linear_model.LogisticRegression(C=0.7, tol=1e-12, max_iter=10000),
    linear_model.LogisticRegression(C=0.7, solver="liblinear", tol=1e-12),
    linear_model.LogisticRegression(C=0.7, l1_ratio=1.0, solver="saga", tol=1e-12,
                                    max_iter=100000),
], ids=["linearsvc", "linearsvc-hinge", "logreg", "logreg-liblinear", "logreg-l1"])
def test_linear_classifiers_match_the_long_way(est):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        est.fit(X, Y)
    rep = cl.verify(est, X, Y)
    n = len(Y)
    name = type(est).__name__
    liblinear = name == "LinearSVC" or est.solver == "liblinear"
    loss = ("logistic" if name == "LogisticRegression" else
            "hinge" if est.loss == "hinge" else "squared_hinge")
    penalty = "l1" if getattr(est, "l1_ratio", None) == 1.0 else "l2"
    if liblinear:
        Z = np.hstack([X, np.full((n, 1), est.intercept_scaling)])
        erm = cl.ERM(Z, Y, loss=loss, penalty=penalty, lam=1 / (n * est.C), intercept=False)
        sol = cl.Solution(w=np.append(est.coef_[0], est.intercept_[0] / est.intercept_scaling),
                          b=0.0)
    else:
        erm = cl.ERM(X, Y, loss=loss, penalty=penalty, lam=1 / (n * est.C))
        sol = cl.Solution(w=est.coef_[0].copy(), b=float(est.intercept_[0]))
    cert = erm.optimality(sol, tol=1e-6, suboptimality=True)
    assert rep.objective == pytest.approx(cert.objective, rel=1e-12)
    assert rep.optimum == pytest.approx(cert.optimal_objective, rel=1e-9)
    assert rep.passed == (cert.passed and cert.suboptimality <= 1e-6 * abs(cert.optimal_objective))
    assert rep.passed, rep.summary()
    est.coef_[0, 0] += 0.1
    assert not cl.verify(est, X, Y).passed


@pytest.mark.parametrize("est, lam, penalty, params", [
    (linear_model.Lasso(alpha=0.5, tol=1e-12), 1.0, "l1", {}),
    (linear_model.ElasticNet(alpha=0.5, l1_ratio=0.3, tol=1e-12), 1.0, "elastic_net",
     {"l1_ratio": 0.3}),
    (linear_model.Ridge(alpha=4.0), 2 * 4.0 / 80, "l2", {}),
])
def test_regressions_match_the_long_way(est, lam, penalty, params):
    est.fit(XR, YR)
    rep = cl.verify(est, XR, YR)
    erm = cl.ERM(XR, YR, loss="squared", penalty=penalty, lam=lam, **params)
    cert = erm.optimality(cl.Solution(w=est.coef_, b=float(est.intercept_)),
                          suboptimality=True)
    assert rep.passed and rep.flipped is None
    assert rep.objective == pytest.approx(cert.objective, rel=1e-12)
    assert rep.optimum == pytest.approx(cert.optimal_objective, rel=1e-9)
    est.coef_ = est.coef_ * 1.01
    assert not cl.verify(est, XR, YR).passed


def test_sgd_classifier_lam_and_refused_losses():
    est = linear_model.SGDClassifier(alpha=0.01, random_state=0, max_iter=5, tol=None)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        est.fit(X, Y)
    rep = cl.verify(est, X, Y)
    assert "lam = 0.01" in rep.notes[0] and not rep.passed and rep.gap > 0
    for loss in ("modified_huber", "huber", "epsilon_insensitive"):
        est = linear_model.SGDClassifier(loss=loss, max_iter=5, tol=None).fit(X, Y)
        with pytest.raises(NotApplicableError, match="does not have yet"):
            cl.verify(est, X, Y)


@pytest.mark.parametrize("est", [sksvm.NuSVC(), sksvm.SVR(), sksvm.NuSVR(), sksvm.OneClassSVM(),
                                 sksvm.LinearSVR()])
def test_models_outside_the_package_are_refused_by_name(est):
    with pytest.raises(NotApplicableError, match=type(est).__name__):
        cl.verify(est, X, Y)


def test_bad_inputs():
    est = sksvm.SVC().fit(X, Y)
    with pytest.raises(DataError, match="features"):
        cl.verify(est, X[:, :5], Y)
    with pytest.raises(DataError, match="labels"):
        cl.verify(est, X, Y + 5)
    with pytest.raises(ParameterError, match="not fitted"):
        cl.verify(sksvm.SVC(), X, Y)
    with pytest.raises(ParameterError, match="cannot read"):
        cl.verify(object(), X, Y)


def test_solution_raw_arrays_and_saved_file(tmp_path):
    problem = cl.SVM(X, Y, C=1.0)
    sol = problem.solve()
    assert cl.verify(sol, problem).passed
    assert cl.verify((sol.w, sol.b), problem).passed
    assert cl.verify(alpha=sol.alpha, b=sol.b, problem=problem).passed
    path = sol.save(tmp_path / "s.json")
    assert cl.verify(str(path), problem).passed
    assert not cl.verify((sol.w * 1.01, sol.b), problem).passed
    erm = cl.ERM(X, Y, loss="logistic", lam=0.01)
    ref = erm.solve()
    rep = cl.verify((ref.w, ref.b), erm)
    assert rep.passed and rep.gap <= 1e-12


def test_the_optimum_is_computed_once_per_problem(monkeypatch):
    cl.verification.clear_cache()
    calls = []
    original = cl.SVM.solve

    def counting(self, *args, **kwargs):
        calls.append(1)
        return original(self, *args, **kwargs)

    monkeypatch.setattr(cl.SVM, "solve", counting)
    for tol in (1e-3, 1e-6):
        est = sksvm.SVC(tol=tol).fit(X, Y)
        cl.verify(est, X, Y)
    assert len(calls) == 1


def test_flipped_on_test_samples():
    est = sksvm.SVC(tol=1e-10).fit(X, Y)
    est._intercept_[0] -= 1.0        # predict's copy of -b
    X_test, _ = _cancer(300)
    rep = cl.verify(est, X, Y, X_test=X_test[150:])
    good = sksvm.SVC(tol=1e-10).fit(X, Y)
    differ = np.flatnonzero(est.predict(X_test[150:]) != good.predict(X_test[150:]))
    assert rep.flipped == differ.tolist() and len(differ) > 0


def test_report_dict_and_summary_round_trip():
    import json
    rep = cl.verify(sksvm.SVC().fit(X, Y), X, Y)
    data = json.loads(rep.to_json())
    assert data["passed"] == rep.passed and data["gap"] == rep.gap
    assert "FAILED" in rep.summary() or "PASSED" in rep.summary()


def test_sparse_data_stay_sparse(monkeypatch):
    from scipy import sparse
    import convexlearn.erm as erm_module
    Xs = sparse.random(300, 40, density=0.1, random_state=0, format="csr")
    ys = np.sign(Xs @ np.random.default_rng(0).normal(size=40) + 0.05)
    seen = []
    original = erm_module.ERM.__init__

    def spy(self, X, *args, **kwargs):
        seen.append(sparse.issparse(X))
        original(self, X, *args, **kwargs)

    monkeypatch.setattr(erm_module.ERM, "__init__", spy)
    est = sksvm.LinearSVC(tol=1e-12, max_iter=100000).fit(Xs, ys)
    assert cl.verify(est, Xs, ys).passed
    assert seen == [True]


def test_sgd_regressor_is_lam_2_alpha_the_long_way():
    est = linear_model.SGDRegressor(alpha=0.01, penalty="l2", random_state=0, max_iter=50,
                                    tol=None)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        est.fit(XR, YR)
    rep = cl.verify(est, XR, YR)
    erm = cl.ERM(XR, YR, loss="squared", penalty="l2", lam=0.02)
    cert = erm.optimality(cl.Solution(w=est.coef_, b=float(est.intercept_[0])),
                          suboptimality=True)
    assert rep.objective == pytest.approx(cert.objective, rel=1e-12)
    assert rep.optimum == pytest.approx(cert.optimal_objective, rel=1e-9)
    assert rep.gap == pytest.approx(cert.suboptimality / cert.objective, rel=1e-6)
