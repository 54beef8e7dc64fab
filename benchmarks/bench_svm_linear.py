"""The linear SVM at scale: the exact route, SMO and DCD against scikit-learn, and units.

Run from the repository root: ``python benchmarks/bench_svm_linear.py [--quick]``.
With --record, writes benchmarks/results/svm_linear.md. Every ratio is to an anchor timed in the same run
(best of ``REPEAT`` runs each, on a shared machine: the ratios matter, not the seconds).

Conventions compared like for like:

* ``SVC(kernel="linear", C)`` solves our problem (b unpenalized) with LIBSVM's stop at
  ``tol=1e-3`` (uncertified); our ``solve()`` certifies a relative duality gap <= 1e-9.
* ``LinearSVC(loss="hinge", dual=True, C)`` (LIBLINEAR) penalizes its intercept: it solves
  the homogeneous SVM on [X, 1], min 1/2 (||w||^2 + b^2) + C sum hinge - another problem.
  We compare DCD at the same ``tol`` (LIBLINEAR's projected-gradient spread; ours adds the
  intercept's multiplier and a relative gap <= tol) and the same epoch budget.
"""

from __future__ import annotations

import os
import sys
import time
import warnings
import numpy as np

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import convexlearn as cl  # noqa: E402
from _common import best_time, markdown_table, write_result  # noqa: E402
from convexlearn.certify.rational_gap import rational_duality_gap  # noqa: E402
from convexlearn.solvers.linear_svm.linear_exact import solve_linear_exact  # noqa: E402

QUICK = "--quick" in sys.argv
REPEAT = 1 if QUICK else 3
warnings.simplefilter("ignore")


def regimes():
    from sklearn.datasets import make_classification
    sep = make_classification(5000, 50, flip_y=0.0, class_sep=2.0, random_state=0)
    over = make_classification(5000, 50, flip_y=0.1, random_state=0)
    return {"nearly separable": sep, "heavy overlap": over}


def svc_objective(svm, svc) -> float:
    return svm.primal_objective(cl.Solution(w=svc.coef_.ravel(), b=float(svc.intercept_[0])))


def linear_rows():
    from sklearn.svm import SVC
    rows = []
    for name, (X, y) in regimes().items():
        svm = cl.SVM(X, y, C=1.0)
        t_svc, svc = best_time(lambda: SVC(kernel="linear", C=1.0).fit(X, y), REPEAT)
        t_ours, sol = best_time(lambda: svm.solve(), REPEAT)
        cert = sol.extra.get("certificate", {})
        rows.append([name, "solve()", sol.provenance["route"], sol.status,
                     f"{cert.get('relative_gap', float('nan')):.1e}", len(svc.support_),
                     int(np.sum(sol.alpha > 0)), t_svc, t_ours, t_ours / t_svc,
                     sol.objective - svc_objective(svm, svc)])
        if name == "heavy overlap":
            t_smo, smo = best_time(lambda: svm.solve("smo", tol=1e-3), 1)
            rows.append([name, "method='smo' tol=1e-3", "smo", smo.status,
                         f"{smo.report.relative_gap:.1e}", len(svc.support_),
                         int(np.sum(smo.alpha > 0)), t_svc, t_smo, t_smo / t_svc,
                         smo.objective - svc_objective(svm, svc)])
    return rows


def dcd_rows():
    from sklearn.datasets import make_classification
    from sklearn.svm import LinearSVC
    n = 5000 if QUICK else 20000
    X, y = make_classification(n, 100, flip_y=0.1, random_state=0)
    svm = cl.SVM(X, y, C=1.0)
    rows = []
    for tol, budget in ((1e-1, 1000), (1e-4, 1000)):
        t_l, lsvc = best_time(lambda: LinearSVC(C=1.0, loss="hinge", dual=True, tol=tol,
                                                max_iter=budget).fit(X, y), REPEAT)
        t_d, sol = best_time(lambda: svm.solve("dcd", tol=tol, max_iter=budget), REPEAT)
        rows.append([n, tol, budget, f"{lsvc.n_iter_}", t_l, sol.status, sol.n_iter,
                     f"{sol.report.relative_gap:.1e}", t_d, t_d / t_l])
    return rows


