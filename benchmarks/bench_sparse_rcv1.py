"""Exact solves on an rcv1-shaped sparse problem against scikit-learn (issue 25), and the
svmlight files scikit-learn ships.

Data (``bench_sparse_linear.text_like``): n x 50 000 CSR, 70 values a row (columns
uniform, values uniform on [0, 1)), a planted w* with 10 % of the features nonzero, labels
y = sign(<x, w*> + noise), noise 0.3 std(<x, w*>); rcv1 itself is 804 414 x 47 236 with ~76
values a row (the training split 23 149 rows; n = 200 000 here, ``--n``). Every problem is
solved by ``solve()`` (certified at 1e-9, the certificate inside the time) and compared with
its scikit-learn anchor on the same objective:

* linear SVM: ``SVM(X, y, C=1, intercept=False)`` vs ``LinearSVC(loss="hinge", dual=True,
  fit_intercept=False, C=1)`` (LinearSVC penalizes an intercept: both without one);
* logistic + l2: ``ERM(X, y, "logistic", "l2", lam=1/n, intercept=False)`` vs
  ``LogisticRegression(C=1, fit_intercept=False)`` with ``solver="liblinear"`` and
  ``solver="lbfgs"`` (F = F_LR / (n C));
* lasso: ``ERM(X, y, "squared", "l1", lam)`` vs ``Lasso(alpha=lam / 2)`` (F = 2 F_Lasso;
  y the +-1 labels as targets, with intercept; lam = lam_max / 5);
* elastic net: ``ERM(..., "elastic_net", lam, l1_ratio=0.5)`` vs ``ElasticNet(alpha=lam / 2,
  l1_ratio=0.5)``.

Each anchor's ``tol`` is tightened (1e-2, 1e-3, ...) until its objective is within 1e-9
(relative) of our certified optimum, F_anchor - F_ours <= 1e-9 |F_ours|, recomputed by our
problem's ``objective`` (the SVM's primal); the first tol that agrees is the one compared.
If none agrees by 1e-12 the row says so.

Every measurement runs in a fresh subprocess (``--child``) that generates the data, then
solves twice (glibc's mmap threshold fixed at 128 KiB, so that memory freed by the first
solve leaves the resident set): the first solve's wall time is "first" (imports done,
compiled code not yet loaded), the second's is "warm"; the peak resident set is reset
before the second solve (``/proc/self/clear_refs``) and its peak beyond the data is VmHWM
minus VmRSS before it.
CPU seconds (``time.process_time``, single-threaded BLAS) of the warm solve are reported
beside the wall time: the machine is shared. For the anchors the tol search runs in one
child (each fit a warm fit after the first): the agreeing fit's wall, CPU and peak are
that child's, and one more fresh child gives its first call.

Run: python benchmarks/bench_sparse_rcv1.py [--n N] [--record] [--problems "lasso,elastic
net"] [--from-log FILE] [--note TEXT] (the table from the lines runs printed, measuring
nothing: for runs stopped part way or of a few problems each; the note goes above it)
[--anchor-budget S] (each anchor's tol search, and its first call, stopped after S wall
seconds: the last fit that finished stands, marked "stopped after S s")
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from _common import (markdown_table, proc_status_bytes, reset_peak_rss,  # noqa: E402
                     write_result)
from bench_sparse_linear import text_like  # noqa: E402

N = int(sys.argv[sys.argv.index("--n") + 1]) if "--n" in sys.argv else 200_000
D, PER_ROW, SEED = 50_000, 70, 1
TOLS = (1e-2, 1e-3, 1e-4, 1e-5, 1e-6, 1e-7, 1e-8, 1e-9, 1e-10, 1e-11, 1e-12)
AGREE = 1e-9
LASSO_FRACTION = 1 / 5           # lam = lam_max / 5 for the lasso and the elastic net
TRIED = "TRIED "                 # the prefix of an anchor fit's line in a child's output
#: --anchor-budget S: each anchor's tol search is stopped after S seconds (wall)
BUDGET = (float(sys.argv[sys.argv.index("--anchor-budget") + 1])
          if "--anchor-budget" in sys.argv else None)

#: problem -> (our call, anchors: label -> scikit-learn constructor at a given tol)
PROBLEMS = {
    "linear SVM": ("SVM(C=1, intercept=False)",
                   {"LinearSVC(loss='hinge')": "LinearSVC"}),
    "logistic + l2": ("ERM(logistic, l2, lam=1/n, intercept=False)",
                      {"LogisticRegression(liblinear)": "liblinear",
                       "LogisticRegression(lbfgs)": "lbfgs"}),
    "lasso": ("ERM(squared, l1, lam=lam_max/5)", {"Lasso": "Lasso"}),
    "elastic net": ("ERM(squared, elastic_net, lam=lam_max/5, l1_ratio=0.5)",
                    {"ElasticNet(l1_ratio=0.5)": "ElasticNet"}),
}


def data(n=None):
    return text_like(n=N if n is None else n, d=D, per_row=PER_ROW, seed=SEED)


def lasso_lam(X, y) -> float:
    """lam_max / 5 of F = (1/n) ||y - X w - b||^2 + lam ||w||_1 (lam_max = (2/n) ||X^T yc||_inf)."""
    return LASSO_FRACTION * 2.0 * float(np.abs(X.T @ (y - y.mean())).max()) / X.shape[0]


def problem(problem_name, X, y):
    """Our problem object (its ``objective`` measures every answer)."""
    import convexlearn as cl
    n = X.shape[0]
    if problem_name == "linear SVM":
        return cl.SVM(X, y, C=1.0, intercept=False)
    if problem_name == "logistic + l2":
        return cl.ERM(X, y, "logistic", "l2", lam=1.0 / n, intercept=False)
    kw = {"l1_ratio": 0.5} if problem_name == "elastic net" else {}
    return cl.ERM(X, y, "squared", "l1" if problem_name == "lasso" else "elastic_net",
                  lam=lasso_lam(X, y), **kw)


def objective(problem_name, X, y, w, b) -> float:
    if problem_name == "linear SVM":      # the SVM's primal, C = 1
        return 0.5 * float(w @ w) + float(np.maximum(0.0, 1.0 - y * (X @ w)).sum())
    return problem(problem_name, X, y).objective(w, b)


def anchor_fit(kind, X, y, tol):
    """(w, b, iterations) of the scikit-learn anchor at ``tol``."""
    import warnings
    from sklearn.exceptions import ConvergenceWarning
    from sklearn.linear_model import ElasticNet, Lasso, LogisticRegression
    from sklearn.svm import LinearSVC
    warnings.simplefilter("ignore", ConvergenceWarning)
    if kind == "LinearSVC":
        m = LinearSVC(loss="hinge", dual=True, fit_intercept=False, C=1.0, tol=tol,
                      max_iter=1_000_000)
    elif kind in ("liblinear", "lbfgs"):
        m = LogisticRegression(C=1.0, fit_intercept=False, solver=kind, tol=tol,
                               max_iter=100_000)
    else:
        lam = lasso_lam(X, y)
        m = (Lasso(alpha=lam / 2, tol=tol, max_iter=1_000_000) if kind == "Lasso" else
             ElasticNet(alpha=lam / 2, l1_ratio=0.5, tol=tol, max_iter=1_000_000))
    m.fit(X, y)
    n_iter = np.max(np.atleast_1d(m.n_iter_))
    return np.asarray(m.coef_, dtype=float).ravel(), float(np.ravel(m.intercept_)[0]), \
        int(n_iter)


# ------------------------------------------------------------------ the child process
def _timed(fn):
    """(result, wall s, CPU s, peak bytes beyond what was resident before)."""
    base = proc_status_bytes("VmRSS")
    reset_peak_rss()
    t, c = time.perf_counter(), time.process_time()
    out = fn()
    wall, cpu = time.perf_counter() - t, time.process_time() - c
    return out, wall, cpu, proc_status_bytes("VmHWM") - base


def child(spec: dict) -> dict:
    X, y = data(spec.get("n"))
    name, side = spec["problem"], spec["side"]
    if side == "ours":
        import convexlearn  # noqa: F401

        def run():
            s = problem(name, X, y).solve()
            rep = getattr(s, "report", None)
            gap = (rep.relative_gap if rep is not None and rep.relative_gap is not None
                   else s.extra.get("certificate", {}).get("relative_gap"))
            return s.w, float(s.b), dict(status=s.status, route=s.provenance.get("route"),
                                         rel_gap=gap, nnz=int(np.count_nonzero(s.w)))
        (_, first, _, _) = _timed(run)
        (w, b, info), wall, cpu, peak = _timed(run)
        return dict(first=first, warm=wall, cpu=cpu, peak=peak,
                    F=objective(name, X, y, w, b), **info)
    if side == "first":         # an anchor's first call at the agreed tol
        import sklearn.linear_model  # noqa: F401
        import sklearn.svm  # noqa: F401
        _, wall, _, _ = _timed(lambda: anchor_fit(spec["kind"], X, y, spec["tol"]))
        return dict(first=wall)
    tried = []
    for tol in TOLS:            # the tol search: each fit after the first is warm
        (w, b, it), wall, cpu, peak = _timed(lambda: anchor_fit(spec["kind"], X, y, tol))
        F = objective(name, X, y, w, b)
        rel = (F - spec["target"]) / abs(spec["target"])
        tried.append(f"{tol:g}: {rel:.1e}")
        # each fit as it ends (a run stopped by --anchor-budget keeps the fits so far)
        print(TRIED + json.dumps(dict(tol=tol, warm=wall, cpu=cpu, peak=peak, F=F, iters=it,
                                      tried=list(tried), agreed=rel <= AGREE)), flush=True)
        if rel <= AGREE:
            return dict(tol=tol, warm=wall, cpu=cpu, peak=peak, F=F, iters=it, tried=tried,
                        agreed=True)
    return dict(tol=tol, warm=wall, cpu=cpu, peak=peak, F=F, iters=it, tried=tried,
                agreed=False)


def measure(budget=None, **spec) -> dict:
    """One fresh child's figures; ``budget`` (s): the child is stopped after that long and
    its last finished fit (a ``TRIED`` line) stands, marked ``stopped`` (the tol search of
    an anchor that does not agree in time); None when no fit finished."""
    env = {**os.environ, "OMP_NUM_THREADS": "1", "OPENBLAS_NUM_THREADS": "1",
           "MKL_NUM_THREADS": "1",
           # a fixed mmap threshold: every large block is mapped and unmapped when freed
           # (glibc's dynamic threshold otherwise keeps a freed solve's memory resident,
           # and the next solve's peak beyond it reads 0)
           "MALLOC_MMAP_THRESHOLD_": "131072"}
    try:
        out = subprocess.run([sys.executable, os.path.abspath(__file__), "--child",
                              json.dumps(spec)], capture_output=True, text=True, env=env,
                             timeout=7200 if budget is None else budget)
    except subprocess.TimeoutExpired as stopped:
        text = stopped.stdout or b""
        text = text.decode() if isinstance(text, bytes) else text
        fits = [json.loads(line[len(TRIED):]) for line in text.splitlines()
                if line.startswith(TRIED)]
        if not fits:
            return None
        return dict(fits[-1], stopped=f"stopped after {budget:g} s")
    if out.returncode != 0:
        raise RuntimeError(out.stderr[-3000:])
    return json.loads(out.stdout.strip().splitlines()[-1])


def _mb(x):
    return f"{x / 2 ** 20:.1f}"


def read_log(path) -> dict:
    """The per-measurement lines a run printed ("<problem> <side> {...}"), as a dict keyed
    by (problem, side): a run stopped part way is recorded from its log (``--from-log``)."""
    import ast
    found = {}
    for line in open(path):
        for name, (_, anchors) in PROBLEMS.items():
            for side in ("ours", *anchors):
                head = f"{name} {side} "
                if line.startswith(head) and line.rstrip().endswith("}"):
                    found[(name, side)] = ast.literal_eval(line[len(head):].strip())
    return found


def rcv1_rows(n, log=None):
    """The table's rows: measured (``log`` None), or read from a run's log, where a problem
    the run did not reach gets a row saying so."""
    rows = []
    only = (sys.argv[sys.argv.index("--problems") + 1].split(",") if "--problems" in sys.argv
            else list(PROBLEMS))
    for name, (ours_label, anchors) in PROBLEMS.items():
        if log is None and name not in only:
            continue
        ours = measure(problem=name, side="ours", n=n) if log is None else log.get((name, "ours"))
        if ours is None:
            rows.append([name, "not measured: the run stopped before it"] + ["-"] * 9)
            continue
        print(name, "ours", ours, flush=True)
        for label, kind in anchors.items():
            if log is None:
                a = measure(problem=name, side="anchor", kind=kind, target=ours["F"], n=n,
                            budget=BUDGET)
                if a is not None:
                    first = measure(problem=name, side="first", kind=kind, tol=a["tol"], n=n,
                                    budget=BUDGET)
                    a["first"] = "-" if first is None else first["first"]
            else:
                a = log.get((name, label))
            if a is None:
                rows.append([name, f"{label}: not measured, the run stopped before it"
                             + (f" (no fit within --anchor-budget {BUDGET:g} s)"
                                if BUDGET is not None and log is None else "")] + ["-"] * 9)
            else:
                print(name, label, a, flush=True)
                rows.append([name, f"{label}, tol={a['tol']:g}"
                             + ("" if a["agreed"] else " (never within 1e-9)")
                             + (f" ({a['stopped']})" if a.get("stopped") else "")
                             + f", {a['iters']} iterations", "-", a["warm"], a["cpu"],
                             a["first"], 1.0, _mb(a["peak"]), 1.0,
                             f"{(a['F'] - ours['F']) / abs(ours['F']):.1e}",
                             "; ".join(a["tried"])])
            rows.append([name, ours_label.replace("SVM(", "SVM(X, y, ").replace(
                "ERM(", "ERM(X, y, ") + ".solve()",
                f"{ours['status']}, {ours['route']}, rel. gap {ours['rel_gap']:.1e}, "
                f"{ours['nnz']} nonzeros", ours["warm"], ours["cpu"], ours["first"],
                "-" if a is None else ours["cpu"] / a["cpu"], _mb(ours["peak"]),
                "-" if a is None else ours["peak"] / a["peak"], "0", "-"])
    return rows


# ------------------------------------------------------------- svmlight files
SVMLIGHT_HEADER = ["file", "problem", "ours", "ours s (the first row loads compiled code)",
                   "scikit-learn s", "(F_sklearn - F*) / |F*|"]


def svmlight_rows():
    """The svmlight files scikit-learn ships (its test data), read by our reader and
    scikit-learn's; lasso and elastic net on their labels as targets, certified, against
    Lasso / ElasticNet; and a generated rcv1-shaped problem written to a file and read back
    (the readers on a realistic file)."""
    import tempfile
    import warnings
    import convexlearn as cl
    from convexlearn.svmlight import read_svmlight
    import sklearn.datasets
    from sklearn.datasets import dump_svmlight_file, load_svmlight_file
    from sklearn.linear_model import ElasticNet, Lasso
    folder = os.path.join(os.path.dirname(sklearn.datasets.__file__), "tests", "data")
    rows = []
    for fname in ("svmlight_classification.txt",):
        path = os.path.join(folder, fname)
        ours_data = read_svmlight(path)
        Xs, ys = load_svmlight_file(path)
        Xo, yo = ours_data.X, ours_data.y
        # load_svmlight_file returns int64 indices here, which Lasso refuses
        Xs = type(Xs)((Xs.data, Xs.indices.astype(np.int32), Xs.indptr.astype(np.int32)),
                      shape=Xs.shape)
        same = (Xo.shape == Xs.shape and abs(Xo - Xs).max() == 0 and np.array_equal(yo, ys))
        for pname, pen, kw, Anchor in (("lasso", "l1", {}, Lasso),
                                       ("elastic net", "elastic_net", {"l1_ratio": 0.5},
                                        ElasticNet)):
            lam = 0.1 * 2.0 * float(np.abs(Xo.T @ (yo - yo.mean())).max()) / Xo.shape[0]
            erm = cl.ERM(Xo, yo, "squared", pen, lam=lam, **kw)
            t = time.perf_counter()
            s = erm.solve()
            t = time.perf_counter() - t
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                ta = time.perf_counter()
                m = Anchor(alpha=lam / 2, tol=1e-12, max_iter=1_000_000, **kw).fit(Xs, ys)
                ta = time.perf_counter() - ta
            Fa = erm.objective(m.coef_, float(m.intercept_))
            rows.append([f"{fname} ({Xo.shape[0]} x {Xo.shape[1]}, nnz {Xo.nnz}); readers "
                         f"agree: {same}", pname, f"{s.status}, {s.provenance.get('route')}, "
                         f"rel. gap {s.report.relative_gap:.1e}", t, ta,
                         f"{(Fa - s.objective) / abs(s.objective):.1e}"])
    X, y = text_like(n=2000, d=D, per_row=PER_ROW, seed=SEED)
    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, "rcv1_like.svm")
        dump_svmlight_file(X, y, path, zero_based=False)
        t = time.perf_counter()
        ours_data = read_svmlight(path)
        t = time.perf_counter() - t
        ta = time.perf_counter()
        Xs, ys = load_svmlight_file(path, n_features=D, zero_based=False)
        ta = time.perf_counter() - ta
    Xo = ours_data.X
    same = (Xo.shape[0] == Xs.shape[0] and abs(Xo - Xs[:, :Xo.shape[1]]).max() == 0
            and np.array_equal(ours_data.y, ys))
    s = cl.SVM(Xo, ours_data.y, C=1.0, intercept=False).solve()
    rows.append([f"rcv1-shaped 2000 x {D} written by dump_svmlight_file, read by "
                 f"read_svmlight ({t:.2f} s) and load_svmlight_file ({ta:.2f} s); agree: "
                 f"{same}", "linear SVM", f"{s.status}, {s.provenance.get('route')}", "-",
                 "-", "-"])
    return rows


def main():
    t0 = time.perf_counter()
    n = N
    X, _ = data(n)
    nnz = X.nnz
    data_mb = (X.data.nbytes + X.indices.nbytes + X.indptr.nbytes) / 2 ** 20
    del X
    log = (read_log(sys.argv[sys.argv.index("--from-log") + 1]) if "--from-log" in sys.argv
           else None)
    rows = rcv1_rows(n, log)
    table = markdown_table(
        ["problem", "call", "answer", "warm s", "warm CPU s", "first call s",
         "CPU ratio", "peak MiB beyond the data", "memory ratio", "(F - F*) / |F*|",
         "anchor tol search: (F - F*) / |F*|"], rows)
    print(table, flush=True)
    sv = markdown_table(SVMLIGHT_HEADER, svmlight_rows())
    print(sv, flush=True)
    body = (f"Each figure from a fresh subprocess (module docstring): first call, then a warm "
            f"solve in the same process; ratios are CPU seconds of the warm solves (the "
            f"machine is shared: 2 cores, several agents), memory is the warm solve's peak "
            f"resident set beyond what was resident before it (the data already was).\n\n"
            f"## rcv1-shaped {n} x {D}, {PER_ROW} values a row\n\nData: {nnz} stored values, "
            f"{data_mb:.1f} MiB of CSR arrays. F* is our certified optimum."
            + (f" {sys.argv[sys.argv.index('--note') + 1]}" if "--note" in sys.argv else "")
            + f"\n\n{table}\n\n"
            f"## The svmlight files scikit-learn ships\n\nscikit-learn bundles no real "
            f"data set in svmlight format: `fetch_rcv1` downloads rcv1 (not available "
            f"offline here), and `sklearn/datasets/tests/data/` holds small test files "
            f"(svmlight_classification.txt: 6 samples; the others are multilabel or invalid "
            f"on purpose). That file's labels are taken as regression targets (lam = "
            f"lam_max / 10); a generated rcv1-shaped problem exercises the readers on a "
            f"realistic file.\n\n{sv}\n\nTotal {time.perf_counter() - t0:.0f} s.")
    print(write_result("sparse_rcv1", "Exact sparse solves on an rcv1-shaped problem "
                       "against scikit-learn", body))


if __name__ == "__main__":
    if "--child" in sys.argv:
        print(json.dumps(child(json.loads(sys.argv[sys.argv.index("--child") + 1]))))
    elif "--svmlight" in sys.argv:
        print(markdown_table(SVMLIGHT_HEADER, svmlight_rows()))
    else:
        main()
