"""Benchmarks write into benchmarks/results only when asked (``--record``): without it
they print, and the committed results stay as they are."""

from __future__ import annotations

import ast
import sys
from pathlib import Path

import pytest

BENCH = Path(__file__).resolve().parents[1] / "benchmarks"
sys.path.insert(0, str(BENCH))
import _common  # noqa: E402


def test_results_are_written_only_with_record(tmp_path, monkeypatch, capsys):
    monkeypatch.setattr(_common, "RESULTS", str(tmp_path))
    message = _common.write_result("demo", "Demo", "| a |", argv=["bench_demo.py"])
    assert not (tmp_path / "demo.md").exists()
    assert "not recorded (run with --record" in message
    assert "| a |" in capsys.readouterr().out            # printed instead
    message = _common.write_result("demo", "Demo", "| a |", argv=["bench_demo.py", "--record"])
    assert (tmp_path / "demo.md").read_text().startswith("# Demo")
    assert message.startswith("written to ")
    assert [p.name for p in tmp_path.iterdir()] == ["demo.md"]     # no temporary left


@pytest.mark.parametrize("script", sorted(p.name for p in BENCH.glob("*.py")
                                           if p.name != "_common.py"))
def test_no_script_writes_results_but_through_the_helpers(script):
    source = (BENCH / script).read_text()
    tree = ast.parse(source)
    for node in ast.walk(tree):
        if isinstance(node, ast.Attribute) and node.attr in ("write_text", "write_bytes"):
            pytest.fail(f"{script} writes a file directly ({node.attr})")
        if isinstance(node, ast.Name) and node.id == "RESULTS" and script != "bench_erm.py":
            pytest.fail(f"{script} uses the results directory directly")
    if "argparse" in source and ("write_result" in source or "record_text" in source):
        assert '"--record"' in source, f"{script}: its argparse must accept --record"
    if "savefig" in source:
        assert "figure_dir()" in source, f"{script}: figures go to figure_dir()"
