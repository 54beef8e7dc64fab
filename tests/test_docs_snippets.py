"""Every snippet and command of README.md and docs/*.md runs as written, on the shipped data.

The documents are read when the tests run (whatever pages exist then), and each fenced
block is one of:

* a shell block (```bash, ```sh, ```console) or a plain ``` block whose lines start with
  ``$ ``: its commands run in order, in one scratch directory per document that sees the
  repository's ``problems/`` and ``examples/`` (outputs land there, never in the
  checkout). A command must exit 0, or with the code a following ``$ echo $?`` line
  shows; a command followed at once by the next ``$`` line must print nothing, and the
  first output line the page shows after a command must appear in its output (numbers
  may differ: times vary);
* ```python: run as a script in that directory;
* ```toml: a complete problem file, written into a scratch ``problems/`` (beside the
  repository's ``problems/data``) and run with ``convexlearn solve``;
* anything else (output, pictures, layouts) is not run.

A page that carries ``<!-- snippets: one session -->`` is a walk-through: its python blocks
build on each other and run as one script, in order (one test for the page).

A block preceded by an HTML comment ``<!-- illustrative: why -->`` is not run (it stands
for the reader's data or a server that runs until stopped); there are few, and the reason
is on the page. In README's bash blocks the steps that make the environment (``python3 -m
venv``, ``. .venv/bin/activate``, ``pip install``) are this test's own environment (the
checkout on PYTHONPATH) and are left out; ``python -m pytest`` is the suite itself (CI
runs it: tests/test_readme.py). Commands and blocks that need matplotlib are skipped only
when it is absent.
"""

from __future__ import annotations

import importlib.util
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
TIMEOUT = 300                    # seconds per command: the slowest runs a LocalCluster
ILLUSTRATIVE = re.compile(r"<!--\s*illustrative\b")
ONE_SESSION = re.compile(r"<!--\s*snippets:\s*one session\s*-->")
SHELL = ("bash", "sh", "console", "shell")
ENVIRONMENT_STEPS = re.compile(r"^(python3? -m venv\b|\. \S*activate$|source \S*activate$|"
                               r"(python3? -m )?pip install\b)")
HAS_MATPLOTLIB = importlib.util.find_spec("matplotlib") is not None


def _documents() -> list[Path]:
    return [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]


def _blocks(text: str):
    """(info string, body, first line number, illustrative) of each fenced block."""
    lines = text.split("\n")
    i = 0
    while i < len(lines):
        match = re.match(r"^```(\w*)\s*$", lines[i])
        if not match:
            i += 1
            continue
        start = i
        j = i + 1
        while j < len(lines) and not lines[j].startswith("```"):
            j += 1
        before = next((lines[k] for k in range(start - 1, -1, -1) if lines[k].strip()), "")
        yield match.group(1), "\n".join(lines[start + 1:j]), start + 1, \
            bool(ILLUSTRATIVE.search(before))
        i = j + 1


def _steps(info: str, body: str):
    """The commands of a block, each (command, expected exit code, first output line or
    None, must be silent)."""
    lines = body.split("\n")
    if info in SHELL and not any(line.startswith("$ ") for line in lines):
        # a script: every line a command (&&-chains split), comments and blanks left out
        for line in lines:
            line = line.split("  #")[0].strip()
            if not line or line.startswith("#"):
                continue
            for part in (p.strip() for p in line.split("&&")):
                if not ENVIRONMENT_STEPS.match(part):
                    yield part, 0, None, False
        return
    k = 0
    while k < len(lines):
        if not lines[k].startswith("$ "):
            k += 1
            continue
        command = lines[k][2:].strip()
        output = []
        m = k + 1
        while m < len(lines) and not lines[m].startswith("$ "):
            output.append(lines[m])
            m += 1
        code = 0
        if m < len(lines) and lines[m].strip() == "$ echo $?":
            code = int(lines[m + 1].strip())
            m += 2
        if command != "echo $?":
            first = next((o for o in output if o.strip()), None)
            yield command, code, None if first in (None, "...") else first, \
                m == k + 1 and not output
        k = m


def _cases():
    for doc in _documents():
        text = doc.read_text(encoding="utf-8")
        session = [] if ONE_SESSION.search(text) else None
        for info, body, line, illustrative in _blocks(text):
            if illustrative:
                continue
            where = f"{doc.relative_to(ROOT)}:{line}"
            if info == "python" and session is not None:
                session.append(body)
            elif info == "python":
                yield pytest.param(doc, "python", body, id=where)
            elif info == "toml":
                yield pytest.param(doc, "toml", body, id=where)
            elif info in SHELL or any(s.startswith("$ ") for s in body.split("\n")):
                yield pytest.param(doc, "shell", body if info in SHELL else "\n" + body,
                                   id=where)
        if session:
            yield pytest.param(doc, "python", "\n\n".join(session),
                               id=f"{doc.relative_to(ROOT)}:python-session")


def _needs_matplotlib(text: str) -> bool:
    return "--plot" in text or "matplotlib" in text or "convexlearn.plot" in text


