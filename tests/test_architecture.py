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
    "capabilities": 0, "solution": 0, "deprecation": 0, "fingerprints": 0,
    "serialize": 0, "logs": 0, "version": 0, "path": 0, "svmlight": 0, "modelfiles": 0,
    "threads": 0, "compiled": 0,
    "certify": 1,
    "formulations": 2, "solvers": 2,
    "routes": 3,
    "svm": 4, "erm": 4, "halfspace": 4, "shattering": 4, "perceptron": 4, "compare": 4,
    "qp_problem": 4, "svr": 4, "one_class": 4,
    "nu_svm": 4,
    "svm_l2": 4, "crammer_singer": 4,
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


# ------------------------------------------------------------- private names stay home
#: Private names imported across modules, each with its reason (none today). The test fails
#: on a stale entry too, so that this list only shrinks.
PRIVATE_IMPORT_ALLOWLIST: set[tuple[str, str, str]] = set()


def _is_private(name: str) -> bool:
    return name.startswith("_") and not name.startswith("__")


def _private_uses(module: str, tree: ast.AST, is_package: bool) -> set[tuple[str, str, str]]:
    """(module, other module, private name) for every ``from .x import _y`` and every
    ``x._y`` where ``x`` names a module of the package. A private *submodule* of the
    importer's own package (``from . import _gram``) is its own business."""
    found, bound = set(), {}
    own_package = module if is_package else module.rpartition(".")[0]
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom):
            base = _resolve(module, is_package, node)
            for alias in node.names:
                target = f"{base}.{alias.name}"
                if target in MODULES:                  # a submodule
                    bound[alias.asname or alias.name] = target
                    if _is_private(alias.name) and base != own_package:
                        found.add((module, base, alias.name))
                elif base in MODULES and _is_private(alias.name):
                    found.add((module, base, alias.name))
        elif isinstance(node, ast.Import):
            for alias in node.names:
                if alias.name in MODULES and alias.asname:
                    bound[alias.asname] = alias.name
    for node in ast.walk(tree):
        if (isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name)
                and node.value.id in bound and _is_private(node.attr)
                and f"{bound[node.value.id]}.{node.attr}" not in MODULES):
            found.add((module, bound[node.value.id], node.attr))
    return {f for f in found if f[1] != module}


def _all_private_uses() -> set[tuple[str, str, str]]:
    return {use for module, path in MODULES.items()
            for use in _private_uses(module, ast.parse(path.read_text(encoding="utf-8")),
                                     path.name == "__init__.py")}


def _private_violations(uses, allow) -> list[str]:
    return [f"{m} uses {t}.{name}: make it public or keep it home"
            for m, t, name in sorted(uses - allow)]


def test_no_module_uses_another_modules_private_names():
    uses = _all_private_uses()
    assert _private_violations(uses, PRIVATE_IMPORT_ALLOWLIST) == []
    assert sorted(PRIVATE_IMPORT_ALLOWLIST - uses) == [], "stale allowlist entries: remove them"


def test_the_private_name_rule_finds_planted_uses():
    planted = ast.parse("from .svm import _polished_twice\n"
                        "from .solvers.kernel_svm import polish as p\n"
                        "from .estimators import _gram\n"
                        "p._solve_on_active_set(1)\n"
                        "p.solve_public(2)\n")
    uses = _private_uses("convexlearn.compare", planted, False)
    assert uses == {
        ("convexlearn.compare", "convexlearn.svm", "_polished_twice"),
        ("convexlearn.compare", "convexlearn.solvers.kernel_svm.polish", "_solve_on_active_set"),
        ("convexlearn.compare", "convexlearn.estimators", "_gram")}
    assert len(_private_violations(uses, PRIVATE_IMPORT_ALLOWLIST)) == 3
    # a private submodule of one's own package is fine
    own = ast.parse("from . import _gram\nfrom ._base import Base\n")
    assert _private_uses("convexlearn.estimators.svm", own, False) == set()


# ----------------------------------------------------- one definition of each kernel
#: Every place outside kernels.py that computes a named kernel's formula, with the test
#: that compares it with kernels.make_kernel (file::function). A new copy must be added
#: here with such a test, or call make_kernel instead.
KERNEL_FORMULA_COPIES = {
    ("convexlearn.solvers.kernel_svm.smo_kernels", "_full_column", "rbf"):
        "tests/solvers/kernel_svm/test_compiled_kernel_columns.py::"
        "test_compiled_columns_equal_make_kernel",
    ("convexlearn.solvers.kernel_svm.smo_kernels", "_full_column", "poly"):
        "tests/solvers/kernel_svm/test_compiled_kernel_columns.py::"
        "test_compiled_columns_equal_make_kernel",
    ("convexlearn.solvers.kernel_svm.smo_kernels", "_full_column", "sigmoid"):
        "tests/solvers/kernel_svm/test_compiled_kernel_columns.py::"
        "test_compiled_columns_equal_make_kernel",
    ("convexlearn.solvers.kernel_svm.smo_kernels", "_gathered", "rbf"):
        "tests/solvers/kernel_svm/test_compiled_kernel_columns.py::"
        "test_compiled_columns_equal_make_kernel",
    ("convexlearn.solvers.kernel_svm.smo_kernels", "_gathered", "poly"):
        "tests/solvers/kernel_svm/test_compiled_kernel_columns.py::"
        "test_compiled_columns_equal_make_kernel",
    ("convexlearn.solvers.kernel_svm.smo_kernels", "_gathered", "sigmoid"):
        "tests/solvers/kernel_svm/test_compiled_kernel_columns.py::"
        "test_compiled_columns_equal_make_kernel",
    ("convexlearn.gram", "kernel_diagonal", "poly"):
        "tests/test_gram_columns.py::"
        "test_columns_and_diagonal_match_the_gram_matrix",
    ("convexlearn.gram", "kernel_diagonal", "sigmoid"):
        "tests/test_gram_columns.py::"
        "test_columns_and_diagonal_match_the_gram_matrix",
    ("convexlearn.gram", "KernelColumns.from_kernel.compute", "rbf"):
        "tests/test_gram_columns.py::"
        "test_columns_and_diagonal_match_the_gram_matrix",
    ("convexlearn.solvers.kernel_svm.gram_rbf", "_rbf_rows", "rbf"):
        "tests/solvers/kernel_svm/test_gram_rbf.py::test_rbf_block_equals_make_kernel",
}


