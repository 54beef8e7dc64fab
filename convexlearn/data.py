"""Validation of raw input and the binary label mapping.

This is the only module that looks at raw user input.  Everything downstream
receives float64, finite, C-contiguous arrays and labels in {-1, +1}.

Label convention (docs/conventions.md, scikit-learn's rule): the two distinct
labels are sorted, ``classes[0] -> -1`` and ``classes[1] -> +1``.
"""

from __future__ import annotations

import inspect
import math
import numbers
from dataclasses import dataclass
from typing import Any, Callable

import numpy as np
from numpy.typing import ArrayLike

from .errors import DataError, ParameterError

__all__ = [
    "LabelMap",
    "show_values",
    "as_features",
    "as_binary_labels",
    "as_targets",
    "check_C",
    "check_positive",
    "check_nonnegative",
    "check_choice",
    "check_count",
    "check_bool",
    "check_seed",
    "check_tol",
    "check_real",
    "check_callable",
    "check_solver",
    "check_solve_options",
    "as_sample_weight",
    "is_sparse",
    "row_sq_norms",
    "sq_norms",
    "dense_or_refuse",
    "DENSIFY_LIMIT_BYTES",
    "ARRAY_BACKENDS",
    "backend_class",
]

#: Array kinds handled by a package above the problem classes: problem name ("ERM",
#: "SVM") -> list of (accepts(X) -> bool, subclass()) pairs. convexlearn.distributed
#: registers dask arrays here, so ``cl.ERM(dask_X, y)`` builds its subclass while the
#: problem classes import nothing of it.
ARRAY_BACKENDS: dict[str, list] = {"ERM": [], "SVM": []}


def backend_class(problem: str, X: ArrayLike, base: type) -> type:
    """The subclass of ``base`` registered for X's array kind, or ``base`` itself."""
    for accepts, subclass in ARRAY_BACKENDS.get(problem, ()):
        if accepts(X):
            cls = subclass()
            return cls if issubclass(cls, base) else base
    return base

#: A method that needs dense data densifies a scipy.sparse X only when the dense float64
#: copy takes at most this many bytes (256 MiB); beyond, it refuses with the size.
DENSIFY_LIMIT_BYTES = 256 * 2 ** 20

#: Methods that use X only through products (X @ v, X^T u, row norms), named in errors.
SPARSE_METHODS = ("SVM (linear kernel): 'dcd', 'pegasos', 'subgradient' and the KKT report; "
                  "ERM: 'gd', 'newton', 'prox', 'fista', 'subgradient'")


def is_sparse(X: ArrayLike) -> bool:
    """True for a scipy.sparse matrix or array."""
    return hasattr(X, "tocsr") and hasattr(X, "nnz")


#: Stored values squared at a time by :func:`row_sq_norms` (2 MiB of temporaries).
ROW_NORM_BLOCK = 2**18


def row_sq_norms(X: Any) -> np.ndarray:
    """||x_i||^2 for every row of a dense or scipy.sparse X: the linear kernel's diagonal
    (:func:`sq_norms` along the rows)."""
    return sq_norms(X, axis=1)


