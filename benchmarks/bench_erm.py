"""ERM benchmarks: certified exact solves and paths against scikit-learn, and Newton vs lbfgs.

1. Scale (n = 50000, d = 200; ``_correlated_data``): features x = sqrt(1 - rho) z +
   sqrt(rho) z0 with z, z0 standard normal (every pair correlated rho = 0.5), a sparse
   truth w* (20 nonzeros), y = X w* + noise (regression) or 1[X w* + noise > 0]
   (classification). Every convexlearn answer is ``ERM(...).solve()``: the fastest route
   that certifies at 1e-9 relative (its route is printed), certificate included in the
   time. Anchors in the same run, single-threaded (threadpoolctl), runs interleaved
   (ours, anchor, ours, ...), best of ``REPEATS``:
   * logistic + l2, lam = 1e-4, vs ``LogisticRegression(lbfgs, tol=1e-10)`` with
     C = 1/(n lam) (F_ERM = F_LR / (n C));
   * lasso, lam = 2 alpha = 0.04, vs ``Lasso(alpha=0.02, tol=1e-10)`` (F = 2 F_Lasso);
   * elastic net, lam = 0.04, l1_ratio = 0.5, vs ``ElasticNet(alpha=0.02, l1_ratio=0.5,
     tol=1e-10)``: scikit-learn minimizes 1/(2n)||y - Xw - b||^2 + alpha (r ||w||_1 +
     (1 - r)/2 ||w||^2), ours (1/n)||y - Xw - b||^2 + lam (the same penalty): lam = 2
     alpha, F = 2 F_ElasticNet.
   Objectives are recomputed by ``ERM.objective`` at both answers.
1b. Strong regularization (``_independent_data``: n = 50000, d = 200, uncorrelated
   standard-normal features, 20 nonzeros): lasso and elastic net at lam = 0.04 and the
   lasso at lam_max / 2 against Lasso / ElasticNet(tol=1e-10), warm (best of ``REPEATS``)
   and the first call in a fresh process on both sides.
2. Lasso path on scikit-learn's grid (``lasso_path``'s 100 alphas, eps = 1e-3, on the
   data of 1.) vs ``lasso_path(tol=1e-8)``; ours ``ERM.path(2 * alphas)`` (the exact
   homotopy from lam_max to the grid's end, each grid point interpolated between two
   breakpoints, every point certified from the Gram summaries the homotopy runs on,
   rounding bounded, or where that bound does not fit from the data in one batch; a
   point that fails falls back to coordinate descent).
3. ``SVM.path`` over 20 C in logspace(-2, 2), rbf kernel, n = 2000 (make_classification,
   standardized) vs 20 ``SVC(C, kernel="rbf")`` fits (LIBSVM's default tol 1e-3).
4. Logistic + l2 at n = 5000, d = 50: Newton vs lbfgs with the tolerance tightened until
   its objective is within 1e-9, then 1e-12 of Newton's (interleaved, best / median).

Run: ``python benchmarks/bench_erm.py`` (a few minutes; ``--quick``: one timing per entry);
with --record, writes benchmarks/results/erm.md.
The machine has 2 cores shared with other jobs: ratios are of times measured in the same
run, interleaved.
"""

from __future__ import annotations

import os
import platform
import statistics
import sys
import time
import warnings
from pathlib import Path

import cvxpy as cp
import numpy as np
import sklearn
from sklearn.linear_model import ElasticNet, Lasso, LogisticRegression, lasso_path  # noqa: F401
from threadpoolctl import threadpool_limits

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))   # this checkout's package
import convexlearn as cl  # noqa: E402
from _common import best_time, record_text  # noqa: E402

REPEATS = 3
PATH_REPEATS = 5         # the lasso path: half a second each, against a noisy shared machine
NEWTON_REPEATS = 21      # milliseconds each: repeats against a noisy shared machine
RESULTS = Path(__file__).parent / "results" / "erm.md"


