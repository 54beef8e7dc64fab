"""The svmlight / LIBSVM data reader: same arrays as scikit-learn's, sparse, and a DataError
naming file and line for every bad input (fuzzed)."""

import os

import numpy as np
import pytest
from hypothesis import given, strategies as st
from scipy import sparse

from convexlearn.errors import DataError
from convexlearn.svmlight import looks_like_svmlight, read_svmlight

sklearn = pytest.importorskip("sklearn")
SKLEARN_DATA = os.path.join(os.path.dirname(sklearn.__file__), "datasets", "tests", "data")


def test_reads_scikit_learns_test_file_like_scikit_learn():
    from sklearn.datasets import load_svmlight_file
    path = os.path.join(SKLEARN_DATA, "svmlight_classification.txt")
    data = read_svmlight(path)
    X, y = load_svmlight_file(path, zero_based=False)
    assert sparse.issparse(data.X)
    assert data.X.shape == (6, 21)
    np.testing.assert_array_equal(data.X.toarray(), X.toarray())
    np.testing.assert_array_equal(data.y, y)
    assert looks_like_svmlight(path)


def test_round_trip_with_dump_svmlight_file(tmp_path):
    from sklearn.datasets import dump_svmlight_file
    rng = np.random.default_rng(0)
    X = rng.normal(size=(40, 7)) * (rng.random((40, 7)) < 0.4)
    y = rng.integers(0, 3, 40)
    path = tmp_path / "d.txt"
    dump_svmlight_file(X, y, str(path), zero_based=False)
    data = read_svmlight(path, n_features=7)
    # scikit-learn writes %.16g: one unit in the 16th digit, not a reading error
    np.testing.assert_allclose(data.X.toarray(), X, rtol=1e-15, atol=0)
    np.testing.assert_array_equal(data.y, y)


def test_zero_based_files_and_qid(tmp_path):
    path = tmp_path / "z.txt"
    path.write_text("1 qid:3 0:1.5 2:2\n-1 qid:4 1:-1\n")
    data = read_svmlight(path)
    assert data.zero_based and data.X.shape == (2, 3)
    np.testing.assert_array_equal(data.qid, [3, 4])
    np.testing.assert_array_equal(data.X.toarray(), [[1.5, 0, 2], [0, -1, 0]])


@pytest.mark.parametrize("text, fragment", [
    ("1 1:2\n2 3:x\n", "line 2"),
    ("1 1:2\nnan 3:1\n", "not finite"),
    ("1 1:nan\n", "not finite"),
    ("1 2:1 1:3\n", "must increase"),
    ("1 1:1\n2 1;3\n", "is not index:value"),
    ("# only a comment\n\n", "no sample"),
    ("1,2 1:1\n", "multilabel"),
    ("1 99999999999:1\n", "beyond"),
])
def test_bad_input_names_file_and_line(tmp_path, text, fragment):
    path = tmp_path / "bad.svm"
    path.write_text(text)
    with pytest.raises(DataError, match=fragment) as err:
        read_svmlight(path)
    assert str(path) in str(err.value)


def test_more_features_than_announced(tmp_path):
    path = tmp_path / "d.svm"
    path.write_text("1 1:1\n-1 5:1\n")
    with pytest.raises(DataError, match="line 2: feature index 5 is beyond the 3"):
        read_svmlight(path, n_features=3)


def test_csv_is_not_svmlight(tmp_path):
    path = tmp_path / "d.csv"
    path.write_text("a,b,label\n1,2,x\n")
    assert not looks_like_svmlight(path)


@given(st.binary(max_size=300))
def test_fuzz_bytes_give_data_or_a_data_error(tmp_path_factory, raw):
    path = tmp_path_factory.mktemp("fuzz") / "f.svm"
    path.write_bytes(raw)
    try:
        data = read_svmlight(path)
    except DataError as exc:
        assert str(path) in str(exc)
    else:
        assert data.X.shape[0] == data.y.shape[0] >= 1
        assert np.all(np.isfinite(data.X.data))
