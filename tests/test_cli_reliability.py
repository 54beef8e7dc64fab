"""Bad command lines and bad files: each refused with its exit code and a message naming the
culprit, nothing written; fuzzed CSV and TOML readers never raise anything but
ProblemFileError; a SIGKILL during a large --json leaves no partial and no temporary file;
save -> diff round trips. In-process (``main``) except the kill test, to stay fast."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from convexlearn.app.cli import main
from convexlearn.errors import ConvexLearnError, ProblemFileError

CSV = "a,b,label\n0,0,-1\n-1,-1,-1\n0,3,1\n1,4,1\n"
TOML = """name = "tiny"
[data]
path = "tiny.csv"
label = "label"
[model]
kind = "svm"
C = 1.0
"""
GEN = """name = "gen"
[data.generator]
kind = "blobs"
n = 40
[model]
kind = "svm"
"""
ERM = """name = "e"
[data]
path = "tiny.csv"
label = "label"
[model]
kind = "erm"
loss = "logistic"
"""


def _sub(text, old, new):
    assert old in text, old
    return text.replace(old, new)


# (name, argv with {P} the problem file and {D} the directory, files to write over the
#  defaults, expected exit code, fragments the message must contain)
CASES = [
    # usage: outputs
    ("json on the problem file", ["solve", "{P}", "--json", "{P}"], {}, 2, ["is the problem file"]),
    ("json on the data file", ["solve", "{P}", "--json", "{D}/tiny.csv"], {}, 2, ["is the data file"]),
    ("json and plot on one path", ["solve", "{P}", "--json", "{D}/o.png", "--plot", "{D}/o.png"], {}, 2, ["are the same file"]),
    ("json and plot on stdout", ["solve", "{P}", "--json", "-", "--plot", "-"], {}, 2, ["standard output"]),
    ("json on the against file", ["solve", "{P}", "--against", "{D}/ref.json", "--json", "{D}/ref.json"], {"ref.json": "REF"}, 2, ["--against reference"]),
    ("json under a file", ["solve", "{P}", "--json", "{D}/tiny.csv/o.json"], {}, 2, ["tiny.csv is a file, not a directory"]),
    ("json under a missing dir", ["solve", "{P}", "--json", "{D}/no/such/o.json"], {}, 2, ["does not exist"]),
    ("json is a directory", ["solve", "{P}", "--json", "{D}"], {}, 2, ["it is a directory"]),
    ("json in an unwritable dir", ["solve", "{P}", "--json", "/proc/o.json"], {}, 2, ["cannot write /proc/o.json"]),
    ("plot without extension", ["solve", "{P}", "--plot", "{D}/p"], {}, 2, ["extension must name the format"]),
    ("plot gif", ["solve", "{P}", "--plot", "{D}/p.gif"], {}, 2, ["got .gif"]),
    ("plot to a file's child", ["solve", "{P}", "--plot", "{D}/tiny.toml/p.png"], {}, 2, ["is a file, not a directory"]),
    ("check json under a file", ["check", "{P}", "--json", "{D}/tiny.csv/x.json"], {}, 2, ["is a file"]),
    ("check json is a dir", ["check", "{P}", "--json", "{D}"], {}, 2, ["it is a directory"]),
    ("separable json on its data", ["separable", "{D}/tiny.csv", "--label", "label", "--json", "{D}/tiny.csv"], {}, 2, ["is the data file"]),
    ("separable json under a file", ["separable", "{D}/tiny.csv", "--label", "label", "--json", "{D}/tiny.csv/x"], {}, 2, ["is a file"]),
    # usage: options
    ("tol zero", ["solve", "{P}", "--tol", "0"], {}, 2, ["--tol must be > 0; got 0.0"]),
    ("tol negative", ["solve", "{P}", "--tol", "-1"], {}, 2, ["--tol must be > 0; got -1.0"]),
    ("tol nan", ["solve", "{P}", "--tol", "nan"], {}, 2, ["--tol must be > 0; got nan"]),
    ("against-tol zero", ["solve", "{P}", "--against-tol", "0"], {}, 2, ["--against-tol must be > 0"]),
    ("unknown method", ["solve", "{P}", "--methods", "newton"], {}, 2, ["unknown svm method(s) 'newton'"]),
    ("unknown erm method", ["solve", "{P}", "--methods", "smo"], {"tiny.toml": ERM}, 2, ["unknown erm method(s) 'smo'"]),
    ("against missing", ["solve", "{P}", "--against", "{D}/nope.json"], {}, 2, ["nope.json: no such file"]),
    ("against not json", ["solve", "{P}", "--against", "{D}/ref.json"], {"ref.json": "{oops"}, 2, ["ref.json: not a readable JSON file"]),
    ("against not a solution", ["solve", "{P}", "--against", "{D}/ref.json"], {"ref.json": '{"a": 1}'}, 2, ["not a saved convexlearn solution"]),
    ("diff tol zero", ["diff", "{D}/ref.json", "{D}/ref.json", "--tol", "0"], {"ref.json": "REF"}, 2, ["--tol must be > 0"]),
    ("diff missing", ["diff", "{D}/a.json", "{D}/b.json"], {}, 2, ["a.json: no such file"]),
    ("diff newer version", ["diff", "{D}/ref.json", "{D}/new.json"], {"ref.json": "REF", "new.json": "NEWER"}, 2, ["newer than this convexlearn"]),
    ("diff unknown method", ["diff", "{D}/ref.json", "{D}/ref.json", "--method", "smo"], {"ref.json": "REF"}, 2, ["--method 'smo': not in the reference and other file"]),
    ("diff other data", ["diff", "{D}/ref.json", "{D}/other.json"], {"ref.json": "REFSHA", "other.json": "OTHERDATA"}, 2, ["different data"]),
    ("check no files", ["check", "{D}/nothing"], {}, 2, ["nothing: no such file or directory"]),
    ("list missing", ["list", "{D}/nothing"], {}, 2, ["no such file or directory"]),
    ("list bad toml", ["list", "{P}"], {"tiny.toml": "name = "}, 2, ["TOML syntax error"]),
    ("delimiter two chars", ["separable", "{D}/tiny.csv", "--label", "label", "--delimiter", ";;"], {}, 2, ["delimiter must be one character", "';;'"]),
    ("delimiter quote", ["separable", "{D}/tiny.csv", "--label", "label", "--delimiter", '"'], {}, 2, ["delimiter must be one character"]),
    ("delimiter digit", ["separable", "{D}/tiny.csv", "--label", "label", "--delimiter", "1"], {}, 2, ["got '1'"]),
    ("wrong delimiter", ["separable", "{D}/tiny.csv", "--label", "label", "--delimiter", ";"], {}, 2, ["tiny.csv, line 1: with the delimiter ';' the header is one column", "seems to use ','", "--delimiter ','"]),
    ("separable unknown label", ["separable", "{D}/tiny.csv", "--label", "kind"], {}, 2, ["column 'kind' not in tiny.csv; columns: a, b, label"]),
    ("separable unknown feature", ["separable", "{D}/tiny.csv", "--label", "label", "--features", "z"], {}, 2, ["column 'z' not in"]),
    ("separable missing class", ["separable", "{D}/tiny.csv", "--label", "label", "--classes", "1", "7"], {}, 2, ["class(es) [7.0] not found"]),
    ("separable same classes", ["separable", "{D}/tiny.csv", "--label", "label", "--classes", "1", "1"], {}, 2, ["two distinct classes"]),
    ("separable missing file", ["separable", "{D}/none.csv", "--label", "label"], {}, 2, ["none.csv: no such data file"]),
    # problem files
    ("missing problem", ["solve", "{D}/none.toml"], {}, 2, ["none.toml: no such problem file"]),
    ("toml syntax", ["solve", "{P}"], {"tiny.toml": _sub(TOML, 'kind = "svm"', 'kind = "svm')}, 2, ["line 6, column 12: TOML syntax error"]),
    ("no name", ["solve", "{P}"], {"tiny.toml": _sub(TOML, 'name = "tiny"\n', "")}, 2, ["missing required key(s) in [top level]: name"]),
    ("unknown top key", ["solve", "{P}"], {"tiny.toml": "colour = 1\n" + TOML}, 2, ["unknown key 'colour'"]),
    ("unknown model key", ["solve", "{P}"], {"tiny.toml": TOML + "kernal = 'rbf'\n"}, 2, ["unknown key 'model.kernal'"]),
    ("unknown kind", ["solve", "{P}"], {"tiny.toml": _sub(TOML, '"svm"', '"svn"')}, 2, ["unknown model kind 'svn'"]),
    ("no kind", ["solve", "{P}"], {"tiny.toml": _sub(TOML, 'kind = "svm"\n', "")}, 2, ["[model] needs 'kind'"]),
    ("C string", ["solve", "{P}"], {"tiny.toml": _sub(TOML, "C = 1.0", 'C = "1"')}, 2, ["key 'model.C' must be a number; got str '1'"]),
    ("C zero", ["solve", "{P}"], {"tiny.toml": _sub(TOML, "C = 1.0", "C = 0")}, 2, ["C must be > 0"]),
    ("C negative", ["solve", "{P}"], {"tiny.toml": _sub(TOML, "C = 1.0", "C = -1.0")}, 2, ["C must be > 0", "C=-1.0"]),
    ("kernel unknown", ["solve", "{P}"], {"tiny.toml": TOML + 'kernel = "rbff"\n'}, 2, ["rbff"]),
    ("gamma negative", ["solve", "{P}"], {"tiny.toml": TOML + 'kernel = "rbf"\ngamma = -1.0\n'}, 2, ["gamma"]),
    ("intercept string", ["solve", "{P}"], {"tiny.toml": TOML + 'intercept = "no"\n'}, 2, ["'model.intercept' must be a boolean; got str 'no'"]),
    ("degree float", ["solve", "{P}"], {"tiny.toml": TOML + "degree = 2.5\n"}, 2, ["'model.degree' must be an integer"]),
    ("run tol zero", ["solve", "{P}"], {"tiny.toml": TOML + "[run]\ntol = 0\n"}, 2, ["'run.tol' must be > 0"]),
    ("run methods string", ["solve", "{P}"], {"tiny.toml": TOML + '[run]\nmethods = "smo"\n'}, 2, ["'run.methods' must be a list of strings"]),
    ("run option typo", ["solve", "{P}"], {"tiny.toml": TOML + '[run]\nmethods = ["exact", "smo"]\n[run.options.smo]\nmax_iters = 5\n'}, 2, ["unknown option(s) ['max_iters']"]),
    ("max_gap stray", ["solve", "{P}"], {"tiny.toml": TOML + "[expect]\nmax_gap = { smo = 1e-3 }\n"}, 2, ["'expect.max_gap' names method(s) ['smo']"]),
    ("expect unknown", ["solve", "{P}"], {"tiny.toml": TOML + "[expect]\nobjectiv = 1.0\n"}, 2, ["unknown key 'expect.objectiv'"]),
    ("data path and generator", ["solve", "{P}"], {"tiny.toml": TOML.replace("[model]", "[data.generator]\nkind = \"blobs\"\n[model]")}, 2, ["exactly one of 'path'"]),
    ("no label", ["solve", "{P}"], {"tiny.toml": _sub(TOML, 'label = "label"\n', "")}, 2, ["[data] needs 'label'"]),
    ("label not a column", ["solve", "{P}"], {"tiny.toml": _sub(TOML, 'label = "label"', 'label = "y"')}, 2, ["column 'y' not in tiny.csv"]),
    ("toml delimiter bad", ["solve", "{P}"], {"tiny.toml": _sub(TOML, 'label = "label"', 'label = "label"\ndelimiter = "ab"')}, 2, ["tiny.toml, line", "delimiter must be one character"]),
    ("erm unknown loss", ["solve", "{P}"], {"tiny.toml": _sub(ERM, '"logistic"', '"logit"')}, 2, ["logit"]),
    ("erm unknown penalty", ["solve", "{P}"], {"tiny.toml": ERM + 'penalty = "l3"\n'}, 2, ["l3"]),
    ("erm negative lam", ["solve", "{P}"], {"tiny.toml": ERM + "lam = -1.0\n"}, 2, ["lam"]),
    ("erm lp without p", ["solve", "{P}"], {"tiny.toml": ERM + 'penalty = "lp"\np = 0.5\n'}, 2, ["p must be a finite number >= 1", "p=0.5"]),
    # generators
    ("generator unknown", ["solve", "{P}"], {"tiny.toml": _sub(GEN, '"blobs"', '"blobz"')}, 2, ["unknown generator 'blobz'"]),
    ("generator n float", ["solve", "{P}"], {"tiny.toml": _sub(GEN, "n = 40", "n = 1e9")}, 2, ["'data.generator.n' must be an integer; got float 1000000000.0"]),
    ("generator n huge", ["solve", "{P}"], {"tiny.toml": _sub(GEN, "n = 40", "n = 1000000000")}, 2, ["n=1000000000, d=2 would allocate about 24 GB", "limited to 1 GiB"]),
    ("generator d huge", ["solve", "{P}"], {"tiny.toml": _sub(GEN, "n = 40", "n = 100000\nd = 100000")}, 2, ["would allocate about 80 GB"]),
    ("generator n zero", ["solve", "{P}"], {"tiny.toml": _sub(GEN, "n = 40", "n = 0")}, 2, ["'data.generator.n' must be >= 1; got 0"]),
    ("generator d zero", ["solve", "{P}"], {"tiny.toml": _sub(GEN, "n = 40", "n = 40\nd = 0")}, 2, ["'data.generator.d' must be >= 1"]),
    ("generator n one", ["solve", "{P}"], {"tiny.toml": _sub(GEN, "n = 40", "n = 1")}, 2, ["needs n >= 2; got n=1"]),
    ("generator unknown key", ["solve", "{P}"], {"tiny.toml": _sub(GEN, "n = 40", "n = 40\nsize = 3")}, 2, ["unknown key 'data.generator.size'"]),
    ("generator with label", ["solve", "{P}"], {"tiny.toml": _sub(GEN, "n = 40", "n = 40\n[data]\nlabel = \"y\"")}, 2, ["label"]),
    # CSV cells
    ("csv nan cell", ["solve", "{P}"], {"tiny.csv": "a,b,label\n0,0,-1\n1,NaN,-1\n0,3,1\n"}, 2, ["tiny.csv, line 3, column 'b': missing value ('NaN')"]),
    ("csv inf cell", ["solve", "{P}"], {"tiny.csv": "a,b,label\n0,0,-1\n1,2,-1\ninf,3,1\n"}, 2, ["line 4, column 'a': infinite value ('inf')"]),
    ("csv text cell", ["solve", "{P}"], {"tiny.csv": "a,b,label\n0,0,-1\n1,0,-1\n0,3x,1\n"}, 2, ["line 4, column 'b': non-numeric value '3x'"]),
    ("csv text cell late column", ["solve", "{P}"], {"tiny.csv": "a,b,label\n0,0,-1\n1,0,-1\n0,3,1\n2,z,1\n"}, 2, ["line 5, column 'b': non-numeric value 'z'"]),
    ("csv empty cell", ["solve", "{P}"], {"tiny.csv": "a,b,label\n0,,-1\n1,0,-1\n0,3,1\n"}, 2, ["line 2, column 'b': missing value"]),
    ("csv ragged short", ["solve", "{P}"], {"tiny.csv": "a,b,label\n0,0,-1\n1,-1\n0,3,1\n"}, 2, ["line 3: 2 cells, but the header has 3 columns"]),
    ("csv ragged long", ["solve", "{P}"], {"tiny.csv": "a,b,label\n0,0,-1\n1,0,-1,7\n0,3,1\n"}, 2, ["line 3: 4 cells"]),
    ("csv blank middle line", ["solve", "{P}"], {"tiny.csv": "a,b,label\n0,0,-1\n\n0,3,1\n"}, 2, ["line 3: 0 cells"]),
    ("csv header only", ["solve", "{P}"], {"tiny.csv": "a,b,label\n"}, 2, ["needs a header line and at least one data row"]),
    ("csv empty", ["solve", "{P}"], {"tiny.csv": ""}, 2, ["needs a header line"]),
    ("csv duplicate column", ["solve", "{P}"], {"tiny.csv": "a,a,label\n0,0,-1\n0,3,1\n"}, 2, ["line 1: duplicated column name(s) ['a']"]),
    ("csv one class", ["solve", "{P}"], {"tiny.csv": "a,b,label\n0,0,1\n1,0,1\n"}, 2, ["has one class only"]),
    ("csv three classes", ["solve", "{P}"], {"tiny.csv": "a,b,label\n0,0,1\n1,0,2\n2,2,3\n"}, 2, ["has 3 classes"]),
    ("csv missing label", ["solve", "{P}"], {"tiny.csv": "a,b,label\n0,0,x\n1,0,\n2,2,y\n"}, 2, ["line 3, column 'label': missing label"]),
    ("csv binary", ["solve", "{P}"], {"tiny.csv": "a,b,label\n0,0\x00,1\n"}, 2, ["NUL bytes"]),
    ("csv quoted text", ["solve", "{P}"], {"tiny.csv": 'a,b,label\n0,0,-1\n"1,5",0,-1\n0,3,1\n'}, 2, ["line 3, column 'a': non-numeric value '1,5'"]),
    ("csv latin-1", ["solve", "{P}"], {"tiny.csv": b"a,b,label\n0,\xe9,-1\n"}, 2, ["cannot read the CSV file"]),
    # infeasible and solver failures
    ("hard margin overlap", ["solve", "{P}"], {"tiny.toml": _sub(TOML, "C = 1.0", "C = inf"), "tiny.csv": "a,b,label\n0,0,-1\n2,2,-1\n2,0,1\n0,2,1\n"}, 3, ["the hard-margin SVM is infeasible"]),
    ("solver budget", ["solve", "{P}"], {"tiny.toml": TOML + "[run]\nsolver_options = { max_iter = 1 }\n"}, 4, ["user_limit"]),
]


def _setup(tmp_path, files):
    contents = {"tiny.csv": CSV, "tiny.toml": TOML, **files}
    ref = tmp_path / "_ref.json"
    for name, text in contents.items():
        if text in ("REF", "REFSHA", "NEWER", "OTHERDATA"):
            data = json.loads(REFERENCE.read_text())
            if text == "NEWER":
                data["format_version"] = 99
            if text in ("OTHERDATA", "REFSHA"):
                data["provenance"]["data_sha256"] = ("0" if text == "OTHERDATA" else "1") * 64
            text = json.dumps(data)
        path = tmp_path / name
        path.write_bytes(text if isinstance(text, bytes) else text.encode())
    assert not ref.exists()
    return sorted(os.listdir(tmp_path))


REFERENCE = Path(__file__).parent / "data" / "solution_v1.json"


def test_the_table_has_at_least_70_cases():
    assert len(CASES) >= 70 and len({c[0] for c in CASES}) == len(CASES)


@pytest.mark.parametrize("name, argv, files, code, fragments", CASES, ids=[c[0] for c in CASES])
def test_bad_cli_input(tmp_path, capsys, name, argv, files, code, fragments):
    before = _setup(tmp_path, files)
    args = [a.format(P=tmp_path / "tiny.toml", D=tmp_path) for a in argv]
    try:
        got = main(args)
    except SystemExit as exc:          # argparse's own usage errors
        got = exc.code
    err = capsys.readouterr().err
    assert got == code, (got, err)
    assert err.startswith("convexlearn: error: ") and "Traceback" not in err, err
    for fragment in fragments:
        assert fragment in err, (fragment, err)
    assert sorted(os.listdir(tmp_path)) == before          # nothing written, no temporary


def test_argparse_usage_errors_exit_2(capsys):
    for argv in (["solve"], ["diff", "a.json"], ["separable"], ["solve", "f", "--tol", "x"],
                 ["verify", "m.model"], ["frobnicate"]):
        with pytest.raises(SystemExit) as exc:
            main(argv)
        assert exc.value.code == 2
        assert "error:" in capsys.readouterr().err
    # --label is optional since an svmlight file carries its labels: a CSV file without
    # it (here a missing one) is still bad input
    assert main(["separable", "x.csv"]) == 2
    assert "error:" in capsys.readouterr().err


# ------------------------------------------------------------------------------ fuzzing
_cell = st.one_of(st.floats(allow_nan=True, allow_infinity=True).map(repr),
                  st.integers(-10**6, 10**6).map(str), st.text(max_size=6),
                  st.sampled_from(["", " 1 ", "1e5", "nan", "-inf", "1_0", '"2"', "0x1"]))


@settings(max_examples=100, deadline=None, suppress_health_check=list(HealthCheck))
@given(rows=st.lists(st.lists(_cell, min_size=1, max_size=4), min_size=0, max_size=6),
       header=st.lists(st.text(max_size=4), min_size=1, max_size=4),
       delimiter=st.sampled_from([",", ";", "\t"]),
       ending=st.sampled_from(["\n", "\r\n", "\r"]))
def test_fuzzed_csv_reader_never_raises_anything_else(tmp_path_factory, rows, header,
                                                      delimiter, ending):
    """Any text: a Dataset-ready array or a ProblemFileError; where numpy's fast path
    answers, the cell-by-cell reader gives the same floats."""
    from convexlearn.app.csvfile import CsvFile
    path = tmp_path_factory.mktemp("csv") / "f.csv"
    text = ending.join(delimiter.join(r) for r in [header] + rows)
    path.write_bytes(text.encode("utf-8", "surrogatepass") if "\ud800" not in text
                     else b"\xff")
    try:
        table = CsvFile(path, delimiter)
        names = table.header
        X = table.numeric(names)
        fast = table._numeric_fast(names)
        slow = table._numeric_slow(names)
        assert (X == slow).all()
        assert fast is None or (fast == slow).all()
        for name in names:
            table.labels(name)
    except ProblemFileError:
        pass


_toml_values = st.one_of(st.integers(), st.floats(), st.text(max_size=5), st.booleans(),
                         st.lists(st.integers(), max_size=3))


@settings(max_examples=80, deadline=None, suppress_health_check=list(HealthCheck))
@given(model=st.dictionaries(st.sampled_from(["kind", "C", "kernel", "gamma", "loss", "lam",
                                              "penalty", "p", "homogeneous", "intercept",
                                              "degree", "junk"]), _toml_values, max_size=5),
       data=st.dictionaries(st.sampled_from(["path", "label", "classes", "features",
                                             "standardize", "delimiter"]), _toml_values,
                            max_size=4),
       garbage=st.text(max_size=20))
def test_fuzzed_problem_files_never_raise_anything_else(tmp_path_factory, model, data,
                                                        garbage):
    """Random tables and random text: load_problem raises ConvexLearnError or succeeds."""
    from convexlearn.app.catalogue import load_problem
    directory = tmp_path_factory.mktemp("toml")
    (directory / "tiny.csv").write_text(CSV)

    def value(v):
        return json.dumps(v) if not isinstance(v, float) or v == v and abs(v) != float("inf") \
            else ("nan" if v != v else ("inf" if v > 0 else "-inf"))
    lines = ['name = "f"', "[data]", *(f"{k} = {value(v)}" for k, v in data.items()),
             "[model]", *(f"{k} = {value(v)}" for k, v in model.items())]
    for text in ("\n".join(lines), "\n".join(lines) + "\n" + garbage, garbage):
        path = directory / "p.toml"
        path.write_text(text, encoding="utf-8", errors="surrogatepass")
        try:
            load_problem(path)
        except ConvexLearnError:
            pass


# ------------------------------------------------------------------ kill and round trip
BIG = """name = "big"
[data.generator]
kind = "blobs"
n = 3000
d = 5
separation = 1.0
[model]
kind = "svm"
[run]
methods = ["exact", "dcd"]
"""


@pytest.mark.skipif(sys.platform == "win32", reason="SIGKILL")
def test_sigkill_during_a_large_json_leaves_no_partial_and_no_temporary(tmp_path):
    """Killed at staggered moments after the report is printed (while the JSON of ~3000
    samples x 2 solutions is encoded and written): the output is absent or complete."""
    (tmp_path / "big.toml").write_text(BIG)
    out = tmp_path / "out.json"
    for delay in (0.0, 0.1):
        proc = subprocess.Popen([sys.executable, "-m", "convexlearn", "solve", "big.toml",
                                 "--json", "out.json"], cwd=tmp_path, stdout=subprocess.PIPE,
                                stderr=subprocess.DEVNULL, text=True,
                                env={**os.environ, "PYTHONPATH": str(Path(__file__).parents[1])})
        for line in proc.stdout:                      # the report is printed before writing
            if line.startswith("method"):
                break
        time.sleep(delay)
        proc.send_signal(signal.SIGKILL)
        proc.wait()
        left = sorted(os.listdir(tmp_path))
        assert left in (["big.toml"], ["big.toml", "out.json"]), left
        if out.exists():
            assert json.loads(out.read_text())["format"] == "convexlearn.run"
            out.unlink()


def test_save_then_diff_and_against(tmp_path, capsys):
    (tmp_path / "tiny.csv").write_text(CSV)
    problem = tmp_path / "tiny.toml"
    problem.write_text(TOML + '[run]\nmethods = ["exact-dual", "smo"]\n')
    ref = tmp_path / "ref.json"
    assert main(["solve", str(problem), "--json", str(ref), "--quiet"]) == 0
    record = json.loads(ref.read_text())
    exact = record["solutions"]["exact-dual"]
    assert exact["w"] and exact["alpha"] and exact["support"] == [0, 2] and "b" in exact
    assert main(["diff", str(ref), str(ref)]) == 0
    assert "within tolerance" in capsys.readouterr().out
    assert main(["solve", str(problem), "--against", str(ref)]) == 0
    assert "against" in capsys.readouterr().out
    # A perturbed answer: beyond the tolerance, exit 1, naming the distance.
    record["solutions"]["smo"]["w"][0] += 1e-3
    record["solutions"]["smo"]["objective"] *= 1.01
    (tmp_path / "other.json").write_text(json.dumps(record))
    assert main(["diff", str(ref), str(tmp_path / "other.json")]) == 1
    out = capsys.readouterr().out
    assert "DIFF smo" in out and "||w - w*||" in out and "BEYOND tolerance" in out
    assert main(["diff", str(ref), str(tmp_path / "other.json"), "--tol", "0.1"]) == 0
    capsys.readouterr()
    # -: the JSON record on stdout, the report on stderr
    assert main(["solve", str(problem), "--json", "-", "--methods", "exact"]) == 0
    captured = capsys.readouterr()
    assert json.loads(captured.out)["reference"] == "exact"
    assert "expectations: " not in captured.out and "expectations: " in captured.err
    assert not (tmp_path / "-").exists()


@pytest.mark.skipif(sys.platform == "win32", reason="POSIX signals")
@pytest.mark.parametrize("sig", [signal.SIGINT, signal.SIGTERM])
def test_interrupt_stops_cleanly_with_130_and_no_file(tmp_path, sig):
    """Ctrl-C while a solver runs, after the exact reference was computed and before any
    output was written: exit 130, no output, no temporary. The subgradient method (a
    Python loop of 10^7 iterations) is certain to be running when the signal lands, on
    any machine; an exact solve of this size now ends within the test's reaction time."""
    (tmp_path / "big.toml").write_text(
        BIG.replace('"exact", "dcd"', '"exact", "subgradient"').replace("d = 5", "d = 2")
        + "[run.options.subgradient]\nmax_iter = 10000000\n")
    proc = subprocess.Popen([sys.executable, "-m", "convexlearn", "solve", "big.toml",
                             "--json", "out.json", "--plot", "out.png", "-v"], cwd=tmp_path,
                            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True,
                            env={**os.environ, "PYTHONPATH": str(Path(__file__).parents[1])},
                            # a shell's background job inherits SIGINT ignored, and Python
                            # then installs no KeyboardInterrupt: the child gets the default
                            preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))
    for line in proc.stderr:                     # -v logs the start of each solve
        if "SVM.solve(method='subgradient')" in line:
            break
    time.sleep(0.2)
    proc.send_signal(sig)
    err = proc.stderr.read()
    assert proc.wait(timeout=60) == 130, err
    assert "interrupted (no output written)" in err and "Traceback" not in err
    assert sorted(os.listdir(tmp_path)) == ["big.toml"]


