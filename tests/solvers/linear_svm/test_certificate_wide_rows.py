"""The certificate's extended-precision pass over the rows that can change a figure only.

* at C = 1e3 on separable data the float64 error bound asks for the wide pass; it
  recomputes the margins of the rows within their error bound of the hinge and
  X^T (y a) over the support (a few dozen of 1500 rows), and its figures equal those of
  the wide pass over every row (dense and CSR);
* the verdicts stand: the optimum passes, a perturbed w, b or multiplier fails.
"""

import numpy as np
import pytest
from scipy import sparse
from sklearn.datasets import make_classification

import convexlearn as cl
from convexlearn.solvers.linear_svm import linear_certificate
from convexlearn.solvers.linear_svm.linear_certificate import certificate


def _problem():
    X, y = make_classification(1500, 20, flip_y=0.0, class_sep=3.0, random_state=3)
    return X, np.where(y > 0, 1.0, -1.0), 1e3


def _wide_rows(monkeypatch):
    """The rows of each wide-margin call (recorded), the function still called."""
    seen = []
    original = linear_certificate._wide_margins

    def recorded(X, y, w, b):
        seen.append(X.shape[0])
        return original(X, y, w, b)
    monkeypatch.setattr(linear_certificate, "_wide_margins", recorded)
    return seen


@pytest.mark.parametrize("as_sparse", [False, True])
def test_wide_pass_takes_few_rows_and_equals_the_full_one(monkeypatch, as_sparse):
    X, y, C = _problem()
    sol = cl.SVM(X, y, C=C, kernel="linear", intercept=True).solve()
    assert sol.status == "optimal"
    Xc = sparse.csr_matrix(X) if as_sparse else X
    seen = _wide_rows(monkeypatch)
    cert = certificate(Xc, y, C, True, sol.w, sol.b, sol.alpha)
    assert cert["passed"] and seen and 0 < seen[0] < X.shape[0] // 10
    # the same figures from the wide pass over every row
    a = linear_certificate._balanced(np.clip(sol.alpha, 0.0, C), y, np.full(y.size, C))
    m = y * (Xc @ sol.w + sol.b)
    full = linear_certificate._evaluate(Xc, y, np.full(y.size, C), True, sol.w, sol.b, a,
                                        wide=True, near=np.ones(y.size, bool), m=m)
    assert full[0] == pytest.approx(cert["primal"], rel=1e-15)
    assert full[1] == pytest.approx(cert["dual"], rel=1e-15)


def test_wide_pass_verdicts_on_perturbed_answers():
    X, y, C = _problem()
    sol = cl.SVM(X, y, C=C, kernel="linear", intercept=True).solve()
    assert certificate(X, y, C, True, sol.w, sol.b, sol.alpha)["passed"]
    assert not certificate(X, y, C, True, sol.w * (1 + 1e-6), sol.b, sol.alpha)["passed"]
    assert not certificate(X, y, C, True, sol.w, sol.b + 1e-6, sol.alpha)["passed"]
    alpha = sol.alpha.copy()
    alpha[np.argmax(alpha)] *= 0.999
    assert not certificate(X, y, C, True, sol.w, sol.b, alpha)["passed"]


@pytest.mark.parametrize("fmt", ["coo", "dia", "csc"])
def test_wide_pass_takes_every_sparse_format(fmt):
    # rows are selected in the wide pass: formats without row indexing are converted
    X, y, C = _problem()
    sol = cl.SVM(X, y, C=C, kernel="linear", intercept=True).solve()
    dense = certificate(X, y, C, True, sol.w, sol.b, sol.alpha)
    cert = certificate(sparse.csr_matrix(X).asformat(fmt), y, C, True, sol.w, sol.b,
                       sol.alpha)
    assert cert["passed"] and dense["passed"]
    assert cert["primal"] == pytest.approx(dense["primal"], rel=1e-14)
