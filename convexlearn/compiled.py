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
If numba's internals this relies on are missing (another numba), numba's own loader is
kept (the cache keys below still get their callees' hashes where numba's cache allows).
A load that raises is retried by numba's own loader (refresh, then load).

numba keys a cached function by its own file's hash only: a kernel that calls another
module's kernel (the small solve calls ``smo_kernels.smo_loop``) kept the machine code of
the old callee when only the callee's file changed - the old code, silently, in a
development checkout. :func:`load_without_refresh` adds to each key the hashes of the files
of the kernels its module reaches (:func:`source_stamps`), with numba's loader too. Setting the
environment variable ``CONVEXLEARN_NUMBA_REFRESH`` (to anything but 0, false, no or empty)
before import keeps numba's own loader (a way to compare, or a way out should a numba
release need it).
"""

from __future__ import annotations

import hashlib
import os
import sys
from types import ModuleType
from typing import Any

try:
    from numba.core.caching import FunctionCache
except ImportError:                               # (another numba's layout)
    FunctionCache = None

__all__ = ["load_without_refresh", "source_stamps"]


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


#: Per module name: the (module, sha256) of its source and of every module whose
#: compiled functions its namespace reaches (memo of :func:`source_stamps`).
_STAMPS: dict[str, tuple] = {}
#: The attribute that marks a cache whose key already has those stamps.
_STAMPED = "_convexlearn_stamped"


def _dispatchers(namespace: dict[str, Any], package: str) -> list[Any]:
    """The numba dispatchers a namespace reaches: its values, and the values of the
    modules of ``package`` it holds (``from . import smo_step`` then ``smo_step.f``)."""
    found = []
    for value in list(namespace.values()):
        if isinstance(value, ModuleType):
            if value.__name__.split(".")[0] == package:
                found.extend(v for v in vars(value).values() if hasattr(v, "py_func"))
        elif hasattr(value, "py_func") and hasattr(value, "_cache"):
            found.append(value)
    return found


def source_stamps(module: str) -> tuple:
    """The sources a compiled function of ``module`` may have been built from: the
    module's own file and, transitively, the files of the compiled functions its globals
    reach (those numba compiles into it), each as (module, sha256 of the file) - the
    stamp numba gives a file - sorted by module.

    numba's cache checks only the stamp of the function's own file, so a kernel that calls
    another module's kernel kept its old machine code when only that other module changed
    (the old loop, silently). :func:`load_without_refresh` makes these stamps part of the
    cache's key.
    """
    if module in _STAMPS:
        return _STAMPS[module]
    _STAMPS[module] = ()                          # (a guard against an import cycle)
    namespace = vars(sys.modules[module])
    stamps = set()
    path = namespace.get("__file__")
    if path:
        with open(path, "rb") as source:
            stamps.add((module, hashlib.sha256(source.read()).hexdigest()))
    for dispatcher in _dispatchers(namespace, module.split(".")[0]):
        owner = dispatcher.py_func.__module__
        if owner != module and owner in sys.modules:
            stamps.update(source_stamps(owner))
    _STAMPS[module] = tuple(sorted(stamps))
    return _STAMPS[module]


def load_without_refresh(namespace: dict[str, Any]) -> int:
    """Give every numba dispatcher in ``namespace`` (a module's ``globals()``) with
    numba's disk cache the loader that skips the contexts' refresh (module docstring),
    and a cache key that includes the sources of the kernels it calls
    (:func:`source_stamps`).

    Returns
    -------
    int
        How many dispatchers were given the loader (0 when numba's own loader is kept).
    """
    base = FunctionCache if _LOAD_ONLY is None else _LOAD_ONLY.__mro__[1]
    changed = 0
    for value in list(namespace.values()):
        cache = getattr(value, "_cache", None)
        if base is None or type(cache) is not base or hasattr(cache, _STAMPED):
            continue                              # no disk cache, or done already
        setattr(cache, _STAMPED, True)            # (a kernel imported by another module)
        cache_file = getattr(cache, "_cache_file", None)
        if hasattr(cache_file, "_source_stamp"):
            own = cache_file._source_stamp
            cache_file._source_stamp = (own, source_stamps(value.py_func.__module__))
        if _LOAD_ONLY is not None:
            cache.__class__ = _LOAD_ONLY
            changed += 1
    return changed
