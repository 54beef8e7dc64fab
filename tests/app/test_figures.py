"""Plots: each function returns the ax it drew on with the expected artists (checked on the
matplotlib objects), the CLI writes the format its extension names, atomically; the
errors for data that are not in the plane and for a missing matplotlib."""

from __future__ import annotations

import struct
import sys
from pathlib import Path

import numpy as np
import pytest

pytest.importorskip("matplotlib")

from matplotlib.backends.backend_agg import FigureCanvasAgg  # noqa: E402
from matplotlib.figure import Figure  # noqa: E402

import convexlearn as cl  # noqa: E402
from convexlearn.app.catalogue import load_problem  # noqa: E402
from convexlearn.app.figures import (DPI, PANEL_SIZE, check_plot_path, make_figure,  # noqa: E402
                                     plot_panels, plot_result, require_matplotlib)
from convexlearn.app.report import write_atomic  # noqa: E402
from convexlearn.app.runner import run_problem  # noqa: E402
from convexlearn.errors import NotApplicableError, ParameterError  # noqa: E402
from convexlearn.plot import (plot_convergence, plot_decision, plot_path,  # noqa: E402
                              plot_separability, plot_shattering)
from convexlearn.plot.separability import maximal_margin_hyperplane  # noqa: E402

ROOT = Path(__file__).resolve().parents[2]


def new_ax():
    fig = Figure()
    FigureCanvasAgg(fig)
    return fig.add_subplot(1, 1, 1)


def solve(name, methods=None):
    return run_problem(load_problem(ROOT / "problems" / f"{name}.toml"), methods=methods)


def png_size(path: Path) -> tuple[int, int]:
    """(width, height) from the IHDR chunk, after checking the PNG signature."""
    data = path.read_bytes()
    assert data[:8] == b"\x89PNG\r\n\x1a\n", "not a PNG file"
    assert data[12:16] == b"IHDR"
    assert data.rstrip(b"\x00")[-8:-4] == b"IEND", "truncated PNG"
    return struct.unpack(">II", data[16:24])


def by_gid(ax, gid):
    return [a for a in ax.get_children() if getattr(a, "get_gid", None) and a.get_gid() == gid]


def by_label(ax, start):
    return [c for c in ax.collections if c.get_label().startswith(start)]


def blobs(n, seed=0, sep=3.0):
    rng = np.random.default_rng(seed)
    y = np.where(np.arange(n) % 2 == 0, -1, 1)
    X = rng.standard_normal((n, 2))
    X[:, 0] += 0.5 * sep * y
    return X, y


def test_decision_linear_boundary_margins_and_support_vectors():
    X, y = blobs(60, sep=2.0)
    svm = cl.SVM(X, y, C=1.0)
    sol = svm.solve()
    ax = new_ax()
    assert plot_decision(svm, sol, ax) is ax
    (boundary,) = by_gid(ax, "decision boundary")
    assert list(boundary.levels) == [0.0]
    (margins,) = by_gid(ax, "margins")
    assert list(margins.levels) == [-1.0, 1.0]
    rep = sol.report
    (free,) = by_label(ax, "free support vectors")
    (bounded,) = by_label(ax, "bounded support vectors")
    np.testing.assert_allclose(free.get_offsets(), X[rep.free])
    np.testing.assert_allclose(bounded.get_offsets(), X[rep.bounded])
    assert rep.free.size + rep.bounded.size == rep.support.size > 0
    # the free support vectors sit on the drawn margins: |f(x_i)| = 1
    np.testing.assert_allclose(np.abs(svm.decision_function(sol, X[rep.free])), 1.0, atol=1e-6)


def test_decision_kernel_and_new_figure_and_erm():
    X, y = blobs(80, seed=1, sep=1.0)
    svm = cl.SVM(X, y, C=1.0, kernel="rbf", gamma=1.0)
    ax = plot_decision(svm, svm.solve())                # a new Figure
    assert ax.figure is not None and by_gid(ax, "decision boundary")
    erm = cl.ERM(X, y, loss="logistic", penalty="l2", lam=0.1)
    ax = plot_decision(erm, erm.solve(), new_ax())
    assert by_gid(ax, "decision boundary") and not by_gid(ax, "margins")
    assert not by_label(ax, "free support vectors")     # no support vectors outside SVMs


