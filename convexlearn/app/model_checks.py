"""Checks of a problem's ``[model]`` made when it is read, before any data or solver runs.

Two kinds: the *value* checks of single keys (``Key.check`` in
:mod:`convexlearn.app.schema`: the library's own validators, so that ``C = -1`` is reported
with the file and line of its key), and the *suitability* of a method to the model
(:func:`svm_unsuitable`, :func:`erm_unsuitable`): ``--methods exact smo dcd`` on an rbf
problem fails at once, naming dcd, instead of after exact and smo have run. The solvers
check the same conditions again when they run; these checks only move the refusal before
the work.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from ..errors import NotApplicableError, ParameterError

__all__ = ["C", "finite_C", "nu", "intercept_mode", "kernel", "gamma", "degree", "loss", "penalty", "lam", "p", "l1_ratio",
           "svm_unsuitable", "erm_unsuitable", "ERM_NEEDS"]


# ------------------------------------------------------------------ value checks
def C(value: Any) -> None:
    """C > 0, or inf for the hard margin."""
    from ..data import check_C
    check_C(value)


def finite_C(value: Any) -> None:
    """C > 0 and finite (the problems that have no hard-margin limit)."""
    from ..data import check_positive
    check_positive("C", value)


def nu(value: Any) -> None:
    """nu in (0, 1] (the nu-problems; nu-SVC's bound by the class balance is checked when
    the data are read)."""
    from ..nu_svm import check_nu_fraction
    check_nu_fraction(value)


def intercept_mode(value: Any) -> None:
    """True (unpenalized b), False (b = 0) or "penalized" (the L2-loss SVM)."""
    from ..svm_l2 import intercept_mode as mode
    mode(value)


def kernel(value: Any) -> None:
    """One of the named kernels a problem file can give (not "precomputed")."""
    from ..kernels import KERNELS
    if value not in KERNELS or value == "precomputed":
        raise ParameterError(f"unknown kernel {value!r}; valid: linear, rbf, poly, sigmoid")


def gamma(value: Any) -> None:
    """A number > 0, "scale" or "auto"."""
    from ..data import check_positive
    if isinstance(value, str):
        if value not in ("scale", "auto"):
            raise ParameterError(f"gamma must be a number > 0, 'scale' or 'auto'; got "
                                 f"{value!r}")
    else:
        check_positive("gamma", value)


def degree(value: Any) -> None:
    """A positive integer."""
    from ..data import check_count
    check_count("degree", value)


def loss(value: Any) -> None:
    """A loss of :data:`convexlearn.losses.LOSSES`."""
    from ..losses import make_loss
    make_loss(value)


def penalty(value: Any) -> None:
    """A penalty of :data:`convexlearn.penalties.PENALTIES`."""
    from ..penalties import PENALTIES
    if value not in PENALTIES:
        raise ParameterError(f"unknown penalty {value!r}; valid: "
                             f"{', '.join(sorted(PENALTIES))}")


def lam(value: Any) -> None:
    """lam >= 0 and finite."""
    from ..data import check_nonnegative
    check_nonnegative("lam", value)


def p(value: Any) -> None:
    """The lp penalty's exponent, as the penalty checks it (a finite number >= 1)."""
    from ..penalties import make_penalty
    make_penalty("lp", p=value)


def l1_ratio(value: Any) -> None:
    """The elastic net's mixing, as the penalty checks it (in [0, 1])."""
    from ..penalties import make_penalty
    make_penalty("elastic_net", l1_ratio=value)


def quantile(value: Any) -> None:
    """tau of the quantile loss, as the loss checks it (in (0, 1))."""
    from ..losses import make_loss
    make_loss("quantile", quantile=value)


def epsilon(value: Any) -> None:
    """The epsilon-insensitive loss's half-width, as the loss checks it (>= 0)."""
    from ..losses import make_loss
    make_loss("epsilon_insensitive", epsilon=value)


def delta(value: Any) -> None:
    """The Huber loss's threshold, as the loss checks it (> 0)."""
    from ..losses import make_loss
    make_loss("huber", delta=value)


# ------------------------------------------------------------------- suitability
def svm_unsuitable(model: dict, method: str) -> str | None:
    """Why an SVM method cannot solve the model (None: it can): dcd, pegasos and
    exact-linear keep w, so they need the linear kernel; dcd, pegasos and subgradient
    minimize the hinge form, so they need a finite C."""
    if method in ("dcd", "pegasos", "exact-linear") and model["kernel"] != "linear":
        return f"it needs the linear kernel (it keeps w explicitly); the kernel is " \
               f"{model['kernel']!r}"
    if method in ("dcd", "pegasos", "subgradient") and not math.isfinite(model["C"]):
        return "it needs a finite C (hinge form); this is the hard margin (C = inf)"
    return None


#: What each iterative ERM method needs of the loss and penalty (the flags of
#: :meth:`convexlearn.solvers.erm.oracle.ERMOracle.require` its solver passes).
ERM_NEEDS = {"newton": {"hessian": True, "twice_smooth_penalty": True},
             "irls": {"hessian": True, "twice_smooth_penalty": True},
             "gd": {"differentiable_loss": True, "smooth_penalty": True},
             "subgradient": {"subgradient": True},
             **{m: {"differentiable_loss": True, "prox": True}
                for m in ("prox", "ista", "fista", "admm")}}


def erm_unsuitable(model: dict, method: str) -> str | None:
    """Why an ERM method cannot solve the model (None: it can): convexity for every
    method, :data:`ERM_NEEDS` for the iterative ones, coordinate descent's losses and
    penalties, and the closed form's (squared loss, penalty none or l2)."""
    from ..losses import make_loss
    from ..penalties import make_penalty
    from ..routes.erm import closed_form_applies
    from ..solvers.erm import cd as cd_module
    from ..solvers.erm.oracle import ERMOracle
    extra = {k: model[k] for k in ("p", "l1_ratio") if model.get(k) is not None}
    loss_, penalty_ = make_loss(model["loss"]), make_penalty(model["penalty"], **extra)
    # the requirements read the loss, the penalty and lam only: a one-sample oracle
    oracle = ERMOracle(np.zeros((1, 1)), np.zeros(1), loss_, penalty_, model["lam"])
    try:
        oracle.require(method, **ERM_NEEDS.get(method, {}))
        if method == "cd":
            cd_module.require(loss_, penalty_, f"the {model['loss']} loss with the "
                              f"{model['penalty']} penalty", method="method 'cd'")
    except NotApplicableError as exc:
        return str(exc)
    if method == "closed-form":
        return closed_form_applies(loss_, penalty_, model["lam"])
    return None
