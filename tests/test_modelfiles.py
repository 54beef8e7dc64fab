"""Readers of LIBSVM and LIBLINEAR model files: files written by the official Python
bindings read back to the models' own decision values; bad input (truncated, garbled, NaN,
absurd counts) is a DataError naming file and line, fuzzed with hypothesis."""

import numpy as np
import pytest
from hypothesis import given, strategies as st

from convexlearn.errors import DataError
from convexlearn.kernels import make_kernel
from convexlearn.modelfiles import (read_liblinear_model, read_libsvm_model,
                                    read_model_file)

svmutil = pytest.importorskip("libsvm.svmutil")
liblinearutil = pytest.importorskip("liblinear.liblinearutil")

RNG = np.random.default_rng(0)
X = RNG.normal(size=(60, 4))
Y2 = np.where(X[:, 0] + 0.5 * RNG.normal(size=60) > 0, 1, -1)
Y3 = np.digitize(X[:, 0] + 0.5 * RNG.normal(size=60), [-0.4, 0.4])
ROWS = [dict(enumerate(r, 1)) for r in X.tolist()]


def _libsvm_file(tmp_path, y, options):
    model = svmutil.svm_train(y.tolist(), ROWS, options + " -q")
    path = tmp_path / "m.libsvm"
    svmutil.svm_save_model(str(path), model)
    return path, model


def _liblinear_file(tmp_path, y, options):
    model = liblinearutil.train(y.tolist(), ROWS, options + " -q")
    path = tmp_path / "m.liblinear"
    liblinearutil.save_model(str(path), model)
    return path, model


@pytest.mark.parametrize("y, options", [(Y2, "-t 2 -g 0.5 -c 2"), (Y3, "-t 1 -c 1"),
                                        (Y3, "-t 0 -c 0.5 -b 1"), (Y2, "-t 3 -g 0.1 -r 1")])
def test_libsvm_file_gives_libsvms_decision_values(tmp_path, y, options):
    path, model = _libsvm_file(tmp_path, y, options)
    m = read_model_file(path)
    assert m.svm_type == "c_svc" and m.nr_class == len(np.unique(y))
    kernel = make_kernel(m.kernel, X, gamma=m.gamma if m.gamma else "scale",
                         degree=m.degree, coef0=m.coef0)
    K = kernel(X, m.SV.toarray())
    k = m.nr_class
    start = np.concatenate([[0], np.cumsum(m.nr_sv)])
    values, p = [], 0
    for s in range(k):
        for t in range(s + 1, k):
            f = (K[:, start[s]:start[s + 1]] @ m.sv_coef[t - 1, start[s]:start[s + 1]]
                 + K[:, start[t]:start[t + 1]] @ m.sv_coef[s, start[t]:start[t + 1]] - m.rho[p])
            values.append(f)
            p += 1
    _, _, theirs = svmutil.svm_predict(y.tolist(), ROWS, model, "-q")
    # the file writes features with %.8g: decision values agree to that precision
    np.testing.assert_allclose(np.array(values).T, np.array(theirs), atol=1e-6)
    assert list(m.labels) == list(model.get_labels())


@pytest.mark.parametrize("y, options", [(Y2, "-s 1 -c 1 -B 1"), (Y3, "-s 0 -c 1"),
                                        (Y2, "-s 6 -c 2"), (Y2, "-s 3 -c 1 -B 2")])
def test_liblinear_file_gives_liblinears_decision_values(tmp_path, y, options):
    path, model = _liblinear_file(tmp_path, y, options)
    m = read_model_file(path)
    Z = np.hstack([X, np.full((60, 1), m.bias)]) if m.bias >= 0 else X
    _, _, theirs = liblinearutil.predict(y.tolist(), ROWS, model, "-q")
    np.testing.assert_allclose(Z @ m.W, np.array(theirs), rtol=1e-12, atol=1e-12)
    assert m.nr_feature == 4


def _valid_libsvm(tmp_path):
    return _libsvm_file(tmp_path, Y3, "-t 2 -g 0.5 -c 1")[0].read_text()