def _median_time(fn, repeats=REPEATS):
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def _interleaved_times(fns, repeats):
    """Best and median wall-clock time of each function, run in turns (shared noise)."""
    times = {key: [] for key in fns}
    for _ in range(repeats):
        for key, fn in fns.items():
            start = time.perf_counter()
            fn()
            times[key].append(time.perf_counter() - start)
    return {key: (min(t), statistics.median(t)) for key, t in times.items()}


def _best_interleaved(fns, repeats):
    """Best wall-clock time and last result of each function, run in turns (the machine's
    load then weighs on both sides of a ratio alike)."""
    best, last = {key: float("inf") for key in fns}, {}
    for _ in range(repeats):
        for key, fn in fns.items():
            start = time.perf_counter()
            last[key] = fn()
            best[key] = min(best[key], time.perf_counter() - start)
    return best, last


def _standardize(X):
    sd = X.std(axis=0)
    return (X - X.mean(axis=0)) / np.where(sd > 0, sd, 1.0)


def _correlated_data(n=50000, d=200, rho=0.5, seed=0):
    rng = np.random.default_rng(seed)
    X = np.sqrt(1 - rho) * rng.standard_normal((n, d)) + np.sqrt(rho) * rng.standard_normal((n, 1))
    w = np.zeros(d)
    w[:20] = rng.standard_normal(20)
    y_reg = X @ w + rng.standard_normal(n)
    y_cls = np.where(X @ w + rng.standard_normal(n) > 0, 1, 0)
    return X, y_reg, y_cls


def bench_scale():
    X, y_reg, y_cls = _correlated_data()
    n = X.shape[0]
    rows = []
    cases = [("logistic + l2, lam=1e-4", y_cls, dict(loss="logistic", penalty="l2", lam=1e-4),
              lambda: LogisticRegression(C=1.0 / (n * 1e-4), tol=1e-10, max_iter=100000),
              "LogisticRegression(lbfgs, tol=1e-10, C=1/(n lam))"),
             ("lasso, lam=0.04", y_reg, dict(loss="squared", penalty="l1", lam=0.04),
              lambda: Lasso(alpha=0.02, tol=1e-10, max_iter=100000),
              "Lasso(alpha=0.02, tol=1e-10)"),
             ("elastic net, lam=0.04, l1_ratio=0.5", y_reg,
              dict(loss="squared", penalty="elastic_net", lam=0.04, l1_ratio=0.5),
              lambda: ElasticNet(alpha=0.02, l1_ratio=0.5, tol=1e-10, max_iter=100000),
              "ElasticNet(alpha=0.02, l1_ratio=0.5, tol=1e-10)")]
    with threadpool_limits(limits=1), warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for name, y, kw, make, anchor in cases:
            times, last = _best_interleaved({"ours": lambda: cl.ERM(X, y, **kw).solve(),
                                             "sk": lambda: make().fit(X, y)}, REPEATS)
            (t_ours, sol), (t_sk, model) = ((times[k], last[k]) for k in ("ours", "sk"))
            erm = cl.ERM(X, y, **kw)
            F_sk = erm.objective(np.ravel(model.coef_), float(np.ravel(model.intercept_)[0]))
            print(f"  {name}: ours {t_ours:.3f} s, sklearn {t_sk:.3f} s", flush=True)
            route = sol.provenance["route"]
            if route == "newton":      # which Hessians the steps formed (the last row: the stop)
                h = sol.history
                formed = h["hessian_formed"][:-1] == 1
                full = int(np.sum(formed & (h["hessian_rows"][:-1] == n)))
                route += (f" ({sol.n_iter - 1} steps: Hessians on all rows {full}, "
                          f"subsampled {int(formed.sum()) - full}, factor reused "
                          f"{int(np.sum(~formed))})")
            rows.append(dict(name=name, route=route, status=sol.status,
                             rel_dist=sol.report.relative_distance,
                             rel_gap=sol.report.relative_gap, t_ours=t_ours, t_sk=t_sk,
                             F=sol.objective, F_sk=F_sk, anchor=anchor,
                             nnz=int(np.count_nonzero(sol.w)),
                             nnz_sk=int(np.count_nonzero(model.coef_))))
    return rows


