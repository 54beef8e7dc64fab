"""Readers of the model files LIBSVM and LIBLINEAR write (``svm-train``, ``train`` and
their Python bindings ``svm_save_model`` / ``save_model``).

LIBSVM (text, one ``key value...`` per line, then ``SV`` and one line per support vector)::

    svm_type c_svc | nu_svc | one_class | epsilon_svr | nu_svr
    kernel_type linear | polynomial | rbf | sigmoid | precomputed
    degree 3 / gamma 0.5 / coef0 0                 (those the kernel uses)
    nr_class k / total_sv l
    rho r_1 ... r_{k(k-1)/2}                       (one per pair of classes)
    label c_1 ... c_k / nr_sv l_1 ... l_k          (classification only)
    probA ... / probB ... / prob_density_marks ...  (optional)
    SV
    a_1 ... a_{k-1} i:v i:v ...                    (l lines: coefficients, then features)

The decision value of the pair (c_s, c_t), s < t in the file's label order, is
``sum_i coef_i k(sv_i, x) - rho_p``, positive for c_s; the coefficients of the support
vectors of class c_s are in column t - 1, those of c_t in column s.

LIBLINEAR::

    solver_type L2R_LR | L2R_L2LOSS_SVC_DUAL | ... (the names of liblinear's linear.cpp)
    nr_class k / label c_1 ... c_k / nr_feature d / bias B  (B < 0: no bias feature)
    w
    then d (+1 with a bias feature) lines of nr_w numbers, nr_w = 1 for two classes
    (and regression), k otherwise

Neither file records C. Every read is bounded by the file: a count (nr_sv, total_sv,
nr_class, nr_feature) is compared with the lines that exist before anything of that size
is allocated. Every error is a :class:`~convexlearn.errors.DataError` naming the file and
the line.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from .errors import DataError
from .svmlight import read_text

__all__ = ["LibsvmModel", "LiblinearModel", "read_libsvm_model", "read_liblinear_model",
           "read_model_file", "LIBLINEAR_SOLVERS"]

LIBSVM_TYPES = ("c_svc", "nu_svc", "one_class", "epsilon_svr", "nu_svr")
LIBSVM_KERNELS = {"linear": "linear", "polynomial": "poly", "rbf": "rbf",
                  "sigmoid": "sigmoid", "precomputed": "precomputed"}

#: liblinear's solver names -> (loss, penalty, dual form); None: not a problem of the
#: catalogue (what it needs is named by convexlearn.verification).
LIBLINEAR_SOLVERS = {
    "L2R_LR": ("logistic", "l2"), "L2R_L2LOSS_SVC_DUAL": ("squared_hinge", "l2"),
    "L2R_L2LOSS_SVC": ("squared_hinge", "l2"), "L2R_L1LOSS_SVC_DUAL": ("hinge", "l2"),
    "MCSVM_CS": None, "L1R_L2LOSS_SVC": ("squared_hinge", "l1"), "L1R_LR": ("logistic", "l1"),
    "L2R_LR_DUAL": ("logistic", "l2"), "L2R_L2LOSS_SVR": None, "L2R_L2LOSS_SVR_DUAL": None,
    "L2R_L1LOSS_SVR_DUAL": None, "ONECLASS_SVM": None,
}
_LIBLINEAR_REGRESSION = ("L2R_L2LOSS_SVR", "L2R_L2LOSS_SVR_DUAL", "L2R_L1LOSS_SVR_DUAL")

#: More classes than this in a model file is not a model.
MAX_CLASSES = 1 << 16


@dataclass
class LibsvmModel:
    """A LIBSVM model file.

    Attributes
    ----------
    svm_type : str
    kernel : str
        convexlearn's name ("linear", "poly", "rbf", "sigmoid", "precomputed").
    gamma, coef0 : float
    degree : int
    nr_class : int
    rho : ndarray of shape (k(k-1)/2,)
    labels : ndarray or None
    nr_sv : ndarray of int or None
    sv_coef : ndarray of shape (k-1, l)
    SV : scipy.sparse.csr_matrix of shape (l, D)
        Support vectors (features as written, ``%.8g``); for a precomputed kernel column
        0 holds the 1-based serial number of the training sample.
    probA, probB : ndarray or None
    path : Path
    """

    svm_type: str
    kernel: str
    gamma: float
    degree: int
    coef0: float
    nr_class: int
    rho: np.ndarray
    labels: np.ndarray | None
    nr_sv: np.ndarray | None
    sv_coef: np.ndarray
    SV: Any
    probA: np.ndarray | None = None
    probB: np.ndarray | None = None
    path: Path = field(default_factory=Path)


@dataclass
class LiblinearModel:
    """A LIBLINEAR model file.

    Attributes
    ----------
    solver_type : str
    nr_class : int
    labels : ndarray or None
    nr_feature : int
    bias : float
        The value of the bias feature appended to every sample (< 0: none).
    W : ndarray of shape (nr_feature + (bias >= 0), nr_w)
    path : Path
    """

    solver_type: str
    nr_class: int
    labels: np.ndarray | None
    nr_feature: int
    bias: float
    W: np.ndarray
    rho: float | None = None
    path: Path = field(default_factory=Path)


class _Lines:
    """The file's lines with their numbers, and errors that name both."""

    def __init__(self, path: Path):
        self.path = path
        text = read_text(path)
        self.lines = [(k, line.strip()) for k, line in
                      enumerate(text.replace("\r\n", "\n").replace("\r", "\n").split("\n"), 1)]
        while self.lines and not self.lines[-1][1]:
            self.lines.pop()
        self.pos = 0

    def error(self, line: int | None, message: str) -> DataError:
        where = f"{self.path}, line {line}" if line else f"{self.path}"
        return DataError(f"{where}: {message}")

    def remaining(self) -> int:
        return len(self.lines) - self.pos

    def next(self, what: str) -> tuple[int, str]:
        if self.pos >= len(self.lines):
            last = self.lines[-1][0] if self.lines else 0
            raise self.error(last, f"the file ends before {what} (truncated?)")
        item = self.lines[self.pos]
        self.pos += 1
        return item

    def number(self, text: str, line: int, what: str) -> float:
        try:
            value = float(text)
        except ValueError:
            raise self.error(line, f"{what} {text!r} is not a number") from None
        if not math.isfinite(value):
            raise self.error(line, f"{what} is {text!r} (not finite)")
        return value

    def numbers(self, texts: list[str], line: int, what: str) -> np.ndarray:
        return np.array([self.number(t, line, what) for t in texts], dtype=float)

    def count(self, text: str, line: int, what: str, low: int = 0) -> int:
        try:
            value = int(text)
        except ValueError:
            raise self.error(line, f"{what} {text!r} is not an integer") from None
        if value < low:
            raise self.error(line, f"{what} is {value}; it must be >= {low}")
        return value

    def header(self, end: str, keys: dict) -> dict:
        """``key value...`` lines up to the line ``end``: {key: (line, [values])}."""
        found = {}
        while True:
            line, text = self.next(f"the line {end!r}")
            parts = text.split()
            if not parts:
                raise self.error(line, f"blank line in the header (before {end!r})")
            if parts[0] == end and len(parts) == 1:
                return found
            if parts[0] not in keys:
                raise self.error(line, f"unknown key {parts[0]!r}; a {keys['']} model file "
                                 f"has {', '.join(k for k in keys if k)} and then {end!r}")
            if parts[0] in found:
                raise self.error(line, f"{parts[0]!r} is given twice")
            if len(parts) < 2:
                raise self.error(line, f"{parts[0]!r} has no value")
            found[parts[0]] = (line, parts[1:])


