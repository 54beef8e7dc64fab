"""The ``convexlearn`` command, run as a subprocess: every exit code, every class of bad
input (message and no output file left behind), the JSON record and ``check`` on the whole
catalogue. Problems here are tiny (4-8 samples) so each run costs about the start-up time."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from convexlearn.app.cli import Progress, main

ROOT = Path(__file__).resolve().parents[2]

# Closest points of the class hulls: (0, 0) and (0, 3), so w = (0, 2/3), b = -1, the
# objective is 1/2 ||w||^2 = 2/9 and exactly those two samples are support vectors.
SEPARABLE_CSV = "a,b,label\n0,0,-1\n-1,-1,-1\n0,3,1\n1,4,1\n"
OVERLAP_CSV = "a,b,label\n0,0,-1\n2,2,-1\n2,0,1\n0,2,1\n"       # XOR: no line separates
PROBLEM = """name = "tiny"
description = "four points"
[data]
path = "tiny.csv"
label = "label"
[model]
kind = "svm"
C = 1.0
"""


def run(*args, cwd=None):
    return subprocess.run([sys.executable, "-m", "convexlearn", *map(str, args)], cwd=cwd,
                          capture_output=True, text=True, timeout=300)


def make(tmp_path, problem=PROBLEM, csv=SEPARABLE_CSV):
    (tmp_path / "tiny.csv").write_text(csv)
    (tmp_path / "tiny.toml").write_text(problem)
    return tmp_path / "tiny.toml"


def assert_no_output(tmp_path, inputs=("tiny.csv", "tiny.toml")):
    """Only the input files remain: no output, no temporary file."""
    assert sorted(os.listdir(tmp_path)) == sorted(inputs)


# ------------------------------------------------------------------------ exit 0 and 1
def test_solve_prints_the_report_and_writes_json(tmp_path):
    path = make(tmp_path, PROBLEM + "[expect]\nobjective = 0.2222222222\nseparable = true\n"
                                    "n_support = 2\n")
    out = tmp_path / "out.json"
    proc = run("solve", path, "--methods", "exact-primal", "exact-dual", "smo", "--json", out)
    assert proc.returncode == 0, proc.stderr
    for text in ("method", "exact-primal *", "exact-dual", "smo", "SV free/bnd",
                 "SEPARABLE by an affine hyperplane", "expectations: 5/5 met"):
        assert text in proc.stdout
    assert proc.stderr == ""                        # no progress when stderr is not a TTY
    record = json.loads(out.read_text())
    assert record["passed"] is True
    assert [r["method"] for r in record["results"]] == ["exact-primal", "exact-dual", "smo"]
    assert abs(record["facts"]["objective"] - 2 / 9) < 1e-8     # margin 1.5: 1/(2 1.5^2)
    prov = record["provenance"]
    for key in ("convexlearn", "cvxpy", "numpy", "python", "tolerance", "data_sha256",
                "source_sha256"):
        assert prov[key], key
    assert prov["solvers"]["CLARABEL"] not in ("", "unknown")
    assert len(prov["data_sha256"]) == 64
    assert record["separability"]["separable"] is True
    assert sorted(os.listdir(tmp_path)) == ["out.json", "tiny.csv", "tiny.toml"]
    # the report is the whole of stdout: no solver banner (highspy >= 1.16 prints one from
    # C++ on the first HiGHS object of a process; the separability LP made one here)
    assert proc.stdout.startswith("tiny: "), proc.stdout[:200]


def test_failed_expectation_exits_1(tmp_path):
    path = make(tmp_path, PROBLEM + "[expect]\nobjective = 0.3\nn_support = 2\n")
    proc = run("solve", path)
    assert proc.returncode == 1
    assert "FAIL objective: expected 0.3, got 0.2222222222" in proc.stdout
    assert "ok   n_support" in proc.stdout


# --------------------------------------------------------------------------- exit 2
BAD_INPUTS = {
    "missing file": (None, None, "no such problem file"),
    "bad TOML": (PROBLEM.replace('kind = "svm"', 'kind = "svm'), None,
                 "tiny.toml, line 7, column 12: TOML syntax error: Illegal character"),
    "unknown key": (PROBLEM.replace("C = 1.0", "C = 1.0\nkernal = \"rbf\""), None,
                    "line 9: unknown key 'model.kernal'; valid keys in [model]: C, coef0, "
                    "degree, gamma, intercept, kernel"),
    "wrong type": (PROBLEM.replace("C = 1.0", "C = [1.0]"), None,
                   "line 8: key 'model.C' must be a number; got list [1.0]"),
    "NaN cell": (None, "a,b,label\n0,0,-1\n1,NaN,-1\n0,3,1\n",
                 "tiny.csv, line 3, column 'b': missing value ('NaN')"),
    "non-numeric cell": (None, "a,b,label\n0,0,-1\n1,0,-1\n0,3x,1\n",
                         "tiny.csv, line 4, column 'b': non-numeric value '3x'"),
    "one class": (None, "a,b,label\n0,0,1\n1,0,1\n",
                  "the label column 'label' has one class only (1.0)"),
    "three classes": (None, "a,b,label\n0,0,1\n1,0,2\n2,2,3\n",
                      "has 3 classes [1.0, 2.0, 3.0]; this model is binary: choose two with "
                      "'classes = [a, b]' in [data]"),
    "C <= 0": (PROBLEM.replace("C = 1.0", "C = -2.0"), None,
               "tiny.toml, line 8: key 'model.C': C must be > 0 (or None/inf for the hard "
               "margin); got C=-2.0"),
}


@pytest.mark.parametrize("case", list(BAD_INPUTS))
def test_bad_input_exits_2_with_message_and_no_output(tmp_path, case):
    problem, csv, message = BAD_INPUTS[case]
    path = make(tmp_path, problem or PROBLEM, csv or SEPARABLE_CSV)
    if case == "missing file":
        path.unlink()
    proc = run("solve", path, "--json", tmp_path / "out.json", "--plot", tmp_path / "out.png")
    assert proc.returncode == 2, (proc.stdout, proc.stderr)
    assert proc.stderr.startswith("convexlearn: error: ")
    assert message in proc.stderr
    assert_no_output(tmp_path, ["tiny.csv"] + (["tiny.toml"] if case != "missing file" else []))


def test_unwritable_output_exits_2_before_solving(tmp_path, capsys):
    path = make(tmp_path)
    proc = run("solve", path, "--json", tmp_path / "no" / "such" / "out.json")
    assert proc.returncode == 2
    assert "cannot write" in proc.stderr and "does not exist" in proc.stderr
    assert proc.stdout == ""                          # failed before solving anything
    (tmp_path / "taken.png").mkdir()                  # in-process from here: same code path
    assert main(["solve", str(path), "--plot", str(tmp_path / "taken.png")]) == 2
    assert "it is a directory" in capsys.readouterr().err
    assert_no_output(tmp_path, ["tiny.csv", "tiny.toml", "taken.png"])


def test_usage_errors_exit_2(tmp_path, capsys):
    proc = run("solve")
    assert proc.returncode == 2 and "the following arguments are required: FILE" in proc.stderr
    path = make(tmp_path)
    assert main(["solve", str(path), "--methods", "newton"]) == 2
    assert "unknown svm method(s) 'newton'; valid: exact, exact-primal" in capsys.readouterr().err
    with pytest.raises(SystemExit) as exc:
        main(["frobnicate"])
    assert exc.value.code == 2


# ------------------------------------------------------------------------ exit 3 and 4
def test_infeasible_hard_margin_exits_3(tmp_path):
    path = make(tmp_path, PROBLEM.replace("C = 1.0", "C = inf"), OVERLAP_CSV)
    proc = run("solve", path, "--json", tmp_path / "out.json")
    assert proc.returncode == 3
    assert "the hard-margin SVM is infeasible" in proc.stderr
    assert_no_output(tmp_path)


def test_solver_failure_exits_4(tmp_path):
    path = make(tmp_path, PROBLEM + "[run]\nsolver_options = { max_iter = 1 }\n")
    proc = run("solve", path, "--json", tmp_path / "out.json")
    assert proc.returncode == 4
    assert "CLARABEL returned status 'user_limit'" in proc.stderr
    assert_no_output(tmp_path)


# ------------------------------------------------------------------- check, separable
def test_check_passes_on_the_whole_catalogue():
    proc = run("check", cwd=ROOT)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    n = len(list((ROOT / "problems").glob("*.toml")))
    assert f"{n}/{n} problems passed (0 failed, 0 errors)" in proc.stdout
    assert proc.stdout.count("\nok    ") + proc.stdout.startswith("ok    ") == n


def test_check_reports_failures_and_exits_1(tmp_path):
    make(tmp_path, PROBLEM + "[expect]\nn_support = 3\n")
    good = PROBLEM.replace('name = "tiny"', 'name = "good"')
    (tmp_path / "good.toml").write_text(good + "[expect]\nn_support = 2\n")
    proc = run("check", tmp_path, "--quiet")
    assert proc.returncode == 1
    assert "FAIL  tiny" in proc.stdout and "n_support: expected 3, got 2" in proc.stdout
    assert "ok    good" not in proc.stdout                       # --quiet: failures only
    assert "1/2 problems passed (1 failed, 0 errors)" in proc.stdout


def test_separable_command(tmp_path, capsys):
    (tmp_path / "d.csv").write_text("x,y,kind\n0,0,a\n2,2,a\n2,0,b\n0,2,b\n5,5,c\n")
    proc = run("separable", tmp_path / "d.csv", "--label", "kind", "--classes", "a", "b",
               "--json", tmp_path / "s.json")
    assert proc.returncode == 0, proc.stderr
    assert "NOT SEPARABLE by an affine hyperplane" in proc.stdout
    assert "independently verified: yes" in proc.stdout
    record = json.loads((tmp_path / "s.json").read_text())
    assert record["separable"] is False and record["verified"] is True
    assert record["meeting_point"] == pytest.approx([1.0, 1.0])
    assert len(record["data"]["data_sha256"]) == 64
    assert main(["separable", str(tmp_path / "d.csv"), "--label", "kind"]) == 2
    assert "choose two with --classes A B" in capsys.readouterr().err


# --------------------------------------------------------------- help and progress
@pytest.mark.parametrize("argv, options", [
    ([], ["solve", "check", "separable", "exit codes"]),
    (["solve"], ["--methods", "--json", "--plot", "--tol", "--quiet"]),
    (["check"], ["PATHS", "--quiet"]),
    (["separable"], ["--label", "--classes", "--features", "--standardize", "--no-intercept",
                     "--json", "--quiet"]),
])
def test_help_lists_every_option(capsys, argv, options):
    with pytest.raises(SystemExit) as exc:
        main(argv + ["--help"])
    assert exc.value.code == 0
    text = capsys.readouterr().out
    for option in options:
        assert option in text


class FakeTTY:
    def __init__(self, tty):
        self.tty, self.text = tty, ""

    def isatty(self):
        return self.tty

    def write(self, s):
        self.text += s

    def flush(self):
        pass


@pytest.mark.parametrize("tty, quiet, shown", [(True, False, True), (True, True, False),
                                               (False, False, False)])
def test_progress_only_on_a_terminal_and_not_quiet(monkeypatch, tty, quiet, shown):
    fake = FakeTTY(tty)
    monkeypatch.setattr(sys, "stderr", fake)
    progress = Progress(quiet, delay=0.0, interval=0.0)
    progress("smo: iteration 7")
    progress.clear()
    assert ("smo: iteration 7" in fake.text) == shown
    late = Progress(False, delay=60.0)                 # short runs stay silent
    late("never shown")
    assert "never shown" not in fake.text


def test_method_option_typo_is_a_usage_error(tmp_path, capsys):
    path = make(tmp_path, PROBLEM + '[run]\nmethods = ["exact", "smo"]\n'
                                    '[run.options.smo]\nmax_iters = 5\n')
    assert main(["solve", str(path)]) == 2
    err = capsys.readouterr().err
    assert "[run.options.smo]: unknown option(s) ['max_iters']; valid: max_iter" in err


def test_internal_error_exits_4_not_1(tmp_path, capsys, monkeypatch):
    import convexlearn.app.runner

    def boom(*args, **kwargs):
        raise RuntimeError("simulated bug")

    monkeypatch.setattr(convexlearn.app.runner, "run_problem", boom)
    path = make(tmp_path)
    assert main(["solve", str(path), "--json", str(tmp_path / "out.json")]) == 4
    err = capsys.readouterr().err
    assert "RuntimeError: simulated bug" in err and "internal error" in err
    assert_no_output(tmp_path)


def test_check_runs_every_file_and_exits_with_the_worst_error(tmp_path, capsys):
    make(tmp_path, PROBLEM + "[expect]\nn_support = 3\n")          # fails: exit 1 alone
    (tmp_path / "broken.toml").write_text(PROBLEM.replace("C = 1.0", "C = 0"))
    assert main(["check", str(tmp_path)]) == 2
    out = capsys.readouterr().out
    assert "ERROR" in out and "broken.toml, line 8: key 'model.C': C must be > 0" in out
    assert "FAIL  tiny" in out
    assert "0/2 problems passed (1 failed, 1 errors)" in out


# ------------------------------------------------------------- regressions (review)
def test_utf8_byte_order_mark_is_not_part_of_the_first_column_name(tmp_path, capsys):
    """Excel writes a BOM: it used to turn the first column's name into '\\ufeffa'."""
    from convexlearn.app.csvfile import read_csv
    path = tmp_path / "bom.csv"
    path.write_bytes("\ufeffa,b,c\n0,1,x\n1,0,y\n".encode("utf-8"))
    header, rows = read_csv(path)
    assert header == ["a", "b", "c"] and rows[0] == ["0", "1", "x"]
    path.write_bytes("\ufeffkind,x,y\na,0,0\na,0,1\nb,3,3\nb,3,4\n".encode("utf-8"))
    assert main(["separable", str(path), "--label", "kind"]) == 0, capsys.readouterr().err
    assert "SEPARABLE by an affine hyperplane" in capsys.readouterr().out


