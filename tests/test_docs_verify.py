"""docs/verify.md: every python block runs as written, in order, in one namespace."""

import os
import re

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

pytest.importorskip("sklearn")
pytest.importorskip("libsvm.svmutil")
pytest.importorskip("liblinear.liblinearutil")


def test_every_snippet_of_docs_verify_runs(capsys):
    with open(os.path.join(ROOT, "docs", "verify.md")) as fh:
        blocks = re.findall(r"```python\n(.*?)\n```", fh.read(), flags=re.S)
    assert len(blocks) >= 6          # one per source at least
    namespace: dict = {}
    for k, block in enumerate(blocks):
        exec(compile(block, f"docs/verify.md block {k + 1}", "exec"), namespace)
    out = capsys.readouterr().out
    assert "FAILED" in out or "PASSED" in out
    assert "nu-SVM" in out
