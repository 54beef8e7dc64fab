"""The exact SVM path in C against scikit-learn's SVC: every breakpoint certified.

Data: scikit-learn's make_classification(n, 20, n_informative=10, flip_y=0.05,
random_state=0), standardized; rbf kernel, gamma = "scale" (1 / (d var X) = 1/20 here);
C from 0.01 to 100. ``exact_c_path`` follows the piecewise-linear path in 1/C from a
certified anchor and checks the KKT conditions of every breakpoint (relative duality gap
and scaled residuals at 1e-9): from the path's margins with their rounding bounded, by the
full report from the data every 64th breakpoint, at the last and wherever the bounds do not
pass (the worst relative gap shown is then an upper bound). Anchors: SVC(C=1) (one fit, LIBSVM's default tol 1e-3,
uncertified) and twenty SVC fits over logspace(-2, 2, 20). CPU seconds of the process
(user + system: the figure least disturbed by the other processes of a shared machine),
best of ``REPEAT`` for the anchors and for the path (each run of the path on a new
problem: nothing cached), the ratios from these warm figures; the path's first call in a
fresh process (numba's compiled loops loaded from their cache, the anchor solve's among
them) is reported beside them. Both sides run on one BLAS thread.

Random cases beyond the headline problem (in a fresh process of their own): make_classification
(d = 20, 10 informative, flip_y 0.05; d = 5, 3 informative), two overlapping 2-D blobs
(cluster_std 2.5) and 2-D moons (noise 0.3), data seeds 1 and 2, n = 1000 and 2000,
standardized; the same path and anchors (the path best of 2, SVC best of 3; twenty fits once).

Run ``python benchmarks/bench_svm_c_path.py [--record]``.
"""

from __future__ import annotations

import os
import subprocess
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")

import numpy as np  # noqa: E402

from _common import markdown_table, write_result  # noqa: E402

SIZES = (1000, 2000)
REPEAT = 3


def _data(n):
    from sklearn.datasets import make_classification
    X, y = make_classification(n_samples=n, n_features=20, n_informative=10, flip_y=0.05,
                               random_state=0)
    return (X - X.mean(axis=0)) / X.std(axis=0), y


def _cpu(func):
    start = time.process_time()
    out = func()
    return time.process_time() - start, out


def worker(n: int) -> str:
    """One row, measured in this (fresh) process: the first path, then the anchors."""
    import convexlearn as cl
    from convexlearn.routes.svm import exact_c_path
    from sklearn.svm import SVC
    X, y = _data(n)
    svm = cl.SVM(X, y, C=1.0, kernel="rbf")
    t_first, (path, sols) = _cpu(lambda: exact_c_path(svm, 0.01, 100.0))
    t_path = min([t_first] + [_cpu(lambda: exact_c_path(cl.SVM(X, y, C=1.0, kernel="rbf"),
                                                        0.01, 100.0))[0]
                              for _ in range(REPEAT - 1)])
    certified = sum(s.status == "optimal" for s in sols)
    worst = max(s.report.relative_gap for s in sols)
    t_one = min(_cpu(lambda: SVC(C=1.0, kernel="rbf", gamma="scale").fit(X, y))[0]
                for _ in range(REPEAT))
    Cs = np.logspace(-2, 2, 20)
    t_twenty = min(_cpu(lambda: [SVC(C=C, kernel="rbf", gamma="scale").fit(X, y)
                                 for C in Cs])[0] for _ in range(REPEAT))
    return (f"{n}\t{len(path.Cs)}\t{path.reanchored}\t{certified}\t{worst:.1e}\t"
            f"{t_path:.3f}\t{t_first:.3f}\t{t_one:.4f}\t{t_twenty:.3f}")


SWEEP_KINDS = ("clf", "clf5", "blobs", "moons")


def _sweep_data(kind, seed, n):
    from sklearn.datasets import make_blobs, make_classification, make_moons
    if kind == "clf":
        X, y = make_classification(n, 20, n_informative=10, flip_y=0.05, random_state=seed)
    elif kind == "clf5":
        X, y = make_classification(n, 5, n_informative=3, n_redundant=0, random_state=seed)
    elif kind == "blobs":
        X, y = make_blobs(n, centers=2, cluster_std=2.5, random_state=seed)
    else:
        X, y = make_moons(n, noise=0.3, random_state=seed)
    return (X - X.mean(axis=0)) / X.std(axis=0), y


