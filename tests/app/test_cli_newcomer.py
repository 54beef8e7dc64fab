"""A newcomer's first hour with the command (issue 26): methods checked before any work,
``exact`` as the default, the tolerance each answer was certified at, errors that point
at the fix, ``solve DATA.csv`` without a problem file, ``predict``, the ``--methods``
help, and warnings that say what failed. In-process (``main``) where possible: each run
costs the solve, not an interpreter start."""

from __future__ import annotations

import dataclasses
import json
import re
import warnings
from pathlib import Path

import numpy as np
import pytest

import convexlearn as cl
from convexlearn.app.adapters import ADAPTERS
from convexlearn.app.cli import build_parser, main

ROOT = Path(__file__).resolve().parents[2]
IRIS = ROOT / "problems" / "data" / "iris.csv"
IRIS_PAIR = ["--classes", "versicolor", "virginica", "--features", "petal_length",
             "petal_width"]


def _iris_pair():
    X = np.loadtxt(IRIS, delimiter=",", skiprows=1, usecols=(2, 3))
    y = np.loadtxt(IRIS, delimiter=",", skiprows=1, usecols=4, dtype=str)
    keep = y != "setosa"
    return X[keep], y[keep]


def _solve(*args):
    return main(["solve", *map(str, args)])


# ------------------------------------------------------ methods: checked before any work
@pytest.mark.parametrize("problem, methods, culprit", [
    ("iris_rbf.toml", ["exact", "smo", "dcd"], "'dcd'"),
    ("iris_rbf.toml", ["exact", "smo", "pegasos"], "'pegasos'"),
    ("iris_hard_margin.toml", ["smo", "subgradient"], "'subgradient'"),
    ("lasso_diabetes.toml", ["exact", "gd", "newton"], "'gd'"),
    ("ridge_diabetes.toml", ["exact", "cd", "closed-form"], None),
    ("logistic_breast_cancer.toml", ["exact", "closed-form"], "'closed-form'"),
])
def test_every_method_is_checked_against_the_model_before_any_work(
        monkeypatch, capsys, problem, methods, culprit):
    solved = []
    for cls in (cl.SVM, cl.ERM):
        original = cls.solve
        monkeypatch.setattr(cls, "solve", lambda self, *a, _o=original, **k:
                            solved.append(a) or _o(self, *a, **k))
    code = _solve(ROOT / "problems" / problem, "--methods", *methods, "-q")
    err = capsys.readouterr().err
    if culprit is None:                        # all suitable: everything runs
        assert code == 0, err
        return
    assert code == 2
    assert f"method {culprit} does not suit this problem" in err and "nothing was solved" in err
    assert solved == []                        # not one solve before the refusal


def test_unknown_method_names_the_valid_ones(capsys):
    assert _solve(ROOT / "problems" / "iris_rbf.toml", "--methods", "exact", "cascade") == 2
    err = capsys.readouterr().err
    assert "unknown svm method(s) 'cascade'; valid: " + ", ".join(ADAPTERS["svm"].methods()) \
        in err


def test_methods_help_lists_the_valid_names():
    parser = build_parser()
    solve = parser._subparsers._group_actions[0].choices["solve"]
    text = solve.format_help()
    words = set(re.split(r"[\s,;:.()]+", text))
    for kind in ("svm", "erm"):
        for name in ADAPTERS[kind].methods() + ADAPTERS[kind].distributed_methods():
            assert name in words, name
    for option in ("--scheduler", "--label", "--loss", "--C", "--kernel", "--lam"):
        assert option in text


# ------------------------------------------------- the default and the stated tolerance
NO_RUN = """name = "no-run"
[data]
path = "{csv}"
label = "species"
classes = ["versicolor", "virginica"]
features = ["petal_length", "petal_width"]
[model]
kind = "svm"
C = 1.0
"""