def _independent_data(n=50000, d=200, seed=1):
    """Uncorrelated standard-normal features, 20 nonzeros in w*, y = X w* + noise: the
    strongly regularized cases (few active features, scikit-learn done in a few sweeps)."""
    rng = np.random.default_rng(seed)
    X = rng.standard_normal((n, d))
    w = np.zeros(d)
    w[:20] = rng.standard_normal(20)
    return X, X @ w + rng.standard_normal(n)


def _strong_cases(X, y):
    """(name, ERM keywords, scikit-learn estimator's text) of the strong-regularization rows;
    lam_max = ||(2/n) Xc^T yc||_inf, where w = 0 becomes optimal."""
    Xc, yc = X - X.mean(axis=0), y - y.mean()
    lam_max = float(np.max(np.abs(2.0 / len(y) * (Xc.T @ yc))))
    return [("lasso, lam=0.04 (alpha=0.02)", dict(penalty="l1", lam=0.04),
             "Lasso(alpha=0.02, tol=1e-10)"),
            ("elastic net, lam=0.04, l1_ratio=0.5", dict(penalty="elastic_net", lam=0.04,
                                                        l1_ratio=0.5),
             "ElasticNet(alpha=0.02, l1_ratio=0.5, tol=1e-10)"),
            (f"lasso, lam=lam_max/2={lam_max / 2:.4g}", dict(penalty="l1", lam=lam_max / 2),
             f"Lasso(alpha={lam_max / 4:.4g}, tol=1e-10)")]


_FIRST_CALL = """
import sys, time, warnings
sys.path.insert(0, {bench!r})
import numpy as np
from bench_erm import _independent_data, _strong_cases
X, y = _independent_data()
name, kw, anchor = _strong_cases(X, y)[{k}]
warnings.simplefilter("ignore")
if {ours}:
    import convexlearn as cl
    start = time.perf_counter()
    sol = cl.ERM(X, y, loss="squared", **kw).solve()
else:
    from sklearn.linear_model import ElasticNet, Lasso
    est = eval(anchor.replace("tol=1e-10", "tol=1e-10, max_iter=100000"))
    start = time.perf_counter()
    est.fit(X, y)
print(time.perf_counter() - start)
"""


def first_call(k: int, ours: bool) -> float:
    """Seconds of the first solve in a fresh process (compiled kernels loaded from numba's
    cache, nothing warm; data generation and imports not counted), single-threaded."""
    import subprocess
    code = _FIRST_CALL.format(bench=str(Path(__file__).parent), k=k, ours=ours)
    env = {**os.environ, "OMP_NUM_THREADS": "1", "OPENBLAS_NUM_THREADS": "1",
           "MKL_NUM_THREADS": "1"}
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         env=env, check=True)
    return float(out.stdout.strip().splitlines()[-1])


def bench_strong():
    """Strong regularization on uncorrelated features (n=50000, d=200): warm best of
    REPEATS interleaved, and the first call in a fresh process for both sides."""
    X, y = _independent_data()
    rows = []
    with threadpool_limits(limits=1), warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for k, (name, kw, anchor) in enumerate(_strong_cases(X, y)):
            est = eval(anchor.replace("tol=1e-10", "tol=1e-10, max_iter=100000"))
            times, last = _best_interleaved({"ours": lambda: cl.ERM(X, y, loss="squared",
                                                                    **kw).solve(),
                                             "sk": lambda: est.fit(X, y)}, REPEATS)
            sol, model = last["ours"], last["sk"]
            erm = cl.ERM(X, y, loss="squared", **kw)
            F_sk = erm.objective(np.ravel(model.coef_), float(model.intercept_))
            rows.append(dict(name=name, route=sol.provenance["route"], status=sol.status,
                             rel_dist=sol.report.relative_distance,
                             rel_gap=sol.report.relative_gap, t_ours=times["ours"],
                             t_sk=times["sk"], first_ours=first_call(k, True),
                             first_sk=first_call(k, False), F=sol.objective,
                             dF=sol.objective - F_sk, anchor=anchor,
                             nnz=int(np.count_nonzero(sol.w)),
                             nnz_sk=int(np.count_nonzero(model.coef_))))
            print(f"  {name}: {rows[-1]}", flush=True)
    return rows


