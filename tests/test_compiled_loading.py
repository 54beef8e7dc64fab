"""numba's cached kernels load without numba's compiler contexts (convexlearn/compiled.py).

Each check that is about a first call runs in fresh interpreters: one to fill numba's disk
cache if it is empty (it compiles), then the measured one, which must load from it.
"""

from __future__ import annotations

import importlib
import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from numba.core.caching import FunctionCache
from numba.core.dispatcher import Dispatcher

import convexlearn

ROOT = Path(__file__).resolve().parents[1]
PACKAGE = Path(convexlearn.__file__).parent

#: Run in a fresh interpreter after ``code``: which convexlearn kernels were loaded (with
#: their signatures and numba's cache hits and misses) and whether numba's compiler
#: contexts were built (their refresh imports numba.np.arraymath; neither the import of
#: convexlearn nor loading a kernel does).
_REPORT = """
import json, sys
from numba.core.dispatcher import Dispatcher
loaded = {}
for name, module in list(sys.modules.items()):
    if not name.startswith("convexlearn"):
        continue
    for attr, value in vars(module).items():
        if isinstance(value, Dispatcher) and value.py_func.__module__ == name \\
                and value.signatures:
            loaded[name.rsplit(".", 1)[-1] + "." + attr] = {
                "signatures": [str(s) for s in value.signatures],
                "hits": sum(value.stats.cache_hits.values()),
                "misses": sum(value.stats.cache_misses.values())}
print(json.dumps({"loaded": loaded, "contexts": "numba.np.arraymath" in sys.modules}))
"""

_C_PATH = """
import numpy as np
import convexlearn as cl
from convexlearn.routes.svm import exact_c_path
rng = np.random.default_rng(3)
X = rng.standard_normal((120, 3))
y = np.where(X[:, 0] + 0.5 * rng.standard_normal(120) > 0, 1, -1)
path, sols = exact_c_path(cl.SVM(X, y, C=1.0, kernel="rbf"), 0.05, 20.0)
assert all(s.status == "optimal" for s in sols)
np.save(sys.argv[1], np.concatenate([path.Cs, path.alphas.ravel(), path.intercepts]))
"""


def _fresh(code: str, *args: str, refresh: bool = False, **env_extra: str) -> dict:
    env = dict(os.environ, PYTHONPATH=str(ROOT), OPENBLAS_NUM_THREADS="1", **env_extra)
    env.pop("CONVEXLEARN_NUMBA_REFRESH", None)
    if refresh:
        env["CONVEXLEARN_NUMBA_REFRESH"] = "1"
    out = subprocess.run([sys.executable, "-c", "import sys\n" + code + _REPORT, *args],
                         capture_output=True, text=True, check=True, cwd=ROOT, env=env)
    return json.loads(out.stdout.strip().splitlines()[-1])


def _kernel_modules() -> list[str]:
    return sorted("convexlearn." + ".".join(p.relative_to(PACKAGE).with_suffix("").parts)
                  for p in PACKAGE.rglob("*.py") if "@njit" in p.read_text()
                  or "njit(cache=True)(" in p.read_text())


def test_every_cached_kernel_of_the_package_has_the_load_only_cache():
    modules = _kernel_modules()
    assert len(modules) >= 17
    kernels = []
    for name in modules:
        module = importlib.import_module(name)
        for attr, value in vars(module).items():
            if isinstance(value, Dispatcher) and value.py_func.__module__ == name:
                kernels.append((name, attr, type(value._cache)))
    assert len(kernels) >= 60
    # cache=True gives numba's FunctionCache, which load_without_refresh replaces; the
    # few helpers without cache=True (NullCache) are compiled into their cached callers
    assert [(m, a) for m, a, c in kernels if c is FunctionCache] == []
    assert sum(issubclass(c, FunctionCache) for _, _, c in kernels) >= 60


