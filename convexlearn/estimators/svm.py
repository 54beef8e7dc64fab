"""SVM classifiers for scikit-learn: the C-form SVM of :class:`convexlearn.SVM` behind fit/predict.

Problem solved, for each binary problem (two classes; one per pair of classes, one-vs-one;
or one per class, one-vs-rest)::

    min_{w, b}  1/2 ||w||^2 + sum_i C_i max(0, 1 - y_i f(x_i)),
    C_i = C * class_weight[y_i] * sample_weight_i
    f(x) = sum_i alpha_i y_i k(x_i, x) + b   (= <w, x> + b for the linear kernel)

Fitted attributes are laid out as scikit-learn's SVC (see
:mod:`convexlearn.estimators._multiclass`): ``support_`` grouped by class, ``n_support_``,
``dual_coef_`` of shape (n_classes - 1, n_SV) for one-vs-one (y_i alpha_i, class i of the
pair (i, j) as +1) or (n_classes, n_SV) for one-vs-rest, ``intercept_`` (b, not -b) per
problem. For two classes, ``dual_coef_`` (1, n_SV) has classes_[1] as +1, so that
``decision_function(x) = dual_coef_[0] @ K(support_vectors_, x) + intercept_[0]``.
``support_`` holds the samples with a nonzero coefficient in some problem: for exact
(polished) solutions the KKT support alpha_i > 0 of ``kkt_.support``.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ..data import check_choice
from ..svm import SVM_LOSSES
from ._svm_base import SVMClassifierBase

__all__ = ["KernelSVMClassifier", "LinearSVMClassifier"]


class KernelSVMClassifier(SVMClassifierBase):
    """Kernel SVM classifier (C-form), solved exactly (cvxpy) or by SMO / subgradient.

    Parameters
    ----------
    C : float or None, default=1.0
        Slack cost; None or inf gives the hard margin (an error on non-separable data).
    kernel : {"rbf", "linear", "poly", "sigmoid", "precomputed"} or callable, default="rbf"
        See :mod:`convexlearn.kernels`; sigmoid Gram matrices are checked for PSD.
    gamma : float or {"scale", "auto"}, default="scale"
        "scale" is 1 / (d Var(X)) with Var over the weighted training samples.
    degree, coef0 : float
        Polynomial / sigmoid kernel parameters (scikit-learn's defaults 3 and 0).
    repair_psd : bool, default=False
        Clip the negative eigenvalues of an indefinite Gram matrix (sigmoid, precomputed,
        callable) instead of refusing the non-convex problem; reported in ``solution_``.
        A precomputed kernel with intercept is checked after double centering (only
        PSD on 1^perp is needed); ``intercept_`` refers to the kernel as given.
    fit_intercept : bool, default=True
        False solves the homogeneous problem (b = 0, no constraint y^T alpha = 0).
    class_weight : dict, "balanced" or None, default=None
        C of the samples of class c is C * class_weight[c]; "balanced" is SVC's
        n_samples / (n_classes * count of c). A weight of 0 is a ParameterError (every
        problem of c would have one side only, its intercept not unique; SVC fails too).
    multiclass : {"ovo", "ovr"}, default="ovo"
        One-vs-one (SVC's, K (K - 1) / 2 problems on pairs of classes) or one-vs-rest.
    decision_function_shape : {"ovr", "ovo"}, default="ovr"
        For one-vs-one: the pairwise values ("ovo") or SVC's (n, n_classes) transform of
        votes and confidences ("ovr").
    probability : bool, default=False
        Fit Platt scaling on 5-fold cross-validated decision values (5 extra fits per
        problem) and offer ``predict_proba``.
    method : {"exact", "smo", "subgradient"}, default="exact"
        "exact": :meth:`convexlearn.SVM.solve`'s exact chain, certified at a relative
        duality gap of 1e-9 (for nonlinear kernels SMO, the active-set polish and the KKT
        certificate first, the cvxpy dual as fallback); iterative methods where
        :mod:`convexlearn.svm` provides them. With several problems and a kernel PSD by
        construction, the Gram matrix of all training samples is formed once (when
        8 n^2 bytes <= 200 MiB) and each problem reads its block of it.
    tol : float, default=1e-6
        Stopping tolerance of iterative methods and tolerance of the KKT check.
    max_iter : int or None, default=None
        Iteration budget of the iterative methods (None: the method's default).
    random_state : int, RandomState or None
        Seed of randomized methods and of the cross-validation folds of Platt scaling.
    shrinking : bool, default=True
        SMO's shrinking heuristic (LIBSVM's ``-h``). Speed only: the answer is certified
        either way.
    cache_size : float, default=200
        Kernel memory in MB (LIBSVM's ``-m``): SMO's column cache, and the bound on the
        Gram matrix a multiclass fit shares among its problems (8 n^2 bytes).
    verbose : bool or int, default=False
        Log each solve on stderr through the ``convexlearn`` logger (1/True: INFO, the
        route, status and time of each binary problem; 2: DEBUG, with its KKT report);
        SVC prints LIBSVM's progress on stdout instead.
    break_ties : bool, default=False
        One-vs-one with ``decision_function_shape="ovr"`` and more than two classes:
        ``predict`` returns the argmax of ``decision_function`` (votes, then the summed
        confidences orders classes with equal votes) instead of the first class among
        those with the most votes. SVC's parameter; an error (at predict, as SVC) with
        ``decision_function_shape="ovo"``.

    Attributes
    ----------
    classes_ : ndarray of shape (n_classes,)
    class_weight_ : ndarray of shape (n_classes,)
    support_ : ndarray of int32
        Training indices of the support vectors, grouped by class.
    n_support_ : ndarray of int32, shape (n_classes,)
    support_vectors_ : ndarray of shape (n_SV, n_features) (empty for "precomputed")
    dual_coef_ : ndarray
        (n_classes - 1, n_SV) one-vs-one, (n_classes, n_SV) one-vs-rest, (1, n_SV) for
        two classes; SVC's layout (module docstring).
    intercept_ : ndarray of shape (n_problems,)
        b of each problem (pairs in SVC's order (0, 1), (0, 2), ..., (1, 2), ...).
    coef_ : ndarray of shape (n_problems, n_features)
        Linear kernel only: each problem's w, read-only (as SVC's: it is computed from
        ``dual_coef_`` and ``support_vectors_``, so a write could not change the model).
    probA_, probB_ : ndarray of shape (n_problems,)
        Platt's P(+1 | f) = 1 / (1 + exp(A f + B)) per problem (``probability=True``).
    n_iter_ : ndarray of int, shape (n_problems,)
    kkt_ : KKTReport, or list of them (one per problem)
    solution_ : Solution, or list of them
        One-vs-one: the problem of pair (i, j) is posed on class i's samples (+1), then
        class j's (-1), increasing training index within each; its ``alpha`` follows that
        order. One-vs-rest and binary: all samples in training order. (Samples of zero
        weight are left out of every problem.)
    n_features_in_, feature_names_in_ : as in scikit-learn
    """

    _methods = ("exact", "smo", "subgradient")

    def __init__(self, C: float | None = 1.0, *, kernel: Any = "rbf", gamma: Any = "scale",
                 degree: float = 3,
                 coef0: float = 0.0, repair_psd: bool = False, fit_intercept: bool = True,
                 class_weight: dict | str | None = None, multiclass: str = "ovo",
                 decision_function_shape: str = "ovr", probability: bool = False,
                 method: str = "exact", tol: float = 1e-6, max_iter: int | None = None,
                 random_state: Any = None, shrinking: bool = True, cache_size: float = 200.0,
                 verbose: bool | int = False, break_ties: bool = False) -> None:
        self.C = C
        self.kernel = kernel
        self.gamma = gamma
        self.degree = degree
        self.coef0 = coef0
        self.repair_psd = repair_psd
        self.fit_intercept = fit_intercept
        self.class_weight = class_weight
        self.multiclass = multiclass
        self.decision_function_shape = decision_function_shape
        self.probability = probability
        self.method = method
        self.tol = tol
        self.max_iter = max_iter
        self.random_state = random_state
        self.shrinking = shrinking
        self.cache_size = cache_size
        self.verbose = verbose
        self.break_ties = break_ties

    def _kernel_spec(self) -> dict:
        return {"kernel": self.kernel, "gamma": self.gamma, "degree": self.degree,
                "coef0": self.coef0, "repair_psd": self.repair_psd}

    def _scheme(self) -> str:
        return self.multiclass

    def _check_params(self) -> float:
        check_choice("multiclass", self.multiclass, ("ovo", "ovr"))
        check_choice("decision_function_shape", self.decision_function_shape, ("ovr", "ovo"))
        return super()._check_params()

    @property
    def coef_(self) -> np.ndarray:
        """Each problem's w = sum_s coefficient_s x_s (linear kernel only)."""
        if getattr(self, "_kernel", None) is None or not self._kernel.is_linear:
            raise AttributeError("coef_ is only available for a fitted linear kernel; "
                                 "use dual_coef_ and support_vectors_")
        coef = self._coefs @ self.support_vectors_
        coef.flags.writeable = False
        return coef


class LinearSVMClassifier(SVMClassifierBase):
    """Linear SVM classifier in C-form (unpenalized intercept, unlike LIBLINEAR's LinearSVC).

    ``min 1/2 ||w||^2 + sum_i C_i max(0, 1 - y_i (<w, x_i> + b))``, C_i = C *
    class_weight[y_i] * sample_weight_i (``loss="hinge"``), or ``... + sum_i C_i max(0, 1 -
    y_i (<w, x_i> + b))^2`` (``loss="squared_hinge"``, LinearSVC's default loss, with b
    unpenalized: LinearSVC's b is penalized, see docs/conventions.md); one-vs-rest for
    more than two classes.

    Parameters
    ----------
    C : float or None, default=1.0
        None or inf: hard margin (hinge loss only).
    loss : {"hinge", "squared_hinge"}, default="hinge"
        The binary problems' loss (:class:`convexlearn.SVM`'s ``loss``); "squared_hinge"
        takes the methods "exact" and "dcd".
    fit_intercept : bool, default=True
    class_weight : dict, "balanced" or None, default=None
        As in :class:`KernelSVMClassifier`.
    probability : bool, default=False
        As in :class:`KernelSVMClassifier` (Platt scaling, normalized one-vs-rest).
    method : {"exact", "dcd", "pegasos", "subgradient"}, default="exact"
        "exact": the cvxpy primal or dual, whichever is faster for the shape.
    tol, max_iter, random_state, verbose :
        As in :class:`KernelSVMClassifier`.

    Attributes
    ----------
    coef_ : ndarray of shape (n_problems, n_features)
        The primal w of each problem.
    intercept_, classes_, class_weight_, support_, n_support_, support_vectors_, dual_coef_,
    n_iter_, kkt_, solution_, probA_, probB_ :
        As in :class:`KernelSVMClassifier` (one-vs-rest layout); ``dual_coef_ @
        support_vectors_`` equals ``coef_`` up to the stationarity residual of ``kkt_``
        (for primal-only methods the multipliers are those the KKT report rebuilt from w).
    """

    _methods = ("exact", "dcd", "pegasos", "subgradient")
    _linear_only = True

    def __init__(self, C: float | None = 1.0, *, loss: str = "hinge", fit_intercept: bool = True,
                 class_weight: dict | str | None = None, probability: bool = False,
                 method: str = "exact", tol: float = 1e-6, max_iter: int | None = None,
                 random_state: Any = None, verbose: bool | int = False) -> None:
        self.C = C
        self.loss = loss
        self.fit_intercept = fit_intercept
        self.class_weight = class_weight
        self.probability = probability
        self.method = method
        self.tol = tol
        self.max_iter = max_iter
        self.random_state = random_state
        self.verbose = verbose

    def _problem_options(self) -> dict:
        return {"loss": self.loss}

    def _check_params(self) -> float:
        check_choice("loss", self.loss, tuple(SVM_LOSSES))
        if self.loss != "hinge":
            check_choice("method", self.method, ("exact", "dcd"))
        return super()._check_params()
