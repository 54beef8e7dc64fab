"""Reliability sweep of the certified exact routes: regularized ERM and the linear SVM.

Run from the repository root: ``python benchmarks/sweep_exact_erm.py [--quick] [--only erm|svm]
[--seed N]``. --seed (default 0) draws other synthetic data sets, sample weights and
subsamples (the breast cancer and diabetes features stay): a second seed checks that the
picture does not belong to one draw; the record says which seed it ran.
With --record, writes benchmarks/results/sweep_exact_erm.md.

Every case runs ``solve()`` (method "exact") in a worker process with a time limit and
records the route that answered (``provenance["route"]``), the routes that failed before it
(``provenance["fallback_from"]``), the status, the certificate's figures and the time; and,
where scikit-learn solves the same problem, the anchor's time on the same data. A side
whose first run takes under REPEAT_UNDER (0.1 s) runs REPEATS (3) times in all, each time
on a new problem object (ours) or a new estimator (scikit-learn's), and keeps the best:
single runs of millisecond problems on a shared machine move by tens of percent. The
first runs' ratios are reported beside the best ones.

A case *fails* when the status is not "optimal", or when the answer came from a cvxpy route
although the chain has a fast route for the problem (a fallback). Problems whose chain is the
cvxpy route alone (lp penalty, exponential + l1, hinge + elastic net, ...) are "cvxpy by
design" and capped at n <= 600 so that the sweep stays within ~15 minutes.

Conventions of the anchors (ours: F = (1/n) sum loss + lam R(w), b unpenalized; with sample
weights s the loss term is (1/sum s) sum s_i loss_i; R = ||w||_1, 1/2 ||w||^2, or
l1_ratio ||w||_1 + (1 - l1_ratio)/2 ||w||^2):

* squared + l1: ``Lasso(alpha=lam/2)``; squared + elastic_net: ``ElasticNet(alpha=lam/2,
  l1_ratio)`` (weighted: scikit-learn rescales s to sum n, the same alpha); squared + l2:
  ``Ridge(alpha=N lam/2)``, N = n or sum s (Ridge keeps s as given);
* logistic + l2 / none: ``LogisticRegression(C=1/(N lam))`` (lbfgs, intercept unpenalized);
  logistic + l1: ``LogisticRegression(penalty="l1", solver="liblinear")`` (liblinear
  penalizes its intercept: close, not the same problem; a timing reference only);
* hinge + l2: ``SVC(kernel="linear", C=1/(n lam))``; squared_hinge + l2:
  ``LinearSVC(C=1/(n lam))`` (intercept penalized: timing reference only);
* SVM (linear kernel): ``SVC(kernel="linear", C)`` with an intercept (the same problem,
  LIBSVM stops at tol=1e-3, uncertified), ``LinearSVC(loss="hinge", fit_intercept=False,
  C)`` without one (the same problem).
"""

from __future__ import annotations

import multiprocessing as mp
import os
import sys
import time
import traceback
import warnings

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from _common import best_of_quick, markdown_table, write_result  # noqa: E402

QUICK = "--quick" in sys.argv
ONLY = sys.argv[sys.argv.index("--only") + 1] if "--only" in sys.argv else None
SEED = int(sys.argv[sys.argv.index("--seed") + 1]) if "--seed" in sys.argv else 0
CASE_TIMEOUT = 90.0
ANCHOR_TIMEOUT = 30.0
REPEAT_UNDER = 0.1      # seconds: a side faster than this on its first run runs again
REPEATS = 3             # runs in all of such a side; the best is kept
CVXPY_ONLY_MAX_N = 600
LAM_FRACTIONS = (0.5, 1e-2, 1e-3, 1e-4)
ALL_LOSSES = ("squared", "squared_classification", "logistic", "logistic_log2", "exponential",
              "squared_hinge", "hinge", "perceptron")
ALL_PENALTIES = ("none", "l1", "l2", "elastic_net", "lp")
FAST_ERM = [("squared", "l1"), ("squared", "elastic_net"), ("squared", "l2"),
            ("squared", "none"), ("logistic", "l1"), ("logistic", "elastic_net"),
            ("logistic", "l2"), ("logistic", "none"), ("squared_classification", "l1"),
            ("squared_hinge", "l2"), ("exponential", "l2"), ("hinge", "l2"), ("hinge", "l1"),
            ("perceptron", "l1")]


