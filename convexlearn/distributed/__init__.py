"""Scale-out on Dask: the methods that run on dask arrays and any ``dask.distributed`` cluster.

``cl.ERM(X, y, ...)`` and ``cl.SVM(X, y, ...)`` with X a dask array (chunked by rows, y
alike) build :class:`~convexlearn.distributed.erm.DaskERM` and
:class:`~convexlearn.distributed.svm.DaskSVM`: full-batch ERM methods (newton, gd, prox,
subgradient, admm) whose passes are chunk-wise reductions, and the cascade SVM
(Graf et al. 2004) finished by the active-set polish; every answer is certified
chunk-wise. Importing this package does not import dask (the optional ``dask`` extra);
its submodules do.
"""

from __future__ import annotations

import logging
from typing import Any

from .chunks import is_dask_array

__all__ = ["is_dask_array", "register", "connect"]


def _dask_erm():
    from .erm import DaskERM
    return DaskERM


def _dask_svm():
    from .svm import DaskSVM
    return DaskSVM


def register() -> None:
    """Make ``cl.ERM`` and ``cl.SVM`` build their dask subclasses for dask arrays (once)."""
    from ..data import ARRAY_BACKENDS
    for problem, factory in (("ERM", _dask_erm), ("SVM", _dask_svm)):
        if all(f is not factory for _, f in ARRAY_BACKENDS[problem]):
            ARRAY_BACKENDS[problem].append((is_dask_array, factory))


def connect(scheduler: str | None, *, silence_logs: Any = logging.WARNING) -> Any:
    """A ``dask.distributed.Client``: ``"local"`` starts a LocalCluster on this machine,
    any other string is a scheduler address (``tcp://host:8786``); None returns None
    (the default scheduler). ``silence_logs``: the level below which the LocalCluster's
    worker processes print nothing (dask's default WARNING).

    Raises
    ------
    ParameterError
        When dask.distributed is missing or the scheduler cannot be reached (the message
        names the address).
    """
    from ..errors import ParameterError
    if scheduler is None:
        return None
    try:
        from dask.distributed import Client
    except ImportError as exc:    # the optional extra
        raise ParameterError(f"--scheduler needs dask.distributed (pip install "
                             f"'convexlearn[dask]'): {exc}") from None
    try:
        if scheduler == "local":
            return Client(processes=True, silence_logs=silence_logs)
        return Client(scheduler, timeout="10s")
    except OSError as exc:
        raise ParameterError(f"cannot reach the dask scheduler {scheduler!r}: {exc}") from None
