"""Loading numba's cached kernels without building numba's compiler first.

numba's disk cache (``@njit(cache=True)``) stores each compiled function as machine code.
Before it loads one, ``FunctionCache.load_overload`` calls ``target_context.refresh()``,
which builds the compiler's typing and lowering registries: it imports ~70 numba modules
(numba.np.arraymath, linalg, random, the typed containers, cffi) and installs every
overload template. Loading the machine code needs none of it; only compiling does, and the
compiler refreshes the contexts itself (``CompilerBase.__init__``). Measured on the 2-core
development machine (CPU seconds, median of 5 fresh processes, numba 0.68, warm cache),
the refresh was 0.37 s of the first compiled call of a process whatever the route (the
exact C-path at n = 2000 loads 17 kernels: 0.37 s refresh, 0.09 s for the 17 loads; the
first rbf SVM loads 3: 0.51 s -> 0.21 s with this loader, 0.035 s warm), against 0.10 s
for one scikit-learn SVC fit at n = 2000.

:func:`load_without_refresh` gives the dispatchers of a module a cache whose
``load_overload`` only prepares what the loaded code links against and then loads:

* numba's runtime (NRT: allocation, reference counts), ``rtsys.initialize``; the C
  helpers (exceptions, libm, numba's helperlib, through which a compiled matrix product
  reaches scipy's BLAS) are installed when the target context is built, before any load;
* nothing else: the kernels of this package use arrays, scalars, loops, libm and BLAS, no
  typed containers, hashing or cffi (whose symbols the refresh's imports would install).

tests/test_compiled_loading.py loads the C-path's and the rbf SVM's kernels this way in
fresh processes and compares their answers bit for bit with numba's loader.

A cache miss is unchanged: the dispatcher compiles, and its compiler refreshes the
contexts. Index lookup (source stamp, ~0.2 ms a function) and the load itself (~5 ms a
function: unpickling, LLVM object loading and linking) are numba's own. The loaded machine
code is the same bytes either way, so results are bit-for-bit those of numba's loader.
If numba's internals this relies on are missing (another numba), nothing is changed.
A load that raises is retried by numba's own loader (refresh, then load). Setting the
environment variable ``CONVEXLEARN_NUMBA_REFRESH`` (to anything but 0, false, no or empty)
before import keeps numba's own loader (a way to compare, or a way out should a numba
release need it).
"""

from __future__ import annotations

import os
from typing import Any

__all__ = ["load_without_refresh"]


def _load_only_cache_class() -> type | None:
    """The FunctionCache subclass that loads without refreshing, or None when numba's
    internals differ from the ones it was written for."""
    try:
        from numba.core.caching import FunctionCache
        from numba.core.runtime import rtsys
    except ImportError:
        return None
    if not all(hasattr(FunctionCache, name) for name in
               ("load_overload", "_load_overload", "_guard_against_spurious_io_errors")):
        return None

    class LoadOnlyCache(FunctionCache):
        def load_overload(self, sig, target_context):
            try:
                rtsys.initialize(target_context)  # the NRT symbols loaded code calls
                with self._guard_against_spurious_io_errors():
                    return self._load_overload(sig, target_context)
                return None                       # the guard swallowed an I/O error
            except Exception:                     # (another numba's needs): its own way
                return FunctionCache.load_overload(self, sig, target_context)

    return LoadOnlyCache


_LOAD_ONLY = (None if os.environ.get("CONVEXLEARN_NUMBA_REFRESH", "0").strip().lower()
              not in ("", "0", "false", "no") else _load_only_cache_class())


def load_without_refresh(namespace: dict[str, Any]) -> int:
    """Give every numba dispatcher in ``namespace`` (a module's ``globals()``) with
    numba's disk cache the loader that skips the contexts' refresh (module docstring).

    Returns
    -------
    int
        How many dispatchers were changed (0 when numba's own loader is kept).
    """
    if _LOAD_ONLY is None:
        return 0
    base = _LOAD_ONLY.__mro__[1]
    changed = 0
    for value in list(namespace.values()):
        cache = getattr(value, "_cache", None)
        if type(cache) is base:                   # numba's FunctionCache, cache=True
            cache.__class__ = _LOAD_ONLY
            changed += 1
    return changed