# ------------------------------------------------------------------ progress and logging
class _TTY:
    def __init__(self):
        self.text = ""

    def isatty(self):
        return True

    def write(self, s):
        self.text += s

    def flush(self):
        pass


def test_progress_shows_totals_and_elapsed_time_and_redraws_while_a_solver_is_silent(
        monkeypatch):
    from convexlearn.app.progress import Progress
    fake = _TTY()
    monkeypatch.setattr(sys, "stderr", fake)
    progress = Progress(False, delay=0.0, interval=0.02, total=18)
    progress.step = 3
    progress("iris: exact")
    first = fake.text
    time.sleep(0.15)                 # no call: the redraw thread keeps the line alive
    progress.close()
    assert "[3/18] iris: exact" in first and "s elapsed)" in first
    assert fake.text.count("[3/18] iris: exact") >= 3
    assert fake.text.endswith("\r\033[K")             # cleared on close


def test_verbose_logs_through_the_convexlearn_logger(caplog):
    import logging

    import numpy as np

    import convexlearn as cl
    from convexlearn.errors import ParameterError
    X = np.array([[0.0, 0.0], [-1.0, -1.0], [0.0, 3.0], [1.0, 4.0]])
    y = np.array([-1, -1, 1, 1])
    with caplog.at_level(logging.INFO, logger="convexlearn"):
        cl.SVM(X, y).solve("exact-dual")
        cl.ERM(X, y, loss="logistic").solve("newton")
    names = {r.name for r in caplog.records}
    assert {"convexlearn.svm", "convexlearn.erm"} <= names
    assert any("status optimal" in r.getMessage() for r in caplog.records)
    level = logging.getLogger("convexlearn").level
    cl.SVM(X, y).solve("exact-dual", verbose=2)        # sets the level for the call only
    assert logging.getLogger("convexlearn").level == level
    with pytest.raises(ParameterError, match="verbose must be a bool or 0, 1, 2; got 'yes'"):
        cl.SVM(X, y).solve(verbose="yes")


