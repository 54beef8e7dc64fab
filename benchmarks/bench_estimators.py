"""convexlearn.estimators against scikit-learn: fit time and agreement on the shipped data sets.

For each case: best-of-3 fit time of our estimator (exact, KKT-certified) and of the
scikit-learn oracle under the written conventions (SVC for the C-form SVM; LogisticRegression
with lam = 1/(n C)), the largest |f_ours - f_sklearn| on the training set and the fraction of
equal predictions. Also the per-sample-cost (sample_weight) route against the repeated data.

Run: python benchmarks/bench_estimators.py  (with --record, writes benchmarks/results/estimators.md)
"""

from __future__ import annotations

import os
import sys

import numpy as np
from sklearn import datasets
from sklearn.linear_model import LogisticRegression
from sklearn.svm import SVC

sys.path.insert(0, os.path.dirname(__file__))
from _common import best_time, markdown_table, write_result  # noqa: E402

from convexlearn.estimators import (ERMClassifier, KernelSVMClassifier,  # noqa: E402
                                    LinearSVMClassifier)

LOADERS = {"iris": datasets.load_iris, "wine": datasets.load_wine,
           "breast_cancer": datasets.load_breast_cancer, "digits": datasets.load_digits}


def data(name, classes):
    X, y = LOADERS[name](return_X_y=True)
    keep = np.isin(y, classes)
    X, y = X[keep].astype(float), y[keep]
    sd = X.std(axis=0)
    return (X - X.mean(axis=0)) / np.where(sd > 0, sd, 1.0), y


def row(label, ours, theirs, X, y, fit_kwargs=None):
    t_ours, a = best_time(lambda: ours.fit(X, y, **(fit_kwargs or {})))
    t_theirs, b = best_time(lambda: theirs.fit(X, y))
    diff = float(np.abs(a.decision_function(X) - b.decision_function(X)).max())
    agree = float(np.mean(a.predict(X) == b.predict(X)))
    return [label, X.shape[0], X.shape[1], t_ours, t_theirs, diff, agree]


def main():
    rows = []
    for name, classes, kernel, C in [("iris", (1, 2), "rbf", 1.0),
                                     ("wine", (0, 1), "rbf", 1.0),
                                     ("breast_cancer", (0, 1), "rbf", 1.0),
                                     ("digits", (3, 8), "rbf", 1.0),
                                     ("digits", tuple(range(10)), "rbf", 1.0)]:
        X, y = data(name, classes)
        g = 1.0 / X.shape[1]
        label = f"KernelSVMClassifier {name} {len(classes)} classes"
        theirs = SVC(C=C, kernel=kernel, gamma=g, tol=1e-8,
                     decision_function_shape="ovr")
        if len(classes) > 2:   # one-vs-one on both sides: compare predictions only
            t_ours, a = best_time(lambda: KernelSVMClassifier(C=C, gamma=g).fit(X, y))
            t_theirs, b = best_time(lambda: theirs.fit(X, y))
            rows.append([label + " (one-vs-one, as SVC)", X.shape[0], X.shape[1], t_ours, t_theirs,
                         "n/a", float(np.mean(a.predict(X) == b.predict(X)))])
            continue
        rows.append(row(label, KernelSVMClassifier(C=C, kernel=kernel, gamma=g), theirs, X, y))
    for name in ("breast_cancer", "wine"):
        X, y = data(name, (0, 1))
        rows.append(row(f"LinearSVMClassifier {name}", LinearSVMClassifier(C=1.0),
                        SVC(C=1.0, kernel="linear", tol=1e-8), X, y))
        rows.append(row(f"ERMClassifier logistic {name}",
                        ERMClassifier("logistic", "l2", lam=1.0 / len(y)),
                        LogisticRegression(C=1.0, tol=1e-10, max_iter=10_000), X, y))
    header = ["case", "n", "d", "ours fit (s)", "sklearn fit (s)", "max |f - f_sk|",
              "equal predictions"]
    table = markdown_table(header, rows)

    weight_rows = []
    rng = np.random.default_rng(0)
    for name in ("breast_cancer", "digits"):
        X, y = data(name, (0, 1) if name == "breast_cancer" else (3, 8))
        w = rng.integers(0, 4, size=len(y))
        t_w, a = best_time(lambda: KernelSVMClassifier().fit(X, y, sample_weight=w))
        Xr, yr = np.repeat(X, w, axis=0), np.repeat(y, w)
        t_r, b = best_time(lambda: KernelSVMClassifier().fit(Xr, yr))
        weight_rows.append([name, len(y), int(w.sum()), t_w, t_r,
                            float(np.abs(a.decision_function(X) - b.decision_function(X)).max())])
    weights = markdown_table(["data", "n", "n repeated", "weighted fit (s)", "repeated fit (s)",
                              "max |f_w - f_rep|"], weight_rows)
    body = (f"{table}\n\nsample_weight (per-sample costs C_i = C s_i, integer s in 0..3) "
            f"against the repeated data set:\n\n{weights}")
    print(body)
    print(write_result("estimators", "Estimators vs scikit-learn", body))


if __name__ == "__main__":
    main()