def sq_norms(X: Any, axis: int = 1) -> np.ndarray:
    """Sums of squares of a dense or scipy.sparse X along ``axis`` (1: of each row, 0: of
    each column).

    A sparse X is read in place by blocks of about :data:`ROW_NORM_BLOCK` stored values
    (along its compressed axis: each block's squares summed by reduceat; across it:
    scattered by bincount), so the extra memory is O(n + d) plus one block, never a copy
    of X (``X.multiply(X)`` was two copies of all the values and an int64 copy of the
    indices: 84 MB on 42 MB of data).
    """
    if not is_sparse(X):
        return np.einsum("ij,ij->i" if axis == 1 else "ij,ij->j", X, X)
    if X.format not in ("csr", "csc"):
        X = X.tocsr()
    size = X.shape[axis == 0]
    out = np.zeros(size)
    data, indptr = X.data, X.indptr
    if (X.format == "csr") != (axis == 1):          # across the compressed axis
        for k0 in range(0, data.shape[0], ROW_NORM_BLOCK):
            v = data[k0:k0 + ROW_NORM_BLOCK]
            out += np.bincount(X.indices[k0:k0 + ROW_NORM_BLOCK], weights=v * v,
                               minlength=size)
        return out
    lo = 0
    while lo < size:
        # compressed rows (columns) lo..hi-1 hold at most ROW_NORM_BLOCK values (or one)
        hi = int(np.searchsorted(indptr, indptr[lo] + ROW_NORM_BLOCK, side="right")) - 1
        hi = min(max(hi, lo + 1), size)
        k0, k1 = int(indptr[lo]), int(indptr[hi])
        if k1 > k0:
            starts = indptr[lo:hi] - k0
            full = starts < indptr[lo + 1:hi + 1] - k0      # empty ones keep their 0
            v = data[k0:k1]
            # consecutive nonempty starts: each segment is exactly one row's values
            out[lo:hi][full] = np.add.reduceat(v * v, starts[full])
        lo = hi
    return out


def _bytes(n: int) -> str:
    return f"{n:,} bytes ({n / 2 ** 30:.2f} GiB)"


def dense_or_refuse(X: ArrayLike, purpose: str) -> Any:
    """X itself when dense; a sparse X densified when its float64 copy is at most
    :data:`DENSIFY_LIMIT_BYTES`, else a DataError giving the size of the dense copy.

    ``purpose`` names what needs dense data (e.g. "the exact SVM routes (cvxpy)").
    """
    if not is_sparse(X):
        return X
    n, d = X.shape
    size = 8 * n * d
    if size > DENSIFY_LIMIT_BYTES:
        raise DataError(
            f"{purpose} needs X dense, and X is a scipy.sparse {n} x {d} matrix ({X.nnz:,} "
            f"stored values) whose dense copy would take {_bytes(size)}, above the "
            f"densification limit of {_bytes(DENSIFY_LIMIT_BYTES)}. Methods that work on "
            f"sparse X through products: {SPARSE_METHODS}")
    return np.ascontiguousarray(X.toarray(), dtype=np.float64)


def _sparse_features(X, name: str):
    """A validated scipy.sparse X as CSR float64 (never densified)."""
    if np.iscomplexobj(X.data):
        raise DataError(f"{name} has complex values (dtype {X.dtype}); convexlearn works over "
                        f"the reals")
    if X.ndim != 2:
        raise DataError(f"{name} must be 2-dimensional; got shape {X.shape}")
    n, d = X.shape
    if n == 0 or d == 0:
        raise DataError(f"{name} is empty: shape {X.shape}")
    if getattr(X, "_convexlearn_validated", False):
        return X        # already a problem's own validated copy (ERM's, handed to its SVM)
    given = X
    # CSR float64 in canonical form is kept as given (as a dense float64 array is: no copy
    # of the data); anything else is converted into a copy, the caller's matrix untouched
    X = X.tocsr().astype(np.float64, copy=False)
    if not X.has_canonical_format and X is given:
        X = X.copy()
    if not np.all(np.isfinite(X.data)):
        k = int(np.flatnonzero(~np.isfinite(X.data))[0])
        i = int(np.searchsorted(X.indptr, k, side="right") - 1)
        raise DataError(f"{name} has non-finite value(s) (NaN or inf); first at row {i}, "
                        f"column {int(X.indices[k])}: {X.data[k]!r}")
    X.sum_duplicates()
    if X is not given:      # only our own copy is marked: the caller may change theirs
        X._convexlearn_validated = True
    return X

_MAX_SHOWN = 8