def dcd_default_rows():
    """Issue 12's case: ``solve(method="dcd")`` at its defaults (tol 1e-6, 1000 epochs)
    against LinearSVC(dual=True) at its defaults (squared hinge) and with loss="hinge"."""
    from sklearn.datasets import make_classification
    from sklearn.svm import LinearSVC
    n = 5000 if QUICK else 20000
    X, y = make_classification(n, 100, flip_y=0.1, random_state=0)
    svm = cl.SVM(X, y, C=1.0)
    anchors = {"LinearSVC(dual=True) default (squared hinge)": dict(dual=True),
               "LinearSVC(dual=True, loss='hinge')": dict(dual=True, loss="hinge")}
    rows, times = [], {}
    for name, kw in anchors.items():
        t, est = best_time(lambda: LinearSVC(C=1.0, **kw).fit(X, y), REPEAT)
        times[name] = t
        rows.append([name, f"{est.n_iter_} epochs", "converged" if est.n_iter_ < 1000
                     else "not converged (1000)", "-", "-", t, "1"])
    t_d, sol = best_time(lambda: svm.solve("dcd"), REPEAT)
    rep = sol.report
    ratios = " / ".join(f"{t_d / t:.2f}" for t in times.values())
    rows.append(["solve(method='dcd') tol 1e-6", f"{sol.n_iter} epochs", sol.status,
                 f"{rep.max_violation:.1e} (balance {rep.residuals['balance']:.1e})",
                 f"{rep.relative_gap:.1e}", t_d, ratios])
    return rows


def scale_rows():
    import sklearn
    from sklearn import datasets
    from sklearn.svm import SVC
    Xi, yi = datasets.load_iris(return_X_y=True)
    Xb, yb = datasets.load_breast_cancer(return_X_y=True)
    path = os.path.join(os.path.dirname(sklearn.__file__),
                        "datasets/tests/data/svmlight_classification.txt")
    Xs, ys = datasets.load_svmlight_file(path)
    cases = [("iris 1/2 x 1e5, C=1", Xi[yi > 0] * 1e5, yi[yi > 0], 1.0),
             ("breast cancer x 1e5, C=1", Xb * 1e5, yb, 1.0),
             ("svmlight_classification.txt (1 vs rest), C=1", Xs.toarray(), ys == ys[0], 1.0),
             ("raw breast cancer, hard margin", Xb, yb, None)]
    rows = []
    for name, X, y, C in cases:
        svm = cl.SVM(X, y, C=C)
        route_sol = solve_linear_exact(svm)
        try:
            sol = svm.solve()
            status, route, obj = sol.status, sol.provenance.get("route"), sol.objective
        except cl.ConvexLearnError as exc:
            status, route, obj = f"{type(exc).__name__}", "-", float("nan")
        svc = SVC(kernel="linear", C=1e10 if C is None else C, max_iter=10**7).fit(X, y)
        rows.append([name, route_sol.status,
                     f"{route_sol.extra['certificate']['relative_gap']:.1e}", status, route,
                     obj, svc_objective(svm, svc)])
    return rows


def overlap_rows():
    """solve() on make_classification(20000, 100, flip_y=0.1), C=1: heavy overlap, most
    samples inside the margin (SVC timed once: it grows like n^2)."""
    from sklearn.datasets import make_classification
    from sklearn.svm import SVC
    n = 5000 if QUICK else 20000
    X, y = make_classification(n, 100, flip_y=0.1, random_state=0)
    svm = cl.SVM(X, y, C=1.0)
    t_ours, sol = best_time(lambda: svm.solve(), REPEAT)
    t_svc, svc = best_time(lambda: SVC(kernel="linear", C=1.0).fit(X, y), 1)
    cert = sol.extra.get("certificate", {})
    return [[n, sol.provenance["route"], sol.provenance.get("polish", "-"), sol.status,
             f"{cert.get('relative_gap', float('nan')):.1e}", len(svc.support_),
             int(np.sum(sol.alpha > 0)), t_svc, t_ours, t_ours / t_svc,
             sol.objective - svc_objective(svm, svc)]]


