"""The house rules: layers, one-way imports, no circles, modules and classes of a readable size.

Every ``import`` in the package is read from the source (module-level *and* function-level:
a lazy import that hides a circle still counts), resolved to a module of the package, and
checked against the layer of docs/architecture.md:

    0 vocabulary  errors, data, kernels, gram, losses, penalties, capabilities, solution,
                  svmlight, modelfiles
    1 certify     certificates recomputed from the data (know no solver)
    2 formulations, solvers
    3 routes      which algorithm answers solve(), and the fallback chain
    4 problems    svm, erm, halfspace, shattering, perceptron, compare, path
    5 consumers   estimators, plot, distributed, verification, the package root
    6 app         the command line and everything only it needs

A module may import its own layer or a lower one, never a higher one.
"""

from __future__ import annotations

import ast
import re
import subprocess
import sys
from pathlib import Path

import pytest

import convexlearn

PACKAGE_DIR = Path(convexlearn.__file__).resolve().parent
MAX_MODULE_LINES = 600
MAX_CLASS_LINES = 300

#: Top-level modules and subpackages -> layer. A new module must be given a layer here
#: (and in docs/architecture.md): the test says so rather than guessing.
LAYERS: dict[str, int] = {
    "errors": 0, "data": 0, "kernels": 0, "gram": 0, "losses": 0, "penalties": 0,
    "capabilities": 0, "solution": 0,
    "serialize": 0, "logs": 0, "version": 0, "path": 0, "svmlight": 0, "modelfiles": 0,
    "certify": 1,
    "formulations": 2, "solvers": 2,
    "routes": 3,
    "svm": 4, "erm": 4, "halfspace": 4, "shattering": 4, "perceptron": 4, "compare": 4,
    "estimators": 5, "plot": 5, "distributed": 5, "verification": 5, "": 5,
    "app": 6, "__main__": 6,
}
LAYER_NAMES = ["vocabulary", "certify", "formulations/solvers", "routes", "problems",
               "consumers", "app"]


def _modules() -> dict[str, Path]:
    found = {}
    for path in PACKAGE_DIR.rglob("*.py"):
        parts = list(path.relative_to(PACKAGE_DIR.parent).with_suffix("").parts)
        if parts[-1] == "__init__":
            parts = parts[:-1]
        found[".".join(parts)] = path
    return found


MODULES = _modules()


def _resolve(module: str, is_package: bool, node: ast.ImportFrom) -> str:
    if node.level == 0:
        return node.module or ""
    base = module.split(".") if is_package else module.split(".")[:-1]
    base = base[:len(base) - (node.level - 1)]
    return ".".join(base + ([node.module] if node.module else []))


def _imports(module: str) -> set[str]:
    """The package's modules that ``module`` imports, anywhere in its source."""
    path = MODULES[module]
    out = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.ImportFrom):
            base = _resolve(module, path.name == "__init__.py", node)
            for alias in node.names:
                candidate = f"{base}.{alias.name}"
                out.add(candidate if candidate in MODULES else base)
        elif isinstance(node, ast.Import):
            out.update(alias.name for alias in node.names)
    return {m for m in out if m in MODULES and m != module}


GRAPH = {module: _imports(module) for module in MODULES}


def layer_of(module: str) -> int:
    parts = module.split(".")
    key = parts[1] if len(parts) > 1 else ""
    if key not in LAYERS:
        raise AssertionError(f"{module} has no layer: add {key!r} to LAYERS in "
                             f"tests/test_architecture.py and to docs/architecture.md")
    return LAYERS[key]


def _cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """Strongly connected components with more than one module (Tarjan)."""
    index, low, stack, on_stack, found = {}, {}, [], set(), []

    def visit(v):
        index[v] = low[v] = len(index)
        stack.append(v)
        on_stack.add(v)
        for w in graph[v]:
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            component = []
            while True:
                w = stack.pop()
                on_stack.discard(w)
                component.append(w)
                if w == v:
                    break
            if len(component) > 1:
                found.append(sorted(component))

    for v in sorted(graph):
        if v not in index:
            visit(v)
    return found


