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
rather than load the compiled one, see convexlearn/solvers/kernel_svm/certified_smo.py;
best of ``WINE_REPEAT`` processes per side, the sides alternating) and warm: a CV takes
~10 ms, so each of those processes then runs both sides in turn (ours, SVC, ours, ...),
``WINE_WARM`` timed CVs each after one untimed CV of each, and the warm figure of a side
is its best over all of them; the median ratio of the pairs (each CV of ours over the SVC
CV next to it) is given beside it. A process runs at most 8 CVs of ours (40 fits), so its
small fits stay in SMO's numpy loop (the rent-or-buy rule loads the compiled loop after
~0.15 s of numpy loops), as in a script that cross-validates a few times.

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
WINE_REPEAT, WINE_WARM = 5, 6
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
    """Five-fold cross-validation on wine (two classes): the first of ``side`` in a fresh
    process, then both sides warm, in turn (module docstring)."""
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
    out["accuracy"] = float(np.mean(scores))
    from convexlearn.estimators import KernelSVMClassifier
    from sklearn.svm import SVC
    makes = {"ours": KernelSVMClassifier, "sk": SVC}
    order = ("ours", "sk") if side == "ours" else ("sk", "ours")
    for name in order:                       # one untimed CV of each side first
        cross_val_score(makes[name](), X, y, cv=5)
    pairs = []                               # (ours wall, ours CPU, SVC wall, SVC CPU)
    for k in range(WINE_WARM):
        one = {}
        for name in (order if k % 2 == 0 else order[::-1]):
            _timed(lambda: cross_val_score(makes[name](), X, y, cv=5), one, name)
        pairs.append((one["ours"], one["ours_cpu"], one["sk"], one["sk_cpu"]))
    out["warm_pairs"] = pairs
    # (untimed) the status of each fold's fit of ours: every one certified
    from sklearn.model_selection import cross_validate
    fitted = cross_validate(KernelSVMClassifier(), X, y, cv=5, return_estimator=True)
    out["statuses"] = [est.solution_.status for est in fitted["estimator"]]
    return out


def _wine_warm(runs: dict) -> tuple[dict, dict, float, float, int]:
    """Best warm wall and CPU of each side over every wine process (both kinds), and the
    median wall and CPU ratio of the pairs."""
    pairs = np.array([p for key in (("wine", "ours"), ("wine", "sk")) for r in runs[key]
                      for p in r["warm_pairs"]])
    ours = {"warm": float(pairs[:, 0].min()), "warm_cpu": float(pairs[:, 1].min())}
    sk = {"warm": float(pairs[:, 2].min()), "warm_cpu": float(pairs[:, 3].min())}
    return (ours, sk, float(np.median(pairs[:, 0] / pairs[:, 2])),
            float(np.median(pairs[:, 1] / pairs[:, 3])), len(pairs))


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
            for k in runs[0] if k != "warm_pairs"}


def main():
    sys.path.insert(0, HERE)
    from _common import markdown_table, write_result
    with tempfile.TemporaryDirectory() as folder:
        _write_data(folder)
        runs = {(m, s): [] for m in ("script", "wine") for s in ("ours", "sk")}
        for k in range(max(REPEAT, WINE_REPEAT)):
            for key in runs:
                if k < (REPEAT if key[0] == "script" else WINE_REPEAT):
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
    warm_o, warm_s, median_wall, median_cpu, n_pairs = _wine_warm(runs)
    wo.update(warm_o)
    ws.update(warm_s)
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
              f"accuracy {wo['accuracy']:.4f} (ours) vs {ws['accuracy']:.4f} (SVC); the "
              f"statuses of our five fits: {wo['statuses']} (certified at 1e-9 relative). Import "
              f"and first CV: best of {WINE_REPEAT} fresh processes per side; warm: best of "
              f"{n_pairs} CVs per side, both sides in turn in the same processes (median "
              f"ratio of those pairs: {median_wall:.3g} wall, {median_cpu:.3g} CPU).\n\n"
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
