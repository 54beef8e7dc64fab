"""``convexlearn solve --scheduler ADDRESS``: run a problem file on a Dask cluster.

The problem's data are handed to the cluster as dask arrays (rows in chunks), so that
``cl.ERM`` and ``cl.SVM`` build their distributed subclasses (the methods of
:mod:`convexlearn.distributed`); the client becomes dask's default scheduler.
"""

from __future__ import annotations

from typing import Any

import dataclasses

from ..distributed import connect

__all__ = ["on_scheduler"]


def on_scheduler(problem: Any, scheduler: str | None, chunks: int = 4) -> Any:
    """The problem with its data as dask arrays on ``scheduler`` ("local" starts a
    LocalCluster; else a scheduler address such as tcp://host:8786); the problem itself
    when ``scheduler`` is None."""
    client = connect(scheduler)
    if client is None:
        return problem
    import dask.array as da
    data = problem.data
    rows = max(1, -(-data.X.shape[0] // chunks))
    X = client.persist(da.from_array(data.X, chunks=(rows, data.X.shape[1])))
    y = None if data.y is None else client.persist(da.from_array(data.y, chunks=rows))
    return dataclasses.replace(problem, data=dataclasses.replace(data, X=X, y=y))