_LIBSVM_KEYS = {"": "LIBSVM", **{k: None for k in (
    "svm_type", "kernel_type", "degree", "gamma", "coef0", "nr_class", "total_sv", "rho",
    "label", "probA", "probB", "prob_density_marks", "nr_sv")}}


def _need(f: _Lines, head: dict, key: str, end: str) -> tuple[int, list[str]]:
    if key not in head:
        raise f.error(None, f"no {key!r} line before {end!r}")
    return head[key]


def _one(f: _Lines, head: dict, key: str, end: str) -> tuple[int, str]:
    line, values = _need(f, head, key, end)
    if len(values) != 1:
        raise f.error(line, f"{key!r} takes one value; got {len(values)}")
    return line, values[0]


def _nr_class(f: _Lines, head: dict, end: str, low: int) -> int:
    """The class count, between ``low`` and :data:`MAX_CLASSES`."""
    line, text = _one(f, head, "nr_class", end)
    k = f.count(text, line, "nr_class", low=low)
    if k > MAX_CLASSES:
        raise f.error(line, f"nr_class {k} is beyond {MAX_CLASSES}")
    return k


def _sized(f: _Lines, head: dict, key: str, size: int, cast, what: str):
    if key not in head:
        return None
    line, values = head[key]
    if len(values) != size:
        raise f.error(line, f"{key!r} has {len(values)} values; {what} needs {size}")
    return cast(values, line, key)


