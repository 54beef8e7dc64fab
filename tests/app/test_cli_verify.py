"""``convexlearn verify`` on model files written by LIBSVM's and LIBLINEAR's own Python
bindings, with svmlight data; exit 0 pass, 1 fail, 2 bad input. Also: svmlight data in
``separable`` and problem files, and a from_alpha solution that saves and diffs cleanly."""

import json
import os
import subprocess
import sys

import numpy as np
import pytest

import convexlearn as cl

svmutil = pytest.importorskip("libsvm.svmutil")
liblinearutil = pytest.importorskip("liblinear.liblinearutil")
sklearn = pytest.importorskip("sklearn")


def run(*args, cwd=None):
    return subprocess.run([sys.executable, "-m", "convexlearn", *map(str, args)], cwd=cwd,
                          capture_output=True, text=True, timeout=300)


@pytest.fixture(scope="module")
def data(tmp_path_factory):
    """Breast cancer (10 features, standardized) as an svmlight file, labels -1/+1."""
    from sklearn.datasets import load_breast_cancer
    X, y = load_breast_cancer(return_X_y=True)
    X = X[:200, :10]
    X = (X - X.mean(0)) / X.std(0)
    y = np.where(y[:200] == 1, 1, -1)
    path = tmp_path_factory.mktemp("verify") / "cancer.svm"
    path.write_text("".join(f"{c} " + " ".join(f"{j + 1}:{float(v)!r}" for j, v in enumerate(r))
                            + "\n" for c, r in zip(y, X)))
    rows = [dict(enumerate(r, 1)) for r in X.tolist()]
    return path, X, y, rows


def _libsvm(data, options, name):
    path, X, y, rows = data
    out = path.parent / name
    svmutil.svm_save_model(str(out), svmutil.svm_train(y.tolist(), rows, options + " -q"))
    return out


def _liblinear(data, options, name):
    path, X, y, rows = data
    out = path.parent / name
    liblinearutil.save_model(str(out), liblinearutil.train(y.tolist(), rows, options + " -q"))
    return out


def test_libsvm_model_passes_and_its_json_report(data, tmp_path):
    model = _libsvm(data, "-t 2 -g 0.1 -c 1 -e 1e-12", "tight.model")
    out = tmp_path / "report.json"
    r = run("verify", model, "--data", data[0], "--C", 1, "--json", out)
    assert r.returncode == 0, r.stderr
    assert "LIBSVM: PASSED" in r.stdout
    report = json.loads(out.read_text())
    assert report["passed"] and report["flipped"] == []
    # the long way: the same multipliers in the problem built by hand
    path, X, y, _ = data
    problem = cl.SVM(X, y, C=1.0, kernel="rbf", gamma=0.1)
    assert report["optimum"] == pytest.approx(problem.solve("exact-dual").objective, rel=1e-6)


def test_libsvm_default_tolerance_fails_with_exit_1(data):
    model = _libsvm(data, "-t 2 -g 0.1 -c 1", "default.model")
    r = run("verify", model, "--data", data[0], "--C", 1, "--tol", 1e-8)
    assert r.returncode == 1, r.stderr
    assert "FAILED" in r.stdout and "KKT violators" in r.stdout


@pytest.mark.parametrize("options", ["-s 1 -c 0.5 -B 1 -e 1e-12", "-s 0 -c 0.5 -e 1e-12",
                                     "-s 6 -c 0.5 -e 1e-12"])
def test_liblinear_models_pass(data, options):
    model = _liblinear(data, options, "lin.model")
    r = run("verify", model, "--data", data[0], "--C", 0.5)
    assert r.returncode == 0, r.stdout + r.stderr
    assert "LIBLINEAR: PASSED" in r.stdout


def test_liblinear_with_the_wrong_c_fails(data):
    model = _liblinear(data, "-s 1 -c 0.5 -B 1 -e 1e-12", "lin2.model")
    assert run("verify", model, "--data", data[0], "--C", 2).returncode == 1


def test_bad_input_exits_2(data, tmp_path):
    model = _liblinear(data, "-s 1 -c 0.5 -B 1", "lin3.model")
    r = run("verify", model, "--data", data[0])
    assert r.returncode == 2 and "does not record C" in r.stderr
    broken = tmp_path / "broken.model"
    broken.write_text(model.read_text()[:40])
    r = run("verify", broken, "--data", data[0], "--C", 1)
    assert r.returncode == 2 and str(broken) in r.stderr and "Traceback" not in r.stderr
    other = tmp_path / "other.svm"
    other.write_text("1 1:1 2:1\n-1 1:-1\n")
    r = run("verify", model, "--data", other, "--C", 0.5)
    assert r.returncode == 2 and "features" in r.stderr
    nu = tmp_path / "nu.model"
    svmutil.svm_save_model(str(nu), svmutil.svm_train(data[2].tolist(), data[3], "-s 1 -q"))
    r = run("verify", nu, "--data", data[0])
    assert r.returncode == 2 and "nu-SVM" in r.stderr


def test_a_saved_solution_via_the_cli(data, tmp_path):
    from convexlearn.svmlight import read_svmlight
    path = data[0]
    svm_data = read_svmlight(path)       # the problem exactly as the command reads it
    sol = cl.SVM(svm_data.X, svm_data.y, C=1.0).solve()
    saved = sol.save(tmp_path / "sol.json")
    assert run("verify", saved, "--data", path, "--C", 1).returncode == 0
    r = run("verify", saved, "--data", path, "--C", 3)     # another problem
    assert r.returncode == 2 and "another problem" in r.stderr


def test_from_alpha_saves_an_objective_and_a_method(data, tmp_path):
    path, X, y, _ = data
    svm = cl.SVM(X, y, C=1.0)
    ref = svm.solve()
    sol = svm.from_alpha(ref.alpha, b=ref.b)
    assert sol.method == "from_alpha"
    assert sol.objective == pytest.approx(svm.primal_objective(sol), rel=1e-12)
    a, b = ref.save(tmp_path / "ref.json"), sol.save(tmp_path / "alpha.json")
    r = run("diff", a, b)
    assert r.returncode == 0, r.stdout + r.stderr
    assert "nan" not in r.stdout


def test_separable_reads_scikit_learns_svmlight_file():
    path = os.path.join(os.path.dirname(sklearn.__file__), "datasets", "tests", "data",
                        "svmlight_classification.txt")
    r = run("separable", path, "--classes", 1, 2)
    assert r.returncode == 0, r.stderr
    assert "4 samples x 21 features" in r.stdout and "verified: yes" in r.stdout
    r = run("separable", path)
    assert r.returncode == 2 and "choose two with --classes" in r.stderr


def test_problem_file_with_svmlight_data(data, tmp_path):
    path = data[0]
    (tmp_path / "p.toml").write_text(f'name = "svmlight"\n[data]\npath = "{path}"\n'
                                     f'[model]\nkind = "svm"\nC = 1.0\n')
    r = run("solve", tmp_path / "p.toml", "--methods", "exact")
    assert r.returncode == 0, r.stdout + r.stderr
