"""Validation at the edge (convexlearn.data) and the error hierarchy."""

import numpy as np
import pytest

import convexlearn as cl
from convexlearn.data import (LabelMap, as_binary_labels, as_features, as_targets, check_C,
                              check_choice, check_nonnegative, check_positive)

X_OK = np.array([[0.0, 1.0], [1.0, 0.0], [2.0, 2.0], [3.0, 1.0]])
Y_OK = np.array([0, 0, 1, 1])


def test_error_hierarchy_is_rooted_at_valueerror():
    for cls in (cl.DataError, cl.ParameterError, cl.NotPSDError, cl.InfeasibleError,
                cl.UnboundedError, cl.SolverError, cl.NotApplicableError):
        assert issubclass(cls, cl.ConvexLearnError)
    assert issubclass(cl.ConvexLearnError, ValueError)


@pytest.mark.parametrize("X, fragment", [
    (np.array([[np.nan, 1.0], [0.0, 1.0]]), "row 0, column 0"),
    (np.array([[1.0, np.inf], [0.0, 1.0]]), "non-finite"),
    (np.zeros((0, 3)), "no samples"),
    (np.zeros((3, 0)), "no features"),
    (np.array([1.0, 2.0, 3.0]), "reshape(-1, 1)"),
    (np.zeros((2, 2, 2)), "2-dimensional"),
    (np.array([[1 + 2j, 0], [0, 1]]), "complex"),
    (np.array([["a", "b"], ["c", "d"]]), "numeric"),
])
def test_bad_features_are_rejected_with_the_reason(X, fragment):
    with pytest.raises(cl.DataError, match=fragment.replace("(", r"\(").replace(")", r"\)")):
        as_features(X)


def test_features_are_float64_contiguous():
    out = as_features([[1, 2], [3, 4]])
    assert out.dtype == np.float64 and out.flags.c_contiguous


@pytest.mark.parametrize("y, fragment", [
    (np.array([1, 1, 1, 1]), "one class only"),
    (np.array([0, 1, 2, 2]), "3 classes"),
    (np.array([0.1, 0.7, 0.33, 2.5]), "looks continuous"),
    (np.array([0, 1, 1]), "4 samples but y has 3"),
    (np.array([0.0, np.nan, 1.0, 1.0]), "non-finite labels"),
    (np.array([1j, 0, 1, 0]), "complex"),
])
def test_bad_labels_are_rejected_with_the_reason(y, fragment):
    with pytest.raises(cl.DataError, match=fragment):
        as_binary_labels(y, n=4)


def test_label_mapping_sorts_classes_and_round_trips():
    y = np.array(["spam", "ham", "spam", "ham"])
    signed, label_map = as_binary_labels(y)
    assert list(label_map.classes) == ["ham", "spam"]
    assert signed.tolist() == [1.0, -1.0, 1.0, -1.0]
    assert list(label_map.to_labels(signed)) == list(y)
    assert label_map.to_labels(np.array([0.0]))[0] == "spam"  # sign(0) = +1
    assert "'ham' -> -1" in label_map.describe()


def test_label_map_rejects_unknown_labels():
    with pytest.raises(cl.DataError, match="not among the classes"):
        LabelMap(np.array([0, 1])).to_signed([0, 2])


def test_booleans_and_two_float_values_are_two_classes():
    assert as_binary_labels([True, False])[1].classes.tolist() == [False, True]
    signed, _ = as_binary_labels([0.5, 1.7, 0.5])
    assert signed.tolist() == [-1.0, 1.0, -1.0]


def test_targets_must_be_real_and_finite():
    assert as_targets([1, 2.5]).dtype == np.float64
    with pytest.raises(cl.DataError, match="real numbers"):
        as_targets(["a", "b"])
    with pytest.raises(cl.DataError, match="non-finite"):
        as_targets([1.0, np.nan])


@pytest.mark.parametrize("C", [0, -1.0, float("nan"), "1", True])
def test_bad_C_is_named(C):
    with pytest.raises(cl.ParameterError, match="C"):
        check_C(C)


def test_C_none_and_inf_are_hard_margin():
    assert check_C(None) == float("inf") and check_C(float("inf")) == float("inf")


def test_scalar_checks_name_the_parameter():
    with pytest.raises(cl.ParameterError, match="gamma=-1.0"):
        check_positive("gamma", -1.0)
    with pytest.raises(cl.ParameterError, match="lam=-0.5"):
        check_nonnegative("lam", -0.5)
    with pytest.raises(cl.ParameterError, match="unknown loss 'hinje'; valid: 'hinge'"):
        check_choice("loss", "hinje", ["hinge", "logistic"])


@pytest.mark.parametrize("kwargs, error, fragment", [
    (dict(C=0.0), cl.ParameterError, "C must be > 0"),
    (dict(C=-2), cl.ParameterError, "C=-2"),
    (dict(kernel="rbf", gamma=0.0), cl.ParameterError, "gamma"),
    (dict(kernel="rbf", gamma=-1.0), cl.ParameterError, "gamma=-1.0"),
    (dict(kernel="cubic"), cl.ParameterError, "unknown kernel 'cubic'"),
])
def test_svm_rejects_bad_parameters(kwargs, error, fragment):
    with pytest.raises(error, match=fragment):
        cl.SVM(X_OK, Y_OK, **kwargs)


def test_svm_rejects_bad_data_at_the_edge():
    with pytest.raises(cl.DataError, match="one class only"):
        cl.SVM(X_OK, [1, 1, 1, 1])
    with pytest.raises(cl.DataError, match="3 classes"):
        cl.SVM(X_OK, [0, 1, 2, 2])
    with pytest.raises(cl.DataError, match="4 samples but y has 3"):
        cl.SVM(X_OK, [0, 1, 1])
    with pytest.raises(cl.DataError, match="non-finite"):
        cl.SVM(np.where(X_OK == 3.0, np.nan, X_OK), Y_OK)


def test_unknown_method_lists_the_valid_ones():
    with pytest.raises(cl.ParameterError, match="unknown SVM method 'newton'.*'exact-dual'"):
        cl.SVM(X_OK, Y_OK).solve("newton")


def test_sample_weights_are_validated_in_one_place():
    from convexlearn.data import as_sample_weight
    np.testing.assert_array_equal(as_sample_weight(2.0, 3), [2.0, 2.0, 2.0])
    assert as_sample_weight(None, 3) is None
    with pytest.raises(cl.DataError, match=r"sample_weight\[1\] = -1.0"):
        as_sample_weight([1.0, -1.0, 2.0], 3)
    with pytest.raises(cl.DataError, match="zero everywhere"):
        as_sample_weight([0, 0, 0], 3)
    with pytest.raises(cl.DataError, match="non-finite"):
        as_sample_weight([1.0, np.nan, 1.0], 3)
