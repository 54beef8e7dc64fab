"""ERM benchmarks: the DPP regularization path, and Newton against scikit-learn's lbfgs.

1. Path over 20 lambdas (geometric, 1 .. 1e-3), all through the public API with its
   default ``certify=True`` (every point carries its optimality report; a point that the
   certificate rejects is re-solved, in both columns alike):
   "path"             ``ERM.path(lams)`` — one compiled cvxpy problem, only the Parameter
                      lam changes; squared loss + l1/elastic net: OSQP warm-started from
                      the previous point and polished, kept only if certified, else Clarabel;
   "scratch, default" 20 x ``ERM(..., lam).solve()`` — build + canonicalize + Clarabel;
   "scratch, same"    20 x ``ERM(..., lam).path([lam])`` — build + canonicalize + the same
                      solver sequence as the path, but cold (no previous point).
   Also raw cvxpy + Clarabel (``param.value = ..`` + ``problem.solve()`` vs a new
   ``cp.Problem`` per lambda, default tolerances, no certificate) to separate our overhead.
2. Logistic + l2 at n = 5000, d = 50 (lam = 1/(n C), C = 1): our Newton (Hessians from
   a doubling subsample of rows, then all rows, in float32 while progress is fast; values
   and gradients always exact, float64) to ||grad F|| <= 1e-8, against
   ``LogisticRegression(solver="lbfgs")`` with the tolerance tightened until its
   objective is within 1e-9, then 1e-12 (relative) of Newton's. Both single-threaded
   (threadpoolctl limits BLAS and OpenMP to one thread), timed interleaved, best and
   median of ``NEWTON_REPEATS`` runs.

Run: ``python benchmarks/bench_erm.py`` (about a minute); writes benchmarks/results/erm.md.
Timings: median of ``REPEATS`` runs, wall clock, on whatever machine runs it.
"""

from __future__ import annotations

import platform
import statistics
import time
import warnings
from pathlib import Path

import cvxpy as cp
import numpy as np
import sklearn
from sklearn import datasets
from sklearn.linear_model import LogisticRegression
from threadpoolctl import threadpool_limits

import convexlearn as cl
from convexlearn.formulations.erm import erm_problem

REPEATS = 3
NEWTON_REPEATS = 61      # milliseconds each: many repeats against a noisy shared machine
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


def _standardize(X):
    sd = X.std(axis=0)
    return (X - X.mean(axis=0)) / np.where(sd > 0, sd, 1.0)


def bench_path():
    rows = []
    lams = np.geomspace(1.0, 1e-3, 20)
    bc_X, bc_y = datasets.load_breast_cancer(return_X_y=True)
    db_X, db_y = datasets.load_diabetes(return_X_y=True)
    wine_X, wine_y = datasets.load_wine(return_X_y=True)
    keep = wine_y < 2
    cases = [("diabetes[:100]", _standardize(db_X[:100]), db_y[:100], "squared", "l1"),
             ("diabetes", _standardize(db_X), db_y, "squared", "l1"),
             ("diabetes", _standardize(db_X), db_y, "squared", "elastic_net"),
             ("wine 0/1", _standardize(wine_X[keep]), wine_y[keep], "hinge", "l2"),
             ("breast_cancer", _standardize(bc_X), bc_y, "hinge", "l2"),
             ("breast_cancer", _standardize(bc_X), bc_y, "logistic", "l1")]
    for name, X, y, loss, penalty in cases:
        def path():
            return cl.ERM(X, y, loss=loss, penalty=penalty, lam=lams[0]).path(lams)

        def scratch():
            return [cl.ERM(X, y, loss=loss, penalty=penalty, lam=lam).solve() for lam in lams]

        def scratch_same():
            return [cl.ERM(X, y, loss=loss, penalty=penalty, lam=lam).path([lam])[0]
                    for lam in lams]

        # Same answers (objectives), every point certified, before timing anything.
        a, b, c = path(), scratch(), scratch_same()
        worst = max(abs(s.objective - t.objective) / max(1, abs(t.objective))
                    for s, t in zip(a + a, b + c))
        certified = sum(s.report.passed for s in a)
        solvers = sorted({s.provenance["solver"] for s in a})
        t_path, t_scratch = _median_time(path), _median_time(scratch)
        t_same = _median_time(scratch_same)

        erm = cl.ERM(X, y, loss=loss, penalty=penalty, lam=lams[0])
        form = erm_problem(erm.X, erm.y, erm.loss, erm.penalty, lams[0], True)

        def raw_path():
            solve_time = 0.0
            for lam in lams:
                form.parameters["lam"].value = lam
                form.problem.solve(solver="CLARABEL")
                solve_time += form.problem.solver_stats.solve_time
            return solve_time

        def raw_scratch():
            for lam in lams:
                f = erm_problem(erm.X, erm.y, erm.loss, erm.penalty, lam, True)
                f.problem.solve(solver="CLARABEL", ignore_dpp=True)

        t_raw_path, t_raw_scratch = _median_time(raw_path), _median_time(raw_scratch)
        # Clarabel's own time (its solver_stats) over the 20 points: no path that calls
        # Clarabel at every lam can be faster than this, whatever cvxpy saves.
        t_clarabel = statistics.median(raw_path() for _ in range(REPEATS))
        rows.append((f"{name} (n={X.shape[0]}, d={X.shape[1]}), {loss} + {penalty}",
                     t_path, t_scratch, t_scratch / t_path, t_same, t_same / t_path,
                     t_raw_path, t_raw_scratch, t_raw_scratch / t_raw_path, worst,
                     f"{certified}/{len(a)}", " + ".join(solvers), t_clarabel,
                     t_raw_scratch / t_clarabel))
    return rows


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
    rows = [int(r) for r in sol.history["hessian_rows"]]
    rows = rows[:-1] if sol.status == "converged" else rows
    return dict(n=n, d=d, C=C, t_newton=times["newton"], newton_iter=sol.n_iter,
                grad_norm=grad_norm, F_newton=F_newton, lbfgs=lbfgs, hessian_rows=rows)


