"""``convexlearn predict ANSWER.json DATA.csv``: apply a saved answer to new data.

A ``solve --json`` record carries a ``predictor``: what the decision function needs and
nothing of the training run's bulk. The columns the model was trained on (read by name
from the new file, so their order there does not matter), the standardization
(training mean and std, applied as they were, not recomputed on the new data), the
polynomial feature map, the two classes, and the function itself:

* linear SVM and ERM: ``f(x) = w . phi(x) + b``;
* kernel SVM: ``f(x) = sum_{i in SV} beta_i k(x_i, x) + b`` with ``beta = y * alpha`` and
  the support vectors ``x_i`` as solved (after the transforms).

The label of ``x`` is ``classes[1]`` where ``f(x) >= 0`` and ``classes[0]`` elsewhere (the
rule of :class:`convexlearn.data.LabelMap`); a regression loss has no classes and its
prediction is ``f(x)``.
"""

from __future__ import annotations

import json
from typing import Any

import numpy as np

from ..errors import DataError, ProblemFileError
from .csvfile import CsvFile

__all__ = ["predictor_record", "predict", "format_predictions", "PREDICTIONS_FORMAT"]

PREDICTIONS_FORMAT = "convexlearn.predictions"


def predictor_record(result: Any) -> dict | None:
    """The ``predictor`` of a run's JSON record (module docstring); None for a kind that
    has no decision function (halfspace, shattering)."""
    if result.problem.kind not in ("svm", "erm") or result.reference is None:
        return None
    ref = result.solutions[result.reference.method]
    data, model = result.problem.data, result.model
    label_map = getattr(model, "label_map", None)
    record = {"kind": result.problem.kind, "columns": data.columns, "label": data.label,
              "scaling": None if data.scaling is None else [v.tolist() for v in data.scaling],
              "feature_map": data.feature_map,
              "classes": None if label_map is None else label_map.classes.tolist(),
              "b": float(ref.b), "w": None, "kernel": None}
    if ref.w is not None:
        record["w"] = np.asarray(ref.w, float).tolist()
        return record
    beta = ref.dual_coef if ref.dual_coef is not None else \
        np.asarray(label_map.to_signed(data.y)) * ref.alpha
    support = np.flatnonzero(beta)
    k = model.kernel
    record.update(kernel={"name": k.name, "gamma": k.gamma, "degree": k.degree,
                          "coef0": k.coef0},
                  support_vectors=np.asarray(data.X)[support].tolist(),
                  dual_coef=np.asarray(beta)[support].tolist())
    return record


def _read_predictor(path: Any) -> dict:
    try:
        with open(path, encoding="utf-8") as fh:
            record = json.load(fh)
    except FileNotFoundError:
        raise DataError(f"{path}: no such answer file") from None
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise DataError(f"{path}: cannot read the answer (JSON): {exc}") from None
    predictor = record.get("predictor") if isinstance(record, dict) else None
    if predictor is None:
        what = record.get("format") if isinstance(record, dict) else None
        raise DataError(f"{path}: holds no predictor (format {what!r}); predict applies the "
                        f"record that 'convexlearn solve ... --json OUT' writes (it keeps the "
                        f"columns, the standardization and the classes with the answer)")
    return predictor


def predict(answer: Any, data: Any, delimiter: str = ",") -> tuple[np.ndarray, list | None]:
    """Decision values f(x) of every row of the CSV file ``data`` and their labels (None
    for regression), by the predictor of the ``solve --json`` record ``answer``.

    Raises
    ------
    DataError
        The answer has no predictor, or cannot be read.
    ProblemFileError
        The CSV file lacks a column the model was trained on, or holds a bad cell.
    """
    from ..kernels import make_kernel, polynomial_features
    p = _read_predictor(answer)
    table = CsvFile(data, delimiter)
    missing = [c for c in p["columns"] if c not in table.header]
    if missing:
        raise ProblemFileError(f"{data}: column(s) {missing} of the model are missing; "
                               f"columns: {', '.join(table.header)}")
    X = table.numeric(p["columns"])
    if p["scaling"] is not None:
        mean, sd = (np.asarray(v, float) for v in p["scaling"])
        X = (X - mean) / sd
    if p["feature_map"] is not None:
        X = polynomial_features(X, **p["feature_map"])
    if p["w"] is not None:
        f = X @ np.asarray(p["w"], float) + p["b"]
    else:
        k = p["kernel"]
        kernel = make_kernel(k["name"], gamma=k["gamma"], degree=k["degree"], coef0=k["coef0"])
        f = kernel(X, np.asarray(p["support_vectors"], float)) @ \
            np.asarray(p["dual_coef"], float) + p["b"]
    classes = p["classes"]
    labels = None if classes is None else [classes[1] if v >= 0 else classes[0] for v in f]
    return f, labels


def format_predictions(f: np.ndarray, labels: list | None, fmt: str, answer: Any,
                       data: Any) -> str:
    """CSV (header ``decision,label``, or ``prediction`` for regression; floats at full
    precision) or JSON (``format: "convexlearn.predictions"``)."""
    if fmt == "json":
        record = {"format": PREDICTIONS_FORMAT, "format_version": 1, "answer": str(answer),
                  "data": str(data), "n_samples": int(f.size),
                  "decision": [float(v) for v in f], "labels": labels}
        return json.dumps(record, indent=1) + "\n"
    if labels is None:
        return "prediction\n" + "".join(f"{float(v)!r}\n" for v in f)
    return "decision,label\n" + "".join(f"{float(v)!r},{lab}\n" for v, lab in zip(f, labels))