def _numbers_free(line: str) -> re.Pattern:
    """The line as a pattern in which every number may differ (times, last digits)."""
    parts = re.split(r"-?\d+(?:\.\d+)?(?:e[-+]?\d+)?", line.strip())
    return re.compile(r"[-+0-9.e]+".join(map(re.escape, parts)))


@pytest.fixture(scope="module")
def scratch(tmp_path_factory):
    """One scratch directory per document (commands of a page share their outputs:
    diff reads what solve wrote), each seeing problems/ and examples/."""
    made = {}

    def get(doc: Path) -> Path:
        if doc not in made:
            d = tmp_path_factory.mktemp(doc.stem)
            for name in ("problems", "examples"):
                (d / name).symlink_to(ROOT / name, target_is_directory=True)
            made[doc] = d
        return made[doc]
    return get


def _env():
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join([str(ROOT), env.get("PYTHONPATH", "")]).rstrip(
        os.pathsep)
    bin_dir = str(Path(sys.executable).parent)          # python, convexlearn of this venv
    env["PATH"] = bin_dir + os.pathsep + env.get("PATH", "")
    return env


def _run(command: str, cwd: Path) -> subprocess.CompletedProcess:
    if re.match(r"^(python3? -m )?pytest\b|^python3? -m pytest\b", command):
        pytest.skip("the test suite itself (CI runs README's test command)")
    return subprocess.run(["bash", "-c", command], cwd=cwd, env=_env(), capture_output=True,
                          text=True, timeout=TIMEOUT)


@pytest.mark.parametrize("doc, kind, body", list(_cases()))
def test_snippet_runs_as_written(doc, kind, body, scratch, tmp_path):
    if _needs_matplotlib(body) and not HAS_MATPLOTLIB:
        pytest.skip("needs matplotlib (pip install '.[plot]')")
    cwd = scratch(doc)
    if kind == "python":
        proc = subprocess.run([sys.executable, "-c", body], cwd=cwd, env=_env(),
                              capture_output=True, text=True, timeout=TIMEOUT)
        assert proc.returncode == 0, proc.stderr[-3000:]
        return
    if kind == "toml":
        problems = tmp_path / "problems"
        problems.mkdir()
        (problems / "data").symlink_to(ROOT / "problems" / "data", target_is_directory=True)
        (problems / "snippet.toml").write_text(body)
        proc = _run("convexlearn solve problems/snippet.toml -q", tmp_path)
        assert proc.returncode == 0, (proc.stdout[-3000:], proc.stderr[-3000:])
        return
    steps = list(_steps("bash" if not body.startswith("\n") else "", body.lstrip("\n")))
    assert steps, "a shell block without a command"
    for command, code, first, silent in steps:
        proc = _run(command, cwd)
        assert proc.returncode == code, (command, proc.stdout[-3000:], proc.stderr[-3000:])
        if silent:
            assert proc.stdout == "", (command, "prints, but the page shows no output",
                                       proc.stdout[:500])
        if first is not None:
            assert _numbers_free(first).search(proc.stdout + proc.stderr), \
                (command, "the page shows", first, "it prints", proc.stdout[:1000])


def test_the_snippets_are_found():
    """The extraction sees the pages' commands (a broken pattern would run nothing)."""
    kinds = [c.values[1] for c in _cases()]
    assert kinds.count("shell") >= 5 and kinds.count("toml") >= 3 and "python" in kinds
    commands = [s[0] for c in _cases() if c.values[1] == "shell"
                for s in _steps("" if c.values[2].startswith("\n") else "bash",
                                c.values[2].lstrip("\n"))]
    assert "convexlearn solve problems/iris_versicolor_virginica.toml" in commands
    assert any(c.startswith("convexlearn predict ") for c in commands)
    assert any("--scheduler local" in c for c in commands)


def test_no_page_installs_from_pypi():
    """The package is installed from the checkout (it is not on PyPI)."""
    for doc in _documents():
        text = doc.read_text(encoding="utf-8")
        assert not re.search(r"pip install [\"']?convexlearn", text), doc.name


def test_cli_page_lists_every_method_and_option():
    """cli.md's --methods row names every method the command accepts, and its synopsis
    every option of solve and predict."""
    from convexlearn.app.adapters import ADAPTERS
    from convexlearn.app.cli import build_parser
    text = (ROOT / "docs" / "cli.md").read_text(encoding="utf-8")
    row = next(line for line in text.splitlines() if line.startswith("| `--methods M ...` |"))
    for kind in ("svm", "erm"):
        for name in ADAPTERS[kind].methods() + ADAPTERS[kind].distributed_methods():
            assert f"`{name}`" in row, name
    synopsis = text.split("```")[1]
    commands = build_parser()._subparsers._group_actions[0].choices
    for command in ("solve", "predict"):
        for action in commands[command]._actions:
            for flag in action.option_strings:
                if flag.startswith("--") and flag != "--help":
                    assert flag in synopsis or flag in ("--quiet", "--verbose"), \
                        (command, flag)
