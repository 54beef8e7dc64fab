"""The problem-file kinds nu_svc, nu_svr, svm_l2 and crammer_singer: their files solve with
every expectation met and write a JSON record; a bad key value is refused with the file and
line of its key, a method that does not suit the model before anything runs. (Their
expectations are cross-checked against scikit-learn in test_catalogue.py.)"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from convexlearn.app.catalogue import load_problem
from convexlearn.app.cli import main
from convexlearn.app.runner import run_problem
from convexlearn.errors import NotApplicableError, ParameterError, ProblemFileError

ROOT = Path(__file__).resolve().parents[2]
FILES = {"nu_svc": "nu_svc_breast_cancer", "nu_svr": "nu_svr_diabetes",
         "svm_l2": "svm_l2_breast_cancer", "crammer_singer": "crammer_singer_wine"}


@pytest.mark.parametrize("kind", FILES)
def test_solve_meets_every_expectation_and_writes_json(kind, tmp_path, capsys):
    path = ROOT / "problems" / f"{FILES[kind]}.toml"
    out = tmp_path / "run.json"
    assert main(["solve", str(path), "--json", str(out), "-q"]) == 0
    text = capsys.readouterr().out
    assert "FAIL" not in text
    record = json.loads(out.read_text())
    assert record["passed"] is True and record["problem"]["kind"] == kind
    p = load_problem(path)
    assert set(record["solutions"]) == set(p.methods)
    assert len(record["expectations"]) > len([m for m in p.methods if m.startswith("exact")])
    assert all(c["passed"] for c in record["expectations"])


def test_a_wrong_expectation_fails_the_run(tmp_path):
    text = (ROOT / "problems" / "nu_svr_diabetes.toml").read_text()
    text = text.replace("data/diabetes.csv", str(ROOT / "problems" / "data" / "diabetes.csv"))
    path = tmp_path / "p.toml"
    path.write_text(text.replace("epsilon = 30.15033221", "epsilon = 30.1504"))
    result = run_problem(load_problem(path), methods=["exact"])
    failed = [c.name for c in result.checks if not c.passed]
    assert failed == ["epsilon"]


def _file(tmp_path, model: str, label: str = "diagnosis", data: str = "breast_cancer.csv"):
    path = tmp_path / "p.toml"
    path.write_text(f'name = "p"\n[data]\npath = "{ROOT / "problems" / "data" / data}"\n'
                    f'label = "{label}"\nstandardize = true\n[model]\n{model}\n')
    return path


@pytest.mark.parametrize("model, message", [
    ('kind = "nu_svc"\nnu = 1.5', r"line 8: key 'model.nu': nu must be in \(0, 1\]"),
    ('kind = "nu_svr"\nC = inf', r"line 8: key 'model.C': C must be a positive finite"),
    ('kind = "svm_l2"\nintercept = "yes"', r"line 8: key 'model.intercept': intercept must "
                                           r"be True, False or 'penalized'"),
    ('kind = "svm_l2"\nintercept = 1', r"key 'model.intercept' must be a boolean or string"),
    ('kind = "crammer_singer"\nC = 0', r"line 8: key 'model.C': C must be a positive"),
])
def test_bad_values_name_the_line(tmp_path, model, message):
    with pytest.raises(ProblemFileError, match=message):
        load_problem(_file(tmp_path, model))


def test_nu_above_the_class_balance_bound_is_refused(tmp_path):
    # breast cancer: 212 malignant of 569, so nu <= 2 * 212 / 569 = 0.745
    with pytest.raises(ParameterError, match=r"nu=0.8 is infeasible.*0.745167"):
        run_problem(load_problem(_file(tmp_path, 'kind = "nu_svc"\nnu = 0.8')))


def test_dcd_needs_the_linear_kernel_and_is_refused_before_solving(tmp_path):
    p = load_problem(_file(tmp_path, 'kind = "svm_l2"\nkernel = "rbf"\ngamma = 0.1'))
    with pytest.raises(NotApplicableError, match="method 'dcd' does not suit.*linear kernel"):
        run_problem(p, methods=["exact", "dcd"])


def test_crammer_singer_keeps_every_class_and_binary_kinds_still_refuse_three(tmp_path):
    p = load_problem(_file(tmp_path, 'kind = "crammer_singer"', "cultivar", "wine.csv"))
    assert sorted(set(p.data.y.tolist())) == [0, 1, 2] and p.data.X.shape == (178, 13)
    with pytest.raises(ProblemFileError, match="has 3 classes.*this model is binary"):
        load_problem(_file(tmp_path, 'kind = "svm_l2"', "cultivar", "wine.csv"))


def test_a_primal_only_crammer_singer_reference_reports_no_support_counts(tmp_path):
    p = load_problem(_file(tmp_path, 'kind = "crammer_singer"\nC = 0.1', "cultivar",
                           "wine.csv"))
    result = run_problem(p, methods=["exact-primal"])
    assert result.rows[0].status == "optimal"
    assert "n_support" not in result.facts and result.facts["training_errors"] == 1