def show_values(values: Any) -> str:
    """Labels or values for an error message: the first few as reprs, then how many."""
    values = list(values)
    shown = ", ".join(repr(v.item() if hasattr(v, "item") else v) for v in values[:_MAX_SHOWN])
    if len(values) > _MAX_SHOWN:
        shown += f", ... ({len(values)} in all)"
    return "[" + shown + "]"


def _non_numeric(arr: np.ndarray, shown: int = 3) -> str:
    """The first entries that are not numbers, with their (row, column) positions (the
    first values of the array are usually fine numbers: showing them misleads)."""
    bad = []
    for index, value in np.ndenumerate(arr):
        try:
            float(value)
        except (TypeError, ValueError):
            value = value.item() if isinstance(value, np.generic) else value
            bad.append(f"{value!r} at {index if len(index) != 1 else index[0]}")
            if len(bad) == shown:
                break
    return "non-numeric value(s) " + ", ".join(bad) if bad else "no numeric dtype"


def as_features(X: ArrayLike, name: str = "X", allow_empty_features: bool = False,
                sparse: str = "densify") -> Any:
    """Validate a design matrix and return it as a float64, C-contiguous array.

    A scipy.sparse X is kept sparse (CSR, float64) with ``sparse="keep"`` (for methods
    that use X only through products); with ``sparse="densify"`` it is densified when the
    dense copy is at most :data:`DENSIFY_LIMIT_BYTES`, else refused with the dense size.

    Parameters
    ----------
    X : array_like of shape (n_samples, n_features)
        Numeric, real, finite, two-dimensional, with at least one sample and one feature.
    name : str
        The name used in error messages.

    Returns
    -------
    numpy.ndarray of shape (n_samples, n_features), dtype float64

    Raises
    ------
    DataError
        For non-numeric, complex, non-finite, empty or non-2-D input.
    """
    if is_sparse(X):
        if sparse == "keep":
            return _sparse_features(X, name)
        return dense_or_refuse(_sparse_features(X, name), "this method")
    try:
        arr = np.asarray(X)
    except Exception as exc:  # ragged lists and the like
        raise DataError(f"{name} could not be read as an array: {exc}") from None
    if np.iscomplexobj(arr):
        raise DataError(f"{name} has complex values (dtype {arr.dtype}); convexlearn works "
                        f"over the reals")
    if arr.dtype.kind not in "biuf":
        try:
            arr = arr.astype(np.float64)
        except (TypeError, ValueError):
            raise DataError(f"{name} must be numeric; got dtype {arr.dtype} with "
                            f"{_non_numeric(arr)}") from None
    if arr.ndim != 2:
        hint = (" (a single feature must be shaped (n, 1): use X.reshape(-1, 1))"
                if arr.ndim == 1 else "")
        raise DataError(f"{name} must be 2-dimensional (n_samples, n_features); "
                        f"got shape {arr.shape}{hint}")
    n, d = arr.shape
    if n == 0:
        raise DataError(f"{name} is empty: shape {arr.shape} has no samples")
    if d == 0 and not allow_empty_features:
        raise DataError(f"{name} has no features: shape {arr.shape}")
    arr = np.ascontiguousarray(arr, dtype=np.float64)
    if not np.all(np.isfinite(arr)):
        bad = np.argwhere(~np.isfinite(arr))
        i, j = bad[0]
        raise DataError(
            f"{name} has {len(bad)} non-finite value(s) (NaN or inf); first at row {i}, "
            f"column {j}: {arr[i, j]!r}")
    return arr


