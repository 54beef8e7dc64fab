"""``cl.verify``: how far is an answer, from any source, from the certified optimum?"""

from __future__ import annotations

import json
import math
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from ..errors import ParameterError
from ..serialize import encode
from ..solution import Solution, check_same_problem, load
from .claims import Source
from .report import Claim, PartReport, check_claim

__all__ = ["verify", "VerifyReport"]

_SHOWN = 10


@dataclass
class VerifyReport:
    """The verdict of :func:`verify`.

    Attributes
    ----------
    source : str
        What was verified ("SVC", "LIBSVM", "LIBLINEAR", "LogisticRegression", "solution").
    passed : bool
        Every part passed at ``tol``: its KKT residuals (SVM) or relative certificate
        (ERM) and its gap are <= tol.
    tol : float
    gap : float
        The largest gap over the parts: the relative duality gap of the given answer
        (SVM), or (F - F*) / max(|F*|, |F|) against the certified optimum (ERM).
    objective, optimum : float
        The answer's objective and the certified optimum's, in convexlearn's conventions,
        summed over the parts (one problem per pair of classes, or per class).
    violators : dict
        index -> largest scaled KKT residual above tol (samples of X for the SVM and for
        the parts of a multiclass model, coordinates of (w, b) for ERM).
    support_missing, support_extra : list of int
        In the optimum's support and not in the answer's, and the reverse (samples, or
        features for an l1 penalty: see ``parts[k].support_kind``).
    flipped : list of int or None
        Samples (of X, or of ``X_test``) whose predicted label differs from the optimum's;
        None for regression.
    proba_disagree : list of int or None
        For a model with predict_proba (SVC(probability=True)): samples where the most
        probable class is not the predicted one.
    parts : list of PartReport
    notes : list of str
    """

    source: str
    passed: bool
    tol: float
    gap: float
    objective: float
    optimum: float
    violators: dict
    support_missing: list
    support_extra: list
    flipped: list | None
    proba_disagree: list | None = None
    parts: list = field(default_factory=list)
    notes: list = field(default_factory=list)

    def to_dict(self) -> dict:
        """Strict-JSON data (NaN and inf encoded as strings, see convexlearn.serialize)."""
        return encode({
            "source": self.source, "passed": self.passed, "tol": self.tol, "gap": self.gap,
            "objective": self.objective, "optimum": self.optimum,
            "violators": {str(k): v for k, v in self.violators.items()},
            "support_missing": self.support_missing, "support_extra": self.support_extra,
            "flipped": self.flipped, "proba_disagree": self.proba_disagree,
            "parts": [p.to_dict() for p in self.parts], "notes": self.notes})

    def to_json(self) -> str:
        """:meth:`to_dict` as JSON text."""
        return json.dumps(self.to_dict(), indent=1, allow_nan=False)

    def summary(self) -> str:
        """A few lines for people: verdict, gap, objectives, and the sets that differ."""
        def show(items):
            items = list(items)
            more = f", ... ({len(items)} in all)" if len(items) > _SHOWN else ""
            return "[" + ", ".join(map(str, items[:_SHOWN])) + more + "]"

        rel = (self.objective - self.optimum) / max(abs(self.optimum), 1e-300)
        lines = [f"{self.source}: {'PASSED' if self.passed else 'FAILED'} at tol={self.tol:g}"
                 f" (gap {self.gap:.3e})",
                 f"  objective {self.objective:.12g}, certified optimum {self.optimum:.12g} "
                 f"(relative excess {rel:.3e})",
                 f"  KKT violators: {len(self.violators)} "
                 f"{show(f'{k}: {v:.2e}' for k, v in self.violators.items())}",
                 f"  support missing: {show(self.support_missing)}; extra: "
                 f"{show(self.support_extra)}"]
        if self.flipped is not None:
            lines.append(f"  predictions flipped against the optimum: {len(self.flipped)} "
                         f"{show(self.flipped)}")
        if self.proba_disagree is not None:
            lines.append(f"  predict_proba disagrees with predict: {len(self.proba_disagree)} "
                         f"{show(self.proba_disagree)}")
        if len(self.parts) > 1:
            for p in self.parts:
                lines.append(f"  [{p.label}] {'passed' if p.passed else 'FAILED'}, gap "
                             f"{p.gap:.2e}, KKT {p.kkt_violation:.2e}")
        lines.extend(f"  note: {n}" for n in self.notes)
        return "\n".join(lines)

    __str__ = summary


