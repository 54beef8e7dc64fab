"""The lectures' online update rules, side by side, in one generic loop.

Each rule sees one sample (x, y) at a time (x already carries the constant 1 when an
intercept is fitted, so w = (w, b)), with y in {-1, +1}, f = <w, x>, m = y f, and
updates w <- w + eta * delta(w, x, y) x:

=============  ==========================  ============================================
rule           delta                       stochastic gradient step on
=============  ==========================  ============================================
perceptron     y if m <= 0 else 0          max(0, -m) (Rosenblatt; eta is irrelevant
                                           from w = 0, the loop uses eta = 1)
lms            (y - f)                     1/2 (y - f)^2  (ADALINE / Widrow-Hoff, +-1
                                           targets)
logistic       y sigma(-m)                 log(1 + exp(-m))  (= (t - sigma(f)), t in {0,1})
sigmoid        (t - o) o (1 - o)           1/2 (t - o)^2, o = sigma(f), t = (y + 1)/2
=============  ==========================  ============================================

The perceptron epoch is :func:`convexlearn.solvers.linear_svm.perceptron.perceptron_pass` (the
Rosenblatt implementation of the package); the other rules are small functions of
(w, x, y, eta). None of them minimizes a regularized ERM objective exactly: they are
the classical online algorithms, kept for comparison (the history records, per epoch,
the mean loss each rule descends and the training mistakes).
"""

from __future__ import annotations

from typing import Any, Callable

import numpy as np
from numpy.typing import ArrayLike
from scipy.special import expit

from ...data import as_binary_labels, as_features, check_choice, check_positive
from ...solution import History, Solution, Timer
from .perceptron import perceptron_pass

__all__ = ["ONLINE_RULES", "online_fit", "lms_rule", "logistic_rule", "sigmoid_rule"]


def lms_rule(w: Any, x: Any, y: ArrayLike, eta: float) -> Any:
    """ADALINE / LMS: w + eta (y - <w, x>) x."""
    return w + eta * (y - w @ x) * x


def logistic_rule(w: Any, x: Any, y: ArrayLike, eta: float) -> Any:
    """Logistic SGD: w + eta y sigma(-y <w, x>) x."""
    return w + eta * y * expit(-y * (w @ x)) * x


def sigmoid_rule(w: Any, x: Any, y: ArrayLike, eta: float) -> Any:
    """Sigmoid neuron on 1/2 (t - o)^2: w + eta (t - o) o (1 - o) x, o = sigma(<w, x>)."""
    o, t = expit(w @ x), 0.5 * (y + 1.0)
    return w + eta * (t - o) * o * (1.0 - o) * x


def _mean_losses(rule, f, y):
    m = y * f
    if rule == "perceptron":
        return float(np.mean(np.maximum(0.0, -m)))
    if rule == "lms":
        return float(np.mean(0.5 * (y - f) ** 2))
    if rule == "logistic":
        return float(np.mean(np.logaddexp(0.0, -m)))
    return float(np.mean(0.5 * (0.5 * (y + 1.0) - expit(f)) ** 2))


#: Per-sample rules (the perceptron runs through perceptron_pass, epoch at a time).
ONLINE_RULES = {"perceptron": None, "lms": lms_rule, "logistic": logistic_rule,
                "sigmoid": sigmoid_rule}


def online_fit(X: ArrayLike, y: ArrayLike, rule: str = "perceptron", eta: float = 0.1,
               epochs: int = 100, *,
               intercept: bool = True, shuffle: bool = True, seed: Any = None,
               callback: Callable[..., Any] | None = None) -> Any:
    """Run an online rule for ``epochs`` passes over the data.

    Parameters
    ----------
    rule : {"perceptron", "lms", "logistic", "sigmoid"}
    eta : float > 0
        Learning rate (ignored by the perceptron).
    epochs : int
    intercept : bool
        Append the constant feature 1 (its weight is b).
    shuffle : bool
        Visit the samples in a fresh random order each epoch (``seed``).
    callback : callable, optional
        ``callback(epoch, w_full, mean_loss)``; returning False stops.

    Returns
    -------
    Solution
        ``w``, ``b``; history per epoch: objective (mean loss of the rule), mistakes,
        time. Status: "converged" (perceptron epoch without a mistake), "stopped" or
        "max_iter" (the other rules have no finite stopping point).
    """
    check_choice("rule", rule, ONLINE_RULES)
    eta = check_positive("eta", eta)
    X = as_features(X)
    s, label_map = as_binary_labels(y, n=X.shape[0])
    Xe = np.column_stack([X, np.ones(X.shape[0])]) if intercept else X
    rng = np.random.default_rng(seed)
    w = np.zeros(Xe.shape[1])
    timer, history, status, epoch = Timer(), History(), "max_iter", 0
    for epoch in range(1, int(epochs) + 1):
        order = rng.permutation(len(s)) if shuffle else np.arange(len(s))
        if rule == "perceptron":
            updates = perceptron_pass(s[order, None] * Xe[order], w)
        else:
            step = ONLINE_RULES[rule]
            for i in order:
                w = step(w, Xe[i], s[i], eta)
            updates = None
        f = Xe @ w
        mistakes = int(np.sum(np.where(f >= 0, 1.0, -1.0) != s))
        loss = _mean_losses(rule, f, s)
        history.record(objective=loss, mistakes=mistakes, time=timer())
        if callback is not None and callback(epoch, w, loss) is False:
            status = "stopped"
            break
        if rule == "perceptron" and updates == 0:
            status = "converged"
            break
    if rule == "perceptron" and status == "max_iter":
        status = "not converged"
    wv, b = (w[:-1], float(w[-1])) if intercept else (w, 0.0)
    sol = Solution(w=wv.copy(), b=b, objective=history["objective"][-1], status=status,
                   method=f"online-{rule}", n_iter=epoch, history=history, time_s=timer(),
                   provenance={"rule": rule, "eta": eta, "seed": seed, "shuffle": shuffle})
    sol.extra["classes"] = label_map.classes
    return sol
