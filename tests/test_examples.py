"""The examples run after README's first command: without scikit-learn too."""

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
BLOCK_SKLEARN = (
    "import sys, runpy\n"
    "class Block:\n"
    "    def find_spec(self, name, path=None, target=None):\n"
    "        if name == 'sklearn' or name.startswith('sklearn.'):\n"
    "            raise ImportError('sklearn is blocked for this test')\n"
    "sys.meta_path.insert(0, Block())\n"
    "runpy.run_path(sys.argv[1], run_name='__main__')\n")


def test_quickstart_runs_without_scikit_learn():
    proc = subprocess.run([sys.executable, "-c", BLOCK_SKLEARN,
                           str(ROOT / "examples" / "quickstart.py")],
                          capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, proc.stderr
    # the exact route's report states the tolerance it certified at (1e-9, the duality gap)
    assert "status: optimal" in proc.stdout and "CERTIFIED at 1e-09" in proc.stdout
    assert "LIBSVM comparison is skipped" in proc.stdout
