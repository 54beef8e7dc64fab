"""Regenerate the images of docs/gallery.md (run from the repository root):

    python docs/gallery/make_gallery.py

Every image is drawn by the public functions of ``convexlearn.plot`` on data shipped in
problems/data (iris, diabetes) or generated with a fixed seed, and written as a PNG of
at most ~150 KB next to this script.
"""

from __future__ import annotations

import sys
import time
from pathlib import Path

import numpy as np
from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.figure import Figure

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parents[1]))      # this checkout's convexlearn, not an installed one

import convexlearn as cl  # noqa: E402
from convexlearn.plot import (plot_convergence, plot_decision, plot_path,  # noqa: E402
                              plot_separability, plot_shattering)

DATA = HERE.parents[1] / "problems" / "data"
PETALS = ("petal_length", "petal_width")


def figure(ncols: int = 1, width: float = 5.2, height: float = 4.9):
    fig = Figure(figsize=(width * ncols, height), dpi=90, layout="constrained")
    FigureCanvasAgg(fig)
    return fig, fig.subplots(1, ncols, squeeze=False)[0]


def save(fig, name: str) -> None:
    path = HERE / name
    fig.savefig(path, format="png")
    print(f"{name}: {path.stat().st_size / 1024:.0f} KB")


def iris(a: str, b: str):
    rows = np.genfromtxt(DATA / "iris.csv", delimiter=",", names=True, dtype=None,
                         encoding="utf-8")
    keep = np.isin(rows["species"], [a, b])
    X = np.column_stack([rows[f][keep] for f in PETALS]).astype(float)
    return X, rows["species"][keep]


def moons(n: int, seed: int = 0, noise: float = 0.25):
    """Two interleaved half circles (as scikit-learn's make_moons), Gaussian noise."""
    rng = np.random.default_rng(seed)
    t = rng.uniform(0.0, np.pi, n)
    y = np.where(np.arange(n) % 2 == 0, -1, 1)
    X = np.where(y[:, None] < 0, np.column_stack([np.cos(t), np.sin(t)]),
                 np.column_stack([1.0 - np.cos(t), 0.5 - np.sin(t)]))
    return X + noise * rng.standard_normal((n, 2)), y


def linear_svm() -> None:
    X, y = iris("versicolor", "virginica")
    svm = cl.SVM(X, y, C=1.0)
    fig, (ax,) = figure()
    plot_decision(svm, svm.solve(), ax, feature_names=PETALS)
    save(fig, "decision_linear_iris.png")


def rbf_svm_large() -> None:
    X, y = moons(4000)
    svm = cl.SVM(X, y, C=1.0, kernel="rbf", gamma=2.0)
    sol = svm.solve("smo", tol=1e-6)
    print(f"  smo: status {sol.status}, KKT max violation {sol.report.max_violation:.1e}, "
          f"{sol.time_s:.1f} s")
    fig, (ax,) = figure()
    plot_decision(svm, sol, ax)
    save(fig, "decision_rbf_4000.png")


def separability() -> None:
    fig, axes = figure(2)
    for ax, pair in zip(axes, (("setosa", "versicolor"), ("versicolor", "virginica"))):
        hs = cl.Halfspace(*iris(*pair))
        plot_separability(hs, hs.check(), ax, feature_names=PETALS)
    save(fig, "separability_iris.png")


def shattering() -> None:
    fig, axes = figure(2)
    plot_shattering([[0.0, 0.0], [1.0, 0.0], [0.0, 1.0]], ax=axes[0])
    plot_shattering([[0.0, 0.0], [1.0, 0.0], [0.0, 1.0], [1.0, 1.0]], ax=axes[1])
    save(fig, "shattering.png")


def convergence() -> None:
    X, y = moons(400, seed=1)
    X = np.column_stack([X, X[:, 0] * X[:, 1]])
    svm = cl.SVM(X, y, C=1.0)
    ref = svm.solve()
    sols = {m: svm.solve(m, tol=1e-9, max_iter=opts)
            for m, opts in (("smo", 100_000), ("dcd", 2000), ("pegasos", 20_000))}
    fig, axes = figure(2)
    plot_convergence(svm, sols, axes[0], reference=ref, tol=1e-6)
    plot_convergence(svm, sols, axes[1], x="time", reference=ref, tol=1e-6)
    save(fig, "convergence_svm.png")


def lasso_path() -> None:
    rows = np.genfromtxt(DATA / "diabetes.csv", delimiter=",", names=True)
    names = [n for n in rows.dtype.names if n != "progression"]
    X = np.column_stack([rows[n] for n in names])
    X = (X - X.mean(axis=0)) / X.std(axis=0)
    erm = cl.ERM(X, rows["progression"], loss="squared", penalty="l1", lam=1.0)
    lams = np.logspace(-1, np.log10(200.0), 40)
    path = erm.path(lams)
    fig, axes = figure(2)
    plot_path(path, axes[0], feature_names=names)
    plot_path(path, axes[1], what="objective")
    save(fig, "path_lasso_diabetes.png")


GALLERY = {"linear": linear_svm, "rbf": rbf_svm_large, "separability": separability,
           "shattering": shattering, "convergence": convergence, "path": lasso_path}

if __name__ == "__main__":
    for key in sys.argv[1:] or GALLERY:
        start = time.perf_counter()
        GALLERY[key]()
        print(f"  ({key}: {time.perf_counter() - start:.1f} s)")