# ----------------------------------------------------------------------- data
def _dataset(name: str):
    """(X, y_regression, y_labels, sample_weight) of a named data set; deterministic."""
    from sklearn import datasets as ds
    from scipy import sparse
    rng = np.random.default_rng(SEED)
    w = None
    if name == "diabetes":
        X, t = ds.load_diabetes(return_X_y=True)
    elif name.startswith("bc_"):
        X, lab = ds.load_breast_cancer(return_X_y=True)
        t = lab.astype(float)
        if name != "bc_raw":
            X = (X - X.mean(0)) / X.std(0)
        if name == "bc_dup":
            X = np.hstack([X, X[:, :5]])
        elif name == "bc_const":
            X = np.hstack([X, np.full((X.shape[0], 1), 3.0)])
        elif name == "bc_x1e4":
            X = X * 1e4
        elif name == "bc_x1e-4":
            X = X * 1e-4
        elif name == "bc_mixed_scale":
            X = X * np.where(np.arange(X.shape[1]) % 2 == 0, 1e4, 1e-4)
        elif name == "bc_weights":
            w = rng.integers(0, 4, X.shape[0]).astype(float)
        elif name == "bc_sparse":
            X = sparse.csr_matrix(np.where(np.abs(X) > 1.0, X, 0.0))
        return X, t, lab, w
    elif name.startswith("reg_"):           # reg_<n>x<d>: correlated features (low rank)
        n, d = map(int, name[4:].split("x"))
        X, t = ds.make_regression(n, d, n_informative=max(2, d // 5), effective_rank=max(2, d // 4),
                                  noise=1.0, random_state=SEED)
    elif name.startswith("clf_"):           # clf_<n>x<d>: redundant (correlated) features
        n, d = map(int, name[4:].split("x"))
        X, lab = ds.make_classification(n, d, n_informative=max(2, d // 5),
                                        n_redundant=max(1, d // 5), flip_y=0.05,
                                        random_state=SEED)
        return X, lab.astype(float), lab, None
    elif name == "sparse_2000x500":
        X = sparse.random(2000, 500, density=0.02, format="csr", random_state=SEED)
        wt = np.random.default_rng(SEED + 1).standard_normal(500)
        t = X @ wt + 0.1 * rng.standard_normal(2000)
        return X, t, (t > np.median(t)).astype(int), None
    else:
        raise KeyError(name)
    return X, t, (t > np.median(t)).astype(int), w


def _svm_dataset(name: str):
    from sklearn import datasets as ds
    if name in ("bc_raw", "bc_mixed_scale"):
        X, y = ds.load_breast_cancer(return_X_y=True)
        if name == "bc_mixed_scale":        # features alternately x 1e4 and x 1e-4
            X = (X - X.mean(0)) / X.std(0) * np.where(np.arange(30) % 2 == 0, 1e4, 1e-4)
        return X, y, None
    kind, size = name.split("_", 1)
    n, d = map(int, size.split("x"))
    if kind == "blobs":          # well separated
        X, y = ds.make_blobs(n, d, centers=2, cluster_std=1.0, random_state=SEED)
    elif kind == "blobsover":    # overlapping blobs
        X, y = ds.make_blobs(n, d, centers=[[0.0] * d, [1.0] * d], cluster_std=1.0,
                             random_state=SEED)
    elif kind == "sep":          # separable make_classification
        X, y = ds.make_classification(n, d, flip_y=0.0, class_sep=3.0, random_state=SEED)
    elif kind == "over":
        X, y = ds.make_classification(n, d, flip_y=0.1, random_state=SEED)
    elif kind == "conflict":     # every point twice, with both labels (w = 0 optimal)
        X, y = ds.make_classification(n // 2, d, random_state=SEED)
        X, y = np.vstack([X, X]), np.concatenate([y, 1 - y])
    elif kind == "wide":         # d > n
        X, y = ds.make_classification(n, d, n_informative=d // 10, flip_y=0.05,
                                      random_state=SEED)
    elif kind == "wover":        # overlapping, integer sample weights (zeros included)
        X, y = ds.make_classification(n, d, flip_y=0.1, random_state=SEED)
        return X, y, np.random.default_rng(SEED).integers(0, 4, n).astype(float)
    else:
        raise KeyError(name)
    return X, y, None


def _lam_max(X, y, loss, intercept, weights, l1_ratio=1.0) -> float:
    """||grad_w of the loss term at (0, b0)||_inf / l1_ratio, b0 the best intercept alone:
    the smallest lam with w = 0 optimal for the l1 penalty (the scale of the lam grid)."""
    import convexlearn as cl
    from scipy.optimize import minimize_scalar
    erm = cl.ERM(X, y, loss=loss, penalty="none", lam=0.0, intercept=intercept,
                 sample_weight=weights)
    oracle = erm.oracle()
    b0 = 0.0
    if intercept:
        b0 = minimize_scalar(lambda b: oracle.loss_value(oracle.join(np.zeros(X.shape[1]), b)),
                             bounds=(-50, 50), method="bounded",
                             options={"xatol": 1e-12}).x
    _, g = oracle.loss_value_grad(oracle.join(np.zeros(X.shape[1]), b0))
    return float(np.max(np.abs(g[:X.shape[1]]))) / l1_ratio


# ---------------------------------------------------------------------- anchors
def _erm_anchor(X, y_reg, y_lab, loss, pen, lam, w, n):
    """(name, seconds) of scikit-learn on the same problem, or None."""
    from sklearn import linear_model as lm, svm as sksvm
    sw = None if w is None else w
    n_eff = n if w is None else float(w.sum())
    if loss == "squared" and pen == "l1":
        est, yy = lm.Lasso(alpha=lam / 2, max_iter=100000, tol=1e-8), y_reg
    elif loss == "squared" and pen == "elastic_net":
        est, yy = lm.ElasticNet(alpha=lam / 2, l1_ratio=0.5, max_iter=100000, tol=1e-8), y_reg
    elif loss == "squared" and pen == "l2":
        est, yy = lm.Ridge(alpha=n_eff * lam / 2), y_reg
        sw = None if w is None else w
    elif loss == "logistic" and pen in ("l2", "none"):
        kw = {"C": 1.0 / (n_eff * lam)} if pen == "l2" else {"penalty": None}
        est, yy = lm.LogisticRegression(max_iter=10000, tol=1e-8, **kw), y_lab
    elif loss == "logistic" and pen == "l1":
        est, yy = lm.LogisticRegression(penalty="l1", solver="liblinear", C=1 / (n_eff * lam),
                                        tol=1e-8, max_iter=10000), y_lab
    elif loss == "hinge" and pen == "l2":
        est, yy = sksvm.SVC(kernel="linear", C=1.0 / (n_eff * lam), max_iter=2_000_000), y_lab
    elif loss == "squared_hinge" and pen == "l2":
        est, yy = sksvm.LinearSVC(C=1.0 / (n_eff * lam), max_iter=100000, tol=1e-8), y_lab
    else:
        return None
    name = type(est).__name__
    if name == "SVC" and n > 5000:
        return None
    start = time.perf_counter()
    est.fit(X, yy, sample_weight=sw)
    return name, time.perf_counter() - start


def _svm_anchor(X, y, C, intercept, w):
    from sklearn import svm as sksvm
    if intercept:
        if X.shape[0] > 5000 and C >= 1e3:
            return None          # LIBSVM at C = 1e3 on 20000 points: minutes
        est = sksvm.SVC(kernel="linear", C=C, max_iter=5_000_000)
    else:
        est = sksvm.LinearSVC(loss="hinge", fit_intercept=False, C=C, dual=True,
                              max_iter=100000, tol=1e-6)
    start = time.perf_counter()
    est.fit(X, y, sample_weight=w)
    return type(est).__name__, time.perf_counter() - start


# ------------------------------------------------------------------------ cases
def _run_anchor(case: dict) -> dict:
    """The scikit-learn anchor of a case (its own job: LIBSVM at C = 1e3 may take minutes)."""
    warnings.simplefilter("ignore")
    if case["kind"] == "erm":
        X, t, lab, w = _dataset(case["data"])

        def fit():
            return _erm_anchor(X, t, lab, case["loss"], case["penalty"], case["lam"], w,
                               X.shape[0])
    else:
        X, y, w = _svm_dataset(case["data"])

        def fit():
            return _svm_anchor(X, y, case["C"], case["intercept"], w)
    anchor = fit()
    if anchor is None:
        return {}
    best = best_of_quick(anchor[1], lambda: fit()[1], REPEAT_UNDER, REPEATS)  # new estimators
    return {"anchor": anchor[0], "anchor_time": best, "anchor_first": anchor[1]}


def _timed_solve(make, out: dict):
    """make().solve() timed; its route, status and fallbacks into ``out`` (None when it
    raised: the exception is the case's outcome). A first run under REPEAT_UNDER is
    repeated on new problems from ``make`` (REPEATS runs in all): ``out["time"]`` is the
    best, ``out["first_time"]`` the first."""
    sol = _solve_once(make(), out)
    if sol is None:
        return None

    def again():
        rerun = {}
        if _solve_once(make(), rerun) is None or rerun["status"] != out["status"]:
            return None                 # a repeat that differs: the first run stands
        return rerun["time"]
    out.update(time=best_of_quick(out["time"], again, REPEAT_UNDER, REPEATS),
               first_time=out["time"])
    return sol


def _solve_once(problem, out: dict):
    """problem.solve() timed once (see :func:`_timed_solve`)."""
    import convexlearn as cl
    start = time.perf_counter()
    try:
        sol = problem.solve()
    except cl.ConvexLearnError as exc:
        out.update(status=f"raised {type(exc).__name__}", route="-",
                   time=time.perf_counter() - start, note=str(exc)[:120])
        return None
    out.update(time=time.perf_counter() - start, status=sol.status,
               route=sol.provenance.get("route"), fallback=sol.provenance.get("fallback_from"))
    return sol


def _run_case(case: dict) -> dict:
    import convexlearn as cl
    if case.get("part") == "anchor":
        return _run_anchor(case)
    from convexlearn.routes.erm import exact_chain as erm_chain
    warnings.simplefilter("ignore")
    out = {}
    if case["kind"] == "erm":
        X, t, lab, w = _dataset(case["data"])
        loss, pen = case["loss"], case["penalty"]
        y = t if loss == "squared" else lab
        kw = {"l1_ratio": 0.5} if pen == "elastic_net" else {"p": 1.5} if pen == "lp" else {}
        probe = cl.ERM(X, y, loss=loss, penalty=pen, lam=1.0, intercept=case["intercept"],
                       sample_weight=w, **kw)
        chain = erm_chain(probe)
        if chain == ["exact-primal"] and X.shape[0] > CVXPY_ONLY_MAX_N:
            idx = np.random.default_rng(SEED).permutation(X.shape[0])[:CVXPY_ONLY_MAX_N]
            X, y = X[idx], y[idx]
            t, lab = t[idx], lab[idx]
            w = None if w is None else w[idx]
        if pen == "none":
            lam = 0.0
        else:
            lam = case["frac"] * _lam_max(X, y, loss, case["intercept"], w,
                                          0.5 if pen == "elastic_net" else 1.0)
        def make():
            return cl.ERM(X, y, loss=loss, penalty=pen, lam=lam,
                          intercept=case["intercept"], sample_weight=w, **kw)
        out.update(n=X.shape[0], d=X.shape[1], lam=lam, chain="/".join(chain))
        sol = _timed_solve(make, out)
        if sol is None:
            return out
        cert = sol.provenance.get("certificate", {})
        out.update(rel_dist=cert.get("relative_distance", np.nan),
                   rel_gap=cert.get("relative_gap", np.nan))
        out["anchor_ok"] = bool(case["intercept"] and not hasattr(X, "tocsr")
                                and chain != ["exact-primal"])
        return out
    X, y, w = _svm_dataset(case["data"])
    def make():
        return cl.SVM(X, y, C=case["C"], kernel="linear", intercept=case["intercept"],
                      sample_weight=w)
    out.update(n=X.shape[0], d=X.shape[1], chain="/".join(
        __import__("convexlearn.routes.svm", fromlist=["x"]).exact_chain(make())))
    sol = _timed_solve(make, out)
    if sol is None:
        return out
    out.update(rel_gap=sol.extra.get("certificate", {}).get("relative_gap", np.nan),
               rel_dist=sol.report.max_violation if sol.report is not None else np.nan,
               anchor_ok=True)
    return out


def erm_cases() -> list[dict]:
    cases = []
    fracs = LAM_FRACTIONS[:2] if QUICK else LAM_FRACTIONS
    # every loss x penalty on a regression and a classification set
    for data in ("diabetes", "bc_std"):
        for loss in ALL_LOSSES:
            if data == "diabetes" and loss != "squared":
                continue
            for pen in ALL_PENALTIES:
                for frac in (fracs[:1] if pen == "none" else fracs):
                    cases.append(dict(kind="erm", data=data, loss=loss, penalty=pen,
                                      frac=frac, intercept=True))
    # the fast routes on the hard data
    hard = ["bc_raw", "bc_dup", "bc_const", "bc_x1e4", "bc_x1e-4", "bc_mixed_scale",
            "bc_weights", "bc_sparse", "reg_200x300", "reg_1000x50", "reg_5000x100",
            "reg_2000x5", "clf_200x300", "clf_1000x50", "clf_5000x20", "clf_2000x5",
            "sparse_2000x500"]
    if QUICK:
        hard = hard[:4]
    for data in hard:
        regression = data.startswith("reg_")
        for loss, pen in FAST_ERM:
            if regression != (loss == "squared") and not data.startswith(("bc_", "sparse")):
                continue
            for frac in (fracs[:1] if pen == "none" else fracs):
                cases.append(dict(kind="erm", data=data, loss=loss, penalty=pen, frac=frac,
                                  intercept=True))
    # without an intercept, a few
    for loss, pen in (("squared", "l1"), ("logistic", "l2"), ("hinge", "l2"), ("hinge", "l1")):
        for frac in fracs[:2]:
            cases.append(dict(kind="erm", data="bc_std", loss=loss, penalty=pen, frac=frac,
                              intercept=False))
    return cases


def svm_cases() -> list[dict]:
    data = ["bc_raw", "blobs_2000x2", "blobsover_2000x2", "sep_5000x50", "over_5000x50",
            "wover_5000x50", "over_20000x20", "blobsover_20000x2", "bc_mixed_scale",
            "conflict_2000x10", "wide_200x500"]
    if QUICK:
        data = data[:4]
    return [dict(kind="svm", data=d, C=C, intercept=icpt)
            for d in data for C in (1e-3, 1.0, 1e3) for icpt in (True, False)]


# ----------------------------------------------------------------------- worker
def _warm_up():
    """One tiny solve per fast route: the compiled kernels load from numba's cache once per
    process (~0.3 s), which the first timed case would otherwise carry."""
    import convexlearn as cl
    rng = np.random.default_rng(0)
    X = rng.standard_normal((40, 3))
    y = np.where(X[:, 0] + 0.5 * rng.standard_normal(40) > 0, 1, -1)
    for loss, pen in (("squared", "l1"), ("logistic", "l1"), ("logistic", "l2"),
                      ("hinge", "l2"), ("hinge", "l1")):
        cl.ERM(X, X[:, 1] if loss == "squared" else y, loss=loss, penalty=pen,
               lam=0.01).solve()
    cl.SVM(X, y, C=1.0, kernel="linear").solve()


def _worker(conn):
    warnings.simplefilter("ignore")
    _warm_up()
    while True:
        case = conn.recv()
        if case is None:
            return
        try:
            conn.send(_run_case(case))
        except Exception as exc:   # noqa: BLE001 - recorded as the case's outcome
            conn.send({"status": f"error {type(exc).__name__}", "route": "-",
                       "note": (str(exc) or traceback.format_exc(limit=1))[:160]})


class Pool:
    """One worker process; a case over the time limit kills it and a new one starts."""

    def __init__(self):
        self.proc = None

    def start(self):
        ctx = mp.get_context("fork")
        self.conn, child = ctx.Pipe()
        self.proc = ctx.Process(target=_worker, args=(child,), daemon=True)
        self.proc.start()

    def run(self, case: dict, timeout: float) -> dict:
        if self.proc is None or not self.proc.is_alive():
            self.start()
        self.conn.send(case)
        if self.conn.poll(timeout):
            return self.conn.recv()
        self.proc.kill()
        self.proc.join()
        self.proc = None
        return {"status": f"timeout > {timeout:.0f} s", "route": "-", "time": timeout}

    def close(self):
        if self.proc is not None and self.proc.is_alive():
            self.conn.send(None)
            self.proc.join(5)


def _failed(r: dict) -> bool:
    if r.get("status") != "optimal":
        return not str(r.get("status", "")).startswith("raised Unbounded")
    fast = r.get("chain", "").split("/")[0]
    return fast not in ("exact-primal", "") and str(r.get("route", "")).startswith("exact-")\
        and fast != r.get("route")


def _fmt_fallback(fb) -> str:
    if not fb:
        return ""
    return "; ".join(f"{k}: {str(v)[:90]}" for k, v in fb.items()).replace("|", "/")


def main():
    cases = []
    if ONLY in (None, "erm"):
        cases += erm_cases()
    if ONLY in (None, "svm"):
        cases += svm_cases()
    pool = Pool()
    rows, failures, first_ratios = [], [], {}
    wall = time.perf_counter()
    for i, case in enumerate(cases):
        r = pool.run(case, CASE_TIMEOUT)
        if r.pop("anchor_ok", False):
            a = pool.run({**case, "part": "anchor", "lam": r.get("lam")}, ANCHOR_TIMEOUT)
            if a.get("status", "").startswith("timeout"):
                a = {"anchor": "sklearn", "anchor_time": f"> {ANCHOR_TIMEOUT:.0f}"}
            r.update({k: v for k, v in a.items()
                      if k in ("anchor", "anchor_time", "anchor_first")})
        label = (f"{case['data']} {case['loss']}+{case['penalty']} frac={case['frac']:g}"
                 if case["kind"] == "erm" else f"{case['data']} C={case['C']:g}")
        label += "" if case["intercept"] else " no-b"
        ratio = (r["time"] / r["anchor_time"]) if isinstance(r.get("anchor_time"), float) \
            else np.nan
        row = [case["kind"], label, r.get("n", ""), r.get("d", ""), r.get("route", "-"),
               r.get("status", "?"), r.get("rel_dist", np.nan), r.get("rel_gap", np.nan),
               r.get("time", np.nan), r.get("anchor", ""), r.get("anchor_time", np.nan), ratio,
               _fmt_fallback(r.get("fallback")) or r.get("note", "")]
        rows.append(row)
        if isinstance(r.get("anchor_first"), float):
            first_ratios.setdefault(case["kind"], []).append(
                r.get("first_time", r["time"]) / r["anchor_first"])
        flag = _failed(r)
        if flag:
            failures.append(row)
        print(f"[{i + 1}/{len(cases)}] {'FAIL ' if flag else ''}{label}: {r.get('route')} "
              f"{r.get('status')} {r.get('time', float('nan')):.3g}s "
              f"{r.get('anchor', '')} ratio {ratio:.3g} "
              f"{_fmt_fallback(r.get('fallback')) or r.get('note', '')}", flush=True)
    pool.close()
    wall = time.perf_counter() - wall
    header = ["kind", "case", "n", "d", "route", "status", "rel. dist / KKT", "rel. gap",
              "ours s", "anchor", "anchor s", "ratio", "fallback / note"]
    n_fast = sum(1 for r in rows if r[5] == "optimal" and not str(r[4]).startswith("exact-")
                 or r[4] == "exact-linear" and r[5] == "optimal")
    by_design = sum(1 for r in rows if r[5] == "optimal" and r[4] == "exact-primal"
                    and r not in failures)
    summary = (f"{len(rows)} cases (data seed {SEED}) in {wall:.0f} s (one worker, "
               f"{CASE_TIMEOUT:.0f} s limit per case; 2 cores, load average "
               f"{os.getloadavg()[0]:.1f} at the end; best of {REPEATS} runs a side under "
               f"{REPEAT_UNDER:g} s). "
               f"Certified by a fast route: {n_fast}; by cvxpy, the only route of the chain: "
               f"{by_design}; failures (status != optimal, or a fallback from a fast route "
               f"to cvxpy): {len(failures)}.")
    print(summary)
    ratios = {}
    for r in rows:
        if isinstance(r[11], float) and np.isfinite(r[11]):
            ratios.setdefault((r[0], r[9], r[4]), []).append(r[11])
    by_anchor = markdown_table(
        ["kind", "anchor", "our route", "cases", "median ratio", "max ratio"],
        [[*k, len(v), float(np.median(v)), float(np.max(v))] for k, v in sorted(ratios.items())])
    print(by_anchor)
    overall = []
    for kind in ("erm", "svm"):
        every = [r[11] for r in rows if r[0] == kind and isinstance(r[11], float)
                 and np.isfinite(r[11])]
        if every:
            overall.append(f"{kind}: {len(every)} cases with an anchor, ratio median "
                           f"{np.median(every):.3g}, 90th percentile "
                           f"{np.percentile(every, 90):.3g} (first runs only: median "
                           f"{np.median(first_ratios[kind]):.3g}, 90th percentile "
                           f"{np.percentile(first_ratios[kind], 90):.3g})")
            print(overall[-1])
    summary += "\n\n" + "; ".join(overall) + "."
    body = (__doc__.split("\n\n", 1)[1] + "\n\n" + summary + "\n\n## Time over the "
            "anchor's (ours / scikit-learn, same problem, same run)\n\n" + by_anchor
            + "\n\n## Failures\n\n"
            + (markdown_table(header, failures) if failures else "none") + "\n\n## All cases\n\n"
            + markdown_table(header, rows))
    if not QUICK and ONLY is None:
        print(write_result("sweep_exact_erm", "Sweep of the certified exact routes (ERM, "
                           "linear SVM)", body))


if __name__ == "__main__":
    main()