def _strong_table(rows):
    lines = ["", "## Strong regularization (n=50000, d=200, uncorrelated features, 20 "
             "nonzeros in w*)", "",
             f"`ERM(...).solve()`, certificate included; warm: best of {REPEATS} "
             "interleaved runs in this process; first call: the first solve in a fresh "
             "process (imports and data not counted), both sides.", "",
             "| problem | route | status | rel. distance | rel. gap | ours warm (s) | "
             "scikit-learn warm (s) | ratio warm | ours first (s) | scikit-learn first (s) "
             "| ratio first | F ours - F sklearn | nonzeros ours / sklearn | anchor |",
             "|---|---|---|---|---|---|---|---|---|---|---|---|---|---|"]
    for r in rows:
        lines.append(f"| {r['name']} | {r['route']} | {r['status']} | {r['rel_dist']:.1e} | "
                     f"{r['rel_gap']:.1e} | {r['t_ours']:.3f} | {r['t_sk']:.3f} | "
                     f"{r['t_ours'] / r['t_sk']:.2f}x | {r['first_ours']:.3f} | "
                     f"{r['first_sk']:.3f} | {r['first_ours'] / r['first_sk']:.2f}x | "
                     f"{r['dF']:.1e} | {r['nnz']} / {r['nnz_sk']} | {r['anchor']} |")
    return lines


def bench_lasso_path():
    X, y, _ = _correlated_data()
    with threadpool_limits(limits=1), warnings.catch_warnings():
        warnings.simplefilter("ignore")
        alphas, _, _ = lasso_path(X, y, n_alphas=100, eps=1e-3)   # the grid only

        def ours():
            return cl.ERM(X, y, loss="squared", penalty="l1", lam=1.0).path(2 * alphas)

        def sk():
            # lasso_path centres nothing: fit the intercept by centring, as Lasso does
            Xc, yc = X - X.mean(axis=0), y - y.mean()
            return lasso_path(Xc, yc, alphas=alphas, tol=1e-8)

        times, last = _best_interleaved({"ours": ours, "sk": sk}, PATH_REPEATS)
        t_ours, path, t_sk, (_, coefs, _) = times["ours"], last["ours"], times["sk"], last["sk"]
    erm = cl.ERM(X, y, loss="squared", penalty="l1", lam=1.0)
    worse = 0
    for k, alpha in enumerate(alphas):
        erm.lam = 2 * alpha
        w = coefs[:, k]
        F_sk = erm.objective(w, float(y.mean() - X.mean(axis=0) @ w))
        worse += path[k].objective > F_sk * (1 + 1e-12)
    routes = sorted({s.provenance["route"] for s in path})
    return dict(t_ours=t_ours, t_sk=t_sk, certified=sum(s.ok for s in path), n=len(path),
                worse=int(worse), routes=routes,
                breakpoints=max(s.provenance.get("breakpoints", 0) for s in path))


def bench_svm_path():
    from sklearn.datasets import make_classification
    from sklearn.svm import SVC
    X, y = make_classification(n_samples=2000, n_features=20, n_informative=10, flip_y=0.05,
                               random_state=0)
    X = _standardize(X)
    Cs = np.logspace(-2, 2, 20)
    with threadpool_limits(limits=1):
        def sk():
            return [SVC(C=C, kernel="rbf", gamma="scale").fit(X, y) for C in Cs]

        def ours():
            return cl.SVM(X, y, C=1.0, kernel="rbf").path(Cs)

        t_sk, _ = best_time(sk, 2)
        t_ours, path = best_time(ours, 1)
    return dict(t_ours=t_ours, t_sk=t_sk, certified=sum(s.ok for s in path), n=len(path),
                routes=sorted({s.provenance.get("route", "?") for s in path}))