def _report(source: Source, tol: float, X_eval: Any) -> VerifyReport:
    parts: list[PartReport] = [check_claim(c, tol) for c in source.claims]
    violators: dict = {}
    for p in parts:
        for k, v in p.violators.items():
            violators[k] = max(v, violators.get(k, 0.0))
    violators = dict(sorted(violators.items(), key=lambda kv: -kv[1]))
    flipped = None
    if source.scheme != "regression":
        single = len(parts) == 1 and X_eval is None and source.claims[0].rows is None
        if single:      # the training samples of one problem: the reports have f
            mine, best = [parts[0].decision], [parts[0].optimum_decision]
        else:           # verify() passes X_eval (X or X_test) whenever not single
            mine, best = zip(*(c.decisions(X_eval) for c in source.claims))
        flipped = np.flatnonzero(source.predict(mine) != source.predict(best)).tolist()
    proba = None
    if source.predict_proba is not None and X_eval is not None:
        predict_proba, predict = source.predict_proba
        top = source.classes[np.argmax(predict_proba(X_eval), axis=1)]
        proba = np.flatnonzero(top != predict(X_eval)).tolist()

    def union(name):
        return sorted({i for p in parts for i in getattr(p, name)}, key=str)

    return VerifyReport(
        source=source.kind, passed=all(p.passed for p in parts), tol=tol,
        gap=max((p.gap for p in parts), default=math.nan),
        objective=float(sum(p.objective for p in parts)),
        optimum=float(sum(p.optimum for p in parts)), violators=violators,
        support_missing=union("support_missing"), support_extra=union("support_extra"),
        flipped=flipped, proba_disagree=proba, parts=parts, notes=source.notes)


def _problem_source(problem: Any, solution: Solution, kind: str) -> Source:
    check_same_problem(solution, problem.fingerprint(), "verify")
    claim = Claim(problem, solution, kind)
    if getattr(problem, "label_map", None) is None:
        return Source(kind, [claim], "regression")
    return Source(kind, [claim], "binary", problem.classes)


def _data(X: Any, y: Any):
    """X and y given as arrays, or X as an svmlight file path (its labels are y)."""
    if isinstance(X, (str, Path)):
        from ..svmlight import read_svmlight
        data = read_svmlight(X)
        return data.X, (data.y if y is None else np.asarray(y))
    if y is None:
        raise ParameterError("verify needs the training labels y (or an svmlight file as X)")
    return X, np.asarray(y)


def verify(model: Any = None, X: Any = None, y: Any = None, *, problem: Any = None,
           alpha: Any = None, b: Any = None, sample_weight: Any = None, X_test: Any = None,
           C: float | None = None, tol: float = 1e-6) -> VerifyReport:
    """Verify an answer against the certified optimum of the problem it claims to solve.

    Sources (docs/verify.md has one worked example of each):

    * a fitted scikit-learn estimator: ``verify(est, X, y, sample_weight=...)`` with the
      training data (see :mod:`convexlearn.verification.sklearn_models` for the mapping);
    * a LIBSVM or LIBLINEAR model file: ``verify("model.txt", X, y, C=...)``, X and y the
      training data or X the path of the svmlight file it was trained on;
    * a convexlearn solution, or a saved one (path of ``Solution.save``), and its problem:
      ``verify(solution, problem)``;
    * raw arrays: ``verify((w, b), problem)`` or ``verify(alpha=..., b=..., problem=svm)``.

    Parameters
    ----------
    tol : float
        Tolerance of the verdict (relative, see :class:`VerifyReport`).
    X_test : array_like, optional
        Samples on which ``flipped`` compares predictions (default: the training samples).
    C : float, optional
        For model files, which do not record it (LIBLINEAR needs it).

    Returns
    -------
    VerifyReport
    """
    if not (isinstance(tol, (int, float)) and math.isfinite(tol) and tol > 0):
        raise ParameterError(f"tol must be a positive number; got {tol!r}")
    if problem is None and X is not None and hasattr(X, "fingerprint"):
        problem, X = X, None
    if problem is not None:
        if alpha is not None:
            if not hasattr(problem, "C_bounds"):
                raise ParameterError("alpha= needs an SVM problem")
            source = _problem_source(problem, problem.from_alpha(alpha, b), "alpha")
            source.claims[0].solution.alpha = np.asarray(alpha, dtype=float)
        elif isinstance(model, tuple) and len(model) == 2:
            w = np.asarray(model[0], dtype=float)
            source = _problem_source(problem, Solution(w=w, b=float(model[1])), "(w, b)")
        elif isinstance(model, (str, Path)):
            source = _problem_source(problem, load(model), "saved solution")
        elif isinstance(model, Solution):
            source = _problem_source(problem, model, "solution")
        else:
            raise ParameterError(f"with a problem, verify takes a Solution, a saved solution's "
                                 f"path, (w, b) or alpha=; got {type(model).__name__}")
        X_eval = X_test
    elif isinstance(model, (str, Path)):
        from ..modelfiles import read_model_file
        from .model_files import from_model_file
        parsed = read_model_file(model)
        X, y = _data(X, y)
        source = from_model_file(parsed, X, y, C=C, sample_weight=sample_weight)
        X_eval = X if X_test is None else X_test
    elif hasattr(model, "fit") and hasattr(model, "get_params"):
        from .sklearn_models import from_estimator
        X, y = _data(X, y)
        source = from_estimator(model, X, y, sample_weight=sample_weight)
        X_eval = X if X_test is None else X_test
    else:
        raise ParameterError(f"verify cannot read a {type(model).__name__}: give a fitted "
                             f"scikit-learn estimator, a LIBSVM/LIBLINEAR model file, a "
                             f"Solution with its problem, (w, b) with a problem, or alpha= "
                             f"with problem=")
    single = len(source.claims) == 1 and source.claims[0].rows is None
    return _report(source, float(tol), None if (single and X_test is None) else X_eval)
