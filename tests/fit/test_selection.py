"""--select (fit/selection.py): the terms that say the most about the class."""

from __future__ import annotations

import numpy as np
import pytest

from nbcli.errors import ParameterError
from nbcli.fit.selection import select_mask, select_scores

# two classes of 10 documents; term 0 in every document, term 1 only in
# class 0's, term 2 in half of each class, term 3 in 9 of class 0's and 1 of class 1's
DF = np.array([[10, 10, 5, 9], [10, 0, 5, 1]])
CLASS_COUNT = np.array([10.0, 10.0])


@pytest.mark.parametrize("by", ["ig", "chi2"])
def test_a_term_that_tells_the_classes_apart_scores_highest(by):
    scores = select_scores(DF, CLASS_COUNT, by)
    assert scores[0] == pytest.approx(0.0, abs=1e-12) and scores[2] == pytest.approx(0.0, abs=1e-12)
    assert scores[1] > scores[3] > 0
    if by == "ig":
        assert scores[1] == pytest.approx(np.log(2))  # all of H(C), in nats


def test_select_mask_keeps_the_best_k_of_the_candidates():
    keep = np.array([True, False, True, True])
    assert select_mask(keep, DF, CLASS_COUNT, 1, "ig").tolist() == [False, False, False, True]
    assert select_mask(keep, DF, CLASS_COUNT, 5, "ig") is keep  # no more than k: all kept
    best = select_mask(np.ones(4, bool), DF, CLASS_COUNT, 1, "ig")
    assert best.tolist() == [False, True, False, False]


def test_an_unknown_scoring_names_the_parameter():
    with pytest.raises(ParameterError) as caught:
        select_scores(DF, CLASS_COUNT, "gini")
    assert caught.value.parameter == "select_by" and "'gini'" in str(caught.value)