def test_a_first_c_path_loads_its_kernels_without_the_compiler(tmp_path):
    _fresh(_C_PATH, str(tmp_path / "warm.npy"))           # fills the cache if empty
    ours = _fresh(_C_PATH, str(tmp_path / "ours.npy"))
    numba_s = _fresh(_C_PATH, str(tmp_path / "numba.npy"), refresh=True)
    assert ours["contexts"] is False                      # no refresh: nothing compiled
    assert numba_s["contexts"] is True                    # the probe sees numba's refresh
    loaded = ours["loaded"]
    path_kernels = {k for k in loaded if k.startswith(("svm_path", "path_kkt_bound"))}
    assert len(path_kernels) >= 14, sorted(loaded)
    assert "svm_path_inverse.lazy_apply" in loaded    # its products call numba's BLAS helper
    # every kernel loaded from the disk cache, once, in one signature
    assert all(v["misses"] == 0 and v["hits"] == 1 and len(v["signatures"]) == 1
               for v in loaded.values()), loaded
    assert set(loaded) == set(numba_s["loaded"])
    # the same machine code: bit-for-bit the same path as numba's own loader gives
    a, b = np.load(tmp_path / "ours.npy"), np.load(tmp_path / "numba.npy")
    assert a.tobytes() == b.tobytes()


def test_a_cache_miss_still_compiles(tmp_path):
    # an empty cache directory: the load-only cache finds nothing and numba compiles (its
    # compiler builds the contexts itself); a second process then loads it
    code = """
import numpy as np
from convexlearn.solvers.kernel_svm.svm_path_kernels import swap_rows_cols
A = np.arange(25.0).reshape(5, 5)
B = A.copy()
swap_rows_cols(A, 1, 3, 4)
B[[1, 3], :4] = B[[3, 1], :4]
B[:4, [1, 3]] = B[:4, [3, 1]]
assert np.array_equal(A, B)
"""
    first = _fresh(code, NUMBA_CACHE_DIR=str(tmp_path))
    second = _fresh(code, NUMBA_CACHE_DIR=str(tmp_path))
    assert first["loaded"]["svm_path_kernels.swap_rows_cols"]["misses"] == 1
    assert first["contexts"] is True
    assert second["loaded"]["svm_path_kernels.swap_rows_cols"]["hits"] == 1
    assert second["contexts"] is False


_RBF = """
import numpy as np
import convexlearn as cl
rng = np.random.default_rng(5)
X = rng.standard_normal((2000, 4))
y = np.where(X[:, 0] * X[:, 1] + 0.3 * rng.standard_normal(2000) > 0, 1, -1)
sol = cl.SVM(X, y, C=1.0, kernel="rbf").solve()
assert sol.status == "optimal"
np.save(sys.argv[1], np.concatenate([sol.alpha, [sol.b]]))
"""


def test_a_first_rbf_svm_loads_the_smo_loop_without_the_compiler(tmp_path):
    # n = 2000, past the one-call small path: the compiled SMO loop (which allocates:
    # numba's runtime) and the KKT report's compiled pass
    _fresh(_RBF, str(tmp_path / "warm.npy"))
    ours = _fresh(_RBF, str(tmp_path / "ours.npy"))
    numba_s = _fresh(_RBF, str(tmp_path / "numba.npy"), refresh=True)
    assert ours["contexts"] is False and numba_s["contexts"] is True
    assert {"smo_compact_kernels.compact_loop", "kkt_kernels.kkt_pass"} <= set(ours["loaded"])
    assert set(ours["loaded"]) == set(numba_s["loaded"])
    assert all(v["misses"] == 0 and len(v["signatures"]) == 1
               for v in ours["loaded"].values()), ours["loaded"]
    a, b = np.load(tmp_path / "ours.npy"), np.load(tmp_path / "numba.npy")
    assert a.tobytes() == b.tobytes()


_LOAD_ALL = """
import importlib
from numba.core.dispatcher import Dispatcher
loaded = failed = 0
for name in sys.argv[1:]:
    module = importlib.import_module(name)
    for attr, value in vars(module).items():
        if not (isinstance(value, Dispatcher) and value.py_func.__module__ == name):
            continue
        cache = value._cache
        index = getattr(cache, "_cache_file", None)
        if index is None:                      # no cache=True: compiled into its callers
            continue
        codegen = value.targetctx.codegen()
        for key in index._load_index():
            if cache._index_key(key[0], codegen) != key:
                continue                       # another version of the source or machine
            if cache.load_overload(key[0], value.targetctx) is None:
                failed += 1
            loaded += 1
print(json.dumps({"entries": loaded, "failed": failed,
                  "contexts": "numba.np.arraymath" in sys.modules}))
"""