def test_a_file_without_run_runs_exact_and_states_its_tolerance(tmp_path, capsys):
    path = tmp_path / "no_run.toml"
    path.write_text(NO_RUN.format(csv=IRIS.as_posix()))
    out = tmp_path / "out.json"
    assert _solve(path, "--json", out) == 0
    text = capsys.readouterr().out
    record = json.loads(out.read_text())
    assert [row["method"] for row in record["results"]] == ["exact"]
    row = record["results"][0]
    assert row["route"] == "exact-linear" and row["cert_tol"] == "1e-09 gap"
    assert "exact (exact-linear) *  optimal  1e-09 gap" in text
    assert "cert. tol = the tolerance the status was decided at" in text


def test_the_kkt_summary_states_the_certificate_of_each_route():
    X, y = _iris_pair()
    svm = cl.SVM(X, y, C=1.0)
    exact = svm.solve()
    head = exact.report.summary().splitlines()[0]
    assert head.startswith("CERTIFIED at 1e-09 (relative duality gap ")
    assert "PASSED at tol=1e-06" not in exact.report.summary()
    assert abs(exact.report.relative_gap) <= 1e-9
    dual = svm.solve("exact-dual")                  # the cvxpy route: KKT at its tol only
    assert dual.report.summary().startswith("KKT check PASSED at tol=1e-06")
    assert dual.report.gap_tol is None


# ------------------------------------------------------------- errors that point at fixes
def test_a_csv_file_given_as_a_problem_file_says_how_to_solve_it(tmp_path, capsys):
    csv = tmp_path / "wine.data"                    # not named .csv: read as TOML, refused
    csv.write_bytes((ROOT / "problems" / "data" / "wine.csv").read_bytes())
    for path in (csv, ROOT / "problems" / "data" / "wine.csv"):
        assert _solve(path) == 2
        err = capsys.readouterr().err
        assert "this is a CSV data file, not a problem file (TOML)" in err
        for hint in (f"convexlearn solve {path} --label COL", "--C", "--kernel", "--loss",
                     "--lam", f"convexlearn separable {path} --label COL",
                     "docs/problem_files.md"):
            assert hint in err, hint


@pytest.mark.parametrize("delimiter, shown", [(";", "--delimiter ','"),
                                              ("tab", "--delimiter ','")])
def test_a_delimiter_that_yields_one_column_names_the_one_the_header_uses(
        capsys, delimiter, shown):
    code = main(["separable", str(IRIS), "--label", "species", "--delimiter", delimiter])
    err = capsys.readouterr().err
    assert code == 2
    assert "line 1: with the delimiter" in err and "the header is one column" in err
    assert "seems to use ','" in err and shown in err


def test_a_semicolon_file_read_with_commas_is_told_to_use_semicolons(tmp_path, capsys):
    path = tmp_path / "semi.csv"
    path.write_text("a;b;label\n0;0;x\n1;1;y\n")
    assert main(["separable", str(path), "--label", "label"]) == 2
    assert "--delimiter ';' (in a problem file's [data]: delimiter = \";\")" in \
        capsys.readouterr().err


@pytest.mark.parametrize("model, line, text", [
    ('kind = "svm"\nC = -1', 8, "key 'model.C': C must be > 0"),
    ('kind = "svm"\nkernel = "rbff"', 8, "key 'model.kernel': unknown kernel 'rbff'"),
    ('kind = "svm"\nkernel = "rbf"\ngamma = "wide"', 9, "key 'model.gamma': gamma must be"),
    ('kind = "erm"\nloss = "logistic"\nlam = -0.5', 9, "key 'model.lam': lam must be >= 0"),
    ('kind = "erm"\nloss = "logistic"\npenalty = "l3"', 9, "unknown penalty 'l3'"),
    ('kind = "erm"\nloss = "logistc"', 8, "key 'model.loss'"),
])
def test_toml_value_errors_carry_their_line(tmp_path, capsys, model, line, text):
    path = tmp_path / "bad.toml"
    path.write_text(f'name = "bad"\n[data]\npath = "{IRIS.as_posix()}"\nlabel = "species"\n'
                    f'classes = ["versicolor", "virginica"]\n[model]\n{model}\n')
    assert _solve(path) == 2
    err = capsys.readouterr().err
    assert f"bad.toml, line {line}: " in err and text in err
    assert path.read_text().splitlines()[line - 1].split("=")[0].strip() in text


