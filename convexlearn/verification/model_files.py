"""A LIBSVM or LIBLINEAR model file (:mod:`convexlearn.modelfiles`) and its training data ->
the problems it claims to solve.

LIBSVM: ``c_svc`` models; each support vector is found among the training samples of its
class by its features as the file writes them (``%.8g``), so the data must be the file
the model was trained on. C is not in the file: pass it, else it is taken as the largest
multiplier |coef_i| (exact when some multiplier is at its bound; the report says so).

LIBLINEAR: the classification solvers (L2R_LR, L2R_L2LOSS_SVC(_DUAL), L2R_L1LOSS_SVC_DUAL,
L1R_L2LOSS_SVC, L1R_LR, L2R_LR_DUAL) minimize R(w) + C sum_i loss_i with R = 1/2 ||w||^2
or ||w||_1: ERM(loss, R, lam = 1/(C n)), the same minimizer. With ``bias B >= 0`` every
sample gets a feature B whose weight is penalized (LIBLINEAR's default since 2.40), so
the problem is on [X, B] without a free intercept. C must be given.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ..erm import ERM
from ..errors import DataError, ParameterError
from ..modelfiles import LIBLINEAR_SOLVERS, LiblinearModel, LibsvmModel
from ..svm import SVM
from .claims import Source, check_labels, linear_claims, not_in_package, ovo_claims

__all__ = ["from_model_file"]


def _row_keys(X) -> list[tuple]:
    """Each row as ((index, '%.8g' value), ...) over its nonzeros, as LIBSVM writes SVs."""
    from scipy import sparse
    X = sparse.csr_matrix(X)
    X.eliminate_zeros()
    keys = []
    for i in range(X.shape[0]):
        lo, hi = X.indptr[i], X.indptr[i + 1]
        keys.append(tuple((int(j), "%.8g" % v) for j, v in
                          zip(X.indices[lo:hi], X.data[lo:hi])))
    return keys


def _sv_rows(model: LibsvmModel, X, y, classes) -> tuple[np.ndarray, np.ndarray]:
    """The data row of each support vector (matched by class and written features)."""
    sv_class = np.repeat(np.arange(len(classes)), model.nr_sv)
    if model.SV.shape[1] > X.shape[1]:
        raise DataError(f"{model.path}: the support vectors use feature "
                        f"{model.SV.shape[1]}; the data have {X.shape[1]} features")
    free: dict = {}
    for i, key in enumerate(_row_keys(X)):
        free.setdefault((y[i], key), []).append(i)
    rows = np.empty(model.SV.shape[0], dtype=int)
    for k, key in enumerate(_row_keys(model.SV)):
        label = classes[sv_class[k]]
        found = free.get((label, key))
        if not found:
            raise DataError(f"{model.path}: support vector {k + 1} (class {label:g}) is not "
                            f"a training sample of that class in the data: verify against "
                            f"the data the model was trained on")
        rows[k] = found.pop(0)
    return rows, sv_class


def _libsvm(model: LibsvmModel, X, y, C, sample_weight) -> Source:
    if model.svm_type != "c_svc":
        needs = {"nu_svc": "the nu-SVM (nu-parametrized dual)",
                 "one_class": "the one-class SVM",
                 "epsilon_svr": "the epsilon-insensitive loss (epsilon-SVR)",
                 "nu_svr": "the epsilon-insensitive loss and the nu-SVR dual"}
        raise not_in_package(f"a LIBSVM {model.svm_type} model", needs[model.svm_type])
    if model.kernel == "precomputed":
        raise not_in_package("a LIBSVM model of a precomputed kernel from a data file",
                             "the training kernel matrix: use cl.verify(alpha=..., b=..., "
                             "problem=cl.SVM(K, y, kernel='precomputed')) from Python")
    classes = model.labels
    check_labels(y, classes, f"{model.path}")
    rows, sv_class = _sv_rows(model, X, y, classes)
    notes = [f"LIBSVM c_svc, kernel {model.kernel}, {model.SV.shape[0]} support vectors"]
    if C is None:
        C = float(np.max(np.abs(model.sv_coef))) if model.sv_coef.size else 1.0
        notes.append(f"C is not recorded in a LIBSVM model file: taken as the largest "
                     f"multiplier, {C:.10g} (pass C to verify against another)")
    X = X.tocsr() if hasattr(X, "tocsr") else np.asarray(X, dtype=float)
    gamma = model.gamma if model.kernel != "linear" else "scale"

    def make_svm(r):
        return SVM(X[r], y[r], C=C, kernel=model.kernel, gamma=gamma, degree=model.degree,
                   coef0=model.coef0,
                   sample_weight=None if sample_weight is None else sample_weight[r])

    return ovo_claims("LIBSVM", y, classes, rows, sv_class, model.sv_coef, model.rho,
                      make_svm, notes)


def _liblinear(model: LiblinearModel, X, y, C, sample_weight) -> Source:
    spec = LIBLINEAR_SOLVERS[model.solver_type]
    if spec is None:
        needs = ("the Crammer-Singer multiclass loss" if model.solver_type == "MCSVM_CS" else
                 "the one-class SVM" if model.solver_type == "ONECLASS_SVM" else
                 "the epsilon-insensitive loss (support vector regression)")
        raise not_in_package(f"a LIBLINEAR {model.solver_type} model", needs)
    if C is None:
        raise ParameterError(f"{model.path}: a LIBLINEAR model file does not record C; "
                             f"pass the C it was trained with (CLI: --C)")
    if X.shape[1] < model.nr_feature:
        raise DataError(f"{model.path}: the model has {model.nr_feature} features; the data "
                        f"have {X.shape[1]}")
    if X.shape[1] > model.nr_feature:
        X = X[:, :model.nr_feature]        # LIBLINEAR ignores features beyond nr_feature
    check_labels(y, model.labels, f"{model.path}")
    loss, penalty = spec
    S = y.shape[0] if sample_weight is None else float(np.sum(sample_weight))
    lam = 1.0 / (C * S)
    W = model.W
    classes = model.labels
    if W.shape[1] == 1:
        # w's positive side is labels[0]; convexlearn's +1 is the larger label
        order = np.sort(classes)
        W = W if classes[0] == order[1] else -W
        classes = order
    bias = model.bias if model.bias >= 0 else None

    def make(Z, labels):
        return ERM(Z, labels, loss=loss, penalty=penalty, lam=lam, intercept=False,
                   sample_weight=sample_weight)

    return linear_claims("LIBLINEAR", X, y, W, np.zeros(W.shape[1]), classes, make, bias,
                         notes=[f"LIBLINEAR {model.solver_type}: ERM({loss}, {penalty}, "
                                f"lam = 1/(C n) = {lam:.6g})"
                                + (f", bias feature {model.bias:g} (penalized)"
                                   if bias is not None else "")])


def from_model_file(model: Any, X: Any, y: Any, C: float | None = None,
                    sample_weight: Any = None) -> Source:
    """The claims of a LIBSVM or LIBLINEAR model read by :mod:`convexlearn.modelfiles`."""
    y = np.asarray(y)
    s = None if sample_weight is None else np.asarray(sample_weight, dtype=float)
    if isinstance(model, LibsvmModel):
        return _libsvm(model, X, y, C, s)
    return _liblinear(model, X, y, C, s)
