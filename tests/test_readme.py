"""README's two commands stay true: the test command is exactly what CI runs."""

import os
import re

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def _read(*parts):
    with open(os.path.join(ROOT, *parts)) as fh:
        return fh.read()


def test_ci_runs_the_test_command_readme_gives():
    readme = _read("README.md")
    commands = re.findall(r"```bash\n(.*?)\n```", readme, flags=re.S)
    test_command = next(c for c in commands if "[test]" in c)
    final_step = test_command.split("&&")[-1].strip()
    ci_lines = [line.strip() for line in _read(".ci", "run").splitlines()
                if line.strip() and not line.startswith("#")]
    assert ci_lines[-1] == final_step, (ci_lines[-1], final_step)


def test_readme_first_command_names_an_existing_entry_point():
    readme = _read("README.md")
    first = re.findall(r"```bash\n(.*?)\n```", readme, flags=re.S)[0]
    target = first.split("&&")[-1].strip().split()
    assert any(os.path.exists(os.path.join(ROOT, part)) for part in target[1:]), first
