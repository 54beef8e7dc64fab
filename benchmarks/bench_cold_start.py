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
in a fresh process (the first cross-validation, whose fits load the compiled code) and warm
(best of 5 in the same process).

Both sides run with OPENBLAS_NUM_THREADS=1 (the machine's 2 cores are shared).

Run: python benchmarks/bench_cold_start.py   (with --record, writes
benchmarks/results/cold_start.md)
"""

from __future__ import annotations

import json
import os
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


def _timed(func):
    start = time.perf_counter()
    out = func()
    return time.perf_counter() - start, out


def _warm(func, repeat=3):
    return min(_timed(func)[0] for _ in range(repeat))


def worker_script(side: str, folder: str) -> dict:
    """The timed script, run in a fresh process."""
    load = lambda name: np.load(os.path.join(folder, name))  # noqa: E731
    Xs, ys, Xl, yl = load("svm_X.npy"), load("svm_y.npy"), load("lasso_X.npy"), load("lasso_y.npy")
    out = {}
    if side == "ours":
        out["import"], cl = _timed(lambda: __import__("convexlearn"))
        svm = lambda: cl.SVM(Xs, ys, C=1.0, kernel="rbf").solve()  # noqa: E731
        lasso = lambda: cl.ERM(Xl, yl, loss="squared", penalty="l1",  # noqa: E731
                               lam=2 * ALPHA).solve()
    else:
        def imports():
            from sklearn.linear_model import Lasso
            from sklearn.svm import SVC
            return SVC, Lasso
        out["import"], (SVC, Lasso) = _timed(imports)
        svm = lambda: SVC().fit(Xs, ys)  # noqa: E731
        lasso = lambda: Lasso(alpha=ALPHA).fit(Xl, yl)  # noqa: E731
    out["svm_first"], first = _timed(svm)
    out["lasso_first"], first_lasso = _timed(lasso)
    out["svm_warm"], out["lasso_warm"] = _warm(svm), _warm(lasso)
    if side == "ours":
        out["certified"] = [first.status, first_lasso.status]
    return out


def worker_wine(side: str, folder: str) -> dict:
    """Five-fold cross-validation on wine (two classes): first in a fresh process, warm."""
    X, y = np.load(os.path.join(folder, "wine_X.npy")), np.load(os.path.join(folder, "wine_y.npy"))
    out = {}
    start = time.perf_counter()
    from sklearn.model_selection import cross_val_score
    if side == "ours":
        from convexlearn.estimators import KernelSVMClassifier as make
    else:
        from sklearn.svm import SVC as make
    out["import"] = time.perf_counter() - start
    cv = lambda: cross_val_score(make(), X, y, cv=5)  # noqa: E731
    out["first"], scores = _timed(cv)
    out["warm"] = _warm(cv, 5)
    out["accuracy"] = float(np.mean(scores))
    return out


def _run(mode: str, side: str, folder: str) -> dict:
    env = dict(os.environ, OPENBLAS_NUM_THREADS="1", PYTHONPATH=ROOT)
    start = time.perf_counter()
    proc = subprocess.run([sys.executable, os.path.abspath(__file__), "--worker", mode, side,
                           folder], capture_output=True, text=True, env=env, check=True)
    out = json.loads(proc.stdout.strip().splitlines()[-1])
    out["process"] = time.perf_counter() - start
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
    best = {key: _best(r) for key, r in runs.items()}
    o, s = best["script", "ours"], best["script", "sk"]
    keys = [("process", "whole process (wall, interpreter start included)"),
            ("import", "import"), ("svm_first", "first rbf SVM (n=2000)"),
            ("lasso_first", "first lasso (5000 x 50)"), ("svm_warm", "warm rbf SVM"),
            ("lasso_warm", "warm lasso")]
    rows = [[label, o[k], s[k], o[k] / s[k]] for k, label in keys]
    wo, ws = best["wine", "ours"], best["wine", "sk"]
    wine_rows = [[label, wo[k], ws[k], wo[k] / ws[k]] for k, label in
                 [("import", "import (sklearn.model_selection + the estimator)"),
                  ("first", "first 5-fold CV in the process"), ("warm", "warm 5-fold CV")]]
    body = (f"Best of {REPEAT} fresh processes per side (each figure its own minimum). "
            f"convexlearn's answers: {o['certified']} (certified at 1e-9 relative).\n\n"
            + markdown_table(["phase", "convexlearn (s)", "SVC + Lasso (s)", "ratio"], rows)
            + f"\n\nFive-fold cross-validation on wine, classes 1 and 2 (119 x 13): "
              f"accuracy {wo['accuracy']:.4f} (ours) vs {ws['accuracy']:.4f} (SVC).\n\n"
            + markdown_table(["phase", "KernelSVMClassifier (s)", "SVC (s)", "ratio"],
                             wine_rows))
    print(write_result("cold_start", "Cold start and small problems", body))


if __name__ == "__main__":
    if len(sys.argv) > 1 and sys.argv[1] == "--worker":
        mode, side, folder = sys.argv[2:5]
        func = worker_script if mode == "script" else worker_wine
        print(json.dumps(func(side, folder)))
    else:
        main()