def test_not_in_the_plane_is_not_applicable():
    rng = np.random.default_rng(0)
    X, y = rng.standard_normal((20, 3)), np.arange(20) % 2
    svm = cl.SVM(X, y)
    with pytest.raises(NotApplicableError, match=r"exactly 2 features \(X has 3\)"):
        plot_decision(svm, svm.solve(), new_ax())
    hs = cl.Halfspace(X, y)
    with pytest.raises(NotApplicableError, match="exactly 2 features"):
        plot_separability(hs, hs.check(), new_ax())
    with pytest.raises(NotApplicableError, match="exactly 2 features"):
        plot_shattering(np.eye(3), ax=new_ax())
    reg = cl.ERM(X[:, :2], rng.standard_normal(20), loss="squared", penalty="l2", lam=0.1)
    with pytest.raises(NotApplicableError, match="classification"):
        plot_decision(reg, reg.solve(), new_ax())


def test_separability_separable_draws_the_maximal_margin_hyperplane():
    X, y = blobs(40, seed=2, sep=8.0)
    X = 1e3 + 50.0 * X                                   # far from 0, large units
    hs = cl.Halfspace(X, y)
    res = hs.check()
    assert res.separable
    ax = new_ax()
    assert plot_separability(hs, res, ax) is ax
    (line,) = by_gid(ax, "maximal-margin hyperplane")
    assert by_gid(ax, "margins") and by_gid(ax, "hull -1") and by_gid(ax, "hull +1")
    w, b, support = maximal_margin_hyperplane(X, hs.y)
    # the drawn hyperplane is the hard-margin SVM's: its margin is the reported one
    assert 1.0 / np.linalg.norm(w) == pytest.approx(res.margin, rel=1e-6)
    m = hs.y * (X @ w + b)
    assert m.min() == pytest.approx(1.0, abs=1e-6)
    np.testing.assert_allclose(m[support], 1.0, atol=1e-6)
    (sv,) = by_label(ax, "support vectors")
    np.testing.assert_allclose(sv.get_offsets(), X[support])


def test_separability_not_separable_hulls_certificate_and_meeting_point():
    X = np.array([[0, 0], [2, 2], [0, 2], [2, 0], [1, 3]], float)
    y = np.array([-1, -1, 1, 1, 1])
    hs = cl.Halfspace(X, y)
    res = hs.check()
    assert not res.separable
    ax = plot_separability(hs, res, new_ax())
    hulls = by_gid(ax, "hull -1") + by_gid(ax, "hull +1")
    assert len(hulls) == 2
    (cert,) = by_gid(ax, "certificate points")
    used = np.flatnonzero(res.certificate > 1e-9 * res.certificate.max())
    np.testing.assert_allclose(cert.get_offsets(), X[used])
    (star,) = by_gid(ax, "meeting point")
    np.testing.assert_allclose(star.get_offsets()[0], res.meeting_point)
    # the meeting point lies in both drawn hulls: the triangle of y=+1, the segment of y=-1
    from matplotlib.path import Path as MplPath
    (tri,) = by_gid(ax, "hull +1")
    assert MplPath(tri.get_xy()).contains_point(res.meeting_point)
    (seg,) = by_gid(ax, "hull -1")
    a, b = seg.get_xy()[:2]
    t = (res.meeting_point - a) @ (b - a) / ((b - a) @ (b - a))
    assert 0 <= t <= 1 and np.allclose(a + t * (b - a), res.meeting_point)
    texts = [t.get_text() for t in ax.texts]
    assert all(t.startswith("\u03bb=") for t in texts) and len(texts) == used.size


def test_shattering_in_the_plane():
    ax = plot_shattering([[0, 0], [1, 0], [0, 1]], ax=new_ax())
    assert ax.get_title().startswith("shattered")
    assert len(ax.get_lines()) == 3                     # one line per mixed labeling, y_0 = +1
    ax = plot_shattering([[0, 0], [1, 0], [0, 1], [1, 1]], ax=new_ax())
    assert ax.get_title().startswith("not shattered") and by_gid(ax, "meeting point")


def _svm_runs():
    X, y = blobs(60, seed=3, sep=2.0)
    svm = cl.SVM(X, y, C=1.0)
    return svm, svm.solve(), {m: svm.solve(m, tol=1e-8) for m in ("smo", "pegasos")}