def main():
    path_rows = bench_path()
    newton = bench_newton()
    lines = ["# ERM benchmarks", "",
             f"Machine: {platform.machine()}, Python {platform.python_version()}, "
             f"cvxpy {cp.__version__}, scikit-learn {sklearn.__version__}, numpy "
             f"{np.__version__}; median of {REPEATS} runs. Generated by "
             f"`benchmarks/bench_erm.py`.", "",
             "## Regularization path, 20 lambdas (geomspace(1, 1e-3, 20))", "",
             "`ERM.path` re-solves one compiled problem (lam is a cvxpy Parameter, DPP); "
             "the scratch columns build and canonicalize a new problem per lambda, with the "
             "default solver (`ERM(...).solve()`, Clarabel) or with the path's own solver "
             "sequence run cold (`ERM(..., lam).path([lam])`). All API columns compute the "
             "optimality certificate of every point (`certify=True`); the raw columns are "
             "cvxpy + Clarabel alone at its default tolerances, no certificate.", "",
             "| problem | path (s) | scratch, default (s) | speed-up | scratch, same "
             "solver (s) | speed-up | raw path (s) | raw scratch (s) | raw speed-up | "
             "max rel. objective diff | path points certified | path solver(s) | "
             "Clarabel solve time (s) | bound: raw scratch / Clarabel time |",
             "|---|---|---|---|---|---|---|---|---|---|---|---|---|---|"]
    for r in path_rows:
        lines.append(f"| {r[0]} | {r[1]:.3f} | {r[2]:.3f} | {r[3]:.1f}x | {r[4]:.3f} | "
                     f"{r[5]:.1f}x | {r[6]:.3f} | {r[7]:.3f} | {r[8]:.1f}x | {r[9]:.1e} | "
                     f"{r[10]} | {r[11]} | {r[12]:.3f} | {r[13]:.1f}x |")
    met = [r[0] for r in path_rows if r[3] >= 3.0]
    met_same = [r[0] for r in path_rows if r[5] >= 3.0]
    capped = [r[0] for r in path_rows if r[13] < 3.0]
    lines += ["", f"Target (path >= 3x faster than scratch): met against the default-solver "
              f"scratch on {len(met)}/{len(path_rows)} problems ({'; '.join(met) or 'none'}), "
              f"against the same-solver scratch on {len(met_same)}/{len(path_rows)} "
              f"({'; '.join(met_same) or 'none'}). DPP saves the canonicalization (a few ms "
              f"per problem); the speed-up beyond that needs a solver that re-uses the "
              f"previous point: OSQP (ADMM + polish) does on the squared-loss QPs with l1 / "
              f"elastic net. Clarabel (interior point) restarts from scratch at every lambda, "
              f"so where it must be used (hinge losses, on which ADMM needs thousands of "
              f"iterations; logistic, an exponential-cone problem) the per-point solve "
              f"dominates as n grows and the ratio is (canonicalize + solve) / solve. The "
              f"last column is that ratio's ceiling, raw scratch time over Clarabel's own "
              f"solve time: a DPP path that paid nothing but Clarabel would still be below 3x "
              f"on {len(capped)}/{len(path_rows)} problems ({'; '.join(capped) or 'none'})."]
    lines += ["", f"## Newton vs scikit-learn lbfgs: logistic + l2, n={newton['n']}, "
              f"d={newton['d']}, C={newton['C']:g} (lam = 1/(nC))", "",
              f"Single thread (threadpoolctl), interleaved runs, best / median of "
              f"{NEWTON_REPEATS}.", "",
              "| method | best (ms) | median (ms) | iterations | objective F | note |",
              "|---|---|---|---|---|---|",
              f"| convexlearn newton | {newton['t_newton'][0] * 1e3:.2f} | "
              f"{newton['t_newton'][1] * 1e3:.2f} | {newton['newton_iter']} | "
              f"{newton['F_newton']:.12f} | final gradient norm {newton['grad_norm']:.1e}; "
              f"Hessian rows per step {newton['hessian_rows']} |"]
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
    RESULTS.parent.mkdir(parents=True, exist_ok=True)
    tmp = RESULTS.with_suffix(".tmp")
    tmp.write_text(text)
    tmp.replace(RESULTS)
    print(text)


if __name__ == "__main__":
    main()
