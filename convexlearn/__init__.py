"""convexlearn: reference toolkit for convex learning problems.

The SVM family, halfspaces and regularized empirical risk minimization, each written
as an exact cvxpy problem and solved by classical iterative methods; every answer is
checked against its optimality (KKT) conditions recomputed from the data.

Conventions: docs/conventions.md and the docstrings of each class.
"""

from . import logs as _logs  # noqa: F401  (the "convexlearn" logger, NullHandler)
from .version import __version__  # noqa: F401  (cl.__version__)
from .errors import (ConvexLearnError, DataError, InfeasibleError, NotApplicableError,
                     NotPSDError, ParameterError, SolverError, UnboundedError)
from .kernels import Kernel, make_kernel, polynomial_features
from .solution import History, Solution, load
from .path import Path
# One line per problem family / feature module (keeps concurrent additions conflict-free).
from .certify.kkt import KKTReport
from .svm import SVM
from .svr import SVR
from .one_class import OneClassSVM
from .nu_svm import NuSVM, NuSVR
from .certify.qp_kkt import QPKKTReport
from .svm_l2 import SquaredHingeSVM  # noqa: F401  (registers cl.SVM(..., loss="squared_hinge"))
from .crammer_singer import CrammerSingerSVM
from .halfspace import Halfspace, SeparabilityResult
from .shattering import shatters
from .perceptron import perceptron
from .compare import Comparison, compare
from .erm import ERM
from .certify.optimality import OptimalityReport
from .verification import VerifyReport, verify
from .svmlight import read_svmlight
from .distributed import register as _register_dask

_register_dask()     # cl.ERM / cl.SVM on dask arrays (dask itself is imported on use)


__all__ = [
    "ConvexLearnError", "DataError", "ParameterError", "NotPSDError", "InfeasibleError",
    "UnboundedError", "SolverError", "NotApplicableError",
    "Kernel", "make_kernel", "polynomial_features",
    "History", "Solution", "load",
    "KKTReport", "SVM",
    "CrammerSingerSVM",
    "Halfspace", "SeparabilityResult", "shatters", "perceptron",
    "compare", "Comparison",
    "ERM", "OptimalityReport", "Path",
    "verify", "VerifyReport", "read_svmlight",
    "SVR", "OneClassSVM", "QPKKTReport",
    "NuSVM", "NuSVR",
]