def bench_newton():
    rng = np.random.default_rng(0)
    n, d, C = 5000, 50, 1.0
    X = rng.normal(size=(n, d))
    w_true = rng.normal(size=d) / np.sqrt(d) * 3
    y = np.where(rng.uniform(size=n) < 1 / (1 + np.exp(-(X @ w_true + 0.5))), 1, 0)
    erm = cl.ERM(X, y, loss="logistic", penalty="l2", lam=1.0 / (n * C))
    sol = erm.solve("newton", tol=1e-8, certify=False)
    F_newton = sol.objective
    grad_norm = sol.history["grad_norm"][-1]
    fns = {"newton": lambda: erm.solve("newton", tol=1e-8, certify=False)}

    # lbfgs rows: the first tolerance whose objective is within `gap` (relative) of Newton's.
    lbfgs = []
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for gap in (1e-9, 1e-12):
            for tol in [1e-4, 1e-5, 1e-6, 1e-7, 1e-8, 1e-9, 1e-10, 1e-12, 1e-14]:
                def fit(tol=tol):
                    return LogisticRegression(C=C, solver="lbfgs", tol=tol,
                                              max_iter=10000).fit(X, y)
                model = fit()
                F = erm.objective(model.coef_.ravel(), model.intercept_[0])
                if (F - F_newton) / abs(F_newton) <= gap:
                    lbfgs.append((gap, tol, F, model.n_iter_[0]))
                    fns[tol] = fit
                    break
            else:
                lbfgs.append((gap, None, float("nan"), 0))
        with threadpool_limits(limits=1):
            times = _interleaved_times(fns, NEWTON_REPEATS)
    lbfgs = [(gap, tol, times.get(tol, (float("nan"),) * 2), F, iters)
             for gap, tol, F, iters in lbfgs]
    # A converged run's last history entry is the stopping check: no Hessian formed there.
    rows = [int(r) if formed else 0 for r, formed in
            zip(sol.history["hessian_rows"], sol.history["hessian_formed"])]
    rows = rows[:-1] if sol.status == "converged" else rows
    return dict(n=n, d=d, C=C, t_newton=times["newton"], newton_iter=sol.n_iter,
                grad_norm=grad_norm, F_newton=F_newton, lbfgs=lbfgs, hessian_rows=rows)