# ------------------------------------------------------------ solve DATA.csv, no TOML
def test_solve_a_csv_file_as_the_problem_file_would(tmp_path, capsys):
    wine = ROOT / "problems" / "data" / "wine.csv"
    a, b = tmp_path / "csv.json", tmp_path / "toml.json"
    assert _solve(wine, "--label", "cultivar", "--classes", "0", "1", "--standardize",
                  "--C", "0.1", "--json", a, "-q") == 0
    assert _solve(ROOT / "problems" / "wine.toml", "--methods", "exact", "--json", b) == 0
    capsys.readouterr()
    csv_run, toml_run = json.loads(a.read_text()), json.loads(b.read_text())
    assert csv_run["problem"]["model"] == toml_run["problem"]["model"]
    assert csv_run["provenance"]["data_sha256"] == toml_run["provenance"]["data_sha256"]
    assert csv_run["facts"]["objective"] == pytest.approx(toml_run["facts"]["objective"],
                                                          rel=1e-9)


def test_solve_a_csv_file_with_an_erm_model(tmp_path, capsys):
    out = tmp_path / "erm.json"
    assert _solve(IRIS, "--label", "species", *IRIS_PAIR, "--loss", "logistic",
                  "--lam", "0.01", "--methods", "exact", "newton", "--json", out, "-q") == 0
    record = json.loads(out.read_text())
    X, y = _iris_pair()
    expected = cl.ERM(X, y, loss="logistic", lam=0.01).solve()
    assert record["facts"]["objective"] == pytest.approx(expected.objective, rel=1e-9)
    assert [r["status"] for r in record["results"]] == ["optimal", "optimal"]


@pytest.mark.parametrize("args, text", [
    (["--lam", "0.1"], "--lam: flag(s) of regularized ERM, which needs --loss"),
    (["--loss", "logistic", "--kernel", "rbf"], "--kernel: SVM flag(s); with --loss"),
    (["--C", "-3"], "--C: C must be > 0"),
    (["--kernel", "rbff"], "--kernel: unknown kernel 'rbff'"),
])
def test_solve_csv_flag_errors_name_the_flag(capsys, args, text):
    assert _solve(IRIS, "--label", "species", *IRIS_PAIR, *args) == 2
    assert text in capsys.readouterr().err


def test_csv_flags_with_a_problem_file_are_refused(capsys):
    assert _solve(ROOT / "problems" / "wine.toml", "--C", "3", "--standardize") == 2
    err = capsys.readouterr().err
    assert "--standardize, --C apply only to a CSV data file" in err


def test_a_csv_file_without_label_asks_for_it(capsys):
    assert _solve(IRIS) == 2
    assert "--label COL" in capsys.readouterr().err


# ------------------------------------------------------------------------------ predict
def test_predict_applies_the_saved_answer_as_trained(tmp_path, capsys):
    answer = tmp_path / "rbf.json"
    assert _solve(IRIS, "--label", "species", *IRIS_PAIR, "--standardize", "--kernel", "rbf",
                  "--gamma", "0.5", "--json", answer, "-q") == 0
    # new data: the columns in another order, and the setosa rows too
    data = np.loadtxt(IRIS, delimiter=",", skiprows=1, usecols=(3, 2))
    new = tmp_path / "new.csv"
    new.write_text("petal_width,petal_length\n" +
                   "".join(f"{a!r},{b!r}\n" for a, b in data.tolist()))
    out = tmp_path / "pred.csv"
    capsys.readouterr()
    assert main(["predict", str(answer), str(new), "--out", str(out)]) == 0
    lines = out.read_text().splitlines()
    assert lines[0] == "decision,label"
    f = np.array([float(line.split(",")[0]) for line in lines[1:]])
    labels = [line.split(",")[1] for line in lines[1:]]
    # the same decision function, recomputed by the library with the training scaling
    X, y = _iris_pair()
    mean, sd = X.mean(0), X.std(0)
    svm = cl.SVM((X - mean) / sd, y, C=1.0, kernel="rbf", gamma=0.5)
    sol = svm.solve()
    expected = svm.decision_function(sol, (data[:, ::-1] - mean) / sd)
    np.testing.assert_allclose(f, expected, rtol=1e-7, atol=1e-7 * np.abs(expected).max())
    assert labels == np.where(f >= 0, "virginica", "versicolor").tolist()
    # JSON out, by --format, to stdout
    assert main(["predict", str(answer), str(new), "--format", "json"]) == 0
    record = json.loads(capsys.readouterr().out)
    assert record["format"] == "convexlearn.predictions" and record["labels"] == labels
    np.testing.assert_array_equal(record["decision"], f)


