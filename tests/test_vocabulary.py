"""One word per idea: certificate()/cert_tol on every problem, intercept, and the old names
working for one release with a DeprecationWarning that names the new one."""

import warnings

import numpy as np
import pytest

import convexlearn as cl
from convexlearn.app.cli import main
from convexlearn.deprecation import renamed
from convexlearn.errors import ProblemFileError

X = np.array([[0.0, 1.0], [1.0, 0.0], [2.0, 2.0], [3.0, 1.0], [0.5, 0.2], [2.5, 2.5]])
Y = np.array([0, 0, 1, 1, 0, 1])


# ------------------------------------------------------------------ the helper
def test_renamed_passes_the_new_value_through_silently():
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert renamed("f", "old", "new", None, 3, default=1) == 3


def test_renamed_takes_the_old_value_and_names_the_new_name():
    with pytest.warns(DeprecationWarning, match=r"f: 'old' is deprecated .* use 'new'"):
        assert renamed("f", "old", "new", 5, 1, default=1) == 5
    with pytest.warns(DeprecationWarning, match="use 'intercept'"):
        assert renamed("f", "homogeneous", "intercept", True, True, default=True,
                       convert=lambda h: not h) is False


def test_renamed_refuses_both_names():
    with pytest.raises(cl.ParameterError, match=r"pass 'new' only \('old' is its deprecated"):
        renamed("f", "old", "new", 5, 2, default=1)


def test_the_warning_points_at_the_callers_line():
    with pytest.warns(DeprecationWarning) as record:
        cl.Halfspace(X, Y, homogeneous=False)
    assert record[0].filename == __file__


# ------------------------------------------------------- certificate() everywhere
def test_every_problem_has_certificate_and_cert_tol():
    svm = cl.SVM(X, Y, C=1.0)
    sol = svm.solve(cert_tol=1e-6)
    assert sol.status == "optimal"
    report = svm.certificate(sol)
    assert type(report) is type(svm.kkt(sol)) and report.passed
    bad = cl.Solution(w=sol.w + 0.5, b=sol.b)
    assert not svm.certificate(bad).passed                  # it can fail

    erm = cl.ERM(X, Y, loss="logistic", lam=0.1)
    esol = erm.solve(cert_tol=1e-9)
    assert erm.certificate(esol).passed
    assert not erm.certificate(cl.Solution(w=esol.w + 0.5, b=esol.b)).passed

    hs = cl.Halfspace(X, Y)
    res = hs.check(cert_tol=1e-6)
    checks = hs.certificate(res)
    assert [c.arithmetic for c in checks] == ["float", "exact"] and all(c.passed for c in checks)
    res.w = -res.w                                          # a wrong hyperplane fails
    assert not any(c.passed for c in hs.certificate(res))


def test_old_names_still_work_and_mean_the_same():
    svm = cl.SVM(X, Y, C=1.0)
    with pytest.warns(DeprecationWarning, match="use 'cert_tol'"):
        old = svm.solve("smo", kkt_tol=1e-7)
    assert old.report.tol == svm.solve("smo", cert_tol=1e-7).report.tol == 1e-7
    with pytest.warns(DeprecationWarning, match="SVM.path: 'kkt_tol'.*'cert_tol'"):
        path = svm.path([0.5, 1.0], kkt_tol=1e-6)
    assert len(path.values) == 2
    with pytest.raises(cl.ParameterError, match="'cert_tol' only"):
        svm.solve(kkt_tol=1e-6, cert_tol=1e-7)

    with pytest.warns(DeprecationWarning, match="'homogeneous' .* use 'intercept'"):
        hs = cl.Halfspace(X, Y, homogeneous=True)
    assert hs.intercept is False and hs.homogeneous is True
    assert cl.Halfspace(X, Y, intercept=False).check().separable == hs.check().separable
    with pytest.warns(DeprecationWarning, match="Halfspace.check: 'tol'.*'cert_tol'"):
        res = cl.Halfspace(X, Y).check(tol=1e-7)
    assert all(c.tol == 1e-7 for c in res.checks if c.arithmetic == "float")


def test_the_problem_file_and_the_cli_read_the_old_names(tmp_path, capsys):
    np.savetxt(tmp_path / "d.csv", np.column_stack([X, Y]), delimiter=",",
               header="a,b,kind", comments="")
    for key, value in (("intercept", "false"), ("homogeneous", "true")):
        (tmp_path / f"{key}.toml").write_text(
            f'name = "v"\n[model]\nkind = "halfspace"\n{key} = {value}\n'
            f'[data]\npath = "d.csv"\nlabel = "kind"\n')
    from convexlearn.app.catalogue import load_problem
    new = load_problem(tmp_path / "intercept.toml")
    with pytest.warns(DeprecationWarning, match=r"line 4: 'model.homogeneous'.*'model.intercept'"):
        old = load_problem(tmp_path / "homogeneous.toml")
    assert new.model == old.model == {"intercept": False}
    (tmp_path / "both.toml").write_text(
        'name = "v"\n[model]\nkind = "halfspace"\nhomogeneous = true\nintercept = false\n'
        '[data]\npath = "d.csv"\nlabel = "kind"\n')
    with pytest.raises(ProblemFileError, match="'model.intercept' only"):
        load_problem(tmp_path / "both.toml")

    assert main(["separable", str(tmp_path / "d.csv"), "--label", "kind", "--no-intercept"]) == 0
    by_new = capsys.readouterr().out
    with pytest.warns(DeprecationWarning, match="'--homogeneous'.*'--no-intercept'"):
        assert main(["separable", str(tmp_path / "d.csv"), "--label", "kind",
                     "--homogeneous"]) == 0
    assert capsys.readouterr().out == by_new and "homogeneous" in by_new
