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

Sweep (``--sweep``): nu-SVR on ``SWEEP_CASES`` random draws (seed ``SWEEP_SEED``) of n in
1000..5000 (multiples of 100), nu in {0.1, 0.3, 0.5, 0.8}, C in {0.1, 1, 10} and gamma
"scale" or ten times it (X standardized: scale = 1 / d), data as above with
make_regression's random_state the case number; warm, best of ``SWEEP_REPEAT`` of each
side, alternating; the median and 90th percentile of the ratio to NuSVR(C, nu, gamma).

Run: python benchmarks/bench_nu_svm.py   (with --record, writes benchmarks/results/nu_svm.md;
--sweep runs the sweep instead and records benchmarks/results/nu_svr_sweep.md)
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
SWEEP_CASES, SWEEP_SEED, SWEEP_REPEAT = 8, 22, 2

_DATA = """
import numpy as np
from sklearn.datasets import make_classification, make_regression
from sklearn.preprocessing import StandardScaler
def data(kind, n, seed=0):
    if kind == "nu-SVC":
        X, y = make_classification(n, 10, random_state=seed)
        return StandardScaler().fit_transform(X), y
    X, z = make_regression(n, 10, noise=10, random_state=seed)
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


def _load() -> str:
    return " / ".join(f"{x:.1f}" for x in os.getloadavg())


def sweep_cases() -> list[dict]:
    """The sweep's draws (module docstring)."""
    import numpy as np
    rng = np.random.default_rng(SWEEP_SEED)
    return [{"case": k, "n": int(rng.integers(10, 51)) * 100,
             "nu": float(rng.choice([0.1, 0.3, 0.5, 0.8])),
             "C": float(rng.choice([0.1, 1.0, 10.0])),
             "gamma_factor": float(rng.choice([1.0, 10.0]))} for k in range(SWEEP_CASES)]


def sweep() -> None:
    import numpy as np
    from sklearn.svm import NuSVR

    import convexlearn as cl
    cl.NuSVR(*data("nu-SVR", 200)).solve()      # warm-up
    rows, ratios = [], []
    for case in sweep_cases():
        X, z = data("nu-SVR", case["n"], seed=case["case"])
        gamma = case["gamma_factor"] / (X.shape[1] * X.var())     # "scale" times the factor
        params = {"C": case["C"], "nu": case["nu"], "gamma": gamma}
        ours, theirs = float("inf"), float("inf")
        for _ in range(SWEEP_REPEAT):
            start = time.perf_counter()
            problem = cl.NuSVR(X, z, kernel="rbf", **params)
            sol = problem.solve()
            ours = min(ours, time.perf_counter() - start)
            start = time.perf_counter()
            ref = NuSVR(**params).fit(X, z)
            theirs = min(theirs, time.perf_counter() - start)
        other = ref.predict(X)
        agreement = float(np.max(np.abs(problem.decision_function(sol, X) - other))
                          / np.max(np.abs(other)))
        ratios.append(ours / theirs)
        rows.append([case["case"], case["n"], case["nu"], case["C"],
                     f"{case['gamma_factor']:g} x scale", theirs, ours, f"{ours / theirs:.2f}x",
                     sol.status, f"{sol.report.relative_gap:.1e}", sol.n_iter,
                     int(np.ravel(ref.n_iter_)[0]),
                     f"{agreement:.1e}"])
        print(rows[-1], flush=True)
    table = markdown_table(["case", "n", "nu", "C", "gamma", "NuSVR s", "certified s",
                            "ratio", "status", "relative gap", "SMO iterations",
                            "LIBSVM iterations", "max |diff| / max |value|"], rows)
    body = (f"{SWEEP_CASES} random nu-SVR cases (seed {SWEEP_SEED}), rbf, warm: best of "
            f"{SWEEP_REPEAT} of each side (see benchmarks/bench_nu_svm.py).\n\n{table}\n\n"
            f"Ratio to NuSVR(): median {np.median(ratios):.2f}x, 90th percentile "
            f"{np.percentile(ratios, 90):.2f}x, worst {max(ratios):.2f}x. Load average at the "
            f"end of the run (1 / 5 / 15 min): {_load()}.")
    print(write_result("nu_svr_sweep", "nu-SVR sweep: certified exact vs LIBSVM", body))


def main() -> None:
    if "--sweep" in sys.argv[1:]:
        sweep()
        return
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
            f"<= 1.5x the anchor's default fit.\n\n{table}\n\nLoad average at the end of the "
            f"run (1 / 5 / 15 min): {_load()}.")
    print(write_result("nu_svm", "nu-SVC and nu-SVR: certified exact vs LIBSVM", body))


if __name__ == "__main__":
    main()