def random_sweep(count: int = 60):
    """Random linear SVMs, feature scales 1e-4..1e6, C in 1e-3..1e3 (issue 16's sweep)."""
    rng = np.random.default_rng(0)
    tally = dict(certified=0, uncertified=0, false_optimal=0, chain_optimal=0,
                 chain_refused=0, worse_than_svc=0)
    from sklearn.svm import SVC
    for _ in range(count):
        n, d = 60, 5
        y = np.where(rng.random(n) < 0.5, -1.0, 1.0)
        X = (rng.normal(size=(n, d)) + 0.7 * y[:, None]) * 10.0 ** rng.uniform(-4, 6, size=d)
        C = float(10.0 ** rng.uniform(-3, 3))
        svm = cl.SVM(X, y, C=C)
        sol = solve_linear_exact(svm)
        if sol.status == "optimal":
            tally["certified"] += 1
            gap = rational_duality_gap(X, svm.y, C, sol.w, sol.b, sol.alpha)
            if gap is None or gap > 1e-9:
                tally["false_optimal"] += 1
            svc = SVC(kernel="linear", C=C, max_iter=10**6).fit(X, y)
            if sol.objective > svc_objective(svm, svc) * (1 + 1e-9):
                tally["worse_than_svc"] += 1
        else:
            tally["uncertified"] += 1
        try:
            tally["chain_optimal"] += svm.solve().status == "optimal"
        except cl.ConvexLearnError:
            tally["chain_refused"] += 1
    return tally


def dcd_face_sweep(count: int = 60):
    """solve(method="dcd") with and without face steps on random SVMs: n 40..400, d 2..30,
    feature scales 1e-3..1e3, C in 1e-3..1e3, every third with a dependent feature."""
    rng = np.random.default_rng(0)
    tally = {name: dict(optimal=0, time=0.0, worse=0) for name in ("face steps", "plain")}
    for k in range(count):
        n, d = int(rng.integers(40, 400)), int(rng.integers(2, 30))
        y = np.where(rng.random(n) < 0.5, -1.0, 1.0)
        X = ((rng.normal(size=(n, d)) + rng.uniform(0, 1.5) * y[:, None])
             * 10.0 ** rng.uniform(-3, 3, size=d))
        if k % 3 == 0:
            X[:, -1] = X[:, 0] + X[:, 1]
        svm = cl.SVM(X, y, C=float(10.0 ** rng.uniform(-3, 3)))
        runs = {}
        for name, every in (("face steps", 50), ("plain", 0)):
            t, runs[name] = best_time(lambda: svm.solve("dcd", face_every=every,
                                                        max_iter=2000), 1)
            tally[name]["optimal"] += runs[name].status == "optimal"
            tally[name]["time"] += t
        for name, other in (("face steps", "plain"), ("plain", "face steps")):
            tally[name]["worse"] += runs[name].objective > runs[other].objective * (1 + 1e-6)
    return [[name, f"{t['optimal']} / {count}", t["worse"], t["time"]]
            for name, t in tally.items()]