def test_predict_a_regression_answer(tmp_path, capsys):
    answer = tmp_path / "lasso.json"
    assert _solve(ROOT / "problems" / "lasso_diabetes.toml", "--json", answer, "-q") == 0
    out = tmp_path / "pred.json"
    assert main(["predict", str(answer), str(ROOT / "problems" / "data" / "diabetes.csv"),
                 "--out", str(out)]) == 0
    record = json.loads(out.read_text())
    run = json.loads(answer.read_text())
    sol = cl.load(answer)
    assert record["labels"] is None and len(record["decision"]) == run["data"]["n_samples"]
    # the fitted values: F's loss term recomputed from them equals the saved objective
    y = np.loadtxt(ROOT / "problems" / "data" / "diabetes.csv", delimiter=",", skiprows=1,
                   usecols=-1)
    f = np.asarray(record["decision"])
    lam = run["problem"]["model"]["lam"]
    F = np.mean((y - f) ** 2) + lam * np.abs(sol.w).sum()
    assert F == pytest.approx(run["facts"]["objective"], rel=1e-9)


def test_predict_fails_cleanly_and_writes_nothing(tmp_path, capsys):
    answer = tmp_path / "a.json"
    assert _solve(IRIS, "--label", "species", *IRIS_PAIR, "--json", answer, "-q") == 0
    bad = tmp_path / "bad.csv"
    bad.write_text("petal_length,sepal_width\n1,2\n")
    out = tmp_path / "out.csv"
    capsys.readouterr()
    assert main(["predict", str(answer), str(bad), "--out", str(out)]) == 2
    assert "column(s) ['petal_width'] of the model are missing" in capsys.readouterr().err
    assert main(["predict", str(answer), str(IRIS), "--out", str(answer)]) == 2   # an input
    assert not out.exists() and json.loads(answer.read_text())["predictor"]
    saved = tmp_path / "sol.json"
    cl.load(answer).save(saved)                      # a bare solution has no predictor
    assert main(["predict", str(saved), str(IRIS)]) == 2
    assert "holds no predictor" in capsys.readouterr().err


# ------------------------------------------------------- warnings say what failed, where
def test_convergence_warning_says_what_failed_and_at_which_tolerance():
    from convexlearn.estimators._base import warn_if_not_optimal
    from convexlearn.solvers.kernel_svm.certified_smo import certified_smo
    X, y = _iris_pair()
    svm = cl.SVM(X, y, C=1.0, kernel="rbf", gamma=0.5)
    exact = certified_smo(svm, kkt_tol=1e-6, gap_tol=1e-9)
    # An exact route's answer whose KKT residuals pass but whose gap misses its target: the
    # optimum scaled by 1 - 1e-9 (balanced, in the box; its gap ~1e-9 relative, where the
    # optimum's own gap may round to exactly 0 and meet any target).
    near = svm.from_alpha(exact.alpha * (1 - 1e-9), b=exact.b)
    strict = dataclasses.replace(near, status="inaccurate", report=svm.kkt(near, tol=1e-6),
                                 provenance={**near.provenance, "gap_tol": 1e-30})
    loose = svm.solve("smo", tol=1e-1, cert_tol=1e-9)
    assert strict.report.passed and strict.report.relative_gap > 1e-30
    assert not loose.report.passed
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        warn_if_not_optimal(object(), [strict, loose])
    first, second = (str(w.message) for w in caught)
    assert "the duality-gap certificate failed: relative gap" in first
    assert "> 1e-30 (the KKT residuals passed" in first
    assert "the KKT check failed: max violation" in second and "> tol 1e-09" in second
