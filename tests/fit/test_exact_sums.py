"""Complement's transformed sums in fixed point (fit/exact_sums.py): the
same to the bit whatever order the documents and their terms come in."""

from __future__ import annotations

import numpy as np

from nbcli.fit.exact_sums import FIT_SCALE, doc_norms


def test_doc_norms_are_each_documents_euclidean_norm():
    doc_of = np.array([0, 0, 1, 1, 1, 2])
    values = np.array([3.0, 4.0, 1.0, 2.0, 2.0, 5.0])
    assert doc_norms(doc_of, values, 4).tolist() == [5.0, 3.0, 5.0, 0.0]  # document 3 has no terms


def test_doc_norms_do_not_depend_on_the_order_of_a_documents_terms():
    rng = np.random.default_rng(0)
    values = rng.random(500) * 10
    doc_of = np.sort(rng.integers(0, 7, 500))
    order = rng.permutation(500)
    a = doc_norms(doc_of, values, 7)
    b = doc_norms(doc_of[order], values[order], 7)
    assert np.array_equal(a, b)  # bit for bit, not approximately


def test_one_documents_norm_is_the_norm_of_documents_summed_together():
    """doc_norms' shortcut for one document (a TELL's) adds its squares in
    the order the general path does: the same last bit."""
    rng = np.random.default_rng(2)
    for n in (1, 2, 17, 400):
        values = np.log1p(rng.integers(1, 30, n).astype(np.float64))
        together = doc_norms(np.repeat([0, 1], [n, 3]), np.concatenate([values, [1.0, 2.0, 3.0]]), 2)
        assert np.array_equal(doc_norms(np.zeros(n, dtype=np.int64), values, 1), together[:1])


def test_fixed_point_sums_are_the_same_in_any_order():
    rng = np.random.default_rng(1)
    values = rng.random(1000)
    fixed = np.rint(values * FIT_SCALE).astype(np.int64)
    assert int(fixed.sum()) == int(fixed[::-1].sum()) == int(fixed[rng.permutation(1000)].sum())
    assert abs(fixed.sum() / FIT_SCALE - values.sum()) < 1000 / FIT_SCALE
