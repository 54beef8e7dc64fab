"""scikit-learn-compatible estimators on convexlearn's verified solvers.

Needs the optional extra: ``pip install convexlearn[sklearn]``. The core package never
imports scikit-learn; this subpackage is imported explicitly
(``from convexlearn.estimators import KernelSVMClassifier``).

Every estimator stores its parameters in ``__init__``, validates them in ``fit`` and
returns ``self``; besides scikit-learn's fitted attributes it keeps the convexlearn
``solution_`` and its optimality report (``kkt_`` for the SVMs). Multiclass problems are
solved one-vs-one (KernelSVMClassifier's default, SVC's layout) or one-vs-rest. :func:`expected_failed_checks` lists, with reasons, the scikit-learn
estimator checks that cannot pass for mathematical reasons.
"""

try:
    import sklearn  # noqa: F401
except ImportError as exc:  # pragma: no cover - exercised in a subprocess test
    raise ImportError("convexlearn.estimators needs scikit-learn, an optional dependency: "
                      "pip install convexlearn[sklearn]") from exc

from .erm import ERMClassifier, ERMRegressor
from .separators import HalfspaceClassifier, NotSeparableError, PerceptronClassifier
from .svm import KernelSVMClassifier, LinearSVMClassifier
from .nu_svm import NuSVMClassifier, NuSVMRegressor
from .crammer_singer import CrammerSingerClassifier
from .regression_svm import OneClassSVM, SVMRegressor
from ._checks import expected_failed_checks

__all__ = ["KernelSVMClassifier", "LinearSVMClassifier", "ERMClassifier", "ERMRegressor",
           "PerceptronClassifier", "HalfspaceClassifier", "NotSeparableError",
           "expected_failed_checks",
           "NuSVMClassifier", "NuSVMRegressor", "CrammerSingerClassifier", "SVMRegressor",
           "OneClassSVM"]
