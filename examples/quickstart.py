"""Solve a real problem exactly and print its verified KKT report.

Breast cancer (scikit-learn's copy of the Wisconsin data set), standardized; soft-margin
SVM with an rbf kernel, C = 1. The exact reference (cvxpy + Clarabel, active-set polish)
is checked against the KKT conditions recomputed from the data, then an outside oracle
(LIBSVM through scikit-learn) is compared when scikit-learn is installed.
"""

import numpy as np

import convexlearn as cl


def load():
    try:
        from sklearn.datasets import load_breast_cancer
    except ImportError:
        raise SystemExit("this example reads scikit-learn's copy of the breast cancer data: "
                         "pip install 'convexlearn[sklearn]'") from None
    X, y = load_breast_cancer(return_X_y=True)
    return (X - X.mean(0)) / X.std(0), y


def main():
    X, y = load()
    svm = cl.SVM(X, y, C=1.0, kernel="rbf", gamma=0.05)
    print(svm.describe())
    sol = svm.solve()
    print(sol)
    print(sol.report.summary())
    from sklearn.svm import SVC
    svc = SVC(C=1.0, kernel="rbf", gamma=0.05, tol=1e-8).fit(X, y)
    alpha = np.zeros(len(y))
    alpha[svc.support_] = np.abs(svc.dual_coef_.ravel())  # dual_coef_ = y * alpha
    print(f"LIBSVM dual objective {svm.dual_objective(alpha):.10g}; "
          f"same support vectors: {set(svc.support_) == set(sol.report.support)}")


if __name__ == "__main__":
    main()
