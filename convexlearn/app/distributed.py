"""``convexlearn solve --scheduler ADDRESS``: run a problem file on a Dask cluster.

:func:`dask_session` connects (``"local"`` starts a LocalCluster on this machine) for the
length of the command and closes the client and its cluster at the end, so that nothing
of dask outlives the run. Dask's own log records (loggers ``distributed``, ``tornado``,
``bokeh``) are routed through the ``convexlearn.dask`` logger while the session lasts:
quiet by default, printed with ``-v`` like every other record of the run.
:func:`on_cluster` hands the problem's data to the cluster as dask arrays (rows in
chunks), so that ``cl.ERM`` and ``cl.SVM`` build their distributed subclasses (the
methods of :mod:`convexlearn.distributed`).
"""

from __future__ import annotations

import contextlib
import dataclasses
import logging
from typing import Any, Iterator

from ..distributed import connect

__all__ = ["dask_session", "on_cluster", "DASK_LOGGERS"]

#: The loggers dask.distributed and its web stack write to.
DASK_LOGGERS = ("distributed", "tornado", "bokeh")


class _Forward(logging.Handler):
    """Hands a dask record to the ``convexlearn.dask`` logger when that logger is enabled
    for its level (by default only the NullHandler of ``convexlearn`` receives it)."""

    def __init__(self, target: logging.Logger):
        super().__init__()
        self.target = target

    def emit(self, record: logging.LogRecord) -> None:
        if self.target.isEnabledFor(record.levelno):
            self.target.handle(record)


@contextlib.contextmanager
def _dask_logs_routed() -> Iterator[None]:
    """Within the block, dask's loggers lose their own handlers and forward to
    ``convexlearn.dask``; handlers, level and propagation are restored on exit."""
    forward = _Forward(logging.getLogger("convexlearn.dask"))
    saved = []
    for name in DASK_LOGGERS:
        logger = logging.getLogger(name)
        saved.append((logger, logger.handlers[:], logger.propagate))
        logger.handlers[:] = [forward]
        logger.propagate = False
    try:
        yield
    finally:
        for logger, handlers, propagate in saved:
            logger.handlers[:] = handlers
            logger.propagate = propagate


@contextlib.contextmanager
def dask_session(scheduler: str | None, verbose: int = 0) -> Iterator[Any]:
    """A ``dask.distributed.Client`` on ``scheduler`` for the block (None: yields None),
    closed at the end with the LocalCluster it may have started; dask's records go
    through the ``convexlearn`` loggers meanwhile (see the module docstring). The worker
    processes of a LocalCluster print their own warnings only when ``verbose``."""
    if scheduler is None:
        yield None
        return
    with _dask_logs_routed():
        client = connect(scheduler, silence_logs=logging.WARNING if verbose
                         else logging.CRITICAL)
        try:
            yield client
        finally:
            cluster = client.cluster if scheduler == "local" else None
            client.close()
            if cluster is not None:
                cluster.close()


def on_cluster(problem: Any, client: Any, chunks: int = 4) -> Any:
    """The problem with its data as dask arrays persisted on ``client`` (``chunks`` row
    chunks); the problem itself when ``client`` is None."""
    if client is None:
        return problem
    import dask.array as da
    data = problem.data
    rows = max(1, -(-data.X.shape[0] // chunks))
    X = client.persist(da.from_array(data.X, chunks=(rows, data.X.shape[1])))
    y = None if data.y is None else client.persist(da.from_array(data.y, chunks=rows))
    return dataclasses.replace(problem, data=dataclasses.replace(data, X=X, y=y))
