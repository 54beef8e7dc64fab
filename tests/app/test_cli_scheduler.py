"""``convexlearn solve --scheduler ADDRESS`` against a real dask LocalCluster (one worker,
in this process: small and quick): the SVM problem files run the cascade, the ERM ones
their distributed methods, the answers equal the in-memory ones, methods without a
distributed version are refused before any work, and dask's log records go through the
``convexlearn`` loggers (silent by default, printed with -v)."""

from __future__ import annotations

import json
import logging

import numpy as np
import pytest

distributed = pytest.importorskip("dask.distributed")

from convexlearn.app.cli import main  # noqa: E402
from convexlearn.app.distributed import DASK_LOGGERS, dask_session  # noqa: E402
from convexlearn.app.progress import configure_logging  # noqa: E402

SVM_TOML = """name = "tiny-rbf"
[data]
path = "tiny.csv"
label = "label"
[model]
kind = "svm"
kernel = "rbf"
gamma = 0.5
C = 2.0
[run]
methods = ["exact-dual", "smo"]
"""
ERM_TOML = """name = "tiny-logistic"
[data]
path = "tiny.csv"
label = "label"
[model]
kind = "erm"
loss = "logistic"
lam = 0.05
[run]
methods = ["exact", "newton", "cd"]
"""


@pytest.fixture(scope="module")
def cluster():
    with distributed.LocalCluster(n_workers=1, threads_per_worker=1, processes=False,
                                  dashboard_address=":0") as local:
        yield local.scheduler_address


def _write(tmp_path, toml):
    rng = np.random.default_rng(3)
    X = rng.standard_normal((40, 2))
    y = np.where(X[:, 0] + 0.5 * rng.standard_normal(40) > 0, "b", "a")
    rows = "".join(f"{float(a)!r},{float(b)!r},{c}\n" for (a, b), c in zip(X, y))
    (tmp_path / "tiny.csv").write_text("x0,x1,label\n" + rows)
    (tmp_path / "tiny.toml").write_text(toml)
    return tmp_path / "tiny.toml"


def _solve(path, *extra):
    out = path.parent / "out.json"
    if out.exists():
        out.unlink()
    code = main(["solve", str(path), "-q", "--json", str(out), *map(str, extra)])
    return code, (json.loads(out.read_text()) if out.exists() else None)


@pytest.mark.parametrize("toml, expected", [(SVM_TOML, ["exact"]),
                                            (ERM_TOML, ["exact", "newton"])])
def test_problem_files_run_their_distributed_methods(tmp_path, cluster, capfd, toml,
                                                     expected):
    path = _write(tmp_path, toml)
    code, local = _solve(path)
    assert code == 0
    code, remote = _solve(path, "--scheduler", cluster)
    err = capfd.readouterr().err
    assert code == 0, err
    assert err == ""                        # dask's records stay quiet without -v
    # the file's methods without a distributed version (exact-dual, smo; cd) are left out
    assert [row["method"] for row in remote["results"]] == expected
    assert all(row["status"] == "optimal" for row in remote["results"])
    ref = remote["solutions"]["exact"]["provenance"]["route"]
    assert ref in (("cascade",) if "svm" in toml else ("newton", "prox"))
    # the same optimum as in memory, certified at 1e-9 (relative)
    F, F_local = remote["facts"]["objective"], local["facts"]["objective"]
    assert abs(F - F_local) <= 1e-8 * abs(F_local)


def test_scheduler_accepts_the_cascade_by_name_and_refuses_the_rest_before_work(
        tmp_path, cluster, capsys):
    path = _write(tmp_path, SVM_TOML)
    code, record = _solve(path, "--scheduler", cluster, "--methods", "cascade")
    assert code == 0 and [r["method"] for r in record["results"]] == ["cascade"]
    capsys.readouterr()
    code, record = _solve(path, "--scheduler", cluster, "--methods", "cascade", "smo")
    err = capsys.readouterr().err
    assert code == 2 and record is None
    assert "unknown svm method(s) 'smo' on a dask array (--scheduler); valid: exact, " \
           "cascade" in err


def test_dask_records_go_through_the_convexlearn_logger(cluster, capfd):
    before = {name: logging.getLogger(name).handlers[:] for name in DASK_LOGGERS}
    with dask_session(cluster):
        logging.getLogger("distributed.scheduler").warning("dask-record-one")
        configure_logging(1)                    # what -v does
        try:
            logging.getLogger("distributed.scheduler").warning("dask-record-two")
        finally:
            configure_logging(0)
    err = capfd.readouterr().err
    assert "dask-record-one" not in err          # quiet by default
    assert "dask-record-two" in err              # printed with -v
    assert {name: logging.getLogger(name).handlers for name in DASK_LOGGERS} == before


def test_a_kind_without_a_distributed_method_says_so(cluster, capsys):
    from pathlib import Path
    path = Path(__file__).resolve().parents[2] / "problems" / "iris_separability_4d.toml"
    assert main(["solve", str(path), "-q", "--scheduler", cluster]) == 2
    assert "model kind 'halfspace' has no distributed method: run it without --scheduler" \
        in capsys.readouterr().err


def test_plot_with_scheduler_is_refused_before_connecting(capsys):
    from pathlib import Path
    path = Path(__file__).resolve().parents[2] / "problems" / "iris_rbf.toml"
    assert main(["solve", str(path), "--scheduler", "tcp://192.0.2.1:1", "--plot",
                 "out.png"]) == 2
    assert "--plot draws from the data in memory" in capsys.readouterr().err