def test_the_graph_is_read_from_the_source():
    # Guards the guard: a parser that found no edges would pass every rule below.
    assert "convexlearn.routes.svm" in GRAPH["convexlearn.svm"]
    assert "convexlearn.errors" in GRAPH["convexlearn.data"]
    assert "convexlearn.app.adapters" in GRAPH["convexlearn.app.catalogue"]


def test_no_import_circle():
    assert _cycles(GRAPH) == []


def test_the_cycle_finder_finds_a_planted_circle():
    planted = {m: set(edges) for m, edges in GRAPH.items()}
    planted["convexlearn.errors"].add("convexlearn.svm")
    assert any("convexlearn.errors" in c and "convexlearn.svm" in c for c in _cycles(planted))


def test_imports_point_down_the_layers():
    wrong = [f"{m} ({LAYER_NAMES[layer_of(m)]}) imports {t} ({LAYER_NAMES[layer_of(t)]})"
             for m, targets in sorted(GRAPH.items()) for t in sorted(targets)
             if layer_of(t) > layer_of(m)]
    assert wrong == []


def test_every_module_has_a_layer():
    for module in MODULES:
        layer_of(module)


def test_the_library_never_loads_the_application():
    library = [m for m in MODULES if layer_of(m) < LAYERS["app"]
               and m not in ("convexlearn.distributed",) and not m.startswith(
                   "convexlearn.distributed.")]
    code = ("import importlib, sys\n"
            f"for m in {library!r}:\n"
            "    try:\n"
            "        importlib.import_module(m)\n"
            "    except ImportError as exc:\n"     # an optional extra (matplotlib, sklearn)
            "        print('skipped', m, exc, file=sys.stderr)\n"
            "print(sorted(m for m in sys.modules if m.startswith('convexlearn.app')))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True, cwd=PACKAGE_DIR.parent)
    assert out.stdout.strip() == "[]", out.stdout


@pytest.mark.parametrize("module", sorted(MODULES))
def test_module_and_class_sizes(module):
    source = MODULES[module].read_text(encoding="utf-8")
    lines = source.count("\n") + 1
    assert lines <= MAX_MODULE_LINES, f"{module} has {lines} lines: split it by job"
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.ClassDef):
            size = node.end_lineno - node.lineno + 1
            assert size <= MAX_CLASS_LINES, f"{module}.{node.name} has {size} lines"


def _private_gram_readers(sources: dict[str, str]) -> list[str]:
    """Modules other than the Gram operator (and svm.py's own methods) that read a
    problem's private matrix ``._K``."""
    found = []
    for module, text in sorted(sources.items()):
        if module in ("convexlearn.gram", "convexlearn.svm"):
            continue
        for node in ast.walk(ast.parse(text)):
            if isinstance(node, ast.Attribute) and node.attr == "_K":
                found.append(f"{module}:{node.lineno}")
    return found


def test_kernel_access_goes_through_the_gram_operator():
    # solvers and certificates take convexlearn.gram.Gram (columns, blocks, products, the
    # compiled spec); none reads a private Gram matrix
    sources = {m: p.read_text(encoding="utf-8") for m, p in MODULES.items()}
    assert _private_gram_readers(sources) == []
    planted = dict(sources, **{"convexlearn.routes.svm": "def f(svm):\n    return svm._K\n"})
    assert _private_gram_readers(planted) == ["convexlearn.routes.svm:2"]


# ------------------------------------------------------- capabilities, not names
#: Identifiers of a loss or penalty object (``loss``, ``erm.penalty``, ``pen``, ``the_loss``).
_HOLDER = re.compile(r"(^|_)(loss|penalty|pen)(_|$)")
#: The catalogues, where names are keys: the only modules that may test them.
_CATALOGUES = {"convexlearn.losses", "convexlearn.penalties"}
#: Name tests allowed outside the catalogues, each with the reason (none today: a new entry
#: needs one, and the test below fails on an entry whose name test is gone).
NAME_TEST_ALLOWLIST: dict[str, set[str]] = {}


def _catalogue_names() -> set[str]:
    from convexlearn.losses import LOSSES
    from convexlearn.penalties import PENALTIES
    return set(LOSSES) | set(PENALTIES)


