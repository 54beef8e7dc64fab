"""Solve a real problem exactly and print its verified KKT report.

Breast cancer (the Wisconsin data set shipped in problems/data/, ten "mean" features),
standardized; soft-margin SVM with an rbf kernel, C = 1. ``solve()`` takes the fastest
route that certifies (here SMO plus an active-set polish) and the answer is checked
against the KKT conditions recomputed from the data. When scikit-learn is installed,
``cl.verify`` checks LIBSVM's answer (SVC) at its default tolerance and a tight one against
that certified optimum.

Runs after README's first command (no extra needed):  python examples/quickstart.py
"""

from pathlib import Path

import numpy as np

import convexlearn as cl

DATA = Path(__file__).resolve().parents[1] / "problems" / "data" / "breast_cancer.csv"


def load():
    """X standardized (z-scores), y the diagnosis labels, from the shipped CSV file."""
    X = np.loadtxt(DATA, delimiter=",", skiprows=1, usecols=range(10))
    y = np.loadtxt(DATA, delimiter=",", skiprows=1, usecols=10, dtype=str)
    return (X - X.mean(0)) / X.std(0), y


def main():
    X, y = load()
    svm = cl.SVM(X, y, C=1.0, kernel="rbf", gamma=0.05)
    print(svm.describe())
    sol = svm.solve()
    print(f"route: {sol.provenance['route']}, status: {sol.status}, "
          f"objective: {sol.objective:.10g}")
    print(sol.report.summary())
    try:
        from sklearn.svm import SVC
    except ImportError:
        print("(scikit-learn is not installed: the LIBSVM comparison is skipped)")
        return
    # cl.verify maps the fitted SVC to this problem (dual_coef_ = y * alpha) and checks it
    # against the certified optimum, computed above and reused
    for tol in (1e-3, 1e-8):
        svc = SVC(C=1.0, kernel="rbf", gamma=0.05, tol=tol).fit(X, y)
        rep = cl.verify(svc, X, y)
        print(f"SVC(tol={tol:g}): relative gap {rep.gap:.2e}, "
              f"{len(rep.violators)} KKT violators, support missing/extra "
              f"{len(rep.support_missing)}/{len(rep.support_extra)}, "
              f"{len(rep.flipped)} predictions flipped: {'passed' if rep.passed else 'FAILED'}")


if __name__ == "__main__":
    main()
