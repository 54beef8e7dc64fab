"""Plots: valid PNG files of the expected size, with the expected artists (checked on the
matplotlib objects), written atomically; the missing-matplotlib message."""

from __future__ import annotations

import struct
import sys
from pathlib import Path

import numpy as np
import pytest

pytest.importorskip("matplotlib")

from matplotlib.collections import PathCollection  # noqa: E402

from convexlearn.app.catalogue import load_problem  # noqa: E402
from convexlearn.errors import NotApplicableError  # noqa: E402
from convexlearn.app.figures import DPI, PANEL_SIZE, make_figure, plot_result, require_matplotlib  # noqa: E402
from convexlearn.app.report import write_atomic  # noqa: E402
from convexlearn.app.runner import run_problem  # noqa: E402

ROOT = Path(__file__).resolve().parents[2]


def solve(name, methods=None):
    return run_problem(load_problem(ROOT / "problems" / f"{name}.toml"), methods=methods)


def png_size(path: Path) -> tuple[int, int]:
    """(width, height) from the IHDR chunk, after checking the PNG signature."""
    data = path.read_bytes()
    assert data[:8] == b"\x89PNG\r\n\x1a\n", "not a PNG file"
    assert data[12:16] == b"IHDR"
    assert data.rstrip(b"\x00")[-8:-4] == b"IEND", "truncated PNG"
    return struct.unpack(">II", data[16:24])


def legend_labels(ax) -> list[str]:
    return [t.get_text() for t in ax.get_legend().get_texts()]


def scatter_labels(ax) -> list[str]:
    return [c.get_label() for c in ax.collections if isinstance(c, PathCollection)]


def test_separable_svm_boundary_margins_and_convergence(tmp_path):
    result = solve("wine", methods=None)          # 13-D: no boundary, curves only
    fig = make_figure(result)
    assert len(fig.axes) == 2
    result = solve("iris_setosa_versicolor")
    out = tmp_path / "setosa.png"
    fig = plot_result(result, out)
    assert png_size(out) == (3 * PANEL_SIZE[0] * DPI, PANEL_SIZE[1] * DPI)
    boundary, by_iter, by_time = fig.axes
    contours = [c for c in boundary.collections if c.get_gid() == "decision boundary and margins"]
    if not contours:                              # matplotlib < 3.8: ContourSet is no artist
        contours = [c for c in boundary.get_children() if getattr(c, "get_gid", None)
                    and c.get_gid() == "decision boundary and margins"]
    assert contours, "the f = 0 / f = +-1 contour set is missing"
    assert list(contours[0].levels) == [-1.0, 0.0, 1.0]
    labels = legend_labels(boundary)
    assert "class setosa (y=-1)" in labels and "class versicolor (y=+1)" in labels
    assert "bounded support vectors (2)" in labels
    assert not any("meeting point" in s for s in labels)      # separable: no certificate
    # The support-vector markers sit exactly on the reference's bounded samples.
    (bounded,) = [c for c in boundary.collections if c.get_label().startswith("bounded")]
    X = result.problem.data.X
    np.testing.assert_allclose(bounded.get_offsets(), X[result.support_sets[1]])
    for ax in (by_iter, by_time):
        assert ax.get_yscale() == "log"
        assert [line.get_label() for line in ax.get_lines()] == [
            "smo", "pegasos (best so far)", "subgradient (best so far)"]
    assert by_time.get_xscale() == "log"
    sub = by_iter.get_lines()[0].get_ydata()
    assert np.all(sub > 0) and sub[-1] < 1e-6 * sub[0], "smo converges to the exact optimum"


def test_not_separable_shows_free_bounded_and_meeting_point(tmp_path):
    result = solve("iris_versicolor_virginica", methods=["exact-primal"])
    fig = plot_result(result, tmp_path / "vv.png")
    assert png_size(tmp_path / "vv.png") == (PANEL_SIZE[0] * DPI, PANEL_SIZE[1] * DPI)
    (ax,) = fig.axes
    labels = scatter_labels(ax)
    free, bounded = result.support_sets
    assert f"free support vectors ({free.size})" in labels and free.size > 0
    assert f"bounded support vectors ({bounded.size})" in labels and bounded.size > 0
    (star,) = [c for c in ax.collections if c.get_label() == "meeting point of the hulls"]
    np.testing.assert_allclose(star.get_offsets()[0], result.separability.meeting_point)


def test_kernel_boundary_and_halfspace_without_line(tmp_path):
    fig = make_figure(solve("iris_rbf", methods=["exact-dual"]))
    assert "free support vectors (5)" in legend_labels(fig.axes[0])
    tmp = tmp_path / "p.toml"
    (tmp_path / "xor.csv").write_text("a,b,y\n0,0,-1\n2,2,-1\n2,0,1\n0,2,1\n")
    tmp.write_text('name = "hs"\n[data]\npath = "xor.csv"\nlabel = "y"\n'
                   '[model]\nkind = "halfspace"\n')
    fig = make_figure(run_problem(load_problem(tmp)))
    (ax,) = fig.axes
    assert ax.get_title() == "no separating line: the class hulls meet"
    assert "meeting point of the hulls" in scatter_labels(ax)


def test_nothing_to_plot_and_missing_matplotlib(monkeypatch):
    result = solve("digits_3_8", methods=["exact-primal"])
    with pytest.raises(NotApplicableError, match="needs 2 features \\(it has 64\\)"):
        make_figure(result)
    monkeypatch.setitem(sys.modules, "matplotlib.figure", None)
    with pytest.raises(ImportError, match=r"pip install convexlearn\[plot\]"):
        require_matplotlib()


def test_writes_are_atomic(tmp_path):
    out = tmp_path / "keep.png"
    out.write_bytes(b"old")

    def broken(tmp):
        Path(tmp).write_bytes(b"half a PNG")
        raise RuntimeError("disk full")

    with pytest.raises(RuntimeError):
        write_atomic(out, broken)
    assert out.read_bytes() == b"old"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["keep.png"]


def test_solve_command_writes_the_png(tmp_path, capsys):
    from convexlearn.app.cli import main
    out = tmp_path / "iris.png"
    code = main(["solve", str(ROOT / "problems" / "iris_versicolor_virginica.toml"),
                 "--methods", "exact-primal", "smo", "--plot", str(out), "--quiet"])
    assert code == 0, capsys.readouterr().err
    assert png_size(out) == (3 * PANEL_SIZE[0] * DPI, PANEL_SIZE[1] * DPI)
    out_digits = tmp_path / "digits.png"          # 64 features, exact only: refused upfront
    code = main(["solve", str(ROOT / "problems" / "digits_3_8.toml"), "--methods",
                 "exact-primal", "--plot", str(out_digits)])
    assert code == 2 and "nothing to plot" in capsys.readouterr().err
    assert sorted(p.name for p in tmp_path.iterdir()) == ["iris.png"]