def read_libsvm_model(path: Any) -> LibsvmModel:
    """Read a LIBSVM model file (see the module docstring for the format).

    Raises
    ------
    DataError
        Unreadable, truncated or garbled file, an unknown key or value, a non-finite
        number, counts that disagree with each other or with the lines present (the
        message names the file and the line).
    """
    from scipy import sparse

    f = _Lines(Path(path))
    head = f.header("SV", _LIBSVM_KEYS)
    line, svm_type = _one(f, head, "svm_type", "SV")
    if svm_type not in LIBSVM_TYPES:
        raise f.error(line, f"unknown svm_type {svm_type!r}; valid: {', '.join(LIBSVM_TYPES)}")
    line, kernel = _one(f, head, "kernel_type", "SV")
    if kernel not in LIBSVM_KERNELS:
        raise f.error(line, f"unknown kernel_type {kernel!r}; valid: "
                      f"{', '.join(LIBSVM_KERNELS)}")

    def param(key, default, cast=float):
        if key not in head:
            return default
        line, text = _one(f, head, key, "SV")
        return f.count(text, line, key) if cast is int else f.number(text, line, key)

    gamma, coef0, degree = param("gamma", 0.0), param("coef0", 0.0), param("degree", 3, int)
    k = _nr_class(f, head, "SV", low=2)
    line, text = _one(f, head, "total_sv", "SV")
    total = f.count(text, line, "total_sv")
    if total > f.remaining():
        raise f.error(line, f"total_sv is {total} but only {f.remaining()} lines follow "
                      f"'SV' (truncated file, or a wrong count)")
    n_pairs = k * (k - 1) // 2

    def nums(values, line, key):
        return f.numbers(values, line, key)

    def ints(values, line, key):
        return np.array([f.count(v, line, key) for v in values], dtype=np.int64)

    rho = _sized(f, head, "rho", n_pairs, nums, f"nr_class {k}")
    if rho is None:
        raise f.error(None, "no 'rho' line before 'SV'")
    classification = svm_type in ("c_svc", "nu_svc")
    labels = _sized(f, head, "label", k, nums, f"nr_class {k}")
    nr_sv = _sized(f, head, "nr_sv", k, ints, f"nr_class {k}")
    if classification and (labels is None or nr_sv is None):
        raise f.error(None, f"a {svm_type} model needs 'label' and 'nr_sv' lines before 'SV'")
    if classification and len(set(labels.tolist())) != k:
        raise f.error(head["label"][0], "'label' repeats a class")
    if nr_sv is not None and int(nr_sv.sum()) != total:
        raise f.error(head["nr_sv"][0], f"nr_sv adds up to {int(nr_sv.sum())}, total_sv is "
                      f"{total}")
    probA = _sized(f, head, "probA", n_pairs, nums, f"nr_class {k}")
    probB = _sized(f, head, "probB", n_pairs, nums, f"nr_class {k}")
    n_coef = k - 1 if classification else 1
    coef = np.empty((n_coef, total))
    indptr, indices, values = [0], [], []
    for i in range(total):
        line, text = f.next(f"support vector {i + 1} of {total}")
        parts = text.split()
        if len(parts) < n_coef:
            raise f.error(line, f"a support vector line starts with {n_coef} "
                          f"coefficient(s); found {len(parts)} fields")
        coef[:, i] = f.numbers(parts[:n_coef], line, "coefficient")
        previous = -1
        for token in parts[n_coef:]:
            index, sep, value = token.partition(":")
            if not sep:
                raise f.error(line, f"{token!r} is not index:value")
            j = f.count(index, line, "feature index", low=0 if kernel == "precomputed" else 1)
            if j <= previous:
                raise f.error(line, f"feature index {j} after {previous}: indices must "
                              f"increase")
            if j > 1 << 31:
                raise f.error(line, f"feature index {j} is beyond {1 << 31}")
            previous = j
            indices.append(j if kernel == "precomputed" else j - 1)
            values.append(f.number(value, line, f"feature {j}'s value"))
        indptr.append(len(indices))
    if f.remaining():
        line = f.lines[f.pos][0]
        raise f.error(line, f"text after the {total} support vectors total_sv announced")
    d = max(indices) + 1 if indices else 0
    SV = sparse.csr_matrix((np.asarray(values, float), np.asarray(indices, np.int64),
                            np.asarray(indptr)), shape=(total, d))
    return LibsvmModel(svm_type=svm_type, kernel=LIBSVM_KERNELS[kernel], gamma=gamma,
                       degree=degree, coef0=coef0, nr_class=k, rho=rho, labels=labels,
                       nr_sv=nr_sv, sv_coef=coef, SV=SV, probA=probA, probB=probB,
                       path=f.path)