def main():
    t0 = time.perf_counter()
    parts = []
    lin = linear_rows()
    parts.append("## Linear, n=5000, d=50, C=1 (anchor: SVC(kernel='linear'), default tol)\n\n"
                 + markdown_table(["regime", "call", "route", "status", "rel. gap",
                                   "SVC #SV", "our #SV", "SVC s", "ours s", "ratio",
                                   "P_ours - P_svc"], lin))
    dcd = dcd_rows()
    parts.append("## DCD, d=100, flip_y=0.1, C=1 (anchor: LinearSVC(loss='hinge', "
                 "dual=True), same tol and epoch budget)\n\n"
                 + markdown_table(["n", "tol", "max_iter", "LinearSVC epochs", "LinearSVC s",
                                   "dcd status", "dcd epochs", "rel. gap", "dcd s", "ratio"],
                                  dcd))
    dflt = dcd_default_rows()
    parts.append("## DCD at the defaults, n=20000, d=100, flip_y=0.1, C=1 (issue 12: anchors "
                 "LinearSVC(dual=True) default and loss='hinge')\n\n"
                 + markdown_table(["call", "epochs", "status", "KKT max violation",
                                   "rel. gap", "s", "ratio to the anchors"], dflt)
                 + "\n\nWithout face steps (face_every=0) 1000 epochs end 'max_iter' here: "
                   "DCD converges like 1/k (||w - w*|| 0.41, 0.19, 0.082, 0.042 after 100, 200, "
                   "400, 800 epochs; 800 free multipliers after 1000, 99 at the optimum). The "
                   "face step (solvers/linear_svm/dcd_face.py: purification of the free set, then an "
                   "active-set walk on faces) runs once the free set fits (d + 1 + |F| <= 3000, "
                   "epoch ~300 here) and lands on the optimum. Measured and not kept: "
                   "conjugate-gradient steps on the free face (|F| >> rank 99 of the signed "
                   "rows: the face problem is unbounded) and faces read off the margins of the "
                   "DCD point (their free multipliers fell outside [0, C]). The rows have rank "
                   "99, not 101 (make_classification's 2 redundant features).")
    sweep = dcd_face_sweep(20 if QUICK else 60)
    parts.append("## DCD with and without face steps, random SVMs (n 40..400, d 2..30, "
                 "feature scales 1e-3..1e3, C 1e-3..1e3, every third with a dependent "
                 "feature; tol 1e-6, 2000 epochs)\n\n"
                 + markdown_table(["solve(method='dcd')", "optimal (KKT report)",
                                   "objective > the other's (1 + 1e-6)", "total s"], sweep)
                 + "\n\nWhere the face-step run is the worse one, both are at the optimum to "
                   "~1e-5 relative and the face-step run ends 'inaccurate' on the duality gap "
                   "alone: near-hard-margin problems (objective ~1e-5, features ~1e3) whose "
                   "margins, evaluated on the uncentred data, miss 1 by ~1e-11.")
    sc = scale_rows()
    parts.append("## Units\n\n" + markdown_table(
        ["case", "exact-linear", "its rel. gap", "solve() status", "route", "objective",
         "SVC objective"], sc))
    over = overlap_rows()
    parts.append("## Heavy overlap, d=100, flip_y=0.1, C=1: solve() (anchor: "
                 "SVC(kernel='linear'), timed once)\n\n" + markdown_table(
                     ["n", "route", "stage", "status", "rel. gap", "SVC #SV", "our #SV",
                      "SVC s", "ours s", "ratio", "P_ours - P_svc"], over)
                 + "\n\nBefore the interior point + active set stage (commit 558f5a7) "
                   "solve() took 11 s here, 10 s of it in the Clarabel working-set QP.")
    tally = random_sweep(20 if QUICK else 60)
    parts.append("## Random linear SVMs, feature scales 1e-4..1e6, C in 1e-3..1e3\n\n"
                 + markdown_table(list(tally), [list(tally.values())])
                 + "\n\n`false_optimal`: 'optimal' from the linear route whose duality gap, "
                   "recomputed in exact rational arithmetic, exceeds 1e-9 relative.")
    body = "\n\n".join(parts) + (f"\n\nTotal {time.perf_counter() - t0:.0f} s. The machine "
                                 f"was shared with ~9 other jobs on 2 cores: timings are "
                                 f"noisy; ratios are measured in the same run.")
    print(body)
    if not QUICK:
        print(write_result("svm_linear", "Linear SVM: exact route, SMO, DCD and units", body))


if __name__ == "__main__":
    main()
