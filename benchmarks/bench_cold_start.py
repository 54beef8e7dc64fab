"""Cold start: a fresh process that imports the library and solves one problem of each kind.

The script (issue 24): import, one rbf SVM (C=1, gamma="scale", n=2000, make_classification
(2000, 10, random_state=0) standardized) and one lasso (5000 x 50, 5 informative features,
lam = 2 alpha, alpha = 0.02 in scikit-learn's form: F = 2 F_Lasso), against the same script
with scikit-learn's ``SVC()`` and ``Lasso(alpha=0.02)`` at their defaults (uncertified;
ours is certified at 1e-9 relative). Each side runs in a fresh ``python`` process that
loads the data from .npy files written beforehand (so that neither side pays for the
generator); the process's wall time (interpreter start included) is measured from the
parent, and inside it the import, the first call of each solve (for convexlearn: loading
numba's compiled loops from their disk cache) and the warm time (best of 3 further calls).
Best of ``REPEAT`` processes per side, the sides alternating.

Small problems (issue 24): five-fold cross-validation (``cross_val_score``) on wine's
classes 1 and 2 (119 x 13, standardized) with ``KernelSVMClassifier()`` against ``SVC()``,
in a fresh process (the first cross-validation; its small problems run SMO's numpy loop
rather than load the compiled one, see convexlearn/solvers/kernel_svm/certified_smo.py) and warm
(best of 5 in the same process).

A fresh install: one process with numba's cache empty (NUMBA_CACHE_DIR a new directory)
times the first rbf SVM, which compiles the SMO loop.

Every phase is timed in wall and CPU seconds; the whole process's CPU is its user + system
time (getrusage of the child). Both sides run with OPENBLAS_NUM_THREADS=1 (the machine's 2
cores are shared).

Run: python benchmarks/bench_cold_start.py   (with --record, writes
benchmarks/results/cold_start.md)
"""

from __future__ import annotations

import json
import os
import resource
import subprocess
import sys
import tempfile
import time

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
REPEAT = 3
ALPHA = 0.02


def _write_data(folder: str) -> None:
    from sklearn.datasets import load_wine, make_classification, make_regression
    from sklearn.preprocessing import StandardScaler
    X, y = make_classification(2000, 10, random_state=0)
    np.save(os.path.join(folder, "svm_X.npy"), StandardScaler().fit_transform(X))
    np.save(os.path.join(folder, "svm_y.npy"), y)
    X, y = make_regression(5000, 50, n_informative=5, noise=1.0, random_state=0)
    np.save(os.path.join(folder, "lasso_X.npy"), X)
    np.save(os.path.join(folder, "lasso_y.npy"), y)
    X, y = load_wine(return_X_y=True)
    keep = y > 0
    np.save(os.path.join(folder, "wine_X.npy"), StandardScaler().fit_transform(X[keep]))
    np.save(os.path.join(folder, "wine_y.npy"), y[keep])


def _timed(func, out=None, key=None):
    """Wall seconds and the result of func(); with ``out``, also stores wall and CPU seconds
    (the process's, less sensitive to the other processes of a shared machine) under
    ``key`` and ``key + "_cpu"``."""
    start, cpu = time.perf_counter(), time.process_time()
    result = func()
    wall = time.perf_counter() - start
    if out is not None:
        out[key], out[key + "_cpu"] = wall, time.process_time() - cpu
    return wall, result


def _warm(func, out, key, repeat=3):
    runs = []
    for _ in range(repeat):
        one = {}
        _timed(func, one, key)
        runs.append(one)
    out[key] = min(r[key] for r in runs)
    out[key + "_cpu"] = min(r[key + "_cpu"] for r in runs)


def worker_script(side: str, folder: str) -> dict:
    """The timed script, run in a fresh process."""
    load = lambda name: np.load(os.path.join(folder, name))  # noqa: E731
    Xs, ys, Xl, yl = load("svm_X.npy"), load("svm_y.npy"), load("lasso_X.npy"), load("lasso_y.npy")
    out = {}
    if side == "ours":
        _, cl = _timed(lambda: __import__("convexlearn"), out, "import")
        svm = lambda: cl.SVM(Xs, ys, C=1.0, kernel="rbf").solve()  # noqa: E731
        lasso = lambda: cl.ERM(Xl, yl, loss="squared", penalty="l1",  # noqa: E731
                               lam=2 * ALPHA).solve()
    else:
        def imports():
            from sklearn.linear_model import Lasso
            from sklearn.svm import SVC
            return SVC, Lasso
        _, (SVC, Lasso) = _timed(imports, out, "import")
        svm = lambda: SVC().fit(Xs, ys)  # noqa: E731
        lasso = lambda: Lasso(alpha=ALPHA).fit(Xl, yl)  # noqa: E731
    _, first = _timed(svm, out, "svm_first")
    _, first_lasso = _timed(lasso, out, "lasso_first")
    _warm(svm, out, "svm_warm")
    _warm(lasso, out, "lasso_warm")
    if side == "ours":
        out["certified"] = [first.status, first_lasso.status]
    return out