def _identifier(node: ast.AST) -> str:
    if isinstance(node, ast.Attribute):
        return node.attr
    return node.id if isinstance(node, ast.Name) else ""


def _reads_name(node: ast.AST, aliases: set[str]) -> bool:
    """``<loss or penalty>.name``, a variable assigned from one, or a tuple holding one."""
    if isinstance(node, ast.Attribute) and node.attr == "name":
        return bool(_HOLDER.search(_identifier(node.value)))
    if isinstance(node, ast.Name):
        return node.id in aliases
    if isinstance(node, (ast.Tuple, ast.List)):
        return any(_reads_name(e, aliases) for e in node.elts)
    return False


def _names_literal(node: ast.AST, names: set[str]) -> bool:
    """A catalogue name as a string constant, or a tuple / list / set of them."""
    if isinstance(node, ast.Constant):
        return isinstance(node.value, str) and node.value in names
    if isinstance(node, (ast.Tuple, ast.List, ast.Set)):
        return bool(node.elts) and all(_names_literal(e, names) for e in node.elts)
    return False


def name_tests(source: str) -> list[str]:
    """The source text of every test of a loss or penalty name in ``source``: a comparison
    or membership test of ``x.name`` (x a loss or penalty, directly, through a variable
    assigned from it, or in a tuple), and a comparison of a ``...name`` variable with a
    catalogue name (a helper handed ``loss.name``)."""
    tree = ast.parse(source)
    names = _catalogue_names()
    aliases = {t.id for node in ast.walk(tree) if isinstance(node, ast.Assign)
               and _reads_name(node.value, set()) for t in node.targets
               if isinstance(t, ast.Name)}
    found = []
    for node in ast.walk(tree):
        if not isinstance(node, ast.Compare) or not all(
                isinstance(op, (ast.Eq, ast.NotEq, ast.In, ast.NotIn)) for op in node.ops):
            continue
        operands = [node.left, *node.comparators]
        direct = any(_reads_name(o, aliases) for o in operands)
        by_value = any(_names_literal(o, names) for o in operands) and any(
            _identifier(o).endswith("name") for o in operands)
        if direct or by_value:
            found.append(ast.get_source_segment(source, node))
    return found


def _name_tests_of(module: str) -> list[str]:
    return name_tests(MODULES[module].read_text(encoding="utf-8"))


def test_no_loss_or_penalty_is_tested_by_name_outside_the_catalogues():
    wrong = []
    for module in sorted(MODULES):
        if module in _CATALOGUES:
            continue
        allowed = NAME_TEST_ALLOWLIST.get(module, set())
        for text in _name_tests_of(module):
            if text not in allowed:
                wrong.append(f"{module}: {text}")
    assert wrong == [], ("ask the loss or penalty for a capability (loss.has(...), "
                         "penalty.require(...)) instead of testing its name:\n"
                         + "\n".join(wrong))


def test_the_name_test_finder_finds_planted_name_tests():
    planted = '''
def chain(erm, loss, penalty, oracle):
    if loss.name == "hinge":
        pass
    if erm.penalty.name in ("l1", "elastic_net"):
        pass
    name = penalty.name
    if name != "none":
        pass
    if (erm.loss.name, erm.penalty.name) == ("squared", "l1"):
        pass
    if oracle.pen.name not in SOME_SET:
        pass

def _phi_star(name, v):
    return v if name == "logistic" else None
'''
    assert len(name_tests(planted)) == 6
    clean = '''
def chain(erm, loss, penalty, kernel):
    if loss.has("kink") and not penalty.has("zero"):
        pass
    if kernel.name == "linear" or loss.name_of_thing() == 3:
        pass
    message = f"the {loss.name} loss"
'''
    assert name_tests(clean) == []


def test_the_allowlist_holds_only_name_tests_still_there():
    # an entry the integrator converted must leave the list (the list only shrinks)
    for module, allowed in NAME_TEST_ALLOWLIST.items():
        if module not in MODULES:
            continue
        found = _name_tests_of(module)
        stale = sorted(allowed - set(found))
        assert stale == [], f"{module}: no longer tested by name, remove {stale}"