@dataclass(frozen=True)
class LabelMap:
    """The mapping from the user's two labels to {-1, +1}.

    ``classes[0] -> -1`` and ``classes[1] -> +1``, with ``classes`` sorted.
    """

    classes: np.ndarray

    def to_signed(self, y: ArrayLike) -> np.ndarray:
        """Map labels in ``classes`` to {-1.0, +1.0}."""
        y = np.asarray(y)
        out = np.where(y == self.classes[1], 1.0, -1.0)
        unknown = ~((y == self.classes[0]) | (y == self.classes[1]))
        if np.any(unknown):
            raise DataError(f"labels {show_values(np.unique(y[unknown]))} are not among the "
                            f"classes {show_values(self.classes)}")
        return out

    def to_labels(self, s: Any) -> np.ndarray:
        """Map signs (``s >= 0`` -> ``classes[1]``, sign(0) = +1) back to labels."""
        return np.where(np.asarray(s) >= 0, self.classes[1], self.classes[0])

    def describe(self) -> str:
        """E.g. ``'ham' -> -1, 'spam' -> +1`` (plain Python reprs)."""
        neg, pos = (c.item() if hasattr(c, "item") else c for c in self.classes)
        return f"{neg!r} -> -1, {pos!r} -> +1"


def _column(y, n: int | None, name: str) -> np.ndarray:
    arr = np.asarray(y)
    if arr.ndim == 2 and 1 in arr.shape:
        arr = arr.ravel()
    if arr.ndim != 1:
        raise DataError(f"{name} must be 1-dimensional; got shape {arr.shape}")
    if arr.size == 0:
        raise DataError(f"{name} is empty")
    if n is not None and arr.shape[0] != n:
        raise DataError(f"X has {n} samples but {name} has {arr.shape[0]} entries")
    if np.iscomplexobj(arr):
        raise DataError(f"{name} has complex values; labels and targets must be real")
    return arr


def as_binary_labels(y: ArrayLike, n: int | None = None, name: str = "y") -> tuple[np.ndarray,
                     LabelMap]:
    """Validate binary class labels and map them to {-1, +1}.

    Any two distinct labels are accepted (numbers, strings, booleans). Sorted,
    ``classes[0] -> -1`` and ``classes[1] -> +1``.

    Returns
    -------
    y_signed : numpy.ndarray of float64 in {-1, +1}
    label_map : LabelMap

    Raises
    ------
    DataError
        Wrong length, NaN labels, one class, more than two classes, or labels that
        look continuous (more than two distinct non-integer floats).
    """
    arr = _column(y, n, name)
    if arr.dtype.kind == "f" and not np.all(np.isfinite(arr)):
        raise DataError(f"{name} has non-finite labels (NaN or inf) at positions "
                        f"{np.flatnonzero(~np.isfinite(arr))[:_MAX_SHOWN].tolist()}")
    if arr.dtype.kind == "O":
        try:
            classes = np.unique(arr)
        except TypeError:
            raise DataError(f"{name} mixes label types that cannot be sorted: "
                            f"{show_values(list(dict.fromkeys(arr.tolist())))}") from None
    else:
        classes = np.unique(arr)
    if classes.size == 1:
        raise DataError(f"{name} has one class only ({classes[0]!r}); a binary classifier "
                        f"needs two")
    if classes.size > 2:
        if arr.dtype.kind == "f" and np.any(classes != np.round(classes)):
            raise DataError(
                f"{name} looks continuous ({classes.size} distinct non-integer values such as "
                f"{show_values(classes[:3])}); a classifier needs two classes - use a "
                f"regression loss for real targets")
        raise DataError(f"{name} has {classes.size} classes {show_values(classes)}; this "
                        f"model is binary: choose two classes")
    label_map = LabelMap(classes=classes)
    return label_map.to_signed(arr), label_map


def as_targets(y: ArrayLike, n: int | None = None, name: str = "y", noun: str = "targets",
               purpose: str = " for a regression loss") -> np.ndarray:
    """Validate real regression targets (finite float64 vector of length ``n``); ``noun``
    and ``purpose`` word the errors for other real vectors (e.g. sample weights)."""
    arr = _column(y, n, name)
    if arr.dtype.kind not in "biuf":
        raise DataError(f"{name} must hold real numbers{purpose}; got dtype "
                        f"{arr.dtype} with values such as {show_values(np.unique(arr)[:3])}")
    arr = arr.astype(np.float64)
    if not np.all(np.isfinite(arr)):
        raise DataError(f"{name} has non-finite {noun} (NaN or inf) at positions "
                        f"{np.flatnonzero(~np.isfinite(arr))[:_MAX_SHOWN].tolist()}")
    return arr


