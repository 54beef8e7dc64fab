"""Solve a real problem exactly and print its verified KKT report.

Breast cancer (the Wisconsin data set shipped in problems/data/, ten "mean" features),
standardized; soft-margin SVM with an rbf kernel, C = 1. ``solve()`` takes the fastest
route that certifies (here SMO plus an active-set polish) and the answer is checked
against the KKT conditions recomputed from the data. When scikit-learn is installed,
LIBSVM's answer is compared as an outside oracle.

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
    svc = SVC(C=1.0, kernel="rbf", gamma=0.05, tol=1e-8).fit(X, svm.y)
    alpha = np.zeros(len(y))
    alpha[svc.support_] = np.abs(svc.dual_coef_.ravel())  # dual_coef_ = y * alpha
    print(f"LIBSVM dual objective {svm.dual_objective(alpha):.10g}; "
          f"same support vectors: {set(svc.support_) == set(sol.report.support)}")


if __name__ == "__main__":
    main()