_LIBLINEAR_KEYS = {"": "LIBLINEAR", **{k: None for k in (
    "solver_type", "nr_class", "label", "nr_feature", "bias", "rho")}}


def read_liblinear_model(path: Any) -> LiblinearModel:
    """Read a LIBLINEAR model file (see the module docstring for the format).

    Raises
    ------
    DataError
        As :func:`read_libsvm_model`.
    """
    f = _Lines(Path(path))
    head = f.header("w", _LIBLINEAR_KEYS)
    line, solver = _one(f, head, "solver_type", "w")
    if solver not in LIBLINEAR_SOLVERS:
        raise f.error(line, f"unknown solver_type {solver!r}; valid: "
                      f"{', '.join(LIBLINEAR_SOLVERS)}")
    k = _nr_class(f, head, "w", low=1)
    line, text = _one(f, head, "nr_feature", "w")
    d = f.count(text, line, "nr_feature")
    line, text = _one(f, head, "bias", "w")
    bias = f.number(text, line, "bias")
    labels = None
    if "label" in head:
        line, values = head["label"]
        if len(values) != k:
            raise f.error(line, f"'label' has {len(values)} values; nr_class {k} needs {k}")
        labels = f.numbers(values, line, "label")
        if len(set(labels.tolist())) != k:
            raise f.error(line, "'label' repeats a class")
    elif solver not in _LIBLINEAR_REGRESSION + ("ONECLASS_SVM",):
        raise f.error(None, "no 'label' line before 'w'")
    rho = f.number(head["rho"][1][0], head["rho"][0], "rho") if "rho" in head else None
    nr_w = 1 if (k == 2 and solver != "MCSVM_CS") or labels is None else k
    rows = d + (bias >= 0)
    if rows > f.remaining():
        raise f.error(head["nr_feature"][0], f"nr_feature {d}{' + bias' if bias >= 0 else ''} "
                      f"needs {rows} weight lines after 'w'; the file has {f.remaining()}")
    W = np.empty((rows, nr_w))
    for j in range(rows):
        line, text = f.next(f"weight line {j + 1} of {rows}")
        parts = text.split()
        if len(parts) != nr_w:
            raise f.error(line, f"a weight line holds {nr_w} number(s); found {len(parts)}")
        W[j] = f.numbers(parts, line, "weight")
    if f.remaining():
        raise f.error(f.lines[f.pos][0], f"text after the {rows} weight lines")
    return LiblinearModel(solver_type=solver, nr_class=k, labels=labels, nr_feature=d,
                          bias=bias, W=W, rho=rho, path=f.path)


def read_model_file(path: Any) -> LibsvmModel | LiblinearModel:
    """A LIBSVM or LIBLINEAR model file, told apart by its first key (``svm_type`` or
    ``solver_type``)."""
    f = _Lines(Path(path))
    first = f.lines[0][1].split()[:1] if f.lines else []
    if first == ["svm_type"]:
        return read_libsvm_model(path)
    if first == ["solver_type"]:
        return read_liblinear_model(path)
    raise f.error(1 if f.lines else None, "not a LIBSVM or LIBLINEAR model file (its first "
                  "line is not 'svm_type ...' or 'solver_type ...')")