def worker_wine(side: str, folder: str) -> dict:
    """Five-fold cross-validation on wine (two classes): first in a fresh process, warm."""
    X, y = np.load(os.path.join(folder, "wine_X.npy")), np.load(os.path.join(folder, "wine_y.npy"))
    out = {}

    def imports():
        from sklearn.model_selection import cross_val_score
        if side == "ours":
            from convexlearn.estimators import KernelSVMClassifier as make
        else:
            from sklearn.svm import SVC as make
        return cross_val_score, make
    _, (cross_val_score, make) = _timed(imports, out, "import")
    cv = lambda: cross_val_score(make(), X, y, cv=5)  # noqa: E731
    _, scores = _timed(cv, out, "first")
    _warm(cv, out, "warm", 5)
    out["accuracy"] = float(np.mean(scores))
    return out


def worker_compile(side: str, folder: str) -> dict:
    """The first rbf SVM with numba's cache empty (NUMBA_CACHE_DIR set by the caller): what
    a fresh install pays once, compiling the SMO loop."""
    Xs, ys = np.load(os.path.join(folder, "svm_X.npy")), np.load(os.path.join(folder, "svm_y.npy"))
    out = {}
    _, cl = _timed(lambda: __import__("convexlearn"), out, "import")
    _timed(lambda: cl.SVM(Xs, ys, C=1.0, kernel="rbf").solve(), out, "svm_first")
    return out


def _run(mode: str, side: str, folder: str, **env_extra) -> dict:
    env = dict(os.environ, OPENBLAS_NUM_THREADS="1", PYTHONPATH=ROOT, **env_extra)
    start, before = time.perf_counter(), resource.getrusage(resource.RUSAGE_CHILDREN)
    proc = subprocess.run([sys.executable, os.path.abspath(__file__), "--worker", mode, side,
                           folder], capture_output=True, text=True, env=env, check=True)
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    out = json.loads(proc.stdout.strip().splitlines()[-1])
    out["process"] = time.perf_counter() - start
    out["process_cpu"] = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return out


def _best(runs: list[dict]) -> dict:
    return {k: (min(r[k] for r in runs) if isinstance(runs[0][k], float) else runs[0][k])
            for k in runs[0]}


def main():
    sys.path.insert(0, HERE)
    from _common import markdown_table, write_result
    with tempfile.TemporaryDirectory() as folder:
        _write_data(folder)
        runs = {(m, s): [] for m in ("script", "wine") for s in ("ours", "sk")}
        for _ in range(REPEAT):
            for key in runs:
                runs[key].append(_run(*key, folder))
        with tempfile.TemporaryDirectory() as cache:
            compiled = _run("compile", "ours", folder, NUMBA_CACHE_DIR=cache)
    best = {key: _best(r) for key, r in runs.items()}
    o, s = best["script", "ours"], best["script", "sk"]
    keys = [("process", "whole process (interpreter start included)"),
            ("import", "import"), ("svm_first", "first rbf SVM (n=2000)"),
            ("lasso_first", "first lasso (5000 x 50)"), ("svm_warm", "warm rbf SVM"),
            ("lasso_warm", "warm lasso")]
    header = ["phase", "convexlearn wall (s)", "SVC + Lasso wall (s)", "ratio",
              "convexlearn CPU (s)", "SVC + Lasso CPU (s)", "CPU ratio"]

    def rows_of(a, b, keys):
        return [[label, a[k], b[k], a[k] / b[k], a[k + "_cpu"], b[k + "_cpu"],
                 a[k + "_cpu"] / b[k + "_cpu"]] for k, label in keys]
    wo, ws = best["wine", "ours"], best["wine", "sk"]
    wine_keys = [("import", "import (sklearn.model_selection + the estimator)"),
                 ("first", "first 5-fold CV in the process"), ("warm", "warm 5-fold CV")]
    c = compiled
    body = (f"Best of {REPEAT} fresh processes per side (each figure its own minimum; CPU "
            f"is the process's user + system time, the figure least disturbed by the other "
            f"processes of the machine). convexlearn's answers: {o['certified']} (certified "
            f"at 1e-9 relative).\n\n"
            + markdown_table(header, rows_of(o, s, keys))
            + f"\n\nA fresh install (numba's cache empty, one process): the first rbf SVM "
              f"compiles the SMO loop, {c['svm_first']:.3g} s wall, {c['svm_first_cpu']:.3g} s "
              f"CPU (then cached on disk: the first call of a later process loads it, the "
              f"'first rbf SVM' row above).\n\n"
              f"Five-fold cross-validation on wine, classes 1 and 2 (119 x 13): "
              f"accuracy {wo['accuracy']:.4f} (ours) vs {ws['accuracy']:.4f} (SVC).\n\n"
            + markdown_table(["phase", "KernelSVMClassifier wall (s)", "SVC wall (s)", "ratio",
                              "KernelSVMClassifier CPU (s)", "SVC CPU (s)", "CPU ratio"],
                             rows_of(wo, ws, wine_keys)))
    print(write_result("cold_start", "Cold start and small problems", body))


if __name__ == "__main__":
    if len(sys.argv) > 1 and sys.argv[1] == "--worker":
        mode, side, folder = sys.argv[2:5]
        func = {"script": worker_script, "wine": worker_wine, "compile": worker_compile}[mode]
        print(json.dumps(func(side, folder)))
    else:
        main()