def as_sample_weight(sample_weight: Any, n: int) -> np.ndarray | None:
    """Validate sample weights: None, a scalar (the same weight for all), or n finite
    values >= 0, not all zero (a weight of zero removes the sample)."""
    if sample_weight is None:
        return None
    if isinstance(sample_weight, numbers.Real) and not isinstance(sample_weight, bool):
        sample_weight = np.full(n, float(sample_weight))
    s = as_targets(sample_weight, n=n, name="sample_weight", noun="weights", purpose="")
    if np.any(s < 0):
        i = int(np.flatnonzero(s < 0)[0])
        raise DataError(f"sample_weight must be >= 0; sample_weight[{i}] = {float(s[i])!r}")
    if not np.any(s > 0):
        raise DataError("sample_weight is zero everywhere: no sample is left to fit "
                        "(a weight of zero removes the sample)")
    return s


def _real_scalar(name: str, value) -> float:
    if type(value) is float or type(value) is int:      # (the ABC check costs ~1 us)
        if value != value:
            raise ParameterError(f"{name} must be a number; got nan")
        return float(value)
    if isinstance(value, bool) or not isinstance(value, numbers.Real):
        raise ParameterError(f"{name} must be a real number; got {value!r}")
    value = float(value)
    if math.isnan(value):
        raise ParameterError(f"{name} must be a number; got nan")
    return value


def check_C(C: float) -> float:
    """Validate the SVM cost ``C``: ``None`` or ``inf`` mean hard margin; else ``C > 0``."""
    if C is None:
        return math.inf
    C = _real_scalar("C", C)
    if C <= 0:
        raise ParameterError(f"C must be > 0 (or None/inf for the hard margin); got C={C!r}")
    return C


def check_positive(name: str, value: Any, allow_inf: bool = False) -> float:
    """Validate a strictly positive, finite real parameter."""
    value = _real_scalar(name, value)
    if not value > 0 or (math.isinf(value) and not allow_inf):
        what = "a positive number (inf allowed)" if allow_inf else "a positive finite number"
        raise ParameterError(f"{name} must be {what}; got {name}={value!r}")
    return value


def check_real(name: str, value: Any) -> float:
    """Validate a finite real parameter (any sign): not a string, a bool, NaN or inf."""
    value = _real_scalar(name, value)
    if math.isinf(value):
        raise ParameterError(f"{name} must be a finite real number; got {name}={value!r}")
    return value


def check_nonnegative(name: str, value: Any) -> float:
    """Validate a non-negative, finite real parameter."""
    value = _real_scalar(name, value)
    if value < 0 or math.isinf(value):
        raise ParameterError(f"{name} must be >= 0 and finite; got {name}={value!r}")
    return value


def check_count(name: str, value: Any) -> int:
    """Validate a positive integer (an iteration budget): 5, not 5.0, 2.5, 0, -5 or True."""
    if isinstance(value, bool) or not isinstance(value, numbers.Integral) or value < 1:
        raise ParameterError(f"{name} must be a positive integer; got {name}={value!r}")
    return int(value)


def check_bool(name: str, value: Any) -> bool:
    """Validate a flag: True/False (numpy bools too), not strings such as 'no'."""
    if not isinstance(value, (bool, np.bool_)):
        raise ParameterError(f"{name} must be True or False; got {name}={value!r}")
    return bool(value)


def check_choice(name: str, value: Any, choices: Any) -> str:
    """Validate a string option against its valid values."""
    choices = list(choices)
    if not isinstance(value, str) or value not in choices:
        raise ParameterError(f"unknown {name} {value!r}; valid: {', '.join(map(repr, choices))}")
    return value