def test_every_cached_entry_of_the_package_links_without_the_compiler(tmp_path):
    # what the skipped refresh would have installed must not be needed by any kernel: a
    # fresh process links every entry of the disk cache that matches the current source
    # (an unresolved symbol would abort it); fill the cache with two routes first
    _fresh(_C_PATH, str(tmp_path / "warm.npy"))
    env = dict(os.environ, PYTHONPATH=str(ROOT), OPENBLAS_NUM_THREADS="1")
    env.pop("CONVEXLEARN_NUMBA_REFRESH", None)
    out = subprocess.run([sys.executable, "-c", "import json, sys\n" + _LOAD_ALL,
                          *_kernel_modules()], capture_output=True, text=True, check=True,
                         cwd=ROOT, env=env)
    report = json.loads(out.stdout.strip().splitlines()[-1])
    assert report["entries"] >= 14 and report["failed"] == 0, report
    assert report["contexts"] is False


def test_a_load_that_raises_is_retried_by_numbas_loader(monkeypatch):
    from numba.core.runtime import rtsys

    from convexlearn.solvers.kernel_svm import svm_path_kernels
    cache = svm_path_kernels.swap_rows_cols._cache
    assert type(cache).__name__ == "LoadOnlyCache"
    target = svm_path_kernels.swap_rows_cols.targetctx
    key = next(iter(cache._cache_file._load_index()), None)
    if key is None or cache._index_key(key[0], target.codegen()) != key:
        svm_path_kernels.swap_rows_cols(np.eye(3), 0, 1, 3)     # fills the disk cache
        key = next(k for k in cache._cache_file._load_index()
                   if cache._index_key(k[0], target.codegen()) == k)

    calls = []
    initialize = rtsys.initialize

    def broken_once(context):        # the load-only path fails; numba's refresh calls it too
        calls.append(context)
        if len(calls) == 1:
            raise RuntimeError("a numba whose loading needs more")
        return initialize(context)
    monkeypatch.setattr(rtsys, "initialize", broken_once)
    assert cache.load_overload(key[0], target) is not None and len(calls) >= 1


_CALLER = """
import json
from stale_pkg.b import g
print(json.dumps({"value": int(g(1)), "hits": sum(g.stats.cache_hits.values())}))
"""


def _write_kernels(package: Path, step: int) -> None:
    package.mkdir(exist_ok=True)
    (package / "__init__.py").write_text("")
    header = ("from numba import njit\n"
              "from convexlearn.compiled import load_without_refresh\n")
    (package / "a.py").write_text(header + f"@njit(cache=True)\ndef f(x):\n    return x + {step}\n"
                                  "load_without_refresh(globals())\n")
    (package / "b.py").write_text(header + "from .a import f\n\n"
                                  "@njit(cache=True)\ndef g(x):\n    return f(x) * 10\n"
                                  "load_without_refresh(globals())\n")


@pytest.mark.parametrize("refresh", [False, True], ids=["load-only", "numba's loader"])
def test_a_kernel_is_recompiled_when_a_kernel_it_calls_changes(tmp_path, refresh):
    """numba keys its cache by the function's own file only: g (b.py) calling f (a.py)
    kept f's old machine code after a.py changed. The key now holds a.py's hash too."""
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([str(tmp_path), str(ROOT)]))
    env.pop("CONVEXLEARN_NUMBA_REFRESH", None)
    if refresh:
        env["CONVEXLEARN_NUMBA_REFRESH"] = "1"

    def call() -> dict:
        out = subprocess.run([sys.executable, "-c", _CALLER], capture_output=True, text=True,
                             check=True, cwd=tmp_path, env=env)
        return json.loads(out.stdout.strip().splitlines()[-1])

    _write_kernels(tmp_path / "stale_pkg", step=1)
    assert call() == {"value": 20, "hits": 0}          # compiled and cached
    assert call() == {"value": 20, "hits": 1}          # loaded from the cache
    _write_kernels(tmp_path / "stale_pkg", step=2)    # only a.py's source differs
    assert call() == {"value": 30, "hits": 0}          # g recompiled with the new f
    assert call() == {"value": 30, "hits": 1}