def test_convergence_against_the_certified_optimum():
    svm, ref, sols = _svm_runs()
    ax = new_ax()
    assert plot_convergence(svm, sols, ax, reference=ref, tol=1e-6) is ax
    lines = {line.get_label(): line for line in ax.get_lines()}
    assert set(lines) == {"smo (dual)", "pegasos (best so far)", "tol = 1e-06"}
    assert ax.get_yscale() == "log" and ax.get_xscale() == "log"
    r = lines["smo (dual)"].get_ydata()
    expected = np.abs(sols["smo"].history["objective"] - ref.objective) / abs(ref.objective)
    np.testing.assert_allclose(r, np.maximum(expected, 1e-16))
    assert r[-1] < 1e-6 * r[0]
    ax = plot_convergence(svm, list(sols.values()), new_ax(), x="time")   # F* solved here
    assert ax.get_xlabel() == "time (s)" and len(ax.get_lines()) == 2
    with pytest.raises(NotApplicableError, match="history"):
        plot_convergence(svm, [ref], new_ax())
    # "dual" is decided by the first value off F* beyond round-off: a primal history that
    # ends a hair below F* (round-off of F*) is not dual, one that starts below F* is
    F = ref.objective
    primal, dual = cl.Solution(w=None, b=0.0, method="primal"), cl.Solution(w=None, b=0.0,
                                                                             method="dual")
    for e in (1e-1, 1e-4, 1e-8, -1e-15, -2e-15, -1e-15, -3e-15):
        primal.history.record(objective=F * (1 + e))
        dual.history.record(objective=F * (1 - abs(e)))
    ax = plot_convergence(svm, [primal, dual], new_ax(), reference=F)
    assert [line.get_label() for line in ax.get_lines()] == ["primal", "dual (dual)"]
    with pytest.raises(ParameterError, match="x must be"):
        plot_convergence(svm, sols, new_ax(), x="epoch", reference=ref)


def test_path_coefficients_and_objective():
    rng = np.random.default_rng(4)
    X = rng.standard_normal((50, 4))
    y = X @ np.array([3.0, -2.0, 0.0, 0.5]) + 0.1 * rng.standard_normal(50)
    erm = cl.ERM(X, y, loss="squared", penalty="l1", lam=1.0)
    lams = np.logspace(-2, 1, 6)
    sols = erm.path(lams)
    ax = new_ax()
    assert plot_path(sols, ax) is ax                                    # extra["lam"]
    assert len(ax.get_lines()) == 5 and ax.get_xscale() == "log"        # 4 coefficients + 0
    np.testing.assert_allclose(ax.get_lines()[0].get_xdata(), lams)
    np.testing.assert_allclose(ax.get_lines()[0].get_ydata(), [s.w[0] for s in sols])

    class Path:
        values, solutions, parameter = list(lams), sols, "lam"
    ax = plot_path(Path(), new_ax(), what="objective")
    np.testing.assert_allclose(ax.get_lines()[0].get_ydata(), [s.objective for s in sols])
    ax = plot_path(list(zip(lams[::-1], sols[::-1])), new_ax())         # pairs, any order
    np.testing.assert_allclose(ax.get_lines()[0].get_xdata(), lams)
    with pytest.raises(ParameterError, match="plot_path needs a path"):
        plot_path([1, 2], new_ax())


# ------------------------------------------------------------------------ the CLI's figures
def test_cli_figure_panels_and_png(tmp_path):
    result = solve("iris_versicolor_virginica", methods=["exact-primal", "smo"])
    assert plot_panels(result) == ["decision", "separability", "convergence-iteration",
                                   "convergence-time"]
    out = tmp_path / "vv.png"
    fig = plot_result(result, out)
    assert png_size(out) == (round(4 * PANEL_SIZE[0] * DPI), round((PANEL_SIZE[1] + 0.6) * DPI))
    decision, separability, by_iter, by_time = fig.axes[:4]
    free, bounded = result.support_sets
    assert by_label(decision, f"free support vectors ({free.size},")
    assert by_label(decision, f"bounded support vectors ({bounded.size},")
    (star,) = by_gid(separability, "meeting point")
    np.testing.assert_allclose(star.get_offsets()[0], result.separability.meeting_point)
    assert [line.get_label() for line in by_iter.get_lines()][0] == "smo (dual)"