def available_memory() -> int | None:
    """Bytes of memory available to a new allocation (Linux ``MemAvailable``), or None
    where the system does not say: a route whose estimate exceeds it is not started."""
    try:
        with open("/proc/meminfo", encoding="ascii") as meminfo:
            for line in meminfo:
                if line.startswith("MemAvailable:"):
                    return int(line.split()[1]) * 1024
    except (OSError, ValueError, IndexError):
        return None
    return None


def check_tol(name: str, value: Any, allow_inf: bool = False) -> float:
    """Validate a tolerance: a positive finite real (``inf`` only where ``allow_inf``), not
    0 (a stop that never triggers), negative, NaN, a string or a bool."""
    return check_positive(name, value, allow_inf=allow_inf)


def check_seed(name: str, value: Any) -> Any:
    """Validate a seed: None, an integer >= 0 (not a bool, not 1.5) or a
    ``numpy.random.Generator``; returned unchanged."""
    if value is None or isinstance(value, np.random.Generator):
        return value
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, numbers.Integral) or value < 0:
        raise ParameterError(f"{name} must be None, an integer >= 0 or a numpy.random.Generator; "
                             f"got {name}={value!r}")
    return int(value)


def check_callable(name: str, value: Any) -> Any:
    """Validate an optional callable (None allowed)."""
    if value is not None and not callable(value):
        raise ParameterError(f"{name} must be callable (or None); got {name}={value!r} of type "
                             f"{type(value).__name__}")
    return value


def check_solver(value: Any) -> str | None:
    """Validate a cvxpy solver name: None (the default) or a string such as "CLARABEL"."""
    if value is not None and not isinstance(value, str):
        raise ParameterError(f"solver must be None or a cvxpy solver name (a string such as "
                             f"'CLARABEL'); got solver={value!r}")
    return value


#: The shared options of the iterative methods and how each is checked.
_OPTION_CHECKS = {
    "seed": check_seed,
    "callback": check_callable,
    "max_iter": lambda name, v: None if v is None else check_count(name, v),
    "gap_tol": lambda name, v: check_tol(name, v, allow_inf=True),
    "shrinking": check_bool,
    "warm_start": lambda name, v: _check_warm_start(name, v),
}


def _check_warm_start(name: str, value):
    """A Solution (anything with ``w`` and ``alpha``: this module imports no result type) or
    the method's own array; not a string or a number."""
    if value is None or isinstance(value, (np.ndarray, list, tuple)) or (
            hasattr(value, "w") and hasattr(value, "alpha")):
        return value
    raise ParameterError(f"{name} must be a Solution or an array of starting values; got "
                         f"{name}={value!r} of type {type(value).__name__}")


def check_solve_options(options: dict) -> dict:
    """Validate the shared keyword options of ``solve`` (``seed``, ``callback``,
    ``max_iter``, ``gap_tol``, ``shrinking``, ``warm_start``) where given; returns a new dict
    with the checked values (others are passed through for the method to check)."""
    return {key: (_OPTION_CHECKS[key](key, value) if key in _OPTION_CHECKS else value)
            for key, value in options.items()}


def check_method_options(method: str, func: Callable[..., Any], options: dict,
                         reserved: tuple[str, ...]) -> dict:
    """``options`` of an iterative ``method`` checked against what ``func`` accepts (its
    parameters less the ``reserved`` ones the caller passes itself): an unknown one is a
    ParameterError listing the valid ones; ``max_iter`` must be a positive integer."""
    accepted = set(inspect.signature(func).parameters) - set(reserved)
    unknown = sorted(set(options) - accepted)
    if unknown:
        raise ParameterError(f"method {method!r} has no option(s) {unknown}; valid: "
                             f"{', '.join(sorted(accepted))}")
    if options.get("max_iter") is not None:
        options["max_iter"] = check_count("max_iter", options["max_iter"])
    return options
