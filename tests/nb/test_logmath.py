"""log_softmax (`nb.logmath`): rows normalised in log space, without
overflow or underflow."""

from __future__ import annotations

import numpy as np
import pytest

from nbcli.nb.logmath import log_softmax


def test_rows_are_normalised_in_log_space_far_from_zero():
    assert np.exp(log_softmax(np.array([[-1e6, -1e6 - 3.0]])))[0] == pytest.approx(
        [1 / (1 + np.exp(-3)), 1 / (1 + np.exp(3))]
    )
    big = log_softmax(np.array([[1e6, 1e6 + np.log(3.0)]]))
    assert np.exp(big)[0] == pytest.approx([0.25, 0.75])


def test_a_class_of_probability_zero_stays_minus_infinity():
    with np.errstate(invalid="ignore"):
        out = log_softmax(np.array([[0.0, -np.inf], [np.log(2.0), 0.0]]))
    assert out[0, 0] == 0.0 and out[0, 1] == -np.inf
    assert np.exp(out[1]) == pytest.approx([2 / 3, 1 / 3])
