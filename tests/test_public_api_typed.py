"""Every public function and method of the library carries type hints.

Public: a name not starting with ``_`` (and ``__init__``), defined at module level or in a
public class, in a module whose path under ``convexlearn/`` has no component starting
with ``_``. Hinted: every parameter but ``self``/``cls`` is annotated, and the function has
a return annotation (``__init__`` needs none).
"""

from __future__ import annotations

import ast
from pathlib import Path

import convexlearn

PACKAGE_DIR = Path(convexlearn.__file__).resolve().parent


def _public_modules() -> list[Path]:
    out = []
    for path in sorted(PACKAGE_DIR.rglob("*.py")):
        rel = path.relative_to(PACKAGE_DIR.parent)
        if any(part.startswith("_") and part != "__init__.py" for part in rel.parts):
            continue
        out.append(path)
    return out


def _unhinted(path: Path) -> list[str]:
    tree = ast.parse(path.read_text(encoding="utf-8"))
    missing: list[str] = []

    def visit(nodes: list[ast.stmt], prefix: str) -> None:
        for node in nodes:
            if isinstance(node, ast.ClassDef) and not node.name.startswith("_"):
                visit(node.body, f"{prefix}{node.name}.")
            elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and (
                    not node.name.startswith("_") or node.name == "__init__"):
                a = node.args
                params = [p for p in a.posonlyargs + a.args + a.kwonlyargs
                          if p.arg not in ("self", "cls")]
                bad = [p.arg for p in params if p.annotation is None]
                if node.returns is None and node.name != "__init__":
                    bad.append("return")
                if bad:
                    missing.append(f"{prefix}{node.name} ({', '.join(bad)}) line {node.lineno}")

    visit(tree.body, "")
    return missing


def test_modules_found() -> None:
    assert len(_public_modules()) > 20


def test_public_api_is_typed() -> None:
    missing = []
    for path in _public_modules():
        rel = path.relative_to(PACKAGE_DIR.parent)
        missing += [f"{rel}: {m}" for m in _unhinted(path)]
    assert not missing, (f"{len(missing)} public functions lack type hints:\n"
                         + "\n".join(missing))
