"""How far are scikit-learn's defaults from the optimum? ``cl.verify`` on default fits.

Estimators at scikit-learn's defaults: SVC (rbf, C=1, tol 1e-3), LinearSVC (squared hinge,
C=1, tol 1e-4, its intercept penalized), LogisticRegression (lbfgs, C=1, tol 1e-4) and
Lasso (alpha=1, tol 1e-4), on the data sets scikit-learn ships (iris, wine, breast cancer,
digits; features standardized with StandardScaler; diabetes for Lasso) and on generated
ones (make_classification(2000, 20, random_state=0), make_regression(2000, 50, noise=10,
random_state=0)). Multiclass: SVC one-vs-one (one problem per pair), LinearSVC
one-vs-rest; LogisticRegression's multiclass default is multinomial (the softmax loss is
not in convexlearn), so it runs on the binary task "first class vs the rest" there; Lasso
on the classification sets regresses the class index (alpha=1 leaves no coefficient
there, one on digits: coordinate descent lands on that exactly, hence gap 0). Each fit is verified at tol 1e-6:
"gap" is the largest relative duality gap of the answer over its problems (SVM) or the
relative excess (F - F*)/|F*| (ERM); "KKT" the largest scaled residual (SVM) or relative
distance of 0 to dF (ERM); "support -/+" the optimum's support members missing from the
answer and the answer's extra ones (samples for the SVM and LinearSVC's active hinge,
features for Lasso); "flipped" training predictions that differ from the optimum's.

Speed line (issue 23): ``cl.verify`` of an rbf SVC fitted at its defaults on
make_classification(20000, 10, random_state=0), standardized, against SVC's fit time, in a
fresh process with OPENBLAS_NUM_THREADS=1: the first call of the process (loading numba's
compiled SMO from its disk cache, the fingerprint, the certified optimum, the answer's
KKT report), a second call after ``clear_cache()`` (the optimum solved again), and a call
that reuses the cached optimum (a second model verified against the same problem).

Run: python benchmarks/bench_verify.py [--record]   (--record writes results/verify.md)
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
import warnings

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)


def _datasets():
    import numpy as np
    from sklearn import datasets
    from sklearn.preprocessing import StandardScaler
    out = []
    for name, loader in (("iris", datasets.load_iris), ("wine", datasets.load_wine),
                         ("breast cancer", datasets.load_breast_cancer),
                         ("digits", datasets.load_digits)):
        X, y = loader(return_X_y=True)
        out.append((name, StandardScaler().fit_transform(X), y))
    X, y = datasets.make_classification(2000, 20, random_state=0)
    out.append(("make_classification 2000x20", StandardScaler().fit_transform(X), y))
    return out, np


def _regressions():
    from sklearn import datasets
    from sklearn.preprocessing import StandardScaler
    X, y = datasets.load_diabetes(return_X_y=True)
    out = [("diabetes", StandardScaler().fit_transform(X), y)]
    X, y = datasets.make_regression(2000, 50, noise=10.0, random_state=0)
    out.append(("make_regression 2000x50", X, y))
    return out


def _row(cl, est, X, y, data_name):
    start = time.perf_counter()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        est.fit(X, y)
    fit = time.perf_counter() - start
    start = time.perf_counter()
    rep = cl.verify(est, X, y, tol=1e-6)
    took = time.perf_counter() - start
    kkt = max(p.kkt_violation for p in rep.parts)
    flipped = "-" if rep.flipped is None else str(len(rep.flipped))
    return [type(est).__name__, data_name, f"{X.shape[0]}x{X.shape[1]}", len(rep.parts),
            "yes" if rep.passed else "no", f"{rep.gap:.1e}", f"{kkt:.1e}",
            f"{len(rep.violators)}", f"{len(rep.support_missing)} / {len(rep.support_extra)}",
            flipped, f"{fit:.3f}", f"{took:.3f}"]


def defaults_table():
    sys.path.insert(0, ROOT)
    import convexlearn as cl
    from sklearn.linear_model import Lasso, LogisticRegression
    from sklearn.svm import SVC, LinearSVC
    sets, np = _datasets()
    rows = []
    for name, X, y in sets:
        rows.append(_row(cl, SVC(), X, y, name))
        print(rows[-1], flush=True)
        rows.append(_row(cl, LinearSVC(), X, y, name))
        print(rows[-1], flush=True)
        classes = np.unique(y)
        yb = y if classes.size == 2 else (y == classes[0]).astype(int)
        label = name if classes.size == 2 else f"{name} (class {classes[0]} vs rest)"
        rows.append(_row(cl, LogisticRegression(), X, yb, label))
        print(rows[-1], flush=True)
        rows.append(_row(cl, Lasso(), X, y.astype(float), f"{name} (class index)"))
        print(rows[-1], flush=True)
    for name, X, y in _regressions():
        rows.append(_row(cl, Lasso(), X, y, name))
        print(rows[-1], flush=True)
    return rows


def worker_speed() -> dict:
    sys.path.insert(0, ROOT)
    import numpy as np
    from sklearn.datasets import make_classification
    from sklearn.svm import SVC
    X, y = make_classification(20000, 10, random_state=0)
    X = (X - X.mean(0)) / X.std(0)
    import convexlearn as cl
    start = time.perf_counter()
    svc = SVC().fit(X, y)
    fit = time.perf_counter() - start
    start = time.perf_counter()
    rep = cl.verify(svc, X, y)
    first = time.perf_counter() - start
    cl.verification.clear_cache()
    start = time.perf_counter()
    cl.verify(svc, X, y)
    second = time.perf_counter() - start
    start = time.perf_counter()
    cl.verify(svc, X, y)
    cached = time.perf_counter() - start
    return {"fit": fit, "first": first, "second": second, "cached": cached,
            "gap": rep.gap, "passed": rep.passed, "n_sv": int(np.sum(svc.n_support_)),
            "violators": len(rep.violators), "flipped": len(rep.flipped),
            "missing": len(rep.support_missing), "extra": len(rep.support_extra)}


def main(record: bool):
    sys.path.insert(0, HERE)
    from _common import markdown_table, write_result
    rows = defaults_table()
    table = markdown_table(["estimator", "data", "n x d", "problems", "passed", "gap", "KKT",
                            "violators", "support - / +", "flipped", "fit s", "verify s"],
                           rows)
    env = {**os.environ, "OPENBLAS_NUM_THREADS": "1", "OMP_NUM_THREADS": "1"}
    done = subprocess.run([sys.executable, __file__, "speed"], capture_output=True,
                          text=True, env=env, cwd=ROOT, check=True)
    s = json.loads(done.stdout.strip().splitlines()[-1])
    speed = (f"Speed line, rbf SVC at its defaults, n = 20000, d = 10 ({s['n_sv']} support "
             f"vectors): SVC fit {s['fit']:.2f} s; cl.verify first call of the process "
             f"{s['first']:.2f} s ({s['first'] / s['fit']:.2f}x the fit), again after "
             f"clear_cache() {s['second']:.2f} s ({s['second'] / s['fit']:.2f}x), with the "
             f"optimum cached {s['cached']:.2f} s ({s['cached'] / s['fit']:.2f}x); target "
             f"<= 1.5x. The default fit: relative gap {s['gap']:.1e}, {s['violators']} KKT "
             f"violators, support {s['missing']} missing / {s['extra']} extra, "
             f"{s['flipped']} training predictions flipped.")
    load = " / ".join(f"{x:.1f}" for x in os.getloadavg())
    body = (__doc__.split("Run:")[0].strip() + "\n\n" + table + "\n\n" + speed
            + f"\n\nLoad average at the end of the run (1 / 5 / 15 min): {load}.")
    print(table + "\n\n" + speed)
    if record:
        print(f"\nwritten to {write_result('verify', 'How far are scikit-learn defaults from the optimum', body)}")


if __name__ == "__main__":
    if sys.argv[1:] == ["speed"]:
        print(json.dumps(worker_speed()))
    else:
        main(record="--record" in sys.argv[1:])