def test_two_d_shattering_and_halfspace_problems_plot(tmp_path):
    result = solve("shattering_four_points")
    assert plot_panels(result) == ["shattering"]
    (ax,) = make_figure(result).axes
    assert ax.get_title().startswith("not shattered") and by_gid(ax, "meeting point")
    (tmp_path / "xor.csv").write_text("a,b,y\n0,0,-1\n2,2,-1\n2,0,1\n0,2,1\n")
    (tmp_path / "p.toml").write_text('name = "hs"\n[data]\npath = "xor.csv"\nlabel = "y"\n'
                                     '[model]\nkind = "halfspace"\n')
    (ax,) = make_figure(run_problem(load_problem(tmp_path / "p.toml"))).axes
    assert by_gid(ax, "hull -1") and by_gid(ax, "certificate points")


def test_the_extension_names_the_format(tmp_path, capsys):
    from convexlearn.app.cli import main
    from convexlearn.app.figures import figure_bytes
    out = tmp_path / "iris.svg"
    code = main(["solve", str(ROOT / "problems" / "iris_rbf.toml"), "--methods",
                 "exact-dual", "--plot", str(out), "--quiet"])
    assert code == 0, capsys.readouterr().err
    data = out.read_bytes()
    assert data.startswith(b"<?xml") and b"<svg" in data[:1000]
    fig = Figure()
    FigureCanvasAgg(fig)
    fig.add_subplot(1, 1, 1).plot([0, 1])
    assert figure_bytes(fig, "a.png").startswith(b"\x89PNG\r\n\x1a\n")
    pdf = figure_bytes(fig, "a.PDF")
    assert pdf.startswith(b"%PDF-") and pdf.rstrip().endswith(b"%%EOF")
    assert figure_bytes(fig, "a.pdf") == pdf            # no creation date: reproducible


def test_unknown_extension_and_nothing_to_plot_fail_before_solving(tmp_path, capsys):
    from convexlearn.app.cli import main
    with pytest.raises(ParameterError, match=r"accepted: \.png, \.svg, \.pdf"):
        check_plot_path("x.jpg")
    code = main(["solve", str(ROOT / "problems" / "iris_rbf.toml"), "--plot",
                 str(tmp_path / "x.jpg")])
    assert code == 2 and ".jpg" in capsys.readouterr().err
    code = main(["solve", str(ROOT / "problems" / "digits_3_8.toml"), "--methods",
                 "exact-primal", "--plot", str(tmp_path / "d.png")])
    err = capsys.readouterr().err
    assert code == 2 and "nothing to plot" in err and "it has 64 features" in err
    assert list(tmp_path.iterdir()) == []


def test_missing_matplotlib(monkeypatch):
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


def test_kernel_grid_on_the_support_equals_the_decision_function():
    from convexlearn.plot.decision import decision_grid
    X, y = blobs(120, seed=5, sep=1.0)
    svm = cl.SVM(X, y, C=1.0, kernel="rbf", gamma=0.7)
    sol = svm.solve()
    assert np.count_nonzero(svm.y * sol.alpha) < X.shape[0]       # a real reduction
    gx, gy, f = decision_grid(svm, sol, X.min(axis=0), X.max(axis=0), 15)
    Z = np.column_stack([gx.ravel(), gy.ravel()])
    np.testing.assert_allclose(f.ravel(), svm.decision_function(sol, Z), rtol=1e-10,
                               atol=1e-10)


def test_homogeneous_separability_both_ways():
    X = np.array([[1.0, 2.0], [2.0, 1.5], [-1.0, -1.0], [-2.0, -0.5]])
    y = np.array([1, 1, -1, -1])
    hs = cl.Halfspace(X, y, intercept=False)
    ax = plot_separability(hs, hs.check(), new_ax())
    assert ax.get_title().startswith("separable")
    w, b, _ = maximal_margin_hyperplane(X, hs.y, homogeneous=True)
    assert b == 0.0 and np.min(hs.y * (X @ w)) == pytest.approx(1.0, abs=1e-6)
    hs = cl.Halfspace(X, -np.array([1, -1, 1, -1]), intercept=False)   # cones meet
    res = hs.check()
    assert not res.separable
    ax = plot_separability(hs, res, new_ax())
    assert "cones" in ax.get_title() and by_gid(ax, "meeting point")
    assert not by_gid(ax, "hull -1")                   # cones, not hulls


def test_importing_the_plot_module_does_not_load_matplotlib():
    import subprocess
    code = "import convexlearn, convexlearn.plot, sys; print('matplotlib' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True,
                         text=True, check=True).stdout
    assert out.strip() == "False"
