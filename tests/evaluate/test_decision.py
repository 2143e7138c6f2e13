"""Decision thresholds (evaluate/decision.py): the exact search against a
brute-force search scored by scikit-learn's metrics, deciding by a rule,
and a spam model's cut-offs under one."""

import math

import numpy as np
import pytest
from sklearn.metrics import f1_score

from nbcli.errors import NbcliError
from nbcli.evaluate.decision import (
    choose_threshold,
    decided,
    decided_cutoffs,
    positive_figures,
    probability,
)

from conftest import brute_force_threshold


@pytest.mark.parametrize("objective", ["f1", "balanced"])
@pytest.mark.parametrize("seed", range(8))
def test_the_threshold_is_the_brute_force_searchs(objective, seed):
    rng = np.random.default_rng(seed)
    n = int(rng.integers(20, 300))
    positive = rng.random(n) < rng.uniform(0.03, 0.3)
    positive[:2] = [True, False]
    scores = rng.normal(size=n) + 1.5 * positive
    if seed % 2:  # ties: scores rounded to a coarse grid
        scores = np.round(scores, 1)
    weights = None if seed % 3 else rng.uniform(0.5, 3.0, size=n)
    t, value = choose_threshold(scores, positive, objective, weights)
    want_t, want_value = brute_force_threshold(scores, positive, objective, weights)
    assert t == pytest.approx(want_t, abs=1e-12)
    assert value == pytest.approx(want_value, abs=1e-12)


def test_class_weights_move_the_f1_threshold_and_not_the_balanced_one():
    rng = np.random.default_rng(5)
    positive = rng.random(400) < 0.3
    scores = rng.normal(size=400) + 1.2 * positive
    heavier = np.where(positive, 1.0, 6.0)  # a sample that kept a sixth of the negatives
    assert choose_threshold(scores, positive, "f1", heavier)[0] > choose_threshold(scores, positive, "f1")[0]
    balanced = choose_threshold(scores, positive, "balanced")
    assert choose_threshold(scores, positive, "balanced", heavier)[0] == balanced[0]


def test_one_sided_held_out_documents_are_refused():
    with pytest.raises(NbcliError, match="both classes"):
        choose_threshold(np.array([0.1, 0.2]), np.array([True, True]), "f1")


def test_decided_is_the_argmax_without_a_rule_and_the_threshold_with_one():
    p_pos = np.array([0.9, 0.45, 0.3, 0.1])
    log_proba = np.log(np.stack([1 - p_pos, p_pos], axis=1))
    assert decided(log_proba).tolist() == [1, 0, 0, 0]
    t = math.log(0.25 / 0.75)  # P(positive) >= 0.25
    assert decided(log_proba, (1, t)).tolist() == [1, 1, 1, 0]
    # the positive class in column 0: its log-odds are the other way round
    assert decided(log_proba[:, ::-1], (0, t)).tolist() == [0, 0, 0, 1]


def test_positive_figures_are_scikit_learns():
    truth = np.array([1, 1, 0, 0, 1, 0, 0], dtype=bool)
    called = np.array([1, 0, 1, 0, 1, 0, 0], dtype=bool)
    got = positive_figures(truth, called)
    assert got["f1"] == pytest.approx(f1_score(truth, called))
    assert got["precision"] == pytest.approx(2 / 3) and got["recall"] == pytest.approx(2 / 3)
    assert positive_figures(truth, np.zeros(7, dtype=bool))["precision"] is None


def test_a_spam_threshold_moves_the_spam_cut_off_and_keeps_an_unsure_band_below():
    t = math.log(0.3 / 0.7)
    spam, ham = decided_cutoffs((1, t), 1, 0.98, 0.05)
    assert spam == pytest.approx(0.3) and ham == 0.05
    assert decided_cutoffs((1, math.log(0.01 / 0.99)), 1, 0.98, 0.05)[1] == pytest.approx(0.01)
    assert decided_cutoffs(None, 1, 0.98, 0.05) == (0.98, 0.05)
    assert decided_cutoffs((0, t), 1, 0.98, 0.05) == (0.98, 0.05)  # the positive class is not spam
    assert probability(-1e6) == 0.0