def main():
    scale = bench_scale()
    print("scale:", scale, flush=True)
    strong = bench_strong()
    lpath = bench_lasso_path()
    print("lasso path:", lpath, flush=True)
    spath = bench_svm_path()
    print("svm path:", spath, flush=True)
    newton = bench_newton()
    load = ", ".join(f"{v:.1f}" for v in os.getloadavg())
    lines = ["# ERM benchmarks", "",
             f"Machine: {platform.machine()}, 2 cores shared with other jobs (timings are "
             f"noisy: ratios compare times from the same run), Python "
             f"{platform.python_version()}, cvxpy {cp.__version__}, scikit-learn "
             f"{sklearn.__version__}, numpy {np.__version__}; single-threaded "
             f"(threadpoolctl), best of {REPEATS} run(s); load average at the end of the "
             f"run (1, 5, 15 min) {load} on 2 cores. Generated by "
             f"`benchmarks/bench_erm.py` (data and conversions in its docstring).", "",
             "## Certified exact ERM at scikit-learn scale (n=50000, d=200, correlated "
             "features, rho=0.5)", "",
             "`ERM(...).solve()`, certificate included (relative distance of 0 to dF and "
             "relative duality gap, both must be <= 1e-9). F recomputed by ERM.objective at "
             "both answers; F - F_sklearn < 0 means ours is lower.", "",
             "| problem | route | status | rel. distance | rel. gap | ours (s) | "
             "scikit-learn (s) | ratio | F ours | F ours - F sklearn | nonzeros ours / "
             "sklearn | anchor |", "|---|---|---|---|---|---|---|---|---|---|---|---|"]
    for r in scale:
        lines.append(f"| {r['name']} | {r['route']} | {r['status']} | {r['rel_dist']:.1e} | "
                     f"{r['rel_gap']:.1e} | {r['t_ours']:.3f} | {r['t_sk']:.3f} | "
                     f"{r['t_ours'] / r['t_sk']:.2f}x | {r['F']:.12g} | "
                     f"{r['F'] - r['F_sk']:.1e} | {r['nnz']} / {r['nnz_sk']} | "
                     f"{r['anchor']} |")
    lines += _strong_table(strong)
    lines += ["", "## Paths", "",
              f"Lasso path: best of {PATH_REPEATS} runs each; SVM path: best of 1 (ours) "
              f"and 2 (scikit-learn).", "",
              "| path | ours (s) | scikit-learn (s) | ratio | points certified | note |",
              "|---|---|---|---|---|---|",
              f"| lasso, scikit-learn's 100 alphas (eps=1e-3), lam = 2 alpha | "
              f"{lpath['t_ours']:.3f} | {lpath['t_sk']:.3f} | "
              f"{lpath['t_ours'] / lpath['t_sk']:.2f}x | {lpath['certified']}/{lpath['n']} | "
              f"vs lasso_path(tol=1e-8) on centred data; points where ours has a higher F: "
              f"{lpath['worse']}; routes {', '.join(lpath['routes'])} "
              f"({lpath['breakpoints']} homotopy breakpoints down to the grid's end) |",
              f"| SVM rbf, n=2000, 20 C in logspace(-2, 2) | {spath['t_ours']:.3f} | "
              f"{spath['t_sk']:.3f} | {spath['t_ours'] / spath['t_sk']:.2f}x | "
              f"{spath['certified']}/{spath['n']} | vs 20 SVC fits (tol=1e-3, not certified); "
              f"ours: the certified kernel route warm-started from the previous C, every "
              f"point certified at 1e-9 (KKT residuals and relative gap); routes "
              f"{', '.join(spath['routes'])} |"]
    lines += ["", f"## Newton vs scikit-learn lbfgs: logistic + l2, n={newton['n']}, "
              f"d={newton['d']}, C={newton['C']:g} (lam = 1/(nC))", "",
              f"Single thread (threadpoolctl), interleaved runs, best / median of "
              f"{NEWTON_REPEATS}.", "",
              "| method | best (ms) | median (ms) | iterations | objective F | note |",
              "|---|---|---|---|---|---|",
              f"| convexlearn newton | {newton['t_newton'][0] * 1e3:.2f} | "
              f"{newton['t_newton'][1] * 1e3:.2f} | {newton['newton_iter']} | "
              f"{newton['F_newton']:.12f} | final gradient norm {newton['grad_norm']:.1e}; "
              f"Hessian rows per step {newton['hessian_rows']} (0: the last factor "
              f"reused) |"]
    for gap, tol, t, F, iters in newton["lbfgs"]:
        if tol is None:
            lines.append(f"| sklearn lbfgs | - | - | - | - | never within {gap:g} of "
                         f"Newton's F |")
            continue
        lines.append(f"| sklearn lbfgs | {t[0] * 1e3:.2f} | {t[1] * 1e3:.2f} | {iters} | "
                     f"{F:.12f} | first tol with F within {gap:g} (relative) of Newton's: "
                     f"tol={tol:g}; Newton/lbfgs time {newton['t_newton'][0] / t[0]:.2f} "
                     f"(best), {newton['t_newton'][1] / t[1]:.2f} (median) |")
    text = "\n".join(lines) + "\n"
    print(record_text(RESULTS, text))


if __name__ == "__main__":
    if "--quick" in sys.argv:       # one timing per entry: for a saturated machine
        REPEATS, PATH_REPEATS, NEWTON_REPEATS = 1, 1, 5
    main()
