"""Certified exact nu-SVC and nu-SVR against LIBSVM (scikit-learn's NuSVC / NuSVR).

Issue 22's speed line: rbf, n = 5000, ``cl.NuSVM(X, y).solve()`` / ``cl.NuSVR(X, z).solve()``
(Solver_NU to tol 1e-3, the active-set polish, the certificate at 1e-9 relative) <= 1.5x
the default fit of NuSVC() / NuSVR() (nu = 0.5, C = 1, gamma = "scale", tol = 1e-3,
shrinking, 200 MB cache; uncertified).

Data: nu-SVC on make_classification(5000, 10, random_state=0), standardized; nu-SVR on
make_regression(5000, 10, noise=10, random_state=0), X standardized, z centred and scaled
to unit variance. Warm: best of ``REPEAT`` runs of each side, alternating, in one process
after a warm-up solve on a small problem (numba's compiled loop loaded from its disk
cache). First call: a fresh process (imports, data, one solve), timed from before the
import of the solver's package to the end of its first solve, each side in its own
process. Agreement: the largest difference of the decision values (nu-SVC) or
predictions (nu-SVR) relative to the largest value (LIBSVM's float32 kernel cache bounds
it, docs/conventions.md). Both sides run with OPENBLAS_NUM_THREADS=1.

Run: python benchmarks/bench_nu_svm.py   (with --record, writes benchmarks/results/nu_svm.md)
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
sys.path.insert(0, ROOT)
sys.path.insert(0, HERE)
os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")

from _common import markdown_table, write_result  # noqa: E402

N = 5000
REPEAT = 3

_DATA = """
import numpy as np
from sklearn.datasets import make_classification, make_regression
from sklearn.preprocessing import StandardScaler
def data(kind, n):
    if kind == "nu-SVC":
        X, y = make_classification(n, 10, random_state=0)
        return StandardScaler().fit_transform(X), y
    X, z = make_regression(n, 10, noise=10, random_state=0)
    return StandardScaler().fit_transform(X), (z - z.mean()) / z.std()
"""
_NAMESPACE: dict = {}
exec(_DATA, _NAMESPACE)     # data(kind, n), the same code here and in the fresh processes
data = _NAMESPACE["data"]

_FIRST = _DATA + """
import json, sys, time
kind, side, n = sys.argv[1], sys.argv[2], int(sys.argv[3])
X, y = data(kind, n)
start = time.perf_counter()
if side == "convexlearn":
    import convexlearn as cl
    problem = cl.NuSVM(X, y) if kind == "nu-SVC" else cl.NuSVR(X, y)
    sol = problem.solve()
    status = sol.status
else:
    from sklearn.svm import NuSVC, NuSVR
    (NuSVC() if kind == "nu-SVC" else NuSVR()).fit(X, y)
    status = "-"
print(json.dumps({"time": time.perf_counter() - start, "status": status}))
"""


def _first_call(kind: str, side: str) -> dict:
    env = dict(os.environ, PYTHONPATH=ROOT, OPENBLAS_NUM_THREADS="1")
    out = subprocess.run([sys.executable, "-c", _FIRST, kind, side, str(N)], env=env,
                         capture_output=True, text=True, check=True)
    return json.loads(out.stdout.strip().splitlines()[-1])


def _warm(kind: str) -> dict:
    import numpy as np
    from sklearn.svm import NuSVC, NuSVR

    import convexlearn as cl
    X, y = data(kind, N)
    small = data(kind, 200)
    (cl.NuSVM(*small) if kind == "nu-SVC" else cl.NuSVR(*small)).solve()   # warm-up
    ours, theirs = float("inf"), float("inf")
    for _ in range(REPEAT):
        start = time.perf_counter()
        problem = cl.NuSVM(X, y) if kind == "nu-SVC" else cl.NuSVR(X, y)
        sol = problem.solve()
        ours = min(ours, time.perf_counter() - start)
        start = time.perf_counter()
        ref = (NuSVC() if kind == "nu-SVC" else NuSVR()).fit(X, y)
        theirs = min(theirs, time.perf_counter() - start)
    mine = problem.decision_function(sol, X)
    other = ref.decision_function(X) if kind == "nu-SVC" else ref.predict(X)
    return {"ours": ours, "theirs": theirs, "status": sol.status,
            "gap": sol.report.relative_gap, "iterations": sol.n_iter,
            "agreement": float(np.max(np.abs(mine - other)) / np.max(np.abs(other)))}


def main() -> None:
    rows = []
    for kind in ("nu-SVC", "nu-SVR"):
        warm = _warm(kind)
        first_ours = _first_call(kind, "convexlearn")
        first_theirs = _first_call(kind, "sklearn")
        anchor = "NuSVC" if kind == "nu-SVC" else "NuSVR"
        rows.append([kind, N, anchor, warm["theirs"], warm["ours"],
                     f"{warm['ours'] / warm['theirs']:.2f}x",
                     first_theirs["time"], first_ours["time"],
                     f"{first_ours['time'] / first_theirs['time']:.2f}x",
                     warm["status"], f"{warm['gap']:.1e}", warm["iterations"],
                     f"{warm['agreement']:.1e}"])
        print(rows[-1], flush=True)
    table = markdown_table(["problem", "n", "anchor", "anchor s (warm)", "certified s (warm)",
                            "ratio", "anchor s (first)", "certified s (first)",
                            "ratio (first)", "status", "relative gap", "SMO iterations",
                            "max |diff| / max |value|"], rows)
    body = (f"rbf, gamma='scale', nu = 0.5 (nu-SVR: C = 1), n = {N}; warm: best of {REPEAT}; "
            f"first: a fresh process (imports and the first solve). Target: certified "
            f"<= 1.5x the anchor's default fit.\n\n{table}")
    print(write_result("nu_svm", "nu-SVC and nu-SVR: certified exact vs LIBSVM", body))


if __name__ == "__main__":
    main()