def sweep_worker() -> str:
    """The random cases' rows (tab-separated lines), measured in this (fresh) process."""
    import convexlearn as cl
    from convexlearn.routes.svm import exact_c_path
    from sklearn.svm import SVC
    exact_c_path(cl.SVM(*_sweep_data("clf", 0, 300), C=1.0, kernel="rbf"), 0.01, 100.0)
    lines = []
    Cs = np.logspace(-2, 2, 20)
    for kind in SWEEP_KINDS:
        for seed in (1, 2):
            for n in SIZES:
                X, y = _sweep_data(kind, seed, n)
                runs = [_cpu(lambda: exact_c_path(cl.SVM(X, y, C=1.0, kernel="rbf"), 0.01,
                                                  100.0)) for _ in range(2)]
                t_path = min(t for t, _ in runs)
                path, sols = runs[-1][1]
                ok = sum(s.status == "optimal" for s in sols)
                t_one = min(_cpu(lambda: SVC(C=1.0, kernel="rbf", gamma="scale").fit(X, y))[0]
                            for _ in range(REPEAT))
                t_twenty = _cpu(lambda: [SVC(C=C, kernel="rbf", gamma="scale").fit(X, y)
                                         for C in Cs])[0]
                lines.append(f"{kind} seed {seed} n={n}\t{len(path.Cs)}\t{path.reanchored}\t"
                             f"{ok}\t{t_path:.3f}\t{t_one:.4f}\t{t_twenty:.3f}")
    return "\n".join(lines)


def _sweep_rows() -> tuple[list, str]:
    out = subprocess.run([sys.executable, os.path.abspath(__file__), "--sweep-worker"],
                         capture_output=True, text=True, check=True).stdout
    rows, one, twenty = [], [], []
    for line in out.strip().splitlines()[-2 * 2 * len(SIZES) * len(SWEEP_KINDS):]:
        name, k, re, ok, t_path, t_one, t_twenty = line.split("\t")
        t_path, t_one, t_twenty = float(t_path), float(t_one), float(t_twenty)
        one.append(t_path / t_one)
        twenty.append(t_path / t_twenty)
        rows.append([name, k, re, f"{ok}/{k}", t_path, t_one, f"{one[-1]:.1f}x", t_twenty,
                     f"{twenty[-1]:.2f}x"])
        print(rows[-1], flush=True)
    summary = (f"Over the {len(rows)} random cases: ratio to one fit median "
               f"{np.median(one):.1f}x, 90th percentile {np.quantile(one, 0.9):.1f}x, max "
               f"{max(one):.1f}x; to twenty fits median {np.median(twenty):.2f}x, 90th "
               f"percentile {np.quantile(twenty, 0.9):.2f}x, max {max(twenty):.2f}x.")
    return rows, summary


def main() -> None:
    rows = []
    for n in SIZES:
        out = subprocess.run([sys.executable, os.path.abspath(__file__), "--worker", str(n)],
                             capture_output=True, text=True, check=True).stdout
        fields = out.strip().splitlines()[-1].split("\t")
        n_, k, re, ok, worst = fields[:5]
        t_path, t_first, t_one, t_twenty = map(float, fields[5:])
        rows.append([f"rbf n={n_} d=20", k, re, f"{ok}/{k}", worst, t_path, t_one,
                     f"{t_path / t_one:.1f}x", t_twenty, f"{t_path / t_twenty:.2f}x",
                     f"{t_first:.3f} ({t_first / t_one:.1f}x)"])
        print(rows[-1], flush=True)
    sweep, summary = _sweep_rows()
    print(summary)
    load = os.getloadavg()
    body = (__doc__.split("\n\n", 1)[1].rsplit("\n\nRun", 1)[0] + "\n\n"
            + markdown_table(["problem", "breakpoints", "re-anchored", "certified at 1e-9",
                              "worst relative gap", "exact C-path CPU s",
                              "SVC(C=1) CPU s", "ratio to one fit", "twenty SVC fits CPU s",
                              "ratio to twenty fits",
                              "path's first call in the process, CPU s (to one fit)"], rows)
            + "\n\nRandom cases:\n\n"
            + markdown_table(["problem", "breakpoints", "re-anchored", "certified at 1e-9",
                              "exact C-path CPU s", "SVC(C=1) CPU s", "ratio to one fit",
                              "twenty SVC fits CPU s", "ratio to twenty fits"], sweep)
            + "\n\n" + summary
            + f"\n\nLoad average at the end (1 / 5 / 15 min): "
              f"{load[0]:.1f} / {load[1]:.1f} / {load[2]:.1f}.")
    print(write_result("svm_c_path", "Exact SVM path in C vs SVC", body))


if __name__ == "__main__":
    if "--sweep-worker" in sys.argv:
        print(sweep_worker())
    elif "--worker" in sys.argv:
        print(worker(int(sys.argv[sys.argv.index("--worker") + 1])))
    else:
        main()