@pytest.mark.parametrize("failure", ["render", "vanished directory"])
def test_failed_plot_leaves_no_json_either(tmp_path, capsys, monkeypatch, failure):
    """--json and --plot are written all or nothing (the JSON used to be written first)."""
    pytest.importorskip("matplotlib")
    import convexlearn.app.runner
    path = make(tmp_path)
    outdir = tmp_path / "out"
    outdir.mkdir()
    if failure == "render":
        from matplotlib.figure import Figure

        def broken_savefig(self, *args, **kwargs):
            raise OSError(28, "No space left on device")
        monkeypatch.setattr(Figure, "savefig", broken_savefig)
        plot = outdir / "p.png"
    else:   # the plot's directory disappears during the solve (checked writable before)
        (tmp_path / "plots").mkdir()
        plot = tmp_path / "plots" / "p.png"
        real = convexlearn.app.runner.run_problem

        def solve_then_remove(*args, **kwargs):
            result = real(*args, **kwargs)
            (tmp_path / "plots").rmdir()
            return result
        monkeypatch.setattr(convexlearn.app.runner, "run_problem", solve_then_remove)
    code = main(["solve", str(path), "--json", str(outdir / "r.json"), "--plot", str(plot)])
    err = capsys.readouterr().err
    assert os.listdir(outdir) == []               # no JSON, no temporary file
    if failure == "render":                       # not the user's fault: internal, exit 4
        assert code == 4 and "No space left on device" in err
    else:
        assert code == 2 and "cannot write" in err and "does not exist" in err
