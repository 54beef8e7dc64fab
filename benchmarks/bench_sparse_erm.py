"""Sparse ERM (issue 25's case): lasso, elastic net and ridge on a 50000 x 20000 CSR matrix
with 10 values a row, against scikit-learn, time and peak memory beyond the data.

Data (``sparse_problem``): each row has 10 column indices drawn uniformly (duplicates
summed), values uniform in [0.1, 1.1); w* has 500 nonzeros (standard normal x 3);
y = X w* + 0.5 noise. Problems (ours F = (1/n) ||y - X w - b||^2 + lam R(w)):

* lasso, lam = 1e-3 vs ``Lasso(alpha=lam/2, tol=1e-10)`` (F = 2 F_Lasso);
* elastic net, lam = 1e-3, l1_ratio = 0.5 vs ``ElasticNet(alpha=lam/2, l1_ratio=0.5,
  tol=1e-10)``;
* ridge, lam = 1e-3 vs ``Ridge(alpha=n lam/2, tol=1e-10)`` (F = F_Ridge / n).

Every answer of ours is ``ERM(X, y, ...).solve()``, certified at 1e-9 (certificate included
in the time). Warm: best of ``REPEATS`` runs, ours and the anchor interleaved, single
thread (threadpoolctl). First call and memory: each side in a fresh process, the first
fit's wall time, then a second fit's peak of traced allocations (tracemalloc: numpy and
scipy allocate through it; the second, so that loading compiled code is not counted)
above what was allocated before it, i.e. beyond the data (our ERM's construction counted).

Run: ``python benchmarks/bench_sparse_erm.py`` (``--record`` writes
benchmarks/results/sparse_erm.md).
"""

from __future__ import annotations

import os
import platform
import subprocess
import sys
import warnings
from pathlib import Path

import numpy as np
import scipy.sparse as sp

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))   # this checkout's package
sys.path.insert(0, str(Path(__file__).resolve().parent))
from _common import write_result  # noqa: E402

REPEATS = 3
LAM = 1e-3


def sparse_problem(n=50000, d=20000, per_row=10, seed=0):
    """(X CSR, y) of the module docstring."""
    rng = np.random.default_rng(seed)
    cols = rng.integers(0, d, size=(n, per_row))
    vals = rng.random((n, per_row)) + 0.1
    X = sp.csr_matrix((vals.ravel(), cols.ravel(), np.arange(0, n * per_row + 1, per_row)),
                      shape=(n, d))
    X.sum_duplicates()
    w = np.zeros(d)
    idx = rng.choice(d, 500, replace=False)
    w[idx] = rng.standard_normal(500) * 3
    return X, X @ w + 0.5 * rng.standard_normal(n)


CASES = {
    "lasso": (dict(penalty="l1"), "Lasso(alpha=LAM / 2, tol=1e-10, max_iter=100000)"),
    "elastic net": (dict(penalty="elastic_net", l1_ratio=0.5),
                    "ElasticNet(alpha=LAM / 2, l1_ratio=0.5, tol=1e-10, max_iter=100000)"),
    "ridge": (dict(penalty="l2"), "Ridge(alpha=X.shape[0] * LAM / 2, tol=1e-10)"),
}


def _ours(X, y, name):
    import convexlearn as cl
    return cl.ERM(X, y, loss="squared", lam=LAM, **CASES[name][0]).solve()


def _anchor(X, y, name):
    from sklearn.linear_model import ElasticNet, Lasso, Ridge  # noqa: F401
    return eval(CASES[name][1]).fit(X, y)


def _fresh(name: str, ours: bool) -> tuple[float, float]:
    """(seconds, peak MB beyond the data) of the first fit in a fresh process."""
    code = (f"import sys, time, tracemalloc, warnings; sys.path.insert(0, {str(Path(__file__).parent)!r});"
            f"warnings.simplefilter('ignore');"
            f"import bench_sparse_erm as B; X, y = B.sparse_problem();"
            f"{'import convexlearn' if ours else 'import sklearn.linear_model'};"
            f"t = time.perf_counter(); B.{'_ours' if ours else '_anchor'}(X, y, {name!r});"
            f"t = time.perf_counter() - t;"
            f"tracemalloc.start(); base = tracemalloc.get_traced_memory()[0];"
            f"B.{'_ours' if ours else '_anchor'}(X, y, {name!r});"
            f"print(t, (tracemalloc.get_traced_memory()[1] - base) / 1e6)")
    env = {**os.environ, "OMP_NUM_THREADS": "1", "OPENBLAS_NUM_THREADS": "1"}
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         env=env, check=True)
    t, mb = out.stdout.strip().splitlines()[-1].split()
    return float(t), float(mb)


def main():
    import time
    from threadpoolctl import threadpool_limits
    import convexlearn as cl
    X, y = sparse_problem()
    data_mb = (X.data.nbytes + X.indices.nbytes + X.indptr.nbytes) / 1e6
    rows = []
    with threadpool_limits(limits=1), warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for name in CASES:
            best = {"ours": np.inf, "sk": np.inf}
            for _ in range(REPEATS):
                for side, fn in (("ours", _ours), ("sk", _anchor)):
                    start = time.perf_counter()
                    result = fn(X, y, name)
                    best[side] = min(best[side], time.perf_counter() - start)
                    if side == "ours":
                        sol = result
                    else:
                        model = result
            erm = cl.ERM(X, y, loss="squared", lam=LAM, **CASES[name][0])
            F_sk = erm.objective(model.coef_, float(model.intercept_))
            (f_ours, m_ours), (f_sk, m_sk) = _fresh(name, True), _fresh(name, False)
            rows.append([name, sol.provenance["route"], sol.status,
                         f"{sol.report.relative_distance:.1e}", f"{sol.report.relative_gap:.1e}",
                         f"{best['ours']:.3f}", f"{best['sk']:.3f}",
                         f"{best['ours'] / best['sk']:.2f}x", f"{f_ours:.3f}", f"{f_sk:.3f}",
                         f"{f_ours / f_sk:.2f}x", f"{m_ours:.1f}", f"{m_sk:.1f}",
                         f"{m_ours / m_sk:.2f}x", f"{sol.objective - F_sk:.1e}",
                         f"{np.count_nonzero(sol.w)} / {np.count_nonzero(model.coef_)}",
                         CASES[name][1].replace("LAM", f"{LAM:g}")])
            print(rows[-1], flush=True)
    load = ", ".join(f"{v:.1f}" for v in os.getloadavg())
    header = ["problem", "route", "status", "rel. distance", "rel. gap", "ours warm (s)",
              "scikit-learn warm (s)", "ratio warm", "ours first (s)", "scikit-learn first (s)",
              "ratio first", "ours peak MB", "scikit-learn peak MB", "memory ratio",
              "F ours - F sklearn", "nonzeros ours / sklearn", "anchor"]
    lines = ["# Sparse ERM: 50000 x 20000 CSR, 10 values a row", "",
             f"Machine: {platform.machine()}, 2 cores shared with other jobs, Python "
             f"{platform.python_version()}; single thread; load average (1, 5, 15 min) at the "
             f"end {load}. Data {data_mb:.1f} MB (CSR). Generated by "
             f"`benchmarks/bench_sparse_erm.py` (data, conventions and the memory measure "
             f"in its docstring).", "",
             "| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    lines += ["| " + " | ".join(str(v) for v in row) + " |" for row in rows]
    print(write_result("sparse_erm", lines[0][2:], "\n".join(lines[2:])))


if __name__ == "__main__":
    if "--quick" in sys.argv:
        REPEATS = 1
    main()
