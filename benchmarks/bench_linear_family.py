"""Speed of the L2-loss (squared hinge) linear SVM and the Crammer-Singer SVM against
LinearSVC, on the same problems, certified.

* L2-loss: n=20000, d=100 (Gaussian features, labels from a noisy hyperplane), C=1,
  intercept="penalized" (LinearSVC's problem: its bias is penalized, intercept_scaling=1).
* Crammer-Singer: digits (1797 x 64, raw pixels 0..16), C=1, no intercept
  (LinearSVC(multi_class="crammer_singer", fit_intercept=False)).

LinearSVC's ``tol`` is tightened (1e-4, 1e-6, ...) until its decision values agree with
the certified answer to 1e-6 relative (max |f - f*| / max |f*|); its time at that tol is
the anchor. Warm: best of 3 in this process; first call: a fresh process (imports, numba
cache load) solving once. ``python benchmarks/bench_linear_family.py [--record]``.
"""

from __future__ import annotations

import os
import subprocess
import sys
import warnings

import numpy as np

sys.path.insert(0, os.path.dirname(__file__))
from _common import best_time, markdown_table, write_result  # noqa: E402

import convexlearn as cl  # noqa: E402

TOLS = (1e-4, 1e-6, 1e-8, 1e-10, 1e-12)


def l2_data():
    rng = np.random.default_rng(0)
    n, d = 20000, 100
    X = rng.standard_normal((n, d))
    y = np.sign(X @ rng.standard_normal(d) / np.sqrt(d) + 0.7 * rng.standard_normal(n))
    return X, y


def cs_data():
    from sklearn.datasets import load_digits
    return load_digits(return_X_y=True)


def ours_l2(X, y):
    p = cl.SVM(X, y, C=1.0, loss="squared_hinge", intercept="penalized")
    s = p.solve()
    return p.decision_function(s), s


def ours_cs(X, y):
    p = cl.CrammerSingerSVM(X, y, C=1.0)
    s = p.solve()
    return p.decision_function(s), s


def sk_l2(X, y, tol):
    from sklearn.svm import LinearSVC
    return LinearSVC(C=1.0, tol=tol, max_iter=1_000_000).fit(X, y).decision_function(X)


def sk_cs(X, y, tol):
    from sklearn.svm import LinearSVC
    return LinearSVC(C=1.0, multi_class="crammer_singer", fit_intercept=False, tol=tol,
                     max_iter=1_000_000).fit(X, y).decision_function(X)


def first_call(which: str) -> float:
    """Seconds of the first solve in a fresh process (after its imports)."""
    code = (f"import time, sys; sys.path.insert(0, {os.path.dirname(__file__)!r}); "
            f"import bench_linear_family as b; X, y = b.{which}_data(); "
            f"t = time.perf_counter(); b.ours_{which}(X, y); "
            f"print(time.perf_counter() - t)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True, env={**os.environ})
    return float(out.stdout.strip().splitlines()[-1])


def line(name, which, data, ours, sk):
    X, y = data()
    t_ours, (F, sol) = best_time(lambda: ours(X, y), 3)
    print(f"{name}: convexlearn {t_ours:.3f} s, {sol.status}", flush=True)
    rel = None
    for tol in TOLS:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            G = sk(X, y, tol)
        rel = float(np.max(np.abs(G - F)) / np.max(np.abs(F)))
        print(f"  LinearSVC tol={tol:g}: agrees to {rel:.1e}", flush=True)
        if rel <= 1e-6:
            break
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        t_sk, _ = best_time(lambda: sk(X, y, tol), 3)
    first = first_call(which)
    gap = sol.report.relative_gap
    return [name, f"{t_ours:.3f}", f"{first:.3f}", f"{t_sk:.3f} (tol {tol:g}, agrees "
            f"{rel:.1e})", f"{t_ours / t_sk:.2f}", sol.status, f"{gap:.1e}"]


def main():
    rows = [line("L2-loss SVM, n=20000, d=100, penalized b", "l2", l2_data, ours_l2, sk_l2),
            line("Crammer-Singer, digits (1797 x 64), C=1", "cs", cs_data, ours_cs, sk_cs)]
    body = markdown_table(["problem", "convexlearn exact, warm best of 3 (s)",
                           "first call, fresh process (s)", "LinearSVC (s)", "ratio",
                           "status", "relative gap"], rows)
    print(body)
    print(write_result("linear_family", "L2-loss and Crammer-Singer SVM vs LinearSVC", body))
    return rows


if __name__ == "__main__":
    main()
