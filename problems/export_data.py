"""Export the real data sets used by the catalogue from scikit-learn, once.

Run from the repository root: ``python problems/export_data.py``. The CSVs are committed;
this script documents where they came from (scikit-learn's bundled copies of the UCI
sets) and which rows and columns were kept to keep them small.
"""

from pathlib import Path

import numpy as np
from sklearn import datasets

OUT = Path(__file__).parent / "data"


def write(name, columns, X, label_name, labels):
    lines = [",".join(columns + [label_name])]
    for row, label in zip(X, labels):
        lines.append(",".join(f"{v:.10g}" for v in row) + f",{label}")
    (OUT / name).write_text("\n".join(lines) + "\n")
    print(f"{name}: {len(X)} rows x {len(columns)} features")


def main():
    OUT.mkdir(exist_ok=True)
    iris = datasets.load_iris()
    cols = [c.replace(" (cm)", "").replace(" ", "_") for c in iris.feature_names]
    write("iris.csv", cols, iris.data, "species", iris.target_names[iris.target])

    wine = datasets.load_wine()
    write("wine.csv", list(wine.feature_names), wine.data, "cultivar", wine.target)

    bc = datasets.load_breast_cancer()      # the ten "mean ..." features only
    keep = [i for i, c in enumerate(bc.feature_names) if c.startswith("mean ")]
    write("breast_cancer.csv", [bc.feature_names[i].replace(" ", "_") for i in keep],
          bc.data[:, keep], "diagnosis", bc.target_names[bc.target])

    digits = datasets.load_digits()         # the pair 3 vs 8
    rows = np.isin(digits.target, (3, 8))
    write("digits_3_8.csv", [f"pixel{i}" for i in range(64)],
          digits.data[rows].astype(int), "digit", digits.target[rows])

    diabetes = datasets.load_diabetes(scaled=False)
    write("diabetes.csv", list(diabetes.feature_names), diabetes.data, "progression",
          diabetes.target.astype(int))


if __name__ == "__main__":
    main()