def _valid_liblinear(tmp_path):
    return _liblinear_file(tmp_path, Y2, "-s 1 -c 1 -B 1")[0].read_text()


def _edit(text, old, new):
    assert old in text
    return text.replace(old, new, 1)


@pytest.mark.parametrize("change, fragment", [
    (lambda t: t[:len(t) // 2], "truncated|support vector|coefficient|index"),
    (lambda t: _edit(t, "nr_class 3", "nr_class -3"), "nr_class is -3"),
    (lambda t: _edit(t, "total_sv", "total_sv 1000000000000\nx_total_sv"), "given twice|unknown"),
    (lambda t: _edit(t, "rbf", "wavelet"), "unknown kernel_type"),
    (lambda t: _edit(t, "gamma 0.5", "gamma nan"), "not finite"),
    (lambda t: _edit(t, "SV\n", "SV\n1 1 1:nan\n"), "not finite|text after|nr_sv"),
    (lambda t: "\x00\xff garbage", "unknown key|not a text file|svm_type"),
    (lambda t: t.replace("\nSV\n", "\n"), "line 9: unknown key .1."),
    (lambda t: t.split("\nSV\n")[0], "ends before the line .SV."),
])
def test_bad_libsvm_files(tmp_path, change, fragment):
    path = tmp_path / "bad.model"
    path.write_text(change(_valid_libsvm(tmp_path)), encoding="latin-1")
    with pytest.raises(DataError, match=fragment) as err:
        read_libsvm_model(path)
    assert str(path) in str(err.value)


def test_absurd_counts_are_refused_before_allocation(tmp_path):
    text = _valid_libsvm(tmp_path)
    line = next(x for x in text.splitlines() if x.startswith("total_sv"))
    path = tmp_path / "huge.model"
    path.write_text(text.replace(line, "total_sv 1000000000000"))
    with pytest.raises(DataError, match=r"line \d+: total_sv is 1000000000000 but only"):
        read_libsvm_model(path)
    nr_sv = next(x for x in text.splitlines() if x.startswith("nr_sv"))
    path.write_text(text.replace(nr_sv, "nr_sv 1000000000000 1 1"))
    with pytest.raises(DataError, match="nr_sv adds up to"):
        read_libsvm_model(path)
    lin = _valid_liblinear(tmp_path)
    path.write_text(lin.replace("nr_feature 4", "nr_feature 1000000000000"))
    with pytest.raises(DataError, match=r"line 4: nr_feature 1000000000000"):
        read_liblinear_model(path)
    path.write_text(lin.replace("nr_class 2", "nr_class -2"))
    with pytest.raises(DataError, match="nr_class is -2"):
        read_liblinear_model(path)


def test_not_a_model_file(tmp_path):
    path = tmp_path / "x.txt"
    path.write_text("hello 1\n")
    with pytest.raises(DataError, match="not a LIBSVM or LIBLINEAR model file"):
        read_model_file(path)


def _mutations():
    return st.tuples(st.integers(0, 10_000), st.integers(0, 40),
                     st.sampled_from(["", "nan", "-1", "1e400", "x", " ", "\n", ":",
                                      "1000000000000", "SV", "w", "\x00"]))


@pytest.mark.parametrize("which", ["libsvm", "liblinear"])
@given(edits=st.lists(_mutations(), max_size=4))
def test_fuzz_readers_give_a_model_or_a_data_error(tmp_path_factory, which, edits):
    tmp = tmp_path_factory.mktemp("fuzz")
    text = _valid_libsvm(tmp) if which == "libsvm" else _valid_liblinear(tmp)
    for pos, cut, insert in edits:
        pos %= len(text) + 1
        text = text[:pos] + insert + text[pos + cut:]
    path = tmp / "fuzzed.model"
    path.write_text(text)
    reader = read_libsvm_model if which == "libsvm" else read_liblinear_model
    try:
        model = reader(path)
    except DataError as exc:
        assert str(path) in str(exc)
    else:
        arrays = (model.sv_coef, model.rho) if which == "libsvm" else (model.W,)
        assert all(np.all(np.isfinite(a)) for a in arrays)