def _names_in(node: ast.AST) -> set[str]:
    return {n.id if isinstance(n, ast.Name) else n.attr for n in ast.walk(node)
            if isinstance(n, (ast.Name, ast.Attribute))}


def _called(node: ast.Call) -> str:
    f = node.func
    return f.id if isinstance(f, ast.Name) else f.attr if isinstance(f, ast.Attribute) else ""


def _formulas(body: list[ast.stmt]) -> set[str]:
    """The kernel formulas computed by these statements (nested functions excluded):
    poly ``(... coef0 ...) ** degree``; sigmoid ``tanh(... coef0 ...)``; rbf an exp (any
    call named *exp*) together with ``-gamma``."""
    nodes, stack = [], list(body)
    while stack:
        node = stack.pop()
        nodes.append(node)
        stack.extend(child for child in ast.iter_child_nodes(node)
                     if not isinstance(child, (ast.FunctionDef, ast.Lambda, ast.ClassDef)))
    found, exp, minus_gamma = set(), False, False
    for node in nodes:
        if (isinstance(node, ast.BinOp) and isinstance(node.op, ast.Pow)
                and any(n.endswith("degree") for n in _names_in(node.right))
                and "coef0" in _names_in(node.left)):
            found.add("poly")
        if isinstance(node, ast.Call) and _called(node) == "tanh" and any(
                "coef0" in _names_in(a) for a in node.args):
            found.add("sigmoid")
        if isinstance(node, ast.Call) and "exp" in _called(node).lower():
            exp = True
        if (isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub)
                and any(n.endswith("gamma") for n in _names_in(node.operand))):
            minus_gamma = True
    if exp and minus_gamma:
        found.add("rbf")
    return found


def _formula_sites(module: str, tree: ast.AST) -> set[tuple[str, str, str]]:
    sites = set()

    def visit(node, prefix):
        for child in ast.iter_child_nodes(node):
            if isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef)):
                name = prefix + child.name
                sites.update((module, name, k) for k in _formulas(child.body))
                visit(child, name + ".")
            elif isinstance(child, ast.ClassDef):
                visit(child, prefix + child.name + ".")
            else:
                visit(child, prefix)

    visit(tree, "")
    return sites


def _all_formula_sites() -> set[tuple[str, str, str]]:
    return {site for module, path in MODULES.items()
            for site in _formula_sites(module, ast.parse(path.read_text(encoding="utf-8")))}


def test_the_formula_finder_sees_the_definitions_in_kernels_py():
    # guards the guard: the one definition is found by the same shapes
    assert {k for m, _, k in _all_formula_sites() if m == "convexlearn.kernels"} >= {
        "rbf", "poly", "sigmoid"}


def test_every_copy_of_a_kernel_formula_is_compared_with_make_kernel():
    copies = {s for s in _all_formula_sites() if s[0] != "convexlearn.kernels"}
    unlisted = sorted(copies - KERNEL_FORMULA_COPIES.keys())
    assert unlisted == [], ("a second definition of a kernel formula: call kernels.make_kernel, "
                            "or list it in KERNEL_FORMULA_COPIES with a test comparing the two")
    assert sorted(KERNEL_FORMULA_COPIES.keys() - copies) == [], "stale registry entries"
    root = PACKAGE_DIR.parent
    for site, test in KERNEL_FORMULA_COPIES.items():
        path, func = test.split("::")
        tree = ast.parse((root / path).read_text(encoding="utf-8"))
        found = [n for n in tree.body if isinstance(n, ast.FunctionDef) and n.name == func]
        assert found, f"{site}: {test} does not exist"
        source = ast.get_source_segment((root / path).read_text(encoding="utf-8"), found[0])
        assert "make_kernel" in source and "assert_allclose" in source, (
            f"{site}: {test} must compare the copy with kernels.make_kernel")


def test_the_formula_rule_finds_a_planted_copy():
    planted = ast.parse(
        "import numpy as np\n"
        "def fast_rbf(X, gamma):\n"
        "    d2 = ((X[:, None] - X[None]) ** 2).sum(-1)\n"
        "    return np.exp(-gamma * d2)\n"
        "class K:\n"
        "    def poly(self, A, B):\n"
        "        return (self.gamma * (A @ B.T) + self.coef0) ** self.degree\n"
        "    def sig(self, s):\n"
        "        return math.tanh(self.gamma * s + self.coef0)\n"
        "def not_a_kernel(m):\n"
        "    return np.exp(-m) + m ** 2\n")
    sites = _formula_sites("convexlearn.compare", planted)
    assert sites == {("convexlearn.compare", "fast_rbf", "rbf"),
                     ("convexlearn.compare", "K.poly", "poly"),
                     ("convexlearn.compare", "K.sig", "sigmoid")}
    assert sites - KERNEL_FORMULA_COPIES.keys() == sites      # unlisted: the rule fails