def test_non_numeric_X_names_the_bad_cells_not_the_first_ones():
    """It used to show the first three values (fine numbers) as the culprits."""
    import numpy as np

    import convexlearn as cl
    from convexlearn.errors import DataError
    X = np.array([["1", "2"], ["3", "4"], ["5", "4y"]])
    with pytest.raises(DataError, match=r"non-numeric value\(s\) '4y' at \(2, 1\)$"):
        cl.SVM(X, [1, -1, 1])


@pytest.mark.parametrize("ext, magic", [("svg", b"<?xml"), ("pdf", b"%PDF")])
def test_plot_writes_the_format_its_extension_names(tmp_path, capsys, ext, magic):
    pytest.importorskip("matplotlib")
    _setup(tmp_path, {})
    out = tmp_path / f"p.{ext}"
    assert main(["solve", str(tmp_path / "tiny.toml"), "--plot", str(out), "-q"]) == 0, \
        capsys.readouterr().err
    assert out.read_bytes().startswith(magic)


def test_list_check_json_and_delimiter(tmp_path, capsys):
    _setup(tmp_path, {"broken.toml": _sub(TOML, "C = 1.0", "C = 0"),
                      "semi.csv": CSV.replace(",", ";")})
    assert main(["list", str(tmp_path)]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert [line.split()[:2] for line in lines] == [["broken", "svm"], ["tiny", "svm"]]
    out = tmp_path / "check.json"
    assert main(["check", str(tmp_path), "--json", str(out), "-q"]) == 2
    record = json.loads(out.read_text())
    assert record["format"] == "convexlearn.check" and record["exit_code"] == 2
    assert [(Path(p["file"]).name, p["status"]) for p in record["problems"]] == \
        [("broken.toml", "error"), ("tiny.toml", "ok")]
    assert "C must be > 0" in record["problems"][0]["error"]
    assert record["problems"][1]["checks"][0]["passed"] is True
    capsys.readouterr()
    assert main(["separable", str(tmp_path / "semi.csv"), "--label", "label",
                 "--delimiter", ";"]) == 0
    assert "SEPARABLE by an affine hyperplane" in capsys.readouterr().out


def test_against_a_different_reference_exits_1(tmp_path, capsys):
    _setup(tmp_path, {})
    ref = tmp_path / "ref.json"
    assert main(["solve", str(tmp_path / "tiny.toml"), "--json", str(ref), "-q"]) == 0
    record = json.loads(ref.read_text())
    exact = record["solutions"][record["reference"]]
    exact["w"] = [v * 1.001 for v in exact["w"]]
    ref.write_text(json.dumps(record))
    capsys.readouterr()
    assert main(["solve", str(tmp_path / "tiny.toml"), "--against", str(ref)]) == 1
    out = capsys.readouterr().out
    assert "DIFF" in out and "beyond tolerance: ||w - w*||" in out


@pytest.mark.skipif(sys.platform == "win32", reason="POSIX signals")
def test_sigterm_while_outputs_are_staged_writes_nothing(tmp_path, capsys, monkeypatch):
    """SIGTERM arriving after the JSON is staged, before the plot is: exit 130, no file."""
    pytest.importorskip("matplotlib")
    import convexlearn.app.outputs as outputs
    _setup(tmp_path, {})
    staged = []

    class Terminated(outputs.StagedFile):
        def __init__(self, path, content):
            if staged:                                 # the JSON is staged: now SIGTERM
                os.kill(os.getpid(), signal.SIGTERM)   # the handler raises at once
            super().__init__(path, content)
            staged.append(self)
    monkeypatch.setattr(outputs, "StagedFile", Terminated)
    before = sorted(os.listdir(tmp_path))
    code = main(["solve", str(tmp_path / "tiny.toml"), "--json", str(tmp_path / "o.json"),
                 "--plot", str(tmp_path / "o.png"), "-q"])
    assert code == 130 and "interrupted" in capsys.readouterr().err
    assert sorted(os.listdir(tmp_path)) == before
    assert signal.getsignal(signal.SIGTERM) is not None      # handler restored by main
