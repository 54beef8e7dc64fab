"""docs/problem_files.md documents every key the problem-file reader accepts: each key of
each table (top level, [data], the feature map, every generator, [run], and the [model] and
[expect] keys of every model kind) appears in a table row of the page with its type and
default."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from convexlearn.app.adapters import ADAPTERS
from convexlearn.app.catalogue import DATA_KEYS, FEATURE_MAP_KEYS, RUN_KEYS, TOP_KEYS
from convexlearn.app.generators import GENERATORS

PAGE = Path(__file__).resolve().parents[2] / "docs" / "problem_files.md"


def _rows() -> dict[str, list[str]]:
    """key -> the table rows that start with it (`key` in the first cell)."""
    rows: dict[str, list[str]] = {}
    for line in PAGE.read_text(encoding="utf-8").splitlines():
        match = re.match(r"^\| `([A-Za-z_0-9]+)` \|", line)
        if match:
            rows.setdefault(match.group(1), []).append(line)
    return rows


def _keys():
    for table, keys in (("top", TOP_KEYS), ("data", DATA_KEYS), ("run", RUN_KEYS)):
        for key, spec in keys.items():
            yield pytest.param(key, spec.type, id=f"{table}.{key}")
    for kind, adapter in ADAPTERS.items():
        for key, spec in {**adapter.model_keys, **adapter.expect_keys}.items():
            yield pytest.param(key, spec.type, id=f"{kind}.{key}")


@pytest.mark.parametrize("key, type_name", list(_keys()))
def test_every_key_has_a_row_with_its_type(key, type_name):
    rows = _rows()
    assert key in rows, f"`{key}` has no row in docs/problem_files.md"
    assert any(f"| {type_name} |" in row for row in rows[key]), (key, type_name, rows[key])


def test_feature_map_and_generator_keys_are_described():
    text = PAGE.read_text(encoding="utf-8")
    for key, spec in FEATURE_MAP_KEYS.items():
        assert f"`{key}` ({spec.type}" in text, key
    for kind, (_, keys) in GENERATORS.items():
        row = next(line for line in text.splitlines() if line.startswith(f"| `{kind}` |"))
        for key, (type_name, default) in keys.items():
            assert f"`{key}` ({type_name}" in row, (kind, key)
            if default is not None:
                assert f"{type_name}, {default})" in row, (kind, key, default)


def test_every_model_kind_has_its_section():
    text = PAGE.read_text(encoding="utf-8")
    for kind in ADAPTERS:
        assert f'### `kind = "{kind}"`' in text, kind
